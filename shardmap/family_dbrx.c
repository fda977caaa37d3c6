/*
 * family_dbrx.c — DBRX (DbrxForCausalLM, transformers 4.57.1 modeling_dbrx.py:
 * databricks/dbrx-base, dbrx-instruct), cut as vLLM's dbrx.py loads it.
 *
 * Names stay the checkpoint's (transformer.*, lm_head), the experts' stacks named
 * ffn.experts.w13_weight / w2_weight as vLLM's FusedMoE names them. norm_attn_norm.attn.Wqkv
 * [(H + 2*KV)*d, hid] holds [q; k; v] rows: QKVParallelLinear cuts it by heads with GQA
 * replication when KV < T (SM_K_QKVC); out_proj by columns; norm_1 / norm_2 / norm_f
 * (LayerNorms without bias) and ffn.router.layer replicated; wte / lm_head by vocabulary rows.
 * ffn.experts.mlp.w1 (gate) / v1 (up) / w2 are stored 2-D [E*Ie, hid] (SM_F_STACK2: viewed
 * [E, Ie, hid]); vLLM's DbrxExperts.weight_loader reshapes each to [E, Ie, hid] and writes
 * w13_weight[:, 0:Il] = w1[:, r*Il:(r+1)*Il], w13_weight[:, Il:2*Il] = v1's alike
 * (SM_K_EXPGU), and w2_weight = w2.transpose(1, 2)[:, :, r*Il:(r+1)*Il] ([E, hid, Il]:
 * SM_F_TRANS, SM_K_EXP2S); under EP a rank holds its experts whole.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define DB_LAYER   "transformer.blocks.{i}."
#define DB_NAN     DB_LAYER "norm_attn_norm."
#define DB_EXP     DB_LAYER "ffn.experts."
#define DB_REPL(x) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)

static const sm_rule dbrx_rules[] = {
    SM_RULE("transformer.wte.weight", "transformer.wte.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,
            0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    DB_REPL("transformer.norm_f.weight"),
    DB_REPL(DB_NAN "norm_1.weight"),
    DB_REPL(DB_NAN "norm_2.weight"),
    SM_RULE(DB_NAN "attn.Wqkv.weight", DB_NAN "attn.Wqkv.weight", SM_K_QKVC, 0, SM_U_HEADS,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),
    SM_RULE(DB_NAN "attn.out_proj.weight", DB_NAN "attn.out_proj.weight", SM_K_COLS, 0, SM_U_HEADS,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULE(DB_LAYER "ffn.router.layer.weight", DB_LAYER "ffn.router.layer.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_MOE, 0, 2, SM_D_E, SM_D_HID),
    SM_RULE3(DB_EXP "mlp.w1", DB_EXP "w13_weight", SM_K_EXPGU, 0, SM_U_IE, SM_C_MOE,
             SM_F_QUANT | SM_F_STACK2, SM_D_E, SM_D_IE, SM_D_HID),
    SM_RULE3(DB_EXP "mlp.v1", DB_EXP "w13_weight", SM_K_EXPGU, 1, SM_U_IE, SM_C_MOE,
             SM_F_QUANT | SM_F_STACK2, SM_D_E, SM_D_IE, SM_D_HID),
    SM_RULE3(DB_EXP "mlp.w2", DB_EXP "w2_weight", SM_K_EXP2S, 0, SM_U_IE, SM_C_MOE,
             SM_F_QUANT | SM_F_STACK2 | SM_F_TRANS, SM_D_E, SM_D_HID, SM_D_IE),
};

static bool dbrx_moe(const ckpt_config *cfg, int64_t i)
{
	(void)i;
	return cfg->num_experts > 0;
}

/* DbrxAttention's head_dim is d_model / n_heads (no head_dim key); every block is MoE; the
 * experts' 2-D stacks are read from BF16 / F16 / F32 checkpoints only (no quantized DBRX
 * release exists to check a scale layout against). */
static int dbrx_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq = shardmap_check_head_quotient(c, "d_model", "n_heads", "head_dim", err);
	if (hq != WT_OK)
		return hq;
	if (c->num_experts <= 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: DbrxForCausalLM needs ffn_config.moe_num_experts > 0 "
		    "(every block is MoE); write the model's expert count into it");
	if (c->quant != CKPT_QUANT_NONE)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: a quantized DbrxForCausalLM checkpoint is not read (its "
		    "experts are 2-D stacks [E*ffn_hidden_size, d_model]); shard the "
		    "BF16 checkpoint and quantize with the layout instead");
	return WT_OK;
}

static const char *const dbrx_archs[] = {"DbrxForCausalLM", NULL};

/* DbrxConfig unties (tie_word_embeddings true is refused by the loader) */
const sm_family shardmap_family_dbrx = {
    .name = "dbrx",
    .archs = dbrx_archs,
    .rules = dbrx_rules,
    .n_rules = SM_NRULES(dbrx_rules),
    .layer_is_moe = dbrx_moe,
    .layer_prefix = "transformer.blocks.",
    .check = dbrx_check,
    .moe_keys = "ffn_config.moe_num_experts",
};
