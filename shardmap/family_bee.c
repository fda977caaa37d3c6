/*
 * family_bee.c — Bee (BeeForConditionalGeneration, model_type bee, remote code:
 * Open-Bee/Bee-8B-RL, Bee-8B-SFT), cut as vLLM's bee.py / llava_onevision.py / siglip.py /
 * qwen3.py load it. vLLM's BeeForConditionalGeneration is LLaVA-OneVision's model
 * (family_llava.c) with the projector replaced, so the same module tree and names:
 *
 * - the language model Qwen3ForCausalLM of text_config under `language_model.`
 *   (`language_model.model.*`, `language_model.lm_head.weight`): the qwen3 family's rows (q/k/v
 *   fused by heads, their biases where a checkpoint has them, o_proj by columns, gate / up
 *   merged, down_proj by columns, the per-head q_norm / k_norm whole, the vocabulary tables by
 *   rows), tied by text_config.tie_word_embeddings alone;
 * - the SigLIP tower `vision_tower.vision_model.*` as LLaVA-OneVision's (Gemma 3's rows,
 *   SM_RULES_SIGLIP_TOWER; the pooling head unless vision_use_head is false), built by
 *   init_vision_tower_for_llava up to vision_feature_layer with require_post_norm=False: the
 *   deeper blocks and post_layernorm dropped and listed as skipped; SiglipMLP's fc1 / fc2 kept
 *   unquantized where its sizes are not multiples of 64 (shardmap_siglip_tower_float);
 * - BeeMultiModalProjector, plain torch modules: pre_norm (nn.LayerNorm [VE], weight and bias),
 *   linear_1 (nn.Linear [4 hid, VE], bias) and linear_2 (nn.Linear [hid, 4 hid], bias), the
 *   biases always (bias=True whatever multimodal_projector_bias says): whole on every rank,
 *   never quantized;
 * - image_newline [hid], a plain nn.Parameter: whole, never quantized, required.
 *
 * load_weights is LLaVA-OneVision's AutoWeightsLoader under bee.py's hf_to_vllm_mapper, the same
 * five prefixes as LLaVA-NeXT's: both layouts (the released names above and transformers >= 4.55's
 * model.language_model. / model.vision_tower. / model.multi_modal_projector. /
 * model.image_newline / lm_head.) through shardmap_llava_next_aliases.
 */
#include <string.h>

#include "shardmap/family_rules.h"
#include "shardmap/tower_defaults.h"

/* The language model's layers (the shared macros expand SM_LAYER here). */
#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define BEE_VT "vision_tower.vision_model."
#define BEE_P  "multi_modal_projector."

static const sm_rule bee_rules[] = {
    /* Qwen3ForCausalLM of text_config (the qwen3 family's table under language_model.) */
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_QK_NORM,
    /* LLaVA-OneVision's SigLIP tower */
    SM_RULES_SIGLIP_TOWER(BEE_VT),
    SM_RULES_SIGLIP_POOL_HEAD(BEE_VT "head.", SM_C_VHEAD),
    /* BeeMultiModalProjector: nn.LayerNorm(VE), nn.Linear(VE, 4 hid), nn.Linear(4 hid, hid) */
    SM_RULES_PRENORM_PROJ(BEE_P, SM_D_HID4),
};

/* model_type bee (the released configs': the loader reads BeeConfig's keys under it); a SigLIP
 * tower whose heads split its width; a Qwen3 language model; one feature layer within the
 * tower (the projector's pre_norm and linear_1 are VE wide). */
static int bee_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv;
	if (c->model_type == NULL || strcmp(c->model_type, "bee") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: model_type '%s': %s is read under model_type bee "
		                 "only (the remote BeeConfig of Open-Bee/Bee-8B-RL / -SFT); set "
		                 "model_type to bee",
		                 c->model_type != NULL ? c->model_type : "", c->architecture);
	sm_vis_geom g;
	if ((rv = shardmap_siglip_text_check(c, "the Bee-8B checkpoints'", "qwen3",
	                                     "vLLM's qwen3.py table, Bee-8B's", &g, err)) != WT_OK)
		return rv;
	return shardmap_vision_feature(c, &g, "vLLM's BeeMultiModalProjector",
	                               "pre_norm / linear_1 vision_config.hidden_size", "-1", err);
}

static const char *const bee_archs[] = {"BeeForConditionalGeneration", NULL};

const sm_family shardmap_family_bee = {
    .name = "bee",
    .archs = bee_archs,
    .rules = bee_rules,
    .n_rules = SM_NRULES(bee_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = bee_check,
    .aliases = shardmap_llava_next_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .drop_canon = shardmap_onevision_drop,
    .keep_float = shardmap_siglip_tower_float,
};
