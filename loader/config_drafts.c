/*
 * config_drafts.c — the config keys of the speculative-decoding drafts that are not decoder
 * stacks, read as vLLM reads them (its MedusaConfig / MLPSpeculatorConfig, medusa.py /
 * mlp_speculator.py), and config_parse_drafts, which reads every draft's keys (EAGLE's in
 * config_eagle.c).
 *
 * Medusa (model_type medusa, MedusaModel):
 *   key                    vLLM's reading                           here
 *   *num*heads* / *num*layers*  from_pretrained renames every key    num_heads / num_hidden_layers
 *                          naming num and heads (layers) to         (two such keys that differ:
 *                          num_heads (num_hidden_layers)            refused)
 *   num_heads              the heads (ResidualBlock + lm_head each) {j} of blocks / lm_heads
 *   num_hidden_layers      nn.Linear layers of each block           {i} of blocks.{j}.layers.{i}
 *   truncated_vocab_size   None -> vocab_size; the heads' rows      lm_heads' rows (above
 *                                                                   vocab_size refused)
 *   original_lm_head       one lm_head shared by every head         lm_head.weight
 *   medusa_fc_bias         the blocks' Linears' biases              their biases
 *   num_attention_heads    0 (a property: no attention)             1 (class default)
 *   tie_word_embeddings    never read (no embedding)                read as false
 *
 * MLPSpeculator (model_type mlp_speculator, MLPSpeculatorPreTrainedModel):
 *   emb_dim (hidden_size its attribute_map alias)  proj.0's columns   hidden_size
 *   inner_dim (0 -> emb_dim)                        every stage's width intermediate_size
 *   n_predict (num_lookahead_tokens)                the stages         num_hidden_layers
 *   tie_weights                                     one emb / proj[1:] / head / ln shared
 *   top_k_tokens_per_head (None -> [5, 4, 3])       asserted n_predict long  checked so
 *   scale_input                                     ln0 (no parameters) read, builds nothing
 *   n_candidates                                    the proposer only  not read
 */
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int set_key(json_t *v, const char *key, json_t *x, wt_errbuf *err)
{
	if (x == NULL || json_object_set_new(v, key, x) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* MedusaConfig.from_pretrained's renaming into target to[t] of every key naming "num" and
 * word[t]: all such keys must agree (the last one would win there, silently). */
static int medusa_rename(json_t *v, int t, wt_errbuf *err)
{
	static const char *const word[2] = {"heads", "layers"};
	static const char *const to[2] = {"num_heads", "num_hidden_layers"};
	char keys[8][64];
	size_t n = 0;
	const char *k;
	json_t *x, *first = NULL;
	json_object_foreach(v, k, x)
	{
		if (strstr(k, "num") == NULL || strstr(k, word[t]) == NULL ||
		    (t == 1 && strstr(k, "heads") != NULL))
			continue;
		if (first != NULL && !json_equal(first, x))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: '%s' and '%s' both give a Medusa draft's %s "
			    "(vLLM's MedusaConfig renames every key naming num and %s to "
			    "it) with different values; keep one",
			    keys[0], k, to[t], word[t]);
		if (n == sizeof(keys) / sizeof(keys[0]) || strlen(k) >= sizeof(keys[0]))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: too many or too long keys naming num and %s",
			                 word[t]);
		snprintf(keys[n++], sizeof(keys[0]), "%s", k);
		first = first != NULL ? first : x;
	}
	if (first == NULL)
		return WT_OK;
	json_incref(first);
	for (size_t i = 0; i < n; i++)
		json_object_del(v, keys[i]);
	return set_key(v, to[t], first, err);
}

int config_medusa_keys(json_t *v, wt_errbuf *err)
{
	int rv = medusa_rename(v, 0, err);
	return rv == WT_OK ? medusa_rename(v, 1, err) : rv;
}

/* MLPSpeculatorConfig's attribute_map: hidden_size sets emb_dim (before the class defaults) */
int config_mlp_speculator_alias(json_t *v, wt_errbuf *err)
{
	json_t *h = json_object_get(v, "hidden_size"), *e = json_object_get(v, "emb_dim");
	if (h == NULL || json_is_null(h))
		return WT_OK;
	if (e != NULL && !json_is_null(e) && !json_equal(h, e))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: hidden_size and emb_dim differ; MLPSpeculatorConfig "
		                 "reads hidden_size as emb_dim (the target's width): keep emb_dim");
	return set_key(v, "emb_dim", json_incref(h), err);
}

/* After the class defaults: the loader's names for the speculator's sizes (hidden_size the
 * target's emb_dim, intermediate_size the stages' inner_dim, num_hidden_layers the n_predict
 * stages, one placeholder attention head: it has no attention). */
int config_mlp_speculator_keys(json_t *v, wt_errbuf *err)
{
	int64_t emb = 0, inner = 0, n = 0;
	int rv = config_get_int(v, "emb_dim", 4096, 1, &emb, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "inner_dim", 0, 0, &inner, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "n_predict", 3, 1, &n, err);
	if (rv == WT_OK)
		rv = set_key(v, "hidden_size", json_integer((json_int_t)emb), err);
	if (rv == WT_OK)
		rv = set_key(v, "intermediate_size", json_integer(inner != 0 ? inner : emb), err);
	if (rv == WT_OK)
		rv = set_key(v, "num_hidden_layers", json_integer((json_int_t)n), err);
	if (rv == WT_OK)
		rv = set_key(v, "num_attention_heads", json_integer(1), err);
	return rv;
}

/* MedusaModel (medusa.py): the heads, the truncated vocabulary, the two switches */
static int medusa_keys(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	int rv = config_get_int(v, "num_heads", 5, 1, &c->medusa_heads, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "truncated_vocab_size", c->vocab_size, 1,
		                    &c->draft_vocab_size, err);
	if (rv == WT_OK && c->draft_vocab_size > c->vocab_size)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: truncated_vocab_size %lld is above vocab_size %lld "
		    "(vLLM's medusa.py asserts it equal or a token_map below it): give "
		    "at most vocab_size",
		    (long long)c->draft_vocab_size, (long long)c->vocab_size);
	if (rv == WT_OK)
		rv = config_get_bool(v, "original_lm_head", false, &c->medusa_orig_lm_head, err);
	if (rv == WT_OK)
		rv = config_get_bool(v, "medusa_fc_bias", false, &c->medusa_fc_bias, err);
	c->tie_word_embeddings = false; /* no embedding to tie to */
	return rv;
}

/* MLPSpeculatorPreTrainedModel (mlp_speculator.py): tie_weights, the asserts of its config */
static int mlps_keys(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	bool scale = false;
	int rv = config_get_bool(v, "tie_weights", false, &c->mlps_tied, err);
	if (rv == WT_OK)
		rv = config_get_bool(v, "scale_input", false, &scale, err);
	if (rv == WT_OK && c->mlps_tied && c->num_hidden_layers < 2)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: tie_weights true with n_predict 1 (vLLM's "
		                 "mlp_speculator.py asserts n_predict > 1 to tie stages): set "
		                 "tie_weights false");
	json_t *k = json_object_get(v, "top_k_tokens_per_head");
	size_t nk = k == NULL || json_is_null(k) ? 3 : json_is_array(k) ? json_array_size(k) : 0;
	if (rv == WT_OK && (int64_t)nk != c->num_hidden_layers)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: top_k_tokens_per_head has %zu entries (3 when absent) "
		    "but n_predict is %lld (MLPSpeculatorConfig asserts one per "
		    "stage): give n_predict entries",
		    nk, (long long)c->num_hidden_layers);
	c->tie_word_embeddings = false; /* its own emb / head tables, never the target's */
	return rv;
}

int config_parse_drafts(json_t *root, json_t *lm, ckpt_config *c, wt_errbuf *err)
{
	c->medusa_heads = 0;
	c->medusa_orig_lm_head = c->medusa_fc_bias = c->mlps_tied = false;
	int rv = config_parse_eagle(root, c, err);
	const char *mt = c->model_type != NULL ? c->model_type : "";
	const char *arch = c->architecture != NULL ? c->architecture : "";
	bool medusa = strcmp(mt, "medusa") == 0, mlps = strcmp(mt, "mlp_speculator") == 0;
	if (rv == WT_OK && ((strcmp(arch, "MedusaModel") == 0 && !medusa) ||
	                    (strcmp(arch, "MLPSpeculatorPreTrainedModel") == 0 && !mlps)))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: architectures %s with model_type '%s': vLLM reads "
		                 "this draft's config as model_type %s; give that",
		                 arch, mt,
		                 strcmp(arch, "MedusaModel") == 0 ? "medusa" : "mlp_speculator");
	if (rv == WT_OK && medusa)
		rv = medusa_keys(lm, c, err);
	if (rv == WT_OK && mlps)
		rv = mlps_keys(lm, c, err);
	return rv;
}
