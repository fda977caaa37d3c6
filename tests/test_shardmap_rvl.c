/*
 * test_shardmap_rvl.c — R-4B (RForConditionalGeneration, docs/format.md section 2.7), cut as
 * vLLM's rvl.py / llava_onevision.py / siglip.py / qwen3.py load it: the SigLIP tower's rank
 * slices by hand at TP 2 and 4 (LLaVA-OneVision's rows, fx_vit_block), the blocks past
 * vision_feature_layer and post_layernorm dropped (require_post_norm=False), RVL's projector
 * (pre_norm, linear_1, linear_2 with their biases) and image_newline whole on every rank and
 * never quantized; the language model under language_model. byte for byte the qwen3 family's
 * ranks of the same weights (TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4), the
 * released and transformers 4.57 layouts giving the same shards; which tensors are quantized;
 * coverage; the config read (by architecture, Qwen3Config's defaults, the tie from text_config
 * alone, multimodal_projector_bias not consulted) and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x4b4bull
#include "test_shardmap_fx.h"
#include "test_shardmap_same_lm.h"

/* LM (Qwen3): hid 64, H 8, KV 2, d 8, I 128, V 128, L 1. Vision: blocks of width 32, 8 heads,
 * MLP 64, image 8 / patch 2: 4 x 4 = 16 patches. Projector: pre_norm [32], linear_1 [64, 32],
 * linear_2 [64, 64]. */
#define HID 64
#define VE  32
#define VI  64
#define VNP 16

#define LM_KEYS(mt)                                                                                \
	"\"model_type\":\"" mt "\",\"hidden_size\":64,\"num_attention_heads\":8,"                  \
	"\"num_key_value_heads\":2,\"head_dim\":8,\"intermediate_size\":128,\"vocab_size\":128,"   \
	"\"num_hidden_layers\":1"
#define VISION_CFG(vmt, keys) ",\"vision_config\":{\"model_type\":\"" vmt "\"" keys "}}"
/* R-4B's tower has no pooling head */
#define NOHEAD ",\"vision_use_head\":false"
#define VISION_KEYS_W(h, i, vd)                                                                    \
	",\"hidden_size\":" h ",\"intermediate_size\":" i ",\"num_attention_heads\":8,"            \
	"\"num_hidden_layers\":" vd ",\"image_size\":8,\"patch_size\":2"
#define VISION_KEYS(vd) VISION_KEYS_W("32", "64", vd)
#define SIGLIP(vd)      VISION_CFG("siglip_vision_model", NOHEAD VISION_KEYS(vd))
#define CFG_MT(mt, top, tmt, text)                                                                 \
	"{\"architectures\":[\"RForConditionalGeneration\"]," mt top                               \
	"\"text_config\":{" LM_KEYS(tmt) text "}"
#define CFG_HEAD(top, tmt, text) CFG_MT("\"model_type\":\"rvl\",", top, tmt, text)
/* tied by text_config (the top level's false is not the text model's) */
static const char cfg_r[] = CFG_HEAD("\"tie_word_embeddings\":false,", "qwen3",
                                     ",\"tie_word_embeddings\":true") SIGLIP("2");
static const char cfg_text[] =
    "{\"architectures\":[\"Qwen3ForCausalLM\"]," LM_KEYS("qwen3") ",\"tie_word_embeddings\":true}";

#define VT "vision_tower.vision_model."
#define VB VT "encoder.layers.%d."
#define PJ "multi_modal_projector."
#define LM "language_model.model."

static const struct {
	const char *name;
	int64_t n, k;
} proj[] = {
    {PJ "pre_norm.weight", VE, 0},    {PJ "pre_norm.bias", VE, 0},
    {PJ "linear_1.weight", HID, VE},  {PJ "linear_1.bias", HID, 0},
    {PJ "linear_2.weight", HID, HID}, {PJ "linear_2.bias", HID, 0},
    {"image_newline", HID, 0},
};

/* The Qwen3 language model (lm_head when asked), then unless LAY_TEXT the tower of `blocks`
 * blocks of width ve / MLP vi with post_layernorm, the projector and image_newline, all in
 * layout y. */
static tm_model *r_model_w(lay y, bool lm_head, int blocks, int64_t ve, int64_t vi)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
	mm_add(m, y, "model.embed_tokens.weight", 128, HID);
	mm_add(m, y, "model.norm.weight", HID, 0);
	static const struct {
		const char *leaf;
		int64_t n, k;
	} lmt[] = {
	    {"input_layernorm.weight", HID, 0},   {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", 64, HID}, {"self_attn.k_proj.weight", 16, HID},
	    {"self_attn.v_proj.weight", 16, HID}, {"self_attn.o_proj.weight", HID, 64},
	    {"self_attn.q_norm.weight", 8, 0},    {"self_attn.k_norm.weight", 8, 0},
	    {"mlp.gate_proj.weight", 128, HID},   {"mlp.up_proj.weight", 128, HID},
	    {"mlp.down_proj.weight", HID, 128}};
	for (size_t k = 0; k < sizeof(lmt) / sizeof(lmt[0]); k++) {
		snprintf(b, sizeof(b), "model.layers.0.%s", lmt[k].leaf);
		mm_add(m, y, b, lmt[k].n, lmt[k].k);
	}
	if (lm_head)
		mm_add(m, y, "lm_head.weight", 128, HID);
	if (y == LAY_TEXT)
		return m;
	mm_add_vit(m, y, false, ve, vi, VNP, blocks);
	for (size_t k = 0; k < sizeof(proj) / sizeof(proj[0]); k++)
		mm_add(m, y, proj[k].name, proj[k].n == VE ? ve : proj[k].n,
		       proj[k].k == VE ? ve : proj[k].k);
	return m;
}

static tm_model *r_model(lay y, bool lm_head, int blocks)
{
	return r_model_w(y, lm_head, blocks, VE, VI);
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	for (size_t k = 0; k < sizeof(proj) / sizeof(proj[0]); k++)
		repl(f, r, proj[k].name);
	repl(f, r, VT "embeddings.position_embedding.weight");
	repl(f, r, VT "embeddings.patch_embedding.bias");
	repl(f, r, LM "layers.0.self_attn.q_norm.weight");
	repl(f, r, LM "layers.0.self_attn.k_norm.weight");
	assert_int_equal(tm_ix(f->p, r, VT "post_layernorm.weight"), -1);
	const char *n = LM "layers.0.self_attn.qkv_proj.weight";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	rows_at(f, r, n, 0, LM "layers.0.self_attn.q_proj.weight", r * ql, ql);
	rows_at(f, r, n, ql, LM "layers.0.self_attn.k_proj.weight", kvh * 8, 8);
	rows_at(f, r, n, ql + 8, LM "layers.0.self_attn.v_proj.weight", kvh * 8, 8);
	cols_of(f, r, T, LM "layers.0.self_attn.o_proj.weight",
	        LM "layers.0.self_attn.o_proj.weight", HID, 64);
	/* 2 blocks x 12 outputs, the embeddings' 3, the projector's 6 and image_newline; the LM
	 * layer's 8 (qkv, o, gate_up, down, 2 norms, q_norm, k_norm) + embed, norm */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 3 + 7 + 8 + 2);
}

/* The tower at 64 / 96 and 64 / 128 (vision hidden_size / intermediate_size). */
static const char cfg_i96[] = CFG_HEAD("", "qwen3", ",\"tie_word_embeddings\":true")
    VISION_CFG("siglip_vision_model", NOHEAD VISION_KEYS_W("64", "96", "2"));
static const char cfg_w64[] = CFG_HEAD("", "qwen3", ",\"tie_word_embeddings\":true")
    VISION_CFG("siglip_vision_model", NOHEAD VISION_KEYS_W("64", "128", "2"));

static void test_r_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, r_model(LAY_V450, false, 2), cfg_r, tps[i], 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "rvl");
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_true(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 2); /* post_layernorm */
		fx_close(&f);
	}
}

/* Every rank's language_model.* outputs equal the qwen3 family's ranks of the same weights as a
 * Qwen3ForCausalLM checkpoint, no more, no fewer (TP 1 / 2 / 4 / 8, int8-channel TP 2,
 * fp8-channel TP 4); transformers 4.57's layout gives the released one's shards byte for byte. */
static void test_r_same_lm(void **state)
{
	(void)state;
	static const char *const not_lm[] = {"vision_tower.", PJ, "image_newline", NULL};
	static const struct {
		uint32_t tp;
		wt_quant q;
	} lays[] = {{1, WT_QUANT_NONE}, {2, WT_QUANT_NONE},         {4, WT_QUANT_NONE},
	            {8, WT_QUANT_NONE}, {2, WT_QUANT_INT8_CHANNEL}, {4, WT_QUANT_FP8_CHANNEL}};
	for (size_t j = 0; j < sizeof(lays) / sizeof(lays[0]); j++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[j].tp;
		l.quant = lays[j].q;
		fx a, b, o;
		fx_open_l(&a, r_model(LAY_V450, false, 2), cfg_r, &l, true);
		fx_open_l(&o, r_model(LAY_HF5, false, 2), cfg_r, &l, true);
		fx_open_l(&b, r_model(LAY_TEXT, false, 0), cfg_text, &l, true);
		assert_string_equal(shardmap_family(b.p), "qwen3");
		for (uint32_t r = 0; r < l.tp_size; r++) {
			fx_same_rank_strip(&a, &b, r, not_lm, "language_model.", "qwen3");
			fx_same_rank(&a, &o, r, NULL);
		}
		fx_close(&a);
		fx_close(&o);
		fx_close(&b);
	}
}

/* vision_feature_layer -2 of 3 blocks: vLLM builds 2; block 2 and post_layernorm dropped
 * (listed as skipped); a list or an index outside the tower refused. */
static void test_r_feature_layer(void **state)
{
	(void)state;
	static const char cfg3[] = CFG_HEAD("\"vision_feature_layer\":-2,", "qwen3",
	                                    ",\"tie_word_embeddings\":true") SIGLIP("3");
	fx f;
	fx_open(&f, r_model(LAY_V450, false, 3), cfg3, 2, 1, 0, false);
	assert_true(tm_ix(f.p, 1, VT "encoder.layers.1.mlp.fc1.weight") >= 0);
	assert_int_equal(tm_ix(f.p, 1, VT "encoder.layers.2.mlp.fc1.weight"), -1);
	assert_int_equal(tm_ix(f.p, 1, VT "post_layernorm.weight"), -1);
	assert_int_equal(shardmap_n_skipped(f.p), 16 + 2);
	fx_close(&f);
	static const char cfgl[] = CFG_HEAD("\"vision_feature_layer\":[-1],", "qwen3",
	                                    ",\"tie_word_embeddings\":true") SIGLIP("2");
	fx_refused(r_model(LAY_V450, false, 2), cfgl, WT_EUNSUPPORTED,
	           "vision_feature_layer is a list", "RVLMultiModalProjector");
	static const char cfgo[] = CFG_HEAD("\"vision_feature_layer\":-4,", "qwen3",
	                                    ",\"tie_word_embeddings\":true") SIGLIP("2");
	fx_refused(r_model(LAY_V450, false, 2), cfgo, WT_ECORRUPT, "vision_feature_layer -4",
	           "[-3, 2]");
}

/* int8-channel TP 2 and fp8-channel TP 4 of a 64 / 128 tower (SiglipMLP quantizes its MLP):
 * the tower's and the LM's Linears quantized (rank 1's out_proj / fc2 / o_proj codes by
 * columns); the projector (pre_norm, linear_1 / linear_2 and their biases), image_newline, the
 * embeddings and norms kept BF16 whole. */
static void test_r_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {PJ "pre_norm.weight",
	                                   PJ "pre_norm.bias",
	                                   PJ "linear_1.weight",
	                                   PJ "linear_1.bias",
	                                   PJ "linear_2.weight",
	                                   PJ "linear_2.bias",
	                                   "image_newline",
	                                   LM "embed_tokens.weight",
	                                   LM "layers.0.self_attn.q_norm.weight",
	                                   VT "embeddings.patch_embedding.weight"};
	static const char *const q[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                VT "encoder.layers.1.self_attn.out_proj.weight",
	                                VT "encoder.layers.1.mlp.fc1.weight",
	                                VT "encoder.layers.1.mlp.fc2.weight",
	                                LM "layers.0.self_attn.qkv_proj.weight",
	                                LM "layers.0.self_attn.o_proj.weight",
	                                LM "layers.0.mlp.gate_up_proj.weight"};
	fx f;
	fx_open_quant(&f, r_model_w(LAY_V450, false, 2, 64, 128), cfg_w64, 2, WT_QUANT_INT8_CHANNEL,
	              WT_BF16, FX_N(keep), FX_N(q));
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.self_attn.out_proj.weight", 64, 64);
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.mlp.fc2.weight", 64, 128);
	fx_cols_int8_is(&f, 1, 2, LM "layers.0.self_attn.o_proj.weight", HID, 64);
	for (size_t k = 0; k < sizeof(proj) / sizeof(proj[0]); k++)
		repl(&f, 1, proj[k].name);
	fx_close(&f);
	fx_open_quant(&f, r_model_w(LAY_V450, false, 2, 64, 128), cfg_w64, 4, WT_QUANT_FP8_CHANNEL,
	              WT_BF16, FX_N(keep), FX_N(q));
	fx_close(&f);
}

static void test_r_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(r_model(LAY_V450, false, 2), cfg_r, 2, lays, 4);
	coverage(r_model(LAY_HF5, false, 2), cfg_r, 2, lays, 4);
}

/* The config read by its architecture (model_type not relied on): LLaVA-OneVision's defaults
 * (vision_feature_layer -1, a siglip tower), Qwen3Config's for text_config keys left out
 * (num_key_value_heads 32, head_dim 128), the tie from text_config alone;
 * multimodal_projector_bias false leaves RVL's biases (bias=True) required. */
static void test_r_config(void **state)
{
	(void)state;
	static const char cls[] = "{\"architectures\":[\"RForConditionalGeneration\"],"
	                          "\"model_type\":\"r\",\"tie_word_embeddings\":true,"
	                          "\"text_config\":{\"model_type\":\"qwen3\",\"hidden_size\":"
	                          "2560,\"num_attention_heads\":32},\"vision_config\":{}}";
	ckpt_config c;
	tm_parse(cls, &c);
	assert_true(c.has_vision && c.v_feature_layer == -1 &&
	            strcmp(c.v_model_type, "siglip_vision_model") == 0 &&
	            strcmp(c.lm_model_type, "qwen3") == 0);
	assert_true(c.vocab_size == 151936 && c.hidden_size == 2560 &&
	            c.num_attention_heads == 32 && c.num_key_value_heads == 32 &&
	            c.head_dim == 128 && c.intermediate_size == 22016 &&
	            c.num_hidden_layers == 32 && !c.tie_given);
	ckpt_config_clear(&c);
	/* another model_type (or the one of the remote class, whatever it is) plans the same */
	static const char other[] = CFG_MT("\"model_type\":\"r_vl\",", "", "qwen3",
	                                   ",\"tie_word_embeddings\":true") SIGLIP("2");
	fx f;
	fx_open(&f, r_model(LAY_V450, false, 2), other, 2, 1, 0, false);
	assert_string_equal(shardmap_family(f.p), "rvl");
	fx_close(&f);
	/* text_config without the key: untied (Qwen3Config's false) whatever the top level says */
	static const char untied[] =
	    CFG_HEAD("\"tie_word_embeddings\":true,", "qwen3", "") SIGLIP("2");
	fx_refused(r_model(LAY_V450, false, 2), untied, WT_ENOTFOUND, "lm_head.weight", "");
	fx_open(&f, r_model(LAY_HF5, true, 2), untied, 2, 1, 0, false);
	assert_false(shardmap_tied_lm_head(f.p));
	assert_true(tm_ix(f.p, 1, "language_model.lm_head.weight") >= 0);
	fx_close(&f);
	static const char nob[] = CFG_HEAD("\"multimodal_projector_bias\":false,", "qwen3",
	                                   ",\"tie_word_embeddings\":true") SIGLIP("2");
	fx_open(&f, r_model(LAY_V450, false, 2), nob, 2, 1, 0, true);
	repl(&f, 0, PJ "linear_1.bias");
	fx_close(&f);
	tm_model *m = r_model(LAY_V450, false, 2);
	tm_remove(m, PJ "linear_1.bias");
	fx_refused(m, nob, WT_ENOTFOUND, PJ "linear_1.bias", "");
}

static void test_r_errors(void **state)
{
	(void)state;
	/* a projector tensor or image_newline missing; pre_norm / linear_1 of another width */
	static const char *const need[] = {PJ "pre_norm.weight", PJ "pre_norm.bias",
	                                   PJ "linear_2.bias", "image_newline"};
	for (size_t k = 0; k < sizeof(need) / sizeof(need[0]); k++) {
		tm_model *m = r_model(LAY_V450, false, 2);
		tm_remove(m, need[k]);
		fx_refused(m, cfg_r, WT_ENOTFOUND, need[k], "");
	}
	tm_model *m = r_model(LAY_V450, false, 2);
	tm_remove(m, PJ "pre_norm.weight");
	tm_add2(m, PJ "pre_norm.weight", HID, 0);
	fx_refused(m, cfg_r, WT_ESHAPE, PJ "pre_norm.weight", "");
	m = r_model(LAY_V450, false, 2);
	tm_remove(m, PJ "linear_1.weight");
	tm_add2(m, PJ "linear_1.weight", HID, VE * 2);
	fx_refused(m, cfg_r, WT_ESHAPE, PJ "linear_1.weight", "");
	/* SigLIP's attention-pooling head under vision_use_head false */
	m = r_model(LAY_V450, false, 2);
	tm_add2(m, VT "head.probe", 1, VE);
	fx_refused(m, cfg_r, WT_EUNSUPPORTED, VT "head.probe", "");
	/* heads: 3 do not divide 32 */
	static const char cfg3h[] = CFG_HEAD("", "qwen3", ",\"tie_word_embeddings\":true")
	    VISION_CFG("siglip_vision_model",
	               ",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":3,"
	               "\"num_hidden_layers\":2,\"image_size\":8,\"patch_size\":2");
	fx_refused(r_model(LAY_V450, false, 2), cfg3h, WT_ECORRUPT,
	           "num_attention_heads 3 does not divide hidden_size 32", "");
	/* a CLIP tower; a qwen2 language model; text_config without model_type; none; no tower */
	static const char cfg_clip[] = CFG_HEAD("", "qwen3", ",\"tie_word_embeddings\":true")
	    VISION_CFG("clip_vision_model", VISION_KEYS("2"));
	fx_refused(r_model(LAY_V450, false, 2), cfg_clip, WT_EUNSUPPORTED,
	           "vision_config.model_type 'clip_vision_model'", "siglip_vision_model");
	static const char cfg_q2[] = CFG_HEAD("", "qwen2", "") SIGLIP("2");
	fx_refused(r_model(LAY_V450, false, 2), cfg_q2, WT_EUNSUPPORTED,
	           "text_config.model_type 'qwen2'", "qwen3");
	static const char cfg_nomt[] =
	    "{\"architectures\":[\"RForConditionalGeneration\"],\"model_type\":\"rvl\","
	    "\"text_config\":{\"hidden_size\":64}" SIGLIP("2");
	fx_refused(r_model(LAY_V450, false, 2), cfg_nomt, WT_ECORRUPT,
	           "text_config.model_type is missing", "qwen3");
	static const char cfg_notext[] =
	    "{\"architectures\":[\"RForConditionalGeneration\"]," LM_KEYS("rvl") SIGLIP("2");
	fx_refused(r_model(LAY_V450, false, 2), cfg_notext, WT_ECORRUPT, "needs a text_config",
	           "qwen3");
	static const char cfg_nov[] = CFG_HEAD("", "qwen3", "") "}";
	fx_refused(r_model(LAY_V450, false, 2), cfg_nov, WT_ECORRUPT, "needs vision_config",
	           "SigLIP");
}

static tm_model *mlp_odd(void)
{
	return r_model(LAY_V450, false, 2);
}

static tm_model *mlp_i96(void)
{
	return r_model_w(LAY_V450, false, 2, 64, 96);
}

static tm_model *mlp_w64(void)
{
	return r_model_w(LAY_V450, false, 2, 64, 128);
}

/* vLLM's siglip.py SiglipMLP: under int8-channel and fp8-block the tower's fc1 / fc2 are kept
 * BF16 without scales when its width (32) or MLP (96) is not a multiple of 64, and quantized
 * at 64 / 128 (LLaVA-OneVision's tower rule). */
static void test_r_siglip_mlp(void **state)
{
	(void)state;
	fx_siglip_mlp(mlp_odd, cfg_r, VT, 2, true);
	fx_siglip_mlp(mlp_i96, cfg_i96, VT, 2, true);
	fx_siglip_mlp(mlp_w64, cfg_w64, VT, 2, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_r_slices),        cmocka_unit_test(test_r_same_lm),
	    cmocka_unit_test(test_r_feature_layer), cmocka_unit_test(test_r_quant),
	    cmocka_unit_test(test_r_coverage),      cmocka_unit_test(test_r_config),
	    cmocka_unit_test(test_r_errors),        cmocka_unit_test(test_r_siglip_mlp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
