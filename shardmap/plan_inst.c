/*
 * plan_inst.c — per runtime tensor ("instance": the sorted entries sharing a
 * runtime name), the partition rules of docs/format.md section 2 for every rank,
 * the divisibility checks, and the quantization decision of section 4.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shardmap/plan_int.h"

typedef struct pvec {
	sm_piece *v;
	size_t n, cap;
} pvec;

typedef struct geo {
	int64_t rows, cols, units;
	int ndim;
	int64_t shape[WT_MAX_DIMS];
	bool expert;
} geo;

typedef enum { M_DATA, M_QUANT, M_PASSBLK, M_MERGE } inst_mode;

static int push(pvec *pv, sm_piece pc)
{
	if (pv->n == pv->cap) {
		size_t nc = pv->cap ? pv->cap * 2 : 16;
		sm_piece *nv = realloc(pv->v, nc * sizeof(sm_piece));
		if (!nv)
			return WT_ENOMEM;
		pv->v = nv;
		pv->cap = nc;
	}
	pv->v[pv->n++] = pc;
	return WT_OK;
}

static sm_piece rows_piece(uint32_t src, int64_t start, int64_t len, int64_t unit)
{
	sm_piece pc = {.src = src,
	               .aux = SM_NONE,
	               .cols = false,
	               .start = start,
	               .len = len,
	               .out_rows = len,
	               .unit = unit};
	return pc;
}

/* Layout error: in a dry run only the code; else the message plus a tp_size suggestion. */
static int lay_err(const sm_ctx *x, wt_errbuf *err, const char *fmt, ...) WT_PRINTF(3, 4);
static int lay_err(const sm_ctx *x, wt_errbuf *err, const char *fmt, ...)
{
	if (!x->p || !err)
		return WT_ELAYOUT;
	char msg[WT_ERRMSG_MAX], sug[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	shardmap_suggest_tp(x, sug, sizeof(sug));
	return wt_seterr(err, WT_ELAYOUT, "%s%s", msg, sug);
}

static const ckpt_tensor *ent_t(const sm_ctx *x, size_t k)
{
	return ckpt_tensor_at(x->c, x->ents[k].t);
}

static int64_t trows(const ckpt_tensor *t)
{
	return t->ndim >= 1 ? t->shape[0] : 1;
}

static int64_t tcols(const ckpt_tensor *t)
{
	int64_t c = 1;
	for (int k = 1; k < t->ndim; k++)
		c *= t->shape[k];
	return c;
}

static int64_t unit_count(const sm_ctx *x, int unit, const char **what)
{
	switch (unit) {
	case SM_U_HEADS:
		*what = "num_attention_heads";
		return x->dm.H;
	case SM_U_I:
		*what = "intermediate_size";
		return x->dm.I;
	case SM_U_IE:
		*what = "moe_intermediate_size";
		return x->dm.Ie;
	case SM_U_ISH:
		*what = "shared expert intermediate size";
		return x->dm.ISH;
	case SM_U_VHEADS:
		*what = "vision_config.num_heads";
		return x->dm.VH;
	case SM_U_VI:
		*what = "the vision MLP size (embed_dim * mlp_ratio)";
		return x->dm.VI;
	case SM_U_VM:
		*what = "the vision merger size (embed_dim * spatial_merge_size^2)";
		return x->dm.VM;
	default:
		*what = "?";
		return 1;
	}
}

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static void geo2(geo *g, int64_t rows, int64_t cols, int ndim)
{
	g->rows = rows;
	g->cols = cols;
	g->units = 1;
	g->ndim = ndim;
	g->shape[0] = rows;
	g->shape[1] = cols;
	g->expert = false;
}

/* Pieces (src = instance-local entry index) and geometry of instance [a, a+n) on (t, e). */
static int gen(const sm_ctx *x, size_t a, size_t n, uint32_t t, uint32_t e, pvec *pv, geo *g,
               wt_errbuf *err)
{
	const sm_rule *r = &x->fam->rules[x->ents[a].rule];
	const char *rt = x->ents[a].rt, *what;
	int64_t T = x->T;
	const ckpt_tensor *t0 = ent_t(x, a);
	switch (r->kind) {
	case SM_K_REPL:
		geo2(g, trows(t0), tcols(t0), t0->ndim);
		for (int k = 0; k < t0->ndim; k++)
			g->shape[k] = t0->shape[k];
		return push(pv, rows_piece(0, 0, trows(t0), 0));
	case SM_K_VOCAB: {
		int64_t V = trows(t0), pad = x->l->vocab_pad ? x->l->vocab_pad : 1;
		int64_t m = pad / gcd64(pad, T) * T;
		int64_t Vp = (V + m - 1) / m * m, Vl = Vp / T, lo = t * Vl, hi = lo + Vl;
		if (m > SM_VOCAB_FREE_MULTIPLE && Vp - V > V)
			return wt_seterr(
			    err, WT_ELAYOUT,
			    "tensor '%s': vocab_pad %" PRId64 " with tp_size %" PRId64
			    " pads %" PRId64 " rows to %" PRId64 " (a multiple of %" PRId64
			    "), more padding than vocabulary; use a vocab_pad of 64..1024",
			    rt, pad, T, V, Vp, m);
		geo2(g, Vl, tcols(t0), 2);
		if (lo < V && push(pv, rows_piece(0, lo, (hi < V ? hi : V) - lo, 0)))
			return WT_ENOMEM;
		if (hi > V) {
			sm_piece z = rows_piece(SM_ZERO, 0, hi - (lo > V ? lo : V), 0);
			if (push(pv, z))
				return WT_ENOMEM;
		}
		return WT_OK;
	}
	case SM_K_QKV: {
		int64_t H = x->dm.H, KV = x->dm.KV, d = x->dm.d;
		if (H % T)
			return lay_err(x, err,
			               "tensor '%s': tp_size %" PRId64
			               " does not divide num_attention_heads %" PRId64,
			               rt, T, H);
		if (KV % T && T % KV)
			return lay_err(x, err,
			               "tensor '%s': tp_size %" PRId64
			               " and num_key_value_heads %" PRId64
			               ": one must divide the other",
			               rt, T, KV);
		if (n != 3)
			return wt_seterr(err, WT_ENOTFOUND, "tensor '%s': q, k and v are needed",
			                 rt);
		int64_t Hl = H / T, KVl, ks;
		if (KV >= T) {
			KVl = KV / T;
			ks = t;
		} else {
			KVl = 1;
			ks = t / (T / KV);
		}
		int64_t rows = (Hl + 2 * KVl) * d;
		geo2(g, rows, tcols(t0), r->ndim);
		if (push(pv, rows_piece(0, t * Hl * d, Hl * d, 0)) ||
		    push(pv, rows_piece(1, ks * KVl * d, KVl * d, 0)) ||
		    push(pv, rows_piece(2, ks * KVl * d, KVl * d, 0)))
			return WT_ENOMEM;
		return WT_OK;
	}
	case SM_K_QKVF: {
		/* one source [q; k; v], each part U*hd rows: rank t takes heads [t*U/T, (t+1)*U/T)
		 * of each */
		int64_t U = unit_count(x, r->unit, &what), part = trows(t0) / 3, hl;
		if (U % T)
			return lay_err(
			    x, err, "tensor '%s': tp_size %" PRId64 " does not divide %s %" PRId64,
			    rt, T, what, U);
		hl = part / U * (U / T);
		geo2(g, 3 * hl, tcols(t0), r->ndim);
		for (int64_t k = 0; k < 3; k++)
			if (push(pv, rows_piece(0, k * part + t * hl, hl, 0)))
				return WT_ENOMEM;
		return WT_OK;
	}
	case SM_K_ROWS: {
		int64_t U = unit_count(x, r->unit, &what), rows = 0;
		if (U % T)
			return lay_err(
			    x, err, "tensor '%s': tp_size %" PRId64 " does not divide %s %" PRId64,
			    rt, T, what, U);
		for (size_t k = 0; k < n; k++) {
			int64_t R = trows(ent_t(x, a + k));
			if (R % T)
				return lay_err(x, err,
				               "tensor '%s': tp_size %" PRId64
				               " does not divide its %" PRId64 " rows",
				               rt, T, R);
			if (push(pv, rows_piece((uint32_t)k, t * (R / T), R / T, 0)))
				return WT_ENOMEM;
			rows += R / T;
		}
		geo2(g, rows, tcols(t0), r->ndim);
		return WT_OK;
	}
	case SM_K_COLS: {
		int64_t U = unit_count(x, r->unit, &what), K = tcols(t0);
		if (U % T || K % T)
			return lay_err(
			    x, err, "tensor '%s': tp_size %" PRId64 " does not divide %s %" PRId64,
			    rt, T, what, U);
		geo2(g, trows(t0), K / T, 2);
		sm_piece pc = {.src = 0,
		               .aux = SM_NONE,
		               .cols = true,
		               .start = t * (K / T),
		               .len = K / T,
		               .out_rows = trows(t0),
		               .unit = 0};
		return push(pv, pc);
	}
	case SM_K_EXP13:
	case SM_K_EXP2: {
		int64_t E = x->dm.E, P = x->P, Ie = x->dm.Ie, Il = Ie;
		int64_t count = E, start = 0;
		bool w13 = r->kind == SM_K_EXP13;
		if ((size_t)(w13 ? 2 * E : E) != n)
			return wt_seterr(err, WT_ENOTFOUND, "tensor '%s': experts missing", rt);
		if (P == 1) {
			if (Ie % T)
				return lay_err(x, err,
				               "tensor '%s': tp_size %" PRId64
				               " does not divide moe_intermediate_size %" PRId64
				               " (or use ep_size > 1)",
				               rt, T, Ie);
			Il = Ie / T;
		} else {
			count = E / P + (e < E % P);
			start = (int64_t)e * (E / P) + ((int64_t)e < E % P ? (int64_t)e : E % P);
		}
		int64_t off = P == 1 ? t * Il : 0, hid = x->dm.hid;
		for (int64_t jj = 0; jj < count; jj++) {
			int64_t j = start + jj;
			if (w13) {
				int first = x->l->w13_up_gate ? 1 : 0;
				for (int s = 0; s < 2; s++) {
					int part = s == 0 ? first : 1 - first;
					if (push(pv,
					         rows_piece((uint32_t)(part * E + j), off, Il, jj)))
						return WT_ENOMEM;
				}
			} else if (P == 1) {
				sm_piece pc = {.src = (uint32_t)j,
				               .aux = SM_NONE,
				               .cols = true,
				               .start = off,
				               .len = Il,
				               .out_rows = hid,
				               .unit = jj};
				if (push(pv, pc))
					return WT_ENOMEM;
			} else if (push(pv, rows_piece((uint32_t)j, 0, hid, jj))) {
				return WT_ENOMEM;
			}
		}
		g->expert = true;
		g->units = count;
		g->ndim = 3;
		g->shape[0] = count;
		g->shape[1] = w13 ? 2 * Il : hid;
		g->shape[2] = w13 ? hid : Il;
		g->rows = count * g->shape[1];
		g->cols = g->shape[2];
		return WT_OK;
	}
	default:
		return wt_seterr(err, WT_EINVAL, "tensor '%s': bad rule kind", rt);
	}
}

/* docs/format.md section 4.4: block-scale slicing in whole 128 blocks. */
static bool block_aligned(const sm_ctx *x, size_t a, const pvec *pv, const char **why)
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

static int add_out(sm_ctx *x, const inst_info *in, uint32_t rank, sm_out *o, const pvec *pv,
                   size_t *ix, wt_errbuf *err)
{
	o->group = in->gid;
	o->p0 = x->p->n_pieces;
	o->np = pv->n;
	o->info.nbytes = numel(o->info.shape, o->info.ndim) * wt_dtype_size(o->info.dtype);
	for (size_t k = 0; k < pv->n; k++)
		if (shardmap_plan_add_piece(x->p, &pv->v[k], err) != WT_OK) {
			free(o->name);
			return WT_ENOMEM;
		}
	if (!o->name)
		return wt_seterr(err, WT_ENOMEM, "plan: out of memory");
	int rv = shardmap_plan_add_out(x->p, rank, o, ix, err);
	if (rv == WT_OK)
		rv = shardmap_plan_group_member(x->p, in->gid, rank, *ix, err);
	return rv;
}

static void set_shape(sm_out *o, const geo *g)
{
	o->info.ndim = g->ndim;
	for (int k = 0; k < g->ndim; k++)
		o->info.shape[k] = g->shape[k];
	o->rows = g->rows;
	o->cols = g->cols;
	o->units = g->units;
}

/* Outputs of one instance on one rank. */
static int emit_rank(sm_ctx *x, const inst_info *in, uint32_t rank, pvec *pv, const geo *g,
                     wt_errbuf *err)
{
	const char *rt = x->ents[in->a].rt;
	bool bias = ends_with(rt, "bias");
	sm_out w = {0};
	w.name = strdup(rt);
	w.info.role = bias ? SM_ROLE_BIAS : SM_ROLE_WEIGHT;
	w.info.requantized = in->requant;
	w.scale_ix = SIZE_MAX;
	set_shape(&w, g);
	size_t wix, six;
	size_t n = in->n;
	if (in->mode == M_DATA) {
		w.okind = SM_O_DATA;
		w.info.dtype = in->out_dt;
		return add_out(x, in, rank, &w, pv, &wix, err);
	}
	if (in->mode == M_QUANT) {
		const sm_scheme *sch = shardmap_scheme(x->l->quant);
		int64_t N = g->rows / g->units, K = g->cols, G = x->l->group_size;
		int64_t ws[2], ss[2];
		int sn;
		sch->shapes(N, K, G, ws, ss, &sn);
		w.okind = SM_O_QUANT;
		w.q = x->l->quant;
		w.work = in->work;
		w.info.dtype = sch->wdtype;
		sm_out s = {0};
		s.name = derive_name(rt, "weight_scale");
		s.okind = SM_O_QSCALE;
		s.info.role = SM_ROLE_SCALE;
		s.info.dtype = WT_F32;
		s.info.requantized = in->requant;
		s.units = g->units;
		s.scale_ix = SIZE_MAX;
		int d = 0;
		if (g->expert) {
			w.info.shape[d] = g->units;
			s.info.shape[d++] = g->units;
		}
		w.info.shape[d] = ws[0];
		w.info.shape[d + 1] = ws[1];
		w.info.ndim = d + 2;
		if (g->expert && sn == 1) {
			s.info.shape[1] = 1;
			s.info.ndim = 2;
		} else {
			for (int k = 0; k < sn; k++)
				s.info.shape[d + k] = ss[k];
			s.info.ndim = d + sn;
		}
		pvec none = {0};
		int rv = add_out(x, in, rank, &s, &none, &six, err);
		if (rv != WT_OK) {
			free(w.name);
			return rv;
		}
		w.scale_ix = six;
		return add_out(x, in, rank, &w, pv, &wix, err);
	}
	/* Pre-quantized pass-through: weight bytes as stored, scales sliced or merged. */
	w.okind = in->mode == M_MERGE ? SM_O_MERGE : SM_O_DATA;
	w.info.dtype = WT_F8_E4M3;
	pvec sp = {0};
	sm_out s = {0};
	s.name = derive_name(rt, "weight_scale");
	s.info.role = SM_ROLE_SCALE;
	s.info.dtype = WT_F32;
	int rv = WT_OK;
	if (in->mode == M_PASSBLK) {
		s.okind = SM_O_DATA;
		int64_t srows = 0;
		for (size_t k = 0; k < pv->n && rv == WT_OK; k++) {
			const sm_piece *pc = &pv->v[k];
			const ckpt_tensor *t = ent_t(x, in->a + pc->src);
			sm_piece q = *pc;
			q.src = (uint32_t)(n + pc->src);
			q.start = pc->start / 128;
			q.len = cdiv(pc->start + pc->len, 128) - q.start;
			q.out_rows = pc->cols ? cdiv(t->shape[0], 128) : q.len;
			srows += q.out_rows;
			rv = push(&sp, q);
		}
		int64_t scols = cdiv(g->cols, 128);
		s.rows = srows;
		s.cols = scols;
		s.units = g->units;
		if (g->expert) {
			s.info.ndim = 3;
			s.info.shape[0] = g->units;
			s.info.shape[1] = srows / g->units;
			s.info.shape[2] = scols;
		} else {
			s.info.ndim = 2;
			s.info.shape[0] = srows;
			s.info.shape[1] = scols;
		}
	} else {
		s.okind = SM_O_SCALE_MAX;
		for (size_t k = 0; k < pv->n && rv == WT_OK; k++) {
			sm_piece q = rows_piece((uint32_t)(n + pv->v[k].src), 0, 1, pv->v[k].unit);
			pv->v[k].aux = q.src;
			rv = push(&sp, q);
		}
		s.rows = g->units;
		s.cols = 1;
		s.units = g->units;
		s.info.ndim = g->expert ? 2 : 1;
		s.info.shape[0] = g->units;
		s.info.shape[1] = 1;
	}
	if (rv == WT_OK)
		rv = add_out(x, in, rank, &s, &sp, &six, err);
	else
		free(s.name);
	if (rv == WT_OK && in->mode == M_MERGE && in->has_iscale) {
		pvec ip = {0};
		/* the parts this rank holds (for experts: its local experts) */
		for (size_t k = 0; k < pv->n && rv == WT_OK; k++) {
			uint32_t part = pv->v[k].src;
			if (x->ents[in->a + part].iscale != SM_NONE)
				rv = push(&ip, rows_piece((uint32_t)(2 * n + part), 0, 1, 0));
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
		is.units = 1;
		if (rv == WT_OK)
			rv = add_out(x, in, rank, &is, &ip, &six, err);
		else
			free(is.name);
		free(ip.v);
	}
	free(sp.v);
	if (rv != WT_OK) {
		free(w.name);
		return rv;
	}
	return add_out(x, in, rank, &w, pv, &wix, err);
}

static int check_int4(const sm_ctx *x, const inst_info *in, const geo *g, wt_errbuf *err)
{
	int64_t K = g->cols, G = x->l->group_size;
	if (in->mode != M_QUANT || x->l->quant != WT_QUANT_INT4_GROUP || (K % G == 0 && K % 8 == 0))
		return WT_OK;
	return lay_err(x, err,
	               "tensor '%s': int4-group needs in_features %" PRId64
	               " per rank to be a multiple of group_size %" PRId64
	               " and of 8; pick a --group-size dividing it",
	               x->ents[in->a].rt, K, G);
}

static int decide(const sm_ctx *x, inst_info *in, wt_errbuf *err)
{
	const sm_rule *r = &x->fam->rules[x->ents[in->a].rule];
	size_t n = in->n, nex = 0, nf8 = 0;
	bool same = true;
	wt_dtype d0 = ent_t(x, in->a)->dtype;
	in->has_iscale = false;
	for (size_t k = 0; k < n; k++) {
		const ckpt_tensor *t = ent_t(x, in->a + k);
		if ((r->flags & SM_F_QUANT) && shardmap_entry_excluded(x, in->a + k))
			nex++;
		if (t->dtype == WT_F8_E4M3)
			nf8++;
		if (t->dtype != d0)
			same = false;
		if (x->ents[in->a + k].iscale != SM_NONE)
			in->has_iscale = true;
	}
	bool isq = (r->flags & SM_F_QUANT) && x->l->quant != WT_QUANT_NONE;
	if (isq && nex > 0 && nex < n)
		return shardmap_partly_excluded(x, in->a, n, nex, err);
	bool wq = isq && nex == 0;
	in->out_dt =
	    x->l->dtype != WT_DTYPE_INVALID ? x->l->dtype : (d0 == WT_F8_E4M3 ? WT_BF16 : d0);
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
	else if (wq)
		in->mode = M_QUANT;
	else
		in->mode = M_DATA;
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
		return wt_seterr(err, WT_ENOMEM, "plan: out of memory");
	g->n_srcs = 3 * n;
	bool pass = in->mode == M_PASSBLK || in->mode == M_MERGE;
	for (size_t k = 0; k < n; k++) {
		const sm_entry *e = &x->ents[in->a + k];
		const ckpt_tensor *t = ent_t(x, in->a + k);
		sm_src *s = &g->srcs[k];
		s->t = e->t;
		s->scale = e->wscale;
		s->mode = SM_SRC_RAW;
		if (t->dtype == WT_F8_E4M3 && !pass) {
			s->mode = x->cfg->quant == CKPT_QUANT_FP8_BLOCK ? SM_SRC_DQ_BLOCK
			                                                : SM_SRC_DQ_TENSOR;
			s->whole = true;
		}
		g->srcs[n + k] = (sm_src){.t = pass ? e->wscale : SM_NONE,
		                          .scale = SM_NONE,
		                          .mode = SM_SRC_RAW,
		                          .whole = true};
		bool use_is = in->mode == M_MERGE;
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

static int do_instance(sm_ctx *x, size_t a, size_t n, wt_errbuf *err)
{
	inst_info in = {.a = a, .n = n};
	int rv = decide(x, &in, err);
	if (rv != WT_OK)
		return rv;
	uint32_t R = x->T * x->P;
	pvec *pvs = calloc(R, sizeof(pvec));
	geo *gs = calloc(R, sizeof(geo));
	if (!pvs || !gs) {
		free(pvs);
		free(gs);
		return wt_seterr(err, WT_ENOMEM, "plan: out of memory");
	}
	bool aligned = true;
	const char *why = "";
	uint32_t bad_rank = 0;
	for (uint32_t rank = 0; rank < R && rv == WT_OK; rank++) {
		rv = gen(x, a, n, rank % x->T, rank / x->T, &pvs[rank], &gs[rank], err);
		if (rv == WT_ENOMEM)
			rv = wt_seterr(err, WT_ENOMEM, "plan: out of memory");
		if (rv == WT_OK && in.mode == M_PASSBLK && aligned &&
		    !block_aligned(x, a, &pvs[rank], &why)) {
			aligned = false;
			bad_rank = rank;
		}
	}
	if (rv == WT_OK && !aligned) {
		if (x->l->requant_allow) {
			in.mode = M_QUANT;
			in.work = WT_F32;
			in.requant = true;
		} else {
			rv = lay_err(
			    x, err,
			    "tensor '%s': FP8 block scales slice in whole 128-row/column "
			    "blocks, but rank %u's %s do not start/end on a multiple of 128; "
			    "add --requant allow to requantize it",
			    x->ents[a].rt, bad_rank, why);
		}
	}
	for (uint32_t rank = 0; rank < R && rv == WT_OK; rank++)
		rv = check_int4(x, &in, &gs[rank], err);
	if (rv == WT_OK && x->p)
		rv = setup_group(x, &in, err);
	for (uint32_t rank = 0; rank < R && rv == WT_OK && x->p; rank++)
		rv = emit_rank(x, &in, rank, &pvs[rank], &gs[rank], err);
	for (uint32_t rank = 0; rank < R; rank++)
		free(pvs[rank].v);
	free(pvs);
	free(gs);
	return rv;
}

int shardmap_plan_instances(sm_ctx *x, wt_errbuf *err)
{
	if (x->P > 1 && x->dm.E == 0)
		return !x->p ? WT_ELAYOUT
		             : wt_seterr(err, WT_ELAYOUT,
		                         "ep_size %u but the model has no experts; use ep_size 1",
		                         x->P);
	if (x->dm.E > 0 && x->P > x->dm.E)
		return !x->p ? WT_ELAYOUT
		             : wt_seterr(err, WT_ELAYOUT,
		                         "ep_size %u exceeds the %" PRId64
		                         " routed experts; use ep_size <= %" PRId64,
		                         x->P, x->dm.E, x->dm.E);
	/* Head-split tensors first, so a head-count error is the one reported. */
	for (int pass = 0; pass < 3; pass++) {
		size_t a = 0;
		while (a < x->n_ents) {
			size_t b = a + 1;
			while (b < x->n_ents && strcmp(x->ents[b].rt, x->ents[a].rt) == 0)
				b++;
			const sm_rule *r = &x->fam->rules[x->ents[a].rule];
			int prio = r->kind == SM_K_QKV ? 0 : (r->unit == SM_U_HEADS ? 1 : 2);
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
		y.T = t;
		y.p = NULL;
		if (shardmap_plan_instances(&y, NULL) == WT_OK)
			ok[n++] = t;
	}
	if (n == 0) {
		snprintf(buf, cap, "; no tp_size up to 64 works with ep_size %u", x->P);
		return;
	}
	size_t o = (size_t)snprintf(buf, cap, "; use tp_size ");
	for (size_t k = 0; k < n && o < cap; k++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%u",
		                      k == 0 ? "" : (k + 1 == n ? " or " : ", "), ok[k]);
	if (x->P > 1 && o < cap)
		snprintf(buf + o, cap - o, " (with ep_size %u)", x->P);
}
