/*
 * test_shardmap_ct_asym.c — asymmetric compressed-tensors int4 sources
 * (pack-quantized, "symmetric": false; docs/format.md 4.5): zero points
 * X.weight_zero_point I32 [ceil(N/8), K/G] packed along the rows, and
 * w = (code - zp) * scale. This file quantizes the test llama itself the way
 * compressed-tensors' calculate_qparams does (min and max taken with 0, scale
 * (max - min) / 15 as BF16, zp = clamp(-8 - rint(min / s))) and packs the
 * zero points as pack_to_int32 with packed_dim 0 does, then checks:
 *   - --quant none --dtype fp32 on both ranks of TP 2: every value exactly
 *     (code - zp) * s, and within 0.75 s of the original;
 *   - int4-group (same group size) is refused without --requant allow (no
 *     layout keeps zero points), and with it int8-channel is the kernels'
 *     quantization of those dequantized values;
 *   - a missing zero-point tensor, one of the wrong shape or dtype, and
 *     config.json schemes whose zero points are not read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_shardmap_ct_util.h"

/* Quantize every module of c (ct_llama at 4 bits) again, asymmetrically: its
 * weight_packed and weight_scale are replaced and weight_zero_point added;
 * md->q becomes code - zp, so f32(q) * s is the dequantized value. */
static void to_asym(ctm *c, int64_t G)
{
	for (size_t i = 0; i < c->n; i++) {
		ctmod *md = &c->mods[i];
		int64_t N = md->N, K = md->K, ng = K / G;
		int8_t *codes = malloc((size_t)(N * K));
		uint16_t *sbf = malloc((size_t)(N * ng) * 2);
		uint32_t *zw = calloc((size_t)((N + 7) / 8 * ng), 4);
		assert_true(codes && sbf && zw);
		for (int64_t r = 0; r < N; r++)
			for (int64_t g = 0; g < ng; g++) {
				const float *x = md->x + r * K + g * G;
				float lo = 0.0f, hi = 0.0f;
				for (int64_t j = 0; j < G; j++) {
					lo = fminf(lo, x[j]);
					hi = fmaxf(hi, x[j]);
				}
				float s = ct_bf16((hi - lo) / 15.0f);
				int zp = s > 0
				             ? (int)fminf(fmaxf(-8.0f - rintf(lo / s), -8.0f), 7.0f)
				             : 0;
				md->s[r * ng + g] = s;
				sbf[r * ng + g] = kern_f32_to_bf16(s);
				zw[(r / 8) * ng + g] |= (uint32_t)(zp + 8) << (4 * (r % 8));
				for (int64_t j = 0; j < G; j++) {
					float q = s > 0 ? rintf(x[j] / s + (float)zp) : 0.0f;
					int code = (int)fminf(fmaxf(q, -8.0f), 7.0f);
					codes[r * K + g * G + j] = (int8_t)code;
					md->q[r * K + g * G + j] = (int8_t)(code - zp);
				}
			}
		uint32_t *pk = malloc((size_t)(N * K / 8) * 4);
		assert_non_null(pk);
		for (int64_t w = 0; w < N * K / 8; w++)
			pk[w] = ct_pack8(codes + w * 8);
		char b[200];
		snprintf(b, sizeof(b), "%s.weight_packed", md->name);
		tm_remove(c->m, b);
		ct_add_raw(c->m, b, WT_I32, 2, N, K / 8, pk);
		snprintf(b, sizeof(b), "%s.weight_scale", md->name);
		tm_remove(c->m, b);
		ct_add_raw(c->m, b, WT_BF16, 2, N, ng, sbf);
		snprintf(b, sizeof(b), "%s.weight_zero_point", md->name);
		ct_add_raw(c->m, b, WT_I32, 2, (N + 7) / 8, ng, zw);
		free(codes);
		free(sbf);
		free(zw);
		free(pk);
	}
}

/* The asymmetric config.json: ct_config's int4 scheme with "symmetric": false. */
static void asym_config(char *out, size_t cap, int bits, int64_t G)
{
	char cfg[4096];
	ct_config(cfg, sizeof(cfg), bits, G, NULL);
	char *p = strstr(cfg, "\"symmetric\":true");
	assert_non_null(p);
	snprintf(out, cap, "%.*s\"symmetric\":false%s", (int)(p - cfg), cfg,
	         p + strlen("\"symmetric\":true"));
}

/* The test llama quantized asymmetrically at group 128, its config.json, a
 * TP-2 layout (quant none). */
static void setup(ctm *c, char *cfg, size_t cap, wt_layout *l)
{
	printf("seed 0xc7000004\n");
	ct_llama(c, 4, 128, 0, 0, 0);
	to_asym(c, 128);
	asym_config(cfg, cap, 4, 128);
	wt_layout_init(l);
	l->tp_size = 2;
}

static void test_asym_dequantized(void **state)
{
	(void)state;
	ctm c;
	char cfg[4096];
	wt_layout l;
	setup(&c, cfg, sizeof(cfg), &l);
	l.dtype = WT_F32;
	fx f;
	wt_errbuf err = {0};
	if (fx_open(&f, &c, cfg, &l, &err) != WT_OK)
		fail_msg("%s", err.msg);
	ct_expect_tp2(&f, &c, 0.75f);
	/* the zero points are read, not skipped; weight_shape is skipped as before */
	bool zskip = false, shskip = false;
	for (size_t k = 0; k < shardmap_n_skipped(f.p); k++) {
		zskip |= strstr(shardmap_skipped(f.p, k), "weight_zero_point") != NULL;
		shskip |= strcmp(shardmap_skipped(f.p, k),
		                 "model.layers.0.mlp.down_proj.weight_shape") == 0;
	}
	assert_false(zskip);
	assert_true(shskip);
	fx_close(&f);
	ct_free(&c);
}

static void test_asym_requant(void **state)
{
	(void)state;
	ctm c;
	char cfg[4096];
	wt_layout l;
	setup(&c, cfg, sizeof(cfg), &l);
	l.quant = WT_QUANT_INT4_GROUP; /* the source's scheme and group: still no pass-through */
	l.group_size = 128;
	fx f;
	wt_errbuf err = {0};
	assert_int_equal(fx_open(&f, &c, cfg, &l, &err), WT_ELAYOUT);
	printf("int4-group from zero points: %s\n", err.msg);
	assert_non_null(strstr(err.msg, "with zero points (symmetric false)"));
	assert_non_null(strstr(err.msg, "--requant allow"));
	assert_non_null(strstr(err.msg, "--quant none"));
	fx_close(&f);
	l.quant = WT_QUANT_INT8_CHANNEL;
	l.requant_allow = 1;
	if (fx_open(&f, &c, cfg, &l, &err) != WT_OK)
		fail_msg("%s", err.msg);
	const ctmod *dn = ct_mod(&c, "model.layers.1.mlp.down_proj");
	for (uint32_t r = 0; r < 2; r++) {
		float *v = malloc(256 * 256 * 4);
		for (int64_t row = 0; row < 256; row++)
			for (int64_t k = 0; k < 256; k++) {
				int64_t sk = r * 256 + k;
				v[row * 256 + k] =
				    (float)dn->q[row * 512 + sk] * dn->s[row * 4 + sk / 128];
			}
		int8_t wq[256 * 256];
		float sc[256];
		assert_int_equal(
		    kern_quantize(WT_QUANT_INT8_CHANNEL, v, WT_F32, 256, 256, 0, wq, sc, NULL),
		    WT_OK);
		const char *rt = "model.layers.1.mlp.down_proj.weight";
		int ix = tm_ix(f.p, r, rt);
		assert_true(ix >= 0);
		assert_true(shardmap_rank_tensor(f.p, r, (size_t)ix)->requantized);
		assert_memory_equal(f.pr->b[r][ix], wq, sizeof(wq));
		int sx = tm_ix(f.p, r, "model.layers.1.mlp.down_proj.weight_scale");
		assert_memory_equal(f.pr->b[r][sx], sc, sizeof(sc));
		free(v);
	}
	fx_close(&f);
	ct_free(&c);
}

static void test_asym_bad(void **state)
{
	(void)state;
	ctm c;
	char cfg[4096];
	wt_layout l;
	setup(&c, cfg, sizeof(cfg), &l);
	fx f;
	wt_errbuf err = {0};
	const char *zn = "model.layers.0.mlp.up_proj.weight_zero_point";
	/* unpacked zero points (I8 [N, K/G]), as some writers store them: the wrong shape */
	tm_remove(c.m, zn);
	int8_t z8[512 * 2] = {0};
	ct_add_raw(c.m, zn, WT_I8, 2, 512, 2, z8);
	assert_int_equal(fx_open(&f, &c, cfg, &l, &err), WT_ESHAPE);
	printf("unpacked zero points: %s\n", err.msg);
	assert_non_null(strstr(err.msg, zn));
	assert_non_null(strstr(err.msg, "I32 [64, 2]"));
	fx_close(&f);
	/* none at all */
	tm_remove(c.m, zn);
	assert_int_equal(fx_open(&f, &c, cfg, &l, &err), WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "model.layers.0.mlp.up_proj.weight_packed"));
	assert_non_null(strstr(err.msg, "without its weight_zero_point"));
	fx_close(&f);
	ct_free(&c);
	/* zero points are read for pack-quantized int4 per group only */
	ckpt_config cc;
	asym_config(cfg, sizeof(cfg), 4, 128);
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &cc, &err), WT_OK);
	assert_int_equal(cc.quant, CKPT_QUANT_CT_INT4);
	assert_true(cc.quant_asym);
	ckpt_config_clear(&cc);
	ct_config(cfg, sizeof(cfg), 4, 128, NULL);
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &cc, &err), WT_OK);
	assert_false(cc.quant_asym);
	ckpt_config_clear(&cc);
	char bad[4096];
	/* W4A8 codes one per I8 byte (int8 per channel is read: test_shardmap_ct_var.c) */
	ct_config(cfg, sizeof(cfg), 44, 128, NULL);
	char *p = strstr(cfg, "\"symmetric\":true");
	snprintf(bad, sizeof(bad), "%.*s\"symmetric\":false%s", (int)(p - cfg), cfg,
	         p + strlen("\"symmetric\":true"));
	assert_int_equal(ckpt_config_parse(bad, strlen(bad), &cc, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "symmetric false"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_asym_dequantized),
	    cmocka_unit_test(test_asym_requant),
	    cmocka_unit_test(test_asym_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
