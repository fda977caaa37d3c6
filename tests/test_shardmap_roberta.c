/*
 * test_shardmap_roberta.c — RobertaModel / XLMRobertaModel (docs/format.md section 2.7,
 * RoBERTa), cut as vLLM's roberta.py loads them: BERT's layers (q/k/v fused into qkv_proj by
 * heads, attention.output.dense / output.dense by columns with their biases whole,
 * intermediate.dense by rows with its bias), word_embeddings by vocabulary rows, the position
 * table [max_position_embeddings, hid] and token_type_embeddings [type_vocab_size, hid] whole;
 * the pooler, the MLM head lm_head.* and embeddings.position_ids skipped. Hand slices at TP 2
 * and 4, the roberta.-prefixed layout byte for byte the unprefixed one, int8 / fp8 codes of the
 * four Linears alone, coverage at TP 1, 2, 4, 8 in both layouts, RobertaConfig's /
 * XLMRobertaConfig's defaults and the refusals. The sequence classifiers
 * (XLMRobertaForSequenceClassification, RobertaForSequenceClassification): the encoder under
 * roberta. (kept in the runtime names) cut as RobertaModel's, byte for byte, the head
 * classifier.dense / classifier.out_proj [num_labels, hid] whole and never quantized, num_labels
 * from id2label, the refusals. Seed fixed.
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

#define SEED 0x70beull
#include "test_shardmap_fx.h"

/* hid 64, H 8 (d 8), I 128, V 100, 2 layers, 20 positions (pad_token_id 1), 1 token type */
#define HID 64
#define I   128
#define V   100
#define POS 20

#define CFG_KEYS                                                                                   \
	"\"hidden_size\":64,\"num_attention_heads\":8,\"intermediate_size\":128,"                  \
	"\"vocab_size\":100,\"num_hidden_layers\":2"
#define CFG(arch, mt, rest)                                                                        \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"" mt "\"," CFG_KEYS rest "}"
#define POS_KEYS ",\"max_position_embeddings\":20,\"type_vocab_size\":1,\"pad_token_id\":1"
static const char cfg_rb[] = CFG("RobertaModel", "roberta", POS_KEYS);
static const char cfg_xlm[] = CFG("XLMRobertaModel", "xlm-roberta", POS_KEYS);

/* an encoder layer's tensors (0 columns: 1-D) */
static const fx_leaf layer[] = {FX_BERT_LAYER_LEAVES(HID, I)};

/* The encoder under prefix pfx ("" or "roberta.") with `layers` layers and a position table of
 * pos rows; extras: the pooler and the position_ids buffer under pfx, an MLM head lm_head.*. */
static tm_model *rb_model(const char *pfx, int layers, int64_t pos, bool extras)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
#define RB_ADD(name, a, k) (snprintf(b, sizeof(b), "%s%s", pfx, name), tm_add2(m, b, a, k))
	RB_ADD("embeddings.word_embeddings.weight", V, HID);
	RB_ADD("embeddings.position_embeddings.weight", pos, HID);
	RB_ADD("embeddings.token_type_embeddings.weight", 1, HID);
	RB_ADD("embeddings.LayerNorm.weight", HID, 0);
	RB_ADD("embeddings.LayerNorm.bias", HID, 0);
	for (int l = 0; l < layers; l++)
		for (size_t k = 0; k < sizeof(layer) / sizeof(layer[0]); k++) {
			char n[160];
			snprintf(n, sizeof(n), "encoder.layer.%d.%s", l, layer[k].leaf);
			RB_ADD(n, layer[k].n, layer[k].k);
		}
	if (extras) {
		RB_ADD("pooler.dense.weight", HID, HID);
		RB_ADD("pooler.dense.bias", HID, 0);
		snprintf(b, sizeof(b), "%sembeddings.position_ids", pfx);
		tm_add(m, b, WT_I64, 2, 1, pos, 0);
		tm_add2(m, "lm_head.dense.weight", HID, HID);
		tm_add2(m, "lm_head.dense.bias", HID, 0);
		tm_add2(m, "lm_head.layer_norm.weight", HID, 0);
		tm_add2(m, "lm_head.layer_norm.bias", HID, 0);
		tm_add2(m, "lm_head.bias", V, 0);
	}
#undef RB_ADD
	return m;
}

#define L1 "encoder.layer.1."

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	int64_t ql = HID / T, il = I / T, vl = 128 / T; /* V padded to 128 */
	static const char *const leaf[] = {"weight", "bias"};
	char n[160], s[160];
	for (int w = 0; w < 2; w++) {
		snprintf(n, sizeof(n), L1 "attention.self.qkv_proj.%s", leaf[w]);
		static const char *const part[] = {"query", "key", "value"};
		for (int p = 0; p < 3; p++) {
			snprintf(s, sizeof(s), L1 "attention.self.%s.%s", part[p], leaf[w]);
			rows_at(f, r, n, p * ql, s, r * ql, ql);
		}
		snprintf(n, sizeof(n), L1 "intermediate.dense.%s", leaf[w]);
		rows_at(f, r, n, 0, n, r * il, il);
	}
	shp(f, r, L1 "attention.self.qkv_proj.weight", 2, 3 * ql, HID, 0);
	shp(f, r, L1 "intermediate.dense.weight", 2, il, HID, 0);
	cols_of(f, r, T, L1 "attention.output.dense.weight", L1 "attention.output.dense.weight",
	        HID, HID);
	cols_of(f, r, T, L1 "output.dense.weight", L1 "output.dense.weight", HID, I);
	static const char *const whole[] = {"embeddings.position_embeddings.weight",
	                                    "embeddings.token_type_embeddings.weight",
	                                    "embeddings.LayerNorm.weight",
	                                    "embeddings.LayerNorm.bias",
	                                    L1 "attention.output.dense.bias",
	                                    L1 "attention.output.LayerNorm.weight",
	                                    L1 "output.dense.bias",
	                                    L1 "output.LayerNorm.bias"};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++)
		repl(f, r, whole[k]);
	shp(f, r, "embeddings.position_embeddings.weight", 2, POS, HID, 0);
	/* vocabulary rows [r*vl, (r+1)*vl) of the padded 128, rows >= 100 zero */
	const char *we = "embeddings.word_embeddings.weight";
	shp(f, r, we, 2, vl, HID, 0);
	int64_t real = V - (int64_t)r * vl < vl ? V - (int64_t)r * vl : vl;
	if (real > 0)
		rows_at(f, r, we, 0, we, r * vl, real);
	for (int64_t row = real < 0 ? 0 : real; row < vl; row++)
		for (int64_t h = 0; h < HID * 2; h++)
			assert_int_equal(out_bytes(f, r, we)[row * HID * 2 + h], 0);
	assert_int_equal(info(f, r, L1 "output.dense.weight")->dtype, WT_BF16);
	/* 5 embeddings tensors, 12 per layer */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 5 + 2 * 12);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, rb_model("", 2, POS, false), cfg_rb, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		assert_false(shardmap_tied_lm_head(f.p));
		fx_close(&f);
	}
}

/* The roberta.-prefixed layout (with the pooler, the position_ids buffer and an MLM head, all
 * skipped) gives the unprefixed layout's ranks byte for byte; so does XLMRobertaModel. */
static void test_layouts(void **state)
{
	(void)state;
	fx a, b, x;
	fx_open(&a, rb_model("", 2, POS, false), cfg_rb, 2, 1, 0, true);
	fx_open(&b, rb_model("roberta.", 2, POS, true), cfg_rb, 2, 1, 0, true);
	fx_open(&x, rb_model("", 2, POS, true), cfg_xlm, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_same_rank(&a, &b, r, NULL);
		fx_same_rank(&a, &x, r, NULL);
	}
	static const char *const skipped[] = {"lm_head.bias",
	                                      "lm_head.dense.bias",
	                                      "lm_head.dense.weight",
	                                      "lm_head.layer_norm.bias",
	                                      "lm_head.layer_norm.weight",
	                                      "roberta.embeddings.position_ids",
	                                      "roberta.pooler.dense.bias",
	                                      "roberta.pooler.dense.weight"};
	size_t ns = sizeof(skipped) / sizeof(skipped[0]);
	assert_int_equal(shardmap_n_skipped(b.p), ns);
	for (size_t k = 0; k < ns; k++) {
		bool found = false;
		for (size_t j = 0; j < ns; j++)
			found = found || strcmp(shardmap_skipped(b.p, j), skipped[k]) == 0;
		if (!found)
			fail_msg("'%s' not skipped", skipped[k]);
	}
	assert_int_equal(shardmap_n_skipped(x.p), ns);
	fx_close(&a);
	fx_close(&b);
	fx_close(&x);
}

/* int8-channel TP 2: the four Linears quantized (intermediate.dense's codes checked row by
 * row); embeddings, LayerNorms and biases kept BF16 without scales. fp8-channel TP 4: the
 * same split. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, rb_model("roberta.", 2, POS, true), cfg_rb, &l, true);
	static const char *const keep[] = {
	    "embeddings.word_embeddings.weight",       "embeddings.position_embeddings.weight",
	    "embeddings.token_type_embeddings.weight", L1 "attention.output.LayerNorm.weight",
	    L1 "attention.self.qkv_proj.bias",         L1 "intermediate.dense.bias"};
	static const char *const q8[] = {L1 "attention.self.qkv_proj.weight",
	                                 L1 "attention.output.dense.weight",
	                                 L1 "intermediate.dense.weight", L1 "output.dense.weight"};
	size_t nk = sizeof(keep) / sizeof(keep[0]), nq = sizeof(q8) / sizeof(q8[0]);
	fx_quant_split(&f, 1, WT_BF16, keep, nk, q8, nq);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, L1 "intermediate.dense.weight");
	const float *sc = (const float *)out_bytes(&f, 1, L1 "intermediate.dense.weight_scale");
	size_t rb;
	const uint16_t *x =
	    (const uint16_t *)src_rows(&f, "roberta." L1 "intermediate.dense.weight", I / 2, &rb);
	for (int64_t row = 0; row < I / 2; row++)
		int8_row_is(q + row * HID, sc[row], x + row * HID, HID);
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, rb_model("", 2, POS, false), cfg_xlm, &l, true);
	for (size_t k = 0; k < nk; k++)
		assert_int_equal(info(&f, 3, keep[k])->dtype, WT_BF16);
	for (size_t k = 0; k < nq; k++)
		assert_int_equal(info(&f, 3, q8[k])->dtype, WT_F8_E4M3);
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(rb_model("", 2, POS, true), cfg_rb, 8, lays, 4);
	coverage(rb_model("roberta.", 2, POS, true), cfg_xlm, 8, lays, 4);
}

/* RobertaConfig's / XLMRobertaConfig's defaults (transformers 4.57.1): roberta-base's dims,
 * 50265 / 30522 tokens, 512 positions, 2 token types, pad_token_id 1, absolute positions. */
static void test_defaults(void **state)
{
	(void)state;
	static const char *const js[] = {
	    "{\"architectures\":[\"RobertaModel\"],\"model_type\":\"roberta\"}",
	    "{\"architectures\":[\"XLMRobertaModel\"],\"model_type\":\"xlm-roberta\"}"};
	for (int k = 0; k < 2; k++) {
		ckpt_config c;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(js[k], strlen(js[k]), &c, &err), WT_OK);
		assert_true(c.hidden_size == 768 && c.num_attention_heads == 12 &&
		            c.num_key_value_heads == 12 && c.intermediate_size == 3072 &&
		            c.num_hidden_layers == 12 && c.vocab_size == (k ? 30522 : 50265));
		assert_true(c.rob_max_pos == 512 && c.rob_types == 2 && c.rob_pad == 1 &&
		            c.rob_abs_pos && !c.rob_decoder);
		ckpt_config_clear(&c);
	}
	/* BERT reads none of them */
	static const char bert[] =
	    "{\"architectures\":[\"BertModel\"],\"model_type\":\"bert\"," CFG_KEYS
	    ",\"pad_token_id\":0}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(bert, strlen(bert), &c, &err), WT_OK);
	assert_true(c.rob_max_pos == -1 && c.rob_pad == -1);
	ckpt_config_clear(&c);
	/* the defaults decide the tables' rows: 512 positions, 2 token types */
	fx_refused(rb_model("", 2, POS, false),
	           CFG("RobertaModel", "roberta", ",\"type_vocab_size\":1"), WT_ESHAPE,
	           "embeddings.position_embeddings.weight", "");
	fx_refused(rb_model("", 2, POS, false),
	           CFG("RobertaModel", "roberta", ",\"max_position_embeddings\":20"), WT_ESHAPE,
	           "embeddings.token_type_embeddings.weight", "");
	/* pad_token_id left out is 1: 20 rows hold positions 2..19 */
	fx f;
	fx_open(
	    &f, rb_model("", 2, POS, false),
	    CFG("RobertaModel", "roberta", ",\"max_position_embeddings\":20,\"type_vocab_size\":1"),
	    2, 1, 0, false);
	fx_close(&f);
	/* without architectures, model_type finds the family ('-' for the name's '_') */
	assert_string_equal(shardmap_family_find(NULL, "xlm-roberta")->name, "xlm_roberta");
	assert_string_equal(shardmap_family_find("", "roberta")->name, "roberta");
	assert_null(shardmap_family_find(NULL, "xlm-roberta-xl"));
	assert_null(shardmap_family_find(NULL, "xlm-"));
}

static void test_errors(void **state)
{
	(void)state;
	fx_refused(rb_model("", 2, POS, false),
	           CFG("RobertaModel", "roberta",
	               POS_KEYS ",\"position_embedding_type\":\"relative_key\""),
	           WT_EUNSUPPORTED, "position_embedding_type", "absolute");
	fx_refused(rb_model("", 2, POS, false),
	           CFG("XLMRobertaModel", "xlm-roberta", POS_KEYS ",\"position_embedding_type\":3"),
	           WT_ECORRUPT, "position_embedding_type", "not a string");
	fx_refused(rb_model("", 2, POS, false),
	           CFG("RobertaModel", "roberta", POS_KEYS ",\"is_decoder\":true"), WT_EUNSUPPORTED,
	           "is_decoder", "false");
	fx_refused(rb_model("", 2, POS, false),
	           CFG("RobertaModel", "roberta",
	               ",\"max_position_embeddings\":20,\"type_vocab_size\":1,\"pad_token_id\":19"),
	           WT_ECORRUPT, "pad_token_id 19", "max_position_embeddings 20");
	/* the largest JSON integer: refused by the loader (past 2^40); the largest it takes is
	 * refused by the planner without computing pad_token_id + 1 */
	fx_refused(rb_model("", 2, POS, false),
	           CFG("RobertaModel", "roberta",
	               ",\"max_position_embeddings\":20,\"type_vocab_size\":1,"
	               "\"pad_token_id\":9223372036854775807"),
	           WT_ECORRUPT, "pad_token_id 9223372036854775807", "past 2^40");
	fx_refused(rb_model("", 2, POS, false),
	           CFG("RobertaModel", "roberta",
	               ",\"max_position_embeddings\":20,\"type_vocab_size\":1,"
	               "\"pad_token_id\":1099511627776"),
	           WT_ECORRUPT, "pad_token_id 1099511627776", "max_position_embeddings 20");
	fx_refused(
	    rb_model("", 2, 120, false),
	    CFG("RobertaModel", "roberta",
	        ",\"max_position_embeddings\":120,\"type_vocab_size\":1,\"pad_token_id\":100"),
	    WT_ECORRUPT, "pad_token_id 100", "vocab_size 100");
	fx_refused(rb_model("", 2, POS, false),
	           CFG("RobertaModel", "roberta",
	               ",\"max_position_embeddings\":20,\"type_vocab_size\":1,\"pad_token_id\":-1"),
	           WT_ECORRUPT, "pad_token_id", ">= 0");
	/* table rows other than config.json's */
	fx_refused(rb_model("", 2, POS + 1, false), cfg_rb, WT_ESHAPE,
	           "embeddings.position_embeddings.weight", "");
	tm_model *m = rb_model("", 2, POS, false);
	tm_remove(m, "embeddings.token_type_embeddings.weight");
	tm_add2(m, "embeddings.token_type_embeddings.weight", 2, HID);
	fx_refused(m, cfg_xlm, WT_ESHAPE, "embeddings.token_type_embeddings.weight", "");
	/* missing, past num_hidden_layers, unknown (cross-attention), two layouts mixed */
	m = rb_model("roberta.", 2, POS, true);
	tm_remove(m, "roberta." L1 "output.dense.bias");
	fx_refused(m, cfg_rb, WT_ENOTFOUND, "roberta." L1 "output.dense.bias", "");
	fx_refused(rb_model("", 3, POS, false), cfg_rb, WT_ESHAPE, "layer 2", "num_hidden_layers");
	m = rb_model("", 2, POS, false);
	tm_add2(m, "encoder.layer.0.crossattention.self.query.weight", HID, HID);
	fx_refused(m, cfg_rb, WT_EUNSUPPORTED, "crossattention", "unknown tensor");
	m = rb_model("roberta.", 2, POS, false);
	tm_add2(m, "embeddings.LayerNorm.weight", HID, 0);
	fx_refused(m, cfg_xlm, WT_EUNSUPPORTED, "mixes two name layouts", "roberta.");
	/* heads: 8 do not split 16 ways */
	fx_refused_tp(rb_model("", 2, POS, false), cfg_rb, 16, WT_ELAYOUT, "tp_size 16",
	              "num_attention_heads 8");
}

/* RobertaForMaskedLM (FacebookAI/roberta-base's layout: the encoder under roberta., no pooler,
 * the MLM head lm_head.dense / layer_norm / bias and, where a converted checkpoint keeps the
 * tied copy, lm_head.decoder.*): vLLM's registry maps it onto RobertaEmbeddingModel, which
 * skips lm_head.*. Every rank byte for byte RobertaModel's, the head dropped and listed. */
static const char cfg_mlm[] = CFG("RobertaForMaskedLM", "roberta", POS_KEYS);

static tm_model *mlm_model(void)
{
	tm_model *m = rb_model("roberta.", 2, POS, true);
	tm_add2(m, "lm_head.decoder.weight", V, HID);
	tm_add2(m, "lm_head.decoder.bias", V, 0);
	return m;
}

static void test_mlm_slices(void **state)
{
	(void)state;
	const sm_family *fam = shardmap_family_find("RobertaForMaskedLM", "roberta");
	assert_non_null(fam);
	assert_string_equal(fam->name, "roberta");
	/* vLLM registers neither XLM-RoBERTa's nor BERT's masked LM */
	assert_null(shardmap_family_find("XLMRobertaForMaskedLM", "xlm-roberta"));
	assert_null(shardmap_family_find("BertForMaskedLM", "bert"));
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx a, b;
		fx_open(&a, rb_model("", 2, POS, false), cfg_rb, tps[i], 1, 0, true);
		fx_open(&b, mlm_model(), cfg_mlm, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++) {
			check_rank(&a, tps[i], r);
			fx_same_rank(&a, &b, r, NULL);
		}
		static const char *const skipped[] = {"lm_head.bias",
		                                      "lm_head.decoder.bias",
		                                      "lm_head.decoder.weight",
		                                      "lm_head.dense.bias",
		                                      "lm_head.dense.weight",
		                                      "lm_head.layer_norm.bias",
		                                      "lm_head.layer_norm.weight",
		                                      "roberta.embeddings.position_ids",
		                                      "roberta.pooler.dense.bias",
		                                      "roberta.pooler.dense.weight"};
		size_t ns = sizeof(skipped) / sizeof(skipped[0]);
		assert_int_equal(shardmap_n_skipped(b.p), ns);
		for (size_t k = 0; k < ns; k++) {
			bool found = false;
			for (size_t j = 0; j < ns; j++)
				found = found || strcmp(shardmap_skipped(b.p, j), skipped[k]) == 0;
			if (!found)
				fail_msg("'%s' not skipped", skipped[k]);
		}
		assert_false(shardmap_tied_lm_head(b.p));
		fx_close(&a);
		fx_close(&b);
	}
}

/* int8-channel TP 2 and fp8-channel TP 4: the MLM layout's ranks byte for byte (codes and
 * scales) RobertaModel's; coverage TP 1/2/4/8. */
static void test_mlm_quant(void **state)
{
	(void)state;
	static const wt_quant qs[] = {WT_QUANT_INT8_CHANNEL, WT_QUANT_FP8_CHANNEL};
	for (int k = 0; k < 2; k++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = k ? 4 : 2;
		l.quant = qs[k];
		fx a, b;
		fx_open_l(&a, rb_model("", 2, POS, false), cfg_rb, &l, true);
		fx_open_l(&b, mlm_model(), cfg_mlm, &l, true);
		for (uint32_t r = 0; r < l.tp_size; r++)
			fx_same_rank(&a, &b, r, NULL);
		assert_int_equal(info(&b, 1, L1 "output.dense.weight")->dtype,
		                 k ? WT_F8_E4M3 : WT_I8);
		fx_close(&a);
		fx_close(&b);
	}
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(mlm_model(), cfg_mlm, 8, lays, 4);
}

/* RobertaModel's refusals under the masked LM's name (rotary positions: vLLM builds Jina's
 * model for them; is_decoder; pad_token_id past the positions), and a missing encoder tensor. */
static void test_mlm_errors(void **state)
{
	(void)state;
	fx_refused(mlm_model(),
	           CFG("RobertaForMaskedLM", "roberta",
	               POS_KEYS ",\"position_embedding_type\":\"rotary\""),
	           WT_EUNSUPPORTED, "position_embedding_type", "absolute");
	fx_refused(mlm_model(),
	           CFG("RobertaForMaskedLM", "roberta", POS_KEYS ",\"is_decoder\":true"),
	           WT_EUNSUPPORTED, "is_decoder", "false");
	fx_refused(mlm_model(),
	           CFG("RobertaForMaskedLM", "roberta",
	               ",\"max_position_embeddings\":20,\"type_vocab_size\":1,\"pad_token_id\":19"),
	           WT_ECORRUPT, "pad_token_id 19", "max_position_embeddings 20");
	tm_model *m = mlm_model();
	tm_remove(m, "roberta." L1 "intermediate.dense.weight");
	fx_refused(m, cfg_mlm, WT_ENOTFOUND, "intermediate.dense.weight", "");
}
/* ---- sequence classifiers ---- */

#define CLS_CFG(arch, rest)                                                                        \
	CFG(arch, "xlm-roberta", POS_KEYS ",\"id2label\":{\"0\":\"LABEL_0\"}" rest)
static const char cfg_cls[] = CLS_CFG("XLMRobertaForSequenceClassification", "");

/* The encoder under roberta. (no pooler: the class builds none; `pooler` adds one, skipped),
 * then the head with `labels` outputs. */
static tm_model *cls_model(int labels, bool pooler)
{
	tm_model *m = rb_model("roberta.", 2, POS, false);
	if (pooler) {
		tm_add2(m, "roberta.pooler.dense.weight", HID, HID);
		tm_add2(m, "roberta.pooler.dense.bias", HID, 0);
	}
	tm_add2(m, "classifier.dense.weight", HID, HID);
	tm_add2(m, "classifier.dense.bias", HID, 0);
	tm_add2(m, "classifier.out_proj.weight", labels, HID);
	tm_add2(m, "classifier.out_proj.bias", labels, 0);
	return m;
}

static const char *const cls_head[] = {"classifier.dense.weight", "classifier.dense.bias",
                                       "classifier.out_proj.weight", "classifier.out_proj.bias"};

/* TP 2 and 4: the encoder's ranks are RobertaModel's under roberta.; the head whole. */
static void test_cls_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx c, b;
		fx_open(&c, cls_model(1, true), cfg_cls, tps[i], 1, 0, true);
		fx_open(&b, rb_model("", 2, POS, false), cfg_xlm, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++) {
			fx_same_rank(&c, &b, r, "roberta.");
			for (size_t k = 0; k < 4; k++)
				repl(&c, r, cls_head[k]);
			shp(&c, r, "classifier.out_proj.weight", 2, 1, HID, 0);
			assert_int_equal(shardmap_rank_n_tensors(c.p, r), 5 + 2 * 12 + 4);
		}
		assert_int_equal(shardmap_n_skipped(c.p), 2); /* roberta.pooler.dense.* */
		fx_close(&c);
		fx_close(&b);
	}
}

/* int8-channel TP 2: the encoder's Linears quantized, the head kept BF16 without scales. */
static void test_cls_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, cls_model(3, false),
	          CFG("RobertaForSequenceClassification", "roberta",
	              POS_KEYS ",\"id2label\":{\"0\":\"a\",\"1\":\"b\",\"2\":\"c\"}"),
	          &l, true);
	static const char *const q8[] = {"roberta." L1 "attention.self.qkv_proj.weight",
	                                 "roberta." L1 "output.dense.weight"};
	fx_quant_split(&f, 1, WT_BF16, cls_head, 4, q8, 2);
	repl(&f, 1, "classifier.out_proj.weight");
	shp(&f, 1, "classifier.out_proj.weight", 2, 3, HID, 0);
	fx_close(&f);
}

static void test_cls_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(cls_model(1, true), cfg_cls, 8, lays, 4);
}

/* num_labels: id2label's entries, else num_labels, else PretrainedConfig's 2. */
static void test_cls_labels(void **state)
{
	(void)state;
	static const char *const js[] = {
	    "{\"architectures\":[\"XLMRobertaForSequenceClassification\"],\"model_type\":"
	    "\"xlm-roberta\",\"id2label\":{\"0\":\"LABEL_0\"},\"num_labels\":5}",
	    "{\"architectures\":[\"XLMRobertaForSequenceClassification\"],\"model_type\":"
	    "\"xlm-roberta\",\"num_labels\":5}",
	    "{\"architectures\":[\"RobertaForSequenceClassification\"],\"model_type\":"
	    "\"roberta\"}"};
	static const int64_t want[] = {1, 5, 2};
	for (int k = 0; k < 3; k++) {
		ckpt_config c;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(js[k], strlen(js[k]), &c, &err), WT_OK);
		assert_int_equal(c.rob_num_labels, want[k]);
		ckpt_config_clear(&c);
	}
	fx f; /* two labels by default */
	fx_open(&f, cls_model(2, false),
	        CFG("XLMRobertaForSequenceClassification", "xlm-roberta", POS_KEYS), 2, 1, 0,
	        false);
	fx_close(&f);
}

static void test_cls_errors(void **state)
{
	(void)state;
	/* out_proj's rows other than num_labels, the head missing, id2label empty / not an object
	 */
	fx_refused(cls_model(2, false), cfg_cls, WT_ESHAPE, "classifier.out_proj.", "implies [1");
	tm_model *m = cls_model(1, false);
	tm_remove(m, "classifier.dense.bias");
	fx_refused(m, cfg_cls, WT_ENOTFOUND, "classifier.dense.bias", "");
	fx_refused(
	    cls_model(1, false),
	    CFG("XLMRobertaForSequenceClassification", "xlm-roberta", POS_KEYS ",\"id2label\":{}"),
	    WT_ECORRUPT, "id2label is empty", "num_labels");
	fx_refused(
	    cls_model(1, false),
	    CFG("XLMRobertaForSequenceClassification", "xlm-roberta", POS_KEYS ",\"id2label\":[1]"),
	    WT_ECORRUPT, "id2label", "not an object");
	/* the encoder without roberta. (vLLM's loader has no module for it), an MLM head */
	m = rb_model("", 2, POS, false);
	tm_add2(m, "classifier.dense.weight", HID, HID);
	fx_refused(m, cfg_cls, WT_EUNSUPPORTED, "unknown tensor", "xlm_roberta_cls");
	m = cls_model(1, false);
	tm_add2(m, "lm_head.bias", V, 0);
	fx_refused(m, cfg_cls, WT_EUNSUPPORTED, "lm_head.bias", "unknown tensor");
	/* RobertaModel's refusals hold */
	fx_refused(cls_model(1, false),
	           CLS_CFG("XLMRobertaForSequenceClassification", ",\"is_decoder\":true"),
	           WT_EUNSUPPORTED, "is_decoder", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices),  cmocka_unit_test(test_layouts),
	    cmocka_unit_test(test_quant),        cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_defaults),     cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_cls_slices),   cmocka_unit_test(test_cls_quant),
	    cmocka_unit_test(test_cls_coverage), cmocka_unit_test(test_cls_labels),
	    cmocka_unit_test(test_cls_errors),   cmocka_unit_test(test_mlm_slices),
	    cmocka_unit_test(test_mlm_quant),    cmocka_unit_test(test_mlm_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
