/*
 * family_mimo_mtp.c — MiMo's MTP draft (MiMoMTPModel: the name vLLM's speculative config gives a
 * MiMoForCausalLM config, model_type mimo_mtp, num_hidden_layers set to 0, n_predict =
 * num_nextn_predict_layers; it loads the target's own checkpoint, XiaomiMiMo/MiMo-7B-Base, -RL,
 * -SFT), cut as vLLM's mimo_mtp.py loads it.
 *
 * Which tensors (load_weights): every name holding "mtp_layers", "embed_tokens" or "lm_head";
 * the target's model.layers.*, model.norm and the rotary tables are skipped. Names
 * (map_model_name_to_mtp_param_name): model.mtp_layers.{n} gets n + num_hidden_layers, which
 * the speculative config has set to 0, so n stays (the layers 0 .. num_nextn_predict_layers -
 * 1; a layer past them has no parameter: vLLM fails on it, refused here as unknown); the MTP
 * layer's own modules keep their names (token_layernorm, hidden_layernorm, final_layernorm:
 * RMSNorms, replicated; input_proj: an nn.Linear [hid, 2 x hid] without bias, whole on every
 * rank and never quantized: no quant_config reaches it); every other tensor is the
 * Qwen2DecoderLayer's under model.mtp_layers.{n}.mtp_block., cut as the mimo family cuts a
 * layer (q/k/v fused by heads with their required biases, o_proj by columns, gate_up_proj /
 * down_proj, the norms replicated; the Linears quantized as the target's). model.embed_tokens
 * (VocabParallelEmbedding) and lm_head (the draft's own ParallelLMHead, never tied) by padded
 * vocabulary rows.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#define MM "model.mtp_layers.{i}."
#define MB MM "mtp_block."
#define MM_NORM(x)                                                                                 \
	SM_RULE(MM x ".weight", MM x ".weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, \
	        SM_D_ANY)
#define MB_NORM(x)                                                                                 \
	SM_RULE(MM x ".weight", MB x ".weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, \
	        SM_D_ANY)
#define MB_QKV(x, part, d)                                                                         \
	SM_RULE(MM "self_attn." x "_proj.weight", MB "self_attn.qkv_proj.weight", SM_K_QKV, part,  \
	        SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, d, SM_D_HID),                                 \
	    SM_RULE(MM "self_attn." x "_proj.bias", MB "self_attn.qkv_proj.bias", SM_K_QKV, part,  \
	            SM_U_HEADS, SM_C_ALL, 0, 1, d, SM_D_ANY)

static const sm_rule mimo_mtp_rules[] = {
    SM_RULE("model.embed_tokens.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0, SM_U_NONE,
            SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V,
            SM_D_HID),
    MM_NORM("token_layernorm"),
    MM_NORM("hidden_layernorm"),
    MM_NORM("final_layernorm"),
    SM_RULE(MM "input_proj.weight", MM "input_proj.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 2,
            SM_D_HID, SM_D_HID2),
    MB_NORM("input_layernorm"),
    MB_NORM("post_attention_layernorm"),
    MB_QKV("q", 0, SM_D_Q),
    MB_QKV("k", 1, SM_D_KV),
    MB_QKV("v", 2, SM_D_KV),
    SM_RULE(MM "self_attn.o_proj.weight", MB "self_attn.o_proj.weight", SM_K_COLS, 0, SM_U_HEADS,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULE(MM "mlp.gate_proj.weight", MB "mlp.gate_up_proj.weight", SM_K_ROWS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(MM "mlp.up_proj.weight", MB "mlp.gate_up_proj.weight", SM_K_ROWS, 1, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(MM "mlp.down_proj.weight", MB "mlp.down_proj.weight", SM_K_COLS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_I),
};

/* What vLLM's load_weights skips: a name without "mtp_layers", "embed_tokens" or "lm_head"
 * (the target's layers, model.norm). */
static bool mimo_mtp_drop(const ckpt_config *c, const char *cn)
{
	(void)c;
	return strstr(cn, "mtp_layers") == NULL && strstr(cn, "embed_tokens") == NULL &&
	       strstr(cn, "lm_head") == NULL;
}

/* Before any tensor is mapped: num_nextn_predict_layers >= 1 (the loader's; a config it did
 * not read is refused here too) and the checkpoint holds MTP layer 0 (a release without it
 * has no draft). */
static int mimo_mtp_present(const ckpt *c, sm_layer_dims **out, wt_errbuf *err)
{
	*out = NULL;
	const ckpt_config *cfg = ckpt_get_config(c);
	if (cfg->mtp_layers <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: an MTP draft (MiMoMTPModel) needs "
		                 "num_nextn_predict_layers >= 1 (vLLM builds the MTP layers "
		                 "model.mtp_layers.0 .. num_nextn_predict_layers - 1); give the "
		                 "target's count (MiMo-7B: 1)");
	static const char lp[] = "model.mtp_layers.0.";
	for (size_t k = 0; k < ckpt_n_tensors(c); k++)
		if (strncmp(ckpt_tensor_at(c, k)->name, lp, sizeof(lp) - 1) == 0)
			return WT_OK;
	return wt_seterr(err, WT_ENOTFOUND,
	                 "no tensor 'model.mtp_layers.0.*': the checkpoint holds no MTP layer "
	                 "(num_nextn_predict_layers %" PRId64
	                 "), which MiMo's MTP draft (MiMoMTPModel) loads; serve a checkpoint "
	                 "with its MTP layers (the full release), or the target alone",
	                 cfg->mtp_layers);
}

static const char *const mimo_mtp_archs[] = {"MiMoMTPModel", NULL};

const sm_family shardmap_family_mimo_mtp = {
    .name = "mimo_mtp",
    .archs = mimo_mtp_archs,
    .rules = mimo_mtp_rules,
    .n_rules = SM_NRULES(mimo_mtp_rules),
    .layer_prefix = "model.mtp_layers.",
    .layers_key = "num_nextn_predict_layers",
    .drop_canon = mimo_mtp_drop,
    .layer_dims = mimo_mtp_present,
    .mtp_from0 = true,
};
