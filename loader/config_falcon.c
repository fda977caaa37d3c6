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

int config_parse_falcon(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	bool nda = false, mq = true, par = true, bias = false;
	int64_t nln = -1, kv = c->num_attention_heads, ffn = -1;
	int rv = config_get_bool(root, "new_decoder_architecture", false, &nda, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "multi_query", true, &mq, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "parallel_attn", true, &par, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "bias", false, &bias, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "num_ln_in_parallel_attn", -1, 1, &nln, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "num_kv_heads", c->num_attention_heads, 1, &kv, err);
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
	if (!nda && !mq && kv != c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_kv_heads %" PRId64 " differs from "
		                 "num_attention_heads %" PRId64
		                 " without new_decoder_architecture and multi_query; vLLM's "
		                 "falcon.py uses the heads there: remove the key",
		                 kv, c->num_attention_heads);
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
