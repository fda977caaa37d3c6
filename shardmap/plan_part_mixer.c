/*
 * plan_part_mixer.c — the partition rules of the recurrent mixers' fused projections
 * (docs/format.md section 2): PLaMo 2's per-head interleaved in_proj, Qwen3-Next's conv1d channels,
 * LFM2's [B; C; x] conv in_proj, Granite 4.0's Mamba2 in_proj. Dispatched from plan_part.c's
 * part_rules[].
 */
#include <inttypes.h>

#include "shardmap/plan_part_int.h"

/* Two parts interleaved per unit ([U, 2, n] rows: PLaMo 2's mixer.in_proj, each mamba head's
 * gate rows then its x rows): the rank's units' part-0 pieces, then their part-1 pieces,
 * [gate_r; x_r] (vLLM's plamo2.py reshapes to [hid, U, 2n], chunks each head into gate / x
 * and concatenates them before MergedColumnParallelLinear splits each half by rank). */
int shardmap_part_halves_per_unit(const part_req *req)
{
	int64_t units, rows = sm_trows(req->src);
	int rv = shardmap_part_check_units(req, &units);
	if (rv != WT_OK)
		return rv;
	int64_t n = rows / (2 * units), local = units / req->tp_size, u0 = req->tp_rank * local;
	for (int64_t part = 0; part < 2; part++)
		for (int64_t u = u0; u < u0 + local && rv == WT_OK; u++)
			rv = shardmap_part_push(req,
			                        shardmap_rows_piece(0, (2 * u + part) * n, n, 0));
	if (rv == WT_OK)
		shardmap_geo_2d(req->geom, 2 * local * n, sm_tcols(req->src), req->rule->ndim);
	return rv;
}

/* Qwen3-Next's conv1d [2*Hk*dk + Hv*dv, 1, K] (viewed [channels, K]): the channels are
 * [q (Hk*dk); k (Hk*dk); v (Hv*dv)], and rank r takes rows [r*n/T, (r+1)*n/T) of each
 * segment, [q_r; k_r; v_r], as vLLM's mamba_v2_sharded_weight_loader: the channels of
 * its own key and value heads. Shape [(2*Hk*dk + Hv*dv)/T, 1, K]. */
int shardmap_part_conv_qkv(const part_req *req)
{
	const sm_dims *d = &req->ctx->dm;
	int64_t tp = req->tp_size, units;
	int rv = shardmap_part_check_units(req, &units); /* key heads (the rule's unit) */
	if (rv == WT_OK && d->lin_v_heads % tp)
		return shardmap_layout_err(req->ctx, req->err,
		                           "tensor '%s': tp_size %" PRId64
		                           " does not divide linear_num_value_heads %" PRId64,
		                           req->rt, tp, d->lin_v_heads);
	int64_t key = d->lin_k_heads * d->lin_k_dim, val = d->lin_v_heads * d->lin_v_dim;
	int64_t seg_at[3] = {0, key, 2 * key}, seg_rows[3] = {key, key, val}, rows = 0;
	for (int k = 0; k < 3 && rv == WT_OK; k++) {
		int64_t local = seg_rows[k] / tp;
		rv = shardmap_part_push(
		    req, shardmap_rows_piece(0, seg_at[k] + req->tp_rank * local, local, 0));
		rows += local;
	}
	if (rv != WT_OK)
		return rv;
	shardmap_geo_2d(req->geom, rows, sm_tcols(req->src), 3);
	req->geom->shape[1] = 1;
	req->geom->shape[2] = sm_tcols(req->src);
	return WT_OK;
}

/* LFM2's conv.in_proj [3*hid, hid] (and its bias [3*hid]): rows [B; C; x], hid each;
 * rank r takes rows [r*hid/T, (r+1)*hid/T) of each, [B_r; C_r; x_r], as vLLM's
 * MergedColumnParallelLinear with output_sizes [dim] * 3 loads it (short_conv.py). */
int shardmap_part_thirds(const part_req *req)
{
	int64_t units, tp = req->tp_size, third = sm_trows(req->src) / 3;
	int rv = shardmap_part_check_units(req, &units);
	int64_t local = third / tp;
	for (int k = 0; k < 3 && rv == WT_OK; k++)
		rv = shardmap_part_push(
		    req, shardmap_rows_piece(0, k * third + req->tp_rank * local, local, 0));
	if (rv == WT_OK)
		shardmap_geo_2d(req->geom, 3 * local, sm_tcols(req->src), req->rule->ndim);
	return rv;
}

/* Granite 4.0's Mamba2 in_proj [z (Im); x (Im); B (G*N); C (G*N); dt (Hm)] rows (weight
 * [.., hid] or bias) and conv1d [x; B; C] channels (weight [.., 1, Kc] or bias), as vLLM's
 * MambaMixer2 loads them (mamba_mixer2.py): every segment's rows split by tp; when tp does
 * not divide mamba_n_groups, which vLLM allows only for one group, B and C whole on every
 * rank (mamba_v2_sharded_weight_loader's duplicated group), so each rank's heads see the
 * group. vLLM refuses the rest: tp not dividing mamba_n_heads, nor mamba_n_groups > 1, and
 * a quantized model at tp > 1 unless tp divides mamba_n_groups. */
int shardmap_part_mamba(const part_req *req)
{
	const sm_ctx *x = req->ctx;
	const sm_dims *d = &x->dm;
	int64_t tp = req->tp_size, units;
	int rv = shardmap_part_check_units(req, &units); /* mamba heads (the rule's unit) */
	if (rv != WT_OK)
		return rv;
	bool dup = d->m_groups % tp != 0;
	if (dup && d->m_groups != 1)
		return shardmap_layout_err(x, req->err,
		                           "tensor '%s': tp_size %" PRId64
		                           " does not divide mamba_n_groups %" PRId64
		                           " (vLLM's MambaMixer2 duplicates the group only when "
		                           "there is one)",
		                           req->rt, tp, d->m_groups);
	if (dup && x->l->quant != WT_QUANT_NONE)
		return shardmap_layout_err(x, req->err,
		                           "tensor '%s': quant %s at tp_size %" PRId64
		                           " with mamba_n_groups %" PRId64
		                           ": vLLM's MambaMixer2 takes a quantized model at tp > 1 "
		                           "only when tp_size divides mamba_n_groups (quant none "
		                           "takes this tp_size)",
		                           req->rt, wt_quant_name(x->l->quant), tp, d->m_groups);
	int64_t gn = d->m_groups * d->m_state, im = d->m_inter;
	bool in_proj = req->rule->dims[0] == SM_D_MIN;
	int64_t seg[5] = {im, im, gn, gn, d->m_heads}, *sg = in_proj ? seg : seg + 1;
	int nseg = in_proj ? 5 : 3;
	bool grp[5] = {false, false, true, true, false}, *gp = in_proj ? grp : grp + 1;
	int64_t at = 0, rows = 0;
	for (int k = 0; k < nseg && rv == WT_OK; k++) {
		int64_t local = gp[k] && dup ? sg[k] : sg[k] / tp;
		int64_t from = gp[k] && dup ? at : at + req->tp_rank * local;
		rv = shardmap_part_push(req, shardmap_rows_piece(0, from, local, 0));
		rows += local;
		at += sg[k];
	}
	if (rv != WT_OK)
		return rv;
	const ckpt_tensor *t = req->src;
	shardmap_geo_2d(req->geom, rows, sm_tcols(t), t->ndim);
	for (int k = 1; k < t->ndim; k++)
		req->geom->shape[k] = t->shape[k];
	return WT_OK;
}
