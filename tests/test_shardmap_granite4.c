/*
 * test_shardmap_granite4.c — Granite 4.0 (GraniteMoeHybridForCausalLM, granitemoehybrid):
 * Mamba2 layers cut as vLLM's MambaMixer2 loads them (in_proj's z / x / B / C / dt segments
 * and conv1d's x / B / C channels each split, B and C whole on every rank when tp does not
 * divide the one group; A_log / D / dt_bias / the gated norm by heads; out_proj by
 * columns), Llama's attention in the layer_types' attention layers, GraniteMoE's stacked
 * experts and the shared MLP in every layer. Hand-computed slices at TP 2, TP 4 (one and
 * two groups), EP 2, TP 2 x EP 2, int8 codes, coverage over several layouts, the dense
 * all-attention variant (Granite 4.0 Micro), the bias switches, GraniteMoeHybridConfig's
 * defaults and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0040ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, L 4 (mamba, mamba, attention, mamba); attention H 4 / KV 2 / d 32; Mamba 8 heads
 * of 32 (Im 256), G groups of state 16, conv 4: in_proj [512 + 32*G + 8, 128] rows
 * z [0, 256), x [256, 512), B [512, 512 + 16G), C, dt; conv1d [256 + 32*G, 1, 4]; 4
 * experts of 64 stacked, a shared MLP of 96; V 1003, tied */
#define HID 128
#define G4_BASE0                                                                                   \
	"\"architectures\":[\"GraniteMoeHybridForCausalLM\"],\"model_type\":\"granitemoehybrid\"," \
	"\"hidden_size\":128,\"num_attention_heads\":4,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":64,\"vocab_size\":1003,\"num_hidden_layers\":4,"                    \
	"\"tie_word_embeddings\":true,\"mamba_d_state\":16,\"mamba_d_conv\":4,"                    \
	"\"mamba_expand\":2,\"position_embedding_type\":\"nope\""
#define G4_BASE    G4_BASE0 ",\"mamba_n_heads\":8,\"mamba_d_head\":\"auto\""
#define G4_TYPES   "\"layer_types\":[\"mamba\",\"mamba\",\"attention\",\"mamba\"]"
#define G4_MOE     "\"num_local_experts\":4,\"shared_intermediate_size\":96"
#define G4_CFG(x)  "{" G4_BASE "," G4_TYPES "," G4_MOE ",\"mamba_n_groups\":1" x "}"
#define G4_OK      G4_CFG("")
#define G4_CFG2(x) "{" G4_BASE "," G4_TYPES "," G4_MOE ",\"mamba_n_groups\":2" x "}"
#define M0         "model.layers.0.mamba."
#define L2         "model.layers.2."
#define ATT2       L2 "self_attn."
#define INP        M0 "in_proj.weight"
#define CONV       M0 "conv1d.weight"
#define CONVB      M0 "conv1d.bias"
#define OUTP       M0 "out_proj.weight"
#define QKV2       ATT2 "qkv_proj.weight"
#define W13(i)     "model.layers." #i ".block_sparse_moe.experts.w13_weight"
#define W2(i)      "model.layers." #i ".block_sparse_moe.experts.w2_weight"
#define IN(i)      "model.layers." #i ".block_sparse_moe.input_linear.weight"
#define OUT(i)     "model.layers." #i ".block_sparse_moe.output_linear.weight"

/* The model's knobs: layer types ('M' mamba, 'A' attention), groups, experts (0: none),
 * shared MLP size (0: none), attention biases, conv1d bias, in_proj / out_proj biases. */
typedef struct g4_dims {
	const char *types;
	int64_t groups, experts, shared;
	int attn_bias, conv_bias, proj_bias;
} g4_dims;

static const g4_dims G4_STD = {"MMAM", 1, 4, 96, 0, 1, 0};

static void add_mamba(tm_model *m, int i, const g4_dims *o)
{
	char b[200];
	int64_t conv = 256 + 32 * o->groups;
	tm_lin_l(m, i, "mamba.in_proj.weight", 256 + conv + 8, HID, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "mamba.conv1d.weight");
	tm_add(m, b, WT_DTYPE_INVALID, 3, conv, 1, 4);
	if (o->conv_bias) {
		tm_fmt(b, sizeof(b), TM_L, i, "mamba.conv1d.bias");
		tm_add2(m, b, conv, 0);
	}
	static const char *const heads[] = {"mamba.A_log", "mamba.D", "mamba.dt_bias"};
	for (int k = 0; k < 3; k++) {
		tm_fmt(b, sizeof(b), TM_L, i, heads[k]);
		tm_add2(m, b, 8, 0);
	}
	tm_fmt(b, sizeof(b), TM_L, i, "mamba.norm.weight");
	tm_add2(m, b, 256, 0);
	tm_lin_l(m, i, "mamba.out_proj.weight", HID, 256, 0);
	if (o->proj_bias) {
		tm_fmt(b, sizeof(b), TM_L, i, "mamba.in_proj.bias");
		tm_add2(m, b, 256 + conv + 8, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "mamba.out_proj.bias");
		tm_add2(m, b, HID, 0);
	}
}

static tm_model *tm_g4_d(const g4_dims *o)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1003, HID, 0);
	char b[200];
	for (int i = 0; i < 4; i++) {
		if (o->types[i] == 'A') {
			tm_attn(m, i, 4, 2, 32, HID, o->attn_bias, 0);
			if (o->attn_bias) {
				tm_fmt(b, sizeof(b), TM_L, i, "self_attn.o_proj.bias");
				tm_add2(m, b, HID, 0);
			}
		} else {
			tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
			tm_add2(m, b, HID, 0);
			tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
			tm_add2(m, b, HID, 0);
			add_mamba(m, i, o);
		}
		if (o->experts) {
			tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.router.layer.weight");
			tm_add2(m, b, o->experts, HID);
			tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.input_linear.weight");
			tm_add(m, b, WT_DTYPE_INVALID, 3, o->experts, 128, HID);
			tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.output_linear.weight");
			tm_add(m, b, WT_DTYPE_INVALID, 3, o->experts, HID, 64);
		}
		if (o->shared) {
			tm_lin_l(m, i, "shared_mlp.input_linear.weight", 2 * o->shared, HID, 0);
			tm_lin_l(m, i, "shared_mlp.output_linear.weight", HID, o->shared, 0);
		}
	}
	return m;
}

static tm_model *tm_g4(void)
{
	return tm_g4_d(&G4_STD);
}

/* Rank r's (tp rank t's) Mamba mixer of layer 0 at TP T with G groups of 16: in_proj
 * [z_t; x_t; B; C; dt_t] (B and C whole when T does not divide G, else the rank's groups),
 * conv1d and its bias [x_t; B; C] alike, A_log / D / dt_bias and the norm by heads,
 * out_proj by columns. */
static void mamba_is(const fx *f, uint32_t r, int64_t t, int64_t T, int64_t G)
{
	int64_t gn = 16 * G, im = 256 / T, hl = 8 / T;
	bool dup = G % T != 0;
	int64_t bl = dup ? gn : gn / T, b0 = dup ? 0 : t * bl; /* the rank's B / C rows */
	shp(f, r, INP, 2, 2 * im + 2 * bl + hl, HID, 0);
	rows_at(f, r, INP, 0, INP, t * im, im);                              /* z */
	rows_at(f, r, INP, im, INP, 256 + t * im, im);                       /* x */
	rows_at(f, r, INP, 2 * im, INP, 512 + b0, bl);                       /* B */
	rows_at(f, r, INP, 2 * im + bl, INP, 512 + gn + b0, bl);             /* C */
	rows_at(f, r, INP, 2 * im + 2 * bl, INP, 512 + 2 * gn + t * hl, hl); /* dt */
	const char *conv[] = {CONV, CONVB};
	for (int k = 0; k < 2; k++) {
		if (k == 0)
			shp(f, r, CONV, 3, im + 2 * bl, 1, 4);
		else
			shp(f, r, CONVB, 1, im + 2 * bl, 0, 0);
		rows_at(f, r, conv[k], 0, conv[k], t * im, im);
		rows_at(f, r, conv[k], im, conv[k], 256 + b0, bl);
		rows_at(f, r, conv[k], im + bl, conv[k], 256 + gn + b0, bl);
	}
	rows_at(f, r, M0 "A_log", 0, M0 "A_log", t * hl, hl);
	rows_at(f, r, M0 "D", 0, M0 "D", t * hl, hl);
	rows_at(f, r, M0 "dt_bias", 0, M0 "dt_bias", t * hl, hl);
	shp(f, r, M0 "norm.weight", 1, im, 0, 0);
	rows_at(f, r, M0 "norm.weight", 0, M0 "norm.weight", t * im, im);
	shp(f, r, OUTP, 2, HID, im, 0);
	cols_at(f, r, OUTP, 0, OUTP, HID, 256, t * im, im);
}

/* Rank r's (tp rank t's) attention of layer 2 at TP T: q heads, the kv head(s) (replicated
 * when T > KV 2), o_proj columns. */
static void attn_is(const fx *f, uint32_t r, int64_t t, int64_t T)
{
	int64_t hl = 4 / T, kvl = T > 2 ? 1 : 2 / T, ks = T > 2 ? t / (T / 2) : t;
	shp(f, r, QKV2, 2, (hl + 2 * kvl) * 32, HID, 0);
	rows_at(f, r, QKV2, 0, ATT2 "q_proj.weight", t * hl * 32, hl * 32);
	rows_at(f, r, QKV2, hl * 32, ATT2 "k_proj.weight", ks * kvl * 32, kvl * 32);
	rows_at(f, r, QKV2, (hl + kvl) * 32, ATT2 "v_proj.weight", ks * kvl * 32, kvl * 32);
	cols_at(f, r, ATT2 "o_proj.weight", 0, ATT2 "o_proj.weight", HID, 128, t * 128 / T,
	        128 / T);
}

/* Rank r's layer-1 MLPs at TP T (EP 1, tp rank t): expert j's w13 slot = [gate rows; up rows]
 * of input_linear[j] (64 each), w2 slot = output_linear[j]'s columns; the shared MLP's
 * input_linear [gate_t; up_t] (96 each) and output_linear's columns; the router whole. */
static void mlp_is(const fx *f, uint32_t r, int64_t t, int64_t T)
{
	int64_t il = 64 / T, sl = 96 / T;
	for (int64_t j = 0; j < 4; j++) {
		rows_at(f, r, W13(1), j * 2 * il, IN(1), j * 128 + t * il, il);
		rows_at(f, r, W13(1), j * 2 * il + il, IN(1), j * 128 + 64 + t * il, il);
	}
	size_t rowb;
	const uint16_t *src = (const uint16_t *)src_rows(f, OUT(1), 0, &rowb);
	const uint16_t *w2 = (const uint16_t *)out_bytes(f, r, W2(1));
	for (int64_t j = 0; j < 4; j++)
		for (int64_t h = 0; h < HID; h++)
			for (int64_t c = 0; c < il; c++)
				if (w2[(j * HID + h) * il + c] !=
				    src[(j * HID + h) * 64 + t * il + c])
					fail_msg("rank %u w2 expert %lld row %lld col %lld", r,
					         (long long)j, (long long)h, (long long)c);
	const char *in = "model.layers.1.shared_mlp.input_linear.weight",
	           *out = "model.layers.1.shared_mlp.output_linear.weight";
	shp(f, r, in, 2, 2 * sl, HID, 0);
	rows_at(f, r, in, 0, in, t * sl, sl);
	rows_at(f, r, in, sl, in, 96 + t * sl, sl);
	cols_at(f, r, out, 0, out, HID, 96, t * sl, sl);
	rows_at(f, r, "model.layers.1.block_sparse_moe.gate.weight", 0,
	        "model.layers.1.block_sparse_moe.router.layer.weight", 0, 4);
}

static void test_g4_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_g4(), G4_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "granitemoehybrid");
	assert_true(shardmap_tied_lm_head(f.p));
	for (uint32_t r = 0; r < 2; r++) {
		mamba_is(&f, r, r, 2, 1);
		attn_is(&f, r, r, 2);
		mlp_is(&f, r, r, 2);
	}
	/* the layer types: layer 2 attention, layer 3 Mamba again */
	assert_true(tm_ix(f.p, 0, L2 "mamba.in_proj.weight") < 0);
	assert_true(tm_ix(f.p, 0, "model.layers.3.self_attn.qkv_proj.weight") < 0);
	shp(&f, 1, "model.layers.3.mamba.conv1d.weight", 3, 160, 1, 4);
	/* the router under Mixtral's name, whole */
	const char *gate = "model.layers.1.block_sparse_moe.gate.weight";
	shp(&f, 1, gate, 2, 4, HID, 0);
	rows_at(&f, 1, gate, 0, "model.layers.1.block_sparse_moe.router.layer.weight", 0, 4);
	fx_close(&f);
}

/* TP 4: 2 heads (64 rows of z / x) per rank, the one group's B and C on all four. */
static void test_g4_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_g4(), G4_OK, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		mamba_is(&f, r, r, 4, 1);
		attn_is(&f, r, r, 4);
		mlp_is(&f, r, r, 4);
	}
	fx_close(&f);
}

/* Two groups: at TP 2 each rank takes its own group's B and C rows (vLLM's
 * MergedColumnParallelLinear), at TP 1 all; a quantized layout is fine then. */
static void test_g4_groups(void **state)
{
	(void)state;
	g4_dims o = G4_STD;
	o.groups = 2;
	fx f;
	fx_open(&f, tm_g4_d(&o), G4_CFG2(""), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		mamba_is(&f, r, r, 2, 2);
	fx_close(&f);
	fx_open(&f, tm_g4_d(&o), G4_CFG2(""), 1, 1, 0, true);
	mamba_is(&f, 0, 0, 1, 2);
	fx_close(&f);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_g4_d(&o), G4_CFG2(""), &l, false);
	assert_int_equal(info(&f, 1, INP)->dtype, WT_I8);
	shp(&f, 1, INP, 2, 256 + 32 + 4, HID, 0);
	fx_close(&f);
}

static void test_g4_ep(void **state)
{
	(void)state;
	fx f;
	/* TP 2 x EP 2: ep rank 1 (ranks 2, 3) holds experts 2, 3 whole; the mixer and the shared
	 * MLP follow the tp rank */
	fx_open(&f, tm_g4(), G4_OK, 2, 2, 1, true);
	shp(&f, 3, W13(1), 3, 2, 128, HID);
	shp(&f, 3, W2(1), 3, 2, HID, 64);
	for (int64_t s = 0; s < 2; s++) { /* up_gate: [up_j; gate_j] */
		rows_at(&f, 3, W13(1), s * 128, IN(1), (2 + s) * 128 + 64, 64);
		rows_at(&f, 3, W13(1), s * 128 + 64, IN(1), (2 + s) * 128, 64);
		rows_at(&f, 1, W13(1), s * 128 + 64, IN(1), s * 128, 64);
	}
	rows_at(&f, 2, W2(1), 0, OUT(1), 2 * HID, 2 * HID);
	mamba_is(&f, 3, 1, 2, 1);
	mamba_is(&f, 2, 0, 2, 1);
	attn_is(&f, 3, 1, 2);
	fx_close(&f);
}

/* int8-channel at TP 1 (the one group allows no quantized TP > 1): in_proj, out_proj, q/k/v,
 * o_proj, the experts and the shared MLP quantized; conv1d and its bias, A_log, D, dt_bias,
 * the norms and the router keep their dtype without a scale. */
static void test_g4_quant(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_g4(), G4_OK, &l, true);
	static const char *const keep[] = {CONV,
	                                   CONVB,
	                                   M0 "A_log",
	                                   M0 "D",
	                                   M0 "dt_bias",
	                                   M0 "norm.weight",
	                                   "model.layers.1.block_sparse_moe.gate.weight",
	                                   L2 "input_layernorm.weight"};
	static const char *const q8[] = {INP,
	                                 OUTP,
	                                 QKV2,
	                                 ATT2 "o_proj.weight",
	                                 W13(1),
	                                 W2(3),
	                                 "model.layers.0.shared_mlp.input_linear.weight"};
	fx_quant_split(&f, 0, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	shp(&f, 0, INP "_scale", 2, 552, 1, 0);
	const int8_t *q = (const int8_t *)out_bytes(&f, 0, INP);
	const float *sc = (const float *)out_bytes(&f, 0, INP "_scale");
	size_t rowb;
	const uint16_t *src = (const uint16_t *)src_rows(&f, INP, 0, &rowb);
	for (int64_t row = 0; row < 552; row++)
		int8_row_is(q + row * HID, sc[row], src + row * HID, HID);
	fx_close(&f);
	l.quant = WT_QUANT_FP8_BLOCK;
	fx_open_l(&f, tm_g4(), G4_OK, &l, false);
	shp(&f, 0, INP "_scale", 2, 5, 1, 0);
	shp(&f, 0, OUTP "_scale", 2, 1, 2, 0);
	fx_close(&f);
}

/* Granite 4.0 Micro: every layer attention, no experts, the shared MLP the only MLP; no
 * Mamba key needed (the class defaults are there anyway). attention_bias: q/k/v and o_proj
 * biases required. */
static void test_g4_dense(void **state)
{
	(void)state;
	g4_dims o = {"AAAA", 1, 0, 96, 1, 0, 0};
	tm_model *m = tm_g4_d(&o);
	tm_add2(m, "lm_head.weight", 1003, HID); /* untied: the class default */
	fx f;
	fx_open(&f, m,
	        "{\"architectures\":[\"GraniteMoeHybridForCausalLM\"],\"model_type\":"
	        "\"granitemoehybrid\",\"hidden_size\":128,\"num_attention_heads\":4,"
	        "\"num_key_value_heads\":2,\"vocab_size\":1003,\"num_hidden_layers\":4,"
	        "\"intermediate_size\":64,\"num_local_experts\":0,\"shared_intermediate_size\":96,"
	        "\"attention_bias\":true,\"layer_types\":[\"attention\",\"attention\","
	        "\"attention\",\"attention\"],\"position_embedding_type\":\"rope\"}",
	        2, 1, 0, true);
	attn_is(&f, 1, 1, 2);
	shp(&f, 1, ATT2 "qkv_proj.bias", 1, 128, 0, 0);
	repl(&f, 1, ATT2 "o_proj.bias");
	assert_true(tm_ix(f.p, 1, W13(1)) < 0);
	shp(&f, 0, "model.layers.3.shared_mlp.input_linear.weight", 2, 96, HID, 0);
	assert_false(shardmap_tied_lm_head(f.p)); /* the class default: untied */
	fx_close(&f);
}

/* mamba_proj_bias: in_proj.bias cut like its weight, out_proj.bias whole; mamba_conv_bias
 * false: no conv1d.bias. */
static void test_g4_biases(void **state)
{
	(void)state;
	g4_dims o = G4_STD;
	o.conv_bias = 0;
	o.proj_bias = 1;
	fx f;
	fx_open(&f, tm_g4_d(&o),
	        "{" G4_BASE "," G4_TYPES "," G4_MOE ",\"mamba_conv_bias\":false,"
	        "\"mamba_proj_bias\":true}",
	        2, 1, 0, true);
	const char *b = M0 "in_proj.bias";
	shp(&f, 1, b, 1, 292, 0, 0);
	rows_at(&f, 1, b, 0, b, 128, 128);
	rows_at(&f, 1, b, 128, b, 384, 128);
	rows_at(&f, 1, b, 256, b, 512, 32);
	rows_at(&f, 1, b, 288, b, 548, 4);
	repl(&f, 1, M0 "out_proj.bias");
	assert_true(tm_ix(f.p, 1, CONVB) < 0);
	fx_close(&f);
}

static void test_g4_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2},
	                                   {2, 2}, {1, 4}, {4, 2}, {2, 4}};
	coverage(tm_g4(), G4_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	g4_dims o = G4_STD;
	o.groups = 2;
	static const uint32_t lays2[][2] = {{1, 1}, {2, 1}, {2, 2}, {1, 3}};
	coverage(tm_g4_d(&o), G4_CFG2(""), 2, lays2, sizeof(lays2) / sizeof(lays2[0]));
}

/* GraniteMoeHybridConfig's class defaults fill what config.json leaves out. */
static void test_g4_config_defaults(void **state)
{
	(void)state;
	static const char cfg[] =
	    "{\"architectures\": [\"GraniteMoeHybridForCausalLM\"], "
	    "\"model_type\": \"granitemoehybrid\", \"mamba_d_head\": \"auto\"}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.num_hidden_layers, 32);
	assert_int_equal(c.num_attention_heads, 32);
	assert_int_equal(c.num_key_value_heads, 32);
	assert_int_equal(c.vocab_size, 32000);
	assert_int_equal(c.intermediate_size, 11008);
	assert_int_equal(c.num_experts, 8);
	assert_int_equal(c.moe_intermediate_size, 11008);
	assert_int_equal(c.shared_expert_intermediate_size, 1024);
	assert_int_equal(c.mamba_n_heads, 128);
	assert_int_equal(c.mamba_n_groups, 1);
	assert_int_equal(c.mamba_d_state, 256);
	assert_int_equal(c.mamba_d_conv, 4);
	assert_int_equal(c.mamba_expand, 2);
	assert_int_equal(c.mamba_d_head, -1); /* auto */
	assert_true(c.mamba_conv_bias);
	assert_false(c.mamba_proj_bias);
	assert_false(c.tie_word_embeddings);
	assert_false(c.has_layer_types);
	ckpt_config_clear(&c);
	static const char given[] = "{\"architectures\": [\"GraniteMoeHybridForCausalLM\"], "
	                            "\"model_type\": \"granitemoehybrid\", \"mamba_d_head\": 64, "
	                            "\"mamba_conv_bias\": false, \"layer_types\": [\"mamba\", "
	                            "\"attention\", \"x\"]}";
	assert_int_equal(ckpt_config_parse(given, strlen(given), &c, &err), WT_OK);
	assert_int_equal(c.mamba_d_head, 64);
	assert_false(c.mamba_conv_bias);
	assert_int_equal(c.layer_types[0], CKPT_LAYER_MAMBA);
	assert_int_equal(c.layer_types[1], CKPT_LAYER_ATTN);
	assert_int_equal(c.layer_types[2], CKPT_LAYER_OTHER);
	ckpt_config_clear(&c);
	/* another model type gets none of them */
	static const char llama[] = "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": "
	                            "64, \"num_attention_heads\": 4, \"num_hidden_layers\": 1, "
	                            "\"vocab_size\": 10}";
	assert_int_equal(ckpt_config_parse(llama, strlen(llama), &c, &err), WT_OK);
	assert_int_equal(c.mamba_n_heads, -1);
	assert_false(c.mamba_conv_bias);
	ckpt_config_clear(&c);
}

/* Layouts vLLM's MambaMixer2 refuses: the numbers and a layout that works. */
static void test_g4_layouts(void **state)
{
	(void)state;
	fx_refused_tp(tm_g4(), G4_OK, 8, WT_ELAYOUT, "does not divide num_attention_heads 4",
	              "use tp_size 1, 2 or 4");
	/* 2 groups at TP 4: vLLM duplicates a group only when there is one */
	g4_dims o = G4_STD;
	o.groups = 2;
	fx_refused_tp(tm_g4_d(&o), G4_CFG2(""), 4, WT_ELAYOUT, "does not divide mamba_n_groups 2",
	              "use tp_size 1 or 2");
	/* a quantized model at TP 2 with the one group */
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_refused_at(tm_g4(), G4_OK, &l, WT_ELAYOUT,
	              "quant fp8-channel at tp_size 2 with "
	              "mamba_n_groups 1",
	              "use tp_size 1");
	/* all attention: the Mamba rules do not apply, TP 4 is the attention heads' */
	o = G4_STD;
	o.types = "AAAA";
	l.tp_size = 8;
	l.quant = WT_QUANT_NONE;
	fx_refused_at(tm_g4_d(&o),
	              "{" G4_BASE "," G4_MOE ",\"layer_types\":[\"attention\",\"attention\","
	              "\"attention\",\"attention\"]}",
	              &l, WT_ELAYOUT, "num_attention_heads 4", "use tp_size 1, 2 or 4");
}

/* Configs that misdescribe the model, and checkpoints that miss or add tensors. */
static void test_g4_errors(void **state)
{
	(void)state;
	fx_refused_tp(tm_g4(), "{" G4_BASE "," G4_MOE ",\"layer_types\":[\"mamba\",\"attention\"]}",
	              2, WT_ECORRUPT, "layer_types has 2 entries", "num_hidden_layers is 4");
	fx_refused_tp(tm_g4(),
	              "{" G4_BASE "," G4_MOE
	              ",\"layer_types\":[\"mamba\",\"mamba\",\"full_attention\","
	              "\"mamba\"]}",
	              2, WT_ECORRUPT, "layer_types[2]", "\"mamba\" nor \"attention\"");
	/* no layer_types: transformers 4.57.1 builds no model (its layers_block_type is
	 * layer_types itself), nor does vLLM */
	fx_refused_tp(tm_g4(), "{" G4_BASE "," G4_MOE "}", 2, WT_ECORRUPT, "layer_types is missing",
	              "one of \"mamba\" / \"attention\" per layer");
	/* layer 2 called Mamba: its attention is unknown */
	fx_refused_tp(tm_g4(),
	              "{" G4_BASE "," G4_MOE ",\"layer_types\":[\"mamba\",\"mamba\",\"mamba\","
	              "\"mamba\"]}",
	              2, WT_EUNSUPPORTED, ATT2, "makes layer 2 a Mamba layer");
	/* a Mamba tensor in the attention layer */
	tm_model *m = tm_g4();
	tm_add2(m, L2 "mamba.D", 8, 0);
	fx_refused_tp(m, G4_OK, 2, WT_EUNSUPPORTED, L2 "mamba.D", "an attention layer");
	/* mamba_conv_bias (true by default) needs conv1d.bias; false refuses one */
	m = tm_g4();
	tm_remove(m, CONVB);
	fx_refused_tp(m, G4_OK, 2, WT_ENOTFOUND, CONVB, "missing");
	fx_refused_tp(tm_g4(), G4_CFG(",\"mamba_conv_bias\":false"), 2, WT_EUNSUPPORTED, CONVB,
	              "mamba_conv_bias is false");
	m = tm_g4();
	tm_add2(m, M0 "out_proj.bias", HID, 0);
	fx_refused_tp(m, G4_OK, 2, WT_EUNSUPPORTED, M0 "out_proj.bias", "mamba_proj_bias");
	/* the in_proj of two groups under a config of one */
	g4_dims o = G4_STD;
	o.groups = 2;
	fx_refused_tp(tm_g4_d(&o), G4_OK, 2, WT_ESHAPE, "shape [320] disagrees", "implies [288]");
	/* the Mamba dims GraniteMoeHybridConfig refuses */
	fx_refused_tp(tm_g4(), "{" G4_BASE0 "," G4_TYPES "," G4_MOE ",\"mamba_n_heads\":6}", 2,
	              WT_ECORRUPT, "mamba_expand * hidden_size", "mamba_n_heads 6");
	fx_refused_tp(tm_g4(),
	              "{" G4_BASE0 "," G4_TYPES "," G4_MOE
	              ",\"mamba_n_heads\":8,\"mamba_d_head\":16}",
	              2, WT_ECORRUPT, "mamba_n_heads 8", "mamba_d_head (16");
	fx_refused_tp(tm_g4(), "{" G4_BASE "," G4_TYPES "," G4_MOE ",\"mamba_n_groups\":3}", 2,
	              WT_ECORRUPT, "mamba_n_groups 3", "mamba_n_heads 8");
	/* the attention's head_dim is hidden / heads, whatever config.json says */
	fx_refused_tp(tm_g4(), G4_CFG(",\"head_dim\":16"), 2, WT_ECORRUPT, "head_dim 16",
	              "hidden_size 128");
	/* the shared MLP needs shared_intermediate_size > 0 */
	fx_refused_tp(tm_g4(),
	              "{" G4_BASE "," G4_TYPES
	              ",\"num_local_experts\":4,\"shared_intermediate_size\":0}",
	              2, WT_EUNSUPPORTED, "shared_mlp", "shared_intermediate_size is 0");
	/* experts in a config without them */
	fx_refused_tp(tm_g4(),
	              "{" G4_BASE "," G4_TYPES
	              ",\"num_local_experts\":0,\"shared_intermediate_size\":96}",
	              2, WT_EUNSUPPORTED, "block_sparse_moe", "num_local_experts");
	/* no model_type: no class defaults, so the Mamba sizes are missing */
	fx_refused_tp(
	    tm_g4(),
	    "{\"architectures\":[\"GraniteMoeHybridForCausalLM\"],\"hidden_size\":128,"
	    "\"num_attention_heads\":4,\"num_hidden_layers\":4,\"vocab_size\":1003," G4_TYPES "}",
	    2, WT_ECORRUPT, "3 Mamba layers", "mamba_n_heads");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_g4_tp2),
	    cmocka_unit_test(test_g4_tp4),
	    cmocka_unit_test(test_g4_groups),
	    cmocka_unit_test(test_g4_ep),
	    cmocka_unit_test(test_g4_quant),
	    cmocka_unit_test(test_g4_dense),
	    cmocka_unit_test(test_g4_biases),
	    cmocka_unit_test(test_g4_coverage),
	    cmocka_unit_test(test_g4_config_defaults),
	    cmocka_unit_test(test_g4_layouts),
	    cmocka_unit_test(test_g4_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
