/*
 * qwen3_next.c — Qwen3-Next's token mixers (transformers 4.57.1,
 * modeling_qwen3_next.py, its torch paths: torch_causal_conv1d_update's convolution,
 * torch_chunk_gated_delta_rule / torch_recurrent_gated_delta_rule, Qwen3NextRMSNormGated),
 * for the full path (the checkpoint) and the sharded one (a tp rank) alike. The rest of
 * the decoder is the common one: zero-centred RMSNorms (norm_off 1), Qwen2-MoE's MoE
 * block (softmax router, top-k renormalised with norm_topk_prob, the shared expert times
 * sigmoid(shared_expert_gate)) or a dense MLP.
 *
 * Gated full attention (Qwen3NextAttention), hid -> hid:
 *   q_proj [H * 2d, hid] gives per head [query (d); gate (d)]; k_proj, v_proj [KV*d, hid]
 *   (biases with attention_bias); q_norm / k_norm (1 + w) per head; rotate-half RoPE on
 *   the first rot_dim dims; causal softmax attention at 1/sqrt(d), GQA; the output times
 *   sigmoid(gate), then o_proj.
 *
 * Gated delta net (Qwen3NextGatedDeltaNet), Hk key heads of dk, Hv = r * Hk value heads
 * of dv, conv kernel K:
 *   in_proj_qkvz [Hk * (2dk + 2r dv), hid] gives per key head [q (dk); k (dk); v (r dv);
 *   z (r dv)], in_proj_ba [Hk * 2r, hid] per key head [b (r); a (r)]
 *   (fix_query_key_value_ordering): value head j of key head i is value head i * r + j;
 *   channels [q (all heads); k; v] go through conv1d [C, 1, K] (depthwise, causal:
 *   out[t] = sum_j w[j] x[t - K + 1 + j], zero before the first token), then SiLU;
 *   q and k l2-normalised per head (x / sqrt(sum x^2 + 1e-6)), q times 1/sqrt(dk), each
 *   value head taking its key head's q and k; beta = sigmoid(b), g = -exp(A_log) *
 *   softplus(a + dt_bias); per value head the state S [dk, dv] (zero at first):
 *       S *= exp(g_t);  delta = (v_t - S^T k_t) * beta_t;  S += k_t delta^T;  o_t = S^T q_t
 *   (the recurrence the chunked form computes); then RMSNormGated per value head,
 *   o / rms(o) * w * silu(z) (the weight not zero-centred), and out_proj [hid, Hv dv].
 *
 * A tp rank holds whole heads of both (docs/format.md 2.7): its qkv_proj [q_r with the
 * gates; k_r; v_r], o_proj's columns; whole key-head groups of in_proj_qkvz /
 * in_proj_ba, conv1d's [q_r; k_r; v_r] channels, A_log / dt_bias of its value heads,
 * out_proj's columns. Every step before out_proj / o_proj is per head, so a rank runs
 * the same code on its heads and the caller all-reduces the partial outputs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

#define LAYER "model.layers.%lld."

static float sigmoidf(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

static float siluf(float x)
{
	return x / (1.0f + expf(-x));
}

/* torch.nn.functional.softplus (beta 1, threshold 20): x past the threshold as it is. */
static float softplusf(float x)
{
	return x > 20.0f ? x : log1pf(expf(x));
}

/* The q (with its gates), k and v weights / optional biases of a gated attention layer:
 * the checkpoint's q_proj / k_proj / v_proj, or a rank's fused qkv_proj. */
typedef struct gqkv {
	const float *wq, *wk, *wv, *bq, *bk, *bv, *wo, *bo;
} gqkv;

static int gqkv_get(const ref_cfg *c, ref_set *s, int64_t l, const ref_q3n_part *p, gqkv *w,
                    wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t d = c->d, hid = c->hid, qd2 = p->Hl * 2 * d, kvd = p->KVl * d;
	int rv;
	memset(w, 0, sizeof(*w));
	if (p->ckpt) {
		if ((rv = ref_getf(s, &w->wq, false, err, 2, qd2, hid, 0,
		                   LAYER "self_attn.q_proj.weight", L)) ||
		    (rv = ref_getf(s, &w->wk, false, err, 2, kvd, hid, 0,
		                   LAYER "self_attn.k_proj.weight", L)) ||
		    (rv = ref_getf(s, &w->wv, false, err, 2, kvd, hid, 0,
		                   LAYER "self_attn.v_proj.weight", L)) ||
		    (rv = ref_getf(s, &w->bq, true, err, 1, qd2, 0, 0,
		                   LAYER "self_attn.q_proj.bias", L)) ||
		    (rv = ref_getf(s, &w->bk, true, err, 1, kvd, 0, 0,
		                   LAYER "self_attn.k_proj.bias", L)) ||
		    (rv = ref_getf(s, &w->bv, true, err, 1, kvd, 0, 0,
		                   LAYER "self_attn.v_proj.bias", L)) ||
		    (rv = ref_getf(s, &w->bo, true, err, 1, hid, 0, 0,
		                   LAYER "self_attn.o_proj.bias", L)))
			return rv;
	} else {
		const float *f, *fb;
		if ((rv = ref_getf(s, &f, false, err, 2, qd2 + 2 * kvd, hid, 0,
		                   LAYER "self_attn.qkv_proj.weight", L)) ||
		    (rv = ref_getf(s, &fb, true, err, 1, qd2 + 2 * kvd, 0, 0,
		                   LAYER "self_attn.qkv_proj.bias", L)))
			return rv;
		w->wq = f;
		w->wk = f + qd2 * hid;
		w->wv = f + (qd2 + kvd) * hid;
		w->bq = fb;
		w->bk = fb ? fb + qd2 : NULL;
		w->bv = fb ? fb + qd2 + kvd : NULL;
	}
	return ref_getf(s, &w->wo, false, err, 2, hid, p->Hl * d, 0,
	                LAYER "self_attn.o_proj.weight", L);
}

/* Qwen3NextAttention on the heads of p. */
static int gated_attn(const ref_cfg *c, ref_set *s, int64_t l, const ref_q3n_part *p,
                      const float *h, int64_t T, float *out, wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t d = c->d, Hl = p->Hl, KVl = p->KVl, qd = Hl * d, kvd = KVl * d;
	const float *qn = NULL, *kn = NULL;
	gqkv w;
	int64_t kv_of[REF_MAX_HEADS];
	int rv = gqkv_get(c, s, l, p, &w, err);
	if (rv == WT_OK && c->qk_norm &&
	    (rv = ref_getf(s, &qn, false, err, 1, d, 0, 0, LAYER "self_attn.q_norm.weight", L)) ==
	        WT_OK)
		rv = ref_getf(s, &kn, false, err, 1, d, 0, 0, LAYER "self_attn.k_norm.weight", L);
	if (rv != WT_OK)
		return rv;
	if (Hl > REF_MAX_HEADS)
		return wt_seterr(err, WT_EUNSUPPORTED, "%lld heads; the reference handles %d",
		                 (long long)Hl, REF_MAX_HEADS);
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
	float *qg = malloc((size_t)(T * (3 * qd + 2 * kvd + qd)) * sizeof(float));
	if (qg == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld attention: out of memory", L);
	float *q = qg + T * 2 * qd, *k = q + T * qd, *v = k + T * kvd, *att = v + T * kvd;
	ref_linear(qg, h, w.wq, w.bq, T, c->hid, 2 * qd);
	ref_linear(k, h, w.wk, w.bk, T, c->hid, kvd);
	ref_linear(v, h, w.wv, w.bv, T, c->hid, kvd);
	for (int64_t t = 0; t < T; t++) /* [query_h; gate_h] rows: the queries apart */
		for (int64_t j = 0; j < Hl; j++)
			memcpy(q + (t * Hl + j) * d, qg + (t * Hl + j) * 2 * d,
			       (size_t)d * sizeof(float));
	if (c->qk_norm) {
		ref_norm(c, q, q, qn, T * Hl, d);
		ref_norm(c, k, k, kn, T * KVl, d);
	}
	ref_rope_layer(c, l, q, T, Hl, qd);
	ref_rope_layer(c, l, k, T, KVl, kvd);
	double theta, factor;
	ref_attn_opt ao;
	ref_layer_attn(c, l, &theta, &factor, &ao);
	ref_attention(att, q, k, v, T, Hl, KVl, kv_of, d, &ao);
	for (int64_t t = 0; t < T; t++)
		for (int64_t j = 0; j < Hl; j++)
			for (int64_t i = 0; i < d; i++)
				att[(t * Hl + j) * d + i] *=
				    sigmoidf(qg[(t * Hl + j) * 2 * d + d + i]);
	ref_linear(out, att, w.wo, w.bo, T, qd, c->hid);
	free(qg);
	return WT_OK;
}

/* The gated delta net's weights for hk key heads. */
typedef struct gdn_w {
	const float *qkvz, *ba, *conv, *a_log, *dt_bias, *norm, *out;
} gdn_w;

static int gdn_get(const ref_cfg *c, ref_set *s, int64_t l, int64_t hk, gdn_w *w, wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t r = c->lin_hv / c->lin_hk, hv = hk * r, dk = c->lin_dk, dv = c->lin_dv;
	int64_t hid = c->hid, nc = 2 * hk * dk + hv * dv;
	int rv;
	if ((rv = ref_getf(s, &w->qkvz, false, err, 2, hk * (2 * dk + 2 * r * dv), hid, 0,
	                   LAYER "linear_attn.in_proj_qkvz.weight", L)) ||
	    (rv = ref_getf(s, &w->ba, false, err, 2, hk * 2 * r, hid, 0,
	                   LAYER "linear_attn.in_proj_ba.weight", L)) ||
	    (rv = ref_getf(s, &w->conv, false, err, 3, nc, 1, c->lin_kconv,
	                   LAYER "linear_attn.conv1d.weight", L)) ||
	    (rv = ref_getf(s, &w->a_log, false, err, 1, hv, 0, 0, LAYER "linear_attn.A_log", L)) ||
	    (rv = ref_getf(s, &w->dt_bias, false, err, 1, hv, 0, 0, LAYER "linear_attn.dt_bias",
	                   L)) ||
	    (rv = ref_getf(s, &w->norm, false, err, 1, dv, 0, 0, LAYER "linear_attn.norm.weight",
	                   L)))
		return rv;
	return ref_getf(s, &w->out, false, err, 2, hid, hv * dv, 0,
	                LAYER "linear_attn.out_proj.weight", L);
}

/* x[0..n) / sqrt(sum x^2 + 1e-6) (fla's l2norm, as transformers' l2norm) times scale. */
static void l2norm(float *y, const float *x, int64_t n, float scale)
{
	float ss = 0.0f;
	for (int64_t i = 0; i < n; i++)
		ss += x[i] * x[i];
	float inv = 1.0f / sqrtf(ss + 1e-6f);
	for (int64_t i = 0; i < n; i++)
		y[i] = x[i] * inv * scale;
}

/* Scratch of the gated delta net over T tokens. */
typedef struct gdn_buf {
	float *mix;      /* [T, nc] projected q / k / v channels, then convolved */
	float *conv;     /* [T, nc] */
	float *z;        /* [T, hv*dv] */
	float *beta, *g; /* [T, hv] */
	float *core;     /* [T, hv*dv] */
	float *qkvz, *ba;
	float *state, *qh, *kh, *kv; /* [dk*dv], [dk], [dk], [dv] */
} gdn_buf;

/* in_proj_qkvz / in_proj_ba rows of each key head into the conv channels [q; k; v], z,
 * beta and the decay g (fix_query_key_value_ordering, then the gates). */
static void gdn_split(const ref_cfg *c, const gdn_w *w, int64_t hk, int64_t T, gdn_buf *b)
{
	int64_t r = c->lin_hv / c->lin_hk, hv = hk * r, dk = c->lin_dk, dv = c->lin_dv;
	int64_t grp = 2 * dk + 2 * r * dv, nc = 2 * hk * dk + hv * dv;
	for (int64_t t = 0; t < T; t++) {
		const float *pz = b->qkvz + t * hk * grp, *pb = b->ba + t * hk * 2 * r;
		float *m = b->mix + t * nc;
		for (int64_t i = 0; i < hk; i++) {
			const float *gq = pz + i * grp;
			memcpy(m + i * dk, gq, (size_t)dk * sizeof(float));
			memcpy(m + hk * dk + i * dk, gq + dk, (size_t)dk * sizeof(float));
			memcpy(m + 2 * hk * dk + i * r * dv, gq + 2 * dk,
			       (size_t)(r * dv) * sizeof(float));
			memcpy(b->z + t * hv * dv + i * r * dv, gq + 2 * dk + r * dv,
			       (size_t)(r * dv) * sizeof(float));
			for (int64_t j = 0; j < r; j++) {
				int64_t vh = i * r + j;
				float bb = pb[i * 2 * r + j], a = pb[i * 2 * r + r + j];
				b->beta[t * hv + vh] = sigmoidf(bb);
				b->g[t * hv + vh] =
				    -expf(w->a_log[vh]) * softplusf(a + w->dt_bias[vh]);
			}
		}
	}
}

/* The causal depthwise conv1d of K taps over T tokens of nc channels (no bias), then SiLU. */
static void gdn_conv(const float *x, const float *wc, int64_t T, int64_t nc, int64_t K, float *y)
{
	ref_causal_conv1d(x, wc, NULL, T, nc, K, y);
	for (int64_t i = 0; i < T * nc; i++)
		y[i] = siluf(y[i]);
}

/* The gated delta rule of value head vh over T tokens into core. */
static void gdn_rule(const ref_cfg *c, int64_t hk, int64_t vh, int64_t T, gdn_buf *b)
{
	int64_t r = c->lin_hv / c->lin_hk, hv = hk * r, dk = c->lin_dk, dv = c->lin_dv;
	int64_t nc = 2 * hk * dk + hv * dv, kh = vh / r;
	float *S = b->state;
	memset(S, 0, (size_t)(dk * dv) * sizeof(float));
	for (int64_t t = 0; t < T; t++) {
		const float *cv = b->conv + t * nc;
		l2norm(b->qh, cv + kh * dk, dk, 1.0f / sqrtf((float)dk));
		l2norm(b->kh, cv + hk * dk + kh * dk, dk, 1.0f);
		const float *v = cv + 2 * hk * dk + vh * dv;
		float decay = expf(b->g[t * hv + vh]), beta = b->beta[t * hv + vh];
		for (int64_t i = 0; i < dk * dv; i++)
			S[i] *= decay;
		for (int64_t j = 0; j < dv; j++) {
			float mem = 0.0f;
			for (int64_t i = 0; i < dk; i++)
				mem += S[i * dv + j] * b->kh[i];
			b->kv[j] = (v[j] - mem) * beta;
		}
		for (int64_t i = 0; i < dk; i++)
			for (int64_t j = 0; j < dv; j++)
				S[i * dv + j] += b->kh[i] * b->kv[j];
		float *o = b->core + t * hv * dv + vh * dv;
		for (int64_t j = 0; j < dv; j++) {
			float acc = 0.0f;
			for (int64_t i = 0; i < dk; i++)
				acc += S[i * dv + j] * b->qh[i];
			o[j] = acc;
		}
	}
}

/* Qwen3NextGatedDeltaNet on the hk key heads of p. */
static int gated_delta_net(const ref_cfg *c, ref_set *s, int64_t l, const ref_q3n_part *p,
                           const float *h, int64_t T, float *out, wt_errbuf *err)
{
	int64_t hk = p->hk, r = c->lin_hv / c->lin_hk, hv = hk * r, dk = c->lin_dk, dv = c->lin_dv;
	int64_t grp = 2 * dk + 2 * r * dv, nc = 2 * hk * dk + hv * dv;
	gdn_w w;
	int rv = gdn_get(c, s, l, hk, &w, err);
	if (rv != WT_OK)
		return rv;
	size_t n = (size_t)(2 * T * nc + 2 * T * hv * dv + 2 * T * hv + T * hk * grp +
	                    T * hk * 2 * r + dk * dv + 2 * dk + dv);
	float *all = malloc(n * sizeof(float));
	if (all == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld gated delta net: out of memory",
		                 (long long)l);
	gdn_buf b = {.mix = all};
	b.conv = b.mix + T * nc;
	b.z = b.conv + T * nc;
	b.core = b.z + T * hv * dv;
	b.beta = b.core + T * hv * dv;
	b.g = b.beta + T * hv;
	b.qkvz = b.g + T * hv;
	b.ba = b.qkvz + T * hk * grp;
	b.state = b.ba + T * hk * 2 * r;
	b.qh = b.state + dk * dv;
	b.kh = b.qh + dk;
	b.kv = b.kh + dk;
	ref_linear(b.qkvz, h, w.qkvz, NULL, T, c->hid, hk * grp);
	ref_linear(b.ba, h, w.ba, NULL, T, c->hid, hk * 2 * r);
	gdn_split(c, &w, hk, T, &b);
	gdn_conv(b.mix, w.conv, T, nc, c->lin_kconv, b.conv);
	for (int64_t vh = 0; vh < hv; vh++)
		gdn_rule(c, hk, vh, T, &b);
	/* Qwen3NextRMSNormGated per value head: the weight as it is, times silu(z) */
	ref_rmsnorm(b.core, b.core, w.norm, T * hv, dv, (float)c->eps);
	for (int64_t i = 0; i < T * hv * dv; i++)
		b.core[i] *= siluf(b.z[i]);
	ref_linear(out, b.core, w.out, NULL, T, hv * dv, c->hid);
	free(all);
	return WT_OK;
}

int ref_q3n_mixer(const ref_cfg *c, ref_set *s, int64_t l, const ref_q3n_part *p, const float *h,
                  int64_t T, float *out, wt_errbuf *err)
{
	if (ref_q3n_linear(c, l))
		return gated_delta_net(c, s, l, p, h, T, out, err);
	return gated_attn(c, s, l, p, h, T, out, err);
}
