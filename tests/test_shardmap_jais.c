/*
 * test_shardmap_jais.c — JAIS (JAISLMHeadModel: inceptionai/jais-13b, jais-30b-v3, the
 * jais-family releases; remote code) cut as vLLM's jais.py loads it: GPT-2's names with every
 * Conv1D weight (attn.c_attn, attn.c_proj, mlp.c_fc, mlp.c_fc2, mlp.c_proj; stored [in, out])
 * transposed to [out, in]; c_attn's [q; k; v] rows cut by heads into [q_r; k_r; v_r] with its
 * bias (QKVParallelLinear), attn.c_proj and mlp.c_proj by columns (biases replicated), mlp.c_fc
 * and mlp.c_fc2 by rows with their biases (two ColumnParallelLinear, kept apart); ln_1 / ln_2 /
 * ln_f replicated; wte by vocabulary rows, tied (lm_head dropped); wpe only with
 * position_embedding_type learned; relative_pe.slopes and attn.bias / attn.masked_bias
 * skipped; names without transformer. read under it. Hand-computed slices at TP 2 and TP 4
 * (ALiBi and learned layouts, both name layouts), int8-channel / fp8-channel layouts,
 * coverage over TP 1..8, JAISConfig's defaults and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0a15ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_gpt2_fx.h"

/* hid 128 (HID), H 8, head size 16, I 256 (INN, n_inner), V 1000, 2 layers */
#define J_ALIBI 1 /* relative_pe.slopes, no wpe */
#define J_WPE   2 /* wpe [32, hid] */
#define J_BUFS  4 /* attn.bias / attn.masked_bias */

#define JBASE(extra)                                                                               \
	"{\"architectures\":[\"JAISLMHeadModel\"],\"model_type\":\"jais\","                        \
	"\"n_embd\":128,\"n_head\":8,\"n_inner\":256,\"n_positions\":32,\"vocab_size\":1000,"      \
	"\"n_layer\":2" extra "}"
#define JCFG(extra)       JBASE(",\"activation_function\":\"swiglu\"" extra)
#define JCFG_ALIBI(extra) JCFG(",\"position_embedding_type\":\"alibi\"" extra)

static const tm_leaf jais_leaves[] = {
    {"ln_1.weight", HID, 0, 0},
    {"ln_1.bias", HID, 0, 0},
    {"ln_2.weight", HID, 0, 0},
    {"ln_2.bias", HID, 0, 0},
    {"attn.c_attn.weight", HID, 3 * HID, 0},
    {"attn.c_attn.bias", 3 * HID, 0, 0},
    {"attn.c_proj.weight", HID, HID, 0},
    {"attn.c_proj.bias", HID, 0, 0},
    {"mlp.c_fc.weight", HID, INN, 0},
    {"mlp.c_fc.bias", INN, 0, 0},
    {"mlp.c_fc2.weight", HID, INN, 0},
    {"mlp.c_fc2.bias", INN, 0, 0},
    {"mlp.c_proj.weight", INN, HID, 0},
    {"mlp.c_proj.bias", HID, 0, 0},
    {"attn.bias", 32, 32, J_BUFS},
};

/* The model under prefix pre ("transformer." or ""), opts J_*; lm_head.weight when lm_head. */
static tm_model *tm_jais(const char *pre, int opts, int lm_head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200], fmt[64];
	snprintf(b, sizeof(b), "%swte.weight", pre);
	tm_add2(m, b, 1000, HID);
	snprintf(b, sizeof(b), "%sln_f.weight", pre);
	tm_add2(m, b, HID, 0);
	snprintf(b, sizeof(b), "%sln_f.bias", pre);
	tm_add2(m, b, HID, 0);
	if (opts & J_WPE) {
		snprintf(b, sizeof(b), "%swpe.weight", pre);
		tm_add2(m, b, 32, HID);
	}
	if (opts & J_ALIBI)
		tm_add2(m, "transformer.relative_pe.slopes", 8, 1);
	if (lm_head)
		tm_add2(m, "lm_head.weight", 1000, HID);
	snprintf(fmt, sizeof(fmt), "%sh.%%d.", pre);
	tm_layers(m, fmt, 2, jais_leaves, TM_NLEAVES(jais_leaves), opts);
	if (opts & J_BUFS)
		for (int i = 0; i < 2; i++) {
			snprintf(b, sizeof(b), "%sh.%d.attn.masked_bias", pre, i);
			tm_add(m, b, WT_F32, 0, 0, 0, 0);
		}
	return m;
}

/* Rank r's rt is source src (n rows) whole: a replicated tensor under another name. */
static void repl_as(const fx *f, uint32_t r, const char *rt, const char *src, int64_t n)
{
	rows_are(f, r, rt, 0, src, 0, n);
}

/* Rank r of T: JAIS's layer-1 tensors and ln_f as hand slices of the source under prefix pre
 * ("transformer." or ""). */
static void jais_rank_is(const fx *f, uint32_t r, uint32_t T, const char *pre)
{
	char s[160];
	int64_t q = HID / T, il = INN / T;
	/* [q_r; k_r; v_r]: c_attn's output columns transposed, q rows per rank each */
	shp(f, r, H1 "attn.c_attn.weight", 2, 3 * q, HID, 0);
	snprintf(s, sizeof(s), "%sh.1.attn.c_attn.weight", pre);
	for (int64_t p = 0; p < 3; p++)
		trows_are(f, r, H1 "attn.c_attn.weight", p * q, s, p * HID + q * r, q);
	snprintf(s, sizeof(s), "%sh.1.attn.c_attn.bias", pre);
	for (int64_t p = 0; p < 3; p++)
		rows_are(f, r, H1 "attn.c_attn.bias", p * q, s, p * HID + q * r, q);
	snprintf(s, sizeof(s), "%sh.1.attn.c_proj.weight", pre);
	tcols_of(f, r, T, H1 "attn.c_proj.weight", s);
	snprintf(s, sizeof(s), "%sh.1.attn.c_proj.bias", pre);
	repl_as(f, r, H1 "attn.c_proj.bias", s, HID);
	/* c_fc and c_fc2 apart, each its rows [r*I/T, ...) transposed, biases alike */
	shp(f, r, H1 "mlp.c_fc.weight", 2, il, HID, 0);
	shp(f, r, H1 "mlp.c_fc2.weight", 2, il, HID, 0);
	snprintf(s, sizeof(s), "%sh.1.mlp.c_fc.weight", pre);
	trows_are(f, r, H1 "mlp.c_fc.weight", 0, s, il * r, il);
	snprintf(s, sizeof(s), "%sh.1.mlp.c_fc2.weight", pre);
	trows_are(f, r, H1 "mlp.c_fc2.weight", 0, s, il * r, il);
	snprintf(s, sizeof(s), "%sh.1.mlp.c_fc.bias", pre);
	rows_are(f, r, H1 "mlp.c_fc.bias", 0, s, il * r, il);
	snprintf(s, sizeof(s), "%sh.1.mlp.c_fc2.bias", pre);
	rows_are(f, r, H1 "mlp.c_fc2.bias", 0, s, il * r, il);
	snprintf(s, sizeof(s), "%sh.1.mlp.c_proj.weight", pre);
	tcols_of(f, r, T, H1 "mlp.c_proj.weight", s);
	snprintf(s, sizeof(s), "%sh.1.mlp.c_proj.bias", pre);
	repl_as(f, r, H1 "mlp.c_proj.bias", s, HID);
	snprintf(s, sizeof(s), "%sh.1.ln_1.weight", pre);
	repl_as(f, r, H1 "ln_1.weight", s, HID);
	snprintf(s, sizeof(s), "%sh.1.ln_2.bias", pre);
	repl_as(f, r, H1 "ln_2.bias", s, HID);
	snprintf(s, sizeof(s), "%sln_f.bias", pre);
	repl_as(f, r, "transformer.ln_f.bias", s, HID);
	assert_true(tm_ix(f->p, r, "lm_head.weight") < 0); /* tied: wte is the head */
	assert_true(tm_ix(f->p, r, H1 "mlp.gate_up_proj.weight") < 0);
}

/* TP 2, ALiBi (jais-13b's layout): no wpe, the slopes buffer skipped. */
static void test_jais_tp2_alibi(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_jais("transformer.", J_ALIBI, 0), JCFG_ALIBI(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "jais");
	for (uint32_t r = 0; r < 2; r++) {
		jais_rank_is(&f, r, 2, "transformer.");
		assert_true(tm_ix(f.p, r, "transformer.wpe.weight") < 0);
		assert_true(tm_ix(f.p, r, "transformer.relative_pe.slopes") < 0);
		fx_vocab_is(&f, r, 2, "transformer.wte.weight", 1000, 1024, HID);
	}
	assert_true(fx_skipped(&f, "transformer.relative_pe.slopes"));
	fx_close(&f);
}

/* TP 4, learned positions (wpe replicated), the names without transformer. with GPT-2's
 * buffers, an lm_head.weight in a tied checkpoint dropped. */
static void test_jais_tp4_learned_bare(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_jais("", J_WPE | J_BUFS, 1), JCFG(""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		jais_rank_is(&f, r, 4, "");
		rows_are(&f, r, "transformer.wpe.weight", 0, "wpe.weight", 0, 32);
		assert_true(tm_ix(f.p, r, "h.1.mlp.c_fc2.weight") < 0);
		assert_true(tm_ix(f.p, r, H1 "attn.bias") < 0);
		assert_true(tm_ix(f.p, r, H1 "attn.masked_bias") < 0);
	}
	rows_are(&f, 1, "transformer.wte.weight", 0, "wte.weight", 256, 256);
	assert_true(fx_skipped(&f, "lm_head.weight"));
	assert_true(fx_skipped(&f, "h.0.attn.masked_bias"));
	fx_close(&f);
}

static const char *const j_keep[] = {
    H1 "attn.c_attn.bias", H1 "attn.c_proj.bias",     H1 "mlp.c_fc.bias",
    H1 "mlp.c_fc2.bias",   H1 "mlp.c_proj.bias",      H1 "ln_1.weight",
    H1 "ln_2.bias",        "transformer.ln_f.weight", "transformer.wte.weight"};
static const char *const j_quant[] = {H1 "attn.c_attn.weight", H1 "attn.c_proj.weight",
                                      H1 "mlp.c_fc.weight", H1 "mlp.c_fc2.weight",
                                      H1 "mlp.c_proj.weight"};

/* int8-channel TP 2: every Conv1D (vLLM: every Linear with quant_config) per runtime row,
 * c_fc2's codes checked against its transposed source; fp8-channel TP 4 alike; biases,
 * norms, wte (and wpe) BF16 without a scale. */
static void test_jais_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_jais("transformer.", J_ALIBI, 0), JCFG_ALIBI(""), 2,
	              WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(j_keep), FX_N(j_quant));
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, H1 "mlp.c_fc2.weight");
	const float *sc = (const float *)out_bytes(&f, 1, H1 "mlp.c_fc2.weight_scale");
	int k = tm_find(f.m, H1 "mlp.c_fc2.weight");
	const uint16_t *s = (const uint16_t *)f.m->data[k];
	uint16_t x[HID];
	for (int64_t row = 0; row < INN / 2; row++) { /* runtime row = source column 128 + row */
		for (int64_t c = 0; c < HID; c++)
			x[c] = s[c * INN + INN / 2 + row];
		int8_row_is(q + row * HID, sc[row], x, HID);
	}
	fx_close(&f);
	fx_open_quant(&f, tm_jais("transformer.", J_WPE, 0), JCFG(""), 4, WT_QUANT_FP8_CHANNEL,
	              WT_BF16, FX_N(j_keep), FX_N(j_quant));
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(info(&f, r, "transformer.wpe.weight")->dtype, WT_BF16);
		shp(&f, r, H1 "mlp.c_fc2.weight_scale", 2, INN / 4, 1, 0);
	}
	fx_close(&f);
}

static void test_jais_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_jais("transformer.", J_ALIBI, 0), JCFG_ALIBI(""), 8, lays, TM_NLEAVES(lays));
	coverage(tm_jais("", J_WPE | J_BUFS, 0), JCFG(""), 8, lays, TM_NLEAVES(lays));
}

/* JAISConfig's defaults: learned positions (wpe required), n_inner 4 * n_embd, vocab 50257,
 * tied; GPT2Config's dims. */
static void test_jais_defaults(void **state)
{
	(void)state;
	/* position_embedding_type absent: learned, so wpe is required */
	fx_refused(tm_jais("transformer.", J_ALIBI, 0), JCFG(""), WT_ENOTFOUND,
	           "transformer.wpe.weight", "position_embedding_type learned");
	/* n_inner absent: 4 * 128 = 512 rows of c_fc */
	fx_refused(tm_jais("transformer.", J_WPE, 0),
	           "{\"architectures\":[\"JAISLMHeadModel\"],\"model_type\":\"jais\","
	           "\"n_embd\":128,\"n_head\":8,\"vocab_size\":1000,\"n_layer\":2,"
	           "\"activation_function\":\"swiglu\"}",
	           WT_ESHAPE, "implies [512]", "fix config.json");
	/* vocab_size absent: 50257 */
	fx_refused(tm_jais("transformer.", J_WPE, 0),
	           "{\"architectures\":[\"JAISLMHeadModel\"],\"model_type\":\"jais\","
	           "\"n_embd\":128,\"n_head\":8,\"n_inner\":256,\"n_layer\":2,"
	           "\"activation_function\":\"swiglu\"}",
	           WT_ESHAPE, "50257", "fix config.json");
	/* tied when absent: no lm_head needed, none emitted */
	fx f;
	fx_open(&f, tm_jais("transformer.", J_WPE, 0), JCFG(",\"tie_word_embeddings\":true"), 2, 1,
	        0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0);
	fx_close(&f);
	/* 12 layers when n_layer is absent: layer 2 missing */
	fx_refused(tm_jais("transformer.", J_WPE, 0),
	           "{\"architectures\":[\"JAISLMHeadModel\"],\"model_type\":\"jais\","
	           "\"n_embd\":128,\"n_head\":8,\"n_inner\":256,\"vocab_size\":1000,"
	           "\"activation_function\":\"swiglu\"}",
	           WT_ENOTFOUND, "transformer.h.2.", "missing");
}

static void test_jais_errors(void **state)
{
	(void)state;
	/* activation_function: absent is JAISConfig's gelu_new, refused as any but swiglu */
	fx_refused(tm_jais("transformer.", J_WPE, 0),
	           "{\"architectures\":[\"JAISLMHeadModel\"],\"model_type\":\"jais\","
	           "\"n_embd\":128,\"n_head\":8,\"n_inner\":256,\"vocab_size\":1000,\"n_layer\":2}",
	           WT_EUNSUPPORTED, "activation_function 'gelu_new' (JAISConfig's default)",
	           "set it swiglu");
	fx_refused(tm_jais("transformer.", J_WPE, 0), JBASE(",\"activation_function\":\"gelu\""),
	           WT_EUNSUPPORTED, "activation_function 'gelu';", "set it swiglu");
	fx_refused(tm_jais("transformer.", J_WPE, 0), JCFG(",\"tie_word_embeddings\":false"),
	           WT_EUNSUPPORTED, "tie_word_embeddings false", "skips every lm_head.weight");
	fx_refused(tm_jais("transformer.", J_WPE, 0), JCFG(",\"tie_word_embeddings\":1"),
	           WT_ECORRUPT, "tie_word_embeddings", "boolean");
	fx_refused(tm_jais("transformer.", J_WPE, 0),
	           JCFG(",\"position_embedding_type\":\"rotary\""), WT_EUNSUPPORTED,
	           "position_embedding_type 'rotary'", "set it learned or alibi");
	fx_refused(tm_jais("transformer.", J_WPE, 0), JCFG(",\"position_embedding_type\":1"),
	           WT_ECORRUPT, "position_embedding_type", "not a string");
	/* what vLLM's JAISModel asserts false */
	fx_refused(tm_jais("transformer.", J_WPE, 0), JCFG(",\"add_cross_attention\":true"),
	           WT_EUNSUPPORTED, "add_cross_attention true", "jais.py");
	fx_refused(tm_jais("transformer.", J_WPE, 0),
	           JCFG(",\"scale_attn_by_inverse_layer_idx\":true"), WT_EUNSUPPORTED,
	           "scale_attn_by_inverse_layer_idx true", "jais.py");
	fx_refused(tm_jais("transformer.", J_WPE, 0), JCFG(",\"reorder_and_upcast_attn\":true"),
	           WT_EUNSUPPORTED, "reorder_and_upcast_attn true", "jais.py");
	fx_refused(tm_jais("transformer.", J_WPE, 0), JCFG(",\"scale_attn_weights\":false"),
	           WT_EUNSUPPORTED, "scale_attn_weights false", "jais.py");
	/* wpe with ALiBi is unknown; c_fc2 is required; GPT-2's head checks */
	fx_refused(tm_jais("transformer.", J_WPE, 0), JCFG_ALIBI(""), WT_EUNSUPPORTED,
	           "transformer.wpe.weight", "position_embedding_type is alibi");
	tm_model *m = tm_jais("transformer.", J_ALIBI, 0);
	tm_remove(m, H1 "mlp.c_fc2.bias");
	fx_refused(m, JCFG_ALIBI(""), WT_ENOTFOUND, "mlp.c_fc2.bias", "missing");
	m = tm_jais("transformer.", J_ALIBI, 0);
	tm_remove(m, H1 "mlp.c_fc2.weight");
	tm_add2(m, H1 "mlp.c_fc2.weight", INN, HID); /* nn.Linear's [out, in], not a Conv1D */
	fx_refused(m, JCFG_ALIBI(""), WT_ESHAPE, "[256, 128] (a Conv1D [in, out]",
	           "after the transpose");
	fx_refused_tp(tm_jais("transformer.", J_ALIBI, 0), JCFG_ALIBI(""), 3, WT_ELAYOUT,
	              "tp_size 3", "use tp_size 1, 2, 4 or 8");
	fx_refused_tp(tm_jais("transformer.", J_ALIBI, 0), JCFG_ALIBI(""), 16, WT_ELAYOUT,
	              "tp_size 16", "");
	fx_refused(tm_jais("transformer.", J_ALIBI, 0), JCFG_ALIBI(",\"num_key_value_heads\":2"),
	           WT_EUNSUPPORTED, "num_key_value_heads 2", "JAISLMHeadModel has no grouped kv");
	fx_refused(tm_jais("transformer.", J_ALIBI, 0), JCFG_ALIBI(",\"head_dim\":32"),
	           WT_EUNSUPPORTED, "head_dim 32", "remove it");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_jais_tp2_alibi), cmocka_unit_test(test_jais_tp4_learned_bare),
	    cmocka_unit_test(test_jais_quant),     cmocka_unit_test(test_jais_coverage),
	    cmocka_unit_test(test_jais_defaults),  cmocka_unit_test(test_jais_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
