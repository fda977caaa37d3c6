/*
 * cfg_phimoe.c — PhiMoE (PhiMoEForCausalLM / PhimoeForCausalLM, Phi-3.5-MoE): its
 * config.json fields with PhimoeConfig's defaults, and its router, sparsemixer.
 *
 * The math followed (modeling_phimoe.py, transformers 4.47.1): Mixtral's decoder with
 * nn.LayerNorm (weight and bias, eps rms_norm_eps) for input_layernorm,
 * post_attention_layernorm and model.norm (the layernorm switch, as StarCoder2's);
 * q/k/v/o biases when attention_bias; every layer a block_sparse_moe of
 * num_local_experts w1/w3/w2 experts (act hidden_act, silu); logits = lm_head(x) plus
 * lm_head.bias when lm_head_bias. Causal attention with sliding_window on every
 * layer (token t sees s with t - s < window).
 *
 * Router (sparsemixer, eval mode; training's Gumbel sampling and input jitter are
 * not modelled, as transformers does not run them at eval): scores s = gate(h) [E].
 * Expert 1 = argmax s (the lower index on ties), m = s[1st]; every e with
 * (m - s_e) / max(|s_e|, m) > 2 * router_jitter_noise is masked to -inf; weight 1 =
 * softmax(masked s)[1st]. Expert 2 = argmax of s without the first, m2 = its score;
 * the same mask against m2 over s with the first at -inf; weight 2 = that softmax at
 * the 2nd. The weights are not renormalised; num_experts_per_tok must be 2
 * (sparsemixer raises otherwise). All in float32, as transformers computes it. The
 * mask is a step in the scores: under a quantized layout the sharded path takes the
 * full path's kept sets with its expert choices (route codes, reference_int.h).
 *
 * RoPE: rope_scaling null is the plain RoPE (rope_theta, default 1e6). Type
 * "longrope" (PhimoeRotaryEmbedding over _compute_longrope_parameters): inverse
 * frequency i divided by short_factor[i] while the sequence is shorter than
 * rope_scaling.original_max_position_embeddings (long_factor[i] from there on), cos and
 * sin times short_mscale (long_mscale once the sequence passes it); both mscales are
 * required (PhimoeConfig raises without them). The reference runs at most
 * REF_MAX_TOKENS tokens, so it takes original_max_position_embeddings above that (4096
 * in the released model) and then uses the short factors and short_mscale only. Other
 * rope types are refused (WT_EUNSUPPORTED); PhimoeConfig's defaults: hidden_act silu,
 * rms_norm_eps 1e-5, rope_theta 1e6, router_jitter_noise 0.01, lm_head_bias false,
 * sliding_window none.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { P_ACT, P_EPS, P_THETA, P_WINDOW, P_JITTER, P_LMB, P_COUNT };

static int read_fields(const char *json, size_t len, ckpt_field *f, wt_errbuf *err)
{
	static const ckpt_field spec[P_COUNT] = {
	    [P_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [P_EPS] = {"rms_norm_eps", CKPT_FIELD_REAL},
	    [P_THETA] = {"rope_theta", CKPT_FIELD_REAL},
	    [P_WINDOW] = {"sliding_window", CKPT_FIELD_INT},
	    [P_JITTER] = {"router_jitter_noise", CKPT_FIELD_REAL},
	    [P_LMB] = {"lm_head_bias", CKPT_FIELD_BOOL},
	};
	memcpy(f, spec, sizeof(spec)); /* keys and kinds, outputs cleared */
	return ckpt_config_fields(json, len, f, P_COUNT, err);
}

/* A number member of rope object o in (0, 1000]. */
static int pos_member(json_t *o, const char *where, const char *key, double *out, wt_errbuf *err)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_number(v) || !(json_number_value(v) > 0.0 && json_number_value(v) <= 1000.0))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s.%s must be a number in (0, 1000] (PhiMoE's "
		                 "LongRoPE needs it)",
		                 where, key);
	*out = json_number_value(v);
	return WT_OK;
}

/* LongRoPE's factor list key of o (n numbers, each in (0, 1e6]) into out. */
static int factors(json_t *o, const char *where, const char *key, int64_t n, double *out,
                   wt_errbuf *err)
{
	json_t *a = json_object_get(o, key);
	if (!json_is_array(a) || (int64_t)json_array_size(a) != n)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s.%s is not a list of %lld numbers (half of "
		                 "head_dim)",
		                 where, key, (long long)n);
	for (int64_t i = 0; i < n; i++) {
		double v = json_number_value(json_array_get(a, (size_t)i));
		if (!json_is_number(json_array_get(a, (size_t)i)) || !(v > 0.0 && v <= 1e6))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: %s.%s[%lld] is not a number in (0, 1e6]",
			                 where, key, (long long)i);
		out[i] = v;
	}
	return WT_OK;
}

/* rope_scaling: null, or longrope with both factor lists and both mscales. */
static int phimoe_rope(json_t *root, ref_cfg *c, wt_errbuf *err)
{
	const char *key, *type;
	json_t *o = ref_rope_obj(root, &key, &type);
	if (o == NULL)
		return WT_OK;
	if (type == NULL || strcmp(type, "longrope") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s type '%s'; the reference has PhiMoE's 'longrope' "
		                 "(or rope_scaling null)",
		                 key, type ? type : "none");
	int64_t n = c->d / 2;
	if (n > REF_MAX_ROPE_EXT)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: longrope over head_dim %lld; the reference takes up "
		                 "to %d",
		                 (long long)c->d, 2 * REF_MAX_ROPE_EXT);
	json_t *om = json_object_get(o, "original_max_position_embeddings");
	if (!json_is_integer(om))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s.original_max_position_embeddings is missing or "
		                 "not an integer (PhiMoE's LongRoPE reads it there)",
		                 key);
	c->rope_orig_max = (int64_t)json_integer_value(om);
	if (c->rope_orig_max <= REF_MAX_TOKENS)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %s.original_max_position_embeddings %lld; the "
		    "reference runs up to %d tokens and models the short LongRoPE only, "
		    "so it needs a larger value (Phi-3.5-MoE: 4096)",
		    key, (long long)c->rope_orig_max, REF_MAX_TOKENS);
	double long_m;
	int rv = factors(o, key, "short_factor", n, c->rope_ext[0], err);
	if (rv == WT_OK)
		rv = factors(o, key, "long_factor", n, c->rope_ext[1], err);
	if (rv == WT_OK)
		rv = pos_member(o, key, "short_mscale", &c->rope_mscale, err);
	if (rv == WT_OK)
		rv = pos_member(o, key, "long_mscale", &long_m, err);
	if (rv == WT_OK)
		c->n_ext = n;
	return rv;
}

int ref_cfg_phimoe(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[P_COUNT];
	int rv = read_fields(json, len, f, err);
	if (rv != WT_OK)
		return rv;
	if (f[P_ACT].present && strcmp(f[P_ACT].s, "silu") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act '%s'; the reference has PhiMoE's silu",
		                 f[P_ACT].s);
	c->act = REF_ACT_SILU;
	c->eps = f[P_EPS].present ? f[P_EPS].r : 1e-5;
	c->theta = f[P_THETA].present ? f[P_THETA].r : 1e6;
	c->jitter_eps = f[P_JITTER].present ? f[P_JITTER].r : 0.01;
	c->lm_bias = f[P_LMB].present && f[P_LMB].b;
	c->window = f[P_WINDOW].present && f[P_WINDOW].i > 0 ? f[P_WINDOW].i : 0;
	c->window_pattern = 0;
	c->theta_local = c->theta;
	if (!(c->eps > 0.0) || !(c->theta > 1.0) || !(c->jitter_eps >= 0.0 && c->jitter_eps < 1.0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rms_norm_eps %g, rope_theta %g, router_jitter_noise "
		                 "%g; the reference needs eps > 0, theta > 1 and a noise in [0, 1)",
		                 c->eps, c->theta, c->jitter_eps);
	if (c->E > REF_PHIMOE_MAX_E)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: num_local_experts %lld; the reference's PhiMoE router "
		    "takes up to %d",
		    (long long)c->E, REF_PHIMOE_MAX_E);
	if (c->topk != 2)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: num_experts_per_tok %lld; PhiMoE's sparsemixer routes "
		    "exactly 2",
		    (long long)c->topk);
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	rv = phimoe_rope(root, c, err);
	json_decref(root);
	return rv;
}

/* One sparsemixer pick: the expert (argmax of s over those not in `taken`, or the
 * forced code's) and its weight, softmax at it over s with the taken experts and those
 * further than thr (relative) below it at -inf; *code = the expert | the kept set << 8.
 * A forced code with a kept set reuses that set (the full path's mask). */
static void sparse_pick(const float *s, int64_t E, float thr, uint64_t taken, int64_t forced,
                        int64_t *idx, float *w, int64_t *code)
{
	int64_t sel = forced < 0 ? -1 : forced & 0xff;
	uint64_t keep = forced < 0 ? 0 : (uint64_t)forced >> 8;
	const bool given = keep != 0;
	for (int64_t e = 0; forced < 0 && e < E; e++)
		if (!((taken >> e) & 1u) && (sel < 0 || s[e] > s[sel]))
			sel = e;
	float top = s[sel], g[REF_PHIMOE_MAX_E];
	for (int64_t e = 0; !given && e < E; e++) {
		float factor = fmaxf(fabsf(s[e]), top); /* |s|.clamp(min=top) */
		if (!((taken >> e) & 1u) && !((top - s[e]) / factor > thr))
			keep |= 1ull << e;
	}
	for (int64_t e = 0; e < E; e++)
		g[e] = ((keep >> e) & 1u) ? s[e] : -INFINITY;
	ref_softmax(g, g, E);
	*idx = sel;
	*w = g[sel];
	*code = sel | (int64_t)(keep << 8);
}

void ref_route_sparsemixer(const float *logits, int64_t E, double jitter_eps, const int64_t *forced,
                           int64_t *idx, float *w, int64_t *codes)
{
	float thr = (float)(2.0 * jitter_eps); /* torch compares float32 with the scalar */
	sparse_pick(logits, E, thr, 0, forced ? forced[0] : -1, &idx[0], &w[0], &codes[0]);
	sparse_pick(logits, E, thr, 1ull << idx[0], forced ? forced[1] : -1, &idx[1], &w[1],
	            &codes[1]);
}
