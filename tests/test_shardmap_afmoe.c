/*
 * test_shardmap_afmoe.c — AFMoE (AfmoeForCausalLM, model_type afmoe: Arcee's Trinity-Mini,
 * Trinity-Nano-Preview, Trinity-Large) cut as vLLM's afmoe.py loads it: q/k/v fused by heads into
 * qkv_proj (kv heads replicated past num_key_value_heads), the output gate self_attn.gate_proj by
 * the rank's heads' rows, o_proj by columns, q_norm / k_norm and the four layer norms replicated;
 * a dense MLP below num_dense_layers; MoE layers above it: mlp.router.gate served as mlp.gate and
 * mlp.expert_bias, both whole and never quantized, experts stacked, the shared experts
 * (moe_intermediate_size x num_shared_experts rows) merged. Hand-computed slices at TP 2 / 4 and
 * TP 2 x EP 2, int8-channel TP 2 and fp8-channel TP 4, coverage over TP 1..8, AfmoeConfig's
 * defaults and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed00afull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"
#include "test_shardmap_quant.h"

/* hid 128, H 8 of head_dim 32 (H d 256), dense I 96, Ie 32, 4 experts, V 1000, 3 layers */
#define HID 128
#define HD  32
#define QD  256
#define IE  32
#define LT3 "[\"sliding_attention\",\"sliding_attention\",\"full_attention\"]"
#define AF_BASE(head, extra)                                                                       \
	"{\"architectures\":[\"AfmoeForCausalLM\"],\"model_type\":\"afmoe\","                      \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2," head            \
	"\"vocab_size\":1000,\"num_hidden_layers\":3,\"num_experts\":4,"                           \
	"\"num_experts_per_tok\":2,\"moe_intermediate_size\":32,\"intermediate_size\":96" extra    \
	"}"
#define AF_CFG(extra) AF_BASE("\"head_dim\":32,", ",\"layer_types\":" LT3 extra)
#define AF_OK         AF_CFG("")
#define L1            "model.layers.1."
#define ATT           L1 "self_attn."
#define QKV           ATT "qkv_proj.weight"
#define OPJ           ATT "o_proj.weight"
#define GPJ           ATT "gate_proj.weight"
#define QN            ATT "q_norm.weight"
#define KN            ATT "k_norm.weight"
#define ROUTER        L1 "mlp.router.gate.weight"
#define GATE          L1 "mlp.gate.weight"
#define EBIAS         L1 "mlp.expert_bias"
#define SHX           L1 "mlp.shared_experts."
#define W13           L1 "mlp.experts.w13_weight"
#define W2            L1 "mlp.experts.w2_weight"
#define D0            "model.layers.0.mlp."
#define EMB           "model.embed_tokens.weight"
#define OUT           "lm_head.weight"
#define FLN           "model.norm.weight"

enum { A_BIAS = 1 };

/* Three layers with kv kv heads: layer 0 a dense MLP (I 96) when dense, else MoE; the other layers
 * MoE (4 experts, router, expert_bias, a shared MLP of sh rows when sh > 0); the q bias with
 * A_BIAS (vLLM's qkv_proj has none). */
static tm_model *tm_af(int64_t kv, int opts, int64_t sh, bool dense)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1000, HID);
	tm_add2(m, FLN, HID, 0);
	tm_add2(m, OUT, 1000, HID);
	const tm_leaf L[] = {{"input_layernorm.weight", HID, 0, 0},
	                     {"post_attention_layernorm.weight", HID, 0, 0},
	                     {"pre_mlp_layernorm.weight", HID, 0, 0},
	                     {"post_mlp_layernorm.weight", HID, 0, 0},
	                     {"self_attn.q_proj.weight", QD, HID, 0},
	                     {"self_attn.k_proj.weight", kv * HD, HID, 0},
	                     {"self_attn.v_proj.weight", kv * HD, HID, 0},
	                     {"self_attn.gate_proj.weight", QD, HID, 0},
	                     {"self_attn.o_proj.weight", HID, QD, 0},
	                     {"self_attn.q_norm.weight", HD, 0, 0},
	                     {"self_attn.k_norm.weight", HD, 0, 0},
	                     {"self_attn.q_proj.bias", QD, 0, A_BIAS}};
	tm_layers(m, "model.layers.%d.", 3, L, TM_NLEAVES(L), opts);
	if (dense)
		tm_mlp(m, 0, "mlp.", 96, HID);
	for (int i = dense ? 1 : 0; i < 3; i++) {
		char b[200];
		snprintf(b, sizeof(b), "model.layers.%d.mlp.router.gate.weight", i);
		tm_add2(m, b, 4, HID);
		snprintf(b, sizeof(b), "model.layers.%d.mlp.expert_bias", i);
		tm_add2(m, b, 4, 0);
		tm_experts(m, i, "mlp.experts.", 4, IE, HID, "gate_proj", "up_proj", "down_proj");
		if (sh > 0)
			tm_mlp(m, i, "mlp.shared_experts.", sh, HID);
	}
	return m;
}

static const fx_experts XP = {
    W13, W2, L1 "mlp.experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, IE};

/* Rank r of T (no EP): q/k/v by heads (kv head r KV / T), o_proj by columns, gate_proj rows
 * [r 256/T, +256/T) as q's, q/k norms and the norms whole, layer 0's dense MLP by its
 * intermediate, every expert's rows / columns [r Ie/T, +Ie/T), the shared MLP's 64 rows by T,
 * the router (under vLLM's name) and expert_bias whole. */
static void rank_is(const fx *f, uint32_t r, uint32_t T)
{
	fx_attn_is(f, r, T, ATT, "o_proj.weight", 8, 2, HD, HID);
	shp(f, r, GPJ, 2, QD / T, HID, 0);
	rows_at(f, r, GPJ, 0, GPJ, r * (QD / T), QD / T);
	repl(f, r, QN);
	repl(f, r, KN);
	fx_mlp_is(f, r, T, D0, 96, HID);
	repl_from(f, r, GATE, ROUTER);
	repl(f, r, EBIAS);
	fx_experts_are(f, &XP, r, 0, 4, r * IE / T, IE / T, false);
	fx_mlp_is(f, r, T, SHX, 2 * IE, HID);
	repl(f, r, L1 "input_layernorm.weight");
	repl(f, r, L1 "post_attention_layernorm.weight");
	repl(f, r, L1 "pre_mlp_layernorm.weight");
	repl(f, r, L1 "post_mlp_layernorm.weight");
	repl(f, r, FLN);
}

/* TP 2 (kv head r on rank r) and TP 4 (kv head r / 2 on ranks 2h, 2h + 1); vocabulary rows: V
 * 1000 padded to 1024, 1024 / T a rank; the checkpoint's router name not emitted. */
static void test_af_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_af(2, 0, 2 * IE, true), AF_OK, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "afmoe");
		for (uint32_t r = 0; r < T; r++)
			rank_is(&f, r, T);
		int64_t Vl = 1024 / T;
		rows_at(&f, T - 1, OUT, 0, OUT, Vl * (T - 1), 1000 - Vl * (T - 1));
		rows_at(&f, 0, EMB, 0, EMB, 0, Vl);
		assert_true(tm_ix(f.p, 0, ROUTER) < 0);
		assert_true(tm_ix(f.p, 0, "model.layers.0.mlp.gate.weight") < 0);
		/* embedding, head, final norm; 3 layers of 4 norms, qkv, o, gate, q/k norms; layer
		 * 0's gate_up / down; layers 1, 2: router, expert bias, 2 stacks, shared gate_up /
		 * down */
		assert_int_equal(shardmap_rank_n_tensors(f.p, 0), 3 + 3 * 9 + 2 + 2 * 6);
		fx_close(&f);
	}
}

/* TP 2 x EP 2: EP rank e holds experts [2e, 2e + 2) whole on both its tp ranks; attention, the
 * output gate, router, expert bias and the shared MLP as at TP 2. */
static void test_af_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_af(2, 0, 2 * IE, true), AF_OK, 2, 2, 0, true);
	for (uint32_t e = 0; e < 2; e++)
		for (uint32_t t = 0; t < 2; t++) {
			uint32_t r = e * 2 + t;
			fx_experts_are(&f, &XP, r, 2 * e, 2, 0, IE, false);
			repl_from(&f, r, GATE, ROUTER);
			repl(&f, r, EBIAS);
			rows_at(&f, r, GPJ, 0, GPJ, 128 * t, 128);
			rows_at(&f, r, QKV, 0, ATT "q_proj.weight", 128 * t, 128);
			rows_at(&f, r, SHX "gate_up_proj.weight", 0, SHX "gate_proj.weight", 32 * t,
			        32);
		}
	fx_close(&f);
}

static const char *const af_keep[] = {EMB,
                                      OUT,
                                      FLN,
                                      GATE,
                                      EBIAS,
                                      QN,
                                      KN,
                                      L1 "input_layernorm.weight",
                                      L1 "pre_mlp_layernorm.weight",
                                      L1 "post_mlp_layernorm.weight"};
static const char *const af_quant[] = {QKV,
                                       OPJ,
                                       GPJ,
                                       W13,
                                       W2,
                                       SHX "gate_up_proj.weight",
                                       SHX "down_proj.weight",
                                       D0 "gate_up_proj.weight",
                                       D0 "down_proj.weight"};

/* int8-channel at TP 2: q/k/v, o_proj, gate_proj, the stacks, the shared and dense MLPs per row;
 * the router, expert_bias, q/k norms, norms, embedding and head BF16; rank 1's gate_proj codes
 * are rows 128.., its qkv_proj's q rows 128.., k rows 32.. of k_proj; its o_proj codes columns
 * 128... fp8-channel at TP 4: the same split. */
static void test_af_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_af(2, 0, 2 * IE, true), AF_OK, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(af_keep), FX_N(af_quant));
	fx_rows_int8_is(&f, 1, GPJ, 0, GPJ, 128, 128, HID);
	fx_rows_int8_is(&f, 1, QKV, 0, ATT "q_proj.weight", 128, 128, HID);
	fx_rows_int8_is(&f, 1, QKV, 128, ATT "k_proj.weight", 32, 32, HID);
	fx_cols_int8_is(&f, 1, 2, OPJ, HID, QD);
	fx_close(&f);
	fx_open_quant(&f, tm_af(2, 0, 2 * IE, true), AF_OK, 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(af_keep), FX_N(af_quant));
	fx_close(&f);
}

static void test_af_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 2}, {1, 4}};
	coverage(tm_af(2, 0, 2 * IE, true), AF_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_af(2, 0, 3 * IE, false),
	         AF_CFG(",\"num_dense_layers\":0,\"num_shared_experts\":3"), 2, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take AfmoeConfig's defaults: num_dense_layers 1 (layer 0 dense), num_shared_experts
 * 2 (one shared MLP of 2 x Ie rows), head_dim 128 (not hid / H: q_proj [256, 128] refused by
 * shape); num_dense_layers 0 makes layer 0's dense MLP unknown, num_shared_experts 0 the shared
 * MLP. */
static void test_af_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_af(2, 0, IE, true), AF_CFG(",\"num_shared_experts\":1"), 2, 1, 0, true);
	fx_mlp_is(&f, 1, 2, SHX, IE, HID);
	fx_mlp_is(&f, 1, 2, D0, 96, HID);
	fx_close(&f);
	fx_refused(tm_af(2, 0, 2 * IE, true), AF_BASE("", ",\"layer_types\":" LT3), WT_ESHAPE,
	           "self_attn.", "implies [1024, 128]");
	fx_refused(tm_af(2, 0, 2 * IE, true), AF_CFG(",\"num_dense_layers\":0"), WT_EUNSUPPORTED,
	           "model.layers.0.mlp.", "num_dense_layers");
	fx_refused(tm_af(2, 0, 2 * IE, true), AF_CFG(",\"num_shared_experts\":0"), WT_EUNSUPPORTED,
	           "shared_experts", "unknown");
	fx_refused(tm_af(2, 0, 2 * IE, true), AF_CFG(",\"num_shared_experts\":1"), WT_ESHAPE,
	           "shared_experts", "32");
}

/* Each config refusal names its key. */
static void test_af_config_refusals(void **state)
{
	(void)state;
	fx_refused(tm_af(2, 0, 2 * IE, true), AF_CFG(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act is not \"silu\"", "Only silu");
	fx_refused(tm_af(2, 0, 2 * IE, true), AF_CFG(",\"tie_word_embeddings\":true"),
	           WT_EUNSUPPORTED, "tie_word_embeddings is true", "never ties");
	fx_refused(tm_af(2, 0, 2 * IE, true), AF_CFG(",\"score_func\":\"sparsemixer\""),
	           WT_EUNSUPPORTED, "score_func is not", "FusedMoE");
	fx_refused(tm_af(2, 0, 2 * IE, true), AF_CFG(",\"num_shared_experts\":-1"), WT_ECORRUPT,
	           "num_shared_experts", "0");
	fx_refused(tm_af(2, 0, 2 * IE, true), AF_BASE("\"head_dim\":32,", ""), WT_ECORRUPT,
	           "layer_types must list", "None");
	fx_refused(tm_af(2, 0, 2 * IE, true),
	           AF_BASE("\"head_dim\":32,",
	                   ",\"layer_types\":[\"sliding_attention\",\"full_attention\"]"),
	           WT_ECORRUPT, "layer_types", "(3)");
	fx_refused(tm_af(2, 0, 2 * IE, true),
	           AF_BASE("\"head_dim\":32,", ",\"layer_types\":[\"sliding_attention\",\"conv\","
	                                       "\"full_attention\"]"),
	           WT_ECORRUPT, "layer_types[1]", "\"sliding_attention\"");
	fx_refused(tm_af(2, 0, 2 * IE, true),
	           "{\"architectures\":[\"AfmoeForCausalLM\"],\"model_type\":\"afmoe\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"head_dim\":32,\"vocab_size\":1000,\"num_hidden_layers\":3,\"num_experts\":0,"
	           "\"moe_intermediate_size\":32,\"intermediate_size\":96,\"layer_types\":" LT3 "}",
	           WT_ECORRUPT, "num_experts is 0", "AfmoeMoE blocks");
}

/* Tensors vLLM's AfmoeForCausalLM has no parameter for, and missing ones. */
static void test_af_errors(void **state)
{
	(void)state;
	fx_refused(tm_af(2, A_BIAS, 2 * IE, true), AF_OK, WT_EUNSUPPORTED, "q_proj.bias",
	           "unknown");
	tm_model *m = tm_af(2, 0, 2 * IE, true);
	tm_remove(m, "model.layers.2.self_attn.gate_proj.weight");
	fx_refused(m, AF_OK, WT_ENOTFOUND, "self_attn.gate_proj", "missing");
	m = tm_af(2, 0, 2 * IE, true);
	tm_remove(m, "model.layers.2.mlp.expert_bias");
	fx_refused(m, AF_OK, WT_ENOTFOUND, "expert_bias", "missing");
	m = tm_af(2, 0, 2 * IE, true);
	tm_add2(m, GATE, 4, HID); /* vLLM's runtime name in a checkpoint: not the router */
	fx_refused(m, AF_OK, WT_EUNSUPPORTED, "mlp.gate.weight", "unknown");
	m = tm_af(2, 0, 2 * IE, true);
	tm_remove(m, L1 "mlp.experts.3.up_proj.weight");
	fx_refused(m, AF_OK, WT_ENOTFOUND, "experts.3.up_proj", "missing");
	fx_refused_tp(tm_af(2, 0, 2 * IE, true), AF_OK, 3, WT_ELAYOUT, "3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_af_slices),   cmocka_unit_test(test_af_ep),
	    cmocka_unit_test(test_af_quant),    cmocka_unit_test(test_af_coverage),
	    cmocka_unit_test(test_af_defaults), cmocka_unit_test(test_af_config_refusals),
	    cmocka_unit_test(test_af_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
