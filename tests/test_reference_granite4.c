/*
 * test_reference_granite4.c — the reference forward pass over Granite 4.0
 * (GraniteMoeHybridForCausalLM; reference/granite4.c, cfg_granite4.c): layers 0, 1 and 3
 * Mamba2 mixers (in_proj [z; x; B; C; dt], the causal conv over [x; B; C] with its bias,
 * the per-head scan, the gated norm over all channels, out_proj), layer 2 Llama's
 * attention with RoPE, GraniteMoE's experts and the shared MLP in every layer, Granite's
 * multipliers. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4 with the one
 * group's B / C on every rank, EP) or the quantized layouts' budgets; the full path's
 * logits equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken
 * the way a wrong planner would break them are caught; each switch moves the logits;
 * config defaults and refusals. Fixture from $WT_BUILD/wt-mkckpt --family
 * granitemoehybrid (hid 128, 8 Mamba heads of 32, 1 group of state 16, attention H 4 /
 * KV 2, V 1000, 4 layers) and granitemoehybrid_dense (no experts: Granite 4.0 Micro's
 * shared MLP alone; attention, mamba, mamba; 2 groups, conv 3, NoPE, every bias); seed
 * printed.
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

#define V_G4  1000
#define FAM   "granitemoehybrid"
#define DENSE "granitemoehybrid_dense"
#define M0    "model.layers.0.mamba."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM, DENSE};
	return gen_fixtures("reference_granite4", fams, 2);
}

static void test_g4_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0); /* B / C whole on both ranks */
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 too */
	expect_pass(FAM, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 2, WT_QUANT_NONE, 1);
	expect_pass(FAM, 1, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(FAM, 1, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass(FAM, 1, 2, WT_QUANT_FP8_BLOCK, 0);
	/* two groups: each rank its own group's B / C, quantized at TP 2 too */
	expect_pass(DENSE, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(DENSE, 2, 1, WT_QUANT_NONE, 0);
	expect_pass(DENSE, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(DENSE, 2, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_g4[] = {
    {0, 577, -1.29666021e-02f}, {0, 698, 4.77705300e-02f},  {0, 763, 6.40082285e-02f},
    {0, 790, -4.68358360e-02f}, {1, 24, 3.36781852e-02f},   {1, 314, 1.35165825e-02f},
    {1, 638, -1.60783399e-02f}, {1, 779, -3.39229289e-03f}, {2, 393, 1.52541399e-02f},
    {2, 395, -1.13883354e-02f}, {2, 722, -1.44287040e-02f}, {2, 815, -2.85710488e-02f},
    {3, 194, 6.41476735e-02f},  {3, 204, 3.71139087e-02f},  {3, 349, -3.68415378e-02f},
    {3, 740, -3.46694402e-02f}, {4, 145, -2.28650216e-02f}, {4, 328, -1.09723434e-02f},
    {4, 472, 6.65462092e-02f},  {4, 912, 6.38937876e-02f},  {5, 62, 4.98827808e-02f},
    {5, 408, 3.58969122e-02f},  {5, 614, 2.95944288e-02f},  {5, 706, -4.34181839e-03f},
    {6, 175, 8.38258490e-03f},  {6, 613, -3.47945020e-02f}, {6, 635, 1.99803635e-02f},
    {6, 823, -4.37429249e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (measured 3.7e-8; over all
 * 7000 logits 8.9e-8 of max |logit| 0.42, the logits divided by logits_scaling 6): the
 * scan's pieces each move them by far more (test_g4_switches and the purpose-broken
 * variants listed in the commit). */
#define GOLD_TOL 1e-5

/* granitemoehybrid_dense (no experts, attention, mamba, mamba; two groups, NoPE, every
 * bias): measured 1.5e-8 here, 7.5e-8 over all 7000 of max |logit| 0.14 */
static const gold_pt gold_dense[] = {
    {0, 544, 7.46282563e-02f}, {1, 120, 3.71095724e-02f},  {2, 806, -1.37525871e-02f},
    {3, 172, 8.90678540e-03f}, {4, 527, -7.31591061e-02f}, {5, 728, -1.48108108e-02f},
    {6, 58, 3.31003703e-02f},
};

static void test_g4_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V_G4, GOLD_TOL, gold_g4, sizeof(gold_g4) / sizeof(gold_g4[0]));
	expect_gold(DENSE, V_G4, GOLD_TOL, gold_dense, sizeof(gold_dense) / sizeof(gold_dense[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

/* Rows [a, a+n) of BF16 rank tensor name (rows of `cols`) times f. */
static void scale_rows(ref_set *r, const char *name, int64_t a, int64_t n, int64_t cols, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data + a * cols;
	for (int64_t i = 0; i < n * cols; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_bc(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's in_proj B rows [256, 272) (the duplicated group) halved, as
	              a planner that split B would leave half a group */
	assert_int_equal(n, 2);
	scale_rows(&r[1], M0 "in_proj.weight", 256, 16, 128, 0.5f);
}

static void tamper_conv_c(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's conv1d C channels [144, 160) and their bias zero */
	assert_int_equal(n, 2);
	scale_rows(&r[0], M0 "conv1d.weight", 144, 16, 4, 0.0f);
	scale_rows(&r[0], M0 "conv1d.bias", 144, 16, 1, 0.0f);
}

static void tamper_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's gated-norm weight slice times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], M0 "norm.weight", 2.0f);
}

static void tamper_dt(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's dt rows (the last 4 of in_proj) times 3 */
	assert_int_equal(n, 2);
	scale_rows(&r[0], M0 "in_proj.weight", 288, 4, 128, 3.0f);
}

static void tamper_groups(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* dense, TP 2: the ranks' B rows [256, 272) exchanged (each rank the other's
	              group), as a planner duplicating group 0 or misnumbering them would */
	assert_int_equal(n, 2);
	ref_tensor *a = find_tensor(&r[0], "model.layers.1.mamba.in_proj.weight"),
	           *b = find_tensor(&r[1], "model.layers.1.mamba.in_proj.weight");
	size_t off = 256 * 128 * 2, len = 16 * 128 * 2;
	uint8_t *tmp = malloc(len);
	assert_non_null(tmp);
	memcpy(tmp, a->data + off, len);
	memcpy(a->data + off, b->data + off, len);
	memcpy(b->data + off, tmp, len);
	free(tmp);
}

static void tamper_in_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* dense, TP 2: rank 1's in_proj.bias z rows [0, 128) zero */
	assert_int_equal(n, 2);
	scale_rows(&r[1], "model.layers.2.mamba.in_proj.bias", 0, 128, 1, 0.0f);
}

static void test_g4_caught(void **state)
{
	(void)state;
	expect_caught(FAM, 2, 1, tamper_bc, "rank 1's B rows halved");
	expect_caught(FAM, 2, 1, tamper_conv_c, "rank 0's conv C channels zero");
	expect_halves_swapped(FAM, 4, 1, (tamper_halves){M0 "A_log", 3, 1, 1, 2},
	                      "rank 3's A_log halves exchanged");
	expect_caught(FAM, 2, 1, tamper_norm, "rank 1's gated-norm weight x2");
	expect_caught(FAM, 2, 1, tamper_dt, "rank 0's dt rows x3");
	expect_caught(DENSE, 2, 1, tamper_groups, "the ranks' B groups exchanged");
	expect_caught(DENSE, 2, 1, tamper_in_bias, "rank 1's in_proj.bias z rows zero");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_g4_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.g4 && c.granite && c.stacked_experts && c.g4_rope && c.tied &&
	            c.kind == REF_MIXTRAL && c.E == 4 && c.topk == 2 && c.Ie == 64 && c.Is == 96 &&
	            c.I == 96 && c.d == 32 && c.L == 4);
	assert_true(c.m_heads == 8 && c.m_dh == 32 && c.m_groups == 1 && c.m_state == 16 &&
	            c.m_conv == 4);
	for (int64_t i = 0; i < 4; i++)
		assert_int_equal(ref_g4_mamba_layer(&c, i), i != 2);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.embed_scale, 12.0, 1e-6);
	assert_float_equal(c.resid_mult, 0.22, 1e-12);
	assert_float_equal(c.attn_scale, 0.5, 1e-12);
	assert_float_equal(c.logits_div, 6.0, 1e-12);
	size_t n = N_TOK * V_G4;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.g4_rope = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no RoPE on the attention layer");
	off = c;
	off.g4_mamba[0] &= ~(1ull << 3); /* layer 3 read as attention: no such tensors */
	float *x = malloc(n * sizeof(float));
	assert_non_null(x);
	assert_int_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, x, NULL, &err), WT_ENOTFOUND);
	free(x);
	off = c;
	off.act = REF_ACT_GELU; /* the conv's and the MLPs' activation */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "gelu for silu");
	off = c;
	off.resid_mult = 0.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "residual_multiplier ignored");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define G4(extra)                                                                                  \
	"{\"architectures\": [\"GraniteMoeHybridForCausalLM\"], \"model_type\": "                  \
	"\"granitemoehybrid\", \"hidden_size\": 64, \"num_attention_heads\": 4, "                  \
	"\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 32, "               \
	"\"mamba_n_heads\": 4, \"mamba_d_state\": 8" extra "}"
#define LT ", \"layer_types\": [\"mamba\", \"attention\"]"

static void test_g4_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* GraniteMoeHybridConfig's defaults: 8 experts top-2, shared MLP 1024, one group, conv
	 * 4, expand 2 (d_head "auto": 128 / 4 = 32), no positions, multipliers 1, eps 1e-6 */
	static const char plain[] = G4(LT);
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.g4 && !c.g4_rope && !c.tied && c.kind == REF_MIXTRAL && c.E == 8 &&
	            c.topk == 2 && c.Is == 1024 && c.I == 1024 && c.m_heads == 4 && c.m_dh == 32 &&
	            c.m_groups == 1 && c.m_state == 8 && c.m_conv == 4 && c.act == REF_ACT_SILU &&
	            c.d == 16 && c.KV == 4);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_true(ref_g4_mamba_layer(&c, 0) && !ref_g4_mamba_layer(&c, 1));
	/* Granite 4.0 Micro: no experts, the shared MLP alone; RoPE */
	static const char micro[] =
	    G4(", \"num_local_experts\": 0, \"shared_intermediate_size\": 48, "
	       "\"position_embedding_type\": \"rope\", \"layer_types\": [\"attention\", "
	       "\"attention\"]");
	assert_int_equal(ref_cfg_parse_json(micro, strlen(micro), &c, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.I == 48 && c.g4_rope && !ref_g4_mamba_layer(&c, 0));
	static const char nope[] = G4(", \"position_embedding_type\": \"nope\"" LT);
	assert_int_equal(ref_cfg_parse_json(nope, strlen(nope), &c, &err), WT_OK);
	assert_false(c.g4_rope);
	expect_cfg(G4(""), WT_ECORRUPT, "layer_types is missing");
	expect_cfg(G4(", \"layer_types\": [\"mamba\"]"), WT_ECORRUPT, "layer_types has 1");
	expect_cfg(G4(", \"layer_types\": [\"mamba\", \"full_attention\"]"), WT_ECORRUPT,
	           "layer_types[1]");
	expect_cfg(G4(", \"position_embedding_type\": \"alibi\"" LT), WT_EUNSUPPORTED, "alibi");
	expect_cfg(G4(", \"mamba_d_head\": 16" LT), WT_ECORRUPT, "mamba_d_head 16");
	expect_cfg(G4(", \"mamba_n_groups\": 3" LT), WT_ECORRUPT, "mamba_n_groups");
	expect_cfg(G4(", \"head_dim\": 32" LT), WT_EUNSUPPORTED, "head_dim 32");
	expect_cfg(G4(", \"hidden_act\": \"relu\"" LT), WT_EUNSUPPORTED, "hidden_act");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_g4_pass),   cmocka_unit_test(test_g4_transformers),
	    cmocka_unit_test(test_g4_caught), cmocka_unit_test(test_g4_switches),
	    cmocka_unit_test(test_g4_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
