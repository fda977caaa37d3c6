/*
 * test_shardmap_gpt2.c — GPT-2 (GPT2LMHeadModel: openai-community/gpt2 ... gpt2-xl) cut as
 * vLLM's gpt2.py loads it: every Conv1D weight (attn.c_attn, attn.c_proj, mlp.c_fc,
 * mlp.c_proj; stored [in, out]) transposed to [out, in]; c_attn's [q; k; v] rows then cut by
 * heads into [q_r; k_r; v_r] with its bias, attn.c_proj and mlp.c_proj by columns (biases
 * replicated), mlp.c_fc by rows with its bias; wpe, ln_1 / ln_2 / ln_f with biases
 * replicated; wte by vocabulary rows, lm_head tied by default; the attn.bias /
 * attn.masked_bias buffers skipped; names without transformer. read under it. Hand-computed
 * slices at TP 2 and TP 4, an int8 layout, coverage over TP 1..8, and the refusals. Seeds
 * fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0092ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_gpt2_fx.h"

#define G2_CFG(extra)                                                                              \
	"{\"architectures\":[\"GPT2LMHeadModel\"],\"model_type\":\"gpt2\","                        \
	"\"n_embd\":128,\"n_head\":8,\"n_inner\":256,\"n_positions\":32,"                          \
	"\"vocab_size\":1000,\"n_layer\":2" extra "}"

static void test_gpt2_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_gpt2("transformer.", 0, 1), G2_CFG(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "gpt2");
	for (uint32_t r = 0; r < 2; r++) {
		/* [q_r; k_r; v_r], 64 rows each: c_attn's output columns transposed */
		shp(&f, r, H1 "attn.c_attn.weight", 2, 192, HID, 0);
		trows_are(&f, r, H1 "attn.c_attn.weight", 0, H1 "attn.c_attn.weight", 64 * r, 64);
		trows_are(&f, r, H1 "attn.c_attn.weight", 64, H1 "attn.c_attn.weight", HID + 64 * r,
		          64);
		trows_are(&f, r, H1 "attn.c_attn.weight", 128, H1 "attn.c_attn.weight",
		          2 * HID + 64 * r, 64);
		rows_are(&f, r, H1 "attn.c_attn.bias", 0, H1 "attn.c_attn.bias", 64 * r, 64);
		rows_are(&f, r, H1 "attn.c_attn.bias", 64, H1 "attn.c_attn.bias", HID + 64 * r, 64);
		rows_are(&f, r, H1 "attn.c_attn.bias", 128, H1 "attn.c_attn.bias", 2 * HID + 64 * r,
		         64);
		tcols_of(&f, r, 2, H1 "attn.c_proj.weight", H1 "attn.c_proj.weight");
		repl(&f, r, H1 "attn.c_proj.bias");
		shp(&f, r, H1 "mlp.c_fc.weight", 2, 128, HID, 0);
		trows_are(&f, r, H1 "mlp.c_fc.weight", 0, H1 "mlp.c_fc.weight", 128 * r, 128);
		rows_are(&f, r, H1 "mlp.c_fc.bias", 0, H1 "mlp.c_fc.bias", 128 * r, 128);
		tcols_of(&f, r, 2, H1 "mlp.c_proj.weight", H1 "mlp.c_proj.weight");
		repl(&f, r, H1 "mlp.c_proj.bias");
		repl(&f, r, H1 "ln_1.bias");
		repl(&f, r, H1 "ln_2.weight");
		repl(&f, r, "transformer.ln_f.bias");
		repl(&f, r, "transformer.wpe.weight");
		/* tied (GPT2Config's default): no lm_head; buffers skipped */
		assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
		assert_true(tm_ix(f.p, r, H1 "attn.bias") < 0);
		assert_true(tm_ix(f.p, r, H1 "attn.masked_bias") < 0);
	}
	rows_are(&f, 1, "transformer.wte.weight", 0, "transformer.wte.weight", 512, 488);
	fx_close(&f);
}

/* TP 4, untied, the checkpoint's names without transformer. (read under it). */
static void test_gpt2_tp4_bare(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_gpt2("", 1, 1), G2_CFG(",\"tie_word_embeddings\":false"), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, H1 "attn.c_attn.weight", 2, 96, HID, 0);
		trows_are(&f, r, H1 "attn.c_attn.weight", 32, "h.1.attn.c_attn.weight",
		          HID + 32 * r, 32);
		rows_are(&f, r, H1 "mlp.c_fc.bias", 0, "h.1.mlp.c_fc.bias", 64 * r, 64);
		tcols_of(&f, r, 4, H1 "mlp.c_proj.weight", "h.1.mlp.c_proj.weight");
		rows_are(&f, r, "transformer.wpe.weight", 0, "wpe.weight", 0, 32);
		assert_true(tm_ix(f.p, r, "h.1.attn.c_attn.weight") < 0);
		shp(&f, r, "lm_head.weight", 2, 256, HID, 0);
	}
	rows_are(&f, 2, "lm_head.weight", 0, "lm_head.weight", 512, 256);
	fx_close(&f);
}

/* int8-channel at TP 2: the transposed c_attn / c_proj / c_fc quantized per (runtime) row;
 * biases, norms and wpe BF16. */
static void test_gpt2_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_gpt2("transformer.", 0, 0), G2_CFG(""), &l, true);
	assert_int_equal(info(&f, 1, H1 "attn.c_attn.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, H1 "attn.c_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, H1 "mlp.c_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, H1 "attn.c_attn.bias")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, "transformer.wpe.weight")->dtype, WT_BF16);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, H1 "mlp.c_fc.weight");
	const float *sc = (const float *)out_bytes(&f, 1, H1 "mlp.c_fc.weight_scale");
	int k = tm_find(f.m, H1 "mlp.c_fc.weight");
	const uint16_t *s = (const uint16_t *)f.m->data[k];
	uint16_t x[HID];
	for (int64_t row = 0; row < 128; row++) { /* runtime row = source column 128 + row */
		for (int64_t c = 0; c < HID; c++)
			x[c] = s[c * INN + 128 + row];
		int8_row_is(q + row * HID, sc[row], x, HID);
	}
	fx_close(&f);
}

static void test_gpt2_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_gpt2("transformer.", 0, 1), G2_CFG(""), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
	coverage(tm_gpt2("", 1, 0), G2_CFG(",\"tie_word_embeddings\":false"), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

static void test_gpt2_errors(void **state)
{
	(void)state;
	/* every Conv1D has its bias */
	tm_model *m = tm_gpt2("transformer.", 0, 0);
	tm_remove(m, H1 "attn.c_attn.bias");
	fx_refused(m, G2_CFG(""), WT_ENOTFOUND, "c_attn.bias", "missing");
	/* untied: lm_head required */
	fx_refused(tm_gpt2("transformer.", 0, 0), G2_CFG(",\"tie_word_embeddings\":false"),
	           WT_ENOTFOUND, "lm_head.weight", "missing");
	/* a c_attn stored as nn.Linear [3*hid, hid] (not a Conv1D) is named with its view */
	m = tm_gpt2("transformer.", 0, 0);
	tm_remove(m, H1 "mlp.c_fc.weight");
	tm_add2(m, H1 "mlp.c_fc.weight", INN, HID);
	fx_refused(m, G2_CFG(""), WT_ESHAPE, "[256, 128] (a Conv1D [in, out]",
	           "after the transpose");
	/* Llama's names are not GPT-2 tensors; two name layouts are not mixed */
	m = tm_gpt2("transformer.", 0, 0);
	tm_add2(m, "transformer.h.0.attn.q_proj.weight", HID, HID);
	fx_refused(m, G2_CFG(""), WT_EUNSUPPORTED, "q_proj.weight", "gpt2");
	m = tm_gpt2("", 0, 0);
	tm_add2(m, "transformer.h.0.attn.c_fc.weight", HID, HID);
	fx_refused(m, G2_CFG(""), WT_EUNSUPPORTED, "mixes two name layouts", "h.");
	/* heads: TP 3 does not divide 8; configs vLLM's gpt2.py cannot run */
	fx_refused_tp(tm_gpt2("transformer.", 0, 0), G2_CFG(""), 3, WT_ELAYOUT, "tp_size 3",
	              "use tp_size 1, 2, 4 or 8");
	fx_refused(tm_gpt2("transformer.", 0, 0), G2_CFG(",\"num_key_value_heads\":2"),
	           WT_EUNSUPPORTED, "num_key_value_heads 2", "no grouped kv heads");
	fx_refused(tm_gpt2("transformer.", 0, 0), G2_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED,
	           "head_dim 32", "remove it");
	fx_refused(tm_gpt2("transformer.", 0, 0), G2_CFG(",\"add_cross_attention\":true"),
	           WT_EUNSUPPORTED, "add_cross_attention true", "set it false");
	fx_refused(tm_gpt2("transformer.", 0, 0),
	           G2_CFG(",\"scale_attn_by_inverse_layer_idx\":true"), WT_EUNSUPPORTED,
	           "scale_attn_by_inverse_layer_idx true", "gpt2.py");
	fx_refused(tm_gpt2("transformer.", 0, 0), G2_CFG(",\"reorder_and_upcast_attn\":true"),
	           WT_EUNSUPPORTED, "reorder_and_upcast_attn true", "gpt2.py");
	fx_refused(tm_gpt2("transformer.", 0, 0), G2_CFG(",\"scale_attn_weights\":false"),
	           WT_EUNSUPPORTED, "scale_attn_weights false", "set it true");
	fx_refused(tm_gpt2("transformer.", 0, 0), G2_CFG(",\"scale_attn_weights\":1"), WT_ECORRUPT,
	           "scale_attn_weights", "boolean");
	/* n_inner null: 4 * n_embd = 512 rows for c_fc; GPT2Config's vocab 50257 when absent */
	fx_refused(
	    tm_gpt2("transformer.", 0, 0),
	    "{\"architectures\":[\"GPT2LMHeadModel\"],\"model_type\":\"gpt2\","
	    "\"n_embd\":128,\"n_head\":8,\"n_inner\":null,\"vocab_size\":1000,\"n_layer\":2}",
	    WT_ESHAPE, "implies [512]", "fix config.json");
	fx_refused(tm_gpt2("transformer.", 0, 0),
	           "{\"architectures\":[\"GPT2LMHeadModel\"],\"model_type\":\"gpt2\","
	           "\"n_embd\":128,\"n_head\":8,\"n_inner\":256,\"n_layer\":2}",
	           WT_ESHAPE, "50257", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gpt2_tp2),    cmocka_unit_test(test_gpt2_tp4_bare),
	    cmocka_unit_test(test_gpt2_int8),   cmocka_unit_test(test_gpt2_coverage),
	    cmocka_unit_test(test_gpt2_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
