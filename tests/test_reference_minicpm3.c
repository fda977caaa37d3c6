/*
 * test_reference_minicpm3.c — the reference forward pass over MiniCPM3 (MiniCPM3ForCausalLM,
 * remote code; fixture minicpm3): DeepSeek-V2's multi-head latent attention (reference/mla.c,
 * rotate-half RoPE on the rope parts, latent norms at rms_norm_eps) in MiniCPM's decoder
 * (reference/cfg_minicpm.c): embeddings times scale_emb, each block's output times
 * scale_depth / sqrt(num_hidden_layers), the logits divided by hidden_size / dim_model_base,
 * a dense SwiGLU MLP in every layer. Full and sharded logits agree within REF_TOL_F32 (TP 1,
 * 2, 4, 8: q_b_proj / kv_b_proj rows and o_proj columns by heads, q_a / kv_a replicated) or the
 * quantized layouts' budgets; the full path's logits equal a torch model of vLLM's minicpm3.py
 * built from transformers 4.57.1's blocks at 28 points; rank tensors broken the way a wrong
 * planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family minicpm3
 * (hid 128, H 8, q_lora 64, kv_lora 32, nope 16, rope 8, v 16, I 192, V 1000, 2 layers, tied;
 * seed printed).
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

#define L1 "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"minicpm3"};
	return gen_fixtures("reference_minicpm3", fams, 1);
}

static void test_minicpm3_pass(void **state)
{
	(void)state;
	expect_pass_tp("minicpm3", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens:
 * DeepseekV3ForCausalLM.from_pretrained of the fixture (strict: no missing, unexpected or
 * mismatched key; its config from the fixture's: first_k_dense_replace 2 so every MLP is dense,
 * rope_interleave false, v_head_dim 16, tied), eager, float32, run as vLLM's minicpm3.py:
 * q_a_layernorm / kv_a_layernorm at rms_norm_eps 1e-5, the embeddings times scale_emb 12, each
 * attention and MLP output times 1.4 / sqrt(2) before the residual add, the final norm's output
 * divided by 128 / 32 before lm_head. All 7 x 1000 within 1.8e-7 of the reference's (largest
 * 0.684); without MiniCPM's scalings the logits move by 0.75 */
static const gold_pt gold_minicpm3[] = {
    {0, 0, -5.696580186e-02f},   {0, 333, 7.451765239e-02f},  {0, 666, -4.859283939e-02f},
    {0, 999, -2.955425065e-03f}, {1, 0, 5.741798785e-03f},    {1, 333, -3.834198043e-02f},
    {1, 666, -5.145042203e-03f}, {1, 999, 6.436972618e-01f},  {2, 0, 4.722067155e-03f},
    {2, 333, 2.693536505e-02f},  {2, 666, -3.937992826e-02f}, {2, 999, 9.175048769e-02f},
    {3, 0, -4.200378433e-02f},   {3, 333, 3.715373203e-02f},  {3, 666, 7.392346859e-02f},
    {3, 999, 3.825227544e-02f},  {4, 0, 1.884675026e-02f},    {4, 333, 1.399530843e-02f},
    {4, 666, -7.347705960e-02f}, {4, 999, -6.167911738e-02f}, {5, 0, -8.790462464e-02f},
    {5, 333, 9.188070148e-02f},  {5, 666, 3.898159042e-02f},  {5, 999, -2.898925217e-03f},
    {6, 0, -3.152700607e-03f},   {6, 333, -1.486618258e-02f}, {6, 666, 1.982792318e-01f},
    {6, 999, 5.660114810e-03f}};

/* Tighter than the other families' 1e-5 (measured 6.0e-8 here, 1.8e-7 over all 7 x 1000): the
 * latent norms at DeepSeek's 1e-6 instead of rms_norm_eps 1e-5 move these points by 1.4e-6 */
#define GOLD_TOL 5e-7

static void test_minicpm3_transformers(void **state)
{
	(void)state;
	expect_gold("minicpm3", 1000, GOLD_TOL, gold_minicpm3,
	            sizeof(gold_minicpm3) / sizeof(gold_minicpm3[0]));
}

static void test_minicpm3_caught(void **state)
{
	(void)state;
	expect_swapped("minicpm3", 2, 1, L1 "self_attn.q_b_proj.weight",
	               "the ranks' q_b_proj heads exchanged");
	expect_swapped("minicpm3", 2, 1, L1 "self_attn.kv_b_proj.weight",
	               "the ranks' kv_b_proj heads exchanged");
	expect_swapped("minicpm3", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("minicpm3", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("minicpm3", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_halves_swapped("minicpm3", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
}

/* The fixture is read as DeepSeek-V2's MLA without experts or interleave, v_head_dim from
 * MiniCPM3Config's None (qk_nope_head_dim), tied by MiniCPM3Config's default, with scale_emb
 * 12, scale_depth 1.4 over 2 layers and dim_model_base 32 as Granite's multipliers. */
static void test_minicpm3_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "minicpm3");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.minicpm3 && c.minicpm && c.kind == REF_DEEPSEEK && ref_is_mla(&c) &&
	            !c.rope_interleave && !c.ds_v2 && c.tied && c.H == 8 && c.I == 192 &&
	            c.L == 2 && c.hid == 128 && c.V == 1000 && c.act == REF_ACT_SILU);
	assert_true(c.q_lora == 64 && c.kv_lora == 32 && c.nope == 16 && c.rope == 8 &&
	            c.vhd == 16);
	assert_false(ref_layer_is_moe(&c, 0) || ref_layer_is_moe(&c, 1));
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 1e4) < 1e-6);
	assert_true(fabsf(c.embed_scale - 12.0f) < 1e-6f);
	assert_true(fabs(c.resid_mult - 1.4 / sqrt(2.0)) < 1e-12);
	assert_true(fabs(c.logits_div - 4.0) < 1e-12);
	assert_true(c.attn_scale == 0.0);
	ref_set_clear(&ck);
	close_model(&m);
}

#define MC3(extra)                                                                                 \
	"{\"architectures\": [\"MiniCPM3ForCausalLM\"], \"model_type\": \"minicpm3\", "            \
	"\"hidden_size\": 128, \"num_attention_heads\": 8, \"num_hidden_layers\": 2, "             \
	"\"vocab_size\": 1000, \"intermediate_size\": 192, \"q_lora_rank\": 64, "                  \
	"\"kv_lora_rank\": 32, \"qk_nope_head_dim\": 16, \"qk_rope_head_dim\": 8" extra "}"

/* What the reference does not run for MiniCPM3, refused naming the key. */
static void test_minicpm3_refused(void **state)
{
	(void)state;
	expect_cfg(MC3(""), WT_OK, NULL);
	expect_cfg(MC3(", \"hidden_act\": \"gelu\""), WT_EUNSUPPORTED, "hidden_act");
	expect_cfg(
	    MC3(", \"rope_scaling\": {\"type\": \"longrope\", \"long_factor\": [1, 1, 1, 1], "
	        "\"short_factor\": [1, 1, 1, 1], \"original_max_position_embeddings\": 32}"),
	    WT_EUNSUPPORTED, "rope_scaling");
	expect_cfg(MC3(", \"rope_scaling\": {\"type\": \"yarn\", \"factor\": 4, "
	               "\"original_max_position_embeddings\": 2048, \"mscale_all_dim\": 1}"),
	           WT_EUNSUPPORTED, "rope_scaling on MiniCPM3");
	expect_cfg(MC3(", \"scale_depth\": 0"), WT_EUNSUPPORTED, "scale_depth");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_minicpm3_config),       cmocka_unit_test(test_minicpm3_pass),
	    cmocka_unit_test(test_minicpm3_transformers), cmocka_unit_test(test_minicpm3_caught),
	    cmocka_unit_test(test_minicpm3_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
