/*
 * test_shardmap_grok1.c — Grok-1 (Grok1ModelForCausalLM) cut as vLLM's grok1.py loads it:
 * attn.q_proj / k_proj / v_proj fused into attn.qkv_proj by heads (GQA, kv heads replicated
 * below TP), attn.o_proj by columns; the four layer norms and model.norm stored as .scale,
 * served whole as .weight; moe_block.gate whole and never quantized; experts linear (gate) /
 * linear_v (up) / linear_1 (down) stacked as moe_block.experts.w13_weight / w2_weight (Ie
 * split under TP, whole experts under EP); lm_head tied by default (dropped). Hand-computed
 * slices at TP 2, TP 4, EP 2 and TP 2 x EP 2, int8-channel and fp8-channel layouts, coverage
 * over TP 1..8 / EP, the config defaults and every refusal. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0041ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 128, H 4, KV 2, head_dim 32, 4 experts of I 64, V 1000, 2 layers */
#define HID 128
#define HD  32
#define QD  (4 * HD)
#define KVD (2 * HD)
#define NE  4
#define IE  64
#define GK_BASE(extra)                                                                             \
	"{\"architectures\":[\"Grok1ModelForCausalLM\"],\"model_type\":\"grok-1\","                \
	"\"hidden_size\":128,\"num_attention_heads\":4,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":64,\"num_experts\":4,\"vocab_size\":1000,"                          \
	"\"num_hidden_layers\":2" extra "}"
/* the release's keys, all given */
#define GK_OK                                                                                      \
	GK_BASE(",\"num_experts_per_tok\":2,\"tie_word_embeddings\":true,"                         \
	        "\"attn_output_multiplier\":0.08838834764831845,"                                  \
	        "\"embedding_multiplier_scale\":78.38367176906169,"                                \
	        "\"output_multiplier_scale\":0.5773502691896257,\"max_attn_value\":30.0,"          \
	        "\"rms_norm_eps\":1e-5,\"max_position_embeddings\":8192")
#define L0  "model.layers.0."
#define L1  "model.layers.1."
#define A0  L0 "attn."
#define A1  L1 "attn."
#define M0  L0 "moe_block."
#define W13 M0 "experts.w13_weight"
#define W2  M0 "experts.w2_weight"

static const char *const norms[] = {"pre_attn_norm", "post_attn_norm", "pre_moe_norm",
                                    "post_moe_norm"};

/* Every layer's leaves but the experts (tm_experts below). */
static const tm_leaf gk_leaves[] = {
    {"pre_attn_norm.scale", HID, 0, 0},    {"post_attn_norm.scale", HID, 0, 0},
    {"pre_moe_norm.scale", HID, 0, 0},     {"post_moe_norm.scale", HID, 0, 0},
    {"attn.q_proj.weight", QD, HID, 0},    {"attn.k_proj.weight", KVD, HID, 0},
    {"attn.v_proj.weight", KVD, HID, 0},   {"attn.o_proj.weight", HID, QD, 0},
    {"moe_block.gate.weight", NE, HID, 0},
};

/* untied: with lm_head.weight */
static tm_model *tm_gk_head(bool head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "model.embed_tokens.weight", 1000, HID);
	if (head)
		tm_add2(m, "lm_head.weight", 1000, HID);
	tm_add2(m, "model.norm.scale", HID, 0);
	tm_layers(m, TM_L, 2, gk_leaves, TM_NLEAVES(gk_leaves), 0);
	for (int i = 0; i < 2; i++)
		tm_experts(m, i, "moe_block.experts.", NE, IE, HID, "linear", "linear_v",
		           "linear_1");
	return m;
}

static tm_model *tm_gk(void)
{
	return tm_gk_head(false);
}

/* Rank r (TP rank tr of T): q heads tr*H/T.., kv head(s) tr (T 2) or tr / 2 (T 4, shared). */
static void attn_rank(const fx *f, uint32_t r, uint32_t tr, uint32_t T)
{
	int64_t q = QD / T, kv = T <= 2 ? KVD / T : HD, ks = T <= 2 ? tr : tr / (T / 2);
	const char *qkv = A1 "qkv_proj.weight";
	shp(f, r, qkv, 2, q + 2 * kv, HID, 0);
	rows_at(f, r, qkv, 0, A1 "q_proj.weight", q * tr, q);
	rows_at(f, r, qkv, q, A1 "k_proj.weight", kv * ks, kv);
	rows_at(f, r, qkv, q + kv, A1 "v_proj.weight", kv * ks, kv);
	cols_at(f, r, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, QD, q * tr, q);
}

/* The stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {
    W13, W2, M0 "experts.%lld.%s.weight", "linear", "linear_v", "linear_1", HID, IE};

/* What every rank holds whole: the norms (.scale served as .weight) and the routers. */
static void whole(const fx *f, uint32_t r)
{
	char o[120], s[120];
	rows_at(f, r, "model.norm.weight", 0, "model.norm.scale", 0, HID);
	for (int l = 0; l < 2; l++)
		for (int k = 0; k < 4; k++) {
			snprintf(o, sizeof(o), "model.layers.%d.%s.weight", l, norms[k]);
			snprintf(s, sizeof(s), "model.layers.%d.%s.scale", l, norms[k]);
			shp(f, r, o, 1, HID, 0, 0);
			rows_at(f, r, o, 0, s, 0, HID);
		}
	repl(f, r, M0 "gate.weight");
	repl(f, r, L1 "moe_block.gate.weight");
	assert_true(tm_ix(f->p, r, "lm_head.weight") < 0); /* tied */
}

static void test_gk_tp(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t k = 0; k < 2; k++) {
		uint32_t T = tps[k];
		fx f;
		fx_open(&f, tm_gk(), GK_OK, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "grok1");
		for (uint32_t r = 0; r < T; r++) {
			attn_rank(&f, r, r, T);
			whole(&f, r);
			fx_experts_are(&f, &XP, r, 0, NE, IE / T * r, IE / T, false);
			rows_at(&f, r, "model.embed_tokens.weight", 0, "model.embed_tokens.weight",
			        1024 / T * r, r + 1 < T ? 1024 / T : 1000 - 1024 / T * r);
		}
		fx_close(&f);
	}
}

/* TP 4 by hand: q head r (rows 32 r..), kv head r / 2 (k rows 32 (r / 2)..), o_proj columns
 * 32 r.., linear rows 16 r.. of each expert (w13 rows 0..15 gate, 16..31 up). */
static void test_gk_tp4_hand(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_gk(), GK_OK, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		rows_at(&f, r, A0 "qkv_proj.weight", 0, A0 "q_proj.weight", 32 * r, 32);
		rows_at(&f, r, A0 "qkv_proj.weight", 32, A0 "k_proj.weight", 32 * (r / 2), 32);
		rows_at(&f, r, A0 "qkv_proj.weight", 64, A0 "v_proj.weight", 32 * (r / 2), 32);
		shp(&f, r, W13, 3, NE, 32, HID);
		shp(&f, r, W2, 3, NE, HID, 16);
	}
	fx_close(&f);
}

/* EP 2: whole experts 2 per rank, attention whole; TP 2 x EP 2 with up_gate. */
static void test_gk_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_gk(), GK_OK, 1, 2, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_experts_are(&f, &XP, r, 2 * r, 2, 0, IE, false);
		attn_rank(&f, r, 0, 1);
		whole(&f, r);
	}
	fx_close(&f);
	fx_open(&f, tm_gk(), GK_OK, 2, 2, 1, true);
	for (uint32_t r = 0; r < 4; r++) {
		fx_experts_are(&f, &XP, r, 2 * (r / 2), 2, 0, IE, true);
		attn_rank(&f, r, r % 2, 2);
		whole(&f, r);
	}
	fx_close(&f);
}

/* int8-channel (TP 2) and fp8-channel (TP 4): q/k/v/o and the experts quantized with their
 * scales; the router, the norms and the embeddings kept without a scale. */
static void test_gk_quant(void **state)
{
	(void)state;
	static const char *const q[] = {A0 "qkv_proj.weight", A1 "o_proj.weight", W13, W2};
	static const char *const keep[] = {M0 "gate.weight", L0 "pre_attn_norm.weight",
	                                   L1 "post_moe_norm.weight", "model.norm.weight",
	                                   "model.embed_tokens.weight"};
	fx f;
	fx_open_quant(&f, tm_gk(), GK_OK, 2, WT_QUANT_INT8_CHANNEL, -1, FX_N(keep), FX_N(q));
	/* rank 1's o_proj: columns 64.. of each row, quantized per row */
	fx_cols_int8_is(&f, 1, 2, A1 "o_proj.weight", HID, QD);
	fx_close(&f);
	fx_open_quant(&f, tm_gk(), GK_OK, 4, WT_QUANT_FP8_CHANNEL, -1, FX_N(keep), FX_N(q));
	fx_close(&f);
}

static void test_gk_coverage(void **state)
{
	(void)state;
	/* TP 8 is past the 4 heads (refused, test_gk_refusals); EP up to the 4 experts */
	static const uint32_t lays4[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2}, {1, 4}, {2, 2}, {4, 2}};
	coverage(tm_gk(), GK_OK, 2, lays4, sizeof(lays4) / sizeof(lays4[0]));
	/* the defaults: tied (Grok1Config's), num_experts_per_tok 2, the multipliers */
	coverage(tm_gk(), GK_BASE(""), 2, lays4, sizeof(lays4) / sizeof(lays4[0]));
	/* untied: lm_head by vocabulary rows */
	coverage(tm_gk_head(true), GK_BASE(",\"tie_word_embeddings\":false"), 2, lays4,
	         sizeof(lays4) / sizeof(lays4[0]));
}

/* Defaults: tie_word_embeddings absent is Grok1Config's true (lm_head dropped when present);
 * untied, lm_head is cut by vocabulary rows. */
static void test_gk_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_gk_head(true), GK_BASE(""), 2, 1, 0, false);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0);
	fx_close(&f);
	fx_open(&f, tm_gk_head(true), GK_BASE(",\"tie_word_embeddings\":false"), 2, 1, 0, true);
	rows_at(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	fx_close(&f);
}

static void test_gk_refusals(void **state)
{
	(void)state;
	fx_refused(tm_gk(), GK_BASE(",\"num_experts_per_tok\":5"), WT_ECORRUPT,
	           "num_experts_per_tok 5", "num_experts 4");
	fx_refused(tm_gk(), GK_BASE(",\"num_experts_per_tok\":0"), WT_ECORRUPT,
	           "num_experts_per_tok", "");
	fx_refused(tm_gk(), GK_BASE(",\"head_dim\":16"), WT_EUNSUPPORTED, "head_dim 16",
	           "hidden_size / num_attention_heads = 32");
	fx_refused(tm_gk(), GK_BASE(",\"rope_scaling\":{\"type\":\"linear\",\"factor\":2.0}"),
	           WT_EUNSUPPORTED, "rope_scaling", "plain RoPE");
	fx_refused(tm_gk(), GK_BASE(",\"attn_output_multiplier\":\"x\""), WT_ECORRUPT,
	           "attn_output_multiplier", "positive number");
	fx_refused(tm_gk(), GK_BASE(",\"embedding_multiplier_scale\":0"), WT_ECORRUPT,
	           "embedding_multiplier_scale", "positive number");
	fx_refused(tm_gk(), GK_BASE(",\"output_multiplier_scale\":-1"), WT_ECORRUPT,
	           "output_multiplier_scale", "positive number");
	fx_refused(tm_gk(), GK_BASE(",\"attn_logit_softcapping\":\"30\""), WT_ECORRUPT,
	           "attn_logit_softcapping", "number");
	/* untied without lm_head: vLLM's ParallelLMHead would stay unloaded */
	fx_refused(tm_gk(), GK_BASE(",\"tie_word_embeddings\":false"), WT_ENOTFOUND,
	           "lm_head.weight", "missing");
	/* a norm missing, a norm under .weight (not this layout), a q bias: refused */
	tm_model *m = tm_gk();
	tm_remove(m, L1 "post_moe_norm.scale");
	fx_refused(m, GK_OK, WT_ENOTFOUND, L1 "post_moe_norm.scale", "missing");
	m = tm_gk();
	tm_add2(m, A0 "q_proj.bias", QD, 0);
	fx_refused(m, GK_OK, WT_EUNSUPPORTED, A0 "q_proj.bias", "unknown");
	m = tm_gk();
	tm_remove(m, L0 "moe_block.experts.3.linear_v.weight");
	fx_refused(m, GK_OK, WT_ENOTFOUND, "linear_v", "missing");
	/* heads TP 8 does not divide (4 heads); no experts */
	fx_refused_tp(tm_gk(), GK_OK, 8, WT_ELAYOUT, "num_attention_heads 4", "tp_size 1, 2 or 4");
	fx_refused(tm_gk(),
	           "{\"architectures\":[\"Grok1ModelForCausalLM\"],\"model_type\":\"grok-1\","
	           "\"hidden_size\":128,\"num_attention_heads\":4,\"num_key_value_heads\":2,"
	           "\"intermediate_size\":64,\"num_experts\":0,\"vocab_size\":1000,"
	           "\"num_hidden_layers\":2,\"num_experts_per_tok\":1}",
	           WT_ECORRUPT, "num_experts_per_tok 1", "num_experts 0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gk_tp),       cmocka_unit_test(test_gk_tp4_hand),
	    cmocka_unit_test(test_gk_ep),       cmocka_unit_test(test_gk_quant),
	    cmocka_unit_test(test_gk_coverage), cmocka_unit_test(test_gk_defaults),
	    cmocka_unit_test(test_gk_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
