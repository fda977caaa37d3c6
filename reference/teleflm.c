/*
 * teleflm.c — Tele-FLM (TeleFLMForCausalLM, remote code): Llama's decoder (Xverse's reading:
 * cfg_kind.c's FAM_ACT switches, plain RoPE) plus the muP multipliers vLLM's teleflm.py applies
 * when use_mup is true:
 *
 *   key                           what vLLM does                    here
 *   input_mult                    TeleFLMModel: embed_tokens(ids)   c->embed_scale (on the
 *                                 times input_mult                  gathered rows, every rank's
 *                                                                   after the all-reduce)
 *   output_mult, mup_scale_factor TeleFLMForCausalLM: LogitsProcessor c->logit_mult =
 *                                 scale output_mult /               output_mult /
 *                                 mup_scale_factor                  mup_scale_factor
 *
 * Nothing else changes (no attention or residual multiplier: vLLM's LlamaAttention keeps
 * head_dim^-0.5). The loader (loader/config_teleflm.c) has required the keys and their range;
 * they are checked again here so that the reference never divides by zero.
 */
#include <math.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"
#include "reference/teleflm.h"

enum { T_MUP, T_IN, T_OUT, T_SCALE, T_COUNT };

int ref_cfg_teleflm(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[T_COUNT] = {
	    [T_MUP] = {"use_mup", CKPT_FIELD_BOOL},
	    [T_IN] = {"input_mult", CKPT_FIELD_REAL},
	    [T_OUT] = {"output_mult", CKPT_FIELD_REAL},
	    [T_SCALE] = {"mup_scale_factor", CKPT_FIELD_REAL},
	};
	int rv = ckpt_config_fields(json, len, f, T_COUNT, err);
	if (rv != WT_OK)
		return rv;
	c->embed_scale = 0.0f;
	c->logit_mult = 0.0;
	if (!f[T_MUP].present || !f[T_MUP].b)
		return WT_OK;
	for (int k = T_IN; k < T_COUNT; k++)
		if (!f[k].present || !(f[k].r >= 1e-6 && f[k].r <= 1e6))
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: %s absent or outside [1e-6, 1e6] with use_mup "
			    "true; the reference scales by it as vLLM's teleflm.py does",
			    f[k].key);
	c->embed_scale = (float)f[T_IN].r;
	c->logit_mult = f[T_OUT].r / f[T_SCALE].r;
	return WT_OK;
}
