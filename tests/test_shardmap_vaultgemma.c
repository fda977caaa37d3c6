/*
 * test_shardmap_vaultgemma.c — VaultGemma (VaultGemmaForCausalLM, vaultgemma-1b): Gemma
 * 2's table without its post norms (input_layernorm and pre_feedforward_layernorm
 * replicated as stored; a post_attention_layernorm or post_feedforward_layernorm refused
 * as unknown), Llama's fused q/k/v (head_dim given, H x d unlike hid), o_proj by columns,
 * gate/up fused, down by columns, tied by default. vLLM has no VaultGemma model: the cut
 * is Gemma 2's (gemma2.py). Hand-computed slices at TP 2 and TP 4, an int8 layout,
 * coverage over TP 1..8, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0032ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 256, H 8, KV 4, head_dim 64 (H * d 512, KV * d 256), I 512, V 1000, 2 layers, tied */
#define HID 256
#define HD  64
#define VG_CFG(extra)                                                                              \
	"{\"architectures\":[\"VaultGemmaForCausalLM\"],\"model_type\":\"vaultgemma\","            \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":4,"                 \
	"\"head_dim\":64,\"intermediate_size\":512,\"vocab_size\":1000,"                           \
	"\"num_hidden_layers\":2" extra "}"
#define VG_OK VG_CFG("")
#define L1    "model.layers.1."
#define A1    L1 "self_attn."

static tm_model *tm_vaultgemma(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 0);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 4, HD, HID, 0, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
		tm_remove(m, b);
		tm_lin_l(m, i, "pre_feedforward_layernorm.weight", HID, 0, 0);
		tm_mlp(m, i, "mlp.", 512, HID);
	}
	return m;
}

static void norms_whole(const fx *f, uint32_t r)
{
	rows_are(f, r, L1 "input_layernorm.weight", 0, L1 "input_layernorm.weight", 0, HID);
	rows_are(f, r, L1 "pre_feedforward_layernorm.weight", 0,
	         L1 "pre_feedforward_layernorm.weight", 0, HID);
	rows_are(f, r, "model.norm.weight", 0, "model.norm.weight", 0, HID);
	assert_true(tm_ix(f->p, r, L1 "post_attention_layernorm.weight") < 0);
}

static void test_vaultgemma_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_vaultgemma(), VG_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "vaultgemma");
	assert_true(shardmap_tied_lm_head(f.p));
	assert_true(tm_ix(f.p, 1, "lm_head.weight") < 0);
	/* rank 1: q heads 4..7 (rows 256..511), kv heads 2..3 (rows 128..255) */
	const char *qkv = A1 "qkv_proj.weight";
	shp(&f, 1, qkv, 2, 256 + 2 * 128, HID, 0);
	rows_are(&f, 1, qkv, 0, A1 "q_proj.weight", 256, 256);
	rows_are(&f, 1, qkv, 256, A1 "k_proj.weight", 128, 128);
	rows_are(&f, 1, qkv, 384, A1 "v_proj.weight", 128, 128);
	shp(&f, 1, A1 "o_proj.weight", 2, HID, 256, 0);
	cols_at(&f, 1, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, 512, 256, 256);
	for (uint32_t r = 0; r < 2; r++)
		norms_whole(&f, r);
	const char *gu = L1 "mlp.gate_up_proj.weight";
	shp(&f, 1, gu, 2, 512, HID, 0);
	rows_are(&f, 1, gu, 0, L1 "mlp.gate_proj.weight", 256, 256);
	rows_are(&f, 1, gu, 256, L1 "mlp.up_proj.weight", 256, 256);
	cols_at(&f, 0, L1 "mlp.down_proj.weight", 0, L1 "mlp.down_proj.weight", HID, 512, 0, 256);
	rows_are(&f, 1, "model.embed_tokens.weight", 0, "model.embed_tokens.weight", 512, 488);
	fx_close(&f);
}

/* TP 4: one kv head per rank; the norms whole on every rank. */
static void test_vaultgemma_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_vaultgemma(), VG_OK, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, A1 "qkv_proj.weight", 2, 128 + 128, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 128 * r, 128);
		rows_are(&f, r, A1 "qkv_proj.weight", 128, A1 "k_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.weight", 192, A1 "v_proj.weight", 64 * r, 64);
		norms_whole(&f, r);
	}
	fx_close(&f);
}

/* int8-channel at TP 2: o_proj quantized per row; the norms stay BF16 and whole. */
static void test_vaultgemma_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_vaultgemma(), VG_OK, &l, true);
	const char *o = A1 "o_proj.weight";
	assert_int_equal(info(&f, 1, o)->dtype, WT_I8);
	shp(&f, 1, A1 "o_proj.weight_scale", 2, HID, 1, 0);
	assert_int_equal(info(&f, 1, L1 "pre_feedforward_layernorm.weight")->dtype, WT_BF16);
	norms_whole(&f, 1);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, o);
	const float *sc = (const float *)out_bytes(&f, 1, A1 "o_proj.weight_scale");
	for (int64_t row = 0; row < HID; row++) {
		size_t rowb;
		const uint16_t *x = (const uint16_t *)src_rows(&f, o, row, &rowb);
		int8_row_is(q + row * 256, sc[row], x + 256, 256);
	}
	fx_close(&f);
}

static void test_vaultgemma_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_vaultgemma(), VG_OK, 4, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_vaultgemma_errors(void **state)
{
	(void)state;
	/* Gemma 2's post norms are not VaultGemma tensors */
	tm_model *m = tm_vaultgemma();
	tm_lin_l(m, 0, "post_attention_layernorm.weight", HID, 0, 0);
	fx_refused(m, VG_OK, WT_EUNSUPPORTED, "model.layers.0.post_attention_layernorm.weight",
	           "vaultgemma");
	m = tm_vaultgemma();
	tm_lin_l(m, 1, "post_feedforward_layernorm.weight", HID, 0, 0);
	fx_refused(m, VG_OK, WT_EUNSUPPORTED, L1 "post_feedforward_layernorm.weight", "vaultgemma");
	/* the pre-MLP norm missing */
	m = tm_vaultgemma();
	tm_remove(m, L1 "pre_feedforward_layernorm.weight");
	fx_refused(m, VG_OK, WT_ENOTFOUND, L1 "pre_feedforward_layernorm.weight", "missing");
	/* TP 3 divides no head count */
	fx_refused_tp(tm_vaultgemma(), VG_OK, 3, WT_ELAYOUT, "does not divide", "tp_size");
	/* keys left out take VaultGemmaConfig's defaults (head_dim 256) as in transformers */
	fx_refused(tm_vaultgemma(),
	           "{\"architectures\":[\"VaultGemmaForCausalLM\"],\"model_type\":\"vaultgemma\","
	           "\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":4,"
	           "\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "k_proj", "[1024, 256]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vaultgemma_tp2),    cmocka_unit_test(test_vaultgemma_tp4),
	    cmocka_unit_test(test_vaultgemma_int8),   cmocka_unit_test(test_vaultgemma_coverage),
	    cmocka_unit_test(test_vaultgemma_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
