/*
 * test_shardmap_bloom.c — BLOOM (BloomForCausalLM: bigscience/bloom-560m ... bloom, bloomz)
 * cut as vLLM's bloom.py loads it: self_attention.query_key_value [3*hid, hid] stored per
 * head ([H, 3, d] rows) becomes each rank's [q_r; k_r; v_r] of its H/T heads, its bias alike;
 * self_attention.dense by columns, mlp.dense_h_to_4h [4*hid, hid] by rows with its bias,
 * dense_4h_to_h by columns; the LayerNorms (the embedding's too) and the row-parallel biases
 * replicated; names with or without the transformer. prefix, the runtime's always with it;
 * a tied lm_head.weight skipped. Hand-computed slices at TP 2 and TP 4, an int8 layout,
 * coverage over TP 1..8, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0021ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, head size 16, I 4*128, V 1000, 2 layers */
#define HID 128
#define HD  16
#define I4  512
#define BL_CFG(extra)                                                                              \
	"{\"architectures\":[\"BloomForCausalLM\"],\"model_type\":\"bloom\","                      \
	"\"hidden_size\":128,\"n_head\":8,\"vocab_size\":1000,\"n_layer\":2" extra "}"
#define RT1  "transformer.h.1."
#define QKV  RT1 "self_attention.query_key_value.weight"
#define QKVB RT1 "self_attention.query_key_value.bias"

/* The model, its names under prefix pre ("transformer." as save_pretrained writes them, ""
 * as bigscience's releases do); a tied lm_head.weight too when head. */
static tm_model *tm_bloom(const char *pre, int head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char n[200];
	static const char *const ln[] = {"word_embeddings_layernorm", "ln_f"};
	snprintf(n, sizeof(n), "%sword_embeddings.weight", pre);
	tm_add2(m, n, 1000, HID);
	for (int k = 0; k < 2; k++) {
		snprintf(n, sizeof(n), "%s%s.weight", pre, ln[k]);
		tm_add2(m, n, HID, 0);
		snprintf(n, sizeof(n), "%s%s.bias", pre, ln[k]);
		tm_add2(m, n, HID, 0);
	}
	if (head)
		tm_add2(m, "lm_head.weight", 1000, HID);
	static const tm_leaf L[] = {
	    {"input_layernorm.weight", HID, 0},
	    {"input_layernorm.bias", HID, 0},
	    {"post_attention_layernorm.weight", HID, 0},
	    {"post_attention_layernorm.bias", HID, 0},
	    {"self_attention.query_key_value.weight", 3 * HID, HID},
	    {"self_attention.query_key_value.bias", 3 * HID, 0},
	    {"self_attention.dense.weight", HID, HID},
	    {"self_attention.dense.bias", HID, 0},
	    {"mlp.dense_h_to_4h.weight", I4, HID},
	    {"mlp.dense_h_to_4h.bias", I4, 0},
	    {"mlp.dense_4h_to_h.weight", HID, I4},
	    {"mlp.dense_4h_to_h.bias", HID, 0},
	};
	char fmt[64];
	snprintf(fmt, sizeof(fmt), "%sh.%%d.", pre);
	tm_layers(m, fmt, 2, L, TM_NLEAVES(L), 0);
	return m;
}

/* Rank r of T holds [q_r; k_r; v_r]: local head j (global h = r*H/T + j) part p at row
 * (p*H/T + j)*d, from the checkpoint's (src) row (h*3 + p)*d. */
static void qkv_is(const fx *f, uint32_t r, uint32_t T, const char *rt, const char *src)
{
	int64_t hl = 8 / T;
	for (int64_t p = 0; p < 3; p++)
		for (int64_t j = 0; j < hl; j++) {
			int64_t h = r * hl + j;
			rows_at(f, r, rt, (p * hl + j) * HD, src, (h * 3 + p) * HD, HD);
		}
}

static void test_bloom_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_bloom("transformer.", 1), BL_CFG(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "bloom");
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, QKV, 2, 3 * 64, HID, 0);
		qkv_is(&f, r, 2, QKV, QKV);
		shp(&f, r, QKVB, 1, 3 * 64, 0, 0);
		qkv_is(&f, r, 2, QKVB, QKVB);
		cols_of(&f, r, 2, RT1 "self_attention.dense.weight",
		        RT1 "self_attention.dense.weight", HID, HID);
		repl(&f, r, RT1 "self_attention.dense.bias");
		shp(&f, r, RT1 "mlp.dense_h_to_4h.weight", 2, 256, HID, 0);
		rows_are(&f, r, RT1 "mlp.dense_h_to_4h.weight", 0, RT1 "mlp.dense_h_to_4h.weight",
		         256 * r, 256);
		rows_are(&f, r, RT1 "mlp.dense_h_to_4h.bias", 0, RT1 "mlp.dense_h_to_4h.bias",
		         256 * r, 256);
		cols_of(&f, r, 2, RT1 "mlp.dense_4h_to_h.weight", RT1 "mlp.dense_4h_to_h.weight",
		        HID, I4);
		repl(&f, r, RT1 "mlp.dense_4h_to_h.bias");
		repl(&f, r, RT1 "input_layernorm.weight");
		repl(&f, r, RT1 "input_layernorm.bias");
		repl(&f, r, RT1 "post_attention_layernorm.bias");
		repl(&f, r, "transformer.word_embeddings_layernorm.weight");
		repl(&f, r, "transformer.word_embeddings_layernorm.bias");
		repl(&f, r, "transformer.ln_f.bias");
		assert_true(tm_ix(f.p, r, "lm_head.weight") < 0); /* tied: skipped */
	}
	/* vocabulary rows: 1000 padded to 1024, rank 1 rows [512, 1000) then zeros */
	shp(&f, 1, "transformer.word_embeddings.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "transformer.word_embeddings.weight", 0,
	         "transformer.word_embeddings.weight", 512, 488);
	rows_are(&f, 0, "transformer.word_embeddings.weight", 0,
	         "transformer.word_embeddings.weight", 0, 512);
	fx_close(&f);
}

/* TP 4, bigscience's names (no transformer. prefix): two heads a rank, the runtime's names
 * vLLM's (_add_transformer_prefix), the same bytes. */
static void test_bloom_tp4_released(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_bloom("", 0), BL_CFG(""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, QKV, 2, 3 * 32, HID, 0);
		qkv_is(&f, r, 4, QKV, "h.1.self_attention.query_key_value.weight");
		qkv_is(&f, r, 4, QKVB, "h.1.self_attention.query_key_value.bias");
		cols_of(&f, r, 4, RT1 "self_attention.dense.weight",
		        "h.1.self_attention.dense.weight", HID, HID);
		rows_are(&f, r, RT1 "mlp.dense_h_to_4h.bias", 0, "h.1.mlp.dense_h_to_4h.bias",
		         128 * r, 128);
		rows_are(&f, r, "transformer.word_embeddings.weight", 0, "word_embeddings.weight",
		         256 * r, r == 3 ? 232 : 256);
		assert_true(tm_ix(f.p, r, "h.1.self_attention.dense.weight") < 0);
		assert_int_equal(info(&f, r, "transformer.ln_f.weight")->nbytes, 2 * HID);
	}
	fx_close(&f);
}

/* int8-channel at TP 2: the four linear weights quantized per row; biases, norms and the
 * embedding BF16. */
static void test_bloom_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_bloom("transformer.", 0), BL_CFG(""), &l, true);
	assert_int_equal(info(&f, 1, QKV)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, RT1 "self_attention.dense.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, RT1 "mlp.dense_h_to_4h.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, RT1 "mlp.dense_4h_to_h.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, QKVB)->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, "transformer.word_embeddings.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, "transformer.word_embeddings_layernorm.bias")->dtype, WT_BF16);
	/* rank 1's qkv row (p*4 + j)*16 + e is the checkpoint's row ((4 + j)*3 + p)*16 + e */
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, QKV);
	const float *sc =
	    (const float *)out_bytes(&f, 1, RT1 "self_attention.query_key_value.weight_scale");
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

static void test_bloom_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_bloom("transformer.", 0), BL_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_bloom("", 1), BL_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_bloom_errors(void **state)
{
	(void)state;
	/* vLLM skips lm_head.weight: an untied head would never load */
	fx_refused(tm_bloom("transformer.", 1), BL_CFG(",\"tie_word_embeddings\":false"),
	           WT_EUNSUPPORTED, "tie_word_embeddings false", "skips lm_head.weight");
	/* the biases are always there (BloomAttention / BloomMLP: bias=True) */
	tm_model *m = tm_bloom("transformer.", 0);
	tm_remove(m, QKVB);
	fx_refused(m, BL_CFG(""), WT_ENOTFOUND, "query_key_value.bias", "missing");
	m = tm_bloom("", 0);
	tm_remove(m, "word_embeddings_layernorm.bias");
	fx_refused(m, BL_CFG(""), WT_ENOTFOUND, "word_embeddings_layernorm.bias", "missing");
	/* one name layout, not both */
	m = tm_bloom("", 0);
	tm_add2(m, "transformer.h.0.self_attention.dense.bias", HID, 0);
	tm_remove(m, "h.0.self_attention.dense.bias");
	fx_refused(m, BL_CFG(""), WT_EUNSUPPORTED, "mixes two name layouts", "one layout");
	/* GPT-NeoX's names are not BLOOM's */
	m = tm_bloom("transformer.", 0);
	tm_add2(m, RT1 "attention.query_key_value.weight", 3 * HID, HID);
	fx_refused(m, BL_CFG(""), WT_EUNSUPPORTED, "attention.query_key_value.weight", "bloom");
	/* grouped kv heads and a head_dim key do not exist in BloomConfig */
	fx_refused(tm_bloom("transformer.", 0), BL_CFG(",\"num_key_value_heads\":2"),
	           WT_EUNSUPPORTED, "num_key_value_heads 2", "no grouped kv heads");
	fx_refused(tm_bloom("transformer.", 0), BL_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED,
	           "head_dim 32", "remove it");
	/* heads must divide the width (vLLM asserts it) */
	fx_refused(tm_bloom("transformer.", 0), BL_CFG(",\"num_attention_heads\":6"), WT_ECORRUPT,
	           "hidden_size (128) divisible by n_head (6)", "quotient");
	/* the MLP is 4 * hidden_size whatever an intermediate_size key says; n_embed wins over
	 * hidden_size (bloom-560m says n_embed) */
	fx_refused(tm_bloom("transformer.", 0), BL_CFG(",\"n_embed\":64"), WT_ESHAPE,
	           "implies [64]", "fix config.json");
	{
		fx f;
		fx_open(&f, tm_bloom("transformer.", 0), BL_CFG(",\"intermediate_size\":1024"), 2,
		        1, 0, false);
		shp(&f, 0, RT1 "mlp.dense_h_to_4h.weight", 2, 256, HID, 0);
		fx_close(&f);
	}
	/* TP 3 does not divide the 8 heads */
	{
		char *dir = tu_mkdtemp("smfam");
		m = tm_bloom("transformer.", 0);
		assert_int_equal(tm_write(m, dir, BL_CFG("")), 0);
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
	/* keys left out take BloomConfig's defaults (vocab 250880, hidden 64, 8 heads) */
	fx_refused(tm_bloom("transformer.", 0),
	           "{\"architectures\":[\"BloomForCausalLM\"],\"model_type\":\"bloom\","
	           "\"hidden_size\":128,\"n_head\":8,\"n_layer\":2}",
	           WT_ESHAPE, "[250880, 128]", "fix config.json");
	fx_refused(tm_bloom("transformer.", 0),
	           "{\"architectures\":[\"BloomForCausalLM\"],\"model_type\":\"bloom\","
	           "\"vocab_size\":1000,\"n_layer\":2}",
	           WT_ESHAPE, "implies [64]", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bloom_tp2),    cmocka_unit_test(test_bloom_tp4_released),
	    cmocka_unit_test(test_bloom_int8),   cmocka_unit_test(test_bloom_coverage),
	    cmocka_unit_test(test_bloom_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
