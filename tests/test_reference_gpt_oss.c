/*
 * test_reference_gpt_oss.c — the reference forward pass over GPT-OSS (GptOssForCausalLM;
 * reference/gpt_oss.c, reference/cfg_gpt_oss.c): attention sinks, q/k/v/o biases,
 * sliding / full layers, yarn RoPE, the biased top-k-then-softmax router and the biased,
 * clamped-SwiGLU experts, read from the MXFP4 checkpoint and from the dequantized BF16
 * form transformers saves. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4,
 * 8, EP 2, EP 4 up_gate, TP 2 x EP 2; both forms) or the quantized layouts' budgets;
 * rank tensors broken the way a wrong planner would break them are caught (another
 * rank's sinks, w2_bias counted on both TP ranks, gate / up left interleaved, exchanged
 * expert stacks, another router bias); the router, the config defaults and refusals and
 * a NaN MXFP4 scale are checked. The fixture comes from $WT_BUILD/wt-mkckpt --family
 * gpt_oss (hid 256, H 8, KV 2, d 32, 4 experts top-2, I 128, V 1003, L 2; seed printed);
 * the BF16 form is written from it here.
 */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "reference/reference.h"
#include "reference/reference_int.h"
#include "reference/ckpt.h"
#include "kernels/kernels.h"
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

#define V_GO  1003
#define HID   256
#define IE    128
#define N_EXP 4

/* One checkpoint tensor of the BF16 form: the MXFP4 pair dequantized and transposed
 * per expert to GptOssExperts' [E, K, N] (BF16 holds MXFP4 values exactly). */
static void *bf16_of_mx(ref_set *ck, const ref_tensor *b, st_desc *d)
{
	char sname[256];
	size_t nl = strlen(b->name) - strlen("_blocks");
	snprintf(sname, sizeof(sname), "%.*s_scales", (int)nl, b->name);
	const ref_tensor *sc = ref_set_find(ck, sname);
	assert_non_null(sc);
	int64_t E = b->shape[0], N = b->shape[1], K = b->shape[2] * 32;
	float *f = malloc((size_t)(E * N * K) * sizeof(float));
	uint16_t *o = malloc((size_t)(E * N * K) * sizeof(uint16_t));
	assert_true(f && o);
	assert_int_equal(kern_dequant_mxfp4(f, b->data, sc->data, E * N * K / 32), -1);
	for (int64_t e = 0; e < E; e++)
		for (int64_t n = 0; n < N; n++)
			for (int64_t k = 0; k < K; k++)
				o[(e * K + k) * N + n] = kern_f32_to_bf16(f[(e * N + n) * K + k]);
	free(f);
	d->name = strndup(b->name, nl);
	d->dtype = WT_BF16;
	d->ndim = 3;
	d->shape[0] = E;
	d->shape[1] = K;
	d->shape[2] = N;
	return o;
}

/* A copy of the BF16 tensor t with every value times by (owned by the caller). */
static void *bf16_times(const ref_tensor *t, float by)
{
	assert_int_equal(t->dtype, WT_BF16);
	uint16_t *o = malloc(t->nbytes);
	assert_non_null(o);
	memcpy(o, t->data, t->nbytes);
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		o[i] = kern_f32_to_bf16(kern_bf16_to_f32(o[i]) * by);
	return o;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n > k && strcmp(s + n - k, suffix) == 0;
}

/* g_root/out written from the gpt_oss fixture: with `dequant` the experts as
 * transformers saves them dequantized (float gate_up_proj / down_proj, no
 * quantization_config), else kept MXFP4; the down_proj biases times b2. */
static void write_form(const char *out, bool dequant, float b2)
{
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "gpt_oss");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	st_desc *d = calloc(ck.n, sizeof(*d));
	const void **data = calloc(ck.n, sizeof(*data));
	void **owned = calloc(ck.n, sizeof(*owned));
	assert_true(d && data && owned);
	size_t n = 0;
	for (size_t i = 0; i < ck.n; i++) {
		const ref_tensor *t = &ck.t[i];
		if (dequant && ends_with(t->name, "_scales"))
			continue;
		if (dequant && ends_with(t->name, "_blocks")) {
			data[n] = owned[n] = bf16_of_mx(&ck, t, &d[n]);
			n++;
			continue;
		}
		d[n] = (st_desc){.name = strdup(t->name), .dtype = t->dtype, .ndim = t->ndim};
		memcpy(d[n].shape, t->shape, sizeof(t->shape));
		data[n] = t->data;
		if (b2 != 1.0f && ends_with(t->name, "down_proj_bias"))
			data[n] = owned[n] = bf16_times(t, b2);
		n++;
	}
	char *dir = tu_path(g_root, out), *st = tu_path(dir, "model.safetensors");
	char *src = tu_path(g_root, "gpt_oss/config.json"), *cpath = tu_path(dir, "config.json");
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(st_write_path(st, d, data, n, NULL, 0, &err), WT_OK);
	json_t *root = json_load_file(src, 0, NULL);
	assert_non_null(root);
	if (dequant)
		assert_int_equal(json_object_del(root, "quantization_config"), 0);
	assert_int_equal(json_dump_file(root, cpath, JSON_INDENT(2)), 0);
	json_decref(root);
	for (size_t i = 0; i < n; i++) {
		free((char *)d[i].name);
		free(owned[i]);
	}
	free(d);
	free(data);
	free(owned);
	free(dir);
	free(st);
	free(src);
	free(cpath);
	ref_set_clear(&ck);
	close_model(&m);
}

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"gpt_oss"};
	if (gen_fixtures("reference_gpt_oss", fams, 1) != 0)
		return -1;
	write_form("gpt_oss_bf16", true, 1.0f);
	/* the fixture's expert biases are small (a doubled w2_bias moves the logits
	 * 1.3e-4 of their max, just past REF_TOL_F32): this copy makes them count */
	write_form("gpt_oss_b2", false, 64.0f);
	return 0;
}

static void test_gpt_oss_pass(void **state)
{
	(void)state;
	static const char *forms[] = {"gpt_oss", "gpt_oss_bf16"};
	for (int f = 0; f < 2; f++) {
		expect_pass(forms[f], 1, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 4, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 8, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 8 */
		expect_pass(forms[f], 1, 2, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 1, 4, WT_QUANT_NONE, 1);
		expect_pass(forms[f], 2, 2, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 2, WT_QUANT_NONE, 1);
	}
	expect_pass("gpt_oss_b2", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("gpt_oss_b2", 2, 2, WT_QUANT_NONE, 0);
	/* MXFP4 experts requantized (attention kept by modules_to_not_convert) */
	expect_pass("gpt_oss", 2, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("gpt_oss", 1, 2, WT_QUANT_FP8_BLOCK, 0);
	expect_pass("gpt_oss", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("gpt_oss", 2, 2, WT_QUANT_INT8_CHANNEL, 1);
	/* int4-group is too coarse for the fixture's MXFP4 values (reference.h): it runs and
	 * stays finite, held to REF_BUDGET_INT4 it fails */
	ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(run("gpt_oss", 1, 2, WT_QUANT_INT4_GROUP, 0, NULL, NULL, &res, &err),
	                 WT_OK);
	assert_false(res.diff.nonfinite);
	assert_true(res.budget == REF_BUDGET_INT4);
}

/* BF16 copies of `name` on rank set r as float32 (n values), then written back. */
static void bf16_scale(ref_set *r, const char *name, float by)
{
	ref_tensor *t = find_tensor(r, name);
	assert_int_equal(t->dtype, WT_BF16);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * by);
}

static void tamper_sinks(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: both ranks hold heads 0-3's sinks (replicated, not sliced) */
	assert_int_equal(n, 2);
	for (int l = 0; l < 2; l++) {
		char name[96];
		snprintf(name, sizeof(name), "model.layers.%d.self_attn.sinks", l);
		ref_tensor *a = find_tensor(&r[0], name), *b = find_tensor(&r[1], name);
		assert_int_equal(a->nbytes, b->nbytes);
		memcpy(b->data, a->data, a->nbytes);
	}
}

static void tamper_w2_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's w2_bias doubled, as if both tp ranks added theirs */
	assert_int_equal(n, 2);
	bf16_scale(&r[0], "model.layers.0.mlp.experts.w2_bias", 2.0f);
	bf16_scale(&r[0], "model.layers.1.mlp.experts.w2_bias", 2.0f);
}

/* Rows [gate; up] of each of `count` stacks of 2*half rows (row_bytes each) back to
 * the checkpoint's interleaved order g0, u0, g1, u1, ... */
static void interleave(uint8_t *p, int64_t count, int64_t half, size_t row_bytes)
{
	size_t stack = (size_t)(2 * half) * row_bytes;
	uint8_t *tmp = malloc(stack);
	assert_non_null(tmp);
	for (int64_t e = 0; e < count; e++) {
		uint8_t *s = p + (size_t)e * stack;
		for (int64_t k = 0; k < half; k++) {
			memcpy(tmp + (size_t)(2 * k) * row_bytes, s + (size_t)k * row_bytes,
			       row_bytes);
			memcpy(tmp + (size_t)(2 * k + 1) * row_bytes,
			       s + (size_t)(half + k) * row_bytes, row_bytes);
		}
		memcpy(s, tmp, stack);
	}
	free(tmp);
}

static void tamper_interleaved(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 1: w13 and its bias left gate/up interleaved */
	assert_int_equal(n, 1);
	for (int l = 0; l < 2; l++) {
		char w[96], b[96];
		snprintf(w, sizeof(w), "model.layers.%d.mlp.experts.w13_weight", l);
		snprintf(b, sizeof(b), "model.layers.%d.mlp.experts.w13_bias", l);
		interleave(find_tensor(&r[0], w)->data, N_EXP, IE, HID * 2);
		interleave(find_tensor(&r[0], b)->data, N_EXP, IE, 2);
	}
}

static void tamper_experts(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* EP 2: experts 0-1 and 2-3 exchanged, biases with them */
	assert_int_equal(n, 2);
	static const char *leaves[] = {"w13_weight", "w2_weight", "w13_bias", "w2_bias"};
	for (int i = 0; i < 4; i++) {
		char name[96];
		snprintf(name, sizeof(name), "model.layers.1.mlp.experts.%s", leaves[i]);
		swap_data(&r[0], &r[1], name);
	}
}

static void tamper_router_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1 routes without the router bias */
	assert_int_equal(n, 2);
	bf16_scale(&r[1], "model.layers.0.mlp.router.bias", 0.0f);
}

static void test_gpt_oss_caught(void **state)
{
	(void)state;
	expect_caught("gpt_oss", 2, 1, tamper_sinks, "sinks replicated instead of sliced");
	expect_caught("gpt_oss", 2, 1, tamper_w2_bias, "w2_bias added on both tp ranks");
	expect_caught("gpt_oss_b2", 2, 1, tamper_w2_bias, "the same, biases x64");
	expect_caught("gpt_oss", 1, 1, tamper_interleaved, "gate/up not de-interleaved");
	expect_caught("gpt_oss", 1, 2, tamper_experts, "expert stacks exchanged");
	expect_caught("gpt_oss", 2, 1, tamper_router_bias, "router bias missing on rank 1");
}

static void test_gpt_oss_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "gpt_oss");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_QWEN2_MOE && c.gpt_oss && c.E == N_EXP && c.topk == 2 &&
	            c.Ie == IE && c.d == 32 && c.H == 8 && c.window == 4 && c.window_pattern == 2 &&
	            c.n_ext == 16 && c.V == V_GO && !c.tied);
	assert_float_equal(c.rope_mscale, 0.1 * log(32.0) + 1.0, 1e-9);
	assert_float_equal(c.theta, 150000.0, 1e-6);
	assert_float_equal(c.swiglu_limit, 7.0, 0.0);
	size_t n = N_TOK * V_GO;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.window = 0; /* every layer full attention */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no sliding window");
	off = c;
	off.swiglu_limit = 0.5; /* the clamp is applied */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "swiglu_limit 0.5");
	off = c;
	off.rope_mscale = 1.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "yarn attention factor 1");
	/* sinks of logit 0 instead of the learned ones (the f32 cache is read) */
	const float *sk;
	assert_int_equal(
	    ref_getf(&ck, &sk, false, &err, 1, 8, 0, 0, "model.layers.0.self_attn.sinks"), WT_OK);
	memset((float *)sk, 0, 8 * sizeof(float));
	logits_with(&c, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "layer 0 sinks 0");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

/* A NaN MXFP4 scale (E8M0 255) is refused naming the scales tensor. */
static void test_gpt_oss_nan_scale(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	float *lg = malloc(N_TOK * V_GO * sizeof(float));
	assert_non_null(lg);
	open_model(&m, "gpt_oss");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	find_tensor(&ck, "model.layers.1.mlp.experts.down_proj_scales")->data[77] = 255;
	assert_int_equal(ref_forward_full(&c, &ck, g_tokens, N_TOK, lg, NULL, &err), WT_ECORRUPT);
	print_message("refused: %s\n", err.msg);
	assert_non_null(strstr(err.msg, "model.layers.1.mlp.experts.down_proj_scales"));
	assert_non_null(strstr(err.msg, "block 77"));
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

/* GptOssTopKRouter: the top k logits, softmax over them */
static void test_gpt_oss_router(void **state)
{
	(void)state;
	int64_t idx[2];
	float w[2];
	const float a[4] = {0.0f, 2.0f, 1.0f, -1.0f};
	ref_route_topk_softmax(a, 4, 2, NULL, idx, w);
	assert_true(idx[0] == 1 && idx[1] == 2);
	assert_float_equal(w[0], 1.0 / (1.0 + exp(-1.0)), 1e-6);
	assert_float_equal(w[1], 1.0 / (1.0 + exp(1.0)), 1e-6);
	const float b[4] = {1.0f, 3.0f, 2.0f, 3.0f}; /* a tie: the lower index first */
	ref_route_topk_softmax(b, 4, 2, NULL, idx, w);
	assert_true(idx[0] == 1 && idx[1] == 3);
	assert_float_equal(w[0], 0.5, 1e-7);
	const int64_t forced[2] = {3, 0};
	ref_route_topk_softmax(a, 4, 2, forced, idx, w);
	assert_true(idx[0] == 3 && idx[1] == 0);
	assert_float_equal(w[0], 1.0 / (1.0 + exp(1.0)), 1e-6);
}

#define GO_JSON(extra)                                                                             \
	"{\"architectures\": [\"GptOssForCausalLM\"], \"hidden_size\": 64, "                       \
	"\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 16, "               \
	"\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 32, "               \
	"\"num_experts_per_tok\": 2" extra "}"
#define GO_E4(extra) GO_JSON(", \"num_local_experts\": 4" extra)

static void test_gpt_oss_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* GptOssConfig's defaults; rope_scaling absent is its yarn (factor 32, truncate false) */
	static const char plain[] = GO_E4("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.gpt_oss && c.window == 128 && c.window_pattern == 2 && c.n_ext == 8 &&
	            c.sparse_step == 1 && c.Is == 0);
	assert_float_equal(c.theta, 150000.0, 1e-6);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.swiglu_limit, 7.0, 0.0);
	assert_float_equal(c.rope_mscale, 0.1 * log(32.0) + 1.0, 1e-9);
	assert_true(ref_layer_is_moe(&c, 0) && ref_layer_is_moe(&c, 1));
	/* an explicit null: the plain RoPE */
	static const char none[] = GO_E4(", \"rope_scaling\": null, \"swiglu_limit\": 5");
	assert_int_equal(ref_cfg_parse_json(none, strlen(none), &c, &err), WT_OK);
	assert_true(c.n_ext == 0 && c.rope_mscale == 0.0);
	assert_float_equal(c.swiglu_limit, 5.0, 0.0);
	/* every layer full: pattern 1 */
	expect_cfg(GO_E4(", \"layer_types\": [\"full_attention\", \"full_attention\"]"), WT_OK, "");
	expect_cfg(GO_E4(", \"layer_types\": [\"full_attention\", \"sliding_attention\"]"),
	           WT_EUNSUPPORTED, "GPT-OSS layers");
	expect_cfg(GO_E4(", \"layer_types\": [\"sliding_attention\"]"), WT_ECORRUPT, "layer_types");
	expect_cfg(GO_E4(", \"swiglu_limit\": -1"), WT_ECORRUPT, "swiglu_limit");
	expect_cfg(GO_E4(", \"sliding_window\": 0"), WT_ECORRUPT, "sliding_window");
	expect_cfg(GO_E4(", \"sliding_window\": null"), WT_ECORRUPT, "sliding_window");
	expect_cfg(GO_E4(", \"sliding_window\": null, \"layer_types\": [\"full_attention\", "
	                 "\"full_attention\"]"),
	           WT_OK, "");
	expect_cfg(GO_E4(", \"rope_scaling\": {\"rope_type\": \"longrope\", \"factor\": 2}"),
	           WT_EUNSUPPORTED, "'longrope'");
	/* gpt-oss-120b's 128 experts are within REF_MAX_EXPERTS; past it the count and limit */
	expect_cfg(GO_JSON(", \"num_local_experts\": 128"), WT_OK, "");
	expect_cfg(GO_JSON(", \"num_local_experts\": 513"), WT_EUNSUPPORTED, "experts 513");
	expect_cfg(GO_JSON(", \"num_local_experts\": 513"), WT_EUNSUPPORTED, "<= 512");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gpt_oss_pass),     cmocka_unit_test(test_gpt_oss_caught),
	    cmocka_unit_test(test_gpt_oss_switches), cmocka_unit_test(test_gpt_oss_nan_scale),
	    cmocka_unit_test(test_gpt_oss_router),   cmocka_unit_test(test_gpt_oss_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
