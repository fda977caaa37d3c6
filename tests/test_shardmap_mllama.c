/*
 * test_shardmap_mllama.c — Mllama (MllamaForConditionalGeneration: Llama-3.2-11B / 90B-Vision)
 * cut as vLLM's mllama.py loads it: the language model's self-attention layers as Llama's,
 * the cross-attention layers' cross_attn q / k / v fused by heads into cross_attn.qkv_proj,
 * o_proj by columns, q_norm / k_norm and the tanh gates whole; embed_tokens' vocab_size + 8
 * rows and lm_head's vocab_size rows by vocabulary; the vision model's Conv2d patch embedding
 * by output channels (unquantized), each local and global layer's q / k / v by heads, o_proj /
 * fc2 by columns, fc1 by rows with its bias, the embeddings, LayerNorms and gates whole; the
 * projector by rows. Hand-computed slices at TP 2 and 4, the released and transformers 4.57
 * name layouts byte for byte, int8 / fp8 layouts, coverage over TP 1..8, the three config
 * classes' defaults, the tie, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0f12ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* text: hid 64, H 8 (d 8), KV 2, I 128, V 1000 (+ 8), 3 layers, layer 1 cross-attention;
 * vision: width 32, 8 heads, MLP 64, 2 local + 2 global layers, 3 channels, patch 2, image 4
 * (4 patches + the class token = 5 positions), 2 tiles, 3 aspect ratios (4 rows),
 * vision_output_dim 64 */
#define HID 64
#define HD  8
#define VE  32
#define VI  64
#define VOD 64
#define TXT                                                                                        \
	"\"model_type\":\"mllama_text_model\",\"hidden_size\":64,\"num_attention_heads\":8,"       \
	"\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":1000,"                 \
	"\"num_hidden_layers\":3"
#define XL "\"cross_attention_layers\":[1]"
#define VIS                                                                                        \
	"\"hidden_size\":32,\"intermediate_size\":64,\"num_hidden_layers\":2,\"num_channels\":3,"  \
	"\"image_size\":4,\"patch_size\":2,\"vision_output_dim\":64,\"max_num_tiles\":2"
#define VIS2                                                                                       \
	",\"num_global_layers\":2,\"attention_heads\":8,\"supported_aspect_ratios\":[[1,1],[1,2]," \
	"[2,1]]"
#define ML_HEAD "{\"architectures\":[\"MllamaForConditionalGeneration\"],\"model_type\":\"mllama\""
/* top: top-level keys; text: text_config's after TXT; vis: vision_config's after VIS */
#define ML_CFG3(top, text, vis)                                                                    \
	ML_HEAD top ",\"text_config\":{" TXT text "},\"vision_config\":{" VIS vis "}}"
#define ML_CFG(top, text) ML_CFG3(top, "," XL text, VIS2)
#define LM                "language_model.model."
#define HEAD              "language_model.lm_head.weight"
#define EMB               LM "embed_tokens.weight"
#define L0                LM "layers.0."
#define L1                LM "layers.1."
#define SQKV              L0 "self_attn.qkv_proj.weight"
#define XQKV              L1 "cross_attn.qkv_proj.weight"
#define V                 "vision_model."
#define PE                V "patch_embedding.weight"
#define VL1               V "transformer.layers.1."
#define VG1               V "global_transformer.layers.1."
#define MMP               "multi_modal_projector."

/* released names (LAY_V450) or transformers 4.57's modules (LAY_HF5) */
static void add_n(tm_model *m, lay y, const char *name, int64_t a, int64_t b)
{
	char n[200];
	bool hf = y == LAY_HF5;
	if (strncmp(name, "language_model.lm_head.", 23) == 0 && hf)
		snprintf(n, sizeof(n), "%s", name + 15);
	else if (strncmp(name, LM, sizeof(LM) - 1) == 0 && hf)
		snprintf(n, sizeof(n), "model.language_model.%s", name + sizeof(LM) - 1);
	else
		snprintf(n, sizeof(n), "%s%s",
		         hf && strncmp(name, "language_model.", 15) != 0 ? "model." : "", name);
	tm_add2(m, n, a, b);
}

/* one vision encoder layer under prefix p (gated: the global ones' gates) */
static void add_vlayer(tm_model *m, lay y, const char *p, bool gated)
{
	static const struct {
		const char *leaf;
		int64_t a, b;
	} t[] = {
	    {"self_attn.q_proj.weight", VE, VE},
	    {"self_attn.k_proj.weight", VE, VE},
	    {"self_attn.v_proj.weight", VE, VE},
	    {"self_attn.o_proj.weight", VE, VE},
	    {"mlp.fc1.weight", VI, VE},
	    {"mlp.fc1.bias", VI, 0},
	    {"mlp.fc2.weight", VE, VI},
	    {"mlp.fc2.bias", VE, 0},
	    {"input_layernorm.weight", VE, 0},
	    {"input_layernorm.bias", VE, 0},
	    {"post_attention_layernorm.weight", VE, 0},
	    {"post_attention_layernorm.bias", VE, 0},
	};
	char n[160];
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		snprintf(n, sizeof(n), "%s%s", p, t[k].leaf);
		add_n(m, y, n, t[k].a, t[k].b);
	}
	for (int g = 0; gated && g < 2; g++) {
		snprintf(n, sizeof(n), "%s%s", p, g ? "gate_ffn" : "gate_attn");
		add_n(m, y, n, 1, 0);
	}
}

/* the text layers: cross-attention at layer 1 (cross), else every layer self-attention */
static void add_text(tm_model *m, lay y, bool cross, bool head)
{
	add_n(m, y, EMB, 1008, HID);
	add_n(m, y, LM "norm.weight", HID, 0);
	if (head)
		add_n(m, y, HEAD, 1000, HID);
	for (int i = 0; i < 3; i++) {
		bool x = cross && i == 1;
		const char *a = x ? "cross_attn." : "self_attn.";
		char n[160];
		static const char *const qkvo[] = {"q_proj", "k_proj", "v_proj", "o_proj"};
		static const int64_t rows[] = {HID, 16, 16, HID}, cols[] = {HID, HID, HID, HID};
		for (int k = 0; k < 4; k++) {
			snprintf(n, sizeof(n), LM "layers.%d.%s%s.weight", i, a, qkvo[k]);
			add_n(m, y, n, rows[k], cols[k]);
		}
		static const struct {
			const char *leaf;
			int64_t a, b;
			bool cross_only;
		} t[] = {
		    {"input_layernorm.weight", HID, 0, false},
		    {"post_attention_layernorm.weight", HID, 0, false},
		    {"mlp.gate_proj.weight", 128, HID, false},
		    {"mlp.up_proj.weight", 128, HID, false},
		    {"mlp.down_proj.weight", HID, 128, false},
		    {"cross_attn.q_norm.weight", HD, 0, true},
		    {"cross_attn.k_norm.weight", HD, 0, true},
		    {"cross_attn_attn_gate", 1, 0, true},
		    {"cross_attn_mlp_gate", 1, 0, true},
		};
		for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
			if (t[k].cross_only && !x)
				continue;
			snprintf(n, sizeof(n), LM "layers.%d.%s", i, t[k].leaf);
			add_n(m, y, n, t[k].a, t[k].b);
		}
	}
}

/* The model in layout y; cross: layer 1's cross-attention; head: lm_head; nglob: global
 * vision layers. */
static tm_model *tm_ml(lay y, bool cross, bool head, int nglob)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_text(m, y, cross, head);
	/* the Conv2d patch embedding [VE, 3, 2, 2] */
	tm_add(m, y == LAY_HF5 ? "model." PE : PE, WT_DTYPE_INVALID, 3, VE, 3 * 2, 2);
	m->d[m->n - 1].ndim = 4;
	m->d[m->n - 1].shape[1] = 3;
	m->d[m->n - 1].shape[2] = 2;
	m->d[m->n - 1].shape[3] = 2;
	add_n(m, y, V "class_embedding", VE, 0);
	add_n(m, y, V "gated_positional_embedding.embedding", 5, VE);
	add_n(m, y, V "gated_positional_embedding.gate", 1, 0);
	add_n(m, y, V "gated_positional_embedding.tile_embedding.weight", 4, 2 * 5 * VE);
	add_n(m, y, V "pre_tile_positional_embedding.embedding.weight", 4, 2 * VE);
	add_n(m, y, V "pre_tile_positional_embedding.gate", 1, 0);
	add_n(m, y, V "post_tile_positional_embedding.embedding.weight", 4, 2 * VE);
	add_n(m, y, V "post_tile_positional_embedding.gate", 1, 0);
	add_n(m, y, V "layernorm_pre.weight", VE, 0);
	add_n(m, y, V "layernorm_pre.bias", VE, 0);
	add_n(m, y, V "layernorm_post.weight", VE, 0);
	add_n(m, y, V "layernorm_post.bias", VE, 0);
	char p[96];
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), V "transformer.layers.%d.", i);
		add_vlayer(m, y, p, false);
	}
	for (int i = 0; i < nglob; i++) {
		snprintf(p, sizeof(p), V "global_transformer.layers.%d.", i);
		add_vlayer(m, y, p, true);
	}
	add_n(m, y, MMP "weight", HID, VOD);
	add_n(m, y, MMP "bias", HID, 0);
	return m;
}

/* Rank r of T holds [q_r; k_r; v_r] of module prefix a (H heads, KV kv heads of d rows):
 * q heads [r*H/T, ...), kv heads replicated when T > KV. */
static void qkv_is(const fx *f, uint32_t r, uint32_t T, const char *a, int64_t H, int64_t KV,
                   int64_t d)
{
	char rt[160], q[160], k[160], v[160];
	snprintf(rt, sizeof(rt), "%sqkv_proj.weight", a);
	snprintf(q, sizeof(q), "%sq_proj.weight", a);
	snprintf(k, sizeof(k), "%sk_proj.weight", a);
	snprintf(v, sizeof(v), "%sv_proj.weight", a);
	int64_t hl = H / T, kvl = KV >= T ? KV / T : 1, kvs = KV >= T ? r : r / (T / KV);
	shp(f, r, rt, 2, (hl + 2 * kvl) * d, f->m->d[tm_find(f->m, q)].shape[1], 0);
	rows_at(f, r, rt, 0, q, r * hl * d, hl * d);
	rows_at(f, r, rt, hl * d, k, kvs * kvl * d, kvl * d);
	rows_at(f, r, rt, (hl + kvl) * d, v, kvs * kvl * d, kvl * d);
}

/* a vision layer's cut at rank r of T (prefix p) */
static void vlayer_is(const fx *f, uint32_t r, uint32_t T, const char *p)
{
	char a[96], w[160];
	snprintf(a, sizeof(a), "%sself_attn.", p);
	qkv_is(f, r, T, a, 8, 8, VE / 8);
	snprintf(w, sizeof(w), "%so_proj.weight", a);
	cols_of(f, r, T, w, w, VE, VE);
	snprintf(w, sizeof(w), "%smlp.fc1.weight", p);
	rows_are(f, r, w, 0, w, r * VI / T, VI / T);
	snprintf(w, sizeof(w), "%smlp.fc1.bias", p);
	shp(f, r, w, 1, VI / T, 0, 0);
	rows_are(f, r, w, 0, w, r * VI / T, VI / T);
	snprintf(w, sizeof(w), "%smlp.fc2.weight", p);
	cols_of(f, r, T, w, w, VE, VI);
	snprintf(w, sizeof(w), "%smlp.fc2.bias", p);
	repl(f, r, w);
	snprintf(w, sizeof(w), "%spost_attention_layernorm.bias", p);
	repl(f, r, w);
}

/* The text and vision cuts every layout shares at rank r of T. */
static void cut_is(const fx *f, uint32_t r, uint32_t T)
{
	qkv_is(f, r, T, L0 "self_attn.", 8, 2, HD);
	qkv_is(f, r, T, L1 "cross_attn.", 8, 2, HD);
	cols_of(f, r, T, L1 "cross_attn.o_proj.weight", L1 "cross_attn.o_proj.weight", HID, HID);
	cols_of(f, r, T, L0 "self_attn.o_proj.weight", L0 "self_attn.o_proj.weight", HID, HID);
	repl(f, r, L1 "cross_attn.q_norm.weight");
	repl(f, r, L1 "cross_attn.k_norm.weight");
	repl(f, r, L1 "cross_attn_attn_gate");
	repl(f, r, L1 "cross_attn_mlp_gate");
	repl(f, r, L1 "input_layernorm.weight");
	rows_at(f, r, L1 "mlp.gate_up_proj.weight", 0, L1 "mlp.gate_proj.weight", r * 128 / T,
	        128 / T);
	rows_at(f, r, L1 "mlp.gate_up_proj.weight", 128 / T, L1 "mlp.up_proj.weight", r * 128 / T,
	        128 / T);
	cols_of(f, r, T, L1 "mlp.down_proj.weight", L1 "mlp.down_proj.weight", HID, 128);
	assert_true(tm_ix(f->p, r, L1 "self_attn.qkv_proj.weight") < 0);
	/* the patch embedding: output channels, kept 4-D */
	const sm_out_info *pe = info(f, r, PE);
	assert_int_equal(pe->ndim, 4);
	assert_int_equal(pe->shape[0], VE / T);
	assert_int_equal(pe->shape[1], 3);
	assert_int_equal(pe->shape[3], 2);
	rows_are(f, r, PE, 0, PE, r * VE / T * 6, VE / T * 6); /* 6 rows of 2 a channel */
	vlayer_is(f, r, T, VL1);
	vlayer_is(f, r, T, VG1);
	repl(f, r, VG1 "gate_attn");
	repl(f, r, VG1 "gate_ffn");
	repl(f, r, V "class_embedding");
	repl(f, r, V "gated_positional_embedding.embedding");
	repl(f, r, V "gated_positional_embedding.gate");
	repl(f, r, V "gated_positional_embedding.tile_embedding.weight");
	repl(f, r, V "pre_tile_positional_embedding.embedding.weight");
	repl(f, r, V "post_tile_positional_embedding.gate");
	repl(f, r, V "layernorm_post.bias");
	shp(f, r, MMP "weight", 2, HID / T, VOD, 0);
	rows_are(f, r, MMP "weight", 0, MMP "weight", r * HID / T, HID / T);
	rows_are(f, r, MMP "bias", 0, MMP "bias", r * HID / T, HID / T);
}

static void test_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_ml(LAY_V450, true, true, 2), ML_CFG("", ""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "mllama");
	for (uint32_t r = 0; r < 2; r++)
		cut_is(&f, r, 2);
	/* embed_tokens: 1008 rows padded to 1024, rank 1 rows [512, 1008) then zeros; lm_head:
	 * 1000 rows, rank 1 rows [512, 1000) */
	shp(&f, 1, EMB, 2, 512, HID, 0);
	rows_are(&f, 1, EMB, 0, EMB, 512, 496);
	static const uint8_t zero[24 * HID * 2];
	assert_memory_equal(out_bytes(&f, 1, EMB) + 496 * HID * 2, zero, 16 * HID * 2);
	shp(&f, 1, HEAD, 2, 512, HID, 0);
	rows_are(&f, 1, HEAD, 0, HEAD, 512, 488);
	assert_memory_equal(out_bytes(&f, 1, HEAD) + 488 * HID * 2, zero, 24 * HID * 2);
	/* text 3 + 2 x 6 + 10, vision 13 + 2 x 10 + 2 x 12, projector 2 */
	assert_int_equal(shardmap_rank_n_tensors(f.p, 0),
	                 3 + 2 * 6 + 10 + 13 + 2 * 10 + 2 * 12 + 2);
	fx_close(&f);
}

/* TP 4: two heads a rank, one kv head each pair of ranks (KV 2 < T 4); 1008 rows pad to
 * 1024 again: rank 3 rows [768, 1008). */
static void test_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_ml(LAY_V450, true, true, 2), ML_CFG("", ""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		cut_is(&f, r, 4);
	rows_are(&f, 3, EMB, 0, EMB, 768, 240);
	rows_are(&f, 3, HEAD, 0, HEAD, 768, 232);
	fx_close(&f);
}

/* transformers 4.57's module names (model.language_model.*, model.vision_model.*,
 * model.multi_modal_projector.*, lm_head.*) give the released layout's runtime names and
 * bytes. */
static void test_layouts(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T += 2) {
		fx a, b;
		fx_open(&a, tm_ml(LAY_V450, true, true, 2), ML_CFG("", ""), T, 1, 0, true);
		fx_open(&b, tm_ml(LAY_HF5, true, true, 2), ML_CFG("", ""), T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++)
			fx_same_rank(&a, &b, r, NULL);
		fx_close(&a);
		fx_close(&b);
	}
}

/* int8-channel TP 2: the Linear weights vLLM builds with the quantization config (self and
 * cross q/k/v/o, the MLPs, the vision layers' q/k/v/o and fc1 / fc2, the projector) I8; the
 * patch embedding (built without it), embeddings, norms, gates, biases BF16. fp8-channel TP 4
 * alike. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, tm_ml(LAY_HF5, true, true, 2), ML_CFG("", ""), &l, true);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, MMP "weight");
	const float *sc = (const float *)out_bytes(&f, 1, MMP "weight_scale");
	shp(&f, 1, MMP "weight_scale", 2, HID / 2, 1, 0);
	for (int64_t row = 0; row < HID / 2; row++) {
		size_t rowb;
		const uint16_t *x =
		    (const uint16_t *)src_rows(&f, "model." MMP "weight", HID / 2 + row, &rowb);
		int8_row_is(q + row * VOD, sc[row], x, VOD);
	}
	static const char *const keep[] = {EMB,
	                                   HEAD,
	                                   PE,
	                                   MMP "bias",
	                                   L1 "cross_attn.q_norm.weight",
	                                   L1 "cross_attn_attn_gate",
	                                   VL1 "mlp.fc1.bias",
	                                   VG1 "gate_ffn",
	                                   V "gated_positional_embedding.tile_embedding.weight",
	                                   V "class_embedding"};
	static const char *const q8[] = {SQKV,
	                                 XQKV,
	                                 L1 "cross_attn.o_proj.weight",
	                                 L1 "mlp.gate_up_proj.weight",
	                                 L1 "mlp.down_proj.weight",
	                                 VL1 "self_attn.qkv_proj.weight",
	                                 VG1 "self_attn.o_proj.weight",
	                                 VG1 "mlp.fc1.weight",
	                                 VL1 "mlp.fc2.weight",
	                                 MMP "weight"};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, tm_ml(LAY_V450, true, true, 2), ML_CFG("", ""), &l, true);
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(info(&f, r, XQKV)->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, VG1 "mlp.fc2.weight")->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, PE)->dtype, WT_BF16);
		assert_int_equal(info(&f, r, L1 "cross_attn_mlp_gate")->dtype, WT_BF16);
		shp(&f, r, XQKV, 2, (2 + 2) * HD, HID, 0);
	}
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_ml(LAY_V450, true, true, 2), ML_CFG("", ""), 2, lays,
	         sizeof(lays) / sizeof(lays[0]));
	coverage(tm_ml(LAY_HF5, true, true, 2), ML_CFG("", ""), 2, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* MllamaVisionConfig's / MllamaTextConfig's defaults for absent keys, the tie from text_config
 * alone (MllamaConfig's top level says true by default, the model loads untied). */
static void test_defaults(void **state)
{
	(void)state;
	/* the top level's tie is not the model's */
	fx a;
	fx_open(&a, tm_ml(LAY_V450, true, true, 2), ML_CFG(",\"tie_word_embeddings\":true", ""), 2,
	        1, 0, true);
	rows_are(&a, 1, HEAD, 0, HEAD, 512, 488);
	fx_close(&a);
	fx_refused(tm_ml(LAY_V450, true, false, 2), ML_CFG(",\"tie_word_embeddings\":true", ""),
	           WT_ENOTFOUND, HEAD, "missing");
	/* cross_attention_layers [3, 8, ..., 38] when absent: no cross-attention layer of 3 */
	fx_refused(tm_ml(LAY_V450, true, true, 2), ML_CFG3("", "", VIS2), WT_EUNSUPPORTED,
	           "cross_attn", "a self-attention layer (see text_config.cross_attention_layers)");
	fx_open(&a, tm_ml(LAY_V450, false, true, 2), ML_CFG3("", "", VIS2), 2, 1, 0, true);
	qkv_is(&a, 1, 2, L1 "self_attn.", 8, 2, HD);
	fx_close(&a);
	/* MllamaTextConfig's intermediate_size 14336 */
	fx_refused(tm_ml(LAY_V450, true, true, 2),
	           ML_HEAD ",\"text_config\":{\"hidden_size\":64,\"num_attention_heads\":8,"
	                   "\"num_key_value_heads\":2,\"vocab_size\":1000,\"num_hidden_layers\":3,"
	                   "\"cross_attention_layers\":[1]},\"vision_config\":{" VIS VIS2 "}}",
	           WT_ESHAPE, "14336", "fix config.json");
	/* MllamaVisionConfig's num_global_layers 8: layers 2.. missing */
	fx_refused(
	    tm_ml(LAY_V450, true, true, 2),
	    ML_CFG3("", "," XL,
	            ",\"attention_heads\":8,\"supported_aspect_ratios\":[[1,1],[1,2],[2,1]]"),
	    WT_ENOTFOUND, "global_transformer.layers.2.", "missing");
	/* its 8 supported_aspect_ratios (9 tile-embedding rows) with max_num_tiles 4 */
	fx_refused(tm_ml(LAY_V450, true, true, 2),
	           ML_HEAD ",\"text_config\":{" TXT "," XL "},\"vision_config\":{"
	                   "\"hidden_size\":32,\"intermediate_size\":64,\"num_hidden_layers\":2,"
	                   "\"image_size\":4,\"patch_size\":2,\"vision_output_dim\":64,"
	                   "\"num_global_layers\":2,\"attention_heads\":8}}",
	           WT_ESHAPE, "tile_embedding", "[9, 640]");
	/* image_size 448 and vision_output_dim 7680 */
	fx_refused(tm_ml(LAY_V450, true, true, 2),
	           ML_HEAD ",\"text_config\":{" TXT "," XL "},\"vision_config\":{"
	                   "\"hidden_size\":32,\"intermediate_size\":64,\"num_hidden_layers\":2,"
	                   "\"patch_size\":2,\"vision_output_dim\":64,\"max_num_tiles\":2" VIS2
	                   "}}",
	           WT_ESHAPE, "gated_positional_embedding.embedding", "[50177, 32]");
	fx_refused(tm_ml(LAY_V450, true, true, 2),
	           ML_HEAD ",\"text_config\":{" TXT "," XL "},\"vision_config\":{"
	                   "\"hidden_size\":32,\"intermediate_size\":64,\"num_hidden_layers\":2,"
	                   "\"image_size\":4,\"patch_size\":2,\"max_num_tiles\":2" VIS2 "}}",
	           WT_ESHAPE, MMP "weight", "7680");
	/* num_attention_heads (the __init__ argument) when attention_heads is absent;
	 * attention_heads wins over it */
	fx_refused(tm_ml(LAY_V450, true, true, 2),
	           ML_CFG3("", "," XL,
	                   ",\"num_global_layers\":2,\"num_attention_heads\":3,"
	                   "\"supported_aspect_ratios\":[[1,1],[1,2],[2,1]]"),
	           WT_ECORRUPT, "vision_config.attention_heads 3", "hidden_size 32");
	fx_open(&a, tm_ml(LAY_V450, true, true, 2),
	        ML_CFG3("", "," XL, VIS2 ",\"num_attention_heads\":3"), 2, 1, 0, true);
	fx_close(&a);
	/* no vision_config: every default (1280 wide) */
	fx_refused(tm_ml(LAY_V450, true, true, 2), ML_HEAD ",\"text_config\":{" TXT "," XL "}}",
	           WT_ESHAPE, MMP "weight", "7680");
}

static void test_errors(void **state)
{
	(void)state;
	fx_refused(tm_ml(LAY_V450, true, true, 2),
	           ML_HEAD ",\"hidden_size\":64,\"num_attention_heads\":8,\"vocab_size\":1000,"
	                   "\"num_hidden_layers\":3,\"vision_config\":{" VIS VIS2 "}}",
	           WT_ECORRUPT, "needs a text_config object", "cross_attention_layers");
	fx_refused(tm_ml(LAY_V450, true, false, 2), ML_CFG("", ",\"tie_word_embeddings\":true"),
	           WT_EUNSUPPORTED, "tie_word_embeddings is true", "set it false");
	fx_refused(tm_ml(LAY_V450, true, true, 2), ML_CFG("", ",\"head_dim\":16"), WT_EUNSUPPORTED,
	           "head_dim 16", "leave it out");
	fx a;
	fx_open(&a, tm_ml(LAY_V450, true, true, 2), ML_CFG("", ",\"head_dim\":8"), 2, 1, 0, true);
	fx_close(&a);
	/* a cross-attention layer's tensors where the config puts self-attention, and back */
	fx_refused(tm_ml(LAY_V450, true, true, 2),
	           ML_CFG3("", ",\"cross_attention_layers\":[2]", VIS2), WT_EUNSUPPORTED,
	           L1 "cross_attn", "a self-attention layer");
	fx_refused(tm_ml(LAY_V450, false, true, 2), ML_CFG("", ""), WT_EUNSUPPORTED, L1 "self_attn",
	           "a cross-attention layer");
	/* more layers than the config's */
	fx_refused(tm_ml(LAY_V450, true, true, 2),
	           ML_CFG3("", "," XL,
	                   ",\"num_global_layers\":1,\"attention_heads\":8,"
	                   "\"supported_aspect_ratios\":[[1,1],[1,2],[2,1]]"),
	           WT_ESHAPE, "global vision layer 1", "vision_config.num_global_layers is 1");
	tm_model *m = tm_ml(LAY_V450, true, true, 2);
	tm_add2(m, V "transformer.layers.2.mlp.fc2.bias", VE, 0);
	fx_refused(m, ML_CFG("", ""), WT_ESHAPE, "vision block 2",
	           "vision_config.num_hidden_layers is 2");
	/* no bias on q_proj (transformers builds none) */
	m = tm_ml(LAY_V450, true, true, 2);
	tm_add2(m, VL1 "self_attn.q_proj.bias", VE, 0);
	fx_refused(m, ML_CFG("", ""), WT_EUNSUPPORTED, VL1 "self_attn.q_proj.bias", "mllama");
	m = tm_ml(LAY_HF5, true, true, 2);
	tm_remove(m, "model." V "global_transformer.layers.0.gate_attn");
	fx_refused(m, ML_CFG("", ""), WT_ENOTFOUND, V "global_transformer.layers.0.gate_attn",
	           "missing");
	/* the vision config */
	fx_refused(tm_ml(LAY_V450, true, true, 2),
	           ML_CFG3("", "," XL, ",\"num_global_layers\":2,\"attention_heads\":8"),
	           WT_ECORRUPT, "max_num_tiles 2 without supported_aspect_ratios",
	           "give the ratios");
	fx_refused(tm_ml(LAY_V450, true, true, 2),
	           ML_CFG3("", "," XL,
	                   ",\"num_global_layers\":2,\"attention_heads\":8,"
	                   "\"supported_aspect_ratios\":7"),
	           WT_ECORRUPT, "supported_aspect_ratios", "not a non-empty array");
	fx_refused(tm_ml(LAY_V450, true, true, 2),
	           ML_HEAD ",\"text_config\":{" TXT "," XL "},\"vision_config\":{"
	                   "\"hidden_size\":32,\"intermediate_size\":64,\"num_hidden_layers\":2,"
	                   "\"image_size\":1,\"patch_size\":2,\"vision_output_dim\":64,"
	                   "\"max_num_tiles\":2" VIS2 "}}",
	           WT_ECORRUPT, "image_size 1", "below patch_size 2");
	fx_refused(tm_ml(LAY_V450, true, true, 2),
	           ML_HEAD ",\"text_config\":{" TXT "," XL "},\"vision_config\":{"
	                   "\"hidden_size\":32,\"intermediate_size\":64,\"num_hidden_layers\":2,"
	                   "\"image_size\":8192,\"patch_size\":1,\"vision_output_dim\":64,"
	                   "\"max_num_tiles\":2" VIS2 "}}",
	           WT_ECORRUPT, "max_num_tiles x hidden_size", "");
	fx_refused(tm_ml(LAY_V450, true, true, 2),
	           ML_HEAD ",\"text_config\":{" TXT "," XL "},\"vision_config\":[]}", WT_ECORRUPT,
	           "'vision_config' is not an object", "");
	/* layouts: TP 3 divides nothing; TP 16 not the 8 heads */
	fx_refused_tp(tm_ml(LAY_V450, true, true, 2), ML_CFG("", ""), 3, WT_ELAYOUT, "", "");
	fx_refused_tp(tm_ml(LAY_V450, true, true, 2), ML_CFG("", ""), 16, WT_ELAYOUT, "", "");
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
