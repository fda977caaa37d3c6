/*
 * test_reference_mistral_large3.c — the reference forward pass over Mistral-Large-3
 * (MistralLarge3ForCausalLM; fixture mistral_large3, and the same weights in Mistral's native
 * format): DeepSeek-V3's pass (MLA with q LoRA, layer 0 dense, one shared expert) with vLLM's
 * routing for it (softmax over mlp.gate, no correction bias, top-k renormalised, times
 * routed_scaling_factor) and llama_4_scaling on q (the fixture's original_max_position_embeddings
 * 3, beta 0.5: tokens 3 .. 6 scaled). Full and sharded logits agree within REF_TOL_F32 (TP 1, 2,
 * 4, 8, TP 2 x EP 2) or the quantized layouts' budgets; the full path's logits equal, at 28
 * points, transformers 4.57.1's DeepseekV3ForCausalLM built from the same weights (load_state_dict:
 * no unexpected key, the one missing the unused correction-bias buffer) with its router made
 * vLLM's softmax / renormalise and q scaled by llama_4_scaling in its eager attention; the native
 * folder's logits are the transformers-named folder's bit for bit; both switches move the logits;
 * rank tensors broken the way a wrong planner would break them are caught; config.json values
 * the reference does not run are refused. Fixture from $WT_BUILD/wt-mkckpt --family
 * mistral_large3 (hid 256, H 8, q_lora 128, kv_lora 64, nope / rope / v 32, 4 experts + 1 shared,
 * V 1024, 2 layers, BF16; seed printed).
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

#define F  "mistral_large3"
#define L1 "model.layers.1."
#define A1 L1 "self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {F};
	if (gen_fixtures("reference_ml3", fams, 1) != 0)
		return -1;
	char *bin = tu_mkckpt();
	char *dir = tu_path(g_root, "native");
	char cmd[4096];
	snprintf(cmd, sizeof(cmd),
	         "'%s' --family " F " --format mistral --out '%s' --seed %u >/dev/null 2>&1", bin,
	         dir, SEED);
	free(bin);
	free(dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_ml3_pass(void **state)
{
	(void)state;
	expect_pass_tp(F, true);
	expect_pass(F, 2, 2, WT_QUANT_NONE, 0);
	expect_pass(F, 1, 4, WT_QUANT_NONE, 0);
	expect_pass(F, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(F, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (token, column, value), tokens g_tokens: transformers 4.57.1 DeepseekV3ForCausalLM over
 * DeepseekV3Config(**config.json) (topk_method, scoring_func and llama_4_scaling left out), the
 * fixture's tensors (load_state_dict: no unexpected key, missing only the correction-bias buffer,
 * zero and unused), DeepseekV3TopkRouter.forward replaced by vLLM's grouped top-k over
 * softmax(router_logits) renormalised times routed_scaling_factor, eager_attention_forward
 * given q times 1 + 0.5 ln(1 + floor(t / 3)); float32; all 7 x 1024 logits within 6.6e-7 of the
 * reference's (largest 1.27) */
static const gold_pt gold_ml3[] = {
    {0, 0, -3.094906807e-01f},    {0, 341, -1.192772388e-01f},  {0, 682, 3.108504713e-01f},
    {0, 1023, -4.578197002e-02f}, {1, 0, -3.305761516e-01f},    {1, 341, 7.344627380e-02f},
    {1, 682, -5.819963664e-02f},  {1, 1023, 1.301692575e-01f},  {2, 0, -4.535900950e-01f},
    {2, 341, -2.251542509e-01f},  {2, 682, -2.109792084e-01f},  {2, 1023, 1.396854371e-01f},
    {3, 0, -3.267593980e-01f},    {3, 341, -6.149032712e-02f},  {3, 682, 1.024824828e-01f},
    {3, 1023, 6.010445952e-02f},  {4, 0, -1.724837720e-01f},    {4, 341, -1.232640296e-01f},
    {4, 682, 6.902759522e-02f},   {4, 1023, -7.659576833e-03f}, {5, 0, -3.128837049e-01f},
    {5, 341, -1.655674428e-01f},  {5, 682, 1.471490264e-01f},   {5, 1023, 1.318704188e-01f},
    {6, 0, -1.773385853e-01f},    {6, 341, -1.882563531e-01f},  {6, 682, 1.222197637e-01f},
    {6, 1023, 2.059951425e-01f}};

static void test_ml3_transformers(void **state)
{
	(void)state;
	expect_gold(F, 1024, 1e-5, gold_ml3, sizeof(gold_ml3) / sizeof(gold_ml3[0]));
}

/* The native folder (params.json, Mistral's names) runs as the transformers-named one. */
static void test_ml3_native(void **state)
{
	(void)state;
	size_t n = N_TOK * 1024;
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	assert_true(a != NULL && b != NULL);
	ref_cfg c;
	full_logits(F, a, &c);
	full_logits("native", b, &c);
	assert_true(c.ml3 && c.l4_orig == 3);
	assert_memory_equal(a, b, n * sizeof(float));
	free(a);
	free(b);
}

/* llama_4_scaling and the renormalisation each move the logits. */
static void test_ml3_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, F);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DEEPSEEK && c.ml3 && !c.ds_v2 && c.norm_topk && c.n_group == 1 &&
	            c.first_dense == 1 && c.l4_orig == 3 && fabs(c.l4_beta - 0.5) < 1e-12);
	size_t n = N_TOK * 1024;
	float *base = malloc(n * sizeof(float)), *alt = malloc(n * sizeof(float));
	assert_true(base != NULL && alt != NULL);
	logits_with(&c, &ck, base);
	c.l4_orig = 0;
	logits_with(&c, &ck, alt);
	expect_moved(base, alt, n, 1e-3, "no llama_4_scaling");
	c.l4_orig = 3;
	c.norm_topk = false;
	logits_with(&c, &ck, alt);
	expect_moved(base, alt, n, 1e-3, "top-k not renormalised");
	free(base);
	free(alt);
	ref_set_clear(&ck);
	close_model(&m);
}

static void test_ml3_caught(void **state)
{
	(void)state;
	expect_swapped(F, 2, 1, A1 "q_b_proj.weight", "the ranks' q_b_proj heads exchanged");
	expect_swapped(F, 2, 1, A1 "kv_b_proj.weight", "the ranks' kv_b_proj heads exchanged");
	expect_swapped(F, 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_swapped(F, 2, 1, "model.layers.0.mlp.gate_up_proj.weight",
	               "the dense layer's gate_up rows exchanged");
	expect_zeroed(F, 2, 1, 1, L1 "mlp.gate.weight", "rank 1's router zeroed");
	expect_zeroed(F, 2, 1, 0, L1 "mlp.shared_experts.down_proj.weight",
	              "rank 0's shared expert down_proj zeroed");
	expect_stacks_swapped(F, 1, 2, L1 "mlp.experts.", "the EP ranks' expert stacks exchanged");
}

#define ML3_CFG(x)                                                                                 \
	"{\"architectures\": [\"MistralLarge3ForCausalLM\"], \"model_type\": \"deepseek_v3\", "    \
	"\"hidden_size\": 256, \"num_hidden_layers\": 2, \"num_attention_heads\": 8, "             \
	"\"num_key_value_heads\": 8, \"intermediate_size\": 512, \"vocab_size\": 1024, "           \
	"\"q_lora_rank\": 128, \"kv_lora_rank\": 64, \"qk_nope_head_dim\": 32, "                   \
	"\"qk_rope_head_dim\": 32, \"v_head_dim\": 32, \"n_routed_experts\": 4, "                  \
	"\"n_shared_experts\": 1, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 256, "    \
	"\"first_k_dense_replace\": 1" x "}"

static void test_ml3_cfg(void **state)
{
	(void)state;
	expect_cfg(ML3_CFG(", \"scoring_func\": \"softmax\", \"norm_topk_prob\": true"), WT_OK,
	           NULL);
	expect_cfg(ML3_CFG(", \"scoring_func\": \"sigmoid\", \"norm_topk_prob\": true"),
	           WT_EUNSUPPORTED, "scoring_func 'sigmoid'");
	expect_cfg(ML3_CFG(", \"norm_topk_prob\": true"), WT_EUNSUPPORTED,
	           "scoring_func '(absent)'");
	expect_cfg(ML3_CFG(", \"scoring_func\": \"softmax\", \"norm_topk_prob\": true, "
	                   "\"topk_method\": \"noaux_tc\""),
	           WT_EUNSUPPORTED, "topk_method 'noaux_tc'");
	expect_cfg(ML3_CFG(", \"scoring_func\": \"softmax\", \"norm_topk_prob\": false"),
	           WT_EUNSUPPORTED, "norm_topk_prob must be true");
	expect_cfg(ML3_CFG(", \"scoring_func\": \"softmax\", \"norm_topk_prob\": true, "
	                   "\"llama_4_scaling\": {\"original_max_position_embeddings\": 0, "
	                   "\"beta\": 0.1}"),
	           WT_ECORRUPT, "llama_4_scaling");
	expect_cfg(ML3_CFG(", \"scoring_func\": \"softmax\", \"norm_topk_prob\": true, "
	                   "\"llama_4_scaling\": {\"original_max_position_embeddings\": 8, "
	                   "\"beta\": -1}"),
	           WT_ECORRUPT, "finite beta >= 0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ml3_pass),   cmocka_unit_test(test_ml3_transformers),
	    cmocka_unit_test(test_ml3_native), cmocka_unit_test(test_ml3_switches),
	    cmocka_unit_test(test_ml3_caught), cmocka_unit_test(test_ml3_cfg),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
