/*
 * test_shardmap_plamo3.c — PLaMo 3 (Plamo3ForCausalLM, remote code: pfnet/plamo-3-*) cut as
 * vLLM's plamo3.py loads it: the layers under model.layers.layers.{i}.; mixer.qkv_proj fused in
 * the checkpoint ([q; k; v] rows) cut into the rank's [q_r; k_r; v_r] (kv heads replicated
 * when fewer than T), mixer.o_proj by columns, mlp.gate_up_proj ([gate; up]) into
 * [gate_r; up_r], mlp.down_proj by columns; q_norm / k_norm [d] and the four norms of each
 * layer replicated as stored, never quantized; embed_tokens / lm_head by vocabulary rows,
 * lm_head dropped when tied (Plamo3Config's default). Hand-computed slices at TP 2 / 4 / 8,
 * int8-channel TP 2 and fp8-channel TP 4 layouts, coverage over TP 1..8, Plamo3Config's
 * defaults and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0053ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_quant.h"

/* hid 128, V 1008 (padded to 1024), I 192, 2 layers; H 8 heads of head_dim 32 over KV */
#define HID 128
#define I   192
#define D   32
#define P3_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"Plamo3ForCausalLM\"],\"model_type\":\"plamo3\"" extra "}"
#define DIMSV(kv, v)                                                                               \
	",\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":" #kv              \
	",\"head_dim\":32,\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":" #v
#define DIMS(kv)      DIMSV(kv, 1008)
#define UNTIED        ",\"tie_word_embeddings\":false"
#define P3_CFG(extra) P3_CFG_RAW(DIMS(2) UNTIED extra)
#define P3_CFG_KV(kv) P3_CFG_RAW(DIMS(kv) UNTIED)
#define L1            "model.layers.layers.1."
#define EMB           "model.embed_tokens.weight"
#define QKV           L1 "mixer.qkv_proj.weight"
#define GU            L1 "mlp.gate_up_proj.weight"
#define N1(x)         L1 x ".weight"

/* PLaMo 3's tensors with H 8 heads of D and KV kv heads; lm_head.weight when head. */
static tm_model *tm_p3(int64_t KV, int head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1008, HID, head);
	const tm_leaf L[] = {{"pre_mixer_norm.weight", HID, 0, 0},
	                     {"post_mixer_norm.weight", HID, 0, 0},
	                     {"pre_mlp_norm.weight", HID, 0, 0},
	                     {"post_mlp_norm.weight", HID, 0, 0},
	                     {"mixer.q_norm.weight", D, 0, 0},
	                     {"mixer.k_norm.weight", D, 0, 0},
	                     {"mixer.qkv_proj.weight", (8 + 2 * KV) * D, HID, 0},
	                     {"mixer.o_proj.weight", HID, 8 * D, 0},
	                     {"mlp.gate_up_proj.weight", 2 * I, HID, 0},
	                     {"mlp.down_proj.weight", HID, I, 0}};
	tm_layers(m, "model.layers.layers.%d.", 2, L, TM_NLEAVES(L), 0);
	return m;
}

/* Rank r of T: qkv_proj [q_r; k_r; v_r] of the checkpoint's [q; k; v] rows (q heads
 * [r*8/T, +8/T), then kv heads [r*KV/T, ...) or, KV < T, kv head r / (T/KV) of k at row 8*D and
 * of v at (8 + KV)*D), o_proj by columns, gate_up [gate_r; up_r] of [gate; up] rows, down_proj by
 * columns, the six norms whole. */
static void p3_rank_is(const fx *f, uint32_t r, uint32_t T, int64_t KV)
{
	int64_t hl = 8 / T, kvl = KV >= T ? KV / T : 1, g0 = KV >= T ? r * kvl : r / (T / KV);
	shp(f, r, QKV, 2, (hl + 2 * kvl) * D, HID, 0);
	rows_at(f, r, QKV, 0, QKV, r * hl * D, hl * D);
	rows_at(f, r, QKV, hl * D, QKV, (8 + g0) * D, kvl * D);
	rows_at(f, r, QKV, (hl + kvl) * D, QKV, (8 + KV + g0) * D, kvl * D);
	cols_of(f, r, T, L1 "mixer.o_proj.weight", L1 "mixer.o_proj.weight", HID, 8 * D);
	shp(f, r, GU, 2, 2 * (I / T), HID, 0);
	rows_at(f, r, GU, 0, GU, r * (I / T), I / T);
	rows_at(f, r, GU, I / T, GU, I + r * (I / T), I / T);
	cols_of(f, r, T, L1 "mlp.down_proj.weight", L1 "mlp.down_proj.weight", HID, I);
	static const char *const norms[] = {"pre_mixer_norm", "post_mixer_norm", "pre_mlp_norm",
	                                    "post_mlp_norm",  "mixer.q_norm",    "mixer.k_norm"};
	for (size_t k = 0; k < TM_NLEAVES(norms); k++) {
		char n[128];
		snprintf(n, sizeof(n), L1 "%s.weight", norms[k]);
		repl(f, r, n);
	}
	repl(f, r, "model.norm.weight");
}

/* TP 2 (a kv head a rank), TP 4 (kv heads replicated in pairs), TP 8 (a head a rank, each kv
 * head over four ranks), by hand; vocabulary rows with the padded tail (1008 -> 1024). */
static void test_plamo3_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 8; T *= 2) {
		fx f;
		fx_open(&f, tm_p3(2, 1), P3_CFG(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "plamo3");
		for (uint32_t r = 0; r < T; r++) {
			p3_rank_is(&f, r, T, 2);
			fx_vocab_is(&f, r, T, EMB, 1008, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1008, 1024, HID);
		}
		fx_close(&f);
	}
}

/* MHA at TP 4 (KV 8: two kv heads a rank); tied (Plamo3Config's default, and on request) drops
 * lm_head. */
static void test_plamo3_heads(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_p3(8, 1), P3_CFG_KV(8), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		p3_rank_is(&f, r, 4, 8);
	fx_close(&f);
	fx_open(&f, tm_p3(2, 1), P3_CFG_RAW(DIMS(2)), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0 && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
	fx_open(&f, tm_p3(2, 0), P3_CFG_RAW(DIMS(2) ",\"tie_word_embeddings\":true"), 2, 1, 0,
	        true);
	assert_true(tm_ix(f.p, 1, "lm_head.weight") < 0);
	fx_close(&f);
}

static const char *const p3_keep[] = {EMB,
                                      "lm_head.weight",
                                      "model.norm.weight",
                                      N1("pre_mixer_norm"),
                                      N1("post_mixer_norm"),
                                      N1("pre_mlp_norm"),
                                      N1("post_mlp_norm"),
                                      N1("mixer.q_norm"),
                                      N1("mixer.k_norm")};
static const char *const p3_quant[] = {QKV, L1 "mixer.o_proj.weight", GU,
                                       L1 "mlp.down_proj.weight"};

/* int8-channel at TP 2: qkv_proj / o_proj / gate_up_proj / down_proj quantized per row, the
 * norms, embedding and lm_head BF16; rank 1's qkv_proj codes are the checkpoint's q rows
 * 128..255 and kv head 1's k / v rows, its gate_up codes gate and up rows 96..191, its o_proj /
 * down_proj codes its columns. fp8-channel at TP 4: the same split. */
static void test_plamo3_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_p3(2, 1), P3_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(p3_keep),
	              FX_N(p3_quant));
	fx_rows_int8_is(&f, 1, QKV, 0, QKV, 4 * D, 4 * D, HID);
	fx_rows_int8_is(&f, 1, QKV, 4 * D, QKV, 9 * D, D, HID);
	fx_rows_int8_is(&f, 1, QKV, 5 * D, QKV, 11 * D, D, HID);
	fx_rows_int8_is(&f, 1, GU, 0, GU, I / 2, I / 2, HID);
	fx_rows_int8_is(&f, 1, GU, I / 2, GU, I + I / 2, I / 2, HID);
	fx_cols_int8_is(&f, 1, 2, L1 "mixer.o_proj.weight", HID, 8 * D);
	fx_cols_int8_is(&f, 1, 2, L1 "mlp.down_proj.weight", HID, I);
	fx_close(&f);
	fx_open_quant(&f, tm_p3(2, 1), P3_CFG(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(p3_keep),
	              FX_N(p3_quant));
	fx_close(&f);
}

static void test_plamo3_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_p3(2, 1), P3_CFG(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_p3(8, 1), P3_CFG_KV(8), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_p3(2, 0), P3_CFG_RAW(DIMS(2)), 2, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take Plamo3Config's defaults: tied (lm_head skipped), num_key_value_heads 4,
 * head_dim 128, vocab_size 32000, intermediate_size 13312, 32 layers. */
static void test_plamo3_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_p3(2, 1), P3_CFG_RAW(DIMS(2)), 2, 1, 0, true);
	assert_true(fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
	fx_refused(tm_p3(2, 1),
	           P3_CFG_RAW(",\"hidden_size\":128,\"num_attention_heads\":8,\"head_dim\":32,"
	                      "\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                      "\"vocab_size\":1008" UNTIED),
	           WT_ESHAPE, "qkv_proj.weight", "[512, 128]");
	fx_refused(tm_p3(2, 1),
	           P3_CFG_RAW(",\"hidden_size\":128,\"num_attention_heads\":8,"
	                      "\"num_key_value_heads\":2,\"num_hidden_layers\":2,"
	                      "\"intermediate_size\":192,\"vocab_size\":1008" UNTIED),
	           WT_ESHAPE, "k_norm.weight", "[128]");
	fx_refused(tm_p3(2, 1),
	           P3_CFG_RAW(",\"hidden_size\":128,\"num_attention_heads\":8,"
	                      "\"num_key_value_heads\":2,\"head_dim\":32,\"num_hidden_layers\":2,"
	                      "\"intermediate_size\":192" UNTIED),
	           WT_ESHAPE, "[32000, 128]", "fix config.json");
	fx_refused(tm_p3(2, 1),
	           P3_CFG_RAW(",\"hidden_size\":128,\"num_attention_heads\":8,"
	                      "\"num_key_value_heads\":2,\"head_dim\":32,\"num_hidden_layers\":2,"
	                      "\"vocab_size\":1008" UNTIED),
	           WT_ESHAPE, "13312", "fix config.json");
	fx_refused(tm_p3(2, 1),
	           P3_CFG_RAW(",\"hidden_size\":128,\"num_attention_heads\":8,"
	                      "\"num_key_value_heads\":2,\"head_dim\":32,"
	                      "\"intermediate_size\":192,\"vocab_size\":1008" UNTIED),
	           WT_ENOTFOUND, "model.layers.layers.2", "missing");
}

static void test_plamo3_errors(void **state)
{
	(void)state;
	fx_refused(tm_p3(2, 1), P3_CFG(",\"hidden_activation\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_activation", "swiglu");
	fx_refused(tm_p3(2, 1), P3_CFG(",\"attention_bias\":true"), WT_EUNSUPPORTED,
	           "attention_bias is true", "without a bias");
	fx_refused(tm_p3(2, 1), P3_CFG(",\"rope_scaling_factor\":2.0"), WT_EUNSUPPORTED,
	           "rope_scaling_factor 2", "YaRN");
	fx_refused(tm_p3(2, 1), P3_CFG(",\"sliding_window_pattern\":0"), WT_ECORRUPT,
	           "sliding_window_pattern", ">= 1");
	fx_refused(tm_p3(2, 1), P3_CFG(",\"window_size\":0"), WT_ECORRUPT, "window_size", ">= 1");
	fx_refused(tm_p3(2, 1), P3_CFG(",\"rope_local_theta\":-1"), WT_ECORRUPT, "rope_local_theta",
	           "");
	fx_refused(tm_p3(2, 1),
	           P3_CFG(",\"window_size\":4,\"sliding_window_pattern\":2,"
	                  "\"interleaved_sliding_window\":[4,4]"),
	           WT_EUNSUPPORTED, "interleaved_sliding_window[1]", "null");
	fx_refused(tm_p3(2, 1), P3_CFG(",\"interleaved_sliding_window\":[2048]"), WT_ECORRUPT,
	           "interleaved_sliding_window", "num_hidden_layers (2)");
	fx_refused(tm_p3(2, 1), P3_CFG_RAW(DIMSV(2, 1000) UNTIED), WT_EUNSUPPORTED,
	           "vocab_size 1000", "multiple of 16");
	tm_model *m = tm_p3(2, 1);
	tm_remove(m, N1("post_mlp_norm"));
	fx_refused(m, P3_CFG(""), WT_ENOTFOUND, N1("post_mlp_norm"), "missing");
	m = tm_p3(2, 1);
	tm_remove(m, N1("mixer.k_norm"));
	fx_refused(m, P3_CFG(""), WT_ENOTFOUND, N1("mixer.k_norm"), "missing");
	m = tm_p3(2, 1);
	tm_add2(m, L1 "mixer.qkv_proj.bias", 12 * D, 0);
	fx_refused(m, P3_CFG(""), WT_EUNSUPPORTED, "qkv_proj.bias", "unknown tensor");
	fx_refused_tp(tm_p3(2, 1), P3_CFG(""), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_p3(2, 1), P3_CFG(""), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plamo3_slices),   cmocka_unit_test(test_plamo3_heads),
	    cmocka_unit_test(test_plamo3_quant),    cmocka_unit_test(test_plamo3_coverage),
	    cmocka_unit_test(test_plamo3_defaults), cmocka_unit_test(test_plamo3_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
