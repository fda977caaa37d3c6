/*
 * test_reference_falcon_rw.c — the reference forward pass over Falcon's original releases
 * (RWForCausalLM, remote code; vLLM's registry maps it onto falcon.py and reads the config
 * through its stored RWConfig): wt-mkckpt --family falcon_rw, falcon-40b's config.json
 * (model_type RefinedWeb, n_head 8, n_head_kv 2, n_layer 2, parallel_attn, new_decoder_
 * architecture given) over falcon's tensors (hid 128, V 1000; seed printed). Full and sharded
 * logits agree within REF_TOL_F32 (TP 1, 2, 4, 8: the kv groups replicated past TP 2) or the
 * quantized layouts' budgets; the full path's logits equal transformers 4.57.1's
 * FalconForCausalLM (RWConfig's keys mapped onto FalconConfig's, eager, float32) at 28 points;
 * rank tensors broken the way a wrong planner would break them are caught; RWConfig's defaults
 * (parallel_attn false, one kv head, the new architecture at hidden_size 8192) in the
 * reference's config.
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

#define V_RW 1000
#define A1   "transformer.h.1.self_attention."
#define M1   "transformer.h.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"falcon_rw"};
	return gen_fixtures("reference_falcon_rw", fams, 1);
}

static void test_rw_pass(void **state)
{
	(void)state;
	expect_pass_tp("falcon_rw", true);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens: FalconForCausalLM with
 * new_decoder_architecture, num_kv_heads 2, parallel_attn, tied; eager, float32 */
static const gold_pt gold_rw[] = {
    {0, 623, 5.38202934e-02f},  {0, 683, 2.93017298e-01f},  {0, 897, -3.84818949e-02f},
    {0, 942, -1.85733229e-01f}, {1, 55, 2.51565069e-01f},   {1, 224, 4.60650802e-01f},
    {1, 285, 8.13053474e-02f},  {1, 299, 5.29602110e-01f},  {2, 131, -1.24512337e-01f},
    {2, 498, 9.80354995e-02f},  {2, 797, -5.83109446e-02f}, {2, 819, -4.42168117e-03f},
    {3, 278, -9.83074084e-02f}, {3, 302, 3.20691057e-03f},  {3, 340, 1.20376959e-01f},
    {3, 719, 2.06824709e-02f},  {4, 476, 5.33724010e-01f},  {4, 503, -1.37721598e-01f},
    {4, 553, 3.50649714e-01f},  {4, 581, 3.40524353e-02f},  {5, 341, -2.06325203e-02f},
    {5, 621, -3.16636980e-01f}, {5, 698, -1.25427311e-02f}, {5, 790, 3.60327929e-01f},
    {6, 159, 2.12093368e-01f},  {6, 612, -1.54585630e-01f}, {6, 842, -4.26024059e-03f},
    {6, 856, -1.89968660e-01f},
};

/* within 1e-5 (over all 7000 logits 6.6e-7 of max |logit| 0.81) */
#define GOLD_TOL 1e-5

static void test_rw_transformers(void **state)
{
	(void)state;
	expect_gold("falcon_rw", V_RW, GOLD_TOL, gold_rw, sizeof(gold_rw) / sizeof(gold_rw[0]));
}

static void tamper_qkv(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: ranks 1 and 2 (kv groups 0 and 1) exchange query_key_value */
	assert_int_equal(n, 4);
	swap_data(&r[1], &r[2], A1 "query_key_value.weight");
}

static void test_rw_caught(void **state)
{
	(void)state;
	expect_caught("falcon_rw", 4, 1, tamper_qkv, "query_key_value of two kv groups exchanged");
	expect_swapped("falcon_rw", 2, 1, A1 "dense.weight", "dense slices exchanged");
	expect_swapped("falcon_rw", 2, 1, M1 "dense_h_to_4h.weight",
	               "dense_h_to_4h rows exchanged");
	expect_zeroed("falcon_rw", 2, 1, 1, M1 "dense_4h_to_h.weight",
	              "rank 1's dense_4h_to_h columns dropped");
	expect_zeroed("falcon_rw", 2, 1, 0, "transformer.h.1.ln_mlp.bias",
	              "rank 0's ln_mlp bias lost");
}

#define RWC(mt, extra)                                                                             \
	"{\"architectures\": [\"RWForCausalLM\"], \"model_type\": \"" mt "\", "                    \
	"\"hidden_size\": 64, \"n_head\": 4, \"n_layer\": 2, \"vocab_size\": 100" extra "}"

/* RWConfig's reading in the reference's config: the fixture's switches, the defaults of
 * RefinedWebModel (parallel_attn false: sequential; multi_query: one kv head), falcon-rw-1b's
 * ALiBi, and the new architecture RWConfig forces at hidden_size 8192. */
static void test_rw_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "falcon_rw");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.falcon && c.layernorm && c.fused_ckpt && c.plain_mlp && c.neox_par &&
	            !c.fl_one_ln && !c.fl_alibi && c.tied && c.d == 16 && c.H == 8 && c.KV == 2 &&
	            c.I == 512 && c.L == 2 && c.act == REF_ACT_GELU && c.rot_dim == 16);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.theta, 10000.0, 0.0);
	ref_set_clear(&ck);
	close_model(&m);
	static const char seq[] = RWC("RefinedWebModel", "");
	assert_int_equal(ref_cfg_parse_json(seq, strlen(seq), &c, &err), WT_OK);
	assert_true(c.falcon && c.KV == 1 && c.d == 16 && c.I == 256 && !c.neox_par &&
	            !c.fl_one_ln && !c.fl_alibi && c.tied);
	static const char par[] = RWC("RefinedWebModel", ", \"parallel_attn\": true");
	assert_int_equal(ref_cfg_parse_json(par, strlen(par), &c, &err), WT_OK);
	assert_true(c.KV == 1 && c.neox_par && c.fl_one_ln);
	static const char rw1b[] =
	    RWC("RefinedWebModel", ", \"multi_query\": false, \"alibi\": true, "
	                           "\"bias\": true");
	assert_int_equal(ref_cfg_parse_json(rw1b, strlen(rw1b), &c, &err), WT_OK);
	assert_true(c.KV == 4 && !c.neox_par && c.fl_alibi);
	/* falcon-40b's width: the new architecture without the key, ln_attn / ln_mlp */
	static const char w40[] =
	    "{\"architectures\": [\"RWForCausalLM\"], \"model_type\": \"RefinedWeb\", "
	    "\"hidden_size\": 8192, \"n_head\": 128, \"n_head_kv\": 8, \"n_layer\": 2, "
	    "\"vocab_size\": 100, \"parallel_attn\": true}";
	assert_int_equal(ref_cfg_parse_json(w40, strlen(w40), &c, &err), WT_OK);
	assert_true(c.KV == 8 && c.H == 128 && c.d == 64 && c.neox_par && !c.fl_one_ln);
	expect_cfg(RWC("RefinedWeb", ", \"parallel_attn\": true"), WT_EUNSUPPORTED,
	           "new_decoder_architecture");
	expect_cfg(RWC("RefinedWebModel", ", \"apply_residual_connection_post_layernorm\": true"),
	           WT_EUNSUPPORTED, "apply_residual_connection_post_layernorm");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rw_pass),
	    cmocka_unit_test(test_rw_transformers),
	    cmocka_unit_test(test_rw_caught),
	    cmocka_unit_test(test_rw_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
