/*
 * test_reference_gpt_bigcode.c — the reference forward pass over GPTBigCode
 * (GPTBigCodeForCausalLM; reference/gpt2.c with c->bigcode): GPT-2's learned positions, no
 * RoPE, LayerNorms with biases, nn.Linear weights (nothing transposed), c_attn [q; k; v] with
 * one kv head (multi_query; every rank holds it) and its bias, c_proj with its bias,
 * mlp.c_proj(gelu_pytorch_tanh(mlp.c_fc(x))) with biases, lm_head tied to wte. Full and sharded
 * logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full
 * path's logits equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken the
 * way a wrong planner would break them are caught; each switch moves the logits; config defaults
 * and refusals. Fixture from $WT_BUILD/wt-mkckpt
 * --family gpt_bigcode (hid 128, H 8, d 16, one kv head, I 384, V 1000, 2 layers, 64
 * positions; seed printed).
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

#define V_BC 1000
#define H1   "transformer.h.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"gpt_bigcode"};
	return gen_fixtures("reference_gpt_bigcode", fams, 1);
}

static void test_bc_pass(void **state)
{
	(void)state;
	expect_pass_tp("gpt_bigcode", true);
	expect_pass("gpt_bigcode", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_bc[] = {
    {0, 623, -2.19817050e-02f}, {0, 683, -3.13820302e-01f}, {0, 897, 4.09312695e-01f},
    {0, 942, -3.37745547e-01f}, {1, 55, 2.50121713e-01f},   {1, 224, 2.90990919e-02f},
    {1, 285, -1.97516367e-01f}, {1, 299, 2.51173913e-01f},  {2, 131, 2.49055341e-01f},
    {2, 498, 6.03183359e-02f},  {2, 797, -6.28011860e-03f}, {2, 819, -3.46372686e-02f},
    {3, 278, -3.98333222e-02f}, {3, 302, 9.27126110e-02f},  {3, 340, 1.50845110e-01f},
    {3, 719, 5.18668443e-02f},  {4, 476, -1.17661506e-01f}, {4, 503, -2.34335810e-01f},
    {4, 553, -5.45861274e-02f}, {4, 581, -4.97113913e-03f}, {5, 341, 2.26884693e-01f},
    {5, 621, -2.77378201e-01f}, {5, 698, -1.31651163e-01f}, {5, 790, 5.12171313e-02f},
    {6, 159, -4.53110993e-01f}, {6, 612, 8.92900676e-03f},  {6, 842, 1.41348422e-01f},
    {6, 856, -7.50164911e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 5.4e-7
 * of max |logit| 0.80): the positions, the kv head, the activation and the biases each move
 * them by far more (test_bc_switches, test_bc_caught). */
#define GOLD_TOL 1e-5

static void test_bc_transformers(void **state)
{
	(void)state;
	expect_gold("gpt_bigcode", V_BC, GOLD_TOL, gold_bc, sizeof(gold_bc) / sizeof(gold_bc[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_kv(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's copy of the kv head, its k and v rows (16 each) exchanged */
	assert_int_equal(n, 2);
	swap_stack_halves(find_tensor(&r[1], H1 "attn.c_attn.weight")->data + 64 * 128 * 2, 1, 16,
	                  128 * 2);
}

static void tamper_wpe(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's replicated positions times 3 */
	assert_int_equal(n, 2);
	scale_bf16(&r[0], "transformer.wpe.weight", 3.0f);
}

static void tamper_proj_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: rank 0's attn.c_proj bias (added once) times 3 */
	assert_int_equal(n, 4);
	scale_bf16(&r[0], H1 "attn.c_proj.bias", 3.0f);
}

static void test_bc_caught(void **state)
{
	(void)state;
	expect_caught("gpt_bigcode", 2, 1, tamper_kv, "rank 1's k and v rows exchanged");
	expect_caught("gpt_bigcode", 2, 1, tamper_wpe, "rank 0's wpe x3");
	expect_caught("gpt_bigcode", 4, 1, tamper_proj_bias, "attn.c_proj bias x3 on rank 0");
	expect_swapped("gpt_bigcode", 2, 1, H1 "mlp.c_fc.bias", "c_fc bias slices exchanged");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_bc_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "gpt_bigcode");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.gpt2 && c.bigcode && !c.neox_par && c.layernorm && c.plain_mlp &&
	            c.fused_ckpt && c.kind == REF_DENSE && c.tied && c.d == 16 && c.I == 384 &&
	            c.KV == 1 && c.H == 8 && c.L == 2 && c.act == REF_ACT_GELU_TANH);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	size_t n = N_TOK * V_BC;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.act = REF_ACT_GELU;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-4, "exact gelu instead of gelu_pytorch_tanh");
	off = c;
	off.eps = 1e-1;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "layer_norm_epsilon 0.1");
	/* the learned positions dropped */
	ref_tensor *p = find_tensor(&ck, "transformer.wpe.weight");
	memset(p->data, 0, p->nbytes);
	free(p->f32);
	p->f32 = NULL;
	logits_with(&c, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "wpe zero");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define G2(extra)                                                                                  \
	"{\"architectures\": [\"GPTBigCodeForCausalLM\"], \"model_type\": \"gpt_bigcode\", "       \
	"\"n_embd\": 64, \"n_head\": 4, \"n_layer\": 2, \"vocab_size\": 100" extra "}"

static void test_bc_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* GPTBigCodeConfig's defaults: gelu_pytorch_tanh, layer_norm_epsilon 1e-5, n_inner
	 * 4 * n_embd, multi_query (one kv head), tied */
	static const char plain[] = G2("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.gpt2 && c.bigcode && c.tied && c.d == 16 && c.I == 256 &&
	            c.act == REF_ACT_GELU_TANH && c.KV == 1 && c.hid == 64 && c.H == 4);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	static const char set[] = G2(", \"n_inner\": 96, \"layer_norm_epsilon\": 1e-6, "
	                             "\"activation_function\": \"gelu\", "
	                             "\"tie_word_embeddings\": false");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_true(c.I == 96 && c.act == REF_ACT_GELU && !c.tied);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	expect_cfg(G2(", \"activation_function\": \"relu6\""), WT_EUNSUPPORTED, "relu6");
	expect_cfg(G2(", \"layer_norm_epsilon\": -1.0"), WT_ECORRUPT, "layer_norm_eps");
	expect_cfg(G2(", \"multi_query\": false"), WT_EUNSUPPORTED, "multi_query false");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bc_pass),   cmocka_unit_test(test_bc_transformers),
	    cmocka_unit_test(test_bc_caught), cmocka_unit_test(test_bc_switches),
	    cmocka_unit_test(test_bc_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
