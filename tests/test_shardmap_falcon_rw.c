/*
 * test_shardmap_falcon_rw.c — Falcon's original releases (RWForCausalLM, remote code: model_type
 * RefinedWeb for tiiuae/falcon-40b, RefinedWebModel for falcon-7b and falcon-rw-1b / 7b), which
 * vLLM's registry maps onto falcon.py's FalconForCausalLM and reads through its stored RWConfig:
 * n_layer / n_head / n_head_kv / n_embed, parallel_attn false and n_head_kv 1 by default, the new
 * decoder architecture forced at hidden_size 8192. The three layouts (falcon-40b's n_head_kv
 * groups, falcon-7b's multi_query, falcon-rw-1b's per head with biases and ALiBi) cut by hand at
 * TP 2 / 4 and byte for byte as the same checkpoint under FalconForCausalLM's keys; int8-channel
 * TP 2, fp8-channel TP 4, coverage TP 1..8, RWConfig's defaults and the refusals. Seeds fixed and
 * printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0048ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_falcon.h"

#define RW_CFG(mt, extra)                                                                          \
	"{\"architectures\":[\"RWForCausalLM\"],\"model_type\":\"" mt "\","                        \
	"\"hidden_size\":128,\"n_head\":8,\"vocab_size\":1000,\"n_layer\":2" extra "}"
/* falcon-40b's config.json (new_decoder_architecture given: RWConfig sets it by itself only at
 * hidden_size 8192), falcon-7b's, falcon-rw-1b's (parallel_attn absent: RWConfig's false) */
#define RW40                                                                                       \
	RW_CFG("RefinedWeb", ",\"n_head_kv\":2,\"new_decoder_architecture\":true,"                 \
	                     "\"parallel_attn\":true,\"bias\":false,\"alibi\":false")
#define RW7  RW_CFG("RefinedWebModel", ",\"multi_query\":true,\"parallel_attn\":true")
#define RW1B RW_CFG("RefinedWebModel", ",\"multi_query\":false,\"bias\":true,\"alibi\":true")
/* the same checkpoints under FalconForCausalLM's keys (test_shardmap_falcon.c's) */
#define FLC(extra)                                                                                 \
	"{\"architectures\":[\"FalconForCausalLM\"],\"model_type\":\"falcon\","                    \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"vocab_size\":1000,"                       \
	"\"num_hidden_layers\":2" extra "}"
#define FL40 FLC(",\"new_decoder_architecture\":true,\"num_kv_heads\":2")
#define FL7  FLC("")
#define FL1B FLC(",\"multi_query\":false,\"parallel_attn\":false,\"bias\":true,\"alibi\":true")

/* falcon-40b's layout: rank r's [q_r; k_r; v_r] of the groups, dense / dense_4h_to_h by
 * columns, dense_h_to_4h by rows, ln_attn / ln_mlp whole; at TP 2, 4 and 8 every rank as
 * FalconForCausalLM's. */
static void test_rw_40b(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_falcon(K_NDA, 0), RW40, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "falcon");
		for (uint32_t r = 0; r < T; r++) {
			int64_t kvl = 2 >= T ? 2 / T : 1;
			shp(&f, r, QKV, 2, (8 / T + 2 * kvl) * HD, HID, 0);
			qkv_is(&f, r, T, 2, QKV);
			cols_of(&f, r, T, DENSE, DENSE, HID, HID);
			rows_are(&f, r, L1 "mlp.dense_h_to_4h.weight", 0,
			         L1 "mlp.dense_h_to_4h.weight", I4 / T * r, I4 / T);
			cols_of(&f, r, T, L1 "mlp.dense_4h_to_h.weight",
			        L1 "mlp.dense_4h_to_h.weight", HID, I4);
			repl(&f, r, L1 "ln_attn.weight");
			repl(&f, r, L1 "ln_mlp.bias");
			assert_true(tm_ix(f.p, r, QKVB) < 0);
			assert_true(tm_ix(f.p, r, "lm_head.weight") < 0); /* tied */
		}
		fx_close(&f);
	}
	for (uint32_t T = 2; T <= 8; T *= 2)
		fx_same_layouts(tm_falcon(K_NDA, 0), NULL, RW40, tm_falcon(K_NDA, 0), FL40, T, 1,
		                "");
}

/* falcon-7b's multi_query layout ([q; k; v], the one kv head on every rank, one
 * input_layernorm) at TP 2 by hand, and at TP 2 / 8 as FalconForCausalLM's. */
static void test_rw_7b(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_falcon(K_MQ, 0), RW7, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, QKV, 2, (4 + 2) * HD, HID, 0);
		rows_at(&f, r, QKV, 0, QKV, 64 * r, 64); /* q heads 4r.. */
		rows_at(&f, r, QKV, 64, QKV, 128, 32);   /* k and v */
		repl(&f, r, L1 "input_layernorm.weight");
		assert_true(tm_ix(f.p, r, L1 "ln_attn.weight") < 0);
	}
	fx_close(&f);
	fx_same_layouts(tm_falcon(K_MQ, 0), NULL, RW7, tm_falcon(K_MQ, 0), FL7, 2, 1, "");
	fx_same_layouts(tm_falcon(K_MQ, 0), NULL, RW7, tm_falcon(K_MQ, 0), FL7, 8, 1, "");
}

/* falcon-rw-1b's layout ([H, 3, d] with biases, input_layernorm and post_attention_layernorm:
 * RWConfig's parallel_attn false) at TP 4, as FalconForCausalLM's with the switches spelled. */
static void test_rw_1b(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_falcon(K_RW, 0), RW1B, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, QKV, 2, 3 * 2 * HD, HID, 0);
		qkv_is(&f, r, 4, 8, QKV);
		qkv_is(&f, r, 4, 8, QKVB);
		repl(&f, r, L1 "self_attention.dense.bias");
		repl(&f, r, L1 "post_attention_layernorm.bias");
	}
	fx_close(&f);
	fx_same_layouts(tm_falcon(K_RW, 0), NULL, RW1B, tm_falcon(K_RW, 0), FL1B, 4, 1, "");
}

static const char *const rw_keep[] = {"transformer.word_embeddings.weight",
                                      "transformer.ln_f.weight", L1 "ln_attn.weight",
                                      L1 "ln_mlp.bias"};
static const char *const rw_quant[] = {QKV, DENSE, L1 "mlp.dense_h_to_4h.weight",
                                       L1 "mlp.dense_4h_to_h.weight"};

/* int8-channel at TP 2: the four Linear weights per row, the embedding and LayerNorms BF16;
 * rank 1's dense codes are its columns; fp8-channel at TP 4: the same split. */
static void test_rw_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_falcon(K_NDA, 0), RW40, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(rw_keep), FX_N(rw_quant));
	fx_cols_int8_is(&f, 1, 2, DENSE, HID, HID);
	fx_cols_int8_is(&f, 0, 2, L1 "mlp.dense_4h_to_h.weight", HID, I4);
	fx_close(&f);
	fx_open_quant(&f, tm_falcon(K_NDA, 0), RW40, 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(rw_keep), FX_N(rw_quant));
	fx_close(&f);
}

static void test_rw_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_falcon(K_NDA, 0), RW40, 2, lays, 2); /* KV >= T; KV < T: fx_same_layouts */
	coverage(tm_falcon(K_MQ, 0), RW7, 1, lays, 1);
	coverage(tm_falcon(K_RW, 0), RW1B, 8, lays, sizeof(lays) / sizeof(lays[0]));
}

/* config.json text cfg parsed: kv heads, falcon_ln, the sizes */
static void rw_parsed(const char *cfg, int64_t kv, int ln, int64_t hid, int64_t H, int64_t L,
                      int64_t V)
{
	ckpt_config c;
	wt_errbuf err = {0};
	int rv = ckpt_config_parse(cfg, strlen(cfg), &c, &err);
	if (rv != WT_OK)
		fail_msg("%s: %s", cfg, err.msg);
	assert_int_equal(c.num_key_value_heads, kv);
	assert_int_equal(c.falcon_ln, ln);
	assert_int_equal(c.hidden_size, hid);
	assert_int_equal(c.num_attention_heads, H);
	assert_int_equal(c.num_hidden_layers, L);
	assert_int_equal(c.vocab_size, V);
	assert_int_equal(c.intermediate_size, 4 * hid);
	ckpt_config_clear(&c);
}

#define RWB(mt, extra) "{\"architectures\":[\"RWForCausalLM\"],\"model_type\":\"" mt "\"" extra "}"

/* RWConfig's defaults (vocab 250880, hidden_size 64, 2 layers, 8 heads, multi_query, parallel_attn
 * false: the sequential LayerNorms, falcon_ln 3); n_embed over hidden_size, the attribute_map's
 * names over n_layer / n_head / n_head_kv; n_head_kv 1 under the new architecture; the new
 * architecture forced at hidden_size 8192 even when the key says false. */
static void test_rw_defaults(void **state)
{
	(void)state;
	rw_parsed(RWB("RefinedWebModel", ""), 1, 3, 64, 8, 2, 250880);
	rw_parsed(RWB("RefinedWebModel", ",\"parallel_attn\":true,\"multi_query\":false"), 8, 1, 64,
	          8, 2, 250880);
	rw_parsed(RWB("RefinedWebModel", ",\"hidden_size\":96,\"n_embed\":128,\"n_head\":4,"
	                                 "\"num_attention_heads\":2,\"n_layer\":3"),
	          1, 3, 128, 2, 3, 250880);
	rw_parsed(RWB("RefinedWeb", ",\"new_decoder_architecture\":true,\"parallel_attn\":true"), 1,
	          2, 64, 8, 2, 250880);
	rw_parsed(RWB("RefinedWeb", ",\"new_decoder_architecture\":true,\"parallel_attn\":true,"
	                            "\"n_head_kv\":8,\"num_kv_heads\":4"),
	          4, 2, 64, 8, 2, 250880);
	/* falcon-40b's own config.json: no new_decoder_architecture key */
	rw_parsed(RWB("RefinedWeb", ",\"hidden_size\":8192,\"n_head\":128,\"n_head_kv\":8,"
	                            "\"n_layer\":60,\"vocab_size\":65024,\"parallel_attn\":true"),
	          8, 2, 8192, 128, 60, 65024);
	rw_parsed(RWB("RefinedWebModel",
	              ",\"hidden_size\":8192,\"n_head\":64,\"n_head_kv\":4,"
	              "\"new_decoder_architecture\":false,\"parallel_attn\":true"),
	          4, 2, 8192, 64, 2, 250880);
	/* the checkpoint's 1000 rows are not RWConfig's vocab_size */
	fx_refused(
	    tm_falcon(K_MQ, 0),
	    RWB("RefinedWebModel", ",\"hidden_size\":128,\"n_head\":8,\"parallel_attn\":true"),
	    WT_ESHAPE, "[250880, 128]", "fix config.json");
}

static void test_rw_errors(void **state)
{
	(void)state;
	/* RefinedWeb below 8192 wide without the key: vLLM would build falcon-7b's layout */
	fx_refused(tm_falcon(K_NDA, 0),
	           RW_CFG("RefinedWeb", ",\"n_head_kv\":2,\"parallel_attn\":true"), WT_EUNSUPPORTED,
	           "model_type RefinedWeb", "\"new_decoder_architecture\": true");
	fx_refused(
	    tm_falcon(K_MQ, 0),
	    RW_CFG("RefinedWebModel",
	           ",\"parallel_attn\":true,\"apply_residual_connection_post_layernorm\":true"),
	    WT_EUNSUPPORTED, "apply_residual_connection_post_layernorm true", "give false");
	/* parallel_attn absent is RWConfig's false: the new architecture refuses it */
	fx_refused(tm_falcon(K_NDA, 0),
	           RW_CFG("RefinedWeb", ",\"n_head_kv\":2,\"new_decoder_architecture\":true"),
	           WT_EUNSUPPORTED, "parallel_attn false", "set parallel_attn true");
	/* and falcon-7b's checkpoint without parallel_attn needs post_attention_layernorm */
	fx_refused(tm_falcon(K_MQ, 0), RW_CFG("RefinedWebModel", ""), WT_ENOTFOUND,
	           "post_attention_layernorm", "missing");
	fx_refused(tm_falcon(K_RW, 0),
	           RW_CFG("RefinedWebModel", ",\"multi_query\":false,"
	                                     "\"bias\":true,\"n_head_kv\":4"),
	           WT_EUNSUPPORTED, "n_head_kv 4", "remove the key");
	/* n_head_kv defaults to 1 under the new architecture: falcon-40b's 2 groups mismatch */
	fx_refused(
	    tm_falcon(K_NDA, 0),
	    RW_CFG("RefinedWeb", ",\"new_decoder_architecture\":true,\"parallel_attn\":true"),
	    WT_ESHAPE, "query_key_value", "[160, 128]");
	fx_refused(tm_falcon(K_RW, 0), RW_CFG("RefinedWebModel", ",\"multi_query\":false"),
	           WT_EUNSUPPORTED, ".bias", "(bias is false");
	fx_refused(tm_falcon(K_MQ, 0),
	           RWB("RefinedWebModel", ",\"hidden_size\":128,\"n_head\":8,\"vocab_size\":1000,"
	                                  "\"parallel_attn\":true,\"n_layer\":\"two\""),
	           WT_ECORRUPT, "num_hidden_layers", "");
	fx_refused_tp(tm_falcon(K_NDA, 0), RW40, 3, WT_ELAYOUT, "", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rw_40b),      cmocka_unit_test(test_rw_7b),
	    cmocka_unit_test(test_rw_1b),       cmocka_unit_test(test_rw_quant),
	    cmocka_unit_test(test_rw_coverage), cmocka_unit_test(test_rw_defaults),
	    cmocka_unit_test(test_rw_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
