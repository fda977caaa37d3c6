/*
 * family_opt.c — OPT (OPTForCausalLM, transformers 4.57.1 modeling_opt.py: facebook/opt-125m
 * ... opt-66b), cut as vLLM's opt.py loads it.
 *
 * Names stay the checkpoint's under model.decoder. (the facebook/opt-* checkpoints saved from
 * OPTModel say decoder.*, which vLLM's load_weights prefixes with model.: the family's alias
 * layout, same runtime names and bytes). q_proj / k_proj / v_proj with their biases fused by
 * heads into self_attn.qkv_proj (QKVParallelLinear over num_attention_heads heads of
 * hidden_size / heads, no kv grouping), out_proj by columns (bias replicated), fc1 by rows
 * with its bias, fc2 by columns (bias replicated); the biases exactly when enable_bias (true
 * by default, every Linear built with bias=enable_bias). self_attn_layer_norm /
 * final_layer_norm of every layer with their biases replicated. embed_tokens [V, wep] by
 * vocabulary rows (word_embed_proj_dim wide); embed_positions [max_position_embeddings + 2,
 * hid] replicated (OPTLearnedPositionalEmbedding, a plain nn.Embedding: 2 offset rows);
 * project_in [hid, wep] / project_out [wep, hid] replicated (ReplicatedLinear, quantized as
 * vLLM passes them quant_config) exactly when word_embed_proj_dim != hidden_size (opt-350m);
 * model.decoder.final_layer_norm exactly when do_layer_norm_before and not
 * _remove_final_layer_norm (opt-350m has none); lm_head [V, wep] by vocabulary rows unless
 * tied (OPTConfig ties by default).
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define OPT_L                         "model.decoder.layers.{i}."
#define OPT_REPL(x, c, f, nd, d0, d1) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, c, f, nd, d0, d1)
#define OPT_NORM(x)                                                                                \
	OPT_REPL(x ".weight", SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),                                 \
	    OPT_REPL(x ".bias", SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)
#define OPT_QKV(x, part, d)                                                                        \
	SM_RULE(OPT_L "self_attn." x "_proj.weight", OPT_L "self_attn.qkv_proj.weight", SM_K_QKV,  \
	        part, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, d, SM_D_HID),                           \
	    SM_RULE(OPT_L "self_attn." x "_proj.bias", OPT_L "self_attn.qkv_proj.bias", SM_K_QKV,  \
	            part, SM_U_HEADS, SM_C_ATTNBIAS, 0, 1, d, SM_D_ANY)

static const sm_rule opt_rules[] = {
    SM_RULE("model.decoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", SM_K_VOCAB, 0,
            SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_WEP),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_WEP),
    OPT_REPL("model.decoder.embed_positions.weight", SM_C_ALL, 0, 2, SM_D_OPOS, SM_D_HID),
    OPT_REPL("model.decoder.project_in.weight", SM_C_OPROJ, SM_F_QUANT, 2, SM_D_HID, SM_D_WEP),
    OPT_REPL("model.decoder.project_out.weight", SM_C_OPROJ, SM_F_QUANT, 2, SM_D_WEP, SM_D_HID),
    OPT_REPL("model.decoder.final_layer_norm.weight", SM_C_OFNORM, 0, 1, SM_D_HID, SM_D_ANY),
    OPT_REPL("model.decoder.final_layer_norm.bias", SM_C_OFNORM, 0, 1, SM_D_HID, SM_D_ANY),
    OPT_NORM(OPT_L "self_attn_layer_norm"),
    OPT_NORM(OPT_L "final_layer_norm"),
    OPT_QKV("q", 0, SM_D_Q),
    OPT_QKV("k", 1, SM_D_KV),
    OPT_QKV("v", 2, SM_D_KV),
    SM_RULE(OPT_L "self_attn.out_proj.weight", OPT_L "self_attn.out_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    OPT_REPL(OPT_L "self_attn.out_proj.bias", SM_C_ATTNBIAS, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULE(OPT_L "fc1.weight", OPT_L "fc1.weight", SM_K_ROWS, 0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2,
            SM_D_I, SM_D_HID),
    SM_RULE(OPT_L "fc1.bias", OPT_L "fc1.bias", SM_K_ROWS, 0, SM_U_I, SM_C_ATTNBIAS, 0, 1, SM_D_I,
            SM_D_ANY),
    SM_RULE(OPT_L "fc2.weight", OPT_L "fc2.weight", SM_K_COLS, 0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2,
            SM_D_HID, SM_D_I),
    OPT_REPL(OPT_L "fc2.bias", SM_C_ATTNBIAS, 0, 1, SM_D_HID, SM_D_ANY),
};

/* vLLM's OPTAttention: num_attention_heads heads of hidden_size / heads, no kv grouping, no
 * head_dim key; its LayerNorms carry weights and biases only with
 * layer_norm_elementwise_affine (every released OPT): configs it cannot load as this table
 * cuts them are refused here. */
static int opt_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->num_attention_heads <= 0 || c->hidden_size % c->num_attention_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: OPTForCausalLM needs hidden_size (%" PRId64
		                 ") divisible by num_attention_heads (%" PRId64
		                 "): its head size is their quotient",
		                 c->hidden_size, c->num_attention_heads);
	if (c->head_dim != c->hidden_size / c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: head_dim %" PRId64
		                 " is not hidden_size / num_attention_heads = %" PRId64
		                 "; OPTForCausalLM has no head_dim key: remove it",
		                 c->head_dim, c->hidden_size / c->num_attention_heads);
	if (c->num_key_value_heads != c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_key_value_heads %" PRId64
		                 " differs from num_attention_heads %" PRId64
		                 "; vLLM's opt.py builds q/k/v over num_attention_heads only: "
		                 "remove the key",
		                 c->num_key_value_heads, c->num_attention_heads);
	if (!c->opt_ln_affine)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: layer_norm_elementwise_affine false (LayerNorms "
		                 "without weights or biases); weightd cuts OPT's LayerNorms with "
		                 "their weights and biases (every released OPT): set it true");
	return WT_OK;
}

static const char *const opt_archs[] = {"OPTForCausalLM", NULL};
static const char *const opt_aliases[] = {"decoder.", "model.decoder.", NULL};

/* OPTConfig ties by default (PretrainedConfig's tie_word_embeddings=True) */
const sm_family shardmap_family_opt = {
    .name = "opt",
    .archs = opt_archs,
    .rules = opt_rules,
    .n_rules = SM_NRULES(opt_rules),
    .layer_prefix = "model.decoder.layers.",
    .check = opt_check,
    .attn_bias_key = "enable_bias",
    .aliases = opt_aliases,
    .tie_default = true,
};
