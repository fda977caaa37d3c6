/*
 * test_shardmap_errors.c — every plan-time error of docs/format.md sections 1, 3, 4
 * and 5 with its code and a message naming the tensor, the numbers and a fix.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_shardmap_util.h"

#define SEED 0x5eed0003ull

/* Plan m/cfg with the given layout; returns the code, err filled. */
static int try_plan(tm_model *m, const char *cfg, const wt_layout *l, wt_errbuf *err)
{
	char *dir = tu_mkdtemp("smerr");
	assert_int_equal(tm_write(m, dir, cfg), 0);
	store *s;
	ckpt *c;
	sm_plan *p;
	wt_errclear(err);
	int rv = tm_plan(dir, l, &s, &c, &p, err);
	if (rv == WT_OK)
		assert_true(shardmap_n_ranks(p) == l->tp_size * l->ep_size);
	tm_close(s, c, p);
	tu_rmrf(dir);
	free(dir);
	return rv;
}

static void lay(wt_layout *l, uint32_t tp, uint32_t ep, wt_quant q)
{
	wt_layout_init(l);
	l->tp_size = tp;
	l->ep_size = ep;
	l->quant = q;
}

static void expect(int rv, int code, const wt_errbuf *err, const char *a, const char *b)
{
	if (rv != code)
		fail_msg("got %s (%s), want %s", wt_errname(rv), err->msg, wt_errname(code));
	if (a && !strstr(err->msg, a))
		fail_msg("message '%s' lacks '%s'", err->msg, a);
	if (b && !strstr(err->msg, b))
		fail_msg("message '%s' lacks '%s'", err->msg, b);
}

static void test_heads_not_divisible(void **state)
{
	(void)state;
	tm_model *m = tm_llama(SEED, WT_BF16);
	wt_layout l;
	wt_errbuf err;
	lay(&l, 3, 1, WT_QUANT_NONE);
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_ELAYOUT, &err,
	       "tp_size 3 does not divide num_attention_heads 8", "use tp_size 1, 2, 4 or 8");
	assert_non_null(strstr(err.msg, "qkv_proj"));
	lay(&l, 16, 1, WT_QUANT_NONE);
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_ELAYOUT, &err, "16", "use tp_size");
	tm_free(m);
}

static void test_kv_heads(void **state)
{
	(void)state;
	/* qwen3 KV 4: T=8 works (replication), and H 8 / KV 4 means T 3 fails. */
	tm_model *m = tm_qwen3(SEED);
	wt_layout l;
	wt_errbuf err;
	lay(&l, 8, 1, WT_QUANT_NONE);
	expect(try_plan(m, tm_qwen3_cfg, &l, &err), WT_OK, &err, NULL, NULL);
	tm_free(m);
}

static void test_ep_errors(void **state)
{
	(void)state;
	tm_model *m = tm_llama(SEED, WT_BF16);
	wt_layout l;
	wt_errbuf err;
	lay(&l, 1, 2, WT_QUANT_NONE);
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_ELAYOUT, &err, "no experts", "ep_size 1");
	tm_free(m);
	m = tm_mixtral(SEED);
	lay(&l, 1, 7, WT_QUANT_NONE);
	expect(try_plan(m, tm_mixtral_cfg, &l, &err), WT_ELAYOUT, &err, "ep_size 7", "<= 6");
	lay(&l, 1, 6, WT_QUANT_NONE);
	expect(try_plan(m, tm_mixtral_cfg, &l, &err), WT_OK, &err, NULL, NULL);
	tm_free(m);
}

static void test_checkpoint_problems(void **state)
{
	(void)state;
	wt_layout l;
	wt_errbuf err;
	lay(&l, 2, 1, WT_QUANT_NONE);
	tm_model *m = tm_llama(SEED, WT_BF16);
	tm_remove(m, "model.layers.1.self_attn.k_proj.weight");
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_ENOTFOUND, &err,
	       "model.layers.1.self_attn.k_proj.weight", "missing");
	tm_free(m);

	m = tm_llama(SEED, WT_BF16);
	tm_add2(m, "model.layers.0.self_attn.extra.weight", 4, 4);
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_EUNSUPPORTED, &err,
	       "model.layers.0.self_attn.extra.weight", "unknown");
	tm_free(m);

	m = tm_llama(SEED, WT_BF16);
	tm_remove(m, "model.layers.0.self_attn.q_proj.weight");
	tm_add2(m, "model.layers.0.self_attn.q_proj.weight", 255, 256);
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_ESHAPE, &err,
	       "model.layers.0.self_attn.q_proj.weight", "[255, 256]");
	tm_free(m);

	m = tm_llama(SEED, WT_BF16);
	tm_remove(m, "model.layers.0.self_attn.o_proj.weight");
	tm_add(m, "model.layers.0.self_attn.o_proj.weight", WT_I32, 2, 256, 256, 0);
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_EDTYPE, &err,
	       "model.layers.0.self_attn.o_proj.weight", "I32");
	tm_free(m);

	m = tm_llama(SEED, WT_BF16);
	tm_add2(m, "model.layers.2.input_layernorm.weight", 256, 0);
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_ESHAPE, &err, "layer 2",
	       "num_hidden_layers");
	tm_free(m);

	m = tm_qwen2(SEED);
	tm_remove(m, "model.layers.0.self_attn.v_proj.bias");
	expect(try_plan(m, tm_qwen2_cfg, &l, &err), WT_ENOTFOUND, &err,
	       "model.layers.0.self_attn.v_proj.bias", "partner");
	tm_free(m);

	m = tm_mixtral(SEED);
	tm_remove(m, "model.layers.1.block_sparse_moe.experts.5.w3.weight");
	expect(try_plan(m, tm_mixtral_cfg, &l, &err), WT_ENOTFOUND, &err,
	       "model.layers.1.block_sparse_moe.experts.5.w3.weight", NULL);
	tm_free(m);

	/* lm_head missing while untied */
	m = tm_llama(SEED, WT_BF16);
	tm_remove(m, "lm_head.weight");
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_ENOTFOUND, &err, "lm_head.weight", NULL);
	tm_free(m);
}

static void test_unknown_arch(void **state)
{
	(void)state;
	tm_model *m = tm_llama(SEED, WT_BF16);
	wt_layout l;
	wt_errbuf err;
	lay(&l, 1, 1, WT_QUANT_NONE);
	const char *cfg = "{\"architectures\":[\"XLNetLMHeadModel\"],\"hidden_size\":256,"
	                  "\"num_attention_heads\":8,\"vocab_size\":1000,\"num_hidden_layers\":2}";
	expect(try_plan(m, cfg, &l, &err), WT_EUNSUPPORTED, &err, "XLNetLMHeadModel",
	       "LlamaForCausalLM, LLaMAForCausalLM, IQuestCoderForCausalLM, MistralForCausalLM");
	/* the list fits the message: it ends whole, naming how many it leaves out (it
	 * outgrew WT_ERRMSG_MAX and ended mid-name) */
	const char *tail = strstr(err.msg, " more (docs/format.md 2.7)");
	assert_non_null(tail);
	assert_string_equal(tail, " more (docs/format.md 2.7)");
	char all[16384]; /* room for every spelling (178 today: about 4.4 KB) */
	size_t named = shardmap_architectures_text(all, sizeof(all));
	assert_true(named > 40); /* every spelling, nothing left out */
	assert_null(strstr(all, " more ("));
	assert_non_null(strstr(all, "SmolLM3ForCausalLM"));
	assert_null(strstr(all, "Gemma3nForConditionalGeneration")); /* refused by name only */
	/* Mistral is one table entry: the same tensors plan under MistralForCausalLM. */
	char buf[600];
	snprintf(buf, sizeof(buf), "{\"architectures\":[\"MistralForCausalLM\"]%s",
	         strstr(tm_llama_cfg, ",\"model_type\""));
	expect(try_plan(m, buf, &l, &err), WT_OK, &err, NULL, NULL);
	tm_free(m);
}

static void test_partly_excluded(void **state)
{
	(void)state;
	tm_model *m = tm_llama(SEED, WT_BF16);
	wt_layout l;
	wt_errbuf err;
	lay(&l, 2, 1, WT_QUANT_FP8_TENSOR);
	assert_int_equal(wt_layout_add_exclude(&l, "model.layers.0.self_attn.q_proj", &err), 0);
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_ELAYOUT, &err,
	       "model.layers.0.self_attn.qkv_proj.weight", "1 of its 3");
	/* names both sides, and suggests no tp size (none can help) */
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_ELAYOUT, &err,
	       "(excluded: model.layers.0.self_attn.q_proj; not excluded: "
	       "model.layers.0.self_attn.k_proj, model.layers.0.self_attn.v_proj)",
	       NULL);
	assert_null(strstr(err.msg, "tp_size"));
	l.quant = WT_QUANT_NONE; /* not an error without quantization */
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_OK, &err, NULL, NULL);
	wt_layout_clear(&l);
	tm_free(m);
	/* experts: one expert excluded */
	m = tm_mixtral(SEED);
	lay(&l, 1, 1, WT_QUANT_INT8_CHANNEL);
	assert_int_equal(
	    wt_layout_add_exclude(&l, "model.layers.1.block_sparse_moe.experts.2.w1", &err), 0);
	expect(try_plan(m, tm_mixtral_cfg, &l, &err), WT_ELAYOUT, &err, "experts.w13_weight",
	       "(excluded: model.layers.1.block_sparse_moe.experts.2.w1; not excluded: "
	       "model.layers.1.block_sparse_moe.experts.0.w1, ");
	assert_non_null(strstr(err.msg, "... (11 in all)"));
	assert_null(strstr(err.msg, "tp_size"));
	wt_layout_clear(&l);
	tm_free(m);
}

static void test_int4_group(void **state)
{
	(void)state;
	tm_model *m = tm_llama(SEED, WT_BF16);
	wt_layout l;
	wt_errbuf err;
	lay(&l, 4, 1, WT_QUANT_INT4_GROUP); /* o_proj K = 256/4 = 64 < group 128 */
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_ELAYOUT, &err, "o_proj.weight",
	       "group_size 128");
	l.group_size = 64;
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_OK, &err, NULL, NULL);
	tm_free(m);
}

static void test_block_alignment(void **state)
{
	(void)state;
	char cfg[1024];
	tm_model *m = tm_deepseek(SEED, 1, cfg, sizeof(cfg));
	wt_layout l;
	wt_errbuf err;
	lay(&l, 2, 1, WT_QUANT_FP8_BLOCK);
	expect(try_plan(m, cfg, &l, &err), WT_OK, &err, NULL, NULL);
	lay(&l, 4, 1, WT_QUANT_FP8_BLOCK); /* o_proj columns 64 per rank */
	expect(try_plan(m, cfg, &l, &err), WT_ELAYOUT, &err, "128", "requant allow");
	assert_non_null(strstr(err.msg, "use tp_size 1 or 2"));
	l.requant_allow = 1;
	expect(try_plan(m, cfg, &l, &err), WT_OK, &err, NULL, NULL);
	/* other targets dequantize: no alignment rule */
	lay(&l, 4, 1, WT_QUANT_NONE);
	expect(try_plan(m, cfg, &l, &err), WT_OK, &err, NULL, NULL);
	tm_free(m);
}

static void test_bad_regex(void **state)
{
	(void)state;
	tm_model *m = tm_llama(SEED, WT_BF16);
	wt_layout l;
	wt_errbuf err;
	lay(&l, 1, 1, WT_QUANT_FP8_BLOCK);
	assert_int_equal(wt_layout_add_exclude(&l, "re:model.(layers", &err), 0);
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_EINVAL, &err, "re:model.(layers",
	       "1 '(' without ')' in the regex; balance the parentheses");
	wt_layout_clear(&l);
	/* balanced, but regcomp refuses it */
	lay(&l, 1, 1, WT_QUANT_FP8_BLOCK);
	assert_int_equal(wt_layout_add_exclude(&l, "re:model.[layers", &err), 0);
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_EINVAL, &err, "re:model.[layers",
	       "not a valid POSIX extended regex");
	wt_layout_clear(&l);
	tm_free(m);
}

/* Shared experts follow the config: none declared -> none expected, and present ones are
 * unknown tensors; a dense-layer expert is an unknown tensor too. */
static void test_shared_experts_cond(void **state)
{
	(void)state;
	char cfg[1024], cfg0[1024];
	tm_model *m = tm_deepseek(SEED, 0, cfg, sizeof(cfg));
	snprintf(cfg0, sizeof(cfg0), "%s", cfg);
	char *p = strstr(cfg0, "\"n_shared_experts\":1");
	assert_non_null(p);
	p[strlen("\"n_shared_experts\":")] = '0';
	wt_layout l;
	wt_errbuf err;
	lay(&l, 2, 1, WT_QUANT_NONE);
	expect(try_plan(m, cfg0, &l, &err), WT_EUNSUPPORTED, &err,
	       "model.layers.1.mlp.shared_experts.down_proj.weight", "without shared experts");
	const char *sh[] = {"down_proj", "gate_proj", "up_proj"};
	for (int k = 0; k < 3; k++)
		for (int i = 1; i < 3; i++) {
			char b[128];
			snprintf(b, sizeof(b), "model.layers.%d.mlp.shared_experts.%s.weight", i,
			         sh[k]);
			tm_remove(m, b);
		}
	expect(try_plan(m, cfg0, &l, &err), WT_OK, &err, NULL, NULL);
	tm_free(m);
	m = tm_qwen2_moe(SEED);
	tm_add2(m, "model.layers.0.mlp.experts.0.up_proj.weight", 128, 256);
	expect(try_plan(m, tm_qwen2_moe_cfg, &l, &err), WT_EUNSUPPORTED, &err,
	       "model.layers.0.mlp.experts.0.up_proj.weight", "dense layer");
	tm_free(m);
}

/* Vocabulary padding is bounded: a padding step lcm(vocab_pad, tp_size) over 1024 may not
 * add more rows than the vocabulary has (before, vocab_pad 2^22 made a 3 MB model a
 * 4.3 GB shard); steps engines use (64..1024) always plan. */
static void test_vocab_padding_bound(void **state)
{
	(void)state;
	tm_model *m = tm_llama(SEED, WT_BF16); /* vocab_size 1000 */
	wt_layout l;
	wt_errbuf err;
	lay(&l, 1, 1, WT_QUANT_NONE);
	l.vocab_pad = 4095;
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_ELAYOUT, &err,
	       "pads 1000 rows to 4095 (a multiple of 4095)", "use a vocab_pad of 64..1024");
	l.vocab_pad = 2048;
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_ELAYOUT, &err, "to 2048", "vocab_pad");
	l.vocab_pad = 1024; /* padding 24 rows: fine */
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_OK, &err, NULL, NULL);
	lay(&l, 8, 1, WT_QUANT_NONE);
	l.vocab_pad = 128; /* step 128: fine */
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_OK, &err, NULL, NULL);
	tm_free(m);
}

/* A weight scale the checkpoint's scheme does not use is refused, naming the
 * tensor and the scheme (SHARDS.md section 3: consumed, dropped or an error);
 * before, it was silently neither used nor listed as skipped. */
static void test_stray_scales(void **state)
{
	(void)state;
	wt_layout l;
	wt_errbuf err;
	char cfg[1024];
	lay(&l, 2, 1, WT_QUANT_NONE);
	/* any weight scale beside an unquantized weight of an unquantized checkpoint */
	tm_model *m = tm_llama(SEED, WT_BF16);
	tm_add(m, "model.layers.0.self_attn.o_proj.weight_scale", WT_F32, 1, 1, 0, 0);
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_EUNSUPPORTED, &err,
	       "model.layers.0.self_attn.o_proj.weight_scale'", "unquantized");
	tm_remove(m, "model.layers.0.self_attn.o_proj.weight_scale");
	tm_add(m, "model.layers.1.mlp.down_proj.weight_scale_inv", WT_F32, 2, 2, 4, 0);
	expect(try_plan(m, tm_llama_cfg, &l, &err), WT_EUNSUPPORTED, &err,
	       "model.layers.1.mlp.down_proj.weight_scale_inv", "BF16");
	tm_free(m);
	/* block scales in a per-tensor FP8 checkpoint, beside an F8_E4M3 weight */
	m = tm_llama_fp8(SEED);
	expect(try_plan(m, tm_llama_fp8_cfg, &l, &err), WT_OK, &err, NULL, NULL);
	tm_add(m, "model.layers.0.self_attn.o_proj.weight_scale_inv", WT_F32, 2, 2, 2, 0);
	expect(try_plan(m, tm_llama_fp8_cfg, &l, &err), WT_EUNSUPPORTED, &err,
	       "model.layers.0.self_attn.o_proj.weight_scale_inv", "per-tensor FP8");
	tm_free(m);
	/* a scale beside an unquantized (BF16) weight of a block FP8 checkpoint */
	m = tm_deepseek(SEED, 1, cfg, sizeof(cfg));
	expect(try_plan(m, cfg, &l, &err), WT_OK, &err, NULL, NULL);
	tm_add(m, "model.layers.1.mlp.gate.weight_scale_inv", WT_F32, 2, 1, 2, 0);
	expect(try_plan(m, cfg, &l, &err), WT_EUNSUPPORTED, &err,
	       "model.layers.1.mlp.gate.weight_scale_inv", "block FP8");
	tm_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_heads_not_divisible), cmocka_unit_test(test_kv_heads),
	    cmocka_unit_test(test_ep_errors),           cmocka_unit_test(test_checkpoint_problems),
	    cmocka_unit_test(test_unknown_arch),        cmocka_unit_test(test_partly_excluded),
	    cmocka_unit_test(test_int4_group),          cmocka_unit_test(test_block_alignment),
	    cmocka_unit_test(test_bad_regex),           cmocka_unit_test(test_shared_experts_cond),
	    cmocka_unit_test(test_vocab_padding_bound), cmocka_unit_test(test_stray_scales),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
