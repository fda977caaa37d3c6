/*
 * test_reference_opencua.c — the reference forward pass over OpenCUA
 * (OpenCUAForConditionalGeneration, vLLM's opencua.py): the qwen2_5_vl fixture saved as OpenCUA's
 * release lays it out (tensors under language_model.model., language_model.lm_head.,
 * vision_tower.; config.json model_type opencua with the fixture's language-model keys as
 * text_config, model_type qwen2 and no rope_scaling: vLLM builds Qwen2ForCausalLM of it, 1-D
 * RoPE, and the tower of vision_config). The full and sharded logits agree (TP 1, 2, 4;
 * int8-channel TP 2, fp8-channel TP 4), the full logits are Qwen2.5-VL's bit for bit (MRoPE on
 * text tokens is 1-D RoPE) and transformers 4.57.1's Qwen2ForCausalLM's at 28 points, and rank
 * tensors broken the way a wrong planner would break them are caught. Fixture from
 * $WT_BUILD/wt-mkckpt --family qwen2_5_vl (hid 256, H 8, KV 2, d 32, I 512, V 1024, 2 layers,
 * untied; vision depth 4, 4 heads, so no TP 8), seed printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "reference/reference.h"
#include "reference/reference_int.h"
#include "reference/ckpt.h"
#include "loader/loader_st.h"
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

#define FAM "qwen2_5_vl"
#define OC  "opencua"
#define L1  "model.layers.1."

/* OpenCUA's name of Qwen2.5-VL's tensor name into b. */
static void oc_name(char *b, size_t n, const char *name)
{
	if (strncmp(name, "visual.", 7) == 0)
		snprintf(b, n, "vision_tower.%s", name + 7);
	else
		snprintf(b, n, "language_model.%s", name);
}

/* OpenCUA's config.json of the fixture's flat Qwen2.5-VL one (a new reference, NULL when out of
 * memory): the language-model keys as text_config (model_type qwen2, no rope_scaling), its
 * vision_config. */
static char *oc_config(const char *text, size_t len)
{
	json_error_t je;
	json_t *q = json_loadb(text, len, 0, &je), *o = json_object(), *tc = json_deep_copy(q);
	char *out = NULL;
	if (q != NULL && o != NULL && tc != NULL) {
		static const char *const drop[] = {"architectures", "model_type", "vision_config",
		                                   "rope_scaling", "torch_dtype"};
		for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
			json_object_del(tc, drop[i]);
		json_object_set_new(tc, "model_type", json_string("qwen2"));
		json_t *a = json_array();
		json_array_append_new(a, json_string("OpenCUAForConditionalGeneration"));
		json_object_set_new(o, "architectures", a);
		json_object_set_new(o, "model_type", json_string("opencua"));
		json_object_set(o, "vision_config", json_object_get(q, "vision_config"));
		json_object_set(o, "text_config", tc);
		out = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
	}
	json_decref(q);
	json_decref(o);
	json_decref(tc);
	return out;
}

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	int rv = gen_fixtures("reference_opencua", fams, 1);
	return rv == 0 ? write_renamed(FAM, OC, oc_name, oc_config) : rv;
}

static void test_pass(void **state)
{
	(void)state;
	expect_pass_tp(OC, false);
}

/* The full path's logits are Qwen2.5-VL's bit for bit. */
static void test_logits(void **state)
{
	(void)state;
	enum { V = 1024 };
	float *a = malloc(N_TOK * V * sizeof(float)), *b = malloc(N_TOK * V * sizeof(float));
	assert_true(a != NULL && b != NULL);
	ref_cfg ca, cb;
	full_logits(FAM, a, &ca);
	full_logits(OC, b, &cb);
	assert_int_equal(ca.V, V);
	assert_int_equal(cb.V, V);
	assert_memory_equal(a, b, N_TOK * V * sizeof(float));
	free(a);
	free(b);
}

/* (token, vocabulary entry, logit): transformers 4.57.1's Qwen2ForCausalLM (torch 2.4.1 CPU,
 * eager, float32) of text_config, from_pretrained of the fixture's language-model tensors renamed
 * as vLLM's language_model module holds them (language_model.model. -> model.,
 * language_model.lm_head. -> lm_head.; no missing, unexpected or mismatched keys; the tower's
 * tensors, not run on text, left out), on g_tokens. Over all 7168 logits 6.0e-7 of max |logit|
 * 1.21. */
static const gold_pt gold[] = {
    {0, 87, -2.268633246e-01f},  {0, 183, -4.167559743e-01f}, {0, 242, 6.610779762e-01f},
    {0, 828, -4.107713997e-01f}, {1, 40, -1.331211627e-01f},  {1, 96, 3.779215813e-01f},
    {1, 340, 8.171319216e-02f},  {1, 594, -3.531133533e-01f}, {2, 163, -4.717256427e-01f},
    {2, 270, 1.749432385e-01f},  {2, 707, -1.523030996e-01f}, {2, 752, 2.065377384e-01f},
    {3, 399, 8.802580833e-01f},  {3, 430, 3.496173024e-02f},  {3, 528, 7.905531526e-01f},
    {3, 907, 2.992363274e-02f},  {4, 176, -2.596676052e-01f}, {4, 754, -1.589759439e-01f},
    {4, 774, -3.157051206e-01f}, {4, 979, -1.080603451e-01f}, {5, 662, -1.019487306e-01f},
    {5, 664, -8.818238974e-02f}, {5, 712, -5.127490759e-01f}, {5, 890, -5.237832665e-01f},
    {6, 78, 2.467845231e-01f},   {6, 305, 1.092729270e-01f},  {6, 965, -1.781266928e-01f},
    {6, 994, -4.679635167e-01f},
};

static void test_transformers(void **state)
{
	(void)state;
	expect_gold(OC, 1024, 1e-5, gold, sizeof(gold) / sizeof(gold[0]));
}

static void test_caught(void **state)
{
	(void)state;
	expect_swapped(OC, 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped(OC, 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_swapped(OC, 2, 1, "lm_head.weight", "lm_head rows exchanged");
	expect_zeroed(OC, 2, 1, 1, L1 "self_attn.qkv_proj.bias", "rank 1's q/k/v biases zeroed");
}

/* Read as Qwen2.5-VL's language model: the same sizes and eps / theta, untied, the checkpoint's
 * tensors under Qwen2.5-VL's names. */
static void test_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c, q;
	wt_errbuf err = {0};
	open_model(&m, OC);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.H == 8 && c.KV == 2 && c.d == 32 && c.L == 2 &&
	            c.V == 1024 && !c.tied);
	assert_non_null(ref_set_find(&ck, "lm_head.weight"));
	assert_non_null(ref_set_find(&ck, L1 "self_attn.q_proj.bias"));
	assert_non_null(ref_set_find(&ck, "visual.blocks.0.attn.qkv.weight"));
	ref_set_clear(&ck);
	close_model(&m);
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &q, &ck, &err), WT_OK);
	assert_true(q.hid == c.hid && q.I == c.I && q.eps == c.eps && q.theta == c.theta);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pass),         cmocka_unit_test(test_logits),
	    cmocka_unit_test(test_transformers), cmocka_unit_test(test_caught),
	    cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
