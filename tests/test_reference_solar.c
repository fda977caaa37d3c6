/*
 * test_reference_solar.c — the reference forward pass over Solar (SolarForCausalLM, remote code;
 * fixture solar): Llama's decoder under Llama's names, as vLLM's solar.py runs it, with the block
 * skip connections inside the fixture's four layers (bskcn_1 [1, 2], bskcn_2 [1], bskcn_3 [3],
 * bskcn_4 [2], bskcn_tv [0.9, 0.7]: 0.7 at inference), no biases, GQA 8 / 2, rms_norm_eps 1e-5.
 * Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts'
 * budgets; the full path's logits equal transformers 4.57.1's LlamaForCausalLM built from the
 * same weights and run layer by layer with SolarModel.forward's skips (eager, float32) at 28
 * points, and the skips move them; rank tensors broken the way a wrong planner would break them
 * are caught. Fixture from $WT_BUILD/wt-mkckpt --family solar (hid 128, H 8, KV 2, d 16, I 192,
 * V 1000, 4 layers, untied; seed printed).
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
#define L3 "model.layers.3."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"solar"};
	return gen_fixtures("reference_solar", fams, 1);
}

static void test_solar_pass(void **state)
{
	(void)state;
	expect_pass_tp("solar", true);
}

/* (token, column, value), tokens g_tokens: LlamaForCausalLM.from_pretrained of the fixture
 * (strict: no missing, unexpected or mismatched key; attention_bias / mlp_bias false, GQA 8 / 2,
 * rope_theta 1e4, rms_norm_eps 1e-5), eager, float32, its layers run by a torch loop written from
 * vLLM's SolarModel.forward (hidden_states and residual apart, both saved and mixed); all 7 x
 * 1000 logits within 5.4e-7 (largest 0.893) of the reference's */
static const gold_pt gold_solar[] = {
    {0, 0, 3.044283986e-01f},    {0, 333, 3.311848640e-01f},  {0, 666, 9.045112878e-02f},
    {0, 999, -5.091330782e-02f}, {1, 0, 1.663140506e-01f},    {1, 333, 1.551590208e-02f},
    {1, 666, -1.700869501e-01f}, {1, 999, -2.164389193e-01f}, {2, 0, 9.144204855e-02f},
    {2, 333, -3.325943649e-02f}, {2, 666, -3.056644499e-01f}, {2, 999, -3.149205446e-01f},
    {3, 0, 1.807746589e-01f},    {3, 333, 1.545519009e-02f},  {3, 666, -1.887832135e-01f},
    {3, 999, -2.796242237e-01f}, {4, 0, 1.587475091e-01f},    {4, 333, -2.652770653e-02f},
    {4, 666, -2.000407279e-01f}, {4, 999, -2.641473114e-01f}, {5, 0, 2.327215523e-01f},
    {5, 333, 6.794188917e-02f},  {5, 666, -2.632056177e-01f}, {5, 999, -2.692573965e-01f},
    {6, 0, 2.108629942e-01f},    {6, 333, -6.117337942e-02f}, {6, 666, -2.009542584e-01f},
    {6, 999, -2.132875621e-01f},
};

#define GOLD_TOL 1e-5

static void test_solar_transformers(void **state)
{
	(void)state;
	expect_gold("solar", 1000, GOLD_TOL, gold_solar,
	            sizeof(gold_solar) / sizeof(gold_solar[0]));
}

/* The skips move the logits: the same pass with them off (plain Llama) differs. */
static void test_solar_skips_matter(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "solar");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	float *a = malloc(N_TOK * 1000 * sizeof(float)), *b = malloc(N_TOK * 1000 * sizeof(float));
	assert_true(a != NULL && b != NULL);
	logits_with(&c, &ck, a);
	c.solar = false;
	logits_with(&c, &ck, b);
	expect_moved(a, b, N_TOK * 1000, 0.01, "solar without its skip connections");
	c.solar = true;
	c.sk_tv = 0.9; /* bskcn_tv[0], training's */
	logits_with(&c, &ck, b);
	expect_moved(a, b, N_TOK * 1000, 0.001, "solar with bskcn_tv[0]");
	free(a);
	free(b);
	ref_set_clear(&ck);
	close_model(&m);
}

static void test_solar_caught(void **state)
{
	(void)state;
	expect_swapped("solar", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("solar", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("solar", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("solar", 2, 1, L3 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_halves_swapped("solar", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
	expect_zeroed("solar", 4, 1, 3, L3 "self_attn.o_proj.weight",
	              "rank 3's last-layer o_proj dropped");
}

/* The fixture is read as Llama's decoder plus the skips: RMSNorms, the gated MLP (silu), q/k/v
 * unfused, no biases, untied, GQA 8 / 2, head_dim 16, rms_norm_eps 1e-5, rope_theta 1e4; saves
 * at 1, 2 (bskcn_1) and 1 (bskcn_2), mixes at 3 (bskcn_3) and 2 (bskcn_4), tv 0.7. */
static void test_solar_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "solar");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.solar && c.read_act && !c.fused_ckpt && !c.layernorm &&
	            !c.plain_mlp && !c.tied && c.H == 8 && c.KV == 2 && c.d == 16 && c.I == 192 &&
	            c.L == 4 && c.hid == 128 && c.V == 1000 && c.act == REF_ACT_SILU);
	assert_true(c.sk_save[0][0] == 0x6u && c.sk_save[1][0] == 0x2u && c.sk_mix[0][0] == 0x8u &&
	            c.sk_mix[1][0] == 0x4u && c.sk_save[0][1] == 0 && c.sk_mix[1][3] == 0);
	assert_true(fabs(c.sk_tv - 0.7) < 1e-12 && fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 1e4) < 1e-3);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_solar_pass),         cmocka_unit_test(test_solar_transformers),
	    cmocka_unit_test(test_solar_skips_matter), cmocka_unit_test(test_solar_caught),
	    cmocka_unit_test(test_solar_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
