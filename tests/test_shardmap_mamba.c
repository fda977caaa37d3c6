/*
 * test_shardmap_mamba.c — Mamba (MambaForCausalLM, mamba): every layer's norm replicated and
 * its Mamba (v1) mixer cut as vLLM's mamba.py / MambaMixer loads it (in_proj's x / z halves
 * each split, conv1d and its bias by channels, x_proj by its input columns, dt_proj and its
 * bias, A_log and D by channels, out_proj by columns, none of them quantized),
 * backbone.embeddings vocab-parallel, lm_head tied by default. Hand-computed slices at TP 2
 * and TP 4, the quantized layouts (nothing quantized), coverage over TP 1-8, the bias
 * switches (use_conv_bias, use_bias), MambaConfig's defaults and the refusals. Seeds fixed
 * and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0051ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, L 2; Im 256 (intermediate_size), state 16, dt rank 8 ("auto": ceil(128 / 16)),
 * conv 4: in_proj [512, 128] rows x [0, 256), z [256, 512); x_proj [40, 256]; V 1003,
 * tied (no lm_head.weight) unless the config says otherwise */
#define HID 128
#define MB_BASE                                                                                    \
	"\"architectures\":[\"MambaForCausalLM\"],\"model_type\":\"mamba\",\"hidden_size\":128,"   \
	"\"vocab_size\":1003,\"num_hidden_layers\":2,\"state_size\":16,\"conv_kernel\":4,"         \
	"\"expand\":2"
#define MB_CFG(x) "{" MB_BASE x "}"
#define MB_OK     MB_CFG("")
#define MB_L      "backbone.layers.%d."
#define M0        "backbone.layers.0.mixer."
#define INP       M0 "in_proj.weight"
#define CONV      M0 "conv1d.weight"
#define CONVB     M0 "conv1d.bias"
#define XP        M0 "x_proj.weight"
#define OUTP      M0 "out_proj.weight"
#define EMB       "backbone.embeddings.weight"

/* The model's knobs: conv1d bias, in_proj / out_proj biases, an lm_head.weight. */
typedef struct mb_dims {
	int conv_bias, proj_bias, lm_head;
} mb_dims;

static const mb_dims MB_STD = {1, 0, 0};

static void add_l(tm_model *m, int i, const char *leaf, int64_t a, int64_t b)
{
	char n[200];
	tm_fmt(n, sizeof(n), MB_L, i, leaf);
	tm_add2(m, n, a, b);
}

static tm_model *tm_mb_d(const mb_dims *o)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1003, HID);
	tm_add2(m, "backbone.norm_f.weight", HID, 0);
	if (o->lm_head)
		tm_add2(m, "lm_head.weight", 1003, HID);
	for (int i = 0; i < 2; i++) {
		char b[200];
		add_l(m, i, "norm.weight", HID, 0);
		add_l(m, i, "mixer.in_proj.weight", 512, HID);
		tm_fmt(b, sizeof(b), MB_L, i, "mixer.conv1d.weight");
		tm_add(m, b, WT_DTYPE_INVALID, 3, 256, 1, 4);
		if (o->conv_bias)
			add_l(m, i, "mixer.conv1d.bias", 256, 0);
		add_l(m, i, "mixer.x_proj.weight", 40, 256);
		add_l(m, i, "mixer.dt_proj.weight", 256, 8);
		add_l(m, i, "mixer.dt_proj.bias", 256, 0);
		add_l(m, i, "mixer.A_log", 256, 16);
		add_l(m, i, "mixer.D", 256, 0);
		add_l(m, i, "mixer.out_proj.weight", HID, 256);
		if (o->proj_bias) {
			add_l(m, i, "mixer.in_proj.bias", 512, 0);
			add_l(m, i, "mixer.out_proj.bias", HID, 0);
		}
	}
	return m;
}

static tm_model *tm_mb(void)
{
	return tm_mb_d(&MB_STD);
}

/* Rank r's mixer of layer 0 at TP T: in_proj [x_r; z_r], conv1d and its bias, dt_proj and
 * its bias, A_log and D by channels; x_proj and out_proj by columns. */
static void mixer_is(const fx *f, uint32_t r, int64_t T)
{
	int64_t im = 256 / T, t = r;
	shp(f, r, INP, 2, 2 * im, HID, 0);
	rows_at(f, r, INP, 0, INP, t * im, im);        /* x */
	rows_at(f, r, INP, im, INP, 256 + t * im, im); /* z */
	shp(f, r, CONV, 3, im, 1, 4);
	rows_at(f, r, CONV, 0, CONV, t * im, im);
	shp(f, r, CONVB, 1, im, 0, 0);
	rows_at(f, r, CONVB, 0, CONVB, t * im, im);
	shp(f, r, XP, 2, 40, im, 0);
	cols_at(f, r, XP, 0, XP, 40, 256, t * im, im);
	shp(f, r, M0 "dt_proj.weight", 2, im, 8, 0);
	static const char *const rows[] = {M0 "dt_proj.weight", M0 "dt_proj.bias", M0 "A_log",
	                                   M0 "D"};
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++)
		rows_at(f, r, rows[k], 0, rows[k], t * im, im);
	shp(f, r, M0 "A_log", 2, im, 16, 0);
	shp(f, r, OUTP, 2, HID, im, 0);
	cols_at(f, r, OUTP, 0, OUTP, HID, 256, t * im, im);
	repl(f, r, "backbone.layers.0.norm.weight");
	repl(f, r, "backbone.norm_f.weight");
}

/* The padded vocabulary (1003 -> 1024 at TP 2 and 4): rank r's rows of the embedding. */
static void embed_is(const fx *f, uint32_t r, int64_t T)
{
	fx_vocab_is(f, r, T, EMB, 1003, 1024, HID);
}

static void test_mb_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_mb(), MB_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "mamba");
	assert_true(shardmap_tied_lm_head(f.p));
	for (uint32_t r = 0; r < 2; r++) {
		mixer_is(&f, r, 2);
		embed_is(&f, r, 2);
	}
	shp(&f, 1, "backbone.layers.1.mixer.x_proj.weight", 2, 40, 128, 0);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0);
	assert_true(tm_ix(f.p, 0, M0 "in_proj.bias") < 0);
	fx_close(&f);
}

static void test_mb_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_mb(), MB_OK, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		mixer_is(&f, r, 4);
		embed_is(&f, r, 4);
	}
	fx_close(&f);
}

/* int8-channel and fp8-block at TP 2: vLLM's MambaMixer takes no quant_config and the
 * embeddings / LM head are never quantized, so every tensor keeps its dtype without a
 * scale and its bytes. */
static void test_mb_quant(void **state)
{
	(void)state;
	static const wt_quant qs[] = {WT_QUANT_INT8_CHANNEL, WT_QUANT_FP8_BLOCK};
	for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
		fx f;
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = 2;
		l.quant = qs[k];
		fx_open_l(&f, tm_mb(), MB_OK, &l, true);
		for (uint32_t r = 0; r < 2; r++) {
			const sm_out_info *t;
			for (size_t i = 0; i < shardmap_rank_n_tensors(f.p, r); i++) {
				t = shardmap_rank_tensor(f.p, r, i);
				assert_int_equal(t->dtype, WT_BF16);
				assert_null(strstr(t->name, "_scale"));
			}
			mixer_is(&f, r, 2);
		}
		fx_close(&f);
	}
}

/* use_bias: in_proj.bias cut like its weight, out_proj.bias whole; use_conv_bias false: no
 * conv1d.bias; tie_word_embeddings false: lm_head vocab-parallel. */
static void test_mb_biases(void **state)
{
	(void)state;
	mb_dims o = {0, 1, 1};
	fx f;
	fx_open(&f, tm_mb_d(&o),
	        MB_CFG(",\"use_conv_bias\":false,\"use_bias\":true,\"tie_word_embeddings\":false"),
	        2, 1, 0, true);
	const char *b = M0 "in_proj.bias";
	shp(&f, 1, b, 1, 256, 0, 0);
	rows_at(&f, 1, b, 0, b, 128, 128);
	rows_at(&f, 1, b, 128, b, 384, 128);
	repl(&f, 1, M0 "out_proj.bias");
	assert_true(tm_ix(f.p, 1, CONVB) < 0);
	assert_false(shardmap_tied_lm_head(f.p));
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_at(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 491);
	fx_close(&f);
	/* tied with an lm_head.weight in the checkpoint: dropped */
	o = MB_STD;
	o.lm_head = 1;
	fx_open(&f, tm_mb_d(&o), MB_OK, 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0);
	fx_close(&f);
}

static void test_mb_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_mb(), MB_OK, 1, lays, sizeof(lays) / sizeof(lays[0]));
}

/* MambaConfig's class defaults and key names: state_size, conv_kernel, time_step_rank,
 * use_conv_bias, use_bias read as the mixer's; intermediate_size int(expand * hidden_size)
 * when absent, config.json's when given. */
static void test_mb_config_defaults(void **state)
{
	(void)state;
	static const char cfg[] =
	    "{\"architectures\": [\"MambaForCausalLM\"], \"model_type\": \"mamba\"}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 768);
	assert_int_equal(c.num_hidden_layers, 32);
	assert_int_equal(c.vocab_size, 50280);
	assert_int_equal(c.intermediate_size, 1536);
	assert_int_equal(c.num_attention_heads, 1); /* MambaConfig has none */
	assert_int_equal(c.mamba_d_state, 16);
	assert_int_equal(c.mamba_d_conv, 4);
	assert_int_equal(c.mamba_dt_rank, -1); /* auto */
	assert_true(c.mamba_conv_bias);
	assert_false(c.mamba_proj_bias);
	assert_true(c.tie_word_embeddings);
	ckpt_config_clear(&c);
	static const char given[] =
	    "{\"architectures\": [\"MambaForCausalLM\"], \"model_type\": \"mamba\", "
	    "\"hidden_size\": 64, \"expand\": 1.5, \"time_step_rank\": 12, \"state_size\": 8, "
	    "\"conv_kernel\": 3, \"use_conv_bias\": false, \"use_bias\": true, "
	    "\"tie_word_embeddings\": false}";
	assert_int_equal(ckpt_config_parse(given, strlen(given), &c, &err), WT_OK);
	assert_int_equal(c.intermediate_size, 96);
	assert_int_equal(c.mamba_dt_rank, 12);
	assert_int_equal(c.mamba_d_state, 8);
	assert_int_equal(c.mamba_d_conv, 3);
	assert_false(c.mamba_conv_bias);
	assert_true(c.mamba_proj_bias);
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
	static const char im[] = "{\"architectures\": [\"MambaForCausalLM\"], \"model_type\": "
	                         "\"mamba\", \"hidden_size\": 64, \"intermediate_size\": 192}";
	assert_int_equal(ckpt_config_parse(im, strlen(im), &c, &err), WT_OK);
	assert_int_equal(c.intermediate_size, 192);
	ckpt_config_clear(&c);
	/* another model type gets none of them */
	static const char llama[] = "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": "
	                            "64, \"num_attention_heads\": 4, \"num_hidden_layers\": 1, "
	                            "\"vocab_size\": 10, \"state_size\": 7, \"time_step_rank\": 3}";
	assert_int_equal(ckpt_config_parse(llama, strlen(llama), &c, &err), WT_OK);
	assert_int_equal(c.mamba_d_state, -1);
	assert_int_equal(c.mamba_dt_rank, -1);
	ckpt_config_clear(&c);
}

/* Layouts vLLM refuses: the numbers and a layout that works. */
static void test_mb_layouts(void **state)
{
	(void)state;
	fx_refused_tp(tm_mb(), MB_OK, 3, WT_ELAYOUT, "intermediate_size 256", "use tp_size 1, 2");
	fx_refused_tp(tm_mb(), MB_OK, 512, WT_ELAYOUT, "intermediate_size 256", "use tp_size");
}

/* Configs that misdescribe the model, and checkpoints that miss or add tensors. */
static void test_mb_errors(void **state)
{
	(void)state;
	/* use_conv_bias (true by default) needs conv1d.bias; false refuses one */
	tm_model *m = tm_mb();
	tm_remove(m, CONVB);
	fx_refused_tp(m, MB_OK, 2, WT_ENOTFOUND, CONVB, "missing");
	fx_refused_tp(tm_mb(), MB_CFG(",\"use_conv_bias\":false"), 2, WT_EUNSUPPORTED, CONVB,
	              "use_conv_bias is false");
	m = tm_mb();
	tm_add2(m, M0 "out_proj.bias", HID, 0);
	fx_refused_tp(m, MB_OK, 2, WT_EUNSUPPORTED, M0 "out_proj.bias", "use_bias");
	/* a dt rank the checkpoint does not have: x_proj's rows disagree */
	fx_refused_tp(tm_mb(), MB_CFG(",\"time_step_rank\":16"), 2, WT_ESHAPE, M0 "dt_proj.weight",
	              "implies [");
	/* a width the checkpoint does not have */
	fx_refused_tp(tm_mb(), MB_CFG(",\"intermediate_size\":384"), 2, WT_ESHAPE, M0, "implies [");
	fx_refused_tp(tm_mb(),
	              "{\"architectures\":[\"MambaForCausalLM\"],\"model_type\":\"mamba\","
	              "\"hidden_size\":128,\"vocab_size\":1003,\"num_hidden_layers\":2,"
	              "\"state_size\":0,\"conv_kernel\":4,\"expand\":2}",
	              2, WT_ECORRUPT, "state_size", "integer >= 1");
	/* Jamba's mixer norms are no Mamba tensors; a third layer is none either */
	m = tm_mb();
	tm_add2(m, M0 "dt_layernorm.weight", 8, 0);
	fx_refused_tp(m, MB_OK, 2, WT_EUNSUPPORTED, M0 "dt_layernorm.weight", "unknown");
	m = tm_mb();
	tm_add2(m, "backbone.layers.2.norm.weight", HID, 0);
	fx_refused_tp(m, MB_OK, 2, WT_ESHAPE, "backbone.layers.2.norm.weight",
	              "num_hidden_layers is 2");
	m = tm_mb();
	tm_remove(m, M0 "D");
	fx_refused_tp(m, MB_OK, 2, WT_ENOTFOUND, M0 "D", "missing");
}

/* Falcon-Mamba (FalconMambaForCausalLM, falcon_mamba): Mamba's tensors and cut exactly (its
 * dt / B / C norms have no weights); tiiuae/falcon-mamba-7b's expand 16 beside
 * intermediate_size, which wins; untied there, tied by FalconMambaConfig's default. */
static void test_fm(void **state)
{
	(void)state;
	mb_dims o = MB_STD;
	o.lm_head = 1;
	fx f;
	fx_open(&f, tm_mb_d(&o),
	        "{\"architectures\":[\"FalconMambaForCausalLM\"],\"model_type\":\"falcon_mamba\","
	        "\"hidden_size\":128,\"vocab_size\":1003,\"num_hidden_layers\":2,\"state_size\":16,"
	        "\"conv_kernel\":4,\"expand\":16,\"intermediate_size\":256,\"mixer_rms_eps\":1e-6,"
	        "\"tie_word_embeddings\":false}",
	        2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "falcon_mamba");
	assert_false(shardmap_tied_lm_head(f.p));
	for (uint32_t r = 0; r < 2; r++) {
		mixer_is(&f, r, 2);
		embed_is(&f, r, 2);
	}
	rows_at(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 491);
	fx_close(&f);
	static const char cfg[] = "{\"architectures\": [\"FalconMambaForCausalLM\"], "
	                          "\"model_type\": \"falcon_mamba\"}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &c, &err), WT_OK);
	assert_true(c.hidden_size == 768 && c.intermediate_size == 1536 && c.mamba_d_state == 16 &&
	            c.mamba_d_conv == 4 && c.mamba_dt_rank == -1 && c.mamba_conv_bias &&
	            !c.mamba_proj_bias && c.tie_word_embeddings && c.vocab_size == 50280);
	ckpt_config_clear(&c);
	/* Jamba's norm weights are no Falcon-Mamba tensors either */
	tm_model *m = tm_mb();
	tm_add2(m, M0 "b_layernorm.weight", 16, 0);
	fx_refused_tp(m,
	              "{\"architectures\":[\"FalconMambaForCausalLM\"],\"model_type\":"
	              "\"falcon_mamba\",\"hidden_size\":128,\"vocab_size\":1003,"
	              "\"num_hidden_layers\":2}",
	              2, WT_EUNSUPPORTED, M0 "b_layernorm.weight", "falcon_mamba");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mb_tp2),      cmocka_unit_test(test_mb_tp4),
	    cmocka_unit_test(test_mb_quant),    cmocka_unit_test(test_mb_biases),
	    cmocka_unit_test(test_mb_coverage), cmocka_unit_test(test_mb_config_defaults),
	    cmocka_unit_test(test_mb_layouts),  cmocka_unit_test(test_mb_errors),
	    cmocka_unit_test(test_fm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
