/*
 * test_shardmap_deepseek_moe.c — DeepSeek-MoE (DeepseekForCausalLM, model_type deepseek:
 * deepseek-moe-16b-base / -chat, remote code) cut as vLLM's deepseek_v2.py loads it
 * (DeepseekAttention): q/k/v fused by heads into qkv_proj (kv heads replicated when KV < T), no
 * attention bias, o_proj by columns; the dense MLP of layers below first_k_dense_replace and off
 * moe_layer_freq merged; the MoE layers' router mlp.gate replicated and never quantized, routed
 * experts stacked into w13 / w2 (TP inside each expert, whole experts per EP rank), the
 * n_shared_experts shared experts merged at n_shared_experts x moe_intermediate_size; norms
 * replicated, embed_tokens / lm_head by vocabulary rows. Hand-computed slices at TP 2 / 4, TP x
 * EP, int8-channel TP 2 and fp8-channel TP 4, coverage TP 1..8 and EP, DeepseekConfig's defaults
 * and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0d5eull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 128, H 8, head size 16, I 256 (dense layers), 8 experts of Ie 32, V 1000 */
#define HID 128
#define HD  16
#define IE  32
#define NE  8
#define DS_BASE(extra)                                                                             \
	"{\"architectures\":[\"DeepseekForCausalLM\"],\"model_type\":\"deepseek\","                \
	"\"hidden_size\":128,\"intermediate_size\":256,\"num_attention_heads\":8,"                 \
	"\"vocab_size\":1000,\"num_experts_per_tok\":3" extra "}"
#define DS_CFG(extra) DS_BASE(",\"num_hidden_layers\":3,\"moe_intermediate_size\":32" extra)
#define DS_MOE        ",\"n_routed_experts\":8,\"n_shared_experts\":2,\"first_k_dense_replace\":1"
#define KV8           ",\"num_key_value_heads\":8"
#define DS_OK         DS_CFG(KV8 DS_MOE)
#define L0            "model.layers.0."
#define L1            "model.layers.1."
#define A1            L1 "self_attn."
#define M1            L1 "mlp."
#define QKV           A1 "qkv_proj.weight"
#define OP            A1 "o_proj.weight"
#define GATE          M1 "gate.weight"
#define SHX           M1 "shared_experts."
#define W13           M1 "experts.w13_weight"
#define W2            M1 "experts.w2_weight"
#define EMB           "model.embed_tokens.weight"
#define OUT           "lm_head.weight"
#define FLN           "model.norm.weight"

/* L layers with kv kv heads; layer i dense when i < 1 or i % freq != 0, else MoE with ns shared
 * experts (ns x Ie rows) when ns > 0. */
static tm_model *tm_ds(int L, int freq, int64_t kv, int64_t ns)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	char b[200];
	for (int i = 0; i < L; i++) {
		tm_attn(m, i, 8, kv, HD, HID, 0, 0);
		if (i < 1 || i % freq != 0) {
			tm_mlp(m, i, "mlp.", 256, HID);
			continue;
		}
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add2(m, b, NE, HID);
		tm_experts(m, i, "mlp.experts.", NE, IE, HID, "gate_proj", "up_proj", "down_proj");
		if (ns > 0)
			tm_mlp(m, i, "mlp.shared_experts.", ns * IE, HID);
	}
	return m;
}

static const fx_experts XP = {
    W13, W2, M1 "experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, IE};

/* Rank r of T (no EP): attention by heads, layer 0's dense MLP and the shared experts merged by
 * rows / columns, every expert's rows / columns [r Ie/T, +Ie/T), router and norms whole. */
static void rank_is(const fx *f, uint32_t r, uint32_t T, int64_t kv)
{
	fx_attn_is(f, r, T, A1, "o_proj.weight", 8, kv, HD, HID);
	fx_attn_is(f, r, T, L0 "self_attn.", "o_proj.weight", 8, kv, HD, HID);
	fx_mlp_is(f, r, T, L0 "mlp.", 256, HID);
	fx_mlp_is(f, r, T, SHX, 2 * IE, HID);
	fx_experts_are(f, &XP, r, 0, NE, r * IE / T, IE / T, false);
	repl(f, r, GATE);
	repl(f, r, L1 "input_layernorm.weight");
	repl(f, r, L1 "post_attention_layernorm.weight");
	repl(f, r, FLN);
	assert_true(tm_ix(f->p, r, L0 "mlp.gate.weight") < 0);
	assert_true(tm_ix(f->p, r, A1 "qkv_proj.bias") < 0);
}

/* TP 2 and TP 4 over 8 kv heads (rank r: q and kv heads [8r/T, +8/T)), TP 4 over 2 kv heads
 * (ranks 2k, 2k + 1 share kv head k); vocabulary rows: V 1000 padded to 1024, 1024 / T a rank. */
static void test_deepseek_moe_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_ds(3, 1, 8, 2), DS_OK, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "deepseek");
		for (uint32_t r = 0; r < T; r++)
			rank_is(&f, r, T, 8);
		int64_t Vl = 1024 / T;
		shp(&f, T - 1, OUT, 2, Vl, HID, 0);
		rows_at(&f, T - 1, OUT, 0, OUT, Vl * (T - 1), 1000 - Vl * (T - 1));
		rows_at(&f, 0, EMB, 0, EMB, 0, Vl);
		/* embedding, head, final norm; layer 0: 2 norms, qkv, o, gate_up, down; layers 1,
		 * 2: 2 norms, qkv, o, router, 2 stacks, shared gate_up / down */
		assert_int_equal(shardmap_rank_n_tensors(f.p, 0), 3 + 6 + 2 * 9);
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
	fx f;
	fx_open(&f, tm_ds(3, 1, 2, 2), DS_CFG(",\"num_key_value_heads\":2" DS_MOE), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		rank_is(&f, r, 4, 2);
	fx_close(&f);
}

/* TP 2 x EP 2 (up_gate): EP rank e holds experts [4e, 4e + 4) whole, up first, on both its tp
 * ranks; attention, router, dense MLP and shared experts follow the tp rank, [gate; up] whatever
 * w13_order. TP 1 x EP 2 and EP 8: the same experts, one per rank at EP 8, the rest whole. */
static void test_deepseek_moe_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_ds(3, 1, 8, 2), DS_OK, 2, 2, 1, true);
	for (uint32_t e = 0; e < 2; e++)
		for (uint32_t t = 0; t < 2; t++) {
			uint32_t r = e * 2 + t;
			fx_experts_are(&f, &XP, r, 4 * e, 4, 0, IE, true);
			repl(&f, r, GATE);
			rows_at(&f, r, QKV, 0, A1 "q_proj.weight", 64 * t, 64);
			rows_at(&f, r, QKV, 64, A1 "k_proj.weight", 64 * t, 64);
			rows_at(&f, r, SHX "gate_up_proj.weight", 0, SHX "gate_proj.weight", 32 * t,
			        32);
			rows_at(&f, r, SHX "gate_up_proj.weight", 32, SHX "up_proj.weight", 32 * t,
			        32);
			rows_at(&f, r, L0 "mlp.gate_up_proj.weight", 128, L0 "mlp.up_proj.weight",
			        128 * t, 128);
		}
	fx_close(&f);
	fx_open(&f, tm_ds(3, 1, 8, 2), DS_OK, 1, 2, 0, true);
	for (uint32_t e = 0; e < 2; e++) {
		fx_experts_are(&f, &XP, e, 4 * e, 4, 0, IE, false);
		rows_at(&f, e, QKV, 0, A1 "q_proj.weight", 0, 128);
		rows_at(&f, e, QKV, 256, A1 "v_proj.weight", 0, 128);
		rows_at(&f, e, SHX "gate_up_proj.weight", 64, SHX "up_proj.weight", 0, 64);
	}
	fx_close(&f);
	fx_open(&f, tm_ds(3, 1, 8, 2), DS_OK, 1, 8, 0, true);
	for (uint32_t e = 0; e < 8; e++)
		fx_experts_are(&f, &XP, e, e, 1, 0, IE, false);
	fx_close(&f);
}

static const char *const ds_keep[] = {
    EMB, OUT, FLN, GATE, L1 "input_layernorm.weight", L1 "post_attention_layernorm.weight"};
static const char *const ds_quant[] = {QKV,
                                       OP,
                                       W13,
                                       W2,
                                       SHX "gate_up_proj.weight",
                                       SHX "down_proj.weight",
                                       L0 "mlp.gate_up_proj.weight",
                                       L0 "mlp.down_proj.weight"};

/* int8-channel at TP 2: qkv / o_proj / the dense MLP / the stacks / the shared experts quantized
 * per row, the router (GateLinear, unquantized), embedding, head and norms BF16; rank 1's o_proj
 * codes are columns 64.. of every row. fp8-channel at TP 4: the same split. */
static void test_deepseek_moe_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_ds(3, 1, 8, 2), DS_OK, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(ds_keep), FX_N(ds_quant));
	fx_cols_int8_is(&f, 1, 2, OP, HID, HID);
	shp(&f, 1, W13 "_scale", 3, NE, IE, 1);
	fx_close(&f);
	fx_open_quant(&f, tm_ds(3, 1, 8, 2), DS_OK, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(ds_keep),
	              FX_N(ds_quant));
	fx_close(&f);
}

/* moe_layer_freq 2 over 4 layers (first_k_dense_replace 1): layers 0, 1 and 3 dense, layer 2
 * MoE; a router on layer 1 or a dense MLP on layer 2 is refused naming the keys. */
static void test_deepseek_moe_freq(void **state)
{
	(void)state;
	const char *cfg = DS_BASE(",\"num_hidden_layers\":4,\"moe_intermediate_size\":32" KV8 DS_MOE
	                          ",\"moe_layer_freq\":2");
	fx f;
	fx_open(&f, tm_ds(4, 2, 8, 2), cfg, 2, 1, 0, true);
	fx_mlp_is(&f, 1, 2, L1 "mlp.", 256, HID);
	fx_mlp_is(&f, 1, 2, "model.layers.3.mlp.", 256, HID);
	assert_true(tm_ix(f.p, 1, GATE) < 0);
	repl(&f, 1, "model.layers.2.mlp.gate.weight");
	shp(&f, 1, "model.layers.2.mlp.experts.w13_weight", 3, NE, IE, HID);
	fx_close(&f);
	fx_refused(tm_ds(4, 1, 8, 2), cfg, WT_EUNSUPPORTED, "model.layers.1.mlp.",
	           "first_k_dense_replace, moe_layer_freq");
	fx_refused(tm_ds(4, 2, 8, 2),
	           DS_BASE(",\"num_hidden_layers\":4,\"moe_intermediate_size\":32" KV8 DS_MOE),
	           WT_EUNSUPPORTED, "model.layers.1.mlp.", "first_k_dense_replace, moe_layer_freq");
}

static void test_deepseek_moe_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2},
	                                   {2, 2}, {1, 4}, {4, 2}, {2, 4}, {1, 8}};
	coverage(tm_ds(3, 1, 8, 2), DS_OK, 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_ds(3, 1, 2, 1),
	         DS_CFG(",\"num_key_value_heads\":2,\"n_routed_experts\":8,\"n_shared_experts\":1,"
	                "\"first_k_dense_replace\":1"),
	         2, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take DeepseekConfig's defaults: num_key_value_heads 32 (k_proj's rows refused),
 * moe_intermediate_size 1407 (the experts' shapes refused), first_k_dense_replace 0 (layer 0's
 * dense MLP unknown), n_shared_experts None (no shared experts: theirs unknown), n_routed_experts
 * None (every layer dense, num_experts_per_tok not needed); untied. */
static void test_deepseek_moe_defaults(void **state)
{
	(void)state;
	fx_refused(tm_ds(3, 1, 8, 2), DS_CFG(DS_MOE), WT_ESHAPE, L0 "self_attn.k_proj.weight",
	           "[512, 128]");
	fx_refused(tm_ds(3, 1, 8, 2), DS_BASE(",\"num_hidden_layers\":3" KV8 DS_MOE), WT_ESHAPE,
	           "experts.0.down_proj", "[128, 1407]");
	fx_refused(tm_ds(3, 1, 8, 2), DS_CFG(KV8 ",\"n_routed_experts\":8,\"n_shared_experts\":2"),
	           WT_EUNSUPPORTED, L0 "mlp.", "first_k_dense_replace");
	fx_refused(tm_ds(3, 1, 8, 2),
	           DS_CFG(KV8 ",\"n_routed_experts\":8,\"first_k_dense_replace\":1"),
	           WT_EUNSUPPORTED, "shared_experts", "unknown");
	fx f;
	fx_open(&f, tm_ds(3, 1, 8, 0),
	        DS_CFG(KV8 ",\"n_routed_experts\":8,\"first_k_dense_replace\":1"), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 1, SHX "gate_up_proj.weight") < 0);
	fx_experts_are(&f, &XP, 1, 0, NE, IE / 2, IE / 2, false);
	fx_close(&f);
	/* n_routed_experts absent: every layer a dense MLP, no num_experts_per_tok needed */
	fx_open(&f, tm_ds(3, 100, 8, 0),
	        "{\"architectures\":[\"DeepseekForCausalLM\"],\"model_type\":\"deepseek\","
	        "\"hidden_size\":128,\"intermediate_size\":256,\"num_attention_heads\":8,"
	        "\"vocab_size\":1000,\"num_hidden_layers\":3" KV8 "}",
	        2, 1, 0, true);
	fx_mlp_is(&f, 1, 2, L1 "mlp.", 256, HID);
	rows_at(&f, 1, OUT, 0, OUT, 512, 488);
	fx_close(&f);
	fx_refused(tm_ds(3, 1, 8, 2), DS_CFG(KV8 ",\"first_k_dense_replace\":1"), WT_ESHAPE,
	           "experts.0.down_proj", "0 experts");
}

static void test_deepseek_moe_errors(void **state)
{
	(void)state;
	fx_refused(tm_ds(3, 1, 8, 2), DS_CFG(KV8 DS_MOE ",\"hidden_act\":\"gelu\""),
	           WT_EUNSUPPORTED, "hidden_act is not \"silu\"", "deepseek_v2.py");
	fx_refused(tm_ds(3, 1, 8, 2), DS_CFG(KV8 DS_MOE ",\"scoring_func\":\"sigmoid\""),
	           WT_EUNSUPPORTED, "scoring_func is not \"softmax\"", "MoEGate");
	fx_refused(tm_ds(3, 1, 8, 2), DS_CFG(KV8 DS_MOE ",\"attention_bias\":true"),
	           WT_EUNSUPPORTED, "attention_bias is true", "without biases");
	fx_refused(tm_ds(3, 1, 8, 2), DS_CFG(KV8 DS_MOE ",\"tie_word_embeddings\":true"),
	           WT_EUNSUPPORTED, "tie_word_embeddings is true", "never ties");
	fx_refused(
	    tm_ds(3, 1, 8, 2),
	    "{\"architectures\":[\"DeepseekForCausalLM\"],\"model_type\":\"deepseek\","
	    "\"hidden_size\":128,\"intermediate_size\":256,\"num_attention_heads\":8,"
	    "\"vocab_size\":1000,\"num_hidden_layers\":3,\"moe_intermediate_size\":32" KV8 DS_MOE
	    "}",
	    WT_ECORRUPT, "num_experts_per_tok is missing", "deepseek-moe-16b: 6");
	fx_refused(tm_ds(3, 1, 8, 2), DS_CFG(KV8 DS_MOE ",\"head_dim\":32"), WT_EUNSUPPORTED,
	           "head_dim 32 is not hidden_size / num_attention_heads = 16", "remove it");
	tm_model *m = tm_ds(3, 1, 8, 2);
	tm_add2(m, A1 "q_proj.bias", 8 * HD, 0);
	fx_refused(m, DS_OK, WT_EUNSUPPORTED, A1 "q_proj.bias", "attention_bias");
	/* no MTP layer: a layer past num_hidden_layers is an error, not dropped */
	m = tm_ds(3, 1, 8, 2);
	tm_add2(m, "model.layers.3.input_layernorm.weight", HID, 0);
	fx_refused(m, DS_OK, WT_ESHAPE, "model.layers.3.input_layernorm.weight",
	           "num_hidden_layers is 3");
	m = tm_ds(3, 1, 8, 2);
	tm_remove(m, "model.layers.2.mlp.experts.5.up_proj.weight");
	fx_refused(m, DS_OK, WT_ENOTFOUND, "experts.5.up_proj", "missing");
	fx_refused_tp(tm_ds(3, 1, 8, 2), DS_OK, 16, WT_ELAYOUT, "16", "num_attention_heads 8");
	fx_refused_tp(tm_ds(3, 1, 8, 2), DS_OK, 3, WT_ELAYOUT, "3", "num_attention_heads 8");
	fx_refused_tp_ep(tm_ds(3, 1, 8, 2), DS_OK, 1, 16, WT_ELAYOUT, "ep_size 16", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_deepseek_moe_slices),
	    cmocka_unit_test(test_deepseek_moe_ep),
	    cmocka_unit_test(test_deepseek_moe_quant),
	    cmocka_unit_test(test_deepseek_moe_freq),
	    cmocka_unit_test(test_deepseek_moe_coverage),
	    cmocka_unit_test(test_deepseek_moe_defaults),
	    cmocka_unit_test(test_deepseek_moe_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
