/*
 * test_reference_plamo3.c — the reference forward pass over PLaMo 3 (Plamo3ForCausalLM, remote
 * code; fixture plamo3) as vLLM's plamo3.py runs it: the layers under model.layers.layers.,
 * q/k/v and gate/up fused in the checkpoint, per-head q_norm / k_norm before RoPE, the sandwich
 * norms (pre_mixer_norm, post_mixer_norm on the attention output, pre_mlp_norm, post_mlp_norm
 * on the MLP output) with vLLM's load-time offsets added (+1, +1/5, +1, +1/5^1.5; q/k norms and
 * model.norm +1), layers 0 and 2 sliding (window_size 4, rope_local_theta 1e4) and layer 1 full
 * (rope_theta 1e6), SwiGLU, untied lm_head. Full and sharded logits agree within REF_TOL_F32
 * (TP 1, 2, 4, 8), int8-channel TP 2 and fp8-channel TP 4 within their budgets; the full path
 * equals a torch model of vLLM's module semantics on transformers 4.57.1's Llama pieces at 28
 * points; the windows, the local RoPE base and the offsets move the logits; rank tensors broken
 * the way a wrong planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt
 * --family plamo3 (hid 128, H 8, KV 2, d 32, I 192, V 1008, 3 layers; seed printed).
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

#define L1  "model.layers.layers.1."
#define VOC 1008

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"plamo3"};
	return gen_fixtures("reference_plamo3", fams, 1);
}

static void test_plamo3_pass(void **state)
{
	(void)state;
	expect_pass_tp("plamo3", true);
	expect_pass("plamo3", 4, 1, WT_QUANT_NONE, 1);
}

/* (token, column, torch value), tokens g_tokens: a float32 torch model of vLLM's plamo3.py on
 * transformers 4.57.1's LlamaRMSNorm (weights plus vLLM's offsets), LlamaRotaryEmbedding /
 * apply_rotary_pos_emb (rope_theta on the full layer, rope_local_theta on the sliding ones) and
 * LlamaMLP (gate / up the halves of gate_up_proj), q/k norms per head before RoPE, the causal
 * mask cut to the last window_size keys on the sliding layers, every tensor of the fixture read:
 * all 7 x 1008 logits within 1.2e-6 of the reference's (largest 1.72) */
static const gold_pt gold_plamo3[] = {
    {0, 0, 1.856157631e-01f},     {0, 333, 2.388567179e-01f},   {0, 666, 2.886717319e-01f},
    {0, 1007, -1.588270664e-01f}, {1, 0, 4.961954057e-01f},     {1, 333, 5.720654726e-01f},
    {1, 666, 4.697832763e-01f},   {1, 1007, -5.744291544e-01f}, {2, 0, 3.390889168e-01f},
    {2, 333, 5.829423666e-01f},   {2, 666, 7.013458610e-01f},   {2, 1007, -3.430818617e-01f},
    {3, 0, 4.555358291e-01f},     {3, 333, 4.357590079e-01f},   {3, 666, 1.800393164e-01f},
    {3, 1007, -2.586413324e-01f}, {4, 0, 4.249104261e-01f},     {4, 333, 4.273835123e-01f},
    {4, 666, -1.257211268e-01f},  {4, 1007, -3.824802339e-01f}, {5, 0, 2.180849612e-01f},
    {5, 333, 5.048695207e-01f},   {5, 666, -3.932628334e-01f},  {5, 1007, -3.144322336e-01f},
    {6, 0, 4.462688863e-01f},     {6, 333, 3.252564371e-02f},   {6, 666, 3.413238227e-01f},
    {6, 1007, 6.632622331e-02f}};

#define GOLD_TOL 1e-5

static void test_plamo3_torch(void **state)
{
	(void)state;
	expect_gold("plamo3", VOC, GOLD_TOL, gold_plamo3,
	            sizeof(gold_plamo3) / sizeof(gold_plamo3[0]));
}

/* The sliding windows act (none, or every layer sliding, move the logits), the sliding layers
 * turn q / k by rope_local_theta (rope_theta there moves them), and the norms' offsets are
 * added (a post_mlp_norm read as stored moves them). */
static void test_plamo3_layers(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "plamo3");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	size_t n = N_TOK * VOC;
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	assert_non_null(a);
	assert_non_null(b);
	logits_with(&c, &ck, a);
	ref_cfg o = c;
	o.window = 0;
	logits_with(&o, &ck, b);
	expect_moved(a, b, n, 0.01, "no sliding window");
	o = c;
	o.window_pattern = 0;
	logits_with(&o, &ck, b);
	expect_moved(a, b, n, 0.01, "every layer sliding");
	o = c;
	o.theta_local = c.theta;
	logits_with(&o, &ck, b);
	expect_moved(a, b, n, 0.01, "rope_theta on the sliding layers");
	ref_tensor *t = ref_set_find(&ck, L1 "post_mlp_norm.weight"); /* as stored, F32 */
	assert_non_null(t);
	assert_int_equal(t->dtype, WT_F32);
	for (int64_t k = 0; k < t->shape[0]; k++) {
		float *w = (float *)(void *)t->data + k;
		*w -= (float)(1.0 / pow(5.0, 1.5));
		if (t->f32 != NULL)
			t->f32[k] = *w;
	}
	logits_with(&c, &ck, b);
	expect_moved(a, b, n, 0.01, "post_mlp_norm without its offset");
	free(a);
	free(b);
	ref_set_clear(&ck);
	close_model(&m);
}

static void test_plamo3_caught(void **state)
{
	(void)state;
	expect_swapped("plamo3", 2, 1, L1 "mixer.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("plamo3", 2, 1, L1 "mixer.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("plamo3", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("plamo3", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_halves_swapped("plamo3", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
	expect_zeroed("plamo3", 2, 1, 1, L1 "pre_mixer_norm.weight",
	              "rank 1's pre_mixer_norm zeroed");
	expect_zeroed("plamo3", 2, 1, 1, L1 "post_mixer_norm.weight",
	              "rank 1's post_mixer_norm zeroed");
	expect_zeroed("plamo3", 2, 1, 0, L1 "post_mlp_norm.weight",
	              "rank 0's post_mlp_norm zeroed");
	expect_zeroed("plamo3", 4, 1, 2, L1 "mixer.q_norm.weight", "rank 2's q_norm zeroed");
	expect_zeroed("plamo3", 4, 1, 3, L1 "mixer.k_norm.weight", "rank 3's k_norm zeroed");
	expect_zeroed("plamo3", 4, 1, 3, "model.norm.weight", "rank 3's model.norm zeroed");
}

/* The fixture is read as Gemma 3's decoder shape with plain norms: sandwich and q/k norms on,
 * q/k/v and gate/up fused, no embedding scale, silu, untied, window 4 every other layer. */
static void test_plamo3_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "plamo3");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.plamo3 && c.sandwich && c.qk_norm && c.fused_ckpt &&
	            c.fused_gate_up && c.gemma == 0 && c.norm_off == 0.0f &&
	            c.embed_scale == 0.0f && !c.layernorm && !c.tied && c.H == 8 && c.KV == 2 &&
	            c.d == 32 && c.I == 192 && c.L == 3 && c.hid == 128 && c.V == VOC &&
	            c.act == REF_ACT_SILU && c.window == 4 && c.window_pattern == 2);
	assert_true(fabs(c.eps - 1e-6) < 1e-12);
	assert_true(fabs(c.theta - 1e6) < 1e-3 && fabs(c.theta_local - 1e4) < 1e-6);
	ref_set_clear(&ck);
	close_model(&m);
}

#define P3_CFG(extra)                                                                              \
	"{\"architectures\": [\"Plamo3ForCausalLM\"], \"model_type\": \"plamo3\", "                \
	"\"hidden_size\": 128, \"intermediate_size\": 192, \"num_attention_heads\": 8, "           \
	"\"num_key_value_heads\": 2, \"head_dim\": 32, \"num_hidden_layers\": 3, "                 \
	"\"vocab_size\": 1008" extra "}"

/* Absent keys are Plamo3Config's (rope_theta 1e6, rope_local_theta 1e4, window_size 2048,
 * sliding_window_pattern 8, tied); RoPE bases not above 1 are refused naming them. */
static void test_plamo3_config_json(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	const char *j = P3_CFG("");
	assert_int_equal(ref_cfg_parse_json(j, strlen(j), &c, &err), WT_OK);
	assert_true(c.plamo3 && c.window == 2048 && c.window_pattern == 8 &&
	            fabs(c.theta - 1e6) < 1e-3 && fabs(c.theta_local - 1e4) < 1e-6 && c.tied);
	j = P3_CFG(", \"window_size\": 16, \"sliding_window_pattern\": 4, \"rope_theta\": 5e5, "
	           "\"rope_local_theta\": 2e4");
	assert_int_equal(ref_cfg_parse_json(j, strlen(j), &c, &err), WT_OK);
	assert_true(c.window == 16 && c.window_pattern == 4 && fabs(c.theta - 5e5) < 1e-3 &&
	            fabs(c.theta_local - 2e4) < 1e-6);
	expect_cfg(P3_CFG(", \"rope_local_theta\": 1.0"), WT_EUNSUPPORTED, "rope_local_theta");
	expect_cfg(P3_CFG(", \"rope_theta\": 0.5"), WT_EUNSUPPORTED, "rope_theta");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plamo3_pass),   cmocka_unit_test(test_plamo3_torch),
	    cmocka_unit_test(test_plamo3_layers), cmocka_unit_test(test_plamo3_caught),
	    cmocka_unit_test(test_plamo3_config), cmocka_unit_test(test_plamo3_config_json),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
