/*
 * test_shardmap_clip.c — CLIPModel (docs/format.md section 2.7, CLIP), cut as vLLM's clip.py
 * CLIPEmbeddingModel loads it: the text tower's token and position tables by rows of the padded
 * vocabulary (VocabParallelEmbedding, both), its layers' q/k/v fused by heads, out_proj / fc2
 * columns, fc1 rows (hand slices at TP 2 and 4), the CLIP vision tower whole (every block and
 * post_layernorm) cut as LLaVA's, text_projection / visual_projection whole and never quantized,
 * logit_scale and the position_ids buffer skipped; int8-channel / fp8-channel; coverage at TP
 * 1, 2, 4, 8; CLIPTextConfig's defaults and CLIPConfig's own projection_dim; the refusals. Seed
 * fixed.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernels/kernels.h"
#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0xc11bull
#include "test_shardmap_fx.h"

#define HID  128
#define I    256
#define V    1000
#define POS  77
#define VE   64
#define VI   128
#define PROJ 96

#define TEXT_H(h, rest)                                                                            \
	"\"text_config\":{\"hidden_size\":128,\"intermediate_size\":256,\"num_attention_"          \
	"heads\":" h ",\"num_hidden_layers\":2,\"vocab_size\":1000" rest "}"
#define TEXT(rest) TEXT_H("8", rest)
#define VISION                                                                                     \
	"\"vision_config\":{\"hidden_size\":64,\"intermediate_size\":128,\"num_attention_heads\":" \
	"8,"                                                                                       \
	"\"num_hidden_layers\":2,\"image_size\":4,\"patch_size\":2}"
#define CFG_WITH(top, text, vision)                                                                \
	"{\"architectures\":[\"CLIPModel\"],\"model_type\":\"clip\"" top "," text vision "}"
#define CFG CFG_WITH(",\"projection_dim\":96", TEXT(""), "," VISION)

#define TB "text_model.encoder.layers.%d."
#define VB "vision_model.encoder.layers.%d."

/* CLIPModel: the text tower (its position_ids buffer when ids), the vision tower, the
 * projections of proj rows, logit_scale. */
static tm_model *clip_model(int64_t proj, bool ids)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "text_model.embeddings.token_embedding.weight", V, HID);
	tm_add2(m, "text_model.embeddings.position_embedding.weight", POS, HID);
	if (ids)
		tm_add(m, "text_model.embeddings.position_ids", WT_I64, 2, 1, POS, 0);
	const fx_leaf block[] = {FX_VIT_BLOCK_LEAVES(HID, I)};
	for (int i = 0; i < 2; i++) {
		char p[100];
		snprintf(p, sizeof(p), TB, i);
		for (size_t k = 0; k < sizeof(block) / sizeof(block[0]); k++)
			mm_add_at(m, LAY_TEXT, p, block[k].leaf, block[k].n, block[k].k);
	}
	tm_add2(m, "text_model.final_layer_norm.weight", HID, 0);
	tm_add2(m, "text_model.final_layer_norm.bias", HID, 0);
	mm_add_vit_at(m, LAY_TEXT, "vision_model.", true, VE, VI, 5, 2);
	tm_add2(m, "text_projection.weight", proj, HID);
	tm_add2(m, "visual_projection.weight", proj, VE);
	tm_add(m, "logit_scale", WT_DTYPE_INVALID, 0, 0, 0, 0);
	return m;
}

/* Rank r's rows [r*per, (r+1)*per) of a vocabulary-parallel table of n rows: the real ones
 * (rows_at), then zeros. */
static void vocab_rows(const fx *f, uint32_t T, uint32_t r, const char *name, int64_t n,
                       int64_t per)
{
	shp(f, r, name, 2, per, HID, 0);
	int64_t lo = r * per, real = lo >= n ? 0 : (lo + per <= n ? per : n - lo);
	if (real > 0)
		rows_at(f, r, name, 0, name, lo, real);
	const uint8_t *b = out_bytes(f, r, name);
	for (int64_t k = real * HID * 2; k < per * HID * 2; k++)
		if (b[k] != 0)
			fail_msg("rank %u of %u '%s': padding row byte %lld is not zero", r, T,
			         name, (long long)k);
}

static void hand_slices(const fx *f, uint32_t T, uint32_t r)
{
	vocab_rows(f, T, r, "text_model.embeddings.token_embedding.weight", V, 1024 / T);
	vocab_rows(f, T, r, "text_model.embeddings.position_embedding.weight", POS, 128 / T);
	for (int i = 0; i < 2; i++) {
		fx_vit_block(f, T, r, TB, i, HID, I);
		fx_vit_block(f, T, r, VB, i, VE, VI);
	}
	static const char *const whole[] = {
	    "text_model.final_layer_norm.weight",
	    "text_model.final_layer_norm.bias",
	    "text_projection.weight",
	    "visual_projection.weight",
	    "vision_model.embeddings.class_embedding",
	    "vision_model.embeddings.patch_embedding.weight",
	    "vision_model.embeddings.position_embedding.weight",
	    "vision_model.pre_layrnorm.weight",
	    "vision_model.post_layernorm.bias",
	};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++)
		repl(f, r, whole[k]);
	shp(f, r, "text_projection.weight", 2, PROJ, HID, 0);
	shp(f, r, "visual_projection.weight", 2, PROJ, VE, 0);
}

static void test_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, clip_model(PROJ, true), CFG, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++) {
			hand_slices(&f, tps[i], r);
			assert_int_equal(shardmap_rank_n_tensors(f.p, r),
			                 2 + 2 * 12 + 2 + 7 + 2 * 12 + 2);
		}
		assert_int_equal(shardmap_n_skipped(f.p), 2);
		assert_true(fx_skipped(&f, "logit_scale"));
		assert_true(fx_skipped(&f, "text_model.embeddings.position_ids"));
		fx_close(&f);
	}
	assert_string_equal(shardmap_family_find("CLIPModel", NULL)->name, "clip");
}

/* int8-channel TP 2: both towers' Linears I8 (codes of text fc2 row by row), the tables,
 * norms, biases and both projections kept BF16 without a scale. fp8-channel TP 4: the same
 * split. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, clip_model(PROJ, false), CFG, &l, true);
	static const char *const keep[] = {
	    "text_model.embeddings.token_embedding.weight",
	    "text_model.embeddings.position_embedding.weight",
	    "text_model.encoder.layers.1.self_attn.qkv_proj.bias",
	    "text_model.final_layer_norm.weight",
	    "text_projection.weight",
	    "visual_projection.weight",
	    "vision_model.embeddings.class_embedding",
	    "vision_model.embeddings.patch_embedding.weight",
	};
	static const char *const q8[] = {
	    "text_model.encoder.layers.1.self_attn.qkv_proj.weight",
	    "text_model.encoder.layers.1.self_attn.out_proj.weight",
	    "text_model.encoder.layers.1.mlp.fc1.weight",
	    "text_model.encoder.layers.1.mlp.fc2.weight",
	    "vision_model.encoder.layers.0.self_attn.qkv_proj.weight",
	    "vision_model.encoder.layers.0.mlp.fc2.weight",
	};
	const char *fc2 = "text_model.encoder.layers.1.mlp.fc2.weight";
	for (uint32_t r = 0; r < 2; r++) {
		fx_quant_split(&f, r, WT_BF16, keep, 8, q8, 6);
		const int8_t *q = (const int8_t *)out_bytes(&f, r, fc2);
		const float *sc = (const float *)out_bytes(
		    &f, r, "text_model.encoder.layers.1.mlp.fc2.weight_scale");
		size_t rb;
		const uint16_t *x = (const uint16_t *)src_rows(&f, fc2, 0, &rb);
		for (int64_t row = 0; row < HID; row++)
			int8_row_is(q + row * (I / 2), sc[row], x + row * I + r * (I / 2), I / 2);
	}
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, clip_model(PROJ, false), CFG, &l, true);
	assert_int_equal(info(&f, 3, "text_model.encoder.layers.0.mlp.fc1.weight")->dtype,
	                 WT_F8_E4M3);
	assert_int_equal(
	    info(&f, 3, "vision_model.encoder.layers.1.self_attn.out_proj.weight")->dtype,
	    WT_F8_E4M3);
	assert_int_equal(info(&f, 3, "text_projection.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 3, "visual_projection.weight")->dtype, WT_BF16);
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(clip_model(PROJ, true), CFG, 8, lays, 4);
}

/* CLIPTextConfig's defaults for absent text keys (an empty or absent text_config), CLIPConfig's
 * projection_dim 512, the top level's projection_dim over text_config's. */
static void test_defaults(void **state)
{
	(void)state;
	static const struct {
		const char *js;
		int64_t hid, heads, layers, vocab, inter, pos, proj;
	} cases[] = {
	    {CFG_WITH("", "\"text_config\":{}", ""), 512, 8, 12, 49408, 2048, 77, 512},
	    {"{\"architectures\":[\"CLIPModel\"],\"model_type\":\"clip\"}", 512, 8, 12, 49408, 2048,
	     77, 512},
	    {CFG_WITH(",\"projection_dim\":96",
	              TEXT(",\"projection_dim\":32,"
	                   "\"max_position_embeddings\":40"),
	              ""),
	     128, 8, 2, 1000, 256, 40, 96},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		ckpt_config c;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(cases[k].js, strlen(cases[k].js), &c, &err),
		                 WT_OK);
		assert_int_equal(c.hidden_size, cases[k].hid);
		assert_int_equal(c.num_attention_heads, cases[k].heads);
		assert_int_equal(c.num_key_value_heads, cases[k].heads);
		assert_int_equal(c.num_hidden_layers, cases[k].layers);
		assert_int_equal(c.vocab_size, cases[k].vocab);
		assert_int_equal(c.intermediate_size, cases[k].inter);
		assert_int_equal(c.rob_max_pos, cases[k].pos);
		assert_int_equal(c.rob_num_labels, cases[k].proj);
		ckpt_config_clear(&c);
	}
}

static void test_errors(void **state)
{
	(void)state;
	/* the projections' rows against projection_dim; one missing; a SigLIP head unknown */
	fx_refused(clip_model(PROJ, false),
	           CFG_WITH(",\"projection_dim\":32", TEXT(""), "," VISION), WT_ESHAPE,
	           "text_projection.weight", "implies [32");
	tm_model *m = clip_model(PROJ, false);
	m->n--; /* logit_scale */
	m->n--; /* visual_projection */
	free(m->data[m->n + 1]);
	free(m->data[m->n]);
	fx_refused(m, CFG, WT_ENOTFOUND, "visual_projection.weight", "");
	m = clip_model(PROJ, false);
	tm_add2(m, "text_model.head.weight", HID, HID);
	fx_refused(m, CFG, WT_EUNSUPPORTED, "text_model.head.weight", "unknown tensor");
	/* text heads not dividing the width; kv heads; head_dim; vision_config missing */
	fx_refused(clip_model(PROJ, false), CFG_WITH("", TEXT_H("6", ""), "," VISION), WT_ECORRUPT,
	           "text_config.num_attention_heads 6", "hidden_size 128");
	fx_refused(clip_model(PROJ, false),
	           CFG_WITH("", TEXT(",\"num_key_value_heads\":2"), "," VISION), WT_EUNSUPPORTED,
	           "num_key_value_heads 2", "remove the key");
	fx_refused(clip_model(PROJ, false), CFG_WITH("", TEXT(",\"head_dim\":32"), "," VISION),
	           WT_EUNSUPPORTED, "head_dim 32", "remove the key");
	fx_refused(clip_model(PROJ, false), CFG_WITH(",\"projection_dim\":96", TEXT(""), ""),
	           WT_ECORRUPT, "CLIPModel needs vision_config", "CLIP: ");
	/* heads: 8 do not split 16 ways */
	fx_refused_tp(clip_model(PROJ, false), CFG, 16, WT_ELAYOUT, "tp_size 16",
	              "num_attention_heads 8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slices),   cmocka_unit_test(test_quant),
	    cmocka_unit_test(test_coverage), cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
