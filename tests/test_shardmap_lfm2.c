/*
 * test_shardmap_lfm2.c — LFM2 (Lfm2ForCausalLM) cut as vLLM's lfm2.py / short_conv.py load
 * it: attention layers' q/k/v fused into qkv_proj by heads, out_proj by columns,
 * q_layernorm / k_layernorm whole; short-conv layers' conv.in_proj [B; C; x] split per
 * segment into short_conv.in_proj, conv.conv [hid, 1, K] by channels, out_proj by columns,
 * never quantized; feed_forward w1 / w3 merged into w13, w2 by columns, the MLP size from
 * block_auto_adjust_ff_dim's rule; model.embedding_norm replicated; tied by default.
 * Hand-computed slices at TP 2 and TP 4, conv_bias, an int8 layout, coverage over TP 1..8,
 * and the refusals. Seeds fixed and printed.
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

/* hid 128, H 8, KV 2, head_dim 16, MLP 256 (intermediate_size 300: int(200) rounded up to
 * block_multiple_of 64), conv 3 taps (conv_L_cache absent: Lfm2Config's 3), V 1000, 2
 * layers: 0 conv, 1 attention */
#define HID 128
#define HD  16
#define FF  256
#define LF_CFG_AT(extra)                                                                           \
	"{\"architectures\":[\"Lfm2ForCausalLM\"],\"model_type\":\"lfm2\","                        \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"vocab_size\":1000,\"num_hidden_layers\":2,\"block_multiple_of\":64" extra "}"
#define LF_CFG(extra) LF_CFG_AT(",\"intermediate_size\":300" extra)
#define LF_TYPES      ",\"layer_types\":[\"conv\",\"full_attention\"]"
#define LF_OK         LF_CFG(LF_TYPES)
#define L0            "model.layers.0."
#define L1            "model.layers.1."
#define C0            L0 "conv."
#define S0            L0 "short_conv."
#define A1            L1 "self_attn."

/* Layer 0 a short-conv layer, layer 1 attention; both with the norms and the MLP; no
 * lm_head (tied). bias: conv_bias's in_proj / conv / out_proj biases. */
static tm_model *tm_lfm2(int bias)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "model.embed_tokens.weight", 1000, HID);
	tm_add2(m, "model.embedding_norm.weight", HID, 0);
	for (int i = 0; i < 2; i++) {
		tm_lin_l(m, i, "operator_norm.weight", HID, 0, 0);
		tm_lin_l(m, i, "ffn_norm.weight", HID, 0, 0);
		tm_lin_l(m, i, "feed_forward.w1.weight", FF, HID, 0);
		tm_lin_l(m, i, "feed_forward.w3.weight", FF, HID, 0);
		tm_lin_l(m, i, "feed_forward.w2.weight", HID, FF, 0);
	}
	tm_add2(m, C0 "in_proj.weight", 3 * HID, HID);
	tm_add(m, C0 "conv.weight", WT_DTYPE_INVALID, 3, HID, 1, 3);
	tm_add2(m, C0 "out_proj.weight", HID, HID);
	if (bias) {
		tm_add2(m, C0 "in_proj.bias", 3 * HID, 0);
		tm_add2(m, C0 "conv.bias", HID, 0);
		tm_add2(m, C0 "out_proj.bias", HID, 0);
	}
	tm_add2(m, A1 "q_proj.weight", 8 * HD, HID);
	tm_add2(m, A1 "k_proj.weight", 2 * HD, HID);
	tm_add2(m, A1 "v_proj.weight", 2 * HD, HID);
	tm_add2(m, A1 "out_proj.weight", HID, 8 * HD);
	tm_add2(m, A1 "q_layernorm.weight", HD, 0);
	tm_add2(m, A1 "k_layernorm.weight", HD, 0);
	return m;
}

/* What every rank holds whole: the norms and the q/k layernorms. */
static void whole(const fx *f, uint32_t r)
{
	repl(f, r, "model.embedding_norm.weight");
	repl(f, r, L0 "operator_norm.weight");
	repl(f, r, L1 "ffn_norm.weight");
	repl(f, r, A1 "q_layernorm.weight");
	repl(f, r, A1 "k_layernorm.weight");
	assert_true(tm_ix(f->p, r, "lm_head.weight") < 0);
}

/* Rank r of T's short conv: in_proj [B_r; C_r; x_r], conv channels, out_proj columns. */
static void conv_rank(const fx *f, uint32_t r, uint32_t T)
{
	int64_t n = HID / T;
	shp(f, r, S0 "in_proj.weight", 2, 3 * n, HID, 0);
	for (int64_t k = 0; k < 3; k++)
		rows_at(f, r, S0 "in_proj.weight", k * n, C0 "in_proj.weight", k * HID + r * n, n);
	const sm_out_info *ci = info(f, r, S0 "conv.weight");
	assert_int_equal(ci->ndim, 3);
	assert_int_equal(ci->shape[0], n);
	assert_int_equal(ci->shape[1], 1);
	assert_int_equal(ci->shape[2], 3);
	rows_at(f, r, S0 "conv.weight", 0, C0 "conv.weight", r * n, n);
	cols_of(f, r, T, S0 "out_proj.weight", C0 "out_proj.weight", HID, HID);
	assert_true(tm_ix(f->p, r, C0 "in_proj.weight") < 0);
}

static void test_lfm2_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_lfm2(0), LF_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "lfm2");
	for (uint32_t r = 0; r < 2; r++) {
		conv_rank(&f, r, 2);
		whole(&f, r);
		/* attention: q heads 4r..4r+3 (64 rows), kv head r (16 rows) */
		fx_attn_is(&f, r, 2, A1, "out_proj.weight", 8, 2, HD, HID);
		/* MLP: w13 [w1_r; w3_r], 128 rows each; w2 by columns */
		for (int i = 0; i < 2; i++) {
			char w13[80], w1[80], w3[80], w2[80];
			snprintf(w13, sizeof(w13), "model.layers.%d.feed_forward.w13.weight", i);
			snprintf(w1, sizeof(w1), "model.layers.%d.feed_forward.w1.weight", i);
			snprintf(w3, sizeof(w3), "model.layers.%d.feed_forward.w3.weight", i);
			snprintf(w2, sizeof(w2), "model.layers.%d.feed_forward.w2.weight", i);
			shp(&f, r, w13, 2, FF, HID, 0);
			rows_at(&f, r, w13, 0, w1, 128 * r, 128);
			rows_at(&f, r, w13, 128, w3, 128 * r, 128);
			cols_of(&f, r, 2, w2, w2, HID, FF);
		}
		/* the tied embedding by vocab rows (padded to 1024) */
		rows_at(&f, r, "model.embed_tokens.weight", 0, "model.embed_tokens.weight", 512 * r,
		        r ? 488 : 512);
	}
	assert_true(tm_ix(f.p, 0, C0 "conv.bias") < 0);
	fx_close(&f);
}

/* TP 4 > KV 2: kv head r / 2 on rank r; the conv segments 32 rows each. */
static void test_lfm2_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_lfm2(0), LF_OK, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		conv_rank(&f, r, 4);
		whole(&f, r);
		fx_attn_is(&f, r, 4, A1, "out_proj.weight", 8, 2, HD, HID);
	}
	fx_close(&f);
}

/* conv_bias true: in_proj's bias by the three segments, conv's by channels, out_proj's
 * whole on every rank (RowParallelLinear adds it once, after the reduce). */
static void test_lfm2_conv_bias(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_lfm2(1), LF_CFG(LF_TYPES ",\"conv_bias\":true"), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		conv_rank(&f, r, 2);
		shp(&f, r, S0 "in_proj.bias", 1, 192, 0, 0);
		for (int64_t k = 0; k < 3; k++)
			rows_at(&f, r, S0 "in_proj.bias", 64 * k, C0 "in_proj.bias",
			        k * HID + 64 * r, 64);
		shp(&f, r, S0 "conv.bias", 1, 64, 0, 0);
		rows_at(&f, r, S0 "conv.bias", 0, C0 "conv.bias", 64 * r, 64);
		shp(&f, r, S0 "out_proj.bias", 1, HID, 0, 0);
		rows_at(&f, r, S0 "out_proj.bias", 0, C0 "out_proj.bias", 0, HID);
	}
	fx_close(&f);
}

/* int8-channel at TP 2: qkv_proj, out_proj, w13, w2 quantized per row; the short conv's
 * in_proj / conv / out_proj stay BF16 without scales (vLLM's ShortConv takes no
 * quant_config), as do the norms. */
static void test_lfm2_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_lfm2(0), LF_OK, &l, true);
	static const char *const q8[] = {A1 "qkv_proj.weight", A1 "out_proj.weight",
	                                 L0 "feed_forward.w13.weight", L1 "feed_forward.w2.weight"};
	for (size_t k = 0; k < sizeof(q8) / sizeof(q8[0]); k++)
		assert_int_equal(info(&f, 1, q8[k])->dtype, WT_I8);
	static const char *const bf[] = {S0 "in_proj.weight", S0 "conv.weight",
	                                 S0 "out_proj.weight", A1 "q_layernorm.weight",
	                                 "model.embedding_norm.weight"};
	for (size_t k = 0; k < sizeof(bf) / sizeof(bf[0]); k++) {
		char sc[120];
		assert_int_equal(info(&f, 1, bf[k])->dtype, WT_BF16);
		snprintf(sc, sizeof(sc), "%.*sweight_scale", (int)(strlen(bf[k]) - 6), bf[k]);
		assert_true(tm_ix(f.p, 1, sc) < 0);
	}
	conv_rank(&f, 1, 2);
	/* w13 rank 1 row j < 128: w1 row 128 + j, quantized */
	const char *w13 = L0 "feed_forward.w13.weight";
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, w13);
	const float *s = (const float *)out_bytes(&f, 1, L0 "feed_forward.w13.weight_scale");
	shp(&f, 1, L0 "feed_forward.w13.weight_scale", 2, FF, 1, 0);
	for (int64_t j = 0; j < FF; j++) {
		size_t rowb;
		const char *src =
		    j < 128 ? L0 "feed_forward.w1.weight" : L0 "feed_forward.w3.weight";
		const uint16_t *x = (const uint16_t *)src_rows(&f, src, 128 + j % 128, &rowb);
		int8_row_is(q + j * HID, s[j], x, HID);
	}
	fx_close(&f);
}

static void test_lfm2_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_lfm2(0), LF_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_lfm2(1), LF_CFG(LF_TYPES ",\"conv_bias\":true"), 2, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* The layer kinds without layer_types: full_attn_idxs; the original key names
 * block_ff_dim (over intermediate_size) and tie_embedding. */
static void test_lfm2_keys(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_lfm2(0), LF_CFG(",\"full_attn_idxs\":[1]"), 2, 1, 0, false);
	fx_close(&f);
	fx_open(&f, tm_lfm2(0),
	        LF_CFG_AT(",\"intermediate_size\":999,\"block_ff_dim\":300" LF_TYPES), 2, 1, 0,
	        false);
	fx_close(&f);
	/* a multiplier: int(1.5 * 200) = 300, rounded up to 320 */
	tm_model *m = tm_lfm2(0);
	for (int i = 0; i < 2; i++) {
		char b[80];
		static const char *const w[] = {"w1", "w3", "w2"};
		for (int k = 0; k < 3; k++) {
			snprintf(b, sizeof(b), "model.layers.%d.feed_forward.%s.weight", i, w[k]);
			tm_remove(m, b);
			if (k < 2)
				tm_add2(m, b, 320, HID);
			else
				tm_add2(m, b, HID, 320);
		}
	}
	fx_open(&f, m, LF_CFG(LF_TYPES ",\"block_ffn_dim_multiplier\":1.5"), 2, 1, 0, false);
	shp(&f, 0, L0 "feed_forward.w13.weight", 2, 320, HID, 0);
	fx_close(&f);
	/* block_auto_adjust_ff_dim false: intermediate_size as it is */
	m = tm_lfm2(0);
	fx_open(&f, m,
	        LF_CFG_AT(",\"intermediate_size\":256,\"block_auto_adjust_ff_dim\":false" LF_TYPES),
	        2, 1, 0, false);
	fx_close(&f);
	/* tie_embedding false: lm_head by vocab rows */
	m = tm_lfm2(0);
	tm_add2(m, "lm_head.weight", 1000, HID);
	fx_open(&f, m, LF_CFG(LF_TYPES ",\"tie_embedding\":false"), 2, 1, 0, true);
	rows_at(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	fx_close(&f);
}

static void test_lfm2_errors(void **state)
{
	(void)state;
	/* layer_types: one per layer, conv or full_attention only */
	fx_refused(tm_lfm2(0), LF_CFG(",\"layer_types\":[\"conv\"]"), WT_ECORRUPT,
	           "layer_types has 1", "num_hidden_layers is 2");
	fx_refused(tm_lfm2(0), LF_CFG(",\"layer_types\":[\"conv\",\"linear_attention\"]"),
	           WT_ECORRUPT, "layer_types[1]", "LFM2 layer types");
	fx_refused(tm_lfm2(0), LF_CFG(",\"full_attn_idxs\":[1, 2]"), WT_ECORRUPT,
	           "full_attn_idxs[1]", "num_hidden_layers 2");
	/* the layer kinds swapped: the conv layer's tensors in an attention layer */
	fx_refused(tm_lfm2(0), LF_CFG(",\"layer_types\":[\"full_attention\",\"conv\"]"),
	           WT_EUNSUPPORTED, "a full-attention layer", "layer_types, full_attn_idxs");
	/* no layer_types, no full_attn_idxs: every layer attends (Lfm2Config) */
	fx_refused(tm_lfm2(0), LF_CFG(""), WT_EUNSUPPORTED, C0, "a full-attention layer");
	/* a conv tensor missing */
	tm_model *m = tm_lfm2(0);
	tm_remove(m, C0 "conv.weight");
	fx_refused(m, LF_OK, WT_ENOTFOUND, C0 "conv.weight", "missing");
	/* conv biases with conv_bias false, and missing with it true */
	fx_refused(tm_lfm2(1), LF_OK, WT_EUNSUPPORTED, C0, "conv_bias is false");
	m = tm_lfm2(1);
	tm_remove(m, C0 "conv.bias");
	fx_refused(m, LF_CFG(LF_TYPES ",\"conv_bias\":true"), WT_ENOTFOUND, C0 "conv.bias",
	           "missing");
	/* a conv of another kernel */
	fx_refused(tm_lfm2(0), LF_CFG(LF_TYPES ",\"conv_L_cache\":4"), WT_ESHAPE, C0 "conv.weight",
	           "4");
	/* head_dim, block_dim, conv_dim other than the widths vLLM builds */
	fx_refused(tm_lfm2(0), LF_CFG(LF_TYPES ",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "hidden_size 128 / num_attention_heads 8 is 16");
	fx_refused(tm_lfm2(0), LF_CFG(LF_TYPES ",\"block_dim\":64"), WT_EUNSUPPORTED,
	           "block_dim is 64", "hidden_size is 128");
	fx_refused(tm_lfm2(0), LF_CFG(LF_TYPES ",\"conv_dim\":64"), WT_EUNSUPPORTED,
	           "conv_dim is 64", "hidden_size is 128");
	/* a null multiplier: transformers 200, vLLM 256 */
	fx_refused(tm_lfm2(0), LF_CFG(LF_TYPES ",\"block_ffn_dim_multiplier\":null"),
	           WT_EUNSUPPORTED, "= 200 in transformers", "256");
	/* the rule's size, not intermediate_size: 384 gives 256 with rounding, an MLP of 384
	 * is refused; intermediate_size absent takes Lfm2Config's 12288 (8192) */
	fx_refused(tm_lfm2(0), LF_CFG_AT(",\"intermediate_size\":192" LF_TYPES), WT_ESHAPE, "w1",
	           "128");
	fx_refused(tm_lfm2(0), LF_CFG_AT(LF_TYPES), WT_ESHAPE, "w1", "8192");
	/* a multiple or a multiplier whose rounding would overflow has no size (the hostile-config
	 * sweep: block_multiple_of 2^63-1 was a signed overflow under UBSan; the loader refuses
	 * integers past 2^40 now) */
	static const char huge_m[] =
	    "{\"architectures\":[\"Lfm2ForCausalLM\"],\"model_type\":\"lfm2\",\"hidden_size\":128,"
	    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"vocab_size\":1000,"
	    "\"num_hidden_layers\":2,\"intermediate_size\":300,"
	    "\"block_multiple_of\":9223372036854775807" LF_TYPES "}";
	fx_refused(tm_lfm2(0), huge_m, WT_ECORRUPT, "block_multiple_of 9223372036854775807",
	           "past 2^40");
	fx_refused(tm_lfm2(0), LF_CFG(LF_TYPES ",\"block_ffn_dim_multiplier\":1e300"), WT_ECORRUPT,
	           "MLP size of -1", "block_ffn_dim_multiplier");
	/* an unknown tensor */
	m = tm_lfm2(0);
	tm_add2(m, L0 "conv.state", HID, 0);
	fx_refused(m, LF_OK, WT_EUNSUPPORTED, L0 "conv.state", "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lfm2_tp2),       cmocka_unit_test(test_lfm2_tp4),
	    cmocka_unit_test(test_lfm2_conv_bias), cmocka_unit_test(test_lfm2_int8),
	    cmocka_unit_test(test_lfm2_coverage),  cmocka_unit_test(test_lfm2_keys),
	    cmocka_unit_test(test_lfm2_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
