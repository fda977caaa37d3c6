/*
 * test_reference_tarsier2.c — the reference forward pass over Tarsier2
 * (Tarsier2ForConditionalGeneration, vLLM's qwen2_vl.py): the qwen2_vl fixture saved as
 * Tarsier2's release lays it out (tensors under language_model.model., language_model.lm_head.,
 * vision_tower.; config.json a LLaVA config whose text_config is the fixture's Qwen2-VL
 * config). vLLM builds Qwen2VLForConditionalGeneration of text_config and loads the renamed
 * tensors into it, so: the full and sharded logits agree (TP 1, 2, 4; int8-channel TP 2,
 * fp8-channel TP 4), the full logits are Qwen2-VL's bit for bit (whose points test_reference
 * pins against transformers), and rank tensors broken the way a wrong planner would break them
 * are caught. Fixture from $WT_BUILD/wt-mkckpt --family qwen2_vl (hid 256, H 8, KV 2, d 32,
 * I 512, V 1024, 2 layers, untied; vision depth 2, 4 heads, so no TP 8), seed printed.
 */
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
#include "loader/loader_st.h"
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

#define FAM "qwen2_vl"
#define TS  "qwen2_vl_ts"
#define L1  "model.layers.1."

/* Tarsier2's name of Qwen2-VL's tensor name into b. */
static void ts_name(char *b, size_t n, const char *name)
{
	if (strncmp(name, "visual.", 7) == 0)
		snprintf(b, n, "vision_tower.%s", name + 7);
	else
		snprintf(b, n, "language_model.%s", name);
}

/* Tarsier2's config.json: the fixture's (Qwen2-VL's) as its text_config under the release's
 * top level. */
static char *ts_config(const char *text, size_t len)
{
	static const char head[] = "{\"architectures\": [\"Tarsier2ForConditionalGeneration\"], "
	                           "\"model_type\": \"llava\", \"torch_dtype\": \"bfloat16\", "
	                           "\"text_config\": ";
	char *json = malloc(sizeof(head) + len + 2);
	if (json != NULL) {
		memcpy(json, head, sizeof(head) - 1);
		memcpy(json + sizeof(head) - 1, text, len);
		memcpy(json + sizeof(head) - 1 + len, "}", 2);
	}
	return json;
}

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	int rv = gen_fixtures("reference_tarsier2", fams, 1);
	return rv == 0 ? write_renamed(FAM, TS, ts_name, ts_config) : rv;
}

static void test_tarsier2_pass(void **state)
{
	(void)state;
	expect_pass_tp(TS, false);
}

/* The full path's logits are Qwen2-VL's bit for bit. */
static void test_tarsier2_logits(void **state)
{
	(void)state;
	enum { V = 1024 };
	float *a = malloc(N_TOK * V * sizeof(float)), *b = malloc(N_TOK * V * sizeof(float));
	assert_true(a != NULL && b != NULL);
	ref_cfg ca, cb;
	full_logits(FAM, a, &ca);
	full_logits(TS, b, &cb);
	assert_int_equal(ca.V, V);
	assert_int_equal(cb.V, V);
	assert_memory_equal(a, b, N_TOK * V * sizeof(float));
	free(a);
	free(b);
}

/* (token, vocabulary entry, logit): transformers 4.57.1's Qwen2VLForConditionalGeneration
 * (torch 2.4.1 CPU, eager, float32) from_pretrained on text_config with the Tarsier2 checkpoint's
 * tensors renamed as vLLM's mapper places them (vision_tower. -> visual., language_model.model.
 * -> model., language_model.lm_head. -> lm_head.; no missing or unexpected keys), on g_tokens */
static const gold_pt gold_ts[] = {
    {0, 0, 1.367242485e-01f},     {0, 333, -6.651399285e-02f},  {0, 700, 1.836482286e-01f},
    {0, 1023, -6.984478235e-01f}, {1, 0, 3.729875088e-01f},     {1, 333, -4.175931215e-01f},
    {1, 700, 2.964408398e-01f},   {1, 1023, -4.668041766e-01f}, {2, 0, 3.872621357e-01f},
    {2, 333, -2.967946529e-01f},  {2, 700, 3.013396859e-01f},   {2, 1023, -3.915014565e-01f},
    {3, 0, 3.155163527e-01f},     {3, 333, -1.867413819e-01f},  {3, 700, 3.258991241e-01f},
    {3, 1023, -3.510414958e-01f}, {4, 0, 2.877203226e-01f},     {4, 333, -2.396190614e-01f},
    {4, 700, 2.784001231e-01f},   {4, 1023, -1.659948528e-01f}, {5, 0, 3.674023151e-01f},
    {5, 333, -9.952745587e-02f},  {5, 700, 4.074880481e-01f},   {5, 1023, -1.987693310e-01f},
    {6, 0, 4.739690721e-01f},     {6, 333, -1.887642890e-01f},  {6, 700, 4.088855386e-01f},
    {6, 1023, -1.541223526e-01f},
};

/* logits near 1: a few float32 ulps of the sums */
#define GOLD_TOL 1e-5

static void test_tarsier2_transformers(void **state)
{
	(void)state;
	expect_gold(TS, 1024, GOLD_TOL, gold_ts, sizeof(gold_ts) / sizeof(gold_ts[0]));
}

static void test_tarsier2_caught(void **state)
{
	(void)state;
	expect_swapped(TS, 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped(TS, 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_swapped(TS, 2, 1, "lm_head.weight", "lm_head rows exchanged");
	expect_zeroed(TS, 2, 1, 1, L1 "self_attn.qkv_proj.bias", "rank 1's q/k/v biases zeroed");
}

/* Read as Qwen2-VL: the same sizes, untied (lm_head read), the checkpoint's tensors under
 * Qwen2-VL's names. */
static void test_tarsier2_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c, q;
	wt_errbuf err = {0};
	open_model(&m, TS);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.H == 8 && c.KV == 2 && c.d == 32 && c.L == 2 &&
	            c.V == 1024);
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

/* vLLM builds the model of text_config alone: the top level's keys do not leak into it (here
 * an rms_norm_eps, rope_theta and linear rope_parameters text_config lacks; it has mrope):
 * read as the same text config read as Qwen2-VL. */
static void test_tarsier2_top_keys(void **state)
{
	(void)state;
#define TXT                                                                                        \
	"{\"architectures\":[\"Qwen2VLForConditionalGeneration\"],\"model_type\":\"qwen2_vl\","    \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":512,\"vocab_size\":1024,\"num_hidden_layers\":2,"                   \
	"\"rope_scaling\":{\"type\":\"mrope\",\"mrope_section\":[4,6,6]},\"vision_config\":"       \
	"{\"depth\":2,\"embed_dim\":128,\"num_heads\":4}}"
	static const char ts[] =
	    "{\"architectures\":[\"Tarsier2ForConditionalGeneration\"],"
	    "\"model_type\":\"llava\",\"rms_norm_eps\":0.01,\"rope_theta\":10.0,"
	    "\"rope_parameters\":{\"rope_type\":\"linear\",\"factor\":4.0},"
	    "\"text_config\":" TXT "}";
	ref_cfg a, b;
	wt_errbuf err = {0};
	assert_int_equal(ref_cfg_parse_json(TXT, strlen(TXT), &a, &err), WT_OK);
	assert_int_equal(ref_cfg_parse_json(ts, strlen(ts), &b, &err), WT_OK);
	print_message("eps %g / %g, theta %g / %g, rope_factor %g / %g\n", a.eps, b.eps, a.theta,
	              b.theta, a.rope_factor[0], b.rope_factor[0]);
	assert_true(a.rope_factor[0] == 0);
	assert_true(b.eps == a.eps && b.theta == a.theta && b.rope_factor[0] == a.rope_factor[0]);
#undef TXT
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tarsier2_pass),         cmocka_unit_test(test_tarsier2_logits),
	    cmocka_unit_test(test_tarsier2_transformers), cmocka_unit_test(test_tarsier2_caught),
	    cmocka_unit_test(test_tarsier2_config),       cmocka_unit_test(test_tarsier2_top_keys),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
