/*
 * test_reference_internlm2_ve.c — the reference forward pass over InternLM2-VE
 * (InternLM2VEForCausalLM, remote code, Mono-InternVL's language model; fixture internlm2_ve):
 * InternLM2's decoder (wqkv packed per kv group, read under Llama's names, reference/internlm2.c)
 * on text tokens, where vLLM's InternLM2VEDecoderLayer runs feed_forward alone: the visual
 * expert feed_forward_ve is cut by the planner but never read here. Full and sharded logits
 * agree within REF_TOL_F32 (TP 1, 2, 4, 8: four kv heads split at TP 2 / 4, replicated at TP 8)
 * or the quantized layouts' budgets; the full path's logits equal transformers 4.57.1's
 * LlamaForCausalLM built from the same weights less feed_forward_ve (wqkv unpacked as the remote
 * code's rearrange reads it, the names mapped; eager, float32) at 28 points; rank tensors broken
 * the way a wrong planner would break them are caught, while feed_forward_ve broken (in a rank's
 * set or the checkpoint) leaves every logit as it was. Fixture from $WT_BUILD/wt-mkckpt --family
 * internlm2_ve (hid 128, H 8, KV 4, I 192, V 1000, 2 layers, untied; seed printed).
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

#define FAM "internlm2_ve"
#define L1  "model.layers.1."
#define VOC 1000

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_internlm2_ve", fams, 1);
}

static void test_ve_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: LlamaForCausalLM.load_state_dict
 * (strict: no missing or unexpected key) of the fixture less its six feed_forward_ve tensors,
 * wqkv unpacked and the names mapped, eager, float32; all 7 x 1000 logits within 4.4e-7 of the
 * reference's (largest 0.984) */
static const gold_pt gold_ve[] = {
    {0, 0, 1.156206243e-02f},    {0, 333, -2.968018316e-02f}, {0, 666, 2.365462333e-01f},
    {0, 999, 5.778772011e-02f},  {1, 0, -6.173851341e-02f},   {1, 333, -8.970930427e-02f},
    {1, 666, 2.579869032e-01f},  {1, 999, 1.652823389e-01f},  {2, 0, -5.248668417e-02f},
    {2, 333, -1.079139113e-01f}, {2, 666, 2.803174555e-01f},  {2, 999, 6.585120410e-02f},
    {3, 0, -3.693676740e-02f},   {3, 333, -1.029313728e-01f}, {3, 666, 3.432253301e-01f},
    {3, 999, 1.815590262e-01f},  {4, 0, -1.441647559e-01f},   {4, 333, 2.536929399e-02f},
    {4, 666, 2.092225850e-01f},  {4, 999, 2.283981591e-01f},  {5, 0, -1.012613475e-01f},
    {5, 333, 1.735732704e-01f},  {5, 666, 2.843764126e-01f},  {5, 999, 1.455894262e-01f},
    {6, 0, -9.920421988e-02f},   {6, 333, 5.248259008e-02f},  {6, 666, 2.608547807e-01f},
    {6, 999, 1.065634787e-01f},
};

#define GOLD_TOL 1e-5

static void test_ve_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, VOC, GOLD_TOL, gold_ve, sizeof(gold_ve) / sizeof(gold_ve[0]));
}

static void test_ve_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "attention.wqkv.weight", "the ranks' q/k/v heads exchanged");
	expect_swapped(FAM, 2, 1, L1 "attention.wo.weight", "wo columns exchanged");
	expect_swapped(FAM, 2, 1, L1 "feed_forward.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped(FAM, 2, 1, L1 "feed_forward.w2.weight", "w2 columns exchanged");
	expect_swapped(FAM, 8, 1, L1 "attention.wqkv.weight",
	               "ranks 0 and 1's q heads exchanged (their kv head replicated)");
	expect_zeroed(FAM, 4, 1, 1, L1 "feed_forward.gate_up_proj.weight",
	              "rank 1's gate_up_proj lost");
	expect_halves_swapped(
	    FAM, 2, 1, (tamper_halves){L1 "feed_forward.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	    "rank 0's gate / up halves exchanged");
}

static void zero_ve(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	for (uint32_t i = 0; i < n; i++)
		for (int l = 0; l < 2; l++) {
			char a[128], b[128];
			snprintf(a, sizeof(a),
			         "model.layers.%d.feed_forward_ve.gate_up_proj.weight", l);
			snprintf(b, sizeof(b), "model.layers.%d.feed_forward_ve.w2.weight", l);
			ref_tensor *t = find_tensor(&r[i], a), *u = find_tensor(&r[i], b);
			memset(t->data, 0, t->nbytes);
			memset(u->data, 0, u->nbytes);
		}
}

/* Text only: every rank's feed_forward_ve (present in each rank's set) zeroed leaves the check's
 * sharded logits as they were (the same largest difference and output at TP 1 and 2), and the
 * checkpoint's feed_forward_ve zeroed leaves the full path's logits bit for bit, where zeroing
 * its feed_forward.w1 moves them. */
static void test_ve_unused(void **state)
{
	(void)state;
	for (uint32_t tp = 1; tp <= 2; tp++) {
		ref_result a, b;
		wt_errbuf err = {0};
		assert_int_equal(run(FAM, tp, 1, WT_QUANT_NONE, 0, NULL, NULL, &a, &err), WT_OK);
		assert_int_equal(run(FAM, tp, 1, WT_QUANT_NONE, 0, zero_ve, NULL, &b, &err), WT_OK);
		assert_true(a.pass && b.pass);
		assert_true(a.diff.max_abs_diff == b.diff.max_abs_diff &&
		            a.diff.max_abs_ref == b.diff.max_abs_ref);
	}
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	float *base = malloc(sizeof(float) * N_TOK * VOC),
	      *out = malloc(sizeof(float) * N_TOK * VOC);
	assert_true(base != NULL && out != NULL);
	logits_with(&c, &ck, base);
	static const char *const ve[] = {"feed_forward_ve.w1.weight", "feed_forward_ve.w3.weight",
	                                 "feed_forward_ve.w2.weight"};
	for (int l = 0; l < 2; l++)
		for (size_t k = 0; k < 3; k++) {
			char name[128];
			snprintf(name, sizeof(name), "model.layers.%d.%s", l, ve[k]);
			ref_tensor *t = find_tensor(&ck, name);
			memset(t->data, 0, t->nbytes);
		}
	logits_with(&c, &ck, out);
	assert_memory_equal(base, out, sizeof(float) * N_TOK * VOC);
	ref_tensor *w1 = find_tensor(&ck, L1 "feed_forward.w1.weight");
	memset(w1->data, 0, w1->nbytes);
	logits_with(&c, &ck, out);
	expect_moved(base, out, N_TOK * VOC, 0.01, "feed_forward.w1 zeroed");
	free(base);
	free(out);
	ref_set_clear(&ck);
	close_model(&m);
}

/* The fixture is read as InternLM2: Llama's decoder, RMSNorms, the gated MLP, wqkv unpacked,
 * untied, the fixture's eps and rope_theta; renamed, it holds no feed_forward_ve tensor. */
static void test_ve_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.internlm2 && c.kind == REF_DENSE && !c.fused_ckpt && !c.layernorm &&
	            !c.plain_mlp && !c.tied && c.H == 8 && c.KV == 4 && c.d == 16 && c.I == 192 &&
	            c.L == 2 && c.hid == 128 && c.V == VOC);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 1e6) < 1e-6);
	/* read under Llama's names, the visual expert left out */
	ref_set r = {0};
	assert_int_equal(ref_rename_own(&c, &ck, &r, true, &err), WT_OK);
	assert_non_null(ref_set_find(&r, L1 "mlp.gate_proj.weight"));
	assert_non_null(ref_set_find(&r, L1 "self_attn.k_proj.weight"));
	for (size_t i = 0; i < r.n; i++)
		assert_null(strstr(r.t[i].name, "feed_forward_ve"));
	ref_set_clear(&r);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ve_pass),   cmocka_unit_test(test_ve_transformers),
	    cmocka_unit_test(test_ve_caught), cmocka_unit_test(test_ve_unused),
	    cmocka_unit_test(test_ve_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
