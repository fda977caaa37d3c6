/*
 * test_reference_fam.c — the reference forward pass (reference/cfg_fam.c) over
 * Phi-3, StarCoder2, DeepSeek-V2 and GLM-4 checkpoints: full and sharded logits agree
 * within REF_TOL_F32 (unquantized) or the scheme's budget, and a wrong shard
 * is caught. Phi-3's checkpoint holds qkv_proj / gate_up_proj fused, which the
 * full path splits; StarCoder2 has LayerNorm biases and a plain c_fc / c_proj
 * MLP; DeepSeek-V2 routes with softmax scores; GLM-4's checkpoint holds
 * gate_up_proj fused, its RoPE turns adjacent pairs of the first half of each
 * head, and GLM-4-0414 adds two sandwich norms; Granite multiplies embeddings,
 * scores and residual branches and divides the logits, GraniteMoE with its experts
 * stacked in the checkpoint. Fixtures come from
 * $WT_BUILD/wt-mkckpt (seed printed). Config-only tests:
 * tests/test_reference_cfg.c.
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

#include "reference/reference.h"
#include "reference/ckpt.h"
#include "kernels/kernels.h"
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"phi3", "starcoder2", "deepseek_v2", "glm",
	                             "glm4", "granite",    "granitemoe",  "granitemoeshared"};
	return gen_fixtures("reference_fam", fams, sizeof(fams) / sizeof(fams[0]));
}

/* Swap the two row halves of a [2 n, k] tensor in place ([gate_r; up_r] -> [up_r; gate_r]). */
static void swap_halves(ref_tensor *t)
{
	uint64_t h = t->nbytes / 2;
	uint8_t *tmp = malloc(h);
	assert_non_null(tmp);
	memcpy(tmp, t->data, h);
	memmove(t->data, t->data + h, h);
	memcpy(t->data + h, tmp, h);
	free(tmp);
}

/* Set element 0 of a BF16 tensor to v. */
static void set_bf16(ref_tensor *t, float v)
{
	assert_int_equal(t->dtype, WT_BF16);
	uint16_t x = kern_f32_to_bf16(v);
	memcpy(t->data, &x, sizeof(x));
}

/* ---- Phi-3 ---- */

static void tamper_phi3_gate_up(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	swap_halves(find_tensor(&r[n - 1], "model.layers.0.mlp.gate_up_proj.weight"));
}

/* qkv_proj / gate_up_proj fused in the checkpoint; KV 2, so TP 4 and 8 replicate
 * kv heads out of the fused source. */
static void test_phi3(void **state)
{
	(void)state;
	for (uint32_t tp = 1; tp <= 8; tp *= 2)
		expect_pass("phi3", tp, 1, WT_QUANT_NONE, 0);
	expect_pass("phi3", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("phi3", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_swapped("phi3", 2, 1, "model.layers.1.self_attn.qkv_proj.weight", NULL);
	expect_caught("phi3", 4, 1, tamper_phi3_gate_up, NULL);
}

/* Phi-4-mini's RoPE: partial_rotary_factor and LongRoPE, plus a sliding window
 * shorter than the tokens: both paths agree, and the switches act. */
static void test_phi3_rope(void **state)
{
	(void)state;
	assert_int_equal(gen_family("phi3", "phi3_rope"), 0);
	char *dir = tu_path(g_root, "phi3_rope");
	edit_config(dir, "{", "{\"partial_rotary_factor\": 0.5,");
	edit_config(dir, "\"rope_scaling\": null",
	            "\"rope_scaling\": {\"type\": \"longrope\", \"short_factor\": [1.0, 1.2, "
	            "1.5, 2.0, 2.5, 3.0, 4.0, 5.0], \"long_factor\": [1, 2, 3, 4, 6, 8, 12, 16]}");
	edit_config(dir, "\"sliding_window\": 2047", "\"sliding_window\": 3");
	edit_config(dir, " \"max_position_embeddings\": 4096",
	            " \"max_position_embeddings\": 131072");
	free(dir);
	expect_pass("phi3_rope", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("phi3_rope", 8, 1, WT_QUANT_NONE, 0);
	ref_cfg a, b;
	float *la = malloc(N_TOK * 1000 * sizeof(float)),
	      *lb = malloc(N_TOK * 1000 * sizeof(float));
	assert_true(la && lb);
	full_logits("phi3", la, &a);
	full_logits("phi3_rope", lb, &b);
	assert_int_equal(a.rot_dim, 32);
	assert_int_equal(b.rot_dim, 16);
	assert_int_equal(b.n_ext, 8);
	assert_int_equal(b.window, 3);
	print_message("phi3 rope_scaling longrope mscale %.6f\n", b.rope_mscale);
	expect_moved(la, lb, N_TOK * 1000, 1e-3,
	             "phi3 partial rotary + longrope + window 3 vs plain");
	free(la);
	free(lb);
}

/* ---- StarCoder2 ---- */

static void tamper_sc2_ln_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* a wrong LayerNorm bias replica on the last rank only */
	set_bf16(find_tensor(&r[n - 1], "model.layers.1.post_attention_layernorm.bias"), 3.0f);
}

static void tamper_sc2_c_proj_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* the replicated c_proj bias, added once after the all-reduce */
	(void)n;
	set_bf16(find_tensor(&r[0], "model.layers.0.mlp.c_proj.bias"), 3.0f);
}

/* LayerNorm with biases, biases on every linear, c_fc / c_proj MLP, tied (key absent). */
static void test_starcoder2(void **state)
{
	(void)state;
	expect_pass("starcoder2", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("starcoder2", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("starcoder2", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("starcoder2", 8, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 8 */
	expect_pass("starcoder2", 2, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("starcoder2", 4, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_caught("starcoder2", 4, 1, tamper_sc2_ln_bias, NULL);
	expect_caught("starcoder2", 2, 1, tamper_sc2_c_proj_bias, NULL);
	expect_swapped("starcoder2", 2, 1, "model.layers.1.mlp.c_fc.bias", NULL);
}

/* ---- DeepSeek-V2 ---- */

static void tamper_ds2_router(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* a wrong router replica on the last rank */
	swap_halves(find_tensor(&r[n - 1], "model.layers.1.mlp.gate.weight"));
}

/* V2-Lite's shape: q_proj (no q LoRA), softmax greedy routing, 2 shared experts. */
static void test_deepseek_v2(void **state)
{
	(void)state;
	expect_pass("deepseek_v2", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("deepseek_v2", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("deepseek_v2", 1, 2, WT_QUANT_NONE, 0);
	expect_pass("deepseek_v2", 2, 2, WT_QUANT_NONE, 0);
	expect_pass("deepseek_v2", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("deepseek_v2", 1, 2, WT_QUANT_FP8_CHANNEL, 0);
	expect_swapped("deepseek_v2", 1, 2, "model.layers.1.mlp.experts.w13_weight", NULL);
	expect_caught("deepseek_v2", 2, 1, tamper_ds2_router, NULL);
	expect_swapped("deepseek_v2", 2, 1, "model.layers.0.self_attn.q_proj.weight", NULL);
}

/* group_limited_greedy with a routed_scaling_factor: both paths agree, and the
 * routing differs from greedy's. */
static void test_deepseek_v2_groups(void **state)
{
	(void)state;
	assert_int_equal(gen_family("deepseek_v2", "deepseek_v2_g"), 0);
	char *dir = tu_path(g_root, "deepseek_v2_g");
	edit_config(dir, "\"topk_method\": \"greedy\"",
	            "\"topk_method\": \"group_limited_greedy\"");
	edit_config(dir, "\"n_group\": 1", "\"n_group\": 2");
	edit_config(dir, "\"routed_scaling_factor\": 1.0", "\"routed_scaling_factor\": 2.5");
	free(dir);
	expect_pass("deepseek_v2_g", 2, 2, WT_QUANT_NONE, 0);
	expect_pass("deepseek_v2_g", 1, 2, WT_QUANT_NONE, 0);
	ref_cfg a, b;
	float *la = malloc(N_TOK * 1000 * sizeof(float)),
	      *lb = malloc(N_TOK * 1000 * sizeof(float));
	assert_true(la && lb);
	full_logits("deepseek_v2", la, &a);
	full_logits("deepseek_v2_g", lb, &b);
	assert_int_equal(b.n_group, 2);
	assert_true(b.routed_scale == 2.5);
	ref_diff d;
	ref_compare(la, lb, N_TOK * 1000, &d);
	assert_false(ref_within(&d, 1e-3));
	free(la);
	free(lb);
}

/* ---- GLM-4 ---- */

static void tamper_glm_gate_up(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* [gate_r; up_r] -> [up_r; gate_r] on the last rank */
	swap_halves(find_tensor(&r[n - 1], "model.layers.1.mlp.gate_up_proj.weight"));
}

static void tamper_glm4_post_mlp(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* a wrong post_mlp_layernorm replica on the last rank only */
	set_bf16(find_tensor(&r[n - 1], "model.layers.0.post_mlp_layernorm.weight"), 3.0f);
}

static void tamper_glm4_post_attn(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* a wrong post_self_attn_layernorm replica on rank 0 only */
	(void)n;
	set_bf16(find_tensor(&r[0], "model.layers.1.post_self_attn_layernorm.weight"), 3.0f);
}

/* The configuration GLM-4's config.json gives: rotary half of head_dim 64 on
 * adjacent pairs, gate_up_proj fused, GlmConfig's eps; glm4 the sandwich. */
static void check_glm_cfg(const ref_cfg *c, int glm)
{
	assert_int_equal(c->glm, glm);
	assert_int_equal(c->d, 64);
	assert_int_equal(c->rot_dim, 32);
	assert_true(c->rope_pairs && c->fused_gate_up && !c->fused_ckpt);
	assert_true(c->eps == 1.5625e-07);
	assert_true(c->sandwich == (glm == 2));
}

/* q/k/v biases, gate_up_proj fused in the checkpoint; KV 2 < TP 4, 8. */
static void test_glm(void **state)
{
	(void)state;
	for (uint32_t tp = 1; tp <= 8; tp *= 2)
		expect_pass("glm", tp, 1, WT_QUANT_NONE, 0);
	expect_pass("glm", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_caught("glm", 4, 1, tamper_glm_gate_up, NULL);
	expect_swapped("glm", 2, 1, "model.layers.0.self_attn.qkv_proj.bias", NULL);
	ref_cfg c;
	float *lg = malloc(N_TOK * 1000 * sizeof(float));
	assert_non_null(lg);
	full_logits("glm", lg, &c);
	check_glm_cfg(&c, 1);
	free(lg);
}

/* glm + post_self_attn_layernorm / post_mlp_layernorm, each rank's replica. */
static void test_glm4(void **state)
{
	(void)state;
	expect_pass("glm4", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("glm4", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("glm4", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_caught("glm4", 4, 1, tamper_glm4_post_mlp, NULL);
	expect_caught("glm4", 2, 1, tamper_glm4_post_attn, NULL);
	expect_caught("glm4", 2, 1, tamper_glm_gate_up, NULL);
	ref_cfg c;
	float *lg = malloc(N_TOK * 1000 * sizeof(float));
	assert_non_null(lg);
	full_logits("glm4", lg, &c);
	check_glm_cfg(&c, 2);
	free(lg);
}

/* ---- Granite ---- */

static void tamper_granite_o_proj(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_int_equal(n, 4);
	swap_data(&r[1], &r[2], "model.layers.0.self_attn.o_proj.weight");
}

/* Llama's tensors with granite-3.0-2b's multipliers (embedding 12, residual 0.22,
 * attention 0.015625, logits / 8) and an odd vocabulary padded per rank; each
 * multiplier moves the logits, so both paths must apply them alike. */
static void test_granite(void **state)
{
	(void)state;
	for (uint32_t tp = 1; tp <= 8; tp *= 2)
		expect_pass("granite", tp, 1, WT_QUANT_NONE, 0);
	expect_pass("granite", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_caught("granite", 4, 1, tamper_granite_o_proj, NULL);
	ref_cfg a, b;
	size_t n = N_TOK * 1003;
	float *la = malloc(n * sizeof(float)), *lb = malloc(n * sizeof(float));
	assert_true(la && lb);
	full_logits("granite", la, &a);
	assert_true(a.granite && a.embed_scale == 12.0f && a.resid_mult == 0.22 &&
	            a.attn_scale == 0.015625 && a.logits_div == 8.0 && a.eps == 1e-5);
	static const char *const keys[] = {
	    "\"embedding_multiplier\": 12.0,", "\"residual_multiplier\": 0.22,",
	    "\"attention_multiplier\": 0.015625,", "\"logits_scaling\": 8.0,"};
	for (size_t k = 0; k < 4; k++) {
		char out[32];
		snprintf(out, sizeof(out), "granite_%zu", k);
		assert_int_equal(gen_family("granite", out), 0);
		char *dir = tu_path(g_root, out);
		edit_config(dir, keys[k], ""); /* absent: GraniteConfig's 1.0 */
		free(dir);
		expect_pass(out, 2, 1, WT_QUANT_NONE, 0);
		full_logits(out, lb, &b);
		char what[96];
		snprintf(what, sizeof(what), "granite without %s", keys[k]);
		expect_moved(la, lb, n, 1e-2, what);
	}
	free(la);
	free(lb);
	wt_errbuf err = {0};
	static const char bad[] =
	    "{\"architectures\": [\"GraniteForCausalLM\"], \"hidden_size\": 64, "
	    "\"num_attention_heads\": 4, \"num_hidden_layers\": 1, \"vocab_size\": 100, "
	    "\"intermediate_size\": 128, \"logits_scaling\": 0}";
	assert_int_equal(ref_cfg_parse_json(bad, strlen(bad), &b, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "logits_scaling 0"));
}

static void tamper_granitemoe_router(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* the router replica of the last rank: its choices differ */
	set_bf16(find_tensor(&r[n - 1], "model.layers.0.block_sparse_moe.gate.weight"), 40.0f);
}

/* GraniteMoE: the checkpoint's stacked input_linear / output_linear and router.layer
 * (full path) against Mixtral's w13 / w2 stacks and gate on the ranks (sharded),
 * with Granite's multipliers. */
static void test_granitemoe(void **state)
{
	(void)state;
	expect_pass("granitemoe", 1, 2, WT_QUANT_NONE, 0);
	expect_pass("granitemoe", 2, 2, WT_QUANT_NONE, 0);
	expect_pass("granitemoe", 1, 4, WT_QUANT_NONE, 0); /* E 6: 2 2 1 1 */
	expect_pass("granitemoe", 4, 1, WT_QUANT_NONE, 1); /* experts TP-split, up_gate */
	expect_pass("granitemoe", 2, 2, WT_QUANT_FP8_BLOCK, 0);
	expect_swapped("granitemoe", 1, 2, "model.layers.1.block_sparse_moe.experts.w13_weight",
	               NULL);
	expect_caught("granitemoe", 2, 1, tamper_granitemoe_router, NULL);
	ref_cfg c;
	float *lg = malloc(N_TOK * 1003 * sizeof(float));
	assert_non_null(lg);
	full_logits("granitemoe", lg, &c);
	assert_true(c.kind == REF_MIXTRAL && c.stacked_experts && c.granite && c.E == 6 &&
	            c.topk == 2 && c.norm_topk && c.logits_div == 6.0);
	free(lg);
}

static void tamper_gms_shared(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* the last rank's shared MLP read as [up_r; gate_r] */
	swap_halves(find_tensor(&r[n - 1], "model.layers.1.shared_mlp.input_linear.weight"));
}

/* GraniteMoeShared: + shared_mlp.input_linear ([gate; up] rows) / output_linear added
 * ungated to the experts' sum, TP-split on every EP group's ranks. */
static void test_granitemoeshared(void **state)
{
	(void)state;
	expect_pass("granitemoeshared", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("granitemoeshared", 1, 2, WT_QUANT_NONE, 0);
	expect_pass("granitemoeshared", 2, 2, WT_QUANT_NONE, 1);
	expect_pass("granitemoeshared", 4, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_caught("granitemoeshared", 2, 1, tamper_gms_shared, NULL);
	expect_caught("granitemoeshared", 2, 2, tamper_gms_shared, NULL);
	ref_cfg c;
	float *lg = malloc(N_TOK * 1000 * sizeof(float));
	assert_non_null(lg);
	full_logits("granitemoeshared", lg, &c);
	assert_true(c.stacked_experts && c.granite && c.Is == 256 && c.E == 4);
	/* the full path adds the shared MLP: zeroing its output weights moves the logits */
	model m = {0};
	ref_set ck = {0};
	wt_errbuf err = {0};
	float *lz = malloc(N_TOK * 1000 * sizeof(float));
	assert_non_null(lz);
	open_model(&m, "granitemoeshared");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	for (int l = 0; l < 2; l++) {
		char name[96];
		snprintf(name, sizeof(name), "model.layers.%d.shared_mlp.output_linear.weight", l);
		ref_tensor *t = find_tensor(&ck, name);
		memset(t->data, 0, t->nbytes);
	}
	assert_int_equal(ref_forward_full(&c, &ck, g_tokens, N_TOK, lz, NULL, &err), WT_OK);
	expect_moved(lg, lz, N_TOK * 1000, 1e-3, "granitemoeshared without its shared MLP");
	ref_set_clear(&ck);
	close_model(&m);
	free(lz);
	free(lg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_phi3),
	    cmocka_unit_test(test_phi3_rope),
	    cmocka_unit_test(test_starcoder2),
	    cmocka_unit_test(test_deepseek_v2),
	    cmocka_unit_test(test_deepseek_v2_groups),
	    cmocka_unit_test(test_glm),
	    cmocka_unit_test(test_glm4),
	    cmocka_unit_test(test_granite),
	    cmocka_unit_test(test_granitemoe),
	    cmocka_unit_test(test_granitemoeshared),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
