/*
 * family_ovis2_5.c — Ovis2.5 (Ovis2_5, model_type ovis2_5: AIDC-AI/Ovis2.5-2B, -9B, remote code;
 * docs/format.md section 2.7), one more architecture of the Ovis family (family_ovis.c's
 * arch_variant), cut as vLLM's ovis2_5.py / siglip2navit.py load it: a bare AutoWeightsLoader
 * (no hf_to_vllm_mapper: the checkpoint's names llm.*, visual_tokenizer.*, vte.*), the tower's
 * own Siglip2NavitModel.load_weights under visual_tokenizer.vit.
 *
 * - The language model (init_vllm_registered_model of llm_config, Qwen3ForCausalLM in the
 *   releases) under llm.: the qwen3 family's rows (Ovis's Llama rows plus q_norm / k_norm),
 *   the same bytes as the qwen3 family's ranks of the same weights; tied by llm_config.
 * - The visual tokenizer's SigLIP2-NaViT tower visual_tokenizer.vit.vision_model.*
 *   (Siglip2NavitModel built with the quantization config, every block and post_layernorm
 *   built): embeddings.patch_embedding the Conv2d [VE, VCH, VP, VP] with its bias (vit_config
 *   num_patches -1, the releases'), embeddings.position_embedding [(image / patch)^2, VE]
 *   (nn.Embedding, under preserve_original_pe), whole and never quantized; per block SigLIP's
 *   rows (SM_RULES_VIT_ENCODER: q/k/v with their biases fused by heads into
 *   self_attn.qkv_proj, QKVParallelLinear with KV = H, the stacked_params_mapping of its
 *   load_weights; out_proj by columns, RowParallelLinear, its bias whole; mlp.fc1 by rows,
 *   ColumnParallelLinear; fc2 by columns, its bias whole; the four Linears quantized, the
 *   Siglip2MLP has no 64-alignment exception; layer_norm1 / 2 whole), post_layernorm whole.
 *   vLLM divides the heads by tp_size (divide() asserts) and fc1 / fc2 by it: a tp_size not
 *   dividing them is refused. A checkpoint holding the fused self_attn.qkv_proj is refused
 *   (that load_weights finds "v_proj" inside the name and renames it to qkqkv_proj: a
 *   KeyError), so is a block past num_hidden_layers (no parameter for it).
 * - The head: head.0 (ReplicatedLinear without the quantization config, no bias)
 *   [visual_vocab_size - 4, VE x hidden_stride^2] and head.1 (LayerNorm, weight and bias)
 *   whole on every rank, never quantized; vte (VisualEmbedding, a plain nn.Embedding)
 *   [visual_vocab_size, hidden_size] whole, never quantized.
 *
 * Followed: vllm-project/vllm ovis2_5.py 907bdcb7 and siglip2navit.py 1b3986f7 (the stored
 * versions with the tower's QKVParallelLinear / RowParallelLinear / ColumnParallelLinear; the
 * first siglip2navit.py 04ad8e0e built plain nn.Linear q/k/v and no load_weights).
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/families.h"
#include "shardmap/family_ovis.h"

#undef SM_LAYER
#define SM_LAYER "llm.model.layers.{i}."

#define O25_VT "visual_tokenizer.vit.vision_model."
#define O25_PE O25_VT "embeddings.position_embedding.weight"

/* clang-format off */
static const sm_rule ovis2_5_rules[] = {
    OV_LM_RULES,
    SM_RULES_QK_NORM,
    {O25_VT "embeddings.patch_embedding.weight", O25_VT "embeddings.patch_embedding.weight",
     SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 4, {SM_D_VE, SM_D_VCH, SM_D_VP, SM_D_VP}},
    OV_REPL(O25_VT "embeddings.patch_embedding.bias", 1, SM_D_VE, SM_D_ANY),
    SM_RULE(O25_PE, O25_PE, SM_K_REPL, 0, SM_U_NONE, SM_C_O25PE, 0, 2, SM_D_VNP, SM_D_VE),
    SM_RULES_VIT_ENCODER(O25_VT),
    OV_HEAD_RULES_OF(SM_D_OV4),
};
/* clang-format on */

/* The loader's Ovis2.5 fields (model_type ovis2_5); the tower's heads, its patch path and
 * position grid; the vte's width (the top level's hidden_size) against the language model's. */
static int ovis2_5_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision || !c->ov25)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type ovis2_5 with its vit_config and "
		                 "llm_config (Ovis2_5Config)",
		                 c->architecture);
	if (c->v_hidden_size % c->v_num_attn_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vit_config.num_attention_heads %" PRId64
		                 " does not divide its hidden_size %" PRId64
		                 " (vLLM's Siglip2Attention raises); give a divisor (Ovis2.5's: 16 "
		                 "heads of 1152)",
		                 c->v_num_attn_heads, c->v_hidden_size);
	if (c->ov25_patches > 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: vit_config.num_patches %" PRId64
		    " builds Siglip2VisionEmbeddings' NaFlex patch Linear, which is not cut "
		    "here; Ovis2.5-2B / -9B give -1 (the patch Conv2d): give -1 or leave it out",
		    c->ov25_patches);
	if (c->ov25_pe && c->v_image_size < c->v_patch_size)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vit_config.image_size %" PRId64
		                 " is below its patch_size %" PRId64
		                 ": the position table would have (image_size // patch_size)^2 = 0 "
		                 "rows; give the tower's (Ovis2.5's: 512 / 16)",
		                 c->v_image_size, c->v_patch_size);
	if (c->ov_hidden < 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: the top level's hidden_size is missing: vLLM's Ovis2_5 "
		    "builds vte as VisualEmbedding(visual_vocab_size, hidden_size); give "
		    "llm_config.hidden_size (%" PRId64 ") there",
		    c->hidden_size);
	if (c->ov_hidden != c->hidden_size)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: the top level's hidden_size %" PRId64
		    " is not llm_config.hidden_size %" PRId64
		    ": vte (that wide) embeds the language model's inputs; give %" PRId64,
		    c->ov_hidden, c->hidden_size, c->hidden_size);
	return WT_OK;
}

/* A fused self_attn.qkv_proj in the checkpoint (checked before any name is mapped): vLLM's
 * Siglip2NavitModel.load_weights maps q_proj / k_proj / v_proj into qkv_proj and finds "v_proj"
 * inside that name too. */
static int ovis2_5_names(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	(void)c;
	for (size_t k = 0; k < ckpt_n_tensors(ck); k++) {
		const char *n = ckpt_tensor_at(ck, k)->name;
		if (strncmp(n, O25_VT, strlen(O25_VT)) == 0 && strstr(n, ".qkv_proj.") != NULL)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "tensor '%s': a fused qkv_proj, which vLLM's "
			    "Siglip2NavitModel.load_weights cannot load (it renames the "
			    "'v_proj' inside it to 'qkqkv_proj' and has no such "
			    "parameter); store the tower's q_proj, k_proj and v_proj "
			    "separately, as the releases do",
			    n);
	}
	return WT_OK;
}

static const char *const ovis2_5_archs[] = {"Ovis2_5", NULL};

const sm_family shardmap_family_ovis2_5 = {
    .name = "ovis",
    .archs = ovis2_5_archs,
    .rules = ovis2_5_rules,
    .n_rules = SM_NRULES(ovis2_5_rules),
    .layer_prefix = "llm.model.layers.",
    .check = ovis2_5_check,
    .check_names = ovis2_5_names,
    .vision_gated = true,
    .vision_siglip = true,
    .siglip2 = true,
    .depth_key = "vit_config.num_hidden_layers",
    .vis_heads_key = "vit_config.num_attention_heads",
    .vis_inter_key = "vit_config.intermediate_size",
};
