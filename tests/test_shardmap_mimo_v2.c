/*
 * test_shardmap_mimo_v2.c — MiMo-V2-Flash (MiMoV2FlashForCausalLM, model_type mimo_v2_flash,
 * remote code) cut as vLLM's mimo_v2_flash.py loads it: each layer's attention by its own sizes
 * (hybrid_layer_pattern 1: the SWA attention of swa_num_attention_heads / swa_num_key_value_heads
 * / swa_head_dim / swa_v_head_dim, 0: the full one), q_proj / k_proj / v_proj fused by heads into
 * qkv_proj with v heads v_head_dim rows, o_proj by columns (H x v_head_dim), the SWA layers'
 * attention_sink_bias by heads; moe_layer_freq's layers MiMoV2MoE (mlp.gate and its
 * e_score_correction_bias whole and never quantized, experts stacked), the others a dense mlp;
 * names holding "mtp" and layers past num_hidden_layers dropped. Hand-computed slices at TP 2 /
 * 4 / 8 and TP 2 x EP 2, int8-channel TP 2 and fp8-channel TP 4, coverage over TP 1..8 and EP,
 * the read keys and the refusals (tp_size against an SWA layer's heads naming the swa_* keys).
 * Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#include <cmocka.h>
#include <jansson.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed00a1ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"
#include "test_shardmap_quant.h"

/* hid 128; full attention H 8 / KV 2 / head_dim 32 / v_head_dim 16; SWA H 16 / KV 4 / head_dim
 * 24 / v_head_dim 12; dense I 96; 8 experts of Ie 32; V 1000; 3 layers */
#define HID 128
#define H   8
#define KV  2
#define HD  32
#define VD  16
#define SH  16
#define SKV 4
#define SHD 24
#define SVD 12
#define IE  32
#define NE  8
#define MV_HEAD                                                                                    \
	"{\"architectures\":[\"MiMoV2FlashForCausalLM\"],\"model_type\":\"mimo_v2_flash\","        \
	"\"hidden_size\":128,\"vocab_size\":1000,\"num_hidden_layers\":3,\"intermediate_size\":"   \
	"96,"                                                                                      \
	"\"hidden_act\":\"silu\",\"layernorm_epsilon\":1e-5,\"num_attention_heads\":8,"            \
	"\"num_key_value_heads\":2,\"head_dim\":32"
#define MV_SWA                                                                                     \
	",\"v_head_dim\":16,\"swa_num_attention_heads\":16,\"swa_num_key_value_heads\":4,"         \
	"\"swa_head_dim\":24,\"swa_v_head_dim\":12,\"sliding_window_size\":4"
#define MV_MOE                                                                                     \
	",\"n_routed_experts\":8,\"moe_intermediate_size\":32,\"num_experts_per_tok\":2,"          \
	"\"n_group\":4,\"topk_group\":2,\"norm_topk_prob\":true"
#define MV_CFG(extra) MV_HEAD MV_SWA MV_MOE extra "}"
#define MV_PAT        ",\"hybrid_layer_pattern\":[0,1,0],\"moe_layer_freq\":[0,1,1]"
#define MV_OK         MV_CFG(MV_PAT ",\"add_swa_attention_sink_bias\":true")
#define L0            "model.layers.0."
#define L1            "model.layers.1."
#define L2            "model.layers.2."
#define SINK          L1 "self_attn.attention_sink_bias"
#define GATE          L1 "mlp.gate.weight"
#define EBIAS         L1 "mlp.gate.e_score_correction_bias"
#define EMB           "model.embed_tokens.weight"
#define OUT           "lm_head.weight"
#define FLN           "model.norm.weight"

enum { MV_BIAS = 1, MV_NOSINK = 2 };

/* Routed experts tm_mv builds (test_mv_errors' TP above the experts lowers it). */
static int64_t mv_ne = NE;
/* The SWA layers' q and kv heads tm_mv builds (test_mv_swa_heads changes them). */
static int64_t mv_sh = SH, mv_skv = SKV;

/* Layer i's attention: SWA sizes when bit i of swa is set (with the sinks unless MV_NOSINK), the
 * full ones otherwise; q / k / v biases with MV_BIAS. */
static void mv_attn(tm_model *m, int i, bool swa, int opts)
{
	int64_t h = swa ? mv_sh : H, kv = swa ? mv_skv : KV, d = swa ? SHD : HD,
	        vd = swa ? SVD : VD;
	char b[200];
	const tm_leaf L[] = {{"input_layernorm.weight", HID, 0, 0},
	                     {"post_attention_layernorm.weight", HID, 0, 0},
	                     {"self_attn.q_proj.weight", h * d, HID, 0},
	                     {"self_attn.k_proj.weight", kv * d, HID, 0},
	                     {"self_attn.v_proj.weight", kv * vd, HID, 0},
	                     {"self_attn.o_proj.weight", HID, h * vd, 0},
	                     {"self_attn.q_proj.bias", h * d, 0, MV_BIAS},
	                     {"self_attn.k_proj.bias", kv * d, 0, MV_BIAS},
	                     {"self_attn.v_proj.bias", kv * vd, 0, MV_BIAS}};
	for (size_t k = 0; k < TM_NLEAVES(L); k++)
		if (L[k].when == 0 || (L[k].when & opts)) {
			tm_fmt(b, sizeof(b), TM_L, i, L[k].leaf);
			tm_add2(m, b, L[k].a, L[k].b);
		}
	if (swa && !(opts & MV_NOSINK)) {
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.attention_sink_bias");
		tm_add2(m, b, h, 0);
	}
}

/* Three layers: layer i SWA when bit i of swa is set, MoE (router, its bias, 8 experts) when bit
 * i of moe is, else a dense mlp of 96; untied. */
static tm_model *tm_mv(unsigned swa, unsigned moe, int opts)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	char b[200];
	for (int i = 0; i < 3; i++) {
		mv_attn(m, i, (swa >> i) & 1u, opts);
		if (!((moe >> i) & 1u)) {
			tm_mlp(m, i, "mlp.", 96, HID);
			continue;
		}
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add2(m, b, mv_ne, HID);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.e_score_correction_bias");
		tm_add(m, b, WT_F32, 1, mv_ne, 0, 0);
		tm_experts(m, i, "mlp.experts.", mv_ne, IE, HID, "gate_proj", "up_proj",
		           "down_proj");
	}
	return m;
}

/* Rank r of T's attention of layer prefix p: [q_r; k_r; v_r] with h heads of d rows, kv heads
 * of d rows in k and vd rows in v (replicated when kv < T), o_proj [hid, h vd] by columns;
 * the same of the biases with MV_BIAS. */
static void mv_attn_at(const fx *f, uint32_t r, uint32_t t, uint32_t T, const char *p, int64_t h,
                       int64_t kv, int64_t d, int64_t vd, bool bias)
{
	char qkv[200], q[200], k[200], v[200], o[200];
	int64_t hl = h / T, kvl = kv >= T ? kv / T : 1, g0 = kv >= T ? t * kvl : t / (T / kv);
	for (int w = 0; w <= (bias ? 1 : 0); w++) {
		const char *lf = w ? "bias" : "weight";
		snprintf(qkv, sizeof(qkv), "%sself_attn.qkv_proj.%s", p, lf);
		snprintf(q, sizeof(q), "%sself_attn.q_proj.%s", p, lf);
		snprintf(k, sizeof(k), "%sself_attn.k_proj.%s", p, lf);
		snprintf(v, sizeof(v), "%sself_attn.v_proj.%s", p, lf);
		shp(f, r, qkv, w ? 1 : 2, hl * d + kvl * d + kvl * vd, w ? 0 : HID, 0);
		rows_at(f, r, qkv, 0, q, t * hl * d, hl * d);
		rows_at(f, r, qkv, hl * d, k, g0 * d, kvl * d);
		rows_at(f, r, qkv, hl * d + kvl * d, v, g0 * vd, kvl * vd);
	}
	snprintf(o, sizeof(o), "%sself_attn.o_proj.weight", p);
	shp(f, r, o, 2, HID, h * vd / T, 0);
	cols_at(f, r, o, 0, o, HID, h * vd, t * (h * vd / T), h * vd / T);
}

/* mv_attn_at of rank r, tp rank r (no EP). */
static void mv_attn_is(const fx *f, uint32_t r, uint32_t T, const char *p, int64_t h, int64_t kv,
                       int64_t d, int64_t vd, bool bias)
{
	mv_attn_at(f, r, r, T, p, h, kv, d, vd, bias);
}

static const fx_experts mv_x1 = {L1 "mlp.experts.w13_weight",
                                 L1 "mlp.experts.w2_weight",
                                 L1 "mlp.experts.%lld.%s.weight",
                                 "gate_proj",
                                 "up_proj",
                                 "down_proj",
                                 HID,
                                 IE};

/* Rank r of T (no EP) of tm_mv(2, 6, opts): layers 0 / 2 full, layer 1 SWA with sinks, layer 0
 * dense, layers 1-2 MoE. */
static void rank_is(const fx *f, uint32_t r, uint32_t T, bool bias)
{
	mv_attn_is(f, r, T, L0, H, KV, HD, VD, bias);
	mv_attn_is(f, r, T, L1, SH, SKV, SHD, SVD, bias);
	mv_attn_is(f, r, T, L2, H, KV, HD, VD, bias);
	shp(f, r, SINK, 1, SH / T, 0, 0);
	rows_at(f, r, SINK, 0, SINK, r * (SH / T), SH / T);
	fx_mlp_is(f, r, T, L0 "mlp.", 96, HID);
	repl(f, r, GATE);
	repl(f, r, EBIAS);
	fx_experts_are(f, &mv_x1, r, 0, NE, r * (IE / T), IE / T, false);
	repl(f, r, L1 "input_layernorm.weight");
	repl(f, r, FLN);
	fx_vocab_is(f, r, T, OUT, 1000, 1024, HID);
	fx_vocab_is(f, r, T, EMB, 1000, 1024, HID);
}

/* TP 2 / 4 / 8 (the full layers' 2 kv heads replicated at TP 4 and 8, the SWA layer's 4 at TP
 * 8), the MTP tensors dropped; with attention_bias the q / k / v biases fuse alike. */
static void test_mv_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 8; T *= 2) {
		fx f;
		tm_model *m = tm_mv(2, 6, 0);
		tm_add2(m, "model.mtp.layers.0.input_layernorm.weight", HID, 0);
		tm_add2(m, "model.layers.3.self_attn.q_proj.weight", H * HD, HID);
		fx_open(&f, m, MV_OK, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "mimo_v2_flash");
		for (uint32_t r = 0; r < T; r++)
			rank_is(&f, r, T, false);
		assert_true(fx_skipped(&f, "model.mtp.layers.0.input_layernorm.weight"));
		assert_true(fx_skipped(&f, "model.layers.3.self_attn.q_proj.weight"));
		assert_true(tm_ix(f.p, 0, L0 "mlp.gate.weight") < 0);
		assert_true(tm_ix(f.p, 0, L0 "self_attn.attention_sink_bias") < 0);
		/* embedding, head, final norm; 3 layers of 2 norms, qkv_proj, o_proj; the sinks;
		 * layer 0's gate_up / down; layers 1, 2: router, its bias, 2 stacks */
		assert_int_equal(shardmap_rank_n_tensors(f.p, 0), 3 + 3 * 4 + 1 + 2 + 2 * 4);
		fx_close(&f);
	}
	fx f;
	fx_open(&f, tm_mv(2, 6, MV_BIAS),
	        MV_CFG(MV_PAT ",\"add_swa_attention_sink_bias\":true,"
	                      "\"attention_bias\":true"),
	        4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		rank_is(&f, r, 4, true);
	fx_close(&f);
}

/* The pattern moves the sizes: hybrid_layer_pattern [1, 0, 1] with moe_layer_freq [1, 0, 0]
 * (layer 0 SWA + MoE, layer 1 full + dense), no sinks without add_swa_attention_sink_bias, v
 * heads of head_dim rows without v_head_dim / swa_v_head_dim. */
static void test_mv_layers(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_mv(5, 1, MV_NOSINK),
	        MV_CFG(",\"hybrid_layer_pattern\":[1,0,1],\"moe_layer_freq\":[1,0,0]"), 2, 1, 0,
	        true);
	for (uint32_t r = 0; r < 2; r++) {
		mv_attn_is(&f, r, 2, L0, SH, SKV, SHD, SVD, false);
		mv_attn_is(&f, r, 2, L1, H, KV, HD, VD, false);
		repl(&f, r, L0 "mlp.gate.weight");
		fx_mlp_is(&f, r, 2, L1 "mlp.", 96, HID);
		fx_mlp_is(&f, r, 2, L2 "mlp.", 96, HID);
	}
	fx_close(&f);
	/* moe_layer_freq an integer (or absent): no MoE layer in vLLM's is_moe_layer */
	fx_open(&f, tm_mv(2, 0, 0),
	        MV_HEAD MV_SWA ",\"hybrid_layer_pattern\":[0,1,0],"
	                       "\"add_swa_attention_sink_bias\":true,"
	                       "\"moe_layer_freq\":1}",
	        2, 1, 0, true);
	fx_mlp_is(&f, 1, 2, L2 "mlp.", 96, HID);
	fx_close(&f);
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	for (int i = 0; i < 3; i++) {
		char b[200];
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.v_proj.weight");
		mv_attn(m, i, i == 1, MV_NOSINK);
		tm_remove(m, b);
		tm_add2(m, b, (i == 1 ? SKV * SHD : KV * HD), HID);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.o_proj.weight");
		tm_remove(m, b);
		tm_add2(m, b, HID, i == 1 ? SH * SHD : H * HD);
		tm_mlp(m, i, "mlp.", 96, HID);
	}
	fx_open(&f, m,
	        MV_HEAD ",\"swa_num_attention_heads\":16,\"swa_num_key_value_heads\":4,"
	                "\"swa_head_dim\":24,\"sliding_window_size\":4,"
	                "\"hybrid_layer_pattern\":[0,1,0]}",
	        2, 1, 0, true);
	mv_attn_is(&f, 1, 2, L0, H, KV, HD, HD, false);
	mv_attn_is(&f, 1, 2, L1, SH, SKV, SHD, SHD, false);
	fx_close(&f);
}

/* TP 2 x EP 2: EP rank e holds experts [4e, 4e + 4) whole on both its tp ranks; attention,
 * sinks and router as at TP 2. */
static void test_mv_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_mv(2, 6, 0), MV_OK, 2, 2, 0, true);
	for (uint32_t e = 0; e < 2; e++)
		for (uint32_t t = 0; t < 2; t++) {
			uint32_t r = e * 2 + t;
			fx_experts_are(&f, &mv_x1, r, 4 * e, 4, 0, IE, false);
			mv_attn_at(&f, r, t, 2, L1, SH, SKV, SHD, SVD, false);
			rows_at(&f, r, SINK, 0, SINK, t * (SH / 2), SH / 2);
			repl(&f, r, GATE);
			repl(&f, r, EBIAS);
		}
	fx_close(&f);
}

static const char *const mv_keep[] = {
    EMB, OUT, FLN, GATE, EBIAS, SINK, L1 "input_layernorm.weight"};
static const char *const mv_quant[] = {
    L0 "self_attn.qkv_proj.weight", L1 "self_attn.qkv_proj.weight", L1 "self_attn.o_proj.weight",
    L1 "mlp.experts.w13_weight",    L1 "mlp.experts.w2_weight",     L0 "mlp.gate_up_proj.weight",
    L0 "mlp.down_proj.weight"};

/* int8-channel at TP 2: rank 1's SWA qkv_proj codes q rows 192.., k rows 48.., v rows 24.. (each
 * part its own v_head_dim), o_proj columns 96..; router, its bias, sinks, norms, embedding and
 * head BF16 / as stored. fp8-channel at TP 4: the same split. */
static void test_mv_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_mv(2, 6, 0), MV_OK, 2, WT_QUANT_INT8_CHANNEL, -1, FX_N(mv_keep),
	              FX_N(mv_quant));
	const char *qkv = L1 "self_attn.qkv_proj.weight";
	fx_rows_int8_is(&f, 1, qkv, 0, L1 "self_attn.q_proj.weight", 8 * SHD, 8 * SHD, HID);
	fx_rows_int8_is(&f, 1, qkv, 8 * SHD, L1 "self_attn.k_proj.weight", 2 * SHD, 2 * SHD, HID);
	fx_rows_int8_is(&f, 1, qkv, 10 * SHD, L1 "self_attn.v_proj.weight", 2 * SVD, 2 * SVD, HID);
	fx_rows_int8_is(&f, 1, L0 "self_attn.qkv_proj.weight", 4 * HD + HD,
	                L0 "self_attn.v_proj.weight", VD, VD, HID);
	fx_cols_int8_is(&f, 1, 2, L1 "self_attn.o_proj.weight", HID, SH * SVD);
	fx_close(&f);
	fx_open_quant(&f, tm_mv(2, 6, 0), MV_OK, 4, WT_QUANT_FP8_CHANNEL, -1, FX_N(mv_keep),
	              FX_N(mv_quant));
	fx_close(&f);
}

/* Every element once per rank (kv heads replicated past KV): TP 1..8 and EP where the full and
 * the SWA layers have as many kv heads, TP 1 / 2 and EP where they differ. */
static void test_mv_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 2}, {1, 4}};
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	for (int i = 0; i < 3; i++) {
		char b[200];
		mv_attn(m, i, false, 0);
		if (i == 1) { /* an SWA layer of 16 heads over the full layers' 2 kv heads */
			static const char *const lv[] = {"q_proj.weight", "k_proj.weight",
			                                 "v_proj.weight", "o_proj.weight"};
			const int64_t sz[4][2] = {
			    {SH * SHD, HID}, {KV * SHD, HID}, {KV * SVD, HID}, {HID, SH * SVD}};
			for (int k = 0; k < 4; k++) {
				char leaf[64];
				snprintf(leaf, sizeof(leaf), "self_attn.%s", lv[k]);
				tm_fmt(b, sizeof(b), TM_L, i, leaf);
				tm_remove(m, b);
				tm_add2(m, b, sz[k][0], sz[k][1]);
			}
			tm_add2(m, SINK, SH, 0);
		}
		if (i == 0) {
			tm_mlp(m, i, "mlp.", 96, HID);
			continue;
		}
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add2(m, b, NE, HID);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.e_score_correction_bias");
		tm_add(m, b, WT_F32, 1, NE, 0, 0);
		tm_experts(m, i, "mlp.experts.", NE, IE, HID, "gate_proj", "up_proj", "down_proj");
	}
	coverage(m,
	         MV_HEAD ",\"v_head_dim\":16,\"swa_num_attention_heads\":16,"
	                 "\"swa_num_key_value_heads\":2,\"swa_head_dim\":24,\"swa_v_head_dim\":12,"
	                 "\"sliding_window_size\":4" MV_MOE MV_PAT
	                 ",\"add_swa_attention_sink_bias\":true}",
	         KV, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_mv(2, 6, 0), MV_OK, KV, lays, 2);
	coverage(tm_mv(2, 6, 0), MV_OK, KV, lays + 4, 3);
}

/* MV_OK with key set to the JSON text val (NULL: the key removed), in b (cap bytes). */
static const char *mv_with(char *b, size_t cap, const char *key, const char *val)
{
	json_t *root = json_loads(MV_OK, 0, NULL);
	assert_non_null(root);
	if (val == NULL)
		json_object_del(root, key);
	else
		json_object_set_new(root, key, json_loads(val, JSON_DECODE_ANY, NULL));
	char *txt = json_dumps(root, JSON_COMPACT);
	snprintf(b, cap, "%s", txt);
	free(txt);
	json_decref(root);
	return b;
}

/* Each config refusal names its key. */
static void test_mv_config_refusals(void **state)
{
	(void)state;
	static const struct {
		const char *key, *val;
		int code;
		const char *a, *b;
	} bad[] = {
	    {"hidden_act", "\"gelu\"", WT_EUNSUPPORTED, "hidden_act is not \"silu\"", "MiMoV2MLP"},
	    {"hidden_act", NULL, WT_EUNSUPPORTED, "hidden_act is not \"silu\"", "MiMoV2MLP"},
	    {"tie_word_embeddings", "true", WT_EUNSUPPORTED, "tie_word_embeddings", "never ties"},
	    {"layernorm_epsilon", NULL, WT_ECORRUPT, "layernorm_epsilon is missing",
	     "config.layernorm_epsilon"},
	    {"head_dim", "null", WT_ECORRUPT, "head_dim is missing", "config.head_dim"},
	    {"moe_layer_freq", "\"0,1,1\"", WT_ECORRUPT, "moe_layer_freq is not a list",
	     "indexes it"},
	    {"moe_layer_freq", "[0,\"a\",1]", WT_ECORRUPT, "moe_layer_freq[1]", "0 / 1"},
	    {"n_group", NULL, WT_ECORRUPT, "n_group is missing", "MiMoV2MoE"},
	    {"norm_topk_prob", NULL, WT_ECORRUPT, "norm_topk_prob is missing", "MiMoV2MoE"},
	    {"n_routed_experts", "0", WT_ECORRUPT, "n_routed_experts", "layer 1"},
	    {"hybrid_layer_pattern", NULL, WT_ECORRUPT, "hybrid_layer_pattern is not a list",
	     "at least"},
	    {"hybrid_layer_pattern", "[0,1]", WT_ECORRUPT, "hybrid_layer_pattern is not a list",
	     "(3)"},
	    {"hybrid_layer_pattern", "[0,2,0]", WT_ECORRUPT,
	     "hybrid_layer_pattern[1] is not 0 or 1", "sliding-window"},
	    {"swa_num_attention_heads", NULL, WT_ECORRUPT, "swa_num_attention_heads is missing",
	     "SWA"},
	    {"swa_head_dim", NULL, WT_ECORRUPT, "swa_head_dim is missing", "SWA"},
	    {"sliding_window_size", NULL, WT_ECORRUPT, "sliding_window_size is missing", "window"},
	    {"swa_num_key_value_heads", "3", WT_ECORRUPT,
	     "swa_num_key_value_heads 3 does not divide", "swa_num_attention_heads 16"},
	    {"num_key_value_heads", "3", WT_ECORRUPT, "num_key_value_heads 3 does not divide",
	     "num_attention_heads 8"},
	};
	char cfg[2048];
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		fx_refused(tm_mv(2, 6, 0), mv_with(cfg, sizeof(cfg), bad[k].key, bad[k].val),
		           bad[k].code, bad[k].a, bad[k].b);
}

static void test_mv_errors(void **state)
{
	(void)state;
	tm_model *m = tm_mv(2, 6, 0);
	tm_remove(m, SINK);
	fx_refused(m, MV_OK, WT_ENOTFOUND, "attention_sink_bias", "missing");
	fx_refused(tm_mv(2, 6, 0), MV_CFG(MV_PAT), WT_EUNSUPPORTED, "attention_sink_bias",
	           "add_swa_attention_sink_bias false");
	m = tm_mv(2, 6, 0);
	tm_add2(m, L0 "self_attn.attention_sink_bias", H, 0);
	fx_refused(m, MV_OK, WT_EUNSUPPORTED, L0 "self_attn.attention_sink_bias",
	           "a full-attention layer");
	m = tm_mv(2, 6, 0);
	tm_remove(m, L1 "self_attn.v_proj.weight");
	tm_add2(m, L1 "self_attn.v_proj.weight", SKV * SHD, HID);
	fx_refused(m, MV_OK, WT_ESHAPE, "v_proj", "implies [48, 128]");
	fx_refused(tm_mv(2, 6, MV_BIAS), MV_OK, WT_EUNSUPPORTED, "_proj.bias", "attention_bias");
	m = tm_mv(2, 6, 0);
	tm_remove(m, L2 "mlp.experts.3.up_proj.weight");
	fx_refused(m, MV_OK, WT_ENOTFOUND, "up_proj", "missing");
	m = tm_mv(2, 6, 0);
	tm_add2(m, L1 "mlp.shared_experts.gate_proj.weight", 32, HID);
	fx_refused(m, MV_OK, WT_EUNSUPPORTED, "shared_experts", "unknown");
	fx_refused_tp(tm_mv(2, 6, 0), MV_OK, 3, WT_ELAYOUT, "tp_size 3", "8");
	mv_ne = 4;
	char cfg[2048];
	mv_with(cfg, sizeof(cfg), "n_routed_experts", "4");
	fx_refused_tp(tm_mv(2, 6, 0), cfg, 8, WT_ELAYOUT, "tp_size 8 exceeds the 4 routed experts",
	              "tp_size <= 4");
	fx f;
	fx_open(&f, tm_mv(2, 6, 0), cfg, 4, 1, 0, false);
	fx_close(&f);
	mv_ne = NE;
}

/* tp_size against a sliding-window layer's heads names the swa_* keys, a full layer's the
 * plain ones. */
static void test_mv_swa_heads(void **state)
{
	(void)state;
	static const char all_swa[] =
	    MV_CFG(",\"hybrid_layer_pattern\":[1,1,1],\"moe_layer_freq\":[0,0,0],"
	           "\"add_swa_attention_sink_bias\":true");
	fx_refused_tp(tm_mv(7, 0, 0), all_swa, 3, WT_ELAYOUT, "tp_size 3",
	              "does not divide swa_num_attention_heads 16");
	fx_refused_tp(tm_mv(0, 0, 0),
	              MV_CFG(",\"hybrid_layer_pattern\":[0,0,0],\"moe_layer_freq\":[0,0,0]"), 3,
	              WT_ELAYOUT, "tp_size 3", "does not divide num_attention_heads 8");
	char cfg[2048], cfg2[2048];
	mv_with(cfg2, sizeof(cfg2), "swa_num_attention_heads", "12");
	json_t *root = json_loads(cfg2, 0, NULL);
	assert_non_null(root);
	json_object_set_new(root, "swa_num_key_value_heads", json_integer(6));
	char *txt = json_dumps(root, JSON_COMPACT);
	snprintf(cfg, sizeof(cfg), "%s", txt);
	free(txt);
	json_decref(root);
	mv_sh = 12;
	mv_skv = 6;
	fx_refused_tp(tm_mv(2, 6, 0), cfg, 4, WT_ELAYOUT, "tp_size 4 and swa_num_key_value_heads 6",
	              "one must divide the other");
	fx_refused_tp(tm_mv(2, 6, 0), cfg, 8, WT_ELAYOUT, "tp_size 8",
	              "does not divide swa_num_attention_heads 12");
	mv_sh = SH;
	mv_skv = SKV;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mv_slices),   cmocka_unit_test(test_mv_layers),
	    cmocka_unit_test(test_mv_ep),       cmocka_unit_test(test_mv_quant),
	    cmocka_unit_test(test_mv_coverage), cmocka_unit_test(test_mv_config_refusals),
	    cmocka_unit_test(test_mv_errors),   cmocka_unit_test(test_mv_swa_heads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
