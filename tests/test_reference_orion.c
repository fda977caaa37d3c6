/*
 * test_reference_orion.c — the reference forward pass over Orion (OrionForCausalLM, remote
 * code; fixture orion): Llama's decoder under Llama's names, as vLLM's orion.py runs it, whose
 * input_layernorm, post_attention_layernorm and model.norm are nn.LayerNorm with weight and
 * bias (eps rms_norm_eps), no linear biases, grouped kv heads, rope_theta 10000. Full and
 * sharded logits agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the
 * full path's logits equal transformers 4.57.1's LlamaForCausalLM built from the same weights
 * with its three kinds of RMSNorm replaced by nn.LayerNorm (eager, float32) at 28 points; rank
 * tensors broken the way a wrong planner would break them are caught. Fixture from
 * $WT_BUILD/wt-mkckpt --family orion (hid 128, H 4, KV 2, d 32, I 192, V 1000, 2 layers,
 * untied; seed printed).
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

#define L1   "model.layers.1."
#define V_OR 1000

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"orion"};
	return gen_fixtures("reference_orion", fams, 1);
}

static void test_orion_pass(void **state)
{
	(void)state;
	expect_pass_tp("orion", false);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: LlamaForCausalLM.from_pretrained
 * of the fixture with input_layernorm, post_attention_layernorm and model.norm replaced by
 * nn.LayerNorm(128, eps 1e-5) before loading (strict: no missing, unexpected or mismatched key;
 * attention_bias / mlp_bias false, KV 2, rope_theta 10000), eager, float32; all 7 x 1000 logits
 * within 4.2e-7 of the reference's (largest 0.764; with the LayerNorms' biases zeroed
 * transformers moves by 0.037) */
static const gold_pt gold_orion[] = {
    {0, 0, -1.369148195e-01f},   {0, 333, 5.166949630e-01f},  {0, 666, -8.820492774e-02f},
    {0, 999, 2.736594081e-01f},  {1, 0, -1.285966933e-01f},   {1, 333, 3.112255335e-01f},
    {1, 666, -7.043747604e-02f}, {1, 999, 1.491433829e-01f},  {2, 0, -1.648839265e-01f},
    {2, 333, 2.546490431e-01f},  {2, 666, -8.833500743e-02f}, {2, 999, 7.751786709e-02f},
    {3, 0, -1.000895277e-01f},   {3, 333, 3.605302274e-01f},  {3, 666, 3.244779259e-02f},
    {3, 999, 5.927135795e-02f},  {4, 0, -1.681045294e-01f},   {4, 333, 3.227399588e-01f},
    {4, 666, 4.905045033e-02f},  {4, 999, 1.770455018e-02f},  {5, 0, -1.196298897e-01f},
    {5, 333, 3.542822599e-01f},  {5, 666, 1.882225275e-03f},  {5, 999, 6.139856204e-02f},
    {6, 0, -6.680035591e-02f},   {6, 333, 2.276868671e-01f},  {6, 666, 2.316676080e-02f},
    {6, 999, 1.521382630e-01f}};

#define GOLD_TOL 1e-5

static void test_orion_transformers(void **state)
{
	(void)state;
	expect_gold("orion", V_OR, GOLD_TOL, gold_orion,
	            sizeof(gold_orion) / sizeof(gold_orion[0]));
}

static void tamper_norm_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's post_attention_layernorm.bias (replicated, F32) zeroed */
	assert_int_equal(n, 2);
	ref_tensor *t = find_tensor(&r[0], L1 "post_attention_layernorm.bias");
	memset(t->data, 0, t->nbytes);
}

static void test_orion_caught(void **state)
{
	(void)state;
	expect_swapped("orion", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("orion", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("orion", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("orion", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_halves_swapped("orion", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
	expect_caught("orion", 2, 1, tamper_norm_bias, "rank 0's norm bias zeroed");
}

/* The fixture is read as Llama's decoder with LayerNorms (weight and bias), the gated MLP
 * (silu), q/k/v unfused without biases, untied, KV 2, head_dim 32 (hid / H), eps 1e-5,
 * rope_theta 10000; RMSNorm in their place moves the logits. */
static void test_orion_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "orion");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.orion && c.layernorm && c.read_act && !c.stablelm &&
	            !c.fused_ckpt && !c.plain_mlp && !c.tied && c.H == 4 && c.KV == 2 &&
	            c.d == 32 && c.I == 192 && c.L == 2 && c.hid == 128 && c.V == V_OR &&
	            c.act == REF_ACT_SILU);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 1e4) < 1e-6);
	size_t n = N_TOK * V_OR;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.layernorm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RMSNorm instead of LayerNorm");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define OR(extra)                                                                                  \
	"{\"architectures\": [\"OrionForCausalLM\"], \"model_type\": \"orion\", "                  \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"vocab_size\": 100, \"intermediate_size\": 96" extra "}"

/* OrionConfig's defaults where the keys are absent: eps 1e-5, rope_theta 10000, silu, untied;
 * the keys read where given, rope_scaling linear among them. */
static void test_orion_config_json(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char plain[] = OR(", \"num_key_value_heads\": 2");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.orion && c.layernorm && !c.tied && c.d == 16 && c.KV == 2 &&
	            c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	static const char set[] = OR(", \"num_key_value_heads\": 2, \"rms_norm_eps\": 1e-6, "
	                             "\"rope_theta\": 500.0, "
	                             "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 500.0, 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_orion_pass),        cmocka_unit_test(test_orion_transformers),
	    cmocka_unit_test(test_orion_caught),      cmocka_unit_test(test_orion_config),
	    cmocka_unit_test(test_orion_config_json),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
