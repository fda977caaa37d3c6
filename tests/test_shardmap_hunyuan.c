/*
 * test_shardmap_hunyuan.c — Hunyuan V1 dense (HunYuanDenseV1ForCausalLM) and MoE
 * (HunYuanMoEV1ForCausalLM), cut as vLLM's hunyuan_v1.py loads them. Dense: Llama's table with
 * q/k/v biases fused with their rows and o_proj's bias replicated, both exactly when attention_bias
 * is true; per-head self_attn.query_layernorm / key_layernorm [head_dim] replicated whole on every
 * rank (with use_qk_norm, true when absent), never quantized; a bias-free MLP; head_dim as given (H
 * x d need not be hidden). Hand-computed slices at TP 2 and TP 4 (KV 2 < 4), int8 codes, coverage
 * TP 1-8, HunYuanDenseV1Config's defaults and the refusals. MoE: the same attention, every
 * layer a router (mlp.gate.wg -> mlp.gate) replicated, the experts stacked as w13 / w2 (Ie
 * split under TP, whole experts under EP), the shared MLP merged as a dense one; exact bytes
 * TP 2, EP 2, TP 2 x EP 2 up_gate, int8 codes, coverage TP 1-8 / EP 2-8, the per-layer lists
 * and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x4e1a7ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 256, H 8, KV 2, head_dim 64 (H x d 512), I 512, V 1000, 2 layers */
#define HID 256
#define HD  64
#define HY_CFG(extra)                                                                              \
	"{\"architectures\":[\"HunYuanDenseV1ForCausalLM\"],\"model_type\":\"hunyuan_v1_dense\","  \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define HY_HD    ",\"head_dim\":64,\"tie_word_embeddings\":false"
#define HY_BIAS  HY_CFG(HY_HD ",\"attention_bias\":true,\"use_qk_norm\":true")
#define HY_PLAIN HY_CFG(HY_HD)
#define A1       "model.layers.1.self_attn."
#define M1       "model.layers.1.mlp."

enum { W_BIAS = 1, W_NORM = 2, W_LMHEAD = 4 };

static tm_model *tm_hunyuan(int what)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, (what & W_LMHEAD) != 0);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, HD, HID, what & W_BIAS, 0);
		tm_mlp(m, i, "mlp.", 512, HID);
		if (what & W_BIAS) {
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.o_proj.bias");
			tm_add2(m, b, HID, 0);
		}
		if (what & W_NORM) {
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.query_layernorm.weight");
			tm_add2(m, b, HD, 0);
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.key_layernorm.weight");
			tm_add2(m, b, HD, 0);
		}
	}
	return m;
}
#define HY_ALL     (W_BIAS | W_NORM | W_LMHEAD)
#define HY_RELEASE (W_NORM | W_LMHEAD)

static void test_hunyuan_dense_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_hunyuan(HY_ALL), HY_BIAS, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "hunyuan_v1_dense");
	/* rank 1: q heads 4..7 (rows 256..511), kv head 1 (rows 64..127), biases alike */
	const char *qkv = A1 "qkv_proj.weight", *qkvb = A1 "qkv_proj.bias";
	shp(&f, 1, qkv, 2, 256 + 2 * 64, HID, 0);
	rows_are(&f, 1, qkv, 0, A1 "q_proj.weight", 256, 256);
	rows_are(&f, 1, qkv, 256, A1 "k_proj.weight", 64, 64);
	rows_are(&f, 1, qkv, 320, A1 "v_proj.weight", 64, 64);
	shp(&f, 0, qkvb, 1, 384, 0, 0);
	rows_are(&f, 0, qkvb, 0, A1 "q_proj.bias", 0, 256);
	rows_are(&f, 0, qkvb, 256, A1 "k_proj.bias", 0, 64);
	rows_are(&f, 1, qkvb, 0, A1 "q_proj.bias", 256, 256);
	rows_are(&f, 1, qkvb, 256, A1 "k_proj.bias", 64, 64);
	rows_are(&f, 1, qkvb, 320, A1 "v_proj.bias", 64, 64);
	/* o_proj [256, 512] by columns; its bias and the head norms whole on both ranks */
	cols_of(&f, 1, 2, A1 "o_proj.weight", A1 "o_proj.weight", HID, 512);
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, A1 "o_proj.bias", 1, HID, 0, 0);
		repl(&f, r, A1 "o_proj.bias");
		shp(&f, r, A1 "query_layernorm.weight", 1, HD, 0, 0);
		repl(&f, r, A1 "query_layernorm.weight");
		repl(&f, r, A1 "key_layernorm.weight");
		repl(&f, r, "model.layers.0.input_layernorm.weight");
	}
	/* gate_up rows [gate_r ; up_r], down by columns, no MLP bias */
	shp(&f, 1, M1 "gate_up_proj.weight", 2, 512, HID, 0);
	rows_are(&f, 1, M1 "gate_up_proj.weight", 0, M1 "gate_proj.weight", 256, 256);
	rows_are(&f, 1, M1 "gate_up_proj.weight", 256, M1 "up_proj.weight", 256, 256);
	cols_of(&f, 0, 2, M1 "down_proj.weight", M1 "down_proj.weight", HID, 512);
	assert_true(tm_ix(f.p, 0, M1 "gate_up_proj.bias") < 0);
	/* untied: lm_head by rows of the padded vocabulary */
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	fx_close(&f);
}

/* TP 4 > KV 2: ranks 2 and 3 share kv head 1, its bias rows with it; the head norms whole
 * on every rank. The release's switches: no attention bias (class default false), the head
 * norms (use_qk_norm from the class default). */
static void test_hunyuan_dense_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_hunyuan(HY_ALL), HY_BIAS, 4, 1, 0, true);
	const char *qkvb = A1 "qkv_proj.bias";
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, A1 "qkv_proj.weight", 2, 128 + 2 * 64, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", r * 128, 128);
		rows_are(&f, r, A1 "qkv_proj.weight", 128, A1 "k_proj.weight", (r / 2) * 64, 64);
		rows_are(&f, r, qkvb, 0, A1 "q_proj.bias", r * 128, 128);
		rows_are(&f, r, qkvb, 128, A1 "k_proj.bias", (r / 2) * 64, 64);
		rows_are(&f, r, qkvb, 192, A1 "v_proj.bias", (r / 2) * 64, 64);
		cols_of(&f, r, 4, A1 "o_proj.weight", A1 "o_proj.weight", HID, 512);
		repl(&f, r, A1 "o_proj.bias");
		repl(&f, r, A1 "query_layernorm.weight");
		repl(&f, r, A1 "key_layernorm.weight");
	}
	fx_close(&f);
	fx_open(&f, tm_hunyuan(HY_RELEASE), HY_PLAIN, 4, 1, 0, true);
	assert_true(tm_ix(f.p, 0, qkvb) < 0);
	assert_true(tm_ix(f.p, 0, A1 "o_proj.bias") < 0);
	repl(&f, 3, A1 "key_layernorm.weight");
	fx_close(&f);
}

/* int8-channel: the linear weights quantized (o_proj's codes checked against the formula),
 * the biases and head norms kept BF16 without a scale. */
static void test_hunyuan_dense_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_hunyuan(HY_ALL), HY_BIAS, &l, true);
	const char *o = A1 "o_proj.weight";
	assert_int_equal(info(&f, 1, A1 "qkv_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, M1 "down_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, o)->dtype, WT_I8);
	shp(&f, 1, A1 "o_proj.weight_scale", 2, HID, 1, 0);
	static const char *const kept[] = {A1 "qkv_proj.bias", A1 "o_proj.bias",
	                                   A1 "query_layernorm.weight", A1 "key_layernorm.weight"};
	for (size_t k = 0; k < 4; k++) {
		char sc[160];
		snprintf(sc, sizeof(sc), "%s_scale", kept[k]);
		assert_int_equal(info(&f, 1, kept[k])->dtype, WT_BF16);
		assert_true(tm_ix(f.p, 1, sc) < 0);
	}
	repl(&f, 1, A1 "query_layernorm.weight");
	/* o_proj rank 1: columns 256..511 of each row */
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, o);
	const float *sc = (const float *)out_bytes(&f, 1, A1 "o_proj.weight_scale");
	for (int64_t row = 0; row < HID; row++) {
		size_t rowb;
		const uint16_t *x = (const uint16_t *)src_rows(&f, o, row, &rowb);
		int8_row_is(q + row * 256, sc[row], x + 256, 256);
	}
	fx_close(&f);
}

static void test_hunyuan_dense_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_hunyuan(HY_ALL), HY_BIAS, 2, lays, 4);
	coverage(tm_hunyuan(HY_RELEASE), HY_PLAIN, 2, lays, 4);
}

static void test_hunyuan_dense_errors(void **state)
{
	(void)state;
	/* attention_bias: biases required when true, unknown when false (the class default) */
	fx_refused(tm_hunyuan(HY_RELEASE), HY_BIAS, WT_ENOTFOUND, "q_proj.bias",
	           "attention_bias true");
	fx_refused(tm_hunyuan(HY_ALL), HY_PLAIN, WT_EUNSUPPORTED, "_proj.bias", "attention_bias");
	tm_model *m = tm_hunyuan(HY_ALL);
	tm_remove(m, A1 "o_proj.bias");
	fx_refused(m, HY_BIAS, WT_ENOTFOUND, A1 "o_proj.bias", "attention_bias true");
	/* the head norms: required when use_qk_norm is absent (true) or true, unknown when false */
	fx_refused(tm_hunyuan(W_LMHEAD), HY_PLAIN, WT_ENOTFOUND, "query_layernorm", "use_qk_norm");
	fx_refused(tm_hunyuan(HY_RELEASE), HY_CFG(HY_HD ",\"use_qk_norm\":false"), WT_EUNSUPPORTED,
	           "_layernorm.weight", "use_qk_norm is false");
	/* Qwen3's q_norm name, an [H*d] norm, an MLP bias: not Hunyuan tensors */
	m = tm_hunyuan(HY_RELEASE);
	tm_lin_l(m, 0, "self_attn.q_norm.weight", HD, 0, 0);
	fx_refused(m, HY_PLAIN, WT_EUNSUPPORTED, "model.layers.0.self_attn.q_norm.weight", "");
	m = tm_hunyuan(HY_RELEASE);
	tm_remove(m, A1 "key_layernorm.weight");
	tm_lin_l(m, 1, "self_attn.key_layernorm.weight", 2 * HD, 0, 0);
	fx_refused(m, HY_PLAIN, WT_ESHAPE, "key_layernorm", "64");
	m = tm_hunyuan(HY_RELEASE);
	tm_lin_l(m, 1, "mlp.down_proj.bias", HID, 0, 0);
	fx_refused(m, HY_PLAIN, WT_EUNSUPPORTED, M1 "down_proj.bias", "");
	/* cross-layer attention */
	fx_refused(tm_hunyuan(HY_RELEASE), HY_CFG(HY_HD ",\"use_cla\":true"), WT_EUNSUPPORTED,
	           "use_cla", "cross-layer");
	fx_refused(tm_hunyuan(HY_RELEASE), HY_CFG(HY_HD ",\"use_cla\":2"), WT_ECORRUPT, "use_cla",
	           "");
	/* head_dim left out is hidden / heads (32): k_proj [128, 256] against [64 x 2] */
	fx_refused(tm_hunyuan(HY_RELEASE), HY_CFG(",\"tie_word_embeddings\":false"), WT_ESHAPE,
	           "k_proj", "[64, 256]");
	/* tie_word_embeddings left out is HunYuanDenseV1Config's false: lm_head required */
	fx_refused(tm_hunyuan(W_NORM), HY_CFG(",\"head_dim\":64"), WT_ENOTFOUND, "lm_head", "");
	/* keys left out take HunYuanDenseV1Config's defaults (intermediate_size 11008) */
	fx_refused(tm_hunyuan(HY_RELEASE),
	           "{\"architectures\":[\"HunYuanDenseV1ForCausalLM\"],\"model_type\":"
	           "\"hunyuan_v1_dense\",\"hidden_size\":256,\"num_attention_heads\":8,"
	           "\"num_key_value_heads\":2,\"head_dim\":64,\"vocab_size\":1000,"
	           "\"num_hidden_layers\":2}",
	           WT_ESHAPE, "down_proj", "11008");
	fx_refused(tm_hunyuan(HY_RELEASE),
	           "{\"architectures\":[\"HunYuanDenseV1ForCausalLM\"],\"model_type\":"
	           "\"hunyuan_v1_dense\",\"hidden_size\":256,\"num_attention_heads\":8,"
	           "\"num_key_value_heads\":2,\"head_dim\":64,\"intermediate_size\":512,"
	           "\"num_hidden_layers\":2}",
	           WT_ESHAPE, "290943", "fix config.json");
}

/* Hunyuan V1 MoE (HunYuanMoEV1ForCausalLM): hid 256, H 8, KV 2, d 32 (hid / H), I 128 (the
 * shared MLP x num_shared_expert 1), 8 experts of Ie 128, 2 layers, every layer MoE; the
 * per-layer lists of Hunyuan-A13B's config.json */
#define HM_CFG(extra)                                                                              \
	"{\"architectures\":[\"HunYuanMoEV1ForCausalLM\"],\"model_type\":\"hunyuan_v1_moe\","      \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":128,\"vocab_size\":1000,\"num_hidden_layers\":2,"                   \
	"\"tie_word_embeddings\":false" extra "}"
/* the MoE keys: num_experts NE, moe_intermediate_size IEL, num_shared_expert NS, the rest X */
#define HM_KEYS(NE_, IEL, NS, X)                                                                   \
	",\"num_experts\":" NE_ ",\"moe_topk\":[2,2],\"moe_intermediate_size\":" IEL               \
	",\"num_shared_expert\":" NS X
#define HM_MOE HM_KEYS("8", "[128,128]", "[1,1]", ",\"use_mixed_mlp_moe\":true")
#define HM_OK  HM_CFG(HM_MOE)
#define NE     8
#define IE     128
#define W13    M1 "experts.w13_weight"
#define W2     M1 "experts.w2_weight"

static tm_model *tm_hunyuan_moe(int64_t ish)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, HID, 0, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.query_layernorm.weight");
		tm_add2(m, b, 32, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.key_layernorm.weight");
		tm_add2(m, b, 32, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.wg.weight");
		tm_add2(m, b, NE, HID);
		tm_experts(m, i, "mlp.experts.", NE, IE, HID, "gate_proj", "up_proj", "down_proj");
		if (ish > 0)
			tm_mlp(m, i, "mlp.shared_mlp.", ish, HID);
	}
	return m;
}

/* The stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {
    W13, W2, M1 "experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, IE};

/* The router (checkpoint mlp.gate.wg, runtime mlp.gate) and the head norms: the source bytes
 * on every rank. */
static void moe_replicated(const fx *f, uint32_t ranks)
{
	for (uint32_t r = 0; r < ranks; r++) {
		shp(f, r, M1 "gate.weight", 2, NE, HID, 0);
		rows_are(f, r, M1 "gate.weight", 0, M1 "gate.wg.weight", 0, NE);
		repl(f, r, A1 "query_layernorm.weight");
		repl(f, r, A1 "key_layernorm.weight");
		assert_true(tm_ix(f->p, r, M1 "gate.wg.weight") < 0);
	}
}

static void test_hunyuan_moe_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_hunyuan_moe(128), HM_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "hunyuan_v1_moe");
	/* every expert on both ranks, Ie split: rank 1 rows / columns 64..127 */
	fx_experts_are(&f, &XP, 0, 0, NE, 0, 64, false);
	fx_experts_are(&f, &XP, 1, 0, NE, 64, 64, false);
	/* the shared MLP as a dense one: [gate_r ; up_r] rows, down by columns */
	const char *sgu = M1 "shared_mlp.gate_up_proj.weight";
	shp(&f, 1, sgu, 2, 128, HID, 0);
	rows_are(&f, 1, sgu, 0, M1 "shared_mlp.gate_proj.weight", 64, 64);
	rows_are(&f, 1, sgu, 64, M1 "shared_mlp.up_proj.weight", 64, 64);
	cols_of(&f, 1, 2, M1 "shared_mlp.down_proj.weight", M1 "shared_mlp.down_proj.weight", HID,
	        128);
	rows_are(&f, 1, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 128, 128);
	assert_true(tm_ix(f.p, 0, A1 "qkv_proj.bias") < 0);
	moe_replicated(&f, 2);
	fx_close(&f);
}

/* EP 2: each rank four experts whole, the shared MLP whole on both; TP 2 x EP 2 up_gate:
 * rank 3 (tp 1, ep 1) holds experts 4..7 whole, up first; the shared MLP follows the tp
 * rank, [gate ; up] whatever w13_order */
static void test_hunyuan_moe_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_hunyuan_moe(128), HM_OK, 1, 2, 0, true);
	fx_experts_are(&f, &XP, 0, 0, 4, 0, IE, false);
	fx_experts_are(&f, &XP, 1, 4, 4, 0, IE, false);
	shp(&f, 1, M1 "shared_mlp.gate_up_proj.weight", 2, 256, HID, 0);
	moe_replicated(&f, 2);
	fx_close(&f);
	fx_open(&f, tm_hunyuan_moe(128), HM_OK, 2, 2, 1, true);
	fx_experts_are(&f, &XP, 3, 4, 4, 0, IE, true);
	fx_experts_are(&f, &XP, 0, 0, 4, 0, IE, true);
	const char *sgu = M1 "shared_mlp.gate_up_proj.weight";
	rows_are(&f, 3, sgu, 0, M1 "shared_mlp.gate_proj.weight", 64, 64);
	rows_are(&f, 3, sgu, 64, M1 "shared_mlp.up_proj.weight", 64, 64);
	moe_replicated(&f, 4);
	fx_close(&f);
}

/* int8-channel at TP 2: each expert's rows quantized one by one; the router and the head
 * norms stay BF16 without a scale */
static void test_hunyuan_moe_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_hunyuan_moe(128), HM_OK, &l, true);
	shp(&f, 1, W13 "_scale", 3, NE, 128, 1);
	assert_int_equal(info(&f, 1, W13)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, M1 "shared_mlp.down_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, M1 "gate.weight")->dtype, WT_BF16);
	assert_true(tm_ix(f.p, 1, M1 "gate.weight_scale") < 0);
	assert_int_equal(info(&f, 1, A1 "query_layernorm.weight")->dtype, WT_BF16);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, W13);
	const float *sc = (const float *)out_bytes(&f, 1, W13 "_scale");
	for (int64_t j = 0; j < NE; j++)
		for (int64_t row = 0; row < 128; row++) {
			char src[160];
			snprintf(src, sizeof(src), M1 "experts.%lld.%s_proj.weight", (long long)j,
			         row < 64 ? "gate" : "up");
			size_t rowb;
			const uint16_t *x =
			    (const uint16_t *)src_rows(&f, src, 64 + row % 64, &rowb);
			int8_row_is(q + (j * 128 + row) * HID, sc[j * 128 + row], x, HID);
		}
	fx_close(&f);
}

static void test_hunyuan_moe_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1},
	                                   {1, 2}, {2, 2}, {1, 4}, {1, 8}};
	coverage(tm_hunyuan_moe(128), HM_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	/* num_shared_expert 2: the shared MLP 256 wide; use_mixed_mlp_moe false: none */
	coverage(tm_hunyuan_moe(256), HM_CFG(HM_KEYS("8", "[128,128]", "2", "")), 2, lays, 4);
	coverage(tm_hunyuan_moe(0),
	         HM_CFG(HM_KEYS("8", "[128,128]", "1", ",\"use_mixed_mlp_moe\":false")), 2, lays,
	         4);
}

static void test_hunyuan_moe_errors(void **state)
{
	(void)state;
	/* num_experts absent is HunYuanMoEV1Config's 1 (vLLM: a dense MLP), 1 alike */
	fx_refused(tm_hunyuan_moe(128), HM_CFG(""), WT_ECORRUPT, "num_experts > 1", "default 1");
	fx_refused(tm_hunyuan_moe(128), HM_CFG(",\"num_experts\":1"), WT_ECORRUPT,
	           "num_experts is 1", "dense MLP");
	fx_refused(tm_hunyuan_moe(128), HM_CFG(HM_KEYS("[8,8]", "128", "1", "")), WT_ECORRUPT,
	           "num_experts", "not an integer");
	/* per-layer lists: all equal, one per layer */
	fx_refused(tm_hunyuan_moe(128), HM_CFG(HM_KEYS("8", "[128,64]", "1", "")), WT_EUNSUPPORTED,
	           "moe_intermediate_size[1] is 64", "give one value");
	fx_refused(tm_hunyuan_moe(128), HM_CFG(HM_KEYS("8", "128", "[1,1,1]", "")), WT_ECORRUPT,
	           "num_shared_expert has 3 entries", "num_hidden_layers");
	fx_refused(tm_hunyuan_moe(128), HM_CFG(",\"num_experts\":8,\"moe_topk\":[2,\"x\"]"),
	           WT_ECORRUPT, "moe_topk[1]", "not an integer");
	/* the expert size is moe_intermediate_size, the shared MLP's intermediate_size x
	 * num_shared_expert */
	fx_refused(tm_hunyuan_moe(128), HM_CFG(HM_KEYS("8", "64", "1", "")), WT_ESHAPE,
	           "experts.0.", "[256, 64]");
	fx_refused(tm_hunyuan_moe(128), HM_CFG(HM_KEYS("8", "[128,128]", "2", "")), WT_ESHAPE,
	           "shared_mlp", "[256, 256]");
	fx_refused(tm_hunyuan_moe(128),
	           HM_CFG(HM_KEYS("8", "[128,128]", "1", ",\"use_mixed_mlp_moe\":false")),
	           WT_EUNSUPPORTED, "shared_mlp", "use_mixed_mlp_moe");
	fx_refused(tm_hunyuan_moe(0), HM_OK, WT_ENOTFOUND, "shared_mlp.gate_proj", "missing");
	/* the router under vLLM's runtime name is not a checkpoint tensor; missing is missing */
	tm_model *m = tm_hunyuan_moe(128);
	tm_lin_l(m, 1, "mlp.gate.weight", NE, HID, 0);
	fx_refused(m, HM_OK, WT_EUNSUPPORTED, M1 "gate.weight", "");
	m = tm_hunyuan_moe(128);
	tm_remove(m, M1 "gate.wg.weight");
	fx_refused(m, HM_OK, WT_ENOTFOUND, M1 "gate.wg.weight", "missing");
	/* an expert past num_experts; a dense MLP (no Hunyuan MoE layer has one) */
	m = tm_hunyuan_moe(128);
	tm_lin_l(m, 1, "mlp.experts.8.gate_proj.weight", IE, HID, 0);
	fx_refused(m, HM_OK, WT_ESHAPE, "experts.8", "8 experts");
	m = tm_hunyuan_moe(128);
	tm_lin_l(m, 1, "mlp.gate_proj.weight", 128, HID, 0);
	fx_refused(m, HM_OK, WT_EUNSUPPORTED, M1 "gate_proj.weight", "hunyuan_v1_moe");
	fx_refused(tm_hunyuan_moe(128), HM_CFG(HM_MOE ",\"use_cla\":true"), WT_EUNSUPPORTED,
	           "HunYuanMoEV1ForCausalLM with use_cla true", "");
	fx_refused(tm_hunyuan_moe(128), HM_CFG(HM_KEYS("8", "128", "5000", "")), WT_ECORRUPT,
	           "num_shared_expert 5000", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hunyuan_dense_tp2),
	    cmocka_unit_test(test_hunyuan_dense_tp4),
	    cmocka_unit_test(test_hunyuan_dense_int8),
	    cmocka_unit_test(test_hunyuan_dense_coverage),
	    cmocka_unit_test(test_hunyuan_dense_errors),
	    cmocka_unit_test(test_hunyuan_moe_tp2),
	    cmocka_unit_test(test_hunyuan_moe_ep),
	    cmocka_unit_test(test_hunyuan_moe_int8),
	    cmocka_unit_test(test_hunyuan_moe_coverage),
	    cmocka_unit_test(test_hunyuan_moe_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
