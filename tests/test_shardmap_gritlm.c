/*
 * test_shardmap_gritlm.c — GritLM (vLLM's gritlm.py: parasail-ai/GritLM-7B-vllm, GritLM/GritLM-7B's
 * Mistral config under vLLM's architecture name) cut as vLLM loads it: GritLM subclasses
 * LlamaForCausalLM and keeps its load_weights in both runners, so the architecture reads as
 * MistralForCausalLM (planner family mistral): q/k/v fused by heads into qkv_proj, o_proj /
 * down_proj by columns, gate_up_proj rows, embed_tokens and the untied lm_head by padded
 * vocabulary rows, norms whole; byte for byte MistralForCausalLM's; int8 / fp8 of the Linears
 * alone; coverage at TP 1, 2, 4, 8; config.json read as Mistral's; a Mixtral checkpoint
 * (GritLM-8x7B's experts) and a classifier head refused as unknown tensors (gritlm.py builds
 * Llama's dense MLP). Seed fixed.
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

#define SEED 0x6717ull
#include "test_shardmap_fx.h"

/* hid 256, H 8, KV 2, head_dim 32, I 512, V 1000 (1024 padded), 2 layers */
#define HID 256
#define I   512
#define D   32
#define KEYS(rest)                                                                                 \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":2,"                   \
	"\"sliding_window\":4096,\"tie_word_embeddings\":false" rest
#define MCFG(arch, rest) "{\"architectures\":[\"" arch "\"],\"model_type\":\"mistral\"," rest "}"
#define GCFG             MCFG("GritLM", KEYS(""))
#define L1               "model.layers.1."

/* Mistral's causal LM under model., the untied lm_head last. */
static tm_model *grit_model(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 0);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, D, HID, 0, 0);
		tm_mlp(m, i, "mlp.", I, HID);
	}
	tm_add2(m, "lm_head.weight", 1000, HID);
	return m;
}

/* TP 2 and 4 by hand through the shared helpers (kv heads replicated at TP 4), the vocabulary
 * rows of embed_tokens and lm_head; each rank MistralForCausalLM's byte for byte. */
static void test_gritlm_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx g, b;
		fx_open(&g, grit_model(), GCFG, T, 1, 0, true);
		fx_open(&b, grit_model(), MCFG("MistralForCausalLM", KEYS("")), T, 1, 0, true);
		assert_string_equal(shardmap_family(g.p), "mistral");
		for (uint32_t r = 0; r < T; r++) {
			fx_attn_is(&g, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, D, HID);
			fx_mlp_is(&g, r, T, L1 "mlp.", I, HID);
			fx_vocab_is(&g, r, T, "model.embed_tokens.weight", 1000, 1024, HID);
			fx_vocab_is(&g, r, T, "lm_head.weight", 1000, 1024, HID);
			repl(&g, r, "model.norm.weight");
			repl(&g, r, L1 "input_layernorm.weight");
			/* 2 layers x 6, embed_tokens, norm, lm_head */
			assert_int_equal(shardmap_rank_n_tensors(g.p, r), 2 * 6 + 3);
			fx_same_rank(&g, &b, r, NULL);
		}
		assert_int_equal(shardmap_n_skipped(g.p), 0);
		fx_close(&g);
		fx_close(&b);
	}
	assert_string_equal(shardmap_family_find("GritLM", NULL)->name, "mistral");
}

/* int8-channel TP 2: the Linears quantized (o_proj's codes by columns, q/k/v's by heads, both
 * ranks), embed_tokens / lm_head / norms BF16. fp8-channel TP 4: the same split. */
static void test_gritlm_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, grit_model(), GCFG, &l, true);
	static const char *const keep[] = {"model.embed_tokens.weight", "lm_head.weight",
	                                   "model.norm.weight", L1 "input_layernorm.weight"};
	static const char *const q8[] = {L1 "self_attn.qkv_proj.weight",
	                                 L1 "self_attn.o_proj.weight", L1 "mlp.gate_up_proj.weight",
	                                 L1 "mlp.down_proj.weight"};
	for (uint32_t r = 0; r < 2; r++) {
		fx_quant_split(&f, r, WT_BF16, keep, 4, q8, 4);
		fx_cols_int8_is(&f, r, 2, L1 "self_attn.o_proj.weight", HID, 8 * D);
		fx_qkv_int8_is(&f, r, 2, L1 "self_attn.qkv_proj.weight",
		               L1 "self_attn.q_proj.weight", L1 "self_attn.k_proj.weight",
		               L1 "self_attn.v_proj.weight", 8, 2, D, HID);
	}
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, grit_model(), GCFG, &l, true);
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(info(&f, r, L1 "mlp.gate_up_proj.weight")->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, L1 "self_attn.qkv_proj.weight")->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, "lm_head.weight")->dtype, WT_BF16);
		assert_int_equal(info(&f, r, "model.norm.weight")->dtype, WT_BF16);
	}
	fx_close(&f);
}

static void test_gritlm_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(grit_model(), GCFG, 2, lays, 4);
}

/* config.json read as MistralForCausalLM's (model_type mistral: the same keys and refusals,
 * hidden_size required as for Mistral), the architecture kept. */
static void test_gritlm_config(void **state)
{
	(void)state;
	static const char g[] = GCFG, b[] = MCFG("MistralForCausalLM", KEYS(""));
	ckpt_config a, m;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(g, strlen(g), &a, &err), WT_OK);
	assert_int_equal(ckpt_config_parse(b, strlen(b), &m, &err), WT_OK);
	assert_string_equal(a.architecture, "GritLM");
	assert_string_equal(a.model_type, "mistral");
	assert_true(a.vocab_size == m.vocab_size && a.hidden_size == m.hidden_size &&
	            a.intermediate_size == m.intermediate_size && a.head_dim == m.head_dim &&
	            a.num_key_value_heads == m.num_key_value_heads && !a.tie_word_embeddings &&
	            a.num_hidden_layers == 2 && a.head_dim == D);
	ckpt_config_clear(&a);
	ckpt_config_clear(&m);
	static const char bare[] = MCFG("GritLM", "\"sliding_window\":4096");
	assert_int_equal(ckpt_config_parse(bare, strlen(bare), &a, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "hidden_size"));
}

static void test_gritlm_errors(void **state)
{
	(void)state;
	/* GritLM-8x7B's Mixtral experts: gritlm.py's GritLM builds Llama's dense MLP */
	tm_model *m = grit_model();
	tm_add2(m, "model.layers.0.block_sparse_moe.gate.weight", 8, HID);
	fx_refused(m, GCFG, WT_EUNSUPPORTED, "block_sparse_moe.gate.weight", "unknown tensor");
	/* a classifier head, a q_norm (not Llama's), a tensor missing, lm_head missing (untied) */
	m = grit_model();
	tm_add2(m, "score.weight", 1, HID);
	fx_refused(m, GCFG, WT_EUNSUPPORTED, "score.weight", "unknown tensor");
	m = grit_model();
	tm_add2(m, "model.layers.0.self_attn.q_norm.weight", D, 0);
	fx_refused(m, GCFG, WT_EUNSUPPORTED, "q_norm", "unknown tensor");
	m = grit_model();
	tm_remove(m, "model.layers.1.mlp.up_proj.weight");
	fx_refused(m, GCFG, WT_ENOTFOUND, "model.layers.1.mlp.up_proj.weight", "");
	m = grit_model();
	tm_remove(m, "lm_head.weight");
	fx_refused(m, GCFG, WT_ENOTFOUND, "lm_head.weight", "");
	/* shapes against config.json, heads against the layout */
	fx_refused(grit_model(), MCFG("GritLM", KEYS(",\"head_dim\":16")), WT_ESHAPE,
	           "disagrees with config.json", "implies");
	fx_refused_tp(grit_model(), GCFG, 16, WT_ELAYOUT, "tp_size 16", "num_attention_heads 8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gritlm_slices),   cmocka_unit_test(test_gritlm_quant),
	    cmocka_unit_test(test_gritlm_coverage), cmocka_unit_test(test_gritlm_config),
	    cmocka_unit_test(test_gritlm_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
