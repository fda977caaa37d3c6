/*
 * test_shardmap_keye.c — Keye-VL (KeyeForConditionalGeneration) and Keye-VL-1.5
 * (KeyeVL1_5ForConditionalGeneration; docs/format.md section 2.7), cut as vLLM's keye.py /
 * keye_vl1_5.py / siglip.py / qwen3.py load them: the visual.vision_model.* SigLIP block's rank
 * slices by hand at TP 2 and 4 (q/k/v and their biases fused by heads into qkv_proj, out_proj
 * and fc2 by columns, fc1 by rows, the rest whole), the embeddings (packing_position_embedding
 * included) and post_layernorm whole, mlp_AR's pre_norm whole (VE wide for Keye-VL, 4 VE for
 * 1.5), linear_1 by rows with its bias, linear_2 by columns with its bias whole; the language
 * model byte for byte the qwen3 family's ranks of the same weights (TP 1 / 2 / 4 / 8,
 * int8-channel TP 2, fp8-channel TP 4); which tensors are quantized (SiglipMLP's fc1 / fc2
 * only when the tower's sizes are multiples of 64); coverage; a pooling head skipped; the
 * config read; the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x6b657965ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_tower.h"
#include "test_shardmap_same_lm.h"

/* the LM (Qwen3): hid 128, H 8, KV 2, d 16, I 192, V 1000 (padded 1024), 2 layers; the tower:
 * width 64, 8 heads of 8, MLP 128 (96: SiglipMLP unquantized), image 4 / patch 2 (4
 * positions), 2 blocks; the merged width 256 */
#define HID  128
#define HD   16
#define I    192
#define V    1000
#define VP   1024
#define VE   64
#define VI   128
#define VM   256
#define PACK 32768
#define L1   "model.layers.1."
#define VT   "visual.vision_model."
#define VB   VT "encoder.layers.%d."
#define P    "mlp_AR."

#define ARCH   "KeyeForConditionalGeneration"
#define ARCH15 "KeyeVL1_5ForConditionalGeneration"
#define LMK                                                                                        \
	"\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"                 \
	"\"num_key_value_heads\":2,\"head_dim\":16,\"vocab_size\":1000,\"num_hidden_layers\":2,"   \
	"\"rope_scaling\":{\"type\":\"mrope\",\"mrope_section\":[2,3,3]}"
#define VKEYS(inter, heads, merge)                                                                 \
	"\"vision_config\":{\"hidden_size\":64,\"intermediate_size\":" inter                       \
	",\"num_hidden_layers\":2,\"num_attention_heads\":" heads ",\"image_size\":4,"             \
	"\"patch_size\":2,\"spatial_merge_size\":" merge "}"
#define CFGA(arch, top, vis)                                                                       \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"Keye\"," top LMK "," vis "}"
#define CFG(arch) CFGA(arch, "\"tie_word_embeddings\":false,", VKEYS("128", "8", "2"))

static const char cfg_k[] = CFG(ARCH), cfg_15[] = CFG(ARCH15);
static const char text_cfg[] = "{\"architectures\":[\"Qwen3ForCausalLM\"],\"model_type\":"
                               "\"qwen3\",\"tie_word_embeddings\":false," LMK "}";

enum { W_QKN = 1 }; /* tm_leaf.when: Qwen3's norms */
enum { O_NOQKN = 1, O_HEAD = 2, O_NOBIAS = 4, O_PACK = 8, O_NOHEADLM = 16 }; /* ky_model */

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
	                                    {"self_attn.q_norm.weight", HD, 0, W_QKN},
	                                    {"self_attn.k_norm.weight", HD, 0, W_QKN},
	                                    {"mlp.gate_proj.weight", I, HID, 0},
	                                    {"mlp.up_proj.weight", I, HID, 0},
	                                    {"mlp.down_proj.weight", HID, I, 0}};
	tm_layers(m, "model.layers.%d.", 2, lm_leaves, TM_NLEAVES(lm_leaves),
	          (opt & O_NOQKN) ? 0 : W_QKN);
}

/* The Keye-VL checkpoint: the LM, `blocks` tower blocks of MLP width vi with the embeddings
 * and post_layernorm, mlp_AR with pre_norm `pre` wide (opt: O_NOQKN without q_norm / k_norm,
 * O_HEAD with a SigLIP pooling head, O_NOBIAS without linear_1.bias, O_PACK with a
 * 1024-row packing_position_embedding, O_NOHEADLM without lm_head). */
static tm_model *ky_model(int blocks, int64_t vi, int64_t pre, unsigned opt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, opt);
	tm_siglip_tower(m, VT, blocks, VE, vi, 4, 0);
	tm_add2(m, VT "embeddings.packing_position_embedding.weight", (opt & O_PACK) ? 1024 : PACK,
	        VE);
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

static const char *const whole[] = {VT "embeddings.patch_embedding.weight",
                                    VT "embeddings.patch_embedding.bias",
                                    VT "embeddings.position_embedding.weight",
                                    VT "embeddings.packing_position_embedding.weight",
                                    VT "post_layernorm.weight",
                                    VT "post_layernorm.bias",
                                    P "pre_norm.weight",
                                    P "pre_norm.bias",
                                    P "linear_2.bias",
                                    L1 "self_attn.q_norm.weight",
                                    L1 "self_attn.k_norm.weight"};

/* Rank r of T by hand: the tower's blocks, the whole tensors, mlp_AR's linears, the LM's
 * layer 1 and vocabulary tables, the rank's count. */
static void rank_is(const fx *f, uint32_t T, uint32_t r, int64_t pre)
{
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	for (size_t j = 0; j < sizeof(whole) / sizeof(whole[0]); j++)
		repl(f, r, whole[j]);
	shp(f, r, P "pre_norm.weight", 1, pre, 0, 0);
	shp(f, r, VT "embeddings.packing_position_embedding.weight", 2, PACK, VE, 0);
	assert_int_equal(info(f, r, VT "embeddings.patch_embedding.weight")->ndim, 4);
	int64_t ml = VM / T;
	shp(f, r, P "linear_1.weight", 2, ml, VM, 0);
	rows_at(f, r, P "linear_1.weight", 0, P "linear_1.weight", r * ml, ml);
	shp(f, r, P "linear_1.bias", 1, ml, 0, 0);
	rows_at(f, r, P "linear_1.bias", 0, P "linear_1.bias", r * ml, ml);
	cols_of(f, r, T, P "linear_2.weight", P "linear_2.weight", HID, VM);
	fx_attn_is(f, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, HD, HID);
	fx_mlp_is(f, r, T, L1 "mlp.", I, HID);
	fx_vocab_is(f, r, T, "model.embed_tokens.weight", V, VP, HID);
	fx_vocab_is(f, r, T, "lm_head.weight", V, VP, HID);
	/* 2 blocks x 12, the tower's 6, mlp_AR's 6; the LM's 3 + 2 layers x 8 */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 6 + 6 + 3 + 2 * 8);
}

/* TP 2 and 4 by hand, both architectures; nothing skipped, untied. */
static void test_ky_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2)
		for (int k = 0; k < 2; k++) {
			int64_t pre = k ? VM : VE;
			fx f;
			fx_open(&f, ky_model(2, VI, pre, 0), k ? cfg_15 : cfg_k, T, 1, 0, true);
			assert_string_equal(shardmap_family(f.p), "keye");
			for (uint32_t r = 0; r < T; r++)
				rank_is(&f, T, r, pre);
			assert_false(shardmap_tied_lm_head(f.p));
			assert_int_equal(shardmap_n_skipped(f.p), 0);
			fx_close(&f);
		}
}

/* Every rank's outputs outside visual.* and mlp_AR.* equal byte for byte the qwen3 family's
 * ranks of the same weights as a Qwen3ForCausalLM checkpoint, no more, no fewer. */
static const char *const not_lm[] = {"visual.", P, NULL};

/* TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4; both architectures. */
static void test_ky_same_lm(void **state)
{
	(void)state;
	static const struct {
		uint32_t tp;
		wt_quant q;
	} lays[] = {{1, WT_QUANT_NONE}, {2, WT_QUANT_NONE},         {4, WT_QUANT_NONE},
	            {8, WT_QUANT_NONE}, {2, WT_QUANT_INT8_CHANNEL}, {4, WT_QUANT_FP8_CHANNEL}};
	for (size_t j = 0; j < sizeof(lays) / sizeof(lays[0]); j++)
		for (int k = 0; k < 2; k++) {
			wt_layout l;
			wt_layout_init(&l);
			l.tp_size = lays[j].tp;
			l.quant = lays[j].q;
			fx a, b;
			fx_open_l(&a, ky_model(2, VI, k ? VM : VE, 0), k ? cfg_15 : cfg_k, &l,
			          true);
			fx_open_l(&b, text_model(), text_cfg, &l, true);
			assert_string_equal(shardmap_family(b.p), "qwen3");
			for (uint32_t r = 0; r < l.tp_size; r++)
				fx_same_rank_but(&a, &b, r, not_lm, "qwen3");
			fx_close(&a);
			fx_close(&b);
		}
}

/* The tower's Linears, linear_1 / linear_2 and the LM's quantized; the embeddings, norms,
 * biases and packing table kept BF16: int8-channel TP 2 (rank 1's out_proj / fc2 / linear_2
 * codes by columns), fp8-channel TP 4 (Keye-VL-1.5); with MLP width 96 (not a multiple of
 * 64) SiglipMLP's fc1 / fc2 are kept, the rest as before. */
static void test_ky_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {VT "embeddings.patch_embedding.weight",
	                                   VT "embeddings.position_embedding.weight",
	                                   VT "embeddings.packing_position_embedding.weight",
	                                   VT "encoder.layers.1.self_attn.qkv_proj.bias",
	                                   VT "post_layernorm.weight",
	                                   P "pre_norm.weight",
	                                   P "linear_1.bias",
	                                   P "linear_2.bias",
	                                   "model.embed_tokens.weight",
	                                   L1 "self_attn.q_norm.weight"};
	static const char *const q[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                VT "encoder.layers.1.self_attn.out_proj.weight",
	                                VT "encoder.layers.1.mlp.fc1.weight",
	                                VT "encoder.layers.1.mlp.fc2.weight",
	                                P "linear_1.weight",
	                                P "linear_2.weight",
	                                L1 "self_attn.qkv_proj.weight",
	                                L1 "self_attn.o_proj.weight"};
	fx f;
	fx_open_quant(&f, ky_model(2, VI, VE, 0), cfg_k, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(keep), FX_N(q));
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.self_attn.out_proj.weight", VE, VE);
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.mlp.fc2.weight", VE, VI);
	fx_cols_int8_is(&f, 1, 2, P "linear_2.weight", HID, VM);
	fx_close(&f);
	fx_open_quant(&f, ky_model(2, VI, VM, 0), cfg_15, 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(keep), FX_N(q));
	fx_close(&f);
	/* SiglipMLP without the quant_config: 64 / 96 */
	static const char odd[] = CFGA(ARCH, "", VKEYS("96", "8", "2"));
	static const char *const keep96[] = {VT "encoder.layers.0.mlp.fc1.weight",
	                                     VT "encoder.layers.1.mlp.fc2.weight",
	                                     VT "encoder.layers.1.mlp.fc1.bias", P "pre_norm.bias"};
	static const char *const q96[] = {VT "encoder.layers.1.self_attn.qkv_proj.weight",
	                                  VT "encoder.layers.0.self_attn.out_proj.weight",
	                                  P "linear_1.weight", L1 "mlp.down_proj.weight"};
	fx_open_quant(&f, ky_model(2, 96, VE, 0), odd, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(keep96), FX_N(q96));
	fx_close(&f);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 / 8, both architectures. */
static void test_ky_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(ky_model(2, VI, VE, 0), cfg_k, 2, lays, 4);
	coverage(ky_model(2, VI, VM, 0), cfg_15, 2, lays, 4);
}

/* A SigLIP pooling head (head.probe / attention / layernorm / mlp) skipped, as vLLM's
 * KeyeSiglipVisionModel.load_weights skips it; the rest as without it. Tied: lm_head skipped
 * or absent. */
static void test_ky_skips(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, ky_model(2, VI, VE, O_HEAD), cfg_k, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		rank_is(&f, 2, r, VE);
	assert_true(fx_skipped(&f, VT "head.probe"));
	assert_true(fx_skipped(&f, VT "head.attention.in_proj_weight"));
	assert_true(fx_skipped(&f, VT "head.layernorm.weight"));
	assert_true(fx_skipped(&f, VT "head.mlp.fc1.weight"));
	assert_int_equal(tm_ix(f.p, 0, VT "head.probe"), -1);
	assert_int_equal(shardmap_n_skipped(f.p), 4);
	fx_close(&f);
	static const char tied[] =
	    CFGA(ARCH, "\"tie_word_embeddings\":true,", VKEYS("128", "8", "2"));
	fx_open(&f, ky_model(2, VI, VE, 0), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p) && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
	fx_open(&f, ky_model(2, VI, VE, O_NOHEADLM), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

/* config.json read: the top-level Qwen3 sizes, vision_config's, mrope_section. */
static void test_ky_config(void **state)
{
	(void)state;
	ckpt_config c;
	tm_parse(cfg_15, &c);
	assert_string_equal(c.architecture, ARCH15);
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
	ckpt_config_clear(&c);
	/* no head_dim: hidden_size / num_attention_heads (vLLM's Qwen3Attention's fallback); no
	 * tie_word_embeddings: untied */
	tm_parse("{\"architectures\":[\"" ARCH "\"],\"model_type\":\"Keye\",\"hidden_size\":256,"
	         "\"num_attention_heads\":8,\"num_hidden_layers\":2,\"vocab_size\":1000,"
	         "\"intermediate_size\":512," VKEYS("128", "8", "2") "}",
	         &c);
	assert_int_equal(c.head_dim, 32);
	assert_int_equal(c.num_key_value_heads, 8);
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
}

/* The refusals, each naming its key or tensor. */
static void test_ky_errors(void **state)
{
	(void)state;
	fx_refused(ky_model(2, VI, VE, 0), CFGA(ARCH, "", "\"x\":0"), WT_ECORRUPT, ARCH,
	           "vision_config");
	fx_refused(ky_model(2, VI, VE, 0),
	           CFGA(ARCH, "",
	                "\"vision_config\":{\"hidden_size\":64,\"intermediate_size\":128,"
	                "\"num_hidden_layers\":2,\"num_attention_heads\":8,\"image_size\":4}"),
	           WT_ECORRUPT, "vision_config.patch_size", "KeyeVisionConfig");
	fx_refused(ky_model(2, VI, VE, 0),
	           CFGA(ARCH, "",
	                "\"vision_config\":{\"hidden_size\":64,\"num_hidden_layers\":2,"
	                "\"num_attention_heads\":8,\"image_size\":4,\"patch_size\":2}"),
	           WT_ECORRUPT, "vision_config.intermediate_size", "give");
	fx_refused(ky_model(2, VI, VE, 0), CFGA(ARCH, "", VKEYS("128", "8", "3")), WT_EUNSUPPORTED,
	           "spatial_merge_size 3", "(2, 2)");
	fx_refused(ky_model(2, VI, VE, 0), CFGA(ARCH, "", VKEYS("128", "6", "2")), WT_ECORRUPT,
	           "num_attention_heads", "64");
	/* the tower's heads must divide tp_size: 8 at TP 16 */
	fx_refused_tp(ky_model(2, VI, VE, 0), cfg_k, 16, WT_ELAYOUT, "tp_size 16", "");
	/* and the tower's (KeyeSiglipAttention asserts it): 4 at TP 8 */
	fx_refused_tp(ky_model(2, VI, VE, 0), CFGA(ARCH, "", VKEYS("128", "4", "2")), 8, WT_ELAYOUT,
	              "tp_size 8", "vision_config.num_attention_heads 4");
	/* shapes: packing_position_embedding's rows, pre_norm of the other architecture */
	fx_refused(ky_model(2, VI, VE, O_PACK), cfg_k, WT_ESHAPE, "packing_position_embedding",
	           "32768");
	fx_refused(ky_model(2, VI, VE, 0), cfg_15, WT_ESHAPE, P "pre_norm.weight",
	           "set architectures to " ARCH);
	fx_refused(ky_model(2, VI, VM, 0), cfg_k, WT_ESHAPE, P "pre_norm.weight",
	           "set architectures to " ARCH15);
	fx_refused(ky_model(2, VI, 32, 0), cfg_k, WT_ESHAPE, P "pre_norm.", "[64]");
	/* missing tensors, a block past the count */
	fx_refused(ky_model(2, VI, VE, O_NOBIAS), cfg_k, WT_ENOTFOUND, P "linear_1.bias", "");
	fx_refused(ky_model(2, VI, VE, O_NOQKN), cfg_k, WT_ENOTFOUND, "q_norm", "");
	fx_refused(ky_model(3, VI, VE, 0), cfg_k, WT_ESHAPE, "encoder.layers.2.",
	           "num_hidden_layers is 2");
	fx_refused(ky_model(1, VI, VE, 0), cfg_k, WT_ENOTFOUND, "encoder.layers.1.", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ky_slices), cmocka_unit_test(test_ky_same_lm),
	    cmocka_unit_test(test_ky_quant),  cmocka_unit_test(test_ky_coverage),
	    cmocka_unit_test(test_ky_skips),  cmocka_unit_test(test_ky_config),
	    cmocka_unit_test(test_ky_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
