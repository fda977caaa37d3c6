/*
 * quant_fp8.c — the FP8 e4m3 schemes of docs/format.md section 4.3 (fp8-tensor,
 * fp8-channel, fp8-block): scale = max(amax, 1e-4f) / 448.0f per tensor, row or
 * 128x128 tile; q = e4m3(clamp(x / s, -448, 448)); dequantization f32(q) * s.
 */
#include <stdatomic.h>

#include "common/common.h"
#include "kernels/kernels.h"
#include "kernels/kernels_int.h"

int64_t kern_nblocks(int64_t n, int64_t b)
{
	return n / b + (n % b != 0);
}

int kern_report_bad_row(kq_args *a, int64_t r)
{
	int64_t i = kern_find_nonfinite(a->x, a->src_dt, (size_t)(r * a->K), (size_t)a->K);
	if (i < 0)
		return 0;
	kern_atomic_min(&a->bad, r * a->K + i);
	return 1;
}

/* ---- loops ---- */
KERN_VEC static void fp8_encode(uint8_t *restrict q, const float *restrict x, size_t n, float s)
{
	for (size_t i = 0; i < n; i++)
		q[i] = kern_fp8_q(x[i], s);
}

KERN_VEC static void fp8_encode_bf16(uint8_t *restrict q, const uint16_t *restrict x, size_t n,
                                     float s)
{
	for (size_t i = 0; i < n; i++)
		q[i] = kern_fp8_q(kern_bf16_dec(x[i]), s);
}

/* Tiles of KERN_BLOCK elements, tile t with scale s[t]: one call per row of fp8-block. */
KERN_VEC static void fp8_encode_tiles_f32(uint8_t *restrict q, const float *restrict x, size_t n,
                                          const float *restrict s)
{
	for (size_t t = 0; t * KERN_BLOCK < n; t++) {
		size_t c = t * KERN_BLOCK, len = n - c < KERN_BLOCK ? n - c : KERN_BLOCK;
		float st = s[t];
		for (size_t i = 0; i < len; i++)
			q[c + i] = kern_fp8_q(x[c + i], st);
	}
}

KERN_VEC static void fp8_encode_tiles_bf16(uint8_t *restrict q, const uint16_t *restrict x,
                                           size_t n, const float *restrict s)
{
	for (size_t t = 0; t * KERN_BLOCK < n; t++) {
		size_t c = t * KERN_BLOCK, len = n - c < KERN_BLOCK ? n - c : KERN_BLOCK;
		float st = s[t];
		for (size_t i = 0; i < len; i++)
			q[c + i] = kern_fp8_q(kern_bf16_dec(x[c + i]), st);
	}
}

KERN_VEC static void fp8_decode(float *restrict d, const uint8_t *restrict q, size_t n, float s)
{
	for (size_t i = 0; i < n; i++)
		d[i] = KERN_MUL(kern_e4m3_dec(q[i]), s);
}

/* Encode src[off, off+n) with one scale into q + off. */
static void fp8_encode_run(kq_args *a, size_t off, size_t n, float s)
{
	float tmp[KERN_CHUNK];
	uint8_t *q = (uint8_t *)a->q + off;
	if (a->src_dt == WT_F32) {
		fp8_encode(q, (const float *)a->x + off, n, s);
		return;
	}
	if (a->src_dt == WT_BF16) {
		fp8_encode_bf16(q, (const uint16_t *)a->x + off, n, s);
		return;
	}
	for (size_t c = 0; c < n; c += KERN_CHUNK) {
		size_t len = n - c < KERN_CHUNK ? n - c : KERN_CHUNK;
		fp8_encode(q + c, kern_view_f32(tmp, a->x, a->src_dt, off + c, len), len, s);
	}
}

/* src[off, off+n) in tiles of KERN_BLOCK with scales s[] into q + off. */
static void fp8_encode_tiles(kq_args *a, size_t off, size_t n, const float *s)
{
	uint8_t *q = (uint8_t *)a->q + off;
	if (a->src_dt == WT_F32) {
		fp8_encode_tiles_f32(q, (const float *)a->x + off, n, s);
	} else if (a->src_dt == WT_BF16) {
		fp8_encode_tiles_bf16(q, (const uint16_t *)a->x + off, n, s);
	} else {
		for (size_t t = 0; t * KERN_BLOCK < n; t++) {
			size_t c = t * KERN_BLOCK;
			fp8_encode_run(a, off + c, n - c < KERN_BLOCK ? n - c : KERN_BLOCK, s[t]);
		}
	}
}

void kern_fp8_dequant_rows(kq_args *a, int64_t r0, int64_t r1)
{
	float tmp[KERN_CHUNK];
	int64_t K = a->K;
	int64_t nbk = kern_nblocks(K, a->bk);
	const uint8_t *q = a->q;
	for (int64_t r = r0; r < r1; r++) {
		const float *srow = a->scale + (r / a->bn) * nbk;
		int64_t end;
		for (int64_t c = 0; c < K; c = end) {
			/* a chunk never straddles a scale tile: cut at the next tile edge */
			int64_t edge = (c / a->bk + 1) * a->bk;
			end = c + KERN_CHUNK < edge ? c + KERN_CHUNK : edge;
			if (end > K)
				end = K;
			size_t off = (size_t)(r * K + c), len = (size_t)(end - c);
			float s = srow[c / a->bk];
			if (a->dst_dt == WT_F32) {
				fp8_decode((float *)a->dst + off, q + off, len, s);
			} else {
				fp8_decode(tmp, q + off, len, s);
				kern_store_f32(a->dst, a->dst_dt, off, tmp, len);
			}
		}
	}
}

/* ---- fp8-tensor: one scale; prepare finds amax over the whole tensor ---- */
static void tensor_amax_rows(void *ctx, int64_t r0, int64_t r1)
{
	kq_args *a = ctx;
	uint32_t m =
	    kern_amax_bits(a->x, a->src_dt, (size_t)(r0 * a->K), (size_t)((r1 - r0) * a->K));
	if (m >= KERN_NONFINITE) {
		for (int64_t r = r0; r < r1; r++)
			if (kern_report_bad_row(a, r))
				return;
	}
	uint32_t cur = atomic_load(&a->amax_acc);
	while (m > cur && !atomic_compare_exchange_weak(&a->amax_acc, &cur, m))
		;
}

static void tensor_prepare(kq_args *a)
{
	atomic_store(&a->amax_acc, 0);
	kern_pool_for(a->N, a->K, tensor_amax_rows, a);
	a->amax_bits = atomic_load(&a->amax_acc);
	a->scale[0] = kern_fp8_scale(a->amax_bits);
}

static void tensor_quant_rows(kq_args *a, int64_t r0, int64_t r1)
{
	fp8_encode_run(a, (size_t)(r0 * a->K), (size_t)((r1 - r0) * a->K), a->scale[0]);
}

static int64_t tensor_scales(int64_t N, int64_t K, int64_t group)
{
	(void)group;
	return N > 0 && K > 0 ? 1 : 0;
}

/* ---- fp8-channel: one scale per row ---- */
static void channel_quant_rows(kq_args *a, int64_t r0, int64_t r1)
{
	for (int64_t r = r0; r < r1; r++) {
		size_t off = (size_t)(r * a->K);
		uint32_t m = kern_amax_bits(a->x, a->src_dt, off, (size_t)a->K);
		if (m >= KERN_NONFINITE && kern_report_bad_row(a, r))
			return; /* later rows only hold later indices */
		a->scale[r] = kern_fp8_scale(m);
		fp8_encode_run(a, off, (size_t)a->K, a->scale[r]);
	}
}

static int64_t rows_scales(int64_t N, int64_t K, int64_t group)
{
	(void)group;
	return N > 0 && K > 0 ? N : 0;
}

/* ---- fp8-block: one scale per 128x128 tile, edge tiles partial ---- */
#define BLOCK_SPAN 64 /* tiles per column pass (stack array of amax) */

static void block_quant_rows(kq_args *a, int64_t r0, int64_t r1)
{
	int64_t K = a->K, nbk = kern_nblocks(K, KERN_BLOCK);
	uint32_t am[BLOCK_SPAN];
	float s[BLOCK_SPAN];
	for (int64_t t0 = r0; t0 < r1; t0 += KERN_BLOCK) {
		int64_t t1 = t0 + KERN_BLOCK < r1 ? t0 + KERN_BLOCK : r1;
		float *srow = a->scale + (t0 / KERN_BLOCK) * nbk;
		for (int64_t b0 = 0; b0 < nbk; b0 += BLOCK_SPAN) {
			int64_t nb = nbk - b0 < BLOCK_SPAN ? nbk - b0 : BLOCK_SPAN;
			int64_t c0 = b0 * KERN_BLOCK;
			size_t cols = (size_t)(K - c0 < nb * KERN_BLOCK ? K - c0 : nb * KERN_BLOCK);
			uint32_t worst = 0;
			for (int64_t b = 0; b < nb; b++)
				am[b] = 0;
			for (int64_t r = t0; r < t1; r++)
				kern_amax_tiles(a->x, a->src_dt, (size_t)(r * K + c0), cols,
				                KERN_BLOCK, am);
			for (int64_t b = 0; b < nb; b++)
				worst = am[b] > worst ? am[b] : worst;
			if (worst >= KERN_NONFINITE) {
				/* the first bad row of this band holds the band's lowest bad index
				 */
				for (int64_t r = t0; r < t1; r++)
					if (kern_report_bad_row(a, r))
						return;
			}
			for (int64_t b = 0; b < nb; b++)
				srow[b0 + b] = s[b] = kern_fp8_scale(am[b]);
			for (int64_t r = t0; r < t1; r++)
				fp8_encode_tiles(a, (size_t)(r * K + c0), cols, s);
		}
	}
}

static int64_t block_scales(int64_t N, int64_t K, int64_t group)
{
	(void)group;
	uint64_t n;
	if (N <= 0 || K <= 0 ||
	    !wt_mul_u64((uint64_t)kern_nblocks(N, KERN_BLOCK),
	                (uint64_t)kern_nblocks(K, KERN_BLOCK), &n) ||
	    n > INT64_MAX)
		return 0;
	return (int64_t)n;
}

static int64_t byte_codes(int64_t N, int64_t K)
{
	uint64_t n;
	if (N <= 0 || K <= 0 || !wt_mul_u64((uint64_t)N, (uint64_t)K, &n) || n > INT64_MAX)
		return 0;
	return (int64_t)n;
}

/* Scale tiles for dequantization: 0 = the whole dimension. */
const kq_scheme kern_scheme_fp8_tensor = {.id = WT_QUANT_FP8_TENSOR,
                                          .unit_rows = 1,
                                          .dq_bn = 0,
                                          .dq_bk = 0,
                                          .scale_count = tensor_scales,
                                          .qbytes = byte_codes,
                                          .prepare = tensor_prepare,
                                          .quant_rows = tensor_quant_rows,
                                          .dequant_rows = kern_fp8_dequant_rows};
const kq_scheme kern_scheme_fp8_channel = {.id = WT_QUANT_FP8_CHANNEL,
                                           .unit_rows = 1,
                                           .dq_bn = 1,
                                           .dq_bk = 0,
                                           .scale_count = rows_scales,
                                           .qbytes = byte_codes,
                                           .prepare = NULL,
                                           .quant_rows = channel_quant_rows,
                                           .dequant_rows = kern_fp8_dequant_rows};
const kq_scheme kern_scheme_fp8_block = {.id = WT_QUANT_FP8_BLOCK,
                                         .unit_rows = KERN_BLOCK,
                                         .dq_bn = KERN_BLOCK,
                                         .dq_bk = KERN_BLOCK,
                                         .scale_count = block_scales,
                                         .qbytes = byte_codes,
                                         .prepare = NULL,
                                         .quant_rows = block_quant_rows,
                                         .dequant_rows = kern_fp8_dequant_rows};
