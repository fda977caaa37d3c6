/*
 * test_reference_jais2.c — the reference forward pass over Jais 2 (Jais2ForCausalLM;
 * reference/jais2.c, nogate.c): Llama's decoder whose norms are nn.LayerNorm (weight and
 * bias, layer_norm_eps), q/k/v/o biases (`attention_bias or bias`; o_proj's added once),
 * RoPE on the whole head, an MLP without a gate, down_proj(relu(up_proj(x))^2) with its biases,
 * and vLLM's per-layer interleaved_sliding_window. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path's logits equal a
 * float32 torch model of vLLM's jais2.py (transformers 4.57.1's LlamaAttention and
 * LlamaRotaryEmbedding, nn.LayerNorm, relu^2, vLLM's hidden + residual arithmetic) at 28
 * points; rank tensors broken the way a wrong planner would break them are caught; each switch
 * moves the logits; config defaults and refusals. Fixture from $WT_BUILD/wt-mkckpt --family
 * jais2 (hid 128, H 8, KV 2, d 16, I 256, V 1000, 3 layers, window [4, null]; seed printed).
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

#define V_J2 1000
#define L1   "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"jais2"};
	return gen_fixtures("reference_jais2", fams, 1);
}

static void test_jais2_pass(void **state)
{
	(void)state;
	expect_pass("jais2", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("jais2", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("jais2", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("jais2", 8, 1, WT_QUANT_NONE, 0);
	expect_pass("jais2", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("jais2", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("jais2", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, torch logit), tokens g_tokens: the float32 torch model of vLLM's jais2.py */
static const gold_pt gold_jais2[] = {
    {0, 26, 1.45588979e-01f},   {0, 178, 2.35443279e-01f},  {0, 639, 4.47097830e-02f},
    {0, 849, -3.34477335e-01f}, {1, 354, -1.64561406e-01f}, {1, 369, -7.14733481e-01f},
    {1, 642, 1.66836098e-01f},  {1, 831, 1.87175989e-01f},  {2, 176, -7.73568973e-02f},
    {2, 652, -1.23684973e-01f}, {2, 719, -2.14261860e-02f}, {2, 857, -1.68002382e-01f},
    {3, 282, 1.15993403e-01f},  {3, 726, -5.06534874e-01f}, {3, 918, -2.30631605e-01f},
    {3, 964, 1.01601236e-01f},  {4, 117, 5.65578379e-02f},  {4, 514, -1.55693337e-01f},
    {4, 643, -3.44102085e-01f}, {4, 825, 4.28424358e-01f},  {5, 146, -2.08913416e-01f},
    {5, 156, -1.91264376e-01f}, {5, 277, 2.43316248e-01f},  {5, 337, 1.15373611e-01f},
    {6, 91, 5.07276021e-02f},   {6, 270, -5.76724708e-02f}, {6, 430, -3.71309370e-01f},
    {6, 663, -1.66284165e-03f}};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 5.1e-7 of max
 * |logit| 0.85): the window, relu2 and the LayerNorms' plain weights each move them by far
 * more (test_jais2_switches). */
#define GOLD_TOL 1e-5

static void test_jais2_torch(void **state)
{
	(void)state;
	expect_gold("jais2", V_J2, GOLD_TOL, gold_jais2,
	            sizeof(gold_jais2) / sizeof(gold_jais2[0]));
}

/* BF16 / F32 tensor name of rank set r times f. */
static void scale_t(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	if (t->dtype == WT_F32) {
		float *v = (float *)(void *)t->data;
		for (uint64_t i = 0; i < t->nbytes / 4; i++)
			v[i] *= f;
		return;
	}
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_o_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: every rank's o_proj bias (added once) times 3 */
	assert_int_equal(n, 4);
	for (uint32_t k = 0; k < n; k++)
		scale_t(&r[k], L1 "self_attn.o_proj.bias", 3.0f);
}

static void tamper_norm_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: every rank's post_attention_layernorm bias times 3 */
	assert_int_equal(n, 2);
	for (uint32_t k = 0; k < n; k++)
		scale_t(&r[k], L1 "post_attention_layernorm.bias", 3.0f);
}

static void test_jais2_caught(void **state)
{
	(void)state;
	expect_swapped("jais2", 2, 1, L1 "self_attn.qkv_proj.weight", "qkv_proj rows exchanged");
	expect_swapped("jais2", 2, 1, L1 "self_attn.qkv_proj.bias",
	               "qkv_proj bias slices exchanged");
	expect_swapped("jais2", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("jais2", 2, 1, L1 "mlp.up_proj.weight", "up_proj rows exchanged");
	expect_swapped("jais2", 2, 1, L1 "mlp.up_proj.bias", "up_proj bias slices exchanged");
	expect_swapped("jais2", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_zeroed("jais2", 4, 1, 1, L1 "mlp.up_proj.weight", "rank 1's up_proj rows dropped");
	expect_caught("jais2", 4, 1, tamper_o_bias, "o_proj bias x3");
	expect_caught("jais2", 2, 1, tamper_norm_bias, "LayerNorm bias x3");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_jais2_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "jais2");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.nogate && c.jais2 && !c.nemotron && c.layernorm && c.kind == REF_DENSE &&
	            !c.tied && c.d == 16 && c.L == 3 && c.act == REF_ACT_RELU2 && c.local_masked &&
	            c.window == 4 && c.logit_mult == 0.0);
	assert_true(ref_l4_bit(c.local_mask, 0) && !ref_l4_bit(c.local_mask, 1) &&
	            ref_l4_bit(c.local_mask, 2));
	assert_float_equal(c.norm_off, 0.0, 0.0);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.theta, 500000.0, 1e-6);
	size_t n = N_TOK * V_J2;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.act = REF_ACT_SILU;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "silu instead of relu2");
	off = c;
	off.norm_off = 1.0f;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "LayerNorm1P's weight + 1");
	off = c;
	off.window = 0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no sliding window");
	off = c;
	off.local_mask[0] = 1; /* layer 0 only: layer 2's window lost (the list not wrapped) */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "interleaved_sliding_window not wrapped");
	off = c;
	off.logit_mult = 2.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "logit_scale 2");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define J2(extra)                                                                                  \
	"{\"architectures\": [\"Jais2ForCausalLM\"], \"model_type\": \"jais2\", "                  \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 3, \"vocab_size\": 100, \"intermediate_size\": 96" extra "}"

static void test_jais2_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* Jais2Config's defaults: relu2, layer_norm_eps 1e-5, rope_theta 500000, no window,
	 * untied; rms_norm_eps is no Jais 2 key */
	static const char plain[] = J2(", \"rms_norm_eps\": 0.25");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.nogate && c.jais2 && c.layernorm && !c.tied && c.d == 16 &&
	            c.act == REF_ACT_RELU2 && c.window == 0 && c.logit_mult == 0.0);
	assert_float_equal(c.norm_off, 0.0, 0.0);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 500000.0, 1e-6);
	/* an integer window on every layer; the keys read */
	static const char all[] =
	    J2(", \"interleaved_sliding_window\": 8, \"layer_norm_eps\": 1e-6,"
	       " \"rope_theta\": 10000.0, \"logit_scale\": 0.5");
	assert_int_equal(ref_cfg_parse_json(all, strlen(all), &c, &err), WT_OK);
	assert_true(c.window == 8 && ref_l4_bit(c.local_mask, 0) && ref_l4_bit(c.local_mask, 1) &&
	            ref_l4_bit(c.local_mask, 2));
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	assert_float_equal(c.logit_mult, 0.5, 0.0);
	/* a list wraps: [null, 6] gives layer 1 the window, layers 0 and 2 none */
	static const char wrap[] = J2(", \"interleaved_sliding_window\": [null, 6]");
	assert_int_equal(ref_cfg_parse_json(wrap, strlen(wrap), &c, &err), WT_OK);
	assert_true(c.window == 6 && !ref_l4_bit(c.local_mask, 0) && ref_l4_bit(c.local_mask, 1) &&
	            !ref_l4_bit(c.local_mask, 2));
	static const char lin[] =
	    J2(", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2.0}");
	assert_int_equal(ref_cfg_parse_json(lin, strlen(lin), &c, &err), WT_OK);
	expect_cfg(J2(", \"interleaved_sliding_window\": [4, 8]"), WT_EUNSUPPORTED,
	           "interleaved_sliding_window");
	expect_cfg(J2(", \"interleaved_sliding_window\": \"4\""), WT_EUNSUPPORTED,
	           "interleaved_sliding_window");
	expect_cfg(J2(", \"interleaved_sliding_window\": [4, 0]"), WT_EUNSUPPORTED,
	           "interleaved_sliding_window");
	expect_cfg(J2(", \"interleaved_sliding_window\": null"), WT_EUNSUPPORTED,
	           "interleaved_sliding_window");
	expect_cfg(J2(", \"hidden_act\": \"silu\""), WT_EUNSUPPORTED, "hidden_act");
	expect_cfg(J2(", \"logit_scale\": 0.0"), WT_EUNSUPPORTED, "logit_scale");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_jais2_pass),   cmocka_unit_test(test_jais2_torch),
	    cmocka_unit_test(test_jais2_caught), cmocka_unit_test(test_jais2_switches),
	    cmocka_unit_test(test_jais2_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
