/*
 * jamba.c — Jamba's Mamba (v1) mixer (transformers 4.57.1, modeling_jamba.py:
 * JambaMambaMixer.slow_forward without a cache), for the full path (the checkpoint) and the
 * sharded one (a tp rank) alike. The rest of the decoder is Llama's attention without
 * positions, a dense SwiGLU feed_forward or the softmax-top-k experts (cfg_jamba.c).
 *
 * Mixer, Im = mamba_expand * hid channels, state N, dt rank R, a conv of K taps:
 *   in_proj [2*Im, hid] (+ bias with mamba_proj_bias) gives [x (Im); z (Im)];
 *   x through conv1d [Im, 1, K] (+ bias with mamba_conv_bias; depthwise, causal), then
 *   hidden_act;
 *   x_proj [R + 2N, Im] gives [dt (R); B (N); C (N)], each through its RMSNorm
 *   (dt_layernorm, b_layernorm, c_layernorm; rms_norm_eps);
 *   dt = softplus(dt_proj(dt) + dt_proj.bias) [Im], A = -exp(A_log) [Im, N];
 *   per channel i the state h [N] (zero at first): h = exp(dt_i A_i) h + dt_i B x_i,
 *   y_i = h . C + D_i x_i; y times hidden_act(z); out_proj [hid, Im] (+ bias).
 *
 * A tp rank holds Im / tp channels (docs/format.md 2.7): its x and z rows of in_proj,
 * conv1d's channels, x_proj's columns, dt_proj's rows and bias, A_log's and D's rows,
 * out_proj's columns; the three norms whole. x_proj is row-parallel by its input columns,
 * so dt / B / C are the sum of the ranks' partial products (stage 1, ref_jb_in, adds a
 * rank's into xp), all-reduced before the norms; then each rank normalises the sum with
 * its own norm replicas, scans its channels and multiplies by its out_proj columns
 * (stage 2, ref_jb_out), and the caller all-reduces the partial outputs and adds
 * out_proj.bias once.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

#define MAMBA "model.layers.%lld.mamba."

/* torch.nn.functional.softplus (beta 1, threshold 20): x past the threshold as it is. */
static float softplusf(float x)
{
	return x > 20.0f ? x : log1pf(expf(x));
}

int ref_jb_in(const ref_cfg *c, ref_set *s, int64_t l, int64_t il, const float *h, int64_t T,
              float *xc, float *z, float *xp, wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t nxp = c->m_rank + 2 * c->m_state;
	const float *w, *b, *cw, *cb, *xw;
	int rv;
	if ((rv = ref_getf(s, &w, false, err, 2, 2 * il, c->hid, 0, MAMBA "in_proj.weight", L)) ||
	    (rv = ref_getf(s, &b, true, err, 1, 2 * il, 0, 0, MAMBA "in_proj.bias", L)) ||
	    (rv = ref_getf(s, &cw, false, err, 3, il, 1, c->m_conv, MAMBA "conv1d.weight", L)) ||
	    (rv = ref_getf(s, &cb, true, err, 1, il, 0, 0, MAMBA "conv1d.bias", L)) ||
	    (rv = ref_getf(s, &xw, false, err, 2, nxp, il, 0, MAMBA "x_proj.weight", L)))
		return rv;
	float *proj = malloc((size_t)(T * 2 * il + T * il + T * nxp) * sizeof(float));
	if (proj == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld Mamba mixer: out of memory", L);
	float *xin = proj + T * 2 * il, *part = xin + T * il;
	ref_linear(proj, h, w, b, T, c->hid, 2 * il);
	for (int64_t t = 0; t < T; t++) {
		memcpy(xin + t * il, proj + t * 2 * il, (size_t)il * sizeof(float));
		memcpy(z + t * il, proj + t * 2 * il + il, (size_t)il * sizeof(float));
	}
	ref_causal_conv1d(xin, cw, cb, T, il, c->m_conv, xc);
	ref_act_apply(xc, T * il, c->act);
	ref_linear(part, xc, xw, NULL, T, il, nxp);
	for (int64_t i = 0; i < T * nxp; i++)
		xp[i] += part[i];
	free(proj);
	return WT_OK;
}

/* x [n] times 1 / sqrt(mean(x^2) + eps), in place: Falcon-Mamba's rms_forward (no weight),
 * in ref_norm's float arithmetic. */
static void plain_rms(float *x, int64_t n, float eps)
{
	float ss = 0.0f;
	for (int64_t i = 0; i < n; i++)
		ss += x[i] * x[i];
	float inv = 1.0f / sqrtf(ss / (float)n + eps);
	for (int64_t i = 0; i < n; i++)
		x[i] = x[i] * inv;
}

/* The scan of il channels over T tokens into y [T, il]: xc the convolved x, dt [T, il]
 * after softplus, bc [T, 2N] the normalised B and C. The state in double. */
static void jb_scan(const ref_cfg *c, int64_t il, const float *a_log, const float *d,
                    const float *xc, const float *dt, const float *bc, int64_t T, float *y,
                    double *S)
{
	int64_t N = c->m_state;
	memset(S, 0, (size_t)(il * N) * sizeof(double));
	for (int64_t t = 0; t < T; t++) {
		const float *B = bc + t * 2 * N, *C = B + N;
		for (int64_t i = 0; i < il; i++) {
			float x = xc[t * il + i], dl = dt[t * il + i];
			double acc = 0.0, dx = (double)dl * (double)x;
			for (int64_t n = 0; n < N; n++) {
				float A = -expf(a_log[i * N + n]);
				double v = S[i * N + n] * exp((double)(A * dl)) + dx * (double)B[n];
				S[i * N + n] = v;
				acc += v * (double)C[n];
			}
			y[t * il + i] = (float)(acc + (double)d[i] * (double)x);
		}
	}
}

int ref_jb_out(const ref_cfg *c, ref_set *s, int64_t l, int64_t il, const float *xc, const float *z,
               const float *xp, int64_t T, float *out, wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t R = c->m_rank, N = c->m_state, nxp = R + 2 * N;
	const float *dn = NULL, *bn = NULL, *cn = NULL, *dw, *db, *al, *dd, *wo;
	int rv;
	bool norms = !c->mamba_lm; /* MambaMixer (Mamba): no dt / B / C norms */
	if ((norms &&
	     ((rv = ref_getf(s, &dn, false, err, 1, R, 0, 0, MAMBA "dt_layernorm.weight", L)) ||
	      (rv = ref_getf(s, &bn, false, err, 1, N, 0, 0, MAMBA "b_layernorm.weight", L)) ||
	      (rv = ref_getf(s, &cn, false, err, 1, N, 0, 0, MAMBA "c_layernorm.weight", L)))) ||
	    (rv = ref_getf(s, &dw, false, err, 2, il, R, 0, MAMBA "dt_proj.weight", L)) ||
	    (rv = ref_getf(s, &db, false, err, 1, il, 0, 0, MAMBA "dt_proj.bias", L)) ||
	    (rv = ref_getf(s, &al, false, err, 2, il, N, 0, MAMBA "A_log", L)) ||
	    (rv = ref_getf(s, &dd, false, err, 1, il, 0, 0, MAMBA "D", L)) ||
	    (rv = ref_getf(s, &wo, false, err, 2, c->hid, il, 0, MAMBA "out_proj.weight", L)))
		return rv;
	size_t n = (size_t)(T * R + T * 2 * N + 3 * T * il) * sizeof(float) +
	           (size_t)(il * N) * sizeof(double);
	float *dr = malloc(n);
	if (dr == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld Mamba scan: out of memory", L);
	float *bc = dr + T * R, *dt = bc + T * 2 * N, *y = dt + T * il, *g = y + T * il;
	double *S = (double *)(g + T * il);
	for (int64_t t = 0; t < T; t++) { /* the norms on the all-reduced dt / B / C */
		if (!norms) { /* Mamba: as they are; Falcon-Mamba: weightless RMSNorms */
			memcpy(dr + t * R, xp + t * nxp, (size_t)R * sizeof(float));
			memcpy(bc + t * 2 * N, xp + t * nxp + R, (size_t)(2 * N) * sizeof(float));
			if (c->m_plain_norm) {
				float e = (float)c->m_rms_eps;
				plain_rms(dr + t * R, R, e);
				plain_rms(bc + t * 2 * N, N, e);
				plain_rms(bc + t * 2 * N + N, N, e);
			}
			continue;
		}
		ref_norm(c, dr + t * R, xp + t * nxp, dn, 1, R);
		ref_norm(c, bc + t * 2 * N, xp + t * nxp + R, bn, 1, N);
		ref_norm(c, bc + t * 2 * N + N, xp + t * nxp + R + N, cn, 1, N);
	}
	ref_linear(dt, dr, dw, db, T, R, il);
	for (int64_t i = 0; i < T * il; i++)
		dt[i] = softplusf(dt[i]);
	jb_scan(c, il, al, dd, xc, dt, bc, T, y, S);
	memcpy(g, z, (size_t)(T * il) * sizeof(float));
	ref_act_apply(g, T * il, c->act);
	for (int64_t i = 0; i < T * il; i++)
		y[i] *= g[i];
	ref_linear(out, y, wo, NULL, T, il, c->hid);
	free(dr);
	return WT_OK;
}

int ref_jb_mixer_full(const ref_cfg *c, ref_set *s, int64_t l, const float *h, int64_t T,
                      float *out, wt_errbuf *err)
{
	int64_t im = c->m_inner, nxp = c->m_rank + 2 * c->m_state;
	const float *bo;
	int rv = ref_getf(s, &bo, true, err, 1, c->hid, 0, 0, MAMBA "out_proj.bias", (long long)l);
	if (rv != WT_OK)
		return rv;
	float *xc = calloc((size_t)(2 * T * im + T * nxp), sizeof(float));
	if (xc == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld Mamba mixer: out of memory",
		                 (long long)l);
	float *z = xc + T * im, *xp = z + T * im;
	if ((rv = ref_jb_in(c, s, l, im, h, T, xc, z, xp, err)) == WT_OK)
		rv = ref_jb_out(c, s, l, im, xc, z, xp, T, out, err);
	for (int64_t t = 0; rv == WT_OK && bo && t < T; t++)
		for (int64_t i = 0; i < c->hid; i++)
			out[t * c->hid + i] += bo[i];
	free(xc);
	return rv;
}
