/*
 * test_shardmap_qwen3_next_mtp.c — Qwen3-Next's MTP draft (qwen3_next_mtp: Qwen3NextMTP, the
 * name vLLM's speculative config gives a Qwen3NextForCausalLM config) cut as vLLM's
 * qwen3_next_mtp.py loads it from the target's checkpoint: mtp.* renamed model.* (mtp.layers.{n}
 * keeps its index n < num_nextn_predict_layers, 1 when config.json has no such key), the MTP
 * layer a full-attention Qwen3NextDecoderLayer cut byte for byte as the qwen3_next family cuts a
 * full-attention layer of the same tensors (gated q fused with k / v by heads, q_norm / k_norm,
 * the MoE block or dense MLP by index n), fc [hid, 2 hid] by output rows and quantized as a
 * Linear, the three norms whole, model.embed_tokens and lm_head by padded vocabulary rows; the
 * target's layers and model.norm skipped. Hand slices at TP 2 / 4 and TP 2 x EP 2, two MTP
 * layers with a dense one, int8-channel, coverage with EP, the refusals. Seeds fixed and
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

#define SEED 0x5eed031aull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_mtp.h"

/* hid 128, V 1000; full attention H 4 / KV 2 / d 32 (q_proj 256 rows with the gates); linear
 * attention Hk 4 / Hv 8 of 32; 4 experts of 64, a shared expert of 96, dense MLP 192; target
 * layers 0 (linear) and 1 (full), both MoE; MTP layer 0 a copy of layer 1 */
#define HID 128
#define Q3M_CFG(x)                                                                                 \
	"{\"architectures\":[\"Qwen3NextForCausalLM\"],\"model_type\":\"qwen3_next\","             \
	"\"hidden_size\":128,\"num_attention_heads\":4,\"num_key_value_heads\":2,\"head_dim\":32," \
	"\"intermediate_size\":192,\"vocab_size\":1000,\"num_hidden_layers\":2,"                   \
	"\"linear_num_key_heads\":4,\"linear_num_value_heads\":8,\"linear_key_head_dim\":32,"      \
	"\"linear_value_head_dim\":32,\"linear_conv_kernel_dim\":4,\"num_experts\":4,"             \
	"\"moe_intermediate_size\":64,\"shared_expert_intermediate_size\":96,"                     \
	"\"full_attention_interval\":2" x "}"
#define M0  "mtp.layers.0."
#define R0  "model.layers.0."
#define EMB "model.embed_tokens.weight"
#define FC  "model.fc.weight"

static const mtp_dims D = {HID, 1000, 1024};

/* Layer i's MoE block (or, dense, its MLP of 192) under prefix fmt (one %d). */
static void q3m_mlp(tm_model *m, const char *fmt, int i, bool dense)
{
	char b[200];
	static const tm_leaf moe[] = {{"mlp.gate.weight", 4, HID, 0},
	                              {"mlp.shared_expert.gate_proj.weight", 96, HID, 0},
	                              {"mlp.shared_expert.up_proj.weight", 96, HID, 0},
	                              {"mlp.shared_expert.down_proj.weight", HID, 96, 0},
	                              {"mlp.shared_expert_gate.weight", 1, HID, 0}};
	static const tm_leaf mlp[] = {{"mlp.gate_proj.weight", 192, HID, 0},
	                              {"mlp.up_proj.weight", 192, HID, 0},
	                              {"mlp.down_proj.weight", HID, 192, 0}};
	const tm_leaf *L = dense ? mlp : moe;
	for (size_t k = 0; k < (dense ? TM_NLEAVES(mlp) : TM_NLEAVES(moe)); k++) {
		tm_fmt(b, sizeof(b), fmt, i, L[k].leaf);
		tm_add2(m, b, L[k].a, L[k].b);
	}
	for (int j = 0; j < 4 && !dense; j++) {
		static const char *const leaf[] = {"gate_proj", "up_proj", "down_proj"};
		for (int k = 0; k < 3; k++) {
			char l[96];
			snprintf(l, sizeof(l), "mlp.experts.%d.%s.weight", j, leaf[k]);
			tm_fmt(b, sizeof(b), fmt, i, l);
			tm_add2(m, b, k == 2 ? HID : 64, k == 2 ? 64 : HID);
		}
	}
}

/* Layer i's norms and full (gated) attention under prefix fmt. */
static void q3m_full(tm_model *m, const char *fmt, int i)
{
	static const tm_leaf L[] = {{"input_layernorm.weight", HID, 0, 0},
	                            {"post_attention_layernorm.weight", HID, 0, 0},
	                            {"self_attn.q_proj.weight", 256, HID, 0},
	                            {"self_attn.k_proj.weight", 64, HID, 0},
	                            {"self_attn.v_proj.weight", 64, HID, 0},
	                            {"self_attn.o_proj.weight", HID, 128, 0},
	                            {"self_attn.q_norm.weight", 32, 0, 0},
	                            {"self_attn.k_norm.weight", 32, 0, 0}};
	for (size_t k = 0; k < TM_NLEAVES(L); k++) {
		char b[200];
		tm_fmt(b, sizeof(b), fmt, i, L[k].leaf);
		tm_add2(m, b, L[k].a, L[k].b);
	}
}

/* Layer 0's norms and gated delta net. */
static void q3m_linear(tm_model *m)
{
	static const tm_leaf L[] = {{"input_layernorm.weight", HID, 0, 0},
	                            {"post_attention_layernorm.weight", HID, 0, 0},
	                            {"linear_attn.in_proj_qkvz.weight", 768, HID, 0},
	                            {"linear_attn.in_proj_ba.weight", 16, HID, 0},
	                            {"linear_attn.dt_bias", 8, 0, 0},
	                            {"linear_attn.norm.weight", 32, 0, 0},
	                            {"linear_attn.out_proj.weight", HID, 256, 0}};
	tm_layers(m, TM_L, 1, L, TM_NLEAVES(L), 0);
	tm_add(m, R0 "linear_attn.conv1d.weight", WT_DTYPE_INVALID, 3, 512, 1, 4);
	tm_add(m, R0 "linear_attn.A_log", WT_F32, 1, 8, 0, 0);
}

/* Every tensor of target layer 1 again under mtp.layers.0. (the same bytes). */
static void q3m_copy_layer1(tm_model *m)
{
	static const char lp[] = "model.layers.1.";
	for (size_t k = 0, n = m->n; k < n; k++) {
		if (strncmp(m->name[k], lp, sizeof(lp) - 1) != 0)
			continue;
		char b[200];
		snprintf(b, sizeof(b), M0 "%s", m->name[k] + sizeof(lp) - 1);
		const st_desc *d = &m->d[k];
		void *p = tm_add(m, b, d->dtype, d->ndim, d->shape[0], d->shape[1], d->shape[2]);
		memcpy(p, m->data[k], tu_desc_nbytes(d));
	}
}

/* Qwen3-Next's release in small: the target's two layers, model.norm, the untied lm_head, the
 * mtp.* module (fc, the three norms, layer 0 a copy of layer 1); `two`: an MTP layer 1 with a
 * dense MLP besides. */
static tm_model *tm_q3m(bool two)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	q3m_linear(m);
	q3m_mlp(m, TM_L, 0, false);
	q3m_full(m, TM_L, 1);
	q3m_mlp(m, TM_L, 1, false);
	q3m_copy_layer1(m);
	tm_add2(m, "mtp.fc.weight", HID, 2 * HID);
	tm_add2(m, "mtp.norm.weight", HID, 0);
	tm_add2(m, "mtp.pre_fc_norm_hidden.weight", HID, 0);
	tm_add2(m, "mtp.pre_fc_norm_embedding.weight", HID, 0);
	if (two) {
		q3m_full(m, "mtp.layers.%d.", 1);
		q3m_mlp(m, "mtp.layers.%d.", 1, true);
	}
	return m;
}

/* cfg: the target's config (x appended) named Qwen3NextMTP with num_nextn_predict_layers n
 * (NULL: none). */
static const char *q3m_cfg(char *out, size_t cap, const char *n, const char *x)
{
	char t[1400];
	snprintf(t, sizeof(t), Q3M_CFG("%s"), x);
	mtp_cfg(out, cap, t, "Qwen3NextForCausalLM", "Qwen3NextMTP", n, "");
	return out;
}

/* Rank r (tp rank r % T) of the draft a holds, under model.layers.0., every tensor of layer 1 of
 * rank r of the target b byte for byte, and besides them its 6 own tensors: fc's rows, the three
 * norms whole, the embedding and lm_head by padded rows. */
static void q3m_rank_is(const fx *a, const fx *b, uint32_t r, uint32_t T)
{
	static const char lp[] = "model.layers.1.";
	size_t nb = shardmap_rank_n_tensors(b->p, r), n2 = 0;
	for (size_t k = 0; k < nb; k++) {
		const sm_out_info *u = shardmap_rank_tensor(b->p, r, k);
		if (strncmp(u->name, lp, sizeof(lp) - 1) != 0)
			continue;
		char n[200];
		snprintf(n, sizeof(n), R0 "%s", u->name + sizeof(lp) - 1);
		const sm_out_info *t = info(a, r, n);
		assert_int_equal(t->dtype, u->dtype);
		assert_int_equal(t->ndim, u->ndim);
		assert_memory_equal(t->shape, u->shape, sizeof(u->shape[0]) * (size_t)u->ndim);
		if (memcmp(out_bytes(a, r, n), b->pr->b[r][k], u->nbytes) != 0)
			fail_msg("rank %u '%s' differs from the target's '%s'", r, n, u->name);
		n2++;
	}
	assert_true(n2 >= 10);
	assert_int_equal(shardmap_rank_n_tensors(a->p, r), n2 + 6);
	int64_t hl = HID / T, t = r % T;
	shp(a, r, FC, 2, hl, 2 * HID, 0);
	rows_at(a, r, FC, 0, "mtp.fc.weight", t * hl, hl);
	repl_from(a, r, "model.norm.weight", "mtp.norm.weight");
	repl_from(a, r, "model.pre_fc_norm_hidden.weight", "mtp.pre_fc_norm_hidden.weight");
	repl_from(a, r, "model.pre_fc_norm_embedding.weight", "mtp.pre_fc_norm_embedding.weight");
	mtp_vocab_at(a, r, T, &D, EMB, EMB);
	mtp_vocab_at(a, r, T, &D, "lm_head.weight", "lm_head.weight");
}

/* TP 2, TP 4, TP 2 x EP 2 (num_nextn_predict_layers absent: 1): the MTP layer byte for byte the
 * qwen3_next family's full-attention layer 1 of the same tensors, under model.layers.0.; the
 * target's tensors skipped. */
static void test_q3m_slices(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{2, 1}, {4, 1}, {2, 2}};
	for (size_t k = 0; k < 3; k++) {
		char cfg[1400];
		fx f, g;
		uint32_t T = lays[k][0];
		fx_open(&f, tm_q3m(false), q3m_cfg(cfg, sizeof(cfg), NULL, ""), T, lays[k][1], 0,
		        true);
		assert_string_equal(shardmap_family(f.p), "qwen3_next_mtp");
		assert_false(shardmap_tied_lm_head(f.p));
		fx_open(&g, tm_q3m(false), Q3M_CFG(""), T, lays[k][1], 0, true);
		assert_string_equal(shardmap_family(g.p), "qwen3_next");
		assert_true(fx_skipped(&f, "model.norm.weight"));
		assert_true(fx_skipped(&f, "model.layers.1.self_attn.q_proj.weight"));
		assert_true(fx_skipped(&f, "model.layers.0.linear_attn.in_proj_qkvz.weight"));
		assert_true(fx_skipped(&g, "mtp.fc.weight"));
		for (uint32_t r = 0; r < T * lays[k][1]; r++)
			q3m_rank_is(&f, &g, r, T);
		int64_t kvl = 2 >= T ? 2 / T : 1; /* kv heads a rank (replicated past 2) */
		shp(&f, 0, R0 "self_attn.qkv_proj.weight", 2, (2 * (4 / T) + 2 * kvl) * 32, HID, 0);
		/* experts cut by tp, or whole on their ep rank */
		shp(&f, 0, R0 "mlp.experts.w13_weight", 3, 4 / lays[k][1],
		    lays[k][1] > 1 ? 128 : 128 / T, HID);
		fx_close(&f);
		fx_close(&g);
	}
}

/* Two MTP layers (num_nextn_predict_layers 2), layer 1 in mlp_only_layers: its dense MLP by
 * hand (gate / up rows, down columns) beside layer 0's MoE block; TP 2. tie_word_embeddings true
 * still serves lm_head, untied (the draft's own head). */
static void test_q3m_two_layers(void **state)
{
	(void)state;
	char cfg[1400];
	fx f;
	fx_open(
	    &f, tm_q3m(true),
	    q3m_cfg(cfg, sizeof(cfg), "2", ",\"mlp_only_layers\":[1],\"tie_word_embeddings\":true"),
	    2, 1, 0, true);
	assert_false(shardmap_tied_lm_head(f.p));
	for (uint32_t r = 0; r < 2; r++) {
		mtp_vocab_at(&f, r, 2, &D, "lm_head.weight", "lm_head.weight");
		shp(&f, r, "model.layers.1.mlp.gate_up_proj.weight", 2, 192, HID, 0);
		fx_gate_up_is(&f, r, 2, "model.layers.1.mlp.gate_up_proj.weight",
		              "mtp.layers.1.mlp.gate_proj.weight",
		              "mtp.layers.1.mlp.up_proj.weight", 192);
		cols_of(&f, r, 2, "model.layers.1.mlp.down_proj.weight",
		        "mtp.layers.1.mlp.down_proj.weight", HID, 192);
		assert_true(tm_ix(f.p, r, "model.layers.1.mlp.experts.w13_weight") < 0);
		shp(&f, r, R0 "mlp.experts.w13_weight", 3, 4, 64, HID);
		repl_from(&f, r, "model.layers.1.self_attn.q_norm.weight",
		          "mtp.layers.1.self_attn.q_norm.weight");
	}
	fx_close(&f);
}

static const char *const q3m_keep[] = {EMB,
                                       "lm_head.weight",
                                       "model.norm.weight",
                                       "model.pre_fc_norm_hidden.weight",
                                       R0 "self_attn.q_norm.weight",
                                       R0 "mlp.gate.weight",
                                       R0 "mlp.shared_expert_gate.weight"};
static const char *const q3m_quant[] = {FC, R0 "self_attn.qkv_proj.weight",
                                        R0 "self_attn.o_proj.weight", R0 "mlp.experts.w13_weight",
                                        R0 "mlp.shared_expert.gate_up_proj.weight"};

/* int8-channel TP 2: fc quantized as the Linear vLLM builds with the quant_config (codes of the
 * rank's own rows), the decoder layer's Linears as qwen3_next's; the embedding, lm_head, the
 * norms, the router and shared_expert_gate unquantized. */
static void test_q3m_quant(void **state)
{
	(void)state;
	char cfg[1400];
	fx f;
	fx_open_quant(&f, tm_q3m(false), q3m_cfg(cfg, sizeof(cfg), "1", ""), 2,
	              WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(q3m_keep), FX_N(q3m_quant));
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, FC);
	const float *sc = (const float *)out_bytes(&f, 1, FC "_scale");
	size_t rowb;
	const uint16_t *src = (const uint16_t *)src_rows(&f, "mtp.fc.weight", 64, &rowb);
	for (int64_t row = 0; row < 64; row++)
		int8_row_is(q + row * 2 * HID, sc[row], src + row * 2 * HID, 2 * HID);
	fx_close(&f);
}

static void test_q3m_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 4}, {2, 2}, {4, 2}};
	char cfg[1400];
	coverage(tm_q3m(true), q3m_cfg(cfg, sizeof(cfg), "2", ",\"mlp_only_layers\":[1]"), 2, lays,
	         6);
}

/* num_nextn_predict_layers 0; no MTP layer; fc, a norm, q_norm, the embedding, lm_head missing;
 * fc's shape; a layer past num_nextn_predict_layers; tp_size past the heads. */
static void test_q3m_refusals(void **state)
{
	(void)state;
	char cfg[1400];
	fx_refused(tm_q3m(false), q3m_cfg(cfg, sizeof(cfg), "0", ""), WT_ECORRUPT,
	           "num_nextn_predict_layers", ">= 1");
	fx_refused(tm_q3m(false), q3m_cfg(cfg, sizeof(cfg), "\"1\"", ""), WT_ECORRUPT,
	           "num_nextn_predict_layers", "integer");
	const char *c1 = q3m_cfg(cfg, sizeof(cfg), "1", "");
	tm_model *m = tm_q3m(false);
	mtp_remove_prefix(m, M0);
	fx_refused(m, c1, WT_ENOTFOUND, "mtp.layers.0.*", "no MTP layer");
	static const char *const need[] = {"mtp.fc.weight",
	                                   "mtp.pre_fc_norm_embedding.weight",
	                                   M0 "self_attn.q_norm.weight",
	                                   M0 "mlp.shared_expert.up_proj.weight",
	                                   EMB,
	                                   "lm_head.weight"};
	for (size_t k = 0; k < TM_NLEAVES(need); k++) {
		m = tm_q3m(false);
		tm_remove(m, need[k]);
		fx_refused(m, c1, WT_ENOTFOUND, need[k], "missing");
	}
	m = tm_q3m(false);
	tm_remove(m, "mtp.fc.weight");
	tm_add2(m, "mtp.fc.weight", HID, HID);
	fx_refused(m, c1, WT_ESHAPE, "mtp.fc.weight", "256");
	fx_refused(tm_q3m(true), c1, WT_ESHAPE, "mtp.layers.1.", "num_nextn_predict_layers");
	fx_refused_tp(tm_q3m(false), c1, 8, WT_ELAYOUT, "tp_size 8", "4");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_q3m_slices),   cmocka_unit_test(test_q3m_two_layers),
	    cmocka_unit_test(test_q3m_quant),    cmocka_unit_test(test_q3m_coverage),
	    cmocka_unit_test(test_q3m_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
