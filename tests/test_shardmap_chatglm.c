/*
 * test_shardmap_chatglm.c — ChatGLM / GLM-4 in THUDM's original format (ChatGLMModel,
 * ChatGLMForConditionalGeneration, remote code: glm-4-9b-chat, chatglm3-6b) cut as vLLM's
 * chatglm.py loads it: self_attention.query_key_value (contiguous [q; k; v] rows, and its
 * bias) by heads into [q_r; k_r; v_r] (the kv heads replicated when KV < T); dense by columns;
 * mlp.dense_h_to_4h ([gate; up]) into [gate_r; up_r], dense_4h_to_h by columns; the norms
 * replicated; word_embeddings / output_layer by vocabulary rows, output_layer dropped when
 * tied; rotary_pos_emb.inv_freq dropped. Hand-computed slices at TP 2 and TP 4, int8-channel
 * and fp8-channel layouts, coverage over TP 1..8, ChatGLMConfig's defaults and the refusals.
 * Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0042ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, head size 16, I 192, V 1000, 2 layers */
#define HID 128
#define HD  16
#define I   192
#define CG_BASE(extra)                                                                             \
	"{\"architectures\":[\"ChatGLMModel\"],\"model_type\":\"chatglm\",\"hidden_size\":128,"    \
	"\"ffn_hidden_size\":192,\"num_attention_heads\":8,\"padded_vocab_size\":1000,"            \
	"\"num_layers\":2" extra "}"
#define CG_CFG_RAW(extra) CG_BASE(",\"kv_channels\":16" extra)
#define CG_CFG(extra)     CG_CFG_RAW(",\"original_rope\":true,\"tie_word_embeddings\":false" extra)
#define KV2               ",\"multi_query_attention\":true,\"multi_query_group_num\":2"
#define QB                ",\"add_qkv_bias\":true"
#define L1                "transformer.encoder.layers.1."
#define QKV               L1 "self_attention.query_key_value.weight"
#define QKVB              L1 "self_attention.query_key_value.bias"
#define DNS               L1 "self_attention.dense.weight"
#define H4H               L1 "mlp.dense_h_to_4h.weight"
#define FHH               L1 "mlp.dense_4h_to_h.weight"
#define EMB               "transformer.embedding.word_embeddings.weight"
#define OUT               "transformer.output_layer.weight"
#define FLN               "transformer.encoder.final_layernorm.weight"

/* The model with kv kv heads; query_key_value.bias when bias, output_layer when head. */
static tm_model *tm_chatglm(int64_t kv, int bias, int head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1000, HID);
	tm_add2(m, FLN, HID, 0);
	if (head)
		tm_add2(m, OUT, 1000, HID);
	const tm_leaf L[] = {{"input_layernorm.weight", HID, 0, 0},
	                     {"post_attention_layernorm.weight", HID, 0, 0},
	                     {"self_attention.query_key_value.weight", (8 + 2 * kv) * HD, HID, 0},
	                     {"self_attention.dense.weight", HID, HID, 0},
	                     {"mlp.dense_h_to_4h.weight", 2 * I, HID, 0},
	                     {"mlp.dense_4h_to_h.weight", HID, I, 0},
	                     {"self_attention.query_key_value.bias", (8 + 2 * kv) * HD, 0, 1}};
	tm_layers(m, "transformer.encoder.layers.%d.", 2, L, TM_NLEAVES(L), bias);
	return m;
}

/* Rank r's query_key_value (weight or bias) at TP T with kv heads KV, by hand: q rows
 * [128/T * r, +128/T), then the k / v rows of kv head g = r * KV / T (r / (T / KV) when
 * KV < T): 128 + 16g and 128 + 16*KV + 16g. */
static void qkv_rows(const fx *f, uint32_t r, uint32_t T, int64_t KV, const char *name)
{
	int64_t hl = 8 / T, kl = KV >= T ? KV / T : 1, g = KV >= T ? r * kl : r / (T / KV);
	rows_at(f, r, name, 0, name, hl * HD * r, hl * HD);
	rows_at(f, r, name, hl * HD, name, 8 * HD + g * HD, kl * HD);
	rows_at(f, r, name, (hl + kl) * HD, name, (8 + KV) * HD + g * HD, kl * HD);
}

/* TP 2 and TP 4 with 2 kv heads: at TP 2 rank r holds q rows 64r.., k head r, v head r; at
 * TP 4 q rows 32r.. and kv head r / 2, replicated on ranks 2g, 2g + 1; the bias alike;
 * dense_h_to_4h rank r: gate rows [I/T r, +I/T) then up rows I + [I/T r, +I/T). */
static void test_chatglm_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_chatglm(2, 1, 1), CG_CFG(KV2 QB), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "chatglm");
		for (uint32_t r = 0; r < T; r++) {
			int64_t hl = 8 / T, g = r / (T / 2);
			shp(&f, r, QKV, 2, (hl + 2) * HD, HID, 0);
			shp(&f, r, QKVB, 1, (hl + 2) * HD, 0, 0);
			rows_at(&f, r, QKV, 0, QKV, hl * HD * r, hl * HD);
			rows_at(&f, r, QKV, hl * HD, QKV, 128 + 16 * g, HD);
			rows_at(&f, r, QKV, (hl + 1) * HD, QKV, 160 + 16 * g, HD);
			qkv_rows(&f, r, T, 2, QKVB);
			cols_of(&f, r, T, DNS, DNS, HID, HID);
			shp(&f, r, H4H, 2, 2 * I / T, HID, 0);
			rows_at(&f, r, H4H, 0, H4H, I / T * r, I / T);
			rows_at(&f, r, H4H, I / T, H4H, I + I / T * r, I / T);
			cols_of(&f, r, T, FHH, FHH, HID, I);
			repl(&f, r, L1 "input_layernorm.weight");
			repl(&f, r, L1 "post_attention_layernorm.weight");
			repl(&f, r, FLN);
		}
		/* vocabulary rows: V 1000 padded to 1024, 1024 / T a rank, the last rank's past
		 * 1000 zero */
		int64_t Vl = 1024 / T;
		shp(&f, T - 1, OUT, 2, Vl, HID, 0);
		rows_at(&f, T - 1, OUT, 0, OUT, Vl * (T - 1), 1000 - Vl * (T - 1));
		rows_at(&f, 0, EMB, 0, EMB, 0, Vl);
		fx_close(&f);
	}
}

/* TP 8 (each kv head on four ranks, one q head a rank) and 8 kv heads (multi_query_attention
 * false) at TP 4; tied: output_layer not emitted, and a checkpoint's copy dropped; the
 * remote code's rotary_pos_emb.inv_freq dropped. */
static void test_chatglm_replicated(void **state)
{
	(void)state;
	fx f;
	tm_model *m = tm_chatglm(2, 1, 0);
	tm_add2(m, "transformer.rotary_pos_emb.inv_freq", 4, 0);
	fx_open(&f, m, CG_CFG_RAW(KV2 QB ",\"original_rope\":true"), 8, 1, 0, true);
	for (uint32_t r = 0; r < 8; r++) {
		shp(&f, r, QKV, 2, 3 * HD, HID, 0);
		qkv_rows(&f, r, 8, 2, QKV);
		qkv_rows(&f, r, 8, 2, QKVB);
		assert_true(tm_ix(f.p, r, OUT) < 0);
		assert_true(tm_ix(f.p, r, "transformer.rotary_pos_emb.inv_freq") < 0);
	}
	assert_true(fx_skipped(&f, "transformer.rotary_pos_emb.inv_freq"));
	fx_close(&f);
	fx_open(&f, tm_chatglm(8, 0, 1),
	        CG_CFG_RAW(",\"original_rope\":true,\"tie_word_embeddings\":true"), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, QKV, 2, 6 * HD, HID, 0);
		qkv_rows(&f, r, 4, 8, QKV);
		assert_true(tm_ix(f.p, r, OUT) < 0 && tm_ix(f.p, r, QKVB) < 0);
	}
	assert_true(fx_skipped(&f, OUT));
	fx_close(&f);
}

static const char *const cg_keep[] = {
    EMB, OUT, FLN, L1 "input_layernorm.weight", L1 "post_attention_layernorm.weight", QKVB};
static const char *const cg_quant[] = {QKV, DNS, H4H, FHH};

/* int8-channel at TP 2: query_key_value / dense / dense_h_to_4h / dense_4h_to_h quantized per
 * row, the embedding, output_layer, norms and the qkv bias BF16; rank 1's query_key_value
 * codes are q rows 64.., k rows 144.., v rows 176... fp8-channel at TP 4: the same split. */
static void test_chatglm_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_chatglm(2, 1, 1), CG_CFG(KV2 QB), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(cg_keep), FX_N(cg_quant));
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, QKV);
	const float *sc = (const float *)out_bytes(&f, 1, QKV "_scale");
	static const int64_t src0[] = {64, 144, 176}, at[] = {0, 64, 80}, n[] = {64, 16, 16};
	for (int part = 0; part < 3; part++)
		for (int64_t row = 0; row < n[part]; row++) {
			size_t rowb;
			const uint16_t *x =
			    (const uint16_t *)src_rows(&f, QKV, src0[part] + row, &rowb);
			int8_row_is(q + (at[part] + row) * HID, sc[at[part] + row], x, HID);
		}
	fx_close(&f);
	fx_open_quant(&f, tm_chatglm(2, 1, 1), CG_CFG(KV2 QB), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(cg_keep), FX_N(cg_quant));
	fx_close(&f);
}

static void test_chatglm_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_chatglm(2, 1, 1), CG_CFG(KV2 QB), 2, lays, 2); /* KV < T: the tests above */
	coverage(tm_chatglm(8, 1, 1), CG_CFG(QB), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take ChatGLMConfig's defaults: multi_query_attention false (the kv heads are
 * the heads, multi_query_group_num ignored), add_qkv_bias false (a bias unknown), tied
 * (PretrainedConfig's: output_layer dropped), chatglm2-6b's dims (vocab 65024, kv_channels 128). */
static void test_chatglm_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_chatglm(8, 0, 1),
	        CG_CFG_RAW(",\"original_rope\":true,\"multi_query_group_num\":2"), 2, 1, 0, true);
	shp(&f, 1, QKV, 2, 12 * HD, HID, 0);
	assert_true(tm_ix(f.p, 1, OUT) < 0);
	assert_true(fx_skipped(&f, OUT));
	fx_close(&f);
	/* chatglm3-6b's config.json names ChatGLMModel, glm-4-9b-chat's auto_map the other */
	fx_open(&f, tm_chatglm(2, 1, 1),
	        "{\"architectures\":[\"ChatGLMForConditionalGeneration\"],\"model_type\":"
	        "\"chatglm\",\"hidden_size\":128,\"ffn_hidden_size\":192,\"num_attention_heads\":8,"
	        "\"kv_channels\":16,\"padded_vocab_size\":1000,\"num_layers\":2,"
	        "\"original_rope\":true,\"tie_word_embeddings\":false" KV2 QB "}",
	        2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "chatglm");
	fx_close(&f);
	fx_refused(tm_chatglm(8, 1, 0), CG_CFG(""), WT_EUNSUPPORTED, "query_key_value.bias",
	           "add_qkv_bias");
	fx_refused(tm_chatglm(8, 0, 1),
	           "{\"architectures\":[\"ChatGLMModel\"],\"model_type\":\"chatglm\","
	           "\"hidden_size\":128,\"ffn_hidden_size\":192,\"num_attention_heads\":8,"
	           "\"kv_channels\":16,\"num_layers\":2,\"original_rope\":true,"
	           "\"vocab_size\":1000}",
	           WT_ESHAPE, "[65024, 128]", "fix config.json");
	fx_refused(tm_chatglm(8, 0, 1), CG_BASE(",\"original_rope\":true"), WT_EUNSUPPORTED,
	           "kv_channels 128", "fix kv_channels");
}

static void test_chatglm_errors(void **state)
{
	(void)state;
	fx_refused(tm_chatglm(2, 1, 1), CG_CFG(KV2 QB ",\"add_bias_linear\":true"), WT_EUNSUPPORTED,
	           "add_bias_linear is true", "\"add_bias_linear\": false");
	fx_refused(tm_chatglm(2, 1, 1), CG_CFG(KV2 QB ",\"rmsnorm\":false"), WT_EUNSUPPORTED,
	           "rmsnorm is false", "\"rmsnorm\": true");
	fx_refused(tm_chatglm(2, 1, 1), CG_CFG(KV2 QB ",\"post_layer_norm\":false"),
	           WT_EUNSUPPORTED, "post_layer_norm is false", "\"post_layer_norm\": true");
	fx_refused(tm_chatglm(2, 1, 1), CG_CFG_RAW(KV2 QB ",\"tie_word_embeddings\":false"),
	           WT_EUNSUPPORTED, "original_rope is absent", "\"original_rope\": true");
	fx_refused(tm_chatglm(2, 1, 1), CG_CFG(KV2 QB ",\"vision_config\":{\"hidden_size\":64}"),
	           WT_EUNSUPPORTED, "vision_config", "GLM-4V");
	fx_refused(tm_chatglm(2, 1, 1),
	           CG_BASE(",\"original_rope\":true" KV2 QB ",\"kv_channels\":32"), WT_EUNSUPPORTED,
	           "kv_channels 32", "fix kv_channels");
	fx_refused(tm_chatglm(2, 1, 1),
	           CG_CFG(QB ",\"multi_query_attention\":true,\"multi_query_group_num\":3"),
	           WT_ECORRUPT, "multi_query_group_num 3", "num_attention_heads 8");
	fx_refused(tm_chatglm(2, 1, 1),
	           CG_CFG(QB ",\"multi_query_attention\":true,"
	                     "\"multi_query_group_num\":4"),
	           WT_ESHAPE, "query_key_value", "[256]");
	tm_model *m = tm_chatglm(2, 1, 1);
	tm_add2(m, L1 "self_attention.dense.bias", HID, 0);
	fx_refused(m, CG_CFG(KV2 QB), WT_EUNSUPPORTED, "self_attention.dense.bias", "unknown");
	m = tm_chatglm(2, 1, 1);
	tm_remove(m, FHH);
	fx_refused(m, CG_CFG(KV2 QB), WT_ENOTFOUND, "dense_4h_to_h", "missing");
	m = tm_chatglm(2, 1, 1);
	tm_remove(m, QKVB);
	fx_refused(m, CG_CFG(KV2 QB), WT_ENOTFOUND, "query_key_value.bias", "missing");
	fx_refused_tp(tm_chatglm(2, 1, 1), CG_CFG(KV2 QB), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_chatglm(2, 1, 1), CG_CFG(KV2 QB), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_chatglm_slices),   cmocka_unit_test(test_chatglm_replicated),
	    cmocka_unit_test(test_chatglm_quant),    cmocka_unit_test(test_chatglm_coverage),
	    cmocka_unit_test(test_chatglm_defaults), cmocka_unit_test(test_chatglm_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
