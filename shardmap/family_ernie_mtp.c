/*
 * family_ernie_mtp.c — ERNIE 4.5 MoE's MTP draft (ErnieMTPModel: the name vLLM's speculative
 * config gives an ernie4_5_moe config, model_type ernie_mtp, n_predict =
 * num_nextn_predict_layers; it loads the target's own checkpoint, baidu/ERNIE-4.5-21B-A3B-PT,
 * -300B-A47B-PT), cut as vLLM's ernie_mtp.py loads it (stored version b250ac3d).
 *
 * Which tensors (ErnieMTP.load_weights): a name holding "mtp" goes through
 * _rewrite_spec_layer_name; every name without "mtp_" that holds neither "embed_tokens" nor
 * "lm_head" is skipped (the target's model.layers.*, model.norm), and lm_head.weight too when
 * tie_word_embeddings (the draft's lm_head is then the embedding). Names: the checkpoint's
 * model.mtp_emb_norm.0., model.mtp_hidden_norm.0., model.mtp_linear_proj.0. become
 * model.layers.{L}.mtp_emb_norm. / .mtp_hidden_norm. / .mtp_linear_proj., model.mtp_block.0.
 * becomes model.layers.{L}.mtp_block., L = num_hidden_layers (the runtime {i} shifted by L:
 * mtp_rt_shift). Only index 0 is renamed (and ErnieMTP's forward asserts spec_step_idx 0), so
 * num_nextn_predict_layers must be 1: a larger count builds layers vLLM never loads, refused; a
 * model.mtp_*.1. tensor has no parameter, refused as a layer past the count.
 * - mtp_emb_norm, mtp_hidden_norm: RMSNorms [hid], replicated.
 * - mtp_linear_proj: an nn.Linear [hid, 2 x hid] without bias, whole on every rank and never
 *   quantized (no quant_config reaches it).
 * - mtp_block: a LlamaDecoderLayer (built with the quant_config), dense whatever the target's
 *   MoE layers: q/k/v fused by heads into qkv_proj (no biases: Ernie's config has neither
 *   attention_bias nor bias), o_proj by columns, gate_proj / up_proj merged into gate_up_proj
 *   and down_proj by columns over intermediate_size, the two norms replicated.
 * - model.embed_tokens (VocabParallelEmbedding) and lm_head (ParallelLMHead; tied to the
 *   embedding as the target's config says: ERNIE-4.5-21B-A3B ties, -300B-A47B does not) by
 *   padded vocabulary rows.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#define EB "model.mtp_block.{i}." /* the checkpoint's MTP decoder layer */
#define RL "model.layers.{i}."    /* the runtime's MTP layer ({i} + num_hidden_layers) */
#define RB RL "mtp_block."

/* A replicated [hid] tensor: checkpoint name c, runtime name r. */
#define EMTP_NORM(c, r) SM_RULE(c, r, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)
#define EMTP_QKV(x, part, d)                                                                       \
	SM_RULE(EB "self_attn." x "_proj.weight", RB "self_attn.qkv_proj.weight", SM_K_QKV, part,  \
	        SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, d, SM_D_HID)

static const sm_rule ernie_mtp_rules[] = {
    SM_RULE("model.embed_tokens.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0, SM_U_NONE,
            SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    EMTP_NORM("model.mtp_emb_norm.{i}.weight", RL "mtp_emb_norm.weight"),
    EMTP_NORM("model.mtp_hidden_norm.{i}.weight", RL "mtp_hidden_norm.weight"),
    SM_RULE("model.mtp_linear_proj.{i}.weight", RL "mtp_linear_proj.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_ALL, 0, 2, SM_D_HID, SM_D_HID2),
    EMTP_NORM(EB "input_layernorm.weight", RB "input_layernorm.weight"),
    EMTP_NORM(EB "post_attention_layernorm.weight", RB "post_attention_layernorm.weight"),
    EMTP_QKV("q", 0, SM_D_Q),
    EMTP_QKV("k", 1, SM_D_KV),
    EMTP_QKV("v", 2, SM_D_KV),
    SM_RULE(EB "self_attn.o_proj.weight", RB "self_attn.o_proj.weight", SM_K_COLS, 0, SM_U_HEADS,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULE(EB "mlp.gate_proj.weight", RB "mlp.gate_up_proj.weight", SM_K_ROWS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(EB "mlp.up_proj.weight", RB "mlp.gate_up_proj.weight", SM_K_ROWS, 1, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(EB "mlp.down_proj.weight", RB "mlp.down_proj.weight", SM_K_COLS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_I),
};

/* What ErnieMTP.load_weights skips: a name without "mtp_" that holds neither "embed_tokens" nor
 * "lm_head" (the target's layers, model.norm). */
static bool ernie_mtp_drop(const ckpt_config *c, const char *cn)
{
	(void)c;
	return strstr(cn, "mtp_") == NULL && strstr(cn, "embed_tokens") == NULL &&
	       strstr(cn, "lm_head") == NULL;
}

/* Before any tensor is mapped: num_nextn_predict_layers exactly 1 (the loader's >= 1; vLLM
 * loads the checkpoint's index 0 alone) and the checkpoint holds the MTP block at all. */
static int ernie_mtp_present(const ckpt *c, sm_layer_dims **out, wt_errbuf *err)
{
	*out = NULL;
	const ckpt_config *cfg = ckpt_get_config(c);
	if (cfg->mtp_layers <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: an MTP draft (ErnieMTPModel) needs "
		                 "num_nextn_predict_layers 1 (vLLM builds the MTP layer "
		                 "num_hidden_layers from the checkpoint's model.mtp_*.0); give "
		                 "the target's count (ERNIE-4.5: 1)");
	if (cfg->mtp_layers > 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_nextn_predict_layers %" PRId64
		                 ": vLLM's ErnieMTP builds that many MTP layers but loads only the "
		                 "checkpoint's model.mtp_*.0 into the first (its forward predicts "
		                 "one token), leaving the others unloaded; give 1 (ERNIE-4.5: 1)",
		                 cfg->mtp_layers);
	static const char lp[] = "model.mtp_block.0.";
	for (size_t k = 0; k < ckpt_n_tensors(c); k++)
		if (strncmp(ckpt_tensor_at(c, k)->name, lp, sizeof(lp) - 1) == 0)
			return WT_OK;
	return wt_seterr(err, WT_ENOTFOUND,
	                 "no tensor 'model.mtp_block.0.*': the checkpoint holds no MTP layer "
	                 "(num_nextn_predict_layers 1), which ERNIE 4.5's MTP draft "
	                 "(ErnieMTPModel) loads; serve a checkpoint with its model.mtp_* module "
	                 "(the -PT release), or the target alone");
}

static const char *const ernie_mtp_archs[] = {"ErnieMTPModel", NULL};

/* Ernie4_5_MoeConfig ties by default, and ErnieMTP ties lm_head as the config says */
const sm_family shardmap_family_ernie_mtp = {
    .name = "ernie_mtp",
    .archs = ernie_mtp_archs,
    .rules = ernie_mtp_rules,
    .n_rules = SM_NRULES(ernie_mtp_rules),
    .layer_prefix = "model.mtp_block.",
    .layers_key = "num_nextn_predict_layers",
    .drop_canon = ernie_mtp_drop,
    .layer_dims = ernie_mtp_present,
    .tie_default = true,
    .mtp_from0 = true,
    .mtp_rt_shift = true,
};
