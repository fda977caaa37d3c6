/*
 * test_shardmap_minimax.h — the MiniMax planner tests' model and hand slices, shared by
 * test_shardmap_minimax.c (MiniMaxForCausalLM) and test_shardmap_minimax_text01.c
 * (MiniMaxText01ForCausalLM / MiniMaxM1ForCausalLM, the same cut): a two-layer model (one
 * lightning-attention layer, one softmax-attention layer, Mixtral's MoE in both), the
 * lightning attention's slices of one rank, the stacked experts, what every rank holds whole.
 * Include after test_shardmap_util.h, test_shardmap_fx.h and test_shardmap_experts.h.
 */
#ifndef TEST_SHARDMAP_MINIMAX_H
#define TEST_SHARDMAP_MINIMAX_H

/* hid 128, H 8, KV 2, head_dim 16, 4 experts of I 64, V 1000, 2 layers */
#define HID 128
#define HD  16
#define QD  (8 * HD)
#define NE  4
#define IE  64
#define L0  "model.layers.0."
#define L1  "model.layers.1."
#define A0  L0 "self_attn."
#define A1  L1 "self_attn."
#define M0  L0 "block_sparse_moe."
#define W13 M0 "experts.w13_weight"
#define W2  M0 "experts.w2_weight"

/* Layer lin a lightning-attention layer, the other softmax attention; both with the norms
 * and the MoE. */
static __attribute__((unused)) tm_model *tm_minimax_at(int lin)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "model.embed_tokens.weight", 1000, HID);
	tm_add2(m, "lm_head.weight", 1000, HID);
	tm_add2(m, "model.norm.weight", HID, 0);
	for (int i = 0; i < 2; i++) {
		char b[120];
		tm_lin_l(m, i, "input_layernorm.weight", HID, 0, 0);
		tm_lin_l(m, i, "post_attention_layernorm.weight", HID, 0, 0);
		tm_lin_l(m, i, "block_sparse_moe.gate.weight", NE, HID, 0);
		for (int j = 0; j < NE; j++) {
			snprintf(b, sizeof(b), "block_sparse_moe.experts.%d.w1.weight", j);
			tm_lin_l(m, i, b, IE, HID, 0);
			snprintf(b, sizeof(b), "block_sparse_moe.experts.%d.w3.weight", j);
			tm_lin_l(m, i, b, IE, HID, 0);
			snprintf(b, sizeof(b), "block_sparse_moe.experts.%d.w2.weight", j);
			tm_lin_l(m, i, b, HID, IE, 0);
		}
		if (i == lin) {
			tm_lin_l(m, i, "self_attn.qkv_proj.weight", 3 * QD, HID, 0);
			tm_lin_l(m, i, "self_attn.output_gate.weight", QD, HID, 0);
			tm_lin_l(m, i, "self_attn.norm.weight", QD, 0, 0);
			tm_lin_l(m, i, "self_attn.out_proj.weight", HID, QD, 0);
		} else {
			tm_lin_l(m, i, "self_attn.q_proj.weight", QD, HID, 0);
			tm_lin_l(m, i, "self_attn.k_proj.weight", 2 * HD, HID, 0);
			tm_lin_l(m, i, "self_attn.v_proj.weight", 2 * HD, HID, 0);
			tm_lin_l(m, i, "self_attn.o_proj.weight", HID, QD, 0);
		}
	}
	return m;
}

static __attribute__((unused)) tm_model *tm_minimax(void)
{
	return tm_minimax_at(0);
}

/* Rank r (TP rank tr of T) of the lightning attention (layer 0): whole heads [q_h; k_h; v_h]
 * of qkv_proj, the same heads' output_gate rows and norm channels, out_proj's columns. */
static __attribute__((unused)) void lin_rank_tp(const fx *f, uint32_t r, uint32_t tr, uint32_t T)
{
	int64_t n = QD / T;
	shp(f, r, A0 "qkv_proj.weight", 2, 3 * n, HID, 0);
	rows_at(f, r, A0 "qkv_proj.weight", 0, A0 "qkv_proj.weight", 3 * n * tr, 3 * n);
	shp(f, r, A0 "output_gate.weight", 2, n, HID, 0);
	rows_at(f, r, A0 "output_gate.weight", 0, A0 "output_gate.weight", n * tr, n);
	shp(f, r, A0 "norm.weight", 1, n, 0, 0);
	rows_at(f, r, A0 "norm.weight", 0, A0 "norm.weight", n * tr, n);
	cols_at(f, r, A0 "out_proj.weight", 0, A0 "out_proj.weight", HID, QD, n * tr, n);
	assert_true(tm_ix(f->p, r, A0 "o_proj.weight") < 0);
}

static __attribute__((unused)) void lin_rank(const fx *f, uint32_t r, uint32_t T)
{
	lin_rank_tp(f, r, r, T);
}

/* The stacked experts against their leaves (test_shardmap_experts.h). */
static __attribute__((unused))
const fx_experts XP = {W13, W2, M0 "experts.%lld.%s.weight", "w1", "w3", "w2", HID, IE};

/* What every rank holds whole: the norms and the routers. */
static __attribute__((unused)) void whole(const fx *f, uint32_t r)
{
	repl(f, r, "model.norm.weight");
	repl(f, r, L0 "input_layernorm.weight");
	repl(f, r, L1 "post_attention_layernorm.weight");
	repl(f, r, M0 "gate.weight");
	repl(f, r, L1 "block_sparse_moe.gate.weight");
}

#endif
