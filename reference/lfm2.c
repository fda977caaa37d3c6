/*
 * lfm2.c — LFM2's token mixers (transformers 4.57.1, modeling_lfm2.py: Lfm2ShortConv's
 * slow_forward, Lfm2Attention), for the full path (the checkpoint) and the sharded one
 * (a tp rank) alike. The rest of the decoder is the common one: plain RMSNorms
 * (operator_norm before the mixer, ffn_norm before the SwiGLU feed_forward w2(silu(w1 h) *
 * w3 h), model.embedding_norm after the last layer), residuals around both blocks.
 *
 * Short conv (Lfm2ShortConv), hid channels, K = conv_L_cache taps:
 *   BCx = in_proj(h) [T, 3*hid] gives [B; C; x] (chunk(3) of the channels); the causal
 *   depthwise conv1d of B * x (out[t] = sum_j w[j] (B*x)[t - K + 1 + j], zero before the
 *   first token, + conv.bias with conv_bias); y = C * conv; out_proj(y). No activation.
 *
 * Attention (Lfm2Attention): q/k/v [H*d | KV*d, hid] without biases; q_layernorm /
 * k_layernorm, plain RMSNorms per head of d; rotate-half RoPE on the whole head; causal
 * softmax attention at 1/sqrt(d), GQA; out_proj [hid, H*d].
 *
 * A tp rank holds (docs/format.md 2.7) short_conv.in_proj [B_r; C_r; x_r] (hid / T rows
 * each), short_conv.conv's channels and out_proj's columns; the fused qkv_proj of its heads
 * and out_proj's columns. Every step before out_proj is per channel or per head, so a rank
 * runs the same code on its part and the caller all-reduces the partial outputs.
 */
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

#define LAYER "model.layers.%lld."

/* Lfm2ShortConv on the ch channels of p. */
static int short_conv(const ref_cfg *c, ref_set *s, int64_t l, const ref_lfm2_part *p,
                      const float *h, int64_t T, float *out, wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t n = p->ch, hid = c->hid, K = c->lfm2_kconv;
	const char *m = p->ckpt ? "conv" : "short_conv";
	const float *win, *wc, *wout, *bin = NULL, *bc = NULL, *bout = NULL;
	int rv;
	if ((rv = ref_getf(s, &win, false, err, 2, 3 * n, hid, 0, LAYER "%s.in_proj.weight", L,
	                   m)) ||
	    (rv = ref_getf(s, &wc, false, err, 3, n, 1, K, LAYER "%s.conv.weight", L, m)) ||
	    (rv = ref_getf(s, &wout, false, err, 2, hid, n, 0, LAYER "%s.out_proj.weight", L, m)))
		return rv;
	if (c->lfm2_conv_bias &&
	    ((rv = ref_getf(s, &bin, false, err, 1, 3 * n, 0, 0, LAYER "%s.in_proj.bias", L, m)) ||
	     (rv = ref_getf(s, &bc, false, err, 1, n, 0, 0, LAYER "%s.conv.bias", L, m)) ||
	     (p->out_bias &&
	      (rv = ref_getf(s, &bout, false, err, 1, hid, 0, 0, LAYER "%s.out_proj.bias", L, m)))))
		return rv;
	float *bcx = malloc((size_t)(T * 5 * n) * sizeof(float));
	if (bcx == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld short conv: out of memory", L);
	float *bx = bcx + T * 3 * n, *y = bx + T * n;
	ref_linear(bcx, h, win, bin, T, hid, 3 * n);
	for (int64_t t = 0; t < T; t++)
		for (int64_t i = 0; i < n; i++)
			bx[t * n + i] = bcx[t * 3 * n + i] * bcx[t * 3 * n + 2 * n + i];
	ref_causal_conv1d(bx, wc, bc, T, n, K, y);
	for (int64_t t = 0; t < T; t++)
		for (int64_t i = 0; i < n; i++)
			y[t * n + i] *= bcx[t * 3 * n + n + i];
	ref_linear(out, y, wout, bout, T, n, hid);
	free(bcx);
	return WT_OK;
}

/* Lfm2Attention on the heads of p. */
static int attention(const ref_cfg *c, ref_set *s, int64_t l, const ref_lfm2_part *p,
                     const float *h, int64_t T, float *out, wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t d = c->d, hid = c->hid, Hl = p->Hl, KVl = p->KVl, qd = Hl * d, kvd = KVl * d;
	const float *wq, *wk, *wv, *wo, *qn, *kn;
	int rv;
	if (p->ckpt) {
		if ((rv = ref_getf(s, &wq, false, err, 2, qd, hid, 0,
		                   LAYER "self_attn.q_proj.weight", L)) ||
		    (rv = ref_getf(s, &wk, false, err, 2, kvd, hid, 0,
		                   LAYER "self_attn.k_proj.weight", L)) ||
		    (rv = ref_getf(s, &wv, false, err, 2, kvd, hid, 0,
		                   LAYER "self_attn.v_proj.weight", L)))
			return rv;
	} else {
		const float *f;
		if ((rv = ref_getf(s, &f, false, err, 2, qd + 2 * kvd, hid, 0,
		                   LAYER "self_attn.qkv_proj.weight", L)))
			return rv;
		wq = f;
		wk = f + qd * hid;
		wv = f + (qd + kvd) * hid;
	}
	if ((rv = ref_getf(s, &wo, false, err, 2, hid, qd, 0, LAYER "self_attn.out_proj.weight",
	                   L)) ||
	    (rv = ref_getf(s, &qn, false, err, 1, d, 0, 0, LAYER "self_attn.q_layernorm.weight",
	                   L)) ||
	    (rv =
	         ref_getf(s, &kn, false, err, 1, d, 0, 0, LAYER "self_attn.k_layernorm.weight", L)))
		return rv;
	if (Hl > REF_MAX_HEADS)
		return wt_seterr(err, WT_EUNSUPPORTED, "%lld heads; the reference handles %d",
		                 (long long)Hl, REF_MAX_HEADS);
	int64_t kv_of[REF_MAX_HEADS];
	for (int64_t j = 0; j < Hl; j++) {
		int64_t g = (p->q0 + j) / (c->H / c->KV);
		kv_of[j] = g - p->kv0;
		if (kv_of[j] < 0 || kv_of[j] >= KVl)
			return wt_seterr(err, WT_ELAYOUT,
			                 "layer %lld: head %lld needs kv head %lld, not among the "
			                 "%lld held from %lld",
			                 L, (long long)(p->q0 + j), (long long)g, (long long)KVl,
			                 (long long)p->kv0);
	}
	float *q = malloc((size_t)(T * (2 * qd + 2 * kvd)) * sizeof(float));
	if (q == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld attention: out of memory", L);
	float *k = q + T * qd, *v = k + T * kvd, *att = v + T * kvd;
	ref_linear(q, h, wq, NULL, T, hid, qd);
	ref_linear(k, h, wk, NULL, T, hid, kvd);
	ref_linear(v, h, wv, NULL, T, hid, kvd);
	ref_norm(c, q, q, qn, T * Hl, d);
	ref_norm(c, k, k, kn, T * KVl, d);
	ref_rope_layer(c, l, q, T, Hl, qd);
	ref_rope_layer(c, l, k, T, KVl, kvd);
	double theta, factor;
	ref_attn_opt ao;
	ref_layer_attn(c, l, &theta, &factor, &ao);
	ref_attention(att, q, k, v, T, Hl, KVl, kv_of, d, &ao);
	ref_linear(out, att, wo, NULL, T, qd, hid);
	free(q);
	return WT_OK;
}

int ref_lfm2_mixer(const ref_cfg *c, ref_set *s, int64_t l, const ref_lfm2_part *p, const float *h,
                   int64_t T, float *out, wt_errbuf *err)
{
	if (ref_lfm2_conv(c, l))
		return short_conv(c, s, l, p, h, T, out, err);
	return attention(c, s, l, p, h, T, out, err);
}
