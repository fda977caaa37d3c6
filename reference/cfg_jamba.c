/*
 * cfg_jamba.c — Jamba (JambaForCausalLM, ai21labs Jamba-v0.1, AI21-Jamba-Mini-1.5 /
 * Large-1.5): its config.json fields with JambaConfig's defaults (transformers 4.57.1,
 * configuration_jamba.py). The mixer's math is in jamba.c.
 *
 *   key                      default   what the reference does with it
 *   rms_norm_eps             1e-6      every RMSNorm, the mixer's dt / B / C norms too
 *   hidden_act               silu      the MLPs' and experts' gate, the mixer's conv
 *                                      output and its gate z
 *   attn_layer_period /      8, 4      ckpt.c: layer i attends when i % period ==
 *   attn_layer_offset                  offset (no positions: JambaAttention has no RoPE),
 *                                      else a Mamba mixer
 *   expert_layer_period /    2, 1      ckpt.c: num_experts experts when num_experts > 1
 *   expert_layer_offset                and i % period == offset, else a dense MLP
 *   num_experts_per_tok      2         top-k of the router's softmax, not renormalised
 *                                      (JambaSparseMoeBlock)
 *   mamba_d_state, _d_conv,  16, 4, 2, the mixer's sizes (ckpt.c); "auto" = ceil(hid / 16)
 *   _expand, _dt_rank        "auto"
 *   mamba_conv_bias,         true,     conv1d.bias; in_proj / out_proj biases (read when
 *   mamba_proj_bias          false     present: the planner holds them to the switches)
 *   use_mamba_kernels        true      not read: the kernels compute the same scan
 *
 * The loader fills JambaConfig's numeric defaults for keys config.json leaves out
 * (loader/config_defaults.c), so ckpt.c sees them.
 */
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { F_ACT, F_MIXER_EPS, F_COUNT };

int ref_cfg_jamba(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	const char *a = arch ? arch : "JambaForCausalLM";
	ckpt_field f[F_COUNT] = {
	    [F_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [F_MIXER_EPS] = {"mixer_rms_eps", CKPT_FIELD_REAL},
	};
	int rv = ckpt_config_fields(json, len, f, F_COUNT, err);
	if (rv == WT_OK)
		rv = ref_cfg_act(&f[F_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	/* Falcon-Mamba's weightless dt / B / C norms: FalconMambaConfig's 1e-6 when absent */
	c->m_rms_eps = f[F_MIXER_EPS].present ? f[F_MIXER_EPS].r : 1e-6;
	if (c->m_plain_norm && !(c->m_rms_eps >= 0.0 && c->m_rms_eps <= 1.0))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: mixer_rms_eps %g; it must be in [0, 1] (FalconMambaConfig's "
		    "1e-6)",
		    c->m_rms_eps);
	bool any = false;
	for (int64_t i = 0; i < c->L; i++)
		any = any || ref_jb_mamba_layer(c, i);
	if (any && (c->m_inner < 1 || c->m_rank < 1 || c->m_state < 1 || c->m_conv < 1))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s's Mamba layers need mamba_expand, mamba_dt_rank, "
		                 "mamba_d_state and mamba_d_conv (%lld channels, %lld, %lld, %lld)",
		                 a, (long long)c->m_inner, (long long)c->m_rank,
		                 (long long)c->m_state, (long long)c->m_conv);
	if (c->d * c->H != c->hid)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: head_dim %lld x %lld heads is not hidden_size %lld; "
		                 "%s's attention takes hidden_size / num_attention_heads",
		                 (long long)c->d, (long long)c->H, (long long)c->hid, a);
	return WT_OK;
}
