/*
 * cfg_gpt_oss.c — GPT-OSS (GptOssForCausalLM, openai/gpt-oss-20b / -120b): its
 * config.json fields with GptOssConfig's defaults (transformers 4.57.1,
 * configuration_gpt_oss.py). The math is in gpt_oss.c.
 *
 *   key                  default (GptOssConfig)     what the reference does with it
 *   rms_norm_eps         1e-5                       every RMSNorm
 *   rope_theta           150000                     RoPE base
 *   rope_scaling         absent: yarn, factor 32,   cfg_rope.c's yarn (truncate false:
 *                        beta_fast 32, beta_slow 1, the correction range is not
 *                        truncate false, original   floored / ceiled); null: plain RoPE;
 *                        max 4096                   other types as cfg_rope.c takes them
 *   sliding_window       128                        window of the sliding layers (null
 *                                                   refused, as transformers does)
 *   layer_types          sliding_attention on even  full_attention every n-th layer
 *                        layers, full on odd         (ref_layer_types); other lists refused
 *   swiglu_limit         7.0                        the experts' clamp (see below)
 *   num_experts_per_tok  required                   top-k of the router logits
 *   hidden_act           ignored                    GptOssExperts' SwiGLU is fixed
 *   attention_bias       ignored (always true)      q/k/v/o biases are read when present
 *
 * GptOssConfig takes rope_scaling's default only when the key is absent: an
 * explicit null is the plain RoPE, as transformers reads it. transformers 4.57's
 * GptOssExperts clamps at a constant 7.0 and never reads swiglu_limit; the reference
 * uses the config's value (the released configs say 7.0, and vLLM reads it), so the
 * two differ only for a config that sets another limit.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { G_EPS, G_THETA, G_WINDOW, G_LIMIT, G_MAX_POS, G_COUNT };

static int read_fields(const char *json, size_t len, ckpt_field *f, wt_errbuf *err)
{
	static const ckpt_field spec[G_COUNT] = {
	    [G_EPS] = {"rms_norm_eps", CKPT_FIELD_REAL},
	    [G_THETA] = {"rope_theta", CKPT_FIELD_REAL},
	    [G_WINDOW] = {"sliding_window", CKPT_FIELD_INT},
	    [G_LIMIT] = {"swiglu_limit", CKPT_FIELD_REAL},
	    [G_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	};
	memcpy(f, spec, sizeof(spec)); /* keys and kinds, outputs cleared */
	return ckpt_config_fields(json, len, f, G_COUNT, err);
}

/* GptOssConfig's rope_scaling default, set on root when config.json has no
 * rope_scaling (nor rope_parameters) key at all. */
static int default_rope(json_t *root, wt_errbuf *err)
{
	if (ref_lm_get(root, "rope_scaling") != NULL || ref_lm_get(root, "rope_parameters") != NULL)
		return WT_OK;
	json_t *o = json_pack("{s:s, s:f, s:f, s:f, s:b, s:i}", "rope_type", "yarn", "factor", 32.0,
	                      "beta_fast", 32.0, "beta_slow", 1.0, "truncate", 0,
	                      "original_max_position_embeddings", 4096);
	if (o == NULL || json_object_set_new(root, "rope_scaling", o) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* layer_types, or GptOssConfig's default: layer i sliding when (i + 1) % 2 != 0. */
static int layer_pattern(json_t *root, ref_cfg *c, wt_errbuf *err)
{
	json_t *lt = ref_lm_get(root, "layer_types");
	c->window_pattern = 2;
	if (lt == NULL || json_is_null(lt))
		return WT_OK;
	return ref_layer_types(c, lt, "GPT-OSS", err);
}

static int check_values(const ref_cfg *c, wt_errbuf *err)
{
	if (!(c->eps > 0.0) || !(c->theta > 1.0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rms_norm_eps %g, rope_theta %g; the reference needs "
		                 "eps > 0 and theta > 1",
		                 c->eps, c->theta);
	if (!(c->swiglu_limit > 0.0 && c->swiglu_limit < 1e6))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: swiglu_limit %g; it must be in (0, 1e6) (released "
		                 "models: 7.0)",
		                 c->swiglu_limit);
	return WT_OK;
}

/* A sliding layer needs a positive sliding_window; an explicit null is refused, as
 * transformers' create_sliding_window_causal_mask refuses it. */
static int check_window(json_t *root, const ref_cfg *c, wt_errbuf *err)
{
	if (c->window_pattern == 1) /* every layer full_attention */
		return WT_OK;
	if (json_is_null(ref_lm_get(root, "sliding_window")))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: sliding_window is null; GPT-OSS's sliding_attention "
		                 "layers need a window (released models: 128)");
	if (c->window < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: sliding_window %lld; GPT-OSS's sliding_attention "
		                 "layers need a positive window (released models: 128)",
		                 (long long)c->window);
	return WT_OK;
}

int ref_cfg_gpt_oss(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[G_COUNT];
	int rv = read_fields(json, len, f, err);
	if (rv != WT_OK)
		return rv;
	c->act = REF_ACT_SILU; /* unused: the experts' activation is fixed */
	c->eps = f[G_EPS].present ? f[G_EPS].r : 1e-5;
	c->theta = f[G_THETA].present ? f[G_THETA].r : 150000.0;
	c->theta_local = c->theta;
	c->window = f[G_WINDOW].present ? f[G_WINDOW].i : 128;
	c->swiglu_limit = f[G_LIMIT].present ? f[G_LIMIT].r : 7.0;
	c->sparse_step = 1; /* every layer MoE, no shared expert */
	c->mlp_only_mask = 0;
	c->Is = 0;
	if ((rv = check_values(c, err)) != WT_OK)
		return rv;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	ref_rope_in in = {arch ? arch : "GptOssForCausalLM", c->d,
	                  f[G_MAX_POS].present ? f[G_MAX_POS].i : 131072};
	rv = default_rope(root, err);
	if (rv == WT_OK)
		rv = layer_pattern(root, c, err);
	if (rv == WT_OK)
		rv = check_window(root, c, err);
	if (rv == WT_OK)
		rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	return rv;
}
