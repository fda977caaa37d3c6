/*
 * test_reference_opt.c — the reference forward pass over OPT (OPTForCausalLM; reference/
 * cfg_opt.c, opt.c): embed_tokens (word_embed_proj_dim 64) through project_in plus the
 * learned positions (offset 2), pre-norm layers with q/k/v/out_proj and fc1 / fc2 biases,
 * relu, model.decoder.final_layer_norm, project_out, the tied LM head. Full and sharded
 * logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the
 * full path's logits equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors
 * broken the way a wrong planner would break them are caught; each switch moves the logits;
 * config defaults and refusals. Fixture from $WT_BUILD/wt-mkckpt --family opt (hid 128,
 * H 8, d 16, ffn_dim 256, V 1000, 2 layers, max_position_embeddings 64; seed printed).
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

#define V_OPT 1000
#define L1    "model.decoder.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"opt"};
	return gen_fixtures("reference_opt", fams, 1);
}

static void test_opt_pass(void **state)
{
	(void)state;
	expect_pass_tp("opt", true);
	expect_pass("opt", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_opt[] = {
    {0, 128, -9.83177349e-02f}, {0, 133, -8.13159496e-02f}, {0, 499, -3.49799842e-02f},
    {0, 796, -9.52057764e-02f}, {1, 28, -6.49174079e-02f},  {1, 147, -4.71420400e-02f},
    {1, 401, 1.83498356e-02f},  {1, 484, -7.59503767e-02f}, {2, 129, -1.33467779e-01f},
    {2, 541, -1.06561139e-01f}, {2, 753, -6.59772456e-02f}, {2, 948, -5.25291562e-02f},
    {3, 145, 1.16067333e-02f},  {3, 367, -5.55362739e-02f}, {3, 443, -1.74993768e-01f},
    {3, 510, -4.31323647e-02f}, {4, 137, 2.24802420e-01f},  {4, 347, -1.01060495e-02f},
    {4, 788, -1.32221002e-02f}, {4, 853, 4.63222824e-02f},  {5, 510, -4.89305854e-02f},
    {5, 815, 9.56579074e-02f},  {5, 839, -1.28243249e-02f}, {5, 939, 6.48269802e-03f},
    {6, 134, -2.31251344e-02f}, {6, 204, 5.28078713e-03f},  {6, 308, -3.19201238e-02f},
    {6, 553, 1.23536609e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 1.8e-7
 * of max |logit| 0.26): the positions' offset, the pre-norm order, relu and the biases each
 * move them by far more (test_opt_switches, test_opt_caught). */
#define GOLD_TOL 1e-5

static void test_opt_transformers(void **state)
{
	(void)state;
	expect_gold("opt", V_OPT, GOLD_TOL, gold_opt, sizeof(gold_opt) / sizeof(gold_opt[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_fc2(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: ranks 1 and 2's fc2 column slices exchanged */
	assert_int_equal(n, 4);
	swap_data(&r[1], &r[2], L1 "fc2.weight");
}

static void tamper_positions(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: every rank's position table times 3 (replicas equal, values wrong) */
	for (uint32_t k = 0; k < n; k++)
		scale_bf16(&r[k], "model.decoder.embed_positions.weight", 3.0f);
}

static void tamper_replica(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: rank 3's project_out replica times 3 */
	assert_int_equal(n, 4);
	scale_bf16(&r[3], "model.decoder.project_out.weight", 3.0f);
}

static void test_opt_caught(void **state)
{
	(void)state;
	expect_halves_swapped("opt", 2, 1,
	                      (tamper_halves){L1 "self_attn.qkv_proj.weight", 1, 1, 64, 128 * 2},
	                      "rank 1's q and k rows exchanged");
	expect_swapped("opt", 2, 1, L1 "fc1.bias", "fc1 bias slices exchanged");
	expect_caught("opt", 4, 1, tamper_fc2, "fc2 slices of ranks 1 and 2 exchanged");
	expect_caught("opt", 2, 1, tamper_positions, "embed_positions x3 on every rank");
	/* a replica that differs from rank 0's is refused outright */
	ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(run("opt", 4, 1, WT_QUANT_NONE, 0, tamper_replica, NULL, &res, &err),
	                 WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "rank 3 'model.decoder.project_out.weight'"));
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_opt_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "opt");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.opt && c.opt_pre && c.opt_fnorm && c.opt_bias && c.kind == REF_DENSE &&
	            c.tied && c.d == 16 && c.wep == 64 && c.max_pos == 64 && c.I == 256 &&
	            c.L == 2 && c.act == REF_ACT_RELU);
	size_t n = N_TOK * V_OPT;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.opt_pre = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "post-norm layers");
	off = c;
	off.opt_fnorm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no final LayerNorm");
	off = c;
	off.opt_bias = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "biases dropped");
	off = c;
	off.act = REF_ACT_GELU;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "gelu instead of relu");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define OPT(extra)                                                                                 \
	"{\"architectures\": [\"OPTForCausalLM\"], \"model_type\": \"opt\", "                      \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"vocab_size\": 100, \"ffn_dim\": 96" extra "}"

static void test_opt_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* OPTConfig's defaults: relu, word_embed_proj_dim = hidden_size, 2048 positions,
	 * pre-norm with the final LayerNorm, biases, tied; ffn_dim read as the MLP's size */
	static const char plain[] = OPT("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.opt && c.opt_pre && c.opt_fnorm && c.opt_bias && c.tied && c.d == 16 &&
	            c.KV == 4 && c.I == 96 && c.wep == 64 && c.max_pos == 2048 &&
	            c.act == REF_ACT_RELU);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	static const char set[] =
	    OPT(", \"word_embed_proj_dim\": 32, \"do_layer_norm_before\": false, "
	        "\"enable_bias\": false, \"max_position_embeddings\": 40, "
	        "\"activation_function\": \"gelu_new\", \"tie_word_embeddings\": false");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_true(!c.opt_pre && !c.opt_fnorm && !c.opt_bias && !c.tied && c.wep == 32 &&
	            c.max_pos == 40 && c.act == REF_ACT_GELU_TANH);
	static const char rm[] = OPT(", \"_remove_final_layer_norm\": true");
	assert_int_equal(ref_cfg_parse_json(rm, strlen(rm), &c, &err), WT_OK);
	assert_true(c.opt_pre && !c.opt_fnorm);
	expect_cfg(OPT(", \"activation_function\": \"relu6\""), WT_EUNSUPPORTED, "relu6");
	expect_cfg(OPT(", \"layer_norm_elementwise_affine\": false"), WT_EUNSUPPORTED,
	           "layer_norm_elementwise_affine false");
	expect_cfg(OPT(", \"num_key_value_heads\": 2"), WT_EUNSUPPORTED, "heads");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_opt_pass),   cmocka_unit_test(test_opt_transformers),
	    cmocka_unit_test(test_opt_caught), cmocka_unit_test(test_opt_switches),
	    cmocka_unit_test(test_opt_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
