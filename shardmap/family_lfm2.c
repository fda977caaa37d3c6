/*
 * family_lfm2.c — LFM2 (Lfm2ForCausalLM, model_type lfm2: LiquidAI/LFM2-350M / 700M /
 * 1.2B / 2.6B; docs/format.md section 2.7), as transformers 4.57.1's modeling_lfm2.py
 * lays it out and vLLM's lfm2.py (with its mamba/short_conv.py layer) loads it.
 *
 * Layers are attention or short-convolution layers: layer_types when given ("conv" /
 * "full_attention"), else layer i attends when it is in full_attn_idxs (absent: every
 * layer, Lfm2Config's default). Every layer has operator_norm (before the mixer), ffn_norm
 * and the SwiGLU feed_forward (w1 gate, w3 up, w2 down, no biases).
 * - Attention (self_attn.): q/k/v fused into qkv_proj by heads (QKVParallelLinear),
 *   out_proj by columns, q_layernorm / k_layernorm [d] replicated; head_dim is
 *   hidden_size / num_attention_heads in vLLM (a config head_dim that differs is refused).
 * - Short conv (conv., runtime short_conv. as vLLM's hf_to_vllm_mapper names it):
 *   in_proj [3*hid, hid] rows [B; C; x] (MergedColumnParallelLinear over [hid] * 3: each
 *   segment split, SM_K_ROWS3), conv [hid, 1, conv_L_cache] depthwise, its channels by rows
 *   (ColumnParallelLinear), out_proj [hid, hid] by columns (RowParallelLinear); biases
 *   (in_proj's by segments, conv's by channels, out_proj's whole) exactly when conv_bias.
 *   vLLM builds the three without a quant_config: never quantized.
 * - feed_forward: w1 / w3 merged into w13 by rows (vLLM's MergedColumnParallelLinear
 *   "w13"), w2 by columns; the size is Lfm2MLP's (shardmap_lfm2_ff_dim).
 * - model.embedding_norm is the final norm (after the last layer), replicated; the LM head
 *   is tied by default (Lfm2Config tie_word_embeddings true, or tie_embedding).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "shardmap/family_rules.h"
#include "shardmap/tower_defaults.h"

#define LF_ATT  SM_LAYER "self_attn."
#define LF_CONV SM_LAYER "conv."
#define LF_SC   SM_LAYER "short_conv."
#define LF_FF   SM_LAYER "feed_forward."

/* q / k / v (part 0 / 1 / 2) of an attention layer into the fused qkv_proj. */
#define LF_QKV(x, part, d)                                                                         \
	SM_RULE(LF_ATT x "_proj.weight", LF_ATT "qkv_proj.weight", SM_K_QKV, part, SM_U_HEADS,     \
	        SM_C_FULLATT, SM_F_QUANT, 2, d, SM_D_HID)

/* A replicated 1-D tensor of every layer. */
#define LF_REPL(n, C, d)                                                                           \
	SM_RULE(SM_LAYER n, SM_LAYER n, SM_K_REPL, 0, SM_U_NONE, C, 0, 1, d, SM_D_ANY)

/* LFM2's rows, its modules under prefix P ("" for Lfm2ForCausalLM; LFM2-VL's language model:
 * "language_model."); the layers are under SM_LAYER as defined where the table is written. */
#define LF_RULES(P)                                                                                \
	SM_RULE(P "model.embed_tokens.weight", P "model.embed_tokens.weight", SM_K_VOCAB, 0,       \
	        SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),                                      \
	    SM_RULE(P "lm_head.weight", P "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,    \
	            SM_F_LMHEAD, 2, SM_D_V, SM_D_HID),                                             \
	    SM_RULE(P "model.embedding_norm.weight", P "model.embedding_norm.weight", SM_K_REPL,   \
	            0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),                             \
	    LF_REPL("operator_norm.weight", SM_C_ALL, SM_D_HID),                                   \
	    LF_REPL("ffn_norm.weight", SM_C_ALL, SM_D_HID), /* attention layers */                 \
	    LF_QKV("q", 0, SM_D_Q), LF_QKV("k", 1, SM_D_KV), LF_QKV("v", 2, SM_D_KV),              \
	    SM_RULE(LF_ATT "out_proj.weight", LF_ATT "out_proj.weight", SM_K_COLS, 0, SM_U_HEADS,  \
	            SM_C_FULLATT, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),                                \
	    LF_REPL("self_attn.q_layernorm.weight", SM_C_FULLATT, SM_D_HD),                        \
	    LF_REPL("self_attn.k_layernorm.weight", SM_C_FULLATT,                                  \
	            SM_D_HD), /* short-conv layers: never quantized (vLLM's ShortConv takes no     \
	                         quant_config) */                                                  \
	    SM_RULE(LF_CONV "in_proj.weight", LF_SC "in_proj.weight", SM_K_ROWS3, 0, SM_U_HID,     \
	            SM_C_LINATT, 0, 2, SM_D_HID3, SM_D_HID),                                       \
	    SM_RULE(LF_CONV "in_proj.bias", LF_SC "in_proj.bias", SM_K_ROWS3, 0, SM_U_HID,         \
	            SM_C_CONVBIAS, 0, 1, SM_D_HID3, SM_D_ANY),                                     \
	    SM_RULE3(LF_CONV "conv.weight", LF_SC "conv.weight", SM_K_ROWS, 0, SM_U_HID,           \
	             SM_C_LINATT, 0, SM_D_HID, SM_D_ONE, SM_D_LKER),                               \
	    SM_RULE(LF_CONV "conv.bias", LF_SC "conv.bias", SM_K_ROWS, 0, SM_U_HID, SM_C_CONVBIAS, \
	            0, 1, SM_D_HID, SM_D_ANY),                                                     \
	    SM_RULE(LF_CONV "out_proj.weight", LF_SC "out_proj.weight", SM_K_COLS, 0, SM_U_HID,    \
	            SM_C_LINATT, 0, 2, SM_D_HID, SM_D_HID),                                        \
	    SM_RULE(LF_CONV "out_proj.bias", LF_SC "out_proj.bias", SM_K_REPL, 0, SM_U_NONE,       \
	            SM_C_CONVBIAS, 0, 1, SM_D_HID, SM_D_ANY)

/* The SwiGLU feed_forward of the layers where C holds (LFM2: every layer). */
#define LF_FF_RULES(C)                                                                             \
	SM_RULE(LF_FF "w1.weight", LF_FF "w13.weight", SM_K_ROWS, 0, SM_U_I, C, SM_F_QUANT, 2,     \
	        SM_D_I, SM_D_HID),                                                                 \
	    SM_RULE(LF_FF "w3.weight", LF_FF "w13.weight", SM_K_ROWS, 1, SM_U_I, C, SM_F_QUANT, 2, \
	            SM_D_I, SM_D_HID),                                                             \
	    SM_RULE(LF_FF "w2.weight", LF_FF "w2.weight", SM_K_COLS, 0, SM_U_I, C, SM_F_QUANT, 2,  \
	            SM_D_HID, SM_D_I)

static const sm_rule lfm2_rules[] = {LF_RULES(""), LF_FF_RULES(SM_C_ALL)};

int64_t shardmap_lfm2_ff_dim(const ckpt_config *c, int64_t *vllm)
{
	int64_t ff = c->intermediate_size, m = c->lfm2_multiple_of > 0 ? c->lfm2_multiple_of : 256;
	if (ff <= 0 || !c->lfm2_auto_adjust) {
		if (vllm)
			*vllm = ff;
		return ff;
	}
	double d = trunc(2.0 * (double)ff / 3.0); /* Python's int(2 * n / 3) */
	if (!c->lfm2_ffn_mult_null)
		d = trunc(c->lfm2_ffn_mult * d);
	/* past 2^53 the conversion or the rounding up (m <= 2^40: the loader's bound) would
	 * overflow: no size */
	if (!(d >= 0.0 && d < 0x1p53)) {
		if (vllm)
			*vllm = -1;
		return -1;
	}
	ff = (int64_t)d;
	int64_t up = m * ((ff + m - 1) / m);
	if (vllm)
		*vllm = up;
	return c->lfm2_ffn_mult_null ? ff : up;
}

/* Lfm2DecoderLayer: attention when layer_types[i] is "full_attention", conv otherwise;
 * without layer_types, attention iff i is in full_attn_idxs (absent: every layer). */
static bool lfm2_conv(const ckpt_config *c, int64_t i)
{
	if (c->has_layer_types)
		return i >= 0 && (uint64_t)i < c->n_layer_types &&
		       c->layer_types[i] != CKPT_LAYER_FULL_ATTN;
	if (!c->has_full_attn_idxs)
		return false;
	for (size_t k = 0; k < c->n_full_attn_idxs; k++)
		if (c->full_attn_idxs[k] == i)
			return false;
	return true;
}

/* layer_types one per layer, each "conv" or "full_attention" (the two Lfm2DecoderLayer
 * builds); full_attn_idxs (read only without layer_types) within the layers. */
static int lfm2_check_types(const ckpt_config *c, wt_errbuf *err)
{
	if (c->has_layer_types) {
		if ((uint64_t)c->num_hidden_layers != c->n_layer_types)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: layer_types has %zu entries but "
			                 "num_hidden_layers is %" PRId64
			                 "; give one type per layer",
			                 c->n_layer_types, c->num_hidden_layers);
		for (size_t k = 0; k < c->n_layer_types; k++)
			if (c->layer_types[k] != CKPT_LAYER_CONV &&
			    c->layer_types[k] != CKPT_LAYER_FULL_ATTN)
				return wt_seterr(
				    err, WT_ECORRUPT,
				    "config.json: layer_types[%zu] is neither \"conv\" "
				    "nor \"full_attention\", the two LFM2 layer types",
				    k);
		return WT_OK;
	}
	for (size_t k = 0; k < c->n_full_attn_idxs; k++)
		if (c->full_attn_idxs[k] < 0 || c->full_attn_idxs[k] >= c->num_hidden_layers)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: full_attn_idxs[%zu] is %" PRId64
			                 ", not a layer of num_hidden_layers %" PRId64,
			                 k, c->full_attn_idxs[k], c->num_hidden_layers);
	return WT_OK;
}

/* A given width key (vLLM reads block_dim / conv_dim) must be hidden_size. */
static int lfm2_check_width(const char *key, int64_t v, int64_t hid, wt_errbuf *err)
{
	if (v < 0 || v == hid)
		return WT_OK;
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "config.json: %s is %" PRId64 " but hidden_size is %" PRId64
	                 "; transformers' Lfm2 builds every block hidden_size wide (vLLM reads "
	                 "%s): make them equal",
	                 key, v, hid, key);
}

/* The layer types; block_dim / conv_dim / head_dim as wide as transformers builds them;
 * an MLP size transformers and vLLM agree on. */
static int lfm2_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = lfm2_check_types(c, err);
	if (rv == WT_OK)
		rv = lfm2_check_width("block_dim", c->lfm2_block_dim, c->hidden_size, err);
	if (rv == WT_OK)
		rv = lfm2_check_width("conv_dim", c->lfm2_conv_dim, c->hidden_size, err);
	if (rv != WT_OK)
		return rv;
	if (c->num_attention_heads > 0 && c->head_dim != c->hidden_size / c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: head_dim %" PRId64 " but hidden_size %" PRId64
		                 " / num_attention_heads %" PRId64 " is %" PRId64
		                 "; vLLM's lfm2.py takes the latter: drop head_dim or make "
		                 "them equal",
		                 c->head_dim, c->hidden_size, c->num_attention_heads,
		                 c->hidden_size / c->num_attention_heads);
	int64_t vllm, ff = shardmap_lfm2_ff_dim(c, &vllm);
	if (ff <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: intermediate_size %" PRId64
		                 " gives an MLP size of %" PRId64
		                 " (block_auto_adjust_ff_dim with block_ffn_dim_multiplier and "
		                 "block_multiple_of; -1: outside [0, 2^53))",
		                 c->intermediate_size, ff);
	if (ff != vllm)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: block_ffn_dim_multiplier null makes the MLP "
		                 "int(2 * intermediate_size %" PRId64 " / 3) = %" PRId64
		                 " in transformers but %" PRId64
		                 " (rounded up to block_multiple_of %" PRId64
		                 ") in vLLM's lfm2.py; set block_ffn_dim_multiplier (1.0 rounds) "
		                 "or an intermediate_size whose 2/3 is a multiple of "
		                 "block_multiple_of",
		                 c->intermediate_size, ff, vllm,
		                 c->lfm2_multiple_of > 0 ? c->lfm2_multiple_of : 256);
	return WT_OK;
}

static const char *const lfm2_archs[] = {"Lfm2ForCausalLM", NULL};

const sm_family shardmap_family_lfm2 = {
    .name = "lfm2",
    .archs = lfm2_archs,
    .rules = lfm2_rules,
    .n_rules = SM_NRULES(lfm2_rules),
    .layer_prefix = "model.layers.",
    .check = lfm2_check,
    .layer_is_linear = lfm2_conv,
    .linear_keys = "layer_types, full_attn_idxs",
    .lfm2 = true,
    .tie_default = true,
};

/*
 * LFM2-MoE (Lfm2MoeForCausalLM, model_type lfm2_moe: LiquidAI/LFM2-8B-A1B; docs/format.md
 * section 2.7), as vLLM's lfm2_moe.py loads it: LFM2's layers (the rows above, layer i a
 * conv layer unless layer_types[i] is "full_attention"; vLLM reads layer_types alone) whose
 * feed_forward is Lfm2MoeMlp (w1 / w3 merged into w13 by rows, w2 by columns,
 * intermediate_size wide: no block_auto_adjust_ff_dim rule) in the layers below
 * num_dense_layers and Lfm2MoeSparseMoeBlock from there on:
 * - feed_forward.gate.weight [E, hid] (ReplicatedLinear): whole on every rank, never
 *   quantized (the router, section 4);
 * - feed_forward.expert_bias [E] (F32 in transformers' buffer), runtime
 *   feed_forward.gate.e_score_correction_bias (vLLM's rename; its F32 parameter), whole,
 *   exactly when use_expert_bias;
 * - feed_forward.experts.{j}.w1 / w3 / w2 (FusedMoE with ckpt names w1 / w2 / w3) stacked
 *   into experts.w13_weight [gate; up] / w2_weight, TP and EP as section 2.4, quantized.
 */
static const sm_rule lfm2_moe_rules[] = {
    LF_RULES(""),
    LF_FF_RULES(SM_C_DENSE),
    SM_RULE_ROUTER("feed_forward.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULE(LF_FF "expert_bias", LF_FF "gate.e_score_correction_bias", SM_K_REPL, 0, SM_U_NONE,
            SM_C_LFMEB, 0, 1, SM_D_E, SM_D_ANY),
    SM_RULES_EXPERTS("feed_forward.experts.", "w1", "w3", "w2"),
};

/* Lfm2MoeDecoderLayer: a MoE feed_forward from num_dense_layers (the loader's
 * first_k_dense_replace) on. */
static bool lfm2_moe_layer(const ckpt_config *c, int64_t i)
{
	return c->num_experts > 0 && i >= c->first_k_dense_replace;
}

/* LFM2's checks over layer_types (vLLM indexes it: required), routed experts, at least one
 * MoE layer (vLLM's Lfm2MoeForCausalLM raises without one); the loader has refused an untied
 * config (config_parse_lfm2_moe). */
static int lfm2_moe_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_layer_types)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs layer_types (one \"conv\" or "
		                 "\"full_attention\" per layer): vLLM's lfm2_moe.py reads the "
		                 "layer kinds from it alone (full_attn_idxs is not read)",
		                 c->architecture);
	if (c->num_experts < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: num_experts %" PRId64
		                 " for %s; it needs routed experts (LFM2-8B-A1B: 32)",
		                 c->num_experts, c->architecture);
	if (c->first_k_dense_replace >= c->num_hidden_layers)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_dense_layers %" PRId64
		                 " leaves no MoE layer of num_hidden_layers %" PRId64
		                 "; vLLM's Lfm2MoeForCausalLM needs one (lower num_dense_layers)",
		                 c->first_k_dense_replace, c->num_hidden_layers);
	return lfm2_check(c, err);
}

static const char *const lfm2_moe_archs[] = {"Lfm2MoeForCausalLM", NULL};

const sm_family shardmap_family_lfm2_moe = {
    .name = "lfm2_moe",
    .archs = lfm2_moe_archs,
    .rules = lfm2_moe_rules,
    .n_rules = SM_NRULES(lfm2_moe_rules),
    .layer_is_moe = lfm2_moe_layer,
    .layer_prefix = "model.layers.",
    .check = lfm2_moe_check,
    .layer_is_linear = lfm2_conv,
    .linear_keys = "layer_types",
    .moe_keys = "num_dense_layers",
    .lfm2 = true,
    .tie_default = true,
};

/*
 * LFM2-VL (Lfm2VlForConditionalGeneration, model_type lfm2_vl / "lfm2-vl": LiquidAI/LFM2-VL-450M,
 * -1.6B), cut as vLLM's lfm2_vl.py / lfm2_siglip2.py / lfm2.py load it: the LFM2 language model
 * (LFM2's rows and checks) under `language_model.`, the SigLIP2 NaFlex tower
 * `vision_tower.vision_model.*` and `multi_modal_projector.*`. Rules are in vLLM's module names;
 * the layout transformers 4.57.1 writes and reads (model.language_model.*, model.vision_tower.*,
 * model.multi_modal_projector.*, lm_head.weight: its modules' own names, no conversion mapping)
 * maps onto them through Gemma 3's aliases, as vLLM's hf_to_vllm_mapper does.
 * - Tower (Siglip2Model, every block and post_layernorm: lfm2_vl.py passes no
 *   num_hidden_layers_override, so vision_feature_layer is not read): the patch embedding is an
 *   nn.Linear [VE, num_channels x patch_size^2] with its bias and the position table an
 *   nn.Embedding [num_patches, VE], both whole on every rank and never quantized; per block
 *   SigLIP's rows (q/k/v with biases fused by heads, out_proj by columns, fc1 by rows, fc2 by
 *   columns, quantized; LayerNorms and row-parallel biases whole). No pooling head (the loader
 *   refuses vision_use_head other than false).
 * - Projector (Lfm2VLMultiModalProjector): layer_norm [VE x downsample_factor^2] and linear_1
 *   [projector_hidden_size, VE x df^2] / linear_2 [text hidden, projector_hidden_size], both
 *   vLLM ReplicatedLinear built without quant_config: whole on every rank, never quantized;
 *   their biases exactly when projector_bias (Lfm2VlConfig's default true).
 * - lm_head tied by text_config's tie_word_embeddings / tie_embedding alone (Lfm2Config's
 *   default true; config_view.c tie_by_text).
 */
#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define LV_VT                     "vision_tower.vision_model."
#define LV_P                      "multi_modal_projector."
#define LV_REPL(n, C, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, C, 0, nd, d0, d1)

static const sm_rule lfm2_vl_rules[] = {
    LF_RULES("language_model."),
    LF_FF_RULES(SM_C_ALL),
    /* Siglip2VisionEmbeddings: nn.Linear patch embedding, nn.Embedding positions */
    LV_REPL(LV_VT "embeddings.patch_embedding.weight", SM_C_ALL, 2, SM_D_VE, SM_D_VUNF),
    LV_REPL(LV_VT "embeddings.patch_embedding.bias", SM_C_ALL, 1, SM_D_VE, SM_D_ANY),
    LV_REPL(LV_VT "embeddings.position_embedding.weight", SM_C_ALL, 2, SM_D_VNP, SM_D_VE),
    SM_SIGLIP_VB_REPL(LV_VT, "layer_norm1.weight"),
    SM_SIGLIP_VB_REPL(LV_VT, "layer_norm1.bias"),
    SM_SIGLIP_QKV(LV_VT, "q", 0),
    SM_SIGLIP_QKV(LV_VT, "k", 1),
    SM_SIGLIP_QKV(LV_VT, "v", 2),
    SM_RULE(LV_VT "encoder.layers.{i}.self_attn.out_proj.weight",
            LV_VT "encoder.layers.{i}.self_attn.out_proj.weight", SM_K_COLS, 0, SM_U_VHEADS,
            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),
    SM_SIGLIP_VB_REPL(LV_VT, "self_attn.out_proj.bias"),
    SM_SIGLIP_VB_REPL(LV_VT, "layer_norm2.weight"),
    SM_SIGLIP_VB_REPL(LV_VT, "layer_norm2.bias"),
    SM_RULES_VIS_FC(LV_VT "encoder.layers.{i}."),
    SM_SIGLIP_VB_REPL(LV_VT, "mlp.fc2.bias"),
    LV_REPL(LV_VT "post_layernorm.weight", SM_C_ALL, 1, SM_D_VE, SM_D_ANY),
    LV_REPL(LV_VT "post_layernorm.bias", SM_C_ALL, 1, SM_D_VE, SM_D_ANY),
    /* nn.LayerNorm(VE * df^2); ReplicatedLinear x 2 without quant_config */
    LV_REPL(LV_P "layer_norm.weight", SM_C_ALL, 1, SM_D_VM, SM_D_ANY),
    LV_REPL(LV_P "layer_norm.bias", SM_C_ALL, 1, SM_D_VM, SM_D_ANY),
    LV_REPL(LV_P "linear_1.weight", SM_C_ALL, 2, SM_D_VPI, SM_D_VM),
    LV_REPL(LV_P "linear_1.bias", SM_C_MMBIAS, 1, SM_D_VPI, SM_D_ANY),
    LV_REPL(LV_P "linear_2.weight", SM_C_ALL, 2, SM_D_HID, SM_D_VPI),
    LV_REPL(LV_P "linear_2.bias", SM_C_MMBIAS, 1, SM_D_HID, SM_D_ANY),
};

/* vision_config a SigLIP2 tower whose heads split its width and whose position table is a
 * square grid (Siglip2VisionEmbeddings reshapes it to sqrt(num_patches) a side); an LFM2
 * language model in text_config, with LFM2's checks. */
static int lfm2_vl_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision) /* the loader applies Siglip2VisionConfig's defaults to one */
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs vision_config (SigLIP2: hidden_size, "
		                 "intermediate_size, num_attention_heads, num_hidden_layers, "
		                 "num_patches, patch_size, vision_use_head false)",
		                 c->architecture);
	int rv = shardmap_text_config_is(
	    c, "lfm2",
	    "Lfm2VlConfig builds a default Lfm2Config without one, not of the top-level keys",
	    "the LFM2-VL releases' text model", err);
	if (rv != WT_OK)
		return rv;
	if (c->v_hidden_size % c->v_num_attn_heads)
		return shardmap_vision_heads_err("num_attention_heads", c->v_num_attn_heads,
		                                 c->v_hidden_size, err);
	int64_t side = 0; /* num_patches > 0; past 2^24 refused with the other dims */
	while (side < (1ll << 13) && (side + 1) * (side + 1) <= c->v_num_pos)
		side++;
	if (side * side != c->v_num_pos)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.num_patches %" PRId64
		                 " is not a square: SigLIP2 reshapes its position table to "
		                 "int(sqrt(num_patches)) a side; give a square (LFM2-VL: 256)",
		                 c->v_num_pos);
	return lfm2_check(c, err);
}

static const char *const lfm2_vl_archs[] = {"Lfm2VlForConditionalGeneration", NULL};

const sm_family shardmap_family_lfm2_vl = {
    .name = "lfm2_vl",
    .archs = lfm2_vl_archs,
    .rules = lfm2_vl_rules,
    .n_rules = SM_NRULES(lfm2_vl_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = lfm2_vl_check,
    .aliases = shardmap_llava_aliases,
    .layer_is_linear = lfm2_conv,
    .linear_keys = "text_config.layer_types, text_config.full_attn_idxs",
    .lfm2 = true,
    .tie_default = true,
    .vision_gated = true,
    .vision_siglip = true,
    .siglip2 = true,
    .mm_bias_key = "projector_bias",
};
