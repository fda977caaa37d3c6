/*
 * test_reference_bloom.c — the reference forward pass over BLOOM (BloomForCausalLM;
 * reference/cfg_neox.c, neox.c): word_embeddings and its LayerNorm, LayerNorms with biases,
 * query_key_value stored per head ([H, 3, d] rows; each rank holds [q_r; k_r; v_r]) with its
 * bias, ALiBi (each rank its own heads' slopes), self_attention.dense and the gelu (tanh) MLP
 * with biases (the row-parallel biases added once), sequential, ln_f, the tied embedding as
 * head. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized
 * layouts' budgets; the full path's logits equal transformers 4.57.1's (eager, float32) at 28
 * points; rank tensors broken the way a wrong planner would break them are caught; each
 * switch moves the logits; config defaults and refusals. Fixture from
 * $WT_BUILD/wt-mkckpt --family bloom (hid 128, H 8, d 16, I 512, V 1000, 2 layers; seed
 * printed).
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

#define V_BL 1000
#define L1   "transformer.h.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"bloom"};
	return gen_fixtures("reference_bloom", fams, 1);
}

static void test_bloom_pass(void **state)
{
	(void)state;
	expect_pass_tp("bloom", true);
	expect_pass("bloom", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_bloom[] = {
    {0, 22, -1.28850028e-01f},  {0, 668, 1.13915525e-01f},  {0, 803, -4.47319336e-02f},
    {0, 807, -4.46657151e-01f}, {1, 53, -1.25601560e-01f},  {1, 277, 2.21633706e-02f},
    {1, 284, 1.15029372e-01f},  {1, 977, 1.61763236e-01f},  {2, 1, -1.77887186e-01f},
    {2, 45, -1.97825804e-01f},  {2, 48, 7.76776433e-01f},   {2, 130, -1.07670529e-02f},
    {3, 234, -3.19856465e-01f}, {3, 282, -1.49159521e-01f}, {3, 650, -1.92272931e-01f},
    {3, 748, 2.48015095e-02f},  {4, 177, 1.97677687e-01f},  {4, 796, -5.54757237e-01f},
    {4, 844, -3.76854911e-02f}, {4, 895, -2.07300335e-01f}, {5, 491, 2.31617540e-02f},
    {5, 662, 1.27512902e-01f},  {5, 664, -1.82786316e-01f}, {5, 676, -4.73806560e-02f},
    {6, 270, 1.76156059e-01f},  {6, 361, -1.40222102e-01f}, {6, 879, -2.00511515e-02f},
    {6, 900, 7.12892860e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 9.5e-7 of
 * max |logit| 2.64; at these 28 points 4.8e-7): ALiBi, the embedding LayerNorm, the per-head
 * qkv order and the biases each move them by far more (test_bloom_switches / caught). */
#define GOLD_TOL 1e-5

static void test_bloom_transformers(void **state)
{
	(void)state;
	expect_gold("bloom", V_BL, GOLD_TOL, gold_bloom,
	            sizeof(gold_bloom) / sizeof(gold_bloom[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_heads(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: the two ranks' query_key_value (their heads, so their slopes)
	            * exchanged with their dense columns: only ALiBi's per-rank slopes tell */
	assert_int_equal(n, 2);
	swap_data(&r[0], &r[1], L1 "self_attention.query_key_value.weight");
	swap_data(&r[0], &r[1], L1 "self_attention.query_key_value.bias");
	swap_data(&r[0], &r[1], L1 "self_attention.dense.weight");
}

static void tamper_embed_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: rank 3's word_embeddings_layernorm bias times 3 */
	assert_int_equal(n, 4);
	scale_bf16(&r[3], "transformer.word_embeddings_layernorm.bias", 3.0f);
}

static void tamper_dense_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: rank 0's self_attention.dense bias (added once) times 3 */
	assert_int_equal(n, 4);
	scale_bf16(&r[0], L1 "self_attention.dense.bias", 3.0f);
}

static void test_bloom_caught(void **state)
{
	(void)state;
	expect_halves_swapped(
	    "bloom", 2, 1,
	    (tamper_halves){L1 "self_attention.query_key_value.weight", 1, 1, 64, 128 * 2},
	    "rank 1's q and k rows exchanged");
	expect_caught("bloom", 2, 1, tamper_heads, "the ranks' heads exchanged (ALiBi slopes)");
	expect_caught("bloom", 4, 1, tamper_embed_norm, "embedding LayerNorm bias x3 on rank 3");
	expect_caught("bloom", 4, 1, tamper_dense_bias, "dense bias x3 on rank 0");
	expect_swapped("bloom", 2, 1, L1 "mlp.dense_h_to_4h.bias",
	               "dense_h_to_4h bias slices exchanged");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_bloom_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "bloom");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.bloom && !c.neox && !c.neox_par && c.layernorm && c.plain_mlp &&
	            c.fused_ckpt && c.kind == REF_DENSE && c.tied && c.d == 16 && c.H == 8 &&
	            c.KV == 8 && c.I == 512 && c.L == 2 && c.act == REF_ACT_GELU_TANH);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	size_t n = N_TOK * V_BL;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	const char *dump = getenv("WT_REF_DUMP"); /* all logits, for the transformers check */
	if (dump != NULL && *dump) {
		FILE *f = fopen(dump, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(base, sizeof(float), n, f), n);
		fclose(f);
	}
	ref_cfg off = c;
	ref_set rn = {0}; /* the tensors under the names the passes read, run as not BLOOM: */
	assert_int_equal(ref_neox_rename(&c, &ck, &rn, true, &err), WT_OK);
	off.bloom = false; /* no ALiBi, no embedding LayerNorm, RoPE over the head */
	off.theta = 10000.0;
	logits_with(&off, &rn, lg);
	ref_set_clear(&rn);
	expect_moved(base, lg, n, 1e-3, "RoPE instead of ALiBi and the embedding LayerNorm");
	off = c;
	off.act = REF_ACT_SILU; /* (the exact gelu vLLM's BloomMLP runs moves them 1.9e-5) */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "silu instead of gelu");
	off = c;
	off.neox_par = true;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "parallel residual");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define BL(extra)                                                                                  \
	"{\"architectures\": [\"BloomForCausalLM\"], \"model_type\": \"bloom\", "                  \
	"\"hidden_size\": 64, \"n_head\": 4, \"n_layer\": 2, \"vocab_size\": 100" extra "}"

/* ALiBi's slopes as transformers' build_alibi_tensor gives them (the shared ref_alibi_slopes,
 * MPT's formula with the alibi_bias_max 8 BLOOM's config sets): 8 heads 2^-1 .. 2^-8; 12
 * heads (not a power of two) the 8 of 2^-1 .. 2^-8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 */
static void test_bloom_slopes(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	float s[12];
	static const char eight[] = BL(", \"n_embed\": 128, \"num_attention_heads\": 8");
	assert_int_equal(ref_cfg_parse_json(eight, strlen(eight), &c, &err), WT_OK);
	ref_alibi_slopes(&c, s);
	for (int h = 0; h < 8; h++)
		assert_float_equal(s[h], ldexp(1.0, -(h + 1)), 0.0);
	static const char twelve[] = BL(", \"n_embed\": 192, \"num_attention_heads\": 12");
	assert_int_equal(ref_cfg_parse_json(twelve, strlen(twelve), &c, &err), WT_OK);
	ref_alibi_slopes(&c, s);
	for (int h = 0; h < 8; h++)
		assert_float_equal(s[h], ldexp(1.0, -(h + 1)), 0.0);
	for (int h = 8; h < 12; h++)
		assert_float_equal(s[h], pow(2.0, -0.5 - (h - 8)), 1e-7);
}

static void test_bloom_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* BloomConfig's defaults: eps 1e-5, tied, the MLP 4 * hidden_size */
	static const char plain[] = BL("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.bloom && c.tied && c.d == 16 && c.H == 4 && c.KV == 4 && c.L == 2 &&
	            c.I == 256 && c.act == REF_ACT_GELU_TANH);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	/* bloom-560m's keys: n_embed over hidden_size, num_attention_heads over n_head */
	static const char old[] = BL(", \"n_embed\": 96, \"num_attention_heads\": 6, "
	                             "\"layer_norm_epsilon\": 1e-6");
	assert_int_equal(ref_cfg_parse_json(old, strlen(old), &c, &err), WT_OK);
	assert_true(c.hid == 96 && c.H == 6 && c.d == 16 && c.I == 384);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	expect_cfg(BL(", \"apply_residual_connection_post_layernorm\": true"), WT_EUNSUPPORTED,
	           "apply_residual_connection_post_layernorm");
	expect_cfg(BL(", \"layer_norm_epsilon\": -1.0"), WT_ECORRUPT, "layer_norm_epsilon");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bloom_pass),   cmocka_unit_test(test_bloom_transformers),
	    cmocka_unit_test(test_bloom_caught), cmocka_unit_test(test_bloom_switches),
	    cmocka_unit_test(test_bloom_slopes), cmocka_unit_test(test_bloom_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
