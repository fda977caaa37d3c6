/*
 * test_reference_chatglm.c — the reference forward pass over ChatGLM / GLM-4 in THUDM's
 * original format (ChatGLMModel, remote code; fixture chatglm): GLM's math (RMSNorm, q/k/v
 * biases, GLM's interleaved rotary on half of each head, silu(gate) * up) with
 * query_key_value as one [q; k; v] and dense_h_to_4h as one [gate; up], read under Llama's
 * names (reference/chatglm.c). Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4,
 * 8: the two kv heads split at TP 2, replicated at TP 4 and 8) or the quantized layouts'
 * budgets; the full path's logits equal transformers 4.57.1's GlmForCausalLM built from the
 * same weights (query_key_value split into q_proj / k_proj / v_proj, the names mapped; eager,
 * float32) at 28 points; rank tensors broken the way a wrong planner would break them are
 * caught. Fixture from $WT_BUILD/wt-mkckpt --family chatglm (hid 128, H 8, KV 2, I 192,
 * V 1000, 2 layers, rope_ratio 2, untied; seed printed).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reference/reference.h"
#include "reference/reference_int.h"
#include "reference/ckpt.h"
#include "kernels/kernels.h"
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

#define L1 "transformer.encoder.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"chatglm"};
	return gen_fixtures("reference_chatglm", fams, 1);
}

static void test_chatglm_pass(void **state)
{
	(void)state;
	expect_pass_tp("chatglm", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: GlmForCausalLM.from_pretrained of
 * the fixture with query_key_value split into q_proj / k_proj / v_proj (weights and biases)
 * and the names mapped (strict: no missing, unexpected or mismatched key), GlmConfig of the
 * fixture's keys (partial_rotary_factor 0.5, rope_theta 10000 * rope_ratio), eager, float32;
 * all 7 x 1000 logits within 4.8e-7 of the reference's */
static const gold_pt gold_chatglm[] = {
    {0, 0, -4.382264316e-01f},   {0, 333, 2.009872049e-01f},  {0, 666, 1.044835821e-01f},
    {0, 999, 1.240637749e-01f},  {1, 0, -3.155627251e-01f},   {1, 333, -1.948958635e-02f},
    {1, 666, 9.849996865e-02f},  {1, 999, 1.782804877e-01f},  {2, 0, -3.269035220e-01f},
    {2, 333, -1.316137463e-01f}, {2, 666, 1.187766045e-01f},  {2, 999, 1.084357500e-01f},
    {3, 0, -1.515767276e-01f},   {3, 333, 3.242732724e-03f},  {3, 666, 1.138666645e-01f},
    {3, 999, 5.743328109e-02f},  {4, 0, -2.623730898e-01f},   {4, 333, -5.594013631e-02f},
    {4, 666, 1.140366122e-01f},  {4, 999, 8.644104004e-02f},  {5, 0, -1.906290948e-01f},
    {5, 333, 8.653572202e-02f},  {5, 666, 3.813616186e-02f},  {5, 999, 1.207354292e-01f},
    {6, 0, -8.810831606e-02f},   {6, 333, -9.466610849e-03f}, {6, 666, -5.623176694e-03f},
    {6, 999, -2.331834286e-03f},
};

#define GOLD_TOL 1e-5

static void test_chatglm_transformers(void **state)
{
	(void)state;
	expect_gold("chatglm", 1000, GOLD_TOL, gold_chatglm,
	            sizeof(gold_chatglm) / sizeof(gold_chatglm[0]));
}

/* k and v exchanged inside the one rank's query_key_value (TP 1: [q (8*16); k (2*16); v
 * (2*16)] rows; a planner reading the fused parts in the wrong order). */
static void swap_kv(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_int_equal(n, 1);
	ref_tensor *t = find_tensor(&r[0], L1 "self_attention.query_key_value.weight");
	assert_int_equal(t->shape[0], 12 * 16);
	size_t rb = (size_t)(t->nbytes / (uint64_t)t->shape[0]), kvb = 2 * 16 * rb;
	uint8_t *tmp = malloc(kvb);
	assert_non_null(tmp);
	memcpy(tmp, t->data + 8 * 16 * rb, kvb);
	memcpy(t->data + 8 * 16 * rb, t->data + 10 * 16 * rb, kvb);
	memcpy(t->data + 10 * 16 * rb, tmp, kvb);
	free(tmp);
}

static void test_chatglm_caught(void **state)
{
	(void)state;
	expect_caught("chatglm", 1, 1, swap_kv, "k and v exchanged inside query_key_value");
	expect_swapped("chatglm", 2, 1, L1 "self_attention.query_key_value.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("chatglm", 2, 1, L1 "self_attention.query_key_value.bias",
	               "the ranks' q/k/v biases exchanged");
	expect_swapped("chatglm", 2, 1, L1 "self_attention.dense.weight",
	               "dense columns exchanged");
	expect_swapped("chatglm", 2, 1, L1 "mlp.dense_h_to_4h.weight",
	               "dense_h_to_4h rows exchanged");
	expect_swapped("chatglm", 2, 1, L1 "mlp.dense_4h_to_h.weight",
	               "dense_4h_to_h columns exchanged");
	expect_swapped("chatglm", 4, 1, L1 "self_attention.query_key_value.weight",
	               "ranks 0 and 1's q heads exchanged (their kv head replicated)");
	expect_halves_swapped("chatglm", 2, 1,
	                      (tamper_halves){L1 "mlp.dense_h_to_4h.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
}

/* The fixture is read as GLM's decoder: RMSNorms, the fused checkpoint's qkv_proj and
 * gate_up_proj, GLM's interleaved pairs, untied, layernorm_epsilon as eps, 10000 * rope_ratio
 * as rope_theta. */
static void test_chatglm_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "chatglm");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.glm == 3 && c.kind == REF_DENSE && c.fused_ckpt && c.fused_gate_up &&
	            c.rope_pairs && !c.layernorm && !c.plain_mlp && !c.tied && c.H == 8 &&
	            c.KV == 2 && c.d == 16 && c.I == 192 && c.L == 2 && c.hid == 128 &&
	            c.V == 1000);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 20000.0) < 1e-6);
	ref_set_clear(&ck);
	close_model(&m);
}

#define CG_JSON(extra)                                                                             \
	"{\"architectures\":[\"ChatGLMModel\"],\"model_type\":\"chatglm\",\"hidden_size\":128,"    \
	"\"ffn_hidden_size\":192,\"num_attention_heads\":8,\"kv_channels\":16,"                    \
	"\"padded_vocab_size\":1000,\"num_layers\":2,\"tie_word_embeddings\":false" extra "}"

/* Keys left out: ChatGLMConfig's layernorm_epsilon 1e-5 (not GlmConfig's 1.5625e-7) and
 * rope_ratio 1 (rope_theta 10000); original_rope false and
 * apply_residual_connection_post_layernorm true refused by the reference. */
static void test_chatglm_config_keys(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	const char *plain = CG_JSON(",\"original_rope\":true");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.glm == 3 && c.KV == 8 && fabs(c.eps - 1e-5) < 1e-12 &&
	            fabs(c.theta - 10000.0) < 1e-6);
	const char *neox = CG_JSON(",\"original_rope\":false");
	assert_int_equal(ref_cfg_parse_json(neox, strlen(neox), &c, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "original_rope is false"));
	const char *post = CG_JSON(",\"original_rope\":true,"
	                           "\"apply_residual_connection_post_layernorm\":true");
	assert_int_equal(ref_cfg_parse_json(post, strlen(post), &c, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "apply_residual_connection_post_layernorm"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_chatglm_pass),        cmocka_unit_test(test_chatglm_transformers),
	    cmocka_unit_test(test_chatglm_caught),      cmocka_unit_test(test_chatglm_config),
	    cmocka_unit_test(test_chatglm_config_keys),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
