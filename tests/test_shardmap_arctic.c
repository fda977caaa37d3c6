/*
 * test_shardmap_arctic.c — Snowflake Arctic (ArcticForCausalLM, remote code:
 * Snowflake/snowflake-arctic-base / -instruct) cut as vLLM's arctic.py loads it: Llama's
 * attention without biases (qkv_proj by heads, o_proj by columns), a dense layer's ArcticMLP
 * block_sparse_moe.mlp.w1 / w3 merged by rows into w13 and w2 by columns, all quantized; a MoE
 * layer's ArcticMoE, which is not FusedMoE: the router block_sparse_moe.gate whole on every
 * rank and quantized (ReplicatedLinear with quant_config), every expert on every rank cut by
 * tp in block_sparse_moe.ws [E, 2*I/T, hid] ([w1 rows; w3 rows] per expert) and w2s
 * [E, hid, I/T] (w2's columns), never quantized, no expert parallelism; with use_residual the
 * residual ArcticMLP (hidden_size wide) merged into residual_mlp.w13 / w2 the same way but
 * unquantized (built without quant_config), residual_layernorm replicated. Hand-computed
 * slices at TP 1, 2 and 4, int8-channel and fp8-channel layouts, coverage over TP 1..8,
 * ArcticConfig's defaults and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0061ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 128, H 8, KV 2, head size 16, I 64, E 4, top-2, V 1000, 2 layers: 0 dense, 1 MoE */
#define HID 128
#define HD  16
#define E   4
#define AR_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"ArcticForCausalLM\"],\"model_type\":\"arctic\","                    \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"num_hidden_layers\":2,\"vocab_size\":1000" extra "}"
#define AR_CFG(extra)                                                                              \
	AR_CFG_RAW(                                                                                \
	    AR_I ",\"num_local_experts\":4,\"num_experts_per_tok\":2,\"use_residual\":true" extra)
#define AR_I ",\"intermediate_size\":64"
#define L0   "model.layers.0."
#define L1   "model.layers.1."
#define RT   L1 "block_sparse_moe.gate.weight"
#define WS   L1 "block_sparse_moe.ws"
#define W2S  L1 "block_sparse_moe.w2s"
#define DM   L0 "block_sparse_moe.mlp."
#define RM   L1 "residual_mlp."
#define RN   L1 "residual_layernorm.weight"
#define EMB  "model.embed_tokens.weight"

/* The fixture's model (I wide): layer 0 dense, layer 1 MoE with (res) the residual MLP; an
 * untied lm_head. */
static tm_model *tm_ar(int64_t I, bool res)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	const tm_leaf L[] = {
	    {"input_layernorm.weight", HID, 0},       {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", HID, HID},    {"self_attn.k_proj.weight", 2 * HD, HID},
	    {"self_attn.v_proj.weight", 2 * HD, HID}, {"self_attn.o_proj.weight", HID, HID}};
	tm_layers(m, TM_L, 2, L, TM_NLEAVES(L), 0);
	tm_add2(m, DM "w1.weight", I, HID);
	tm_add2(m, DM "w3.weight", I, HID);
	tm_add2(m, DM "w2.weight", HID, I);
	tm_add2(m, RT, E, HID);
	tm_experts(m, 1, "block_sparse_moe.experts.", E, I, HID, "w1", "w3", "w2");
	if (res) {
		tm_add2(m, RN, HID, 0);
		tm_add2(m, RM "w1.weight", HID, HID);
		tm_add2(m, RM "w3.weight", HID, HID);
		tm_add2(m, RM "w2.weight", HID, HID);
	}
	return m;
}

static const fx_experts XP = {
    WS, W2S, L1 "block_sparse_moe.experts.%lld.%s.weight", "w1", "w3", "w2", HID, 64};

/* Rank r of T: ws / w2s every expert's rows / columns [r*Il, +Il), the router whole, the dense
 * MLP's and the residual MLP's [w1_r; w3_r] and w2 columns, attention by heads. */
static void rank_is(const fx *f, uint32_t r, uint32_t T)
{
	int64_t il = 64 / T;
	char b[160];
	fx_experts_are(f, &XP, r, 0, E, r * il, il, false);
	repl(f, r, RT);
	repl(f, r, RN);
	fx_gate_up_is(f, r, T, DM "w13.weight", DM "w1.weight", DM "w3.weight", 64);
	cols_of(f, r, T, DM "w2.weight", DM "w2.weight", HID, 64);
	fx_gate_up_is(f, r, T, RM "w13.weight", RM "w1.weight", RM "w3.weight", HID);
	cols_of(f, r, T, RM "w2.weight", RM "w2.weight", HID, HID);
	for (int l = 0; l < 2; l++) {
		snprintf(b, sizeof(b), "model.layers.%d.self_attn.", l);
		fx_attn_is(f, r, T, b, "o_proj.weight", 8, 2, HD, HID);
	}
	assert_true(tm_ix(f->p, r, fx_expert_src(b, sizeof(b), &XP, 0, "w1")) < 0);
	assert_true(tm_ix(f->p, r, L1 "block_sparse_moe.experts.w13_weight") < 0);
	assert_true(tm_ix(f->p, r, L0 "block_sparse_moe.gate.weight") < 0);
	assert_true(tm_ix(f->p, r, L0 "residual_mlp.w13.weight") < 0);
	assert_true(tm_ix(f->p, r, L1 "block_sparse_moe.mlp.w13.weight") < 0);
}

/* TP 1, 2 and 4 by hand; w13_order up_gate (FusedMoE's) leaves ws [w1; w3]. */
static void test_arctic_slices(void **state)
{
	(void)state;
	for (uint32_t T = 1; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_ar(64, true), AR_CFG(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "arctic");
		for (uint32_t r = 0; r < T; r++) {
			rank_is(&f, r, T);
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
		}
		fx_close(&f);
	}
	fx f;
	fx_open(&f, tm_ar(64, true), AR_CFG(""), 2, 1, 1, true);
	for (uint32_t r = 0; r < 2; r++)
		rank_is(&f, r, 2);
	fx_close(&f);
}

static const char *const ar_keep[] = {EMB, "model.norm.weight", "lm_head.weight", RN, WS,
                                      W2S, RM "w13.weight",     RM "w2.weight"};
static const char *const ar_quant[] = {L0 "self_attn.qkv_proj.weight", L1 "self_attn.o_proj.weight",
                                       DM "w13.weight", DM "w2.weight", RT};

/* int8-channel at TP 2 and fp8-channel at TP 4: attention, the dense MLP and the router
 * quantized; ws / w2s and the residual MLP BF16 without scales, their bytes the hand slices'. */
static void test_arctic_quant(void **state)
{
	(void)state;
	static const struct {
		int q, dt;
		uint32_t T;
	} qs[] = {{WT_QUANT_INT8_CHANNEL, WT_I8, 2}, {WT_QUANT_FP8_CHANNEL, WT_F8_E4M3, 4}};
	for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
		fx f;
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = qs[k].T;
		l.quant = (wt_quant)qs[k].q;
		l.requant_allow = 1;
		fx_open_l(&f, tm_ar(64, true), AR_CFG(""), &l, true);
		for (uint32_t r = 0; r < qs[k].T; r++) {
			fx_quant_split_as(&f, r, WT_BF16, ar_keep,
			                  sizeof(ar_keep) / sizeof(ar_keep[0]), ar_quant,
			                  sizeof(ar_quant) / sizeof(ar_quant[0]), qs[k].dt);
			int64_t il = 64 / qs[k].T;
			fx_experts_are(&f, &XP, r, 0, E, r * il, il, false);
			fx_gate_up_is(&f, r, qs[k].T, RM "w13.weight", RM "w1.weight",
			              RM "w3.weight", HID);
		}
		fx_close(&f);
	}
}

static void test_arctic_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_ar(64, true), AR_CFG(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_ar(64, false),
	         AR_CFG_RAW(AR_I ",\"num_local_experts\":4,\"use_residual\":false"), 2, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* ArcticConfig's defaults: num_local_experts 8 (the 4-row router refused as [8, 128]),
 * num_experts_per_tok 1, moe_layer_frequency 2 (layer 0 dense), num_key_value_heads the heads
 * (k_proj [32, 128] refused as [128, 128]); use_residual false: the residual MLP unknown. */
static void test_arctic_defaults(void **state)
{
	(void)state;
	fx_refused(tm_ar(64, true), AR_CFG_RAW(AR_I ",\"use_residual\":true"), WT_ESHAPE, RT,
	           "[8, 128]");
	fx f;
	fx_open(&f, tm_ar(64, false),
	        AR_CFG_RAW(AR_I ",\"num_local_experts\":4,\"use_residual\":false"), 2, 1, 0, true);
	fx_experts_are(&f, &XP, 1, 0, E, 32, 32, false);
	fx_close(&f);
	fx_refused(tm_ar(64, true),
	           "{\"architectures\":[\"ArcticForCausalLM\"],\"model_type\":\"arctic\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_hidden_layers\":2,"
	           "\"vocab_size\":1000,\"intermediate_size\":64,\"num_local_experts\":4,"
	           "\"use_residual\":true}",
	           WT_ESHAPE, "k_proj", "[128, 128]");
	fx_refused(tm_ar(64, true),
	           AR_CFG_RAW(AR_I ",\"num_local_experts\":4,\"use_residual\":false"),
	           WT_EUNSUPPORTED, "residual", "use_residual is false");
	fx_refused(tm_ar(64, true), AR_CFG(",\"moe_layer_frequency\":1"), WT_EUNSUPPORTED,
	           "block_sparse_moe.mlp.w1", "a MoE layer");
}

static void test_arctic_errors(void **state)
{
	(void)state;
	fx_refused_tp_ep(tm_ar(64, true), AR_CFG(""), 1, 2, WT_ELAYOUT, "ep_size 2", "ArcticMoE");
	fx_refused_tp_ep(tm_ar(64, true), AR_CFG(""), 2, 4, WT_ELAYOUT, "arctic's MoE",
	                 "no expert parallelism");
	fx_refused_tp(tm_ar(68, true),
	              AR_CFG_RAW(",\"intermediate_size\":68,\"num_local_experts\""
	                         ":4,\"num_experts_per_tok\":2,\"use_residual\":true"),
	              8, WT_ELAYOUT, "intermediate_size 68", "tp_size 1, 2 or 4");
	fx_refused(tm_ar(64, true),
	           AR_CFG_RAW(AR_I ",\"num_local_experts\":4,\"num_experts_per_tok\":5,"
	                           "\"use_residual\":true"),
	           WT_EUNSUPPORTED, "num_experts_per_tok 5", "between 1");
	fx_refused(tm_ar(64, true), AR_CFG_RAW(AR_I ",\"num_local_experts\":4"), WT_EUNSUPPORTED,
	           "use_residual is missing", "does not default");
	fx_refused(tm_ar(64, true), AR_CFG(",\"moe_layer_frequency\":3"), WT_EUNSUPPORTED,
	           "moe_layer_frequency 3", "give 1 or 2");
	fx_refused(tm_ar(64, true), AR_CFG(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act", "only silu");
	fx_refused(tm_ar(64, true), AR_CFG(",\"tie_word_embeddings\":true"), WT_EUNSUPPORTED,
	           "tie_word_embeddings", "never ties");
	fx_refused(tm_ar(64, true),
	           AR_CFG(",\"quantization_config\":{\"quant_method\":\"deepspeedfp\"}"),
	           WT_EUNSUPPORTED, "deepspeedfp", "16-bit checkpoint");
	fx_refused(tm_ar(64, true), AR_CFG(",\"quantization\":{\"q_bits\":8}"), WT_EUNSUPPORTED,
	           "quantization is not null", "deepspeedfp");
	fx_refused(tm_ar(64, true), AR_CFG(",\"moe_intermediate_size\":32"), WT_EUNSUPPORTED,
	           "moe_intermediate_size", "intermediate_size");
	fx_refused(tm_ar(64, true), AR_CFG(",\"rope_scaling\":{\"type\":\"linear\",\"factor\":2}"),
	           WT_EUNSUPPORTED, "rope_scaling", "no rope scaling");
	fx_refused(tm_ar(64, true), AR_CFG(",\"sliding_window\":4096"), WT_EUNSUPPORTED,
	           "sliding_window", "whole sequence");
	fx_refused(tm_ar(64, true), AR_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim", "");
	fx_refused(tm_ar(64, true),
	           "{\"architectures\":[\"ArcticForCausalLM\"],\"model_type\":\"arctic\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"num_hidden_layers\":1,\"vocab_size\":1000,\"intermediate_size\":64,"
	           "\"num_local_experts\":4,\"use_residual\":true,\"moe_layer_frequency\":1}",
	           WT_EUNSUPPORTED, "moe_layer_frequency 1 with num_hidden_layers 1", "odd layers");
	char b[160];
	tm_model *m = tm_ar(64, true);
	tm_remove(m, fx_expert_src(b, sizeof(b), &XP, 3, "w3"));
	fx_refused(m, AR_CFG(""), WT_ENOTFOUND, "experts.3.w3.weight", "missing");
	m = tm_ar(64, true);
	tm_remove(m, RM "w2.weight");
	fx_refused(m, AR_CFG(""), WT_ENOTFOUND, "residual_mlp.w2.weight", "missing");
	m = tm_ar(64, true);
	tm_add2(m, L0 "residual_layernorm.weight", HID, 0);
	fx_refused(m, AR_CFG(""), WT_EUNSUPPORTED, "residual_layernorm", "a dense layer");
	m = tm_ar(64, true);
	tm_add2(m, L0 "self_attn.q_proj.bias", HID, 0);
	fx_refused(m, AR_CFG(""), WT_EUNSUPPORTED, "q_proj.bias", "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_arctic_slices),   cmocka_unit_test(test_arctic_quant),
	    cmocka_unit_test(test_arctic_coverage), cmocka_unit_test(test_arctic_defaults),
	    cmocka_unit_test(test_arctic_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
