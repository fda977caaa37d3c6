/*
 * test_shardmap_minicpm_moe.c — MiniCPM-MoE (MiniCPMForCausalLM with num_experts > 0, remote
 * code: openbmb/MiniCPM-MoE-8x2B) cut as vLLM's minicpm.py loads it: MiniCPM's attention and
 * norms, and in every layer vLLM's MiniCPMMoE, which is not FusedMoE: the router mlp.gate
 * whole on every rank and never quantized (ReplicatedLinear, quant_config=None); every rank
 * holds ALL experts, each cut by tp: mlp.ws [E, 2*I/T, hid] = [w1 rows of rank r; w3 rows of
 * rank r] per expert, mlp.w2s [E, hid, I/T] = w2's columns of rank r, I = intermediate_size;
 * both plain nn.Parameters, never quantized; no expert parallelism. Hand-computed slices at
 * TP 1, 2 and 4, int8-channel and fp8-block layouts, coverage over TP 1..8, the defaults and
 * the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0047ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 128, H 8, KV 2, head size 16, I 64 (each expert's), E 4, top-2, V 1000, 2 layers */
#define HID 128
#define HD  16
#define E   4
#define MM_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"MiniCPMForCausalLM\"],\"model_type\":\"minicpm\","                  \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"num_hidden_layers\":2,\"vocab_size\":1000,\"scale_emb\":12,\"scale_depth\":1.4,"        \
	"\"dim_model_base\":256" extra "}"
#define MM_CFG(extra)                                                                              \
	MM_CFG_RAW(",\"intermediate_size\":64,\"num_experts\":4,\"num_experts_per_tok\":2" extra)
#define L1  "model.layers.1."
#define QKV L1 "self_attn.qkv_proj.weight"
#define OP  L1 "self_attn.o_proj.weight"
#define RT  L1 "mlp.gate.weight"
#define WS  L1 "mlp.ws"
#define W2S L1 "mlp.w2s"
#define EMB "model.embed_tokens.weight"

/* The MoE model with experts I wide (tied: no lm_head). */
static tm_model *tm_mm(int64_t I)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 0);
	const tm_leaf L[] = {{"input_layernorm.weight", HID, 0},
	                     {"post_attention_layernorm.weight", HID, 0},
	                     {"self_attn.q_proj.weight", HID, HID},
	                     {"self_attn.k_proj.weight", 2 * HD, HID},
	                     {"self_attn.v_proj.weight", 2 * HD, HID},
	                     {"self_attn.o_proj.weight", HID, HID},
	                     {"mlp.gate.weight", E, HID}};
	tm_layers(m, TM_L, 2, L, TM_NLEAVES(L), 0);
	for (int l = 0; l < 2; l++)
		tm_experts(m, l, "mlp.experts.", E, I, HID, "w1", "w3", "w2");
	return m;
}

/* Layer 1's experts (mlp.ws / mlp.w2s, laid out as FusedMoE's w13 / w2) against their leaves
 * (test_shardmap_experts.h). */
static const fx_experts XP = {WS, W2S, L1 "mlp.experts.%lld.%s.weight", "w1", "w3", "w2", HID, 64};

/* Rank r of T: ws is every expert's [w1 rows [r*Il, +Il); w3 rows [r*Il, +Il)], w2s every
 * expert's w2 columns [r*Il, +Il), Il = 64 / T; the router whole; no per-expert name left. */
static void experts_are(const fx *f, uint32_t r, uint32_t T)
{
	int64_t il = 64 / T;
	char b[120];
	fx_experts_are(f, &XP, r, 0, E, r * il, il, false);
	repl(f, r, RT);
	assert_true(tm_ix(f->p, r, fx_expert_src(b, sizeof(b), &XP, 0, "w1")) < 0);
	assert_true(tm_ix(f->p, r, L1 "mlp.experts.w13_weight") < 0);
	assert_true(tm_ix(f->p, r, L1 "mlp.gate_up_proj.weight") < 0);
}

/* TP 1, 2 and 4 by hand; w13_order up_gate (FusedMoE's) leaves ws [w1; w3]. */
static void test_minicpm_moe_slices(void **state)
{
	(void)state;
	for (uint32_t T = 1; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_mm(64), MM_CFG(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "minicpm");
		for (uint32_t r = 0; r < T; r++) {
			experts_are(&f, r, T);
			cols_of(&f, r, T, OP, OP, HID, HID);
			repl(&f, r, L1 "post_attention_layernorm.weight");
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
		}
		fx_close(&f);
	}
	fx f;
	fx_open(&f, tm_mm(64), MM_CFG(""), 2, 1, 1, true);
	for (uint32_t r = 0; r < 2; r++)
		experts_are(&f, r, 2);
	fx_close(&f);
}

static const char *const mm_keep[] = {EMB,
                                      "model.norm.weight",
                                      L1 "input_layernorm.weight",
                                      L1 "post_attention_layernorm.weight",
                                      RT,
                                      WS,
                                      W2S};
static const char *const mm_quant[] = {QKV, OP};

/* int8-channel at TP 2 and fp8-block at TP 2: qkv_proj / o_proj quantized; the router, ws and
 * w2s (plain nn.Parameters in vLLM) BF16 with the embedding and norms, and no scale of theirs;
 * the experts' bytes the hand slices'. */
static void test_minicpm_moe_quant(void **state)
{
	(void)state;
	static const struct {
		int q, dt;
	} qs[] = {{WT_QUANT_INT8_CHANNEL, WT_I8}, {WT_QUANT_FP8_BLOCK, WT_F8_E4M3}};
	for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
		fx f;
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = 2;
		l.quant = (wt_quant)qs[k].q;
		l.requant_allow = 1;
		fx_open_l(&f, tm_mm(64), MM_CFG(""), &l, true);
		for (uint32_t r = 0; r < 2; r++) {
			fx_quant_split_as(&f, r, WT_BF16, mm_keep,
			                  sizeof(mm_keep) / sizeof(mm_keep[0]), mm_quant,
			                  sizeof(mm_quant) / sizeof(mm_quant[0]), qs[k].dt);
			assert_true(tm_ix(f.p, r, WS "_scale") < 0 &&
			            tm_ix(f.p, r, W2S "_scale") < 0 &&
			            tm_ix(f.p, r, RT "_scale") < 0);
			experts_are(&f, r, 2);
		}
		fx_close(&f);
	}
}

static void test_minicpm_moe_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_mm(64), MM_CFG(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
}

/* num_experts absent or 0: the dense MiniCPM (test_shardmap_minicpm.c), so the experts are
 * refused naming the count; num_experts_per_tok has no default (vLLM reads
 * config.num_experts_per_tok); the router's rows are num_experts. */
static void test_minicpm_moe_defaults(void **state)
{
	(void)state;
	fx_refused(tm_mm(64), MM_CFG_RAW(",\"intermediate_size\":64"), WT_ESHAPE, "experts.0.w1",
	           "config.json has 0 experts");
	fx_refused(tm_mm(64), MM_CFG_RAW(",\"intermediate_size\":64,\"num_experts\":4"),
	           WT_EUNSUPPORTED, "num_experts 4 without num_experts_per_tok", "give it");
	fx_refused(tm_mm(64),
	           MM_CFG_RAW(",\"intermediate_size\":64,\"num_experts\":8,"
	                      "\"num_experts_per_tok\":2"),
	           WT_ESHAPE, "mlp.gate.weight", "[8, 128]");
}

static void test_minicpm_moe_errors(void **state)
{
	(void)state;
	fx_refused_tp_ep(tm_mm(64), MM_CFG(""), 1, 2, WT_ELAYOUT, "ep_size 2", "use ep_size 1");
	fx_refused_tp_ep(tm_mm(64), MM_CFG(""), 2, 4, WT_ELAYOUT, "minicpm's MoE",
	                 "no expert parallelism");
	fx_refused(tm_mm(64),
	           MM_CFG_RAW(",\"intermediate_size\":64,\"num_experts\":4,"
	                      "\"num_experts_per_tok\":5"),
	           WT_EUNSUPPORTED, "num_experts_per_tok 5", "num_experts (4)");
	fx_refused(tm_mm(64),
	           MM_CFG_RAW(",\"intermediate_size\":64,\"num_experts\":4,"
	                      "\"num_experts_per_tok\":0"),
	           WT_EUNSUPPORTED, "num_experts_per_tok 0", "between 1");
	fx_refused(tm_mm(64), MM_CFG(",\"moe_intermediate_size\":32"), WT_EUNSUPPORTED,
	           "moe_intermediate_size", "intermediate_size");
	fx_refused(tm_mm(64), MM_CFG(",\"num_local_experts\":4"), WT_EUNSUPPORTED,
	           "num_local_experts", "reads num_experts");
	fx_refused_tp(tm_mm(68),
	              MM_CFG_RAW(",\"intermediate_size\":68,\"num_experts\":4,"
	                         "\"num_experts_per_tok\":2"),
	              8, WT_ELAYOUT, "does not divide intermediate_size 68", "tp_size 1, 2 or 4");
	char b[120];
	tm_model *m = tm_mm(64);
	tm_remove(m, fx_expert_src(b, sizeof(b), &XP, 3, "w3"));
	fx_refused(m, MM_CFG(""), WT_ENOTFOUND, "experts.3.w3.weight", "missing");
	m = tm_mm(64);
	tm_add2(m, L1 "mlp.experts.0.w1.bias", 64, 0);
	fx_refused(m, MM_CFG(""), WT_EUNSUPPORTED, "w1.bias", "unknown");
	m = tm_mm(64);
	tm_add2(m, L1 "mlp.gate_proj.weight", 64, HID);
	fx_refused(m, MM_CFG(""), WT_EUNSUPPORTED, "gate_proj", "num_experts");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_minicpm_moe_slices),
	    cmocka_unit_test(test_minicpm_moe_quant),
	    cmocka_unit_test(test_minicpm_moe_coverage),
	    cmocka_unit_test(test_minicpm_moe_defaults),
	    cmocka_unit_test(test_minicpm_moe_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
