/*
 * produce_load.c — the producer reading one scanned source of a group into its slot
 * (sm_prod_load_src, produce_int.h): the needed rows as stored, compressed-tensors
 * weights repacked into the layout's storage or dequantized, Mistral's native wq / wk
 * de-interleaved into transformers' rows, FP8 dequantized; expert stacks are loaded by
 * produce_stack.c. The group's outputs built from the loaded sources: produce.c.
 */
#include <inttypes.h>

#include "kernels/kernels.h"
#include "shardmap/produce_int.h"
#include "shardmap/quant_ct.h"
#include "shardmap/quant_f8.h"

/* A compressed-tensors source read whole into raw[s]: passing through, repacked into the
 * layout's storage (int4 codes one per I8 -> packed I32 [N, K/8]; pack-quantized int8
 * words -> I8 [N, K]); otherwise dequantized to F32 [N, K] (K logical). */
static int load_ct(prod *pr, const sm_group *g, uint32_t s, wt_errbuf *err)
{
	loaded *ld = &pr->ld[s];
	const ckpt_tensor *t = ld->t;
	int64_t N = t->shape[0], K = shardmap_ct_cols(ckpt_get_config(pr->c), t);
	if (g->srcs[s].mode == SM_SRC_PACK_CT && t->dtype == WT_I32) {
		if (sm_prod_reserve(&pr->dq[s], (size_t)N * (size_t)K))
			return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory unpacking it",
			                 t->name);
		shardmap_ct_unpack8((const uint32_t *)pr->raw[s].p, N * K, (int8_t *)pr->dq[s].p);
		ld->base = pr->dq[s].p;
		ld->dt = WT_I8;
		ld->cols = K;
		return WT_OK;
	}
	if (g->srcs[s].mode == SM_SRC_PACK_CT) { /* int-quantized int4 passing through */
		if (sm_prod_reserve(&pr->dq[s], (size_t)N * (size_t)K / 2))
			return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory packing it",
			                 t->name);
		int64_t bad =
		    shardmap_ct_pack((const int8_t *)pr->raw[s].p, N * K, (uint32_t *)pr->dq[s].p);
		if (bad >= 0)
			return shardmap_ct_bad_code(t->name, bad,
			                            ((const int8_t *)pr->raw[s].p)[bad], err);
		ld->base = pr->dq[s].p;
		ld->dt = WT_I32;
		ld->cols = K / 8;
		return WT_OK;
	}
	if (sm_prod_reserve(&pr->dq[s], (size_t)N * (size_t)K * 4))
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory dequantizing it",
		                 t->name);
	int rv = shardmap_ct_dequant(pr->c, t, ckpt_tensor_at(pr->c, g->srcs[s].scale),
	                             pr->raw[s].p, (float *)pr->dq[s].p, err);
	if (rv != WT_OK)
		return rv;
	ld->base = pr->dq[s].p;
	ld->dt = WT_F32;
	ld->cols = K;
	return WT_OK;
}

/* Mistral's native wq / wk read whole into raw[s]: each head's rows de-interleaved into
 * dq[s] (rows 2j, 2j+1 -> j, head_dim/2 + j), transformers' rows. */
static int load_rope(prod *pr, const sm_src *src, uint32_t s, wt_errbuf *err)
{
	loaded *ld = &pr->ld[s];
	const ckpt_tensor *t = ld->t;
	int64_t heads = ckpt_rope_heads(pr->c, src->t), rows = sm_trows(t);
	if (heads <= 0 || ld->r0 != 0 || ld->r1 != rows || rows % (2 * heads) != 0)
		return wt_seterr(err, WT_EINVAL,
		                 "tensor '%s': %lld rows are not %lld heads of RoPE pairs", t->name,
		                 (long long)rows, (long long)heads);
	if (sm_prod_reserve(&pr->dq[s], (size_t)t->nbytes))
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory reading it", t->name);
	kern_deinterleave_rows(pr->dq[s].p, pr->raw[s].p, heads, rows / heads / 2,
	                       (size_t)(t->nbytes / (uint64_t)rows));
	ld->base = pr->dq[s].p;
	return WT_OK;
}

int sm_prod_load_src(prod *pr, const sm_group *g, uint32_t s, wt_errbuf *err)
{
	const sm_src *src = &g->srcs[s];
	loaded *ld = &pr->ld[s];
	if (!ld->ok || ld->direct)
		return WT_OK;
	if (src->mode == SM_SRC_DQ_MX || src->mode == SM_SRC_DEINT || src->mode == SM_SRC_TRANS ||
	    src->mode == SM_SRC_DQ_TRANS || src->mode == SM_SRC_COLVEC)
		return sm_prod_load_stack(pr, g, s, err);
	const ckpt_tensor *t = ld->t;
	int64_t lo = ld->r0, hi = ld->r1, cols = ld->cols;
	size_t esz = wt_dtype_size(t->dtype);
	uint64_t rowb = (uint64_t)cols * esz, off = (uint64_t)lo * rowb,
	         len = (uint64_t)(hi - lo) * rowb;
	if (sm_prod_reserve(&pr->raw[s], len))
		return wt_seterr(err, WT_ENOMEM,
		                 "tensor '%s': out of memory reading %" PRIu64 " bytes", t->name,
		                 len);
	int rv = ckpt_read(pr->c, t, off, pr->raw[s].p, len, err);
	if (rv != WT_OK)
		return rv;
	ld->base = pr->raw[s].p;
	ld->dt = t->dtype;
	if (src->mode == SM_SRC_DQ_CT || src->mode == SM_SRC_PACK_CT)
		return load_ct(pr, g, s, err);
	if (src->mode == SM_SRC_RAW)
		return WT_OK;
	if (src->mode == SM_SRC_ROPE)
		return load_rope(pr, src, s, err);
	/* FP8: block, per-tensor, per-channel (fbgemm_fp8's Linears; its stacks: above) */
	size_t n = (size_t)t->nbytes; /* one byte per element */
	if (sm_prod_reserve(&pr->dq[s], n * 4))
		return wt_seterr(err, WT_ENOMEM,
		                 "tensor '%s': out of memory dequantizing it (%zu bytes)", t->name,
		                 n * 4);
	rv = shardmap_f8_dequant(pr->c, src->mode, t, 0, ckpt_tensor_at(pr->c, src->scale),
	                         pr->raw[s].p, (float *)pr->dq[s].p, &ld->cols, err);
	ld->base = pr->dq[s].p;
	ld->dt = WT_F32;
	return rv;
}
