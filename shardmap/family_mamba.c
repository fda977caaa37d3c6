/*
 * family_mamba.c — Mamba (MambaForCausalLM, model_type mamba: state-spaces/mamba-130m-hf
 * ... mamba-2.8b-hf; docs/format.md section 2.7), as transformers 4.57.1's
 * modeling_mamba.py lays it out and vLLM's mamba.py / mamba/mamba_mixer.py (MambaMixer)
 * load it.
 *
 * Every layer is backbone.layers.{i}.norm (RMSNorm, replicated) then the Mamba (v1) mixer
 * backbone.layers.{i}.mixer, cut as Jamba's (family_jamba.c) over Im = intermediate_size
 * channels: in_proj [2*Im, hid] rows [x; z] re-sliced per rank, conv1d [Im, 1, Kc] and its
 * bias (use_conv_bias) by channels, x_proj [R + 2N, Im] by columns (RowParallelLinear),
 * dt_proj [Im, R] and its bias by rows, A_log [Im, N] and D [Im] by rows, out_proj by
 * columns; in_proj's bias cut like its weight and out_proj's whole, both only with
 * use_bias. No mixer norms (use_rms_norm is Falcon-Mamba's). MambaMixer's Linears take no
 * quant_config: nothing but the embeddings and the LM head is left, and neither is
 * quantized either. backbone.embeddings and lm_head vocab-parallel; lm_head tied by
 * default (MambaConfig leaves tie_word_embeddings true).
 *
 * The loader reads MambaConfig's keys under the mixer's names (loader/config_hybrid.c,
 * config_mamba_keys): state_size, conv_kernel, time_step_rank, use_conv_bias, use_bias.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define MB_L   "backbone.layers.{i}."
#define MB_MIX MB_L "mixer."

/* A mixer tensor split by rows in Im channels, never quantized: [Im] or [Im, d1]. */
#define MB_ROWS(n, nd, d1)                                                                         \
	SM_RULE(MB_MIX n, MB_MIX n, SM_K_ROWS, 0, SM_U_MI, SM_C_LINATT, 0, nd, SM_D_MI, d1)

static const sm_rule mamba_rules[] = {
    SM_RULES_BACKBONE,
    SM_RULE(MB_MIX "in_proj.weight", MB_MIX "in_proj.weight", SM_K_ROWS2, 0, SM_U_MI, SM_C_LINATT,
            0, 2, SM_D_MI2, SM_D_HID),
    SM_RULE(MB_MIX "in_proj.bias", MB_MIX "in_proj.bias", SM_K_ROWS2, 0, SM_U_MI, SM_C_MPROJB, 0, 1,
            SM_D_MI2, SM_D_ANY),
    SM_RULE3(MB_MIX "conv1d.weight", MB_MIX "conv1d.weight", SM_K_ROWS, 0, SM_U_MI, SM_C_LINATT, 0,
             SM_D_MI, SM_D_ONE, SM_D_MKER),
    SM_RULE(MB_MIX "conv1d.bias", MB_MIX "conv1d.bias", SM_K_ROWS, 0, SM_U_MI, SM_C_MCONVB, 0, 1,
            SM_D_MI, SM_D_ANY),
    SM_RULE(MB_MIX "x_proj.weight", MB_MIX "x_proj.weight", SM_K_COLS, 0, SM_U_MI, SM_C_LINATT, 0,
            2, SM_D_MXP, SM_D_MI),
    MB_ROWS("dt_proj.weight", 2, SM_D_MR),
    MB_ROWS("dt_proj.bias", 1, SM_D_ANY),
    MB_ROWS("A_log", 2, SM_D_MN),
    MB_ROWS("D", 1, SM_D_ANY),
    SM_RULE(MB_MIX "out_proj.weight", MB_MIX "out_proj.weight", SM_K_COLS, 0, SM_U_MI, SM_C_LINATT,
            0, 2, SM_D_HID, SM_D_MI),
    SM_RULE(MB_MIX "out_proj.bias", MB_MIX "out_proj.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_MPROJB, 0,
            1, SM_D_HID, SM_D_ANY),
};

/* Every layer is a Mamba mixer. */
static bool mb_mixer(const ckpt_config *c, int64_t i)
{
	(void)c;
	(void)i;
	return true;
}

/* The mixer's sizes MambaConfig gives (the loader's defaults fill absent keys; a null or
 * an explicit 0 reaches here as -1 or 0). */
static int mb_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->intermediate_size <= 0 || c->mamba_d_state <= 0 || c->mamba_d_conv <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Mamba's mixer needs intermediate_size (or expand), "
		                 "state_size and conv_kernel > 0 (%" PRId64 ", %" PRId64
		                 ", %" PRId64 "; -1 = missing)",
		                 c->intermediate_size, c->mamba_d_state, c->mamba_d_conv);
	return WT_OK;
}

static const char *const mamba_archs[] = {"MambaForCausalLM", NULL};

/* MambaConfig leaves tie_word_embeddings true (the loader's class defaults); so does
 * FalconMambaConfig (below) */
const sm_family shardmap_family_mamba = {
    .name = "mamba",
    .archs = mamba_archs,
    .rules = mamba_rules,
    .n_rules = SM_NRULES(mamba_rules),
    .layer_prefix = "backbone.layers.",
    .check = mb_check,
    .layer_is_linear = mb_mixer,
    .linear_keys = "every layer is a Mamba mixer",
    .mamba = true,
    .mamba_lm = true,
};

static const char *const falcon_mamba_archs[] = {"FalconMambaForCausalLM", NULL};

/* Falcon-Mamba (FalconMambaForCausalLM, falcon_mamba: tiiuae/falcon-mamba-7b): Mamba's
 * tensors exactly; vLLM's mamba.py builds its MambaMixer with use_rms_norm and
 * rms_norm_has_weight false, so the dt / B / C norms (mixer_rms_eps) hold no weights: math,
 * not layout. */
const sm_family shardmap_family_falcon_mamba = {
    .name = "falcon_mamba",
    .archs = falcon_mamba_archs,
    .rules = mamba_rules,
    .n_rules = SM_NRULES(mamba_rules),
    .layer_prefix = "backbone.layers.",
    .check = mb_check,
    .layer_is_linear = mb_mixer,
    .linear_keys = "every layer is a Mamba mixer",
    .mamba = true,
    .mamba_lm = true,
};
