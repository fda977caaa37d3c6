/*
 * test_shardmap_gpt_bigcode.c — GPTBigCode (GPTBigCodeForCausalLM: bigcode/starcoderbase,
 * santacoder) cut as vLLM's gpt_bigcode.py loads it: GPT-2's names with nn.Linear weights
 * (nothing transposed); attn.c_attn [(H + 2)*d, hid] holds [q; k; v] with one kv head
 * (multi_query), cut into each rank's q heads and the kv head replicated on every rank, its
 * bias alike; attn.c_proj / mlp.c_proj by columns, mlp.c_fc by rows with its bias; wpe,
 * LayerNorms and row-parallel biases replicated; wte vocab parallel, tied by default.
 * Hand-computed slices at TP 2 and TP 8, an int8 layout, coverage over TP 1..8, and the
 * refusals (multi_query false among them). Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed00bcull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, head size 16, one kv head (multi_query absent: true), I 256, V 1000, 2 layers,
 * 32 positions */
#define HID 128
#define INN 256
#define QKV (HID + 2 * 16)
#define BC_CFG(extra)                                                                              \
	"{\"architectures\":[\"GPTBigCodeForCausalLM\"],\"model_type\":\"gpt_bigcode\","           \
	"\"n_embd\":128,\"n_head\":8,\"n_inner\":256,\"n_positions\":32,"                          \
	"\"vocab_size\":1000,\"n_layer\":2" extra "}"
#define H1 "transformer.h.1."

static tm_model *tm_bigcode(int lm_head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "transformer.wte.weight", 1000, HID);
	tm_add2(m, "transformer.wpe.weight", 32, HID);
	tm_add2(m, "transformer.ln_f.weight", HID, 0);
	tm_add2(m, "transformer.ln_f.bias", HID, 0);
	if (lm_head)
		tm_add2(m, "lm_head.weight", 1000, HID);
	static const tm_leaf L[] = {
	    {"ln_1.weight", HID, 0},          {"ln_1.bias", HID, 0},
	    {"ln_2.weight", HID, 0},          {"ln_2.bias", HID, 0},
	    {"attn.c_attn.weight", QKV, HID}, {"attn.c_attn.bias", QKV, 0},
	    {"attn.c_proj.weight", HID, HID}, {"attn.c_proj.bias", HID, 0},
	    {"mlp.c_fc.weight", INN, HID},    {"mlp.c_fc.bias", INN, 0},
	    {"mlp.c_proj.weight", HID, INN},  {"mlp.c_proj.bias", HID, 0},
	};
	tm_layers(m, "transformer.h.%d.", 2, L, TM_NLEAVES(L), 0);
	return m;
}

static void test_bigcode_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_bigcode(0), BC_CFG(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "gpt_bigcode");
	for (uint32_t r = 0; r < 2; r++) {
		/* [q_r (64 rows); k (16); v (16)]: the one kv head on both ranks */
		shp(&f, r, H1 "attn.c_attn.weight", 2, 96, HID, 0);
		rows_are(&f, r, H1 "attn.c_attn.weight", 0, H1 "attn.c_attn.weight", 64 * r, 64);
		rows_are(&f, r, H1 "attn.c_attn.weight", 64, H1 "attn.c_attn.weight", HID, 32);
		rows_are(&f, r, H1 "attn.c_attn.bias", 0, H1 "attn.c_attn.bias", 64 * r, 64);
		rows_are(&f, r, H1 "attn.c_attn.bias", 64, H1 "attn.c_attn.bias", HID, 32);
		cols_of(&f, r, 2, H1 "attn.c_proj.weight", H1 "attn.c_proj.weight", HID, HID);
		repl(&f, r, H1 "attn.c_proj.bias");
		rows_are(&f, r, H1 "mlp.c_fc.weight", 0, H1 "mlp.c_fc.weight", 128 * r, 128);
		rows_are(&f, r, H1 "mlp.c_fc.bias", 0, H1 "mlp.c_fc.bias", 128 * r, 128);
		cols_of(&f, r, 2, H1 "mlp.c_proj.weight", H1 "mlp.c_proj.weight", HID, INN);
		repl(&f, r, H1 "mlp.c_proj.bias");
		repl(&f, r, H1 "ln_2.bias");
		repl(&f, r, "transformer.wpe.weight");
		assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
	}
	rows_are(&f, 1, "transformer.wte.weight", 0, "transformer.wte.weight", 512, 488);
	fx_close(&f);
}

/* TP 8, untied: one query head per rank, the kv head on all eight. */
static void test_bigcode_tp8(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_bigcode(1), BC_CFG(",\"tie_word_embeddings\":false"), 8, 1, 0, true);
	for (uint32_t r = 0; r < 8; r++) {
		shp(&f, r, H1 "attn.c_attn.weight", 2, 48, HID, 0);
		rows_are(&f, r, H1 "attn.c_attn.weight", 0, H1 "attn.c_attn.weight", 16 * r, 16);
		rows_are(&f, r, H1 "attn.c_attn.weight", 16, H1 "attn.c_attn.weight", HID, 32);
		rows_are(&f, r, H1 "attn.c_attn.bias", 16, H1 "attn.c_attn.bias", HID, 32);
		cols_of(&f, r, 8, H1 "attn.c_proj.weight", H1 "attn.c_proj.weight", HID, HID);
		shp(&f, r, "lm_head.weight", 2, 128, HID, 0);
	}
	fx_close(&f);
}

static void test_bigcode_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_bigcode(0), BC_CFG(""), &l, true);
	assert_int_equal(info(&f, 1, H1 "attn.c_attn.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, H1 "mlp.c_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, H1 "attn.c_attn.bias")->dtype, WT_BF16);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, H1 "attn.c_attn.weight");
	const float *sc = (const float *)out_bytes(&f, 1, H1 "attn.c_attn.weight_scale");
	for (int64_t row = 0; row < 96; row++) { /* q rows 64.., then the kv head's 32 */
		size_t rowb;
		const uint16_t *x = (const uint16_t *)src_rows(
		    &f, H1 "attn.c_attn.weight", row < 64 ? 64 + row : HID + row - 64, &rowb);
		int8_row_is(q + row * HID, sc[row], x, HID);
	}
	fx_close(&f);
}

static void test_bigcode_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_bigcode(0), BC_CFG(""), 1, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_bigcode_errors(void **state)
{
	(void)state;
	tm_model *m = tm_bigcode(0);
	tm_remove(m, H1 "mlp.c_fc.bias");
	fx_refused(m, BC_CFG(""), WT_ENOTFOUND, "c_fc.bias", "missing");
	/* GPT-2's Conv1D orientation is not GPTBigCode's */
	m = tm_bigcode(0);
	tm_remove(m, H1 "mlp.c_fc.weight");
	tm_add2(m, H1 "mlp.c_fc.weight", HID, INN);
	fx_refused(m, BC_CFG(""), WT_ESHAPE, "c_fc.weight", "[256, 128]");
	/* multi_query false: transformers' per-head c_attn is not vLLM's [q; k; v] */
	fx_refused(tm_bigcode(0), BC_CFG(",\"multi_query\":false"), WT_EUNSUPPORTED,
	           "multi_query false", "no cut serves both");
	fx_refused(tm_bigcode(0), BC_CFG(",\"multi_query\":1"), WT_ECORRUPT, "multi_query",
	           "boolean");
	fx_refused(tm_bigcode(0), BC_CFG(",\"num_key_value_heads\":8"), WT_EUNSUPPORTED,
	           "num_key_value_heads", "remove the key");
	fx_refused(tm_bigcode(0), BC_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "remove it");
	fx_refused(tm_bigcode(0), BC_CFG(",\"add_cross_attention\":true"), WT_EUNSUPPORTED,
	           "add_cross_attention true", "gpt_bigcode.py");
	fx_refused(tm_bigcode(0), BC_CFG(",\"scale_attn_weights\":false"), WT_EUNSUPPORTED,
	           "scale_attn_weights false", "gpt_bigcode.py");
	fx_refused_tp(tm_bigcode(0), BC_CFG(""), 3, WT_ELAYOUT, "tp_size 3",
	              "use tp_size 1, 2, 4 or 8");
	/* n_inner absent: 4 * n_embd */
	fx_refused(tm_bigcode(0),
	           "{\"architectures\":[\"GPTBigCodeForCausalLM\"],\"model_type\":\"gpt_bigcode\","
	           "\"n_embd\":128,\"n_head\":8,\"vocab_size\":1000,\"n_layer\":2}",
	           WT_ESHAPE, "implies [512", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bigcode_tp2),    cmocka_unit_test(test_bigcode_tp8),
	    cmocka_unit_test(test_bigcode_int8),   cmocka_unit_test(test_bigcode_coverage),
	    cmocka_unit_test(test_bigcode_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
