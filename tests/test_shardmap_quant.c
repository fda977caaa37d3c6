/*
 * test_shardmap_quant.c — quantized outputs (docs/format.md section 4): scale
 * names and shapes for dense, fused and expert tensors, bytes equal to the
 * kernels applied to slices computed here from the source, FP8-block
 * pass-through, requant=allow, per-tensor merges, dequantizing targets, NaN.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_shardmap_util.h"

typedef struct qfx {
	char *dir;
	tm_model *m;
	store *s;
	ckpt *c;
	sm_plan *p;
	tm_prod *pr;
} qfx;

static int qopen(qfx *f, tm_model *m, const char *cfg, const wt_layout *l, wt_errbuf *err)
{
	memset(f, 0, sizeof(*f));
	f->dir = tu_mkdtemp("smq");
	f->m = m;
	assert_int_equal(tm_write(m, f->dir, cfg), 0);
	int rv = tm_plan(f->dir, l, &f->s, &f->c, &f->p, err);
	if (rv == WT_OK)
		f->pr = tm_produce(f->c, f->p, -1, &rv, err);
	return rv;
}

static void qclose(qfx *f)
{
	tm_prod_free(f->pr);
	tm_close(f->s, f->c, f->p);
	tm_free(f->m);
	tu_rmrf(f->dir);
	free(f->dir);
}

static const sm_out_info *qinfo(const qfx *f, uint32_t r, const char *name)
{
	int ix = tm_ix(f->p, r, name);
	if (ix < 0)
		fail_msg("rank %u: no '%s'", r, name);
	return shardmap_rank_tensor(f->p, r, (size_t)ix);
}

static const void *qbytes(const qfx *f, uint32_t r, const char *name)
{
	return f->pr->b[r][tm_ix(f->p, r, name)];
}

static void qshape(const sm_out_info *t, wt_dtype dt, int nd, int64_t a, int64_t b, int64_t c)
{
	int64_t w[3] = {a, b, c};
	if (t->dtype != dt || t->ndim != nd)
		fail_msg("'%s': %s/%d, want %s/%d", t->name, wt_dtype_name(t->dtype), t->ndim,
		         wt_dtype_name(dt), nd);
	for (int k = 0; k < nd; k++)
		if (t->shape[k] != w[k])
			fail_msg("'%s' dim %d: %lld != %lld", t->name, k, (long long)t->shape[k],
			         (long long)w[k]);
}

static const uint8_t *srow(const tm_model *m, const char *name, int64_t row, size_t *rowb)
{
	int k = tm_find(m, name);
	assert_true(k >= 0);
	*rowb = (size_t)m->d[k].shape[1] * wt_dtype_size(m->d[k].dtype);
	return (const uint8_t *)m->data[k] + (size_t)row * *rowb;
}

static void lay(wt_layout *l, uint32_t tp, uint32_t ep, wt_quant q)
{
	wt_layout_init(l);
	l->tp_size = tp;
	l->ep_size = ep;
	l->quant = q;
}

/* Quantize buf [N,K] (BF16) with scheme q and compare with the produced weight and scale. */
static void same_as_kernel(wt_quant q, const void *x, int64_t N, int64_t K, const void *w,
                           const void *s)
{
	int64_t qb = kern_qbytes(q, N, K), sn = kern_scale_count(q, N, K, 128);
	uint8_t *wq = malloc((size_t)qb);
	float *sc = malloc((size_t)sn * 4);
	assert_int_equal(kern_quantize(q, x, WT_BF16, N, K, 128, wq, sc, NULL), WT_OK);
	assert_memory_equal(w, wq, (size_t)qb);
	assert_memory_equal(s, sc, (size_t)sn * 4);
	free(wq);
	free(sc);
}

static void test_dense_schemes(void **state)
{
	(void)state;
	printf("seed 0x5eed0010\n");
	static const struct {
		wt_quant q;
		wt_dtype wd;
		int64_t wk, sn, s0, s1, os0, os1;
	} cs[] = {
	    {WT_QUANT_FP8_TENSOR, WT_F8_E4M3, 256, 1, 1, 0, 1, 0},
	    {WT_QUANT_FP8_CHANNEL, WT_F8_E4M3, 256, 2, 192, 1, 256, 1},
	    {WT_QUANT_FP8_BLOCK, WT_F8_E4M3, 256, 2, 2, 2, 2, 1},
	    {WT_QUANT_INT8_CHANNEL, WT_I8, 256, 2, 192, 1, 256, 1},
	    {WT_QUANT_INT4_GROUP, WT_I32, 32, 2, 192, 2, 256, 1},
	};
	for (size_t k = 0; k < sizeof(cs) / sizeof(cs[0]); k++) {
		wt_layout l;
		lay(&l, 2, 1, cs[k].q);
		qfx f;
		wt_errbuf err = {0};
		int rv = qopen(&f, tm_llama(0x5eed0010ull, WT_BF16), tm_llama_cfg, &l, &err);
		if (rv)
			fail_msg("%s: %s", wt_quant_name(cs[k].q), err.msg);
		const char *qkv = "model.layers.0.self_attn.qkv_proj.weight";
		qshape(qinfo(&f, 1, qkv), cs[k].wd, 2, 192, cs[k].wk, 0);
		const sm_out_info *s =
		    qinfo(&f, 1, "model.layers.0.self_attn.qkv_proj.weight_scale");
		qshape(s, WT_F32, (int)cs[k].sn, cs[k].s0, cs[k].s1, 0);
		assert_int_equal(s->role, SM_ROLE_SCALE);
		s = qinfo(&f, 1, "model.layers.0.self_attn.o_proj.weight_scale");
		qshape(s, WT_F32, (int)cs[k].sn, cs[k].os0, cs[k].os1, 0);
		/* unquantized: embeddings, LM head, norms */
		qshape(qinfo(&f, 1, "model.embed_tokens.weight"), WT_BF16, 2, 512, 256, 0);
		qshape(qinfo(&f, 1, "lm_head.weight"), WT_BF16, 2, 512, 256, 0);
		qshape(qinfo(&f, 1, "model.norm.weight"), WT_BF16, 1, 256, 0, 0);
		assert_int_equal(tm_ix(f.p, 1, "lm_head.weight_scale"), -1);
		/* bytes: rank 1 qkv = [q rows 128..255 ; k rows 32..63 ; v rows 32..63] */
		size_t rb = 0;
		uint8_t *x = malloc(192 * 512);
		const uint8_t *q0 = srow(f.m, "model.layers.0.self_attn.q_proj.weight", 128, &rb);
		memcpy(x, q0, 128 * rb);
		memcpy(x + 128 * rb, srow(f.m, "model.layers.0.self_attn.k_proj.weight", 32, &rb),
		       32 * rb);
		memcpy(x + 160 * rb, srow(f.m, "model.layers.0.self_attn.v_proj.weight", 32, &rb),
		       32 * rb);
		same_as_kernel(cs[k].q, x, 192, 256, qbytes(&f, 1, qkv),
		               qbytes(&f, 1, "model.layers.0.self_attn.qkv_proj.weight_scale"));
		free(x);
		qclose(&f);
	}
}

static void test_expert_schemes(void **state)
{
	(void)state;
	printf("seed 0x5eed0011\n");
	static const struct {
		wt_quant q;
		int nd;
		int64_t s1, s2, w2s1, w2s2;
	} cs[] = {
	    {WT_QUANT_FP8_TENSOR, 2, 1, 0, 1, 0},     {WT_QUANT_FP8_CHANNEL, 3, 256, 1, 256, 1},
	    {WT_QUANT_FP8_BLOCK, 3, 2, 2, 2, 1},      {WT_QUANT_INT8_CHANNEL, 3, 256, 1, 256, 1},
	    {WT_QUANT_INT4_GROUP, 3, 256, 2, 256, 1},
	};
	for (size_t k = 0; k < sizeof(cs) / sizeof(cs[0]); k++) {
		wt_layout l;
		lay(&l, 2, 1, cs[k].q);
		qfx f;
		wt_errbuf err = {0};
		int rv = qopen(&f, tm_mixtral(0x5eed0011ull), tm_mixtral_cfg, &l, &err);
		if (rv)
			fail_msg("%s: %s", wt_quant_name(cs[k].q), err.msg);
		const char *w13 = "model.layers.1.block_sparse_moe.experts.w13_weight";
		const sm_out_info *s =
		    qinfo(&f, 0, "model.layers.1.block_sparse_moe.experts.w13_weight_scale");
		qshape(s, WT_F32, cs[k].nd, 6, cs[k].s1, cs[k].s2);
		s = qinfo(&f, 0, "model.layers.1.block_sparse_moe.experts.w2_weight_scale");
		qshape(s, WT_F32, cs[k].nd, 6, cs[k].w2s1, cs[k].w2s2);
		assert_int_equal(qinfo(&f, 0, "model.layers.1.block_sparse_moe.gate.weight")->dtype,
		                 WT_BF16);
		/* expert 3, rank 0, quantized alone: [w1 rows 0..127 ; w3 rows 0..127] */
		size_t rb = 0;
		uint8_t *x = malloc(256 * 512);
		const uint8_t *g0 =
		    srow(f.m, "model.layers.1.block_sparse_moe.experts.3.w1.weight", 0, &rb);
		memcpy(x, g0, 128 * rb);
		memcpy(x + 128 * rb,
		       srow(f.m, "model.layers.1.block_sparse_moe.experts.3.w3.weight", 0, &rb),
		       128 * rb);
		int64_t qb = kern_qbytes(cs[k].q, 256, 256),
		        sn = kern_scale_count(cs[k].q, 256, 256, 128);
		same_as_kernel(
		    cs[k].q, x, 256, 256, (const uint8_t *)qbytes(&f, 0, w13) + 3 * qb,
		    (const float *)qbytes(
		        &f, 0, "model.layers.1.block_sparse_moe.experts.w13_weight_scale") +
		        3 * sn);
		free(x);
		qclose(&f);
	}
}

static void test_fp8_block_passthrough(void **state)
{
	(void)state;
	printf("seed 0x5eed0012\n");
	char cfg[1024];
	wt_layout l;
	lay(&l, 2, 1, WT_QUANT_FP8_BLOCK);
	qfx f;
	wt_errbuf err = {0};
	int rv = qopen(&f, tm_deepseek(0x5eed0012ull, 1, cfg, sizeof(cfg)), cfg, &l, &err);
	if (rv)
		fail_msg("%s", err.msg);
	size_t rb, sb;
	/* q_b_proj [512,128] rank 1 rows 256..511; scales rows 2..3 of [4,1] */
	const char *qb = "model.layers.1.self_attn.q_b_proj.weight";
	qshape(qinfo(&f, 1, qb), WT_F8_E4M3, 2, 256, 128, 0);
	assert_false(qinfo(&f, 1, qb)->requantized);
	assert_memory_equal(qbytes(&f, 1, qb), srow(f.m, qb, 256, &rb), 256 * 128);
	qshape(qinfo(&f, 1, "model.layers.1.self_attn.q_b_proj.weight_scale"), WT_F32, 2, 2, 1, 0);
	const uint8_t *want =
	    srow(f.m, "model.layers.1.self_attn.q_b_proj.weight_scale_inv", 2, &sb);
	assert_memory_equal(qbytes(&f, 1, "model.layers.1.self_attn.q_b_proj.weight_scale"), want,
	                    2 * sb);
	/* o_proj [256,256] rank 1 columns 128..255; scale column 1 of [2,2] */
	const char *o = "model.layers.0.self_attn.o_proj.weight";
	const uint8_t *ob = qbytes(&f, 1, o);
	for (int r = 0; r < 256; r++)
		assert_memory_equal(ob + r * 128, srow(f.m, o, r, &rb) + 128, 128);
	const float *os = qbytes(&f, 1, "model.layers.0.self_attn.o_proj.weight_scale");
	const float *src =
	    (const float *)srow(f.m, "model.layers.0.self_attn.o_proj.weight_scale_inv", 0, &sb);
	assert_memory_equal(&os[0], &src[1], 4);
	assert_memory_equal(&os[1], &src[3], 4);
	/* experts (P=1, T=2, Il 128): scale [4, 2, 2] = per expert [gate row 0 ; up row 0] on rank
	 * 0 */
	const char *ws = "model.layers.1.mlp.experts.w13_weight_scale";
	qshape(qinfo(&f, 0, ws), WT_F32, 3, 4, 2, 2);
	const float *es = qbytes(&f, 0, ws);
	want = srow(f.m, "model.layers.1.mlp.experts.2.gate_proj.weight_scale_inv", 0, &sb);
	assert_memory_equal(es + 2 * 4, want, 8);
	want = srow(f.m, "model.layers.1.mlp.experts.2.up_proj.weight_scale_inv", 0, &sb);
	assert_memory_equal(es + 2 * 4 + 2, want, 8);
	/* replicated kv_a_proj_with_mqa passes whole */
	const char *kva = "model.layers.1.self_attn.kv_a_proj_with_mqa.weight";
	assert_memory_equal(qbytes(&f, 1, kva), srow(f.m, kva, 0, &rb), 96 * 256);
	/* norms / router / embeddings stay BF16 */
	assert_int_equal(qinfo(&f, 1, "model.layers.1.mlp.gate.weight")->dtype, WT_BF16);
	qclose(&f);
}

/* Dequantized reference of a block-FP8 source tensor into BF16. */
static uint16_t *deq(const tm_model *m, const char *w, int64_t N, int64_t K)
{
	char sn[200];
	snprintf(sn, sizeof(sn), "%s_scale_inv", w);
	size_t rb;
	uint16_t *out = malloc((size_t)(N * K) * 2);
	assert_int_equal(kern_dequant_fp8_block(out, WT_BF16, srow(m, w, 0, &rb), N, K,
	                                        (const float *)srow(m, sn, 0, &rb), 128, 128),
	                 WT_OK);
	return out;
}

static void test_fp8_block_to_none_and_requant(void **state)
{
	(void)state;
	printf("seed 0x5eed0013\n");
	char cfg[1024];
	wt_layout l;
	lay(&l, 2, 1, WT_QUANT_NONE);
	qfx f;
	wt_errbuf err = {0};
	int rv = qopen(&f, tm_deepseek(0x5eed0013ull, 1, cfg, sizeof(cfg)), cfg, &l, &err);
	if (rv)
		fail_msg("%s", err.msg);
	const char *qb = "model.layers.1.self_attn.q_b_proj.weight";
	qshape(qinfo(&f, 1, qb), WT_BF16, 2, 256, 128, 0);
	assert_int_equal(tm_ix(f.p, 1, "model.layers.1.self_attn.q_b_proj.weight_scale"), -1);
	uint16_t *ref = deq(f.m, qb, 512, 128);
	assert_memory_equal(qbytes(&f, 1, qb), ref + 256 * 128, 256 * 128 * 2);
	free(ref);
	qclose(&f);

	/* T=4 fp8-block with --requant allow: o_proj columns 64 per rank are requantized */
	lay(&l, 4, 1, WT_QUANT_FP8_BLOCK);
	l.requant_allow = 1;
	rv = qopen(&f, tm_deepseek(0x5eed0013ull, 1, cfg, sizeof(cfg)), cfg, &l, &err);
	if (rv)
		fail_msg("%s", err.msg);
	const char *o = "model.layers.1.self_attn.o_proj.weight";
	assert_true(qinfo(&f, 2, o)->requantized);
	assert_true(qinfo(&f, 2, "model.layers.1.self_attn.o_proj.weight_scale")->requantized);
	qshape(qinfo(&f, 2, "model.layers.1.self_attn.o_proj.weight_scale"), WT_F32, 2, 2, 1, 0);
	assert_false(qinfo(&f, 2, "model.layers.1.self_attn.q_b_proj.weight")->requantized);
	/* reference: dequantize to F32, take columns 128..191, fp8-block quantize */
	size_t rb;
	float *full = malloc(256 * 256 * 4), *x = malloc(256 * 64 * 4);
	char sn[200];
	snprintf(sn, sizeof(sn), "%s_scale_inv", o);
	assert_int_equal(kern_dequant_fp8_block(full, WT_F32, srow(f.m, o, 0, &rb), 256, 256,
	                                        (const float *)srow(f.m, sn, 0, &rb), 128, 128),
	                 WT_OK);
	for (int r = 0; r < 256; r++)
		memcpy(x + r * 64, full + r * 256 + 128, 64 * 4);
	uint8_t q[256 * 64];
	float s[2];
	assert_int_equal(kern_quantize(WT_QUANT_FP8_BLOCK, x, WT_F32, 256, 64, 128, q, s, NULL),
	                 WT_OK);
	assert_memory_equal(qbytes(&f, 2, o), q, sizeof(q));
	assert_memory_equal(qbytes(&f, 2, "model.layers.1.self_attn.o_proj.weight_scale"), s, 8);
	free(full);
	free(x);
	qclose(&f);
}

static float scalar_of(const tm_model *m, const char *name)
{
	int k = tm_find(m, name);
	assert_true(k >= 0);
	float v;
	memcpy(&v, m->data[k], 4);
	return v;
}

static void test_fp8_tensor_merge(void **state)
{
	(void)state;
	printf("seed 0x5eed0014\n");
	wt_layout l;
	lay(&l, 2, 1, WT_QUANT_FP8_TENSOR);
	qfx f;
	wt_errbuf err = {0};
	int rv = qopen(&f, tm_llama_fp8(0x5eed0014ull), tm_llama_fp8_cfg, &l, &err);
	if (rv)
		fail_msg("%s", err.msg);
	const char *pre = "model.layers.1.self_attn.";
	const char *parts[3] = {"q_proj", "k_proj", "v_proj"};
	int64_t rows[3] = {128, 32, 32}, start[3] = {128, 32, 32};
	float sw[3], si[3], mw = 0, mi = 0;
	char b[200];
	for (int k = 0; k < 3; k++) {
		snprintf(b, sizeof(b), "%s%s.weight_scale", pre, parts[k]);
		sw[k] = scalar_of(f.m, b);
		snprintf(b, sizeof(b), "%s%s.input_scale", pre, parts[k]);
		si[k] = scalar_of(f.m, b);
		mw = sw[k] > mw ? sw[k] : mw;
		mi = si[k] > mi ? si[k] : mi;
	}
	assert_true(sw[0] != sw[1] || sw[1] != sw[2]); /* parts differ in this fixture */
	const float *s = qbytes(&f, 1, "model.layers.1.self_attn.qkv_proj.weight_scale");
	qshape(qinfo(&f, 1, "model.layers.1.self_attn.qkv_proj.weight_scale"), WT_F32, 1, 1, 0, 0);
	assert_memory_equal(s, &mw, 4);
	const sm_out_info *is = qinfo(&f, 1, "model.layers.1.self_attn.qkv_proj.input_scale");
	assert_int_equal(is->role, SM_ROLE_INPUT_SCALE);
	qshape(is, WT_F32, 1, 1, 0, 0);
	assert_memory_equal(qbytes(&f, 1, "model.layers.1.self_attn.qkv_proj.input_scale"), &mi, 4);
	const uint8_t *w = qbytes(&f, 1, "model.layers.1.self_attn.qkv_proj.weight");
	for (int k = 0; k < 3; k++) {
		size_t rb = 0;
		snprintf(b, sizeof(b), "%s%s.weight", pre, parts[k]);
		uint8_t *ref = malloc((size_t)rows[k] * 256);
		memcpy(ref, srow(f.m, b, start[k], &rb), (size_t)rows[k] * 256);
		if (sw[k] != mw)
			kern_fp8_rescale(ref, (size_t)rows[k] * 256, sw[k] / mw);
		assert_memory_equal(w, ref, (size_t)rows[k] * 256);
		w += rows[k] * 256;
		free(ref);
	}
	/* unfused o_proj keeps its own scale and input scale */
	snprintf(b, sizeof(b), "%so_proj.weight_scale", pre);
	float so = scalar_of(f.m, b);
	assert_memory_equal(qbytes(&f, 0, b), &so, 4);
	assert_true(tm_ix(f.p, 0, "model.layers.1.self_attn.o_proj.input_scale") >= 0);
	assert_true(tm_ix(f.p, 0, "model.layers.0.mlp.gate_up_proj.input_scale") >= 0);
	qclose(&f);

	/* other targets: dequantize, requantize; no input_scale */
	lay(&l, 1, 1, WT_QUANT_FP8_CHANNEL);
	rv = qopen(&f, tm_llama_fp8(0x5eed0014ull), tm_llama_fp8_cfg, &l, &err);
	if (rv)
		fail_msg("%s", err.msg);
	assert_int_equal(tm_ix(f.p, 0, "model.layers.1.self_attn.qkv_proj.input_scale"), -1);
	qshape(qinfo(&f, 0, "model.layers.1.self_attn.qkv_proj.weight_scale"), WT_F32, 2, 384, 1,
	       0);
	bool found = false;
	for (size_t k = 0; k < shardmap_n_skipped(f.p); k++)
		found |= strcmp(shardmap_skipped(f.p, k),
		                "model.layers.1.self_attn.q_proj.input_scale") == 0;
	assert_true(found);
	qclose(&f);
}

/* Phi-3 pre-quantized per tensor (one weight_scale / input_scale for the fused
 * qkv_proj and gate_up_proj): the rank's rows pass through with the source's
 * scales under fp8-tensor; fp8-channel dequantizes and requantizes. */
static const char phi3_fp8_cfg[] =
    "{\"architectures\":[\"Phi3ForCausalLM\"],\"model_type\":\"phi3\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":512,"
    "\"vocab_size\":1000,\"num_hidden_layers\":2,\"tie_word_embeddings\":false,"
    "\"quantization_config\":{\"quant_method\":\"fp8\",\"activation_scheme\":\"static\"}}";

static void test_fp8_tensor_fused_source(void **state)
{
	(void)state;
	printf("seed 0x5eed0017\n");
	wt_layout l;
	lay(&l, 4, 1, WT_QUANT_FP8_TENSOR);
	qfx f;
	wt_errbuf err = {0};
	int rv = qopen(&f, tm_phi3(0x5eed0017ull, 2), phi3_fp8_cfg, &l, &err);
	if (rv)
		fail_msg("%s", err.msg);
	const char *qkv = "model.layers.0.self_attn.qkv_proj.weight";
	float sw = scalar_of(f.m, "model.layers.0.self_attn.qkv_proj.weight_scale");
	float si = scalar_of(f.m, "model.layers.0.self_attn.qkv_proj.input_scale");
	assert_memory_equal(qbytes(&f, 3, "model.layers.0.self_attn.qkv_proj.weight_scale"), &sw,
	                    4);
	assert_memory_equal(qbytes(&f, 3, "model.layers.0.self_attn.qkv_proj.input_scale"), &si, 4);
	/* rank 3 of T 4: q rows 192.., kv head 3 / 2 = 1: k rows 256 + 32, v rows 320 + 32 */
	qshape(qinfo(&f, 3, qkv), WT_F8_E4M3, 2, 128, 256, 0);
	const uint8_t *w = qbytes(&f, 3, qkv);
	size_t rb = 0;
	static const int64_t at[3] = {192, 288, 352}, n[3] = {64, 32, 32};
	for (int k = 0; k < 3; k++) {
		assert_memory_equal(w, srow(f.m, qkv, at[k], &rb), (size_t)n[k] * 256);
		w += n[k] * 256;
	}
	qclose(&f);
	lay(&l, 2, 1, WT_QUANT_FP8_CHANNEL);
	rv = qopen(&f, tm_phi3(0x5eed0017ull, 2), phi3_fp8_cfg, &l, &err);
	if (rv)
		fail_msg("%s", err.msg);
	qshape(qinfo(&f, 1, "model.layers.1.mlp.gate_up_proj.weight_scale"), WT_F32, 2, 512, 1, 0);
	assert_int_equal(tm_ix(f.p, 1, "model.layers.1.mlp.gate_up_proj.input_scale"), -1);
	qclose(&f);
}

static void test_nonfinite(void **state)
{
	(void)state;
	printf("seed 0x5eed0015\n");
	tm_model *m = tm_llama(0x5eed0015ull, WT_BF16);
	int k = tm_find(m, "model.layers.0.self_attn.k_proj.weight");
	uint16_t nan = 0x7fc0;
	memcpy((uint8_t *)m->data[k] + 2 * (40 * 256 + 3), &nan, 2); /* row 40 -> rank 1, row 8 */
	wt_layout l;
	lay(&l, 2, 1, WT_QUANT_INT8_CHANNEL);
	qfx f;
	wt_errbuf err = {0};
	int rv = qopen(&f, m, tm_llama_cfg, &l, &err);
	assert_int_equal(rv, WT_ENONFINITE);
	assert_non_null(strstr(err.msg, "model.layers.0.self_attn.qkv_proj.weight"));
	/* rank 1: k part starts at row 128 of the fused tensor: (128 + 8) * 256 + 3 */
	assert_non_null(strstr(err.msg, "34819"));
	qclose(&f);
}

static void test_dtype_option(void **state)
{
	(void)state;
	printf("seed 0x5eed0016\n");
	wt_layout l;
	lay(&l, 1, 1, WT_QUANT_NONE);
	l.dtype = WT_F32;
	qfx f;
	wt_errbuf err = {0};
	int rv = qopen(&f, tm_llama(0x5eed0016ull, WT_BF16), tm_llama_cfg, &l, &err);
	if (rv)
		fail_msg("%s", err.msg);
	const char *n = "model.norm.weight";
	qshape(qinfo(&f, 0, n), WT_F32, 1, 256, 0, 0);
	const float *v = qbytes(&f, 0, n);
	const uint16_t *src = f.m->data[tm_find(f.m, n)];
	for (int i = 0; i < 256; i++)
		assert_true(v[i] == kern_bf16_to_f32(src[i]));
	qclose(&f);
}

/* Per-tensor FP8 experts (Mixtral-style, EP 2): each expert's w1/w3 merge to that expert's
 * max, scales [count, 1]; the w13 input scale is the max over the rank's experts. */
static void test_fp8_tensor_experts(void **state)
{
	(void)state;
	printf("seed 0x5eed0017\n");
	tm_model *m = tm_new(0x5eed0017ull, WT_BF16);
	tm_top(m, 1000, 256, 1);
	for (int i = 0; i < 2; i++) {
		char b[200];
		tm_attn(m, i, 8, 2, 32, 256, 0, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.gate.weight");
		tm_add2(m, b, 6, 256);
		for (int j = 0; j < 6; j++) {
			char leaf[96];
			snprintf(leaf, sizeof(leaf), "block_sparse_moe.experts.%d.w1.weight", j);
			tm_lin_l(m, i, leaf, 256, 256, 2);
			snprintf(leaf, sizeof(leaf), "block_sparse_moe.experts.%d.w3.weight", j);
			tm_lin_l(m, i, leaf, 256, 256, 2);
			snprintf(leaf, sizeof(leaf), "block_sparse_moe.experts.%d.w2.weight", j);
			tm_lin_l(m, i, leaf, 256, 256, 2);
		}
	}
	char cfg[1024];
	snprintf(cfg, sizeof(cfg), "%.*s,\"quantization_config\":{\"quant_method\":\"fp8\"}}",
	         (int)(strlen(tm_mixtral_cfg) - 1), tm_mixtral_cfg);
	wt_layout l;
	lay(&l, 1, 2, WT_QUANT_FP8_TENSOR);
	qfx f;
	wt_errbuf err = {0};
	int rv = qopen(&f, m, cfg, &l, &err);
	if (rv)
		fail_msg("%s", err.msg);
	const char *w13 = "model.layers.1.block_sparse_moe.experts.w13_weight";
	/* ep rank 1 owns experts 3, 4, 5 */
	qshape(qinfo(&f, 1, "model.layers.1.block_sparse_moe.experts.w13_weight_scale"), WT_F32, 2,
	       3, 1, 0);
	qshape(qinfo(&f, 1, "model.layers.1.block_sparse_moe.experts.w13_input_scale"), WT_F32, 1,
	       1, 0, 0);
	const float *sc = qbytes(&f, 1, "model.layers.1.block_sparse_moe.experts.w13_weight_scale");
	const uint8_t *w = qbytes(&f, 1, w13);
	float imax = 0;
	for (int jj = 0; jj < 3; jj++) {
		char g[160], u[160];
		float s[2], in[2];
		const char *leaf[2] = {"w1", "w3"};
		for (int k = 0; k < 2; k++) {
			snprintf(g, sizeof(g),
			         "model.layers.1.block_sparse_moe.experts.%d.%s.weight_scale",
			         3 + jj, leaf[k]);
			s[k] = scalar_of(f.m, g);
			snprintf(u, sizeof(u),
			         "model.layers.1.block_sparse_moe.experts.%d.%s.input_scale",
			         3 + jj, leaf[k]);
			in[k] = scalar_of(f.m, u);
			imax = in[k] > imax ? in[k] : imax;
		}
		float mx = s[0] > s[1] ? s[0] : s[1];
		assert_memory_equal(&sc[jj], &mx, 4);
		for (int k = 0; k < 2; k++) {
			size_t rb;
			snprintf(g, sizeof(g),
			         "model.layers.1.block_sparse_moe.experts.%d.%s.weight", 3 + jj,
			         leaf[k]);
			uint8_t *ref = malloc(256 * 256);
			memcpy(ref, srow(f.m, g, 0, &rb), 256 * 256);
			if (s[k] != mx)
				kern_fp8_rescale(ref, 256 * 256, s[k] / mx);
			assert_memory_equal(w + (jj * 2 + k) * 256 * 256, ref, 256 * 256);
			free(ref);
		}
	}
	assert_memory_equal(
	    qbytes(&f, 1, "model.layers.1.block_sparse_moe.experts.w13_input_scale"), &imax, 4);
	qshape(qinfo(&f, 0, "model.layers.1.block_sparse_moe.experts.w2_weight_scale"), WT_F32, 2,
	       3, 1, 0);
	qclose(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dense_schemes),
	    cmocka_unit_test(test_expert_schemes),
	    cmocka_unit_test(test_fp8_block_passthrough),
	    cmocka_unit_test(test_fp8_block_to_none_and_requant),
	    cmocka_unit_test(test_fp8_tensor_merge),
	    cmocka_unit_test(test_fp8_tensor_experts),
	    cmocka_unit_test(test_fp8_tensor_fused_source),
	    cmocka_unit_test(test_nonfinite),
	    cmocka_unit_test(test_dtype_option),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
