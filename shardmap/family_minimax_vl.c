/*
 * family_minimax_vl.c — MiniMax-VL-01 (MiniMaxVL01ForConditionalGeneration, model_type
 * minimax_vl_01: MiniMaxAI/MiniMax-VL-01, remote code; docs/format.md section 2.7), cut as
 * vLLM's minimax_vl_01.py loads it (AutoWeightsLoader, no renames: the released names only).
 *
 * - The language model (init_vllm_registered_model on text_config, a MiniMaxText01Config:
 *   vLLM's MiniMaxText01ForCausalLM) under `language_model.`: MiniMax-Text-01's rules
 *   (family_minimax.h: lightning layers with whole heads per rank, softmax q/k/v fused by
 *   heads, Mixtral's experts stacked; the lightning buffers dropped), the same bytes as the
 *   minimax family's ranks of the same weights.
 * - The vision tower `vision_tower.*` (init_vision_tower_for_MiniMaxVL01, picked by
 *   vision_config.model_type: CLIP, SigLIP or Pixtral; require_post_norm=False), as LLaVA's
 *   (family_llava.c): built up to vision_feature_layer, whose _get_layer_index takes a
 *   non-negative index itself and a negative one as VD + index + 1 (shardmap_vision_kept);
 *   the deeper blocks and post_layernorm dropped and listed as skipped.
 * - MiniMaxVL01MultiModalProjector: linear_1 [hid, VE] ColumnParallelLinear (rows, its bias
 *   split with them), linear_2 [hid, hid] RowParallelLinear (columns, its bias replicated),
 *   both given the quant_config; the biases always (vLLM passes
 *   multimodal_projector_bias=True whatever config.json says).
 * - image_newline [hid], a plain Parameter: replicated, never quantized.
 */
#include <string.h>

#include "shardmap/family_minimax.h"
#include "shardmap/tower_defaults.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define MV_VT "vision_tower.vision_model."
#define MV_P  "multi_modal_projector."

/* The projector (biases always) and image_newline. */
#define MV_RULES_PROJ                                                                              \
	SM_RULE(MV_P "linear_1.weight", MV_P "linear_1.weight", SM_K_ROWS, 0, SM_U_HID, SM_C_ALL,  \
	        SM_F_QUANT, 2, SM_D_HID, SM_D_VE),                                                 \
	    SM_RULE(MV_P "linear_1.bias", MV_P "linear_1.bias", SM_K_ROWS, 0, SM_U_HID, SM_C_ALL,  \
	            0, 1, SM_D_HID, SM_D_ANY),                                                     \
	    SM_RULE(MV_P "linear_2.weight", MV_P "linear_2.weight", SM_K_COLS, 0, SM_U_HID,        \
	            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_HID),                                  \
	    SM_RULE(MV_P "linear_2.bias", MV_P "linear_2.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, \
	            0, 1, SM_D_HID, SM_D_ANY),                                                     \
	    SM_RULE("image_newline", "image_newline", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1,     \
	            SM_D_HID, SM_D_ANY)

static const sm_rule mv_clip_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_MINIMAX_LAYERS,
    SM_RULES_CLIP_TOWER(MV_VT),
    MV_RULES_PROJ,
};

static const sm_rule mv_siglip_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_MINIMAX_LAYERS,
    SM_RULES_SIGLIP_TOWER(MV_VT),
    SM_RULES_SIGLIP_POOL_HEAD(MV_VT "head.", SM_C_VHEAD),
    MV_RULES_PROJ,
};

static const sm_rule mv_pixtral_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_MINIMAX_LAYERS,
    SM_RULES_PIXTRAL_TOWER("vision_tower."),
    MV_RULES_PROJ,
};

static bool mv_clip_drop(const ckpt_config *c, const char *cn)
{
	int64_t vd = c->v_num_layers > 0 ? c->v_num_layers : SM_CLIP_LAYERS;
	return shardmap_vision_drop(c, MV_VT, vd, true, cn);
}

static bool mv_siglip_drop(const ckpt_config *c, const char *cn)
{
	int64_t vd = c->v_num_layers > 0 ? c->v_num_layers : SM_SIGLIP_LAYERS;
	return shardmap_vision_drop(c, MV_VT, vd, true, cn);
}

/* text_config a MiniMaxText01Config (model_type minimax_text_01, or minimax_m1: the same
 * keys) whose layers and experts the minimax family cuts; the tower's geometry; one feature
 * layer within it (the projector's linear_1 is VE wide). */
static int mv_check_as(const ckpt_config *c, const sm_vis_class *k, const char *eg, wt_errbuf *err)
{
	int rv;
	if ((rv = shardmap_vision_need(c, k, err)) != WT_OK)
		return rv;
	if (c->lm_model_type[0] == '\0')
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs a text_config object (model_type "
		                 "minimax_text_01, attn_type_list and its sizes)",
		                 c->architecture);
	if (strcmp(c->lm_model_type, "minimax_text_01") != 0 &&
	    strcmp(c->lm_model_type, "minimax_m1") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: text_config.model_type '%s': %s's language model "
		                 "is MiniMax-Text-01 (MiniMaxVL01Config builds a "
		                 "MiniMaxText01Config): give minimax_text_01",
		                 c->lm_model_type, c->architecture);
	if ((rv = shardmap_minimax_check(c, err)) != WT_OK)
		return rv;
	sm_vis_geom g;
	if ((rv = shardmap_vision_geom(c, k, &g, err)) != WT_OK)
		return rv;
	return shardmap_vision_feature(c, &g, "vLLM's MiniMaxVL01MultiModalProjector",
	                               "linear_1 vision_config.hidden_size", eg, err);
}

/* The default table: a CLIP tower (the release's); any model_type but the other two refused. */
static int mv_clip_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->has_vision && strcmp(c->v_model_type, "clip_vision_model") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: vision_config.model_type '%s': "
		                 "init_vision_tower_for_MiniMaxVL01 builds a CLIP "
		                 "(clip_vision_model, MiniMax-VL-01's), SigLIP "
		                 "(siglip_vision_model) or Pixtral (pixtral) tower only",
		                 c->v_model_type);
	return mv_check_as(c, &shardmap_vis_clip, "-1", err);
}

static int mv_siglip_check(const ckpt_config *c, wt_errbuf *err)
{
	return mv_check_as(c, &shardmap_vis_siglip, "-1", err);
}

static int mv_pixtral_check(const ckpt_config *c, wt_errbuf *err)
{
	return mv_check_as(c, &shardmap_vis_pixtral, "-1", err);
}

static const char *const mv_archs[] = {"MiniMaxVL01ForConditionalGeneration", NULL};

#define MV_FAMILY(tbl)                                                                             \
	.name = "minimax_vl_01", .archs = mv_archs, .rules = tbl, .n_rules = SM_NRULES(tbl),       \
	.layer_is_moe = shardmap_minimax_moe, .layer_prefix = "language_model.model.layers.",      \
	.layer_is_linear = shardmap_minimax_linear, .linear_keys = "text_config.attn_type_list",   \
	.drop_suffixes = shardmap_minimax_drops, .vision_gated = true, .vision_siglip = true

static const sm_family mv_siglip = {
    MV_FAMILY(mv_siglip_rules),
    .check = mv_siglip_check,
    .drop_canon = mv_siglip_drop,
    .keep_float = shardmap_siglip_tower_float,
};

static const sm_family mv_pixtral = {
    MV_FAMILY(mv_pixtral_rules),
    .check = mv_pixtral_check,
    .pixtral = true,
    .drop_canon = shardmap_pixtral_drop,
};

/* MiniMaxText01ForCausalLM never ties its lm_head (the loader refuses text_config's
 * tie_word_embeddings true; the top level's is not the text model's) */
const sm_family shardmap_family_minimax_vl_01 = {
    MV_FAMILY(mv_clip_rules),   .check = mv_clip_check,     .clip = true,
    .drop_canon = mv_clip_drop, .siglip_tower = &mv_siglip, .pixtral_tower = &mv_pixtral,
};
