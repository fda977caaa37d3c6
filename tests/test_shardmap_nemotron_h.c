/*
 * test_shardmap_nemotron_h.c — Nemotron-H (NemotronHForCausalLM, nemotron_h): Mamba's
 * backbone (backbone.embeddings / lm_head vocab-parallel and untied, every layer's norm and
 * norm_f replicated) and one mixer per layer under mixer., its kind from
 * hybrid_override_pattern, cut as vLLM's nemotron_h.py loads it: "M" Granite 4.0's Mamba2
 * mixer (in_proj [z; x; B; C; dt] and conv1d [x; B; C] per segment, a rank's heads and
 * groups, B / C whole when tp does not divide the one group; A_log / D / dt_bias / the gated
 * norm by heads; out_proj by columns), "*" q / k / v fused into qkv_proj by heads and o_proj
 * by columns, "-" up_proj by rows and down_proj by columns; every one of those linears
 * quantized, nothing else. Hand-computed slices at TP 2 (two groups a rank) and TP 4 (one
 * group and one kv head shared by two ranks), int8 codes, fp8-channel, coverage over TP 1-8,
 * NemotronHConfig's defaults and key names (the stored and the constructor's), mtp.*
 * dropped, the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed00a7ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 64, L 5 "M-M*-"; Mamba2 8 heads of 16 (Im 128), state 16, conv 4, G groups: in_proj
 * [2*128 + 2*G*16 + 8, 64] rows z [0, 128), x [128, 256), B, C, dt; conv1d [128 + 2*G*16, 1,
 * 4]; attention H 4, KV 2, d 16; MLP I 128; V 1003, lm_head.weight untied */
#define HID 64
#define NH_DIMS                                                                                    \
	"\"architectures\":[\"NemotronHForCausalLM\"],\"model_type\":\"nemotron_h\","              \
	"\"hidden_size\":64,\"vocab_size\":1003,\"num_attention_heads\":4,"                        \
	"\"num_key_value_heads\":2,\"mamba_num_heads\":8,\"mamba_head_dim\":16,"                   \
	"\"ssm_state_size\":16,\"conv_kernel\":4"
#define NH_PAT(p, n) NH_DIMS ",\"num_hidden_layers\":" n ",\"hybrid_override_pattern\":\"" p "\""
/* x: intermediate_size and attention_head_dim, or another form of them */
#define NH_X(x)   "{" NH_PAT("M-M*-", "5") ",\"n_groups\":4" x "}"
#define NH_BASE   NH_PAT("M-M*-", "5") ",\"intermediate_size\":128,\"attention_head_dim\":16"
#define NH_CFG(x) "{" NH_BASE ",\"n_groups\":4" x "}"
#define NH_OK     NH_CFG("")
#define NH_G1     "{" NH_BASE ",\"n_groups\":1}"
#define NH_L      "backbone.layers.%d."
#define M0        "backbone.layers.0.mixer."
#define INP       M0 "in_proj.weight"
#define CONV      M0 "conv1d.weight"
#define CONVB     M0 "conv1d.bias"
#define OUTP      M0 "out_proj.weight"
#define A3        "backbone.layers.3.mixer."
#define QKV       A3 "qkv_proj.weight"
#define OPROJ     A3 "o_proj.weight"
#define P1        "backbone.layers.1.mixer."
#define UP        P1 "up_proj.weight"
#define DOWN      P1 "down_proj.weight"
#define EMB       "backbone.embeddings.weight"
#define LMH       "lm_head.weight"

/* The model's knobs: groups, conv1d bias, in_proj / out_proj biases, MLP biases, an
 * lm_head.weight. */
typedef struct nh_dims {
	int g, conv_bias, proj_bias, mlp_bias, lm_head;
} nh_dims;

static const nh_dims NH_STD = {4, 1, 0, 0, 1};

static void add_l(tm_model *m, int i, const char *leaf, int64_t a, int64_t b)
{
	char n[200];
	tm_fmt(n, sizeof(n), NH_L, i, leaf);
	tm_add2(m, n, a, b);
}

static void add_mamba(tm_model *m, int i, const nh_dims *o)
{
	int64_t nc = 128 + 2 * o->g * 16, rows = 128 + nc + 8;
	char b[200];
	add_l(m, i, "mixer.in_proj.weight", rows, HID);
	tm_fmt(b, sizeof(b), NH_L, i, "mixer.conv1d.weight");
	tm_add(m, b, WT_DTYPE_INVALID, 3, nc, 1, 4);
	if (o->conv_bias)
		add_l(m, i, "mixer.conv1d.bias", nc, 0);
	add_l(m, i, "mixer.A_log", 8, 0);
	add_l(m, i, "mixer.D", 8, 0);
	add_l(m, i, "mixer.dt_bias", 8, 0);
	add_l(m, i, "mixer.norm.weight", 128, 0);
	add_l(m, i, "mixer.out_proj.weight", HID, 128);
	if (o->proj_bias) {
		add_l(m, i, "mixer.in_proj.bias", rows, 0);
		add_l(m, i, "mixer.out_proj.bias", HID, 0);
	}
}

static void add_mlp(tm_model *m, int i, const nh_dims *o)
{
	add_l(m, i, "mixer.up_proj.weight", 128, HID);
	add_l(m, i, "mixer.down_proj.weight", HID, 128);
	if (o->mlp_bias) {
		add_l(m, i, "mixer.up_proj.bias", 128, 0);
		add_l(m, i, "mixer.down_proj.bias", HID, 0);
	}
}

static tm_model *tm_nh_d(const nh_dims *o)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1003, HID);
	tm_add2(m, "backbone.norm_f.weight", HID, 0);
	if (o->lm_head)
		tm_add2(m, LMH, 1003, HID);
	for (int i = 0; i < 5; i++)
		add_l(m, i, "norm.weight", HID, 0);
	add_mamba(m, 0, o);
	add_mlp(m, 1, o);
	add_mamba(m, 2, o);
	add_l(m, 3, "mixer.q_proj.weight", 64, HID);
	add_l(m, 3, "mixer.k_proj.weight", 32, HID);
	add_l(m, 3, "mixer.v_proj.weight", 32, HID);
	add_l(m, 3, "mixer.o_proj.weight", HID, 64);
	add_mlp(m, 4, o);
	return m;
}

static tm_model *tm_nh(void)
{
	return tm_nh_d(&NH_STD);
}

/* Rank r's mixer of layer 0 at TP T with G groups (fx_mamba2_mixer_is: 8 heads, width 128,
 * state 16, conv 4) and the replicated norms. */
static void mixer_is(const fx *f, uint32_t r, int64_t T, int64_t G)
{
	const fx_m2 m = {128, 8, G, 16, 4, HID, true, true};
	fx_mamba2_mixer_is(f, r, T, M0, &m);
	repl(f, r, "backbone.layers.0.norm.weight");
	repl(f, r, "backbone.norm_f.weight");
}

/* Rank r's attention (layer 3) at TP T: [q_r; k_r; v_r] by heads of 16 (a kv head shared by
 * T / 2 ranks past TP 2), o_proj's columns of its heads; and the MLP (layer 1): up_proj's
 * rows, down_proj's columns. */
static void attn_mlp_is(const fx *f, uint32_t r, int64_t T)
{
	fx_attn_is(f, r, (uint32_t)T, A3, "o_proj.weight", 4, 2, 16, HID);
	int64_t il = 128 / T;
	shp(f, r, UP, 2, il, HID, 0);
	rows_at(f, r, UP, 0, UP, r * il, il);
	cols_of(f, r, (uint32_t)T, DOWN, DOWN, HID, 128);
	repl(f, r, "backbone.layers.3.norm.weight");
}

/* The padded vocabulary (1003 -> 1024 at TP 2 and 4): rank r's rows of t. */
static void vocab_is(const fx *f, uint32_t r, int64_t T, const char *t)
{
	fx_vocab_is(f, r, T, t, 1003, 1024, HID);
}

static void test_nh_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_nh(), NH_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "nemotron_h");
	assert_false(shardmap_tied_lm_head(f.p));
	for (uint32_t r = 0; r < 2; r++) {
		mixer_is(&f, r, 2, 4);
		attn_mlp_is(&f, r, 2);
		vocab_is(&f, r, 2, EMB);
		vocab_is(&f, r, 2, LMH);
	}
	/* 40 tensors a rank: 3 global, 5 norms, two mixers of 8, qkv / o, two MLPs of 2 */
	assert_int_equal(shardmap_rank_n_tensors(f.p, 1), 3 + 5 + 16 + 2 + 4);
	shp(&f, 1, "backbone.layers.2.mixer.in_proj.weight", 2, 196, HID, 0);
	assert_true(tm_ix(f.p, 0, M0 "in_proj.bias") < 0);
	fx_close(&f);
}

/* TP 4: one group and two heads a rank; one kv head for two ranks. */
static void test_nh_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_nh(), NH_OK, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		mixer_is(&f, r, 4, 4);
		attn_mlp_is(&f, r, 4);
		vocab_is(&f, r, 4, EMB);
	}
	fx_close(&f);
	/* one group: B and C whole on every rank */
	nh_dims o = NH_STD;
	o.g = 1;
	fx_open(&f, tm_nh_d(&o), NH_G1, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		mixer_is(&f, r, 4, 1);
	fx_close(&f);
}

/* The linears quantized (MambaMixer2's in_proj / out_proj, QKVParallelLinear, o_proj,
 * up_proj, down_proj: vLLM hands each the quant_config), nothing else. */
static const char *const keep_nh[] = {CONV,
                                      CONVB,
                                      M0 "A_log",
                                      M0 "D",
                                      M0 "dt_bias",
                                      M0 "norm.weight",
                                      EMB,
                                      LMH,
                                      "backbone.norm_f.weight",
                                      "backbone.layers.3.norm.weight"};
static const char *const q_nh[] = {INP, OUTP, QKV, OPROJ, UP, DOWN};

static void test_nh_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, tm_nh(), NH_OK, &l, true);
	fx_quant_split(&f, 1, WT_BF16, keep_nh, sizeof(keep_nh) / sizeof(keep_nh[0]), q_nh,
	               sizeof(q_nh) / sizeof(q_nh[0]));
	shp(&f, 1, INP "_scale", 2, 196, 1, 0);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, INP);
	const float *sc = (const float *)out_bytes(&f, 1, INP "_scale");
	size_t rowb;
	/* rank 1's first row is z row 64, its B rows 288.. (groups 2 and 3) */
	const uint16_t *src = (const uint16_t *)src_rows(&f, INP, 64, &rowb);
	for (int64_t row = 0; row < 64; row++)
		int8_row_is(q + row * HID, sc[row], src + row * HID, HID);
	src = (const uint16_t *)src_rows(&f, INP, 288, &rowb);
	for (int64_t row = 0; row < 32; row++)
		int8_row_is(q + (128 + row) * HID, sc[128 + row], src + row * HID, HID);
	/* rank 1's qkv rows: q heads 2-3, then k head 1 */
	q = (const int8_t *)out_bytes(&f, 1, QKV);
	sc = (const float *)out_bytes(&f, 1, QKV "_scale");
	src = (const uint16_t *)src_rows(&f, A3 "q_proj.weight", 32, &rowb);
	for (int64_t row = 0; row < 32; row++)
		int8_row_is(q + row * HID, sc[row], src + row * HID, HID);
	src = (const uint16_t *)src_rows(&f, A3 "k_proj.weight", 16, &rowb);
	for (int64_t row = 0; row < 16; row++)
		int8_row_is(q + (32 + row) * HID, sc[32 + row], src + row * HID, HID);
	q = (const int8_t *)out_bytes(&f, 1, UP);
	sc = (const float *)out_bytes(&f, 1, UP "_scale");
	src = (const uint16_t *)src_rows(&f, UP, 64, &rowb);
	for (int64_t row = 0; row < 64; row++)
		int8_row_is(q + row * HID, sc[row], src + row * HID, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_nh(), NH_OK, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(keep_nh),
	              FX_N(q_nh));
	shp(&f, 3, DOWN "_scale", 2, HID, 1, 0);
	fx_close(&f);
}

/* use_bias: in_proj.bias cut like its weight, out_proj.bias whole; use_conv_bias false: no
 * conv1d.bias; mlp_bias: up_proj.bias by rows, down_proj.bias whole; mtp.* dropped. */
static void test_nh_switches(void **state)
{
	(void)state;
	nh_dims o = {4, 0, 1, 1, 1};
	tm_model *m = tm_nh_d(&o);
	tm_add2(m, "mtp.layers.0.mixer.up_proj.weight", 128, HID);
	fx f;
	fx_open(&f, m, NH_CFG(",\"use_conv_bias\":false,\"use_bias\":true,\"mlp_bias\":true"), 2, 1,
	        0, true);
	const char *b = M0 "in_proj.bias";
	shp(&f, 1, b, 1, 196, 0, 0);
	rows_at(&f, 1, b, 0, b, 64, 64);
	rows_at(&f, 1, b, 64, b, 192, 64);
	rows_at(&f, 1, b, 128, b, 288, 32);
	rows_at(&f, 1, b, 160, b, 352, 32);
	rows_at(&f, 1, b, 192, b, 388, 4);
	repl(&f, 1, M0 "out_proj.bias");
	assert_true(tm_ix(f.p, 1, CONVB) < 0);
	shp(&f, 1, P1 "up_proj.bias", 1, 64, 0, 0);
	rows_at(&f, 1, P1 "up_proj.bias", 0, P1 "up_proj.bias", 64, 64);
	repl(&f, 1, P1 "down_proj.bias");
	assert_true(fx_skipped(&f, "mtp.layers.0.mixer.up_proj.weight"));
	fx_close(&f);
}

static void test_nh_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}};
	coverage(tm_nh(), NH_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	/* TP 8: 8 attention heads of 8, 8 kv heads, one group */
	nh_dims o = NH_STD;
	o.g = 1;
	static const uint32_t lays8[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_nh_d(&o),
	         "{\"architectures\":[\"NemotronHForCausalLM\"],\"model_type\":\"nemotron_h\","
	         "\"hidden_size\":64,\"vocab_size\":1003,\"num_hidden_layers\":5,"
	         "\"hybrid_override_pattern\":\"M-M*-\",\"num_attention_heads\":8,"
	         "\"num_key_value_heads\":4,\"head_dim\":8,\"attention_head_dim\":8,"
	         "\"intermediate_size\":128,\"mamba_num_heads\":8,\"mamba_head_dim\":16,"
	         "\"ssm_state_size\":16,\"conv_kernel\":4,\"n_groups\":1}",
	         4, lays8, sizeof(lays8) / sizeof(lays8[0]));
}

/* NemotronHConfig's class defaults, and its key names read as the mixer's: the stored ones
 * (n_groups, conv_kernel, expand, use_conv_bias, chunk_size) win over the constructor's
 * (mamba_n_groups ...), which stand in when only they are given. */
static void test_nh_config(void **state)
{
	(void)state;
	static const char cfg[] = "{\"architectures\": [\"NemotronHForCausalLM\"], \"model_type\": "
	                          "\"nemotron_h\"}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &c, &err), WT_OK);
	assert_int_equal(c.vocab_size, 131072);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.intermediate_size, 21504);
	assert_int_equal(c.num_hidden_layers, 52);
	assert_int_equal(c.num_attention_heads, 32);
	assert_int_equal(c.num_key_value_heads, 8);
	assert_int_equal(c.head_dim, 128);
	assert_int_equal(c.mamba_n_heads, 128);
	assert_int_equal(c.mamba_d_head, 64);
	assert_int_equal(c.mamba_d_ssm, 128 * 64);
	assert_int_equal(c.mamba_n_groups, 8);
	assert_int_equal(c.mamba_d_state, 128);
	assert_int_equal(c.mamba_d_conv, 4);
	assert_int_equal(c.mamba_expand, 2);
	assert_true(c.mamba_conv_bias);
	assert_false(c.mamba_proj_bias || c.mlp_bias || c.attention_bias || c.tie_word_embeddings);
	/* the default pattern: "M-M-M-M*-M-M-M-M-M*-..." */
	assert_int_equal(c.n_layer_types, 52);
	assert_int_equal(c.layer_types[0], CKPT_LAYER_MAMBA);
	assert_int_equal(c.layer_types[1], CKPT_LAYER_MLP);
	assert_int_equal(c.layer_types[7], CKPT_LAYER_ATTN);
	assert_int_equal(c.layer_types[51], CKPT_LAYER_MLP);
	ckpt_config_clear(&c);
	static const char ctor[] =
	    "{\"architectures\": [\"NemotronHForCausalLM\"], \"model_type\": "
	    "\"nemotron_h\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
	    "\"attention_head_dim\": 16, \"num_hidden_layers\": 1, "
	    "\"hybrid_override_pattern\": \"M\", \"mamba_n_groups\": 2, "
	    "\"mamba_d_conv\": 3, \"mamba_conv_bias\": false, \"n_groups\": 1, "
	    "\"use_bias\": true, \"mamba_proj_bias\": false, "
	    "\"layer_norm_epsilon\": 1e-6, \"mamba_num_heads\": 4, "
	    "\"mamba_head_dim\": 24, \"expand\": 1}";
	assert_int_equal(ckpt_config_parse(ctor, strlen(ctor), &c, &err), WT_OK);
	assert_int_equal(c.mamba_n_groups, 1); /* n_groups wins */
	assert_int_equal(c.mamba_d_conv, 3);   /* mamba_d_conv stands in for conv_kernel */
	assert_false(c.mamba_conv_bias);
	assert_true(c.mamba_proj_bias);      /* use_bias, not mamba_proj_bias */
	assert_int_equal(c.mamba_d_ssm, 96); /* heads x head_dim, not expand x hidden */
	assert_int_equal(c.mamba_d_head, 24);
	assert_int_equal(c.head_dim, 16);
	ckpt_config_clear(&c);
	/* another model type gets none of them */
	static const char llama[] = "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": "
	                            "64, \"num_attention_heads\": 4, \"num_hidden_layers\": 1, "
	                            "\"vocab_size\": 10, \"mamba_num_heads\": 3, "
	                            "\"hybrid_override_pattern\": \"M\"}";
	assert_int_equal(ckpt_config_parse(llama, strlen(llama), &c, &err), WT_OK);
	assert_int_equal(c.mamba_n_heads, -1);
	assert_false(c.has_layer_types);
	ckpt_config_clear(&c);
}

/* The mixer's width is mamba_num_heads * mamba_head_dim whatever expand says (vLLM reads
 * no expand): a checkpoint 96 wide plans with expand 2 and hidden 64. */
static void test_nh_width(void **state)
{
	(void)state;
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1003, HID);
	tm_add2(m, "backbone.norm_f.weight", HID, 0);
	tm_add2(m, LMH, 1003, HID);
	tm_add2(m, "backbone.layers.0.norm.weight", HID, 0);
	tm_add2(m, INP, 2 * 96 + 2 * 16 + 6, HID);
	tm_add(m, CONV, WT_DTYPE_INVALID, 3, 96 + 32, 1, 4);
	tm_add2(m, CONVB, 96 + 32, 0);
	tm_add2(m, M0 "A_log", 6, 0);
	tm_add2(m, M0 "D", 6, 0);
	tm_add2(m, M0 "dt_bias", 6, 0);
	tm_add2(m, M0 "norm.weight", 96, 0);
	tm_add2(m, OUTP, HID, 96);
	fx f;
	fx_open(&f, m,
	        "{\"architectures\":[\"NemotronHForCausalLM\"],\"model_type\":\"nemotron_h\","
	        "\"hidden_size\":64,\"vocab_size\":1003,\"num_hidden_layers\":1,"
	        "\"hybrid_override_pattern\":\"M\",\"num_attention_heads\":4,"
	        "\"attention_head_dim\":16,\"mamba_num_heads\":6,\"mamba_head_dim\":16,"
	        "\"ssm_state_size\":16,\"n_groups\":1,\"expand\":2}",
	        2, 1, 0, true);
	shp(&f, 1, OUTP, 2, HID, 48, 0);
	cols_at(&f, 1, OUTP, 0, OUTP, HID, 96, 48, 48);
	shp(&f, 1, INP, 2, 2 * 48 + 32 + 3, HID, 0);
	fx_close(&f);
}

/* Layouts vLLM refuses: the numbers and a layout that works. */
static void test_nh_layouts(void **state)
{
	(void)state;
	fx_refused_tp(tm_nh(), NH_OK, 8, WT_ELAYOUT, "num_attention_heads 4",
	              "use tp_size 1, 2 or 4");
	nh_dims o = NH_STD;
	o.g = 2;
	fx_refused_tp(tm_nh_d(&o), "{" NH_BASE ",\"n_groups\":2}", 4, WT_ELAYOUT,
	              "mamba_n_groups 2", "tp_size 1 or 2");
	/* one group: quantized only at TP 1 (vLLM's MambaMixer2 cannot quantize a replicated group)
	 */
	o.g = 1;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_refused_at(tm_nh_d(&o), NH_G1, &l, WT_ELAYOUT, "mamba_n_groups 1", "use tp_size 1");
}

/* Configs vLLM's nemotron_h.py cannot build as the remote code does, and configs that
 * misdescribe the model: refused naming the key. */
static void test_nh_config_errors(void **state)
{
	(void)state;
	static const struct {
		const char *cfg;
		int code;
		const char *a, *b;
	} bad[] = {
	    {"{" NH_PAT("M-ME-", "5") ",\"attention_head_dim\":16,\"moe_latent_size\":32}",
	     WT_EUNSUPPORTED, "moe_latent_size", "latent MoE"},
	    {"{" NH_PAT("M-M*", "5") ",\"attention_head_dim\":16}", WT_ECORRUPT, "has 4 layers",
	     "num_hidden_layers is 5"},
	    {"{" NH_PAT("M-MX-", "5") ",\"attention_head_dim\":16}", WT_ECORRUPT, "'X'",
	     "\"-\" (MLP)"},
	    {NH_CFG(",\"mlp_hidden_act\":\"silu\""), WT_EUNSUPPORTED, "mlp_hidden_act", "relu2"},
	    {NH_CFG(",\"mamba_hidden_act\":\"gelu\""), WT_EUNSUPPORTED, "mamba_hidden_act", "silu"},
	    {NH_CFG(",\"attention_bias\":true"), WT_EUNSUPPORTED, "attention_bias", "drop the key"},
	    {NH_CFG(",\"tie_word_embeddings\":true"), WT_EUNSUPPORTED, "tie_word_embeddings",
	     "never ties"},
	    {NH_CFG(",\"block_configs\":[]"), WT_EUNSUPPORTED, "block_configs", "heterogeneous"},
	    {NH_CFG(",\"time_step_limit\":[0.0, 0.1]"), WT_EUNSUPPORTED, "time_step_limit",
	     "(0, inf)"},
	    {NH_CFG(",\"mamba_dt_limit\":[0.001, 0.1]"), WT_EUNSUPPORTED, "mamba_dt_limit", ""},
	    {NH_CFG(",\"head_dim\":8"), WT_EUNSUPPORTED, "attention_head_dim 16",
	     "head_dim 8 vLLM reads (head_dim)"},
	    /* attention_head_dim left out: NemotronHConfig's 128 */
	    {NH_X(",\"intermediate_size\":128"), WT_EUNSUPPORTED, "attention_head_dim 128",
	     "hidden_size / num_attention_heads"},
	    {NH_X(",\"intermediate_size\":[128, 256],\"attention_head_dim\":16"), WT_EUNSUPPORTED,
	     "list of 2 sizes", "one size"},
	    {"{" NH_BASE ",\"n_groups\":3}", WT_ECORRUPT, "mamba_n_groups 3", "mamba_n_heads 8"},
	    {"{" NH_DIMS ",\"num_hidden_layers\":5,\"hybrid_override_pattern\":5,"
	     "\"attention_head_dim\":16}",
	     WT_ECORRUPT, "hybrid_override_pattern is not a string", ""},
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		fx_refused_tp(tm_nh(), bad[k].cfg, 2, bad[k].code, bad[k].a, bad[k].b);
	/* a one-entry intermediate_size list is its entry (vLLM's reading) */
	fx f;
	fx_open(&f, tm_nh(), NH_X(",\"intermediate_size\":[128],\"attention_head_dim\":16"), 2, 1,
	        0, true);
	attn_mlp_is(&f, 1, 2);
	fx_close(&f);
}

/* A layer's tensors of another kind, a bias its switch leaves out, missing tensors. */
static void test_nh_errors(void **state)
{
	(void)state;
	tm_model *m = tm_nh();
	tm_add2(m, M0 "up_proj.weight", 128, HID);
	fx_refused_tp(m, NH_OK, 2, WT_EUNSUPPORTED, M0 "up_proj.weight",
	              "a Mamba2 layer (\"M\" in hybrid_override_pattern)");
	m = tm_nh();
	tm_add2(m, P1 "in_proj.weight", 392, HID);
	fx_refused_tp(m, NH_OK, 2, WT_EUNSUPPORTED, P1 "in_proj.weight",
	              "an MLP layer (\"-\" in hybrid_override_pattern)");
	m = tm_nh();
	tm_add2(m, "backbone.layers.4.mixer.q_proj.weight", 64, HID);
	fx_refused_tp(m, NH_OK, 2, WT_EUNSUPPORTED, "backbone.layers.4.mixer.q_proj.weight",
	              "an MLP layer");
	m = tm_nh();
	tm_add2(m, A3 "up_proj.weight", 128, HID);
	fx_refused_tp(m, NH_OK, 2, WT_EUNSUPPORTED, A3 "up_proj.weight",
	              "an attention layer (\"*\" in hybrid_override_pattern)");
	m = tm_nh();
	tm_add2(m, A3 "q_proj.bias", 64, 0);
	fx_refused_tp(m, NH_OK, 2, WT_EUNSUPPORTED, A3 "q_proj.bias", "unknown");
	m = tm_nh();
	tm_add2(m, M0 "in_proj.bias", 392, 0);
	fx_refused_tp(m, NH_OK, 2, WT_EUNSUPPORTED, M0 "in_proj.bias", "use_bias is false");
	m = tm_nh();
	tm_add2(m, P1 "up_proj.bias", 128, 0);
	fx_refused_tp(m, NH_OK, 2, WT_EUNSUPPORTED, P1 "up_proj.bias", "mlp_bias is false");
	fx_refused_tp(tm_nh(), NH_CFG(",\"use_conv_bias\":false"), 2, WT_EUNSUPPORTED, CONVB,
	              "use_conv_bias is false");
	nh_dims o = NH_STD;
	o.mlp_bias = 1;
	m = tm_nh_d(&o);
	tm_remove(m, "backbone.layers.4.mixer.down_proj.bias");
	fx_refused_tp(m, NH_CFG(",\"mlp_bias\":true"), 2, WT_ENOTFOUND,
	              "backbone.layers.4.mixer.down_proj.bias", "missing");
	static const char *const gone[] = {OPROJ, A3 "v_proj.weight", DOWN, M0 "dt_bias", LMH};
	for (size_t k = 0; k < sizeof(gone) / sizeof(gone[0]); k++) {
		m = tm_nh();
		tm_remove(m, gone[k]);
		fx_refused_tp(m, NH_OK, 2, WT_ENOTFOUND, gone[k], "missing");
	}
	/* the groups the checkpoint does not have: in_proj's rows disagree */
	fx_refused_tp(tm_nh(), "{" NH_BASE ",\"n_groups\":2}", 2, WT_ESHAPE, M0, "implies [");
	m = tm_nh();
	tm_add2(m, "backbone.layers.5.norm.weight", HID, 0);
	fx_refused_tp(m, NH_OK, 2, WT_ESHAPE, "backbone.layers.5.norm.weight",
	              "num_hidden_layers is 5");
}

int main(void)
{
	printf("seed 0x%llx\n", (unsigned long long)SEED);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nh_tp2),           cmocka_unit_test(test_nh_tp4),
	    cmocka_unit_test(test_nh_quant),         cmocka_unit_test(test_nh_switches),
	    cmocka_unit_test(test_nh_coverage),      cmocka_unit_test(test_nh_config),
	    cmocka_unit_test(test_nh_width),         cmocka_unit_test(test_nh_layouts),
	    cmocka_unit_test(test_nh_config_errors), cmocka_unit_test(test_nh_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
