/*
 * family_arctic.c — Snowflake Arctic (ArcticForCausalLM, remote code:
 * Snowflake/snowflake-arctic-base / -instruct), cut as vLLM's arctic.py loads it.
 *
 * Attention is Llama's without biases (ArcticAttention: q/k/v fused by heads into qkv_proj,
 * kv heads replicated when KV < T; o_proj by columns), every Linear quantized; embed_tokens /
 * lm_head by padded vocabulary rows (never tied); norms replicated. Layer i is MoE when
 * (i + 1) % moe_layer_frequency == 0 (the loader keeps it to 1 or 2, what load_weights loads).
 *
 * A dense layer's MLP is ArcticMLP under block_sparse_moe.mlp: w1 / w3 merged by rows into
 * block_sparse_moe.mlp.w13.weight ([w1_r; w3_r], MergedColumnParallelLinear), w2 by columns
 * (RowParallelLinear), both quantized (built with quant_config).
 *
 * A MoE layer's ArcticMoE is not FusedMoE: its router block_sparse_moe.gate [E, hid] is a
 * ReplicatedLinear built WITH quant_config (whole on every rank, quantized as a Linear); its
 * block_sparse_moe.ws [E, 2*I/T, hid] and w2s [E, hid, I/T] are plain nn.Parameters in
 * params_dtype whose weight_loader narrows each checkpoint expert experts.{j}.w1 / w3 (rows)
 * and w2 (columns) to rank r's I/T, I = intermediate_size: every rank holds ALL experts, each
 * cut by TP, never quantized (deepspeedfp, the one method that would, is refused), no expert
 * parallelism (tp_experts, as MiniCPM-MoE).
 *
 * With use_residual, a MoE layer also has residual_layernorm (replicated) and the residual
 * ArcticMLP, hidden_size wide and built WITHOUT quant_config: residual_mlp.w1 / w3 merged by
 * rows into residual_mlp.w13.weight, w2 by columns into residual_mlp.w2.weight, unquantized.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"
#include "shardmap/families.h"
#include "shardmap/shardmap_int.h"

/* An ArcticMLP's three Linears under module path M, ffn width D cut in units U, under
 * condition C, flags F (SM_F_QUANT or 0). */
#define ARCTIC_MLP(M, D, U, C, F)                                                                  \
	SM_RULE(SM_LAYER M "w1.weight", SM_LAYER M "w13.weight", SM_K_ROWS, 0, U, C, F, 2, D,      \
	        SM_D_HID),                                                                         \
	    SM_RULE(SM_LAYER M "w3.weight", SM_LAYER M "w13.weight", SM_K_ROWS, 1, U, C, F, 2, D,  \
	            SM_D_HID),                                                                     \
	    SM_RULE(SM_LAYER M "w2.weight", SM_LAYER M "w2.weight", SM_K_COLS, 0, U, C, F, 2,      \
	            SM_D_HID, D)

static const sm_rule arctic_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_QKV_W("q", 0, SM_D_Q),
    SM_QKV_W("k", 1, SM_D_KV),
    SM_QKV_W("v", 2, SM_D_KV),
    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    ARCTIC_MLP("block_sparse_moe.mlp.", SM_D_I, SM_U_I, SM_C_DENSE, SM_F_QUANT),
    SM_RULE(SM_LAYER "block_sparse_moe.gate.weight", SM_LAYER "block_sparse_moe.gate.weight",
            SM_K_REPL, 0, SM_U_NONE, SM_C_MOE, SM_F_QUANT, 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS_AS("block_sparse_moe.experts.", "w1", "w3", "w2", "block_sparse_moe.ws",
                        "block_sparse_moe.w2s", 0),
    SM_RULE(SM_LAYER "residual_layernorm.weight", SM_LAYER "residual_layernorm.weight", SM_K_REPL,
            0, SM_U_NONE, SM_C_ARES, 0, 1, SM_D_HID, SM_D_ANY),
    ARCTIC_MLP("residual_mlp.", SM_D_HID, SM_U_HID, SM_C_ARES, 0),
};

/* ArcticMoE's layers: (i + 1) % moe_layer_frequency == 0 (every layer has experts then). */
static bool arctic_moe_at(const ckpt_config *cfg, int64_t i)
{
	int64_t f = cfg->arctic_moe_freq > 0 ? cfg->arctic_moe_freq : 2;
	return cfg->num_experts > 0 && (i + 1) % f == 0;
}

/* ArcticAttention's head_dim is hidden_size / num_attention_heads (it never reads the key);
 * with moe_layer_frequency 1 load_weights collects the expert names from the odd layers, so
 * a one-layer model would not load its experts. */
static int arctic_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv =
	    shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads", "head_dim", err);
	if (rv == WT_OK && c->arctic_moe_freq == 1 && c->num_hidden_layers < 2)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: moe_layer_frequency 1 with num_hidden_layers %" PRId64
		    "; vLLM's arctic.py maps expert names from odd layers only, so a "
		    "one-layer Arctic would not load its experts",
		    c->num_hidden_layers);
	return rv;
}

static const char *const arctic_archs[] = {"ArcticForCausalLM", NULL};

/* ArcticConfig unties by default (tie_word_embeddings=False; true refused by the loader) */
const sm_family shardmap_family_arctic = {
    .name = "arctic",
    .archs = arctic_archs,
    .rules = arctic_rules,
    .n_rules = SM_NRULES(arctic_rules),
    .layer_is_moe = arctic_moe_at,
    .layer_prefix = "model.layers.",
    .check = arctic_check,
    .moe_keys = "num_local_experts, moe_layer_frequency",
    .tp_experts = true,
};
