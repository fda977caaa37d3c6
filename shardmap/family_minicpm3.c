/*
 * family_minicpm3.c — MiniCPM3 (MiniCPM3ForCausalLM, model_type minicpm3, remote code:
 * openbmb/MiniCPM3-4B), cut as vLLM's minicpm3.py loads it: MiniCPM's decoder (Llama's
 * names, no biases) with DeepSeek-V2's multi-head latent attention and a dense SwiGLU MLP
 * in every layer.
 *
 * MiniCPM3Attention builds the same Linears as vLLM's DeepseekV2Attention (SM_RULES_MLA):
 * q_a_proj and kv_a_proj_with_mqa ReplicatedLinear, q_a_layernorm / kv_a_layernorm
 * replicated, q_b_proj and kv_b_proj ColumnParallelLinear (rows by heads), o_proj
 * RowParallelLinear (columns by heads), every Linear quantized (quant_config passed to
 * all), the norms not. MiniCPMMLP: gate_proj / up_proj merged by rows into gate_up_proj
 * (MergedColumnParallelLinear), down_proj by columns, no biases (bias=False; vLLM's
 * load_weights drops a checkpoint's .bias, so one is refused as unknown). embed_tokens and
 * lm_head by padded vocabulary rows; lm_head dropped when tied (MiniCPM3Config ties by
 * default). scale_emb / scale_depth / dim_model_base are math, not layout. The loader
 * refuses q_lora_rank null, MoE keys and any hidden_act but silu
 * (loader/config_minicpm.c).
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

static const sm_rule minicpm3_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_MLA("self_attn."),
    SM_RULE(SM_LAYER "mlp.gate_proj.weight", SM_LAYER "mlp.gate_up_proj.weight", SM_K_ROWS, 0,
            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(SM_LAYER "mlp.up_proj.weight", SM_LAYER "mlp.gate_up_proj.weight", SM_K_ROWS, 1, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(SM_LAYER "mlp.down_proj.weight", SM_LAYER "mlp.down_proj.weight", SM_K_COLS, 0, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),
};

/* The MLA dims the tables read (the loader has put MiniCPM3Config's defaults in). */
static int minicpm3_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->q_lora_rank <= 0 || c->kv_lora_rank <= 0 || c->qk_nope_head_dim <= 0 ||
	    c->qk_rope_head_dim <= 0 || c->v_head_dim <= 0)
		return wt_seterr(
		    err, WT_ESHAPE,
		    "config.json: MiniCPM3ForCausalLM needs q_lora_rank, kv_lora_rank, "
		    "qk_nope_head_dim, qk_rope_head_dim and v_head_dim > 0 (got %" PRId64
		    ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ")",
		    c->q_lora_rank, c->kv_lora_rank, c->qk_nope_head_dim, c->qk_rope_head_dim,
		    c->v_head_dim);
	return WT_OK;
}

static const char *const minicpm3_archs[] = {"MiniCPM3ForCausalLM", NULL};

const sm_family shardmap_family_minicpm3 = {
    .name = "minicpm3",
    .archs = minicpm3_archs,
    .rules = minicpm3_rules,
    .n_rules = SM_NRULES(minicpm3_rules),
    .layer_prefix = "model.layers.",
    .check = minicpm3_check,
    .tie_default = true,
};
