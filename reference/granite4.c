/*
 * granite4.c — Granite 4.0's Mamba2 mixer (transformers 4.57.1,
 * modeling_granitemoehybrid.py: GraniteMoeHybridMambaLayer.torch_forward without a cache,
 * GraniteMoeHybridRMSNormGated), for the full path (the checkpoint) and the sharded one (a
 * tp rank) alike. The rest of the decoder is Granite's (cfg_fam.c: the multipliers),
 * Llama's attention on the attention layers (RoPE only with position_embedding_type
 * "rope"), GraniteMoE's router and stacked experts plus the ungated shared MLP.
 *
 * Mixer, Hm heads of dh (Im = Hm * dh = mamba_expand * hid), G groups of state N, a conv
 * of K taps:
 *   in_proj [2*Im + 2*G*N + Hm, hid] (+ bias) gives [z (Im); xBC (Im + 2*G*N); dt (Hm)];
 *   xBC through conv1d [Im + 2*G*N, 1, K] (+ bias; depthwise, causal), then hidden_act;
 *   split [x (Im); B (G*N); C (G*N)], head j of group j / (Hm / G);
 *   dt = softplus(dt + dt_bias) (time_step_limit (0, inf): no clamp), A = -exp(A_log);
 *   per head the state S [dh, N] (zero at first): S = exp(dt_t A) S + dt_t x_t B_t^T,
 *   y_t = S C_t + D x_t (the recurrence torch_forward's chunked scan computes);
 *   the gated norm over all Im channels: g = y * silu(z), g / sqrt(mean(g^2) + eps) * w;
 *   out_proj [hid, Im] (+ bias).
 *
 * A tp rank holds whole heads (docs/format.md 2.7): its z / x / dt rows and the B / C rows
 * of its groups (the whole one group on every rank when tp does not divide G), conv1d's
 * channels alike, A_log / D / dt_bias / the norm's weight of its heads, out_proj's columns.
 * Everything up to the gated norm is per head, so a rank runs the same code on its heads
 * (stage 1, ref_g4_scan); the norm's mean square needs every rank's sum of squares (an
 * all-reduce, as vLLM's Mixer2RMSNormGated does for one group), then each rank normalises
 * its channels and multiplies by its out_proj columns (stage 2, ref_g4_out), and the
 * caller all-reduces the partial outputs.
 *
 * Falcon-H1 (c->fh1; modeling_falcon_h1.py FalconH1Mixer.torch_forward): the width is
 * mamba_d_ssm, in_proj reads ssm_in_multiplier * h and its rows are times the mup_vector
 * (ssm_multipliers on z / x / B / C / dt), the gated norm runs per mamba_n_groups group of
 * channels (a rank adds its sums of squares to its channels' groups) and only with
 * mamba_rms_norm; with mamba_norm_before_gate the mean square is the scan output's (the
 * gate, a per-channel factor, is applied before the norm all the same); the output is times
 * ssm_out_multiplier.
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

static float siluf(float x)
{
	return x / (1.0f + expf(-x));
}

/* The mixer's weights held by set s for the heads and groups of p. */
typedef struct g4_w {
	const float *in, *in_b, *conv, *conv_b, *a_log, *d, *dt_bias;
} g4_w;

static int g4_get(const ref_cfg *c, ref_set *s, int64_t l, const ref_g4_part *p, g4_w *w,
                  wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t il = p->hl * c->m_dh, gn = p->gl * c->m_state, nc = il + 2 * gn;
	int64_t rows = il + nc + p->hl;
	int rv;
	if ((rv = ref_getf(s, &w->in, false, err, 2, rows, c->hid, 0, MAMBA "in_proj.weight", L)) ||
	    (rv = ref_getf(s, &w->in_b, true, err, 1, rows, 0, 0, MAMBA "in_proj.bias", L)) ||
	    (rv = ref_getf(s, &w->conv, false, err, 3, nc, 1, c->m_conv, MAMBA "conv1d.weight",
	                   L)) ||
	    (rv = ref_getf(s, &w->conv_b, true, err, 1, nc, 0, 0, MAMBA "conv1d.bias", L)) ||
	    (rv = ref_getf(s, &w->a_log, false, err, 1, p->hl, 0, 0, MAMBA "A_log", L)) ||
	    (rv = ref_getf(s, &w->d, false, err, 1, p->hl, 0, 0, MAMBA "D", L)))
		return rv;
	return ref_getf(s, &w->dt_bias, false, err, 1, p->hl, 0, 0, MAMBA "dt_bias", L);
}

/* The scan of local head j over T tokens into y (the head's dh columns of rows of il):
 * xbc [T, nc] the convolved channels, dt [T, hl] after softplus. The state in double. */
static void g4_head_scan(const ref_cfg *c, const ref_g4_part *p, const g4_w *w, int64_t j,
                         int64_t gi, const float *xbc, const float *dt, int64_t T, float *y,
                         double *S)
{
	int64_t dh = c->m_dh, N = c->m_state, il = p->hl * dh, nc = il + 2 * p->gl * N;
	float A = -expf(w->a_log[j]);
	memset(S, 0, (size_t)(dh * N) * sizeof(double));
	for (int64_t t = 0; t < T; t++) {
		const float *x = xbc + t * nc + j * dh, *B = xbc + t * nc + il + gi * N;
		const float *C = xbc + t * nc + il + p->gl * N + gi * N;
		float d = dt[t * p->hl + j];
		double dA = exp((double)(d * A));
		for (int64_t q = 0; q < dh; q++) {
			double acc = 0.0, dx = (double)d * (double)x[q];
			for (int64_t n = 0; n < N; n++) {
				double v = S[q * N + n] * dA + dx * (double)B[n];
				S[q * N + n] = v;
				acc += v * (double)C[n];
			}
			y[t * il + j * dh + q] = (float)(acc + (double)w->d[j] * (double)x[q]);
		}
	}
}

/* Falcon-H1: proj (in_proj's rows of p without the bias) times ssm_in_multiplier, plus
 * the bias, times mup_vector's factor of each row: z, x (the heads' channels), B, C (the
 * groups'), dt (the heads). */
static void fh1_mup(const ref_cfg *c, const ref_g4_part *p, float *proj, const float *bias,
                    int64_t T, int64_t rows)
{
	int64_t il = p->hl * c->m_dh, gn = p->gl * c->m_state;
	int64_t end[5] = {il, 2 * il, 2 * il + gn, 2 * il + 2 * gn, rows};
	for (int64_t t = 0; t < T; t++)
		for (int64_t r = 0, k = 0; r < rows; r++) {
			while (r >= end[k])
				k++;
			float v = proj[t * rows + r] * c->fh1_ssm_in + (bias ? bias[r] : 0.0f);
			proj[t * rows + r] = v * c->fh1_mup[k];
		}
}

int ref_g4_scan(const ref_cfg *c, ref_set *s, int64_t l, const ref_g4_part *p, const float *h,
                int64_t T, float *y, float *ssq, wt_errbuf *err)
{
	int64_t dh = c->m_dh, N = c->m_state, il = p->hl * dh, nc = il + 2 * p->gl * N;
	int64_t rows = il + nc + p->hl, per = c->m_heads / c->m_groups;
	g4_w w;
	int rv = g4_get(c, s, l, p, &w, err);
	if (rv != WT_OK)
		return rv;
	for (int64_t j = 0; j < p->hl; j++) {
		int64_t gi = (p->h0 + j) / per - p->g0;
		if (gi < 0 || gi >= p->gl)
			return wt_seterr(
			    err, WT_ELAYOUT,
			    "layer %lld: Mamba head %lld needs group %lld, not among the "
			    "%lld held from %lld",
			    (long long)l, (long long)(p->h0 + j), (long long)(gi + p->g0),
			    (long long)p->gl, (long long)p->g0);
	}
	size_t n = (size_t)(T * rows + 2 * T * nc + T * p->hl) * sizeof(float) +
	           (size_t)(dh * N) * sizeof(double);
	float *proj = malloc(n);
	if (proj == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld Mamba mixer: out of memory",
		                 (long long)l);
	float *xin = proj + T * rows, *xbc = xin + T * nc, *dt = xbc + T * nc;
	double *S = (double *)(dt + T * p->hl);
	ref_linear(proj, h, w.in, c->fh1 ? NULL : w.in_b, T, c->hid, rows);
	if (c->fh1) /* Falcon-H1: in_proj(h * ssm_in) * mup_vector */
		fh1_mup(c, p, proj, w.in_b, T, rows);
	for (int64_t t = 0; t < T; t++) {
		memcpy(xin + t * nc, proj + t * rows + il, (size_t)nc * sizeof(float));
		for (int64_t j = 0; j < p->hl; j++)
			dt[t * p->hl + j] = softplusf(proj[t * rows + il + nc + j] + w.dt_bias[j]);
	}
	ref_causal_conv1d(xin, w.conv, w.conv_b, T, nc, c->m_conv, xbc);
	/* Zamba2's act is its MLP's gelu, Nemotron-H's its MLP's relu2: the mixer runs silu */
	ref_act_apply(xbc, T * nc, c->zamba2 || c->nh ? REF_ACT_SILU : c->act);
	for (int64_t j = 0; j < p->hl; j++)
		g4_head_scan(c, p, &w, j, (p->h0 + j) / per - p->g0, xbc, dt, T, y, S);
	/* GraniteMoeHybridRMSNormGated: the scan output times silu(z) first; Falcon-H1's
	 * norm_before_gate: the mean square of the scan output, the gate a factor of the
	 * normalised output all the same (y * silu(z) * w / rms(y)) */
	int64_t ng = ref_g4_norm_groups(c), gw = c->m_heads * dh / ng, c0 = p->h0 * dh;
	bool before = c->fh1 && c->m_norm_before_gate;
	for (int64_t t = 0; t < T; t++) {
		float acc[REF_G4_MAX_NORM_GROUPS] = {0};
		for (int64_t i = 0; i < il; i++) {
			float v = y[t * il + i], g = v * siluf(proj[t * rows + i]);
			y[t * il + i] = g;
			acc[(c0 + i) / gw] += before ? v * v : g * g;
		}
		for (int64_t k = c0 / gw; k <= (c0 + il - 1) / gw; k++)
			ssq[t * ng + k] += acc[k];
	}
	free(proj);
	return WT_OK;
}

int ref_g4_out(const ref_cfg *c, ref_set *s, int64_t l, const ref_g4_part *p, const float *y,
               const float *ms, int64_t T, float *out, wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t il = p->hl * c->m_dh;
	const float *nw, *wo;
	int rv;
	if ((rv = ref_getf(s, &wo, false, err, 2, c->hid, il, 0, MAMBA "out_proj.weight", L)))
		return rv;
	if (c->fh1 && !c->m_rms_norm) { /* Falcon-H1 without the norm: y * silu(z) */
		ref_linear(out, y, wo, NULL, T, il, c->hid);
		return WT_OK;
	}
	if ((rv = ref_getf(s, &nw, false, err, 1, il, 0, 0, MAMBA "norm.weight", L)))
		return rv;
	float *yn = malloc((size_t)(T * il) * sizeof(float));
	if (yn == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld Mamba norm: out of memory", L);
	int64_t ng = ref_g4_norm_groups(c), gw = c->m_heads * c->m_dh / ng, c0 = p->h0 * c->m_dh;
	for (int64_t t = 0; t < T; t++)
		for (int64_t i = 0; i < il; i++) {
			float inv = 1.0f / sqrtf(ms[t * ng + (c0 + i) / gw] + (float)c->eps);
			yn[t * il + i] = nw[i] * (y[t * il + i] * inv);
		}
	ref_linear(out, yn, wo, NULL, T, il, c->hid);
	free(yn);
	return WT_OK;
}

int ref_g4_mixer_full(const ref_cfg *c, ref_set *s, int64_t l, const float *h, int64_t T,
                      float *out, wt_errbuf *err)
{
	const ref_g4_part p = {.ckpt = true, .h0 = 0, .hl = c->m_heads, .g0 = 0, .gl = c->m_groups};
	int64_t im = c->m_heads * c->m_dh;
	float ms[REF_MAX_TOKENS * REF_G4_MAX_NORM_GROUPS] = {0};
	int64_t ng = ref_g4_norm_groups(c);
	const float *bo;
	int rv = ref_getf(s, &bo, true, err, 1, c->hid, 0, 0, MAMBA "out_proj.bias", (long long)l);
	if (rv != WT_OK)
		return rv;
	float *y = malloc((size_t)(T * im) * sizeof(float));
	if (y == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld Mamba mixer: out of memory",
		                 (long long)l);
	if ((rv = ref_g4_scan(c, s, l, &p, h, T, y, ms, err)) == WT_OK) {
		for (int64_t t = 0; t < T * ng; t++)
			ms[t] /= (float)(im / ng);
		rv = ref_g4_out(c, s, l, &p, y, ms, T, out, err);
	}
	for (int64_t t = 0; rv == WT_OK && bo && t < T; t++)
		for (int64_t i = 0; i < c->hid; i++)
			out[t * c->hid + i] += bo[i];
	for (int64_t i = 0; rv == WT_OK && c->fh1 && i < T * c->hid; i++)
		out[i] *= c->fh1_ssm_out; /* Falcon-H1: ssm_out_multiplier */
	free(y);
	return rv;
}
