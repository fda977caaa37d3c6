/*
 * family_mllama.c — Mllama (MllamaForConditionalGeneration, model_type mllama:
 * meta-llama/Llama-3.2-11B-Vision(-Instruct), -90B-Vision(-Instruct)), cut as vLLM's mllama.py
 * (with llama.py's LlamaDecoderLayer and clip.py's CLIPMLP) loads it.
 *
 * The language model (vLLM's MllamaForCausalLM of text_config) under `language_model.`: its
 * self-attention layers are Llama's (q/k/v fused into qkv_proj by heads, o_proj by columns,
 * gate/up merged by rows, down_proj by columns, the RMSNorms replicated); the layers at
 * text_config.cross_attention_layers are MllamaCrossAttentionDecoderLayer: cross_attn q_proj /
 * k_proj / v_proj fused into cross_attn.qkv_proj as the self-attention's (vLLM's
 * QKVCrossParallelLinear: q by heads, k / v by kv heads), o_proj by columns, all four
 * quantized; the per-head q_norm / k_norm [head_dim], the tanh gates cross_attn_attn_gate /
 * cross_attn_mlp_gate [1] and the RMSNorms replicated; the MLP as Llama's. embed_tokens holds
 * vocab_size + 8 rows (the image tokens; vLLM's VocabParallelEmbedding(vocab_size + 8)): by
 * rows of that vocabulary padded; lm_head (ParallelLMHead(vocab_size)) by rows of vocab_size.
 * No bias anywhere in it (transformers builds none).
 *
 * The vision model (`vision_model.`, MllamaVisionModel): patch_embedding, a Conv2d [hid, C,
 * p, p] vLLM builds as ColumnParallelConv2dPatch (a ColumnParallelLinear without the
 * quantization config): by output channels, never quantized, kept 4-D (vLLM views it [hid,
 * C*p*p]). Each layer of the local `transformer` and the gated `global_transformer`:
 * self_attn q / k / v fused into qkv_proj by attention_heads and o_proj by columns (vLLM's
 * QKVParallelLinear / RowParallelLinear, quantized), mlp.fc1 by rows with its bias, fc2 by
 * columns with its bias replicated (CLIPMLP, quantized), the LayerNorms and the global
 * layers' gate_attn / gate_ffn replicated. class_embedding, the gated positional embedding
 * (embedding, gate, tile_embedding), the pre / post tile positional embeddings (embedding,
 * gate) and layernorm_pre / layernorm_post are plain modules: whole on every rank.
 * multi_modal_projector (ColumnParallelLinear(vision_output_dim, hidden, bias, gather_output)
 * with the quantization config): weight by rows and quantized, bias by rows.
 *
 * Rules are written in the released names (language_model.model.*, language_model.lm_head.*,
 * vision_model.*, multi_modal_projector.*: what transformers 4.57.1's save_pretrained writes,
 * reversing _checkpoint_conversion_mapping); the modules' names (model.language_model.*,
 * model.vision_model.*, model.multi_modal_projector.*, lm_head.*) map onto them.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define ML_V "vision_model."

/* a tensor of the vision model kept whole (no {i}) */
#define ML_R(n, nd, d0, d1)                                                                        \
	SM_RULE(ML_V n, ML_V n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
/* a vision layer's replicated tensor; B its prefix, F its block flag */
#define ML_BR(B, F, n, nd, d0, d1)                                                                 \
	SM_RULE(B n, B n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, F, nd, d0, d1)
/* q / k / v (part 0 / 1 / 2) into the layer's fused qkv_proj, rows by vision heads */
#define ML_VQKV(B, F, x, part)                                                                     \
	SM_RULE(B "self_attn." x "_proj.weight", B "self_attn.qkv_proj.weight", SM_K_ROWS, part,   \
	        SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | F, 2, SM_D_VE, SM_D_VE)
/* one vision encoder layer (MllamaVisionEncoderLayer) */
#define ML_VLAYER(B, F)                                                                            \
	ML_VQKV(B, F, "q", 0), ML_VQKV(B, F, "k", 1), ML_VQKV(B, F, "v", 2),                       \
	    SM_RULE(B "self_attn.o_proj.weight", B "self_attn.o_proj.weight", SM_K_COLS, 0,        \
	            SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | F, 2, SM_D_VE, SM_D_VE),                   \
	    SM_RULE(B "mlp.fc1.weight", B "mlp.fc1.weight", SM_K_ROWS, 0, SM_U_VI, SM_C_ALL,       \
	            SM_F_QUANT | F, 2, SM_D_VI, SM_D_VE),                                          \
	    SM_RULE(B "mlp.fc1.bias", B "mlp.fc1.bias", SM_K_ROWS, 0, SM_U_VI, SM_C_ALL, F, 1,     \
	            SM_D_VI, SM_D_ANY),                                                            \
	    SM_RULE(B "mlp.fc2.weight", B "mlp.fc2.weight", SM_K_COLS, 0, SM_U_VI, SM_C_ALL,       \
	            SM_F_QUANT | F, 2, SM_D_VE, SM_D_VI),                                          \
	    ML_BR(B, F, "mlp.fc2.bias", 1, SM_D_VE, SM_D_ANY),                                     \
	    ML_BR(B, F, "input_layernorm.weight", 1, SM_D_VE, SM_D_ANY),                           \
	    ML_BR(B, F, "input_layernorm.bias", 1, SM_D_VE, SM_D_ANY),                             \
	    ML_BR(B, F, "post_attention_layernorm.weight", 1, SM_D_VE, SM_D_ANY),                  \
	    ML_BR(B, F, "post_attention_layernorm.bias", 1, SM_D_VE, SM_D_ANY)

#define ML_LOC ML_V "transformer.layers.{i}."
#define ML_GLB ML_V "global_transformer.layers.{i}."

/* a text layer's tensor of one kind: C SM_C_FULLATT (self-attention layers) or SM_C_LINATT
 * (the cross-attention layers) */
#define ML_T(n, rt, kind, part, unit, c, fl, nd, d0, d1)                                           \
	SM_RULE(SM_LAYER n, SM_LAYER rt, kind, part, unit, c, fl, nd, d0, d1)
/* q / k / v / o of module A ("self_attn." / "cross_attn.") of condition C */
#define ML_ATTN(A, C)                                                                              \
	ML_T(A "q_proj.weight", A "qkv_proj.weight", SM_K_QKV, 0, SM_U_HEADS, C, SM_F_QUANT, 2,    \
	     SM_D_Q, SM_D_HID),                                                                    \
	    ML_T(A "k_proj.weight", A "qkv_proj.weight", SM_K_QKV, 1, SM_U_HEADS, C, SM_F_QUANT,   \
	         2, SM_D_KV, SM_D_HID),                                                            \
	    ML_T(A "v_proj.weight", A "qkv_proj.weight", SM_K_QKV, 2, SM_U_HEADS, C, SM_F_QUANT,   \
	         2, SM_D_KV, SM_D_HID),                                                            \
	    ML_T(A "o_proj.weight", A "o_proj.weight", SM_K_COLS, 0, SM_U_HEADS, C, SM_F_QUANT, 2, \
	         SM_D_HID, SM_D_Q)
/* a cross-attention layer's replicated tensor */
#define ML_XR(n, d0) ML_T(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_LINATT, 0, 1, d0, SM_D_ANY)

static const sm_rule mllama_rules[] = {
    /* the language model */
    SM_RULE("language_model.model.embed_tokens.weight", "language_model.model.embed_tokens.weight",
            SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V8, SM_D_HID),
    SM_RULE("language_model.lm_head.weight", "language_model.lm_head.weight", SM_K_VOCAB, 0,
            SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2, SM_D_V, SM_D_HID),
    SM_RULE("language_model.model.norm.weight", "language_model.model.norm.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULES_LNORM,
    ML_ATTN("self_attn.", SM_C_FULLATT),
    ML_ATTN("cross_attn.", SM_C_LINATT),
    ML_XR("cross_attn.q_norm.weight", SM_D_HD),
    ML_XR("cross_attn.k_norm.weight", SM_D_HD),
    ML_XR("cross_attn_attn_gate", SM_D_ONE),
    ML_XR("cross_attn_mlp_gate", SM_D_ONE),
    ML_T("mlp.gate_proj.weight", "mlp.gate_up_proj.weight", SM_K_ROWS, 0, SM_U_I, SM_C_ALL,
         SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    ML_T("mlp.up_proj.weight", "mlp.gate_up_proj.weight", SM_K_ROWS, 1, SM_U_I, SM_C_ALL,
         SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    ML_T("mlp.down_proj.weight", "mlp.down_proj.weight", SM_K_COLS, 0, SM_U_I, SM_C_ALL, SM_F_QUANT,
         2, SM_D_HID, SM_D_I),
    /* the vision model */
    {ML_V "patch_embedding.weight",
     ML_V "patch_embedding.weight",
     SM_K_ROWS,
     0,
     SM_U_VHEADS,
     SM_C_ALL,
     0,
     4,
     {SM_D_VE, SM_D_VCH, SM_D_VP, SM_D_VP}},
    ML_R("class_embedding", 1, SM_D_VE, SM_D_ANY),
    ML_R("gated_positional_embedding.embedding", 2, SM_D_VNP, SM_D_VE),
    ML_R("gated_positional_embedding.gate", 1, SM_D_ONE, SM_D_ANY),
    ML_R("gated_positional_embedding.tile_embedding.weight", 2, SM_D_MLAR, SM_D_MLTE),
    ML_R("pre_tile_positional_embedding.embedding.weight", 2, SM_D_MLAR, SM_D_MLTH),
    ML_R("pre_tile_positional_embedding.gate", 1, SM_D_ONE, SM_D_ANY),
    ML_R("post_tile_positional_embedding.embedding.weight", 2, SM_D_MLAR, SM_D_MLTH),
    ML_R("post_tile_positional_embedding.gate", 1, SM_D_ONE, SM_D_ANY),
    ML_R("layernorm_pre.weight", 1, SM_D_VE, SM_D_ANY),
    ML_R("layernorm_pre.bias", 1, SM_D_VE, SM_D_ANY),
    ML_R("layernorm_post.weight", 1, SM_D_VE, SM_D_ANY),
    ML_R("layernorm_post.bias", 1, SM_D_VE, SM_D_ANY),
    ML_VLAYER(ML_LOC, SM_F_VIS),
    ML_VLAYER(ML_GLB, SM_F_QF),
    ML_BR(ML_GLB, SM_F_QF, "gate_attn", 1, SM_D_ONE, SM_D_ANY),
    ML_BR(ML_GLB, SM_F_QF, "gate_ffn", 1, SM_D_ONE, SM_D_ANY),
    /* the projector */
    SM_RULE("multi_modal_projector.weight", "multi_modal_projector.weight", SM_K_ROWS, 0, SM_U_HID,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_VOD),
    SM_RULE("multi_modal_projector.bias", "multi_modal_projector.bias", SM_K_ROWS, 0, SM_U_HID,
            SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
};

/* Is layer i one of text_config.cross_attention_layers? */
static bool ml_cross(const ckpt_config *c, int64_t i)
{
	for (size_t k = 0; k < c->n_full_attn_idxs; k++)
		if (c->full_attn_idxs[k] == i)
			return true;
	return false;
}

/* What vLLM's mllama.py and transformers would not build alike, or what no model is: no
 * text_config (MllamaConfig would take MllamaTextConfig's defaults over the top level's
 * keys), a tied lm_head (vLLM's ParallelLMHead(vocab_size) is never tied, where transformers
 * would tie it to the vocab_size + 8 rows of embed_tokens), a head_dim other than
 * hidden_size / num_attention_heads (transformers ignores the key, vLLM's LlamaAttention
 * reads it), vision heads not dividing the vision width. A cross_attention_layers entry past
 * the layers names none (transformers and vLLM build none there). */
static int mllama_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->lm_model_type[0] == '\0')
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs a text_config object (its sizes and "
		                 "cross_attention_layers)",
		                 c->architecture);
	if (c->tie_word_embeddings)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: text_config.tie_word_embeddings is true: vLLM's "
		    "mllama.py never ties its lm_head (vocab_size rows) to embed_tokens "
		    "(vocab_size + 8 rows); set it false with language_model.lm_head "
		    "in the checkpoint");
	if (c->hidden_size % c->num_attention_heads != 0 ||
	    (c->ml_head_dim_key && c->head_dim * c->num_attention_heads != c->hidden_size))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: text_config head_dim %" PRId64 " with hidden_size %" PRId64
		    " and num_attention_heads %" PRId64
		    ": MllamaTextConfig's heads are hidden_size / num_attention_heads "
		    "wide (transformers ignores head_dim, vLLM reads it); leave it out",
		    c->head_dim, c->hidden_size, c->num_attention_heads);
	if (c->v_hidden_size % c->v_num_attn_heads != 0)
		return shardmap_vision_heads_err("attention_heads", c->v_num_attn_heads,
		                                 c->v_hidden_size, err);
	return WT_OK;
}

static const char *const mllama_archs[] = {"MllamaForConditionalGeneration", NULL};

/* transformers >= 4.52 module names -> the released (canonical) prefix */
static const char *const mllama_aliases[] = {"model.language_model.",
                                             "language_model.model.",
                                             "model.vision_model.",
                                             "vision_model.",
                                             "model.multi_modal_projector.",
                                             "multi_modal_projector.",
                                             "lm_head.",
                                             "language_model.lm_head.",
                                             NULL};

const sm_family shardmap_family_mllama = {
    .name = "mllama",
    .archs = mllama_archs,
    .rules = mllama_rules,
    .n_rules = SM_NRULES(mllama_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = mllama_check,
    .aliases = mllama_aliases,
    .layer_is_linear = ml_cross,
    .linear_keys = "text_config.cross_attention_layers",
    .mllama = true,
};
