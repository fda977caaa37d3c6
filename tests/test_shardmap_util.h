/*
 * test_shardmap_util.h — tiny model builders for the shardmap tests (test code
 * only, included by tests/test_shardmap*.c). Tensor values are finite,
 * deterministic (splitmix64 of a fixed seed printed by each test) and kept in
 * memory so tests can compute expected slices directly from the source.
 * The builder is in test_shardmap_builder.h, the fixture models in
 * test_shardmap_models.h (both included here); this file holds planning and
 * producing a written model, and the coverage check.
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

#include "test_shardmap_models.h"

/* Open a written folder and plan layout l; quick: ckpt_open_quick (no content digest: a
 * plan that is never produced reads no tensor byte, and a hollow model's hole is not read). */
static __attribute__((unused)) int tm_plan_q(const char *dir, const wt_layout *l, bool quick,
                                             store **s, ckpt **c, sm_plan **p, wt_errbuf *err)
{
	*s = NULL;
	*c = NULL;
	*p = NULL;
	int rv = store_open(s, dir, err);
	if (rv == WT_OK)
		rv = quick ? ckpt_open_quick(c, *s, err) : ckpt_open(c, *s, err);
	if (rv == WT_OK)
		rv = shardmap_plan(*c, l, p, err);
	return rv;
}

/* tm_plan_q with the content digests (a plan to produce). */
static __attribute__((unused)) int tm_plan(const char *dir, const wt_layout *l, store **s, ckpt **c,
                                           sm_plan **p, wt_errbuf *err)
{
	return tm_plan_q(dir, l, false, s, c, p, err);
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
/* config.json text json read by the loader into *c (the caller clears it); fails the test
 * with the loader's message when it refuses. */
static __attribute__((unused)) void tm_parse(const char *json, ckpt_config *c)
{
	wt_errbuf err = {0};
	int rv = ckpt_config_parse(json, strlen(json), c, &err);
	if (rv != WT_OK)
		fail_msg("%s", err.msg);
}

static __attribute__((unused)) int64_t expected_mult(const sm_plan *p, const char *name, int64_t KV,
                                                     bool kv_rows, int64_t vheads)
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
		case SM_K_QKVFW: /* InternViT's qkv / proj: whole where its heads do not divide tp
		                  */
		case SM_K_COLSW:
			return vheads > 0 && vheads % T != 0 ? T * P : P;
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

/* The coverage check's counts, kept as events on a tensor's flat element index: +1 where a
 * piece's interval starts, -1 where it ends (a count per element cost 2 bytes an element and
 * a pass over every one: 600 MB and most of a planner test's CPU on Phi-3-Vision's 300M-value
 * tower). Intervals sorted and swept give the same counts, segment by segment. */
typedef struct tm_ev {
	int64_t at;
	int64_t d;
} tm_ev;

typedef struct tm_evs {
	tm_ev *v;
	size_t n, cap;
} tm_evs;

static __attribute__((unused)) void tm_ev_add(tm_evs *e, int64_t at, int64_t d)
{
	if (e->n == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 64;
		e->v = realloc(e->v, e->cap * sizeof(*e->v));
		assert_non_null(e->v);
	}
	e->v[e->n].at = at;
	e->v[e->n++].d = d;
}

static __attribute__((unused)) int tm_ev_cmp(const void *a, const void *b)
{
	int64_t x = ((const tm_ev *)a)->at, y = ((const tm_ev *)b)->at;
	return (x > y) - (x < y);
}

/* Elements [a0, a1) x [b0, b1) of a rows x cols tensor as flat intervals. */
static __attribute__((unused)) void tm_ev_rect(tm_evs *e, int64_t cols, int64_t a0, int64_t a1,
                                               int64_t b0, int64_t b1)
{
	if (a1 <= a0 || b1 <= b0)
		return;
	if (b0 == 0 && b1 == cols) { /* whole rows: one interval */
		tm_ev_add(e, a0 * cols, 1);
		tm_ev_add(e, a1 * cols, -1);
		return;
	}
	for (int64_t a = a0; a < a1; a++) {
		tm_ev_add(e, a * cols + b0, 1);
		tm_ev_add(e, a * cols + b1, -1);
	}
}

/* The counts of tensor ct (n elements, cols a row) against the multiplicities wanted: the
 * first element covered otherwise fails the test, as a count per element did. */
static __attribute__((unused)) void tm_ev_check(tm_evs *e, const ckpt_tensor *ct, const sm_plan *p,
                                                int64_t n, int64_t cols, int64_t q_rows,
                                                int64_t want_q, int64_t want_kv, bool dup,
                                                int64_t bc_lo, int64_t bc_hi)
{
	/* where the multiplicity wanted changes, and the ends: segment bounds too */
	int64_t marks[] = {0, n, q_rows * cols, bc_lo * cols, bc_hi * cols};
	for (size_t k = 0; k < sizeof(marks) / sizeof(marks[0]); k++)
		if (marks[k] >= 0 && marks[k] <= n)
			tm_ev_add(e, marks[k], 0);
	qsort(e->v, e->n, sizeof(*e->v), tm_ev_cmp);
	if (e->v[0].at < 0 || e->v[e->n - 1].at > n)
		fail_msg("tensor '%s': a piece reaches past its %lld elements (element %lld)",
		         ct->name, (long long)n,
		         (long long)(e->v[0].at < 0 ? e->v[0].at : e->v[e->n - 1].at));
	int64_t cur = 0;
	for (size_t i = 0; i < e->n;) {
		int64_t at = e->v[i].at;
		for (; i < e->n && e->v[i].at == at; i++)
			cur += e->v[i].d;
		if (i == e->n || at >= n)
			break;
		/* [at, e->v[i].at): one count, one multiplicity wanted */
		int64_t want = at / cols >= q_rows ? want_kv : want_q;
		if (dup)
			want = at / cols >= bc_lo && at / cols < bc_hi ? (int64_t)p->tp * p->ep
			                                               : want_q;
		if (cur != want)
			fail_msg("tensor '%s' element %lld covered %u times, want %lld (tp "
			         "%u ep %u)",
			         ct->name, (long long)at, (unsigned)cur, (long long)want, p->tp,
			         p->ep);
	}
}

static __attribute__((unused)) void tm_check_coverage(const ckpt *c, const sm_plan *p, int64_t KV)
{
	size_t nt = ckpt_n_tensors(c);
	tm_evs *ev = calloc(nt, sizeof(tm_evs));
	bool *used = calloc(nt, sizeof(bool));
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
				used[t] = true;
				/* the piece's rectangle only: all rows of a column range,
				 * or all columns of a row range */
				int64_t a0 = pc->cols ? 0 : pc->start,
				        a1 = pc->cols ? rows : pc->start + pc->len;
				int64_t b0 = pc->cols ? pc->start : 0,
				        b1 = pc->cols ? pc->start + pc->len : cols;
				tm_ev_rect(&ev[t], cols, a0, a1, b0, b1);
			}
		}
	}
	for (size_t t = 0; t < nt; t++) {
		const ckpt_tensor *ct = ckpt_tensor_at(c, t);
		bool skipped = false;
		for (size_t k = 0; k < shardmap_n_skipped(p); k++)
			skipped |= strcmp(shardmap_skipped(p, k), ct->name) == 0;
		if (skipped) {
			assert_false(used[t]);
			continue;
		}
		size_t nl = strlen(ct->name);
		if (!used[t] && ((nl > 7 && strcmp(ct->name + nl - 7, "_scales") == 0) ||
		                 (nl > 6 && strcmp(ct->name + nl - 6, "_scale") == 0)))
			continue; /* MXFP4 / FP8 scales of dequantized sources: read with them */
		if (!used[t])
			fail_msg("tensor '%s' is not consumed by any rank", ct->name);
		int64_t q_rows =
		    ckpt_get_config(c)->num_attention_heads * ckpt_get_config(c)->head_dim;
		/* once per tensor: the rule lookup is the costly part */
		int64_t vh = ckpt_get_config(c)->v_num_attn_heads + p->fam->vis_dummy_heads;
		int64_t want_q = expected_mult(p, ct->name, KV, false, vh),
		        want_kv = expected_mult(p, ct->name, KV, true, vh);
		int64_t bc_lo = 0, bc_hi = 0; /* Mamba2 B / C rows on every rank */
		bool dup = tm_mamba_dup(c, p, ct->name, &bc_lo, &bc_hi);
		if (vn[t] > 0)
			tm_ev_check(&ev[t], ct, p, vn[t], vcols[t], q_rows, want_q, want_kv, dup,
			            bc_lo, bc_hi);
		free(ev[t].v);
		ev[t].v = NULL;
	}
	for (size_t t = 0; t < nt; t++)
		free(ev[t].v);
	free(ev);
	free(used);
	free(vcols);
	free(vn);
}

#endif

#endif
