/*
 * test_reference_plamo2.c — the reference forward pass over PLaMo 2 (Plamo2ForCausalLM, remote
 * code; fixture plamo2) as vLLM's plamo2.py runs it: the layers under model.layers.layers.,
 * Mamba mixers in layers 0 and 2 (is_mamba with mamba_step 2) and attention in 1 and 3, the
 * sandwich norms (pre_mixer_norm, post_mixer_norm on the mixer's output, pre_mlp_norm,
 * post_mlp_norm on the MLP's) with vLLM's load-time offsets (+1, +1/5, +1, +1/5^1.5; model.norm
 * +1; none on q_weight / k_weight or the mixer's dt / B / C norms). The Mamba mixer: in_proj
 * stored per head [gate_h; x_h], the causal conv and silu over x only, bcdt_proj on the conv's
 * output into B / C / dt with their own RMSNorms, dt_proj, softplus with dt_bias, A = -exp(A_log),
 * the scan with D, times silu(gate), out_proj. The attention: qkv_proj, per-head RMSNorms with
 * each head's own weight row, RoPE (1e4), one kv head; SwiGLU; untied lm_head. Full and sharded
 * logits agree within REF_TOL_F32 (TP 1, 2, 4, 8), int8-channel TP 2 and fp8-channel TP 4 within
 * their budgets; the full path equals a float32 torch model of plamo2.py's module semantics at
 * 28 points; rank tensors broken the way a wrong planner would break them are caught. Fixture
 * from $WT_BUILD/wt-mkckpt --family plamo2 (hid 64, 8 Mamba heads of 16, state 16, conv 4, dt
 * rank 64, H 8 over one kv head of 16, I 128, V 1000, 4 layers; seed printed).
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

#define L0  "model.layers.layers.0."
#define L1  "model.layers.layers.1."
#define L2  "model.layers.layers.2."
#define VOC 1000

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"plamo2"};
	return gen_fixtures("reference_plamo2", fams, 1);
}

/* TP 1 / 2 / 4 / 8 exact (every rank one Mamba head and the one kv head at TP 8), int8-channel
 * TP 2 and fp8-channel TP 4 within REF_BUDGET_LIN_* (the budget of a model with PLaMo 2's Mamba
 * mixers: docs/reference.md), and that budget chosen for it. */
static void test_plamo2_pass(void **state)
{
	(void)state;
	expect_pass_tp("plamo2", true);
	ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(run("plamo2", 2, 1, WT_QUANT_INT8_CHANNEL, 0, NULL, NULL, &res, &err),
	                 WT_OK);
	assert_true(fabs(res.budget - REF_BUDGET_LIN_INT8) < 1e-12);
	assert_non_null(strstr(res.why, "PLaMo 2"));
	assert_int_equal(run("plamo2", 4, 1, WT_QUANT_FP8_CHANNEL, 0, NULL, NULL, &res, &err),
	                 WT_OK);
	assert_true(fabs(res.budget - REF_BUDGET_LIN_FP8) < 1e-12);
}

/* (token, column, torch value), tokens g_tokens: a float32 torch model written from vLLM's
 * plamo2.py module semantics (the check script is kept out of the repo): transformers 4.57.1's
 * LlamaRMSNorm (weights plus vLLM's offsets), LlamaRotaryEmbedding / apply_rotary_pos_emb, the
 * Mamba mixer with in_proj's output reshaped [T, Hm, 2 d] and chunked (as load_weights cuts the
 * weight), torch's depthwise conv1d, a sequential scan in float64, eager causal attention with
 * per-head q / k norm rows, every one of the fixture's 57 tensors read: all 7 x 1000 logits
 * within 1.8e-6 of the reference's (largest 1.31) */
static const gold_pt gold_plamo2[] = {
    {0, 0, 2.274429053e-01f},    {0, 333, -2.295549661e-01f}, {0, 666, 4.587477446e-01f},
    {0, 999, 4.354940057e-01f},  {1, 0, 4.752429724e-01f},    {1, 333, 8.238156885e-02f},
    {1, 666, 3.952707946e-01f},  {1, 999, 2.186290920e-01f},  {2, 0, -1.322564036e-01f},
    {2, 333, -3.209567815e-02f}, {2, 666, -6.049373746e-01f}, {2, 999, -2.499714941e-01f},
    {3, 0, 2.626475096e-01f},    {3, 333, -1.848995090e-01f}, {3, 666, -6.913363934e-01f},
    {3, 999, -1.355876923e-01f}, {4, 0, 5.177091360e-01f},    {4, 333, -9.924351424e-02f},
    {4, 666, -2.179458290e-01f}, {4, 999, -1.310035437e-01f}, {5, 0, -5.691573396e-02f},
    {5, 333, 9.451910853e-02f},  {5, 666, -5.934945941e-01f}, {5, 999, 2.275176793e-01f},
    {6, 0, 3.693843782e-01f},    {6, 333, -2.261683494e-01f}, {6, 666, -3.785824478e-01f},
    {6, 999, -3.630219400e-02f}};

#define GOLD_TOL 1e-5

static void test_plamo2_torch(void **state)
{
	(void)state;
	expect_gold("plamo2", VOC, GOLD_TOL, gold_plamo2,
	            sizeof(gold_plamo2) / sizeof(gold_plamo2[0]));
}

/* Stored value k of F32 tensor t moved by dv (its f32 cache too). */
static void nudge(ref_tensor *t, int64_t k, float dv)
{
	assert_int_equal(t->dtype, WT_F32);
	float *w = (float *)(void *)t->data + k;
	*w += dv;
	if (t->f32 != NULL)
		t->f32[k] = *w;
}

/* What the pass reads moves the logits: a Mamba layer's post_mixer_norm without its offset,
 * D, dt_bias and the dt norm (each read by the scan), and the attention's q_weight rows (per
 * head, not one row for all). */
static void test_plamo2_layers(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "plamo2");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	size_t n = N_TOK * VOC;
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	assert_non_null(a);
	assert_non_null(b);
	logits_with(&c, &ck, a);
	ref_tensor *t = ref_set_find(&ck, L0 "post_mixer_norm.weight"); /* as stored */
	assert_non_null(t);
	for (int64_t k = 0; k < t->shape[0]; k++)
		nudge(t, k, -0.2f);
	logits_with(&c, &ck, b);
	expect_moved(a, b, n, 0.01, "layer 0's post_mixer_norm without its offset");
	for (int64_t k = 0; k < t->shape[0]; k++)
		nudge(t, k, 0.2f);
	static const struct {
		const char *name;
		float dv;
	} edits[] = {{L2 "mixer.D", 0.5f},
	             {L2 "mixer.dt_bias", 1.0f},
	             {L0 "mixer.dt_norm_weight", 0.5f},
	             {L1 "mixer.q_weight", 0.5f}};
	for (size_t e = 0; e < sizeof(edits) / sizeof(edits[0]); e++) {
		t = ref_set_find(&ck, edits[e].name);
		assert_non_null(t);
		int64_t cnt =
		    t->ndim == 2 ? t->shape[1] : t->shape[0] / 2; /* half, or a head's row */
		for (int64_t k = 0; k < cnt; k++)
			nudge(t, k, edits[e].dv);
		logits_with(&c, &ck, b);
		expect_moved(a, b, n, 0.001, edits[e].name);
		for (int64_t k = 0; k < cnt; k++)
			nudge(t, k, -edits[e].dv);
	}
	free(a);
	free(b);
	ref_set_clear(&ck);
	close_model(&m);
}

static void test_plamo2_caught(void **state)
{
	(void)state;
	/* the Mamba mixer: each rank's heads (TP 2: heads 0-3 and 4-7) */
	expect_swapped("plamo2", 2, 1, L0 "mixer.in_proj.weight", "in_proj's heads exchanged");
	expect_swapped("plamo2", 2, 1, L0 "mixer.conv1d.weight", "conv1d's channels exchanged");
	expect_swapped("plamo2", 2, 1, L0 "mixer.bcdt_proj.weight", "bcdt_proj columns exchanged");
	expect_swapped("plamo2", 2, 1, L2 "mixer.dt_proj.weight", "dt_proj rows exchanged");
	expect_swapped("plamo2", 2, 1, L2 "mixer.A_log", "A_log heads exchanged");
	expect_swapped("plamo2", 2, 1, L2 "mixer.D", "D heads exchanged");
	expect_swapped("plamo2", 2, 1, L0 "mixer.dt_bias", "dt_bias heads exchanged");
	expect_swapped("plamo2", 2, 1, L0 "mixer.out_proj.weight", "out_proj columns exchanged");
	expect_halves_swapped("plamo2", 2, 1,
	                      (tamper_halves){L0 "mixer.in_proj.weight", 0, 1, 64, 64 * 4},
	                      "rank 0's in_proj gate / x halves exchanged");
	expect_zeroed("plamo2", 4, 1, 1, L0 "mixer.B_norm_weight", "rank 1's B_norm zeroed");
	expect_zeroed("plamo2", 4, 1, 2, L2 "mixer.C_norm_weight", "rank 2's C_norm zeroed");
	expect_zeroed("plamo2", 4, 1, 3, L2 "mixer.dt_norm_weight", "rank 3's dt_norm zeroed");
	expect_zeroed("plamo2", 2, 1, 1, L0 "post_mixer_norm.weight",
	              "rank 1's post_mixer_norm (Mamba layer) zeroed");
	/* the attention, the MLP, the model's norm */
	expect_swapped("plamo2", 2, 1, L1 "mixer.qkv_proj.weight", "qkv_proj heads exchanged");
	expect_swapped("plamo2", 2, 1, L1 "mixer.q_weight", "q_weight rows exchanged");
	expect_swapped("plamo2", 2, 1, L1 "mixer.o_proj.weight", "o_proj columns exchanged");
	expect_zeroed("plamo2", 8, 1, 5, L1 "mixer.k_weight", "rank 5's k_weight zeroed");
	expect_swapped("plamo2", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("plamo2", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_zeroed("plamo2", 2, 1, 0, L1 "post_mlp_norm.weight",
	              "rank 0's post_mlp_norm zeroed");
	expect_zeroed("plamo2", 4, 1, 3, "model.norm.weight", "rank 3's model.norm zeroed");
}

/* The fixture's config: PLaMo 3's decoder switches (sandwich, q/k norms, fused q/k/v and
 * gate/up) with the Mamba layers 0 and 2 and the mixer's sizes (time_step_rank 64). */
static void test_plamo2_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "plamo2");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.plamo2 && c.plamo3 && c.sandwich && c.qk_norm &&
	            c.fused_ckpt && c.fused_gate_up && c.gemma == 0 && c.norm_off == 0.0f &&
	            c.embed_scale == 0.0f && !c.layernorm && !c.tied && c.H == 8 && c.KV == 1 &&
	            c.d == 16 && c.I == 128 && c.L == 4 && c.hid == 64 && c.V == VOC &&
	            c.act == REF_ACT_SILU && c.window == 0 && c.window_pattern == 0);
	assert_true(c.m_heads == 8 && c.m_dh == 16 && c.m_state == 16 && c.m_conv == 4 &&
	            c.m_rank == 64 && c.m_inner == 128 && !c.g4 && !c.jamba);
	for (int64_t l = 0; l < 4; l++)
		assert_int_equal(ref_p2_mamba_layer(&c, l), l % 2 == 0);
	assert_true(fabs(c.eps - 1e-6) < 1e-12 && fabs(c.theta - 1e4) < 1e-6);
	/* a layout whose tp does not divide the Mamba heads is refused (the planner's too) */
	ref_cfg o = c;
	o.m_heads = 6;
	o.m_inner = 6 * 16;
	ref_set rs[4] = {{0}};
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 4;
	float *lg = malloc(N_TOK * VOC * sizeof(float));
	assert_non_null(lg);
	assert_int_equal(ref_forward_sharded(&o, rs, &l, 0, g_tokens, N_TOK, NULL, lg, &err),
	                 WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "6 heads"));
	free(lg);
	wt_layout_clear(&l);
	ref_set_clear(&ck);
	close_model(&m);
}

#define P2_CFG(extra)                                                                              \
	"{\"architectures\": [\"Plamo2ForCausalLM\"], \"model_type\": \"plamo2\", "                \
	"\"hidden_size\": 64, \"intermediate_size\": 128, \"num_attention_heads\": 8, "            \
	"\"num_key_value_heads\": 1, \"hidden_size_per_head\": 16, \"vocab_size\": 1000, "         \
	"\"mamba_d_state\": 16, \"mamba_d_conv\": 4, \"mamba_num_heads\": 8" extra "}"

/* Absent rope_theta is Plamo2Config's 1e4 (the loader's class default, read with every family's
 * keys); the layers follow is_mamba (mamba_step 4: layer 2
 * attention; one layer: attention); a RoPE base not above 1 is refused naming it. */
static void test_plamo2_config_json(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	const char *j = P2_CFG(", \"num_hidden_layers\": 4");
	assert_int_equal(ref_cfg_parse_json(j, strlen(j), &c, &err), WT_OK);
	assert_true(c.plamo2 && fabs(c.theta - 1e4) < 1e-6 && c.tied && c.m_rank == 64);
	j = P2_CFG(", \"num_hidden_layers\": 5, \"mamba_step\": 4, \"rope_theta\": 5e5");
	assert_int_equal(ref_cfg_parse_json(j, strlen(j), &c, &err), WT_OK);
	assert_true(fabs(c.theta - 5e5) < 1e-3);
	for (int64_t l = 0; l < 5; l++)
		assert_int_equal(ref_p2_mamba_layer(&c, l), l % 4 != 2);
	j = P2_CFG(", \"num_hidden_layers\": 1");
	assert_int_equal(ref_cfg_parse_json(j, strlen(j), &c, &err), WT_OK);
	assert_false(ref_p2_mamba_layer(&c, 0));
	expect_cfg(P2_CFG(", \"num_hidden_layers\": 4, \"rope_theta\": 0.5"), WT_EUNSUPPORTED,
	           "rope_theta");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plamo2_pass),   cmocka_unit_test(test_plamo2_torch),
	    cmocka_unit_test(test_plamo2_layers), cmocka_unit_test(test_plamo2_caught),
	    cmocka_unit_test(test_plamo2_config), cmocka_unit_test(test_plamo2_config_json),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
