/*
 * test_shardmap_exaone4.c — EXAONE 4.0 (Exaone4ForCausalLM): OLMo 2's post norms
 * (post_attention_layernorm / post_feedforward_layernorm replicated, no input_layernorm),
 * Qwen3's per-head q_norm / k_norm [d] replicated, Llama's bias-free fused q/k/v, o_proj by
 * columns, gate/up fused, down by columns; untied by default, tied when
 * tie_word_embeddings is true (no lm_head); its hybrid layers (layer_types) are checked
 * but change no tensor. Hand-computed slices at TP 2 and TP 4, an int8 layout, coverage
 * over TP 1..8, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0014ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, KV 2, head_dim 32 (H * d = 256), I 256, V 1000, 2 layers */
#define HID 128
#define HD  32
#define EX_CFG(extra)                                                                              \
	"{\"architectures\":[\"Exaone4ForCausalLM\"],\"model_type\":\"exaone4\","                  \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"head_dim\":32,\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":2,"   \
	"\"rms_norm_eps\":1e-5,\"sliding_window\":4096" extra "}"
#define EX_TIED                                                                                    \
	EX_CFG(                                                                                    \
	    ",\"tie_word_embeddings\":true,\"sliding_window_pattern\":\"LLLG\",\"layer_types\":"   \
	    "[\"sliding_attention\",\"full_attention\"]")
#define L1 "model.layers.1."
#define A1 L1 "self_attn."

/* The post norms, per-head q/k norms [32], no input_layernorm; lm_head when untied. */
static tm_model *tm_exaone4(int lm_head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, lm_head);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, HD, HID, 0, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_remove(m, b);
		tm_lin_l(m, i, "self_attn.q_norm.weight", HD, 0, 0);
		tm_lin_l(m, i, "self_attn.k_norm.weight", HD, 0, 0);
		tm_lin_l(m, i, "post_feedforward_layernorm.weight", HID, 0, 0);
		tm_mlp(m, i, "mlp.", 256, HID);
	}
	return m;
}

/* The norms every rank holds whole: q_norm / k_norm [32], the two post norms. */
static void norms_whole(const fx *f, uint32_t r)
{
	shp(f, r, A1 "q_norm.weight", 1, HD, 0, 0);
	shp(f, r, A1 "k_norm.weight", 1, HD, 0, 0);
	rows_are(f, r, A1 "q_norm.weight", 0, A1 "q_norm.weight", 0, HD);
	rows_are(f, r, A1 "k_norm.weight", 0, A1 "k_norm.weight", 0, HD);
	rows_are(f, r, L1 "post_attention_layernorm.weight", 0,
	         L1 "post_attention_layernorm.weight", 0, HID);
	rows_are(f, r, L1 "post_feedforward_layernorm.weight", 0,
	         L1 "post_feedforward_layernorm.weight", 0, HID);
	assert_true(tm_ix(f->p, r, L1 "input_layernorm.weight") < 0);
}

static void test_exaone4_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_exaone4(0), EX_TIED, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "exaone4");
	/* rank 1: q heads 4..7 (rows 128..255), kv head 1 (rows 32..63) */
	const char *qkv = A1 "qkv_proj.weight";
	shp(&f, 1, qkv, 2, 128 + 64, HID, 0);
	rows_are(&f, 1, qkv, 0, A1 "q_proj.weight", 128, 128);
	rows_are(&f, 1, qkv, 128, A1 "k_proj.weight", 32, 32);
	rows_are(&f, 1, qkv, 160, A1 "v_proj.weight", 32, 32);
	shp(&f, 1, A1 "o_proj.weight", 2, HID, 128, 0);
	cols_at(&f, 1, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, 256, 128, 128);
	for (uint32_t r = 0; r < 2; r++)
		norms_whole(&f, r);
	const char *gu = L1 "mlp.gate_up_proj.weight";
	shp(&f, 1, gu, 2, 256, HID, 0);
	rows_are(&f, 1, gu, 0, L1 "mlp.gate_proj.weight", 128, 128);
	rows_are(&f, 1, gu, 128, L1 "mlp.up_proj.weight", 128, 128);
	cols_at(&f, 0, L1 "mlp.down_proj.weight", 0, L1 "mlp.down_proj.weight", HID, 256, 0, 128);
	/* tied: the embedding's vocabulary rows only, no lm_head */
	assert_true(tm_ix(f.p, 1, "lm_head.weight") < 0);
	shp(&f, 1, "model.embed_tokens.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "model.embed_tokens.weight", 0, "model.embed_tokens.weight", 512, 488);
	fx_close(&f);
}

/* TP 4 > KV 2, untied (the key absent: Exaone4Config's false): kv head r / 2 on rank r, the
 * norms whole, lm_head by vocabulary rows. */
static void test_exaone4_tp4_untied(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_exaone4(1), EX_CFG(""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, A1 "qkv_proj.weight", 2, 64 + 64, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.weight", 64, A1 "k_proj.weight", 32 * (r / 2), 32);
		rows_are(&f, r, A1 "qkv_proj.weight", 96, A1 "v_proj.weight", 32 * (r / 2), 32);
		norms_whole(&f, r);
		shp(&f, r, "lm_head.weight", 2, 256, HID, 0);
	}
	rows_are(&f, 3, "lm_head.weight", 0, "lm_head.weight", 768, 232);
	fx_close(&f);
}

/* int8-channel at TP 2: q/k/v quantized per row (scale max(amax, 1e-8) / 127, codes
 * rint(x / s)); the norms stay BF16 and whole. */
static void test_exaone4_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_exaone4(0), EX_TIED, &l, true);
	const char *qkv = A1 "qkv_proj.weight";
	assert_int_equal(info(&f, 1, qkv)->dtype, WT_I8);
	shp(&f, 1, A1 "qkv_proj.weight_scale", 2, 192, 1, 0);
	assert_int_equal(info(&f, 1, A1 "q_norm.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, A1 "k_norm.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, L1 "post_attention_layernorm.weight")->dtype, WT_BF16);
	assert_true(tm_ix(f.p, 1, A1 "k_norm.weight_scale") < 0);
	norms_whole(&f, 1);
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

static void test_exaone4_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_exaone4(0), EX_TIED, 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_exaone4(1), EX_CFG(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_exaone4_errors(void **state)
{
	(void)state;
	/* a Llama-style input_layernorm is not an EXAONE 4.0 tensor */
	tm_model *m = tm_exaone4(0);
	tm_lin_l(m, 0, "input_layernorm.weight", HID, 0, 0);
	fx_refused(m, EX_TIED, WT_EUNSUPPORTED, "model.layers.0.input_layernorm.weight", "exaone4");
	/* OLMo 2's full-width k_norm [KV*d] is not EXAONE 4.0's per-head [d] */
	m = tm_exaone4(0);
	tm_remove(m, A1 "k_norm.weight");
	tm_lin_l(m, 1, "self_attn.k_norm.weight", 2 * HD, 0, 0);
	fx_refused(m, EX_TIED, WT_ESHAPE, "k_norm", "[32]");
	/* the q/k norms are not optional */
	m = tm_exaone4(0);
	tm_remove(m, A1 "q_norm.weight");
	fx_refused(m, EX_TIED, WT_ENOTFOUND, A1 "q_norm.weight", "missing");
	/* an untied checkpoint without its lm_head */
	fx_refused(tm_exaone4(0), EX_CFG(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	/* attention biases: Exaone4Attention has none */
	m = tm_exaone4(0);
	tm_lin_l(m, 1, "self_attn.o_proj.bias", HID, 0, 0);
	fx_refused(m, EX_TIED, WT_EUNSUPPORTED, A1 "o_proj.bias", "unknown tensor");
	m = tm_exaone4(0);
	tm_lin_l(m, 1, "self_attn.q_proj.bias", 8 * HD, 0, 0);
	tm_lin_l(m, 1, "self_attn.k_proj.bias", 2 * HD, 0, 0);
	tm_lin_l(m, 1, "self_attn.v_proj.bias", 2 * HD, 0, 0);
	fx_refused(m, EX_TIED, WT_EUNSUPPORTED, "_proj.bias", "unknown tensor");
	/* layer_types: one per layer, sliding or full only */
	fx_refused(tm_exaone4(0), EX_CFG(",\"tie_word_embeddings\":true,\"layer_types\":[]"),
	           WT_ECORRUPT, "layer_types has 0", "num_hidden_layers is 2");
	fx_refused(tm_exaone4(0),
	           EX_CFG(",\"tie_word_embeddings\":true,\"layer_types\":[\"sliding_attention\","
	                  "\"chunked_attention\"]"),
	           WT_ECORRUPT, "layer_types[1]", "EXAONE 4.0 layer types");
	/* keys left out take Exaone4Config's defaults (intermediate_size 16384, vocab_size
	 * 102400) as in transformers: this checkpoint is refused by shape */
	fx_refused(tm_exaone4(1),
	           "{\"architectures\":[\"Exaone4ForCausalLM\"],\"model_type\":\"exaone4\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"head_dim\":32,\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "down_proj", "16384");
	fx_refused(tm_exaone4(1),
	           "{\"architectures\":[\"Exaone4ForCausalLM\"],\"model_type\":\"exaone4\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"head_dim\":32,\"intermediate_size\":256,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "[102400, 128]", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exaone4_tp2),    cmocka_unit_test(test_exaone4_tp4_untied),
	    cmocka_unit_test(test_exaone4_int8),   cmocka_unit_test(test_exaone4_coverage),
	    cmocka_unit_test(test_exaone4_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
