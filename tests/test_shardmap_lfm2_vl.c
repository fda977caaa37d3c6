/*
 * test_shardmap_lfm2_vl.c — LFM2-VL (Lfm2VlForConditionalGeneration: LiquidAI/LFM2-VL-450M /
 * -1.6B) cut as vLLM's lfm2_vl.py / lfm2_siglip2.py / lfm2.py load it: LFM2's language model
 * under language_model. (short conv split per segment and by channels, never quantized;
 * attention q/k/v fused by heads; w1 / w3 merged), the SigLIP2 tower (the patch nn.Linear and
 * the num_patches position table whole and unquantized; q/k/v with biases fused by heads,
 * out_proj by columns, fc1 by rows, fc2 by columns, quantized; post_layernorm kept) and the
 * projector (layer_norm, linear_1, linear_2 whole on every rank and never quantized; biases
 * exactly when projector_bias). Hand-computed slices at TP 2 and TP 4, the released and
 * transformers 4.57 name layouts byte for byte (and the LM against Lfm2ForCausalLM), int8 /
 * fp8 layouts, coverage over TP 1..8, Lfm2VlConfig / Siglip2VisionConfig / Lfm2Config
 * defaults, the tie, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0f1dull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* Text: hid 128, H 8, KV 2, head_dim 16, MLP 256 (intermediate_size 300 by Lfm2MLP's rule
 * with block_multiple_of 64), V 1000, 2 layers (0 conv, 1 attention). Tower: width 64, 8
 * heads, MLP 128, 2 blocks, 3 x 4^2 = 48 wide patches, 16 positions; downsample_factor 2:
 * projector layer_norm 256, linear_1 [96, 256], linear_2 [128, 96]. */
#define HID 128
#define HD  16
#define FF  256
#define VE  64
#define VI  128
#define UNF 48
#define VM  256
#define PH  96
#define TXT                                                                                        \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"vocab_size\":1000,\"num_hidden_layers\":2,\"intermediate_size\":300,"                   \
	"\"block_multiple_of\":64,\"layer_types\":[\"conv\",\"full_attention\"]"
#define VIS_AT(extra)                                                                              \
	"\"hidden_size\":64,\"intermediate_size\":128,\"num_attention_heads\":8,"                  \
	"\"num_hidden_layers\":2,\"num_channels\":3" extra
#define VIS                                                                                        \
	VIS_AT(",\"model_type\":\"siglip2_vision_model\",\"num_patches\":16,"                      \
	       "\"patch_size\":4,\"vision_use_head\":false")
#define LV_HEAD_AT(mt)                                                                             \
	"{\"architectures\":[\"Lfm2VlForConditionalGeneration\"],\"model_type\":\"" mt "\","
#define LV_HEAD LV_HEAD_AT("lfm2-vl")
/* top: top-level keys after projector_hidden_size; vis: vision_config's; text: text_config's
 * (after model_type lfm2 and TXT) */
#define LV_CFG_AT(top, vis, text)                                                                  \
	LV_HEAD "\"projector_hidden_size\":96" top ",\"vision_config\":{" vis "},"                 \
	        "\"text_config\":{\"model_type\":\"lfm2\"," TXT text "}}"
#define LV_CFG(top, text) LV_CFG_AT(top, VIS, text)
#define UNTIED            ",\"tie_embedding\":false"
#define LV_OK             LV_CFG("", UNTIED)
#define LF_CFG            "{\"architectures\":[\"Lfm2ForCausalLM\"],\"model_type\":\"lfm2\"," TXT UNTIED "}"
#define LM                "language_model.model."
#define L0                LM "layers.0."
#define A1                LM "layers.1.self_attn."
#define C0                L0 "conv."
#define S0                L0 "short_conv."
#define HEAD              "language_model.lm_head.weight"
#define VT                "vision_tower.vision_model."
#define VB                VT "encoder.layers.%d."
#define PJ                "multi_modal_projector."

/* Checkpoint name layouts (test_shardmap_fx.h's): vLLM's module names, transformers 4.57.1's
 * (what LFM2-VL releases and save_pretrained write), and Lfm2ForCausalLM's alone. */
#define LAY_VL LAY_V450
#define LAY_HF LAY_HF5

/* Canonical name c (Lfm2ForCausalLM's names for the language model) in layout y. */
static void add_c(tm_model *m, lay y, const char *c, int64_t a, int64_t b)
{
	mm_add(m, y, c, a, b);
}

/* The model in layout y; lm_head when head, the projector's biases when pbias. */
static tm_model *tm_lv(lay y, bool head, bool pbias)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_c(m, y, "model.embed_tokens.weight", 1000, HID);
	add_c(m, y, "model.embedding_norm.weight", HID, 0);
	if (head)
		add_c(m, y, "lm_head.weight", 1000, HID);
	for (int i = 0; i < 2; i++) {
		char n[96];
		static const fx_leaf t[] = {{"operator_norm.weight", HID, 0},
		                            {"ffn_norm.weight", HID, 0},
		                            {"feed_forward.w1.weight", FF, HID},
		                            {"feed_forward.w3.weight", FF, HID},
		                            {"feed_forward.w2.weight", HID, FF}};
		for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
			snprintf(n, sizeof(n), "model.layers.%d.%s", i, t[k].leaf);
			add_c(m, y, n, t[k].n, t[k].k);
		}
	}
	char n[200];
	add_c(m, y, "model.layers.0.conv.in_proj.weight", 3 * HID, HID);
	mm_ck_name(n, sizeof(n), "model.layers.0.conv.conv.weight", y);
	tm_add(m, n, WT_DTYPE_INVALID, 3, HID, 1, 3);
	add_c(m, y, "model.layers.0.conv.out_proj.weight", HID, HID);
	static const fx_leaf at[] = {
	    {"q_proj.weight", 8 * HD, HID}, {"k_proj.weight", 2 * HD, HID},
	    {"v_proj.weight", 2 * HD, HID}, {"out_proj.weight", HID, 8 * HD},
	    {"q_layernorm.weight", HD, 0},  {"k_layernorm.weight", HD, 0}};
	for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
		snprintf(n, sizeof(n), "model.layers.1.self_attn.%s", at[k].leaf);
		add_c(m, y, n, at[k].n, at[k].k);
	}
	if (y == LAY_TEXT)
		return m;
	add_c(m, y, VT "embeddings.patch_embedding.weight", VE, UNF);
	add_c(m, y, VT "embeddings.patch_embedding.bias", VE, 0);
	add_c(m, y, VT "embeddings.position_embedding.weight", 16, VE);
	static const fx_leaf blk[] = {FX_VIT_BLOCK_LEAVES(VE, VI)};
	for (int b = 0; b < 2; b++)
		for (size_t k = 0; k < sizeof(blk) / sizeof(blk[0]); k++) {
			snprintf(n, sizeof(n), VT "encoder.layers.%d.%s", b, blk[k].leaf);
			add_c(m, y, n, blk[k].n, blk[k].k);
		}
	add_c(m, y, VT "post_layernorm.weight", VE, 0);
	add_c(m, y, VT "post_layernorm.bias", VE, 0);
	add_c(m, y, PJ "layer_norm.weight", VM, 0);
	add_c(m, y, PJ "layer_norm.bias", VM, 0);
	add_c(m, y, PJ "linear_1.weight", PH, VM);
	add_c(m, y, PJ "linear_2.weight", HID, PH);
	if (pbias) {
		add_c(m, y, PJ "linear_1.bias", PH, 0);
		add_c(m, y, PJ "linear_2.bias", HID, 0);
	}
	return m;
}

/* What every rank holds whole: the LM's norms, the tower's embeddings and post_layernorm,
 * the projector. */
static void whole(const fx *f, uint32_t r)
{
	static const char *const w[] = {LM "embedding_norm.weight",
	                                L0 "operator_norm.weight",
	                                A1 "q_layernorm.weight",
	                                A1 "k_layernorm.weight",
	                                VT "post_layernorm.weight",
	                                VT "post_layernorm.bias",
	                                PJ "layer_norm.weight",
	                                PJ "layer_norm.bias",
	                                PJ "linear_1.weight",
	                                PJ "linear_1.bias",
	                                PJ "linear_2.weight",
	                                PJ "linear_2.bias",
	                                VT "embeddings.patch_embedding.bias"};
	for (size_t k = 0; k < sizeof(w) / sizeof(w[0]); k++)
		repl(f, r, w[k]);
	shp(f, r, VT "embeddings.patch_embedding.weight", 2, VE, UNF, 0);
	repl(f, r, VT "embeddings.patch_embedding.weight");
	shp(f, r, VT "embeddings.position_embedding.weight", 2, 16, VE, 0);
	repl(f, r, VT "embeddings.position_embedding.weight");
}

/* Rank r of T's short conv (in_proj [B_r; C_r; x_r], conv channels, out_proj columns), the
 * attention's [q_r; k_r; v_r] (KV 2: ranks share a kv head past TP 2) and the MLP. */
static void lm_rank(const fx *f, uint32_t r, uint32_t T)
{
	int64_t n = HID / T;
	shp(f, r, S0 "in_proj.weight", 2, 3 * n, HID, 0);
	for (int64_t k = 0; k < 3; k++)
		rows_at(f, r, S0 "in_proj.weight", k * n, C0 "in_proj.weight", k * HID + r * n, n);
	rows_at(f, r, S0 "conv.weight", 0, C0 "conv.weight", r * n, n);
	cols_of(f, r, T, S0 "out_proj.weight", C0 "out_proj.weight", HID, HID);
	fx_attn_is(f, r, T, A1, "out_proj.weight", 8, 2, HD, HID);
	const char *w13 = L0 "feed_forward.w13.weight";
	rows_at(f, r, w13, 0, L0 "feed_forward.w1.weight", r * (FF / T), FF / T);
	rows_at(f, r, w13, FF / T, L0 "feed_forward.w3.weight", r * (FF / T), FF / T);
	cols_of(f, r, T, L0 "feed_forward.w2.weight", L0 "feed_forward.w2.weight", HID, FF);
}

static void test_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_lv(LAY_VL, true, true), LV_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "lfm2_vl");
	for (uint32_t r = 0; r < 2; r++) {
		whole(&f, r);
		lm_rank(&f, r, 2);
		for (int b = 0; b < 2; b++)
			fx_vit_block(&f, 2, r, VB, b, VE, VI);
	}
	/* vocabulary rows: 1000 padded to 1024, rank 1 rows [512, 1000) then zeros */
	shp(&f, 1, HEAD, 2, 512, HID, 0);
	rows_are(&f, 1, HEAD, 0, HEAD, 512, 488);
	rows_are(&f, 0, LM "embed_tokens.weight", 0, LM "embed_tokens.weight", 0, 512);
	/* LM 3 + 2 x 4 + 3 + 4, tower 3 + 2 x 12 + 2, projector 6 */
	assert_int_equal(shardmap_rank_n_tensors(f.p, 0), 18 + 29 + 6);
	fx_close(&f);
}

/* TP 4: two heads a rank, a kv head per two ranks; tied by Lfm2Config's default (the
 * text_config says nothing). */
static void test_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_lv(LAY_VL, false, true), LV_CFG("", ""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		whole(&f, r);
		lm_rank(&f, r, 4);
		for (int b = 0; b < 2; b++)
			fx_vit_block(&f, 4, r, VB, b, VE, VI);
		assert_true(tm_ix(f.p, r, HEAD) < 0);
	}
	fx_close(&f);
}

/* transformers 4.57's names give vLLM's names' runtime names and bytes; the language model's
 * are Lfm2ForCausalLM's under language_model. */
static void test_layouts(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T += 2) {
		fx_same_layouts(tm_lv(LAY_VL, true, true), tm_lv(LAY_HF, true, true), LV_OK,
		                tm_lv(LAY_TEXT, true, true), LF_CFG, T, 1, "language_model.");
	}
}

/* int8-channel TP 2: the tower's q/k/v, out_proj, fc1, fc2 and the LM's attention and MLP
 * quantized; the patch Linear, the position table, the projector (ReplicatedLinear without
 * quant_config), the short conv, norms, biases and vocabulary kept BF16; fp8-channel TP 4
 * alike. */
static void test_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {VT "embeddings.patch_embedding.weight",
	                                   VT "embeddings.position_embedding.weight",
	                                   PJ "linear_1.weight",
	                                   PJ "linear_2.weight",
	                                   PJ "linear_1.bias",
	                                   PJ "layer_norm.weight",
	                                   S0 "in_proj.weight",
	                                   S0 "conv.weight",
	                                   S0 "out_proj.weight",
	                                   LM "embed_tokens.weight",
	                                   HEAD,
	                                   VT "encoder.layers.1.self_attn.qkv_proj.bias",
	                                   VT "encoder.layers.1.mlp.fc1.bias"};
	static const char *const q8[] = {VT "encoder.layers.1.self_attn.qkv_proj.weight",
	                                 VT "encoder.layers.0.self_attn.out_proj.weight",
	                                 VT "encoder.layers.1.mlp.fc1.weight",
	                                 VT "encoder.layers.1.mlp.fc2.weight",
	                                 A1 "qkv_proj.weight",
	                                 A1 "out_proj.weight",
	                                 L0 "feed_forward.w13.weight",
	                                 L0 "feed_forward.w2.weight"};
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, tm_lv(LAY_HF, true, true), LV_OK, &l, true);
	const char *fc1 = VT "encoder.layers.1.mlp.fc1.weight";
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, fc1);
	const float *sc =
	    (const float *)out_bytes(&f, 1, VT "encoder.layers.1.mlp.fc1.weight_scale");
	for (int64_t row = 0; row < VI / 2; row++) {
		size_t rowb;
		const uint16_t *x = (const uint16_t *)src_rows(
		    &f, "model." VT "encoder.layers.1.mlp.fc1.weight", VI / 2 + row, &rowb);
		int8_row_is(q + row * VE, sc[row], x, VE);
	}
	for (uint32_t r = 0; r < 2; r++)
		fx_quant_split(&f, r, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
		               sizeof(q8) / sizeof(q8[0]));
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, tm_lv(LAY_VL, true, true), LV_OK, &l, true);
	for (uint32_t r = 0; r < 4; r++) {
		for (size_t k = 0; k < sizeof(q8) / sizeof(q8[0]); k++)
			assert_int_equal(info(&f, r, q8[k])->dtype, WT_F8_E4M3);
		for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
			assert_int_equal(info(&f, r, keep[k])->dtype, WT_BF16);
	}
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_lv(LAY_VL, true, true), LV_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_lv(LAY_HF, true, true), LV_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_lv(LAY_HF, false, false), LV_CFG(",\"projector_bias\":false", ""), 2, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* Lfm2VlConfig's downsample_factor 2, projector_hidden_size 2560, projector_bias true, a
 * text_config without model_type lfm2, the tie text_config's alone (Lfm2Config's true when
 * absent); Siglip2VisionConfig's defaults for absent vision_config keys (model_type,
 * hidden_size 768, num_patches 256, patch_size 16, num_channels 3). */
static void test_defaults(void **state)
{
	(void)state;
	fx a, b;
	fx_open(&a, tm_lv(LAY_HF, true, true), LV_OK, 2, 1, 0, true);
	fx_open(
	    &b, tm_lv(LAY_HF, true, true),
	    LV_HEAD "\"projector_hidden_size\":96,\"vision_config\":{" VIS_AT(
	        ",\"num_patches\":16,\"patch_size\":4,\"vision_use_head\":false") "},"
	                                                                          "\"text_config\":"
	                                                                          "{" TXT UNTIED
	                                                                          "}}",
	    2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	fx_close(&b);
	/* model_type lfm2_vl (transformers' registry key) as lfm2-vl (what Lfm2VlConfig writes):
	 * the same reading, the tie text_config's */
	fx_open(&b, tm_lv(LAY_HF, true, true),
	        LV_HEAD_AT("lfm2_vl") "\"projector_hidden_size\":96,\"tie_word_embeddings\":true,"
	                              "\"vision_config\":{" VIS "},\"text_config\":{" TXT UNTIED
	                              "}}",
	        2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	fx_close(&b);
	fx_close(&a);
	/* downsample_factor 2 when absent; 4 makes the projector 64 x 16 wide */
	fx_refused(tm_lv(LAY_HF, true, true), LV_CFG(",\"downsample_factor\":4", UNTIED), WT_ESHAPE,
	           PJ "layer_norm.", "1024");
	/* projector_hidden_size 2560 when absent */
	fx_refused(tm_lv(LAY_HF, true, true),
	           LV_HEAD "\"vision_config\":{" VIS "},\"text_config\":{" TXT UNTIED "}}",
	           WT_ESHAPE, PJ "linear_1.", "2560");
	/* projector_bias true when absent: the biases required */
	tm_model *m = tm_lv(LAY_HF, true, false);
	fx_refused(m, LV_OK, WT_ENOTFOUND, PJ "linear_1.bias", "missing");
	fx_open(&a, tm_lv(LAY_HF, true, false), LV_CFG(",\"projector_bias\":false", UNTIED), 2, 1,
	        0, true);
	assert_true(tm_ix(a.p, 0, PJ "linear_1.bias") < 0);
	fx_close(&a);
	/* the tie: text_config's alone; a top-level key says nothing either way */
	fx_refused(tm_lv(LAY_HF, false, true), LV_CFG(",\"tie_word_embeddings\":true", UNTIED),
	           WT_ENOTFOUND, "lm_head.weight", "");
	fx_open(&a, tm_lv(LAY_HF, false, true), LV_CFG(",\"tie_word_embeddings\":false", ""), 2, 1,
	        0, true);
	assert_true(tm_ix(a.p, 0, HEAD) < 0);
	fx_close(&a);
	fx_open(&a, tm_lv(LAY_VL, false, true), LV_CFG("", ",\"tie_word_embeddings\":true"), 2, 1,
	        0, true);
	assert_true(tm_ix(a.p, 1, HEAD) < 0);
	fx_close(&a);
	/* Siglip2VisionConfig's hidden_size 768, num_patches 256, patch_size 16 */
	fx_refused(tm_lv(LAY_HF, true, true),
	           LV_CFG_AT("",
	                     "\"intermediate_size\":128,\"num_attention_heads\":8,"
	                     "\"num_hidden_layers\":2,\"num_patches\":16,\"patch_size\":4,"
	                     "\"vision_use_head\":false",
	                     UNTIED),
	           WT_ESHAPE, "3072", ""); /* 768 x 2^2 */
	fx_refused(tm_lv(LAY_HF, true, true),
	           LV_CFG_AT("", VIS_AT(",\"patch_size\":4,\"vision_use_head\":false"), UNTIED),
	           WT_ESHAPE, "position_embedding", "256");
	fx_refused(tm_lv(LAY_HF, true, true),
	           LV_CFG_AT("", VIS_AT(",\"num_patches\":16,\"vision_use_head\":false"), UNTIED),
	           WT_ESHAPE, "patch_embedding", "768");
	/* Lfm2Config's defaults read from text_config: conv_L_cache 3 (the fixture's) */
	fx_refused(tm_lv(LAY_HF, true, true), LV_CFG("", UNTIED ",\"conv_L_cache\":4"), WT_ESHAPE,
	           "conv.conv.weight", "4");
}

static void test_errors(void **state)
{
	(void)state;
	/* Lfm2VlConfig builds a default Lfm2Config without a text_config */
	fx_refused(tm_lv(LAY_HF, true, true),
	           LV_HEAD "\"projector_hidden_size\":96,\"vision_config\":{" VIS "}," TXT "}",
	           WT_ECORRUPT, "needs a text_config", "Lfm2Config");
	fx_refused(tm_lv(LAY_HF, true, true),
	           LV_HEAD "\"projector_hidden_size\":96,\"vision_config\":{" VIS "},"
	                   "\"text_config\":{\"model_type\":\"llama\"," TXT "}}",
	           WT_EUNSUPPORTED, "text_config.model_type 'llama'", "lfm2");
	fx_refused(tm_lv(LAY_HF, true, true),
	           LV_HEAD
	           "\"projector_hidden_size\":96,\"text_config\":{\"model_type\":\"lfm2\"," TXT
	           "}}",
	           WT_ECORRUPT, "needs vision_config", "num_patches");
	/* the loader's: another tower, a pooling head, no projector LayerNorm */
	fx_refused(tm_lv(LAY_HF, true, true),
	           LV_CFG_AT("",
	                     VIS_AT(",\"model_type\":\"siglip_vision_model\",\"num_patches\":16,"
	                            "\"patch_size\":4,\"vision_use_head\":false"),
	                     UNTIED),
	           WT_EUNSUPPORTED, "'siglip_vision_model'", "siglip2_vision_model");
	fx_refused(tm_lv(LAY_HF, true, true),
	           LV_CFG_AT("", VIS_AT(",\"num_patches\":16,\"patch_size\":4"), UNTIED),
	           WT_EUNSUPPORTED, "vision_use_head is absent", "set it false");
	fx_refused(
	    tm_lv(LAY_HF, true, true),
	    LV_CFG_AT("", VIS_AT(",\"num_patches\":16,\"patch_size\":4,\"vision_use_head\":true"),
	              UNTIED),
	    WT_EUNSUPPORTED, "vision_use_head is not false", "head.*");
	fx_refused(tm_lv(LAY_HF, true, true), LV_CFG(",\"projector_use_layernorm\":false", UNTIED),
	           WT_EUNSUPPORTED, "projector_use_layernorm", "layer_norm");
	/* a position table that is no square grid; heads not dividing the width */
	fx_refused(
	    tm_lv(LAY_HF, true, true),
	    LV_CFG_AT("", VIS_AT(",\"num_patches\":15,\"patch_size\":4,\"vision_use_head\":false"),
	              UNTIED),
	    WT_ECORRUPT, "num_patches 15", "square");
	fx_refused(tm_lv(LAY_HF, true, true),
	           LV_CFG_AT("",
	                     "\"hidden_size\":64,\"intermediate_size\":128,\"num_attention_heads\":"
	                     "6,\"num_hidden_layers\":2,\"num_patches\":16,\"patch_size\":4,"
	                     "\"vision_use_head\":false",
	                     UNTIED),
	           WT_ECORRUPT, "num_attention_heads 6", "hidden_size 64");
	/* projector biases with projector_bias false; a pooling head's tensor */
	fx_refused(tm_lv(LAY_HF, true, true), LV_CFG(",\"projector_bias\":false", UNTIED),
	           WT_EUNSUPPORTED, PJ "linear_1.bias", "'s projector_bias is false (");
	tm_model *m = tm_lv(LAY_HF, true, true);
	tm_add2(m, "model." VT "head.probe", 1, VE);
	fx_refused(m, LV_OK, WT_EUNSUPPORTED, VT "head.probe", "lfm2_vl");
	m = tm_lv(LAY_HF, true, true);
	tm_remove(m, "model." VT "post_layernorm.bias");
	fx_refused(m, LV_OK, WT_ENOTFOUND, VT "post_layernorm.bias", "missing");
	/* LFM2's refusals, read from text_config */
	fx_refused(tm_lv(LAY_HF, true, true), LV_CFG("", UNTIED ",\"head_dim\":32"),
	           WT_EUNSUPPORTED, "head_dim 32", "lfm2.py");
	fx_refused(tm_lv(LAY_HF, true, true),
	           LV_CFG("", UNTIED ",\"block_ffn_dim_multiplier\":null"), WT_EUNSUPPORTED,
	           "block_ffn_dim_multiplier null", "");
	fx_refused_tp(tm_lv(LAY_HF, true, true), LV_OK, 3, WT_ELAYOUT, "", "");
	/* 8 vision heads: TP 16 splits neither them nor the text's */
	fx_refused_tp(tm_lv(LAY_HF, true, true), LV_OK, 16, WT_ELAYOUT, "", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tp2),      cmocka_unit_test(test_tp4),
	    cmocka_unit_test(test_layouts),  cmocka_unit_test(test_quant),
	    cmocka_unit_test(test_coverage), cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
