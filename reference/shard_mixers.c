/*
 * shard_mixers.c — the sharded reference pass (shard.c) of the recurrent mixers: Granite
 * 4.0 / Bamba's Mamba2, MiniMax's lightning attention, Jamba's Mamba (v1) and PLaMo 2's mixer, each
 * rank on its heads or channels with the all-reduces an engine makes (docs/reference.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/shard_int.h"

/*
 * Granite 4.0's Mamba2 mixer of layer l: each tp rank scans its own heads (with its
 * groups' B / C, the one group on every rank when duplicated) into its share of y; the
 * gated norm's mean square over all heads is the all-reduce of the ranks' sums of squares;
 * then each rank normalises its channels with its slice of the norm weight and multiplies
 * by its out_proj columns; the partials are all-reduced and out_proj.bias added once.
 */
int ref_shard_g4_mamba(shard *s, int64_t l)
{
	const ref_cfg *c = s->c;
	int64_t T = s->n_tok, tp = (int64_t)s->T, n = T * c->hid;
	int64_t hl = c->m_heads / tp, il = hl * c->m_dh;
	bool dup = c->m_groups % tp != 0;
	int64_t ng = ref_g4_norm_groups(c);
	float ssq[REF_MAX_TOKENS * REF_G4_MAX_NORM_GROUPS] = {0},
	                           ms[REF_MAX_TOKENS * REF_G4_MAX_NORM_GROUPS];
	float *y = malloc((size_t)(T * il * tp) * sizeof(float));
	if (y == NULL)
		return wt_seterr(s->err, WT_ENOMEM, "layer %lld Mamba mixer: out of memory",
		                 (long long)l);
	const float *xin = s->b.x; /* Zamba2: + its shared block */
	int rv = c->zamba2 ? ref_z2_input_sharded(s, l, &xin) : WT_OK;
	for (uint32_t r = 0; r < s->T && rv == WT_OK; r++) {
		ref_set *rs = rank_set(s, r, s->g);
		const ref_g4_part p = {.h0 = (int64_t)r * hl,
		                       .hl = hl,
		                       .g0 = dup ? 0 : (int64_t)r * (c->m_groups / tp),
		                       .gl = dup ? c->m_groups : c->m_groups / tp};
		if ((rv = ref_block_input(c, rs, s->b.h, xin, T, l, ref_attn_norm(c), s->err)) ==
		    WT_OK)
			rv = ref_g4_scan(c, rs, l, &p, s->b.h, T, y + r * T * il, ssq, s->err);
	}
	for (int64_t t = 0; t < T * ng; t++)
		ms[t] = ssq[t] / (float)(c->m_heads * c->m_dh / ng);
	memset(s->b.acc, 0, (size_t)n * sizeof(float));
	for (uint32_t r = 0; r < s->T && rv == WT_OK; r++) {
		const ref_g4_part p = {.h0 = (int64_t)r * hl,
		                       .hl = hl,
		                       .g0 = dup ? 0 : (int64_t)r * (c->m_groups / tp),
		                       .gl = dup ? c->m_groups : c->m_groups / tp};
		if ((rv = ref_g4_out(c, rank_set(s, r, s->g), l, &p, y + r * T * il, ms, T, s->b.o,
		                     s->err)) == WT_OK)
			add_into(s->b.acc, s->b.o, n);
	}
	free(y);
	const float *bo;
	if (rv == WT_OK)
		rv = ref_getf(rank_set(s, 0, s->g), &bo, true, s->err, 1, c->hid, 0, 0,
		              "model.layers.%lld.mamba.out_proj.bias", (long long)l);
	if (rv != WT_OK)
		return rv;
	for (int64_t t = 0; bo && t < T; t++)
		add_into(s->b.acc + t * c->hid, bo, c->hid);
	if (c->fh1) { /* Falcon-H1: times ssm_out_multiplier, kept in b.y for the attention */
		for (int64_t i = 0; i < n; i++)
			s->b.y[i] = s->b.acc[i] * c->fh1_ssm_out;
		return WT_OK;
	}
	ref_residual_add(c, s->b.x, s->b.acc, n);
	return WT_OK;
}

/* MiniMax's lightning attention: each rank's heads; the norm's mean square summed over the
 * ranks first (MiniMaxText01RMSNormTP's all-reduced variance), then every rank's out_proj
 * partial all-reduced. */
int ref_shard_mm_lightning(shard *s, int64_t l)
{
	const ref_cfg *c = s->c;
	int64_t T = s->n_tok, n = T * c->hid;
	float *ms = calloc((size_t)T, sizeof(float));
	if (ms == NULL)
		return wt_seterr(s->err, WT_ENOMEM, "layer %lld: out of memory", (long long)l);
	int rv = WT_OK;
	for (int pass = 0; pass < 2 && rv == WT_OK; pass++) {
		memset(s->b.acc, 0, (size_t)n * sizeof(float));
		for (uint32_t r = 0; r < s->T && rv == WT_OK; r++) {
			ref_set *rs = rank_set(s, r, s->g);
			const ref_mm_part p = {.Hl = s->Hl, .q0 = (int64_t)r * s->Hl};
			if ((rv = ref_block_input(c, rs, s->b.h, s->b.x, T, l, ref_attn_norm(c),
			                          s->err)) ||
			    (rv = ref_mm_lightning(c, rs, l, &p, s->b.h, T, pass ? NULL : ms,
			                           pass ? ms : NULL, s->b.o, s->err)))
				break;
			if (pass)
				add_into(s->b.acc, s->b.o, n);
		}
		for (int64_t t = 0; pass == 0 && t < T; t++)
			ms[t] = ms[t] / (float)(c->H * c->d);
	}
	free(ms);
	if (rv != WT_OK)
		return rv;
	ref_mm_resid(c, s->b.x, s->b.h, n, l, false);
	ref_residual_add(c, s->b.x, s->b.acc, n);
	return WT_OK;
}

/*
 * Jamba's Mamba (v1) mixer of layer l: each tp rank runs in_proj, the conv and x_proj on
 * its channels; x_proj's partial products (row-parallel by its input columns) are
 * all-reduced into dt / B / C; each rank then normalises them with its own norm replicas,
 * scans its channels and multiplies by its out_proj columns; the partials are all-reduced
 * and out_proj.bias added once.
 */
int ref_shard_jb_mamba(shard *s, int64_t l)
{
	const ref_cfg *c = s->c;
	int64_t T = s->n_tok, tp = (int64_t)s->T, n = T * c->hid;
	int64_t il = c->m_inner / tp, nxp = c->m_rank + 2 * c->m_state;
	float *xc = calloc((size_t)(2 * T * il * tp + T * nxp), sizeof(float));
	if (xc == NULL)
		return wt_seterr(s->err, WT_ENOMEM, "layer %lld Mamba mixer: out of memory",
		                 (long long)l);
	float *z = xc + T * il * tp, *xp = z + T * il * tp;
	int rv = WT_OK;
	for (uint32_t r = 0; r < s->T && rv == WT_OK; r++) {
		ref_set *rs = rank_set(s, r, s->g);
		if ((rv = ref_block_input(c, rs, s->b.h, s->b.x, T, l, ref_attn_norm(c), s->err)) ==
		    WT_OK)
			rv = ref_jb_in(c, rs, l, il, s->b.h, T, xc + r * T * il, z + r * T * il, xp,
			               s->err);
	}
	memset(s->b.acc, 0, (size_t)n * sizeof(float));
	for (uint32_t r = 0; r < s->T && rv == WT_OK; r++)
		if ((rv = ref_jb_out(c, rank_set(s, r, s->g), l, il, xc + r * T * il,
		                     z + r * T * il, xp, T, s->b.o, s->err)) == WT_OK)
			add_into(s->b.acc, s->b.o, n);
	free(xc);
	const float *bo;
	if (rv == WT_OK)
		rv = ref_getf(rank_set(s, 0, s->g), &bo, true, s->err, 1, c->hid, 0, 0,
		              "model.layers.%lld.mamba.out_proj.bias", (long long)l);
	if (rv != WT_OK)
		return rv;
	for (int64_t t = 0; bo && t < T; t++)
		add_into(s->b.acc + t * c->hid, bo, c->hid);
	ref_residual_add(c, s->b.x, s->b.acc, n);
	return WT_OK;
}

/*
 * PLaMo 2's Mamba mixer of layer l (plamo2.c): each tp rank runs in_proj, the conv and
 * bcdt_proj on its heads; bcdt_proj's partial products (row-parallel by its input columns)
 * are all-reduced into [B; C; dt]; each rank normalises them with its own norm replicas, runs
 * dt_proj's rows and scans its heads, and multiplies by its out_proj columns; the partials are
 * all-reduced, post_mixer_norm applied (every rank's replica) and the residual added.
 */
int ref_shard_p2_mamba(shard *s, int64_t l)
{
	const ref_cfg *c = s->c;
	int64_t T = s->n_tok, tp = (int64_t)s->T, n = T * c->hid;
	/* tp divides m_heads (shard.c's layout check) */
	int64_t hl = c->m_heads / tp, il = hl * c->m_dh, nxp = c->m_rank + 2 * c->m_state;
	float *xc = calloc((size_t)(2 * T * il * tp + T * nxp), sizeof(float));
	if (xc == NULL)
		return wt_seterr(s->err, WT_ENOMEM, "layer %lld Mamba mixer: out of memory",
		                 (long long)l);
	float *z = xc + T * il * tp, *xp = z + T * il * tp;
	int rv = WT_OK;
	for (uint32_t r = 0; r < s->T && rv == WT_OK; r++) {
		ref_set *rs = rank_set(s, r, s->g);
		if ((rv = ref_block_input(c, rs, s->b.h, s->b.x, T, l, ref_attn_norm(c), s->err)) ==
		    WT_OK)
			rv = ref_p2_in(c, rs, l, hl, s->b.h, T, xc + r * T * il, z + r * T * il, xp,
			               s->err);
	}
	memset(s->b.acc, 0, (size_t)n * sizeof(float));
	for (uint32_t r = 0; r < s->T && rv == WT_OK; r++)
		if ((rv = ref_p2_out(c, rank_set(s, r, s->g), l, hl, xc + r * T * il,
		                     z + r * T * il, xp, T, s->b.o, s->err)) == WT_OK)
			add_into(s->b.acc, s->b.o, n);
	free(xc);
	if (rv == WT_OK)
		rv = ref_shard_post_norm_mean(s, l, ref_post_norm(c, false));
	if (rv == WT_OK)
		ref_residual_add(c, s->b.x, s->b.acc, n);
	return rv;
}
