/*
 * test_shardmap_gpt_neox.c — GPT-NeoX (GPTNeoXForCausalLM: Pythia, GPT-NeoX-20B) cut as vLLM's
 * gpt_neox.py loads it: attention.query_key_value [3*hid, hid] stored per head ([H, 3, d]
 * rows) becomes each rank's [q_r; k_r; v_r] of its H/T heads, its bias alike;
 * attention.dense by columns, mlp.dense_h_to_4h by rows with its bias, dense_4h_to_h by
 * columns; LayerNorm weights / biases and the row-parallel biases replicated; the old
 * attention.bias / masked_bias buffers skipped. Hand-computed slices at TP 2 and TP 4, an
 * int8 layout, coverage over TP 1..8, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0019ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, head size 16, I 256, V 1000, 2 layers */
#define HID 128
#define HD  16
#define NX_CFG(extra)                                                                              \
	"{\"architectures\":[\"GPTNeoXForCausalLM\"],\"model_type\":\"gpt_neox\","                 \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"intermediate_size\":256,"                 \
	"\"vocab_size\":1000,\"num_hidden_layers\":2,\"rotary_pct\":0.25" extra "}"
#define NX_L "gpt_neox.layers.%d."
#define L1   "gpt_neox.layers.1."
#define QKV  L1 "attention.query_key_value.weight"
#define QKVB L1 "attention.query_key_value.bias"

static void add_l(tm_model *m, int i, const char *leaf, int64_t a, int64_t b)
{
	char n[200];
	tm_fmt(n, sizeof(n), NX_L, i, leaf);
	tm_add2(m, n, a, b);
}

/* The model; attention biases when bias (attention_bias), the old buffers when buffers. */
static tm_model *tm_neox(int bias, int buffers)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "gpt_neox.embed_in.weight", 1000, HID);
	tm_add2(m, "gpt_neox.final_layer_norm.weight", HID, 0);
	tm_add2(m, "gpt_neox.final_layer_norm.bias", HID, 0);
	tm_add2(m, "embed_out.weight", 1000, HID);
	for (int i = 0; i < 2; i++) {
		add_l(m, i, "input_layernorm.weight", HID, 0);
		add_l(m, i, "input_layernorm.bias", HID, 0);
		add_l(m, i, "post_attention_layernorm.weight", HID, 0);
		add_l(m, i, "post_attention_layernorm.bias", HID, 0);
		add_l(m, i, "attention.query_key_value.weight", 3 * HID, HID);
		add_l(m, i, "attention.dense.weight", HID, HID);
		if (bias) {
			add_l(m, i, "attention.query_key_value.bias", 3 * HID, 0);
			add_l(m, i, "attention.dense.bias", HID, 0);
		}
		add_l(m, i, "mlp.dense_h_to_4h.weight", 256, HID);
		add_l(m, i, "mlp.dense_h_to_4h.bias", 256, 0);
		add_l(m, i, "mlp.dense_4h_to_h.weight", HID, 256);
		add_l(m, i, "mlp.dense_4h_to_h.bias", HID, 0);
		if (buffers) {
			char n[200];
			tm_fmt(n, sizeof(n), NX_L, i, "attention.masked_bias");
			tm_add(m, n, WT_F32, 0, 0, 0, 0);
			tm_fmt(n, sizeof(n), NX_L, i, "attention.bias");
			tm_add(m, n, WT_BOOL, 3, 1, 4, 4); /* [1, 1, P, P] in Pythia */
		}
	}
	return m;
}

static void test_neox_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_neox(1, 1), NX_CFG(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "gpt_neox");
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, QKV, 2, 3 * 64, HID, 0);
		fx_qkv_grouped_is(&f, r, 2, 8, 8, HD, QKV);
		shp(&f, r, QKVB, 1, 3 * 64, 0, 0);
		fx_qkv_grouped_is(&f, r, 2, 8, 8, HD, QKVB);
		cols_of(&f, r, 2, L1 "attention.dense.weight", L1 "attention.dense.weight", HID,
		        HID);
		repl(&f, r, L1 "attention.dense.bias");
		shp(&f, r, L1 "mlp.dense_h_to_4h.weight", 2, 128, HID, 0);
		rows_are(&f, r, L1 "mlp.dense_h_to_4h.weight", 0, L1 "mlp.dense_h_to_4h.weight",
		         128 * r, 128);
		rows_are(&f, r, L1 "mlp.dense_h_to_4h.bias", 0, L1 "mlp.dense_h_to_4h.bias",
		         128 * r, 128);
		cols_of(&f, r, 2, L1 "mlp.dense_4h_to_h.weight", L1 "mlp.dense_4h_to_h.weight", HID,
		        256);
		repl(&f, r, L1 "mlp.dense_4h_to_h.bias");
		repl(&f, r, L1 "input_layernorm.weight");
		repl(&f, r, L1 "input_layernorm.bias");
		repl(&f, r, L1 "post_attention_layernorm.bias");
		repl(&f, r, "gpt_neox.final_layer_norm.bias");
		assert_true(tm_ix(f.p, r, L1 "attention.masked_bias") < 0);
		assert_true(tm_ix(f.p, r, L1 "attention.bias") < 0);
	}
	/* vocabulary rows: 1000 padded to 1024, rank 1 rows [512, 1000) then zeros */
	shp(&f, 1, "embed_out.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "embed_out.weight", 0, "embed_out.weight", 512, 488);
	rows_are(&f, 0, "gpt_neox.embed_in.weight", 0, "gpt_neox.embed_in.weight", 0, 512);
	fx_close(&f);
}

/* TP 4: two heads a rank; no attention biases (attention_bias false). */
static void test_neox_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_neox(0, 0), NX_CFG(",\"attention_bias\":false"), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, QKV, 2, 3 * 32, HID, 0);
		fx_qkv_grouped_is(&f, r, 4, 8, 8, HD, QKV);
		cols_of(&f, r, 4, L1 "attention.dense.weight", L1 "attention.dense.weight", HID,
		        HID);
		rows_are(&f, r, L1 "mlp.dense_h_to_4h.bias", 0, L1 "mlp.dense_h_to_4h.bias", 64 * r,
		         64);
		assert_true(tm_ix(f.p, r, QKVB) < 0);
	}
	fx_close(&f);
}

/* int8-channel at TP 2: the four linear weights quantized per row; biases and norms BF16. */
static void test_neox_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_neox(1, 0), NX_CFG(""), &l, true);
	assert_int_equal(info(&f, 1, QKV)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, L1 "attention.dense.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, L1 "mlp.dense_h_to_4h.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, L1 "mlp.dense_4h_to_h.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, QKVB)->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, "embed_out.weight")->dtype, WT_BF16);
	assert_true(tm_ix(f.p, 1, L1 "mlp.dense_h_to_4h.bias_scale") < 0);
	/* rank 1's qkv row (p*4 + j)*16 + e is the checkpoint's row ((4 + j)*3 + p)*16 + e */
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, QKV);
	const float *sc =
	    (const float *)out_bytes(&f, 1, L1 "attention.query_key_value.weight_scale");
	for (int64_t p = 0; p < 3; p++)
		for (int64_t j = 0; j < 4; j++)
			for (int64_t e = 0; e < HD; e++) {
				int64_t row = (p * 4 + j) * HD + e;
				size_t rowb;
				const uint16_t *x = (const uint16_t *)src_rows(
				    &f, QKV, ((4 + j) * 3 + p) * HD + e, &rowb);
				int8_row_is(q + row * HID, sc[row], x, HID);
			}
	fx_close(&f);
}

static void test_neox_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_neox(1, 1), NX_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_neox_errors(void **state)
{
	(void)state;
	/* attention_bias (GPTNeoXConfig's default true) switches query_key_value's and dense's
	 * biases: required when true, unknown when false */
	fx_refused(tm_neox(0, 0), NX_CFG(""), WT_ENOTFOUND, "query_key_value.bias",
	           "attention_bias true");
	fx_refused(tm_neox(1, 0), NX_CFG(",\"attention_bias\":false"), WT_EUNSUPPORTED, ".bias",
	           "attention_bias is false");
	/* the MLP's biases are always there (nn.Linear's default) */
	tm_model *m = tm_neox(1, 0);
	tm_remove(m, L1 "mlp.dense_h_to_4h.bias");
	fx_refused(m, NX_CFG(""), WT_ENOTFOUND, "dense_h_to_4h.bias", "missing");
	/* Llama's names are not GPT-NeoX's */
	m = tm_neox(1, 0);
	tm_add2(m, L1 "self_attn.q_proj.weight", HID, HID);
	fx_refused(m, NX_CFG(""), WT_EUNSUPPORTED, "self_attn.q_proj.weight", "gpt_neox");
	/* grouped kv heads and a head_dim key do not exist in GPTNeoXConfig */
	fx_refused(tm_neox(1, 0), NX_CFG(",\"num_key_value_heads\":2"), WT_EUNSUPPORTED,
	           "num_key_value_heads 2", "no grouped kv heads");
	fx_refused(tm_neox(1, 0), NX_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "remove it");
	/* heads must divide the width (GPTNeoXConfig raises too) */
	fx_refused(tm_neox(1, 0),
	           "{\"architectures\":[\"GPTNeoXForCausalLM\"],\"model_type\":\"gpt_neox\","
	           "\"hidden_size\":128,\"num_attention_heads\":6,\"intermediate_size\":256,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ECORRUPT, "hidden_size (128) divisible by num_attention_heads (6)",
	           "quotient");
	/* TP 3 does not divide the 8 heads */
	{
		char *dir = tu_mkdtemp("smfam");
		m = tm_neox(1, 0);
		assert_int_equal(tm_write(m, dir, NX_CFG("")), 0);
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = 3;
		store *s;
		ckpt *c;
		sm_plan *p;
		wt_errbuf err = {0};
		int rv = tm_plan(dir, &l, &s, &c, &p, &err);
		printf("tp 3: %d %s\n", rv, err.msg);
		assert_int_equal(rv, WT_ELAYOUT);
		assert_non_null(strstr(err.msg, "num_attention_heads 8"));
		tm_close(s, c, p);
		tm_free(m);
		tu_rmrf(dir);
		free(dir);
	}
	/* keys left out take GPTNeoXConfig's defaults (intermediate_size 24576, vocab 50432) */
	fx_refused(tm_neox(1, 0),
	           "{\"architectures\":[\"GPTNeoXForCausalLM\"],\"model_type\":\"gpt_neox\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"vocab_size\":1000,"
	           "\"num_hidden_layers\":2}",
	           WT_ESHAPE, "dense_4h_to_h", "24576");
	fx_refused(tm_neox(1, 0),
	           "{\"architectures\":[\"GPTNeoXForCausalLM\"],\"model_type\":\"gpt_neox\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"intermediate_size\":256,"
	           "\"num_hidden_layers\":2}",
	           WT_ESHAPE, "[50432, 128]", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_neox_tp2),    cmocka_unit_test(test_neox_tp4),
	    cmocka_unit_test(test_neox_int8),   cmocka_unit_test(test_neox_coverage),
	    cmocka_unit_test(test_neox_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
