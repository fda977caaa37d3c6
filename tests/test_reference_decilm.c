/*
 * test_reference_decilm.c — the reference forward pass over DeciLM (DeciLMForCausalLM, remote
 * code; fixture decilm): Llama's decoder under Llama's names as vLLM's nemotron_nas.py runs it,
 * each layer sized by its block_configs entry and its no-op halves skipped (their residual
 * branches not taken): layer 0 attention over 2 kv heads and an MLP 256 wide, layer 1 a no-op
 * attention and an MLP 512 wide, layer 2 attention over 1 kv head and a no-op ffn, layer 3
 * attention over 1 kv head and an MLP 256 wide; llama3 RoPE (rope_theta 5e5, factor 8),
 * rms_norm_eps 1e-5. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the
 * quantized layouts' budgets; the full path's logits equal a torch model built from
 * transformers 4.57.1's LlamaAttention / LlamaMLP / LlamaRMSNorm per layer (each with its own
 * kv heads and width, the no-op halves left out) at 28 points; rank tensors broken the way a
 * wrong planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family decilm
 * (hid 128, H 8, d 16, V 1000, 4 layers, untied; seed printed).
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
#include "reference/decilm.h"
#include "kernels/kernels.h"
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"decilm"};
	return gen_fixtures("reference_decilm", fams, 1);
}

static void test_decilm_pass(void **state)
{
	(void)state;
	expect_pass_tp("decilm", true);
}

/* (token, column, value), tokens g_tokens: a torch model of transformers 4.57.1's Llama
 * pieces (per layer a LlamaConfig with the layer's num_key_value_heads and intermediate_size,
 * its LlamaRMSNorm / LlamaAttention / LlamaMLP loaded strict from the fixture's tensors, every
 * tensor used once; LlamaRotaryEmbedding with the fixture's llama3 rope_scaling; eager, float32;
 * x += attn(ln1(x)) and x += mlp(ln2(x)) only where the layer has them): all 7 x 1000 logits
 * within 4.5e-7 of the reference's (largest 0.886) */
static const gold_pt gold_decilm[] = {
    {0, 0, 2.188195586e-01f},   {0, 333, 2.418305278e-01f}, {0, 666, 1.061678082e-01f},
    {0, 999, 1.386555433e-01f}, {1, 0, 1.763870716e-01f},   {1, 333, 1.205519214e-01f},
    {1, 666, 5.401641130e-02f}, {1, 999, 8.178121597e-02f}, {2, 0, 1.464505196e-01f},
    {2, 333, 1.227337942e-01f}, {2, 666, 5.679706857e-02f}, {2, 999, 2.430691384e-02f},
    {3, 0, 2.895131707e-01f},   {3, 333, 1.281742454e-01f}, {3, 666, 1.700368375e-01f},
    {3, 999, 5.501509085e-02f}, {4, 0, 2.652211785e-01f},   {4, 333, 1.455194652e-01f},
    {4, 666, 1.104443446e-01f}, {4, 999, 2.425479144e-02f}, {5, 0, 2.396610081e-01f},
    {5, 333, 2.114792913e-01f}, {5, 666, 5.061277002e-02f}, {5, 999, 5.456112325e-02f},
    {6, 0, 2.243985236e-01f},   {6, 333, 1.862077117e-01f}, {6, 666, 1.230856255e-01f},
    {6, 999, 8.499757200e-02f}};

#define GOLD_TOL 1e-5

static void test_decilm_transformers(void **state)
{
	(void)state;
	expect_gold("decilm", 1000, GOLD_TOL, gold_decilm,
	            sizeof(gold_decilm) / sizeof(gold_decilm[0]));
}

static void test_decilm_caught(void **state)
{
	(void)state;
	expect_swapped("decilm", 2, 1, "model.layers.0.self_attn.qkv_proj.weight",
	               "layer 0's q/k/v heads exchanged between the ranks");
	expect_swapped("decilm", 2, 1, "model.layers.2.self_attn.qkv_proj.weight",
	               "layer 2's q heads exchanged (its one kv head on both ranks)");
	expect_swapped("decilm", 2, 1, "model.layers.3.self_attn.o_proj.weight",
	               "layer 3's o_proj columns exchanged");
	expect_swapped("decilm", 2, 1, "model.layers.1.mlp.gate_up_proj.weight",
	               "layer 1's (512 wide) gate_up rows exchanged");
	expect_swapped("decilm", 2, 1, "model.layers.0.mlp.down_proj.weight",
	               "layer 0's down_proj columns exchanged");
	expect_halves_swapped(
	    "decilm", 2, 1,
	    (tamper_halves){"model.layers.1.mlp.gate_up_proj.weight", 0, 1, 256, 128 * 4},
	    "rank 0's layer 1 gate / up halves exchanged");
	expect_zeroed("decilm", 4, 1, 3, "model.layers.2.self_attn.qkv_proj.weight",
	              "rank 3's layer 2 q/k/v dropped (its kv head replicated at TP 4)");
}

/* The fixture read as DeciLM: Llama's decoder (RMSNorms, silu, unfused q/k/v, no biases,
 * untied), head_dim 16, rms_norm_eps 1e-5, rope_theta 5e5; per layer attention / MLP, kv heads
 * 2, -, 1, 1 and widths 256, 512, -, 256; KV and I the largest (2, 512). */
static void test_decilm_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c, lc;
	wt_errbuf err = {0};
	open_model(&m, "decilm");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.read_act && c.decilm && !c.fused_ckpt &&
	            !c.layernorm && !c.tied && c.H == 8 && c.KV == 2 && c.d == 16 && c.I == 512 &&
	            c.L == 4 && c.hid == 128 && c.V == 1000 && c.act == REF_ACT_SILU);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 5e5) < 1e-3);
	static const bool attn[] = {true, false, true, true}, ffn[] = {true, true, false, true};
	static const int64_t kv[] = {2, 0, 1, 1}, inter[] = {256, 512, 0, 256};
	for (int64_t l = 0; l < 4; l++) {
		assert_true(ref_dl_attn(&c, l) == attn[l] && ref_dl_ffn(&c, l) == ffn[l]);
		const ref_cfg *cl = ref_dl_layer(&c, l, &lc);
		assert_int_equal(cl->KV, attn[l] ? kv[l] : c.KV);
		assert_int_equal(cl->I, ffn[l] ? inter[l] : c.I);
	}
	ref_set_clear(&ck);
	close_model(&m);
	/* a layer wider than the reference runs (the loader takes ffn.intermediate_size to 2^40) */
	expect_cfg("{\"architectures\":[\"DeciLMForCausalLM\"],\"model_type\":\"nemotron-nas\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_hidden_layers\":1,"
	           "\"vocab_size\":1000,\"block_configs\":[{\"attention\":{\"n_heads_in_group\":4},"
	           "\"ffn\":{\"intermediate_size\":4294967296}}]}",
	           WT_EUNSUPPORTED, "block_configs[0] gives 2 kv heads and an MLP 4294967296 wide");
}

/* The per-layer fields drive the pass: clearing layer 3's ffn bit or layer 0's attention bit
 * moves the logits (that branch is skipped), and layer 2 read with two kv heads is an error (its
 * k_proj holds one). */
static void test_decilm_layers(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "decilm");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	float *a = malloc(N_TOK * 1000 * sizeof(float)), *b = malloc(N_TOK * 1000 * sizeof(float));
	assert_non_null(a);
	assert_non_null(b);
	logits_with(&c, &ck, a);
	c.dl_ffn[0] &= ~(1ull << 3); /* layer 3's MLP skipped */
	logits_with(&c, &ck, b);
	expect_moved(a, b, N_TOK * 1000, 1e-3, "layer 3's MLP skipped");
	c.dl_ffn[0] |= 1ull << 3;
	c.dl_attn[0] &= ~1ull; /* layer 0's attention skipped */
	logits_with(&c, &ck, b);
	expect_moved(a, b, N_TOK * 1000, 1e-3, "layer 0's attention skipped");
	c.dl_attn[0] |= 1ull;
	c.dl_kv[2] = 2; /* layer 2 read with two kv heads: its k_proj is [16, 128] */
	assert_int_not_equal(ref_forward_full(&c, &ck, g_tokens, N_TOK, b, NULL, &err), WT_OK);
	print_message("layer 2 with 2 kv heads: %s\n", err.msg);
	free(a);
	free(b);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_decilm_pass),   cmocka_unit_test(test_decilm_transformers),
	    cmocka_unit_test(test_decilm_caught), cmocka_unit_test(test_decilm_config),
	    cmocka_unit_test(test_decilm_layers),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
