/*
 * test_shardmap_bailing.c — Bailing MoE (BailingMoeForCausalLM, remote code: Ling-lite,
 * Ling-plus, Ling-Coder-lite) cut as the first vLLM bailing_moe.py loads it:
 * attention.query_key_value (contiguous [q; k; v] rows, and its bias with use_qkv_bias) by
 * heads into [q_r; k_r; v_r], never a kv head replicated (vLLM asserts num_key_value_heads %
 * tp_size == 0); attention.dense by columns; every layer MoE: mlp.gate replicated and never
 * quantized, mlp.experts.{j} stacked as w13_weight / w2_weight (TP inside the experts, whole
 * experts per EP rank), mlp.shared_experts merged into gate_up_proj; the norms replicated;
 * word_embeddings / lm_head by vocabulary rows, lm_head as stored whatever norm_head says.
 * Hand-computed slices at TP 2 and TP 4 and TP 2 x EP 2, int8-channel and fp8-channel layouts,
 * coverage over TP 1..4, BailingMoeConfig's defaults and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0077ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 128, H 8, head size 16, Ie 32, 4 experts, V 1000, 2 layers */
#define HID 128
#define HD  16
#define IE  32
#define BL_BASE(extra)                                                                             \
	"{\"architectures\":[\"BailingMoeForCausalLM\"],\"model_type\":\"bailing_moe\","           \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"vocab_size\":1000,"                       \
	"\"num_hidden_layers\":2,\"num_experts\":4,\"num_experts_per_tok\":2,"                     \
	"\"moe_intermediate_size\":32" extra "}"
#define BL_CFG(extra) BL_BASE(",\"use_bias\":false,\"num_key_value_heads\":4" extra)
#define SH1           ",\"num_shared_experts\":1"
#define QB            ",\"use_qkv_bias\":true"
#define BL_OK         BL_CFG(SH1 QB)
#define L1            "model.layers.1."
#define QKV           L1 "attention.query_key_value.weight"
#define QKVB          L1 "attention.query_key_value.bias"
#define DNS           L1 "attention.dense.weight"
#define GATE          L1 "mlp.gate.weight"
#define SHX           L1 "mlp.shared_experts."
#define W13           L1 "mlp.experts.w13_weight"
#define W2            L1 "mlp.experts.w2_weight"
#define EMB           "model.word_embeddings.weight"
#define OUT           "lm_head.weight"
#define FLN           "model.norm.weight"

/* The model with kv kv heads; query_key_value.bias when bias, the shared expert (of ns x Ie
 * rows) when ns > 0. */
static tm_model *tm_bailing(int64_t kv, int bias, int64_t ns)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1000, HID);
	tm_add2(m, FLN, HID, 0);
	tm_add2(m, OUT, 1000, HID);
	const tm_leaf L[] = {{"input_layernorm.weight", HID, 0, 0},
	                     {"post_attention_layernorm.weight", HID, 0, 0},
	                     {"attention.query_key_value.weight", (8 + 2 * kv) * HD, HID, 0},
	                     {"attention.dense.weight", HID, HID, 0},
	                     {"mlp.gate.weight", 4, HID, 0},
	                     {"attention.query_key_value.bias", (8 + 2 * kv) * HD, 0, 1}};
	tm_layers(m, "model.layers.%d.", 2, L, TM_NLEAVES(L), bias);
	for (int i = 0; i < 2; i++) {
		tm_experts(m, i, "mlp.experts.", 4, IE, HID, "gate_proj", "up_proj", "down_proj");
		if (ns > 0)
			tm_mlp(m, i, "mlp.shared_experts.", ns * IE, HID);
	}
	return m;
}

static const fx_experts XP = {
    W13, W2, L1 "mlp.experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, IE};

/* Rank r's query_key_value (weight or bias) at TP T with KV >= T kv heads, by hand: q rows
 * [128/T * r, +128/T), then k rows 128 + 16 * (KV/T) r.., v rows 128 + 16 KV + 16 (KV/T) r... */
static void qkv_rows(const fx *f, uint32_t r, uint32_t T, int64_t KV, const char *name)
{
	int64_t hl = 8 / T, kl = KV / T;
	rows_at(f, r, name, 0, name, hl * HD * r, hl * HD);
	rows_at(f, r, name, hl * HD, name, 8 * HD + kl * r * HD, kl * HD);
	rows_at(f, r, name, (hl + kl) * HD, name, (8 + KV) * HD + kl * r * HD, kl * HD);
}

/* Rank r of T (no EP): attention by heads, every expert's rows / columns [r Ie/T, +Ie/T), the
 * shared expert's [gate_r; up_r] and down columns, router and norms whole. */
static void rank_is(const fx *f, uint32_t r, uint32_t T)
{
	int64_t hl = 8 / T, kl = 4 / T;
	shp(f, r, QKV, 2, (hl + 2 * kl) * HD, HID, 0);
	shp(f, r, QKVB, 1, (hl + 2 * kl) * HD, 0, 0);
	qkv_rows(f, r, T, 4, QKV);
	qkv_rows(f, r, T, 4, QKVB);
	cols_of(f, r, T, DNS, DNS, HID, HID);
	repl(f, r, GATE);
	fx_experts_are(f, &XP, r, 0, 4, r * IE / T, IE / T, false);
	fx_mlp_is(f, r, T, SHX, IE, HID);
	repl(f, r, L1 "input_layernorm.weight");
	repl(f, r, L1 "post_attention_layernorm.weight");
	repl(f, r, FLN);
}

/* TP 2 and TP 4 with 4 kv heads: at TP 2 rank r holds q rows 64r.., k heads 2r, 2r + 1; at TP
 * 4 q rows 32r.. and kv head r; vocabulary rows: V 1000 padded to 1024, 1024 / T a rank. */
static void test_bailing_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_bailing(4, 1, 1), BL_OK, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "bailing_moe");
		for (uint32_t r = 0; r < T; r++)
			rank_is(&f, r, T);
		int64_t Vl = 1024 / T;
		shp(&f, T - 1, OUT, 2, Vl, HID, 0);
		rows_at(&f, T - 1, OUT, 0, OUT, Vl * (T - 1), 1000 - Vl * (T - 1));
		rows_at(&f, 0, OUT, 0, OUT, 0, Vl);
		rows_at(&f, 0, EMB, 0, EMB, 0, Vl);
		/* embedding, head, final norm; 2 layers of 2 norms, q/k/v + bias, dense, router,
		 * 2 stacks, shared gate_up / down */
		assert_int_equal(shardmap_rank_n_tensors(f.p, 0), 3 + 2 * 10);
		fx_close(&f);
	}
}

/* TP 2 x EP 2: EP rank e holds experts [2e, 2e + 2) whole on both of its tp ranks; attention
 * (tp rank t: q rows 64t.., k rows 128 + 32t..), router and the shared expert as at TP 2. TP 1 x EP
 * 2 the same experts, attention whole. */
static void test_bailing_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_bailing(4, 1, 1), BL_OK, 2, 2, 0, true);
	for (uint32_t e = 0; e < 2; e++)
		for (uint32_t t = 0; t < 2; t++) {
			uint32_t r = e * 2 + t;
			fx_experts_are(&f, &XP, r, 2 * e, 2, 0, IE, false);
			repl(&f, r, GATE);
			rows_at(&f, r, QKV, 0, QKV, 64 * t, 64);
			rows_at(&f, r, QKV, 64, QKV, 128 + 32 * t, 32);
			rows_at(&f, r, SHX "gate_up_proj.weight", 0, SHX "gate_proj.weight", 16 * t,
			        16);
			rows_at(&f, r, SHX "gate_up_proj.weight", 16, SHX "up_proj.weight", 16 * t,
			        16);
		}
	fx_close(&f);
	fx_open(&f, tm_bailing(4, 1, 1), BL_OK, 1, 2, 0, true);
	for (uint32_t e = 0; e < 2; e++) {
		fx_experts_are(&f, &XP, e, 2 * e, 2, 0, IE, false);
		repl(&f, e, QKV);
	}
	fx_close(&f);
}

static const char *const bl_keep[] = {
    EMB, OUT, FLN, GATE, QKVB, L1 "input_layernorm.weight", L1 "post_attention_layernorm.weight"};
static const char *const bl_quant[] = {
    QKV, DNS, W13, W2, SHX "gate_up_proj.weight", SHX "down_proj.weight"};

/* int8-channel at TP 2: query_key_value / dense / the expert stacks / the shared expert
 * quantized per row, the router (ReplicatedLinear with quant_config None), embedding, head,
 * norms and the qkv bias BF16; rank 1's query_key_value codes are q rows 64.., k rows 192..,
 * v rows 256... fp8-channel at TP 4: the same split. */
static void test_bailing_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_bailing(4, 1, 1), BL_OK, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(bl_keep), FX_N(bl_quant));
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, QKV);
	const float *sc = (const float *)out_bytes(&f, 1, QKV "_scale");
	static const int64_t src0[] = {64, 160, 224}, at[] = {0, 64, 96}, n[] = {64, 32, 32};
	for (int part = 0; part < 3; part++)
		for (int64_t row = 0; row < n[part]; row++) {
			size_t rowb;
			const uint16_t *x =
			    (const uint16_t *)src_rows(&f, QKV, src0[part] + row, &rowb);
			int8_row_is(q + (at[part] + row) * HID, sc[at[part] + row], x, HID);
		}
	fx_close(&f);
	fx_open_quant(&f, tm_bailing(4, 1, 1), BL_OK, 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(bl_keep), FX_N(bl_quant));
	fx_close(&f);
}

static void test_bailing_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2}, {2, 2}, {1, 4}};
	coverage(tm_bailing(4, 1, 1), BL_OK, 4, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_bailing(8, 0, 2),
	         BL_BASE(",\"use_bias\":false,\"num_key_value_heads\":8,"
	                 "\"num_shared_experts\":2"),
	         8, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take BailingMoeConfig's defaults: num_shared_experts 0 (a shared expert
 * unknown), use_qkv_bias false (the bias unknown), num_experts 16 (a router of 4 rows
 * refused by shape), norm_head read by nothing (lm_head as stored); two shared experts are one MLP
 * of 2 x Ie rows. */
static void test_bailing_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_bailing(4, 0, 0), BL_CFG(",\"norm_head\":true"), 2, 1, 0, true);
	rows_at(&f, 1, OUT, 0, OUT, 512, 488);
	assert_true(tm_ix(f.p, 1, SHX "gate_up_proj.weight") < 0);
	fx_close(&f);
	fx_open(&f, tm_bailing(4, 1, 2), BL_CFG(QB ",\"num_shared_experts\":2"), 2, 1, 0, true);
	fx_mlp_is(&f, 1, 2, SHX, 2 * IE, HID);
	fx_close(&f);
	fx_refused(tm_bailing(4, 1, 1), BL_CFG(SH1), WT_EUNSUPPORTED, "query_key_value.bias",
	           "use_qkv_bias");
	fx_refused(tm_bailing(4, 1, 1), BL_CFG(QB), WT_EUNSUPPORTED, "shared_experts", "unknown");
	tm_model *m = tm_bailing(4, 1, 1);
	fx_refused(m,
	           "{\"architectures\":[\"BailingMoeForCausalLM\"],\"model_type\":\"bailing_moe\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"vocab_size\":1000,"
	           "\"num_hidden_layers\":2,\"moe_intermediate_size\":32,\"use_bias\":false,"
	           "\"num_key_value_heads\":4" SH1 QB "}",
	           WT_ESHAPE, "mlp.gate.weight", "[16, 128]");
}

static void test_bailing_errors(void **state)
{
	(void)state;
	fx_refused(tm_bailing(4, 1, 1), BL_BASE(",\"num_key_value_heads\":4" SH1 QB),
	           WT_EUNSUPPORTED, "use_bias is true", "BailingMoeConfig's default is true");
	fx_refused(tm_bailing(4, 1, 1),
	           BL_BASE(",\"num_key_value_heads\":4,\"use_bias\":true" SH1 QB), WT_EUNSUPPORTED,
	           "use_bias is true", "give false");
	fx_refused(tm_bailing(4, 1, 1), BL_CFG(SH1 QB ",\"tie_word_embeddings\":true"),
	           WT_EUNSUPPORTED, "tie_word_embeddings is true", "give false");
	fx_refused(tm_bailing(4, 1, 1), BL_CFG(SH1 QB ",\"first_k_dense_replace\":1"),
	           WT_EUNSUPPORTED, "first_k_dense_replace is not 0", "MoE block");
	fx_refused(tm_bailing(4, 1, 1), BL_CFG(SH1 QB ",\"use_qk_norm\":true"), WT_EUNSUPPORTED,
	           "use_qk_norm is true", "no q/k norms");
	fx_refused(tm_bailing(4, 1, 1), BL_CFG(SH1 QB ",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act is not \"silu\"", "SiluAndMul");
	fx_refused(tm_bailing(4, 1, 1), BL_BASE(",\"use_bias\":false" SH1 QB), WT_ECORRUPT,
	           "num_key_value_heads is missing", "default (0)");
	fx_refused(tm_bailing(4, 1, 1),
	           "{\"architectures\":[\"BailingMoeForCausalLM\"],\"model_type\":\"bailing_moe\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"vocab_size\":1000,"
	           "\"num_hidden_layers\":2,\"num_experts\":4,\"use_bias\":false,"
	           "\"num_key_value_heads\":4" SH1 QB "}",
	           WT_ECORRUPT, "moe_intermediate_size is missing", "default (None)");
	fx_refused(tm_bailing(4, 1, 1),
	           "{\"architectures\":[\"BailingMoeForCausalLM\"],\"model_type\":\"bailing_moe\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"vocab_size\":1000,"
	           "\"num_hidden_layers\":2,\"num_experts\":0,\"moe_intermediate_size\":32,"
	           "\"use_bias\":false,\"num_key_value_heads\":4" SH1 QB "}",
	           WT_ECORRUPT, "num_experts is 0", "MoE block");
	fx_refused(tm_bailing(3, 1, 1),
	           BL_BASE(",\"use_bias\":false,\"num_key_value_heads\":3" SH1 QB), WT_ECORRUPT,
	           "num_key_value_heads 3", "num_attention_heads 8");
	fx_refused_tp(tm_bailing(4, 1, 1), BL_OK, 8, WT_ELAYOUT,
	              "tp_size 8 does not divide num_key_value_heads 4", "bailing_moe.py");
	fx_refused_tp(tm_bailing(2, 1, 1),
	              BL_BASE(",\"use_bias\":false,\"num_key_value_heads\":2" SH1 QB), 4,
	              WT_ELAYOUT, "tp_size 4 does not divide num_key_value_heads 2",
	              "no kv head is replicated");
	tm_model *m = tm_bailing(4, 1, 1);
	tm_add2(m, L1 "attention.dense.bias", HID, 0);
	fx_refused(m, BL_OK, WT_EUNSUPPORTED, "attention.dense.bias", "unknown");
	m = tm_bailing(4, 1, 1);
	tm_remove(m, L1 "mlp.experts.3.up_proj.weight");
	fx_refused(m, BL_OK, WT_ENOTFOUND, "experts.3.up_proj", "missing");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bailing_slices),   cmocka_unit_test(test_bailing_ep),
	    cmocka_unit_test(test_bailing_quant),    cmocka_unit_test(test_bailing_coverage),
	    cmocka_unit_test(test_bailing_defaults), cmocka_unit_test(test_bailing_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
