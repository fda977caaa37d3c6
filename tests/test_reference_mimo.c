/*
 * test_reference_mimo.c — the reference forward pass over MiMo (MiMoForCausalLM, remote code;
 * fixture mimo): Qwen2's decoder as vLLM's mimo.py runs it (q/k/v biases, no o_proj or MLP
 * bias, GQA 8 / 2, rope_theta 640000, rms_norm_eps 1e-5, untied); the checkpoint's
 * multi-token-prediction layer (model.mtp_layers.0.*) is the draft's and takes no part. Full
 * and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts'
 * budgets; the full path's logits equal transformers 4.57.1's Qwen2ForCausalLM built from the
 * main model's weights (eager, float32) at 28 points; rank tensors broken the way a wrong
 * planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family mimo (hid 128,
 * H 8, KV 2, d 16, I 192, V 1000, 2 layers, 1 MTP layer, untied; seed printed).
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

#define L1 "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"mimo"};
	return gen_fixtures("reference_mimo", fams, 1);
}

static void test_mimo_pass(void **state)
{
	(void)state;
	expect_pass_tp("mimo", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: Qwen2ForCausalLM.from_pretrained
 * of the fixture's config (auto_map, model_type and num_nextn_predict_layers left out) and its
 * tensors less the 16 model.mtp_layers.0.* (strict: no missing, unexpected or mismatched key),
 * eager, float32; all 7 x 1000 logits within 4.5e-7 of the reference's (largest 0.791) */
static const gold_pt gold_mimo[] = {
    {0, 0, 1.492795348e-01f},    {0, 333, 2.696602643e-01f},  {0, 666, 1.313108802e-01f},
    {0, 999, 4.337066412e-02f},  {1, 0, 2.515132912e-02f},    {1, 333, 4.152732715e-02f},
    {1, 666, -1.452898085e-01f}, {1, 999, -1.935165972e-01f}, {2, 0, -3.276951611e-02f},
    {2, 333, 3.813476115e-02f},  {2, 666, -2.458458692e-01f}, {2, 999, -3.796360493e-01f},
    {3, 0, 1.253382862e-01f},    {3, 333, 1.377272606e-01f},  {3, 666, -3.910069913e-02f},
    {3, 999, -3.661271930e-01f}, {4, 0, 9.168254584e-02f},    {4, 333, 7.961286604e-02f},
    {4, 666, -1.806131005e-02f}, {4, 999, -3.387978375e-01f}, {5, 0, 1.900569052e-01f},
    {5, 333, 2.089282125e-01f},  {5, 666, -4.376257583e-02f}, {5, 999, -3.472474515e-01f},
    {6, 0, 1.671359092e-01f},    {6, 333, 4.818816856e-02f},  {6, 666, 9.591682255e-02f},
    {6, 999, -2.591367960e-01f}};

#define GOLD_TOL 1e-5

static void test_mimo_transformers(void **state)
{
	(void)state;
	expect_gold("mimo", 1000, GOLD_TOL, gold_mimo, sizeof(gold_mimo) / sizeof(gold_mimo[0]));
}

static void test_mimo_caught(void **state)
{
	(void)state;
	expect_swapped("mimo", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("mimo", 2, 1, L1 "self_attn.qkv_proj.bias",
	               "the ranks' q/k/v bias heads exchanged");
	expect_zeroed("mimo", 2, 1, 1, L1 "self_attn.qkv_proj.bias", "rank 1's q/k/v biases lost");
	expect_swapped("mimo", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("mimo", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("mimo", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_halves_swapped("mimo", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
}

/* The fixture is read as Qwen2's decoder: RMSNorms, the gated MLP (silu), q/k/v unfused,
 * untied (MiMoConfig's default and the release's), GQA 8 / 2, head_dim 16 (hid / H),
 * rms_norm_eps 1e-5, rope_theta 640000; the MTP layer's tensors take no part. */
static void test_mimo_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "mimo");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && !c.fused_ckpt && !c.layernorm && !c.plain_mlp &&
	            !c.tied && c.H == 8 && c.KV == 2 && c.d == 16 && c.I == 192 && c.L == 2 &&
	            c.hid == 128 && c.V == 1000 && c.act == REF_ACT_SILU);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 640000.0) < 1e-3);
	/* the MTP layer's tensors are read with the checkpoint but take no part: its input_proj
	 * and q_proj filled with garbage leave every logit as it was */
	size_t nl = 7 * 1000;
	float *a = malloc(nl * sizeof(float)), *b = malloc(nl * sizeof(float));
	assert_true(a != NULL && b != NULL);
	logits_with(&c, &ck, a);
	const char *mtp[] = {"model.mtp_layers.0.input_proj.weight",
	                     "model.mtp_layers.0.self_attn.q_proj.weight"};
	for (size_t k = 0; k < 2; k++) {
		ref_tensor *t = find_tensor(&ck, mtp[k]);
		memset(t->data, 0x7f, t->nbytes);
	}
	logits_with(&c, &ck, b);
	assert_memory_equal(a, b, nl * sizeof(float));
	free(a);
	free(b);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mimo_pass),
	    cmocka_unit_test(test_mimo_transformers),
	    cmocka_unit_test(test_mimo_caught),
	    cmocka_unit_test(test_mimo_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
