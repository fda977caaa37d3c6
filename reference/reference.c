/*
 * reference.c — the full reference forward pass over the original checkpoint
 * tensors (one process, no partitioning): embedding lookup (Gemma: times
 * sqrt(hidden_size)), then per layer RMSNorm (StarCoder2: LayerNorm; OLMo 1: LayerNorm
 * without weight or bias; OLMo 2: none) -> q/k/v (Phi-3: split from the checkpoint's
 * qkv_proj; + biases, q_norm/k_norm per head, OLMo 2's over all heads; OLMo 1 / OLMoE
 * clip_qkv) -> RoPE (GLM: adjacent pairs) -> causal GQA
 * attention (Gemma 2/3: scale, soft-cap, sliding window) -> o_proj (Gemma 2/3,
 * OLMo 2: post_attention_layernorm, GLM-4-0414: post_self_attn_layernorm) ->
 * residual -> RMSNorm (OLMo 2: none) -> MLP (Phi-3, GLM: gate_up_proj split) or
 * MoE (Gemma 2/3, OLMo 2: post_feedforward_layernorm, GLM-4-0414:
 * post_mlp_layernorm) ->
 * residual, final norm, LM head (the embedding matrix when tied) and Gemma 2's
 * final soft-cap. Llama 4's NoPE / RoPE layers, L2 q/k norms and experts: llama4.c.
 * reference_shard.c computes the same thing from the rank tensors.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/afmoe.h"
#include "reference/decilm.h"
#include "reference/grok1.h"
#include "reference/mimo_v2.h"
#include "reference/pangu_sink.h"
#include "reference/ouro.h"
#include "reference/reference_int.h"
#include "reference/solar.h"
#include "reference/step3.h"

void ref_bufs_free(ref_bufs *b)
{
	if (b == NULL)
		return;
	free(b->x);
	free(b->h);
	free(b->q);
	free(b->k);
	free(b->v);
	free(b->att);
	free(b->o);
	free(b->acc);
	free(b->part);
	free(b->y);
	free(b->scratch);
	free(b->row);
	free(b->sc);
	memset(b, 0, sizeof(*b));
}

int ref_bufs_alloc(ref_bufs *b, const ref_cfg *c, size_t n_tok, const int64_t *tokens,
                   wt_errbuf *err)
{
	memset(b, 0, sizeof(*b));
	if (n_tok < 1 || n_tok > REF_MAX_TOKENS)
		return wt_seterr(err, WT_EINVAL, "%zu tokens; the reference runs 1 to %d", n_tok,
		                 REF_MAX_TOKENS);
	if (c->kind == REF_BERT && (int64_t)n_tok > c->max_pos)
		return wt_seterr(err, WT_EINVAL, "%zu tokens; max_position_embeddings is %lld",
		                 n_tok, (long long)c->max_pos);
	if (c->roberta && c->pad_id + (int64_t)n_tok >= c->max_pos)
		return wt_seterr(err, WT_EINVAL,
		                 "%zu tokens; positions start at pad_token_id + 1 = %lld and "
		                 "max_position_embeddings is %lld",
		                 n_tok, (long long)(c->pad_id + 1), (long long)c->max_pos);
	for (size_t t = 0; t < n_tok; t++)
		if (tokens[t] < 0 || tokens[t] >= c->V)
			return wt_seterr(err, WT_EINVAL, "token %zu is %lld; vocab_size is %lld", t,
			                 (long long)tokens[t], (long long)c->V);
	size_t T = n_tok;
	int64_t inter = c->I;
	if (c->Ie > inter)
		inter = c->Ie;
	if (c->Is > inter)
		inter = c->Is;
	if (c->arctic && c->hid > inter) /* Arctic's residual MLP: hidden_size wide */
		inter = c->hid;
	b->x = calloc(T * (size_t)c->hid, sizeof(float));
	b->h = calloc(T * (size_t)c->hid, sizeof(float));
	b->q = calloc(T * (size_t)(c->H * c->d), sizeof(float));
	b->k = calloc(T * (size_t)(c->KV * c->d), sizeof(float));
	b->v = calloc(T * (size_t)(c->KV * c->d), sizeof(float));
	b->att = calloc(T * (size_t)(c->H * c->d), sizeof(float));
	b->o = calloc(T * (size_t)c->hid, sizeof(float));
	b->acc = calloc(T * (size_t)c->hid, sizeof(float));
	b->part = calloc(T * (size_t)c->hid, sizeof(float));
	b->y = calloc(T * (size_t)c->hid, sizeof(float));
	b->scratch = calloc(3 * T * (size_t)(2 * inter), sizeof(float));
	b->row = calloc((size_t)c->hid, sizeof(float));
	b->sc = calloc(T * (size_t)c->hid, sizeof(float));
	if (!b->x || !b->h || !b->q || !b->k || !b->v || !b->att || !b->o || !b->acc || !b->part ||
	    !b->y || !b->scratch || !b->row || !b->sc) {
		ref_bufs_free(b);
		return wt_seterr(err, WT_ENOMEM, "reference forward: out of memory");
	}
	return WT_OK;
}

int ref_norm_of(const ref_cfg *c, ref_set *s, float *y, const float *x, int64_t rows,
                wt_errbuf *err, const char *fmt, ...)
{
	if (c->norm_free) { /* OLMo 1: a LayerNorm without weight or bias, nothing to read */
		ref_layernorm(y, x, NULL, NULL, rows, c->hid, (float)c->eps);
		return WT_OK;
	}
	char m[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(m))
		return wt_seterr(err, WT_EINVAL, "norm name from '%s' too long", fmt);
	const float *w, *b = NULL;
	int rv = ref_getf(s, &w, false, err, 1, c->hid, 0, 0, "%s.weight", m);
	if (rv == WT_OK && c->layernorm && c->cohere == 0) /* CohereLayerNorm: no bias */
		rv = ref_getf(s, &b, false, err, 1, c->hid, 0, 0, "%s.bias", m);
	if (rv == WT_OK)
		ref_norm_b(c, y, x, w, b, rows, c->hid);
	return rv;
}

int ref_block_input(const ref_cfg *c, ref_set *s, float *y, const float *x, int64_t rows, int64_t l,
                    const char *leaf, wt_errbuf *err)
{
	if (leaf == NULL) {
		if (y != x)
			memcpy(y, x, (size_t)(rows * c->hid) * sizeof(float));
		return WT_OK;
	}
	return ref_norm_of(c, s, y, x, rows, err, "model.layers.%lld.%s", (long long)l, leaf);
}

/* q/k/v weights and optional biases of layer l: q_proj/k_proj/v_proj, or Phi-3's
 * fused qkv_proj [q; k; v] rows (fused_ckpt). */
typedef struct qkv_w {
	const float *wq, *wk, *wv, *bq, *bk, *bv;
} qkv_w;

static int qkv_full(const ref_cfg *c, ref_set *s, int64_t l, qkv_w *w, wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t qd = c->H * c->d, kvd = c->KV * c->d;
	int rv;
	if (c->fused_ckpt) {
		const float *f, *fb;
		if ((rv = ref_getf(s, &f, false, err, 2, qd + 2 * kvd, c->hid, 0,
		                   "model.layers.%lld.self_attn.qkv_proj.weight", L)) ||
		    (rv = ref_getf(s, &fb, true, err, 1, qd + 2 * kvd, 0, 0,
		                   "model.layers.%lld.self_attn.qkv_proj.bias", L)))
			return rv;
		w->wq = f;
		w->wk = f + qd * c->hid;
		w->wv = f + (qd + kvd) * c->hid;
		w->bq = fb;
		w->bk = fb ? fb + qd : NULL;
		w->bv = fb ? fb + qd + kvd : NULL;
		return WT_OK;
	}
	if ((rv = ref_getf(s, &w->wq, false, err, 2, qd, c->hid, 0,
	                   "model.layers.%lld.self_attn.q_proj.weight", L)) ||
	    (rv = ref_getf(s, &w->wk, false, err, 2, kvd, c->hid, 0,
	                   "model.layers.%lld.self_attn.k_proj.weight", L)) ||
	    (rv = ref_getf(s, &w->wv, false, err, 2, kvd, c->hid, 0,
	                   "model.layers.%lld.self_attn.v_proj.weight", L)) ||
	    (rv = ref_getf(s, &w->bq, true, err, 1, qd, 0, 0,
	                   "model.layers.%lld.self_attn.q_proj.bias", L)) ||
	    (rv = ref_getf(s, &w->bk, true, err, 1, kvd, 0, 0,
	                   "model.layers.%lld.self_attn.k_proj.bias", L)) ||
	    (rv = ref_getf(s, &w->bv, true, err, 1, kvd, 0, 0,
	                   "model.layers.%lld.self_attn.v_proj.bias", L)))
		return rv;
	return WT_OK;
}

/* Layer l's mixer when it is not the attention: LFM2's short conv, MiniMax's lightning
 * attention, the Mamba2 / Mamba mixers, MLA and Qwen3-Next's, added into the residual (*done
 * set); Falcon-H1's Mamba2 mixer into b->y, the attention beside it still to run. */
static int mixer_full(const ref_cfg *c, ref_set *s, int64_t l, int64_t T, ref_bufs *b, bool *done,
                      wt_errbuf *err)
{
	int rv = WT_OK;
	*done = true;
	if (c->lfm2) { /* short conv or attention with q/k layernorms, out_proj */
		const ref_lfm2_part p = {
		    .ckpt = true, .out_bias = true, .Hl = c->H, .KVl = c->KV, .ch = c->hid};
		rv = ref_lfm2_mixer(c, s, l, &p, b->h, T, b->o, err);
	} else if (ref_mm_lin(c, l)) { /* MiniMax: the lightning attention */
		const ref_mm_part p = {.Hl = c->H, .q0 = 0};
		rv = ref_mm_lightning(c, s, l, &p, b->h, T, NULL, NULL, b->o, err);
		if (rv == WT_OK)
			ref_mm_resid(c, b->x, b->h, T * c->hid, l, false);
	} else if (ref_g4_mamba_layer(c, l)) { /* Granite 4.0: the Mamba2 mixer */
		/* Falcon-H1: into b->y, then the attention beside it (ref_fh1_sum) */
		rv = ref_g4_mixer_full(c, s, l, b->h, T, c->fh1 ? b->y : b->o, err);
		*done = !c->fh1;
	} else if (ref_jb_mamba_layer(c, l)) { /* Jamba: the Mamba (v1) mixer */
		rv = ref_jb_mixer_full(c, s, l, b->h, T, b->o, err);
	} else if (ref_p2_mamba_layer(c, l)) { /* PLaMo 2's Mamba mixer, then post_mixer_norm */
		if ((rv = ref_p2_mixer_full(c, s, l, b->h, T, b->o, err)) == WT_OK)
			rv =
			    ref_norm_of(c, s, b->o, b->o, T, err,
			                "model.layers.%lld.post_attention_layernorm", (long long)l);
	} else if (c->afmoe) { /* the output-gated attention, then post_attention_layernorm */
		const ref_q3n_part p = {.ckpt = true, .Hl = c->H, .KVl = c->KV};
		if ((rv = ref_afmoe_attn(c, s, l, &p, b->h, T, b->o, err)) == WT_OK)
			rv =
			    ref_norm_of(c, s, b->o, b->o, T, err,
			                "model.layers.%lld.post_attention_layernorm", (long long)l);
	} else if (ref_is_mla(c) || c->q3n || c->step3 || c->mimo_v2 || c->pv2) { /* + Step 3's */
		const ref_q3n_part p = {.ckpt = true, .Hl = c->H, .KVl = c->KV, .hk = c->lin_hk};
		rv = c->q3n       ? ref_q3n_mixer(c, s, l, &p, b->h, T, b->o, err)
		     : c->step3   ? ref_step3_attn(c, s, l, &p, b->h, T, b->o, err)
		     : c->mimo_v2 ? ref_mv_attn(c, s, l, 0, 0, b->h, T, b->o, err)
		     : c->pv2     ? ref_pv2_attn(c, s, l, 0, 0, b->h, T, b->o, err)
		                  : ref_mla(c, s, l, c->H, b->h, T, b->o, err);
		if (rv == WT_OK && c->sandwich && c->pangu_moe) /* the sandwich's attention norm */
			rv =
			    ref_norm_of(c, s, b->o, b->o, T, err,
			                "model.layers.%lld.post_attention_layernorm", (long long)l);
	} else {
		*done = false;
	}
	if (rv == WT_OK && *done)
		ref_residual_add(c, b->x, b->o, T * c->hid);
	return rv;
}

/* Attention block of layer l: x += o_proj(attn(norm(x))), Gemma 2/3 with
 * post_attention_layernorm on o_proj's output. */
static int attn_full(const ref_cfg *c, ref_set *s, int64_t l, int64_t T, ref_bufs *b,
                     wt_errbuf *err)
{
	const float *wo, *bo, *qn = NULL, *kn = NULL, *pn = NULL;
	long long L = (long long)l;
	int64_t qd = c->H * c->d, kvd = c->KV * c->d;
	qkv_w w;
	int rv = c->zamba2 ? ref_z2_input_full(c, s, l, T, b, err) /* + its shared block */
	                   : ref_block_input(c, s, b->h, b->x, T, l, ref_attn_norm(c), err);
	if (rv != WT_OK)
		return rv;
	bool done;
	if ((rv = mixer_full(c, s, l, T, b, &done, err)) || done)
		return rv;
	if ((rv = qkv_full(c, s, l, &w, err)) ||
	    (rv = ref_getf(s, &wo, false, err, 2, c->hid, qd, 0,
	                   "model.layers.%lld.self_attn.o_proj.weight", L)) ||
	    (rv = ref_getf(s, &bo, true, err, 1, c->hid, 0, 0,
	                   "model.layers.%lld.self_attn.o_proj.bias", L)))
		return rv;
	/* per head [d], OLMo 2's over all of q [H*d] and k [KV*d], or Cohere's / PLaMo 2's [H, d] /
	 * [KV, d] (one row per head) */
	int64_t qnd = c->qk_norm_full ? qd : c->d, knd = c->qk_norm_full ? kvd : c->d;
	bool rows = c->cohere || c->plamo2; /* PLaMo 2: RMSNorms of one weight row a head */
	int nd = rows ? 2 : 1;
	if (c->qk_norm &&
	    ((rv = ref_getf(s, &qn, false, err, nd, rows ? c->H : qnd, rows ? c->d : 0, 0,
	                    "model.layers.%lld.self_attn.%s.weight", L,
	                    ref_qk_norm_leaf(c, false))) ||
	     (rv =
	          ref_getf(s, &kn, false, err, nd, rows ? c->KV : knd, rows ? c->d : 0, 0,
	                   "model.layers.%lld.self_attn.%s.weight", L, ref_qk_norm_leaf(c, true)))))
		return rv;
	if (c->sandwich &&
	    (rv = ref_getf(s, &pn, false, err, 1, c->hid, 0, 0, "model.layers.%lld.%s.weight", L,
	                   ref_post_norm(c, false))))
		return rv;
	ref_linear(b->q, b->h, w.wq, w.bq, T, c->hid, qd);
	ref_linear(b->k, b->h, w.wk, w.bk, T, c->hid, kvd);
	ref_linear(b->v, b->h, w.wv, w.bv, T, c->hid, kvd);
	ref_fh1_qkv(c, b->q, b->k, b->v, T * qd, T * kvd);
	if (c->ps_qkln && (rv = ref_persimmon_qk(c, s, l, b->q, b->k, T, c->H, err)))
		return rv;
	if (c->chameleon && (rv = ref_chameleon_qk(c, s, l, b->q, b->k, T, c->H, c->KV, err)))
		return rv;
	if (c->qk_norm && c->cohere) {
		ref_head_layernorm(c, b->q, qn, T, c->H);
		ref_head_layernorm(c, b->k, kn, T, c->KV);
	} else if (c->qk_norm && c->plamo2) {
		ref_p2_head_norm(c, b->q, qn, T, c->H);
		ref_p2_head_norm(c, b->k, kn, T, c->KV);
	} else if (c->qk_norm && !c->hunyuan) {
		ref_norm(c, b->q, b->q, qn, T * qd / qnd, qnd);
		ref_norm(c, b->k, b->k, kn, T * kvd / knd, knd);
	}
	ref_clip_qkv(c, b->q, T * qd); /* OLMo 1, OLMoE: after the biases and q/k norms */
	ref_clip_qkv(c, b->k, T * kvd);
	ref_clip_qkv(c, b->v, T * kvd);
	double theta, factor;
	ref_attn_opt ao;
	ref_layer_attn(c, l, &theta, &factor, &ao);
	if ((rv = ref_gpt_oss_sinks(c, s, l, c->H, &ao, err)))
		return rv;
	float slopes[REF_MAX_HEADS];
	if ((c->mpt || c->bloom || c->fl_alibi || c->bc_alibi || c->jais_alibi) &&
	    c->H <= REF_MAX_HEADS) { /* ALiBi, every head */
		ref_alibi_slopes(c, slopes);
		ao.alibi = slopes;
	}
	if (c->llama4) { /* RoPE and L2 norms, or NoPE and the temperature */
		ref_llama4_qk(c, l, b->q, b->k, T, c->H, c->KV);
	} else {
		ref_rope_layer(c, l, b->q, T, c->H, qd);
		ref_rope_layer(c, l, b->k, T, c->KV, kvd);
	}
	if (c->qk_norm && c->hunyuan) { /* Hunyuan: per head after RoPE */
		ref_norm(c, b->q, b->q, qn, T * c->H, c->d);
		ref_norm(c, b->k, b->k, kn, T * c->KV, c->d);
	}
	int64_t kv_of[REF_MAX_HEADS];
	if (c->H > REF_MAX_HEADS)
		return wt_seterr(err, WT_EUNSUPPORTED, "%lld heads; the reference handles %d",
		                 (long long)c->H, REF_MAX_HEADS);
	for (int64_t h = 0; h < c->H; h++)
		kv_of[h] = h / (c->H / c->KV);
	ref_attention(b->att, b->q, b->k, b->v, T, c->H, c->KV, kv_of, c->d, &ao);
	ref_linear(b->o, b->att, wo, bo, T, qd, c->hid);
	ref_gk_attn_mult(c, b->o, T * c->hid); /* Grok-1: before post_attn_norm */
	if (pn != NULL)
		ref_norm(c, b->o, b->o, pn, T, c->hid);
	ref_mm_resid(c, b->x, b->h, T * c->hid, l, false); /* MiniMax: alpha * norm(x) */
	ref_fh1_sum(c, b->o, b->y, T * c->hid);            /* Falcon-H1: + the Mamba mixer */
	ref_residual_add(c, b->x, b->o, T * c->hid);
	return WT_OK;
}

/* StarCoder2's plain MLP c_proj(act(c_fc(h))) of module prefix m on h into y, with
 * the output bias. */
static int mlp_plain_full(const ref_cfg *c, ref_set *s, const char *m, int64_t T, const float *h,
                          float *y, float *scratch, wt_errbuf *err)
{
	const float *w1, *b1, *w2, *b2;
	int64_t hid = c->hid;
	int rv;
	if ((rv = ref_getf(s, &w1, false, err, 2, c->I, hid, 0, "%sc_fc.weight", m)) ||
	    (rv = ref_getf(s, &b1, true, err, 1, c->I, 0, 0, "%sc_fc.bias", m)) ||
	    (rv = ref_getf(s, &w2, false, err, 2, hid, c->I, 0, "%sc_proj.weight", m)) ||
	    (rv = ref_getf(s, &b2, true, err, 1, hid, 0, 0, "%sc_proj.bias", m)))
		return rv;
	ref_mlp_plain(y, h, T, hid, c->I, w1, b1, w2, c->act, scratch);
	for (int64_t t = 0; b2 && t < T; t++)
		for (int64_t i = 0; i < hid; i++)
			y[t * hid + i] += b2[i];
	return WT_OK;
}

/* Dense gated MLP of module prefix `m` (n_inter rows) on b->h into y; Phi-3's and
 * GLM's checkpoints hold gate_up_proj [gate; up] (fused_gate_up). */
static int mlp_full(const ref_cfg *c, ref_set *s, const char *m, int64_t n_inter, int64_t T,
                    const float *h, float *y, float *scratch, wt_errbuf *err)
{
	const float *wg, *wu, *wd, *bg, *bu, *bd;
	int64_t hid = c->hid;
	int rv;
	if (c->plain_mlp)
		return mlp_plain_full(c, s, m, T, h, y, scratch, err);
	if (c->nogate) { /* Apertus, Arcee: down_proj(act(up_proj(h))), down's bias once */
		if ((rv = ref_nogate_mlp(c, s, m, n_inter, T, h, y, scratch, err)) ||
		    (rv = ref_getf(s, &bd, true, err, 1, hid, 0, 0, "%sdown_proj.bias", m)))
			return rv;
		for (int64_t t = 0; bd && t < T; t++)
			for (int64_t i = 0; i < hid; i++)
				y[t * hid + i] += bd[i];
		return WT_OK;
	}
	if (c->fused_gate_up || c->stacked_experts) {
		const char *gul = ref_gate_up_leaf(c);
		if ((rv = ref_getf(s, &wg, false, err, 2, 2 * n_inter, hid, 0, "%s%s.weight", m,
		                   gul)) ||
		    (rv = ref_getf(s, &bg, true, err, 1, 2 * n_inter, 0, 0, "%s%s.bias", m, gul)))
			return rv;
		wu = wg + n_inter * hid;
		bu = bg ? bg + n_inter : NULL;
	} else if ((rv = ref_getf(s, &wg, false, err, 2, n_inter, hid, 0, "%s%s.weight", m,
	                          ref_gate_leaf(c))) ||
	           (rv = ref_getf(s, &wu, false, err, 2, n_inter, hid, 0, "%s%s.weight", m,
	                          ref_up_leaf(c))) ||
	           (rv = ref_getf(s, &bg, true, err, 1, n_inter, 0, 0, "%sgate_proj.bias", m)) ||
	           (rv = ref_getf(s, &bu, true, err, 1, n_inter, 0, 0, "%sup_proj.bias", m))) {
		return rv;
	}
	const char *dl = ref_down_leaf(c);
	if ((rv = ref_getf(s, &wd, false, err, 2, hid, n_inter, 0, "%s%s.weight", m, dl)) ||
	    (rv = ref_getf(s, &bd, true, err, 1, hid, 0, 0, "%s%s.bias", m, dl)))
		return rv;
	if (c->fh1) /* Falcon-H1's mlp_multipliers */
		ref_ffn_mult(y, h, T, hid, n_inter, wg, bg, wu, bu, wd, c->act, scratch,
		             c->fh1_gate, c->fh1_down);
	else
		ref_ffn(y, h, T, hid, n_inter, wg, bg, wu, bu, wd, c->act, scratch);
	if (bd)
		for (int64_t t = 0; t < T; t++)
			for (int64_t i = 0; i < hid; i++)
				y[t * hid + i] += bd[i];
	return WT_OK;
}

/* The gate, up and down weights of expert e of MoE module m in the checkpoint:
 * experts.{e}.w1/w3/w2 (Mixtral), .gate_proj/up_proj/down_proj, or GraniteMoE's
 * stacks input_linear [E, 2*Ie, hid] ([gate_e; up_e] rows) / output_linear
 * [E, hid, Ie]. */
static int expert_full(const ref_cfg *c, ref_set *s, const char *m, int64_t e, const float **wg,
                       const float **wu, const float **wd, wt_errbuf *err)
{
	int64_t hid = c->hid, ie = c->Ie;
	int rv;
	if (c->stacked_experts) {
		const float *in, *out;
		if ((rv = ref_getf(s, &in, false, err, 3, c->E, 2 * ie, hid,
		                   "%sinput_linear.weight", m)) ||
		    (rv = ref_getf(s, &out, false, err, 3, c->E, hid, ie, "%soutput_linear.weight",
		                   m)))
			return rv;
		*wg = in + e * 2 * ie * hid;
		*wu = *wg + ie * hid;
		*wd = out + e * hid * ie;
		return WT_OK;
	}
	const bool mix = c->kind == REF_MIXTRAL;
	const char *g = mix ? "w1" : "gate_proj", *u = mix ? "w3" : "up_proj",
	           *dn = mix ? "w2" : "down_proj";
	long long x = (long long)e;
	if ((rv =
	         ref_getf(s, wg, false, err, 2, ie, hid, 0, "%sexperts.%lld.%s.weight", m, x, g)) ||
	    (rv = ref_getf(s, wu, false, err, 2, ie, hid, 0, "%sexperts.%lld.%s.weight", m, x, u)))
		return rv;
	return ref_getf(s, wd, false, err, 2, hid, ie, 0, "%sexperts.%lld.%s.weight", m, x, dn);
}

/* MoE block of layer l on b->h into b->acc, token by token. */
static int moe_full(const ref_cfg *c, ref_set *s, int64_t l, int64_t T, ref_bufs *b,
                    int64_t *routes, wt_errbuf *err)
{
	char m[160], ex[200];
	ref_moe_prefix(c, l, m, sizeof(m));
	float *y = b->y;
	float w[REF_MAX_EXPERTS]; /* top-k <= E <= REF_MAX_EXPERTS */
	int64_t idx[REF_MAX_EXPERTS];
	int rv;
	if (c->gpt_oss)
		return ref_gpt_oss_moe_full(c, s, l, b->h, T, b->acc, routes, y, b->scratch, err);
	if (c->llama4) { /* routed experts on scaled inputs, + the ungated shared expert */
		float gate;
		if ((rv = ref_llama4_moe_full(c, s, l, b->h, T, b->acc, routes, b, err)) ||
		    (rv = ref_shared_gate(c, s, m, b->h, ex, sizeof(ex), &gate, err)) ||
		    (rv = mlp_full(c, s, ex, c->Is, T, b->h, y, b->scratch, err)))
			return rv;
		for (int64_t i = 0; i < T * c->hid; i++)
			b->acc[i] += y[i];
		return WT_OK;
	}
	if (c->aria) { /* the bmm stacks, + the ungated shared experts */
		float gate;
		if ((rv = ref_q3vl_moe_full(c, s, m, b->h, T, b->acc, routes, b, err)) ||
		    (rv = ref_shared_gate(c, s, m, b->h, ex, sizeof(ex), &gate, err)) ||
		    (rv = mlp_full(c, s, ex, c->Is, T, b->h, y, b->scratch, err)))
			return rv;
		for (int64_t i = 0; i < T * c->hid; i++)
			b->acc[i] += y[i];
		return WT_OK;
	}
	if (c->q3vl_moe) { /* the checkpoint's bmm stacks, else one Linear per expert (below) */
		const float *gu;
		if ((rv = ref_getf(s, &gu, true, err, 3, c->E, c->hid, 2 * c->Ie,
		                   "%sexperts.gate_up_proj", m)))
			return rv;
		if (gu != NULL) /* no shared expert */
			return ref_q3vl_moe_full(c, s, m, b->h, T, b->acc, routes, b, err);
	}
	memset(b->acc, 0, (size_t)(T * c->hid) * sizeof(float));
	for (int64_t t = 0; t < T; t++) {
		const float *h = b->h + t * c->hid;
		float *acc = b->acc + t * c->hid;
		if ((rv = ref_moe_route(c, s, true, m, h, NULL, idx, w, err)))
			return rv;
		if (routes) /* PhiMoE: its route codes (ref_moe_route) */
			memcpy(routes + t * c->topk, idx + (c->phimoe ? c->topk : 0),
			       (size_t)c->topk * sizeof(int64_t));
		for (int64_t j = 0; j < c->topk; j++) {
			const float *wg, *wu, *wd;
			snprintf(ex, sizeof(ex), "%sexperts.%lld.", m, (long long)idx[j]);
			if (c->nh) /* Nemotron-H: relu2(up) then down, no gate */
				rv = ref_nogate_mlp(c, s, ex, c->Ie, 1, h, y, b->scratch, err);
			else if ((rv = expert_full(c, s, m, idx[j], &wg, &wu, &wd, err)) == WT_OK)
				ref_ffn(y, h, 1, c->hid, c->Ie, wg, NULL, wu, NULL, wd, c->act,
				        b->scratch);
			if (rv != WT_OK)
				return rv;
			for (int64_t i = 0; i < c->hid; i++)
				acc[i] += w[j] * y[i];
		}
		if (c->Is > 0) {
			float gate;
			if ((rv = ref_shared_gate(c, s, m, h, ex, sizeof(ex), &gate, err)) ||
			    (rv = mlp_full(c, s, ex, c->Is, 1, h, y, b->scratch, err)))
				return rv;
			for (int64_t i = 0; i < c->hid; i++)
				acc[i] += gate * y[i];
		}
	}
	return WT_OK;
}

/* Qwen2's reward models' score head on h [T, hid]: score.0 (+ bias), ReLU, score.2 (+ bias)
 * into out [T, n_labels]. */
static int rm_full(const ref_cfg *c, ref_set *ck, const float *h, int64_t T, float *out,
                   wt_errbuf *err)
{
	const float *w0, *b0, *w2, *b2;
	int rv;
	if ((rv = ref_getf(ck, &w0, false, err, 2, c->hid, c->hid, 0, "score.0.weight")) ||
	    (rv = ref_getf(ck, &b0, false, err, 1, c->hid, 0, 0, "score.0.bias")) ||
	    (rv = ref_getf(ck, &w2, false, err, 2, c->n_labels, c->hid, 0, "score.2.weight")) ||
	    (rv = ref_getf(ck, &b2, false, err, 1, c->n_labels, 0, 0, "score.2.bias")))
		return rv;
	float *mid = malloc((size_t)(T * c->hid) * sizeof(float));
	if (mid == NULL)
		return wt_seterr(err, WT_ENOMEM, "score head: out of memory");
	ref_linear(mid, h, w0, b0, T, c->hid, c->hid);
	for (int64_t i = 0; i < T * c->hid; i++)
		mid[i] = mid[i] > 0.0f ? mid[i] : 0.0f;
	ref_linear(out, mid, w2, b2, T, c->hid, c->n_labels);
	free(mid);
	return WT_OK;
}

/* The LM head on the final hidden states h [T, hid] (the embedding matrix emb when tied;
 * PhiMoE's lm_head.bias with lm_head_bias), or the decoder sequence classifiers' score.weight
 * [n_labels, hid] (no bias) in its place; the decoder embedding models return h itself. */
static int head_full(const ref_cfg *c, ref_set *ck, const float *emb, const float *h, int64_t T,
                     float *logits, wt_errbuf *err)
{
	const float *w = emb, *bias = NULL;
	int rv;
	if (c->dec_emb) { /* the decoder embedding models: the final hidden states */
		memcpy(logits, h, (size_t)(T * c->hid) * sizeof(float));
		return WT_OK;
	}
	if (c->rm_head)
		return rm_full(c, ck, h, T, logits, err);
	if (c->dec_cls) {
		if ((rv =
		         ref_getf(ck, &w, false, err, 2, c->n_labels, c->hid, 0, "score.weight")) ||
		    (c->siglip &&
		     (rv = ref_getf(ck, &bias, false, err, 1, c->n_labels, 0, 0, "score.bias"))))
			return rv;
		ref_linear(logits, h, w, bias, T, c->hid, c->n_labels);
		return WT_OK;
	}
	if (!c->tied && (rv = ref_getf(ck, &w, false, err, 2, c->V, c->hid, 0, "lm_head.weight")))
		return rv;
	if (c->lm_bias && (rv = ref_getf(ck, &bias, false, err, 1, c->V, 0, 0, "lm_head.bias")))
		return rv;
	ref_linear(logits, h, w, bias, T, c->hid, c->V);
	ref_logits_post(c, logits, T * c->V);
	return WT_OK;
}

/* The embedded tokens into x [T, hid] (the embedding in *emb, borrowed from ck): scaled, GPT-2's
 * and CLIP's positions added, BLOOM's word_embeddings_layernorm. */
static int embed_full(const ref_cfg *c, ref_set *ck, const int64_t *tokens, int64_t T, float *x,
                      const float **emb, wt_errbuf *err)
{
	int rv = ref_getf(ck, emb, false, err, 2, ref_embed_rows(c), c->hid, 0,
	                  "model.embed_tokens.weight");
	if (rv != WT_OK)
		return rv;
	for (int64_t t = 0; t < T; t++)
		memcpy(x + t * c->hid, *emb + tokens[t] * c->hid, (size_t)c->hid * sizeof(float));
	ref_embed_scale(c, x, T * c->hid);
	if ((c->gpt2 && !c->jais_alibi && (rv = ref_gpt2_positions(c, ck, x, T, err))) ||
	    (c->clip && (rv = ref_clip_positions(c, ck, 0, true, x, T, err))))
		return rv;
	if (c->bloom) /* BLOOM's word_embeddings_layernorm */
		rv = ref_norm_of(c, ck, x, x, T, err, "model.embed_norm");
	return rv;
}

/* The encoders' own full passes (bert_rope.c, modernbert.c, bert.c). */
static int encoder_full(const ref_cfg *c, ref_set *ck, const int64_t *tokens, int64_t T,
                        ref_bufs *b, float *out, wt_errbuf *err)
{
	if (c->brope)
		return ref_bert_rope_full(c, ck, tokens, T, b, out, err);
	if (c->modernbert)
		return ref_modernbert_full(c, ck, tokens, T, b, out, err);
	return ref_bert_full(c, ck, tokens, T, b, out, err);
}

int ref_forward_full(const ref_cfg *c, ref_set *ck, const int64_t *tokens, size_t n_tok,
                     float *logits, int64_t *routes, wt_errbuf *err)
{
	if (ref_own_names(c, ck)) {
		ref_set r = {0}; /* the checkpoint under the names read below */
		int rv = ref_rename_own(c, ck, &r, true, err);
		if (rv == WT_OK)
			rv = ref_forward_full(c, &r, tokens, n_tok, logits, routes, err);
		ref_set_clear(&r);
		return rv;
	}
	if (c->opt) /* its own pass (opt.c) */
		return ref_opt_full(c, ck, tokens, n_tok, logits, err);
	if (c->whisper) /* its own pass (whisper.c) */
		return ref_whisper_full(c, ck, tokens, n_tok, logits, err);
	if (c->g3n) /* its own pass (gemma3n.c) */
		return ref_g3n_full(c, ck, tokens, n_tok, logits, err);
	ref_bufs b;
	int rv = ref_bufs_alloc(&b, c, n_tok, tokens, err);
	if (rv != WT_OK)
		return rv;
	int64_t T = (int64_t)n_tok;
	const float *emb;
	ref_solar sk = {{NULL, NULL}};
	if (c->kind == REF_BERT) {
		rv = encoder_full(c, ck, tokens, T, &b, logits, err);
		goto out;
	}
	if ((rv = embed_full(c, ck, tokens, T, b.x, &emb, err)))
		goto out;
	for (int64_t it = 0; it < c->L * ref_ouro_passes(c); it++) { /* Ouro: its loop steps */
		const float *pn = NULL;
		int64_t l = it % c->L;
		if (l == 0 && it > 0 && (rv = ref_ouro_step_norm(c, ck, b.x, T, err)))
			goto out;
		char m[160];
		if (ref_ml_cross(c, l)) /* Mllama's cross-attention layer: skipped on text */
			continue;
		if ((rv = ref_solar_skip(c, &sk, b.x, T * c->hid, l, err))) /* Solar's skips */
			goto out;
		/* Cohere's parallel block: the MLP reads attention's input (b.h, untouched by
		 * attn_full), x = (x + attn(h)) + mlp(h) as transformers sums it */
		/* GPT-NeoX's parallel residual: the MLP reads ln2 of the block's input x, kept in
		 * b.y before attention adds to x; x = (x + attn) + mlp, vLLM's and within float
		 * rounding transformers' mlp + attn + x */
		/* Arctic's residual layers: the MoE reads the layer's input too (arctic.c) */
		const bool par = c->neox_par || ref_arctic_res(c, l);
		if (par && (rv = ref_block_input(c, ck, b.y, b.x, T, l, ref_mlp_norm(c), err)))
			goto out;
		ref_cfg lc; /* DeciLM: the layer's own kv heads and MLP width (decilm.c) */
		const ref_cfg *cl = ref_dl_layer(c, l, &lc);
		if (!ref_nh_mlp(c, l) && ref_dl_attn(c, l) &&
		    (rv = attn_full(cl, ck, l, T, &b, err)))
			goto out;
		if (c->mamba_lm || (c->nh && !ref_nh_mlp(c, l)) || !ref_dl_ffn(c, l))
			continue; /* the mixer is the whole block; DeciLM's no-op ffn */
		if (par)
			memcpy(b.h, b.y, (size_t)(T * c->hid) * sizeof(float));
		if ((c->cohere == 0 && !par &&
		     (rv = ref_block_input(c, ck, b.h, b.x, T, l, ref_mlp_norm(c), err))) ||
		    (c->sandwich && (rv = ref_getf(ck, &pn, false, err, 1, c->hid, 0, 0,
		                                   "model.layers.%lld.%s.weight", (long long)l,
		                                   ref_post_norm(c, true)))))
			goto out;
		if (c->longcat && l % 2 == 0 && /* the shortcut MoE on the first MLP's input */
		    (rv = ref_lc_moe_full(c, ck, l, T, &b, routes ? routes + l * T * c->topk : NULL,
		                          err)))
			goto out;
		if (ref_layer_is_moe(c, l)) {
			rv = moe_full(c, ck, l, T, &b, routes ? routes + l * T * c->topk : NULL,
			              err);
		} else {
			snprintf(m, sizeof(m), "model.layers.%lld.%s", (long long)l,
			         ref_ffn_module(c));
			rv = mlp_full(c, ck, m, cl->I, T, b.h, b.acc, b.scratch, err);
		}
		if (rv == WT_OK && ref_arctic_res(c, l)) /* + residual_mlp(residual_layernorm(x)) */
			rv = ref_arctic_residual_full(c, ck, l, T, &b, err);
		if (rv != WT_OK)
			goto out;
		if (pn != NULL)
			ref_norm(c, b.acc, b.acc, pn, T, c->hid);
		ref_mm_resid(c, b.x, b.h, T * c->hid, l, true);
		ref_residual_add(c, b.x, b.acc, T * c->hid);
		if (c->longcat && l % 2 == 1)
			ref_residual_add(c, b.x, b.sc, T * c->hid);
	}
	if ((rv = ref_norm_of(c, ck, b.h, b.x, T, err, "%s", ref_final_norm(c))) == WT_OK)
		rv = head_full(c, ck, emb, b.h, T, logits, err);
out:
	ref_solar_free(&sk);
	ref_bufs_free(&b);
	return rv;
}
