/*
 * plan_part_expert.c — the routed experts' partition rules (docs/format.md section 2.4):
 * which experts a rank holds (all, TP-split inside each, without EP; whole ones, as evenly
 * as possible, with EP) and the rows / columns of each it takes, for per-expert and
 * stacked sources. Dispatched by rule kind from plan_part.c.
 */
#include <inttypes.h>

#include "shardmap/plan_part_int.h"

/* The routed experts one rank holds, and the slice of each (section 2.4). */
typedef struct expert_span {
	int64_t experts;  /* E */
	int64_t start;    /* first local expert */
	int64_t count;    /* local experts */
	int64_t inter;    /* Il: intermediate rows of each local expert */
	int64_t inter_at; /* first intermediate row taken (TP inside the expert) */
} expert_span;

/* parts_per_expert: the checkpoint tensors of one expert (gate + up: 2, down: 1), or 0
 * when one tensor holds every expert stacked ([E, ...], GraniteMoE). */
static int expert_span_of(const part_req *req, size_t parts_per_expert, expert_span *s)
{
	/* ERNIE-4.5-VL's vision experts: moe_intermediate_size[1] wide */
	bool vis = req->rule->unit == SM_U_IEV;
	int64_t experts = req->ctx->dm.n_experts, ep = req->ctx->ep_size,
	        inter = vis ? req->ctx->dm.moe_inter_v : req->ctx->dm.moe_inter;
	size_t want = parts_per_expert ? (size_t)experts * parts_per_expert : 1;
	if (want != req->n_parts)
		return wt_seterr(req->err, WT_ENOTFOUND, "tensor '%s': experts missing", req->rt);
	*s = (expert_span){.experts = experts, .start = 0, .count = experts, .inter = inter};
	if (ep == 1) {
		/* No EP: every expert on every rank, each one TP-split by its rows. */
		bool tpx = req->ctx->fam->tp_experts; /* MiniCPM-MoE: no EP to fall back on */
		if (inter % req->tp_size)
			return shardmap_layout_err(req->ctx, req->err,
			                           "tensor '%s': tp_size %" PRId64
			                           " does not divide %s %" PRId64 "%s",
			                           req->rt, req->tp_size,
			                           tpx   ? "intermediate_size"
			                           : vis ? "moe_intermediate_size[1]"
			                                 : "moe_intermediate_size",
			                           inter, tpx ? "" : " (or use ep_size > 1)");
		s->inter = inter / req->tp_size;
		s->inter_at = req->tp_rank * s->inter;
		return WT_OK;
	}
	/* EP: whole experts, split as evenly as possible. The first experts % ep ranks
	 * hold one more (E 6 over ep 4: 2, 2, 1, 1), so rank e starts after e full
	 * shares plus one extra for each earlier rank that got one: min(e, E % ep). */
	int64_t share = experts / ep, extra = experts % ep, e = req->ep_rank;
	s->count = share + (e < extra);
	s->start = e * share + (e < extra ? e : extra);
	return WT_OK;
}

/* Geometry of a stack [count, a, b] of local experts. */
static void geo_experts(sm_geo *g, int64_t count, int64_t a, int64_t b)
{
	g->expert = true;
	g->units = count;
	g->ndim = 3;
	g->shape[0] = count;
	g->shape[1] = a;
	g->shape[2] = b;
	g->rows = count * a;
	g->cols = b;
}

/* Expert w13: [gate_j; up_j] rows of each local expert j (up first with w13_order
 * up_gate). Per-expert sources: parts 0..E-1 are the gates, E..2E-1 the ups; stacked
 * (one source [E, 2*Ie, hid] viewed as [E*2*Ie, hid], [gate_j; up_j] rows per expert):
 * the same rows at j*2*Ie and j*2*Ie + Ie. */
static int expert_w13(const part_req *req, bool stacked)
{
	expert_span s;
	int rv = expert_span_of(req, stacked ? 0 : 2, &s);
	/* w13_order is FusedMoE's; MiniCPMMoE's ws is [w1; w3] whatever it says */
	uint32_t first = req->ctx->l->w13_up_gate && !req->ctx->fam->tp_experts ? 1 : 0;
	int64_t ie = req->ctx->dm.moe_inter;
	for (int64_t slot = 0; slot < s.count && rv == WT_OK; slot++) {
		int64_t j = s.start + slot;
		for (uint32_t half = 0; half < 2 && rv == WT_OK; half++) {
			uint32_t which = half == 0 ? first : 1 - first;
			sm_piece pc =
			    stacked ? shardmap_rows_piece(0, (2 * j + which) * ie + s.inter_at,
			                                  s.inter, slot)
			            : shardmap_rows_piece((uint32_t)(which * s.experts + j),
			                                  s.inter_at, s.inter, slot);
			rv = shardmap_part_push(req, pc);
		}
	}
	if (rv == WT_OK)
		geo_experts(req->geom, s.count, 2 * s.inter, req->ctx->dm.hidden);
	return rv;
}

int shardmap_part_expert_w13(const part_req *req)
{
	return expert_w13(req, false);
}

int shardmap_part_expert_w13_stacked(const part_req *req)
{
	return expert_w13(req, true);
}

/* Non-gated expert w13 (Nemotron-H's up_proj, part 0, one per expert): the rows
 * [r*Il, (r+1)*Il) of each local expert under TP, whole ones under EP, as vLLM's FusedMoE
 * loads w1 alone when its activation takes no gate (w13_weight [count, Il, hid]). */
int shardmap_part_expert_w1(const part_req *req)
{
	expert_span s;
	int rv = expert_span_of(req, 1, &s);
	for (int64_t slot = 0; slot < s.count && rv == WT_OK; slot++)
		rv = shardmap_part_push(req, shardmap_rows_piece((uint32_t)(s.start + slot),
		                                                 s.inter_at, s.inter, slot));
	if (rv == WT_OK)
		geo_experts(req->geom, s.count, s.inter, req->ctx->dm.hidden);
	return rv;
}

/* Expert w13 from two stacked sources (DBRX's w1 = gate, part 0, and v1 = up, part 1, each
 * [E, Ie, hid]): rows [j*Ie + r*Il, +Il) of each, as vLLM's dbrx.py weight_loader writes
 * w13_weight[:, 0:Il] and [:, Il:2*Il] of its local experts. */
int shardmap_part_expert_w13_two(const part_req *req)
{
	if (req->n_parts != 2)
		return wt_seterr(req->err, WT_ENOTFOUND, "tensor '%s': experts missing", req->rt);
	part_req one = *req;
	one.n_parts = 1;
	expert_span s;
	int rv = expert_span_of(&one, 0, &s);
	uint32_t first = req->ctx->l->w13_up_gate ? 1 : 0;
	int64_t ie = req->ctx->dm.moe_inter;
	for (int64_t slot = 0; slot < s.count && rv == WT_OK; slot++)
		for (uint32_t half = 0; half < 2 && rv == WT_OK; half++) {
			uint32_t which = half == 0 ? first : 1 - first;
			rv = shardmap_part_push(
			    req, shardmap_rows_piece(which, (s.start + slot) * ie + s.inter_at,
			                             s.inter, slot));
		}
	if (rv == WT_OK)
		geo_experts(req->geom, s.count, 2 * s.inter, req->ctx->dm.hidden);
	return rv;
}

/* Expert w2 (down, [hid, Ie]): columns of each local expert under TP, whole under EP. */
int shardmap_part_expert_w2(const part_req *req)
{
	expert_span s;
	int rv = expert_span_of(req, 1, &s);
	int64_t hid = req->ctx->dm.hidden;
	for (int64_t slot = 0; slot < s.count && rv == WT_OK; slot++) {
		uint32_t j = (uint32_t)(s.start + slot);
		sm_piece pc = shardmap_rows_piece(j, 0, hid, slot);
		if (req->ctx->ep_size == 1) {
			pc.cols = true;
			pc.start = s.inter_at;
			pc.len = s.inter;
		}
		rv = shardmap_part_push(req, pc);
	}
	if (rv == WT_OK)
		geo_experts(req->geom, s.count, hid, s.inter);
	return rv;
}

/* The same from one stacked source [E, hid, Ie], viewed as [E*hid, Ie]: under EP the
 * rows [j*hid, (j+1)*hid) of each local expert; without EP every expert, so one piece
 * of columns [r*Il, (r+1)*Il) over all E*hid rows is the whole stack (its unit, the
 * expert slot, is 0: quantization cuts the assembled stack per expert by rows). */
int shardmap_part_expert_w2_stacked(const part_req *req)
{
	expert_span s;
	int rv = expert_span_of(req, 0, &s);
	int64_t hid = req->ctx->dm.hidden;
	if (rv == WT_OK && req->ctx->ep_size == 1) {
		sm_piece pc = shardmap_rows_piece(0, s.inter_at, s.inter, 0);
		pc.cols = true;
		pc.out_rows = s.experts * hid;
		rv = shardmap_part_push(req, pc);
	}
	for (int64_t slot = 0; slot < s.count && rv == WT_OK && req->ctx->ep_size > 1; slot++)
		rv = shardmap_part_push(req,
		                        shardmap_rows_piece(0, (s.start + slot) * hid, hid, slot));
	if (rv == WT_OK)
		geo_experts(req->geom, s.count, hid, s.inter);
	return rv;
}

/* Expert w13 bias [E, 2*Ie] (GPT-OSS), loaded de-interleaved to [gate_j; up_j] per expert
 * and viewed as [E*2*Ie, 1]: the rows w13 takes of each local expert, emitted as
 * [count, 2*Il] (the 2-D view [count*2*Il, 1]). */
int shardmap_part_expert_b13(const part_req *req)
{
	expert_span s;
	int rv = expert_span_of(req, 0, &s);
	uint32_t first = req->ctx->l->w13_up_gate ? 1 : 0;
	int64_t ie = req->ctx->dm.moe_inter;
	for (int64_t slot = 0; slot < s.count && rv == WT_OK; slot++)
		for (uint32_t half = 0; half < 2 && rv == WT_OK; half++) {
			uint32_t which = half == 0 ? first : 1 - first;
			rv = shardmap_part_push(
			    req,
			    shardmap_rows_piece(0, (2 * (s.start + slot) + which) * ie + s.inter_at,
			                        s.inter, 0));
		}
	if (rv == WT_OK) {
		shardmap_geo_2d(req->geom, s.count * 2 * s.inter, 1, 2);
		req->geom->shape[0] = s.count;
		req->geom->shape[1] = 2 * s.inter;
	}
	return rv;
}

/* Expert w2 bias [E, hid] (row parallel inside each expert): the local experts' rows,
 * whole on every tp rank (the engine adds it once). */
int shardmap_part_expert_b2(const part_req *req)
{
	expert_span s;
	int rv = expert_span_of(req, 0, &s);
	if (rv == WT_OK)
		rv = shardmap_part_push(req, shardmap_rows_piece(0, s.start, s.count, 0));
	if (rv == WT_OK)
		shardmap_geo_2d(req->geom, s.count, sm_tcols(req->src), 2);
	return rv;
}
