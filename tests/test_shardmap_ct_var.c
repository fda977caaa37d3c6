/*
 * test_shardmap_ct_var.c — the remaining compressed-tensors source variants
 * (docs/format.md 4.5), each quantized here from the test llama's float
 * weights the way compressed-tensors does (calculate_qparams, quantize,
 * pack_to_int32), independently of weightd's reader:
 *   - actorder "group": X.weight_g_idx I32 [K] (a seeded permutation of whole
 *     groups), scales per (row, g_idx group); read as scale[n, g_idx[k]], never
 *     passed through; "weight" ("static") stores none and passes through;
 *   - asymmetric int8 per channel (int-quantized, symmetric false):
 *     X.weight_zero_point I8 [N, 1];
 *   - 8-bit pack-quantized: codes + 128, 4 per I32; symmetric per channel
 *     passes through to int8-channel (the same shard bytes as the int-quantized
 *     I8 checkpoint), asymmetric per group with zero points packed 4 rows per
 *     word.
 * Every --quant none shard is checked value by value against (code - zp) * s
 * and against the original float within the quantization error; hostile
 * g_idx / zero points are refused naming the tensor.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_shardmap_ct_util.h"

/* Replace the first `from` of cfg (cap bytes) by `to`. */
static void subst(char *cfg, size_t cap, const char *from, const char *to)
{
	char *p = strstr(cfg, from);
	if (p == NULL)
		fail_msg("no '%s' in config", from);
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%.*s%s%s", (int)(p - cfg), cfg, to, p + strlen(from));
	snprintf(cfg, cap, "%s", tmp);
}

static void replace(tm_model *m, const char *module, const char *leaf, wt_dtype dt, int nd,
                    int64_t a, int64_t b, const void *data)
{
	char n[200];
	snprintf(n, sizeof(n), "%s.%s", module, leaf);
	tm_remove(m, n);
	ct_add_raw(m, n, dt, nd, a, b, data);
}

/* pack_to_int32 of 8-bit codes along a row: code + 128, element k of 4 at bits 8*(k%4). */
static uint32_t pack4(const int *q, int64_t stride)
{
	uint32_t w = 0;
	for (int i = 0; i < 4; i++)
		w |= (uint32_t)(q[i * stride] + 128) << (8 * i);
	return w;
}

/* Error bounds, in steps s: rounding (half a step) plus what BF16 rounding of s (up to
 * 2^-8 relative, downwards) adds at the clamped top of the range: 7.5 * 2^-8 (int4
 * symmetric), 127.5 * 2^-8 (int8 symmetric), 255 * 2^-8 (int8 asymmetric, whose zero point
 * rounding adds another half step). */
#define TOL4  0.54f
#define TOL8S 1.0f
#define TOL8  1.5f

/* ---- actorder "group" ---- */

/* Quantize every module of c (ct_llama at 4 bits, group G) again with activation order:
 * g_idx = the groups k / G of a seeded shuffle of the columns; per row and g_idx group,
 * s = amax / 7.5 (BF16), q = clamp(rint(x / s), -8, 7). */
static void to_actorder(ctm *c, uint64_t seed)
{
	for (size_t i = 0; i < c->n; i++) {
		ctmod *md = &c->mods[i];
		int64_t N = md->N, K = md->K, G = c->G, ng = K / G;
		md->gidx = malloc((size_t)K * 4);
		assert_non_null(md->gidx);
		for (int64_t k = 0; k < K; k++)
			md->gidx[k] = (int32_t)(k / G);
		for (int64_t k = K - 1; k > 0; k--) {
			int64_t j = (int64_t)(tu_splitmix64(&seed) % (uint64_t)(k + 1));
			int32_t t = md->gidx[k];
			md->gidx[k] = md->gidx[j];
			md->gidx[j] = t;
		}
		uint16_t *sbf = malloc((size_t)(N * ng) * 2);
		assert_non_null(sbf);
		for (int64_t r = 0; r < N; r++)
			for (int64_t g = 0; g < ng; g++) {
				float amax = 0;
				for (int64_t k = 0; k < K; k++)
					if (md->gidx[k] == g)
						amax = fmaxf(amax, fabsf(md->x[r * K + k]));
				float s = ct_bf16(amax / 7.5f);
				md->s[r * ng + g] = s;
				sbf[r * ng + g] = kern_f32_to_bf16(s);
				for (int64_t k = 0; k < K; k++)
					if (md->gidx[k] == g)
						md->q[r * K + k] = (int8_t)fminf(
						    fmaxf(rintf(md->x[r * K + k] / s), -8.0f),
						    7.0f);
			}
		if (c->i8codes) {
			replace(c->m, md->name, "weight", WT_I8, 2, N, K, md->q);
		} else {
			uint32_t *pk = malloc((size_t)(N * K / 8) * 4);
			assert_non_null(pk);
			for (int64_t w = 0; w < N * K / 8; w++)
				pk[w] = ct_pack8(md->q + w * 8);
			replace(c->m, md->name, "weight_packed", WT_I32, 2, N, K / 8, pk);
			free(pk);
		}
		replace(c->m, md->name, "weight_scale", WT_BF16, 2, N, ng, sbf);
		replace(c->m, md->name, "weight_g_idx", WT_I32, 1, K, 0, md->gidx);
		free(sbf);
	}
}

/* The test llama at 4 bits, group 128 (i8codes: W4A8), quantized with activation order;
 * its config.json with actorder "group"; a TP-2 layout, quant none, F32. */
static void actorder_setup(ctm *c, char *cfg, size_t cap, wt_layout *l, int i8codes)
{
	uint64_t seed = 0xac7000001ull + (uint64_t)i8codes;
	printf("seed 0x%llx\n", (unsigned long long)seed);
	ct_llama(c, 4, 128, 0, 0, i8codes);
	to_actorder(c, seed);
	ct_config(cfg, cap, i8codes ? 44 : 4, 128, NULL);
	subst(cfg, cap, "\"actorder\":null", "\"actorder\":\"group\"");
	wt_layout_init(l);
	l->tp_size = 2;
	l->dtype = WT_F32;
}

static void test_actorder_dequantized(void **state)
{
	(void)state;
	for (int i8codes = 0; i8codes < 2; i8codes++) {
		ctm c;
		char cfg[4096];
		wt_layout l;
		actorder_setup(&c, cfg, sizeof(cfg), &l, i8codes);
		fx f;
		wt_errbuf err = {0};
		if (fx_open(&f, &c, cfg, &l, &err) != WT_OK)
			fail_msg("%s", err.msg);
		ct_expect_tp2(&f, &c, TOL4);
		for (size_t k = 0; k < shardmap_n_skipped(f.p); k++)
			assert_null(strstr(shardmap_skipped(f.p, k), "weight_g_idx")); /* read */
		fx_close(&f);
		ct_free(&c);
	}
}

static void test_actorder_targets(void **state)
{
	(void)state;
	ctm c;
	char cfg[4096];
	wt_layout l;
	actorder_setup(&c, cfg, sizeof(cfg), &l, 0);
	l.dtype = WT_DTYPE_INVALID;
	l.quant = WT_QUANT_INT4_GROUP; /* the source's group size: its groups are not column runs */
	l.group_size = 128;
	fx f;
	wt_errbuf err = {0};
	assert_int_equal(fx_open(&f, &c, cfg, &l, &err), WT_ELAYOUT);
	printf("int4-group from actorder group: %s\n", err.msg);
	assert_non_null(strstr(err.msg, "activation order"));
	assert_non_null(strstr(err.msg, "--requant allow"));
	fx_close(&f);
	l.requant_allow = 1;
	if (fx_open(&f, &c, cfg, &l, &err) != WT_OK)
		fail_msg("%s", err.msg);
	int ix = tm_ix(f.p, 0, "model.layers.0.mlp.down_proj.weight");
	assert_true(ix >= 0 && shardmap_rank_tensor(f.p, 0, (size_t)ix)->requantized);
	fx_close(&f);
	ct_free(&c);
	/* actorder "weight" ("static") stores no g_idx: it reads like no actorder, and the
	 * symmetric int4 codes pass through */
	ct_llama(&c, 4, 128, 0, 0, 0);
	ct_config(cfg, sizeof(cfg), 4, 128, NULL);
	subst(cfg, sizeof(cfg), "\"actorder\":null", "\"actorder\":\"static\"");
	l.requant_allow = 0;
	if (fx_open(&f, &c, cfg, &l, &err) != WT_OK)
		fail_msg("%s", err.msg);
	ix = tm_ix(f.p, 1, "model.layers.1.mlp.down_proj.weight");
	assert_true(ix >= 0);
	const sm_out_info *ti = shardmap_rank_tensor(f.p, 1, (size_t)ix);
	assert_int_equal(ti->dtype, WT_I32);
	assert_false(ti->requantized);
	fx_close(&f);
	ct_free(&c);
}

/* With g_idx `name` of c replaced by I32 `v` (n values): fx_open's result and message. */
static int with_gidx(const ctm *c, const char *cfg, const wt_layout *l, const char *name,
                     wt_dtype dt, int64_t n, const void *v, wt_errbuf *err)
{
	tm_remove(c->m, name);
	if (v != NULL)
		ct_add_raw(c->m, name, dt, 1, n, 0, v);
	fx f;
	int rv = fx_open(&f, c, cfg, l, err);
	printf("%s: %s\n", name, rv == WT_OK ? "ok" : err->msg);
	fx_close(&f);
	return rv;
}

static void test_actorder_bad(void **state)
{
	(void)state;
	ctm c;
	char cfg[4096];
	wt_layout l;
	actorder_setup(&c, cfg, sizeof(cfg), &l, 0);
	wt_errbuf err = {0};
	const char *gn = "model.layers.1.self_attn.o_proj.weight_g_idx";
	const ctmod *o = ct_mod(&c, "model.layers.1.self_attn.o_proj"); /* K 256, groups 0..1 */
	int32_t g[256];
	int64_t g64[256];
	memcpy(g, o->gidx, sizeof(g));
	g[17] = 2; /* out of [0, K/G) */
	assert_int_equal(with_gidx(&c, cfg, &l, gn, WT_I32, 256, g, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "model.layers.1.self_attn.o_proj.weight_packed"));
	assert_non_null(strstr(err.msg, "weight_g_idx[17] = 2 is outside [0, 2)"));
	g[17] = -1;
	assert_int_equal(with_gidx(&c, cfg, &l, gn, WT_I32, 256, g, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "weight_g_idx[17] = -1"));
	g[17] = 1 - o->gidx[17]; /* in range, but group sizes 127 and 129 */
	assert_int_equal(with_gidx(&c, cfg, &l, gn, WT_I32, 256, g, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "not group_size 128"));
	/* wrong shape, wrong dtype */
	assert_int_equal(with_gidx(&c, cfg, &l, gn, WT_I32, 128, o->gidx, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, gn));
	assert_non_null(strstr(err.msg, "must be I32 [256]"));
	for (int k = 0; k < 256; k++)
		g64[k] = o->gidx[k];
	assert_int_equal(with_gidx(&c, cfg, &l, gn, WT_I64, 256, g64, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "it is I64"));
	/* none */
	assert_int_equal(with_gidx(&c, cfg, &l, gn, WT_I32, 0, NULL, &err), WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "without its weight_g_idx"));
	/* a g_idx the config does not announce */
	ct_config(cfg, sizeof(cfg), 4, 128, NULL);
	assert_int_equal(with_gidx(&c, cfg, &l, gn, WT_I32, 256, o->gidx, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "actorder is not \"group\""));
	ct_free(&c);
	/* config.json: actorder on strategy channel, an unknown actorder */
	ckpt_config cc;
	ct_config(cfg, sizeof(cfg), 8, 0, NULL);
	subst(cfg, sizeof(cfg), "\"actorder\":null", "\"actorder\":\"group\"");
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &cc, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "strategy group only"));
	ct_config(cfg, sizeof(cfg), 4, 128, NULL);
	subst(cfg, sizeof(cfg), "\"actorder\":null", "\"actorder\":true");
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &cc, &err), WT_OK);
	assert_true(cc.quant_gidx);
	ckpt_config_clear(&cc);
}

/* ---- asymmetric int8 and 8-bit pack-quantized ---- */

/* Quantize every module of c (ct_llama at 8 bits) asymmetrically in groups of G (G = K:
 * per channel) as calculate_qparams does: min and max taken with 0, s = (max - min) / 255
 * (BF16), zp = clamp(rint(-128 - min / s)), q = clamp(rint(x / s + zp)). packed: codes
 * and zero points written pack-quantized (weight_packed [N, K/4], zero points packed 4
 * rows per word [ceil(N/4), K/G]); else int-quantized (I8 weight, I8 zero points). */
static void to_asym8(ctm *c, int64_t G, int packed)
{
	for (size_t i = 0; i < c->n; i++) {
		ctmod *md = &c->mods[i];
		int64_t N = md->N, K = md->K, g0 = G > 0 ? G : K, ng = K / g0;
		md->sc = ng;
		md->s = realloc(md->s, (size_t)(N * ng) * 4);
		md->zp = malloc((size_t)(N * ng) * sizeof(int));
		int *q = malloc((size_t)(N * K) * sizeof(int));
		uint16_t *sbf = malloc((size_t)(N * ng) * 2);
		assert_true(md->s && md->zp && q && sbf);
		for (int64_t r = 0; r < N; r++)
			for (int64_t g = 0; g < ng; g++) {
				const float *x = md->x + r * K + g * g0;
				float lo = 0.0f, hi = 0.0f;
				for (int64_t j = 0; j < g0; j++) {
					lo = fminf(lo, x[j]);
					hi = fmaxf(hi, x[j]);
				}
				float s = ct_bf16((hi - lo) / 255.0f);
				int zp =
				    (int)fminf(fmaxf(rintf(-128.0f - lo / s), -128.0f), 127.0f);
				md->s[r * ng + g] = s;
				md->zp[r * ng + g] = zp;
				sbf[r * ng + g] = kern_f32_to_bf16(s);
				for (int64_t j = 0; j < g0; j++) {
					int code = (int)fminf(
					    fmaxf(rintf(x[j] / s + (float)zp), -128.0f), 127.0f);
					q[r * K + g * g0 + j] = code;
					md->q[r * K + g * g0 + j] = (int8_t)code;
				}
			}
		replace(c->m, md->name, "weight_scale", WT_BF16, 2, N, ng, sbf);
		if (packed) {
			int64_t nz = (N + 3) / 4;
			uint32_t *pk = malloc((size_t)(N * K / 4) * 4);
			uint32_t *zw = calloc((size_t)(nz * ng), 4);
			assert_true(pk && zw);
			for (int64_t w = 0; w < N * K / 4; w++)
				pk[w] = pack4(q + w * 4, 1);
			for (int64_t r = 0; r < N; r++) /* rows beyond N pad with 0 */
				for (int64_t g = 0; g < ng; g++)
					zw[(r / 4) * ng + g] |= (uint32_t)(md->zp[r * ng + g] + 128)
					                        << (8 * (r % 4));
			char b[200];
			snprintf(b, sizeof(b), "%s.weight", md->name);
			tm_remove(c->m, b);
			replace(c->m, md->name, "weight_packed", WT_I32, 2, N, K / 4, pk);
			int64_t shape[2] = {N, K};
			replace(c->m, md->name, "weight_shape", WT_I64, 1, 2, 0, shape);
			replace(c->m, md->name, "weight_zero_point", WT_I32, 2, nz, ng, zw);
			free(pk);
			free(zw);
		} else {
			int8_t *z8 = malloc((size_t)N);
			assert_non_null(z8);
			for (int64_t r = 0; r < N; r++)
				z8[r] = (int8_t)md->zp[r];
			replace(c->m, md->name, "weight", WT_I8, 2, N, K, md->q);
			replace(c->m, md->name, "weight_zero_point", WT_I8, 2, N, 1, z8);
			free(z8);
		}
		free(q);
		free(sbf);
	}
}

/* ct_config's int8 per channel scheme as format (pack-quantized or int-quantized),
 * strategy group G (0: channel), symmetric or not. */
static void config8(char *cfg, size_t cap, int packed, int64_t G, int asym)
{
	ct_config(cfg, cap, 8, 0, NULL);
	if (packed)
		subst(cfg, cap, "int-quantized", "pack-quantized");
	if (G > 0) {
		char gs[40];
		snprintf(gs, sizeof(gs), "\"group_size\":%lld", (long long)G);
		subst(cfg, cap, "\"strategy\":\"channel\"", "\"strategy\":\"group\"");
		subst(cfg, cap, "\"group_size\":null", gs);
	}
	if (asym)
		subst(cfg, cap, "\"symmetric\":true", "\"symmetric\":false");
}

/* The asymmetric int8 llama (group 0: per channel; packed: pack-quantized)
 * into c and its config into cfg; its TP 2 shards in F32 must equal the
 * dequantized codes, and int8-channel must be refused without --requant
 * allow with a message holding `scheme`. *l is left at that refused layout. */
static void asym8_checks(ctm *c, char *cfg, size_t cap, int64_t group, int packed,
                         const char *scheme, wt_layout *l)
{
	printf("seed 0xc7000008\n");
	ct_llama(c, 8, 0, 0, 0, 0);
	to_asym8(c, group, packed);
	config8(cfg, cap, packed, group, 1);
	wt_layout_init(l);
	l->tp_size = 2;
	l->dtype = WT_F32;
	fx f;
	wt_errbuf err = {0};
	if (fx_open(&f, c, cfg, l, &err) != WT_OK)
		fail_msg("%s", err.msg);
	ct_expect_tp2(&f, c, TOL8);
	fx_close(&f);
	/* never passes through: int8-channel needs --requant allow */
	l->dtype = WT_DTYPE_INVALID;
	l->quant = WT_QUANT_INT8_CHANNEL;
	assert_int_equal(fx_open(&f, c, cfg, l, &err), WT_ELAYOUT);
	printf("int8-channel from %s: %s\n", scheme, err.msg);
	assert_non_null(strstr(err.msg, scheme));
	fx_close(&f);
}

static void test_int8_asym_channel(void **state)
{
	(void)state;
	ctm c;
	char cfg[4096];
	wt_layout l;
	asym8_checks(&c, cfg, sizeof(cfg), 0, 0,
	             "int8 per channel with zero points (symmetric false)", &l);
	fx f;
	wt_errbuf err = {0};
	l.requant_allow = 1;
	if (fx_open(&f, &c, cfg, &l, &err) != WT_OK)
		fail_msg("%s", err.msg);
	fx_close(&f);
	l = (wt_layout){0};
	wt_layout_init(&l);
	l.tp_size = 2;
	/* hostile zero points */
	const char *zn = "model.layers.0.mlp.gate_proj.weight_zero_point";
	int8_t z[512] = {0};
	int32_t z32[512] = {0};
	tm_remove(c.m, zn);
	ct_add_raw(c.m, zn, WT_I8, 1, 512, 0, z); /* [N], not [N, 1] */
	assert_int_equal(fx_open(&f, &c, cfg, &l, &err), WT_ESHAPE);
	printf("1-D zero points: %s\n", err.msg);
	assert_non_null(strstr(err.msg, zn));
	assert_non_null(strstr(err.msg, "must be I8 [512, 1]"));
	fx_close(&f);
	tm_remove(c.m, zn);
	ct_add_raw(c.m, zn, WT_I32, 2, 512, 1, z32);
	assert_int_equal(fx_open(&f, &c, cfg, &l, &err), WT_ESHAPE);
	assert_non_null(strstr(err.msg, "it is I32"));
	fx_close(&f);
	tm_remove(c.m, zn);
	assert_int_equal(fx_open(&f, &c, cfg, &l, &err), WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "without its weight_zero_point"));
	fx_close(&f);
	ct_free(&c);
}

/* Every tensor of every rank of a and b: the same names, dtypes and bytes. */
static void same_shards(const fx *a, const fx *b)
{
	for (uint32_t r = 0; r < 2; r++) {
		size_t n = shardmap_rank_n_tensors(a->p, r);
		assert_int_equal(n, shardmap_rank_n_tensors(b->p, r));
		for (size_t k = 0; k < n; k++) {
			const sm_out_info *ta = shardmap_rank_tensor(a->p, r, k);
			const sm_out_info *tb = shardmap_rank_tensor(b->p, r, k);
			assert_string_equal(ta->name, tb->name);
			assert_int_equal(ta->dtype, tb->dtype);
			assert_int_equal(ta->nbytes, tb->nbytes);
			assert_memory_equal(a->pr->b[r][k], b->pr->b[r][k], ta->nbytes);
		}
	}
}

static void test_pack8_channel(void **state)
{
	(void)state;
	ctm c;
	char cfg8[4096], cfgp[4096];
	wt_layout l;
	printf("seed 0xc7000008\n");
	ct_llama(&c, 8, 0, 0, 0, 0); /* int-quantized I8 codes */
	config8(cfg8, sizeof(cfg8), 0, 0, 0);
	config8(cfgp, sizeof(cfgp), 1, 0, 0);
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx a, b;
	wt_errbuf err = {0};
	if (fx_open(&a, &c, cfg8, &l, &err) != WT_OK)
		fail_msg("%s", err.msg);
	/* the same codes pack-quantized: 4 per I32 word, + 128 */
	for (size_t i = 0; i < c.n; i++) {
		const ctmod *md = &c.mods[i];
		int64_t N = md->N, K = md->K;
		uint32_t *pk = malloc((size_t)(N * K / 4) * 4);
		int *q = malloc((size_t)(N * K) * sizeof(int));
		assert_true(pk && q);
		for (int64_t e = 0; e < N * K; e++)
			q[e] = md->q[e];
		for (int64_t w = 0; w < N * K / 4; w++)
			pk[w] = pack4(q + w * 4, 1);
		char n[200];
		snprintf(n, sizeof(n), "%s.weight", md->name);
		tm_remove(c.m, n);
		replace(c.m, md->name, "weight_packed", WT_I32, 2, N, K / 4, pk);
		int64_t shape[2] = {N, K};
		replace(c.m, md->name, "weight_shape", WT_I64, 1, 2, 0, shape);
		free(pk);
		free(q);
	}
	if (fx_open(&b, &c, cfgp, &l, &err) != WT_OK)
		fail_msg("%s", err.msg);
	same_shards(&a, &b); /* passed through: the I8 checkpoint's shard bytes */
	int ix = tm_ix(b.p, 1, "model.layers.0.mlp.down_proj.weight");
	assert_true(ix >= 0);
	assert_int_equal(shardmap_rank_tensor(b.p, 1, (size_t)ix)->dtype, WT_I8);
	assert_false(shardmap_rank_tensor(b.p, 1, (size_t)ix)->requantized);
	fx_close(&a);
	fx_close(&b);
	/* and dequantized: f32(code) * s */
	l.quant = WT_QUANT_NONE;
	l.dtype = WT_F32;
	if (fx_open(&b, &c, cfgp, &l, &err) != WT_OK)
		fail_msg("%s", err.msg);
	ct_expect_tp2(&b, &c, TOL8S);
	fx_close(&b);
	ct_free(&c);
}

static void test_pack8_asym_group(void **state)
{
	(void)state;
	ctm c;
	char cfg[4096];
	wt_layout l;
	asym8_checks(&c, cfg, sizeof(cfg), 128, 1,
	             "int8 per group of 128 (pack-quantized) with zero points", &l);
	fx f;
	wt_errbuf err = {0};
	assert_int_equal(fx_open(&f, &c, cfg, &l, &err), WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "no output layout keeps"));
	fx_close(&f);
	/* zero points unpacked ([N, K/G]): the wrong shape */
	const char *zn = "model.layers.1.mlp.up_proj.weight_zero_point";
	static int32_t zu[512 * 2];
	tm_remove(c.m, zn);
	ct_add_raw(c.m, zn, WT_I32, 2, 512, 2, zu);
	l.quant = WT_QUANT_NONE;
	assert_int_equal(fx_open(&f, &c, cfg, &l, &err), WT_ESHAPE);
	printf("unpacked int8 zero points: %s\n", err.msg);
	assert_non_null(strstr(err.msg, "I32 [128, 2] (packed 4 rows per word)"));
	fx_close(&f);
	ct_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_actorder_dequantized), cmocka_unit_test(test_actorder_targets),
	    cmocka_unit_test(test_actorder_bad),         cmocka_unit_test(test_int8_asym_channel),
	    cmocka_unit_test(test_pack8_channel),        cmocka_unit_test(test_pack8_asym_group),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
