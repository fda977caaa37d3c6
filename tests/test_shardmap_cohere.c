/*
 * test_shardmap_cohere.c — Cohere Command R / R+ (CohereForCausalLM) and Command R7B /
 * Command A (Cohere2ForCausalLM): one input_layernorm per layer (the parallel block has
 * no post_attention_layernorm), Llama's fused q/k/v (biases with attention_bias), o_proj
 * by columns, gate/up fused, down by columns, tied by default; Command R+'s per-head
 * q_norm [H, d] / k_norm [KV, d] split by heads as q_proj / k_proj are (k heads
 * replicated with their k_proj rows when KV < T). Hand-computed slices at TP 2 and TP 4,
 * an int8 layout, coverage over TP 1..8, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0011ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, KV 2, head_dim 32 (H * d = 256), I 256, V 1000, 2 layers */
#define HID 128
#define HD  32
#define CO_CFG(arch, mt, extra)                                                                    \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"" mt "\","                             \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"head_dim\":32,\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":2,"   \
	"\"layer_norm_eps\":1e-5,\"logit_scale\":0.25" extra "}"
#define CO(extra)  CO_CFG("CohereForCausalLM", "cohere", extra)
#define CO2(extra) CO_CFG("Cohere2ForCausalLM", "cohere2", extra)
#define CO_OK      CO(",\"use_qk_norm\":true,\"attention_bias\":true")
#define L1         "model.layers.1."
#define A1         L1 "self_attn."

/* The model: Llama's attention without post_attention_layernorm; q_norm [8, 32] and
 * k_norm [2, 32] when qknorm; lm_head when untied. */
static tm_model *tm_cohere(int qknorm, int bias, int lm_head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, lm_head);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, HD, HID, bias, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
		tm_remove(m, b);
		if (qknorm) {
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.q_norm.weight");
			tm_add2(m, b, 8, HD);
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.k_norm.weight");
			tm_add2(m, b, 2, HD);
		}
		tm_mlp(m, i, "mlp.", 256, HID);
	}
	return m;
}

static void test_cohere_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_cohere(1, 1, 0), CO_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "cohere");
	/* rank 1: q heads 4..7 (rows 128..255), kv head 1 (rows 32..63), biases alike */
	const char *qkv = A1 "qkv_proj.weight", *qkvb = A1 "qkv_proj.bias";
	shp(&f, 1, qkv, 2, 128 + 64, HID, 0);
	rows_are(&f, 1, qkv, 0, A1 "q_proj.weight", 128, 128);
	rows_are(&f, 1, qkv, 128, A1 "k_proj.weight", 32, 32);
	rows_are(&f, 1, qkv, 160, A1 "v_proj.weight", 32, 32);
	rows_are(&f, 1, qkvb, 0, A1 "q_proj.bias", 128, 128);
	rows_are(&f, 1, qkvb, 128, A1 "k_proj.bias", 32, 32);
	shp(&f, 1, A1 "o_proj.weight", 2, HID, 128, 0);
	cols_at(&f, 1, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, 256, 128, 128);
	/* per-head norms follow their heads: q_norm rows 4..7, k_norm row 1 (rank 0: 0..3, 0) */
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, A1 "q_norm.weight", 2, 4, HD, 0);
		shp(&f, r, A1 "k_norm.weight", 2, 1, HD, 0);
		rows_are(&f, r, A1 "q_norm.weight", 0, A1 "q_norm.weight", 4 * r, 4);
		rows_are(&f, r, A1 "k_norm.weight", 0, A1 "k_norm.weight", r, 1);
		/* the one norm of the parallel block, replicated */
		rows_are(&f, r, L1 "input_layernorm.weight", 0, L1 "input_layernorm.weight", 0,
		         HID);
	}
	assert_true(tm_ix(f.p, 0, L1 "post_attention_layernorm.weight") < 0);
	/* MLP: 128 rows of gate and of up per rank */
	const char *gu = L1 "mlp.gate_up_proj.weight";
	shp(&f, 1, gu, 2, 256, HID, 0);
	rows_are(&f, 1, gu, 0, L1 "mlp.gate_proj.weight", 128, 128);
	rows_are(&f, 1, gu, 128, L1 "mlp.up_proj.weight", 128, 128);
	cols_at(&f, 0, L1 "mlp.down_proj.weight", 0, L1 "mlp.down_proj.weight", HID, 256, 0, 128);
	/* tie_word_embeddings absent: tied (CohereConfig's default), no lm_head emitted */
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0);
	shp(&f, 1, "model.embed_tokens.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "model.embed_tokens.weight", 0, "model.embed_tokens.weight", 512, 488);
	fx_close(&f);
}

/* TP 4 > KV 2: kv head r / 2 on rank r, with its k_norm row; q_norm rows 2r..2r+1. */
static void test_cohere_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_cohere(1, 0, 0), CO(",\"use_qk_norm\":true"), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, A1 "qkv_proj.weight", 2, 64 + 64, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.weight", 64, A1 "k_proj.weight", 32 * (r / 2), 32);
		shp(&f, r, A1 "q_norm.weight", 2, 2, HD, 0);
		shp(&f, r, A1 "k_norm.weight", 2, 1, HD, 0);
		rows_are(&f, r, A1 "q_norm.weight", 0, A1 "q_norm.weight", 2 * r, 2);
		rows_are(&f, r, A1 "k_norm.weight", 0, A1 "k_norm.weight", r / 2, 1);
	}
	fx_close(&f);
}

/* Cohere2 and an untied Cohere: no q/k norms, lm_head emitted by vocabulary rows. */
static void test_cohere2_untied(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_cohere(0, 0, 1),
	        CO2(",\"tie_word_embeddings\":false,\"sliding_window\":4096,\"layer_types\":["
	            "\"sliding_attention\",\"full_attention\"]"),
	        2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "cohere2");
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	assert_true(tm_ix(f.p, 0, A1 "q_norm.weight") < 0);
	shp(&f, 0, A1 "qkv_proj.weight", 2, 192, HID, 0);
	fx_close(&f);
	/* layer_types absent: Cohere2Config's sliding_window_pattern decides; nothing to check */
	fx_open(&f, tm_cohere(0, 0, 0), CO2(""), 2, 1, 0, false);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0);
	fx_close(&f);
}

/* int8-channel at TP 2: linear weights quantized per row (scale max(amax, 1e-8) / 127,
 * codes rint(x / s)); the norms, per-head ones included, and biases stay as they are. */
static void test_cohere_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_cohere(1, 1, 0), CO_OK, &l, true);
	const char *qkv = A1 "qkv_proj.weight";
	assert_int_equal(info(&f, 1, qkv)->dtype, WT_I8);
	shp(&f, 1, A1 "qkv_proj.weight_scale", 2, 192, 1, 0);
	assert_int_equal(info(&f, 1, A1 "q_norm.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, A1 "k_norm.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, A1 "qkv_proj.bias")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, L1 "input_layernorm.weight")->dtype, WT_BF16);
	assert_true(tm_ix(f.p, 1, A1 "k_norm.weight_scale") < 0);
	rows_are(&f, 1, A1 "k_norm.weight", 0, A1 "k_norm.weight", 1, 1);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, qkv);
	const float *sc = (const float *)out_bytes(&f, 1, A1 "qkv_proj.weight_scale");
	for (int64_t row = 0; row < 192; row++) {
		const char *src = row < 128   ? A1 "q_proj.weight"
		                  : row < 160 ? A1 "k_proj.weight"
		                              : A1 "v_proj.weight";
		int64_t at = row < 128 ? 128 + row : row < 160 ? 32 + row - 128 : 32 + row - 160;
		size_t rowb;
		const uint16_t *x = (const uint16_t *)src_rows(&f, src, at, &rowb);
		int8_row_is(q + row * HID, sc[row], x, HID);
	}
	fx_close(&f);
}

static void test_cohere_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_cohere(1, 1, 0), CO_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_cohere(0, 0, 1), CO2(",\"tie_word_embeddings\":false"), 2, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* A layout the model cannot take, refused at plan time naming the numbers. */
static void layout_refused(uint32_t T, const char *a, const char *b)
{
	fx_refused_tp_ep(tm_cohere(1, 0, 0), CO(",\"use_qk_norm\":true"), T, 1, WT_ELAYOUT, a, b);
}

static void test_cohere_layouts_refused(void **state)
{
	(void)state;
	layout_refused(16, "16", "8"); /* 8 heads */
	layout_refused(3, "3", "8");   /* heads not divisible */
}

static void test_cohere_errors(void **state)
{
	(void)state;
	/* use_qk_norm true: the norms are required; absent: they are unknown */
	tm_model *m = tm_cohere(1, 0, 0);
	tm_remove(m, A1 "k_norm.weight");
	fx_refused(m, CO(",\"use_qk_norm\":true"), WT_ENOTFOUND, A1 "k_norm.weight", "missing");
	fx_refused(tm_cohere(1, 0, 0), CO(""), WT_EUNSUPPORTED, "_norm.weight", "use_qk_norm");
	/* Cohere2 has no q/k norms at all */
	fx_refused(tm_cohere(1, 0, 0), CO2(",\"use_qk_norm\":true"), WT_EUNSUPPORTED,
	           "_norm.weight", "family cohere2");
	/* a q_norm of one head_dim (Qwen3's shape) is not Cohere's [H, d] */
	m = tm_cohere(0, 0, 0);
	tm_add2(m, "model.layers.0.self_attn.q_norm.weight", HD, 0);
	tm_add2(m, "model.layers.0.self_attn.k_norm.weight", 2, HD);
	fx_refused(m, CO(",\"use_qk_norm\":true"), WT_ESHAPE, "q_norm", "[8, 32]");
	/* a k_norm sized by query heads */
	m = tm_cohere(1, 0, 0);
	tm_remove(m, A1 "k_norm.weight");
	tm_add2(m, A1 "k_norm.weight", 8, HD);
	fx_refused(m, CO(",\"use_qk_norm\":true"), WT_ESHAPE, "k_norm", "[2, 32]");
	/* a sequential block's second norm is not Cohere's */
	m = tm_cohere(0, 0, 0);
	tm_add2(m, L1 "post_attention_layernorm.weight", HID, 0);
	fx_refused(m, CO(""), WT_EUNSUPPORTED, "post_attention_layernorm", "family cohere");
	/* a LayerNorm bias: CohereLayerNorm has none */
	m = tm_cohere(0, 0, 0);
	tm_add2(m, L1 "input_layernorm.bias", HID, 0);
	fx_refused(m, CO(""), WT_EUNSUPPORTED, "input_layernorm.bias", "unknown");
	/* Cohere2's layer_types: one per layer, sliding or full only */
	fx_refused(tm_cohere(0, 0, 0), CO2(",\"layer_types\":[\"sliding_attention\"]"), WT_ECORRUPT,
	           "layer_types has 1", "num_hidden_layers is 2");
	fx_refused(tm_cohere(0, 0, 0),
	           CO2(",\"layer_types\":[\"sliding_attention\",\"linear_attention\"]"),
	           WT_ECORRUPT, "layer_types[1]", "sliding_attention");
	/* keys left out take CohereConfig's defaults (intermediate_size 22528) as in
	 * transformers: this checkpoint's MLP is refused by shape */
	fx_refused(tm_cohere(0, 0, 0),
	           "{\"architectures\":[\"CohereForCausalLM\"],\"model_type\":\"cohere\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"head_dim\":32,\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "mlp.", "22528");
	fx_refused(tm_cohere(0, 0, 0),
	           "{\"architectures\":[\"Cohere2ForCausalLM\"],\"model_type\":\"cohere2\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"head_dim\":32,\"intermediate_size\":256,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "embed_tokens", "256000");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cohere_tp2),      cmocka_unit_test(test_cohere_tp4),
	    cmocka_unit_test(test_cohere2_untied),  cmocka_unit_test(test_cohere_int8),
	    cmocka_unit_test(test_cohere_coverage), cmocka_unit_test(test_cohere_layouts_refused),
	    cmocka_unit_test(test_cohere_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
