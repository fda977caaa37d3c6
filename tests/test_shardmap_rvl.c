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

#define OV_OPT 0
#include "test_shardmap_ov.h"

/* LM: Qwen3's. Projector: pre_norm [32], linear_1 [64, 32], linear_2 [64, 64]. */
#define LM_KEYS(mt) OV_LM_KEYS(mt, "\"head_dim\":8,")
#define CFG_MT(mt, top, tmt, text)                                                                 \
	"{\"architectures\":[\"RForConditionalGeneration\"]," mt top                               \
	"\"text_config\":{" LM_KEYS(tmt) text "}"
#define CFG_HEAD(top, tmt, text) CFG_MT("\"model_type\":\"rvl\",", top, tmt, text)
/* tied by text_config (the top level's false is not the text model's) */
static const char cfg_r[] = CFG_HEAD("\"tie_word_embeddings\":false,", "qwen3",
                                     ",\"tie_word_embeddings\":true") SIGLIP("2");
static const char cfg_text[] =
    "{\"architectures\":[\"Qwen3ForCausalLM\"]," LM_KEYS("qwen3") ",\"tie_word_embeddings\":true}";

static const ov_row proj[] = {
    {PJ "pre_norm.weight", VE, 0, false},    {PJ "pre_norm.bias", VE, 0, false},
    {PJ "linear_1.weight", HID, VE, false},  {PJ "linear_1.bias", HID, 0, false},
    {PJ "linear_2.weight", HID, HID, false}, {PJ "linear_2.bias", HID, 0, false},
    {"image_newline", HID, 0, false},
};

/* Qwen3's layer (q_norm / k_norm) */
static const ov_row lmt[] = {
    {"input_layernorm.weight", HID, 0, false},   {"post_attention_layernorm.weight", HID, 0, false},
    {"self_attn.q_proj.weight", 64, HID, false}, {"self_attn.k_proj.weight", 16, HID, false},
    {"self_attn.v_proj.weight", 16, HID, false}, {"self_attn.o_proj.weight", HID, 64, false},
    {"self_attn.q_norm.weight", 8, 0, true},     {"self_attn.k_norm.weight", 8, 0, true},
    {"mlp.gate_proj.weight", 128, HID, false},   {"mlp.up_proj.weight", 128, HID, false},
    {"mlp.down_proj.weight", HID, 128, false}};

/* The Qwen3 language model (lm_head with OV_HEAD), then unless LAY_TEXT the tower of `blocks`
 * blocks of width ve / MLP vi with post_layernorm, the projector and image_newline, all in
 * layout y. */
static tm_model *ov_model_w(lay y, unsigned opt, int blocks, int64_t ve, int64_t vi)
{
	return ov_build(lmt, sizeof(lmt) / sizeof(lmt[0]), proj, sizeof(proj) / sizeof(proj[0]), y,
	                opt, blocks, ve, vi);
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	ov_tower_rank(f, T, r, proj, sizeof(proj) / sizeof(proj[0]));
	repl(f, r, LM "layers.0.self_attn.q_norm.weight");
	repl(f, r, LM "layers.0.self_attn.k_norm.weight");
	ov_attn_rank(f, T, r, false);
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
		fx_open(&f, ov_model(LAY_V450, 0, 2), cfg_r, tps[i], 1, 0, true);
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
	fx_same_lm_lays(ov_rel, ov_hf, cfg_r, ov_text, cfg_text, not_lm, "language_model.",
	                "qwen3");
}

/* vision_feature_layer -2 of 3 blocks: vLLM builds 2; block 2 and post_layernorm dropped
 * (listed as skipped); a list or an index outside the tower refused. */
static void test_r_feature_layer(void **state)
{
	(void)state;
	static const char cfg3[] = CFG_HEAD("\"vision_feature_layer\":-2,", "qwen3",
	                                    ",\"tie_word_embeddings\":true") SIGLIP("3");
	static const char cfgl[] = CFG_HEAD("\"vision_feature_layer\":[-1],", "qwen3",
	                                    ",\"tie_word_embeddings\":true") SIGLIP("2");
	static const char cfgo[] = CFG_HEAD("\"vision_feature_layer\":-4,", "qwen3",
	                                    ",\"tie_word_embeddings\":true") SIGLIP("2");
	ov_feature_layer(cfg3, cfgl, cfgo, "RVLMultiModalProjector");
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
	fx_open_quant(&f, ov_model_w(LAY_V450, 0, 2, 64, 128), cfg_w64, 2, WT_QUANT_INT8_CHANNEL,
	              WT_BF16, FX_N(keep), FX_N(q));
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.self_attn.out_proj.weight", 64, 64);
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.mlp.fc2.weight", 64, 128);
	fx_cols_int8_is(&f, 1, 2, LM "layers.0.self_attn.o_proj.weight", HID, 64);
	for (size_t k = 0; k < sizeof(proj) / sizeof(proj[0]); k++)
		repl(&f, 1, proj[k].name);
	fx_close(&f);
	fx_open_quant(&f, ov_model_w(LAY_V450, 0, 2, 64, 128), cfg_w64, 4, WT_QUANT_FP8_CHANNEL,
	              WT_BF16, FX_N(keep), FX_N(q));
	fx_close(&f);
}

static void test_r_coverage(void **state)
{
	(void)state;
	ov_coverage(cfg_r);
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
	fx_open(&f, ov_model(LAY_V450, 0, 2), other, 2, 1, 0, false);
	assert_string_equal(shardmap_family(f.p), "rvl");
	fx_close(&f);
	/* text_config without the key: untied (Qwen3Config's false) whatever the top level says */
	static const char untied[] =
	    CFG_HEAD("\"tie_word_embeddings\":true,", "qwen3", "") SIGLIP("2");
	fx_refused(ov_model(LAY_V450, 0, 2), untied, WT_ENOTFOUND, "lm_head.weight", "");
	fx_open(&f, ov_model(LAY_HF5, OV_HEAD, 2), untied, 2, 1, 0, false);
	assert_false(shardmap_tied_lm_head(f.p));
	assert_true(tm_ix(f.p, 1, "language_model.lm_head.weight") >= 0);
	fx_close(&f);
	static const char nob[] = CFG_HEAD("\"multimodal_projector_bias\":false,", "qwen3",
	                                   ",\"tie_word_embeddings\":true") SIGLIP("2");
	fx_open(&f, ov_model(LAY_V450, 0, 2), nob, 2, 1, 0, true);
	repl(&f, 0, PJ "linear_1.bias");
	fx_close(&f);
	tm_model *m = ov_model(LAY_V450, 0, 2);
	tm_remove(m, PJ "linear_1.bias");
	fx_refused(m, nob, WT_ENOTFOUND, PJ "linear_1.bias", "");
}

static void test_r_errors(void **state)
{
	(void)state;
	/* a projector tensor or image_newline missing; pre_norm / linear_1 of another width;
	 * SigLIP's attention-pooling head under vision_use_head false */
	static const char *const need[] = {PJ "pre_norm.weight", PJ "pre_norm.bias",
	                                   PJ "linear_2.bias", "image_newline"};
	ov_need(cfg_r, need, sizeof(need) / sizeof(need[0]));
	tm_model *m = ov_without(PJ "pre_norm.weight");
	tm_add2(m, PJ "pre_norm.weight", HID, 0);
	fx_refused(m, cfg_r, WT_ESHAPE, PJ "pre_norm.weight", "");
	ov_shape_refused(cfg_r);
	/* heads: 3 do not divide 32; a CLIP tower; none */
	static const char cfg3h[] =
	    CFG_HEAD("", "qwen3", ",\"tie_word_embeddings\":true") VISION_3H("");
	static const char cfg_clip[] = CFG_HEAD("", "qwen3", ",\"tie_word_embeddings\":true")
	    VISION_CFG("clip_vision_model", VISION_KEYS("2"));
	static const char cfg_nov[] = CFG_HEAD("", "qwen3", "") "}";
	ov_tower_refused(cfg3h, cfg_clip, cfg_nov);
	/* a qwen2 language model; text_config without model_type; no tower */
	static const char cfg_q2[] = CFG_HEAD("", "qwen2", "") SIGLIP("2");
	fx_refused(ov_v450(2), cfg_q2, WT_EUNSUPPORTED, "text_config.model_type 'qwen2'", "qwen3");
	static const char cfg_nomt[] =
	    "{\"architectures\":[\"RForConditionalGeneration\"],\"model_type\":\"rvl\","
	    "\"text_config\":{\"hidden_size\":64}" SIGLIP("2");
	fx_refused(ov_v450(2), cfg_nomt, WT_ECORRUPT, "text_config.model_type is missing", "qwen3");
	static const char cfg_notext[] =
	    "{\"architectures\":[\"RForConditionalGeneration\"]," LM_KEYS("rvl") SIGLIP("2");
	fx_refused(ov_v450(2), cfg_notext, WT_ECORRUPT, "needs a text_config", "qwen3");
}

/* vLLM's siglip.py SiglipMLP: under int8-channel and fp8-block the tower's fc1 / fc2 are kept
 * BF16 without scales when its width (32) or MLP (96) is not a multiple of 64, and quantized
 * at 64 / 128 (LLaVA-OneVision's tower rule). */
static void test_r_siglip_mlp(void **state)
{
	(void)state;
	ov_siglip_mlp(cfg_r, cfg_i96, cfg_w64);
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
