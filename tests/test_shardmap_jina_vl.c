/*
 * test_shardmap_jina_vl.c — jina-reranker-m0 (JinaVLForRanking, remote code; docs/format.md
 * section 2.7, jina-reranker-m0), cut as vLLM's jina_vl.py loads it: Qwen2-VL's language model
 * and vision tower, each rank byte for byte Qwen2VLForConditionalGeneration's (hand slices of
 * layer 1's attention and MLP at TP 2 and 4), the transformers 5.x names giving the same
 * shards, and the score head JinaVLScorer: score.0 (ColumnParallelLinear) weight and bias by
 * rows, score.2 (RowParallelLinear) by columns, its bias whole, never quantized (int8-channel
 * TP 2, fp8-channel TP 4); coverage at TP 1, 2, 4, 8; one label whatever config.json says;
 * the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x31a7ull
#include "test_shardmap_fx.h"
#include "test_shardmap_vl_tower.h"

/* LM: hid 128, H 8, KV 2, d 16, I 256, V 256, L 2. Vision: depth 2, embed 64, heads 8,
 * mlp 256, merger 256 (merge 2), patch embed [64, 3, 2, 2, 2]. */
#define HID 128
#define I   256
#define VE  64
#define VM  256

#define VISION_CFG                                                                                 \
	"\"vision_config\":{\"depth\":2,\"embed_dim\":64,\"num_heads\":8,\"mlp_ratio\":4,"         \
	"\"hidden_size\":128,\"patch_size\":2,\"temporal_patch_size\":2,\"spatial_merge_size\":2," \
	"\"in_chans\":3}"
#define LM_KEYS                                                                                    \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":256,\"vocab_size\":256,\"num_hidden_layers\":2"
#define CFG_A(arch, rest)                                                                          \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"qwen2_vl\"," LM_KEYS                   \
	",\"tie_word_embeddings\":true,\"rope_scaling\":{\"type\":\"mrope\",\"mrope_section\":"    \
	"[2,3,3]}," VISION_CFG rest "}"
#define JINA CFG_A("JinaVLForRanking", "")
#define QVL  CFG_A("Qwen2VLForConditionalGeneration", "")
/* the 5.x layout: the language model's keys (the tie too) in text_config */
#define JINA5                                                                                      \
	"{\"architectures\":[\"JinaVLForRanking\"],\"model_type\":\"qwen2_vl\","                   \
	"\"text_config\":{\"tie_word_embeddings\":true," LM_KEYS                                   \
	",\"model_type\":\"qwen2_vl_text\",\"rope_parameters\":{\"rope_type\":\"default\","        \
	"\"mrope_section\":[2,3,3]}}," VISION_CFG "}"

/* Checkpoint name of the 4.x name c (5.x: model.language_model.*, model.visual.*). */
static void add(tm_model *m, bool hf5, const char *c, int64_t a, int64_t b)
{
	char n[200];
	if (hf5 && strncmp(c, "model.", 6) == 0)
		snprintf(n, sizeof(n), "model.language_model.%s", c + 6);
	else if (hf5 && strncmp(c, "visual.", 7) == 0)
		snprintf(n, sizeof(n), "model.visual.%s", c + 7);
	else
		snprintf(n, sizeof(n), "%s", c);
	tm_add2(m, n, a, b);
}

/* Qwen2-VL's vision tower (test_shardmap_vl_tower.h) in this test's layout. */
static void add_lay(tm_model *m, int layout, const char *c, int64_t a, int64_t b)
{
	add(m, (bool)layout, c, a, b);
}

static void add_vision(tm_model *m, bool hf5)
{
	vl_add_tower(m, (int)hf5, add_lay, VE, VM, HID);
}

/* Qwen2-VL (tied: no lm_head) and the score head of `labels` outputs (none when 0; no score.0
 * bias when !b0), in the 4.x or 5.x names. */
static tm_model *jvl_model(int labels, bool b0, bool hf5)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add(m, hf5, "model.embed_tokens.weight", 256, HID);
	add(m, hf5, "model.norm.weight", HID, 0);
	static const char *const lm[] = {
	    "input_layernorm.weight",  "post_attention_layernorm.weight",
	    "self_attn.q_proj.weight", "self_attn.k_proj.weight",
	    "self_attn.v_proj.weight", "self_attn.o_proj.weight",
	    "self_attn.q_proj.bias",   "self_attn.k_proj.bias",
	    "self_attn.v_proj.bias",   "mlp.gate_proj.weight",
	    "mlp.up_proj.weight",      "mlp.down_proj.weight"};
	static const int64_t sh[][2] = {{HID, 0},  {HID, 0},   {128, HID}, {32, HID},
	                                {32, HID}, {HID, 128}, {128, 0},   {32, 0},
	                                {32, 0},   {I, HID},   {I, HID},   {HID, I}};
	for (int l = 0; l < 2; l++)
		for (size_t k = 0; k < sizeof(lm) / sizeof(lm[0]); k++) {
			char b[200];
			snprintf(b, sizeof(b), "model.layers.%d.%s", l, lm[k]);
			add(m, hf5, b, sh[k][0], sh[k][1]);
		}
	add_vision(m, hf5);
	if (labels > 0) {
		tm_add2(m, "score.0.weight", HID, HID);
		if (b0)
			tm_add2(m, "score.0.bias", HID, 0);
		tm_add2(m, "score.2.weight", labels, HID);
		tm_add2(m, "score.2.bias", labels, 0);
	}
	return m;
}

#define L1 "model.layers.1."

/* Rank r of T: layer 1's q/k/v rows and o_proj columns, gate_up rows and down_proj columns by
 * hand; score.0's rows and bias rows, score.2's columns, score.2.bias whole. */
static void hand_slices(const fx *f, uint32_t T, uint32_t r)
{
	fx_attn_is(f, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, 16, HID);
	fx_qkv_is(f, r, T, L1 "self_attn.qkv_proj.bias", L1 "self_attn.q_proj.bias",
	          L1 "self_attn.k_proj.bias", L1 "self_attn.v_proj.bias", 8, 2, 16);
	fx_mlp_is(f, r, T, L1 "mlp.", I, HID);
	int64_t n = HID / T;
	shp(f, r, "score.0.weight", 2, n, HID, 0);
	rows_at(f, r, "score.0.weight", 0, "score.0.weight", r * n, n);
	rows_at(f, r, "score.0.bias", 0, "score.0.bias", r * n, n);
	cols_of(f, r, T, "score.2.weight", "score.2.weight", 1, HID);
	repl(f, r, "score.2.bias");
	repl(f, r, "model.norm.weight");
}

/* Every tensor of Qwen2-VL b's rank r is a's, byte for byte; a has the score head's four
 * besides. */
static void qvl_is_inside(const fx *a, const fx *b, uint32_t r)
{
	size_t nb = shardmap_rank_n_tensors(b->p, r);
	for (size_t i = 0; i < nb; i++) {
		const sm_out_info *u = shardmap_rank_tensor(b->p, r, i);
		assert_int_equal(info(a, r, u->name)->nbytes, u->nbytes);
		if (memcmp(out_bytes(a, r, u->name), b->pr->b[r][i], u->nbytes) != 0)
			fail_msg("rank %u '%s' differs from Qwen2-VL's", r, u->name);
	}
	assert_int_equal(shardmap_rank_n_tensors(a->p, r), nb + 4);
}

static void test_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx c, b;
		fx_open(&c, jvl_model(1, true, false), JINA, tps[i], 1, 0, true);
		fx_open(&b, jvl_model(0, true, false), QVL, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++) {
			hand_slices(&c, tps[i], r);
			qvl_is_inside(&c, &b, r);
		}
		fx_close(&c);
		fx_close(&b);
	}
}

/* transformers 5.x names (model.language_model.*, model.visual.*) give the same shards; a
 * num_labels / id2label in config.json does not change the one label; the family found. */
static void test_layouts(void **state)
{
	(void)state;
	fx a, b, c;
	fx_open(&a, jvl_model(1, true, false), JINA, 2, 1, 0, true);
	fx_open(&b, jvl_model(1, true, true), JINA5, 2, 1, 0, true);
	fx_open(
	    &c, jvl_model(1, true, false),
	    CFG_A("JinaVLForRanking", ",\"num_labels\":2,\"id2label\":{\"0\":\"a\",\"1\":\"b\"}"),
	    2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_same_rank(&a, &b, r, NULL);
		fx_same_rank(&a, &c, r, NULL);
	}
	assert_int_equal(shardmap_n_skipped(a.p), 0);
	assert_string_equal(shardmap_family_find("JinaVLForRanking", NULL)->name, "jina_vl");
	fx_close(&a);
	fx_close(&b);
	fx_close(&c);
}

/* int8-channel TP 2: the score head kept BF16 (JinaVLScorer is built without the quant
 * config), qkv / o / down quantized (o_proj's codes column by column); fp8-channel TP 4 the
 * same split. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, jvl_model(1, true, false), JINA, &l, true);
	static const char *const keep[] = {"model.embed_tokens.weight", "score.0.weight",
	                                   "score.0.bias", "score.2.weight", "score.2.bias"};
	static const char *const q8[] = {L1 "self_attn.qkv_proj.weight",
	                                 L1 "self_attn.o_proj.weight", L1 "mlp.down_proj.weight"};
	for (uint32_t r = 0; r < 2; r++) {
		fx_quant_split(&f, r, WT_BF16, keep, 5, q8, 3);
		fx_cols_int8_is(&f, r, 2, L1 "self_attn.o_proj.weight", HID, 128);
		rows_at(&f, r, "score.0.weight", 0, "score.0.weight", r * HID / 2, HID / 2);
	}
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, jvl_model(1, true, false), JINA, &l, true);
	assert_int_equal(info(&f, 3, L1 "self_attn.qkv_proj.weight")->dtype, WT_F8_E4M3);
	static const char *const head[] = {"score.0.weight", "score.0.bias", "score.2.weight",
	                                   "score.2.bias"};
	for (size_t k = 0; k < 4; k++)
		assert_int_equal(info(&f, 3, head[k])->dtype, WT_BF16);
	cols_of(&f, 3, 4, "score.2.weight", "score.2.weight", 1, HID);
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(jvl_model(1, true, false), JINA, 2, lays, 4);
}

/* One label (vLLM's JinaVLForSequenceClassificationConfig sets hf_config.num_labels = 1)
 * whatever config.json says. */
static void test_defaults(void **state)
{
	(void)state;
	static const char *const cases[] = {
	    JINA,
	    CFG_A("JinaVLForRanking", ",\"num_labels\":3"),
	    CFG_A("JinaVLForRanking", ",\"id2label\":{\"0\":\"a\",\"1\":\"b\"}"),
	    JINA5,
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		ckpt_config c;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(cases[k], strlen(cases[k]), &c, &err), WT_OK);
		assert_int_equal(c.rob_num_labels, 1);
		assert_false(c.cls_from_token);
		ckpt_config_clear(&c);
	}
}

static void test_errors(void **state)
{
	(void)state;
	/* score.2's rows other than the one label; score.0's bias missing; no head; a
	 * single-Linear score.weight is not this head's */
	fx_refused(jvl_model(2, true, false), JINA, WT_ESHAPE, "score.2.", "implies [1");
	fx_refused(jvl_model(1, false, false), JINA, WT_ENOTFOUND, "score.0.bias", "");
	fx_refused(jvl_model(0, true, false), JINA, WT_ENOTFOUND, "score.", "");
	tm_model *m = jvl_model(1, true, false);
	tm_add2(m, "score.weight", 1, HID);
	fx_refused(m, JINA, WT_EUNSUPPORTED, "score.weight", "unknown tensor");
	/* Qwen2-VL's own: mrope_section must sum to head_dim / 2 */
	fx_refused(jvl_model(1, true, false),
	           "{\"architectures\":[\"JinaVLForRanking\"],\"model_type\":\"qwen2_vl\"," LM_KEYS
	           ",\"tie_word_embeddings\":true,\"rope_scaling\":{\"type\":\"mrope\","
	           "\"mrope_section\":[2,3,4]}," VISION_CFG "}",
	           WT_ECORRUPT, "mrope_section", "head_dim/2");
	/* untied without lm_head.weight: Qwen2-VL's language model needs it */
	fx_refused(jvl_model(1, true, false),
	           CFG_A("JinaVLForRanking", ",\"text_config\":{\"tie_word_embeddings\":false}"),
	           WT_ENOTFOUND, "lm_head", "");
	/* heads: 8 do not split 16 ways */
	fx_refused_tp(jvl_model(1, true, false), JINA, 16, WT_ELAYOUT, "tp_size 16", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slices),   cmocka_unit_test(test_layouts),
	    cmocka_unit_test(test_quant),    cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_defaults), cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
