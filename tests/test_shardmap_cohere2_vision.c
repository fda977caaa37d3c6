/*
 * test_shardmap_cohere2_vision.c — Cohere2Vision (Cohere2VisionForConditionalGeneration,
 * docs/format.md section 2.7): the SigLIP tower's rank slices computed by hand at TP 2 and 4
 * (Gemma 3's rows, fx_vit_block), the whole tower with post_layernorm as vLLM's
 * SiglipVisionModel builds it, the projector cut as vLLM's MergedColumnParallelLinear /
 * RowParallelLinear (linear_1's two halves' rows by rank with its bias, linear_2's columns, its
 * bias whole) and never quantized, the language model as Cohere 2's (same bytes under
 * `language_model.`), the transformers 4.57 and released-style layouts giving the same shards,
 * int8 codes, coverage at TP 1, 2, 4, 8, Cohere2VisionConfig's and Cohere2Config's defaults,
 * the tie from text_config only, and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0xc2f1ull
#include "test_shardmap_fx.h"

/* LM: hid 64, H 8, KV 2, d 8, I 128, V 128, L 1. Vision: blocks of width 32, 8 heads, MLP 64,
 * image 8 / patch 2: 4 x 4 = 16 patches; downsample_factor 2: VM 128; alignment 96: linear_1
 * [96, 128] (two halves of 48), linear_2 [64, 48]. */
#define HID 64
#define VE  32
#define VI  64
#define VNP 16
#define VM  128
#define AL  96

#define LM_KEYS(mt)                                                                                \
	"\"model_type\":\"" mt "\",\"hidden_size\":64,\"num_attention_heads\":8,"                  \
	"\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"                  \
	"\"num_hidden_layers\":1"
#define VISION_CFG(keys) ",\"vision_config\":{\"model_type\":\"siglip_vision_model\"" keys "}}"
#define VISION_KEYS_W(h, i, vd)                                                                    \
	",\"hidden_size\":" h ",\"intermediate_size\":" i ",\"num_attention_heads\":8,"            \
	"\"num_hidden_layers\":" vd ",\"image_size\":8,\"patch_size\":2"
#define VISION_KEYS(vd) VISION_KEYS_W("32", "64", vd)
#define CFG_HEAD(top, mt, text)                                                                    \
	"{\"architectures\":[\"Cohere2VisionForConditionalGeneration\"],\"model_type\":"           \
	"\"cohere2_vision\"," top "\"text_config\":{" LM_KEYS(mt) text "}"
#define AL96 "\"alignment_intermediate_size\":96,"
static const char cfg_c2v[] = CFG_HEAD(AL96, "cohere2", "") VISION_CFG(VISION_KEYS("2"));
static const char cfg_text[] =
    "{\"architectures\":[\"Cohere2ForCausalLM\"]," LM_KEYS("cohere2") "}";

#define VT "vision_tower.vision_model."
#define VB VT "encoder.layers.%d."
#define PJ "multi_modal_projector."
#define LM "language_model.model."

static const struct {
	const char *name;
	int64_t n, k;
} proj[] = {
    {PJ "linear_1.weight", AL, VM},
    {PJ "linear_1.bias", AL, 0},
    {PJ "linear_2.weight", HID, AL / 2},
    {PJ "linear_2.bias", HID, 0},
};

/* The Cohere 2 language model (lm_head when asked), then unless LAY_TEXT the tower of 2 blocks
 * with post_layernorm and the projector, all in layout y. */
static tm_model *c2v_model_w(lay y, bool lm_head, int64_t ve, int64_t vi)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
	mm_add(m, y, "model.embed_tokens.weight", 128, HID);
	mm_add(m, y, "model.norm.weight", HID, 0);
	static const struct {
		const char *leaf;
		int64_t n, k;
	} lmt[] = {{"input_layernorm.weight", HID, 0},   {"self_attn.q_proj.weight", 64, HID},
	           {"self_attn.k_proj.weight", 16, HID}, {"self_attn.v_proj.weight", 16, HID},
	           {"self_attn.o_proj.weight", HID, 64}, {"mlp.gate_proj.weight", 128, HID},
	           {"mlp.up_proj.weight", 128, HID},     {"mlp.down_proj.weight", HID, 128}};
	for (size_t k = 0; k < sizeof(lmt) / sizeof(lmt[0]); k++) {
		snprintf(b, sizeof(b), "model.layers.0.%s", lmt[k].leaf);
		mm_add(m, y, b, lmt[k].n, lmt[k].k);
	}
	if (lm_head)
		mm_add(m, y, "lm_head.weight", 128, HID);
	if (y == LAY_TEXT)
		return m;
	mm_add_vit(m, y, false, ve, vi, VNP, 2);
	for (size_t k = 0; k < sizeof(proj) / sizeof(proj[0]); k++)
		mm_add(m, y, proj[k].name, proj[k].n, proj[k].k == VM ? ve * 4 : proj[k].k);
	return m;
}

static tm_model *c2v_model(lay y, bool lm_head)
{
	return c2v_model_w(y, lm_head, VE, VI);
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	repl(f, r, VT "post_layernorm.weight");
	repl(f, r, VT "post_layernorm.bias");
	repl(f, r, VT "embeddings.position_embedding.weight");
	/* linear_1: [x_r; gate_r], each AL / 2 / T rows of its half; the bias alike */
	int64_t h = AL / 2 / T;
	static const char *const l1[] = {PJ "linear_1.weight", PJ "linear_1.bias"};
	for (int w = 0; w < 2; w++) {
		if (w)
			shp(f, r, l1[w], 1, 2 * h, 0, 0);
		else
			shp(f, r, l1[w], 2, 2 * h, VM, 0);
		rows_at(f, r, l1[w], 0, l1[w], r * h, h);
		rows_at(f, r, l1[w], h, l1[w], AL / 2 + r * h, h);
	}
	cols_of(f, r, T, PJ "linear_2.weight", PJ "linear_2.weight", HID, AL / 2);
	repl(f, r, PJ "linear_2.bias");
	const char *lq = LM "layers.0.self_attn.qkv_proj.weight";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	rows_at(f, r, lq, 0, LM "layers.0.self_attn.q_proj.weight", r * ql, ql);
	rows_at(f, r, lq, ql, LM "layers.0.self_attn.k_proj.weight", kvh * 8, 8);
	rows_at(f, r, lq, ql + 8, LM "layers.0.self_attn.v_proj.weight", kvh * 8, 8);
	cols_of(f, r, T, LM "layers.0.self_attn.o_proj.weight",
	        LM "layers.0.self_attn.o_proj.weight", HID, 64);
	/* 2 blocks x 12 outputs, the tower's 5, the projector's 4; the LM's 5 + embed, norm */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 5 + 4 + 5 + 2);
}

/* The tower at 64 / 96 and 64 / 128 (vision hidden_size / intermediate_size). */
static const char cfg_i96[] =
    CFG_HEAD(AL96, "cohere2", "") VISION_CFG(VISION_KEYS_W("64", "96", "2"));
static const char cfg_w64[] =
    CFG_HEAD(AL96, "cohere2", "") VISION_CFG(VISION_KEYS_W("64", "128", "2"));

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, c2v_model(LAY_V450, false), cfg_c2v, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_true(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* The released-style names (the hand slices' source names) give transformers 4.57's shards
 * byte for byte; the language model
 * Cohere2ForCausalLM's under language_model. */
static void test_layouts(void **state)
{
	(void)state;
	fx_same_layouts(c2v_model(LAY_HF5, false), c2v_model(LAY_V450, false), cfg_c2v,
	                c2v_model(LAY_TEXT, false), cfg_text, 2, 1, "language_model.");
}

/* int8-channel TP 2 of a 64 / 128 tower (SiglipMLP quantizes its MLP): the tower's fc1 and
 * the LM quantized; the projector kept BF16 (cut). */
static void test_int8(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, c2v_model_w(LAY_V450, false, 64, 128), cfg_w64, &l, true);
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
	                                   PJ "linear_2.weight", LM "embed_tokens.weight"};
	static const char *const q8[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                 LM "layers.0.mlp.gate_up_proj.weight",
	                                 LM "layers.0.self_attn.qkv_proj.weight"};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	rows_at(&f, 1, PJ "linear_1.weight", 0, PJ "linear_1.weight", AL / 4, AL / 4);
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(c2v_model(LAY_HF5, false), cfg_c2v, 2, lays, 4);
	coverage(c2v_model(LAY_V450, false), cfg_c2v, 2, lays, 4);
}

/* Cohere2VisionConfig's defaults (downsample_factor 2, alignment_intermediate_size 36864,
 * text_config a cohere2 one), Cohere2Config's for text_config keys left out, the tie from
 * text_config alone. */
static void test_defaults(void **state)
{
	(void)state;
	static const char cls[] =
	    "{\"architectures\":[\"Cohere2VisionForConditionalGeneration\"],\"model_type\":"
	    "\"cohere2_vision\",\"tie_word_embeddings\":false,\"text_config\":{\"vocab_size\":"
	    "256000},\"vision_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.v_spatial_merge_size == 2 && c.v_proj_in_dim == 36864 &&
	            strcmp(c.lm_model_type, "cohere2") == 0 && c.vocab_size == 256000 &&
	            !c.tie_given);
	ckpt_config_clear(&c);
	/* alignment_intermediate_size absent: 36864, not this projector's 96 */
	static const char noal[] = CFG_HEAD("", "cohere2", "") VISION_CFG(VISION_KEYS("2"));
	fx_refused(c2v_model(LAY_HF5, false), noal, WT_ESHAPE, PJ "linear_1.", "36864");
	/* text_config's tie false: lm_head required (the top level's true is not read) */
	static const char untied[] =
	    CFG_HEAD(AL96 "\"tie_word_embeddings\":true,", "cohere2",
	             ",\"tie_word_embeddings\":false") VISION_CFG(VISION_KEYS("2"));
	fx_refused(c2v_model(LAY_HF5, false), untied, WT_ENOTFOUND, "lm_head.weight", "");
	fx f;
	fx_open(&f, c2v_model(LAY_HF5, true), untied, 2, 1, 0, false);
	assert_false(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

static void test_errors(void **state)
{
	(void)state;
	/* downsample_factor 3 does not divide the 4 x 4 grid; odd alignment; A / 2 = 50 not
	 * divided by TP 4 */
	static const char cfg_df3[] =
	    CFG_HEAD(AL96 "\"downsample_factor\":3,", "cohere2", "") VISION_CFG(VISION_KEYS("2"));
	fx_refused(c2v_model(LAY_HF5, false), cfg_df3, WT_ESHAPE, "downsample_factor 3",
	           "4 patches a side");
	static const char cfg_odd[] = CFG_HEAD("\"alignment_intermediate_size\":95,", "cohere2", "")
	    VISION_CFG(VISION_KEYS("2"));
	fx_refused(c2v_model(LAY_HF5, false), cfg_odd, WT_ESHAPE, "alignment_intermediate_size 95",
	           "even");
	static const char cfg_100[] = CFG_HEAD("\"alignment_intermediate_size\":100,", "cohere2",
	                                       "") VISION_CFG(VISION_KEYS("2"));
	tm_model *m = c2v_model(LAY_HF5, false);
	tm_remove(m, "model." PJ "linear_1.weight");
	tm_remove(m, "model." PJ "linear_1.bias");
	tm_remove(m, "model." PJ "linear_2.weight");
	tm_add2(m, "model." PJ "linear_1.weight", 100, VM);
	tm_add2(m, "model." PJ "linear_1.bias", 100, 0);
	tm_add2(m, "model." PJ "linear_2.weight", HID, 50);
	fx_refused_tp(m, cfg_100, 4, WT_ELAYOUT, "alignment_intermediate_size / 2 50", "tp_size 4");
	/* a projector tensor missing; Aya Vision's layernorm is not Cohere2Vision's */
	m = c2v_model(LAY_HF5, false);
	tm_remove(m, "model." PJ "linear_2.bias");
	fx_refused(m, cfg_c2v, WT_ENOTFOUND, PJ "linear_2.bias", "");
	m = c2v_model(LAY_HF5, false);
	tm_add2(m, "model." PJ "layernorm.weight", VM, 0);
	fx_refused(m, cfg_c2v, WT_EUNSUPPORTED, PJ "layernorm.weight", "");
	/* post_layernorm required: vLLM builds the whole tower */
	m = c2v_model(LAY_HF5, false);
	tm_remove(m, "model." VT "post_layernorm.weight");
	fx_refused(m, cfg_c2v, WT_ENOTFOUND, VT "post_layernorm.weight", "");
	/* heads: 3 do not divide 32 */
	static const char cfg3h[] = CFG_HEAD(AL96, "cohere2", "")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":3,"
	               "\"num_hidden_layers\":2,\"image_size\":8,\"patch_size\":2");
	fx_refused(c2v_model(LAY_HF5, false), cfg3h, WT_ECORRUPT,
	           "num_attention_heads 3 does not divide hidden_size 32", "");
	/* another language model, none, no tower */
	static const char cfg_llama[] = CFG_HEAD(AL96, "llama", "") VISION_CFG(VISION_KEYS("2"));
	fx_refused(c2v_model(LAY_HF5, false), cfg_llama, WT_EUNSUPPORTED,
	           "text_config.model_type 'llama'", "cohere2");
	static const char cfg_nov[] = CFG_HEAD(AL96, "cohere2", "") "}";
	fx_refused(c2v_model(LAY_HF5, false), cfg_nov, WT_ECORRUPT, "needs vision_config",
	           "SigLIP");
	static const char cfg_notext[] =
	    "{\"architectures\":[\"Cohere2VisionForConditionalGeneration\"],\"model_type\":"
	    "\"cohere2_vision\",\"hidden_size\":64,\"num_attention_heads\":8,"
	    "\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"
	    "\"num_hidden_layers\":1" VISION_CFG(VISION_KEYS("2"));
	fx_refused(c2v_model(LAY_HF5, false), cfg_notext, WT_ECORRUPT, "needs a text_config", "");
}

static tm_model *mlp_odd(void)
{
	return c2v_model(LAY_V450, false);
}

static tm_model *mlp_i96(void)
{
	return c2v_model_w(LAY_V450, false, 64, 96);
}

static tm_model *mlp_w64(void)
{
	return c2v_model_w(LAY_V450, false, 64, 128);
}

/* vLLM's siglip.py SiglipMLP: under int8-channel and fp8-block the tower's fc1 / fc2 are
 * kept BF16 without scales when its width (32) or MLP (96) is not a multiple of 64, and
 * quantized at 64 / 128; q/k/v and out_proj quantized in all three. */
static void test_siglip_mlp(void **state)
{
	(void)state;
	fx_siglip_mlp(mlp_odd, cfg_c2v, VT, 2, true);
	fx_siglip_mlp(mlp_i96, cfg_i96, VT, 2, true);
	fx_siglip_mlp(mlp_w64, cfg_w64, VT, 2, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_siglip_mlp), cmocka_unit_test(test_hand_slices),
	    cmocka_unit_test(test_layouts),    cmocka_unit_test(test_int8),
	    cmocka_unit_test(test_coverage),   cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
