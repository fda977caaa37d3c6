/*
 * plan_raw.c — the raw plan (README "Raw serving"): one rank whose tensors are
 * the checkpoint's own, under their checkpoint names, with their dtypes,
 * shapes and bytes unmodified — for any checkpoint the loader opens, whether
 * or not the registry knows its architecture. An include list restricts it to
 * the named tensors. Production reuses the SM_O_DATA copy path (one piece, the
 * whole source, same dtype: a plain copy).
 */
#include <stdlib.h>
#include <string.h>

#include "shardmap/plan_int.h"

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

/* The manifest role a checkpoint name suggests (metadata only; bytes are unchanged). */
static sm_role raw_role(const char *name)
{
	if (ends_with(name, ".weight_scale") || ends_with(name, ".weight_scale_inv"))
		return SM_ROLE_SCALE;
	if (ends_with(name, ".input_scale"))
		return SM_ROLE_INPUT_SCALE;
	if (ends_with(name, "bias"))
		return SM_ROLE_BIAS;
	return SM_ROLE_WEIGHT;
}

static int add_tensor(sm_plan *p, const ckpt *c, size_t k, wt_errbuf *err)
{
	const ckpt_tensor *t = ckpt_tensor_at(c, k);
	uint32_t gid;
	int rv = shardmap_plan_add_group(p, &gid, err);
	if (rv != WT_OK)
		return rv;
	sm_group *g = &p->groups[gid];
	if ((g->srcs = calloc(1, sizeof(sm_src))) == NULL)
		return wt_seterr(err, WT_ENOMEM, "plan: out of memory");
	g->n_srcs = 1;
	g->srcs[0] = (sm_src){.t = (uint32_t)k, .scale = UINT32_MAX, .mode = SM_SRC_RAW};
	if (ckpt_rope_heads(c, k) > 0) /* Mistral's native wq / wk: under HF names, HF rows */
		g->srcs[0] = (sm_src){
		    .t = (uint32_t)k, .scale = UINT32_MAX, .mode = SM_SRC_ROPE, .whole = true};
	int64_t rows = sm_trows(t), cols = sm_tcols(t);
	sm_piece pc = {.src = 0, .cols = false, .start = 0, .len = rows, .out_rows = rows};
	sm_out o = {0};
	o.name = strdup(t->name);
	if (o.name == NULL)
		return wt_seterr(err, WT_ENOMEM, "plan: out of memory");
	o.info.dtype = t->dtype;
	o.info.ndim = t->ndim;
	memcpy(o.info.shape, t->shape, sizeof(o.info.shape));
	o.info.nbytes = t->nbytes;
	o.info.role = raw_role(t->name);
	o.group = gid;
	o.okind = SM_O_DATA;
	o.rows = rows;
	o.cols = cols;
	o.units = 1;
	o.p0 = p->n_pieces;
	o.np = 1;
	o.scale_ix = SIZE_MAX;
	if ((rv = shardmap_plan_add_piece(p, &pc, err)) != WT_OK) {
		free(o.name);
		return rv;
	}
	size_t ix;
	if ((rv = shardmap_plan_add_out(p, 0, &o, &ix, err)) != WT_OK)
		return rv;
	return shardmap_plan_group_member(p, gid, 0, ix, err);
}

/* Tensor indices to serve: every one, or the include names (each must exist). */
static int select_tensors(const ckpt *c, const wt_layout *l, bool *want, wt_errbuf *err)
{
	size_t n = ckpt_n_tensors(c);
	for (size_t k = 0; k < n; k++)
		want[k] = l->n_include == 0;
	for (uint32_t i = 0; i < l->n_include; i++) {
		const ckpt_tensor *t = ckpt_find(c, l->include[i]);
		if (t == NULL)
			return wt_seterr(err, WT_ENOTFOUND,
			                 "include '%s': no such tensor in the checkpoint; list the "
			                 "checkpoint's names with weightctl inspect",
			                 l->include[i]);
		want[ckpt_tensor_index(c, t)] = true;
	}
	return WT_OK;
}

int shardmap_plan_raw(const ckpt *c, const wt_layout *l, sm_plan **out, wt_errbuf *err)
{
	int rv = wt_layout_check(l, err);
	if (rv != WT_OK)
		return rv;
	if (!l->raw)
		return wt_seterr(err, WT_EINVAL, "plan_raw: the layout is not raw");
	size_t n = ckpt_n_tensors(c);
	sm_plan *p = calloc(1, sizeof(*p));
	bool *want = calloc(n ? n : 1, sizeof(bool));
	if (p == NULL || want == NULL) {
		free(p);
		free(want);
		return wt_seterr(err, WT_ENOMEM, "plan: out of memory");
	}
	wt_layout_init(&p->layout);
	p->fam = NULL;
	p->tp = p->ep = 1;
	p->tied = false;
	if ((p->ranks = calloc(1, sizeof(sm_rank))) == NULL) {
		rv = wt_seterr(err, WT_ENOMEM, "plan: out of memory");
		goto out;
	}
	if (wt_layout_copy(&p->layout, l) != WT_OK) {
		rv = wt_seterr(err, WT_ENOMEM, "plan: copying the layout failed");
		goto out;
	}
	if ((rv = select_tensors(c, l, want, err)) != WT_OK)
		goto out;
	for (size_t k = 0; k < n && rv == WT_OK; k++)
		if (want[k])
			rv = add_tensor(p, c, k, err);
	if (rv == WT_OK)
		rv = shardmap_plan_finish(p, err);
	if (rv == WT_OK) {
		*out = p;
		p = NULL;
	}
out:
	free(want);
	shardmap_plan_free(p);
	return rv;
}
