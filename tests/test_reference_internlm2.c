/*
 * test_reference_internlm2.c — the reference forward pass over InternLM2 (InternLM2ForCausalLM,
 * remote code; fixture internlm2): Llama's decoder with q/k/v packed per kv group in wqkv
 * ([KV, H/KV + 2, d] rows), read under Llama's names (reference/internlm2.c). Full and sharded
 * logits agree within REF_TOL_F32 (TP 1, 2, 4, 8: the two kv heads split at TP 2, replicated
 * at TP 4 and 8) or the quantized layouts' budgets; the full path's logits equal transformers
 * 4.57.1's LlamaForCausalLM built from the same weights (wqkv unpacked as the remote code's
 * rearrange reads it, the names mapped; eager, float32) at 28 points; rank tensors broken the
 * way a wrong planner would break them are caught, among them two kv groups exchanged inside
 * a rank's wqkv and the checkpoint's packed rows passed through as they are. Fixture from
 * $WT_BUILD/wt-mkckpt --family internlm2 (hid 128, H 8, KV 2, I 192, V 1000, 2 layers,
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

#define L1    "model.layers.1."
#define IL_H  8
#define IL_KV 2
#define IL_D  16
#define IL_N  (IL_H / IL_KV)

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"internlm2"};
	return gen_fixtures("reference_internlm2", fams, 1);
}

static void test_internlm2_pass(void **state)
{
	(void)state;
	expect_pass_tp("internlm2", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: LlamaForCausalLM.from_pretrained
 * of the fixture with wqkv unpacked and the names mapped (strict: no missing, unexpected or
 * mismatched key), eager, float32; all 7 x 1000 logits within 4.8e-7 of the reference's */
static const gold_pt gold_internlm2[] = {
    {0, 0, 8.841151744e-02f},    {0, 333, 7.221286744e-02f},  {0, 666, -3.093830310e-02f},
    {0, 999, 6.169996411e-02f},  {1, 0, 1.817331649e-02f},    {1, 333, 1.375944018e-01f},
    {1, 666, -1.117631141e-02f}, {1, 999, 3.212804496e-01f},  {2, 0, 3.813802078e-02f},
    {2, 333, 1.888505071e-01f},  {2, 666, 1.412979960e-01f},  {2, 999, 1.413616091e-01f},
    {3, 0, 3.974878043e-02f},    {3, 333, 3.123023212e-01f},  {3, 666, 1.840371341e-01f},
    {3, 999, 2.719788551e-01f},  {4, 0, -4.052036256e-02f},   {4, 333, 2.793132365e-01f},
    {4, 666, 2.140850723e-01f},  {4, 999, -7.965087891e-03f}, {5, 0, 6.879866123e-02f},
    {5, 333, 4.168906212e-01f},  {5, 666, 1.793087423e-01f},  {5, 999, -5.508099124e-02f},
    {6, 0, 5.226138234e-02f},    {6, 333, -3.192703426e-02f}, {6, 666, 1.460008919e-01f},
    {6, 999, -9.097082168e-02f},
};

#define GOLD_TOL 1e-5

static void test_internlm2_transformers(void **state)
{
	(void)state;
	expect_gold("internlm2", 1000, GOLD_TOL, gold_internlm2,
	            sizeof(gold_internlm2) / sizeof(gold_internlm2[0]));
}

/* The one rank of TP 1: layer 1's wqkv [q (H*d); k (KV*d); v (KV*d)] rows. */
static ref_tensor *wqkv_tp1(ref_set *r, uint32_t n)
{
	assert_int_equal(n, 1);
	ref_tensor *t = find_tensor(&r[0], L1 "attention.wqkv.weight");
	assert_int_equal(t->shape[0], (IL_H + 2 * IL_KV) * IL_D);
	return t;
}

/* Kv groups 0 and 1 exchanged inside the rank's wqkv: each group's q heads, k head and v
 * head given to the other (a planner reading the packed groups in the wrong order). */
static void swap_groups(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	ref_tensor *t = wqkv_tp1(r, n);
	size_t hb = (size_t)(t->nbytes / (uint64_t)t->shape[0]) * IL_D; /* one head's rows */
	uint8_t *tmp = malloc(IL_N * hb);
	assert_non_null(tmp);
	size_t at[3][2] = {{0, IL_N * hb}, /* q heads of group 0 / 1 */
	                   {IL_H * hb, (IL_H + 1) * hb},
	                   {(IL_H + IL_KV) * hb, (IL_H + IL_KV + 1) * hb}};
	size_t len[3] = {IL_N * hb, hb, hb};
	for (int p = 0; p < 3; p++) {
		memcpy(tmp, t->data + at[p][0], len[p]);
		memcpy(t->data + at[p][0], t->data + at[p][1], len[p]);
		memcpy(t->data + at[p][1], tmp, len[p]);
	}
	free(tmp);
}

/* The rank's wqkv given the checkpoint's packed rows ([KV, H/KV + 2, d]) instead of
 * [q; k; v] (a planner passing wqkv through as vLLM's QKVParallelLinear loads it at TP 1). */
static void packed_rows(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	ref_tensor *t = wqkv_tp1(r, n);
	size_t hb = (size_t)(t->nbytes / (uint64_t)t->shape[0]) * IL_D;
	uint8_t *src = malloc((size_t)t->nbytes);
	assert_non_null(src);
	memcpy(src, t->data, (size_t)t->nbytes);
	for (size_t g = 0; g < IL_KV; g++) {
		uint8_t *dst = t->data + g * (IL_N + 2) * hb;
		memcpy(dst, src + g * IL_N * hb, IL_N * hb);
		memcpy(dst + IL_N * hb, src + (IL_H + g) * hb, hb);
		memcpy(dst + (IL_N + 1) * hb, src + (IL_H + IL_KV + g) * hb, hb);
	}
	free(src);
}

static void test_internlm2_caught(void **state)
{
	(void)state;
	expect_caught("internlm2", 1, 1, swap_groups, "two kv groups exchanged inside wqkv");
	expect_caught("internlm2", 1, 1, packed_rows, "wqkv left packed per kv group");
	expect_swapped("internlm2", 2, 1, L1 "attention.wqkv.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("internlm2", 2, 1, L1 "attention.wo.weight", "wo columns exchanged");
	expect_swapped("internlm2", 2, 1, L1 "feed_forward.gate_up_proj.weight",
	               "gate_up rows exchanged");
	expect_swapped("internlm2", 2, 1, L1 "feed_forward.w2.weight", "w2 columns exchanged");
	expect_swapped("internlm2", 4, 1, L1 "attention.wqkv.weight",
	               "ranks 0 and 1's q heads exchanged (their kv head replicated)");
	expect_halves_swapped(
	    "internlm2", 2, 1,
	    (tamper_halves){L1 "feed_forward.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	    "rank 0's gate / up halves exchanged");
}

/* The fixture is read as Llama's decoder: RMSNorms, the gated MLP, wqkv unpacked (no fused
 * checkpoint switch), untied, the fixture's eps and rope_theta. */
static void test_internlm2_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "internlm2");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.internlm2 && c.kind == REF_DENSE && !c.fused_ckpt && !c.layernorm &&
	            !c.plain_mlp && !c.tied && c.H == IL_H && c.KV == IL_KV && c.d == IL_D &&
	            c.I == 192 && c.L == 2 && c.hid == 128 && c.V == 1000);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 1e6) < 1e-6);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_internlm2_pass),
	    cmocka_unit_test(test_internlm2_transformers),
	    cmocka_unit_test(test_internlm2_caught),
	    cmocka_unit_test(test_internlm2_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
