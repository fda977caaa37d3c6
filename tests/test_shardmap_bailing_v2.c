/*
 * test_shardmap_bailing_v2.c — Bailing MoE V2 (BailingMoeV2ForCausalLM, model_type
 * bailing_moe_v2, remote code: Ling-mini-2.0, Ling-flash-2.0, Ling-1T) cut as the later vLLM
 * bailing_moe.py loads it: attention.query_key_value by heads into [q_r; k_r; v_r] with kv heads
 * replicated past num_key_value_heads (max(1, KV / tp)), its bias with use_qkv_bias;
 * attention.dense by columns; query_layernorm / key_layernorm replicated with use_qk_norm; a
 * dense MLP below first_k_dense_replace (gate_up_proj merged, intermediate_size); MoE layers
 * above: mlp.gate and mlp.gate.expert_bias replicated and never quantized, experts stacked,
 * shared experts num_shared_experts x moe_shared_expert_intermediate_size merged; the MTP
 * layer (model.layers.{L}) dropped. Hand-computed slices at TP 2 / 4 and TP 2 x EP 2,
 * int8-channel TP 2 and fp8-channel TP 4, coverage over TP 1..8, BailingMoeV2Config's defaults
 * and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0078ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"
#include "test_shardmap_quant.h"

/* hid 128, H 8, head size 16, dense I 96, Ie 32, shared 48, 4 experts, V 1000, 3 layers */
#define HID 128
#define HD  16
#define IE  32
#define ISH 48
#define B2_BASE(extra)                                                                             \
	"{\"architectures\":[\"BailingMoeV2ForCausalLM\"],\"model_type\":\"bailing_moe_v2\","      \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"vocab_size\":1000,"                       \
	"\"num_hidden_layers\":3,\"num_experts\":4,\"num_experts_per_tok\":2,"                     \
	"\"moe_intermediate_size\":32" extra "}"
#define B2_ROUTE ",\"moe_router_enable_expert_bias\":true,\"score_function\":\"sigmoid\""
#define B2_QKN   ",\"use_qk_norm\":true,\"use_rmsnorm\":true"
#define B2_DENSE ",\"first_k_dense_replace\":1,\"intermediate_size\":96"
#define B2_CFG(extra)                                                                              \
	B2_BASE(",\"use_bias\":false,\"num_key_value_heads\":2" B2_DENSE B2_ROUTE extra)
#define SH1   ",\"num_shared_experts\":1,\"moe_shared_expert_intermediate_size\":48"
#define QB    ",\"use_qkv_bias\":true"
#define B2_OK B2_CFG(B2_QKN SH1 QB ",\"num_nextn_predict_layers\":1")
#define L1    "model.layers.1."
#define QKV   L1 "attention.query_key_value.weight"
#define QKVB  L1 "attention.query_key_value.bias"
#define DNS   L1 "attention.dense.weight"
#define QN    L1 "attention.query_layernorm.weight"
#define KN    L1 "attention.key_layernorm.weight"
#define GATE  L1 "mlp.gate.weight"
#define EBIAS L1 "mlp.gate.expert_bias"
#define SHX   L1 "mlp.shared_experts."
#define W13   L1 "mlp.experts.w13_weight"
#define W2    L1 "mlp.experts.w2_weight"
#define D0    "model.layers.0.mlp."
#define EMB   "model.word_embeddings.weight"
#define OUT   "lm_head.weight"
#define FLN   "model.norm.weight"
#define MTP   "model.layers.3."

enum { B_BIAS = 1, B_QKN = 2, B_MTP = 4, B_EBIAS = 8 };
#define B_ALL (B_BIAS | B_QKN | B_MTP | B_EBIAS)

/* Three layers with kv kv heads: layer 0 dense (I 96), layers 1 and 2 MoE (4 experts, the
 * router, its expert_bias with B_EBIAS, a shared expert of sh rows when sh > 0); the q/k/v bias
 * with B_BIAS, the q/k norms with B_QKN, an MTP layer 3 with B_MTP. */
static tm_model *tm_b2(int64_t kv, int opts, int64_t sh)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1000, HID);
	tm_add2(m, FLN, HID, 0);
	tm_add2(m, OUT, 1000, HID);
	const tm_leaf L[] = {{"input_layernorm.weight", HID, 0, 0},
	                     {"post_attention_layernorm.weight", HID, 0, 0},
	                     {"attention.query_key_value.weight", (8 + 2 * kv) * HD, HID, 0},
	                     {"attention.dense.weight", HID, HID, 0},
	                     {"attention.query_key_value.bias", (8 + 2 * kv) * HD, 0, B_BIAS},
	                     {"attention.query_layernorm.weight", HD, 0, B_QKN},
	                     {"attention.key_layernorm.weight", HD, 0, B_QKN}};
	tm_layers(m, "model.layers.%d.", 3, L, TM_NLEAVES(L), opts);
	tm_mlp(m, 0, "mlp.", 96, HID);
	const tm_leaf R[] = {{"mlp.gate.weight", 4, HID, 0},
	                     {"mlp.gate.expert_bias", 4, 0, B_EBIAS}};
	tm_layers(m, "model.layers.%d.", 3, R, TM_NLEAVES(R), opts);
	tm_remove(m, "model.layers.0.mlp.gate.weight");
	if (opts & B_EBIAS)
		tm_remove(m, "model.layers.0.mlp.gate.expert_bias");
	for (int i = 1; i < 3; i++) {
		tm_experts(m, i, "mlp.experts.", 4, IE, HID, "gate_proj", "up_proj", "down_proj");
		if (sh > 0)
			tm_mlp(m, i, "mlp.shared_experts.", sh, HID);
	}
	if (opts & B_MTP) { /* Ling 2.0's MTP layer: no parameter of vLLM's model */
		tm_add2(m, MTP "eh_proj.weight", HID, 2 * HID);
		tm_add2(m, MTP "enorm.weight", HID, 0);
		tm_add2(m, MTP "attention.query_key_value.weight", (8 + 2 * kv) * HD, HID);
		tm_add2(m, MTP "mlp.experts.0.gate_proj.weight", IE, HID);
	}
	return m;
}

static const fx_experts XP = {
    W13, W2, L1 "mlp.experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, IE};

/* Rank r's query_key_value (weight or bias) at TP T with KV kv heads, by hand: q rows
 * [128/T r, +128/T); kv head r KV / T (replicated on T / KV ranks past the kv heads), max(1,
 * KV/T) of them: k rows 128 + 16 h.., v rows 128 + 16 KV + 16 h... */
static void qkv_rows(const fx *f, uint32_t r, uint32_t T, int64_t KV, const char *name)
{
	int64_t hl = 8 / T, kl = KV / T > 0 ? KV / T : 1, h = (int64_t)r * KV / T;
	rows_at(f, r, name, 0, name, hl * HD * r, hl * HD);
	rows_at(f, r, name, hl * HD, name, 8 * HD + h * HD, kl * HD);
	rows_at(f, r, name, (hl + kl) * HD, name, (8 + KV) * HD + h * HD, kl * HD);
}

/* Rank r of T (no EP): attention by heads, q/k norms whole, layer 0's dense MLP by its
 * intermediate, every expert's rows / columns [r Ie/T, +Ie/T), the shared expert's 48 rows by
 * T, router, expert bias and norms whole. */
static void rank_is(const fx *f, uint32_t r, uint32_t T)
{
	int64_t kl = 2 / T > 0 ? 2 / T : 1;
	shp(f, r, QKV, 2, (8 / T + 2 * kl) * HD, HID, 0);
	qkv_rows(f, r, T, 2, QKV);
	qkv_rows(f, r, T, 2, QKVB);
	cols_of(f, r, T, DNS, DNS, HID, HID);
	repl(f, r, QN);
	repl(f, r, KN);
	fx_mlp_is(f, r, T, D0, 96, HID);
	repl(f, r, GATE);
	repl(f, r, EBIAS);
	fx_experts_are(f, &XP, r, 0, 4, r * IE / T, IE / T, false);
	fx_mlp_is(f, r, T, SHX, ISH, HID);
	repl(f, r, L1 "input_layernorm.weight");
	repl(f, r, FLN);
}

/* TP 2 (kv head r on rank r) and TP 4 (kv head r / 2 on ranks 2h, 2h + 1); vocabulary rows: V
 * 1000 padded to 1024, 1024 / T a rank; the MTP layer dropped. */
static void test_b2_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_b2(2, B_ALL, ISH), B2_OK, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "bailing_moe_v2");
		for (uint32_t r = 0; r < T; r++)
			rank_is(&f, r, T);
		int64_t Vl = 1024 / T;
		rows_at(&f, T - 1, OUT, 0, OUT, Vl * (T - 1), 1000 - Vl * (T - 1));
		rows_at(&f, 0, EMB, 0, EMB, 0, Vl);
		assert_true(tm_ix(f.p, 0, "model.layers.0.mlp.gate.weight") < 0);
		assert_true(tm_ix(f.p, 0, MTP "eh_proj.weight") < 0);
		assert_true(tm_ix(f.p, 0, MTP "attention.query_key_value.weight") < 0);
		/* embedding, head, final norm; 3 layers of 2 norms, q/k/v + bias, dense, 2 q/k
		 * norms; layer 0's gate_up / down; layers 1, 2: router, expert bias, 2 stacks,
		 * shared gate_up / down */
		assert_int_equal(shardmap_rank_n_tensors(f.p, 0), 3 + 3 * 7 + 2 + 2 * 6);
		fx_close(&f);
	}
}

/* TP 2 x EP 2: EP rank e holds experts [2e, 2e + 2) whole on both its tp ranks; attention,
 * router, expert bias and the shared expert as at TP 2. */
static void test_b2_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_b2(2, B_ALL, ISH), B2_OK, 2, 2, 0, true);
	for (uint32_t e = 0; e < 2; e++)
		for (uint32_t t = 0; t < 2; t++) {
			uint32_t r = e * 2 + t;
			fx_experts_are(&f, &XP, r, 2 * e, 2, 0, IE, false);
			repl(&f, r, GATE);
			repl(&f, r, EBIAS);
			rows_at(&f, r, QKV, 0, QKV, 64 * t, 64);
			rows_at(&f, r, QKV, 64, QKV, 128 + 16 * t, 16);
			rows_at(&f, r, SHX "gate_up_proj.weight", 0, SHX "gate_proj.weight", 24 * t,
			        24);
		}
	fx_close(&f);
}

static const char *const b2_keep[] = {
    EMB, OUT, FLN, GATE, EBIAS, QKVB, QN, KN, L1 "input_layernorm.weight"};
static const char *const b2_quant[] = {QKV,
                                       DNS,
                                       W13,
                                       W2,
                                       SHX "gate_up_proj.weight",
                                       SHX "down_proj.weight",
                                       D0 "gate_up_proj.weight",
                                       D0 "down_proj.weight"};

/* int8-channel at TP 2: query_key_value / dense / the stacks / shared and dense MLPs per row,
 * the router, its expert bias, the q/k norms, embedding, head and the qkv bias BF16; rank 1's
 * query_key_value codes are q rows 64.., k rows 144.., v rows 176..; its dense codes columns
 * 64... fp8-channel at TP 4: the same split. */
static void test_b2_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_b2(2, B_ALL, ISH), B2_OK, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(b2_keep), FX_N(b2_quant));
	fx_rows_int8_is(&f, 1, QKV, 0, QKV, 64, 64, HID);
	fx_rows_int8_is(&f, 1, QKV, 64, QKV, 144, 16, HID);
	fx_rows_int8_is(&f, 1, QKV, 80, QKV, 176, 16, HID);
	fx_cols_int8_is(&f, 1, 2, DNS, HID, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_b2(2, B_ALL, ISH), B2_OK, 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(b2_keep), FX_N(b2_quant));
	fx_close(&f);
}

static void test_b2_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 2}, {1, 4}};
	coverage(tm_b2(2, B_ALL, ISH), B2_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_b2(4, B_EBIAS, 2 * IE),
	         B2_BASE(",\"use_bias\":false,\"num_key_value_heads\":4" B2_DENSE B2_ROUTE
	                 ",\"num_shared_experts\":2"),
	         4, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take BailingMoeV2Config's defaults: num_shared_experts 0 (a shared expert
 * unknown), moe_shared_expert_intermediate_size moe_intermediate_size (two shared experts one MLP
 * of 2 x Ie rows), use_qkv_bias / use_qk_norm false (bias and norms unknown), num_experts 16 (a
 * router bias of 4 refused by shape), first_k_dense_replace 0 (layer 0's dense MLP unknown). */
static void test_b2_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_b2(2, B_EBIAS, 0), B2_CFG(""), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 1, SHX "gate_up_proj.weight") < 0);
	fx_mlp_is(&f, 1, 2, D0, 96, HID);
	fx_close(&f);
	fx_open(&f, tm_b2(2, B_EBIAS, 2 * IE), B2_CFG(",\"num_shared_experts\":2"), 2, 1, 0, true);
	fx_mlp_is(&f, 1, 2, SHX, 2 * IE, HID);
	fx_close(&f);
	fx_refused(tm_b2(2, B_ALL, ISH), B2_CFG(B2_QKN SH1), WT_EUNSUPPORTED,
	           "query_key_value.bias", "use_qkv_bias");
	fx_refused(tm_b2(2, B_ALL, ISH), B2_CFG(SH1 QB), WT_EUNSUPPORTED, "key_layernorm",
	           "use_qk_norm");
	fx_refused(tm_b2(2, B_ALL, ISH), B2_CFG(B2_QKN QB), WT_EUNSUPPORTED, "shared_experts",
	           "unknown");
	fx_refused(
	    tm_b2(2, B_EBIAS, 0), B2_BASE(",\"use_bias\":false,\"num_key_value_heads\":2" B2_ROUTE),
	    WT_EUNSUPPORTED, "model.layers.0.mlp.", "a MoE layer (see first_k_dense_replace)");
	fx_refused(tm_b2(2, B_EBIAS, 0),
	           "{\"architectures\":[\"BailingMoeV2ForCausalLM\"],\"model_type\":"
	           "\"bailing_moe_v2\",\"hidden_size\":128,\"num_attention_heads\":8,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":3,\"moe_intermediate_size\":32,"
	           "\"use_bias\":false,\"num_key_value_heads\":2" B2_DENSE B2_ROUTE "}",
	           WT_ESHAPE, "mlp.gate.expert_bias", "[16]");
}

/* Each config refusal names its key. */
static void test_b2_config_refusals(void **state)
{
	(void)state;
	fx_refused(tm_b2(2, B_EBIAS, 0), B2_BASE(",\"num_key_value_heads\":2" B2_DENSE B2_ROUTE),
	           WT_EUNSUPPORTED, "use_bias is true", "BailingMoeV2Config's default is true");
	fx_refused(tm_b2(2, B_EBIAS, 0), B2_CFG(",\"tie_word_embeddings\":true"), WT_EUNSUPPORTED,
	           "tie_word_embeddings is true", "give false");
	fx_refused(tm_b2(2, B_EBIAS | B_QKN, 0), B2_CFG(",\"use_qk_norm\":true"), WT_EUNSUPPORTED,
	           "use_rmsnorm is false", "nn.LayerNorm");
	fx_refused(tm_b2(2, B_EBIAS, 0),
	           B2_BASE(",\"use_bias\":false,\"num_key_value_heads\":2" B2_DENSE
	                   ",\"score_function\":\"sigmoid\""),
	           WT_EUNSUPPORTED, "moe_router_enable_expert_bias is false", "expert_bias");
	fx_refused(tm_b2(2, B_EBIAS, 0),
	           B2_BASE(",\"use_bias\":false,\"num_key_value_heads\":2" B2_DENSE
	                   ",\"moe_router_enable_expert_bias\":true"),
	           WT_EUNSUPPORTED, "score_function is not \"sigmoid\"", "softmax");
	fx_refused(tm_b2(2, B_EBIAS, 0), B2_CFG(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act is not \"silu\"", "SiluAndMul");
	fx_refused(tm_b2(2, B_EBIAS, 0), B2_BASE(",\"use_bias\":false" B2_DENSE B2_ROUTE),
	           WT_ECORRUPT, "num_key_value_heads is missing", "default (0)");
	fx_refused(tm_b2(2, B_EBIAS, 0),
	           B2_BASE(",\"use_bias\":false,\"num_key_value_heads\":2,"
	                   "\"first_k_dense_replace\":1" B2_ROUTE),
	           WT_ECORRUPT, "intermediate_size is missing", "default (None)");
	fx_refused(tm_b2(2, B_EBIAS, ISH),
	           B2_CFG(",\"num_shared_experts\":1,"
	                  "\"moe_shared_expert_intermediate_size\":null"),
	           WT_ECORRUPT, "moe_shared_expert_intermediate_size is not an integer", "width");
	fx_refused(tm_b2(2, B_EBIAS, 0),
	           "{\"architectures\":[\"BailingMoeV2ForCausalLM\"],\"model_type\":"
	           "\"bailing_moe_v2\",\"hidden_size\":128,\"num_attention_heads\":8,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":3,\"num_experts\":4,"
	           "\"use_bias\":false,\"num_key_value_heads\":2" B2_DENSE B2_ROUTE "}",
	           WT_ECORRUPT, "moe_intermediate_size is missing", "default (None)");
}

static void test_b2_errors(void **state)
{
	(void)state;
	fx_refused(tm_b2(3, B_EBIAS, 0),
	           B2_BASE(",\"use_bias\":false,\"num_key_value_heads\":3" B2_DENSE B2_ROUTE),
	           WT_ECORRUPT, "num_key_value_heads 3", "num_attention_heads 8");
	fx_refused(tm_b2(2, B_EBIAS, 0),
	           "{\"architectures\":[\"BailingMoeV2ForCausalLM\"],\"model_type\":"
	           "\"bailing_moe_v2\",\"hidden_size\":128,\"num_attention_heads\":8,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":3,\"num_experts\":0,"
	           "\"moe_intermediate_size\":32,\"use_bias\":false,"
	           "\"num_key_value_heads\":2" B2_DENSE B2_ROUTE "}",
	           WT_ECORRUPT, "num_experts is 0", "BailingMoE blocks");
	tm_model *m = tm_b2(2, B_EBIAS, 0);
	tm_add2(m, L1 "attention.dense.bias", HID, 0);
	fx_refused(m, B2_CFG(""), WT_EUNSUPPORTED, "attention.dense.bias", "unknown");
	m = tm_b2(2, B_EBIAS, 0);
	tm_remove(m, "model.layers.2.mlp.gate.expert_bias");
	fx_refused(m, B2_CFG(""), WT_ENOTFOUND, "expert_bias", "missing");
	m = tm_b2(2, B_EBIAS, 0);
	tm_remove(m, L1 "mlp.experts.3.up_proj.weight");
	fx_refused(m, B2_CFG(""), WT_ENOTFOUND, "experts.3.up_proj", "missing");
	/* a layer past num_hidden_layers is an MTP layer, dropped: no error */
	fx f;
	fx_open(&f, tm_b2(2, B_EBIAS | B_MTP, 0), B2_CFG(""), 8, 1, 0, false);
	assert_true(tm_ix(f.p, 7, MTP "enorm.weight") < 0);
	fx_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_b2_slices),   cmocka_unit_test(test_b2_ep),
	    cmocka_unit_test(test_b2_quant),    cmocka_unit_test(test_b2_coverage),
	    cmocka_unit_test(test_b2_defaults), cmocka_unit_test(test_b2_config_refusals),
	    cmocka_unit_test(test_b2_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
