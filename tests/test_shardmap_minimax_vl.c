/*
 * test_shardmap_minimax_vl.c — MiniMax-VL-01 (MiniMaxVL01ForConditionalGeneration, model_type
 * minimax_vl_01; docs/format.md section 2.7), cut as vLLM's minimax_vl_01.py loads it: the
 * CLIP tower's, the projector's and image_newline's rank slices by hand at TP 2 and 4
 * (fx_vit_block; linear_1 and its bias by rows, linear_2 by columns with its bias replicated,
 * image_newline whole), the blocks past vision_feature_layer and post_layernorm skipped
 * (a non-negative index is the block count itself), the language model under
 * `language_model.` byte for byte the minimax family's ranks of the same weights as a
 * MiniMaxText01ForCausalLM checkpoint (TP 2 / 4 / 8, TP 2 x EP 2, int8-channel TP 2,
 * fp8-channel TP 4), the SigLIP and Pixtral towers, coverage over TP 1..8 / EP, the config
 * classes' defaults and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x5eed01f1ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"
#include "test_shardmap_minimax.h"

/* Vision: 3 blocks of width 32, 8 heads, MLP 64, image 8 / patch 2 (16 patches + the class
 * token); the LM test_shardmap_minimax.h's (hid 128, lightning layer 0, softmax layer 1). */
#define VE  32
#define VI  64
#define VNP 17
#define LMP "language_model."
#define VT  "vision_tower.vision_model."
#define VB  VT "encoder.layers.%d."
#define PJ  "multi_modal_projector."

#define MV_TEXT(extra)                                                                             \
	"\"text_config\":{\"model_type\":\"minimax_text_01\",\"hidden_size\":128,"                 \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"num_experts_per_tok\":2,"           \
	"\"intermediate_size\":64,\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define MV_LM ",\"num_local_experts\":4,\"attn_type_list\":[0,1]"
#define MV_VKEYS                                                                                   \
	"\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":8,"                   \
	"\"num_hidden_layers\":3,\"image_size\":8,\"patch_size\":2"
#define MV_VIS(mt) ",\"vision_config\":{\"model_type\":\"" mt "\"," MV_VKEYS "}"
#define MV_CFG(top, text, vis)                                                                     \
	"{\"architectures\":[\"MiniMaxVL01ForConditionalGeneration\"],\"model_type\":"             \
	"\"minimax_vl_01\"," top                                                                   \
	MV_TEXT(text) vis "}"
#define MV(top) MV_CFG(top, MV_LM, MV_VIS("clip_vision_model"))
/* the language model alone, as MiniMaxText01ForCausalLM */
#define MM_TEXT                                                                                    \
	"{\"architectures\":[\"MiniMaxText01ForCausalLM\"],\"model_type\":\"minimax_text_01\","    \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"num_experts_per_tok\":2,\"intermediate_size\":64,\"vocab_size\":1000,"                  \
	"\"num_hidden_layers\":2" MV_LM "}"

static const char cfg_mv[] = MV("");

/* tower: 0 CLIP, 1 SigLIP, 2 Pixtral */
static void add_patch(tm_model *m, const char *name)
{
	tm_add(m, name, WT_DTYPE_INVALID, 1, VE * 3 * 2 * 2, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[0] = VE;
	d->shape[1] = 3;
	d->shape[2] = d->shape[3] = 2;
}

static void add_pixtral(tm_model *m, int blocks)
{
	static const fx_leaf blk[] = {
	    {"attention_norm.weight", VE, 0},          {"attention.q_proj.weight", VE, VE},
	    {"attention.k_proj.weight", VE, VE},       {"attention.v_proj.weight", VE, VE},
	    {"attention.o_proj.weight", VE, VE},       {"ffn_norm.weight", VE, 0},
	    {"feed_forward.gate_proj.weight", VI, VE}, {"feed_forward.up_proj.weight", VI, VE},
	    {"feed_forward.down_proj.weight", VE, VI},
	};
	add_patch(m, "vision_tower.patch_conv.weight");
	tm_add2(m, "vision_tower.ln_pre.weight", VE, 0);
	for (int b = 0; b < blocks; b++)
		for (size_t k = 0; k < sizeof(blk) / sizeof(blk[0]); k++) {
			char n[200];
			snprintf(n, sizeof(n), "vision_tower.transformer.layers.%d.%s", b,
			         blk[k].leaf);
			tm_add2(m, n, blk[k].n, blk[k].k);
		}
}

/* MiniMax's LM (test_shardmap_minimax.h) under language_model., then the tower of 3 blocks,
 * the projector with its biases and image_newline. */
static tm_model *mv_model(int tower)
{
	tm_model *m = tm_minimax();
	for (size_t i = 0; i < m->n; i++) {
		char b[sizeof(m->name[0]) + 16];
		snprintf(b, sizeof(b), LMP "%s", m->name[i]);
		assert_true(strlen(b) < sizeof(m->name[0]));
		memcpy(m->name[i], b, sizeof(m->name[0]));
	}
	if (tower == 2)
		add_pixtral(m, 3);
	else
		mm_add_vit(m, LAY_V450, tower == 0, VE, VI, tower == 0 ? VNP : VNP - 1, 3);
	if (tower == 1) /* SigLIP's pooling head: vision_use_head absent, so vLLM builds it */
		fx_add_siglip_head(m, VT "head.", VE, VI);
	tm_add2(m, PJ "linear_1.weight", HID, VE);
	tm_add2(m, PJ "linear_1.bias", HID, 0);
	tm_add2(m, PJ "linear_2.weight", HID, HID);
	tm_add2(m, PJ "linear_2.bias", HID, 0);
	tm_add2(m, "image_newline", HID, 0);
	return m;
}

static tm_model *mv_clip(void)
{
	return mv_model(0);
}

/* The projector and image_newline of rank r of T. */
static void proj_rank(const fx *f, uint32_t r, uint32_t T)
{
	int64_t hl = HID / T;
	shp(f, r, PJ "linear_1.weight", 2, hl, VE, 0);
	rows_at(f, r, PJ "linear_1.weight", 0, PJ "linear_1.weight", r * hl, hl);
	shp(f, r, PJ "linear_1.bias", 1, hl, 0, 0);
	rows_at(f, r, PJ "linear_1.bias", 0, PJ "linear_1.bias", r * hl, hl);
	cols_of(f, r, T, PJ "linear_2.weight", PJ "linear_2.weight", HID, HID);
	repl(f, r, PJ "linear_2.bias");
	repl(f, r, "image_newline");
	assert_int_equal(info(f, r, "image_newline")->dtype, WT_BF16);
}

static const fx_experts XP_LM = {LMP W13, LMP W2, LMP M0 "experts.%lld.%s.weight", "w1", "w3", "w2",
                                 HID,     IE};

/* TP 2 and 4: CLIP blocks 0 and 1 (feature layer -2 of 3) by hand, block 2 and
 * post_layernorm skipped, the embeddings whole; the projector; the softmax layer's
 * attention and the experts of the LM under its prefix. */
static void test_mv_slices(void **state)
{
	(void)state;
	static const char *const rep[] = {VT "embeddings.class_embedding",
	                                  VT "embeddings.patch_embedding.weight",
	                                  VT "embeddings.position_embedding.weight",
	                                  VT "pre_layrnorm.weight", VT "pre_layrnorm.bias"};
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, mv_clip(), cfg_mv, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "minimax_vl_01");
		for (uint32_t r = 0; r < T; r++) {
			for (int blk = 0; blk < 2; blk++)
				fx_vit_block(&f, T, r, VB, blk, VE, VI);
			assert_int_equal(
			    tm_ix(f.p, r, VT "encoder.layers.2.self_attn.qkv_proj.weight"), -1);
			assert_int_equal(tm_ix(f.p, r, VT "post_layernorm.weight"), -1);
			for (size_t j = 0; j < sizeof(rep) / sizeof(rep[0]); j++)
				repl(&f, r, rep[j]);
			proj_rank(&f, r, T);
			fx_attn_is(&f, r, T, LMP A1, "o_proj.weight", 8, 2, HD, HID);
			fx_experts_are(&f, &XP_LM, r, 0, NE, IE / T * r, IE / T, false);
		}
		assert_false(shardmap_tied_lm_head(f.p));
		assert_true(fx_skipped(&f, VT "post_layernorm.weight") &&
		            fx_skipped(&f, VT "post_layernorm.bias") &&
		            fx_skipped(&f, VT "encoder.layers.2.mlp.fc1.weight"));
		assert_false(fx_skipped(&f, VT "encoder.layers.1.mlp.fc1.weight"));
		fx_close(&f);
	}
}

/* Every rank's language_model.* outputs equal the MiniMaxText01ForCausalLM checkpoint's
 * ranks of the same weights (names without the prefix), byte for byte, no more, no fewer. */
static void same_as_text(const wt_layout *l, tm_model *m, const char *cfg)
{
	fx a, b;
	fx_open_l(&a, m, cfg, l, true);
	fx_open_l(&b, tm_minimax(), MM_TEXT, l, true);
	for (uint32_t r = 0; r < l->tp_size * l->ep_size; r++)
		fx_same_rank(&a, &b, r, LMP);
	fx_close(&a);
	fx_close(&b);
}

static void test_mv_same_lm(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {2, 2}};
	for (size_t k = 0; k < sizeof(lays) / sizeof(lays[0]); k++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[k][0];
		l.ep_size = lays[k][1];
		same_as_text(&l, mv_clip(), cfg_mv);
		same_as_text(&l, mv_model(1), MV_CFG("", MV_LM, MV_VIS("siglip_vision_model")));
	}
}

static const char *const mv_keep[] = {
    LMP A0 "norm.weight", LMP M0 "gate.weight", VT "encoder.layers.0.layer_norm1.weight",
    PJ "linear_1.bias",   PJ "linear_2.bias",   "image_newline"};
static const char *const mv_quant[] = {LMP A0 "qkv_proj.weight",
                                       LMP A1 "qkv_proj.weight",
                                       LMP W13,
                                       VT "encoder.layers.1.self_attn.qkv_proj.weight",
                                       VT "encoder.layers.0.mlp.fc2.weight",
                                       PJ "linear_1.weight",
                                       PJ "linear_2.weight"};

/* int8-channel at TP 2: the projector's weights (given the quant_config), the tower's and the
 * LM's Linears quantized; biases, norms, routers and image_newline BF16; rank 1's linear_2
 * codes its columns. fp8-channel at TP 4 the same split. The LM byte for byte the text
 * checkpoint's either way. */
static void test_mv_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, mv_clip(), cfg_mv, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(mv_keep),
	              FX_N(mv_quant));
	fx_cols_int8_is(&f, 1, 2, PJ "linear_2.weight", HID, HID);
	fx_cols_int8_is(&f, 1, 2, LMP A1 "o_proj.weight", HID, QD);
	fx_close(&f);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	same_as_text(&l, mv_clip(), cfg_mv);
	fx_open_quant(&f, mv_clip(), cfg_mv, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(mv_keep),
	              FX_N(mv_quant));
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	same_as_text(&l, mv_clip(), cfg_mv);
}

/* SigLIP and Pixtral towers (init_vision_tower_for_MiniMaxVL01 picks by vision_config): the
 * blocks by hand at TP 2 / 4, the projector and image_newline as with CLIP; coverage. */
static void test_mv_towers(void **state)
{
	(void)state;
	static const char cfg_sig[] = MV_CFG("", MV_LM, MV_VIS("siglip_vision_model"));
	static const char cfg_pix[] =
	    MV_CFG("\"vision_feature_layer\":-1,", MV_LM, MV_VIS("pixtral"));
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, mv_model(1), cfg_sig, T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++) {
			for (int blk = 0; blk < 2; blk++)
				fx_vit_block(&f, T, r, VB, blk, VE, VI);
			assert_int_equal(tm_ix(f.p, r, VT "embeddings.class_embedding"), -1);
			repl(&f, r, VT "embeddings.patch_embedding.bias");
			fx_siglip_head_is(&f, T, r, VT "head.", VE, VI);
			proj_rank(&f, r, T);
		}
		assert_true(fx_skipped(&f, VT "encoder.layers.2.mlp.fc1.weight") &&
		            fx_skipped(&f, VT "post_layernorm.weight"));
		fx_close(&f);
		fx_open(&f, mv_model(2), cfg_pix, T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++) {
			for (int blk = 0; blk < 3; blk++)
				fx_pixtral_block(&f, T, r, "vision_tower.transformer.layers.%d.",
				                 blk, VE, VI);
			repl(&f, r, "vision_tower.patch_conv.weight");
			repl(&f, r, "vision_tower.ln_pre.weight");
			proj_rank(&f, r, T);
		}
		fx_close(&f);
	}
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 2}};
	coverage(mv_model(1), cfg_sig, 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(mv_model(2), cfg_pix, 2, lays, sizeof(lays) / sizeof(lays[0]));
	/* Pixtral at feature layer 1: _get_layer_index keeps 1 block, blocks 1 and 2 skipped */
	static const char cfg_pix1[] =
	    MV_CFG("\"vision_feature_layer\":1,", MV_LM, MV_VIS("pixtral"));
	fx f;
	fx_open(&f, mv_model(2), cfg_pix1, 2, 1, 0, false);
	assert_true(fx_skipped(&f, "vision_tower.transformer.layers.1.ffn_norm.weight") &&
	            fx_skipped(&f, "vision_tower.transformer.layers.2.ffn_norm.weight"));
	assert_false(fx_skipped(&f, "vision_tower.transformer.layers.0.ffn_norm.weight"));
	fx_close(&f);
}

static void test_mv_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 2}};
	coverage(mv_clip(), cfg_mv, 2, lays, sizeof(lays) / sizeof(lays[0]));
	/* a non-negative feature layer is the block count itself (MiniMax's _get_layer_index):
	 * 1 keeps block 0 only */
	static const char cfg_fl1[] = MV("\"vision_feature_layer\":1,");
	coverage(mv_clip(), cfg_fl1, 2, lays, 2);
	fx f;
	fx_open(&f, mv_clip(), cfg_fl1, 2, 1, 0, false);
	assert_true(fx_skipped(&f, VT "encoder.layers.1.mlp.fc1.weight") &&
	            fx_skipped(&f, VT "encoder.layers.2.mlp.fc1.weight"));
	assert_false(fx_skipped(&f, VT "encoder.layers.0.mlp.fc1.weight"));
	fx_close(&f);
	/* feature layer -1: every block built, post_layernorm still dropped
	 * (require_post_norm=False) */
	fx_open(&f, mv_clip(), MV("\"vision_feature_layer\":-1,"), 2, 1, 0, false);
	assert_true(fx_skipped(&f, VT "post_layernorm.weight"));
	assert_false(fx_skipped(&f, VT "encoder.layers.2.mlp.fc1.weight"));
	fx_close(&f);
	/* the lightning buffers a transformers-saved LM holds: dropped (vLLM computes them) */
	tm_model *m = mv_clip();
	tm_add2(m, LMP A0 "slope_rate", 8, 0);
	fx_open(&f, m, cfg_mv, 2, 1, 0, false);
	assert_true(fx_skipped(&f, LMP A0 "slope_rate"));
	assert_int_equal(tm_ix(f.p, 0, LMP A0 "slope_rate"), -1);
	fx_close(&f);
	/* the top level's tie_word_embeddings is not the text model's (vLLM builds the LM of
	 * text_config, which never ties) */
	coverage(mv_clip(), MV("\"tie_word_embeddings\":true,"), 2, lays, 2);
	/* multimodal_projector_bias false: vLLM passes True whatever config.json says */
	coverage(mv_clip(), MV("\"multimodal_projector_bias\":false,"), 2, lays, 2);
}

/* MiniMaxVL01Config's defaults: vision_feature_layer -2, a CLIP tower; text_config a
 * MiniMaxText01Config (8 experts, vocab 32000, 14336, untied). */
static void test_mv_defaults(void **state)
{
	(void)state;
	static const char cls[] =
	    "{\"architectures\":[\"MiniMaxVL01ForConditionalGeneration\"],\"model_type\":"
	    "\"minimax_vl_01\",\"text_config\":{\"model_type\":\"minimax_text_01\","
	    "\"num_hidden_layers\":2,\"attn_type_list\":[0,1]},\"vision_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.hidden_size == 4096 && c.num_experts == 8 && c.vocab_size == 32000 &&
	            c.intermediate_size == 14336 && c.v_feature_layer == -2 &&
	            !c.tie_word_embeddings && strcmp(c.v_model_type, "clip_vision_model") == 0 &&
	            strcmp(c.lm_model_type, "minimax_text_01") == 0);
	ckpt_config_clear(&c);
	fx_refused(mv_clip(), MV_CFG("", ",\"attn_type_list\":[0,1]", MV_VIS("clip_vision_model")),
	           WT_ESHAPE, "[8, 128]", "fix config.json");
}

static void test_mv_errors(void **state)
{
	(void)state;
	fx_refused(mv_clip(), MV_CFG("", "", MV_VIS("clip_vision_model")), WT_EUNSUPPORTED,
	           "attn_type_list is missing", "one per layer");
	fx_refused(mv_clip(),
	           MV_CFG("", MV_LM ",\"tie_word_embeddings\":true", MV_VIS("clip_vision_model")),
	           WT_EUNSUPPORTED, "tie_word_embeddings is true", "never ties");
	fx_refused(
	    mv_clip(),
	    "{\"architectures\":[\"MiniMaxVL01ForConditionalGeneration\"],\"model_type\":"
	    "\"minimax_vl_01\",\"text_config\":{\"hidden_size\":128,\"num_attention_heads\":8,"
	    "\"num_hidden_layers\":2,\"intermediate_size\":64,\"vocab_size\":1000}" MV_VIS(
	        "clip_vision_model") "}",
	    WT_ECORRUPT, "text_config.model_type is missing", "asserts it");
	fx_refused(mv_clip(),
	           "{\"architectures\":[\"MiniMaxVL01ForConditionalGeneration\"],\"model_type\":"
	           "\"minimax_vl_01\",\"hidden_size\":128,\"num_attention_heads\":8,"
	           "\"num_hidden_layers\":2,\"intermediate_size\":64,\"vocab_size\":1000,"
	           "\"num_local_experts\":4" MV_VIS("clip_vision_model") "}",
	           WT_ECORRUPT, "needs a text_config object", "minimax_text_01");
	fx_refused(mv_clip(),
	           "{\"architectures\":[\"MiniMaxVL01ForConditionalGeneration\"],\"model_type\":"
	           "\"minimax_vl_01\",\"text_config\":{\"model_type\":\"llama\",\"hidden_size\":"
	           "128,\"num_attention_heads\":8,\"num_hidden_layers\":2,\"intermediate_size\":64,"
	           "\"vocab_size\":1000}" MV_VIS("clip_vision_model") "}",
	           WT_EUNSUPPORTED, "text_config.model_type 'llama'", "MiniMaxText01Config");
	fx_refused(mv_clip(), MV_CFG("", MV_LM, ""), WT_ECORRUPT, "needs vision_config", "");
	fx_refused(mv_clip(), MV_CFG("", MV_LM, MV_VIS("idefics3_vision")), WT_EUNSUPPORTED,
	           "vision_config.model_type 'idefics3_vision'",
	           "init_vision_tower_for_MiniMaxVL01");
	fx_refused(mv_clip(), MV("\"vision_feature_layer\":[-2,-1],"), WT_EUNSUPPORTED,
	           "vision_feature_layer is a list", "MiniMaxVL01MultiModalProjector");
	fx_refused(mv_clip(), MV("\"vision_feature_layer\":4,"), WT_ECORRUPT,
	           "vision_feature_layer 4", "num_hidden_layers");
	/* the projector's biases and image_newline are always built */
	tm_model *m = mv_clip();
	tm_remove(m, PJ "linear_1.bias");
	fx_refused(m, MV("\"multimodal_projector_bias\":false,"), WT_ENOTFOUND, PJ "linear_1.bias",
	           "");
	m = mv_clip();
	tm_remove(m, "image_newline");
	fx_refused(m, cfg_mv, WT_ENOTFOUND, "image_newline", "");
	m = mv_clip();
	tm_remove(m, "image_newline");
	tm_add2(m, "image_newline", VE, 0);
	fx_refused(m, cfg_mv, WT_ESHAPE, "image_newline", "[128]");
	/* the layer kinds swapped: layer 0 then needs q/k/v */
	fx_refused(mv_clip(),
	           MV_CFG("", ",\"num_local_experts\":4,\"attn_type_list\":[1,0]",
	                  MV_VIS("clip_vision_model")),
	           WT_EUNSUPPORTED, LMP A0, "text_config.attn_type_list");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mv_slices),   cmocka_unit_test(test_mv_same_lm),
	    cmocka_unit_test(test_mv_quant),    cmocka_unit_test(test_mv_towers),
	    cmocka_unit_test(test_mv_coverage), cmocka_unit_test(test_mv_defaults),
	    cmocka_unit_test(test_mv_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
