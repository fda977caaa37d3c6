/*
 * test_shardmap_ovis2_5.c — Ovis2.5 (Ovis2_5, model_type ovis2_5; docs/format.md section 2.7),
 * the Ovis family's arch_variant, cut as vLLM's ovis2_5.py / siglip2navit.py / qwen3.py load
 * it: the SigLIP2-NaViT block's rank slices by hand at TP 2 and 4 (q/k/v and their biases fused
 * by heads into qkv_proj, out_proj and fc2 by columns, fc1 by rows, the rest whole), the patch
 * Conv2d, position table, post_layernorm, head and vte whole and never quantized; the language
 * model under llm. byte for byte the qwen3 family's ranks of the same weights (TP 1 / 2 / 4 / 8,
 * int8-channel TP 2, fp8-channel TP 4); which tensors are quantized; coverage; the config read
 * with its class defaults; preserve_original_pe; the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x0925ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_same_lm.h"

/* the LM (Qwen3): hid 128, H 8, KV 2, d 16, I 192, V 1000 (padded 1024), 2 layers; the tower:
 * width 64, 8 heads of 8, MLP 128, image 4 / patch 2 (2 x 2 = 4 positions, Conv2d [64, 3, 2,
 * 2]), 2 blocks; hidden_stride 2 (the head 64 x 2^2 = 256 wide); the visual vocabulary 37 (the
 * head's 33 rows) */
#define HID 128
#define HD  16
#define I   192
#define V   1000
#define VP  1024
#define VE  64
#define VI  128
#define VM  256
#define OVV 37
#define OVH 33
#define LM  "llm."
#define L1  LM "model.layers.1."
#define VT  "visual_tokenizer.vit.vision_model."
#define VB  VT "encoder.layers.%d."
#define H0  "visual_tokenizer.head.0.weight"

#define LMK                                                                                        \
	"\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"                 \
	"\"num_key_value_heads\":2,\"head_dim\":16,\"vocab_size\":1000,\"num_hidden_layers\":2"
#define QW3 "\"architectures\":[\"Qwen3ForCausalLM\"],\"model_type\":\"qwen3\"," LMK
#define VIT(inter, heads, extra)                                                                   \
	"\"vit_config\":{\"model_type\":\"siglip2_navit\",\"hidden_size\":64,"                     \
	"\"intermediate_size\":" inter ",\"num_hidden_layers\":2,\"num_attention_heads\":" heads   \
	",\"num_channels\":3,\"image_size\":4,\"patch_size\":2,\"hidden_stride\":2,"               \
	"\"num_patches\":-1,\"window_size\":112,\"fullatt_block_indexes\":null" extra "}"
#define CFG_AT(top, lm, vit)                                                                       \
	"{\"architectures\":[\"Ovis2_5\"],\"model_type\":\"ovis2_5\",\"visual_vocab_size\":37,"    \
	"\"conversation_formatter_class\":\"Qwen3ConversationFormatter\"," top                     \
	"\"llm_config\":{" lm "}," vit "}"
#define CFG(lm, vit) CFG_AT("\"hidden_size\":128,", lm, vit)

static const char cfg[] = CFG(QW3 ",\"tie_word_embeddings\":false", VIT("128", "8", ""));
static const char text_cfg[] = "{" QW3 ",\"tie_word_embeddings\":false}";

enum { W_QKN = 1 }; /* tm_leaf.when: Qwen3's norms */
/* o25_model options */
enum { O_NOPE = 1, O_FUSED = 2, O_NOQKN = 4, O_BIGHEAD = 8 };

/* The Qwen3 language model under prefix p ("llm." or ""), 2 layers, its head. */
static void add_lm(tm_model *m, const char *p, unsigned opt)
{
	char b[200];
	snprintf(b, sizeof(b), "%smodel.embed_tokens.weight", p);
	tm_add2(m, b, V, HID);
	snprintf(b, sizeof(b), "%smodel.norm.weight", p);
	tm_add2(m, b, HID, 0);
	snprintf(b, sizeof(b), "%slm_head.weight", p);
	tm_add2(m, b, V, HID);
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
	snprintf(b, sizeof(b), "%smodel.layers.%%d.", p);
	tm_layers(m, b, 2, lm_leaves, TM_NLEAVES(lm_leaves), (opt & O_NOQKN) ? 0 : W_QKN);
}

/* The Ovis2.5 checkpoint: the LM, `blocks` tower blocks of MLP width vi with the patch Conv2d,
 * its bias, the position table (not with O_NOPE) and post_layernorm, the head and vte (opt:
 * O_FUSED block 0's q/k/v also fused into qkv_proj, O_NOQKN without q_norm / k_norm,
 * O_BIGHEAD a head of the vte's rows). */
static tm_model *o25_model_x(int blocks, int64_t vi, unsigned opt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, LM, opt);
	mm_add_vit_at(m, LAY_TEXT, VT, false, VE, vi, 4, blocks);
	if (opt & O_NOPE)
		tm_remove(m, VT "embeddings.position_embedding.weight");
	if (opt & O_FUSED)
		tm_add2(m, VT "encoder.layers.0.self_attn.qkv_proj.weight", 3 * VE, VE);
	int64_t hr = (opt & O_BIGHEAD) ? OVV : OVH;
	tm_add2(m, H0, hr, VM);
	tm_add2(m, "visual_tokenizer.head.1.weight", hr, 0);
	tm_add2(m, "visual_tokenizer.head.1.bias", hr, 0);
	tm_add2(m, "vte.weight", OVV, HID);
	return m;
}

static tm_model *o25_model(unsigned opt)
{
	return o25_model_x(2, VI, opt);
}

static tm_model *text_model(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, "", 0);
	return m;
}

static const char *const whole[] = {VT "embeddings.patch_embedding.weight",
                                    VT "embeddings.patch_embedding.bias",
                                    VT "embeddings.position_embedding.weight",
                                    VT "post_layernorm.weight",
                                    VT "post_layernorm.bias",
                                    H0,
                                    "visual_tokenizer.head.1.weight",
                                    "visual_tokenizer.head.1.bias",
                                    "vte.weight",
                                    L1 "self_attn.q_norm.weight",
                                    L1 "self_attn.k_norm.weight"};

/* Rank r of T by hand: the tower's blocks, the whole tensors, the LM's layer 1 and vocabulary
 * tables, the rank's count. */
static void rank_is(const fx *f, uint32_t T, uint32_t r)
{
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	for (size_t j = 0; j < sizeof(whole) / sizeof(whole[0]); j++)
		repl(f, r, whole[j]);
	assert_int_equal(info(f, r, VT "embeddings.patch_embedding.weight")->ndim, 4);
	shp(f, r, VT "embeddings.position_embedding.weight", 2, 4, VE, 0);
	shp(f, r, H0, 2, OVH, VM, 0);
	shp(f, r, "vte.weight", 2, OVV, HID, 0);
	fx_attn_is(f, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, HD, HID);
	fx_mlp_is(f, r, T, L1 "mlp.", I, HID);
	fx_vocab_is(f, r, T, LM "model.embed_tokens.weight", V, VP, HID);
	fx_vocab_is(f, r, T, LM "lm_head.weight", V, VP, HID);
	/* 2 blocks x 12, the tower's 5, the head's 3 and vte; the LM's 3 + 2 layers x 8 */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 5 + 4 + 3 + 2 * 8);
}

/* TP 2 and 4 by hand; the Ovis family, nothing skipped, untied. */
static void test_o25_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, o25_model(0), cfg, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "ovis");
		for (uint32_t r = 0; r < T; r++)
			rank_is(&f, T, r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* Every rank's llm.* outputs equal byte for byte the qwen3 family's ranks of the same weights
 * as a Qwen3ForCausalLM checkpoint (without the llm. prefix), no more, no fewer: TP 1 / 2 / 4 /
 * 8, int8-channel TP 2, fp8-channel TP 4. */
static void test_o25_same_lm(void **state)
{
	(void)state;
	static const char *const not_lm[] = {"visual_tokenizer.", "vte.", NULL};
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
		fx_open_l(&a, o25_model(0), cfg, &l, true);
		fx_open_l(&b, text_model(), text_cfg, &l, true);
		assert_string_equal(shardmap_family(b.p), "qwen3");
		for (uint32_t r = 0; r < l.tp_size; r++)
			fx_same_rank_strip(&a, &b, r, not_lm, LM, "qwen3");
		fx_close(&a);
		fx_close(&b);
	}
}

/* The tower's four Linears and the LM's quantized (Siglip2MLP has no 64-alignment exception:
 * MLP 96 quantized too); the patch Conv2d, position table, head (ReplicatedLinear without
 * quant_config), vte, norms and biases kept BF16: int8-channel TP 2 (rank 1's out_proj / fc2 /
 * o_proj codes by columns), fp8-channel TP 4. */
static void test_o25_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {VT "embeddings.patch_embedding.weight",
	                                   VT "embeddings.patch_embedding.bias",
	                                   VT "embeddings.position_embedding.weight",
	                                   VT "encoder.layers.1.self_attn.qkv_proj.bias",
	                                   VT "encoder.layers.1.mlp.fc1.bias",
	                                   VT "post_layernorm.weight",
	                                   H0,
	                                   "visual_tokenizer.head.1.weight",
	                                   "vte.weight",
	                                   LM "model.embed_tokens.weight",
	                                   L1 "self_attn.q_norm.weight"};
	static const char *const q[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                VT "encoder.layers.1.self_attn.out_proj.weight",
	                                VT "encoder.layers.1.mlp.fc1.weight",
	                                VT "encoder.layers.1.mlp.fc2.weight",
	                                L1 "self_attn.qkv_proj.weight",
	                                L1 "self_attn.o_proj.weight"};
	fx f;
	fx_open_quant(&f, o25_model(0), cfg, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(keep),
	              FX_N(q));
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.self_attn.out_proj.weight", VE, VE);
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.mlp.fc2.weight", VE, VI);
	fx_cols_int8_is(&f, 1, 2, L1 "self_attn.o_proj.weight", HID, HID);
	fx_close(&f);
	fx_open_quant(&f, o25_model(0), cfg, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(keep), FX_N(q));
	fx_close(&f);
	static const char odd[] = CFG(QW3, VIT("96", "8", ""));
	fx_open_quant(&f, o25_model_x(2, 96, 0), odd, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(keep),
	              FX_N(q));
	fx_close(&f);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 / 8; without the position table
 * too. */
static void test_o25_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(o25_model(0), cfg, 2, lays, 4);
	static const char nope[] = CFG(QW3, VIT("128", "8", ",\"preserve_original_pe\":false"));
	coverage(o25_model(O_NOPE), nope, 2, lays, 4);
}

/* preserve_original_pe false builds no position table (a checkpoint holding it refused naming
 * the key); true (the default) needs it. */
static void test_o25_pe(void **state)
{
	(void)state;
	static const char nope[] = CFG(QW3, VIT("128", "8", ",\"preserve_original_pe\":false"));
	fx f;
	fx_open(&f, o25_model(O_NOPE), nope, 2, 1, 0, true);
	assert_int_equal(tm_ix(f.p, 0, VT "embeddings.position_embedding.weight"), -1);
	repl(&f, 1, VT "embeddings.patch_embedding.weight");
	fx_close(&f);
	fx_refused(o25_model(0), nope, WT_EUNSUPPORTED, "position_embedding.weight",
	           "vit_config.preserve_original_pe is false");
	fx_refused(o25_model(O_NOPE), cfg, WT_ENOTFOUND, "position_embedding.weight",
	           "vit_config.preserve_original_pe");
}

/* config.json read: llm_config as the language model's (Qwen3Config's defaults, its tie alone),
 * vit_config's sizes with Siglip2NavitConfig's defaults, visual_vocab_size's default. */
static void test_o25_config(void **state)
{
	(void)state;
	ckpt_config c;
	tm_parse(cfg, &c);
	assert_string_equal(c.architecture, "Ovis2_5");
	assert_true(c.has_vision && c.ov25 && c.ov25_pe);
	assert_string_equal(c.lm_model_type, "qwen3");
	assert_int_equal(c.hidden_size, HID);
	assert_int_equal(c.head_dim, HD);
	assert_int_equal(c.v_hidden_size, VE);
	assert_int_equal(c.v_intermediate_size, VI);
	assert_int_equal(c.v_num_layers, 2);
	assert_int_equal(c.v_num_attn_heads, 8);
	assert_int_equal(c.v_num_pos, 4);
	assert_int_equal(c.v_spatial_merge_size, 2);
	assert_int_equal(c.ov_vocab, OVV);
	assert_int_equal(c.ov_hidden, HID);
	assert_int_equal(c.ov25_patches, -1);
	ckpt_config_clear(&c);
	tm_parse("{\"architectures\":[\"Ovis2_5\"],\"model_type\":\"ovis2_5\",\"hidden_size\":4096,"
	         "\"tie_word_embeddings\":true,\"llm_config\":{\"model_type\":\"qwen3\"},"
	         "\"vit_config\":{\"model_type\":\"siglip2_navit\"}}",
	         &c);
	assert_int_equal(c.v_hidden_size, 1024);
	assert_int_equal(c.v_intermediate_size, 4096);
	assert_int_equal(c.v_num_layers, 24);
	assert_int_equal(c.v_num_attn_heads, 16);
	assert_int_equal(c.v_in_chans, 3);
	assert_int_equal(c.v_image_size, 512);
	assert_int_equal(c.v_patch_size, 16);
	assert_int_equal(c.v_num_pos, 1024);
	assert_int_equal(c.v_spatial_merge_size, 2);
	assert_int_equal(c.ov25_patches, -1);
	assert_true(c.ov25_pe);
	assert_int_equal(c.ov_vocab, 65536);
	assert_int_equal(c.vocab_size, 151936);
	assert_int_equal(c.hidden_size, 4096);
	assert_false(c.tie_given && c.tie_word_embeddings);
	ckpt_config_clear(&c);
	/* tied by llm_config: the head is skipped */
	fx f;
	fx_open(&f, o25_model(0), CFG(QW3 ",\"tie_word_embeddings\":true", VIT("128", "8", "")), 2,
	        1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p) && fx_skipped(&f, LM "lm_head.weight"));
	fx_close(&f);
}

#define TOP "{\"architectures\":[\"Ovis2_5\"],\"model_type\":\"ovis2_5\",\"hidden_size\":128,"
/* a vit_config of the tower's width and heads, Siglip2NavitConfig's defaults otherwise */
#define VIT_MIN(extra)                                                                             \
	"\"vit_config\":{\"model_type\":\"siglip2_navit\",\"hidden_size\":64,"                     \
	"\"num_attention_heads\":8" extra "}"

/* The config refusals, each naming its key. */
static void test_o25_config_errors(void **state)
{
	(void)state;
	fx_refused(o25_model(0), TOP VIT("128", "8", "") "}", WT_ECORRUPT, "llm_config", "missing");
	fx_refused(o25_model(0), CFG("\"model_type\":\"qwen2\"", VIT("128", "8", "")),
	           WT_EUNSUPPORTED, "llm_config.model_type 'qwen2'", "only as qwen3");
	fx_refused(o25_model(0), TOP "\"llm_config\":{" QW3 "}}", WT_ECORRUPT, "vit_config",
	           "missing");
	fx_refused(o25_model(0),
	           CFG(QW3, "\"vit_config\":{\"model_type\":\"siglip_vision_model\"}"),
	           WT_EUNSUPPORTED, "vit_config.model_type 'siglip_vision_model'", "siglip2_navit");
	fx_refused(o25_model(0), CFG(QW3, VIT("128", "6", "")), WT_ECORRUPT,
	           "vit_config.num_attention_heads 6", "hidden_size 64");
	fx_refused(o25_model(0), CFG(QW3, VIT_MIN(",\"num_patches\":4")), WT_EUNSUPPORTED,
	           "vit_config.num_patches 4", "give -1");
	fx_refused(o25_model(0), CFG(QW3, VIT_MIN(",\"image_size\":1,\"patch_size\":2")),
	           WT_ECORRUPT, "vit_config.image_size 1", "patch_size 2");
	fx_refused(o25_model(0),
	           CFG(QW3, VIT_MIN(",\"image_size\":1099511627775,\"patch_size\":1")), WT_ECORRUPT,
	           "vit_config image_size 1099511627775", "not a model's");
	fx_refused(o25_model(0), CFG(QW3, VIT_MIN(",\"hidden_stride\":65")), WT_EUNSUPPORTED,
	           "vit_config.hidden_stride 65", "past 64");
	fx_refused(o25_model(0), CFG(QW3, VIT_MIN(",\"preserve_original_pe\":3")), WT_ECORRUPT,
	           "vit_config", "preserve_original_pe");
	fx_refused(o25_model(0), CFG_AT("", QW3, VIT("128", "8", "")), WT_ECORRUPT,
	           "top level's hidden_size is missing", "128");
	fx_refused(o25_model(0), CFG_AT("\"hidden_size\":64,", QW3, VIT("128", "8", "")),
	           WT_ECORRUPT, "hidden_size 64", "llm_config.hidden_size 128");
	/* the architecture under the other Ovis's model_type, and Ovis under this one */
	fx_refused(o25_model(0),
	           "{\"architectures\":[\"Ovis2_5\"],\"model_type\":\"ovis\",\"hidden_size\":128,"
	           "\"llm_config\":{\"model_type\":\"qwen2\"," LMK "},\"visual_tokenizer_config\":{"
	           "\"model_type\":\"aimv2_visual_tokenizer\",\"backbone_config\":{\"model_type\":"
	           "\"aimv2\"}}}",
	           WT_ECORRUPT, "Ovis2_5", "model_type ovis2_5");
	fx_refused(o25_model(0),
	           "{\"architectures\":[\"Ovis\"],\"model_type\":\"ovis2_5\",\"hidden_size\":128,"
	           "\"visual_vocab_size\":37,\"llm_config\":{" QW3 "}," VIT("128", "8", "") "}",
	           WT_ECORRUPT, "Ovis", "model_type ovis with");
}

/* The checkpoint and layout refusals, each naming its tensor or key. */
static void test_o25_errors(void **state)
{
	(void)state;
	/* vLLM divides the tower's 8 heads and its MLP by tp_size */
	fx_refused_tp(o25_model(0), cfg, 16, WT_ELAYOUT, "tp_size 16", "");
	fx_refused_tp(o25_model(0), CFG(QW3, VIT("128", "4", "")), 8, WT_ELAYOUT, "tp_size 8",
	              "vit_config.num_attention_heads 4");
	fx_refused_tp(o25_model_x(2, 100, 0), CFG(QW3, VIT("100", "8", "")), 8, WT_ELAYOUT,
	              "vit_config.intermediate_size", "100");
	/* a fused qkv_proj Siglip2NavitModel.load_weights cannot load */
	fx_refused(o25_model(O_FUSED), cfg, WT_EUNSUPPORTED,
	           "encoder.layers.0.self_attn.qkv_proj.weight", "q_proj, k_proj and v_proj");
	/* a block past the count, a missing one, q_norm missing, a head of the vte's rows */
	fx_refused(o25_model_x(3, VI, 0), cfg, WT_ESHAPE, "encoder.layers.2.",
	           "vit_config.num_hidden_layers is 2");
	fx_refused(o25_model_x(1, VI, 0), cfg, WT_ENOTFOUND, "encoder.layers.1.", "");
	fx_refused(o25_model(O_NOQKN), cfg, WT_ENOTFOUND, "q_norm", "");
	fx_refused(o25_model(O_BIGHEAD), cfg, WT_ESHAPE, H0, "33");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_o25_slices),
	    cmocka_unit_test(test_o25_same_lm),
	    cmocka_unit_test(test_o25_quant),
	    cmocka_unit_test(test_o25_coverage),
	    cmocka_unit_test(test_o25_pe),
	    cmocka_unit_test(test_o25_config),
	    cmocka_unit_test(test_o25_config_errors),
	    cmocka_unit_test(test_o25_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
