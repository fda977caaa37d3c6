/*
 * family_gemma3.c — Gemma 3 multimodal (Gemma3ForConditionalGeneration,
 * model_type gemma3; 4B / 12B / 27B): Gemma3ForCausalLM's language model under
 * `language_model.`, the SigLIP vision tower `vision_tower.vision_model.*` and
 * the projector `multi_modal_projector.*` (docs/format.md section 2.7).
 *
 * Rules are written in the names the released checkpoints have (transformers
 * 4.50/4.51: `language_model.model.*`, `language_model.lm_head.weight` when
 * untied, `vision_tower.*`, `multi_modal_projector.*`), which are also vLLM's
 * module names; the layout transformers >= 4.52 saves (`model.language_model.*`,
 * `model.vision_tower.*`, `model.multi_modal_projector.*`, `lm_head.weight`)
 * maps onto them through the aliases (its _checkpoint_conversion_mapping read
 * backwards), so both layouts give the same runtime names and bytes.
 *
 * SigLIP blocks: LayerNorms with biases, separate q/k/v projections with biases
 * fused by heads into `self_attn.qkv_proj` (vLLM's QKVParallelLinear, KV = H),
 * out_proj by columns, fc1 by rows, fc2 by columns (their biases as Qwen2-VL's); fc1 / fc2
 * quantized only when the tower's hidden_size and intermediate_size are both multiples of 64
 * (vLLM's siglip.py SiglipMLP; keep_float, shardmap_siglip_tower_float, as PaliGemma's,
 * LLaVA-OneVision's, Aya Vision's and Cohere2Vision's towers).
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"
#include "shardmap/tower_defaults.h"

/* The language model's layers (the shared macros expand SM_LAYER here). */
#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define G3_VT "vision_tower.vision_model."
/* Replicated tensor of the projector. */
#define G3_V_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)

static const sm_rule gemma3_rules[] = {
    SM_RULES_GEMMA3_LM("language_model."),
    SM_RULES_SIGLIP_TOWER(G3_VT),
    /* x @ W with W [VE, hid] (not a Linear): replicated, never quantized */
    G3_V_REPL("multi_modal_projector.mm_input_projection_weight", 2, SM_D_VE, SM_D_HID),
    G3_V_REPL("multi_modal_projector.mm_soft_emb_norm.weight", 1, SM_D_VE, SM_D_ANY),
};

/* SigLIP's attention splits the width into heads (SiglipAttention refuses a
 * remainder) and its position table needs at least one patch. */
static int gemma3_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Gemma3ForConditionalGeneration needs vision_config "
		                 "(SigLIP: hidden_size, intermediate_size, num_attention_heads, "
		                 "num_hidden_layers, image_size, patch_size)");
	int64_t ve = c->v_hidden_size > 0 ? c->v_hidden_size : SM_SIGLIP_HIDDEN;
	int64_t vh = c->v_num_attn_heads > 0 ? c->v_num_attn_heads : SM_SIGLIP_HEADS;
	int64_t img = c->v_image_size > 0 ? c->v_image_size : SM_SIGLIP_IMAGE;
	int64_t patch = c->v_patch_given ? c->v_patch_size : SM_SIGLIP_PATCH;
	if (ve % vh)
		return shardmap_vision_heads_err("num_attention_heads", vh, ve, err);
	if (img < patch)
		return shardmap_vision_patch_err(img, patch, err);
	return WT_OK;
}

static const char *const gemma3_archs[] = {"Gemma3ForConditionalGeneration", NULL};

/* transformers >= 4.52 checkpoint prefix -> the released (canonical) prefix, of the
 * LLaVA-style layouts (Gemma 3, Mistral 3) */
const char *const shardmap_llava_aliases[] = {"model.language_model.",
                                              "language_model.model.",
                                              "model.vision_tower.",
                                              "vision_tower.",
                                              "model.multi_modal_projector.",
                                              "multi_modal_projector.",
                                              "lm_head.",
                                              "language_model.lm_head.",
                                              NULL};

const sm_family shardmap_family_gemma3 = {
    .name = "gemma3",
    .archs = gemma3_archs,
    .rules = gemma3_rules,
    .n_rules = SM_NRULES(gemma3_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = gemma3_check,
    .aliases = shardmap_llava_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .tie_default = true,
    .keep_float = shardmap_siglip_tower_float,
};
