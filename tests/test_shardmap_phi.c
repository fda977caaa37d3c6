/*
 * test_shardmap_phi.c — Phi (PhiForCausalLM: microsoft/phi-2, phi-1_5) cut as vLLM's phi.py
 * loads it: q/k/v with their biases fused by heads into self_attn.qkv_proj, self_attn.dense
 * by columns (bias replicated), mlp.fc1 by rows with its bias, mlp.fc2 by columns (bias
 * replicated), input_layernorm and model.final_layernorm with biases replicated, lm_head's
 * weight and bias by vocabulary rows (the bias 1-D with zero padding, kept when tied).
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

#define SEED 0x5eed001aull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, head size 16, I 256, V 1000, 2 layers */
#define HID 128
#define HD  16
#define PH_CFG(extra)                                                                              \
	"{\"architectures\":[\"PhiForCausalLM\"],\"model_type\":\"phi\","                          \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"intermediate_size\":256,"                 \
	"\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define L1 "model.layers.1."
#define A1 L1 "self_attn."

/* The model; lm_head.weight unless tied. */
static tm_model *tm_phi(int lm_head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "model.embed_tokens.weight", 1000, HID);
	tm_add2(m, "model.final_layernorm.weight", HID, 0);
	tm_add2(m, "model.final_layernorm.bias", HID, 0);
	if (lm_head)
		tm_add2(m, "lm_head.weight", 1000, HID);
	tm_add2(m, "lm_head.bias", 1000, 0);
	char b[200];
	static const char *const leaves[][2] = {
	    {"input_layernorm.weight", "h"}, {"input_layernorm.bias", "h"},
	    {"self_attn.q_proj.bias", "h"},  {"self_attn.k_proj.bias", "h"},
	    {"self_attn.v_proj.bias", "h"},  {"self_attn.dense.bias", "h"},
	    {"mlp.fc1.bias", "i"},           {"mlp.fc2.bias", "h"},
	};
	for (int i = 0; i < 2; i++) {
		for (size_t k = 0; k < sizeof(leaves) / sizeof(leaves[0]); k++) {
			tm_fmt(b, sizeof(b), TM_L, i, leaves[k][0]);
			tm_add2(m, b, leaves[k][1][0] == 'i' ? 256 : HID, 0);
		}
		tm_lin_l(m, i, "self_attn.q_proj.weight", HID, HID, 0);
		tm_lin_l(m, i, "self_attn.k_proj.weight", HID, HID, 0);
		tm_lin_l(m, i, "self_attn.v_proj.weight", HID, HID, 0);
		tm_lin_l(m, i, "self_attn.dense.weight", HID, HID, 0);
		tm_lin_l(m, i, "mlp.fc1.weight", 256, HID, 0);
		tm_lin_l(m, i, "mlp.fc2.weight", HID, 256, 0);
	}
	return m;
}

static void test_phi_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_phi(1), PH_CFG(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "phi");
	for (uint32_t r = 0; r < 2; r++) {
		/* [q_r; k_r; v_r], 64 rows each, and the biases alike */
		shp(&f, r, A1 "qkv_proj.weight", 2, 192, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.weight", 64, A1 "k_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.weight", 128, A1 "v_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.bias", 128, A1 "v_proj.bias", 64 * r, 64);
		cols_of(&f, r, 2, A1 "dense.weight", A1 "dense.weight", HID, HID);
		repl(&f, r, A1 "dense.bias");
		rows_are(&f, r, L1 "mlp.fc1.weight", 0, L1 "mlp.fc1.weight", 128 * r, 128);
		rows_are(&f, r, L1 "mlp.fc1.bias", 0, L1 "mlp.fc1.bias", 128 * r, 128);
		cols_of(&f, r, 2, L1 "mlp.fc2.weight", L1 "mlp.fc2.weight", HID, 256);
		repl(&f, r, L1 "mlp.fc2.bias");
		repl(&f, r, L1 "input_layernorm.bias");
		repl(&f, r, "model.final_layernorm.bias");
		assert_true(tm_ix(f.p, r, A1 "q_proj.weight") < 0);
	}
	/* lm_head.bias [512] per rank: rank 1 entries [512, 1000) then 24 zeros */
	shp(&f, 1, "lm_head.bias", 1, 512, 0, 0);
	rows_are(&f, 1, "lm_head.bias", 0, "lm_head.bias", 512, 488);
	const uint16_t *z = (const uint16_t *)out_bytes(&f, 1, "lm_head.bias");
	for (int k = 488; k < 512; k++)
		assert_int_equal(z[k], 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	fx_close(&f);
}

/* TP 4, tied: no lm_head.weight; its bias still cut by vocabulary rows. */
static void test_phi_tp4_tied(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_phi(0), PH_CFG(",\"tie_word_embeddings\":true"), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		rows_are(&f, r, A1 "qkv_proj.weight", 32, A1 "k_proj.weight", 32 * r, 32);
		rows_are(&f, r, L1 "mlp.fc1.bias", 0, L1 "mlp.fc1.bias", 64 * r, 64);
		assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
		shp(&f, r, "lm_head.bias", 1, 256, 0, 0);
	}
	rows_are(&f, 2, "lm_head.bias", 0, "lm_head.bias", 512, 256);
	fx_close(&f);
}

/* int8-channel at TP 2: qkv, dense, fc1, fc2 quantized per row; biases and norms BF16. */
static void test_phi_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_phi(1), PH_CFG(""), &l, true);
	assert_int_equal(info(&f, 1, A1 "qkv_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, A1 "dense.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, L1 "mlp.fc2.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, "lm_head.bias")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, A1 "qkv_proj.bias")->dtype, WT_BF16);
	fx_rows_int8_is(&f, 1, L1 "mlp.fc1.weight", 0, L1 "mlp.fc1.weight", 128, 128, HID);
	fx_close(&f);
}

static void test_phi_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_phi(1), PH_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_phi_errors(void **state)
{
	(void)state;
	/* every Linear has its bias (nn.Linear's default; q/k/v bias=True) */
	tm_model *m = tm_phi(1);
	tm_remove(m, A1 "k_proj.bias");
	fx_refused(m, PH_CFG(""), WT_ENOTFOUND, "k_proj.bias", "missing");
	m = tm_phi(1);
	tm_remove(m, "lm_head.bias");
	fx_refused(m, PH_CFG(""), WT_ENOTFOUND, "lm_head.bias", "missing");
	/* Llama's o_proj and a q_layernorm are not Phi tensors */
	m = tm_phi(1);
	tm_add2(m, A1 "o_proj.weight", HID, HID);
	fx_refused(m, PH_CFG(""), WT_EUNSUPPORTED, "o_proj.weight", "phi");
	/* configs vLLM's phi.py cannot load */
	fx_refused(tm_phi(1), PH_CFG(",\"qk_layernorm\":true"), WT_EUNSUPPORTED,
	           "qk_layernorm true", "set it false");
	fx_refused(tm_phi(1), PH_CFG(",\"num_key_value_heads\":2"), WT_EUNSUPPORTED,
	           "num_key_value_heads 2", "phi.py");
	fx_refused(tm_phi(1), PH_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "remove it");
	fx_refused(tm_phi(1), PH_CFG(",\"qk_layernorm\":3"), WT_ECORRUPT, "qk_layernorm", "");
	/* fc1 rows split by intermediate_size; keys left out take PhiConfig's defaults */
	fx_refused(tm_phi(1),
	           "{\"architectures\":[\"PhiForCausalLM\"],\"model_type\":\"phi\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"vocab_size\":1000,"
	           "\"num_hidden_layers\":2}",
	           WT_ESHAPE, "8192", "fix config.json");
	fx_refused(tm_phi(1),
	           "{\"architectures\":[\"PhiForCausalLM\"],\"model_type\":\"phi\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"intermediate_size\":256,"
	           "\"num_hidden_layers\":2}",
	           WT_ESHAPE, "51200", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_phi_tp2),    cmocka_unit_test(test_phi_tp4_tied),
	    cmocka_unit_test(test_phi_int8),   cmocka_unit_test(test_phi_coverage),
	    cmocka_unit_test(test_phi_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
