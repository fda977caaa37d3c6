/*
 * family_zamba2.c — Zamba2 (Zamba2ForCausalLM, model_type zamba2: Zyphra/Zamba2-1.2B /
 * -2.7B / -7B; docs/format.md section 2.7), as transformers 4.57.1's modeling_zamba2.py lays
 * it out and vLLM's zamba2.py / mamba_mixer2.py load it.
 *
 * Every layer runs a Mamba2 mixer (Granite 4.0's, cut the same way) after its
 * input_layernorm: a "mamba" layer under model.layers.{i}.mamba., a "hybrid" layer under
 * model.layers.{i}.mamba_decoder.mamba. (layers_block_type, read as layer_types). Before the
 * mixer a hybrid layer runs one of num_mem_blocks shared transformer blocks (hybrid layer of
 * order j among them takes block j % num_mem_blocks) on [hidden; embeddings] (2 x hidden_size
 * wide) and adds its output through linear (hid x hid, vLLM's ReplicatedLinear: whole on
 * every rank, quantized). A block's tensors are saved once, under the first hybrid layer
 * that runs it (model.layers.{i}.shared_transformer.), as both build and save them:
 * - input_layernorm [2 x hid] and pre_ff_layernorm [hid] replicated;
 * - self_attn.q/k/v_proj [2 x hid, 2 x hid] fused by heads into self_attn.qkv_proj
 *   (QKVParallelLinear, one kv head per head, head_dim 2 x hid / H), o_proj by columns;
 * - with use_shared_attention_adapter, per application j of the block
 *   self_attn.linear_{q,k,v}_adapter_list.{j}.0 (A: [adapter_rank, 2 x hid]) by rows in
 *   adapter_rank (ColumnParallelLinear, gathered) and .1 (B: [2 x hid, adapter_rank]) by
 *   rows in heads (ColumnParallelLinear);
 * - feed_forward.gate_up_proj [2I, hid] re-cut into [gate_r; up_r] (MergedColumnParallel),
 *   down_proj by columns, their biases with add_bias_linear (gate_up's cut alike, down's
 *   whole); per application j feed_forward.gate_up_proj_adapter_list.{j}.0 (A) by rows in
 *   adapter_rank and .1 (B: [2I, adapter_rank]) re-cut into [gate_r; up_r];
 * every Linear quantized (vLLM hands each the quant_config), norms never. The adapters keep
 * the checkpoint's .0 / .1 names (vLLM's A / B). embed_tokens by vocabulary rows; the LM
 * head always tied to it (vLLM's zamba2.py ties it whatever the config says: the loader
 * refuses tie_word_embeddings false, and an lm_head.weight is dropped); model.final_layernorm
 * replicated.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define Z2_DEC SM_LAYER "mamba_decoder."
#define Z2_ST  SM_LAYER "shared_transformer."
#define Z2_AT  Z2_ST "self_attn."
#define Z2_FF  Z2_ST "feed_forward."

#define Z2_REPL(n, cond, d) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, cond, 0, 1, d, SM_D_ANY)
#define Z2_QKV(x, part)                                                                            \
	SM_RULE(Z2_AT x "_proj.weight", Z2_AT "qkv_proj.weight", SM_K_QKV, part, SM_U_HEADS,       \
	        SM_C_Z2BLK, SM_F_QUANT, 2, SM_D_Q, SM_D_Q)
/* One LoRA adapter list under name N: A by rows in adapter_rank, B as its unit / kind say. */
#define Z2_ADAPTER(N, cond, din, kb, ub, dout)                                                     \
	SM_RULE(N ".{j}.0.weight", N ".{j}.0.weight", SM_K_ROWS, 0, SM_U_ZAR, cond, SM_F_QUANT, 2, \
	        SM_D_ZAR, din),                                                                    \
	    SM_RULE(N ".{j}.1.weight", N ".{j}.1.weight", kb, 0, ub, cond, SM_F_QUANT, 2, dout,    \
	            SM_D_ZAR)

static const sm_rule zamba2_rules[] = {
    SM_RULE("model.embed_tokens.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0, SM_U_NONE,
            SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    Z2_REPL("model.final_layernorm.weight", SM_C_ALL, SM_D_HID),
    /* the Mamba layers */
    Z2_REPL(SM_LAYER "input_layernorm.weight", SM_C_LINATT, SM_D_HID),
    SM_RULES_MIXER2_C(SM_LAYER "mamba.", SM_C_LINATT, SM_C_MCONVB, SM_C_MPROJB, SM_C_LINATT),
    /* the hybrid layers: their mixer, the shared block's output projection */
    Z2_REPL(Z2_DEC "input_layernorm.weight", SM_C_Z2HYB, SM_D_HID),
    SM_RULES_MIXER2_C(Z2_DEC "mamba.", SM_C_Z2HYB, SM_C_Z2HYB, SM_C_Z2HYBB, SM_C_Z2HYB),
    SM_RULE(SM_LAYER "linear.weight", SM_LAYER "linear.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_Z2HYB,
            SM_F_QUANT, 2, SM_D_HID, SM_D_HID),
    /* the shared blocks, under the first hybrid layer running each */
    Z2_REPL(Z2_ST "input_layernorm.weight", SM_C_Z2BLK, SM_D_Q),
    Z2_REPL(Z2_ST "pre_ff_layernorm.weight", SM_C_Z2BLK, SM_D_HID),
    Z2_QKV("q", 0),
    Z2_QKV("k", 1),
    Z2_QKV("v", 2),
    SM_RULE(Z2_AT "o_proj.weight", Z2_AT "o_proj.weight", SM_K_COLS, 0, SM_U_HEADS, SM_C_Z2BLK,
            SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    Z2_ADAPTER(Z2_AT "linear_q_adapter_list", SM_C_Z2ATTAD, SM_D_Q, SM_K_ROWS, SM_U_HEADS, SM_D_Q),
    Z2_ADAPTER(Z2_AT "linear_k_adapter_list", SM_C_Z2ATTAD, SM_D_Q, SM_K_ROWS, SM_U_HEADS, SM_D_Q),
    Z2_ADAPTER(Z2_AT "linear_v_adapter_list", SM_C_Z2ATTAD, SM_D_Q, SM_K_ROWS, SM_U_HEADS, SM_D_Q),
    SM_RULE(Z2_FF "gate_up_proj.weight", Z2_FF "gate_up_proj.weight", SM_K_ROWS2, 0, SM_U_I,
            SM_C_Z2BLK, SM_F_QUANT, 2, SM_D_I2, SM_D_HID),
    SM_RULE(Z2_FF "gate_up_proj.bias", Z2_FF "gate_up_proj.bias", SM_K_ROWS2, 0, SM_U_I,
            SM_C_Z2BLKB, 0, 1, SM_D_I2, SM_D_ANY),
    SM_RULE(Z2_FF "down_proj.weight", Z2_FF "down_proj.weight", SM_K_COLS, 0, SM_U_I, SM_C_Z2BLK,
            SM_F_QUANT, 2, SM_D_HID, SM_D_I),
    Z2_REPL(Z2_FF "down_proj.bias", SM_C_Z2BLKB, SM_D_HID),
    Z2_ADAPTER(Z2_FF "gate_up_proj_adapter_list", SM_C_Z2BLK, SM_D_HID, SM_K_ROWS2, SM_U_I,
               SM_D_I2),
};

/* The most layers a Zamba2 config may give (Zamba2-7B has 81): the planner's adapter checks
 * cost layers^2 tests of O(layers) each. */
#define Z2_MAX_LAYERS 512

/* Layer i's type code, or CKPT_LAYER_OTHER past the list. */
static int z2_type(const ckpt_config *c, int64_t i)
{
	if (!c->has_layer_types || i < 0 || (uint64_t)i >= c->n_layer_types)
		return CKPT_LAYER_OTHER;
	return c->layer_types[i];
}

/* Layer i is a "mamba" layer (its mixer under mamba.). */
static bool z2_mamba(const ckpt_config *c, int64_t i)
{
	return z2_type(c, i) == CKPT_LAYER_MAMBA;
}

/* The order of hybrid layer i among the hybrid layers (its application j), -1 if i is not
 * one. */
static int64_t z2_order(const ckpt_config *c, int64_t i)
{
	if (z2_type(c, i) != CKPT_LAYER_HYBRID)
		return -1;
	int64_t j = 0;
	for (int64_t k = 0; k < i; k++)
		j += z2_type(c, k) == CKPT_LAYER_HYBRID;
	return j;
}

/* Layer i holds a shared block: the first hybrid layer running it (order < num_mem_blocks). */
static bool z2_home(const ckpt_config *c, int64_t i)
{
	int64_t j = z2_order(c, i);
	return j >= 0 && j < c->z2_mem_blocks;
}

bool shardmap_zamba2_cond(const ckpt_config *c, uint8_t cond, int64_t i)
{
	switch (cond) {
	case SM_C_Z2HYB:
		return z2_order(c, i) >= 0;
	case SM_C_Z2HYBB:
		return z2_order(c, i) >= 0 && c->mamba_proj_bias;
	case SM_C_Z2BLK:
		return z2_home(c, i);
	case SM_C_Z2BLKB:
		return z2_home(c, i) && c->mamba_proj_bias;
	default: /* SM_C_Z2ATTAD */
		return z2_home(c, i) && c->z2_attn_adapter;
	}
}

const char *shardmap_zamba2_why(const ckpt_config *c, uint8_t cond, int64_t i)
{
	bool z2 = c->z2_mem_blocks > 0;
	bool hyb = z2_order(c, i) >= 0;
	if (z2 && (cond == SM_C_LINATT || cond == SM_C_MCONVB || cond == SM_C_MPROJB))
		return !z2_mamba(c, i)
		           ? "a hybrid layer, whose mixer is under mamba_decoder.mamba. "
		             "(see layers_block_type)"
		           : "without in_proj / out_proj biases (add_bias_linear is "
		             "false or absent)";
	if (cond < SM_C_Z2HYB || cond > SM_C_Z2ATTAD)
		return NULL;
	if (!hyb)
		return "a Mamba layer, without the shared block, its linear or mamba_decoder. (see "
		       "layers_block_type)";
	if ((cond == SM_C_Z2BLK || cond == SM_C_Z2BLKB || cond == SM_C_Z2ATTAD) && !z2_home(c, i))
		return "a hybrid layer running a shared block an earlier hybrid layer holds (each "
		       "of "
		       "num_mem_blocks blocks is saved once, under the first hybrid layer running "
		       "it)";
	return cond == SM_C_Z2ATTAD
	           ? "without attention adapters (use_shared_attention_adapter is "
	             "false or absent)"
	           : "without the in_proj / out_proj / MLP biases (add_bias_linear "
	             "is false or absent)";
}

/* Adapter j belongs to the block layer i holds: j is the order of a hybrid layer running it
 * (j % num_mem_blocks is the block's). */
static bool z2_adapter(const ckpt_config *c, int64_t i, int64_t j)
{
	int64_t o = z2_order(c, i); /* the cheap tests first: the count below is O(layers) */
	if (o < 0 || o >= c->z2_mem_blocks || j % c->z2_mem_blocks != o)
		return false;
	int64_t n = 0;
	for (int64_t k = 0; k < c->num_hidden_layers; k++)
		n += z2_type(c, k) == CKPT_LAYER_HYBRID;
	return j < n;
}

/* Every layer runs a Mamba2 mixer. */
static bool z2_all(const ckpt_config *c, int64_t i)
{
	(void)c;
	(void)i;
	return true;
}

/* layer_types (the loader's copy of layers_block_type) one per layer, num_mem_blocks and
 * adapter_rank read, then the mixer's rules. */
static int z2_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_layer_types || c->n_layer_types != (uint64_t)c->num_hidden_layers)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Zamba2 needs layers_block_type, one \"mamba\" / "
		                 "\"hybrid\" per layer (num_hidden_layers %" PRId64 ")",
		                 c->num_hidden_layers);
	if (c->num_hidden_layers > Z2_MAX_LAYERS)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: Zamba2's num_hidden_layers %" PRId64
		    " is past %d: no Zamba2 has more than 81 layers, and the shared "
		    "blocks' adapters are matched per pair of layers; give the model's "
		    "layers",
		    c->num_hidden_layers, Z2_MAX_LAYERS);
	if (c->z2_mem_blocks < 1 || c->z2_adapter_rank < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Zamba2 needs num_mem_blocks and adapter_rank >= 1 "
		                 "(model_type zamba2 reads them)");
	return shardmap_mamba2_mixers_check(c, "Zamba2", z2_all, err);
}

static const char *const zamba2_archs[] = {"Zamba2ForCausalLM", NULL};

/* Always tied (the loader refuses tie_word_embeddings false); PretrainedConfig's true */
const sm_family shardmap_family_zamba2 = {
    .name = "zamba2",
    .archs = zamba2_archs,
    .rules = zamba2_rules,
    .n_rules = SM_NRULES(zamba2_rules),
    .layer_prefix = "model.layers.",
    .check = z2_check,
    .layer_is_linear = z2_mamba,
    .linear_keys = "layers_block_type",
    .mamba = true,
    .tie_default = true,
    .j_holds = z2_adapter,
};
