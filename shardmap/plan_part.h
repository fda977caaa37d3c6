/*
 * plan_part.h — the partition rules (plan_part.c) as the instance planner
 * (plan_inst.c) uses them: what one rank holds of one runtime tensor, as a
 * list of pieces (shardmap_int.h) and the tensor's geometry on that rank.
 */
#ifndef WT_SHARDMAP_PLAN_PART_H
#define WT_SHARDMAP_PLAN_PART_H

#include "shardmap/plan_int.h"

/* Growable list of pieces. */
typedef struct sm_pvec {
	sm_piece *v;
	size_t n, cap;
} sm_pvec;

/* Shape of a runtime tensor on one rank, and its 2-D [rows, cols] view. */
typedef struct sm_geo {
	int64_t rows, cols;
	int64_t units; /* experts stacked (1 for dense) */
	int ndim;
	int64_t shape[WT_MAX_DIMS];
	bool expert; /* an expert stack [units, a, b] */
} sm_geo;

/* Append pc to pv. Out of memory: WT_ENOMEM with a message naming tensor `rt`. */
int shardmap_pvec_push(sm_pvec *pv, sm_piece pc, const char *rt, wt_errbuf *err);
/* A piece of rows [start, start+len) of source src (all columns), in expert slot unit. */
sm_piece shardmap_rows_piece(uint32_t src, int64_t start, int64_t len, int64_t unit);
/* Layout error: in a dry run (x->p NULL) only the code; else the message plus the tp_size
 * suggestion of shardmap_suggest_tp. */
int shardmap_layout_err(const sm_ctx *x, wt_errbuf *err, const char *fmt, ...) WT_PRINTF(3, 4);

/* Pieces (src = index into the instance's entries) and geometry of the instance
 * [first, first + n_parts) (entries sharing one runtime name) on rank (tp_rank,
 * ep_rank), by the rule kind of docs/format.md section 2.1. Divisibility failures
 * are WT_ELAYOUT. */
int shardmap_partition(const sm_ctx *ctx, size_t first, size_t n_parts, uint32_t tp_rank,
                       uint32_t ep_rank, sm_pvec *pieces, sm_geo *geom, wt_errbuf *err);

#endif
