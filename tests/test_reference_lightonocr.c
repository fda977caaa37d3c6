/*
 * test_reference_lightonocr.c — the reference forward pass over LightOnOCR
 * (LightOnOCRForConditionalGeneration, vLLM's lightonocr.py: Mistral3ForConditionalGeneration
 * with a Qwen3 language model): the mistral3 fixture made a LightOnOCR checkpoint by the test —
 * its text_config a qwen3 one (the same sizes, head_dim 48), per-head q_norm / k_norm [48]
 * added to each layer, the tensors under the release's names model.language_model.,
 * model.vision_encoder., model.vision_projection., lm_head. The full and sharded logits agree
 * (TP 1, 2, 4; int8-channel TP 2, fp8-channel TP 4), the full logits equal transformers
 * 4.57.1's at 28 points, the q / k norms move them, and rank tensors broken the way a wrong
 * planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family mistral3 (hid
 * 256, H 4, KV 2, d 48, I 384, V 1000, 2 layers, untied; Pixtral 2 blocks, width 128), seed
 * printed.
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
#include "loader/loader_st.h"
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

#define FAM  "mistral3"
#define LO   "lightonocr"
#define V_LO 1000
#define HD   48
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

/* LightOnOCR's name of the reference's name of a mistral3 tensor into b. */
static void lo_name(char *b, size_t n, const char *name)
{
	if (strncmp(name, "model.", 6) == 0)
		snprintf(b, n, "model.language_model.%s", name + 6);
	else if (strncmp(name, "vision_tower.", 13) == 0)
		snprintf(b, n, "model.vision_encoder.%s", name + 13);
	else if (strncmp(name, "multi_modal_projector.", 22) == 0)
		snprintf(b, n, "model.vision_projection.%s", name + 22);
	else
		snprintf(b, n, "%s", name);
}

/* Layer l's q_norm (k 0) / k_norm (k 1) weight: 1 + 0.3 sin(...), BF16 */
static void qk_norm_values(uint16_t *w, int l, int k)
{
	for (int i = 0; i < HD; i++)
		w[i] = kern_f32_to_bf16(
		    1.0f + 0.3f * sinf(0.7f * (float)i + 1.3f * (float)l + 2.1f * (float)k));
}

/* g_root/lightonocr: the fixture's tensors under LightOnOCR's names plus the q / k norms (one
 * file), config.json naming LightOnOCR's architecture over a qwen3 text_config. */
static int write_lightonocr(void)
{
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	int rv = ref_load_ckpt(m.c, &c, &ck, &err);
	close_model(&m);
	size_t n = ck.n + 4;
	st_desc *d = calloc(n, sizeof(*d));
	const void **data = calloc(n, sizeof(*data));
	char **names = calloc(n, sizeof(*names));
	static uint16_t norms[4][HD];
	assert_true(d != NULL && data != NULL && names != NULL);
	for (size_t i = 0; rv == WT_OK && i < n; i++) {
		names[i] = malloc(256);
		assert_non_null(names[i]);
		if (i < ck.n) {
			const ref_tensor *t = &ck.t[i];
			lo_name(names[i], 256, t->name);
			d[i] = (st_desc){names[i], t->dtype, t->ndim, {0}};
			memcpy(d[i].shape, t->shape, sizeof(t->shape));
			data[i] = t->data;
			continue;
		}
		int l = (int)(i - ck.n) / 2, k = (int)(i - ck.n) % 2;
		snprintf(names[i], 256, "model.language_model.layers.%d.self_attn.%s_norm.weight",
		         l, k ? "k" : "q");
		qk_norm_values(norms[i - ck.n], l, k);
		d[i] = (st_desc){names[i], WT_BF16, 1, {HD}};
		data[i] = norms[i - ck.n];
	}
	char *src = tu_path(g_root, FAM), *dir = tu_path(g_root, LO);
	char *out = tu_path(dir, "model.safetensors");
	static const char *const files[] = {"config.json"};
	if (rv == WT_OK)
		rv = copy_fixture(FAM, LO, files, 1) == 0 ? WT_OK : -1;
	if (rv == WT_OK) {
		edit_config(dir, "\"Mistral3ForConditionalGeneration\"",
		            "\"LightOnOCRForConditionalGeneration\"");
		edit_config(dir, "\"model_type\": \"mistral\",", "\"model_type\": \"qwen3\",");
		rv = st_write_path(out, d, data, n, NULL, 0, &err);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(d);
	free(data);
	free(src);
	free(dir);
	free(out);
	ref_set_clear(&ck);
	return rv == WT_OK ? 0 : -1;
}

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	int rv = gen_fixtures("reference_lightonocr", fams, 1);
	return rv == 0 ? write_lightonocr() : rv;
}

static void test_pass(void **state)
{
	(void)state;
	expect_pass_tp(LO, false); /* 4 heads: no TP 8 */
}

/* (token, vocabulary entry, logit): transformers 4.57.1's Mistral3ForConditionalGeneration
 * (its language model AutoModel of the qwen3 text_config: Qwen3Model; torch 2.4.1 CPU, eager,
 * float32) from_pretrained of the fixture with LightOnOCR's tensors renamed as vLLM's mapper
 * places them (model.vision_encoder. -> model.vision_tower., model.vision_projection. ->
 * model.multi_modal_projector.; no missing, unexpected or mismatched keys), on g_tokens. Over all
 * 7000 logits 6.3e-7 of max |logit| 1.20. */
static const gold_pt gold[] = {
    {0, 623, -8.871522546e-02f}, {0, 683, 1.002782285e-01f},  {0, 897, 1.964467466e-01f},
    {0, 942, -3.883051276e-01f}, {1, 55, -1.592411101e-02f},  {1, 224, 1.790135205e-01f},
    {1, 285, 8.966119289e-01f},  {1, 299, -5.887993574e-01f}, {2, 131, -3.987738490e-01f},
    {2, 498, -9.874919802e-02f}, {2, 797, -1.146708205e-01f}, {2, 819, -4.368863255e-02f},
    {3, 278, 2.982783914e-01f},  {3, 302, 3.327666521e-01f},  {3, 340, 6.735014170e-02f},
    {3, 719, -1.025912836e-01f}, {4, 476, 3.922667801e-01f},  {4, 503, -4.287261963e-01f},
    {4, 553, -2.835985124e-01f}, {4, 581, 3.318254054e-01f},  {5, 341, 1.585007161e-01f},
    {5, 621, 3.546088636e-01f},  {5, 698, 3.009041548e-01f},  {5, 790, -2.972907424e-01f},
    {6, 159, 1.454624534e-01f},  {6, 612, 1.043078303e-02f},  {6, 842, 1.625516713e-01f},
    {6, 856, 3.309268951e-01f},
};

static void test_transformers(void **state)
{
	(void)state;
	expect_gold(LO, V_LO, 1e-5, gold, sizeof(gold) / sizeof(gold[0]));
}

/* The fixture as read: Qwen3's q / k norms on, head_dim 48, untied; without the norms the
 * logits move. */
static void test_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, LO);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.qk_norm && !c.tied && c.d == HD && c.H == 4 &&
	            c.KV == 2 && c.hid == 256 && c.V == V_LO && c.L == 2);
	assert_non_null(find_tensor(&ck, A1 "q_norm.weight"));
	size_t nl = N_TOK * V_LO;
	float *base = malloc(nl * sizeof(float)), *lg = malloc(nl * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.qk_norm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, nl, 1e-3, "no q/k norms");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
	/* Mistral 3's own fixture keeps Mistral's attention (no q / k norms) */
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_false(c.qk_norm);
	ref_set_clear(&ck);
	close_model(&m);
}

static void tamper_q_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's q_norm read as its k_norm */
	assert_int_equal(n, 2);
	ref_tensor *q = find_tensor(&r[1], A1 "q_norm.weight"),
	           *k = find_tensor(&r[1], A1 "k_norm.weight");
	assert_int_equal(q->nbytes, k->nbytes);
	memcpy(q->data, k->data, q->nbytes);
}

static void test_caught(void **state)
{
	(void)state;
	expect_swapped(LO, 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped(LO, 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_caught(LO, 2, 1, tamper_q_norm, "q_norm read as k_norm");
	expect_zeroed(LO, 2, 1, 1, M1 "down_proj.weight", "rank 1's down_proj columns lost");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pass),
	    cmocka_unit_test(test_transformers),
	    cmocka_unit_test(test_fixture_cfg),
	    cmocka_unit_test(test_caught),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
