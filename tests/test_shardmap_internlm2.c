/*
 * test_shardmap_internlm2.c — InternLM2 (InternLM2ForCausalLM, remote code: internlm2_5-7b-chat,
 * internlm2-chat-20b) cut as vLLM's internlm2.py loads it, each rank receiving its own heads:
 * attention.wqkv stored per kv group ([KV, H/KV + 2, d] rows) becomes each rank's
 * [q_r; k_r; v_r] (the kv heads replicated when KV < T); attention.wo by columns;
 * feed_forward.w1 / w3 merged by rows into feed_forward.gate_up_proj [gate_r; up_r], w2 by
 * columns; the norms replicated; tok_embeddings / output by vocabulary rows, output dropped when
 * tied. Hand-computed slices at TP 2 and TP 4, int8-channel and fp8-channel layouts, coverage
 * over TP 1..8, InternLM2Config's defaults and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0041ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, head size 16, I 192, V 1000, 2 layers */
#define HID 128
#define HD  16
#define I   192
#define IL_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"InternLM2ForCausalLM\"],\"model_type\":\"internlm2\","              \
	"\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"                 \
	"\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define IL_CFG(extra) IL_CFG_RAW(",\"bias\":false" extra)
#define KV2           ",\"num_key_value_heads\":2"
#define L1            "model.layers.1."
#define WQKV          L1 "attention.wqkv.weight"
#define WO            L1 "attention.wo.weight"
#define GU            L1 "feed_forward.gate_up_proj.weight"
#define W1            L1 "feed_forward.w1.weight"
#define W3            L1 "feed_forward.w3.weight"
#define W2            L1 "feed_forward.w2.weight"
#define EMB           "model.tok_embeddings.weight"

/* The model with kv kv heads; output.weight when head. */
static tm_model *tm_internlm2(int64_t kv, int head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1000, HID);
	tm_add2(m, "model.norm.weight", HID, 0);
	if (head)
		tm_add2(m, "output.weight", 1000, HID);
	const tm_leaf L[] = {{"attention_norm.weight", HID, 0},
	                     {"ffn_norm.weight", HID, 0},
	                     {"attention.wqkv.weight", (8 + 2 * kv) * HD, HID},
	                     {"attention.wo.weight", HID, HID},
	                     {"feed_forward.w1.weight", I, HID},
	                     {"feed_forward.w3.weight", I, HID},
	                     {"feed_forward.w2.weight", HID, I}};
	tm_layers(m, TM_L, 2, L, TM_NLEAVES(L), 0);
	return m;
}

/* TP 2 and TP 4 with 2 kv groups, by hand: at TP 2 rank r holds group r whole ([q; k; v] is
 * the group's own packed order: q rows 96r + [0, 64), k 96r + 64, v 96r + 80); at TP 4 rank r
 * holds q heads 2r, 2r + 1 of group r / 2 (rows 96(r/2) + 32(r%2) + [0, 32)) and the group's
 * k / v, replicated on ranks 2g and 2g + 1. */
static void test_internlm2_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_internlm2(2, 1), IL_CFG(KV2), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "internlm2");
		for (uint32_t r = 0; r < T; r++) {
			int64_t hl = 8 / T, g = r / (T / 2),
			        q0 = 96 * g + (T == 4 ? 32 * (r % 2) : 0);
			shp(&f, r, WQKV, 2, (hl + 2) * HD, HID, 0);
			rows_at(&f, r, WQKV, 0, WQKV, q0, hl * HD);
			rows_at(&f, r, WQKV, hl * HD, WQKV, 96 * g + 64, HD);
			rows_at(&f, r, WQKV, (hl + 1) * HD, WQKV, 96 * g + 80, HD);
			fx_qkv_grouped_is(&f, r, T, 8, 2, HD, WQKV);
			cols_of(&f, r, T, WO, WO, HID, HID);
			shp(&f, r, GU, 2, 2 * I / T, HID, 0);
			fx_gate_up_is(&f, r, T, GU, W1, W3, I);
			cols_of(&f, r, T, W2, W2, HID, I);
			repl(&f, r, L1 "attention_norm.weight");
			repl(&f, r, L1 "ffn_norm.weight");
			repl(&f, r, "model.norm.weight");
			assert_true(tm_ix(f.p, r, W1) < 0 && tm_ix(f.p, r, W3) < 0);
		}
		/* vocabulary rows: V 1000 padded to 1024, 1024 / T a rank, the last rank's past
		 * 1000 zero */
		int64_t Vl = 1024 / T;
		shp(&f, T - 1, "output.weight", 2, Vl, HID, 0);
		rows_are(&f, T - 1, "output.weight", 0, "output.weight", Vl * (T - 1),
		         1000 - Vl * (T - 1));
		rows_are(&f, 0, EMB, 0, EMB, 0, Vl);
		fx_close(&f);
	}
}

/* TP 8 (each group's kv heads on four ranks, one q head a rank) and 8 kv heads at TP 4
 * (one q head a group: [H, 3, d]); tied: output not emitted, and a checkpoint's copy dropped. */
static void test_internlm2_replicated(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_internlm2(2, 0), IL_CFG(KV2 ",\"tie_word_embeddings\":true"), 8, 1, 0, true);
	for (uint32_t r = 0; r < 8; r++) {
		shp(&f, r, WQKV, 2, 3 * HD, HID, 0);
		fx_qkv_grouped_is(&f, r, 8, 8, 2, HD, WQKV);
		assert_true(tm_ix(f.p, r, "output.weight") < 0);
	}
	fx_close(&f);
	fx_open(&f, tm_internlm2(8, 1), IL_CFG(",\"tie_word_embeddings\":true"), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, WQKV, 2, 6 * HD, HID, 0);
		fx_qkv_grouped_is(&f, r, 4, 8, 8, HD, WQKV);
		/* rank 3: heads 6, 7 at rows 3*16*(6, 7), their k at +16, v at +32 */
		if (r == 3) {
			rows_at(&f, r, WQKV, 0, WQKV, 18 * HD, HD);
			rows_at(&f, r, WQKV, HD, WQKV, 21 * HD, HD);
			rows_at(&f, r, WQKV, 2 * HD, WQKV, 19 * HD, HD);
			rows_at(&f, r, WQKV, 5 * HD, WQKV, 23 * HD, HD);
		}
		assert_true(tm_ix(f.p, r, "output.weight") < 0);
	}
	assert_true(fx_skipped(&f, "output.weight"));
	fx_close(&f);
}

static const char *const il_keep[] = {EMB, "output.weight", "model.norm.weight",
                                      L1 "attention_norm.weight", L1 "ffn_norm.weight"};
static const char *const il_quant[] = {WQKV, WO, GU, W2};

/* int8-channel at TP 2: wqkv / wo / gate_up / w2 quantized per row, the embedding, output and
 * norms BF16; rank 1's wqkv codes are group 1's rows' (q 96..159, k 160.., v 176..). fp8-channel
 * at TP 4: the same split. */
static void test_internlm2_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_internlm2(2, 1), IL_CFG(KV2), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(il_keep), FX_N(il_quant));
	fx_rows_int8_is(&f, 1, WQKV, 0, WQKV, 96, 6 * HD, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_internlm2(2, 1), IL_CFG(KV2), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(il_keep), FX_N(il_quant));
	fx_close(&f);
}

static void test_internlm2_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_internlm2(2, 1), IL_CFG(KV2), 2, lays, 2); /* KV < T: the tests above */
	coverage(tm_internlm2(8, 1), IL_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take InternLM2Config's defaults: num_key_value_heads the heads, untied (output
 * required), internlm2-7b's dims (vocab 103168), bias true (refused). */
static void test_internlm2_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_internlm2(8, 1), IL_CFG(""), 2, 1, 0, false);
	shp(&f, 1, WQKV, 2, 12 * HD, HID, 0);
	assert_true(tm_ix(f.p, 1, "output.weight") >= 0);
	fx_close(&f);
	fx_refused(tm_internlm2(8, 0), IL_CFG(""), WT_ENOTFOUND, "output.weight", "missing");
	fx_refused(tm_internlm2(8, 1),
	           "{\"architectures\":[\"InternLM2ForCausalLM\"],\"model_type\":\"internlm2\","
	           "\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"
	           "\"num_hidden_layers\":2,\"bias\":false}",
	           WT_ESHAPE, "[103168, 128]", "fix config.json");
	fx_refused(tm_internlm2(2, 1), IL_CFG_RAW(KV2), WT_EUNSUPPORTED, "bias is true", "default");
}

static void test_internlm2_errors(void **state)
{
	(void)state;
	fx_refused(tm_internlm2(2, 1), IL_CFG_RAW(KV2 ",\"bias\":true"), WT_EUNSUPPORTED,
	           "bias is true", "\"bias\": false");
	fx_refused(tm_internlm2(2, 1), IL_CFG(KV2 ",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act 'gelu'", "silu");
	fx_refused(tm_internlm2(2, 1), IL_CFG(KV2 ",\"head_dim\":32"), WT_EUNSUPPORTED,
	           "head_dim 32", "remove it");
	fx_refused(tm_internlm2(2, 1), IL_CFG(",\"num_key_value_heads\":3"), WT_ECORRUPT,
	           "num_key_value_heads 3", "evenly");
	fx_refused(tm_internlm2(2, 1), IL_CFG(",\"num_key_value_heads\":4"), WT_ESHAPE,
	           "attention.wqkv", "[256, 128]");
	tm_model *m = tm_internlm2(2, 1);
	tm_add2(m, L1 "attention.wqkv.bias", 12 * HD, 0);
	fx_refused(m, IL_CFG(KV2), WT_EUNSUPPORTED, "attention.wqkv.bias", "unknown");
	m = tm_internlm2(2, 1);
	tm_remove(m, W3);
	fx_refused(m, IL_CFG(KV2), WT_ENOTFOUND, "feed_forward.w3", "missing");
	fx_refused_tp(tm_internlm2(2, 1), IL_CFG(KV2), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_internlm2(2, 1), IL_CFG(KV2), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_internlm2_slices),   cmocka_unit_test(test_internlm2_replicated),
	    cmocka_unit_test(test_internlm2_quant),    cmocka_unit_test(test_internlm2_coverage),
	    cmocka_unit_test(test_internlm2_defaults), cmocka_unit_test(test_internlm2_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
