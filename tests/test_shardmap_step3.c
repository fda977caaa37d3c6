/*
 * test_shardmap_step3.c — Step 3's language model (Step3TextForCausalLM, model_type step3_text,
 * remote code: stepfun-ai/step3's text weights) cut as vLLM's step3_text.py loads it:
 * self_attn.q_proj [share_q_dim, hid] / k_proj / v_proj [head_dim, hid] fused whole into
 * qkv_proj on every rank (a ReplicatedLinear, quantized), inter_norm replicated, wq by rows in
 * heads, o_proj by columns; the layers moe_layers_enum names MoE (moe.gate whole and never
 * quantized, the stacked moe.gate_proj / up_proj [E, Ie, hid] into experts.w13_weight and
 * moe.down_proj [E, hid, Ie] into experts.w2_weight, share_expert merged), the others a dense
 * mlp. Hand-computed slices at TP 2 / 4 and TP 2 x EP 2, int8-channel TP 2 and fp8-channel
 * TP 4, coverage over TP 1..8 and EP, Step3TextConfig's defaults and the refusals. Seeds fixed
 * and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0093ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"
#include "test_shardmap_quant.h"

/* hid 128, H 8 of head_dim 16, share_q_dim 64, dense I 96, 4 experts of Ie 32, share_expert_dim
 * 48, V 1000, 3 layers */
#define HID 128
#define HD  16
#define SQ  64
#define IE  32
#define ISH 48
#define S3_HEAD                                                                                    \
	"{\"architectures\":[\"Step3TextForCausalLM\"],\"model_type\":\"step3_text\","             \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"vocab_size\":1000,"                       \
	"\"num_hidden_layers\":3,\"intermediate_size\":96"
#define S3_DIMS       ",\"head_dim\":16,\"moe_num_experts\":4,\"moe_intermediate_size\":32"
#define S3_SH         ",\"share_q_dim\":64,\"share_expert_dim\":48"
#define S3_CFG(extra) S3_HEAD S3_DIMS S3_SH ",\"num_attention_groups\":1,\"moe_top_k\":2" extra "}"
#define S3_OK         S3_CFG(",\"moe_layers_enum\":\"1,2\"")
#define L0            "model.layers.0."
#define L1            "model.layers.1."
#define QKV           L1 "self_attn.qkv_proj.weight"
#define QP            L1 "self_attn.q_proj.weight"
#define KP            L1 "self_attn.k_proj.weight"
#define VP            L1 "self_attn.v_proj.weight"
#define INORM         L1 "self_attn.inter_norm.weight"
#define WQ            L1 "self_attn.wq.weight"
#define OP            L1 "self_attn.o_proj.weight"
#define GATE          L1 "moe.gate.weight"
#define GP            L1 "moe.gate_proj.weight"
#define UP            L1 "moe.up_proj.weight"
#define DP            L1 "moe.down_proj.weight"
#define W13           L1 "moe.experts.w13_weight"
#define W2            L1 "moe.experts.w2_weight"
#define SHX           L1 "share_expert."
#define D0            L0 "mlp."
#define EMB           "model.embed_tokens.weight"
#define OUT           "lm_head.weight"
#define FLN           "model.norm.weight"

/* Three layers; layer i MoE when bit i of moe is set (router, stacked experts, share_expert of
 * 48 rows), else a dense mlp of 96; q_proj of sq rows, k_proj / v_proj of kd rows. */
static tm_model *tm_s3(unsigned moe, int64_t sq, int64_t kd)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1000, HID);
	tm_add2(m, FLN, HID, 0);
	tm_add2(m, OUT, 1000, HID);
	const tm_leaf L[] = {
	    {"input_layernorm.weight", HID, 0, 0},   {"post_attention_layernorm.weight", HID, 0, 0},
	    {"self_attn.q_proj.weight", sq, HID, 0}, {"self_attn.k_proj.weight", kd, HID, 0},
	    {"self_attn.v_proj.weight", kd, HID, 0}, {"self_attn.inter_norm.weight", sq, 0, 0},
	    {"self_attn.wq.weight", 8 * HD, sq, 0},  {"self_attn.o_proj.weight", HID, 8 * HD, 0}};
	tm_layers(m, "model.layers.%d.", 3, L, TM_NLEAVES(L), 0);
	char b[200];
	for (int i = 0; i < 3; i++) {
		if (!(moe & (1u << i))) {
			tm_mlp(m, i, "mlp.", 96, HID);
			continue;
		}
		snprintf(b, sizeof(b), "model.layers.%d.moe.gate.weight", i);
		tm_add2(m, b, 4, HID);
		snprintf(b, sizeof(b), "model.layers.%d.moe.gate_proj.weight", i);
		tm_add(m, b, WT_DTYPE_INVALID, 3, 4, IE, HID);
		snprintf(b, sizeof(b), "model.layers.%d.moe.up_proj.weight", i);
		tm_add(m, b, WT_DTYPE_INVALID, 3, 4, IE, HID);
		snprintf(b, sizeof(b), "model.layers.%d.moe.down_proj.weight", i);
		tm_add(m, b, WT_DTYPE_INVALID, 3, 4, HID, IE);
		tm_mlp(m, i, "share_expert.", ISH, HID);
	}
	return m;
}

/* Rank r's experts j0 .. j0 + count - 1 of layer 1, each's rows / columns [a, a+n) of the stacks
 * (gate rows j Ie + a.., up rows alike, down columns a.. of rows j hid..). */
static void experts_are(const fx *f, uint32_t r, int64_t j0, int64_t count, int64_t a, int64_t n)
{
	shp(f, r, W13, 3, count, 2 * n, HID);
	shp(f, r, W2, 3, count, HID, n);
	for (int64_t s = 0; s < count; s++) {
		int64_t j = j0 + s;
		rows_at(f, r, W13, s * 2 * n, GP, j * IE + a, n);
		rows_at(f, r, W13, s * 2 * n + n, UP, j * IE + a, n);
		cols_at(f, r, W2, s * HID, DP, HID, IE, j * HID * IE + a, n);
	}
}

/* qkv_proj whole: q_proj's 64 rows, then k_proj's 16, then v_proj's 16. */
static void qkv_whole(const fx *f, uint32_t r)
{
	shp(f, r, QKV, 2, SQ + 2 * HD, HID, 0);
	rows_at(f, r, QKV, 0, QP, 0, SQ);
	rows_at(f, r, QKV, SQ, KP, 0, HD);
	rows_at(f, r, QKV, SQ + HD, VP, 0, HD);
}

/* Rank r of T (no EP). */
static void rank_is(const fx *f, uint32_t r, uint32_t T)
{
	qkv_whole(f, r);
	repl(f, r, INORM);
	shp(f, r, WQ, 2, 8 * HD / T, SQ, 0);
	rows_at(f, r, WQ, 0, WQ, r * 8 * HD / T, 8 * HD / T);
	cols_of(f, r, T, OP, OP, HID, 8 * HD);
	fx_mlp_is(f, r, T, D0, 96, HID);
	repl(f, r, GATE);
	experts_are(f, r, 0, 4, r * IE / T, IE / T);
	fx_mlp_is(f, r, T, SHX, ISH, HID);
	repl(f, r, L1 "input_layernorm.weight");
	repl(f, r, FLN);
}

/* TP 2 and 4: vocabulary rows (1000 padded to 1024), layer 0 dense, layers 1-2 MoE. */
static void test_s3_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_s3(6, SQ, HD), S3_OK, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "step3_text");
		for (uint32_t r = 0; r < T; r++)
			rank_is(&f, r, T);
		int64_t Vl = 1024 / T;
		rows_at(&f, T - 1, OUT, 0, OUT, Vl * (T - 1), 1000 - Vl * (T - 1));
		rows_at(&f, 0, EMB, 0, EMB, 0, Vl);
		assert_true(tm_ix(f.p, 0, L0 "moe.gate.weight") < 0);
		assert_true(tm_ix(f.p, 0, L1 "mlp.gate_up_proj.weight") < 0);
		/* embedding, head, final norm; 3 layers of 2 norms, qkv_proj, inter_norm, wq,
		 * o_proj; layer 0's gate_up / down; layers 1, 2: router, 2 stacks, share_expert's
		 * gate_up / down */
		assert_int_equal(shardmap_rank_n_tensors(f.p, 0), 3 + 3 * 6 + 2 + 2 * 5);
		fx_close(&f);
	}
}

/* moe_layers_enum " 0 , 2": layers 0 and 2 MoE, layer 1 dense; a layer it names past the last
 * is no layer (vLLM only asks whether each layer is named). */
static void test_s3_layers(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_s3(5, SQ, HD), S3_CFG(",\"moe_layers_enum\":\" 0 , 2,7,-1\""), 2, 1, 0,
	        true);
	repl(&f, 1, L0 "moe.gate.weight");
	fx_mlp_is(&f, 1, 2, L1 "mlp.", 96, HID);
	assert_true(tm_ix(f.p, 0, L1 "moe.gate.weight") < 0);
	fx_close(&f);
	fx_refused(tm_s3(6, SQ, HD), S3_CFG(",\"moe_layers_enum\":\"2\""), WT_EUNSUPPORTED,
	           L1 "moe.", "moe_layers_enum");
}

/* TP 2 x EP 2: EP rank e holds experts [2e, 2e + 2) whole on both its tp ranks; qkv_proj whole,
 * wq by heads, the router and share_expert as at TP 2. */
static void test_s3_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_s3(6, SQ, HD), S3_OK, 2, 2, 0, true);
	for (uint32_t e = 0; e < 2; e++)
		for (uint32_t t = 0; t < 2; t++) {
			uint32_t r = e * 2 + t;
			experts_are(&f, r, 2 * e, 2, 0, IE);
			qkv_whole(&f, r);
			repl(&f, r, GATE);
			rows_at(&f, r, WQ, 0, WQ, 64 * t, 64);
			rows_at(&f, r, SHX "gate_up_proj.weight", 0, SHX "gate_proj.weight", 24 * t,
			        24);
		}
	fx_close(&f);
}

static const char *const s3_keep[] = {EMB, OUT, FLN, GATE, INORM, L1 "input_layernorm.weight"};
static const char *const s3_quant[] = {QKV,
                                       WQ,
                                       OP,
                                       W13,
                                       W2,
                                       SHX "gate_up_proj.weight",
                                       SHX "down_proj.weight",
                                       D0 "gate_up_proj.weight",
                                       D0 "down_proj.weight"};

/* int8-channel at TP 2: qkv_proj (whole: q rows 0.., k rows, v rows) / wq / o_proj / the stacks
 * / the MLPs per row, the router, inter_norm, norms, embedding and head BF16; rank 1's wq codes
 * rows 64.., its o_proj codes columns 64... fp8-channel at TP 4: the same split. */
static void test_s3_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_s3(6, SQ, HD), S3_OK, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(s3_keep),
	              FX_N(s3_quant));
	fx_rows_int8_is(&f, 1, QKV, 0, QP, 0, SQ, HID);
	fx_rows_int8_is(&f, 1, QKV, SQ, KP, 0, HD, HID);
	fx_rows_int8_is(&f, 1, QKV, SQ + HD, VP, 0, HD, HID);
	fx_rows_int8_is(&f, 1, WQ, 0, WQ, 64, 64, SQ);
	fx_cols_int8_is(&f, 1, 2, OP, HID, 8 * HD);
	fx_close(&f);
	fx_open_quant(&f, tm_s3(6, SQ, HD), S3_OK, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(s3_keep),
	              FX_N(s3_quant));
	fx_close(&f);
}

static void test_s3_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 2}, {1, 4}};
	coverage(tm_s3(6, SQ, HD), S3_OK, 1, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_s3(5, SQ, HD), S3_CFG(",\"moe_layers_enum\":\"0,2\""), 1, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take Step3TextConfig's defaults, each seen in the shape it sizes: share_q_dim
 * 2048, head_dim 256, moe_num_experts 48, share_expert_dim 5120; num_attention_groups 1 and
 * tie_word_embeddings read as false (lm_head kept when config.json ties). */
static void test_s3_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_s3(6, SQ, HD),
	        S3_HEAD S3_DIMS S3_SH ",\"moe_layers_enum\":\"1,2\",\"tie_word_embeddings\":true}",
	        2, 1, 0, true);
	rows_at(&f, 1, OUT, 0, OUT, 512, 1000 - 512);
	qkv_whole(&f, 0);
	fx_close(&f);
	const char *L12 = ",\"moe_layers_enum\":\"1,2\"}";
	char cfg[1024];
	snprintf(cfg, sizeof(cfg), "%s%s%s%s", S3_HEAD, S3_DIMS, ",\"share_expert_dim\":48", L12);
	fx_refused(tm_s3(6, SQ, HD), cfg, WT_ESHAPE, "inter_norm.weight': shape [64]", "[2048]");
	snprintf(cfg, sizeof(cfg), "%s%s%s%s", S3_HEAD,
	         ",\"moe_num_experts\":4,\"moe_intermediate_size\":32", S3_SH, L12);
	fx_refused(tm_s3(6, SQ, HD), cfg, WT_ESHAPE, "k_proj", "256");
	snprintf(cfg, sizeof(cfg), "%s%s%s%s", S3_HEAD,
	         ",\"head_dim\":16,\"moe_intermediate_size\":32", S3_SH, L12);
	fx_refused(tm_s3(6, SQ, HD), cfg, WT_ESHAPE, "moe.down_proj", "[48, 128, 32]");
	snprintf(cfg, sizeof(cfg), "%s%s%s%s", S3_HEAD, S3_DIMS, ",\"share_q_dim\":64", L12);
	fx_refused(tm_s3(6, SQ, HD), cfg, WT_ESHAPE, "share_expert", "5120");
}

/* Each config refusal names its key. */
static void test_s3_config_refusals(void **state)
{
	(void)state;
	fx_refused(tm_s3(6, SQ, HD), S3_CFG(""), WT_ECORRUPT, "moe_layers_enum is missing",
	           "tuple");
	fx_refused(tm_s3(6, SQ, HD), S3_CFG(",\"moe_layers_enum\":[1,2]"), WT_ECORRUPT,
	           "moe_layers_enum is not a string", "commas");
	static const char *const bad[] = {"\"1,,2\"", "\"\"", "\"1,a\"", "\"1,2,\""};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char cfg[1024];
		snprintf(cfg, sizeof(cfg), "%s%s%s%s,\"moe_layers_enum\":%s}", S3_HEAD, S3_DIMS,
		         S3_SH, "", bad[k]);
		fx_refused(tm_s3(6, SQ, HD), cfg, WT_ECORRUPT, "moe_layers_enum", "layer numbers");
	}
	fx_refused(tm_s3(6, SQ, HD), S3_CFG(",\"moe_layers_enum\":\"1,2\",\"hidden_act\":\"gelu\""),
	           WT_EUNSUPPORTED, "hidden_act is not \"silu\"", "silu");
	fx_refused(tm_s3(6, SQ, 2 * HD),
	           S3_HEAD S3_DIMS S3_SH ",\"num_attention_groups\":2,\"moe_layers_enum\":\"1,2\"}",
	           WT_EUNSUPPORTED, "num_attention_groups is 2", "one shared kv head");
	fx_refused(tm_s3(6, SQ, 2 * HD),
	           S3_CFG(",\"moe_layers_enum\":\"1,2\",\"num_key_value_heads\":2"),
	           WT_EUNSUPPORTED, "num_key_value_heads is not 1", "one shared kv head");
	fx_refused(tm_s3(6, SQ, HD),
	           S3_HEAD S3_DIMS ",\"share_q_dim\":0,\"share_expert_dim\":48,"
	                           "\"moe_layers_enum\":\"1,2\"}",
	           WT_ECORRUPT, "share_q_dim is not an integer >= 1", "give");
	fx_refused(tm_s3(6, SQ, HD),
	           S3_HEAD S3_DIMS ",\"share_q_dim\":64,\"share_expert_dim\":null,"
	                           "\"moe_layers_enum\":\"1,2\"}",
	           WT_ECORRUPT, "share_expert_dim is not an integer >= 1", "give");
	fx_refused(tm_s3(6, SQ, HD),
	           S3_HEAD
	           ",\"head_dim\":16,\"moe_num_experts\":0,\"moe_intermediate_size\":32" S3_SH
	           ",\"moe_layers_enum\":\"1,2\"}",
	           WT_ECORRUPT, "moe_num_experts is 0", "layer 1");
}

static void test_s3_errors(void **state)
{
	(void)state;
	tm_model *m = tm_s3(6, SQ, HD);
	tm_remove(m, L1 "self_attn.v_proj.weight");
	fx_refused(m, S3_OK, WT_ENOTFOUND, "v_proj", "missing");
	m = tm_s3(6, SQ, HD);
	tm_remove(m, "model.layers.2.moe.up_proj.weight");
	fx_refused(m, S3_OK, WT_ENOTFOUND, "up_proj", "missing");
	m = tm_s3(6, SQ, HD);
	tm_add2(m, L1 "self_attn.o_proj.bias", HID, 0);
	fx_refused(m, S3_OK, WT_EUNSUPPORTED, "o_proj.bias", "unknown");
	fx_refused(tm_s3(6, 2 * SQ, HD), S3_OK, WT_ESHAPE, "shape [128]", "implies [64]");
	fx_refused_tp(tm_s3(6, SQ, HD), S3_OK, 3, WT_ELAYOUT, "tp_size 3", "8");
	fx_refused_tp(tm_s3(6, SQ, HD), S3_OK, 16, WT_ELAYOUT, "tp_size 16", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_s3_slices),
	    cmocka_unit_test(test_s3_layers),
	    cmocka_unit_test(test_s3_ep),
	    cmocka_unit_test(test_s3_quant),
	    cmocka_unit_test(test_s3_coverage),
	    cmocka_unit_test(test_s3_defaults),
	    cmocka_unit_test(test_s3_config_refusals),
	    cmocka_unit_test(test_s3_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
