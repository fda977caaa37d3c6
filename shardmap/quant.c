/*
 * quant.c — the quantization scheme table (docs/format.md section 4.2): emitted
 * weight dtype and the weight/scale shapes of one [N, K] unit. Adding a
 * scheme is one row here plus its kernel in kernels/.
 */
#include "shardmap/shardmap_int.h"

static int64_t cdiv(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

static void sh_tensor(int64_t N, int64_t K, int64_t g, int64_t w[2], int64_t s[2], int *sn)
{
	(void)g;
	w[0] = N;
	w[1] = K;
	s[0] = 1;
	s[1] = 1;
	*sn = 1;
}

static void sh_channel(int64_t N, int64_t K, int64_t g, int64_t w[2], int64_t s[2], int *sn)
{
	(void)g;
	w[0] = N;
	w[1] = K;
	s[0] = N;
	s[1] = 1;
	*sn = 2;
}

static void sh_block(int64_t N, int64_t K, int64_t g, int64_t w[2], int64_t s[2], int *sn)
{
	(void)g;
	w[0] = N;
	w[1] = K;
	s[0] = cdiv(N, 128);
	s[1] = cdiv(K, 128);
	*sn = 2;
}

static void sh_int4(int64_t N, int64_t K, int64_t g, int64_t w[2], int64_t s[2], int *sn)
{
	w[0] = N;
	w[1] = K / 8;
	s[0] = N;
	s[1] = g > 0 ? K / g : 0;
	*sn = 2;
}

static const sm_scheme schemes[] = {
    {WT_QUANT_FP8_TENSOR, WT_F8_E4M3, sh_tensor}, {WT_QUANT_FP8_CHANNEL, WT_F8_E4M3, sh_channel},
    {WT_QUANT_FP8_BLOCK, WT_F8_E4M3, sh_block},   {WT_QUANT_INT8_CHANNEL, WT_I8, sh_channel},
    {WT_QUANT_INT4_GROUP, WT_I32, sh_int4},
};

const sm_scheme *shardmap_scheme(wt_quant q)
{
	for (size_t k = 0; k < sizeof(schemes) / sizeof(schemes[0]); k++)
		if (schemes[k].q == q)
			return &schemes[k];
	return NULL;
}
