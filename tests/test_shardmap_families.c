/*
 * test_shardmap_families.c — the mapping of every family (Qwen2, Qwen3, Mixtral,
 * Qwen2-MoE, DeepSeek-V3/V2, BERT, Gemma, Phi-3, StarCoder2, GLM-4, OLMo 2) with hand-computed
 * shapes, expert placement (E=6 over P=4), MLA head units, and the covered-exactly-once property
 * for every family and several layouts. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"
#define SEED 0x5eed0002ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

static void test_qwen2_tied_bias(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_qwen2(SEED), tm_qwen2_cfg, 2, 1, 0, true);
	assert_true(shardmap_tied_lm_head(f.p));
	assert_int_equal(tm_ix(f.p, 0, "lm_head.weight"), -1);
	shp(&f, 1, "model.layers.0.self_attn.qkv_proj.bias", 1, 192, 0, 0);
	assert_int_equal(info(&f, 1, "model.layers.0.self_attn.qkv_proj.bias")->role, SM_ROLE_BIAS);
	shp(&f, 1, "model.embed_tokens.weight", 2, 512, 256, 0);
	size_t rb;
	const uint8_t *got = out_bytes(&f, 1, "model.layers.1.self_attn.qkv_proj.bias");
	assert_memory_equal(got, src_rows(&f, "model.layers.1.self_attn.q_proj.bias", 128, &rb),
	                    128 * 2);
	assert_memory_equal(got + 256,
	                    src_rows(&f, "model.layers.1.self_attn.k_proj.bias", 32, &rb), 32 * 2);
	assert_memory_equal(got + 320,
	                    src_rows(&f, "model.layers.1.self_attn.v_proj.bias", 32, &rb), 32 * 2);
	fx_close(&f);
}

static void test_qwen3_qknorm(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_qwen3(SEED), tm_qwen3_cfg, 8, 1, 0, true);
	/* H 8, KV 4, d 64, T 8: Hl 1, KVl 1, kv_shard r/2. */
	shp(&f, 5, "model.layers.0.self_attn.qkv_proj.weight", 2, 192, 256, 0);
	shp(&f, 5, "model.layers.0.self_attn.q_norm.weight", 1, 64, 0, 0);
	size_t rb;
	const uint8_t *got = out_bytes(&f, 5, "model.layers.0.self_attn.qkv_proj.weight");
	const uint8_t *k = src_rows(&f, "model.layers.0.self_attn.k_proj.weight", 2 * 64, &rb);
	assert_memory_equal(got + 64 * rb, k, 64 * rb);
	fx_close(&f);
}

static void mixtral_ep(int up_gate)
{
	fx f;
	fx_open(&f, tm_mixtral(SEED), tm_mixtral_cfg, 1, 4, up_gate, true);
	/* E=6 over P=4: counts 2,2,1,1 starting 0,2,4,5 */
	static const int64_t count[4] = {2, 2, 1, 1}, start[4] = {0, 2, 4, 5};
	const char *w13 = "model.layers.1.block_sparse_moe.experts.w13_weight";
	const char *w2 = "model.layers.1.block_sparse_moe.experts.w2_weight";
	for (uint32_t e = 0; e < 4; e++) {
		shp(&f, e, w13, 3, count[e], 512, 256);
		shp(&f, e, w2, 3, count[e], 256, 256);
		shp(&f, e, "model.layers.1.block_sparse_moe.gate.weight", 2, 6, 256, 0);
		shp(&f, e, "model.layers.1.self_attn.qkv_proj.weight", 2, 384, 256, 0);
		for (int64_t jj = 0; jj < count[e]; jj++) {
			char g[128], u[128], d[128];
			int64_t j = start[e] + jj;
			snprintf(g, sizeof(g),
			         "model.layers.1.block_sparse_moe.experts.%lld.w1.weight",
			         (long long)j);
			snprintf(u, sizeof(u),
			         "model.layers.1.block_sparse_moe.experts.%lld.w3.weight",
			         (long long)j);
			snprintf(d, sizeof(d),
			         "model.layers.1.block_sparse_moe.experts.%lld.w2.weight",
			         (long long)j);
			size_t rb, blk = 256 * 256 * 2;
			const uint8_t *got = out_bytes(&f, e, w13) + jj * 2 * blk;
			assert_memory_equal(got, src_rows(&f, up_gate ? u : g, 0, &rb), blk);
			assert_memory_equal(got + blk, src_rows(&f, up_gate ? g : u, 0, &rb), blk);
			assert_memory_equal(out_bytes(&f, e, w2) + jj * blk,
			                    src_rows(&f, d, 0, &rb), blk);
		}
	}
	fx_close(&f);
}

static void test_mixtral_ep4(void **state)
{
	(void)state;
	mixtral_ep(0);
	mixtral_ep(1);
}

static void test_mixtral_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_mixtral(SEED), tm_mixtral_cfg, 2, 1, 0, true);
	const char *w13 = "model.layers.0.block_sparse_moe.experts.w13_weight";
	const char *w2 = "model.layers.0.block_sparse_moe.experts.w2_weight";
	shp(&f, 1, w13, 3, 6, 256, 256);
	shp(&f, 1, w2, 3, 6, 256, 128);
	size_t rb;
	/* rank 1, expert 3: [w1 rows 128..255 ; w3 rows 128..255]; w2 columns 128..255 */
	const uint8_t *got = out_bytes(&f, 1, w13) + 3 * 256 * 512;
	assert_memory_equal(
	    got, src_rows(&f, "model.layers.0.block_sparse_moe.experts.3.w1.weight", 128, &rb),
	    128 * 512);
	assert_memory_equal(
	    got + 128 * 512,
	    src_rows(&f, "model.layers.0.block_sparse_moe.experts.3.w3.weight", 128, &rb),
	    128 * 512);
	got = out_bytes(&f, 1, w2) + 3 * 256 * 256;
	for (int64_t row = 0; row < 256; row++)
		assert_memory_equal(
		    got + row * 256,
		    src_rows(&f, "model.layers.0.block_sparse_moe.experts.3.w2.weight", row, &rb) +
		        256,
		    256);
	fx_close(&f);
}

static void test_qwen2_moe(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_qwen2_moe(SEED), tm_qwen2_moe_cfg, 2, 1, 0, false);
	shp(&f, 0, "model.layers.0.mlp.gate_up_proj.weight", 2, 512, 256, 0);
	shp(&f, 0, "model.layers.1.mlp.experts.w13_weight", 3, 4, 128, 256);
	shp(&f, 0, "model.layers.1.mlp.experts.w2_weight", 3, 4, 256, 64);
	shp(&f, 0, "model.layers.1.mlp.shared_expert.gate_up_proj.weight", 2, 256, 256, 0);
	shp(&f, 0, "model.layers.1.mlp.shared_expert.down_proj.weight", 2, 256, 128, 0);
	shp(&f, 1, "model.layers.1.mlp.shared_expert_gate.weight", 2, 1, 256, 0);
	shp(&f, 1, "model.layers.1.mlp.gate.weight", 2, 4, 256, 0);
	shp(&f, 1, "model.layers.1.self_attn.qkv_proj.weight", 2, 384, 256, 0);
	assert_int_equal(tm_ix(f.p, 0, "model.layers.0.mlp.experts.w13_weight"), -1);
	fx_close(&f);
}

static void test_deepseek_mla(void **state)
{
	(void)state;
	char cfg[1024];
	fx f;
	fx_open(&f, tm_deepseek(SEED, 0, cfg, sizeof(cfg)), cfg, 2, 1, 0, true);
	const char *a = "model.layers.1.self_attn.";
	char b[160];
#define DS(leaf) (snprintf(b, sizeof(b), "%s%s", a, leaf), b)
	shp(&f, 1, DS("q_a_proj.weight"), 2, 128, 256, 0);
	shp(&f, 1, DS("q_b_proj.weight"), 2, 256, 128, 0); /* 4 heads x (32+32) */
	shp(&f, 1, DS("kv_a_proj_with_mqa.weight"), 2, 96, 256, 0);
	shp(&f, 1, DS("kv_b_proj.weight"), 2, 256, 64, 0); /* 4 heads x (32+32) */
	shp(&f, 1, DS("o_proj.weight"), 2, 256, 128, 0);   /* 4 heads x v 32 */
	shp(&f, 1, DS("kv_a_layernorm.weight"), 1, 64, 0, 0);
	shp(&f, 0, "model.layers.0.mlp.gate_up_proj.weight", 2, 512, 256, 0);
	shp(&f, 0, "model.layers.1.mlp.experts.w13_weight", 3, 4, 256, 256);
	shp(&f, 0, "model.layers.1.mlp.shared_experts.gate_up_proj.weight", 2, 256, 256, 0);
	shp(&f, 0, "model.layers.1.mlp.gate.e_score_correction_bias", 1, 4, 0, 0);
	size_t rb;
	const uint8_t *want = src_rows(&f, "model.layers.1.self_attn.q_b_proj.weight", 256, &rb);
	assert_memory_equal(out_bytes(&f, 1, DS("q_b_proj.weight")), want, 256 * rb);
	want = src_rows(&f, "model.layers.1.self_attn.kv_b_proj.weight", 256, &rb);
	assert_memory_equal(out_bytes(&f, 1, DS("kv_b_proj.weight")), want, 256 * rb);
	const uint8_t *o = out_bytes(&f, 1, DS("o_proj.weight"));
	for (int64_t row = 0; row < 256; row++)
		assert_memory_equal(
		    o + row * 256,
		    src_rows(&f, "model.layers.1.self_attn.o_proj.weight", row, &rb) + 256, 256);
	/* MTP layer 2 and rotary caches dropped */
	for (size_t i = 0; i < shardmap_rank_n_tensors(f.p, 0); i++)
		assert_null(strstr(shardmap_rank_tensor(f.p, 0, i)->name, "layers.2."));
	size_t mtp = 0;
	for (size_t k = 0; k < shardmap_n_skipped(f.p); k++)
		mtp += strstr(shardmap_skipped(f.p, k), "layers.2.") != NULL;
	assert_true(mtp >= 20);
	fx_close(&f);
#undef DS
}

static void test_bert(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_bert(SEED), tm_bert_cfg, 2, 1, 0, true);
	const char *L = "encoder.layer.1.";
	char b[160];
#define BN(leaf) (snprintf(b, sizeof(b), "%s%s", L, leaf), b)
	shp(&f, 1, BN("attention.self.qkv_proj.weight"), 2, 192, 128, 0);
	shp(&f, 1, BN("attention.self.qkv_proj.bias"), 1, 192, 0, 0);
	shp(&f, 1, BN("attention.output.dense.weight"), 2, 128, 64, 0);
	shp(&f, 1, BN("attention.output.dense.bias"), 1, 128, 0, 0);
	shp(&f, 1, BN("intermediate.dense.weight"), 2, 256, 128, 0);
	shp(&f, 1, BN("intermediate.dense.bias"), 1, 256, 0, 0);
	shp(&f, 1, BN("output.dense.weight"), 2, 128, 256, 0);
	shp(&f, 1, BN("output.dense.bias"), 1, 128, 0, 0);
	shp(&f, 1, "embeddings.word_embeddings.weight", 2, 512, 128, 0);
	shp(&f, 1, "embeddings.position_embeddings.weight", 2, 64, 128, 0);
	shp(&f, 1, "pooler.dense.weight", 2, 128, 128, 0);
	assert_int_equal(info(&f, 1, "pooler.dense.weight")->dtype, WT_F32);
	size_t rb;
	const uint8_t *got = out_bytes(&f, 1, BN("attention.self.qkv_proj.weight"));
	const uint8_t *want = src_rows(&f, "encoder.layer.1.attention.self.key.weight", 64, &rb);
	assert_memory_equal(got + 64 * 512, want, 64 * rb);
	got = out_bytes(&f, 1, BN("intermediate.dense.bias"));
	assert_memory_equal(got, src_rows(&f, "encoder.layer.1.intermediate.dense.bias", 256, &rb),
	                    256 * 4);
	assert_string_equal(shardmap_skipped(f.p, 0), "embeddings.position_ids");
	fx_close(&f);
#undef BN
}

static void test_coverage_all(void **state)
{
	(void)state;
	static const uint32_t dense[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	static const uint32_t moe[][2] = {{1, 1}, {2, 1}, {1, 2}, {1, 4}, {2, 2}, {4, 3}};
	static const uint32_t q2m[][2] = {{1, 1}, {2, 1}, {4, 1}, {2, 4}, {1, 3}};
	static const uint32_t ds[][2] = {{1, 1}, {2, 1}, {4, 2}, {8, 4}};
	static const uint32_t bert[][2] = {{1, 1}, {2, 1}, {4, 1}};
	coverage(tm_qwen2(SEED), tm_qwen2_cfg, 2, dense, 4);
	coverage(tm_qwen3(SEED), tm_qwen3_cfg, 4, dense, 4);
	coverage(tm_mixtral(SEED), tm_mixtral_cfg, 2, moe, 6);
	coverage(tm_qwen2_moe(SEED), tm_qwen2_moe_cfg, 8, q2m, 5);
	char cfg[1024];
	tm_model *d = tm_deepseek(SEED, 0, cfg, sizeof(cfg));
	coverage(d, cfg, 8, ds, 4);
	coverage(tm_bert(SEED), tm_bert_cfg, 4, bert, 3);
}

static const char qwen3_moe_cfg[] =
    "{\"architectures\":[\"Qwen3MoeForCausalLM\"],\"model_type\":\"qwen3_moe\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":4,\"head_dim\":64,\"intermediate_size\":512,"
    "\"moe_intermediate_size\":128,\"num_experts\":4,\"mlp_only_layers\":[],\"decoder_sparse_"
    "step\":2,"
    "\"vocab_size\":1024,\"num_hidden_layers\":2}";

/* Qwen3-MoE: decoder_sparse_step 2 makes layer 1 MoE and layer 0 dense; q/k norms. */
static void test_qwen3_moe(void **state)
{
	(void)state;
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1024, 256, 1);
	char b[200];
	for (int i = 0; i < 2; i++)
		tm_attn(m, i, 8, 4, 64, 256, 0, 1);
	tm_mlp(m, 0, "mlp.", 512, 256);
	tm_fmt(b, sizeof(b), TM_L, 1, "mlp.gate.weight");
	tm_add2(m, b, 4, 256);
	tm_experts(m, 1, "mlp.experts.", 4, 128, 256, "gate_proj", "up_proj", "down_proj");
	fx f;
	fx_open(&f, m, qwen3_moe_cfg, 2, 2, 0, true);
	assert_string_equal(shardmap_family(f.p), "qwen3_moe");
	/* rank (tp 1, ep 1): experts 2, 3 whole; attention tp-split */
	shp(&f, 3, "model.layers.1.mlp.experts.w13_weight", 3, 2, 256, 256);
	shp(&f, 3, "model.layers.1.mlp.experts.w2_weight", 3, 2, 256, 128);
	shp(&f, 3, "model.layers.0.mlp.gate_up_proj.weight", 2, 512, 256, 0);
	shp(&f, 3, "model.layers.1.self_attn.qkv_proj.weight", 2, (4 + 2 * 2) * 64, 256, 0);
	shp(&f, 3, "model.layers.1.self_attn.k_norm.weight", 1, 64, 0, 0);
	size_t rb;
	const uint8_t *want = src_rows(&f, "model.layers.1.mlp.experts.3.up_proj.weight", 0, &rb);
	assert_memory_equal(out_bytes(&f, 3, "model.layers.1.mlp.experts.w13_weight") +
	                        3 * 128 * rb,
	                    want, 128 * rb);
	tm_check_coverage(f.c, f.p, 4);
	fx_close(&f);
}

/* DeepSeek with q_lora_rank null: q_proj split by heads of (nope + rope) rows. */
static void test_deepseek_no_qlora(void **state)
{
	(void)state;
	char cfg[1024];
	tm_model *m = tm_deepseek(SEED, 0, cfg, sizeof(cfg));
	char *q = strstr(cfg, "\"q_lora_rank\":128");
	assert_non_null(q);
	memcpy(q, "\"q_lora_rank\":nul", 17);
	memmove(q + 18, q + 17, strlen(q + 17) + 1);
	q[17] = 'l';
	for (int i = 0; i < 3; i++) {
		const char *leaf[] = {"q_a_proj.weight", "q_a_layernorm.weight", "q_b_proj.weight"};
		for (int k = 0; k < 3; k++) {
			char b[160];
			snprintf(b, sizeof(b), "model.layers.%d.self_attn.%s", i, leaf[k]);
			tm_remove(m, b);
		}
		char b[160];
		snprintf(b, sizeof(b), "model.layers.%d.self_attn.q_proj.weight", i);
		tm_add2(m, b, 512, 256);
	}
	fx f;
	fx_open(&f, m, cfg, 2, 1, 0, true);
	shp(&f, 1, "model.layers.1.self_attn.q_proj.weight", 2, 256, 256, 0);
	assert_int_equal(tm_ix(f.p, 1, "model.layers.1.self_attn.q_a_proj.weight"), -1);
	size_t rb;
	const uint8_t *want = src_rows(&f, "model.layers.1.self_attn.q_proj.weight", 256, &rb);
	assert_memory_equal(out_bytes(&f, 1, "model.layers.1.self_attn.q_proj.weight"), want,
	                    256 * rb);
	fx_close(&f);
}

/* Gemma: H 4, KV 1, head_dim 128 (H x d = 512 against hidden 256), I 512, V 1000;
 * version 2 and 3 add the norms around the MLP, 3 q_norm / k_norm. */
static tm_model *tm_gemma(int version, int lm_head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, 256, lm_head);
	for (int i = 0; i < 2; i++) {
		char b[200];
		tm_attn(m, i, 4, 1, 128, 256, 0, version == 3);
		tm_mlp(m, i, "mlp.", 512, 256);
		if (version >= 2) {
			tm_fmt(b, sizeof(b), TM_L, i, "pre_feedforward_layernorm.weight");
			tm_add2(m, b, 256, 0);
			tm_fmt(b, sizeof(b), TM_L, i, "post_feedforward_layernorm.weight");
			tm_add2(m, b, 256, 0);
		}
	}
	return m;
}

#define GEMMA_CFG(arch, mt, tie)                                                                   \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"" mt "\",\"hidden_size\":256,"         \
	"\"num_attention_heads\":4,\"num_key_value_heads\":1,\"head_dim\":128,"                    \
	"\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":2" tie "}"

/* tie_word_embeddings absent: Gemma ties (transformers' GemmaConfig default, and
 * save_pretrained leaves the key out), so the checkpoint has no lm_head. */
static void test_gemma_tied_default(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_gemma(1, 0), GEMMA_CFG("GemmaForCausalLM", "gemma", ""), 4, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "gemma");
	assert_true(shardmap_tied_lm_head(f.p));
	assert_int_equal(tm_ix(f.p, 0, "lm_head.weight"), -1);
	/* T 4: one q head of 128 rows, the single kv head on every rank */
	shp(&f, 3, "model.layers.0.self_attn.qkv_proj.weight", 2, 384, 256, 0);
	shp(&f, 3, "model.layers.0.self_attn.o_proj.weight", 2, 256, 128, 0);
	shp(&f, 3, "model.embed_tokens.weight", 2, 256, 256, 0);
	size_t rb;
	const uint8_t *got = out_bytes(&f, 3, "model.layers.0.self_attn.qkv_proj.weight");
	const uint8_t *q = src_rows(&f, "model.layers.0.self_attn.q_proj.weight", 384, &rb);
	const uint8_t *k = src_rows(&f, "model.layers.0.self_attn.k_proj.weight", 0, &rb);
	const uint8_t *v = src_rows(&f, "model.layers.0.self_attn.v_proj.weight", 0, &rb);
	assert_int_equal(rb, 512);
	assert_memory_equal(got, q, 128 * rb);
	assert_memory_equal(got + 128 * rb, k, 128 * rb);
	assert_memory_equal(got + 256 * rb, v, 128 * rb);
	fx_close(&f);
	/* given false, the LM head is the checkpoint's own */
	fx_open(&f, tm_gemma(1, 1),
	        GEMMA_CFG("GemmaForCausalLM", "gemma", ",\"tie_word_embeddings\":false"), 4, 1, 0,
	        true);
	assert_false(shardmap_tied_lm_head(f.p));
	shp(&f, 2, "lm_head.weight", 2, 256, 256, 0);
	fx_close(&f);
}

static void test_gemma_errors(void **state)
{
	(void)state;
	wt_errbuf err = {0};
	/* tied given false without an lm_head: missing, named */
	assert_int_equal(
	    plan_err(tm_gemma(1, 0),
	             GEMMA_CFG("GemmaForCausalLM", "gemma", ",\"tie_word_embeddings\":false"),
	             &err),
	    WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "lm_head.weight"));
	/* the default is the family's: Llama's absent key means untied */
	assert_int_equal(plan_err(tm_gemma(1, 0), GEMMA_CFG("LlamaForCausalLM", "llama", ""), &err),
	                 WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "lm_head.weight"));
	/* Gemma 2's MLP norms are unknown to Gemma (1): refused, not dropped */
	assert_int_not_equal(
	    plan_err(tm_gemma(2, 0), GEMMA_CFG("GemmaForCausalLM", "gemma", ""), &err), WT_OK);
	assert_non_null(strstr(err.msg, "feedforward_layernorm.weight': unknown tensor"));
	/* and Gemma 3 needs its q_norm / k_norm */
	assert_int_equal(
	    plan_err(tm_gemma(2, 0), GEMMA_CFG("Gemma3ForCausalLM", "gemma3_text", ""), &err),
	    WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "q_norm"));
}

static void test_gemma2_gemma3(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_gemma(3, 0), GEMMA_CFG("Gemma3ForCausalLM", "gemma3_text", ""), 2, 1, 0,
	        true);
	assert_string_equal(shardmap_family(f.p), "gemma3_text");
	shp(&f, 1, "model.layers.1.pre_feedforward_layernorm.weight", 1, 256, 0, 0);
	shp(&f, 1, "model.layers.1.self_attn.k_norm.weight", 1, 128, 0, 0);
	shp(&f, 1, "model.layers.1.mlp.gate_up_proj.weight", 2, 512, 256, 0);
	size_t rb;
	const uint8_t *want =
	    src_rows(&f, "model.layers.1.post_feedforward_layernorm.weight", 0, &rb);
	assert_memory_equal(out_bytes(&f, 1, "model.layers.1.post_feedforward_layernorm.weight"),
	                    want, 256 * rb);
	fx_close(&f);
	static const uint32_t dense[][2] = {{1, 1}, {2, 1}, {4, 1}};
	coverage(tm_gemma(1, 0), GEMMA_CFG("GemmaForCausalLM", "gemma", ""), 1, dense, 3);
	coverage(tm_gemma(2, 0), GEMMA_CFG("Gemma2ForCausalLM", "gemma2", ""), 1, dense, 3);
	coverage(tm_gemma(3, 0), GEMMA_CFG("Gemma3ForCausalLM", "gemma3_text", ""), 1, dense, 3);
}

static void test_phi3_fused(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_phi3(SEED, 0), tm_phi3_cfg, 8, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "phi3");
	/* T 8 > KV 2: rank 5 has q head 5 and kv head 5 / 4 = 1 (k rows 256 + 32, v 320 + 32) */
	shp(&f, 5, "model.layers.1.self_attn.qkv_proj.weight", 2, 96, 256, 0);
	size_t rb;
	const char *qkv = "model.layers.1.self_attn.qkv_proj.weight";
	const uint8_t *got = out_bytes(&f, 5, qkv);
	const uint8_t *q = src_rows(&f, qkv, 5 * 32, &rb);
	const uint8_t *k = src_rows(&f, qkv, 256 + 32, &rb);
	const uint8_t *v = src_rows(&f, qkv, 320 + 32, &rb);
	assert_memory_equal(got, q, 32 * rb);
	assert_memory_equal(got + 32 * rb, k, 32 * rb);
	assert_memory_equal(got + 64 * rb, v, 32 * rb);
	/* gate_up [gate_r ; up_r]: rows 5 * 64 and 512 + 5 * 64 */
	const char *gu = "model.layers.0.mlp.gate_up_proj.weight";
	shp(&f, 5, gu, 2, 128, 256, 0);
	got = out_bytes(&f, 5, gu);
	const uint8_t *gate = src_rows(&f, gu, 320, &rb), *up = src_rows(&f, gu, 512 + 320, &rb);
	assert_memory_equal(got, gate, 64 * rb);
	assert_memory_equal(got + 64 * rb, up, 64 * rb);
	shp(&f, 5, "model.layers.0.mlp.down_proj.weight", 2, 256, 64, 0);
	fx_close(&f);
	static const uint32_t dense[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_phi3(SEED, 0), tm_phi3_cfg, 2, dense, 4);
	/* a fused tensor whose rows are not (H + 2 KV) * d: refused, named */
	tm_model *m = tm_phi3(SEED, 0);
	tm_remove(m, "model.layers.1.self_attn.qkv_proj.weight");
	tm_lin_l(m, 1, "self_attn.qkv_proj.weight", 256 * 3, 256, 0);
	wt_errbuf err = {0};
	assert_int_equal(plan_err(m, tm_phi3_cfg, &err), WT_ESHAPE);
	assert_non_null(strstr(err.msg, "model.layers.1.self_attn.qkv_proj.weight"));
}

/* DeepSeek-V2 from the V3 model: architectures and model_type renamed, without
 * e_score_correction_bias unless bias, without layer 2 (V3's MTP) unless mtp. */
static tm_model *tm_deepseek_v2(char *cfg, size_t cap, bool bias, bool mtp)
{
	tm_model *m = tm_deepseek(SEED, 0, cfg, cap);
	strstr(cfg, "DeepseekV3ForCausalLM")[9] = '2';
	strstr(cfg, "\"deepseek_v3\"")[11] = '2';
	for (size_t k = m->n; k-- > 0;) {
		const char *n = m->name[k];
		if ((!bias && strstr(n, "e_score_correction_bias") != NULL) ||
		    (!mtp && strncmp(n, "model.layers.2.", 15) == 0))
			tm_remove(m, n);
	}
	return m;
}

static void test_deepseek_v2(void **state)
{
	(void)state;
	char cfg[1024];
	fx f;
	fx_open(&f, tm_deepseek_v2(cfg, sizeof(cfg), false, false), cfg, 2, 2, 0, true);
	assert_string_equal(shardmap_family(f.p), "deepseek_v2");
	shp(&f, 3, "model.layers.1.self_attn.q_b_proj.weight", 2, 256, 128, 0);
	shp(&f, 3, "model.layers.1.mlp.experts.w13_weight", 3, 2, 512, 256);
	assert_int_equal(tm_ix(f.p, 3, "model.layers.1.mlp.gate.e_score_correction_bias"), -1);
	fx_close(&f);
	wt_errbuf err = {0};
	/* V3's routing bias is not a V2 tensor: refused, not dropped */
	assert_int_equal(plan_err(tm_deepseek_v2(cfg, sizeof(cfg), true, false), cfg, &err),
	                 WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "e_score_correction_bias"));
	/* nor is a layer past num_hidden_layers (V3 drops its MTP layer, V2 has none) */
	assert_int_not_equal(plan_err(tm_deepseek_v2(cfg, sizeof(cfg), false, true), cfg, &err),
	                     WT_OK);
	assert_non_null(strstr(err.msg, "model.layers.2."));
	/* and V3 needs the bias */
	char v3[1024];
	tm_model *m = tm_deepseek(SEED, 0, v3, sizeof(v3));
	tm_remove(m, "model.layers.1.mlp.gate.e_score_correction_bias");
	assert_int_equal(plan_err(m, v3, &err), WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "e_score_correction_bias"));
}

/* StarCoder2: H 8, KV 2, d 32, I 1024, V 1000, tied (key absent); LayerNorm
 * biases, linear biases when bias, c_fc / c_proj. */
static const char sc2_cfg[] =
    "{\"architectures\":[\"Starcoder2ForCausalLM\"],\"model_type\":\"starcoder2\","
    "\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
    "\"intermediate_size\":1024,\"vocab_size\":1000,\"num_hidden_layers\":2}";

static tm_model *tm_starcoder2(bool bias)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, 256, 0);
	tm_add2(m, "model.norm.bias", 256, 0);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, 256, bias, 0);
		tm_lin_l(m, i, "input_layernorm.bias", 256, 0, 0);
		tm_lin_l(m, i, "post_attention_layernorm.bias", 256, 0, 0);
		tm_lin_l(m, i, "mlp.c_fc.weight", 1024, 256, 0);
		tm_lin_l(m, i, "mlp.c_proj.weight", 256, 1024, 0);
		if (bias) {
			tm_lin_l(m, i, "self_attn.o_proj.bias", 256, 0, 0);
			tm_lin_l(m, i, "mlp.c_fc.bias", 1024, 0, 0);
			tm_lin_l(m, i, "mlp.c_proj.bias", 256, 0, 0);
		}
	}
	return m;
}

static void test_starcoder2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_starcoder2(true), sc2_cfg, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "starcoder2");
	assert_true(shardmap_tied_lm_head(f.p));
	size_t rb;
	const char *fc = "model.layers.1.mlp.c_fc.weight", *fcb = "model.layers.1.mlp.c_fc.bias";
	shp(&f, 1, fc, 2, 512, 256, 0);
	const uint8_t *want = src_rows(&f, fc, 512, &rb);
	assert_memory_equal(out_bytes(&f, 1, fc), want, 512 * rb);
	want = src_rows(&f, fcb, 512, &rb);
	assert_memory_equal(out_bytes(&f, 1, fcb), want, 512 * rb);
	shp(&f, 1, "model.layers.1.mlp.c_proj.weight", 2, 256, 512, 0);
	/* the row-parallel bias whole on every rank (the engine adds it once) */
	const char *pb = "model.layers.1.mlp.c_proj.bias";
	shp(&f, 1, pb, 1, 256, 0, 0);
	want = src_rows(&f, pb, 0, &rb);
	assert_memory_equal(out_bytes(&f, 1, pb), want, 256 * rb);
	shp(&f, 1, "model.norm.bias", 1, 256, 0, 0);
	fx_close(&f);
	/* use_bias false: no linear biases, the LayerNorms keep theirs */
	fx_open(&f, tm_starcoder2(false), sc2_cfg, 4, 1, 0, false);
	assert_int_equal(tm_ix(f.p, 0, "model.layers.0.mlp.c_fc.bias"), -1);
	fx_close(&f);
	tm_model *m = tm_starcoder2(false);
	tm_remove(m, "model.layers.0.input_layernorm.bias");
	wt_errbuf err = {0};
	assert_int_equal(plan_err(m, sc2_cfg, &err), WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "model.layers.0.input_layernorm.bias"));
	static const uint32_t dense[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_starcoder2(true), sc2_cfg, 2, dense, 4);
}

/* GLM-4: H 8, KV 2, head_dim 64, I 384, q/k/v biases, gate_up_proj fused in the
 * checkpoint; glm4 (GLM-4-0414) adds two norms per layer. */
#define GLM_CFG(arch, mt)                                                                          \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"" mt "\",\"hidden_size\":256,"         \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":64,"                     \
	"\"intermediate_size\":384,\"vocab_size\":1000,\"num_hidden_layers\":2,"                   \
	"\"tie_word_embeddings\":false}"

static tm_model *tm_glm(bool glm4)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, 256, 1);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 64, 256, 1, 0);
		tm_lin_l(m, i, "mlp.gate_up_proj.weight", 768, 256, 0);
		tm_lin_l(m, i, "mlp.down_proj.weight", 256, 384, 0);
		if (glm4) {
			tm_lin_l(m, i, "post_self_attn_layernorm.weight", 256, 0, 0);
			tm_lin_l(m, i, "post_mlp_layernorm.weight", 256, 0, 0);
		}
	}
	return m;
}

static void test_glm(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_glm(true), GLM_CFG("Glm4ForCausalLM", "glm4"), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "glm4");
	/* [gate_r ; up_r]: rows 192.. and 384 + 192.. of the fused source */
	const char *gu = "model.layers.1.mlp.gate_up_proj.weight";
	shp(&f, 1, gu, 2, 384, 256, 0);
	size_t rb;
	const uint8_t *gate = src_rows(&f, gu, 192, &rb), *up = src_rows(&f, gu, 576, &rb);
	const uint8_t *got = out_bytes(&f, 1, gu);
	assert_memory_equal(got, gate, 192 * rb);
	assert_memory_equal(got + 192 * rb, up, 192 * rb);
	shp(&f, 1, "model.layers.1.self_attn.qkv_proj.bias", 1, 256 + 2 * 64, 0, 0);
	shp(&f, 1, "model.layers.1.post_mlp_layernorm.weight", 1, 256, 0, 0);
	fx_close(&f);
	/* GLM (glm-4-9b-hf) has no such norms: refused, named */
	wt_errbuf err = {0};
	assert_int_not_equal(plan_err(tm_glm(true), GLM_CFG("GlmForCausalLM", "glm"), &err), WT_OK);
	assert_non_null(strstr(err.msg, "post_"));
	static const uint32_t dense[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_glm(false), GLM_CFG("GlmForCausalLM", "glm"), 2, dense, 4);
}

/* OLMo 2: H 8, KV 2, d 32; no input_layernorm, norms after the blocks, q_norm /
 * k_norm over all of q (256) and k (64). */
static const char olmo2_cfg[] =
    "{\"architectures\":[\"Olmo2ForCausalLM\"],\"model_type\":\"olmo2\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":512,"
    "\"vocab_size\":1000,\"num_hidden_layers\":2,\"tie_word_embeddings\":false}";

static tm_model *tm_olmo2(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, 256, 1);
	static const struct {
		const char *leaf;
		int64_t n, k;
	} t[] = {{"self_attn.q_proj.weight", 256, 256},
	         {"self_attn.k_proj.weight", 64, 256},
	         {"self_attn.v_proj.weight", 64, 256},
	         {"self_attn.o_proj.weight", 256, 256},
	         {"self_attn.q_norm.weight", 256, 0},
	         {"self_attn.k_norm.weight", 64, 0},
	         {"post_attention_layernorm.weight", 256, 0},
	         {"post_feedforward_layernorm.weight", 256, 0}};
	for (int i = 0; i < 2; i++) {
		for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++)
			tm_lin_l(m, i, t[k].leaf, t[k].n, t[k].k, 0);
		tm_mlp(m, i, "mlp.", 512, 256);
	}
	return m;
}

static void test_olmo2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_olmo2(), olmo2_cfg, 4, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "olmo2");
	/* the full-width q / k norms on every rank, as stored */
	const char *qn = "model.layers.1.self_attn.q_norm.weight";
	shp(&f, 3, qn, 1, 256, 0, 0);
	shp(&f, 3, "model.layers.1.self_attn.k_norm.weight", 1, 64, 0, 0);
	size_t rb;
	const uint8_t *want = src_rows(&f, qn, 0, &rb);
	assert_memory_equal(out_bytes(&f, 3, qn), want, 256 * rb);
	assert_int_equal(tm_ix(f.p, 3, "model.layers.1.input_layernorm.weight"), -1);
	fx_close(&f);
	/* a Llama-style input_layernorm is not an OLMo 2 tensor: refused, named */
	tm_model *m = tm_olmo2();
	tm_lin_l(m, 0, "input_layernorm.weight", 256, 0, 0);
	wt_errbuf err = {0};
	assert_int_equal(plan_err(m, olmo2_cfg, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "model.layers.0.input_layernorm.weight"));
	static const uint32_t dense[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_olmo2(), olmo2_cfg, 2, dense, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_qwen2_tied_bias),
	    cmocka_unit_test(test_qwen3_qknorm),
	    cmocka_unit_test(test_mixtral_ep4),
	    cmocka_unit_test(test_mixtral_tp2),
	    cmocka_unit_test(test_qwen2_moe),
	    cmocka_unit_test(test_deepseek_mla),
	    cmocka_unit_test(test_bert),
	    cmocka_unit_test(test_qwen3_moe),
	    cmocka_unit_test(test_deepseek_no_qlora),
	    cmocka_unit_test(test_coverage_all),
	    cmocka_unit_test(test_gemma_tied_default),
	    cmocka_unit_test(test_gemma_errors),
	    cmocka_unit_test(test_gemma2_gemma3),
	    cmocka_unit_test(test_phi3_fused),
	    cmocka_unit_test(test_deepseek_v2),
	    cmocka_unit_test(test_starcoder2),
	    cmocka_unit_test(test_glm),
	    cmocka_unit_test(test_olmo2),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
