/*
 * test_reference_nemotron.c — the reference forward pass over Nemotron
 * (NemotronForCausalLM; reference/cfg_apertus.c, nogate.c): Llama's decoder whose norms are
 * LayerNorm1P (F.layer_norm with weight + 1 and a bias), RoPE on the first
 * int(head_dim * partial_rotary_factor) dims of each head, q/k/v/o biases
 * (attention_bias; o_proj's added once) and an MLP without a gate, down_proj(relu2(up_proj(x))).
 * Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts'
 * budgets; the full path's logits equal transformers 4.57.1's (eager, float32) at 28 points;
 * rank tensors broken the way a wrong planner would break them are caught; each switch moves
 * the logits; config defaults and refusals. Fixture from $WT_BUILD/wt-mkckpt --family
 * nemotron (hid 256, H 8, KV 2, d 32, rot_dim 16, I 512, V 1000, 2 layers; seed printed).
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

#define V_NM 1000
#define L1   "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"nemotron"};
	return gen_fixtures("reference_nemotron", fams, 1);
}

static void test_nemotron_pass(void **state)
{
	(void)state;
	expect_pass("nemotron", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("nemotron", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("nemotron", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("nemotron", 8, 1, WT_QUANT_NONE, 0);
	expect_pass("nemotron", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("nemotron", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("nemotron", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_nemotron[] = {
    {0, 623, -2.06006795e-01f}, {0, 683, -6.29804581e-02f}, {0, 897, 3.37498635e-01f},
    {0, 942, -2.03727275e-01f}, {1, 55, 2.37804338e-01f},   {1, 224, 1.42783999e-01f},
    {1, 285, 3.89736861e-01f},  {1, 299, 5.94132692e-02f},  {2, 131, 1.54671267e-01f},
    {2, 498, -1.83971927e-01f}, {2, 797, 1.98166102e-01f},  {2, 819, 2.62894303e-01f},
    {3, 278, 1.26246244e-01f},  {3, 302, 4.13995206e-01f},  {3, 340, 3.56093049e-03f},
    {3, 719, -1.73797205e-01f}, {4, 476, -4.08471793e-01f}, {4, 503, 3.23631138e-01f},
    {4, 553, -6.23124987e-02f}, {4, 581, 3.48173857e-01f},  {5, 341, -2.69118160e-01f},
    {5, 621, 1.72031373e-01f},  {5, 698, -3.44441593e-01f}, {5, 790, -2.33502522e-01f},
    {6, 159, 5.22698283e-01f},  {6, 612, 1.55625314e-01f},  {6, 842, 1.47188395e-01f},
    {6, 856, -3.48810047e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 1.32e-6 of max
 * |logit| 1.14): LayerNorm1P's + 1, the partial rotary and relu2 each move them by far more
 * (test_nemotron_switches). */
#define GOLD_TOL 1e-5

static void test_nemotron_transformers(void **state)
{
	(void)state;
	expect_gold("nemotron", V_NM, GOLD_TOL, gold_nemotron,
	            sizeof(gold_nemotron) / sizeof(gold_nemotron[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_o_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: every rank's o_proj bias (added once) times 3 */
	assert_int_equal(n, 4);
	for (uint32_t k = 0; k < n; k++)
		scale_bf16(&r[k], L1 "self_attn.o_proj.bias", 3.0f);
}

static void tamper_norm_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: every rank's post_attention_layernorm bias times 3 */
	assert_int_equal(n, 2);
	for (uint32_t k = 0; k < n; k++)
		scale_bf16(&r[k], L1 "post_attention_layernorm.bias", 3.0f);
}

static void tamper_final_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: every rank's model.norm weight times 3 (LayerNorm1P: w + 1) */
	assert_int_equal(n, 2);
	for (uint32_t k = 0; k < n; k++)
		scale_bf16(&r[k], "model.norm.weight", 3.0f);
}

static void test_nemotron_caught(void **state)
{
	(void)state;
	expect_swapped("nemotron", 2, 1, L1 "self_attn.qkv_proj.bias",
	               "qkv_proj bias slices exchanged");
	expect_caught("nemotron", 4, 1, tamper_o_bias, "o_proj bias x3");
	expect_caught("nemotron", 2, 1, tamper_norm_bias, "LayerNorm1P bias x3");
	expect_caught("nemotron", 2, 1, tamper_final_norm, "model.norm weight x3");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_nemotron_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "nemotron");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.nogate && c.nemotron && !c.apertus && c.layernorm && c.kind == REF_DENSE &&
	            !c.tied && c.d == 32 && c.rot_dim == 16 && c.L == 2 && c.act == REF_ACT_RELU2);
	assert_float_equal(c.norm_off, 1.0, 0.0);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	size_t n = N_TOK * V_NM;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.act = REF_ACT_SILU;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "silu instead of relu2");
	off = c;
	off.norm_off = 0.0f;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "LayerNorm1P without its + 1");
	off = c;
	off.rot_dim = 32;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE on the whole head");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define NM(extra)                                                                                  \
	"{\"architectures\": [\"NemotronForCausalLM\"], \"model_type\": \"nemotron\", "            \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 96" extra "}"

static void test_nemotron_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* NemotronConfig's defaults: relu2, norm_eps 1e-5, partial_rotary_factor 0.5, theta
	 * 10000, untied; rms_norm_eps is no Nemotron key */
	static const char plain[] = NM(", \"rms_norm_eps\": 0.25");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.nogate && c.nemotron && c.layernorm && !c.tied && c.d == 16 &&
	            c.rot_dim == 8 && c.act == REF_ACT_RELU2 && c.n_ext == 0);
	assert_float_equal(c.norm_off, 1.0, 0.0);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	static const char part[] = NM(", \"partial_rotary_factor\": 0.3, \"norm_eps\": 1e-6");
	assert_int_equal(ref_cfg_parse_json(part, strlen(part), &c, &err), WT_OK);
	assert_int_equal(c.rot_dim, 4); /* int(16 * 0.3) */
	assert_float_equal(c.eps, 1e-6, 1e-15);
	static const char dflt[] = NM(", \"rope_scaling\": {\"rope_type\": \"default\"}");
	assert_int_equal(ref_cfg_parse_json(dflt, strlen(dflt), &c, &err), WT_OK);
	expect_cfg(NM(", \"partial_rotary_factor\": 0.1"), WT_EUNSUPPORTED,
	           "partial_rotary_factor");
	expect_cfg(NM(", \"partial_rotary_factor\": 1.5"), WT_EUNSUPPORTED,
	           "partial_rotary_factor");
	expect_cfg(NM(", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2.0}"),
	           WT_EUNSUPPORTED, "NemotronRotaryEmbedding");
	expect_cfg(NM(", \"hidden_act\": \"xielu\""), WT_EUNSUPPORTED, "xielu");
	expect_cfg(NM(", \"hidden_act\": \"relu6\""), WT_EUNSUPPORTED, "relu6");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nemotron_pass),   cmocka_unit_test(test_nemotron_transformers),
	    cmocka_unit_test(test_nemotron_caught), cmocka_unit_test(test_nemotron_switches),
	    cmocka_unit_test(test_nemotron_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
