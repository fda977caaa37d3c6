/*
 * test_shardmap_ct.c — compressed-tensors sources (docs/format.md section 4.5):
 * int8-channel and int4-group pass-through at TP 2 against expected bytes built
 * here from the logical codes and scales of each module (int4 repacked by this
 * file's own packer), every emitted value dequantized and compared with the
 * original weights, input scales, the ignore list, group-splitting slices, other
 * targets (refused without requant=allow, then dequantize -> kernels quantizer),
 * differing fused input scales, and config.json errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_shardmap_ct_util.h"

typedef struct ctfx {
	char *dir;
	store *s;
	ckpt *c;
	sm_plan *p;
	tm_prod *pr;
} ctfx;

static int ct_open(ctfx *f, const ctm *c, const char *cfg, const wt_layout *l, int produce,
                   wt_errbuf *err)
{
	memset(f, 0, sizeof(*f));
	f->dir = tu_mkdtemp("smct");
	assert_int_equal(tm_write(c->m, f->dir, cfg), 0);
	int rv = tm_plan(f->dir, l, &f->s, &f->c, &f->p, err);
	if (rv == WT_OK && produce)
		f->pr = tm_produce(f->c, f->p, -1, &rv, err);
	return rv;
}

/* ct_open that must succeed: fails the test with the error's message. */
static void ct_open_ok(ctfx *f, const ctm *c, const char *cfg, const wt_layout *l, int produce)
{
	wt_errbuf err = {0};
	if (ct_open(f, c, cfg, l, produce, &err) != WT_OK)
		fail_msg("%s", err.msg);
}

static void ct_close(ctfx *f)
{
	tm_prod_free(f->pr);
	tm_close(f->s, f->c, f->p);
	tu_rmrf(f->dir);
	free(f->dir);
}

static void lay(wt_layout *l, uint32_t tp, wt_quant q)
{
	wt_layout_init(l);
	l->tp_size = tp;
	l->quant = q;
}

static const sm_out_info *info(const ctfx *f, uint32_t r, const char *name)
{
	int ix = tm_ix(f->p, r, name);
	if (ix < 0)
		fail_msg("rank %u: no '%s'", r, name);
	return shardmap_rank_tensor(f->p, r, (size_t)ix);
}

static const void *bytes(const ctfx *f, uint32_t r, const char *name)
{
	return f->pr->b[r][tm_ix(f->p, r, name)];
}

/* Expected logical content of one runtime tensor on one rank. */
typedef struct expt {
	int8_t *q;
	float *s, *x; /* scales per row and group; original values */
	int64_t rows, K, sc;
} expt;

static void ex_init(expt *e, int64_t K, int64_t sc)
{
	memset(e, 0, sizeof(*e));
	e->K = K;
	e->sc = sc;
	e->q = malloc(1);
	e->s = malloc(1);
	e->x = malloc(1);
}

static void ex_grow(expt *e, int64_t add)
{
	int64_t r = e->rows + add;
	e->q = realloc(e->q, (size_t)(r * e->K));
	e->s = realloc(e->s, (size_t)(r * e->sc) * 4);
	e->x = realloc(e->x, (size_t)(r * e->K) * 4);
}

/* Rows [a, b) of module m, all columns. */
static void ex_rows(expt *e, const ctmod *m, int64_t a, int64_t b)
{
	assert_int_equal(m->K, e->K);
	ex_grow(e, b - a);
	memcpy(e->q + e->rows * e->K, m->q + a * m->K, (size_t)((b - a) * m->K));
	memcpy(e->x + e->rows * e->K, m->x + a * m->K, (size_t)((b - a) * m->K) * 4);
	memcpy(e->s + e->rows * e->sc, m->s + a * m->sc, (size_t)((b - a) * m->sc) * 4);
	e->rows += b - a;
}

/* Columns [a, b) of module m, all rows; the scales of the groups they cover (int8: the
 * one per-row scale). */
static void ex_cols(expt *e, const ctmod *m, int64_t a, int64_t b)
{
	int64_t G = m->K / m->sc;
	assert_int_equal(b - a, e->K);
	ex_grow(e, m->N);
	for (int64_t r = 0; r < m->N; r++) {
		memcpy(e->q + (e->rows + r) * e->K, m->q + r * m->K + a, (size_t)(b - a));
		memcpy(e->x + (e->rows + r) * e->K, m->x + r * m->K + a, (size_t)(b - a) * 4);
		for (int64_t g = 0; g < e->sc; g++)
			e->s[(e->rows + r) * e->sc + g] =
			    m->s[r * m->sc + (m->sc == 1 ? 0 : a / G + g)];
	}
	e->rows += m->N;
}

static void ex_free(expt *e)
{
	free(e->q);
	free(e->s);
	free(e->x);
}

/* The produced weight and scale of `rt` on rank r equal e (int4: packed by ct_pack8),
 * and every produced code times its scale is within 0.75 scale of the original value. */
static void check_pass_n(const ctfx *f, uint32_t r, const char *rt, const expt *e, int bits,
                         int64_t count)
{
	char sname[200];
	snprintf(sname, sizeof(sname), "%.*sweight_scale", (int)(strlen(rt) - 6), rt);
	const sm_out_info *wi = info(f, r, rt), *si = info(f, r, sname);
	int64_t wk = bits == 4 ? e->K / 8 : e->K;
	int d = count > 0; /* expert stacks: [count, rows/count, ...] */
	assert_int_equal(wi->dtype, bits == 4 ? WT_I32 : WT_I8);
	assert_int_equal(wi->ndim, 2 + d);
	assert_int_equal(si->ndim, 2 + d);
	if (d) {
		assert_int_equal(wi->shape[0], count);
		assert_int_equal(si->shape[0], count);
	}
	assert_int_equal(wi->shape[d], e->rows / (d ? count : 1));
	assert_int_equal(wi->shape[d + 1], wk);
	assert_int_equal(si->dtype, WT_F32);
	assert_int_equal(si->shape[d], e->rows / (d ? count : 1));
	assert_int_equal(si->shape[d + 1], e->sc);
	assert_false(wi->requantized);
	const uint8_t *wb = bytes(f, r, rt);
	const float *sb = bytes(f, r, sname);
	if (bits == 8) {
		assert_memory_equal(wb, e->q, (size_t)(e->rows * e->K));
	} else {
		for (int64_t i = 0; i < e->rows * e->K / 8; i++) {
			uint32_t w;
			memcpy(&w, wb + i * 4, 4);
			if (w != ct_pack8(e->q + i * 8))
				fail_msg("%s rank %u word %lld: %08x != %08x", rt, r, (long long)i,
				         w, ct_pack8(e->q + i * 8));
		}
	}
	assert_memory_equal(sb, e->s, (size_t)(e->rows * e->sc) * 4);
	/* Dequantize what was emitted (contract 4.3) and compare with the original values. */
	int64_t G = e->K / e->sc;
	for (int64_t i = 0; i < e->rows * e->K; i++) {
		int64_t row = i / e->K, col = i % e->K;
		int code;
		if (bits == 8) {
			code = (int8_t)wb[i];
		} else {
			uint32_t w;
			memcpy(&w, wb + (i / 8) * 4, 4);
			code = (int)((w >> (4 * (i % 8))) & 15u) - 8;
		}
		float s = sb[row * e->sc + col / G];
		if (fabsf((float)code * s - e->x[i]) > 0.75f * s)
			fail_msg("%s rank %u [%lld, %lld]: %g * %g far from %g", rt, r,
			         (long long)row, (long long)col, (double)code, (double)s,
			         (double)e->x[i]);
	}
}

static void check_pass(const ctfx *f, uint32_t r, const char *rt, const expt *e, int bits)
{
	check_pass_n(f, r, rt, e, bits, 0);
}

/* Every linear of llama at TP 2 on rank r (H 8, KV 2, d 32, hid 256, I 512). */
static void check_llama_rank(const ctfx *f, const ctm *c, uint32_t r, uint32_t T)
{
	char mod[160], rt[200];
	int64_t sc_h = c->bits == 4 ? 256 / c->G : 1;
	for (int i = 0; i < 2; i++) {
		expt e;
		const ctmod *q, *k, *v, *o, *g, *u, *d;
#define M(var, leaf)                                                                               \
	snprintf(mod, sizeof(mod), "model.layers.%d.%s", i, leaf);                                 \
	var = ct_mod(c, mod)
		M(q, "self_attn.q_proj");
		M(k, "self_attn.k_proj");
		M(v, "self_attn.v_proj");
		M(o, "self_attn.o_proj");
		M(g, "mlp.gate_proj");
		M(u, "mlp.up_proj");
		M(d, "mlp.down_proj");
#undef M
		int64_t qr = 256 / T, kvl = T <= 2 ? 64 / T : 32, kvs = T <= 2 ? r : r / (T / 2);
		ex_init(&e, 256, sc_h);
		ex_rows(&e, q, r * qr, (r + 1) * qr);
		ex_rows(&e, k, kvs * kvl, (kvs + 1) * kvl);
		ex_rows(&e, v, kvs * kvl, (kvs + 1) * kvl);
		snprintf(rt, sizeof(rt), "model.layers.%d.self_attn.qkv_proj.weight", i);
		check_pass(f, r, rt, &e, c->bits);
		ex_free(&e);
		ex_init(&e, 256 / T, c->bits == 4 ? 256 / T / c->G : 1);
		ex_cols(&e, o, r * 256 / T, (r + 1) * 256 / T);
		snprintf(rt, sizeof(rt), "model.layers.%d.self_attn.o_proj.weight", i);
		check_pass(f, r, rt, &e, c->bits);
		ex_free(&e);
		ex_init(&e, 256, sc_h);
		ex_rows(&e, g, r * 512 / T, (r + 1) * 512 / T);
		ex_rows(&e, u, r * 512 / T, (r + 1) * 512 / T);
		snprintf(rt, sizeof(rt), "model.layers.%d.mlp.gate_up_proj.weight", i);
		check_pass(f, r, rt, &e, c->bits);
		ex_free(&e);
		ex_init(&e, 512 / T, c->bits == 4 ? 512 / T / c->G : 1);
		ex_cols(&e, d, r * 512 / T, (r + 1) * 512 / T);
		snprintf(rt, sizeof(rt), "model.layers.%d.mlp.down_proj.weight", i);
		check_pass(f, r, rt, &e, c->bits);
		ex_free(&e);
	}
}

static float f32_at(const void *p)
{
	float v;
	memcpy(&v, p, 4);
	return v;
}

static void test_int8_passthrough(void **state)
{
	(void)state;
	printf("seed 0xc7000008\n");
	ctm c;
	ct_llama(&c, 8, 0, 1, 0, 0);
	char cfg[4096];
	ct_config(cfg, sizeof(cfg), 8, 0, NULL);
	wt_layout l;
	lay(&l, 2, WT_QUANT_INT8_CHANNEL);
	ctfx f;
	ct_open_ok(&f, &c, cfg, &l, 1);
	for (uint32_t r = 0; r < 2; r++) {
		check_llama_rank(&f, &c, r, 2);
		/* input scales: the shared value of the fused parts, as F32 [1] */
		static const char *const is[] = {"self_attn.qkv_proj", "self_attn.o_proj",
		                                 "mlp.gate_up_proj", "mlp.down_proj"};
		for (int k = 0; k < 4; k++) {
			char n[200];
			snprintf(n, sizeof(n), "model.layers.1.%s.input_scale", is[k]);
			const sm_out_info *ii = info(&f, r, n);
			assert_int_equal(ii->dtype, WT_F32);
			assert_int_equal(ii->ndim, 1);
			assert_int_equal(ii->shape[0], 1);
			assert_true(f32_at(bytes(&f, r, n)) == ct_bf16(0.01f * (float)(1 + k + 4)));
		}
		/* lm_head is in the ignore list: BF16 as stored (vocab rows of rank r) */
		const sm_out_info *lm = info(&f, r, "lm_head.weight");
		assert_int_equal(lm->dtype, WT_BF16);
		int k = tm_find(c.m, "lm_head.weight");
		assert_memory_equal(bytes(&f, r, "lm_head.weight"),
		                    (uint8_t *)c.m->data[k] + (size_t)r * 512 * 256 * 2,
		                    (size_t)(1000 - 512) * 256 * 2);
	}
	ct_close(&f);
	ct_free(&c);
}

static void test_int4_passthrough(void **state)
{
	(void)state;
	printf("seed 0xc7000004\n");
	/* pack-quantized at group 64 and 128, and W4A8 stored int-quantized (one code per
	 * I8 byte, packed while producing) at group 128 */
	for (int64_t G = 64; G <= 192; G += 64) {
		int i8codes = G == 192;
		if (i8codes)
			G = 128;
		ctm c;
		memset(&c, 0, sizeof(c));
		ct_llama(&c, 4, G, 0, 0, i8codes);
		char cfg[4096];
		ct_config(cfg, sizeof(cfg), i8codes ? 44 : 4, G, NULL);
		wt_layout l;
		lay(&l, 2, WT_QUANT_INT4_GROUP);
		l.group_size = (uint32_t)G;
		ctfx f;
		wt_errbuf err = {0};
		int rv = ct_open(&f, &c, cfg, &l, 1, &err);
		if (rv != WT_OK)
			fail_msg("group %lld: %s", (long long)G, err.msg);
		for (uint32_t r = 0; r < 2; r++)
			check_llama_rank(&f, &c, r, 2);
		/* weight_shape is consumed (listed as skipped); no input scale is emitted */
		bool skipped = false;
		for (size_t k = 0; k < shardmap_n_skipped(f.p); k++)
			skipped |= strcmp(shardmap_skipped(f.p, k),
			                  "model.layers.0.mlp.down_proj.weight_shape") == 0;
		assert_int_equal(skipped, !i8codes);
		assert_int_equal(tm_ix(f.p, 0, "model.layers.0.mlp.down_proj.input_scale"), -1);
		ct_close(&f);
		ct_free(&c);
		if (i8codes)
			G = 192;
	}
}

/* Dequantized source rows/cols (F32) of the test's logical codes, assembled as the rank
 * holds them: the oracle of the requantizing paths. */
static float *deq(const expt *e)
{
	int64_t G = e->K / e->sc;
	float *v = malloc((size_t)(e->rows * e->K) * 4);
	for (int64_t i = 0; i < e->rows * e->K; i++)
		v[i] = (float)e->q[i] * e->s[(i / e->K) * e->sc + (i % e->K) / G];
	return v;
}

static void test_int4_group_split(void **state)
{
	(void)state;
	printf("seed 0xc7000004\n");
	ctm c;
	ct_llama(&c, 4, 128, 0, 0, 0);
	char cfg[4096];
	ct_config(cfg, sizeof(cfg), 4, 128, NULL);
	wt_layout l;
	lay(&l, 4, WT_QUANT_INT4_GROUP); /* o_proj: 64 columns per rank, groups of 128 */
	l.group_size = 64;
	ctfx f;
	wt_errbuf err = {0};
	/* layout group 64 differs from the source's 128: another scheme, refused */
	assert_int_equal(ct_open(&f, &c, cfg, &l, 0, &err), WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "--requant allow"));
	assert_non_null(strstr(err.msg, "--group-size 128"));
	ct_close(&f);
	l.group_size = 128;
	assert_int_equal(ct_open(&f, &c, cfg, &l, 0, &err), WT_ELAYOUT);
	printf("%s\n", err.msg);
	assert_non_null(strstr(err.msg, "o_proj"));
	assert_non_null(strstr(err.msg, "split"));
	assert_non_null(strstr(err.msg, "groups of 128"));
	assert_non_null(strstr(err.msg, "use tp_size 1 or 2"));
	ct_close(&f);
	/* requant=allow with group 64: o_proj dequantized and requantized per rank */
	l.group_size = 64;
	l.requant_allow = 1;
	ct_open_ok(&f, &c, cfg, &l, 1);
	for (uint32_t r = 0; r < 4; r++) {
		expt e;
		ex_init(&e, 64, 1);
		const ctmod *o = ct_mod(&c, "model.layers.0.self_attn.o_proj");
		e.sc = 0; /* filled below from the source groups */
		ex_free(&e);
		ex_init(&e, 64, 1);
		/* the group of 128 covering columns [r*64, r*64+64) */
		ex_grow(&e, o->N);
		for (int64_t row = 0; row < o->N; row++) {
			memcpy(e.q + row * 64, o->q + row * 256 + r * 64, 64);
			e.s[row] = o->s[row * 2 + (r * 64) / 128];
		}
		e.rows = o->N;
		float *v = deq(&e);
		const char *rt = "model.layers.0.self_attn.o_proj.weight";
		const sm_out_info *wi = info(&f, r, rt);
		assert_true(wi->requantized);
		uint8_t wq[256 * 64 / 2];
		float sc[256];
		assert_int_equal(
		    kern_quantize(WT_QUANT_INT4_GROUP, v, WT_F32, 256, 64, 64, wq, sc, NULL),
		    WT_OK);
		assert_memory_equal(bytes(&f, r, rt), wq, sizeof(wq));
		assert_memory_equal(bytes(&f, r, "model.layers.0.self_attn.o_proj.weight_scale"),
		                    sc, sizeof(sc));
		free(v);
		ex_free(&e);
	}
	ct_close(&f);
	ct_free(&c);
}

static void test_int8_other_targets(void **state)
{
	(void)state;
	printf("seed 0xc7000008\n");
	ctm c;
	ct_llama(&c, 8, 0, 1, 0, 0);
	char cfg[4096];
	ct_config(cfg, sizeof(cfg), 8, 0, NULL);
	wt_layout l;
	lay(&l, 2, WT_QUANT_FP8_CHANNEL);
	ctfx f;
	wt_errbuf err = {0};
	assert_int_equal(ct_open(&f, &c, cfg, &l, 0, &err), WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "compressed-tensors int8"));
	assert_non_null(strstr(err.msg, "fp8-channel"));
	assert_non_null(strstr(err.msg, "--requant allow"));
	ct_close(&f);
	l.requant_allow = 1;
	ct_open_ok(&f, &c, cfg, &l, 1);
	const ctmod *dn = ct_mod(&c, "model.layers.1.mlp.down_proj");
	for (uint32_t r = 0; r < 2; r++) {
		expt e;
		ex_init(&e, 256, 1);
		ex_cols(&e, dn, r * 256, (r + 1) * 256);
		float *v = deq(&e);
		uint8_t wq[256 * 256];
		float sc[256];
		assert_int_equal(
		    kern_quantize(WT_QUANT_FP8_CHANNEL, v, WT_F32, 256, 256, 0, wq, sc, NULL),
		    WT_OK);
		const char *rt = "model.layers.1.mlp.down_proj.weight";
		assert_true(info(&f, r, rt)->requantized);
		assert_memory_equal(bytes(&f, r, rt), wq, sizeof(wq));
		assert_memory_equal(bytes(&f, r, "model.layers.1.mlp.down_proj.weight_scale"), sc,
		                    sizeof(sc));
		/* other targets emit no input scale */
		assert_int_equal(tm_ix(f.p, r, "model.layers.1.mlp.down_proj.input_scale"), -1);
		free(v);
		ex_free(&e);
	}
	ct_close(&f);
	/* quant none: dequantized to BF16 without requant=allow */
	l.requant_allow = 0;
	l.quant = WT_QUANT_NONE;
	ct_open_ok(&f, &c, cfg, &l, 1);
	expt e;
	ex_init(&e, 256, 1);
	ex_cols(&e, dn, 256, 512);
	float *v = deq(&e);
	const char *rt = "model.layers.1.mlp.down_proj.weight";
	assert_int_equal(info(&f, 1, rt)->dtype, WT_BF16);
	assert_false(info(&f, 1, rt)->requantized);
	const uint16_t *b = bytes(&f, 1, rt);
	for (int64_t i = 0; i < 256 * 256; i++)
		if (b[i] != kern_f32_to_bf16(v[i]))
			fail_msg("element %lld: %04x != bf16(%g)", (long long)i, b[i],
			         (double)v[i]);
	free(v);
	ex_free(&e);
	ct_close(&f);
	ct_free(&c);
}

static void test_input_scales_differ(void **state)
{
	(void)state;
	printf("seed 0xc7000008\n");
	ctm c;
	ct_llama(&c, 8, 0, 1, 1, 0); /* k_proj's input scale differs from q/v's */
	char cfg[4096];
	ct_config(cfg, sizeof(cfg), 8, 0, NULL);
	wt_layout l;
	lay(&l, 1, WT_QUANT_INT8_CHANNEL);
	ctfx f;
	wt_errbuf err = {0};
	assert_int_equal(ct_open(&f, &c, cfg, &l, 1, &err), WT_ELAYOUT);
	printf("%s\n", err.msg);
	assert_non_null(strstr(err.msg, "qkv_proj.input_scale"));
	assert_non_null(strstr(err.msg, "k_proj.input_scale"));
	assert_non_null(strstr(err.msg, "--requant allow"));
	ct_close(&f);
	l.requant_allow = 1;
	ct_open_ok(&f, &c, cfg, &l, 1);
	float want = ct_bf16(0.01f + 0.005f); /* layer 0 k_proj: the max */
	assert_true(f32_at(bytes(&f, 0, "model.layers.0.self_attn.qkv_proj.input_scale")) == want);
	ct_close(&f);
	ct_free(&c);
}

static void test_ignore_list(void **state)
{
	(void)state;
	printf("seed 0xc7000008\n");
	ctm c;
	ct_llama(&c, 8, 0, 0, 0, 0);
	/* down_proj of layer 1 left unquantized, as llm-compressor does for ignored modules */
	ctmod *dn = NULL;
	for (size_t i = 0; i < c.n; i++)
		if (strcmp(c.mods[i].name, "model.layers.1.mlp.down_proj") == 0)
			dn = &c.mods[i];
	tm_remove(c.m, "model.layers.1.mlp.down_proj.weight");
	tm_remove(c.m, "model.layers.1.mlp.down_proj.weight_scale");
	uint16_t *bf = malloc(256 * 512 * 2);
	for (int64_t i = 0; i < 256 * 512; i++)
		bf[i] = kern_f32_to_bf16(dn->x[i]);
	ct_add_raw(c.m, "model.layers.1.mlp.down_proj.weight", WT_BF16, 2, 256, 512, bf);
	char cfg[4096];
	ct_config(cfg, sizeof(cfg), 8, 0, ",\"re:.*layers[.]1[.]mlp[.]down_proj$\"");
	wt_layout l;
	lay(&l, 2, WT_QUANT_INT8_CHANNEL);
	ctfx f;
	wt_errbuf err = {0};
	ct_open_ok(&f, &c, cfg, &l, 1);
	const char *rt = "model.layers.1.mlp.down_proj.weight";
	assert_int_equal(info(&f, 1, rt)->dtype, WT_BF16);
	assert_int_equal(tm_ix(f.p, 1, "model.layers.1.mlp.down_proj.weight_scale"), -1);
	const uint16_t *b = bytes(&f, 1, rt);
	for (int64_t row = 0; row < 256; row++)
		assert_memory_equal(b + row * 256, bf + row * 512 + 256, 256 * 2);
	/* layer 0's down_proj still passes through */
	assert_int_equal(info(&f, 1, "model.layers.0.mlp.down_proj.weight")->dtype, WT_I8);
	ct_close(&f);
	/* a weight_zero_point (older compressed-tensors wrote zeros for symmetric schemes) is
	 * listed as skipped */
	int8_t zp[256] = {0};
	ct_add_raw(c.m, "model.layers.0.mlp.down_proj.weight_zero_point", WT_I8, 2, 256, 1, zp);
	ct_open_ok(&f, &c, cfg, &l, 0);
	bool skipped = false;
	for (size_t k = 0; k < shardmap_n_skipped(f.p); k++)
		skipped |= strcmp(shardmap_skipped(f.p, k),
		                  "model.layers.0.mlp.down_proj.weight_zero_point") == 0;
	assert_true(skipped);
	ct_close(&f);
	/* only part of a fused module ignored: refused, naming both sides */
	char cfg2[4096];
	ct_config(cfg2, sizeof(cfg2), 8, 0,
	          ",\"re:.*layers[.]1[.]mlp[.]down_proj$\",\"model.layers.0.mlp.up_proj\"");
	assert_int_equal(ct_open(&f, &c, cfg2, &l, 0, &err), WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "excluded: model.layers.0.mlp.up_proj"));
	assert_non_null(strstr(err.msg, "model.layers.0.mlp.gate_proj"));
	ct_close(&f);
	/* a scale beside the now-float weight is refused, naming it */
	ct_add_raw(c.m, "model.layers.1.mlp.down_proj.weight_scale", WT_BF16, 2, 256, 1, bf);
	assert_int_equal(ct_open(&f, &c, cfg, &l, 0, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "model.layers.1.mlp.down_proj.weight_scale"));
	ct_close(&f);
	free(bf);
	ct_free(&c);
}

/* Mixtral (6 experts of 256 x 256, w1/w3/w2) with every linear int8: expert stacks pass
 * through at TP 2 and EP 2, the input scale of a stack is the max over its experts (they
 * differ: a warning), and an expert whose w1 and w3 input scales differ is refused. */
static void ct_mixtral(ctm *c, int differ)
{
	memset(c, 0, sizeof(*c));
	c->m = tm_mixtral(0xc7000e00u);
	c->bits = 8;
	for (int i = 0; i < 2; i++) {
		char mod[160];
		static const char *const at[] = {"q_proj", "k_proj", "v_proj", "o_proj"};
		for (int k = 0; k < 4; k++) {
			snprintf(mod, sizeof(mod), "model.layers.%d.self_attn.%s", i, at[k]);
			ct_convert(c, mod, 0.02f * (float)(1 + (k == 3)));
		}
		for (int j = 0; j < 6; j++) {
			static const char *const w[] = {"w1", "w3", "w2"};
			for (int k = 0; k < 3; k++) {
				snprintf(mod, sizeof(mod),
				         "model.layers.%d.block_sparse_moe.experts.%d.%s", i, j,
				         w[k]);
				float is = 0.01f * (float)(1 + j) + (k == 2 ? 0.1f : 0.0f);
				if (differ && j == 2 && k == 1)
					is += 0.001f;
				ct_convert(c, mod, is);
			}
		}
	}
}

static void test_experts(void **state)
{
	(void)state;
	printf("seed 0xc7000e00\n");
	ctm c;
	ct_mixtral(&c, 0);
	char cfg[4096];
	snprintf(cfg, sizeof(cfg),
	         "%.*s,\"quantization_config\":{\"quant_method\":\"compressed-tensors\","
	         "\"format\":\"int-quantized\",\"ignore\":[\"lm_head\",\"re:.*gate$\"],"
	         "\"config_groups\":{\"g\":{\"targets\":[\"Linear\"],\"weights\":{"
	         "\"num_bits\":8,\"type\":\"int\",\"symmetric\":true,\"strategy\":"
	         "\"channel\"}}}}}",
	         (int)strlen(tm_mixtral_cfg) - 1, tm_mixtral_cfg);
	static const struct {
		uint32_t tp, ep;
	} lays[] = {{2, 1}, {1, 2}};
	for (size_t li = 0; li < 2; li++) {
		wt_layout l;
		lay(&l, lays[li].tp, WT_QUANT_INT8_CHANNEL);
		l.ep_size = lays[li].ep;
		ctfx f;
		wt_errbuf err = {0};
		int rv = ct_open(&f, &c, cfg, &l, 1, &err);
		if (rv != WT_OK)
			fail_msg("tp %u ep %u: %s", l.tp_size, l.ep_size, err.msg);
		for (uint32_t r = 0; r < 2; r++) {
			uint32_t T = l.tp_size, tr = r % T, e = r / T;
			int64_t cnt = l.ep_size == 1 ? 6 : 3, j0 = e * 3, Il = 256 / T;
			expt w13, w2;
			ex_init(&w13, 256, 1);
			ex_init(&w2, Il, 1);
			float ismax = 0.0f;
			for (int64_t j = j0; j < j0 + cnt; j++) {
				char mod[160];
				snprintf(mod, sizeof(mod),
				         "model.layers.1.block_sparse_moe.experts.%lld.",
				         (long long)j);
				char m1[200], m3[200], m2[200];
				snprintf(m1, sizeof(m1), "%sw1", mod);
				snprintf(m3, sizeof(m3), "%sw3", mod);
				snprintf(m2, sizeof(m2), "%sw2", mod);
				ex_rows(&w13, ct_mod(&c, m1), tr * Il, (tr + 1) * Il);
				ex_rows(&w13, ct_mod(&c, m3), tr * Il, (tr + 1) * Il);
				ex_cols(&w2, ct_mod(&c, m2), tr * Il, (tr + 1) * Il);
				ismax = fmaxf(ismax, ct_mod(&c, m1)->in_scale);
			}
			check_pass_n(&f, r, "model.layers.1.block_sparse_moe.experts.w13_weight",
			             &w13, 8, cnt);
			check_pass_n(&f, r, "model.layers.1.block_sparse_moe.experts.w2_weight",
			             &w2, 8, cnt);
			assert_true(f32_at(bytes(&f, r,
			                         "model.layers.1.block_sparse_moe.experts."
			                         "w13_input_scale")) == ct_bf16(ismax));
			ex_free(&w13);
			ex_free(&w2);
		}
		ct_close(&f);
	}
	ct_free(&c);
	ct_mixtral(&c, 1); /* expert 2's w3 input scale differs from its w1's */
	wt_layout l;
	lay(&l, 2, WT_QUANT_INT8_CHANNEL);
	ctfx f;
	wt_errbuf err = {0};
	assert_int_equal(ct_open(&f, &c, cfg, &l, 1, &err), WT_ELAYOUT);
	printf("%s\n", err.msg);
	assert_non_null(strstr(err.msg, "experts.w13_input_scale"));
	assert_non_null(strstr(err.msg, "experts.2.w1.input_scale"));
	assert_non_null(strstr(err.msg, "experts.2.w3.input_scale"));
	ct_close(&f);
	ct_free(&c);
}

static void test_bad_checkpoints(void **state)
{
	(void)state;
	printf("seed 0xc7000004\n");
	ctm c;
	ct_llama(&c, 4, 128, 0, 0, 0);
	char cfg[4096];
	ct_config(cfg, sizeof(cfg), 4, 128, NULL);
	wt_layout l;
	lay(&l, 1, WT_QUANT_INT4_GROUP);
	ctfx f;
	wt_errbuf err = {0};
	/* scales of the wrong shape */
	tm_remove(c.m, "model.layers.0.mlp.up_proj.weight_scale");
	float z[512 * 4] = {0};
	ct_add_raw(c.m, "model.layers.0.mlp.up_proj.weight_scale", WT_F32, 2, 512, 4, z);
	assert_int_equal(ct_open(&f, &c, cfg, &l, 0, &err), WT_ESHAPE);
	assert_non_null(strstr(err.msg, "model.layers.0.mlp.up_proj.weight_scale"));
	assert_non_null(strstr(err.msg, "[512, 2]"));
	ct_close(&f);
	/* no scale at all */
	tm_remove(c.m, "model.layers.0.mlp.up_proj.weight_scale");
	assert_int_equal(ct_open(&f, &c, cfg, &l, 0, &err), WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "model.layers.0.mlp.up_proj.weight_packed"));
	ct_close(&f);
	/* a missing packed weight is missing under its stored name's module */
	tm_remove(c.m, "model.layers.0.mlp.up_proj.weight_packed");
	tm_remove(c.m, "model.layers.0.mlp.up_proj.weight_shape");
	assert_int_equal(ct_open(&f, &c, cfg, &l, 0, &err), WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "model.layers.0.mlp.up_proj.weight"));
	ct_close(&f);
	ct_free(&c);
	/* config.json schemes that are not read */
	static const struct {
		const char *from, *to;
	} bad[] = {
	    /* (symmetric false is read here: test_shardmap_ct_asym.c) */
	    {"\"type\":\"int\"", "\"type\":\"float\""},
	    /* (actorder "group" is read: test_shardmap_ct_var.c; an unknown value is not) */
	    {"\"actorder\":null", "\"actorder\":\"columns\""},
	    {"\"strategy\":\"group\"", "\"strategy\":\"tensor\""},
	    {"pack-quantized", "float-quantized"},
	    /* the int4-quantized variant (two codes per I8 byte, no +8 offset) */
	    {"pack-quantized", "int4-quantized"},
	    {"\"quantization_status\":\"compressed\"", "\"quantization_status\":\"frozen\""},
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		ct_config(cfg, sizeof(cfg), 4, 128, NULL);
		char *p = strstr(cfg, bad[k].from);
		assert_non_null(p);
		char out[4096];
		snprintf(out, sizeof(out), "%.*s%s%s", (int)(p - cfg), cfg, bad[k].to,
		         p + strlen(bad[k].from));
		ckpt_config cc;
		int rv = ckpt_config_parse(out, strlen(out), &cc, &err);
		assert_int_equal(rv, WT_EUNSUPPORTED);
		assert_non_null(strstr(err.msg, "compressed-tensors"));
	}
	ckpt_config cc;
	/* a group beyond the contract's int4-group limit is refused, naming it */
	ct_config(cfg, sizeof(cfg), 4, (int64_t)WT_MAX_GROUP_SIZE * 4096, NULL);
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &cc, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "group_size 4194304"));
	ct_config(cfg, sizeof(cfg), 4, 32, NULL);
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &cc, &err), WT_OK);
	assert_int_equal(cc.quant, CKPT_QUANT_CT_INT4);
	assert_int_equal(cc.quant_group, 32);
	assert_int_equal(cc.n_quant_ignore, 1);
	ckpt_config_clear(&cc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_int8_passthrough),
	    cmocka_unit_test(test_int4_passthrough),
	    cmocka_unit_test(test_int4_group_split),
	    cmocka_unit_test(test_int8_other_targets),
	    cmocka_unit_test(test_input_scales_differ),
	    cmocka_unit_test(test_ignore_list),
	    cmocka_unit_test(test_experts),
	    cmocka_unit_test(test_bad_checkpoints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
