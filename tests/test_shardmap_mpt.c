/*
 * test_shardmap_mpt.c — MPT (MptForCausalLM: mosaicml/mpt-7b, mpt-30b) cut as vLLM's mpt.py
 * loads it: transformer.blocks.{i}.attn.Wqkv ([q; k; v] rows) by heads with kv replication
 * (attn_config.kv_n_heads where present, else n_heads), attn.out_proj by columns,
 * ffn.up_proj by rows and ffn.down_proj by columns (expansion_ratio * d_model), the
 * bias-free LayerNorms norm_1 / norm_2 / norm_f replicated, transformer.wte by vocabulary rows
 * and tied. Hand-computed slices at TP 2 and TP 4 (kv heads replicated), an int8 layout,
 * coverage over TP 1..8, MptConfig's keys and defaults, and the refusals. Seeds fixed and
 * printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0021ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* d_model 128, H 8, KV 2 (attn_config.kv_n_heads) or 8, head size 16, I 256, V 1000, 2 layers */
#define HID 128
#define HD  16
#define MPT_CFG(top, attn)                                                                         \
	"{\"architectures\":[\"MptForCausalLM\"],\"model_type\":\"mpt\",\"d_model\":128,"          \
	"\"n_heads\":8,\"n_layers\":2,\"expansion_ratio\":2,\"vocab_size\":1000,"                  \
	"\"no_bias\":true" top ",\"attn_config\":{\"attn_type\":\"multihead_attention\"" attn "}}"
#define MPT_GQA MPT_CFG("", ",\"kv_n_heads\":2")
#define L1      "transformer.blocks.1."
#define QKV     L1 "attn.Wqkv.weight"
#define OUT     L1 "attn.out_proj.weight"
#define UP      L1 "ffn.up_proj.weight"
#define DOWN    L1 "ffn.down_proj.weight"

static void add_l(tm_model *m, int i, const char *leaf, int64_t a, int64_t b)
{
	char n[200];
	tm_fmt(n, sizeof(n), "transformer.blocks.%d.", i, leaf);
	tm_add2(m, n, a, b);
}

/* The model with kv kv heads. */
static tm_model *tm_mpt(int64_t kv)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "transformer.wte.weight", 1000, HID);
	tm_add2(m, "transformer.norm_f.weight", HID, 0);
	for (int i = 0; i < 2; i++) {
		add_l(m, i, "norm_1.weight", HID, 0);
		add_l(m, i, "attn.Wqkv.weight", (8 + 2 * kv) * HD, HID);
		add_l(m, i, "attn.out_proj.weight", HID, HID);
		add_l(m, i, "norm_2.weight", HID, 0);
		add_l(m, i, "ffn.up_proj.weight", 256, HID);
		add_l(m, i, "ffn.down_proj.weight", HID, 256);
	}
	return m;
}

/* Rank r of T: q heads [r*8/T, +8/T), kv heads of kv (replicated when T > kv). */
static void qkv_is(const fx *f, uint32_t r, uint32_t T, int64_t kv)
{
	int64_t hl = 8 / T, kvl = kv >= T ? kv / T : 1;
	int64_t kvh = kv >= T ? (int64_t)r * kvl : (int64_t)r * kv / T;
	shp(f, r, QKV, 2, (hl + 2 * kvl) * HD, HID, 0);
	rows_at(f, r, QKV, 0, QKV, r * hl * HD, hl * HD);
	rows_at(f, r, QKV, hl * HD, QKV, 8 * HD + kvh * HD, kvl * HD);
	rows_at(f, r, QKV, (hl + kvl) * HD, QKV, (8 + kv) * HD + kvh * HD, kvl * HD);
}

static void test_mpt_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_mpt(2), MPT_GQA, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "mpt");
	for (uint32_t r = 0; r < 2; r++) {
		qkv_is(&f, r, 2, 2); /* [q_r 64; k_r 16; v_r 16] */
		cols_of(&f, r, 2, OUT, OUT, HID, HID);
		shp(&f, r, UP, 2, 128, HID, 0);
		rows_at(&f, r, UP, 0, UP, 128 * r, 128);
		cols_of(&f, r, 2, DOWN, DOWN, HID, 256);
		repl(&f, r, L1 "norm_1.weight");
		repl(&f, r, L1 "norm_2.weight");
		repl(&f, r, "transformer.norm_f.weight");
		/* tied: wte by vocabulary rows (padded to 64 per rank), no lm_head */
		rows_are(&f, r, "transformer.wte.weight", 0, "transformer.wte.weight", 512 * r,
		         r ? 488 : 512);
		assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
		assert_true(tm_ix(f.p, r, L1 "attn.Wqkv.bias") < 0);
	}
	fx_close(&f);
}

/* TP 4: 2 q heads per rank, the 2 kv heads replicated (rank r: r / 2); without kv_n_heads
 * (8 kv heads) 2 kv heads per rank. */
static void test_mpt_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_mpt(2), MPT_GQA, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		qkv_is(&f, r, 4, 2);
		cols_of(&f, r, 4, OUT, OUT, HID, HID);
		rows_at(&f, r, UP, 0, UP, 64 * r, 64);
		cols_of(&f, r, 4, DOWN, DOWN, HID, 256);
	}
	fx_close(&f);
	fx_open(&f, tm_mpt(8), MPT_CFG("", ""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		qkv_is(&f, r, 4, 8);
	fx_close(&f);
}

/* int8-channel at TP 2: Wqkv, out_proj, up_proj, down_proj quantized per row; norms BF16. */
static void test_mpt_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_mpt(2), MPT_GQA, &l, true);
	assert_int_equal(info(&f, 1, QKV)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, OUT)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, UP)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, DOWN)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, L1 "norm_1.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, "transformer.norm_f.weight")->dtype, WT_BF16);
	/* rank 1's Wqkv rows: q heads 4..7 (rows 64..127), then k head 1 (rows 144..159) */
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, QKV);
	const float *sc = (const float *)out_bytes(&f, 1, L1 "attn.Wqkv.weight_scale");
	for (int64_t row = 0; row < 80; row++) {
		size_t rowb;
		int64_t src = row < 64 ? 64 + row : 144 + (row - 64);
		const uint16_t *x = (const uint16_t *)src_rows(&f, QKV, src, &rowb);
		int8_row_is(q + row * HID, sc[row], x, HID);
	}
	fx_rows_int8_is(&f, 1, UP, 0, UP, 128, 128, HID);
	fx_close(&f);
}

static void test_mpt_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_mpt(2), MPT_GQA, 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_mpt(8), MPT_CFG("", ""), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_mpt_errors(void **state)
{
	(void)state;
	tm_model *m = tm_mpt(2);
	tm_remove(m, L1 "norm_2.weight");
	fx_refused(m, MPT_GQA, WT_ENOTFOUND, "norm_2.weight", "missing");
	/* no_bias: no bias tensor anywhere, a LayerNorm's included */
	m = tm_mpt(2);
	tm_add2(m, L1 "attn.Wqkv.bias", 12 * HD, 0);
	fx_refused(m, MPT_GQA, WT_EUNSUPPORTED, "attn.Wqkv.bias", "mpt");
	m = tm_mpt(2);
	tm_add2(m, L1 "norm_1.bias", HID, 0);
	fx_refused(m, MPT_GQA, WT_EUNSUPPORTED, "norm_1.bias", "mpt");
	/* Wqkv of n_heads kv heads when kv_n_heads says 2, and the reverse */
	fx_refused(tm_mpt(8), MPT_GQA, WT_ESHAPE, "Wqkv", "fix config.json");
	fx_refused(tm_mpt(2), MPT_CFG("", ""), WT_ESHAPE, "Wqkv", "fix config.json");
	/* heads a layout cannot split */
	fx_refused_tp(tm_mpt(2), MPT_GQA, 3, WT_ELAYOUT, "tp_size 3", "num_attention_heads 8");
	/* configs vLLM's mpt.py asserts against or ignores */
	fx_refused(tm_mpt(2), MPT_CFG(",\"tie_word_embeddings\":false", ",\"kv_n_heads\":2"),
	           WT_EUNSUPPORTED, "tie_word_embeddings is false", "set it true");
	fx_refused(tm_mpt(2), MPT_CFG(",\"logit_scale\":0.5", ",\"kv_n_heads\":2"), WT_EUNSUPPORTED,
	           "logit_scale is 0.5", "give null");
	fx_refused(tm_mpt(2), MPT_CFG("", ",\"kv_n_heads\":2,\"alibi\":false"), WT_EUNSUPPORTED,
	           "attn_config.alibi", "asserts ALiBi");
	fx_refused(tm_mpt(2), MPT_CFG("", ",\"kv_n_heads\":2,\"qk_ln\":true"), WT_EUNSUPPORTED,
	           "attn_config.qk_ln is true", "set it false");
	fx_refused(tm_mpt(2), MPT_CFG("", ",\"kv_n_heads\":2,\"prefix_lm\":true"), WT_EUNSUPPORTED,
	           "attn_config.prefix_lm", "asserts false");
	fx_refused(tm_mpt(2), MPT_CFG("", ",\"kv_n_heads\":2,\"softmax_scale\":0.25"),
	           WT_EUNSUPPORTED, "attn_config.softmax_scale is 0.25", "head_dim^-0.5");
	fx_refused(tm_mpt(2),
	           "{\"architectures\":[\"MptForCausalLM\"],\"model_type\":\"mpt\",\"d_model\":128,"
	           "\"n_heads\":8,\"n_layers\":2,\"no_bias\":false,\"vocab_size\":1000}",
	           WT_EUNSUPPORTED, "no_bias is false", "set it true");
	fx_refused(tm_mpt(2), MPT_CFG(",\"head_dim\":32", ",\"kv_n_heads\":2"), WT_EUNSUPPORTED,
	           "head_dim 32", "remove it");
	fx_refused(tm_mpt(2),
	           "{\"architectures\":[\"MptForCausalLM\"],\"model_type\":\"mpt\",\"d_model\":128,"
	           "\"n_heads\":8,\"n_layers\":2,\"expansion_ratio\":2.5,\"vocab_size\":1000}",
	           WT_ECORRUPT, "expansion_ratio", "integer");
	fx_refused(tm_mpt(2),
	           "{\"architectures\":[\"MptForCausalLM\"],\"model_type\":\"mpt\",\"d_model\":128,"
	           "\"n_heads\":8,\"n_layers\":2,\"vocab_size\":1000,\"attn_config\":[1]}",
	           WT_ECORRUPT, "'attn_config' is not an object", "");
	/* keys left out take MptConfig's defaults: expansion_ratio 4 (I 512), n_heads 16 */
	fx_refused(tm_mpt(8),
	           "{\"architectures\":[\"MptForCausalLM\"],\"model_type\":\"mpt\",\"d_model\":128,"
	           "\"n_heads\":8,\"n_layers\":2,\"vocab_size\":1000}",
	           WT_ESHAPE, "512", "fix config.json");
	fx_refused(tm_mpt(2),
	           "{\"architectures\":[\"MptForCausalLM\"],\"model_type\":\"mpt\",\"d_model\":128,"
	           "\"n_layers\":2,\"expansion_ratio\":2,\"vocab_size\":1000}",
	           WT_ESHAPE, "Wqkv", "[384, 128]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mpt_tp2),    cmocka_unit_test(test_mpt_tp4),
	    cmocka_unit_test(test_mpt_int8),   cmocka_unit_test(test_mpt_coverage),
	    cmocka_unit_test(test_mpt_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
