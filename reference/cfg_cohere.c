/*
 * cfg_cohere.c — Cohere Command R / R+ (CohereForCausalLM) and Command R7B / Command A
 * (Cohere2ForCausalLM): their config.json fields with CohereConfig's / Cohere2Config's
 * defaults (transformers 4.57.1, configuration_cohere.py, configuration_cohere2.py), and
 * the per-head q/k LayerNorm both forward paths share.
 *
 * The math followed (modeling_cohere.py, modeling_cohere2.py, 4.57.1):
 *
 *   CohereLayerNorm: y = (x - mean) / sqrt(var + eps) * w, float32, no bias (eps
 *   layer_norm_eps), for input_layernorm, model.norm and the q/k norms. The decoder
 *   layer is parallel: h = input_layernorm(x); x = x + attn(h) + mlp(h) (no
 *   post_attention_layernorm). Attention is Llama's (q/k/v/o biases with
 *   attention_bias); with use_qk_norm (Command R+) q_norm [H, d] and k_norm [KV, d]
 *   normalise each head over its d dims with that head's own weight row, before RoPE.
 *   RoPE turns the adjacent pairs (x[2i], x[2i+1]) by theta^(-2i / d) (rotate_half over
 *   x[..., ::2] / x[..., 1::2], cos and sin repeat_interleave'd: rope_pairs). The MLP is
 *   down(act(gate(h)) * up(h)). The logits are lm_head(norm(x)) * logit_scale; tied
 *   unless tie_word_embeddings false.
 *
 *   Cohere2: the same without q/k norms, and layer_types (or, absent, every
 *   sliding_window_pattern-th layer full attention): a sliding_attention layer applies
 *   RoPE and the sliding window (key s seen by query t when t - s < sliding_window), a
 *   full_attention layer neither (NoPE: Cohere2Attention applies RoPE only when its
 *   sliding_window is set).
 *
 *   key                      default     what the reference does with it
 *   layer_norm_eps           1e-5        every LayerNorm
 *   logit_scale              0.0625      logits times it
 *   hidden_act               silu        the MLP's gate
 *   use_qk_norm              false       Cohere only: q_norm / k_norm per head
 *   rope_theta, rope_scaling 10000, -    cfg_rope.c (the same on every RoPE layer)
 *   sliding_window           4096        Cohere2's sliding layers
 *   sliding_window_pattern   4           Cohere2 without layer_types
 *   layer_types              absent      Cohere2: the pattern rule (ref_layer_types)
 */
#include <jansson.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { C_ACT, C_EPS, C_SCALE, C_QK_NORM, C_WINDOW, C_PATTERN, C_MAX_POS, C_COUNT };

static int read_fields(const char *json, size_t len, ckpt_field *f, wt_errbuf *err)
{
	static const ckpt_field spec[C_COUNT] = {
	    [C_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [C_EPS] = {"layer_norm_eps", CKPT_FIELD_REAL},
	    [C_SCALE] = {"logit_scale", CKPT_FIELD_REAL},
	    [C_QK_NORM] = {"use_qk_norm", CKPT_FIELD_BOOL},
	    [C_WINDOW] = {"sliding_window", CKPT_FIELD_INT},
	    [C_PATTERN] = {"sliding_window_pattern", CKPT_FIELD_INT},
	    [C_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	};
	memcpy(f, spec, sizeof(spec)); /* keys and kinds, outputs cleared */
	return ckpt_config_fields(json, len, f, C_COUNT, err);
}

/* Cohere2's layers: layer_types when given, else every sliding_window_pattern-th layer
 * full attention; sliding_window on the others. */
static int parse_layers(json_t *root, const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	c->window = f[C_WINDOW].present ? f[C_WINDOW].i : 4096;
	c->window_pattern = f[C_PATTERN].present ? f[C_PATTERN].i : 4;
	if (c->window < 1 || c->window_pattern < 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: sliding_window %lld, sliding_window_pattern %lld; "
		                 "Cohere2 needs both positive",
		                 (long long)c->window, (long long)c->window_pattern);
	json_t *lt = ref_lm_get(root, "layer_types");
	if (lt != NULL && !json_is_null(lt))
		return ref_layer_types(c, lt, "Cohere2", err);
	return WT_OK;
}

int ref_cfg_cohere(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[C_COUNT];
	int rv = read_fields(json, len, f, err);
	if (rv == WT_OK)
		rv = ref_cfg_act(&f[C_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	c->eps = f[C_EPS].present ? f[C_EPS].r : 1e-5;
	c->logit_mult = f[C_SCALE].present ? f[C_SCALE].r : 0.0625;
	if (!(c->logit_mult > -1e6 && c->logit_mult < 1e6) || c->logit_mult == 0.0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: logit_scale %g; it must be non-zero and within "
		                 "(-1e6, 1e6) (Command R: 0.0625)",
		                 c->logit_mult);
	c->layernorm = true; /* weight only: ref_norm_of reads no bias for Cohere */
	c->rope_pairs = true;
	c->qk_norm = c->cohere == 1 && f[C_QK_NORM].present && f[C_QK_NORM].b;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	c->window = 0;
	c->window_pattern = 0;
	if (c->cohere == 2)
		rv = parse_layers(root, f, c, err);
	ref_rope_in in = {arch ? arch : "CohereForCausalLM", c->d,
	                  f[C_MAX_POS].present ? f[C_MAX_POS].i : 0};
	if (rv == WT_OK)
		rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	/* one RoPE for every layer that has it: the local layers' base and scaling too */
	c->theta_local = c->theta;
	c->rope_factor[1] = c->rope_factor[0];
	return rv;
}

void ref_head_layernorm(const ref_cfg *c, float *x, const float *w, int64_t T, int64_t n_heads)
{
	int64_t d = c->d;
	for (int64_t t = 0; t < T; t++)
		for (int64_t h = 0; h < n_heads; h++) {
			float *xh = x + (t * n_heads + h) * d;
			ref_layernorm(xh, xh, w + h * d, NULL, 1, d, (float)c->eps);
		}
}
