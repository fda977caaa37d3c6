/*
 * test_reference_llama4.c — the reference forward pass over Llama 4's language model
 * (Llama4ForConditionalGeneration on text tokens, Llama4ForCausalLM; reference/llama4.c,
 * reference/cfg_llama4.c): NoPE layers with the attention temperature, RoPE on adjacent
 * pairs with llama3 scaling and the L2 q/k norms on the others, the chunked causal mask,
 * dense feed_forward layers and MoE layers whose sigmoid router scores scale each
 * expert's input, plus the shared expert. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8, EP 2, EP 4 up_gate, TP 2 x EP 2) or the quantized
 * layouts' budgets on both fixtures and on a variant whose config makes every switch
 * act (chunk 3, floor_scale 2, top-2); rank tensors broken the way a wrong planner would
 * break them are caught; the router, config defaults and refusals are checked. The
 * fixtures come from $WT_BUILD/wt-mkckpt --family llama4 / llama4_text (hid 256, H 8,
 * KV 2, d 32, layer 0 RoPE + dense MLP 384, layer 1 NoPE + MoE of 4 experts of 64 and
 * a shared expert, V 1000; seed printed).
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

#define V_L4  1000
#define HID   256
#define IE    64
#define N_EXP 4

/* The layers' modules on the ranks (the multimodal form's language_model. is dropped
 * by the reference's loaders). */
#define FF1 "model.layers.1.feed_forward."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"llama4", "llama4_text", "llama4_fbgemm"};
	if (gen_fixtures("reference_llama4", fams, 3) != 0 || gen_family("llama4_text", "l4_var"))
		return -1;
	/* every switch acting on 7 tokens: chunks of 3 on the RoPE layer, the NoPE layer's
	 * temperature from position 1, two experts per token */
	char *dir = tu_path(g_root, "l4_var");
	edit_config(dir, "\"attention_chunk_size\": 8192", "\"attention_chunk_size\": 3");
	edit_config(dir, "\"floor_scale\": 8192", "\"floor_scale\": 2");
	edit_config(dir, "\"num_experts_per_tok\": 1", "\"num_experts_per_tok\": 2");
	free(dir);
	return 0;
}

/* Verification under (tp, ep, quant, group size); *res filled, printed. */
static void run_g(const char *fam, uint32_t tp, uint32_t ep, wt_quant q, int64_t group,
                  ref_result *res)
{
	model m = {0};
	wt_layout l;
	wt_errbuf err = {0};
	open_model(&m, fam);
	wt_layout_init(&l);
	l.tp_size = tp;
	l.ep_size = ep;
	l.quant = q;
	l.group_size = group;
	int rv = ref_verify(m.c, &l, g_tokens, N_TOK, NULL, NULL, res, &err);
	if (rv != WT_OK)
		print_error("%s: %s\n", fam, err.msg);
	assert_int_equal(rv, WT_OK);
	print_message("%-11s tp %u ep %u %-12s group %lld: ratio %.3g (budget %.3g) %s\n", fam, tp,
	              ep, wt_quant_name(q), (long long)group,
	              res->diff.max_abs_diff / res->diff.max_abs_ref, res->budget,
	              res->pass ? "PASS" : "FAIL");
	wt_layout_clear(&l);
	close_model(&m);
}

static void test_llama4_pass(void **state)
{
	(void)state;
	static const char *forms[] = {"llama4", "llama4_text", "l4_var"};
	for (int f = 0; f < 3; f++) {
		expect_pass(forms[f], 1, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 4, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 1, 2, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 1, 4, WT_QUANT_NONE, 1);
		expect_pass(forms[f], 2, 2, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 2, WT_QUANT_NONE, 1);
		expect_pass(forms[f], 2, 1, WT_QUANT_FP8_CHANNEL, 0);
		expect_pass(forms[f], 1, 2, WT_QUANT_INT8_CHANNEL, 0);
	}
	expect_pass("llama4_text", 8, 1, WT_QUANT_NONE,
	            0); /* KV 2 < TP 8 (the tower has 4 heads) */
	expect_pass("llama4_text", 2, 1, WT_QUANT_FP8_BLOCK, 0);
	expect_pass("llama4", 2, 2, WT_QUANT_FP8_TENSOR, 1);
	/* int4-group: the experts' 64 columns need a group of 64 or less */
	ref_result res;
	run_g("llama4_text", 1, 2, WT_QUANT_INT4_GROUP, 32, &res);
	assert_true(res.pass && !res.diff.nonfinite && res.budget == REF_BUDGET_INT4);
	run_g("l4_var", 2, 1, WT_QUANT_INT4_GROUP, 32, &res);
	assert_true(res.pass && !res.diff.nonfinite);
}

/* Maverick's FP8 release (fbgemm_fp8, llama4_fbgemm): the full path reads the FP8 weights
 * per output channel (reference/set.c, its own reading) and lands within the FP8 budget
 * of the BF16 llama4 of the same seed, so a scale taken along the wrong axis would be
 * caught; fp8-channel keeps the codes and scales (exact), F32 output dequantizes exactly,
 * BF16 output and int8-channel get their budgets. */
static void test_llama4_fbgemm(void **state)
{
	(void)state;
	size_t n = N_TOK * V_L4;
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	assert_true(a && b);
	ref_cfg ca, cb;
	full_logits("llama4", a, &ca);
	full_logits("llama4_fbgemm", b, &cb);
	ref_diff d;
	ref_compare(a, b, n, &d);
	print_message("llama4_fbgemm vs llama4: max|diff| %.3g of %.3g\n", d.max_abs_diff,
	              d.max_abs_ref);
	assert_true(ref_within(&d, REF_BUDGET_FP8) && d.max_abs_diff > 0);
	free(a);
	free(b);
	static const struct {
		uint32_t tp, ep;
		wt_quant q;
		wt_dtype dt;
		double budget;
	} cases[] = {
	    {2, 2, WT_QUANT_FP8_CHANNEL, WT_DTYPE_INVALID, REF_TOL_F32},
	    {2, 1, WT_QUANT_FP8_CHANNEL, WT_DTYPE_INVALID, REF_TOL_F32},
	    {1, 4, WT_QUANT_NONE, WT_F32, REF_TOL_F32},
	    {2, 1, WT_QUANT_NONE, WT_DTYPE_INVALID, REF_BUDGET_ROUND},
	    {1, 2, WT_QUANT_INT8_CHANNEL, WT_DTYPE_INVALID, REF_BUDGET_INT8},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		ref_result res;
		wt_errbuf err = {0};
		assert_int_equal(run_dt("llama4_fbgemm", cases[k].tp, cases[k].ep, cases[k].q, 0,
		                        cases[k].dt, NULL, NULL, &res, &err),
		                 WT_OK);
		assert_true(res.pass && !res.diff.nonfinite && res.budget == cases[k].budget);
	}
}

/* The two forms hold the same language model: the same logits. */
static void test_llama4_forms(void **state)
{
	(void)state;
	size_t n = N_TOK * V_L4;
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	assert_true(a && b);
	ref_cfg ca, cb;
	full_logits("llama4", a, &ca);
	full_logits("llama4_text", b, &cb);
	assert_memory_equal(a, b, n * sizeof(float));
	free(a);
	free(b);
}

static void tamper_router(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's router replica times 2 (scores, and maybe choices) */
	assert_int_equal(n, 2);
	ref_tensor *t = find_tensor(&r[1], FF1 "router.weight");
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * 2.0f);
}

static void test_llama4_caught(void **state)
{
	(void)state;
	expect_halves_swapped("llama4_text", 1, 1,
	                      (tamper_halves){FF1 "experts.w13_weight", 0, N_EXP, IE, HID * 2},
	                      "w13 gate / up halves swapped");
	expect_zeroed("llama4", 2, 1, 1, FF1 "shared_expert.down_proj.weight",
	              "shared expert slice dropped on rank 1");
	expect_stacks_swapped("llama4_text", 1, 2, FF1 "experts.", "expert stacks exchanged");
	expect_stacks_swapped("l4_var", 1, 2, FF1 "experts.", "the same, top-2");
	expect_caught("llama4_text", 2, 1, tamper_router, "router replica x2 on rank 1");
	expect_halves_swapped("llama4", 2, 1,
	                      (tamper_halves){"model.layers.0.feed_forward.gate_up_proj.weight", 0,
	                                      1, 384 / 2, HID * 2},
	                      "dense gate_up halves swapped on rank 0");
}

/* Each switch of the variant moves its logits: a path that ignored one would be caught
 * by the comparison with transformers (docs/reference.md), not by full vs sharded. */
static void test_llama4_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "l4_var");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.llama4 && c.kind == REF_QWEN2_MOE && c.E == N_EXP && c.topk == 2 &&
	            c.Ie == IE && c.Is == IE && c.I == 384 && c.d == 32 && c.chunk == 3 &&
	            c.l2_qk_norm && c.temp_tuning && c.rope_pairs && c.n_ext == 16 && !c.tied);
	assert_true(ref_l4_bit(c.l4_rope, 0) && !ref_l4_bit(c.l4_rope, 1));
	assert_true(ref_l4_bit(c.l4_chunked, 0) && !ref_l4_bit(c.l4_chunked, 1));
	assert_true(!ref_layer_is_moe(&c, 0) && ref_layer_is_moe(&c, 1));
	assert_float_equal(c.theta, 500000.0, 1e-6);
	assert_float_equal(c.floor_scale, 2.0, 0.0);
	size_t n = N_TOK * V_L4;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.chunk = 0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no chunked mask");
	off = c;
	off.l4_rope[0] = 3; /* RoPE (and the L2 norms) on the NoPE layer too */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE on the NoPE layer");
	off = c;
	off.temp_tuning = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no attention temperature");
	off = c;
	off.l2_qk_norm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no L2 q/k norm");
	off = c;
	off.rope_pairs = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rotate-half instead of pairs");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

/* Llama4Router: the top k logits, each weighted by its sigmoid */
static void test_llama4_router(void **state)
{
	(void)state;
	int64_t idx[2];
	float w[2];
	const float a[4] = {0.0f, 2.0f, 1.0f, -1.0f};
	ref_route_topk_sigmoid(a, 4, 2, NULL, idx, w);
	assert_true(idx[0] == 1 && idx[1] == 2);
	assert_float_equal(w[0], 1.0 / (1.0 + exp(-2.0)), 1e-6);
	assert_float_equal(w[1], 1.0 / (1.0 + exp(-1.0)), 1e-6);
	const float b[4] = {1.0f, 3.0f, 2.0f, 3.0f}; /* a tie: the lower index first */
	ref_route_topk_sigmoid(b, 4, 1, NULL, idx, w);
	assert_true(idx[0] == 1);
	const int64_t forced[2] = {3, 0};
	ref_route_topk_sigmoid(a, 4, 2, forced, idx, w);
	assert_true(idx[0] == 3 && idx[1] == 0);
	assert_float_equal(w[0], 1.0 / (1.0 + exp(1.0)), 1e-6);
	assert_float_equal(w[1], 0.5, 1e-7);
}

#define L4_JSON(extra)                                                                             \
	"{\"architectures\": [\"Llama4ForCausalLM\"], \"hidden_size\": 64, "                       \
	"\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 16, "               \
	"\"num_hidden_layers\": 8, \"vocab_size\": 100, \"intermediate_size\": 32, "               \
	"\"intermediate_size_mlp\": 48, \"num_local_experts\": 4" extra "}"

static void test_llama4_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* Llama4TextConfig's defaults: every layer MoE, top-1, NoPE every 4th layer (chunked
	 * the others), no rope_scaling */
	static const char plain[] = L4_JSON("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.llama4 && c.kind == REF_QWEN2_MOE && c.topk == 1 && c.chunk == 8192 &&
	            c.l2_qk_norm && c.temp_tuning && c.n_ext == 0 && c.I == 48 && c.Is == 32);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 500000.0, 1e-6);
	assert_float_equal(c.floor_scale, 8192.0, 0.0);
	assert_float_equal(c.temp_scale, 0.1, 1e-12);
	for (int64_t i = 0; i < 8; i++) {
		assert_true(ref_layer_is_moe(&c, i));
		assert_int_equal(ref_l4_bit(c.l4_rope, i), (i + 1) % 4 != 0);
		assert_int_equal(ref_l4_bit(c.l4_chunked, i), (i + 1) % 4 != 0);
	}
	/* Maverick's interleave, an explicit list, layer types, no type in rope_scaling */
	static const char mav[] = L4_JSON(
	    ", \"interleave_moe_layer_step\": 2, \"no_rope_layer_interval\": 2, \"layer_types\": "
	    "[\"full_attention\", \"full_attention\", \"full_attention\", \"full_attention\", "
	    "\"chunked_attention\", \"full_attention\", \"full_attention\", \"full_attention\"], "
	    "\"rope_scaling\": {\"factor\": 8, \"low_freq_factor\": 1, \"high_freq_factor\": 4, "
	    "\"original_max_position_embeddings\": 8192}");
	assert_int_equal(ref_cfg_parse_json(mav, strlen(mav), &c, &err), WT_OK);
	assert_true(c.n_ext == 8 && ref_l4_bit(c.l4_chunked, 4) && !ref_l4_bit(c.l4_chunked, 0));
	for (int64_t i = 0; i < 8; i++) {
		assert_int_equal(ref_layer_is_moe(&c, i), i % 2 == 1);
		assert_int_equal(ref_l4_bit(c.l4_rope, i), i % 2 == 0);
	}
	expect_cfg(L4_JSON(", \"moe_layers\": []"), WT_OK, ""); /* all dense */
	assert_int_equal(ref_cfg_parse_json(L4_JSON(", \"moe_layers\": []"),
	                                    strlen(L4_JSON(", \"moe_layers\": []")), &c, &err),
	                 WT_OK);
	assert_true(c.kind == REF_DENSE && !ref_layer_is_moe(&c, 3));
	expect_cfg(L4_JSON(", \"no_rope_layers\": [1, 0]"), WT_ECORRUPT, "no_rope_layers");
	expect_cfg(L4_JSON(", \"no_rope_layer_interval\": 0"), WT_ECORRUPT,
	           "no_rope_layer_interval");
	expect_cfg(L4_JSON(", \"layer_types\": [\"sliding_attention\", \"full_attention\", "
	                   "\"full_attention\", \"full_attention\", \"full_attention\", "
	                   "\"full_attention\", \"full_attention\", \"full_attention\"]"),
	           WT_EUNSUPPORTED, "layer_types");
	expect_cfg(L4_JSON(", \"attention_chunk_size\": null"), WT_ECORRUPT,
	           "attention_chunk_size");
	expect_cfg(L4_JSON(", \"attention_chunk_size\": 0"), WT_ECORRUPT, "attention_chunk_size");
	expect_cfg(L4_JSON(", \"floor_scale\": 0"), WT_ECORRUPT, "floor_scale");
	expect_cfg(L4_JSON(", \"attn_scale\": 1e300"), WT_ECORRUPT, "attn_scale");
	expect_cfg(L4_JSON(", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2}"),
	           WT_EUNSUPPORTED, "'linear'");
	expect_cfg(L4_JSON(", \"num_experts_per_tok\": 5"), WT_EUNSUPPORTED, "num_experts_per_tok");
	expect_cfg(L4_JSON(", \"hidden_act\": \"relu\""), WT_EUNSUPPORTED, "hidden_act");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_llama4_pass),   cmocka_unit_test(test_llama4_forms),
	    cmocka_unit_test(test_llama4_caught), cmocka_unit_test(test_llama4_switches),
	    cmocka_unit_test(test_llama4_router), cmocka_unit_test(test_llama4_config),
	    cmocka_unit_test(test_llama4_fbgemm),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
