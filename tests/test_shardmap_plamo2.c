/*
 * test_shardmap_plamo2.c — PLaMo 2 (Plamo2ForCausalLM, remote code: pfnet/plamo-2-1b,
 * plamo-2-8b, plamo-2-translate) cut as vLLM's plamo2.py loads it: the layers under
 * model.layers.layers.{i}., layer i Mamba unless i % mamba_step == mamba_step / 2 (attention);
 * the Mamba mixer's in_proj stored per head as [gate_h; x_h] cut into the rank's [gate_r; x_r],
 * conv1d / dt_proj / A_log / D / dt_bias by heads, bcdt_proj / out_proj by columns,
 * dt_norm_weight / B_norm_weight / C_norm_weight whole; the attention's qkv_proj fused in the
 * checkpoint into [q_r; k_r; v_r], q_weight [H, d] by heads, k_weight [KV, d] by kv heads
 * (whole for one kv head), o_proj by columns; four sandwich norms whole; gate_up_proj
 * [gate_r; up_r], down_proj by columns; lm_head dropped when tied (Plamo2Config's default).
 * Hand-computed slices at TP 2 / 4 / 8, int8-channel TP 2 and fp8-channel TP 4 layouts,
 * coverage over TP 1..8, Plamo2Config's defaults and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0052ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_quant.h"

/* hid 64, V 1000 (padded to 1024 at TP 8), I 128, 4 layers (mamba_step 2: 0 and 2 Mamba, 1
 * and 3 attention); attention H 8 of d 16 over KV; Mamba 8 heads of 16 (Im 128), state N 16,
 * conv 4, time_step_rank R = max(64, 64 / 16) = 64 */
#define HID 64
#define I   128
#define D   16
#define IM  128
#define N   16
#define R   64
#define P2_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"Plamo2ForCausalLM\"],\"model_type\":\"plamo2\"" extra "}"
#define DIMS(kv)                                                                                   \
	",\"hidden_size\":64,\"num_attention_heads\":8,\"num_key_value_heads\":" #kv               \
	",\"hidden_size_per_head\":16,\"num_hidden_layers\":4,\"intermediate_size\":128,"          \
	"\"vocab_size\":1000,\"mamba_num_heads\":8,\"mamba_d_state\":16,\"mamba_d_conv\":4"
#define UNTIED        ",\"tie_word_embeddings\":false"
#define P2_CFG(extra) P2_CFG_RAW(DIMS(1) UNTIED extra)
#define P2_CFG_KV(kv) P2_CFG_RAW(DIMS(kv) UNTIED)
#define M0            "model.layers.layers.0.mixer."
#define A1            "model.layers.layers.1.mixer."
#define INP           M0 "in_proj.weight"
#define QKV           A1 "qkv_proj.weight"
#define GU            "model.layers.layers.1.mlp.gate_up_proj.weight"
#define EMB           "model.embed_tokens.weight"

/* PLaMo 2's tensors: 4 layers, attention at the layers of bit mask attn (the others Mamba), KV
 * kv heads, lm_head.weight when head. */
static tm_model *tm_p2m(int64_t KV, int head, unsigned attn)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, head);
	const tm_leaf L[] = {{"pre_mixer_norm.weight", HID, 0, 0},
	                     {"post_mixer_norm.weight", HID, 0, 0},
	                     {"pre_mlp_norm.weight", HID, 0, 0},
	                     {"post_mlp_norm.weight", HID, 0, 0},
	                     {"mlp.gate_up_proj.weight", 2 * I, HID, 0},
	                     {"mlp.down_proj.weight", HID, I, 0},
	                     {"mixer.in_proj.weight", 2 * IM, HID, 1},
	                     {"mixer.bcdt_proj.weight", R + 2 * N, IM, 1},
	                     {"mixer.dt_proj.weight", 8, R, 1},
	                     {"mixer.A_log", 8, 0, 1},
	                     {"mixer.D", 8, 0, 1},
	                     {"mixer.dt_bias", 8, 0, 1},
	                     {"mixer.dt_norm_weight", R, 0, 1},
	                     {"mixer.B_norm_weight", N, 0, 1},
	                     {"mixer.C_norm_weight", N, 0, 1},
	                     {"mixer.out_proj.weight", HID, IM, 1},
	                     {"mixer.qkv_proj.weight", (8 + 2 * KV) * D, HID, 2},
	                     {"mixer.q_weight", 8, D, 2},
	                     {"mixer.k_weight", KV, D, 2},
	                     {"mixer.o_proj.weight", HID, 8 * D, 2}};
	char b[200];
	for (int i = 0; i < 4; i++) {
		snprintf(b, sizeof(b), "model.layers.layers.%d.mixer.conv1d.weight", i);
		int kind = (attn >> i) & 1u ? 2 : 1;
		if (kind == 1) /* [Im, 1, K] */
			tm_add(m, b, WT_DTYPE_INVALID, 3, IM, 1, 4);
		char fmt[64];
		snprintf(fmt, sizeof(fmt), "model.layers.layers.%d.", i);
		for (size_t k = 0; k < TM_NLEAVES(L); k++) {
			if (L[k].when != 0 && L[k].when != kind)
				continue;
			snprintf(b, sizeof(b), "%s%s", fmt, L[k].leaf);
			tm_add2(m, b, L[k].a, L[k].b);
		}
	}
	return m;
}

/* mamba_step 2's layers: Mamba at 0 and 2, attention at 1 and 3. */
static tm_model *tm_p2(int64_t KV, int head)
{
	return tm_p2m(KV, head, 0xau);
}

/* Rank r of T's Mamba mixer of layer 0: in_proj [gate_r; x_r] gathered head by head from the
 * per-head [gate_h; x_h] rows, conv1d rows, dt_proj rows and A_log / D / dt_bias of its heads,
 * bcdt_proj / out_proj by columns, the mixer's three norms whole. */
static void p2_mamba_is(const fx *f, uint32_t r, uint32_t T)
{
	int64_t hl = 8 / T;
	shp(f, r, INP, 2, 2 * hl * D, HID, 0);
	for (int64_t part = 0; part < 2; part++)
		for (int64_t h = 0; h < hl; h++)
			rows_at(f, r, INP, (part * hl + h) * D, INP, (2 * (r * hl + h) + part) * D,
			        D);
	shp(f, r, M0 "conv1d.weight", 3, hl * D, 1, 4);
	rows_at(f, r, M0 "conv1d.weight", 0, M0 "conv1d.weight", r * hl * D, hl * D);
	shp(f, r, M0 "dt_proj.weight", 2, hl, R, 0);
	rows_at(f, r, M0 "dt_proj.weight", 0, M0 "dt_proj.weight", r * hl, hl);
	static const char *const per_head[] = {M0 "A_log", M0 "D", M0 "dt_bias"};
	for (size_t k = 0; k < TM_NLEAVES(per_head); k++) {
		shp(f, r, per_head[k], 1, hl, 0, 0);
		rows_at(f, r, per_head[k], 0, per_head[k], r * hl, hl);
	}
	cols_of(f, r, T, M0 "bcdt_proj.weight", M0 "bcdt_proj.weight", R + 2 * N, IM);
	cols_of(f, r, T, M0 "out_proj.weight", M0 "out_proj.weight", HID, IM);
	repl(f, r, M0 "dt_norm_weight");
	repl(f, r, M0 "B_norm_weight");
	repl(f, r, M0 "C_norm_weight");
}

/* Rank r of T's attention of layer 1 with KV kv heads (KV 1: replicated; else KV >= T) and the
 * layer's MLP and norms. */
static void p2_attn_is(const fx *f, uint32_t r, uint32_t T, int64_t KV)
{
	int64_t hl = 8 / T, kvl = KV >= T ? KV / T : 1, g0 = KV >= T ? r * kvl : 0;
	shp(f, r, QKV, 2, (hl + 2 * kvl) * D, HID, 0);
	rows_at(f, r, QKV, 0, QKV, r * hl * D, hl * D);
	rows_at(f, r, QKV, hl * D, QKV, (8 + g0) * D, kvl * D);
	rows_at(f, r, QKV, (hl + kvl) * D, QKV, (8 + KV + g0) * D, kvl * D);
	shp(f, r, A1 "q_weight", 2, hl, D, 0);
	rows_at(f, r, A1 "q_weight", 0, A1 "q_weight", r * hl, hl);
	shp(f, r, A1 "k_weight", 2, kvl, D, 0);
	rows_at(f, r, A1 "k_weight", 0, A1 "k_weight", g0, kvl);
	cols_of(f, r, T, A1 "o_proj.weight", A1 "o_proj.weight", HID, 8 * D);
	shp(f, r, GU, 2, 2 * (I / T), HID, 0);
	rows_at(f, r, GU, 0, GU, r * (I / T), I / T);
	rows_at(f, r, GU, I / T, GU, I + r * (I / T), I / T);
	cols_of(f, r, T, "model.layers.layers.1.mlp.down_proj.weight",
	        "model.layers.layers.1.mlp.down_proj.weight", HID, I);
	static const char *const norms[] = {"pre_mixer_norm", "post_mixer_norm", "pre_mlp_norm",
	                                    "post_mlp_norm"};
	for (size_t k = 0; k < TM_NLEAVES(norms); k++) {
		char n[128];
		snprintf(n, sizeof(n), "model.layers.layers.1.%s.weight", norms[k]);
		repl(f, r, n);
	}
	repl(f, r, "model.norm.weight");
}

/* TP 2 / 4 / 8 with one kv head (plamo-2-1b's: replicated on every rank), by hand; vocabulary
 * rows with the padded tail. */
static void test_plamo2_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 8; T *= 2) {
		fx f;
		fx_open(&f, tm_p2(1, 1), P2_CFG(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "plamo2");
		for (uint32_t r = 0; r < T; r++) {
			p2_mamba_is(&f, r, T);
			p2_attn_is(&f, r, T, 1);
			fx_vocab_is(&f, r, T, EMB, 1000, T == 8 ? 1024 : 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
		}
		/* layer 1 is attention, layer 2 Mamba: neither has the other's tensors */
		assert_true(tm_ix(f.p, 0, A1 "in_proj.weight") < 0);
		assert_true(tm_ix(f.p, 0, "model.layers.layers.2.mixer.qkv_proj.weight") < 0);
		fx_close(&f);
	}
}

/* KV 4 at TP 2 / 4 (k_weight's rows by kv heads, as qkv_proj's); tied (Plamo2Config's default,
 * and on request) drops lm_head. */
static void test_plamo2_heads(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_p2(4, 1), P2_CFG_KV(4), T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++)
			p2_attn_is(&f, r, T, 4);
		fx_close(&f);
	}
	fx f;
	fx_open(&f, tm_p2(1, 1), P2_CFG_RAW(DIMS(1)), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0 && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
	fx_open(&f, tm_p2(1, 0), P2_CFG_RAW(DIMS(1) ",\"tie_word_embeddings\":true"), 2, 1, 0,
	        true);
	assert_true(tm_ix(f.p, 1, "lm_head.weight") < 0);
	fx_close(&f);
}

static const char *const p2_keep[] = {EMB,
                                      "lm_head.weight",
                                      "model.norm.weight",
                                      "model.layers.layers.1.pre_mixer_norm.weight",
                                      "model.layers.layers.1.post_mixer_norm.weight",
                                      "model.layers.layers.1.pre_mlp_norm.weight",
                                      "model.layers.layers.1.post_mlp_norm.weight",
                                      M0 "conv1d.weight",
                                      M0 "A_log",
                                      M0 "D",
                                      M0 "dt_bias",
                                      M0 "dt_norm_weight",
                                      M0 "B_norm_weight",
                                      M0 "C_norm_weight",
                                      A1 "q_weight",
                                      A1 "k_weight"};
static const char *const p2_quant[] = {INP,
                                       M0 "bcdt_proj.weight",
                                       M0 "dt_proj.weight",
                                       M0 "out_proj.weight",
                                       QKV,
                                       A1 "o_proj.weight",
                                       GU,
                                       "model.layers.layers.1.mlp.down_proj.weight"};

/* int8-channel at TP 2: in_proj / bcdt_proj / dt_proj / out_proj / qkv_proj / o_proj /
 * gate_up_proj / down_proj quantized per row, conv1d, A_log, D, dt_bias, every norm, q_weight /
 * k_weight, embedding and lm_head BF16; rank 1's in_proj codes are heads 4..7's gate rows then
 * their x rows, its qkv_proj codes q rows 64..127 and the one kv head's k / v rows, its
 * bcdt_proj / out_proj / o_proj codes its columns. fp8-channel at TP 4: the same split. */
static void test_plamo2_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_p2(1, 1), P2_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(p2_keep),
	              FX_N(p2_quant));
	for (int64_t h = 0; h < 4; h++) {
		fx_rows_int8_is(&f, 1, INP, h * D, INP, (2 * (4 + h)) * D, D, HID);
		fx_rows_int8_is(&f, 1, INP, (4 + h) * D, INP, (2 * (4 + h) + 1) * D, D, HID);
	}
	fx_rows_int8_is(&f, 1, M0 "dt_proj.weight", 0, M0 "dt_proj.weight", 4, 4, R);
	fx_rows_int8_is(&f, 1, QKV, 0, QKV, 4 * D, 4 * D, HID);
	fx_rows_int8_is(&f, 1, QKV, 4 * D, QKV, 8 * D, D, HID);
	fx_rows_int8_is(&f, 1, QKV, 5 * D, QKV, 9 * D, D, HID);
	fx_cols_int8_is(&f, 1, 2, M0 "bcdt_proj.weight", R + 2 * N, IM);
	fx_cols_int8_is(&f, 1, 2, M0 "out_proj.weight", HID, IM);
	fx_cols_int8_is(&f, 1, 2, A1 "o_proj.weight", HID, 8 * D);
	fx_close(&f);
	fx_open_quant(&f, tm_p2(1, 1), P2_CFG(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(p2_keep),
	              FX_N(p2_quant));
	fx_close(&f);
}

static void test_plamo2_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_p2(1, 1), P2_CFG(""), 1, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_p2(8, 1), P2_CFG_KV(8), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_p2(1, 0), P2_CFG_RAW(DIMS(1)), 1, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take Plamo2Config's defaults: tied (lm_head skipped), num_key_value_heads 4,
 * hidden_size_per_head 128, mamba_num_heads 64, mamba_d_state 64, vocab_size 32000, 32 layers,
 * mamba_step 2 (with mamba_step 4, layer 2 is the attention one, layer 1 Mamba). */
static void test_plamo2_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_p2(1, 1), P2_CFG_RAW(DIMS(1)), 2, 1, 0, true);
	assert_true(fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
	fx_refused(tm_p2(1, 1),
	           P2_CFG_RAW(",\"hidden_size\":64,\"num_attention_heads\":8,"
	                      "\"hidden_size_per_head\":16,\"num_hidden_layers\":4,"
	                      "\"intermediate_size\":128,\"vocab_size\":1000,\"mamba_num_heads\":8,"
	                      "\"mamba_d_state\":16,\"mamba_d_conv\":4" UNTIED),
	           WT_ESHAPE, "k_weight", "[4, 16]");
	fx_refused(tm_p2(1, 1),
	           P2_CFG_RAW(",\"hidden_size\":64,\"num_attention_heads\":8,"
	                      "\"num_key_value_heads\":1,\"num_hidden_layers\":4,"
	                      "\"intermediate_size\":128,\"vocab_size\":1000,\"mamba_num_heads\":8,"
	                      "\"mamba_d_state\":16,\"mamba_d_conv\":4" UNTIED),
	           WT_ESHAPE, "bcdt_proj.weight", "[96, 1024]");
	fx_refused(tm_p2(1, 1),
	           P2_CFG_RAW(",\"hidden_size\":64,\"num_attention_heads\":8,"
	                      "\"num_key_value_heads\":1,\"hidden_size_per_head\":16,"
	                      "\"num_hidden_layers\":4,\"intermediate_size\":128,"
	                      "\"vocab_size\":1000,\"mamba_d_state\":16,\"mamba_d_conv\":4" UNTIED),
	           WT_ESHAPE, "A_log", "[64]");
	fx_refused(
	    tm_p2(1, 1),
	    P2_CFG_RAW(",\"hidden_size\":64,\"num_attention_heads\":8,"
	               "\"num_key_value_heads\":1,\"hidden_size_per_head\":16,"
	               "\"num_hidden_layers\":4,\"intermediate_size\":128,"
	               "\"vocab_size\":1000,\"mamba_num_heads\":8,\"mamba_d_conv\":4" UNTIED),
	    WT_ESHAPE, "B_norm_weight", "[64]");
	fx_refused(tm_p2(1, 1), P2_CFG_RAW(DIMS(1) UNTIED ",\"mamba_step\":4"), WT_EUNSUPPORTED,
	           "model.layers.layers.1.mixer.", "a Mamba layer");
	/* mamba_step 4: attention where i % 4 == 2; mamba_step 8 >= 2 L: only the last layer */
	fx_open(&f, tm_p2m(1, 1, 0x4u), P2_CFG(",\"mamba_step\":4"), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "model.layers.layers.2.mixer.qkv_proj.weight") >= 0);
	assert_true(tm_ix(f.p, 0, "model.layers.layers.3.mixer.in_proj.weight") >= 0);
	fx_close(&f);
	fx_open(&f, tm_p2m(1, 1, 0x8u), P2_CFG(",\"mamba_step\":8"), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 1, "model.layers.layers.3.mixer.qkv_proj.weight") >= 0);
	assert_true(tm_ix(f.p, 1, "model.layers.layers.1.mixer.in_proj.weight") >= 0);
	fx_close(&f);
}

static void test_plamo2_errors(void **state)
{
	(void)state;
	fx_refused(tm_p2(1, 1), P2_CFG(",\"mamba_enabled\":false"), WT_EUNSUPPORTED,
	           "mamba_enabled", "mamba_step");
	fx_refused(tm_p2(1, 1), P2_CFG(",\"mamba_step\":1"), WT_ECORRUPT, "mamba_step", ">= 2");
	fx_refused(tm_p2(1, 1),
	           P2_CFG_RAW(",\"hidden_size\":64,\"num_attention_heads\":8,"
	                      "\"num_key_value_heads\":1,\"hidden_size_per_head\":16,"
	                      "\"num_hidden_layers\":2147483648,\"intermediate_size\":128,"
	                      "\"vocab_size\":1000,\"mamba_num_heads\":8,\"mamba_d_state\":16,"
	                      "\"mamba_d_conv\":4" UNTIED),
	           WT_EUNSUPPORTED, "num_hidden_layers 2147483648", "at most 4096");
	fx_refused_tp(tm_p2(2, 1), P2_CFG_KV(2), 4, WT_ELAYOUT, "tp_size 4 exceeds",
	              "num_key_value_heads 2");
	fx_refused_tp(tm_p2(1, 1), P2_CFG(""), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_p2(1, 1), P2_CFG(""), 3, WT_ELAYOUT, "tp_size 3", "8");
	tm_model *m = tm_p2(1, 1);
	tm_remove(m, M0 "dt_bias");
	fx_refused(m, P2_CFG(""), WT_ENOTFOUND, M0 "dt_bias", "missing");
	m = tm_p2(1, 1);
	tm_remove(m, A1 "k_weight");
	fx_refused(m, P2_CFG(""), WT_ENOTFOUND, A1 "k_weight", "missing");
	m = tm_p2(1, 1);
	tm_add2(m, M0 "conv1d.bias", IM, 0);
	fx_refused(m, P2_CFG(""), WT_EUNSUPPORTED, "conv1d.bias", "unknown tensor");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plamo2_slices),   cmocka_unit_test(test_plamo2_heads),
	    cmocka_unit_test(test_plamo2_quant),    cmocka_unit_test(test_plamo2_coverage),
	    cmocka_unit_test(test_plamo2_defaults), cmocka_unit_test(test_plamo2_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
