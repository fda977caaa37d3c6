/*
 * test_shardmap_bert_splade.c — BertSpladeSparseEmbeddingModel (SPLADE, saved as
 * BertForMaskedLM; docs/format.md section 2.7, BERT heads), cut as vLLM's bert.py loads it:
 * BertModel's encoder under bert. byte for byte the bert family's ranks (hand slices of the
 * fused q/k/v rows, intermediate rows, output columns at TP 2 and 4), the same ranks from the
 * model. layout, the pooler and position_ids skipped; the masked-LM head's
 * cls.predictions.transform.dense / LayerNorm and decoder [V, hid] with its bias whole on every
 * rank and never quantized (int8-channel, fp8-channel), cls.predictions.bias skipped; coverage
 * at TP 1, 2, 4, 8; the refusals (the decoder vLLM would leave at its random init). Seed fixed.
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

#define SEED 0x5b1aull
#include "test_shardmap_fx.h"
#include "test_shardmap_quant.h"
#include "test_shardmap_bert_fx.h"

static const char cfg_splade[] = CFG("BertSpladeSparseEmbeddingModel", "");

#define TD "cls.predictions.transform.dense."
#define TL "cls.predictions.transform.LayerNorm."
#define DW "cls.predictions.decoder.weight"
#define DB "cls.predictions.decoder.bias"

enum { MLM_DECODER = 1, MLM_DECODER_BIAS = 2, MLM_BIAS = 4, MLM_ALL = 7 };

/* BertModel under pfx (with its pooler and position_ids), then the masked-LM head: the
 * transform always, the decoder weight / bias and cls.predictions.bias as `what` says. */
static tm_model *splade_model(const char *pfx, int what)
{
	tm_model *m = bert_model(pfx, true, 0, true);
	tm_add2(m, TD "weight", HID, HID);
	tm_add2(m, TD "bias", HID, 0);
	tm_add2(m, TL "weight", HID, 0);
	tm_add2(m, TL "bias", HID, 0);
	if (what & MLM_DECODER)
		tm_add2(m, DW, V, HID);
	if (what & MLM_DECODER_BIAS)
		tm_add2(m, DB, V, 0);
	if (what & MLM_BIAS)
		tm_add2(m, "cls.predictions.bias", V, 0);
	return m;
}

static const char *const head[] = {TD "weight", TD "bias", TL "weight", TL "bias", DW, DB};

/* TP 2 and 4: the encoder's ranks are BertModel's (without its pooler) under bert., the head
 * whole, the decoder [V, hid] unpadded; the pooler, position_ids and cls.predictions.bias
 * skipped. */
static void test_splade_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx c, b;
		fx_open(&c, splade_model("bert.", MLM_ALL), cfg_splade, T, 1, 0, true);
		fx_open(&b, bert_model("", false, 0, false), cfg_bert, T, 1, 0, true);
		assert_string_equal(shardmap_family(c.p), "bert_splade");
		for (uint32_t r = 0; r < T; r++) {
			hand_slices_of(&c, T, r, false);
			fx_same_rank(&c, &b, r, "bert.");
			for (size_t k = 0; k < sizeof(head) / sizeof(head[0]); k++)
				repl(&c, r, head[k]);
			shp(&c, r, DW, 2, V, HID, 0);
			assert_int_equal(shardmap_rank_n_tensors(c.p, r), 5 + 2 * 12 + 6);
		}
		assert_int_equal(shardmap_n_skipped(c.p), 4);
		assert_true(fx_skipped(&c, "bert.pooler.dense.weight") &&
		            fx_skipped(&c, "bert.embeddings.position_ids") &&
		            fx_skipped(&c, "cls.predictions.bias"));
		fx_close(&c);
		fx_close(&b);
	}
}

/* vLLM strips model. / bert.: the model. encoder cuts byte for byte as the bert. one (the
 * runtime names keep bert.); a checkpoint mixing the two layouts is refused, an unprefixed
 * encoder is unknown names. */
static void test_splade_layouts(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2)
		fx_same_layouts(splade_model("bert.", MLM_ALL), NULL, cfg_splade,
		                splade_model("model.", MLM_ALL), cfg_splade, T, 1, NULL);
	fx_refused(splade_model("", MLM_ALL), cfg_splade, WT_EUNSUPPORTED, "unknown tensor",
	           "bert_splade");
	tm_model *m = splade_model("model.", MLM_ALL);
	tm_add2(m, "bert.encoder.layer.0.output.dense.bias", HID, 0);
	fx_refused(m, cfg_splade, WT_EUNSUPPORTED, "mixes two name layouts", "");
}

/* int8-channel TP 2 / fp8-channel TP 4: the encoder's Linears quantized, the MLM head (plain
 * nn.Linear / nn.LayerNorm) kept BF16 with no scale. */
static const char *const keep[] = {
    TD "weight", TD "bias", TL "weight", DW, DB, "bert.embeddings.word_embeddings.weight"};
static const char *const quant[] = {"bert.encoder.layer.1.attention.self.qkv_proj.weight",
                                    "bert.encoder.layer.1.intermediate.dense.weight",
                                    "bert.encoder.layer.0.output.dense.weight"};

static void test_splade_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, splade_model("bert.", MLM_ALL), cfg_splade, 2, WT_QUANT_INT8_CHANNEL,
	              WT_BF16, FX_N(keep), FX_N(quant));
	for (uint32_t r = 0; r < 2; r++)
		assert_true(tm_ix(f.p, r, DW "_scale") < 0 && tm_ix(f.p, r, TD "weight_scale") < 0);
	fx_close(&f);
	fx_open_quant(&f, splade_model("bert.", MLM_ALL), cfg_splade, 4, WT_QUANT_FP8_CHANNEL,
	              WT_BF16, FX_N(keep), FX_N(quant));
	fx_close(&f);
}

static void test_splade_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(splade_model("bert.", MLM_ALL), cfg_splade, 8, lays, 4);
	coverage(splade_model("model.", MLM_DECODER | MLM_DECODER_BIAS), cfg_splade, 8, lays, 4);
}

static void test_splade_errors(void **state)
{
	(void)state;
	/* transformers' tied save: no decoder weight (vLLM would not tie it), or only
	 * cls.predictions.bias (vLLM would not read it) */
	fx_refused(splade_model("bert.", MLM_DECODER_BIAS | MLM_BIAS), cfg_splade, WT_ENOTFOUND,
	           "'cls.predictions.decoder.weight': missing", "word_embeddings");
	fx_refused(splade_model("bert.", MLM_DECODER | MLM_BIAS), cfg_splade, WT_ENOTFOUND,
	           "'cls.predictions.decoder.bias': missing", "copy of cls.predictions.bias");
	tm_model *m = splade_model("bert.", MLM_ALL);
	tm_remove(m, TL "bias");
	fx_refused(m, cfg_splade, WT_ENOTFOUND, TL "bias", "missing");
	/* the decoder's rows are vocab_size's */
	m = splade_model("bert.", MLM_DECODER_BIAS);
	tm_add2(m, DW, 96, HID);
	fx_refused(m, cfg_splade, WT_ESHAPE, DW, "implies [100, 64]");
	/* BertEmbedding's refusals; an id2label is not read as a classifier's */
	fx_refused(
	    splade_model("bert.", MLM_ALL),
	    CFG("BertSpladeSparseEmbeddingModel", ",\"position_embedding_type\":\"relative_key\""),
	    WT_EUNSUPPORTED, "position_embedding_type", "absolute");
	fx_refused(splade_model("bert.", MLM_ALL),
	           CFG("BertSpladeSparseEmbeddingModel", ",\"is_decoder\":true"), WT_EUNSUPPORTED,
	           "is_decoder", "");
	fx f;
	fx_open(&f, splade_model("bert.", MLM_ALL),
	        CFG("BertSpladeSparseEmbeddingModel", ",\"id2label\":{}"), 2, 1, 0, true);
	fx_close(&f);
	/* a classifier is no SPLADE tensor */
	m = splade_model("bert.", MLM_ALL);
	tm_add2(m, "classifier.weight", 2, HID);
	fx_refused(m, cfg_splade, WT_EUNSUPPORTED, "classifier.weight", "unknown tensor");
	fx_refused_tp(splade_model("bert.", MLM_ALL), cfg_splade, 16, WT_ELAYOUT, "tp_size 16",
	              "num_attention_heads 8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_splade_slices), cmocka_unit_test(test_splade_layouts),
	    cmocka_unit_test(test_splade_quant),  cmocka_unit_test(test_splade_coverage),
	    cmocka_unit_test(test_splade_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
