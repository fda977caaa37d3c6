/*
 * test_shardmap_util.h — tiny model builders for the shardmap tests (test code
 * only, included by tests/test_shardmap*.c). Tensor values are finite,
 * deterministic (splitmix64 of a fixed seed printed by each test) and kept in
 * memory so tests can compute expected slices directly from the source.
 */
#ifndef WT_TEST_SHARDMAP_UTIL_H
#define WT_TEST_SHARDMAP_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "loader/loader.h"
#include "shardmap/plan_int.h"
#include "util/testutil.h"

#define TM_MAX 800

typedef struct tm_model {
	st_desc d[TM_MAX];
	char name[TM_MAX][160];
	void *data[TM_MAX];
	size_t n;
	uint64_t seed;
	wt_dtype dt; /* default float dtype */
} tm_model;

static __attribute__((unused)) tm_model *tm_new(uint64_t seed, wt_dtype dt)
{
	tm_model *m = calloc(1, sizeof(*m));
	m->seed = seed;
	m->dt = dt;
	return m;
}

static __attribute__((unused)) void tm_free(tm_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->data[i]);
	free(m);
}

/* Add a tensor of dtype dt (WT_DTYPE_INVALID = model default) filled with values in [-1, 1). */
static __attribute__((unused)) void *tm_add(tm_model *m, const char *name, wt_dtype dt, int ndim,
                                            int64_t a, int64_t b, int64_t c)
{
	if (dt == WT_DTYPE_INVALID)
		dt = m->dt;
	st_desc *d = &m->d[m->n];
	snprintf(m->name[m->n], sizeof(m->name[0]), "%s", name);
	d->name = m->name[m->n];
	d->dtype = dt;
	d->ndim = ndim;
	d->shape[0] = a;
	d->shape[1] = b;
	d->shape[2] = c;
	uint64_t n = 1;
	for (int k = 0; k < ndim; k++)
		n *= (uint64_t)d->shape[k];
	size_t es = wt_dtype_size(dt);
	uint8_t *p = malloc(n * es + 1);
	uint64_t s = m->seed + m->n * 7919;
	for (uint64_t i = 0; i < n; i++) {
		float v =
		    (float)((double)(tu_splitmix64(&s) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
		if (dt == WT_F32)
			memcpy(p + i * 4, &v, 4);
		else if (dt == WT_BF16) {
			uint16_t h = kern_f32_to_bf16(v);
			memcpy(p + i * 2, &h, 2);
		} else if (dt == WT_F16) {
			uint16_t h = kern_f32_to_f16(v);
			memcpy(p + i * 2, &h, 2);
		} else if (dt == WT_F8_E4M3) {
			p[i] = kern_f32_to_e4m3(v * 200.0f);
		} else {
			memcpy(p + i * es, &s, es < 8 ? es : 8);
		}
	}
	m->data[m->n++] = p;
	return p;
}

static __attribute__((unused)) void tm_add2(tm_model *m, const char *name, int64_t a, int64_t b)
{
	tm_add(m, name, WT_DTYPE_INVALID, b ? 2 : 1, a, b, 0);
}

static __attribute__((unused)) int tm_find(const tm_model *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->name[i], name) == 0)
			return (int)i;
	return -1;
}

static __attribute__((unused)) void tm_remove(tm_model *m, const char *name)
{
	int k = tm_find(m, name);
	if (k < 0)
		return;
	free(m->data[k]);
	for (size_t i = (size_t)k; i + 1 < m->n; i++) {
		m->d[i] = m->d[i + 1];
		memcpy(m->name[i], m->name[i + 1], sizeof(m->name[0]));
		m->d[i].name = m->name[i];
		m->data[i] = m->data[i + 1];
	}
	m->n--;
}

static __attribute__((unused)) int tm_write(const tm_model *m, const char *dir, const char *config)
{
	char *cfg = tu_path(dir, "config.json");
	FILE *f = fopen(cfg, "w");
	free(cfg);
	if (!f)
		return -1;
	fputs(config, f);
	fclose(f);
	char *st = tu_path(dir, "model.safetensors");
	wt_errbuf err = {0};
	int rv = st_write_path(st, m->d, (const void *const *)m->data, m->n, NULL, 0, &err);
	free(st);
	if (rv)
		fprintf(stderr, "tm_write: %s\n", err.msg);
	return rv;
}

#define TM_L "model.layers.%d."

static __attribute__((unused)) void tm_fmt(char *b, size_t n, const char *fmt, int i,
                                           const char *leaf)
{
	char pre[64];
	snprintf(pre, sizeof(pre), fmt, i);
	snprintf(b, n, "%s%s", pre, leaf);
}

/* One per-layer tensor of a test model: the name after the layer's prefix, the shape [a, b]
 * (b 0: 1-D [a]) and the builder's option bits it needs (0: always there). */
typedef struct tm_leaf {
	const char *leaf;
	int64_t a, b;
	int when;
} tm_leaf;

#define TM_NLEAVES(L) (sizeof(L) / sizeof((L)[0]))

/* Add leaves L[0..n) to each of layers 0..layers-1 under fmt (one %d, the layer: TM_L for
 * Llama's names); a leaf whose `when` shares no bit with opts is left out. */
static __attribute__((unused)) void tm_layers(tm_model *m, const char *fmt, int layers,
                                              const tm_leaf *L, size_t n, int opts)
{
	char b[200];
	for (int i = 0; i < layers; i++)
		for (size_t k = 0; k < n; k++) {
			if (L[k].when != 0 && !(L[k].when & opts))
				continue;
			tm_fmt(b, sizeof(b), fmt, i, L[k].leaf);
			tm_add2(m, b, L[k].a, L[k].b);
		}
}

/* Llama-style attention + norms of layer i. */
static __attribute__((unused)) void tm_attn(tm_model *m, int i, int64_t H, int64_t KV, int64_t d,
                                            int64_t hid, int bias, int qknorm)
{
	char b[200];
	tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
	tm_add2(m, b, hid, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
	tm_add2(m, b, hid, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "self_attn.q_proj.weight");
	tm_add2(m, b, H * d, hid);
	tm_fmt(b, sizeof(b), TM_L, i, "self_attn.k_proj.weight");
	tm_add2(m, b, KV * d, hid);
	tm_fmt(b, sizeof(b), TM_L, i, "self_attn.v_proj.weight");
	tm_add2(m, b, KV * d, hid);
	tm_fmt(b, sizeof(b), TM_L, i, "self_attn.o_proj.weight");
	tm_add2(m, b, hid, H * d);
	if (bias) {
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.q_proj.bias");
		tm_add2(m, b, H * d, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.k_proj.bias");
		tm_add2(m, b, KV * d, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.v_proj.bias");
		tm_add2(m, b, KV * d, 0);
	}
	if (qknorm) {
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.q_norm.weight");
		tm_add2(m, b, d, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.k_norm.weight");
		tm_add2(m, b, d, 0);
	}
}

static __attribute__((unused)) void tm_mlp(tm_model *m, int i, const char *mod, int64_t I,
                                           int64_t hid)
{
	char b[200], leaf[128];
	snprintf(leaf, sizeof(leaf), "%sgate_proj.weight", mod);
	tm_fmt(b, sizeof(b), TM_L, i, leaf);
	tm_add2(m, b, I, hid);
	snprintf(leaf, sizeof(leaf), "%sup_proj.weight", mod);
	tm_fmt(b, sizeof(b), TM_L, i, leaf);
	tm_add2(m, b, I, hid);
	snprintf(leaf, sizeof(leaf), "%sdown_proj.weight", mod);
	tm_fmt(b, sizeof(b), TM_L, i, leaf);
	tm_add2(m, b, hid, I);
}

static __attribute__((unused)) void tm_experts(tm_model *m, int i, const char *mod, int64_t E,
                                               int64_t Ie, int64_t hid, const char *g,
                                               const char *u, const char *dn)
{
	char b[200], leaf[128];
	for (int j = 0; j < E; j++) {
		snprintf(leaf, sizeof(leaf), "%s%d.%s.weight", mod, j, g);
		tm_fmt(b, sizeof(b), TM_L, i, leaf);
		tm_add2(m, b, Ie, hid);
		snprintf(leaf, sizeof(leaf), "%s%d.%s.weight", mod, j, u);
		tm_fmt(b, sizeof(b), TM_L, i, leaf);
		tm_add2(m, b, Ie, hid);
		snprintf(leaf, sizeof(leaf), "%s%d.%s.weight", mod, j, dn);
		tm_fmt(b, sizeof(b), TM_L, i, leaf);
		tm_add2(m, b, hid, Ie);
	}
}

static __attribute__((unused)) void tm_top(tm_model *m, int64_t V, int64_t hid, int lm_head)
{
	tm_add2(m, "model.embed_tokens.weight", V, hid);
	tm_add2(m, "model.norm.weight", hid, 0);
	if (lm_head)
		tm_add2(m, "lm_head.weight", V, hid);
}

/* The llama fixture dims: hidden 256, H 8, KV 2, head_dim 32, I 512, V 1000, 2 layers. */
static const char tm_llama_cfg[] =
    "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":32,"
    "\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":2,"
    "\"tie_word_embeddings\":false}";

static __attribute__((unused)) tm_model *tm_llama(uint64_t seed, wt_dtype dt)
{
	tm_model *m = tm_new(seed, dt);
	tm_top(m, 1000, 256, 1);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, 256, 0, 0);
		tm_mlp(m, i, "mlp.", 512, 256);
	}
	tm_add(m, "model.layers.0.self_attn.rotary_emb.inv_freq", WT_F32, 1, 16, 0, 0);
	return m;
}

/* Make a tensor's F32 values positive (scales). */
static __attribute__((unused)) void tm_abs(tm_model *m, const char *name)
{
	int k = tm_find(m, name);
	uint64_t n = tu_desc_nbytes(&m->d[k]) / 4;
	float *v = m->data[k];
	for (uint64_t i = 0; i < n; i++)
		v[i] = (v[i] < 0 ? -v[i] : v[i]) * 0.01f + 0.001f;
}

/* A linear weight: plain, or FP8 with its scales (fp8: 1 block, 2 per-tensor). */
static __attribute__((unused)) void tm_lin(tm_model *m, const char *name, int64_t N, int64_t K,
                                           int fp8)
{
	if (!fp8) {
		tm_add2(m, name, N, K);
		return;
	}
	tm_add(m, name, WT_F8_E4M3, 2, N, K, 0);
	char b[200];
	size_t n = strlen(name) - strlen("weight");
	if (fp8 == 1) {
		snprintf(b, sizeof(b), "%.*sweight_scale_inv", (int)n, name);
		tm_add(m, b, WT_F32, 2, (N + 127) / 128, (K + 127) / 128, 0);
		tm_abs(m, b);
	} else {
		snprintf(b, sizeof(b), "%.*sweight_scale", (int)n, name);
		tm_add(m, b, WT_F32, 0, 0, 0, 0);
		tm_abs(m, b);
		snprintf(b, sizeof(b), "%.*sinput_scale", (int)n, name);
		tm_add(m, b, WT_F32, 0, 0, 0, 0);
		tm_abs(m, b);
	}
}

static __attribute__((unused)) void tm_lin_l(tm_model *m, int i, const char *leaf, int64_t N,
                                             int64_t K, int fp8)
{
	char b[200];
	tm_fmt(b, sizeof(b), TM_L, i, leaf);
	tm_lin(m, b, N, K, fp8);
}

/* llama_fp8: llama dims, per-tensor FP8 linear weights with weight_scale/input_scale. */
static const char tm_llama_fp8_cfg[] =
    "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":32,"
    "\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":2,"
    "\"tie_word_embeddings\":false,\"quantization_config\":{\"quant_method\":\"fp8\"}}";

static __attribute__((unused)) tm_model *tm_llama_fp8(uint64_t seed)
{
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1000, 256, 1);
	for (int i = 0; i < 2; i++) {
		char b[200];
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_add2(m, b, 256, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
		tm_add2(m, b, 256, 0);
		tm_lin_l(m, i, "self_attn.q_proj.weight", 256, 256, 2);
		tm_lin_l(m, i, "self_attn.k_proj.weight", 64, 256, 2);
		tm_lin_l(m, i, "self_attn.v_proj.weight", 64, 256, 2);
		tm_lin_l(m, i, "self_attn.o_proj.weight", 256, 256, 2);
		tm_lin_l(m, i, "mlp.gate_proj.weight", 512, 256, 2);
		tm_lin_l(m, i, "mlp.up_proj.weight", 512, 256, 2);
		tm_lin_l(m, i, "mlp.down_proj.weight", 256, 512, 2);
	}
	return m;
}

/* Phi-3: H 8, KV 2, d 32, I 512, V 1000; q/k/v and gate/up fused in the checkpoint
 * (qkv_proj [384, 256], gate_up_proj [1024, 256]); fp8 as tm_lin's. */
static const char tm_phi3_cfg[] =
    "{\"architectures\":[\"Phi3ForCausalLM\"],\"model_type\":\"phi3\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":512,"
    "\"vocab_size\":1000,\"num_hidden_layers\":2,\"tie_word_embeddings\":false}";

static __attribute__((unused)) tm_model *tm_phi3(uint64_t seed, int fp8)
{
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1000, 256, 1);
	for (int i = 0; i < 2; i++) {
		tm_lin_l(m, i, "input_layernorm.weight", 256, 0, 0);
		tm_lin_l(m, i, "post_attention_layernorm.weight", 256, 0, 0);
		tm_lin_l(m, i, "self_attn.qkv_proj.weight", 384, 256, fp8);
		tm_lin_l(m, i, "self_attn.o_proj.weight", 256, 256, fp8);
		tm_lin_l(m, i, "mlp.gate_up_proj.weight", 1024, 256, fp8);
		tm_lin_l(m, i, "mlp.down_proj.weight", 256, 512, fp8);
	}
	return m;
}

static const char tm_qwen2_cfg[] =
    "{\"architectures\":[\"Qwen2ForCausalLM\"],\"model_type\":\"qwen2\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":512,"
    "\"vocab_size\":1024,\"num_hidden_layers\":2,\"tie_word_embeddings\":true}";

static __attribute__((unused)) tm_model *tm_qwen2(uint64_t seed)
{
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1024, 256, 0);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, 256, 1, 0);
		tm_mlp(m, i, "mlp.", 512, 256);
	}
	return m;
}

static const char tm_qwen3_cfg[] =
    "{\"architectures\":[\"Qwen3ForCausalLM\"],\"model_type\":\"qwen3\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":4,\"head_dim\":64,"
    "\"intermediate_size\":512,\"vocab_size\":1024,\"num_hidden_layers\":2,"
    "\"tie_word_embeddings\":false}";

static __attribute__((unused)) tm_model *tm_qwen3(uint64_t seed)
{
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1024, 256, 1);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 4, 64, 256, 0, 1);
		tm_mlp(m, i, "mlp.", 512, 256);
	}
	return m;
}

static const char tm_mixtral_cfg[] =
    "{\"architectures\":[\"MixtralForCausalLM\"],\"model_type\":\"mixtral\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":256,"
    "\"num_local_experts\":6,\"vocab_size\":1000,\"num_hidden_layers\":2}";

static __attribute__((unused)) tm_model *tm_mixtral(uint64_t seed)
{
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1000, 256, 1);
	for (int i = 0; i < 2; i++) {
		char b[200];
		tm_attn(m, i, 8, 2, 32, 256, 0, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.gate.weight");
		tm_add2(m, b, 6, 256);
		tm_experts(m, i, "block_sparse_moe.experts.", 6, 256, 256, "w1", "w3", "w2");
	}
	return m;
}

static const char tm_qwen2_moe_cfg[] =
    "{\"architectures\":[\"Qwen2MoeForCausalLM\"],\"model_type\":\"qwen2_moe\","
    "\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":8,"
    "\"intermediate_size\":512,\"moe_intermediate_size\":128,"
    "\"shared_expert_intermediate_size\":256,\"num_experts\":4,\"mlp_only_layers\":[0],"
    "\"decoder_sparse_step\":1,\"vocab_size\":1024,\"num_hidden_layers\":2}";

static __attribute__((unused)) tm_model *tm_qwen2_moe(uint64_t seed)
{
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1024, 256, 1);
	char b[200];
	for (int i = 0; i < 2; i++)
		tm_attn(m, i, 8, 8, 32, 256, 1, 0);
	tm_mlp(m, 0, "mlp.", 512, 256);
	tm_fmt(b, sizeof(b), TM_L, 1, "mlp.gate.weight");
	tm_add2(m, b, 4, 256);
	tm_experts(m, 1, "mlp.experts.", 4, 128, 256, "gate_proj", "up_proj", "down_proj");
	tm_mlp(m, 1, "mlp.shared_expert.", 256, 256);
	tm_fmt(b, sizeof(b), TM_L, 1, "mlp.shared_expert_gate.weight");
	tm_add2(m, b, 1, 256);
	return m;
}

static const char tm_deepseek_cfg[] =
    "{\"architectures\":[\"DeepseekV3ForCausalLM\"],\"model_type\":\"deepseek_v3\","
    "\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":8,"
    "\"q_lora_rank\":128,\"kv_lora_rank\":64,\"qk_nope_head_dim\":32,\"qk_rope_head_dim\":32,"
    "\"v_head_dim\":32,\"intermediate_size\":512,\"moe_intermediate_size\":256,"
    "\"n_routed_experts\":4,\"n_shared_experts\":1,\"first_k_dense_replace\":1,"
    "\"moe_layer_freq\":1,\"vocab_size\":1000,\"num_hidden_layers\":2%s}";

/* fp8: 0 plain BF16, 1 FP8 block (weight_scale_inv). Layer 2 is the MTP layer. */
static __attribute__((unused)) tm_model *tm_deepseek(uint64_t seed, int fp8, char *cfg, size_t cap)
{
	snprintf(cfg, cap, tm_deepseek_cfg,
	         fp8 ? ",\"quantization_config\":{\"quant_method\":\"fp8\","
	               "\"weight_block_size\":[128,128]}"
	             : "");
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1000, 256, 1);
	char b[200];
	for (int i = 0; i < 3; i++) {
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_add2(m, b, 256, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
		tm_add2(m, b, 256, 0);
		tm_lin_l(m, i, "self_attn.q_a_proj.weight", 128, 256, fp8);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.q_a_layernorm.weight");
		tm_add2(m, b, 128, 0);
		tm_lin_l(m, i, "self_attn.q_b_proj.weight", 512, 128, fp8);
		tm_lin_l(m, i, "self_attn.kv_a_proj_with_mqa.weight", 96, 256, fp8);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.kv_a_layernorm.weight");
		tm_add2(m, b, 64, 0);
		tm_lin_l(m, i, "self_attn.kv_b_proj.weight", 512, 64, fp8);
		tm_lin_l(m, i, "self_attn.o_proj.weight", 256, 256, fp8);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.rotary_emb.inv_freq");
		tm_add(m, b, WT_F32, 1, 16, 0, 0);
		if (i == 0) {
			tm_lin_l(m, i, "mlp.gate_proj.weight", 512, 256, fp8);
			tm_lin_l(m, i, "mlp.up_proj.weight", 512, 256, fp8);
			tm_lin_l(m, i, "mlp.down_proj.weight", 256, 512, fp8);
			continue;
		}
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add2(m, b, 4, 256);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.e_score_correction_bias");
		tm_add(m, b, WT_F32, 1, 4, 0, 0);
		for (int j = 0; j < 4; j++) {
			char leaf[96];
			snprintf(leaf, sizeof(leaf), "mlp.experts.%d.gate_proj.weight", j);
			tm_lin_l(m, i, leaf, 256, 256, fp8);
			snprintf(leaf, sizeof(leaf), "mlp.experts.%d.up_proj.weight", j);
			tm_lin_l(m, i, leaf, 256, 256, fp8);
			snprintf(leaf, sizeof(leaf), "mlp.experts.%d.down_proj.weight", j);
			tm_lin_l(m, i, leaf, 256, 256, fp8);
		}
		tm_lin_l(m, i, "mlp.shared_experts.gate_proj.weight", 256, 256, fp8);
		tm_lin_l(m, i, "mlp.shared_experts.up_proj.weight", 256, 256, fp8);
		tm_lin_l(m, i, "mlp.shared_experts.down_proj.weight", 256, 256, fp8);
		if (i == 2) {
			tm_lin_l(m, i, "eh_proj.weight", 256, 512, fp8);
			tm_fmt(b, sizeof(b), TM_L, i, "enorm.weight");
			tm_add2(m, b, 256, 0);
		}
	}
	return m;
}

static const char tm_bert_cfg[] =
    "{\"architectures\":[\"BertModel\"],\"model_type\":\"bert\",\"hidden_size\":128,"
    "\"num_attention_heads\":4,\"intermediate_size\":512,\"vocab_size\":1000,"
    "\"num_hidden_layers\":2,\"max_position_embeddings\":64,\"type_vocab_size\":2}";

static __attribute__((unused)) tm_model *tm_bert(uint64_t seed)
{
	tm_model *m = tm_new(seed, WT_F32);
	tm_add2(m, "embeddings.word_embeddings.weight", 1000, 128);
	tm_add2(m, "embeddings.position_embeddings.weight", 64, 128);
	tm_add2(m, "embeddings.token_type_embeddings.weight", 2, 128);
	tm_add2(m, "embeddings.LayerNorm.weight", 128, 0);
	tm_add2(m, "embeddings.LayerNorm.bias", 128, 0);
	tm_add(m, "embeddings.position_ids", WT_I64, 2, 1, 64, 0);
	for (int i = 0; i < 2; i++) {
		static const char *const l2[][2] = {
		    {"attention.self.query", "q"}, {"attention.self.key", "q"},
		    {"attention.self.value", "q"}, {"attention.output.dense", "o"},
		    {"intermediate.dense", "i"},   {"output.dense", "d"},
		};
		for (size_t k = 0; k < 6; k++) {
			char b[200];
			int64_t N = l2[k][1][0] == 'i' ? 512 : 128,
			        K = l2[k][1][0] == 'd' ? 512 : 128;
			snprintf(b, sizeof(b), "encoder.layer.%d.%s.weight", i, l2[k][0]);
			tm_add2(m, b, N, K);
			snprintf(b, sizeof(b), "encoder.layer.%d.%s.bias", i, l2[k][0]);
			tm_add2(m, b, N, 0);
		}
		static const char *const ln[] = {"attention.output.LayerNorm", "output.LayerNorm"};
		for (size_t k = 0; k < 2; k++) {
			char b[200];
			snprintf(b, sizeof(b), "encoder.layer.%d.%s.weight", i, ln[k]);
			tm_add2(m, b, 128, 0);
			snprintf(b, sizeof(b), "encoder.layer.%d.%s.bias", i, ln[k]);
			tm_add2(m, b, 128, 0);
		}
	}
	tm_add2(m, "pooler.dense.weight", 128, 128);
	tm_add2(m, "pooler.dense.bias", 128, 0);
	return m;
}

/* Open a written folder and plan layout l. */
static __attribute__((unused)) int tm_plan(const char *dir, const wt_layout *l, store **s, ckpt **c,
                                           sm_plan **p, wt_errbuf *err)
{
	*s = NULL;
	*c = NULL;
	*p = NULL;
	int rv = store_open(s, dir, err);
	if (rv == WT_OK)
		rv = ckpt_open(c, *s, err);
	if (rv == WT_OK)
		rv = shardmap_plan(*c, l, p, err);
	return rv;
}

static __attribute__((unused)) void tm_close(store *s, ckpt *c, sm_plan *p)
{
	shardmap_plan_free(p);
	ckpt_close(c);
	store_close(s);
}

/* Produced bytes of every rank: out[rank][tensor] (name order). */
typedef struct tm_prod {
	uint32_t nr;
	size_t *n;
	void ***b;
	uint64_t **len;
	int emits;
} tm_prod;

static __attribute__((unused)) int tm_on(void *ctx, uint32_t rank, size_t ix, const void *bytes,
                                         uint64_t n, wt_errbuf *err)
{
	(void)err;
	tm_prod *pr = ctx;
	if (rank >= pr->nr || ix >= pr->n[rank] || pr->b[rank][ix])
		return WT_EINVAL;
	pr->b[rank][ix] = malloc(n ? n : 1);
	memcpy(pr->b[rank][ix], bytes, n);
	pr->len[rank][ix] = n;
	pr->emits++;
	return WT_OK;
}

static __attribute__((unused)) tm_prod *tm_produce(const ckpt *c, const sm_plan *p, int64_t only,
                                                   int *rv, wt_errbuf *err)
{
	tm_prod *pr = calloc(1, sizeof(*pr));
	pr->nr = shardmap_n_ranks(p);
	pr->n = calloc(pr->nr, sizeof(size_t));
	pr->b = calloc(pr->nr, sizeof(void **));
	pr->len = calloc(pr->nr, sizeof(uint64_t *));
	for (uint32_t r = 0; r < pr->nr; r++) {
		pr->n[r] = shardmap_rank_n_tensors(p, r);
		pr->b[r] = calloc(pr->n[r] + 1, sizeof(void *));
		pr->len[r] = calloc(pr->n[r] + 1, sizeof(uint64_t));
	}
	*rv = shardmap_produce(c, p, only, tm_on, pr, err);
	return pr;
}

static __attribute__((unused)) void tm_prod_free(tm_prod *pr)
{
	if (!pr)
		return;
	for (uint32_t r = 0; r < pr->nr; r++) {
		for (size_t i = 0; i < pr->n[r]; i++)
			free(pr->b[r][i]);
		free(pr->b[r]);
		free(pr->len[r]);
	}
	free(pr->b);
	free(pr->len);
	free(pr->n);
	free(pr);
}

/* Index of runtime tensor `name` on rank, or -1. */
static __attribute__((unused)) int tm_ix(const sm_plan *p, uint32_t rank, const char *name)
{
	for (size_t i = 0; i < shardmap_rank_n_tensors(p, rank); i++)
		if (strcmp(shardmap_rank_tensor(p, rank, i)->name, name) == 0)
			return (int)i;
	return -1;
}

/* Coverage (needs cmocka asserts): each element of a split tensor once times its replication;
 * kv_rows: the element is in the k / v rows of q/k/v fused in the checkpoint (Phi-3). */
#ifdef cmocka_unit_test
static __attribute__((unused)) int64_t expected_mult(const sm_plan *p, const char *name, int64_t KV,
                                                     bool kv_rows)
{
	const sm_family *f = p->fam;
	char buf[256];
	bool mixed; /* a released name under an alias (Qwen3-VL): the rules' own name */
	const char *cn = shardmap_alias_canon(f, true, name, buf, sizeof(buf), &mixed);
	for (size_t r = 0; cn && r < f->n_rules; r++) {
		int64_t i, j;
		if (!shardmap_match(f->rules[r].ckpt, cn, &i, &j))
			continue;
		int64_t T = p->tp, P = p->ep;
		switch (f->rules[r].kind) {
		case SM_K_REPL:
		case SM_K_REPLF: /* Step3's qkv_proj, whole on every rank */
			return T * P;
		case SM_K_QKV:
		case SM_K_QKVI: /* TeleChat2's key_value: part 1 */
			return f->rules[r].part > 0 && KV < T ? P * (T / KV) : P;
		case SM_K_QKVC:
			return kv_rows && KV < T ? P * (T / KV) : P;
		case SM_K_KVH: /* k_norm [KV, d]: replicated with its kv head */
			return KV < T ? P * (T / KV) : P;
		case SM_K_EXP13:
		case SM_K_EXP2:
		case SM_K_EXP13S:
		case SM_K_EXP2S:
		case SM_K_EXP13I:
		case SM_K_EXPGU:
		case SM_K_EXPB13:
		case SM_K_EXP1:
			return P == 1 ? 1 : T;
		case SM_K_EXPB2: /* whole per expert on every tp rank */
			return T;
		default:
			return P;
		}
	}
	return -1;
}

/* Granite 4.0's Mamba2 in_proj / conv1d (SM_K_MAMBA) when tp does not divide
 * mamba_n_groups: rows [*lo, *hi) (B and C) are on every rank; false otherwise. */
static __attribute__((unused)) bool tm_mamba_dup(const ckpt *c, const sm_plan *p, const char *name,
                                                 int64_t *lo, int64_t *hi)
{
	const sm_family *f = p->fam;
	const ckpt_config *cf = ckpt_get_config(c);
	for (size_t r = 0; f && r < f->n_rules; r++) {
		int64_t i, j;
		if (f->rules[r].kind != SM_K_MAMBA ||
		    !shardmap_match(f->rules[r].ckpt, name, &i, &j))
			continue;
		if (cf->mamba_n_groups % (int64_t)p->tp == 0)
			return false;
		int64_t im = cf->mamba_d_ssm > 0 ? cf->mamba_d_ssm /* Falcon-H1's */
		                                 : cf->mamba_expand * cf->hidden_size;
		*lo = f->rules[r].dims[0] == SM_D_MIN ? 2 * im : im;
		*hi = *lo + 2 * cf->mamba_n_groups * cf->mamba_d_state;
		return true;
	}
	return false;
}

static __attribute__((unused)) void tm_check_coverage(const ckpt *c, const sm_plan *p, int64_t KV)
{
	size_t nt = ckpt_n_tensors(c);
	uint16_t **cnt = calloc(nt, sizeof(uint16_t *));
	int64_t *vcols = calloc(nt, sizeof(int64_t)), *vn = calloc(nt, sizeof(int64_t));
	for (uint32_t r = 0; r < shardmap_n_ranks(p); r++) {
		const sm_rank *rk = &p->ranks[r];
		for (size_t o = 0; o < rk->n; o++) {
			const sm_out *out = &rk->outs[o];
			const sm_group *g = &p->groups[out->group];
			for (size_t k = 0; k < out->np; k++) {
				const sm_piece *pc = &p->pieces[out->p0 + k];
				if (pc->src == SM_ZERO)
					continue;
				uint32_t t = g->srcs[pc->src].t;
				const ckpt_tensor *ct = ckpt_tensor_at(c, t);
				/* the planner's view ([E, a, b] stacks are [E*a, b]; MXFP4
				 * blocks [.., N, G, 16] are [.., N*G*32] / (G*32); a GPT-OSS
				 * gate/up bias [E, 2I] is [E*2I, 1]) */
				int64_t rows = sm_trows(ct), cols = sm_tcols(ct);
				uint8_t mode = g->srcs[pc->src].mode;
				if (mode == SM_SRC_DQ_MX) {
					cols = ct->shape[ct->ndim - 2] * 32;
					rows = (int64_t)ct->nbytes * 2 / cols;
				} else if ((mode == SM_SRC_TRANS || mode == SM_SRC_DQ_TRANS) &&
				           g->srcs[pc->src].e2d > 0) {
					/* DBRX's 2-D [E*K, N] as [E*N, K] */
					cols = ct->shape[0] / g->srcs[pc->src].e2d;
					rows = g->srcs[pc->src].e2d * ct->shape[1];
				} else if (mode == SM_SRC_TRANS || mode == SM_SRC_DQ_TRANS) {
					/* [E, K, N] as [E*N, K] */
					cols = ct->shape[1];
					rows = ct->shape[0] * ct->shape[2];
				} else if (mode == SM_SRC_DEINT) {
					rows *= cols;
					cols = 1;
				}
				vcols[t] = cols;
				vn[t] = rows * cols;
				if (!cnt[t])
					cnt[t] = calloc((size_t)(rows * cols), sizeof(uint16_t));
				/* the piece's rectangle only: all rows of a column range,
				 * or all columns of a row range */
				int64_t a0 = pc->cols ? 0 : pc->start,
				        a1 = pc->cols ? rows : pc->start + pc->len;
				int64_t b0 = pc->cols ? pc->start : 0,
				        b1 = pc->cols ? pc->start + pc->len : cols;
				for (int64_t a = a0; a < a1; a++)
					for (int64_t b = b0; b < b1; b++)
						cnt[t][a * cols + b]++;
			}
		}
	}
	for (size_t t = 0; t < nt; t++) {
		const ckpt_tensor *ct = ckpt_tensor_at(c, t);
		bool skipped = false;
		for (size_t k = 0; k < shardmap_n_skipped(p); k++)
			skipped |= strcmp(shardmap_skipped(p, k), ct->name) == 0;
		if (skipped) {
			assert_null(cnt[t]);
			continue;
		}
		size_t nl = strlen(ct->name);
		if (!cnt[t] && ((nl > 7 && strcmp(ct->name + nl - 7, "_scales") == 0) ||
		                (nl > 6 && strcmp(ct->name + nl - 6, "_scale") == 0)))
			continue; /* MXFP4 / FP8 scales of dequantized sources: read with them */
		if (!cnt[t])
			fail_msg("tensor '%s' is not consumed by any rank", ct->name);
		int64_t n = vn[t], cols = vcols[t];
		int64_t q_rows =
		    ckpt_get_config(c)->num_attention_heads * ckpt_get_config(c)->head_dim;
		/* once per tensor: the rule lookup is the costly part */
		int64_t want_q = expected_mult(p, ct->name, KV, false),
		        want_kv = expected_mult(p, ct->name, KV, true);
		int64_t bc_lo = 0, bc_hi = 0; /* Mamba2 B / C rows on every rank */
		bool dup = tm_mamba_dup(c, p, ct->name, &bc_lo, &bc_hi);
		for (int64_t e = 0; e < n; e++) {
			int64_t want = e / cols >= q_rows ? want_kv : want_q;
			if (dup)
				want = e / cols >= bc_lo && e / cols < bc_hi
				           ? (int64_t)p->tp * p->ep
				           : want_q;
			if (cnt[t][e] != want)
				fail_msg("tensor '%s' element %lld covered %u times, want %lld (tp "
				         "%u ep %u)",
				         ct->name, (long long)e, cnt[t][e], (long long)want, p->tp,
				         p->ep);
		}
		free(cnt[t]);
	}
	free(cnt);
	free(vcols);
	free(vn);
}

#endif

#endif
