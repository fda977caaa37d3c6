/*
 * family_clip.c — CLIP's dual encoder (CLIPModel, model_type clip: openai/clip-vit-base-patch32
 * and the other CLIPModel checkpoints), docs/format.md section 2.7, as vLLM's clip.py
 * CLIPEmbeddingModel loads it (_EMBEDDING_MODELS).
 *
 * The text tower text_model.* (CLIPTextTransformer of text_config): token_embedding and
 * position_embedding both VocabParallelEmbedding (rows of the padded vocabulary / of the
 * padded max_position_embeddings table), per layer CLIPEncoderLayer's LayerNorms
 * layer_norm1 / layer_norm2 replicated, q/k/v with biases fused by heads into
 * self_attn.qkv_proj (QKVParallelLinear, KV = H), out_proj by columns (RowParallelLinear, its
 * bias replicated), mlp.fc1 by rows with its bias (ColumnParallelLinear), mlp.fc2 by columns
 * (its bias replicated), the four quantized; final_layer_norm replicated. The vision tower
 * vision_model.* (CLIPVisionTransformer of vision_config, every block and post_layernorm:
 * vLLM builds it whole) as LLaVA's (SM_RULES_CLIP_TOWER). text_projection [projection_dim,
 * text hidden] and visual_projection [projection_dim, vision hidden] are plain nn.Linear
 * without bias: whole on every rank, never quantized. Skipped and listed: logit_scale (vLLM's
 * ignore_unexpected_prefixes) and the position_ids buffers of both towers (its mapper drops
 * ".position_ids"). Anything else is refused as vLLM's AutoWeightsLoader refuses it.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#define CL_T                   "text_model."
#define CL_TB                  CL_T "encoder.layers.{i}."
#define CL_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define CL_LN(n)                                                                                   \
	CL_REPL(n ".weight", 1, SM_D_HID, SM_D_ANY), CL_REPL(n ".bias", 1, SM_D_HID, SM_D_ANY)
#define CL_QKV(x, part)                                                                            \
	SM_RULE(CL_TB "self_attn." x "_proj.weight", CL_TB "self_attn.qkv_proj.weight", SM_K_QKV,  \
	        part, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_Q, SM_D_HID),                      \
	    SM_RULE(CL_TB "self_attn." x "_proj.bias", CL_TB "self_attn.qkv_proj.bias", SM_K_QKV,  \
	            part, SM_U_HEADS, SM_C_ALL, 0, 1, SM_D_Q, SM_D_ANY)

static const sm_rule clip_rules[] = {
    SM_RULE(CL_T "embeddings.token_embedding.weight", CL_T "embeddings.token_embedding.weight",
            SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE(CL_T "embeddings.position_embedding.weight",
            CL_T "embeddings.position_embedding.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 2,
            SM_D_RPOS, SM_D_HID),
    CL_LN(CL_TB "layer_norm1"),
    CL_QKV("q", 0),
    CL_QKV("k", 1),
    CL_QKV("v", 2),
    SM_RULE(CL_TB "self_attn.out_proj.weight", CL_TB "self_attn.out_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    CL_REPL(CL_TB "self_attn.out_proj.bias", 1, SM_D_HID, SM_D_ANY),
    CL_LN(CL_TB "layer_norm2"),
    SM_RULE(CL_TB "mlp.fc1.weight", CL_TB "mlp.fc1.weight", SM_K_ROWS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(CL_TB "mlp.fc1.bias", CL_TB "mlp.fc1.bias", SM_K_ROWS, 0, SM_U_I, SM_C_ALL, 0, 1,
            SM_D_I, SM_D_ANY),
    SM_RULE(CL_TB "mlp.fc2.weight", CL_TB "mlp.fc2.weight", SM_K_COLS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_I),
    CL_REPL(CL_TB "mlp.fc2.bias", 1, SM_D_HID, SM_D_ANY),
    CL_LN(CL_T "final_layer_norm"),
    SM_RULES_CLIP_TOWER("vision_model."),
    /* nn.Linear(hidden, projection_dim, bias=False): whole, never quantized */
    CL_REPL("text_projection.weight", 2, SM_D_NLAB, SM_D_HID),
    CL_REPL("visual_projection.weight", 2, SM_D_NLAB, SM_D_VE),
};

/* logit_scale (ignore_unexpected_prefixes) and both towers' position_ids buffers. */
static bool clip_drop(const ckpt_config *cfg, const char *cn)
{
	(void)cfg;
	return strcmp(cn, "logit_scale") == 0 || strcmp(cn, CL_T "embeddings.position_ids") == 0 ||
	       strcmp(cn, "vision_model.embeddings.position_ids") == 0;
}

/* CLIPAttention's check (heads dividing the width: its ValueError) for the text tower; the
 * vision tower's geometry; projection_dim and max_position_embeddings positive (the loader's
 * defaults 512 and 77 when absent). */
static int clip_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv;
	if (c->hidden_size % c->num_attention_heads)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: text_config.num_attention_heads %" PRId64
		                 " does not divide hidden_size %" PRId64
		                 " (vLLM's CLIPAttention refuses it)",
		                 c->num_attention_heads, c->hidden_size);
	if (c->num_key_value_heads != c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: text_config.num_key_value_heads %" PRId64
		                 " is not num_attention_heads %" PRId64
		                 ": CLIP's text attention has one key / value head per query head "
		                 "(QKVParallelLinear without num_kv_heads); remove the key",
		                 c->num_key_value_heads, c->num_attention_heads);
	if (c->head_dim * c->num_attention_heads != c->hidden_size)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: text_config.head_dim %" PRId64
		                 " is not hidden_size / num_attention_heads (%" PRId64
		                 "): vLLM's CLIPAttention derives it; remove the key",
		                 c->head_dim, c->hidden_size / c->num_attention_heads);
	if ((rv = shardmap_vision_need(c, &shardmap_vis_clip, err)) != WT_OK)
		return rv;
	sm_vis_geom g;
	return shardmap_vision_geom(c, &shardmap_vis_clip, &g, err);
}

static const char *const clip_archs[] = {"CLIPModel", NULL};

const sm_family shardmap_family_clip = {
    .name = "clip",
    .archs = clip_archs,
    .rules = clip_rules,
    .n_rules = SM_NRULES(clip_rules),
    .layer_prefix = CL_T "encoder.layers.",
    .check = clip_check,
    .vision_gated = true,
    .vision_siglip = true,
    .clip = true,
    .drop_canon = clip_drop,
};
