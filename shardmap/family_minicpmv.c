/*
 * family_minicpmv.c — MiniCPM-V (architectures MiniCPMV, model_type minicpmv, remote code:
 * openbmb/MiniCPM-Llama3-V-2_5, MiniCPM-V-2_6, MiniCPM-V-4, MiniCPM-V-4_5), cut as vLLM's
 * minicpmv.py (with resampler.py and idefics2_vision_model.py) loads it (docs/format.md
 * section 2.7). Runtime names keep the checkpoint's (vLLM's AutoWeightsLoader loads llm.*,
 * vpm.* and resampler.* into the modules of those names).
 *
 * - Language model (llm.*): vLLM's MiniCPMV picks the class by the version (the loader's
 *   config_minicpmv.c): LlamaForCausalLM for 2.5 and 4.0, Qwen2ForCausalLM for 2.6,
 *   Qwen3ForCausalLM for 4.5, each built of the flat config itself under the prefix llm. So
 *   llm.model.* / llm.lm_head.weight are cut as the llama / qwen2 / qwen3 families cut
 *   model.* / lm_head.weight: q/k/v (Qwen2's biases) into qkv_proj, gate / up into
 *   gate_up_proj, o_proj / down_proj by columns, embed_tokens / lm_head by padded vocabulary
 *   rows; Qwen3's q_norm / k_norm whole (SM_C_QWEN3). One table serves the three: the
 *   lm_model_type the loader sets decides Qwen3's norms. Tied by the top level's
 *   tie_word_embeddings (the class's default false).
 * - The tower (vpm.*, vLLM's Idefics2VisionTransformer built with the quantization config):
 *   the SigLIP-style table (patch Conv2d with its bias, position_embedding
 *   [(image / patch)^2, VE] and every LayerNorm whole; q/k/v with biases fused by heads into
 *   self_attn.qkv_proj, out_proj by columns, mlp.fc1 by rows, fc2 by columns; post_layernorm).
 *   Its attention asserts num_attention_heads % tp_size == 0 (no whole fallback). With
 *   drop_vision_last_layer vLLM builds encoder.layers[:-1] and its load_weights skips the
 *   checkpoint's last block: skipped here; vpm.head.* (a pooling head) skipped as it does.
 * - The resampler (resampler.*, vLLM's Resampler2_5 / Resampler4_5, the same weights):
 *   query [query_num, hid], kv_proj [hid, VE] (ReplicatedLinear with the quantization
 *   config: whole on every rank, quantized), attn (torch's nn.MultiheadAttention:
 *   in_proj_weight [3 hid, hid], in_proj_bias, out_proj with its bias; whole, never
 *   quantized), ln_q / ln_kv / ln_post (LayerNorms with biases) and proj [hid, hid] (a plain
 *   parameter) whole. Its pos_embed is a non-persistent buffer (no checkpoint tensor).
 *
 * Version 2.0 (openbmb/MiniCPM-V-2; vLLM's MiniCPMV2_0: mcv2_rules, the variant the loader's
 * mcv_version 20 picks):
 * - Language model: MiniCPMForCausalLM of the flat config under llm., the minicpm family's
 *   dense table (MINISTRAL_ATTN: q/k/v fused by heads without biases, o_proj by columns;
 *   gate / up into gate_up_proj, down_proj by columns; embed_tokens / lm_head by padded
 *   vocabulary rows). MiniCPM-MoE's experts are refused (no release; check).
 * - The tower (vpm.*): timm's vit_so400m_patch14_siglip_384 whatever the config says (1152
 *   wide, 27 blocks of 16 heads, MLP 4304, patch 14, image 384: the loader fixes the dims),
 *   plain torch modules built without the quantization config: every tensor whole on every
 *   rank, never quantized. patch_embed.proj (Conv2d with its bias), pos_embed [1, 729, VE]
 *   (no class token), per block norm1 / norm2, attn.qkv [3 VE, VE] and attn.proj, mlp.fc1 /
 *   fc2 (all with biases), the final norm. With drop_vision_last_layer vLLM builds
 *   blocks[:-1] and, having no load_weights of its own there, its AutoWeightsLoader raises
 *   on a checkpoint's last block: refused as a block past the count, as are attn_pool.* and
 *   head.* (Identity modules: no parameter).
 * - The resampler (resampler.*, vLLM's Resampler2 with do_post_projection): the rows above
 *   plus pos_embed [query_num, hid] (an nn.Parameter here: loaded, whole, never quantized);
 *   query has int(sqrt(query_num))^2 rows (the loader requires a square query_num).
 */
#include <stdlib.h>
#include <string.h>

#include "shardmap/families.h"
#include "shardmap/family_rules.h"

#undef SM_LAYER
#define SM_LAYER "llm.model.layers.{i}."

#define MCV_VT  "vpm."
#define MCV2_VB MCV_VT "blocks.{i}."
#define MCV_VL  MCV_VT "encoder.layers."
#define MCV_RS  "resampler."

/* A resampler tensor, whole on every rank, never quantized. */
#define MCV_REPL(n, nd, d0, d1)                                                                    \
	SM_RULE(MCV_RS n, MCV_RS n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)

/* A timm tower tensor (2.0), whole on every rank, never quantized; a block's. */
#define MCV2_REPL(n, nd, d0, d1)                                                                   \
	SM_RULE(MCV_VT n, MCV_VT n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define MCV2_BLK(n, nd, d0, d1)                                                                    \
	SM_RULE(MCV2_VB n, MCV2_VB n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, nd, d0, d1)

/* The resampler's rows shared by Resampler2 (2.0) and Resampler2_5 / Resampler4_5. */
#define MCV_RESAMPLER_RULES                                                                        \
	MCV_REPL("query", 2, SM_D_QFQ, SM_D_HID), /* ReplicatedLinear(VE, hid, quant_config) */    \
	    SM_RULE(MCV_RS "kv_proj.weight", MCV_RS "kv_proj.weight", SM_K_REPL, 0, SM_U_NONE,     \
	            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_VE),                                   \
	    MCV_REPL("attn.in_proj_weight", 2, SM_D_HID3, SM_D_HID),                               \
	    MCV_REPL("attn.in_proj_bias", 1, SM_D_HID3, SM_D_ANY),                                 \
	    MCV_REPL("attn.out_proj.weight", 2, SM_D_HID, SM_D_HID),                               \
	    MCV_REPL("attn.out_proj.bias", 1, SM_D_HID, SM_D_ANY),                                 \
	    MCV_REPL("ln_q.weight", 1, SM_D_HID, SM_D_ANY),                                        \
	    MCV_REPL("ln_q.bias", 1, SM_D_HID, SM_D_ANY),                                          \
	    MCV_REPL("ln_kv.weight", 1, SM_D_HID, SM_D_ANY),                                       \
	    MCV_REPL("ln_kv.bias", 1, SM_D_HID, SM_D_ANY),                                         \
	    MCV_REPL("ln_post.weight", 1, SM_D_HID, SM_D_ANY),                                     \
	    MCV_REPL("ln_post.bias", 1, SM_D_HID, SM_D_ANY),                                       \
	    MCV_REPL("proj", 2, SM_D_HID, SM_D_HID)

static const sm_rule mcv_rules[] = {
    SM_RULES_TOP_AT("llm."),
    SM_RULES_LLAMA_QWEN_LAYER,
    SM_RULES_SIGLIP_TOWER(MCV_VT),
    MCV_RESAMPLER_RULES,
};

/* 2.0: MiniCPM's dense decoder, timm's SigLIP-400M, Resampler2 (its pos_embed a parameter). */
static const sm_rule mcv2_rules[] = {
    SM_RULES_TOP_AT("llm."),
    SM_RULES_LNORM,
    MINISTRAL_ATTN,
    SM_RULES_MLP_NOBIAS,
    {MCV_VT "patch_embed.proj.weight",
     MCV_VT "patch_embed.proj.weight",
     SM_K_REPL,
     0,
     SM_U_NONE,
     SM_C_ALL,
     0,
     4,
     {SM_D_VE, SM_D_VCH, SM_D_VP, SM_D_VP}},
    MCV2_REPL("patch_embed.proj.bias", 1, SM_D_VE, SM_D_ANY),
    SM_RULE3(MCV_VT "pos_embed", MCV_VT "pos_embed", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, SM_D_ONE,
             SM_D_VNP, SM_D_VE),
    MCV2_BLK("norm1.weight", 1, SM_D_VE, SM_D_ANY),
    MCV2_BLK("norm1.bias", 1, SM_D_VE, SM_D_ANY),
    MCV2_BLK("attn.qkv.weight", 2, SM_D_V3E, SM_D_VE),
    MCV2_BLK("attn.qkv.bias", 1, SM_D_V3E, SM_D_ANY),
    MCV2_BLK("attn.proj.weight", 2, SM_D_VE, SM_D_VE),
    MCV2_BLK("attn.proj.bias", 1, SM_D_VE, SM_D_ANY),
    MCV2_BLK("norm2.weight", 1, SM_D_VE, SM_D_ANY),
    MCV2_BLK("norm2.bias", 1, SM_D_VE, SM_D_ANY),
    MCV2_BLK("mlp.fc1.weight", 2, SM_D_VI, SM_D_VE),
    MCV2_BLK("mlp.fc1.bias", 1, SM_D_VI, SM_D_ANY),
    MCV2_BLK("mlp.fc2.weight", 2, SM_D_VE, SM_D_VI),
    MCV2_BLK("mlp.fc2.bias", 1, SM_D_VE, SM_D_ANY),
    MCV2_REPL("norm.weight", 1, SM_D_VE, SM_D_ANY),
    MCV2_REPL("norm.bias", 1, SM_D_VE, SM_D_ANY),
    MCV_RESAMPLER_RULES,
    MCV_REPL("pos_embed", 2, SM_D_QFQ, SM_D_HID),
};

/* The tower's block of canonical name cn (-1: not one). */
static int64_t mcv_block(const char *cn)
{
	return shardmap_index_after(cn, MCV_VL);
}

/* What vLLM's Idefics2VisionTransformer.load_weights skips: the pooling head, and the config's
 * last block when drop_vision_last_layer leaves it unbuilt (v_num_layers, the loader's count of
 * the blocks vLLM builds, is its index). */
static bool mcv_drop(const ckpt_config *c, const char *cn)
{
	static const char head[] = MCV_VT "head.";
	if (strncmp(cn, head, sizeof(head) - 1) == 0)
		return true;
	return c->mcv_drop_last && mcv_block(cn) == c->v_num_layers;
}

static const char *const mcv_archs[] = {"MiniCPMV", NULL};

/* The loader's fields (model_type minicpmv); the tower's sizes; the resampler vLLM can build:
 * nn.MultiheadAttention(hid, hid // 128) needs hid // 128 >= 1 dividing hid, and kv_proj is an
 * identity (no weight) when the tower's width is the language model's. */
static int mcv_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type minicpmv (MiniCPMVConfig: the "
		                 "language model's keys at the top level beside vision_config, "
		                 "query_num and version)",
		                 c->architecture);
	sm_vis_geom g;
	int rv = shardmap_vision_geom(c, &shardmap_vis_siglip, &g, err);
	if (rv != WT_OK)
		return rv;
	int64_t mh = c->hidden_size / 128;
	if (mh < 1 || c->hidden_size % mh != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_size %lld: vLLM's MiniCPM-V resampler is an "
		                 "nn.MultiheadAttention of hidden_size // 128 heads (%lld), which "
		                 "must be at least 1 and divide hidden_size; vLLM cannot build it",
		                 (long long)c->hidden_size, (long long)mh);
	if (c->v_hidden_size == c->hidden_size)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %s %lld equals hidden_size: "
		    "vLLM's resampler then builds no kv_proj (an identity) and its "
		    "loader has no parameter for resampler.kv_proj.weight; not cut here",
		    c->mcv_version == 20 ? "the timm tower's width (version 2.0)"
		                         : "vision_config.hidden_size",
		    (long long)c->hidden_size);
	return WT_OK;
}

/* 2.0: mcv_check's, and MiniCPM's dense decoder only (vLLM would build MiniCPMMoE of
 * num_experts; no MiniCPM-V 2.0 release has experts and mcv2_rules hold none). */
static int mcv2_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->num_experts > 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: num_experts %lld under MiniCPMV version 2.0: weightd "
		    "cuts MiniCPM-V 2.0's dense MiniCPM decoder only (no release has "
		    "experts): give 0 or remove the key",
		    (long long)c->num_experts);
	return mcv_check(c, err);
}

/* Version 2.0's table (the loader's mcv_version 20): MiniCPMV2_0. */
static const sm_family mcv2 = {
    .name = "minicpmv",
    .archs = mcv_archs,
    .rules = mcv2_rules,
    .n_rules = SM_NRULES(mcv2_rules),
    .layer_prefix = "llm.model.layers.",
    .check = mcv2_check,
    .vision_gated = true,
    .vision_siglip = true,
    .minicpmv = true,
    .depth_key = "drop_vision_last_layer's count of timm's vit_so400m_patch14_siglip_384 "
                 "blocks vLLM builds (27, less the last)",
};

static const sm_family *mcv_variant(const ckpt_config *c)
{
	return c->mcv_version == 20 ? &mcv2 : NULL;
}

const sm_family shardmap_family_minicpmv = {
    .name = "minicpmv",
    .archs = mcv_archs,
    .rules = mcv_rules,
    .n_rules = SM_NRULES(mcv_rules),
    .layer_prefix = "llm.model.layers.",
    .check = mcv_check,
    .drop_canon = mcv_drop,
    .vision_gated = true,
    .vision_siglip = true,
    .minicpmv = true,
    .variant_for = mcv_variant,
};
