/*
 * test_shardmap_nvlm.c — NVLM-D (NVLM_D, model_type NVLM_D, remote code; docs/format.md section
 * 2.7), cut as vLLM's nvlm_d.py / internvl.py / intern_vit.py load it: InternViT with 7 dummy
 * heads (attn.qkv [3 (H + 7) d, VE] by H + 7 heads into [q_r; k_r; v_r], q_norm / k_norm
 * [(H + 7) d] whole, attn.proj [VE, (H + 7) d] by columns; whole and unquantized where H + 7
 * does not divide tp_size), NVLMProjector's mlp1 (LayerNorm, Linear [I, VM], Linear [hid, I],
 * no biases) whole and never quantized, the Qwen2 language model byte for byte the qwen2
 * family's; coverage; select_layer; the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x4e564cull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* the LM: hid 128, H 8, KV 2, d 16, I 192, V 1000 (padded 1024), 2 layers; the tower: heads of
 * 8, MLP 96, image 28 / patch 14 (5 positions), 2 blocks: 25 heads (InternViT-6B's count: 200
 * wide, 32 heads with the dummy ones, 256) or 5 (40 wide, 12 heads, 96); mlp1 VE x 2^2 */
#define HID 128
#define HD  16
#define I   192
#define V   1000
#define VP  1024
#define VD  8
#define VI  96
#define LM  "language_model."
#define VT  "vision_model."
#define B0  VT "encoder.layers.0."
#define B1  VT "encoder.layers.1."
#define L1  LM "model.layers.1."

#define QW_LM                                                                                      \
	"\"architectures\":[\"Qwen2ForCausalLM\"],\"model_type\":\"qwen2\",\"hidden_size\":128,"   \
	"\"intermediate_size\":192,\"num_attention_heads\":8,\"num_key_value_heads\":2,"           \
	"\"vocab_size\":1000,\"num_hidden_layers\":2"
/* NVLM-D-72B's vision_config switches: no qkv bias, qk_normalization, rms_norm (sw "") */
#define VKEYS(w, heads, sw)                                                                        \
	"\"vision_config\":{\"architectures\":[\"InternVisionModel\"],\"model_type\":"             \
	"\"intern_vit_6b\",\"hidden_size\":" w ",\"intermediate_size\":96,"                        \
	"\"num_hidden_layers\":2,\"num_attention_heads\":" heads ",\"image_size\":28,"             \
	"\"patch_size\":14,\"norm_type\":\"rms_norm\"" sw "}"
#define NV_SW ",\"qkv_bias\":false,\"qk_normalization\":true"
#define CFG_ALL(arch, mt, top, lm, vis)                                                            \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"" mt "\",\"downsample_ratio\":0.5,"    \
	"\"template\":\"chatml\"," top "\"llm_config\":{" lm "}," vis "}"
#define CFG_AT(top, lm, vis) CFG_ALL("NVLM_D", "NVLM_D", top, lm, vis)
#define CFG(top)             CFG_AT(top, QW_LM, VKEYS("200", "25", NV_SW))

static const char cfg25[] = CFG("");
static const char cfg5[] = CFG_AT("", QW_LM, VKEYS("40", "5", NV_SW));
static const char cfg_text[] = "{" QW_LM "}";

/* The tower's variants */
enum {
	O_BIAS = 1,   /* qkv_bias true: attn.qkv.bias [3 VA] */
	O_NOQKN = 2,  /* no q_norm / k_norm */
	O_NODUM = 4,  /* InternVL's widths (no dummy heads): qkv [3 VE, VE], proj [VE, VE] */
	O_IVLMLP = 8, /* InternVL's mlp1: [hid, VM] / [hid, hid] with biases */
	O_PROJ0 = 16, /* attn.proj alone without the dummy heads' columns */
	O_QKV30 = 32, /* attn.qkv 3 x 30 heads (neither width) */
	O_QKV0 = 64,  /* attn.qkv alone without the dummy heads' rows */
};

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

/* NVLM-D's checkpoint: the Qwen2 LM, `blocks` InternViT blocks of nh heads (nh + 7 stored, the
 * attention VA wide; opt's variants), the embeddings and mlp1. */
static tm_model *nvlm_model(int64_t nh, int blocks, unsigned opt)
{
	int64_t ve = nh * VD, va = (opt & O_NODUM) ? ve : (nh + 7) * VD, vm = 4 * ve;
	int64_t qa = (opt & O_QKV30)  ? 30 * VD
	             : (opt & O_QKV0) ? ve
	                              : va,
	        pa = (opt & O_PROJ0) ? ve : va;
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, LM);
	const tm_leaf blk[] = {
	    {"attn.qkv.weight", 3 * qa, ve, 0},
	    {"attn.qkv.bias", 3 * va, 0, O_BIAS},
	    {"attn.q_norm.weight", va, 0, O_NOQKN},
	    {"attn.k_norm.weight", va, 0, O_NOQKN},
	    {"attn.proj.weight", ve, pa, 0},
	    {"attn.proj.bias", ve, 0, 0},
	    {"mlp.fc1.weight", VI, ve, 0},
	    {"mlp.fc1.bias", VI, 0, 0},
	    {"mlp.fc2.weight", ve, VI, 0},
	    {"mlp.fc2.bias", ve, 0, 0},
	    {"norm1.weight", ve, 0, 0},
	    {"norm2.weight", ve, 0, 0},
	    {"ls1", ve, 0, 0},
	    {"ls2", ve, 0, 0},
	};
	char b[200];
	for (int i = 0; i < blocks; i++)
		for (size_t k = 0; k < TM_NLEAVES(blk); k++) {
			bool on = (blk[k].when & (int)opt) != 0;
			if (blk[k].when == O_BIAS ? !on : on)
				continue;
			snprintf(b, sizeof(b), VT "encoder.layers.%d.%s", i, blk[k].leaf);
			tm_add2(m, b, blk[k].a, blk[k].b);
		}
	tm_add(m, VT "embeddings.class_embedding", WT_DTYPE_INVALID, 3, 1, 1, ve);
	tm_add(m, VT "embeddings.position_embedding", WT_DTYPE_INVALID, 3, 1, 5, ve);
	add_4d(m, VT "embeddings.patch_embedding.weight", ve, 3, 14, 14);
	tm_add2(m, VT "embeddings.patch_embedding.bias", ve, 0);
	tm_add2(m, "mlp1.0.weight", vm, 0);
	tm_add2(m, "mlp1.0.bias", vm, 0);
	if (opt & O_IVLMLP) {
		tm_add2(m, "mlp1.1.weight", HID, vm);
		tm_add2(m, "mlp1.1.bias", HID, 0);
		tm_add2(m, "mlp1.3.weight", HID, HID);
		tm_add2(m, "mlp1.3.bias", HID, 0);
	} else {
		tm_add2(m, "mlp1.1.weight", I, vm);
		tm_add2(m, "mlp1.3.weight", HID, I);
	}
	return m;
}

static const char *const blk_whole[] = {"attn.proj.bias", "mlp.fc2.bias", "norm1.weight",
                                        "norm2.weight",   "ls1",          "ls2"};

/* Rank r of T's block b of a tower of nh heads by hand: qkv (and its bias when bias) the rank's
 * (nh + 7) / T heads of q, k and v ([q; k; v] rows, VA each) when nh + 7 divides T, else whole
 * with proj; q_norm / k_norm [VA] whole; proj [VE, VA] by columns; fc1 (and bias) by rows, fc2
 * by columns; the rest whole. */
static void block_is(const fx *f, uint32_t T, uint32_t r, int b, int64_t nh, bool bias)
{
	char n[200];
	const char *pre = b ? B1 : B0;
	int64_t ve = nh * VD, va = (nh + 7) * VD;
	bool split = (nh + 7) % T == 0;
	for (size_t k = 0; k < sizeof(blk_whole) / sizeof(blk_whole[0]); k++) {
		snprintf(n, sizeof(n), "%s%s", pre, blk_whole[k]);
		repl(f, r, n);
	}
	static const char *const qkn[] = {"attn.q_norm.weight", "attn.k_norm.weight"};
	for (int k = 0; k < 2; k++) {
		snprintf(n, sizeof(n), "%s%s", pre, qkn[k]);
		shp(f, r, n, 1, va, 0, 0);
		repl(f, r, n);
	}
	static const char *const qkv[] = {"attn.qkv.weight", "attn.qkv.bias"};
	for (int w = 0; w < (bias ? 2 : 1); w++) {
		snprintf(n, sizeof(n), "%s%s", pre, qkv[w]);
		if (!split) {
			shp(f, r, n, w ? 1 : 2, 3 * va, w ? 0 : ve, 0);
			repl(f, r, n);
			continue;
		}
		int64_t loc = va / T;
		shp(f, r, n, w ? 1 : 2, 3 * loc, w ? 0 : ve, 0);
		for (int part = 0; part < 3; part++)
			rows_at(f, r, n, part * loc, n, part * va + r * loc, loc);
	}
	snprintf(n, sizeof(n), "%sattn.proj.weight", pre);
	if (split)
		cols_of(f, r, T, n, n, ve, va);
	else {
		shp(f, r, n, 2, ve, va, 0);
		repl(f, r, n);
	}
	snprintf(n, sizeof(n), "%smlp.fc1.weight", pre);
	shp(f, r, n, 2, VI / T, ve, 0);
	rows_at(f, r, n, 0, n, r * (VI / T), VI / T);
	snprintf(n, sizeof(n), "%smlp.fc1.bias", pre);
	rows_at(f, r, n, 0, n, r * (VI / T), VI / T);
	snprintf(n, sizeof(n), "%smlp.fc2.weight", pre);
	cols_of(f, r, T, n, n, ve, VI);
}

/* The embeddings and mlp1 whole on every rank (mlp1.1 [I, VM], mlp1.3 [hid, I]). */
static void whole_is(const fx *f, uint32_t r, int64_t nh)
{
	static const char *const whole[] = {VT "embeddings.class_embedding",
	                                    VT "embeddings.position_embedding",
	                                    VT "embeddings.patch_embedding.weight",
	                                    VT "embeddings.patch_embedding.bias",
	                                    "mlp1.0.weight",
	                                    "mlp1.0.bias",
	                                    "mlp1.1.weight",
	                                    "mlp1.3.weight"};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++)
		repl(f, r, whole[k]);
	shp(f, r, "mlp1.1.weight", 2, I, 4 * nh * VD, 0);
	shp(f, r, "mlp1.3.weight", 2, HID, I, 0);
	assert_int_equal(info(f, r, VT "embeddings.patch_embedding.weight")->ndim, 4);
}

/* TP 1 / 2 / 4 / 8 by hand, 25 heads (32 with the dummy ones: split at each): the blocks, the
 * embeddings and mlp1 whole, the Qwen2 layer 1; nothing skipped, every rank's count. */
static void test_nvlm_slices(void **state)
{
	(void)state;
	for (uint32_t T = 1; T <= 8; T *= 2) {
		fx f;
		fx_open(&f, nvlm_model(25, 2, 0), cfg25, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "nvlm_d");
		for (uint32_t r = 0; r < T; r++) {
			block_is(&f, T, r, 0, 25, false);
			block_is(&f, T, r, 1, 25, false);
			whole_is(&f, r, 25);
			fx_attn_is(&f, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, HD, HID);
			fx_mlp_is(&f, r, T, L1 "mlp.", I, HID);
			fx_vocab_is(&f, r, T, LM "lm_head.weight", V, VP, HID);
			/* 2 blocks x 13, 4 + 4; the LM's 3 + 2 x 7 */
			assert_int_equal(shardmap_rank_n_tensors(f.p, r), 2 * 13 + 8 + 3 + 2 * 7);
		}
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* 5 heads (12 with the dummy ones): split at TP 2 / 4 (6 / 3 heads a rank), whole at TP 8
 * (InternSdpaAttention); qkv_bias true: the bias cut as qkv. */
static void test_nvlm_sdpa(void **state)
{
	(void)state;
	static const char cfg5b[] = CFG_AT("", QW_LM, VKEYS("40", "5", ",\"qkv_bias\":true"));
	for (uint32_t T = 2; T <= 8; T *= 2) {
		fx f;
		fx_open(&f, nvlm_model(5, 2, O_BIAS), cfg5b, T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++) {
			block_is(&f, T, r, 0, 5, true);
			block_is(&f, T, r, 1, 5, true);
			whole_is(&f, r, 5);
		}
		fx_close(&f);
	}
}

/* Every rank's language_model.* byte for byte the qwen2 family's ranks of the same weights:
 * TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4. */
static void test_nvlm_same_lm(void **state)
{
	(void)state;
	static const struct {
		uint32_t tp;
		wt_quant q;
	} lays[] = {{1, WT_QUANT_NONE}, {2, WT_QUANT_NONE},         {4, WT_QUANT_NONE},
	            {8, WT_QUANT_NONE}, {2, WT_QUANT_INT8_CHANNEL}, {4, WT_QUANT_FP8_CHANNEL}};
	for (size_t k = 0; k < sizeof(lays) / sizeof(lays[0]); k++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[k].tp;
		l.quant = lays[k].q;
		fx a, b;
		tm_model *t = tm_new(SEED, WT_BF16);
		add_lm(t, "");
		fx_open_l(&a, nvlm_model(25, 2, 0), cfg25, &l, true);
		fx_open_l(&b, t, cfg_text, &l, true);
		assert_string_equal(shardmap_family(b.p), "qwen2");
		for (uint32_t r = 0; r < l.tp_size; r++)
			fx_same_rank(&a, &b, r, LM);
		fx_close(&a);
		fx_close(&b);
	}
}

/* Quantized: the tower's qkv / proj / fc1 / fc2 and the LM's Linears; mlp1 (plain nn.Linear),
 * the embeddings, norms, scales and biases kept BF16 (int8-channel TP 2: rank 1's proj and fc2
 * codes by columns; fp8-channel TP 4); int8-channel TP 8 over 5 heads: qkv / proj whole and
 * BF16 (InternSdpaAttention), fc1 / fc2 int8. */
static void test_nvlm_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {"mlp1.1.weight",
	                                   "mlp1.3.weight",
	                                   "mlp1.0.weight",
	                                   VT "embeddings.patch_embedding.weight",
	                                   B1 "attn.q_norm.weight",
	                                   B1 "ls1",
	                                   B1 "mlp.fc1.bias",
	                                   LM "model.embed_tokens.weight",
	                                   L1 "input_layernorm.weight"};
	static const char *const q[] = {B0 "attn.qkv.weight", B1 "attn.proj.weight",
	                                B1 "mlp.fc1.weight", B1 "mlp.fc2.weight",
	                                L1 "mlp.down_proj.weight"};
	const size_t nk = sizeof(keep) / sizeof(keep[0]), nq = sizeof(q) / sizeof(q[0]);
	fx f;
	fx_open_quant(&f, nvlm_model(25, 2, 0), cfg25, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, keep, nk,
	              q, nq);
	fx_cols_int8_is(&f, 1, 2, B1 "attn.proj.weight", 200, 256);
	fx_cols_int8_is(&f, 1, 2, B1 "mlp.fc2.weight", 200, VI);
	fx_close(&f);
	fx_open_quant(&f, nvlm_model(25, 2, 0), cfg25, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, keep, nk,
	              q, nq);
	fx_close(&f);
	static const char *const keep8[] = {B0 "attn.qkv.weight", B1 "attn.proj.weight",
	                                    "mlp1.1.weight"};
	static const char *const q8[] = {B1 "mlp.fc1.weight", B1 "mlp.fc2.weight",
	                                 L1 "self_attn.o_proj.weight"};
	fx_open_quant(&f, nvlm_model(5, 2, 0), cfg5, 8, WT_QUANT_INT8_CHANNEL, WT_BF16, keep8, 3,
	              q8, 3);
	for (uint32_t r = 0; r < 8; r++) {
		repl(&f, r, B0 "attn.qkv.weight");
		repl(&f, r, B1 "attn.proj.weight");
	}
	fx_close(&f);
}

/* Every checkpoint tensor covered exactly once: TP 1 / 2 / 4 / 8, 25 heads and 5 (whole at TP
 * 8), qkv_bias on, qk_normalization off. */
static void test_nvlm_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	static const char cfg_sw[] =
	    CFG_AT("", QW_LM, VKEYS("40", "5", ",\"qkv_bias\":true,\"qk_normalization\":false"));
	coverage(nvlm_model(25, 2, 0), cfg25, 2, lays, 4);
	coverage(nvlm_model(5, 2, 0), cfg5, 2, lays, 4);
	coverage(nvlm_model(5, 2, O_BIAS | O_NOQKN), cfg_sw, 2, lays, 4);
}

/* select_layer -2 of 2 blocks builds block 0 alone (num_hidden_layers_override): a checkpoint
 * without block 1 plans, one with it is refused naming select_layer and the block. NVLM_D_Model
 * (vLLM's class name) plans byte for byte as NVLM_D. */
static void test_nvlm_select_layer(void **state)
{
	(void)state;
	static const char cfg_m2[] = CFG("\"select_layer\":-2,");
	fx f;
	fx_open(&f, nvlm_model(25, 1, 0), cfg_m2, 4, 1, 0, true);
	block_is(&f, 4, 3, 0, 25, false);
	assert_int_equal(tm_ix(f.p, 0, B1 "mlp.fc1.weight"), -1);
	assert_int_equal(shardmap_n_skipped(f.p), 0);
	fx_close(&f);
	fx_refused(nvlm_model(25, 2, 0), cfg_m2, WT_EUNSUPPORTED, "select_layer",
	           "encoder.layers.1.");
	static const char cfg_cls[] =
	    CFG_ALL("NVLM_D_Model", "NVLM_D", "", QW_LM, VKEYS("200", "25", NV_SW));
	fx a, b;
	fx_open(&a, nvlm_model(25, 2, 0), cfg_cls, 4, 1, 0, true);
	fx_open(&b, nvlm_model(25, 2, 0), cfg25, 4, 1, 0, true);
	assert_string_equal(shardmap_family(a.p), "nvlm_d");
	for (uint32_t r = 0; r < 4; r++)
		fx_same_rank(&a, &b, r, NULL);
	fx_close(&a);
	fx_close(&b);
}

/* The loader: model_type NVLM_D read as InternVLChatConfig (llm_config as a Qwen2 text_config,
 * its class's defaults; InternVisionConfig's defaults; tied by llm_config alone). */
static void test_nvlm_config(void **state)
{
	(void)state;
	ckpt_config c;
	tm_parse("{\"architectures\":[\"NVLM_D\"],\"model_type\":\"NVLM_D\","
	         "\"tie_word_embeddings\":true,\"vision_config\":{\"num_hidden_layers\":45},"
	         "\"llm_config\":{" QW_LM "}}",
	         &c);
	assert_true(c.has_vision);
	assert_string_equal(c.lm_model_type, "qwen2");
	assert_int_equal(c.v_hidden_size, 3200);
	assert_int_equal(c.v_num_attn_heads, 25);
	assert_int_equal(c.v_num_layers, 45);
	assert_int_equal(c.v_spatial_merge_size, 2);
	assert_true(c.v_qk_norm && !c.v_attn_bias && !c.v_norm_ln);
	assert_int_equal(c.hidden_size, 128);
	assert_false(c.tie_given && c.tie_word_embeddings);
	ckpt_config_clear(&c);
}

#define IL_LM                                                                                      \
	"\"architectures\":[\"InternLM2ForCausalLM\"],\"hidden_size\":128,"                        \
	"\"intermediate_size\":192,\"num_attention_heads\":8,\"num_key_value_heads\":2,"           \
	"\"vocab_size\":1000,\"num_hidden_layers\":2,\"bias\":false"
#define LL_LM                                                                                      \
	"\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":128,\"intermediate_size\":192,"  \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"vocab_size\":1000,"                 \
	"\"num_hidden_layers\":2"

/* The refusals, each naming the tensor or key and the fix. */
static void test_nvlm_errors(void **state)
{
	(void)state;
	/* an InternVL chat tower (no dummy heads) under NVLM_D: qkv 3 x 25 x 8 rows, not 3 x 32 x
	 * 8, named with the dummy heads before any shape check; proj's columns alike */
	fx_refused(nvlm_model(25, 2, O_NODUM), cfg25, WT_ESHAPE, "attn.proj.weight",
	           "7 zero dummy heads");
	fx_refused(nvlm_model(25, 2, O_QKV0), cfg25, WT_ESHAPE, "attn.qkv.weight",
	           "q, k and v each 256 wide");
	fx_refused(nvlm_model(25, 2, O_PROJ0), cfg25, WT_ESHAPE, "attn.proj.weight",
	           "its input 256 wide");
	/* a qkv of neither width: the shape check */
	fx_refused(nvlm_model(25, 2, O_QKV30), cfg25, WT_ESHAPE, "attn.qkv.weight", "768");
	/* InternVL's mlp1 ([hid, VM] with biases) */
	fx_refused(nvlm_model(25, 2, O_IVLMLP), cfg25, WT_EUNSUPPORTED, "mlp1.1.bias",
	           "bias=False");
	/* a language model other than Qwen2's */
	fx_refused(nvlm_model(25, 2, 0), CFG_AT("", LL_LM, VKEYS("200", "25", NV_SW)),
	           WT_EUNSUPPORTED, "llm_config.architectures", "Qwen2ForCausalLM");
	fx_refused(nvlm_model(25, 2, 0), CFG_AT("", IL_LM, VKEYS("200", "25", NV_SW)),
	           WT_EUNSUPPORTED, "model_type internlm2", "Qwen2ForCausalLM");
	/* NVLM_D under another model_type */
	fx_refused(nvlm_model(25, 2, 0),
	           "{\"architectures\":[\"NVLM_D\"],\"model_type\":\"qwen2\",\"hidden_size\":128,"
	           "\"intermediate_size\":192,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ECORRUPT, "NVLM_D", "model_type NVLM_D");
	/* qk_normalization: a missing q_norm, an unbuilt one */
	fx_refused(nvlm_model(25, 2, O_NOQKN), cfg25, WT_ENOTFOUND, "q_norm", "qk_normalization");
	fx_refused(nvlm_model(25, 2, 0),
	           CFG_AT("", QW_LM, VKEYS("200", "25", ",\"qk_normalization\":false")),
	           WT_EUNSUPPORTED, "q_norm", "qk_normalization");
	/* heads not dividing the width */
	fx_refused(nvlm_model(25, 2, 0), CFG_AT("", QW_LM, VKEYS("200", "3", NV_SW)), WT_ECORRUPT,
	           "num_attention_heads", "200");
	/* the LM's heads do not divide TP 16 */
	fx_refused_tp(nvlm_model(25, 2, 0), cfg25, 16, WT_ELAYOUT, "tp_size 16", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nvlm_slices),   cmocka_unit_test(test_nvlm_sdpa),
	    cmocka_unit_test(test_nvlm_same_lm),  cmocka_unit_test(test_nvlm_quant),
	    cmocka_unit_test(test_nvlm_coverage), cmocka_unit_test(test_nvlm_select_layer),
	    cmocka_unit_test(test_nvlm_config),   cmocka_unit_test(test_nvlm_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
