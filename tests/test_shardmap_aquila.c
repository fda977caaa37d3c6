/*
 * test_shardmap_aquila.c — Aquila (AquilaForCausalLM / AquilaModel, remote code: BAAI/Aquila-7B,
 * AquilaChat-7B, Aquila2-7B, AquilaChat2-7B, -34B) cut as vLLM's llama.py loads it: Llama's
 * names, q_proj / k_proj / v_proj fused by heads into self_attn.qkv_proj [q_r; k_r; v_r], o_proj
 * by columns, gate_proj / up_proj merged by rows into mlp.gate_up_proj, down_proj by columns; the
 * norms replicated; embed_tokens / lm_head by vocabulary rows, untied by default. No biases
 * (AquilaConfig has no bias key); Llama's `attention_bias or bias` / qkv_bias switches when a
 * config.json gives one. Hand-computed slices at TP 2 and TP 4 under both architecture names,
 * int8-channel and fp8-channel layouts, coverage over TP 1..8, AquilaConfig's defaults and the
 * refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED   0x5eed0047ull
#define LA_FAM "aquila"
#define AQ_ARCH_RAW(arch, extra)                                                                   \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"aquila\","                             \
	"\"hidden_size\":128,\"num_attention_heads\":8" extra "}"
#define LA_CFG_RAW(extra) AQ_ARCH_RAW("AquilaForCausalLM", extra)
#define LA_CFG(extra)                                                                              \
	LA_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000" extra)
#define LA_VOCAB_SHAPE "[100008, 128]" /* AquilaConfig's vocab_size */
#define LA_INTER_SHAPE "[128, 11008]"  /* and intermediate_size */
#include "test_shardmap_llama_alias.h"

/* The slices under AquilaForCausalLM and AquilaModel (Aquila-7B's name). */
static void test_aquila_slices(void **state)
{
	(void)state;
	la_slices(LA_CFG(""));
	la_slices(AQ_ARCH_RAW("AquilaModel", ",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                                     "\"vocab_size\":1000"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_aquila_slices), cmocka_unit_test(test_la_switches),
	    cmocka_unit_test(test_la_quant),      cmocka_unit_test(test_la_coverage),
	    cmocka_unit_test(test_la_defaults),   cmocka_unit_test(test_la_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
