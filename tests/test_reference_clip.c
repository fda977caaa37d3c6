/*
 * test_reference_clip.c — the reference forward pass over CLIP's text tower (CLIPModel, fixture
 * clip): token + learned position rows, pre-LayerNorm layers under the causal mask (q/k/v and
 * out_proj with biases, fc2(quick_gelu(fc1))), final_layer_norm, then text_projection on every
 * token (transformers' get_text_features is the EOS token's row: the fixture's eos_token_id is
 * the last test token, so the last row, vLLM's LAST pooling). Full and sharded outputs agree
 * within REF_TOL_F32 (TP 1, 2, 4; the position table vocabulary-parallel) or the quantized
 * layouts' budgets (both towers' Linears quantized, the projections not); the full path's
 * values equal transformers 4.57.1's (CLIPModel, eager, float32) at 28 points of the 7 x 80
 * output; rank tensors broken the way a wrong planner would break them are caught. Fixture
 * from $WT_BUILD/wt-mkckpt --family clip (text hid 96, H 4, I 192, V 1000, 16 positions, 2
 * layers, projection_dim 80; seed printed).
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

#define L1 "text_model.encoder.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"clip"};
	return gen_fixtures("reference_clip", fams, 1);
}

static void test_clip_pass(void **state)
{
	(void)state;
	expect_pass_tp("clip", false);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: text_projection of every token's
 * final_layer_norm output (CLIPModel.from_pretrained of the fixture, strict, eager, float32);
 * token 6's row is get_text_features' (within 6e-8) */
static const gold_pt gold_clip[] = {
    {0, 0, -1.072668731e-01f},  {0, 13, 1.467641443e-02f}, {0, 41, 8.695998043e-02f},
    {0, 79, 1.592195034e-01f},  {1, 0, -1.194423661e-01f}, {1, 13, 1.918474585e-01f},
    {1, 41, -3.388988972e-02f}, {1, 79, 4.023156464e-01f}, {2, 0, 1.237077713e-01f},
    {2, 13, 1.643520445e-01f},  {2, 41, 2.320908970e-04f}, {2, 79, 2.156898528e-01f},
    {3, 0, 7.104182243e-02f},   {3, 13, 9.039151669e-02f}, {3, 41, 1.730418503e-01f},
    {3, 79, 4.158959538e-02f},  {4, 0, 1.536942124e-01f},  {4, 13, 5.162844062e-02f},
    {4, 41, -3.833554685e-02f}, {4, 79, 4.212676287e-01f}, {5, 0, 2.450886182e-02f},
    {5, 13, -1.089335233e-01f}, {5, 41, 1.076197699e-01f}, {5, 79, 1.223646104e-01f},
    {6, 0, 1.654064953e-01f},   {6, 13, 1.088386551e-01f}, {6, 41, -1.649373174e-01f},
    {6, 79, 3.821329772e-01f},
};

#define GOLD_TOL 1e-5

static void test_clip_transformers(void **state)
{
	(void)state;
	expect_gold("clip", 80, GOLD_TOL, gold_clip, sizeof(gold_clip) / sizeof(gold_clip[0]));
}

/* Rank 1's text_projection zeroed (a rank given no head, or the wrong tensor). */
static void zero_proj(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_true(n >= 2);
	ref_tensor *t = find_tensor(&r[1], "text_projection.weight");
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_clip_caught(void **state)
{
	(void)state;
	expect_swapped("clip", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("clip", 2, 1, L1 "self_attn.out_proj.weight", "out_proj columns exchanged");
	expect_swapped("clip", 2, 1, L1 "mlp.fc1.weight", "fc1 rows exchanged");
	expect_swapped("clip", 2, 1, "text_model.embeddings.position_embedding.weight",
	               "the ranks' position rows exchanged");
	expect_caught("clip", 2, 1, zero_proj, "one rank's text_projection zeroed");
}

/* vocab_pad 1 at TP 4: the 16 position rows 4 a rank, so the 7 tokens' positions span ranks 0
 * and 1 (with the default 64 every rank's rows start past them but rank 0's): the sharded pass
 * adds each rank's own rows, and one rank's rows given to the other are caught. */
static void test_clip_positions(void **state)
{
	(void)state;
	for (int tamper = 0; tamper < 2; tamper++) {
		model m = {0};
		wt_layout l;
		ref_result res;
		wt_errbuf err = {0};
		open_model(&m, "clip");
		wt_layout_init(&l);
		l.tp_size = 4;
		l.vocab_pad = 1;
		assert_int_equal(
		    ref_verify(m.c, &l, g_tokens, N_TOK, tamper ? tamper_swap_ranks : NULL,
		               (void *)"text_model.embeddings.position_embedding.weight", &res,
		               &err),
		    WT_OK);
		print_message("clip tp 4 vocab_pad 1%s: max|diff| %.3g of %.3g %s\n",
		              tamper ? ", ranks 0 / 1 positions exchanged" : "",
		              res.diff.max_abs_diff, res.diff.max_abs_ref,
		              res.pass ? "PASS" : "FAIL");
		assert_int_equal(res.pass, !tamper);
		wt_layout_clear(&l);
		close_model(&m);
	}
}

/* The fixture is read as CLIP's text tower: LayerNorms, the plain MLP, quick_gelu, the
 * projection as an 80-wide head, no lm_head. */
static void test_clip_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "clip");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.clip && c.dec_cls && c.layernorm && c.plain_mlp && c.kind == REF_DENSE &&
	            c.act == REF_ACT_QUICK_GELU && c.n_labels == 80 && c.H == 4 && c.KV == 4 &&
	            c.d == 24 && c.I == 192 && c.L == 2 && c.hid == 96 && c.V == 1000);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_int_equal(ref_out_count(&c, N_TOK), N_TOK * 80);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_clip_pass),   cmocka_unit_test(test_clip_transformers),
	    cmocka_unit_test(test_clip_caught), cmocka_unit_test(test_clip_positions),
	    cmocka_unit_test(test_clip_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
