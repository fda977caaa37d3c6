/*
 * test_shardmap_minimax_m2.c — MiniMax-M2 (MiniMaxM2ForCausalLM) cut as vLLM's minimax_m2.py
 * loads it: q/k/v fused into qkv_proj by heads (GQA), o_proj by columns; q_norm [H*d] by the
 * rank's heads, k_norm [KV*d] by the kv heads its k_proj slice holds (at T > KV the one it
 * shares, as vLLM's weight_shard_rank = r / (T / KV)); block_sparse_moe's gate and
 * e_score_correction_bias whole and never quantized, experts w1 / w3 / w2 stacked as w13 /
 * w2 (Ie split under TP, whole experts under EP); the MTP layers dropped. Hand-computed
 * slices at TP 2, TP 4, TP 8, EP 2 and TP 2 x EP 2, int8-channel and fp8-channel layouts,
 * coverage over TP 1..8 / EP, the config defaults and every refusal. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0032ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 128, H 8, KV 2, head_dim 16, 4 experts of I 64, V 1000, 2 layers */
#define HID 128
#define HD  16
#define QD  (8 * HD)
#define KVD (2 * HD)
#define NE  4
#define IE  64
#define M2_BASE(extra)                                                                             \
	"{\"architectures\":[\"MiniMaxM2ForCausalLM\"],\"model_type\":\"minimax_m2\","             \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":64,\"num_local_experts\":4,\"vocab_size\":1000,"                    \
	"\"num_hidden_layers\":2" extra "}"
#define SW_K          ",\"num_experts_per_tok\":2"
#define SW_R          ",\"rotary_dim\":8"
#define SW_S          ",\"scoring_func\":\"sigmoid\""
#define SW_B          ",\"use_routing_bias\":true"
#define M2_CFG(extra) M2_BASE(SW_K SW_R SW_S SW_B extra)
/* the release's keys, all given */
#define M2_OK                                                                                      \
	M2_CFG(",\"head_dim\":16,\"partial_rotary_factor\":0.5,\"use_qk_norm\":true,"              \
	       "\"qk_norm_type\":\"per_layer\",\"attn_type_list\":[1,1],"                          \
	       "\"shared_intermediate_size\":0,\"tie_word_embeddings\":false")
#define L0  "model.layers.0."
#define L1  "model.layers.1."
#define A0  L0 "self_attn."
#define A1  L1 "self_attn."
#define M0  L0 "block_sparse_moe."
#define W13 M0 "experts.w13_weight"
#define W2  M0 "experts.w2_weight"

static void m2_layer(tm_model *m, int i)
{
	char b[120];
	tm_lin_l(m, i, "input_layernorm.weight", HID, 0, 0);
	tm_lin_l(m, i, "post_attention_layernorm.weight", HID, 0, 0);
	tm_lin_l(m, i, "self_attn.q_proj.weight", QD, HID, 0);
	tm_lin_l(m, i, "self_attn.k_proj.weight", KVD, HID, 0);
	tm_lin_l(m, i, "self_attn.v_proj.weight", KVD, HID, 0);
	tm_lin_l(m, i, "self_attn.o_proj.weight", HID, QD, 0);
	tm_lin_l(m, i, "self_attn.q_norm.weight", QD, 0, 0);
	tm_lin_l(m, i, "self_attn.k_norm.weight", KVD, 0, 0);
	tm_lin_l(m, i, "block_sparse_moe.gate.weight", NE, HID, 0);
	snprintf(b, sizeof(b), "model.layers.%d.block_sparse_moe.e_score_correction_bias", i);
	tm_add(m, b, WT_F32, 1, NE, 0, 0);
	for (int j = 0; j < NE; j++) {
		snprintf(b, sizeof(b), "block_sparse_moe.experts.%d.w1.weight", j);
		tm_lin_l(m, i, b, IE, HID, 0);
		snprintf(b, sizeof(b), "block_sparse_moe.experts.%d.w3.weight", j);
		tm_lin_l(m, i, b, IE, HID, 0);
		snprintf(b, sizeof(b), "block_sparse_moe.experts.%d.w2.weight", j);
		tm_lin_l(m, i, b, HID, IE, 0);
	}
}

static tm_model *tm_m2(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "model.embed_tokens.weight", 1000, HID);
	tm_add2(m, "lm_head.weight", 1000, HID);
	tm_add2(m, "model.norm.weight", HID, 0);
	for (int i = 0; i < 2; i++)
		m2_layer(m, i);
	return m;
}

/* Rank r (TP rank tr of T): q heads tr*H/T.., kv head(s) of kv_shard, the norms alike. */
static void attn_rank(const fx *f, uint32_t r, uint32_t tr, uint32_t T)
{
	int64_t q = QD / T, kv = T <= 2 ? KVD / T : HD, ks = T <= 2 ? tr : tr / (T / 2);
	const char *qkv = A1 "qkv_proj.weight";
	shp(f, r, qkv, 2, q + 2 * kv, HID, 0);
	rows_at(f, r, qkv, 0, A1 "q_proj.weight", q * tr, q);
	rows_at(f, r, qkv, q, A1 "k_proj.weight", kv * ks, kv);
	rows_at(f, r, qkv, q + kv, A1 "v_proj.weight", kv * ks, kv);
	cols_at(f, r, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, QD, q * tr, q);
	shp(f, r, A0 "q_norm.weight", 1, q, 0, 0);
	rows_at(f, r, A0 "q_norm.weight", 0, A0 "q_norm.weight", q * tr, q);
	shp(f, r, A0 "k_norm.weight", 1, kv, 0, 0);
	rows_at(f, r, A0 "k_norm.weight", 0, A0 "k_norm.weight", kv * ks, kv);
}

/* The stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {W13, W2, M0 "experts.%lld.%s.weight", "w1", "w3", "w2", HID, IE};

/* What every rank holds whole: the layer norms, the routers and their correction biases. */
static void whole(const fx *f, uint32_t r)
{
	repl(f, r, "model.norm.weight");
	repl(f, r, L0 "input_layernorm.weight");
	repl(f, r, L1 "post_attention_layernorm.weight");
	repl(f, r, M0 "gate.weight");
	repl(f, r, M0 "e_score_correction_bias");
	repl(f, r, L1 "block_sparse_moe.e_score_correction_bias");
}

static void test_m2_tp(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4, 8};
	for (size_t k = 0; k < 3; k++) {
		uint32_t T = tps[k];
		fx f;
		fx_open(&f, tm_m2(), M2_OK, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "minimax_m2");
		for (uint32_t r = 0; r < T; r++) {
			attn_rank(&f, r, r, T);
			whole(&f, r);
			fx_experts_are(&f, &XP, r, 0, NE, IE / T * r, IE / T, false);
			rows_at(&f, r, "lm_head.weight", 0, "lm_head.weight", 1024 / T * r,
			        r + 1 < T ? 1024 / T : 1000 - 1024 / T * r);
		}
		fx_close(&f);
	}
}

/* TP 4 by hand: kv head r / 2 on rank r, k_norm's rows 16 * (r / 2).. with it (q_norm's
 * 32 * r..). */
static void test_m2_tp4_norms(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_m2(), M2_OK, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		rows_at(&f, r, A1 "qkv_proj.weight", 32, A1 "k_proj.weight", 16 * (r / 2), 16);
		rows_at(&f, r, A1 "k_norm.weight", 0, A1 "k_norm.weight", 16 * (r / 2), 16);
		rows_at(&f, r, A1 "q_norm.weight", 0, A1 "q_norm.weight", 32 * r, 32);
	}
	fx_close(&f);
}

/* EP 2: whole experts 2 per rank, attention whole; TP 2 x EP 2 with up_gate. */
static void test_m2_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_m2(), M2_OK, 1, 2, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_experts_are(&f, &XP, r, 2 * r, 2, 0, IE, false);
		attn_rank(&f, r, 0, 1);
		whole(&f, r);
	}
	fx_close(&f);
	fx_open(&f, tm_m2(), M2_OK, 2, 2, 1, true);
	for (uint32_t r = 0; r < 4; r++) {
		fx_experts_are(&f, &XP, r, 2 * (r / 2), 2, 0, IE, true);
		attn_rank(&f, r, r % 2, 2);
		whole(&f, r);
	}
	fx_close(&f);
}

/* int8-channel (TP 2) and fp8-channel (TP 4): q/k/v/o and the experts quantized with their
 * scales; the q/k norms, the router, its correction bias, the layer norms, embeddings and
 * lm_head kept without a scale. */
static void test_m2_quant(void **state)
{
	(void)state;
	static const char *const q[] = {A0 "qkv_proj.weight", A1 "o_proj.weight", W13, W2};
	static const char *const keep[] = {A0 "q_norm.weight",
	                                   A1 "k_norm.weight",
	                                   M0 "gate.weight",
	                                   M0 "e_score_correction_bias",
	                                   L0 "input_layernorm.weight",
	                                   "model.embed_tokens.weight",
	                                   "lm_head.weight"};
	fx f;
	fx_open_quant(&f, tm_m2(), M2_OK, 2, WT_QUANT_INT8_CHANNEL, -1, FX_N(keep), FX_N(q));
	/* rank 1's o_proj: columns 64.. of each row, quantized per row */
	fx_cols_int8_is(&f, 1, 2, A1 "o_proj.weight", HID, QD);
	fx_close(&f);
	fx_open_quant(&f, tm_m2(), M2_OK, 4, WT_QUANT_FP8_CHANNEL, -1, FX_N(keep), FX_N(q));
	fx_close(&f);
}

static void test_m2_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1},
	                                   {1, 2}, {1, 4}, {2, 2}, {4, 2}};
	coverage(tm_m2(), M2_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	/* the defaults: head_dim hidden_size / H, no attn_type_list, use_qk_norm and
	 * qk_norm_type absent, no shared expert, untied */
	coverage(tm_m2(), M2_CFG(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
}

/* The MTP module's layers (model.layers.2.*, num_mtp_modules 1): dropped, listed as
 * skipped. */
static void test_m2_mtp(void **state)
{
	(void)state;
	tm_model *m = tm_m2();
	tm_lin_l(m, 2, "self_attn.q_proj.weight", QD, HID, 0);
	tm_lin_l(m, 2, "input_layernorm.weight", HID, 0, 0);
	fx f;
	fx_open(&f, m, M2_CFG(",\"num_mtp_modules\":1"), 2, 1, 0, false);
	assert_true(tm_ix(f.p, 0, "model.layers.2.self_attn.qkv_proj.weight") < 0);
	assert_int_equal(shardmap_n_skipped(f.p), 2);
	fx_close(&f);
}

static void test_m2_config_refusals(void **state)
{
	(void)state;
	fx_refused(tm_m2(), M2_BASE(SW_K SW_S SW_B), WT_EUNSUPPORTED, "rotary_dim", "is missing");
	fx_refused(tm_m2(), M2_BASE(SW_K SW_S SW_B ",\"rotary_dim\":7"), WT_ECORRUPT,
	           "rotary_dim 7", "even");
	fx_refused(tm_m2(), M2_BASE(SW_K SW_S SW_B ",\"rotary_dim\":32"), WT_ECORRUPT,
	           "rotary_dim 32", "head_dim 16");
	fx_refused(tm_m2(), M2_CFG(",\"partial_rotary_factor\":0.25"), WT_EUNSUPPORTED,
	           "partial_rotary_factor", "rotary_dim / head_dim");
	fx_refused(tm_m2(), M2_BASE(SW_K SW_R SW_B ",\"scoring_func\":\"softmax\""),
	           WT_EUNSUPPORTED, "scoring_func", "sigmoid");
	fx_refused(tm_m2(), M2_BASE(SW_K SW_R SW_B), WT_EUNSUPPORTED, "scoring_func", "is missing");
	fx_refused(tm_m2(), M2_BASE(SW_K SW_R SW_S ",\"use_routing_bias\":false"), WT_EUNSUPPORTED,
	           "use_routing_bias", "e_score_correction_bias");
	fx_refused(tm_m2(), M2_BASE(SW_K SW_R SW_S), WT_EUNSUPPORTED, "use_routing_bias",
	           "is missing");
	fx_refused(tm_m2(), M2_CFG(",\"use_qk_norm\":false"), WT_EUNSUPPORTED, "use_qk_norm",
	           "always applies");
	fx_refused(tm_m2(), M2_CFG(",\"qk_norm_type\":\"per_head\""), WT_EUNSUPPORTED,
	           "qk_norm_type", "per_layer");
	fx_refused(tm_m2(), M2_CFG(",\"attn_type_list\":[1,0]"), WT_EUNSUPPORTED,
	           "attn_type_list[1]", "linear-attention");
	fx_refused(tm_m2(), M2_CFG(",\"attn_type_list\":[1]"), WT_ECORRUPT, "attn_type_list",
	           "num_hidden_layers (2)");
	fx_refused(tm_m2(), M2_CFG(",\"shared_intermediate_size\":64"), WT_EUNSUPPORTED,
	           "shared_intermediate_size", "no shared expert");
	fx_refused(tm_m2(), M2_CFG(",\"attention_bias\":true"), WT_EUNSUPPORTED, "attention_bias",
	           "no bias");
	fx_refused(tm_m2(), M2_CFG(",\"tie_word_embeddings\":true"), WT_EUNSUPPORTED,
	           "tie_word_embeddings", "lm_head");
	fx_refused(tm_m2(), M2_BASE(SW_R SW_S SW_B), WT_ECORRUPT, "num_experts_per_tok",
	           "1..num_local_experts");
	fx_refused(tm_m2(), M2_BASE(SW_R SW_S SW_B ",\"num_experts_per_tok\":5"), WT_ECORRUPT,
	           "num_experts_per_tok", "1..num_local_experts (4");
}

static void test_m2_tensor_refusals(void **state)
{
	(void)state;
	/* no experts: no top-k can be taken */
	fx_refused(tm_m2(),
	           "{\"architectures\":[\"MiniMaxM2ForCausalLM\"],\"model_type\":\"minimax_m2\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"intermediate_size\":64,\"num_local_experts\":0,\"vocab_size\":1000,"
	           "\"num_hidden_layers\":2" SW_K SW_R SW_S SW_B "}",
	           WT_ECORRUPT, "num_experts_per_tok", "1..num_local_experts (0");
	/* the correction bias or a q_norm missing, a k_norm per head, a q bias unknown */
	tm_model *m = tm_m2();
	tm_remove(m, M0 "e_score_correction_bias");
	fx_refused(m, M2_OK, WT_ENOTFOUND, M0 "e_score_correction_bias", "missing");
	m = tm_m2();
	tm_remove(m, A1 "q_norm.weight");
	fx_refused(m, M2_OK, WT_ENOTFOUND, A1 "q_norm.weight", "missing");
	m = tm_m2();
	tm_remove(m, A0 "k_norm.weight");
	tm_add2(m, A0 "k_norm.weight", HD, 0);
	fx_refused(m, M2_OK, WT_ESHAPE, A0 "k_norm.weight", "32");
	m = tm_m2();
	tm_add2(m, A0 "q_proj.bias", QD, 0);
	fx_refused(m, M2_OK, WT_EUNSUPPORTED, A0 "q_proj.bias", "unknown");
	/* heads TP 3 does not divide */
	fx_refused_tp(tm_m2(), M2_OK, 3, WT_ELAYOUT, "num_attention_heads 8",
	              "tp_size 1, 2, 4 or 8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_m2_tp),
	    cmocka_unit_test(test_m2_tp4_norms),
	    cmocka_unit_test(test_m2_ep),
	    cmocka_unit_test(test_m2_quant),
	    cmocka_unit_test(test_m2_coverage),
	    cmocka_unit_test(test_m2_mtp),
	    cmocka_unit_test(test_m2_config_refusals),
	    cmocka_unit_test(test_m2_tensor_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
