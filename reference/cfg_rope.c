/*
 * cfg_rope.c — RoPE scaling of the reference forward pass: config.json's
 * rope_scaling (transformers 5.x: rope_parameters) turned into per-frequency
 * divisors, a linear factor, a dynamic-NTK base and an attention factor on
 * ref_cfg, the way transformers 4.57.1's modeling_rope_utils computes them for
 * every family built on its generic rotary embedding (Llama, Mistral, Qwen2/3,
 * Mixtral, Qwen-MoE, StarCoder2, GLM-4, Phi-3, OLMo 2, DeepSeek-V2/V3).
 *
 *   type (rope_type, else type)  what the reference does
 *   absent, default, mrope       base frequencies theta^(-2i / rd) (Qwen2-VL's
 *                                "mrope" is the default on text tokens)
 *   linear                       every frequency / factor
 *   dynamic                      NTK: when the tokens T exceed
 *                                max_position_embeddings, base times
 *                                (factor T / max - (factor - 1))^(rd / (rd - 2));
 *                                below it the default (transformers' dynamic
 *                                update; positions here are 0..T-1)
 *   llama3                       Llama 3.1's piecewise frequencies: wavelength
 *                                below original / high_freq_factor kept, above
 *                                original / low_freq_factor divided by factor,
 *                                between them blended (Llama 4 only: low ==
 *                                high, no band; ref_rope_in llama3_step)
 *   yarn                         frequencies blended between interpolated (/ factor)
 *                                and extrapolated by a linear ramp between the
 *                                correction dims of beta_fast (32) and beta_slow
 *                                (1) at original_max_position_embeddings (else
 *                                max_position_embeddings), floor/ceil unless
 *                                truncate is false; cos and sin times
 *                                attention_factor, default
 *                                mscale(factor, mscale) / mscale(factor,
 *                                mscale_all_dim) when both are set, else
 *                                mscale(factor), mscale(s, m) = 0.1 m ln s + 1
 *                                (1 for s <= 1)
 *   longrope (Phi-3 only)        cfg_fam.c's LongRoPE
 *
 * DeepSeek (V2 and V3) also multiply the softmax scale by
 * mscale(factor, mscale_all_dim)^2 when rope_scaling sets mscale_all_dim:
 * DeepSeek's own modeling code for both, transformers' DeepseekV3Attention,
 * vLLM. transformers 4.57's DeepseekV2Attention leaves the softmax scale alone;
 * the reference follows DeepSeek's code (one rule for both generations).
 *
 * transformers computes the frequencies in float32, the reference in double:
 * at the reference's positions (below 64) the angles agree to ~1e-6.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

json_t *ref_rope_obj(json_t *root, const char **key, const char **type)
{
	json_t *o = ref_lm_get(root, "rope_parameters");
	*key = "rope_parameters";
	if (!json_is_object(o)) {
		o = ref_lm_get(root, "rope_scaling");
		*key = "rope_scaling";
	}
	*type = NULL;
	if (!json_is_object(o))
		return NULL;
	json_t *t = json_object_get(o, "rope_type");
	if (!json_is_string(t))
		t = json_object_get(o, "type");
	*type = json_string_value(t);
	return o;
}

/* Number member name of o into *out (def when absent or null). need: required. */
static int num_member(json_t *o, const char *where, const char *name, double def, bool need,
                      double *out, wt_errbuf *err)
{
	json_t *v = json_object_get(o, name);
	if (v == NULL || json_is_null(v)) {
		if (need)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: %s.%s is missing; this rope type needs it",
			                 where, name);
		*out = def;
		return WT_OK;
	}
	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		return wt_seterr(err, WT_ECORRUPT, "config.json: %s.%s is not a finite number",
		                 where, name);
	*out = json_number_value(v);
	return WT_OK;
}

/* The scaling factor: a number >= 1 (transformers' validation). */
static int factor_member(json_t *o, const char *where, double *f, wt_errbuf *err)
{
	int rv = num_member(o, where, "factor", 0.0, true, f, err);
	if (rv == WT_OK && !(*f >= 1.0 && *f <= 1e6))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s.factor %g; it must be from 1 to 1e6", where, *f);
	return rv;
}

static double yarn_mscale(double scale, double m)
{
	return scale <= 1.0 ? 1.0 : 0.1 * m * log(scale) + 1.0;
}

/* The per-frequency divisors rd/2 of c: one list for every length. */
static void set_divisors(ref_cfg *c, int64_t rd, const double *inv_base, const double *inv)
{
	for (int64_t i = 0; i < rd / 2; i++)
		c->rope_ext[0][i] = c->rope_ext[1][i] = inv_base[i] / inv[i];
	c->n_ext = rd / 2;
	c->rope_orig_max = INT64_MAX; /* never "long" */
}

static void base_freqs(double theta, int64_t rd, double *inv)
{
	for (int64_t i = 0; i < rd / 2; i++)
		inv[i] = 1.0 / pow(theta, (double)(2 * i) / (double)rd);
}

/* modeling_rope_utils._compute_llama3_parameters */
static int parse_llama3(json_t *o, const char *key, const ref_rope_in *in, ref_cfg *c,
                        wt_errbuf *err)
{
	double f, lo, hi, orig;
	int rv = factor_member(o, key, &f, err);
	if (rv == WT_OK)
		rv = num_member(o, key, "low_freq_factor", 0.0, true, &lo, err);
	if (rv == WT_OK)
		rv = num_member(o, key, "high_freq_factor", 0.0, true, &hi, err);
	if (rv == WT_OK)
		rv = num_member(o, key, "original_max_position_embeddings", 0.0, true, &orig, err);
	if (rv != WT_OK)
		return rv;
	if (!(lo > 0.0 && (hi > lo || (in->llama3_step && hi == lo)) && orig >= 1.0))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s low_freq_factor %g, high_freq_factor %g, "
		                 "original_max_position_embeddings %g; llama3 needs 0 < low < high "
		                 "and a positive length",
		                 key, lo, hi, orig);
	double inv0[REF_MAX_ROPE_EXT], inv[REF_MAX_ROPE_EXT];
	base_freqs(c->theta, in->rot_dim, inv0);
	double lo_wl = orig / lo, hi_wl = orig / hi;
	for (int64_t i = 0; i < in->rot_dim / 2; i++) {
		double wl = 2.0 * M_PI / inv0[i];
		if (wl > lo_wl) { /* transformers' order: the division first */
			inv[i] = inv0[i] / f;
		} else if (wl < hi_wl || hi == lo) {
			inv[i] = inv0[i];
		} else {
			double s = (orig / wl - lo) / (hi - lo);
			inv[i] = (1.0 - s) * inv0[i] / f + s * inv0[i];
		}
	}
	set_divisors(c, in->rot_dim, inv0, inv);
	return WT_OK;
}

/* find_correction_dim of _compute_yarn_parameters */
static double yarn_dim(double rot, int64_t rd, double base, double max_pos)
{
	return ((double)rd * log(max_pos / (rot * 2.0 * M_PI))) / (2.0 * log(base));
}

/* The members yarn_fields reads, in its v[] order. */
static const char *const yarn_names[7] = {
    "factor",           "beta_fast", "beta_slow",     "original_max_position_embeddings",
    "attention_factor", "mscale",    "mscale_all_dim"};

static int yarn_fields(json_t *o, const char *key, const ref_rope_in *in, double *v, bool *truncate,
                       wt_errbuf *err)
{
	/* v: factor, beta_fast, beta_slow, original max, attention_factor (0 = derive),
	 * mscale, mscale_all_dim */
	int rv = factor_member(o, key, &v[0], err);
	if (rv == WT_OK)
		rv = num_member(o, key, "beta_fast", 32.0, false, &v[1], err);
	if (rv == WT_OK)
		rv = num_member(o, key, "beta_slow", 1.0, false, &v[2], err);
	if (rv == WT_OK)
		rv = num_member(o, key, "original_max_position_embeddings", (double)in->max_pos,
		                false, &v[3], err);
	if (rv == WT_OK)
		rv = num_member(o, key, "attention_factor", 0.0, false, &v[4], err);
	if (rv == WT_OK)
		rv = num_member(o, key, "mscale", 0.0, false, &v[5], err);
	if (rv == WT_OK)
		rv = num_member(o, key, "mscale_all_dim", 0.0, false, &v[6], err);
	if (rv != WT_OK)
		return rv;
	v[1] = v[1] != 0.0 ? v[1] : 32.0; /* transformers: `get("beta_fast") or 32` */
	v[2] = v[2] != 0.0 ? v[2] : 1.0;
	json_t *t = json_object_get(o, "truncate");
	if (t != NULL && !json_is_null(t) && !json_is_boolean(t))
		return wt_seterr(err, WT_ECORRUPT, "config.json: %s.truncate is not true or false",
		                 key);
	*truncate = t == NULL || json_is_null(t) || json_is_true(t);
	if (!(v[1] > 0.0 && v[2] > 0.0 && v[3] >= 1.0 && v[4] >= 0.0))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s beta_fast %g, beta_slow %g, original length %g, "
		                 "attention_factor %g; yarn needs positive betas and length (%s",
		                 key, v[1], v[2], v[3], v[4],
		                 in->max_pos > 0 ? "and a non-negative attention_factor)"
		                                 : "max_position_embeddings is absent: set "
		                                   "original_max_position_embeddings)");
	/* released values: betas 32 / 1, mscale 0.707-1, attention factors near 1; far
	 * outside that the scaled cos / sin or scores overflow float32 */
	for (int k = 1; k < 7; k++)
		if (k != 3 && !(fabs(v[k]) <= 1e3))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: %s.%s %g; the reference takes values up to "
			                 "1000 in magnitude",
			                 key, yarn_names[k], v[k]);
	return WT_OK;
}

/* modeling_rope_utils._compute_yarn_parameters (4.57.1) */
static int parse_yarn(json_t *o, const char *key, const ref_rope_in *in, ref_cfg *c, wt_errbuf *err)
{
	double v[7];
	bool truncate = true;
	int rv = yarn_fields(o, key, in, v, &truncate, err);
	if (rv != WT_OK)
		return rv;
	double f = v[0], base = c->theta;
	int64_t rd = in->rot_dim, half = rd / 2;
	double lo = yarn_dim(v[1], rd, base, v[3]), hi = yarn_dim(v[2], rd, base, v[3]);
	if (truncate) {
		lo = floor(lo);
		hi = ceil(hi);
	}
	lo = lo > 0.0 ? lo : 0.0;
	hi = hi < (double)(rd - 1) ? hi : (double)(rd - 1);
	if (lo == hi)
		hi += 0.001; /* transformers: "prevent singularity" */
	double inv0[REF_MAX_ROPE_EXT], inv[REF_MAX_ROPE_EXT];
	base_freqs(base, rd, inv0);
	for (int64_t i = 0; i < half; i++) {
		double ramp = ((double)i - lo) / (hi - lo);
		ramp = ramp < 0.0 ? 0.0 : ramp > 1.0 ? 1.0 : ramp;
		double extra = 1.0 - ramp; /* the extrapolated share */
		inv[i] = inv0[i] / f * (1.0 - extra) + inv0[i] * extra;
	}
	set_divisors(c, rd, inv0, inv);
	if (v[4] > 0.0)
		c->rope_mscale = v[4];
	else if (v[5] != 0.0 && v[6] != 0.0)
		c->rope_mscale = yarn_mscale(f, v[5]) / yarn_mscale(f, v[6]);
	else
		c->rope_mscale = yarn_mscale(f, 1.0);
	return WT_OK;
}

/* DeepSeek's softmax scale: times mscale(factor, mscale_all_dim)^2. */
static int deepseek_softmax(json_t *o, const char *key, ref_cfg *c, wt_errbuf *err)
{
	double m, f;
	int rv = num_member(o, key, "mscale_all_dim", 0.0, false, &m, err);
	if (rv != WT_OK || m == 0.0)
		return rv;
	if (!(fabs(m) <= 1e3))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s.mscale_all_dim %g; the reference takes values up "
		                 "to 1000 in magnitude",
		                 key, m);
	if ((rv = factor_member(o, key, &f, err)) != WT_OK)
		return rv;
	double s = yarn_mscale(f, m);
	c->attn_scale = s * s / sqrt((double)(c->nope + c->rope));
	return WT_OK;
}

int ref_cfg_rope(json_t *root, const ref_rope_in *in, ref_cfg *c, wt_errbuf *err)
{
	const char *key, *type;
	json_t *o = ref_rope_obj(root, &key, &type);
	if (o == NULL || type == NULL || strcmp(type, "default") == 0 || strcmp(type, "mrope") == 0)
		return WT_OK;
	if (in->rot_dim < 2 || in->rot_dim / 2 > REF_MAX_ROPE_EXT)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s type '%s' over %lld rotary dims; the reference "
		                 "takes 2 to %d",
		                 key, type, (long long)in->rot_dim, 2 * REF_MAX_ROPE_EXT);
	int rv;
	double f;
	if (strcmp(type, "linear") == 0) {
		if ((rv = factor_member(o, key, &f, err)) != WT_OK)
			return rv;
		c->rope_factor[0] = c->rope_factor[1] = f;
	} else if (strcmp(type, "dynamic") == 0) {
		if ((rv = factor_member(o, key, &f, err)) != WT_OK)
			return rv;
		c->rope_dyn = f;
		c->rope_dyn_max =
		    in->max_pos; /* absent: every family's default exceeds 64 tokens */
	} else if (strcmp(type, "llama3") == 0) {
		rv = parse_llama3(o, key, in, c, err);
	} else if (strcmp(type, "yarn") == 0) {
		rv = parse_yarn(o, key, in, c, err);
	} else {
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s type '%s' on %s; the reference has default, "
		                 "linear, dynamic, llama3 and yarn%s",
		                 key, type, in->arch,
		                 strcmp(type, "longrope") == 0 ? " (longrope: Phi-3 only)" : "");
	}
	if (rv == WT_OK && ref_is_mla(c)) /* GLM-4.5: transformers' YaRN on cos / sin */
		rv = deepseek_softmax(o, key, c, err);
	return rv;
}
