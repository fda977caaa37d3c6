/*
 * test_config_qwen2vl.c — Qwen2-VL's and Qwen2.5-VL's config class defaults
 * (loader/config_defaults_vl.c) for every model the qwen2_vl / qwen2_5_vl families serve:
 * Qwen2VLForConditionalGeneration and Qwen2_5_VLForConditionalGeneration in the flat
 * (transformers < 4.52) and nested text_config (>= 4.52) forms, JinaVLForRanking (model_type
 * qwen2_vl) and Tarsier2 (a LLaVA config whose text_config is a Qwen2-VL config). Each case reads
 * the planner's view (ckpt_config_parse), the loader's field reader (ckpt_config_fields) and the
 * reference's configuration (ref_cfg_parse_json). The numbers are transformers 4.57.1's: each
 * case's config.json was built with Qwen2VLConfig / Qwen2_5_VLConfig / LlavaConfig.from_dict
 * once and the text and vision configs' values pinned here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/ckpt.h"
#include "reference/reference_int.h"

/* One case's expected language-model values (transformers 4.57.1's text config). */
typedef struct lm_want {
	int64_t vocab, hid, inter, layers, heads, kv, max_pos;
	double eps, theta;
} lm_want;

/* Qwen2VLTextConfig's defaults (the same Qwen2_5_VLTextConfig's) */
static const lm_want CLASS_LM = {152064, 8192, 29568, 80, 64, 8, 32768, 1e-5, 1000000.0};

static void check_lm(const char *js, lm_want w)
{
	ckpt_config c;
	wt_errbuf err = {0};
	if (ckpt_config_parse(js, strlen(js), &c, &err) != WT_OK)
		fail_msg("%s: %s", js, err.msg);
	assert_int_equal(c.vocab_size, w.vocab);
	assert_int_equal(c.hidden_size, w.hid);
	assert_int_equal(c.intermediate_size, w.inter);
	assert_int_equal(c.num_hidden_layers, w.layers);
	assert_int_equal(c.num_attention_heads, w.heads);
	assert_int_equal(c.num_key_value_heads, w.kv);
	assert_int_equal(c.head_dim, w.hid / w.heads);
	assert_false(c.tie_given); /* Qwen2VLTextConfig's false is the family's tie_default */
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
	ckpt_field f[] = {{"rms_norm_eps", CKPT_FIELD_REAL},
	                  {"rope_theta", CKPT_FIELD_REAL},
	                  {"max_position_embeddings", CKPT_FIELD_INT}};
	assert_int_equal(ckpt_config_fields(js, strlen(js), f, 3, &err), WT_OK);
	assert_true(f[0].present && f[0].r == w.eps);
	assert_true(f[1].present && f[1].r == w.theta);
	assert_true(f[2].present && f[2].i == w.max_pos);
	/* the reference reads the same */
	ref_cfg r;
	if (ref_cfg_parse_json(js, strlen(js), &r, &err) != WT_OK)
		fail_msg("%s: reference: %s", js, err.msg);
	assert_true(r.eps == w.eps);
	assert_true(r.theta == w.theta);
	assert_int_equal(r.hid, w.hid);
	assert_int_equal(r.H, w.heads);
	assert_int_equal(r.KV, w.kv);
	assert_int_equal(r.L, w.layers);
	assert_int_equal(r.V, w.vocab);
	assert_int_equal(r.I, w.inter);
	assert_false(r.tied);
}

/* The vision config's values (-1: the key is not the class's). */
typedef struct vis_want {
	int64_t depth, embed, hid, inter, heads, out;
} vis_want;

static const vis_want QVL_VIS = {32, 1280, 3584, -1, 16, -1};
static const vis_want QVL25_VIS = {32, -1, 3584, 3420, 16, 3584};

static void check_vision(const char *js, vis_want w)
{
	ckpt_config c;
	wt_errbuf err = {0};
	if (ckpt_config_parse(js, strlen(js), &c, &err) != WT_OK)
		fail_msg("%s: %s", js, err.msg);
	assert_true(c.has_vision);
	assert_int_equal(c.v_depth, w.depth);
	assert_int_equal(c.v_embed_dim, w.embed);
	assert_int_equal(c.v_hidden_size, w.hid);
	assert_int_equal(c.v_intermediate_size, w.inter);
	assert_int_equal(c.v_num_heads, w.heads);
	assert_int_equal(c.v_out_hidden_size, w.out);
	assert_true(c.v_mlp_ratio == 4.0);
	assert_int_equal(c.v_patch_size, 14);
	assert_int_equal(c.v_temporal_patch_size, 2);
	assert_int_equal(c.v_spatial_merge_size, 2);
	assert_int_equal(c.v_in_chans, 3);
	ckpt_config_clear(&c);
}

#define QVL "\"architectures\":[\"Qwen2VLForConditionalGeneration\"],\"model_type\":\"qwen2_vl\""
#define QVL25                                                                                      \
	"\"architectures\":[\"Qwen2_5_VLForConditionalGeneration\"],\"model_type\":\"qwen2_5_vl\""

/* A flat config.json with every key left out: the text and vision classes' defaults. */
static void test_flat(void **state)
{
	(void)state;
	static const char qvl[] = "{" QVL "}", qvl25[] = "{" QVL25 "}";
	check_lm(qvl, CLASS_LM);
	check_vision(qvl, QVL_VIS);
	check_lm(qvl25, CLASS_LM);
	check_vision(qvl25, QVL25_VIS);
	/* vision_config null is the class's whole default too */
	check_vision("{" QVL ",\"vision_config\":null}", QVL_VIS);
	/* jina-reranker-m0: Qwen2VLConfig's */
	check_lm("{\"architectures\":[\"JinaVLForRanking\"],\"model_type\":\"qwen2_vl\"}",
	         CLASS_LM);
}

/* transformers >= 4.52's nesting: text_config's keys, the rest its class's. */
static void test_nested(void **state)
{
	(void)state;
	static const char qvl[] = "{" QVL ",\"text_config\":{\"model_type\":\"qwen2_vl_text\","
	                          "\"hidden_size\":256},\"vision_config\":{\"depth\":2}}";
	lm_want w = CLASS_LM;
	w.hid = 256;
	check_lm(qvl, w);
	vis_want v = QVL_VIS;
	v.depth = 2;
	check_vision(qvl, v);
	static const char qvl25[] =
	    "{" QVL25 ",\"text_config\":{\"model_type\":\"qwen2_5_vl_text\","
	    "\"num_hidden_layers\":3},\"vision_config\":{\"hidden_size\":256}}";
	w = CLASS_LM;
	w.layers = 3;
	check_lm(qvl25, w);
	v = QVL25_VIS;
	v.hid = 256;
	check_vision(qvl25, v);
}

/* Explicit values win; an explicit null num_key_value_heads is num_attention_heads (the
 * class's 64 when that is absent too), as Qwen2VLTextConfig sets it. */
static void test_explicit_and_null(void **state)
{
	(void)state;
	static const char ex[] = "{" QVL ",\"rms_norm_eps\":1e-6,\"rope_theta\":10000.0,"
	                         "\"vision_config\":{\"embed_dim\":32,\"num_heads\":2}}";
	lm_want w = CLASS_LM;
	w.eps = 1e-6;
	w.theta = 10000.0;
	check_lm(ex, w);
	vis_want v = QVL_VIS;
	v.embed = 32;
	v.heads = 2;
	check_vision(ex, v);
	w = CLASS_LM;
	w.heads = w.kv = 12;
	check_lm("{" QVL ",\"num_attention_heads\":12,\"num_key_value_heads\":null}", w);
	w = CLASS_LM;
	w.kv = 64;
	check_lm("{" QVL ",\"num_key_value_heads\":null}", w);
	/* a vision_config that is not an object is still refused, naming it */
	ckpt_config c;
	wt_errbuf err = {0};
	static const char bad[] = "{" QVL ",\"vision_config\":3}";
	assert_int_equal(ckpt_config_parse(bad, strlen(bad), &c, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "'vision_config' is not an object"));
}

/* Tarsier2: LlavaConfig builds its text_config (model_type qwen2_vl) as a Qwen2VLConfig, whose
 * defaults fill what it leaves out (vLLM builds the model of that text_config). */
static void test_tarsier2(void **state)
{
	(void)state;
	static const char t2[] = "{\"architectures\":[\"Tarsier2ForConditionalGeneration\"],"
	                         "\"model_type\":\"llava\",\"text_config\":{\"model_type\":"
	                         "\"qwen2_vl\",\"hidden_size\":128}}";
	lm_want w = CLASS_LM;
	w.hid = 128;
	check_lm(t2, w);
	check_vision(t2, QVL_VIS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flat),
	    cmocka_unit_test(test_nested),
	    cmocka_unit_test(test_explicit_and_null),
	    cmocka_unit_test(test_tarsier2),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
