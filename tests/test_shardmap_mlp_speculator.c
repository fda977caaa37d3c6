/*
 * test_shardmap_mlp_speculator.c — IBM's MLP speculators (mlp_speculator:
 * MLPSpeculatorPreTrainedModel, e.g. ibm-ai-platform/llama3-8b-accelerator) cut as vLLM's
 * mlp_speculator.py loads them: per stage emb.{i} (VocabParallelEmbedding) and head.{i}
 * (ParallelLMHead) by padded vocabulary rows, proj.{i} (nn.Linear: [inner, emb_dim] at stage 0,
 * [inner, inner] after) whole on every rank and never quantized, ln.{i} weight / bias whole;
 * tie_weights keeps emb.0 / proj.0 / proj.1 / head.0 / ln.0 (the later stages' copies skipped);
 * speculator. dropped. Hand slices at TP 2 / 4, int8-channel TP 2 / fp8-channel TP 4, coverage
 * TP 1/2/4/8, the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0a1bull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* emb_dim 128, inner_dim 96, V 1000 (padded 1024), 3 stages */
#define EMB 128
#define INN 96
#define NP  3
#define MS_RAW(keys, extra)                                                                        \
	"{\"architectures\":[\"MLPSpeculatorPreTrainedModel\"],\"model_type\":"                    \
	"\"mlp_speculator\",\"vocab_size\":1000," keys extra "}"
#define MS_KEYS       "\"emb_dim\":128,\"inner_dim\":96,\"n_predict\":3,\"scale_input\":true"
#define MS_CFG(extra) MS_RAW(MS_KEYS, extra)
#define TIED          ",\"tie_weights\":true"

enum {
	MS_TIED = 1 << 0,   /* stage 0's emb / head / ln and proj.0 / proj.1 only */
	MS_COPIES = 1 << 1, /* with MS_TIED: the later stages' copies too */
	MS_PREFIX = 1 << 2, /* every name under speculator. */
};

static void ms_add(tm_model *m, int fl, const char *leaf, int i, int64_t a, int64_t b)
{
	char n[160];
	snprintf(n, sizeof(n), "%s%s.%d.weight", (fl & MS_PREFIX) ? "speculator." : "", leaf, i);
	tm_add2(m, n, a, b);
}

/* An MLP speculator (BF16) of inner width inn with `fl`. */
static tm_model *ms_model(int fl, int64_t inn)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	for (int i = 0; i < NP; i++) {
		bool own = !(fl & MS_TIED) || i == 0 || (fl & MS_COPIES);
		if (own) {
			ms_add(m, fl, "emb", i, 1000, inn);
			ms_add(m, fl, "head", i, 1000, inn);
			ms_add(m, fl, "ln", i, inn, 0);
			char n[64];
			snprintf(n, sizeof(n), "%sln.%d.bias",
			         (fl & MS_PREFIX) ? "speculator." : "", i);
			tm_add2(m, n, inn, 0);
		}
		if (own || i == 1)
			ms_add(m, fl, "proj", i, inn, i == 0 ? EMB : inn);
	}
	return m;
}

/* Rank r of T: stage i's tables by vocabulary rows, its proj and ln whole. */
static void ms_stage_is(const fx *f, uint32_t r, uint32_t T, int i, bool proj, int64_t inn)
{
	char n[64];
	snprintf(n, sizeof(n), "emb.%d.weight", i);
	fx_vocab_is(f, r, T, n, 1000, 1024, inn);
	snprintf(n, sizeof(n), "head.%d.weight", i);
	fx_vocab_is(f, r, T, n, 1000, 1024, inn);
	snprintf(n, sizeof(n), "ln.%d.weight", i);
	repl(f, r, n);
	snprintf(n, sizeof(n), "ln.%d.bias", i);
	repl(f, r, n);
	snprintf(n, sizeof(n), "proj.%d.weight", i);
	if (proj) {
		repl(f, r, n);
		shp(f, r, n, 2, inn, i == 0 ? EMB : inn, 0);
	}
}

/* TP 2 and 4 by hand, untied: every stage's five tensors. */
static void test_mlps_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, ms_model(0, INN), MS_CFG(",\"top_k_tokens_per_head\":[4,3,2]"), T, 1, 0,
		        true);
		assert_string_equal(shardmap_family(f.p), "mlp_speculator");
		for (uint32_t r = 0; r < T; r++) {
			for (int i = 0; i < NP; i++)
				ms_stage_is(&f, r, T, i, true, INN);
			assert_int_equal(shardmap_rank_n_tensors(f.p, r), 5 * NP);
		}
		fx_close(&f);
	}
	/* inner_dim 0 is emb_dim; hidden_size (MLPSpeculatorConfig's alias) for emb_dim */
	fx f;
	fx_open(&f, ms_model(0, EMB), MS_RAW("\"hidden_size\":128,\"inner_dim\":0", ""), 2, 1, 0,
	        true);
	for (uint32_t r = 0; r < 2; r++)
		ms_stage_is(&f, r, 2, 2, true, EMB);
	fx_close(&f);
}

/* tie_weights: emb.0 / head.0 / ln.0 / proj.0 / proj.1, the copies a checkpoint holds of the
 * later stages skipped; the speculator. layout gives the same ranks. */
static void test_mlps_tied(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, ms_model(MS_TIED | MS_COPIES, INN), MS_CFG(TIED), 4, 1, 0, true);
	static const char *const skipped[] = {"emb.1.weight", "head.2.weight", "ln.1.weight",
	                                      "ln.2.bias", "proj.2.weight"};
	for (size_t k = 0; k < sizeof(skipped) / sizeof(skipped[0]); k++)
		assert_true(fx_skipped(&f, skipped[k]));
	for (uint32_t r = 0; r < 4; r++) {
		ms_stage_is(&f, r, 4, 0, true, INN);
		repl(&f, r, "proj.1.weight");
		assert_true(tm_ix(f.p, r, "emb.1.weight") < 0 &&
		            tm_ix(f.p, r, "proj.2.weight") < 0);
		assert_int_equal(shardmap_rank_n_tensors(f.p, r), 6);
	}
	fx_close(&f);
	fx a, b;
	fx_open(&a, ms_model(MS_TIED, INN), MS_CFG(TIED), 2, 1, 0, true);
	fx_open(&b, ms_model(MS_TIED | MS_PREFIX, INN), MS_CFG(TIED), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	fx_close(&a);
	fx_close(&b);
}

static const char *const ms_keep[] = {"proj.0.weight", "proj.2.weight", "emb.1.weight",
                                      "head.2.weight", "ln.0.weight"};

/* int8-channel TP 2 / fp8-channel TP 4: nothing quantized (nn.Linear, VocabParallelEmbedding and
 * ParallelLMHead built without quant_config). */
static void test_mlps_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, ms_model(0, INN), MS_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(ms_keep), NULL, 0);
	repl(&f, 1, "proj.0.weight");
	fx_close(&f);
	fx_open_quant(&f, ms_model(0, INN), MS_CFG(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(ms_keep), NULL, 0);
	fx_close(&f);
}

static void test_mlps_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(ms_model(0, INN), MS_CFG(""), 1, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(ms_model(MS_TIED | MS_COPIES | MS_PREFIX, INN), MS_CFG(TIED), 1, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

static void test_mlps_errors(void **state)
{
	(void)state;
	tm_model *m = ms_model(0, INN);
	tm_remove(m, "head.2.weight");
	fx_refused(m, MS_CFG(""), WT_ENOTFOUND, "head.2.weight", "n_predict 3");
	m = ms_model(MS_TIED, INN);
	tm_remove(m, "proj.1.weight");
	fx_refused(m, MS_CFG(TIED), WT_ENOTFOUND, "proj.1.weight", "missing");
	fx_refused(ms_model(MS_TIED, INN), MS_CFG(""), WT_ENOTFOUND, "emb.1.weight", "missing");
	m = ms_model(0, INN);
	tm_remove(m, "proj.0.weight");
	tm_add2(m, "proj.0.weight", INN, INN);
	fx_refused(m, MS_CFG(""), WT_ESHAPE, "proj.0.weight", "[96, 128]");
	m = ms_model(0, INN);
	tm_remove(m, "emb.1.weight");
	tm_add2(m, "emb.1.weight", 999, INN);
	fx_refused(m, MS_CFG(""), WT_ESHAPE, "emb.1.weight", "[1000, 96]");
	m = ms_model(0, INN);
	tm_add2(m, "emb.3.weight", 1000, INN);
	fx_refused(m, MS_CFG(""), WT_ESHAPE, "emb.3.weight", "n_predict");
	m = ms_model(0, INN);
	tm_add2(m, "ln0.weight", EMB, 0);
	fx_refused(m, MS_CFG(""), WT_EUNSUPPORTED, "ln0.weight", "unknown tensor");
	m = ms_model(0, INN);
	tm_add2(m, "speculator.emb.9.weight", 1000, INN);
	fx_refused(m, MS_CFG(""), WT_EUNSUPPORTED, "speculator.", "mixes");
	fx_refused(ms_model(0, INN), MS_RAW(MS_KEYS, ",\"hidden_size\":64"), WT_ECORRUPT,
	           "hidden_size", "emb_dim");
	fx_refused(ms_model(0, INN),
	           MS_RAW("\"emb_dim\":128,\"inner_dim\":96,\"n_predict\":1",
	                  TIED ",\"top_k_tokens_per_head\":[1]"),
	           WT_EUNSUPPORTED, "tie_weights", "n_predict 1");
	fx_refused(ms_model(0, INN), MS_CFG(",\"top_k_tokens_per_head\":[4,3]"), WT_ECORRUPT,
	           "top_k_tokens_per_head", "n_predict is 3");
	fx_refused(ms_model(0, INN), MS_RAW("\"emb_dim\":128,\"inner_dim\":96,\"n_predict\":2", ""),
	           WT_ECORRUPT, "top_k_tokens_per_head", "3 when absent");
	fx_refused(ms_model(0, INN), MS_CFG(",\"tie_weights\":\"yes\""), WT_ECORRUPT, "tie_weights",
	           "boolean");
	fx_refused(ms_model(0, INN), MS_RAW("\"emb_dim\":128,\"inner_dim\":-1,\"n_predict\":3", ""),
	           WT_ECORRUPT, "inner_dim", ">= 0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mlps_slices), cmocka_unit_test(test_mlps_tied),
	    cmocka_unit_test(test_mlps_quant),  cmocka_unit_test(test_mlps_coverage),
	    cmocka_unit_test(test_mlps_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
