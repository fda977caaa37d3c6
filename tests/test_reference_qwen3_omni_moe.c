/*
 * test_reference_qwen3_omni_moe.c — the reference forward pass over Qwen3-Omni's thinker
 * language model (Qwen3OmniMoeForConditionalGeneration on text tokens: Qwen3-MoE's math in
 * reference/reference.c, per-head q / k norms, the router's top-k renormalised
 * (norm_topk_prob), per-expert Linears, thinker.* read as the text model's names; M-RoPE over
 * text positions is 1-D RoPE; the vision tower, the audio encoder and the speech generator
 * loaded, not run, as docs/reference.md says for the multimodal families): untied. Full and
 * sharded logits agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the
 * full path's logits equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors
 * broken the way a wrong planner would break them are caught. The fixture comes from
 * $WT_BUILD/wt-mkckpt --family qwen3_omni_moe (hid 128, H 4, KV 2, d 32, V 1000, 3 layers:
 * 0 and 2 MoE with 4 experts of 64, top 2; 1 dense, I 256; thinker_config nests the text,
 * vision and audio configs).
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

#define V_Q3O 1000
#define A1    "model.layers.1.self_attn."
#define M1    "model.layers.1.mlp."
#define E0    "model.layers.0.mlp.experts."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"qwen3_omni_moe"};
	return gen_fixtures("reference_qwen3_omni_moe", fams, 1);
}

static void test_qwen3_omni_pass(void **state)
{
	(void)state;
	expect_pass("qwen3_omni_moe", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("qwen3_omni_moe", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("qwen3_omni_moe", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("qwen3_omni_moe", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("qwen3_omni_moe", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_q3o[] = {
    {0, 85, -2.72941053e-01f},  {0, 179, 9.19924080e-02f},  {0, 236, -4.62692708e-01f},
    {0, 809, 9.50886756e-02f},  {1, 39, 2.79706791e-02f},   {1, 94, -1.67720728e-02f},
    {1, 332, -1.66484131e-03f}, {1, 580, 3.09053302e-01f},  {2, 159, -1.76855788e-01f},
    {2, 263, -1.38651788e-01f}, {2, 690, -2.27024883e-01f}, {2, 734, -5.42997681e-02f},
    {3, 390, -1.88252958e-03f}, {3, 420, -5.24864137e-01f}, {3, 516, 2.24121466e-01f},
    {3, 886, 1.74650967e-01f},  {4, 172, -3.07024986e-01f}, {4, 736, -9.14370120e-02f},
    {4, 755, 1.24231838e-01f},  {4, 956, -8.54019821e-02f}, {5, 646, 6.32050782e-02f},
    {5, 649, 3.39998230e-02f},  {5, 695, -2.90641427e-01f}, {5, 869, 1.32476389e-01f},
    {6, 76, 8.17896426e-03f},   {6, 298, -8.91823173e-02f}, {6, 942, 1.99889705e-01f},
    {6, 971, -2.96028480e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 6.6e-7 of max
 * |logit| 0.84: Qwen3OmniMoeThinkerForConditionalGeneration.from_pretrained of the fixture's
 * thinker.* tensors with its thinker_config, strict (no missing / unexpected / mismatched key),
 * untied; on input_ids, eager, float32) */
#define GOLD_TOL 1e-5

static void test_qwen3_omni_transformers(void **state)
{
	(void)state;
	expect_gold("qwen3_omni_moe", V_Q3O, GOLD_TOL, gold_q3o,
	            sizeof(gold_q3o) / sizeof(gold_q3o[0]));
}

static void test_qwen3_omni_caught(void **state)
{
	(void)state;
	expect_swapped("qwen3_omni_moe", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("qwen3_omni_moe", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_swapped("qwen3_omni_moe", 2, 1, E0 "w2_weight", "experts' w2 exchanged");
	expect_halves_swapped("qwen3_omni_moe", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
}

/* The fixture as read: Qwen3-MoE's math (q / k norms, 4 experts of 64, top 2 renormalised,
 * layer 1 dense of 256), untied, d 32, 3 layers, rope_theta 1e6 and rms_norm_eps 1e-6 of
 * thinker_config.text_config; the towers and the speech generator under their names without
 * thinker. */
static void test_qwen3_omni_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "qwen3_omni_moe");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_QWEN2_MOE && !c.tied && c.qk_norm && c.d == 32 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_Q3O && c.L == 3);
	assert_true(c.E == 4 && c.topk == 2 && c.Ie == 64 && c.Is == 0 && c.norm_topk);
	assert_true(fabs(c.theta - 1e6) < 1 && fabs(c.eps - 1e-6) < 1e-12);
	assert_non_null(find_tensor(&ck, "model.embed_tokens.weight"));
	assert_non_null(find_tensor(&ck, "model.layers.0.self_attn.q_norm.weight"));
	assert_non_null(find_tensor(&ck, "model.layers.0.mlp.experts.3.down_proj.weight"));
	assert_non_null(find_tensor(&ck, "model.layers.1.mlp.gate_proj.weight"));
	assert_non_null(find_tensor(&ck, "lm_head.weight"));
	assert_non_null(find_tensor(&ck, "visual.merger_list.1.mlp.2.weight"));
	assert_non_null(find_tensor(&ck, "audio_tower.conv2d1.weight"));
	assert_non_null(find_tensor(&ck, "code2wav.code_embedding.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

/* norm_topk_prob left out of text_config: Qwen3OmniMoeTextConfig's true (the loader's view) */
static void test_qwen3_omni_norm_topk_default(void **state)
{
	(void)state;
	static const char js[] =
	    "{\"architectures\":[\"Qwen3OmniMoeForConditionalGeneration\"],\"model_type\":"
	    "\"qwen3_omni_moe\",\"thinker_config\":{\"text_config\":{\"hidden_size\":64,"
	    "\"num_attention_heads\":4,\"num_key_value_heads\":2,\"head_dim\":16,"
	    "\"intermediate_size\":128,\"vocab_size\":100,\"num_hidden_layers\":1,"
	    "\"num_experts\":4,\"num_experts_per_tok\":2,\"moe_intermediate_size\":32,"
	    "\"rope_scaling\":{\"mrope_section\":[2,3,3]}}}}";
	ref_cfg c;
	wt_errbuf err = {0};
	assert_int_equal(ref_cfg_parse_json(js, strlen(js), &c, &err), WT_OK);
	assert_true(c.kind == REF_QWEN2_MOE && c.norm_topk && c.E == 4 && c.topk == 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_qwen3_omni_pass),
	    cmocka_unit_test(test_qwen3_omni_transformers),
	    cmocka_unit_test(test_qwen3_omni_caught),
	    cmocka_unit_test(test_qwen3_omni_fixture_cfg),
	    cmocka_unit_test(test_qwen3_omni_norm_topk_default),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
