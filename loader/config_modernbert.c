/*
 * config_modernbert.c — ModernBERT's config keys (model_type modernbert: ModernBertModel,
 * ModernBertForSequenceClassification), read as transformers 4.57.1's ModernBertConfig reads
 * them (its dims and switches default in config_defaults_classic.c, laid in before this runs).
 *
 * global_attn_every_n_layers (3) and local_attention (128) choose the attention of each
 * layer (global when i % every == 0, else a window of local_attention / 2 each side);
 * global_rope_theta (160000) and local_rope_theta (10000 when absent; null: the global
 * theta, as ModernBertAttention and vLLM read None) their RoPE bases; norm_eps (1e-5);
 * norm_bias and classifier_bias (false) switch the LayerNorms' and head.dense's biases;
 * hidden_activation and classifier_activation ("gelu": vLLM's ModernBertMLP and pooler run
 * nn.GELU() whatever they say); classifier_pooling ("cls" or "mean"); the classifier's outputs
 * as PretrainedConfig counts them. Values the planner refuses (shardmap/family_modernbert.c)
 * are recorded, not refused here; a key of the wrong JSON type is WT_ECORRUPT naming it.
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* String key: absent or null -> dflt; *is_dflt says whether the value equals dflt. */
static int get_str_is(json_t *root, const char *key, const char *dflt, bool *is_dflt,
                      wt_errbuf *err)
{
	json_t *v = json_object_get(root, key);
	if (v != NULL && !json_is_null(v) && !json_is_string(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not a string", key);
	*is_dflt = v == NULL || json_is_null(v) || strcmp(json_string_value(v), dflt) == 0;
	return WT_OK;
}

static int get_pool(json_t *root, int64_t *pool, wt_errbuf *err)
{
	bool cls = false, mean = false;
	int rv = get_str_is(root, "classifier_pooling", "cls", &cls, err);
	if (rv == WT_OK)
		rv = get_str_is(root, "classifier_pooling", "mean", &mean, err);
	if (rv != WT_OK)
		return rv;
	json_t *v = json_object_get(root, "classifier_pooling");
	mean = mean && v != NULL && !json_is_null(v);
	*pool = cls ? 0 : mean ? 1 : -1;
	return WT_OK;
}

int config_parse_modernbert(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int rv = config_get_int(root, "global_attn_every_n_layers", 3, 0, &c->mb_every, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "local_attention", 128, 0, &c->mb_local, err);
	if (rv == WT_OK)
		rv = config_get_pos_real(root, "global_rope_theta", 160000.0, &c->mb_global_theta,
		                         err);
	json_t *lt = json_object_get(root, "local_rope_theta");
	if (rv == WT_OK)
		rv = config_get_pos_real(root, "local_rope_theta",
		                         lt != NULL && json_is_null(lt) ? c->mb_global_theta
		                                                        : 10000.0,
		                         &c->mb_local_theta, err);
	if (rv == WT_OK)
		rv = config_get_pos_real(root, "norm_eps", 1e-5, &c->mb_norm_eps, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "norm_bias", false, &c->mb_norm_bias, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "classifier_bias", false, &c->mb_cls_bias, err);
	if (rv == WT_OK)
		rv = get_str_is(root, "hidden_activation", "gelu", &c->mb_gelu, err);
	if (rv == WT_OK)
		rv = get_str_is(root, "classifier_activation", "gelu", &c->mb_cls_gelu, err);
	if (rv == WT_OK)
		rv = get_pool(root, &c->mb_pool, err);
	if (rv == WT_OK)
		rv = config_num_labels(root, &c->rob_num_labels, err);
	return rv;
}
