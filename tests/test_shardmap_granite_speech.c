/*
 * test_shardmap_granite_speech.c — Granite Speech (GraniteSpeechForConditionalGeneration,
 * docs/format.md section 2.7): the conformer's feed-forward up_proj (weight and bias) by rows
 * and down_proj by columns, never quantized (vLLM builds the blocks without the quant
 * config); encoder.out by rows and out_mid by columns, quantized; the rest of the encoder,
 * the Q-Former projector (crossattention where cross_attention_frequency says) and
 * projector.linear whole on every rank and never quantized; BatchNorm's num_batches_tracked
 * skipped; the language model as Granite's (same bytes under `language_model.`), exact
 * bytes at TP 2 and 4, int8 codes, coverage at TP 1, 2, 4, 8, GraniteSpeechConfig's /
 * GraniteSpeechEncoderConfig's / Blip2QFormerConfig's / GraniteConfig's defaults, the tie
 * from text_config only, and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x95eeull
#include "test_shardmap_fx.h"

/* LM: hid 64, H 8, KV 2, d 8, I 128, V 128, L 1. Conformer: hidden_dim 32, feedforward_mult
 * 2, 2 heads of 8, input_dim 8, output_dim OUT, conv_expansion_factor 2, kernel 3, max_pos_emb
 * 4, 2 blocks. Q-Former: hidden 32, intermediate 48, 4 heads, 2 layers, crossattention every
 * 2nd (layer 0), window_size 4 / downsample_rate 2 = 2 queries. */
#define HID 64
#define VE  32
#define VI  64
#define GA  16
#define GC  64
#define OUT 8
#define QH  32
#define QI  48

#define LM_KEYS                                                                                    \
	"\"model_type\":\"granite\",\"hidden_size\":64,\"num_attention_heads\":8,"                 \
	"\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"                  \
	"\"num_hidden_layers\":1,\"embedding_multiplier\":12.0,\"logits_scaling\":8.0"
/* untied (GraniteConfig's default; the top level's true is not the text model's) */
static const char cfg_gs[] =
    "{\"architectures\":[\"GraniteSpeechForConditionalGeneration\"],\"model_type\":"
    "\"granite_speech\",\"tie_word_embeddings\":true,\"window_size\":4,\"downsample_rate\":2,"
    "\"text_config\":{" LM_KEYS "},"
    "\"encoder_config\":{\"input_dim\":8,\"num_layers\":2,\"hidden_dim\":32,"
    "\"feedforward_mult\":2,\"num_heads\":2,\"dim_head\":8,\"output_dim\":8,\"context_size\":4,"
    "\"max_pos_emb\":4,\"conv_kernel_size\":3,\"conv_expansion_factor\":2},"
    "\"projector_config\":{\"model_type\":\"blip_2_qformer\",\"hidden_size\":32,"
    "\"intermediate_size\":48,\"num_attention_heads\":4,\"num_hidden_layers\":2,"
    "\"cross_attention_frequency\":2,\"encoder_hidden_size\":32}}";
static const char cfg_text[] = "{\"architectures\":[\"GraniteForCausalLM\"]," LM_KEYS "}";

#define EN "encoder."
#define EB EN "layers.%d."
#define QL "projector.qformer.encoder.layer.%d."
#define LM "language_model.model."

/* split: 0 whole, 1 rows of hidden_dim x feedforward_mult, 2 its columns */
typedef struct gs_leaf {
	const char *leaf;
	int nd;
	int64_t a, b, c;
	int split;
} gs_leaf;

#define FF(f)                                                                                      \
	{f ".pre_norm.weight", 1, VE, 0, 0, 0}, {f ".pre_norm.bias", 1, VE, 0, 0, 0},              \
	    {f ".up_proj.weight", 2, VI, VE, 0, 1}, {f ".up_proj.bias", 1, VI, 0, 0, 1},           \
	    {f ".down_proj.weight", 2, VE, VI, 0, 2},                                              \
	{                                                                                          \
		f ".down_proj.bias", 1, VE, 0, 0, 0                                                \
	}
#define LN(n)                                                                                      \
	{n ".weight", 1, VE, 0, 0, 0},                                                             \
	{                                                                                          \
		n ".bias", 1, VE, 0, 0, 0                                                          \
	}

static const gs_leaf block[] = {
    FF("ff1"),
    LN("attn.pre_norm"),
    {"attn.to_q.weight", 2, GA, VE, 0, 0},
    {"attn.to_kv.weight", 2, 2 * GA, VE, 0, 0},
    {"attn.to_out.weight", 2, VE, GA, 0, 0},
    {"attn.to_out.bias", 1, VE, 0, 0, 0},
    {"attn.rel_pos_emb.weight", 2, 9, 8, 0, 0},
    LN("conv.norm"),
    {"conv.up_conv.weight", 3, 2 * GC, VE, 1, 0},
    {"conv.up_conv.bias", 1, 2 * GC, 0, 0, 0},
    {"conv.depth_conv.conv.weight", 3, GC, 1, 3, 0},
    {"conv.batch_norm.weight", 1, GC, 0, 0, 0},
    {"conv.batch_norm.bias", 1, GC, 0, 0, 0},
    {"conv.batch_norm.running_mean", 1, GC, 0, 0, 0},
    {"conv.batch_norm.running_var", 1, GC, 0, 0, 0},
    {"conv.down_conv.weight", 3, VE, GC, 1, 0},
    {"conv.down_conv.bias", 1, VE, 0, 0, 0},
    FF("ff2"),
    LN("post_norm"),
};
#define N_BLOCK (sizeof(block) / sizeof(block[0]))

/* a Q-Former attention (kv: key / value columns) */
#define QATT(a, kv)                                                                                \
	{a ".attention.query.weight", 2, QH, QH, 0, 0},                                            \
	    {a ".attention.query.bias", 1, QH, 0, 0, 0},                                           \
	    {a ".attention.key.weight", 2, QH, kv, 0, 0},                                          \
	    {a ".attention.key.bias", 1, QH, 0, 0, 0},                                             \
	    {a ".attention.value.weight", 2, QH, kv, 0, 0},                                        \
	    {a ".attention.value.bias", 1, QH, 0, 0, 0},                                           \
	    {a ".output.dense.weight", 2, QH, QH, 0, 0}, {a ".output.dense.bias", 1, QH, 0, 0, 0}, \
	    {a ".output.LayerNorm.weight", 1, QH, 0, 0, 0},                                        \
	{                                                                                          \
		a ".output.LayerNorm.bias", 1, QH, 0, 0, 0                                         \
	}
static const gs_leaf qlayer[] = {
    QATT("attention", QH),
    {"intermediate_query.dense.weight", 2, QI, QH, 0, 0},
    {"intermediate_query.dense.bias", 1, QI, 0, 0, 0},
    {"output_query.dense.weight", 2, QH, QI, 0, 0},
    {"output_query.dense.bias", 1, QH, 0, 0, 0},
    {"output_query.LayerNorm.weight", 1, QH, 0, 0, 0},
    {"output_query.LayerNorm.bias", 1, QH, 0, 0, 0},
};
static const gs_leaf qcross[] = {QATT("crossattention", VE)};

static const gs_leaf top[] = {
    {EN "input_linear.weight", 2, VE, 8, 0, 0},
    {EN "input_linear.bias", 1, VE, 0, 0, 0},
    {EN "out_mid.bias", 1, VE, 0, 0, 0},
    {"projector.query", 3, 1, 2, QH, 0},
    {"projector.qformer.layernorm.weight", 1, QH, 0, 0, 0},
    {"projector.qformer.layernorm.bias", 1, QH, 0, 0, 0},
    {"projector.linear.weight", 2, HID, QH, 0, 0},
    {"projector.linear.bias", 1, HID, 0, 0, 0},
};
#define N_TOP (sizeof(top) / sizeof(top[0]))

static void add_leaf(tm_model *m, const char *prefix, const gs_leaf *t)
{
	char b[200];
	snprintf(b, sizeof(b), "%s%s", prefix, t->leaf);
	tm_add(m, b, WT_DTYPE_INVALID, t->nd, t->a, t->b, t->c);
}

/* The Granite language model (lm_head when asked), then unless LAY_TEXT the conformer of
 * `blocks` blocks (out rows `out`), the Q-Former of `qlayers` layers (crossattention in
 * layer 0, and in every layer when cross_all) and the projector. */
static tm_model *gs_model_x(lay y, bool lm_head, int blocks, int qlayers, int64_t out,
                            bool cross_all)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
	mm_add(m, y, "model.embed_tokens.weight", 128, HID);
	mm_add(m, y, "model.norm.weight", HID, 0);
	static const fx_leaf lmt[] = {
	    {"input_layernorm.weight", HID, 0},   {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", 64, HID}, {"self_attn.k_proj.weight", 16, HID},
	    {"self_attn.v_proj.weight", 16, HID}, {"self_attn.o_proj.weight", HID, 64},
	    {"mlp.gate_proj.weight", 128, HID},   {"mlp.up_proj.weight", 128, HID},
	    {"mlp.down_proj.weight", HID, 128}};
	for (size_t k = 0; k < sizeof(lmt) / sizeof(lmt[0]); k++)
		mm_add_at(m, y, "model.layers.0.", lmt[k].leaf, lmt[k].n, lmt[k].k);
	if (lm_head)
		mm_add(m, y, "lm_head.weight", 128, HID);
	if (y == LAY_TEXT)
		return m;
	for (size_t k = 0; k < N_TOP; k++)
		add_leaf(m, "", &top[k]);
	tm_add2(m, EN "out.weight", out, VE);
	tm_add2(m, EN "out.bias", out, 0);
	tm_add2(m, EN "out_mid.weight", VE, out);
	for (int l = 0; l < blocks; l++) {
		snprintf(b, sizeof(b), EB, l);
		for (size_t k = 0; k < N_BLOCK; k++)
			add_leaf(m, b, &block[k]);
		snprintf(b, sizeof(b), EB "conv.batch_norm.num_batches_tracked", l);
		tm_add(m, b, WT_I64, 0, 0, 0, 0);
	}
	for (int l = 0; l < qlayers; l++) {
		snprintf(b, sizeof(b), QL, l);
		for (size_t k = 0; k < sizeof(qlayer) / sizeof(qlayer[0]); k++)
			add_leaf(m, b, &qlayer[k]);
		for (size_t k = 0; (l == 0 || cross_all) && k < sizeof(qcross) / sizeof(qcross[0]);
		     k++)
			add_leaf(m, b, &qcross[k]);
	}
	return m;
}

static tm_model *gs_model(lay y, bool lm_head)
{
	return gs_model_x(y, lm_head, 2, 2, OUT, false);
}

/* cfg_gs with the value at dotted path set to JSON text v (malloc'd; "" removes it). */
static char *cfg_with(const char *base, const char *path, const char *v)
{
	json_t *root = json_loads(base, 0, NULL), *o = root;
	assert_non_null(root);
	char p[128];
	snprintf(p, sizeof(p), "%s", path);
	char *dot, *key = p;
	while ((dot = strchr(key, '.')) != NULL) {
		*dot = '\0';
		o = json_object_get(o, key);
		assert_non_null(o);
		key = dot + 1;
	}
	if (*v == '\0')
		json_object_del(o, key);
	else
		assert_int_equal(json_object_set_new(o, key, json_loads(v, JSON_DECODE_ANY, NULL)),
		                 0);
	char *s = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	assert_non_null(s);
	return s;
}

static void check_whole(const fx *f, uint32_t T, uint32_t r)
{
	char n[200], p[64];
	for (int l = 0; l < 2; l++) {
		snprintf(p, sizeof(p), EB, l);
		for (size_t k = 0; k < N_BLOCK; k++) {
			const gs_leaf *t = &block[k];
			snprintf(n, sizeof(n), "%s%s", p, t->leaf);
			if (t->split == 0)
				repl(f, r, n);
			else if (t->split == 1)
				rows_at(f, r, n, 0, n, r * VI / T, VI / T);
			else
				cols_of(f, r, T, n, n, VE, VI);
		}
		snprintf(n, sizeof(n), EB "conv.up_conv.weight", l);
		shp(f, r, n, 3, 2 * GC, VE, 1);
		for (size_t k = 0; k < sizeof(qlayer) / sizeof(qlayer[0]); k++) {
			snprintf(n, sizeof(n), QL "%s", l, qlayer[k].leaf);
			repl(f, r, n);
		}
	}
	for (size_t k = 0; k < sizeof(qcross) / sizeof(qcross[0]); k++) {
		snprintf(n, sizeof(n), QL "%s", 0, qcross[k].leaf);
		repl(f, r, n);
		snprintf(n, sizeof(n), QL "%s", 1, qcross[k].leaf);
		assert_int_equal(tm_ix(f->p, r, n), -1);
	}
	for (size_t k = 0; k < N_TOP; k++)
		repl(f, r, top[k].leaf);
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	check_whole(f, T, r);
	rows_at(f, r, EN "out.weight", 0, EN "out.weight", r * OUT / T, OUT / T);
	rows_at(f, r, EN "out.bias", 0, EN "out.bias", r * OUT / T, OUT / T);
	cols_of(f, r, T, EN "out_mid.weight", EN "out_mid.weight", VE, OUT);
	const char *lq = LM "layers.0.self_attn.qkv_proj.weight";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	rows_at(f, r, lq, 0, LM "layers.0.self_attn.q_proj.weight", r * ql, ql);
	rows_at(f, r, lq, ql, LM "layers.0.self_attn.k_proj.weight", kvh * 8, 8);
	rows_at(f, r, lq, ql + 8, LM "layers.0.self_attn.v_proj.weight", kvh * 8, 8);
	cols_of(f, r, T, LM "layers.0.self_attn.o_proj.weight",
	        LM "layers.0.self_attn.o_proj.weight", HID, 64);
	rows_at(f, r, "language_model.lm_head.weight", 0, "language_model.lm_head.weight",
	        r * 128 / T, 128 / T);
	/* 2 blocks x 32 (num_batches_tracked skipped), 2 Q-Former layers x 16 + layer 0's 10
	 * crossattention tensors, the 8 above + out / out.bias / out_mid; the LM's 6 + embed,
	 * norm, lm_head */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 32 + 2 * 16 + 10 + 11 + 6 + 3);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, gs_model(LAY_V450, true), cfg_gs, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 2);
		assert_true(fx_skipped(&f, EN "layers.0.conv.batch_norm.num_batches_tracked"));
		assert_true(fx_skipped(&f, EN "layers.1.conv.batch_norm.num_batches_tracked"));
		fx_close(&f);
	}
}

/* The language model is GraniteForCausalLM's under language_model., byte for byte. */
static void test_text(void **state)
{
	(void)state;
	fx_same_layouts(gs_model(LAY_V450, true), NULL, cfg_gs, gs_model(LAY_TEXT, true), cfg_text,
	                2, 1, "language_model.");
}

/* int8-channel TP 2: the LM and encoder.out / out_mid quantized (out's codes checked row by
 * row); the feed-forwards, the rest of the encoder and the projector BF16, without scales. */
static void test_int8(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, gs_model(LAY_V450, true), cfg_gs, &l, true);
	static const char *const keep[] = {
	    EN "layers.1.ff1.up_proj.weight",
	    EN "layers.0.ff2.down_proj.weight",
	    EN "layers.0.attn.to_kv.weight",
	    EN "layers.1.conv.up_conv.weight",
	    EN "input_linear.weight",
	    EN "out.bias",
	    "projector.linear.weight",
	    "projector.qformer.encoder.layer.0.crossattention."
	    "attention.key.weight",
	    "projector.qformer.encoder.layer.1.intermediate_query.dense.weight",
	    LM "embed_tokens.weight"};
	static const char *const q8[] = {EN "out.weight", EN "out_mid.weight",
	                                 LM "layers.0.mlp.gate_up_proj.weight",
	                                 LM "layers.0.self_attn.qkv_proj.weight"};
	for (uint32_t r = 0; r < 2; r++) {
		fx_quant_split(&f, r, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
		               sizeof(q8) / sizeof(q8[0]));
		rows_at(&f, r, EN "layers.1.ff1.up_proj.weight", 0,
		        EN "layers.1.ff1.up_proj.weight", r * VI / 2, VI / 2);
		repl(&f, r, "projector.linear.weight");
		shp(&f, r, EN "out.weight_scale", 2, OUT / 2, 1, 0);
		shp(&f, r, EN "out_mid.weight_scale", 2, VE, 1, 0);
		const int8_t *q = (const int8_t *)out_bytes(&f, r, EN "out.weight");
		const float *s = (const float *)out_bytes(&f, r, EN "out.weight_scale");
		size_t rowb;
		const uint16_t *x =
		    (const uint16_t *)src_rows(&f, EN "out.weight", r * OUT / 2, &rowb);
		for (int64_t row = 0; row < OUT / 2; row++)
			int8_row_is(q + row * VE, s[row], x + row * VE, VE);
	}
	fx_close(&f);
	/* fp8-channel TP 4: the same split */
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, gs_model(LAY_V450, true), cfg_gs, &l, false);
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(info(&f, r, EN "out_mid.weight")->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, EN "layers.0.ff2.up_proj.weight")->dtype, WT_BF16);
		assert_int_equal(tm_ix(f.p, r, EN "layers.0.ff2.up_proj.weight_scale"), -1);
	}
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(gs_model(LAY_V450, true), cfg_gs, 2, lays, 4);
	char *tied = cfg_with(cfg_gs, "text_config.tie_word_embeddings", "true");
	coverage(gs_model(LAY_V450, false), tied, 2, lays, 4);
	free(tied);
}

/* GraniteSpeechEncoderConfig's, Blip2QFormerConfig's and GraniteSpeechConfig's defaults,
 * text_config a granite one with GraniteConfig's defaults for keys left out, the tie from
 * text_config alone. */
static void test_defaults(void **state)
{
	(void)state;
	static const char cls[] =
	    "{\"architectures\":[\"GraniteSpeechForConditionalGeneration\"],\"model_type\":"
	    "\"granite_speech\",\"tie_word_embeddings\":true,\"text_config\":{\"vocab_size\":"
	    "49160},\"projector_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.gs_in == 160 && c.gs_layers == 10 && c.gs_hidden == 1024 &&
	            c.gs_ff_mult == 4 && c.gs_heads == 8 && c.gs_dim_head == 128 &&
	            c.gs_out == 42 && c.gs_ctx == 200 && c.gs_max_pos == 512 && c.gs_kernel == 15 &&
	            c.gs_conv_exp == 2);
	assert_true(c.qf_hidden == 768 && c.qf_layers == 12 && c.qf_heads == 12 &&
	            c.qf_inter == 3072 && c.qf_cross == 2 && c.qf_enc == 1408 && !c.qf_text &&
	            c.qf_abs && strcmp(c.qf_model, "blip_2_qformer") == 0);
	assert_true(c.gs_window == 15 && c.gs_downsample == 5 &&
	            strcmp(c.lm_model_type, "granite") == 0);
	assert_true(c.vocab_size == 49160 && c.hidden_size == 4096 && c.num_attention_heads == 32 &&
	            c.intermediate_size == 11008 && c.num_hidden_layers == 32 && !c.tie_given);
	ckpt_config_clear(&c);
	/* untied whatever the top level says: lm_head needed */
	fx_refused(gs_model(LAY_V450, false), cfg_gs, WT_ENOTFOUND, "lm_head.weight", "");
	/* tied by text_config: lm_head may be absent, and one present is dropped */
	char *tied = cfg_with(cfg_gs, "text_config.tie_word_embeddings", "true");
	fx f;
	fx_open(&f, gs_model(LAY_V450, false), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
	fx_open(&f, gs_model(LAY_V450, true), tied, 2, 1, 0, false);
	assert_true(fx_skipped(&f, "language_model.lm_head.weight"));
	fx_close(&f);
	free(tied);
	/* cross_attention_frequency 1: every layer's crossattention required */
	char *every = cfg_with(cfg_gs, "projector_config.cross_attention_frequency", "1");
	fx_open(&f, gs_model_x(LAY_V450, true, 2, 2, OUT, true), every, 2, 1, 0, false);
	assert_true(tm_ix(f.p, 1,
	                  "projector.qformer.encoder.layer.1.crossattention.output.dense."
	                  "weight") >= 0);
	fx_close(&f);
	fx_refused(gs_model(LAY_V450, true), every, WT_ENOTFOUND,
	           "layer.1.crossattention.attention.query.weight", "");
	free(every);
}

/* cfg_gs with path set to v refused with code, the message naming a */
static void refused_cfg(const char *path, const char *v, int code, const char *a)
{
	char *cfg = cfg_with(cfg_gs, path, v);
	fx_refused(gs_model(LAY_V450, true), cfg, code, a, "");
	free(cfg);
}

/* a model with tensor name replaced by one of shape [a, b] refused with code */
static void refused_shape(const char *name, int64_t a, int64_t b)
{
	tm_model *m = gs_model(LAY_V450, true);
	tm_remove(m, name);
	tm_add2(m, name, a, b);
	fx_refused(m, cfg_gs, WT_ESHAPE, name, "");
}

static void test_errors(void **state)
{
	(void)state;
	/* a tensor missing, of another shape, past the counts, unknown */
	tm_model *m = gs_model(LAY_V450, true);
	tm_remove(m, EN "layers.1.conv.batch_norm.running_var");
	fx_refused(m, cfg_gs, WT_ENOTFOUND, EN "layers.1.conv.batch_norm.running_var", "");
	refused_shape(EN "layers.0.attn.to_kv.weight", GA, VE);
	refused_shape(EN "layers.0.attn.rel_pos_emb.weight", 8, 8);
	refused_shape(EN "layers.1.ff2.up_proj.weight", VI * 2, VE);
	refused_shape(EN "out.weight", OUT + 1, VE);
	refused_shape("projector.linear.weight", HID, VE * 2);
	m = gs_model(LAY_V450, true);
	tm_remove(m, EN "layers.0.conv.depth_conv.conv.weight");
	tm_add(m, EN "layers.0.conv.depth_conv.conv.weight", WT_DTYPE_INVALID, 3, GC, 1, 5);
	fx_refused(m, cfg_gs, WT_ESHAPE, "depth_conv", "");
	m = gs_model(LAY_V450, true);
	tm_remove(m, "projector.query");
	tm_add(m, "projector.query", WT_DTYPE_INVALID, 3, 1, 3, QH);
	fx_refused(m, cfg_gs, WT_ESHAPE, "projector.query", "");
	fx_refused(gs_model_x(LAY_V450, true, 3, 2, OUT, false), cfg_gs, WT_ESHAPE,
	           "encoder block 2", "encoder_config.num_layers is 2");
	fx_refused(gs_model_x(LAY_V450, true, 2, 3, OUT, false), cfg_gs, WT_ESHAPE,
	           "Q-Former layer 2", "projector_config.num_hidden_layers is 2");
	fx_refused(gs_model_x(LAY_V450, true, 2, 2, OUT, true), cfg_gs, WT_EUNSUPPORTED,
	           "layer.1.crossattention", "cross_attention_frequency 2");
	m = gs_model(LAY_V450, true);
	tm_add2(m, EN "layers.0.attn.to_k.weight", GA, VE);
	fx_refused(m, cfg_gs, WT_EUNSUPPORTED, EN "layers.0.attn.to_k.weight", "unknown");
	/* output_dim 42 (GraniteSpeechEncoderConfig's default) at TP 4 */
	char *o42 = cfg_with(cfg_gs, "encoder_config.output_dim", "42");
	fx_refused_tp(gs_model_x(LAY_V450, true, 2, 2, 42, false), o42, 4, WT_ELAYOUT, EN "out.",
	              "does not divide encoder_config.output_dim 42");
	free(o42);
	/* the config's refusals */
	refused_cfg("text_config.model_type", "\"llama\"", WT_EUNSUPPORTED,
	            "text_config.model_type 'llama'");
	static const char notext[] =
	    "{\"architectures\":[\"GraniteSpeechForConditionalGeneration\"],\"model_type\":"
	    "\"granite_speech\",\"hidden_size\":64,\"num_attention_heads\":8,\"num_key_value_"
	    "heads\":2,"
	    "\"intermediate_size\":128,\"vocab_size\":128,\"num_hidden_layers\":1}";
	fx_refused(gs_model(LAY_V450, true), notext, WT_ECORRUPT, "needs a text_config", "");
	refused_cfg("projector_config.model_type", "\"bert\"", WT_EUNSUPPORTED,
	            "projector_config.model_type 'bert'");
	refused_cfg("projector_config.use_qformer_text_input", "true", WT_EUNSUPPORTED,
	            "use_qformer_text_input");
	refused_cfg("projector_config.position_embedding_type", "\"relative_key\"", WT_EUNSUPPORTED,
	            "position_embedding_type");
	refused_cfg("projector_config.num_attention_heads", "5", WT_ECORRUPT,
	            "num_attention_heads 5 does not divide hidden_size 32");
	refused_cfg("encoder_config.context_size", "5", WT_ECORRUPT, "context_size 5");
	refused_cfg("window_size", "1", WT_ECORRUPT, "window_size 1");
	refused_cfg("projector_config.encoder_hidden_size", "64", WT_ECORRUPT,
	            "encoder_hidden_size 64");
	refused_cfg("encoder_config.hidden_dim", "0", WT_ECORRUPT, "encoder_config");
	refused_cfg("projector_config.num_hidden_layers", "-1", WT_ECORRUPT, "projector_config");
	refused_cfg("encoder_config.dim_head", "1099511627776", WT_ECORRUPT, "not a model's");
	refused_cfg("encoder_config", "[1]", WT_ECORRUPT, "'encoder_config' is not an object");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices), cmocka_unit_test(test_text),
	    cmocka_unit_test(test_int8),        cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_defaults),    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
