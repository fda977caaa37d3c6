/*
 * family_llava.c — LLaVA (LlavaForConditionalGeneration, model_type llava: llava-1.5-7b /
 * 13b-hf, llava-interleave) and LLaVA-NeXT (LlavaNextForConditionalGeneration, model_type
 * llava_next: llava-v1.6-mistral-7b-hf, -vicuna-7b / 13b-hf; LLaVA's tensors and
 * `image_newline`): a Llama or Mistral language model under `language_model.`,
 * the CLIP vision tower `vision_tower.vision_model.*` and the two-layer projector
 * `multi_modal_projector.*` (docs/format.md section 2.7), cut as vLLM's llava.py / clip.py
 * load them.
 *
 * Rules are written in the names the released checkpoints have (`language_model.model.*`,
 * `language_model.lm_head.weight`, `vision_tower.*`, `multi_modal_projector.*`), which are
 * vLLM's module names; the layout transformers >= 4.52 saves (`model.language_model.*`,
 * `model.vision_tower.*`, `model.multi_modal_projector.*`, `lm_head.weight`) maps onto them
 * through Gemma 3's aliases, so both layouts give the same runtime names and bytes.
 *
 * CLIP blocks (vLLM's CLIPEncoderLayer): LayerNorms layer_norm1 / layer_norm2 with biases,
 * q/k/v with biases fused by heads into `self_attn.qkv_proj` (QKVParallelLinear, KV = H),
 * out_proj by columns (its bias replicated), fc1 by rows with its bias, fc2 by columns (its
 * bias replicated); the class / patch / position embeddings and pre_layrnorm (sic)
 * replicated. vLLM builds the tower only up to vision_feature_layer (llava.py
 * _get_num_hidden_layers) and without post_layernorm (require_post_norm=False): the deeper
 * blocks and post_layernorm are dropped and listed as skipped. The projector (vLLM's
 * LlavaMultiModalProjector): linear_1 by rows (ColumnParallelLinear) with its bias,
 * linear_2 by columns (RowParallelLinear) with its bias replicated; the biases exist
 * exactly when multimodal_projector_bias is true (LlavaConfig's default).
 *
 * LLaVA with a Pixtral tower (LlavaForConditionalGeneration whose vision_config.model_type is
 * pixtral: mistral-community/pixtral-12b and the other Pixtral-HF conversions; the pixtral_tower
 * table shardmap_family_for picks), cut as vLLM's llava.py / pixtral.py / llama.py load it:
 * LLaVA's language model, projector and layouts; the tower `vision_tower.*` as Mistral 3's
 * (SM_RULES_PIXTRAL_TOWER: PixtralHFVisionModel, q/k/v and gate / up fused, quantized like
 * the LM's Linears), built by init_vision_tower_for_llava up to vision_feature_layer: the
 * deeper blocks are dropped (PixtralHFVisionModel.load_weights skips them). Pixtral has no
 * post-norm to drop.
 *
 * LLaVA with a SigLIP tower (vision_config.model_type siglip_vision_model; the siglip_tower
 * table shardmap_family_for picks): LLaVA's language model, projector and layouts, the tower as
 * LLaVA-OneVision's below (init_vision_tower_for_llava builds SiglipVisionModel the same way).
 * LLaVA-NeXT and LLaVA-NeXT-Video likewise (llava_next_siglip, llava_next_video_siglip: their
 * image_newline, projector and layouts).
 * MantisForConditionalGeneration and TarsierForConditionalGeneration take LLaVA's tables
 * (llava_archs); Tarsier refuses the >= 4.52 layout and a Pixtral tower and checks its
 * split-token ids.
 *
 * LLaVA-OneVision (LlavaOnevisionForConditionalGeneration, model_type llava_onevision:
 * llava-hf/llava-onevision-qwen2-0.5b-ov-hf / 7b / 72b), cut as vLLM's llava_onevision.py /
 * siglip.py / qwen2.py load it: Qwen2's table (q/k/v biases) under `language_model.`, tied by
 * text_config.tie_word_embeddings alone (Qwen2Config's default false; transformers 4.57.1
 * ties by get_text_config(), vLLM builds Qwen2ForCausalLM of text_config), the SigLIP tower
 * `vision_tower.vision_model.*` as Gemma 3's rows (SM_RULES_SIGLIP_TOWER) built by
 * init_vision_tower_for_llava up to vision_feature_layer with require_post_norm=False (the
 * deeper blocks and post_layernorm dropped), the projector's linear_1 [hid, VE] / linear_2
 * [hid, hid] and their biases (when multimodal_projector_bias, LlavaOnevisionConfig's
 * default true) plain nn.Linear in vLLM's LlavaOnevisionMultiModalProjector: whole on every
 * rank, never quantized; image_newline [hid] replicated. Both layouts through LLaVA-NeXT's
 * aliases (LlavaOnevisionForConditionalGeneration's _checkpoint_conversion_mapping).
 *
 * LLaVA-NeXT-Video (LlavaNextVideoForConditionalGeneration, model_type llava_next_video:
 * llava-hf/LLaVA-NeXT-Video-7B-hf), cut as vLLM's llava_next_video.py / clip.py / llama.py
 * load it: LLaVA's language model and CLIP tower (the same rows and drops); the projector
 * (linear_1 [hid, VE], linear_2 [hid, hid], biases when multimodal_projector_bias) plain
 * nn.Linear in vLLM's LlavaNextMultiModalProjector of llava_next_video.py: whole on every
 * rank, never quantized; image_newline, which transformers builds and saves, vLLM ignores
 * (ignore_unexpected_prefixes): skipped. The video resampler (LlavaNextVideoPooler) pools
 * without weights; spatial_pool_mode conv (a Conv2d vLLM cannot load) is refused. The tie
 * is text_config's alone (transformers' get_text_config(), vLLM's text model). Both layouts
 * through LLaVA-NeXT's aliases.
 */
#include <stdlib.h>
#include <string.h>

#include "shardmap/family_rules.h"
#include "shardmap/tower_defaults.h"

/* The language model's layers (the shared macros expand SM_LAYER here). */
#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define LV_VT "vision_tower.vision_model."
#define LV_VB LV_VT "encoder.layers.{i}."
#define LV_P  "multi_modal_projector."

/* The language model under `language_model.`: Llama's table (SM_LAYER above). */
#define LV_RULES_LM                                                                                \
	SM_RULES_TOP_AT("language_model."), SM_RULES_LNORM, SM_RULES_ATTN,                         \
	    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL)

#define OV_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define OV_BIAS(n)             SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_MMBIAS, 0, 1, SM_D_HID, SM_D_ANY)
/* A projector of plain nn.Linear (LLaVA-OneVision's, LLaVA-NeXT-Video's): whole on every rank,
 * never quantized. */
#define LV_RULES_PLAIN_PROJ                                                                        \
	OV_REPL(LV_P "linear_1.weight", 2, SM_D_HID, SM_D_VE), OV_BIAS(LV_P "linear_1.bias"),      \
	    OV_REPL(LV_P "linear_2.weight", 2, SM_D_HID, SM_D_HID), OV_BIAS(LV_P "linear_2.bias")
/* image_newline [hid]: a plain Parameter, replicated, never quantized */
#define LV_RULE_NEWLINE OV_REPL("image_newline", 1, SM_D_HID, SM_D_ANY)

/* The projector: linear_1 [hid, VE] rows, linear_2 [hid, hid] columns, their biases. */
#define LV_RULES_PROJ                                                                              \
	SM_RULE(LV_P "linear_1.weight", LV_P "linear_1.weight", SM_K_ROWS, 0, SM_U_HID, SM_C_ALL,  \
	        SM_F_QUANT, 2, SM_D_HID, SM_D_VE),                                                 \
	    SM_RULE(LV_P "linear_1.bias", LV_P "linear_1.bias", SM_K_ROWS, 0, SM_U_HID,            \
	            SM_C_MMBIAS, 0, 1, SM_D_HID, SM_D_ANY),                                        \
	    SM_RULE(LV_P "linear_2.weight", LV_P "linear_2.weight", SM_K_COLS, 0, SM_U_HID,        \
	            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_HID),                                  \
	    SM_RULE(LV_P "linear_2.bias", LV_P "linear_2.bias", SM_K_REPL, 0, SM_U_NONE,           \
	            SM_C_MMBIAS, 0, 1, SM_D_HID, SM_D_ANY)

static const sm_rule llava_rules[] = {
    LV_RULES_LM,
    SM_RULES_CLIP_TOWER(LV_VT),
    LV_RULES_PROJ,
};

/* LLaVA-NeXT: image_newline [hid], the row appended after each image's rows (vLLM's
 * LlavaNextForConditionalGeneration.image_newline, a plain Parameter): replicated, never
 * quantized. */
static const sm_rule llava_next_rules[] = {
    LV_RULES_LM,
    SM_RULES_CLIP_TOWER(LV_VT),
    LV_RULES_PROJ,
    LV_RULE_NEWLINE,
};

/* post_layernorm (require_post_norm=False) and the blocks past the feature layer. */
static bool llava_drop(const ckpt_config *c, const char *cn)
{
	int64_t vd = c->v_num_layers > 0 ? c->v_num_layers : SM_CLIP_LAYERS;
	return shardmap_vision_drop(c, LV_VT, vd, true, cn);
}

/* text_config a Llama or Mistral language model (vLLM's llama.py table). */
static int llava_check_text(const ckpt_config *c, wt_errbuf *err)
{
	if (c->lm_model_type[0] == '\0')
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs a text_config object (model_type llama or "
		                 "mistral, its sizes)",
		                 c->architecture);
	if (strcmp(c->lm_model_type, "llama") != 0 && strcmp(c->lm_model_type, "mistral") != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: text_config.model_type '%s': only a llama or mistral "
		    "language model is supported for %s (vLLM's llama.py table)",
		    c->lm_model_type, c->architecture);
	return WT_OK;
}

/* vision_config a CLIP tower whose heads split its width; a Llama or Mistral language
 * model; one feature layer within the tower (vLLM's projector, who, is VE wide). */
static int llava_check_as(const ckpt_config *c, const char *who, wt_errbuf *err)
{
	int rv;
	if ((rv = shardmap_vision_need(c, &shardmap_vis_clip, err)) != WT_OK)
		return rv;
	if (strcmp(c->v_model_type, "clip_vision_model") != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: vision_config.model_type '%s': only a CLIP tower "
		    "(clip_vision_model, llava-1.5 / llava-v1.6)%s is supported for %s",
		    c->v_model_type,
		    strcmp(c->architecture, "LlavaForConditionalGeneration") == 0 ||
		            strcmp(c->architecture, "MantisForConditionalGeneration") == 0
		        ? ", a SigLIP one (siglip_vision_model) or a Pixtral one (pixtral: "
		          "pixtral-12b)"
		        : " or a SigLIP one (siglip_vision_model)",
		    c->architecture);
	if ((rv = llava_check_text(c, err)) != WT_OK)
		return rv;
	sm_vis_geom g;
	if ((rv = shardmap_vision_geom(c, &shardmap_vis_clip, &g, err)) != WT_OK)
		return rv;
	return shardmap_vision_feature(c, &g, who, "linear_1 vision_config.hidden_size", "-2", err);
}

static bool is_tarsier(const ckpt_config *c)
{
	return c->architecture != NULL &&
	       strcmp(c->architecture, "TarsierForConditionalGeneration") == 0;
}

/* Tarsier's split tokens are rows of the language model's embedding table (vLLM looks them up
 * in embed_tokens for every image). */
static int tarsier_check_ids(const ckpt_config *c, wt_errbuf *err)
{
	static const char *const keys[] = {"image_newline_idx", "image_new_idx"};
	int64_t ids[] = {c->ts_newline_idx, c->ts_new_idx};
	for (int i = 0; i < 2; i++)
		if (ids[i] < 0 || ids[i] >= c->vocab_size)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: %s %lld is not a token of text_config's "
			                 "vocabulary (vocab_size %lld)",
			                 keys[i], (long long)ids[i], (long long)c->vocab_size);
	return WT_OK;
}

static int llava_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = llava_check_as(c, "vLLM's LlavaMultiModalProjector", err);
	return rv == WT_OK && is_tarsier(c) ? tarsier_check_ids(c, err) : rv;
}

/* Tarsier's load_weights is a plain AutoWeightsLoader, with none of LLaVA's renames: the
 * layout transformers >= 4.52 saves (shardmap_llava_aliases) matches none of its parameters. */
static int tarsier_layout(const ckpt *c, const ckpt_config *cfg, wt_errbuf *err)
{
	if (!is_tarsier(cfg))
		return WT_OK;
	for (size_t i = 0; i < ckpt_n_tensors(c); i++) {
		const char *n = ckpt_tensor_at(c, i)->name;
		for (const char *const *a = shardmap_llava_aliases; *a; a += 2)
			if (strncmp(n, a[0], strlen(a[0])) == 0)
				return wt_seterr(
				    err, WT_EUNSUPPORTED,
				    "tensor '%s': vLLM's TarsierForConditionalGeneration "
				    "loads the released layout only (language_model.model., "
				    "vision_tower., multi_modal_projector.), not the one "
				    "transformers >= 4.52 saves; save it in the released names",
				    n);
	}
	return WT_OK;
}

/* LLaVA with a Pixtral tower: LLaVA's language model and projector, Mistral 3's tower. */
static const sm_rule llava_pixtral_rules[] = {
    LV_RULES_LM,
    SM_RULES_PIXTRAL_TOWER("vision_tower."),
    LV_RULES_PROJ,
};

/* vision_config a Pixtral tower whose heads split its width (PixtralHFAttention's
 * assert) and whose patch fits its image; LLaVA's language model; one feature layer within
 * the tower. */
static int llava_pixtral_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv;
	if (is_tarsier(c))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: vision_config.model_type 'pixtral': vLLM's "
		    "init_vision_tower_for_tarsier builds a CLIP or SigLIP tower only");
	if ((rv = shardmap_vision_need(c, &shardmap_vis_pixtral, err)) != WT_OK)
		return rv;
	if ((rv = llava_check_text(c, err)) != WT_OK)
		return rv;
	sm_vis_geom g;
	if ((rv = shardmap_vision_geom(c, &shardmap_vis_pixtral, &g, err)) != WT_OK)
		return rv;
	return shardmap_vision_feature(c, &g, "vLLM's LlavaMultiModalProjector",
	                               "linear_1 vision_config.hidden_size", "-1", err);
}

/* LLaVA-OneVision: Qwen2's language model, the SigLIP tower, the projector whole. */
static const sm_rule llava_onevision_rules[] = {
    LV_RULES_LM,
    SM_RULES_SIGLIP_TOWER(LV_VT),
    SM_RULES_SIGLIP_POOL_HEAD(LV_VT "head.", SM_C_VHEAD),
    /* nn.Linear(VE, hid), nn.Linear(hid, hid), bias=multimodal_projector_bias: replicated,
     * never quantized */
    LV_RULES_PLAIN_PROJ,
    LV_RULE_NEWLINE,
};

/* The blocks past the feature layer and post_layernorm (require_post_norm=False). */
bool shardmap_onevision_drop(const ckpt_config *c, const char *cn)
{
	int64_t vd = c->v_num_layers > 0 ? c->v_num_layers : SM_SIGLIP_LAYERS;
	return shardmap_vision_drop(c, LV_VT, vd, true, cn);
}

/* LLaVA (and Mantis, Tarsier) with a SigLIP tower (vision_config.model_type
 * siglip_vision_model: TIGER-Lab/Mantis-8B-siglip-llama3 and other LLaVA builds on SigLIP), as
 * vLLM's init_vision_tower_for_llava / _for_tarsier build it: SiglipVisionModel up to
 * vision_feature_layer without post_layernorm, cut as LLaVA-OneVision's tower (the same rows,
 * drops and SiglipMLP float rule); LLaVA's language model and its parallel, quantized
 * projector. */
static const sm_rule llava_siglip_rules[] = {
    LV_RULES_LM,
    SM_RULES_SIGLIP_TOWER(LV_VT),
    SM_RULES_SIGLIP_POOL_HEAD(LV_VT "head.", SM_C_VHEAD),
    LV_RULES_PROJ,
};

/* LLaVA-NeXT with a SigLIP tower: vLLM's llava_next.py builds its tower with
 * init_vision_tower_for_llava too; LLaVA-NeXT's table (image_newline) on LLaVA's SigLIP tower. */
static const sm_rule llava_next_siglip_rules[] = {
    LV_RULES_LM,
    SM_RULES_SIGLIP_TOWER(LV_VT),
    SM_RULES_SIGLIP_POOL_HEAD(LV_VT "head.", SM_C_VHEAD),
    LV_RULES_PROJ,
    LV_RULE_NEWLINE,
};

/* vision_config a SigLIP tower whose heads split its width; LLaVA's language model; one
 * feature layer within the tower (who: the projector that reads it). */
static int siglip_check_as(const ckpt_config *c, const char *who, wt_errbuf *err)
{
	int rv;
	if ((rv = shardmap_vision_need(c, &shardmap_vis_siglip, err)) != WT_OK)
		return rv;
	if ((rv = llava_check_text(c, err)) != WT_OK)
		return rv;
	sm_vis_geom g;
	if ((rv = shardmap_vision_geom(c, &shardmap_vis_siglip, &g, err)) != WT_OK)
		return rv;
	return shardmap_vision_feature(c, &g, who, "linear_1 vision_config.hidden_size", "-2", err);
}

/* LLaVA's (and LLaVA-NeXT's) SigLIP checks; Tarsier's split tokens. */
static int llava_siglip_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = siglip_check_as(c, "vLLM's LlavaMultiModalProjector", err);
	return rv == WT_OK && is_tarsier(c) ? tarsier_check_ids(c, err) : rv;
}

/* vision_config a SigLIP tower whose heads split its width; a Qwen2 language model; one
 * feature layer within the tower (the projector's linear_1 is VE wide). */
static int onevision_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv;
	sm_vis_geom g;
	if ((rv = shardmap_siglip_text_check(c, "the llava-onevision checkpoints'", "qwen2",
	                                     "vLLM's qwen2.py table", &g, err)) != WT_OK)
		return rv;
	return shardmap_vision_feature(c, &g, "vLLM's LlavaOnevisionMultiModalProjector",
	                               "linear_1 vision_config.hidden_size", "-1", err);
}

/* LLaVA-NeXT-Video: LLaVA's language model and CLIP tower; the projector plain nn.Linear
 * (vLLM's llava_next_video.py LlavaNextMultiModalProjector): whole on every rank, never
 * quantized. image_newline is not built (ignore_unexpected_prefixes): skipped. */
static const sm_rule llava_next_video_rules[] = {
    LV_RULES_LM,
    SM_RULES_CLIP_TOWER(LV_VT),
    LV_RULES_PLAIN_PROJ,
};

/* LLaVA's drops and image_newline */
static bool next_video_drop(const ckpt_config *c, const char *cn)
{
	return strcmp(cn, "image_newline") == 0 || llava_drop(c, cn);
}

/* LLaVA-NeXT-Video with a SigLIP tower (llava_next_video.py builds it with
 * init_vision_tower_for_llava too): the same table on LLaVA's SigLIP tower. */
static const sm_rule llava_next_video_siglip_rules[] = {
    LV_RULES_LM,
    SM_RULES_SIGLIP_TOWER(LV_VT),
    SM_RULES_SIGLIP_POOL_HEAD(LV_VT "head.", SM_C_VHEAD),
    LV_RULES_PLAIN_PROJ,
};

static bool next_video_siglip_drop(const ckpt_config *c, const char *cn)
{
	return strcmp(cn, "image_newline") == 0 || shardmap_onevision_drop(c, cn);
}

/* the resampler a pooling vLLM builds (average / max: no weights) */
static int next_video_pool(const ckpt_config *c, wt_errbuf *err)
{
	if (strcmp(c->v_pool_mode, "average") != 0 && strcmp(c->v_pool_mode, "max") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: spatial_pool_mode '%s': vLLM's LlavaNextVideoPooler "
		                 "builds average or max pooling only (no weights; a conv "
		                 "resampler's vision_resampler.pool.* it cannot load)",
		                 c->v_pool_mode);
	return WT_OK;
}

/* LLaVA's checks and the pooling */
static int next_video_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = llava_check_as(c, "vLLM's LlavaNextMultiModalProjector", err);
	return rv == WT_OK ? next_video_pool(c, err) : rv;
}

static int next_video_siglip_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = siglip_check_as(c, "vLLM's LlavaNextMultiModalProjector", err);
	return rv == WT_OK ? next_video_pool(c, err) : rv;
}

/* MantisForConditionalGeneration is vLLM's LlavaForConditionalGeneration with Mantis' processor;
 * Tarsier's (tarsier.py) builds LLaVA's tower, projector and language model under the same
 * names: the released layout only (tarsier_layout), its split-token ids checked. */
static const char *const llava_archs[] = {"LlavaForConditionalGeneration",
                                          "MantisForConditionalGeneration",
                                          "TarsierForConditionalGeneration", NULL};
static const char *const llava_next_archs[] = {"LlavaNextForConditionalGeneration", NULL};
static const char *const llava_onevision_archs[] = {"LlavaOnevisionForConditionalGeneration", NULL};
static const char *const llava_next_video_archs[] = {"LlavaNextVideoForConditionalGeneration",
                                                     NULL};

/* transformers >= 4.52 checkpoint prefix -> the released one, LLaVA-NeXT's (Gemma 3's and
 * model.image_newline: LlavaNextForConditionalGeneration's _checkpoint_conversion_mapping) */
const char *const shardmap_llava_next_aliases[] = {"model.language_model.",
                                                   "language_model.model.",
                                                   "model.vision_tower.",
                                                   "vision_tower.",
                                                   "model.multi_modal_projector.",
                                                   "multi_modal_projector.",
                                                   "model.image_newline",
                                                   "image_newline",
                                                   "lm_head.",
                                                   "language_model.lm_head.",
                                                   NULL};

static const sm_family llava_siglip = {
    .name = "llava",
    .archs = llava_archs,
    .rules = llava_siglip_rules,
    .n_rules = SM_NRULES(llava_siglip_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = llava_siglip_check,
    .aliases = shardmap_llava_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .drop_canon = shardmap_onevision_drop,
    .keep_float = shardmap_siglip_tower_float,
    .check_extra = tarsier_layout,
};

static const sm_family llava_pixtral = {
    .name = "llava",
    .archs = llava_archs,
    .rules = llava_pixtral_rules,
    .n_rules = SM_NRULES(llava_pixtral_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = llava_pixtral_check,
    .aliases = shardmap_llava_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .pixtral = true,
    .drop_canon = shardmap_pixtral_drop,
    .check_extra = tarsier_layout,
};

const sm_family shardmap_family_llava = {
    .name = "llava",
    .archs = llava_archs,
    .rules = llava_rules,
    .n_rules = SM_NRULES(llava_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = llava_check,
    .aliases = shardmap_llava_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .clip = true,
    .drop_canon = llava_drop,
    .pixtral_tower = &llava_pixtral,
    .siglip_tower = &llava_siglip,
    .check_extra = tarsier_layout,
};

static const sm_family llava_next_siglip = {
    .name = "llava_next",
    .archs = llava_next_archs,
    .rules = llava_next_siglip_rules,
    .n_rules = SM_NRULES(llava_next_siglip_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = llava_siglip_check,
    .aliases = shardmap_llava_next_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .drop_canon = shardmap_onevision_drop,
    .keep_float = shardmap_siglip_tower_float,
};

const sm_family shardmap_family_llava_next = {
    .name = "llava_next",
    .archs = llava_next_archs,
    .rules = llava_next_rules,
    .n_rules = SM_NRULES(llava_next_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = llava_check,
    .aliases = shardmap_llava_next_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .clip = true,
    .drop_canon = llava_drop,
    .siglip_tower = &llava_next_siglip,
};

const sm_family shardmap_family_llava_onevision = {
    .name = "llava_onevision",
    .archs = llava_onevision_archs,
    .rules = llava_onevision_rules,
    .n_rules = SM_NRULES(llava_onevision_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = onevision_check,
    .aliases = shardmap_llava_next_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .drop_canon = shardmap_onevision_drop,
    .keep_float = shardmap_siglip_tower_float,
};

static const sm_family llava_next_video_siglip = {
    .name = "llava_next_video",
    .archs = llava_next_video_archs,
    .rules = llava_next_video_siglip_rules,
    .n_rules = SM_NRULES(llava_next_video_siglip_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = next_video_siglip_check,
    .aliases = shardmap_llava_next_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .drop_canon = next_video_siglip_drop,
    .keep_float = shardmap_siglip_tower_float,
};

const sm_family shardmap_family_llava_next_video = {
    .name = "llava_next_video",
    .archs = llava_next_video_archs,
    .rules = llava_next_video_rules,
    .n_rules = SM_NRULES(llava_next_video_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = next_video_check,
    .aliases = shardmap_llava_next_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .clip = true,
    .drop_canon = next_video_drop,
    .siglip_tower = &llava_next_video_siglip,
};
