/*
 * gemma3n.c — both reference paths for Gemma 3n's language model (Gemma3nForCausalLM;
 * transformers 4.57.1 modeling_gemma3n.py, vLLM gemma3n.py), on text tokens:
 *
 *   e = embed_tokens[t] * sqrt(hid); the per-layer inputs
 *   ple = (norm_P(per_layer_model_projection(e) * hid^-0.5) + embed_tokens_per_layer[t'] *
 *   sqrt(P)) * 2^-0.5 ([L, P] per token; t' = t below vocab_size_per_layer_input, else 0);
 *   AltUp streams s_0 = e, s_i = altup_projections[i-1](e) rescaled to e's RMS (i < A);
 *   per layer: predict (p_b = s_b + sum_a C[b*A + a] s_a, C = prediction_coefs(m(s_active)),
 *   m(x) = tanh(modality_router(router_norm(x) / hid))); h = input_layernorm(p_active);
 *   laurel = h + post_laurel_norm(linear_right(linear_left(h))); attention (q / k / v norms,
 *   RoPE of the layer's type, scale 1, the sliding window; a KV-shared layer reads the keys
 *   and values of the last earlier layer of its type); x = (p_active +
 *   post_attention_layernorm(attn) + laurel) / sqrt(2); x += post_feedforward_layernorm(
 *   down(gelu_tanh(topk(gate)) * up)(pre_feedforward_layernorm(x))), topk the gaussian cut of
 *   activation_sparsity_pattern[l]; correct (s_b = p_b + (x - p_active) * (1 +
 *   correction_coefs(m(x))[b])); then s_b += post_per_layer_input_norm(per_layer_projection(
 *   gelu_tanh(per_layer_input_gate(s_active * correct_output_scale)) * ple[l])) for b >= 1;
 *   at the end s_i = altup_unembed_projections[i-1](s_i) rescaled to s_0's RMS, the streams'
 *   mean, model.norm, the logits against embed_tokens (tied), soft-capped.
 *
 * Sharded (docs/format.md section 2.7, Gemma 3n): both embeddings vocab-parallel (padding rows
 * checked zero), per_layer_model_projection / altup_(unembed_)projections / linear_left rows
 * gathered in rank order, qkv_proj of the rank's heads, o_proj / down_proj / linear_right
 * partial sums all-reduced in rank order, gate_up_proj [gate_r; up_r] with the top-k's mean
 * and deviation taken over the whole gate (the ranks' slices gathered); the replicated
 * tensors read from rank 0 after every other rank's copy is checked equal to it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

typedef struct g3n_run {
	const ref_cfg *c;
	ref_set *sets; /* the checkpoint (T 1, ckpt) or the ranks */
	uint32_t T;
	int64_t Vl; /* embed_tokens rows per rank */
	bool ckpt;
	int64_t n;
	float *s;                   /* [A, n, hid] the streams */
	float *p;                   /* [A, n, hid] the predictions */
	float *ple;                 /* [n, L, P] the per-layer inputs */
	float *kc, *vc;             /* [L, T, n, KVl*d] each layer's keys / values per rank */
	float *h, *x, *q, *o, *acc; /* [n, max(hid, H*d, L*P)] */
	float *g, *u;               /* [n, max(I, laurel_rank)] gathered gate / up */
	float *m, *cf;              /* [n, A], [n, A*A] */
	wt_errbuf *err;
} g3n_run;

#define G3N_PRE "model."

/* The replicated tensor `leaf` (under model.) of nd dims a, b: rank 0's, every other rank's
 * copy checked equal to it. */
static int repl(g3n_run *r, const float **out, int nd, int64_t a, int64_t b, const char *leaf)
{
	int rv = ref_getf(&r->sets[0], out, false, r->err, nd, a, b, 0, G3N_PRE "%s", leaf);
	size_t n = (size_t)(nd == 1 ? a : a * b);
	for (uint32_t k = 1; rv == WT_OK && k < r->T; k++) {
		const float *o;
		if ((rv =
		         ref_getf(&r->sets[k], &o, false, r->err, nd, a, b, 0, G3N_PRE "%s", leaf)))
			break;
		if (memcmp(o, *out, n * sizeof(float)) != 0)
			rv = wt_seterr(r->err, WT_ECORRUPT,
			               "rank %u '" G3N_PRE "%s': its replica differs from rank 0's",
			               k, leaf);
	}
	return rv;
}

/* RMSNorm `leaf` ([dim], replicated) of rows of x into y. */
static int norm(g3n_run *r, float *y, const float *x, int64_t rows, int64_t dim, const char *leaf)
{
	const float *w;
	int rv = repl(r, &w, 1, dim, 0, leaf);
	if (rv == WT_OK)
		ref_rmsnorm(y, x, w, rows, dim, (float)r->c->eps);
	return rv;
}

static int lnorm(g3n_run *r, float *y, const float *x, int64_t l, const char *leaf)
{
	char b[128];
	snprintf(b, sizeof(b), "layers.%lld.%s.weight", (long long)l, leaf);
	return norm(r, y, x, r->n, r->c->hid, b);
}

/* y [n, N] = x [n, K] times the rows of `name` split over the ranks (ColumnParallelLinear with
 * gather_output): rank k's [N/T, K] rows land at columns k*N/T of y. */
static int rows_gathered(g3n_run *r, float *y, const float *x, int64_t N, int64_t K,
                         const char *name)
{
	int64_t Nl = N / (int64_t)r->T;
	for (uint32_t k = 0; k < r->T; k++) {
		const float *w;
		int rv = ref_getf(&r->sets[k], &w, false, r->err, 2, Nl, K, 0, G3N_PRE "%s", name);
		if (rv != WT_OK)
			return rv;
		for (int64_t t = 0; t < r->n; t++)
			ref_linear(y + t * N + (int64_t)k * Nl, x + t * K, w, NULL, 1, K, Nl);
	}
	return WT_OK;
}

/* Vocabulary-parallel rows of table `name` ([Vl rows per rank, W]; vocabulary V) for ids[t],
 * times scale, into y [n, W]; padding rows past V checked zero. */
static int vocab_rows(g3n_run *r, float *y, const int64_t *ids, int64_t V, int64_t Vl, int64_t W,
                      float scale, const char *name)
{
	memset(y, 0, (size_t)(r->n * W) * sizeof(float));
	for (uint32_t k = 0; k < r->T; k++) {
		const float *e;
		int rv = ref_getf(&r->sets[k], &e, false, r->err, 2, Vl, W, 0, G3N_PRE "%s", name);
		if (rv != WT_OK)
			return rv;
		int64_t first = V - (int64_t)k * Vl;
		for (int64_t row = first > 0 ? first : 0; row < Vl; row++)
			for (int64_t i = 0; i < W; i++)
				if (e[row * W + i] != 0.0f)
					return wt_seterr(r->err, WT_ECORRUPT,
					                 "rank %u '" G3N_PRE
					                 "%s': padding row %lld is "
					                 "not zero",
					                 k, name, (long long)row);
		for (int64_t tk = 0; tk < r->n; tk++) {
			int64_t row = ids[tk] - (int64_t)k * Vl;
			for (int64_t i = 0; row >= 0 && row < Vl && i < W; i++)
				y[tk * W + i] += e[row * W + i] * scale;
		}
	}
	return WT_OK;
}

/* The per-layer embedding's rows on each rank: the vocabulary (checkpoint), or rank 0's
 * rows (its padded vocabulary / T; the other ranks' shapes are checked against it). */
static int64_t ple_rows(const g3n_run *r)
{
	ref_tensor *t = ref_set_find(&r->sets[0], G3N_PRE "embed_tokens_per_layer.weight");
	return r->ckpt || t == NULL || t->ndim != 2 ? r->c->g3n_pvocab : t->shape[0];
}

/* Stream y [n, hid] rescaled to the RMS of ref [n, hid] (transformers: sqrt(max(mean(y^2),
 * 1e-5))). */
static void rescale(float *y, const float *ref, int64_t n, int64_t hid)
{
	for (int64_t t = 0; t < n; t++) {
		float a = 0.0f, b = 0.0f;
		for (int64_t i = 0; i < hid; i++) {
			a += ref[t * hid + i] * ref[t * hid + i];
			b += y[t * hid + i] * y[t * hid + i];
		}
		float target = sqrtf(a / (float)hid), mag = b / (float)hid;
		mag = sqrtf(mag > 1e-5f ? mag : 1e-5f);
		for (int64_t i = 0; i < hid; i++)
			y[t * hid + i] = y[t * hid + i] * target / mag;
	}
}

/* The embeddings, the per-layer inputs and the AltUp streams. */
static int embed(g3n_run *r, const int64_t *tokens)
{
	const ref_cfg *c = r->c;
	int64_t n = r->n, hid = c->hid, P = c->g3n_ple, LP = c->L * P, A = c->g3n_alt;
	int64_t ids[REF_MAX_TOKENS];
	for (int64_t t = 0; t < n; t++) /* vLLM's (and in range transformers') per-layer ids */
		ids[t] = tokens[t] < c->g3n_pvocab ? tokens[t] : 0;
	int rv =
	    vocab_rows(r, r->s, tokens, c->V, r->Vl, hid, sqrtf((float)hid), "embed_tokens.weight");
	if (rv == WT_OK)
		rv = vocab_rows(r, r->ple, ids, c->g3n_pvocab, ple_rows(r), LP, sqrtf((float)P),
		                "embed_tokens_per_layer.weight");
	if (rv == WT_OK)
		rv = rows_gathered(r, r->h, r->s, LP, hid, "per_layer_model_projection.weight");
	if (rv != WT_OK)
		return rv;
	float ps = 1.0f / sqrtf((float)hid), is = 1.0f / sqrtf(2.0f);
	for (int64_t i = 0; i < n * LP; i++)
		r->h[i] *= ps;
	if ((rv = norm(r, r->h, r->h, n * c->L, P, "per_layer_projection_norm.weight")))
		return rv;
	for (int64_t i = 0; i < n * LP; i++)
		r->ple[i] = (r->h[i] + r->ple[i]) * is;
	for (int64_t a = 1; a < A && rv == WT_OK; a++) {
		char b[96];
		snprintf(b, sizeof(b), "altup_projections.%lld.weight", (long long)(a - 1));
		float *sa = r->s + a * n * hid;
		if ((rv = rows_gathered(r, sa, r->s, hid, hid, b)) == WT_OK)
			rescale(sa, r->s, n, hid);
	}
	return rv;
}

/* r->m [n, A] = tanh(modality_router(router_norm(x) / hid)) of layer l. */
static int modalities(g3n_run *r, int64_t l, const float *x)
{
	const ref_cfg *c = r->c;
	int64_t n = r->n, hid = c->hid, A = c->g3n_alt;
	char b[96];
	const float *w;
	int rv = lnorm(r, r->h, x, l, "altup.router_norm");
	snprintf(b, sizeof(b), "layers.%lld.altup.modality_router.weight", (long long)l);
	if (rv == WT_OK)
		rv = repl(r, &w, 2, A, hid, b);
	if (rv != WT_OK)
		return rv;
	float sc = 1.0f / (float)hid;
	for (int64_t i = 0; i < n * hid; i++)
		r->h[i] *= sc;
	ref_linear(r->m, r->h, w, NULL, n, hid, A);
	for (int64_t i = 0; i < n * A; i++)
		r->m[i] = tanhf(r->m[i]);
	return WT_OK;
}

/* AltUp's predict: r->p from r->s. */
static int predict(g3n_run *r, int64_t l)
{
	const ref_cfg *c = r->c;
	int64_t n = r->n, hid = c->hid, A = c->g3n_alt;
	char b[96];
	const float *w;
	int rv = modalities(r, l, r->s + c->g3n_active * n * hid);
	snprintf(b, sizeof(b), "layers.%lld.altup.prediction_coefs.weight", (long long)l);
	if (rv == WT_OK)
		rv = repl(r, &w, 2, A * A, A, b);
	if (rv != WT_OK)
		return rv;
	ref_linear(r->cf, r->m, w, NULL, n, A, A * A);
	for (int64_t bb = 0; bb < A; bb++)
		for (int64_t t = 0; t < n; t++)
			for (int64_t i = 0; i < hid; i++) {
				float acc = 0.0f;
				for (int64_t a = 0; a < A; a++)
					acc += r->s[(a * n + t) * hid + i] *
					       r->cf[t * A * A + bb * A + a];
				r->p[(bb * n + t) * hid + i] = acc + r->s[(bb * n + t) * hid + i];
			}
	return WT_OK;
}

/* AltUp's correct: r->s from r->p and the layer's output x. */
static int correct(g3n_run *r, int64_t l, const float *x)
{
	const ref_cfg *c = r->c;
	int64_t n = r->n, hid = c->hid, A = c->g3n_alt;
	char b[96];
	const float *w;
	int rv = modalities(r, l, x);
	snprintf(b, sizeof(b), "layers.%lld.altup.correction_coefs.weight", (long long)l);
	if (rv == WT_OK)
		rv = repl(r, &w, 2, A, A, b);
	if (rv != WT_OK)
		return rv;
	ref_linear(r->cf, r->m, w, NULL, n, A, A);
	const float *pa = r->p + c->g3n_active * n * hid;
	for (int64_t a = 0; a < A; a++)
		for (int64_t t = 0; t < n; t++)
			for (int64_t i = 0; i < hid; i++)
				r->s[(a * n + t) * hid + i] =
				    (x[t * hid + i] - pa[t * hid + i]) * (r->cf[t * A + a] + 1.0f) +
				    r->p[(a * n + t) * hid + i];
	return WT_OK;
}

/* y [n, hid] = x (the normed input) + post_laurel_norm(linear_right(linear_left(x))). */
static int laurel(g3n_run *r, int64_t l, float *y, const float *x)
{
	const ref_cfg *c = r->c;
	int64_t n = r->n, hid = c->hid, R = c->g3n_laurel, Rl = R / (int64_t)r->T;
	long long L = (long long)l;
	char b[96];
	snprintf(b, sizeof(b), "layers.%lld.laurel.linear_left.weight", L);
	int rv = rows_gathered(r, r->g, x, R, hid, b);
	memset(r->acc, 0, (size_t)(n * hid) * sizeof(float));
	for (uint32_t k = 0; k < r->T && rv == WT_OK; k++) {
		const float *w;
		if ((rv = ref_getf(&r->sets[k], &w, false, r->err, 2, hid, Rl, 0,
		                   G3N_PRE "layers.%lld.laurel.linear_right.weight", L)))
			break;
		for (int64_t t = 0; t < n; t++) {
			ref_linear(r->o, r->g + t * R + (int64_t)k * Rl, w, NULL, 1, Rl, hid);
			for (int64_t i = 0; i < hid; i++)
				r->acc[t * hid + i] += r->o[i];
		}
	}
	if (rv == WT_OK)
		rv = lnorm(r, r->acc, r->acc, l, "laurel.post_laurel_norm");
	for (int64_t i = 0; rv == WT_OK && i < n * hid; i++)
		y[i] = x[i] + r->acc[i];
	return rv;
}

/* The gaussian top-k of activation_sparsity_pattern[l] on the whole gate rows g [n, I]:
 * relu(g - (mean + std * icdf(sparsity))), the deviation without Bessel's correction. */
static void topk(const ref_cfg *c, int64_t l, float *g, int64_t n, int64_t I)
{
	if (c->g3n_zmul[l] == 0.0f)
		return;
	for (int64_t t = 0; t < n; t++) {
		float *row = g + t * I, mean = 0.0f, var = 0.0f;
		for (int64_t i = 0; i < I; i++)
			mean += row[i];
		mean /= (float)I;
		for (int64_t i = 0; i < I; i++)
			var += (row[i] - mean) * (row[i] - mean);
		float cut = mean + sqrtf(var / (float)I) * c->g3n_zmul[l];
		for (int64_t i = 0; i < I; i++)
			row[i] = row[i] > cut ? row[i] - cut : 0.0f;
	}
}

/* acc [n, hid] = down(gelu_tanh(topk(gate(x))) * up(x)): each rank's gate / up rows gathered,
 * the top-k over the whole gate, each rank's down columns summed in rank order. */
static int mlp(g3n_run *r, int64_t l, const float *x)
{
	const ref_cfg *c = r->c;
	int64_t n = r->n, hid = c->hid, I = c->I, Il = I / (int64_t)r->T;
	long long L = (long long)l;
	int rv = WT_OK;
	for (uint32_t k = 0; k < r->T && rv == WT_OK; k++) {
		const float *gw, *uw;
		if (r->ckpt) {
			rv = ref_getf(&r->sets[k], &gw, false, r->err, 2, I, hid, 0,
			              G3N_PRE "layers.%lld.mlp.gate_proj.weight", L);
			if (rv == WT_OK)
				rv = ref_getf(&r->sets[k], &uw, false, r->err, 2, I, hid, 0,
				              G3N_PRE "layers.%lld.mlp.up_proj.weight", L);
		} else {
			rv = ref_getf(&r->sets[k], &gw, false, r->err, 2, 2 * Il, hid, 0,
			              G3N_PRE "layers.%lld.mlp.gate_up_proj.weight", L);
			uw = gw + Il * hid;
		}
		for (int64_t t = 0; rv == WT_OK && t < n; t++) {
			ref_linear(r->g + t * I + (int64_t)k * Il, x + t * hid, gw, NULL, 1, hid,
			           Il);
			ref_linear(r->u + t * I + (int64_t)k * Il, x + t * hid, uw, NULL, 1, hid,
			           Il);
		}
	}
	if (rv != WT_OK)
		return rv;
	topk(c, l, r->g, n, I);
	ref_act_apply(r->g, n * I, REF_ACT_GELU_TANH);
	for (int64_t i = 0; i < n * I; i++)
		r->g[i] *= r->u[i];
	memset(r->acc, 0, (size_t)(n * hid) * sizeof(float));
	for (uint32_t k = 0; k < r->T && rv == WT_OK; k++) {
		const float *w;
		if ((rv = ref_getf(&r->sets[k], &w, false, r->err, 2, hid, Il, 0,
		                   G3N_PRE "layers.%lld.mlp.down_proj.weight", L)))
			break;
		for (int64_t t = 0; t < n; t++) {
			ref_linear(r->o, r->g + t * I + (int64_t)k * Il, w, NULL, 1, Il, hid);
			for (int64_t i = 0; i < hid; i++)
				r->acc[t * hid + i] += r->o[i];
		}
	}
	return rv;
}

/* The per-layer input of layer l added to every stream past the first. */
static int per_layer(g3n_run *r, int64_t l)
{
	const ref_cfg *c = r->c;
	int64_t n = r->n, hid = c->hid, P = c->g3n_ple, A = c->g3n_alt;
	long long L = (long long)l;
	char b[96];
	const float *sc, *gw, *pw;
	snprintf(b, sizeof(b), "layers.%lld.altup.correct_output_scale", L);
	int rv = repl(r, &sc, 1, hid, 0, b);
	snprintf(b, sizeof(b), "layers.%lld.per_layer_input_gate.weight", L);
	if (rv == WT_OK)
		rv = repl(r, &gw, 2, P, hid, b);
	snprintf(b, sizeof(b), "layers.%lld.per_layer_projection.weight", L);
	if (rv == WT_OK)
		rv = repl(r, &pw, 2, hid, P, b);
	if (rv != WT_OK)
		return rv;
	const float *sa = r->s + c->g3n_active * n * hid;
	for (int64_t i = 0; i < n * hid; i++)
		r->x[i] = sa[i] * sc[i % hid];
	ref_linear(r->g, r->x, gw, NULL, n, hid, P);
	ref_act_apply(r->g, n * P, REF_ACT_GELU_TANH);
	for (int64_t t = 0; t < n; t++)
		for (int64_t i = 0; i < P; i++)
			r->g[t * P + i] *= r->ple[(t * c->L + l) * P + i];
	ref_linear(r->x, r->g, pw, NULL, n, P, hid);
	if ((rv = lnorm(r, r->x, r->x, l, "post_per_layer_input_norm")))
		return rv;
	for (int64_t a = 1; a < A; a++)
		for (int64_t i = 0; i < n * hid; i++)
			r->s[a * n * hid + i] += r->x[i];
	return WT_OK;
}

static int layer(g3n_run *r, int64_t l)
{
	const ref_cfg *c = r->c;
	int64_t n = r->n, hid = c->hid;
	int rv = predict(r, l);
	float *pa = r->p + c->g3n_active * n * hid, *lau = r->q, *x = r->x;
	if (rv == WT_OK)
		rv = lnorm(r, r->h, pa, l, "input_layernorm");
	if (rv == WT_OK)
		rv = laurel(r, l, lau, r->h);
	if (rv == WT_OK)
		rv = ref_g3n_attn(c, r->sets, r->T, r->ckpt, l, r->h, n, r->kc, r->vc, r->acc,
		                  r->err);
	if (rv == WT_OK)
		rv = lnorm(r, r->acc, r->acc, l, "post_attention_layernorm");
	if (rv != WT_OK)
		return rv;
	float is2 = sqrtf(2.0f);
	for (int64_t i = 0; i < n * hid; i++)
		x[i] = (pa[i] + r->acc[i] + lau[i]) / is2;
	if ((rv = lnorm(r, r->h, x, l, "pre_feedforward_layernorm")) || (rv = mlp(r, l, r->h)) ||
	    (rv = lnorm(r, r->acc, r->acc, l, "post_feedforward_layernorm")))
		return rv;
	for (int64_t i = 0; i < n * hid; i++)
		x[i] += r->acc[i];
	if ((rv = correct(r, l, x)))
		return rv;
	return per_layer(r, l);
}

/* AltUp's unembedding, the streams' mean, model.norm, the tied LM head, the soft cap. */
static int head(g3n_run *r, float *logits)
{
	const ref_cfg *c = r->c;
	int64_t n = r->n, hid = c->hid, A = c->g3n_alt, V = c->V;
	int rv = WT_OK;
	for (int64_t a = 1; a < A && rv == WT_OK; a++) {
		char b[96];
		snprintf(b, sizeof(b), "altup_unembed_projections.%lld.weight", (long long)(a - 1));
		if ((rv = rows_gathered(r, r->x, r->s + a * n * hid, hid, hid, b)) != WT_OK)
			break;
		rescale(r->x, r->s, n, hid);
		memcpy(r->s + a * n * hid, r->x, (size_t)(n * hid) * sizeof(float));
	}
	for (int64_t i = 0; rv == WT_OK && i < n * hid; i++) {
		float acc = 0.0f;
		for (int64_t a = 0; a < A; a++)
			acc += r->s[a * n * hid + i];
		r->h[i] = acc / (float)A;
	}
	if (rv == WT_OK)
		rv = norm(r, r->h, r->h, n, hid, "norm.weight");
	for (uint32_t k = 0; k < r->T && rv == WT_OK; k++) {
		const float *w;
		if ((rv = ref_getf(&r->sets[k], &w, false, r->err, 2, r->Vl, hid, 0,
		                   G3N_PRE "embed_tokens.weight")))
			break;
		for (int64_t t = 0; t < n; t++)
			for (int64_t i = 0; i < r->Vl && (int64_t)k * r->Vl + i < V; i++) {
				float acc = 0.0f;
				for (int64_t j = 0; j < hid; j++)
					acc += r->h[t * hid + j] * w[i * hid + j];
				logits[t * V + (int64_t)k * r->Vl + i] = acc;
			}
	}
	if (rv == WT_OK && c->final_cap > 0)
		ref_softcap(logits, n * V, (float)c->final_cap);
	return rv;
}

static int run(g3n_run *r, const int64_t *tokens, float *logits)
{
	const ref_cfg *c = r->c;
	if (r->n < 1 || r->n > REF_MAX_TOKENS)
		return wt_seterr(r->err, WT_EINVAL, "%lld tokens; the reference runs 1 to %d",
		                 (long long)r->n, REF_MAX_TOKENS);
	for (int64_t t = 0; t < r->n; t++)
		if (tokens[t] < 0 || tokens[t] >= c->V)
			return wt_seterr(r->err, WT_EINVAL,
			                 "token %lld is %lld; vocab_size is %lld", (long long)t,
			                 (long long)tokens[t], (long long)c->V);
	size_t n = (size_t)r->n, hid = (size_t)c->hid, A = (size_t)c->g3n_alt;
	size_t LP = (size_t)(c->L * c->g3n_ple), w = hid, gi = (size_t)c->I;
	w = w > (size_t)(c->H * c->d) ? w : (size_t)(c->H * c->d);
	w = w > LP ? w : LP;
	gi = gi > (size_t)c->g3n_laurel ? gi : (size_t)c->g3n_laurel;
	gi = gi > (size_t)c->g3n_ple ? gi : (size_t)c->g3n_ple;
	size_t kv = (size_t)c->L * n * (size_t)(c->KV >= r->T ? c->KV : r->T) * (size_t)c->d;
	size_t total = 2 * A * n * hid + n * LP + 2 * kv + 5 * n * w + 2 * n * gi + n * A * (A + 1);
	float *buf = calloc(total, sizeof(float));
	if (buf == NULL)
		return wt_seterr(r->err, WT_ENOMEM, "reference forward: out of memory");
	float *p = buf;
	float **at[] = {&r->s, &r->p, &r->ple, &r->kc, &r->vc, &r->h, &r->x,
	                &r->q, &r->o, &r->acc, &r->g,  &r->u,  &r->m, &r->cf};
	size_t len[] = {A * n * hid, A * n * hid, n * LP, kv,     kv,     n * w, n * w,
	                n * w,       n * w,       n * w,  n * gi, n * gi, n * A, n * A * A};
	for (size_t i = 0; i < sizeof(len) / sizeof(len[0]); i++) {
		*at[i] = p;
		p += len[i];
	}
	int rv = embed(r, tokens);
	for (int64_t l = 0; rv == WT_OK && l < c->L; l++)
		rv = layer(r, l);
	if (rv == WT_OK)
		rv = head(r, logits);
	free(buf);
	return rv;
}

int ref_g3n_full(const ref_cfg *c, ref_set *ck, const int64_t *tokens, size_t n_tok, float *logits,
                 wt_errbuf *err)
{
	g3n_run r = {
	    .c = c, .sets = ck, .T = 1, .Vl = c->V, .ckpt = true, .n = (int64_t)n_tok, .err = err};
	return run(&r, tokens, logits);
}

int ref_g3n_sharded(const ref_cfg *c, ref_set *ranks, uint32_t T, int64_t Vl, const int64_t *tokens,
                    size_t n_tok, float *logits, wt_errbuf *err)
{
	g3n_run r = {.c = c, .sets = ranks, .T = T, .Vl = Vl, .n = (int64_t)n_tok, .err = err};
	return run(&r, tokens, logits);
}
