/*
 * family_mpt.c — MPT (MptForCausalLM, model_type mpt, transformers 4.57.1 modeling_mpt.py:
 * mosaicml/mpt-7b, mpt-30b), cut as vLLM's mpt.py loads it.
 *
 * Names stay the checkpoint's (transformer.*). transformer.blocks.{i}.attn.Wqkv
 * [(H + 2*KV)*d, hid] holds [q; k; v] rows: QKVParallelLinear cuts it by heads with GQA
 * replication when KV < T (SM_K_QKVC; KV is attn_config.kv_n_heads where present, else
 * n_heads); attn.out_proj by columns; ffn.up_proj by rows and ffn.down_proj by columns
 * (expansion_ratio * d_model); norm_1 / norm_2 / norm_f (LayerNorms without bias: no_bias)
 * replicated; transformer.wte by vocabulary rows and tied (lm_head is wte). No position
 * tensor: ALiBi's slopes are computed (each rank its heads' slice).
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define MPT_LAYER   "transformer.blocks.{i}."
#define MPT_REPL(x) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)

static const sm_rule mpt_rules[] = {
    SM_RULE("transformer.wte.weight", "transformer.wte.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,
            0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    MPT_REPL("transformer.norm_f.weight"),
    MPT_REPL(MPT_LAYER "norm_1.weight"),
    MPT_REPL(MPT_LAYER "norm_2.weight"),
    SM_RULE(MPT_LAYER "attn.Wqkv.weight", MPT_LAYER "attn.Wqkv.weight", SM_K_QKVC, 0, SM_U_HEADS,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),
    SM_RULE(MPT_LAYER "attn.out_proj.weight", MPT_LAYER "attn.out_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULE(MPT_LAYER "ffn.up_proj.weight", MPT_LAYER "ffn.up_proj.weight", SM_K_ROWS, 0, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(MPT_LAYER "ffn.down_proj.weight", MPT_LAYER "ffn.down_proj.weight", SM_K_COLS, 0,
            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),
};

/* MPTAttention's head_dim is d_model / n_heads (no head_dim key). */
static int mpt_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq = shardmap_check_head_quotient(c, "d_model", "n_heads", "head_dim", err);
	if (hq != WT_OK)
		return hq;
	return WT_OK;
}

static const char *const mpt_archs[] = {"MptForCausalLM", "MPTForCausalLM", NULL};

/* MptConfig ties (PretrainedConfig's default; false is refused by the loader) */
const sm_family shardmap_family_mpt = {
    .name = "mpt",
    .archs = mpt_archs,
    .rules = mpt_rules,
    .n_rules = SM_NRULES(mpt_rules),
    .layer_prefix = "transformer.blocks.",
    .check = mpt_check,
    .tie_default = true,
};
