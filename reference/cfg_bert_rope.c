/*
 * cfg_bert_rope.c — the keys of vLLM's bert_with_rope.py encoders the reference reads
 * (bert_rope.c), as vLLM's NomicBertModelConfig (vllm/model_executor/models/config.py) rewrites
 * NomicBertConfig: layer_norm_eps = layer_norm_epsilon (GPT2Config's default 1e-5), RoPE base
 * rope_theta when given, else rotary_emb_base, rotary_dim = head_dim * rotary_emb_fraction,
 * max_position = max_trained_positions (2048 when absent); every Linear's bias from qkv_proj_bias
 * (true when absent: the loader's class default); type_vocab_size 2 when absent (likewise).
 * NomicBertConfig's own defaults (the remote configuration_hf_nomic_bert.py, read from a stored
 * copy): rotary_emb_base 1000, rotary_emb_fraction 0.0 (no dim turned: RoPE off),
 * max_trained_positions 2048, qkv_proj_bias true, type_vocab_size 2. A rope_scaling object is
 * refused: the reference turns plain RoPE only (vLLM's default serving ignores
 * rotary_scaling_factor and builds no scaling without rope_scaling).
 * GTE v1.5 (model_type new), as vLLM's GteNewModelConfig reads NewConfig: layer_norm_eps,
 * rope_theta, rotary_dim = rotary_emb_dim else head_dim, max_position_embeddings,
 * type_vocab_size (0: no table); absent, NewConfig's defaults (the remote
 * configuration.py of Alibaba-NLP/new-impl, read from a stored copy): 1e-12, 10000, 2048, 1.
 * Every Linear but gate_up_proj is biased (GteNewModel's bias switch, true).
 */
#include <jansson.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

/* A number key (absent or null: dflt). */
static int br_real(json_t *root, const char *key, double dflt, double *out, wt_errbuf *err)
{
	json_t *v = json_object_get(root, key);
	if (v != NULL && !json_is_null(v) && !json_is_number(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not a number", key);
	*out = v == NULL || json_is_null(v) ? dflt : json_number_value(v);
	return WT_OK;
}

/* A whole-number key from 0 to 1e9 (absent or null: dflt), as an integer: a larger or
 * fractional value is refused before any cast (a double past int64's range is undefined). */
static int br_count(json_t *root, const char *key, double dflt, int64_t *out, wt_errbuf *err)
{
	double v = 0;
	int rv = br_real(root, key, dflt, &v, err);
	if (rv != WT_OK)
		return rv;
	if (!(v >= 0.0 && v <= 1e9) || v != (double)(int64_t)v)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: '%s' is %g; it must be a whole number from 0 to 1e9",
		                 key, v);
	*out = (int64_t)v;
	return WT_OK;
}

static int nomic_keys(ref_cfg *c, json_t *root, wt_errbuf *err)
{
	double eps = 0, base = 0, frac = 0, theta = 0;
	int rv = br_real(root, "layer_norm_epsilon", 1e-5, &eps, err);
	if (rv == WT_OK)
		rv = br_real(root, "rotary_emb_base", 1000, &base, err);
	if (rv == WT_OK)
		rv = br_real(root, "rope_theta", base, &theta, err);
	if (rv == WT_OK)
		rv = br_real(root, "rotary_emb_fraction", 0.0, &frac, err);
	if (rv == WT_OK)
		rv = br_count(root, "type_vocab_size", 2, &c->n_types, err);
	if (rv == WT_OK)
		rv = br_count(root, "max_trained_positions", 2048, &c->max_pos, err);
	if (rv != WT_OK)
		return rv;
	json_t *qb = json_object_get(root, "qkv_proj_bias");
	c->br_bias = qb == NULL || json_is_null(qb) || json_is_true(qb);
	c->eps = eps;
	c->theta = theta;
	bool frac_ok = frac >= 0.0 && frac <= 1.0; /* checked before the cast below */
	c->rot_dim = frac_ok ? (int64_t)((double)c->d * frac) : -1;
	if (!frac_ok || c->rot_dim % 2 != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rotary_emb_fraction %g of head_dim %lld turns %lld "
		                 "dims; the reference needs an even count from 0 to head_dim",
		                 frac, (long long)c->d, (long long)c->rot_dim);
	return WT_OK;
}

static int gte_keys(ref_cfg *c, json_t *root, wt_errbuf *err)
{
	double eps = 0, theta = 0;
	int rv = br_real(root, "layer_norm_eps", 1e-12, &eps, err);
	if (rv == WT_OK)
		rv = br_real(root, "rope_theta", 10000, &theta, err);
	if (rv == WT_OK)
		rv = br_count(root, "type_vocab_size", 1, &c->n_types, err);
	if (rv == WT_OK)
		rv = br_count(root, "max_position_embeddings", 2048, &c->max_pos, err);
	if (rv == WT_OK)
		rv = br_count(root, "rotary_emb_dim", (double)c->d, &c->rot_dim, err);
	if (rv != WT_OK)
		return rv;
	c->br_bias = true;
	c->eps = eps;
	c->theta = theta;
	if (c->rot_dim > c->d || c->rot_dim % 2 != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rotary_emb_dim %lld of head_dim %lld; the reference "
		                 "needs an even count from 0 to head_dim",
		                 (long long)c->rot_dim, (long long)c->d);
	return WT_OK;
}

int ref_cfg_bert_rope(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	int rv = c->brope == 2 ? gte_keys(c, root, err) : nomic_keys(c, root, err);
	json_t *rs = json_object_get(root, "rope_scaling");
	if (rv == WT_OK && json_is_object(rs))
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: rope_scaling is set; the reference turns plain RoPE "
		               "only (remove it to check the unscaled model)");
	if (rv == WT_OK && c->br_cls && (c->n_labels < 1 || c->n_labels > c->hid))
		rv = wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %lld labels; the reference writes a classifier's logits "
		    "into one row of hidden_size %lld",
		    (long long)c->n_labels, (long long)c->hid);
	if (rv == WT_OK && !(c->theta > 1.0))
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: rope base %g (rope_theta or rotary_emb_base); the "
		               "reference needs a value above 1",
		               c->theta);
	if (rv == WT_OK && (c->n_types < 0 || c->max_pos < 1 || c->KV != c->H ||
	                    c->hid % c->H != 0 || c->d != c->hid / c->H))
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: %lld token types, %lld positions, %lld kv heads for "
		               "%lld heads of %lld; the reference needs one head of hidden / heads "
		               "per kv head",
		               (long long)c->n_types, (long long)c->max_pos, (long long)c->KV,
		               (long long)c->H, (long long)c->d);
	json_decref(root);
	return rv;
}
