/*
 * plan_inst.c — per runtime tensor ("instance": the sorted entries sharing a
 * runtime name), the divisibility checks and pieces of every rank
 * (plan_part.c, docs/format.md section 2), the quantization decision of
 * section 4, and the outputs of each rank (weight, scales, input scale).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shardmap/quant_ct.h"
#include "shardmap/quant_f8.h"
#include "shardmap/quant_mx.h"

/* How an instance is produced (decide()). */
typedef enum {
	M_DATA,    /* unquantized: converted to the output dtype */
	M_QUANT,   /* quantized by the layout's scheme */
	M_PASSBLK, /* FP8 block source, fp8-block layout: bytes and block scales pass through */
	M_MERGE,   /* per-tensor FP8 source, fp8-tensor layout: parts merged to one scale */
	M_PASSCT,  /* compressed-tensors int8/int4 source, same layout: codes and scales pass;
	              likewise an fbgemm_fp8 source under fp8-channel (FP8 codes, row scales) */
} inst_mode;

static const ckpt_tensor *ent_t(const sm_ctx *x, size_t k)
{
	return ckpt_tensor_at(x->c, x->ents[k].t);
}

/* docs/format.md section 4.4: block-scale slicing in whole 128 blocks. */
static bool block_aligned(const sm_ctx *x, size_t a, const sm_pvec *pv, const char **why)
{
	for (size_t k = 0; k < pv->n; k++) {
		const sm_piece *pc = &pv->v[k];
		const ckpt_tensor *t = ent_t(x, a + pc->src);
		int64_t end = pc->start + pc->len, lim = pc->cols ? t->shape[1] : t->shape[0];
		bool last_of_unit = k + 1 == pv->n || pv->v[k + 1].unit != pc->unit;
		if (pc->start % 128 || (end % 128 && end != lim)) {
			*why = pc->cols ? "columns" : "rows";
			return false;
		}
		if (!pc->cols && !last_of_unit && pc->len % 128) {
			*why = "fused part rows";
			return false;
		}
	}
	return true;
}

static int64_t cdiv(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

static uint64_t numel(const int64_t *s, int nd)
{
	uint64_t v = 1;
	for (int k = 0; k < nd; k++)
		v *= (uint64_t)s[k];
	return v;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

/* Name with `.weight` -> `.<leaf>` or `_weight` -> `_<leaf>`, else name + "_" + leaf.
 * Returns malloc'd memory (caller frees; NULL on ENOMEM). */
static char *derive_name(const char *rt, const char *weight_sfx_repl)
{
	size_t n = strlen(rt);
	char *s = malloc(n + strlen(weight_sfx_repl) + 2);
	if (!s)
		return NULL;
	if (ends_with(rt, "weight")) {
		memcpy(s, rt, n - 6);
		size_t m = strlen(weight_sfx_repl);
		memcpy(s + n - 6, weight_sfx_repl, m + 1);
	} else {
		snprintf(s, n + strlen(weight_sfx_repl) + 2, "%s_%s", rt, weight_sfx_repl);
	}
	return s;
}

typedef struct inst_info {
	size_t a, n;
	inst_mode mode;
	wt_dtype out_dt, work;
	bool requant;
	bool has_iscale;
	uint32_t gid;
} inst_info;

/* Append output o of instance `in` on rank with its pieces pv (takes o->name). */
static int add_out(sm_ctx *x, const inst_info *in, uint32_t rank, sm_out *o, const sm_pvec *pv,
                   size_t *ix, wt_errbuf *err)
{
	if (!o->name)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory for an output name",
		                 x->ents[in->a].rt);
	o->group = in->gid;
	o->p0 = x->p->n_pieces;
	o->np = pv->n;
	o->info.nbytes = numel(o->info.shape, o->info.ndim) * wt_dtype_size(o->info.dtype);
	for (size_t k = 0; k < pv->n; k++)
		if (shardmap_plan_add_piece(x->p, &pv->v[k], err) != WT_OK) {
			free(o->name);
			return WT_ENOMEM;
		}
	int rv = shardmap_plan_add_out(x->p, rank, o, ix, err);
	if (rv == WT_OK)
		rv = shardmap_plan_group_member(x->p, in->gid, rank, *ix, err);
	return rv;
}

static void set_shape(sm_out *o, const sm_geo *g)
{
	o->info.ndim = g->ndim;
	for (int k = 0; k < g->ndim; k++)
		o->info.shape[k] = g->shape[k];
	o->rows = g->rows;
	o->cols = g->cols;
	o->units = g->units;
}

/* The weight (or bias) output every mode starts from, shaped like the geometry. */
static sm_out weight_out(const sm_ctx *x, const inst_info *in, const sm_geo *g)
{
	const char *rt = x->ents[in->a].rt;
	sm_out w = {0};
	w.name = strdup(rt);
	w.info.role = ends_with(rt, "bias") ? SM_ROLE_BIAS : SM_ROLE_WEIGHT;
	w.info.requantized = in->requant;
	w.scale_ix = SIZE_MAX;
	set_shape(&w, g);
	return w;
}

/* Quantized by the layout's scheme (section 4.2): the weight and its scale output,
 * both [units, ...] for an expert stack. The scale's bytes are written by the weight. */
static int emit_quant(sm_ctx *x, const inst_info *in, uint32_t rank, const sm_pvec *pv,
                      const sm_geo *g, sm_out *w, wt_errbuf *err)
{
	const sm_scheme *sch = shardmap_scheme(x->l->quant);
	int64_t out_features = g->rows / g->units, in_features = g->cols;
	int64_t wshape[2], sshape[2];
	int sndim;
	sch->shapes(out_features, in_features, x->l->group_size, wshape, sshape, &sndim);
	w->okind = SM_O_QUANT;
	w->q = x->l->quant;
	w->work = in->work;
	w->info.dtype = sch->wdtype;
	sm_out s = {0};
	s.name = derive_name(x->ents[in->a].rt, "weight_scale");
	s.okind = SM_O_QSCALE;
	s.info.role = SM_ROLE_SCALE;
	s.info.dtype = WT_F32;
	s.info.requantized = in->requant;
	s.units = g->units;
	s.scale_ix = SIZE_MAX;
	int d = 0; /* the expert dimension first, when stacked */
	if (g->expert) {
		w->info.shape[d] = g->units;
		s.info.shape[d++] = g->units;
	}
	w->info.shape[d] = wshape[0];
	w->info.shape[d + 1] = wshape[1];
	w->info.ndim = d + 2;
	if (g->expert && sndim == 1) {
		/* one scalar per expert (fp8-tensor): [units, 1] */
		s.info.shape[1] = 1;
		s.info.ndim = 2;
	} else {
		for (int k = 0; k < sndim; k++)
			s.info.shape[d + k] = sshape[k];
		s.info.ndim = d + sndim;
	}
	sm_pvec none = {0};
	size_t six, wix;
	int rv = add_out(x, in, rank, &s, &none, &six, err);
	if (rv != WT_OK) {
		free(w->name);
		return rv;
	}
	w->scale_ix = six;
	return add_out(x, in, rank, w, pv, &wix, err);
}

/* Pass-through of FP8 block scales (section 4.4): each weight piece's 128-blocks. */
static int block_scale_pieces(const sm_ctx *x, const inst_info *in, const sm_pvec *pv,
                              const sm_geo *g, sm_out *s, sm_pvec *sp, wt_errbuf *err)
{
	const char *rt = x->ents[in->a].rt;
	int64_t srows = 0;
	int rv = WT_OK;
	s->okind = SM_O_DATA;
	for (size_t k = 0; k < pv->n && rv == WT_OK; k++) {
		const sm_piece *pc = &pv->v[k];
		const ckpt_tensor *t = ent_t(x, in->a + pc->src);
		sm_piece q = *pc;
		q.src = (uint32_t)(in->n + pc->src); /* the part's scale source */
		q.start = pc->start / 128;
		q.len = cdiv(pc->start + pc->len, 128) - q.start;
		q.out_rows = pc->cols ? cdiv(t->shape[0], 128) : q.len;
		srows += q.out_rows;
		rv = shardmap_pvec_push(sp, q, rt, err);
	}
	int64_t scols = cdiv(g->cols, 128);
	s->rows = srows;
	s->cols = scols;
	s->units = g->units;
	if (g->expert) {
		s->info.ndim = 3;
		s->info.shape[0] = g->units;
		s->info.shape[1] = srows / g->units;
		s->info.shape[2] = scols;
	} else {
		s->info.ndim = 2;
		s->info.shape[0] = srows;
		s->info.shape[1] = scols;
	}
	return rv;
}

/* Per-tensor FP8 merge: each part's scalar scale, max per unit; the weight pieces
 * learn their part's scale source (aux) to rescale against the max. */
static int merge_scale_pieces(const sm_ctx *x, const inst_info *in, sm_pvec *pv, const sm_geo *g,
                              sm_out *s, sm_pvec *sp, wt_errbuf *err)
{
	int rv = WT_OK;
	s->okind = SM_O_SCALE_MAX;
	for (size_t k = 0; k < pv->n && rv == WT_OK; k++) {
		sm_piece q =
		    shardmap_rows_piece((uint32_t)(in->n + pv->v[k].src), 0, 1, pv->v[k].unit);
		pv->v[k].aux = q.src;
		rv = shardmap_pvec_push(sp, q, x->ents[in->a].rt, err);
	}
	s->rows = g->units;
	s->cols = 1;
	s->units = g->units;
	s->info.ndim = g->expert ? 2 : 1;
	s->info.shape[0] = g->units;
	s->info.shape[1] = 1;
	return rv;
}

/* Merged input scale: the max of the input scales of the parts this rank holds (for
 * experts: its local experts). */
static int emit_input_scale(sm_ctx *x, const inst_info *in, uint32_t rank, const sm_pvec *pv,
                            const sm_geo *g, wt_errbuf *err)
{
	const char *rt = x->ents[in->a].rt;
	sm_pvec ip = {0};
	int rv = WT_OK;
	for (size_t k = 0; k < pv->n && rv == WT_OK; k++) {
		uint32_t part = pv->v[k].src;
		if (x->ents[in->a + part].iscale != SM_NONE)
			rv = shardmap_pvec_push(
			    &ip,
			    shardmap_rows_piece((uint32_t)(2 * in->n + part), 0, 1, pv->v[k].unit),
			    rt, err);
	}
	sm_out is = {0};
	is.name = derive_name(rt, "input_scale");
	is.okind = SM_O_SCALE_MAX;
	is.info.role = SM_ROLE_INPUT_SCALE;
	is.info.dtype = WT_F32;
	is.info.ndim = 1;
	is.info.shape[0] = 1;
	is.rows = 1;
	is.cols = 1;
	is.units = g->units; /* per expert while producing; the max over them is emitted */
	size_t six;
	if (rv == WT_OK)
		rv = add_out(x, in, rank, &is, &ip, &six, err);
	else
		free(is.name);
	free(ip.v);
	return rv;
}

/* Pre-quantized pass-through: weight bytes as stored, scales sliced or merged. */
static int emit_prequant(sm_ctx *x, const inst_info *in, uint32_t rank, sm_pvec *pv,
                         const sm_geo *g, sm_out *w, wt_errbuf *err)
{
	w->okind = in->mode == M_MERGE ? SM_O_MERGE : SM_O_DATA;
	w->info.dtype = WT_F8_E4M3;
	sm_pvec sp = {0};
	sm_out s = {0};
	s.name = derive_name(x->ents[in->a].rt, "weight_scale");
	s.info.role = SM_ROLE_SCALE;
	s.info.dtype = WT_F32;
	int rv = in->mode == M_PASSBLK ? block_scale_pieces(x, in, pv, g, &s, &sp, err)
	                               : merge_scale_pieces(x, in, pv, g, &s, &sp, err);
	size_t six, wix;
	if (rv == WT_OK)
		rv = add_out(x, in, rank, &s, &sp, &six, err);
	else
		free(s.name);
	if (rv == WT_OK && in->mode == M_MERGE && in->has_iscale)
		rv = emit_input_scale(x, in, rank, pv, g, err);
	free(sp.v);
	if (rv != WT_OK) {
		free(w->name);
		return rv;
	}
	return add_out(x, in, rank, w, pv, &wix, err);
}

/* Compressed-tensors pass-through (section 4.5): codes sliced as stored (int4: whole
 * int32 words of 8 codes), scales sliced with them and converted to F32, the merged
 * input scale when the checkpoint has them. An fbgemm_fp8 source under fp8-channel
 * (section 4.7) is the int8 channel case with FP8 codes. */
static int emit_ct(sm_ctx *x, const inst_info *in, uint32_t rank, const sm_pvec *pv,
                   const sm_geo *g, sm_out *w, wt_errbuf *err)
{
	const char *rt = x->ents[in->a].rt;
	sm_pvec wp = {0}, sp = {0};
	int64_t wcols, scols;
	int rv = shardmap_ct_pieces(x, in->n, pv, g->cols, &wp, &sp, &wcols, &scols, rt, err);
	sm_out s = {0};
	s.name = derive_name(rt, "weight_scale");
	s.okind = SM_O_DATA;
	s.info.role = SM_ROLE_SCALE;
	s.info.dtype = WT_F32;
	set_shape(&s, g);
	s.cols = scols;
	s.info.shape[s.info.ndim - 1] = scols;
	w->okind = SM_O_DATA;
	w->info.dtype = x->cfg->quant == CKPT_QUANT_CT_INT4 ? WT_I32
	                : shardmap_fb_source(x->cfg)        ? WT_F8_E4M3
	                                                    : WT_I8;
	w->cols = wcols;
	w->info.shape[w->info.ndim - 1] = wcols;
	size_t six, wix;
	if (rv == WT_OK)
		rv = add_out(x, in, rank, &s, &sp, &six, err);
	else
		free(s.name);
	if (rv == WT_OK && in->has_iscale)
		rv = emit_input_scale(x, in, rank, pv, g, err);
	if (rv == WT_OK)
		rv = add_out(x, in, rank, w, &wp, &wix, err);
	else
		free(w->name);
	free(wp.v);
	free(sp.v);
	return rv;
}

/* Outputs of one instance on one rank. */
static int emit_rank(sm_ctx *x, const inst_info *in, uint32_t rank, sm_pvec *pv, const sm_geo *g,
                     wt_errbuf *err)
{
	sm_out w = weight_out(x, in, g);
	if (in->mode == M_QUANT)
		return emit_quant(x, in, rank, pv, g, &w, err);
	if (in->mode == M_PASSBLK || in->mode == M_MERGE)
		return emit_prequant(x, in, rank, pv, g, &w, err);
	if (in->mode == M_PASSCT)
		return emit_ct(x, in, rank, pv, g, &w, err);
	size_t wix;
	w.okind = SM_O_DATA;
	w.info.dtype = in->out_dt;
	return add_out(x, in, rank, &w, pv, &wix, err);
}

static int check_int4(const sm_ctx *x, const inst_info *in, const sm_geo *g, wt_errbuf *err)
{
	int64_t K = g->cols, G = x->l->group_size;
	if (in->mode != M_QUANT || x->l->quant != WT_QUANT_INT4_GROUP || (K % G == 0 && K % 8 == 0))
		return WT_OK;
	return shardmap_layout_err(x, err,
	                           "tensor '%s': int4-group needs in_features %" PRId64
	                           " per rank to be a multiple of group_size %" PRId64
	                           " and of 8; pick a --group-size dividing it",
	                           x->ents[in->a].rt, K, G);
}

/* A compressed-tensors source asked for another scheme (or group size): requantized only
 * with requant=allow (section 4.5). */
static int ct_requant(const sm_ctx *x, inst_info *in, wt_errbuf *err)
{
	const ckpt_config *c = x->cfg;
	if (!x->l->requant_allow && !x->p)
		return WT_ELAYOUT;
	char src[160];
	shardmap_ct_describe(c, src, sizeof(src));
	if (!x->l->requant_allow && !shardmap_ct_keepable(c))
		return wt_seterr(err, WT_ELAYOUT,
		                 "tensor '%s': the checkpoint stores it compressed-tensors %s, "
		                 "which no output layout keeps; requantizing to %s needs "
		                 "--requant allow, or ask for --quant none (dequantized)",
		                 x->ents[in->a].rt, src, wt_quant_name(x->l->quant));
	if (!x->l->requant_allow) {
		bool i4 = c->quant == CKPT_QUANT_CT_INT4;
		char want[64], pass[64] = "int8-channel";
		snprintf(want, sizeof(want), "%s%s", wt_quant_name(x->l->quant),
		         i4 && x->l->quant == WT_QUANT_INT4_GROUP ? " with a different group_size"
		                                                  : "");
		if (i4)
			snprintf(pass, sizeof(pass), "int4-group --group-size %" PRId64,
			         c->quant_group);
		return wt_seterr(err, WT_ELAYOUT,
		                 "tensor '%s': the checkpoint stores it compressed-tensors %s and "
		                 "the layout asks for %s; requantizing needs --requant allow, or "
		                 "ask for --quant %s to pass it through",
		                 x->ents[in->a].rt, src, want, pass);
	}
	in->requant = true;
	in->work = WT_F32;
	return WT_OK;
}

static int decide(const sm_ctx *x, inst_info *in, wt_errbuf *err)
{
	const sm_rule *r = &x->fam->rules[x->ents[in->a].rule];
	size_t n = in->n, nex = 0, nf8 = 0, nct = 0;
	bool same = true;
	wt_dtype d0 = ent_t(x, in->a)->dtype;
	in->has_iscale = false;
	for (size_t k = 0; k < n; k++) {
		const ckpt_tensor *t = ent_t(x, in->a + k);
		if ((r->flags & SM_F_QUANT) && shardmap_entry_excluded(x, in->a + k))
			nex++;
		if (t->dtype == WT_F8_E4M3)
			nf8++;
		if (shardmap_ct_weight(x->cfg, t))
			nct++;
		if (t->dtype != d0)
			same = false;
		if (x->ents[in->a + k].iscale != SM_NONE)
			in->has_iscale = true;
	}
	bool isq = (r->flags & SM_F_QUANT) && x->l->quant != WT_QUANT_NONE;
	if (isq && nex > 0 && nex < n)
		return shardmap_partly_excluded(x, in->a, n, nex, err);
	bool wq = isq && nex == 0;
	bool fl = !shardmap_int_kept(x->fam, r, ent_t(x, in->a)); /* an int_keep table: as stored */
	bool q0 = d0 == WT_F8_E4M3 || nct > 0 || shardmap_mx_weight(ent_t(x, in->a)); /* -> BF16 */
	in->out_dt = x->l->dtype != WT_DTYPE_INVALID && fl ? x->l->dtype : (q0 ? WT_BF16 : d0);
	in->work = (same && (d0 == WT_F32 || d0 == WT_F16 || d0 == WT_BF16)) ? d0 : WT_F32;
	in->requant = false;
	const ckpt_config *c = x->cfg;
	if (wq && nf8 == n && c->quant == CKPT_QUANT_FP8_BLOCK &&
	    x->l->quant == WT_QUANT_FP8_BLOCK &&
	    (c->quant_block[0] <= 0 || c->quant_block[0] == 128) &&
	    (c->quant_block[1] <= 0 || c->quant_block[1] == 128))
		in->mode = M_PASSBLK;
	else if (wq && nf8 == n && c->quant == CKPT_QUANT_FP8_TENSOR &&
	         x->l->quant == WT_QUANT_FP8_TENSOR)
		in->mode = M_MERGE;
	else if (wq && nf8 == n && shardmap_fb_source(c) && x->l->quant == WT_QUANT_FP8_CHANNEL)
		in->mode = M_PASSCT; /* per-channel FP8 codes and row scales, as int8's */
	else if (wq && nct == n && shardmap_ct_pass(c, x->l))
		in->mode = M_PASSCT;
	else if (wq)
		in->mode = M_QUANT;
	else
		in->mode = M_DATA;
	if (in->mode == M_QUANT && nct > 0)
		return ct_requant(x, in, err);
	return WT_OK;
}

static int setup_group(sm_ctx *x, inst_info *in, wt_errbuf *err)
{
	int rv = shardmap_plan_add_group(x->p, &in->gid, err);
	if (rv != WT_OK)
		return rv;
	sm_group *g = &x->p->groups[in->gid];
	size_t n = in->n;
	g->srcs = calloc(3 * n, sizeof(sm_src));
	if (!g->srcs)
		return wt_seterr(err, WT_ENOMEM,
		                 "tensor '%s': out of memory for its %zu source slots",
		                 x->ents[in->a].rt, 3 * n);
	g->n_srcs = 3 * n;
	bool pass = in->mode == M_PASSBLK || in->mode == M_MERGE || in->mode == M_PASSCT;
	for (size_t k = 0; k < n; k++) {
		const sm_entry *e = &x->ents[in->a + k];
		const ckpt_tensor *t = ent_t(x, in->a + k);
		sm_src *s = &g->srcs[k];
		s->t = e->t;
		s->scale = e->wscale;
		s->mode = SM_SRC_RAW;
		if (t->dtype == WT_F8_E4M3 && !pass) {
			/* fbgemm_fp8: the block case with 1 x K blocks (quant_f8.c) */
			s->mode = x->cfg->quant == CKPT_QUANT_FP8_TENSOR ? SM_SRC_DQ_TENSOR
			                                                 : SM_SRC_DQ_BLOCK;
			s->whole = true;
		}
		/* stored otherwise than the layout keeps codes (W4A8 int4 in I8, pack-quantized
		 * int8 in I32): repacked while producing */
		bool repack = (x->cfg->quant == CKPT_QUANT_CT_INT4) != (t->dtype == WT_I32);
		if (shardmap_ct_weight(x->cfg, t) && (!pass || repack)) {
			s->mode = pass ? SM_SRC_PACK_CT : SM_SRC_DQ_CT;
			s->whole = true;
		}
		uint8_t kind = x->fam->rules[e->rule].kind;
		bool trans = x->fam->rules[e->rule].flags & SM_F_TRANS;
		bool f8t = trans && t->dtype == WT_F8_E4M3; /* an fbgemm stack (Llama 4) */
		/* GPT-OSS, Llama 4: transformed on load, expert by expert over the experts the
		 * ranks need (produce_stack.c) */
		if (shardmap_mx_weight(t) || trans || kind == SM_K_EXPB13) {
			s->mode = shardmap_mx_weight(t) ? SM_SRC_DQ_MX
			          : f8t && !pass        ? SM_SRC_DQ_TRANS
			          : trans               ? SM_SRC_TRANS
			                                : SM_SRC_DEINT;
			s->whole = true;
			s->deint = kind == SM_K_EXP13I;
		}
		/* Mistral's native wq / wk: heads permuted on load (produce.c) */
		if (s->mode == SM_SRC_RAW && ckpt_rope_heads(x->c, e->t) > 0) {
			s->mode = SM_SRC_ROPE;
			s->whole = true;
		}
		if ((x->fam->rules[e->rule].flags & SM_F_STACK2) && t->ndim == 2)
			s->e2d = e->view.shape[0];
		else if (trans && t->ndim == 2)
			s->e2d = 1; /* a Conv1D [K, N] read as one expert [1, K, N] (GPT-2) */
		/* a stack's scales [E, 1, N] pass through as the rows of its transposed view
		 * (read, like the stack, for the experts needed) */
		g->srcs[n + k] = (sm_src){.t = pass ? e->wscale : SM_NONE,
		                          .scale = SM_NONE,
		                          .mode = f8t ? SM_SRC_COLVEC : SM_SRC_RAW,
		                          .whole = true};
		bool use_is = in->mode == M_MERGE || in->mode == M_PASSCT;
		g->srcs[2 * n + k] = (sm_src){.t = use_is ? e->iscale : SM_NONE,
		                              .scale = SM_NONE,
		                              .mode = SM_SRC_RAW,
		                              .whole = true};
		if (!use_is && e->iscale != SM_NONE &&
		    (rv = shardmap_plan_add_skipped(x->p, ckpt_tensor_at(x->c, e->iscale)->name,
		                                    err)) != WT_OK)
			return rv;
	}
	return WT_OK;
}

/* Int4 pass-through: a rank whose columns split a source group is refused, or with
 * requant=allow the tensor is requantized (*aligned false). */
static int ct_groups(const sm_ctx *x, const inst_info *in, uint32_t rank, const sm_pvec *pv,
                     bool *aligned, wt_errbuf *err)
{
	const sm_piece *bad = NULL;
	if (shardmap_ct_group_aligned(x->cfg, pv, &bad))
		return WT_OK;
	*aligned = false;
	if (x->l->requant_allow)
		return WT_OK;
	return shardmap_layout_err(
	    x, err,
	    "tensor '%s': rank %u's columns [%" PRId64 ", %" PRId64 ") of '%s' split the "
	    "checkpoint's int4 groups of %" PRId64 " columns (compressed-tensors scales slice "
	    "in whole groups); add --requant allow to requantize it",
	    x->ents[in->a].rt, rank, bad->start, bad->start + bad->len,
	    ckpt_tensor_at(x->c, x->ents[in->a + bad->src].t)->name, x->cfg->quant_group);
}

/* Pieces and geometry of every rank; with FP8 block pass-through, whether every
 * rank's slices fall on whole 128-blocks (else requantize, or refuse). */
static int cut_ranks(sm_ctx *x, inst_info *in, sm_pvec *pvs, sm_geo *gs, wt_errbuf *err)
{
	uint32_t n_ranks = x->tp_size * x->ep_size, bad_rank = 0;
	bool aligned = true;
	const char *why = "";
	int rv = WT_OK;
	for (uint32_t rank = 0; rank < n_ranks && rv == WT_OK; rank++) {
		rv = shardmap_partition(x, in->a, in->n, rank % x->tp_size, rank / x->tp_size,
		                        &pvs[rank], &gs[rank], err);
		if (rv == WT_OK && in->mode == M_PASSBLK && aligned &&
		    !block_aligned(x, in->a, &pvs[rank], &why)) {
			aligned = false;
			bad_rank = rank;
		}
		if (rv == WT_OK && in->mode == M_PASSCT && aligned)
			rv = ct_groups(x, in, rank, &pvs[rank], &aligned, err);
	}
	if (rv != WT_OK || aligned)
		return rv;
	if (in->mode == M_PASSCT) {
		in->mode = M_QUANT;
		in->work = WT_F32;
		in->requant = true;
		return WT_OK;
	}
	if (!x->l->requant_allow)
		return shardmap_layout_err(
		    x, err,
		    "tensor '%s': FP8 block scales slice in whole 128-row/column "
		    "blocks, but rank %u's %s do not start/end on a multiple of 128; "
		    "add --requant allow to requantize it",
		    x->ents[in->a].rt, bad_rank, why);
	in->mode = M_QUANT;
	in->work = WT_F32;
	in->requant = true;
	return WT_OK;
}

static int cut_instance(sm_ctx *x, size_t a, size_t n, wt_errbuf *err)
{
	inst_info in = {.a = a, .n = n};
	int rv = decide(x, &in, err);
	if (rv != WT_OK)
		return rv;
	uint32_t n_ranks = x->tp_size * x->ep_size;
	sm_pvec *pvs = calloc(n_ranks, sizeof(sm_pvec));
	sm_geo *gs = calloc(n_ranks, sizeof(sm_geo));
	if (!pvs || !gs) {
		free(pvs);
		free(gs);
		return wt_seterr(err, WT_ENOMEM,
		                 "tensor '%s': out of memory for the pieces of %u ranks",
		                 x->ents[a].rt, n_ranks);
	}
	rv = cut_ranks(x, &in, pvs, gs, err);
	for (uint32_t rank = 0; rank < n_ranks && rv == WT_OK; rank++)
		rv = check_int4(x, &in, &gs[rank], err);
	if (rv == WT_OK && x->p)
		rv = setup_group(x, &in, err);
	for (uint32_t rank = 0; rank < n_ranks && rv == WT_OK && x->p; rank++)
		rv = emit_rank(x, &in, rank, &pvs[rank], &gs[rank], err);
	for (uint32_t rank = 0; rank < n_ranks; rank++)
		free(pvs[rank].v);
	free(pvs);
	free(gs);
	return rv;
}

/* The instance under its layer's own dims (shardmap_layer_dm). */
static int do_instance(sm_ctx *x, size_t a, size_t n, wt_errbuf *err)
{
	sm_dims keep = x->dm, tmp;
	x->dm = *shardmap_layer_dm(x, &x->fam->rules[x->ents[a].rule], x->ents[a].i, &tmp);
	int rv = cut_instance(x, a, n, err);
	x->dm = keep;
	return rv;
}

/* Whether a layer of x is a MoE layer. */
static bool any_moe(const sm_ctx *x)
{
	for (int64_t i = 0; x->fam->layer_is_moe && i < x->dm.n_layers; i++)
		if (x->fam->layer_is_moe(x->cfg, i))
			return true;
	return false;
}

int shardmap_plan_instances(sm_ctx *x, wt_errbuf *err)
{
	if (x->ep_size > 1 && x->dm.n_experts == 0)
		return !x->p ? WT_ELAYOUT
		             : wt_seterr(err, WT_ELAYOUT,
		                         "ep_size %u but the model has no experts; use ep_size 1",
		                         x->ep_size);
	if (x->fam->tp_experts && x->dm.n_experts > 0 && x->ep_size > 1)
		return !x->p ? WT_ELAYOUT
		             : wt_seterr(err, WT_ELAYOUT,
		                         "ep_size %u: %s's MoE (vLLM's %s) holds every expert on "
		                         "every rank, each cut by tp_size, with no expert "
		                         "parallelism; use ep_size 1",
		                         x->ep_size, x->fam->name,
		                         strcmp(x->fam->name, "arctic") == 0 ? "ArcticMoE"
		                                                             : "MiniCPMMoE");
	if (x->dm.n_experts > 0 && x->ep_size > x->dm.n_experts)
		return !x->p ? WT_ELAYOUT
		             : wt_seterr(err, WT_ELAYOUT,
		                         "ep_size %u exceeds the %" PRId64
		                         " routed experts; use ep_size <= %" PRId64,
		                         x->ep_size, x->dm.n_experts, x->dm.n_experts);
	if (x->fam->tp_le_experts && x->dm.n_experts > 0 && x->tp_size > x->dm.n_experts &&
	    any_moe(x))
		return !x->p ? WT_ELAYOUT
		             : wt_seterr(
		                   err, WT_ELAYOUT,
		                   "tp_size %u exceeds the %" PRId64
		                   " routed experts (vLLM's %s raises); use tp_size <= %" PRId64,
		                   x->tp_size, x->dm.n_experts, x->fam->name, x->dm.n_experts);
	/* Head-split tensors first, so a head-count error is the one reported. */
	for (int pass = 0; pass < 3; pass++) {
		size_t a = 0;
		while (a < x->n_ents) {
			size_t b = a + 1;
			while (b < x->n_ents && strcmp(x->ents[b].rt, x->ents[a].rt) == 0)
				b++;
			const sm_rule *r = &x->fam->rules[x->ents[a].rule];
			int prio = r->kind == SM_K_QKV || r->kind == SM_K_QKVC ||
			                   r->kind == SM_K_QKVH || r->kind == SM_K_QKVI
			               ? 0
			               : (r->unit == SM_U_HEADS ? 1 : 2);
			if (prio == pass) {
				int rv = do_instance(x, a, b - a, err);
				if (rv != WT_OK)
					return rv;
			}
			a = b;
		}
	}
	return WT_OK;
}

void shardmap_suggest_tp(const sm_ctx *x, char *buf, size_t cap)
{
	uint32_t ok[64];
	size_t n = 0;
	for (uint32_t t = 1; t <= 64; t++) {
		sm_ctx y = *x;
		y.tp_size = t;
		y.p = NULL;
		if (shardmap_plan_instances(&y, NULL) == WT_OK)
			ok[n++] = t;
	}
	if (n == 0) {
		snprintf(buf, cap, "; no tp_size up to 64 works with ep_size %u", x->ep_size);
		return;
	}
	size_t o = (size_t)snprintf(buf, cap, "; use tp_size ");
	for (size_t k = 0; k < n && o < cap; k++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%u",
		                      k == 0 ? "" : (k + 1 == n ? " or " : ", "), ok[k]);
	if (x->ep_size > 1 && o < cap)
		snprintf(buf + o, cap - o, " (with ep_size %u)", x->ep_size);
}
