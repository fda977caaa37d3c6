/*
 * plan_store.c — the plan's storage: growable arrays of pieces, outputs,
 * groups and skipped names; name ordering; accessors of shardmap.h; free.
 */
#include <stdlib.h>
#include <string.h>

#include "shardmap/shardmap_int.h"

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return WT_OK;
	size_t nc = *cap ? *cap * 2 : 16;
	while (nc < need)
		nc *= 2;
	void *na = realloc(*arr, nc * elem);
	if (!na)
		return WT_ENOMEM;
	*arr = na;
	*cap = nc;
	return WT_OK;
}

int shardmap_plan_add_piece(sm_plan *p, const sm_piece *pc, wt_errbuf *err)
{
	if (grow((void **)&p->pieces, &p->cap_pieces, p->n_pieces + 1, sizeof(sm_piece)))
		return wt_seterr(err, WT_ENOMEM, "plan: out of memory for piece %zu",
		                 p->n_pieces + 1);
	p->pieces[p->n_pieces++] = *pc;
	return WT_OK;
}

/* Takes ownership of o->name (also on failure). */
int shardmap_plan_add_out(sm_plan *p, uint32_t rank, const sm_out *o, size_t *ix, wt_errbuf *err)
{
	sm_rank *r = &p->ranks[rank];
	if (grow((void **)&r->outs, &r->cap, r->n + 1, sizeof(sm_out))) {
		int rv = wt_seterr(err, WT_ENOMEM, "plan: out of memory for output '%s' of rank %u",
		                   o->name, rank);
		free(o->name);
		return rv;
	}
	r->outs[r->n] = *o;
	r->outs[r->n].info.name = r->outs[r->n].name;
	*ix = r->n++;
	return WT_OK;
}

int shardmap_plan_add_group(sm_plan *p, uint32_t *gid, wt_errbuf *err)
{
	if (grow((void **)&p->groups, &p->cap_groups, p->n_groups + 1, sizeof(sm_group)))
		return wt_seterr(err, WT_ENOMEM, "plan: out of memory for tensor group %zu",
		                 p->n_groups + 1);
	memset(&p->groups[p->n_groups], 0, sizeof(sm_group));
	*gid = (uint32_t)p->n_groups++;
	return WT_OK;
}

int shardmap_plan_group_member(sm_plan *p, uint32_t gid, uint32_t rank, size_t ix, wt_errbuf *err)
{
	sm_group *g = &p->groups[gid];
	if (grow((void **)&g->m, &g->cap_m, g->n_m + 1, sizeof(sm_member)))
		return wt_seterr(err, WT_ENOMEM,
		                 "plan: out of memory for member %zu of tensor group %u",
		                 g->n_m + 1, gid);
	g->m[g->n_m].rank = rank;
	g->m[g->n_m].ix = ix;
	g->n_m++;
	return WT_OK;
}

int shardmap_plan_add_skipped(sm_plan *p, const char *name, wt_errbuf *err)
{
	char *s = NULL;
	if (grow((void **)&p->skipped, &p->cap_skipped, p->n_skipped + 1, sizeof(char *)) ||
	    !(s = strdup(name)))
		return wt_seterr(err, WT_ENOMEM, "plan: out of memory listing skipped tensor '%s'",
		                 name);
	p->skipped[p->n_skipped++] = s;
	return WT_OK;
}

static int cmp_out(const void *a, const void *b, void *base)
{
	const sm_out *o = base;
	return strcmp(o[*(const size_t *)a].name, o[*(const size_t *)b].name);
}

int shardmap_plan_finish(sm_plan *p, wt_errbuf *err)
{
	uint32_t n = p->tp * p->ep;
	for (uint32_t k = 0; k < n; k++) {
		sm_rank *r = &p->ranks[k];
		r->order = malloc((r->n ? r->n : 1) * sizeof(size_t));
		r->pos = malloc((r->n ? r->n : 1) * sizeof(size_t));
		if (!r->order || !r->pos)
			return wt_seterr(err, WT_ENOMEM,
			                 "plan: out of memory ordering the %zu outputs of rank %u",
			                 r->n, k);
		for (size_t i = 0; i < r->n; i++)
			r->order[i] = i;
		qsort_r(r->order, r->n, sizeof(size_t), cmp_out, r->outs);
		r->nbytes = 0;
		for (size_t i = 0; i < r->n; i++) {
			r->pos[r->order[i]] = i;
			if (i > 0 &&
			    strcmp(r->outs[r->order[i]].name, r->outs[r->order[i - 1]].name) == 0)
				return wt_seterr(err, WT_EDUP,
				                 "runtime tensor '%s' produced twice on rank %u",
				                 r->outs[r->order[i]].name, k);
			r->nbytes += r->outs[i].info.nbytes;
		}
	}
	return WT_OK;
}

void shardmap_plan_free(sm_plan *p)
{
	if (!p)
		return;
	if (p->ranks) {
		for (uint32_t k = 0; k < p->tp * p->ep; k++) {
			sm_rank *r = &p->ranks[k];
			for (size_t i = 0; i < r->n; i++)
				free(r->outs[i].name);
			free(r->outs);
			free(r->order);
			free(r->pos);
		}
		free(p->ranks);
	}
	for (size_t g = 0; g < p->n_groups; g++) {
		free(p->groups[g].srcs);
		free(p->groups[g].m);
	}
	free(p->groups);
	free(p->pieces);
	for (size_t s = 0; s < p->n_skipped; s++)
		free(p->skipped[s]);
	free(p->skipped);
	wt_layout_clear(&p->layout);
	free(p);
}

uint32_t shardmap_n_ranks(const sm_plan *p)
{
	return p->tp * p->ep;
}

size_t shardmap_rank_n_tensors(const sm_plan *p, uint32_t rank)
{
	return rank < p->tp * p->ep ? p->ranks[rank].n : 0;
}

const sm_out_info *shardmap_rank_tensor(const sm_plan *p, uint32_t rank, size_t i)
{
	if (rank >= p->tp * p->ep || i >= p->ranks[rank].n)
		return NULL;
	return &p->ranks[rank].outs[p->ranks[rank].order[i]].info;
}

uint64_t shardmap_rank_bytes(const sm_plan *p, uint32_t rank)
{
	return rank < p->tp * p->ep ? p->ranks[rank].nbytes : 0;
}

bool shardmap_tied_lm_head(const sm_plan *p)
{
	return p->tied;
}

size_t shardmap_n_skipped(const sm_plan *p)
{
	return p->n_skipped;
}

const char *shardmap_skipped(const sm_plan *p, size_t i)
{
	return i < p->n_skipped ? p->skipped[i] : NULL;
}

const char *shardmap_family(const sm_plan *p)
{
	return p->fam ? p->fam->name : "raw";
}
