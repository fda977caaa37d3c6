/*
 * family_qwen2vl.c — Qwen2-VL (Qwen2VLForConditionalGeneration): the Qwen2
 * language model plus the vision tower `visual.*` (docs/format.md section 2.7,
 * Qwen2-VL). Rules are written in the transformers 4.x names; the 5.x layout
 * (`model.language_model.*`, `model.visual.*`) maps onto them through the
 * family's aliases, so both layouts give the same runtime names and bytes.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define SM_VB "visual.blocks.{i}."

/* Replicated vision tensor of one block: [embed_dim]. */
#define SM_VB_REPL(n)                                                                              \
	SM_RULE(SM_VB n, SM_VB n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
#define SM_V_REPL(n, d)                                                                            \
	SM_RULE("visual." n, "visual." n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, d, SM_D_ANY)

static const sm_rule qwen2_vl_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    /* Conv3d [embed_dim, in_chans, temporal_patch_size, patch_size, patch_size] */
    {"visual.patch_embed.proj.weight",
     "visual.patch_embed.proj.weight",
     SM_K_REPL,
     0,
     SM_U_NONE,
     SM_C_ALL,
     0,
     5,
     {SM_D_VE, SM_D_VCH, SM_D_VTP, SM_D_VP, SM_D_VP}},
    SM_VB_REPL("norm1.weight"),
    SM_VB_REPL("norm1.bias"),
    SM_VB_REPL("norm2.weight"),
    SM_VB_REPL("norm2.bias"),
    SM_RULE(SM_VB "attn.qkv.weight", SM_VB "attn.qkv.weight", SM_K_QKVF, 0, SM_U_VHEADS, SM_C_ALL,
            SM_F_QUANT | SM_F_VIS, 2, SM_D_V3E, SM_D_VE),
    SM_RULE(SM_VB "attn.qkv.bias", SM_VB "attn.qkv.bias", SM_K_QKVF, 0, SM_U_VHEADS, SM_C_ALL,
            SM_F_VIS, 1, SM_D_V3E, SM_D_ANY),
    SM_RULE(SM_VB "attn.proj.weight", SM_VB "attn.proj.weight", SM_K_COLS, 0, SM_U_VHEADS, SM_C_ALL,
            SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),
    SM_VB_REPL("attn.proj.bias"),
    SM_RULE(SM_VB "mlp.fc1.weight", SM_VB "mlp.fc1.weight", SM_K_ROWS, 0, SM_U_VI, SM_C_ALL,
            SM_F_QUANT | SM_F_VIS, 2, SM_D_VI, SM_D_VE),
    SM_RULE(SM_VB "mlp.fc1.bias", SM_VB "mlp.fc1.bias", SM_K_ROWS, 0, SM_U_VI, SM_C_ALL, SM_F_VIS,
            1, SM_D_VI, SM_D_ANY),
    SM_RULE(SM_VB "mlp.fc2.weight", SM_VB "mlp.fc2.weight", SM_K_COLS, 0, SM_U_VI, SM_C_ALL,
            SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VI),
    SM_VB_REPL("mlp.fc2.bias"),
    SM_V_REPL("merger.ln_q.weight", SM_D_VE),
    SM_V_REPL("merger.ln_q.bias", SM_D_VE),
    SM_RULE("visual.merger.mlp.0.weight", "visual.merger.mlp.0.weight", SM_K_ROWS, 0, SM_U_VM,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_VM, SM_D_VM),
    SM_RULE("visual.merger.mlp.0.bias", "visual.merger.mlp.0.bias", SM_K_ROWS, 0, SM_U_VM, SM_C_ALL,
            0, 1, SM_D_VM, SM_D_ANY),
    SM_RULE("visual.merger.mlp.2.weight", "visual.merger.mlp.2.weight", SM_K_COLS, 0, SM_U_VM,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_VM),
    SM_V_REPL("merger.mlp.2.bias", SM_D_HID),
};

/* MRoPE sections and the vision tower's config (plan-time checks). */
static int qwen2_vl_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision || c->v_depth < 1 || c->v_embed_dim < 1 || c->v_num_heads < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Qwen2-VL needs vision_config with depth, embed_dim "
		                 "and num_heads (depth %" PRId64 ", embed_dim %" PRId64
		                 ", num_heads %" PRId64 "; -1 = missing)",
		                 c->v_depth, c->v_embed_dim, c->v_num_heads);
	if (c->v_embed_dim % c->v_num_heads)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.num_heads %" PRId64
		                 " does not divide embed_dim %" PRId64,
		                 c->v_num_heads, c->v_embed_dim);
	if ((int64_t)((double)c->v_embed_dim * c->v_mlp_ratio) < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config embed_dim * mlp_ratio is below 1");
	int64_t half = c->head_dim / 2, sum = 0;
	if (!c->has_mrope)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Qwen2-VL needs rope_scaling.mrope_section (or "
		                 "rope_parameters.mrope_section): non-negative sections summing "
		                 "to head_dim/2 = %" PRId64 ", e.g. [16, 24, 24] for head_dim 128",
		                 half);
	for (size_t k = 0; k < c->n_mrope; k++) {
		if (c->mrope_section[k] < 0)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: mrope_section[%zu] = %" PRId64
			                 " is negative; sections must be >= 0",
			                 k, c->mrope_section[k]);
		sum += c->mrope_section[k];
	}
	if (c->head_dim % 2 || sum != half)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: mrope_section sums to %" PRId64
		                 " but must equal head_dim/2 = %" PRId64 " (head_dim %" PRId64
		                 ", which must be even); fix rope_scaling.mrope_section",
		                 sum, half, c->head_dim);
	return WT_OK;
}

static const char *const qwen2_vl_archs[] = {"Qwen2VLForConditionalGeneration", NULL};

/* transformers 5.x checkpoint prefix -> 4.x (canonical) prefix */
static const char *const qwen2_vl_aliases[] = {"model.language_model.", "model.", "model.visual.",
                                               "visual.", NULL};

const sm_family shardmap_family_qwen2_vl = {
    .name = "qwen2_vl",
    .archs = qwen2_vl_archs,
    .rules = qwen2_vl_rules,
    .n_rules = SM_NRULES(qwen2_vl_rules),
    .layer_is_moe = NULL,
    .drop_extra_layers = false,
    .layer_prefix = "model.layers.",
    .check = qwen2_vl_check,
    .aliases = qwen2_vl_aliases,
};
