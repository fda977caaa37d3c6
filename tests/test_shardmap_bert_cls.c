/*
 * test_shardmap_bert_cls.c — BERT's heads (docs/format.md section 2.7, BERT heads):
 * BertForSequenceClassification (bert_cls) and BertForTokenClassification (bert_tok), cut as
 * vLLM's bert.py loads them: BertModel's encoder under bert. byte for byte the bert family's
 * ranks (hand slices of the fused q/k/v rows, intermediate rows, output columns at TP 2 and 4),
 * the pooler (bert_cls; skipped for bert_tok) and classifier whole on every rank and never
 * quantized (int8-channel, fp8-channel), bert.embeddings.position_ids skipped, coverage at TP 1,
 * 2, 4, 8, the config's defaults (num_labels, BertConfig's sizes) and the refusals. Seed fixed.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernels/kernels.h"
#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0xbe27ull
#include "test_shardmap_fx.h"

#include "test_shardmap_bert_fx.h"

/* TP 2 and 4: the encoder's ranks are BertModel's under bert. (bert_cls with the pooler whole,
 * bert_tok without: a pooler in its checkpoint skipped), the classifier whole, the position_ids
 * buffer skipped. */
static void test_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++)
		for (int tok = 0; tok < 2; tok++) {
			fx c, b;
			fx_open(&c, bert_model("bert.", true, tok ? 4 : 1, true),
			        tok ? cfg_tok : cfg_cls, tps[i], 1, 0, true);
			fx_open(&b, bert_model("", !tok, 0, false), cfg_bert, tps[i], 1, 0, true);
			for (uint32_t r = 0; r < tps[i]; r++) {
				hand_slices(&c, tps[i], r);
				fx_same_rank(&c, &b, r, "bert.");
				if (!tok)
					repl(&c, r, "bert.pooler.dense.weight");
				shp(&c, r, "classifier.weight", 2, tok ? 4 : 1, HID, 0);
				assert_int_equal(shardmap_rank_n_tensors(c.p, r),
				                 5 + 2 * 12 + (tok ? 0 : 2) + 2);
			}
			assert_true(fx_skipped(&c, "bert.embeddings.position_ids"));
			assert_int_equal(shardmap_n_skipped(c.p), tok ? 3 : 1);
			if (tok)
				assert_true(fx_skipped(&c, "bert.pooler.dense.weight"));
			fx_close(&c);
			fx_close(&b);
		}
	assert_string_equal(shardmap_family_find("BertForSequenceClassification", NULL)->name,
	                    "bert_cls");
	assert_string_equal(shardmap_family_find("BertForTokenClassification", NULL)->name,
	                    "bert_tok");
}

/* int8-channel TP 2: the encoder's Linears quantized, the pooler, classifier, embeddings and
 * LayerNorms kept BF16 without scales (plain nn.Linear / nn.LayerNorm in vLLM). fp8-channel
 * TP 4 on the token classifier: the same split. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, bert_model("bert.", true, 3, false),
	          CFG("BertForSequenceClassification", ",\"num_labels\":3"), &l, true);
	static const char *const keep[] = {"bert.pooler.dense.weight",
	                                   "bert.pooler.dense.bias",
	                                   "classifier.weight",
	                                   "classifier.bias",
	                                   "bert.embeddings.word_embeddings.weight",
	                                   L1 "output.LayerNorm.weight"};
	static const char *const q8[] = {L1 "attention.self.qkv_proj.weight",
	                                 L1 "attention.output.dense.weight",
	                                 L1 "intermediate.dense.weight", L1 "output.dense.weight"};
	for (uint32_t r = 0; r < 2; r++) {
		fx_quant_split(&f, r, WT_BF16, keep, 6, q8, 4);
		repl(&f, r, "classifier.weight");
		repl(&f, r, "bert.pooler.dense.weight");
		shp(&f, r, "classifier.weight", 2, 3, HID, 0);
	}
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, bert_model("bert.", false, 4, false), cfg_tok, &l, true);
	assert_int_equal(info(&f, 3, L1 "attention.self.qkv_proj.weight")->dtype, WT_F8_E4M3);
	assert_int_equal(info(&f, 3, L1 "output.dense.weight")->dtype, WT_F8_E4M3);
	assert_int_equal(info(&f, 3, "classifier.weight")->dtype, WT_BF16);
	assert_int_equal(tm_ix(f.p, 3, "classifier.weight_scale"), -1);
	repl(&f, 3, "classifier.weight");
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(bert_model("bert.", true, 1, true), cfg_cls, 8, lays, 4);
	coverage(bert_model("bert.", true, 4, true), cfg_tok, 8, lays, 4);
}

/* num_labels: id2label's entries, else num_labels, else PretrainedConfig's 2; the tables' rows
 * max_position_embeddings / type_vocab_size (BertConfig's 512 / 2 when absent) and the sizes'
 * class defaults (bert-base's); read for the heads alone (BertModel's stay -1). */
static void test_defaults(void **state)
{
	(void)state;
	static const struct {
		const char *js;
		int64_t labels, pos, types, hid, voc;
	} cases[] = {
	    {CFG("BertForSequenceClassification", LABEL1 ",\"num_labels\":5"), 1, 20, 2, 64, 100},
	    {CFG("BertForTokenClassification", ",\"num_labels\":9"), 9, 20, 2, 64, 100},
	    {"{\"architectures\":[\"BertForSequenceClassification\"],\"model_type\":\"bert\"}", 2,
	     512, 2, 768, 30522},
	    {"{\"architectures\":[\"BertForTokenClassification\"],\"model_type\":\"bert\","
	     "\"type_vocab_size\":1}",
	     2, 512, 1, 768, 30522},
	    {CFG("BertModel", ",\"num_labels\":5"), -1, -1, -1, 64, 100},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		ckpt_config c;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(cases[k].js, strlen(cases[k].js), &c, &err),
		                 WT_OK);
		assert_int_equal(c.rob_num_labels, cases[k].labels);
		assert_int_equal(c.rob_max_pos, cases[k].pos);
		assert_int_equal(c.rob_types, cases[k].types);
		assert_int_equal(c.hidden_size, cases[k].hid);
		assert_int_equal(c.vocab_size, cases[k].voc);
		if (cases[k].labels > 0)
			assert_true(c.num_attention_heads == (k < 2 ? 8 : 12) && c.rob_abs_pos &&
			            !c.rob_decoder);
		ckpt_config_clear(&c);
	}
	fx f; /* two labels by default */
	fx_open(&f, bert_model("bert.", true, 2, false), CFG("BertForSequenceClassification", ""),
	        2, 1, 0, false);
	fx_close(&f);
}

static void test_errors(void **state)
{
	(void)state;
	/* classifier rows other than num_labels, the pooler / classifier bias missing */
	fx_refused(bert_model("bert.", true, 2, false), cfg_cls, WT_ESHAPE, "classifier.",
	           "implies [1");
	fx_refused(bert_model("bert.", false, 1, false), cfg_cls, WT_ENOTFOUND,
	           "bert.pooler.dense.", "");
	tm_model *m = bert_model("bert.", false, 4, false);
	tm_remove(m, "classifier.bias");
	fx_refused(m, cfg_tok, WT_ENOTFOUND, "classifier.bias", "");
	/* the position table's rows are max_position_embeddings' */
	fx_refused(
	    bert_model("bert.", true, 1, false),
	    "{\"architectures\":[\"BertForSequenceClassification\"],\"model_type\":\"bert\"," SIZES
	    ",\"max_position_embeddings\":24" LABEL1 "}",
	    WT_ESHAPE, "position_embeddings", "");
	/* id2label empty / not an object */
	fx_refused(bert_model("bert.", true, 1, false),
	           CFG("BertForSequenceClassification", ",\"id2label\":{}"), WT_ECORRUPT,
	           "id2label is empty", "num_labels");
	fx_refused(bert_model("bert.", false, 1, false),
	           CFG("BertForTokenClassification", ",\"id2label\":[1]"), WT_ECORRUPT, "id2label",
	           "not an object");
	/* BertEmbedding's other position types, a decoder */
	fx_refused(bert_model("bert.", true, 1, false),
	           CFG("BertForSequenceClassification",
	               LABEL1 ",\"position_embedding_type\":\"relative_key\""),
	           WT_EUNSUPPORTED, "position_embedding_type", "absolute");
	fx_refused(bert_model("bert.", false, 4, false),
	           CFG("BertForTokenClassification", LABEL4 ",\"is_decoder\":true"),
	           WT_EUNSUPPORTED, "is_decoder", "");
	/* the encoder without bert. (vLLM's loader has no module for it), an MLM head */
	fx_refused(bert_model("", true, 1, false), cfg_cls, WT_EUNSUPPORTED, "unknown tensor",
	           "bert_cls");
	m = bert_model("bert.", false, 4, false);
	tm_add2(m, "cls.predictions.bias", V, 0);
	fx_refused(m, cfg_tok, WT_EUNSUPPORTED, "cls.predictions.bias", "unknown tensor");
	/* heads: 8 do not split 16 ways */
	fx_refused_tp(bert_model("bert.", true, 1, false), cfg_cls, 16, WT_ELAYOUT, "tp_size 16",
	              "num_attention_heads 8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slices),   cmocka_unit_test(test_quant),
	    cmocka_unit_test(test_coverage), cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
