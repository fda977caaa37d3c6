/*
 * family_idefics3.c — Idefics3 (Idefics3ForConditionalGeneration, model_type idefics3:
 * HuggingFaceM4/Idefics3-8B-Llama3): a Llama language model under `model.text_model.*`
 * with `lm_head.weight` at the top, the SigLIP-style vision tower `model.vision_model.*`
 * (Idefics3VisionTransformer) and the connector `model.connector.modality_projection.proj`
 * (docs/format.md section 2.7), cut as vLLM's idefics3.py / idefics2_vision_model.py load
 * them.
 *
 * The checkpoint's names are vLLM's module names (Idefics3ForConditionalGeneration.model is
 * Idefics3Model with vision_model, connector and text_model; lm_head beside it), so the
 * rules keep them and change only the fused leaves: the LM's q/k/v into qkv_proj and
 * gate/up into gate_up_proj as Llama's, the tower's q/k/v into qkv_proj (vLLM's
 * Idefics2VisionTransformer builds the whole tower, post_layernorm included; Gemma 3's
 * SigLIP rows). The connector's proj [text hidden, vision hidden x scale_factor^2] (a Linear
 * after the pixel shuffle) is vLLM's ReplicatedLinear: whole on every rank, quantized.
 * lm_head is tied exactly when text_config.tie_word_embeddings is (transformers 4.57.1 ties
 * by get_text_config(); vLLM by config.text_config.tie_word_embeddings): the loader reads
 * the LM's fields from text_config alone (config_lm_view).
 *
 * SmolVLM (SmolVLMForConditionalGeneration, model_type smolvlm: HuggingFaceTB/SmolVLM-256M /
 * 500M-Instruct, SmolVLM2-2.2B-Instruct) is this architecture under SmolVLM's class names:
 * the same checkpoint names, the same keys and defaults (SmolVLMVisionConfig's equal
 * Idefics3VisionConfig's), and vLLM's smolvlm.py reuses idefics3.py's modules; the same
 * table and checks.
 */
#include <string.h>

#include "shardmap/family_rules.h"

/* The language model's layers (the shared macros expand SM_LAYER here). */
#undef SM_LAYER
#define SM_LAYER "model.text_model.layers.{i}."

#define I3_TM "model.text_model."

static const sm_rule idefics3_rules[] = {
    SM_RULE(I3_TM "embed_tokens.weight", I3_TM "embed_tokens.weight", SM_K_VOCAB, 0, SM_U_NONE,
            SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    SM_RULE(I3_TM "norm.weight", I3_TM "norm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1,
            SM_D_HID, SM_D_ANY),
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_SIGLIP_TOWER("model.vision_model."),
    /* ReplicatedLinear(VE * scale_factor^2, hid, bias=False) */
    SM_RULE("model.connector.modality_projection.proj.weight",
            "model.connector.modality_projection.proj.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_VM),
};

/* vision_config a tower whose heads split its width and whose patch grid the pixel shuffle
 * folds by scale_factor; a Llama language model in text_config. */
static int idefics3_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv;
	if ((rv = shardmap_vision_need(c, &shardmap_vis_i3v, err)) != WT_OK)
		return rv;
	if ((rv = shardmap_text_config_is(c, "llama", NULL,
	                                  "vLLM's idefics3.py / smolvlm.py build LlamaModel",
	                                  err)) != WT_OK)
		return rv;
	sm_vis_geom g;
	if ((rv = shardmap_vision_geom(c, &shardmap_vis_i3v, &g, err)) != WT_OK)
		return rv;
	return shardmap_vision_shuffle(c, &g, "scale_factor", "the connector's", ", e.g. 1", err);
}

static const char *const idefics3_archs[] = {"Idefics3ForConditionalGeneration", NULL};
static const char *const smolvlm_archs[] = {"SmolVLMForConditionalGeneration", NULL};

const sm_family shardmap_family_idefics3 = {
    .name = "idefics3",
    .archs = idefics3_archs,
    .rules = idefics3_rules,
    .n_rules = SM_NRULES(idefics3_rules),
    .layer_prefix = "model.text_model.layers.",
    .check = idefics3_check,
    .vision_gated = true,
    .vision_siglip = true,
    .idefics3 = true,
};

const sm_family shardmap_family_smolvlm = {
    .name = "smolvlm",
    .archs = smolvlm_archs,
    .rules = idefics3_rules,
    .n_rules = SM_NRULES(idefics3_rules),
    .layer_prefix = "model.text_model.layers.",
    .check = idefics3_check,
    .vision_gated = true,
    .vision_siglip = true,
    .idefics3 = true,
};
