/*
 * test_shardmap_llama_aliases.c — the architecture names vLLM's registry maps onto its
 * LlamaForCausalLM (llama.py) whose tensors are Llama's byte for byte, read as the llama family:
 * LLaMAForCausalLM (the name transformers' first conversion wrote: decapoda-research/llama-*-hf;
 * model_type llama, the old keys max_sequence_length and pad_token_id -1, no
 * num_key_value_heads / tie_word_embeddings / rope_theta, rotary_emb.inv_freq buffers saved);
 * IQuestCoderForCausalLM (IQuestLab's IQuest-Coder-V1, remote code: model_type iquestcoder, its
 * class's defaults, clip_qkv and the sliding window vLLM never runs refused when they would act).
 * Hand-computed slices at TP 2 and TP 4, the same shards byte for byte as under
 * LlamaForCausalLM's config (fx_same_layouts), int8-channel and fp8-channel layouts, coverage
 * over TP 1..8, LlamaConfig's defaults for the keys the old config leaves out, and the
 * refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed11a0ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_biased.h"

/* hid 128, H 8 (MHA unless num_key_value_heads is given), head_dim 16, I 192, V 1000, 2 layers */
#define HID  128
#define HD   16
#define I    192
#define L1   "model.layers.1."
#define AT   L1 "self_attn."
#define QKV  AT "qkv_proj.weight"
#define EMB  "model.embed_tokens.weight"
#define INVF "model.layers.0.self_attn.rotary_emb.inv_freq"

/* decapoda-research/llama-7b-hf's config.json keys at the test's dims */
#define CAPS(extra)                                                                                \
	"{\"architectures\":[\"LLaMAForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":128,"  \
	"\"intermediate_size\":192,\"num_attention_heads\":8,\"num_hidden_layers\":2,"             \
	"\"vocab_size\":1000,\"max_sequence_length\":2048,\"pad_token_id\":-1,"                    \
	"\"bos_token_id\":0,\"eos_token_id\":1,\"hidden_act\":\"silu\",\"rms_norm_eps\":1e-06,"    \
	"\"initializer_range\":0.02,\"use_cache\":true,\"torch_dtype\":\"float16\","               \
	"\"transformers_version\":\"4.27.0.dev0\"" extra "}"
/* The same model as LlamaForCausalLM's config.json writes it today */
#define LLAMA(extra)                                                                               \
	"{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":128,"  \
	"\"intermediate_size\":192,\"num_attention_heads\":8,"                                     \
	"\"num_hidden_layers\":2,\"vocab_size\":1000,\"max_position_embeddings\":2048,"            \
	"\"rms_norm_eps\":1e-06,\"rope_theta\":10000.0,\"attention_bias\":false,"                  \
	"\"mlp_bias\":false,\"tie_word_embeddings\":false" extra "}"

/* The model with kv kv heads, lm_head.weight when head, and the rotary_emb.inv_freq buffer
 * the old conversion saved in every layer. */
static tm_model *tm_caps(int64_t kv, int head)
{
	tm_model *m = tm_llama_biased(SEED, HID, 8 * HD, kv * HD, I, head, 0);
	tm_add(m, INVF, WT_F32, 1, HD / 2, 0, 0);
	tm_add(m, L1 "self_attn.rotary_emb.inv_freq", WT_F32, 1, HD / 2, 0, 0);
	return m;
}

/* TP 2 and TP 4 by hand: rank r's qkv_proj is q / k / v rows [r*H/T*d, +H/T*d) each, o_proj by
 * columns, gate_up rows, down columns, vocabulary rows with the padded tail, the norms whole,
 * the inv_freq buffers skipped; nothing else on a rank. */
static void test_caps_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_caps(8, 1), CAPS(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "llama");
		assert_true(fx_skipped(&f, INVF));
		for (uint32_t r = 0; r < T; r++) {
			int64_t hl = 8 / T;
			fx_attn_is(&f, r, T, AT, "o_proj.weight", 8, 8, HD, HID);
			rows_at(&f, r, QKV, hl * HD, AT "k_proj.weight", r * hl * HD, hl * HD);
			fx_mlp_is(&f, r, T, L1 "mlp.", I, HID);
			repl(&f, r, L1 "input_layernorm.weight");
			repl(&f, r, L1 "post_attention_layernorm.weight");
			repl(&f, r, "model.norm.weight");
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
			assert_true(tm_ix(f.p, r, AT "q_proj.weight") < 0);
			assert_int_equal(shardmap_rank_n_tensors(f.p, r), 2 * 6 + 3);
		}
		fx_close(&f);
	}
}

/* The checkpoint under LLaMAForCausalLM's old config gives the same shards byte for byte as
 * under LlamaForCausalLM's, at TP 2, 4 and 8. */
static void test_caps_same_as_llama(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 8; T *= 2)
		fx_same_layouts(tm_caps(8, 1), NULL, CAPS(""), tm_caps(8, 1),
		                LLAMA(",\"num_key_value_heads\":8"), T, 1, "");
}

static const char *const caps_keep[] = {EMB, "lm_head.weight", "model.norm.weight",
                                        L1 "input_layernorm.weight"};
static const char *const caps_quant[] = {QKV, AT "o_proj.weight", L1 "mlp.gate_up_proj.weight",
                                         L1 "mlp.down_proj.weight"};

/* int8-channel at TP 2: the four Linears quantized per row (rank 1's qkv_proj codes are q / k / v
 * rows 64..127 each), the embedding, lm_head and norms BF16; fp8-channel at TP 4: the same. */
static void test_caps_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_caps(8, 1), CAPS(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(caps_keep), FX_N(caps_quant));
	fx_qkv_int8_is(&f, 1, 2, QKV, AT "q_proj.weight", AT "k_proj.weight", AT "v_proj.weight", 8,
	               8, HD, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_caps(8, 1), CAPS(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(caps_keep), FX_N(caps_quant));
	fx_close(&f);
}

static void test_caps_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_caps(8, 1), CAPS(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_caps(2, 1), CAPS(",\"num_key_value_heads\":2"), 2, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* LlamaConfig's defaults for the keys the old config leaves out: num_key_value_heads the heads
 * (grouped k_proj refused by shape), untied (lm_head.weight required; tie_word_embeddings true
 * drops it); a grouped config.json given the key is cut with the kv heads replicated at TP 4. */
static void test_caps_defaults(void **state)
{
	(void)state;
	fx_refused(tm_caps(8, 0), CAPS(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_caps(2, 1), CAPS(""), WT_ESHAPE, "k_proj.weight", "implies [128, 128]");
	fx f;
	fx_open(&f, tm_caps(8, 0), CAPS(",\"tie_word_embeddings\":true"), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0);
	fx_close(&f);
	fx_open(&f, tm_caps(2, 1), CAPS(",\"num_key_value_heads\":2"), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		fx_attn_is(&f, r, 4, AT, "o_proj.weight", 8, 2, HD, HID);
	fx_close(&f);
}

static void test_caps_errors(void **state)
{
	(void)state;
	tm_model *m = tm_caps(8, 1);
	tm_remove(m, L1 "mlp.up_proj.weight");
	fx_refused(m, CAPS(""), WT_ENOTFOUND, "up_proj", "missing");
	fx_refused_tp(tm_caps(8, 1), CAPS(""), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_caps(8, 1), CAPS(""), 3, WT_ELAYOUT, "tp_size 3", "8");
}

/* IQuest-Coder-V1's config.json keys (model_type iquestcoder, auto_map) at the test's dims: GQA 8 /
 * 2, head_dim given, the remote class's inert clip_qkv / sliding-window keys */
#define IQ_RAW(extra)                                                                              \
	"{\"architectures\":[\"IQuestCoderForCausalLM\"],\"model_type\":\"iquestcoder\","          \
	"\"auto_map\":{\"AutoConfig\":\"configuration_iquestcoder.IQuestCoderConfig\","            \
	"\"AutoModelForCausalLM\":\"modeling_iquestcoder.IQuestCoderForCausalLM\"},"               \
	"\"hidden_size\":128,\"num_attention_heads\":8" extra "}"
#define IQ_DIMS ",\"num_hidden_layers\":2,\"vocab_size\":1000,\"intermediate_size\":192"
#define IQ_KEYS                                                                                    \
	",\"num_key_value_heads\":2,\"head_dim\":16,\"hidden_act\":\"silu\",\"rope_theta\":"       \
	"500000.0,"                                                                                \
	"\"rms_norm_eps\":1e-05,\"max_position_embeddings\":16384,\"attention_bias\":false,"       \
	"\"mlp_bias\":false,\"tie_word_embeddings\":false,\"clip_qkv\":null,"                      \
	"\"use_sliding_window\":false,\"sliding_window\":null,\"max_window_layers\":0"
#define IQ(extra)     IQ_RAW(IQ_DIMS IQ_KEYS extra)
#define IQ_MIN(extra) IQ_RAW(IQ_DIMS ",\"num_key_value_heads\":2,\"head_dim\":16" extra)

/* The model with kv kv heads and lm_head.weight when head (no inv_freq buffer). */
static tm_model *tm_iq(int64_t kv, int head)
{
	return tm_llama_biased(SEED, HID, 8 * HD, kv * HD, I, head, 0);
}

/* TP 2 and TP 4 by hand: the kv heads split at TP 2 and replicated at TP 4 (one a pair of
 * ranks), q by heads, o_proj by columns, gate_up rows, down columns, vocabulary rows. */
static void test_iq_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_iq(2, 1), IQ(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "llama");
		for (uint32_t r = 0; r < T; r++) {
			fx_attn_is(&f, r, T, AT, "o_proj.weight", 8, 2, HD, HID);
			fx_mlp_is(&f, r, T, L1 "mlp.", I, HID);
			repl(&f, r, L1 "post_attention_layernorm.weight");
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
			assert_int_equal(shardmap_rank_n_tensors(f.p, r), 2 * 6 + 3);
		}
		fx_close(&f);
	}
}

/* The same shards byte for byte as under LlamaForCausalLM's config, at TP 2, 4 and 8. */
static void test_iq_same_as_llama(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 8; T *= 2)
		fx_same_layouts(tm_iq(2, 1), NULL, IQ(""), tm_iq(2, 1),
		                LLAMA(",\"head_dim\":16,\"num_key_value_heads\":2"), T, 1, "");
}

static void test_iq_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_iq(2, 1), IQ(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(caps_keep),
	              FX_N(caps_quant));
	fx_qkv_int8_is(&f, 1, 2, QKV, AT "q_proj.weight", AT "k_proj.weight", AT "v_proj.weight", 8,
	               2, HD, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_iq(2, 1), IQ(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(caps_keep),
	              FX_N(caps_quant));
	fx_close(&f);
}

static void test_iq_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_iq(2, 1), IQ(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_iq(8, 1), IQ_RAW(IQ_DIMS ",\"num_key_value_heads\":8,\"head_dim\":16"), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* IQuestCoderConfig's defaults for keys left out: head_dim 128 (not hid / H), 8 kv heads, vocab
 * 76800, intermediate 27648, 80 layers, untied; the inert keys may be left out. */
static void test_iq_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_iq(8, 1), IQ_RAW(IQ_DIMS ",\"head_dim\":16"), 2, 1, 0, true);
	fx_attn_is(&f, 1, 2, AT, "o_proj.weight", 8, 8, HD, HID);
	fx_close(&f);
	fx_refused(tm_iq(8, 0), IQ_RAW(IQ_DIMS ",\"head_dim\":16"), WT_ENOTFOUND, "lm_head.weight",
	           "missing");
	fx_refused(tm_iq(8, 1), IQ_RAW(IQ_DIMS), WT_ESHAPE, "k_proj.weight", "implies [1024, 128]");
	fx_refused(tm_iq(8, 1),
	           IQ_RAW(",\"head_dim\":16,\"num_hidden_layers\":2,\"vocab_size\":1000"),
	           WT_ESHAPE, "implies [128, 27648]", "fix config.json");
	fx_refused(tm_iq(8, 1),
	           IQ_RAW(",\"head_dim\":16,\"num_hidden_layers\":2,\"intermediate_size\":192"),
	           WT_ESHAPE, "[76800, 128]", "fix config.json");
	fx_refused(tm_iq(8, 1),
	           IQ_RAW(",\"head_dim\":16,\"vocab_size\":1000,\"intermediate_size\":192"),
	           WT_ENOTFOUND, "model.layers.2", "missing");
}

/* The remote model's clamp and window, which vLLM's llama.py never runs, refused naming the key
 * when they would act; hidden_act other than silu. */
static void test_iq_errors(void **state)
{
	(void)state;
	fx_refused(tm_iq(2, 1), IQ_MIN(",\"clip_qkv\":8.0"), WT_EUNSUPPORTED, "clip_qkv",
	           "clip_qkv null");
	fx_refused(tm_iq(2, 1),
	           IQ_RAW(IQ_DIMS ",\"num_key_value_heads\":2,\"head_dim\":16,"
	                          "\"use_sliding_window\":true,\"sliding_window\":4096"),
	           WT_EUNSUPPORTED, "use_sliding_window", "max_window_layers 0");
	fx_refused(tm_iq(2, 1),
	           IQ_RAW(IQ_DIMS ",\"num_key_value_heads\":2,\"head_dim\":16,"
	                          "\"use_sliding_window\":true,\"sliding_window\":4096,"
	                          "\"max_window_layers\":1"),
	           WT_EUNSUPPORTED, "use_sliding_window", "max_window_layers 1");
	fx_refused(tm_iq(2, 1), IQ_MIN(",\"use_sliding_window\":\"yes\""), WT_ECORRUPT,
	           "use_sliding_window", "boolean");
	fx_refused(tm_iq(2, 1), IQ_MIN(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED, "hidden_act",
	           "silu");
	/* inert: the window from layer 2 of 2 on, or no window size */
	fx f;
	fx_open(&f, tm_iq(2, 1),
	        IQ_RAW(IQ_DIMS ",\"num_key_value_heads\":2,\"head_dim\":16,"
	                       "\"use_sliding_window\":true,\"sliding_window\":4096,"
	                       "\"max_window_layers\":2"),
	        2, 1, 0, true);
	fx_close(&f);
	fx_open(&f, tm_iq(2, 1),
	        IQ_RAW(IQ_DIMS ",\"num_key_value_heads\":2,\"head_dim\":16,"
	                       "\"use_sliding_window\":true"),
	        2, 1, 0, true);
	fx_close(&f);
}

/* facebook/cwm's keys (model_type cwm) at the test's dims: GQA 8 / 2, head_dim given, 2 layers
 * (CwmConfig's layer_types: full, sliding) */
#define CWM_RAW(extra)                                                                             \
	"{\"architectures\":[\"CwmForCausalLM\"],\"model_type\":\"cwm\",\"hidden_size\":128,"      \
	"\"num_attention_heads\":8" extra "}"
#define CWM_DIMS                                                                                   \
	",\"num_hidden_layers\":2,\"vocab_size\":1000,\"intermediate_size\":192,"                  \
	"\"num_key_value_heads\":2,\"head_dim\":16"
#define CWM(extra) CWM_RAW(CWM_DIMS extra)
#define MINISTRAL                                                                                  \
	"{\"architectures\":[\"MinistralForCausalLM\"],\"model_type\":\"ministral\","              \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_hidden_layers\":2,"                   \
	"\"vocab_size\":1000,\"intermediate_size\":192,\"num_key_value_heads\":2,\"head_dim\":16," \
	"\"sliding_window\":4096,\"layer_types\":[\"full_attention\",\"sliding_attention\"]}"

/* CwmForCausalLM reads as Ministral's (llama.py's windows, no biases): TP 2 / 4 hand slices, the
 * same shards byte for byte as under MinistralForCausalLM at TP 2 / 4 / 8, int8-channel /
 * fp8-channel, coverage. */
static void test_cwm_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_iq(2, 1), CWM(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "ministral");
		for (uint32_t r = 0; r < T; r++) {
			fx_attn_is(&f, r, T, AT, "o_proj.weight", 8, 2, HD, HID);
			fx_mlp_is(&f, r, T, L1 "mlp.", I, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
			assert_int_equal(shardmap_rank_n_tensors(f.p, r), 2 * 6 + 3);
		}
		fx_close(&f);
	}
	for (uint32_t T = 2; T <= 8; T *= 2)
		fx_same_layouts(tm_iq(2, 1), NULL, CWM(""), tm_iq(2, 1), MINISTRAL, T, 1, "");
	fx f;
	fx_open_quant(&f, tm_iq(2, 1), CWM(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(caps_keep),
	              FX_N(caps_quant));
	fx_qkv_int8_is(&f, 1, 2, QKV, AT "q_proj.weight", AT "k_proj.weight", AT "v_proj.weight", 8,
	               2, HD, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_iq(2, 1), CWM(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(caps_keep),
	              FX_N(caps_quant));
	fx_close(&f);
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_iq(2, 1), CWM(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
}

/* CwmConfig's defaults (head_dim 128, 8 kv heads, vocab 128256, 64 layers, untied), its
 * layer_types checked as Ministral's, a bias refused (CwmAttention has none), hidden_act. */
static void test_cwm_defaults_errors(void **state)
{
	(void)state;
	fx_refused(tm_iq(8, 1),
	           CWM_RAW(",\"num_hidden_layers\":2,\"vocab_size\":1000,"
	                   "\"intermediate_size\":192"),
	           WT_ESHAPE, "k_proj.weight", "implies [1024, 128]");
	fx_refused(tm_iq(2, 1),
	           CWM_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                   "\"head_dim\":16,\"vocab_size\":1000"),
	           WT_ESHAPE, "k_proj.weight", "implies [128, 128]");
	fx_refused(tm_iq(2, 1),
	           CWM_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                   "\"head_dim\":16,\"num_key_value_heads\":2"),
	           WT_ESHAPE, "[128256, 128]", "fix config.json");
	fx_refused(tm_iq(2, 0), CWM(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_iq(2, 1), CWM(",\"layer_types\":[\"full_attention\"]"), WT_ECORRUPT,
	           "layer_types has 1 entries", "num_hidden_layers is 2");
	fx_refused(tm_iq(2, 1), CWM(",\"layer_types\":[\"full_attention\",\"chunked_attention\"]"),
	           WT_ECORRUPT, "layer_types[1]", "Ministral");
	fx_refused(tm_llama_biased(SEED, HID, 8 * HD, 2 * HD, I, 1, TM_B_QKV), CWM(""),
	           WT_EUNSUPPORTED, "k_proj.bias", "unknown tensor");
	fx_refused(tm_iq(2, 1), CWM(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED, "hidden_act",
	           "silu");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_caps_slices),   cmocka_unit_test(test_caps_same_as_llama),
	    cmocka_unit_test(test_caps_quant),    cmocka_unit_test(test_caps_coverage),
	    cmocka_unit_test(test_caps_defaults), cmocka_unit_test(test_caps_errors),
	    cmocka_unit_test(test_iq_slices),     cmocka_unit_test(test_iq_same_as_llama),
	    cmocka_unit_test(test_iq_quant),      cmocka_unit_test(test_iq_coverage),
	    cmocka_unit_test(test_iq_defaults),   cmocka_unit_test(test_iq_errors),
	    cmocka_unit_test(test_cwm_slices),    cmocka_unit_test(test_cwm_defaults_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
