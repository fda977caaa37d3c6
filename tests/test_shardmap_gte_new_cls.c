/*
 * test_shardmap_gte_new_cls.c — GteNewForSequenceClassification (the remote
 * NewForSequenceClassification: GTE rerankers / classifiers) cut as vLLM's bert_with_rope.py
 * loads it: GteNewModel's encoder under new. (required, kept in the runtime names), cut byte for
 * byte as GteNewModel's; new.pooler.dense (BertPooler's plain nn.Linear) whole on every rank and
 * never quantized; classifier [num_labels, hid] (a ReplicatedLinear with the quant config) whole
 * on every rank, its weight quantized, its bias not. Hand slices at TP 2 and 4, int8-channel TP 2,
 * fp8-channel TP 4, coverage at TP 1, 2, 4, 8, num_labels, and every refusal. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x67e1ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_quant.h"
#include "test_shardmap_gte_fx.h"

#define GC_ARCH(extra) GT_ARCH("GteNewForSequenceClassification", ",\"intermediate_size\":96" extra)
#define GC_CFG         GC_ARCH(TV0)
#define NP             "new."

/* The classifier's checkpoint with `labels` classifier rows (0: none) and, when bias, its bias. */
static tm_model *tm_gc(int64_t types, int64_t labels, bool bias)
{
	tm_model *m = tm_gt(NP, 2, types, GT_POOLER);
	if (labels > 0)
		tm_add2(m, "classifier.weight", labels, HID);
	if (labels > 0 && bias)
		tm_add2(m, "classifier.bias", labels, 0);
	return m;
}

/* Every output of GteNewModel's rank r (g) is the classifier's (c) under new., byte for byte;
 * c has the pooler and classifier besides. */
static void same_encoder(const fx *c, const fx *g, uint32_t r)
{
	size_t n = shardmap_rank_n_tensors(g->p, r);
	char nm[200];
	for (size_t i = 0; i < n; i++) {
		const sm_out_info *t = shardmap_rank_tensor(g->p, r, i);
		snprintf(nm, sizeof(nm), NP "%s", t->name);
		const sm_out_info *u = info(c, r, nm);
		assert_int_equal(t->nbytes, u->nbytes);
		assert_int_equal(t->dtype, u->dtype);
		if (memcmp(g->pr->b[r][i], out_bytes(c, r, nm), t->nbytes) != 0)
			fail_msg("rank %u '%s' differs", r, nm);
	}
	assert_int_equal(shardmap_rank_n_tensors(c->p, r), n + 4);
}

/* TP 2 / 4 (with and without a token type table): layer 1's q/k/v rows and gate_up_proj
 * [gate_r; up_r] by hand under new., out_proj / down_proj columns, every encoder tensor
 * GteNewModel's, the pooler and the classifier whole; nothing skipped. */
static void test_gte_cls_slices(void **state)
{
	(void)state;
	for (int64_t types = 0; types <= 1; types++)
		for (uint32_t T = 2; T <= 4; T *= 2) {
			fx c, g;
			fx_open(&c, tm_gc(types, 2, true),
			        types ? GC_ARCH(",\"type_vocab_size\":1") : GC_CFG, T, 1, 0, true);
			fx_open(&g, tm_gt("", 2, types, 0),
			        types ? GT_CFG(",\"type_vocab_size\":1") : GT_CFG(TV0), T, 1, 0,
			        true);
			assert_string_equal(shardmap_family(c.p), "gte_new_cls");
			int64_t ql = HID / T, il = I / T;
			for (uint32_t r = 0; r < T; r++) {
				same_encoder(&c, &g, r);
				for (int p = 0; p < 3; p++)
					rows_at(&c, r, NP QKV, p * ql,
					        NP L1C "attention.qkv_proj.weight",
					        p * HID + r * ql, ql);
				rows_at(&c, r, NP GU, 0, NP UG, I + r * il, il);
				rows_at(&c, r, NP GU, il, NP UG, r * il, il);
				cols_of(&c, r, T, NP OP, NP L1C "attention.o_proj.weight", HID,
				        HID);
				cols_of(&c, r, T, NP DP, NP L1C "mlp.down_proj.weight", HID, I);
				shp(&c, r, "classifier.weight", 2, 2, HID, 0);
				shp(&c, r, NP "pooler.dense.weight", 2, HID, HID, 0);
				repl(&c, r, "classifier.weight");
				repl(&c, r, "classifier.bias");
				repl(&c, r, NP "pooler.dense.weight");
				repl(&c, r, NP "pooler.dense.bias");
			}
			assert_int_equal(shardmap_n_skipped(c.p), 0);
			fx_close(&c);
			fx_close(&g);
		}
}

static const char *const gc_keep[] = {
    NP EMB, NP "embeddings.LayerNorm.weight", NP L1 "attn_ln.bias",   NP QKVB,
    NP DPB, NP "pooler.dense.weight",         NP "pooler.dense.bias", "classifier.bias"};
static const char *const gc_quant[] = {NP QKV, NP OP, NP GU, NP DP, "classifier.weight"};

/* int8-channel TP 2 with 3 labels: the encoder's Linears and classifier.weight quantized (the
 * classifier's codes row by row, whole on each rank), the pooler, biases, table and LayerNorms
 * BF16. fp8-channel TP 4: the same split. */
static void test_gte_cls_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_gc(0, 3, true), GC_ARCH(TV0 ",\"num_labels\":3"), 2,
	              WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(gc_keep), FX_N(gc_quant));
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, "classifier.weight", 2, 3, HID, 0);
		fx_rows_int8_is(&f, r, "classifier.weight", 0, "classifier.weight", 0, 3, HID);
	}
	fx_rows_int8_is(&f, 1, NP GU, 0, NP UG, I + I / 2, I / 2, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_gc(0, 2, true), GC_CFG, 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(gc_keep), FX_N(gc_quant));
	fx_close(&f);
}

static void test_gte_cls_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_gc(0, 2, true), GC_CFG, 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_gc(2, 2, true), GC_ARCH(",\"type_vocab_size\":2"), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* num_labels: id2label's entries, else num_labels, else 2; GteNewModel reads none of them. */
static void test_gte_cls_labels(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_gc(0, 3, true),
	        GC_ARCH(TV0 ",\"id2label\":{\"0\":\"a\",\"1\":\"b\",\"2\":\"c\"},\"num_labels\":5"),
	        2, 1, 0, true);
	shp(&f, 1, "classifier.weight", 2, 3, HID, 0);
	fx_close(&f);
	fx_open(&f, tm_gc(0, 1, true), GC_ARCH(TV0 ",\"num_labels\":1"), 2, 1, 0, true);
	shp(&f, 0, "classifier.bias", 1, 1, 0, 0);
	fx_close(&f);
	fx_refused(tm_gc(0, 3, true), GC_CFG, WT_ESHAPE, "'classifier.", "implies [2");
	fx_refused(tm_gc(0, 2, true), GC_ARCH(TV0 ",\"id2label\":{}"), WT_ECORRUPT, "id2label",
	           "at least one label");
	fx_refused(tm_gc(0, 2, true), GC_ARCH(TV0 ",\"id2label\":[\"a\"]"), WT_ECORRUPT, "id2label",
	           "not an object");
	/* GteNewModel: id2label is not read */
	fx_open(&f, tm_gt("", 2, 0, 0), GT_CFG(TV0 ",\"id2label\":[\"a\"]"), 2, 1, 0, true);
	fx_close(&f);
}

/* What vLLM's AutoWeightsLoader cannot place, or the class cannot build. */
static void test_gte_cls_errors(void **state)
{
	(void)state;
	fx_refused(tm_gc(0, 0, false), GC_CFG, WT_ENOTFOUND, "classifier.weight", "missing");
	fx_refused(tm_gc(0, 2, false), GC_CFG, WT_ENOTFOUND, "classifier.bias", "missing");
	tm_model *m = tm_gt(NP, 2, 0, 0);
	tm_add2(m, "classifier.weight", 2, HID);
	tm_add2(m, "classifier.bias", 2, 0);
	fx_refused(m, GC_CFG, WT_ENOTFOUND, "new.pooler.dense.weight", "missing");
	/* an unprefixed encoder (GteNewModel's names) is unknown to the classifier */
	fx_refused(tm_gt("", 2, 0, GT_POOLER | GT_CLS), GC_CFG, WT_EUNSUPPORTED, "unknown tensor",
	           "family gte_new_cls");
	m = tm_gc(0, 2, true);
	tm_add2(m, "new.encoder.layer.1.mlp.up_gate_proj.bias", 2 * I, 0);
	fx_refused(m, GC_CFG, WT_EUNSUPPORTED, "mlp.up_gate_proj.bias", "unknown tensor");
	/* GteNewModel's refusals hold */
	fx_refused(tm_gc(0, 2, true), GC_ARCH(TV0 ",\"hidden_act\":\"silu\""), WT_EUNSUPPORTED,
	           "hidden_act \"silu\"", "gelu");
	fx_refused(tm_gc(0, 2, true), GC_ARCH(TV0 ",\"pack_qkv\":false"), WT_EUNSUPPORTED,
	           "pack_qkv false", "packed");
	fx_refused(tm_gc(0, 2, true), GC_ARCH(",\"type_vocab_size\":2"), WT_ENOTFOUND, NP TT,
	           "missing");
	fx_refused_tp(tm_gc(0, 2, true), GC_CFG, 16, WT_ELAYOUT, "tp_size 16",
	              "use tp_size 1, 2, 4 or 8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gte_cls_slices),   cmocka_unit_test(test_gte_cls_quant),
	    cmocka_unit_test(test_gte_cls_coverage), cmocka_unit_test(test_gte_cls_labels),
	    cmocka_unit_test(test_gte_cls_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
