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
	int8_t *q;     /* [N, K] codes */
	float *s;      /* [N, sc] scales (BF16 values) */
	float *x;      /* [N, K] original values */
	int *zp;       /* [N, sc] zero points, or NULL (q is then code, or code - zp) */
	int32_t *gidx; /* [K] group of each column (actorder group), or NULL (k / G) */
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
		free(c->mods[i].zp);
		free(c->mods[i].gidx);
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

/* A checkpoint written from a ctm, planned and produced on every rank. */
typedef struct fx {
	char *dir;
	store *s;
	ckpt *c;
	sm_plan *p;
	tm_prod *pr;
} fx;

static __attribute__((unused)) int fx_open(fx *f, const ctm *c, const char *cfg, const wt_layout *l,
                                           wt_errbuf *err)
{
	memset(f, 0, sizeof(*f));
	f->dir = tu_mkdtemp("smasym");
	assert_int_equal(tm_write(c->m, f->dir, cfg), 0);
	int rv = tm_plan(f->dir, l, &f->s, &f->c, &f->p, err);
	if (rv == WT_OK)
		f->pr = tm_produce(f->c, f->p, -1, &rv, err);
	return rv;
}

static __attribute__((unused)) void fx_close(fx *f)
{
	tm_prod_free(f->pr);
	tm_close(f->s, f->c, f->p);
	tu_rmrf(f->dir);
	free(f->dir);
}

static __attribute__((unused)) const float *out_f32(const fx *f, uint32_t r, const char *name)
{
	int ix = tm_ix(f->p, r, name);
	if (ix < 0)
		fail_msg("rank %u: no '%s'", r, name);
	assert_int_equal(shardmap_rank_tensor(f->p, r, (size_t)ix)->dtype, WT_F32);
	return f->pr->b[r][ix];
}

/* out (rows x cols, F32) equals module md's rows [r0, r0 + rows), columns
 * [c0, c0 + cols) dequantized, (q - zp) * s[row, group] (group k / G, or gidx[k]), at row
 * offset `at` of out, and lies within tol * s of the original value. */
static __attribute__((unused)) void expect_block(const float *out, int64_t out_cols, int64_t at,
                                                 const ctmod *md, int64_t r0, int64_t rows,
                                                 int64_t c0, int64_t cols, const char *what,
                                                 float tol)
{
	int64_t G = md->K / md->sc;
	for (int64_t r = 0; r < rows; r++)
		for (int64_t k = 0; k < cols; k++) {
			int64_t sr = r0 + r, sk = c0 + k;
			int64_t g = md->gidx ? md->gidx[sk] : sk / G;
			float s = md->s[sr * md->sc + g];
			int zp = md->zp ? md->zp[sr * md->sc + g] : 0;
			float want = (float)(md->q[sr * md->K + sk] - zp) * s;
			float got = out[(at + r) * out_cols + k];
			if (memcmp(&got, &want, 4) != 0)
				fail_msg("%s [%lld, %lld]: %g, want (code - zp) * s = %g", what,
				         (long long)(at + r), (long long)k, (double)got,
				         (double)want);
			if (fabsf(got - md->x[sr * md->K + sk]) > tol * s)
				fail_msg("%s [%lld, %lld]: %g far from the original %g (scale %g)",
				         what, (long long)(at + r), (long long)k, (double)got,
				         (double)md->x[sr * md->K + sk], (double)s);
		}
}

/* Every linear of ct_llama's both layers on both ranks of TP 2 (layout quant none, dtype
 * F32) is its modules' dequantized values (expect_block, within tol * s). */
static __attribute__((unused)) void ct_expect_tp2(const fx *f, const ctm *c, float tol)
{
	for (uint32_t r = 0; r < 2; r++)
		for (int i = 0; i < 2; i++) {
			char n[160], rt[200];
#define MOD(leaf) (snprintf(n, sizeof(n), "model.layers.%d.%s", i, leaf), ct_mod(c, n))
			/* qkv: q rows r*128.., k and v rows r*32.. (H 8, KV 2, d 32) */
			snprintf(rt, sizeof(rt), "model.layers.%d.self_attn.qkv_proj.weight", i);
			const float *qkv = out_f32(f, r, rt);
			expect_block(qkv, 256, 0, MOD("self_attn.q_proj"), r * 128, 128, 0, 256, rt,
			             tol);
			expect_block(qkv, 256, 128, MOD("self_attn.k_proj"), r * 32, 32, 0, 256, rt,
			             tol);
			expect_block(qkv, 256, 160, MOD("self_attn.v_proj"), r * 32, 32, 0, 256, rt,
			             tol);
			/* row-parallel: columns */
			snprintf(rt, sizeof(rt), "model.layers.%d.self_attn.o_proj.weight", i);
			expect_block(out_f32(f, r, rt), 128, 0, MOD("self_attn.o_proj"), 0, 256,
			             r * 128, 128, rt, tol);
			snprintf(rt, sizeof(rt), "model.layers.%d.mlp.gate_up_proj.weight", i);
			const float *gu = out_f32(f, r, rt);
			expect_block(gu, 256, 0, MOD("mlp.gate_proj"), r * 256, 256, 0, 256, rt,
			             tol);
			expect_block(gu, 256, 256, MOD("mlp.up_proj"), r * 256, 256, 0, 256, rt,
			             tol);
			snprintf(rt, sizeof(rt), "model.layers.%d.mlp.down_proj.weight", i);
			expect_block(out_f32(f, r, rt), 256, 0, MOD("mlp.down_proj"), 0, 256,
			             r * 256, 256, rt, tol);
#undef MOD
		}
}

#endif
