/*
 * family_bagel.c — BAGEL (BagelForConditionalGeneration, model_type bagel:
 * ByteDance-Seed/BAGEL-7B-MoT; docs/format.md section 2.7), the image-understanding half vLLM
 * serves, cut as vLLM's bagel.py loads it (an AutoWeightsLoader whose hf_to_vllm_mapper keeps
 * language_model. / vit_model. / connector. / vit_pos_embed. as they are; SHARDS.md keeps the
 * checkpoint's names).
 *
 * - The language model language_model.*: init_vllm_registered_model with architectures
 *   ["Qwen2ForCausalLM"] of llm_config (a Qwen2Config): the qwen2 family's rows under
 *   language_model. (embed_tokens / lm_head by padded vocabulary rows, q/k/v with their
 *   biases fused by heads into qkv_proj, gate / up merged, o_proj / down_proj by columns, the
 *   RMSNorms replicated), and, when llm_config.qk_norm is true (BAGEL-7B-MoT's), qwen2.py's
 *   per-head q_norm / k_norm [head_dim] replicated (required then, unknown otherwise). Tied by
 *   llm_config.tie_word_embeddings.
 * - The tower vit_model.vision_model.* (siglip.py's SiglipVisionModel of vit_config, given the
 *   quant_config): SigLIP's rows (SM_RULES_SIGLIP_TOWER: the patch Conv2d [VE, C, p, p] with
 *   its bias, the position table and the LayerNorms whole; q/k/v with their biases fused by
 *   heads into qkv_proj, out_proj and fc2 by columns, fc1 by rows; SiglipMLP quantized only
 *   when the tower's sizes are both multiples of 64, which BAGEL's 1152 / 4304 are not;
 *   post_layernorm whole). bagel.py builds vit_config.num_hidden_layers blocks, 26 for a
 *   config saying 27; SiglipVisionModel.load_weights skips the blocks past them (skipped
 *   here). The pooling head only when vit_config.vision_use_head is true (bagel.py sets it
 *   false when absent). A 2-D patch_embedding.weight (BAGEL's training code stores the patch
 *   Conv2d as a Linear [VE, p p C]) is reshaped and permuted by bagel.py's load_weights into
 *   the Conv2d's [VE, C, p, p]: that re-ordering is not cut here (refused).
 * - The connector (BagelVisionMLP): fc1 ColumnParallelLinear [hid, VE] by rows with its bias,
 *   fc2 RowParallelLinear [hid, hid] by columns (its bias replicated), both quantized.
 * - Skipped (bagel.py filters them before loading): every name holding moe_gen,
 *   latent_pos_embed, llm2vae, vae2llm or time_embedder (the generation branch of the
 *   Mixture-of-Transformers: each layer's *_moe_gen twins, norm_moe_gen), the VAE's decoder.* /
 *   encoder.*, and vit_pos_embed.pos_embed (PositionEmbedding's buffer, computed).
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define BG_VT "vit_model.vision_model."
#define BG_VL BG_VT "encoder.layers."
#define BG_PE BG_VT "embeddings.patch_embedding.weight"
#define BG_C  "connector."

static const sm_rule bagel_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_QK_NORM_IF(SM_C_QKNORM),
    SM_RULES_SIGLIP_TOWER(BG_VT),
    SM_RULES_SIGLIP_POOL_HEAD(BG_VT "head.", SM_C_BGHEAD),
    SM_RULE(BG_C "fc1.weight", BG_C "fc1.weight", SM_K_ROWS, 0, SM_U_HID, SM_C_ALL, SM_F_QUANT, 2,
            SM_D_HID, SM_D_VE),
    SM_RULE(BG_C "fc1.bias", BG_C "fc1.bias", SM_K_ROWS, 0, SM_U_HID, SM_C_ALL, 0, 1, SM_D_HID,
            SM_D_ANY),
    SM_RULE(BG_C "fc2.weight", BG_C "fc2.weight", SM_K_COLS, 0, SM_U_HID, SM_C_ALL, SM_F_QUANT, 2,
            SM_D_HID, SM_D_HID),
    SM_RULE(BG_C "fc2.bias", BG_C "fc2.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID,
            SM_D_ANY),
};

/* The flat view of model_type bagel; the tower's heads splitting its width and a patch grid
 * (SiglipVisionConfig's defaults for absent keys), named as vit_config. */
static int bagel_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type bagel with its llm_config and "
		                 "vit_config (vLLM's BagelConfig)",
		                 c->architecture);
	sm_vis_geom g;
	if (shardmap_vision_geom(c, &shardmap_vis_siglip, &g, NULL) == WT_OK)
		return WT_OK;
	if (g.ve % g.vh)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vit_config.num_attention_heads %" PRId64
		                 " does not divide vit_config.hidden_size %" PRId64
		                 "; give a head count that does (BAGEL-7B-MoT: 16 of 1152)",
		                 g.vh, g.ve);
	return wt_seterr(err, WT_ECORRUPT,
	                 "config.json: vit_config.image_size %" PRId64
	                 " is below vit_config.patch_size %" PRId64
	                 "; give an image of at least one patch (BAGEL-7B-MoT: 980 / 14)",
	                 g.img, g.patch);
}

/* The unfolded patch Linear bagel.py re-orders into the Conv2d: refused before its shape is. */
static int bagel_names(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	const ckpt_tensor *t = ckpt_find(ck, BG_PE);
	if (t == NULL || t->ndim != 2)
		return WT_OK;
	sm_vis_geom g;
	(void)shardmap_vision_geom(c, &shardmap_vis_siglip, &g, NULL);
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "tensor '%s': [%" PRId64 ", %" PRId64 "], the patch Conv2d stored as a "
	                 "Linear (BAGEL's convert_conv2d_to_linear); vLLM's bagel.py reshapes it "
	                 "to [out, patch, patch, channels] and permutes it into the Conv2d weight "
	                 "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "], a re-ordering "
	                 "not cut here: store it as that Conv2d weight "
	                 "(w.reshape(out, p, p, C).permute(0, 3, 1, 2))",
	                 BG_PE, t->shape[0], t->shape[1], g.ve, c->v_in_chans, g.patch, g.patch);
}

/* What bagel.py filters out before loading, and the tower blocks past vit_config's count
 * (SiglipVisionModel.load_weights skips them). */
static bool bagel_drop(const ckpt_config *c, const char *cn)
{
	static const char *const gen[] = {"moe_gen", "latent_pos_embed", "llm2vae", "vae2llm",
	                                  "time_embedder"};
	for (size_t k = 0; k < sizeof(gen) / sizeof(gen[0]); k++)
		if (strstr(cn, gen[k]) != NULL)
			return true;
	if (strncmp(cn, "decoder.", 8) == 0 || strncmp(cn, "encoder.", 8) == 0 ||
	    strncmp(cn, "vit_pos_embed.pos_embed", 23) == 0)
		return true;
	int64_t vd = c->v_num_layers > 0 ? c->v_num_layers : shardmap_vis_siglip.layers;
	return shardmap_index_after(cn, BG_VL) >= vd;
}

/* SiglipMLP's fc1 / fc2 (the blocks' and the head's) built without the quant_config when the
 * tower's sizes are not both multiples of 64 (BAGEL's 1152 / 4304). */
static bool bagel_float(const ckpt_config *c, const char *cn)
{
	return shardmap_siglip_mlp_float(c, BG_VT, cn);
}

static const char *const bagel_archs[] = {"BagelForConditionalGeneration", NULL};

const sm_family shardmap_family_bagel = {
    .name = "bagel",
    .archs = bagel_archs,
    .rules = bagel_rules,
    .n_rules = SM_NRULES(bagel_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = bagel_check,
    .check_names = bagel_names,
    .drop_canon = bagel_drop,
    .keep_float = bagel_float,
    .vision_gated = true,
    .vision_siglip = true,
    .qk_norm_key = "llm_config.qk_norm",
    .vis_heads_key = "vit_config.num_attention_heads",
};
