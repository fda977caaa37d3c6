/*
 * test_shardmap_ovis.c — Ovis (Ovis, model_type ovis: Ovis2; docs/format.md section 2.7), cut as
 * vLLM's ovis.py / aimv2.py load it: the AIMv2 block's rank slices by hand at TP 2 and 4
 * (attn.qkv [q_r; k_r; v_r] with its bias, attn.proj by columns, mlp.fc1 / fc3 by rows into
 * fc13 [fc1_r; fc3_r], fc2 by columns, the norms whole), the patch embedding, position table,
 * head and vte whole and never quantized, trunk.post_trunk_norm skipped; the language model
 * under llm. byte for byte the qwen2 / llama families' ranks of the same weights (TP 1 / 2 / 4 /
 * 8, int8-channel TP 2, fp8-channel TP 4); coverage; the backbone's bias switches; the config
 * classes' defaults; the refusals; Ovis1.6's SigLIP backbone (LLaVA's SigLIP cut, its pooling
 * head). Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x0915ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_swiglu_vit.h"

/* the LM: hid 128, H 8, KV 2, d 16, I 192, V 1000 (padded 1024), 2 layers; the backbone: width
 * 64, 4 heads of 16, MLP 96, image 28 / patch 14 (2 x 2 patches), 2 blocks; hidden_stride 2
 * (the head 64 x 2^2 = 256 wide); the visual vocabulary 37 (the head's 32 rows) */
#define HID 128
#define HD  16
#define I   192
#define V   1000
#define VP  1024
#define VE  64
#define VI  96
#define VM  256
#define OVV 37
#define OVH 32
#define LM  "llm."
#define VT  "visual_tokenizer.backbone."
#define B0  VT "trunk.blocks.0."
#define B1  VT "trunk.blocks.1."
#define L1  LM "model.layers.1."

#define QW_LM0                                                                                     \
	"\"architectures\":[\"Qwen2ForCausalLM\"],\"model_type\":\"qwen2\",\"hidden_size\":128,"   \
	"\"intermediate_size\":192,\"num_attention_heads\":8,\"num_key_value_heads\":2,"           \
	"\"vocab_size\":1000,\"num_hidden_layers\":2"
#define QW_LM QW_LM0 ",\"tie_word_embeddings\":false"
#define LL_LM                                                                                      \
	"\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":128,"   \
	"\"intermediate_size\":192,\"num_attention_heads\":8,\"num_key_value_heads\":2,"           \
	"\"vocab_size\":1000,\"num_hidden_layers\":2,\"tie_word_embeddings\":false"
#define BB(heads, extra)                                                                           \
	"\"backbone_config\":{\"model_type\":\"aimv2\",\"hidden_size\":64,\"intermediate_size\":"  \
	"96,\"num_hidden_layers\":2,\"num_attention_heads\":" heads ",\"image_size\":28,"          \
	"\"patch_size\":14" extra "}"
#define VTC(stride, bb)                                                                            \
	"\"visual_tokenizer_config\":{\"model_type\":\"aimv2_visual_tokenizer\",\"vocab_size\":"   \
	"37,\"hidden_stride\":" stride ",\"tokenize_function\":\"softmax\"," bb "}"
/* every bias switch on (qkv_bias, use_bias): each switched tensor present */
#define SW ",\"qkv_bias\":true,\"use_bias\":true"
#define CFG_AT(top, lm, vtc)                                                                       \
	"{\"architectures\":[\"Ovis\"],\"model_type\":\"ovis\",\"multimodal_max_length\":"         \
	"8192," top "\"llm_config\":{" lm "}," vtc "}"
#define CFG(lm, vtc) CFG_AT("\"hidden_size\":128,", lm, vtc)

static const char cfg_qw[] = CFG(QW_LM, VTC("2", BB("4", SW)));
static const char cfg_ll[] = CFG(LL_LM, VTC("2", BB("4", SW)));
static const char cfg_off[] = CFG(QW_LM, VTC("2", BB("4", "")));
/* 8 backbone heads (of 8): every tp_size up to 8 divides them */
static const char cfg8_qw[] = CFG(QW_LM, VTC("2", BB("8", SW)));
static const char cfg8_ll[] = CFG(LL_LM, VTC("2", BB("8", SW)));
static const char cfg_qw_text[] = "{" QW_LM "}";
static const char cfg_ll_text[] = "{" LL_LM "}";

/* the optional leaves: qkv_bias's, use_bias's */
enum { O_QKVB = 1, O_BIAS = 2, O_ALL = 3 };

static void add_4d(tm_model *m, const char *name, int64_t a, int64_t b, int64_t c, int64_t d)
{
	tm_add(m, name, WT_DTYPE_INVALID, 1, a * b * c * d, 0, 0);
	st_desc *s = &m->d[m->n - 1];
	s->ndim = 4;
	s->shape[0] = a;
	s->shape[1] = b;
	s->shape[2] = c;
	s->shape[3] = d;
}

/* Qwen2's / Llama's language model under prefix p, 2 layers (q/k/v biases either way: the table
 * takes them when present), its head. */
static void add_lm(tm_model *m, const char *p)
{
	char b[200], fmt[100];
	snprintf(b, sizeof(b), "%smodel.embed_tokens.weight", p);
	tm_add2(m, b, V, HID);
	snprintf(b, sizeof(b), "%smodel.norm.weight", p);
	tm_add2(m, b, HID, 0);
	snprintf(b, sizeof(b), "%slm_head.weight", p);
	tm_add2(m, b, V, HID);
	snprintf(fmt, sizeof(fmt), "%smodel.layers.%%d.", p);
	static const tm_leaf qw[] = {
	    {"input_layernorm.weight", HID, 0},    {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", HID, HID}, {"self_attn.q_proj.bias", HID, 0},
	    {"self_attn.k_proj.weight", 32, HID},  {"self_attn.k_proj.bias", 32, 0},
	    {"self_attn.v_proj.weight", 32, HID},  {"self_attn.v_proj.bias", 32, 0},
	    {"self_attn.o_proj.weight", HID, HID}, {"mlp.gate_proj.weight", I, HID},
	    {"mlp.up_proj.weight", I, HID},        {"mlp.down_proj.weight", HID, I}};
	tm_layers(m, fmt, 2, qw, TM_NLEAVES(qw), 0);
}

/* The AIMv2 block's leaves (when: the option that puts the leaf in; a = -1: VI rows, b = -1: VI
 * columns). */
static const tm_leaf blk[] = {
    {"norm_1.weight", VE, 0, 0},        {"norm_2.weight", VE, 0, 0},
    {"attn.qkv.weight", 3 * VE, VE, 0}, {"attn.qkv.bias", 3 * VE, 0, O_QKVB},
    {"attn.proj.weight", VE, VE, 0},    {"attn.proj.bias", VE, 0, O_BIAS},
    {"mlp.fc1.weight", -1, VE, 0},      {"mlp.fc1.bias", -1, 0, O_BIAS},
    {"mlp.fc3.weight", -1, VE, 0},      {"mlp.fc3.bias", -1, 0, O_BIAS},
    {"mlp.fc2.weight", VE, -1, 0},      {"mlp.fc2.bias", VE, 0, O_BIAS},
};

/* Ovis: the LM, `blocks` backbone blocks (MLP vi wide) with the optional leaves opt names, the
 * patch embedding, position table, post_trunk_norm, head and vte (a head of hrows rows). */
static tm_model *ovis_model_x(int blocks, unsigned opt, int64_t hrows, int64_t vi)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, LM);
	char b[200];
	for (int i = 0; i < blocks; i++)
		for (size_t k = 0; k < TM_NLEAVES(blk); k++) {
			if (blk[k].when != 0 && !(blk[k].when & (int)opt))
				continue;
			snprintf(b, sizeof(b), VT "trunk.blocks.%d.%s", i, blk[k].leaf);
			tm_add2(m, b, blk[k].a < 0 ? vi : blk[k].a, blk[k].b < 0 ? vi : blk[k].b);
		}
	add_4d(m, VT "preprocessor.patchifier.proj.weight", VE, 3, 14, 14);
	tm_add2(m, VT "preprocessor.patchifier.proj.bias", VE, 0);
	tm_add2(m, VT "preprocessor.patchifier.norm.weight", VE, 0);
	tm_add(m, VT "preprocessor.pos_embed", WT_DTYPE_INVALID, 3, 1, 4, VE);
	tm_add2(m, VT "trunk.post_trunk_norm.weight", VE, 0);
	tm_add2(m, "visual_tokenizer.head.0.weight", hrows, VM);
	tm_add2(m, "visual_tokenizer.head.1.weight", hrows, 0);
	tm_add2(m, "visual_tokenizer.head.1.bias", hrows, 0);
	tm_add2(m, "vte.weight", OVV, HID);
	return m;
}

static tm_model *ovis_model(int blocks, unsigned opt)
{
	return ovis_model_x(blocks, opt, OVH, VI);
}

static tm_model *text_model(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, "");
	return m;
}

static const char *const whole[] = {
    VT "preprocessor.patchifier.proj.weight", VT "preprocessor.patchifier.proj.bias",
    VT "preprocessor.patchifier.norm.weight", VT "preprocessor.pos_embed",
    "visual_tokenizer.head.0.weight",         "visual_tokenizer.head.1.weight",
    "visual_tokenizer.head.1.bias",           "vte.weight"};

/* Rank r of T's AIMv2 block b by hand (fx_swiglu_vit_block_is). */
static void block_is(const fx *f, uint32_t T, uint32_t r, int b, bool bias)
{
	fx_swiglu_vit_block_is(f, T, r, b ? B1 : B0, "norm_1.weight", "norm_2.weight", VE, VI,
	                       bias);
}

/* TP 2 and 4 by hand, the biases on and off: the backbone's blocks, the patch embedding,
 * position table, head and vte whole, the LM's layer 1; post_trunk_norm skipped, every rank's
 * count. */
static void test_ov_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2)
		for (int bias = 1; bias >= 0; bias--) {
			fx f;
			fx_open(&f, ovis_model(2, bias ? O_ALL : 0), bias ? cfg_qw : cfg_off, T, 1,
			        0, true);
			assert_string_equal(shardmap_family(f.p), "ovis");
			for (uint32_t r = 0; r < T; r++) {
				block_is(&f, T, r, 0, bias);
				block_is(&f, T, r, 1, bias);
				for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++)
					repl(&f, r, whole[k]);
				assert_int_equal(
				    info(&f, r, VT "preprocessor.patchifier.proj.weight")->ndim, 4);
				assert_int_equal(info(&f, r, VT "preprocessor.pos_embed")->ndim, 3);
				fx_attn_is(&f, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, HD,
				           HID);
				fx_mlp_is(&f, r, T, L1 "mlp.", I, HID);
				fx_vocab_is(&f, r, T, LM "lm_head.weight", V, VP, HID);
				fx_vocab_is(&f, r, T, LM "model.embed_tokens.weight", V, VP, HID);
				assert_int_equal(tm_ix(f.p, r, VT "trunk.post_trunk_norm.weight"),
				                 -1);
				/* 2 blocks x (6 or 10), 8 outside them; the LM's 3 + 2 x 7 */
				assert_int_equal(shardmap_rank_n_tensors(f.p, r),
				                 2 * (bias ? 10 : 6) + 8 + 3 + 2 * 7);
			}
			assert_false(shardmap_tied_lm_head(f.p));
			assert_int_equal(shardmap_n_skipped(f.p), 1);
			assert_true(fx_skipped(&f, VT "trunk.post_trunk_norm.weight"));
			fx_close(&f);
		}
}

/* Every rank's llm.* outputs byte for byte the text family's ranks of the same weights (no
 * more, no fewer), in layout l: Qwen2's and Llama's. */
static void same_lm_at(bool llama, const wt_layout *l)
{
	fx a, b;
	fx_open_l(&a, ovis_model(2, O_ALL), llama ? cfg8_ll : cfg8_qw, l, true);
	fx_open_l(&b, text_model(), llama ? cfg_ll_text : cfg_qw_text, l, true);
	assert_string_equal(shardmap_family(b.p), llama ? "llama" : "qwen2");
	for (uint32_t r = 0; r < l->tp_size; r++)
		fx_same_rank(&a, &b, r, LM);
	fx_close(&a);
	fx_close(&b);
}

/* TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4; Qwen2 and Llama. */
static void test_ov_same_lm(void **state)
{
	(void)state;
	static const struct {
		uint32_t tp;
		wt_quant q;
	} lays[] = {{1, WT_QUANT_NONE}, {2, WT_QUANT_NONE},         {4, WT_QUANT_NONE},
	            {8, WT_QUANT_NONE}, {2, WT_QUANT_INT8_CHANNEL}, {4, WT_QUANT_FP8_CHANNEL}};
	for (size_t k = 0; k < sizeof(lays) / sizeof(lays[0]); k++)
		for (int llama = 0; llama <= 1; llama++) {
			wt_layout l;
			wt_layout_init(&l);
			l.tp_size = lays[k].tp;
			l.quant = lays[k].q;
			same_lm_at(llama, &l);
		}
}

/* The backbone's Linears and the LM's quantized; the head, vte, patch embedding, position
 * table, norms and biases kept BF16: int8-channel TP 2 (rank 1's proj, fc2 and o_proj codes by
 * columns), fp8-channel TP 4. */
static void test_ov_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {"visual_tokenizer.head.0.weight",
	                                   "visual_tokenizer.head.1.weight",
	                                   "vte.weight",
	                                   VT "preprocessor.patchifier.proj.weight",
	                                   VT "preprocessor.pos_embed",
	                                   B1 "attn.qkv.bias",
	                                   B1 "mlp.fc13.bias",
	                                   B1 "norm_1.weight",
	                                   LM "model.embed_tokens.weight"};
	static const char *const q[] = {B0 "attn.qkv.weight", B1 "attn.proj.weight",
	                                B1 "mlp.fc13.weight", B1 "mlp.fc2.weight",
	                                L1 "self_attn.o_proj.weight"};
	size_t nk = sizeof(keep) / sizeof(keep[0]), nq = sizeof(q) / sizeof(q[0]);
	fx f;
	fx_open_quant(&f, ovis_model(2, O_ALL), cfg_qw, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, keep, nk,
	              q, nq);
	fx_cols_int8_is(&f, 1, 2, B1 "attn.proj.weight", VE, VE);
	fx_cols_int8_is(&f, 1, 2, B1 "mlp.fc2.weight", VE, VI);
	fx_cols_int8_is(&f, 1, 2, L1 "self_attn.o_proj.weight", HID, HID);
	fx_close(&f);
	fx_open_quant(&f, ovis_model(2, O_ALL), cfg_qw, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, keep, nk,
	              q, nq);
	fx_close(&f);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4, the switches on and off, both
 * LMs. */
static void test_ov_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}};
	coverage(ovis_model(2, O_ALL), cfg_qw, 2, lays, 3);
	coverage(ovis_model(2, O_ALL), cfg_ll, 2, lays, 3);
	coverage(ovis_model(2, 0), cfg_off, 2, lays, 3);
}

/* The backbone's switches: a bias they leave unbuilt is refused naming the key, a missing one
 * they ask for too; qkv_bias alone builds the qkv bias alone. */
static void test_ov_switches(void **state)
{
	(void)state;
	static const char qkvb[] = CFG(QW_LM, VTC("2", BB("4", ",\"qkv_bias\":true")));
	static const char useb[] = CFG(QW_LM, VTC("2", BB("4", ",\"use_bias\":true")));
	fx f;
	fx_open(&f, ovis_model(2, O_QKVB), qkvb, 2, 1, 0, true);
	shp(&f, 1, B1 "attn.qkv.bias", 1, 3 * VE / 2, 0, 0);
	assert_int_equal(tm_ix(f.p, 1, B1 "mlp.fc13.bias"), -1);
	fx_close(&f);
	fx_open(&f, ovis_model(2, O_BIAS), useb, 2, 1, 0, true);
	block_is(&f, 2, 1, 1, false);
	rows_at(&f, 1, B1 "mlp.fc13.bias", VI / 2, B1 "mlp.fc3.bias", VI / 2, VI / 2);
	repl(&f, 1, B1 "attn.proj.bias");
	fx_close(&f);
	fx_refused(ovis_model(2, O_ALL), qkvb, WT_EUNSUPPORTED, "attn.proj.bias", "use_bias");
	fx_refused(ovis_model(2, O_ALL), useb, WT_EUNSUPPORTED, "attn.qkv.bias", "qkv_bias");
	fx_refused(ovis_model(2, O_BIAS), cfg_qw, WT_ENOTFOUND, "attn.qkv.bias", "qkv_bias");
	fx_refused(ovis_model(2, O_QKVB), cfg_qw, WT_ENOTFOUND, "attn.proj.bias", "use_bias");
}

/* AIMv2Config's defaults (a backbone_config with its model_type alone), the visual tokenizer's
 * vocab_size / hidden_stride defaults, the LM class's defaults (Qwen2Config's vocab_size), the
 * tie from llm_config alone. */
static void test_ov_defaults(void **state)
{
	(void)state;
	ckpt_config c;
	tm_parse("{\"architectures\":[\"Ovis\"],\"model_type\":\"ovis\",\"hidden_size\":4096,"
	         "\"tie_word_embeddings\":true,\"llm_config\":{\"model_type\":\"qwen2\"},"
	         "\"visual_tokenizer_config\":{\"model_type\":\"aimv2_visual_tokenizer\","
	         "\"backbone_config\":{\"model_type\":\"aimv2\"}}}",
	         &c);
	assert_int_equal(c.v_hidden_size, 1024);
	assert_int_equal(c.v_intermediate_size, 2816);
	assert_int_equal(c.v_num_layers, 24);
	assert_int_equal(c.v_num_attn_heads, 8);
	assert_int_equal(c.v_image_size, 224);
	assert_int_equal(c.v_patch_size, 14);
	assert_int_equal(c.v_in_chans, 3);
	assert_true(!c.v_attn_bias && !c.ov_use_bias);
	assert_int_equal(c.ov_vocab, 16384);
	assert_int_equal(c.v_spatial_merge_size, 1);
	assert_int_equal(c.ov_hidden, 4096);
	assert_string_equal(c.lm_model_type, "qwen2");
	assert_int_equal(c.vocab_size, 151936);
	assert_int_equal(c.hidden_size, 4096);
	assert_false(c.tie_given && c.tie_word_embeddings);
	ckpt_config_clear(&c);
	tm_parse(CFG_AT("\"hidden_size\":128,\"tie_word_embeddings\":false,",
	                QW_LM0 ",\"tie_word_embeddings\":true", VTC("2", BB("4", SW))),
	         &c);
	assert_true(c.tie_given && c.tie_word_embeddings);
	assert_true(c.v_attn_bias && c.ov_use_bias);
	assert_int_equal(c.v_spatial_merge_size, 2);
	assert_int_equal(c.ov_vocab, 37);
	ckpt_config_clear(&c);
	/* a top-level tie over a llm_config without the key: Qwen2Config's untied default */
	tm_parse(CFG_AT("\"hidden_size\":128,\"tie_word_embeddings\":true,", QW_LM0,
	                VTC("2", BB("4", SW))),
	         &c);
	assert_false(c.tie_given && c.tie_word_embeddings);
	ckpt_config_clear(&c);
	/* tied by llm_config: the head is skipped */
	fx f;
	fx_open(&f, ovis_model(2, O_ALL),
	        CFG(QW_LM0 ",\"tie_word_embeddings\":true", VTC("2", BB("4", SW))), 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p) && fx_skipped(&f, LM "lm_head.weight"));
	fx_close(&f);
}

#define TOP "{\"architectures\":[\"Ovis\"],\"model_type\":\"ovis\",\"hidden_size\":128,"

/* The refusals, each naming its key. */
static void test_ov_errors(void **state)
{
	(void)state;
	fx_refused(ovis_model(2, O_ALL), TOP VTC("2", BB("4", SW)) "}", WT_ECORRUPT, "llm_config",
	           "missing");
	fx_refused(ovis_model(2, O_ALL), TOP "\"llm_config\":3," VTC("2", BB("4", SW)) "}",
	           WT_ECORRUPT, "llm_config", "not an object");
	fx_refused(ovis_model(2, O_ALL),
	           CFG("\"architectures\":[\"Qwen2ForCausalLM\"]", VTC("2", BB("4", SW))),
	           WT_ECORRUPT, "llm_config.model_type", "missing");
	fx_refused(ovis_model(2, O_ALL), CFG("\"model_type\":\"gemma2\"", VTC("2", BB("4", SW))),
	           WT_EUNSUPPORTED, "llm_config.model_type 'gemma2'", "qwen2 or llama");
	fx_refused(ovis_model(2, O_ALL), CFG("\"model_type\":\"qwen3\"", VTC("2", BB("4", SW))),
	           WT_EUNSUPPORTED, "llm_config.model_type 'qwen3'", "qwen2 or llama");
	fx_refused(ovis_model(2, O_ALL), TOP "\"llm_config\":{" QW_LM "}}", WT_ECORRUPT,
	           "visual_tokenizer_config", "missing");
	fx_refused(ovis_model(2, O_ALL),
	           CFG(QW_LM, "\"visual_tokenizer_config\":{\"model_type\":"
	                      "\"clip_visual_tokenizer\"," BB("4", SW) "}"),
	           WT_EUNSUPPORTED, "model_type 'clip_visual_tokenizer'",
	           "siglip_visual_tokenizer");
	fx_refused(ovis_model(2, O_ALL),
	           CFG(QW_LM, "\"visual_tokenizer_config\":{\"model_type\":"
	                      "\"aimv2_visual_tokenizer\"}"),
	           WT_ECORRUPT, "visual_tokenizer_config.backbone_config", "missing");
	fx_refused(ovis_model(2, O_ALL),
	           CFG(QW_LM, VTC("2", "\"backbone_config\":{\"model_type\":"
	                               "\"clip_vision_model\"}")),
	           WT_EUNSUPPORTED, "backbone_config.model_type 'clip_vision_model'",
	           "siglip_vision_model");
	fx_refused(ovis_model(2, O_ALL), CFG(QW_LM, VTC("2", BB("3", SW))), WT_ECORRUPT,
	           "backbone_config num_attention_heads 3", "hidden_size 64");
	fx_refused(ovis_model(2, O_ALL), CFG(QW_LM, VTC("3", BB("4", SW))), WT_EUNSUPPORTED,
	           "hidden_stride 3", "get_image_segment_len");
	fx_refused(ovis_model(2, O_ALL), CFG(QW_LM, VTC("2", BB("4", ",\"use_bias\":3"))),
	           WT_ECORRUPT, "backbone_config", "use_bias");
	fx_refused(ovis_model(2, O_ALL), CFG_AT("", QW_LM, VTC("2", BB("4", SW))), WT_ECORRUPT,
	           "top level's hidden_size is missing", "128");
	fx_refused(ovis_model(2, O_ALL),
	           CFG_AT("\"hidden_size\":64,", QW_LM, VTC("2", BB("4", SW))), WT_ECORRUPT,
	           "hidden_size 64", "llm_config.hidden_size 128");
	/* vLLM divides the backbone's 4 heads by tp_size: TP 8 refused naming the key */
	fx_refused_tp(ovis_model(2, O_ALL), cfg_qw, 8, WT_ELAYOUT,
	              "visual_tokenizer_config.backbone_config.num_attention_heads", "8");
	/* an MLP of 100 rows: TP 8 does not divide it */
	fx_refused_tp(ovis_model_x(2, O_ALL, OVH, 100),
	              CFG(QW_LM, VTC("2", "\"backbone_config\":{\"model_type\":\"aimv2\","
	                                  "\"hidden_size\":64,\"intermediate_size\":100,"
	                                  "\"num_hidden_layers\":2,\"num_attention_heads\":8,"
	                                  "\"image_size\":28,\"patch_size\":14" SW "}")),
	              8, WT_ELAYOUT, "visual_tokenizer_config.backbone_config.intermediate_size",
	              "100");
	fx_refused(ovis_model(2, O_ALL),
	           "{\"architectures\":[\"Ovis\"],\"model_type\":\"qwen2\",\"hidden_size\":128,"
	           "\"intermediate_size\":192,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ECORRUPT, "Ovis", "model_type ovis");
	/* a head sized for another visual vocabulary */
	fx_refused(ovis_model_x(2, O_ALL, OVV, VI), cfg_qw, WT_ESHAPE,
	           "visual_tokenizer.head.0.weight", "32");
	/* a block past backbone_config.num_hidden_layers */
	fx_refused(ovis_model(3, O_ALL), cfg_qw, WT_EUNSUPPORTED, "trunk.blocks.2.",
	           "visual_tokenizer_config.backbone_config.num_hidden_layers");
}

/* Ovis1.6's SigLIP backbone: width 64, 4 heads, MLP vi, image 4 / patch 2 (2 x 2 patches), 2
 * blocks and post_layernorm, the pooling head (use_head); hidden_stride 2. */
#define SV VT "vision_model."
#define BB_SIG(vi, extra)                                                                          \
	"\"backbone_config\":{\"model_type\":\"siglip_vision_model\",\"hidden_size\":64,"          \
	"\"intermediate_size\":" vi ",\"num_hidden_layers\":2,\"num_attention_heads\":4,"          \
	"\"image_size\":4,\"patch_size\":2" extra "}"
#define VTC_SIG(bb)                                                                                \
	"\"visual_tokenizer_config\":{\"model_type\":\"siglip_visual_tokenizer\",\"vocab_size\":"  \
	"37,\"hidden_stride\":2," bb "}"

static tm_model *siglip_model_n(bool head, int64_t vi, int blocks)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, LM);
	mm_add_vit_at(m, LAY_TEXT, SV, false, VE, vi, 4, blocks);
	if (head)
		fx_add_siglip_head(m, SV "head.", VE, vi);
	tm_add2(m, "visual_tokenizer.head.0.weight", OVH, VM);
	tm_add2(m, "visual_tokenizer.head.1.weight", OVH, 0);
	tm_add2(m, "visual_tokenizer.head.1.bias", OVH, 0);
	tm_add2(m, "vte.weight", OVV, HID);
	return m;
}

static tm_model *siglip_model(bool head, int64_t vi)
{
	return siglip_model_n(head, vi, 2);
}

/* Ovis1.6's SigLIP backbone at TP 2 / 4 by hand (LLaVA's SigLIP cut: q/k/v fused by heads,
 * out_proj / fc2 by columns, fc1 by rows, post_layernorm and the embeddings whole, the pooling
 * head's MLP split), the language model byte for byte qwen2's; vision_use_head false builds no
 * pooling head (a checkpoint holding it refused naming the key); a SiglipMLP of 96 (not a
 * multiple of 64) kept BF16 under int8-channel, one of 128 quantized. */
static void test_ov_siglip(void **state)
{
	(void)state;
	static const char cfg[] = CFG(QW_LM, VTC_SIG(BB_SIG("128", "")));
	static const char nohead[] =
	    CFG(QW_LM, VTC_SIG(BB_SIG("128", ",\"vision_use_head\":false")));
	static const char odd[] = CFG(QW_LM, VTC_SIG(BB_SIG("96", "")));
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f, t;
		fx_open(&f, siglip_model(true, 128), cfg, T, 1, 0, true);
		fx_open(&t, text_model(), cfg_qw_text, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "ovis");
		for (uint32_t r = 0; r < T; r++) {
			for (int b = 0; b < 2; b++)
				fx_vit_block(&f, T, r, SV "encoder.layers.%d.", b, VE, 128);
			fx_siglip_head_is(&f, T, r, SV "head.", VE, 128);
			static const char *const w[] = {SV "post_layernorm.weight",
			                                SV "post_layernorm.bias",
			                                SV "embeddings.patch_embedding.weight",
			                                SV "embeddings.patch_embedding.bias",
			                                SV "embeddings.position_embedding.weight",
			                                "visual_tokenizer.head.0.weight",
			                                "visual_tokenizer.head.1.bias",
			                                "vte.weight"};
			for (size_t k = 0; k < sizeof(w) / sizeof(w[0]); k++)
				repl(&f, r, w[k]);
			fx_same_rank(&f, &t, r, LM);
		}
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
		fx_close(&t);
	}
	fx f;
	fx_open(&f, siglip_model(false, 128), nohead, 2, 1, 0, true);
	assert_int_equal(tm_ix(f.p, 0, SV "head.probe"), -1);
	fx_close(&f);
	fx_refused(siglip_model(true, 128), nohead, WT_EUNSUPPORTED, "vision_model.head.",
	           "backbone_config.vision_use_head");
	fx_refused(siglip_model(false, 128), cfg, WT_ENOTFOUND, "vision_model.head.",
	           "backbone_config.vision_use_head");
	/* a block past the count: the key named is the backbone's (the family's depth_key) */
	fx_refused(siglip_model_n(true, 128, 3), cfg, WT_ESHAPE, "encoder.layers.2.",
	           "visual_tokenizer_config.backbone_config.num_hidden_layers is 2");
	static const char *const keep[] = {
	    SV "encoder.layers.1.mlp.fc1.weight", SV "encoder.layers.1.mlp.fc2.weight",
	    SV "head.mlp.fc1.weight", "visual_tokenizer.head.0.weight"};
	static const char *const q[] = {SV "encoder.layers.1.self_attn.qkv_proj.weight",
	                                SV "encoder.layers.1.self_attn.out_proj.weight",
	                                L1 "self_attn.o_proj.weight"};
	fx_open_quant(&f, siglip_model(true, 96), odd, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, keep, 4,
	              q, 3);
	fx_close(&f);
	fx_open_quant(&f, siglip_model(true, 128), cfg, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, keep + 3,
	              1, keep, 3);
	fx_close(&f);
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}};
	coverage(siglip_model(true, 128), cfg, 2, lays, 3);
	coverage(siglip_model(false, 128), nohead, 2, lays, 3);
	/* SiglipVisionConfig's defaults (a backbone_config with its model_type alone) */
	ckpt_config c;
	tm_parse("{\"architectures\":[\"Ovis\"],\"model_type\":\"ovis\",\"hidden_size\":3072,"
	         "\"llm_config\":{\"model_type\":\"llama\"},\"visual_tokenizer_config\":{"
	         "\"model_type\":\"siglip_visual_tokenizer\",\"backbone_config\":{\"model_type\":"
	         "\"siglip_vision_model\"}}}",
	         &c);
	assert_int_equal(c.v_hidden_size, 768);
	assert_int_equal(c.v_intermediate_size, 3072);
	assert_int_equal(c.v_num_layers, 12);
	assert_int_equal(c.v_num_attn_heads, 12);
	assert_int_equal(c.v_image_size, 224);
	assert_int_equal(c.v_patch_size, 16);
	assert_true(c.v_use_head);
	assert_string_equal(c.v_model_type, "siglip_vision_model");
	assert_string_equal(c.lm_model_type, "llama");
	assert_int_equal(c.vocab_size, 32000); /* LlamaConfig's */
	ckpt_config_clear(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ov_slices),   cmocka_unit_test(test_ov_same_lm),
	    cmocka_unit_test(test_ov_quant),    cmocka_unit_test(test_ov_coverage),
	    cmocka_unit_test(test_ov_switches), cmocka_unit_test(test_ov_defaults),
	    cmocka_unit_test(test_ov_errors),   cmocka_unit_test(test_ov_siglip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
