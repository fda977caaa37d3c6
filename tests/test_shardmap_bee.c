/*
 * test_shardmap_bee.c — Bee (BeeForConditionalGeneration, model_type bee, remote code;
 * docs/format.md section 2.7), cut as vLLM's bee.py / llava_onevision.py / siglip.py / qwen3.py
 * load it: the SigLIP tower's rank slices by hand at TP 2 and 4 (fx_vit_block), the blocks past
 * vision_feature_layer and post_layernorm always dropped (require_post_norm=False),
 * BeeMultiModalProjector (pre_norm, linear_1 [4 hid, VE], linear_2 [hid, 4 hid], their biases)
 * and image_newline whole on every rank and never quantized; the language model byte for byte
 * the qwen3 family's ranks of the same weights (TP 1 / 2 / 4 / 8, int8-channel TP 2,
 * fp8-channel TP 4) and by hand; the released and transformers >= 4.55 layouts giving the same
 * shards; SiglipMLP's float rule; coverage; the tie from text_config alone; the config read
 * (Bee-8B's sizes, Qwen3Config's defaults for text_config keys left out); the refusals. Seed
 * fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x6265ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_same_lm.h"

#define OV_OPT OV_HEAD
#include "test_shardmap_ov.h"

/* LM: Qwen3's. Projector: pre_norm [32], linear_1 [256, 32], linear_2 [64, 256]. */
#define HD 8
#define F4 (4 * HID)

#define ARCH        "BeeForConditionalGeneration"
#define LM_KEYS(mt) OV_LM_KEYS(mt, "\"head_dim\":8,")
#define CFG_MT(mt, top, tmt, text)                                                                 \
	"{\"architectures\":[\"" ARCH "\"],\"model_type\":\"" mt "\"," top                         \
	"\"text_config\":{" LM_KEYS(tmt) text "}"
#define CFG_HEAD(top, tmt, text) CFG_MT("bee", "\"vision_feature_layer\":-1," top, tmt, text)
/* untied by text_config (the top level's true is not the text model's) */
static const char cfg[] = CFG_HEAD("\"tie_word_embeddings\":true,", "qwen3",
                                   ",\"tie_word_embeddings\":false") SIGLIP("2");
static const char text_cfg[] =
    "{\"architectures\":[\"Qwen3ForCausalLM\"]," LM_KEYS("qwen3") ",\"tie_word_embeddings\":false}";

#define L0 LM "layers.0."

static const ov_row proj[] = {
    {PJ "pre_norm.weight", VE, 0, false},   {PJ "pre_norm.bias", VE, 0, false},
    {PJ "linear_1.weight", F4, VE, false},  {PJ "linear_1.bias", F4, 0, false},
    {PJ "linear_2.weight", HID, F4, false}, {PJ "linear_2.bias", HID, 0, false},
    {"image_newline", HID, 0, false},
};
#define NPROJ (sizeof(proj) / sizeof(proj[0]))

/* Qwen3's layer (q_norm / k_norm: left out under OV_NOQKN) */
static const ov_row lmt[] = {{"input_layernorm.weight", HID, 0, false},
                             {"post_attention_layernorm.weight", HID, 0, false},
                             {"self_attn.q_proj.weight", 8 * HD, HID, false},
                             {"self_attn.k_proj.weight", 2 * HD, HID, false},
                             {"self_attn.v_proj.weight", 2 * HD, HID, false},
                             {"self_attn.o_proj.weight", HID, 8 * HD, false},
                             {"self_attn.q_norm.weight", HD, 0, true},
                             {"self_attn.k_norm.weight", HD, 0, true},
                             {"mlp.gate_proj.weight", 128, HID, false},
                             {"mlp.up_proj.weight", 128, HID, false},
                             {"mlp.down_proj.weight", HID, 128, false}};

/* The Qwen3 language model (lm_head with OV_HEAD), then unless LAY_TEXT the tower of `blocks`
 * blocks of width ve / MLP vi with post_layernorm, the projector and image_newline, in layout
 * y. */
static tm_model *ov_model_w(lay y, unsigned opt, int blocks, int64_t ve, int64_t vi)
{
	return ov_build(lmt, sizeof(lmt) / sizeof(lmt[0]), proj, NPROJ, y, opt, blocks, ve, vi);
}

/* Rank r of T by hand: the tower's blocks and embeddings, the projector and image_newline
 * whole, post_layernorm absent, the LM's layer (q/k/v fused by heads, o_proj / down_proj by
 * columns, gate / up merged, q_norm / k_norm whole) and vocabulary tables; the rank's count. */
static void rank_is(const fx *f, uint32_t T, uint32_t r)
{
	ov_tower_rank(f, T, r, proj, NPROJ);
	shp(f, r, PJ "linear_1.weight", 2, F4, VE, 0);
	shp(f, r, PJ "linear_2.weight", 2, HID, F4, 0);
	repl(f, r, VT "embeddings.patch_embedding.weight");
	assert_int_equal(tm_ix(f->p, r, VT "post_layernorm.bias"), -1);
	fx_attn_is(f, r, T, L0 "self_attn.", "o_proj.weight", 8, 2, HD, HID);
	fx_mlp_is(f, r, T, L0 "mlp.", 128, HID);
	repl(f, r, L0 "self_attn.q_norm.weight");
	repl(f, r, L0 "self_attn.k_norm.weight");
	repl(f, r, L0 "input_layernorm.weight");
	repl(f, r, LM "norm.weight");
	fx_vocab_is(f, r, T, LM "embed_tokens.weight", 128, 128, HID);
	fx_vocab_is(f, r, T, "language_model.lm_head.weight", 128, 128, HID);
	/* 2 blocks x 12 outputs, the embeddings' 3, the projector's 6 and image_newline; the
	 * LM's layer 8 + embed, norm, lm_head */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 3 + 7 + 8 + 3);
}

/* TP 2 and 4 by hand, the family's name, untied, post_layernorm's two tensors skipped. */
static void test_bee_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, ov_v450(2), cfg, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "bee");
		for (uint32_t r = 0; r < T; r++)
			rank_is(&f, T, r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 2);
		assert_true(fx_skipped(&f, VT "post_layernorm.weight"));
		fx_close(&f);
	}
}

/* Every rank's outputs outside the tower, the projector and image_newline equal byte for byte
 * the qwen3 family's ranks of the same weights as a Qwen3ForCausalLM checkpoint (less
 * language_model.), no more, no fewer: TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4. */
static const char *const not_lm[] = {VT, PJ, "image_newline", NULL};

static void test_bee_same_lm(void **state)
{
	(void)state;
	fx_same_lm_lays(ov_rel, NULL, cfg, ov_text, text_cfg, not_lm, "language_model.", "qwen3");
}

/* transformers >= 4.55's layout (model.language_model., model.vision_tower.,
 * model.multi_modal_projector., model.image_newline, lm_head.: bee.py's hf_to_vllm_mapper)
 * gives the released one's shards byte for byte, TP 2 and 4. */
static void test_bee_layouts(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2)
		fx_same_layouts(ov_v450(2), ov_model(LAY_HF5, OV_HEAD, 2), cfg,
		                ov_model(LAY_TEXT, OV_HEAD, 0), text_cfg, T, 1, "language_model.");
}

/* vision_feature_layer -2 of 3 blocks: vLLM builds 2; block 2 and post_layernorm dropped (listed
 * as skipped); 1 keeps block 0 only. A list or an index outside the tower refused. */
static void test_bee_feature_layer(void **state)
{
	(void)state;
	static const char cfg3[] =
	    CFG_MT("bee", "\"vision_feature_layer\":-2,", "qwen3", "") SIGLIP("3");
	fx f;
	fx_open(&f, ov_v450(3), cfg3, 2, 1, 0, false);
	ov_feature_drop(&f);
	assert_true(fx_skipped(&f, VT "encoder.layers.2.mlp.fc1.weight"));
	fx_close(&f);
	static const char cfg1[] =
	    CFG_MT("bee", "\"vision_feature_layer\":1,", "qwen3", "") SIGLIP("2");
	fx_open(&f, ov_v450(2), cfg1, 2, 1, 0, false);
	assert_true(tm_ix(f.p, 0, VT "encoder.layers.0.mlp.fc1.weight") >= 0);
	assert_int_equal(tm_ix(f.p, 0, VT "encoder.layers.1.mlp.fc1.weight"), -1);
	assert_int_equal(shardmap_n_skipped(f.p), 16 + 2);
	fx_close(&f);
	static const char cfgl[] =
	    CFG_MT("bee", "\"vision_feature_layer\":[-1],", "qwen3", "") SIGLIP("2");
	static const char cfgo[] =
	    CFG_MT("bee", "\"vision_feature_layer\":-4,", "qwen3", "") SIGLIP("2");
	ov_feature_refused(cfgl, cfgo, "BeeMultiModalProjector");
}

/* int8-channel TP 2 of a 64 / 128 tower (SiglipMLP quantizes its MLP): the tower's and the LM's
 * Linears quantized (rank 1's o_proj / out_proj codes by columns), the projector (nn.LayerNorm,
 * nn.Linear: no quant_config) and image_newline BF16 and whole; fp8-channel TP 4 alike. */
static const char cfg_w64[] = CFG_HEAD("", "qwen3", "")
    VISION_CFG("siglip_vision_model", NOHEAD VISION_KEYS_W("64", "128", "2"));

static void test_bee_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {
	    PJ "pre_norm.weight", PJ "pre_norm.bias",       PJ "linear_1.weight",
	    PJ "linear_1.bias",   PJ "linear_2.weight",     PJ "linear_2.bias",
	    "image_newline",      LM "embed_tokens.weight", L0 "self_attn.q_norm.weight"};
	static const char *const q[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                VT "encoder.layers.1.self_attn.out_proj.weight",
	                                VT "encoder.layers.1.mlp.fc1.weight",
	                                VT "encoder.layers.0.mlp.fc2.weight",
	                                L0 "self_attn.qkv_proj.weight",
	                                L0 "self_attn.o_proj.weight",
	                                L0 "mlp.gate_up_proj.weight",
	                                L0 "mlp.down_proj.weight"};
	fx f;
	fx_open_quant(&f, ov_model_w(LAY_V450, OV_HEAD, 2, 64, 128), cfg_w64, 2,
	              WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(keep), FX_N(q));
	fx_cols_int8_is(&f, 1, 2, L0 "self_attn.o_proj.weight", HID, 8 * HD);
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.self_attn.out_proj.weight", 64, 64);
	for (size_t k = 0; k < NPROJ; k++)
		repl(&f, 1, proj[k].name);
	fx_close(&f);
	fx_open_quant(&f, ov_model_w(LAY_V450, OV_HEAD, 2, 64, 128), cfg_w64, 4,
	              WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(keep), FX_N(q));
	for (size_t k = 0; k < NPROJ; k++)
		repl(&f, 3, proj[k].name);
	fx_close(&f);
}

/* vLLM's siglip.py SiglipMLP: under int8-channel and fp8-block the tower's fc1 / fc2 are kept
 * BF16 without scales when its width (32) is not a multiple of 64, quantized at 64 / 128. */
static void test_bee_siglip_mlp(void **state)
{
	(void)state;
	ov_siglip_mlp(cfg, NULL, cfg_w64);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 / 8, both layouts. */
static void test_bee_coverage(void **state)
{
	(void)state;
	ov_coverage(cfg);
}

/* The tie is text_config's alone: true there ties (lm_head skipped, or absent) whatever the top
 * level says; absent there, Qwen3Config's false (lm_head required) over a top-level true. */
static void test_bee_tied(void **state)
{
	(void)state;
	static const char tied[] = CFG_HEAD("\"tie_word_embeddings\":false,", "qwen3",
	                                    ",\"tie_word_embeddings\":true") SIGLIP("2");
	fx f;
	fx_open(&f, ov_v450(2), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	assert_true(fx_skipped(&f, "language_model.lm_head.weight"));
	fx_close(&f);
	fx_open(&f, ov_model(LAY_HF5, 0, 2), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
	static const char untied[] =
	    CFG_HEAD("\"tie_word_embeddings\":true,", "qwen3", "") SIGLIP("2");
	fx_refused(ov_model(LAY_V450, 0, 2), untied, WT_ENOTFOUND, "lm_head.weight", "");
	fx_open(&f, ov_model(LAY_HF5, OV_HEAD, 2), untied, 2, 1, 0, false);
	assert_false(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

/* Bee-8B's config.json (Qwen3-8B's text_config, SigLIP so400m-patch14-384 without its pooling
 * head, vision_feature_layer -1) read; a text_config with keys left out takes Qwen3Config's
 * (head_dim 128, 32 kv heads, untied). */
#define BEE8B_VISION                                                                               \
	"\"vision_config\":{\"model_type\":\"siglip_vision_model\",\"hidden_size\":1152,"          \
	"\"intermediate_size\":4304,\"num_hidden_layers\":27,\"num_attention_heads\":16,"          \
	"\"image_size\":384,\"patch_size\":14,\"vision_use_head\":false}"
static void test_bee_config(void **state)
{
	(void)state;
	static const char bee8b[] =
	    "{\"architectures\":[\"" ARCH "\"],\"model_type\":\"bee\",\"vision_feature_layer\":-1,"
	    "\"vision_feature_select_strategy\":\"full\",\"multimodal_projector_bias\":true,"
	    "\"tie_word_embeddings\":false,\"text_config\":{\"model_type\":\"qwen3\","
	    "\"architectures\":[\"Qwen3ForCausalLM\"],\"hidden_size\":4096,\"intermediate_size\":"
	    "12288,\"num_hidden_layers\":36,\"num_attention_heads\":32,\"num_key_value_heads\":8,"
	    "\"head_dim\":128,\"vocab_size\":151936,\"tie_word_embeddings\":false}," BEE8B_VISION
	    "}";
	ckpt_config c;
	tm_parse(bee8b, &c);
	assert_string_equal(c.architecture, ARCH);
	assert_string_equal(c.model_type, "bee");
	assert_string_equal(c.lm_model_type, "qwen3");
	assert_string_equal(c.v_model_type, "siglip_vision_model");
	assert_true(c.has_vision && !c.v_use_head && c.v_feature_layer == -1);
	assert_true(c.hidden_size == 4096 && c.intermediate_size == 12288 &&
	            c.num_hidden_layers == 36 && c.num_attention_heads == 32 &&
	            c.num_key_value_heads == 8 && c.head_dim == 128 && c.vocab_size == 151936);
	assert_true(c.v_hidden_size == 1152 && c.v_intermediate_size == 4304 &&
	            c.v_num_layers == 27 && c.v_num_attn_heads == 16 && c.v_image_size == 384 &&
	            c.v_patch_size == 14);
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
	static const char few[] =
	    "{\"architectures\":[\"" ARCH "\"],\"model_type\":\"bee\",\"vision_feature_layer\":-1,"
	    "\"tie_word_embeddings\":true,\"text_config\":{\"model_type\":\"qwen3\","
	    "\"hidden_size\":1024,\"num_attention_heads\":16}," BEE8B_VISION "}";
	tm_parse(few, &c);
	assert_true(c.vocab_size == 151936 && c.hidden_size == 1024 &&
	            c.num_attention_heads == 16 && c.num_key_value_heads == 32 &&
	            c.head_dim == 128 && c.intermediate_size == 22016 && c.num_hidden_layers == 32);
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
}

/* The loader's refusals: a key the remote BeeConfig's default would give (none assumed). */
static void test_bee_config_errors(void **state)
{
	(void)state;
	static const char notmt[] =
	    "{\"architectures\":[\"" ARCH "\"],\"model_type\":\"bee\",\"vision_feature_layer\":-1,"
	    "\"text_config\":{\"hidden_size\":64,\"num_attention_heads\":8,"
	    "\"num_key_value_heads\":2,\"head_dim\":8,\"intermediate_size\":128,"
	    "\"vocab_size\":128,\"num_hidden_layers\":1}" SIGLIP("2");
	fx_refused(ov_v450(2), notmt, WT_ECORRUPT, "text_config.model_type is missing", "qwen3");
	static const char novmt[] =
	    CFG_HEAD("", "qwen3", "") ",\"vision_config\":{"
	                              "\"vision_use_head\":false" VISION_KEYS("2") "}}";
	fx_refused(ov_v450(2), novmt, WT_ECORRUPT, "vision_config.model_type is missing",
	           "siglip_vision_model");
	static const char nofl[] = CFG_MT("bee", "", "qwen3", "") SIGLIP("2");
	fx_refused(ov_v450(2), nofl, WT_ECORRUPT, "vision_feature_layer is missing", "-1");
	static const char nullfl[] =
	    CFG_MT("bee", "\"vision_feature_layer\":null,", "qwen3", "") SIGLIP("2");
	fx_refused(ov_v450(2), nullfl, WT_ECORRUPT, "vision_feature_layer is missing", "");
}

/* The planner's refusals, each naming its key or tensor. */
static void test_bee_errors(void **state)
{
	(void)state;
	/* another language model, none; no tower, a CLIP tower, 3 heads; another model_type */
	static const char cfg_qwen2[] = CFG_HEAD("", "qwen2", "") SIGLIP("2");
	fx_refused(ov_v450(2), cfg_qwen2, WT_EUNSUPPORTED, "text_config.model_type 'qwen2'",
	           "qwen3");
	static const char cfg_notext[] =
	    "{\"architectures\":[\"" ARCH "\"],\"model_type\":\"bee\",\"vision_feature_layer\":-1,"
	    "\"hidden_size\":64,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	    "\"head_dim\":8,\"intermediate_size\":128,\"vocab_size\":128,\"num_hidden_layers\":"
	    "1" SIGLIP("2");
	fx_refused(ov_v450(2), cfg_notext, WT_ECORRUPT, "needs a text_config", "qwen3");
	static const char cfg_nov[] = CFG_HEAD("", "qwen3", "") "}";
	static const char cfg_clip[] =
	    CFG_HEAD("", "qwen3", "") VISION_CFG("clip_vision_model", VISION_KEYS("2"));
	/* heads: 3 do not divide 32 */
	static const char cfg3h[] = CFG_HEAD("", "qwen3", "") VISION_3H(NOHEAD);
	ov_tower_refused(cfg3h, cfg_clip, cfg_nov);
	static const char cfg_ov[] =
	    CFG_MT("llava_onevision", "\"vision_feature_layer\":-1,", "qwen3", "") SIGLIP("2");
	fx_refused(ov_v450(2), cfg_ov, WT_EUNSUPPORTED, "model_type 'llava_onevision'",
	           "set model_type to bee");
	/* tp_size 16: more ranks than the 8 heads */
	fx_refused_tp(ov_v450(2), cfg, 16, WT_ELAYOUT, "tp_size 16", "");
	/* a projector tensor (biases always: bias=True), image_newline or q_norm missing */
	static const char *const need[] = {PJ "pre_norm.weight", PJ "pre_norm.bias",
	                                   PJ "linear_1.bias", PJ "linear_2.bias", "image_newline"};
	ov_need(cfg, need, sizeof(need) / sizeof(need[0]));
	fx_refused(ov_model(LAY_V450, OV_HEAD | OV_NOQKN, 2), cfg, WT_ENOTFOUND, "q_norm", "");
	/* LLaVA-OneVision's projector ([hid, VE] / [hid, hid]) is not Bee's [4 hid, VE] */
	tm_model *m = ov_without(PJ "linear_1.weight");
	tm_add2(m, PJ "linear_1.weight", HID, VE);
	fx_refused(m, cfg, WT_ESHAPE, PJ "linear_1.weight", "");
	m = ov_without(PJ "linear_2.weight");
	tm_add2(m, PJ "linear_2.weight", HID, HID);
	fx_refused(m, cfg, WT_ESHAPE, PJ "linear_2.weight", "");
	/* SigLIP's pooling head when vision_use_head is false (vLLM has no parameter for it) */
	m = ov_v450(2);
	tm_add(m, VT "head.probe", WT_DTYPE_INVALID, 3, 1, 1, VE);
	fx_refused(m, cfg, WT_EUNSUPPORTED, VT "head.probe", "");
	/* a block past the tower's count */
	fx_refused(ov_model(LAY_V450, OV_HEAD, 3), cfg, WT_ESHAPE, "encoder.layers.2.",
	           "num_hidden_layers");
}

/* multimodal_projector_bias false changes nothing (vLLM's projector has its biases whatever it
 * says): the same shards. */
static void test_bee_mm_bias(void **state)
{
	(void)state;
	static const char nob[] =
	    CFG_HEAD("\"multimodal_projector_bias\":false,", "qwen3", "") SIGLIP("2");
	fx a, b;
	fx_open(&a, ov_v450(2), nob, 2, 1, 0, true);
	fx_open(&b, ov_v450(2), cfg, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	fx_close(&a);
	fx_close(&b);
	fx_refused(ov_without(PJ "linear_1.bias"), nob, WT_ENOTFOUND, PJ "linear_1.bias", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bee_slices),   cmocka_unit_test(test_bee_same_lm),
	    cmocka_unit_test(test_bee_layouts),  cmocka_unit_test(test_bee_feature_layer),
	    cmocka_unit_test(test_bee_quant),    cmocka_unit_test(test_bee_siglip_mlp),
	    cmocka_unit_test(test_bee_coverage), cmocka_unit_test(test_bee_tied),
	    cmocka_unit_test(test_bee_config),   cmocka_unit_test(test_bee_config_errors),
	    cmocka_unit_test(test_bee_errors),   cmocka_unit_test(test_bee_mm_bias),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
