/*
 * test_shardmap_seed_oss.c — Seed-OSS (SeedOssForCausalLM): Llama's table whose biases
 * follow SeedOssConfig's three switches, each bias required when its switch is true and
 * unknown when it is false: attention_bias (default true) the q/k/v biases fused with their
 * rows, attention_out_bias o_proj's bias replicated, mlp_bias gate / up's merged by rows and
 * down's replicated; head_dim as given (H x d need not be hidden; default 128). Hand-computed
 * slices at TP 2 and TP 4 (KV 2 < 4), an int8 layout (biases never quantized), coverage,
 * SeedOssConfig's defaults and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed05ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 256, H 8, KV 2, head_dim 64 (H x d 512), I 512, V 1000, 2 layers */
#define HID 256
#define SO_CFG(extra)                                                                              \
	"{\"architectures\":[\"SeedOssForCausalLM\"],\"model_type\":\"seed_oss\","                 \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define SO_HD    ",\"head_dim\":64"
#define SO_ALL   SO_CFG(SO_HD ",\"attention_out_bias\":true,\"mlp_bias\":true")
#define SO_PLAIN SO_CFG(SO_HD ",\"attention_bias\":false")
#define A1       "model.layers.1.self_attn."
#define M1       "model.layers.1.mlp."

/* Which biases the model holds. */
enum { B_QKV = 1, B_O = 2, B_MLP = 4, B_ALL = 7 };

static tm_model *tm_seed(int bias)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 64, HID, bias & B_QKV, 0);
		tm_mlp(m, i, "mlp.", 512, HID);
		if (bias & B_O) {
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.o_proj.bias");
			tm_add2(m, b, HID, 0);
		}
		if (bias & B_MLP) {
			tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate_proj.bias");
			tm_add2(m, b, 512, 0);
			tm_fmt(b, sizeof(b), TM_L, i, "mlp.up_proj.bias");
			tm_add2(m, b, 512, 0);
			tm_fmt(b, sizeof(b), TM_L, i, "mlp.down_proj.bias");
			tm_add2(m, b, HID, 0);
		}
	}
	return m;
}

static void test_seed_oss_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_seed(B_ALL), SO_ALL, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "seed_oss");
	/* rank 1: q heads 4..7 (rows 256..511), kv head 1 (rows 64..127), biases alike */
	const char *qkv = A1 "qkv_proj.weight", *qkvb = A1 "qkv_proj.bias";
	shp(&f, 1, qkv, 2, 256 + 2 * 64, HID, 0);
	rows_are(&f, 1, qkv, 0, A1 "q_proj.weight", 256, 256);
	rows_are(&f, 1, qkv, 256, A1 "k_proj.weight", 64, 64);
	rows_are(&f, 1, qkv, 320, A1 "v_proj.weight", 64, 64);
	shp(&f, 1, qkvb, 1, 384, 0, 0);
	rows_are(&f, 1, qkvb, 0, A1 "q_proj.bias", 256, 256);
	rows_are(&f, 1, qkvb, 256, A1 "k_proj.bias", 64, 64);
	rows_are(&f, 1, qkvb, 320, A1 "v_proj.bias", 64, 64);
	/* o_proj [256, 512] by columns; its bias whole on both ranks */
	shp(&f, 1, A1 "o_proj.weight", 2, HID, 256, 0);
	cols_at(&f, 1, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, 512, 256, 256);
	/* gate_up rows [gate_r ; up_r] with the bias alike, down by columns, its bias whole */
	const char *gub = M1 "gate_up_proj.bias";
	shp(&f, 1, gub, 1, 512, 0, 0);
	rows_are(&f, 1, gub, 0, M1 "gate_proj.bias", 256, 256);
	rows_are(&f, 1, gub, 256, M1 "up_proj.bias", 256, 256);
	rows_are(&f, 0, gub, 0, M1 "gate_proj.bias", 0, 256);
	rows_are(&f, 1, M1 "gate_up_proj.weight", 256, M1 "up_proj.weight", 256, 256);
	cols_at(&f, 1, M1 "down_proj.weight", 0, M1 "down_proj.weight", HID, 512, 256, 256);
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, A1 "o_proj.bias", 1, HID, 0, 0);
		rows_are(&f, r, A1 "o_proj.bias", 0, A1 "o_proj.bias", 0, HID);
		shp(&f, r, M1 "down_proj.bias", 1, HID, 0, 0);
		rows_are(&f, r, M1 "down_proj.bias", 0, M1 "down_proj.bias", 0, HID);
	}
	/* untied: lm_head by rows of the padded vocabulary */
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	fx_close(&f);
}

/* TP 4 > KV 2: ranks 2 and 3 share kv head 1, its bias rows with it; the release's
 * switches (q/k/v biases only, attention_bias from the class default) */
static void test_seed_oss_tp4_release(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_seed(B_QKV), SO_CFG(SO_HD), 4, 1, 0, true);
	const char *qkvb = A1 "qkv_proj.bias";
	for (uint32_t r = 2; r < 4; r++) {
		shp(&f, r, A1 "qkv_proj.weight", 2, 128 + 2 * 64, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", r * 128, 128);
		rows_are(&f, r, qkvb, 0, A1 "q_proj.bias", r * 128, 128);
		rows_are(&f, r, qkvb, 128, A1 "k_proj.bias", 64, 64);
		rows_are(&f, r, qkvb, 192, A1 "v_proj.bias", 64, 64);
	}
	assert_true(tm_ix(f.p, 0, A1 "o_proj.bias") < 0);
	assert_true(tm_ix(f.p, 0, M1 "gate_up_proj.bias") < 0);
	fx_close(&f);
	/* attention_bias false: no bias at all */
	fx_open(&f, tm_seed(0), SO_PLAIN, 2, 1, 0, false);
	assert_true(tm_ix(f.p, 0, A1 "qkv_proj.bias") < 0);
	shp(&f, 0, A1 "qkv_proj.weight", 2, 384, HID, 0);
	fx_close(&f);
}

/* int8-channel: the linear weights quantized, every bias kept BF16 without a scale. */
static void test_seed_oss_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_seed(B_ALL), SO_ALL, &l, true);
	assert_int_equal(info(&f, 1, A1 "qkv_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, M1 "down_proj.weight")->dtype, WT_I8);
	static const char *const biases[] = {A1 "qkv_proj.bias", A1 "o_proj.bias",
	                                     M1 "gate_up_proj.bias", M1 "down_proj.bias"};
	for (size_t k = 0; k < 4; k++) {
		char sc[160];
		snprintf(sc, sizeof(sc), "%s_scale", biases[k]);
		assert_int_equal(info(&f, 1, biases[k])->dtype, WT_BF16);
		assert_true(tm_ix(f.p, 1, sc) < 0);
	}
	rows_are(&f, 1, A1 "o_proj.bias", 0, A1 "o_proj.bias", 0, HID);
	fx_close(&f);
}

static void test_seed_oss_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_seed(B_ALL), SO_ALL, 2, lays, 4);
	coverage(tm_seed(B_QKV), SO_CFG(SO_HD), 2, lays, 4);
}

static void test_seed_oss_errors(void **state)
{
	(void)state;
	/* attention_bias left out is SeedOssConfig's true: a checkpoint without q/k/v biases is
	 * missing them, naming the key */
	fx_refused(tm_seed(0), SO_CFG(SO_HD), WT_ENOTFOUND, "q_proj.bias", "attention_bias true");
	/* ... and false makes them unknown */
	fx_refused(tm_seed(B_QKV), SO_PLAIN, WT_EUNSUPPORTED, "_proj.bias",
	           "attention_bias is false");
	/* one of the three missing */
	tm_model *m = tm_seed(B_QKV);
	tm_remove(m, A1 "v_proj.bias");
	fx_refused(m, SO_CFG(SO_HD), WT_ENOTFOUND, A1 "v_proj.bias", "attention_bias true");
	/* o_proj / MLP biases only with their switches (default false) */
	fx_refused(tm_seed(B_QKV | B_O), SO_CFG(SO_HD), WT_EUNSUPPORTED, "o_proj.bias",
	           "attention_out_bias");
	fx_refused(tm_seed(B_QKV | B_MLP), SO_CFG(SO_HD), WT_EUNSUPPORTED, "mlp.", "mlp_bias");
	fx_refused(tm_seed(B_QKV), SO_CFG(SO_HD ",\"attention_out_bias\":true"), WT_ENOTFOUND,
	           "o_proj.bias", "attention_out_bias true");
	m = tm_seed(B_ALL);
	tm_remove(m, M1 "up_proj.bias");
	fx_refused(m, SO_ALL, WT_ENOTFOUND, M1 "up_proj.bias", "mlp_bias true");
	/* head_dim left out is SeedOssConfig's 128, not hidden / heads (k_proj's bias: 2 x 128) */
	fx_refused(tm_seed(B_QKV), SO_CFG(""), WT_ESHAPE, "k_proj.bias", "implies [256]");
	/* a switch of the wrong type */
	fx_refused(tm_seed(B_ALL), SO_CFG(SO_HD ",\"mlp_bias\":1"), WT_ECORRUPT, "mlp_bias", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_seed_oss_tp2),    cmocka_unit_test(test_seed_oss_tp4_release),
	    cmocka_unit_test(test_seed_oss_int8),   cmocka_unit_test(test_seed_oss_coverage),
	    cmocka_unit_test(test_seed_oss_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
