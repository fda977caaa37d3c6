/*
 * test_shardmap_falconh1.c — Falcon-H1 (FalconH1ForCausalLM, falcon_h1): in every layer
 * Granite 4.0's attention and Mamba2 mixer side by side (family_granite4.c's shared rules),
 * the mixer mamba_d_ssm wide (not mamba_expand * hidden_size), its gated norm only with
 * mamba_rms_norm, the attention's own head_dim (heads x head_dim != hidden_size), Bamba's
 * SwiGLU feed_forward after pre_ff_layernorm, model.final_layernorm. Hand-computed slices
 * at TP 2, TP 4 and TP 8 (the one group's B and C whole on every rank), int8 codes at TP 1,
 * coverage over TP 1 / 2 / 4 / 8 with and without the norm, FalconH1Config's defaults and
 * the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0xfa1c0411ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, L 2, each layer attention and Mamba; attention H 8 / KV 2 / d 32 (q 256 rows);
 * Mamba mamba_d_ssm 192 = 8 heads of 24, 1 group of state 16, conv 4: in_proj [424, 128]
 * rows z [0, 192), x [192, 384), B [384, 400), C [400, 416), dt [416, 424); conv1d
 * [224, 1, 4]; the gated norm [192]; feed_forward 192; V 1003, untied */
#define HID 128
#define FH_BASE0                                                                                   \
	"\"architectures\":[\"FalconH1ForCausalLM\"],\"model_type\":\"falcon_h1\","                \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"head_dim\":32,\"intermediate_size\":192,\"vocab_size\":1003,"                           \
	"\"num_hidden_layers\":2,\"mamba_d_state\":16,\"mamba_d_conv\":4,\"mamba_expand\":2,"      \
	"\"mamba_n_heads\":8"
#define FH_BASE   FH_BASE0 ",\"mamba_d_ssm\":192,\"mamba_d_head\":\"auto\""
#define FH_CFG(x) "{" FH_BASE ",\"mamba_rms_norm\":true" x "}"
#define FH_OK     FH_CFG("")
#define M1        "model.layers.1.mamba."
#define ATT1      "model.layers.1.self_attn."
#define FF1       "model.layers.1.feed_forward."
#define INP       M1 "in_proj.weight"
#define CONV      M1 "conv1d.weight"
#define CONVB     M1 "conv1d.bias"
#define OUTP      M1 "out_proj.weight"
#define QKV1      ATT1 "qkv_proj.weight"

/* L layers, each with attention and the mixer; norm: the mixer's gated norm */
static tm_model *tm_fh1_n(bool norm)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "model.embed_tokens.weight", 1003, HID);
	tm_add2(m, "model.final_layernorm.weight", HID, 0);
	tm_add2(m, "lm_head.weight", 1003, HID);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_add2(m, b, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "pre_ff_layernorm.weight");
		tm_add2(m, b, HID, 0);
		tm_lin_l(m, i, "self_attn.q_proj.weight", 256, HID, 0);
		tm_lin_l(m, i, "self_attn.k_proj.weight", 64, HID, 0);
		tm_lin_l(m, i, "self_attn.v_proj.weight", 64, HID, 0);
		tm_lin_l(m, i, "self_attn.o_proj.weight", HID, 256, 0);
		tm_lin_l(m, i, "mamba.in_proj.weight", 424, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "mamba.conv1d.weight");
		tm_add(m, b, WT_DTYPE_INVALID, 3, 224, 1, 4);
		tm_fmt(b, sizeof(b), TM_L, i, "mamba.conv1d.bias");
		tm_add2(m, b, 224, 0);
		static const char *const heads[] = {"mamba.A_log", "mamba.D", "mamba.dt_bias"};
		for (int k = 0; k < 3; k++) {
			tm_fmt(b, sizeof(b), TM_L, i, heads[k]);
			tm_add2(m, b, 8, 0);
		}
		if (norm) {
			tm_fmt(b, sizeof(b), TM_L, i, "mamba.norm.weight");
			tm_add2(m, b, 192, 0);
		}
		tm_lin_l(m, i, "mamba.out_proj.weight", HID, 192, 0);
		tm_mlp(m, i, "feed_forward.", 192, HID);
	}
	return m;
}

static tm_model *tm_fh1(void)
{
	return tm_fh1_n(true);
}

/* Rank r's Mamba mixer of layer 1 at TP T (the one group duplicated): in_proj
 * [z_r; x_r; B; C; dt_r], conv1d and its bias [x_r; B; C], A_log / D / dt_bias and the norm
 * by heads, out_proj by columns. */
static void mamba_is(const fx *f, uint32_t r, int64_t T)
{
	int64_t im = 192 / T, hl = 8 / T;
	shp(f, r, INP, 2, 2 * im + 32 + hl, HID, 0);
	rows_at(f, r, INP, 0, INP, r * im, im);
	rows_at(f, r, INP, im, INP, 192 + r * im, im);
	rows_at(f, r, INP, 2 * im, INP, 384, 32); /* B and C whole */
	rows_at(f, r, INP, 2 * im + 32, INP, 416 + r * hl, hl);
	shp(f, r, CONV, 3, im + 32, 1, 4);
	shp(f, r, CONVB, 1, im + 32, 0, 0);
	const char *conv[] = {CONV, CONVB};
	for (int k = 0; k < 2; k++) {
		rows_at(f, r, conv[k], 0, conv[k], r * im, im);
		rows_at(f, r, conv[k], im, conv[k], 192, 32);
	}
	static const char *const heads[] = {M1 "A_log", M1 "D", M1 "dt_bias"};
	for (int k = 0; k < 3; k++) {
		shp(f, r, heads[k], 1, hl, 0, 0);
		rows_at(f, r, heads[k], 0, heads[k], r * hl, hl);
	}
	shp(f, r, M1 "norm.weight", 1, im, 0, 0);
	rows_at(f, r, M1 "norm.weight", 0, M1 "norm.weight", r * im, im);
	shp(f, r, OUTP, 2, HID, im, 0);
	cols_at(f, r, OUTP, 0, OUTP, HID, 192, r * im, im);
}

/* Rank r's attention (layer 1) at TP T: q heads of 32, its kv head (replicated past KV 2),
 * o_proj columns; its feed_forward: [gate_r; up_r], down_proj columns. */
static void attn_ff_is(const fx *f, uint32_t r, int64_t T)
{
	fx_attn_is(f, r, (uint32_t)T, ATT1, "o_proj.weight", 8, 2, 32, HID);
	fx_mlp_is(f, r, (uint32_t)T, FF1, 192, HID);
}

static void test_fh1_tp(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4, 8};
	for (size_t k = 0; k < 3; k++) {
		fx f;
		fx_open(&f, tm_fh1(), FH_OK, tps[k], 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "falcon_h1");
		assert_false(shardmap_tied_lm_head(f.p));
		for (uint32_t r = 0; r < tps[k]; r++) {
			mamba_is(&f, r, tps[k]);
			attn_ff_is(&f, r, tps[k]);
			repl(&f, r, "model.final_layernorm.weight");
			repl(&f, r, "model.layers.1.pre_ff_layernorm.weight");
			repl(&f, r, "model.layers.1.input_layernorm.weight");
		}
		/* both mixers in every layer */
		assert_true(tm_ix(f.p, 0, "model.layers.0.mamba.in_proj.weight") >= 0);
		assert_true(tm_ix(f.p, 0, "model.layers.0.self_attn.qkv_proj.weight") >= 0);
		fx_close(&f);
	}
}

/* int8-channel at TP 1: in_proj, out_proj, q/k/v, o_proj and the feed_forward quantized;
 * conv1d and its bias, A_log, D, dt_bias and the norms keep their dtype without a scale. */
static void test_fh1_quant(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_fh1(), FH_OK, &l, true);
	static const char *const keep[] = {CONV,
	                                   CONVB,
	                                   M1 "A_log",
	                                   M1 "D",
	                                   M1 "dt_bias",
	                                   M1 "norm.weight",
	                                   "model.layers.1.pre_ff_layernorm.weight",
	                                   "model.final_layernorm.weight"};
	static const char *const q8[] = {INP,
	                                 OUTP,
	                                 QKV1,
	                                 ATT1 "o_proj.weight",
	                                 FF1 "gate_up_proj.weight",
	                                 FF1 "down_proj.weight"};
	fx_quant_split(&f, 0, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	const int8_t *q = (const int8_t *)out_bytes(&f, 0, INP);
	const float *sc = (const float *)out_bytes(&f, 0, INP "_scale");
	size_t rowb;
	const uint16_t *src = (const uint16_t *)src_rows(&f, INP, 0, &rowb);
	for (int64_t row = 0; row < 424; row++)
		int8_row_is(q + row * HID, sc[row], src + row * HID, HID);
	fx_close(&f);
}

static void test_fh1_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_fh1(), FH_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	/* mamba_rms_norm absent (false): no gated norm */
	coverage(tm_fh1_n(false), "{" FH_BASE "}", 2, lays, sizeof(lays) / sizeof(lays[0]));
}

/* FalconH1Config's class defaults fill what config.json leaves out; mamba_d_ssm absent is
 * 1024, null is mamba_expand * hidden_size (-1). */
static void test_fh1_config_defaults(void **state)
{
	(void)state;
	static const char cfg[] =
	    "{\"architectures\": [\"FalconH1ForCausalLM\"], \"model_type\": \"falcon_h1\"}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.num_hidden_layers, 32);
	assert_int_equal(c.num_attention_heads, 32);
	assert_int_equal(c.num_key_value_heads, 8);
	assert_int_equal(c.vocab_size, 128000);
	assert_int_equal(c.intermediate_size, 14336);
	assert_int_equal(c.mamba_d_ssm, 1024);
	assert_int_equal(c.mamba_n_heads, 128);
	assert_int_equal(c.mamba_n_groups, 1);
	assert_int_equal(c.mamba_d_state, 256);
	assert_int_equal(c.mamba_d_conv, 4);
	assert_int_equal(c.mamba_expand, 2);
	assert_int_equal(c.mamba_d_head, -1);
	assert_true(c.mamba_conv_bias);
	assert_false(c.mamba_proj_bias);
	assert_false(c.mamba_rms_norm);
	assert_false(c.projectors_bias);
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
	static const char given[] =
	    "{\"architectures\": [\"FalconH1ForCausalLM\"], \"model_type\": "
	    "\"falcon_h1\", \"mamba_d_ssm\": null, \"mamba_rms_norm\": "
	    "true}";
	assert_int_equal(ckpt_config_parse(given, strlen(given), &c, &err), WT_OK);
	assert_int_equal(c.mamba_d_ssm, -1);
	assert_true(c.mamba_rms_norm);
	ckpt_config_clear(&c);
	/* mamba_d_ssm is Falcon-H1's key only */
	static const char ba[] = "{\"architectures\": [\"BambaForCausalLM\"], "
	                         "\"model_type\": \"bamba\", \"mamba_d_ssm\": 512}";
	assert_int_equal(ckpt_config_parse(ba, strlen(ba), &c, &err), WT_OK);
	assert_int_equal(c.mamba_d_ssm, -1);
	ckpt_config_clear(&c);
}

static void test_fh1_refusals(void **state)
{
	(void)state;
	/* vLLM's MambaMixer2 layouts: heads, and a quantized model at TP 2 with one group */
	fx_refused_tp(tm_fh1(), FH_OK, 3, WT_ELAYOUT, "does not divide", "tp_size");
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_refused_at(tm_fh1(), FH_OK, &l, WT_ELAYOUT, "quant int8-channel at tp_size 2",
	              "use tp_size 1");
	/* the gated norm without mamba_rms_norm */
	fx_refused_tp(tm_fh1(), "{" FH_BASE "}", 2, WT_EUNSUPPORTED,
	              "model.layers.0.mamba.norm.weight", "mamba_rms_norm is false");
	/* mamba_rms_norm without the norm */
	fx_refused_tp(tm_fh1_n(false), FH_OK, 2, WT_ENOTFOUND, "model.layers.0.mamba.norm.weight",
	              "missing");
	/* biases the class fixes off */
	fx_refused_tp(tm_fh1(), FH_CFG(",\"attention_bias\":true"), 2, WT_EUNSUPPORTED,
	              "attention_bias / mlp_bias", "no biases");
	fx_refused_tp(tm_fh1(), FH_CFG(",\"projectors_bias\":true"), 2, WT_EUNSUPPORTED,
	              "projectors_bias true but mamba_proj_bias false", "set both the same");
	tm_model *m = tm_fh1();
	tm_add2(m, FF1 "gate_proj.bias", 192, 0);
	fx_refused_tp(m, FH_OK, 2, WT_EUNSUPPORTED, FF1 "gate_proj.bias", "unknown");
	m = tm_fh1();
	tm_add2(m, M1 "out_proj.bias", HID, 0);
	fx_refused_tp(m, FH_OK, 2, WT_EUNSUPPORTED, M1 "out_proj.bias", "mamba_proj_bias");
	m = tm_fh1();
	tm_add2(m, ATT1 "q_proj.bias", 256, 0);
	fx_refused_tp(m, FH_OK, 2, WT_EUNSUPPORTED, ATT1 "q_proj.bias", "attention_bias");
	/* missing tensors: each layer needs both mixers */
	m = tm_fh1();
	tm_remove(m, CONVB);
	fx_refused_tp(m, FH_OK, 2, WT_ENOTFOUND, CONVB, "missing");
	m = tm_fh1();
	tm_remove(m, ATT1 "k_proj.weight");
	fx_refused_tp(m, FH_OK, 2, WT_ENOTFOUND, ATT1 "k_proj.weight", "missing");
	m = tm_fh1();
	tm_remove(m, "model.final_layernorm.weight");
	fx_refused_tp(m, FH_OK, 2, WT_ENOTFOUND, "model.final_layernorm.weight", "missing");
	m = tm_fh1();
	tm_add2(m, "model.norm.weight", HID, 0);
	fx_refused_tp(m, FH_OK, 2, WT_EUNSUPPORTED, "model.norm.weight", "unknown");
	/* the config rules FalconH1Config enforces, on mamba_d_ssm */
	fx_refused_tp(tm_fh1(), "{" FH_BASE0 ",\"mamba_d_ssm\":196}", 2, WT_ECORRUPT,
	              "mamba_d_ssm = 196", "mamba_n_heads 8");
	fx_refused_tp(tm_fh1(), FH_CFG(",\"mamba_n_groups\":3"), 2, WT_ECORRUPT, "mamba_n_groups 3",
	              "mamba_n_heads 8");
	/* mamba_d_ssm null: mamba_expand * hidden_size = 256, so in_proj [424] disagrees */
	fx_refused_tp(tm_fh1(), "{" FH_BASE0 ",\"mamba_d_ssm\":null,\"mamba_rms_norm\":true}", 2,
	              WT_ESHAPE, "disagrees", "implies [");
	/* an in_proj of two groups under a config of one */
	m = tm_fh1();
	tm_remove(m, INP);
	tm_lin_l(m, 1, "mamba.in_proj.weight", 456, HID, 0);
	fx_refused_tp(m, FH_OK, 2, WT_ESHAPE, "disagrees", "implies [424");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fh1_tp),       cmocka_unit_test(test_fh1_quant),
	    cmocka_unit_test(test_fh1_coverage), cmocka_unit_test(test_fh1_config_defaults),
	    cmocka_unit_test(test_fh1_refusals),
	};
	printf("seed 0x%llx\n", (unsigned long long)SEED);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
