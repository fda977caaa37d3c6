/*
 * test_shardmap_gptj.c — GPT-J (GPTJForCausalLM: EleutherAI/gpt-j-6b) cut as vLLM's gpt_j.py
 * loads it: attn.q_proj / k_proj / v_proj (no biases) fused by heads into attn.qkv_proj,
 * attn.out_proj by columns, mlp.fc_in by rows with its bias, mlp.fc_out by columns (bias
 * replicated), ln_1 / ln_f with biases replicated, transformer.wte / lm_head and lm_head.bias
 * by vocabulary rows, the old attn.masked_bias buffers skipped; GPTJConfig's own keys.
 * Hand-computed slices at TP 2 and TP 4, an int8 layout, coverage over TP 1..8, and the
 * refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0018ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* n_embd 128, n_head 8, head size 16, n_inner 256, V 1000, 2 layers */
#define HID 128
#define GJ_CFG(extra)                                                                              \
	"{\"architectures\":[\"GPTJForCausalLM\"],\"model_type\":\"gptj\","                        \
	"\"n_embd\":128,\"n_head\":8,\"n_inner\":256,\"vocab_size\":1000,\"n_layer\":2,"           \
	"\"rotary_dim\":8" extra "}"
#define L1 "transformer.h.1."
#define A1 L1 "attn."

static tm_model *tm_gptj(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "transformer.wte.weight", 1000, HID);
	tm_add2(m, "transformer.ln_f.weight", HID, 0);
	tm_add2(m, "transformer.ln_f.bias", HID, 0);
	tm_add2(m, "lm_head.weight", 1000, HID);
	tm_add2(m, "lm_head.bias", 1000, 0);
	char b[200];
	for (int i = 0; i < 2; i++) {
		static const char *const vec[][2] = {{"ln_1.weight", "h"},
		                                     {"ln_1.bias", "h"},
		                                     {"mlp.fc_in.bias", "i"},
		                                     {"mlp.fc_out.bias", "h"}};
		for (size_t k = 0; k < sizeof(vec) / sizeof(vec[0]); k++) {
			snprintf(b, sizeof(b), "transformer.h.%d.%s", i, vec[k][0]);
			tm_add2(m, b, vec[k][1][0] == 'i' ? 256 : HID, 0);
		}
		static const char *const lins[][3] = {
		    {"attn.q_proj.weight", "h", "h"}, {"attn.k_proj.weight", "h", "h"},
		    {"attn.v_proj.weight", "h", "h"}, {"attn.out_proj.weight", "h", "h"},
		    {"mlp.fc_in.weight", "i", "h"},   {"mlp.fc_out.weight", "h", "i"}};
		for (size_t k = 0; k < sizeof(lins) / sizeof(lins[0]); k++) {
			snprintf(b, sizeof(b), "transformer.h.%d.%s", i, lins[k][0]);
			tm_lin(m, b, lins[k][1][0] == 'i' ? 256 : HID,
			       lins[k][2][0] == 'i' ? 256 : HID, 0);
		}
		snprintf(b, sizeof(b), "transformer.h.%d.attn.masked_bias", i);
		tm_add(m, b, WT_F32, 0, 0, 0, 0);
	}
	return m;
}

static void test_gptj_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_gptj(), GJ_CFG(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "gptj");
	assert_false(shardmap_tied_lm_head(f.p));
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, A1 "qkv_proj.weight", 2, 192, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.weight", 64, A1 "k_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.weight", 128, A1 "v_proj.weight", 64 * r, 64);
		cols_of(&f, r, 2, A1 "out_proj.weight", A1 "out_proj.weight", HID, HID);
		rows_are(&f, r, L1 "mlp.fc_in.weight", 0, L1 "mlp.fc_in.weight", 128 * r, 128);
		rows_are(&f, r, L1 "mlp.fc_in.bias", 0, L1 "mlp.fc_in.bias", 128 * r, 128);
		cols_of(&f, r, 2, L1 "mlp.fc_out.weight", L1 "mlp.fc_out.weight", HID, 256);
		repl(&f, r, L1 "mlp.fc_out.bias");
		repl(&f, r, L1 "ln_1.bias");
		repl(&f, r, "transformer.ln_f.weight");
		assert_true(tm_ix(f.p, r, A1 "q_proj.weight") < 0);
		assert_true(tm_ix(f.p, r, A1 "masked_bias") < 0);
		assert_true(tm_ix(f.p, r, A1 "qkv_proj.bias") < 0);
	}
	/* lm_head.bias [512] per rank: rank 1 entries [512, 1000) then 24 zeros */
	shp(&f, 1, "lm_head.bias", 1, 512, 0, 0);
	rows_are(&f, 1, "lm_head.bias", 0, "lm_head.bias", 512, 488);
	const uint16_t *z = (const uint16_t *)out_bytes(&f, 1, "lm_head.bias");
	for (int k = 488; k < 512; k++)
		assert_int_equal(z[k], 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	rows_are(&f, 0, "transformer.wte.weight", 0, "transformer.wte.weight", 0, 512);
	fx_close(&f);
}

static void test_gptj_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_gptj(), GJ_CFG(""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		rows_are(&f, r, A1 "qkv_proj.weight", 32, A1 "k_proj.weight", 32 * r, 32);
		rows_are(&f, r, L1 "mlp.fc_in.bias", 0, L1 "mlp.fc_in.bias", 64 * r, 64);
		cols_of(&f, r, 4, A1 "out_proj.weight", A1 "out_proj.weight", HID, HID);
		shp(&f, r, "lm_head.bias", 1, 256, 0, 0);
	}
	rows_are(&f, 2, "lm_head.bias", 0, "lm_head.bias", 512, 256);
	fx_close(&f);
}

/* int8-channel at TP 2: qkv, out_proj, fc_in, fc_out quantized per row; biases, norms BF16. */
static void test_gptj_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_gptj(), GJ_CFG(""), &l, true);
	assert_int_equal(info(&f, 1, A1 "qkv_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, A1 "out_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, L1 "mlp.fc_out.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, "lm_head.bias")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, L1 "mlp.fc_in.bias")->dtype, WT_BF16);
	fx_rows_int8_is(&f, 1, L1 "mlp.fc_in.weight", 0, L1 "mlp.fc_in.weight", 128, 128, HID);
	fx_close(&f);
}

static void test_gptj_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_gptj(), GJ_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_gptj_errors(void **state)
{
	(void)state;
	tm_model *m = tm_gptj();
	tm_remove(m, L1 "mlp.fc_in.bias");
	fx_refused(m, GJ_CFG(""), WT_ENOTFOUND, "fc_in.bias", "missing");
	m = tm_gptj();
	tm_remove(m, "lm_head.bias");
	fx_refused(m, GJ_CFG(""), WT_ENOTFOUND, "lm_head.bias", "missing");
	/* q/k/v and out_proj have no biases (vLLM's bias=False) */
	m = tm_gptj();
	tm_add2(m, A1 "q_proj.bias", HID, 0);
	fx_refused(m, GJ_CFG(""), WT_EUNSUPPORTED, "q_proj.bias", "gptj");
	m = tm_gptj();
	tm_add2(m, A1 "out_proj.bias", HID, 0);
	fx_refused(m, GJ_CFG(""), WT_EUNSUPPORTED, "out_proj.bias", "gptj");
	/* configs vLLM's gpt_j.py cannot load */
	fx_refused(tm_gptj(), GJ_CFG(",\"tie_word_embeddings\":true"), WT_EUNSUPPORTED,
	           "tie_word_embeddings true", "set it false");
	fx_refused(tm_gptj(), GJ_CFG(",\"num_key_value_heads\":2"), WT_EUNSUPPORTED,
	           "num_key_value_heads 2", "gpt_j.py");
	fx_refused(tm_gptj(), GJ_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "remove it");
	fx_refused_tp(tm_gptj(), GJ_CFG(""), 16, WT_ELAYOUT, "", "");
	/* n_inner null: 4 x n_embd (512); keys left out take GPTJConfig's defaults */
	fx_refused(tm_gptj(),
	           "{\"architectures\":[\"GPTJForCausalLM\"],\"model_type\":\"gptj\","
	           "\"n_embd\":128,\"n_head\":8,\"n_inner\":null,\"vocab_size\":1000,"
	           "\"n_layer\":2}",
	           WT_ESHAPE, "512", "fix config.json");
	fx_refused(tm_gptj(),
	           "{\"architectures\":[\"GPTJForCausalLM\"],\"model_type\":\"gptj\","
	           "\"n_embd\":128,\"n_head\":8,\"n_inner\":256,\"n_layer\":2}",
	           WT_ESHAPE, "50400", "fix config.json");
	fx_refused(tm_gptj(),
	           "{\"architectures\":[\"GPTJForCausalLM\"],\"model_type\":\"gptj\","
	           "\"n_head\":8,\"n_inner\":256,\"vocab_size\":1000,\"n_layer\":2}",
	           WT_ESHAPE, "4096", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gptj_tp2),    cmocka_unit_test(test_gptj_tp4),
	    cmocka_unit_test(test_gptj_int8),   cmocka_unit_test(test_gptj_coverage),
	    cmocka_unit_test(test_gptj_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
