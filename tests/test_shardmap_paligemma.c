/*
 * test_shardmap_paligemma.c — PaliGemma (PaliGemmaForConditionalGeneration, docs/format.md
 * section 2.7): the SigLIP tower's rank slices computed by hand at TP 2 and 4 (Gemma 3's
 * rows: q/k/v and their biases fused by vision heads, out_proj and fc2 by columns with their
 * biases replicated, fc1 by rows, the LayerNorms, patch Conv2d, position table and
 * post_layernorm replicated), the projector `multi_modal_projector.linear` whole on every
 * rank and never quantized (vLLM's plain nn.Linear), the language model as Gemma 2's / Gemma's
 * (same bytes under `language_model.`), the released and the transformers 4.57 layouts giving
 * the same shards, int8 codes, coverage at TP 1, 2, 4, 8, GemmaConfig's / Gemma2Config's
 * defaults, the tie from text_config only, PaliGemmaConfig's own hidden_size not read, and
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

#define SEED 0x9a11ull
#include "test_shardmap_fx.h"

/* LM: hid 64, H 8, KV 2, d 8 (H*d 64, KV*d 16), I 128, V 128, L 1. Vision: 2 blocks, width
 * 32, 8 heads, MLP 64, image 8 / patch 2: 4 x 4 = 16 patches; projector [64, 32] + [64]. */
#define HID 64
#define VE  32
#define VI  64
#define VNP 16

#define LM_KEYS(mt)                                                                                \
	"\"model_type\":\"" mt "\",\"hidden_size\":64,\"num_attention_heads\":8,"                  \
	"\"num_key_value_heads\":2,\"head_dim\":8,\"intermediate_size\":128,\"vocab_size\":128,"   \
	"\"num_hidden_layers\":1"
#define VISION_CFG(keys) ",\"vision_config\":{\"model_type\":\"siglip_vision_model\"" keys "}}"
#define VISION_KEYS_W(h, i)                                                                        \
	",\"hidden_size\":" h ",\"intermediate_size\":" i ",\"num_attention_heads\":8,"            \
	"\"num_hidden_layers\":2,\"image_size\":8,\"patch_size\":2"
#define VISION_KEYS VISION_KEYS_W("32", "64")
#define CFG_HEAD(top, mt, text)                                                                    \
	"{\"architectures\":[\"PaliGemmaForConditionalGeneration\"],\"model_type\":"               \
	"\"paligemma\",\"hidden_size\":2048,\"projection_dim\":64," top                            \
	"\"text_config\":{" LM_KEYS(mt) text "}"
static const char cfg_pg2[] = CFG_HEAD("", "gemma2", "") VISION_CFG(VISION_KEYS);
static const char cfg_pg1[] = CFG_HEAD("", "gemma", "") VISION_CFG(VISION_KEYS);
static const char cfg_text2[] = "{\"architectures\":[\"Gemma2ForCausalLM\"]," LM_KEYS("gemma2") "}";
static const char cfg_text1[] = "{\"architectures\":[\"GemmaForCausalLM\"]," LM_KEYS("gemma") "}";

#define VT  "vision_tower.vision_model."
#define VB  VT "encoder.layers.%d."
#define PJW "multi_modal_projector.linear.weight"
#define PJB "multi_modal_projector.linear.bias"
#define LM  "language_model.model."

/* The language model (Gemma 2's norms around the MLP when g2), lm_head when asked, then
 * unless LAY_TEXT the tower of `blocks` blocks and the projector, all in layout y. */
static tm_model *pg_model_w(lay y, bool g2, bool lm_head, int blocks, int64_t ve, int64_t vi)
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
	if (g2) {
		mm_add(m, y, "model.layers.0.pre_feedforward_layernorm.weight", HID, 0);
		mm_add(m, y, "model.layers.0.post_feedforward_layernorm.weight", HID, 0);
	}
	if (lm_head)
		mm_add(m, y, "lm_head.weight", 128, HID);
	if (y == LAY_TEXT)
		return m;
	mm_add_vit(m, y, false, ve, vi, VNP, blocks);
	mm_add(m, y, PJW, HID, ve);
	mm_add(m, y, PJB, HID, 0);
	return m;
}

static tm_model *pg_model(lay y, bool g2, bool lm_head, int blocks)
{
	return pg_model_w(y, g2, lm_head, blocks, VE, VI);
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	static const char *const rep[] = {VT "embeddings.patch_embedding.weight",
	                                  VT "embeddings.patch_embedding.bias",
	                                  VT "embeddings.position_embedding.weight",
	                                  VT "post_layernorm.weight",
	                                  VT "post_layernorm.bias",
	                                  PJW,
	                                  PJB,
	                                  LM "layers.0.pre_feedforward_layernorm.weight",
	                                  LM "layers.0.post_feedforward_layernorm.weight"};
	for (size_t j = 0; j < sizeof(rep) / sizeof(rep[0]); j++)
		repl(f, r, rep[j]);
	shp(f, r, PJW, 2, HID, VE, 0);
	/* LM: H 8 KV 2 d 8; TP 2: kv head r, TP 4: kv head r/2 replicated */
	const char *lq = LM "layers.0.self_attn.qkv_proj.weight";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	shp(f, r, lq, 2, ql + 16, HID, 0);
	rows_at(f, r, lq, 0, LM "layers.0.self_attn.q_proj.weight", r * ql, ql);
	rows_at(f, r, lq, ql, LM "layers.0.self_attn.k_proj.weight", kvh * 8, 8);
	rows_at(f, r, lq, ql + 8, LM "layers.0.self_attn.v_proj.weight", kvh * 8, 8);
	cols_of(f, r, T, LM "layers.0.self_attn.o_proj.weight",
	        LM "layers.0.self_attn.o_proj.weight", HID, 64);
	assert_int_equal(tm_ix(f->p, r, "language_model.lm_head.weight"), -1); /* tied */
	/* 2 blocks x 12 outputs, the tower's 5, the projector's 2; the LM's 8 + embed, norm */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 5 + 2 + 8 + 2);
}

/* The tower at 64 / 96 and 64 / 128 (vision hidden_size / intermediate_size). */
static const char cfg_i96[] = CFG_HEAD("", "gemma2", "") VISION_CFG(VISION_KEYS_W("64", "96"));
static const char cfg_w64[] = CFG_HEAD("", "gemma2", "") VISION_CFG(VISION_KEYS_W("64", "128"));

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, pg_model(LAY_V450, true, false, 2), cfg_pg2, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_true(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* transformers 4.57's layout (model.language_model.*, model.vision_tower.*,
 * model.multi_modal_projector.*) gives the released layout's shards byte for byte, and the
 * language model Gemma 2's / Gemma's text model's under language_model. */
static void test_layouts(void **state)
{
	(void)state;
	for (int g = 0; g < 2; g++) {
		fx_same_layouts(pg_model(LAY_V450, g, false, 2), pg_model(LAY_HF5, g, false, 2),
		                g ? cfg_pg2 : cfg_pg1, pg_model(LAY_TEXT, g, false, 0),
		                g ? cfg_text2 : cfg_text1, 2, 1, "language_model.");
	}
}

/* int8-channel TP 2 of a 64 / 128 tower (SiglipMLP quantizes its MLP): the tower's fc1 rows
 * [64, 128) quantized per row; the projector (a plain nn.Linear in vLLM) kept BF16 whole, as
 * the embeddings, norms and biases. */
static void test_int8(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, pg_model_w(LAY_V450, true, false, 2, 64, 128), cfg_w64, &l, true);
	const char *q = VT "encoder.layers.1.mlp.fc1.weight";
	const int8_t *c = (const int8_t *)out_bytes(&f, 1, q);
	const float *sc =
	    (const float *)out_bytes(&f, 1, VT "encoder.layers.1.mlp.fc1.weight_scale");
	for (int64_t row = 0; row < 128 / 2; row++) {
		size_t rowb;
		const uint16_t *x = (const uint16_t *)src_rows(
		    &f, VT "encoder.layers.1.mlp.fc1.weight", 128 / 2 + row, &rowb);
		int8_row_is(c + row * 64, sc[row], x, 64);
	}
	static const char *const keep[] = {PJW,
	                                   PJB,
	                                   VT "embeddings.patch_embedding.weight",
	                                   VT "embeddings.position_embedding.weight",
	                                   VT "encoder.layers.0.self_attn.qkv_proj.bias",
	                                   LM "embed_tokens.weight",
	                                   LM "layers.0.pre_feedforward_layernorm.weight"};
	static const char *const q8[] = {
	    VT "encoder.layers.0.self_attn.qkv_proj.weight",
	    VT "encoder.layers.0.self_attn.out_proj.weight", VT "encoder.layers.0.mlp.fc2.weight",
	    LM "layers.0.mlp.gate_up_proj.weight", LM "layers.0.self_attn.qkv_proj.weight"};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	repl(&f, 1, PJW);
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(pg_model(LAY_V450, true, false, 2), cfg_pg2, 2, lays, 4);
	coverage(pg_model(LAY_HF5, false, false, 2), cfg_pg1, 2, lays, 4);
}

/* GemmaConfig's / Gemma2Config's class defaults for text_config keys left out (not
 * PaliGemmaConfig's own hidden_size / vocab_size), gemma when text_config has no model_type,
 * tie_word_embeddings from text_config alone. */
static void test_defaults(void **state)
{
	(void)state;
	static const char g1[] =
	    "{\"architectures\":[\"PaliGemmaForConditionalGeneration\"],\"model_type\":"
	    "\"paligemma\",\"hidden_size\":2048,\"vocab_size\":257152,\"tie_word_embeddings\":"
	    "false,"
	    "\"text_config\":{\"num_key_value_heads\":1},\"vision_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(g1, strlen(g1), &c, &err), WT_OK);
	assert_true(
	    c.hidden_size == 3072 && c.num_attention_heads == 16 && c.num_key_value_heads == 1 &&
	    c.head_dim == 256 && c.intermediate_size == 24576 && c.vocab_size == 256000 &&
	    c.num_hidden_layers == 28 && strcmp(c.lm_model_type, "gemma") == 0 && !c.tie_given);
	ckpt_config_clear(&c);
	static const char g2[] =
	    "{\"architectures\":[\"PaliGemmaForConditionalGeneration\"],\"model_type\":"
	    "\"paligemma\",\"hidden_size\":2048,\"text_config\":{\"model_type\":\"gemma2\","
	    "\"vocab_size\":257216},\"vision_config\":{}}";
	assert_int_equal(ckpt_config_parse(g2, strlen(g2), &c, &err), WT_OK);
	assert_true(c.hidden_size == 2304 && c.num_attention_heads == 8 &&
	            c.num_key_value_heads == 4 && c.head_dim == 256 &&
	            c.intermediate_size == 9216 && c.vocab_size == 257216 &&
	            c.num_hidden_layers == 26 && strcmp(c.lm_model_type, "gemma2") == 0);
	ckpt_config_clear(&c);
	/* the top level's tie_word_embeddings false is not read: tied, no lm_head needed */
	static const char top[] =
	    CFG_HEAD("\"tie_word_embeddings\":false,", "gemma2", "") VISION_CFG(VISION_KEYS);
	fx f;
	fx_open(&f, pg_model(LAY_HF5, true, false, 2), top, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
	/* text_config's false: lm_head required, then vocab-parallel */
	static const char untied[] =
	    CFG_HEAD("", "gemma2", ",\"tie_word_embeddings\":false") VISION_CFG(VISION_KEYS);
	fx_refused(pg_model(LAY_HF5, true, false, 2), untied, WT_ENOTFOUND, "lm_head.weight", "");
	fx_open(&f, pg_model(LAY_HF5, true, true, 2), untied, 2, 1, 0, false);
	assert_false(shardmap_tied_lm_head(f.p));
	shp(&f, 1, "language_model.lm_head.weight", 2, 64, HID, 0);
	fx_close(&f);
	/* vision_config's keys read as SiglipVisionConfig's (the planner's SM_SIGLIP_* defaults
	 * for the absent ones, as Gemma 3's) */
	static const char cv[] = CFG_HEAD("", "gemma2", "")
	    VISION_CFG(",\"hidden_size\":36,\"intermediate_size\":64,\"image_size\":32");
	ckpt_config vc;
	assert_int_equal(ckpt_config_parse(cv, strlen(cv), &vc, &err), WT_OK);
	assert_true(vc.has_vision && vc.v_hidden_size == 36 && !vc.v_patch_given);
	ckpt_config_clear(&vc);
}

static void test_errors(void **state)
{
	(void)state;
	/* Gemma 2's norms under a gemma text model, and missing under gemma2 */
	fx_refused(pg_model(LAY_V450, true, false, 2), cfg_pg1, WT_EUNSUPPORTED,
	           "feedforward_layernorm.weight", "text_config.model_type is gemma");
	fx_refused(pg_model(LAY_V450, false, false, 2), cfg_pg2, WT_ENOTFOUND,
	           "pre_feedforward_layernorm", "");
	/* the projector: missing weight or bias, a width other than text hidden_size */
	tm_model *m = pg_model(LAY_V450, true, false, 2);
	tm_remove(m, PJB);
	fx_refused(m, cfg_pg2, WT_ENOTFOUND, PJB, "");
	m = pg_model(LAY_V450, true, false, 2);
	tm_remove(m, PJW);
	tm_add2(m, PJW, 2 * HID, VE);
	fx_refused(m, cfg_pg2, WT_ESHAPE, PJW, "");
	/* a SigLIP head (vision_use_head) is not built by vLLM's tower here: unknown */
	m = pg_model(LAY_V450, true, false, 2);
	tm_add2(m, VT "head.probe", VE, 0);
	fx_refused(m, cfg_pg2, WT_EUNSUPPORTED, VT "head.probe", "paligemma");
	/* a block past num_hidden_layers; post_layernorm required */
	fx_refused(pg_model(LAY_V450, true, false, 3), cfg_pg2, WT_ESHAPE, VT "encoder.layers.2.",
	           "vision_config.num_hidden_layers is 2");
	m = pg_model(LAY_V450, true, false, 2);
	tm_remove(m, VT "post_layernorm.weight");
	fx_refused(m, cfg_pg2, WT_ENOTFOUND, VT "post_layernorm.weight", "");
	/* heads: 3 do not divide 32; 2 heads TP 4 cannot split; image below a patch */
	static const char cfg3h[] = CFG_HEAD("", "gemma2", "")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":3,"
	               "\"num_hidden_layers\":2,\"image_size\":8,\"patch_size\":2");
	fx_refused(pg_model(LAY_V450, true, false, 2), cfg3h, WT_ECORRUPT,
	           "num_attention_heads 3 does not divide hidden_size 32", "");
	static const char cfg2h[] = CFG_HEAD("", "gemma2", "")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":2,"
	               "\"num_hidden_layers\":2,\"image_size\":8,\"patch_size\":2");
	fx_refused_tp(pg_model(LAY_V450, true, false, 2), cfg2h, 4, WT_ELAYOUT,
	              "vision_config.num_attention_heads 2", "");
	static const char cfg_small[] = CFG_HEAD("", "gemma2", "")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":8,"
	               "\"num_hidden_layers\":2,\"image_size\":1,\"patch_size\":2");
	fx_refused(pg_model(LAY_V450, true, false, 2), cfg_small, WT_ECORRUPT, "image_size 1",
	           "patch_size 2");
	/* another language model, none, no tower */
	static const char cfg_llama[] = CFG_HEAD("", "llama", "") VISION_CFG(VISION_KEYS);
	fx_refused(pg_model(LAY_V450, false, false, 2), cfg_llama, WT_EUNSUPPORTED,
	           "text_config.model_type 'llama'", "gemma or gemma2");
	static const char cfg_nov[] = CFG_HEAD("", "gemma2", "") "}";
	fx_refused(pg_model(LAY_V450, true, false, 2), cfg_nov, WT_ECORRUPT, "needs vision_config",
	           "");
	static const char cfg_notext[] =
	    "{\"architectures\":[\"PaliGemmaForConditionalGeneration\"],\"model_type\":"
	    "\"paligemma\",\"hidden_size\":64,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	    "\"head_dim\":8,\"intermediate_size\":128,\"vocab_size\":128,"
	    "\"num_hidden_layers\":1" VISION_CFG(VISION_KEYS);
	fx_refused(pg_model(LAY_V450, true, false, 2), cfg_notext, WT_ECORRUPT,
	           "needs a text_config", "");
	/* a Gemma name outside language_model. */
	m = pg_model(LAY_V450, true, false, 2);
	tm_add2(m, "model.layers.0.input_layernorm.weight", HID, 0);
	fx_refused(m, cfg_pg2, WT_EUNSUPPORTED, "model.layers.0.input_layernorm.weight", "");
}

static tm_model *mlp_odd(void)
{
	return pg_model(LAY_V450, true, false, 2);
}

static tm_model *mlp_i96(void)
{
	return pg_model_w(LAY_V450, true, false, 2, 64, 96);
}

static tm_model *mlp_w64(void)
{
	return pg_model_w(LAY_V450, true, false, 2, 64, 128);
}

/* vLLM's siglip.py SiglipMLP: under int8-channel and fp8-block the tower's fc1 / fc2 are
 * kept BF16 without scales when its width (32) or MLP (96) is not a multiple of 64, and
 * quantized at 64 / 128; q/k/v and out_proj quantized in all three. */
static void test_siglip_mlp(void **state)
{
	(void)state;
	fx_siglip_mlp(mlp_odd, cfg_pg2, VT, 2, true);
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
