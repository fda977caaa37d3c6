/*
 * test_shardmap_telechat.c — TeleChat (the first generation: TeleChatForCausalLM, remote code:
 * Tele-AI/telechat-7B, TeleChat-12B, TeleChat-52B), which vLLM's registry maps onto its
 * telechat2.py TeleChat2ForCausalLM: the same checkpoint names (transformer.h.{i}.
 * self_attention.query / key_value / dense, mlp.gate_proj / up_proj / down_proj,
 * transformer.word_embeddings, transformer.ln_f), the same biases (dense and down_proj only) and
 * key_value's per-head [k; v] interleave, so it is cut as TeleChat2: served under Llama's names,
 * query with key_value de-interleaved and fused by heads into self_attn.qkv_proj, dense by
 * columns into o_proj, gate / up merged, down_proj by columns, the two biases whole. Hand slices
 * at TP 2 and TP 4, the same shards byte for byte as under TeleChat2ForCausalLM (TP 2 / 4 / 8,
 * GQA, int8-channel and fp8-channel), coverage over TP 1..8, the tie (TeleChat-7B's: tied when
 * config.json leaves the key out) and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0049ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, n_head 8, head_dim 16, I 192, V 1000, 2 layers; MHA unless KV */
#define HID 128
#define HD  16
#define I   192
#define TC_KEYS(arch, extra)                                                                       \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"telechat\",\"hidden_size\":128,"       \
	"\"n_head\":8,\"n_layer\":2,\"ffn_hidden_size\":192,\"vocab_size\":1000" extra "}"
#define TC1(extra) TC_KEYS("TeleChatForCausalLM", extra)
#define TC2(extra) TC_KEYS("TeleChat2ForCausalLM", extra)
#define UNTIED     ",\"tie_word_embeddings\":false"
#define L1         "transformer.h.1."
#define R1         "model.layers.1."
#define QKV        R1 "self_attn.qkv_proj.weight"
#define QW         L1 "self_attention.query.weight"
#define KVW        L1 "self_attention.key_value.weight"
#define EMB        "transformer.word_embeddings.weight"

/* The model with kv kv heads; lm_head.weight when head; a query bias when qbias. */
static tm_model *tm_tc1(int64_t kv, int head, int qbias)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1000, HID);
	tm_add2(m, "transformer.ln_f.weight", HID, 0);
	if (head)
		tm_add2(m, "lm_head.weight", 1000, HID);
	const tm_leaf L[] = {{"input_layernorm.weight", HID, 0, 0},
	                     {"post_attention_layernorm.weight", HID, 0, 0},
	                     {"self_attention.query.weight", 8 * HD, HID, 0},
	                     {"self_attention.query.bias", 8 * HD, 0, 1},
	                     {"self_attention.key_value.weight", 2 * kv * HD, HID, 0},
	                     {"self_attention.dense.weight", HID, 8 * HD, 0},
	                     {"self_attention.dense.bias", HID, 0, 0},
	                     {"mlp.gate_proj.weight", I, HID, 0},
	                     {"mlp.up_proj.weight", I, HID, 0},
	                     {"mlp.down_proj.weight", HID, I, 0},
	                     {"mlp.down_proj.bias", HID, 0, 0}};
	tm_layers(m, "transformer.h.%d.", 2, L, TM_NLEAVES(L), qbias);
	return m;
}

/* TP 2 and TP 4 by hand: rank r's qkv_proj is query's heads [r*8/T, +8/T), then its kv heads' k
 * rows, then their v rows (kv head g's k at key_value row 2*g*16, its v 16 rows further); o_proj
 * the dense weight's columns with the dense bias whole; gate_up rows; down columns with its bias
 * whole; norms whole; vocabulary rows; no checkpoint name served. */
static void test_telechat_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_tc1(8, 1, 0), TC1(UNTIED), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "telechat2");
		int64_t hl = 8 / T;
		for (uint32_t r = 0; r < T; r++) {
			shp(&f, r, QKV, 2, 3 * hl * HD, HID, 0);
			rows_at(&f, r, QKV, 0, QW, r * hl * HD, hl * HD);
			for (int64_t h = 0; h < hl; h++) {
				int64_t g = r * hl + h;
				rows_at(&f, r, QKV, (hl + h) * HD, KVW, 2 * g * HD, HD);
				rows_at(&f, r, QKV, (2 * hl + h) * HD, KVW, (2 * g + 1) * HD, HD);
			}
			cols_of(&f, r, T, R1 "self_attn.o_proj.weight",
			        L1 "self_attention.dense.weight", HID, 8 * HD);
			repl_from(&f, r, R1 "self_attn.o_proj.bias",
			          L1 "self_attention.dense.bias");
			shp(&f, r, R1 "mlp.gate_up_proj.weight", 2, 2 * I / T, HID, 0);
			fx_gate_up_is(&f, r, T, R1 "mlp.gate_up_proj.weight",
			              L1 "mlp.gate_proj.weight", L1 "mlp.up_proj.weight", I);
			cols_of(&f, r, T, R1 "mlp.down_proj.weight", L1 "mlp.down_proj.weight", HID,
			        I);
			repl_from(&f, r, R1 "mlp.down_proj.bias", L1 "mlp.down_proj.bias");
			repl_from(&f, r, R1 "input_layernorm.weight", L1 "input_layernorm.weight");
			repl_from(&f, r, "model.norm.weight", "transformer.ln_f.weight");
			fx_vocab_from(&f, r, T, "model.embed_tokens.weight", EMB, 1000, 1024, HID);
			assert_true(tm_ix(f.p, r, QW) < 0 && tm_ix(f.p, r, KVW) < 0 &&
			            tm_ix(f.p, r, R1 "self_attn.qkv_proj.bias") < 0);
		}
		fx_close(&f);
	}
}

/* TeleChatForCausalLM's shards are TeleChat2ForCausalLM's byte for byte: MHA at TP 2 / 4 / 8,
 * GQA (2 kv heads) at TP 2 / 4 / 8, and the quantized layouts. */
static void test_telechat_as_telechat2(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 8; T *= 2) {
		fx_same_layouts(tm_tc1(8, 1, 0), NULL, TC1(UNTIED), tm_tc1(8, 1, 0), TC2(UNTIED), T,
		                1, "");
		fx_same_layouts(tm_tc1(2, 1, 0), NULL, TC1(UNTIED ",\"num_key_value_heads\":2"),
		                tm_tc1(2, 1, 0), TC2(UNTIED ",\"num_key_value_heads\":2"), T, 1,
		                "");
	}
	static const wt_quant q[] = {WT_QUANT_INT8_CHANNEL, WT_QUANT_FP8_CHANNEL};
	for (size_t k = 0; k < 2; k++) {
		fx a, b;
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = k ? 4 : 2;
		l.quant = q[k];
		fx_open_l(&a, tm_tc1(8, 1, 0), TC1(UNTIED), &l, true);
		fx_open_l(&b, tm_tc1(8, 1, 0), TC2(UNTIED), &l, true);
		assert_int_equal(info(&a, 1, QKV)->dtype, k ? WT_F8_E4M3 : WT_I8);
		assert_int_equal(info(&a, 1, R1 "mlp.down_proj.bias")->dtype, WT_BF16);
		for (uint32_t r = 0; r < l.tp_size; r++)
			fx_same_rank(&a, &b, r, NULL);
		fx_close(&a);
		fx_close(&b);
	}
}

static void test_telechat_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_tc1(8, 1, 0), TC1(UNTIED), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_tc1(2, 0, 0), TC1(",\"num_key_value_heads\":2"), 2, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* TeleChat-7B's config.json leaves tie_word_embeddings out: tied (PretrainedConfig's true, as
 * vLLM's Telechat2Config passes none), no lm_head needed and one in the checkpoint not served;
 * TeleChat-12B unties (lm_head required). */
static void test_telechat_tie(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_tc1(8, 0, 0), TC1(""), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0 && tm_ix(f.p, 1, "lm_head.weight") < 0);
	fx_close(&f);
	fx_refused(tm_tc1(8, 0, 0), TC1(UNTIED), WT_ENOTFOUND, "lm_head.weight", "missing");
}

static void test_telechat_errors(void **state)
{
	(void)state;
	fx_refused(tm_tc1(8, 1, 1), TC1(UNTIED), WT_EUNSUPPORTED, "self_attention.query.bias",
	           "telechat2");
	fx_refused(tm_tc1(8, 1, 0), TC1(UNTIED ",\"embed_layernorm\":true"), WT_EUNSUPPORTED,
	           "embed_layernorm", "give false");
	fx_refused(tm_tc1(8, 1, 0),
	           TC1(UNTIED ",\"apply_residual_connection_post_layernorm\":true"),
	           WT_EUNSUPPORTED, "apply_residual_connection_post_layernorm", "give false");
	fx_refused(tm_tc1(8, 1, 0), TC1(UNTIED ",\"base\":20000"), WT_EUNSUPPORTED, "base 20000",
	           "rope_theta");
	tm_model *m = tm_tc1(8, 1, 0);
	tm_remove(m, L1 "self_attention.dense.bias");
	fx_refused(m, TC1(UNTIED), WT_ENOTFOUND, "dense.bias", "missing");
	/* the release's own name, which vLLM's registry does not know (Tele-AI's vLLM notes rename
	 * it in config.json to TeleChatForCausalLM) */
	fx_refused(tm_tc1(8, 1, 0), TC_KEYS("TelechatForCausalLM", UNTIED), WT_EUNSUPPORTED,
	           "TelechatForCausalLM", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_telechat_slices),   cmocka_unit_test(test_telechat_as_telechat2),
	    cmocka_unit_test(test_telechat_coverage), cmocka_unit_test(test_telechat_tie),
	    cmocka_unit_test(test_telechat_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
