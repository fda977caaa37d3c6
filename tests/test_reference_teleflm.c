/*
 * test_reference_teleflm.c — the reference forward pass over Tele-FLM (TeleFLMForCausalLM,
 * remote code; fixture teleflm): Llama's decoder under Llama's names, as vLLM's teleflm.py runs
 * it over its llama.py, with no biases, MHA, rope_theta 10000, rms_norm_eps 1e-5, and the muP
 * multipliers of use_mup: the embeddings times input_mult (3), the logits times output_mult /
 * mup_scale_factor (2.5 / 0.8). Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8)
 * or the quantized layouts' budgets; the full path's logits equal transformers 4.57.1's
 * LlamaForCausalLM built from the same weights with the two multipliers applied around it
 * (eager, float32) at 28 points, and move when either multiplier is dropped; rank tensors broken
 * the way a wrong planner would break them are caught; the muP keys' refusals. Fixture from
 * $WT_BUILD/wt-mkckpt --family teleflm (hid 128, H 8, KV 8, d 16, I 192, V 1000, 2 layers,
 * untied; seed printed).
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

#define L1 "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"teleflm"};
	return gen_fixtures("reference_teleflm", fams, 1);
}

static void test_teleflm_pass(void **state)
{
	(void)state;
	expect_pass_tp("teleflm", true);
}

/* (token, column, value), tokens g_tokens: transformers 4.57.1's LlamaForCausalLM.from_pretrained
 * of the fixture's weights (strict: no missing, unexpected or mismatched key; attention_bias and
 * mlp_bias false, MHA, rope_theta 10000, rms_norm_eps 1e-5), eager, float32, fed embed_tokens(ids)
 * * input_mult as inputs_embeds and its logits times output_mult / mup_scale_factor (vLLM's
 * teleflm.py); all 7 x 1000 logits within 1.5e-6 of the reference's (largest 2.67); without
 * the multipliers they differ by up to 1.93 */
static const gold_pt gold_teleflm[] = {
    {0, 0, 6.807851791e-01f},    {0, 333, 9.734049439e-01f},  {0, 666, -8.662192225e-01f},
    {0, 999, 9.029451013e-01f},  {1, 0, 1.632856429e-01f},    {1, 333, -4.634344578e-01f},
    {1, 666, -5.189824104e-01f}, {1, 999, 6.553983092e-01f},  {2, 0, -4.150975049e-01f},
    {2, 333, -5.273112655e-01f}, {2, 666, -7.672484517e-01f}, {2, 999, 4.643890858e-01f},
    {3, 0, 4.729635417e-01f},    {3, 333, -1.162676737e-01f}, {3, 666, -7.991634309e-02f},
    {3, 999, 2.630220354e-01f},  {4, 0, -1.578268111e-01f},   {4, 333, -2.080763876e-01f},
    {4, 666, -4.451621324e-03f}, {4, 999, 2.900009453e-01f},  {5, 0, -9.543960541e-02f},
    {5, 333, -1.498170756e-02f}, {5, 666, -1.923463494e-01f}, {5, 999, 1.879857779e-01f},
    {6, 0, 5.639820099e-01f},    {6, 333, -9.813382030e-01f}, {6, 666, -1.907889098e-01f},
    {6, 999, 7.352889180e-01f}};

#define GOLD_TOL 1e-5

static void test_teleflm_transformers(void **state)
{
	(void)state;
	expect_gold("teleflm", 1000, GOLD_TOL, gold_teleflm,
	            sizeof(gold_teleflm) / sizeof(gold_teleflm[0]));
}

static void test_teleflm_caught(void **state)
{
	(void)state;
	expect_swapped("teleflm", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("teleflm", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("teleflm", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("teleflm", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_halves_swapped("teleflm", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
	expect_zeroed("teleflm", 4, 1, 3, "lm_head.weight", "rank 3's lm_head rows zeroed");
}

/* The fixture is read as Llama's decoder (RMSNorms, the gated silu MLP, q/k/v unfused, no
 * biases, untied, MHA, head_dim 16, rms_norm_eps 1e-5, rope_theta 10000) with the embeddings
 * times input_mult 3 and the logits times 2.5 / 0.8; dropping either multiplier moves the
 * logits (a pass without them would be caught by the transformers points). */
static void test_teleflm_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "teleflm");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.teleflm && c.read_act && !c.fused_ckpt &&
	            !c.layernorm && !c.plain_mlp && !c.tied && c.H == 8 && c.KV == 8 && c.d == 16 &&
	            c.I == 192 && c.L == 2 && c.hid == 128 && c.V == 1000 && c.act == REF_ACT_SILU);
	assert_true(fabs(c.eps - 1e-5) < 1e-12 && fabs(c.theta - 1e4) < 1e-6);
	assert_true(c.embed_scale == 3.0f && fabs(c.logit_mult - 3.125) < 1e-12);
	size_t n = N_TOK * 1000;
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	assert_non_null(a);
	assert_non_null(b);
	logits_with(&c, &ck, a);
	ref_cfg d = c;
	d.embed_scale = 0.0f; /* no input_mult */
	logits_with(&d, &ck, b);
	expect_moved(a, b, n, 0.01, "teleflm without input_mult");
	d = c;
	d.logit_mult = 0.0; /* no output_mult / mup_scale_factor */
	logits_with(&d, &ck, b);
	expect_moved(a, b, n, 0.01, "teleflm without the logit scale");
	free(a);
	free(b);
	ref_set_clear(&ck);
	close_model(&m);
}

#define TF_CFG(mup)                                                                                \
	"{\"architectures\":[\"TeleFLMForCausalLM\"],\"model_type\":\"TeleFLM\",\"hidden_size\":"  \
	"128,"                                                                                     \
	"\"num_attention_heads\":8,\"num_hidden_layers\":2,\"intermediate_size\":192,"             \
	"\"vocab_size\":1000,\"rms_norm_eps\":1e-5,\"tie_word_embeddings\":false" mup "}"

/* use_mup false: no multiplier (the three keys not read); the keys' refusals. */
static void test_teleflm_keys(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char off[] = TF_CFG(",\"use_mup\":false,\"input_mult\":0");
	assert_int_equal(ref_cfg_parse_json(off, strlen(off), &c, &err), WT_OK);
	assert_true(c.teleflm && c.embed_scale == 0.0f && c.logit_mult == 0.0);
	static const char on[] =
	    TF_CFG(",\"use_mup\":true,\"input_mult\":2,\"output_mult\":6,\"mup_scale_factor\":4");
	assert_int_equal(ref_cfg_parse_json(on, strlen(on), &c, &err), WT_OK);
	assert_true(c.embed_scale == 2.0f && fabs(c.logit_mult - 1.5) < 1e-12);
	expect_cfg(TF_CFG(""), WT_ECORRUPT, "use_mup");
	expect_cfg(TF_CFG(",\"use_mup\":1"), WT_ECORRUPT, "use_mup");
	expect_cfg(TF_CFG(",\"use_mup\":true,\"output_mult\":6,\"mup_scale_factor\":4"),
	           WT_ECORRUPT, "input_mult");
	expect_cfg(TF_CFG(",\"use_mup\":true,\"input_mult\":2,\"mup_scale_factor\":4"), WT_ECORRUPT,
	           "output_mult");
	expect_cfg(TF_CFG(",\"use_mup\":true,\"input_mult\":2,\"output_mult\":6,"
	                  "\"mup_scale_factor\":0"),
	           WT_EUNSUPPORTED, "mup_scale_factor");
	expect_cfg(TF_CFG(",\"use_mup\":true,\"input_mult\":\"2\",\"output_mult\":6,"
	                  "\"mup_scale_factor\":4"),
	           WT_EUNSUPPORTED, "input_mult");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_teleflm_pass),   cmocka_unit_test(test_teleflm_transformers),
	    cmocka_unit_test(test_teleflm_caught), cmocka_unit_test(test_teleflm_config),
	    cmocka_unit_test(test_teleflm_keys),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
