/*
 * test_reference_gritlm.c — the reference forward pass over GritLM (fixture gritlm, as
 * parasail-ai/GritLM-7B-vllm: GritLM/GritLM-7B's Mistral config under vLLM's architecture name
 * GritLM). vLLM's gritlm.py GritLM is LlamaForCausalLM with a pooler: its generate runner is
 * MistralForCausalLM's causal pass with lm_head, which the reference runs (planner family
 * mistral); the pooling runner turns is_causal off over the same tensors (docs/format.md). Full
 * and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets;
 * the full path's equal transformers 4.57.1's MistralForCausalLM (eager, float32, strict load)
 * at 28 points; the pass is causal (a later token does not move an earlier one's logits); rank
 * tensors broken the way a wrong planner would break them are caught. Fixture from
 * $WT_BUILD/wt-mkckpt --family gritlm (hid 128, H 4, KV 2, I 192, V 1000, 2 layers, untied;
 * seed printed).
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

#define FAM "gritlm"
#define L1  "model.layers.1."
#define V   1000

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_gritlm", fams, 1);
}

static void test_gritlm_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, false);
}

/* (token, column, transformers 4.57.1 logit), tokens g_tokens: MistralForCausalLM built from
 * the fixture's config (architectures / model_type dropped), load_state_dict strict, eager,
 * float32. All 7 x 1000 logits within 4.2e-7 (largest 0.732; these 28 within 2.1e-7); the same
 * weights run bidirectionally (the pooling runner's attention) move them by 0.746. */
static const gold_pt gold_gritlm[] = {
    {0, 0, -1.228695512e-01f},   {0, 333, 4.887816608e-01f},  {0, 666, -8.557191491e-02f},
    {0, 999, 2.398359030e-01f},  {1, 0, -1.202843562e-01f},   {1, 333, 3.007094860e-01f},
    {1, 666, -7.042036951e-02f}, {1, 999, 1.456660032e-01f},  {2, 0, -1.535418183e-01f},
    {2, 333, 2.501129508e-01f},  {2, 666, -8.192786574e-02f}, {2, 999, 9.955593199e-02f},
    {3, 0, -8.875808120e-02f},   {3, 333, 3.557024598e-01f},  {3, 666, 3.520006314e-02f},
    {3, 999, 9.105856717e-02f},  {4, 0, -1.588337570e-01f},   {4, 333, 3.151074946e-01f},
    {4, 666, 5.480254441e-02f},  {4, 999, 4.822387919e-02f},  {5, 0, -1.095737815e-01f},
    {5, 333, 3.432597518e-01f},  {5, 666, 8.407488465e-03f},  {5, 999, 9.897153080e-02f},
    {6, 0, -5.276400596e-02f},   {6, 333, 2.154984474e-01f},  {6, 666, 2.884783223e-02f},
    {6, 999, 1.830225587e-01f},
};

#define GOLD_TOL 1e-5

static void test_gritlm_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V, GOLD_TOL, gold_gritlm, sizeof(gold_gritlm) / sizeof(gold_gritlm[0]));
}

/* The generate path is causal: token 0's logits are those of token 0 alone, and the
 * bidirectional pass (the pooling runner's) is not what this reference serves. */
static void test_gritlm_causal(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	float all[N_TOK * V], one[V], bi[N_TOK * V];
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_false(c.bidir);
	logits_with(&c, &ck, all);
	assert_int_equal(ref_forward_full(&c, &ck, g_tokens, 1, one, NULL, &err), WT_OK);
	for (int64_t j = 0; j < V; j++)
		assert_true(fabsf(all[j] - one[j]) <= 1e-6f * (1.0f + fabsf(one[j])));
	c.bidir = true;
	logits_with(&c, &ck, bi);
	expect_moved(all, bi, V, 1e-3, "token 0 under the bidirectional mask");
	ref_set_clear(&ck);
	close_model(&m);
}

/* Rank 1's lm_head rows zeroed (a rank given the wrong vocabulary slice). */
static void zero_lm_head(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_true(n >= 2);
	ref_tensor *t = find_tensor(&r[1], "lm_head.weight");
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_gritlm_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped(FAM, 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_zeroed(FAM, 2, 1, 0, "model.layers.0.self_attn.qkv_proj.weight",
	              "rank 0's layer-0 q/k/v zeroed");
	expect_caught(FAM, 2, 1, zero_lm_head, "one rank's lm_head rows zeroed");
}

/* The fixture is read as Mistral's causal LM: no biases, an untied lm_head, V logits a token. */
static void test_gritlm_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(!c.dec_emb && !c.dec_cls && !c.bidir && !c.qk_norm && c.kind == REF_DENSE &&
	            c.H == 4 && c.KV == 2 && c.d == 32 && c.I == 192 && c.L == 2);
	assert_int_equal(ref_out_count(&c, N_TOK), N_TOK * V);
	assert_non_null(ref_set_find(&ck, "lm_head.weight"));
	assert_null(ref_set_find(&ck, L1 "self_attn.q_proj.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gritlm_pass),   cmocka_unit_test(test_gritlm_transformers),
	    cmocka_unit_test(test_gritlm_causal), cmocka_unit_test(test_gritlm_caught),
	    cmocka_unit_test(test_gritlm_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
