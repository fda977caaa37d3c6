/*
 * test_reference_stablelm.c — the reference forward pass over StableLM (StableLmForCausalLM;
 * reference/cfg_neox.c, Llama's math): LayerNorms with biases (input_layernorm,
 * post_attention_layernorm, model.norm), q/k/v with their biases (use_qkv_bias), RoPE on the
 * first int(d * partial_rotary_factor) dims, the SwiGLU MLP, untied lm_head. Full and sharded
 * logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full
 * path's logits equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken
 * the way a wrong planner would break them are caught; each switch moves the logits; config
 * defaults and refusals. Fixture from $WT_BUILD/wt-mkckpt --family stablelm (hid 256, H 8,
 * KV 2, d 32 with 8 rotary dims, I 512, V 1000, 2 layers; seed printed).
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

#define V_SL 1000
#define L1   "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"stablelm"};
	return gen_fixtures("reference_stablelm", fams, 1);
}

static void test_stablelm_pass(void **state)
{
	(void)state;
	expect_pass_tp("stablelm", true);
	expect_pass("stablelm", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_stablelm[] = {
    {0, 22, 2.14304715e-01f},   {0, 668, 5.74676633e-01f},  {0, 803, 2.15328872e-01f},
    {0, 807, -4.66955334e-01f}, {1, 53, 5.90752065e-03f},   {1, 277, -7.08148405e-02f},
    {1, 284, 9.14013386e-03f},  {1, 977, -2.65195996e-01f}, {2, 1, -4.27943528e-01f},
    {2, 45, -3.18832815e-01f},  {2, 48, -8.88880253e-01f},  {2, 130, 1.32800370e-01f},
    {3, 234, -1.68483555e-01f}, {3, 282, -3.15968037e-01f}, {3, 650, 3.86331052e-01f},
    {3, 748, 3.35836917e-01f},  {4, 177, -1.11008175e-01f}, {4, 796, 2.61679709e-01f},
    {4, 844, 2.42072284e-01f},  {4, 895, -1.60509229e-01f}, {5, 491, 3.41156125e-03f},
    {5, 662, -1.51657462e-02f}, {5, 664, -1.43755674e-01f}, {5, 676, 7.16407299e-02f},
    {6, 270, 2.41608247e-02f},  {6, 361, -6.54307604e-02f}, {6, 879, -2.34933823e-01f},
    {6, 900, 1.08037859e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits
 * 9.2e-7 of max |logit| 1.22): the partial rotary, the LayerNorm biases and the q/k/v biases each
 * move them by far more (test_stablelm_switches, test_stablelm_caught). */
#define GOLD_TOL 1e-5

static void test_stablelm_transformers(void **state)
{
	(void)state;
	expect_gold("stablelm", V_SL, GOLD_TOL, gold_stablelm,
	            sizeof(gold_stablelm) / sizeof(gold_stablelm[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_qkv_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's qkv_proj.bias [q_r 128; k_r 32; v_r 32]: q_r's halves
	            * exchanged (heads 4, 5 with 6, 7) */
	assert_int_equal(n, 2);
	swap_stack_halves(find_tensor(&r[1], L1 "self_attn.qkv_proj.bias")->data, 1, 64, 2);
}

static void tamper_norm_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: rank 0's post_attention_layernorm.bias (replicated) times 3 */
	assert_int_equal(n, 4);
	scale_bf16(&r[0], L1 "post_attention_layernorm.bias", 3.0f);
}

static void test_stablelm_caught(void **state)
{
	(void)state;
	expect_caught("stablelm", 2, 1, tamper_qkv_bias, "rank 1's q bias heads exchanged");
	expect_caught("stablelm", 4, 1, tamper_norm_bias, "norm bias x3 on rank 0");
	expect_halves_swapped("stablelm", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 256, 256 * 2},
	                      "rank 0's gate and up rows exchanged");
	expect_swapped("stablelm", 2, 1, L1 "self_attn.o_proj.weight",
	               "o_proj column slices exchanged");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_stablelm_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "stablelm");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.stablelm && !c.phi && !c.neox && !c.neox_par && c.layernorm && !c.plain_mlp &&
	            !c.lm_bias && !c.fused_ckpt && c.kind == REF_DENSE && !c.tied && c.d == 32 &&
	            c.rot_dim == 8 && c.L == 2 && c.KV == 2 && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	size_t n = N_TOK * V_SL;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.rot_dim = 32;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE over the whole head");
	off = c;
	off.layernorm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RMSNorm instead of LayerNorm");
	off = c;
	off.act = REF_ACT_GELU;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "gelu instead of silu");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define SL(extra)                                                                                  \
	"{\"architectures\": [\"StableLmForCausalLM\"], \"model_type\": \"stablelm\", "            \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"vocab_size\": 100, \"intermediate_size\": 96" extra "}"

static void test_stablelm_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* StableLmConfig's defaults: silu, partial_rotary_factor 0.25, theta 10000, eps 1e-5,
	 * num_key_value_heads 32 (the class's, over the loader's num_attention_heads), untied */
	static const char plain[] = SL(", \"num_key_value_heads\": 4");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.stablelm && c.layernorm && !c.neox_par && !c.tied && c.d == 16 &&
	            c.rot_dim == 4 && c.act == REF_ACT_SILU && c.KV == 4 && c.n_ext == 0);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	static const char set[] =
	    SL(", \"num_key_value_heads\": 2, \"partial_rotary_factor\": 0.5, "
	       "\"rope_theta\": 500.0, \"layer_norm_eps\": 1e-6");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_true(c.rot_dim == 8 && c.KV == 2);
	assert_float_equal(c.theta, 500.0, 1e-9);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	expect_cfg(SL(", \"num_key_value_heads\": 4, \"partial_rotary_factor\": 0.1"),
	           WT_EUNSUPPORTED, "partial_rotary_factor");
	expect_cfg(SL(", \"num_key_value_heads\": 4, \"qk_layernorm\": true"), WT_EUNSUPPORTED,
	           "qk_layernorm true");
	expect_cfg(SL(", \"num_key_value_heads\": 4, \"use_parallel_residual\": true"),
	           WT_EUNSUPPORTED, "use_parallel_residual true");
	expect_cfg(SL(", \"num_key_value_heads\": 4, \"hidden_act\": \"gelu\""), WT_EUNSUPPORTED,
	           "SiluAndMul");
	expect_cfg(SL(", \"num_key_value_heads\": 4, \"rope_scaling\": {\"rope_type\": "
	              "\"linear\", \"factor\": 2.0}"),
	           WT_EUNSUPPORTED, "rope_scaling");
	expect_cfg(SL(", \"num_key_value_heads\": 4, \"layer_norm_eps\": -1.0"), WT_ECORRUPT,
	           "layer_norm_eps");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stablelm_pass),   cmocka_unit_test(test_stablelm_transformers),
	    cmocka_unit_test(test_stablelm_caught), cmocka_unit_test(test_stablelm_switches),
	    cmocka_unit_test(test_stablelm_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
