/*
 * test_shardmap_bamba.c — Bamba (BambaForCausalLM, bamba): Granite 4.0's Mamba2 mixer and
 * attention (family_granite4.c's shared rules) in the layers attn_layer_indices picks, a
 * SwiGLU feed_forward fused into gate_up_proj in every layer, pre_ff_layernorm and
 * model.final_layernorm. Hand-computed slices at TP 2, TP 4 and TP 8 (the one group's B and
 * C whole on every rank), int8 codes at TP 1, coverage over TP 1 / 2 / 4 / 8, BambaConfig's
 * defaults and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed00b0ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, L 3 (mamba, attention, mamba); attention H 8 / KV 2 / d 16; Mamba 8 heads of 32
 * (Im 256), 1 group of state 16, conv 4: in_proj [552, 128] rows z [0, 256), x [256, 512),
 * B [512, 528), C [528, 544), dt [544, 552); conv1d [288, 1, 4]; feed_forward 192; V 1003,
 * untied */
#define HID 128
#define BA_BASE0                                                                                   \
	"\"architectures\":[\"BambaForCausalLM\"],\"model_type\":\"bamba\",\"hidden_size\":128,"   \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":192,"           \
	"\"vocab_size\":1003,\"num_hidden_layers\":3,\"mamba_d_state\":16,\"mamba_d_conv\":4,"     \
	"\"mamba_expand\":2"
#define BA_BASE   BA_BASE0 ",\"mamba_n_heads\":8,\"mamba_d_head\":\"auto\""
#define BA_CFG(x) "{" BA_BASE ",\"attn_layer_indices\":[1]" x "}"
#define BA_OK     BA_CFG("")
#define M0        "model.layers.0.mamba."
#define ATT1      "model.layers.1.self_attn."
#define FF2       "model.layers.2.feed_forward."
#define INP       M0 "in_proj.weight"
#define CONV      M0 "conv1d.weight"
#define CONVB     M0 "conv1d.bias"
#define OUTP      M0 "out_proj.weight"
#define QKV1      ATT1 "qkv_proj.weight"

/* types: 'M' Mamba, 'A' attention, one per layer */
static tm_model *tm_bamba_t(const char *types)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "model.embed_tokens.weight", 1003, HID);
	tm_add2(m, "model.final_layernorm.weight", HID, 0);
	tm_add2(m, "lm_head.weight", 1003, HID);
	char b[200];
	for (int i = 0; types[i]; i++) {
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_add2(m, b, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "pre_ff_layernorm.weight");
		tm_add2(m, b, HID, 0);
		if (types[i] == 'A') {
			tm_lin_l(m, i, "self_attn.q_proj.weight", 128, HID, 0);
			tm_lin_l(m, i, "self_attn.k_proj.weight", 32, HID, 0);
			tm_lin_l(m, i, "self_attn.v_proj.weight", 32, HID, 0);
			tm_lin_l(m, i, "self_attn.o_proj.weight", HID, 128, 0);
		} else {
			tm_lin_l(m, i, "mamba.in_proj.weight", 552, HID, 0);
			tm_fmt(b, sizeof(b), TM_L, i, "mamba.conv1d.weight");
			tm_add(m, b, WT_DTYPE_INVALID, 3, 288, 1, 4);
			tm_fmt(b, sizeof(b), TM_L, i, "mamba.conv1d.bias");
			tm_add2(m, b, 288, 0);
			static const char *const heads[] = {"mamba.A_log", "mamba.D",
			                                    "mamba.dt_bias"};
			for (int k = 0; k < 3; k++) {
				tm_fmt(b, sizeof(b), TM_L, i, heads[k]);
				tm_add2(m, b, 8, 0);
			}
			tm_fmt(b, sizeof(b), TM_L, i, "mamba.norm.weight");
			tm_add2(m, b, 256, 0);
			tm_lin_l(m, i, "mamba.out_proj.weight", HID, 256, 0);
		}
		tm_mlp(m, i, "feed_forward.", 192, HID);
	}
	return m;
}

static tm_model *tm_bamba(void)
{
	return tm_bamba_t("MAM");
}

/* Rank r's Mamba mixer of layer 0 at TP T (the one group duplicated): in_proj
 * [z_r; x_r; B; C; dt_r], conv1d and its bias [x_r; B; C], A_log / D / dt_bias and the norm
 * by heads, out_proj by columns. */
static void mamba_is(const fx *f, uint32_t r, int64_t T)
{
	int64_t im = 256 / T, hl = 8 / T;
	shp(f, r, INP, 2, 2 * im + 32 + hl, HID, 0);
	rows_at(f, r, INP, 0, INP, r * im, im);
	rows_at(f, r, INP, im, INP, 256 + r * im, im);
	rows_at(f, r, INP, 2 * im, INP, 512, 32); /* B and C whole */
	rows_at(f, r, INP, 2 * im + 32, INP, 544 + r * hl, hl);
	shp(f, r, CONV, 3, im + 32, 1, 4);
	shp(f, r, CONVB, 1, im + 32, 0, 0);
	const char *conv[] = {CONV, CONVB};
	for (int k = 0; k < 2; k++) {
		rows_at(f, r, conv[k], 0, conv[k], r * im, im);
		rows_at(f, r, conv[k], im, conv[k], 256, 32);
	}
	static const char *const heads[] = {M0 "A_log", M0 "D", M0 "dt_bias"};
	for (int k = 0; k < 3; k++) {
		shp(f, r, heads[k], 1, hl, 0, 0);
		rows_at(f, r, heads[k], 0, heads[k], r * hl, hl);
	}
	rows_at(f, r, M0 "norm.weight", 0, M0 "norm.weight", r * im, im);
	shp(f, r, OUTP, 2, HID, im, 0);
	cols_at(f, r, OUTP, 0, OUTP, HID, 256, r * im, im);
}

/* Rank r's attention (layer 1) at TP T: q heads, its kv head (replicated past KV 2), o_proj
 * columns; its feed_forward (layer 2): [gate_r; up_r], down_proj columns. */
static void attn_ff_is(const fx *f, uint32_t r, int64_t T)
{
	fx_attn_is(f, r, (uint32_t)T, ATT1, "o_proj.weight", 8, 2, 16, HID);
	fx_mlp_is(f, r, (uint32_t)T, FF2, 192, HID);
}

static void test_bamba_tp(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4, 8};
	for (size_t k = 0; k < 3; k++) {
		fx f;
		fx_open(&f, tm_bamba(), BA_OK, tps[k], 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "bamba");
		assert_false(shardmap_tied_lm_head(f.p));
		for (uint32_t r = 0; r < tps[k]; r++) {
			mamba_is(&f, r, tps[k]);
			attn_ff_is(&f, r, tps[k]);
			repl(&f, r, "model.final_layernorm.weight");
			repl(&f, r, "model.layers.1.pre_ff_layernorm.weight");
		}
		/* attn_layer_indices [1]: layer 1 attention, layers 0 and 2 Mamba */
		assert_true(tm_ix(f.p, 0, "model.layers.1.mamba.in_proj.weight") < 0);
		assert_true(tm_ix(f.p, 0, "model.layers.2.self_attn.qkv_proj.weight") < 0);
		assert_true(tm_ix(f.p, 0, "model.layers.2.mamba.in_proj.weight") >= 0);
		fx_close(&f);
	}
}

/* int8-channel at TP 1: in_proj, out_proj, q/k/v, o_proj and the feed_forward quantized;
 * conv1d and its bias, A_log, D, dt_bias and the norms keep their dtype without a scale. */
static void test_bamba_quant(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_bamba(), BA_OK, &l, true);
	static const char *const keep[] = {CONV,
	                                   CONVB,
	                                   M0 "A_log",
	                                   M0 "D",
	                                   M0 "dt_bias",
	                                   M0 "norm.weight",
	                                   "model.layers.2.pre_ff_layernorm.weight",
	                                   "model.final_layernorm.weight"};
	static const char *const q8[] = {INP,
	                                 OUTP,
	                                 QKV1,
	                                 ATT1 "o_proj.weight",
	                                 FF2 "gate_up_proj.weight",
	                                 FF2 "down_proj.weight"};
	fx_quant_split(&f, 0, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	const int8_t *q = (const int8_t *)out_bytes(&f, 0, INP);
	const float *sc = (const float *)out_bytes(&f, 0, INP "_scale");
	size_t rowb;
	const uint16_t *src = (const uint16_t *)src_rows(&f, INP, 0, &rowb);
	for (int64_t row = 0; row < 552; row++)
		int8_row_is(q + row * HID, sc[row], src + row * HID, HID);
	fx_close(&f);
}

static void test_bamba_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_bamba(), BA_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	/* no attn_layer_indices: every layer Mamba */
	coverage(tm_bamba_t("MMM"), "{" BA_BASE "}", 2, lays, sizeof(lays) / sizeof(lays[0]));
}

/* BambaConfig's class defaults fill what config.json leaves out. */
static void test_bamba_config_defaults(void **state)
{
	(void)state;
	static const char cfg[] =
	    "{\"architectures\": [\"BambaForCausalLM\"], \"model_type\": \"bamba\"}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.num_hidden_layers, 32);
	assert_int_equal(c.num_attention_heads, 32);
	assert_int_equal(c.num_key_value_heads, 8);
	assert_int_equal(c.vocab_size, 128000);
	assert_int_equal(c.intermediate_size, 14336);
	assert_int_equal(c.mamba_n_heads, 128);
	assert_int_equal(c.mamba_n_groups, 1);
	assert_int_equal(c.mamba_d_state, 256);
	assert_int_equal(c.mamba_d_conv, 4);
	assert_int_equal(c.mamba_expand, 2);
	assert_int_equal(c.mamba_d_head, -1);
	assert_true(c.mamba_conv_bias);
	assert_false(c.mamba_proj_bias);
	assert_false(c.tie_word_embeddings);
	assert_false(c.has_full_attn_idxs);
	assert_true(fabs(c.partial_rotary_factor - 0.5) < 1e-12);
	ckpt_config_clear(&c);
	static const char given[] = "{\"architectures\": [\"BambaForCausalLM\"], \"model_type\": "
	                            "\"bamba\", \"attn_layer_indices\": [9, 18], "
	                            "\"partial_rotary_factor\": 1.0}";
	assert_int_equal(ckpt_config_parse(given, strlen(given), &c, &err), WT_OK);
	assert_true(c.has_full_attn_idxs);
	assert_int_equal(c.n_full_attn_idxs, 2);
	assert_int_equal(c.full_attn_idxs[1], 18);
	assert_true(fabs(c.partial_rotary_factor - 1.0) < 1e-12);
	ckpt_config_clear(&c);
	/* attn_layer_indices is Bamba's key only */
	static const char g4[] =
	    "{\"architectures\": [\"GraniteMoeHybridForCausalLM\"], "
	    "\"model_type\": \"granitemoehybrid\", \"attn_layer_indices\": [1]}";
	assert_int_equal(ckpt_config_parse(g4, strlen(g4), &c, &err), WT_OK);
	assert_false(c.has_full_attn_idxs);
	ckpt_config_clear(&c);
}

static void test_bamba_refusals(void **state)
{
	(void)state;
	/* vLLM's MambaMixer2 layouts: heads, and a quantized model at TP 2 with one group */
	fx_refused_tp(tm_bamba(), BA_OK, 3, WT_ELAYOUT, "does not divide", "tp_size");
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_refused_at(tm_bamba(), BA_OK, &l, WT_ELAYOUT, "quant int8-channel at tp_size 2",
	              "use tp_size 1");
	/* attn_layer_indices past the stack */
	fx_refused_tp(tm_bamba(), "{" BA_BASE ",\"attn_layer_indices\":[1, 3]}", 2, WT_ECORRUPT,
	              "attn_layer_indices[1] is 3", "list attention layers 0..2");
	fx_refused_tp(tm_bamba(), "{" BA_BASE ",\"attn_layer_indices\":[-1]}", 2, WT_ECORRUPT,
	              "attn_layer_indices[0] is -1", "num_hidden_layers");
	/* layer 1 called Mamba (no attn_layer_indices): its attention is unknown */
	fx_refused_tp(tm_bamba(), "{" BA_BASE "}", 2, WT_EUNSUPPORTED, ATT1, "attn_layer_indices");
	/* layer 0 called attention: its mixer is unknown */
	fx_refused_tp(tm_bamba(), "{" BA_BASE ",\"attn_layer_indices\":[0, 1]}", 2, WT_EUNSUPPORTED,
	              M0, "attn_layer_indices");
	/* biases the class fixes off */
	fx_refused_tp(tm_bamba(), BA_CFG(",\"attention_bias\":true"), 2, WT_EUNSUPPORTED,
	              "attention_bias / mlp_bias", "no biases");
	tm_model *m = tm_bamba();
	tm_add2(m, FF2 "gate_proj.bias", 192, 0);
	fx_refused_tp(m, BA_OK, 2, WT_EUNSUPPORTED, FF2 "gate_proj.bias", "unknown");
	m = tm_bamba();
	tm_add2(m, M0 "out_proj.bias", HID, 0);
	fx_refused_tp(m, BA_OK, 2, WT_EUNSUPPORTED, M0 "out_proj.bias", "mamba_proj_bias");
	/* a Mamba tensor in the attention layer */
	m = tm_bamba();
	tm_add2(m, "model.layers.1.mamba.D", 8, 0);
	fx_refused_tp(m, BA_OK, 2, WT_EUNSUPPORTED, "model.layers.1.mamba.D",
	              "an attention layer (see attn_layer_indices)");
	/* missing tensors */
	m = tm_bamba();
	tm_remove(m, CONVB);
	fx_refused_tp(m, BA_OK, 2, WT_ENOTFOUND, CONVB, "missing");
	m = tm_bamba();
	tm_remove(m, "model.final_layernorm.weight");
	fx_refused_tp(m, BA_OK, 2, WT_ENOTFOUND, "model.final_layernorm.weight", "missing");
	/* Llama's names for the final norm and the second norm are unknown here */
	m = tm_bamba();
	tm_add2(m, "model.norm.weight", HID, 0);
	fx_refused_tp(m, BA_OK, 2, WT_EUNSUPPORTED, "model.norm.weight", "unknown");
	/* the config rules BambaConfig enforces */
	fx_refused_tp(tm_bamba(), "{" BA_BASE0 ",\"attn_layer_indices\":[1],\"mamba_n_heads\":6}",
	              2, WT_ECORRUPT, "mamba_expand * hidden_size", "mamba_n_heads 6");
	fx_refused_tp(tm_bamba(), BA_CFG(",\"mamba_n_groups\":3"), 2, WT_ECORRUPT,
	              "mamba_n_groups 3", "mamba_n_heads 8");
	fx_refused_tp(tm_bamba(), BA_CFG(",\"head_dim\":32"), 2, WT_ECORRUPT, "Bamba's attention",
	              "head_dim 32");
	/* an in_proj of two groups under a config of one */
	m = tm_bamba();
	tm_remove(m, INP);
	tm_lin_l(m, 0, "mamba.in_proj.weight", 584, HID, 0);
	fx_refused_tp(m, BA_OK, 2, WT_ESHAPE, "disagrees", "implies [552");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bamba_tp),       cmocka_unit_test(test_bamba_quant),
	    cmocka_unit_test(test_bamba_coverage), cmocka_unit_test(test_bamba_config_defaults),
	    cmocka_unit_test(test_bamba_refusals),
	};
	printf("seed 0x%llx\n", (unsigned long long)SEED);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
