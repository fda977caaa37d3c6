/*
 * test_reference_jais.c — the reference forward pass over JAIS (JAISLMHeadModel, remote code;
 * fixture jais): GPT-2's blocks (LayerNorms with biases, c_attn as Phi-3's qkv_proj, the Conv1D
 * weights transposed) with the SwiGLU MLP c_fc(x) * silu(c_fc2(x)), ALiBi over the 8 heads
 * (vLLM's _get_alibi_slopes; each rank its own heads'), scores times head_dim^-1
 * (scale_qk_dot_by_d), the embeddings times embeddings_scale 14.6 and the logits times
 * width_scale 0.25, tied, as vLLM's jais.py runs it. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path's logits equal
 * a float32 torch model of vLLM's JAIS semantics at 28 points (no transformers class exists);
 * rank tensors broken the way a wrong planner would break them are caught. Fixture from
 * $WT_BUILD/wt-mkckpt --family jais (hid 128, H 8, d 16, I 320, V 1000, 2 layers, tied; seed
 * printed).
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

#define V_J 1000
#define H1  "transformer.h.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"jais"};
	return gen_fixtures("reference_jais", fams, 1);
}

static void test_jais_pass(void **state)
{
	(void)state;
	expect_pass_tp("jais", true);
}

/* (token, column, torch logit), tokens g_tokens: a float32 torch model of vLLM's jais.py (no
 * transformers class exists) on the fixture's safetensors: GPT-2's blocks with the Conv1D
 * weights as stored (x @ W), SwiGLU c_fc(x) * silu(c_fc2(x)), _get_alibi_slopes' bias
 * slope_h * (s - t) after the head_dim^-1 scale, embeddings times 14.6, logits times 0.25; all
 * 7 x 1000 logits within 3.0e-7 of the reference's (largest 0.681). The same torch code with
 * ALiBi off, learned positions and GPT-2's gelu_new MLP agrees with transformers 4.57.1's
 * GPT2LMHeadModel on the gpt2 fixture within 4.7e-7 (its anchor). Moved by (torch): ALiBi's
 * slopes zeroed 0.010, reversed over the heads 0.013, silu on c_fc instead of c_fc2 0.012,
 * head_dim^-0.5 0.003, embeddings_scale 1 0.60, width_scale 1 2.0 */
static const gold_pt gold_jais[] = {
    {0, 0, 2.871257439e-02f},    {0, 333, -5.515364558e-02f}, {0, 666, -2.737094648e-02f},
    {0, 999, -2.220183425e-02f}, {1, 0, -1.642500609e-02f},   {1, 333, 7.365072519e-02f},
    {1, 666, 8.939680643e-03f},  {1, 999, 5.131776929e-01f},  {2, 0, 5.305120721e-03f},
    {2, 333, -1.092921197e-01f}, {2, 666, 3.556236997e-02f},  {2, 999, -5.990310013e-02f},
    {3, 0, -3.910304978e-02f},   {3, 333, -3.891114518e-02f}, {3, 666, 2.469607815e-02f},
    {3, 999, 4.369590431e-02f},  {4, 0, 6.850559264e-02f},    {4, 333, 6.337847561e-03f},
    {4, 666, -2.939741686e-02f}, {4, 999, -1.371187530e-02f}, {5, 0, -1.000286639e-01f},
    {5, 333, -2.446845733e-02f}, {5, 666, -2.264338732e-02f}, {5, 999, 7.725063711e-03f},
    {6, 0, -1.274890453e-02f},   {6, 333, 1.144346595e-01f},  {6, 666, -7.638429850e-02f},
    {6, 999, 8.489737287e-03f}};

#define GOLD_TOL 1e-5

static void test_jais_torch(void **state)
{
	(void)state;
	expect_gold("jais", V_J, GOLD_TOL, gold_jais, sizeof(gold_jais) / sizeof(gold_jais[0]));
}

static void test_jais_caught(void **state)
{
	(void)state;
	expect_swapped("jais", 2, 1, H1 "attn.c_attn.weight",
	               "the ranks' q/k/v heads exchanged (ALiBi slopes then another head's)");
	expect_swapped("jais", 2, 1, H1 "attn.c_attn.bias", "the ranks' q/k/v biases exchanged");
	expect_swapped("jais", 2, 1, H1 "attn.c_proj.weight", "attn.c_proj columns exchanged");
	expect_swapped("jais", 2, 1, H1 "mlp.c_fc.weight", "c_fc rows exchanged");
	expect_swapped("jais", 2, 1, H1 "mlp.c_fc2.weight", "c_fc2 rows exchanged");
	expect_swapped("jais", 2, 1, H1 "mlp.c_fc2.bias", "c_fc2 bias slices exchanged");
	expect_swapped("jais", 2, 1, H1 "mlp.c_proj.weight", "mlp.c_proj columns exchanged");
	expect_halves_swapped("jais", 2, 1,
	                      (tamper_halves){H1 "attn.c_attn.weight", 1, 1, 64, 128 * 4},
	                      "rank 1's q and k rows exchanged");
}

/* Tensors a and b of ck exchanged (same shape): c_fc's and c_fc2's, silu on the wrong one. */
static void swap_ck(ref_set *ck, const char *a, const char *b)
{
	ref_tensor *x = find_tensor(ck, a), *y = find_tensor(ck, b);
	assert_int_equal(x->nbytes, y->nbytes);
	uint8_t *t = x->data;
	x->data = y->data;
	y->data = t;
	float *f = x->f32;
	x->f32 = y->f32;
	y->f32 = f;
}

/* Each of JAIS's switches moves the logits (the golden points above pin their values). */
static void test_jais_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "jais");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.jais && c.gpt2 && c.jais_alibi && c.layernorm && !c.plain_mlp &&
	            c.fused_ckpt && c.kind == REF_DENSE && c.tied && c.d == 16 && c.I == 320 &&
	            c.L == 2 && c.H == 8 && c.KV == 8 && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.embed_scale, 14.6f, 1e-6);
	assert_float_equal(c.logit_mult, 0.25, 1e-15);
	assert_float_equal(c.attn_scale, 1.0 / 16.0, 1e-15);
	assert_float_equal(c.alibi_max, 8.0, 1e-15);
	size_t n = N_TOK * V_J;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.alibi_max = 16.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "ALiBi slopes of alibi_max 16");
	off = c;
	off.attn_scale = 0.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "scores times head_dim^-0.5 (scale_qk_dot_by_d ignored)");
	off = c;
	off.embed_scale = 0.0f;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "embeddings_scale ignored");
	off = c;
	off.logit_mult = 0.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "width_scale ignored");
	for (int l = 0; l < 2; l++) { /* silu on c_fc instead of c_fc2 */
		char a[96], b[96];
		snprintf(a, sizeof(a), "transformer.h.%d.mlp.c_fc.weight", l);
		snprintf(b, sizeof(b), "transformer.h.%d.mlp.c_fc2.weight", l);
		swap_ck(&ck, a, b);
		snprintf(a, sizeof(a), "transformer.h.%d.mlp.c_fc.bias", l);
		snprintf(b, sizeof(b), "transformer.h.%d.mlp.c_fc2.bias", l);
		swap_ck(&ck, a, b);
	}
	logits_with(&c, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "silu on c_fc instead of c_fc2");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define JA(extra)                                                                                  \
	"{\"architectures\": [\"JAISLMHeadModel\"], \"model_type\": \"jais\", "                    \
	"\"n_embd\": 64, \"n_head\": 4, \"n_layer\": 2, \"vocab_size\": 100" extra "}"
#define JS(extra) JA(", \"activation_function\": \"swiglu\"" extra)

static void test_jais_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* JAISConfig's defaults: learned positions, n_inner 4 * n_embd, scales 1, head_dim^-0.5,
	 * tied, layer_norm_epsilon 1e-5 */
	static const char plain[] = JS("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.jais && c.gpt2 && !c.jais_alibi && c.tied && c.d == 16 && c.I == 256 &&
	            c.act == REF_ACT_SILU && c.KV == 4 && c.hid == 64 && c.H == 4 &&
	            c.attn_scale == 0.0);
	assert_float_equal(c.embed_scale, 1.0f, 0);
	assert_float_equal(c.logit_mult, 1.0, 0);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	/* the mup_ forms when the plain keys are absent */
	static const char mup[] = JS(", \"mup_embeddings_scale\": 3.0, \"mup_output_alpha\": 2.0, "
	                             "\"mup_width_scale\": 0.5, \"mup_scale_qk_dot_by_d\": true, "
	                             "\"position_embedding_type\": \"alibi\"");
	assert_int_equal(ref_cfg_parse_json(mup, strlen(mup), &c, &err), WT_OK);
	assert_true(c.jais_alibi && c.attn_scale == 1.0 / 16.0);
	assert_float_equal(c.embed_scale, 3.0f, 0);
	assert_float_equal(c.logit_mult, 1.0, 0);
	/* the plain keys over the mup_ forms */
	static const char both[] = JS(", \"mup_embeddings_scale\": 3.0, \"embeddings_scale\": 5.0, "
	                              "\"mup_output_alpha\": 2.0, \"width_scale\": 0.125, "
	                              "\"mup_scale_qk_dot_by_d\": true, "
	                              "\"scale_qk_dot_by_d\": false");
	assert_int_equal(ref_cfg_parse_json(both, strlen(both), &c, &err), WT_OK);
	assert_true(c.attn_scale == 0.0);
	assert_float_equal(c.embed_scale, 5.0f, 0);
	assert_float_equal(c.logit_mult, 0.125, 0);
	expect_cfg(JS(", \"width_scale\": 0"), WT_EUNSUPPORTED, "width_scale");
	expect_cfg(JA(", \"activation_function\": \"gelu_new\""), WT_EUNSUPPORTED,
	           "activation_function");
	expect_cfg(JS(", \"tie_word_embeddings\": false"), WT_EUNSUPPORTED, "tie_word_embeddings");
	expect_cfg(JS(", \"position_embedding_type\": \"rope\""), WT_EUNSUPPORTED,
	           "position_embedding_type");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_jais_pass),   cmocka_unit_test(test_jais_torch),
	    cmocka_unit_test(test_jais_caught), cmocka_unit_test(test_jais_switches),
	    cmocka_unit_test(test_jais_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
