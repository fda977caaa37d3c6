/*
 * test_reference_falcon.c — the reference forward pass over Falcon (FalconForCausalLM;
 * reference/cfg_neox.c, neox.c) in falcon-40b / 180B's new_decoder_architecture layout:
 * query_key_value [KV, H/KV + 2, d] grouped per kv head (reordered into [q; k; v]), the
 * parallel block x + attn(ln_attn(x)) + mlp(ln_mlp(x)) with LayerNorms with biases, RoPE on
 * the whole head (or ALiBi with alibi true, its slopes scaled by 1/sqrt(d)), the gelu MLP
 * dense_4h_to_h(gelu(dense_h_to_4h(x))), no biases, ln_f, tied. Full and sharded logits
 * agree within REF_TOL_F32 (TP 1, 2, 4, 8: the kv heads replicated past TP 2) or the quantized
 * layouts' budgets; the full path's logits equal transformers 4.57.1's at 28 points (RoPE:
 * eager; ALiBi: sdpa, since 4.57.1's eager path adds the ALiBi bias twice); rank tensors
 * broken the way a wrong planner would break them are caught; each switch moves the logits;
 * config keys and refusals. Fixture from $WT_BUILD/wt-mkckpt --family falcon (hid 128, H 8,
 * num_kv_heads 2, V 1000, 2 layers; seed printed), and a copy with alibi true.
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

#define V_FL 1000
#define A1   "transformer.h.1.self_attention."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"falcon"};
	if (gen_fixtures("reference_falcon", fams, 1) != 0 || gen_family("falcon", "falcon_alibi"))
		return -1;
	char *dir = tu_path(g_root, "falcon_alibi");
	edit_config(dir, "\"alibi\": false", "\"alibi\": true");
	free(dir);
	return 0;
}

static void test_falcon_pass(void **state)
{
	(void)state;
	expect_pass_tp("falcon", true);
	expect_pass("falcon", 2, 1, WT_QUANT_FP8_BLOCK, 0);
	expect_pass("falcon_alibi", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("falcon_alibi", 4, 1, WT_QUANT_NONE, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens: eager, float32 */
static const gold_pt gold_falcon[] = {
    {0, 85, 2.84520358e-01f},   {0, 179, -2.31516704e-01f}, {0, 236, 2.07789674e-01f},
    {0, 809, -1.79219663e-01f}, {1, 39, 2.44850218e-01f},   {1, 94, 1.52780205e-01f},
    {1, 332, -1.32666096e-01f}, {1, 580, 9.00782198e-02f},  {2, 159, -8.26696604e-02f},
    {2, 263, 1.43022045e-01f},  {2, 690, -3.75551701e-01f}, {2, 734, -3.65809321e-01f},
    {3, 390, -3.65314156e-01f}, {3, 420, -4.91643310e-01f}, {3, 516, -2.20580071e-01f},
    {3, 886, 2.98499376e-01f},  {4, 172, -3.53592247e-01f}, {4, 736, 1.02054462e-01f},
    {4, 755, 3.17410827e-01f},  {4, 956, 3.15105885e-01f},  {5, 646, 6.88041151e-02f},
    {5, 649, 2.36671418e-01f},  {5, 695, -6.17983043e-02f}, {5, 869, 9.97417420e-02f},
    {6, 76, 1.99521691e-01f},   {6, 298, -1.99139193e-02f}, {6, 942, 9.68407094e-02f},
    {6, 971, 1.40031248e-01f},
};

/* alibi true (the same weights): sdpa, float32 */
static const gold_pt gold_falcon_alibi[] = {
    {1, 39, 2.48721227e-01f},  {1, 580, 1.01387575e-01f},  {2, 159, -9.03424397e-02f},
    {2, 263, 1.17073707e-01f}, {3, 516, -2.26987496e-01f}, {3, 886, 3.05440903e-01f},
    {4, 956, 3.22990239e-01f}, {5, 869, 8.38174149e-02f},  {6, 298, -3.07049304e-02f},
    {6, 971, 1.27028242e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 6.3e-7 of
 * max |logit| 0.81 with RoPE, 6.0e-7 with ALiBi): the grouping of query_key_value, the
 * second LayerNorm and ALiBi's scale each move them by far more (test_falcon_switches). */
#define GOLD_TOL 1e-5

static void test_falcon_transformers(void **state)
{
	(void)state;
	expect_gold("falcon", V_FL, GOLD_TOL, gold_falcon,
	            sizeof(gold_falcon) / sizeof(gold_falcon[0]));
	expect_gold("falcon_alibi", V_FL, GOLD_TOL, gold_falcon_alibi,
	            sizeof(gold_falcon_alibi) / sizeof(gold_falcon_alibi[0]));
}

static void tamper_qkv(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: ranks 1 and 2 (kv groups 0 and 1) exchange query_key_value */
	assert_int_equal(n, 4);
	swap_data(&r[1], &r[2], A1 "query_key_value.weight");
}

static void tamper_kv(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 8: rank 0's replica of kv group 0 (k and v rows) taken from rank 7's */
	assert_int_equal(n, 8);
	ref_tensor *a = (ref_tensor *)ref_set_find(&r[0], A1 "query_key_value.weight");
	const ref_tensor *b = ref_set_find(&r[7], A1 "query_key_value.weight");
	assert_non_null(a);
	assert_non_null(b);
	size_t q = a->nbytes / 3; /* [q (1 head); k; v] */
	memcpy(a->data + q, b->data + q, a->nbytes - q);
}

static void tamper_ln(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's ln_mlp weight replaced by its ln_attn's */
	assert_int_equal(n, 2);
	ref_tensor *m = (ref_tensor *)ref_set_find(&r[1], "transformer.h.1.ln_mlp.weight");
	const ref_tensor *a = ref_set_find(&r[1], "transformer.h.1.ln_attn.weight");
	assert_non_null(m);
	assert_non_null(a);
	memcpy(m->data, a->data, m->nbytes);
}

static void test_falcon_caught(void **state)
{
	(void)state;
	expect_caught("falcon", 4, 1, tamper_qkv, "query_key_value of two kv groups exchanged");
	expect_caught("falcon", 8, 1, tamper_kv, "a replicated kv head from the other group");
	expect_swapped("falcon", 2, 1, A1 "dense.weight", "dense slices exchanged");
	expect_caught("falcon", 2, 1, tamper_ln, "ln_mlp replaced by ln_attn on rank 1");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_falcon_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "falcon");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.falcon && c.layernorm && c.fused_ckpt && c.plain_mlp && c.neox_par &&
	            !c.fl_one_ln && !c.fl_alibi && !c.neox && !c.phi && !c.bloom && !c.lm_bias &&
	            c.kind == REF_DENSE && c.tied && c.d == 16 && c.H == 8 && c.KV == 2 &&
	            c.I == 512 && c.L == 2 && c.act == REF_ACT_GELU && c.rot_dim == 16);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.theta, 10000.0, 0.0);
	size_t n = N_TOK * V_FL;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.neox_par = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "sequential block");
	off = c;
	off.rot_dim = 8;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE on half the head");
	off = c;
	off.theta = 500000.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-5, "rope_theta 500000");
	off = c;
	off.act = REF_ACT_GELU_TANH;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-6, "tanh GELU");
	off = c;
	off.fl_alibi = true;
	off.alibi_max = 8.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "ALiBi instead of RoPE");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define FC(extra)                                                                                  \
	"{\"architectures\": [\"FalconForCausalLM\"], \"model_type\": \"falcon\", "                \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"vocab_size\": 100" extra "}"

static void test_falcon_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* FalconConfig's defaults (falcon-7b's switches): multi_query (one kv head),
	 * parallel_attn with one input_layernorm, RoPE base 10000, layer_norm_epsilon 1e-5,
	 * the MLP 4 * hidden_size, tied */
	static const char plain[] = FC("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.falcon && c.H == 4 && c.KV == 1 && c.d == 16 && c.I == 256 &&
	            c.rot_dim == 16 && c.tied && c.neox_par && c.fl_one_ln && !c.fl_alibi &&
	            c.act == REF_ACT_GELU);
	assert_float_equal(c.theta, 10000.0, 0.0);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	/* falcon-rw-1b: sequential, ALiBi, every head its own kv head */
	static const char rw[] =
	    FC(", \"multi_query\": false, \"parallel_attn\": false, "
	       "\"alibi\": true, \"bias\": true, \"layer_norm_epsilon\": 1e-6");
	assert_int_equal(ref_cfg_parse_json(rw, strlen(rw), &c, &err), WT_OK);
	assert_true(c.KV == 4 && !c.neox_par && !c.fl_one_ln && c.fl_alibi);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	float s[4];
	ref_alibi_slopes(&c, s); /* build_alibi_tensor's 2^-2, 2^-4, ... over sqrt(16) */
	for (int h = 0; h < 4; h++)
		assert_float_equal(s[h], powf(2.0f, -2.0f * (float)(h + 1)) / 4.0f, 1e-9);
	/* the new architecture: num_kv_heads groups, ln_attn / ln_mlp unless one is asked */
	static const char nda[] = FC(", \"new_decoder_architecture\": true, \"num_kv_heads\": 2, "
	                             "\"rope_theta\": 500000");
	assert_int_equal(ref_cfg_parse_json(nda, strlen(nda), &c, &err), WT_OK);
	assert_true(c.KV == 2 && c.neox_par && !c.fl_one_ln);
	assert_float_equal(c.theta, 500000.0, 0.0);
	static const char one[] = FC(", \"new_decoder_architecture\": true, "
	                             "\"num_ln_in_parallel_attn\": 1");
	assert_int_equal(ref_cfg_parse_json(one, strlen(one), &c, &err), WT_OK);
	assert_true(c.KV == 4 && c.neox_par && c.fl_one_ln);
	expect_cfg(FC(", \"rope_scaling\": {\"rope_type\": \"bogus\", \"factor\": 2.0}"),
	           WT_EUNSUPPORTED, "bogus");
	expect_cfg(FC(", \"activation\": \"relu\""), WT_EUNSUPPORTED, "activation");
	expect_cfg(FC(", \"new_decoder_architecture\": true, \"parallel_attn\": false"),
	           WT_EUNSUPPORTED, "parallel_attn");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_falcon_pass),   cmocka_unit_test(test_falcon_transformers),
	    cmocka_unit_test(test_falcon_caught), cmocka_unit_test(test_falcon_switches),
	    cmocka_unit_test(test_falcon_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
