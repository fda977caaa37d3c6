/*
 * test_shardmap_pangu_moe.c — openPangu-Ultra-MoE (PanguUltraMoEForCausalLM, model_type
 * pangu_ultra_moe) cut as vLLM's openpangu.py loads it: DeepSeek-V3's MLA and MoE tensors as
 * DeepSeek-V3's (the same bytes on every rank as the V3 model's, at TP and TP x EP), without V3's
 * e_score_correction_bias, with the sandwich norms pre_mlp_layernorm / post_mlp_layernorm
 * replicated exactly when sandwich_norm is true, the MTP layer dropped. Hand-computed slices at
 * TP 2 / 4, int8-channel TP 2 and fp8-channel TP 4, coverage over TP 1..8 and EP, the class
 * defaults and every refusal. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0a9eull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* tm_deepseek's sizes: hid 256, H 8, q_lora_rank 128, kv_lora_rank 64, qk 32 + 32, v 32
 * (q_b_proj / kv_b_proj 512 rows, o_proj [256, 256]), layer 0 dense (I 512), layer 1 MoE (4
 * experts of Ie 256, one shared expert), layer 2 the MTP layer. */
#define HID  256
#define IE   256
#define L1   "model.layers.1."
#define ATT  L1 "self_attn."
#define QB   ATT "q_b_proj.weight"
#define KVB  ATT "kv_b_proj.weight"
#define OPJ  ATT "o_proj.weight"
#define GATE L1 "mlp.gate.weight"
#define PRE  L1 "pre_mlp_layernorm.weight"
#define POST L1 "post_mlp_layernorm.weight"
#define W13  L1 "mlp.experts.w13_weight"
#define W2   L1 "mlp.experts.w2_weight"
#define EMB  "model.embed_tokens.weight"
#define OUT  "lm_head.weight"

/* The release's keys (DeepSeek-V3's names, as vLLM reads them), one "key":value each. */
static const char *const pgm_keys[] = {
    "\"hidden_size\":256",           "\"num_attention_heads\":8", "\"num_key_value_heads\":8",
    "\"vocab_size\":1000",           "\"num_hidden_layers\":2",   "\"intermediate_size\":512",
    "\"hidden_act\":\"silu\"",       "\"q_lora_rank\":128",       "\"kv_lora_rank\":64",
    "\"qk_nope_head_dim\":32",       "\"qk_rope_head_dim\":32",   "\"v_head_dim\":32",
    "\"moe_intermediate_size\":256", "\"n_routed_experts\":4",    "\"n_shared_experts\":1",
    "\"first_k_dense_replace\":1",   "\"num_experts_per_tok\":2", "\"routed_scaling_factor\":2.5",
    "\"norm_topk_prob\":true",       "\"sandwich_norm\":true",    "\"num_nextn_predict_layers\":1",
};
#define NKEYS (sizeof(pgm_keys) / sizeof(pgm_keys[0]))

/* The config with every key of pgm_keys but those starting with `skip` (NULL: none), then
 * extra (",..." or ""). */
static const char *pgm_cfg(char *out, size_t cap, const char *skip, const char *extra)
{
	int n = snprintf(out, cap,
	                 "{\"architectures\":[\"PanguUltraMoEForCausalLM\"],"
	                 "\"model_type\":\"pangu_ultra_moe\"");
	for (size_t k = 0; k < NKEYS; k++)
		if (skip == NULL || strncmp(pgm_keys[k], skip, strlen(skip)) != 0)
			n += snprintf(out + n, cap - (size_t)n, ",%s", pgm_keys[k]);
	snprintf(out + n, cap - (size_t)n, "%s}", extra);
	return out;
}

/* tm_deepseek's V3 model (its config in v3) without e_score_correction_bias, with the sandwich
 * norms on layers 0..2 when sandwich. */
static tm_model *tm_pgm(bool sandwich, char *v3, size_t cap)
{
	tm_model *m = tm_deepseek(SEED, 0, v3, cap);
	for (size_t k = m->n; k-- > 0;)
		if (strstr(m->name[k], "e_score_correction_bias") != NULL)
			tm_remove(m, m->name[k]);
	for (int i = 0; sandwich && i < 3; i++) {
		char b[200];
		tm_fmt(b, sizeof(b), TM_L, i, "pre_mlp_layernorm.weight");
		tm_add2(m, b, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_mlp_layernorm.weight");
		tm_add2(m, b, HID, 0);
	}
	return m;
}

static tm_model *tm_pgm_only(bool sandwich)
{
	char v3[1024];
	return tm_pgm(sandwich, v3, sizeof(v3));
}

static const fx_experts XP = {
    W13, W2, L1 "mlp.experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, IE};

/* Rank r of T (no EP) by hand: q_a_proj / kv_a_proj_with_mqa and their norms whole, q_b_proj /
 * kv_b_proj rows [r 512/T, +512/T) (the rank's heads), o_proj columns by heads, layer 0's
 * dense MLP by its intermediate, the router whole, every expert's rows / columns [r Ie/T,
 * +Ie/T), the shared expert's 256 rows by T, the four layer norms whole. */
static void rank_is(const fx *f, uint32_t r, uint32_t T)
{
	repl(f, r, ATT "q_a_proj.weight");
	repl(f, r, ATT "q_a_layernorm.weight");
	repl(f, r, ATT "kv_a_proj_with_mqa.weight");
	repl(f, r, ATT "kv_a_layernorm.weight");
	shp(f, r, QB, 2, 512 / T, 128, 0);
	rows_at(f, r, QB, 0, QB, r * (512 / T), 512 / T);
	shp(f, r, KVB, 2, 512 / T, 64, 0);
	rows_at(f, r, KVB, 0, KVB, r * (512 / T), 512 / T);
	cols_of(f, r, T, OPJ, OPJ, HID, 256);
	fx_mlp_is(f, r, T, "model.layers.0.mlp.", 512, HID);
	repl(f, r, GATE);
	fx_experts_are(f, &XP, r, 0, 4, r * IE / T, IE / T, false);
	fx_mlp_is(f, r, T, L1 "mlp.shared_experts.", IE, HID);
	repl(f, r, L1 "input_layernorm.weight");
	repl(f, r, L1 "post_attention_layernorm.weight");
	repl(f, r, PRE);
	repl(f, r, POST);
	repl(f, r, "model.layers.0.pre_mlp_layernorm.weight");
	fx_vocab_is(f, r, T, EMB, 1000, 1024, HID);
	fx_vocab_is(f, r, T, OUT, 1000, 1024, HID);
}

/* Rank r of a (openPangu) holds every tensor of rank r of b (DeepSeek-V3) but V3's
 * e_score_correction_bias, byte for byte, and the four sandwich norms of layers 0 / 1. */
static void v3_rows_same(const fx *a, const fx *b, uint32_t r)
{
	size_t nb = shardmap_rank_n_tensors(b->p, r), same = 0;
	for (size_t i = 0; i < nb; i++) {
		const sm_out_info *u = shardmap_rank_tensor(b->p, r, i);
		if (strstr(u->name, "e_score_correction_bias") != NULL) {
			assert_true(tm_ix(a->p, r, u->name) < 0);
			continue;
		}
		const sm_out_info *t = info(a, r, u->name);
		assert_int_equal(t->nbytes, u->nbytes);
		assert_int_equal(t->dtype, u->dtype);
		if (memcmp(out_bytes(a, r, u->name), b->pr->b[r][i], u->nbytes) != 0)
			fail_msg("rank %u '%s' differs from DeepSeek-V3's", r, u->name);
		same++;
	}
	assert_int_equal(shardmap_rank_n_tensors(a->p, r), same + 4);
}

/* TP 2, TP 4 and TP 2 x EP 2: V3's rows as V3's, the sandwich norms whole; by hand at TP 2 / 4;
 * the MTP layer (layer 2) dropped, its sandwich norms with it. */
static void test_pgm_slices(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{2, 1}, {4, 1}, {2, 2}};
	for (size_t k = 0; k < 3; k++) {
		char cfg[2048], v3[1024];
		fx f, g;
		fx_open(&f, tm_pgm_only(true), pgm_cfg(cfg, sizeof(cfg), NULL, ""), lays[k][0],
		        lays[k][1], 0, true);
		assert_string_equal(shardmap_family(f.p), "pangu_ultra_moe");
		fx_open(&g, tm_deepseek(SEED, 0, v3, sizeof(v3)), v3, lays[k][0], lays[k][1], 0,
		        true);
		for (uint32_t r = 0; r < lays[k][0] * lays[k][1]; r++) {
			v3_rows_same(&f, &g, r);
			repl(&f, r, PRE);
			repl(&f, r, POST);
			if (lays[k][1] == 1)
				rank_is(&f, r, lays[k][0]);
		}
		if (lays[k][1] == 2) /* whole experts per EP rank: rank 3 holds experts 2, 3 */
			fx_experts_are(&f, &XP, 3, 2, 2, 0, IE, false);
		assert_true(fx_skipped(&f, "model.layers.2.pre_mlp_layernorm.weight"));
		assert_true(fx_skipped(&f, "model.layers.2.self_attn.q_b_proj.weight"));
		fx_close(&f);
		fx_close(&g);
	}
}

static const char *const pgm_keep[] = {
    GATE, PRE, POST, ATT "q_a_layernorm.weight", ATT "kv_a_layernorm.weight", EMB, OUT};
static const char *const pgm_quant[] = {ATT "q_a_proj.weight",
                                        QB,
                                        ATT "kv_a_proj_with_mqa.weight",
                                        KVB,
                                        OPJ,
                                        W13,
                                        W2,
                                        L1 "mlp.shared_experts.gate_up_proj.weight",
                                        "model.layers.0.mlp.down_proj.weight"};

/* int8-channel TP 2: every Linear's codes per row with their scales (q_b_proj's rank rows,
 * o_proj's rank columns checked code by code), the router, the norms, embedding and head
 * BF16 without a scale; fp8-channel TP 4 the same split. */
static void test_pgm_quant(void **state)
{
	(void)state;
	char cfg[2048];
	fx f;
	fx_open_quant(&f, tm_pgm_only(true), pgm_cfg(cfg, sizeof(cfg), NULL, ""), 2,
	              WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(pgm_keep), FX_N(pgm_quant));
	for (uint32_t r = 0; r < 2; r++) {
		fx_rows_int8_is(&f, r, QB, 0, QB, r * 256, 256, 128);
		fx_cols_int8_is(&f, r, 2, OPJ, HID, 256);
		repl(&f, r, PRE);
	}
	fx_close(&f);
	fx_open_quant(&f, tm_pgm_only(true), pgm_cfg(cfg, sizeof(cfg), NULL, ""), 4,
	              WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(pgm_keep), FX_N(pgm_quant));
	shp(&f, 3, QB, 2, 128, 128, 0);
	shp(&f, 3, W13, 3, 4, 2 * IE / 4, HID);
	fx_close(&f);
}

static void test_pgm_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 2}, {1, 4}};
	char cfg[2048];
	coverage(tm_pgm_only(true), pgm_cfg(cfg, sizeof(cfg), NULL, ""), 8, lays, 7);
	coverage(tm_pgm_only(false), pgm_cfg(cfg, sizeof(cfg), "\"sandwich_norm", ""), 8, lays, 7);
}

/* sandwich_norm false or absent: no sandwich norm (one present is unknown, naming the key);
 * true: each required. Untied by default (lm_head needed); tied: lm_head dropped. The class
 * defaults (vLLM's getattr ones): max_position_embeddings 8192, rope_theta 10000. */
static void test_pgm_defaults(void **state)
{
	(void)state;
	char cfg[2048];
	fx f;
	fx_open(&f, tm_pgm_only(false), pgm_cfg(cfg, sizeof(cfg), "\"sandwich_norm", ""), 2, 1, 0,
	        true);
	assert_true(tm_ix(f.p, 0, PRE) < 0 && tm_ix(f.p, 0, OUT) >= 0);
	fx_close(&f);
	fx_refused(tm_pgm_only(true), pgm_cfg(cfg, sizeof(cfg), "\"sandwich_norm", ""),
	           WT_EUNSUPPORTED, "_mlp_layernorm", "sandwich_norm");
	fx_refused(tm_pgm_only(true),
	           pgm_cfg(cfg, sizeof(cfg), "\"sandwich_norm", ",\"sandwich_norm\":false"),
	           WT_EUNSUPPORTED, "_mlp_layernorm", "sandwich_norm");
	tm_model *m = tm_pgm_only(true);
	tm_remove(m, POST);
	fx_refused(m, pgm_cfg(cfg, sizeof(cfg), NULL, ""), WT_ENOTFOUND, POST, "sandwich_norm");
	m = tm_pgm_only(true);
	tm_remove(m, OUT);
	fx_refused(m, pgm_cfg(cfg, sizeof(cfg), NULL, ""), WT_ENOTFOUND, OUT, "missing");
	m = tm_pgm_only(true);
	tm_remove(m, OUT);
	fx_open(&f, m, pgm_cfg(cfg, sizeof(cfg), NULL, ",\"tie_word_embeddings\":true"), 2, 1, 0,
	        true);
	assert_true(tm_ix(f.p, 1, OUT) < 0);
	fx_close(&f);
	ckpt_field fl[] = {{.key = "max_position_embeddings", .kind = CKPT_FIELD_INT},
	                   {.key = "rope_theta", .kind = CKPT_FIELD_REAL}};
	wt_errbuf err = {0};
	pgm_cfg(cfg, sizeof(cfg), NULL, "");
	assert_int_equal(ckpt_config_fields(cfg, strlen(cfg), fl, 2, &err), WT_OK);
	assert_true(fl[0].present && fl[0].i == 8192);
	assert_true(fl[1].present && fl[1].r == 10000.0);
	pgm_cfg(cfg, sizeof(cfg), NULL,
	        ",\"rope_theta\":25600000,\"max_position_embeddings\":131072");
	assert_int_equal(ckpt_config_fields(cfg, strlen(cfg), fl, 2, &err), WT_OK);
	assert_true(fl[0].i == 131072 && fl[1].r == 25600000.0);
}

/* Each config refusal names its key: the remote spellings without vLLM's names (the rename),
 * the keys vLLM reads without a default, n_shared_experts 0, the variants of openpangu.py, a
 * hidden_act other than silu, no MoE layer. */
static void test_pgm_config_refusals(void **state)
{
	(void)state;
	static const struct {
		const char *skip, *extra, *a, *b;
		int code;
	} bad[] = {
	    {"\"q_lora_rank", ",\"attention_q_lora_dim\":128", "attention_q_lora_dim",
	     "q_lora_rank", WT_EUNSUPPORTED},
	    {"\"kv_lora_rank", ",\"attention_kv_lora_dim\":64", "attention_kv_lora_dim", "rename",
	     WT_EUNSUPPORTED},
	    {"\"qk_nope_head_dim", ",\"attention_qk_dim\":32", "attention_qk_dim",
	     "qk_nope_head_dim", WT_EUNSUPPORTED},
	    {"\"qk_rope_head_dim", ",\"attention_qk_rope_dim\":32", "attention_qk_rope_dim",
	     "qk_rope_head_dim", WT_EUNSUPPORTED},
	    {"\"v_head_dim", ",\"attention_v_dim\":32", "attention_v_dim", "v_head_dim",
	     WT_EUNSUPPORTED},
	    {"\"n_routed_experts", ",\"num_routed_experts\":4", "num_routed_experts",
	     "n_routed_experts", WT_EUNSUPPORTED},
	    {"\"n_shared_experts", ",\"num_shared_experts\":1", "num_shared_experts",
	     "n_shared_experts", WT_EUNSUPPORTED},
	    {"\"first_k_dense_replace", ",\"num_dense_layers\":1", "num_dense_layers",
	     "first_k_dense_replace", WT_EUNSUPPORTED},
	    {"\"kv_lora_rank", "", "kv_lora_rank is missing", "give", WT_ECORRUPT},
	    {"\"qk_nope_head_dim", "", "qk_nope_head_dim is missing", "give", WT_ECORRUPT},
	    {"\"qk_rope_head_dim", "", "qk_rope_head_dim is missing", "give", WT_ECORRUPT},
	    {"\"v_head_dim", "", "v_head_dim is missing", "give", WT_ECORRUPT},
	    {"\"n_routed_experts", "", "n_routed_experts is missing", "give", WT_ECORRUPT},
	    {"\"first_k_dense_replace", "", "first_k_dense_replace is missing", "give",
	     WT_ECORRUPT},
	    {"\"moe_intermediate_size", "", "moe_intermediate_size is missing", "give",
	     WT_ECORRUPT},
	    {"\"num_experts_per_tok", "", "num_experts_per_tok is missing", "give", WT_ECORRUPT},
	    {"\"routed_scaling_factor", "", "routed_scaling_factor is missing", "give",
	     WT_ECORRUPT},
	    {"\"norm_topk_prob", "", "norm_topk_prob is missing", "give", WT_ECORRUPT},
	    {"\"n_shared_experts", "", "n_shared_experts is missing", "null", WT_ECORRUPT},
	    {"\"n_shared_experts", ",\"n_shared_experts\":0", "n_shared_experts is not null",
	     "null", WT_ECORRUPT},
	    {"\"hidden_act", ",\"hidden_act\":\"gelu\"", "hidden_act", "silu", WT_EUNSUPPORTED},
	    {NULL, ",\"param_sink_number\":128", "param_sink_number", "remove the key",
	     WT_EUNSUPPORTED},
	    {NULL, ",\"use_mhc\":true", "use_mhc", "remove the key", WT_EUNSUPPORTED},
	    {NULL, ",\"use_mome\":true", "use_mome", "remove the key", WT_EUNSUPPORTED},
	    {NULL, ",\"index_topk\":2048", "index_topk", "remove the key", WT_EUNSUPPORTED},
	    {NULL, ",\"sliding_window\":4096", "sliding_window", "remove the key", WT_EUNSUPPORTED},
	    {NULL, ",\"sliding_window_list\":[4096]", "sliding_window_list", "remove the key",
	     WT_EUNSUPPORTED},
	    {NULL, ",\"block_post_layernorm_idx\":[1]", "block_post_layernorm_idx",
	     "remove the key", WT_EUNSUPPORTED},
	    {NULL, ",\"router_enable_expert_bias\":true", "router_enable_expert_bias",
	     "e_score_correction_bias", WT_EUNSUPPORTED},
	    {"\"first_k_dense_replace", ",\"first_k_dense_replace\":2", "first_k_dense_replace 2",
	     "No MOE layer", WT_ECORRUPT},
	    {"\"n_routed_experts", ",\"n_routed_experts\":0", "n_routed_experts", "0", WT_ECORRUPT},
	};
	char cfg[2048];
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		fx_refused(tm_pgm_only(true), pgm_cfg(cfg, sizeof(cfg), bad[k].skip, bad[k].extra),
		           bad[k].code, bad[k].a, bad[k].b);
	/* the inert forms: param_sink_number 0, use_mhc / use_mome / router_enable_expert_bias
	 * false, block_post_layernorm_idx empty, a remote spelling beside vLLM's name */
	fx f;
	fx_open(&f, tm_pgm_only(true),
	        pgm_cfg(cfg, sizeof(cfg), NULL,
	                ",\"param_sink_number\":0,\"use_mhc\":false,\"use_mome\":false,"
	                "\"router_enable_expert_bias\":false,\"block_post_layernorm_idx\":[],"
	                "\"attention_qk_dim\":99,\"num_mtp_layers\":1"),
	        2, 1, 0, false);
	assert_string_equal(shardmap_family(f.p), "pangu_ultra_moe");
	fx_close(&f);
}

/* q_lora_rank null: q_proj rows by heads (no q_a_proj / q_a_layernorm / q_b_proj); V3's
 * e_score_correction_bias is unknown here; a missing expert names itself. */
static void test_pgm_tensors(void **state)
{
	(void)state;
	char cfg[2048];
	tm_model *m = tm_pgm_only(true);
	for (int i = 0; i < 3; i++) {
		char b[200];
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.q_a_proj.weight");
		tm_remove(m, b);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.q_a_layernorm.weight");
		tm_remove(m, b);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.q_b_proj.weight");
		tm_remove(m, b);
		tm_lin_l(m, i, "self_attn.q_proj.weight", 512, HID, 0);
	}
	fx f;
	fx_open(&f, m, pgm_cfg(cfg, sizeof(cfg), "\"q_lora_rank", ",\"q_lora_rank\":null"), 2, 1, 0,
	        true);
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, ATT "q_proj.weight", 2, 256, HID, 0);
		rows_at(&f, r, ATT "q_proj.weight", 0, ATT "q_proj.weight", r * 256, 256);
	}
	fx_close(&f);
	char v3[1024];
	fx_refused(tm_deepseek(SEED, 0, v3, sizeof(v3)),
	           pgm_cfg(cfg, sizeof(cfg), "\"sandwich", ""), WT_EUNSUPPORTED,
	           "e_score_correction_bias", "unknown");
	m = tm_pgm_only(true);
	tm_remove(m, L1 "mlp.experts.3.down_proj.weight");
	fx_refused(m, pgm_cfg(cfg, sizeof(cfg), NULL, ""), WT_ENOTFOUND, "experts.3.down_proj",
	           "missing");
}

int main(void)
{
	printf("seed 0x%llx\n", (unsigned long long)SEED);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pgm_slices),          cmocka_unit_test(test_pgm_quant),
	    cmocka_unit_test(test_pgm_coverage),        cmocka_unit_test(test_pgm_defaults),
	    cmocka_unit_test(test_pgm_config_refusals), cmocka_unit_test(test_pgm_tensors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
