/*
 * test_reference_siglip.c — the reference forward pass over SigLIP's text tower (SiglipModel,
 * fixture siglip): token + learned position rows, pre-LayerNorm layers attending both ways (no
 * causal mask; q/k/v and out_proj with biases, fc2(gelu_pytorch_tanh(fc1))),
 * final_layer_norm, then text_model.head (with its bias) on every token (transformers'
 * get_text_features is the last token's row, vLLM's CLS pooling of its flipped sequence the
 * same). Full and sharded outputs agree within REF_TOL_F32 (TP 1, 2, 4; the position table
 * vocabulary-parallel) or the quantized layouts' budgets (attention quantized in both towers,
 * the text MLP not: 96 / 192 are not multiples of 64, SiglipMLP's quantizable); the full path's
 * values equal transformers 4.57.1's (SiglipModel, eager, float32) at 28 points of the 7 x 80
 * output; rank tensors broken the way a wrong planner would break them are caught. Fixture from
 * $WT_BUILD/wt-mkckpt --family siglip (text hid 96, H 4, I 192, V 1000, 16 positions, 2 layers,
 * projection_size 80; seed printed).
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

#define L1 "text_model.encoder.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"siglip"};
	return gen_fixtures("reference_siglip", fams, 1);
}

static void test_siglip_pass(void **state)
{
	(void)state;
	expect_pass_tp("siglip", false);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: text_model.head of every token's
 * final_layer_norm output (SiglipModel.from_pretrained of the fixture, strict, eager, float32);
 * token 6's row is get_text_features' (within 5e-8) */
static const gold_pt gold_siglip[] = {
    {0, 0, 1.510781497e-01f},   {0, 13, 2.909031808e-01f},  {0, 41, -1.178682745e-01f},
    {0, 79, -3.751608729e-01f}, {1, 0, 2.268740982e-01f},   {1, 13, -1.015324891e-01f},
    {1, 41, -1.272707433e-01f}, {1, 79, -3.131218255e-01f}, {2, 0, 3.488177359e-01f},
    {2, 13, 1.306146234e-01f},  {2, 41, -2.929262631e-02f}, {2, 79, -2.472136766e-01f},
    {3, 0, 2.252607197e-01f},   {3, 13, -5.436938256e-02f}, {3, 41, -1.459321678e-01f},
    {3, 79, -3.961685300e-01f}, {4, 0, 4.080427587e-01f},   {4, 13, 1.469324436e-02f},
    {4, 41, -1.159104258e-01f}, {4, 79, -3.390623927e-01f}, {5, 0, 2.599771023e-01f},
    {5, 13, -1.576988399e-01f}, {5, 41, 1.708574891e-01f},  {5, 79, -4.929907322e-01f},
    {6, 0, 2.323603630e-01f},   {6, 13, 1.092835143e-01f},  {6, 41, -1.713455468e-01f},
    {6, 79, -3.666980267e-01f},
};

#define GOLD_TOL 1e-5

static void test_siglip_transformers(void **state)
{
	(void)state;
	expect_gold("siglip", 80, GOLD_TOL, gold_siglip,
	            sizeof(gold_siglip) / sizeof(gold_siglip[0]));
}

/* Rank 1's text head zeroed (a rank given no head, or the wrong tensor). */
static void zero_head(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_true(n >= 2);
	ref_tensor *t = find_tensor(&r[1], "text_model.head.weight");
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_siglip_caught(void **state)
{
	(void)state;
	expect_swapped("siglip", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("siglip", 2, 1, L1 "self_attn.out_proj.weight",
	               "out_proj columns exchanged");
	expect_swapped("siglip", 2, 1, L1 "mlp.fc1.weight", "fc1 rows exchanged");
	expect_swapped("siglip", 2, 1, "text_model.embeddings.position_embedding.weight",
	               "the ranks' position rows exchanged");
	expect_caught("siglip", 2, 1, zero_head, "one rank's text head zeroed");
}

/* The fixture is read as SigLIP's text tower: LayerNorms, the plain MLP, gelu_pytorch_tanh,
 * eps 1e-6, the head as an 80-wide score head with its bias, no lm_head; the attention is not
 * causal (the causal mask moves the outputs). */
static void test_siglip_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "siglip");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.clip && c.siglip && c.dec_cls && c.layernorm && c.plain_mlp &&
	            c.kind == REF_DENSE && c.act == REF_ACT_GELU_TANH && c.n_labels == 80 &&
	            c.H == 4 && c.KV == 4 && c.d == 24 && c.I == 192 && c.L == 2 && c.hid == 96 &&
	            c.V == 1000);
	assert_true(fabs(c.eps - 1e-6) < 1e-12);
	assert_int_equal(ref_out_count(&c, N_TOK), N_TOK * 80);
	float *a = malloc(N_TOK * 80 * sizeof(float)), *b = malloc(N_TOK * 80 * sizeof(float));
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(ref_forward_full(&c, &ck, g_tokens, N_TOK, a, NULL, &err), WT_OK);
	c.siglip = false; /* CLIP's causal mask, its quick_gelu */
	c.act = REF_ACT_QUICK_GELU;
	assert_int_equal(ref_forward_full(&c, &ck, g_tokens, N_TOK, b, NULL, &err), WT_OK);
	expect_moved(a, b, N_TOK * 80, 0.01, "siglip read as clip");
	free(a);
	free(b);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_siglip_pass),
	    cmocka_unit_test(test_siglip_transformers),
	    cmocka_unit_test(test_siglip_caught),
	    cmocka_unit_test(test_siglip_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
