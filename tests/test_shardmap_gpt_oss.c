/*
 * test_shardmap_gpt_oss.c — GPT-OSS (GptOssForCausalLM): MXFP4 experts stacked in the
 * checkpoint with gate/up interleaved along 2I, dequantized exactly and cut into
 * Mixtral-style w13 / w2 stacks; expert biases w13_bias (rows of w13) and w2_bias
 * (whole per expert); attention sinks by heads; router weight and bias replicated.
 * Hand-computed slices at TP 2 and TP 2 x EP 2 (both w13 orders) from an independent
 * MXFP4 reading, quantized layouts, coverage over several layouts and the refusals.
 * Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0008ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 256, H 8, KV 2, d 32, I 128 (the expert size), 4 experts, V 1003 */
#define GO_CFG(extra)                                                                              \
	"{\"architectures\":[\"GptOssForCausalLM\"],\"model_type\":\"gpt_oss\","                   \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"head_dim\":32,\"vocab_size\":1003,\"num_hidden_layers\":2,"                             \
	"\"num_experts_per_tok\":2,\"tie_word_embeddings\":false" extra "}"
#define GO_QC                                                                                      \
	",\"quantization_config\":{\"quant_method\":\"mxfp4\",\"modules_to_not_convert\":"         \
	"[\"model.layers.*.self_attn\",\"model.layers.*.mlp.router\",\"model.embed_tokens\","      \
	"\"lm_head\"]}"
#define GO_OK GO_CFG(",\"intermediate_size\":128,\"num_local_experts\":4" GO_QC)
/* saved dequantized: no quantization_config */
#define GO_DQ   GO_CFG(",\"intermediate_size\":128,\"num_local_experts\":4")
#define GO_L1   "model.layers.1."
#define GO_X    GO_L1 "mlp.experts."
#define GO_W13  GO_X "w13_weight"
#define GO_W2   GO_X "w2_weight"
#define GO_B13  GO_X "w13_bias"
#define GO_B2   GO_X "w2_bias"
#define GO_SINK GO_L1 "self_attn.sinks"

/* An MXFP4 weight [E, N, K] as X_blocks U8 [E, N, K/32, 16] + X_scales U8 [E, N, K/32]
 * with exponents 118..127 (scales 2^-9 .. 1). */
static void tm_mx(tm_model *m, const char *x, int64_t E, int64_t N, int64_t K)
{
	char b[200];
	snprintf(b, sizeof(b), "%s_blocks", x);
	tm_add(m, b, WT_U8, 3, E, N, K / 2);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[2] = K / 32;
	d->shape[3] = 16;
	snprintf(b, sizeof(b), "%s_scales", x);
	uint8_t *s = tm_add(m, b, WT_U8, 3, E, N, K / 32);
	for (int64_t k = 0; k < E * N * (K / 32); k++)
		s[k] = (uint8_t)(118 + s[k] % 10);
}

static tm_model *tm_gpt_oss(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1003, 256, 1);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, 256, 1, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.o_proj.bias");
		tm_add2(m, b, 256, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.sinks");
		tm_add2(m, b, 8, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.router.weight");
		tm_add2(m, b, 4, 256);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.router.bias");
		tm_add2(m, b, 4, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.experts.gate_up_proj");
		tm_mx(m, b, 4, 256, 256);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.experts.gate_up_proj_bias");
		tm_add2(m, b, 4, 256);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.experts.down_proj");
		tm_mx(m, b, 4, 256, 128);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.experts.down_proj_bias");
		tm_add2(m, b, 4, 256);
	}
	return m;
}

/* Element c of row `row` (of [E*N] rows, K columns) of MXFP4 blocks bl with scales sc,
 * from the format's definition: E2M1 sign bit 3, exponent bits 2..1 (bias 1), mantissa
 * bit 0; element 2b in the low nibble of byte b of its block; times 2^(scale - 127). */
static float mxv(const uint8_t *bl, const uint8_t *sc, int64_t row, int64_t c, int64_t K)
{
	uint8_t byte = bl[row * (K / 2) + c / 2];
	unsigned n = c % 2 ? byte >> 4 : byte & 15u, e = (n >> 1) & 3u;
	double v = e == 0 ? (n & 1u) * 0.5 : ldexp(1.0 + (n & 1u) / 2.0, (int)e - 1);
	return (float)ldexp((n & 8u) ? -v : v, sc[row * (K / 32) + c / 32] - 127);
}

/* The same model with the experts saved dequantized, as transformers saves GPT-OSS: BF16
 * gate_up_proj [E, hid, 2I] / down_proj [E, I, hid] (GptOssExperts' orientation, the
 * transpose of the blocks' [E, N, K]) holding the MXFP4 model's values. */
static tm_model *tm_gpt_oss_bf16(void)
{
	tm_model *q = tm_gpt_oss(), *m = tm_new(SEED, WT_BF16);
	for (size_t i = 0; i < q->n; i++) {
		const st_desc *d = &q->d[i];
		size_t nl = strlen(d->name);
		char b[200];
		if (nl > 7 && strcmp(d->name + nl - 7, "_scales") == 0)
			continue;
		if (nl > 7 && strcmp(d->name + nl - 7, "_blocks") == 0) {
			int64_t E = d->shape[0], N = d->shape[1], K = d->shape[2] * 32;
			snprintf(b, sizeof(b), "%.*s_scales", (int)(nl - 7), d->name);
			const uint8_t *bl = q->data[i], *sc = q->data[tm_find(q, b)];
			snprintf(b, sizeof(b), "%.*s", (int)(nl - 7), d->name);
			uint16_t *o = tm_add(m, b, WT_BF16, 3, E, K, N);
			for (int64_t e = 0; e < E; e++)
				for (int64_t n = 0; n < N; n++)
					for (int64_t k = 0; k < K; k++)
						o[(e * K + k) * N + n] =
						    kern_f32_to_bf16(mxv(bl, sc, e * N + n, k, K));
			continue;
		}
		size_t nb = wt_dtype_size(d->dtype);
		for (int k = 0; k < d->ndim; k++)
			nb *= (size_t)d->shape[k];
		memcpy(tm_add(m, d->name, d->dtype, d->ndim, d->shape[0], d->shape[1], d->shape[2]),
		       q->data[i], nb);
	}
	tm_free(q);
	return m;
}

static const uint8_t *src(const fx *f, const char *name)
{
	int k = tm_find(f->m, name);
	assert_true(k >= 0);
	return f->m->data[k];
}

/* Element c of row `row` of MXFP4 weight x of layer 1 (rows [E*N], K columns). */
static float mx_at(const fx *f, const char *x, int64_t row, int64_t c, int64_t K)
{
	char b[200], sb[200];
	snprintf(b, sizeof(b), GO_X "%s_blocks", x);
	snprintf(sb, sizeof(sb), GO_X "%s_scales", x);
	return mxv(src(f, b), src(f, sb), row, c, K);
}

/* Output BF16 row `orow` of tensor name on rank r equals source row srow of x (columns
 * [c0, c0 + n)). */
static void row_is(const fx *f, uint32_t r, const char *name, int64_t orow, const char *x,
                   int64_t srow, int64_t c0, int64_t n, int64_t K)
{
	const uint16_t *o = (const uint16_t *)out_bytes(f, r, name) + orow * n;
	for (int64_t c = 0; c < n; c++)
		if (o[c] != kern_f32_to_bf16(mx_at(f, x, srow, c0 + c, K)))
			fail_msg("rank %u '%s' row %lld col %lld: 0x%04x, want source %s row %lld "
			         "col %lld",
			         r, name, (long long)orow, (long long)c, o[c], x, (long long)srow,
			         (long long)(c0 + c));
}

/* BF16 entries [a, a+n) of output (from entry o0) equal source entries of bias leaf */
static void bias_is(const fx *f, uint32_t r, const char *name, int64_t o0, const char *leaf,
                    int64_t s0, int64_t step, int64_t n)
{
	const uint16_t *o = (const uint16_t *)out_bytes(f, r, name) + o0;
	char b[200];
	snprintf(b, sizeof(b), GO_X "%s", leaf);
	const uint16_t *s = (const uint16_t *)src(f, b);
	for (int64_t k = 0; k < n; k++)
		if (o[k] != s[s0 + k * step])
			fail_msg("rank %u '%s' entry %lld", r, name, (long long)(o0 + k));
}

/* w13 slot `slot` (expert j) of rank r: Il rows of gate from k0 then of up (up first with
 * up_gate): gate k is interleaved row 2k, up k row 2k+1. Bias alike. */
static void w13_is(const fx *f, uint32_t r, int64_t slot, int64_t j, int64_t k0, int64_t Il,
                   bool up_gate)
{
	for (int half = 0; half < 2; half++) {
		int64_t odd = up_gate ? 1 - half : half;
		for (int64_t k = 0; k < Il; k++)
			row_is(f, r, GO_W13, slot * 2 * Il + half * Il + k, "gate_up_proj",
			       j * 256 + 2 * (k0 + k) + odd, 0, 256, 256);
		bias_is(f, r, GO_B13, slot * 2 * Il + half * Il, "gate_up_proj_bias",
		        j * 256 + 2 * k0 + odd, 2, Il);
	}
}

static void test_gpt_oss_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_gpt_oss(), GO_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "gpt_oss");
	/* rank 1: every expert, intermediate rows [64, 128) of each */
	shp(&f, 1, GO_W13, 3, 4, 128, 256);
	shp(&f, 1, GO_W2, 3, 4, 256, 64);
	shp(&f, 1, GO_B13, 2, 4, 128, 0);
	shp(&f, 1, GO_B2, 2, 4, 256, 0);
	assert_int_equal(info(&f, 1, GO_W13)->dtype, WT_BF16); /* dtype source: BF16 */
	for (int64_t j = 0; j < 4; j++) {
		w13_is(&f, 1, j, j, 64, 64, false);
		for (int64_t row = 0; row < 256; row += 51)
			row_is(&f, 1, GO_W2, j * 256 + row, "down_proj", j * 256 + row, 64, 64,
			       128);
	}
	w13_is(&f, 0, 2, 2, 0, 64, false);
	/* w2_bias whole, sinks by heads (rank 1: heads 4..7), router replicated */
	for (uint32_t r = 0; r < 2; r++) {
		assert_memory_equal(out_bytes(&f, r, GO_B2), src(&f, GO_X "down_proj_bias"),
		                    4 * 256 * 2);
		assert_memory_equal(out_bytes(&f, r, GO_SINK), src(&f, GO_SINK) + r * 8, 8);
		shp(&f, r, GO_SINK, 1, 4, 0, 0);
		assert_memory_equal(out_bytes(&f, r, GO_L1 "mlp.router.bias"),
		                    src(&f, GO_L1 "mlp.router.bias"), 8);
		assert_memory_equal(out_bytes(&f, r, GO_L1 "mlp.router.weight"),
		                    src(&f, GO_L1 "mlp.router.weight"), 4 * 256 * 2);
	}
	assert_true(tm_ix(f.p, 0, GO_X "gate_up_proj_scales") < 0);
	fx_close(&f);
}

static void test_gpt_oss_ep(void **state)
{
	(void)state;
	for (int ug = 0; ug < 2; ug++) {
		fx f;
		/* TP 2 x EP 2: ep rank 1 (ranks 2, 3) holds experts 2, 3 whole */
		fx_open(&f, tm_gpt_oss(), GO_OK, 2, 2, ug, true);
		shp(&f, 3, GO_W13, 3, 2, 256, 256);
		shp(&f, 2, GO_W2, 3, 2, 256, 128);
		shp(&f, 3, GO_B2, 2, 2, 256, 0);
		for (int64_t s = 0; s < 2; s++) {
			w13_is(&f, 3, s, 2 + s, 0, 128, ug);
			row_is(&f, 2, GO_W2, s * 256 + 7, "down_proj", (2 + s) * 256 + 7, 0, 128,
			       128);
		}
		w13_is(&f, 0, 1, 1, 0, 128, ug);
		for (uint32_t r = 2; r < 4; r++)
			assert_memory_equal(out_bytes(&f, r, GO_B2),
			                    src(&f, GO_X "down_proj_bias") + 2 * 256 * 2,
			                    2 * 256 * 2);
		assert_memory_equal(out_bytes(&f, 3, GO_SINK), src(&f, GO_SINK) + 8, 8);
		fx_close(&f);
	}
}

/* Quantized layouts quantize the dequantized experts but not attention (the released
 * modules_to_not_convert names model.layers.*.self_attn, whose whole subtree stays as
 * the source keeps it), the router, the biases or the sinks; an exclusion names the
 * experts' module without "_blocks". */
static void test_gpt_oss_quant(void **state)
{
	(void)state;
	static const wt_quant qs[] = {WT_QUANT_INT8_CHANNEL, WT_QUANT_FP8_CHANNEL,
	                              WT_QUANT_FP8_TENSOR};
	static const char *const keep[] = {GO_B13, GO_B2, GO_SINK, GO_L1 "mlp.router.weight",
	                                   GO_L1 "mlp.router.bias"};
	for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
		fx f;
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = 2;
		l.quant = qs[k];
		fx_open_l(&f, tm_gpt_oss(), GO_OK, &l, true);
		wt_dtype qd = qs[k] == WT_QUANT_INT8_CHANNEL ? WT_I8 : WT_F8_E4M3;
		assert_int_equal(info(&f, 1, GO_W13)->dtype, qd);
		assert_int_equal(info(&f, 1, GO_W2)->dtype, qd);
		assert_int_equal(info(&f, 1, GO_L1 "self_attn.qkv_proj.weight")->dtype, WT_BF16);
		assert_int_equal(info(&f, 1, GO_L1 "self_attn.o_proj.weight")->dtype, WT_BF16);
		for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
			char sc[200];
			snprintf(sc, sizeof(sc), "%s_scale", keep[i]);
			assert_int_equal(info(&f, 1, keep[i])->dtype, WT_BF16);
			assert_true(tm_ix(f.p, 1, sc) < 0);
		}
		bias_is(&f, 1, GO_B13, 0, "gate_up_proj_bias", 2 * 64, 2, 64);
		if (qs[k] == WT_QUANT_INT8_CHANNEL) { /* row 5 of slot 3: code * scale ~ value */
			const int8_t *q =
			    (const int8_t *)out_bytes(&f, 1, GO_W13) + (3 * 128 + 5) * 256;
			float s = ((const float *)out_bytes(&f, 1, GO_W13 "_scale"))[3 * 128 + 5];
			for (int64_t c = 0; c < 256; c++)
				assert_true(fabsf(q[c] * s - mx_at(&f, "gate_up_proj",
				                                   3 * 256 + 2 * (64 + 5), c,
				                                   256)) <= s * 0.5f + 1e-6f);
		}
		fx_close(&f);
	}
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	assert_int_equal(
	    wt_layout_add_exclude(&l, "model.layers.{i}.mlp.experts.gate_up_proj", NULL), WT_OK);
	fx_open_l(&f, tm_gpt_oss(), GO_OK, &l, true);
	assert_int_equal(info(&f, 1, GO_W13)->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, GO_W2)->dtype, WT_I8);
	w13_is(&f, 1, 0, 0, 64, 64, false);
	fx_close(&f);
	wt_layout_clear(&l);
}

/* The dequantized form gives the MXFP4 form's shards byte for byte: every tensor of
 * every rank, both w13 orders, EP, and a quantized layout. */
static void test_gpt_oss_bf16_form(void **state)
{
	(void)state;
	static const struct {
		uint32_t T, P;
		int ug;
		wt_quant q;
	} lays[] = {{2, 1, 0, WT_QUANT_NONE},
	            {2, 2, 1, WT_QUANT_NONE},
	            {4, 1, 0, WT_QUANT_INT8_CHANNEL},
	            {1, 4, 0, WT_QUANT_FP8_BLOCK}};
	for (size_t k = 0; k < sizeof(lays) / sizeof(lays[0]); k++) {
		fx a, b;
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[k].T;
		l.ep_size = lays[k].P;
		l.w13_up_gate = lays[k].ug;
		l.quant = lays[k].q;
		/* the MXFP4 form's modules_to_not_convert keeps attention unquantized; the
		 * dequantized form has no quantization_config, so the layout says it */
		if (l.quant != WT_QUANT_NONE)
			assert_int_equal(
			    wt_layout_add_exclude(&l, "model.layers.{i}.self_attn.", NULL), WT_OK);
		fx_open_l(&a, tm_gpt_oss(), GO_OK, &l, true);
		fx_open_l(&b, tm_gpt_oss_bf16(), GO_DQ, &l, true);
		for (uint32_t r = 0; r < shardmap_n_ranks(a.p); r++) {
			size_t n = shardmap_rank_n_tensors(a.p, r);
			assert_int_equal(shardmap_rank_n_tensors(b.p, r), n);
			for (size_t i = 0; i < n; i++) {
				const sm_out_info *t = shardmap_rank_tensor(a.p, r, i);
				const sm_out_info *u = info(&b, r, t->name);
				assert_int_equal(u->dtype, t->dtype);
				assert_int_equal(u->nbytes, t->nbytes);
				if (memcmp(out_bytes(&a, r, t->name), out_bytes(&b, r, t->name),
				           t->nbytes) != 0)
					fail_msg("rank %u '%s' differs between the two forms", r,
					         t->name);
			}
		}
		fx_close(&a);
		fx_close(&b);
		wt_layout_clear(&l);
	}
	static const uint32_t cov[][2] = {{1, 1}, {2, 1}, {8, 1}, {2, 2}, {1, 4}};
	coverage(tm_gpt_oss_bf16(), GO_DQ, 2, cov, sizeof(cov) / sizeof(cov[0]));
}

static void test_gpt_oss_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2},
	                                   {2, 2}, {1, 4}, {4, 2}, {2, 4}};
	coverage(tm_gpt_oss(), GO_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
}

static void go_refused(tm_model *m, const char *cfg, int code, const char *a, const char *b)
{
	wt_errbuf err = {0};
	assert_int_equal(plan_err(m, cfg, &err), code);
	printf("refused: %s\n", err.msg);
	assert_non_null(strstr(err.msg, a));
	assert_non_null(strstr(err.msg, b));
}

static void test_gpt_oss_errors(void **state)
{
	(void)state;
	/* scales that disagree with their blocks */
	tm_model *m = tm_gpt_oss();
	tm_remove(m, GO_X "down_proj_scales");
	tm_add(m, GO_X "down_proj_scales", WT_U8, 3, 4, 256, 3);
	go_refused(m, GO_OK, WT_ESHAPE, GO_X "down_proj_scales", "blocks' shape");
	/* blocks without scales */
	m = tm_gpt_oss();
	tm_remove(m, GO_X "gate_up_proj_scales");
	go_refused(m, GO_OK, WT_ENOTFOUND, GO_X "gate_up_proj_blocks", "scales");
	/* a row width that is not whole 32-element blocks */
	go_refused(tm_gpt_oss(), GO_CFG(",\"intermediate_size\":120,\"num_local_experts\":4" GO_QC),
	           WT_ECORRUPT, "intermediate_size 120", "multiple of 32");
	/* every layer is MoE: no expert count is refused */
	go_refused(tm_gpt_oss(), GO_CFG(",\"intermediate_size\":128" GO_QC), WT_ECORRUPT,
	           "num_local_experts", "GptOssForCausalLM");
	/* MXFP4 blocks under a config without quant_method mxfp4 */
	go_refused(tm_gpt_oss(), GO_DQ, WT_EUNSUPPORTED, "_blocks", "mxfp4");
	/* and the dequantized form's stacks under quant_method mxfp4 */
	go_refused(tm_gpt_oss_bf16(), GO_OK, WT_EUNSUPPORTED, "experts.down_proj'", "_blocks");
	/* an E8M0 scale of 255 (NaN) fails production, naming the scales and the element */
	m = tm_gpt_oss();
	((uint8_t *)m->data[tm_find(m, GO_X "down_proj_scales")])[77] = 255;
	fx f = {.dir = tu_mkdtemp("smfam"), .m = m};
	assert_int_equal(tm_write(m, f.dir, GO_OK), 0);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	wt_errbuf err = {0};
	int rv = tm_plan(f.dir, &l, &f.s, &f.c, &f.p, &err); /* with the digests: to produce */
	assert_int_equal(rv, WT_OK);
	f.pr = tm_produce(f.c, f.p, -1, &rv, &err);
	printf("refused: %s\n", err.msg);
	assert_int_equal(rv, WT_ECORRUPT);
	assert_non_null(strstr(err.msg, GO_X "down_proj_scales"));
	assert_non_null(strstr(err.msg, "255 (NaN) at element 77"));
	fx_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gpt_oss_tp2),    cmocka_unit_test(test_gpt_oss_ep),
	    cmocka_unit_test(test_gpt_oss_quant),  cmocka_unit_test(test_gpt_oss_coverage),
	    cmocka_unit_test(test_gpt_oss_errors), cmocka_unit_test(test_gpt_oss_bf16_form),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
