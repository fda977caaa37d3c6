/*
 * family_plamo2.c — PLaMo 2 (Plamo2ForCausalLM, model_type plamo2: pfnet/plamo-2-1b,
 * plamo-2-8b, plamo-2-translate; remote code), cut as vLLM's plamo2.py loads it.
 *
 * The layers are model.layers.layers.{i}. (Plamo2Model.layers is a Plamo2Decoder whose
 * make_layers prefix is its own ".layers"). Layer i is a Mamba layer when is_mamba(config, i)
 * (the loader's layer_types, from mamba_step), else attention; every layer has the four
 * sandwich norms (pre_mixer_norm, post_mixer_norm, pre_mlp_norm, post_mlp_norm [hid],
 * replicated as stored: vLLM's load_weights adds +1 / +1/5 / +1 / +1/5^1.5, the engine's to
 * add) and mlp.gate_up_proj [2I, hid] ([gate; up]: [gate_r; up_r]) / mlp.down_proj by columns.
 * Names are the checkpoint's (vLLM's A_log -> A, *_norm_weight -> *_norm.weight, q_weight /
 * k_weight -> q_norm / k_norm renames are the engine's).
 * - Mamba (Plamo2MambaMixer, Hm = mamba_num_heads heads of d = hidden_size_per_head, width
 *   Im = Hm d, R = max(64, hid / 16), N = mamba_d_state): mixer.in_proj [2 Im, hid] stored
 *   per head as [gate_h; x_h] and loaded de-interleaved, so rank r holds [gate_r; x_r] of its
 *   heads (SM_K_ROWS2H; MergedColumnParallelLinear); mixer.conv1d [Im, 1, K] by rows
 *   (ColumnParallelLinear); mixer.bcdt_proj [R + 2N, Im] by columns (RowParallelLinear);
 *   mixer.dt_proj [Hm, R] by rows (ColumnParallelLinear); A_log, D, dt_bias [Hm] by heads
 *   (sharded_weight_loader(0)); dt_norm_weight [R], B_norm_weight / C_norm_weight [N]
 *   whole; mixer.out_proj [hid, Im] by columns.
 * - Attention (Plamo2AttentionMixer): mixer.qkv_proj [(H + 2KV) d, hid] fused in the
 *   checkpoint ([q_r; k_r; v_r], SM_K_QKVC), mixer.o_proj by columns; mixer.q_weight [H, d]
 *   by heads and mixer.k_weight [KV, d] by kv heads (sharded_weight_loader(0); whole for one
 *   kv head). vLLM narrows k_weight's rows by rank, out of range when 1 < KV < tp_size: such
 *   layouts are refused (kv_one_or_split).
 * Quantized: in_proj, bcdt_proj, dt_proj, out_proj, qkv_proj, o_proj, gate_up_proj,
 * down_proj (vLLM hands each the quant_config; conv1d's ColumnParallelLinear gets none);
 * never the norms, conv1d, A_log, D, dt_bias, embedding, lm_head. Tied by default.
 */
#include <inttypes.h>

#include "shardmap/families.h"
#include "shardmap/family_rules.h"

#define P2_L             "model.layers.layers.{i}."
#define P2_MIX           P2_L "mixer."
#define P2_REPL(x, c, d) SM_RULE(P2_L x, P2_L x, SM_K_REPL, 0, SM_U_NONE, c, 0, 1, d, SM_D_ANY)
#define P2_M(x, kind, flags, d0, d1)                                                               \
	SM_RULE(P2_MIX x, P2_MIX x, kind, 0, SM_U_MH, SM_C_LINATT, flags, 2, d0, d1)
#define P2_A(x, kind, flags, d0, d1)                                                               \
	SM_RULE(P2_MIX x, P2_MIX x, kind, 0, SM_U_HEADS, SM_C_FULLATT, flags, 2, d0, d1)

static const sm_rule plamo2_rules[] = {
    SM_RULES_TOP,
    P2_REPL("pre_mixer_norm.weight", SM_C_ALL, SM_D_HID),
    P2_REPL("post_mixer_norm.weight", SM_C_ALL, SM_D_HID),
    P2_REPL("pre_mlp_norm.weight", SM_C_ALL, SM_D_HID),
    P2_REPL("post_mlp_norm.weight", SM_C_ALL, SM_D_HID),
    SM_RULE(P2_L "mlp.gate_up_proj.weight", P2_L "mlp.gate_up_proj.weight", SM_K_ROWS2, 0, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_I2, SM_D_HID),
    SM_RULE(P2_L "mlp.down_proj.weight", P2_L "mlp.down_proj.weight", SM_K_COLS, 0, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),
    /* Mamba layers */
    P2_M("in_proj.weight", SM_K_ROWS2H, SM_F_QUANT, SM_D_MI2, SM_D_HID),
    SM_RULE3(P2_MIX "conv1d.weight", P2_MIX "conv1d.weight", SM_K_ROWS, 0, SM_U_MH, SM_C_LINATT, 0,
             SM_D_MI, SM_D_ONE, SM_D_MKER),
    P2_M("bcdt_proj.weight", SM_K_COLS, SM_F_QUANT, SM_D_MXP, SM_D_MI),
    P2_M("dt_proj.weight", SM_K_ROWS, SM_F_QUANT, SM_D_MH, SM_D_MR),
    SM_MROWS(P2_MIX, "A_log", SM_D_MH, SM_C_LINATT),
    SM_MROWS(P2_MIX, "D", SM_D_MH, SM_C_LINATT),
    SM_MROWS(P2_MIX, "dt_bias", SM_D_MH, SM_C_LINATT),
    P2_REPL("mixer.dt_norm_weight", SM_C_LINATT, SM_D_MR),
    P2_REPL("mixer.B_norm_weight", SM_C_LINATT, SM_D_MN),
    P2_REPL("mixer.C_norm_weight", SM_C_LINATT, SM_D_MN),
    P2_M("out_proj.weight", SM_K_COLS, SM_F_QUANT, SM_D_HID, SM_D_MI),
    /* attention layers */
    P2_A("qkv_proj.weight", SM_K_QKVC, SM_F_QUANT, SM_D_QKV, SM_D_HID),
    P2_A("q_weight", SM_K_ROWS, 0, SM_D_H, SM_D_HD),
    P2_A("k_weight", SM_K_KVH, 0, SM_D_KVH, SM_D_HD),
    P2_A("o_proj.weight", SM_K_COLS, SM_F_QUANT, SM_D_HID, SM_D_Q),
};

/* Layer i's kind: the loader's layer_types from is_mamba (mamba_step). */
static bool plamo2_mamba(const ckpt_config *c, int64_t i)
{
	return c->has_layer_types && i >= 0 && (uint64_t)i < c->n_layer_types &&
	       c->layer_types[i] == CKPT_LAYER_MAMBA;
}

/* The loader laid out one layer kind a layer; the mixer is mamba_num_heads x
 * hidden_size_per_head wide. */
static int plamo2_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_layer_types || (int64_t)c->n_layer_types != c->num_hidden_layers)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: PLaMo 2's layer kinds (%zu) do not match "
		                 "num_hidden_layers %" PRId64,
		                 c->n_layer_types, c->num_hidden_layers);
	if (c->mamba_n_heads < 1 || c->mamba_d_ssm != c->mamba_n_heads * c->head_dim)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: PLaMo 2's mixer width %" PRId64
		                 " is not mamba_num_heads %" PRId64
		                 " x hidden_size_per_head %" PRId64,
		                 c->mamba_d_ssm, c->mamba_n_heads, c->head_dim);
	return WT_OK;
}

static const char *const plamo2_archs[] = {"Plamo2ForCausalLM", NULL};

/* Plamo2Config ties by default (tie_word_embeddings=True) */
const sm_family shardmap_family_plamo2 = {
    .name = "plamo2",
    .archs = plamo2_archs,
    .rules = plamo2_rules,
    .n_rules = SM_NRULES(plamo2_rules),
    .layer_prefix = "model.layers.layers.",
    .check = plamo2_check,
    .tie_default = true,
    .layer_is_linear = plamo2_mamba,
    .linear_keys = "mamba_step, num_hidden_layers",
    .mamba = true,
    .kv_one_or_split = true,
};
