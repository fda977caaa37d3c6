/*
 * test_shardmap_mimo_mtp.c — MiMo's MTP draft (mimo_mtp: MiMoMTPModel, the name vLLM's
 * speculative config gives a MiMoForCausalLM config, num_hidden_layers set to 0) cut as vLLM's
 * mimo_mtp.py loads it from the target's checkpoint: model.mtp_layers.{n} (n <
 * num_nextn_predict_layers) with token_layernorm / hidden_layernorm / final_layernorm and
 * input_proj [hid, 2 hid] whole under their names, the Qwen2DecoderLayer's tensors under
 * model.mtp_layers.{n}.mtp_block. cut as the mimo family cuts a layer (q/k/v fused by heads with
 * their biases, o_proj by columns, gate_up_proj, down_proj), model.embed_tokens and lm_head by
 * padded vocabulary rows; the target's layers and model.norm skipped. Hand slices at TP 2 / 4
 * (and grouped kv heads replicated at TP 4), int8-channel, coverage TP 1..8, the refusals.
 * Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0319ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_biased.h"
#include "test_shardmap_mtp.h"

/* hid 128, H 8, head_dim 16, I 192, V 1000, 2 target layers + MTP layer 0 */
#define HID 128
#define HD  16
#define QD  (8 * HD)
#define I   192
#define MI_CFG(kv)                                                                                 \
	"{\"architectures\":[\"MiMoForCausalLM\"],\"model_type\":\"mimo\","                        \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":" kv                \
	",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000}"
#define MTP "model.mtp_layers.0."
#define MB  MTP "mtp_block."
#define AT  MTP "self_attn."
#define BA  MB "self_attn."
#define EMB "model.embed_tokens.weight"

/* The MTP layer n's 16 tensors as modeling_mimo.py's MiMoMTPLayers names them (kv kv heads). */
static void add_mtp(tm_model *m, int n, int64_t kv)
{
	/* kv: the rows are the kv heads' */
	static const tm_leaf L[] = {{"token_layernorm.weight", HID, 0, 0},
	                            {"hidden_layernorm.weight", HID, 0, 0},
	                            {"final_layernorm.weight", HID, 0, 0},
	                            {"input_layernorm.weight", HID, 0, 0},
	                            {"post_attention_layernorm.weight", HID, 0, 0},
	                            {"input_proj.weight", HID, 2 * HID, 0},
	                            {"self_attn.q_proj.weight", QD, HID, 0},
	                            {"self_attn.q_proj.bias", QD, 0, 0},
	                            {"self_attn.k_proj.weight", 0, HID, 1},
	                            {"self_attn.k_proj.bias", 0, 0, 1},
	                            {"self_attn.v_proj.weight", 0, HID, 1},
	                            {"self_attn.v_proj.bias", 0, 0, 1},
	                            {"self_attn.o_proj.weight", HID, QD, 0},
	                            {"mlp.gate_proj.weight", I, HID, 0},
	                            {"mlp.up_proj.weight", I, HID, 0},
	                            {"mlp.down_proj.weight", HID, I, 0}};
	for (size_t k = 0; k < TM_NLEAVES(L); k++) {
		char b[200];
		snprintf(b, sizeof(b), "model.mtp_layers.%d.%s", n, L[k].leaf);
		tm_add2(m, b, L[k].when ? kv * HD : L[k].a, L[k].b);
	}
}

/* MiMo-7B's release in small (kv kv heads, untied lm_head, MTP layers 0 .. nm - 1); cfg the
 * MiMoMTPModel config with num_nextn_predict_layers n (NULL: none) and `keys`. */
static tm_model *tm_mm(int64_t kv, int nm, const char *n, const char *keys, char *cfg, size_t cap)
{
	mtp_cfg(cfg, cap, kv == 8 ? MI_CFG("8") : MI_CFG("2"), "MiMoForCausalLM", "MiMoMTPModel", n,
	        keys);
	tm_model *m = tm_llama_biased(SEED, HID, QD, kv * HD, I, 1, TM_B_QKV);
	for (int k = 0; k < nm; k++)
		add_mtp(m, k, kv);
	return m;
}

/* Rank r of T: the MTP layer's own modules whole, its decoder layer under mtp_block. by hand
 * (q/k/v rows with their biases, o_proj columns, gate/up rows, down columns), the embedding and
 * lm_head by padded rows; 13 tensors and nothing else. */
static void mm_rank_is(const fx *f, uint32_t r, uint32_t T, int64_t kv)
{
	static const char *const whole[] = {"token_layernorm.weight", "hidden_layernorm.weight",
	                                    "final_layernorm.weight", "input_proj.weight"};
	char b[200];
	for (size_t k = 0; k < 4; k++) {
		snprintf(b, sizeof(b), MTP "%s", whole[k]);
		repl(f, r, b);
	}
	shp(f, r, MTP "input_proj.weight", 2, HID, 2 * HID, 0);
	repl_from(f, r, MB "input_layernorm.weight", MTP "input_layernorm.weight");
	repl_from(f, r, MB "post_attention_layernorm.weight",
	          MTP "post_attention_layernorm.weight");
	shp(f, r, BA "qkv_proj.weight", 2, (8 / T + 2 * (kv >= T ? kv / T : 1)) * HD, HID, 0);
	fx_qkv_is(f, r, T, BA "qkv_proj.weight", AT "q_proj.weight", AT "k_proj.weight",
	          AT "v_proj.weight", 8, kv, HD);
	fx_qkv_is(f, r, T, BA "qkv_proj.bias", AT "q_proj.bias", AT "k_proj.bias", AT "v_proj.bias",
	          8, kv, HD);
	cols_of(f, r, T, BA "o_proj.weight", AT "o_proj.weight", HID, QD);
	shp(f, r, MB "mlp.gate_up_proj.weight", 2, 2 * (I / T), HID, 0);
	fx_gate_up_is(f, r, T, MB "mlp.gate_up_proj.weight", MTP "mlp.gate_proj.weight",
	              MTP "mlp.up_proj.weight", I);
	cols_of(f, r, T, MB "mlp.down_proj.weight", MTP "mlp.down_proj.weight", HID, I);
	fx_vocab_is(f, r, T, EMB, 1000, 1024, HID);
	fx_vocab_is(f, r, T, "lm_head.weight", 1000, 1024, HID);
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 13);
}

/* TP 2 and 4 (MHA), TP 4 with 2 kv heads (replicated); the target's layer tensors and
 * model.norm skipped (2 x 12 + 1); tie_word_embeddings true still serves lm_head (the draft's
 * own head). */
static void test_mm_slices(void **state)
{
	(void)state;
	static const struct {
		uint32_t T;
		int64_t kv;
		const char *keys;
	} c[] = {{2, 8, ""}, {4, 8, ""}, {4, 2, ""}, {2, 8, ",\"tie_word_embeddings\":true"}};
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		char cfg[1000];
		fx f;
		fx_open(&f, tm_mm(c[k].kv, 1, "1", c[k].keys, cfg, sizeof(cfg)), cfg, c[k].T, 1, 0,
		        true);
		assert_string_equal(shardmap_family(f.p), "mimo_mtp");
		for (uint32_t r = 0; r < c[k].T; r++)
			mm_rank_is(&f, r, c[k].T, c[k].kv);
		assert_int_equal(shardmap_n_skipped(f.p), 2 * 12 + 1);
		assert_true(fx_skipped(&f, "model.norm.weight") &&
		            fx_skipped(&f, "model.layers.1.self_attn.q_proj.bias") &&
		            fx_skipped(&f, "model.layers.0.mlp.down_proj.weight"));
		fx_close(&f);
	}
}

/* num_nextn_predict_layers 2: model.mtp_layers.1 is served under its own index (vLLM's offset
 * num_hidden_layers is 0), its decoder layer under mtp_block. too. */
static void test_mm_two_layers(void **state)
{
	(void)state;
	char cfg[1000];
	fx f;
	fx_open(&f, tm_mm(8, 2, "2", "", cfg, sizeof(cfg)), cfg, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		repl(&f, r, "model.mtp_layers.1.input_proj.weight");
		cols_of(&f, r, 2, "model.mtp_layers.1.mtp_block.self_attn.o_proj.weight",
		        "model.mtp_layers.1.self_attn.o_proj.weight", HID, QD);
		assert_int_equal(shardmap_rank_n_tensors(f.p, r), 2 + 2 * 11);
	}
	fx_close(&f);
}

static const char *const mm_keep[] = {EMB,
                                      "lm_head.weight",
                                      MTP "input_proj.weight",
                                      MTP "token_layernorm.weight",
                                      MB "input_layernorm.weight",
                                      BA "qkv_proj.bias"};
static const char *const mm_quant[] = {BA "qkv_proj.weight", BA "o_proj.weight",
                                       MB "mlp.gate_up_proj.weight", MB "mlp.down_proj.weight"};

/* int8-channel TP 2: the decoder layer's Linears quantized as mimo's, input_proj BF16 byte for
 * byte (an nn.Linear without quant_config), the embedding, lm_head, norms and biases unquantized;
 * fp8-channel TP 4 alike. */
static void test_mm_quant(void **state)
{
	(void)state;
	char cfg[1000];
	fx f;
	fx_open_quant(&f, tm_mm(8, 1, "1", "", cfg, sizeof(cfg)), cfg, 2, WT_QUANT_INT8_CHANNEL,
	              WT_BF16, FX_N(mm_keep), FX_N(mm_quant));
	fx_qkv_int8_is(&f, 1, 2, BA "qkv_proj.weight", AT "q_proj.weight", AT "k_proj.weight",
	               AT "v_proj.weight", 8, 8, HD, HID);
	repl(&f, 1, MTP "input_proj.weight");
	fx_close(&f);
	fx_open_quant(&f, tm_mm(8, 1, "1", "", cfg, sizeof(cfg)), cfg, 4, WT_QUANT_FP8_CHANNEL,
	              WT_BF16, FX_N(mm_keep), FX_N(mm_quant));
	repl(&f, 3, MTP "input_proj.weight");
	fx_close(&f);
}

static void test_mm_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	char cfg[1000];
	coverage(tm_mm(8, 1, "1", "", cfg, sizeof(cfg)), cfg, 8, lays, 4);
	coverage(tm_mm(2, 1, "1", "", cfg, sizeof(cfg)), cfg, 2, lays, 4);
}

/* num_nextn_predict_layers missing, 0 or no integer; no MTP layer; a missing own module, bias
 * (one, or all three: Qwen2's qkv_proj has a bias), MLP row, embedding or lm_head; input_proj's
 * shape; an MTP layer past the count; an o_proj bias; tp_size past the heads. */
static void test_mm_refusals(void **state)
{
	(void)state;
	char cfg[1000];
	fx_refused(tm_mm(8, 1, NULL, "", cfg, sizeof(cfg)), cfg, WT_ECORRUPT,
	           "num_nextn_predict_layers", "MiMoMTPModel");
	fx_refused(tm_mm(8, 1, "0", "", cfg, sizeof(cfg)), cfg, WT_ECORRUPT,
	           "num_nextn_predict_layers", ">= 1");
	fx_refused(tm_mm(8, 1, "\"1\"", "", cfg, sizeof(cfg)), cfg, WT_ECORRUPT,
	           "num_nextn_predict_layers", "integer");
	fx_refused(tm_mm(8, 0, "1", "", cfg, sizeof(cfg)), cfg, WT_ENOTFOUND,
	           "model.mtp_layers.0.*", "no MTP layer");
	static const char *const need[] = {MTP "token_layernorm.weight",
	                                   MTP "input_proj.weight",
	                                   MTP "final_layernorm.weight",
	                                   AT "k_proj.bias",
	                                   MTP "mlp.up_proj.weight",
	                                   EMB,
	                                   "lm_head.weight"};
	for (size_t k = 0; k < sizeof(need) / sizeof(need[0]); k++) {
		tm_model *m = tm_mm(8, 1, "1", "", cfg, sizeof(cfg));
		tm_remove(m, need[k]);
		fx_refused(m, cfg, WT_ENOTFOUND, need[k], "missing");
	}
	tm_model *m = tm_mm(8, 1, "1", "", cfg, sizeof(cfg)); /* no q/k/v bias at all */
	tm_remove(m, AT "q_proj.bias");
	tm_remove(m, AT "k_proj.bias");
	tm_remove(m, AT "v_proj.bias");
	fx_refused(m, cfg, WT_ENOTFOUND, AT "q_proj.bias", "missing");
	m = tm_mm(8, 1, "1", "", cfg, sizeof(cfg));
	tm_remove(m, MTP "input_proj.weight");
	tm_add2(m, MTP "input_proj.weight", HID, HID);
	fx_refused(m, cfg, WT_ESHAPE, MTP "input_proj.weight", "[128, 256]");
	fx_refused(tm_mm(8, 2, "1", "", cfg, sizeof(cfg)), cfg, WT_ESHAPE, "model.mtp_layers.1",
	           "num_nextn_predict_layers");
	m = tm_mm(8, 1, "1", "", cfg, sizeof(cfg));
	tm_add2(m, AT "o_proj.bias", HID, 0);
	fx_refused(m, cfg, WT_EUNSUPPORTED, AT "o_proj.bias", "unknown");
	fx_refused_tp(tm_mm(8, 1, "1", "", cfg, sizeof(cfg)), cfg, 16, WT_ELAYOUT, "tp_size 16",
	              "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mm_slices),   cmocka_unit_test(test_mm_two_layers),
	    cmocka_unit_test(test_mm_quant),    cmocka_unit_test(test_mm_coverage),
	    cmocka_unit_test(test_mm_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
