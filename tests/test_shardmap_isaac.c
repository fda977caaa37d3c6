/*
 * test_shardmap_isaac.c — Isaac (IsaacForConditionalGeneration, model_type isaac; docs/format.md
 * section 2.7), cut as vLLM's isaac.py / siglip.py / qwen3.py load it: the
 * model.vision_embedding.0.* Siglip2 block's rank slices by hand at TP 2 and 4 (q/k/v and their
 * biases fused by heads into qkv_proj, out_proj and fc2 by columns, fc1 by rows, the rest
 * whole), the patch Linear, position table and post_layernorm whole, the pixel-shuffle
 * projector's linear_fc1 (.1) by rows and linear_fc2 (.3) by columns; the language model byte
 * for byte the qwen3 family's ranks of the same weights (TP 1 / 2 / 4 / 8, int8-channel TP 2,
 * fp8-channel TP 4); which tensors are quantized; coverage; the config read with its class
 * defaults; the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x69736163ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_tower.h"
#include "test_shardmap_same_lm.h"

/* the LM (Qwen3): hid 128, H 8, KV 2, d 16, I 192, V 1000 (padded 1024), 2 layers; the tower:
 * width 64, 8 heads of 8, MLP 128 (96: SiglipMLP unquantized), 4 positions, patch 2 (12
 * unfolded), 2 blocks; pixel shuffle 2: M 256, the projector's hidden 4 M = 1024 */
#define HID 128
#define HD  16
#define I   192
#define V   1000
#define VP  1024
#define VE  64
#define VI  128
#define VM  256
#define F1  1024
#define L1  "model.layers.1."
#define VT  "model.vision_embedding.0."
#define VB  VT "encoder.layers.%d."
#define FC1 "model.vision_embedding.1.weight"
#define FC2 "model.vision_embedding.3.weight"

#define ARCH "IsaacForConditionalGeneration"
#define LMK                                                                                        \
	"\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"                 \
	"\"num_key_value_heads\":2,\"head_dim\":16,\"vocab_size\":1000,\"num_hidden_layers\":2"
#define VKEYS(inter, heads, np, ps)                                                                \
	"\"vision_config\":{\"hidden_size\":64,\"intermediate_size\":" inter                       \
	",\"num_hidden_layers\":2,\"num_attention_heads\":" heads ",\"num_patches\":" np           \
	",\"patch_size\":2,\"pixel_shuffle_scale_factor\":" ps "}"
#define CFGA(top, vis)                                                                             \
	"{\"architectures\":[\"" ARCH "\"],\"model_type\":\"isaac\"," top LMK "," vis "}"
#define CFG CFGA("\"tie_word_embeddings\":false,", VKEYS("128", "8", "4", "2"))

static const char cfg[] = CFG;
static const char text_cfg[] = "{\"architectures\":[\"Qwen3ForCausalLM\"],\"model_type\":"
                               "\"qwen3\",\"tie_word_embeddings\":false," LMK "}";

enum { W_QKN = 1 }; /* tm_leaf.when: Qwen3's norms */
/* is_model options */
enum { O_NOQKN = 1, O_HEAD = 2, O_NOFC1 = 4, O_TEXT = 8, O_NOHEADLM = 16, O_F1 = 32 };

/* The language model's tensors under lm (model. or model.text_model.) and lm_head.weight. */
static void add_lm(tm_model *m, const char *lm, unsigned opt)
{
	char b[200];
	snprintf(b, sizeof(b), "%sembed_tokens.weight", lm);
	tm_add2(m, b, V, HID);
	snprintf(b, sizeof(b), "%snorm.weight", lm);
	tm_add2(m, b, HID, 0);
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
	snprintf(b, sizeof(b), "%slayers.%%d.", lm);
	tm_layers(m, b, 2, lm_leaves, TM_NLEAVES(lm_leaves), (opt & O_NOQKN) ? 0 : W_QKN);
}

/* The Isaac checkpoint: the LM, `blocks` tower blocks of MLP width vi with the embeddings and
 * post_layernorm, the projector (opt: O_NOQKN without q_norm / k_norm, O_HEAD with a SigLIP
 * pooling head's probe, O_NOFC1 without linear_fc1, O_TEXT the LM under model.text_model.,
 * O_NOHEADLM without lm_head, O_F1 linear_fc1 of 2 M rows). */
static tm_model *is_model(int blocks, int64_t vi, unsigned opt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, (opt & O_TEXT) ? "model.text_model." : "model.", opt);
	tm_siglip_tower(m, VT, blocks, VE, vi, 4, TM_TOWER_PE2D);
	if (opt & O_HEAD)
		tm_add(m, VT "head.probe", WT_DTYPE_INVALID, 3, 1, 1, VE);
	if (!(opt & O_NOFC1))
		tm_add2(m, FC1, (opt & O_F1) ? F1 / 2 : F1, VM);
	tm_add2(m, FC2, HID, F1);
	return m;
}

static tm_model *text_model(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, "model.", 0);
	return m;
}

static const char *const whole[] = {VT "embeddings.patch_embedding.weight",
                                    VT "embeddings.patch_embedding.bias",
                                    VT "embeddings.position_embedding.weight",
                                    VT "post_layernorm.weight",
                                    VT "post_layernorm.bias",
                                    L1 "self_attn.q_norm.weight",
                                    L1 "self_attn.k_norm.weight"};

/* Rank r of T by hand: the tower's blocks, the whole tensors, the projector, the LM's layer 1
 * and vocabulary tables, the rank's count. */
static void rank_is(const fx *f, uint32_t T, uint32_t r)
{
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	for (size_t j = 0; j < sizeof(whole) / sizeof(whole[0]); j++)
		repl(f, r, whole[j]);
	shp(f, r, VT "embeddings.patch_embedding.weight", 2, VE, 12, 0);
	int64_t ml = F1 / T;
	shp(f, r, FC1, 2, ml, VM, 0);
	rows_at(f, r, FC1, 0, FC1, r * ml, ml);
	cols_of(f, r, T, FC2, FC2, HID, F1);
	fx_attn_is(f, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, HD, HID);
	fx_mlp_is(f, r, T, L1 "mlp.", I, HID);
	fx_vocab_is(f, r, T, "model.embed_tokens.weight", V, VP, HID);
	fx_vocab_is(f, r, T, "lm_head.weight", V, VP, HID);
	/* 2 blocks x 12, the tower's 5, the projector's 2; the LM's 3 + 2 layers x 8 */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 5 + 2 + 3 + 2 * 8);
}

/* TP 2 and 4 by hand; nothing skipped, untied. */
static void test_is_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, is_model(2, VI, 0), cfg, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "isaac");
		for (uint32_t r = 0; r < T; r++)
			rank_is(&f, T, r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* Every rank's outputs outside model.vision_embedding.* equal byte for byte the qwen3
 * family's ranks of the same weights as a Qwen3ForCausalLM checkpoint, no more, no fewer. */
static const char *const not_lm[] = {"model.vision_embedding.", NULL};

/* TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4. */
static void test_is_same_lm(void **state)
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
		fx_open_l(&a, is_model(2, VI, 0), cfg, &l, true);
		fx_open_l(&b, text_model(), text_cfg, &l, true);
		assert_string_equal(shardmap_family(b.p), "qwen3");
		for (uint32_t r = 0; r < l.tp_size; r++)
			fx_same_rank_but(&a, &b, r, not_lm, "qwen3");
		fx_close(&a);
		fx_close(&b);
	}
}

/* The tower's Linears, linear_fc1 / linear_fc2 and the LM's quantized; the patch Linear
 * (ReplicatedLinear without quant_config), position table, norms and biases kept BF16:
 * int8-channel TP 2 (rank 1's out_proj / fc2 / linear_fc2 codes by columns), fp8-channel TP 4;
 * with MLP width 96 (not a multiple of 64) SiglipMLP's fc1 / fc2 are kept, the rest as
 * before. */
static void test_is_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {VT "embeddings.patch_embedding.weight",
	                                   VT "embeddings.patch_embedding.bias",
	                                   VT "embeddings.position_embedding.weight",
	                                   VT "encoder.layers.1.self_attn.qkv_proj.bias",
	                                   VT "post_layernorm.weight",
	                                   "model.embed_tokens.weight",
	                                   L1 "self_attn.q_norm.weight"};
	static const char *const q[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                VT "encoder.layers.1.self_attn.out_proj.weight",
	                                VT "encoder.layers.1.mlp.fc1.weight",
	                                VT "encoder.layers.1.mlp.fc2.weight",
	                                FC1,
	                                FC2,
	                                L1 "self_attn.qkv_proj.weight",
	                                L1 "self_attn.o_proj.weight"};
	fx f;
	fx_open_quant(&f, is_model(2, VI, 0), cfg, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(keep),
	              FX_N(q));
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.self_attn.out_proj.weight", VE, VE);
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.mlp.fc2.weight", VE, VI);
	fx_cols_int8_is(&f, 1, 2, FC2, HID, F1);
	fx_close(&f);
	fx_open_quant(&f, is_model(2, VI, 0), cfg, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(keep),
	              FX_N(q));
	fx_close(&f);
	/* SiglipMLP without the quant_config: 64 / 96 */
	static const char odd[] = CFGA("", VKEYS("96", "8", "4", "2"));
	static const char *const keep96[] = {VT "encoder.layers.0.mlp.fc1.weight",
	                                     VT "encoder.layers.1.mlp.fc2.weight",
	                                     VT "encoder.layers.1.mlp.fc1.bias"};
	static const char *const q96[] = {VT "encoder.layers.1.self_attn.qkv_proj.weight",
	                                  VT "encoder.layers.0.self_attn.out_proj.weight", FC1,
	                                  L1 "mlp.down_proj.weight"};
	fx_open_quant(&f, is_model(2, 96, 0), odd, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(keep96),
	              FX_N(q96));
	fx_close(&f);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 / 8. */
static void test_is_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(is_model(2, VI, 0), cfg, 2, lays, 4);
}

/* Tied (Qwen3Config's key): lm_head skipped or absent. */
static void test_is_tied(void **state)
{
	(void)state;
	static const char tied[] =
	    CFGA("\"tie_word_embeddings\":true,", VKEYS("128", "8", "4", "2"));
	fx f;
	fx_open(&f, is_model(2, VI, 0), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p) && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
	fx_open(&f, is_model(2, VI, O_NOHEADLM), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

/* config.json read: the top-level Qwen3 sizes, vision_config's; IsaacConfig's defaults
 * (Qwen3Config's at the top level, PixelShuffleSiglip2VisionConfig's without a
 * vision_config). */
static void test_is_config(void **state)
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
	assert_int_equal(c.v_num_pos, 4);
	assert_int_equal(c.v_patch_size, 2);
	assert_int_equal(c.v_spatial_merge_size, 2);
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
	tm_parse("{\"architectures\":[\"" ARCH "\"],\"model_type\":\"isaac\"}", &c);
	assert_true(c.has_vision);
	assert_int_equal(c.vocab_size, 151936);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.intermediate_size, 22016);
	assert_int_equal(c.num_hidden_layers, 32);
	assert_int_equal(c.head_dim, 128);
	assert_int_equal(c.v_hidden_size, 768);
	assert_int_equal(c.v_intermediate_size, 3072);
	assert_int_equal(c.v_num_layers, 12);
	assert_int_equal(c.v_num_attn_heads, 12);
	assert_int_equal(c.v_in_chans, 3);
	assert_int_equal(c.v_num_pos, 256);
	assert_int_equal(c.v_patch_size, 16);
	assert_int_equal(c.v_spatial_merge_size, 1);
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
}

/* The refusals, each naming its key or tensor. */
static void test_is_errors(void **state)
{
	(void)state;
	fx_refused(is_model(2, VI, 0), CFGA("", VKEYS("128", "8", "5", "2")), WT_ECORRUPT,
	           "num_patches 5", "square");
	fx_refused(is_model(2, VI, 0), CFGA("", VKEYS("128", "6", "4", "2")), WT_ECORRUPT,
	           "num_attention_heads", "64");
	fx_refused(is_model(2, VI, 0), CFGA("", VKEYS("128", "8", "4", "0")), WT_ECORRUPT,
	           "pixel_shuffle_scale_factor", "vision_config");
	fx_refused(is_model(2, VI, 0), CFGA("", "\"vision_config\":7"), WT_ECORRUPT,
	           "vision_config", "PixelShuffleSiglip2VisionConfig");
	/* the projector's width: factor 1 makes 4 M 256, not 1024 */
	fx_refused(is_model(2, VI, 0), CFGA("", VKEYS("128", "8", "4", "1")), WT_ESHAPE,
	           FC1 "': shape [1024, 256]", "[-1, 64]");
	fx_refused(is_model(2, VI, O_F1), cfg, WT_ESHAPE, FC1 "': rows 512", "= 1024");
	/* the tower's heads must divide tp_size: 8 at TP 16 */
	fx_refused_tp(is_model(2, VI, 0), cfg, 16, WT_ELAYOUT, "tp_size 16", "");
	fx_refused_tp(is_model(2, VI, 0), CFGA("", VKEYS("128", "4", "4", "2")), 8, WT_ELAYOUT,
	              "tp_size 8", "vision_config.num_attention_heads 4");
	/* missing tensors, a block past the count, a pooling head vLLM has no parameter for */
	fx_refused(is_model(2, VI, O_NOFC1), cfg, WT_ENOTFOUND, FC1, "");
	fx_refused(is_model(2, VI, O_NOQKN), cfg, WT_ENOTFOUND, "q_norm", "");
	fx_refused(is_model(3, VI, 0), cfg, WT_ESHAPE, "encoder.layers.2.",
	           "num_hidden_layers is 2");
	fx_refused(is_model(1, VI, 0), cfg, WT_ENOTFOUND, "encoder.layers.1.", "");
	fx_refused(is_model(2, VI, O_HEAD), cfg, WT_EUNSUPPORTED, VT "head.probe", "");
	/* the mapper's other layout */
	fx_refused(is_model(2, VI, O_TEXT), cfg, WT_EUNSUPPORTED, "'model.text_model.",
	           "unknown tensor for family isaac");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_is_slices), cmocka_unit_test(test_is_same_lm),
	    cmocka_unit_test(test_is_quant),  cmocka_unit_test(test_is_coverage),
	    cmocka_unit_test(test_is_tied),   cmocka_unit_test(test_is_config),
	    cmocka_unit_test(test_is_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
