/*
 * config_falcon.c — Falcon's config keys (model_type falcon, FalconForCausalLM), read as
 * transformers 4.57.1's FalconConfig reads them and as vLLM's falcon.py builds the model.
 *
 * FalconConfig takes the old n_embed over hidden_size. Its switches decide the layout:
 *
 *   key                        default  what it sets here
 *   new_decoder_architecture   false    kv heads num_kv_heads (default the heads), the
 *                                       q/k/v grouped [KV, H/KV + 2, d] (falcon-40b / 180B)
 *   multi_query                true     without the above: one kv head (falcon-7b), else
 *                                       as many as heads ([H, 3, d]; falcon-rw-1b)
 *   parallel_attn              true     attention and MLP side by side: ln_attn / ln_mlp
 *                                       (new architecture, num_ln_in_parallel_attn 2, its
 *                                       default there) or one input_layernorm; false:
 *                                       input_layernorm and post_attention_layernorm
 *   bias                       false    every Linear's bias (q/k/v, dense, both MLP ones)
 *   ffn_hidden_size            4 * hid  must be 4 * hid: vLLM's FalconMLP is that wide
 *   activation                 gelu     must be gelu: vLLM's FalconMLP runs gelu
 *
 * The original releases' remote code (model_type RefinedWebModel: falcon-7b, falcon-rw-1b /
 * 7b; RefinedWeb: falcon-40b; architecture RWForCausalLM) is read as vLLM reads it, through
 * its stored RWConfig (transformers_utils/configs/falcon.py): n_layer, n_head, n_head_kv and
 * n_embed are the names above (config_rw_keys; a config.json carrying both spellings: the
 * attribute_map's num_hidden_layers / num_attention_heads / num_kv_heads win, n_embed wins
 * over hidden_size), and the defaults differ: parallel_attn false, n_head_kv 1,
 * new_decoder_architecture false but forced true at hidden_size 8192 (RWConfig's falcon-40b
 * hack, whatever the key says). RefinedWeb without that key at another width is refused:
 * the 40b remote code always builds the new architecture, vLLM would build falcon-7b's and
 * fail on the names (give new_decoder_architecture true). apply_residual_connection_post_
 * layernorm true (read by the 7b remote code, ignored by vLLM) is refused likewise.
 *
 * Refused (WT_EUNSUPPORTED, naming the keys): new_decoder_architecture with parallel_attn
 * false, num_ln_in_parallel_attn 2 without the new architecture (transformers and vLLM build
 * ln_attn / ln_mlp there but read input_layernorm), a num_kv_heads other than the heads
 * without the new architecture and multi_query (vLLM's falcon.py takes the heads), an
 * ffn_hidden_size other than 4 * hid, an activation other than gelu.
 */
#include <inttypes.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

int config_falcon_keys(json_t *v, wt_errbuf *err)
{
	json_t *x = json_object_get(v, "n_embed");
	if (x != NULL && !json_is_null(x) && json_object_set(v, "hidden_size", x) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

static int refuse(wt_errbuf *err, const char *what)
{
	return wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s", what);
}

bool config_is_rw(const char *mt)
{
	return mt != NULL && (strcmp(mt, "RefinedWeb") == 0 || strcmp(mt, "RefinedWebModel") == 0);
}

/* RWConfig's attribute_map (num_hidden_layers / num_attention_heads / num_kv_heads are
 * n_layer / n_head / n_head_kv) laid onto FalconConfig's names; a name given both ways keeps
 * the attribute_map's (PretrainedConfig sets the leftover keys after __init__). */
int config_rw_keys(json_t *v, wt_errbuf *err)
{
	static const char *const map[][2] = {{"n_layer", "num_hidden_layers"},
	                                     {"n_head", "num_attention_heads"},
	                                     {"n_head_kv", "num_kv_heads"}};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		json_t *x = json_object_get(v, map[i][0]), *y = json_object_get(v, map[i][1]);
		if (x != NULL && !json_is_null(x) && (y == NULL || json_is_null(y)) &&
		    json_object_set(v, map[i][1], x) != 0)
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	return config_falcon_keys(v, err);
}

/* RWConfig's switches (vLLM's copy): new_decoder_architecture forced at hidden_size 8192,
 * RefinedWeb (falcon-40b's remote code, always the new architecture) refused without it,
 * apply_residual_connection_post_layernorm (which vLLM ignores) refused when true. */
static int rw_switches(json_t *root, const ckpt_config *c, bool *nda, wt_errbuf *err)
{
	bool post = false;
	int rv =
	    config_get_bool(root, "apply_residual_connection_post_layernorm", false, &post, err);
	if (rv != WT_OK)
		return rv;
	if (post)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: apply_residual_connection_post_layernorm true on "
		                 "model_type %s; vLLM's falcon.py always adds the block's input, "
		                 "not its LayerNorm's output: give false",
		                 c->model_type);
	json_t *k = json_object_get(root, "new_decoder_architecture");
	if (c->hidden_size == 8192)
		*nda = true;
	else if ((k == NULL || json_is_null(k)) && strcmp(c->model_type, "RefinedWeb") == 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: model_type RefinedWeb (falcon-40b's remote code, "
		                 "the new decoder architecture) at hidden_size %" PRId64
		                 " without new_decoder_architecture; vLLM's RWConfig sets it only "
		                 "at hidden_size 8192 and would build falcon-7b's layout: add "
		                 "\"new_decoder_architecture\": true",
		                 c->hidden_size);
	return WT_OK;
}

int config_parse_falcon(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	bool rw = config_is_rw(c->model_type);
	bool nda = false, mq = true, par = !rw, bias = false;
	int64_t nln = -1, kv = rw ? 1 : c->num_attention_heads, ffn = -1;
	json_t *kvk = json_object_get(root, "num_kv_heads");
	bool kv_given = kvk != NULL && !json_is_null(kvk);
	int rv = config_get_bool(root, "new_decoder_architecture", false, &nda, err);
	if (rv == WT_OK && rw)
		rv = rw_switches(root, c, &nda, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "multi_query", true, &mq, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "parallel_attn", !rw, &par, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "bias", false, &bias, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "num_ln_in_parallel_attn", -1, 1, &nln, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "num_kv_heads", kv, 1, &kv, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "ffn_hidden_size", -1, 1, &ffn, err);
	if (rv != WT_OK)
		return rv;
	const char *act = json_string_value(json_object_get(root, "activation"));
	if (act != NULL && strcmp(act, "gelu") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: activation '%s'; vLLM's falcon.py runs gelu in "
		                 "every MLP whatever the key says: give \"gelu\"",
		                 act);
	if (nda && !par)
		return refuse(err, "new_decoder_architecture true with parallel_attn false; "
		                   "transformers and vLLM build input_layernorm / "
		                   "post_attention_layernorm there but read ln_attn: set "
		                   "parallel_attn true");
	if (!nda && par && nln == 2)
		return refuse(err, "num_ln_in_parallel_attn 2 without new_decoder_architecture; "
		                   "transformers and vLLM build ln_attn / ln_mlp there but read "
		                   "input_layernorm: remove the key or set it 1");
	if (!nda && !mq && kv_given && kv != c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s %" PRId64 " differs from "
		                 "num_attention_heads %" PRId64
		                 " without new_decoder_architecture and multi_query; vLLM's "
		                 "falcon.py uses the heads there: remove the key",
		                 rw ? "n_head_kv" : "num_kv_heads", kv, c->num_attention_heads);
	if (ffn > 0 && ffn != 4 * c->hidden_size)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: ffn_hidden_size %" PRId64 " is not 4 * hidden_size "
		                 "= %" PRId64 "; vLLM's falcon.py builds the MLP 4 * hidden_size "
		                 "wide: remove the key",
		                 ffn, 4 * c->hidden_size);
	c->num_key_value_heads = nda ? kv : mq ? 1 : c->num_attention_heads;
	c->intermediate_size = 4 * c->hidden_size;
	c->attention_bias = c->attention_out_bias = c->mlp_bias = bias;
	c->falcon_ln = !par ? 3 : nda && nln != 1 ? 2 : 1;
	return WT_OK;
}
