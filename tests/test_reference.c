/*
 * test_reference.c — the reference forward pass proves the shards: for each
 * family and layout, logits computed from the original checkpoint ("full")
 * and from the produced rank tensors ("sharded", TP/EP engine style) agree
 * within ENGINE_REF_TOL_F32 (unquantized) or the scheme's named budget
 * (quantized, dequantized with kern_dequantize). Deliberately broken shards
 * (swapped ranks, wrong gate/up order, swapped EP stacks, non-zero vocab
 * padding) must fail. Fixtures come from $WT_BUILD/wt-mkckpt (seed printed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "engine/reference.h"
#include "engine/reference_ckpt.h"
#include "kernels/kernels.h"
#include "tests/util/testutil.h"

#define SEED 11u

static char *g_root;
static const int64_t g_tokens[] = {1, 999, 17, 500, 3, 256, 640};
#define N_TOK (sizeof(g_tokens) / sizeof(g_tokens[0]))

static int gen_family(const char *fam)
{
	const char *b = getenv("WT_BUILD");
	char *bin = tu_path(b != NULL && *b ? b : "build", "wt-mkckpt");
	char *dir = tu_path(g_root, fam);
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "'%s' --family %s --out '%s' --seed %u >/dev/null 2>&1", bin,
	         fam, dir, SEED);
	free(bin);
	free(dir);
	int st = system(cmd);
	return st == -1 ? -1 : WEXITSTATUS(st);
}

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"llama", "qwen2", "qwen3", "mixtral", "qwen2_moe", "bert"};
	g_root = tu_mkdtemp("reference");
	if (g_root == NULL)
		return -1;
	print_message("fixtures: wt-mkckpt --seed %u into %s\n", SEED, g_root);
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
		if (gen_family(fams[i]) != 0) {
			print_error("wt-mkckpt --family %s failed; build it first (make)\n",
			            fams[i]);
			return -1;
		}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (g_root != NULL)
		tu_rmrf(g_root);
	free(g_root);
	return 0;
}

typedef struct model {
	store *s;
	ckpt *c;
} model;

static void open_model(model *m, const char *fam)
{
	char *dir = tu_path(g_root, fam);
	wt_errbuf err = {0};
	int rv = store_open(&m->s, dir, &err);
	if (rv == WT_OK)
		rv = ckpt_open(&m->c, m->s, &err);
	free(dir);
	if (rv != WT_OK)
		print_error("%s: %s\n", fam, err.msg);
	assert_int_equal(rv, WT_OK);
}

static void close_model(model *m)
{
	ckpt_close(m->c);
	store_close(m->s);
}

/* Run the verification of family fam under layout (tp, ep, quant, up_gate). */
static int run(const char *fam, uint32_t tp, uint32_t ep, wt_quant q, int up_gate,
               engine_ref_tamper_fn tamper, void *tctx, engine_ref_result *res, wt_errbuf *err)
{
	model m = {0};
	wt_layout l;
	open_model(&m, fam);
	wt_layout_init(&l);
	l.tp_size = tp;
	l.ep_size = ep;
	l.quant = q;
	l.w13_up_gate = up_gate;
	int rv = engine_ref_verify(m.c, &l, g_tokens, N_TOK, tamper, tctx, res, err);
	if (rv == WT_OK)
		print_message("%-9s tp %u ep %u %-12s %-7s: max|diff| %.3g, max|logit| %.3g, "
		              "ratio %.3g (budget %.3g) %s\n",
		              fam, tp, ep, wt_quant_name(q), up_gate ? "up_gate" : "gate_up",
		              res->diff.max_abs_diff, res->diff.max_abs_ref,
		              res->diff.max_abs_diff / res->diff.max_abs_ref, res->budget,
		              res->pass ? "PASS" : "FAIL");
	else
		print_message("%s tp %u ep %u: %s (%s)\n", fam, tp, ep, err->msg, wt_errname(rv));
	wt_layout_clear(&l);
	close_model(&m);
	return rv;
}

static void expect_pass(const char *fam, uint32_t tp, uint32_t ep, wt_quant q, int up_gate)
{
	engine_ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(run(fam, tp, ep, q, up_gate, NULL, NULL, &res, &err), WT_OK);
	assert_false(res.diff.nonfinite);
	assert_true(res.diff.max_abs_ref > 0.1); /* logits are not all ~0 */
	assert_true(res.pass);
	if (q != WT_QUANT_NONE) /* the rank tensors really were quantized */
		assert_true(res.diff.max_abs_diff > ENGINE_REF_TOL_F32 * res.diff.max_abs_ref);
}

static void test_llama_tp(void **state)
{
	(void)state;
	for (uint32_t tp = 1; tp <= 8; tp *= 2) /* tp 8 > KV 2: kv replication */
		expect_pass("llama", tp, 1, WT_QUANT_NONE, 0);
}

static void test_qwen2_qwen3(void **state)
{
	(void)state;
	expect_pass("qwen2", 2, 1, WT_QUANT_NONE, 0); /* biases, tied */
	expect_pass("qwen2", 8, 1, WT_QUANT_NONE, 0);
	expect_pass("qwen3", 4, 1, WT_QUANT_NONE, 0); /* q_norm/k_norm */
}

static void test_mixtral(void **state)
{
	(void)state;
	expect_pass("mixtral", 1, 2, WT_QUANT_NONE, 0); /* E 6: 3 + 3 */
	expect_pass("mixtral", 1, 4, WT_QUANT_NONE, 0); /* E 6: 2 2 1 1 */
	expect_pass("mixtral", 2, 1, WT_QUANT_NONE, 1); /* experts TP-split, up_gate */
	expect_pass("mixtral", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("mixtral", 2, 2, WT_QUANT_NONE, 1);
}

static void test_qwen2_moe(void **state)
{
	(void)state;
	expect_pass("qwen2_moe", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("qwen2_moe", 2, 1, WT_QUANT_NONE, 0); /* shared expert TP-split */
	expect_pass("qwen2_moe", 1, 4, WT_QUANT_NONE, 0); /* one expert per EP rank */
	expect_pass("qwen2_moe", 2, 2, WT_QUANT_NONE, 1);
}

static void test_quantized(void **state)
{
	(void)state;
	expect_pass("llama", 2, 1, WT_QUANT_FP8_TENSOR, 0);
	expect_pass("llama", 2, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("llama", 2, 1, WT_QUANT_FP8_BLOCK, 0);
	expect_pass("llama", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("llama", 2, 1, WT_QUANT_INT4_GROUP, 0);
	expect_pass("mixtral", 1, 2, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("qwen2_moe", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
}

/* ---- the check can fail ---- */

static void swap_data(engine_ref_set *a, engine_ref_set *b, const char *name)
{
	engine_ref_tensor *x = engine_ref_set_find(a, name), *y = engine_ref_set_find(b, name);
	assert_non_null(x);
	assert_non_null(y);
	assert_int_equal(x->nbytes, y->nbytes);
	uint8_t *t = x->data;
	x->data = y->data;
	y->data = t;
}

static void tamper_swap_qkv(void *ctx, engine_ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_true(n >= 2);
	swap_data(&r[0], &r[1], "model.layers.1.self_attn.qkv_proj.weight");
}

/* [gate; up] -> [up; gate] in rank 0's dense gate_up_proj of layer 0. */
static void tamper_gate_up(void *ctx, engine_ref_set *r, uint32_t n)
{
	(void)ctx;
	(void)n;
	engine_ref_tensor *t = engine_ref_set_find(&r[0], "model.layers.0.mlp.gate_up_proj.weight");
	assert_non_null(t);
	size_t half = (size_t)t->nbytes / 2;
	uint8_t *tmp = malloc(half);
	assert_non_null(tmp);
	memcpy(tmp, t->data, half);
	memcpy(t->data, t->data + half, half);
	memcpy(t->data + half, tmp, half);
	free(tmp);
}

static void tamper_swap_experts(void *ctx, engine_ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_int_equal(n, 2);
	swap_data(&r[0], &r[1], "model.layers.0.block_sparse_moe.experts.w2_weight");
}

/* A non-zero value in the last padding row of the last rank's embedding. */
static void tamper_padding(void *ctx, engine_ref_set *r, uint32_t n)
{
	(void)ctx;
	engine_ref_tensor *t = engine_ref_set_find(&r[n - 1], "model.embed_tokens.weight");
	assert_non_null(t);
	uint16_t one = kern_f32_to_bf16(1.0f);
	memcpy(t->data + t->nbytes - 2, &one, 2);
}

static void test_negative(void **state)
{
	(void)state;
	engine_ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(run("llama", 2, 1, WT_QUANT_NONE, 0, tamper_swap_qkv, NULL, &res, &err),
	                 WT_OK);
	assert_false(res.pass);
	assert_true(res.diff.max_abs_diff > 100 * ENGINE_REF_TOL_F32 * res.diff.max_abs_ref);
	/* the quantized budget still catches swapped ranks */
	assert_int_equal(
	    run("llama", 2, 1, WT_QUANT_FP8_CHANNEL, 0, tamper_swap_qkv, NULL, &res, &err), WT_OK);
	assert_false(res.pass);
	assert_int_equal(run("qwen2", 2, 1, WT_QUANT_NONE, 0, tamper_gate_up, NULL, &res, &err),
	                 WT_OK);
	assert_false(res.pass);
	assert_int_equal(
	    run("mixtral", 1, 2, WT_QUANT_NONE, 0, tamper_swap_experts, NULL, &res, &err), WT_OK);
	assert_false(res.pass);
	assert_int_equal(run("llama", 4, 1, WT_QUANT_NONE, 0, tamper_padding, NULL, &res, &err),
	                 WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "padding row"));
}

/* Mixtral TP 2 shards produced with w13_order up_gate agree when read as up_gate
 * and must fail when read as gate_up. */
static void test_wrong_w13_order(void **state)
{
	(void)state;
	model m = {0};
	wt_layout prod, read;
	engine_ref_cfg cfg;
	engine_ref_set ck = {0};
	engine_ref_set *ranks = NULL;
	sm_plan *p = NULL;
	wt_errbuf err = {0};
	open_model(&m, "mixtral");
	wt_layout_init(&prod);
	prod.tp_size = 2;
	prod.w13_up_gate = 1;
	wt_layout_init(&read);
	read.tp_size = 2; /* gate_up */
	assert_int_equal(engine_ref_load_ckpt(m.c, &cfg, &ck, &err), WT_OK);
	assert_int_equal(shardmap_plan(m.c, &prod, &p, &err), WT_OK);
	assert_int_equal(engine_ref_load_ranks(m.c, p, &prod, &ranks, &err), WT_OK);
	float *a = malloc(N_TOK * (size_t)cfg.V * sizeof(float));
	float *b = malloc(N_TOK * (size_t)cfg.V * sizeof(float));
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(engine_ref_forward_full(&cfg, &ck, g_tokens, N_TOK, a, NULL, &err), WT_OK);
	assert_int_equal(
	    engine_ref_forward_sharded(&cfg, ranks, &prod, 0, g_tokens, N_TOK, NULL, b, &err),
	    WT_OK);
	engine_ref_diff d;
	engine_ref_compare(a, b, N_TOK * (size_t)cfg.V, &d);
	assert_true(engine_ref_within(&d, ENGINE_REF_TOL_F32));
	assert_int_equal(
	    engine_ref_forward_sharded(&cfg, ranks, &read, 0, g_tokens, N_TOK, NULL, b, &err),
	    WT_OK);
	engine_ref_compare(a, b, N_TOK * (size_t)cfg.V, &d);
	print_message("mixtral up_gate shards read as gate_up: max|diff| %.3g of %.3g\n",
	              d.max_abs_diff, d.max_abs_ref);
	assert_false(engine_ref_within(&d, ENGINE_REF_TOL_F32));
	free(a);
	free(b);
	engine_ref_free_ranks(ranks, shardmap_n_ranks(p));
	shardmap_plan_free(p);
	engine_ref_set_clear(&ck);
	wt_layout_clear(&prod);
	wt_layout_clear(&read);
	close_model(&m);
}

static void test_errors(void **state)
{
	(void)state;
	engine_ref_result res;
	wt_errbuf err = {0};
	/* BERT has no decoder reference */
	assert_int_equal(run("bert", 1, 1, WT_QUANT_NONE, 0, NULL, NULL, &res, &err),
	                 WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "BertModel"));
	/* a token beyond the vocabulary */
	model m = {0};
	engine_ref_cfg cfg;
	engine_ref_set ck = {0};
	open_model(&m, "llama");
	assert_int_equal(engine_ref_load_ckpt(m.c, &cfg, &ck, &err), WT_OK);
	int64_t bad = cfg.V;
	float out[1];
	assert_int_equal(engine_ref_forward_full(&cfg, &ck, &bad, 1, out, NULL, &err), WT_EINVAL);
	/* a missing tensor is named */
	engine_ref_tensor *t = engine_ref_set_find(&ck, "model.norm.weight");
	assert_non_null(t);
	t->name[0] = 'X';
	ck.sorted = false;
	float *lg = malloc(N_TOK * (size_t)cfg.V * sizeof(float));
	assert_non_null(lg);
	assert_int_equal(engine_ref_forward_full(&cfg, &ck, g_tokens, N_TOK, lg, NULL, &err),
	                 WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "model.norm.weight"));
	free(lg);
	engine_ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_llama_tp),        cmocka_unit_test(test_qwen2_qwen3),
	    cmocka_unit_test(test_mixtral),         cmocka_unit_test(test_qwen2_moe),
	    cmocka_unit_test(test_quantized),       cmocka_unit_test(test_negative),
	    cmocka_unit_test(test_wrong_w13_order), cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
