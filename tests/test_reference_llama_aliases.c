/*
 * test_reference_llama_aliases.c — the reference forward pass over the architecture names vLLM's
 * registry maps onto its LlamaForCausalLM with Llama's tensors byte for byte, each on the llama
 * fixture's weights (wt-mkckpt --family llama: hid 256, H 8, KV 2, d 32, I 512, V 1000, 2
 * layers, untied; seed printed) under a config.json rewritten to the alias:
 * llama_caps: LLaMAForCausalLM as decapoda-research/llama-*-hf's config.json gives it (bos 0,
 * eos 1, pad_token_id -1, max_sequence_length for max_position_embeddings, rms_norm_eps 1e-6;
 * no rope_theta, rope_scaling, attention_bias, mlp_bias, pretraining_tp or
 * tie_word_embeddings: LlamaConfig's defaults);
 * llama_iq: IQuestCoderForCausalLM (model_type iquestcoder, remote code) with head_dim given, the
 * inert clip_qkv / sliding-window keys, no rope_theta (IQuestCoderConfig's 500000);
 * llama_cwm: CwmForCausalLM (model_type cwm), read as Ministral's (llama.py's per-layer windows):
 * sliding_window 4, CwmConfig's derived layer_types and llama3 rope_scaling.
 * Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts'
 * budgets; the full path's logits equal transformers 4.57.1's at 28 points; rank tensors
 * broken the way a wrong planner would break them are caught.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reference/reference.h"
#include "reference/reference_int.h"
#include "reference/ckpt.h"
#include "kernels/kernels.h"
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

#define L1  "model.layers.1."
#define VOC 1000

/* The llama fixture's config.json turned into decapoda-research/llama-7b-hf's keys. */
static void to_caps(const char *dir)
{
	static const char *const ed[][2] = {
	    {"\"LlamaForCausalLM\"", "\"LLaMAForCausalLM\""},
	    {"\"attention_bias\": false,", ""},
	    {"\"bos_token_id\": 1", "\"bos_token_id\": 0"},
	    {"\"eos_token_id\": 2", "\"eos_token_id\": 1"},
	    {"\"max_position_embeddings\": 2048", "\"max_sequence_length\": 2048"},
	    {"\"mlp_bias\": false,", ""},
	    {"\"num_hidden_layers\": 2,", "\"num_hidden_layers\": 2, \"pad_token_id\": -1,"},
	    {"\"pretraining_tp\": 1,", ""},
	    {"\"rms_norm_eps\": 1e-5", "\"rms_norm_eps\": 1e-06"},
	    {"\"rope_scaling\": null,", ""},
	    {"\"rope_theta\": 10000.0,", ""},
	    {"\"tie_word_embeddings\": false,", ""},
	};
	for (size_t i = 0; i < sizeof(ed) / sizeof(ed[0]); i++)
		edit_config(dir, ed[i][0], ed[i][1]);
}

/* The llama fixture's config.json turned into IQuest-Coder-V1's keys: model_type iquestcoder,
 * auto_map, head_dim given, the inert clip_qkv / sliding-window keys, rope_theta left out
 * (IQuestCoderConfig's 500000). */
static void to_iq(const char *dir)
{
	static const char *const ed[][2] = {
	    {"\"LlamaForCausalLM\"", "\"IQuestCoderForCausalLM\""},
	    {"\"model_type\": \"llama\"", "\"model_type\": \"iquestcoder\""},
	    {"\"num_key_value_heads\": 2,",
	     "\"num_key_value_heads\": 2, \"head_dim\": 32, \"clip_qkv\": null, "
	     "\"use_sliding_window\": false, \"sliding_window\": null, \"max_window_layers\": 0, "
	     "\"auto_map\": {\"AutoConfig\": \"configuration_iquestcoder.IQuestCoderConfig\"},"},
	    {"\"rope_theta\": 10000.0,", ""},
	};
	for (size_t i = 0; i < sizeof(ed) / sizeof(ed[0]); i++)
		edit_config(dir, ed[i][0], ed[i][1]);
}

/* The llama fixture's config.json turned into Code World Model's (model_type cwm): head_dim given,
 * sliding_window 4 (so the 7 test tokens reach past it), no layer_types (CwmConfig's: layer 0
 * full, layer 1 sliding), rope_scaling / rope_theta / attention_bias left out (CwmConfig's llama3
 * scaling over rope_theta 1e6; no bias). */
static void to_cwm(const char *dir)
{
	static const char *const ed[][2] = {
	    {"\"LlamaForCausalLM\"", "\"CwmForCausalLM\""},
	    {"\"attention_bias\": false,", ""},
	    {"\"model_type\": \"llama\"", "\"model_type\": \"cwm\""},
	    {"\"num_key_value_heads\": 2,",
	     "\"num_key_value_heads\": 2, \"head_dim\": 32, \"sliding_window\": 4,"},
	    {"\"rope_scaling\": null,", ""},
	    {"\"rope_theta\": 10000.0,", ""},
	};
	for (size_t i = 0; i < sizeof(ed) / sizeof(ed[0]); i++)
		edit_config(dir, ed[i][0], ed[i][1]);
}

static int setup(void **state)
{
	(void)state;
	if (gen_fixtures("reference_llama_aliases", NULL, 0) != 0 ||
	    gen_family("llama", "llama_caps") != 0 || gen_family("llama", "llama_iq") != 0 ||
	    gen_family("llama", "llama_cwm") != 0)
		return -1;
	char *dir = tu_path(g_root, "llama_caps");
	to_caps(dir);
	free(dir);
	dir = tu_path(g_root, "llama_iq");
	to_iq(dir);
	free(dir);
	dir = tu_path(g_root, "llama_cwm");
	to_cwm(dir);
	free(dir);
	return 0;
}

static void test_caps_pass(void **state)
{
	(void)state;
	expect_pass_tp("llama_caps", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: AutoModelForCausalLM.from_pretrained
 * of the rewritten fixture folder itself (LlamaForCausalLM by model_type llama; strict: no
 * missing, unexpected or mismatched key; pad_token_id -1, rope_theta / tie_word_embeddings
 * LlamaConfig's defaults), eager, float32: all 7 x 1000 logits within 8.6e-7 of the
 * reference's (largest 1.22). */
static const gold_pt gold_caps[] = {
    {0, 0, 1.418942213e-01f},    {0, 333, -9.118674695e-02f}, {0, 666, 1.780002713e-01f},
    {0, 999, -2.500184774e-01f}, {1, 0, 3.861320019e-01f},    {1, 333, -4.457820356e-01f},
    {1, 666, 2.485322654e-01f},  {1, 999, -1.305478215e-01f}, {2, 0, 4.039153457e-01f},
    {2, 333, -3.346590996e-01f}, {2, 666, 4.053131938e-01f},  {2, 999, -1.384497583e-01f},
    {3, 0, 3.402538896e-01f},    {3, 333, -2.264474928e-01f}, {3, 666, 1.811192632e-01f},
    {3, 999, -3.201321065e-01f}, {4, 0, 3.190895617e-01f},    {4, 333, -2.810946405e-01f},
    {4, 666, 1.629847586e-01f},  {4, 999, -2.048014402e-01f}, {5, 0, 4.081740379e-01f},
    {5, 333, -1.432290077e-01f}, {5, 666, 3.449244499e-01f},  {5, 999, -2.628543377e-01f},
    {6, 0, 5.030568838e-01f},    {6, 333, -2.347790599e-01f}, {6, 666, 5.089622140e-01f},
    {6, 999, -4.814816117e-01f},
};

#define GOLD_TOL 1e-5

static void test_caps_transformers(void **state)
{
	(void)state;
	const char *dump = getenv("WT_REF_DUMP"); /* the whole [7, V] logits, for a comparison */
	if (dump != NULL) {
		float *lg = malloc(N_TOK * VOC * sizeof(float));
		assert_non_null(lg);
		ref_cfg c;
		full_logits("llama_caps", lg, &c);
		FILE *f = fopen(dump, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(lg, sizeof(float), N_TOK * VOC, f), N_TOK * VOC);
		fclose(f);
		free(lg);
	}
	expect_gold("llama_caps", VOC, GOLD_TOL, gold_caps,
	            sizeof(gold_caps) / sizeof(gold_caps[0]));
}

static void test_caps_caught(void **state)
{
	(void)state;
	expect_swapped("llama_caps", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("llama_caps", 2, 1, L1 "self_attn.o_proj.weight",
	               "o_proj columns exchanged");
	expect_swapped("llama_caps", 2, 1, L1 "mlp.down_proj.weight",
	               "down_proj columns exchanged");
	expect_halves_swapped("llama_caps", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 256, 256 * 2},
	                      "rank 0's gate / up halves exchanged (BF16 rows)");
	expect_zeroed("llama_caps", 4, 1, 3, "lm_head.weight", "rank 3's lm_head rows zeroed");
}

/* The old config reads as LlamaConfig's defaults: rope_theta 10000, untied, the eps given. */
static void test_caps_fixture(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "llama_caps");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && !c.tied && c.H == 8 && c.KV == 2 && c.d == 32 &&
	            c.I == 512 && c.L == 2 && c.hid == 256 && c.V == VOC && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	ref_set_clear(&ck);
	close_model(&m);
}

static void test_iq_pass(void **state)
{
	(void)state;
	expect_pass_tp("llama_iq", true);
}

/* (token, column, transformers 4.57.1 value): LlamaForCausalLM.from_pretrained of the rewritten
 * fixture under a LlamaConfig with IQuestCoderConfig's values (rope_theta 500000, head_dim 32;
 * strict), eager, float32: all 7 x 1000 logits within 1.0e-6 of the reference's (largest
 * 1.22); rope_theta read as LlamaConfig's 10000 instead moves them by 0.021. */
static const gold_pt gold_iq[] = {
    {0, 0, 1.434871703e-01f},    {0, 333, -9.410136938e-02f}, {0, 666, 1.794787496e-01f},
    {0, 999, -2.511509955e-01f}, {1, 0, 3.871037066e-01f},    {1, 333, -4.486574531e-01f},
    {1, 666, 2.492186874e-01f},  {1, 999, -1.311804056e-01f}, {2, 0, 4.054192007e-01f},
    {2, 333, -3.350931406e-01f}, {2, 666, 4.052703083e-01f},  {2, 999, -1.410833001e-01f},
    {3, 0, 3.370585442e-01f},    {3, 333, -2.232122272e-01f}, {3, 666, 1.866275668e-01f},
    {3, 999, -3.213959336e-01f}, {4, 0, 3.130205274e-01f},    {4, 333, -2.814741433e-01f},
    {4, 666, 1.632289886e-01f},  {4, 999, -2.115850300e-01f}, {5, 0, 4.024164081e-01f},
    {5, 333, -1.439427435e-01f}, {5, 666, 3.514023721e-01f},  {5, 999, -2.675186396e-01f},
    {6, 0, 4.976334274e-01f},    {6, 333, -2.276916653e-01f}, {6, 666, 5.149172544e-01f},
    {6, 999, -4.858899415e-01f},
};

static void test_iq_transformers(void **state)
{
	(void)state;
	const char *dump = getenv("WT_REF_DUMP_IQ");
	if (dump != NULL) {
		float *lg = malloc(N_TOK * VOC * sizeof(float));
		assert_non_null(lg);
		ref_cfg c;
		full_logits("llama_iq", lg, &c);
		FILE *f = fopen(dump, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(lg, sizeof(float), N_TOK * VOC, f), N_TOK * VOC);
		fclose(f);
		free(lg);
	}
	expect_gold("llama_iq", VOC, GOLD_TOL, gold_iq, sizeof(gold_iq) / sizeof(gold_iq[0]));
}

static void test_iq_caught(void **state)
{
	(void)state;
	expect_swapped("llama_iq", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("llama_iq", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("llama_iq", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 256, 256 * 2},
	                      "rank 0's gate / up halves exchanged (BF16 rows)");
	expect_zeroed("llama_iq", 4, 1, 2, L1 "mlp.down_proj.weight", "rank 2's down_proj zeroed");
}

/* IQuestCoderConfig's rope_theta 500000 where the key is left out; head_dim as given. */
static void test_iq_fixture(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "llama_iq");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && !c.tied && c.H == 8 && c.KV == 2 && c.d == 32 &&
	            c.I == 512 && c.L == 2 && c.hid == 256 && c.V == VOC && c.act == REF_ACT_SILU);
	assert_float_equal(c.theta, 500000.0, 1e-6);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	ref_set_clear(&ck);
	close_model(&m);
}

#define IQC(extra)                                                                                 \
	"{\"architectures\": [\"IQuestCoderForCausalLM\"], \"model_type\": \"iquestcoder\", "      \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"head_dim\": 32, \"num_hidden_layers\": 2, \"vocab_size\": 100, "                        \
	"\"intermediate_size\": 96" extra "}"

/* The reference reads IQuestCoderConfig's defaults and refuses what it cannot run. */
static void test_iq_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char plain[] = IQC("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.d == 32 && c.KV == 2 && !c.tied);
	assert_float_equal(c.theta, 500000.0, 1e-6);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	expect_cfg(IQC(", \"clip_qkv\": 8"), WT_EUNSUPPORTED, "clip_qkv");
	expect_cfg(IQC(", \"use_sliding_window\": true, \"sliding_window\": 16"), WT_EUNSUPPORTED,
	           "use_sliding_window");
	expect_cfg(IQC(", \"use_sliding_window\": true, \"sliding_window\": 16, "
	               "\"max_window_layers\": 2"),
	           WT_OK, "");
	expect_cfg(IQC(", \"hidden_act\": \"gelu\""), WT_EUNSUPPORTED, "hidden_act");
}

static void test_cwm_pass(void **state)
{
	(void)state;
	expect_pass_tp("llama_cwm", true);
}

/* (token, column, transformers 4.57.1 value): MinistralForCausalLM.from_pretrained of the rewritten
 * fixture under a MinistralConfig with CwmConfig's values (layer_types full / sliding,
 * sliding_window 4, rope_theta 1e6, rope_scaling llama3 factor 16 / low 1 / high 4 / original
 * 8192, head_dim 32; strict), eager, float32: all 7 x 1000 logits within 1.03e-6 of the
 * reference's (largest 1.32); no window moves them by 0.33, the layer types swapped 0.58, no
 * llama3 scaling 1.4e-4. */
static const gold_pt gold_cwm[] = {
    {0, 0, 1.434871703e-01f},    {0, 333, -9.410136938e-02f}, {0, 666, 1.794787496e-01f},
    {0, 999, -2.511509955e-01f}, {1, 0, 3.870532811e-01f},    {1, 333, -4.487155080e-01f},
    {1, 666, 2.492552400e-01f},  {1, 999, -1.311109811e-01f}, {2, 0, 4.053984880e-01f},
    {2, 333, -3.350891769e-01f}, {2, 666, 4.054346085e-01f},  {2, 999, -1.411964595e-01f},
    {3, 0, 3.365346789e-01f},    {3, 333, -2.228684127e-01f}, {3, 666, 1.873328686e-01f},
    {3, 999, -3.212942779e-01f}, {4, 0, 3.526325822e-01f},    {4, 333, -1.990555227e-01f},
    {4, 666, 1.461968422e-01f},  {4, 999, -2.051827163e-01f}, {5, 0, 4.966394603e-01f},
    {5, 333, 3.061503172e-03f},  {5, 666, 3.413542211e-01f},  {5, 999, -2.537485361e-01f},
    {6, 0, 5.966508985e-01f},    {6, 333, -1.832053512e-01f}, {6, 666, 5.027095079e-01f},
    {6, 999, -4.489887655e-01f},
};

static void test_cwm_transformers(void **state)
{
	(void)state;
	const char *dump = getenv("WT_REF_DUMP_CWM");
	if (dump != NULL) {
		float *lg = malloc(N_TOK * VOC * sizeof(float));
		assert_non_null(lg);
		ref_cfg c;
		full_logits("llama_cwm", lg, &c);
		FILE *f = fopen(dump, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(lg, sizeof(float), N_TOK * VOC, f), N_TOK * VOC);
		fclose(f);
		free(lg);
	}
	expect_gold("llama_cwm", VOC, GOLD_TOL, gold_cwm, sizeof(gold_cwm) / sizeof(gold_cwm[0]));
}

static void test_cwm_caught(void **state)
{
	(void)state;
	expect_swapped("llama_cwm", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("llama_cwm", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_halves_swapped("llama_cwm", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 256, 256 * 2},
	                      "rank 0's gate / up halves exchanged (BF16 rows)");
	expect_zeroed("llama_cwm", 4, 1, 1, L1 "self_attn.o_proj.weight", "rank 1's o_proj zeroed");
}

/* CwmConfig's derived keys as the reference reads them: layer 1 sliding (window 4), layer 0 full,
 * rope_theta 1e6 with llama3 scaling. */
static void test_cwm_fixture(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "llama_cwm");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.ministral && !c.tied && c.KV == 2 && c.d == 32 &&
	            c.window == 4 && c.local_masked && !(c.local_mask[0] & 1u) &&
	            (c.local_mask[0] & 2u));
	assert_float_equal(c.theta, 1e6, 1e-3);
	ref_set_clear(&ck);
	close_model(&m);
}

#define CWMC(extra)                                                                                \
	"{\"architectures\": [\"CwmForCausalLM\"], \"model_type\": \"cwm\", \"hidden_size\": 64, " \
	"\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 16, "               \
	"\"num_hidden_layers\": 5, \"vocab_size\": 100, \"intermediate_size\": 96" extra "}"

/* CwmConfig's derived keys from the text alone: sliding_window 8192, layers 0 and 4 full and 1..3
 * sliding, rope_theta 1e6; given layer_types and sliding_window win; hidden_act refused. */
static void test_cwm_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char plain[] = CWMC("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.ministral && c.window == 8192 && c.local_masked && c.L == 5 &&
	            (c.local_mask[0] & 0x1fu) == 0x0eu);
	assert_float_equal(c.theta, 1e6, 1e-3);
	static const char given[] =
	    CWMC(", \"sliding_window\": 16, \"layer_types\": [\"sliding_attention\", "
	         "\"full_attention\", \"full_attention\", \"full_attention\", \"full_attention\"]");
	assert_int_equal(ref_cfg_parse_json(given, strlen(given), &c, &err), WT_OK);
	assert_true(c.window == 16 && (c.local_mask[0] & 0x1fu) == 0x01u);
	expect_cfg(CWMC(", \"hidden_act\": \"gelu\""), WT_EUNSUPPORTED, "hidden_act");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_caps_pass),        cmocka_unit_test(test_caps_transformers),
	    cmocka_unit_test(test_caps_caught),      cmocka_unit_test(test_caps_fixture),
	    cmocka_unit_test(test_iq_pass),          cmocka_unit_test(test_iq_transformers),
	    cmocka_unit_test(test_iq_caught),        cmocka_unit_test(test_iq_fixture),
	    cmocka_unit_test(test_iq_config),        cmocka_unit_test(test_cwm_pass),
	    cmocka_unit_test(test_cwm_transformers), cmocka_unit_test(test_cwm_caught),
	    cmocka_unit_test(test_cwm_fixture),      cmocka_unit_test(test_cwm_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
