/*
 * test_reference_ouro.c — the reference forward pass over Ouro (OuroForCausalLM, remote code;
 * fixture ouro) as vLLM's ouro.py runs it: Qwen2's attention without biases (GQA 8 / 2, RoPE
 * rope_theta 1e6), four RMSNorms a layer (input_layernorm, input_layernorm_2 on the attention
 * output, post_attention_layernorm, post_attention_layernorm_2 on the MLP output), SwiGLU, the
 * layers run total_ut_steps (3 in the fixture) times with model.norm between the passes and
 * before the untied lm_head. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8);
 * the quantized layouts within the scheme's budget times the passes (the same quantized
 * weights are applied total_ut_steps times); the full path's logits equal a torch model built
 * from transformers 4.57.1's Qwen2 modules and looped as vLLM does at 28 points; the loop is
 * really run (1 or 4 passes move the logits); rank tensors broken the way a wrong planner
 * would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family ouro (hid 128, H 8,
 * KV 2, d 16, I 192, V 1000, 2 layers, total_ut_steps 3, untied; seed printed).
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

#define L1    "model.layers.1."
#define STEPS 3 /* the fixture's total_ut_steps */

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"ouro"};
	return gen_fixtures("reference_ouro", fams, 1);
}

/* A quantized layout passes within the scheme's budget times the passes over the layers, is
 * above REF_TOL_F32 (really quantized) and the scheme's own budget is what it is measured
 * against (printed). */
static void expect_loop_quant(uint32_t tp, wt_quant q)
{
	ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(run("ouro", tp, 1, q, 0, NULL, NULL, &res, &err), WT_OK);
	double ratio = res.diff.max_abs_diff / res.diff.max_abs_ref;
	print_message("ouro tp %u %s: ratio %.3g, loop budget %.3g\n", tp, wt_quant_name(q), ratio,
	              res.budget * STEPS);
	assert_false(res.diff.nonfinite);
	assert_true(res.diff.max_abs_ref > 0.1);
	assert_true(ratio > REF_TOL_F32);
	assert_true(ratio <= res.budget * STEPS);
}

static void test_ouro_pass(void **state)
{
	(void)state;
	for (uint32_t tp = 1; tp <= 8; tp *= 2)
		expect_pass("ouro", tp, 1, WT_QUANT_NONE, 0);
	expect_pass("ouro", 4, 1, WT_QUANT_NONE, 1);
	expect_loop_quant(2, WT_QUANT_INT8_CHANNEL);
	expect_loop_quant(4, WT_QUANT_FP8_CHANNEL);
}

/* (token, column, torch value), tokens g_tokens: a torch model of vLLM's ouro.py on
 * transformers 4.57.1's Qwen2Attention (q/k/v biases removed: QKVParallelLinear bias=False) /
 * Qwen2MLP / Qwen2RMSNorm / Qwen2RotaryEmbedding from a Qwen2Config of the fixture's keys,
 * load_state_dict strict (early_exit_gate included), eager, float32, looped 3 times (each
 * pass: x += norm2(attn(norm1(x))), x += norm4(mlp(norm3(x))), then x = model.norm(x)); all
 * 7 x 1000 logits within 1.2e-6 of the reference's (largest 0.881) */
static const gold_pt gold_ouro[] = {
    {0, 0, -4.267564788e-02f},   {0, 333, -2.894247472e-01f}, {0, 666, -1.625807583e-01f},
    {0, 999, 1.626512408e-01f},  {1, 0, -2.798933387e-01f},   {1, 333, -3.898072243e-01f},
    {1, 666, -7.243702561e-02f}, {1, 999, -9.283921868e-02f}, {2, 0, -3.500249088e-01f},
    {2, 333, -3.285921216e-01f}, {2, 666, -3.857497498e-02f}, {2, 999, -2.175476700e-01f},
    {3, 0, -3.421512544e-01f},   {3, 333, -3.571104407e-01f}, {3, 666, 2.763398178e-02f},
    {3, 999, -2.357694805e-01f}, {4, 0, -3.548482656e-01f},   {4, 333, -3.567521572e-01f},
    {4, 666, -4.529161379e-03f}, {4, 999, -1.967637241e-01f}, {5, 0, -2.878744602e-01f},
    {5, 333, -3.459703028e-01f}, {5, 666, -2.252994664e-02f}, {5, 999, -1.422246993e-01f},
    {6, 0, -3.832622468e-01f},   {6, 333, -3.185618222e-01f}, {6, 666, 2.669557184e-02f},
    {6, 999, -1.288586408e-01f}};

#define GOLD_TOL 1e-5

static void test_ouro_torch(void **state)
{
	(void)state;
	expect_gold("ouro", 1000, GOLD_TOL, gold_ouro, sizeof(gold_ouro) / sizeof(gold_ouro[0]));
}

/* The loop is run: one pass, or four (OuroConfig's default) instead of the fixture's three,
 * move the logits. */
static void test_ouro_loop(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "ouro");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_int_equal(c.ouro_steps, STEPS);
	size_t n = N_TOK * 1000;
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	assert_non_null(a);
	assert_non_null(b);
	logits_with(&c, &ck, a);
	c.ouro_steps = 1;
	logits_with(&c, &ck, b);
	expect_moved(a, b, n, 0.1, "total_ut_steps 1 instead of 3");
	c.ouro_steps = 4;
	logits_with(&c, &ck, b);
	expect_moved(a, b, n, 0.1, "total_ut_steps 4 instead of 3");
	free(a);
	free(b);
	ref_set_clear(&ck);
	close_model(&m);
}

static void test_ouro_caught(void **state)
{
	(void)state;
	expect_swapped("ouro", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("ouro", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("ouro", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("ouro", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_halves_swapped("ouro", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
	expect_zeroed("ouro", 2, 1, 1, L1 "input_layernorm_2.weight",
	              "rank 1's input_layernorm_2 zeroed");
	expect_zeroed("ouro", 2, 1, 1, L1 "post_attention_layernorm_2.weight",
	              "rank 1's post_attention_layernorm_2 zeroed");
	expect_zeroed("ouro", 4, 1, 3, "model.norm.weight", "rank 3's model.norm zeroed");
}

/* The fixture is read as Qwen2's decoder without biases, the sandwich norms on, untied, GQA
 * 8 / 2, head_dim 16, rms_norm_eps 1e-6, rope_theta 1e6, three passes. */
static void test_ouro_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "ouro");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.ouro && c.sandwich && c.gemma == 0 && !c.layernorm &&
	            !c.fused_ckpt && !c.tied && c.H == 8 && c.KV == 2 && c.d == 16 && c.I == 192 &&
	            c.L == 2 && c.hid == 128 && c.V == 1000 && c.act == REF_ACT_SILU &&
	            c.ouro_steps == STEPS);
	assert_true(fabs(c.eps - 1e-6) < 1e-12);
	assert_true(fabs(c.theta - 1e6) < 1e-3);
	ref_set_clear(&ck);
	close_model(&m);
}

#define OU_CFG(steps)                                                                              \
	"{\"architectures\": [\"OuroForCausalLM\"], \"model_type\": \"ouro\", \"hidden_size\": "   \
	"128, \"intermediate_size\": 192, \"num_attention_heads\": 8, \"num_key_value_heads\": "   \
	"2, \"num_hidden_layers\": 2, \"vocab_size\": 1000" steps "}"

/* total_ut_steps absent is OuroConfig's (and vLLM's getattr) 4; 0, 65 and a non-integer are
 * refused naming the key; OuroConfig's defaults fill what the text leaves out. */
static void test_ouro_config_json(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	const char *j = OU_CFG("");
	assert_int_equal(ref_cfg_parse_json(j, strlen(j), &c, &err), WT_OK);
	assert_true(c.ouro && c.ouro_steps == 4 && fabs(c.eps - 1e-6) < 1e-12 &&
	            fabs(c.theta - 1e6) < 1e-3 && !c.tied);
	j = OU_CFG(", \"total_ut_steps\": 1");
	assert_int_equal(ref_cfg_parse_json(j, strlen(j), &c, &err), WT_OK);
	assert_int_equal(c.ouro_steps, 1);
	expect_cfg(OU_CFG(", \"total_ut_steps\": 0"), WT_ECORRUPT, "total_ut_steps");
	expect_cfg(OU_CFG(", \"total_ut_steps\": 65"), WT_EUNSUPPORTED, "total_ut_steps");
	expect_cfg(OU_CFG(", \"total_ut_steps\": 2.5"), WT_ECORRUPT, "total_ut_steps");
	expect_cfg(OU_CFG(", \"is_causal\": false"), WT_EUNSUPPORTED, "is_causal");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ouro_pass),   cmocka_unit_test(test_ouro_torch),
	    cmocka_unit_test(test_ouro_loop),   cmocka_unit_test(test_ouro_caught),
	    cmocka_unit_test(test_ouro_config), cmocka_unit_test(test_ouro_config_json),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
