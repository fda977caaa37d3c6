/*
 * test_reference_gte_new.c — the reference forward pass over GteNewModel (fixture gte_new,
 * model_type new, remote code), as vLLM's bert_with_rope.py runs it: word + token type 0
 * embeddings, embeddings.LayerNorm, then per layer x = attn_ln(x + o_proj(attn(rope(qkv_proj
 * x)))), x = mlp_ln(x + down_proj(gelu(gate x) * up x)) with [up; gate] = mlp.up_gate_proj (no
 * bias; vLLM's geglu), bidirectional attention, rotate-half RoPE of base rope_theta on every dim
 * of a head; the output is the last hidden state. Full and sharded outputs agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path equals an
 * independent torch model at 28 points; the keys the reference reads move the output; rank
 * tensors broken the way a wrong planner would break them are caught. Fixture from
 * $WT_BUILD/wt-mkckpt --family gte_new (hid 128, H 8, I 192, V 1000, 2 layers, 1 token type;
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

#define FAM "gte_new"
#define L1  "encoder.layers.1."
#define HID 128

/* gte_sf: the gte_new fixture as Snowflake's GteModel saves it (snowflake-arctic-embed-m-v2.0:
 * the same tensor names, architectures GteModel, model_type gte of the remote GteConfig). */
static int write_snowflake(void)
{
	static const char *const files[] = {"config.json", "model.safetensors"};
	if (copy_fixture(FAM, "gte_sf", files, 2) != 0)
		return -1;
	char *dir = tu_path(g_root, "gte_sf");
	edit_config(dir, "\"GteNewModel\"", "\"GteModel\"");
	edit_config(dir, "\"new\"", "\"gte\"");
	free(dir);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	int rv = gen_fixtures("reference_gte_new", fams, 1);
	return rv == 0 ? write_snowflake() : rv;
}

static void test_gte_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, true);
}

/* (token, column, torch value), tokens g_tokens: a torch model written from vLLM's
 * bert_with_rope.py module semantics (GteNewModel's mapper and split_up_gate_proj: [up; gate],
 * GeluAndMul on the gate), anchored to transformers 4.57.1's BertEmbeddings (word + token type 0,
 * LayerNorm; position_embedding_type rotary adds no learned positions), nn.LayerNorm,
 * GELUActivation and modeling_llama's apply_rotary_pos_emb (base 500000, all 16 dims), float32,
 * every fixture tensor used. Largest difference over all 7 x 128 values 7.2e-7 (largest 3.09). */
static const gold_pt gold_gte[] = {
    {0, 0, 1.333478570e+00f},    {0, 37, -9.785990715e-01f},  {0, 90, 2.261646509e+00f},
    {0, 127, 1.729276925e-01f},  {1, 0, 1.894758582e+00f},    {1, 37, 3.276935220e-01f},
    {1, 90, 2.311037779e+00f},   {1, 127, -8.721116185e-01f}, {2, 0, 7.073608637e-01f},
    {2, 37, -1.299494982e+00f},  {2, 90, 1.791876674e+00f},   {2, 127, -5.820043087e-01f},
    {3, 0, 5.913900137e-01f},    {3, 37, -1.203569531e+00f},  {3, 90, 1.035311103e+00f},
    {3, 127, 3.824415803e-01f},  {4, 0, 3.992698193e-01f},    {4, 37, -2.956793904e-01f},
    {4, 90, 1.356135130e+00f},   {4, 127, 3.208527267e-01f},  {5, 0, 2.068621397e+00f},
    {5, 37, 3.722757697e-01f},   {5, 90, 1.181928754e+00f},   {5, 127, -7.948525548e-01f},
    {6, 0, -1.439237874e-02f},   {6, 37, -1.849743426e-01f},  {6, 90, 6.415687203e-01f},
    {6, 127, -1.404270172e+00f},
};

#define GOLD_TOL 1e-5

static void test_gte_torch(void **state)
{
	(void)state;
	expect_gold(FAM, HID, GOLD_TOL, gold_gte, sizeof(gold_gte) / sizeof(gold_gte[0]));
}

/* The keys the reference reads move the output: half the rotary dims (rotary_emb_dim 8), the
 * NewConfig default base 10000, no token type table (type_vocab_size 0). */
static void test_gte_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	float a[N_TOK * HID], b[N_TOK * HID];
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.brope == 2 && c.br_bias && c.rot_dim == 16 && c.n_types == 1 &&
	            fabs(c.theta - 500000.0) < 1e-6 && fabs(c.eps - 1e-12) < 1e-20);
	logits_with(&c, &ck, a);
	c.rot_dim = 8;
	logits_with(&c, &ck, b);
	expect_moved(a, b, N_TOK * HID, 1e-4, "rotary_emb_dim 8");
	c.rot_dim = 16;
	c.theta = 10000.0;
	logits_with(&c, &ck, b);
	expect_moved(a, b, N_TOK * HID, 1e-4, "RoPE base 10000");
	c.theta = 500000.0;
	c.n_types = 0;
	logits_with(&c, &ck, b);
	expect_moved(a, b, N_TOK * HID, 1e-4, "token type 0's row left out");
	ref_set_clear(&ck);
	close_model(&m);
}

/* Rank 1's copy of layer 0's mlp_ln bias zeroed (a rank given the wrong replica). */
static void zero_mlp_ln(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_true(n >= 2);
	ref_tensor *t = find_tensor(&r[1], "encoder.layers.0.mlp_ln.bias");
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_gte_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "attn.qkv_proj.weight", "the ranks' q/k/v heads exchanged");
	expect_swapped(FAM, 2, 1, L1 "attn.qkv_proj.bias", "the ranks' q/k/v biases exchanged");
	expect_swapped(FAM, 2, 1, L1 "attn.out_proj.weight", "out_proj columns exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	tamper_halves gu = {L1 "mlp.gate_up_proj.weight", 1, 1, 96, HID * sizeof(float)};
	expect_halves_swapped(FAM, 2, 1, gu, "rank 1's gate and up halves exchanged");
	expect_zeroed(FAM, 2, 1, 0, "embeddings.token_type_embeddings.weight",
	              "rank 0's token type row zeroed");
	expect_zeroed(FAM, 2, 1, 1, L1 "attn.out_proj.bias", "rank 1's out_proj bias zeroed");
	expect_caught(FAM, 2, 1, zero_mlp_ln, "one rank's mlp_ln bias zeroed");
}

/* The fixture is read as NewConfig: BERT's names, one head of hid / H per kv head, the
 * encoder's hid floats per token, the checkpoint's own names (encoder.layer.). */
static void test_gte_config(void **state)
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
	assert_non_null(ref_set_find(&ck, "encoder.layer.1.mlp.up_gate_proj.weight"));
	assert_null(ref_set_find(&ck, "encoder.layer.1.mlp.up_gate_proj.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

/* NewConfig's keys as the reference reads them (cfg_bert_rope.c): its defaults where absent,
 * rotary_emb_dim, the refusals naming the key. */
static int keys_of(const char *json, ref_cfg *c)
{
	wt_errbuf err = {0};
	memset(c, 0, sizeof(*c));
	c->brope = 2;
	c->hid = HID;
	c->H = c->KV = 8;
	c->d = 16;
	return ref_cfg_bert_rope(c, json, strlen(json), &err);
}

static void test_gte_keys(void **state)
{
	(void)state;
	ref_cfg c;
	assert_int_equal(keys_of("{}", &c), WT_OK);
	assert_true(c.rot_dim == 16 && fabs(c.theta - 10000.0) < 1e-9 &&
	            fabs(c.eps - 1e-12) < 1e-20 && c.n_types == 1 && c.br_bias &&
	            c.max_pos == 2048);
	assert_int_equal(keys_of("{\"rotary_emb_dim\": 8, \"rope_theta\": 160000, "
	                         "\"type_vocab_size\": 0, \"layer_norm_eps\": 1e-5, "
	                         "\"max_position_embeddings\": 8192}",
	                         &c),
	                 WT_OK);
	assert_true(c.rot_dim == 8 && fabs(c.theta - 160000.0) < 1e-6 && c.n_types == 0 &&
	            fabs(c.eps - 1e-5) < 1e-12 && c.max_pos == 8192);
	assert_int_equal(keys_of("{\"rope_scaling\": {\"type\": \"ntk\", \"factor\": 2.0}}", &c),
	                 WT_EUNSUPPORTED);
	assert_int_equal(keys_of("{\"rotary_emb_dim\": 32}", &c), WT_EUNSUPPORTED);
	assert_int_equal(keys_of("{\"rope_theta\": \"big\"}", &c), WT_ECORRUPT);
	/* counts past int64's range or not whole: refused before any cast (undefined) */
	assert_int_equal(keys_of("{\"max_position_embeddings\": 1e300}", &c), WT_ECORRUPT);
	assert_int_equal(keys_of("{\"type_vocab_size\": -1}", &c), WT_ECORRUPT);
	assert_int_equal(keys_of("{\"rotary_emb_dim\": 1e19}", &c), WT_ECORRUPT);
}

/* GteModel (vLLM's SnowflakeGteNewModel, GteConfig read as NewConfig): the sharded layouts pass
 * and the full output is GteNewModel's bit for bit, so its torch points hold too. */
static void test_gte_snowflake(void **state)
{
	(void)state;
	expect_pass_tp("gte_sf", true);
	float *a = malloc(N_TOK * HID * sizeof(float)), *b = malloc(N_TOK * HID * sizeof(float));
	assert_true(a != NULL && b != NULL);
	ref_cfg ca, cb;
	full_logits(FAM, a, &ca);
	full_logits("gte_sf", b, &cb);
	assert_memory_equal(a, b, N_TOK * HID * sizeof(float));
	expect_gold("gte_sf", HID, GOLD_TOL, gold_gte, sizeof(gold_gte) / sizeof(gold_gte[0]));
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gte_pass),      cmocka_unit_test(test_gte_torch),
	    cmocka_unit_test(test_gte_switches),  cmocka_unit_test(test_gte_caught),
	    cmocka_unit_test(test_gte_config),    cmocka_unit_test(test_gte_keys),
	    cmocka_unit_test(test_gte_snowflake),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
