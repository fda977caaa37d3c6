/*
 * config_zamba2.c — Zamba2's config keys (model_type zamba2: Zamba2Config, transformers
 * 4.57.1; Zyphra/Zamba2-1.2B / -2.7B / -7B) under the names the planner reads: the Mamba2
 * mixer's (n_mamba_heads -> mamba_n_heads, mamba_ngroups -> mamba_n_groups, use_conv_bias ->
 * mamba_conv_bias, add_bias_linear -> mamba_proj_bias, chunk_size -> mamba_chunk_size;
 * mamba_d_state / mamba_d_conv / mamba_expand keep their names), layers_block_type ->
 * layer_types ("mamba" / "hybrid"), and Zamba2Config's derived keys: intermediate_size 4 x
 * hidden_size when absent or null, head_dim attention_head_dim = 2 x hidden_size /
 * num_attention_heads (the shared block's attention reads the concatenated 2 x hidden_size
 * input), num_key_value_heads num_attention_heads. Refused, naming the key, what vLLM's
 * zamba2.py cannot build as transformers does (the messages say why), tie_word_embeddings
 * false among them (vLLM ties the LM head to the embeddings whatever the key says).
 */
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* Zamba2Config's layers_block_type when absent: 54 layers, hybrid every sixth from layer 6
 * to 42, then at 47 and 51. */
static const char *z2_default_type(size_t i)
{
	static const int hybrid[] = {6, 12, 18, 24, 30, 36, 42, 47, 51};
	for (size_t k = 0; k < sizeof(hybrid) / sizeof(hybrid[0]); k++)
		if ((size_t)hybrid[k] == i)
			return "hybrid";
	return "mamba";
}
#define Z2_DEFAULT_LAYERS 54

/* layers_block_type (Zamba2Config's default list when absent or null) as layer_types: each
 * "mamba" or "hybrid", one per layer. */
static int z2_block_types(json_t *v, wt_errbuf *err)
{
	json_t *bt = json_object_get(v, "layers_block_type");
	json_t *lt = json_array();
	if (lt == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	bool dflt = bt == NULL || json_is_null(bt);
	if (!dflt && !json_is_array(bt)) {
		json_decref(lt);
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Zamba2's layers_block_type is not a list of "
		                 "\"mamba\" / \"hybrid\"");
	}
	size_t n = dflt ? Z2_DEFAULT_LAYERS : json_array_size(bt);
	for (size_t i = 0; i < n; i++) {
		const char *s =
		    dflt ? z2_default_type(i) : json_string_value(json_array_get(bt, i));
		if (s == NULL || (strcmp(s, "mamba") != 0 && strcmp(s, "hybrid") != 0)) {
			json_decref(lt);
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: Zamba2's layers_block_type[%zu] is neither "
			    "\"mamba\" nor \"hybrid\" (a Mamba2 layer, or one with the "
			    "shared transformer block before it)",
			    i);
		}
		if (json_array_append_new(lt, json_string(s)) != 0) {
			json_decref(lt);
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
		}
	}
	json_t *nl = json_object_get(v, "num_hidden_layers");
	if (json_is_integer(nl) && (size_t)json_integer_value(nl) != n) {
		json_decref(lt);
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Zamba2's layers_block_type has %zu entries but "
		                 "num_hidden_layers is %lld (transformers and vLLM read one type "
		                 "per layer); give one per layer",
		                 n, (long long)json_integer_value(nl));
	}
	if (json_object_set_new(v, "layer_types", lt) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* The switches and sizes transformers and vLLM would build apart: refused naming the key. */
static int z2_refusals(json_t *v, wt_errbuf *err)
{
	const char *act = json_string_value(json_object_get(v, "hidden_act"));
	if (json_object_get(v, "hidden_act") != NULL && (act == NULL || strcmp(act, "gelu") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Zamba2's hidden_act must be \"gelu\" (vLLM's "
		                 "Zamba2MLP refuses any other); fix the key");
	if (json_is_false(json_object_get(v, "use_conv_bias")))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Zamba2's use_conv_bias false, but transformers' "
		                 "Zamba2MambaMixer builds conv1d with a bias all the same (vLLM "
		                 "would not); drop the key");
	if (json_is_false(json_object_get(v, "use_shared_mlp_adapter")))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Zamba2's use_shared_mlp_adapter false, but "
		                 "transformers and vLLM build the MLP adapters "
		                 "(gate_up_proj_adapter_list) all the same; drop the key");
	if (json_is_false(json_object_get(v, "tie_word_embeddings")))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Zamba2's tie_word_embeddings false, but vLLM's "
		                 "zamba2.py ties lm_head to embed_tokens whatever the key says "
		                 "(transformers would read lm_head.weight); drop the key");
	json_t *ex = json_object_get(v, "mamba_expand");
	if (!json_is_integer(ex) || json_integer_value(ex) < 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Zamba2's mamba_expand must be an integer >= 1 "
		                 "(vLLM's mixer is mamba_expand * hidden_size wide, transformers' "
		                 "int(mamba_expand * hidden_size)); give a whole mamba_expand");
	json_t *h = json_object_get(v, "num_attention_heads");
	json_t *kv = json_object_get(v, "num_key_value_heads");
	if (kv != NULL && !json_is_null(kv) && !json_equal(kv, h))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: Zamba2's num_key_value_heads differs from "
		    "num_attention_heads, but vLLM's Zamba2Attention builds one kv "
		    "head per head (QKVParallelLinear without kv heads); drop the key");
	return WT_OK;
}

/* intermediate_size (4 x hidden_size when absent or null), head_dim (2 x hidden_size /
 * num_attention_heads, exactly) and num_key_value_heads (the heads), set in v. */
static int z2_derived(json_t *v, wt_errbuf *err)
{
	json_t *hid = json_object_get(v, "hidden_size"),
	       *h = json_object_get(v, "num_attention_heads");
	if (!json_is_integer(hid) || !json_is_integer(h) || json_integer_value(hid) < 1 ||
	    json_integer_value(h) < 1 || json_integer_value(hid) > CONFIG_INT_MAX)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: Zamba2's hidden_size and num_attention_heads must be "
		    "integers >= 1 (at most 2^40)");
	json_int_t hv = json_integer_value(hid), nh = json_integer_value(h);
	if ((2 * hv) % nh)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Zamba2's num_attention_heads %lld does not divide "
		                 "2 x hidden_size %lld (the shared attention's width; vLLM refuses "
		                 "it, transformers' head_dim would not tile it)",
		                 (long long)nh, (long long)(2 * hv));
	json_t *im = json_object_get(v, "intermediate_size");
	if ((im == NULL || json_is_null(im)) &&
	    json_object_set_new(v, "intermediate_size", json_integer(4 * hv)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	if (json_object_set_new(v, "head_dim", json_integer(2 * hv / nh)) != 0 ||
	    json_object_set(v, "num_key_value_heads", h) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_zamba2_keys(json_t *v, wt_errbuf *err)
{
	static const char *const keys[][2] = {{"n_mamba_heads", "mamba_n_heads"},
	                                      {"mamba_ngroups", "mamba_n_groups"},
	                                      {"use_conv_bias", "mamba_conv_bias"},
	                                      {"add_bias_linear", "mamba_proj_bias"},
	                                      {"chunk_size", "mamba_chunk_size"}};
	int rv = z2_refusals(v, err);
	if (rv == WT_OK)
		rv = z2_derived(v, err);
	if (rv == WT_OK)
		rv = z2_block_types(v, err);
	if (rv == WT_OK)
		rv = config_alias_keys(v, keys, sizeof(keys) / sizeof(keys[0]), false, err);
	if (rv == WT_OK)
		json_object_del(v, "mamba_d_head"); /* the mixer's heads are Im / mamba_n_heads */
	return rv;
}

int config_parse_zamba2(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int rv = config_get_int(root, "num_mem_blocks", 1, 1, &c->z2_mem_blocks, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "adapter_rank", 128, 1, &c->z2_adapter_rank, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "use_shared_attention_adapter", false,
		                     &c->z2_attn_adapter, err);
	return rv;
}
