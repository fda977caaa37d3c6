/*
 * test_reference_minicpm_moe.c — the reference forward pass over MiniCPM-MoE (MiniCPMForCausalLM
 * with num_experts > 0, remote code; fixture minicpm_moe): MiniCPM's decoder and three scalings
 * (reference/cfg_minicpm.c) with vLLM's MiniCPMMoE in every layer, routed as Mixtral's (kind
 * REF_MIXTRAL under mlp.: softmax over mlp.gate's logits, top num_experts_per_tok,
 * renormalized, as fused_moe(renormalize=True)), each expert SiLU(w1 x) * (w3 x) then w2, the
 * MoE output scaled by scale_depth / sqrt(num_hidden_layers) like the dense MLP's. Full and
 * sharded logits agree within REF_TOL_F32 (TP 1, 2, 4: every expert on every rank, cut by tp in
 * mlp.ws / mlp.w2s) or the quantized layouts' budgets (the experts stay unquantized); the full
 * path's logits equal a transformers 4.57.1 model built from its blocks (GraniteForCausalLM with
 * MiniCPM's multipliers, each layer's MLP a MixtralSparseMoeBlock; eager, float32) at 28
 * points; rank tensors broken the way a wrong planner would break them are caught. Fixture
 * from $WT_BUILD/wt-mkckpt --family minicpm_moe (hid 128, H 8, KV 2, I 64, 4 experts top-2,
 * V 1000, 2 layers, tied; seed printed).
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
	static const char *fams[] = {"minicpm_moe"};
	return gen_fixtures("reference_minicpm_moe", fams, 1);
}

/* w13_order up_gate (FusedMoE's) leaves mlp.ws [w1; w3]: the planner and the check agree. */
static void test_minicpm_moe_pass(void **state)
{
	(void)state;
	expect_pass("minicpm_moe", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("minicpm_moe", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("minicpm_moe", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("minicpm_moe", 2, 1, WT_QUANT_NONE, 1);
	expect_pass("minicpm_moe", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("minicpm_moe", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: GraniteForCausalLM with
 * embedding_multiplier scale_emb 12, residual_multiplier scale_depth 1.4 / sqrt(2),
 * attention_multiplier 16^-0.5, logits_scaling 128 / dim_model_base 32, each layer's MLP
 * replaced by a MixtralSparseMoeBlock (4 experts, top-2; it renormalizes the top-k softmax as
 * vLLM's fused_moe(renormalize=True)); from_pretrained of the fixture (no missing, unexpected or
 * mismatched key; lm_head tied to embed_tokens), eager, float32. All 7 x 1000 logits within
 * 1.8e-7 of the reference's (largest 0.666); the top-k weights left unnormalized move them by
 * 0.0033 */
static const gold_pt gold_minicpm_moe[] = {
    {0, 0, -5.562993884e-02f},   {0, 333, 1.191158816e-01f},  {0, 666, -3.584774211e-02f},
    {0, 999, 5.105755292e-03f},  {1, 0, -2.777567599e-03f},   {1, 333, -2.030575462e-02f},
    {1, 666, 3.271389753e-02f},  {1, 999, 6.096218228e-01f},  {2, 0, 3.753350582e-03f},
    {2, 333, 3.410507739e-02f},  {2, 666, 7.698065601e-03f},  {2, 999, 7.397961617e-02f},
    {3, 0, -4.444432259e-02f},   {3, 333, 4.829442874e-02f},  {3, 666, 1.110832542e-01f},
    {3, 999, 1.438402757e-02f},  {4, 0, 8.377948776e-03f},    {4, 333, 1.123477519e-02f},
    {4, 666, -3.760857880e-02f}, {4, 999, -7.981596887e-02f}, {5, 0, -1.079242975e-01f},
    {5, 333, 8.429707587e-02f},  {5, 666, 6.196780503e-02f},  {5, 999, -1.644940488e-02f},
    {6, 0, -2.002818882e-02f},   {6, 333, -2.472167462e-02f}, {6, 666, 2.153802067e-01f},
    {6, 999, -1.130728982e-02f}};

#define GOLD_TOL 1e-5

static void test_minicpm_moe_transformers(void **state)
{
	(void)state;
	expect_gold("minicpm_moe", 1000, GOLD_TOL, gold_minicpm_moe,
	            sizeof(gold_minicpm_moe) / sizeof(gold_minicpm_moe[0]));
}

/* ws at TP 2: 4 experts of [w1 rows; w3 rows], 32 rows each, F32 rows of 128. */
static void test_minicpm_moe_caught(void **state)
{
	(void)state;
	expect_swapped("minicpm_moe", 2, 1, L1 "mlp.ws", "the ranks' ws rows exchanged");
	expect_swapped("minicpm_moe", 2, 1, L1 "mlp.w2s", "the ranks' w2s columns exchanged");
	expect_swapped("minicpm_moe", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_halves_swapped("minicpm_moe", 2, 1, (tamper_halves){L1 "mlp.ws", 0, 4, 32, 128 * 4},
	                      "rank 0's w1 / w3 halves exchanged in every expert");
}

/* The fixture is read as MiniCPM's decoder with Mixtral's routing under mlp.: 4 experts of
 * intermediate_size 64, top-2 renormalized, no shared expert, every layer MoE. */
static void test_minicpm_moe_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "minicpm_moe");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.minicpm && !c.minicpm3 && c.kind == REF_MIXTRAL && c.E == 4 && c.topk == 2 &&
	            c.Ie == 64 && c.Is == 0 && c.norm_topk && c.tied && c.act == REF_ACT_SILU);
	assert_true(ref_layer_is_moe(&c, 0) && ref_layer_is_moe(&c, 1));
	char p[64];
	ref_moe_prefix(&c, 1, p, sizeof(p));
	assert_string_equal(p, L1 "mlp.");
	assert_true(fabsf(c.embed_scale - 12.0f) < 1e-6f);
	assert_true(fabs(c.resid_mult - 1.4 / sqrt(2.0)) < 1e-12);
	assert_true(fabs(c.logits_div - 4.0) < 1e-12);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_minicpm_moe_pass),
	    cmocka_unit_test(test_minicpm_moe_transformers),
	    cmocka_unit_test(test_minicpm_moe_caught),
	    cmocka_unit_test(test_minicpm_moe_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
