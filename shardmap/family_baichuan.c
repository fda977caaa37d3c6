/*
 * family_baichuan.c — Baichuan / Baichuan2 (remote code: BaiChuanForCausalLM, baichuan-inc/
 * Baichuan-7B; BaichuanForCausalLM, Baichuan-13B, Baichuan2-7B / 13B), cut as vLLM's
 * baichuan.py loads them.
 *
 * Llama's decoder under Llama's names but for the attention's one self_attn.W_pack
 * [3*hid, hid] ([q; k; v] rows, multi-head: as many kv heads as q heads). vLLM's W_pack is a
 * QKVParallelLinear loaded whole (no shard id: its weight_loader splits the checkpoint's rows
 * into q, k and v and takes each rank's heads of each), so a rank holds [q_r; k_r; v_r] under
 * the runtime name W_pack (SM_K_QKVF); o_proj by columns; mlp.gate_proj / up_proj merged by
 * rows into mlp.gate_up_proj ([gate_r; up_r]: vLLM's stacked_params_mapping), down_proj by
 * columns; input_layernorm / post_attention_layernorm / model.norm replicated; embed_tokens and
 * lm_head (ParallelLMHead) by padded vocabulary rows, lm_head not emitted when
 * tie_word_embeddings (the remote configs untie by default). Every Linear quantized, the
 * embedding, lm_head and norms not. No biases (vLLM builds every Linear with bias=False), so a
 * bias tensor is unknown. Baichuan2's lm_head (vocab_size 125696) is served as the checkpoint
 * holds it: vLLM's lm_head_weight_loader normalizes each row at load (NormHead), which is
 * row-local and idempotent, so a rank's rows normalize to the same (docs/format.md).
 * The position embedding (RoPE; ALiBi for BaichuanForCausalLM unless hidden_size is 4096) has
 * no tensor.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

static const sm_rule baichuan_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULE(SM_LAYER "self_attn.W_pack.weight", SM_LAYER "self_attn.W_pack.weight", SM_K_QKVF, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),
    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULES_MLP_NOBIAS,
};

/* vLLM's BaiChuanAttention: head size hidden_size / num_attention_heads, W_pack built with as
 * many kv heads as q heads (the remote configs have neither head_dim nor num_key_value_heads). */
static int baichuan_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq =
	    shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads", "head_dim", err);
	if (hq != WT_OK)
		return hq;
	if (c->num_key_value_heads != c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_key_value_heads %" PRId64
		                 " is not num_attention_heads %" PRId64
		                 "; Baichuan's W_pack is multi-head (vLLM builds as many kv heads "
		                 "as q heads): remove the key",
		                 c->num_key_value_heads, c->num_attention_heads);
	return WT_OK;
}

static const char *const baichuan_archs[] = {"BaichuanForCausalLM", "BaiChuanForCausalLM", NULL};

const sm_family shardmap_family_baichuan = {
    .name = "baichuan",
    .archs = baichuan_archs,
    .rules = baichuan_rules,
    .n_rules = SM_NRULES(baichuan_rules),
    .layer_prefix = "model.layers.",
    .check = baichuan_check,
};
