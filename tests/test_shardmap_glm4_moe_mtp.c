/*
 * test_shardmap_glm4_moe_mtp.c — GLM-4.5 / 4.6's MTP draft (glm4_moe_mtp: Glm4MoeMTPModel, the
 * name vLLM's speculative config gives a Glm4MoeForCausalLM config) cut as vLLM's
 * glm4_moe_mtp.py loads it from the target's checkpoint: only the layers num_hidden_layers ..
 * + num_nextn_predict_layers - 1, each one's Glm4MoeDecoderLayer under model.layers.N.mtp_block.,
 * byte for byte what the glm4_moe family serves for the same layer (q/k/v fused with their
 * biases, q_norm / k_norm with use_qk_norm, V3's MoE rows); DeepSeek's MTP modules
 * (test_shardmap_deepseek_mtp.c) around it. Hand slices at TP 2 / 4 and TP 2 x EP 2,
 * int8-channel, coverage TP 1..8 with EP, the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0318ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_mtp.h"

/* hid 128, H 8, KV 2, head_dim 32, I 256 (layer 0), 8 experts of 64, one shared expert, V 1000,
 * 3 layers + the MTP layer 3 */
#define HID 128
#define NE  8
#define IE  64
#define GLM_CFG(layers)                                                                            \
	"{\"architectures\":[\"Glm4MoeForCausalLM\"],\"model_type\":\"glm4_moe\","                 \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"head_dim\":32,\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_"              \
	"layers\":" layers                                                                         \
	",\"moe_intermediate_size\":64,\"n_routed_experts\":8,\"num_experts_per_tok\":2,"          \
	"\"n_shared_experts\":1,\"first_k_dense_replace\":1,\"attention_bias\":true,"              \
	"\"use_qk_norm\":true}"
#define L3  "model.layers.3."
#define MB3 "model.layers.3.mtp_block."

static const mtp_dims D = {HID, 1000, 1024};

/* GLM-4.5's release in small: layers 0 (dense) .. 3 (MoE; 3 the MTP layer, with its modules
 * unless `own` is false); cfg the Glm4MoeMTPModel config with num_nextn_predict_layers n. */
static tm_model *tm_glm_mtp(bool own, const char *n, char *cfg, size_t cap)
{
	mtp_cfg(cfg, cap, GLM_CFG("3"), "Glm4MoeForCausalLM", "Glm4MoeMTPModel", n, "");
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	char b[200];
	for (int i = 0; i <= 3; i++) {
		tm_attn(m, i, 8, 2, 32, HID, 1, 1);
		if (i == 0) {
			tm_mlp(m, i, "mlp.", 256, HID);
			continue;
		}
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add2(m, b, NE, HID);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.e_score_correction_bias");
		tm_add(m, b, WT_F32, 1, NE, 0, 0);
		tm_experts(m, i, "mlp.experts.", NE, IE, HID, "gate_proj", "up_proj", "down_proj");
		tm_mlp(m, i, "mlp.shared_experts.", IE, HID);
	}
	if (own)
		mtp_own_add(m, 3, &D, true);
	return m;
}

/* TP 2, TP 4, TP 2 x EP 2: layer 3's decoder layer byte for byte the glm4_moe family's layer 3
 * of the same tensors (num_hidden_layers 4) under mtp_block., the MTP modules, the embedding;
 * the target's tensors skipped. */
static void test_glm_mtp_slices(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{2, 1}, {4, 1}, {2, 2}};
	for (size_t k = 0; k < 3; k++) {
		char cfg[1200], c4[1200];
		fx f, g;
		uint32_t T = lays[k][0];
		fx_open(&f, tm_glm_mtp(true, "1", cfg, sizeof(cfg)), cfg, T, lays[k][1], 0, true);
		assert_string_equal(shardmap_family(f.p), "glm4_moe_mtp");
		snprintf(c4, sizeof(c4), "%s", GLM_CFG("4"));
		fx_open(&g, tm_glm_mtp(false, "1", cfg, sizeof(cfg)), c4, T, lays[k][1], 0, true);
		assert_string_equal(shardmap_family(g.p), "glm4_moe");
		assert_true(fx_skipped(&f, "model.embed_tokens.weight"));
		assert_true(fx_skipped(&f, "lm_head.weight"));
		assert_true(fx_skipped(&f, "model.layers.2.self_attn.q_proj.weight"));
		assert_true(fx_skipped(&f, "model.layers.0.mlp.down_proj.weight"));
		for (uint32_t r = 0; r < T * lays[k][1]; r++) {
			mtp_block_same(&f, &g, r, 3, 6);
			mtp_own_is(&f, r, T, 3, &D);
			mtp_vocab_at(&f, r, T, &D, "model.embed_tokens.weight",
			             L3 "embed_tokens.weight");
			repl_from(&f, r, MB3 "self_attn.q_norm.weight",
			          L3 "self_attn.q_norm.weight");
		}
		int64_t kvl = 2 >= T ? 2 / T : 1; /* kv heads a rank (replicated past 2) */
		shp(&f, 0, MB3 "self_attn.qkv_proj.weight", 2, (8 / T + 2 * kvl) * 32, HID, 0);
		fx_close(&f);
		fx_close(&g);
	}
}

static const char *const glm_keep[] = {
    L3 "eh_proj.weight",   L3 "shared_head.head.weight",  "model.embed_tokens.weight",
    MB3 "mlp.gate.weight", MB3 "self_attn.qkv_proj.bias", MB3 "self_attn.k_norm.weight"};
static const char *const glm_quant[] = {
    MB3 "self_attn.qkv_proj.weight", MB3 "self_attn.o_proj.weight", MB3 "mlp.experts.w13_weight",
    MB3 "mlp.experts.w2_weight", MB3 "mlp.shared_experts.gate_up_proj.weight"};

/* int8-channel TP 2: the decoder layer's Linears quantized as glm4_moe's, eh_proj BF16 byte for
 * byte, shared_head.head, the embedding, the router, the biases and norms unquantized. */
static void test_glm_mtp_quant(void **state)
{
	(void)state;
	char cfg[1200];
	fx f;
	fx_open_quant(&f, tm_glm_mtp(true, "1", cfg, sizeof(cfg)), cfg, 2, WT_QUANT_INT8_CHANNEL,
	              WT_BF16, FX_N(glm_keep), FX_N(glm_quant));
	fx_qkv_int8_is(&f, 1, 2, MB3 "self_attn.qkv_proj.weight", L3 "self_attn.q_proj.weight",
	               L3 "self_attn.k_proj.weight", L3 "self_attn.v_proj.weight", 8, 2, 32, HID);
	repl(&f, 1, L3 "eh_proj.weight");
	fx_close(&f);
}

static void test_glm_mtp_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {2, 2}, {4, 2}, {2, 8}};
	char cfg[1200];
	coverage(tm_glm_mtp(true, "1", cfg, sizeof(cfg)), cfg, 2, lays, 7);
}

/* num_nextn_predict_layers missing or 0; no MTP layer; a missing MTP module, q_norm (use_qk_norm
 * true) and embed_tokens; index_topk is no refusal here (DeepSeek-V3.2's key). */
static void test_glm_mtp_refusals(void **state)
{
	(void)state;
	char cfg[1200];
	fx_refused(tm_glm_mtp(true, NULL, cfg, sizeof(cfg)), cfg, WT_ECORRUPT,
	           "num_nextn_predict_layers", "Glm4MoeMTPModel");
	fx_refused(tm_glm_mtp(true, "0", cfg, sizeof(cfg)), cfg, WT_ECORRUPT,
	           "num_nextn_predict_layers", ">= 1");
	tm_model *m = tm_glm_mtp(true, "1", cfg, sizeof(cfg));
	mtp_remove_prefix(m, L3);
	fx_refused(m, cfg, WT_ENOTFOUND, "model.layers.3.*", "no MTP layer");
	static const char *const need[] = {"hnorm.weight", "eh_proj.weight",
	                                   "self_attn.q_norm.weight",
	                                   "mlp.shared_experts.up_proj.weight"};
	for (size_t k = 0; k < sizeof(need) / sizeof(need[0]); k++) {
		char b[200];
		m = tm_glm_mtp(true, "1", cfg, sizeof(cfg));
		tm_fmt(b, sizeof(b), TM_L, 3, need[k]);
		tm_remove(m, b);
		fx_refused(m, cfg, WT_ENOTFOUND, b, "missing");
	}
	m = tm_glm_mtp(true, "1", cfg, sizeof(cfg));
	tm_remove(m, L3 "embed_tokens.weight");
	fx_refused(m, cfg, WT_ENOTFOUND, L3 "embed_tokens.weight", "shared model.embed_tokens");
	fx_refused_tp(tm_glm_mtp(true, "1", cfg, sizeof(cfg)), cfg, 16, WT_ELAYOUT, "tp_size 16",
	              "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_glm_mtp_slices),
	    cmocka_unit_test(test_glm_mtp_quant),
	    cmocka_unit_test(test_glm_mtp_coverage),
	    cmocka_unit_test(test_glm_mtp_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
