/*
 * family_mistral3.c — Mistral 3 multimodal (Mistral3ForConditionalGeneration, model_type
 * mistral3: Mistral-Small-3.1 / 3.2-24B, Magistral Small): Mistral's language model under
 * `language_model.`, the Pixtral vision tower `vision_tower.*` and the projector
 * `multi_modal_projector.*` (docs/format.md section 2.7).
 *
 * Rules are written in the names the released checkpoints have (transformers 4.50/4.51:
 * `language_model.model.*`, `language_model.lm_head.weight`, `vision_tower.*`,
 * `multi_modal_projector.*`), which are also vLLM's module names; the layout transformers
 * >= 4.52 saves (`model.language_model.*`, `model.vision_tower.*`,
 * `model.multi_modal_projector.*`, `lm_head.weight`) maps onto them through the aliases
 * (Mistral3ForConditionalGeneration's _checkpoint_conversion_mapping read backwards), so
 * both layouts give the same runtime names and bytes.
 *
 * Pixtral blocks (vLLM's PixtralHFVisionModel; SM_RULES_PIXTRAL_TOWER, shared with LLaVA's
 * Pixtral-HF conversions): RMSNorms attention_norm / ffn_norm, q/k/v without biases fused by
 * vision heads into `attention.qkv_proj` (QKVParallelLinear, KV = H), o_proj by columns, the
 * gated MLP's gate / up merged by rows into `feed_forward.gate_up_proj`, down_proj by
 * columns; patch_conv (no bias) and ln_pre replicated. The projector (vLLM's
 * Mistral3MultiModalProjector): the RMSNorm `norm` and `patch_merger.merging_layer` (a plain
 * nn.Linear there) replicated, linear_1 by rows (ColumnParallelLinear) with its bias, linear_2 by
 * columns (RowParallelLinear) with its bias replicated; the biases exist exactly when
 * multimodal_projector_bias is true. A qwen3 text_config's per-head q_norm / k_norm are
 * replicated (vLLM's Qwen3ForCausalLM: LightOnOCR-1B's language model).
 *
 * LightOnOCRForConditionalGeneration: the same cut under LightOnOCR's names
 * (shardmap_family_lightonocr, mistral3's arch_variant).
 */
#include <inttypes.h>

#include "shardmap/families.h"
#include "shardmap/family_rules.h"
#include "shardmap/tower_defaults.h"

/* The language model's layers (the shared macros expand SM_LAYER here). */
#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define M3_VT "vision_tower."
#define M3_P  "multi_modal_projector."

static const sm_rule mistral3_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    /* a qwen3 text_config (LightOnOCR-1B: vLLM builds Qwen3ForCausalLM of it) has per-head q / k
     * RMSNorm weights [d], replicated */
    SM_RULES_LLAMA_QWEN_LAYER,
    SM_RULES_PIXTRAL_TOWER(M3_VT),
    /* the projector: norm [VE] and merging_layer [VE, VE * s^2] replicated, never quantized
     * (plain modules in vLLM); linear_1 [hid, VE] rows, linear_2 [hid, hid] columns */
    SM_RULE(M3_P "norm.weight", M3_P "norm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1,
            SM_D_VE, SM_D_ANY),
    SM_RULE(M3_P "patch_merger.merging_layer.weight", M3_P "patch_merger.merging_layer.weight",
            SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_VE, SM_D_VM),
    SM_RULE(M3_P "linear_1.weight", M3_P "linear_1.weight", SM_K_ROWS, 0, SM_U_HID, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_VE),
    SM_RULE(M3_P "linear_1.bias", M3_P "linear_1.bias", SM_K_ROWS, 0, SM_U_HID, SM_C_MMBIAS, 0, 1,
            SM_D_HID, SM_D_ANY),
    SM_RULE(M3_P "linear_2.weight", M3_P "linear_2.weight", SM_K_COLS, 0, SM_U_HID, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_HID),
    SM_RULE(M3_P "linear_2.bias", M3_P "linear_2.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_MMBIAS, 0, 1,
            SM_D_HID, SM_D_ANY),
};

/* Pixtral's attention splits the width into heads (head_dim = hidden_size //
 * num_attention_heads, a remainder would not fit q_proj); the projector reads one
 * feature layer (its norm and merging_layer are [hidden_size] wide), within the tower:
 * vLLM builds the blocks up to it (shardmap_pixtral_drop skips the rest). */
static int mistral3_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: %s needs vision_config (Pixtral: hidden_size, "
		    "intermediate_size, num_attention_heads, num_hidden_layers, patch_size)",
		    c->architecture);
	int64_t ve = c->v_hidden_size > 0 ? c->v_hidden_size : SM_PIX_HIDDEN;
	int64_t vh = c->v_num_attn_heads > 0 ? c->v_num_attn_heads : SM_PIX_HEADS;
	if (ve % vh)
		return shardmap_vision_heads_err("num_attention_heads", vh, ve, err);
	if (c->v_feature_list)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: vision_feature_layer is a list; Mistral 3's projector "
		    "norm and patch merger take one layer's features "
		    "(vision_config.hidden_size wide): give one index, e.g. -1");
	sm_vis_geom g = {.vd = c->v_num_layers > 0 ? c->v_num_layers : SM_PIX_LAYERS};
	return shardmap_vision_feature(c, &g, "Mistral 3's projector",
	                               "its norm vision_config.hidden_size", "-1", err);
}

/* LightOnOCRForConditionalGeneration (lightonai/LightOnOCR-1B-1025; vLLM's lightonocr.py): a
 * Mistral3ForConditionalGeneration (the same tower, projector and language model of text_config,
 * the release's a Qwen3) whose hf_to_vllm_mapper reads the release's names model.vision_encoder.,
 * model.vision_projection., model.language_model., lm_head. onto vLLM's modules vision_tower.,
 * multi_modal_projector., language_model.model., language_model.lm_head. (the rules' names, the
 * runtime names). Mistral 3's table under those aliases; Mistral 3's other layout
 * (model.vision_tower.*) matches no prefix of the mapper and is an unknown tensor. */
static const char *const lightonocr_archs[] = {"LightOnOCRForConditionalGeneration", NULL};
static const char *const lightonocr_aliases[] = {"model.language_model.",
                                                 "language_model.model.",
                                                 "model.vision_encoder.",
                                                 "vision_tower.",
                                                 "model.vision_projection.",
                                                 "multi_modal_projector.",
                                                 "lm_head.",
                                                 "language_model.lm_head.",
                                                 NULL};

const sm_family shardmap_family_lightonocr = {
    .name = "mistral3",
    .archs = lightonocr_archs,
    .rules = mistral3_rules,
    .n_rules = SM_NRULES(mistral3_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = mistral3_check,
    .aliases = lightonocr_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .pixtral = true,
    .drop_canon = shardmap_pixtral_drop,
};

static const char *const mistral3_archs[] = {"Mistral3ForConditionalGeneration",
                                             "LightOnOCRForConditionalGeneration", NULL};

const sm_family shardmap_family_mistral3 = {
    .name = "mistral3",
    .archs = mistral3_archs,
    .rules = mistral3_rules,
    .n_rules = SM_NRULES(mistral3_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = mistral3_check,
    .aliases = shardmap_llava_aliases, /* Gemma 3's */
    .vision_gated = true,
    .vision_siglip = true,
    .pixtral = true,
    .drop_canon = shardmap_pixtral_drop,
    .arch_variant = &shardmap_family_lightonocr,
};
