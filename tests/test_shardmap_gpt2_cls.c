/*
 * test_shardmap_gpt2_cls.c — GPT2ForSequenceClassification (microsoft/DialogRPT-*) cut as
 * vLLM's gpt2.py GPT2ForSequenceClassification loads it: GPT2Model under transformer. by
 * GPT-2's rules (each rank byte for byte GPT2LMHeadModel's, tied, so without lm_head), then
 * score.weight [num_labels, n_embd] whole on every rank and never quantized (vLLM's plain
 * nn.Linear without the quantization config; no bias). vLLM's AutoWeightsLoader prefixes
 * nothing: names without transformer. and an lm_head are unknown. Hand slices at TP 2 and 4,
 * int8 / fp8 layouts, coverage over TP 1..8, num_labels defaults and the refusals. Seeds
 * fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed00c5ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_gpt2_fx.h"

#define G2_KEYS                                                                                    \
	"\"model_type\":\"gpt2\",\"n_embd\":128,\"n_head\":8,\"n_inner\":256,"                     \
	"\"n_positions\":32,\"vocab_size\":1000,\"n_layer\":2"
#define CLS_CFG(extra) "{\"architectures\":[\"GPT2ForSequenceClassification\"]," G2_KEYS extra "}"
#define LM_CFG         "{\"architectures\":[\"GPT2LMHeadModel\"]," G2_KEYS "}"
#define LABEL3         ",\"id2label\":{\"0\":\"a\",\"1\":\"b\",\"2\":\"c\"}"

/* GPT-2's test model (transformer. names, the buffers when bufs) with score [labels, hid]
 * (none when labels is 0). */
static tm_model *cls_model(int64_t labels, int bufs)
{
	tm_model *m = tm_gpt2("transformer.", 0, bufs);
	if (labels > 0)
		tm_add2(m, "score.weight", labels, HID);
	return m;
}

/* Every tensor of GPT2LMHeadModel's rank r (tied: no lm_head) is the classifier's, same
 * bytes; the classifier has score.weight besides. */
static void same_as_lm(const fx *cls, uint32_t T, uint32_t r)
{
	fx lm;
	fx_open(&lm, tm_gpt2("transformer.", 0, 1), LM_CFG, T, 1, 0, true);
	size_t n = shardmap_rank_n_tensors(lm.p, r);
	for (size_t i = 0; i < n; i++) {
		const sm_out_info *t = shardmap_rank_tensor(lm.p, r, i);
		const sm_out_info *u = info(cls, r, t->name);
		assert_int_equal(t->nbytes, u->nbytes);
		assert_int_equal(t->dtype, u->dtype);
		if (memcmp(lm.pr->b[r][i], out_bytes(cls, r, t->name), t->nbytes) != 0)
			fail_msg("rank %u '%s' differs from GPT2LMHeadModel's", r, t->name);
	}
	assert_int_equal(shardmap_rank_n_tensors(cls->p, r), n + 1);
	fx_close(&lm);
}

static void test_gpt2_cls_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, cls_model(3, 1), CLS_CFG(LABEL3), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "gpt2_cls");
	for (uint32_t r = 0; r < 2; r++) {
		/* [q_r; k_r; v_r], 64 rows each: c_attn's output columns transposed */
		shp(&f, r, H1 "attn.c_attn.weight", 2, 192, HID, 0);
		trows_are(&f, r, H1 "attn.c_attn.weight", 0, H1 "attn.c_attn.weight", 64 * r, 64);
		trows_are(&f, r, H1 "attn.c_attn.weight", 64, H1 "attn.c_attn.weight", HID + 64 * r,
		          64);
		trows_are(&f, r, H1 "attn.c_attn.weight", 128, H1 "attn.c_attn.weight",
		          2 * HID + 64 * r, 64);
		rows_are(&f, r, H1 "attn.c_attn.bias", 128, H1 "attn.c_attn.bias", 2 * HID + 64 * r,
		         64);
		tcols_of(&f, r, 2, H1 "attn.c_proj.weight", H1 "attn.c_proj.weight");
		trows_are(&f, r, H1 "mlp.c_fc.weight", 0, H1 "mlp.c_fc.weight", 128 * r, 128);
		rows_are(&f, r, H1 "mlp.c_fc.bias", 0, H1 "mlp.c_fc.bias", 128 * r, 128);
		tcols_of(&f, r, 2, H1 "mlp.c_proj.weight", H1 "mlp.c_proj.weight");
		repl(&f, r, H1 "mlp.c_proj.bias");
		repl(&f, r, "transformer.wpe.weight");
		/* the head whole on both ranks; no lm_head; the buffers skipped */
		shp(&f, r, "score.weight", 2, 3, HID, 0);
		repl(&f, r, "score.weight");
		assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
		assert_true(tm_ix(f.p, r, H1 "attn.masked_bias") < 0);
		same_as_lm(&f, 2, r);
	}
	assert_true(fx_skipped(&f, H1 "attn.bias"));
	rows_are(&f, 1, "transformer.wte.weight", 0, "transformer.wte.weight", 512, 488);
	fx_close(&f);
}

static void test_gpt2_cls_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, cls_model(1, 0), CLS_CFG(",\"num_labels\":1"), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, H1 "attn.c_attn.weight", 2, 96, HID, 0);
		trows_are(&f, r, H1 "attn.c_attn.weight", 32, H1 "attn.c_attn.weight", HID + 32 * r,
		          32);
		tcols_of(&f, r, 4, H1 "attn.c_proj.weight", H1 "attn.c_proj.weight");
		trows_are(&f, r, H1 "mlp.c_fc.weight", 0, H1 "mlp.c_fc.weight", 64 * r, 64);
		tcols_of(&f, r, 4, H1 "mlp.c_proj.weight", H1 "mlp.c_proj.weight");
		shp(&f, r, "score.weight", 2, 1, HID, 0);
		repl(&f, r, "score.weight");
	}
	rows_are(&f, 2, "transformer.wte.weight", 0, "transformer.wte.weight", 512, 256);
	fx_close(&f);
}

/* int8-channel TP 2 and fp8-channel TP 4: the decoder's Conv1Ds quantized, score kept BF16
 * without a scale (vLLM's score gets no quantization config), as the norms and embeddings. */
static void test_gpt2_cls_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {"score.weight", "transformer.wte.weight",
	                                   "transformer.wpe.weight", H1 "ln_1.weight",
	                                   H1 "attn.c_attn.bias"};
	static const char *const q8[] = {H1 "attn.c_attn.weight", H1 "attn.c_proj.weight",
	                                 H1 "mlp.c_fc.weight", H1 "mlp.c_proj.weight"};
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, cls_model(3, 0), CLS_CFG(LABEL3), &l, true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_quant_split(&f, r, WT_BF16, keep, 5, q8, 4);
		repl(&f, r, "score.weight");
	}
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, cls_model(3, 0), CLS_CFG(LABEL3), &l, true);
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(info(&f, r, H1 "mlp.c_fc.weight")->dtype, WT_F8_E4M3);
		assert_true(tm_ix(f.p, r, "score.weight_scale") < 0);
		repl(&f, r, "score.weight");
	}
	fx_close(&f);
}

static void test_gpt2_cls_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(cls_model(3, 1), CLS_CFG(LABEL3), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(cls_model(2, 0), CLS_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

/* num_labels: id2label's entries, else num_labels, else 2 (PretrainedConfig); the online
 * conversion keys are not read for this class (vLLM's as_seq_cls_model only). */
static void test_gpt2_cls_defaults(void **state)
{
	(void)state;
	static const struct {
		const char *js;
		int64_t labels;
	} cases[] = {
	    {CLS_CFG(LABEL3 ",\"num_labels\":5"), 3},
	    {CLS_CFG(",\"num_labels\":5"), 5},
	    {CLS_CFG(""), 2},
	    {CLS_CFG(",\"classifier_from_token\":[\"no\",\"yes\"],\"method\":\"x\""), 2},
	    {LM_CFG, -1},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		ckpt_config c;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(cases[k].js, strlen(cases[k].js), &c, &err),
		                 WT_OK);
		assert_int_equal(c.rob_num_labels, cases[k].labels);
		assert_false(c.cls_from_token);
		/* GPT2Config's keys and defaults: n_embd, n_head, layer_norm_epsilon */
		assert_int_equal(c.hidden_size, HID);
		assert_int_equal(c.num_attention_heads, 8);
		ckpt_config_clear(&c);
	}
	fx f; /* two labels by default, tied lm_head absent either way */
	fx_open(&f, cls_model(2, 0), CLS_CFG(""), 2, 1, 0, false);
	shp(&f, 0, "score.weight", 2, 2, HID, 0);
	fx_close(&f);
	fx_open(&f, cls_model(2, 0), CLS_CFG(",\"tie_word_embeddings\":false"), 2, 1, 0, false);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0);
	fx_close(&f);
}

static void test_gpt2_cls_errors(void **state)
{
	(void)state;
	/* score's rows other than num_labels, score missing, a score bias (vLLM builds none) */
	fx_refused(cls_model(2, 0), CLS_CFG(LABEL3), WT_ESHAPE, "score.weight", "implies [3");
	fx_refused(cls_model(0, 0), CLS_CFG(""), WT_ENOTFOUND, "score.weight", "");
	tm_model *m = cls_model(2, 0);
	tm_add2(m, "score.bias", 2, 0);
	fx_refused(m, CLS_CFG(""), WT_EUNSUPPORTED, "score.bias", "unknown tensor");
	/* no lm_head in this class; names without transformer. are not prefixed */
	m = cls_model(2, 0);
	tm_add2(m, "lm_head.weight", 1000, HID);
	fx_refused(m, CLS_CFG(""), WT_EUNSUPPORTED, "lm_head.weight", "unknown tensor");
	m = tm_gpt2("", 0, 0);
	tm_add2(m, "score.weight", 2, HID);
	fx_refused(m, CLS_CFG(""), WT_EUNSUPPORTED, "unknown tensor", "family gpt2_cls");
	/* id2label */
	fx_refused(cls_model(2, 0), CLS_CFG(",\"id2label\":{}"), WT_ECORRUPT, "id2label is empty",
	           "num_labels");
	fx_refused(cls_model(2, 0), CLS_CFG(",\"id2label\":[1]"), WT_ECORRUPT, "id2label",
	           "not an object");
	/* GPT-2's refusals, naming this class */
	fx_refused(cls_model(2, 0), CLS_CFG(",\"num_key_value_heads\":2"), WT_EUNSUPPORTED,
	           "GPT2ForSequenceClassification has no grouped kv heads", "remove the key");
	fx_refused(cls_model(2, 0), CLS_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "GPT2ForSequenceClassification has no head_dim key");
	fx_refused(cls_model(2, 0), CLS_CFG(",\"add_cross_attention\":true"), WT_EUNSUPPORTED,
	           "add_cross_attention true", "set it false");
	fx_refused(cls_model(2, 0),
	           CLS_CFG(",\"quantization_config\":{\"quant_method\":\"fp8\","
	                   "\"activation_scheme\":\"dynamic\"}"),
	           WT_EUNSUPPORTED, "a quantized GPT2ForSequenceClassification",
	           "loaded transposed");
	fx_refused_tp(cls_model(2, 0), CLS_CFG(""), 16, WT_ELAYOUT, "tp_size 16", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gpt2_cls_tp2),      cmocka_unit_test(test_gpt2_cls_tp4),
	    cmocka_unit_test(test_gpt2_cls_quant),    cmocka_unit_test(test_gpt2_cls_coverage),
	    cmocka_unit_test(test_gpt2_cls_defaults), cmocka_unit_test(test_gpt2_cls_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
