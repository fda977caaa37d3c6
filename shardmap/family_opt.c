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

#include "shardmap/family_opt.h"

static const sm_rule opt_rules[] = {OPT_RULES("")};

/* vLLM's OPTAttention: num_attention_heads heads of hidden_size / heads, no kv grouping, no
 * head_dim key; its LayerNorms carry weights and biases only with
 * layer_norm_elementwise_affine (every released OPT): configs it cannot load as this table
 * cuts them are refused here. */
int shardmap_opt_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq =
	    shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads", "head_dim", err);
	if (hq != WT_OK)
		return hq;
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
    .check = shardmap_opt_check,
    .attn_bias_key = "enable_bias",
    .aliases = opt_aliases,
    .tie_default = true,
};
