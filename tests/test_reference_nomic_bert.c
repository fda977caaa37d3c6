/*
 * test_reference_nomic_bert.c — the reference forward pass over NomicBertModel (fixture
 * nomic_bert, model_type nomic_bert, remote code), as vLLM's bert_with_rope.py runs it: word +
 * token type 0 embeddings, emb_ln, then per layer x = norm1(x + out_proj(attn(rope(Wqkv x)))),
 * x = norm2(x + fc2(silu(fc12 x) * fc11 x)), bidirectional attention, rotate-half RoPE of base
 * rotary_emb_base on head_dim * rotary_emb_fraction dims; the output is the last hidden state.
 * Full and sharded outputs agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts'
 * budgets; the full path equals an independent torch model at 28 points; the switches the
 * reference reads move the output; rank tensors broken the way a wrong planner would break them
 * are caught. Fixture from $WT_BUILD/wt-mkckpt --family nomic_bert (hid 128, H 8, I 192,
 * V 1000, 2 layers, 2 token types, every bias; seed printed).
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

#define FAM "nomic_bert"
#define L1  "encoder.layers.1."
#define HID 128

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_nomic_bert", fams, 1);
}

static void test_nomic_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, true);
}

/* (token, column, torch value), tokens g_tokens: a torch model written from vLLM's
 * bert_with_rope.py module semantics (NomicBertModel's mapper: Wqkv -> qkv_proj, norm1 / norm2
 * -> attn_ln / mlp_ln, fc12 gate, fc11 up, silu-and-mul), anchored to transformers 4.57.1's
 * BertEmbeddings (word + token type 0, LayerNorm; position_embedding_type rotary adds no learned
 * positions), nn.LayerNorm and modeling_llama's apply_rotary_pos_emb (base 1000, all 16 dims),
 * float32, every fixture tensor used. Largest difference over all 7 x 128 values 1.2e-6
 * (largest 3.19). */
static const gold_pt gold_nomic[] = {
    {0, 0, 1.294101357e+00f},    {0, 37, -1.090636611e+00f},  {0, 90, 2.529379129e+00f},
    {0, 127, 1.139001772e-01f},  {1, 0, 1.729051709e+00f},    {1, 37, 1.760118008e-01f},
    {1, 90, 2.547182560e+00f},   {1, 127, -9.349029660e-01f}, {2, 0, 6.633372903e-01f},
    {2, 37, -1.326062560e+00f},  {2, 90, 2.005355835e+00f},   {2, 127, -6.500062943e-01f},
    {3, 0, 5.536911488e-01f},    {3, 37, -1.228631020e+00f},  {3, 90, 1.202588797e+00f},
    {3, 127, 3.035880327e-01f},  {4, 0, 3.255318403e-01f},    {4, 37, -4.508506358e-01f},
    {4, 90, 1.574936748e+00f},   {4, 127, 2.926075459e-01f},  {5, 0, 1.942400098e+00f},
    {5, 37, 1.970825493e-01f},   {5, 90, 1.357787609e+00f},   {5, 127, -9.399744868e-01f},
    {6, 0, -9.863805957e-03f},   {6, 37, -3.461495638e-01f},  {6, 90, 8.096325994e-01f},
    {6, 127, -1.434358716e+00f},
};

#define GOLD_TOL 1e-5

static void test_nomic_torch(void **state)
{
	(void)state;
	expect_gold(FAM, HID, GOLD_TOL, gold_nomic, sizeof(gold_nomic) / sizeof(gold_nomic[0]));
}

/* The keys the reference reads move the output: half the rotary dims, another base, no token
 * type row. */
static void test_nomic_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	float a[N_TOK * HID], b[N_TOK * HID];
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.brope == 1 && c.br_bias && c.rot_dim == 16 && c.n_types == 2 &&
	            fabs(c.theta - 1000.0) < 1e-9 && fabs(c.eps - 1e-12) < 1e-20);
	logits_with(&c, &ck, a);
	c.rot_dim = 8;
	logits_with(&c, &ck, b);
	expect_moved(a, b, N_TOK * HID, 1e-4, "rotary_emb_fraction 0.5");
	c.rot_dim = 16;
	c.theta = 10000.0;
	logits_with(&c, &ck, b);
	expect_moved(a, b, N_TOK * HID, 1e-4, "RoPE base 10000");
	c.theta = 1000.0;
	c.n_types = 0;
	logits_with(&c, &ck, b);
	expect_moved(a, b, N_TOK * HID, 1e-4, "token type 0's row left out");
	ref_set_clear(&ck);
	close_model(&m);
}

/* Rank 1's copy of layer 0's attn_ln zeroed (a rank given the wrong replica). */
static void zero_attn_ln(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_true(n >= 2);
	ref_tensor *t = find_tensor(&r[1], "encoder.layers.0.attn_ln.weight");
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_nomic_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "attn.qkv_proj.weight", "the ranks' q/k/v heads exchanged");
	expect_swapped(FAM, 2, 1, L1 "attn.qkv_proj.bias", "the ranks' q/k/v biases exchanged");
	expect_swapped(FAM, 2, 1, L1 "attn.out_proj.weight", "out_proj columns exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	tamper_halves gu = {L1 "mlp.gate_up_proj.weight", 0, 1, 96, HID * sizeof(float)};
	expect_halves_swapped(FAM, 2, 1, gu, "rank 0's gate and up halves exchanged");
	tamper_halves gb = {L1 "mlp.gate_up_proj.bias", 1, 1, 48, sizeof(float)};
	expect_halves_swapped(FAM, 4, 1, gb, "rank 1's gate and up bias halves exchanged");
	expect_zeroed(FAM, 2, 1, 0, "embeddings.token_type_embeddings.weight",
	              "rank 0's token type rows zeroed");
	expect_zeroed(FAM, 2, 1, 1, L1 "mlp.down_proj.bias", "rank 1's down_proj bias zeroed");
	expect_caught(FAM, 2, 1, zero_attn_ln, "one rank's attn_ln zeroed");
}

/* The fixture is read as NomicBertConfig through vLLM's rewrite: GPT-2's n_* dims, one head of
 * hid / H per kv head, the encoder's hid floats per token, the checkpoint's own names. */
static void test_nomic_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_BERT && !c.roberta && !c.modernbert && c.H == 8 && c.KV == 8 &&
	            c.d == 16 && c.I == 192 && c.L == 2 && c.hid == HID && c.V == 1000);
	assert_int_equal(ref_out_count(&c, N_TOK), N_TOK * HID);
	assert_non_null(ref_set_find(&ck, "emb_ln.weight"));
	assert_non_null(ref_set_find(&ck, L1 "mlp.fc12.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

/* NomicBertConfig's keys as the reference reads them (cfg_bert_rope.c): the remote class's
 * defaults where absent, rope_theta over rotary_emb_base, the refusals naming the key. */
static int keys_of(const char *json, ref_cfg *c)
{
	wt_errbuf err = {0};
	memset(c, 0, sizeof(*c));
	c->hid = HID;
	c->H = c->KV = 8;
	c->d = 16;
	return ref_cfg_bert_rope(c, json, strlen(json), &err);
}

static void test_nomic_keys(void **state)
{
	(void)state;
	ref_cfg c;
	assert_int_equal(keys_of("{}", &c), WT_OK);
	assert_true(c.rot_dim == 0 && fabs(c.theta - 1000.0) < 1e-9 && fabs(c.eps - 1e-5) < 1e-12 &&
	            c.n_types == 2 && c.br_bias && c.max_pos == 2048);
	assert_int_equal(keys_of("{\"rotary_emb_fraction\": 0.5, \"rotary_emb_base\": 500, "
	                         "\"qkv_proj_bias\": false, \"type_vocab_size\": 1, "
	                         "\"max_trained_positions\": 512}",
	                         &c),
	                 WT_OK);
	assert_true(c.rot_dim == 8 && fabs(c.theta - 500.0) < 1e-9 && !c.br_bias &&
	            c.n_types == 1 && c.max_pos == 512);
	assert_int_equal(keys_of("{\"rope_theta\": 20000, \"rotary_emb_base\": 1000}", &c), WT_OK);
	assert_true(fabs(c.theta - 20000.0) < 1e-9);
	assert_int_equal(keys_of("{\"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2}}", &c),
	                 WT_EUNSUPPORTED);
	assert_int_equal(keys_of("{\"rotary_emb_fraction\": 1.5}", &c), WT_EUNSUPPORTED);
	assert_int_equal(keys_of("{\"rotary_emb_base\": 1}", &c), WT_EUNSUPPORTED);
	assert_int_equal(keys_of("{\"layer_norm_epsilon\": \"small\"}", &c), WT_ECORRUPT);
	/* counts past int64's range or not whole: refused before any cast (undefined) */
	assert_int_equal(keys_of("{\"type_vocab_size\": 1e300}", &c), WT_ECORRUPT);
	assert_int_equal(keys_of("{\"max_trained_positions\": 2.5}", &c), WT_ECORRUPT);
	assert_int_equal(keys_of("{\"rotary_emb_fraction\": -1e300}", &c), WT_EUNSUPPORTED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nomic_pass),     cmocka_unit_test(test_nomic_torch),
	    cmocka_unit_test(test_nomic_switches), cmocka_unit_test(test_nomic_caught),
	    cmocka_unit_test(test_nomic_config),   cmocka_unit_test(test_nomic_keys),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
