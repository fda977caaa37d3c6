/*
 * test_shardmap_stablelm_epoch.c — StableLM Epoch (StableLMEpochForCausalLM, remote code:
 * stabilityai/stablelm-3b-4e1t, stablelm-zephyr-3b, stable-code-3b, stablelm-2-1_6b's early
 * revisions) cut as vLLM's stablelm.py loads it (its registry maps the name onto
 * StablelmForCausalLM): StableLM's table, q/k/v with their biases (use_qkv_bias) fused by heads
 * into self_attn.qkv_proj, o_proj by columns, gate_proj / up_proj merged by rows into
 * mlp.gate_up_proj, down_proj by columns, the LayerNorm weights and biases replicated,
 * embed_tokens / lm_head by vocabulary rows. The remote config's key names (rope_pct, norm_eps,
 * use_qkv_bias) and the keys StableLMEpochConfig would default, required. Hand-computed slices
 * at TP 2 and TP 4, int8-channel and fp8-channel layouts, coverage over TP 1..8 and the
 * refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0048ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_stablelm.h"

/* hid 128, H 8, KV 4, head size 16, I 192, V 1000, 2 layers */
#define HID 128
#define EP_RAW(extra)                                                                              \
	"{\"architectures\":[\"StableLMEpochForCausalLM\"],\"model_type\":\"stablelm_epoch\","     \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"vocab_size\":1000,"                       \
	"\"num_hidden_layers\":2" extra "}"
#define EP_DIMS                                                                                    \
	",\"num_key_value_heads\":4,\"intermediate_size\":192,\"max_position_embeddings\":4096,"   \
	"\"rope_theta\":10000"
#define EP_OLD    ",\"rope_pct\":0.25,\"norm_eps\":1e-05,\"tie_word_embeddings\":false"
#define EP_CFG(x) EP_RAW(EP_DIMS EP_OLD x)
#define EP_BIAS   EP_CFG(",\"use_qkv_bias\":true")
#define L1        "model.layers.1."
#define A1        L1 "self_attn."

/* The model; q/k/v biases when qkv_bias. */
static tm_model *tm_epoch(int qkv_bias)
{
	return tm_stablelm_of(qkv_bias, 64, 192);
}

/* TP 2 with the biases, TP 4 (one kv head a rank) without: hand slices through fx_attn_is /
 * fx_mlp_is / fx_qkv_is; the LayerNorms' weights and biases replicated. */
static void test_epoch_slices(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_epoch(1), EP_BIAS, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "stablelm");
	for (uint32_t r = 0; r < 2; r++) {
		fx_attn_is(&f, r, 2, A1, "o_proj.weight", 8, 4, 16, HID);
		shp(&f, r, A1 "qkv_proj.bias", 1, 128, 0, 0);
		fx_qkv_is(&f, r, 2, A1 "qkv_proj.bias", A1 "q_proj.bias", A1 "k_proj.bias",
		          A1 "v_proj.bias", 8, 4, 16);
		fx_mlp_is(&f, r, 2, L1 "mlp.", 192, HID);
		assert_true(tm_ix(f.p, r, A1 "o_proj.bias") < 0);
		repl(&f, r, L1 "input_layernorm.bias");
		repl(&f, r, L1 "post_attention_layernorm.weight");
		repl(&f, r, "model.norm.bias");
		rows_are(&f, r, "lm_head.weight", 0, "lm_head.weight", 512 * r, r ? 488 : 512);
	}
	fx_close(&f);
	fx_open(&f, tm_epoch(0), EP_CFG(""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		fx_attn_is(&f, r, 4, A1, "o_proj.weight", 8, 4, 16, HID);
		fx_mlp_is(&f, r, 4, L1 "mlp.", 192, HID);
		assert_true(tm_ix(f.p, r, A1 "qkv_proj.bias") < 0);
		repl(&f, r, L1 "post_attention_layernorm.bias");
	}
	fx_close(&f);
}

/* The same checkpoint under StableLmForCausalLM's config (the new key names) gives the same
 * shards byte for byte. */
static void test_epoch_same_as_stablelm(void **state)
{
	(void)state;
	fx_same_layouts(
	    tm_epoch(1), NULL, EP_BIAS, tm_epoch(1),
	    "{\"architectures\":[\"StableLmForCausalLM\"],\"model_type\":\"stablelm\","
	    "\"hidden_size\":128,\"num_attention_heads\":8,\"vocab_size\":1000,"
	    "\"num_hidden_layers\":2,\"num_key_value_heads\":4,\"intermediate_size\":192,"
	    "\"use_qkv_bias\":true}",
	    4, 1, "");
}

static const char *const ep_keep[] = {"model.embed_tokens.weight",
                                      "lm_head.weight",
                                      "model.norm.bias",
                                      L1 "input_layernorm.weight",
                                      L1 "post_attention_layernorm.bias",
                                      A1 "qkv_proj.bias"};
static const char *const ep_quant[] = {A1 "qkv_proj.weight", A1 "o_proj.weight",
                                       L1 "mlp.gate_up_proj.weight", L1 "mlp.down_proj.weight"};

/* int8-channel at TP 2: qkv_proj / o_proj / gate_up_proj / down_proj quantized per row (rank 1's
 * qkv_proj codes checked row by row), the embedding, lm_head, norms and biases BF16; fp8-channel
 * at TP 4: the same split. */
static void test_epoch_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_epoch(1), EP_BIAS, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(ep_keep),
	              FX_N(ep_quant));
	fx_qkv_int8_is(&f, 1, 2, A1 "qkv_proj.weight", A1 "q_proj.weight", A1 "k_proj.weight",
	               A1 "v_proj.weight", 8, 4, 16, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_epoch(1), EP_BIAS, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(ep_keep),
	              FX_N(ep_quant));
	fx_close(&f);
}

static void test_epoch_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_epoch(1), EP_BIAS, 4, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_epoch(0), EP_CFG(""), 4, lays, sizeof(lays) / sizeof(lays[0]));
}

/* No defaults for the keys StableLMEpochConfig would give (its file was not read): each
 * required, naming it; use_qkv_bias absent reads false (vLLM's getattr default), so biases in
 * the checkpoint are refused rather than dropped. */
static void test_epoch_required(void **state)
{
	(void)state;
	fx_refused(tm_epoch(0), EP_RAW(EP_DIMS ",\"norm_eps\":1e-05,\"tie_word_embeddings\":false"),
	           WT_ECORRUPT, "'rope_pct'", "stablelm_epoch");
	fx_refused(tm_epoch(0), EP_RAW(EP_DIMS ",\"rope_pct\":0.25,\"tie_word_embeddings\":false"),
	           WT_ECORRUPT, "'norm_eps'", "stablelm_epoch");
	fx_refused(tm_epoch(0), EP_RAW(EP_DIMS ",\"rope_pct\":0.25,\"norm_eps\":1e-05"),
	           WT_ECORRUPT, "'tie_word_embeddings'", "stablelm_epoch");
	fx_refused(tm_epoch(0),
	           EP_RAW(",\"intermediate_size\":192,\"max_position_embeddings\":4096,"
	                  "\"rope_theta\":10000" EP_OLD),
	           WT_ECORRUPT, "'num_key_value_heads'", "stablelm_epoch");
	fx_refused(tm_epoch(0),
	           EP_RAW(",\"num_key_value_heads\":4,\"max_position_embeddings\":4096,"
	                  "\"rope_theta\":10000" EP_OLD),
	           WT_ECORRUPT, "'intermediate_size'", "stablelm_epoch");
	fx_refused(tm_epoch(0),
	           EP_RAW(",\"num_key_value_heads\":4,\"intermediate_size\":192,"
	                  "\"rope_theta\":10000" EP_OLD),
	           WT_ECORRUPT, "'max_position_embeddings'", "stablelm_epoch");
	fx_refused(tm_epoch(0),
	           EP_RAW(",\"num_key_value_heads\":4,\"intermediate_size\":192,"
	                  "\"max_position_embeddings\":4096" EP_OLD),
	           WT_ECORRUPT, "'rope_theta'", "stablelm_epoch");
	fx_refused(tm_epoch(1), EP_CFG(""), WT_EUNSUPPORTED, "_proj.bias", "use_qkv_bias is false");
}

static void test_epoch_errors(void **state)
{
	(void)state;
	fx_refused(tm_epoch(0), EP_BIAS, WT_ENOTFOUND, "_proj.bias", "use_qkv_bias true");
	tm_model *m = tm_epoch(1);
	tm_remove(m, A1 "v_proj.bias");
	fx_refused(m, EP_BIAS, WT_ENOTFOUND, "v_proj.bias", "missing");
	m = tm_epoch(0);
	tm_remove(m, L1 "input_layernorm.bias");
	fx_refused(m, EP_CFG(""), WT_ENOTFOUND, "input_layernorm.bias", "missing");
	m = tm_epoch(0);
	tm_add2(m, A1 "o_proj.bias", HID, 0);
	fx_refused(m, EP_CFG(""), WT_EUNSUPPORTED, "o_proj.bias", "stablelm");
	m = tm_epoch(0);
	tm_remove(m, "lm_head.weight");
	fx_refused(m, EP_CFG(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_epoch(0), EP_CFG(",\"use_qkv_bias\":\"yes\""), WT_ECORRUPT, "use_qkv_bias",
	           "");
	fx_refused(tm_epoch(0), EP_RAW(EP_DIMS ",\"rope_pct\":2,\"norm_eps\":1e-05"), WT_ECORRUPT,
	           "'tie_word_embeddings'", "");
	fx_refused(
	    tm_epoch(0),
	    EP_RAW(EP_DIMS ",\"rope_pct\":2,\"norm_eps\":1e-05,\"tie_word_embeddings\":false"),
	    WT_ECORRUPT, "'rope_pct'", "(0, 1]");
	fx_refused(
	    tm_epoch(0),
	    EP_RAW(EP_DIMS ",\"rope_pct\":0.25,\"norm_eps\":0,\"tie_word_embeddings\":false"),
	    WT_ECORRUPT, "'norm_eps'", "not a number");
	/* configs vLLM's stablelm.py cannot load, as StableLM's */
	fx_refused(tm_epoch(0), EP_CFG(",\"qk_layernorm\":true"), WT_EUNSUPPORTED,
	           "qk_layernorm true", "q_layernorm.norms");
	fx_refused(tm_epoch(0), EP_CFG(",\"use_parallel_residual\":true"), WT_EUNSUPPORTED,
	           "use_parallel_residual true", "set it false");
	fx_refused(tm_epoch(0), EP_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "remove it");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_epoch_slices),   cmocka_unit_test(test_epoch_same_as_stablelm),
	    cmocka_unit_test(test_epoch_quant),    cmocka_unit_test(test_epoch_coverage),
	    cmocka_unit_test(test_epoch_required), cmocka_unit_test(test_epoch_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
