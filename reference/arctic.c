/*
 * arctic.c — Snowflake Arctic (ArcticForCausalLM; kind REF_MIXTRAL with arctic set;
 * cfg_kind.c), the parts of vLLM's arctic.py the Mixtral pass does not already run.
 *
 * Layer i is MoE when (i + 1) % moe_layer_frequency == 0 (ref_layer_is_moe), its other layers
 * run the dense ArcticMLP block_sparse_moe.mlp (w1 / w3 / w2; a rank's merged w13 / w2). The
 * router is Mixtral's softmax top-k, renormalized only when num_experts_per_tok > 1 (ArcticMoE:
 * fused_topk(renormalize=top_k > 1)). With use_residual a MoE layer is ArcticDecoderLayer's
 * parallel block:
 *
 *   x1  = x + attn(input_layernorm(x))
 *   out = x1 + residual_mlp(residual_layernorm(x1)) + moe(post_attention_layernorm(x))
 *
 * (the MoE reads the layer's INPUT x, the residual MLP the attention's output x1), which the
 * passes run as GPT-NeoX's parallel residual (the MoE's input kept before attention) plus
 * the residual MLP here, added to the MoE's sum before the residual add.
 */
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"
#include "reference/shard_int.h"

enum { A_RES, A_FREQ, A_COUNT };

int ref_cfg_arctic(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[A_COUNT] = {
	    [A_RES] = {"use_residual", CKPT_FIELD_BOOL},
	    [A_FREQ] = {"moe_layer_frequency", CKPT_FIELD_INT},
	};
	int rv = ckpt_config_fields(json, len, f, A_COUNT, err);
	if (rv != WT_OK)
		return rv;
	if (!f[A_RES].present)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: use_residual is missing; vLLM's arctic.py reads it "
		                 "(ArcticConfig has no default): give true or false");
	c->arctic_res = f[A_RES].b;
	c->sparse_step = f[A_FREQ].present ? f[A_FREQ].i : 2; /* ArcticConfig's 2 */
	if (c->sparse_step < 1 || c->sparse_step > 2)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: moe_layer_frequency %lld; vLLM's arctic.py loads 1 "
		                 "or 2 only",
		                 (long long)c->sparse_step);
	c->norm_topk = c->topk > 1;
	return WT_OK;
}

bool ref_arctic_res(const ref_cfg *c, int64_t l)
{
	return c->arctic && c->arctic_res && ref_layer_is_moe(c, l);
}

int ref_arctic_residual_full(const ref_cfg *c, ref_set *s, int64_t l, int64_t T, ref_bufs *b,
                             wt_errbuf *err)
{
	const float *wg, *wu, *wd;
	long long x = (long long)l;
	int64_t hid = c->hid;
	int rv;
	if ((rv = ref_norm_of(c, s, b->h, b->x, T, err, "model.layers.%lld.residual_layernorm",
	                      x)) ||
	    (rv = ref_getf(s, &wg, false, err, 2, hid, hid, 0,
	                   "model.layers.%lld.residual_mlp.w1.weight", x)) ||
	    (rv = ref_getf(s, &wu, false, err, 2, hid, hid, 0,
	                   "model.layers.%lld.residual_mlp.w3.weight", x)) ||
	    (rv = ref_getf(s, &wd, false, err, 2, hid, hid, 0,
	                   "model.layers.%lld.residual_mlp.w2.weight", x)))
		return rv;
	ref_ffn(b->y, b->h, T, hid, hid, wg, NULL, wu, NULL, wd, c->act, b->scratch);
	for (int64_t i = 0; i < T * hid; i++)
		b->acc[i] += b->y[i];
	return WT_OK;
}

int ref_arctic_shard_residual(shard *s, int64_t l)
{
	const ref_cfg *c = s->c;
	int64_t n = s->n_tok * c->hid;
	char m[160];
	int rv;
	/* x1 = x + the attention's all-reduced output (held in b.sc by attn(): b.y is the
	 * experts' scratch) */
	for (int64_t i = 0; i < n; i++)
		s->b.part[i] = s->b.x[i] + s->b.sc[i];
	snprintf(m, sizeof(m), "model.layers.%lld.residual_mlp.", (long long)l);
	for (uint32_t r = 0; r < s->T; r++) {
		ref_set *rs = rank_set(s, r, s->g);
		if ((rv = ref_norm_of(c, rs, s->b.h, s->b.part, s->n_tok, s->err,
		                      "model.layers.%lld.residual_layernorm", (long long)l)) ||
		    (rv = ref_shard_mlp_rank(s, rs, m, c->hid, s->n_tok, s->b.h, s->b.o)))
			return rv;
		add_into(s->b.acc, s->b.o, n);
	}
	return WT_OK;
}
