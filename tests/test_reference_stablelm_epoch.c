/*
 * test_reference_stablelm_epoch.c — the reference forward pass over StableLM Epoch
 * (StableLMEpochForCausalLM, remote code; fixture stablelm_epoch): StableLM's decoder (LayerNorms
 * with biases, q/k/v with their biases, partial RoPE, SwiGLU, untied) read from the remote
 * config's key names, rope_pct and norm_eps, as vLLM's stablelm.py reads them (the loader lays
 * them onto partial_rotary_factor / layer_norm_eps). Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path's logits equal
 * transformers 4.57.1's StableLmForCausalLM built from the same weights with the config mapped
 * (eager, float32) at 28 points; rank tensors broken the way a wrong planner would break them are
 * caught. Fixture from $WT_BUILD/wt-mkckpt --family stablelm_epoch (hid 128, H 8, KV 4, d 16,
 * rope_pct 0.5: 8 rotary dims, I 192, V 1000, 2 layers, untied; seed printed).
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
	static const char *fams[] = {"stablelm_epoch"};
	return gen_fixtures("reference_stablelm_epoch", fams, 1);
}

static void test_epoch_pass(void **state)
{
	(void)state;
	expect_pass_tp("stablelm_epoch", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: StableLmForCausalLM.from_pretrained
 * of the fixture's weights (strict: no missing, unexpected or mismatched key) under a
 * StableLmConfig with partial_rotary_factor = rope_pct, layer_norm_eps = norm_eps, use_qkv_bias,
 * qk_layernorm and use_parallel_residual false; eager, float32; all 7 x 1000 logits within
 * 4.5e-7 of the reference's (largest 0.839). rope_pct read as 0.25 instead moves them by 0.02. */
static const gold_pt gold_epoch[] = {
    {0, 0, 1.762905419e-01f},    {0, 333, 2.302219272e-01f},  {0, 666, 3.392158747e-01f},
    {0, 999, -2.596553182e-03f}, {1, 0, 2.443474084e-01f},    {1, 333, -4.594885185e-02f},
    {1, 666, 4.050785899e-01f},  {1, 999, 4.250250012e-02f},  {2, 0, 1.391256601e-01f},
    {2, 333, -4.340713099e-02f}, {2, 666, 3.165914118e-01f},  {2, 999, 1.633306220e-02f},
    {3, 0, 2.030064166e-01f},    {3, 333, 1.931039244e-02f},  {3, 666, 3.485407233e-01f},
    {3, 999, 8.735438436e-02f},  {4, 0, 1.091663167e-01f},    {4, 333, -1.308133360e-03f},
    {4, 666, 3.702274263e-01f},  {4, 999, -3.729761019e-02f}, {5, 0, 1.431099176e-01f},
    {5, 333, 3.721245006e-02f},  {5, 666, 3.418186009e-01f},  {5, 999, -5.606547371e-02f},
    {6, 0, 2.648915052e-01f},    {6, 333, -5.482196063e-02f}, {6, 666, 3.732994497e-01f},
    {6, 999, -1.670850068e-02f},
};

#define GOLD_TOL 1e-5

static void test_epoch_transformers(void **state)
{
	(void)state;
	expect_gold("stablelm_epoch", 1000, GOLD_TOL, gold_epoch,
	            sizeof(gold_epoch) / sizeof(gold_epoch[0]));
}

static void test_epoch_caught(void **state)
{
	(void)state;
	expect_swapped("stablelm_epoch", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("stablelm_epoch", 2, 1, L1 "self_attn.qkv_proj.bias",
	               "the ranks' q/k/v biases exchanged");
	expect_swapped("stablelm_epoch", 2, 1, L1 "self_attn.o_proj.weight",
	               "o_proj columns exchanged");
	expect_swapped("stablelm_epoch", 2, 1, L1 "mlp.down_proj.weight",
	               "down_proj columns exchanged");
	expect_halves_swapped("stablelm_epoch", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
	expect_zeroed("stablelm_epoch", 2, 1, 1, L1 "self_attn.qkv_proj.bias",
	              "rank 1's q/k/v biases zeroed");
	expect_zeroed("stablelm_epoch", 4, 1, 2, L1 "post_attention_layernorm.bias",
	              "rank 2's LayerNorm bias zeroed");
}

/* The fixture is read as StableLM's decoder: LayerNorms, q/k/v biases, 8 rotary dims of 16
 * (rope_pct 0.5), eps 1e-5 (norm_eps), GQA 8 / 4, untied. */
static void test_epoch_fixture(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "stablelm_epoch");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.stablelm && c.layernorm && !c.plain_mlp && !c.tied &&
	            c.H == 8 && c.KV == 4 && c.d == 16 && c.rot_dim == 8 && c.I == 192 &&
	            c.L == 2 && c.hid == 128 && c.V == 1000 && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	ref_set_clear(&ck);
	close_model(&m);
}

#define EP(extra)                                                                                  \
	"{\"architectures\": [\"StableLMEpochForCausalLM\"], \"model_type\": \"stablelm_epoch\", " \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"vocab_size\": 100, \"intermediate_size\": 96, \"num_key_value_heads\": 4, "             \
	"\"max_position_embeddings\": 4096, \"tie_word_embeddings\": false" extra "}"
#define EP_KEYS ", \"rope_theta\": 500, \"rope_pct\": 0.5, \"norm_eps\": 1e-6"

/* rope_pct and norm_eps are read, over partial_rotary_factor / layer_norm_eps (vLLM's getattr
 * takes the old names first); the keys StableLMEpochConfig would default are required. */
static void test_epoch_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char plain[] = EP(EP_KEYS);
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.stablelm && c.layernorm && !c.tied && c.d == 16 && c.rot_dim == 8 &&
	            c.KV == 4 && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 500.0, 1e-9);
	static const char both[] =
	    EP(EP_KEYS ", \"partial_rotary_factor\": 0.25, \"layer_norm_eps\": 1e-3");
	assert_int_equal(ref_cfg_parse_json(both, strlen(both), &c, &err), WT_OK);
	assert_true(c.rot_dim == 8);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	expect_cfg(EP(", \"rope_theta\": 500, \"norm_eps\": 1e-6"), WT_ECORRUPT, "'rope_pct'");
	expect_cfg(EP(", \"rope_theta\": 500, \"rope_pct\": 0.5"), WT_ECORRUPT, "'norm_eps'");
	expect_cfg(EP(", \"rope_pct\": 0.5, \"norm_eps\": 1e-6"), WT_ECORRUPT, "'rope_theta'");
	expect_cfg(EP(", \"rope_theta\": 500, \"rope_pct\": 1.5, \"norm_eps\": 1e-6"), WT_ECORRUPT,
	           "rope_pct");
	expect_cfg(EP(", \"rope_theta\": 500, \"rope_pct\": 0.5, \"norm_eps\": \"small\""),
	           WT_ECORRUPT, "norm_eps");
	expect_cfg(EP(EP_KEYS ", \"hidden_act\": \"gelu\""), WT_EUNSUPPORTED, "SiluAndMul");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_epoch_pass),   cmocka_unit_test(test_epoch_transformers),
	    cmocka_unit_test(test_epoch_caught), cmocka_unit_test(test_epoch_fixture),
	    cmocka_unit_test(test_epoch_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
