/*
 * test_shardmap_llava_onevision.c — LLaVA-OneVision (LlavaOnevisionForConditionalGeneration,
 * docs/format.md section 2.7): the SigLIP tower's rank slices computed by hand at TP 2 and 4
 * (Gemma 3's rows, fx_vit_block), the blocks past vision_feature_layer and post_layernorm
 * always dropped as vLLM's init_vision_tower_for_llava (require_post_norm=False) builds the
 * tower, the projector (linear_1, linear_2 with their biases) and image_newline whole on every
 * rank and never quantized, the language model as Qwen2's (q/k/v biases; same bytes under
 * `language_model.`), the released and transformers 4.57 layouts giving the same shards, int8
 * codes, coverage at TP 1, 2, 4, 8, LlavaOnevisionConfig's and Qwen2Config's defaults, the
 * tie from text_config only, multimodal_projector_bias, and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x0e71ull
#include "test_shardmap_fx.h"

#define OV_OPT 0
#include "test_shardmap_ov.h"

/* Projector: linear_1 [64, 32], linear_2 [64, 64]. */
#define LM_KEYS(mt) OV_LM_KEYS(mt, "")
#define CFG_HEAD(top, mt, text)                                                                    \
	"{\"architectures\":[\"LlavaOnevisionForConditionalGeneration\"],\"model_type\":"          \
	"\"llava_onevision\"," top "\"text_config\":{" LM_KEYS(mt) text "}"
/* tied by text_config (the top level's false is not the text model's) */
static const char cfg_ov[] = CFG_HEAD("\"tie_word_embeddings\":false,", "qwen2",
                                      ",\"tie_word_embeddings\":true") SIGLIP("2");
static const char cfg_text[] =
    "{\"architectures\":[\"Qwen2ForCausalLM\"]," LM_KEYS("qwen2") ",\"tie_word_embeddings\":true}";

static const ov_row proj[] = {
    {PJ "linear_1.weight", HID, VE, false},  {PJ "linear_1.bias", HID, 0, false},
    {PJ "linear_2.weight", HID, HID, false}, {PJ "linear_2.bias", HID, 0, false},
    {"image_newline", HID, 0, false},
};

/* Qwen2's layer (q/k/v biases) */
static const ov_row lmt[] = {
    {"input_layernorm.weight", HID, 0, false},   {"post_attention_layernorm.weight", HID, 0, false},
    {"self_attn.q_proj.weight", 64, HID, false}, {"self_attn.q_proj.bias", 64, 0, false},
    {"self_attn.k_proj.weight", 16, HID, false}, {"self_attn.k_proj.bias", 16, 0, false},
    {"self_attn.v_proj.weight", 16, HID, false}, {"self_attn.v_proj.bias", 16, 0, false},
    {"self_attn.o_proj.weight", HID, 64, false}, {"mlp.gate_proj.weight", 128, HID, false},
    {"mlp.up_proj.weight", 128, HID, false},     {"mlp.down_proj.weight", HID, 128, false}};

/* The Qwen2 language model (lm_head with OV_HEAD), then unless LAY_TEXT the tower of `blocks`
 * blocks with post_layernorm, the projector and image_newline, all in layout y. */
static tm_model *ov_model_w(lay y, unsigned opt, int blocks, int64_t ve, int64_t vi)
{
	return ov_build(lmt, sizeof(lmt) / sizeof(lmt[0]), proj, sizeof(proj) / sizeof(proj[0]), y,
	                opt, blocks, ve, vi);
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	ov_tower_rank(f, T, r, proj, sizeof(proj) / sizeof(proj[0]));
	ov_attn_rank(f, T, r, true);
	/* 2 blocks x 12 outputs, the embeddings' 3, the projector's 4 and image_newline; the
	 * LM's 7 + embed, norm */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 3 + 5 + 7 + 2);
}

/* The tower at 64 / 96 and 64 / 128 (vision hidden_size / intermediate_size). */
static const char cfg_i96[] =
    CFG_HEAD("\"tie_word_embeddings\":false,", "qwen2", ",\"tie_word_embeddings\":true")
        VISION_CFG("siglip_vision_model", NOHEAD VISION_KEYS_W("64", "96", "2"));
static const char cfg_w64[] =
    CFG_HEAD("\"tie_word_embeddings\":false,", "qwen2", ",\"tie_word_embeddings\":true")
        VISION_CFG("siglip_vision_model", NOHEAD VISION_KEYS_W("64", "128", "2"));

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, ov_model(LAY_V450, 0, 2), cfg_ov, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_true(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 2); /* post_layernorm */
		fx_close(&f);
	}
}

/* transformers 4.57's layout gives the released one's shards byte for byte; the language model
 * Qwen2ForCausalLM's under language_model. */
static void test_layouts(void **state)
{
	(void)state;
	fx_same_layouts(ov_model(LAY_V450, 0, 2), ov_model(LAY_HF5, 0, 2), cfg_ov,
	                ov_model(LAY_TEXT, 0, 0), cfg_text, 2, 1, "language_model.");
}

/* vision_feature_layer -2 of 3 blocks: vLLM builds 2; block 2 and post_layernorm dropped
 * (listed as skipped); a list, or an index outside the tower, refused. */
static void test_feature_layer(void **state)
{
	(void)state;
	static const char cfg3[] = CFG_HEAD("\"vision_feature_layer\":-2,", "qwen2",
	                                    ",\"tie_word_embeddings\":true") SIGLIP("3");
	static const char cfgl[] = CFG_HEAD("\"vision_feature_layer\":[-1],", "qwen2",
	                                    ",\"tie_word_embeddings\":true") SIGLIP("2");
	static const char cfgo[] = CFG_HEAD("\"vision_feature_layer\":-4,", "qwen2",
	                                    ",\"tie_word_embeddings\":true") SIGLIP("2");
	ov_feature_layer(cfg3, cfgl, cfgo, "LlavaOnevisionMultiModalProjector");
}

/* int8-channel TP 2 of a 64 / 128 tower (SiglipMLP quantizes its MLP): the tower's fc1 and
 * the LM quantized; the projector and image_newline
 * kept BF16 whole. */
static void test_int8(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, ov_model_w(LAY_V450, 0, 2, 64, 128), cfg_w64, &l, true);
	const char *q = VT "encoder.layers.1.mlp.fc1.weight";
	const int8_t *c = (const int8_t *)out_bytes(&f, 1, q);
	const float *sc =
	    (const float *)out_bytes(&f, 1, VT "encoder.layers.1.mlp.fc1.weight_scale");
	for (int64_t row = 0; row < 128 / 2; row++) {
		size_t rowb;
		const uint16_t *x = (const uint16_t *)src_rows(&f, q, 128 / 2 + row, &rowb);
		int8_row_is(c + row * 64, sc[row], x, 64);
	}
	static const char *const keep[] = {PJ "linear_1.weight", PJ "linear_1.bias",
	                                   PJ "linear_2.weight", "image_newline",
	                                   LM "embed_tokens.weight"};
	static const char *const q8[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                 LM "layers.0.mlp.gate_up_proj.weight",
	                                 LM "layers.0.self_attn.qkv_proj.weight"};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	repl(&f, 1, PJ "linear_1.weight");
	repl(&f, 1, PJ "linear_2.weight");
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	ov_coverage(cfg_ov);
}

/* LlavaOnevisionConfig's defaults (vision_feature_layer -1, a siglip tower, text_config a
 * qwen2 one, multimodal_projector_bias true), Qwen2Config's for text_config keys left out
 * (num_key_value_heads 32, not num_attention_heads), the tie from text_config alone. */
static void test_defaults(void **state)
{
	(void)state;
	static const char cls[] =
	    "{\"architectures\":[\"LlavaOnevisionForConditionalGeneration\"],\"model_type\":"
	    "\"llava_onevision\",\"tie_word_embeddings\":true,\"text_config\":{\"hidden_size\":"
	    "896,\"num_attention_heads\":14},\"vision_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.v_feature_layer == -1 && c.mm_projector_bias &&
	            strcmp(c.v_model_type, "siglip_vision_model") == 0 &&
	            strcmp(c.lm_model_type, "qwen2") == 0);
	assert_true(c.vocab_size == 151936 && c.hidden_size == 896 && c.num_attention_heads == 14 &&
	            c.num_key_value_heads == 32 && c.intermediate_size == 22016 &&
	            c.num_hidden_layers == 32 && !c.tie_given);
	ckpt_config_clear(&c);
	/* text_config without the key: untied (Qwen2Config's false) whatever the top level says */
	static const char untied[] =
	    CFG_HEAD("\"tie_word_embeddings\":true,", "qwen2", "") SIGLIP("2");
	fx_refused(ov_model(LAY_V450, 0, 2), untied, WT_ENOTFOUND, "lm_head.weight", "");
	fx f;
	fx_open(&f, ov_model(LAY_V450, OV_HEAD, 2), untied, 2, 1, 0, false);
	assert_false(shardmap_tied_lm_head(f.p));
	fx_close(&f);
	fx_open(&f, ov_model(LAY_HF5, OV_HEAD, 2), untied, 2, 1, 0, false);
	assert_false(shardmap_tied_lm_head(f.p));
	fx_close(&f);
	/* multimodal_projector_bias false: the biases are not vLLM's (unknown), their absence
	 * plans */
	static const char nob[] = CFG_HEAD("\"multimodal_projector_bias\":false,", "qwen2",
	                                   ",\"tie_word_embeddings\":true") SIGLIP("2");
	fx_refused(ov_model(LAY_V450, 0, 2), nob, WT_EUNSUPPORTED, PJ "linear_", "bias");
	tm_model *m = ov_model(LAY_V450, 0, 2);
	tm_remove(m, PJ "linear_1.bias");
	tm_remove(m, PJ "linear_2.bias");
	fx_open(&f, m, nob, 2, 1, 0, false);
	assert_int_equal(tm_ix(f.p, 0, PJ "linear_1.bias"), -1);
	fx_close(&f);
}

static void test_errors(void **state)
{
	(void)state;
	/* a projector tensor or image_newline missing; the projector of another width; SigLIP's
	 * attention-pooling head (vision_use_head) is not built by vLLM's tower */
	static const char *const need[] = {PJ "linear_2.bias", "image_newline"};
	ov_need(cfg_ov, need, sizeof(need) / sizeof(need[0]));
	ov_shape_refused(cfg_ov);
	/* heads: 3 do not divide 32; a CLIP tower, none; another language model, no tower */
	static const char cfg3h[] =
	    CFG_HEAD("", "qwen2", ",\"tie_word_embeddings\":true") VISION_3H("");
	static const char cfg_clip[] = CFG_HEAD("", "qwen2", ",\"tie_word_embeddings\":true")
	    VISION_CFG("clip_vision_model", VISION_KEYS("2"));
	static const char cfg_nov[] = CFG_HEAD("", "qwen2", "") "}";
	ov_tower_refused(cfg3h, cfg_clip, cfg_nov);
	static const char cfg_llama[] = CFG_HEAD("", "llama", "") SIGLIP("2");
	fx_refused(ov_v450(2), cfg_llama, WT_EUNSUPPORTED, "text_config.model_type 'llama'",
	           "qwen2");
	static const char cfg_notext[] =
	    "{\"architectures\":[\"LlavaOnevisionForConditionalGeneration\"],\"model_type\":"
	    "\"llava_onevision\",\"hidden_size\":64,\"num_attention_heads\":8,"
	    "\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"
	    "\"num_hidden_layers\":1" SIGLIP("2");
	fx_refused(ov_v450(2), cfg_notext, WT_ECORRUPT, "needs a text_config", "");
}

/* vLLM's siglip.py SiglipMLP: under int8-channel and fp8-block the tower's fc1 / fc2 are
 * kept BF16 without scales when its width (32) or MLP (96) is not a multiple of 64, and
 * quantized at 64 / 128; q/k/v and out_proj quantized in all three. */
static void test_siglip_mlp(void **state)
{
	(void)state;
	ov_siglip_mlp(cfg_ov, cfg_i96, cfg_w64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_siglip_mlp), cmocka_unit_test(test_hand_slices),
	    cmocka_unit_test(test_layouts),    cmocka_unit_test(test_feature_layer),
	    cmocka_unit_test(test_int8),       cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_defaults),   cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
