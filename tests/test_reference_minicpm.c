/*
 * test_reference_minicpm.c — the reference forward pass over MiniCPM (MiniCPMForCausalLM,
 * remote code; fixture minicpm): Llama's decoder under Llama's names with MiniCPM's three
 * scalings (reference/cfg_minicpm.c): embeddings times scale_emb, each block's output times
 * scale_depth / sqrt(num_hidden_layers), the logits divided by hidden_size / dim_model_base.
 * Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8: the two kv heads split at
 * TP 2, replicated at TP 4 and 8) or the quantized layouts' budgets; the full path's logits
 * equal transformers 4.57.1's GraniteForCausalLM built from the same weights (its four
 * multipliers set to MiniCPM's; eager, float32) at 28 points; rank tensors broken the way a
 * wrong planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family minicpm
 * (hid 128, H 8, KV 2, I 192, V 1000, 2 layers, tied; seed printed).
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
	static const char *fams[] = {"minicpm"};
	return gen_fixtures("reference_minicpm", fams, 1);
}

static void test_minicpm_pass(void **state)
{
	(void)state;
	expect_pass_tp("minicpm", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: GraniteForCausalLM.from_pretrained
 * of the fixture (strict: no missing, unexpected or mismatched key), embedding_multiplier
 * scale_emb 12, residual_multiplier scale_depth / sqrt(2), attention_multiplier 16^-0.5,
 * logits_scaling 128 / dim_model_base 32, eager, float32; LlamaForCausalLM's blocks with the
 * three scalings applied around them give the same logits exactly. All 7 x 1000 within
 * 2.4e-7 of the reference's (largest 0.664); Llama without them moves by 0.73 */
static const gold_pt gold_minicpm[] = {
    {0, 0, -5.330103263e-02f},   {0, 333, 1.171539649e-01f},  {0, 666, -3.124418482e-02f},
    {0, 999, 5.645124242e-03f},  {1, 0, -5.065656733e-03f},   {1, 333, -2.257190645e-02f},
    {1, 666, 3.629004583e-02f},  {1, 999, 6.096218228e-01f},  {2, 0, 6.014701910e-03f},
    {2, 333, 3.608145937e-02f},  {2, 666, 5.080970470e-03f},  {2, 999, 6.351478398e-02f},
    {3, 0, -4.814009741e-02f},   {3, 333, 4.957622662e-02f},  {3, 666, 1.072138920e-01f},
    {3, 999, 2.035538293e-02f},  {4, 0, 4.427397624e-03f},    {4, 333, 1.000971161e-02f},
    {4, 666, -3.723090887e-02f}, {4, 999, -7.561264187e-02f}, {5, 0, -1.033276170e-01f},
    {5, 333, 8.366043121e-02f},  {5, 666, 6.874245405e-02f},  {5, 999, -1.747967303e-02f},
    {6, 0, -2.041314170e-02f},   {6, 333, -2.363280021e-02f}, {6, 666, 2.157005072e-01f},
    {6, 999, -7.137574255e-03f}};

#define GOLD_TOL 1e-5

static void test_minicpm_transformers(void **state)
{
	(void)state;
	expect_gold("minicpm", 1000, GOLD_TOL, gold_minicpm,
	            sizeof(gold_minicpm) / sizeof(gold_minicpm[0]));
}

static void test_minicpm_caught(void **state)
{
	(void)state;
	expect_swapped("minicpm", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("minicpm", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("minicpm", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("minicpm", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_swapped("minicpm", 4, 1, L1 "self_attn.qkv_proj.weight",
	               "ranks 0 and 1's q heads exchanged (their kv head replicated)");
	expect_halves_swapped("minicpm", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
}

/* The fixture is read as Llama's decoder (RMSNorms, the gated MLP, q/k/v unfused, tied by
 * MiniCPMConfig's default) with scale_emb 12, scale_depth 1.4 over 2 layers and
 * dim_model_base 32 as Granite's multipliers. */
static void test_minicpm_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "minicpm");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.minicpm && c.kind == REF_DENSE && !c.fused_ckpt && !c.layernorm &&
	            !c.plain_mlp && c.tied && c.H == 8 && c.KV == 2 && c.d == 16 && c.I == 192 &&
	            c.L == 2 && c.hid == 128 && c.V == 1000 && c.act == REF_ACT_SILU);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 1e4) < 1e-6);
	assert_true(fabsf(c.embed_scale - 12.0f) < 1e-6f);
	assert_true(fabs(c.resid_mult - 1.4 / sqrt(2.0)) < 1e-12);
	assert_true(fabs(c.logits_div - 4.0) < 1e-12);
	assert_true(c.attn_scale == 0.0);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_minicpm_pass),
	    cmocka_unit_test(test_minicpm_transformers),
	    cmocka_unit_test(test_minicpm_caught),
	    cmocka_unit_test(test_minicpm_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
