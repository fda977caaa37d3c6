/*
 * test_reference_deepseek_v32.c — the reference forward pass over DeepSeek-V3.2
 * (DeepseekV32ForCausalLM; fixture deepseek_v32): DeepSeek-V3's pass (MLA with q LoRA, layer 0
 * dense, sigmoid routing with the correction bias, one shared expert, the MTP layer unread). The
 * test tokens are far fewer than index_topk (2048), so the lightning indexer keeps every earlier
 * token and V3.2's sparse attention is V3's dense attention: the indexer tensors are not read,
 * and their cut is checked by test_shardmap_deepseek_v32 (bytes) and shard_python's numpy
 * oracle, not by these logits. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8,
 * TP 2 x EP 2) or the quantized layouts' budgets; the full path's logits equal transformers
 * 4.57.1's DeepseekV3ForCausalLM built from the same weights (the indexer and MTP tensors left
 * out, every other key loaded strictly; eager, float32) at 28 points; rank tensors broken the
 * way a wrong planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family
 * deepseek_v32 (hid 256, H 8, q_lora 128, kv_lora 64, nope / rope / v 32, 4 experts + 1 shared,
 * V 1024, 2 layers + MTP, BF16; seed printed).
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
#define A1 L1 "self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"deepseek_v32"};
	return gen_fixtures("reference_dsv32", fams, 1);
}

static void test_v32_pass(void **state)
{
	(void)state;
	expect_pass_tp("deepseek_v32", true);
	expect_pass("deepseek_v32", 2, 2, WT_QUANT_NONE, 0);
	expect_pass("deepseek_v32", 1, 4, WT_QUANT_NONE, 0);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: DeepseekV3ForCausalLM over
 * DeepseekV3Config(**config.json) with the fixture's tensors but the 15 indexer ones and the MTP
 * layer's (load_state_dict strict: no missing or unexpected key), eager, float32; all 7 x 1024
 * logits within 6.3e-7 of the reference's (largest 1.27) */
static const gold_pt gold_v32[] = {
    {0, 0, -3.276807070e-01f},    {0, 341, -6.050512195e-02f},  {0, 682, 2.760078013e-01f},
    {0, 1023, -9.962993860e-02f}, {1, 0, -3.217687011e-01f},    {1, 341, 1.668795943e-01f},
    {1, 682, -7.641194761e-02f},  {1, 1023, 7.939255238e-02f},  {2, 0, -3.463860452e-01f},
    {2, 341, -1.759019792e-01f},  {2, 682, -1.951596141e-01f},  {2, 1023, 1.085133553e-01f},
    {3, 0, -2.679123878e-01f},    {3, 341, 2.340847999e-02f},   {3, 682, 4.540880024e-02f},
    {3, 1023, -6.393459439e-02f}, {4, 0, -1.593067348e-01f},    {4, 341, -5.097987503e-02f},
    {4, 682, 9.738049656e-02f},   {4, 1023, -1.334827840e-01f}, {5, 0, -3.078782558e-01f},
    {5, 341, -1.247158200e-01f},  {5, 682, 1.678399742e-01f},   {5, 1023, 2.528262138e-02f},
    {6, 0, -1.476498246e-01f},    {6, 341, -1.963801235e-01f},  {6, 682, 1.609545350e-01f},
    {6, 1023, 1.002267897e-01f}};

#define GOLD_TOL 1e-5

static void test_v32_transformers(void **state)
{
	(void)state;
	expect_gold("deepseek_v32", 1024, GOLD_TOL, gold_v32,
	            sizeof(gold_v32) / sizeof(gold_v32[0]));
}

static void test_v32_caught(void **state)
{
	(void)state;
	const char *f = "deepseek_v32";
	expect_swapped(f, 2, 1, A1 "q_b_proj.weight", "the ranks' q_b_proj heads exchanged");
	expect_swapped(f, 2, 1, A1 "kv_b_proj.weight", "the ranks' kv_b_proj heads exchanged");
	expect_swapped(f, 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_swapped(f, 2, 1, "model.layers.0.mlp.gate_up_proj.weight",
	               "the dense layer's gate_up rows exchanged");
	expect_zeroed(f, 2, 1, 1, A1 "kv_a_layernorm.weight", "rank 1's kv_a_layernorm zeroed");
	expect_zeroed(f, 2, 1, 1, A1 "q_a_proj.weight", "rank 1's q_a_proj zeroed");
	expect_zeroed(f, 2, 1, 1, L1 "mlp.gate.e_score_correction_bias",
	              "rank 1's correction bias zeroed");
	expect_zeroed(f, 2, 1, 0, L1 "mlp.shared_experts.down_proj.weight",
	              "rank 0's shared expert down_proj zeroed");
	expect_stacks_swapped(f, 1, 2, L1 "mlp.experts.", "the EP ranks' expert stacks exchanged");
}

/* The indexer is not read by the pass (it selects every earlier token here): its tensors
 * zeroed on a rank leave the check passing, which is why its cut is the planner tests' and the
 * numpy oracle's to check. */
static void test_v32_indexer_unread(void **state)
{
	(void)state;
	static const char *const leaf[] = {"wq_b.weight", "wk.weight", "k_norm.weight",
	                                   "k_norm.bias", "weights_proj.weight"};
	for (size_t k = 0; k < sizeof(leaf) / sizeof(leaf[0]); k++) {
		char n[200];
		snprintf(n, sizeof(n), A1 "indexer.%s", leaf[k]);
		tamper_at a = {n, 1};
		ref_result res;
		wt_errbuf err = {0};
		assert_int_equal(
		    run("deepseek_v32", 2, 1, WT_QUANT_NONE, 0, tamper_zero, &a, &res, &err),
		    WT_OK);
		assert_true(res.pass);
		assert_true(res.diff.max_abs_diff <= REF_TOL_F32 * res.diff.max_abs_ref);
	}
}

/* The fixture is read as DeepSeek-V3: kind REF_DEEPSEEK, V3's routing (not V2's, not
 * GLM-4.5's), its MLA sizes, layer 0 dense, 2 layers (the MTP layer not run). */
static void test_v32_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "deepseek_v32");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DEEPSEEK && !c.ds_v2 && !c.glm4_moe && !c.ds_moe && !c.tied &&
	            c.H == 8 && c.L == 2 && c.hid == 256 && c.V == 1024 && c.q_lora == 128 &&
	            c.kv_lora == 64 && c.nope == 32 && c.rope == 32 && c.vhd == 32 &&
	            c.first_dense == 1 && c.n_group == 1 && c.topk_group == 1 && c.norm_topk);
	assert_true(fabs(c.routed_scale - 2.5) < 1e-12);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v32_pass),   cmocka_unit_test(test_v32_transformers),
	    cmocka_unit_test(test_v32_caught), cmocka_unit_test(test_v32_indexer_unread),
	    cmocka_unit_test(test_v32_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
