/*
 * test_shardmap_ct_util.h — compressed-tensors checkpoints for the shardmap tests,
 * made here the way compressed-tensors makes them (independently of kernels/):
 * symmetric scale s = amax / ((qmax - qmin) / 2) stored as BF16, codes
 * q = clamp(round_half_even(x / s), qmin, qmax); int4 codes packed by
 * pack_to_int32 (q + 8, element k of each run of 8 at bits 4*(k%8)).
 * The logical codes, scales and original values of every module are kept
 * so tests build expected shards and error bounds from them.
 */
#ifndef WT_TEST_SHARDMAP_CT_UTIL_H
#define WT_TEST_SHARDMAP_CT_UTIL_H

#include <math.h>

#include "test_shardmap_util.h"

typedef struct ctmod {
	char name[160]; /* module, e.g. model.layers.0.self_attn.q_proj */
	int64_t N, K, sc;
	int8_t *q; /* [N, K] codes */
	float *s;  /* [N, sc] scales (BF16 values) */
	float *x;  /* [N, K] original values */
	float in_scale;
} ctmod;

typedef struct ctm {
	tm_model *m;
	ctmod mods[64];
	size_t n;
	int bits;
	int64_t G;   /* int4 group size */
	int i8codes; /* int4 stored int-quantized (W4A8): one code per I8 byte, no packing */
} ctm;

static __attribute__((unused)) float ct_bf16(float v)
{
	return kern_bf16_to_f32(kern_f32_to_bf16(v));
}

static __attribute__((unused)) uint32_t ct_pack8(const int8_t *q)
{
	uint32_t w = 0;
	for (int i = 0; i < 8; i++)
		w |= (uint32_t)(q[i] + 8) << (4 * i);
	return w;
}

static __attribute__((unused)) void ct_add_raw(tm_model *m, const char *name, wt_dtype dt, int nd,
                                               int64_t a, int64_t b, const void *data)
{
	void *p = tm_add(m, name, dt, nd, a, b, 0);
	memcpy(p, data, tu_desc_nbytes(&m->d[m->n - 1]));
}

/* Quantize float weight `module`.weight of c->m the compressed-tensors way and replace it
 * with its compressed tensors (+ input_scale when in_scale > 0). */
static __attribute__((unused)) void ct_convert(ctm *c, const char *module, float in_scale)
{
	char b[200];
	snprintf(b, sizeof(b), "%s.weight", module);
	int k = tm_find(c->m, b);
	if (k < 0)
		fail_msg("no %s", b);
	ctmod *md = &c->mods[c->n++];
	snprintf(md->name, sizeof(md->name), "%s", module);
	int64_t N = c->m->d[k].shape[0], K = c->m->d[k].shape[1];
	int64_t G = c->bits == 4 ? c->G : K;
	float qmax = c->bits == 4 ? 7.0f : 127.0f, qmin = c->bits == 4 ? -8.0f : -128.0f;
	float half = c->bits == 4 ? 7.5f : 127.5f;
	md->N = N;
	md->K = K;
	md->sc = K / G;
	md->in_scale = in_scale;
	md->q = malloc((size_t)(N * K));
	md->s = malloc((size_t)(N * md->sc) * 4);
	md->x = malloc((size_t)(N * K) * 4);
	uint16_t *src = c->m->data[k];
	for (int64_t i = 0; i < N * K; i++)
		md->x[i] = kern_bf16_to_f32(src[i]);
	uint16_t *sbf = malloc((size_t)(N * md->sc) * 2);
	for (int64_t r = 0; r < N; r++)
		for (int64_t g = 0; g < md->sc; g++) {
			float amax = 0;
			for (int64_t j = g * G; j < (g + 1) * G; j++)
				amax = fmaxf(amax, fabsf(md->x[r * K + j]));
			float s = ct_bf16(amax / half);
			md->s[r * md->sc + g] = s;
			sbf[r * md->sc + g] = kern_f32_to_bf16(s);
			for (int64_t j = g * G; j < (g + 1) * G; j++)
				md->q[r * K + j] =
				    (int8_t)fminf(fmaxf(rintf(md->x[r * K + j] / s), qmin), qmax);
		}
	tm_remove(c->m, b);
	if (c->bits == 8 || c->i8codes) {
		ct_add_raw(c->m, b, WT_I8, 2, N, K, md->q);
	} else {
		uint32_t *pk = malloc((size_t)(N * K / 8) * 4);
		for (int64_t i = 0; i < N * K / 8; i++)
			pk[i] = ct_pack8(md->q + i * 8);
		snprintf(b, sizeof(b), "%s.weight_packed", module);
		ct_add_raw(c->m, b, WT_I32, 2, N, K / 8, pk);
		free(pk);
		int64_t shape[2] = {N, K};
		snprintf(b, sizeof(b), "%s.weight_shape", module);
		ct_add_raw(c->m, b, WT_I64, 1, 2, 0, shape);
	}
	snprintf(b, sizeof(b), "%s.weight_scale", module);
	ct_add_raw(c->m, b, WT_BF16, 2, N, md->sc, sbf);
	free(sbf);
	if (in_scale > 0) {
		uint16_t h = kern_f32_to_bf16(in_scale);
		snprintf(b, sizeof(b), "%s.input_scale", module);
		ct_add_raw(c->m, b, WT_BF16, 1, 1, 0, &h);
	}
}

static __attribute__((unused)) const ctmod *ct_mod(const ctm *c, const char *module)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->mods[i].name, module) == 0)
			return &c->mods[i];
	fail_msg("no module %s", module);
	return NULL;
}

static __attribute__((unused)) void ct_free(ctm *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->mods[i].q);
		free(c->mods[i].s);
		free(c->mods[i].x);
	}
	tm_free(c->m);
}

/* The llama test model (tm_llama dims) with every linear of both layers compressed;
 * lm_head stays BF16 (config "ignore": ["lm_head"]). Input scales: one per layer and
 * input (q/k/v share it, gate/up share it) unless `differ`. i8codes: int4 codes one per
 * I8 byte (int-quantized W4A8) instead of packed. */
static __attribute__((unused)) void ct_llama(ctm *c, int bits, int64_t G, int with_is, int differ,
                                             int i8codes)
{
	memset(c, 0, sizeof(*c));
	c->m = tm_llama(0xc7000000u + (uint64_t)bits, WT_BF16);
	c->bits = bits;
	c->G = G;
	c->i8codes = i8codes;
	static const char *const leaves[] = {
	    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
	    "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj"};
	for (int i = 0; i < 2; i++)
		for (int l = 0; l < 7; l++) {
			char mod[160];
			snprintf(mod, sizeof(mod), "model.layers.%d.%s", i, leaves[l]);
			/* inputs: 0 = attention input (q/k/v), 1 = o, 2 = MLP input, 3 = down */
			int input = l < 3 ? 0 : l == 3 ? 1 : l < 6 ? 2 : 3;
			float is = 0.0f;
			if (with_is)
				is = 0.01f * (float)(1 + input + 4 * i) +
				     (differ && l == 1 ? 0.005f : 0.0f);
			ct_convert(c, mod, is);
		}
}

static __attribute__((unused)) char *ct_config(char *buf, size_t cap, int bits, int64_t G,
                                               const char *extra_ignore)
{
	/* bits 44: int4 weights with int8 dynamic per-token activations (W4A8), stored as
	 * llm-compressor infers it: int-quantized, one code per I8 byte */
	int w4a8 = bits == 44;
	if (w4a8)
		bits = 4;
	const char *w8 = "\"weights\":{\"num_bits\":8,\"type\":\"int\",\"symmetric\":true,"
	                 "\"strategy\":\"channel\",\"dynamic\":false,\"group_size\":null,"
	                 "\"actorder\":null,\"observer\":\"minmax\"},"
	                 "\"input_activations\":{\"num_bits\":8,\"type\":\"int\","
	                 "\"symmetric\":true,\"strategy\":\"tensor\",\"dynamic\":false}";
	char w4[400];
	snprintf(w4, sizeof(w4),
	         "\"weights\":{\"num_bits\":4,\"type\":\"int\",\"symmetric\":true,"
	         "\"strategy\":\"group\",\"dynamic\":false,\"group_size\":%lld,"
	         "\"actorder\":null,\"observer\":\"minmax\"},\"input_activations\":%s",
	         (long long)G,
	         w4a8 ? "{\"num_bits\":8,\"type\":\"int\",\"symmetric\":true,\"strategy\":"
	                "\"token\",\"dynamic\":true}"
	              : "null");
	snprintf(buf, cap,
	         "%.*s,\"quantization_config\":{\"quant_method\":\"compressed-tensors\","
	         "\"format\":\"%s\",\"quantization_status\":\"compressed\","
	         "\"global_compression_ratio\":1.5,\"kv_cache_scheme\":null,"
	         "\"ignore\":[\"lm_head\"%s],\"config_groups\":{\"group_0\":{\"targets\":"
	         "[\"Linear\"],\"output_activations\":null,%s}}}}",
	         (int)strlen(tm_llama_cfg) - 1, tm_llama_cfg,
	         bits == 8 || w4a8 ? "int-quantized" : "pack-quantized",
	         extra_ignore ? extra_ignore : "", bits == 8 ? w8 : w4);
	return buf;
}

#endif
