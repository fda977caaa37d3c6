/*
 * test_shardmap_mamba2.c — Mamba2 (Mamba2ForCausalLM, mamba2): Mamba's backbone (every
 * layer's norm replicated, backbone.embeddings / lm_head vocab-parallel, untied by
 * default) and in every layer Granite 4.0's Mamba2 mixer under mixer., cut as vLLM's
 * mamba2.py / MambaMixer2 loads it (in_proj [z; x; B; C; dt] and conv1d [x; B; C] per
 * segment, a rank's heads and groups, B / C whole when there is one group; A_log / D /
 * dt_bias / the gated norm by heads; out_proj by columns; in_proj / out_proj quantized).
 * Hand-computed slices at TP 2 (two groups) and TP 4 (one group), int8 codes, coverage over
 * TP 1-8, Mamba2Config's defaults and key names, the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0052ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, L 2; 8 heads of 32 (Im 256), state 16, conv 4, G groups: in_proj [2*256 +
 * 2*G*16 + 8, 128] rows z [0, 256), x [256, 512), B, C, dt; conv1d [256 + 2*G*16, 1, 4]; V
 * 1003, an lm_head.weight unless tied */
#define HID 128
#define M2_BASE                                                                                    \
	"\"architectures\":[\"Mamba2ForCausalLM\"],\"model_type\":\"mamba2\",\"hidden_size\":128," \
	"\"vocab_size\":1003,\"num_hidden_layers\":2,\"state_size\":16,\"conv_kernel\":4,"         \
	"\"expand\":2,\"num_heads\":8,\"head_dim\":32"
#define M2_CFG(x) "{" M2_BASE ",\"n_groups\":2" x "}"
#define M2_OK     M2_CFG("")
#define M2_G1     "{" M2_BASE ",\"n_groups\":1}"
#define M2_L      "backbone.layers.%d."
#define M0        "backbone.layers.0.mixer."
#define INP       M0 "in_proj.weight"
#define CONV      M0 "conv1d.weight"
#define CONVB     M0 "conv1d.bias"
#define OUTP      M0 "out_proj.weight"
#define EMB       "backbone.embeddings.weight"
#define LMH       "lm_head.weight"

/* The model's knobs: groups, conv1d bias, in_proj / out_proj biases, an lm_head.weight. */
typedef struct m2_dims {
	int g, conv_bias, proj_bias, lm_head;
} m2_dims;

static const m2_dims M2_STD = {2, 1, 0, 1};

static void add_l(tm_model *m, int i, const char *leaf, int64_t a, int64_t b)
{
	char n[200];
	tm_fmt(n, sizeof(n), M2_L, i, leaf);
	tm_add2(m, n, a, b);
}

static tm_model *tm_m2_d(const m2_dims *o)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	int64_t nc = 256 + 2 * o->g * 16, rows = 256 + nc + 8;
	tm_add2(m, EMB, 1003, HID);
	tm_add2(m, "backbone.norm_f.weight", HID, 0);
	if (o->lm_head)
		tm_add2(m, LMH, 1003, HID);
	for (int i = 0; i < 2; i++) {
		char b[200];
		add_l(m, i, "norm.weight", HID, 0);
		add_l(m, i, "mixer.in_proj.weight", rows, HID);
		tm_fmt(b, sizeof(b), M2_L, i, "mixer.conv1d.weight");
		tm_add(m, b, WT_DTYPE_INVALID, 3, nc, 1, 4);
		if (o->conv_bias)
			add_l(m, i, "mixer.conv1d.bias", nc, 0);
		add_l(m, i, "mixer.A_log", 8, 0);
		add_l(m, i, "mixer.D", 8, 0);
		add_l(m, i, "mixer.dt_bias", 8, 0);
		add_l(m, i, "mixer.norm.weight", 256, 0);
		add_l(m, i, "mixer.out_proj.weight", HID, 256);
		if (o->proj_bias) {
			add_l(m, i, "mixer.in_proj.bias", rows, 0);
			add_l(m, i, "mixer.out_proj.bias", HID, 0);
		}
	}
	return m;
}

static tm_model *tm_m2(void)
{
	return tm_m2_d(&M2_STD);
}

/* Rank r's mixer of layer 0 at TP T with G groups (fx_mamba2_mixer_is: 8 heads, width 256,
 * state 16, conv 4) and the replicated norms. */
static void mixer_is(const fx *f, uint32_t r, int64_t T, int64_t G)
{
	const fx_m2 m = {256, 8, G, 16, 4, HID, true, true};
	fx_mamba2_mixer_is(f, r, T, M0, &m);
	repl(f, r, "backbone.layers.0.norm.weight");
	repl(f, r, "backbone.norm_f.weight");
}

/* The padded vocabulary (1003 -> 1024 at TP 2 and 4): rank r's rows of t. */
static void vocab_is(const fx *f, uint32_t r, int64_t T, const char *t)
{
	fx_vocab_is(f, r, T, t, 1003, 1024, HID);
}

static void test_m2_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_m2(), M2_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "mamba2");
	assert_false(shardmap_tied_lm_head(f.p));
	for (uint32_t r = 0; r < 2; r++) {
		mixer_is(&f, r, 2, 2);
		vocab_is(&f, r, 2, EMB);
		vocab_is(&f, r, 2, LMH);
	}
	shp(&f, 1, "backbone.layers.1.mixer.in_proj.weight", 2, 292, HID, 0);
	assert_true(tm_ix(f.p, 0, M0 "in_proj.bias") < 0);
	fx_close(&f);
}

/* One group at TP 4: B and C whole on every rank. */
static void test_m2_tp4(void **state)
{
	(void)state;
	m2_dims o = M2_STD;
	o.g = 1;
	fx f;
	fx_open(&f, tm_m2_d(&o), M2_G1, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		mixer_is(&f, r, 4, 1);
		vocab_is(&f, r, 4, EMB);
	}
	fx_close(&f);
}

/* int8-channel at TP 2: in_proj and out_proj quantized (vLLM hands MambaMixer2 the
 * quant_config), per output row; the rest kept. */
static void test_m2_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, tm_m2(), M2_OK, &l, true);
	static const char *const keep[] = {CONV,   CONVB,        M0 "A_log",
	                                   M0 "D", M0 "dt_bias", M0 "norm.weight",
	                                   EMB,    LMH,          "backbone.norm_f.weight"};
	static const char *const q8[] = {INP, OUTP};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8, 2);
	shp(&f, 1, INP "_scale", 2, 292, 1, 0);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, INP);
	const float *sc = (const float *)out_bytes(&f, 1, INP "_scale");
	size_t rowb;
	/* rank 1's first row is z row 128, its B rows 528.. (group 1) */
	const uint16_t *src = (const uint16_t *)src_rows(&f, INP, 128, &rowb);
	for (int64_t row = 0; row < 128; row++)
		int8_row_is(q + row * HID, sc[row], src + row * HID, HID);
	src = (const uint16_t *)src_rows(&f, INP, 528, &rowb);
	for (int64_t row = 0; row < 16; row++)
		int8_row_is(q + (256 + row) * HID, sc[256 + row], src + row * HID, HID);
	fx_close(&f);
}

/* use_bias: in_proj.bias cut like its weight, out_proj.bias whole; use_conv_bias false: no
 * conv1d.bias; tie_word_embeddings true: no lm_head, an lm_head.weight dropped. */
static void test_m2_switches(void **state)
{
	(void)state;
	m2_dims o = {2, 0, 1, 1};
	fx f;
	fx_open(&f, tm_m2_d(&o), M2_CFG(",\"use_conv_bias\":false,\"use_bias\":true"), 2, 1, 0,
	        true);
	const char *b = M0 "in_proj.bias";
	shp(&f, 1, b, 1, 292, 0, 0);
	rows_at(&f, 1, b, 0, b, 128, 128);
	rows_at(&f, 1, b, 128, b, 384, 128);
	rows_at(&f, 1, b, 256, b, 528, 16);
	rows_at(&f, 1, b, 272, b, 560, 16);
	rows_at(&f, 1, b, 288, b, 580, 4);
	repl(&f, 1, M0 "out_proj.bias");
	assert_true(tm_ix(f.p, 1, CONVB) < 0);
	fx_close(&f);
	fx_open(&f, tm_m2(), M2_CFG(",\"tie_word_embeddings\":true"), 2, 1, 0, true);
	assert_true(shardmap_tied_lm_head(f.p));
	assert_true(tm_ix(f.p, 0, LMH) < 0);
	fx_close(&f);
}

static void test_m2_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}};
	coverage(tm_m2(), M2_OK, 1, lays, sizeof(lays) / sizeof(lays[0]));
	m2_dims o = M2_STD;
	o.g = 1;
	static const uint32_t lays1[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_m2_d(&o), M2_G1, 1, lays1, sizeof(lays1) / sizeof(lays1[0]));
}

/* Mamba2Config's class defaults and key names read as the mixer's. */
static void test_m2_config(void **state)
{
	(void)state;
	static const char cfg[] =
	    "{\"architectures\": [\"Mamba2ForCausalLM\"], \"model_type\": \"mamba2\"}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.num_hidden_layers, 64);
	assert_int_equal(c.vocab_size, 32768);
	assert_int_equal(c.num_attention_heads, 1);
	assert_int_equal(c.mamba_n_heads, 128);
	assert_int_equal(c.mamba_d_head, 64);
	assert_int_equal(c.mamba_n_groups, 8);
	assert_int_equal(c.mamba_d_state, 128);
	assert_int_equal(c.mamba_d_conv, 4);
	assert_int_equal(c.mamba_expand, 2);
	assert_true(c.mamba_conv_bias);
	assert_false(c.mamba_proj_bias);
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
	static const char given[] =
	    "{\"architectures\": [\"Mamba2ForCausalLM\"], \"model_type\": \"mamba2\", "
	    "\"hidden_size\": 64, \"expand\": 2, \"num_heads\": 4, \"head_dim\": 32, "
	    "\"n_groups\": 1, \"state_size\": 8, \"conv_kernel\": 3, \"use_conv_bias\": false, "
	    "\"use_bias\": true, \"layer_norm_epsilon\": 1e-6, \"tie_word_embeddings\": true}";
	assert_int_equal(ckpt_config_parse(given, strlen(given), &c, &err), WT_OK);
	assert_int_equal(c.mamba_n_heads, 4);
	assert_int_equal(c.mamba_d_head, 32);
	assert_int_equal(c.mamba_n_groups, 1);
	assert_int_equal(c.mamba_d_state, 8);
	assert_int_equal(c.mamba_d_conv, 3);
	assert_false(c.mamba_conv_bias);
	assert_true(c.mamba_proj_bias);
	assert_true(c.tie_word_embeddings);
	ckpt_config_clear(&c);
	/* another model type gets none of them */
	static const char llama[] = "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": "
	                            "64, \"num_attention_heads\": 4, \"num_hidden_layers\": 1, "
	                            "\"vocab_size\": 10, \"n_groups\": 7, \"num_heads\": 3}";
	assert_int_equal(ckpt_config_parse(llama, strlen(llama), &c, &err), WT_OK);
	assert_int_equal(c.mamba_n_groups, -1);
	assert_int_equal(c.mamba_n_heads, -1);
	ckpt_config_clear(&c);
}

/* Layouts vLLM refuses: the numbers and a layout that works. */
static void test_m2_layouts(void **state)
{
	(void)state;
	fx_refused_tp(tm_m2(), M2_OK, 4, WT_ELAYOUT, "does not divide mamba_n_groups 2",
	              "use tp_size 1 or 2");
	m2_dims o = M2_STD;
	o.g = 1;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_refused_at(tm_m2_d(&o), M2_G1, &l, WT_ELAYOUT, "mamba_n_groups 1", "use tp_size 1");
}

/* Configs vLLM's mamba2.py cannot build as transformers does, configs that misdescribe the
 * model, and checkpoints that miss or add tensors. */
static void test_m2_errors(void **state)
{
	(void)state;
	fx_refused_tp(tm_m2(), M2_CFG(",\"norm_before_gate\":true"), 2, WT_EUNSUPPORTED,
	              "norm_before_gate", "drop the key");
	fx_refused_tp(tm_m2(), M2_CFG(",\"rms_norm\":false"), 2, WT_EUNSUPPORTED, "rms_norm",
	              "mixer.norm.weight");
	fx_refused_tp(tm_m2(), M2_CFG(",\"time_step_limit\":[0.0, 0.1]"), 2, WT_EUNSUPPORTED,
	              "time_step_limit", "(0, inf)");
	fx_refused_tp(tm_m2(), M2_CFG(",\"intermediate_size\":384"), 2, WT_EUNSUPPORTED,
	              "intermediate_size", "expand 2");
	fx_refused_tp(tm_m2(),
	              "{\"architectures\":[\"Mamba2ForCausalLM\"],\"model_type\":\"mamba2\","
	              "\"hidden_size\":128,\"vocab_size\":1003,\"num_hidden_layers\":2,"
	              "\"expand\":1.5,\"num_heads\":6,\"head_dim\":32,\"n_groups\":2}",
	              2, WT_EUNSUPPORTED, "expand", "integer");
	fx_refused_tp(tm_m2(),
	              "{\"architectures\":[\"Mamba2ForCausalLM\"],\"model_type\":\"mamba2\","
	              "\"hidden_size\":128,\"vocab_size\":1003,\"num_hidden_layers\":2,"
	              "\"expand\":2,\"num_heads\":8,\"head_dim\":16,\"n_groups\":2}",
	              2, WT_ECORRUPT, "num_heads 8 x head_dim 16", "hidden_size 128 x expand 2");
	fx_refused_tp(tm_m2(), "{" M2_BASE ",\"n_groups\":3}", 2, WT_ECORRUPT, "n_groups 3",
	              "num_heads 8");
	/* a conv1d.bias the config says is absent, one missing */
	fx_refused_tp(tm_m2(), M2_CFG(",\"use_conv_bias\":false"), 2, WT_EUNSUPPORTED, CONVB,
	              "use_conv_bias is false");
	tm_model *m = tm_m2();
	tm_remove(m, CONVB);
	fx_refused_tp(m, M2_OK, 2, WT_ENOTFOUND, CONVB, "missing");
	/* the groups the checkpoint does not have: in_proj's rows disagree */
	fx_refused_tp(tm_m2(), "{" M2_BASE ",\"n_groups\":4}", 2, WT_ESHAPE, M0, "implies [");
	/* Mamba (v1)'s tensors are no Mamba2 tensors; a third layer is none either */
	m = tm_m2();
	tm_add2(m, M0 "x_proj.weight", 40, 256);
	fx_refused_tp(m, M2_OK, 2, WT_EUNSUPPORTED, M0 "x_proj.weight", "unknown");
	m = tm_m2();
	tm_add2(m, "backbone.layers.2.norm.weight", HID, 0);
	fx_refused_tp(m, M2_OK, 2, WT_ESHAPE, "backbone.layers.2.norm.weight",
	              "num_hidden_layers is 2");
	m = tm_m2();
	tm_remove(m, M0 "dt_bias");
	fx_refused_tp(m, M2_OK, 2, WT_ENOTFOUND, M0 "dt_bias", "missing");
	m = tm_m2();
	tm_remove(m, LMH);
	fx_refused_tp(m, M2_OK, 2, WT_ENOTFOUND, LMH, "missing");
}

int main(void)
{
	printf("seed 0x%llx\n", (unsigned long long)SEED);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_m2_tp2),      cmocka_unit_test(test_m2_tp4),
	    cmocka_unit_test(test_m2_quant),    cmocka_unit_test(test_m2_switches),
	    cmocka_unit_test(test_m2_coverage), cmocka_unit_test(test_m2_config),
	    cmocka_unit_test(test_m2_layouts),  cmocka_unit_test(test_m2_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
