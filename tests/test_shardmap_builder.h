/*
 * test_shardmap_builder.h — the tm_model builder of the shardmap tests (split from
 * test_shardmap_util.h, which includes it through test_shardmap_models.h): a tiny model held
 * in memory (tensors filled with deterministic values in [-1, 1) from a seed), the helpers
 * that add a layer's attention / MLP / experts / top tensors and FP8 linears, and writing it
 * out as a checkpoint folder.
 */
#ifndef WT_TEST_SHARDMAP_BUILDER_H
#define WT_TEST_SHARDMAP_BUILDER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	bool hollow; /* shapes only: no values made, tm_write leaves the data a hole (plans) */
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
	if (m->hollow)
		n = 0;
	uint8_t *p = malloc(n * es + 1);
	uint64_t s = m->seed + m->n * 7919;
	tu_fill_values(p, dt, es, n, &s);
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

static __attribute__((unused)) int tm_hollow_cb(void *ctx, const void *data, size_t len)
{
	return fwrite(data, 1, len, ctx) == len ? WT_OK : WT_EIO;
}

/* A hollow model's file: the header as st_write_path writes it, the data a hole of its
 * length (a sparse file: nothing made, nothing written; a plan reads only the header). */
static __attribute__((unused)) int tm_write_hollow(const char *path, const tm_model *m,
                                                   wt_errbuf *err)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return wt_seterr(err, WT_EIO, "tm_write_hollow: cannot create '%s'", path);
	st_writer *w = NULL;
	int rv = st_writer_open(&w, m->d, m->n, NULL, 0, tm_hollow_cb, f, err);
	st_writer_abort(w);
	long at = ftell(f);
	uint64_t data = 0;
	for (size_t i = 0; rv == WT_OK && i < m->n; i++) {
		uint64_t n = wt_dtype_size(m->d[i].dtype);
		for (int k = 0; k < m->d[i].ndim; k++)
			n *= (uint64_t)m->d[i].shape[k];
		data += n;
	}
	if (fclose(f) != 0 && rv == WT_OK)
		rv = wt_seterr(err, WT_EIO, "tm_write_hollow: writing '%s' failed", path);
	if (rv == WT_OK && truncate(path, (off_t)(at + (long)data)) != 0)
		rv = wt_seterr(err, WT_EIO, "tm_write_hollow: truncate '%s' failed", path);
	return rv;
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
	int rv = m->hollow
	             ? tm_write_hollow(st, m, &err)
	             : st_write_path(st, m->d, (const void *const *)m->data, m->n, NULL, 0, &err);
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

#endif
