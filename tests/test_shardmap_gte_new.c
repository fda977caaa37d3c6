/*
 * test_shardmap_gte_new.c — GteNewModel (Alibaba-NLP/gte-base-en-v1.5, gte-large-en-v1.5,
 * gte-multilingual-base: remote NewModel code served by vLLM as GteNewModel) cut as vLLM's
 * bert_with_rope.py loads it: word_embeddings (and token_type_embeddings when type_vocab_size >
 * 0) by padded rows; each layer's packed attention.qkv_proj re-cut into attn.qkv_proj
 * [q_r; k_r; v_r] by heads with its bias; attention.o_proj as attn.out_proj and mlp.down_proj by
 * columns with their biases whole; mlp.up_gate_proj [up; gate] re-merged into mlp.gate_up_proj
 * [gate_r; up_r] without a bias; the LayerNorms whole; encoder.layer renamed encoder.layers; the
 * "new." prefix of the classifier's base model stripped; pooler / classifier tensors skipped;
 * every Linear quantized. Hand slices at TP 2 and 4, int8-channel TP 2, fp8-channel TP 4,
 * coverage at TP 1, 2, 4, 8, NewConfig's class defaults, and every refusal. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x67e1ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

#include "test_shardmap_gte_fx.h"

/* Rank r of T by hand (names without a prefix): qkv_proj rows [p*HID + r*HID/T, +HID/T) of the
 * packed tensor for q, k, v (its bias alike); out_proj / down_proj columns; gate_up_proj the gate
 * half's rows [I + r*I/T, +I/T) then the up half's [r*I/T, +I/T); the LayerNorms and the other
 * biases whole; the tables by padded rows (100 -> 128, types -> 64). */
static void check_rank(const fx *f, uint32_t T, uint32_t r, int64_t types)
{
	int64_t ql = HID / T, il = I / T;
	shp(f, r, QKV, 2, 3 * ql, HID, 0);
	shp(f, r, QKVB, 1, 3 * ql, 0, 0);
	for (int p = 0; p < 3; p++) {
		rows_at(f, r, QKV, p * ql, L1C "attention.qkv_proj.weight", p * HID + r * ql, ql);
		rows_at(f, r, QKVB, p * ql, L1C "attention.qkv_proj.bias", p * HID + r * ql, ql);
	}
	cols_of(f, r, T, OP, L1C "attention.o_proj.weight", HID, HID);
	shp(f, r, GU, 2, 2 * il, HID, 0);
	rows_at(f, r, GU, 0, UG, I + r * il, il);
	rows_at(f, r, GU, il, UG, r * il, il);
	cols_of(f, r, T, DP, L1C "mlp.down_proj.weight", HID, I);
	static const char *const whole[][2] = {
	    {"embeddings.LayerNorm.weight", "embeddings.LayerNorm.weight"},
	    {"embeddings.LayerNorm.bias", "embeddings.LayerNorm.bias"},
	    {OB, L1C "attention.o_proj.bias"},
	    {DPB, L1C "mlp.down_proj.bias"},
	    {L1 "attn_ln.weight", L1C "attn_ln.weight"},
	    {L1 "attn_ln.bias", L1C "attn_ln.bias"},
	    {L1 "mlp_ln.weight", L1C "mlp_ln.weight"},
	    {L1 "mlp_ln.bias", L1C "mlp_ln.bias"}};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++)
		repl_from(f, r, whole[k][0], whole[k][1]);
	fx_vocab_is(f, r, T, EMB, 100, 128, HID);
	if (types > 0)
		fx_vocab_is(f, r, T, TT, types, 64, HID);
	else
		assert_true(tm_ix(f->p, r, TT) < 0);
	assert_true(tm_ix(f->p, r, L1 "mlp.gate_up_proj.bias") < 0 && tm_ix(f->p, r, UG) < 0 &&
	            tm_ix(f->p, r, L1C "attn_ln.weight") < 0);
	/* word table, LayerNorm 2 (+ token types); a layer's qkv + bias, out + bias, gate_up,
	 * down + bias, four norms */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 3 + (types > 0) + 2 * 11);
}

static void test_gte_new_slices(void **state)
{
	(void)state;
	for (int64_t types = 0; types <= 1; types++)
		for (uint32_t T = 2; T <= 4; T *= 2) {
			fx f;
			fx_open(&f, tm_gt("", 2, types, 0),
			        types ? GT_CFG(",\"type_vocab_size\":1") : GT_CFG(TV0), T, 1, 0,
			        true);
			assert_string_equal(shardmap_family(f.p), "gte_new");
			for (uint32_t r = 0; r < T; r++)
				check_rank(&f, T, r, types);
			assert_int_equal(shardmap_n_skipped(f.p), 0);
			fx_close(&f);
		}
}

/* The "new." layout (NewForSequenceClassification's base model) cuts byte for byte as the
 * unprefixed one; pooler.* is skipped, as GteNewModel's load_weights drops it, and so is
 * classifier.* of an unprefixed checkpoint. */
static void test_gte_new_layouts(void **state)
{
	(void)state;
	fx a, b;
	fx_open(&a, tm_gt("", 2, 0, 0), GT_CFG(TV0), 2, 1, 0, true);
	fx_open(&b, tm_gt("new.", 2, 0, GT_POOLER), GT_CFG(TV0), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	assert_int_equal(shardmap_n_skipped(b.p), 2);
	assert_true(fx_skipped(&b, "new.pooler.dense.weight") &&
	            fx_skipped(&b, "new.pooler.dense.bias"));
	fx_close(&b);
	fx_open(&b, tm_gt("", 2, 0, GT_POOLER | GT_CLS), GT_CFG(TV0), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	assert_int_equal(shardmap_n_skipped(b.p), 4);
	assert_true(fx_skipped(&b, "classifier.weight") && fx_skipped(&b, "pooler.dense.bias"));
	fx_close(&a);
	fx_close(&b);
}

static const char *const gt_keep[] = {
    EMB, "embeddings.LayerNorm.weight", L1 "attn_ln.bias", QKVB, OB, DPB};
static const char *const gt_quant[] = {QKV, OP, GU, DP};

/* int8-channel at TP 2: qkv_proj / out_proj / gate_up_proj / down_proj quantized per row, the
 * biases, table and LayerNorms BF16; rank 1's gate_up_proj codes are the gate half's rows
 * [144, 192) then the up half's [48, 96). fp8-channel at TP 4: the same split. */
static void test_gte_new_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_gt("", 2, 0, 0), GT_CFG(TV0), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(gt_keep), FX_N(gt_quant));
	fx_rows_int8_is(&f, 1, GU, 0, UG, I + I / 2, I / 2, HID);
	fx_rows_int8_is(&f, 1, GU, I / 2, UG, I / 2, I / 2, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_gt("", 2, 0, 0), GT_CFG(TV0), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(gt_keep), FX_N(gt_quant));
	fx_close(&f);
}

static void test_gte_new_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_gt("", 2, 0, 0), GT_CFG(TV0), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_gt("new.", 2, 2, 0), GT_CFG(",\"type_vocab_size\":2"), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* What vLLM's GteNewModelConfig asserts or bert_with_rope.py cannot build. */
static const struct {
	const char *extra, *key, *what;
} gt_refusals[] = {
    {",\"hidden_act\":\"silu\"", "hidden_act \"silu\"", "gelu"},
    {",\"layer_norm_type\":\"rms_norm\"", "layer_norm_type \"rms_norm\"", "nn.LayerNorm"},
    {",\"position_embedding_type\":\"absolute\"", "position_embedding_type", "rotary"},
    {",\"pack_qkv\":false", "pack_qkv false", "packed"},
    {",\"logn_attention_scale\":true", "logn_attention_scale true", "log n"},
};

static void test_gte_new_errors(void **state)
{
	(void)state;
	char cfg[1024];
	for (size_t i = 0; i < sizeof(gt_refusals) / sizeof(gt_refusals[0]); i++) {
		snprintf(cfg, sizeof(cfg), GT_CFG(TV0 "%s"), gt_refusals[i].extra);
		fx_refused(tm_gt("", 2, 0, 0), cfg, WT_EUNSUPPORTED, gt_refusals[i].key,
		           gt_refusals[i].what);
	}
	/* the accepted forms: gelu, layer_norm, rotary, pack_qkv true, no log-n scale, the kernel
	 * switches */
	fx f;
	fx_open(&f, tm_gt("", 2, 0, 0),
	        GT_CFG(TV0 ",\"hidden_act\":\"gelu\",\"layer_norm_type\":\"layer_norm\","
	                   "\"position_embedding_type\":\"rotary\",\"pack_qkv\":true,"
	                   "\"logn_attention_scale\":false,\"unpad_inputs\":true,"
	                   "\"use_memory_efficient_attention\":true"),
	        2, 1, 0, true);
	fx_close(&f);
	fx_refused(tm_gt("", 2, 0, 0), GT_CFG(TV0 ",\"hidden_act\":1"), WT_ECORRUPT, "hidden_act",
	           "not a string");
	fx_refused(tm_gt("", 2, 0, 0), GT_CFG(TV0 ",\"pack_qkv\":\"yes\""), WT_ECORRUPT, "pack_qkv",
	           "");
	fx_refused(tm_gt("", 2, 0, 0), GT_CFG(",\"type_vocab_size\":-1"), WT_ECORRUPT,
	           "type_vocab_size", "");
	/* a token-type table the config does not build, and one it needs */
	fx_refused(tm_gt("", 2, 2, 0), GT_CFG(TV0), WT_EUNSUPPORTED, TT, "type_vocab_size is 0");
	fx_refused(tm_gt("", 2, 0, 0), GT_CFG(",\"type_vocab_size\":2"), WT_ENOTFOUND, TT,
	           "missing");
	fx_refused(tm_gt("", 2, 0, 0), GT_CFG(TV0 ",\"num_key_value_heads\":2"), WT_EUNSUPPORTED,
	           "num_key_value_heads", "one key / value head");
	fx_refused(tm_gt("", 2, 0, 0), GT_RAW(TV0 ",\"intermediate_size\":90"), WT_ESHAPE,
	           "mlp.down_proj.weight", "[64, 90]");
	fx_refused_tp(tm_gt("", 2, 0, 0), GT_CFG(TV0), 16, WT_ELAYOUT, "tp_size 16",
	              "use tp_size 1, 2, 4 or 8");
	fx_refused(tm_gt("", 2, 0, 0), GT_ARCH("NewModel", ",\"intermediate_size\":96" TV0),
	           WT_EUNSUPPORTED, "'NewModel'", "");
}

/* NewConfig's class defaults (the remote configuration.py): type_vocab_size 1, so one token type
 * row cut as the vocabulary is; intermediate_size 3072, 12 layers, hidden_size 768 where absent. */
static void test_gte_new_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_gt("", 2, 1, 0), GT_CFG(""), 2, 1, 0, true);
	fx_vocab_is(&f, 0, 2, TT, 1, 64, HID);
	fx_close(&f);
	fx_refused(tm_gt("", 2, 0, 0), GT_CFG(""), WT_ENOTFOUND, TT, "missing");
	fx_refused(tm_gt("", 2, 0, 0), GT_RAW(TV0), WT_ESHAPE, "[64, 3072]", "fix config.json");
	fx_refused(tm_gt("", 2, 0, 0),
	           "{\"architectures\":[\"GteNewModel\"],\"model_type\":\"new\",\"hidden_size\":64,"
	           "\"num_attention_heads\":8,\"vocab_size\":100,\"intermediate_size\":96" TV0 "}",
	           WT_ENOTFOUND, "encoder.layer.2", "missing");
	fx_refused(
	    tm_gt("", 2, 0, 0),
	    "{\"architectures\":[\"GteNewModel\"],\"model_type\":\"new\",\"num_attention_"
	    "heads\":8,\"num_hidden_layers\":2,\"vocab_size\":100,\"intermediate_size\":96" TV0 "}",
	    WT_ESHAPE, "768", "fix config.json");
}

/* GteModel (vLLM's SnowflakeGteNewModel) under GteConfig (model_type gte) with every key given:
 * each rank byte for byte GteNewModel's, plain and int8-channel, at TP 2 and 4. */
#define SF_KEYS                                                                                    \
	"\"hidden_size\":64,\"num_attention_heads\":8,\"num_hidden_layers\":2,\"vocab_size\":100," \
	"\"intermediate_size\":96,\"max_position_embeddings\":8192,\"type_vocab_size\":0,"         \
	"\"layer_norm_eps\":1e-12,\"rope_theta\":160000,\"hidden_act\":\"gelu\""
#define SF_CFG(extra) "{\"architectures\":[\"GteModel\"],\"model_type\":\"gte\"," SF_KEYS extra "}"

static void test_gte_snowflake(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2)
		for (int q = 0; q < 2; q++) {
			wt_layout l;
			wt_layout_init(&l);
			l.tp_size = T;
			l.quant = q ? WT_QUANT_INT8_CHANNEL : WT_QUANT_NONE;
			fx a, b;
			fx_open_l(&a, tm_gt("", 2, 0, GT_POOLER), GT_CFG(TV0), &l, true);
			fx_open_l(&b, tm_gt("", 2, 0, GT_POOLER), SF_CFG(""), &l, true);
			assert_string_equal(shardmap_family(b.p), "gte_new");
			for (uint32_t r = 0; r < T; r++)
				fx_same_rank(&a, &b, r, NULL);
			assert_true(fx_skipped(&b, "pooler.dense.weight"));
			fx_close(&a);
			fx_close(&b);
		}
	/* GteNewModel's mapper strips new., SnowflakeGteNewModel's does not: vLLM cannot load it */
	fx_refused(tm_gt("new.", 2, 0, 0), SF_CFG(""), WT_EUNSUPPORTED, "tensor 'new.",
	           "does not strip 'new.'");
	/* GteConfig's defaults are not known: every key a default would fill is required */
	static const char *const keys[] = {"vocab_size",          "hidden_size",
	                                   "intermediate_size",   "num_hidden_layers",
	                                   "num_attention_heads", "max_position_embeddings",
	                                   "type_vocab_size",     "layer_norm_eps",
	                                   "rope_theta",          "hidden_act"};
	char cfg[1024], k[64];
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(cfg, sizeof(cfg), SF_CFG(""));
		snprintf(k, sizeof(k), "\"%s\":", keys[i]);
		char *at = strstr(cfg, k);
		assert_non_null(at);
		memcpy(at + 1, "x_", 2); /* the key renamed away: absent */
		snprintf(k, sizeof(k), "'%s' is missing", keys[i]);
		fx_refused(tm_gt("", 2, 0, 0), cfg, WT_ENOTFOUND, k, "GteConfig");
	}
	/* NewConfig's switches hold for GteConfig too (vLLM asserts gelu for both) */
	fx_refused(tm_gt("", 2, 0, 0), SF_CFG(",\"pack_qkv\":false"), WT_EUNSUPPORTED, "pack_qkv",
	           "packed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gte_new_slices), cmocka_unit_test(test_gte_new_layouts),
	    cmocka_unit_test(test_gte_new_quant),  cmocka_unit_test(test_gte_new_coverage),
	    cmocka_unit_test(test_gte_new_errors), cmocka_unit_test(test_gte_new_defaults),
	    cmocka_unit_test(test_gte_snowflake),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
