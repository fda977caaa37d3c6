/*
 * family_blip2.c — BLIP-2 (Blip2ForConditionalGeneration, model_type blip-2: Salesforce/
 * blip2-opt-2.7b, -6.7b), cut as vLLM's blip2.py / blip.py / opt.py load it. Names are the
 * checkpoint's, which are vLLM's modules' (transformers 4.57.1 writes and reads one layout,
 * its modules' own names: no conversion mapping).
 * - Vision tower (BlipVisionModel, vision_model.*, built with the quantization config):
 *   embeddings.class_embedding [1, 1, VE], position_embedding [1, (image / patch)^2 + 1, VE]
 *   and the patch Conv2d with its bias whole on every rank; per block the fused
 *   self_attn.qkv [3 x VE, VE] (QKVParallelLinear over vision heads, loaded whole and cut by
 *   heads: rank r holds [q_r; k_r; v_r]) with its qkv.bias alike (exactly when
 *   vision_config.qkv_bias: transformers builds it of q_bias, zeros and v_bias and saves it
 *   so), self_attn.projection by columns (RowParallelLinear, its bias whole), mlp.fc1 by
 *   rows with its bias, mlp.fc2 by columns (its bias whole), the LayerNorms whole;
 *   post_layernorm whole. qkv, projection, fc1 and fc2 are quantized.
 * - Q-Former (query_tokens [1, num_query_tokens, QH], qformer.*): plain nn.Linear and
 *   nn.LayerNorm modules in vLLM's blip2.py, so every tensor whole on every rank and never
 *   quantized: qformer.layernorm; per layer (qformer.encoder.layer.{i}.) attention's
 *   query / key / value / output.dense / output.LayerNorm, intermediate_query.dense,
 *   output_query.dense / LayerNorm, and crossattention's (key / value VE columns wide) in
 *   the layers i % qformer_config.cross_attention_frequency == 0.
 * - language_projection [hid, QH] with its bias: nn.Linear, whole, never quantized.
 * - Language model: OPT's table under "language_model." (vLLM builds OPTForCausalLM of
 *   text_config; OPT's checks), lm_head tied by text_config's tie_word_embeddings alone
 *   (OPTConfig's default true; config_view.c tie_by_text).
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_opt.h"
#include "shardmap/family_qformer.h"
#include "shardmap/tower_defaults.h"

#define B2_VT                     "vision_model."
#define B2_VB                     B2_VT "encoder.layers.{i}."
#define B2_REPL(n, C, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, C, 0, nd, d0, d1)
#define B2_VB_REPL(n)             SM_SIGLIP_VB_REPL(B2_VT, n)
static const sm_rule blip2_rules[] = {
    OPT_RULES("language_model."),
    /* BlipVisionEmbeddings */
    SM_RULE3(B2_VT "embeddings.class_embedding", B2_VT "embeddings.class_embedding", SM_K_REPL, 0,
             SM_U_NONE, SM_C_ALL, 0, SM_D_ONE, SM_D_ONE, SM_D_VE),
    SM_RULE3(B2_VT "embeddings.position_embedding", B2_VT "embeddings.position_embedding",
             SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, SM_D_ONE, SM_D_VNP, SM_D_VE),
    {B2_VT "embeddings.patch_embedding.weight",
     B2_VT "embeddings.patch_embedding.weight",
     SM_K_REPL,
     0,
     SM_U_NONE,
     SM_C_ALL,
     0,
     4,
     {SM_D_VE, SM_D_VCH, SM_D_VP, SM_D_VP}},
    B2_REPL(B2_VT "embeddings.patch_embedding.bias", SM_C_ALL, 1, SM_D_VE, SM_D_ANY),
    /* BlipEncoderLayer */
    B2_VB_REPL("layer_norm1.weight"),
    B2_VB_REPL("layer_norm1.bias"),
    SM_RULE(B2_VB "self_attn.qkv.weight", B2_VB "self_attn.qkv.weight", SM_K_QKVF, 0, SM_U_VHEADS,
            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_V3E, SM_D_VE),
    SM_RULE(B2_VB "self_attn.qkv.bias", B2_VB "self_attn.qkv.bias", SM_K_QKVF, 0, SM_U_VHEADS,
            SM_C_VQKVB, SM_F_VIS, 1, SM_D_V3E, SM_D_ANY),
    SM_RULE(B2_VB "self_attn.projection.weight", B2_VB "self_attn.projection.weight", SM_K_COLS, 0,
            SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),
    B2_VB_REPL("self_attn.projection.bias"),
    B2_VB_REPL("layer_norm2.weight"),
    B2_VB_REPL("layer_norm2.bias"),
    SM_RULES_VIS_FC(B2_VB),
    B2_VB_REPL("mlp.fc2.bias"),
    B2_REPL(B2_VT "post_layernorm.weight", SM_C_ALL, 1, SM_D_VE, SM_D_ANY),
    B2_REPL(B2_VT "post_layernorm.bias", SM_C_ALL, 1, SM_D_VE, SM_D_ANY),
    /* Blip2QFormerModel and the query tokens: nn.Linear / nn.LayerNorm, whole */
    SM_RULE3("query_tokens", "query_tokens", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, SM_D_ONE,
             SM_D_QFQ, SM_D_QFH),
    SM_RULES_QFORMER("qformer."),
    /* nn.Linear(qformer hidden, text hidden) */
    B2_REPL("language_projection.weight", SM_C_ALL, 2, SM_D_HID, SM_D_QFH),
    B2_REPL("language_projection.bias", SM_C_ALL, 1, SM_D_HID, SM_D_ANY),
};

/* An OPT language model in text_config (with OPT's checks); the tower's heads dividing its
 * width and its image a whole number of patches (BlipVisionEmbeddings asserts it), the
 * Q-Former one vLLM builds (shardmap_qformer_check). */
static int blip2_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->qf_heads <= 0 || c->v_num_attn_heads <= 0) /* the loader read no Blip2Config */
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type \"blip-2\" (Blip2Config: "
		                 "vision_config, qformer_config, text_config)",
		                 c->architecture);
	int rv = shardmap_text_config_is(
	    c, "opt",
	    "Blip2Config builds a default OPTConfig without one, not of the top-level keys",
	    "blip2-opt-2.7b / -6.7b; the flan-t5 releases' encoder-decoder is not a decoder "
	    "weightd cuts",
	    err);
	if (rv != WT_OK)
		return rv;
	if (c->v_hidden_size % c->v_num_attn_heads)
		return shardmap_vision_heads_err("num_attention_heads", c->v_num_attn_heads,
		                                 c->v_hidden_size, err);
	if (c->v_image_size % c->v_patch_size)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.image_size %" PRId64
		                 " is not a multiple of patch_size %" PRId64
		                 ": vLLM's blip.py asserts it (a whole number of patches a side)",
		                 c->v_image_size, c->v_patch_size);
	rv = shardmap_qformer_check(c, "qformer_config", err);
	if (rv != WT_OK)
		return rv;
	return shardmap_opt_check(c, err);
}

static const char *const blip2_archs[] = {"Blip2ForConditionalGeneration", NULL};

const sm_family shardmap_family_blip2 = {
    .name = "blip_2",
    .archs = blip2_archs,
    .rules = blip2_rules,
    .n_rules = SM_NRULES(blip2_rules),
    .layer_prefix = "language_model.model.decoder.layers.",
    .check = blip2_check,
    .attn_bias_key = "enable_bias",
    .vision_siglip = true,
    .vision_gated = true,
    .tie_default = true,
    .blip2 = true,
};
