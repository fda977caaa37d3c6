/*
 * test_reference_phi3v.c — the reference forward pass over Phi-3-Vision's language model
 * (Phi3VForCausalLM on text tokens, model_type phi3_v: the phi3 family's math, qkv_proj and
 * gate_up_proj fused in the checkpoint, under the checkpoint's own names model.* / lm_head; the
 * CLIP tower, glb_GN / sub_GN and img_projection loaded, not run, as for the other multimodal
 * families). Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8: KV 2 replicated
 * past TP 2; the tower's 16 heads allow TP 8) or the quantized layouts' budgets; the language
 * model's tensors are the phi3 fixture's byte for byte (the same names and seed), so the full
 * path's logits equal that fixture's exactly, and transformers 4.57.1's Phi3ForCausalLM built from
 * the fixture's language-model tensors at 28 pinned points; rank tensors broken the way a wrong
 * planner would break them are caught; the config's reading. Fixtures from
 * $WT_BUILD/wt-mkckpt --family phi3v and phi3 (hid 256, H 8, KV 2, I 512, V 1000, L 2; a CLIP
 * ViT-L/14-336 tower of one block, img_processor.layer_idx -24).
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
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

#define FAM   "phi3v"
#define V_P3V 1000
#define L0    "model.layers.0."
#define L1    "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM, "phi3"};
	return gen_fixtures("reference_phi3v", fams, 2);
}

static void test_p3v_pass(void **state)
{
	(void)state;
	for (uint32_t tp = 1; tp <= 8; tp *= 2)
		expect_pass(FAM, tp, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens: Phi3ForCausalLM (torch 2.4.1 CPU,
 * eager, float32) built from the fixture's config.json without its image keys and loaded
 * strictly with its tensors outside model.vision_embed_tokens. (all 7 x 1000 within 5.96e-7) */
static const gold_pt gold_p3v[] = {
    {0, 623, 1.29604384e-01f},  {0, 683, -2.02954590e-01f}, {0, 897, -2.27854624e-01f},
    {0, 942, -2.09831849e-01f}, {1, 55, -1.30224109e-01f},  {1, 224, 6.78689301e-01f},
    {1, 285, 1.88852817e-01f},  {1, 299, 4.29518729e-01f},  {2, 131, -7.76218534e-01f},
    {2, 498, 1.11417219e-01f},  {2, 797, 2.93065101e-01f},  {2, 819, -6.26179129e-02f},
    {3, 278, 2.01894432e-01f},  {3, 302, 7.20043659e-01f},  {3, 340, -3.85036379e-01f},
    {3, 719, -3.61052155e-01f}, {4, 476, -3.34423006e-01f}, {4, 503, 3.64331722e-01f},
    {4, 553, -1.28761113e-01f}, {4, 581, -1.02644593e-01f}, {5, 341, -2.27118298e-01f},
    {5, 621, 1.97791621e-01f},  {5, 698, 3.06282699e-01f},  {5, 790, 3.64474565e-01f},
    {6, 159, -1.81863129e-01f}, {6, 612, -2.47645289e-01f}, {6, 842, -3.80570471e-01f},
    {6, 856, -3.26187968e-01f},
};

#define GOLD_TOL 1e-5

/* Every logit equals the Phi3ForCausalLM fixture's (the same LM weights and keys), and the
 * pinned transformers points within GOLD_TOL. */
static void test_p3v_transformers(void **state)
{
	(void)state;
	size_t n = N_TOK * V_P3V;
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	assert_true(a && b);
	ref_cfg ca, cb;
	full_logits(FAM, a, &ca);
	full_logits("phi3", b, &cb);
	double worst = 0, top = 0;
	for (size_t k = 0; k < n; k++) {
		worst = fmax(worst, fabs((double)a[k] - (double)b[k]));
		top = fmax(top, fabs((double)b[k]));
	}
	print_message("%s vs phi3: max |diff| %.3g of max |logit| %.3g\n", FAM, worst, top);
	assert_true(worst == 0.0 && top > 0.1);
	assert_true(ca.fused_ckpt && !ca.tied && ca.kind == REF_DENSE);
	free(a);
	free(b);
	expect_gold(FAM, V_P3V, GOLD_TOL, gold_p3v, sizeof(gold_p3v) / sizeof(gold_p3v[0]));
}

/* The fused rows re-cut wrong, a rank's columns lost, the vocabulary rows exchanged. */
static void test_p3v_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "self_attn.qkv_proj.weight", "qkv_proj heads exchanged");
	/* TP 4: rank 3's [gate_r; up_r] (2 x 128 rows of 256 BF16) as [up_r; gate_r] */
	expect_halves_swapped(FAM, 4, 1,
	                      (tamper_halves){L0 "mlp.gate_up_proj.weight", 3, 1, 128, 256 * 2},
	                      "rank 3's gate / up halves exchanged");
	expect_zeroed(FAM, 4, 1, 2, L0 "self_attn.o_proj.weight",
	              "rank 2's o_proj columns dropped");
	expect_swapped(FAM, 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_zeroed(FAM, 2, 1, 0, "model.embed_tokens.weight", "rank 0's embedding rows dropped");
	expect_zeroed(FAM, 8, 1, 5, "lm_head.weight", "rank 5's lm_head rows dropped");
}

#define P3V_RAW(ip, el)                                                                            \
	"{\"architectures\": [\"Phi3VForCausalLM\"], \"model_type\": \"phi3_v\", "                 \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"intermediate_size\": 96, \"num_hidden_layers\": 2, \"vocab_size\": 100, "               \
	"\"img_processor\": {\"num_img_tokens\": 144, \"image_dim_out\": " ip "}, "                \
	"\"embd_layer\": {\"use_hd_transform\": true, \"with_learnable_separator\": true" el "}}"
#define P3V_SUB ", \"hd_transform_order\": \"sub_glb\""
#define P3V_DIM "1024"

/* A phi3_v config read as Phi-3's (qkv_proj fused in the checkpoint, untied by default), the
 * image keys vLLM cannot run refused as the loader refuses them. */
static void test_p3v_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char ok[] = P3V_RAW(P3V_DIM, P3V_SUB);
	assert_int_equal(ref_cfg_parse_json(ok, strlen(ok), &c, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.fused_ckpt && !c.tied && c.hid == 64 && c.H == 4 &&
	            c.KV == 2 && c.d == 16 && c.I == 96 && c.V == 100 && c.L == 2);
	expect_cfg(P3V_RAW(P3V_DIM, ""), WT_EUNSUPPORTED, "hd_transform_order");
	expect_cfg(P3V_RAW("768", P3V_SUB), WT_EUNSUPPORTED, "image_dim_out 768");
	expect_cfg(P3V_RAW(P3V_DIM ", \"layer_idx\": 24", P3V_SUB), WT_ECORRUPT, "layer_idx 24");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_p3v_pass),
	    cmocka_unit_test(test_p3v_transformers),
	    cmocka_unit_test(test_p3v_caught),
	    cmocka_unit_test(test_p3v_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
