/*
 * test_shardmap_jamba_fx.h — Jamba's test checkpoint (its config strings, the layer kinds,
 * tm_jb / tm_jb_d) and its hand-slice checks (mamba_is, attn_is, mlp_is), shared by the planner
 * tests of JambaForCausalLM (test_shardmap_jamba.c) and JambaForSequenceClassification
 * (test_shardmap_jamba_cls.c). Include after test_shardmap_fx.h.
 */
#ifndef WT_TEST_SHARDMAP_JAMBA_FX_H
#define WT_TEST_SHARDMAP_JAMBA_FX_H

/* hid 128, L 4 (attn_layer_period 4 / offset 2: mamba, mamba, attention, mamba; expert
 * period 2 / offset 1: layers 1 and 3 MoE); attention H 4 / KV 2 / d 32; Mamba Im 256,
 * state 16, dt rank 8 ("auto"), conv 4: in_proj [512, 128] rows x [0, 256), z [256, 512);
 * x_proj [40, 256]; dense MLP and 4 experts of 96; V 1003, untied */
#define HID      128
#define JB_BASE0 JB_BASE_A("JambaForCausalLM")
/* JambaConfig's keys of the test model under architectures[0] arch */
#define JB_BASE_A(arch)                                                                            \
	"\"architectures\":[\"" arch "\"],\"model_type\":\"jamba\",\"hidden_size\":128,"           \
	"\"num_attention_heads\":4,\"num_key_value_heads\":2,\"intermediate_size\":96,"            \
	"\"vocab_size\":1003,\"num_hidden_layers\":4,\"mamba_d_state\":16,\"mamba_d_conv\":4,"     \
	"\"mamba_expand\":2,\"expert_layer_period\":2"
#define JB_ATT     "\"attn_layer_period\":4,\"attn_layer_offset\":2"
#define JB_CFGX(x) "{" JB_BASE0 "," JB_ATT x "}"
#define JB_CFG(x)  JB_CFGX(",\"num_experts\":4,\"expert_layer_offset\":1" x)
#define JB_OK      JB_CFG("")
#define JB_CFG0_ALLM                                                                               \
	"{" JB_BASE0 ",\"num_experts\":4,\"expert_layer_offset\":1,\"attn_layer_period\":8,"       \
	"\"attn_layer_offset\":4}"
#define M0    "model.layers.0.mamba."
#define ATT2  "model.layers.2.self_attn."
#define INP   M0 "in_proj.weight"
#define CONV  M0 "conv1d.weight"
#define CONVB M0 "conv1d.bias"
#define XP    M0 "x_proj.weight"
#define OUTP  M0 "out_proj.weight"
#define QKV2  ATT2 "qkv_proj.weight"
#define FF0   "model.layers.0.feed_forward."
#define FF1   "model.layers.1.feed_forward."
#define W13   FF1 "experts.w13_weight"
#define W2    FF1 "experts.w2_weight"

/* The model's knobs: layer types ('M' mamba, 'A' attention), MoE layers ('E' / 'D'),
 * conv1d bias, in_proj / out_proj biases. */
typedef struct jb_dims {
	const char *types, *moe;
	int conv_bias, proj_bias;
} jb_dims;

static const jb_dims JB_STD __attribute__((unused)) = {"MMAM", "DEDE", 1, 0};

static __attribute__((unused)) void add_mamba(tm_model *m, int i, const jb_dims *o)
{
	char b[200];
	tm_lin_l(m, i, "mamba.in_proj.weight", 512, HID, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "mamba.conv1d.weight");
	tm_add(m, b, WT_DTYPE_INVALID, 3, 256, 1, 4);
	if (o->conv_bias) {
		tm_fmt(b, sizeof(b), TM_L, i, "mamba.conv1d.bias");
		tm_add2(m, b, 256, 0);
	}
	tm_lin_l(m, i, "mamba.x_proj.weight", 40, 256, 0);
	tm_lin_l(m, i, "mamba.dt_proj.weight", 256, 8, 0);
	static const struct {
		const char *n;
		int64_t a, b;
	} t[] = {{"mamba.dt_proj.bias", 256, 0},
	         {"mamba.A_log", 256, 16},
	         {"mamba.D", 256, 0},
	         {"mamba.dt_layernorm.weight", 8, 0},
	         {"mamba.b_layernorm.weight", 16, 0},
	         {"mamba.c_layernorm.weight", 16, 0}};
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		tm_fmt(b, sizeof(b), TM_L, i, t[k].n);
		tm_add2(m, b, t[k].a, t[k].b);
	}
	tm_lin_l(m, i, "mamba.out_proj.weight", HID, 256, 0);
	if (o->proj_bias) {
		tm_fmt(b, sizeof(b), TM_L, i, "mamba.in_proj.bias");
		tm_add2(m, b, 512, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "mamba.out_proj.bias");
		tm_add2(m, b, HID, 0);
	}
}

static __attribute__((unused)) tm_model *tm_jb_d(const jb_dims *o)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "model.embed_tokens.weight", 1003, HID);
	tm_add2(m, "model.final_layernorm.weight", HID, 0);
	tm_add2(m, "lm_head.weight", 1003, HID);
	char b[200];
	for (int i = 0; i < 4; i++) {
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_add2(m, b, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "pre_ff_layernorm.weight");
		tm_add2(m, b, HID, 0);
		if (o->types[i] == 'A') {
			tm_lin_l(m, i, "self_attn.q_proj.weight", 128, HID, 0);
			tm_lin_l(m, i, "self_attn.k_proj.weight", 64, HID, 0);
			tm_lin_l(m, i, "self_attn.v_proj.weight", 64, HID, 0);
			tm_lin_l(m, i, "self_attn.o_proj.weight", HID, 128, 0);
		} else {
			add_mamba(m, i, o);
		}
		if (o->moe[i] == 'E') {
			tm_fmt(b, sizeof(b), TM_L, i, "feed_forward.router.weight");
			tm_add2(m, b, 4, HID);
			tm_experts(m, i, "feed_forward.experts.", 4, 96, HID, "gate_proj",
			           "up_proj", "down_proj");
		} else {
			tm_mlp(m, i, "feed_forward.", 96, HID);
		}
	}
	return m;
}

static __attribute__((unused)) tm_model *tm_jb(void)
{
	return tm_jb_d(&JB_STD);
}

/* Rank r's (tp rank t's) Mamba mixer of layer 0 at TP T: in_proj [x_t; z_t], conv1d and
 * its bias, dt_proj and its bias, A_log and D by channels; x_proj and out_proj by
 * columns; the three norms whole. */
static __attribute__((unused)) void mamba_is(const fx *f, uint32_t r, int64_t t, int64_t T)
{
	int64_t im = 256 / T;
	shp(f, r, INP, 2, 2 * im, HID, 0);
	rows_at(f, r, INP, 0, INP, t * im, im);        /* x */
	rows_at(f, r, INP, im, INP, 256 + t * im, im); /* z */
	shp(f, r, CONV, 3, im, 1, 4);
	rows_at(f, r, CONV, 0, CONV, t * im, im);
	shp(f, r, CONVB, 1, im, 0, 0);
	rows_at(f, r, CONVB, 0, CONVB, t * im, im);
	shp(f, r, XP, 2, 40, im, 0);
	cols_at(f, r, XP, 0, XP, 40, 256, t * im, im);
	shp(f, r, M0 "dt_proj.weight", 2, im, 8, 0);
	static const char *const rows[] = {M0 "dt_proj.weight", M0 "dt_proj.bias", M0 "A_log",
	                                   M0 "D"};
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++)
		rows_at(f, r, rows[k], 0, rows[k], t * im, im);
	shp(f, r, M0 "A_log", 2, im, 16, 0);
	shp(f, r, OUTP, 2, HID, im, 0);
	cols_at(f, r, OUTP, 0, OUTP, HID, 256, t * im, im);
	repl(f, r, M0 "dt_layernorm.weight");
	repl(f, r, M0 "b_layernorm.weight");
	repl(f, r, M0 "c_layernorm.weight");
}

/* Rank r's (tp rank t's) attention of layer 2 at TP T: q heads, the kv head(s) (replicated
 * when T > KV 2), o_proj columns. */
static __attribute__((unused)) void attn_is(const fx *f, uint32_t r, int64_t t, int64_t T)
{
	int64_t hl = 4 / T, kvl = T > 2 ? 1 : 2 / T, ks = T > 2 ? t / (T / 2) : t;
	shp(f, r, QKV2, 2, (hl + 2 * kvl) * 32, HID, 0);
	rows_at(f, r, QKV2, 0, ATT2 "q_proj.weight", t * hl * 32, hl * 32);
	rows_at(f, r, QKV2, hl * 32, ATT2 "k_proj.weight", ks * kvl * 32, kvl * 32);
	rows_at(f, r, QKV2, (hl + kvl) * 32, ATT2 "v_proj.weight", ks * kvl * 32, kvl * 32);
	cols_at(f, r, ATT2 "o_proj.weight", 0, ATT2 "o_proj.weight", HID, 128, t * 128 / T,
	        128 / T);
}

/* Rank r's MLPs at TP T (EP 1, tp rank t): layer 0's dense gate_up_proj [gate_t; up_t] and
 * down_proj's columns; layer 1's expert j w13 slot [gate_j rows; up_j rows], w2 slot
 * down_j's columns; the router whole. */
static __attribute__((unused)) void mlp_is(const fx *f, uint32_t r, int64_t t, int64_t T)
{
	int64_t il = 96 / T;
	shp(f, r, FF0 "gate_up_proj.weight", 2, 2 * il, HID, 0);
	rows_at(f, r, FF0 "gate_up_proj.weight", 0, FF0 "gate_proj.weight", t * il, il);
	rows_at(f, r, FF0 "gate_up_proj.weight", il, FF0 "up_proj.weight", t * il, il);
	cols_at(f, r, FF0 "down_proj.weight", 0, FF0 "down_proj.weight", HID, 96, t * il, il);
	shp(f, r, W13, 3, 4, 2 * il, HID);
	shp(f, r, W2, 3, 4, HID, il);
	for (int64_t j = 0; j < 4; j++) {
		char g[128], u[128], d[128];
		snprintf(g, sizeof(g), FF1 "experts.%lld.gate_proj.weight", (long long)j);
		snprintf(u, sizeof(u), FF1 "experts.%lld.up_proj.weight", (long long)j);
		snprintf(d, sizeof(d), FF1 "experts.%lld.down_proj.weight", (long long)j);
		rows_at(f, r, W13, j * 2 * il, g, t * il, il);
		rows_at(f, r, W13, j * 2 * il + il, u, t * il, il);
		cols_at(f, r, W2, j * HID, d, HID, 96, t * il, il);
	}
	repl(f, r, FF1 "router.weight");
}

#endif
