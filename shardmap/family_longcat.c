/*
 * family_longcat.c — LongCat-Flash (LongcatFlashForCausalLM, model_type longcat_flash:
 * meituan-longcat/LongCat-Flash-Chat), cut as vLLM's longcat_flash.py loads it.
 *
 * Each of the num_layers layers has two DeepSeek-V3 MLA sublayers (self_attn.0 / .1, cut
 * as vLLM's deepseek_v2.py loads DeepseekV2MLAAttention: SM_RULES_MLA), two dense MLPs
 * (mlps.0 / .1: gate_proj / up_proj into gate_up_proj by rows, down_proj by columns, as
 * FlashMLP's MergedColumnParallelLinear / RowParallelLinear), four norms
 * (input_layernorm.0 / .1, post_attention_layernorm.0 / .1, replicated) and one
 * shortcut MoE block (mlp.): the router's classifier [E + Z, hid] and its
 * e_score_correction_bias [E + Z] replicated and never quantized (Z = zero_expert_num
 * identity experts, which have no weights), the E = n_routed_experts experts
 * mlp.experts.{j}.{gate,up,down}_proj stacked into mlp.experts.w13_weight / w2_weight
 * (expert_ffn_hidden_size each) as FusedMoE loads them. The multi-token-prediction module
 * (model.mtp.*) is dropped, as vLLM's load_weights skips it.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define LC_REPL(x)                                                                                 \
	SM_RULE(SM_LAYER x ".weight", SM_LAYER x ".weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0,  \
	        1, SM_D_HID, SM_D_ANY)

/* FlashMLP: no biases (bias=False in vLLM and transformers). */
#define LC_MLP(M)                                                                                  \
	SM_RULE(SM_LAYER M "gate_proj.weight", SM_LAYER M "gate_up_proj.weight", SM_K_ROWS, 0,     \
	        SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),                                \
	    SM_RULE(SM_LAYER M "up_proj.weight", SM_LAYER M "gate_up_proj.weight", SM_K_ROWS, 1,   \
	            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),                            \
	    SM_RULE(SM_LAYER M "down_proj.weight", SM_LAYER M "down_proj.weight", SM_K_COLS, 0,    \
	            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I)

static const sm_rule longcat_rules[] = {
    SM_RULES_TOP,
    LC_REPL("input_layernorm.0"),
    LC_REPL("input_layernorm.1"),
    LC_REPL("post_attention_layernorm.0"),
    LC_REPL("post_attention_layernorm.1"),
    SM_RULES_MLA("self_attn.0."),
    SM_RULES_MLA("self_attn.1."),
    LC_MLP("mlps.0."),
    LC_MLP("mlps.1."),
    SM_RULE_ROUTER("mlp.router.classifier.weight", 2, SM_D_EZ, SM_D_HID),
    SM_RULE_ROUTER("mlp.router.e_score_correction_bias", 1, SM_D_EZ, SM_D_ANY),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
};

/* Every layer has the shortcut MoE block. */
static bool longcat_moe(const ckpt_config *cfg, int64_t i)
{
	(void)i;
	return cfg->num_experts > 0;
}

/* The loader refuses what transformers and vLLM read apart (config_longcat.c); here the
 * dims the tables need. */
static int longcat_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->num_experts <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: LongcatFlashForCausalLM needs n_routed_experts > 0 "
		                 "(every layer has the shortcut MoE block; got %" PRId64 ")",
		                 c->num_experts);
	if (c->q_lora_rank <= 0 || c->kv_lora_rank <= 0 || c->qk_nope_head_dim <= 0 ||
	    c->qk_rope_head_dim <= 0 || c->v_head_dim <= 0)
		return wt_seterr(err, WT_ESHAPE,
		                 "config.json: LongcatFlashForCausalLM needs q_lora_rank, "
		                 "kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim "
		                 "> 0 (got %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
		                 ", %" PRId64 ")",
		                 c->q_lora_rank, c->kv_lora_rank, c->qk_nope_head_dim,
		                 c->qk_rope_head_dim, c->v_head_dim);
	/* LongcatFlashRotaryEmbedding sizes its frequencies by head_dim, applied to the
	 * qk_rope_head_dim part (vLLM: qk_rope_head_dim) */
	if (c->head_dim != c->qk_rope_head_dim)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: head_dim %" PRId64
		                 " is not qk_rope_head_dim %" PRId64
		                 "; LongcatFlashForCausalLM's RoPE is head_dim wide on the "
		                 "qk_rope_head_dim part (LongcatFlashConfig's default: 64 and 64): "
		                 "set head_dim to %" PRId64,
		                 c->head_dim, c->qk_rope_head_dim, c->qk_rope_head_dim);
	return WT_OK;
}

static const char *const longcat_archs[] = {"LongcatFlashForCausalLM", NULL};

const sm_family shardmap_family_longcat_flash = {
    .name = "longcat_flash",
    .archs = longcat_archs,
    .rules = longcat_rules,
    .n_rules = SM_NRULES(longcat_rules),
    .layer_is_moe = longcat_moe,
    .layer_prefix = "model.layers.",
    .check = longcat_check,
    .drop_prefix = "model.mtp.",
    .moe_keys = "n_routed_experts",
};
