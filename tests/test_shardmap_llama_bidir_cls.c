/*
 * test_shardmap_llama_bidir_cls.c — LlamaBidirectionalForSequenceClassification (model_type
 * llama_bidirec, remote code: nvidia/llama-nemotron-rerank-1b-v2) cut as vLLM's llama.py class
 * of that name (as_seq_cls_model(LlamaForCausalLM)) loads it: llama_cls's table, the decoder
 * under model. with q/k/v fused by heads into qkv_proj, o_proj / down_proj by columns,
 * gate_up_proj rows, the vocabulary rows, norms whole; score.weight [num_labels, hid] whole on
 * every rank and quantized with the Linears (vLLM's ReplicatedLinear); no lm_head (a stray one
 * skipped). Each rank is LlamaBidirectionalModel's (llama_bidir_emb) under model., plus score;
 * int8 / fp8; coverage at TP 1, 2, 4, 8; num_labels and LlamaBidirectionalConfig's pooling;
 * the refusals. Seed fixed.
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

#define SEED 0xb1dcull
#include "test_shardmap_fx.h"

/* hid 256, H 8, KV 2, head_dim 32, I 512, V 1000 (1024 padded), 2 layers */
#define HID 256
#define I   512
#define D   32
#define KEYS(rest)                                                                                 \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":2" rest
#define BIDIR(arch, rest)                                                                          \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"llama_bidirec\"," rest "}"
#define CLS_ARCH   "LlamaBidirectionalForSequenceClassification"
#define CCFG(rest) BIDIR(CLS_ARCH, KEYS(",\"pooling\":\"avg\",\"tie_word_embeddings\":true" rest))
#define BCFG                                                                                       \
	BIDIR("LlamaBidirectionalModel", KEYS(",\"pooling\":\"avg\",\"tie_word_embeddings\":"      \
	                                      "true"))
#define LABEL1 ",\"id2label\":{\"0\":\"LABEL_0\"}"
#define L1     "model.layers.1."

/* Llama's decoder under model. (the base names when base), then score.weight [labels, hid] when
 * labels > 0, lm_head when lm (both last, so the decoder's values do not move). */
static tm_model *cls_model(int labels, bool lm, bool base)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 0);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, D, HID, 0, 0);
		tm_mlp(m, i, "mlp.", I, HID);
	}
	if (base)
		for (size_t i = 0; i < m->n; i++)
			if (strncmp(m->name[i], "model.", 6) == 0)
				memmove(m->name[i], m->name[i] + 6, strlen(m->name[i] + 6) + 1);
	if (labels > 0)
		tm_add2(m, "score.weight", labels, HID);
	if (lm)
		tm_add2(m, "lm_head.weight", 1000, HID);
	return m;
}

/* TP 2 and 4 by hand through the shared helpers (kv heads replicated at TP 4), score whole;
 * each rank LlamaBidirectionalModel's under model. plus score. */
static void test_bidir_cls_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx c, e;
		fx_open(&c, cls_model(1, false, false), CCFG(LABEL1), T, 1, 0, true);
		fx_open(&e, cls_model(0, false, true), BCFG, T, 1, 0, true);
		assert_string_equal(shardmap_family(c.p), "llama_bidir_cls");
		for (uint32_t r = 0; r < T; r++) {
			fx_attn_is(&c, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, D, HID);
			fx_mlp_is(&c, r, T, L1 "mlp.", I, HID);
			fx_vocab_is(&c, r, T, "model.embed_tokens.weight", 1000, 1024, HID);
			repl(&c, r, "score.weight");
			shp(&c, r, "score.weight", 2, 1, HID, 0);
			repl(&c, r, "model.norm.weight");
			repl(&c, r, L1 "input_layernorm.weight");
			/* 2 layers x 6, embed_tokens, norm, score */
			assert_int_equal(shardmap_rank_n_tensors(c.p, r), 2 * 6 + 3);
			fx_same_rank(&c, &e, r, "model.");
		}
		assert_int_equal(shardmap_n_skipped(c.p), 0);
		fx_close(&c);
		fx_close(&e);
	}
}

/* A stray lm_head.weight is skipped and listed (vLLM drops every lm_head.*), the ranks
 * unchanged; the architecture names its family. */
static void test_bidir_cls_layouts(void **state)
{
	(void)state;
	fx a, b;
	fx_open(&a, cls_model(1, false, false), CCFG(LABEL1), 2, 1, 0, true);
	fx_open(&b, cls_model(1, true, false), CCFG(LABEL1), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	assert_true(fx_skipped(&b, "lm_head.weight"));
	assert_int_equal(shardmap_n_skipped(b.p), 1);
	fx_close(&a);
	fx_close(&b);
	assert_string_equal(shardmap_family_find(CLS_ARCH, NULL)->name, "llama_bidir_cls");
}

/* int8-channel TP 2: score's codes row by row whole on both ranks, o_proj's by columns, q/k/v
 * by heads; embed_tokens and norms BF16. fp8-channel TP 4: the same split. */
static void test_bidir_cls_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, cls_model(3, false, false), CCFG(",\"num_labels\":3"), &l, true);
	static const char *const keep[] = {"model.embed_tokens.weight", "model.norm.weight",
	                                   L1 "input_layernorm.weight"};
	static const char *const q8[] = {"score.weight", L1 "self_attn.qkv_proj.weight",
	                                 L1 "self_attn.o_proj.weight", L1 "mlp.down_proj.weight"};
	for (uint32_t r = 0; r < 2; r++) {
		fx_quant_split(&f, r, WT_BF16, keep, 3, q8, 4);
		shp(&f, r, "score.weight", 2, 3, HID, 0);
		const int8_t *q = (const int8_t *)out_bytes(&f, r, "score.weight");
		const float *sc = (const float *)out_bytes(&f, r, "score.weight_scale");
		size_t rb;
		const uint16_t *x = (const uint16_t *)src_rows(&f, "score.weight", 0, &rb);
		for (int64_t row = 0; row < 3; row++)
			int8_row_is(q + row * HID, sc[row], x + row * HID, HID);
		fx_cols_int8_is(&f, r, 2, L1 "self_attn.o_proj.weight", HID, 8 * D);
		fx_qkv_int8_is(&f, r, 2, L1 "self_attn.qkv_proj.weight",
		               L1 "self_attn.q_proj.weight", L1 "self_attn.k_proj.weight",
		               L1 "self_attn.v_proj.weight", 8, 2, D, HID);
	}
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, cls_model(1, false, false), CCFG(LABEL1), &l, true);
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(info(&f, r, "score.weight")->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, L1 "mlp.gate_up_proj.weight")->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, L1 "self_attn.qkv_proj.weight")->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, "model.embed_tokens.weight")->dtype, WT_BF16);
		assert_int_equal(info(&f, r, "model.norm.weight")->dtype, WT_BF16);
	}
	fx_close(&f);
}

static void test_bidir_cls_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(cls_model(1, true, false), CCFG(LABEL1), 2, lays, 4);
}

/* LlamaBidirectionalConfig's defaults (LlamaConfig's) with num_labels as the classifiers read
 * it (id2label, else num_labels, else 2); pooling absent / cls / last read. */
static void test_bidir_cls_defaults(void **state)
{
	(void)state;
	static const char bare[] = BIDIR(CLS_ARCH, "\"pooling\":\"avg\"");
	ckpt_config a;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(bare, strlen(bare), &a, &err), WT_OK);
	assert_int_equal(a.vocab_size, 32000);
	assert_int_equal(a.hidden_size, 4096);
	assert_int_equal(a.num_key_value_heads, 32);
	assert_int_equal(a.rob_num_labels, 2);
	ckpt_config_clear(&a);
	static const struct {
		const char *js;
		int64_t labels;
	} ok[] = {{BIDIR(CLS_ARCH, KEYS(LABEL1)), 1},
	          {BIDIR(CLS_ARCH, KEYS(",\"pooling\":\"cls\",\"num_labels\":4")), 4},
	          {BIDIR(CLS_ARCH, KEYS(",\"pooling\":\"last\"" LABEL1)), 1}};
	for (size_t k = 0; k < 3; k++) {
		assert_int_equal(ckpt_config_parse(ok[k].js, strlen(ok[k].js), &a, &err), WT_OK);
		assert_int_equal(a.rob_num_labels, ok[k].labels);
		assert_int_equal(a.num_key_value_heads, 2);
		ckpt_config_clear(&a);
	}
}

static void test_bidir_cls_errors(void **state)
{
	(void)state;
	/* pooling other than avg / cls / last: vLLM's LlamaBidirectionalConfig raises */
	fx_refused(cls_model(1, false, false),
	           BIDIR(CLS_ARCH, KEYS(LABEL1 ",\"pooling\":\"mean\"")), WT_EUNSUPPORTED,
	           "pooling", "\"avg\", \"cls\", \"last\"");
	/* vLLM's online conversion keys (as_seq_cls_model reads them): refused as llama_cls */
	fx_refused(cls_model(1, false, false),
	           CCFG(LABEL1 ",\"classifier_from_token\":[\"no\",\"yes\"]"), WT_EUNSUPPORTED,
	           "classifier_from_token", "score.weight");
	/* score's rows other than num_labels, score missing, a score bias, the base model's names
	 * (LlamaForCausalLM's loader has no model. mapping: only the embedding model reads them) */
	fx_refused(cls_model(2, false, false), CCFG(LABEL1), WT_ESHAPE, "score.weight",
	           "implies [1");
	fx_refused(cls_model(0, false, false), CCFG(LABEL1), WT_ENOTFOUND, "score.weight", "");
	tm_model *m = cls_model(1, false, false);
	tm_add2(m, "score.bias", 1, 0);
	fx_refused(m, CCFG(LABEL1), WT_EUNSUPPORTED, "score.bias", "unknown tensor");
	fx_refused(cls_model(1, false, true), CCFG(LABEL1), WT_EUNSUPPORTED,
	           "'embed_tokens.weight'", "unknown tensor");
	fx_refused(cls_model(1, false, false), CCFG(",\"id2label\":{}"), WT_ECORRUPT,
	           "id2label is empty", "num_labels");
	fx_refused_tp(cls_model(1, false, false), CCFG(LABEL1), 16, WT_ELAYOUT, "tp_size 16",
	              "num_attention_heads 8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bidir_cls_slices),   cmocka_unit_test(test_bidir_cls_layouts),
	    cmocka_unit_test(test_bidir_cls_quant),    cmocka_unit_test(test_bidir_cls_coverage),
	    cmocka_unit_test(test_bidir_cls_defaults), cmocka_unit_test(test_bidir_cls_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
