/*
 * test_shardmap_apertus.c — Apertus (ApertusForCausalLM): attention_layernorm /
 * feedforward_layernorm replicated, Llama's fused q/k/v (biases with attention_bias) and
 * o_proj by columns, Qwen3's per-head q_norm / k_norm [d] replicated, an MLP without a
 * gate: mlp.up_proj by rows under its own name (column parallel), mlp.down_proj by
 * columns (row parallel), as vLLM's apertus.py loads them; xIELU's act_fn.alpha_p /
 * alpha_n [1] and beta / eps [] replicated and never quantized; untied by default.
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

#define SEED 0x5eed0017ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, KV 2, head_dim 32 (H * d = 256, KV * d = 64), I 256, V 1000, 2 layers */
#define HID 128
#define HD  32
#define AP_CFG(extra)                                                                              \
	"{\"architectures\":[\"ApertusForCausalLM\"],\"model_type\":\"apertus\","                  \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":32," \
	"\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":2,"                   \
	"\"hidden_act\":\"xielu\"" extra "}"
#define AP_OK AP_CFG("")
#define L1    "model.layers.1."
#define A1    L1 "self_attn."
#define X1    L1 "mlp.act_fn."

/* Apertus's layer: its two norms, q/k/v/o (biases when bias), q/k norms [d], up / down,
 * the xIELU scalars (beta / eps when buffers); lm_head (ApertusConfig unties). */
static tm_model *tm_apertus_i(int bias, int buffers, int64_t I)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, HD, HID, bias, 1);
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_remove(m, b);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
		tm_remove(m, b);
		tm_lin_l(m, i, "attention_layernorm.weight", HID, 0, 0);
		tm_lin_l(m, i, "feedforward_layernorm.weight", HID, 0, 0);
		if (bias)
			tm_lin_l(m, i, "self_attn.o_proj.bias", HID, 0, 0);
		tm_lin_l(m, i, "mlp.up_proj.weight", I, HID, 0);
		tm_lin_l(m, i, "mlp.down_proj.weight", HID, I, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.act_fn.alpha_p");
		tm_add(m, b, WT_DTYPE_INVALID, 1, 1, 0, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.act_fn.alpha_n");
		tm_add(m, b, WT_DTYPE_INVALID, 1, 1, 0, 0);
		if (buffers) {
			tm_fmt(b, sizeof(b), TM_L, i, "mlp.act_fn.beta");
			tm_add(m, b, WT_DTYPE_INVALID, 0, 0, 0, 0);
			tm_fmt(b, sizeof(b), TM_L, i, "mlp.act_fn.eps");
			tm_add(m, b, WT_DTYPE_INVALID, 0, 0, 0, 0);
		}
	}
	return m;
}

static tm_model *tm_apertus_b(int bias, int buffers)
{
	return tm_apertus_i(bias, buffers, 256);
}

static tm_model *tm_apertus(void)
{
	return tm_apertus_b(0, 1);
}

/* What every rank holds whole: the two norms, q_norm / k_norm [32], the xIELU scalars
 * (alpha_p / alpha_n [1], beta / eps [] when the checkpoint has them). */
static void whole(const fx *f, uint32_t r, int buffers)
{
	shp(f, r, A1 "q_norm.weight", 1, HD, 0, 0);
	repl(f, r, A1 "q_norm.weight");
	repl(f, r, A1 "k_norm.weight");
	repl(f, r, L1 "attention_layernorm.weight");
	repl(f, r, L1 "feedforward_layernorm.weight");
	shp(f, r, X1 "alpha_p", 1, 1, 0, 0);
	repl(f, r, X1 "alpha_p");
	repl(f, r, X1 "alpha_n");
	if (buffers) {
		shp(f, r, X1 "beta", 0, 0, 0, 0);
		repl(f, r, X1 "beta");
		repl(f, r, X1 "eps");
	} else {
		assert_true(tm_ix(f->p, r, X1 "beta") < 0);
	}
	assert_true(tm_ix(f->p, r, L1 "input_layernorm.weight") < 0);
	assert_true(tm_ix(f->p, r, L1 "mlp.gate_up_proj.weight") < 0);
}

static void test_apertus_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_apertus(), AP_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "apertus");
	/* rank 1: q heads 4..7 (rows 128..255), kv head 1 (rows 32..63) */
	const char *qkv = A1 "qkv_proj.weight";
	shp(&f, 1, qkv, 2, 128 + 64, HID, 0);
	rows_are(&f, 1, qkv, 0, A1 "q_proj.weight", 128, 128);
	rows_are(&f, 1, qkv, 128, A1 "k_proj.weight", 32, 32);
	rows_are(&f, 1, qkv, 160, A1 "v_proj.weight", 32, 32);
	assert_true(tm_ix(f.p, 1, A1 "qkv_proj.bias") < 0);
	shp(&f, 1, A1 "o_proj.weight", 2, HID, 128, 0);
	cols_at(&f, 1, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, 256, 128, 128);
	for (uint32_t r = 0; r < 2; r++) {
		whole(&f, r, 1);
		/* up_proj: rows [128r, +128) under its own name; down_proj columns alike */
		shp(&f, r, L1 "mlp.up_proj.weight", 2, 128, HID, 0);
		rows_are(&f, r, L1 "mlp.up_proj.weight", 0, L1 "mlp.up_proj.weight", 128 * r, 128);
		cols_of(&f, r, 2, L1 "mlp.down_proj.weight", L1 "mlp.down_proj.weight", HID, 256);
	}
	/* tie_word_embeddings absent: untied (ApertusConfig's default), lm_head by vocab rows */
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	fx_close(&f);
}

/* TP 4 > KV 2: kv head r / 2 on rank r; 64 rows of up per rank; the scalars whole. With
 * attention_bias the q/k/v biases fuse and o_proj's is replicated. */
static void test_apertus_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_apertus_b(1, 1), AP_CFG(",\"attention_bias\":true"), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, A1 "qkv_proj.weight", 2, 64 + 64, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.weight", 64, A1 "k_proj.weight", 32 * (r / 2), 32);
		rows_are(&f, r, A1 "qkv_proj.weight", 96, A1 "v_proj.weight", 32 * (r / 2), 32);
		rows_are(&f, r, A1 "qkv_proj.bias", 0, A1 "q_proj.bias", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.bias", 64, A1 "k_proj.bias", 32 * (r / 2), 32);
		repl(&f, r, A1 "o_proj.bias");
		shp(&f, r, L1 "mlp.up_proj.weight", 2, 64, HID, 0);
		rows_are(&f, r, L1 "mlp.up_proj.weight", 0, L1 "mlp.up_proj.weight", 64 * r, 64);
		cols_of(&f, r, 4, L1 "mlp.down_proj.weight", L1 "mlp.down_proj.weight", HID, 256);
		whole(&f, r, 1);
	}
	fx_close(&f);
	/* beta / eps left out (the class's buffers): planned without them */
	fx_open(&f, tm_apertus_b(0, 0), AP_OK, 2, 1, 0, true);
	whole(&f, 1, 0);
	fx_close(&f);
}

/* int8-channel at TP 2: up_proj and down_proj quantized per row (scale max(amax, 1e-8) /
 * 127, codes rint(x / s)); the norms and the xIELU scalars stay BF16 and whole. */
static void test_apertus_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_apertus(), AP_OK, &l, true);
	const char *up = L1 "mlp.up_proj.weight", *dn = L1 "mlp.down_proj.weight";
	assert_int_equal(info(&f, 1, up)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, dn)->dtype, WT_I8);
	shp(&f, 1, L1 "mlp.up_proj.weight_scale", 2, 128, 1, 0);
	shp(&f, 1, L1 "mlp.down_proj.weight_scale", 2, HID, 1, 0);
	static const char *const kept[] = {X1 "alpha_p",       X1 "alpha_n",
	                                   X1 "beta",          X1 "eps",
	                                   A1 "q_norm.weight", L1 "feedforward_layernorm.weight"};
	for (size_t k = 0; k < sizeof(kept) / sizeof(kept[0]); k++) {
		char sc[200];
		snprintf(sc, sizeof(sc), "%s_scale", kept[k]);
		assert_int_equal(info(&f, 1, kept[k])->dtype, WT_BF16);
		assert_true(tm_ix(f.p, 1, sc) < 0);
	}
	whole(&f, 1, 1);
	/* up_proj rank 1: rows 128..255, each quantized */
	fx_rows_int8_is(&f, 1, up, 0, up, 128, 128, HID);
	/* down_proj rank 1: columns 128..255 of each row */
	fx_cols_int8_is(&f, 1, 2, dn, HID, 256);
	fx_close(&f);
}

static void test_apertus_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_apertus(), AP_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_apertus_errors(void **state)
{
	(void)state;
	/* a gate is not an Apertus tensor, nor is Llama's input_layernorm */
	tm_model *m = tm_apertus();
	tm_lin_l(m, 1, "mlp.gate_proj.weight", 256, HID, 0);
	fx_refused(m, AP_OK, WT_EUNSUPPORTED, L1 "mlp.gate_proj.weight", "apertus");
	m = tm_apertus();
	tm_lin_l(m, 0, "input_layernorm.weight", HID, 0, 0);
	fx_refused(m, AP_OK, WT_EUNSUPPORTED, "model.layers.0.input_layernorm.weight", "apertus");
	/* xIELU's parameters are required; a per-channel alpha is not Apertus's */
	m = tm_apertus();
	tm_remove(m, X1 "alpha_n");
	fx_refused(m, AP_OK, WT_ENOTFOUND, X1 "alpha_n", "missing");
	m = tm_apertus();
	tm_remove(m, X1 "alpha_p");
	tm_add(m, X1 "alpha_p", WT_DTYPE_INVALID, 1, 256, 0, 0);
	fx_refused(m, AP_OK, WT_ESHAPE, X1 "alpha_p", "[1]");
	m = tm_apertus();
	tm_remove(m, X1 "eps");
	tm_add(m, X1 "eps", WT_DTYPE_INVALID, 1, 1, 0, 0);
	fx_refused(m, AP_OK, WT_ESHAPE, X1 "eps", "disagrees with config.json");
	/* attention_bias switches the biases: required when true, unknown when false */
	fx_refused(tm_apertus(), AP_CFG(",\"attention_bias\":true"), WT_ENOTFOUND, "q_proj.bias",
	           "missing");
	fx_refused(tm_apertus_b(1, 1), AP_OK, WT_EUNSUPPORTED, "k_proj.bias",
	           "attention_bias is false");
	/* a per-head q_norm [d] only: OLMo 2's [H*d] is refused */
	m = tm_apertus();
	tm_remove(m, A1 "q_norm.weight");
	tm_lin_l(m, 1, "self_attn.q_norm.weight", 8 * HD, 0, 0);
	fx_refused(m, AP_OK, WT_ESHAPE, "q_norm", "32");
	/* up_proj's rows split by intermediate_size: 255 over TP 2 is refused */
	fx_refused(tm_apertus_i(0, 1, 255),
	           "{\"architectures\":[\"ApertusForCausalLM\"],\"model_type\":\"apertus\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_"
	           "dim\":32,"
	           "\"intermediate_size\":255,\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ELAYOUT, "intermediate_size 255", "use tp_size 1");
	/* keys left out take ApertusConfig's defaults (intermediate_size 14336, vocab 131072) */
	fx_refused(tm_apertus(),
	           "{\"architectures\":[\"ApertusForCausalLM\"],\"model_type\":\"apertus\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_"
	           "dim\":32,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "down_proj", "14336");
	fx_refused(tm_apertus(),
	           "{\"architectures\":[\"ApertusForCausalLM\"],\"model_type\":\"apertus\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_"
	           "dim\":32,"
	           "\"intermediate_size\":256,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "[131072, 128]", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_apertus_tp2),    cmocka_unit_test(test_apertus_tp4),
	    cmocka_unit_test(test_apertus_int8),   cmocka_unit_test(test_apertus_coverage),
	    cmocka_unit_test(test_apertus_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
