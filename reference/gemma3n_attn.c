/*
 * gemma3n_attn.c — Gemma 3n's attention and config for the reference (gemma3n.c runs the rest).
 *
 * Attention of layer l on the normed input h: q / k / v of each rank's heads (the checkpoint's
 * q_proj / k_proj / v_proj, or the rank's qkv_proj [q_r; k_r; v_r]), per head q_norm, k_norm
 * and a weightless v_norm (RMSNorm, rms_norm_eps), RoPE (rotate-half) with rope_theta on the
 * full_attention layers and rope_local_base_freq on the sliding ones, causal softmax with
 * scale 1 and the sliding layers' window, o_proj; the ranks' o_proj outputs summed in rank
 * order. A KV-shared layer (the last num_kv_shared_layers) reads the keys and values its
 * source layer (g3n_src: the last earlier layer of its type, as transformers picks it and
 * the planner checks vLLM would) computed and left in kc / vc; its own k_proj / v_proj are
 * not used (transformers and vLLM do the same).
 *
 * Config (ref_cfg_g3n; transformers 4.57.1 Gemma3nTextConfig's defaults):
 *   key                           default   what the reference does with it
 *   final_logit_softcapping       30.0      cap * tanh(logits / cap); null: none
 *   sliding_window                512       the sliding_attention layers' window
 *   rope_theta / rope_local_base_freq  1e6 / 1e4  RoPE bases (full / sliding layers)
 *   rope_scaling                  null      anything else refused (bases <= 0, eps or cap < 0 too)
 *   rms_norm_eps                  1e-6      every RMSNorm (weights plain, no 1 + w)
 *   activation_sparsity_pattern   0.95 x 10 then 0 (more than 10 layers; else all 0)
 *                                           the gaussian top-k's quantile per layer
 * The sizes (altup_num_inputs, altup_active_idx, laurel_rank, hidden_size_per_layer_input,
 * vocab_size_per_layer_input, num_kv_shared_layers, layer_types) come from the loader
 * (ref_g3n_layers).
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

/* Per-head RMSNorm of rows [n, heads * d] (w NULL: weightless). */
static void head_norm(float *x, int64_t n, int64_t heads, int64_t d, const float *w, float eps,
                      const float *ones)
{
	ref_rmsnorm(x, x, w != NULL ? w : ones, n * heads, d, eps);
}

/* Rank k's q (and, unless the layer shares them, k and v) of layer l into q, k, v. */
static int project(const ref_cfg *c, ref_set *s, bool from_ckpt, int64_t l, const float *h,
                   int64_t n, int64_t Hl, int64_t KVl, bool kv, float *q, float *k, float *v,
                   wt_errbuf *err)
{
	int64_t hid = c->hid, d = c->d, qd = Hl * d, kd = KVl * d;
	long long L = (long long)l;
	const float *w, *wk = NULL, *wv = NULL;
	int rv;
	if (from_ckpt) {
		rv = ref_getf(s, &w, false, err, 2, qd, hid, 0,
		              "model.layers.%lld.self_attn.q_proj.weight", L);
		if (rv == WT_OK && kv)
			rv = ref_getf(s, &wk, false, err, 2, kd, hid, 0,
			              "model.layers.%lld.self_attn.k_proj.weight", L);
		if (rv == WT_OK && kv)
			rv = ref_getf(s, &wv, false, err, 2, kd, hid, 0,
			              "model.layers.%lld.self_attn.v_proj.weight", L);
	} else {
		rv = ref_getf(s, &w, false, err, 2, qd + 2 * kd, hid, 0,
		              "model.layers.%lld.self_attn.qkv_proj.weight", L);
		wk = w + qd * hid;
		wv = wk + kd * hid;
	}
	if (rv != WT_OK)
		return rv;
	ref_linear(q, h, w, NULL, n, hid, qd);
	if (kv) {
		ref_linear(k, h, wk, NULL, n, hid, kd);
		ref_linear(v, h, wv, NULL, n, hid, kd);
	}
	return WT_OK;
}

/* q / k norms, v's weightless norm, RoPE of layer l. */
static int qkv_post(const ref_cfg *c, ref_set *s, int64_t l, int64_t n, int64_t Hl, int64_t KVl,
                    bool kv, float *q, float *k, float *v, const float *ones, wt_errbuf *err)
{
	const float *qn, *kn;
	long long L = (long long)l;
	float eps = (float)c->eps;
	int rv = ref_getf(s, &qn, false, err, 1, c->d, 0, 0,
	                  "model.layers.%lld.self_attn.q_norm.weight", L);
	if (rv == WT_OK)
		rv = ref_getf(s, &kn, false, err, 1, c->d, 0, 0,
		              "model.layers.%lld.self_attn.k_norm.weight", L);
	if (rv != WT_OK)
		return rv;
	bool full = (c->g3n_full[l / 64] >> (l % 64)) & 1u;
	double theta = full ? c->theta : c->theta_local;
	head_norm(q, n, Hl, c->d, qn, eps, ones);
	ref_rope(q, n, Hl, c->d, Hl * c->d, theta);
	if (kv) {
		head_norm(k, n, KVl, c->d, kn, eps, ones);
		head_norm(v, n, KVl, c->d, NULL, eps, ones);
		ref_rope(k, n, KVl, c->d, KVl * c->d, theta);
	}
	return WT_OK;
}

int ref_g3n_attn(const ref_cfg *c, ref_set *sets, uint32_t T, bool from_ckpt, int64_t l,
                 const float *h, int64_t n, float *kc, float *vc, float *acc, wt_errbuf *err)
{
	int64_t hid = c->hid, d = c->d, Hl = c->H / (int64_t)T;
	int64_t KVl = c->KV >= (int64_t)T ? c->KV / (int64_t)T : 1, per = n * KVl * d;
	int64_t src = c->g3n_src[l], kv_of[REF_MAX_HEADS];
	for (int64_t j = 0; j < Hl; j++)
		kv_of[j] = j / (Hl / KVl);
	ref_attn_opt ao = {.causal = true, .scale = 1.0f};
	if (!((c->g3n_full[l / 64] >> (l % 64)) & 1u))
		ao.window = c->window;
	float *q = malloc((size_t)(n * (2 * Hl * d + d)) * sizeof(float));
	if (q == NULL)
		return wt_seterr(err, WT_ENOMEM, "reference attention: out of memory");
	float *att = q + n * Hl * d, *ones = att + n * Hl * d, *o = q; /* o reuses q after */
	for (int64_t i = 0; i < d; i++)
		ones[i] = 1.0f;
	memset(acc, 0, (size_t)(n * hid) * sizeof(float));
	int rv = WT_OK;
	for (uint32_t k = 0; k < T && rv == WT_OK; k++) {
		float *kk = kc + (l * (int64_t)T + k) * per, *vv = vc + (l * (int64_t)T + k) * per;
		bool own = src < 0;
		const float *wo;
		if ((rv = project(c, &sets[k], from_ckpt, l, h, n, Hl, KVl, own, q, kk, vv, err)) ||
		    (rv = qkv_post(c, &sets[k], l, n, Hl, KVl, own, q, kk, vv, ones, err)) ||
		    (rv = ref_getf(&sets[k], &wo, false, err, 2, hid, Hl * d, 0,
		                   "model.layers.%lld.self_attn.o_proj.weight", (long long)l)))
			break;
		if (!own) {
			kk = kc + (src * (int64_t)T + k) * per;
			vv = vc + (src * (int64_t)T + k) * per;
		}
		ref_attention(att, q, kk, vv, n, Hl, KVl, kv_of, d, &ao);
		for (int64_t t = 0; t < n; t++) {
			ref_linear(o, att + t * Hl * d, wo, NULL, 1, Hl * d, hid);
			for (int64_t i = 0; i < hid; i++)
				acc[t * hid + i] += o[i];
		}
	}
	free(q);
	return rv;
}

/* The inverse of the standard normal CDF at p in (0, 1): Acklam's rational approximation, two
 * Newton steps on erfc (double precision). */
static double normal_icdf(double p)
{
	static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
	                           -2.759285104469687e+02, 1.383577518672690e+02,
	                           -3.066479806614716e+01, 2.506628277459239e+00};
	static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
	                           -1.556989798598866e+02, 6.680131188771972e+01,
	                           -1.328068155288572e+01};
	static const double cc[] = {-7.784894002430293e-03, -3.223964580411365e-01,
	                            -2.400758277161838e+00, -2.549732539343734e+00,
	                            4.374664141464968e+00,  2.938163982698783e+00};
	static const double dd[] = {7.784695709041462e-03, 3.224671290700398e-01,
	                            2.445134137142996e+00, 3.754408661907416e+00};
	double x, q = p < 0.5 ? p : 1.0 - p;
	if (q < 0.02425) {
		double t = sqrt(-2.0 * log(q));
		x = (((((cc[0] * t + cc[1]) * t + cc[2]) * t + cc[3]) * t + cc[4]) * t + cc[5]) /
		    ((((dd[0] * t + dd[1]) * t + dd[2]) * t + dd[3]) * t + 1.0);
		x = p < 0.5 ? x : -x;
	} else {
		double t = p - 0.5, r2 = t * t;
		x = (((((a[0] * r2 + a[1]) * r2 + a[2]) * r2 + a[3]) * r2 + a[4]) * r2 + a[5]) * t /
		    (((((b[0] * r2 + b[1]) * r2 + b[2]) * r2 + b[3]) * r2 + b[4]) * r2 + 1.0);
	}
	for (int i = 0; i < 2; i++) { /* Newton on Phi(x) - p */
		double e = 0.5 * erfc(-x / sqrt(2.0)) - p;
		x -= e * sqrt(2.0 * M_PI) * exp(x * x / 2.0);
	}
	return x;
}

/* activation_sparsity_pattern (the class default when absent or null) into g3n_zmul:
 * icdf(sparsity) in float32 as torch computes it, 0 for a dense layer. */
static int g3n_sparsity(ref_cfg *c, json_t *root, wt_errbuf *err)
{
	json_t *a = json_object_get(root, "activation_sparsity_pattern");
	bool dflt = a == NULL || json_is_null(a);
	if (!dflt && (!json_is_array(a) || (int64_t)json_array_size(a) != c->L))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: activation_sparsity_pattern is not one number per "
		                 "layer");
	for (int64_t l = 0; l < c->L; l++) {
		double sp = dflt ? (c->L > 10 && l < 10 ? 0.95 : 0.0)
		                 : json_number_value(json_array_get(a, (size_t)l));
		if (!(sp >= 0.0 && sp < 1.0))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: activation_sparsity_pattern[%lld] is not in "
			                 "[0, 1)",
			                 (long long)l);
		c->g3n_zmul[l] = sp > 0.0 ? (float)normal_icdf((double)(float)sp) : 0.0f;
	}
	return WT_OK;
}

int ref_cfg_g3n(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	json_error_t je;
	json_t *root = json_loadb(json, len, 0, &je);
	if (root == NULL)
		return wt_seterr(err, WT_ECORRUPT, "config.json: %s", je.text);
	json_t *cap = json_object_get(root, "final_logit_softcapping");
	json_t *rs = json_object_get(root, "rope_scaling");
	int rv = WT_OK;
	if (rs != NULL && !json_is_null(rs))
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: rope_scaling on %s; the reference has Gemma 3n's "
		               "default RoPE only (no released Gemma 3n scales it)",
		               arch ? arch : "Gemma3nForCausalLM");
	c->final_cap = cap == NULL ? 30.0 : json_is_number(cap) ? json_number_value(cap) : 0.0;
	json_t *sw = json_object_get(root, "sliding_window");
	c->window = json_is_integer(sw) ? (int64_t)json_integer_value(sw) : 512;
	json_t *th = json_object_get(root, "rope_theta"), *tl;
	tl = json_object_get(root, "rope_local_base_freq");
	c->theta = json_is_number(th) ? json_number_value(th) : 1000000.0;
	c->theta_local = json_is_number(tl) ? json_number_value(tl) : 10000.0;
	json_t *ep = json_object_get(root, "rms_norm_eps");
	c->eps = json_is_number(ep) ? json_number_value(ep) : 1e-6;
	if (rv == WT_OK && !(c->theta > 0 && c->theta_local > 0 && isfinite(c->theta) &&
	                     isfinite(c->theta_local) && c->eps >= 0 && isfinite(c->eps) &&
	                     c->final_cap >= 0 && isfinite(c->final_cap)))
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: rope_theta %g / rope_local_base_freq %g must be > 0, "
		               "rms_norm_eps %g and final_logit_softcapping %g >= 0 (finite)",
		               c->theta, c->theta_local, c->eps, c->final_cap);
	if (rv == WT_OK && (c->window < 1 || c->L > REF_G3N_MAX_LAYERS || c->H > REF_MAX_HEADS))
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: sliding_window %lld, %lld layers, %lld heads; the "
		               "reference needs a window >= 1, at most %d layers and %d heads",
		               (long long)c->window, (long long)c->L, (long long)c->H,
		               REF_G3N_MAX_LAYERS, REF_MAX_HEADS);
	if (rv == WT_OK)
		rv = g3n_sparsity(c, root, err);
	json_decref(root);
	return rv;
}

int ref_g3n_layers(const ckpt_config *cc, ref_cfg *c, wt_errbuf *err)
{
	c->g3n_alt = cc->g3n_altup;
	c->g3n_active = cc->g3n_active;
	c->g3n_laurel = cc->g3n_laurel;
	c->g3n_ple = cc->g3n_ple;
	c->g3n_pvocab = cc->g3n_ple_vocab;
	if (c->L > REF_G3N_MAX_LAYERS || !cc->has_layer_types || cc->n_layer_types != (size_t)c->L)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %lld layers with %zu layer_types; the reference needs "
		    "one type per layer and at most %d layers",
		    (long long)c->L, cc->n_layer_types, REF_G3N_MAX_LAYERS);
	int64_t first = c->L - cc->g3n_kv_shared;
	for (int64_t l = 0; l < c->L; l++) {
		bool full = cc->layer_types[l] == CKPT_LAYER_FULL_ATTN;
		if (full)
			c->g3n_full[l / 64] |= 1ull << (l % 64);
		c->g3n_src[l] = -1;
		for (int64_t k = first - 1; l >= first && first > 0 && k >= 0; k--)
			if (cc->layer_types[k] == cc->layer_types[l]) {
				c->g3n_src[l] = (int16_t)k;
				break;
			}
	}
	return WT_OK;
}
