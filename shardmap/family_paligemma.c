/*
 * family_paligemma.c — PaliGemma (PaliGemmaForConditionalGeneration, model_type paligemma:
 * google/paligemma-3b-pt-224 with a Gemma text model, google/paligemma2-3b-pt-224 with a
 * Gemma 2 one): the language model under `language_model.`, the SigLIP vision tower
 * `vision_tower.vision_model.*` and the projector `multi_modal_projector.linear`
 * (docs/format.md section 2.7), cut as vLLM's paligemma.py / siglip.py / gemma.py /
 * gemma2.py load them.
 *
 * Rules are written in the released names (`language_model.model.*`, `vision_tower.*`,
 * `multi_modal_projector.*`), which are vLLM's module names; the layout transformers
 * >= 4.52 saves (`model.language_model.*`, `model.vision_tower.*`,
 * `model.multi_modal_projector.*`, `lm_head.weight`) maps onto them through Gemma 3's
 * aliases (vLLM's hf_to_vllm_mapper in paligemma.py), so both give the same runtime names
 * and bytes. The language model is Gemma's table (Llama's names) with Gemma 2's
 * pre / post_feedforward_layernorm exactly when text_config.model_type is gemma2; the tower
 * Gemma 3's SigLIP rows; the projector `linear` [projection_dim = text hidden, VE] with its
 * bias is a plain nn.Linear in vLLM's PaliGemmaMultiModalProjector: whole on every rank and
 * never quantized. lm_head is tied as text_config.tie_word_embeddings says (GemmaConfig's /
 * Gemma2Config's default true; transformers 4.57.1 ties by get_text_config(), vLLM's Gemma
 * models always): the loader reads the LM's fields from text_config (config_lm_view).
 */
#include <string.h>

#include "shardmap/family_rules.h"

/* The language model's layers (the shared macros expand SM_LAYER here). */
#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

/* A Gemma 2 norm of every layer, [hid] replicated, when the text model is Gemma 2. */
#define PG_G2_NORM(x)                                                                              \
	SM_RULE(SM_LAYER x ".weight", SM_LAYER x ".weight", SM_K_REPL, 0, SM_U_NONE, SM_C_GEMMA2,  \
	        0, 1, SM_D_HID, SM_D_ANY)
#define PG_P "multi_modal_projector.linear."

static const sm_rule paligemma_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    PG_G2_NORM("pre_feedforward_layernorm"),
    PG_G2_NORM("post_feedforward_layernorm"),
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_SIGLIP_TOWER("vision_tower.vision_model."),
    /* nn.Linear(VE, projection_dim, bias=True): replicated, never quantized */
    SM_RULE(PG_P "weight", PG_P "weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_HID,
            SM_D_VE),
    SM_RULE(PG_P "bias", PG_P "bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
};

/* vision_config a SigLIP tower whose heads split its width; text_config a Gemma or Gemma 2
 * text model (the projector's projection_dim must be its hidden_size: the linear's shape
 * is checked against it). */
static int paligemma_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv;
	if ((rv = shardmap_vision_need(c, &shardmap_vis_siglip, err)) != WT_OK)
		return rv;
	if (c->lm_model_type[0] == '\0')
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs a text_config object (model_type gemma or "
		                 "gemma2, its sizes)",
		                 c->architecture);
	if (strcmp(c->lm_model_type, "gemma") != 0 && strcmp(c->lm_model_type, "gemma2") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: text_config.model_type '%s': only a gemma or gemma2 "
		                 "language model is supported for %s (vLLM's paligemma.py builds "
		                 "GemmaForCausalLM or Gemma2ForCausalLM)",
		                 c->lm_model_type, c->architecture);
	sm_vis_geom g;
	return shardmap_vision_geom(c, &shardmap_vis_siglip, &g, err);
}

static const char *const paligemma_archs[] = {"PaliGemmaForConditionalGeneration", NULL};

const sm_family shardmap_family_paligemma = {
    .name = "paligemma",
    .archs = paligemma_archs,
    .rules = paligemma_rules,
    .n_rules = SM_NRULES(paligemma_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = paligemma_check,
    .aliases = shardmap_llava_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .tie_default = true,
    .keep_float = shardmap_siglip_tower_float,
};
