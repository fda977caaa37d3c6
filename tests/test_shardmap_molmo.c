/*
 * test_shardmap_molmo.c — Molmo (MolmoForCausalLM, model_type molmo; docs/format.md section 2.7),
 * cut as vLLM's molmo.py loads it: the language model's fused att_proj re-cut into [q_r; k_r;
 * v_r] (its bias with qkv_bias), ff_proj into [first_r; second_r] in the checkpoint's order,
 * attn_out / ff_out by columns, q_norm / k_norm whole with attention_layer_norm, wte.embedding
 * and wte.new_embedding concatenated into one padded vocabulary, the LM head ff_out by padded
 * vocabulary rows; the vision backbone at vLLM's fixed VisionBackboneConfig (23 blocks, 1024
 * wide, 16 heads, MLP 4096): every block's wq / wk / wv (+ biases) and w1 by rows, wo / w2 by
 * columns, image_pooling_2d the same over 2048-wide inputs, image_projector w1 / w3 merged by
 * rows, w2 by columns, the rest whole; int8-channel, coverage, MolmoConfig's defaults and the
 * refusals.
 *
 * The backbone's sizes are vLLM's, not config.json's, and vLLM loads all 23 blocks: the full
 * tower (~290 M values) is built where a plan must succeed; the refusals that come first use
 * partial checkpoints. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0301ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* The LM: hid 256, H 8, KV 2, d 32, ff_proj 1024 rows (I 512), V 1000 (embedding_size over
 * vocab_size 990) padded to 1024; the embedding 1128 rows padded to 1152. */
#define HID    256
#define HD     32
#define I      512
#define V      1000
#define VP     1024
#define VW     1128
#define VWP    1152
#define VE     1024
#define VI     4096
#define VNP    577
#define BLOCKS 23
#define T0     "model.transformer."
#define VB     "model.vision_backbone."
#define VT     VB "image_vit."
#define RB     VT "transformer.resblocks.%d."
#define PO     VB "image_pooling_2d."
#define PJ     VB "image_projector."

#define MO_LM                                                                                      \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":1024,\"vocab_size\":990,\"embedding_size\":1000,"                   \
	"\"num_hidden_layers\":2"
#define MO_CFG(extra)                                                                              \
	"{\"architectures\":[\"MolmoForCausalLM\"],\"model_type\":\"molmo\"," MO_LM extra "}"
/* Molmo-7B-D's switches (Qwen2: q/k/v biases, no q/k norms; MolmoConfig's default
 * tie_word_embeddings true, which vLLM never reads) and Molmo-7B-O's (OLMo: q/k norms) */
static const char cfg_d[] =
    MO_CFG(",\"qkv_bias\":true,\"attention_layer_norm\":false,\"weight_tying\":false,"
           "\"tie_word_embeddings\":true");
static const char cfg_o[] =
    MO_CFG(",\"qkv_bias\":false,\"attention_layer_norm\":true,\"norm_after\":true,"
           "\"layer_norm_type\":\"rms\"");

/* What mo_model builds: the switches' tensors, the ViT blocks, new_embedding's rows; hollow:
 * shapes only (tm_model.hollow), for a checkpoint only planned. */
typedef struct mo_opt {
	bool bias, qkn, hollow;
	int blocks;
	int64_t new_rows;
} mo_opt;

static void mo_lm(tm_model *m, const mo_opt *o)
{
	tm_add2(m, T0 "wte.embedding", V, HID);
	tm_add2(m, T0 "wte.new_embedding", o->new_rows, HID);
	tm_add2(m, T0 "ff_out.weight", V, HID);
	tm_add2(m, T0 "ln_f.weight", HID, 0);
	for (int i = 0; i < 2; i++) {
		char p[64], n[128];
#define L(leaf, a, b) (snprintf(n, sizeof(n), "%s" leaf, p), tm_add2(m, n, a, b))
		snprintf(p, sizeof(p), T0 "blocks.%d.", i);
		L("attn_norm.weight", HID, 0);
		L("ff_norm.weight", HID, 0);
		L("att_proj.weight", 12 * HD, HID);
		if (o->bias)
			L("att_proj.bias", 12 * HD, 0);
		if (o->qkn) {
			L("q_norm.weight", HID, 0);
			L("k_norm.weight", 2 * HD, 0);
		}
		L("attn_out.weight", HID, HID);
		L("ff_proj.weight", 2 * I, HID);
		L("ff_out.weight", HID, I);
#undef L
	}
}

static void mo_attn(tm_model *m, const char *p, int64_t in)
{
	static const char *const x[] = {"wq", "wk", "wv"};
	char n[200];
	for (int k = 0; k < 3; k++) {
		snprintf(n, sizeof(n), "%s%s.weight", p, x[k]);
		tm_add2(m, n, VE, in);
		snprintf(n, sizeof(n), "%s%s.bias", p, x[k]);
		tm_add2(m, n, VE, 0);
	}
	snprintf(n, sizeof(n), "%swo.weight", p);
	tm_add2(m, n, VE, VE);
	snprintf(n, sizeof(n), "%swo.bias", p);
	tm_add2(m, n, VE, 0);
}

static void mo_block(tm_model *m, int b)
{
	static const fx_leaf leaf[] = {
	    {"feed_forward.w1.weight", VI, VE}, {"feed_forward.w1.bias", VI, 0},
	    {"feed_forward.w2.weight", VE, VI}, {"feed_forward.w2.bias", VE, 0},
	    {"attention_norm.weight", VE, 0},   {"attention_norm.bias", VE, 0},
	    {"ffn_norm.weight", VE, 0},         {"ffn_norm.bias", VE, 0},
	};
	char p[128], n[200];
	snprintf(p, sizeof(p), RB "attention.", b);
	mo_attn(m, p, VE);
	for (size_t k = 0; k < sizeof(leaf) / sizeof(leaf[0]); k++) {
		snprintf(n, sizeof(n), RB "%s", b, leaf[k].leaf);
		tm_add2(m, n, leaf[k].n, leaf[k].k);
	}
}

static tm_model *mo_model(const mo_opt *o)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	m->hollow = o->hollow;
	mo_lm(m, o);
	tm_add2(m, VT "class_embedding", VE, 0);
	tm_add2(m, VT "positional_embedding", VNP, VE);
	tm_add2(m, VT "patch_embedding.weight", VE, 588);
	tm_add2(m, VT "pre_ln.weight", VE, 0);
	tm_add2(m, VT "pre_ln.bias", VE, 0);
	for (int b = 0; b < o->blocks; b++)
		mo_block(m, b);
	mo_attn(m, PO, 2 * VE);
	tm_add2(m, PJ "w1.weight", I, VE);
	tm_add2(m, PJ "w3.weight", I, VE);
	tm_add2(m, PJ "w2.weight", HID, I);
	tm_add2(m, VB "pad_embed", 2, 2 * VE);
	return m;
}

/* A whole checkpoint: Molmo-7B-D's switches (biases) or 7B-O's (q/k norms). */
static tm_model *mo_full(bool d)
{
	mo_opt o = {.bias = d, .qkn = !d, .blocks = BLOCKS, .new_rows = 128};
	return mo_model(&o);
}

/* The same, hollow: planned only, without its ~290M values made and written. */
static tm_model *mo_hollow(bool d)
{
	mo_opt o = {.bias = d, .qkn = !d, .hollow = true, .blocks = BLOCKS, .new_rows = 128};
	return mo_model(&o);
}

static const char *const whole[] = {T0 "ln_f.weight",
                                    VT "class_embedding",
                                    VT "positional_embedding",
                                    VT "patch_embedding.weight",
                                    VT "pre_ln.weight",
                                    VT "pre_ln.bias",
                                    PO "wo.bias",
                                    VB "pad_embed"};

/* Rank r of T's ViT attention under p (a block's or the pooling's, `in` columns): wq / wk /
 * wv and their biases by rows, wo by columns, its bias whole. */
static void attn_is(const fx *f, uint32_t r, uint32_t T, const char *p, int64_t in)
{
	static const char *const x[] = {"wq", "wk", "wv"};
	char n[200];
	int64_t rl = VE / T;
	for (int k = 0; k < 3; k++) {
		snprintf(n, sizeof(n), "%s%s.weight", p, x[k]);
		shp(f, r, n, 2, rl, in, 0);
		rows_at(f, r, n, 0, n, r * rl, rl);
		snprintf(n, sizeof(n), "%s%s.bias", p, x[k]);
		shp(f, r, n, 1, rl, 0, 0);
		rows_at(f, r, n, 0, n, r * rl, rl);
	}
	snprintf(n, sizeof(n), "%swo.weight", p);
	cols_of(f, r, T, n, n, VE, VE);
	snprintf(n, sizeof(n), "%swo.bias", p);
	repl(f, r, n);
}

/* Rank r of T's ViT block b by hand. */
static void block_is(const fx *f, uint32_t r, uint32_t T, int b)
{
	char p[128], n[200];
	snprintf(p, sizeof(p), RB "attention.", b);
	attn_is(f, r, T, p, VE);
	int64_t il = VI / T;
	snprintf(n, sizeof(n), RB "feed_forward.w1.weight", b);
	shp(f, r, n, 2, il, VE, 0);
	rows_at(f, r, n, 0, n, r * il, il);
	snprintf(n, sizeof(n), RB "feed_forward.w1.bias", b);
	rows_at(f, r, n, 0, n, r * il, il);
	snprintf(n, sizeof(n), RB "feed_forward.w2.weight", b);
	cols_of(f, r, T, n, n, VE, VI);
	static const char *const rep[] = {"feed_forward.w2.bias", "attention_norm.weight",
	                                  "attention_norm.bias", "ffn_norm.weight",
	                                  "ffn_norm.bias"};
	for (size_t k = 0; k < sizeof(rep) / sizeof(rep[0]); k++) {
		snprintf(n, sizeof(n), RB "%s", b, rep[k]);
		repl(f, r, n);
	}
}

/* Rank r of T's LM block i by hand: att_proj [q_r; k_r; v_r] of the fused rows (q at 0, k at
 * H d, v at (H + KV) d; the kv head r / (T / KV) when KV < T), its bias alike, attn_out
 * columns, ff_proj [first_r; second_r] (second at row I), ff_out columns, the norms whole. */
static void lm_block_is(const fx *f, uint32_t r, uint32_t T, int i, bool d)
{
	char p[64], n[128];
	snprintf(p, sizeof(p), T0 "blocks.%d.", i);
	int64_t hl = 8 / T, kvl = T <= 2 ? 2 / T : 1, g0 = T <= 2 ? r * kvl : r / (T / 2);
	for (int w = 0; w < (d ? 2 : 1); w++) {
		snprintf(n, sizeof(n), "%satt_proj.%s", p, w ? "bias" : "weight");
		shp(f, r, n, w ? 1 : 2, (hl + 2 * kvl) * HD, HID, 0);
		rows_at(f, r, n, 0, n, r * hl * HD, hl * HD);
		rows_at(f, r, n, hl * HD, n, 8 * HD + g0 * HD, kvl * HD);
		rows_at(f, r, n, (hl + kvl) * HD, n, 10 * HD + g0 * HD, kvl * HD);
	}
	snprintf(n, sizeof(n), "%sattn_out.weight", p);
	cols_of(f, r, T, n, n, HID, 8 * HD);
	snprintf(n, sizeof(n), "%sff_proj.weight", p);
	shp(f, r, n, 2, 2 * (I / T), HID, 0);
	rows_at(f, r, n, 0, n, r * (I / T), I / T);
	rows_at(f, r, n, I / T, n, I + r * (I / T), I / T);
	snprintf(n, sizeof(n), "%sff_out.weight", p);
	cols_of(f, r, T, n, n, HID, I);
	static const char *const nrm[] = {"attn_norm.weight", "ff_norm.weight", "q_norm.weight",
	                                  "k_norm.weight"};
	for (size_t k = 0; k < (d ? 2u : 4u); k++) {
		snprintf(n, sizeof(n), "%s%s", p, nrm[k]);
		repl(f, r, n);
	}
	snprintf(n, sizeof(n), "%satt_proj.bias", p);
	assert_true(d || tm_ix(f->p, r, n) < 0);
}

/* Rank r of T's model.transformer.wte.weight: rows [r Vl, (r + 1) Vl) of [embedding (V rows);
 * new_embedding (128); zeros] (VWP rows padded). */
static void wte_is(const fx *f, uint32_t r, uint32_t T)
{
	const char *rt = T0 "wte.weight";
	int64_t vl = VWP / T, lo = r * vl, hi = lo + vl;
	shp(f, r, rt, 2, vl, HID, 0);
	int64_t a = lo, b = hi < V ? hi : V;
	if (a < b)
		rows_at(f, r, rt, 0, T0 "wte.embedding", a, b - a);
	a = lo > V ? lo : V;
	b = hi < VW ? hi : VW;
	if (a < b)
		rows_at(f, r, rt, a - lo, T0 "wte.new_embedding", a - V, b - a);
	const uint16_t *e = (const uint16_t *)out_bytes(f, r, rt);
	for (int64_t row = (lo > VW ? lo : VW); row < hi; row++)
		for (int64_t c = 0; c < HID; c++)
			assert_int_equal(e[(row - lo) * HID + c], 0);
}

/* int8-channel TP 2 of f (7B-D's switches, written by test_mo_slices): every Linear of the LM, the
 * ViT, the pooling and the projector quantized (vLLM passes quant_config to each); the vocabulary
 * tables, patch_embedding (a plain nn.Linear), the embeddings, norms, biases and pad_embed BF16. */
static void mo_quant_is(fx *f)
{
	static const char *const keep[] = {T0 "wte.weight",
	                                   T0 "ff_out.weight",
	                                   T0 "ln_f.weight",
	                                   T0 "blocks.1.att_proj.bias",
	                                   VT "patch_embedding.weight",
	                                   VT "class_embedding",
	                                   VT "positional_embedding",
	                                   VT "pre_ln.weight",
	                                   VB "pad_embed",
	                                   PO "wq.bias",
	                                   PO "wo.bias",
	                                   VT "transformer.resblocks.22.feed_forward.w1.bias",
	                                   VT "transformer.resblocks.0.ffn_norm.weight"};
	static const char *const q8[] = {T0 "blocks.0.att_proj.weight",
	                                 T0 "blocks.0.attn_out.weight",
	                                 T0 "blocks.1.ff_proj.weight",
	                                 T0 "blocks.1.ff_out.weight",
	                                 VT "transformer.resblocks.0.attention.wq.weight",
	                                 VT "transformer.resblocks.22.attention.wo.weight",
	                                 VT "transformer.resblocks.22.feed_forward.w1.weight",
	                                 VT "transformer.resblocks.22.feed_forward.w2.weight",
	                                 PO "wk.weight",
	                                 PO "wo.weight",
	                                 PJ "merged_linear.weight",
	                                 PJ "w2.weight"};
	fx_requant(f, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(keep), FX_N(q8));
	fx_cols_int8_is(f, 1, 2, T0 "blocks.0.attn_out.weight", HID, HID);
	fx_cols_int8_is(f, 1, 2, PJ "w2.weight", HID, I);
	fx_cols_int8_is(f, 1, 2, VT "transformer.resblocks.22.feed_forward.w2.weight", VE, VI);
	fx_rows_int8_is(f, 1, PJ "merged_linear.weight", I / 2, PJ "w3.weight", I / 2, I / 2, VE);
}

/* TP 2 (Molmo-7B-O's switches) and TP 4 (7B-D's): every rank by hand; then 7B-D's folder
 * (0.6 GB: written once) at int8-channel TP 2 (mo_quant_is). */
static void test_mo_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		bool d = T == 4;
		fx f;
		fx_open(&f, mo_full(d), d ? cfg_d : cfg_o, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "molmo");
		assert_false(shardmap_tied_lm_head(f.p));
		for (uint32_t r = 0; r < T; r++) {
			block_is(&f, r, T, 0);
			block_is(&f, r, T, BLOCKS - 1);
			attn_is(&f, r, T, PO, 2 * VE);
			for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++)
				repl(&f, r, whole[k]);
			const char *ml = PJ "merged_linear.weight";
			shp(&f, r, ml, 2, 2 * (I / T), VE, 0);
			rows_at(&f, r, ml, 0, PJ "w1.weight", r * (I / T), I / T);
			rows_at(&f, r, ml, I / T, PJ "w3.weight", r * (I / T), I / T);
			cols_of(&f, r, T, PJ "w2.weight", PJ "w2.weight", HID, I);
			lm_block_is(&f, r, T, 0, d);
			lm_block_is(&f, r, T, 1, d);
			wte_is(&f, r, T);
			fx_vocab_is(&f, r, T, T0 "ff_out.weight", V, VP, HID);
			assert_int_equal(tm_ix(f.p, r, T0 "wte.embedding"), -1);
			assert_int_equal(tm_ix(f.p, r, PJ "w1.weight"), -1);
		}
		if (d)
			mo_quant_is(&f);
		fx_close(&f);
	}
}

/* Every element once per replication at TP 1 / 2 / 4 / 8, both switch sets (planned only: the
 * towers hollow). */
static void test_mo_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(mo_hollow(true), cfg_d, 2, lays, 4);
	coverage(mo_hollow(false), cfg_o, 2, lays, 4);
}

/* MolmoConfig's defaults (config_molmo.py) and vLLM's fixed backbone; the view's vocabulary
 * `embedding_size or vocab_size`, the halved width, the tie vLLM never reads. */
static void test_mo_defaults(void **state)
{
	(void)state;
	ckpt_config c = {0};
	tm_parse("{\"architectures\":[\"MolmoForCausalLM\"],\"model_type\":\"molmo\"}", &c);
	assert_int_equal(c.vocab_size, 50304);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.intermediate_size, 5504);
	assert_int_equal(c.num_hidden_layers, 32);
	assert_int_equal(c.num_attention_heads, 32);
	assert_int_equal(c.num_key_value_heads, 32);
	assert_int_equal(c.head_dim, 128);
	assert_false(c.attention_bias || c.use_qk_norm);
	assert_false(shardmap_tied(&c));
	assert_true(c.has_vision);
	assert_int_equal(c.v_hidden_size, VE);
	assert_int_equal(c.v_intermediate_size, VI);
	assert_int_equal(c.v_num_layers, BLOCKS);
	assert_int_equal(c.v_num_attn_heads, 16);
	assert_string_equal(shardmap_family_of(&c), "molmo");
	ckpt_config_clear(&c);
	/* Molmo-7B-D's own keys: embedding_size over vocab_size, kv heads, the switches */
	tm_parse("{\"architectures\":[\"MolmoForCausalLM\"],\"model_type\":\"molmo\","
	         "\"embedding_size\":152064,\"vocab_size\":152064,\"hidden_size\":3584,"
	         "\"intermediate_size\":37888,\"num_hidden_layers\":28,\"num_attention_heads\":28,"
	         "\"num_key_value_heads\":4,\"qkv_bias\":true,\"attention_layer_norm\":false,"
	         "\"layer_norm_eps\":1e-06,\"tie_word_embeddings\":true,\"head_dim\":64}",
	         &c);
	assert_int_equal(c.vocab_size, 152064);
	assert_int_equal(c.intermediate_size, 18944);
	assert_int_equal(c.num_key_value_heads, 4);
	assert_int_equal(c.head_dim, 128); /* hidden / heads: vLLM's, whatever the config says */
	assert_true(c.attention_bias);
	assert_false(c.use_qk_norm || shardmap_tied(&c));
	ckpt_config_clear(&c);
	/* embedding_size null: vocab_size; absent: MolmoConfig's 50304, whatever vocab_size */
	tm_parse("{\"architectures\":[\"MolmoForCausalLM\"],\"model_type\":\"molmo\","
	         "\"embedding_size\":null,\"vocab_size\":1000,\"attention_layer_norm\":true}",
	         &c);
	assert_int_equal(c.vocab_size, 1000);
	assert_true(c.use_qk_norm);
	ckpt_config_clear(&c);
	tm_parse("{\"architectures\":[\"MolmoForCausalLM\"],\"model_type\":\"molmo\","
	         "\"vocab_size\":1000}",
	         &c);
	assert_int_equal(c.vocab_size, 50304);
	ckpt_config_clear(&c);
}

/* config.json refused by the loader: the code and words of its message. */
static void cfg_refused(const char *cfg, int code, const char *a, const char *b)
{
	ckpt_config c = {0};
	wt_errbuf err = {0};
	int rv = ckpt_config_parse(cfg, strlen(cfg), &c, &err);
	printf("refused (%s): %s\n", wt_errname(rv), err.msg);
	assert_int_equal(rv, code);
	if (!strstr(err.msg, a) || !strstr(err.msg, b))
		fail_msg("'%s' lacks '%s' or '%s'", err.msg, a, b);
	ckpt_config_clear(&c);
}

/* The LM and an empty tower (no block): a plan refused before the blocks are looked for. */
static tm_model *mo_partial(bool bias, bool qkn)
{
	mo_opt o = {.bias = bias, .qkn = qkn, .blocks = 0, .new_rows = 128};
	return mo_model(&o);
}

static void test_mo_errors(void **state)
{
	(void)state;
	cfg_refused(MO_CFG(",\"weight_tying\":true"), WT_EUNSUPPORTED, "weight_tying",
	            "model.transformer.wte");
	cfg_refused(MO_CFG(",\"layer_norm_type\":\"default\""), WT_EUNSUPPORTED,
	            "layer_norm_type 'default'", "\"rms\"");
	cfg_refused(MO_CFG(",\"moe_num_experts\":64,\"moe_top_k\":8"), WT_EUNSUPPORTED,
	            "moe_num_experts", "MolmoE");
	cfg_refused(MO_CFG(",\"block_type\":\"moe\""), WT_EUNSUPPORTED, "block_type", "MolmoE");
	cfg_refused("{\"architectures\":[\"MolmoForCausalLM\"],\"model_type\":\"molmo\","
	            "\"intermediate_size\":1001}",
	            WT_ECORRUPT, "intermediate_size 1001", "ff_proj");
	cfg_refused("{\"architectures\":[\"MolmoForCausalLM\"],\"model_type\":\"molmo\","
	            "\"embedding_size\":\"x\"}",
	            WT_ECORRUPT, "embedding_size", "wte.embedding");
	/* the planner's, on partial checkpoints (each refused before the blocks are missed) */
	fx_refused(mo_partial(false, false),
	           "{\"architectures\":[\"MolmoForCausalLM\"],\"model_type\":\"olmo\"," MO_LM "}",
	           WT_ECORRUPT, "MolmoForCausalLM", "model_type molmo");
	tm_model *m = mo_partial(false, false);
	tm_add2(m, T0 "blocks.0.q_norm.weight", HID, 0);
	fx_refused(m, cfg_d, WT_EUNSUPPORTED, "blocks.0.q_norm.weight", "attention_layer_norm");
	m = mo_partial(true, false);
	fx_refused(m, cfg_o, WT_EUNSUPPORTED, "blocks.0.att_proj.bias", "qkv_bias");
	m = mo_partial(false, false);
	mo_block(m, BLOCKS); /* a 24th block: vLLM builds 23 */
	fx_refused(m, cfg_d, WT_ESHAPE, "resblocks.23", "VisionBackboneConfig) num_layers is 23");
	m = mo_partial(false, false);
	tm_add2(m, PJ "w1.bias", I, 0);
	fx_refused(m, cfg_d, WT_EUNSUPPORTED, "image_projector.w1.bias", "unknown tensor");
	m = mo_partial(false, false);
	tm_add2(m, T0 "blocks.0.att_proj.bias", 12 * HD, 0);
	fx_refused(m, cfg_d, WT_ENOTFOUND, "blocks.1.att_proj.bias", "qkv_bias true");
	/* missing: block 22 (blocks 0 .. 21 hold their first tensor, the first rule's) */
	mo_opt o = {.bias = true, .qkn = false, .blocks = 0, .new_rows = 128};
	m = mo_model(&o);
	for (int b = 0; b < BLOCKS - 1; b++) {
		char n[160];
		snprintf(n, sizeof(n), RB "attention.wq.weight", b);
		tm_add2(m, n, VE, VE);
	}
	fx_refused(m, cfg_d, WT_ENOTFOUND, "resblocks.22.attention.wq.weight", "missing");
}

/* The refusals that need a whole checkpoint (planned only: hollow): new_embedding's rows,
 * pad_embed's width, tp_size over the heads. */
static void test_mo_shapes(void **state)
{
	(void)state;
	mo_opt o = {.bias = true, .qkn = false, .hollow = true, .blocks = BLOCKS, .new_rows = 100};
	fx_refused(mo_model(&o), cfg_d, WT_ESHAPE, "wte.new_embedding", "[128, 256]");
	o.new_rows = 128;
	tm_model *m = mo_model(&o);
	int k = tm_find(m, VB "pad_embed");
	m->d[k].shape[0] = 1; /* [1, 2048]: the first half of its bytes */
	fx_refused(m, cfg_d, WT_ESHAPE, "pad_embed", "[2, 2048]");
	fx_refused_tp(mo_hollow(true), cfg_d, 16, WT_ELAYOUT, "tp_size 16",
	              "num_attention_heads 8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mo_slices),   cmocka_unit_test(test_mo_coverage),
	    cmocka_unit_test(test_mo_defaults), cmocka_unit_test(test_mo_errors),
	    cmocka_unit_test(test_mo_shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
