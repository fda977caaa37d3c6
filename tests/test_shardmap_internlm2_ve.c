/*
 * test_shardmap_internlm2_ve.c — InternLM2-VE (InternLM2VEForCausalLM, remote code: the language
 * model of OpenGVLab/Mono-InternVL-2B, model_type internlm2) cut as vLLM's internlm2_ve.py loads
 * it: InternLM2's layers (attention.wqkv per kv group as each rank's [q_r; k_r; v_r], wo by
 * columns, feed_forward.w1 / w3 into gate_up_proj, w2 by columns) plus the visual expert
 * feed_forward_ve cut as feed_forward (w1 / w3 into feed_forward_ve.gate_up_proj, w2 by
 * columns, quantized alike). Hand-computed slices at TP 2 and TP 4 (2 q heads a kv group, as
 * Mono-InternVL-2B's 16 over 8), int8-channel and fp8-channel layouts, coverage over TP 1..8,
 * InternLM2Config's defaults under this architecture and the refusals. Seeds fixed and printed.
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
#define VE_CFG_RAW(arch, extra)                                                                    \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"internlm2\","                          \
	"\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"                 \
	"\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define VE_CFG(extra) VE_CFG_RAW("InternLM2VEForCausalLM", ",\"bias\":false" extra)
#define KV4           ",\"num_key_value_heads\":4"
#define L1            "model.layers.1."
#define WQKV          L1 "attention.wqkv.weight"
#define WO            L1 "attention.wo.weight"
#define GU            L1 "feed_forward.gate_up_proj.weight"
#define W1            L1 "feed_forward.w1.weight"
#define W3            L1 "feed_forward.w3.weight"
#define W2            L1 "feed_forward.w2.weight"
#define VGU           L1 "feed_forward_ve.gate_up_proj.weight"
#define VW1           L1 "feed_forward_ve.w1.weight"
#define VW3           L1 "feed_forward_ve.w3.weight"
#define VW2           L1 "feed_forward_ve.w2.weight"
#define EMB           "model.tok_embeddings.weight"

/* The model with kv kv heads; output.weight when head; feed_forward_ve when ve. */
static tm_model *tm_ve(int64_t kv, int head, int ve)
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
	                     {"feed_forward.w2.weight", HID, I},
	                     {"feed_forward_ve.w1.weight", I, HID},
	                     {"feed_forward_ve.w3.weight", I, HID},
	                     {"feed_forward_ve.w2.weight", HID, I}};
	tm_layers(m, TM_L, 2, L, TM_NLEAVES(L) - (ve ? 0 : 3), 0);
	return m;
}

/* TP 2 and TP 4 with 4 kv groups of 2 q heads (64 rows a group: q q k v), by hand: at TP 2 rank
 * r holds groups 2r and 2r + 1 (q rows 64g + [0, 32) at 32m, k 64g + 32 at 64 + 16m, v 64g + 48
 * at 96 + 16m for g = 2r + m); at TP 4 rank r holds group r whole in its own order. The visual
 * expert: feed_forward_ve.gate_up_proj [w1_ve rows r*I/T..; w3_ve's], w2_ve by columns, each
 * from feed_forward_ve's own tensors (not feed_forward's). */
static void test_ve_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_ve(4, 1, 1), VE_CFG(KV4), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "internlm2_ve");
		for (uint32_t r = 0; r < T; r++) {
			int64_t hl = 8 / T, ng = 4 / T;
			shp(&f, r, WQKV, 2, (hl + 2 * ng) * HD, HID, 0);
			for (int64_t m = 0; m < ng; m++) {
				int64_t g = ng * r + m;
				rows_at(&f, r, WQKV, 2 * HD * m, WQKV, 64 * g, 2 * HD);
				rows_at(&f, r, WQKV, hl * HD + HD * m, WQKV, 64 * g + 32, HD);
				rows_at(&f, r, WQKV, (hl + ng) * HD + HD * m, WQKV, 64 * g + 48,
				        HD);
			}
			fx_qkv_grouped_is(&f, r, T, 8, 4, HD, WQKV);
			cols_of(&f, r, T, WO, WO, HID, HID);
			shp(&f, r, GU, 2, 2 * I / T, HID, 0);
			fx_gate_up_is(&f, r, T, GU, W1, W3, I);
			cols_of(&f, r, T, W2, W2, HID, I);
			shp(&f, r, VGU, 2, 2 * I / T, HID, 0);
			rows_at(&f, r, VGU, 0, VW1, r * (I / T), I / T);
			rows_at(&f, r, VGU, I / T, VW3, r * (I / T), I / T);
			shp(&f, r, VW2, 2, HID, I / T, 0);
			cols_of(&f, r, T, VW2, VW2, HID, I);
			repl(&f, r, L1 "attention_norm.weight");
			repl(&f, r, L1 "ffn_norm.weight");
			repl(&f, r, "model.norm.weight");
			assert_true(tm_ix(f.p, r, VW1) < 0 && tm_ix(f.p, r, VW3) < 0);
		}
		int64_t Vl = 1024 / T;
		rows_are(&f, T - 1, "output.weight", 0, "output.weight", Vl * (T - 1),
		         1000 - Vl * (T - 1));
		rows_are(&f, 0, EMB, 0, EMB, 0, Vl);
		fx_close(&f);
	}
}

/* TP 8: one q head a rank, each kv head on two ranks; tied: output not emitted and listed as
 * skipped, the visual expert still cut. */
static void test_ve_replicated(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_ve(4, 1, 1), VE_CFG(KV4 ",\"tie_word_embeddings\":true"), 8, 1, 0, true);
	for (uint32_t r = 0; r < 8; r++) {
		shp(&f, r, WQKV, 2, 3 * HD, HID, 0);
		fx_qkv_grouped_is(&f, r, 8, 8, 4, HD, WQKV);
		fx_gate_up_is(&f, r, 8, VGU, VW1, VW3, I);
		cols_of(&f, r, 8, VW2, VW2, HID, I);
		assert_true(tm_ix(f.p, r, "output.weight") < 0);
	}
	assert_true(fx_skipped(&f, "output.weight"));
	fx_close(&f);
}

static const char *const ve_keep[] = {EMB, "output.weight", "model.norm.weight",
                                      L1 "attention_norm.weight", L1 "ffn_norm.weight"};
static const char *const ve_quant[] = {WQKV, WO, GU, W2, VGU, VW2};

/* int8-channel at TP 2: wqkv / wo / both MLPs quantized per row, the embedding, output and norms
 * BF16; rank 1's feed_forward_ve.gate_up_proj codes are w1_ve's rows 96.. then w3_ve's, its w2_ve
 * codes w2_ve's columns 96... fp8-channel at TP 4: the same split. */
static void test_ve_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_ve(4, 1, 1), VE_CFG(KV4), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(ve_keep), FX_N(ve_quant));
	fx_rows_int8_is(&f, 1, VGU, 0, VW1, 96, 96, HID);
	fx_rows_int8_is(&f, 1, VGU, 96, VW3, 96, 96, HID);
	fx_cols_int8_is(&f, 1, 2, VW2, HID, I);
	fx_close(&f);
	fx_open_quant(&f, tm_ve(4, 1, 1), VE_CFG(KV4), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(ve_keep), FX_N(ve_quant));
	fx_close(&f);
}

static void test_ve_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_ve(4, 1, 1), VE_CFG(KV4), 4, lays, 3); /* KV < T at 8: the test above */
	coverage(tm_ve(8, 1, 1), VE_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take InternLM2Config's defaults under this architecture too (model_type
 * internlm2): num_key_value_heads the heads, untied (output required), vocab 103168, bias true
 * (refused). */
static void test_ve_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_ve(8, 1, 1), VE_CFG(""), 2, 1, 0, false);
	shp(&f, 1, WQKV, 2, 12 * HD, HID, 0);
	assert_true(tm_ix(f.p, 1, "output.weight") >= 0);
	fx_close(&f);
	fx_refused(tm_ve(8, 0, 1), VE_CFG(""), WT_ENOTFOUND, "output.weight", "missing");
	fx_refused(tm_ve(8, 1, 1),
	           "{\"architectures\":[\"InternLM2VEForCausalLM\"],\"model_type\":\"internlm2\","
	           "\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"
	           "\"num_hidden_layers\":2,\"bias\":false}",
	           WT_ESHAPE, "[103168, 128]", "fix config.json");
	fx_refused(tm_ve(4, 1, 1), VE_CFG_RAW("InternLM2VEForCausalLM", KV4), WT_EUNSUPPORTED,
	           "bias is true", "default");
}

static void test_ve_errors(void **state)
{
	(void)state;
	/* the visual expert is required (vLLM's InternLM2VEDecoderLayer builds it) ... */
	tm_model *m = tm_ve(4, 1, 1);
	tm_remove(m, VW3);
	fx_refused(m, VE_CFG(KV4), WT_ENOTFOUND, "feed_forward_ve.w3", "missing");
	fx_refused(tm_ve(4, 1, 0), VE_CFG(KV4), WT_ENOTFOUND, "feed_forward_ve", "missing");
	/* ... and InternLM2ForCausalLM's own (internlm2.py has no feed_forward_ve) */
	fx_refused(tm_ve(4, 1, 1), VE_CFG_RAW("InternLM2ForCausalLM", ",\"bias\":false" KV4),
	           WT_EUNSUPPORTED, "feed_forward_ve", "unknown");
	m = tm_ve(4, 1, 1);
	tm_add2(m, L1 "feed_forward_ve.w2.bias", HID, 0);
	fx_refused(m, VE_CFG(KV4), WT_EUNSUPPORTED, "feed_forward_ve.w2.bias", "unknown");
	m = tm_ve(4, 1, 1);
	tm_remove(m, VW2);
	tm_add2(m, VW2, HID, 96);
	fx_refused(m, VE_CFG(KV4), WT_ESHAPE, "feed_forward_ve.w2", "[128, 192]");
	fx_refused(tm_ve(4, 1, 1), VE_CFG_RAW("InternLM2VEForCausalLM", KV4 ",\"bias\":true"),
	           WT_EUNSUPPORTED, "bias is true", "\"bias\": false");
	fx_refused(tm_ve(4, 1, 1), VE_CFG(KV4 ",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act 'gelu'", "silu");
	fx_refused(tm_ve(4, 1, 1), VE_CFG(KV4 ",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "remove it");
	fx_refused(tm_ve(4, 1, 1), VE_CFG(",\"num_key_value_heads\":3"), WT_ECORRUPT,
	           "num_key_value_heads 3", "evenly");
	fx_refused_tp(tm_ve(4, 1, 1), VE_CFG(KV4), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_ve(4, 1, 1), VE_CFG(KV4), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ve_slices),   cmocka_unit_test(test_ve_replicated),
	    cmocka_unit_test(test_ve_quant),    cmocka_unit_test(test_ve_coverage),
	    cmocka_unit_test(test_ve_defaults), cmocka_unit_test(test_ve_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
