/*
 * test_shardmap_persimmon.c — Persimmon (PersimmonForCausalLM: adept/persimmon-8b-base,
 * -chat) cut as vLLM's persimmon.py loads it: self_attn.query_key_value [3*hid, hid] stored
 * per head ([H, 3, d] rows) and its bias re-cut into [q_r; k_r; v_r] of the rank's heads
 * (GPT-NeoX's rule under model.layers names), self_attn.dense by columns (bias replicated),
 * q_layernorm / k_layernorm [d] weights and biases replicated (qk_layernorm, PersimmonConfig's
 * default true), mlp.dense_h_to_4h by rows with its bias, dense_4h_to_h by columns (bias
 * replicated), the LayerNorms with biases replicated, embed_tokens / lm_head by vocabulary
 * rows. Hand-computed slices at TP 2 and TP 4, an int8 layout, coverage over TP 1..8, and
 * the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0021ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, head size 16, I 256, V 1000, 2 layers */
#define HID 128
#define HD  16
#define PS_CFG(extra)                                                                              \
	"{\"architectures\":[\"PersimmonForCausalLM\"],\"model_type\":\"persimmon\","              \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"intermediate_size\":256,"                 \
	"\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define PS_L "model.layers.%d."
#define L1   "model.layers.1."
#define A1   L1 "self_attn."
#define QKV  A1 "query_key_value.weight"
#define QKVB A1 "query_key_value.bias"

static void add_l(tm_model *m, int i, const char *leaf, int64_t a, int64_t b)
{
	char n[200];
	tm_fmt(n, sizeof(n), PS_L, i, leaf);
	tm_add2(m, n, a, b);
}

/* The model; q/k layernorms when qkln. */
static tm_model *tm_ps(int qkln)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "model.embed_tokens.weight", 1000, HID);
	tm_add2(m, "model.final_layernorm.weight", HID, 0);
	tm_add2(m, "model.final_layernorm.bias", HID, 0);
	tm_add2(m, "lm_head.weight", 1000, HID);
	for (int i = 0; i < 2; i++) {
		add_l(m, i, "input_layernorm.weight", HID, 0);
		add_l(m, i, "input_layernorm.bias", HID, 0);
		add_l(m, i, "post_attention_layernorm.weight", HID, 0);
		add_l(m, i, "post_attention_layernorm.bias", HID, 0);
		add_l(m, i, "self_attn.query_key_value.weight", 3 * HID, HID);
		add_l(m, i, "self_attn.query_key_value.bias", 3 * HID, 0);
		add_l(m, i, "self_attn.dense.weight", HID, HID);
		add_l(m, i, "self_attn.dense.bias", HID, 0);
		if (qkln) {
			add_l(m, i, "self_attn.q_layernorm.weight", HD, 0);
			add_l(m, i, "self_attn.q_layernorm.bias", HD, 0);
			add_l(m, i, "self_attn.k_layernorm.weight", HD, 0);
			add_l(m, i, "self_attn.k_layernorm.bias", HD, 0);
		}
		add_l(m, i, "mlp.dense_h_to_4h.weight", 256, HID);
		add_l(m, i, "mlp.dense_h_to_4h.bias", 256, 0);
		add_l(m, i, "mlp.dense_4h_to_h.weight", HID, 256);
		add_l(m, i, "mlp.dense_4h_to_h.bias", HID, 0);
	}
	return m;
}

static void test_persimmon_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_ps(1), PS_CFG(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "persimmon");
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, QKV, 2, 3 * 64, HID, 0);
		fx_qkv_grouped_is(&f, r, 2, 8, 8, HD, QKV);
		shp(&f, r, QKVB, 1, 3 * 64, 0, 0);
		fx_qkv_grouped_is(&f, r, 2, 8, 8, HD, QKVB);
		cols_of(&f, r, 2, A1 "dense.weight", A1 "dense.weight", HID, HID);
		repl(&f, r, A1 "dense.bias");
		shp(&f, r, A1 "q_layernorm.weight", 1, HD, 0, 0);
		repl(&f, r, A1 "q_layernorm.weight");
		repl(&f, r, A1 "q_layernorm.bias");
		repl(&f, r, A1 "k_layernorm.weight");
		repl(&f, r, A1 "k_layernorm.bias");
		shp(&f, r, L1 "mlp.dense_h_to_4h.weight", 2, 128, HID, 0);
		rows_are(&f, r, L1 "mlp.dense_h_to_4h.weight", 0, L1 "mlp.dense_h_to_4h.weight",
		         128 * r, 128);
		rows_are(&f, r, L1 "mlp.dense_h_to_4h.bias", 0, L1 "mlp.dense_h_to_4h.bias",
		         128 * r, 128);
		cols_of(&f, r, 2, L1 "mlp.dense_4h_to_h.weight", L1 "mlp.dense_4h_to_h.weight", HID,
		        256);
		repl(&f, r, L1 "mlp.dense_4h_to_h.bias");
		repl(&f, r, L1 "input_layernorm.bias");
		repl(&f, r, L1 "post_attention_layernorm.weight");
		repl(&f, r, "model.final_layernorm.bias");
	}
	/* vocabulary rows: 1000 padded to 1024, rank 1 rows [512, 1000) then zeros */
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	rows_are(&f, 0, "model.embed_tokens.weight", 0, "model.embed_tokens.weight", 0, 512);
	fx_close(&f);
}

/* TP 4: two heads a rank; qk_layernorm false (no q/k layernorms), tied (no lm_head). */
static void test_persimmon_tp4(void **state)
{
	(void)state;
	fx f;
	tm_model *m = tm_ps(0);
	tm_remove(m, "lm_head.weight");
	fx_open(&f, m, PS_CFG(",\"qk_layernorm\":false,\"tie_word_embeddings\":true"), 4, 1, 0,
	        true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, QKV, 2, 3 * 32, HID, 0);
		fx_qkv_grouped_is(&f, r, 4, 8, 8, HD, QKV);
		fx_qkv_grouped_is(&f, r, 4, 8, 8, HD, QKVB);
		cols_of(&f, r, 4, A1 "dense.weight", A1 "dense.weight", HID, HID);
		rows_are(&f, r, L1 "mlp.dense_h_to_4h.bias", 0, L1 "mlp.dense_h_to_4h.bias", 64 * r,
		         64);
		assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
		assert_true(tm_ix(f.p, r, A1 "q_layernorm.weight") < 0);
	}
	fx_close(&f);
}

/* int8-channel at TP 2: the four linear weights quantized per row; biases and norms BF16. */
static void test_persimmon_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_ps(1), PS_CFG(""), &l, true);
	assert_int_equal(info(&f, 1, QKV)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, A1 "dense.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, L1 "mlp.dense_h_to_4h.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, L1 "mlp.dense_4h_to_h.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, QKVB)->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, A1 "q_layernorm.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, "lm_head.weight")->dtype, WT_BF16);
	/* rank 1's qkv row (p*4 + j)*16 + e is the checkpoint's row ((4 + j)*3 + p)*16 + e */
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, QKV);
	const float *sc = (const float *)out_bytes(&f, 1, A1 "query_key_value.weight_scale");
	for (int64_t p = 0; p < 3; p++)
		for (int64_t j = 0; j < 4; j++)
			for (int64_t e = 0; e < HD; e++) {
				int64_t row = (p * 4 + j) * HD + e;
				size_t rowb;
				const uint16_t *x = (const uint16_t *)src_rows(
				    &f, QKV, ((4 + j) * 3 + p) * HD + e, &rowb);
				int8_row_is(q + row * HID, sc[row], x, HID);
			}
	fx_close(&f);
}

static void test_persimmon_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_ps(1), PS_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_ps(0), PS_CFG(",\"qk_layernorm\":false"), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

static void test_persimmon_errors(void **state)
{
	(void)state;
	/* qk_layernorm true (the default): both norms' weights and biases needed */
	tm_model *m = tm_ps(1);
	tm_remove(m, A1 "k_layernorm.bias");
	fx_refused(m, PS_CFG(""), WT_ENOTFOUND, "k_layernorm.bias", "missing");
	fx_refused(tm_ps(0), PS_CFG(""), WT_ENOTFOUND, "q_layernorm", "missing");
	/* qk_layernorm false: the norms are unknown */
	fx_refused(tm_ps(1), PS_CFG(",\"qk_layernorm\":false"), WT_EUNSUPPORTED, "_layernorm.",
	           "qk_layernorm is false");
	m = tm_ps(1);
	tm_remove(m, QKVB);
	fx_refused(m, PS_CFG(""), WT_ENOTFOUND, "query_key_value.bias", "missing");
	m = tm_ps(1);
	tm_add2(m, A1 "o_proj.weight", HID, HID);
	fx_refused(m, PS_CFG(""), WT_EUNSUPPORTED, "o_proj.weight", "persimmon");
	/* configs vLLM's persimmon.py cannot load */
	fx_refused(tm_ps(1), PS_CFG(",\"layer_norm_eps\":1e-6"), WT_EUNSUPPORTED,
	           "layer_norm_eps 1e-06", "give 1e-5");
	fx_refused(tm_ps(1), PS_CFG(",\"num_key_value_heads\":2"), WT_EUNSUPPORTED,
	           "num_key_value_heads 2", "remove the key");
	fx_refused(tm_ps(1), PS_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "remove it");
	fx_refused(tm_ps(1), PS_CFG(",\"qk_layernorm\":3"), WT_ECORRUPT, "qk_layernorm", "");
	fx_refused_tp(tm_ps(1), PS_CFG(""), 3, WT_ELAYOUT, "", "");
	/* without qk_layernorm another epsilon is vLLM's own (every LayerNorm reads it) */
	fx f;
	fx_open(&f, tm_ps(0), PS_CFG(",\"qk_layernorm\":false,\"layer_norm_eps\":1e-6"), 2, 1, 0,
	        true);
	fx_close(&f);
	/* keys left out take PersimmonConfig's defaults */
	fx_refused(tm_ps(1),
	           "{\"architectures\":[\"PersimmonForCausalLM\"],\"model_type\":\"persimmon\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"vocab_size\":1000,"
	           "\"num_hidden_layers\":2}",
	           WT_ESHAPE, "16384", "fix config.json");
	fx_refused(tm_ps(1),
	           "{\"architectures\":[\"PersimmonForCausalLM\"],\"model_type\":\"persimmon\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"intermediate_size\":256,"
	           "\"num_hidden_layers\":2}",
	           WT_ESHAPE, "262144", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_persimmon_tp2),    cmocka_unit_test(test_persimmon_tp4),
	    cmocka_unit_test(test_persimmon_int8),   cmocka_unit_test(test_persimmon_coverage),
	    cmocka_unit_test(test_persimmon_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
