/*
 * family_molmo.c — Molmo (MolmoForCausalLM, model_type molmo, remote code: allenai/Molmo-7B-D-0924,
 * Molmo-7B-O-0924, Molmo-72B-0924), cut as vLLM's molmo.py loads it (the stored version of
 * vllm/model_executor/models/molmo.py at commit f06ae651: hf_to_vllm_mapper,
 * _get_weights_with_merged_embedding, MolmoVisionBackbone.load_weights; docs/format.md section
 * 2.7).
 *
 * Runtime names keep the checkpoint's (SHARDS.md: the module path): vLLM's hf_to_vllm_mapper
 * only renames them onto its own modules (model.transformer.blocks. -> model.layers.,
 * att_proj -> self_attn.qkv_proj, ff_proj -> mlp.gate_up_proj, model.transformer.ff_out ->
 * lm_head, model.vision_backbone. -> vision_backbone., ...). Two fusions change a leaf:
 * model.transformer.wte.{embedding, new_embedding} -> model.transformer.wte.weight and
 * image_projector.{w1, w3} -> image_projector.merged_linear.weight (vLLM's parameter).
 *
 * - Language model (model.transformer.): wte.embedding [V, hid] and wte.new_embedding [128,
 *   hid] concatenated by rows (_get_weights_with_merged_embedding) into one VocabParallelEmbedding
 *   of V + 128 rows, by padded vocabulary rows (V: embedding_size or vocab_size, the loader's
 *   vocab_size); the LM head model.transformer.ff_out [V, hid] (ParallelLMHead of V rows, never
 *   tied: weight_tying true is refused by the loader) by padded vocabulary rows; ln_f replicated.
 *   Per block: att_proj [(H + 2 KV) d, hid] (+ bias with qkv_bias) q/k/v fused in the checkpoint,
 *   loaded whole into QKVParallelLinear: [q_r; k_r; v_r] (kv heads replicated when KV < T);
 *   attn_out by columns; ff_proj [2 I, hid] (I: intermediate_size / 2) loaded whole into
 *   MergedColumnParallelLinear([I, I]): [first_r; second_r] in the checkpoint's order (the
 *   remote MLP's x, gate = chunk(2): the first half multiplies silu of the second, vLLM's
 *   MulAndSilu; older vLLM versions swapped the halves on load and used SiluAndMul); ff_out by
 *   columns; attn_norm / ff_norm replicated; q_norm [hid] / k_norm [KV d] with
 *   attention_layer_norm, whole (vLLM gathers q / k before the norms).
 * - Vision backbone (model.vision_backbone.), vLLM's hard-coded VisionBackboneConfig (1024 wide,
 *   23 blocks, 16 heads, MLP 4096, 577 positions, patch 14; config.json carries none), built
 *   with quant_config: image_vit.class_embedding, positional_embedding, patch_embedding (a plain
 *   nn.Linear [1024, 588], never quantized) and pre_ln whole; per block attention.wq / wk / wv
 *   (ColumnParallelLinear each, not fused) and their biases by rows, wo by columns (bias whole),
 *   feed_forward.w1 (+ bias) by rows, w2 by columns (bias whole), attention_norm / ffn_norm (and
 *   biases) whole; image_pooling_2d the same attention over two ViT layers' features (wq / wk /
 *   wv [1024, 2048]); image_projector w1 / w3 merged by rows into merged_linear [w1_r; w3_r]
 *   (MergedColumnParallelLinear, gate then up: SiluAndMul), w2 by columns; pad_embed [2, 2048]
 *   whole. Every Linear but patch_embedding quantized.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define MO_T  "model.transformer."
#define MO_L  MO_T "blocks.{i}."
#define MO_VB "model.vision_backbone."
#define MO_V  MO_VB "image_vit."
#define MO_R  MO_V "transformer.resblocks.{i}."
#define MO_P  MO_VB "image_pooling_2d."
#define MO_J  MO_VB "image_projector."
/* vLLM's ADDITIONAL_VOCAB_SIZE, VisionBackboneConfig's patch (14 x 14 x 3) and the pooled
 * features' width (two ViT layers: VIT_LAYERS) */
#define MO_NEW_VOCAB 128
#define MO_PATCH_IN  588
#define MO_POOL_IN   2048

#define MO_R1(n, cond, d0)            SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, cond, 0, 1, d0, SM_D_ANY)
#define MO_RV(n)                      SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
#define MO_ROWS(n, u, fl, nd, d0, d1) SM_RULE(n, n, SM_K_ROWS, 0, u, SM_C_ALL, fl, nd, d0, d1)
#define MO_COLS(n, u, fl, d0, d1)                                                                  \
	SM_RULE(n, n, SM_K_COLS, 0, u, SM_C_ALL, SM_F_QUANT | (fl), 2, d0, d1)
/* a ViT attention (a block's, or the pooling's over `in`-wide features) under A */
#define MO_ATTN_X(A, x, fl, in)                                                                    \
	MO_ROWS(A x ".weight", SM_U_VHEADS, SM_F_QUANT | (fl), 2, SM_D_VE, in),                    \
	    MO_ROWS(A x ".bias", SM_U_VHEADS, fl, 1, SM_D_VE, SM_D_ANY)
#define MO_ATTN(A, fl, in)                                                                         \
	MO_ATTN_X(A, "wq", fl, in), MO_ATTN_X(A, "wk", fl, in), MO_ATTN_X(A, "wv", fl, in),        \
	    MO_COLS(A "wo.weight", SM_U_VHEADS, fl, SM_D_VE, SM_D_VE),                             \
	    SM_RULE(A "wo.bias", A "wo.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, fl, 1, SM_D_VE,   \
	            SM_D_ANY)

static const sm_rule molmo_rules[] = {
    SM_RULE(MO_T "wte.embedding", MO_T "wte.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 2,
            SM_D_V, SM_D_HID),
    SM_RULE(MO_T "wte.new_embedding", MO_T "wte.weight", SM_K_VOCAB, 1, SM_U_NONE, SM_C_ALL, 0, 2,
            SM_D_ANY, SM_D_HID),
    SM_RULE(MO_T "ff_out.weight", MO_T "ff_out.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,
            SM_F_LMHEAD, 2, SM_D_V, SM_D_HID),
    MO_R1(MO_T "ln_f.weight", SM_C_ALL, SM_D_HID),
    MO_R1(MO_L "attn_norm.weight", SM_C_ALL, SM_D_HID),
    MO_R1(MO_L "ff_norm.weight", SM_C_ALL, SM_D_HID),
    MO_R1(MO_L "q_norm.weight", SM_C_QKNORM, SM_D_HID),
    MO_R1(MO_L "k_norm.weight", SM_C_QKNORM, SM_D_KV),
    SM_RULE(MO_L "att_proj.weight", MO_L "att_proj.weight", SM_K_QKVC, 0, SM_U_HEADS, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),
    SM_RULE(MO_L "att_proj.bias", MO_L "att_proj.bias", SM_K_QKVC, 0, SM_U_HEADS, SM_C_ATTNBIAS, 0,
            1, SM_D_QKV, SM_D_ANY),
    MO_COLS(MO_L "attn_out.weight", SM_U_HEADS, 0, SM_D_HID, SM_D_Q),
    SM_RULE(MO_L "ff_proj.weight", MO_L "ff_proj.weight", SM_K_ROWS2, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I2, SM_D_HID),
    MO_COLS(MO_L "ff_out.weight", SM_U_I, 0, SM_D_HID, SM_D_I),
    /* the ViT */
    MO_R1(MO_V "class_embedding", SM_C_ALL, SM_D_VE),
    SM_RULE(MO_V "positional_embedding", MO_V "positional_embedding", SM_K_REPL, 0, SM_U_NONE,
            SM_C_ALL, 0, 2, SM_D_VNP, SM_D_VE),
    SM_RULE(MO_V "patch_embedding.weight", MO_V "patch_embedding.weight", SM_K_REPL, 0, SM_U_NONE,
            SM_C_ALL, 0, 2, SM_D_VE, SM_D_ANY),
    MO_R1(MO_V "pre_ln.weight", SM_C_ALL, SM_D_VE),
    MO_R1(MO_V "pre_ln.bias", SM_C_ALL, SM_D_VE),
    MO_ATTN(MO_R "attention.", SM_F_VIS, SM_D_VE),
    MO_ROWS(MO_R "feed_forward.w1.weight", SM_U_VI, SM_F_QUANT | SM_F_VIS, 2, SM_D_VI, SM_D_VE),
    MO_ROWS(MO_R "feed_forward.w1.bias", SM_U_VI, SM_F_VIS, 1, SM_D_VI, SM_D_ANY),
    MO_COLS(MO_R "feed_forward.w2.weight", SM_U_VI, SM_F_VIS, SM_D_VE, SM_D_VI),
    MO_RV(MO_R "feed_forward.w2.bias"),
    MO_RV(MO_R "attention_norm.weight"),
    MO_RV(MO_R "attention_norm.bias"),
    MO_RV(MO_R "ffn_norm.weight"),
    MO_RV(MO_R "ffn_norm.bias"),
    /* pooling, projector, pad_embed */
    MO_ATTN(MO_P, 0, SM_D_ANY),
    SM_RULE(MO_J "w1.weight", MO_J "merged_linear.weight", SM_K_ROWS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I, SM_D_VE),
    SM_RULE(MO_J "w3.weight", MO_J "merged_linear.weight", SM_K_ROWS, 1, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I, SM_D_VE),
    MO_COLS(MO_J "w2.weight", SM_U_I, 0, SM_D_HID, SM_D_I),
    SM_RULE(MO_VB "pad_embed", MO_VB "pad_embed", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_ANY,
            SM_D_ANY),
};

/* Tensor name of the checkpoint, when present, [d0, d1] (d1 < 0: 1-D [d0]); else WT_ESHAPE
 * naming it, its shape and vLLM's. */
static int want_shape(const ckpt *ck, const char *name, int64_t d0, int64_t d1, const char *why,
                      wt_errbuf *err)
{
	const ckpt_tensor *t = ckpt_find(ck, name);
	if (t == NULL) /* the table's rules report a missing one */
		return WT_OK;
	int nd = d1 < 0 ? 1 : 2;
	if (t->ndim == nd && t->shape[0] == d0 && (nd == 1 || t->shape[1] == d1))
		return WT_OK;
	return wt_seterr(err, WT_ESHAPE,
	                 "tensor '%s': shape [%" PRId64 "%s%" PRId64 "] (%d-D), vLLM's molmo.py "
	                 "builds [%" PRId64 ", %" PRId64 "] (%s); fix the checkpoint",
	                 name, t->ndim > 0 ? t->shape[0] : 0, t->ndim > 1 ? ", " : "",
	                 t->ndim > 1 ? t->shape[1] : (int64_t)0, t->ndim, d0, d1, why);
}

/* The sizes the table cannot name: new_embedding's 128 rows (vLLM's ADDITIONAL_VOCAB_SIZE:
 * its embedding has embedding_size + 128 rows), the patch Linear's 588 inputs, the pooling's
 * 2048-wide inputs and pad_embed [2, 2048]. */
static int molmo_extra(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	static const char *const pool[] = {MO_P "wq.weight", MO_P "wk.weight", MO_P "wv.weight"};
	int rv = want_shape(ck, MO_T "wte.new_embedding", MO_NEW_VOCAB, c->hidden_size,
	                    "ADDITIONAL_VOCAB_SIZE rows of hidden_size", err);
	if (rv == WT_OK)
		rv = want_shape(ck, MO_V "patch_embedding.weight", c->v_hidden_size, MO_PATCH_IN,
		                "a Linear over 14 x 14 x 3 pixels", err);
	for (size_t k = 0; rv == WT_OK && k < sizeof(pool) / sizeof(pool[0]); k++)
		rv = want_shape(ck, pool[k], c->v_hidden_size, MO_POOL_IN,
		                "over two ViT layers' features, VIT_LAYERS", err);
	if (rv == WT_OK)
		rv = want_shape(ck, MO_VB "pad_embed", 2, MO_POOL_IN,
		                "two rows over two ViT layers' features", err);
	return rv;
}

/* The loader lays vLLM's fixed backbone onto the vision fields (model_type molmo); a
 * MolmoForCausalLM under another model_type has none. vLLM asserts the heads divide
 * hidden_size. */
static int molmo_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type molmo (the remote MolmoConfig); "
		                 "vLLM's molmo.py reads its keys",
		                 c->architecture);
	if (c->hidden_size % c->num_attention_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: num_attention_heads %" PRId64
		                 " does not divide hidden_size %" PRId64
		                 " (vLLM's MolmoAttention asserts it)",
		                 c->num_attention_heads, c->hidden_size);
	return WT_OK;
}

static const char *const molmo_archs[] = {"MolmoForCausalLM", NULL};

const sm_family shardmap_family_molmo = {
    .name = "molmo",
    .archs = molmo_archs,
    .rules = molmo_rules,
    .n_rules = SM_NRULES(molmo_rules),
    .layer_prefix = "model.transformer.blocks.",
    .check = molmo_check,
    .check_extra = molmo_extra,
    .attn_bias_key = "qkv_bias",
    .qk_norm_key = "attention_layer_norm",
    .depth_key = "(none: vLLM's fixed VisionBackboneConfig) num_layers",
    .vision_gated = true,
    .vision_siglip = true,
    .clip = true,
};
