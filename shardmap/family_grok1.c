/*
 * family_grok1.c — Grok-1 (Grok1ModelForCausalLM / Grok1ForCausalLM, model_type grok-1:
 * hpcai-tech/grok-1, the PyTorch port of xai-org/grok-1; remote code; docs/format.md section
 * 2.7), cut as vLLM's grok1.py loads it.
 *
 *   checkpoint (model.layers.{i}.)          runtime                              cut
 *   attn.q_proj / k_proj / v_proj           attn.qkv_proj.weight                 heads (GQA)
 *   attn.o_proj                             attn.o_proj.weight                   columns
 *   pre_attn_norm / post_attn_norm /        the same .weight                     whole
 *   pre_moe_norm / post_moe_norm .scale
 *   moe_block.gate                          moe_block.gate.weight                whole, never
 *                                                                                quantized
 *   moe_block.experts.{j}.linear (gate) /   moe_block.experts.w13_weight         Ie rows (TP),
 *   linear_v (up) / linear_1 (down)         moe_block.experts.w2_weight          experts (EP)
 *
 * No biases (vLLM builds none). The norms' parameter is stored as .scale; vLLM's load_weights
 * renames "norm.scale" to "norm.weight" (model.norm.scale too). The router is vLLM's
 * ReplicatedLinear with quant_config None; the experts FusedMoE's with the checkpoint names
 * of its expert_params_mapping (linear gate, linear_v up, linear_1 down). lm_head tied by
 * default (Grok1Config: true; dropped when tied, as vLLM skips it).
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define GK_ATT SM_LAYER "attn."
#define GK_QKV(x, part, d)                                                                         \
	SM_RULE(GK_ATT x "_proj.weight", GK_ATT "qkv_proj.weight", SM_K_QKV, part, SM_U_HEADS,     \
	        SM_C_ALL, SM_F_QUANT, 2, d, SM_D_HID)
#define GK_NORM(x)                                                                                 \
	SM_RULE(SM_LAYER x ".scale", SM_LAYER x ".weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0,   \
	        1, SM_D_HID, SM_D_ANY)

static const sm_rule grok1_rules[] = {
    SM_RULE("model.embed_tokens.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0, SM_U_NONE,
            SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    SM_RULE("model.norm.scale", "model.norm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1,
            SM_D_HID, SM_D_ANY),
    GK_QKV("q", 0, SM_D_Q),
    GK_QKV("k", 1, SM_D_KV),
    GK_QKV("v", 2, SM_D_KV),
    SM_RULE(GK_ATT "o_proj.weight", GK_ATT "o_proj.weight", SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    GK_NORM("pre_attn_norm"),
    GK_NORM("post_attn_norm"),
    GK_NORM("pre_moe_norm"),
    GK_NORM("post_moe_norm"),
    SM_RULE_ROUTER("moe_block.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS("moe_block.experts.", "linear", "linear_v", "linear_1"),
};

/* Every layer is MoE (Grok1MoE); vLLM's head_dim is hidden_size / num_attention_heads. */
static int grok1_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->num_experts <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Grok-1 needs num_experts > 0 (every layer is MoE; "
		                 "Grok-1: 8); give it");
	return shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads", "head_dim",
	                                    err);
}

static const char *const grok1_archs[] = {"Grok1ModelForCausalLM", "Grok1ForCausalLM", NULL};

const sm_family shardmap_family_grok1 = {
    .name = "grok1",
    .archs = grok1_archs,
    .rules = grok1_rules,
    .n_rules = SM_NRULES(grok1_rules),
    .layer_is_moe = shardmap_moe_all,
    .layer_prefix = "model.layers.",
    .check = grok1_check,
    .tie_default = true,
};
