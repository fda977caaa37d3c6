/*
 * test_shardmap_blip2.c — BLIP-2 (Blip2ForConditionalGeneration: Salesforce/blip2-opt-2.7b,
 * -6.7b) cut as vLLM's blip2.py / blip.py / opt.py load it: OPT's tensors under
 * language_model. cut as OPT's; the BLIP tower's fused self_attn.qkv (and qkv.bias) re-cut
 * by heads into [q_r; k_r; v_r], projection and fc2 by columns, fc1 by rows with its bias,
 * the rest of the tower whole; query_tokens, the Q-Former (cross-attention every
 * cross_attention_frequency layers) and language_projection whole and never quantized.
 * Hand-computed slices at TP 2 and TP 4, the language model against OPTForCausalLM's, int8 /
 * fp8 layouts, coverage over TP 1..8, Blip2Config's / Blip2VisionConfig's /
 * Blip2QFormerConfig's / OPTConfig's defaults, the tie, and the refusals. transformers 4.57.1
 * writes and reads one name layout (no conversion mapping). Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eedb102ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* OPT hid 64, H 8 (d 8), ffn 128, V 100, 2 layers; tower VE 32, 8 heads (d 4), MLP 64, 2
 * blocks, image 8 / patch 4 (4 + 1 positions); Q-Former QH 24, 2 heads, I 48, 3 layers
 * (cross-attention in 0 and 2), 4 query tokens */
#define HID 64
#define VE  32
#define VI  64
#define QH  24
#define QI  48
#define TXT                                                                                        \
	"\"hidden_size\":64,\"num_attention_heads\":8,\"ffn_dim\":128,\"vocab_size\":100,"         \
	"\"num_hidden_layers\":2,\"max_position_embeddings\":32"
/* vision_config's keys: MLP width i, heads h, then image / patch (each ",\"key\":n" or "") */
#define VISF(i, h, img, p)                                                                         \
	"\"hidden_size\":32,\"intermediate_size\":" i ",\"num_hidden_layers\":2,"                  \
	"\"num_attention_heads\":" h img p
#define VIS VISF("64", "8", ",\"image_size\":8", ",\"patch_size\":4")
/* qformer_config's keys: intermediate (",\"intermediate_size\":n" or ""), heads h */
#define QFF(i, h) "\"hidden_size\":24,\"num_hidden_layers\":3,\"num_attention_heads\":" h i
#define QF        QFF(",\"intermediate_size\":48", "2")
#define B2_HEAD   "{\"architectures\":[\"Blip2ForConditionalGeneration\"],\"model_type\":\"blip-2\","
/* top: top-level keys after num_query_tokens; v, q, t: vision_config's, qformer_config's,
 * text_config's after theirs */
#define B2_CFG4(top, v, q, t)                                                                      \
	B2_HEAD "\"num_query_tokens\":4" top ",\"vision_config\":{" VIS v                          \
	        "},\"qformer_config\":{" QF q "},\"text_config\":{\"model_type\":\"opt\"," TXT t   \
	        "}}"
#define B2_CFG B2_CFG4("", "", "", "")
/* vision_config / qformer_config bodies of their own */
#define B2_CFGX(vis, qf)                                                                           \
	B2_HEAD "\"num_query_tokens\":4,\"vision_config\":{" vis "},\"qformer_config\":{" qf       \
	        "},\"text_config\":{\"model_type\":\"opt\"," TXT "}}"
#define OPT_CFG "{\"architectures\":[\"OPTForCausalLM\"],\"model_type\":\"opt\"," TXT "}"
#define LMD     "language_model.model.decoder."
#define HEAD    "language_model.lm_head.weight"
#define VB1     "vision_model.encoder.layers.1."
#define VQKV    VB1 "self_attn.qkv.weight"
#define VQKVB   VB1 "self_attn.qkv.bias"
#define VPROJ   VB1 "self_attn.projection.weight"
#define QL0     "qformer.encoder.layer.0."
#define QL1     "qformer.encoder.layer.1."
#define QL2     "qformer.encoder.layer.2."
#define XKEY    "crossattention.attention.key.weight"
#define LMQKV   LMD "layers.1.self_attn.qkv_proj.weight"
#define LMQKVB  LMD "layers.1.self_attn.qkv_proj.bias"
#define LAY_B2  LAY_V450 /* the one layout: language_model.* */
#define LAY_OPT LAY_TEXT /* OPTForCausalLM alone */

static void add_b(tm_model *m, const char *n, int64_t a, int64_t b)
{
	tm_add2(m, n, a, b);
}

/* tensor n of shape [a, b, c] (a 3-D parameter) or [a, ch, p, p] (4-D: the patch Conv2d) */
static void add_nd(tm_model *m, const char *n, int nd, int64_t a, int64_t b, int64_t c)
{
	tm_add(m, n, WT_DTYPE_INVALID, 1, a * b * c * (nd == 4 ? c : 1), 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = nd;
	d->shape[0] = a;
	d->shape[1] = b;
	d->shape[2] = c;
	d->shape[3] = c;
}

/* A Q-Former attention block A ("attention" / "crossattention") of layer prefix l. */
static void add_qatt(tm_model *m, const char *l, const char *a, int64_t kd)
{
	static const struct {
		const char *leaf;
		int kv;
		bool w;
	} t[] = {{"attention.query", 0, true},
	         {"attention.key", 1, true},
	         {"attention.value", 1, true},
	         {"output.dense", 0, true},
	         {"output.LayerNorm", 0, false}};
	char n[200];
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		snprintf(n, sizeof(n), "%s%s.%s.weight", l, a, t[k].leaf);
		add_b(m, n, QH, t[k].w ? (t[k].kv ? kd : QH) : 0);
		snprintf(n, sizeof(n), "%s%s.%s.bias", l, a, t[k].leaf);
		add_b(m, n, QH, 0);
	}
}

/* The tower, query tokens, Q-Former (cross-attention in layers i % xf == 0) and projector;
 * qkv.bias when qb. */
static void add_mm(tm_model *m, bool qb, int xf)
{
	add_nd(m, "vision_model.embeddings.class_embedding", 3, 1, 1, VE);
	add_nd(m, "vision_model.embeddings.position_embedding", 3, 1, 5, VE);
	add_nd(m, "vision_model.embeddings.patch_embedding.weight", 4, VE, 3, 4);
	add_b(m, "vision_model.embeddings.patch_embedding.bias", VE, 0);
	for (int i = 0; i < 2; i++) {
		const fx_leaf blk[] = {
		    {"layer_norm1.weight", VE, 0},
		    {"layer_norm1.bias", VE, 0},
		    {"self_attn.qkv.weight", 3 * VE, VE},
		    {"self_attn.qkv.bias", 3 * VE, 0},
		    {"self_attn.projection.weight", VE, VE},
		    {"self_attn.projection.bias", VE, 0},
		    {"layer_norm2.weight", VE, 0},
		    {"layer_norm2.bias", VE, 0},
		    {"mlp.fc1.weight", VI, VE},
		    {"mlp.fc1.bias", VI, 0},
		    {"mlp.fc2.weight", VE, VI},
		    {"mlp.fc2.bias", VE, 0},
		};
		for (size_t k = 0; k < sizeof(blk) / sizeof(blk[0]); k++) {
			char n[200];
			if (!qb && strcmp(blk[k].leaf, "self_attn.qkv.bias") == 0)
				continue;
			snprintf(n, sizeof(n), "vision_model.encoder.layers.%d.%s", i, blk[k].leaf);
			add_b(m, n, blk[k].n, blk[k].k);
		}
	}
	add_b(m, "vision_model.post_layernorm.weight", VE, 0);
	add_b(m, "vision_model.post_layernorm.bias", VE, 0);
	add_nd(m, "query_tokens", 3, 1, 4, QH);
	add_b(m, "qformer.layernorm.weight", QH, 0);
	add_b(m, "qformer.layernorm.bias", QH, 0);
	for (int i = 0; i < 3; i++) {
		char l[64], n[200];
		snprintf(l, sizeof(l), "qformer.encoder.layer.%d.", i);
		add_qatt(m, l, "attention", QH);
		if (i % xf == 0)
			add_qatt(m, l, "crossattention", VE);
		static const fx_leaf ff[] = {
		    {"intermediate_query.dense.weight", QI, QH},
		    {"intermediate_query.dense.bias", QI, 0},
		    {"output_query.dense.weight", QH, QI},
		    {"output_query.dense.bias", QH, 0},
		    {"output_query.LayerNorm.weight", QH, 0},
		    {"output_query.LayerNorm.bias", QH, 0},
		};
		for (size_t k = 0; k < sizeof(ff) / sizeof(ff[0]); k++) {
			snprintf(n, sizeof(n), "%s%s", l, ff[k].leaf);
			add_b(m, n, ff[k].n, ff[k].k);
		}
	}
	add_b(m, "language_projection.weight", HID, QH);
	add_b(m, "language_projection.bias", HID, 0);
}

/* The model in layout y (LAY_OPT: OPT's tensors alone), lm_head when head; the tower's
 * qkv.bias when qb, a Q-Former cross-attention every xf layers. */
static tm_model *tm_b2x(lay y, bool head, bool qb, int xf)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	const char *p = y == LAY_OPT ? "" : "language_model.";
	char n[200];
	static const fx_leaf top[] = {
	    {"model.decoder.embed_tokens.weight", 100, HID},
	    {"model.decoder.embed_positions.weight", 34, HID},
	    {"model.decoder.final_layer_norm.weight", HID, 0},
	    {"model.decoder.final_layer_norm.bias", HID, 0},
	};
	for (size_t k = 0; k < sizeof(top) / sizeof(top[0]); k++) {
		snprintf(n, sizeof(n), "%s%s", p, top[k].leaf);
		add_b(m, n, top[k].n, top[k].k);
	}
	if (head) {
		snprintf(n, sizeof(n), "%slm_head.weight", p);
		add_b(m, n, 100, HID);
	}
	for (int i = 0; i < 2; i++) {
		static const fx_leaf t[] = {
		    {"self_attn_layer_norm.weight", HID, 0},
		    {"self_attn_layer_norm.bias", HID, 0},
		    {"self_attn.q_proj.weight", HID, HID},
		    {"self_attn.q_proj.bias", HID, 0},
		    {"self_attn.k_proj.weight", HID, HID},
		    {"self_attn.k_proj.bias", HID, 0},
		    {"self_attn.v_proj.weight", HID, HID},
		    {"self_attn.v_proj.bias", HID, 0},
		    {"self_attn.out_proj.weight", HID, HID},
		    {"self_attn.out_proj.bias", HID, 0},
		    {"final_layer_norm.weight", HID, 0},
		    {"final_layer_norm.bias", HID, 0},
		    {"fc1.weight", 128, HID},
		    {"fc1.bias", 128, 0},
		    {"fc2.weight", HID, 128},
		    {"fc2.bias", HID, 0},
		};
		for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
			snprintf(n, sizeof(n), "%smodel.decoder.layers.%d.%s", p, i, t[k].leaf);
			add_b(m, n, t[k].n, t[k].k);
		}
	}
	if (y != LAY_OPT)
		add_mm(m, qb, xf);
	return m;
}

static tm_model *tm_b2(bool head)
{
	return tm_b2x(LAY_B2, head, true, 2);
}

/* Rank r of T holds [q_r; k_r; v_r] of the fused src ([q; k; v] rows, each n wide): part p
 * of local row block at p * n/T from src row p * n + r * n/T. */
static void fused_is(const fx *f, uint32_t r, uint32_t T, const char *rt, int64_t n)
{
	int64_t nl = n / T;
	for (int64_t p = 0; p < 3; p++)
		rows_at(f, r, rt, p * nl, rt, p * n + r * nl, nl);
}

/* Every checkpoint tensor of the tower's embeddings / post_layernorm, the query tokens, the
 * Q-Former and the projector is whole on rank r, byte for byte, in its own dtype. */
static void mm_whole(const fx *f, uint32_t r)
{
	static const char *const pre[] = {"vision_model.embeddings.", "vision_model.post_",
	                                  "query_tokens", "qformer.", "language_projection."};
	size_t n = 0;
	for (size_t k = 0; k < f->m->n; k++)
		for (size_t j = 0; j < sizeof(pre) / sizeof(pre[0]); j++)
			if (strncmp(f->m->name[k], pre[j], strlen(pre[j])) == 0) {
				repl(f, r, f->m->name[k]);
				n++;
			}
	assert_true(n >= 6 + 1 + 2 + 3 * 16 + 2 * 10 + 2 || n == 0);
}

/* Rank r of T: the tower's blocks and the LM's layer 1 as hand-cut. */
static void check_rank(const fx *f, uint32_t r, uint32_t T)
{
	shp(f, r, VQKV, 2, 3 * VE / T, VE, 0);
	fused_is(f, r, T, VQKV, VE);
	shp(f, r, VQKVB, 1, 3 * VE / T, 0, 0);
	fused_is(f, r, T, VQKVB, VE);
	cols_of(f, r, T, VPROJ, VPROJ, VE, VE);
	repl(f, r, VB1 "self_attn.projection.bias");
	rows_at(f, r, VB1 "mlp.fc1.weight", 0, VB1 "mlp.fc1.weight", r * VI / T, VI / T);
	rows_at(f, r, VB1 "mlp.fc1.bias", 0, VB1 "mlp.fc1.bias", r * VI / T, VI / T);
	cols_of(f, r, T, VB1 "mlp.fc2.weight", VB1 "mlp.fc2.weight", VE, VI);
	repl(f, r, VB1 "mlp.fc2.bias");
	repl(f, r, VB1 "layer_norm1.weight");
	repl(f, r, VB1 "layer_norm2.bias");
	mm_whole(f, r);
	assert_true(tm_ix(f->p, r, QL1 XKEY) < 0);
	/* the language model: OPT's q / k / v fused by heads, out_proj / fc2 columns */
	int64_t hl = HID / T;
	static const char *const qkv[] = {"q", "k", "v"};
	for (int q = 0; q < 3; q++) {
		char w[160], b[160];
		snprintf(w, sizeof(w), LMD "layers.1.self_attn.%s_proj.weight", qkv[q]);
		snprintf(b, sizeof(b), LMD "layers.1.self_attn.%s_proj.bias", qkv[q]);
		rows_at(f, r, LMQKV, q * hl, w, r * hl, hl);
		rows_at(f, r, LMQKVB, q * hl, b, r * hl, hl);
	}
	cols_of(f, r, T, LMD "layers.1.self_attn.out_proj.weight",
	        LMD "layers.1.self_attn.out_proj.weight", HID, HID);
	rows_at(f, r, LMD "layers.1.fc1.weight", 0, LMD "layers.1.fc1.weight", r * 128 / T,
	        128 / T);
	cols_of(f, r, T, LMD "layers.1.fc2.weight", LMD "layers.1.fc2.weight", HID, 128);
	repl(f, r, LMD "layers.1.fc2.bias");
	repl(f, r, LMD "embed_positions.weight");
	repl(f, r, LMD "final_layer_norm.bias");
}

/* TP 2; tied by text_config's default (OPTConfig's true): no lm_head emitted. */
static void test_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_b2(false), B2_CFG, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "blip_2");
	for (uint32_t r = 0; r < 2; r++) {
		check_rank(&f, r, 2);
		assert_true(tm_ix(f.p, r, HEAD) < 0);
		repl(&f, r, QL0 XKEY);
		repl(&f, r, QL2 XKEY);
		shp(&f, r, QL0 XKEY, 2, QH, VE, 0);
	}
	/* vocabulary rows: 100 padded to 128, rank 1 rows [64, 100) then zeros */
	shp(&f, 1, LMD "embed_tokens.weight", 2, 64, HID, 0);
	rows_are(&f, 1, LMD "embed_tokens.weight", 0, LMD "embed_tokens.weight", 64, 36);
	/* 4 + 2 x 12 LM, 6 + 2 x 12 tower, 5 + 3 x 16 + 2 x 10 Q-Former and projector */
	assert_int_equal(shardmap_rank_n_tensors(f.p, 0), 4 + 24 + 30 + 5 + 48 + 20);
	fx_close(&f);
}

/* TP 4, untied by text_config: lm_head by vocabulary rows. */
static void test_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_b2(true), B2_CFG4("", "", "", ",\"tie_word_embeddings\":false"), 4, 1, 0,
	        true);
	for (uint32_t r = 0; r < 4; r++) {
		check_rank(&f, r, 4);
		shp(&f, r, HEAD, 2, 32, HID, 0);
	}
	rows_are(&f, 3, HEAD, 0, HEAD, 96, 4);
	rows_are(&f, 1, HEAD, 0, HEAD, 32, 32);
	fx_close(&f);
}

/* The language model's outputs are OPTForCausalLM's under language_model., byte for byte. */
static void test_layouts(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T += 2) {
		fx_same_layouts(
		    tm_b2(true), NULL, B2_CFG4("", "", "", ",\"tie_word_embeddings\":false"),
		    tm_b2x(LAY_OPT, true, true, 2),
		    "{\"architectures\":[\"OPTForCausalLM\"],\"model_type\":\"opt\"," TXT
		    ",\"tie_word_embeddings\":false}",
		    T, 1, "language_model.");
	}
}

/* int8-channel TP 2: the tower's qkv / projection / fc1 / fc2 quantized per row (vLLM passes
 * the quantization config to BlipVisionModel), the Q-Former's Linears, the projector, the
 * query tokens, biases and norms kept BF16 (plain nn.Linear / nn.Parameter); fp8-channel TP 4
 * alike. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, tm_b2(false), B2_CFG, &l, true);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, VQKV);
	const float *sc = (const float *)out_bytes(&f, 1, VQKV "_scale");
	shp(&f, 1, VQKV "_scale", 2, 3 * VE / 2, 1, 0);
	for (int64_t row = 0; row < 3 * VE / 2; row++) { /* [q_1; k_1; v_1] */
		size_t rowb;
		int64_t src = (row / (VE / 2)) * VE + VE / 2 + row % (VE / 2);
		const uint16_t *x = (const uint16_t *)src_rows(&f, VQKV, src, &rowb);
		int8_row_is(q + row * VE, sc[row], x, VE);
	}
	static const char *const keep[] = {
	    VQKVB,
	    "query_tokens",
	    "language_projection.weight",
	    "qformer.layernorm.weight",
	    QL0 "attention.attention.query.weight",
	    QL0 XKEY,
	    QL1 "intermediate_query.dense.weight",
	    QL2 "output_query.dense.weight",
	    "vision_model.embeddings.patch_embedding.weight",
	    "vision_model.embeddings.position_embedding",
	    LMD "embed_tokens.weight",
	    LMQKVB,
	};
	static const char *const q8[] = {VQKV,
	                                 VPROJ,
	                                 VB1 "mlp.fc1.weight",
	                                 VB1 "mlp.fc2.weight",
	                                 LMQKV,
	                                 LMD "layers.1.fc1.weight"};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, tm_b2(false), B2_CFG, &l, true);
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(info(&f, r, VQKV)->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, VPROJ)->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, QL2 XKEY)->dtype, WT_BF16);
		assert_int_equal(info(&f, r, "language_projection.weight")->dtype, WT_BF16);
		shp(&f, r, VQKV, 2, 3 * VE / 4, VE, 0);
	}
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_b2(false), B2_CFG, 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_b2(true), B2_CFG4("", "", "", ",\"tie_word_embeddings\":false"), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
	coverage(tm_b2x(LAY_B2, false, false, 1),
	         B2_CFG4("", ",\"qkv_bias\":false", ",\"cross_attention_frequency\":1", ""), 8,
	         lays, sizeof(lays) / sizeof(lays[0]));
}

/* Blip2Config's defaults: an OPT text_config (model_type opt when absent) tied by its own
 * tie_word_embeddings alone (OPTConfig's default true; the top level's ignored),
 * num_query_tokens 32; Blip2VisionConfig's hidden_size 1408, image_size 224, patch_size 14,
 * qkv_bias true; Blip2QFormerConfig's hidden_size 768, intermediate_size 3072,
 * cross_attention_frequency 2 (the test configs leave it out). */
static void test_defaults(void **state)
{
	(void)state;
	fx a, b;
	fx_open(&a, tm_b2(false), B2_CFG, 2, 1, 0, true);
	fx_open(&b, tm_b2(false),
	        B2_HEAD "\"num_query_tokens\":4,\"vision_config\":{" VIS ",\"qkv_bias\":true},"
	                "\"qformer_config\":{" QF ",\"cross_attention_frequency\":2},"
	                "\"text_config\":{" TXT ",\"word_embed_proj_dim\":64}}",
	        2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	fx_close(&b);
	fx_close(&a);
	/* the tie is text_config's: a top-level false leaves it tied (lm_head dropped), a
	 * top-level true over text_config's false leaves it untied */
	fx_open(&a, tm_b2(true), B2_CFG4(",\"tie_word_embeddings\":false", "", "", ""), 2, 1, 0,
	        true);
	assert_true(tm_ix(a.p, 0, HEAD) < 0);
	assert_true(fx_skipped(&a, HEAD));
	fx_close(&a);
	fx_refused(
	    tm_b2(false),
	    B2_CFG4(",\"tie_word_embeddings\":true", "", "", ",\"tie_word_embeddings\":false"),
	    WT_ENOTFOUND, HEAD, "missing");
	/* the classes' sizes when absent */
	fx_refused(tm_b2(false),
	           B2_HEAD "\"num_query_tokens\":4,\"qformer_config\":{" QF "},"
	                   "\"text_config\":{" TXT "}}",
	           WT_ESHAPE, "1408", "fix config.json");
	fx_refused(tm_b2(false),
	           B2_HEAD "\"num_query_tokens\":4,\"vision_config\":{" VIS
	                   "},\"text_config\":{" TXT "}}",
	           WT_ESHAPE, "768", "fix config.json");
	fx_refused(tm_b2(false), B2_CFGX(VIS, QFF("", "2")), WT_ESHAPE, "3072",
	           "intermediate_query");
	fx_refused(tm_b2(false),
	           B2_HEAD "\"vision_config\":{" VIS "},\"qformer_config\":{" QF "},"
	                   "\"text_config\":{" TXT "}}",
	           WT_ESHAPE, "32", "query_tokens");
	fx_refused(tm_b2(false), B2_CFGX(VISF("64", "8", ",\"image_size\":8", ""), QF), WT_ECORRUPT,
	           "patch_size 14", "image_size 8");
	fx_refused(tm_b2(false), B2_CFGX(VISF("64", "8", "", ""), QF), WT_ESHAPE, "[32, 3, 14, 14]",
	           "patch_embedding");
	/* qkv_bias false: the tower's qkv without a bias */
	fx_refused(tm_b2(false), B2_CFG4("", ",\"qkv_bias\":false", "", ""), WT_EUNSUPPORTED,
	           "qkv.bias", "vision_config.qkv_bias is false");
	fx_refused(tm_b2x(LAY_B2, false, false, 2), B2_CFG, WT_ENOTFOUND, "qkv.bias", "missing");
	/* cross-attention every layer (frequency 1) and every third */
	fx_refused(tm_b2(false), B2_CFG4("", "", ",\"cross_attention_frequency\":1", ""),
	           WT_ENOTFOUND, QL1 "crossattention", "missing");
	fx_refused(tm_b2(false), B2_CFG4("", "", ",\"cross_attention_frequency\":3", ""),
	           WT_EUNSUPPORTED, QL2 "crossattention", "cross_attention_frequency");
	/* OPTConfig's: the LM's biases (enable_bias) and final LayerNorm read from text_config */
	fx_refused(tm_b2(false), B2_CFG4("", "", "", ",\"enable_bias\":false"), WT_EUNSUPPORTED,
	           "bias", "enable_bias");
	fx_refused(tm_b2(false), B2_CFG4("", "", "", ",\"do_layer_norm_before\":false"),
	           WT_EUNSUPPORTED, "final_layer_norm", "do_layer_norm_before");
}

static void test_errors(void **state)
{
	(void)state;
	/* a flan-t5 language model; none at all */
	fx_refused(tm_b2(false),
	           B2_HEAD "\"num_query_tokens\":4,\"vision_config\":{" VIS
	                   "},\"qformer_config\":{" QF
	                   "},\"text_config\":{\"model_type\":\"t5\",\"d_model\":64,"
	                   "\"num_heads\":8,\"num_layers\":2,\"vocab_size\":100,"
	                   "\"hidden_size\":64,\"num_attention_heads\":8,\"num_hidden_layers\":2}}",
	           WT_EUNSUPPORTED, "text_config.model_type 't5'", "flan-t5");
	fx_refused(tm_b2(false),
	           B2_HEAD "\"num_query_tokens\":4,\"vision_config\":{" VIS
	                   "},\"qformer_config\":{" QF "}," TXT "}",
	           WT_ECORRUPT, "text_config object", "Blip2Config");
	fx_refused(tm_b2(false),
	           "{\"architectures\":[\"Blip2ForConditionalGeneration\"],\"model_type\":\"opt\","
	           "\"num_query_tokens\":4," TXT "}",
	           WT_ECORRUPT, "model_type \"blip-2\"", "Blip2Config");
	/* the Q-Former's text input and relative positions: modules vLLM does not build */
	fx_refused(tm_b2(false), B2_CFG4("", "", ",\"use_qformer_text_input\":true", ""),
	           WT_EUNSUPPORTED, "use_qformer_text_input", "text embeddings");
	fx_refused(tm_b2(false),
	           B2_CFG4("", "", ",\"position_embedding_type\":\"relative_key\"", ""),
	           WT_EUNSUPPORTED, "position_embedding_type", "absolute");
	/* heads that do not divide the widths; an image not a whole number of patches */
	fx_refused(tm_b2(false),
	           B2_CFGX(VISF("64", "5", ",\"image_size\":8", ",\"patch_size\":4"), QF),
	           WT_ECORRUPT, "num_attention_heads 5", "hidden_size 32");
	fx_refused(tm_b2(false),
	           B2_CFGX(VISF("64", "8", ",\"image_size\":10", ",\"patch_size\":4"), QF),
	           WT_ECORRUPT, "image_size 10", "patch_size 4");
	fx_refused(tm_b2(false), B2_CFGX(VIS, QFF(",\"intermediate_size\":48", "5")), WT_ECORRUPT,
	           "qformer_config.num_attention_heads 5", "hidden_size 24");
	/* OPT's refusals, read from text_config */
	fx_refused(tm_b2(false), B2_CFG4("", "", "", ",\"num_key_value_heads\":4"), WT_EUNSUPPORTED,
	           "num_key_value_heads 4", "remove the key");
	/* tensors the config does not give */
	tm_model *m = tm_b2(false);
	tm_add2(m, "qformer.embeddings.word_embeddings.weight", 30522, QH);
	fx_refused(m, B2_CFG, WT_EUNSUPPORTED, "qformer.embeddings.word_embeddings.weight", "");
	m = tm_b2(false);
	tm_add2(m, "qformer.encoder.layer.3.output_query.dense.bias", QH, 0);
	fx_refused(m, B2_CFG, WT_ESHAPE, "Q-Former layer 3", "qformer_config.num_hidden_layers");
	m = tm_b2(false);
	tm_remove(m, "language_projection.bias");
	fx_refused(m, B2_CFG, WT_ENOTFOUND, "language_projection.bias", "missing");
	fx_refused(tm_b2(false),
	           B2_CFGX(VISF("96", "8", ",\"image_size\":8", ",\"patch_size\":4"), QF),
	           WT_ESHAPE, "mlp.fc1", "[96]");
	/* a tower of 4 heads at TP 8 (the language model's 8 would split) */
	fx_refused_tp(tm_b2(false),
	              B2_CFGX(VISF("64", "4", ",\"image_size\":8", ",\"patch_size\":4"), QF), 8,
	              WT_ELAYOUT, "vision_config.num_attention_heads 4", "1, 2 or 4");
	fx_refused_tp(tm_b2(false), B2_CFG, 3, WT_ELAYOUT, "", "");
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
