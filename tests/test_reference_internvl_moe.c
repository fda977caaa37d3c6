/*
 * test_reference_internvl_moe.c — the reference forward pass over InternVL3.5-MoE's language
 * model (InternVLForConditionalGeneration whose text_config is qwen3_moe, on text tokens:
 * Qwen3's attention with per-head q / k norms, Qwen3-MoE's layers: a dense MLP on the
 * mlp_only_layers, elsewhere the softmax router's top-k experts, renormalised by
 * norm_topk_prob; language_model.* read as the text model's names, the InternViT tower and the
 * projector loaded, not run). Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4,
 * EP 2, TP 2 x EP 2) or the quantized layouts' budgets; the full path's logits equal
 * transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken the way a wrong
 * planner would break them are caught. The fixture comes from $WT_BUILD/wt-mkckpt --family
 * internvl_qwen3_moe (hid 128, H 4, KV 2, head_dim 64, V 1000, 2 layers: layer 0 an MLP of 256,
 * layer 1 4 experts of 128, top 2; untied; internvl's tower).
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

#define V_IV 1000
#define FAM  "internvl_qwen3_moe"
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_internvl_moe", fams, 1);
}

static void test_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass(FAM, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 2, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass(FAM, 1, 2, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold[] = {
    {0, 623, 1.29937602e-03f},  {0, 683, -6.48295358e-02f}, {0, 897, 1.98356971e-01f},
    {0, 942, -3.45681101e-01f}, {1, 55, 2.94978201e-01f},   {1, 224, 2.80705750e-01f},
    {1, 285, 8.81009549e-02f},  {1, 299, -1.34872466e-01f}, {2, 131, -1.72881469e-01f},
    {2, 498, -3.52745712e-01f}, {2, 797, 1.25358954e-01f},  {2, 819, 3.40563089e-01f},
    {3, 278, 1.24561548e-01f},  {3, 302, -4.69258666e-01f}, {3, 340, -6.80385113e-01f},
    {3, 719, 1.35175750e-01f},  {4, 476, 1.09240100e-01f},  {4, 503, 2.12470800e-01f},
    {4, 553, -8.50566253e-02f}, {4, 581, 3.88337523e-01f},  {5, 341, -1.45228416e-01f},
    {5, 621, -2.03516781e-01f}, {5, 698, 6.22643679e-02f},  {5, 790, 1.37064070e-01f},
    {6, 159, -2.37408787e-01f}, {6, 612, -1.41677409e-01f}, {6, 842, 2.14791924e-01f},
    {6, 856, -4.95539516e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 4.8e-7 of
 * max |logit| 0.87: InternVLForConditionalGeneration.from_pretrained of the fixture, strict,
 * untied, its language model Qwen3MoeModel; the full model on input_ids, eager, float32) */
#define GOLD_TOL 1e-5

static void test_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V_IV, GOLD_TOL, gold, sizeof(gold) / sizeof(gold[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_router(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's router replica times 3 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], M1 "gate.weight", 3.0f);
}

static void tamper_q_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's q_norm read as k_norm's (the per-head norms mixed up) */
	assert_int_equal(n, 2);
	ref_tensor *q = find_tensor(&r[1], A1 "q_norm.weight"),
	           *k = find_tensor(&r[1], A1 "k_norm.weight");
	assert_int_equal(q->nbytes, k->nbytes);
	memcpy(q->data, k->data, q->nbytes);
}

static void test_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped(FAM, 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_caught(FAM, 2, 1, tamper_q_norm, "q_norm read as k_norm");
	expect_halves_swapped(
	    FAM, 2, 1, (tamper_halves){"model.layers.0.mlp.gate_up_proj.weight", 0, 1, 128, 256},
	    "the dense layer's gate / up halves swapped");
	expect_halves_swapped(FAM, 2, 1, (tamper_halves){M1 "experts.w13_weight", 0, 4, 64, 256},
	                      "the experts' gate / up halves swapped");
	expect_swapped(FAM, 2, 1, M1 "experts.w2_weight", "w2 column slices exchanged");
	expect_stacks_swapped(FAM, 1, 2, M1 "experts.", "EP ranks' stacks exchanged");
	expect_caught(FAM, 2, 1, tamper_router, "rank 1's router x3");
}

/* The fixture as read: Qwen3-MoE's kind with q / k norms, head_dim 64, untied, layer 0 dense
 * (mlp_only_layers), layer 1 4 experts of 128 top 2 renormalised; each switch moves the
 * logits. */
static void test_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_QWEN2_MOE && c.qk_norm && !c.tied && c.d == 64 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_IV && c.L == 2 &&
	            c.E == 4 && c.topk == 2 && c.Ie == 128 && c.Is == 0 && c.norm_topk &&
	            !c.q3vl_moe && !ref_layer_is_moe(&c, 0) && ref_layer_is_moe(&c, 1));
	assert_float_equal(c.theta, 1000000.0, 1e-3);
	assert_non_null(find_tensor(&ck, "lm_head.weight"));
	assert_non_null(find_tensor(&ck, M1 "gate.weight"));
	assert_non_null(find_tensor(&ck, "model.layers.0.mlp.down_proj.weight"));
	assert_non_null(find_tensor(&ck, "vision_tower.embeddings.cls_token"));
	size_t n = N_TOK * V_IV;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.norm_topk = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "top-k weights not renormalised");
	off = c;
	off.qk_norm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no q/k norms");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define IV_JSON(text)                                                                              \
	"{\"architectures\": [\"InternVLForConditionalGeneration\"], \"model_type\": "             \
	"\"internvl\", \"text_config\": {\"model_type\": \"qwen3_moe\"" text "}, "                 \
	"\"vision_config\": {}}"

/* Qwen3MoeConfig's defaults under a qwen3_moe text_config (transformers 4.57.1): 128 experts
 * of 768 top 8, head_dim 2048 / 32, norm_topk_prob false, every layer sparse; the keys read */
static void test_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char dflt[] = IV_JSON("");
	assert_int_equal(ref_cfg_parse_json(dflt, strlen(dflt), &c, &err), WT_OK);
	assert_true(c.kind == REF_QWEN2_MOE && c.qk_norm && !c.tied && c.hid == 2048 && c.H == 32 &&
	            c.KV == 4 && c.d == 64 && c.I == 6144 && c.L == 24 && c.V == 151936 &&
	            c.E == 128 && c.Ie == 768 && c.topk == 8 && !c.norm_topk && c.Is == 0 &&
	            c.sparse_step == 1 && ref_layer_is_moe(&c, 0));
	assert_float_equal(c.theta, 10000.0, 1e-6);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	static const char set[] = IV_JSON(", \"norm_topk_prob\": true, \"decoder_sparse_step\": 2, "
	                                  "\"num_experts\": 8, \"head_dim\": 128, "
	                                  "\"tie_word_embeddings\": true");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_true(c.norm_topk && c.sparse_step == 2 && c.E == 8 && c.d == 128 && c.tied &&
	            !ref_layer_is_moe(&c, 0) && ref_layer_is_moe(&c, 1));
	expect_cfg(IV_JSON(", \"num_experts_per_tok\": 129"), WT_EUNSUPPORTED, "top-k");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pass),   cmocka_unit_test(test_transformers),
	    cmocka_unit_test(test_caught), cmocka_unit_test(test_fixture_cfg),
	    cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
