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
#include "shardmap/shardmap.h"
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

static __attribute__((unused)) uint64_t tm_mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

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
		float v = (float)((double)(tm_mix(&s) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
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
	char pre[32];
	snprintf(pre, sizeof(pre), fmt, i);
	snprintf(b, n, "%s%s", pre, leaf);
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

#endif
