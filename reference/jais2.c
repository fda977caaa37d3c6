/*
 * jais2.c — Jais 2 (Jais2ForCausalLM: inceptionai Jais-2-8B / -70B, base and Chat) in the
 * reference, as vLLM's jais2.py runs it: Llama's decoder whose input_layernorm,
 * post_attention_layernorm and model.norm are nn.LayerNorm (weight and bias, eps
 * layer_norm_eps; layernorm, norm_off 0), q/k/v/o with their biases where the checkpoint has
 * them (`attention_bias or bias`), rotate-half RoPE on the whole head, and an MLP without a
 * gate: down_proj(relu(up_proj(x))^2) with mlp_bias's biases (nogate.c).
 *
 * vLLM's Jais2DecoderLayer norms hidden + residual and carries the sum as the next residual
 * (no fused add-norm); the sum is the residual stream of the usual pre-norm block
 * (x += attn(norm(x)); x += mlp(norm(x))), which the reference runs, and model.norm takes the
 * last layer's hidden + residual likewise.
 *
 *   key                          default    what the reference does with it
 *   hidden_act                   relu2      relu(x)^2; anything else refused (vLLM's Jais2MLP
 *                                           runs ReLU squared whatever it says)
 *   layer_norm_eps               1e-5       every LayerNorm
 *   rope_theta                   500000     Jais2Config's (modular_jais2.py), filled by the
 *                                           loader's class defaults (config_defaults_remote.c)
 *   rope_scaling                 null       cfg_rope.c (vLLM's get_rope)
 *   interleaved_sliding_window   (none)     an integer w: every layer sees keys s with
 *                                           t - s < w; a list: layer i takes entry
 *                                           i % length (null: full attention); the entries'
 *                                           windows must be one value (the reference has one)
 *   logit_scale                  1.0        the logits times it (vLLM's LogitsProcessor)
 */
#include <jansson.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/jais2.h"
#include "reference/reference_int.h"

enum { J_ACT, J_MAX_POS, J_EPS, J_SCALE, J_COUNT };

static void set_bit(uint64_t *m, int64_t i)
{
	m[i / 64] |= 1ull << (i % 64);
}

/* Layer i's window from entry w (0: full attention); the reference keeps one window value. */
static int layer_window(ref_cfg *c, json_t *w, int64_t i, wt_errbuf *err)
{
	if (json_is_null(w))
		return WT_OK;
	if (!json_is_integer(w) || json_integer_value(w) < 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: interleaved_sliding_window gives layer %lld no "
		                 "integer window above 0 (or null)",
		                 (long long)i);
	int64_t v = json_integer_value(w);
	if (c->window > 0 && v != c->window)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: interleaved_sliding_window holds windows %lld and "
		                 "%lld; the reference runs one window value (give one, or null for "
		                 "full attention)",
		                 (long long)c->window, (long long)v);
	c->window = v;
	set_bit(c->local_mask, i);
	return WT_OK;
}

/* interleaved_sliding_window into c->window / c->local_mask (vLLM: layer i takes entry
 * i % length of a list, an integer on every layer, absent none). */
static int windows(ref_cfg *c, json_t *root, wt_errbuf *err)
{
	c->window = 0;
	c->window_pattern = 0;
	c->local_masked = true;
	memset(c->local_mask, 0, sizeof(c->local_mask));
	json_t *w = ref_lm_get(root, "interleaved_sliding_window");
	if (w == NULL)
		return WT_OK;
	if (c->L > REF_L4_MAX_LAYERS)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %lld layers; the reference's Jais 2 layer masks hold "
		    "%d",
		    (long long)c->L, REF_L4_MAX_LAYERS);
	bool list = json_is_array(w) && json_array_size(w) > 0;
	if (!list && !json_is_integer(w))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: interleaved_sliding_window is not an integer or a "
		                 "non-empty list (vLLM's jais2.py raises on it)");
	int rv = WT_OK;
	for (int64_t i = 0; rv == WT_OK && i < c->L; i++)
		rv = layer_window(c, list ? json_array_get(w, (size_t)i % json_array_size(w)) : w,
		                  i, err);
	return rv;
}

int ref_cfg_jais2(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	static const ckpt_field spec[J_COUNT] = {
	    [J_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [J_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	    [J_EPS] = {"layer_norm_eps", CKPT_FIELD_REAL},
	    [J_SCALE] = {"logit_scale", CKPT_FIELD_REAL},
	};
	ckpt_field f[J_COUNT];
	memcpy(f, spec, sizeof(spec));
	int rv = ckpt_config_fields(json, len, f, J_COUNT, err);
	if (rv != WT_OK)
		return rv;
	const char *name = arch ? arch : "Jais2ForCausalLM";
	if (f[J_ACT].present && strcmp(f[J_ACT].s, "relu2") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act '%s' on %s: vLLM's Jais2MLP runs ReLU "
		                 "squared whatever it says (give \"relu2\")",
		                 f[J_ACT].s, name);
	c->act = REF_ACT_RELU2;
	c->norm_off = 0.0f; /* nn.LayerNorm: weight as it is */
	c->eps = f[J_EPS].present ? f[J_EPS].r : 1e-5;
	c->logit_mult = f[J_SCALE].present ? f[J_SCALE].r : 0.0;
	if (f[J_SCALE].present &&
	    (!(c->logit_mult > -1e6 && c->logit_mult < 1e6) || c->logit_mult == 0.0))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: logit_scale %g; the reference needs a finite nonzero "
		    "value within 1e6",
		    c->logit_mult);
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	rv = windows(c, root, err);
	ref_rope_in in = {name, c->d, f[J_MAX_POS].present ? f[J_MAX_POS].i : 0};
	if (rv == WT_OK)
		rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	c->theta_local = c->theta; /* one RoPE for every layer, sliding or not */
	c->rope_factor[1] = c->rope_factor[0];
	return rv;
}
