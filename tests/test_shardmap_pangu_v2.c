/*
 * test_shardmap_pangu_v2.c — openPangu-Pro-MoE-V2 (PanguProMoEV2ForCausalLM, model_type
 * PanguProMoEV2) cut as vLLM's openpangu.py loads it: the sink attention's q / k / v fused by
 * heads into qkv_proj with v heads of v_channels rows (head_dim qk_nope_dim + qk_rope_dim, which
 * differs from hidden_size / heads here), o_proj by columns of H x v_channels, k_layernorm whole,
 * param_sink_key / param_sink_value by kv heads on dim 1; the MoE as DeepSeek-V3's with the
 * router's mlp.e_score_correction_bias (router_enable_expert_bias) whole under its runtime name
 * mlp.gate.e_score_correction_bias, the sandwich norms, the MTP layer dropped. Hand-computed
 * slices at TP 2 / 4 and TP 2 x EP 2, int8-channel TP 2 and fp8-channel TP 4, coverage, kv
 * heads fewer than tp_size refused, the class defaults and every refusal. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0b2eull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 256, H 8, KV 4, d 40 (qk_nope_dim 24 + qk_rope_dim 16; hid / H is 32), v_channels 24,
 * 4 sinks; layer 0 dense (I 512), layer 1 MoE (4 experts of Ie 256, one shared expert),
 * layer 2 the MTP layer. */
#define HID  256
#define IE   256
#define HD   40
#define VC   24
#define KVH  4
#define NS   4
#define L1   "model.layers.1."
#define ATT  L1 "self_attn."
#define QKV  ATT "qkv_proj.weight"
#define QKVB ATT "qkv_proj.bias"
#define OPJ  ATT "o_proj.weight"
#define KLN  ATT "k_layernorm.weight"
#define SK   ATT "param_sink_key"
#define SV   ATT "param_sink_value"
#define GATE L1 "mlp.gate.weight"
#define EB   L1 "mlp.e_score_correction_bias"
#define EBR  L1 "mlp.gate.e_score_correction_bias"
#define PRE  L1 "pre_mlp_layernorm.weight"
#define POST L1 "post_mlp_layernorm.weight"
#define W13  L1 "mlp.experts.w13_weight"
#define W2   L1 "mlp.experts.w2_weight"
#define EMB  "model.embed_tokens.weight"
#define OUT  "lm_head.weight"

static const char *const pv2_keys[] = {
    "\"hidden_size\":256",
    "\"num_attention_heads\":8",
    "\"num_key_value_heads\":4",
    "\"vocab_size\":1000",
    "\"num_hidden_layers\":2",
    "\"intermediate_size\":512",
    "\"hidden_act\":\"silu\"",
    "\"qk_nope_dim\":24",
    "\"qk_rope_dim\":16",
    "\"v_channels\":24",
    "\"param_sink_number\":4",
    "\"n_routed_experts\":4",
    "\"moe_intermediate_size\":256",
    "\"n_shared_experts\":1",
    "\"first_k_dense_replace\":1",
    "\"num_experts_per_tok\":2",
    "\"routed_scaling_factor\":2.5",
    "\"norm_topk_prob\":true",
    "\"num_nextn_predict_layers\":1",
};
#define NKEYS (sizeof(pv2_keys) / sizeof(pv2_keys[0]))

enum { PV_SANDWICH = 1, PV_RBIAS = 2, PV_BIAS = 4, PV_ALL = PV_SANDWICH | PV_RBIAS };

/* The config with every key of pv2_keys but those starting with `skip` (NULL: none),
 * sandwich_norm / router_enable_expert_bias true as sw asks, then extra (",..." or ""). */
static const char *pv2_cfg(char *out, size_t cap, int sw, const char *skip, const char *extra)
{
	int n = snprintf(out, cap,
	                 "{\"architectures\":[\"PanguProMoEV2ForCausalLM\"],"
	                 "\"model_type\":\"PanguProMoEV2\"");
	for (size_t k = 0; k < NKEYS; k++)
		if (skip == NULL || strncmp(pv2_keys[k], skip, strlen(skip)) != 0)
			n += snprintf(out + n, cap - (size_t)n, ",%s", pv2_keys[k]);
	snprintf(out + n, cap - (size_t)n, "%s%s%s}",
	         (sw & PV_SANDWICH) ? ",\"sandwich_norm\":true" : "",
	         (sw & PV_RBIAS) ? ",\"router_enable_expert_bias\":true" : "", extra);
	return out;
}

static void pv2_attn(tm_model *m, int i, int opts)
{
	char b[200];
	tm_lin_l(m, i, "self_attn.q_proj.weight", 8 * HD, HID, 0);
	tm_lin_l(m, i, "self_attn.k_proj.weight", KVH * HD, HID, 0);
	tm_lin_l(m, i, "self_attn.v_proj.weight", KVH * VC, HID, 0);
	tm_lin_l(m, i, "self_attn.o_proj.weight", HID, 8 * VC, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "self_attn.k_layernorm.weight");
	tm_add2(m, b, HD, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "self_attn.param_sink_key");
	tm_add(m, b, WT_DTYPE_INVALID, 3, NS, KVH, HD);
	tm_fmt(b, sizeof(b), TM_L, i, "self_attn.param_sink_value");
	tm_add(m, b, WT_DTYPE_INVALID, 3, NS, KVH, VC);
	static const struct {
		const char *leaf;
		int64_t n;
	} biases[] = {{"self_attn.q_proj.bias", 8 * HD},
	              {"self_attn.k_proj.bias", KVH * HD},
	              {"self_attn.v_proj.bias", KVH * VC},
	              {"self_attn.o_proj.bias", HID}};
	for (size_t k = 0; (opts & PV_BIAS) && k < 4; k++) {
		tm_fmt(b, sizeof(b), TM_L, i, biases[k].leaf);
		tm_add2(m, b, biases[k].n, 0);
	}
}

/* The model: layers 0 (dense), 1 (MoE) and 2 (MTP), with the sandwich norms, the router bias
 * and the attention biases as opts asks. */
static tm_model *tm_pv2(int opts)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	char b[200];
	for (int i = 0; i < 3; i++) {
		static const char *const norms[] = {
		    "input_layernorm.weight", "post_attention_layernorm.weight",
		    "pre_mlp_layernorm.weight", "post_mlp_layernorm.weight"};
		for (int k = 0; k < ((opts & PV_SANDWICH) ? 4 : 2); k++) {
			tm_fmt(b, sizeof(b), TM_L, i, norms[k]);
			tm_add2(m, b, HID, 0);
		}
		pv2_attn(m, i, opts);
		if (i == 0) {
			tm_mlp(m, 0, "mlp.", 512, HID);
			continue;
		}
		tm_lin_l(m, i, "mlp.gate.weight", 4, HID, 0);
		if (opts & PV_RBIAS) {
			tm_fmt(b, sizeof(b), TM_L, i, "mlp.e_score_correction_bias");
			tm_add(m, b, WT_F32, 1, 4, 0, 0);
		}
		tm_experts(m, i, "mlp.experts.", 4, IE, HID, "gate_proj", "up_proj", "down_proj");
		tm_mlp(m, i, "mlp.shared_experts.", IE, HID);
	}
	return m;
}

static const fx_experts XP = {
    W13, W2, L1 "mlp.experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, IE};

/* Rank r of T's [q_r; k_r; v_r] in rt from the q / k / v sources sq, sk, sv (weights, or biases
 * with one element a row): q rows [r 8d/T, +8d/T), the rank's kv heads of k (d rows each) and
 * of v (v_channels rows each). */
static void qkv_is(const fx *f, uint32_t r, uint32_t T, const char *rt, const char *sq,
                   const char *sk, const char *sv)
{
	int64_t hl = 8 / T, kvl = KVH / T, t = r % T; /* t: the tp rank */
	rows_at(f, r, rt, 0, sq, t * hl * HD, hl * HD);
	rows_at(f, r, rt, hl * HD, sk, t * kvl * HD, kvl * HD);
	rows_at(f, r, rt, hl * HD + kvl * HD, sv, t * kvl * VC, kvl * VC);
}

/* Rank r of T's sinks of the rank's kv heads: [NS, KV/T, dim], sink s's kv heads
 * [r KV/T, +KV/T) (one row of the [NS*KV, dim] view each). */
static void sinks_are(const fx *f, uint32_t r, uint32_t T, const char *t, int64_t dim)
{
	int64_t kvl = KVH / T, tr = r % T; /* tr: the tp rank */
	shp(f, r, t, 3, NS, kvl, dim);
	for (int64_t s = 0; s < NS; s++)
		rows_at(f, r, t, s * kvl, t, s * KVH + tr * kvl, kvl);
}

/* Rank r of T (no EP) by hand. */
static void rank_is(const fx *f, uint32_t r, uint32_t T)
{
	shp(f, r, QKV, 2, (8 * HD + KVH * HD + KVH * VC) / T, HID, 0);
	qkv_is(f, r, T, QKV, ATT "q_proj.weight", ATT "k_proj.weight", ATT "v_proj.weight");
	cols_of(f, r, T, OPJ, OPJ, HID, 8 * VC);
	repl(f, r, KLN);
	sinks_are(f, r, T, SK, HD);
	sinks_are(f, r, T, SV, VC);
	fx_mlp_is(f, r, T, "model.layers.0.mlp.", 512, HID);
	repl(f, r, GATE);
	repl_from(f, r, EBR, EB);
	fx_experts_are(f, &XP, r, 0, 4, r * IE / T, IE / T, false);
	fx_mlp_is(f, r, T, L1 "mlp.shared_experts.", IE, HID);
	repl(f, r, L1 "input_layernorm.weight");
	repl(f, r, L1 "post_attention_layernorm.weight");
	repl(f, r, PRE);
	repl(f, r, POST);
	fx_vocab_is(f, r, T, EMB, 1000, 1024, HID);
	fx_vocab_is(f, r, T, OUT, 1000, 1024, HID);
}

/* TP 2 and 4 by hand, TP 2 x EP 2 (whole experts per EP rank, the attention by TP); the MTP
 * layer dropped. */
static void test_pv2_slices(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{2, 1}, {4, 1}, {2, 2}};
	for (size_t k = 0; k < 3; k++) {
		char cfg[2048];
		fx f;
		fx_open(&f, tm_pv2(PV_ALL), pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ""), lays[k][0],
		        lays[k][1], 0, true);
		assert_string_equal(shardmap_family(f.p), "pangu_pro_moe_v2");
		for (uint32_t r = 0; lays[k][1] == 1 && r < lays[k][0]; r++)
			rank_is(&f, r, lays[k][0]);
		if (lays[k][1] == 2) { /* rank 3: tp rank 1, ep rank 1 (experts 2, 3) */
			fx_experts_are(&f, &XP, 3, 2, 2, 0, IE, false);
			sinks_are(&f, 3, 2, SK, HD);
			qkv_is(&f, 3, 2, QKV, ATT "q_proj.weight", ATT "k_proj.weight",
			       ATT "v_proj.weight");
		}
		assert_true(fx_skipped(&f, "model.layers.2.self_attn.param_sink_key"));
		assert_true(fx_skipped(&f, "model.layers.2.mlp.e_score_correction_bias"));
		fx_close(&f);
	}
}

/* The attention biases (attention_bias / bias true): q/k/v's fused by heads as the weights,
 * o_proj's whole; qkv_bias false keeps o_proj's only. */
static void test_pv2_biases(void **state)
{
	(void)state;
	char cfg[2048];
	fx f;
	fx_open(&f, tm_pv2(PV_ALL | PV_BIAS),
	        pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ",\"bias\":true"), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		qkv_is(&f, r, 2, QKVB, ATT "q_proj.bias", ATT "k_proj.bias", ATT "v_proj.bias");
		repl(&f, r, ATT "o_proj.bias");
	}
	fx_close(&f);
	fx_refused(tm_pv2(PV_ALL | PV_BIAS), pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ""),
	           WT_EUNSUPPORTED, "proj.bias", "bias");
	fx_refused(tm_pv2(PV_ALL),
	           pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ",\"attention_bias\":true"),
	           WT_ENOTFOUND, "proj.bias", "missing");
	tm_model *m = tm_pv2(PV_ALL | PV_BIAS);
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < 3; k++) {
			char b[200];
			static const char *const qkv[] = {"self_attn.q_proj.bias",
			                                  "self_attn.k_proj.bias",
			                                  "self_attn.v_proj.bias"};
			tm_fmt(b, sizeof(b), TM_L, i, qkv[k]);
			tm_remove(m, b);
		}
	fx_open(&f, m, pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ",\"bias\":true,\"qkv_bias\":false"),
	        2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, QKVB) < 0);
	repl(&f, 1, ATT "o_proj.bias");
	fx_close(&f);
}

static const char *const pv2_keep[] = {GATE, PRE, POST, KLN, SK, SV, EMB, OUT};
static const char *const pv2_quant[] = {QKV,
                                        OPJ,
                                        W13,
                                        W2,
                                        L1 "mlp.shared_experts.gate_up_proj.weight",
                                        "model.layers.0.mlp.down_proj.weight"};

/* int8-channel TP 2: qkv_proj's v rows and o_proj's columns code by code, the sinks, router,
 * its bias, the norms, embedding and head BF16 / F32 without a scale; fp8-channel TP 4. */
static void test_pv2_quant(void **state)
{
	(void)state;
	char cfg[2048];
	fx f;
	fx_open_quant(&f, tm_pv2(PV_ALL), pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ""), 2,
	              WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(pv2_keep), FX_N(pv2_quant));
	for (uint32_t r = 0; r < 2; r++) {
		fx_rows_int8_is(&f, r, QKV, 4 * HD + 2 * HD, ATT "v_proj.weight", r * 2 * VC,
		                2 * VC, HID);
		fx_cols_int8_is(&f, r, 2, OPJ, HID, 8 * VC);
		sinks_are(&f, r, 2, SV, VC);
		assert_int_equal(info(&f, r, EBR)->dtype, WT_F32); /* the router bias as stored */
		repl_from(&f, r, EBR, EB);
	}
	fx_close(&f);
	fx_open_quant(&f, tm_pv2(PV_ALL), pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ""), 4,
	              WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(pv2_keep), FX_N(pv2_quant));
	shp(&f, 3, QKV, 2, 2 * HD + HD + VC, HID, 0);
	shp(&f, 3, OPJ, 2, HID, 2 * VC, 0);
	sinks_are(&f, 3, 4, SK, HD);
	fx_close(&f);
}

/* Every element once per replica over TP 1/2/4 and EP; TP 8 (above the 4 kv heads) refused as
 * vLLM's OpenPanguSinkAttention refuses it. */
static void test_pv2_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2}, {2, 2}, {1, 4}};
	char cfg[2048];
	coverage(tm_pv2(PV_ALL), pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ""), KVH, lays, 6);
	coverage(tm_pv2(0),
	         pv2_cfg(cfg, sizeof(cfg), 0, NULL, ",\"router_enable_expert_bias\":false"), KVH,
	         lays, 6);
	fx_refused_tp(tm_pv2(PV_ALL), pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ""), 8, WT_ELAYOUT,
	              "num_key_value_heads", "openpangu.py asserts it");
}

/* sandwich_norm / router_enable_expert_bias absent: neither the sandwich norms nor the router
 * bias (one present is unknown naming its switch; missing with the switch: not found). Untied
 * by default; tied drops lm_head. max_position_embeddings 8192 (vLLM's getattr default). */
static void test_pv2_defaults(void **state)
{
	(void)state;
	char cfg[2048];
	fx f;
	fx_open(&f, tm_pv2(0), pv2_cfg(cfg, sizeof(cfg), 0, NULL, ""), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, QKV) >= 0 && tm_ix(f.p, 0, PRE) < 0 && tm_ix(f.p, 0, EBR) < 0);
	assert_true(tm_ix(f.p, 0, OUT) >= 0);
	fx_close(&f);
	fx_refused(tm_pv2(PV_SANDWICH),
	           pv2_cfg(cfg, sizeof(cfg), 0, NULL, ",\"sandwich_norm\":false"), WT_EUNSUPPORTED,
	           "_mlp_layernorm", "sandwich_norm");
	fx_refused(tm_pv2(PV_ALL), pv2_cfg(cfg, sizeof(cfg), PV_SANDWICH, NULL, ""),
	           WT_EUNSUPPORTED, "e_score_correction_bias", "router_enable_expert_bias");
	fx_refused(tm_pv2(PV_SANDWICH), pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ""), WT_ENOTFOUND,
	           "e_score_correction_bias", "router_enable_expert_bias");
	tm_model *m = tm_pv2(PV_ALL);
	tm_remove(m, SK);
	fx_refused(m, pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ""), WT_ENOTFOUND, SK, "missing");
	m = tm_pv2(PV_ALL);
	tm_remove(m, OUT);
	fx_open(&f, m, pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ",\"tie_word_embeddings\":true"), 2,
	        1, 0, true);
	assert_true(tm_ix(f.p, 1, OUT) < 0);
	fx_close(&f);
	ckpt_field fl[] = {{.key = "max_position_embeddings", .kind = CKPT_FIELD_INT},
	                   {.key = "head_dim", .kind = CKPT_FIELD_INT},
	                   {.key = "v_head_dim", .kind = CKPT_FIELD_INT}};
	wt_errbuf err = {0};
	pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ",\"head_dim\":32");
	assert_int_equal(ckpt_config_fields(cfg, strlen(cfg), fl, 3, &err), WT_OK);
	assert_true(fl[0].present && fl[0].i == 8192);
	assert_true(fl[1].present && fl[1].i == HD); /* qk_nope_dim + qk_rope_dim, not 32 */
	assert_true(fl[2].present && fl[2].i == VC);
}

/* Each config refusal names its key. */
static void test_pv2_config_refusals(void **state)
{
	(void)state;
	static const struct {
		const char *skip, *extra, *a, *b;
		int code;
	} bad[] = {
	    {"\"param_sink_number", "", "param_sink_number", "OpenPanguEmbeddedAttention",
	     WT_EUNSUPPORTED},
	    {"\"param_sink_number", ",\"param_sink_number\":0", "param_sink_number", ">= 1",
	     WT_EUNSUPPORTED},
	    {NULL,
	     ",\"qk_nope_head_dim\":24,\"qk_rope_head_dim\":16,\"v_head_dim\":24,"
	     "\"kv_lora_rank\":64",
	     "kv_lora_rank", "MLA", WT_EUNSUPPORTED},
	    {"\"qk_nope_dim", "", "qk_nope_dim is missing", "give", WT_ECORRUPT},
	    {"\"qk_rope_dim", "", "qk_rope_dim is missing", "give", WT_ECORRUPT},
	    {"\"v_channels", "", "v_channels is missing", "give", WT_ECORRUPT},
	    {"\"qk_rope_dim", ",\"qk_rope_dim\":0", "qk_rope_dim", "from 1", WT_ECORRUPT},
	    {"\"v_channels", ",\"v_channels\":2.5", "v_channels", "integer", WT_ECORRUPT},
	    {"\"qk_nope_dim", ",\"qk_nope_dim\":9223372036854775807", "qk_nope_dim", "integer",
	     WT_ECORRUPT},
	    {NULL, ",\"interleaved_sliding_window\":4096", "interleaved_sliding_window",
	     "remove the key", WT_EUNSUPPORTED},
	    {NULL, ",\"use_mhc\":true", "use_mhc", "remove the key", WT_EUNSUPPORTED},
	    {NULL, ",\"block_post_layernorm_idx\":[1]", "block_post_layernorm_idx",
	     "remove the key", WT_EUNSUPPORTED},
	    {NULL, ",\"is_causal\":false", "is_causal", "remove the key", WT_EUNSUPPORTED},
	    {"\"n_routed_experts", "", "n_routed_experts is missing", "PanguProMoEV2ForCausalLM",
	     WT_ECORRUPT},
	    {"\"routed_scaling_factor", "", "routed_scaling_factor is missing", "give",
	     WT_ECORRUPT},
	    {"\"n_shared_experts", ",\"n_shared_experts\":0", "n_shared_experts is not null",
	     "null", WT_ECORRUPT},
	    {"\"hidden_act", ",\"hidden_act\":\"gelu\"", "hidden_act", "silu", WT_EUNSUPPORTED},
	    {"\"first_k_dense_replace", ",\"first_k_dense_replace\":2", "first_k_dense_replace 2",
	     "No MOE layer", WT_ECORRUPT},
	    {"\"n_routed_experts", ",\"n_routed_experts\":0", "n_routed_experts", "0", WT_ECORRUPT},
	};
	char cfg[2048];
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		fx_refused(tm_pv2(PV_ALL),
		           pv2_cfg(cfg, sizeof(cfg), PV_ALL, bad[k].skip, bad[k].extra),
		           bad[k].code, bad[k].a, bad[k].b);
	fx_refused(tm_pv2(PV_ALL),
	           pv2_cfg(cfg, sizeof(cfg), PV_RBIAS, NULL, ",\"sandwich_norm\":1"), WT_ECORRUPT,
	           "sandwich_norm", "");
	fx_refused(tm_pv2(PV_ALL),
	           pv2_cfg(cfg, sizeof(cfg), PV_SANDWICH, NULL, ",\"router_enable_expert_bias\":1"),
	           WT_ECORRUPT, "router_enable_expert_bias", "");
	/* the inert forms: the MLA-only keys (use_mome, sliding_window, index_topk), three of the
	 * four MLA keys, use_mhc false, block_post_layernorm_idx empty, is_causal true */
	fx f;
	fx_open(&f, tm_pv2(PV_ALL),
	        pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL,
	                ",\"use_mome\":true,\"sliding_window\":4096,\"index_topk\":64,"
	                "\"qk_nope_head_dim\":1,\"qk_rope_head_dim\":1,\"kv_lora_rank\":1,"
	                "\"use_mhc\":false,\"block_post_layernorm_idx\":[],\"is_causal\":true"),
	        2, 1, 0, false);
	assert_string_equal(shardmap_family(f.p), "pangu_pro_moe_v2");
	fx_close(&f);
}

/* Shapes against the config: a sink of the wrong kv heads or width, v_proj of head_dim rows. */
static void test_pv2_shapes(void **state)
{
	(void)state;
	char cfg[2048];
	tm_model *m = tm_pv2(PV_ALL);
	tm_remove(m, SV);
	tm_add(m, SV, WT_DTYPE_INVALID, 3, NS, KVH, HD);
	fx_refused(m, pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ""), WT_ESHAPE, "param_sink_value",
	           "");
	m = tm_pv2(PV_ALL);
	tm_remove(m, SK);
	tm_add(m, SK, WT_DTYPE_INVALID, 3, NS, 2, HD);
	fx_refused(m, pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ""), WT_ESHAPE, "param_sink_key", "");
	/* more sink rows than param_sink_number (vLLM's parameter is [param_sink_number, KV, d]):
	 * refused, not cut into that many pieces */
	m = tm_pv2(PV_ALL);
	tm_remove(m, SK);
	tm_add(m, SK, WT_DTYPE_INVALID, 3, NS + 1, KVH, HD);
	fx_refused(m, pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ""), WT_ESHAPE, "param_sink_key", "");
	m = tm_pv2(PV_ALL);
	tm_remove(m, ATT "v_proj.weight");
	tm_lin(m, ATT "v_proj.weight", KVH * HD, HID, 0);
	fx_refused(m, pv2_cfg(cfg, sizeof(cfg), PV_ALL, NULL, ""), WT_ESHAPE, "v_proj", "");
}

int main(void)
{
	printf("seed 0x%llx\n", (unsigned long long)SEED);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pv2_slices),   cmocka_unit_test(test_pv2_biases),
	    cmocka_unit_test(test_pv2_quant),    cmocka_unit_test(test_pv2_coverage),
	    cmocka_unit_test(test_pv2_defaults), cmocka_unit_test(test_pv2_config_refusals),
	    cmocka_unit_test(test_pv2_shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
