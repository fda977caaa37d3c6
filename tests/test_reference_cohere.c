/*
 * test_reference_cohere.c — the reference forward pass over Cohere Command R / R+
 * (CohereForCausalLM) and Command R7B / Command A (Cohere2ForCausalLM;
 * reference/cfg_cohere.c): bias-free LayerNorms, the parallel block (attention and MLP
 * on one input_layernorm), per-head q/k LayerNorms [H, d] / [KV, d] split by heads,
 * RoPE on adjacent pairs, logit_scale; Cohere2's sliding layers (window 4 over 7
 * tokens) with RoPE and its full layer without. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path's logits
 * equal transformers 4.57.1's (eager, float32) at 28 points each; rank tensors broken
 * the way a wrong planner would break them are caught; each switch moves the logits;
 * config defaults and refusals. Fixtures from $WT_BUILD/wt-mkckpt --family cohere /
 * cohere2 (hid 256, H 8, KV 2, d 32, I 512, V 1000; 2 and 4 layers; seed printed).
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

#define V_CO 1000
#define A1   "model.layers.1.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"cohere", "cohere2"};
	return gen_fixtures("reference_cohere", fams, 2);
}

static void test_cohere_pass(void **state)
{
	(void)state;
	static const char *forms[] = {"cohere", "cohere2"};
	for (int f = 0; f < 2; f++) {
		expect_pass(forms[f], 1, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
		expect_pass(forms[f], 8, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 1, WT_QUANT_INT8_CHANNEL, 0);
		expect_pass(forms[f], 4, 1, WT_QUANT_FP8_CHANNEL, 0);
		expect_pass(forms[f], 2, 1, WT_QUANT_FP8_BLOCK, 0);
	}
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_cohere[] = {
    {0, 155, -1.58283442e-01f}, {0, 681, 4.84503433e-02f},  {0, 768, 5.28294742e-02f},
    {0, 990, -1.23861142e-01f}, {1, 21, 8.79745707e-02f},   {1, 555, 6.61148727e-02f},
    {1, 618, -7.54667893e-02f}, {1, 676, 2.15150826e-02f},  {2, 284, -1.37419418e-01f},
    {2, 456, -7.44305551e-03f}, {2, 481, 8.14563483e-02f},  {2, 583, -5.01437932e-02f},
    {3, 302, -5.98599613e-02f}, {3, 342, 1.86972752e-01f},  {3, 364, -4.45759892e-02f},
    {3, 857, 2.07340755e-02f},  {4, 504, -2.41906643e-02f}, {4, 560, 1.33418649e-01f},
    {4, 561, 3.06644067e-02f},  {4, 751, 7.96102956e-02f},  {5, 113, 1.10877857e-01f},
    {5, 119, 6.02152534e-02f},  {5, 364, 3.01257782e-02f},  {5, 720, 3.50281261e-02f},
    {6, 372, -3.74111161e-03f}, {6, 651, -8.75483900e-02f}, {6, 867, -2.13729739e-01f},
    {6, 958, -4.71081473e-02f},
};
static const gold_pt gold_cohere2[] = {
    {0, 155, -2.61783391e-01f}, {0, 681, 4.06458974e-03f},  {0, 768, 8.72928798e-02f},
    {0, 990, -3.70481610e-02f}, {1, 21, 1.76146865e-01f},   {1, 555, 1.19618475e-01f},
    {1, 618, 3.04940373e-01f},  {1, 676, 4.87791412e-02f},  {2, 284, 1.26795709e-01f},
    {2, 456, 3.75310123e-01f},  {2, 481, -2.45981067e-01f}, {2, 583, -4.78101596e-02f},
    {3, 302, 2.83267722e-02f},  {3, 342, -5.98122552e-02f}, {3, 364, -1.34548977e-01f},
    {3, 857, 2.28726983e-01f},  {4, 504, -5.00676185e-02f}, {4, 560, -3.66408467e-01f},
    {4, 561, 2.22118258e-01f},  {4, 751, -3.51666436e-02f}, {5, 113, 5.60350046e-02f},
    {5, 119, 2.99097985e-01f},  {5, 364, -1.91351473e-02f}, {5, 720, 1.76389143e-01f},
    {6, 372, 8.72415528e-02f},  {6, 651, 1.45478547e-01f},  {6, 867, 1.22186989e-02f},
    {6, 958, 8.55770484e-02f},
};

/* The full path's logits of fam at the golden points, within 1e-5 (measured 1.5e-7 and
 * 2.4e-7; over all 7000 logits 2.7e-7 and 5.1e-7): each of the parallel
 * block, the mean-subtracting norms, the per-head q/k norms, pair RoPE, logit_scale and
 * Cohere2's NoPE full layer moves them by far more (test_cohere_switches). */
#define GOLD_TOL 1e-5

static void test_cohere_transformers(void **state)
{
	(void)state;
	expect_gold("cohere", V_CO, GOLD_TOL, gold_cohere,
	            sizeof(gold_cohere) / sizeof(gold_cohere[0]));
	expect_gold("cohere2", V_CO, GOLD_TOL, gold_cohere2,
	            sizeof(gold_cohere2) / sizeof(gold_cohere2[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_qnorm_rows(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1 holds rank 0's q_norm rows (heads 0-3, not 4-7) */
	assert_int_equal(n, 2);
	ref_tensor *a = find_tensor(&r[0], A1 "q_norm.weight"),
	           *b = find_tensor(&r[1], A1 "q_norm.weight");
	memcpy(b->data, a->data, a->nbytes);
}

static void tamper_input_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's input_layernorm replica times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], "model.layers.1.input_layernorm.weight", 2.0f);
}

static void test_cohere_caught(void **state)
{
	(void)state;
	expect_caught("cohere", 2, 1, tamper_qnorm_rows, "rank 1's q_norm rows those of rank 0");
	expect_swapped("cohere", 2, 1, A1 "k_norm.weight", "k_norm rows exchanged");
	expect_caught("cohere", 2, 1, tamper_input_norm, "input_layernorm replica x2 on rank 1");
	expect_halves_swapped(
	    "cohere", 1, 1,
	    (tamper_halves){"model.layers.1.mlp.gate_up_proj.weight", 0, 1, 512, 256 * 2},
	    "gate / up halves swapped");
	expect_caught("cohere2", 2, 1, tamper_input_norm, "Cohere2: input_layernorm x2 on rank 1");
	expect_zeroed("cohere2", 2, 1, 1, "model.layers.3.self_attn.o_proj.weight",
	              "Cohere2: rank 1's o_proj slice dropped");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_cohere_switches(void **state)
{
	(void)state;
	static const char *forms[] = {"cohere", "cohere2"};
	for (int f = 0; f < 2; f++) {
		model m = {0};
		ref_set ck = {0};
		ref_cfg c;
		wt_errbuf err = {0};
		open_model(&m, forms[f]);
		assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
		assert_true(c.cohere == f + 1 && c.kind == REF_DENSE && c.layernorm &&
		            c.rope_pairs && c.qk_norm == (f == 0) && c.tied == (f == 0) &&
		            c.d == 32 && c.I == 512 && c.rot_dim == 0);
		assert_float_equal(c.logit_mult, f == 0 ? 0.25 : 0.5, 0.0);
		assert_float_equal(c.eps, 1e-5, 1e-12);
		assert_float_equal(c.theta, f == 0 ? 75000.0 : 50000.0, 1e-9);
		assert_int_equal(c.window, f == 0 ? 0 : 4);
		assert_int_equal(c.window_pattern, f == 0 ? 0 : 4);
		size_t n = N_TOK * V_CO;
		float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
		assert_true(base && lg);
		logits_with(&c, &ck, base);
		ref_cfg off = c;
		off.rope_pairs = false;
		logits_with(&off, &ck, lg);
		expect_moved(base, lg, n, 1e-3, "rotate-half instead of adjacent pairs");
		off = c;
		off.logit_mult = 0.0;
		logits_with(&off, &ck, lg);
		expect_moved(base, lg, n, 1e-3, "logit_scale ignored");
		off = c;
		off.layernorm = false; /* RMSNorm: the mean not subtracted */
		logits_with(&off, &ck, lg);
		expect_moved(base, lg, n, 1e-3, "RMSNorm instead of LayerNorm");
		if (f == 0) {
			off = c;
			off.qk_norm = false;
			logits_with(&off, &ck, lg);
			expect_moved(base, lg, n, 1e-3, "no q/k norms");
		} else {
			off = c;
			off.cohere = 1; /* RoPE on the full layer too */
			logits_with(&off, &ck, lg);
			expect_moved(base, lg, n, 1e-3, "RoPE on Cohere2's full layer");
			off = c;
			off.window = 0;
			logits_with(&off, &ck, lg);
			expect_moved(base, lg, n, 1e-3, "no sliding window");
		}
		free(base);
		free(lg);
		ref_set_clear(&ck);
		close_model(&m);
	}
}

#define CO_JSON(arch, mt, extra)                                                                   \
	"{\"architectures\": [\"" arch "\"], \"model_type\": \"" mt "\", "                         \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 8, \"vocab_size\": 100, \"intermediate_size\": 96" extra "}"
#define CO1(extra) CO_JSON("CohereForCausalLM", "cohere", extra)
#define CO2(extra) CO_JSON("Cohere2ForCausalLM", "cohere2", extra)

static void test_cohere_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* CohereConfig's defaults: logit_scale 0.0625, eps 1e-5, theta 10000, tied, no q/k
	 * norms, silu */
	static const char plain[] = CO1("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.cohere == 1 && c.tied && !c.qk_norm && c.window == 0 && c.d == 16 &&
	            c.act == REF_ACT_SILU);
	assert_float_equal(c.logit_mult, 0.0625, 0.0);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	static const char qk[] = CO1(", \"use_qk_norm\": true, \"tie_word_embeddings\": false, "
	                             "\"logit_scale\": 0.8333, \"layer_norm_eps\": 1e-6");
	assert_int_equal(ref_cfg_parse_json(qk, strlen(qk), &c, &err), WT_OK);
	assert_true(c.qk_norm && !c.tied);
	assert_float_equal(c.logit_mult, 0.8333, 0.0);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	/* Cohere2Config's: sliding_window 4096, every 4th layer full, use_qk_norm ignored */
	static const char two[] = CO2(", \"use_qk_norm\": true");
	assert_int_equal(ref_cfg_parse_json(two, strlen(two), &c, &err), WT_OK);
	assert_true(c.cohere == 2 && c.window == 4096 && c.window_pattern == 4 && !c.qk_norm &&
	            c.tied);
	static const char lt[] =
	    CO2(", \"sliding_window\": 512, \"layer_types\": [\"sliding_attention\", "
	        "\"full_attention\", \"sliding_attention\", \"full_attention\", "
	        "\"sliding_attention\", \"full_attention\", \"sliding_attention\", "
	        "\"full_attention\"]");
	assert_int_equal(ref_cfg_parse_json(lt, strlen(lt), &c, &err), WT_OK);
	assert_true(c.window == 512 && c.window_pattern == 2);
	expect_cfg(CO2(", \"layer_types\": [\"full_attention\", \"sliding_attention\", "
	               "\"sliding_attention\", \"sliding_attention\", \"full_attention\", "
	               "\"sliding_attention\", \"sliding_attention\", \"sliding_attention\"]"),
	           WT_EUNSUPPORTED, "layer_types[1]");
	expect_cfg(CO2(", \"sliding_window_pattern\": 0"), WT_EUNSUPPORTED,
	           "sliding_window_pattern");
	expect_cfg(CO1(", \"logit_scale\": 0"), WT_ECORRUPT, "logit_scale");
	expect_cfg(CO1(", \"hidden_act\": \"relu\""), WT_EUNSUPPORTED, "hidden_act");
	expect_cfg(CO1(", \"layer_norm_eps\": -1"), WT_ECORRUPT, "epsilon");
	expect_cfg(CO1(", \"rope_scaling\": {\"rope_type\": \"longrope\", \"factor\": 2}"),
	           WT_EUNSUPPORTED, "longrope");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cohere_pass),   cmocka_unit_test(test_cohere_transformers),
	    cmocka_unit_test(test_cohere_caught), cmocka_unit_test(test_cohere_switches),
	    cmocka_unit_test(test_cohere_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
