/*
 * family_rvl.c — R-4B (RForConditionalGeneration: YannQi/R-4B, remote code; docs/format.md
 * section 2.7), cut as vLLM's rvl.py / llava_onevision.py / siglip.py / qwen3.py load it. vLLM's
 * RForConditionalGeneration is LLaVA-OneVision's class with its own projector: the same
 * AutoWeightsLoader through the same hf_to_vllm_mapper (the transformers >= 4.52 layout
 * model.language_model. / model.vision_tower. / model.multi_modal_projector. /
 * model.image_newline / lm_head. onto the released one), so the rules are written in the
 * released names and both layouts give the same runtime names and bytes.
 *
 * - The language model (init_vllm_registered_model of text_config: Qwen3ForCausalLM, R-4B's
 *   text_config.model_type qwen3) under language_model.: the qwen3 family's table (Llama's
 *   rows, q/k/v fused by heads, gate / up merged, o_proj / down_proj by columns, embed_tokens /
 *   lm_head by padded vocabulary rows, plus q_norm / k_norm whole), each rank byte for byte the
 *   qwen3 family's of the same weights; tied by text_config.tie_word_embeddings alone.
 * - The SigLIP tower vision_tower.vision_model.* as LLaVA-OneVision's (SM_RULES_SIGLIP_TOWER,
 *   built with the quantization config by init_vision_tower_for_llava up to
 *   vision_feature_layer with require_post_norm=False: the deeper blocks and post_layernorm
 *   dropped, listed as skipped; SiglipMLPs not 64-aligned kept unquantized; the pooling head
 *   only under vision_use_head).
 * - RVLMultiModalProjector (plain nn.Modules, built without the quantization config): pre_norm
 *   (nn.LayerNorm(VE), weight and bias [VE]), linear_1 [hid, VE] and linear_2 [hid, hid] with
 *   their biases (bias=True whatever multimodal_projector_bias says): whole on every rank,
 *   never quantized, all required. image_newline [hid] (a plain Parameter) whole, required.
 *   LLaVA-OneVision's projector, which LlavaOnevisionForConditionalGeneration.__init__ builds
 *   first, is replaced before any weight is loaded: it has no parameters of its own.
 *
 * Followed: vllm-project/vllm rvl.py and llava_onevision.py at 2cc76c5c.
 */
#include <string.h>

#include "shardmap/families.h"
#include "shardmap/family_rules.h"
#include "shardmap/tower_defaults.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define RV_VT "vision_tower.vision_model."
#define RV_P  "multi_modal_projector."

static const sm_rule rvl_rules[] = {
    /* the qwen3 family's table under language_model. */
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_QK_NORM,
    /* LLaVA-OneVision's SigLIP tower */
    SM_RULES_SIGLIP_TOWER(RV_VT),
    SM_RULES_SIGLIP_POOL_HEAD(RV_VT "head.", SM_C_VHEAD),
    /* RVLMultiModalProjector: LayerNorm(VE), Linear(VE, hid), Linear(hid, hid), biases */
    SM_RULES_PRENORM_PROJ(RV_P, SM_D_HID),
};

/* vision_config a SigLIP tower whose heads split its width; text_config a Qwen3 language model;
 * one feature layer within the tower (pre_norm and linear_1 are VE wide). */
static int rvl_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv;
	sm_vis_geom g;
	if ((rv = shardmap_siglip_text_check(c, "R-4B's", "qwen3", "vLLM's qwen3.py table, R-4B's",
	                                     &g, err)) != WT_OK)
		return rv;
	return shardmap_vision_feature(c, &g, "vLLM's RVLMultiModalProjector",
	                               "pre_norm / linear_1 vision_config.hidden_size", "-1", err);
}

static const char *const rvl_archs[] = {"RForConditionalGeneration", NULL};

const sm_family shardmap_family_rvl = {
    .name = "rvl",
    .archs = rvl_archs,
    .rules = rvl_rules,
    .n_rules = SM_NRULES(rvl_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = rvl_check,
    /* RForConditionalGeneration's hf_to_vllm_mapper: LLaVA-NeXT's five prefixes */
    .aliases = shardmap_llava_next_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .drop_canon = shardmap_onevision_drop,
    .keep_float = shardmap_siglip_tower_float,
};
