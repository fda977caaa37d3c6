/*
 * test_shardmap_ernie_mtp.c — ERNIE 4.5 MoE's MTP draft (ernie_mtp: ErnieMTPModel, the name
 * vLLM's speculative config gives an ernie4_5_moe config) cut as vLLM's ernie_mtp.py loads it
 * from the target's checkpoint: model.mtp_emb_norm.0 / mtp_hidden_norm.0 / mtp_linear_proj.0
 * served as model.layers.{L}.mtp_emb_norm / ..., L = num_hidden_layers, the norms and
 * mtp_linear_proj [hid, 2 hid] whole and never quantized; model.mtp_block.0 a dense Llama
 * decoder layer under model.layers.{L}.mtp_block., byte for byte what the ernie4_5_moe family
 * serves for a dense layer of the same tensors; model.embed_tokens and lm_head by padded
 * vocabulary rows, lm_head tied when the config ties; the target's layers and model.norm
 * skipped. Hand slices at TP 2 / 4, tied, int8-channel, coverage, the refusals. Seeds fixed and
 * printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed031bull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_mtp.h"

/* hid 128, H 4, KV 2 (head_dim 32), I 256, 4 experts of 64 with 2 shared, V 1000; target layers
 * 0 (dense) and 1 (MoE); the MTP block a copy of layer 0, served as layer 2 */
#define HID 128
#define ERM_CFG(tie)                                                                               \
	"{\"architectures\":[\"Ernie4_5_MoeForCausalLM\"],\"model_type\":\"ernie4_5_moe\","        \
	"\"hidden_size\":128,\"num_attention_heads\":4,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":2" tie                \
	",\"moe_intermediate_size\":64,\"moe_k\":2,"                                               \
	"\"moe_num_experts\":4,\"moe_num_shared_experts\":2,\"moe_layer_start_index\":1,"          \
	"\"moe_layer_end_index\":1,\"moe_layer_interval\":1}"
#define UNTIED ",\"tie_word_embeddings\":false"
#define TIED   ",\"tie_word_embeddings\":true"
#define L2     "model.layers.2."
#define MB2    L2 "mtp_block."
#define EB     "model.mtp_block.0."
#define EMB    "model.embed_tokens.weight"
#define LP     "model.mtp_linear_proj.0.weight"

static const mtp_dims D = {HID, 1000, 1024};

/* Every tensor of target layer 0 again under model.mtp_block.0. (the same bytes). */
static void erm_copy_layer0(tm_model *m)
{
	static const char lp[] = "model.layers.0.";
	for (size_t k = 0, n = m->n; k < n; k++) {
		if (strncmp(m->name[k], lp, sizeof(lp) - 1) != 0)
			continue;
		char b[200];
		snprintf(b, sizeof(b), EB "%s", m->name[k] + sizeof(lp) - 1);
		const st_desc *d = &m->d[k];
		void *p = tm_add(m, b, d->dtype, d->ndim, d->shape[0], d->shape[1], d->shape[2]);
		memcpy(p, m->data[k], tu_desc_nbytes(d));
	}
}

/* ERNIE-4.5-21B-A3B-PT's layout in small: layers 0 (dense) and 1 (MoE: F32 router and
 * moe_statics, 4 experts, shared experts), model.norm, lm_head, the model.mtp_* module (its
 * block a copy of layer 0). */
static tm_model *tm_erm(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	tm_attn(m, 0, 4, 2, 32, HID, 0, 0);
	tm_mlp(m, 0, "mlp.", 256, HID);
	tm_attn(m, 1, 4, 2, 32, HID, 0, 0);
	tm_add(m, "model.layers.1.mlp.gate.weight", WT_F32, 2, 4, HID, 0);
	tm_add(m, "model.layers.1.mlp.moe_statics.e_score_correction_bias", WT_F32, 2, 1, 4, 0);
	tm_experts(m, 1, "mlp.experts.", 4, 64, HID, "gate_proj", "up_proj", "down_proj");
	tm_mlp(m, 1, "mlp.shared_experts.", 128, HID);
	erm_copy_layer0(m);
	tm_add2(m, "model.mtp_emb_norm.0.weight", HID, 0);
	tm_add2(m, "model.mtp_hidden_norm.0.weight", HID, 0);
	tm_add2(m, LP, HID, 2 * HID);
	return m;
}

/* cfg: the target's config (tie: 0 untied, 1 tied, 2 no tie_word_embeddings key) named
 * ErnieMTPModel with num_nextn_predict_layers n (NULL: none). */
static const char *erm_cfg(char *out, size_t cap, int tie, const char *n)
{
	const char *t = tie == 0 ? ERM_CFG(UNTIED) : tie == 1 ? ERM_CFG(TIED) : ERM_CFG("");
	mtp_cfg(out, cap, t, "Ernie4_5_MoeForCausalLM", "ErnieMTPModel", n, "");
	return out;
}

/* Rank r of T of the draft a (lm_head served unless tied): under model.layers.2.mtp_block.
 * every tensor of layer 0 of rank r of the target b byte for byte; the MTP norms and
 * mtp_linear_proj whole, the embedding (and lm_head) by padded rows; nothing else. */
static void erm_rank_is(const fx *a, const fx *b, uint32_t r, uint32_t T, bool tie)
{
	static const char lp[] = "model.layers.0.";
	size_t nb = shardmap_rank_n_tensors(b->p, r), n2 = 0;
	for (size_t k = 0; k < nb; k++) {
		const sm_out_info *u = shardmap_rank_tensor(b->p, r, k);
		if (strncmp(u->name, lp, sizeof(lp) - 1) != 0)
			continue;
		char n[200];
		snprintf(n, sizeof(n), MB2 "%s", u->name + sizeof(lp) - 1);
		const sm_out_info *t = info(a, r, n);
		assert_int_equal(t->dtype, u->dtype);
		assert_int_equal(t->ndim, u->ndim);
		assert_memory_equal(t->shape, u->shape, sizeof(u->shape[0]) * (size_t)u->ndim);
		if (memcmp(out_bytes(a, r, n), b->pr->b[r][k], u->nbytes) != 0)
			fail_msg("rank %u '%s' differs from the target's '%s'", r, n, u->name);
		n2++;
	}
	assert_int_equal(n2, 6); /* 2 norms, qkv_proj, o_proj, gate_up_proj, down_proj */
	assert_int_equal(shardmap_rank_n_tensors(a->p, r), n2 + (tie ? 4 : 5));
	repl_from(a, r, L2 "mtp_emb_norm.weight", "model.mtp_emb_norm.0.weight");
	repl_from(a, r, L2 "mtp_hidden_norm.weight", "model.mtp_hidden_norm.0.weight");
	repl_from(a, r, L2 "mtp_linear_proj.weight", LP);
	shp(a, r, L2 "mtp_linear_proj.weight", 2, HID, 2 * HID, 0);
	mtp_vocab_at(a, r, T, &D, EMB, EMB);
	if (!tie)
		mtp_vocab_at(a, r, T, &D, "lm_head.weight", "lm_head.weight");
}

/* TP 2 and 4 (the kv heads replicated at 4), untied and tied: the MTP block byte for byte the
 * ernie4_5_moe family's dense layer 0 under model.layers.2.mtp_block.; the target's tensors
 * skipped, lm_head skipped when tied. */
static void test_erm_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4, 2};
	for (size_t k = 0; k < 3; k++) {
		char cfg[1200];
		bool tie = k == 2;
		fx f, g;
		uint32_t T = tps[k];
		fx_open(&f, tm_erm(), erm_cfg(cfg, sizeof(cfg), tie, "1"), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "ernie_mtp");
		assert_true(shardmap_tied_lm_head(f.p) == tie);
		fx_open(&g, tm_erm(), tie ? ERM_CFG(TIED) : ERM_CFG(UNTIED), T, 1, 0, true);
		assert_string_equal(shardmap_family(g.p), "ernie4_5_moe");
		assert_true(fx_skipped(&f, "model.norm.weight"));
		assert_true(fx_skipped(&f, "model.layers.0.self_attn.q_proj.weight"));
		assert_true(fx_skipped(&f, "model.layers.1.mlp.experts.3.down_proj.weight"));
		assert_true(
		    fx_skipped(&f, "model.layers.1.mlp.moe_statics.e_score_correction_bias"));
		assert_true(fx_skipped(&g, LP));
		assert_true(fx_skipped(&f, "lm_head.weight") == tie);
		for (uint32_t r = 0; r < T; r++)
			erm_rank_is(&f, &g, r, T, tie);
		int64_t kvl = 2 >= T ? 2 / T : 1;
		shp(&f, 0, MB2 "self_attn.qkv_proj.weight", 2, (4 / T + 2 * kvl) * 32, HID, 0);
		shp(&f, 0, MB2 "mlp.gate_up_proj.weight", 2, 2 * 256 / T, HID, 0);
		fx_close(&f);
		fx_close(&g);
	}
}

static const char *const erm_keep[] = {L2 "mtp_linear_proj.weight", L2 "mtp_emb_norm.weight", EMB,
                                       "lm_head.weight", MB2 "input_layernorm.weight"};
static const char *const erm_quant[] = {MB2 "self_attn.qkv_proj.weight",
                                        MB2 "self_attn.o_proj.weight",
                                        MB2 "mlp.gate_up_proj.weight", MB2 "mlp.down_proj.weight"};

/* int8-channel TP 2: the block's Linears quantized (qkv_proj's codes by hand), mtp_linear_proj
 * BF16 byte for byte (an nn.Linear without the quant_config), the norms and vocabulary tables
 * unquantized. */
static void test_erm_quant(void **state)
{
	(void)state;
	char cfg[1200];
	fx f;
	fx_open_quant(&f, tm_erm(), erm_cfg(cfg, sizeof(cfg), 0, "1"), 2, WT_QUANT_INT8_CHANNEL,
	              WT_BF16, FX_N(erm_keep), FX_N(erm_quant));
	fx_qkv_int8_is(&f, 1, 2, MB2 "self_attn.qkv_proj.weight", EB "self_attn.q_proj.weight",
	               EB "self_attn.k_proj.weight", EB "self_attn.v_proj.weight", 4, 2, 32, HID);
	repl_from(&f, 1, L2 "mtp_linear_proj.weight", LP);
	fx_close(&f);
}

static void test_erm_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}};
	char cfg[1200];
	coverage(tm_erm(), erm_cfg(cfg, sizeof(cfg), 0, "1"), 2, lays, 3);
	/* tied by Ernie4_5_MoeConfig's default: lm_head.weight not needed (ERNIE-4.5-21B-A3B's
	 * release has none) */
	tm_model *m = tm_erm();
	tm_remove(m, "lm_head.weight");
	coverage(m, erm_cfg(cfg, sizeof(cfg), 2, "1"), 2, lays, 3);
}

/* num_nextn_predict_layers missing, 0, 2; no MTP block; an MTP tensor missing; mtp_linear_proj
 * stored transposed (ERNIE-4.5-300B-A47B-PT's first upload); a block past index 0; an expert in
 * the block (vLLM's block is dense); tp_size past the heads. */
static void test_erm_refusals(void **state)
{
	(void)state;
	char cfg[1200];
	fx_refused(tm_erm(), erm_cfg(cfg, sizeof(cfg), 0, NULL), WT_ECORRUPT,
	           "num_nextn_predict_layers", "ErnieMTPModel");
	fx_refused(tm_erm(), erm_cfg(cfg, sizeof(cfg), 0, "0"), WT_ECORRUPT,
	           "num_nextn_predict_layers", ">= 1");
	fx_refused(tm_erm(), erm_cfg(cfg, sizeof(cfg), 0, "2"), WT_EUNSUPPORTED,
	           "num_nextn_predict_layers 2", "give 1");
	const char *c1 = erm_cfg(cfg, sizeof(cfg), 0, "1");
	tm_model *m = tm_erm();
	mtp_remove_prefix(m, EB);
	fx_refused(m, c1, WT_ENOTFOUND, "model.mtp_block.0.*", "no MTP layer");
	static const char *const need[] = {
	    "model.mtp_hidden_norm.0.weight", LP,  EB "post_attention_layernorm.weight",
	    EB "mlp.up_proj.weight",          EMB, "lm_head.weight"};
	for (size_t k = 0; k < TM_NLEAVES(need); k++) {
		m = tm_erm();
		tm_remove(m, need[k]);
		fx_refused(m, c1, WT_ENOTFOUND, need[k], "missing");
	}
	m = tm_erm();
	tm_remove(m, LP);
	tm_add2(m, LP, 2 * HID, HID);
	fx_refused(m, c1, WT_ESHAPE, LP, "[128, 256]");
	m = tm_erm();
	tm_add2(m, "model.mtp_block.1.input_layernorm.weight", HID, 0);
	fx_refused(m, c1, WT_ESHAPE, "model.mtp_block.1.", "num_nextn_predict_layers");
	m = tm_erm();
	tm_add2(m, EB "mlp.experts.0.down_proj.weight", HID, 64);
	fx_refused(m, c1, WT_EUNSUPPORTED, EB "mlp.experts.0.down_proj.weight", "unknown");
	fx_refused_tp(tm_erm(), c1, 8, WT_ELAYOUT, "tp_size 8", "4");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_erm_slices),
	    cmocka_unit_test(test_erm_quant),
	    cmocka_unit_test(test_erm_coverage),
	    cmocka_unit_test(test_erm_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
