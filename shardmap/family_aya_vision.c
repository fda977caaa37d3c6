/*
 * family_aya_vision.c — Aya Vision (AyaVisionForConditionalGeneration, model_type aya_vision:
 * CohereLabs/aya-vision-8b): a Cohere 2 language model under `language_model.`, the SigLIP
 * vision tower `vision_tower.vision_model.*` and the projector `multi_modal_projector.*`
 * (layernorm, linear_1, SwiGLU, linear_2 after a downsample_factor pixel shuffle;
 * docs/format.md section 2.7), cut as vLLM's aya_vision.py / siglip.py / commandr.py load
 * them.
 *
 * Rules are written in the released names (`language_model.model.*`, `vision_tower.*`,
 * `multi_modal_projector.*`); the layout transformers 4.57.1 saves (`model.language_model.*`,
 * `lm_head.weight`, `model.vision_tower.*`, `model.multi_modal_projector.*`) maps onto them
 * through Gemma 3's aliases (AyaVisionForConditionalGeneration's
 * _checkpoint_conversion_mapping read backwards). The language model is Cohere 2's table
 * (one input_layernorm a layer, no q/k norms), tied by text_config.tie_word_embeddings
 * (Cohere2Config's default true); the tower Gemma 3's SigLIP rows, built as vLLM's
 * SiglipVisionModel with num_hidden_layers_override up to vision_feature_layer: the blocks
 * past it are dropped, and post_layernorm with them (require_post_norm None builds it only
 * when every block is). The projector's LayerNorm [VE * df^2] and both Linears with their
 * biases are plain nn.LayerNorm / nn.Linear in vLLM's AyaVisionMultiModalProjector: whole on
 * every rank and never quantized.
 *
 * Cohere2Vision (Cohere2VisionForConditionalGeneration, model_type cohere2_vision:
 * CohereLabs/command-a-vision-07-2025), cut as vLLM's cohere2_vision.py / siglip.py /
 * commandr.py load it: the same Cohere 2 language model and tie, in the transformers 4.57
 * layout (model.language_model.*, model.vision_tower.*, model.multi_modal_projector.*,
 * lm_head: vLLM's hf_to_vllm_mapper, read through Gemma 3's aliases); the whole SigLIP tower
 * with post_layernorm (vLLM's SiglipVisionModel without num_hidden_layers_override: the
 * tower's last hidden state); the projector without a LayerNorm: linear_1 [A, VE * df^2] a
 * MergedColumnParallelLinear of two A / 2 halves (x and gate: each half's rows split by rank,
 * [x_r; gate_r], with its bias), linear_2 [hid, A / 2] a RowParallelLinear (columns, its bias
 * replicated), both built without vLLM's quant_config: never quantized.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"
#include "shardmap/tower_defaults.h"

/* The language model's layers (the shared macros expand SM_LAYER here). */
#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define AV_VT                  "vision_tower.vision_model."
#define AV_P                   "multi_modal_projector."
#define AV_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)

static const sm_rule aya_vision_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULE(SM_LAYER "input_layernorm.weight", SM_LAYER "input_layernorm.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_SIGLIP_TOWER(AV_VT),
    /* nn.LayerNorm(VE * df^2), nn.Linear(VE * df^2, A), nn.Linear(A / 2, hid): replicated,
     * never quantized */
    AV_REPL(AV_P "layernorm.weight", 1, SM_D_VM, SM_D_ANY),
    AV_REPL(AV_P "layernorm.bias", 1, SM_D_VM, SM_D_ANY),
    AV_REPL(AV_P "linear_1.weight", 2, SM_D_VPI, SM_D_VM),
    AV_REPL(AV_P "linear_1.bias", 1, SM_D_VPI, SM_D_ANY),
    AV_REPL(AV_P "linear_2.weight", 2, SM_D_HID, SM_D_VPO),
    AV_REPL(AV_P "linear_2.bias", 1, SM_D_HID, SM_D_ANY),
};

/* The blocks past the feature layer, and post_layernorm when any is. */
static bool aya_drop(const ckpt_config *c, const char *cn)
{
	int64_t vd = c->v_num_layers > 0 ? c->v_num_layers : SM_SIGLIP_LAYERS;
	return shardmap_vision_drop(c, AV_VT, vd, false, cn);
}

/* vision_config a SigLIP tower whose heads split its width and whose patch grid the pixel
 * shuffle folds by downsample_factor; one feature layer within it; a Cohere 2 text model;
 * an even alignment_intermediate_size (SwiGLU halves it). */
static int aya_vision_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv;
	if ((rv = shardmap_vision_need(c, &shardmap_vis_siglip, err)) != WT_OK)
		return rv;
	if ((rv = shardmap_text_config_is(c, "cohere2", NULL, "aya-vision's Command R7B text model",
	                                  err)) != WT_OK)
		return rv;
	sm_vis_geom g;
	if ((rv = shardmap_vision_geom(c, &shardmap_vis_siglip, &g, err)) != WT_OK)
		return rv;
	if ((rv = shardmap_vision_feature(c, &g, "the projector",
	                                  "layernorm vision_config.hidden_size x "
	                                  "downsample_factor^2",
	                                  "-1", err)) != WT_OK)
		return rv;
	if ((rv = shardmap_vision_shuffle(c, &g, "downsample_factor", "the projector's", "",
	                                  err)) != WT_OK)
		return rv;
	int64_t a = c->v_proj_in_dim > 0 ? c->v_proj_in_dim : c->hidden_size;
	if (a % 2)
		return wt_seterr(err, WT_ESHAPE,
		                 "config.json: alignment_intermediate_size %" PRId64
		                 " is odd; the projector's SwiGLU splits linear_1's output in two "
		                 "halves (linear_2 takes %" PRId64 " / 2): give an even size",
		                 a, a);
	return shardmap_check_swa_layer_types(c, "Cohere2", err);
}

static const sm_rule cohere2_vision_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULE(SM_LAYER "input_layernorm.weight", SM_LAYER "input_layernorm.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_SIGLIP_TOWER(AV_VT),
    /* MergedColumnParallelLinear(VE * df^2, [A / 2] * 2, bias=True): the halves' rows by
     * rank; RowParallelLinear(A / 2, hid, bias=True): columns, the bias whole. No
     * quant_config: never quantized */
    SM_RULE(AV_P "linear_1.weight", AV_P "linear_1.weight", SM_K_ROWS2, 0, SM_U_VPO, SM_C_ALL, 0, 2,
            SM_D_VPI, SM_D_VM),
    SM_RULE(AV_P "linear_1.bias", AV_P "linear_1.bias", SM_K_ROWS2, 0, SM_U_VPO, SM_C_ALL, 0, 1,
            SM_D_VPI, SM_D_ANY),
    SM_RULE(AV_P "linear_2.weight", AV_P "linear_2.weight", SM_K_COLS, 0, SM_U_VPO, SM_C_ALL, 0, 2,
            SM_D_HID, SM_D_VPO),
    AV_REPL(AV_P "linear_2.bias", 1, SM_D_HID, SM_D_ANY),
};

/* vision_config a SigLIP tower whose heads split its width and whose patch grid the pixel
 * shuffle folds by downsample_factor; a Cohere 2 text model; an even
 * alignment_intermediate_size (the SwiGLU's two halves). */
static int cohere2_vision_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv;
	if ((rv = shardmap_vision_need(c, &shardmap_vis_siglip, err)) != WT_OK)
		return rv;
	if ((rv = shardmap_text_config_is(c, "cohere2", NULL,
	                                  "command-a-vision's Command A text model", err)) != WT_OK)
		return rv;
	sm_vis_geom g;
	if ((rv = shardmap_vision_geom(c, &shardmap_vis_siglip, &g, err)) != WT_OK)
		return rv;
	if ((rv = shardmap_vision_shuffle(c, &g, "downsample_factor", "the projector's", "",
	                                  err)) != WT_OK)
		return rv;
	if (c->v_proj_in_dim % 2)
		return wt_seterr(
		    err, WT_ESHAPE,
		    "config.json: alignment_intermediate_size %" PRId64
		    " is odd; the projector's linear_1 is two halves (x and the SwiGLU "
		    "gate; linear_2 takes %" PRId64 " / 2): give an even size",
		    c->v_proj_in_dim, c->v_proj_in_dim);
	return shardmap_check_swa_layer_types(c, "Cohere2", err);
}

static const char *const aya_vision_archs[] = {"AyaVisionForConditionalGeneration", NULL};

const sm_family shardmap_family_aya_vision = {
    .name = "aya_vision",
    .archs = aya_vision_archs,
    .rules = aya_vision_rules,
    .n_rules = SM_NRULES(aya_vision_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = aya_vision_check,
    .aliases = shardmap_llava_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .tie_default = true,
    .drop_canon = aya_drop,
    .aya_vision = true,
    .keep_float = shardmap_siglip_tower_float,
};

static const char *const cohere2_vision_archs[] = {"Cohere2VisionForConditionalGeneration", NULL};

const sm_family shardmap_family_cohere2_vision = {
    .name = "cohere2_vision",
    .archs = cohere2_vision_archs,
    .rules = cohere2_vision_rules,
    .n_rules = SM_NRULES(cohere2_vision_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = cohere2_vision_check,
    .aliases = shardmap_llava_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .tie_default = true,
    .aya_vision = true,
    .keep_float = shardmap_siglip_tower_float,
};
