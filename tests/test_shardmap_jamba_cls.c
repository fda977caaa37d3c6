/*
 * test_shardmap_jamba_cls.c — JambaForSequenceClassification (ai21labs/Jamba-tiny-reward-dev)
 * cut as vLLM's jamba.py JambaForSequenceClassification loads it: Jamba's decoder under model.
 * by Jamba's rules (hand slices of the Mamba mixer, the attention and the MLPs / experts at TP 2
 * and 4, each rank byte for byte JambaForCausalLM's without lm_head), then score.weight
 * [num_labels, hid] whole on every rank and never quantized (vLLM's plain nn.Linear in float32
 * without the quantization config; no bias); an lm_head.weight, which transformers' class has
 * none of, cut as JambaForCausalLM's ParallelLMHead when present. int8 / fp8 layouts, coverage
 * over TP 1..8 and EP, num_labels, the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0042ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_jamba_fx.h"

#define CLS_CFG(x)                                                                                 \
	"{" JB_BASE_A(                                                                             \
	    "JambaForSequenceClassification") "," JB_ATT                                           \
	                                      ",\"num_experts\":4,\"expert_layer_offset\":1" x "}"
#define LABEL3 ",\"id2label\":{\"0\":\"a\",\"1\":\"b\",\"2\":\"c\"}"
#define CLS_OK CLS_CFG(LABEL3)

/* Jamba's test model without lm_head (with it when lm), score [labels, hid] (none when 0). */
static tm_model *cls_model(int64_t labels, int lm)
{
	tm_model *m = tm_jb();
	if (!lm)
		tm_remove(m, "lm_head.weight");
	if (labels > 0)
		tm_add2(m, "score.weight", labels, HID);
	return m;
}

/* Every tensor of JambaForCausalLM's rank r but lm_head is the classifier's, same bytes; the
 * classifier has score.weight besides (and lm_head when given one). */
static void same_as_lm(const fx *cls, uint32_t T, uint32_t r, int lm_head)
{
	fx lm;
	fx_open(&lm, tm_jb(), JB_OK, T, 1, 0, true);
	size_t n = shardmap_rank_n_tensors(lm.p, r);
	for (size_t i = 0; i < n; i++) {
		const sm_out_info *t = shardmap_rank_tensor(lm.p, r, i);
		if (!lm_head && strcmp(t->name, "lm_head.weight") == 0)
			continue;
		const sm_out_info *u = info(cls, r, t->name);
		assert_int_equal(t->nbytes, u->nbytes);
		assert_int_equal(t->dtype, u->dtype);
		if (memcmp(lm.pr->b[r][i], out_bytes(cls, r, t->name), t->nbytes) != 0)
			fail_msg("rank %u '%s' differs from JambaForCausalLM's", r, t->name);
	}
	assert_int_equal(shardmap_rank_n_tensors(cls->p, r), n - (lm_head ? 0 : 1) + 1);
	fx_close(&lm);
}

static void test_jb_cls_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t k = 0; k < 2; k++) {
		uint32_t T = tps[k];
		fx f;
		fx_open(&f, cls_model(3, 0), CLS_OK, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "jamba_cls");
		for (uint32_t r = 0; r < T; r++) {
			mamba_is(&f, r, r, T);
			attn_is(&f, r, r, T);
			mlp_is(&f, r, r, T);
			repl(&f, r, "score.weight");
			shp(&f, r, "score.weight", 2, 3, HID, 0);
			assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
			same_as_lm(&f, T, r, 0);
		}
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
	assert_string_equal(shardmap_family_find("JambaForSequenceClassification", NULL)->name,
	                    "jamba_cls");
}

/* An lm_head.weight (vLLM's JambaForCausalLM builds its ParallelLMHead): vocabulary rows,
 * 1003 padded to 1024, as JambaForCausalLM's. */
static void test_jb_cls_lm_head(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, cls_model(3, 1), CLS_OK, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, "lm_head.weight", 2, 512, HID, 0);
		same_as_lm(&f, 2, r, 1);
	}
	rows_at(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 1003 - 512);
	fx_close(&f);
}

/* int8-channel TP 2: attention, MLPs and experts I8, the Mamba mixer, router, norms and score
 * BF16 without a scale; fp8-channel TP 4 and TP 2 x EP 2: score BF16. */
static void test_jb_cls_quant(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, cls_model(3, 0), CLS_OK, &l, true);
	static const char *const keep[] = {
	    "score.weight", INP, XP, OUTP, FF1 "router.weight", "model.embed_tokens.weight"};
	static const char *const q8[] = {QKV2, ATT2 "o_proj.weight", FF0 "gate_up_proj.weight", W13,
	                                 W2};
	for (uint32_t r = 0; r < 2; r++) {
		fx_quant_split(&f, r, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
		               sizeof(q8) / sizeof(q8[0]));
		repl(&f, r, "score.weight");
	}
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, cls_model(3, 0), CLS_OK, &l, true);
	assert_int_equal(info(&f, 3, QKV2)->dtype, WT_F8_E4M3);
	assert_int_equal(info(&f, 3, "score.weight")->dtype, WT_BF16);
	fx_close(&f);
	l.tp_size = 2;
	l.ep_size = 2;
	fx_open_l(&f, cls_model(3, 0), CLS_OK, &l, true);
	assert_int_equal(info(&f, 3, "score.weight")->dtype, WT_BF16);
	shp(&f, 3, W13, 3, 2, 192, HID);
	fx_close(&f);
}

static void test_jb_cls_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {2, 2}, {1, 4}};
	coverage(cls_model(3, 0), CLS_OK, 2, lays, 5);
}

/* num_labels: id2label's entries, else num_labels, else PretrainedConfig's 2; JambaForCausalLM
 * reads none. */
static void test_jb_cls_labels(void **state)
{
	(void)state;
	static const struct {
		const char *js;
		int64_t labels;
	} cases[] = {
	    {CLS_OK, 3},      {CLS_CFG(",\"num_labels\":1"), 1},
	    {CLS_CFG(""), 2}, {CLS_CFG(",\"score_bias\":false"), 2},
	    {JB_OK, -1},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		ckpt_config c;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(cases[k].js, strlen(cases[k].js), &c, &err),
		                 WT_OK);
		assert_int_equal(c.rob_num_labels, cases[k].labels);
		ckpt_config_clear(&c);
	}
}

static void test_jb_cls_errors(void **state)
{
	(void)state;
	/* score's rows against num_labels; missing; a bias (neither class has one) */
	fx_refused(cls_model(2, 0), CLS_OK, WT_ESHAPE, "score.weight", "implies [3");
	fx_refused(cls_model(0, 0), CLS_OK, WT_ENOTFOUND, "score.weight", "");
	tm_model *m = cls_model(3, 0);
	tm_add2(m, "score.bias", 3, 0);
	fx_refused(m, CLS_OK, WT_EUNSUPPORTED, "score.bias", "unknown tensor");
	/* vLLM's score_bias true: refused by the loader */
	const char *sb = CLS_CFG(",\"score_bias\":true");
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(sb, strlen(sb), &c, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "score_bias true"));
	/* an empty id2label; Jamba's own refusals hold */
	fx_refused(cls_model(3, 0), CLS_CFG(",\"id2label\":{}"), WT_ECORRUPT, "id2label", "");
	fx_refused_tp(cls_model(3, 0), CLS_CFG(LABEL3 ",\"head_dim\":16"), 2, WT_ECORRUPT,
	              "head_dim 16", "hidden_size 128");
	fx_refused_tp(cls_model(3, 0),
	              "{" JB_BASE_A("JambaForSequenceClassification") LABEL3
	              ",\"num_experts\":4,\"attn_layer_period\":4,\"attn_layer_offset\":4}",
	              2, WT_ECORRUPT, "attn_layer_offset 4", "attn_layer_period 4");
	/* heads: 4 do not split 8 ways */
	fx_refused_tp(cls_model(3, 0), CLS_OK, 8, WT_ELAYOUT, "tp_size 8", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_jb_cls_slices), cmocka_unit_test(test_jb_cls_lm_head),
	    cmocka_unit_test(test_jb_cls_quant),  cmocka_unit_test(test_jb_cls_coverage),
	    cmocka_unit_test(test_jb_cls_labels), cmocka_unit_test(test_jb_cls_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
