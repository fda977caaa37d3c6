/*
 * quant.c — the quantizer entry points of kernels.h. Each scheme is a row of
 * the table below (scale shape, code bytes, quantize and dequantize row
 * functions); this file validates arguments, splits rows across the pool and
 * reports the first non-finite element.
 */
#include <stdatomic.h>

#include "kernels/kernels.h"
#include "kernels/kernels_int.h"

static const kq_scheme *const schemes[WT_QUANT_COUNT_] = {
    [WT_QUANT_FP8_TENSOR] = &kern_scheme_fp8_tensor,
    [WT_QUANT_FP8_CHANNEL] = &kern_scheme_fp8_channel,
    [WT_QUANT_FP8_BLOCK] = &kern_scheme_fp8_block,
    [WT_QUANT_INT8_CHANNEL] = &kern_scheme_int8_channel,
    [WT_QUANT_INT4_GROUP] = &kern_scheme_int4_group,
};

static const kq_scheme *scheme_of(wt_quant q)
{
	if ((int)q < 0 || q >= WT_QUANT_COUNT_)
		return NULL;
	return schemes[q];
}

int64_t kern_scale_count(wt_quant scheme, int64_t N, int64_t K, int64_t group)
{
	const kq_scheme *sc = scheme_of(scheme);
	if (!sc || sc->qbytes(N, K) == 0)
		return 0;
	return sc->scale_count(N, K, group);
}

int64_t kern_qbytes(wt_quant scheme, int64_t N, int64_t K)
{
	const kq_scheme *sc = scheme_of(scheme);
	return sc ? sc->qbytes(N, K) : 0;
}

typedef struct run_ctx {
	const kq_scheme *sc;
	kq_args *a;
	int dequant;
} run_ctx;

static void run_units(void *ctx, int64_t b, int64_t e)
{
	const run_ctx *rc = ctx;
	int64_t u = rc->sc->unit_rows;
	int64_t r0 = b * u, r1 = e * u < rc->a->N ? e * u : rc->a->N;
	if (rc->dequant)
		rc->sc->dequant_rows(rc->a, r0, r1);
	else
		rc->sc->quant_rows(rc->a, r0, r1);
}

static void run_rows(const kq_scheme *sc, kq_args *a, int dequant)
{
	run_ctx rc = {sc, a, dequant};
	int64_t units = a->N / sc->unit_rows + (a->N % sc->unit_rows != 0);
	kern_pool_for(units, sc->unit_rows * a->K, run_units, &rc);
}

int kern_quantize(wt_quant scheme, const void *x, wt_dtype src_dt, int64_t N, int64_t K,
                  int64_t group, void *q, float *scale, int64_t *bad_index)
{
	const kq_scheme *sc = scheme_of(scheme);
	if (!sc)
		return WT_EINVAL;
	if (!kern_is_qsrc(src_dt))
		return WT_EDTYPE;
	if (kern_scale_count(scheme, N, K, group) == 0 || !x || !q || !scale ||
	    !kern_aligned(x, src_dt) || !kern_aligned(scale, WT_F32))
		return WT_EINVAL;
	kq_args a = {
	    .x = x, .src_dt = src_dt, .N = N, .K = K, .group = group, .q = q, .scale = scale};
	atomic_init(&a.amax_acc, 0);
	atomic_init(&a.bad, INT64_MAX);
	if (sc->prepare)
		sc->prepare(&a);
	if (atomic_load(&a.bad) == INT64_MAX)
		run_rows(sc, &a, 0);
	int64_t bad = atomic_load(&a.bad);
	if (bad != INT64_MAX) {
		if (bad_index)
			*bad_index = bad;
		return WT_ENONFINITE;
	}
	return WT_OK;
}

int kern_dequantize(wt_quant scheme, const void *q, const float *scale, int64_t N, int64_t K,
                    int64_t group, void *dst, wt_dtype dst_dt)
{
	const kq_scheme *sc = scheme_of(scheme);
	if (!sc)
		return WT_EINVAL;
	if (!kern_is_fdst(dst_dt))
		return WT_EDTYPE;
	if (kern_scale_count(scheme, N, K, group) == 0 || !q || !scale || !dst ||
	    !kern_aligned(dst, dst_dt) || !kern_aligned(scale, WT_F32))
		return WT_EINVAL;
	kq_args a = {.N = N,
	             .K = K,
	             .group = group,
	             .q = (void *)q,
	             .scale = (float *)scale,
	             .dst = dst,
	             .dst_dt = dst_dt,
	             .bn = sc->dq_bn ? sc->dq_bn : N,
	             .bk = sc->dq_bk ? sc->dq_bk : K};
	run_rows(sc, &a, 1);
	return WT_OK;
}

static void fp8_block_units(void *ctx, int64_t b, int64_t e)
{
	kern_fp8_dequant_rows(ctx, b, e);
}

int kern_dequant_fp8_block(void *dst, wt_dtype dst_dt, const uint8_t *q, int64_t N, int64_t K,
                           const float *scale, int64_t bn, int64_t bk)
{
	if (!kern_is_fdst(dst_dt))
		return WT_EDTYPE;
	if (N < 0 || K < 0 || bn < 1 || bk < 1)
		return WT_EINVAL;
	if (N == 0 || K == 0)
		return WT_OK;
	if (!dst || !q || !scale || kern_qbytes(WT_QUANT_FP8_BLOCK, N, K) == 0 ||
	    !kern_aligned(dst, dst_dt) || !kern_aligned(scale, WT_F32))
		return WT_EINVAL;
	kq_args a = {.N = N,
	             .K = K,
	             .q = (void *)q,
	             .scale = (float *)scale,
	             .dst = dst,
	             .dst_dt = dst_dt,
	             .bn = bn,
	             .bk = bk};
	kern_pool_for(N, K, fp8_block_units, &a);
	return WT_OK;
}

void kern_fp8_rescale(uint8_t *q, size_t n, float ratio)
{
	for (size_t i = 0; i < n; i++)
		q[i] = kern_f32_to_e4m3(kern_e4m3_dec(q[i]) * ratio);
}
