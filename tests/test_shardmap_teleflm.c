/*
 * test_shardmap_teleflm.c — Tele-FLM (TeleFLMForCausalLM, remote code: CofeAI/Tele-FLM
 * (FLM-2-52B), FLM-2-52B-Instruct, Tele-FLM-1T) cut as vLLM's teleflm.py loads it (its
 * TeleFLMForCausalLM is LlamaForCausalLM's subclass with Llama's load_weights): Llama's names,
 * q_proj / k_proj / v_proj fused by heads into self_attn.qkv_proj [q_r; k_r; v_r], o_proj by
 * columns, gate_proj / up_proj merged by rows into mlp.gate_up_proj, down_proj by columns; the
 * norms replicated; embed_tokens / lm_head by vocabulary rows; Llama's `attention_bias or bias` /
 * qkv_bias switches (the releases carry no bias). The muP keys (use_mup, input_mult,
 * output_mult, mup_scale_factor) change no tensor: the shards equal Llama's of the same weights.
 * Hand-computed slices at TP 2 and TP 4, int8-channel and fp8-channel layouts, coverage over TP
 * 1..8, the keys required (the remote class's defaults unknown) and the refusals. Seeds fixed
 * and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED   0x5eed0048ull
#define LA_FAM "teleflm"
#define MUP    ",\"use_mup\":true,\"input_mult\":3.0,\"output_mult\":2.5,\"mup_scale_factor\":0.8"
#define TF_RAW(tie, keys)                                                                          \
	"{\"architectures\":[\"TeleFLMForCausalLM\"],\"model_type\":\"TeleFLM\","                  \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"tie_word_embeddings\":" tie keys "}"
#define DIMS              ",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000"
#define LA_CFG_RAW(extra) TF_RAW("false", ",\"rms_norm_eps\":1e-5" MUP extra)
#define LA_CFG(extra)     LA_CFG_RAW(DIMS extra)
#define LA_CFG_TIED       TF_RAW("true", ",\"rms_norm_eps\":1e-5" MUP DIMS)
#define LA_NO_CLASS_DEFAULTS
#include "test_shardmap_llama_alias.h"

static void test_teleflm_slices(void **state)
{
	(void)state;
	la_slices(LA_CFG(""));
	la_slices(TF_RAW("false", ",\"rms_norm_eps\":1e-5,\"use_mup\":false" DIMS));
}

/* The muP keys and the architecture change no byte: every rank at TP 2 and TP 4 equals
 * LlamaForCausalLM's of the same weights, use_mup true or false. */
static void test_teleflm_as_llama(void **state)
{
	(void)state;
	static const char llama[] =
	    "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":"
	    "\"llama\",\"hidden_size\":128,\"num_attention_heads\":8" DIMS "}";
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx_same_layouts(tm_la(8, 1, 0), NULL, LA_CFG(""), tm_la(8, 1, 0), llama, T, 1, "");
		fx_same_layouts(tm_la(8, 1, 0), NULL,
		                TF_RAW("false", ",\"rms_norm_eps\":1e-5,\"use_mup\":false" DIMS),
		                tm_la(8, 1, 0), llama, T, 1, "");
	}
}

/* The keys the remote TeleFLMConfig would default, required (WT_ECORRUPT naming the key): its
 * defaults were not read; the muP keys with use_mup true; use_mup false reads none of them. */
static void test_teleflm_required(void **state)
{
	(void)state;
	fx_refused(tm_la(8, 1, 0), TF_RAW("false", MUP DIMS), WT_ECORRUPT, "rms_norm_eps",
	           "TeleFLMConfig");
	fx_refused(
	    tm_la(8, 1, 0),
	    "{\"architectures\":[\"TeleFLMForCausalLM\"],\"model_type\":"
	    "\"TeleFLM\",\"hidden_size\":128,\"num_attention_heads\":8,\"rms_norm_eps\":1e-5" MUP
	        DIMS "}",
	    WT_ECORRUPT, "tie_word_embeddings", "give it");
	fx_refused(tm_la(8, 1, 0),
	           TF_RAW("false", ",\"rms_norm_eps\":1e-5" MUP
	                           ",\"num_hidden_layers\":2,\"vocab_size\":1000"),
	           WT_ECORRUPT, "intermediate_size", "give it");
	fx_refused(tm_la(8, 1, 0), TF_RAW("false", ",\"rms_norm_eps\":1e-5" DIMS), WT_ECORRUPT,
	           "use_mup", "give it");
	fx_refused(tm_la(8, 1, 0), LA_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192"),
	           WT_ECORRUPT, "vocab_size", "");
	fx_refused(tm_la(8, 1, 0),
	           TF_RAW("false", ",\"rms_norm_eps\":1e-5,\"use_mup\":true,\"output_mult\":2.5,"
	                           "\"mup_scale_factor\":0.8" DIMS),
	           WT_ECORRUPT, "input_mult", "give it");
	fx_refused(tm_la(8, 1, 0),
	           TF_RAW("false", ",\"rms_norm_eps\":1e-5,\"use_mup\":true,\"input_mult\":3,"
	                           "\"output_mult\":null,\"mup_scale_factor\":0.8" DIMS),
	           WT_ECORRUPT, "output_mult", "give it");
	fx_refused(tm_la(8, 1, 0),
	           TF_RAW("false", ",\"rms_norm_eps\":1e-5,\"use_mup\":true,\"input_mult\":3,"
	                           "\"output_mult\":2.5" DIMS),
	           WT_ECORRUPT, "mup_scale_factor", "give it");
}

/* Multipliers outside [1e-6, 1e6] (mup_scale_factor divides) or not numbers, and use_mup not a
 * boolean, refused naming the key. */
static void test_teleflm_mup_refused(void **state)
{
	(void)state;
	fx_refused(tm_la(8, 1, 0),
	           TF_RAW("false", ",\"rms_norm_eps\":1e-5,\"use_mup\":true,\"input_mult\":3,"
	                           "\"output_mult\":2.5,\"mup_scale_factor\":0" DIMS),
	           WT_EUNSUPPORTED, "mup_scale_factor", "[1e-6, 1e6]");
	fx_refused(tm_la(8, 1, 0),
	           TF_RAW("false", ",\"rms_norm_eps\":1e-5,\"use_mup\":true,\"input_mult\":-3,"
	                           "\"output_mult\":2.5,\"mup_scale_factor\":0.8" DIMS),
	           WT_EUNSUPPORTED, "input_mult", "[1e-6, 1e6]");
	fx_refused(tm_la(8, 1, 0),
	           TF_RAW("false", ",\"rms_norm_eps\":1e-5,\"use_mup\":true,\"input_mult\":3,"
	                           "\"output_mult\":\"2.5\",\"mup_scale_factor\":0.8" DIMS),
	           WT_EUNSUPPORTED, "output_mult", "[1e-6, 1e6]");
	fx_refused(tm_la(8, 1, 0),
	           TF_RAW("false", ",\"rms_norm_eps\":1e-5,\"use_mup\":\"yes\"" DIMS), WT_ECORRUPT,
	           "use_mup", "boolean");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_teleflm_slices),      cmocka_unit_test(test_teleflm_as_llama),
	    cmocka_unit_test(test_la_switches),         cmocka_unit_test(test_la_quant),
	    cmocka_unit_test(test_la_coverage),         cmocka_unit_test(test_teleflm_required),
	    cmocka_unit_test(test_teleflm_mup_refused), cmocka_unit_test(test_la_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
