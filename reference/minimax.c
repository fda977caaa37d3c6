/*
 * minimax.c — MiniMax's lightning attention (transformers 4.57.1, modeling_minimax.py:
 * MiniMaxLightningAttention without a cache), for the full path (the checkpoint) and the
 * sharded one (a tp rank) alike. The softmax-attention layers are Mixtral's, the MoE
 * Mixtral's; the decoder's residuals are x = alpha * norm(x) + beta * branch
 * (ref_mm_resid).
 *
 * Lightning attention, H heads of d:
 *   qkv = silu(qkv_proj(h)) [T, H*3d], per head [q; k; v] (d each);
 *   head g decays at s_g = (1 / 2^(8/H))^(g+1) * (1 - l / (L - 1 + 1e-5) + 1e-5);
 *   S_t = exp(-s_g) S_{t-1} + k_t^T v_t (S_0 = 0, [d, d]), o_t = q_t S_t — what the blocked
 *   form (intra-block Q K^T * exp(-s (i - j)) for i >= j, plus the decayed inter-block
 *   state) computes on one sequence;
 *   y = RMSNorm(o) over all H*d channels (eps 1e-6: MiniMaxRMSNorm's default, the layer
 *   builds it without rms_norm_eps) times sigmoid(output_gate(h)); out_proj(y).
 *
 * A tp rank holds whole heads (qkv_proj and output_gate rows, norm channels, out_proj
 * columns); the norm's mean square spans every head, so the sharded pass first sums each
 * rank's squares (ss) and then runs every rank with the total (vLLM's
 * MiniMaxText01RMSNormTP all-reduces the variance), all-reducing after out_proj.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

#define LAYER   "model.layers.%lld.self_attn."
#define MM_NEPS 1e-6

int ref_mm_lightning(const ref_cfg *c, ref_set *s, int64_t l, const ref_mm_part *p, const float *h,
                     int64_t T, float *ss, const float *ms, float *out, wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t d = c->d, hid = c->hid, Hl = p->Hl, n = Hl * d;
	const float *wqkv, *wg, *wn, *wo;
	int rv;
	if ((rv = ref_getf(s, &wqkv, false, err, 2, 3 * n, hid, 0, LAYER "qkv_proj.weight", L)) ||
	    (rv = ref_getf(s, &wg, false, err, 2, n, hid, 0, LAYER "output_gate.weight", L)) ||
	    (rv = ref_getf(s, &wn, false, err, 1, n, 0, 0, LAYER "norm.weight", L)) ||
	    (rv = ref_getf(s, &wo, false, err, 2, hid, n, 0, LAYER "out_proj.weight", L)))
		return rv;
	float *qkv = malloc((size_t)(T * 5 * n + d * d) * sizeof(float));
	if (qkv == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld lightning attention: out of memory",
		                 L);
	float *o = qkv + T * 3 * n, *g = o + T * n, *S = g + T * n;
	ref_linear(qkv, h, wqkv, NULL, T, hid, 3 * n);
	for (int64_t i = 0; i < T * 3 * n; i++)
		qkv[i] = qkv[i] / (1.0f + expf(-qkv[i]));
	double base = 1.0 / pow(2.0, 8.0 / (double)c->H);
	double factor = 1.0 - (double)l / ((double)(c->L - 1) + 1e-5) + 1e-5;
	for (int64_t j = 0; j < Hl; j++) {
		/* transformers' float32 slope_rate, exp(-slope) as torch computes it */
		float sl = (float)pow(base, (double)(p->q0 + j + 1)) * (float)factor;
		float dec = expf(-sl);
		memset(S, 0, (size_t)(d * d) * sizeof(float));
		for (int64_t t = 0; t < T; t++) {
			const float *q = qkv + t * 3 * n + j * 3 * d, *k = q + d, *v = k + d;
			for (int64_t a = 0; a < d; a++)
				for (int64_t b = 0; b < d; b++)
					S[a * d + b] = dec * S[a * d + b] + k[a] * v[b];
			float *y = o + t * n + j * d;
			for (int64_t b = 0; b < d; b++) {
				double acc = 0.0;
				for (int64_t a = 0; a < d; a++)
					acc += (double)q[a] * S[a * d + b];
				y[b] = (float)acc;
			}
		}
	}
	if (ss != NULL) {
		for (int64_t t = 0; t < T; t++) {
			double acc = 0.0;
			for (int64_t i = 0; i < n; i++)
				acc += (double)o[t * n + i] * o[t * n + i];
			ss[t] += (float)acc;
		}
		free(qkv);
		return WT_OK;
	}
	ref_linear(g, h, wg, NULL, T, hid, n);
	for (int64_t t = 0; t < T; t++) {
		/* the sum of squares rounded to float and divided as the sharded pass does, so
		 * that TP 1 is exact */
		float m;
		if (ms != NULL) {
			m = ms[t];
		} else {
			double acc = 0.0;
			for (int64_t i = 0; i < n; i++)
				acc += (double)o[t * n + i] * o[t * n + i];
			m = (float)acc / (float)n;
		}
		float r = (float)(1.0 / sqrt((double)m + MM_NEPS));
		for (int64_t i = 0; i < n; i++) {
			float gt = 1.0f / (1.0f + expf(-g[t * n + i]));
			o[t * n + i] = gt * (wn[i] * (o[t * n + i] * r));
		}
	}
	ref_linear(out, o, wo, NULL, T, n, hid);
	free(qkv);
	return WT_OK;
}
