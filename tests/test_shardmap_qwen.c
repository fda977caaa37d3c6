/*
 * test_shardmap_qwen.c — Qwen, first generation (QWenLMHeadModel, remote code: Qwen-1_8B / 7B /
 * 14B / 72B and -Chat) cut as vLLM's qwen.py loads it: attn.c_attn [q; k; v] (weight and bias)
 * cut by heads into [q_r; k_r; v_r]; attn.c_proj by columns; mlp.w2 (gate) / w1 (up) merged by
 * rows into mlp.gate_up_proj [w2_r; w1_r], each intermediate_size / 2 rows; mlp.c_proj by
 * columns; ln_1 / ln_2 / ln_f replicated; wte / lm_head by vocabulary rows, never tied.
 * Hand-computed slices at TP 2 and TP 4, int8-channel and fp8-channel layouts, coverage over
 * TP 1..8, QWenConfig's defaults and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0043ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, head size 16, MLP width 192 (intermediate_size 384), V 1000, 2 layers */
#define HID 128
#define HD  16
#define I   192
#define QW_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"QWenLMHeadModel\"],\"model_type\":\"qwen\","                        \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_hidden_layers\":2" extra "}"
#define QW_CFG(extra)                                                                              \
	QW_CFG_RAW(",\"kv_channels\":16,\"intermediate_size\":384,\"vocab_size\":1000" extra)
#define L1   "transformer.h.1."
#define QKV  L1 "attn.c_attn.weight"
#define QKVB L1 "attn.c_attn.bias"
#define OP   L1 "attn.c_proj.weight"
#define GU   L1 "mlp.gate_up_proj.weight"
#define W1   L1 "mlp.w1.weight"
#define W2   L1 "mlp.w2.weight"
#define CP   L1 "mlp.c_proj.weight"
#define EMB  "transformer.wte.weight"

/* The model with MLP width i (w1 / w2 rows); lm_head.weight when head. */
static tm_model *tm_qwen_i(int head, int64_t i)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1000, HID);
	tm_add2(m, "transformer.ln_f.weight", HID, 0);
	if (head)
		tm_add2(m, "lm_head.weight", 1000, HID);
	const tm_leaf L[] = {{"ln_1.weight", HID, 0},
	                     {"ln_2.weight", HID, 0},
	                     {"attn.c_attn.weight", 3 * HID, HID},
	                     {"attn.c_attn.bias", 3 * HID, 0},
	                     {"attn.c_proj.weight", HID, HID},
	                     {"mlp.w1.weight", i, HID},
	                     {"mlp.w2.weight", i, HID},
	                     {"mlp.c_proj.weight", HID, i}};
	tm_layers(m, "transformer.h.%d.", 2, L, TM_NLEAVES(L), 0);
	return m;
}

static tm_model *tm_qwen(void)
{
	return tm_qwen_i(1, I);
}

/* TP 2 and TP 4 by hand: rank r's c_attn is rows [r*H/T*d, +H/T*d) of each of its q, k and v
 * thirds, its bias alike; gate_up_proj is w2's rows then w1's. */
static void test_qwen_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_qwen(), QW_CFG(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "qwen");
		for (uint32_t r = 0; r < T; r++) {
			int64_t n = HID / T;
			shp(&f, r, QKV, 2, 3 * n, HID, 0);
			shp(&f, r, QKVB, 1, 3 * n, 0, 0);
			for (int p = 0; p < 3; p++) {
				rows_at(&f, r, QKV, p * n, QKV, p * HID + r * n, n);
				rows_are(&f, r, QKVB, p * n, QKVB, p * HID + r * n, n);
			}
			cols_of(&f, r, T, OP, OP, HID, HID);
			shp(&f, r, GU, 2, 2 * I / T, HID, 0);
			fx_gate_up_is(&f, r, T, GU, W2, W1, I);
			cols_of(&f, r, T, CP, CP, HID, I);
			repl(&f, r, L1 "ln_1.weight");
			repl(&f, r, L1 "ln_2.weight");
			repl(&f, r, "transformer.ln_f.weight");
			assert_true(tm_ix(f.p, r, W1) < 0 && tm_ix(f.p, r, W2) < 0);
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
		}
		fx_close(&f);
	}
}

static const char *const qw_keep[] = {
    EMB, "lm_head.weight", "transformer.ln_f.weight", L1 "ln_1.weight", L1 "ln_2.weight", QKVB};
static const char *const qw_quant[] = {QKV, OP, GU, CP};

/* int8-channel at TP 2: c_attn / attn.c_proj / gate_up_proj / mlp.c_proj quantized per row, the
 * embedding, lm_head, norms and c_attn's bias BF16; rank 1's c_attn codes are rows 64.. of each
 * third. fp8-channel at TP 4 and TP 8: the same split. */
static void test_qwen_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_qwen(), QW_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(qw_keep),
	              FX_N(qw_quant));
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, QKV);
	const float *sc = (const float *)out_bytes(&f, 1, QKV "_scale");
	for (int64_t row = 0; row < 3 * 64; row++) {
		size_t rowb;
		const uint16_t *x =
		    (const uint16_t *)src_rows(&f, QKV, (row / 64) * HID + 64 + row % 64, &rowb);
		int8_row_is(q + row * HID, sc[row], x, HID);
	}
	fx_close(&f);
	for (uint32_t T = 4; T <= 8; T *= 2) {
		fx_open_quant(&f, tm_qwen(), QW_CFG(""), T, WT_QUANT_FP8_CHANNEL, WT_BF16,
		              FX_N(qw_keep), FX_N(qw_quant));
		fx_close(&f);
	}
}

static void test_qwen_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_qwen(), QW_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take QWenConfig's defaults: untied (lm_head needed), intermediate_size 22016
 * (MLP width 11008), kv_channels 128, vocab 151936; an odd intermediate_size is floored as vLLM's
 * // 2. */
static void test_qwen_defaults(void **state)
{
	(void)state;
	fx f;
	fx_refused(tm_qwen_i(0, I), QW_CFG(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_qwen(), QW_CFG_RAW(",\"kv_channels\":16,\"vocab_size\":1000"), WT_ESHAPE,
	           "[128, 11008]", "fix config.json");
	fx_refused(tm_qwen(), QW_CFG_RAW(",\"intermediate_size\":384,\"vocab_size\":1000"),
	           WT_EUNSUPPORTED, "kv_channels 128", "hidden_size / num_attention_heads = 16");
	fx_refused(tm_qwen(), QW_CFG_RAW(",\"kv_channels\":16,\"intermediate_size\":384"),
	           WT_ESHAPE, "[151936, 128]", "fix config.json");
	fx_open(&f, tm_qwen(),
	        QW_CFG_RAW(",\"kv_channels\":16,\"intermediate_size\":385,"
	                   "\"vocab_size\":1000"),
	        2, 1, 0, false);
	shp(&f, 1, GU, 2, I, HID, 0);
	fx_close(&f);
	fx_open(&f, tm_qwen(), QW_CFG(",\"tie_word_embeddings\":false"), 2, 1, 0, false);
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	fx_close(&f);
}

static void test_qwen_errors(void **state)
{
	(void)state;
	fx_refused(tm_qwen(), QW_CFG(",\"visual\":{\"heads\":16}"), WT_EUNSUPPORTED, "visual",
	           "Qwen-VL");
	fx_refused(tm_qwen(), QW_CFG(",\"no_bias\":false"), WT_EUNSUPPORTED, "no_bias",
	           "without biases");
	fx_refused(tm_qwen(), QW_CFG(",\"scale_attn_weights\":false"), WT_EUNSUPPORTED,
	           "scale_attn_weights", "head_dim^-0.5");
	fx_refused(tm_qwen(), QW_CFG(",\"tie_word_embeddings\":true"), WT_EUNSUPPORTED,
	           "tie_word_embeddings", "never ties");
	fx_refused(tm_qwen(), QW_CFG(",\"rotary_pct\":0.5"), WT_EUNSUPPORTED, "rotary_pct",
	           "whole head");
	fx_refused(tm_qwen(), QW_CFG(",\"num_key_value_heads\":4"), WT_EUNSUPPORTED,
	           "num_key_value_heads 4", "remove it");
	fx_refused(tm_qwen(),
	           QW_CFG_RAW(",\"kv_channels\":32,\"intermediate_size\":384,"
	                      "\"vocab_size\":1000"),
	           WT_EUNSUPPORTED, "kv_channels 32", "fix kv_channels");
	fx_refused(tm_qwen(),
	           "{\"architectures\":[\"QWenLMHeadModel\"],\"model_type\":\"qwen\","
	           "\"hidden_size\":128,\"num_attention_heads\":6,\"num_hidden_layers\":2,"
	           "\"kv_channels\":16,\"intermediate_size\":384,\"vocab_size\":1000}",
	           WT_ECORRUPT, "divisible by num_attention_heads", "quotient");
	tm_model *m = tm_qwen();
	tm_add2(m, L1 "attn.c_proj.bias", HID, 0);
	fx_refused(m, QW_CFG(""), WT_EUNSUPPORTED, "c_proj.bias", "unknown");
	m = tm_qwen();
	tm_add2(m, L1 "mlp.w1.bias", I, 0);
	fx_refused(m, QW_CFG(""), WT_EUNSUPPORTED, "w1.bias", "unknown");
	m = tm_qwen();
	tm_remove(m, QKVB);
	fx_refused(m, QW_CFG(""), WT_ENOTFOUND, "c_attn.bias", "missing");
	m = tm_qwen();
	tm_remove(m, W1);
	fx_refused(m, QW_CFG(""), WT_ENOTFOUND, "mlp.w1", "missing");
	fx_refused_tp(tm_qwen(), QW_CFG(""), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_qwen(), QW_CFG(""), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_qwen_slices),   cmocka_unit_test(test_qwen_quant),
	    cmocka_unit_test(test_qwen_coverage), cmocka_unit_test(test_qwen_defaults),
	    cmocka_unit_test(test_qwen_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
