/*
 * test_shardmap_paddleocr_vl.c — PaddleOCR-VL (PaddleOCRVLForConditionalGeneration;
 * docs/format.md section 2.7), cut as vLLM's paddleocr_vl.py / siglip.py / ernie45.py
 * (llama.py) load it: the visual.vision_model.* SigLIP block's rank slices by hand at TP 2 and
 * 4 (q/k/v and their biases fused by heads into qkv_proj, out_proj and fc2 by columns, fc1 by
 * rows, the rest whole), the embeddings and post_layernorm whole, mlp_AR (plain torch modules)
 * whole and never quantized; the language model byte for byte the ernie4_5 family's ranks of
 * the same weights (TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4); which tensors are
 * quantized (SiglipMLP's fc1 / fc2 only when the tower's sizes are multiples of 64);
 * coverage; a pooling head and a packing table skipped; the config read; the refusals. Seed
 * fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x70616464ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_tower.h"
#include "test_shardmap_same_lm.h"

/* the LM (ERNIE 4.5): hid 128, H 8, KV 2, d 32 (H d = 256, not hid), I 192, V 1000 (padded
 * 1024), 2 layers; the tower: width 64, 8 heads of 8, MLP 128 (96: SiglipMLP unquantized),
 * image 4 / patch 2 (4 positions), 2 blocks; the merged width 256 */
#define HID 128
#define HD  32
#define I   192
#define V   1000
#define VP  1024
#define VE  64
#define VI  128
#define VM  256
#define L1  "model.layers.1."
#define VT  "visual.vision_model."
#define VB  VT "encoder.layers.%d."
#define P   "mlp_AR."

#define ARCH "PaddleOCRVLForConditionalGeneration"
#define LMK0                                                                                       \
	"\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"                 \
	"\"head_dim\":32,\"vocab_size\":1000,\"num_hidden_layers\":2,\"use_bias\":false,"          \
	"\"rope_scaling\":{\"type\":\"default\",\"mrope_section\":[4,6,6]}"
#define LMK "\"num_key_value_heads\":2," LMK0
#define VKEYS(inter, heads, merge)                                                                 \
	"\"vision_config\":{\"hidden_size\":64,\"intermediate_size\":" inter                       \
	",\"num_hidden_layers\":2,\"num_attention_heads\":" heads ",\"image_size\":4,"             \
	"\"patch_size\":2,\"spatial_merge_size\":" merge "}"
#define CFGL(top, lm, vis)                                                                         \
	"{\"architectures\":[\"" ARCH "\"],\"model_type\":\"paddleocr_vl\"," top lm "," vis "}"
#define CFGA(top, vis) CFGL(top, LMK, vis)
#define UNTIED         "\"tie_word_embeddings\":false,"

static const char cfg[] = CFGA(UNTIED, VKEYS("128", "8", "2"));
static const char text_cfg[] = "{\"architectures\":[\"Ernie4_5ForCausalLM\"],\"model_type\":"
                               "\"ernie4_5\"," UNTIED LMK "}";

enum { O_HEAD = 1, O_NOBIAS = 2, O_PACK = 4, O_NOHEADLM = 8 }; /* pv_model */

/* The language model's tensors under their checkpoint names (model.*, lm_head.weight). */
static void add_lm(tm_model *m, unsigned opt)
{
	tm_add2(m, "model.embed_tokens.weight", V, HID);
	tm_add2(m, "model.norm.weight", HID, 0);
	if (!(opt & O_NOHEADLM))
		tm_add2(m, "lm_head.weight", V, HID);
	static const tm_leaf lm_leaves[] = {{"input_layernorm.weight", HID, 0, 0},
	                                    {"post_attention_layernorm.weight", HID, 0, 0},
	                                    {"self_attn.q_proj.weight", 8 * HD, HID, 0},
	                                    {"self_attn.k_proj.weight", 2 * HD, HID, 0},
	                                    {"self_attn.v_proj.weight", 2 * HD, HID, 0},
	                                    {"self_attn.o_proj.weight", HID, 8 * HD, 0},
	                                    {"mlp.gate_proj.weight", I, HID, 0},
	                                    {"mlp.up_proj.weight", I, HID, 0},
	                                    {"mlp.down_proj.weight", HID, I, 0}};
	tm_layers(m, "model.layers.%d.", 2, lm_leaves, TM_NLEAVES(lm_leaves), 0);
}

/* The PaddleOCR-VL checkpoint: the LM, `blocks` tower blocks of MLP width vi with the
 * embeddings and post_layernorm, mlp_AR with pre_norm `pre` wide (opt: O_HEAD with a SigLIP
 * pooling head, O_NOBIAS without linear_1.bias, O_PACK with Keye's packing table, O_NOHEADLM
 * without lm_head). */
static tm_model *pv_model(int blocks, int64_t vi, int64_t pre, unsigned opt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, opt);
	tm_siglip_tower(m, VT, blocks, VE, vi, 4, 0);
	if (opt & O_PACK)
		tm_add2(m, VT "embeddings.packing_position_embedding.weight", 32768, VE);
	if (opt & O_HEAD) {
		tm_add(m, VT "head.probe", WT_DTYPE_INVALID, 3, 1, 1, VE);
		tm_add2(m, VT "head.attention.in_proj_weight", 3 * VE, VE);
		tm_add2(m, VT "head.layernorm.weight", VE, 0);
		tm_add2(m, VT "head.mlp.fc1.weight", vi, VE);
	}
	tm_add2(m, P "pre_norm.weight", pre, 0);
	tm_add2(m, P "pre_norm.bias", pre, 0);
	tm_add2(m, P "linear_1.weight", VM, VM);
	if (!(opt & O_NOBIAS))
		tm_add2(m, P "linear_1.bias", VM, 0);
	tm_add2(m, P "linear_2.weight", HID, VM);
	tm_add2(m, P "linear_2.bias", HID, 0);
	return m;
}

static tm_model *text_model(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, 0);
	return m;
}

static const char *const whole[] = {
    VT "embeddings.patch_embedding.weight",
    VT "embeddings.patch_embedding.bias",
    VT "embeddings.position_embedding.weight",
    VT "post_layernorm.weight",
    VT "post_layernorm.bias",
    P "pre_norm.weight",
    P "pre_norm.bias",
    P "linear_1.weight",
    P "linear_1.bias",
    P "linear_2.weight",
    P "linear_2.bias",
    L1 "input_layernorm.weight",
};

/* Rank r of T by hand: the tower's blocks, the whole tensors (mlp_AR's every one), the LM's
 * layer 1 and vocabulary tables, the rank's count. */
static void rank_is(const fx *f, uint32_t T, uint32_t r)
{
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	for (size_t j = 0; j < sizeof(whole) / sizeof(whole[0]); j++)
		repl(f, r, whole[j]);
	shp(f, r, P "pre_norm.weight", 1, VE, 0, 0);
	shp(f, r, P "linear_1.weight", 2, VM, VM, 0);
	shp(f, r, P "linear_2.weight", 2, HID, VM, 0);
	assert_int_equal(info(f, r, VT "embeddings.patch_embedding.weight")->ndim, 4);
	fx_attn_is(f, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, HD, HID);
	fx_mlp_is(f, r, T, L1 "mlp.", I, HID);
	fx_vocab_is(f, r, T, "model.embed_tokens.weight", V, VP, HID);
	fx_vocab_is(f, r, T, "lm_head.weight", V, VP, HID);
	/* 2 blocks x 12, the tower's 5, mlp_AR's 6; the LM's 3 + 2 layers x 6 */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 5 + 6 + 3 + 2 * 6);
}

/* TP 2 and 4 by hand; nothing skipped, untied. */
static void test_pv_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, pv_model(2, VI, VE, 0), cfg, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "paddleocr_vl");
		for (uint32_t r = 0; r < T; r++)
			rank_is(&f, T, r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* Every rank's outputs outside visual.* and mlp_AR.* equal byte for byte the ernie4_5
 * family's ranks of the same weights as an Ernie4_5ForCausalLM checkpoint, no more, no
 * fewer. */
static const char *const not_lm[] = {"visual.", P, NULL};

/* TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4. */
static void test_pv_same_lm(void **state)
{
	(void)state;
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
		fx a, b;
		fx_open_l(&a, pv_model(2, VI, VE, 0), cfg, &l, true);
		fx_open_l(&b, text_model(), text_cfg, &l, true);
		assert_string_equal(shardmap_family(b.p), "ernie4_5");
		for (uint32_t r = 0; r < l.tp_size; r++)
			fx_same_rank_but(&a, &b, r, not_lm, "ernie4_5");
		fx_close(&a);
		fx_close(&b);
	}
}

/* The tower's Linears and the LM's quantized; mlp_AR (built without the quant_config), the
 * embeddings, norms and biases kept BF16: int8-channel TP 2 (rank 1's out_proj / fc2 codes by
 * columns), fp8-channel TP 4; with MLP width 96 (not a multiple of 64) SiglipMLP's fc1 / fc2
 * are kept, the rest as before. */
static void test_pv_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {VT "embeddings.patch_embedding.weight",
	                                   VT "embeddings.position_embedding.weight",
	                                   VT "encoder.layers.1.self_attn.qkv_proj.bias",
	                                   VT "post_layernorm.weight",
	                                   P "pre_norm.weight",
	                                   P "linear_1.weight",
	                                   P "linear_1.bias",
	                                   P "linear_2.weight",
	                                   P "linear_2.bias",
	                                   "model.embed_tokens.weight",
	                                   L1 "input_layernorm.weight"};
	static const char *const q[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                VT "encoder.layers.1.self_attn.out_proj.weight",
	                                VT "encoder.layers.1.mlp.fc1.weight",
	                                VT "encoder.layers.1.mlp.fc2.weight",
	                                L1 "self_attn.qkv_proj.weight",
	                                L1 "self_attn.o_proj.weight",
	                                L1 "mlp.gate_up_proj.weight"};
	fx f;
	fx_open_quant(&f, pv_model(2, VI, VE, 0), cfg, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(keep), FX_N(q));
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.self_attn.out_proj.weight", VE, VE);
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.mlp.fc2.weight", VE, VI);
	fx_close(&f);
	fx_open_quant(&f, pv_model(2, VI, VE, 0), cfg, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(keep),
	              FX_N(q));
	fx_close(&f);
	/* SiglipMLP without the quant_config: 64 / 96 */
	static const char odd[] = CFGA(UNTIED, VKEYS("96", "8", "2"));
	static const char *const keep96[] = {
	    VT "encoder.layers.0.mlp.fc1.weight", VT "encoder.layers.1.mlp.fc2.weight",
	    VT "encoder.layers.1.mlp.fc1.bias", P "linear_1.weight"};
	static const char *const q96[] = {VT "encoder.layers.1.self_attn.qkv_proj.weight",
	                                  VT "encoder.layers.0.self_attn.out_proj.weight",
	                                  L1 "mlp.down_proj.weight"};
	fx_open_quant(&f, pv_model(2, 96, VE, 0), odd, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(keep96), FX_N(q96));
	fx_close(&f);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 / 8 (and TP 1 / 2 with an image_size
 * the patch does not divide). */
static void test_pv_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(pv_model(2, VI, VE, 0), cfg, 2, lays, 4);
	/* image_size 5 / patch_size 2: vLLM's (5 // 2)^2 = 4 positions, the same table */
	static const char cfg5[] =
	    CFGA(UNTIED, "\"vision_config\":{\"hidden_size\":64,\"intermediate_size\":128,"
	                 "\"num_hidden_layers\":2,\"num_attention_heads\":8,\"image_size\":5,"
	                 "\"patch_size\":2,\"spatial_merge_size\":2}");
	coverage(pv_model(2, VI, VE, 0), cfg5, 2, lays, 2);
}

/* A SigLIP pooling head (head.probe / attention / layernorm / mlp) and Keye's
 * packing_position_embedding skipped, as SiglipVisionModel's mapper drops them; the rest as
 * without them. Tied: lm_head skipped or absent. */
static void test_pv_skips(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, pv_model(2, VI, VE, O_HEAD | O_PACK), cfg, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		rank_is(&f, 2, r);
	assert_true(fx_skipped(&f, VT "head.probe"));
	assert_true(fx_skipped(&f, VT "head.attention.in_proj_weight"));
	assert_true(fx_skipped(&f, VT "head.layernorm.weight"));
	assert_true(fx_skipped(&f, VT "head.mlp.fc1.weight"));
	assert_true(fx_skipped(&f, VT "embeddings.packing_position_embedding.weight"));
	assert_int_equal(tm_ix(f.p, 0, VT "head.probe"), -1);
	assert_int_equal(shardmap_n_skipped(f.p), 5);
	fx_close(&f);
	static const char tied[] = CFGA("\"tie_word_embeddings\":true,", VKEYS("128", "8", "2"));
	fx_open(&f, pv_model(2, VI, VE, 0), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p) && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
	fx_open(&f, pv_model(2, VI, VE, O_NOHEADLM), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

/* config.json read: the top-level ERNIE sizes, vision_config's, mrope_section; head_dim absent:
 * 128 (both config classes'). */
static void test_pv_config(void **state)
{
	(void)state;
	ckpt_config c;
	tm_parse(cfg, &c);
	assert_string_equal(c.architecture, ARCH);
	assert_true(c.has_vision);
	assert_int_equal(c.hidden_size, HID);
	assert_int_equal(c.head_dim, HD);
	assert_int_equal(c.num_key_value_heads, 2);
	assert_int_equal(c.v_hidden_size, VE);
	assert_int_equal(c.v_intermediate_size, VI);
	assert_int_equal(c.v_num_layers, 2);
	assert_int_equal(c.v_num_attn_heads, 8);
	assert_int_equal(c.v_image_size, 4);
	assert_int_equal(c.v_patch_size, 2);
	assert_int_equal(c.v_spatial_merge_size, 2);
	assert_true(c.has_mrope);
	assert_false(c.tie_word_embeddings);
	assert_false(c.use_bias);
	ckpt_config_clear(&c);
	tm_parse("{\"architectures\":[\"" ARCH "\"],\"model_type\":\"paddleocr_vl\","
	         "\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	         "\"num_hidden_layers\":2,\"vocab_size\":1000,\"intermediate_size\":512,"
	         "\"tie_word_embeddings\":false," VKEYS("128", "8", "2") "}",
	         &c);
	assert_int_equal(c.head_dim, 128);
	ckpt_config_clear(&c);
}

/* The refusals, each naming its key or tensor. */
static void test_pv_errors(void **state)
{
	(void)state;
	fx_refused(pv_model(2, VI, VE, 0), CFGA(UNTIED, "\"x\":0"), WT_ECORRUPT, ARCH,
	           "vision_config");
	fx_refused(pv_model(2, VI, VE, 0), CFGA(UNTIED, "\"vision_config\":null"), WT_ECORRUPT,
	           ARCH, "vision_config");
	fx_refused(pv_model(2, VI, VE, 0), CFGA(UNTIED, "\"vision_config\":\"siglip\""),
	           WT_ECORRUPT, "vision_config", "not an object");
	fx_refused(pv_model(2, VI, VE, 0),
	           CFGA(UNTIED, "\"vision_config\":{\"hidden_size\":64,\"intermediate_size\":128,"
	                        "\"num_hidden_layers\":2,\"num_attention_heads\":8,"
	                        "\"image_size\":4}"),
	           WT_ECORRUPT, "vision_config.patch_size", "PaddleOCRVisionConfig");
	fx_refused(pv_model(2, VI, VE, 0),
	           CFGA(UNTIED, "\"vision_config\":{\"hidden_size\":64,\"num_hidden_layers\":2,"
	                        "\"num_attention_heads\":8,\"image_size\":4,\"patch_size\":2}"),
	           WT_ECORRUPT, "vision_config.intermediate_size", "give");
	fx_refused(pv_model(2, VI, VE, 0), CFGA(UNTIED, VKEYS("128", "8", "3")), WT_EUNSUPPORTED,
	           "spatial_merge_size 3", "(2, 2)");
	fx_refused(pv_model(2, VI, VE, 0), CFGA(UNTIED, VKEYS("128", "6", "2")), WT_ECORRUPT,
	           "num_attention_heads", "64");
	/* the top-level keys the two config classes disagree on; transformers 5's layout */
	fx_refused(pv_model(2, VI, VE, 0), CFGA("", VKEYS("128", "8", "2")), WT_ECORRUPT,
	           "needs tie_word_embeddings", "transformers 5's ties");
	fx_refused(pv_model(2, VI, VE, 0), CFGL(UNTIED, LMK0, VKEYS("128", "8", "2")), WT_ECORRUPT,
	           "needs num_key_value_heads", "None");
	fx_refused(pv_model(2, VI, VE, 0),
	           CFGA(UNTIED "\"text_config\":{\"model_type\":\"paddleocr_vl_text\"},",
	                VKEYS("128", "8", "2")),
	           WT_EUNSUPPORTED, "text_config", "top level");
	fx_refused(pv_model(2, VI, VE, 0),
	           CFGL(UNTIED "\"use_bias\":true,",
	                "\"num_key_value_heads\":2,\"hidden_size\":128,\"intermediate_size\":192,"
	                "\"num_attention_heads\":8,\"head_dim\":32,\"vocab_size\":1000,"
	                "\"num_hidden_layers\":2",
	                VKEYS("128", "8", "2")),
	           WT_EUNSUPPORTED, "use_bias is true", "LlamaForCausalLM");
	/* tp_size must divide the LM's heads (8 at TP 16) and the tower's (4 at TP 8) */
	fx_refused_tp(pv_model(2, VI, VE, 0), cfg, 16, WT_ELAYOUT, "tp_size 16", "");
	fx_refused_tp(pv_model(2, VI, VE, 0), CFGA(UNTIED, VKEYS("128", "4", "2")), 8, WT_ELAYOUT,
	              "tp_size 8", "vision_config.num_attention_heads 4");
	/* shapes: Keye-VL-1.5's 4 VE pre_norm; a missing bias; a block past the count, missing */
	fx_refused(pv_model(2, VI, VM, 0), cfg, WT_ESHAPE, P "pre_norm.", "");
	fx_refused(pv_model(2, VI, VE, O_NOBIAS), cfg, WT_ENOTFOUND, P "linear_1.bias", "");
	fx_refused(pv_model(3, VI, VE, 0), cfg, WT_ESHAPE, "encoder.layers.2.",
	           "num_hidden_layers is 2");
	fx_refused(pv_model(1, VI, VE, 0), cfg, WT_ENOTFOUND, "encoder.layers.1.", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pv_slices), cmocka_unit_test(test_pv_same_lm),
	    cmocka_unit_test(test_pv_quant),  cmocka_unit_test(test_pv_coverage),
	    cmocka_unit_test(test_pv_skips),  cmocka_unit_test(test_pv_config),
	    cmocka_unit_test(test_pv_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
