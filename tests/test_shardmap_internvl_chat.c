/*
 * test_shardmap_internvl_chat.c — InternVL's chat format (InternVLChatModel, model_type
 * internvl_chat; docs/format.md section 2.7), cut as vLLM's internvl.py / intern_vit.py load it:
 * the InternViT block's rank slices by hand at TP 2 and 4 (attn.qkv [q_r; k_r; v_r] with its
 * bias, attn.proj by columns, mlp.fc1 by rows, fc2 by columns, the rest whole), the tower's
 * attention whole and unquantized where its heads do not divide tp_size (InternSdpaAttention),
 * mlp1 whole and never quantized; the language model under language_model. byte for byte the
 * internlm2 / qwen2 families' ranks of the same weights (TP 1 / 2 / 4 / 8, int8-channel TP 2,
 * fp8-channel TP 4); coverage; select_layer's block count; the vision_config switches; the
 * config classes' defaults; the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x1c4a7ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* the LM: hid 128, H 8, KV 2, d 16, I 192, V 1000 (padded 1024), 2 layers; the tower: width
 * 64, 4 heads of 16, MLP 128, image 28 / patch 14 (2 x 2 patches + the class token), 2 blocks;
 * mlp1 64 x 2^2 = 256 wide */
#define HID 128
#define HD  16
#define I   192
#define V   1000
#define VP  1024
#define VE  64
#define VI  128
#define VM  256
#define LM  "language_model."
#define VT  "vision_model."
#define B0  VT "encoder.layers.0."
#define B1  VT "encoder.layers.1."
#define IL1 LM "model.layers.1."

#define IL_LM                                                                                      \
	"\"architectures\":[\"InternLM2ForCausalLM\"],\"model_type\":\"internlm2\","               \
	"\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"                 \
	"\"num_key_value_heads\":2,\"vocab_size\":1000,\"num_hidden_layers\":2,\"bias\":false"
#define QW_LM                                                                                      \
	"\"architectures\":[\"Qwen2ForCausalLM\"],\"model_type\":\"qwen2\",\"hidden_size\":128,"   \
	"\"intermediate_size\":192,\"num_attention_heads\":8,\"num_key_value_heads\":2,"           \
	"\"vocab_size\":1000,\"num_hidden_layers\":2"
/* InternVL3.5's chat-format release: a Qwen3 LM (no q / k / v biases, per-head q_norm / k_norm) */
#define QW3_LM                                                                                     \
	"\"architectures\":[\"Qwen3ForCausalLM\"],\"model_type\":\"qwen3\",\"hidden_size\":128,"   \
	"\"intermediate_size\":192,\"num_attention_heads\":8,\"num_key_value_heads\":2,"           \
	"\"head_dim\":16,\"vocab_size\":1000,\"num_hidden_layers\":2"
#define VKEYS(heads, extra)                                                                        \
	"\"vision_config\":{\"architectures\":[\"InternVisionModel\"],\"model_type\":"             \
	"\"intern_vit_6b\",\"hidden_size\":64,\"intermediate_size\":128,\"num_hidden_layers\":2,"  \
	"\"num_attention_heads\":" heads ",\"image_size\":28,\"patch_size\":14" extra "}"
/* every switch on (qkv_bias, qk_normalization, LayerNorm): each switched tensor present */
#define SW ",\"qkv_bias\":true,\"qk_normalization\":true,\"norm_type\":\"layer_norm\""
#define CFG_RAT(ratio, top, lm, vis)                                                               \
	"{\"architectures\":[\"InternVLChatModel\"],\"model_type\":\"internvl_chat\","             \
	"\"downsample_ratio\":" ratio ",\"template\":\"internlm2-chat\"," top                      \
	"\"llm_config\":{" lm "}," vis "}"
#define CFG_AT(top, lm, vis) CFG_RAT("0.5", top, lm, vis)
#define CFG_RATIO(ratio, lm) CFG_RAT(ratio, "", lm, VKEYS("4", SW))
#define CFG(top, lm)         CFG_AT(top, lm, VKEYS("4", SW))

static const char cfg_il[] = CFG("", IL_LM);
static const char cfg_qw[] = CFG("", QW_LM);
#define PHI_LM                                                                                     \
	"\"architectures\":[\"Phi3ForCausalLM\"],\"hidden_size\":128,\"intermediate_size\":192,"   \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"vocab_size\":1000,"                 \
	"\"num_hidden_layers\":2,\"tie_word_embeddings\":false"
static const char cfg_il_text[] = "{" IL_LM "}";
static const char cfg_qw_text[] = "{" QW_LM "}";
static const char cfg_phi[] = CFG("", PHI_LM);
static const char cfg_phi_text[] = "{\"model_type\":\"phi3\"," PHI_LM "}";
static const char cfg_qw3[] = CFG("", QW3_LM);
static const char cfg_qw3_text[] = "{" QW3_LM "}";

/* the language models: Qwen2's, InternLM2's, Phi-3's, Qwen3's */
enum { LM_QW = 0, LM_IL = 1, LM_PHI = 2, LM_QW3 = 3 };

enum { O_NOBIAS = 1, O_NOQKN = 2, O_RMS = 4 };

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

/* The language model under prefix p: InternLM2's, Qwen2's, Phi-3's or Qwen3's (kind), 2 layers,
 * its head. */
static void add_lm(tm_model *m, const char *p, int kind)
{
	bool il = kind == LM_IL;
	char b[200], fmt[100];
	snprintf(b, sizeof(b), "%smodel.%s", p,
	         il ? "tok_embeddings.weight" : "embed_tokens.weight");
	tm_add2(m, b, V, HID);
	snprintf(b, sizeof(b), "%smodel.norm.weight", p);
	tm_add2(m, b, HID, 0);
	snprintf(b, sizeof(b), "%s%s", p, il ? "output.weight" : "lm_head.weight");
	tm_add2(m, b, V, HID);
	snprintf(fmt, sizeof(fmt), "%smodel.layers.%%d.", p);
	static const tm_leaf il2[] = {
	    {"attention_norm.weight", HID, 0},       {"ffn_norm.weight", HID, 0},
	    {"attention.wqkv.weight", 12 * HD, HID}, {"attention.wo.weight", HID, HID},
	    {"feed_forward.w1.weight", I, HID},      {"feed_forward.w3.weight", I, HID},
	    {"feed_forward.w2.weight", HID, I}};
	static const tm_leaf qw[] = {
	    {"input_layernorm.weight", HID, 0},    {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", HID, HID}, {"self_attn.q_proj.bias", HID, 0},
	    {"self_attn.k_proj.weight", 32, HID},  {"self_attn.k_proj.bias", 32, 0},
	    {"self_attn.v_proj.weight", 32, HID},  {"self_attn.v_proj.bias", 32, 0},
	    {"self_attn.o_proj.weight", HID, HID}, {"mlp.gate_proj.weight", I, HID},
	    {"mlp.up_proj.weight", I, HID},        {"mlp.down_proj.weight", HID, I}};
	static const tm_leaf phi[] = {{"input_layernorm.weight", HID, 0},
	                              {"post_attention_layernorm.weight", HID, 0},
	                              {"self_attn.qkv_proj.weight", 12 * HD, HID},
	                              {"self_attn.o_proj.weight", HID, HID},
	                              {"mlp.gate_up_proj.weight", 2 * I, HID},
	                              {"mlp.down_proj.weight", HID, I}};
	static const tm_leaf qw3[] = {
	    {"input_layernorm.weight", HID, 0},    {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", HID, HID}, {"self_attn.k_proj.weight", 32, HID},
	    {"self_attn.v_proj.weight", 32, HID},  {"self_attn.q_norm.weight", HD, 0},
	    {"self_attn.k_norm.weight", HD, 0},    {"self_attn.o_proj.weight", HID, HID},
	    {"mlp.gate_proj.weight", I, HID},      {"mlp.up_proj.weight", I, HID},
	    {"mlp.down_proj.weight", HID, I}};
	if (il)
		tm_layers(m, fmt, 2, il2, TM_NLEAVES(il2), 0);
	else if (kind == LM_QW3)
		tm_layers(m, fmt, 2, qw3, TM_NLEAVES(qw3), 0);
	else if (kind == LM_PHI)
		tm_layers(m, fmt, 2, phi, TM_NLEAVES(phi), 0);
	else
		tm_layers(m, fmt, 2, qw, TM_NLEAVES(qw), 0);
}

/* The InternViT block's leaves (opt drops the switched-off ones). */
static const tm_leaf blk[] = {
    {"attn.qkv.weight", 3 * VE, VE, 0},
    {"attn.qkv.bias", 3 * VE, 0, O_NOBIAS},
    {"attn.q_norm.weight", VE, 0, O_NOQKN},
    {"attn.k_norm.weight", VE, 0, O_NOQKN},
    {"attn.proj.weight", VE, VE, 0},
    {"attn.proj.bias", VE, 0, 0},
    {"mlp.fc1.weight", VI, VE, 0},
    {"mlp.fc1.bias", VI, 0, 0},
    {"mlp.fc2.weight", VE, VI, 0},
    {"mlp.fc2.bias", VE, 0, 0},
    {"norm1.weight", VE, 0, 0},
    {"norm1.bias", VE, 0, O_RMS},
    {"norm2.weight", VE, 0, 0},
    {"norm2.bias", VE, 0, O_RMS},
    {"ls1", VE, 0, 0},
    {"ls2", VE, 0, 0},
};

/* The chat model: the LM (InternLM2's when il), `blocks` tower blocks without the leaves opt
 * names, the embeddings and mlp1. */
static tm_model *ivc_model(int kind, int blocks, unsigned opt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, LM, kind);
	char b[200];
	for (int i = 0; i < blocks; i++)
		for (size_t k = 0; k < TM_NLEAVES(blk); k++) {
			if (blk[k].when & (int)opt)
				continue;
			snprintf(b, sizeof(b), VT "encoder.layers.%d.%s", i, blk[k].leaf);
			tm_add2(m, b, blk[k].a, blk[k].b);
		}
	tm_add(m, VT "embeddings.class_embedding", WT_DTYPE_INVALID, 3, 1, 1, VE);
	tm_add(m, VT "embeddings.position_embedding", WT_DTYPE_INVALID, 3, 1, 5, VE);
	add_4d(m, VT "embeddings.patch_embedding.weight", VE, 3, 14, 14);
	tm_add2(m, VT "embeddings.patch_embedding.bias", VE, 0);
	tm_add2(m, "mlp1.0.weight", VM, 0);
	tm_add2(m, "mlp1.0.bias", VM, 0);
	tm_add2(m, "mlp1.1.weight", HID, VM);
	tm_add2(m, "mlp1.1.bias", HID, 0);
	tm_add2(m, "mlp1.3.weight", HID, HID);
	tm_add2(m, "mlp1.3.bias", HID, 0);
	return m;
}

static tm_model *text_model(int kind)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, "", kind);
	return m;
}

static const char *const whole[] = {VT "embeddings.class_embedding",
                                    VT "embeddings.position_embedding",
                                    VT "embeddings.patch_embedding.weight",
                                    VT "embeddings.patch_embedding.bias",
                                    "mlp1.0.weight",
                                    "mlp1.0.bias",
                                    "mlp1.1.weight",
                                    "mlp1.1.bias",
                                    "mlp1.3.weight",
                                    "mlp1.3.bias"};
static const char *const blk_whole[] = {
    "attn.q_norm.weight", "attn.k_norm.weight", "attn.proj.bias", "mlp.fc2.bias", "norm1.weight",
    "norm1.bias",         "norm2.weight",       "norm2.bias",     "ls1",          "ls2"};

/* Rank r of T's InternViT block b by hand: qkv (weight and bias) the rank's heads of q, k and v
 * ([q; k; v] rows, VE each) when the heads (nh) divide T, else whole with proj; proj by
 * columns; fc1 (and bias) by rows, fc2 by columns; the rest whole. */
static void block_is(const fx *f, uint32_t T, uint32_t r, int b, int64_t nh)
{
	char n[200];
	const char *pre = b ? B1 : B0;
	for (size_t k = 0; k < sizeof(blk_whole) / sizeof(blk_whole[0]); k++) {
		snprintf(n, sizeof(n), "%s%s", pre, blk_whole[k]);
		repl(f, r, n);
	}
	static const char *const qkv[] = {"attn.qkv.weight", "attn.qkv.bias"};
	for (int w = 0; w < 2; w++) {
		snprintf(n, sizeof(n), "%s%s", pre, qkv[w]);
		if (nh % T != 0) {
			repl(f, r, n);
			continue;
		}
		int64_t loc = VE / T;
		shp(f, r, n, w ? 1 : 2, 3 * loc, w ? 0 : VE, 0);
		for (int part = 0; part < 3; part++)
			rows_at(f, r, n, part * loc, n, part * VE + r * loc, loc);
	}
	snprintf(n, sizeof(n), "%sattn.proj.weight", pre);
	if (nh % T != 0)
		repl(f, r, n);
	else
		cols_of(f, r, T, n, n, VE, VE);
	snprintf(n, sizeof(n), "%smlp.fc1.weight", pre);
	shp(f, r, n, 2, VI / T, VE, 0);
	rows_at(f, r, n, 0, n, r * (VI / T), VI / T);
	snprintf(n, sizeof(n), "%smlp.fc1.bias", pre);
	rows_at(f, r, n, 0, n, r * (VI / T), VI / T);
	snprintf(n, sizeof(n), "%smlp.fc2.weight", pre);
	cols_of(f, r, T, n, n, VE, VI);
}

/* Rank r of T's InternLM2 layer 1 under language_model. by hand. */
static void il2_layer_is(const fx *f, uint32_t T, uint32_t r)
{
	shp(f, r, IL1 "attention.wqkv.weight", 2, (8 / T + 2 * (T <= 2 ? 2 / T : 1)) * HD, HID, 0);
	fx_qkv_grouped_is(f, r, T, 8, 2, HD, IL1 "attention.wqkv.weight");
	cols_of(f, r, T, IL1 "attention.wo.weight", IL1 "attention.wo.weight", HID, HID);
	fx_gate_up_is(f, r, T, IL1 "feed_forward.gate_up_proj.weight", IL1 "feed_forward.w1.weight",
	              IL1 "feed_forward.w3.weight", I);
	cols_of(f, r, T, IL1 "feed_forward.w2.weight", IL1 "feed_forward.w2.weight", HID, I);
	repl(f, r, IL1 "attention_norm.weight");
	fx_vocab_is(f, r, T, LM "model.tok_embeddings.weight", V, VP, HID);
	fx_vocab_is(f, r, T, LM "output.weight", V, VP, HID);
}

/* TP 2 and 4 by hand (InternLM2's LM and Qwen2's): the tower's blocks, the embeddings and mlp1
 * whole, the LM's layer 1; nothing skipped, every rank's count. */
static void test_ivc_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2)
		for (int il = 1; il >= 0; il--) {
			fx f;
			fx_open(&f, ivc_model(il, 2, 0), il ? cfg_il : cfg_qw, T, 1, 0, true);
			assert_string_equal(shardmap_family(f.p), "internvl_chat");
			for (uint32_t r = 0; r < T; r++) {
				block_is(&f, T, r, 0, 4);
				block_is(&f, T, r, 1, 4);
				for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++)
					repl(&f, r, whole[k]);
				assert_int_equal(
				    info(&f, r, VT "embeddings.patch_embedding.weight")->ndim, 4);
				if (il)
					il2_layer_is(&f, T, r);
				else {
					fx_attn_is(&f, r, T, LM "model.layers.1.self_attn.",
					           "o_proj.weight", 8, 2, HD, HID);
					fx_mlp_is(&f, r, T, LM "model.layers.1.mlp.", I, HID);
					fx_vocab_is(&f, r, T, LM "lm_head.weight", V, VP, HID);
				}
				/* 2 blocks x 16, 4 + 6; the LM's 3 + 2 x (6 or 7) */
				assert_int_equal(shardmap_rank_n_tensors(f.p, r),
				                 2 * 16 + 10 + 3 + 2 * (il ? 6 : 7));
			}
			assert_false(shardmap_tied_lm_head(f.p));
			assert_int_equal(shardmap_n_skipped(f.p), 0);
			fx_close(&f);
		}
}

/* InternVL2-4B's Phi-3 language model at TP 2 / 4 by hand: qkv_proj [q_r; k_r; v_r] of the fused
 * rows (q at 0, k at H d, v at (H + KV) d; kv head r / (T / KV) when KV < T), gate_up_proj
 * [gate_r; up_r] (up at row I), o_proj / down_proj by columns; the tower as InternLM2's. */
static void test_ivc_phi3(void **state)
{
	(void)state;
	const char *q = LM "model.layers.1.self_attn.qkv_proj.weight";
	const char *gu = LM "model.layers.1.mlp.gate_up_proj.weight";
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, ivc_model(LM_PHI, 2, 0), cfg_phi, T, 1, 0, true);
		int64_t hl = 8 / T, kvl = T <= 2 ? 2 / T : 1;
		for (uint32_t r = 0; r < T; r++) {
			int64_t g0 = T <= 2 ? r * kvl : r / (T / 2);
			block_is(&f, T, r, 1, 4);
			shp(&f, r, q, 2, (hl + 2 * kvl) * HD, HID, 0);
			rows_at(&f, r, q, 0, q, r * hl * HD, hl * HD);
			rows_at(&f, r, q, hl * HD, q, 8 * HD + g0 * HD, kvl * HD);
			rows_at(&f, r, q, (hl + kvl) * HD, q, 10 * HD + g0 * HD, kvl * HD);
			cols_of(&f, r, T, LM "model.layers.1.self_attn.o_proj.weight",
			        LM "model.layers.1.self_attn.o_proj.weight", HID, HID);
			rows_at(&f, r, gu, 0, gu, r * (I / T), I / T);
			rows_at(&f, r, gu, I / T, gu, I + r * (I / T), I / T);
			cols_of(&f, r, T, LM "model.layers.1.mlp.down_proj.weight",
			        LM "model.layers.1.mlp.down_proj.weight", HID, I);
			fx_vocab_is(&f, r, T, LM "lm_head.weight", V, VP, HID);
		}
		fx_close(&f);
	}
}

/* Every rank's language_model.* outputs byte for byte the text family's ranks of the same
 * weights (no more, no fewer), in layout l. */
static void same_lm_at(int kind, const wt_layout *l)
{
	static const char *const cfg[] = {cfg_qw, cfg_il, cfg_phi, cfg_qw3};
	static const char *const text[] = {cfg_qw_text, cfg_il_text, cfg_phi_text, cfg_qw3_text};
	static const char *const fam[] = {"qwen2", "internlm2", "phi3", "qwen3"};
	fx a, b;
	fx_open_l(&a, ivc_model(kind, 2, 0), cfg[kind], l, true);
	fx_open_l(&b, text_model(kind), text[kind], l, true);
	assert_string_equal(shardmap_family(b.p), fam[kind]);
	for (uint32_t r = 0; r < l->tp_size; r++)
		fx_same_rank(&a, &b, r, LM);
	fx_close(&a);
	fx_close(&b);
}

/* TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4; InternLM2, Qwen2, Phi-3 and Qwen3. */
static void test_ivc_same_lm(void **state)
{
	(void)state;
	static const struct {
		uint32_t tp;
		wt_quant q;
	} lays[] = {{1, WT_QUANT_NONE}, {2, WT_QUANT_NONE},         {4, WT_QUANT_NONE},
	            {8, WT_QUANT_NONE}, {2, WT_QUANT_INT8_CHANNEL}, {4, WT_QUANT_FP8_CHANNEL}};
	for (size_t k = 0; k < sizeof(lays) / sizeof(lays[0]); k++)
		for (int kind = LM_QW; kind <= LM_QW3; kind++) {
			wt_layout l;
			wt_layout_init(&l);
			l.tp_size = lays[k].tp;
			l.quant = lays[k].q;
			same_lm_at(kind, &l);
		}
}

/* The tower's Linears and the LM's quantized (qkv / proj only where the heads divide tp),
 * mlp1, the embeddings, norms, scales and biases kept BF16: int8-channel TP 2 (rank 1's proj,
 * fc2 and wo codes by columns), fp8-channel TP 4, int8-channel TP 8 (4 heads: InternSdpaAttention,
 * qkv / proj whole and BF16). */
static void test_ivc_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {"mlp1.1.weight",
	                                   "mlp1.3.weight",
	                                   "mlp1.0.weight",
	                                   VT "embeddings.patch_embedding.weight",
	                                   B1 "attn.qkv.bias",
	                                   B1 "attn.q_norm.weight",
	                                   B1 "ls1",
	                                   B1 "mlp.fc1.bias",
	                                   LM "model.tok_embeddings.weight",
	                                   IL1 "attention_norm.weight"};
	static const char *const q[] = {B0 "attn.qkv.weight",        B1 "attn.proj.weight",
	                                B1 "mlp.fc1.weight",         B1 "mlp.fc2.weight",
	                                IL1 "attention.wqkv.weight", IL1 "attention.wo.weight",
	                                IL1 "feed_forward.w2.weight"};
	fx f;
	fx_open_quant(&f, ivc_model(true, 2, 0), cfg_il, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, keep,
	              sizeof(keep) / sizeof(keep[0]), q, sizeof(q) / sizeof(q[0]));
	fx_cols_int8_is(&f, 1, 2, B1 "attn.proj.weight", VE, VE);
	fx_cols_int8_is(&f, 1, 2, B1 "mlp.fc2.weight", VE, VI);
	fx_cols_int8_is(&f, 1, 2, IL1 "attention.wo.weight", HID, HID);
	fx_close(&f);
	fx_open_quant(&f, ivc_model(true, 2, 0), cfg_il, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, keep,
	              sizeof(keep) / sizeof(keep[0]), q, sizeof(q) / sizeof(q[0]));
	fx_close(&f);
	static const char *const keep8[] = {B0 "attn.qkv.weight", B1 "attn.proj.weight",
	                                    "mlp1.1.weight"};
	static const char *const q8[] = {B1 "mlp.fc1.weight", B1 "mlp.fc2.weight",
	                                 IL1 "attention.wo.weight"};
	fx_open_quant(&f, ivc_model(true, 2, 0), cfg_il, 8, WT_QUANT_INT8_CHANNEL, WT_BF16, keep8,
	              3, q8, 3);
	for (uint32_t r = 0; r < 8; r++) {
		repl(&f, r, B0 "attn.qkv.weight");
		repl(&f, r, B1 "attn.proj.weight");
	}
	fx_close(&f);
}

/* InternViT-6B's case: heads that do not divide tp_size leave qkv (and bias) and proj whole on
 * every rank (4 heads at TP 8, 2 heads at TP 4), fc1 / fc2 still split; TP 2 over 2 heads
 * splits them. */
static void test_ivc_sdpa(void **state)
{
	(void)state;
	static const char cfg2[] = CFG_AT("", IL_LM, VKEYS("2", SW));
	static const struct {
		const char *cfg;
		uint32_t tp;
		int64_t nh;
	} cs[] = {{cfg_il, 8, 4}, {cfg2, 4, 2}, {cfg2, 2, 2}};
	for (size_t k = 0; k < sizeof(cs) / sizeof(cs[0]); k++) {
		fx f;
		fx_open(&f, ivc_model(true, 2, 0), cs[k].cfg, cs[k].tp, 1, 0, true);
		for (uint32_t r = 0; r < cs[k].tp; r++) {
			block_is(&f, cs[k].tp, r, 0, cs[k].nh);
			block_is(&f, cs[k].tp, r, 1, cs[k].nh);
		}
		fx_close(&f);
	}
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 / 8, both LMs and the switches
 * off (qkv_bias false, qk_normalization false, rms_norm). */
static void test_ivc_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	static const char cfg_off[] =
	    CFG_AT("", QW_LM, VKEYS("4", ",\"qkv_bias\":false,\"qk_normalization\":false"));
	coverage(ivc_model(true, 2, 0), cfg_il, 2, lays, 2); /* wqkv: KV < T in test_ivc_slices */
	coverage(ivc_model(false, 2, 0), cfg_qw, 2, lays, 4);
	coverage(ivc_model(false, 2, O_NOBIAS | O_NOQKN | O_RMS), cfg_off, 2, lays, 4);
}

/* select_layer: -2 of 2 blocks (and 0) builds block 0 alone, a checkpoint without block 1
 * plans; with block 1 it is refused naming select_layer and the block; outside the tower the
 * loader refuses it. */
static void test_ivc_select_layer(void **state)
{
	(void)state;
	static const char cfg_m2[] = CFG("\"select_layer\":-2,", IL_LM);
	static const char cfg_0[] = CFG("\"select_layer\":0,", IL_LM);
	const char *cfgs[] = {cfg_m2, cfg_0};
	for (int k = 0; k < 2; k++) {
		fx f;
		fx_open(&f, ivc_model(true, 1, 0), cfgs[k], 2, 1, 0, true);
		block_is(&f, 2, 1, 0, 4);
		assert_int_equal(tm_ix(f.p, 0, B1 "mlp.fc1.weight"), -1);
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
		fx_refused(ivc_model(true, 2, 0), cfgs[k], WT_EUNSUPPORTED, "select_layer",
		           "encoder.layers.1.");
	}
	fx_refused(ivc_model(true, 2, 0), CFG("\"select_layer\":2,", IL_LM), WT_ECORRUPT,
	           "select_layer 2", "num_hidden_layers");
	fx_refused(ivc_model(true, 2, 0), CFG("\"select_layer\":-3,", IL_LM), WT_ECORRUPT,
	           "select_layer -3", "[-2, 1]");
}

/* The vision_config switches: a tensor they leave unbuilt is refused naming the key, a missing
 * one they ask for too. */
static void test_ivc_switches(void **state)
{
	(void)state;
	static const char off_b[] = CFG_AT("", IL_LM, VKEYS("4", ",\"norm_type\":\"layer_norm\""));
	static const char rms[] = CFG_AT("", IL_LM, VKEYS("4", ",\"qkv_bias\":true"));
	static const char noqk[] =
	    CFG_AT("", IL_LM,
	           VKEYS("4", ",\"qkv_bias\":true,\"qk_normalization\":false,\"norm_type\":"
	                      "\"layer_norm\""));
	fx_refused(ivc_model(true, 2, 0), off_b, WT_EUNSUPPORTED, "attn.qkv.bias", "qkv_bias");
	fx_refused(ivc_model(true, 2, 0), rms, WT_EUNSUPPORTED, "norm1.bias", "norm_type");
	fx_refused(ivc_model(true, 2, 0), noqk, WT_EUNSUPPORTED, "q_norm", "qk_normalization");
	fx_refused(ivc_model(true, 2, O_NOBIAS), cfg_il, WT_ENOTFOUND, "attn.qkv.bias", "qkv_bias");
	fx_refused(ivc_model(true, 2, O_RMS), cfg_il, WT_ENOTFOUND, "norm1.bias", "norm_type");
	fx_refused(ivc_model(true, 2, O_NOQKN), cfg_il, WT_ENOTFOUND, "q_norm", "qk_normalization");
}

/* InternVisionConfig's defaults (an empty vision_config), InternVLChatConfig's select_layer and
 * downsample_ratio, the LM class's defaults (InternLM2Config's vocab_size), the tie from
 * llm_config alone. */
static void test_ivc_defaults(void **state)
{
	(void)state;
	ckpt_config c;
	tm_parse(
	    "{\"architectures\":[\"InternVLChatModel\"],\"model_type\":\"internvl_chat\","
	    "\"tie_word_embeddings\":true,\"vision_config\":{},\"llm_config\":{\"architectures\":"
	    "[\"InternLM2ForCausalLM\"],\"bias\":false}}",
	    &c);
	assert_int_equal(c.v_hidden_size, 3200);
	assert_int_equal(c.v_intermediate_size, 12800);
	assert_int_equal(c.v_num_layers, 48);
	assert_int_equal(c.v_num_attn_heads, 25);
	assert_int_equal(c.v_image_size, 224);
	assert_int_equal(c.v_patch_size, 14);
	assert_true(c.v_qk_norm && !c.v_attn_bias && !c.v_norm_ln);
	assert_int_equal(c.v_feature_layer, -1);
	assert_int_equal(c.v_spatial_merge_size, 2);
	assert_string_equal(c.lm_model_type, "internlm2");
	assert_int_equal(c.vocab_size, 103168);
	assert_int_equal(c.hidden_size, 4096);
	assert_false(c.tie_given && c.tie_word_embeddings);
	ckpt_config_clear(&c);
	tm_parse(CFG("\"tie_word_embeddings\":false,", QW_LM ",\"tie_word_embeddings\":true"), &c);
	assert_true(c.tie_given && c.tie_word_embeddings);
	assert_string_equal(c.lm_model_type, "qwen2");
	ckpt_config_clear(&c);
	/* tied by llm_config: the head is skipped */
	fx f;
	fx_open(&f, ivc_model(false, 2, 0), CFG("", QW_LM ",\"tie_word_embeddings\":true"), 2, 1, 0,
	        false);
	assert_true(shardmap_tied_lm_head(f.p) && fx_skipped(&f, LM "lm_head.weight"));
	fx_close(&f);
}

/* The refusals, each naming its key. */
static void test_ivc_errors(void **state)
{
	(void)state;
	fx_refused(
	    ivc_model(true, 2, 0),
	    "{\"architectures\":[\"InternVLChatModel\"],\"model_type\":\"internvl_chat\"," VKEYS(
	        "4", SW) "}",
	    WT_ECORRUPT, "llm_config", "missing");
	fx_refused(ivc_model(true, 2, 0), CFG("", "\"model_type\":\"internlm2\""), WT_ECORRUPT,
	           "llm_config.architectures", "missing");
	fx_refused(ivc_model(true, 2, 0), CFG("", "\"architectures\":[\"Gemma2ForCausalLM\"]"),
	           WT_EUNSUPPORTED, "Gemma2ForCausalLM", "llm_config.architectures");
	fx_refused(ivc_model(true, 2, 0), CFG("", "\"architectures\":[\"InternLM2ForCausalLM\"]"),
	           WT_EUNSUPPORTED, "llm_config", "bias");
	fx_refused(ivc_model(true, 2, 0), CFG_AT("", IL_LM, VKEYS("4", ",\"norm_type\":\"x\"")),
	           WT_EUNSUPPORTED, "vision_config.norm_type", "rms_norm");
	fx_refused(ivc_model(true, 2, 0), CFG_AT("", IL_LM, VKEYS("3", SW)), WT_ECORRUPT,
	           "num_attention_heads", "64");
	fx_refused(ivc_model(true, 2, 0), CFG_RATIO("0.3", IL_LM), WT_EUNSUPPORTED,
	           "downsample_ratio", "1 / n");
	fx_refused(ivc_model(true, 2, 0), CFG_AT("", IL_LM, "\"vision_config\":3"), WT_ECORRUPT,
	           "vision_config", "not an object");
	fx_refused_tp(ivc_model(true, 2, 0), cfg_il, 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused(ivc_model(true, 2, 0),
	           "{\"architectures\":[\"InternVLChatModel\"],\"model_type\":\"internlm2\","
	           "\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"
	           "\"num_key_value_heads\":2,\"vocab_size\":1000,\"num_hidden_layers\":2,"
	           "\"bias\":false}",
	           WT_ECORRUPT, "InternVLChatModel", "internvl_chat");
	/* a tower tensor of the wrong shape (mlp1 sized for downsample_ratio 0.25) */
	fx_refused(ivc_model(true, 2, 0), CFG_RATIO("0.25", IL_LM), WT_ESHAPE, "mlp1.0.", "1024");
}

#define SIB(arch, mt, lm)                                                                          \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"" mt "\",\"downsample_ratio\":0.5,"    \
	"\"llm_config\":{" lm "}," VKEYS("4", SW) "}"
#define LL_LM                                                                                      \
	"\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":128,\"intermediate_size\":192,"  \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"vocab_size\":1000,"                 \
	"\"num_hidden_layers\":2"

/* H2OVLChatModel (h2ovl_chat, a Llama LM) and SkyworkR1VChatModel (skywork_chat, Qwen2): every
 * rank byte for byte InternVLChatModel's of the same weights at TP 2 and 4; Skywork's mlp1.1 /
 * mlp1.3 quantized whole on every rank under int8-channel TP 2 (InternVL's kept BF16); its
 * InternLM2 language model refused. */
static void test_ivc_siblings(void **state)
{
	(void)state;
	static const char *const cf[][2] = {
	    {SIB("H2OVLChatModel", "h2ovl_chat", LL_LM), CFG("", LL_LM)},
	    {SIB("SkyworkR1VChatModel", "skywork_chat", QW_LM), cfg_qw}};
	for (size_t k = 0; k < 2; k++)
		for (uint32_t T = 2; T <= 4; T *= 2) {
			fx a, b;
			fx_open(&a, ivc_model(false, 2, 0), cf[k][0], T, 1, 0, true);
			fx_open(&b, ivc_model(false, 2, 0), cf[k][1], T, 1, 0, true);
			assert_string_equal(shardmap_family(a.p), "internvl_chat");
			for (uint32_t r = 0; r < T; r++)
				fx_same_rank(&a, &b, r, NULL);
			fx_close(&a);
			fx_close(&b);
		}
	static const char *const keep[] = {"mlp1.0.weight", "mlp1.1.bias", "mlp1.3.bias"};
	static const char *const q[] = {"mlp1.1.weight", "mlp1.3.weight", B1 "mlp.fc2.weight"};
	fx f;
	fx_open_quant(&f, ivc_model(false, 2, 0), cf[1][0], 2, WT_QUANT_INT8_CHANNEL, WT_BF16, keep,
	              3, q, 3);
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, "mlp1.1.weight", 2, HID, VM, 0);
		fx_rows_int8_is(&f, r, "mlp1.1.weight", 0, "mlp1.1.weight", 0, HID, VM);
		fx_rows_int8_is(&f, r, "mlp1.3.weight", 0, "mlp1.3.weight", 0, HID, HID);
	}
	fx_close(&f);
	static const char *const keep_ivl[] = {"mlp1.1.weight", "mlp1.3.weight"};
	fx_open_quant(&f, ivc_model(false, 2, 0), cf[1][1], 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              keep_ivl, 2, q + 2, 1);
	fx_close(&f);
	fx_refused(ivc_model(true, 2, 0), SIB("SkyworkR1VChatModel", "skywork_chat", IL_LM),
	           WT_EUNSUPPORTED, "SkyworkR1VChatModel", "InternLM2ForCausalLM");
	fx_refused(ivc_model(LM_PHI, 2, 0), SIB("SkyworkR1VChatModel", "skywork_chat", PHI_LM),
	           WT_EUNSUPPORTED, "SkyworkR1VChatModel", "Phi3ForCausalLM");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ivc_slices),   cmocka_unit_test(test_ivc_same_lm),
	    cmocka_unit_test(test_ivc_quant),    cmocka_unit_test(test_ivc_sdpa),
	    cmocka_unit_test(test_ivc_coverage), cmocka_unit_test(test_ivc_select_layer),
	    cmocka_unit_test(test_ivc_switches), cmocka_unit_test(test_ivc_defaults),
	    cmocka_unit_test(test_ivc_errors),   cmocka_unit_test(test_ivc_siblings),
	    cmocka_unit_test(test_ivc_phi3),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
