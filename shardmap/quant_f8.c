/*
 * quant_f8.c — FP8 sources (docs/format.md 4.4, 4.7): dequantization of block,
 * per-tensor and per-channel checkpoints, and the fbgemm_fp8 format as
 * transformers 4.54's integrations/fbgemm_fp8.py and quantizer_fbgemm_fp8.py
 * define it:
 *
 * | module                         | tensors (real value = f32(q) * f32(scale))          |
 * |--------------------------------|------------------------------------------------------|
 * | FbgemmFp8Linear X              | X.weight F8_E4M3 [N, K]; X.weight_scale [N, 1]       |
 * | FbgemmFp8Llama4TextExperts X   | X.gate_up_proj F8_E4M3 [E, hid, 2I];                |
 * |   (Llama 4's routed experts)   |   X.gate_up_proj_scale [E, 1, 2I] (per column j)     |
 * |                                | X.down_proj F8_E4M3 [E, I, hid];                    |
 * |                                |   X.down_proj_scale [E, hid, 1] (per column h)       |
 *
 * Scales F32, BF16 or F16 (the quantizer writes float32, FbgemmFp8Linear may hold the
 * model's dtype). One scale per output channel: a Linear's rows, a stack's columns
 * (torch.bmm operands [in, out]), so a stack viewed transposed per expert ([E, N, K],
 * as the rules load it) has one scale per row too — every fbgemm weight is the block
 * case with 1 x K blocks. Biases stay unquantized; activation_scale_ub is an
 * activation setting (loader/config.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "kernels/kernels.h"
#include "shardmap/quant_f8.h"

#define F8_NAME_MAX 512

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

bool shardmap_fb_source(const ckpt_config *cfg)
{
	/* compressed-tensors FP8_DYNAMIC: the same Linears (X.weight_scale [N, 1]) */
	return cfg->quant == CKPT_QUANT_FBGEMM_FP8 || cfg->quant == CKPT_QUANT_CT_FP8;
}

/* Whether key + "." occurs in the first n bytes of m. */
static bool has_dotted(const char *m, size_t n, const char *key, size_t kl)
{
	for (size_t p = 0; p + kl < n; p++)
		if (m[p + kl] == '.' && memcmp(m + p, key, kl) == 0)
			return true;
	return false;
}

const char *shardmap_fb_kept(const ckpt_config *cfg, const char *name)
{
	const char *dot = strrchr(name, '.');
	if (!shardmap_fb_source(cfg) || dot == NULL)
		return NULL;
	size_t mlen = (size_t)(dot - name); /* the module: name[0, mlen) */
	size_t leaf = mlen;                 /* its own name: name[leaf, mlen) */
	while (leaf > 0 && name[leaf - 1] != '.')
		leaf--;
	for (size_t k = 0; k < cfg->n_quant_keep; k++) {
		const char *key = cfg->quant_keep[k];
		size_t kl = strlen(key);
		if ((kl == mlen && memcmp(name, key, kl) == 0) ||
		    (kl == mlen - leaf && memcmp(name + leaf, key, kl) == 0) ||
		    has_dotted(name, mlen, key, kl))
			return key;
	}
	return NULL;
}

static uint32_t find_ix(const sm_ctx *x, const char *name, const char *suffix)
{
	char buf[F8_NAME_MAX];
	if ((size_t)snprintf(buf, sizeof(buf), "%s%s", name, suffix) >= sizeof(buf))
		return SM_NONE;
	const ckpt_tensor *s = ckpt_find(x->c, buf);
	return s ? (uint32_t)ckpt_tensor_index(x->c, s) : SM_NONE;
}

bool shardmap_fb_attach(const sm_ctx *x, sm_entry *e)
{
	const ckpt_tensor *t = ckpt_tensor_at(x->c, e->t);
	if (!shardmap_fb_source(x->cfg) || t->dtype != WT_F8_E4M3 || ends_with(t->name, ".weight"))
		return false;
	e->wscale = find_ix(x, t->name, "_scale");
	e->iscale = SM_NONE;
	return true;
}

int shardmap_fb_companion(const sm_ctx *x, const char *name, bool *used, wt_errbuf *err)
{
	*used = false;
	if (!shardmap_fb_source(x->cfg))
		return WT_OK;
	char buf[F8_NAME_MAX];
	size_t n = strlen(name);
	if (ends_with(name, ".input_scale") && n < sizeof(buf) - 8) {
		snprintf(buf, sizeof(buf), "%.*s.weight", (int)(n - strlen(".input_scale")), name);
		if (ckpt_find(x->c, buf) == NULL)
			return WT_OK; /* no weight of that module: the family rules decide */
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': a static input scale, but fbgemm_fp8 scales "
		                 "activations dynamically per row (activation_scale_ub) and stores "
		                 "none; remove it or fix quantization_config",
		                 name);
	}
	if (!ends_with(name, "_scale") || ends_with(name, ".weight_scale") || n >= sizeof(buf))
		return WT_OK;
	snprintf(buf, sizeof(buf), "%.*s", (int)(n - strlen("_scale")), name);
	const ckpt_tensor *w = ckpt_find(x->c, buf);
	if (w == NULL)
		return WT_OK;
	if (w->dtype == WT_F8_E4M3) {
		*used = true;
		return WT_OK;
	}
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "tensor '%s': an fbgemm_fp8 scale beside '%s', which is %s, not "
	                 "F8_E4M3; remove the stray scale or fix the checkpoint",
	                 name, buf, wt_dtype_name(w->dtype));
}

static void dims_text(const int64_t *d, int nd, char *buf, size_t cap)
{
	size_t o = (size_t)snprintf(buf, cap, "[");
	for (int k = 0; k < nd && o < cap; k++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%" PRId64, k ? ", " : "", d[k]);
	if (o < cap)
		snprintf(buf + o, cap - o, "]");
}

/* The scale's dtype and exact shape: [N, 1] for a Linear [N, K]; for a stack [E, K, N],
 * [E, 1, N] (gate_up_proj) or [E, N, 1] (down_proj), as FbgemmFp8Llama4TextExperts. */
static int check_scale(const ckpt_tensor *t, const ckpt_tensor *s, bool gate_up, wt_errbuf *err)
{
	if (s->dtype != WT_F32 && s->dtype != WT_BF16 && s->dtype != WT_F16)
		return wt_seterr(err, WT_EDTYPE,
		                 "tensor '%s': scale dtype %s, expected F32, BF16 or F16", s->name,
		                 wt_dtype_name(s->dtype));
	int64_t want[3] = {t->shape[0], 1, 0};
	int nd = 2;
	if (t->ndim == 3) {
		nd = 3;
		want[1] = gate_up ? 1 : t->shape[2];
		want[2] = gate_up ? t->shape[2] : 1;
	}
	bool ok = s->ndim == nd;
	for (int k = 0; ok && k < nd; k++)
		ok = s->shape[k] == want[k];
	if (ok)
		return WT_OK;
	char w[96], h[96], have[96];
	dims_text(want, nd, w, sizeof(w));
	dims_text(t->shape, t->ndim, h, sizeof(h));
	dims_text(s->shape, s->ndim, have, sizeof(have));
	return wt_seterr(err, WT_ESHAPE,
	                 "tensor '%s': fbgemm_fp8 scales must be %s (one per output channel of "
	                 "'%s' %s), not %s",
	                 s->name, w, t->name, h, have);
}

int shardmap_fb_check(const sm_ctx *x, const sm_entry *e, wt_errbuf *err)
{
	const ckpt_tensor *t = ckpt_tensor_at(x->c, e->t); /* as stored */
	const sm_rule *r = &x->fam->rules[e->rule];
	const char *keep = shardmap_fb_kept(x->cfg, t->name);
	if (keep == NULL && e->canon != NULL)
		keep = shardmap_fb_kept(x->cfg, e->canon);
	if (keep != NULL)
		return wt_seterr(err, WT_EDTYPE,
		                 "tensor '%s': F8_E4M3, but quantization_config."
		                 "modules_to_not_convert entry '%s' keeps its module unquantized "
		                 "(transformers would not convert it); fix the checkpoint or "
		                 "the list",
		                 t->name, keep);
	bool stack = t->ndim == 3 && x->fam->llama4 && (r->flags & SM_F_TRANS) &&
	             (r->kind == SM_K_EXP13S || r->kind == SM_K_EXP2S);
	if (t->ndim != 2 && !stack)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': an fbgemm_fp8 weight must be a Linear's [N, K] or a "
		                 "Llama 4 expert stack; it has %d dimensions",
		                 t->name, t->ndim);
	if (e->wscale == SM_NONE)
		return wt_seterr(err, WT_EDTYPE,
		                 "tensor '%s': F8_E4M3 weight without its scale '%s_scale' "
		                 "(fbgemm_fp8)",
		                 t->name, t->name);
	if (e->iscale != SM_NONE)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': a static input scale, but fbgemm_fp8 scales "
		                 "activations dynamically per row and stores none; remove it",
		                 ckpt_tensor_at(x->c, e->iscale)->name);
	return check_scale(t, ckpt_tensor_at(x->c, e->wscale), r->kind == SM_K_EXP13S, err);
}

/* Scales [first, first + ns) of st as F32 (malloc'd, caller frees); NULL on ENOMEM or a
 * read error (err set). */
static float *read_scales(const ckpt *c, const ckpt_tensor *st, size_t first, size_t ns,
                          wt_errbuf *err)
{
	size_t ssz = wt_dtype_size(st->dtype);
	float *f = malloc(ns * sizeof(float) + sizeof(float));
	void *raw = st->dtype == WT_F32 ? (void *)f : malloc(ns * ssz + 1);
	int rv = f && raw ? ckpt_read(c, st, (uint64_t)first * ssz, raw, ns * ssz, err)
	                  : wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory for %zu scales",
	                              st->name, ns);
	if (rv == WT_OK && st->dtype != WT_F32 &&
	    (rv = kern_convert(f, WT_F32, raw, st->dtype, ns)) != WT_OK)
		rv = wt_seterr(err, rv, "tensor '%s': converting %s scales failed", st->name,
		               wt_dtype_name(st->dtype));
	if (raw != (void *)f)
		free(raw);
	if (rv != WT_OK) {
		free(f);
		return NULL;
	}
	return f;
}

int shardmap_f8_dequant(const ckpt *c, uint8_t mode, const ckpt_tensor *t, int64_t e0,
                        const ckpt_tensor *st, const uint8_t *raw, float *dst, int64_t *cols,
                        wt_errbuf *err)
{
	const ckpt_config *cfg = ckpt_get_config(c);
	int64_t rows = sm_trows(t), K = sm_tcols(t), bn = 1, bk = K;
	uint8_t *tq = NULL;
	const uint8_t *q = raw;
	/* a stack's part: the N scales of each of its experts */
	bool part = mode == SM_SRC_DQ_TRANS;
	WT_ASSERT(e0 == 0 || part);
	size_t ns = part ? (size_t)t->shape[0] * (size_t)t->shape[2]
	                 : (size_t)(st->nbytes / wt_dtype_size(st->dtype));
	float *scale = read_scales(c, st, part ? (size_t)e0 * (size_t)t->shape[2] : 0, ns, err);
	if (scale == NULL)
		return err ? err->code : WT_ENOMEM;
	if (mode == SM_SRC_DQ_TRANS) { /* [E, K, N] -> [E, N, K]: per row, E * N scales */
		int64_t E = t->shape[0], N = t->shape[2];
		K = bk = t->shape[1];
		rows = E * N;
		if ((tq = malloc((size_t)t->nbytes + 1)) == NULL) {
			free(scale);
			return wt_seterr(err, WT_ENOMEM,
			                 "tensor '%s': out of memory transposing it", t->name);
		}
		kern_transpose_stack(tq, raw, E, K, N, 1);
		q = tq;
	} else if (mode == SM_SRC_DQ_TENSOR) {
		bn = rows > 0 ? rows : 1;
	} else if (!shardmap_fb_source(cfg)) { /* block FP8: fbgemm's rows are 1 x K blocks */
		bn = cfg->quant_block[0] > 0 ? cfg->quant_block[0] : 128;
		bk = cfg->quant_block[1] > 0 ? cfg->quant_block[1] : 128;
	}
	int rv = kern_dequant_fp8_block(dst, WT_F32, q, rows, K, scale, bn, bk > 0 ? bk : 1);
	free(tq);
	free(scale);
	if (rv != WT_OK)
		return wt_seterr(err, rv, "tensor '%s': dequantizing failed", t->name);
	*cols = K;
	return WT_OK;
}
