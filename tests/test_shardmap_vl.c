/*
 * test_shardmap_vl.c — Qwen2-VL (docs/format.md section 2.7, Qwen2-VL): the
 * vision tower cut at TP 1, 2 and 4 and put back together from the produced
 * rank bytes exactly (fused qkv by heads, proj/fc2/mlp.2 by columns, fc1/mlp.0
 * by rows, the rest replicated); the transformers 5.x name layout giving the
 * same shards as 4.x; mrope_section checks; vision head divisibility;
 * quantization and exclusion of vision weights. Qwen2.5-VL: its RMSNorm blocks
 * and gated MLP (gate/up fused into gate_up_proj by rows, down_proj by
 * columns) cut and put back together the same way, its config checks. Seed
 * fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x5eed0d1full

/* LM: hid 64, H 4, KV 2, d 16, I 128, V 128, L 1. Vision: depth 2, embed 32, heads 4,
 * mlp 128, merger 128 (merge 2), patch embed [32, 3, 2, 2, 2]. */
#define VE  32
#define VI  128
#define VM  128
#define HID 64

#define VISION_CFG                                                                                 \
	"\"vision_config\":{\"depth\":2,\"embed_dim\":32,\"num_heads\":4,\"mlp_ratio\":4,"         \
	"\"hidden_size\":64,\"patch_size\":2,\"temporal_patch_size\":2,\"spatial_merge_size\":2,"  \
	"\"in_chans\":3}"
#define LM_CFG                                                                                     \
	"\"hidden_size\":64,\"num_attention_heads\":4,\"num_key_value_heads\":2,"                  \
	"\"intermediate_size\":128,\"vocab_size\":128,\"num_hidden_layers\":1"

/* 4.x config; %s = architecture, %s = the rope_scaling object's members */
static const char cfg4_fmt[] =
    "{\"architectures\":[\"%s\"],\"model_type\":\"qwen2_vl\"," LM_CFG
    ",\"tie_word_embeddings\":false,\"rope_scaling\":{%s}," VISION_CFG "}";
static const char cfg5[] =
    "{\"architectures\":[\"Qwen2VLForConditionalGeneration\"],\"model_type\":\"qwen2_vl\","
    "\"tie_word_embeddings\":false,\"text_config\":{" LM_CFG
    ",\"model_type\":\"qwen2_vl_text\",\"rope_parameters\":{\"rope_type\":\"default\","
    "\"mrope_section\":[2,3,3]}}," VISION_CFG "}";

static char cfg4_buf[2048];
static const char *cfg4(const char *arch, const char *rope)
{
	snprintf(cfg4_buf, sizeof(cfg4_buf), cfg4_fmt, arch, rope);
	return cfg4_buf;
}
#define ARCH      "Qwen2VLForConditionalGeneration"
#define ROPE_OK   "\"type\":\"mrope\",\"mrope_section\":[2,3,3]"
#define CFG4_GOOD cfg4(ARCH, ROPE_OK)

/* How a vision tensor is cut. */
typedef enum {
	CUT_REPL,
	CUT_ROWS,
	CUT_COLS,
	CUT_QKV,
	CUT_GATE, /* rows, first half of a fused gate_up_proj */
	CUT_UP,   /* rows, second half */
} cut;

typedef struct vt {
	const char *name; /* canonical (4.x) name; "%d" = block */
	cut how;
	int64_t n, k; /* k 0 = 1-D */
} vt;

/* Rows both vision towers have (the order of each table gives the values). */
#define VT_ATTN                                                                                    \
	{"visual.blocks.%d.attn.qkv.weight", CUT_QKV, 3 * VE, VE},                                 \
	    {"visual.blocks.%d.attn.qkv.bias", CUT_QKV, 3 * VE, 0},                                \
	    {"visual.blocks.%d.attn.proj.weight", CUT_COLS, VE, VE},                               \
	{                                                                                          \
		"visual.blocks.%d.attn.proj.bias", CUT_REPL, VE, 0                                 \
	}
#define VT_MERGER_MLP                                                                              \
	{"visual.merger.mlp.0.weight", CUT_ROWS, VM, VM},                                          \
	    {"visual.merger.mlp.0.bias", CUT_ROWS, VM, 0},                                         \
	    {"visual.merger.mlp.2.weight", CUT_COLS, HID, VM},                                     \
	{                                                                                          \
		"visual.merger.mlp.2.bias", CUT_REPL, HID, 0                                       \
	}

static const vt vision[] = {
    {"visual.blocks.%d.norm1.weight", CUT_REPL, VE, 0},
    {"visual.blocks.%d.norm1.bias", CUT_REPL, VE, 0},
    {"visual.blocks.%d.norm2.weight", CUT_REPL, VE, 0},
    {"visual.blocks.%d.norm2.bias", CUT_REPL, VE, 0},
    VT_ATTN,
    {"visual.blocks.%d.mlp.fc1.weight", CUT_ROWS, VI, VE},
    {"visual.blocks.%d.mlp.fc1.bias", CUT_ROWS, VI, 0},
    {"visual.blocks.%d.mlp.fc2.weight", CUT_COLS, VE, VI},
    {"visual.blocks.%d.mlp.fc2.bias", CUT_REPL, VE, 0},
    {"visual.merger.ln_q.weight", CUT_REPL, VE, 0},
    {"visual.merger.ln_q.bias", CUT_REPL, VE, 0},
    VT_MERGER_MLP,
};
#define N_VISION (sizeof(vision) / sizeof(vision[0]))

/* Checkpoint name of canonical name c in the 4.x or 5.x layout. */
static void ck_name(char *b, size_t n, const char *c, bool hf5)
{
	if (hf5 && strncmp(c, "model.", 6) == 0)
		snprintf(b, n, "model.language_model.%s", c + 6);
	else if (hf5 && strncmp(c, "visual.", 7) == 0)
		snprintf(b, n, "model.visual.%s", c + 7);
	else
		snprintf(b, n, "%s", c);
}

static void add(tm_model *m, bool hf5, const char *canon, int64_t a, int64_t b)
{
	char n[200];
	ck_name(n, sizeof(n), canon, hf5);
	tm_add2(m, n, a, b);
}

/* The language model and the patch embed; values depend only on the seed and
 * the tensor's position in the list. */
static tm_model *lm_and_patch_model(bool hf5)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add(m, hf5, "model.embed_tokens.weight", 128, HID);
	add(m, hf5, "model.norm.weight", HID, 0);
	add(m, hf5, "lm_head.weight", 128, HID);
	static const char *const lm[] = {
	    "input_layernorm.weight",  "post_attention_layernorm.weight",
	    "self_attn.q_proj.weight", "self_attn.k_proj.weight",
	    "self_attn.v_proj.weight", "self_attn.o_proj.weight",
	    "self_attn.q_proj.bias",   "self_attn.k_proj.bias",
	    "self_attn.v_proj.bias",   "mlp.gate_proj.weight",
	    "mlp.up_proj.weight",      "mlp.down_proj.weight"};
	static const int64_t lm_shape[][2] = {{HID, 0},  {HID, 0},   {64, HID},  {32, HID},
	                                      {32, HID}, {HID, 64},  {64, 0},    {32, 0},
	                                      {32, 0},   {128, HID}, {128, HID}, {HID, 128}};
	for (size_t k = 0; k < sizeof(lm) / sizeof(lm[0]); k++) {
		char b[200];
		snprintf(b, sizeof(b), "model.layers.0.%s", lm[k]);
		add(m, hf5, b, lm_shape[k][0], lm_shape[k][1]);
	}
	char pe[200];
	ck_name(pe, sizeof(pe), "visual.patch_embed.proj.weight", hf5);
	tm_add(m, pe, WT_DTYPE_INVALID, 1, VE * 3 * 2 * 2 * 2, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	int64_t shape5[5] = {VE, 3, 2, 2, 2};
	d->ndim = 5;
	memcpy(d->shape, shape5, sizeof(shape5));
	return m;
}

/* Qwen2-VL: the LM, the patch embed and the vision tensors of `vision`. */
static tm_model *qvl_model(bool hf5)
{
	tm_model *m = lm_and_patch_model(hf5);
	for (size_t v = 0; v < N_VISION; v++)
		for (int blk = 0; blk < (strstr(vision[v].name, "%d") ? 2 : 1); blk++) {
			char b[200];
			snprintf(b, sizeof(b), vision[v].name, blk);
			add(m, hf5, b, vision[v].n, vision[v].k);
		}
	return m;
}

typedef struct fx {
	char *dir;
	tm_model *m;
	store *s;
	ckpt *c;
	sm_plan *p;
	tm_prod *pr;
	wt_errbuf err;
} fx;

/* Plan (and produce) m under cfg; returns the plan's code, err kept in f->err. */
static int fx_open(fx *f, tm_model *m, const char *cfg, uint32_t T, wt_quant q, const char *exclude)
{
	printf("seed 0x%llx tp %u quant %s exclude %s\n", (unsigned long long)SEED, T,
	       wt_quant_name(q), exclude ? exclude : "-");
	memset(f, 0, sizeof(*f));
	f->dir = tu_mkdtemp("smvl");
	f->m = m;
	assert_int_equal(tm_write(m, f->dir, cfg), 0);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = T;
	l.quant = q;
	if (exclude)
		assert_int_equal(wt_layout_add_exclude(&l, exclude, NULL), WT_OK);
	int rv = tm_plan(f->dir, &l, &f->s, &f->c, &f->p, &f->err);
	wt_layout_clear(&l);
	if (rv == WT_OK) {
		f->pr = tm_produce(f->c, f->p, -1, &rv, &f->err);
		if (rv)
			fail_msg("produce: %s", f->err.msg);
	}
	return rv;
}

static void fx_close(fx *f)
{
	tm_prod_free(f->pr);
	tm_close(f->s, f->c, f->p);
	tm_free(f->m);
	tu_rmrf(f->dir);
	free(f->dir);
}

static const sm_out_info *out(const fx *f, uint32_t r, const char *name, const uint8_t **bytes)
{
	int ix = tm_ix(f->p, r, name);
	if (ix < 0)
		fail_msg("rank %u: no '%s'", r, name);
	if (bytes)
		*bytes = f->pr->b[r][ix];
	return shardmap_rank_tensor(f->p, r, (size_t)ix);
}

/* Put tensor `name` back together from the T ranks by rule `how`; compare with the source. */
static void reassemble(const fx *f, uint32_t T, const char *name, const char *src_name, cut how,
                       int64_t n, int64_t k)
{
	int si = tm_find(f->m, src_name);
	assert_true(si >= 0);
	const uint8_t *src = f->m->data[si];
	int64_t K = k ? k : 1, es = 2; /* BF16 */
	uint8_t *full = calloc((size_t)(n * K * es), 1);
	for (uint32_t r = 0; r < T; r++) {
		const uint8_t *b;
		const sm_out_info *t = out(f, r, name, &b);
		int64_t rows = t->shape[0], cols = t->ndim >= 2 ? t->shape[1] : 1;
		assert_int_equal(t->dtype, WT_BF16);
		switch (how) {
		case CUT_REPL:
			assert_int_equal(t->nbytes, (uint64_t)(n * K * es));
			assert_memory_equal(b, src, t->nbytes);
			break;
		case CUT_ROWS:
			assert_int_equal(rows, n / T);
			memcpy(full + r * rows * K * es, b, (size_t)(rows * K * es));
			break;
		case CUT_COLS:
			assert_int_equal(rows, n);
			assert_int_equal(cols, K / T);
			for (int64_t a = 0; a < n; a++)
				memcpy(full + (a * K + r * cols) * es, b + a * cols * es,
				       (size_t)(cols * es));
			break;
		case CUT_QKV: {
			int64_t hl = n / 3 / T; /* rows of one part on one rank */
			assert_int_equal(rows, 3 * hl);
			for (int p = 0; p < 3; p++)
				memcpy(full + (p * (n / 3) + r * hl) * K * es, b + p * hl * K * es,
				       (size_t)(hl * K * es));
			break;
		}
		case CUT_GATE:
		case CUT_UP: {
			int64_t il = n / T; /* [gate_r ; up_r] */
			assert_int_equal(rows, 2 * il);
			memcpy(full + r * il * K * es, b + (how == CUT_UP ? il : 0) * K * es,
			       (size_t)(il * K * es));
			break;
		}
		}
	}
	if (how != CUT_REPL && memcmp(full, src, (size_t)(n * K * es)) != 0)
		fail_msg("'%s': reassembled from %u ranks differs from the source", name, T);
	free(full);
}

static void cut_and_reassemble(bool hf5)
{
	static const uint32_t tps[] = {1, 2, 4};
	for (size_t i = 0; i < 3; i++) {
		uint32_t T = tps[i];
		fx f;
		if (fx_open(&f, qvl_model(hf5), hf5 ? cfg5 : CFG4_GOOD, T, WT_QUANT_NONE, NULL))
			fail_msg("%s", f.err.msg);
		char src[200];
		ck_name(src, sizeof(src), "visual.patch_embed.proj.weight", hf5);
		reassemble(&f, T, "visual.patch_embed.proj.weight", src, CUT_REPL, VE, 3 * 8);
		assert_int_equal(out(&f, T - 1, "visual.patch_embed.proj.weight", NULL)->ndim, 5);
		for (size_t v = 0; v < N_VISION; v++)
			for (int blk = 0; blk < (strstr(vision[v].name, "%d") ? 2 : 1); blk++) {
				char name[200];
				snprintf(name, sizeof(name), vision[v].name, blk);
				ck_name(src, sizeof(src), name, hf5);
				reassemble(&f, T, name, src, vision[v].how, vision[v].n,
				           vision[v].k);
			}
		if (!hf5)
			tm_check_coverage(f.c, f.p, 2);
		/* LM part as Qwen2: fused qkv with biases, H 4 KV 2 d 16 */
		int64_t Hl = 4 / T, KVl = T <= 2 ? 2 / T : 1;
		const sm_out_info *q = out(&f, 0, "model.layers.0.self_attn.qkv_proj.weight", NULL);
		assert_int_equal(q->shape[0], (Hl + 2 * KVl) * 16);
		out(&f, 0, "model.layers.0.self_attn.qkv_proj.bias", NULL);
		fx_close(&f);
	}
}

static void test_cut_reassemble_4x(void **state)
{
	(void)state;
	cut_and_reassemble(false);
}

static void test_cut_reassemble_5x(void **state)
{
	(void)state;
	cut_and_reassemble(true);
}

/* Both name layouts: same runtime names, shapes and bytes on every rank. */
static void test_layouts_same_shards(void **state)
{
	(void)state;
	fx a, b;
	if (fx_open(&a, qvl_model(false), CFG4_GOOD, 2, WT_QUANT_FP8_CHANNEL, NULL) ||
	    fx_open(&b, qvl_model(true), cfg5, 2, WT_QUANT_FP8_CHANNEL, NULL))
		fail_msg("%s / %s", a.err.msg, b.err.msg);
	for (uint32_t r = 0; r < 2; r++) {
		size_t n = shardmap_rank_n_tensors(a.p, r);
		assert_int_equal(n, shardmap_rank_n_tensors(b.p, r));
		for (size_t i = 0; i < n; i++) {
			const sm_out_info *x = shardmap_rank_tensor(a.p, r, i);
			const sm_out_info *y = shardmap_rank_tensor(b.p, r, i);
			assert_string_equal(x->name, y->name);
			assert_int_equal(x->nbytes, y->nbytes);
			assert_memory_equal(a.pr->b[r][i], b.pr->b[r][i], x->nbytes);
		}
	}
	fx_close(&a);
	fx_close(&b);
}

static void expect_fail(tm_model *m, const char *cfg, uint32_t T, int code, const char *needle)
{
	fx f;
	int rv = fx_open(&f, m, cfg, T, WT_QUANT_NONE, NULL);
	printf("  -> %s\n", f.err.msg);
	assert_int_equal(rv, code);
	if (!strstr(f.err.msg, needle))
		fail_msg("message '%s' lacks '%s'", f.err.msg, needle);
	fx_close(&f);
}

static void expect_ok(tm_model *m, const char *cfg)
{
	fx f;
	if (fx_open(&f, m, cfg, 2, WT_QUANT_NONE, NULL))
		fail_msg("%s", f.err.msg);
	fx_close(&f);
}

/* mrope_section: non-negative, sums to head_dim/2 = 8, zero sections allowed. */
static void test_mrope(void **state)
{
	(void)state;
	expect_ok(qvl_model(false), cfg4(ARCH, "\"type\":\"mrope\",\"mrope_section\":[0,8,0]"));
	expect_ok(qvl_model(false), cfg4(ARCH, "\"rope_type\":\"mrope\",\"mrope_section\":[8]"));
	expect_fail(qvl_model(false), cfg4(ARCH, "\"type\":\"mrope\",\"mrope_section\":[2,3,4]"), 2,
	            WT_ECORRUPT, "sums to 9 but must equal head_dim/2 = 8");
	expect_fail(qvl_model(false), cfg4(ARCH, "\"type\":\"mrope\",\"mrope_section\":[10,-2]"), 2,
	            WT_ECORRUPT, "mrope_section[1] = -2 is negative");
	expect_fail(qvl_model(false), cfg4(ARCH, "\"type\":\"mrope\",\"mrope_section\":[]"), 2,
	            WT_ECORRUPT, "sums to 0");
	expect_fail(qvl_model(false), cfg4(ARCH, "\"type\":\"default\""), 2, WT_ECORRUPT,
	            "needs rope_scaling.mrope_section");
	expect_fail(qvl_model(false), cfg4(ARCH, "\"type\":\"mrope\",\"mrope_section\":[2,\"3\"]"),
	            2, WT_ECORRUPT, "mrope_section[1] is not an integer");
}

static void test_layout_errors(void **state)
{
	(void)state;
	/* vision heads 2 (LM heads 4): TP 4 is refused, naming the vision heads and the tp
	 * sizes that work for the whole model */
	char two[2048];
	snprintf(two, sizeof(two), "%s", CFG4_GOOD);
	char *h = strstr(two, "\"num_heads\":4");
	assert_non_null(h);
	h[strlen("\"num_heads\":")] = '2';
	expect_fail(qvl_model(false), two, 4, WT_ELAYOUT,
	            "tp_size 4 does not divide vision_config.num_heads 2; use tp_size 1 or 2");
	/* a block past vision_config.depth */
	tm_model *m = qvl_model(false);
	tm_add2(m, "visual.blocks.2.norm1.weight", VE, 0);
	expect_fail(m, CFG4_GOOD, 2, WT_ESHAPE,
	            "vision block 2 but config.json vision_config.depth");
	/* a missing vision tensor */
	m = qvl_model(false);
	tm_remove(m, "visual.blocks.1.mlp.fc1.bias");
	expect_fail(m, CFG4_GOOD, 2, WT_ENOTFOUND,
	            "'visual.blocks.1.mlp.fc1.bias': missing from the checkpoint");
	/* a missing 5.x tensor is named in the 5.x layout */
	m = qvl_model(true);
	tm_remove(m, "model.visual.merger.mlp.2.bias");
	expect_fail(m, cfg5, 2, WT_ENOTFOUND, "'model.visual.merger.mlp.2.bias': missing");
	/* both layouts in one checkpoint */
	m = qvl_model(true);
	tm_remove(m, "model.visual.merger.ln_q.bias");
	tm_add2(m, "visual.merger.ln_q.bias", VE, 0);
	expect_fail(m, cfg5, 2, WT_EUNSUPPORTED, "mixes two name layouts");
	/* wrong patch embed shape against vision_config */
	m = qvl_model(false);
	m->d[tm_find(m, "visual.patch_embed.proj.weight")].shape[4] = 1;
	m->d[tm_find(m, "visual.patch_embed.proj.weight")].shape[3] = 4;
	expect_fail(m, CFG4_GOOD, 1, WT_ESHAPE, "[32, 3, 2, 2, 2]");
}

/* Quantization: vision linears follow the LM rules; the Conv3d patch embed, norms and
 * biases stay BF16; exclusions match 4.x names in either layout. */
static void test_quant(void **state)
{
	(void)state;
	fx f, plain;
	if (fx_open(&f, qvl_model(false), CFG4_GOOD, 2, WT_QUANT_FP8_CHANNEL, NULL) ||
	    fx_open(&plain, qvl_model(false), CFG4_GOOD, 2, WT_QUANT_NONE, NULL))
		fail_msg("%s", f.err.msg);
	static const char *const lin[] = {
	    "visual.blocks.0.attn.qkv.weight", "visual.blocks.1.attn.proj.weight",
	    "visual.blocks.0.mlp.fc1.weight",  "visual.blocks.1.mlp.fc2.weight",
	    "visual.merger.mlp.0.weight",      "visual.merger.mlp.2.weight"};
	for (size_t i = 0; i < 6; i++) {
		const sm_out_info *w = out(&f, 1, lin[i], NULL);
		char sn[200];
		snprintf(sn, sizeof(sn), "%.*sweight_scale", (int)(strlen(lin[i]) - 6), lin[i]);
		const sm_out_info *s = out(&f, 1, sn, NULL);
		assert_int_equal(w->dtype, WT_F8_E4M3);
		assert_int_equal(s->shape[0], w->shape[0]);
		assert_int_equal(s->shape[1], 1);
	}
	assert_int_equal(out(&f, 0, "visual.blocks.0.attn.qkv.weight", NULL)->shape[0], 3 * VE / 2);
	static const char *const keep[] = {
	    "visual.patch_embed.proj.weight", "visual.blocks.0.attn.qkv.bias",
	    "visual.blocks.0.norm1.weight", "visual.merger.ln_q.bias"};
	for (size_t i = 0; i < 4; i++) {
		const uint8_t *x, *y;
		const sm_out_info *t = out(&f, 0, keep[i], &x);
		out(&plain, 0, keep[i], &y);
		assert_int_equal(t->dtype, WT_BF16);
		assert_memory_equal(x, y, t->nbytes);
	}
	fx_close(&f);
	/* exclude the vision tower: 4.x pattern on a 5.x checkpoint, and the 5.x pattern */
	static const char *const pats[] = {"visual.", "model.visual.blocks.{i}.", "re:visual\\..*"};
	for (size_t k = 0; k < 3; k++) {
		bool merger = k != 1;
		if (fx_open(&f, qvl_model(true), cfg5, 2, WT_QUANT_FP8_CHANNEL, pats[k]))
			fail_msg("%s", f.err.msg);
		const uint8_t *x, *y;
		const sm_out_info *t = out(&f, 1, "visual.blocks.1.mlp.fc2.weight", &x);
		out(&plain, 1, "visual.blocks.1.mlp.fc2.weight", &y);
		assert_int_equal(t->dtype, WT_BF16);
		assert_memory_equal(x, y, t->nbytes);
		assert_int_equal(out(&f, 1, "visual.merger.mlp.0.weight", NULL)->dtype,
		                 merger ? WT_BF16 : WT_F8_E4M3);
		assert_int_equal(out(&f, 1, "model.layers.0.mlp.down_proj.weight", NULL)->dtype,
		                 WT_F8_E4M3);
		fx_close(&f);
	}
	fx_close(&plain);
}

/* Scales and exclusions under the 5.x names: a stray weight scale beside a 5.x weight is
 * refused naming it (looked up in the checkpoint's own layout); a partial exclusion of a
 * fused module written with the 4.x (canonical) name is named on both sides. */
static void test_hf5_scales_exclusions(void **state)
{
	(void)state;
	tm_model *m = qvl_model(true);
	tm_add(m, "model.language_model.layers.0.mlp.down_proj.weight_scale", WT_F32, 1, 1, 0, 0);
	expect_fail(m, cfg5, 2, WT_EUNSUPPORTED,
	            "'model.language_model.layers.0.mlp.down_proj.weight_scale': a scale the "
	            "checkpoint's quantization does not use");
	m = qvl_model(true);
	tm_add(m, "model.visual.blocks.1.mlp.fc1.weight_scale_inv", WT_F32, 2, 1, 1, 0);
	expect_fail(m, cfg5, 2, WT_EUNSUPPORTED, "'model.visual.blocks.1.mlp.fc1.weight' is BF16");
	/* a 4.x-named scale in a 5.x checkpoint has no weight beside it: mixed layouts */
	m = qvl_model(true);
	tm_add(m, "model.layers.0.mlp.down_proj.weight_scale", WT_F32, 1, 1, 0, 0);
	expect_fail(m, cfg5, 2, WT_EUNSUPPORTED, "mixes two name layouts");
	/* the 4.x pattern excludes q_proj of a 5.x checkpoint, and only it */
	fx f;
	assert_int_equal(fx_open(&f, qvl_model(true), cfg5, 2, WT_QUANT_FP8_CHANNEL,
	                         "model.layers.0.self_attn.q_proj"),
	                 WT_ELAYOUT);
	printf("  -> %s\n", f.err.msg);
	if (!strstr(f.err.msg, "1 of its 3 fused modules are excluded (excluded: "
	                       "model.language_model.layers.0.self_attn.q_proj; not excluded: "
	                       "model.language_model.layers.0.self_attn.k_proj, "
	                       "model.language_model.layers.0.self_attn.v_proj)"))
		fail_msg("message '%s' does not name both sides", f.err.msg);
	fx_close(&f);
}

/* ---- Qwen2.5-VL: vision width 32 (hidden_size), gated MLP intermediate_size, depth 2 ---- */
#define VI25 80 /* unlike any other dimension here: qvl25_model substitutes it */

static const char cfg25_fmt[] =
    "{\"architectures\":[\"Qwen2_5_VLForConditionalGeneration\"],\"model_type\":\"qwen2_5_"
    "vl\"," LM_CFG ",\"tie_word_embeddings\":false,\"rope_scaling\":{" ROPE_OK
    "},\"vision_config\":{\"depth\":2,"
    "\"hidden_size\":32,\"intermediate_size\":%d,\"num_heads\":4,\"out_hidden_size\":%d,"
    "\"patch_size\":2,\"temporal_patch_size\":2,\"spatial_merge_size\":2,\"in_chans\":3,"
    "\"window_size\":112,\"fullatt_block_indexes\":[1]}}";

static char cfg25_buf[2048];
static const char *cfg25(int vi, int out_hidden)
{
	snprintf(cfg25_buf, sizeof(cfg25_buf), cfg25_fmt, vi, out_hidden);
	return cfg25_buf;
}

static const vt vision25[] = {
    {"visual.blocks.%d.norm1.weight", CUT_REPL, VE, 0},
    {"visual.blocks.%d.norm2.weight", CUT_REPL, VE, 0},
    VT_ATTN,
    {"visual.blocks.%d.mlp.gate_proj.weight", CUT_GATE, VI25, VE},
    {"visual.blocks.%d.mlp.gate_proj.bias", CUT_GATE, VI25, 0},
    {"visual.blocks.%d.mlp.up_proj.weight", CUT_UP, VI25, VE},
    {"visual.blocks.%d.mlp.up_proj.bias", CUT_UP, VI25, 0},
    {"visual.blocks.%d.mlp.down_proj.weight", CUT_COLS, VE, VI25},
    {"visual.blocks.%d.mlp.down_proj.bias", CUT_REPL, VE, 0},
    {"visual.merger.ln_q.weight", CUT_REPL, VE, 0},
    VT_MERGER_MLP,
};
#define N_VISION25 (sizeof(vision25) / sizeof(vision25[0]))

/* VI25 in a shape stands for the model's vision intermediate size vi. */
static int64_t vi_dim(int64_t d, int64_t vi)
{
	return d == VI25 ? vi : d;
}

static tm_model *qvl25_model(int64_t vi)
{
	tm_model *m = lm_and_patch_model(false);
	for (size_t v = 0; v < N_VISION25; v++)
		for (int blk = 0; blk < (strstr(vision25[v].name, "%d") ? 2 : 1); blk++) {
			char b[200];
			snprintf(b, sizeof(b), vision25[v].name, blk);
			tm_add2(m, b, vi_dim(vision25[v].n, vi), vi_dim(vision25[v].k, vi));
		}
	return m;
}

/* The runtime name of a Qwen2.5-VL vision tensor: gate/up fuse into gate_up_proj. */
static void rt25_name(char *b, size_t n, const char *ck, cut how)
{
	const char *leaf = how == CUT_GATE ? "gate_proj" : how == CUT_UP ? "up_proj" : NULL;
	const char *at = leaf ? strstr(ck, leaf) : NULL;
	if (at == NULL)
		snprintf(b, n, "%s", ck);
	else
		snprintf(b, n, "%.*sgate_up_proj%s", (int)(at - ck), ck, at + strlen(leaf));
}

static void test_qwen25_cut_reassemble(void **state)
{
	(void)state;
	static const uint32_t tps[] = {1, 2, 4};
	for (size_t i = 0; i < 3; i++) {
		uint32_t T = tps[i];
		fx f;
		if (fx_open(&f, qvl25_model(VI25), cfg25(VI25, HID), T, WT_QUANT_NONE, NULL))
			fail_msg("%s", f.err.msg);
		reassemble(&f, T, "visual.patch_embed.proj.weight",
		           "visual.patch_embed.proj.weight", CUT_REPL, VE, 3 * 8);
		for (size_t v = 0; v < N_VISION25; v++)
			for (int blk = 0; blk < (strstr(vision25[v].name, "%d") ? 2 : 1); blk++) {
				char ck[200], rt[200];
				snprintf(ck, sizeof(ck), vision25[v].name, blk);
				rt25_name(rt, sizeof(rt), ck, vision25[v].how);
				reassemble(&f, T, rt, ck, vision25[v].how, vision25[v].n,
				           vision25[v].k);
			}
		tm_check_coverage(f.c, f.p, 2);
		assert_int_equal(tm_ix(f.p, 0, "visual.blocks.0.norm1.bias"), -1);
		assert_int_equal(tm_ix(f.p, 0, "visual.blocks.0.mlp.gate_proj.weight"), -1);
		fx_close(&f);
	}
}

static void test_qwen25_errors(void **state)
{
	(void)state;
	expect_fail(qvl25_model(VI25), cfg25(VI25, 48), 2, WT_ECORRUPT,
	            "vision_config.out_hidden_size 48 must equal the language model's "
	            "hidden_size 64");
	char no_inter[2048];
	snprintf(no_inter, sizeof(no_inter), "%s", cfg25(VI25, HID));
	char *k = strstr(no_inter, "\"intermediate_size\":80,");
	assert_non_null(k);
	memmove(k, k + strlen("\"intermediate_size\":80,"),
	        strlen(k + strlen("\"intermediate_size\":80,")) + 1);
	/* absent: Qwen2_5_VLVisionConfig's 3420 (config_defaults_vl.c), which the blocks' MLP
	 * weights of 80 disagree with */
	expect_fail(qvl25_model(VI25), no_inter, 2, WT_ESHAPE,
	            "shape [32, 80] disagrees with config.json, which implies [32, 3420]");
	/* a depth below 1 is refused naming the key */
	char no_depth[2048];
	snprintf(no_depth, sizeof(no_depth), "%s", cfg25(VI25, HID));
	k = strstr(no_depth, "\"depth\":");
	assert_non_null(k);
	k[strlen("\"depth\":")] = '0';
	expect_fail(qvl25_model(VI25), no_depth, 2, WT_ECORRUPT,
	            "in vision_config: config.json: 'depth' = 0, must be >= 1");
	/* an intermediate size tp_size does not divide: named, with the sizes that work */
	expect_fail(qvl25_model(90), cfg25(90, HID), 4, WT_ELAYOUT,
	            "vision_config.intermediate_size 90");
	expect_ok(qvl25_model(90), cfg25(90, HID));
	/* the vision MLP biases are required; a Qwen2-VL LayerNorm bias is unknown here */
	tm_model *m = qvl25_model(VI25);
	tm_remove(m, "visual.blocks.1.mlp.up_proj.bias");
	expect_fail(m, cfg25(VI25, HID), 2, WT_ENOTFOUND,
	            "'visual.blocks.1.mlp.up_proj.bias': missing from the checkpoint");
	m = qvl25_model(VI25);
	tm_add2(m, "visual.blocks.0.norm1.bias", VE, 0);
	expect_fail(m, cfg25(VI25, HID), 2, WT_EUNSUPPORTED, "visual.blocks.0.norm1.bias");
}

/* FP8 per channel: the fused vision gate_up_proj and down_proj are quantized
 * (one scale per output row), the RMSNorms and biases stay BF16. */
static void test_qwen25_quant(void **state)
{
	(void)state;
	fx f;
	if (fx_open(&f, qvl25_model(VI25), cfg25(VI25, HID), 2, WT_QUANT_FP8_CHANNEL, NULL))
		fail_msg("%s", f.err.msg);
	const sm_out_info *w = out(&f, 1, "visual.blocks.1.mlp.gate_up_proj.weight", NULL);
	assert_int_equal(w->dtype, WT_F8_E4M3);
	assert_int_equal(w->shape[0], VI25);
	assert_int_equal(
	    out(&f, 1, "visual.blocks.1.mlp.gate_up_proj.weight_scale", NULL)->shape[0], VI25);
	assert_int_equal(out(&f, 0, "visual.blocks.0.mlp.down_proj.weight", NULL)->dtype,
	                 WT_F8_E4M3);
	assert_int_equal(out(&f, 0, "visual.blocks.0.mlp.gate_up_proj.bias", NULL)->dtype, WT_BF16);
	assert_int_equal(out(&f, 0, "visual.blocks.0.norm2.weight", NULL)->dtype, WT_BF16);
	assert_int_equal(out(&f, 0, "visual.merger.ln_q.weight", NULL)->dtype, WT_BF16);
	fx_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cut_reassemble_4x),
	    cmocka_unit_test(test_cut_reassemble_5x),
	    cmocka_unit_test(test_layouts_same_shards),
	    cmocka_unit_test(test_mrope),
	    cmocka_unit_test(test_layout_errors),
	    cmocka_unit_test(test_quant),
	    cmocka_unit_test(test_hf5_scales_exclusions),
	    cmocka_unit_test(test_qwen25_cut_reassemble),
	    cmocka_unit_test(test_qwen25_errors),
	    cmocka_unit_test(test_qwen25_quant),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
