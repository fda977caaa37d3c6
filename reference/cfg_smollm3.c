/*
 * cfg_smollm3.c — SmolLM3 (SmolLM3ForCausalLM): its config.json fields with SmolLM3Config's
 * defaults (transformers 4.57.1, configuration_smollm3.py), on top of Llama's math.
 *
 * The math followed (modeling_smollm3.py, 4.57.1): Llama's RMSNorm decoder (q/k/v/o biases
 * with attention_bias, MLP biases with mlp_bias: added where the checkpoint has them), whose
 * layer i turns q and k by RoPE only when no_rope_layers[i] is true (Python truth: a
 * non-zero number); SmolLM3Config derives the list, when absent, as
 * int((i + 1) % no_rope_layer_interval != 0): every interval-th layer NoPE. Eager attention
 * takes the mask of the layer's layer_types entry: a sliding_attention layer sees key s
 * from query t when t - s < sliding_window (a null window there is transformers' error,
 * refused), whatever use_sliding_window says; layer_types absent is derived as
 * sliding_attention on the NoPE layers when use_sliding_window and sliding_window are set,
 * full_attention elsewhere. Tied unless tie_word_embeddings is false (PretrainedConfig's
 * default; the planner's tie_default).
 *
 *   key                      default     what the reference does with it
 *   rms_norm_eps             1e-6        every RMSNorm (the loader's class defaults)
 *   hidden_act               silu        the MLP's gate
 *   no_rope_layers           derived     c->nope_mask (bit i: layer i without RoPE)
 *   no_rope_layer_interval   4           the derivation above (0 is a division by zero)
 *   use_sliding_window       false       the layer_types derivation
 *   sliding_window           null        c->window of the sliding layers
 *   layer_types              derived     c->local_mask (bit i: layer i sliding)
 *   rope_theta, rope_scaling 2e6, -      cfg_rope.c, one RoPE for every RoPE layer
 *
 * Ministral (MinistralForCausalLM, modeling_ministral.py 4.57.1): Mistral's decoder (Llama's
 * math, no biases) whose layer i takes the sliding mask (t - s < sliding_window) when
 * layer_types[i] is sliding_attention; MinistralConfig derives layer_types, when absent, as
 * sliding_attention on every layer when sliding_window is set (default 4096; null: every
 * layer full). RoPE (rope_theta 10000, rope_scaling) on every layer. hidden_act as
 * ref_cfg_act (silu).
 */
#include <jansson.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { S_ACT, S_INTERVAL, S_USE_WINDOW, S_WINDOW, S_MAX_POS, S_COUNT };

static int read_fields(const char *json, size_t len, ckpt_field *f, wt_errbuf *err)
{
	static const ckpt_field spec[S_COUNT] = {
	    [S_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [S_INTERVAL] = {"no_rope_layer_interval", CKPT_FIELD_INT},
	    [S_USE_WINDOW] = {"use_sliding_window", CKPT_FIELD_BOOL},
	    [S_WINDOW] = {"sliding_window", CKPT_FIELD_INT},
	    [S_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	};
	memcpy(f, spec, sizeof(spec)); /* keys and kinds, outputs cleared */
	return ckpt_config_fields(json, len, f, S_COUNT, err);
}

static void set_bit(uint64_t *m, int64_t i)
{
	m[i / 64] |= 1ull << (i % 64);
}

/* no_rope_layers (or its derivation) into c->nope_mask. */
static int parse_nope(json_t *root, const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	json_t *nr = ref_lm_get(root, "no_rope_layers");
	memset(c->nope_mask, 0, sizeof(c->nope_mask));
	if (nr == NULL || json_is_null(nr)) {
		int64_t k = f[S_INTERVAL].present ? f[S_INTERVAL].i : 4;
		if (k < 1)
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: no_rope_layer_interval %lld; SmolLM3Config "
			    "divides by it: give a positive interval or no_rope_layers",
			    (long long)k);
		for (int64_t i = 0; i < c->L; i++)
			if ((i + 1) % k == 0)
				set_bit(c->nope_mask, i);
		return WT_OK;
	}
	if (!json_is_array(nr) || (int64_t)json_array_size(nr) < c->L)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: no_rope_layers is not a list of at least "
		    "num_hidden_layers (%lld) entries; give 1 (RoPE) or 0 (NoPE) per layer",
		    (long long)c->L);
	for (int64_t i = 0; i < c->L; i++) {
		json_t *v = json_array_get(nr, (size_t)i);
		if (!json_is_number(v) && !json_is_boolean(v))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: no_rope_layers[%lld] is not 0 / 1 (or a "
			                 "boolean)",
			                 (long long)i);
		bool rope = json_is_boolean(v) ? json_is_true(v) : json_number_value(v) != 0.0;
		if (!rope)
			set_bit(c->nope_mask, i);
	}
	return WT_OK;
}

/* layer_types (or its derivation) into c->local_mask, sliding_window into c->window. */
static int parse_windows(json_t *root, const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	int rv;
	json_t *lt = ref_lm_get(root, "layer_types");
	bool typed = lt != NULL && !json_is_null(lt);
	c->window = f[S_WINDOW].present ? f[S_WINDOW].i : 0;
	c->window_pattern = 0;
	c->local_masked = true;
	memset(c->local_mask, 0, sizeof(c->local_mask));
	if (c->window < 0)
		return wt_seterr(err, WT_ECORRUPT, "config.json: sliding_window %lld is negative",
		                 (long long)c->window);
	if (typed && (rv = ref_layer_types_list(c, lt, err)) != WT_OK)
		return rv;
	bool derive = f[S_USE_WINDOW].present && f[S_USE_WINDOW].b && c->window > 0;
	for (int64_t i = 0; i < c->L; i++) {
		bool local = !typed && derive && ref_l4_bit(c->nope_mask, i);
		if (typed && (rv = ref_layer_type_at(c, lt, i, &local, err)) != WT_OK)
			return rv;
		if (local)
			set_bit(c->local_mask, i);
	}
	return WT_OK;
}

int ref_cfg_ministral(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[S_COUNT];
	int rv = read_fields(json, len, f, err);
	if (rv == WT_OK)
		rv = ref_cfg_act(&f[S_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	if (c->L > REF_L4_MAX_LAYERS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %lld layers; the reference's Ministral layer masks "
		                 "hold %d",
		                 (long long)c->L, REF_L4_MAX_LAYERS);
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	/* MinistralConfig's sliding_window 4096 when the key is absent; null: none */
	json_t *sw = ref_lm_get(root, "sliding_window");
	json_t *lt = ref_lm_get(root, "layer_types");
	bool typed = lt != NULL && !json_is_null(lt);
	c->window = sw == NULL ? 4096 : f[S_WINDOW].present ? f[S_WINDOW].i : 0;
	c->window_pattern = 0;
	c->local_masked = true;
	memset(c->local_mask, 0, sizeof(c->local_mask));
	if (c->window < 0)
		rv = wt_seterr(err, WT_ECORRUPT, "config.json: sliding_window %lld is negative",
		               (long long)c->window);
	if (rv == WT_OK && typed)
		rv = ref_layer_types_list(c, lt, err);
	for (int64_t i = 0; rv == WT_OK && i < c->L; i++) {
		bool local = !typed && c->window > 0;
		if (typed)
			rv = ref_layer_type_at(c, lt, i, &local, err);
		if (rv == WT_OK && local)
			set_bit(c->local_mask, i);
	}
	ref_rope_in in = {arch ? arch : "MinistralForCausalLM", c->d,
	                  f[S_MAX_POS].present ? f[S_MAX_POS].i : 0};
	if (rv == WT_OK)
		rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	c->theta_local = c->theta; /* one RoPE for every layer */
	c->rope_factor[1] = c->rope_factor[0];
	return rv;
}

int ref_cfg_smollm3(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[S_COUNT];
	int rv = read_fields(json, len, f, err);
	if (rv == WT_OK)
		rv = ref_cfg_act(&f[S_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	if (c->L > REF_L4_MAX_LAYERS)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %lld layers; the reference's SmolLM3 layer masks hold "
		    "%d",
		    (long long)c->L, REF_L4_MAX_LAYERS);
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	rv = parse_nope(root, f, c, err);
	if (rv == WT_OK)
		rv = parse_windows(root, f, c, err);
	ref_rope_in in = {arch ? arch : "SmolLM3ForCausalLM", c->d,
	                  f[S_MAX_POS].present ? f[S_MAX_POS].i : 0};
	if (rv == WT_OK)
		rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	/* one RoPE for every layer that has it, sliding or not */
	c->theta_local = c->theta;
	c->rope_factor[1] = c->rope_factor[0];
	return rv;
}
