/*
 * reference_math.c — the float32 building blocks both reference paths use
 * (RMSNorm, linear, RoPE, causal GQA attention with Gemma's scale, soft-capping
 * and sliding window, SiLU/GELU gate, router), and the
 * logits comparison. Plain loops in a fixed order: this is the yardstick, not
 * a fast path.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

double ref_budget_mx(wt_quant q)
{
	switch (q) {
	case WT_QUANT_FP8_TENSOR:
	case WT_QUANT_FP8_CHANNEL:
	case WT_QUANT_FP8_BLOCK:
		return REF_BUDGET_MX_FP8;
	case WT_QUANT_INT8_CHANNEL:
		return REF_BUDGET_MX_INT8;
	default:
		return ref_budget(q);
	}
}

double ref_budget_lin(wt_quant q)
{
	switch (q) {
	case WT_QUANT_FP8_TENSOR:
	case WT_QUANT_FP8_CHANNEL:
	case WT_QUANT_FP8_BLOCK:
		return REF_BUDGET_LIN_FP8;
	case WT_QUANT_INT8_CHANNEL:
		return REF_BUDGET_LIN_INT8;
	default:
		return ref_budget(q);
	}
}

double ref_budget(wt_quant q)
{
	switch (q) {
	case WT_QUANT_FP8_TENSOR:
	case WT_QUANT_FP8_CHANNEL:
	case WT_QUANT_FP8_BLOCK:
		return REF_BUDGET_FP8;
	case WT_QUANT_INT8_CHANNEL:
		return REF_BUDGET_INT8;
	case WT_QUANT_INT4_GROUP:
		return REF_BUDGET_INT4;
	default:
		return REF_TOL_F32;
	}
}

/* x / rms(x) * (off + w): Gemma's RMSNorm (off 1) computes x * rsqrt(mean(x^2) + eps)
 * * (1 + w) in float32; off 0 is bit for bit the plain x * inv * w. */
static void rmsnorm(float *y, const float *x, const float *w, float off, int64_t rows, int64_t dim,
                    float eps)
{
	for (int64_t t = 0; t < rows; t++) {
		const float *xr = x + t * dim;
		float *yr = y + t * dim;
		float ss = 0.0f;
		for (int64_t i = 0; i < dim; i++)
			ss += xr[i] * xr[i];
		float inv = 1.0f / sqrtf(ss / (float)dim + eps);
		for (int64_t i = 0; i < dim; i++)
			yr[i] = xr[i] * inv * (off + w[i]);
	}
}

void ref_rmsnorm(float *y, const float *x, const float *w, int64_t rows, int64_t dim, float eps)
{
	rmsnorm(y, x, w, 0.0f, rows, dim, eps);
}

void ref_norm(const ref_cfg *c, float *y, const float *x, const float *w, int64_t rows, int64_t dim)
{
	rmsnorm(y, x, w, c->norm_off, rows, dim, (float)c->eps);
}

/* In the sanitizer builds the linear's loop runs unchecked (neither ASan's per-load checks nor
 * UBSan's index and pointer checks, which kept it scalar: at -O1 with both it took 2.0 of an ASan
 * test_reference_olmo2's 5.7 CPU-s, 0.3 of 1.35 in the plain build; the Makefile compiles this
 * file at -O2 in every build); instead ref_extent checks each operand's whole extent once,
 * before the loop, against ASan's shadow: a byte of it in a redzone or freed is reported as an
 * access to that byte would be (test_reference test_linear). */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define REF_UNCHECKED __attribute__((no_sanitize("address", "undefined")))
static void ref_extent(const void *p, int64_t n)
{
	if (n <= 0)
		return;
	const void *bad =
	    __asan_region_is_poisoned((void *)(uintptr_t)p, (size_t)n * sizeof(float));
	if (bad != NULL)
		(void)*(const volatile char *)bad; /* ASan's report names the first bad byte */
}
#else
#define REF_UNCHECKED
static void ref_extent(const void *p, int64_t n)
{
	(void)p;
	(void)n;
}
#endif

REF_UNCHECKED static void linear_rows(float *y, const float *x, const float *w, const float *b,
                                      int64_t T, int64_t K, int64_t N)
{
	for (int64_t t = 0; t < T; t++) {
		const float *xr = x + t * K;
		for (int64_t n = 0; n < N; n++) {
			const float *wr = w + n * K;
			/* four partial sums (k mod 4; the tail into the first), added pairwise:
			 * four lanes the compiler can keep in one vector, the same order in every
			 * build */
			float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
			int64_t k = 0;
			for (; k + 4 <= K; k += 4) {
				a0 += xr[k] * wr[k];
				a1 += xr[k + 1] * wr[k + 1];
				a2 += xr[k + 2] * wr[k + 2];
				a3 += xr[k + 3] * wr[k + 3];
			}
			for (; k < K; k++)
				a0 += xr[k] * wr[k];
			float acc = (a0 + a1) + (a2 + a3);
			y[t * N + n] = b ? acc + b[n] : acc;
		}
	}
}

void ref_linear(float *y, const float *x, const float *w, const float *b, int64_t T, int64_t K,
                int64_t N)
{
	if (T <= 0 || N <= 0)
		return;
	ref_extent(x, T * K);
	ref_extent(w, N * K);
	ref_extent(y, T * N);
	if (b != NULL)
		ref_extent(b, N);
	linear_rows(y, x, w, b, T, K, N);
}

void ref_rope(float *x, int64_t T, int64_t n_heads, int64_t d, int64_t ld, double theta)
{
	ref_rope_scaled(x, T, n_heads, d, ld, theta, 1.0);
}

/* RoPE on the first rd dims of each head of d: frequency i is
 * theta^(-2i/rd) / factor / ext[i] (ext may be NULL), cos and sin times mscale.
 * Pair i is (i, i + rd/2) (rotate-half), or with `pairs` the adjacent
 * (2i, 2i + 1) (GLM's rotate_half over x[..., 0::2], x[..., 1::2] with cos and
 * sin repeat_interleave'd). */
static void rope_rot(float *x, int64_t T, int64_t n_heads, int64_t d, int64_t rd, int64_t ld,
                     double theta, double factor, const double *ext, double mscale, bool pairs)
{
	int64_t half = rd / 2;
	for (int64_t t = 0; t < T; t++) {
		for (int64_t i = 0; i < half; i++) {
			double inv_freq = pow(theta, -(double)(2 * i) / (double)rd) / factor;
			if (ext != NULL)
				inv_freq /= ext[i];
			double ang = (double)t * inv_freq;
			float c = (float)(cos(ang) * mscale), s = (float)(sin(ang) * mscale);
			for (int64_t h = 0; h < n_heads; h++) {
				float *xh = x + t * ld + h * d;
				int64_t a = pairs ? 2 * i : i, b = pairs ? 2 * i + 1 : i + half;
				float x1 = xh[a], x2 = xh[b];
				xh[a] = x1 * c - x2 * s;
				xh[b] = x2 * c + x1 * s;
			}
		}
	}
}

void ref_rope_part(float *x, int64_t T, int64_t n_heads, int64_t d, int64_t rd, int64_t ld,
                   double theta)
{
	rope_rot(x, T, n_heads, d, rd, ld, theta, 1.0, NULL, 1.0, false);
}

void ref_rope_scaled(float *x, int64_t T, int64_t n_heads, int64_t d, int64_t ld, double theta,
                     double factor)
{
	rope_rot(x, T, n_heads, d, d, ld, theta, factor, NULL, 1.0, false);
}

/* RoPE of c on the first rd dims of each head of d (ref_rope_layer, ref_rope_mla); plain:
 * the default RoPE of theta and factor, without c's scaling (OLMo 3's sliding layers). */
static void rope_cfg(const ref_cfg *c, double theta, double factor, float *x, int64_t T,
                     int64_t n_heads, int64_t d, int64_t rd, int64_t ld, bool plain)
{
	if (plain) {
		rope_rot(x, T, n_heads, d, rd, ld, theta, factor, NULL, 1.0, c->rope_pairs);
		return;
	}
	/* transformers' dynamic NTK: the base grows once the tokens pass the maximum */
	if (c->rope_dyn > 0.0 && c->rope_dyn_max > 0 && T > c->rope_dyn_max && rd > 2)
		theta *=
		    pow(c->rope_dyn * (double)T / (double)c->rope_dyn_max - (c->rope_dyn - 1.0),
		        (double)rd / (double)(rd - 2));
	/* transformers' LongRoPE: the long factors once the sequence passes
	 * original_max_position_embeddings (positions here are 0..T-1) */
	const double *ext = c->n_ext > 0 ? c->rope_ext[T > c->rope_orig_max ? 1 : 0] : NULL;
	rope_rot(x, T, n_heads, d, rd, ld, theta, factor, ext,
	         c->rope_mscale > 0.0 ? c->rope_mscale : 1.0, c->rope_pairs);
}

void ref_rope_layer(const ref_cfg *c, int64_t l, float *x, int64_t T, int64_t n_heads, int64_t ld)
{
	double theta, factor;
	ref_attn_opt o;
	ref_layer_attn(c, l, &theta, &factor, &o);
	if ((c->cohere == 2 || c->nope_global) && o.window == 0)
		return; /* Cohere2's full_attention layers, EXAONE 4.0's with a window: NoPE */
	if (ref_l4_bit(c->nope_mask, l))
		return; /* SmolLM3's no_rope_layers 0 */
	if (c->g4 && !c->g4_rope)
		return; /* Granite 4.0 without position_embedding_type "rope" */
	if (c->jamba || c->mpt || c->gpt2 || c->bloom || c->fl_alibi || c->bc_alibi || c->clip)
		return; /* JambaAttention: no positional embedding; MPT, BLOOM, Falcon, Baichuan:
		         * ALiBi; GPT-2, CLIP: learned positions */
	rope_cfg(c, theta, factor, x, T, n_heads, c->d, c->rot_dim > 0 ? c->rot_dim : c->d, ld,
	         c->olmo3 && o.window > 0); /* Olmo3's sliding layers: rope_type "default" */
}

void ref_rope_mla(const ref_cfg *c, float *x, int64_t T, int64_t n_heads, int64_t ld)
{
	double f = c->rope_factor[0];
	rope_cfg(c, c->theta, f > 0.0 ? f : 1.0, x, T, n_heads, c->rope, c->rope, ld, false);
}

void ref_rope_deinterleave(float *x, int64_t T, int64_t n_heads, int64_t d, int64_t ld)
{
	float tmp[1024];
	if (d > 1024 || d % 2 != 0)
		return; /* callers validate: rope dims are even and small */
	int64_t half = d / 2;
	for (int64_t t = 0; t < T; t++)
		for (int64_t h = 0; h < n_heads; h++) {
			float *xh = x + t * ld + h * d;
			for (int64_t i = 0; i < half; i++) {
				tmp[i] = xh[2 * i];
				tmp[half + i] = xh[2 * i + 1];
			}
			memcpy(xh, tmp, (size_t)d * sizeof(float));
		}
}

void ref_layer_attn(const ref_cfg *c, int64_t l, double *theta, double *factor, ref_attn_opt *o)
{
	bool local = c->local_masked ? c->window > 0 && ref_l4_bit(c->local_mask, l)
	                             : c->window > 0 && (c->window_pattern == 0 ||
	                                                 (l + 1) % c->window_pattern != 0);
	double f = c->rope_factor[local ? 1 : 0];
	*theta = local ? c->theta_local : c->theta;
	*factor = f > 0.0 ? f : 1.0;
	o->causal = !c->siglip && !c->bidir; /* SigLIP's text tower, llama_bidir_emb: both ways */
	o->scale = (float)c->attn_scale;
	o->softcap = (float)c->attn_cap;
	o->window = local ? c->window : 0;
	o->bidir_window = 0; /* ModernBERT's local layers set their own (modernbert.c) */
	o->sinks = NULL;     /* GPT-OSS: the caller sets its heads' sinks */
	o->chunk = c->llama4 && ref_l4_bit(c->l4_chunked, l) ? c->chunk : 0;
	o->alibi = NULL; /* MPT, BLOOM: the caller sets its heads' slopes */
}

void ref_alibi_slopes(const ref_cfg *c, float *out)
{
	int64_t n = 1;
	while (n < c->H)
		n *= 2;
	for (int64_t j = 0; j < c->H; j++) {
		/* n != H: slopes[1::2] then slopes[::2] (0-based), i.e. k = 2, 4, ... then 1, 3 */
		int64_t k = n == c->H ? j + 1 : (j < n / 2 ? 2 * j + 2 : 2 * (j - n / 2) + 1);
		float m = (float)k * (float)(c->alibi_max / (double)n);
		out[j] = 1.0f / powf(2.0f, m);
	}
	/* Falcon adds the bias before scaling the scores by 1/sqrt(d) (transformers'
	 * FalconAttention; vLLM's falcon.py scales its slopes by inv_norm_factor) */
	for (int64_t j = 0; c->fl_alibi && j < c->H; j++)
		out[j] *= 1.0f / sqrtf((float)c->d);
}

void ref_attention(float *out, const float *q, const float *k, const float *v, int64_t T,
                   int64_t n_q, int64_t n_kv, const int64_t *kv_of, int64_t d,
                   const ref_attn_opt *opt)
{
	float scale = opt->scale > 0.0f ? opt->scale : 1.0f / sqrtf((float)d), cap = opt->softcap;
	float p[64]; /* T is "a handful of tokens"; callers cap it at 64 */
	for (int64_t h = 0; h < n_q; h++) {
		int64_t g = kv_of[h];
		for (int64_t t = 0; t < T; t++) {
			const float *qr = q + t * n_q * d + h * d;
			float mx = -INFINITY;
			int64_t last = opt->causal ? t : T - 1, first = 0;
			/* transformers' sliding mask: key s is seen when t - s < window */
			if (opt->causal && opt->window > 0 && t - opt->window + 1 > 0)
				first = t - opt->window + 1;
			if (!opt->causal && opt->bidir_window > 0) { /* ModernBERT's local layers */
				first = t - opt->bidir_window > 0 ? t - opt->bidir_window : 0;
				if (t + opt->bidir_window < last)
					last = t + opt->bidir_window;
			}
			/* Llama 4's chunked mask: the keys of the query's own chunk */
			if (opt->chunk > 0 && t / opt->chunk * opt->chunk > first)
				first = t / opt->chunk * opt->chunk;
			for (int64_t s = first; s <= last; s++) {
				const float *kr = k + s * n_kv * d + g * d;
				float acc = 0.0f;
				for (int64_t i = 0; i < d; i++)
					acc += qr[i] * kr[i];
				p[s] = acc * scale;
				if (opt->alibi != NULL) /* MPT, BLOOM: the bias of distance s - t */
					p[s] += opt->alibi[h] * (float)(s - t);
				if (cap > 0.0f)
					p[s] = tanhf(p[s] / cap) * cap;
				if (p[s] > mx)
					mx = p[s];
			}
			/* GPT-OSS: the sink joins the max and the denominator, then is dropped */
			if (opt->sinks != NULL && opt->sinks[h] > mx)
				mx = opt->sinks[h];
			float sum = opt->sinks != NULL ? expf(opt->sinks[h] - mx) : 0.0f;
			for (int64_t s = first; s <= last; s++) {
				p[s] = expf(p[s] - mx);
				sum += p[s];
			}
			float *o = out + t * n_q * d + h * d;
			for (int64_t i = 0; i < d; i++)
				o[i] = 0.0f;
			for (int64_t s = first; s <= last; s++) {
				const float *vr = v + s * n_kv * d + g * d;
				float ps = p[s] / sum;
				for (int64_t i = 0; i < d; i++)
					o[i] += ps * vr[i];
			}
		}
	}
}

void ref_softcap(float *x, int64_t n, float cap)
{
	for (int64_t i = 0; i < n; i++)
		x[i] = tanhf(x[i] / cap) * cap;
}

static float gelu_erf(float x)
{
	return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

/* PyTorch's gelu(approximate='tanh'), transformers' gelu_pytorch_tanh:
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
static float gelu_tanh(float x)
{
	const float beta = 0.7978845608028654f, kappa = 0.044715f;
	float inner = beta * (x + kappa * (x * x * x));
	return 0.5f * x * (1.0f + tanhf(inner));
}

static float act1(float x, ref_act act)
{
	if (act == REF_ACT_GELU_TANH)
		return gelu_tanh(x);
	if (act == REF_ACT_GELU)
		return gelu_erf(x);
	if (act == REF_ACT_RELU)
		return x > 0.0f ? x : 0.0f;
	if (act == REF_ACT_QUICK_GELU) /* transformers' QuickGELUActivation */
		return x * (1.0f / (1.0f + expf(-1.702f * x)));
	if (act == REF_ACT_RELU2) { /* ReLUSquaredActivation: relu(x)^2 */
		float r = x > 0.0f ? x : 0.0f;
		return r * r;
	}
	return x / (1.0f + expf(-x));
}

void ref_act_mul(float *out, const float *g, const float *u, int64_t n, ref_act act)
{
	for (int64_t i = 0; i < n; i++)
		out[i] = act1(g[i], act) * u[i];
}

void ref_act_apply(float *x, int64_t n, ref_act act)
{
	for (int64_t i = 0; i < n; i++)
		x[i] = act1(x[i], act);
}

void ref_softmax(float *y, const float *x, int64_t n)
{
	float mx = -INFINITY, sum = 0.0f;
	for (int64_t i = 0; i < n; i++)
		if (x[i] > mx)
			mx = x[i];
	for (int64_t i = 0; i < n; i++) {
		y[i] = expf(x[i] - mx);
		sum += y[i];
	}
	for (int64_t i = 0; i < n; i++)
		y[i] /= sum;
}

void ref_route(const float *logits, int64_t E, int64_t k, bool norm, const int64_t *forced,
               int64_t *idx, float *w)
{
	float mx = -INFINITY, sum = 0.0f;
	for (int64_t e = 0; e < E; e++)
		if (logits[e] > mx)
			mx = logits[e];
	for (int64_t e = 0; e < E; e++)
		sum += expf(logits[e] - mx);
	ref_eset taken = {0}; /* E <= REF_MAX_EXPERTS, checked by the config parser */
	float wsum = 0.0f;
	for (int64_t j = 0; j < k; j++) {
		int64_t best = forced ? forced[j] : -1;
		for (int64_t e = 0; !forced && e < E; e++)
			if (!ref_eset_has(&taken, e) && (best < 0 || logits[e] > logits[best]))
				best = e;
		ref_eset_add(&taken, best);
		idx[j] = best;
		w[j] = expf(logits[best] - mx) / sum;
		wsum += w[j];
	}
	if (norm)
		for (int64_t j = 0; j < k; j++)
			w[j] /= wsum;
}

void ref_compare(const float *ref, const float *got, size_t n, ref_diff *out)
{
	ref_diff d = {0};
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(ref[i]) || !isfinite(got[i])) {
			d.nonfinite = true;
			continue;
		}
		double r = fabs((double)ref[i]);
		double a = fabs((double)ref[i] - (double)got[i]);
		if (r > d.max_abs_ref)
			d.max_abs_ref = r;
		if (a > d.max_abs_diff) {
			d.max_abs_diff = a;
			d.at = i;
		}
	}
	*out = d;
}

bool ref_within(const ref_diff *d, double budget)
{
	return !d->nonfinite && d->max_abs_diff <= budget * d->max_abs_ref;
}

void ref_ffn(float *y, const float *x, int64_t T, int64_t hid, int64_t n_inter, const float *wg,
             const float *bg, const float *wu, const float *bu, const float *wd, ref_act act,
             float *scratch)
{
	ref_ffn_mult(y, x, T, hid, n_inter, wg, bg, wu, bu, wd, act, scratch, 1.0f, 1.0f);
}

void ref_ffn_mult(float *y, const float *x, int64_t T, int64_t hid, int64_t n_inter,
                  const float *wg, const float *bg, const float *wu, const float *bu,
                  const float *wd, ref_act act, float *scratch, float gm, float dm)
{
	float *g = scratch, *u = scratch + T * n_inter, *a = scratch + 2 * T * n_inter;
	ref_linear(g, x, wg, bg, T, hid, n_inter);
	ref_linear(u, x, wu, bu, T, hid, n_inter);
	for (int64_t i = 0; gm != 1.0f && i < T * n_inter; i++)
		g[i] *= gm;
	ref_act_mul(a, g, u, T * n_inter, act);
	ref_linear(y, a, wd, NULL, T, n_inter, hid);
	for (int64_t i = 0; dm != 1.0f && i < T * hid; i++)
		y[i] *= dm;
}

void ref_mlp_plain(float *y, const float *x, int64_t T, int64_t hid, int64_t n_inter,
                   const float *w1, const float *b1, const float *w2, ref_act act, float *scratch)
{
	ref_linear(scratch, x, w1, b1, T, hid, n_inter);
	ref_act_apply(scratch, T * n_inter, act);
	ref_linear(y, scratch, w2, NULL, T, n_inter, hid);
}

void ref_norm_b(const ref_cfg *c, float *y, const float *x, const float *w, const float *b,
                int64_t rows, int64_t dim)
{
	if (c->layernorm && c->norm_off != 0.0f) { /* Nemotron's LayerNorm1P: weight + 1 */
		ref_layernorm(y, x, NULL, NULL, rows, dim, (float)c->eps);
		for (int64_t t = 0; t < rows; t++)
			for (int64_t i = 0; i < dim; i++)
				y[t * dim + i] =
				    y[t * dim + i] * (c->norm_off + w[i]) + (b ? b[i] : 0.0f);
	} else if (c->layernorm)
		ref_layernorm(y, x, w, b, rows, dim, (float)c->eps);
	else
		ref_norm(c, y, x, w, rows, dim);
}

void ref_layernorm(float *y, const float *x, const float *w, const float *b, int64_t rows,
                   int64_t dim, float eps)
{
	for (int64_t t = 0; t < rows; t++) {
		const float *xr = x + t * dim;
		float *yr = y + t * dim;
		float mean = 0.0f, var = 0.0f;
		for (int64_t i = 0; i < dim; i++)
			mean += xr[i];
		mean /= (float)dim;
		for (int64_t i = 0; i < dim; i++)
			var += (xr[i] - mean) * (xr[i] - mean);
		float inv = 1.0f / sqrtf(var / (float)dim + eps);
		for (int64_t i = 0; i < dim; i++)
			yr[i] = (xr[i] - mean) * inv * (w ? w[i] : 1.0f) + (b ? b[i] : 0.0f);
	}
}

void ref_gelu(float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		x[i] = gelu_erf(x[i]);
}

void ref_causal_conv1d(const float *x, const float *w, const float *b, int64_t T, int64_t nc,
                       int64_t K, float *y)
{
	for (int64_t t = 0; t < T; t++)
		for (int64_t ch = 0; ch < nc; ch++) {
			float acc = 0.0f;
			for (int64_t j = 0; j < K; j++) {
				int64_t src = t - (K - 1) + j;
				if (src >= 0)
					acc += w[ch * K + j] * x[src * nc + ch];
			}
			y[t * nc + ch] = b ? acc + b[ch] : acc;
		}
}
