/*
 * decilm.c — DeciLM (DeciLMForCausalLM, model_type nemotron-nas; vLLM's nemotron_nas.py): Llama's
 * decoder under Llama's names, each layer built from its block_configs entry. A layer's
 * attention has num_attention_heads / n_heads_in_group kv heads and its MLP the ffn_mult width
 * (the loader's ckpt_config_decilm); a no-op attention (no self_attn, no input_layernorm) skips
 * the attention residual branch entirely, a no-op ffn the MLP branch, as vLLM's
 * DeciLMDecoderLayer.forward does (its fused residual adds come to x = x + branch). RoPE,
 * rms_norm_eps and hidden_act are Llama's (cfg.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader_decilm.h"
#include "reference/decilm.h"
#include "reference/reference_int.h"

int ref_dl_layers(const ckpt_config *cc, const char *json, size_t len, ref_cfg *c, wt_errbuf *err)
{
	if (cc->num_hidden_layers > REF_L4_MAX_LAYERS)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %lld layers; the reference runs DeciLM with up to %d",
		    (long long)cc->num_hidden_layers, REF_L4_MAX_LAYERS);
	ckpt_decilm_block *b;
	int rv = ckpt_config_decilm(json, len, cc, &b, err);
	if (rv != WT_OK)
		return rv;
	for (int64_t i = 0; i < cc->num_hidden_layers; i++)
		if (b[i].kv_heads > REF_MAX_HEADS || b[i].inter > INT32_MAX) {
			rv = wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: block_configs[%lld] gives %lld kv heads and an MLP "
			    "%lld wide; the reference runs up to %d and 2^31 - 1",
			    (long long)i, (long long)b[i].kv_heads, (long long)b[i].inter,
			    REF_MAX_HEADS);
			free(b);
			return rv;
		}
	c->decilm = true;
	c->KV = 1;
	c->I = 1;
	for (int64_t i = 0; i < cc->num_hidden_layers; i++) {
		uint64_t bit = 1ull << (i % 64);
		if (b[i].attn) {
			c->dl_attn[i / 64] |= bit;
			c->dl_kv[i] = (int32_t)b[i].kv_heads;
			c->KV = b[i].kv_heads > c->KV ? b[i].kv_heads : c->KV;
		}
		if (b[i].ffn) {
			c->dl_ffn[i / 64] |= bit;
			c->dl_I[i] = (int32_t)b[i].inter;
			c->I = b[i].inter > c->I ? b[i].inter : c->I;
		}
	}
	free(b);
	return WT_OK;
}

bool ref_dl_attn(const ref_cfg *c, int64_t l)
{
	return !c->decilm || ref_l4_bit(c->dl_attn, l);
}

bool ref_dl_ffn(const ref_cfg *c, int64_t l)
{
	return !c->decilm || ref_l4_bit(c->dl_ffn, l);
}

const ref_cfg *ref_dl_layer(const ref_cfg *c, int64_t l, ref_cfg *tmp)
{
	if (!c->decilm || l < 0 || l >= REF_L4_MAX_LAYERS)
		return c;
	memcpy(tmp, c, sizeof(*tmp));
	if (ref_dl_attn(c, l))
		tmp->KV = c->dl_kv[l];
	if (ref_dl_ffn(c, l))
		tmp->I = c->dl_I[l];
	return tmp;
}
