/*
 * test_shardmap_medusa.c — Medusa draft heads (medusa: MedusaModel, FasterDecoding's heads as
 * converted for vLLM, e.g. abhigoyal/vllm-medusa-vicuna-7b-v1.3) cut as vLLM's medusa.py loads
 * them: blocks.{h}.layers.{l} nn.Linear [hid, hid] (and biases with medusa_fc_bias) whole on
 * every rank and never quantized; lm_heads.{h} ParallelLMHeads by padded vocabulary rows; with
 * original_lm_head one lm_head (lm_head.weight, or lm_heads.0.weight, the other heads' skipped);
 * with truncated_vocab_size the heads' rows and token_map whole in I64; medusa_heads. dropped.
 * Hand slices at TP 2 / 4, int8-channel TP 2 / fp8-channel TP 4, coverage TP 1/2/4/8, the
 * refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed00d5ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, V 1000 (padded 1024), 3 heads of 2 layers */
#define HID 128
#define NH  3
#define NL  2
#define MD_RAW(keys, extra)                                                                        \
	"{\"architectures\":[\"MedusaModel\"],\"model_type\":\"medusa\",\"hidden_size\":128,"      \
	"\"vocab_size\":1000," keys extra "}"
#define MD_CFG(extra) MD_RAW("\"num_heads\":3,\"num_hidden_layers\":2", extra)
/* FasterDecoding's key names, which vLLM's MedusaConfig renames */
#define MD_CFG2(extra) MD_RAW("\"medusa_num_heads\":3,\"medusa_num_layers\":2", extra)
#define TRUNC          ",\"truncated_vocab_size\":300"

enum {
	MD_BIAS = 1 << 0,    /* blocks' biases */
	MD_PREFIX = 1 << 1,  /* every name under medusa_heads. */
	MD_NOHEADS = 1 << 2, /* no lm_heads.N */
	MD_LMHEAD = 1 << 3,  /* lm_head.weight */
	MD_TRUNC = 1 << 4,   /* heads of 300 rows, token_map I64 [300] */
};

static void md_add(tm_model *m, int fl, const char *n, int64_t a, int64_t b)
{
	char buf[160];
	snprintf(buf, sizeof(buf), "%s%s", (fl & MD_PREFIX) ? "medusa_heads." : "", n);
	tm_add2(m, buf, a, b);
}

/* A Medusa checkpoint (BF16) with `fl`. */
static tm_model *md_model(int fl)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char n[160];
	int64_t rows = (fl & MD_TRUNC) ? 300 : 1000;
	for (int h = 0; h < NH; h++) {
		for (int l = 0; l < NL; l++) {
			snprintf(n, sizeof(n), "blocks.%d.layers.%d.weight", h, l);
			md_add(m, fl, n, HID, HID);
			snprintf(n, sizeof(n), "blocks.%d.layers.%d.bias", h, l);
			if (fl & MD_BIAS)
				md_add(m, fl, n, HID, 0);
		}
		snprintf(n, sizeof(n), "lm_heads.%d.weight", h);
		if (!(fl & MD_NOHEADS))
			md_add(m, fl, n, rows, HID);
	}
	if (fl & MD_LMHEAD)
		md_add(m, fl, "lm_head.weight", rows, HID);
	if (fl & MD_TRUNC)
		tm_add(m, (fl & MD_PREFIX) ? "medusa_heads.token_map" : "token_map", WT_I64, 1, 300,
		       0, 0);
	return m;
}

/* Rank r: every block's Linears whole (biases too with bias), from checkpoint names under pre */
static void md_blocks_is(const fx *f, uint32_t r, const char *pre, bool bias)
{
	char rt[96], ck[128];
	for (int h = 0; h < NH; h++)
		for (int l = 0; l < NL; l++) {
			snprintf(rt, sizeof(rt), "blocks.%d.layers.%d.weight", h, l);
			snprintf(ck, sizeof(ck), "%s%s", pre, rt);
			repl_from(f, r, rt, ck);
			shp(f, r, rt, 2, HID, HID, 0);
			snprintf(rt, sizeof(rt), "blocks.%d.layers.%d.bias", h, l);
			snprintf(ck, sizeof(ck), "%s%s", pre, rt);
			if (bias)
				repl_from(f, r, rt, ck);
			else
				assert_true(tm_ix(f->p, r, rt) < 0);
		}
}

/* TP 2 and 4 by hand: the blocks whole, each head's rows of the padded vocabulary (1000 ->
 * 1024); FasterDecoding's key names and the medusa_heads. layout give the same ranks. */
static void test_medusa_slices(void **state)
{
	(void)state;
	char rt[64];
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, md_model(0), MD_CFG(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "medusa");
		for (uint32_t r = 0; r < T; r++) {
			md_blocks_is(&f, r, "", false);
			for (int h = 0; h < NH; h++) {
				snprintf(rt, sizeof(rt), "lm_heads.%d.weight", h);
				fx_vocab_is(&f, r, T, rt, 1000, 1024, HID);
			}
			assert_int_equal(shardmap_rank_n_tensors(f.p, r), NH * NL + NH);
		}
		fx_close(&f);
	}
	fx a, b;
	fx_open(&a, md_model(0), MD_CFG(""), 2, 1, 0, true);
	fx_open(&b, md_model(MD_PREFIX), MD_CFG2(""), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	fx_close(&a);
	fx_close(&b);
}

/* medusa_fc_bias: the biases whole; original_lm_head: lm_heads.0 is the shared lm_head (the
 * other heads' skipped), or lm_head.weight itself. */
static void test_medusa_bias_lm_head(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, md_model(MD_BIAS | MD_PREFIX),
	        MD_CFG(",\"medusa_fc_bias\":true,\"original_lm_head\":true"), 4, 1, 0, true);
	assert_true(fx_skipped(&f, "medusa_heads.lm_heads.1.weight"));
	assert_true(fx_skipped(&f, "medusa_heads.lm_heads.2.weight"));
	for (uint32_t r = 0; r < 4; r++) {
		md_blocks_is(&f, r, "medusa_heads.", true);
		fx_vocab_from(&f, r, 4, "lm_head.weight", "medusa_heads.lm_heads.0.weight", 1000,
		              1024, HID);
		assert_true(tm_ix(f.p, r, "lm_heads.0.weight") < 0);
		assert_int_equal(shardmap_rank_n_tensors(f.p, r), 2 * NH * NL + 1);
	}
	fx_close(&f);
	fx_open(&f, md_model(MD_NOHEADS | MD_LMHEAD), MD_CFG(",\"original_lm_head\":true"), 2, 1, 0,
	        true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_vocab_is(&f, r, 2, "lm_head.weight", 1000, 1024, HID);
		assert_int_equal(shardmap_rank_n_tensors(f.p, r), NH * NL + 1);
	}
	fx_close(&f);
}

/* truncated_vocab_size 300: the heads' 300 rows padded to 320, token_map whole in I64; without a
 * truncation a stored token_map is skipped (vLLM ignores it). */
static void test_medusa_token_map(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, md_model(MD_TRUNC), MD_CFG(TRUNC), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		fx_vocab_is(&f, r, 4, "lm_heads.2.weight", 300, 320, HID);
		repl(&f, r, "token_map");
		assert_int_equal(info(&f, r, "token_map")->dtype, WT_I64);
		assert_int_equal(shardmap_rank_n_tensors(f.p, r), NH * NL + NH + 1);
	}
	fx_close(&f);
	tm_model *m = md_model(0);
	tm_add(m, "token_map", WT_I64, 1, 1000, 0, 0);
	fx_open(&f, m, MD_CFG(""), 2, 1, 0, true);
	assert_true(fx_skipped(&f, "token_map"));
	assert_true(tm_ix(f.p, 0, "token_map") < 0);
	fx_close(&f);
}

static const char *const md_keep[] = {"blocks.0.layers.0.weight", "blocks.2.layers.1.weight",
                                      "blocks.1.layers.0.bias", "lm_heads.1.weight"};

/* int8-channel TP 2 / fp8-channel TP 4: nothing quantized (plain nn.Linear and ParallelLMHead
 * built without quant_config), every tensor BF16 without a scale. */
static void test_medusa_quant(void **state)
{
	(void)state;
	const char *cfg = MD_CFG(",\"medusa_fc_bias\":true");
	fx f;
	fx_open_quant(&f, md_model(MD_BIAS), cfg, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(md_keep),
	              NULL, 0);
	repl_from(&f, 1, "blocks.2.layers.1.weight", "blocks.2.layers.1.weight");
	fx_close(&f);
	fx_open_quant(&f, md_model(MD_BIAS), cfg, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(md_keep),
	              NULL, 0);
	fx_close(&f);
}

static void test_medusa_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(md_model(MD_BIAS), MD_CFG(",\"medusa_fc_bias\":true"), 1, lays,
	         sizeof(lays) / sizeof(lays[0]));
	coverage(md_model(MD_TRUNC | MD_PREFIX), MD_CFG2(TRUNC), 1, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* What vLLM's loader fails on (a missing parameter), what it would load wrongly, the tensors
 * its config does not build. */
static void test_medusa_tensor_errors(void **state)
{
	(void)state;
	tm_model *m = md_model(0);
	tm_remove(m, "lm_heads.2.weight");
	fx_refused(m, MD_CFG(""), WT_ENOTFOUND, "lm_heads.2.weight", "missing");
	m = md_model(0);
	tm_remove(m, "blocks.1.layers.1.weight");
	fx_refused(m, MD_CFG(""), WT_ENOTFOUND, "blocks.1.layers.1.weight", "missing");
	m = md_model(0);
	tm_add2(m, "lm_heads.3.weight", 1000, HID);
	fx_refused(m, MD_CFG(""), WT_ESHAPE, "lm_heads.3.weight", "num_heads");
	m = md_model(0);
	tm_add2(m, "blocks.0.layers.2.weight", HID, HID);
	fx_refused(m, MD_CFG(""), WT_ESHAPE, "blocks.0.layers.2.weight", "num_hidden_layers");
	m = md_model(0);
	tm_remove(m, "blocks.0.layers.1.weight");
	tm_add2(m, "blocks.0.layers.1.weight", HID, 2 * HID);
	fx_refused(m, MD_CFG(""), WT_ESHAPE, "blocks.0.layers.1.weight", "[128, 128]");
	m = md_model(0);
	tm_remove(m, "lm_heads.1.weight");
	tm_add2(m, "lm_heads.1.weight", 999, HID);
	fx_refused(m, MD_CFG(""), WT_ESHAPE, "lm_heads.1.weight", "[1000, 128]");
	fx_refused(md_model(MD_BIAS), MD_CFG(""), WT_EUNSUPPORTED, "blocks.0.layers.0.bias",
	           "medusa_fc_bias");
	fx_refused(md_model(0), MD_CFG(",\"medusa_fc_bias\":true"), WT_ENOTFOUND,
	           "blocks.0.layers.0.bias", "medusa_fc_bias");
	fx_refused(md_model(MD_LMHEAD), MD_CFG(",\"original_lm_head\":true"), WT_EUNSUPPORTED,
	           "lm_heads.0.weight", "alone");
	fx_refused(md_model(MD_LMHEAD), MD_CFG(""), WT_EUNSUPPORTED, "lm_head.weight",
	           "original_lm_head");
	fx_refused(md_model(MD_NOHEADS), MD_CFG(",\"original_lm_head\":true"), WT_ENOTFOUND,
	           "lm_heads.0.weight", "original_lm_head");
	m = md_model(0);
	tm_add2(m, "medusa_heads.lm_heads.9.weight", 1000, HID);
	fx_refused(m, MD_CFG(""), WT_EUNSUPPORTED, "medusa_heads.", "mixes");
	m = md_model(0);
	tm_add2(m, "lm_heads.0.bias", 1000, 0);
	fx_refused(m, MD_CFG(""), WT_EUNSUPPORTED, "lm_heads.0.bias", "unknown tensor");
}

/* The truncated vocabulary's refusals and the config keys'. */
static void test_medusa_config_errors(void **state)
{
	(void)state;
	tm_model *m = md_model(MD_TRUNC);
	tm_remove(m, "token_map");
	fx_refused(m, MD_CFG(TRUNC), WT_ENOTFOUND, "token_map", "truncated_vocab_size");
	m = md_model(MD_TRUNC);
	tm_remove(m, "token_map");
	tm_add2(m, "token_map", 300, 0);
	fx_refused(m, MD_CFG(TRUNC), WT_EDTYPE, "token_map", "I64");
	m = md_model(MD_TRUNC);
	tm_remove(m, "token_map");
	tm_add(m, "token_map", WT_I64, 1, 200, 0, 0);
	fx_refused(m, MD_CFG(TRUNC), WT_ESHAPE, "token_map", "[300]");
	m = md_model(0);
	tm_add(m, "token_map", WT_I64, 1, 300, 0, 0);
	fx_refused(m, MD_CFG(TRUNC), WT_EUNSUPPORTED, "lm_heads.0.weight", "token_map rows");
	fx_refused(md_model(0), MD_CFG(",\"truncated_vocab_size\":1001"), WT_ECORRUPT,
	           "truncated_vocab_size", "vocab_size");
	fx_refused(md_model(0), MD_RAW("\"num_heads\":3,\"medusa_num_heads\":4", ""), WT_ECORRUPT,
	           "medusa_num_heads", "num_heads");
	fx_refused(md_model(0), MD_RAW("\"num_heads\":0,\"num_hidden_layers\":2", ""), WT_ECORRUPT,
	           "num_heads", ">= 1");
	fx_refused(md_model(0), MD_CFG(",\"original_lm_head\":1"), WT_ECORRUPT, "original_lm_head",
	           "boolean");
	fx_refused(
	    md_model(0),
	    "{\"architectures\":[\"MedusaModel\"],\"model_type\":\"llama\",\"hidden_size\":128,"
	    "\"num_attention_heads\":1,\"num_hidden_layers\":2,\"vocab_size\":1000}",
	    WT_EUNSUPPORTED, "MedusaModel", "model_type medusa");
	/* the class defaults: 5 heads, so heads 3 and 4 are missing */
	fx_refused(md_model(0), MD_RAW("\"num_hidden_layers\":2", ""), WT_ENOTFOUND,
	           "blocks.3.layers.0.weight", "num_heads");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_medusa_slices),
	    cmocka_unit_test(test_medusa_bias_lm_head),
	    cmocka_unit_test(test_medusa_token_map),
	    cmocka_unit_test(test_medusa_quant),
	    cmocka_unit_test(test_medusa_coverage),
	    cmocka_unit_test(test_medusa_tensor_errors),
	    cmocka_unit_test(test_medusa_config_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
