/*
 * test_shardmap_flex_olmo.c — FlexOlmo (FlexOlmoForCausalLM, FlexOlmo-7x7B-1T): OLMo 2's
 * attention and norms (no input_layernorm; post_attention_layernorm /
 * post_feedforward_layernorm replicated; q_norm [H*d] / k_norm [KV*d] over all heads
 * replicated in full) with OLMoE's MoE in every layer (router mlp.gate replicated, experts
 * stacked into w13 / w2, split by TP or whole per EP rank). Hand-computed slices at TP 2,
 * TP 4 and TP 2 x EP 2, an int8 layout, coverage over TP / EP layouts, and the refusals.
 * Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0031ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 256, H 8, KV 2, d 32 (H * d 256, KV * d 64), I 128 (the expert size), 4 experts
 * top-2, V 1000, 2 layers */
#define HID 256
#define HD  32
#define FO_CFG(extra)                                                                              \
	"{\"architectures\":[\"FlexOlmoForCausalLM\"],\"model_type\":\"flex_olmo\","               \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":128,\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define FO_OK FO_CFG(",\"num_experts\":4,\"num_experts_per_tok\":2")
#define L1    "model.layers.1."
#define A1    L1 "self_attn."
#define W13   L1 "mlp.experts.w13_weight"
#define W2    L1 "mlp.experts.w2_weight"
#define RT    L1 "mlp.gate.weight"
#define RB    (HID * 2) /* bytes of a BF16 row of hid columns */

static tm_model *tm_flex_olmo(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, HD, HID, 0, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_remove(m, b);
		tm_lin_l(m, i, "self_attn.q_norm.weight", 8 * HD, 0, 0);
		tm_lin_l(m, i, "self_attn.k_norm.weight", 2 * HD, 0, 0);
		tm_lin_l(m, i, "post_feedforward_layernorm.weight", HID, 0, 0);
		tm_lin_l(m, i, "mlp.gate.weight", 4, HID, 0);
		tm_experts(m, i, "mlp.experts.", 4, 128, HID, "gate_proj", "up_proj", "down_proj");
	}
	return m;
}

/* Source expert j's leaf of layer 1 from row r0 */
static const uint8_t *fo_exp(const fx *f, int64_t j, const char *leaf, int64_t r0)
{
	char b[200];
	size_t rowb;
	snprintf(b, sizeof(b), L1 "mlp.experts.%lld.%s.weight", (long long)j, leaf);
	return src_rows(f, b, r0, &rowb);
}

/* What every rank holds whole: q_norm [256], k_norm [64], the two post norms, the router. */
static void whole(const fx *f, uint32_t r)
{
	shp(f, r, A1 "q_norm.weight", 1, 8 * HD, 0, 0);
	shp(f, r, A1 "k_norm.weight", 1, 2 * HD, 0, 0);
	rows_are(f, r, A1 "q_norm.weight", 0, A1 "q_norm.weight", 0, 8 * HD);
	rows_are(f, r, A1 "k_norm.weight", 0, A1 "k_norm.weight", 0, 2 * HD);
	rows_are(f, r, L1 "post_attention_layernorm.weight", 0,
	         L1 "post_attention_layernorm.weight", 0, HID);
	rows_are(f, r, L1 "post_feedforward_layernorm.weight", 0,
	         L1 "post_feedforward_layernorm.weight", 0, HID);
	shp(f, r, RT, 2, 4, HID, 0);
	rows_are(f, r, RT, 0, RT, 0, 4);
	assert_true(tm_ix(f->p, r, L1 "input_layernorm.weight") < 0);
}

static void test_flex_olmo_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_flex_olmo(), FO_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "flex_olmo");
	assert_false(shardmap_tied_lm_head(f.p));
	/* rank 1: q heads 4..7 (rows 128..255), kv head 1 (rows 32..63) */
	const char *qkv = A1 "qkv_proj.weight";
	shp(&f, 1, qkv, 2, 128 + 64, HID, 0);
	rows_are(&f, 1, qkv, 0, A1 "q_proj.weight", 128, 128);
	rows_are(&f, 1, qkv, 128, A1 "k_proj.weight", 32, 32);
	rows_are(&f, 1, qkv, 160, A1 "v_proj.weight", 32, 32);
	shp(&f, 1, A1 "o_proj.weight", 2, HID, 128, 0);
	cols_at(&f, 1, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, 256, 128, 128);
	for (uint32_t r = 0; r < 2; r++)
		whole(&f, r);
	/* experts TP-split: rank 1's slot j = [gate_j rows [64, 128); up_j rows [64, 128)],
	 * w2 slot j = down_j columns [64, 128) */
	shp(&f, 1, W13, 3, 4, 128, HID);
	shp(&f, 1, W2, 3, 4, HID, 64);
	for (int64_t j = 0; j < 4; j++) {
		const uint8_t *w13 = out_bytes(&f, 1, W13) + (size_t)(j * 128) * RB;
		assert_memory_equal(w13, fo_exp(&f, j, "gate_proj", 64), 64 * RB);
		assert_memory_equal(w13 + 64 * RB, fo_exp(&f, j, "up_proj", 64), 64 * RB);
		const uint8_t *w2 = out_bytes(&f, 1, W2) + (size_t)(j * HID) * 128;
		const uint8_t *src = fo_exp(&f, j, "down_proj", 0);
		for (int64_t row = 0; row < HID; row++)
			assert_memory_equal(w2 + (size_t)row * 128, src + (size_t)row * 256 + 128,
			                    128);
	}
	/* untied (FlexOlmoConfig's default): lm_head by vocab rows */
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	fx_close(&f);
}

/* TP 4 > KV 2: kv head r / 2 on rank r; 32 expert rows per rank; the norms whole. */
static void test_flex_olmo_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_flex_olmo(), FO_OK, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, A1 "qkv_proj.weight", 2, 64 + 64, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.weight", 64, A1 "k_proj.weight", 32 * (r / 2), 32);
		rows_are(&f, r, A1 "qkv_proj.weight", 96, A1 "v_proj.weight", 32 * (r / 2), 32);
		whole(&f, r);
		shp(&f, r, W13, 3, 4, 64, HID);
		const uint8_t *w13 = out_bytes(&f, r, W13) + (size_t)(2 * 64) * RB;
		assert_memory_equal(w13, fo_exp(&f, 2, "gate_proj", 32 * r), 32 * RB);
		assert_memory_equal(w13 + 32 * RB, fo_exp(&f, 2, "up_proj", 32 * r), 32 * RB);
	}
	fx_close(&f);
}

/* TP 2 x EP 2: ep rank 1 (ranks 2, 3) holds experts 2, 3 whole. */
static void test_flex_olmo_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_flex_olmo(), FO_OK, 2, 2, 0, true);
	shp(&f, 3, W13, 3, 2, 256, HID);
	shp(&f, 2, W2, 3, 2, HID, 128);
	const uint8_t *w13 = out_bytes(&f, 3, W13), *w2 = out_bytes(&f, 2, W2);
	for (int64_t k = 0; k < 2; k++) {
		const uint8_t *o = w13 + (size_t)(k * 256) * RB;
		assert_memory_equal(o, fo_exp(&f, 2 + k, "gate_proj", 0), 128 * RB);
		assert_memory_equal(o + 128 * RB, fo_exp(&f, 2 + k, "up_proj", 0), 128 * RB);
		assert_memory_equal(w2 + (size_t)(k * HID) * 256, fo_exp(&f, 2 + k, "down_proj", 0),
		                    (size_t)HID * 256);
	}
	assert_memory_equal(out_bytes(&f, 0, W13), fo_exp(&f, 0, "gate_proj", 0), 128 * RB);
	for (uint32_t r = 0; r < 4; r++)
		whole(&f, r);
	fx_close(&f);
}

/* int8-channel at TP 2: o_proj and the experts quantized per row; the norms and the router
 * stay BF16 and whole. */
static void test_flex_olmo_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_flex_olmo(), FO_OK, &l, true);
	const char *o = A1 "o_proj.weight";
	assert_int_equal(info(&f, 1, o)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, W13)->dtype, WT_I8);
	shp(&f, 1, A1 "o_proj.weight_scale", 2, HID, 1, 0);
	assert_int_equal(info(&f, 1, A1 "q_norm.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, RT)->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, L1 "post_feedforward_layernorm.weight")->dtype, WT_BF16);
	assert_true(tm_ix(f.p, 1, RT "_scale") < 0);
	whole(&f, 1);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, o);
	const float *sc = (const float *)out_bytes(&f, 1, A1 "o_proj.weight_scale");
	for (int64_t row = 0; row < HID; row++) {
		size_t rowb;
		const uint16_t *x = (const uint16_t *)src_rows(&f, o, row, &rowb);
		int8_row_is(q + row * 128, sc[row], x + 128, 128);
	}
	fx_close(&f);
}

static void test_flex_olmo_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1},
	                                   {1, 2}, {2, 2}, {1, 4}, {2, 4}};
	coverage(tm_flex_olmo(), FO_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_flex_olmo_errors(void **state)
{
	(void)state;
	/* OLMoE's input_layernorm is not a FlexOlmo tensor */
	tm_model *m = tm_flex_olmo();
	tm_lin_l(m, 0, "input_layernorm.weight", HID, 0, 0);
	fx_refused(m, FO_OK, WT_EUNSUPPORTED, "model.layers.0.input_layernorm.weight", "flex_olmo");
	/* Qwen3's per-head q_norm [d] is not FlexOlmo's [H*d] */
	m = tm_flex_olmo();
	tm_remove(m, A1 "q_norm.weight");
	tm_lin_l(m, 1, "self_attn.q_norm.weight", HD, 0, 0);
	fx_refused(m, FO_OK, WT_ESHAPE, "q_norm", "256");
	/* a post norm missing */
	m = tm_flex_olmo();
	tm_remove(m, L1 "post_attention_layernorm.weight");
	fx_refused(m, FO_OK, WT_ENOTFOUND, L1 "post_attention_layernorm.weight", "missing");
	/* an expert missing */
	m = tm_flex_olmo();
	tm_remove(m, L1 "mlp.experts.3.up_proj.weight");
	fx_refused(m, FO_OK, WT_ENOTFOUND, L1 "mlp.experts.3.up_proj.weight", "missing");
	/* a dense MLP is not FlexOlmo's */
	m = tm_flex_olmo();
	tm_mlp(m, 0, "mlp.", 128, HID);
	fx_refused(m, FO_OK, WT_EUNSUPPORTED, "model.layers.0.mlp.", "flex_olmo");
	/* every layer is MoE: num_experts 0 is refused, not read as dense */
	fx_refused(tm_flex_olmo(), FO_CFG(",\"num_experts\":0,\"num_experts_per_tok\":2"),
	           WT_ECORRUPT, "num_experts", "FlexOlmoForCausalLM");
	/* absent: FlexOlmoConfig's 7 experts, which this checkpoint lacks */
	fx_refused(tm_flex_olmo(), FO_CFG(""), WT_ESHAPE, "mlp.gate.weight", "[7, 256]");
	/* TP 3 divides no head count */
	fx_refused_tp(tm_flex_olmo(), FO_OK, 3, WT_ELAYOUT, "does not divide", "tp_size");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flex_olmo_tp2),      cmocka_unit_test(test_flex_olmo_tp4),
	    cmocka_unit_test(test_flex_olmo_ep),       cmocka_unit_test(test_flex_olmo_int8),
	    cmocka_unit_test(test_flex_olmo_coverage), cmocka_unit_test(test_flex_olmo_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
