/*
 * cfg_olmo3.c — OLMo 3 (Olmo3ForCausalLM) and EXAONE 4.0 (Exaone4ForCausalLM), the hybrid
 * sliding-window decoders on OLMo 2's block: their config.json fields with Olmo3Config's /
 * Exaone4Config's defaults (transformers 4.57.1, configuration_olmo3.py,
 * configuration_exaone4.py).
 *
 * The math followed (modeling_olmo3.py, 4.57.1): OLMo 2's decoder (olmo2 set: no input
 * norms, post_attention_layernorm / post_feedforward_layernorm on the block outputs,
 * RMSNorm q_norm [H*d] / k_norm [KV*d] over the whole projections before RoPE), with
 * two kinds of layer. layer_types (absent: every fourth layer, (i + 1) % 4 == 0,
 * full_attention, the others sliding_attention) decides: a sliding_attention layer
 * masks key s from query t unless t - s < sliding_window and turns q / k by
 * Olmo3RotaryEmbedding(rope_type="default") — rope_theta alone, rope_scaling ignored;
 * a full_attention layer is causal and turns them by rope_scaling (linear, dynamic,
 * llama3, yarn: cfg_rope.c). Both rotate-half.
 *
 *   key                      default     what the reference does with it
 *   rms_norm_eps             1e-5        every RMSNorm
 *   hidden_act               silu        the MLP's gate
 *   rope_theta               10000       both RoPEs' base
 *   rope_scaling             null        full_attention layers only
 *   sliding_window           4096        sliding_attention layers; null is refused
 *                                        (transformers builds no sliding mask without it)
 *   layer_types              absent      the pattern rule (ref_layer_types)
 *
 * EXAONE 4.0 (modeling_exaone4.py, 4.57.1): the same block (no input norms, the two post
 * norms) with Qwen3's per-head RMSNorm q_norm / k_norm [d] (one weight for every head)
 * before RoPE, and one RoPE, rope_scaling included (Exaone4RotaryEmbedding; EXAONE 4.0
 * 32B: llama3), on every layer that has it: with sliding_window set, the sliding layers
 * turn q / k and mask by the window and the full_attention layers attend causally
 * WITHOUT RoPE ("global NoPE": Exaone4Attention applies it when sliding_window is None or
 * the layer slides); with sliding_window null no layer may slide and every layer has
 * RoPE. Without layer_types layer i is full when (i + 1) % sliding_window_pattern == 0.
 *
 *   key                      default     what the reference does with it
 *   rms_norm_eps             1e-5        every RMSNorm
 *   hidden_act               silu        the MLP's gate
 *   rope_theta, rope_scaling 10000, -    cfg_rope.c, on every RoPE layer
 *   sliding_window           4096        the sliding layers; null: none, RoPE everywhere
 *   sliding_window_pattern   4           without layer_types; a string ("LLLG") or null
 *                                        is refused there (Exaone4Config computes
 *                                        (i + 1) % pattern, as it does with a null window
 *                                        and no layer_types: a zero pattern)
 *   layer_types              absent      the pattern rule (ref_layer_types)
 *   tie_word_embeddings      false       lm_head, or the embedding when true
 */
#include <jansson.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { O_ACT, O_EPS, O_WINDOW, O_MAX_POS, O_COUNT };

static int read_fields(const char *json, size_t len, ckpt_field *f, wt_errbuf *err)
{
	static const ckpt_field spec[O_COUNT] = {
	    [O_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [O_EPS] = {"rms_norm_eps", CKPT_FIELD_REAL},
	    [O_WINDOW] = {"sliding_window", CKPT_FIELD_INT},
	    [O_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	};
	memcpy(f, spec, sizeof(spec)); /* keys and kinds, outputs cleared */
	return ckpt_config_fields(json, len, f, O_COUNT, err);
}

/* The sliding / full layers: layer_types when given, else every `pattern`-th layer full;
 * sliding_window (absent: def) on the others, a null one refused when a layer slides. */
static int parse_layers(json_t *root, const ckpt_field *f, int64_t pattern, int64_t def,
                        const char *fam, ref_cfg *c, wt_errbuf *err)
{
	json_t *lt = ref_lm_get(root, "layer_types");
	int rv = WT_OK;
	c->window_pattern = pattern;
	if (lt != NULL && !json_is_null(lt) && (rv = ref_layer_types(c, lt, fam, err)) != WT_OK)
		return rv;
	bool slides = c->window_pattern != 1; /* pattern 1: every layer full */
	json_t *w = ref_lm_get(root, "sliding_window");
	if (slides && w != NULL && json_is_null(w))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: sliding_window is null but %s has sliding_attention "
		                 "layers; give the window (%s's default: %lld)",
		                 fam, fam, (long long)def);
	c->window = f[O_WINDOW].present ? f[O_WINDOW].i : def;
	if (slides && c->window < 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: sliding_window %lld; %s's sliding layers need a "
		                 "positive window",
		                 (long long)c->window, fam);
	if (!slides)
		c->window = 0; /* ref_layer_attn: no layer local */
	return WT_OK;
}

int ref_cfg_olmo3(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[O_COUNT];
	int rv = read_fields(json, len, f, err);
	if (rv == WT_OK)
		rv = ref_cfg_act(&f[O_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	c->eps = f[O_EPS].present ? f[O_EPS].r : 1e-5;
	c->sandwich = true; /* post_attention_layernorm, post_feedforward_layernorm */
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	rv = parse_layers(root, f, 4, 4096, "OLMo 3", c, err);
	ref_rope_in in = {arch ? arch : "Olmo3ForCausalLM", c->d,
	                  f[O_MAX_POS].present ? f[O_MAX_POS].i : 0};
	if (rv == WT_OK)
		rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	/* the sliding layers' RoPE: the default one on the same base (ref_rope_layer leaves
	 * out the scaling's divisors, attention factor and dynamic base there) */
	c->theta_local = c->theta;
	c->rope_factor[1] = 0.0;
	return rv;
}

/* EXAONE 4.0's full-layer period without layer_types: sliding_window_pattern (absent: 4),
 * a positive integer as Exaone4Config's (i + 1) % pattern needs; *pattern untouched when
 * layer_types is given (ref_layer_types decides). */
static int exaone4_pattern(json_t *root, bool no_window, int64_t *pattern, wt_errbuf *err)
{
	json_t *lt = ref_lm_get(root, "layer_types"), *p;
	if (lt != NULL && !json_is_null(lt))
		return WT_OK;
	if (no_window)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: sliding_window is null and layer_types absent; "
		                 "Exaone4Config then divides by a zero pattern: list layer_types "
		                 "(\"full_attention\" for every layer)");
	if ((p = ref_lm_get(root, "sliding_window_pattern")) == NULL)
		return WT_OK; /* Exaone4Config's 4 */
	if (!json_is_integer(p) || json_integer_value(p) < 1)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: sliding_window_pattern is not a positive integer and "
		    "layer_types is absent; Exaone4Config computes (i + 1) %% pattern: "
		    "give an integer (default 4) or list layer_types");
	*pattern = (int64_t)json_integer_value(p);
	return WT_OK;
}

int ref_cfg_exaone4(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[O_COUNT];
	int rv = read_fields(json, len, f, err);
	if (rv == WT_OK)
		rv = ref_cfg_act(&f[O_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	c->eps = f[O_EPS].present ? f[O_EPS].r : 1e-5;
	c->sandwich = true; /* post_attention_layernorm, post_feedforward_layernorm */
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	json_t *w = ref_lm_get(root, "sliding_window");
	bool no_window = w != NULL && json_is_null(w);
	int64_t pattern = 4;
	rv = exaone4_pattern(root, no_window, &pattern, err);
	if (rv == WT_OK)
		rv = parse_layers(root, f, pattern, 4096, "EXAONE 4.0", c, err);
	c->nope_global = !no_window; /* the full layers: NoPE while a window is set */
	ref_rope_in in = {arch ? arch : "Exaone4ForCausalLM", c->d,
	                  f[O_MAX_POS].present ? f[O_MAX_POS].i : 0};
	if (rv == WT_OK)
		rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	/* one RoPE for every layer that has it */
	c->theta_local = c->theta;
	c->rope_factor[1] = c->rope_factor[0];
	return rv;
}
