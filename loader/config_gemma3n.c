/*
 * config_gemma3n.c — Gemma 3n's text config (model_type gemma3n_text: Gemma3nTextConfig,
 * transformers 4.57.1; Gemma3nForCausalLM, the language model of google/gemma-3n-E2B /
 * E4B) as vLLM's gemma3n.py reads it.
 *
 * Laid over the language-model view after the class defaults (config_defaults_classic.c):
 * intermediate_size given as a per-layer list (the released configs write one entry per
 * layer) is read as its one value when every entry is equal; layer_types absent or null
 * becomes the class's list (every fifth layer full_attention, the others
 * sliding_attention); activation_sparsity_pattern is checked (one number in [0, 1) per layer;
 * absent: the class builds it). Refused naming the key: hidden_activation other than
 * gelu_pytorch_tanh (vLLM's Gemma3nMLP raises), altup_correct_scale false (vLLM asserts it),
 * tie_word_embeddings false (vLLM's Gemma3nForCausalLM computes the logits with
 * embed_tokens whatever the key says), a per-layer intermediate_size with different entries
 * (MatFormer slices of mixed widths: one MLP size per model here). The AltUp, Laurel and
 * per-layer input sizes go into ckpt_config (config_parse_gemma3n).
 */
#include <inttypes.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* intermediate_size as a list: one integer per layer, all equal, read as that value. */
static int g3n_inter(json_t *v, wt_errbuf *err)
{
	json_t *a = json_object_get(v, "intermediate_size");
	if (!json_is_array(a))
		return WT_OK;
	json_t *nl = json_object_get(v, "num_hidden_layers");
	size_t n = json_array_size(a);
	if (!json_is_integer(nl) || json_integer_value(nl) != (json_int_t)n || n == 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Gemma 3n's intermediate_size has %zu entries; the "
		                 "per-layer list needs one per layer (num_hidden_layers)",
		                 n);
	json_t *first = json_array_get(a, 0);
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(a, i);
		if (!json_is_integer(x))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: intermediate_size[%zu] is not an integer",
			                 i);
		if (json_integer_value(x) != json_integer_value(first))
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: Gemma 3n's intermediate_size[%zu] is %" PRId64
			    " where intermediate_size[0] is %" PRId64
			    ": MLPs of different widths per layer (MatFormer slices) are not "
			    "supported; give one size for every layer",
			    i, (int64_t)json_integer_value(x), (int64_t)json_integer_value(first));
	}
	if (json_object_set_new(v, "intermediate_size", json_integer(json_integer_value(first))))
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* layer_types absent or null: Gemma3nTextConfig's list (full_attention at (i + 1) % 5 == 0). */
static int g3n_layer_types(json_t *v, wt_errbuf *err)
{
	json_t *lt = json_object_get(v, "layer_types");
	if (lt != NULL && !json_is_null(lt))
		return WT_OK;
	json_t *nl = json_object_get(v, "num_hidden_layers");
	if (!json_is_integer(nl) || json_integer_value(nl) < 1 ||
	    json_integer_value(nl) > CONFIG_INT_MAX)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: num_hidden_layers must be an integer >= 1");
	json_int_t n = json_integer_value(nl);
	if (n > 4096)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Gemma 3n's num_hidden_layers %lld is past 4096 "
		                 "(no Gemma 3n has more than 35)",
		                 (long long)n);
	json_t *a = json_array();
	for (json_int_t i = 0; a != NULL && i < n; i++)
		if (json_array_append_new(a, json_string((i + 1) % 5 == 0 ? "full_attention"
		                                                          : "sliding_attention"))) {
			json_decref(a);
			a = NULL;
		}
	if (a == NULL || json_object_set_new(v, "layer_types", a) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* activation_sparsity_pattern, when given: one number in [0, 1) per layer. */
static int g3n_sparsity(json_t *v, wt_errbuf *err)
{
	json_t *a = json_object_get(v, "activation_sparsity_pattern");
	if (a == NULL || json_is_null(a))
		return WT_OK;
	json_t *nl = json_object_get(v, "num_hidden_layers");
	if (!json_is_array(a) || !json_is_integer(nl) ||
	    json_integer_value(nl) != (json_int_t)json_array_size(a))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Gemma 3n's activation_sparsity_pattern must be a "
		                 "list of one number per layer (num_hidden_layers; transformers "
		                 "refuses any other)");
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *x = json_array_get(a, i);
		double s = json_number_value(x);
		if (!json_is_number(x) || !(s >= 0.0 && s < 1.0))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: activation_sparsity_pattern[%zu] is not a "
			                 "number in [0, 1) (the share of the gate's values cut)",
			                 i);
	}
	return WT_OK;
}

/* What vLLM's gemma3n.py cannot build as transformers does: refused naming the key. */
static int g3n_refusals(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_activation");
	const char *a = json_string_value(act);
	if (act != NULL && !json_is_null(act) && (a == NULL || strcmp(a, "gelu_pytorch_tanh") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Gemma 3n's hidden_activation must be "
		                 "\"gelu_pytorch_tanh\" (vLLM's Gemma3nMLP refuses any other); fix "
		                 "the key");
	if (json_is_false(json_object_get(v, "altup_correct_scale")))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Gemma 3n's altup_correct_scale false, but vLLM's "
		                 "Gemma3nDecoderLayer asserts it (it always scales the corrected "
		                 "output by correct_output_scale); drop the key");
	if (json_is_false(json_object_get(v, "tie_word_embeddings")))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Gemma 3n's tie_word_embeddings false, but vLLM's "
		                 "Gemma3nForCausalLM computes the logits with embed_tokens "
		                 "whatever the key says (it has no lm_head); drop the key");
	return WT_OK;
}

int config_gemma3n_keys(json_t *v, wt_errbuf *err)
{
	int rv = g3n_refusals(v, err);
	if (rv == WT_OK)
		rv = g3n_inter(v, err);
	if (rv == WT_OK)
		rv = g3n_layer_types(v, err);
	if (rv == WT_OK)
		rv = g3n_sparsity(v, err);
	return rv;
}

int config_parse_gemma3n(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key keys[] = {
	    {"altup_num_inputs", 4, offsetof(ckpt_config, g3n_altup)},
	    {"laurel_rank", 64, offsetof(ckpt_config, g3n_laurel)},
	    {"hidden_size_per_layer_input", 256, offsetof(ckpt_config, g3n_ple)},
	    {"vocab_size_per_layer_input", 262144, offsetof(ckpt_config, g3n_ple_vocab)},
	};
	int rv = config_read_ints(root, "config.json", keys, CONFIG_NKEYS(keys), c, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "altup_active_idx", 0, 0, &c->g3n_active, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "num_kv_shared_layers", 15, 0, &c->g3n_kv_shared, err);
	if (rv == WT_OK && c->g3n_active >= c->g3n_altup)
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: Gemma 3n's altup_active_idx %" PRId64
		               " is not below altup_num_inputs %" PRId64 " (the active stream)",
		               c->g3n_active, c->g3n_altup);
	if (rv == WT_OK && c->g3n_kv_shared >= c->num_hidden_layers)
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: Gemma 3n's num_kv_shared_layers %" PRId64
		               " is not below num_hidden_layers %" PRId64
		               " (the shared layers read an earlier layer's keys and values)",
		               c->g3n_kv_shared, c->num_hidden_layers);
	return rv;
}
