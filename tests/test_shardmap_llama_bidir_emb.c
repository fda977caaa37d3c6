/*
 * test_shardmap_llama_bidir_emb.c — LlamaBidirectionalModel (model_type llama_bidirec, remote
 * code: nvidia/llama-nemotron-embed-1b-v2, llama-embed-nemotron-8b) cut as vLLM's llama.py
 * LlamaBidirectionalModel (as_embedding_model(LlamaForCausalLM)) loads it: the decoder under the
 * base model's names (embed_tokens, layers.{i}.*, norm), q/k/v fused by heads into qkv_proj,
 * o_proj / down_proj by columns, gate_up_proj rows, the vocabulary rows, norms whole; byte for
 * byte LlamaForCausalLM's under model.; no lm_head (a stray one skipped), the model.-prefixed
 * layout read the same (vLLM's WeightsMapper model. -> ''); int8 / fp8 of the Linears alone;
 * coverage at TP 1, 2, 4, 8; LlamaBidirectionalConfig's defaults (LlamaConfig's); the pooling
 * key vLLM's LlamaBidirectionalConfig maps (avg / cls / last, any other refused). Seed fixed.
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

#define SEED 0xb1d1ull
#include "test_shardmap_fx.h"

/* hid 256, H 8, KV 2, head_dim 32, I 512, V 1000 (1024 padded), 2 layers */
#define HID 256
#define I   512
#define D   32
#define KEYS(rest)                                                                                 \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":2" rest
#define BIDIR(rest)                                                                                \
	"{\"architectures\":[\"LlamaBidirectionalModel\"],\"model_type\":\"llama_bidirec\"," rest  \
	"}"
#define BCFG BIDIR(KEYS(",\"pooling\":\"avg\",\"temperature\":1.0,\"tie_word_embeddings\":true"))
#define LMCFG                                                                                      \
	"{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\"," KEYS(                \
	    ",\"tie_word_embeddings\":true") "}"
#define L1 "layers.1."

/* Every name of m without its model. prefix (the values stay: they follow the order). */
static void strip_model(tm_model *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (strncmp(m->name[i], "model.", 6) == 0)
			memmove(m->name[i], m->name[i] + 6, strlen(m->name[i] + 6) + 1);
}

/* Llama's decoder under model. when prefixed, else the base model's names; lm_head last when lm
 * (so the decoder's values are the same with and without it). */
static tm_model *bidir_model(bool prefixed, bool lm)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 0);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, D, HID, 0, 0);
		tm_mlp(m, i, "mlp.", I, HID);
	}
	if (!prefixed)
		strip_model(m);
	if (lm)
		tm_add2(m, "lm_head.weight", 1000, HID);
	return m;
}

/* TP 2 and 4 by hand through the shared helpers: q heads r*8/T.., kv head(s) of the rank
 * (replicated at TP 4), o_proj / down_proj columns, gate / up rows, the vocabulary rows with
 * the padded tail; norms whole; and each rank LlamaForCausalLM's (tied) minus model. */
static void test_bidir_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx e, b;
		fx_open(&e, bidir_model(false, false), BCFG, T, 1, 0, true);
		fx_open(&b, bidir_model(true, false), LMCFG, T, 1, 0, true);
		assert_string_equal(shardmap_family(e.p), "llama_bidir_emb");
		for (uint32_t r = 0; r < T; r++) {
			fx_attn_is(&e, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, D, HID);
			fx_mlp_is(&e, r, T, L1 "mlp.", I, HID);
			fx_vocab_is(&e, r, T, "embed_tokens.weight", 1000, 1024, HID);
			repl(&e, r, "norm.weight");
			repl(&e, r, L1 "input_layernorm.weight");
			repl(&e, r, L1 "post_attention_layernorm.weight");
			/* 2 layers x 6 (2 norms, qkv, o, gate_up, down), embed_tokens, norm */
			assert_int_equal(shardmap_rank_n_tensors(e.p, r), 2 * 6 + 2);
			fx_same_rank(&b, &e, r, "model.");
		}
		assert_int_equal(shardmap_n_skipped(e.p), 0);
		fx_close(&e);
		fx_close(&b);
	}
}

/* The model.-prefixed layout gives the same runtime names and bytes; a stray lm_head.weight is
 * skipped and listed in either layout; the architecture names its family. */
static void test_bidir_layouts(void **state)
{
	(void)state;
	fx a, b, c;
	fx_open(&a, bidir_model(false, false), BCFG, 2, 1, 0, true);
	fx_open(&b, bidir_model(true, true), BCFG, 2, 1, 0, true);
	fx_open(&c, bidir_model(false, true), BCFG, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_same_rank(&a, &b, r, NULL);
		fx_same_rank(&a, &c, r, NULL);
	}
	assert_true(fx_skipped(&b, "lm_head.weight") && fx_skipped(&c, "lm_head.weight"));
	assert_int_equal(shardmap_n_skipped(b.p), 1);
	assert_int_equal(tm_ix(b.p, 0, "model.norm.weight"), -1);
	fx_close(&a);
	fx_close(&b);
	fx_close(&c);
	assert_string_equal(shardmap_family_find("LlamaBidirectionalModel", NULL)->name,
	                    "llama_bidir_emb");
}

/* int8-channel TP 2: the Linears quantized (o_proj's codes column by column on both ranks),
 * embed_tokens and norms kept BF16. fp8-channel TP 4 of the model. layout: the same split. */
static void test_bidir_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, bidir_model(false, false), BCFG, &l, true);
	static const char *const keep[] = {"embed_tokens.weight", "norm.weight",
	                                   L1 "input_layernorm.weight"};
	static const char *const q8[] = {L1 "self_attn.qkv_proj.weight",
	                                 L1 "self_attn.o_proj.weight", L1 "mlp.gate_up_proj.weight",
	                                 L1 "mlp.down_proj.weight"};
	for (uint32_t r = 0; r < 2; r++) {
		fx_quant_split(&f, r, WT_BF16, keep, 3, q8, 4);
		fx_cols_int8_is(&f, r, 2, L1 "self_attn.o_proj.weight", HID, 8 * D);
		fx_qkv_int8_is(&f, r, 2, L1 "self_attn.qkv_proj.weight",
		               L1 "self_attn.q_proj.weight", L1 "self_attn.k_proj.weight",
		               L1 "self_attn.v_proj.weight", 8, 2, D, HID);
	}
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, bidir_model(true, false), BCFG, &l, true);
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(info(&f, r, L1 "mlp.gate_up_proj.weight")->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, L1 "self_attn.qkv_proj.weight")->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, L1 "mlp.down_proj.weight")->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, "embed_tokens.weight")->dtype, WT_BF16);
		assert_int_equal(info(&f, r, "norm.weight")->dtype, WT_BF16);
	}
	fx_close(&f);
}

static void test_bidir_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(bidir_model(false, true), BCFG, 2, lays, 4);
}

/* LlamaBidirectionalConfig is a LlamaConfig: its defaults where config.json says nothing
 * (vocab 32000, hidden 4096, intermediate 11008, 32 layers, 32 heads, kv heads = heads). */
static void test_bidir_defaults(void **state)
{
	(void)state;
	static const char bare[] = BIDIR("\"pooling\":\"avg\"");
	ckpt_config a;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(bare, strlen(bare), &a, &err), WT_OK);
	assert_int_equal(a.vocab_size, 32000);
	assert_int_equal(a.hidden_size, 4096);
	assert_int_equal(a.intermediate_size, 11008);
	assert_int_equal(a.num_hidden_layers, 32);
	assert_int_equal(a.num_attention_heads, 32);
	assert_int_equal(a.num_key_value_heads, 32);
	assert_int_equal(a.head_dim, 128);
	ckpt_config_clear(&a);
	/* pooling absent (the class's avg), cls and last: read */
	static const char *const ok[] = {BIDIR(KEYS("")), BIDIR(KEYS(",\"pooling\":\"cls\"")),
	                                 BIDIR(KEYS(",\"pooling\":\"last\""))};
	for (size_t k = 0; k < 3; k++) {
		assert_int_equal(ckpt_config_parse(ok[k], strlen(ok[k]), &a, &err), WT_OK);
		assert_int_equal(a.num_key_value_heads, 2);
		ckpt_config_clear(&a);
	}
}

static void test_bidir_errors(void **state)
{
	(void)state;
	/* pooling other than avg / cls / last: vLLM's LlamaBidirectionalConfig raises */
	fx_refused(bidir_model(false, false), BIDIR(KEYS(",\"pooling\":\"mean\"")), WT_EUNSUPPORTED,
	           "pooling", "\"avg\", \"cls\", \"last\"");
	fx_refused(bidir_model(false, false), BIDIR(KEYS(",\"pooling\":1")), WT_EUNSUPPORTED,
	           "pooling", "set one of them");
	/* both layouts at once */
	tm_model *m = bidir_model(false, false);
	snprintf(m->name[tm_find(m, "norm.weight")], sizeof(m->name[0]), "model.norm.weight");
	fx_refused(m, BCFG, WT_EUNSUPPORTED, "mixes two name layouts", "model.");
	/* a q_norm (not Llama's), a classifier head, a tensor missing */
	m = bidir_model(false, false);
	tm_add2(m, "layers.0.self_attn.q_norm.weight", D, 0);
	fx_refused(m, BCFG, WT_EUNSUPPORTED, "q_norm", "unknown tensor");
	m = bidir_model(false, false);
	tm_add2(m, "score.weight", 1, HID);
	fx_refused(m, BCFG, WT_EUNSUPPORTED, "score.weight", "unknown tensor");
	m = bidir_model(false, false);
	tm_remove(m, "layers.1.mlp.up_proj.weight");
	fx_refused(m, BCFG, WT_ENOTFOUND, "layers.1.mlp.up_proj.weight", "");
	/* shapes against config.json, heads against the layout */
	fx_refused(bidir_model(false, false), BIDIR(KEYS(",\"head_dim\":16")), WT_ESHAPE,
	           "disagrees with config.json", "implies");
	fx_refused_tp(bidir_model(false, false), BCFG, 16, WT_ELAYOUT, "tp_size 16",
	              "num_attention_heads 8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bidir_slices),   cmocka_unit_test(test_bidir_layouts),
	    cmocka_unit_test(test_bidir_quant),    cmocka_unit_test(test_bidir_coverage),
	    cmocka_unit_test(test_bidir_defaults), cmocka_unit_test(test_bidir_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
