/*
 * test_shardmap_llava_next_video.c — LLaVA-NeXT-Video (LlavaNextVideoForConditionalGeneration,
 * docs/format.md section 2.7): LLaVA's CLIP tower cut by hand at TP 2 and 4 (fx_vit_block),
 * the blocks past vision_feature_layer and post_layernorm skipped as vLLM's
 * init_vision_tower_for_llava (require_post_norm=False) builds the tower, the projector
 * (linear_1, linear_2 with their biases: plain nn.Linear in vLLM's llava_next_video.py) whole
 * on every rank and never quantized, image_newline skipped (vLLM ignores it), the language
 * model as Llama's (same bytes under `language_model.`), the released and transformers 4.57
 * layouts giving the same shards, int8 codes, coverage at TP 1, 2, 4, 8,
 * LlavaNextVideoConfig's and LlamaConfig's defaults, the tie from text_config only, the
 * resampler's pooling modes, and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x71deull
#include "test_shardmap_fx.h"

/* LM: hid 64, H 8, KV 2, d 8, I 128, V 128, L 1. Vision: blocks of width 32, 8 heads, MLP 64,
 * image 8 / patch 2: 16 patches + the class token. Projector: linear_1 [64, 32], linear_2
 * [64, 64]. */
#define HID 64
#define VE  32
#define VI  64
#define VNP 17

#define LM_KEYS(mt)                                                                                \
	"\"model_type\":\"" mt "\",\"hidden_size\":64,\"num_attention_heads\":8,"                  \
	"\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"                  \
	"\"num_hidden_layers\":1"
#define VISION_CFG(vmt, keys) ",\"vision_config\":{\"model_type\":\"" vmt "\"" keys "}}"
#define VISION_KEYS(vd)                                                                            \
	",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":8,"                  \
	"\"num_hidden_layers\":" vd ",\"image_size\":8,\"patch_size\":2"
#define CLIP(vd) VISION_CFG("clip_vision_model", VISION_KEYS(vd))
#define NOHEAD   ",\"vision_use_head\":false" /* SigLIP: no pooling head */
#define CFG_HEAD(top, mt, text)                                                                    \
	"{\"architectures\":[\"LlavaNextVideoForConditionalGeneration\"],\"model_type\":"          \
	"\"llava_next_video\"," top "\"text_config\":{" LM_KEYS(mt) text "}"
/* untied (LlamaConfig's default; the top level's true is not the text model's) */
static const char cfg_nv[] = CFG_HEAD("\"tie_word_embeddings\":true,", "llama", "") CLIP("3");
static const char cfg_text[] = "{\"architectures\":[\"LlamaForCausalLM\"]," LM_KEYS("llama") "}";

#define VT "vision_tower.vision_model."
#define VB VT "encoder.layers.%d."
#define PJ "multi_modal_projector."
#define LM "language_model.model."

static const struct {
	const char *name;
	int64_t n, k;
} proj[] = {
    {PJ "linear_1.weight", HID, VE},
    {PJ "linear_1.bias", HID, 0},
    {PJ "linear_2.weight", HID, HID},
    {PJ "linear_2.bias", HID, 0},
};

/* nv_model's tower: CLIP's (class embedding, pre_layrnorm) unless nv_siglip is set (SigLIP's:
 * a patch bias, no class token). */
static bool nv_siglip;

/* The Llama language model (lm_head when asked), then unless LAY_TEXT the CLIP tower of
 * `blocks` blocks with post_layernorm, the projector and image_newline, all in layout y. */
static tm_model *nv_model(lay y, bool lm_head, int blocks)
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
	mm_add_vit(m, y, !nv_siglip, VE, VI, nv_siglip ? VNP - 1 : VNP, blocks);
	for (size_t k = 0; k < sizeof(proj) / sizeof(proj[0]); k++)
		mm_add(m, y, proj[k].name, proj[k].n, proj[k].k);
	mm_add(m, y, "image_newline", HID, 0);
	return m;
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	assert_int_equal(tm_ix(f->p, r, VT "encoder.layers.2.self_attn.qkv_proj.weight"), -1);
	assert_int_equal(tm_ix(f->p, r, VT "post_layernorm.weight"), -1);
	assert_int_equal(tm_ix(f->p, r, "image_newline"), -1);
	static const char *const rep[] = {VT "embeddings.class_embedding",
	                                  VT "embeddings.patch_embedding.weight",
	                                  VT "embeddings.position_embedding.weight",
	                                  VT "pre_layrnorm.weight",
	                                  VT "pre_layrnorm.bias",
	                                  PJ "linear_1.weight",
	                                  PJ "linear_1.bias",
	                                  PJ "linear_2.weight",
	                                  PJ "linear_2.bias"};
	for (size_t j = 0; j < sizeof(rep) / sizeof(rep[0]); j++)
		repl(f, r, rep[j]);
	shp(f, r, PJ "linear_1.weight", 2, HID, VE, 0);
	const char *lq = LM "layers.0.self_attn.qkv_proj.weight";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	shp(f, r, lq, 2, ql + 16, HID, 0);
	rows_at(f, r, lq, 0, LM "layers.0.self_attn.q_proj.weight", r * ql, ql);
	rows_at(f, r, lq, ql, LM "layers.0.self_attn.k_proj.weight", kvh * 8, 8);
	rows_at(f, r, lq, ql + 8, LM "layers.0.self_attn.v_proj.weight", kvh * 8, 8);
	cols_of(f, r, T, LM "layers.0.self_attn.o_proj.weight",
	        LM "layers.0.self_attn.o_proj.weight", HID, 64);
	assert_true(tm_ix(f->p, r, "language_model.lm_head.weight") >= 0); /* untied */
	/* 2 blocks x 12 outputs, the embeddings' 3, pre_layrnorm's 2, the projector's 4; the
	 * LM's 6 + embed, norm, lm_head */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 3 + 2 + 4 + 6 + 3);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, nv_model(LAY_V450, true, 3), cfg_nv, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_false(shardmap_tied_lm_head(f.p));
		/* block 2, post_layernorm, image_newline */
		assert_int_equal(shardmap_n_skipped(f.p), 16 + 2 + 1);
		assert_true(fx_skipped(&f, "image_newline") &&
		            fx_skipped(&f, VT "post_layernorm.bias") &&
		            fx_skipped(&f, VT "encoder.layers.2.mlp.fc1.weight"));
		fx_close(&f);
	}
}

/* transformers 4.57's layout gives the released one's shards byte for byte; the language model
 * LlamaForCausalLM's under language_model. */
static void test_layouts(void **state)
{
	(void)state;
	fx a, b, t;
	fx_open(&a, nv_model(LAY_V450, true, 3), cfg_nv, 2, 1, 0, true);
	fx_open(&b, nv_model(LAY_HF5, true, 3), cfg_nv, 2, 1, 0, true);
	fx_open(&t, nv_model(LAY_TEXT, true, 0), cfg_text, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_same_rank(&a, &b, r, NULL);
		fx_same_rank(&a, &t, r, "language_model.");
	}
	assert_true(fx_skipped(&b, "model.image_newline"));
	fx_close(&a);
	fx_close(&b);
	fx_close(&t);
}

/* int8-channel TP 2: the tower's fc1 and the LM quantized; the projector kept BF16 whole. */
static void test_int8(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, nv_model(LAY_V450, true, 3), cfg_nv, &l, true);
	const char *q = VT "encoder.layers.1.mlp.fc1.weight";
	const int8_t *c = (const int8_t *)out_bytes(&f, 1, q);
	const float *sc =
	    (const float *)out_bytes(&f, 1, VT "encoder.layers.1.mlp.fc1.weight_scale");
	for (int64_t row = 0; row < VI / 2; row++) {
		size_t rowb;
		const uint16_t *x = (const uint16_t *)src_rows(&f, q, VI / 2 + row, &rowb);
		int8_row_is(c + row * VE, sc[row], x, VE);
	}
	static const char *const keep[] = {PJ "linear_1.weight", PJ "linear_1.bias",
	                                   PJ "linear_2.weight", LM "embed_tokens.weight"};
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
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(nv_model(LAY_V450, true, 3), cfg_nv, 2, lays, 4);
	coverage(nv_model(LAY_HF5, true, 3), cfg_nv, 2, lays, 4);
}

/* LlavaNextVideoConfig's defaults (vision_feature_layer -2, a CLIP tower, a llama text_config,
 * multimodal_projector_bias true, average pooling of stride 2), LlamaConfig's for text_config
 * keys left out, the tie from text_config alone. */
static void test_defaults(void **state)
{
	(void)state;
	static const char cls[] =
	    "{\"architectures\":[\"LlavaNextVideoForConditionalGeneration\"],\"model_type\":"
	    "\"llava_next_video\",\"tie_word_embeddings\":true,\"text_config\":{\"hidden_size\":"
	    "896,\"num_attention_heads\":14},\"vision_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.v_feature_layer == -2 && c.mm_projector_bias &&
	            strcmp(c.v_model_type, "clip_vision_model") == 0 &&
	            strcmp(c.lm_model_type, "llama") == 0 &&
	            strcmp(c.v_pool_mode, "average") == 0 && c.v_pool_stride == 2);
	assert_true(c.vocab_size == 32000 && c.hidden_size == 896 && c.num_attention_heads == 14 &&
	            c.intermediate_size == 11008 && c.num_hidden_layers == 32 && !c.tie_given);
	ckpt_config_clear(&c);
	/* untied whatever the top level says: lm_head needed */
	fx_refused(nv_model(LAY_V450, false, 3), cfg_nv, WT_ENOTFOUND, "lm_head.weight", "");
	/* tied by text_config: lm_head may be absent */
	static const char tied[] = CFG_HEAD("\"tie_word_embeddings\":false,", "llama",
	                                    ",\"tie_word_embeddings\":true") CLIP("3");
	fx f;
	fx_open(&f, nv_model(LAY_V450, false, 3), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
	fx_open(&f, nv_model(LAY_HF5, false, 3), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
	/* multimodal_projector_bias false: the biases are not vLLM's, their absence plans */
	static const char nob[] =
	    CFG_HEAD("\"multimodal_projector_bias\":false,", "llama", "") CLIP("3");
	fx_refused(nv_model(LAY_V450, true, 3), nob, WT_EUNSUPPORTED, PJ "linear_", "bias");
	tm_model *m = nv_model(LAY_V450, true, 3);
	tm_remove(m, PJ "linear_1.bias");
	tm_remove(m, PJ "linear_2.bias");
	fx_open(&f, m, nob, 2, 1, 0, false);
	assert_int_equal(tm_ix(f.p, 0, PJ "linear_1.bias"), -1);
	fx_close(&f);
	/* image_newline absent: vLLM never wanted it */
	m = nv_model(LAY_V450, true, 3);
	tm_remove(m, "image_newline");
	fx_open(&f, m, cfg_nv, 2, 1, 0, false);
	assert_int_equal(shardmap_n_skipped(f.p), 16 + 2);
	fx_close(&f);
}

/* The resampler: average or max pooling (no weights) plan alike; a conv one (weights vLLM's
 * LlavaNextVideoPooler cannot load) and a stride under 1 are refused, naming the key. */
static void test_pool(void **state)
{
	(void)state;
	static const char cmax[] =
	    CFG_HEAD("\"spatial_pool_mode\":\"max\",\"spatial_pool_stride\":4,", "llama", "")
	        CLIP("3");
	fx a, b;
	fx_open(&a, nv_model(LAY_V450, true, 3), cfg_nv, 2, 1, 0, true);
	fx_open(&b, nv_model(LAY_V450, true, 3), cmax, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	fx_close(&a);
	fx_close(&b);
	static const char conv[] =
	    CFG_HEAD("\"spatial_pool_mode\":\"conv\",", "llama", "") CLIP("3");
	tm_model *m = nv_model(LAY_V450, true, 3);
	tm_add2(m, "vision_resampler.pool.bias", 1, VE);
	fx_refused(m, conv, WT_EUNSUPPORTED, "spatial_pool_mode 'conv'", "average or max");
	/* the conv's weights under average pooling: not vLLM's */
	m = nv_model(LAY_V450, true, 3);
	tm_add2(m, "vision_resampler.pool.bias", 1, VE);
	fx_refused(m, cfg_nv, WT_EUNSUPPORTED, "vision_resampler.pool.bias", "");
	static const char s0[] = CFG_HEAD("\"spatial_pool_stride\":0,", "llama", "") CLIP("3");
	fx_refused(nv_model(LAY_V450, true, 3), s0, WT_ECORRUPT, "spatial_pool_stride", ">= 1");
	static const char snum[] = CFG_HEAD("\"spatial_pool_mode\":2,", "llama", "") CLIP("3");
	fx_refused(nv_model(LAY_V450, true, 3), snum, WT_ECORRUPT, "spatial_pool_mode", "string");
}

static void test_errors(void **state)
{
	(void)state;
	/* a projector tensor missing; the projector of another width */
	tm_model *m = nv_model(LAY_V450, true, 3);
	tm_remove(m, PJ "linear_2.bias");
	fx_refused(m, cfg_nv, WT_ENOTFOUND, PJ "linear_2.bias", "");
	m = nv_model(LAY_V450, true, 3);
	tm_remove(m, PJ "linear_1.weight");
	tm_add2(m, PJ "linear_1.weight", HID, VE * 2);
	fx_refused(m, cfg_nv, WT_ESHAPE, PJ "linear_1.weight", "");
	/* a list or an out-of-range vision_feature_layer */
	static const char cfgl[] =
	    CFG_HEAD("\"vision_feature_layer\":[-2],", "llama", "") CLIP("3");
	fx_refused(nv_model(LAY_V450, true, 3), cfgl, WT_EUNSUPPORTED,
	           "vision_feature_layer is a list", "LlavaNextMultiModalProjector");
	static const char cfgo[] = CFG_HEAD("\"vision_feature_layer\":-5,", "llama", "") CLIP("3");
	fx_refused(nv_model(LAY_V450, true, 3), cfgo, WT_ECORRUPT, "vision_feature_layer -5",
	           "[-4, 3]");
	/* heads: 3 do not divide 32 */
	static const char cfg3h[] = CFG_HEAD("", "llama", "")
	    VISION_CFG("clip_vision_model",
	               ",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_"
	               "heads\":3,\"num_hidden_layers\":3,\"image_size\":8,\"patch_size\":2");
	fx_refused(nv_model(LAY_V450, true, 3), cfg3h, WT_ECORRUPT,
	           "num_attention_heads 3 does not divide hidden_size 32", "");
	/* another tower (a SigLIP one is served: test_siglip_tower), another language model, no
	 * tower, no text model */
	static const char cfg_id[] =
	    CFG_HEAD("", "llama", "") VISION_CFG("idefics3_vision", VISION_KEYS("3"));
	fx_refused(nv_model(LAY_V450, true, 3), cfg_id, WT_EUNSUPPORTED,
	           "vision_config.model_type 'idefics3_vision'", "or a SigLIP one");
	static const char cfg_qw[] = CFG_HEAD("", "qwen2", "") CLIP("3");
	fx_refused(nv_model(LAY_V450, true, 3), cfg_qw, WT_EUNSUPPORTED,
	           "text_config.model_type 'qwen2'", "llama or mistral");
	static const char cfg_nov[] = CFG_HEAD("", "llama", "") "}";
	fx_refused(nv_model(LAY_V450, true, 3), cfg_nov, WT_ECORRUPT, "needs vision_config", "");
	static const char cfg_notext[] =
	    "{\"architectures\":[\"LlavaNextVideoForConditionalGeneration\"],\"model_type\":"
	    "\"llava_next_video\",\"hidden_size\":64,\"num_attention_heads\":8,"
	    "\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"
	    "\"num_hidden_layers\":1" CLIP("3");
	fx_refused(nv_model(LAY_V450, true, 3), cfg_notext, WT_ECORRUPT, "needs a text_config", "");
	/* an unknown tensor */
	m = nv_model(LAY_V450, true, 3);
	tm_add2(m, "video_newline", 1, HID);
	fx_refused(m, cfg_nv, WT_EUNSUPPORTED, "video_newline", "");
}

/* A SigLIP tower (llava_next_video.py builds its tower with init_vision_tower_for_llava: CLIP,
 * SigLIP or Pixtral): SiglipVisionModel up to the feature layer, cut as LLaVA's SigLIP tower; the
 * projector whole and never quantized, image_newline skipped, as with CLIP; both layouts. */
static void test_siglip_tower(void **state)
{
	(void)state;
	nv_siglip = true;
	static const char cfg_sig[] =
	    CFG_HEAD("", "llama", "") VISION_CFG("siglip_vision_model", NOHEAD VISION_KEYS("3"));
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx a, b;
		fx_open(&a, nv_model(LAY_V450, true, 3), cfg_sig, T, 1, 0, true);
		fx_open(&b, nv_model(LAY_HF5, true, 3), cfg_sig, T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++) {
			fx_siglip_tower2(&a, T, r, VT, VB, VE, VI);
			assert_int_equal(tm_ix(a.p, r, "image_newline"), -1);
			static const char *const rep[] = {VT "embeddings.patch_embedding.weight",
			                                  PJ "linear_1.weight", PJ "linear_1.bias",
			                                  PJ "linear_2.weight", PJ "linear_2.bias"};
			for (size_t j = 0; j < sizeof(rep) / sizeof(rep[0]); j++)
				repl(&a, r, rep[j]);
			fx_same_rank(&a, &b, r, NULL);
			/* 2 blocks x 12, the embeddings' 3, the projector's 4, the LM's 6 + 3 */
			assert_int_equal(shardmap_rank_n_tensors(a.p, r), 2 * 12 + 3 + 4 + 6 + 3);
		}
		assert_true(fx_skipped(&a, VT "post_layernorm.weight") &&
		            fx_skipped(&a, "image_newline") &&
		            fx_skipped(&b, "model." VT "encoder.layers.2.mlp.fc1.weight"));
		fx_close(&a);
		fx_close(&b);
	}
	/* int8-channel: SiglipMLP's fc1 / fc2 of the 32-wide tower and the projector kept */
	static const char *const keep[] = {VT "encoder.layers.0.mlp.fc1.weight",
	                                   VT "encoder.layers.1.mlp.fc2.weight",
	                                   PJ "linear_1.weight", PJ "linear_2.weight"};
	static const char *const quant[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                    LM "layers.0.mlp.gate_up_proj.weight"};
	fx f;
	fx_open_quant(&f, nv_model(LAY_V450, true, 3), cfg_sig, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(keep), FX_N(quant));
	fx_close(&f);
	/* the pooling is checked on this table too */
	static const char conv[] = CFG_HEAD("\"spatial_pool_mode\":\"conv\",", "llama", "")
	    VISION_CFG("siglip_vision_model", NOHEAD VISION_KEYS("3"));
	fx_refused(nv_model(LAY_V450, true, 3), conv, WT_EUNSUPPORTED, "spatial_pool_mode 'conv'",
	           "average or max");
	nv_siglip = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices), cmocka_unit_test(test_layouts),
	    cmocka_unit_test(test_int8),        cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_defaults),    cmocka_unit_test(test_pool),
	    cmocka_unit_test(test_errors),      cmocka_unit_test(test_siglip_tower),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
