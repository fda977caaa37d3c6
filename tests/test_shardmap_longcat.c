/*
 * test_shardmap_longcat.c — LongCat-Flash (LongcatFlashForCausalLM, longcat_flash) cut as
 * vLLM's longcat_flash.py loads it: per layer two DeepSeek-V3 MLA sublayers self_attn.0 / .1
 * (q_a_proj, q_a_layernorm, kv_a_proj_with_mqa, kv_a_layernorm replicated; q_b_proj and
 * kv_b_proj by heads; o_proj by columns), two dense MLPs mlps.0 / .1 into gate_up_proj /
 * down_proj, four norms replicated, the shortcut MoE's router classifier [E + Z, hid] and
 * F32 e_score_correction_bias [E + Z] replicated (Z zero experts without weights), the E
 * routed experts stacked into w13_weight / w2_weight; model.mtp.* dropped. Hand-computed
 * slices at TP 2, TP 4, EP 2 and TP 2 x EP 2 (up_gate), int8 codes, coverage over TP 1..8
 * and EP, LongcatFlashConfig's keys and defaults, the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed1c47
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hidden 128, 8 heads, q_lora 64, kv_lora 32, nope 16, rope 8, v 16, ffn 192, 4 experts of
 * 64 + 2 zero experts, V 1000, 2 layers */
#define HID  128
#define NH   8
#define QLR  64
#define KVLR 32
#define QK   24 /* nope + rope */
#define KVB  32 /* nope + v */
#define VHD  16
#define FFN  192
#define NE   4
#define NZ   2
#define IE   64
#define LC_BASE(ne)                                                                                \
	"\"architectures\":[\"LongcatFlashForCausalLM\"],\"model_type\":\"longcat_flash\","        \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_layers\":2,\"vocab_size\":1000,"      \
	"\"ffn_hidden_size\":192,\"expert_ffn_hidden_size\":64,\"n_routed_experts\":" #ne          \
	",\"moe_topk\":2,\"kv_lora_rank\":32,\"qk_nope_head_dim\":16,\"qk_rope_head_dim\":8,"      \
	"\"v_head_dim\":16"
#define LC_KEYS(ne, nz) LC_BASE(ne) ",\"zero_expert_num\":" #nz ",\"q_lora_rank\":64,\"head_dim\":8"
#define LC_CFG(extra)   "{" LC_KEYS(4, 2) extra "}"
#define L1              "model.layers.1."
#define A1              L1 "self_attn.1."
#define MLP0            L1 "mlps.0."
#define MOE             L1 "mlp."
#define W13             MOE "experts.w13_weight"
#define W2O             MOE "experts.w2_weight"

static void add_l(tm_model *m, int i, const char *leaf, int64_t a, int64_t b)
{
	char n[200];
	tm_fmt(n, sizeof(n), TM_L, i, leaf);
	tm_add2(m, n, a, b);
}

/* LongCat's layers with ne routed experts and a router over ne + nz. */
static tm_model *tm_longcat_e(int64_t ne, int64_t nz)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "model.embed_tokens.weight", 1000, HID);
	tm_add2(m, "model.norm.weight", HID, 0);
	tm_add2(m, "lm_head.weight", 1000, HID);
	tm_add2(m, "model.mtp.norm.weight", HID, 0);
	tm_add2(m, "model.mtp.layers.0.eh_proj.weight", HID, 2 * HID);
	for (int i = 0; i < 2; i++) {
		for (int k = 0; k < 2; k++) {
			char leaf[120];
#define LK(fmt, a, b)                                                                              \
	do {                                                                                       \
		snprintf(leaf, sizeof(leaf), fmt, k);                                              \
		add_l(m, i, leaf, a, b);                                                           \
	} while (0)
			LK("input_layernorm.%d.weight", HID, 0);
			LK("post_attention_layernorm.%d.weight", HID, 0);
			LK("self_attn.%d.q_a_proj.weight", QLR, HID);
			LK("self_attn.%d.q_a_layernorm.weight", QLR, 0);
			LK("self_attn.%d.q_b_proj.weight", NH * QK, QLR);
			LK("self_attn.%d.kv_a_proj_with_mqa.weight", KVLR + 8, HID);
			LK("self_attn.%d.kv_a_layernorm.weight", KVLR, 0);
			LK("self_attn.%d.kv_b_proj.weight", NH * KVB, KVLR);
			LK("self_attn.%d.o_proj.weight", HID, NH * VHD);
			LK("mlps.%d.gate_proj.weight", FFN, HID);
			LK("mlps.%d.up_proj.weight", FFN, HID);
			LK("mlps.%d.down_proj.weight", HID, FFN);
#undef LK
		}
		add_l(m, i, "mlp.router.classifier.weight", ne + nz, HID);
		char n[200];
		tm_fmt(n, sizeof(n), TM_L, i, "mlp.router.e_score_correction_bias");
		tm_add(m, n, WT_F32, 1, ne + nz, 0, 0);
		for (int64_t j = 0; j < ne; j++) {
			char leaf[120];
			snprintf(leaf, sizeof(leaf), "mlp.experts.%lld.gate_proj.weight",
			         (long long)j);
			add_l(m, i, leaf, IE, HID);
			snprintf(leaf, sizeof(leaf), "mlp.experts.%lld.up_proj.weight",
			         (long long)j);
			add_l(m, i, leaf, IE, HID);
			snprintf(leaf, sizeof(leaf), "mlp.experts.%lld.down_proj.weight",
			         (long long)j);
			add_l(m, i, leaf, HID, IE);
		}
	}
	return m;
}

static tm_model *tm_longcat(void)
{
	return tm_longcat_e(NE, NZ);
}

static const char *ex(int64_t j, const char *leaf)
{
	static char b[8][160];
	static int k;
	k = (k + 1) % 8;
	snprintf(b[k], sizeof(b[k]), MOE "experts.%lld.%s.weight", (long long)j, leaf);
	return b[k];
}

/* Rank r of T: its heads' rows of q_b / kv_b, o_proj's columns, the MLP's rows / columns,
 * everything else of the attention whole. */
static void attn_is(const fx *f, uint32_t rank, uint32_t T)
{
	int64_t hl = NH / T, fl = FFN / T;
	uint32_t r = rank % T; /* the tp rank: ranks are ep * T + tp */
	shp(f, rank, A1 "q_b_proj.weight", 2, hl * QK, QLR, 0);
	rows_are(f, rank, A1 "q_b_proj.weight", 0, A1 "q_b_proj.weight", r * hl * QK, hl * QK);
	shp(f, rank, A1 "kv_b_proj.weight", 2, hl * KVB, KVLR, 0);
	rows_are(f, rank, A1 "kv_b_proj.weight", 0, A1 "kv_b_proj.weight", r * hl * KVB, hl * KVB);
	shp(f, rank, A1 "o_proj.weight", 2, HID, hl * VHD, 0);
	cols_at(f, rank, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, NH * VHD, r * hl * VHD,
	        hl * VHD);
	repl(f, rank, A1 "q_a_proj.weight");
	repl(f, rank, A1 "q_a_layernorm.weight");
	repl(f, rank, A1 "kv_a_proj_with_mqa.weight");
	repl(f, rank, A1 "kv_a_layernorm.weight");
	repl(f, rank, L1 "input_layernorm.1.weight");
	repl(f, rank, L1 "post_attention_layernorm.0.weight");
	shp(f, rank, MLP0 "gate_up_proj.weight", 2, 2 * fl, HID, 0);
	rows_at(f, rank, MLP0 "gate_up_proj.weight", 0, MLP0 "gate_proj.weight", r * fl, fl);
	rows_at(f, rank, MLP0 "gate_up_proj.weight", fl, MLP0 "up_proj.weight", r * fl, fl);
	shp(f, rank, MLP0 "down_proj.weight", 2, HID, fl, 0);
	cols_at(f, rank, MLP0 "down_proj.weight", 0, MLP0 "down_proj.weight", HID, FFN, r * fl, fl);
	repl(f, rank, MOE "router.classifier.weight");
	repl(f, rank, MOE "router.e_score_correction_bias");
	assert_int_equal(info(f, rank, MOE "router.e_score_correction_bias")->dtype, WT_F32);
	shp(f, rank, MOE "router.classifier.weight", 2, NE + NZ, HID, 0);
	assert_true(tm_ix(f->p, rank, "model.mtp.norm.weight") < 0);
	assert_true(tm_ix(f->p, rank, MLP0 "gate_proj.weight") < 0);
}

/* The stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {
    W13, W2O, MOE "experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, IE};

static void test_longcat_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_longcat(), LC_CFG(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "longcat_flash");
	for (uint32_t r = 0; r < 2; r++) {
		attn_is(&f, r, 2);
		fx_experts_are(&f, &XP, r, 0, NE, r * 32, 32, false);
	}
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	rows_are(&f, 0, "model.embed_tokens.weight", 0, "model.embed_tokens.weight", 0, 512);
	repl(&f, 0, "model.norm.weight");
	fx_close(&f);
}

static void test_longcat_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_longcat(), LC_CFG(""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		attn_is(&f, r, 4);
		fx_experts_are(&f, &XP, r, 0, NE, r * 16, 16, false);
	}
	fx_close(&f);
}

/* EP 2: rank e holds experts 2e, 2e+1 whole (the zero experts are nobody's); TP 2 x EP 2 with
 * up_gate: ranks ep*2 + tp, the attention split by tp. */
static void test_longcat_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_longcat(), LC_CFG(""), 1, 2, 0, true);
	for (uint32_t e = 0; e < 2; e++) {
		fx_experts_are(&f, &XP, e, 2 * e, 2, 0, IE, false);
		attn_is(&f, e, 1);
	}
	fx_close(&f);
	fx_open(&f, tm_longcat(), LC_CFG(""), 2, 2, 1, true);
	for (uint32_t r = 0; r < 4; r++) {
		fx_experts_are(&f, &XP, r, 2 * (r / 2), 2, 0, IE, true);
		attn_is(&f, r, 2); /* ep rank 1's dense parts are tp rank (r - 2)'s */
	}
	fx_close(&f);
}

/* int8-channel at TP 2: q_a / q_b / kv_a / kv_b / o, the MLPs and the experts per row; the
 * router, its bias and the norms kept. */
static void test_longcat_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_longcat(), LC_CFG(""), &l, true);
	assert_int_equal(info(&f, 1, A1 "q_b_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, A1 "q_a_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, MLP0 "gate_up_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, W13)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, MOE "router.classifier.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, MOE "router.e_score_correction_bias")->dtype, WT_F32);
	assert_int_equal(info(&f, 1, A1 "kv_a_layernorm.weight")->dtype, WT_BF16);
	/* rank 1's kv_b row k is the source row 4*KVB + k */
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, A1 "kv_b_proj.weight");
	const float *sc = (const float *)out_bytes(&f, 1, A1 "kv_b_proj.weight_scale");
	for (int64_t k = 0; k < 4 * KVB; k += 7) {
		size_t rowb;
		const uint16_t *x =
		    (const uint16_t *)src_rows(&f, A1 "kv_b_proj.weight", 4 * KVB + k, &rowb);
		int8_row_is(q + k * KVLR, sc[k], x, KVLR);
	}
	/* rank 0's w13 row s*64 + 32 + k is expert s's up_proj row k */
	q = (const int8_t *)out_bytes(&f, 0, W13);
	sc = (const float *)out_bytes(&f, 0, MOE "experts.w13_weight_scale");
	for (int64_t s = 0; s < NE; s++)
		for (int64_t k = 0; k < 32; k += 5) {
			size_t rowb;
			const uint16_t *x =
			    (const uint16_t *)src_rows(&f, ex(s, "up_proj"), k, &rowb);
			int8_row_is(q + (s * 64 + 32 + k) * HID, sc[s * 64 + 32 + k], x, HID);
		}
	fx_close(&f);
}

static void test_longcat_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1},
	                                   {1, 2}, {2, 2}, {1, 4}, {1, 3}};
	coverage(tm_longcat(), LC_CFG(""), NH, lays, sizeof(lays) / sizeof(lays[0]));
}

/* LongcatFlashConfig's names laid over the common ones, its defaults for absent keys. */
static void test_longcat_config(void **state)
{
	(void)state;
	static const char cfg[] = LC_CFG(",\"num_hidden_layers\":4,\"intermediate_size\":7");
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &c, &err), WT_OK);
	assert_int_equal(c.num_hidden_layers, 2); /* num_layers, whatever num_hidden_layers says */
	assert_int_equal(c.intermediate_size, FFN);
	assert_int_equal(c.moe_intermediate_size, IE);
	assert_int_equal(c.num_experts, NE);
	assert_int_equal(c.zero_expert_num, NZ);
	assert_int_equal(c.q_lora_rank, QLR);
	assert_int_equal(c.num_key_value_heads, NH);
	ckpt_config_clear(&c);
	static const char bare[] = "{\"architectures\":[\"LongcatFlashForCausalLM\"],"
	                           "\"model_type\":\"longcat_flash\"}";
	assert_int_equal(ckpt_config_parse(bare, strlen(bare), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 6144);
	assert_int_equal(c.num_hidden_layers, 28);
	assert_int_equal(c.num_attention_heads, 64);
	assert_int_equal(c.intermediate_size, 12288);
	assert_int_equal(c.moe_intermediate_size, 2048);
	assert_int_equal(c.num_experts, 512);
	assert_int_equal(c.zero_expert_num, 256);
	assert_int_equal(c.q_lora_rank, 1536);
	assert_int_equal(c.kv_lora_rank, 512);
	assert_int_equal(c.qk_nope_head_dim, 128);
	assert_int_equal(c.qk_rope_head_dim, 64);
	assert_int_equal(c.head_dim, 64);
	assert_int_equal(c.v_head_dim, 128);
	assert_int_equal(c.vocab_size, 131072);
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
	/* another model type reads no zero_expert_num nor num_layers */
	static const char llama[] = "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":64,"
	                            "\"num_attention_heads\":4,\"num_hidden_layers\":1,"
	                            "\"vocab_size\":10,\"num_layers\":3,\"zero_expert_num\":4}";
	assert_int_equal(ckpt_config_parse(llama, strlen(llama), &c, &err), WT_OK);
	assert_int_equal(c.num_hidden_layers, 1);
	assert_int_equal(c.zero_expert_num, 0);
	ckpt_config_clear(&c);
	static const struct {
		const char *cfg, *a, *b;
	} bad[] = {
	    {"{" LC_BASE(4) ",\"zero_expert_num\":2,\"q_lora_rank\":null,\"head_dim\":8}",
	     "q_lora_rank is null", "give it"},
	    {"{" LC_BASE(4) ",\"zero_expert_num\":null,\"q_lora_rank\":64,\"head_dim\":8}",
	     "zero_expert_num is null", "0 for none"},
	    {"{" LC_KEYS(4, 2) ",\"attention_bias\":true}", "attention_bias is true", "biases"},
	    {"{" LC_KEYS(4, 2) ",\"router_bias\":true}", "router_bias is true", "set it false"},
	    {"{" LC_KEYS(4, 2) ",\"mla_scale_q_lora\":false}", "mla_scale_q_lora is false",
	     "set it true"},
	    {"{" LC_KEYS(4, 2) ",\"mla_scale_kv_lora\":false}", "mla_scale_kv_lora is false",
	     "set it true"},
	    {"{" LC_KEYS(4, 2) ",\"hidden_act\":\"gelu\"}", "hidden_act is not \"silu\"",
	     "FlashMLP"},
	    {"{" LC_KEYS(4, 2) ",\"zero_expert_type\":\"drop\"}", "zero_expert_type", "identities"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rv = ckpt_config_parse(bad[i].cfg, strlen(bad[i].cfg), &c, &err);
		printf("refused (%s): %s\n", wt_errname(rv), err.msg);
		assert_int_equal(rv, WT_EUNSUPPORTED);
		if (!strstr(err.msg, bad[i].a) || !strstr(err.msg, bad[i].b))
			fail_msg("'%s' lacks '%s' or '%s'", err.msg, bad[i].a, bad[i].b);
	}
	static const char ok[] = LC_CFG(",\"mla_scale_q_lora\":true,\"zero_expert_type\":"
	                                "\"identity\",\"hidden_act\":\"silu\"");
	assert_int_equal(ckpt_config_parse(ok, strlen(ok), &c, &err), WT_OK);
	ckpt_config_clear(&c);
}

static void test_longcat_errors(void **state)
{
	(void)state;
	/* the router scores the zero experts too: [E + Z, hid] */
	tm_model *m = tm_longcat();
	tm_remove(m, MOE "router.classifier.weight");
	tm_add2(m, MOE "router.classifier.weight", NE, HID);
	fx_refused(m, LC_CFG(""), WT_ESHAPE, "router.classifier.weight", "disagrees");
	/* a missing correction bias, a missing sublayer's projection */
	m = tm_longcat();
	tm_remove(m, MOE "router.e_score_correction_bias");
	fx_refused(m, LC_CFG(""), WT_ENOTFOUND, "e_score_correction_bias", "missing");
	m = tm_longcat();
	tm_remove(m, A1 "kv_b_proj.weight");
	fx_refused(m, LC_CFG(""), WT_ENOTFOUND, "self_attn.1.kv_b_proj.weight", "missing");
	/* a zero expert has no weights: experts.4 is past the 4 routed ones */
	m = tm_longcat();
	tm_add2(m, ex(4, "gate_proj"), IE, HID);
	fx_refused(m, LC_CFG(""), WT_ESHAPE, "experts.4.gate_proj", "has 4 experts");
	/* DeepSeek's names, a third sublayer, MLP biases are not LongCat's */
	m = tm_longcat();
	tm_add2(m, L1 "self_attn.q_a_proj.weight", QLR, HID);
	fx_refused(m, LC_CFG(""), WT_EUNSUPPORTED, "self_attn.q_a_proj.weight", "longcat_flash");
	m = tm_longcat();
	tm_add2(m, L1 "self_attn.2.o_proj.weight", HID, NH * VHD);
	fx_refused(m, LC_CFG(""), WT_EUNSUPPORTED, "self_attn.2.o_proj.weight", "longcat_flash");
	m = tm_longcat();
	tm_add2(m, MLP0 "down_proj.bias", HID, 0);
	fx_refused(m, LC_CFG(""), WT_EUNSUPPORTED, "mlps.0.down_proj.bias", "longcat_flash");
	m = tm_longcat();
	tm_add2(m, MOE "gate.weight", NE + NZ, HID);
	fx_refused(m, LC_CFG(""), WT_EUNSUPPORTED, "mlp.gate.weight", "longcat_flash");
	/* head_dim is the rotary width: it must be qk_rope_head_dim */
	fx_refused(tm_longcat(),
	           "{" LC_BASE(4) ",\"zero_expert_num\":2,\"q_lora_rank\":64,\"head_dim\":16}",
	           WT_ECORRUPT, "head_dim 16 is not qk_rope_head_dim 8", "set head_dim to 8");
	/* every layer has the MoE block */
	fx_refused(tm_longcat_e(0, 2), "{" LC_KEYS(0, 2) "}", WT_ECORRUPT, "n_routed_experts > 0",
	           "shortcut MoE");
	/* TP 3 divides neither the 8 heads nor the MLP; EP 8 exceeds the 4 routed experts (the
	 * zero experts are not placed) */
	fx_refused_tp(tm_longcat(), LC_CFG(""), 3, WT_ELAYOUT, "num_attention_heads 8", "tp_size");
	wt_layout l;
	wt_layout_init(&l);
	l.ep_size = 8;
	fx_refused_at(tm_longcat(), LC_CFG(""), &l, WT_ELAYOUT, "ep_size 8", "4");
	/* keys left out take LongcatFlashConfig's defaults (expert_ffn_hidden_size 2048) */
	fx_refused(tm_longcat(),
	           "{\"architectures\":[\"LongcatFlashForCausalLM\"],\"model_type\":"
	           "\"longcat_flash\",\"hidden_size\":128,\"num_attention_heads\":8,"
	           "\"num_layers\":2,\"vocab_size\":1000,\"ffn_hidden_size\":192,"
	           "\"n_routed_experts\":4,\"zero_expert_num\":2,\"q_lora_rank\":64,"
	           "\"kv_lora_rank\":32,\"qk_nope_head_dim\":16,\"qk_rope_head_dim\":8,"
	           "\"head_dim\":8,\"v_head_dim\":16}",
	           WT_ESHAPE, "2048", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_longcat_tp2),      cmocka_unit_test(test_longcat_tp4),
	    cmocka_unit_test(test_longcat_ep),       cmocka_unit_test(test_longcat_int8),
	    cmocka_unit_test(test_longcat_coverage), cmocka_unit_test(test_longcat_config),
	    cmocka_unit_test(test_longcat_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
