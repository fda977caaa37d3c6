/*
 * test_reference_baichuan.c — the reference forward pass over Baichuan / Baichuan2 (remote
 * code): Llama's decoder with q/k/v packed in self_attn.W_pack, read renamed onto Llama's
 * (reference/baichuan.c). Fixture baichuan (BaichuanForCausalLM, hidden_size 128: ALiBi, as
 * vLLM runs every BaichuanForCausalLM but Baichuan2-7B's hidden_size 4096) and baichuan_7b
 * (BaiChuanForCausalLM: RoPE). Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8;
 * each rank its heads' ALiBi slopes) or the quantized layouts' budgets; the full path's logits
 * equal transformers 4.57.1's LlamaForCausalLM built from the same weights (W_pack split into
 * q_proj / k_proj / v_proj; for ALiBi its rotary embedding left out and the slopes'
 * bias added to the scores) at 28 points each; rank tensors broken the way a wrong planner
 * would break them are caught; Baichuan2's NormHead on a hand case. Fixtures from
 * $WT_BUILD/wt-mkckpt (hid 128, H 8 / 4, I 192 / 256, V 1000, 2 layers, untied; seed printed).
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
#include "reference/cfg_kind.h"
#include "reference/ckpt.h"
#include "kernels/kernels.h"
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

#define L1 "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"baichuan", "baichuan_7b"};
	return gen_fixtures("reference_baichuan", fams, 2);
}

static void test_baichuan_pass(void **state)
{
	(void)state;
	for (uint32_t T = 1; T <= 8; T *= 2)
		expect_pass("baichuan", T, 1, WT_QUANT_NONE, 0);
	for (uint32_t T = 1; T <= 4; T *= 2)
		expect_pass("baichuan_7b", T, 1, WT_QUANT_NONE, 0);
	expect_pass("baichuan", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("baichuan", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("baichuan_7b", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("baichuan_7b", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: LlamaForCausalLM.from_pretrained
 * of the fixture with W_pack split into q_proj / k_proj / v_proj (strict: no missing,
 * unexpected or mismatched key), eager, float32. baichuan: apply_rotary_pos_emb left out and a
 * [1, H, T, T] mask of slope_h * (s - t) (the remote code's _get_interleave slopes, equal to
 * vLLM's _get_alibi_slopes and BLOOM's) added to the scaled scores; all 7 x 1000 logits within
 * 5.1e-7 of the reference's (largest 0.825; with RoPE instead they move by 0.3). */
static const gold_pt gold_baichuan[] = {
    {0, 0, 1.734992415e-01f},   {0, 333, 3.659341633e-01f}, {0, 666, 2.113292068e-01f},
    {0, 999, 2.116975039e-01f}, {1, 0, 1.141532138e-02f},   {1, 333, 1.352927536e-01f},
    {1, 666, 2.831612825e-01f}, {1, 999, 4.995624721e-01f}, {2, 0, -5.081025884e-02f},
    {2, 333, 1.912683994e-02f}, {2, 666, 1.822825968e-01f}, {2, 999, 5.046300888e-01f},
    {3, 0, -7.952371240e-02f},  {3, 333, 1.608585566e-01f}, {3, 666, 3.294751942e-01f},
    {3, 999, 2.270600498e-01f}, {4, 0, 1.062827557e-02f},   {4, 333, 3.614993691e-01f},
    {4, 666, 4.532023370e-01f}, {4, 999, 2.300103903e-01f}, {5, 0, -1.808853894e-01f},
    {5, 333, 4.719097316e-01f}, {5, 666, 5.120167732e-01f}, {5, 999, 2.985464334e-01f},
    {6, 0, -8.194189519e-02f},  {6, 333, 7.505310327e-02f}, {6, 666, 2.457672954e-01f},
    {6, 999, 5.012288690e-01f},
};

/* baichuan_7b: RoPE (theta 10000); all 7 x 1000 logits within 5.9e-7 (largest 0.936). */
static const gold_pt gold_baichuan_7b[] = {
    {0, 0, 2.046596855e-01f},    {0, 333, 2.893567085e-01f}, {0, 666, 1.869485080e-01f},
    {0, 999, 3.320474029e-01f},  {1, 0, 3.678745404e-02f},   {1, 333, 9.008049965e-02f},
    {1, 666, 1.307383180e-01f},  {1, 999, 6.671996117e-01f}, {2, 0, 8.710487187e-02f},
    {2, 333, -9.687156230e-02f}, {2, 666, 1.934378445e-01f}, {2, 999, 5.701888204e-01f},
    {3, 0, 1.324262470e-01f},    {3, 333, 5.911557004e-02f}, {3, 666, 4.585524499e-01f},
    {3, 999, 4.045972824e-01f},  {4, 0, -5.306465924e-02f},  {4, 333, 2.367824316e-03f},
    {4, 666, 3.841725290e-01f},  {4, 999, 3.607243598e-01f}, {5, 0, -1.979066133e-01f},
    {5, 333, 1.239341497e-02f},  {5, 666, 2.948154807e-01f}, {5, 999, 5.349006653e-01f},
    {6, 0, -7.648696005e-02f},   {6, 333, 8.564262092e-02f}, {6, 666, 5.142554045e-01f},
    {6, 999, 4.738768041e-01f},
};

#define GOLD_TOL 1e-5

static void test_baichuan_transformers(void **state)
{
	(void)state;
	expect_gold("baichuan", 1000, GOLD_TOL, gold_baichuan,
	            sizeof(gold_baichuan) / sizeof(gold_baichuan[0]));
	expect_gold("baichuan_7b", 1000, GOLD_TOL, gold_baichuan_7b,
	            sizeof(gold_baichuan_7b) / sizeof(gold_baichuan_7b[0]));
}

static void test_baichuan_caught(void **state)
{
	(void)state;
	for (int k = 0; k < 2; k++) {
		const char *fam = k ? "baichuan_7b" : "baichuan";
		expect_swapped(fam, 2, 1, L1 "self_attn.W_pack.weight",
		               "the ranks' q/k/v heads exchanged");
		expect_swapped(fam, 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
		expect_swapped(fam, 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
		expect_swapped(fam, 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	}
	/* rank 0's W_pack [q_r; k_r; v_r]: its q and k heads exchanged (4 heads of 16 rows) */
	expect_halves_swapped("baichuan", 2, 1,
	                      (tamper_halves){L1 "self_attn.W_pack.weight", 0, 1, 64, 128 * 4},
	                      "rank 0's q / k heads exchanged");
	expect_halves_swapped("baichuan", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
	/* TP 4 under ALiBi: ranks 0 and 1 hold other slopes */
	expect_swapped("baichuan", 4, 1, L1 "self_attn.W_pack.weight",
	               "ranks 0 and 1's heads exchanged (other ALiBi slopes)");
}

/* The fixtures are read as Llama's decoder: RMSNorms, the gated MLP, q/k/v from W_pack,
 * untied; BaichuanForCausalLM with ALiBi (alibi_max 8), BaiChuanForCausalLM with RoPE. */
static void test_baichuan_config(void **state)
{
	(void)state;
	for (int k = 0; k < 2; k++) {
		model m = {0};
		ref_set ck = {0};
		ref_cfg c;
		wt_errbuf err = {0};
		open_model(&m, k ? "baichuan_7b" : "baichuan");
		assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
		assert_true(c.baichuan && c.kind == REF_DENSE && !c.fused_ckpt && !c.layernorm &&
		            !c.plain_mlp && !c.tied && c.H == (k ? 4 : 8) && c.KV == c.H &&
		            c.d == 128 / c.H && c.I == (k ? 256 : 192) && c.L == 2 &&
		            c.hid == 128 && c.V == 1000);
		assert_true(c.bc_alibi == (k == 0));
		assert_true(k || c.alibi_max == 8.0);
		assert_true(fabs(c.eps - (k ? 1e-6 : 1e-5)) < 1e-12);
		assert_true(fabs(c.theta - 1e4) < 1e-6);
		ref_set_clear(&ck);
		close_model(&m);
	}
}

/* Keys left out of config.json take the shared class defaults: the fixture baichuan without
 * rms_norm_eps (it gives 1e-5) reads BaichuanConfig's 1e-6, and neither fixture has
 * rope_theta (10000, test_baichuan_config). */
static void test_baichuan_defaults(void **state)
{
	(void)state;
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
	         "mkdir -p '%s/bc_noeps' && cp '%s/baichuan/'*.safetensors '%s/bc_noeps/' && "
	         "sed '/\"rms_norm_eps\"/d' '%s/baichuan/config.json' >'%s/bc_noeps/config.json'",
	         g_root, g_root, g_root, g_root, g_root);
	assert_int_equal(system(cmd), 0);
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "bc_noeps");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.baichuan && c.bc_alibi && fabs(c.eps - 1e-6) < 1e-12);
	ref_set_clear(&ck);
	close_model(&m);
}

/* vLLM's choice by architecture: BaichuanForCausalLM ALiBi unless hidden_size is 4096
 * (Baichuan2-7B), BaiChuanForCausalLM (Baichuan-7B) RoPE at any width. */
static void test_baichuan_position(void **state)
{
	(void)state;
	static const struct {
		const char *arch;
		int64_t hid;
		bool alibi;
	} t[] = {{"BaichuanForCausalLM", 5120, true},
	         {"BaichuanForCausalLM", 4096, false},
	         {"BaiChuanForCausalLM", 4096, false},
	         {"BaiChuanForCausalLM", 5120, false}};
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		ref_cfg c;
		wt_errbuf err = {0};
		memset(&c, 0, sizeof(c));
		c.hid = t[k].hid;
		assert_int_equal(ref_kind_of("baichuan", t[k].arch, &c, &err), WT_OK);
		assert_true(c.baichuan && c.bc_alibi == t[k].alibi);
	}
}

/* Baichuan2's NormHead (vocab_size 125696): lm_head's rows read at unit norm (a zero row, as
 * a rank's padding, stays zero), other weights and other vocabularies as they are. */
static void test_baichuan_norm_head(void **state)
{
	(void)state;
	static const float w[3][2] = {{3.0f, 4.0f}, {0.0f, 0.0f}, {-1.0f, 0.0f}};
	static const float want[3][2] = {{0.6f, 0.8f}, {0.0f, 0.0f}, {-1.0f, 0.0f}};
	int64_t sh[2] = {3, 2};
	for (int k = 0; k < 2; k++) {
		ref_set in = {0}, out = {0};
		ref_cfg c;
		wt_errbuf err = {0};
		memset(&c, 0, sizeof(c));
		c.baichuan = true;
		c.V = k ? 125696 : 64000;
		assert_int_equal(
		    ref_set_add(&in, "lm_head.weight", WT_F32, 2, sh, w, sizeof(w), &err), WT_OK);
		assert_int_equal(ref_set_add(&in, "model.embed_tokens.weight", WT_F32, 2, sh, w,
		                             sizeof(w), &err),
		                 WT_OK);
		assert_int_equal(ref_baichuan_rename(&c, &in, &out, true, &err), WT_OK);
		const float *h = (const float *)ref_set_find(&out, "lm_head.weight")->data;
		const float *e =
		    (const float *)ref_set_find(&out, "model.embed_tokens.weight")->data;
		for (int i = 0; i < 6; i++) {
			assert_true(fabsf(h[i] - (k ? want[i / 2][i % 2] : w[i / 2][i % 2])) <
			            1e-7f);
			assert_true(e[i] == w[i / 2][i % 2]);
		}
		ref_set_clear(&in);
		ref_set_clear(&out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_baichuan_pass),     cmocka_unit_test(test_baichuan_transformers),
	    cmocka_unit_test(test_baichuan_caught),   cmocka_unit_test(test_baichuan_config),
	    cmocka_unit_test(test_baichuan_position), cmocka_unit_test(test_baichuan_norm_head),
	    cmocka_unit_test(test_baichuan_defaults),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
