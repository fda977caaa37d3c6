/*
 * test_reference_rope.c — RoPE scaling of the reference forward pass
 * (reference/cfg_rope.c, reference/math.c): the inverse frequencies and
 * attention factors of llama3 and yarn against values printed by transformers
 * 4.57.1's modeling_rope_utils (_compute_llama3_parameters,
 * _compute_yarn_parameters) for the configs named below, dynamic NTK against
 * its formula, DeepSeek's softmax scale, the refusals, and full vs sharded
 * forward passes of scaled Llama and DeepSeek-V3 fixtures (the scaling moves the
 * logits, and both paths agree).
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
#include "reference/ckpt.h"
#include "reference/reference_int.h"
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

#define DENSE(arch, hid, heads, extra)                                                             \
	"{\"architectures\": [\"" arch "\"], \"hidden_size\": " #hid ", "                          \
	"\"num_attention_heads\": " #heads ", \"num_hidden_layers\": 1, \"vocab_size\": 100, "     \
	"\"intermediate_size\": 128" extra "}"
/* DeepSeek-V3's MLA dims, 64 rope dims as the released model */
#define DS3(extra)                                                                                 \
	"{\"architectures\": [\"DeepseekV3ForCausalLM\"], \"hidden_size\": 256, "                  \
	"\"num_attention_heads\": 4, \"num_hidden_layers\": 1, \"vocab_size\": 100, "              \
	"\"intermediate_size\": 128, \"kv_lora_rank\": 64, \"q_lora_rank\": null, "                \
	"\"qk_nope_head_dim\": 128, \"qk_rope_head_dim\": 64, \"v_head_dim\": 128, "               \
	"\"n_routed_experts\": 4, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 64, "     \
	"\"max_position_embeddings\": 163840" extra "}"

static int parse_cfg(const char *json, ref_cfg *c, wt_errbuf *err)
{
	int rv = ref_cfg_parse_json(json, strlen(json), c, err);
	if (rv != WT_OK)
		print_message("%s\n", err->msg);
	return rv;
}

/* Inverse frequency i of c over rd rotary dims, as rope_rot turns it. */
static double inv_freq(const ref_cfg *c, int64_t rd, int64_t i)
{
	double f = pow(c->theta, -(double)(2 * i) / (double)rd);
	if (c->rope_factor[0] > 0.0)
		f /= c->rope_factor[0];
	return c->n_ext > 0 ? f / c->rope_ext[0][i] : f;
}

typedef struct freq {
	int64_t i;
	double inv; /* transformers 4.57.1, float32 */
} freq;

static void expect_freqs(const ref_cfg *c, int64_t rd, const freq *want, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		double got = inv_freq(c, rd, want[k].i);
		if (fabs(got - want[k].inv) > 2e-6 * want[k].inv)
			print_error("frequency %lld: %.9g, transformers %.9g\n",
			            (long long)want[k].i, got, want[k].inv);
		assert_true(fabs(got - want[k].inv) <= 2e-6 * want[k].inv);
	}
}

/* Llama 3.1 8B: factor 8, low 1, high 4, original 8192, theta 500000, head_dim 128. */
static void test_llama3(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	assert_int_equal(
	    parse_cfg(
	        DENSE("LlamaForCausalLM", 4096, 32,
	              ", \"rope_theta\": 500000.0, \"rope_scaling\": {\"rope_type\": "
	              "\"llama3\", \"factor\": 8.0, \"low_freq_factor\": 1.0, "
	              "\"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 8192}"),
	        &c, &err),
	    WT_OK);
	assert_int_equal(c.n_ext, 64);
	static const freq want[] = {{0, 1.0},
	                            {20, 0.0165604409},
	                            {40, 3.42810235e-05},
	                            {44, 1.50962178e-05},
	                            {46, 1.00178686e-05},
	                            {48, 6.64786967e-06},
	                            {63, 3.06892588e-07}};
	expect_freqs(&c, 128, want, sizeof(want) / sizeof(want[0]));
	assert_true(c.rope_mscale == 0.0 || c.rope_mscale == 1.0);
	/* transformers 5.x spelling: rope_parameters */
	assert_int_equal(
	    parse_cfg(
	        DENSE("LlamaForCausalLM", 4096, 32,
	              ", \"rope_parameters\": {\"rope_theta\": 500000.0, \"rope_type\": "
	              "\"llama3\", \"factor\": 8.0, \"low_freq_factor\": 1.0, "
	              "\"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 8192}"),
	        &c, &err),
	    WT_OK);
	expect_freqs(&c, 128, want, sizeof(want) / sizeof(want[0]));
}

/* Qwen2.5 with the YaRN its model cards add: factor 4, original 32768, theta 1e6. */
static void test_yarn(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	assert_int_equal(
	    parse_cfg(DENSE("Qwen2ForCausalLM", 5120, 40,
	                    ", \"rope_theta\": 1000000.0, \"max_position_embeddings\": "
	                    "32768, \"rope_scaling\": {\"type\": \"yarn\", \"factor\": "
	                    "4.0, \"original_max_position_embeddings\": 32768}"),
	              &c, &err),
	    WT_OK);
	static const freq qwen[] = {{0, 1.0},
	                            {10, 0.115478203},
	                            {30, 0.00106436096},
	                            {40, 4.44569851e-05},
	                            {50, 5.13381246e-06},
	                            {63, 3.10234441e-07}};
	expect_freqs(&c, 128, qwen, sizeof(qwen) / sizeof(qwen[0]));
	assert_true(fabs(c.rope_mscale - 1.1386294361119891) < 1e-12);
	assert_true(c.attn_scale == 0.0); /* DeepSeek only */
	/* no truncation, betas 8 / 2, the original length from max_position_embeddings */
	assert_int_equal(parse_cfg(DENSE("LlamaForCausalLM", 64, 4,
	                                 ", \"max_position_embeddings\": 64, \"rope_scaling\": "
	                                 "{\"rope_type\": \"yarn\", \"factor\": 2.0, \"truncate\": "
	                                 "false, \"beta_fast\": 8, \"beta_slow\": 2}"),
	                           &c, &err),
	                 WT_OK);
	static const freq small[] = {
	    {0, 1.0}, {1, 0.212468684}, {2, 0.0500000007}, {5, 0.00158113893}, {7, 0.000158113893}};
	expect_freqs(&c, 16, small, sizeof(small) / sizeof(small[0]));
	assert_true(fabs(c.rope_mscale - 1.0693147180559945) < 1e-12);
	/* an explicit attention_factor wins */
	assert_int_equal(parse_cfg(DENSE("LlamaForCausalLM", 64, 4,
	                                 ", \"max_position_embeddings\": 64, \"rope_scaling\": "
	                                 "{\"rope_type\": \"yarn\", \"factor\": 2.0, "
	                                 "\"attention_factor\": 0.5}"),
	                           &c, &err),
	                 WT_OK);
	assert_true(c.rope_mscale == 0.5);
}

/* DeepSeek-V3's YaRN over its 64 rope dims, and mscale(40, 1)^2 on the softmax scale. */
static void test_yarn_deepseek(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	assert_int_equal(parse_cfg(DS3(", \"rope_scaling\": {\"type\": \"yarn\", \"factor\": 40, "
	                               "\"beta_fast\": 32, \"beta_slow\": 1, \"mscale\": 1.0, "
	                               "\"mscale_all_dim\": 1.0, "
	                               "\"original_max_position_embeddings\": 4096}"),
	                           &c, &err),
	                 WT_OK);
	assert_int_equal(c.n_ext, 32);
	static const freq want[] = {{0, 1.0},           {5, 0.237137362},     {10, 0.0562341288},
	                            {15, 0.0083345091}, {20, 0.000790569407}, {31, 3.33380353e-06}};
	expect_freqs(&c, 64, want, sizeof(want) / sizeof(want[0]));
	assert_true(fabs(c.rope_mscale - 1.0) < 1e-12);
	assert_true(fabs(c.attn_scale - 1.8738542070926265 / sqrt(192.0)) < 1e-12);
	/* without mscale_all_dim the softmax scale stays 1/sqrt(nope + rope) */
	assert_int_equal(parse_cfg(DS3(", \"rope_scaling\": {\"type\": \"yarn\", \"factor\": 40, "
	                               "\"original_max_position_embeddings\": 4096}"),
	                           &c, &err),
	                 WT_OK);
	assert_true(c.attn_scale == 0.0);
	assert_true(fabs(c.rope_mscale - (0.1 * log(40.0) + 1.0)) < 1e-12);
}

/* Dynamic NTK: the default below max_position_embeddings, a larger base past it. */
static void test_dynamic(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	assert_int_equal(parse_cfg(DENSE("LlamaForCausalLM", 64, 4,
	                                 ", \"max_position_embeddings\": 4, \"rope_scaling\": "
	                                 "{\"type\": \"dynamic\", \"factor\": 2.0}"),
	                           &c, &err),
	                 WT_OK);
	assert_true(c.rope_dyn == 2.0 && c.rope_dyn_max == 4 && c.d == 16);
	enum { T = 6, D = 16 };
	float x[T * D], y[T * D];
	for (int i = 0; i < T * D; i++)
		x[i] = y[i] = (float)((i * 7) % 11) - 5.0f;
	ref_rope_layer(&c, 0, x, T, 1, D);
	/* transformers: base * (factor * T / max - (factor - 1))^(d / (d - 2)) */
	ref_rope(y, T, 1, D, D, 10000.0 * pow(2.0 * T / 4.0 - 1.0, 16.0 / 14.0));
	for (int i = 0; i < T * D; i++)
		assert_true(fabsf(x[i] - y[i]) < 1e-5f);
	for (int i = 0; i < T * D; i++)
		x[i] = y[i] = (float)((i * 7) % 11) - 5.0f;
	ref_rope_layer(&c, 0, x, 4, 1, D); /* 4 tokens: not past the maximum */
	ref_rope(y, 4, 1, D, D, 10000.0);
	assert_memory_equal(x, y, 4 * D * sizeof(float));
}

static void test_refusals(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const struct {
		const char *json;
		int rv;
		const char *msg;
	} bad[] = {
	    {DENSE("LlamaForCausalLM", 64, 4, ", \"rope_scaling\": {\"type\": \"ntk-by-parts\"}"),
	     WT_EUNSUPPORTED, "rope_scaling type 'ntk-by-parts' on LlamaForCausalLM"},
	    {DENSE("LlamaForCausalLM", 64, 4,
	           ", \"rope_scaling\": {\"type\": \"longrope\", \"factor\": 2}"),
	     WT_EUNSUPPORTED, "longrope: Phi-3 only"},
	    {DENSE("LlamaForCausalLM", 64, 4,
	           ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 0.5}"),
	     WT_ECORRUPT, "rope_scaling.factor 0.5"},
	    {DENSE("LlamaForCausalLM", 64, 4, ", \"rope_scaling\": {\"type\": \"linear\"}"),
	     WT_ECORRUPT, "rope_scaling.factor is missing"},
	    {DENSE("LlamaForCausalLM", 64, 4,
	           ", \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": \"2\"}"),
	     WT_ECORRUPT, "rope_scaling.factor is not a finite number"},
	    {DENSE("LlamaForCausalLM", 64, 4,
	           ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, "
	           "\"high_freq_factor\": 4, \"original_max_position_embeddings\": 8192}"),
	     WT_ECORRUPT, "rope_scaling.low_freq_factor is missing"},
	    {DENSE("LlamaForCausalLM", 64, 4,
	           ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, "
	           "\"low_freq_factor\": 4, \"high_freq_factor\": 4, "
	           "\"original_max_position_embeddings\": 8192}"),
	     WT_ECORRUPT, "llama3 needs 0 < low < high"},
	    {DENSE("LlamaForCausalLM", 64, 4,
	           ", \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4, \"truncate\": 1}"),
	     WT_ECORRUPT, "rope_scaling.truncate"},
	    {DENSE("LlamaForCausalLM", 64, 4,
	           ", \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4}"),
	     WT_ECORRUPT, "set original_max_position_embeddings"},
	    {DENSE("LlamaForCausalLM", 64, 4,
	           ", \"max_position_embeddings\": 64, \"rope_scaling\": {\"rope_type\": \"yarn\", "
	           "\"factor\": 4, \"beta_fast\": -1}"),
	     WT_ECORRUPT, "positive betas"},
	    {DENSE("LlamaForCausalLM", 64, 4,
	           ", \"max_position_embeddings\": 64, \"rope_scaling\": {\"rope_type\": \"yarn\", "
	           "\"factor\": 4, \"mscale\": 1e300, \"mscale_all_dim\": 1}"),
	     WT_ECORRUPT, "rope_scaling.mscale 1e+300"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(ref_cfg_parse_json(bad[i].json, strlen(bad[i].json), &c, &err),
		                 bad[i].rv);
		if (strstr(err.msg, bad[i].msg) == NULL)
			print_error("case %zu: '%s' lacks '%s'\n", i, err.msg, bad[i].msg);
		assert_non_null(strstr(err.msg, bad[i].msg));
	}
	/* none: default, Qwen2-VL's mrope, null */
	static const char *const none[] = {
	    DENSE("LlamaForCausalLM", 64, 4, ", \"rope_scaling\": {\"rope_type\": \"default\"}"),
	    DENSE("Qwen2ForCausalLM", 64, 4, ", \"rope_scaling\": {\"type\": \"mrope\"}"),
	    DENSE("LlamaForCausalLM", 64, 4, ", \"rope_scaling\": null"),
	};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(parse_cfg(none[i], &c, &err), WT_OK);
		assert_true(c.n_ext == 0 && c.rope_dyn == 0.0 && c.rope_factor[0] == 0.0);
	}
}

/* Full vs sharded with the scaling on; the scaling must move the logits. */
static void scaled_pass(const char *fam, const char *out, const char *rope, uint32_t tp)
{
	assert_int_equal(gen_family(fam, out), 0);
	char *dir = tu_path(g_root, out);
	edit_config(dir, "\"rope_scaling\": null", rope);
	free(dir);
	expect_pass(out, tp, 1, WT_QUANT_NONE, 0);
	ref_cfg a, b;
	size_t n = N_TOK * 1024; /* the largest vocabulary of the fixtures */
	float *la = malloc(n * sizeof(float)), *lb = malloc(n * sizeof(float));
	assert_true(la && lb);
	full_logits(fam, la, &a);
	full_logits(out, lb, &b);
	assert_true(a.V <= 1024 && a.V == b.V);
	char what[512];
	snprintf(what, sizeof(what), "%s %s vs none", fam, rope);
	expect_moved(la, lb, N_TOK * (size_t)a.V, 1e-3, what);
	free(la);
	free(lb);
}

static void test_scaled_forward(void **state)
{
	(void)state;
	scaled_pass("llama", "llama_yarn",
	            "\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 16, "
	            "\"original_max_position_embeddings\": 16}",
	            2);
	scaled_pass("llama", "llama_llama3",
	            "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 32, "
	            "\"low_freq_factor\": 1, \"high_freq_factor\": 4, "
	            "\"original_max_position_embeddings\": 16}",
	            4);
	/* DeepSeek-V2-Lite's YaRN (factor 40, mscale 0.707, mscale_all_dim 0.707) */
	scaled_pass("deepseek_v2", "ds2_yarn",
	            "\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 40, \"beta_fast\": 32, "
	            "\"beta_slow\": 1, \"mscale\": 0.707, \"mscale_all_dim\": 0.707, "
	            "\"original_max_position_embeddings\": 16}",
	            2);
	scaled_pass("deepseek_v3", "ds3_yarn",
	            "\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 40, \"mscale\": 1.0, "
	            "\"mscale_all_dim\": 1.0, \"original_max_position_embeddings\": 16}",
	            2);
}

/* MLA takes DeepSeek's softmax scale from the configuration: the same checkpoint
 * with the scale reset to 1/sqrt(nope + rope) gives other logits. */
static void test_deepseek_softmax_used(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "ds3_yarn"); /* test_scaled_forward made it */
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.attn_scale > 0.0);
	size_t n = N_TOK * (size_t)c.V;
	float *la = malloc(n * sizeof(float)), *lb = malloc(n * sizeof(float));
	assert_true(la && lb);
	assert_int_equal(ref_forward_full(&c, &ck, g_tokens, N_TOK, la, NULL, &err), WT_OK);
	c.attn_scale = 0.0;
	assert_int_equal(ref_forward_full(&c, &ck, g_tokens, N_TOK, lb, NULL, &err), WT_OK);
	expect_moved(la, lb, n, 1e-3, "deepseek_v3 mscale^2 softmax vs none");
	free(la);
	free(lb);
	ref_set_clear(&ck);
	close_model(&m);
}

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"llama", "deepseek_v3", "deepseek_v2"};
	return gen_fixtures("reference_rope", fams, sizeof(fams) / sizeof(fams[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_llama3),
	    cmocka_unit_test(test_yarn),
	    cmocka_unit_test(test_yarn_deepseek),
	    cmocka_unit_test(test_dynamic),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_scaled_forward),
	    cmocka_unit_test(test_deepseek_softmax_used),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
