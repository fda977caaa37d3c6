/*
 * test_reference_olmo2.c — the reference forward pass over OLMo 2
 * (Olmo2ForCausalLM; reference/cfg_fam.c, the olmo2 switch of ref_cfg): no
 * input_layernorm, post_attention_layernorm / post_feedforward_layernorm on the
 * block outputs, and q_norm / k_norm over all of q [H*d] and k [KV*d], which a TP
 * rank applies to its own heads with its slice of the replicated weights after
 * all-reducing the sums of squares. Full and sharded logits agree within
 * REF_TOL_F32 (unquantized) or the scheme's budget, a wrong replica or slice is
 * caught, and each OLMo 2 switch moves the full path's logits. OLMoE (OlmoeForCausalLM):
 * the same full-width q/k norms with Llama's pre-norms and an MoE block in every layer.
 * OLMo 1 (OlmoForCausalLM): Llama's decoder with parameter-free LayerNorms (no norm
 * tensor in the checkpoint). clip_qkv (OLMo 1, OLMoE): full and sharded agree with it
 * set, and it moves the logits. The fixtures come from $WT_BUILD/wt-mkckpt --family
 * olmo2|olmoe|olmo (hid 256, H 8, KV 2, d 32; seed printed).
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

#define V_OLMO2 1000 /* the fixture's vocab_size */

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"olmo2", "olmoe", "olmo"};
	return gen_fixtures("reference_olmo2", fams, 3);
}

/* The check runs; its verdict is `pass`. */
static void expect_verdict(uint32_t tp, ref_tamper_fn tamper, bool pass)
{
	ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(run("olmo2", tp, 1, WT_QUANT_NONE, 0, tamper, NULL, &res, &err), WT_OK);
	assert_int_equal(res.pass, pass);
}

/* Set element i of a BF16 tensor to v. */
static void set_bf16_at(ref_tensor *t, int64_t i, float v)
{
	assert_int_equal(t->dtype, WT_BF16);
	assert_true(i >= 0 && (uint64_t)(i + 1) * 2 <= t->nbytes);
	uint16_t x = kern_f32_to_bf16(v);
	memcpy(t->data + i * 2, &x, sizeof(x));
}

static void tamper_q_norm_slice(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's q_norm replica holds rank 0's half where its own should be */
	assert_int_equal(n, 2);
	ref_tensor *t = find_tensor(&r[1], "model.layers.1.self_attn.q_norm.weight");
	memcpy(t->data + t->nbytes / 2, t->data, t->nbytes / 2);
}

static void tamper_q_norm_unused(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's replica wrong in rank 1's half, which rank 0 never reads */
	assert_int_equal(n, 2);
	set_bf16_at(find_tensor(&r[0], "model.layers.0.self_attn.q_norm.weight"), 200, 3.0f);
}

static void tamper_k_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1 holds kv head 1, k_norm [32, 64) */
	assert_int_equal(n, 2);
	set_bf16_at(find_tensor(&r[1], "model.layers.0.self_attn.k_norm.weight"), 40, 3.0f);
}

static void tamper_k_norm_replica(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 8 > KV 2: rank 5 holds a replica of kv head 1 */
	assert_int_equal(n, 8);
	set_bf16_at(find_tensor(&r[5], "model.layers.1.self_attn.k_norm.weight"), 33, 3.0f);
}

static void tamper_post_ff(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* a wrong post_feedforward_layernorm replica on the last rank only */
	set_bf16_at(find_tensor(&r[n - 1], "model.layers.0.post_feedforward_layernorm.weight"), 0,
	            3.0f);
}

static void tamper_post_attn(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* a wrong post_attention_layernorm replica on rank 0 only */
	(void)n;
	set_bf16_at(find_tensor(&r[0], "model.layers.1.post_attention_layernorm.weight"), 7, 3.0f);
}

static void tamper_qkv(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* the ranks' [q_r; k_r; v_r] exchanged */
	assert_int_equal(n, 2);
	swap_data(&r[0], &r[1], "model.layers.1.self_attn.qkv_proj.weight");
}

/* KV 2: TP 4 and 8 replicate kv heads, whose k sums of squares count once. */
static void test_olmo2(void **state)
{
	(void)state;
	for (uint32_t tp = 1; tp <= 8; tp *= 2)
		expect_pass("olmo2", tp, 1, WT_QUANT_NONE, 0);
	expect_pass("olmo2", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("olmo2", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* A wrong slice or replica of any OLMo 2 norm on one rank fails; a rank's replica
 * outside the slice it uses does not matter. */
static void test_olmo2_caught(void **state)
{
	(void)state;
	expect_verdict(2, tamper_q_norm_slice, false);
	expect_verdict(2, tamper_k_norm, false);
	expect_verdict(8, tamper_k_norm_replica, false);
	expect_verdict(4, tamper_post_ff, false);
	expect_verdict(2, tamper_post_attn, false);
	expect_verdict(2, tamper_qkv, false);
	expect_verdict(2, tamper_q_norm_unused, true);
}

/* max|a - b| / max|a| of two full passes. */
static double full_ratio(const float *a, const float *b)
{
	ref_diff d;
	ref_compare(a, b, N_TOK * V_OLMO2, &d);
	assert_false(d.nonfinite);
	return d.max_abs_diff / d.max_abs_ref;
}

/* The fixture's configuration, and the full path without each OLMo 2 piece:
 * q/k norms, the norms on the block outputs, and with Llama's input norms (the
 * post_attention_layernorm then before the MLP) instead. */
static void test_olmo2_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c, off;
	wt_errbuf err = {0};
	open_model(&m, "olmo2");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.olmo2 && c.qk_norm && c.sandwich && c.kind == REF_DENSE);
	assert_true(c.eps == 1e-6 && c.theta == 500000.0 && c.act == REF_ACT_SILU);
	assert_int_equal(c.d, 32);
	float *base = malloc(N_TOK * V_OLMO2 * sizeof(float)),
	      *lg = malloc(N_TOK * V_OLMO2 * sizeof(float));
	assert_true(base && lg);
	assert_int_equal(ref_forward_full(&c, &ck, g_tokens, N_TOK, base, NULL, &err), WT_OK);
	static const char *what[] = {"q_norm / k_norm skipped", "output norms skipped"};
	for (int i = 0; i < 2; i++) {
		off = c;
		off.qk_norm = i != 0;
		off.sandwich = i != 1;
		assert_int_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, lg, NULL, &err),
		                 WT_OK);
		double r = full_ratio(base, lg);
		print_message("olmo2 %s: max|diff| / max|logit| %.3g\n", what[i], r);
		assert_true(r > 1e-2);
	}
	/* a stray input_layernorm is not an OLMo 2 tensor: the Llama reading needs it */
	off = c;
	off.olmo2 = off.qk_norm = off.sandwich = false;
	assert_int_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, lg, NULL, &err),
	                 WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "input_layernorm"));
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

/* Olmo2Config's defaults where config.json says nothing. */
static void test_olmo2_config(void **state)
{
	(void)state;
	static const char json[] =
	    "{\"architectures\": [\"Olmo2ForCausalLM\"], \"hidden_size\": 64, "
	    "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 1, "
	    "\"vocab_size\": 100, \"intermediate_size\": 128}";
	ref_cfg c;
	wt_errbuf err = {0};
	assert_int_equal(ref_cfg_parse_json(json, strlen(json), &c, &err), WT_OK);
	assert_true(c.olmo2 && c.qk_norm && c.sandwich);
	assert_true(c.eps == 1e-5 && c.theta == 10000.0 && c.act == REF_ACT_SILU);
}

static void tamper_olmoe_k_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2 x EP 2: the k_norm replica of tp rank 1 of EP group 1, in its slice */
	assert_int_equal(n, 4);
	set_bf16_at(find_tensor(&r[3], "model.layers.1.self_attn.k_norm.weight"), 40, 3.0f);
}

static void tamper_olmoe_experts(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* EP 2: experts 0-3 and 4-7 exchanged */
	assert_int_equal(n, 2);
	swap_data(&r[0], &r[1], "model.layers.0.mlp.experts.w2_weight");
}

/* OLMoE: pre-norms, full-width q/k norms, softmax top-k routing over 8 experts. */
static void test_olmoe(void **state)
{
	(void)state;
	expect_pass("olmoe", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("olmoe", 1, 2, WT_QUANT_NONE, 0);
	expect_pass("olmoe", 2, 2, WT_QUANT_NONE, 1);
	expect_pass("olmoe", 8, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 8 */
	expect_pass("olmoe", 1, 4, WT_QUANT_INT8_CHANNEL, 0);
	ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(
	    run("olmoe", 2, 2, WT_QUANT_NONE, 0, tamper_olmoe_k_norm, NULL, &res, &err), WT_OK);
	assert_false(res.pass);
	assert_int_equal(
	    run("olmoe", 1, 2, WT_QUANT_NONE, 0, tamper_olmoe_experts, NULL, &res, &err), WT_OK);
	assert_false(res.pass);
	ref_cfg c;
	float *lg = malloc(N_TOK * V_OLMO2 * sizeof(float));
	assert_non_null(lg);
	full_logits("olmoe", lg, &c);
	assert_true(c.kind == REF_QWEN2_MOE && c.qk_norm && c.qk_norm_full && !c.olmo2 &&
	            !c.sandwich && c.E == 8 && c.topk == 2 && !c.norm_topk && c.Is == 0);
	free(lg);
	static const char clip[] =
	    "{\"architectures\": [\"OlmoeForCausalLM\"], \"hidden_size\": 64, "
	    "\"num_attention_heads\": 4, \"num_hidden_layers\": 1, \"vocab_size\": 100, "
	    "\"intermediate_size\": 32, \"num_experts\": 4, \"num_experts_per_tok\": 2, "
	    "\"clip_qkv\": 8.0}";
	assert_int_equal(ref_cfg_parse_json(clip, strlen(clip), &c, &err), WT_OK);
	assert_true(c.clip_qkv == 8.0 && c.qk_norm_full);
}

static void tamper_o_proj(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: the ranks' o_proj column slices exchanged */
	assert_int_equal(n, 2);
	swap_data(&r[0], &r[1], "model.layers.0.self_attn.o_proj.weight");
}

static void tamper_down(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: one element of rank 3's down_proj slice */
	assert_int_equal(n, 4);
	set_bf16_at(find_tensor(&r[3], "model.layers.1.mlp.down_proj.weight"), 77, 3.0f);
}

/* OLMo 1: parameter-free LayerNorms before attention, before the MLP and at the end;
 * tied (the fixture is OLMo-1B-hf's shape); KV 2 replicated at TP 4 and 8. */
static void test_olmo(void **state)
{
	(void)state;
	for (uint32_t tp = 1; tp <= 8; tp *= 2)
		expect_pass("olmo", tp, 1, WT_QUANT_NONE, 0);
	expect_pass("olmo", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("olmo", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(run("olmo", 2, 1, WT_QUANT_NONE, 0, tamper_qkv, NULL, &res, &err), WT_OK);
	assert_false(res.pass);
	assert_int_equal(run("olmo", 2, 1, WT_QUANT_NONE, 0, tamper_o_proj, NULL, &res, &err),
	                 WT_OK);
	assert_false(res.pass);
	assert_int_equal(run("olmo", 4, 1, WT_QUANT_NONE, 0, tamper_down, NULL, &res, &err), WT_OK);
	assert_false(res.pass);
}

/* The fixture's configuration (OLMo-1B-hf's keys: tied, clip_qkv null); its norms are
 * OlmoLayerNorm's (x - mean) / sqrt(var + 1e-5), read from no tensor; without norm_free
 * the Llama reading asks for input_layernorm, which OLMo 1 checkpoints do not have. */
static void test_olmo_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c, off;
	wt_errbuf err = {0};
	open_model(&m, "olmo");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.norm_free && !c.layernorm && !c.qk_norm && !c.sandwich && !c.olmo2);
	assert_true(c.kind == REF_DENSE && c.tied && c.eps == 1e-5 && c.clip_qkv == 0.0);
	float x[256], y[256];
	double mean = 0.0, var = 0.0;
	for (int i = 0; i < 256; i++)
		mean += (x[i] = (float)(i % 7) + 0.25f) / 256.0; /* mean 3.2: not an RMSNorm */
	for (int i = 0; i < 256; i++)
		var += (x[i] - mean) * (x[i] - mean) / 256.0;
	ref_set none = {0};
	assert_int_equal(ref_norm_of(&c, &none, y, x, 1, &err, "model.norm"), WT_OK);
	for (int i = 0; i < 256; i++)
		assert_float_equal(y[i], (x[i] - mean) / sqrt(var + 1e-5), 1e-5);
	float *lg = malloc(N_TOK * V_OLMO2 * sizeof(float));
	assert_non_null(lg);
	assert_int_equal(ref_forward_full(&c, &ck, g_tokens, N_TOK, lg, NULL, &err), WT_OK);
	off = c;
	off.norm_free = false;
	assert_int_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, lg, NULL, &err),
	                 WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "input_layernorm"));
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

/* OlmoConfig's defaults; OlmoLayerNorm's eps is 1e-5 whatever config.json says; clip_qkv
 * a positive finite number or null. */
static void test_olmo_config(void **state)
{
	(void)state;
#define OLMO_JSON(extra)                                                                           \
	"{\"architectures\": [\"OlmoForCausalLM\"], \"hidden_size\": 64, "                         \
	"\"num_attention_heads\": 4, \"num_hidden_layers\": 1, \"vocab_size\": 100, "              \
	"\"intermediate_size\": 128" extra "}"
	static const char *const bad[] = {
	    OLMO_JSON(", \"clip_qkv\": 0"), OLMO_JSON(", \"clip_qkv\": -1.5"),
	    OLMO_JSON(", \"clip_qkv\": \"8\""), OLMO_JSON(", \"clip_qkv\": true")};
	ref_cfg c;
	wt_errbuf err = {0};
	const char *ok = OLMO_JSON(", \"rms_norm_eps\": 1e-6, \"clip_qkv\": null");
	assert_int_equal(ref_cfg_parse_json(ok, strlen(ok), &c, &err), WT_OK);
	assert_true(c.norm_free && c.eps == 1e-5 && c.clip_qkv == 0.0 && !c.tied);
	assert_true(c.KV == 4 && c.theta == 10000.0 && c.act == REF_ACT_SILU);
	ok = OLMO_JSON(", \"clip_qkv\": 8");
	assert_int_equal(ref_cfg_parse_json(ok, strlen(ok), &c, &err), WT_OK);
	assert_true(c.clip_qkv == 8.0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(ref_cfg_parse_json(bad[i], strlen(bad[i]), &c, &err), WT_ECORRUPT);
		assert_non_null(strstr(err.msg, "clip_qkv"));
	}
	static const char moe[] =
	    "{\"architectures\": [\"OlmoeForCausalLM\"], \"hidden_size\": 64, "
	    "\"num_attention_heads\": 4, \"num_hidden_layers\": 1, \"vocab_size\": 100, "
	    "\"intermediate_size\": 32, \"num_experts\": 4, \"num_experts_per_tok\": 2, "
	    "\"clip_qkv\": -8.0}";
	assert_int_equal(ref_cfg_parse_json(moe, strlen(moe), &c, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "clip_qkv"));
#undef OLMO_JSON
}

/* Family fam with clip_qkv `bound` (folder out): full and sharded agree under layout
 * (tp, ep), and the clamp moves the full path's logits by more than 1e-2. */
static void clip_pass(const char *fam, const char *out, const char *bound, uint32_t tp, uint32_t ep)
{
	assert_int_equal(gen_family(fam, out), 0);
	char *dir = tu_path(g_root, out), to[64];
	snprintf(to, sizeof(to), "\"clip_qkv\": %s", bound);
	edit_config(dir, "\"clip_qkv\": null", to);
	free(dir);
	expect_pass(out, tp, ep, WT_QUANT_NONE, 0);
	ref_cfg a, b;
	float *la = malloc(N_TOK * V_OLMO2 * sizeof(float)),
	      *lb = malloc(N_TOK * V_OLMO2 * sizeof(float));
	assert_true(la && lb);
	full_logits(fam, la, &a);
	full_logits(out, lb, &b);
	assert_true(a.clip_qkv == 0.0 && b.clip_qkv == strtod(bound, NULL) && b.V == V_OLMO2);
	char what[128];
	snprintf(what, sizeof(what), "%s clip_qkv %s vs none", fam, bound);
	expect_moved(la, lb, N_TOK * V_OLMO2, 1e-2, what);
	free(la);
	free(lb);
}

/* clip_qkv bites (1.0 clamps part of the fixtures' q, k, v; 4.0 would not) in both paths:
 * a path that skipped the clamp would fail its full vs sharded check, both skipping it
 * the moved check. */
static void test_clip_qkv(void **state)
{
	(void)state;
	clip_pass("olmo", "olmo_clip", "1.0", 2, 1);
	expect_pass("olmo_clip", 8, 1, WT_QUANT_NONE, 0);
	clip_pass("olmoe", "olmoe_clip", "1.0", 2, 2);
	expect_pass("olmoe_clip", 4, 1, WT_QUANT_NONE, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_olmo2),          cmocka_unit_test(test_olmo2_caught),
	    cmocka_unit_test(test_olmo2_switches), cmocka_unit_test(test_olmo2_config),
	    cmocka_unit_test(test_olmoe),          cmocka_unit_test(test_olmo),
	    cmocka_unit_test(test_olmo_switches),  cmocka_unit_test(test_olmo_config),
	    cmocka_unit_test(test_clip_qkv),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
