/*
 * test_shardmap_dbrx.c — DBRX (DbrxForCausalLM: dbrx-base, dbrx-instruct) cut as vLLM's dbrx.py
 * loads it: norm_attn_norm.attn.Wqkv ([q; k; v] rows) by heads with kv replication,
 * out_proj by columns, ffn.experts.mlp.w1 / v1 (2-D [E*Ie, hid]) into each local expert's
 * [gate_r; up_r] rows of w13_weight, w2 (2-D [E*Ie, hid], per expert the transpose of a
 * Linear) into w2_weight [E, hid, Il] by columns; under EP whole experts; norms and router
 * replicated. DbrxConfig's nested attn_config / ffn_config keys and defaults. Hand-computed
 * slices at TP 2, TP 4 and EP 2, int8 codes, coverage over TP 1..8 and EP, the refusals.
 * Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed00db
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* d_model 128, 8 heads of 16, 2 kv heads, 4 experts of 64, V 1000, 2 blocks */
#define HID 128
#define HD  16
#define NE  4
#define IE  64
#define DB_TOP                                                                                     \
	"\"architectures\":[\"DbrxForCausalLM\"],\"model_type\":\"dbrx\",\"d_model\":128,"         \
	"\"n_heads\":8,\"n_layers\":2,\"vocab_size\":1000,\"max_seq_len\":64"
#define DB_ATTN       "\"attn_config\":{\"kv_n_heads\":2,\"clip_qkv\":8.0,\"rope_theta\":500000}"
#define DB_FFN        "\"ffn_config\":{\"ffn_hidden_size\":64,\"moe_num_experts\":4,\"moe_top_k\":2}"
#define DB_CFG(extra) "{" DB_TOP "," DB_ATTN "," DB_FFN extra "}"
#define L1            "transformer.blocks.1."
#define QKV           L1 "norm_attn_norm.attn.Wqkv.weight"
#define W1            L1 "ffn.experts.mlp.w1"
#define V1            L1 "ffn.experts.mlp.v1"
#define W2            L1 "ffn.experts.mlp.w2"
#define W13           L1 "ffn.experts.w13_weight"
#define W2O           L1 "ffn.experts.w2_weight"

static void add_l(tm_model *m, int i, const char *leaf, int64_t a, int64_t b)
{
	char n[200];
	tm_fmt(n, sizeof(n), "transformer.blocks.%d.", i, leaf);
	tm_add2(m, n, a, b);
}

static tm_model *tm_dbrx(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "transformer.wte.weight", 1000, HID);
	tm_add2(m, "transformer.norm_f.weight", HID, 0);
	tm_add2(m, "lm_head.weight", 1000, HID);
	for (int i = 0; i < 2; i++) {
		add_l(m, i, "norm_attn_norm.norm_1.weight", HID, 0);
		add_l(m, i, "norm_attn_norm.norm_2.weight", HID, 0);
		add_l(m, i, "norm_attn_norm.attn.Wqkv.weight", (8 + 2 * 2) * HD, HID);
		add_l(m, i, "norm_attn_norm.attn.out_proj.weight", HID, HID);
		add_l(m, i, "ffn.router.layer.weight", NE, HID);
		add_l(m, i, "ffn.experts.mlp.w1", NE * IE, HID);
		add_l(m, i, "ffn.experts.mlp.v1", NE * IE, HID);
		add_l(m, i, "ffn.experts.mlp.w2", NE * IE, HID);
	}
	return m;
}

/* Rank r of T: q heads [r*8/T, +8/T), the kv head r*KV/T (KV 2; replicated when T > 2). */
static void qkv_is(const fx *f, uint32_t r, uint32_t T)
{
	int64_t hl = 8 / T, kvh = T <= 2 ? (int64_t)r * 2 / T : (int64_t)r * 2 / T;
	int64_t kvl = T <= 2 ? 2 / T : 1;
	rows_at(f, r, QKV, 0, QKV, r * hl * HD, hl * HD);
	rows_at(f, r, QKV, hl * HD, QKV, 8 * HD + kvh * HD, kvl * HD);
	rows_at(f, r, QKV, (hl + kvl) * HD, QKV, 10 * HD + kvh * HD, kvl * HD);
}

/* Rank output w13 [count, 2*il, hid]: local slot s (expert j) rows [gate; up] from w1 / v1
 * rows j*IE + at, +il. */
static void w13_is(const fx *f, uint32_t r, int64_t j0, int64_t count, int64_t at, int64_t il)
{
	for (int64_t s = 0; s < count; s++) {
		rows_at(f, r, W13, s * 2 * il, W1, (j0 + s) * IE + at, il);
		rows_at(f, r, W13, s * 2 * il + il, V1, (j0 + s) * IE + at, il);
	}
}

/* Rank output w2 [count, hid, il]: w2_weight[s][n][k] = w2[(j0 + s)*IE + at + k][n]. */
static void w2_is(const fx *f, uint32_t r, int64_t j0, int64_t count, int64_t at, int64_t il)
{
	size_t rowb;
	const uint16_t *src = (const uint16_t *)src_rows(f, W2, 0, &rowb);
	const uint16_t *o = (const uint16_t *)out_bytes(f, r, W2O);
	for (int64_t s = 0; s < count; s++)
		for (int64_t n = 0; n < HID; n++)
			for (int64_t k = 0; k < il; k++)
				if (o[(s * HID + n) * il + k] !=
				    src[((j0 + s) * IE + at + k) * HID + n])
					fail_msg("rank %u w2_weight[%lld][%lld][%lld] is not "
					         "w2[%lld][%lld]",
					         r, (long long)s, (long long)n, (long long)k,
					         (long long)((j0 + s) * IE + at + k), (long long)n);
}

static void test_dbrx_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_dbrx(), DB_CFG(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "dbrx");
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, QKV, 2, 6 * HD, HID, 0);
		qkv_is(&f, r, 2);
		cols_of(&f, r, 2, L1 "norm_attn_norm.attn.out_proj.weight",
		        L1 "norm_attn_norm.attn.out_proj.weight", HID, HID);
		repl(&f, r, L1 "norm_attn_norm.norm_1.weight");
		repl(&f, r, L1 "norm_attn_norm.norm_2.weight");
		repl(&f, r, L1 "ffn.router.layer.weight");
		repl(&f, r, "transformer.norm_f.weight");
		shp(&f, r, W13, 3, NE, 2 * 32, HID);
		w13_is(&f, r, 0, NE, r * 32, 32);
		shp(&f, r, W2O, 3, NE, HID, 32);
		w2_is(&f, r, 0, NE, r * 32, 32);
		assert_true(tm_ix(f.p, r, W1) < 0);
	}
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	rows_are(&f, 0, "transformer.wte.weight", 0, "transformer.wte.weight", 0, 512);
	fx_close(&f);
}

/* TP 4: two q heads a rank, kv head r/2 replicated on two ranks; experts split 4 ways. */
static void test_dbrx_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_dbrx(), DB_CFG(""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, QKV, 2, 4 * HD, HID, 0);
		qkv_is(&f, r, 4);
		w13_is(&f, r, 0, NE, r * 16, 16);
		w2_is(&f, r, 0, NE, r * 16, 16);
	}
	fx_close(&f);
}

/* EP 2 (TP 1): rank e holds experts 2e, 2e+1 whole; w13 up first when asked. */
static void test_dbrx_ep2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_dbrx(), DB_CFG(""), 1, 2, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, W13, 3, 2, 2 * IE, HID);
		w13_is(&f, r, 2 * r, 2, 0, IE);
		shp(&f, r, W2O, 3, 2, HID, IE);
		w2_is(&f, r, 2 * r, 2, 0, IE);
		repl(&f, r, L1 "ffn.router.layer.weight");
	}
	fx_close(&f);
	fx_open(&f, tm_dbrx(), DB_CFG(""), 2, 2, 1, true);
	/* ranks (ep e, tp t) = e*2 + t; up_gate: [up_r; gate_r] */
	for (uint32_t r = 0; r < 4; r++)
		for (int64_t s = 0; s < 2; s++) {
			int64_t j = 2 * (r / 2);
			rows_at(&f, r, W13, s * 2 * IE, V1, (j + s) * IE, IE);
			rows_at(&f, r, W13, s * 2 * IE + IE, W1, (j + s) * IE, IE);
		}
	fx_close(&f);
}

/* int8-channel at TP 2: Wqkv, out_proj and both expert stacks quantized per row. */
static void test_dbrx_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_dbrx(), DB_CFG(""), &l, true);
	assert_int_equal(info(&f, 1, QKV)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, W13)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, W2O)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, L1 "ffn.router.layer.weight")->dtype, WT_BF16);
	/* rank 1's w13 row (s*64 + 32 + k) is v1's row s*64 + 32 + k */
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, W13);
	const float *sc = (const float *)out_bytes(&f, 1, L1 "ffn.experts.w13_weight_scale");
	for (int64_t s = 0; s < NE; s++)
		for (int64_t k = 0; k < 32; k++) {
			int64_t row = s * 64 + 32 + k;
			size_t rowb;
			const uint16_t *x =
			    (const uint16_t *)src_rows(&f, V1, s * IE + 32 + k, &rowb);
			int8_row_is(q + row * HID, sc[row], x, HID);
		}
	/* rank 0's w2 row (s*128 + n) is w2's column n of rows s*64 + [0, 32) */
	q = (const int8_t *)out_bytes(&f, 0, W2O);
	sc = (const float *)out_bytes(&f, 0, L1 "ffn.experts.w2_weight_scale");
	size_t rowb;
	const uint16_t *w2 = (const uint16_t *)src_rows(&f, W2, 0, &rowb);
	for (int64_t s = 0; s < NE; s++)
		for (int64_t n = 0; n < HID; n += 37) {
			uint16_t x[32];
			for (int64_t k = 0; k < 32; k++)
				x[k] = w2[(s * IE + k) * HID + n];
			int8_row_is(q + (s * HID + n) * 32, sc[s * HID + n], x, 32);
		}
	fx_close(&f);
}

static void test_dbrx_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 2}, {1, 4}};
	coverage(tm_dbrx(), DB_CFG(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
}

/* DbrxConfig's nested keys and class defaults, as the loader reads them. */
static void test_dbrx_config(void **state)
{
	(void)state;
	static const char cfg[] = DB_CFG("");
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 128);
	assert_int_equal(c.num_attention_heads, 8);
	assert_int_equal(c.num_key_value_heads, 2);
	assert_int_equal(c.head_dim, 16);
	assert_int_equal(c.num_hidden_layers, 2);
	assert_int_equal(c.num_experts, 4);
	assert_int_equal(c.moe_intermediate_size, 64);
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
	/* absent keys: DbrxConfig's (d_model 2048, n_heads 16, kv_n_heads 1, 4 experts of 3584) */
	static const char bare[] =
	    "{\"architectures\":[\"DbrxForCausalLM\"],\"model_type\":\"dbrx\"}";
	assert_int_equal(ckpt_config_parse(bare, strlen(bare), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 2048);
	assert_int_equal(c.num_attention_heads, 16);
	assert_int_equal(c.num_key_value_heads, 1);
	assert_int_equal(c.num_hidden_layers, 24);
	assert_int_equal(c.vocab_size, 32000);
	assert_int_equal(c.num_experts, 4);
	assert_int_equal(c.moe_intermediate_size, 3584);
	ckpt_config_clear(&c);
	/* another model type does not read d_model / ffn_config */
	static const char llama[] = "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":64,"
	                            "\"num_attention_heads\":4,\"num_hidden_layers\":1,"
	                            "\"vocab_size\":10,\"d_model\":128,"
	                            "\"ffn_config\":{\"moe_num_experts\":4}}";
	assert_int_equal(ckpt_config_parse(llama, strlen(llama), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 64);
	assert_int_equal(c.num_experts, 0);
	ckpt_config_clear(&c);
	static const char tied[] = "{" DB_TOP ",\"tie_word_embeddings\":true}";
	assert_int_equal(ckpt_config_parse(tied, strlen(tied), &c, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "tie_word_embeddings true"));
	static const char gelu[] =
	    "{" DB_TOP ",\"ffn_config\":{\"ffn_act_fn\":{\"name\":\"gelu\"}}}";
	assert_int_equal(ckpt_config_parse(gelu, strlen(gelu), &c, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "ffn_act_fn is not {\"name\": \"silu\"} (gelu)"));
	static const char silu[] =
	    "{" DB_TOP ",\"ffn_config\":{\"ffn_act_fn\":{\"name\":\"silu\"}}}";
	assert_int_equal(ckpt_config_parse(silu, strlen(silu), &c, &err), WT_OK);
	ckpt_config_clear(&c);
	static const char flat[] = "{" DB_TOP ",\"attn_config\":4}";
	assert_int_equal(ckpt_config_parse(flat, strlen(flat), &c, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "'attn_config' is not an object"));
}

static void test_dbrx_errors(void **state)
{
	(void)state;
	/* the experts' stacks must be [E*ffn_hidden_size, d_model] */
	tm_model *m = tm_dbrx();
	tm_remove(m, W2);
	tm_add2(m, W2, NE * IE, 64);
	fx_refused(m, DB_CFG(""), WT_ESHAPE, "shape [256, 64] (an expert stack", "[4, 128, 64]");
	m = tm_dbrx();
	tm_remove(m, V1);
	tm_add2(m, V1, NE * IE + 1, HID);
	fx_refused(m, DB_CFG(""), WT_ESHAPE, "mlp.v1", "disagrees");
	/* a missing half of w13 */
	m = tm_dbrx();
	tm_remove(m, V1);
	fx_refused(m, DB_CFG(""), WT_ENOTFOUND, "mlp.v1", "missing");
	/* Llama's names are not DBRX's */
	m = tm_dbrx();
	tm_add2(m, L1 "self_attn.q_proj.weight", HID, HID);
	fx_refused(m, DB_CFG(""), WT_EUNSUPPORTED, "self_attn.q_proj.weight", "dbrx");
	/* an unknown expert leaf */
	m = tm_dbrx();
	tm_add2(m, L1 "ffn.experts.mlp.w3", NE * IE, HID);
	fx_refused(m, DB_CFG(""), WT_EUNSUPPORTED, "mlp.w3", "dbrx");
	/* heads must divide d_model; no head_dim key; experts required */
	fx_refused(
	    tm_dbrx(),
	    "{\"architectures\":[\"DbrxForCausalLM\"],\"model_type\":\"dbrx\",\"d_model\":128,"
	    "\"n_heads\":6,\"n_layers\":2,\"vocab_size\":1000," DB_ATTN "," DB_FFN "}",
	    WT_ECORRUPT, "d_model (128) divisible by n_heads (6)", "quotient");
	fx_refused(tm_dbrx(), DB_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "remove it");
	fx_refused(tm_dbrx(),
	           "{" DB_TOP "," DB_ATTN ",\"ffn_config\":{\"ffn_hidden_size\":64,"
	           "\"moe_num_experts\":0}}",
	           WT_ECORRUPT, "moe_num_experts > 0", "expert count");
	/* TP 3 divides neither the 8 heads nor the experts' 64 rows; TP 8 with 64 / 8 fine, but
	 * EP 3 over 4 experts is uneven yet allowed: TP 16 refused */
	fx_refused_tp(tm_dbrx(), DB_CFG(""), 3, WT_ELAYOUT, "num_attention_heads 8", "tp_size");
	/* keys left out take DbrxConfig's defaults (ffn_hidden_size 3584) */
	fx_refused(tm_dbrx(), "{" DB_TOP "," DB_ATTN ",\"ffn_config\":{\"moe_num_experts\":4}}",
	           WT_ESHAPE, "3584", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dbrx_tp2),      cmocka_unit_test(test_dbrx_tp4),
	    cmocka_unit_test(test_dbrx_ep2),      cmocka_unit_test(test_dbrx_int8),
	    cmocka_unit_test(test_dbrx_coverage), cmocka_unit_test(test_dbrx_config),
	    cmocka_unit_test(test_dbrx_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
