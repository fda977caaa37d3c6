/*
 * test_shardmap_stablelm.c — StableLM (StableLmForCausalLM: stablelm-2-1_6b,
 * stablelm-zephyr-3b) cut as vLLM's stablelm.py loads it: q/k/v with their biases
 * (use_qkv_bias) fused by heads into self_attn.qkv_proj, o_proj by columns without a bias,
 * gate_proj / up_proj merged into gate_up_proj by rows, down_proj by columns, the LayerNorm
 * weights and biases (input_layernorm, post_attention_layernorm, model.norm) replicated,
 * embed_tokens / lm_head by vocabulary rows. Hand-computed slices at TP 2 and TP 4 (kv heads
 * replicated), an int8 layout, coverage over TP 1..8, and the refusals (qk_layernorm and
 * use_parallel_residual among them). Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed001bull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_stablelm.h"

/* hid 128, H 8, KV 2, head size 16, I 256, V 1000, 2 layers */
#define HID 128
#define SL_CFG(extra)                                                                              \
	"{\"architectures\":[\"StableLmForCausalLM\"],\"model_type\":\"stablelm\","                \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define SL_BIAS SL_CFG(",\"use_qkv_bias\":true")
#define L1      "model.layers.1."
#define A1      L1 "self_attn."

/* The model; q/k/v biases when qkv_bias. */
static tm_model *tm_stablelm(int qkv_bias)
{
	return tm_stablelm_of(qkv_bias, 32, 256);
}

static void test_stablelm_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_stablelm(1), SL_BIAS, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "stablelm");
	for (uint32_t r = 0; r < 2; r++) {
		/* [q_r 64; k_r 16; v_r 16] and the biases alike */
		shp(&f, r, A1 "qkv_proj.weight", 2, 96, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.weight", 64, A1 "k_proj.weight", 16 * r, 16);
		rows_are(&f, r, A1 "qkv_proj.weight", 80, A1 "v_proj.weight", 16 * r, 16);
		shp(&f, r, A1 "qkv_proj.bias", 1, 96, 0, 0);
		rows_are(&f, r, A1 "qkv_proj.bias", 0, A1 "q_proj.bias", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.bias", 64, A1 "k_proj.bias", 16 * r, 16);
		rows_are(&f, r, A1 "qkv_proj.bias", 80, A1 "v_proj.bias", 16 * r, 16);
		cols_of(&f, r, 2, A1 "o_proj.weight", A1 "o_proj.weight", HID, HID);
		assert_true(tm_ix(f.p, r, A1 "o_proj.bias") < 0);
		/* [gate_r 128; up_r 128] */
		shp(&f, r, L1 "mlp.gate_up_proj.weight", 2, 256, HID, 0);
		rows_are(&f, r, L1 "mlp.gate_up_proj.weight", 0, L1 "mlp.gate_proj.weight", 128 * r,
		         128);
		rows_are(&f, r, L1 "mlp.gate_up_proj.weight", 128, L1 "mlp.up_proj.weight", 128 * r,
		         128);
		cols_of(&f, r, 2, L1 "mlp.down_proj.weight", L1 "mlp.down_proj.weight", HID, 256);
		repl(&f, r, L1 "input_layernorm.weight");
		repl(&f, r, L1 "input_layernorm.bias");
		repl(&f, r, L1 "post_attention_layernorm.bias");
		repl(&f, r, "model.norm.bias");
		rows_are(&f, r, "lm_head.weight", 0, "lm_head.weight", 512 * r, r ? 488 : 512);
		assert_true(tm_ix(f.p, r, A1 "q_proj.weight") < 0);
	}
	fx_close(&f);
}

/* TP 4 without q/k/v biases: 2 q heads per rank, the 2 kv heads replicated (rank r: r / 2). */
static void test_stablelm_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_stablelm(0), SL_CFG(""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, A1 "qkv_proj.weight", 2, 64, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 32 * r, 32);
		rows_are(&f, r, A1 "qkv_proj.weight", 32, A1 "k_proj.weight", 16 * (r / 2), 16);
		rows_are(&f, r, A1 "qkv_proj.weight", 48, A1 "v_proj.weight", 16 * (r / 2), 16);
		assert_true(tm_ix(f.p, r, A1 "qkv_proj.bias") < 0);
		rows_are(&f, r, L1 "mlp.gate_up_proj.weight", 64, L1 "mlp.up_proj.weight", 64 * r,
		         64);
		cols_of(&f, r, 4, A1 "o_proj.weight", A1 "o_proj.weight", HID, HID);
		repl(&f, r, L1 "post_attention_layernorm.weight");
	}
	fx_close(&f);
}

/* int8-channel at TP 2: qkv, o_proj, gate_up, down quantized per row; biases and norms BF16. */
static void test_stablelm_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_stablelm(1), SL_BIAS, &l, true);
	assert_int_equal(info(&f, 1, A1 "qkv_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, A1 "o_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, L1 "mlp.down_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, A1 "qkv_proj.bias")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, L1 "input_layernorm.bias")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, "model.norm.weight")->dtype, WT_BF16);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, L1 "mlp.gate_up_proj.weight");
	const float *sc = (const float *)out_bytes(&f, 1, L1 "mlp.gate_up_proj.weight_scale");
	for (int64_t row = 0; row < 128; row++) { /* up_proj rows [128, 256) at 128.. */
		size_t rowb;
		const uint16_t *x =
		    (const uint16_t *)src_rows(&f, L1 "mlp.up_proj.weight", 128 + row, &rowb);
		int8_row_is(q + (128 + row) * HID, sc[128 + row], x, HID);
	}
	fx_close(&f);
}

static void test_stablelm_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_stablelm(1), SL_BIAS, 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_stablelm(0), SL_CFG(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_stablelm_errors(void **state)
{
	(void)state;
	/* q/k/v biases exactly when use_qkv_bias; norms' biases always (nn.LayerNorm) */
	tm_model *m = tm_stablelm(1);
	tm_remove(m, A1 "k_proj.bias");
	fx_refused(m, SL_BIAS, WT_ENOTFOUND, "k_proj.bias", "missing");
	fx_refused(tm_stablelm(1), SL_CFG(""), WT_EUNSUPPORTED, "_proj.bias",
	           "use_qkv_bias is false");
	fx_refused(tm_stablelm(0), SL_BIAS, WT_ENOTFOUND, "_proj.bias", "use_qkv_bias true");
	m = tm_stablelm(0);
	tm_remove(m, L1 "post_attention_layernorm.bias");
	fx_refused(m, SL_CFG(""), WT_ENOTFOUND, "post_attention_layernorm.bias", "missing");
	m = tm_stablelm(0);
	tm_remove(m, "model.norm.bias");
	fx_refused(m, SL_CFG(""), WT_ENOTFOUND, "model.norm.bias", "missing");
	/* o_proj has no bias; per-head q_layernorm is no tensor vLLM loads */
	m = tm_stablelm(0);
	tm_add2(m, A1 "o_proj.bias", HID, 0);
	fx_refused(m, SL_CFG(""), WT_EUNSUPPORTED, "o_proj.bias", "stablelm");
	m = tm_stablelm(0);
	tm_add2(m, A1 "q_layernorm.norms.0.weight", 16, 0);
	fx_refused(m, SL_CFG(""), WT_EUNSUPPORTED, "q_layernorm.norms.0.weight", "stablelm");
	/* configs vLLM's stablelm.py cannot load */
	fx_refused(tm_stablelm(0), SL_CFG(",\"qk_layernorm\":true"), WT_EUNSUPPORTED,
	           "qk_layernorm true", "q_layernorm.norms");
	fx_refused(tm_stablelm(0), SL_CFG(",\"use_parallel_residual\":true"), WT_EUNSUPPORTED,
	           "use_parallel_residual true", "set it false");
	fx_refused(tm_stablelm(0), SL_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "remove it");
	fx_refused(tm_stablelm(0), SL_CFG(",\"use_qkv_bias\":3"), WT_ECORRUPT, "use_qkv_bias", "");
	fx_refused(tm_stablelm(0), SL_CFG(",\"use_parallel_residual\":\"no\""), WT_ECORRUPT,
	           "use_parallel_residual", "");
	/* keys left out take StableLmConfig's defaults: num_key_value_heads 32, I 6912 */
	fx_refused(tm_stablelm(0),
	           "{\"architectures\":[\"StableLmForCausalLM\"],\"model_type\":\"stablelm\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"intermediate_size\":256,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "", "fix config.json");
	fx_refused(tm_stablelm(0),
	           "{\"architectures\":[\"StableLmForCausalLM\"],\"model_type\":\"stablelm\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "6912", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stablelm_tp2),    cmocka_unit_test(test_stablelm_tp4),
	    cmocka_unit_test(test_stablelm_int8),   cmocka_unit_test(test_stablelm_coverage),
	    cmocka_unit_test(test_stablelm_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
