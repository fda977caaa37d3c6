/*
 * test_shardmap_nemotron.c — Nemotron (NemotronForCausalLM: Nemotron-4, Minitron): Llama's
 * layout whose norms are LayerNorm1P (input_layernorm, post_attention_layernorm, model.norm:
 * a weight and a bias each, replicated, never quantized), fused q/k/v with their biases and
 * o_proj's when attention_bias, and an MLP without a gate (up_proj by rows under its own
 * name, down_proj by columns, their biases when mlp_bias), as vLLM's nemotron.py loads them;
 * untied by default. Hand-computed slices at TP 2 and TP 4, an int8 layout, coverage over
 * TP 1..8, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0019ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, KV 2, head_dim 32 (H * d = 256, KV * d = 64), I 256, V 1000, 2 layers */
#define HID 128
#define HD  32
#define NM_CFG(extra)                                                                              \
	"{\"architectures\":[\"NemotronForCausalLM\"],\"model_type\":\"nemotron\","                \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":32," \
	"\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":2,"                   \
	"\"hidden_act\":\"relu2\"" extra "}"
#define NM_BIAS NM_CFG(",\"attention_bias\":true,\"mlp_bias\":true")
#define L1      "model.layers.1."
#define A1      L1 "self_attn."
#define M1      L1 "mlp."

/* Llama's layer with LayerNorm1P biases, without gate_proj; the attention's biases (o_proj
 * too) when attn_bias, the MLP's when mlp_bias; lm_head (untied). */
static tm_model *tm_nemotron(int attn_bias, int mlp_bias)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	tm_add2(m, "model.norm.bias", HID, 0);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, HD, HID, attn_bias, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.bias");
		tm_add2(m, b, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.bias");
		tm_add2(m, b, HID, 0);
		if (attn_bias) {
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.o_proj.bias");
			tm_add2(m, b, HID, 0);
		}
		tm_lin_l(m, i, "mlp.up_proj.weight", 256, HID, 0);
		tm_lin_l(m, i, "mlp.down_proj.weight", HID, 256, 0);
		if (mlp_bias) {
			tm_fmt(b, sizeof(b), TM_L, i, "mlp.up_proj.bias");
			tm_add2(m, b, 256, 0);
			tm_fmt(b, sizeof(b), TM_L, i, "mlp.down_proj.bias");
			tm_add2(m, b, HID, 0);
		}
	}
	return m;
}

static void test_nemotron_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_nemotron(1, 1), NM_BIAS, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "nemotron");
	const char *qkv = A1 "qkv_proj.weight";
	shp(&f, 1, qkv, 2, 128 + 64, HID, 0);
	rows_are(&f, 1, qkv, 0, A1 "q_proj.weight", 128, 128);
	rows_are(&f, 1, qkv, 128, A1 "k_proj.weight", 32, 32);
	rows_are(&f, 1, qkv, 160, A1 "v_proj.weight", 32, 32);
	const char *qkvb = A1 "qkv_proj.bias";
	shp(&f, 1, qkvb, 1, 128 + 64, 0, 0);
	rows_are(&f, 1, qkvb, 0, A1 "q_proj.bias", 128, 128);
	rows_are(&f, 1, qkvb, 128, A1 "k_proj.bias", 32, 32);
	rows_are(&f, 1, qkvb, 160, A1 "v_proj.bias", 32, 32);
	cols_at(&f, 1, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, 256, 128, 128);
	for (uint32_t r = 0; r < 2; r++) {
		/* up_proj rows [128r, +128) with the same entries of its bias; down_proj columns,
		 * its bias whole; the LayerNorm1P weights and biases whole */
		shp(&f, r, M1 "up_proj.weight", 2, 128, HID, 0);
		rows_are(&f, r, M1 "up_proj.weight", 0, M1 "up_proj.weight", 128 * r, 128);
		shp(&f, r, M1 "up_proj.bias", 1, 128, 0, 0);
		rows_are(&f, r, M1 "up_proj.bias", 0, M1 "up_proj.bias", 128 * r, 128);
		cols_of(&f, r, 2, M1 "down_proj.weight", M1 "down_proj.weight", HID, 256);
		repl(&f, r, M1 "down_proj.bias");
		repl(&f, r, A1 "o_proj.bias");
		repl(&f, r, L1 "input_layernorm.weight");
		repl(&f, r, L1 "input_layernorm.bias");
		repl(&f, r, L1 "post_attention_layernorm.weight");
		repl(&f, r, L1 "post_attention_layernorm.bias");
		repl(&f, r, "model.norm.weight");
		repl(&f, r, "model.norm.bias");
		assert_true(tm_ix(f.p, r, M1 "gate_up_proj.weight") < 0);
	}
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	fx_close(&f);
}

/* TP 4 > KV 2: kv head r / 2 on rank r; 64 up rows per rank; no biases but the norms'
 * (attention_bias and mlp_bias absent: NemotronConfig's false). */
static void test_nemotron_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_nemotron(0, 0), NM_CFG(""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		rows_are(&f, r, A1 "qkv_proj.weight", 64, A1 "k_proj.weight", 32 * (r / 2), 32);
		rows_are(&f, r, A1 "qkv_proj.weight", 96, A1 "v_proj.weight", 32 * (r / 2), 32);
		cols_of(&f, r, 4, A1 "o_proj.weight", A1 "o_proj.weight", HID, 256);
		shp(&f, r, M1 "up_proj.weight", 2, 64, HID, 0);
		rows_are(&f, r, M1 "up_proj.weight", 0, M1 "up_proj.weight", 64 * r, 64);
		cols_of(&f, r, 4, M1 "down_proj.weight", M1 "down_proj.weight", HID, 256);
		repl(&f, r, L1 "input_layernorm.bias");
		repl(&f, r, "model.norm.bias");
		assert_true(tm_ix(f.p, r, M1 "up_proj.bias") < 0);
		assert_true(tm_ix(f.p, r, A1 "qkv_proj.bias") < 0);
	}
	fx_close(&f);
}

/* int8-channel at TP 2: q/k/v, o, up_proj / down_proj quantized per row; the LayerNorm1P
 * weights and biases and the linear biases stay BF16. */
static void test_nemotron_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_nemotron(1, 1), NM_BIAS, &l, true);
	const char *up = M1 "up_proj.weight";
	assert_int_equal(info(&f, 1, up)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, M1 "down_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, A1 "qkv_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, A1 "o_proj.weight")->dtype, WT_I8);
	static const char *const bf16[] = {M1 "up_proj.bias",
	                                   M1 "down_proj.bias",
	                                   A1 "qkv_proj.bias",
	                                   A1 "o_proj.bias",
	                                   L1 "input_layernorm.weight",
	                                   L1 "input_layernorm.bias",
	                                   L1 "post_attention_layernorm.bias",
	                                   "model.norm.weight",
	                                   "model.norm.bias"};
	for (size_t k = 0; k < sizeof(bf16) / sizeof(bf16[0]); k++)
		assert_int_equal(info(&f, 1, bf16[k])->dtype, WT_BF16);
	assert_true(tm_ix(f.p, 1, L1 "input_layernorm.weight_scale") < 0);
	repl(&f, 1, L1 "input_layernorm.weight");
	repl(&f, 1, L1 "input_layernorm.bias");
	fx_rows_int8_is(&f, 1, up, 0, up, 128, 128, HID);
	fx_close(&f);
}

static void test_nemotron_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_nemotron(1, 1), NM_BIAS, 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_nemotron(0, 0), NM_CFG(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_nemotron_errors(void **state)
{
	(void)state;
	/* a gate is not a Nemotron tensor */
	tm_model *m = tm_nemotron(0, 0);
	tm_lin_l(m, 1, "mlp.gate_proj.weight", 256, HID, 0);
	fx_refused(m, NM_CFG(""), WT_EUNSUPPORTED, M1 "gate_proj.weight", "nemotron");
	/* LayerNorm1P has its bias: one left out is missing */
	m = tm_nemotron(0, 0);
	tm_remove(m, L1 "post_attention_layernorm.bias");
	fx_refused(m, NM_CFG(""), WT_ENOTFOUND, L1 "post_attention_layernorm.bias", "missing");
	m = tm_nemotron(0, 0);
	tm_remove(m, "model.norm.bias");
	fx_refused(m, NM_CFG(""), WT_ENOTFOUND, "model.norm.bias", "missing");
	/* attention_bias switches q/k/v/o's biases, mlp_bias the MLP's: required when true,
	 * unknown when false */
	fx_refused(tm_nemotron(0, 0), NM_CFG(",\"attention_bias\":true"), WT_ENOTFOUND,
	           "q_proj.bias", "missing");
	fx_refused(tm_nemotron(1, 0), NM_CFG(""), WT_EUNSUPPORTED, "proj.bias", "attention_bias");
	fx_refused(tm_nemotron(0, 0), NM_CFG(",\"mlp_bias\":true"), WT_ENOTFOUND, "up_proj.bias",
	           "mlp_bias");
	fx_refused(tm_nemotron(0, 1), NM_CFG(""), WT_EUNSUPPORTED, "proj.bias",
	           "mlp_bias is false");
	/* up_proj's rows split by intermediate_size: TP 2 does not divide 255 */
	m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	tm_add2(m, "model.norm.bias", HID, 0);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, HD, HID, 0, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.bias");
		tm_add2(m, b, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.bias");
		tm_add2(m, b, HID, 0);
		tm_lin_l(m, i, "mlp.up_proj.weight", 255, HID, 0);
		tm_lin_l(m, i, "mlp.down_proj.weight", HID, 255, 0);
	}
	fx_refused(m,
	           "{\"architectures\":[\"NemotronForCausalLM\"],\"model_type\":\"nemotron\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"head_dim\":32,\"intermediate_size\":255,\"vocab_size\":1000,"
	           "\"num_hidden_layers\":2}",
	           WT_ELAYOUT, "intermediate_size 255", "use tp_size 1");
	/* keys left out take NemotronConfig's defaults (intermediate_size 24576, vocab 256000) */
	fx_refused(tm_nemotron(0, 0),
	           "{\"architectures\":[\"NemotronForCausalLM\"],\"model_type\":\"nemotron\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"head_dim\":32,\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "down_proj", "24576");
	fx_refused(tm_nemotron(0, 0),
	           "{\"architectures\":[\"NemotronForCausalLM\"],\"model_type\":\"nemotron\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"head_dim\":32,\"intermediate_size\":256,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "[256000, 128]", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nemotron_tp2),    cmocka_unit_test(test_nemotron_tp4),
	    cmocka_unit_test(test_nemotron_int8),   cmocka_unit_test(test_nemotron_coverage),
	    cmocka_unit_test(test_nemotron_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
