/*
 * test_shardmap_llava_pixtral.c — LLaVA with a Pixtral tower (LlavaForConditionalGeneration
 * whose vision_config.model_type is pixtral: pixtral-12b; docs/format.md section 2.7): the
 * Pixtral tower's rank slices computed by hand at TP 2 and 4 as Mistral 3's (q/k/v fused by
 * vision heads into attention.qkv_proj, o_proj and down_proj by columns, gate / up merged by
 * rows into feed_forward.gate_up_proj, the norms and patch_conv replicated), the blocks past
 * vision_feature_layer skipped as vLLM's init_vision_tower_for_llava builds the tower, the
 * projector as LLaVA's (linear_1 by rows with its bias, linear_2 by columns with its bias
 * replicated), the language model as Mistral's (same bytes under `language_model.`, head_dim
 * given), the released and transformers 4.57 layouts giving the same shards, int8 codes and
 * fp8 of what vLLM quantizes, coverage at TP 1, 2, 4, 8, LlavaConfig's, PixtralVisionConfig's
 * and MistralConfig's defaults, the tie from text_config only, and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x9127a1ull
#include "test_shardmap_fx.h"

/* LM: hid 64, H 8, KV 2, d 12 given (H*d 96, KV*d 24), I 128, V 128, L 1. Vision: blocks of
 * width 32, 8 heads of 4, MLP 64, image 8 / patch 2, 3 channels. Projector: linear_1
 * [64, 32], linear_2 [64, 64]. */
#define HID 64
#define VE  32
#define VI  64

#define LM_KEYS(mt)                                                                                \
	"\"model_type\":\"" mt "\",\"hidden_size\":64,\"num_attention_heads\":8,"                  \
	"\"num_key_value_heads\":2,\"head_dim\":12,\"intermediate_size\":128,"                     \
	"\"vocab_size\":128,\"num_hidden_layers\":1"
#define VISION_CFG(vmt, keys) ",\"vision_config\":{\"model_type\":\"" vmt "\"" keys "}}"
#define VISION_KEYS(vd, vh)                                                                        \
	",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":" vh                 \
	",\"num_hidden_layers\":" vd ",\"image_size\":8,\"patch_size\":2"
#define PIXTRAL(vd) VISION_CFG("pixtral", VISION_KEYS(vd, "8"))
#define CFG_ARCH(arch, mt, top, tmt, text)                                                         \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"" mt "\"," top                         \
	"\"text_config\":{" LM_KEYS(tmt) text "}"
#define CFG_HEAD(top, tmt, text) CFG_ARCH("LlavaForConditionalGeneration", "llava", top, tmt, text)
/* untied (MistralConfig's default; the top level's true is not the text model's); feature
 * layer -2 of 3 blocks: block 2 not built */
static const char cfg_px[] = CFG_HEAD("\"tie_word_embeddings\":true,\"vision_feature_layer\":-2,",
                                      "mistral", "") PIXTRAL("3");
static const char cfg_text[] =
    "{\"architectures\":[\"MistralForCausalLM\"]," LM_KEYS("mistral") "}";

#define VT "vision_tower."
#define VB VT "transformer.layers.%d."
#define PJ "multi_modal_projector."
#define LM "language_model.model."

static const struct {
	const char *leaf;
	int64_t n, k;
} block[] = {
    {"attention_norm.weight", VE, 0},          {"attention.q_proj.weight", VE, VE},
    {"attention.k_proj.weight", VE, VE},       {"attention.v_proj.weight", VE, VE},
    {"attention.o_proj.weight", VE, VE},       {"ffn_norm.weight", VE, 0},
    {"feed_forward.gate_proj.weight", VI, VE}, {"feed_forward.up_proj.weight", VI, VE},
    {"feed_forward.down_proj.weight", VE, VI},
};

/* patch_conv [VE, 3, p, p] under its name in layout y. */
static void add_patch_conv(tm_model *m, lay y, int64_t p)
{
	char b[200];
	mm_ck_name(b, sizeof(b), VT "patch_conv.weight", y);
	tm_add(m, b, WT_DTYPE_INVALID, 1, VE * 3 * p * p, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[0] = VE;
	d->shape[1] = 3;
	d->shape[2] = d->shape[3] = p;
}

/* The Mistral language model (lm_head when asked), then unless LAY_TEXT the Pixtral tower
 * of `blocks` blocks (patch p) and the projector with its biases, all in layout y. */
static tm_model *px_model_p(lay y, bool lm_head, int blocks, int64_t p)
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
	    {"self_attn.q_proj.weight", 96, HID}, {"self_attn.k_proj.weight", 24, HID},
	    {"self_attn.v_proj.weight", 24, HID}, {"self_attn.o_proj.weight", HID, 96},
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
	add_patch_conv(m, y, p);
	mm_add(m, y, VT "ln_pre.weight", VE, 0);
	for (int blk = 0; blk < blocks; blk++)
		for (size_t k = 0; k < sizeof(block) / sizeof(block[0]); k++) {
			snprintf(b, sizeof(b), VB "%s", blk, block[k].leaf);
			mm_add(m, y, b, block[k].n, block[k].k);
		}
	mm_add(m, y, PJ "linear_1.weight", HID, VE);
	mm_add(m, y, PJ "linear_1.bias", HID, 0);
	mm_add(m, y, PJ "linear_2.weight", HID, HID);
	mm_add(m, y, PJ "linear_2.bias", HID, 0);
	return m;
}

static tm_model *px_model(lay y, bool lm_head, int blocks)
{
	return px_model_p(y, lm_head, blocks, 2);
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	for (int blk = 0; blk < 2; blk++)
		fx_pixtral_block(f, T, r, VB, blk, VE, VI);
	assert_int_equal(tm_ix(f->p, r, VT "transformer.layers.2.attention.qkv_proj.weight"), -1);
	repl(f, r, VT "patch_conv.weight");
	repl(f, r, VT "ln_pre.weight");
	assert_int_equal(info(f, r, VT "patch_conv.weight")->ndim, 4);
	int64_t hl = HID / T;
	shp(f, r, PJ "linear_1.weight", 2, hl, VE, 0);
	rows_at(f, r, PJ "linear_1.weight", 0, PJ "linear_1.weight", r * hl, hl);
	shp(f, r, PJ "linear_1.bias", 1, hl, 0, 0);
	rows_at(f, r, PJ "linear_1.bias", 0, PJ "linear_1.bias", r * hl, hl);
	cols_of(f, r, T, PJ "linear_2.weight", PJ "linear_2.weight", HID, HID);
	repl(f, r, PJ "linear_2.bias");
	/* LM: H 8 KV 2 d 12; TP 2: kv head r, TP 4: kv head r/2 replicated */
	const char *lq = LM "layers.0.self_attn.qkv_proj.weight";
	int64_t ql = 96 / T, kvh = T == 2 ? r : r / 2;
	shp(f, r, lq, 2, ql + 24, HID, 0);
	rows_at(f, r, lq, 0, LM "layers.0.self_attn.q_proj.weight", r * ql, ql);
	rows_at(f, r, lq, ql, LM "layers.0.self_attn.k_proj.weight", kvh * 12, 12);
	rows_at(f, r, lq, ql + 12, LM "layers.0.self_attn.v_proj.weight", kvh * 12, 12);
	cols_of(f, r, T, LM "layers.0.self_attn.o_proj.weight",
	        LM "layers.0.self_attn.o_proj.weight", HID, 96);
	assert_true(tm_ix(f->p, r, "language_model.lm_head.weight") >= 0); /* untied */
	/* 2 blocks x 6 outputs, patch_conv and ln_pre, the projector's 4; the LM's 6 + embed,
	 * norm, lm_head */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 6 + 2 + 4 + 6 + 3);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, px_model(LAY_V450, true, 3), cfg_px, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_false(shardmap_tied_lm_head(f.p));
		/* block 2 (not built for feature layer -2); nothing else */
		assert_int_equal(shardmap_n_skipped(f.p), 9);
		assert_true(fx_skipped(&f, VT "transformer.layers.2.feed_forward.up_proj.weight") &&
		            fx_skipped(&f, VT "transformer.layers.2.ffn_norm.weight"));
		fx_close(&f);
	}
}

/* transformers 4.57's layout gives the released one's shards byte for byte; the language
 * model MistralForCausalLM's under language_model. */
static void test_layouts(void **state)
{
	(void)state;
	fx a, b, t;
	fx_open(&a, px_model(LAY_V450, true, 3), cfg_px, 2, 1, 0, true);
	fx_open(&b, px_model(LAY_HF5, true, 3), cfg_px, 2, 1, 0, true);
	fx_open(&t, px_model(LAY_TEXT, true, 0), cfg_text, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_same_rank(&a, &b, r, NULL);
		fx_same_rank(&a, &t, r, "language_model.");
	}
	assert_true(
	    fx_skipped(&b, "model.vision_tower.transformer.layers.2.attention.q_proj.weight"));
	fx_close(&a);
	fx_close(&b);
	fx_close(&t);
}

/* int8-channel TP 2: the tower's gate_up codes by hand; the tower's, the projector's and the
 * LM's Linears quantized (vLLM builds them with the quant config); the rest kept BF16. */
static void test_int8(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, px_model(LAY_V450, true, 3), cfg_px, &l, true);
	const char *q = VT "transformer.layers.1.feed_forward.gate_up_proj.weight";
	const int8_t *c = (const int8_t *)out_bytes(&f, 1, q);
	char sn[200];
	snprintf(sn, sizeof(sn), "%s_scale", q);
	const float *sc = (const float *)out_bytes(&f, 1, sn);
	for (int64_t row = 0; row < VI / 2; row++) { /* gate rows [VI/2, VI) */
		size_t rowb;
		const uint16_t *x = (const uint16_t *)src_rows(
		    &f, VT "transformer.layers.1.feed_forward.gate_proj.weight", VI / 2 + row,
		    &rowb);
		int8_row_is(c + row * VE, sc[row], x, VE);
	}
	static const char *const keep[] = {PJ "linear_1.bias",
	                                   PJ "linear_2.bias",
	                                   VT "patch_conv.weight",
	                                   VT "ln_pre.weight",
	                                   LM "embed_tokens.weight",
	                                   VT "transformer.layers.0.attention_norm.weight",
	                                   LM "layers.0.input_layernorm.weight"};
	static const char *const q8[] = {VT "transformer.layers.0.attention.qkv_proj.weight",
	                                 VT "transformer.layers.0.attention.o_proj.weight",
	                                 VT "transformer.layers.0.feed_forward.down_proj.weight",
	                                 PJ "linear_1.weight",
	                                 PJ "linear_2.weight",
	                                 LM "layers.0.mlp.gate_up_proj.weight",
	                                 LM "layers.0.self_attn.qkv_proj.weight"};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	fx_close(&f);
}

/* fp8-channel TP 4 in transformers 4.57's layout: the same split. */
static void test_fp8(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx f;
	fx_open_l(&f, px_model(LAY_HF5, true, 3), cfg_px, &l, false);
	static const char *const q[] = {VT "transformer.layers.1.attention.qkv_proj.weight",
	                                VT "transformer.layers.1.attention.o_proj.weight",
	                                VT "transformer.layers.1.feed_forward.gate_up_proj.weight",
	                                VT "transformer.layers.1.feed_forward.down_proj.weight",
	                                PJ "linear_1.weight",
	                                PJ "linear_2.weight",
	                                LM "layers.0.self_attn.qkv_proj.weight"};
	for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
		assert_int_equal(info(&f, 3, q[k])->dtype, WT_F8_E4M3);
	static const char *const n[] = {PJ "linear_1.bias",
	                                PJ "linear_2.bias",
	                                VT "patch_conv.weight",
	                                VT "ln_pre.weight",
	                                VT "transformer.layers.1.ffn_norm.weight",
	                                LM "embed_tokens.weight"};
	for (size_t k = 0; k < sizeof(n) / sizeof(n[0]); k++)
		assert_int_equal(info(&f, 3, n[k])->dtype, WT_BF16);
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(px_model(LAY_V450, true, 3), cfg_px, 2, lays, 4);
	coverage(px_model(LAY_HF5, true, 3), cfg_px, 2, lays, 4);
}

/* LlavaConfig's defaults (vision_feature_layer -2, multimodal_projector_bias true),
 * MistralConfig's for text_config keys pixtral-12b's leaves out (num_attention_heads 32),
 * PixtralVisionConfig's for vision_config's (24 blocks, 16 heads, patch 16, image 1024, 3
 * channels), the tie from text_config alone. */
static void test_defaults(void **state)
{
	(void)state;
	static const char cls[] =
	    "{\"architectures\":[\"LlavaForConditionalGeneration\"],\"model_type\":\"llava\","
	    "\"text_config\":{\"model_type\":\"mistral\",\"hidden_size\":5120,\"head_dim\":128},"
	    "\"vision_config\":{\"model_type\":\"pixtral\"}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.v_feature_layer == -2 && c.mm_projector_bias &&
	            strcmp(c.v_model_type, "pixtral") == 0 &&
	            strcmp(c.lm_model_type, "mistral") == 0);
	assert_true(c.vocab_size == 32000 && c.hidden_size == 5120 && c.head_dim == 128 &&
	            c.num_attention_heads == 32 && c.num_key_value_heads == 8 &&
	            c.intermediate_size == 14336 && c.num_hidden_layers == 32 && !c.tie_given);
	ckpt_config_clear(&c);
	/* the tower's defaults: 24 blocks (23 built for -2), 16 heads (2 wide), patch 16 */
	static const char dflt[] =
	    CFG_HEAD("", "mistral", "") VISION_CFG("pixtral", ",\"hidden_size\":32,"
	                                                      "\"intermediate_size\":64");
	fx f;
	fx_open(&f, px_model_p(LAY_V450, true, 24, 16), dflt, 2, 1, 0, false);
	assert_int_equal(shardmap_n_skipped(f.p), 9);
	assert_true(fx_skipped(&f, VT "transformer.layers.23.attention_norm.weight"));
	shp(&f, 1, VT "transformer.layers.22.attention.qkv_proj.weight", 2, 3 * 16, VE, 0);
	assert_int_equal(info(&f, 1, VT "patch_conv.weight")->shape[3], 16);
	fx_close(&f);
	fx_refused(px_model_p(LAY_V450, true, 24, 2), dflt, WT_ESHAPE, VT "patch_conv.weight", "");
	/* untied whatever the top level says: lm_head needed */
	fx_refused(px_model(LAY_V450, false, 3), cfg_px, WT_ENOTFOUND, "lm_head.weight", "");
	/* tied by text_config: lm_head may be absent */
	static const char tied[] = CFG_HEAD("\"tie_word_embeddings\":false,", "mistral",
	                                    ",\"tie_word_embeddings\":true") PIXTRAL("3");
	fx_open(&f, px_model(LAY_V450, false, 3), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	assert_int_equal(shardmap_n_skipped(f.p), 9); /* -2 by default: block 2 not built */
	fx_close(&f);
	fx_open(&f, px_model(LAY_HF5, false, 3), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
	/* multimodal_projector_bias false: the biases are not vLLM's, their absence plans */
	static const char nob[] =
	    CFG_HEAD("\"multimodal_projector_bias\":false,", "mistral", "") PIXTRAL("3");
	fx_refused(px_model(LAY_V450, true, 3), nob, WT_EUNSUPPORTED, PJ "linear_", "bias");
	tm_model *m = px_model(LAY_V450, true, 3);
	tm_remove(m, PJ "linear_1.bias");
	tm_remove(m, PJ "linear_2.bias");
	fx_open(&f, m, nob, 2, 1, 0, false);
	assert_int_equal(tm_ix(f.p, 0, PJ "linear_1.bias"), -1);
	fx_close(&f);
	/* vision_feature_layer -1 (pixtral-12b's): every block built */
	static const char all[] =
	    CFG_HEAD("\"vision_feature_layer\":-1,", "mistral", "") PIXTRAL("3");
	fx_open(&f, px_model(LAY_V450, true, 3), all, 2, 1, 0, false);
	assert_int_equal(shardmap_n_skipped(f.p), 0);
	assert_true(tm_ix(f.p, 1, VT "transformer.layers.2.attention.qkv_proj.weight") >= 0);
	fx_close(&f);
}

static void test_errors(void **state)
{
	(void)state;
	/* a list or an out-of-range vision_feature_layer */
	static const char cfgl[] =
	    CFG_HEAD("\"vision_feature_layer\":[-2],", "mistral", "") PIXTRAL("3");
	fx_refused(px_model(LAY_V450, true, 3), cfgl, WT_EUNSUPPORTED,
	           "vision_feature_layer is a list", "LlavaMultiModalProjector");
	static const char cfgo[] =
	    CFG_HEAD("\"vision_feature_layer\":-5,", "mistral", "") PIXTRAL("3");
	fx_refused(px_model(LAY_V450, true, 3), cfgo, WT_ECORRUPT, "vision_feature_layer -5",
	           "[-4, 3]");
	/* heads: 3 do not divide 32; image below the patch */
	static const char cfg3h[] =
	    CFG_HEAD("", "mistral", "") VISION_CFG("pixtral", VISION_KEYS("3", "3"));
	fx_refused(px_model(LAY_V450, true, 3), cfg3h, WT_ECORRUPT,
	           "num_attention_heads 3 does not divide hidden_size 32", "");
	static const char cfgimg[] = CFG_HEAD("", "mistral", "") VISION_CFG(
	    "pixtral", ",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":8,"
	               "\"num_hidden_layers\":3,\"image_size\":1,\"patch_size\":2");
	fx_refused(px_model(LAY_V450, true, 3), cfgimg, WT_ECORRUPT, "image_size 1", "");
	/* a block past num_hidden_layers */
	fx_refused(px_model(LAY_V450, true, 4), cfg_px, WT_ESHAPE, "vision block 3", "");
	/* a tower neither CLIP, SigLIP nor Pixtral; LLaVA-NeXT's Pixtral; another language model;
	 * no tower; no text model */
	static const char cfg_sig[] =
	    CFG_HEAD("", "mistral", "") VISION_CFG("idefics3_vision", VISION_KEYS("3", "8"));
	fx_refused(px_model(LAY_V450, true, 3), cfg_sig, WT_EUNSUPPORTED,
	           "vision_config.model_type 'idefics3_vision'", "a Pixtral one (pixtral");
	static const char cfg_next[] = CFG_ARCH("LlavaNextForConditionalGeneration", "llava_next",
	                                        "", "mistral", "") PIXTRAL("3");
	fx_refused(px_model(LAY_V450, true, 3), cfg_next, WT_EUNSUPPORTED,
	           "vision_config.model_type 'pixtral'",
	           "CLIP tower (clip_vision_model, llava-1.5 "
	           "/ llava-v1.6) or a SigLIP one (siglip_vision_model) is supported");
	static const char cfg_qw[] = CFG_HEAD("", "qwen2", "") PIXTRAL("3");
	fx_refused(px_model(LAY_V450, true, 3), cfg_qw, WT_EUNSUPPORTED,
	           "text_config.model_type 'qwen2'", "llama or mistral");
	static const char cfg_notext[] =
	    "{\"architectures\":[\"LlavaForConditionalGeneration\"],\"model_type\":\"llava\","
	    "\"hidden_size\":64,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	    "\"intermediate_size\":128,\"vocab_size\":128,\"num_hidden_layers\":1" PIXTRAL("3");
	fx_refused(px_model(LAY_V450, true, 3), cfg_notext, WT_ECORRUPT, "needs a text_config", "");
	/* CLIP's tensors under a Pixtral config; a post-norm Pixtral has not */
	tm_model *m = px_model(LAY_V450, true, 3);
	tm_add2(m, VT "vision_model.pre_layrnorm.weight", VE, 0);
	fx_refused(m, cfg_px, WT_EUNSUPPORTED, VT "vision_model.pre_layrnorm.weight", "");
	m = px_model(LAY_V450, true, 3);
	tm_add2(m, VT "ln_post.weight", VE, 0);
	fx_refused(m, cfg_px, WT_EUNSUPPORTED, VT "ln_post.weight", "");
	/* Pixtral's blocks under a CLIP config */
	static const char cfg_clip[] =
	    CFG_HEAD("", "mistral", "") VISION_CFG("clip_vision_model", VISION_KEYS("3", "8"));
	fx_refused(px_model(LAY_V450, true, 3), cfg_clip, WT_EUNSUPPORTED, "unknown tensor",
	           "family llava");
	/* a projector of another width; mixed layouts */
	m = px_model(LAY_V450, true, 3);
	tm_remove(m, PJ "linear_1.weight");
	tm_add2(m, PJ "linear_1.weight", HID, VE * 2);
	fx_refused(m, cfg_px, WT_ESHAPE, PJ "linear_1.weight", "");
	m = px_model(LAY_V450, true, 3);
	tm_remove(m, VT "ln_pre.weight");
	tm_add2(m, "model." VT "ln_pre.weight", VE, 0);
	fx_refused(m, cfg_px, WT_EUNSUPPORTED, "mixes two name layouts", "one layout");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices), cmocka_unit_test(test_layouts),
	    cmocka_unit_test(test_int8),        cmocka_unit_test(test_fp8),
	    cmocka_unit_test(test_coverage),    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
