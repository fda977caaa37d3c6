/*
 * test_shardmap_experts.h — a rank's stacked experts (docs/format.md 2.4) against their source:
 * per-expert gate / up / down leaves (fx_experts) or a pair of bmm stacks (fx_bmm), for the
 * MoE planner tests. Include test_shardmap_fx.h first.
 */
#ifndef WT_TEST_SHARDMAP_EXPERTS_H
#define WT_TEST_SHARDMAP_EXPERTS_H

#include <stdbool.h>
#include <stdio.h>

/* Per-expert source leaves and the rank's stacks made of them: w13 [count, 2n, hid] holds, per
 * slot, one expert's gate rows [a, a+n) then its up rows (up first when asked; up alone when
 * the experts have no gate, gate NULL), w2 [count, hid, n] its down columns [a, a+n) of
 * [hid, ie]. A leaf's source name is printf(fmt, expert, leaf), e.g.
 * "model.layers.1.mlp.experts.%lld.%s.weight" with "gate_proj". */
typedef struct fx_experts {
	const char *w13, *w2, *fmt, *gate, *up, *down;
	int64_t hid, ie;
} fx_experts;

static __attribute__((unused)) const char *fx_expert_src(char *b, size_t size, const fx_experts *x,
                                                         int64_t j, const char *leaf)
{
	snprintf(b, size, x->fmt, (long long)j, leaf);
	return b;
}

/* Slot s of rank r's stacks is expert j's rows / columns [a, a+n). */
static __attribute__((unused)) void fx_expert_is(const fx *f, const fx_experts *x, uint32_t r,
                                                 int64_t s, int64_t j, int64_t a, int64_t n,
                                                 bool up_first)
{
	char g[200], u[200], d[200];
	fx_expert_src(u, sizeof(u), x, j, x->up);
	fx_expert_src(d, sizeof(d), x, j, x->down);
	if (x->gate) {
		fx_expert_src(g, sizeof(g), x, j, x->gate);
		rows_at(f, r, x->w13, s * 2 * n, up_first ? u : g, a, n);
		rows_at(f, r, x->w13, s * 2 * n + n, up_first ? g : u, a, n);
	} else {
		rows_at(f, r, x->w13, s * n, u, a, n);
	}
	cols_at(f, r, x->w2, s * x->hid, d, x->hid, x->ie, a, n);
}

/* Rank r's stacks are experts j0 .. j0 + count - 1 in order, each's rows / columns [a, a+n),
 * shapes included: every expert cut by TP (a = r n) or whole experts per EP rank (a = 0). */
static __attribute__((unused)) void fx_experts_are(const fx *f, const fx_experts *x, uint32_t r,
                                                   int64_t j0, int64_t count, int64_t a, int64_t n,
                                                   bool up_first)
{
	shp(f, r, x->w13, 3, count, x->gate ? 2 * n : n, x->hid);
	shp(f, r, x->w2, 3, count, x->hid, n);
	for (int64_t s = 0; s < count; s++)
		fx_expert_is(f, x, r, s, j0 + s, a, n, up_first);
}

/* A pair of bmm expert stacks (Llama 4's experts.gate_up_proj [E, hid, 2 Ie] / down_proj
 * [E, Ie, hid], Aria's fc1 / fc2 alike) and the rank's w13 / w2 made of them. */
typedef struct fx_bmm {
	const char *gu, *dn, *w13, *w2;
	int64_t hid, ie;
} fx_bmm;

/* Slot s of rank r's w13 is expert j's [gate rows [a, a+n) ; up rows [a, a+n)] of the
 * transposed gu (up first when up_first); its w2 slot s is down_j's columns [a, a+n). */
static __attribute__((unused)) void fx_bmm_experts_are(const fx *f, const fx_bmm *b, uint32_t r,
                                                       int64_t s, int64_t j, int64_t a, int64_t n,
                                                       bool up_first)
{
	size_t rowb;
	const uint16_t *gu = (const uint16_t *)(const void *)src_rows(f, b->gu, 0, &rowb);
	const uint16_t *dn = (const uint16_t *)(const void *)src_rows(f, b->dn, 0, &rowb);
	int64_t hid = b->hid, ie = b->ie;
	const uint16_t *w13 =
	    (const uint16_t *)(const void *)out_bytes(f, r, b->w13) + s * 2 * n * hid;
	for (int half = 0; half < 2; half++)
		for (int64_t k = 0; k < n; k++)
			for (int64_t h = 0; h < hid; h++)
				if (w13[(half * n + k) * hid + h] !=
				    gu[(j * hid + h) * 2 * ie + (half ^ up_first) * ie + a + k])
					fail_msg("rank %u w13 slot %lld half %d row %lld col %lld",
					         r, (long long)s, half, (long long)k, (long long)h);
	const uint16_t *w2 = (const uint16_t *)(const void *)out_bytes(f, r, b->w2) + s * hid * n;
	for (int64_t h = 0; h < hid; h++)
		for (int64_t c = 0; c < n; c++)
			if (w2[h * n + c] != dn[(j * ie + a + c) * hid + h])
				fail_msg("rank %u w2 slot %lld row %lld col %lld", r, (long long)s,
				         (long long)h, (long long)c);
}

#endif
