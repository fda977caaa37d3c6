/*
 * test_shardmap_ct_fp8.c — compressed-tensors float-quantized config groups
 * (loader/ct_config.c, docs/format.md 4.5): FP8 per channel (llm-compressor's
 * FP8_DYNAMIC), per tensor (FP8, static or dynamic input activations) and per block
 * (FP8_BLOCK, block_structure) are read as their fp8 kinds; every other float
 * scheme is refused naming the group and the field. The bytes are checked end to
 * end by tests/integration/ct_python.sh (llama_ct_fp8, llama_ct_fp8_tensor,
 * qwen3_ct_fp8_block).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "loader/loader.h"

/* in with its first `from` replaced by `to`, into out (which must hold it) */
static void swap_in(char *out, size_t cap, const char *in, const char *from, const char *to)
{
	const char *p = strstr(in, from);
	assert_non_null(p);
	int n = snprintf(out, cap, "%.*s%s%s", (int)(p - in), in, to, p + strlen(from));
	assert_true(n > 0 && (size_t)n < cap);
}

/* compressed-tensors float-quantized is read as FP8 per channel (llm-compressor's
 * FP8_DYNAMIC), per tensor (its FP8 scheme) or per block (FP8_BLOCK); other strategies, bit widths,
 * dynamic weights, activation order and static input activations beside channel weights are refused
 * naming the group and the fields (docs/format.md 4.5). The bytes are checked end to end by
 * ct_python.sh (llama_ct_fp8, llama_ct_fp8_tensor, qwen3_ct_fp8_block). */
static void test_float_quantized(void **state)
{
	(void)state;
	static const char ok[] =
	    "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":256,"
	    "\"num_attention_heads\":8,\"num_hidden_layers\":2,\"vocab_size\":1000,"
	    "\"quantization_config\":{\"quant_method\":\"compressed-tensors\","
	    "\"quantization_status\":\"compressed\",\"format\":\"float-quantized\","
	    "\"ignore\":[\"lm_head\"],\"config_groups\":{\"group_0\":{\"targets\":[\"Linear\"],"
	    "\"input_activations\":{\"num_bits\":8,\"type\":\"float\",\"strategy\":\"token\","
	    "\"dynamic\":true,\"symmetric\":true},\"weights\":{\"num_bits\":8,"
	    "\"type\":\"float\",\"strategy\":\"channel\",\"symmetric\":true,"
	    "\"dynamic\":false,\"actorder\":null}}}}}";
	ckpt_config cc;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(ok, strlen(ok), &cc, &err), WT_OK);
	assert_int_equal(cc.quant, CKPT_QUANT_CT_FP8);
	assert_int_equal(cc.n_quant_ignore, 1);
	ckpt_config_clear(&cc);
	/* per tensor (the FP8 scheme), with static or dynamic input activations: read as the
	 * "fp8" quant_method's per-tensor checkpoints */
	for (int stat = 0; stat <= 1; stat++) {
		char t[2048], out[2048];
		swap_in(t, sizeof(t), ok, "\"strategy\":\"channel\"", "\"strategy\":\"tensor\"");
		swap_in(out, sizeof(out), t, "\"dynamic\":true,\"symmetric\":true}",
		        stat ? "\"dynamic\":false,\"symmetric\":true}"
		             : "\"dynamic\":true,\"symmetric\":true}");
		assert_int_equal(ckpt_config_parse(out, strlen(out), &cc, &err), WT_OK);
		assert_int_equal(cc.quant, CKPT_QUANT_FP8_TENSOR);
		ckpt_config_clear(&cc);
	}
	/* per block (FP8_BLOCK): the block scheme with compressed-tensors' scale name; a
	 * block_structure that is not two sizes is corrupt, static input scales unread */
	char blk[2048], out2[2048];
	swap_in(blk, sizeof(blk), ok, "\"strategy\":\"channel\"",
	        "\"strategy\":\"block\",\"block_structure\":[64,32]");
	assert_int_equal(ckpt_config_parse(blk, strlen(blk), &cc, &err), WT_OK);
	assert_int_equal(cc.quant, CKPT_QUANT_FP8_BLOCK);
	assert_true(cc.quant_block_ct);
	assert_int_equal(cc.quant_block[0], 64);
	assert_int_equal(cc.quant_block[1], 32);
	ckpt_config_clear(&cc);
	swap_in(out2, sizeof(out2), blk, "[64,32]", "[64]");
	assert_int_equal(ckpt_config_parse(out2, strlen(out2), &cc, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "block_structure must be two integers"));
	swap_in(out2, sizeof(out2), blk, "\"dynamic\":true,\"symmetric\":true}",
	        "\"dynamic\":false,\"symmetric\":true}");
	assert_int_equal(ckpt_config_parse(out2, strlen(out2), &cc, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "per block with static input activations"));
	static const struct {
		const char *from, *to, *says;
	} bad[] = {
	    {"\"num_bits\":8,\"type\":\"float\",\"strategy\":\"channel\"",
	     "\"num_bits\":4,\"type\":\"float\",\"strategy\":\"channel\"", "num_bits 4"},
	    {"\"symmetric\":true,\"dynamic\":false", "\"symmetric\":true,\"dynamic\":true",
	     "dynamic true"},
	    {"\"type\":\"float\",\"strategy\":\"channel\"",
	     "\"type\":\"int\",\"strategy\":\"channel\"", "type 'int'"},
	    {"\"dynamic\":true,\"symmetric\":true}", "\"dynamic\":false,\"symmetric\":true}",
	     "per channel with static input activations"},
	    {"\"strategy\":\"channel\"", "\"strategy\":\"group\"", "strategy 'group'"},
	    {"\"actorder\":null", "\"actorder\":\"group\"", "float-quantized"},
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char out[2048];
		swap_in(out, sizeof(out), ok, bad[k].from, bad[k].to);
		memset(&err, 0, sizeof(err));
		assert_int_equal(ckpt_config_parse(out, strlen(out), &cc, &err), WT_EUNSUPPORTED);
		if (strstr(err.msg, bad[k].says) == NULL || strstr(err.msg, "group_0") == NULL)
			fail_msg("case %zu: '%s' does not name '%s' and the group", k, err.msg,
			         bad[k].says);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_float_quantized),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
