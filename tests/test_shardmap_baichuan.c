/*
 * test_shardmap_baichuan.c — Baichuan / Baichuan2 (BaichuanForCausalLM, BaiChuanForCausalLM,
 * remote code) cut as vLLM's baichuan.py loads them: self_attn.W_pack ([q; k; v] rows,
 * multi-head) re-cut by heads into each rank's [q_r; k_r; v_r] under its own name; o_proj by
 * columns; mlp.gate_proj / up_proj merged by rows into mlp.gate_up_proj [gate_r; up_r],
 * down_proj by columns; the norms replicated; embed_tokens / lm_head by vocabulary rows.
 * Hand-computed slices at TP 2, 4 and 8, int8-channel and fp8-channel layouts, coverage over
 * TP 1..8, the two classes' defaults and the refusals. Seeds fixed and printed.
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

/* hid 128, H 8, head size 16, I 192, V 1000, 2 layers */
#define HID 128
#define HD  16
#define I   192
#define BC_CFG_AT(arch, extra)                                                                     \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"baichuan\"" extra "}"
#define BC_DIMS                                                                                    \
	",\"hidden_size\":128,\"num_attention_heads\":8,\"num_hidden_layers\":2,"                  \
	"\"intermediate_size\":192,\"vocab_size\":1000"
#define BC_CFG(extra)  BC_CFG_AT("BaichuanForCausalLM", BC_DIMS extra)
#define BC7_CFG(extra) BC_CFG_AT("BaiChuanForCausalLM", BC_DIMS extra)
#define TIED           ",\"tie_word_embeddings\":true"
#define L1             "model.layers.1."
#define WP             L1 "self_attn.W_pack.weight"
#define OP             L1 "self_attn.o_proj.weight"
#define GU             L1 "mlp.gate_up_proj.weight"
#define GP             L1 "mlp.gate_proj.weight"
#define UP             L1 "mlp.up_proj.weight"
#define DP             L1 "mlp.down_proj.weight"
#define EMB            "model.embed_tokens.weight"

/* The model with MLP width i, hidden hid (head size HD), l layers; lm_head.weight when head. */
static tm_model *tm_baichuan_at(int64_t hid, int64_t i, int l_n, int head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, hid, head);
	const tm_leaf L[] = {
	    {"input_layernorm.weight", hid, 0},        {"post_attention_layernorm.weight", hid, 0},
	    {"self_attn.W_pack.weight", 3 * hid, hid}, {"self_attn.o_proj.weight", hid, hid},
	    {"mlp.gate_proj.weight", i, hid},          {"mlp.up_proj.weight", i, hid},
	    {"mlp.down_proj.weight", hid, i}};
	tm_layers(m, TM_L, l_n, L, TM_NLEAVES(L), 0);
	return m;
}

static tm_model *tm_baichuan(int head)
{
	return tm_baichuan_at(HID, I, 2, head);
}

/* TP 2, 4 and 8 by hand, both architectures: rank r's W_pack is W_pack's rows [r*H/T*d,
 * +H/T*d) of its q third, then the same rows of its k third (from hid) and its v third (from
 * 2*hid). */
static void test_baichuan_slices(void **state)
{
	(void)state;
	for (int a = 0; a < 2; a++)
		for (uint32_t T = 2; T <= 8; T *= 2) {
			fx f;
			fx_open(&f, tm_baichuan(1), a ? BC7_CFG("") : BC_CFG(""), T, 1, 0, true);
			assert_string_equal(shardmap_family(f.p), "baichuan");
			for (uint32_t r = 0; r < T; r++) {
				int64_t hl = 8 / T;
				shp(&f, r, WP, 2, 3 * hl * HD, HID, 0);
				for (int k = 0; k < 3; k++)
					rows_at(&f, r, WP, k * hl * HD, WP, k * HID + r * hl * HD,
					        hl * HD);
				cols_of(&f, r, T, OP, OP, HID, HID);
				shp(&f, r, GU, 2, 2 * I / T, HID, 0);
				fx_gate_up_is(&f, r, T, GU, GP, UP, I);
				cols_of(&f, r, T, DP, DP, HID, I);
				repl(&f, r, L1 "input_layernorm.weight");
				repl(&f, r, L1 "post_attention_layernorm.weight");
				repl(&f, r, "model.norm.weight");
				assert_true(tm_ix(f.p, r, GP) < 0 && tm_ix(f.p, r, UP) < 0);
				fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
				fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
			}
			fx_close(&f);
		}
}

/* tie_word_embeddings true: lm_head not emitted, and a checkpoint's copy dropped. */
static void test_baichuan_tied(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_baichuan(1), BC_CFG(TIED), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
	assert_true(fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
}

static const char *const bc_keep[] = {EMB, "lm_head.weight", "model.norm.weight",
                                      L1 "input_layernorm.weight",
                                      L1 "post_attention_layernorm.weight"};
static const char *const bc_quant[] = {WP, OP, GU, DP};

/* int8-channel at TP 2: W_pack / o_proj / gate_up_proj / down_proj quantized per row, the
 * embedding, lm_head and norms BF16; rank 1's W_pack codes are W_pack's rows 64.., 192..,
 * 320.. (its q, k and v heads 4..7). fp8-channel at TP 4: the same split. */
static void test_baichuan_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_baichuan(1), BC_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(bc_keep), FX_N(bc_quant));
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, WP);
	const float *sc = (const float *)out_bytes(&f, 1, WP "_scale");
	for (int64_t row = 0; row < 3 * 4 * HD; row++) {
		size_t rowb;
		int64_t sr = (row / (4 * HD)) * HID + 4 * HD + row % (4 * HD);
		const uint16_t *x = (const uint16_t *)src_rows(&f, WP, sr, &rowb);
		int8_row_is(q + row * HID, sc[row], x, HID);
	}
	fx_close(&f);
	fx_open_quant(&f, tm_baichuan(1), BC7_CFG(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(bc_keep), FX_N(bc_quant));
	fx_close(&f);
}

static void test_baichuan_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_baichuan(1), BC_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_baichuan(1), BC7_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take the class of architectures[0]'s defaults: BaichuanConfig's hidden_size
 * 5120, intermediate_size 13696, 40 layers, 40 heads; BaiChuanConfig's 4096, 11008, 32, 32;
 * both vocab 64000, untied (lm_head required), kv heads the heads. */
static void test_baichuan_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_baichuan(1), BC_CFG(""), 2, 1, 0, false);
	shp(&f, 1, WP, 2, 3 * 4 * HD, HID, 0); /* 8 kv heads: the heads */
	fx_close(&f);
	fx_refused(tm_baichuan(0), BC_CFG(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_baichuan(1),
	           BC_CFG_AT("BaichuanForCausalLM",
	                     ",\"hidden_size\":128,\"num_attention_heads\":8,"
	                     "\"num_hidden_layers\":2,\"intermediate_size\":192"),
	           WT_ESHAPE, "[64000, 128]", "fix config.json");
	static const struct {
		const char *arch, *drop, *want;
		int code;
	} left[] = {
	    {"BaichuanForCausalLM", "hidden_size", "[1000, 5120]", WT_ESHAPE},
	    {"BaiChuanForCausalLM", "hidden_size", "[1000, 4096]", WT_ESHAPE},
	    {"BaichuanForCausalLM", "intermediate_size", "[128, 13696]", WT_ESHAPE},
	    {"BaiChuanForCausalLM", "intermediate_size", "[128, 11008]", WT_ESHAPE},
	    {"BaichuanForCausalLM", "num_hidden_layers", "model.layers.2", WT_ENOTFOUND},
	    {"BaichuanForCausalLM", "num_attention_heads", "(40)", WT_ECORRUPT},
	};
	for (size_t k = 0; k < sizeof(left) / sizeof(left[0]); k++) {
		static const char *const keys[] = {"hidden_size", "num_attention_heads",
		                                   "num_hidden_layers", "intermediate_size"};
		static const char *const vals[] = {"128", "8", "2", "192"};
		char cfg[400];
		int n = snprintf(cfg, sizeof(cfg),
		                 "{\"architectures\":[\"%s\"],\"model_type\":\"baichuan\","
		                 "\"vocab_size\":1000",
		                 left[k].arch);
		for (size_t j = 0; j < 4; j++)
			if (strcmp(keys[j], left[k].drop) != 0)
				n += snprintf(cfg + n, sizeof(cfg) - (size_t)n, ",\"%s\":%s",
				              keys[j], vals[j]);
		snprintf(cfg + n, sizeof(cfg) - (size_t)n, "}");
		fx_refused(tm_baichuan(1), cfg, left[k].code, left[k].want, "");
	}
	/* BaiChuanConfig's 32 heads of size 4 over hidden 128: W_pack still [384, 128] */
	fx_open(&f, tm_baichuan(1),
	        BC_CFG_AT("BaiChuanForCausalLM", ",\"hidden_size\":128,\"num_hidden_layers\":2,"
	                                         "\"intermediate_size\":192,\"vocab_size\":1000"),
	        8, 1, 0, false);
	shp(&f, 1, WP, 2, 3 * 16, HID, 0);
	fx_close(&f);
}

static void test_baichuan_errors(void **state)
{
	(void)state;
	fx_refused(tm_baichuan(1), BC_CFG(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act 'gelu'", "silu");
	fx_refused(tm_baichuan(1), BC7_CFG(",\"hidden_act\":\"relu\""), WT_EUNSUPPORTED,
	           "hidden_act 'relu'", "silu");
	fx_refused(tm_baichuan(1), BC_CFG(",\"num_key_value_heads\":4"), WT_EUNSUPPORTED,
	           "num_key_value_heads 4", "multi-head");
	fx_refused(tm_baichuan(1), BC_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "remove it");
	tm_model *m = tm_baichuan(1);
	tm_add2(m, L1 "self_attn.W_pack.bias", 3 * HID, 0);
	fx_refused(m, BC_CFG(""), WT_EUNSUPPORTED, "W_pack.bias", "unknown");
	m = tm_baichuan(1);
	tm_add2(m, L1 "mlp.down_proj.bias", HID, 0);
	fx_refused(m, BC_CFG(""), WT_EUNSUPPORTED, "down_proj.bias", "unknown");
	m = tm_baichuan(1);
	tm_remove(m, UP);
	fx_refused(m, BC_CFG(""), WT_ENOTFOUND, "up_proj", "missing");
	m = tm_baichuan(1);
	tm_remove(m, WP);
	fx_refused(m, BC_CFG(""), WT_ENOTFOUND, "W_pack", "missing");
	fx_refused_tp(tm_baichuan(1), BC_CFG(""), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_baichuan(1), BC_CFG(""), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_baichuan_slices),   cmocka_unit_test(test_baichuan_tied),
	    cmocka_unit_test(test_baichuan_quant),    cmocka_unit_test(test_baichuan_coverage),
	    cmocka_unit_test(test_baichuan_defaults), cmocka_unit_test(test_baichuan_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
