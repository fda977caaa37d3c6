/*
 * cfg_minimax.c — MiniMax (MiniMaxForCausalLM, MiniMaxAI/MiniMax-Text-01, MiniMax-M1): the
 * config.json fields beyond Mixtral's, with MiniMaxConfig's defaults (transformers 4.57.1,
 * configuration_minimax.py). The math is in minimax.c and the decoder's residual hooks
 * (ref_mm_resid); the layer kinds come from the loader's parse (ckpt.c).
 *
 *   key                                         default  what the reference does with it
 *   full_attn_alpha_factor / _beta_factor       1, 1     softmax-attention layers' residual:
 *                                                        x = alpha * norm(x) + beta * attn
 *   linear_attn_alpha_factor / _beta_factor     1, 1     the lightning layers' likewise
 *   mlp_alpha_factor / mlp_beta_factor          1, 1     the MoE's likewise
 *   block_size                                  256      not read: the blocked lightning
 *                                                        attention equals its recurrence
 *
 * The three betas must be equal and positive (the releases: all 1): the reference carries
 * them as one residual multiplier. rms_norm_eps, rope_theta, rope_scaling are Mixtral's.
 *
 * MiniMax-Text-01 / -M1's remote config (model_type minimax_text_01 / minimax_m1), its keys
 * laid onto those above by loader/config_minimax01.c, adds two that vLLM's
 * minimax_text_01.py reads:
 *   rotary_dim   head_dim   RoPE (rotate-half, neox) on the first rotary_dim dims of a head
 *   postnorm     false      true: the residual is the normed input (transformers' layer);
 *                           false (the un-normed input) refused: the releases say true
 */
#include <jansson.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { F_FA, F_FB, F_LA, F_LB, F_MA, F_MB, F_COUNT };

/* The remote config's postnorm (must be true) and rotary_dim (its RoPE redone). */
static int minimax01(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	int rv = WT_OK;
	json_t *pn = json_object_get(root, "postnorm");
	json_t *rd = json_object_get(root, "rotary_dim");
	json_t *mp = json_object_get(root, "max_position_embeddings");
	if (!json_is_true(pn))
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: postnorm is absent or false; vLLM's "
		               "MiniMaxText01DecoderLayer then adds the un-normed input to the "
		               "residual, which the reference does not do (MiniMax-Text-01, -M1: "
		               "true)");
	c->rot_dim = json_is_integer(rd) ? (int64_t)json_integer_value(rd) : c->d;
	if (rv == WT_OK && (c->rot_dim < 2 || c->rot_dim % 2 != 0 || c->rot_dim > c->d))
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: rotary_dim %lld of head_dim %lld; the reference needs "
		               "an even count from 2 to head_dim",
		               (long long)c->rot_dim, (long long)c->d);
	ref_rope_in in = {arch ? arch : "MiniMaxText01ForCausalLM", c->rot_dim,
	                  json_is_integer(mp) ? (int64_t)json_integer_value(mp) : 0};
	if (rv == WT_OK)
		rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	return rv;
}

int ref_cfg_minimax(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[F_COUNT] = {
	    [F_FA] = {"full_attn_alpha_factor", CKPT_FIELD_REAL},
	    [F_FB] = {"full_attn_beta_factor", CKPT_FIELD_REAL},
	    [F_LA] = {"linear_attn_alpha_factor", CKPT_FIELD_REAL},
	    [F_LB] = {"linear_attn_beta_factor", CKPT_FIELD_REAL},
	    [F_MA] = {"mlp_alpha_factor", CKPT_FIELD_REAL},
	    [F_MB] = {"mlp_beta_factor", CKPT_FIELD_REAL},
	};
	int rv = ckpt_config_fields(json, len, f, F_COUNT, err);
	if (rv != WT_OK)
		return rv;
	double v[F_COUNT];
	for (int k = 0; k < F_COUNT; k++) {
		v[k] = f[k].present ? f[k].r : 1.0;
		if (!(v[k] > -1e6 && v[k] < 1e6))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: %s %g; it must be in (-1e6, 1e6)", f[k].key,
			                 v[k]);
	}
	if (v[F_FB] != v[F_LB] || v[F_FB] != v[F_MB] || !(v[F_FB] > 0.0))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: full_attn_beta_factor %g, linear_attn_beta_factor %g, "
		    "mlp_beta_factor %g; the reference handles equal positive betas "
		    "(the releases: 1)",
		    v[F_FB], v[F_LB], v[F_MB]);
	c->mm_alpha[0] = v[F_FA];
	c->mm_alpha[1] = v[F_LA];
	c->mm_alpha[2] = v[F_MA];
	c->resid_mult = v[F_FB] == 1.0 ? 0.0 : v[F_FB];
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	bool remote = config_is_minimax01(json_string_value(json_object_get(root, "model_type")));
	json_decref(root);
	return remote ? minimax01(c, arch, json, len, err) : WT_OK;
}
