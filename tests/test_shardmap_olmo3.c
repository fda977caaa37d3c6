/*
 * test_shardmap_olmo3.c — OLMo 3 (Olmo3ForCausalLM): OLMo 2's tensors exactly (no
 * input_layernorm; post_attention_layernorm / post_feedforward_layernorm replicated;
 * q_norm [H*d] / k_norm [KV*d] over all heads replicated in full on every rank, as the
 * engines gather q and k before them), Llama's fused q/k/v, o_proj by columns, gate/up
 * fused, down by columns, untied by default; its sliding / full layers (layer_types) are
 * checked but change no tensor. Hand-computed slices at TP 2 and TP 4, an int8 layout,
 * coverage over TP 1..8, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0013ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, KV 2, head_dim 32 (H * d = 256, KV * d = 64), I 256, V 1000, 2 layers */
#define HID 128
#define HD  32
#define O3_CFG(extra)                                                                              \
	"{\"architectures\":[\"Olmo3ForCausalLM\"],\"model_type\":\"olmo3\","                      \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"head_dim\":32,\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":2,"   \
	"\"rms_norm_eps\":1e-6,\"sliding_window\":4096" extra "}"
#define O3_OK O3_CFG(",\"layer_types\":[\"sliding_attention\",\"full_attention\"]")
#define L1    "model.layers.1."
#define A1    L1 "self_attn."

/* OLMo 2's layer: q/k/v/o without biases, the full-width q/k norms, the two post norms,
 * no input_layernorm; lm_head (Olmo3Config unties). */
static tm_model *tm_olmo3(void)
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
		tm_mlp(m, i, "mlp.", 256, HID);
	}
	return m;
}

/* The norms every rank holds whole: q_norm [256], k_norm [64], the two post norms. */
static void norms_whole(const fx *f, uint32_t r)
{
	shp(f, r, A1 "q_norm.weight", 1, 8 * HD, 0, 0);
	shp(f, r, A1 "k_norm.weight", 1, 2 * HD, 0, 0);
	rows_are(f, r, A1 "q_norm.weight", 0, A1 "q_norm.weight", 0, 8 * HD);
	rows_are(f, r, A1 "k_norm.weight", 0, A1 "k_norm.weight", 0, 2 * HD);
	rows_are(f, r, L1 "post_attention_layernorm.weight", 0,
	         L1 "post_attention_layernorm.weight", 0, HID);
	rows_are(f, r, L1 "post_feedforward_layernorm.weight", 0,
	         L1 "post_feedforward_layernorm.weight", 0, HID);
	assert_true(tm_ix(f->p, r, L1 "input_layernorm.weight") < 0);
}

static void test_olmo3_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_olmo3(), O3_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "olmo3");
	/* rank 1: q heads 4..7 (rows 128..255), kv head 1 (rows 32..63) */
	const char *qkv = A1 "qkv_proj.weight";
	shp(&f, 1, qkv, 2, 128 + 64, HID, 0);
	rows_are(&f, 1, qkv, 0, A1 "q_proj.weight", 128, 128);
	rows_are(&f, 1, qkv, 128, A1 "k_proj.weight", 32, 32);
	rows_are(&f, 1, qkv, 160, A1 "v_proj.weight", 32, 32);
	assert_true(tm_ix(f.p, 1, A1 "qkv_proj.bias") < 0);
	shp(&f, 1, A1 "o_proj.weight", 2, HID, 128, 0);
	cols_at(&f, 1, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, 256, 128, 128);
	for (uint32_t r = 0; r < 2; r++)
		norms_whole(&f, r);
	/* MLP: 128 rows of gate and of up per rank */
	const char *gu = L1 "mlp.gate_up_proj.weight";
	shp(&f, 1, gu, 2, 256, HID, 0);
	rows_are(&f, 1, gu, 0, L1 "mlp.gate_proj.weight", 128, 128);
	rows_are(&f, 1, gu, 128, L1 "mlp.up_proj.weight", 128, 128);
	cols_at(&f, 0, L1 "mlp.down_proj.weight", 0, L1 "mlp.down_proj.weight", HID, 256, 0, 128);
	/* tie_word_embeddings absent: untied (Olmo3Config's default), lm_head by vocab rows */
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	rows_are(&f, 1, "model.embed_tokens.weight", 0, "model.embed_tokens.weight", 512, 488);
	fx_close(&f);
}

/* TP 4 > KV 2: kv head r / 2 on rank r; the norms whole on every rank still. */
static void test_olmo3_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_olmo3(), O3_CFG(""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, A1 "qkv_proj.weight", 2, 64 + 64, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.weight", 64, A1 "k_proj.weight", 32 * (r / 2), 32);
		rows_are(&f, r, A1 "qkv_proj.weight", 96, A1 "v_proj.weight", 32 * (r / 2), 32);
		norms_whole(&f, r);
	}
	fx_close(&f);
}

/* int8-channel at TP 2: linear weights quantized per row (scale max(amax, 1e-8) / 127,
 * codes rint(x / s)); the norms stay BF16 and whole. */
static void test_olmo3_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_olmo3(), O3_OK, &l, true);
	const char *o = A1 "o_proj.weight";
	assert_int_equal(info(&f, 1, o)->dtype, WT_I8);
	shp(&f, 1, A1 "o_proj.weight_scale", 2, HID, 1, 0);
	assert_int_equal(info(&f, 1, A1 "q_norm.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, A1 "k_norm.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, L1 "post_feedforward_layernorm.weight")->dtype, WT_BF16);
	assert_true(tm_ix(f.p, 1, A1 "q_norm.weight_scale") < 0);
	norms_whole(&f, 1);
	/* o_proj rank 1: columns 128..255 of each row */
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, o);
	const float *sc = (const float *)out_bytes(&f, 1, A1 "o_proj.weight_scale");
	for (int64_t row = 0; row < HID; row++) {
		size_t rowb;
		const uint16_t *x = (const uint16_t *)src_rows(&f, o, row, &rowb);
		int8_row_is(q + row * 128, sc[row], x + 128, 128);
	}
	fx_close(&f);
}

static void test_olmo3_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_olmo3(), O3_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_olmo3_errors(void **state)
{
	(void)state;
	/* a Llama-style input_layernorm is not an OLMo 3 tensor */
	tm_model *m = tm_olmo3();
	tm_lin_l(m, 0, "input_layernorm.weight", HID, 0, 0);
	fx_refused(m, O3_OK, WT_EUNSUPPORTED, "model.layers.0.input_layernorm.weight", "olmo3");
	/* Qwen3's per-head q_norm [d] is not OLMo 3's [H*d] */
	m = tm_olmo3();
	tm_remove(m, A1 "q_norm.weight");
	tm_lin_l(m, 1, "self_attn.q_norm.weight", HD, 0, 0);
	fx_refused(m, O3_OK, WT_ESHAPE, "q_norm", "256");
	/* a post norm missing */
	m = tm_olmo3();
	tm_remove(m, L1 "post_feedforward_layernorm.weight");
	fx_refused(m, O3_OK, WT_ENOTFOUND, L1 "post_feedforward_layernorm.weight", "missing");
	/* layer_types: one per layer, sliding or full only */
	fx_refused(tm_olmo3(), O3_CFG(",\"layer_types\":[\"sliding_attention\"]"), WT_ECORRUPT,
	           "layer_types has 1", "num_hidden_layers is 2");
	fx_refused(tm_olmo3(),
	           O3_CFG(",\"layer_types\":[\"sliding_attention\",\"linear_attention\"]"),
	           WT_ECORRUPT, "layer_types[1]", "OLMo 3 layer types");
	/* keys left out take Olmo3Config's defaults (intermediate_size 11008) as in
	 * transformers: this checkpoint's MLP is refused by shape */
	fx_refused(tm_olmo3(),
	           "{\"architectures\":[\"Olmo3ForCausalLM\"],\"model_type\":\"olmo3\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"head_dim\":32,\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "down_proj", "11008");
	fx_refused(tm_olmo3(),
	           "{\"architectures\":[\"Olmo3ForCausalLM\"],\"model_type\":\"olmo3\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"head_dim\":32,\"intermediate_size\":256,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "[50304, 128]", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_olmo3_tp2),    cmocka_unit_test(test_olmo3_tp4),
	    cmocka_unit_test(test_olmo3_int8),   cmocka_unit_test(test_olmo3_coverage),
	    cmocka_unit_test(test_olmo3_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
