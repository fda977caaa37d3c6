/*
 * family_isaac.c — Isaac (IsaacForConditionalGeneration, model_type isaac:
 * PerceptronAI/Isaac-0.1, remote code; docs/format.md section 2.7), cut as vLLM's isaac.py
 * loads it: a bare AutoWeightsLoader whose hf_to_vllm_mapper only moves model.* / lm_head.*
 * under language_model. and model.vision_embedding.{0,1,3} under vision_embedding.
 * {transformer, linear_fc1, linear_fc2}; SHARDS.md keeps the checkpoint's names.
 *
 * - The language model: init_vllm_registered_model with architectures ["Qwen3ForCausalLM"]
 *   of the top-level config (IsaacConfig subclasses Qwen3Config): the qwen3 family's rules
 *   (embed_tokens / lm_head by padded vocabulary rows, q/k/v fused by heads, gate / up
 *   merged, o_proj / down_proj by columns, norms and q_norm / k_norm replicated), the same
 *   bytes as the qwen3 family's ranks of the same weights. The layout with the language model
 *   under model.text_model. (the mapper's other prefix) is refused as unknown tensors.
 * - The tower model.vision_embedding.0.* (Siglip2VisionTransformer, quant_config passed):
 *   Siglip2VariableSequenceEmbeddings' patch_embedding a ReplicatedLinear [VE, C x p^2] with
 *   its bias built without quant_config and the position table nn.Embedding [num_patches,
 *   VE], whole and never quantized; per block SigLIP's rows (q/k/v with their biases fused by
 *   heads into self_attn.qkv_proj, QKVParallelLinear with KV = H, as its load_weights'
 *   stacked_params_mapping; out_proj by columns, its bias replicated; SiglipMLP's fc1 by rows,
 *   fc2 by columns, quantized only when the tower's sizes are both multiples of 64;
 *   LayerNorms replicated); post_layernorm replicated. No pooling head (a head.* tensor has
 *   no parameter there: refused as unknown).
 * - The pixel-shuffle projector: model.vision_embedding.1 (linear_fc1, ColumnParallelLinear
 *   [4 M, M], M = VE x pixel_shuffle_scale_factor^2, no bias) by rows and .3 (linear_fc2,
 *   RowParallelLinear [hid, 4 M], no bias) by columns, both quantized; .2 is the SiLU.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define IS_VT "model.vision_embedding.0."
#define IS_F1 "model.vision_embedding.1.weight"
#define IS_F2 "model.vision_embedding.3.weight"

#define IS_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)

static const sm_rule isaac_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_QK_NORM,
    IS_REPL(IS_VT "embeddings.patch_embedding.weight", 2, SM_D_VE, SM_D_VUNF),
    IS_REPL(IS_VT "embeddings.patch_embedding.bias", 1, SM_D_VE, SM_D_ANY),
    IS_REPL(IS_VT "embeddings.position_embedding.weight", 2, SM_D_VNP, SM_D_VE),
    SM_RULES_VIT_ENCODER(IS_VT),
    /* the 4 M dims are checked by isaac_extra */
    SM_RULE(IS_F1, IS_F1, SM_K_ROWS, 0, SM_U_VM, SM_C_ALL, SM_F_QUANT, 2, SM_D_ANY, SM_D_VM),
    SM_RULE(IS_F2, IS_F2, SM_K_COLS, 0, SM_U_VM, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_ANY),
};

/* The tower's heads split its width; its position table a square grid (the embeddings
 * reshape it to int(sqrt(num_patches)) a side); num_channels x patch_size^2 is bounded by
 * the planner's dims. */
static int isaac_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision) /* the loader applies the defaults to an absent one */
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type isaac (vLLM's IsaacConfig and "
		                 "its vision_config, PixelShuffleSiglip2VisionConfig)",
		                 c->architecture);
	if (c->v_hidden_size % c->v_num_attn_heads)
		return shardmap_vision_heads_err("num_attention_heads", c->v_num_attn_heads,
		                                 c->v_hidden_size, err);
	int64_t side = 0; /* num_patches > 0; past 2^24 refused with the other dims */
	while (side < (1ll << 13) && (side + 1) * (side + 1) <= c->v_num_pos)
		side++;
	if (side * side != c->v_num_pos)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: vision_config.num_patches %" PRId64
		    " is not a square: Isaac's Siglip2VariableSequenceEmbeddings "
		    "reshapes its position table to int(sqrt(num_patches)) a side; give "
		    "a square (Isaac-0.1: 256)",
		    c->v_num_pos);
	return WT_OK;
}

/* linear_fc1's rows and linear_fc2's columns: 4 x hidden_size x pixel_shuffle_scale_factor^2
 * (IsaacVisionEmbedding's hidden_dim x 4). */
static int isaac_extra(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	int64_t m;
	if (__builtin_mul_overflow(c->v_hidden_size, c->v_spatial_merge_size, &m) ||
	    __builtin_mul_overflow(m, c->v_spatial_merge_size, &m) || m > (INT64_C(1) << 48))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.hidden_size x "
		                 "pixel_shuffle_scale_factor^2 is not a model's");
	static const char *const n[] = {IS_F1, IS_F2};
	for (int k = 0; k < 2; k++) {
		const ckpt_tensor *t = ckpt_find(ck, n[k]);
		if (t == NULL || t->ndim != 2 || t->shape[k] == 4 * m)
			continue;
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': %s %" PRId64 ", but vLLM's IsaacVisionEmbedding "
		                 "builds 4 x vision_config.hidden_size x "
		                 "pixel_shuffle_scale_factor^2 = %" PRId64
		                 "; the checkpoint does not match its vision_config",
		                 n[k], k ? "columns" : "rows", t->shape[k], 4 * m);
	}
	return WT_OK;
}

/* SiglipMLP's fc1 / fc2 built without the quant_config when the tower's sizes are not both
 * multiples of 64. */
static bool isaac_float(const ckpt_config *c, const char *cn)
{
	return shardmap_siglip_mlp_float(c, IS_VT, cn);
}

static const char *const isaac_archs[] = {"IsaacForConditionalGeneration", NULL};

const sm_family shardmap_family_isaac = {
    .name = "isaac",
    .archs = isaac_archs,
    .rules = isaac_rules,
    .n_rules = SM_NRULES(isaac_rules),
    .layer_prefix = "model.layers.",
    .check = isaac_check,
    .check_extra = isaac_extra,
    .keep_float = isaac_float,
    .vision_gated = true,
    .vision_siglip = true,
    .siglip2 = true,
};
