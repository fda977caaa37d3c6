/*
 * family_glm4v.c — GLM-4.1V (Glm4vForConditionalGeneration, glm4v: GLM-4.1V-9B-Thinking /
 * -Base) and GLM-4.5V (Glm4vMoeForConditionalGeneration, glm4v_moe), as transformers
 * 4.57.1's modeling_glm4v.py / modeling_glm4v_moe.py lay them out and vLLM's glm4_1v.py
 * loads them (docs/format.md section 2.7): the language model under
 * `model.language_model.*`, the vision tower under `model.visual.*`, `lm_head.weight`
 * (both classes' _checkpoint_conversion_mapping is empty: one layout). Rules are written
 * in the names the runtime tensors carry (`model.layers.*`, `visual.*`, as Qwen2-VL's and
 * Qwen3-VL's), which the released layout maps onto through the family's aliases.
 *
 * Text: GLM-4.1V's is GLM-4-0414's decoder (Glm4ForCausalLM in vLLM): q/k/v with their
 * biases (always: bias=True) fused by heads, o_proj by columns without a bias, the fused
 * mlp.gate_up_proj re-cut into [gate_r ; up_r], down_proj by columns, the four norms
 * replicated. GLM-4.5V's is GLM-4.5's (Glm4MoeForCausalLM in vLLM) without q/k norms:
 * DeepSeek-V3's MoE rows from first_k_dense_replace on, the router's
 * e_score_correction_bias, the MTP layers past num_hidden_layers dropped.
 *
 * Vision tower (Glm4vVisionTransformer in vLLM): each block's attn.qkv (no bias: vLLM
 * builds it without one) by heads, attn.proj by columns, the gated MLP (out_hidden_size
 * wide) gate / up merged by rows into mlp.gate_up_proj and down_proj by columns, the
 * RMSNorms norm1 / norm2 replicated. The Conv3d patch_embed.proj (with its bias), the
 * learned embeddings.position_embedding [(image_size / patch_size)^2, hidden], the
 * post_conv_layernorm / post_layernorm and the Conv2d downsample [out_hidden, hidden,
 * merge, merge] (with its bias) replicated, never quantized. The merger: proj
 * [out_hidden, out_hidden] by rows (ColumnParallelLinear, gather_output), its LayerNorm
 * post_projection_norm (weight and bias) replicated, gate / up [intermediate, out_hidden]
 * merged by rows into merger.gate_up_proj, down_proj by columns.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"
#include "shardmap/tower_defaults.h"

#define G4V_B "visual.blocks.{i}."
#define G4V_M "visual.merger."

/* A replicated tensor of one block ([VE]), of the tower (one dim d). */
#define G4V_B_REPL(n)                                                                              \
	SM_RULE(G4V_B n, G4V_B n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
#define G4V_REPL(n, d)                                                                             \
	SM_RULE("visual." n, "visual." n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, d, SM_D_ANY)

/* Glm4vVisionModel (the same in both families). */
#define G4V_VISION_RULES                                                                           \
	SM_RULE_PATCH3D("visual."), G4V_REPL("patch_embed.proj.bias", SM_D_VE),                    \
	    G4V_REPL("post_conv_layernorm.weight", SM_D_VE),                                       \
	    SM_RULE("visual.embeddings.position_embedding.weight",                                 \
	            "visual.embeddings.position_embedding.weight", SM_K_REPL, 0, SM_U_NONE,        \
	            SM_C_ALL, 0, 2, SM_D_VNP, SM_D_VE),                                            \
	    G4V_B_REPL("norm1.weight"), G4V_B_REPL("norm2.weight"),                                \
	    SM_RULE(G4V_B "attn.qkv.weight", G4V_B "attn.qkv.weight", SM_K_QKVF, 0, SM_U_VHEADS,   \
	            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_V3E, SM_D_VE),                        \
	    SM_RULE(G4V_B "attn.proj.weight", G4V_B "attn.proj.weight", SM_K_COLS, 0, SM_U_VHEADS, \
	            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),                         \
	    SM_RULE(G4V_B "mlp.gate_proj.weight", G4V_B "mlp.gate_up_proj.weight", SM_K_ROWS, 0,   \
	            SM_U_VI, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VI, SM_D_VE),                \
	    SM_RULE(G4V_B "mlp.up_proj.weight", G4V_B "mlp.gate_up_proj.weight", SM_K_ROWS, 1,     \
	            SM_U_VI, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VI, SM_D_VE),                \
	    SM_RULE(G4V_B "mlp.down_proj.weight", G4V_B "mlp.down_proj.weight", SM_K_COLS, 0,      \
	            SM_U_VI, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VI),                \
	    G4V_REPL("post_layernorm.weight", SM_D_VE),                                            \
	    {"visual.downsample.weight",                                                           \
	     "visual.downsample.weight",                                                           \
	     SM_K_REPL,                                                                            \
	     0,                                                                                    \
	     SM_U_NONE,                                                                            \
	     SM_C_ALL,                                                                             \
	     0,                                                                                    \
	     4,                                                                                    \
	     {SM_D_VOD, SM_D_VE, SM_D_VMS, SM_D_VMS}},                                             \
	    G4V_REPL("downsample.bias", SM_D_VOD),                                                 \
	    SM_RULE(G4V_M "proj.weight", G4V_M "proj.weight", SM_K_ROWS, 0, SM_U_VI, SM_C_ALL,     \
	            SM_F_QUANT, 2, SM_D_VOD, SM_D_VOD),                                            \
	    G4V_REPL("merger.post_projection_norm.weight", SM_D_VOD),                              \
	    G4V_REPL("merger.post_projection_norm.bias", SM_D_VOD),                                \
	    SM_RULE(G4V_M "gate_proj.weight", G4V_M "gate_up_proj.weight", SM_K_ROWS, 0, SM_U_VM,  \
	            SM_C_ALL, SM_F_QUANT, 2, SM_D_VM, SM_D_VOD),                                   \
	    SM_RULE(G4V_M "up_proj.weight", G4V_M "gate_up_proj.weight", SM_K_ROWS, 1, SM_U_VM,    \
	            SM_C_ALL, SM_F_QUANT, 2, SM_D_VM, SM_D_VOD),                                   \
	    SM_RULE(G4V_M "down_proj.weight", G4V_M "down_proj.weight", SM_K_COLS, 0, SM_U_VM,     \
	            SM_C_ALL, SM_F_QUANT, 2, SM_D_VOD, SM_D_VM)

/* Glm4vTextAttention: q/k/v always with biases (required), o_proj without one. */
#define G4V_QKV_B(x, part, d)                                                                      \
	SM_RULE(SM_LAYER "self_attn." x "_proj.bias", SM_LAYER "self_attn.qkv_proj.bias",          \
	        SM_K_QKV, part, SM_U_HEADS, SM_C_ALL, 0, 1, d, SM_D_ANY)

static const sm_rule glm4v_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_GLM4_NORMS,
    SM_QKV_W("q", 0, SM_D_Q),
    SM_QKV_W("k", 1, SM_D_KV),
    SM_QKV_W("v", 2, SM_D_KV),
    G4V_QKV_B("q", 0, SM_D_Q),
    G4V_QKV_B("k", 1, SM_D_KV),
    G4V_QKV_B("v", 2, SM_D_KV),
    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULES_MLP_FUSED,
    G4V_VISION_RULES,
};

/* Glm4vMoeTextDecoderLayer: GLM-4.5's layers (q/k/v biases with attention_bias, which
 * Glm4vMoeTextConfig defaults to true) without q_norm / k_norm. */
static const sm_rule glm4v_moe_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    DEEPSEEK_RULES_MOE,
    SM_RULE_ROUTER("mlp.gate.e_score_correction_bias", 1, SM_D_E, SM_D_ANY),
    G4V_VISION_RULES,
};

/* The vision tower's heads split its width and its output (the merger's, out_hidden_size
 * wide) feeds the language model; the text MRoPE's three sections (T, H, W) cover the
 * rotary half: 2 * sum = int(head_dim * partial_rotary_factor), as
 * apply_multimodal_rotary_pos_emb splits cos / sin. */
static int glm4v_common_check(const ckpt_config *c, const char *model, wt_errbuf *err)
{
	if (!c->has_vision)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: %s needs vision_config (depth, hidden_size, num_heads, "
		    "out_hidden_size, intermediate_size, image_size, patch_size)",
		    model);
	int64_t ve = c->v_hidden_size > 0 ? c->v_hidden_size : SM_G4V_HIDDEN;
	int64_t vh = c->v_num_heads > 0 ? c->v_num_heads : SM_G4V_HEADS;
	int64_t out = c->v_out_hidden_size > 0 ? c->v_out_hidden_size : SM_G4V_OUT;
	int64_t patch = c->v_patch_given ? c->v_patch_size : SM_G4V_PATCH;
	int64_t image = c->v_image_size > 0 ? c->v_image_size : SM_G4V_IMAGE;
	if (ve % vh)
		return shardmap_vision_heads_err("num_heads", vh, ve, err);
	if (out != c->hidden_size)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.out_hidden_size %" PRId64
		                 " must equal the language model's hidden_size %" PRId64
		                 " (the merger's output is its input); set out_hidden_size",
		                 out, c->hidden_size);
	if (image < patch)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.image_size %" PRId64
		                 " is below patch_size %" PRId64
		                 " (the position table is (image_size / patch_size)^2 rows)",
		                 image, patch);
	double prf = c->partial_rotary_factor;
	if (prf < 0.0 || prf > 1.0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: partial_rotary_factor must be a number in (0, 1] "
		                 "(%s: the fraction of each head the RoPE turns)",
		                 model);
	int64_t rot = (int64_t)((double)c->head_dim * (prf > 0.0 ? prf : 1.0));
	if (!c->has_mrope)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs text_config.rope_scaling.mrope_section: "
		                 "three sections summing to int(head_dim * partial_rotary_factor) "
		                 "/ 2 = %" PRId64 ", e.g. [8, 12, 12] for head_dim 128 and 0.5",
		                 model, rot / 2);
	int64_t sum = 0;
	for (size_t k = 0; k < c->n_mrope; k++) {
		if (c->mrope_section[k] < 0)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: mrope_section[%zu] = %" PRId64
			                 " is negative; sections must be >= 0",
			                 k, c->mrope_section[k]);
		sum += c->mrope_section[k];
	}
	if (c->n_mrope != 3 || rot % 2 || 2 * sum != rot)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: mrope_section has %zu entries summing to %" PRId64
		                 " but needs 3 (T, H, W) summing to int(head_dim * "
		                 "partial_rotary_factor) / 2 = %" PRId64 " (head_dim %" PRId64
		                 ", rotary dims %" PRId64 ", which must be even); fix "
		                 "text_config.rope_scaling.mrope_section",
		                 c->n_mrope, sum, rot / 2, c->head_dim, rot);
	return WT_OK;
}

/* Glm4vTextAttention's heads are hidden_size / num_attention_heads wide whatever head_dim
 * says (the RoPE would read head_dim: a different one breaks transformers' model). */
static int glm4v_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->head_dim * c->num_attention_heads != c->hidden_size)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: head_dim %" PRId64 " but GLM-4.1V's attention heads "
		                 "are hidden_size / num_attention_heads = %" PRId64 " / %" PRId64
		                 " wide; drop head_dim or make it match",
		                 c->head_dim, c->hidden_size, c->num_attention_heads);
	return glm4v_common_check(c, "GLM-4.1V", err);
}

/* Glm4vMoeTextAttention has no q_norm / k_norm (use_qk_norm would make vLLM's
 * Glm4MoeForCausalLM look for them). */
static int glm4v_moe_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->use_qk_norm)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: use_qk_norm is true but GLM-4.5V's text attention "
		                 "has no q_norm / k_norm; drop use_qk_norm");
	return glm4v_common_check(c, "GLM-4.5V", err);
}

static const char *const glm4v_archs[] = {"Glm4vForConditionalGeneration", NULL};
static const char *const glm4v_moe_archs[] = {"Glm4vMoeForConditionalGeneration", NULL};

/* Glm4vTextConfig / Glm4vMoeTextConfig leave tie_word_embeddings false. */
const sm_family shardmap_family_glm4v = {
    .name = "glm4v",
    .archs = glm4v_archs,
    .rules = glm4v_rules,
    .n_rules = SM_NRULES(glm4v_rules),
    .layer_prefix = "model.layers.",
    .check = glm4v_check,
    .aliases = shardmap_qwen_vl_aliases, /* Qwen2-VL's runtime names */
    .vision_gated = true,
    .glm4v = true,
};

/* GLM-4.5V's MTP layer (model.language_model.layers.46.*) is dropped as GLM-4.5's. */
const sm_family shardmap_family_glm4v_moe = {
    .name = "glm4v_moe",
    .archs = glm4v_moe_archs,
    .rules = glm4v_moe_rules,
    .n_rules = SM_NRULES(glm4v_moe_rules),
    .layer_is_moe = shardmap_moe_glm4,
    .drop_extra_layers = true,
    .layer_prefix = "model.layers.",
    .check = glm4v_moe_check,
    .aliases = shardmap_qwen_vl_aliases, /* Qwen2-VL's runtime names */
    .vision_gated = true,
    .glm4v = true,
};
