/*
 * test_shardmap_exaone.c — EXAONE 3.x (ExaoneForCausalLM, remote code: EXAONE-3.0-7.8B,
 * EXAONE-3.5-2.4B / 7.8B / 32B) cut as vLLM's exaone.py loads it: attn.attention.q_proj /
 * k_proj / v_proj fused by heads into attn.attention.qkv_proj [q_r; k_r; v_r] (kv heads
 * replicated when KV < T); out_proj by columns; mlp.c_fc_0 / c_fc_1 merged by rows into
 * mlp.gate_up_proj [gate_r; up_r], c_proj by columns; ln_1 / ln_2 / ln_f replicated; wte /
 * lm_head by vocabulary rows, lm_head dropped when tied (ExaoneConfig's default). Hand-computed
 * slices at TP 2 and TP 4, int8-channel and fp8-channel layouts, coverage over TP 1..8,
 * ExaoneConfig's defaults and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0042ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, head size 16, I 192, V 1000, 2 layers */
#define HID 128
#define HD  16
#define I   192
#define EX_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"ExaoneForCausalLM\"],\"model_type\":\"exaone\","                    \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_layers\":2" extra "}"
#define EX_CFG(extra) EX_CFG_RAW(",\"intermediate_size\":192,\"vocab_size\":1000" extra)
#define KV2           ",\"num_key_value_heads\":2"
#define UNTIED        ",\"tie_word_embeddings\":false"
#define L1            "transformer.h.1."
#define QKV           L1 "attn.attention.qkv_proj.weight"
#define QP            L1 "attn.attention.q_proj.weight"
#define KP            L1 "attn.attention.k_proj.weight"
#define VP            L1 "attn.attention.v_proj.weight"
#define OP            L1 "attn.attention.out_proj.weight"
#define GU            L1 "mlp.gate_up_proj.weight"
#define FC0           L1 "mlp.c_fc_0.weight"
#define FC1           L1 "mlp.c_fc_1.weight"
#define CP            L1 "mlp.c_proj.weight"
#define EMB           "transformer.wte.weight"

/* The model with kv kv heads, MLP width i; lm_head.weight when head. */
static tm_model *tm_exaone_i(int64_t kv, int head, int64_t i)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1000, HID);
	tm_add2(m, "transformer.ln_f.weight", HID, 0);
	if (head)
		tm_add2(m, "lm_head.weight", 1000, HID);
	const tm_leaf L[] = {{"ln_1.weight", HID, 0},
	                     {"ln_2.weight", HID, 0},
	                     {"attn.attention.q_proj.weight", HID, HID},
	                     {"attn.attention.k_proj.weight", kv * HD, HID},
	                     {"attn.attention.v_proj.weight", kv * HD, HID},
	                     {"attn.attention.out_proj.weight", HID, HID},
	                     {"mlp.c_fc_0.weight", i, HID},
	                     {"mlp.c_fc_1.weight", i, HID},
	                     {"mlp.c_proj.weight", HID, i}};
	tm_layers(m, "transformer.h.%d.", 2, L, TM_NLEAVES(L), 0);
	return m;
}

static tm_model *tm_exaone(int64_t kv, int head)
{
	return tm_exaone_i(kv, head, I);
}

/* TP 2 and TP 4 with 2 kv heads, by hand: rank r's qkv_proj is q_proj rows [r*H/T*d, +H/T*d),
 * then k_proj / v_proj rows of kv head r*KV/T (TP 2) or r/2 (TP 4, replicated on ranks 2g and
 * 2g + 1). */
static void test_exaone_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_exaone(2, 1), EX_CFG(KV2 UNTIED), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "exaone");
		for (uint32_t r = 0; r < T; r++) {
			int64_t hl = 8 / T;
			shp(&f, r, QKV, 2, (hl + 2) * HD, HID, 0);
			fx_qkv_is(&f, r, T, QKV, QP, KP, VP, 8, 2, HD);
			cols_of(&f, r, T, OP, OP, HID, HID);
			shp(&f, r, GU, 2, 2 * I / T, HID, 0);
			fx_gate_up_is(&f, r, T, GU, FC0, FC1, I);
			cols_of(&f, r, T, CP, CP, HID, I);
			repl(&f, r, L1 "ln_1.weight");
			repl(&f, r, L1 "ln_2.weight");
			repl(&f, r, "transformer.ln_f.weight");
			assert_true(tm_ix(f.p, r, QP) < 0 && tm_ix(f.p, r, FC0) < 0 &&
			            tm_ix(f.p, r, FC1) < 0);
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
		}
		fx_close(&f);
	}
}

/* TP 8 (each kv head on four ranks, one q head a rank) and 8 kv heads at TP 4; tied
 * (ExaoneConfig's default): lm_head not emitted, and a checkpoint's copy dropped. */
static void test_exaone_replicated(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_exaone(2, 0), EX_CFG(KV2), 8, 1, 0, true);
	for (uint32_t r = 0; r < 8; r++) {
		shp(&f, r, QKV, 2, 3 * HD, HID, 0);
		rows_at(&f, r, QKV, 0, QP, r * HD, HD);
		rows_at(&f, r, QKV, HD, KP, (r / 4) * HD, HD);
		rows_at(&f, r, QKV, 2 * HD, VP, (r / 4) * HD, HD);
		assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
	}
	fx_close(&f);
	fx_open(&f, tm_exaone(8, 1), EX_CFG(""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, QKV, 2, 6 * HD, HID, 0);
		rows_at(&f, r, QKV, 2 * HD, KP, 2 * r * HD, 2 * HD);
		rows_at(&f, r, QKV, 4 * HD, VP, 2 * r * HD, 2 * HD);
		assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
	}
	assert_true(fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
}

static const char *const ex_keep[] = {EMB, "lm_head.weight", "transformer.ln_f.weight",
                                      L1 "ln_1.weight", L1 "ln_2.weight"};
static const char *const ex_quant[] = {QKV, OP, GU, CP};

/* int8-channel at TP 2: qkv_proj / out_proj / gate_up_proj / c_proj quantized per row, the
 * embedding, lm_head and norms BF16; rank 1's qkv_proj codes are q_proj rows 64.. then kv
 * head 1's k / v rows. fp8-channel at TP 4: the same split. */
static void test_exaone_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_exaone(2, 1), EX_CFG(KV2 UNTIED), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(ex_keep), FX_N(ex_quant));
	fx_qkv_int8_is(&f, 1, 2, QKV, QP, KP, VP, 8, 2, HD, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_exaone(2, 1), EX_CFG(KV2 UNTIED), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(ex_keep), FX_N(ex_quant));
	fx_close(&f);
}

static void test_exaone_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_exaone(2, 1), EX_CFG(KV2 UNTIED), 2, lays, 2); /* KV < T: the tests above */
	coverage(tm_exaone(8, 1), EX_CFG(UNTIED), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take ExaoneConfig's defaults: num_key_value_heads the heads, tied (lm_head
 * not needed), intermediate_size 4 x hidden_size (also when null or 0), vocab 102400,
 * num_hidden_layers overwritten by num_layers. */
static void test_exaone_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_exaone(8, 0), EX_CFG(""), 2, 1, 0, false);
	shp(&f, 1, QKV, 2, 12 * HD, HID, 0);
	assert_true(tm_ix(f.p, 1, "lm_head.weight") < 0);
	fx_close(&f);
	fx_refused(tm_exaone(8, 0), EX_CFG(UNTIED), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_exaone(8, 0), EX_CFG_RAW(",\"intermediate_size\":192"), WT_ESHAPE,
	           "[102400, 128]", "fix config.json");
	static const char *const wide[] = {"", ",\"intermediate_size\":null",
	                                   ",\"intermediate_size\":0"};
	for (size_t k = 0; k < sizeof(wide) / sizeof(wide[0]); k++) {
		char cfg[400];
		snprintf(cfg, sizeof(cfg),
		         "{\"architectures\":[\"ExaoneForCausalLM\"],\"model_type\":\"exaone\","
		         "\"hidden_size\":128,\"num_attention_heads\":8,\"num_layers\":2,"
		         "\"vocab_size\":1000%s}",
		         wide[k]);
		fx_open(&f, tm_exaone_i(8, 0, 4 * HID), cfg, 2, 1, 0, false);
		shp(&f, 1, GU, 2, 4 * HID, HID, 0);
		fx_close(&f);
	}
	fx_refused(tm_exaone(8, 0),
	           "{\"architectures\":[\"ExaoneForCausalLM\"],\"model_type\":\"exaone\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_layers\":3,"
	           "\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000}",
	           WT_ENOTFOUND, "transformer.h.2", "missing");
}

static void test_exaone_errors(void **state)
{
	(void)state;
	fx_refused(tm_exaone(2, 1), EX_CFG(KV2 UNTIED ",\"activation_function\":\"gelu\""),
	           WT_EUNSUPPORTED, "activation_function", "silu");
	static const char *const bias[] = {"attention_bias", "bias", "mlp_bias"};
	for (size_t k = 0; k < sizeof(bias) / sizeof(bias[0]); k++) {
		char cfg[400];
		snprintf(cfg, sizeof(cfg), EX_CFG(KV2 UNTIED ",\"%s\":true"), bias[k]);
		fx_refused(tm_exaone(2, 1), cfg, WT_EUNSUPPORTED, bias[k], "without biases");
	}
	fx_refused(tm_exaone(2, 1), EX_CFG(UNTIED ",\"num_key_value_heads\":4"), WT_ESHAPE,
	           "k_proj", "[64, 128]");
	tm_model *m = tm_exaone(2, 1);
	tm_add2(m, L1 "attn.attention.q_proj.bias", HID, 0);
	fx_refused(m, EX_CFG(KV2 UNTIED), WT_EUNSUPPORTED, "q_proj.bias", "unknown");
	m = tm_exaone(2, 1);
	tm_remove(m, FC1);
	fx_refused(m, EX_CFG(KV2 UNTIED), WT_ENOTFOUND, "c_fc_1", "missing");
	fx_refused_tp(tm_exaone(2, 1), EX_CFG(KV2 UNTIED), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_exaone(2, 1), EX_CFG(KV2 UNTIED), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exaone_slices),   cmocka_unit_test(test_exaone_replicated),
	    cmocka_unit_test(test_exaone_quant),    cmocka_unit_test(test_exaone_coverage),
	    cmocka_unit_test(test_exaone_defaults), cmocka_unit_test(test_exaone_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
