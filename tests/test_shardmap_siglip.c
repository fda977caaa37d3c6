/*
 * test_shardmap_siglip.c — SiglipModel (docs/format.md section 2.7, SigLIP), cut as vLLM's
 * siglip.py SiglipEmbeddingModel loads it: the text tower as CLIP's (token and position tables
 * by rows of the padded vocabulary, q/k/v fused by heads, out_proj / fc2 columns, fc1 rows: hand
 * slices at TP 2 and 4) with text_model.head whole and never quantized, the SigLIP vision tower
 * whole (every block and post_layernorm) cut as Gemma 3's, its attention-pooling head (probe,
 * the torch MultiheadAttention and layernorm whole, its MLP fc1 rows / fc2 columns),
 * logit_scale / logit_bias and the position_ids buffers skipped; int8-channel / fp8-channel with
 * SiglipMLP's quantizable rule (fc1 / fc2 quantized only where both sizes are multiples of 64);
 * coverage at TP 1, 2, 4, 8; SiglipTextConfig's defaults; the refusals. Seed fixed.
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

#define SEED 0x516cull
#include "test_shardmap_fx.h"

#define HID  128
#define I    256
#define V    1000
#define POS  64
#define VE   64
#define VI   128
#define PROJ 96

#define TEXT_D(hid, inter, h, rest)                                                                \
	"\"text_config\":{\"hidden_size\":" hid ",\"intermediate_size\":" inter                    \
	",\"num_attention_heads\":" h ",\"num_hidden_layers\":2,\"vocab_size\":1000" rest "}"
#define TEXT_H(h, rest) TEXT_D("128", "256", h, rest)
#define TEXT(rest)      TEXT_H("8", rest)
#define VISION_I(vi, rest)                                                                         \
	"\"vision_config\":{\"hidden_size\":64,\"intermediate_size\":" vi                          \
	",\"num_attention_heads\":8,\"num_hidden_layers\":2,\"image_size\":4,\"patch_size\":"      \
	"2" rest "}"
#define VISION VISION_I("128", "")
#define CFG_WITH(text, vision)                                                                     \
	"{\"architectures\":[\"SiglipModel\"],\"model_type\":\"siglip\"," text vision "}"
#define CFG CFG_WITH(TEXT(",\"projection_size\":96"), "," VISION)

#define TB "text_model.encoder.layers.%d."
#define VB "vision_model.encoder.layers.%d."
#define PH "vision_model.head."

/* SiglipModel: the text tower of width hid, MLP inter (its position_ids buffer when ids), its
 * head of proj rows, the vision tower of MLP vi with its pooling head, logit_scale and
 * logit_bias. */
static tm_model *siglip_dims(int64_t hid, int64_t inter, int64_t vi, int64_t proj, bool ids)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "text_model.embeddings.token_embedding.weight", V, hid);
	tm_add2(m, "text_model.embeddings.position_embedding.weight", POS, hid);
	if (ids)
		tm_add(m, "text_model.embeddings.position_ids", WT_I64, 2, 1, POS, 0);
	const fx_leaf block[] = {FX_VIT_BLOCK_LEAVES(hid, inter)};
	for (int i = 0; i < 2; i++) {
		char p[100];
		snprintf(p, sizeof(p), TB, i);
		for (size_t k = 0; k < sizeof(block) / sizeof(block[0]); k++)
			mm_add_at(m, LAY_TEXT, p, block[k].leaf, block[k].n, block[k].k);
	}
	tm_add2(m, "text_model.final_layer_norm.weight", hid, 0);
	tm_add2(m, "text_model.final_layer_norm.bias", hid, 0);
	tm_add2(m, "text_model.head.weight", proj, hid);
	tm_add2(m, "text_model.head.bias", proj, 0);
	mm_add_vit_at(m, LAY_TEXT, "vision_model.", false, VE, vi, 4, 2);
	fx_add_siglip_head(m, PH, VE, vi);
	tm_add2(m, "logit_bias", 1, 0);
	tm_add2(m, "logit_scale", 1, 0);
	return m;
}

static tm_model *siglip_model(int64_t proj, bool ids)
{
	return siglip_dims(HID, I, VI, proj, ids);
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
	vocab_rows(f, T, r, "text_model.embeddings.position_embedding.weight", POS, 64 / T);
	for (int i = 0; i < 2; i++) {
		fx_vit_block(f, T, r, TB, i, HID, I);
		fx_vit_block(f, T, r, VB, i, VE, VI);
	}
	static const char *const whole[] = {
	    "text_model.final_layer_norm.weight",
	    "text_model.final_layer_norm.bias",
	    "text_model.head.weight",
	    "text_model.head.bias",
	    "vision_model.embeddings.patch_embedding.weight",
	    "vision_model.embeddings.patch_embedding.bias",
	    "vision_model.embeddings.position_embedding.weight",
	    "vision_model.post_layernorm.weight",
	    "vision_model.post_layernorm.bias",
	};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++)
		repl(f, r, whole[k]);
	shp(f, r, "text_model.head.weight", 2, PROJ, HID, 0);
	shp(f, r, "text_model.head.bias", 1, PROJ, 0, 0);
	fx_siglip_head_is(f, T, r, PH, VE, VI);
}

static void test_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, siglip_model(PROJ, true), CFG, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++) {
			hand_slices(&f, tps[i], r);
			assert_int_equal(shardmap_rank_n_tensors(f.p, r),
			                 2 + 2 * 12 + 2 + 2 + 3 + 2 * 12 + 2 + 11);
		}
		assert_int_equal(shardmap_n_skipped(f.p), 3);
		assert_true(fx_skipped(&f, "logit_scale"));
		assert_true(fx_skipped(&f, "logit_bias"));
		assert_true(fx_skipped(&f, "text_model.embeddings.position_ids"));
		fx_close(&f);
	}
	assert_string_equal(shardmap_family_find("SiglipModel", NULL)->name, "siglip");
}

/* int8-channel TP 2: both towers' Linears and the pooling head's MLP I8 (codes of text fc2 row
 * by row), the tables, norms, biases, the text head and the head's MultiheadAttention BF16
 * without a scale. fp8-channel TP 4: the same split. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, siglip_model(PROJ, false), CFG, &l, true);
	static const char *const keep[] = {
	    "text_model.embeddings.token_embedding.weight",
	    "text_model.embeddings.position_embedding.weight",
	    "text_model.encoder.layers.1.self_attn.qkv_proj.bias",
	    "text_model.final_layer_norm.weight",
	    "text_model.head.weight",
	    "text_model.head.bias",
	    "vision_model.embeddings.patch_embedding.weight",
	    PH "probe",
	    PH "attention.in_proj_weight",
	    PH "attention.out_proj.weight",
	    PH "mlp.fc1.bias",
	};
	static const char *const q8[] = {
	    "text_model.encoder.layers.1.self_attn.qkv_proj.weight",
	    "text_model.encoder.layers.1.self_attn.out_proj.weight",
	    "text_model.encoder.layers.1.mlp.fc1.weight",
	    "text_model.encoder.layers.1.mlp.fc2.weight",
	    "vision_model.encoder.layers.0.self_attn.qkv_proj.weight",
	    "vision_model.encoder.layers.0.mlp.fc2.weight",
	    PH "mlp.fc1.weight",
	    PH "mlp.fc2.weight",
	};
	const char *fc2 = "text_model.encoder.layers.1.mlp.fc2.weight";
	for (uint32_t r = 0; r < 2; r++) {
		fx_quant_split(&f, r, WT_BF16, keep, 11, q8, 8);
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
	fx_open_l(&f, siglip_model(PROJ, false), CFG, &l, true);
	assert_int_equal(info(&f, 3, "text_model.encoder.layers.0.mlp.fc1.weight")->dtype,
	                 WT_F8_E4M3);
	assert_int_equal(
	    info(&f, 3, "vision_model.encoder.layers.1.self_attn.out_proj.weight")->dtype,
	    WT_F8_E4M3);
	assert_int_equal(info(&f, 3, PH "mlp.fc2.weight")->dtype, WT_F8_E4M3);
	assert_int_equal(info(&f, 3, "text_model.head.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 3, PH "attention.in_proj_weight")->dtype, WT_BF16);
	fx_close(&f);
}

/* SiglipMLP's quantizable: a text MLP of 96 / 192 (not multiples of 64) keeps its fc1 / fc2
 * BF16 while attention is I8 and the vision MLPs too; a vision MLP of 96 keeps every vision
 * fc1 / fc2 (the blocks' and the pooling head's) BF16 while the text MLP is I8. */
static void test_quantizable(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, siglip_dims(96, 192, VI, 96, false),
	          CFG_WITH(TEXT_D("96", "192", "4", ""), "," VISION), &l, true);
	static const char *const tk[] = {
	    "text_model.encoder.layers.0.mlp.fc1.weight",
	    "text_model.encoder.layers.1.mlp.fc2.weight",
	};
	static const char *const tq[] = {
	    "text_model.encoder.layers.0.self_attn.qkv_proj.weight",
	    "text_model.encoder.layers.0.self_attn.out_proj.weight",
	    "vision_model.encoder.layers.1.mlp.fc1.weight",
	    PH "mlp.fc2.weight",
	};
	for (uint32_t r = 0; r < 2; r++)
		fx_quant_split(&f, r, WT_BF16, tk, 2, tq, 4);
	fx_close(&f);
	fx_open_l(&f, siglip_dims(HID, I, 96, PROJ, false),
	          CFG_WITH(TEXT(",\"projection_size\":96"), "," VISION_I("96", "")), &l, true);
	static const char *const vk[] = {
	    "vision_model.encoder.layers.0.mlp.fc1.weight",
	    "vision_model.encoder.layers.1.mlp.fc2.weight",
	    PH "mlp.fc1.weight",
	    PH "mlp.fc2.weight",
	};
	static const char *const vq[] = {
	    "text_model.encoder.layers.0.mlp.fc1.weight",
	    "text_model.encoder.layers.1.mlp.fc2.weight",
	    "vision_model.encoder.layers.0.self_attn.qkv_proj.weight",
	};
	for (uint32_t r = 0; r < 2; r++)
		fx_quant_split(&f, r, WT_BF16, vk, 4, vq, 3);
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(siglip_model(PROJ, true), CFG, 8, lays, 4);
}

/* SiglipTextConfig's defaults for absent text keys (an empty or absent text_config):
 * projection_size hidden_size, max_position_embeddings 64; given ones read. */
static void test_defaults(void **state)
{
	(void)state;
	static const struct {
		const char *js;
		int64_t hid, heads, layers, vocab, inter, pos, proj;
	} cases[] = {
	    {CFG_WITH("\"text_config\":{}", ""), 768, 12, 12, 32000, 3072, 64, 768},
	    {"{\"architectures\":[\"SiglipModel\"],\"model_type\":\"siglip\"}", 768, 12, 12, 32000,
	     3072, 64, 768},
	    {CFG_WITH(TEXT(",\"projection_size\":null"), ""), 128, 8, 2, 1000, 256, 64, 128},
	    {CFG_WITH(TEXT(",\"projection_size\":32,\"max_position_embeddings\":40"), ""), 128, 8,
	     2, 1000, 256, 40, 32},
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
	/* the head's rows against projection_size; the pooling head missing; CLIP's projection */
	fx_refused(siglip_model(PROJ, false), CFG_WITH(TEXT(",\"projection_size\":32"), "," VISION),
	           WT_ESHAPE, "text_model.head.bias", "implies [32");
	tm_model *m = siglip_model(PROJ, false);
	tm_remove(m, PH "probe");
	fx_refused(m, CFG, WT_ENOTFOUND, PH "probe", "");
	m = siglip_model(PROJ, false);
	tm_add2(m, "text_projection.weight", PROJ, HID);
	fx_refused(m, CFG, WT_EUNSUPPORTED, "text_projection.weight", "unknown tensor");
	/* vision_use_head false: no pooling head */
	wt_errbuf err = {0};
	ckpt_config c;
	const char *nohead = CFG_WITH(TEXT(""), "," VISION_I("128", ",\"vision_use_head\":false"));
	assert_int_equal(ckpt_config_parse(nohead, strlen(nohead), &c, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "vision_config.vision_use_head is false"));
	/* text heads not dividing the width; kv heads; head_dim; vision_config missing */
	fx_refused(siglip_model(PROJ, false), CFG_WITH(TEXT_H("6", ""), "," VISION), WT_ECORRUPT,
	           "text_config.num_attention_heads 6", "SiglipAttention");
	fx_refused(siglip_model(PROJ, false),
	           CFG_WITH(TEXT(",\"num_key_value_heads\":2"), "," VISION), WT_EUNSUPPORTED,
	           "num_key_value_heads 2", "remove the key");
	fx_refused(siglip_model(PROJ, false), CFG_WITH(TEXT(",\"head_dim\":32"), "," VISION),
	           WT_EUNSUPPORTED, "head_dim 32", "remove the key");
	fx_refused(siglip_model(PROJ, false), CFG_WITH(TEXT(",\"projection_size\":96"), ""),
	           WT_ECORRUPT, "SiglipModel needs vision_config", "");
	/* heads: 8 do not split 16 ways */
	fx_refused_tp(siglip_model(PROJ, false), CFG, 16, WT_ELAYOUT, "tp_size 16",
	              "num_attention_heads 8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slices),      cmocka_unit_test(test_quant),
	    cmocka_unit_test(test_quantizable), cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_defaults),    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
