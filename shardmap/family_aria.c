/*
 * family_aria.c — Aria (AriaForConditionalGeneration, model_type aria: rhymes-ai/Aria;
 * docs/format.md section 2.7), cut as vLLM's aria.py loads it.
 *
 * Names: the released layout (what transformers 4.57.1's save_pretrained writes, reversing
 * _checkpoint_conversion_mapping) is canonical: the language model `language_model.model.*`
 * with `language_model.lm_head.weight`, the tower `vision_tower.*`, the projector
 * `multi_modal_projector.*`; the modules' names (model.language_model.*, model.vision_tower.*,
 * model.multi_modal_projector.*, lm_head.weight), which transformers also loads and vLLM's
 * hf_to_vllm_mapper maps, are aliases of them.
 *
 * Language model (AriaTextModel: LlamaModel with AriaTextDecoderLayer): Llama's attention
 * (q/k/v fused by heads, o_proj by columns; their biases with attention_bias) and norms;
 * every layer's mlp is AriaTextMoELayer: router [E, hid] replicated and never quantized
 * (vLLM's router_weight), the experts stacked as bmm operands fc1 [E, hid, 2*I] (the first I
 * columns the gate, silu'd) and fc2 [E, I, hid], loaded transposed into w13 [gate_r; up_r] /
 * w2 as AriaFusedMoE.weight_loader cuts them (each half's columns by TP rank), quantized
 * (FusedMoE built with the quantization config); shared_experts a LlamaMLP intermediate_size
 * x moe_num_shared_experts wide, merged gate_up_proj by rows and down_proj by columns,
 * quantized.
 *
 * Vision tower (Idefics3VisionTransformer; vLLM's AriaVisionTransformer, built with the
 * quantization config): Idefics3's SigLIP-style table under "vision_tower." without
 * vision_model. (q/k/v fused by heads, out_proj by columns, fc1 rows, fc2 columns,
 * quantized); post_layernorm is dropped (vLLM replaces it with Identity and skips it), every
 * block is kept (vLLM builds them all whatever vision_feature_layer says).
 *
 * Projector (AriaProjector): query [max queries, VE], the cross attention (transformers'
 * AriaCrossAttention, which vLLM imports: plain nn.Linear / nn.MultiheadAttention / nn.LayerNorm)
 * and the LayerNorm whole and unquantized; the FFN's linear_in (ColumnParallelLinear) by rows
 * and linear_out (RowParallelLinear) by columns, built without a quantization config:
 * unquantized.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

/* The language model's layers (the shared macros expand SM_LAYER here). */
#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define AR_M  SM_LAYER "mlp."
#define AR_VT "vision_tower."
#define AR_P  "multi_modal_projector."

/* Replicated, unquantized tensor of the projector. */
#define AR_REPL(n, nd, d0, d1)                                                                     \
	SM_RULE(AR_P n, AR_P n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define AR_VEC(n) AR_REPL(n, 1, SM_D_VE, SM_D_ANY)

static const sm_rule aria_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    SM_RULES_ATTN_SWITCHED,
    SM_RULE_ROUTER("mlp.router.weight", 2, SM_D_E, SM_D_HID),
    SM_RULE3(AR_M "experts.fc1.weight", AR_M "experts.w13_weight", SM_K_EXP13S, 0, SM_U_IE,
             SM_C_MOE, SM_F_QUANT | SM_F_TRANS, SM_D_E, SM_D_IE2, SM_D_HID),
    SM_RULE3(AR_M "experts.fc2.weight", AR_M "experts.w2_weight", SM_K_EXP2S, 0, SM_U_IE, SM_C_MOE,
             SM_F_QUANT | SM_F_TRANS, SM_D_E, SM_D_HID, SM_D_IE),
    SM_RULE(AR_M "shared_experts.gate_proj.weight", AR_M "shared_experts.gate_up_proj.weight",
            SM_K_ROWS, 0, SM_U_ISH, SM_C_SHARED, SM_F_QUANT, 2, SM_D_ISH, SM_D_HID),
    SM_RULE(AR_M "shared_experts.up_proj.weight", AR_M "shared_experts.gate_up_proj.weight",
            SM_K_ROWS, 1, SM_U_ISH, SM_C_SHARED, SM_F_QUANT, 2, SM_D_ISH, SM_D_HID),
    SM_RULE(AR_M "shared_experts.down_proj.weight", AR_M "shared_experts.down_proj.weight",
            SM_K_COLS, 0, SM_U_ISH, SM_C_SHARED, SM_F_QUANT, 2, SM_D_HID, SM_D_ISH),
    SM_RULES_SIGLIP_TOWER(AR_VT),
    /* AriaProjector.query: max(projector_patch_to_query_dict.values()) learned queries */
    AR_REPL("query", 2, SM_D_QFQ, SM_D_VE),
    AR_REPL("cross_attn.q_proj.weight", 2, SM_D_VE, SM_D_VE),
    AR_REPL("cross_attn.k_proj.weight", 2, SM_D_VE, SM_D_VE),
    AR_REPL("cross_attn.v_proj.weight", 2, SM_D_VE, SM_D_VE),
    AR_REPL("cross_attn.multihead_attn.in_proj_weight", 2, SM_D_V3E, SM_D_VE),
    AR_REPL("cross_attn.multihead_attn.in_proj_bias", 1, SM_D_V3E, SM_D_ANY),
    AR_REPL("cross_attn.multihead_attn.out_proj.weight", 2, SM_D_VE, SM_D_VE),
    AR_VEC("cross_attn.multihead_attn.out_proj.bias"),
    AR_REPL("cross_attn.linear.weight", 2, SM_D_VE, SM_D_VE),
    AR_VEC("cross_attn.linear.bias"),
    AR_VEC("cross_attn.layer_norm.weight"),
    AR_VEC("cross_attn.layer_norm.bias"),
    AR_VEC("cross_attn.layer_norm_kv.weight"),
    AR_VEC("cross_attn.layer_norm_kv.bias"),
    AR_VEC("layer_norm.weight"),
    AR_VEC("layer_norm.bias"),
    /* AriaProjectorMLP: ColumnParallelLinear(VE, hid) / RowParallelLinear(hid, hid), no
     * biases, no quantization config */
    SM_RULE(AR_P "feed_forward.linear_in.weight", AR_P "feed_forward.linear_in.weight", SM_K_ROWS,
            0, SM_U_HID, SM_C_ALL, 0, 2, SM_D_HID, SM_D_VE),
    SM_RULE(AR_P "feed_forward.linear_out.weight", AR_P "feed_forward.linear_out.weight", SM_K_COLS,
            0, SM_U_HID, SM_C_ALL, 0, 2, SM_D_HID, SM_D_HID),
};

/* Every AriaTextDecoderLayer's mlp is AriaTextMoELayer. */
static bool aria_moe(const ckpt_config *c, int64_t i)
{
	(void)c;
	(void)i;
	return true;
}

/* The tower's post_layernorm: vLLM's AriaVisionTransformer has Identity there and skips it. */
static bool aria_drop(const ckpt_config *c, const char *cn)
{
	(void)c;
	static const char post[] = AR_VT "post_layernorm.";
	return strncmp(cn, post, sizeof(post) - 1) == 0;
}

/* A text_config AriaConfig builds (an object naming a model_type), experts and shared
 * experts, no MLP biases; the tower's heads divide its width and a patch fits. */
static int aria_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->lm_model_type[0] == '\0')
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: AriaForConditionalGeneration needs a text_config "
		                 "object (model_type aria_text, its sizes)");
	if (strcmp(c->lm_model_type, "?") == 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: text_config has no model_type; transformers 4.57.1's "
		    "AriaConfig builds an AriaTextConfig only of a text_config that "
		    "names one: add \"model_type\": \"aria_text\"");
	if (c->num_experts < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: text_config.moe_num_experts %" PRId64
		                 " is not an expert count (every Aria layer is MoE)",
		                 c->num_experts);
	if (c->n_shared_experts < 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: text_config.moe_num_shared_experts %" PRId64
		                 ": Aria's shared experts are intermediate_size x "
		                 "moe_num_shared_experts wide; give at least 1 (AriaTextConfig's "
		                 "default 2)",
		                 c->n_shared_experts);
	if (c->mlp_bias)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: text_config.mlp_bias true (biases on the shared "
		                 "experts) is not supported for Aria; no release sets it: set it "
		                 "false");
	sm_vis_geom g;
	return shardmap_vision_geom(c, &shardmap_vis_i3v, &g, err);
}

static const char *const aria_archs[] = {"AriaForConditionalGeneration", NULL};

/* transformers 4.57.1's module names -> the released ones (rules) */
static const char *const aria_aliases[] = {"model.language_model.",
                                           "language_model.model.",
                                           "model.vision_tower.",
                                           "vision_tower.",
                                           "model.multi_modal_projector.",
                                           "multi_modal_projector.",
                                           "lm_head.",
                                           "language_model.lm_head.",
                                           NULL};

const sm_family shardmap_family_aria = {
    .name = "aria",
    .archs = aria_archs,
    .rules = aria_rules,
    .n_rules = SM_NRULES(aria_rules),
    .layer_is_moe = aria_moe,
    .layer_prefix = "language_model.model.layers.",
    .check = aria_check,
    .aliases = aria_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .idefics3 = true,
    .drop_canon = aria_drop,
    .aria = true,
};
