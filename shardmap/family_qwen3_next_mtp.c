/*
 * family_qwen3_next_mtp.c — Qwen3-Next's MTP draft (Qwen3NextMTP: the name vLLM's speculative
 * config gives a Qwen3NextForCausalLM config, model_type qwen3_next_mtp, n_predict =
 * num_nextn_predict_layers; it loads the target's own checkpoint, Qwen/Qwen3-Next-80B-A3B-*),
 * cut as vLLM's qwen3_next_mtp.py loads it (stored version ffdc9857, the one whose
 * Qwen3NextMultiTokenPredictor has its own load_weights with the stacked and expert mappings).
 *
 * Which tensors (Qwen3NextMTP.load_weights' remap_weight_names): a name starting with "mtp."
 * becomes "model." + the rest; a name holding "embed_tokens" or "lm_head" is kept as it is;
 * every other (the target's model.layers.*, model.norm) is skipped. So the runtime names are
 * model.fc, model.norm, model.pre_fc_norm_hidden, model.pre_fc_norm_embedding and
 * model.layers.{n} for the checkpoint's mtp.layers.{n}: the index stays (the MTP layers are
 * built as layers 0 .. num_nextn_predict_layers - 1, which defaults to 1: getattr(config,
 * "num_nextn_predict_layers", 1); Qwen3-Next's config has no such key), a layer past them has
 * no parameter and is refused as unknown.
 * - fc: a ColumnParallelLinear(2 x hid -> hid, gather_output, no bias) built WITH the
 *   quant_config: split by output rows (hid / tp a rank), quantized as the target's Linears
 *   (unlike DeepSeek's eh_proj, a replicated nn.Linear).
 * - norm, pre_fc_norm_hidden, pre_fc_norm_embedding: Qwen3NextRMSNorms [hid], replicated.
 * - model.layers.{n}: a Qwen3NextDecoderLayer built with layer_type "full_attention" under the
 *   prefix mtp.layers.{n}, so its layer index is n: the gated full attention as the
 *   qwen3_next family cuts it (q_proj rows [query_h; gate_h] per head fused with k / v by whole
 *   heads, o_proj by columns, q_norm / k_norm replicated), and the MoE block or dense MLP by
 *   index n (mlp_only_layers, decoder_sparse_step: Qwen3-Next's own test): the router, the
 *   routed experts stacked (expert-parallel as the target's), the shared expert and its gate.
 * - model.embed_tokens (VocabParallelEmbedding) and lm_head (the draft's own ParallelLMHead,
 *   never tied) by padded vocabulary rows.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#define QM  "mtp.layers.{i}."   /* the checkpoint's MTP layer */
#define QR  "model.layers.{i}." /* its runtime name */
#define QMA QM "self_attn."
#define QRA QR "self_attn."

/* A replicated [hid] norm: checkpoint name c, runtime name r. */
#define QMTP_NORM(c, r) SM_RULE(c, r, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)
/* Gated q (SM_D_Q2), k, v weight and optional bias, fused by whole heads. */
#define QMTP_QKV(x, part, d)                                                                       \
	SM_RULE(QMA x "_proj.weight", QRA "qkv_proj.weight", SM_K_QKV, part, SM_U_HEADS, SM_C_ALL, \
	        SM_F_QUANT, 2, d, SM_D_HID),                                                       \
	    SM_RULE(QMA x "_proj.bias", QRA "qkv_proj.bias", SM_K_QKV, part, SM_U_HEADS, SM_C_ALL, \
	            SM_F_OPT, 1, d, SM_D_ANY)
/* Qwen3NextMLP (no biases) under module M, cond C: gate/up merged by rows, down by columns. */
#define QMTP_MLP(M, D, U, C)                                                                       \
	SM_RULE(QM M "gate_proj.weight", QR M "gate_up_proj.weight", SM_K_ROWS, 0, U, C,           \
	        SM_F_QUANT, 2, D, SM_D_HID),                                                       \
	    SM_RULE(QM M "up_proj.weight", QR M "gate_up_proj.weight", SM_K_ROWS, 1, U, C,         \
	            SM_F_QUANT, 2, D, SM_D_HID),                                                   \
	    SM_RULE(QM M "down_proj.weight", QR M "down_proj.weight", SM_K_COLS, 0, U, C,          \
	            SM_F_QUANT, 2, SM_D_HID, D)

static const sm_rule qwen3_next_mtp_rules[] = {
    SM_RULE("model.embed_tokens.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0, SM_U_NONE,
            SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V,
            SM_D_HID),
    SM_RULE("mtp.fc.weight", "model.fc.weight", SM_K_ROWS, 0, SM_U_HID, SM_C_ALL, SM_F_QUANT, 2,
            SM_D_HID, SM_D_HID2),
    QMTP_NORM("mtp.norm.weight", "model.norm.weight"),
    QMTP_NORM("mtp.pre_fc_norm_hidden.weight", "model.pre_fc_norm_hidden.weight"),
    QMTP_NORM("mtp.pre_fc_norm_embedding.weight", "model.pre_fc_norm_embedding.weight"),
    QMTP_NORM(QM "input_layernorm.weight", QR "input_layernorm.weight"),
    QMTP_NORM(QM "post_attention_layernorm.weight", QR "post_attention_layernorm.weight"),
    QMTP_QKV("q", 0, SM_D_Q2),
    QMTP_QKV("k", 1, SM_D_KV),
    QMTP_QKV("v", 2, SM_D_KV),
    SM_RULE(QMA "o_proj.weight", QRA "o_proj.weight", SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULE(QMA "o_proj.bias", QRA "o_proj.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_OPT, 1,
            SM_D_HID, SM_D_ANY),
    SM_RULE(QMA "q_norm.weight", QRA "q_norm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1,
            SM_D_HD, SM_D_ANY),
    SM_RULE(QMA "k_norm.weight", QRA "k_norm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1,
            SM_D_HD, SM_D_ANY),
    QMTP_MLP("mlp.", SM_D_I, SM_U_I, SM_C_DENSE),
    SM_RULE(QM "mlp.gate.weight", QR "mlp.gate.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_MOE, 0, 2,
            SM_D_E, SM_D_HID),
    SM_RULE(QM "mlp.experts.{j}.gate_proj.weight", QR "mlp.experts.w13_weight", SM_K_EXP13, 0,
            SM_U_IE, SM_C_MOE, SM_F_QUANT, 2, SM_D_IE, SM_D_HID),
    SM_RULE(QM "mlp.experts.{j}.up_proj.weight", QR "mlp.experts.w13_weight", SM_K_EXP13, 1,
            SM_U_IE, SM_C_MOE, SM_F_QUANT, 2, SM_D_IE, SM_D_HID),
    SM_RULE(QM "mlp.experts.{j}.down_proj.weight", QR "mlp.experts.w2_weight", SM_K_EXP2, 0,
            SM_U_IE, SM_C_MOE, SM_F_QUANT, 2, SM_D_HID, SM_D_IE),
    QMTP_MLP("mlp.shared_expert.", SM_D_ISH, SM_U_ISH, SM_C_SHARED),
    SM_RULE(QM "mlp.shared_expert_gate.weight", QR "mlp.shared_expert_gate.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_SHARED, 0, 2, SM_D_ONE, SM_D_HID),
};

/* What remap_weight_names skips: a name not under mtp. without "embed_tokens" or "lm_head"
 * (the target's layers, model.norm). */
static bool qwen3_next_mtp_drop(const ckpt_config *c, const char *cn)
{
	(void)c;
	return strncmp(cn, "mtp.", 4) != 0 && strstr(cn, "embed_tokens") == NULL &&
	       strstr(cn, "lm_head") == NULL;
}

/* Before any tensor is mapped: num_nextn_predict_layers >= 1 (the loader's: 1 when absent; a
 * config it did not read is refused here too) and the checkpoint holds MTP layer 0 (a release
 * or a quantized repack without the mtp.* module has no draft). */
static int qwen3_next_mtp_present(const ckpt *c, sm_layer_dims **out, wt_errbuf *err)
{
	*out = NULL;
	const ckpt_config *cfg = ckpt_get_config(c);
	if (cfg->mtp_layers <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: an MTP draft (Qwen3NextMTP) needs "
		                 "num_nextn_predict_layers >= 1 (vLLM builds the MTP layers "
		                 "mtp.layers.0 .. num_nextn_predict_layers - 1; absent, it is 1); "
		                 "give the target's count (Qwen3-Next-80B-A3B: 1) or drop the key");
	static const char lp[] = "mtp.layers.0.";
	for (size_t k = 0; k < ckpt_n_tensors(c); k++)
		if (strncmp(ckpt_tensor_at(c, k)->name, lp, sizeof(lp) - 1) == 0)
			return WT_OK;
	return wt_seterr(err, WT_ENOTFOUND,
	                 "no tensor 'mtp.layers.0.*': the checkpoint holds no MTP layer "
	                 "(num_nextn_predict_layers %" PRId64
	                 "), which Qwen3-Next's MTP draft (Qwen3NextMTP) loads; serve a "
	                 "checkpoint with its mtp.* module (the full release), or the target "
	                 "alone",
	                 cfg->mtp_layers);
}

static const char *const qwen3_next_mtp_archs[] = {"Qwen3NextMTP", NULL};

/* Qwen3NextMTP's lm_head is its own ParallelLMHead: never tied (the loader reads
 * tie_word_embeddings as false) */
const sm_family shardmap_family_qwen3_next_mtp = {
    .name = "qwen3_next_mtp",
    .archs = qwen3_next_mtp_archs,
    .rules = qwen3_next_mtp_rules,
    .n_rules = SM_NRULES(qwen3_next_mtp_rules),
    .layer_is_moe = shardmap_moe_qwen,
    .layer_prefix = "mtp.layers.",
    .layers_key = "num_nextn_predict_layers",
    .drop_canon = qwen3_next_mtp_drop,
    .layer_dims = qwen3_next_mtp_present,
    .q_gated = true,
    .mtp_from0 = true,
};
