/*
 * test_reference_whisper.c — the reference forward pass over Whisper
 * (WhisperForConditionalGeneration, fixture whisper): the encoder (conv1 / conv2, learned
 * positions, pre-norm layers with k_proj unbiased) on the fixed seeded log-mel of
 * ref_whisper_mel ([16, 16]), the decoder on the 7 test tokens with cross-attention to its
 * output, the logits against embed_tokens (proj_out tied). Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the full path's logits equal
 * transformers 4.57.1's (WhisperForConditionalGeneration, eager, float32, input_features the
 * same array, decoder_input_ids the tokens) at 28 points; rank tensors broken the way a wrong
 * planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family whisper
 * (d_model 64; encoder 2 layers of 4 heads, ffn 128, 16 mel bins, 8 positions; decoder 2
 * layers of 8 heads, ffn 192, V 1000, 32 positions; seed printed).
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

#define EL1 "model.encoder.layers.1."
#define DL0 "model.decoder.layers.0."
#define DL1 "model.decoder.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"whisper"};
	return gen_fixtures("reference_whisper", fams, 1);
}

static void test_whisper_pass(void **state)
{
	(void)state;
	expect_pass_tp("whisper", false);
}

/* (token, vocab row, transformers 4.57.1 logit), tokens g_tokens:
 * WhisperForConditionalGeneration.from_pretrained of the fixture (strict, eager, float32),
 * input_features ref_whisper_mel's [1, 16, 16] array */
static const gold_pt gold_whisper[] = {
    {0, 3, -4.232580066e-01f},   {0, 141, -6.211555004e-02f}, {0, 412, -2.044528350e-02f},
    {0, 999, 2.433521450e-01f},  {1, 3, -5.356065631e-01f},   {1, 141, -1.393188257e-02f},
    {1, 412, 1.333055180e-02f},  {1, 999, 5.117131472e-01f},  {2, 3, -3.868268728e-01f},
    {2, 141, -4.532642663e-02f}, {2, 412, -8.766829967e-02f}, {2, 999, 2.355776280e-01f},
    {3, 3, -5.957987905e-01f},   {3, 141, -5.525008217e-02f}, {3, 412, -1.122631058e-01f},
    {3, 999, 1.649197638e-01f},  {4, 3, -2.477313131e-01f},   {4, 141, -4.826903343e-03f},
    {4, 412, -8.235513419e-02f}, {4, 999, 1.507243812e-01f},  {5, 3, -3.649704456e-01f},
    {5, 141, 2.812020481e-02f},  {5, 412, -1.199376807e-01f}, {5, 999, 1.234309524e-01f},
    {6, 3, -4.954006076e-01f},   {6, 141, -5.526332557e-02f}, {6, 412, -2.860434055e-01f},
    {6, 999, 1.640021056e-01f},
};

#define GOLD_TOL 1e-5

static void test_whisper_transformers(void **state)
{
	(void)state;
	expect_gold("whisper", 1000, GOLD_TOL, gold_whisper,
	            sizeof(gold_whisper) / sizeof(gold_whisper[0]));
}

static void test_whisper_caught(void **state)
{
	(void)state;
	expect_swapped("whisper", 2, 1, EL1 "self_attn.qkv_proj.weight",
	               "the encoder's q/k/v heads exchanged between ranks");
	expect_swapped("whisper", 2, 1, EL1 "fc1.weight", "the encoder's fc1 rows exchanged");
	expect_swapped("whisper", 2, 1, DL1 "self_attn.out_proj.weight",
	               "the decoder's out_proj columns exchanged");
	expect_swapped("whisper", 2, 1, DL0 "encoder_attn.q_proj.weight",
	               "the cross-attention's q rows exchanged");
	expect_swapped("whisper", 2, 1, DL1 "encoder_attn.kv_proj.weight",
	               "the cross-attention's k/v heads exchanged");
	expect_halves_swapped("whisper", 2, 1,
	                      (tamper_halves){DL0 "encoder_attn.kv_proj.weight", 0, 1, 32, 64 * 4},
	                      "rank 0's cross-attention [k; v] halves in the wrong order");
	expect_swapped("whisper", 2, 1, DL0 "fc2.weight", "the decoder's fc2 columns exchanged");
}

/* The fixture is read as Whisper: the decoder's sizes from its own keys, the encoder's. */
static void test_whisper_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "whisper");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.whisper && c.kind == REF_DENSE && c.hid == 64 && c.H == 8 && c.KV == 8 &&
	            c.d == 8 && c.I == 192 && c.L == 2 && c.V == 1000 && c.max_pos == 32 && c.tied);
	assert_true(c.wh_el == 2 && c.wh_eh == 4 && c.wh_ei == 128 && c.wh_mel == 16 &&
	            c.wh_src == 8 && c.act == REF_ACT_GELU);
	assert_null(ref_set_find(&ck, "proj_out.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_whisper_pass),
	    cmocka_unit_test(test_whisper_transformers),
	    cmocka_unit_test(test_whisper_caught),
	    cmocka_unit_test(test_whisper_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
