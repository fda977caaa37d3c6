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
 */
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { F_FA, F_FB, F_LA, F_LB, F_MA, F_MB, F_COUNT };

int ref_cfg_minimax(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
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
	return WT_OK;
}
