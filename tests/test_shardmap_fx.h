/*
 * test_shardmap_fx.h — what the family tests share (test_shardmap_families.c,
 * test_shardmap_families2.c): a tm_model written, planned and produced (fx), a
 * rank tensor's shape and bytes against the source rows (rows_are, cols_at), the covered-exactly-
 * once check over several layouts, and a plan's refusal. Define SEED and
 * include test_shardmap_util.h first.
 */
#ifndef WT_TEST_SHARDMAP_FX_H
#define WT_TEST_SHARDMAP_FX_H

#include <math.h>

#include "kernels/kernels.h"

typedef struct fx {
	char *dir;
	tm_model *m;
	store *s;
	ckpt *c;
	sm_plan *p;
	tm_prod *pr;
} fx;

/* Write m with cfg, plan layout l (and produce every rank when asked). A plan not produced
 * is opened without the content digests (tm_plan_q): never produce from it. */
static __attribute__((unused)) void fx_open_l(fx *f, tm_model *m, const char *cfg,
                                              const wt_layout *l, bool produce)
{
	printf("seed 0x%llx tp %u ep %u quant %s w13 %s\n", (unsigned long long)SEED, l->tp_size,
	       l->ep_size, wt_quant_name(l->quant), l->w13_up_gate ? "up_gate" : "gate_up");
	memset(f, 0, sizeof(*f));
	f->dir = tu_mkdtemp("smfam");
	f->m = m;
	assert_int_equal(tm_write(m, f->dir, cfg), 0);
	wt_errbuf err = {0};
	int rv = tm_plan_q(f->dir, l, !produce, &f->s, &f->c, &f->p, &err);
	if (rv)
		fail_msg("%s", err.msg);
	if (produce) {
		f->pr = tm_produce(f->c, f->p, -1, &rv, &err);
		if (rv)
			fail_msg("%s", err.msg);
	}
}

static __attribute__((unused)) void fx_open(fx *f, tm_model *m, const char *cfg, uint32_t T,
                                            uint32_t P, int w13_up_gate, bool produce)
{
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = T;
	l.ep_size = P;
	l.w13_up_gate = w13_up_gate;
	fx_open_l(f, m, cfg, &l, produce);
}

static __attribute__((unused)) void fx_close(fx *f)
{
	tm_prod_free(f->pr);
	tm_close(f->s, f->c, f->p);
	tm_free(f->m);
	tu_rmrf(f->dir);
	free(f->dir);
}

static __attribute__((unused)) const sm_out_info *info(const fx *f, uint32_t r, const char *name)
{
	int ix = tm_ix(f->p, r, name);
	if (ix < 0)
		fail_msg("rank %u: no '%s'", r, name);
	return shardmap_rank_tensor(f->p, r, (size_t)ix);
}

static __attribute__((unused)) void shp(const fx *f, uint32_t r, const char *name, int nd,
                                        int64_t a, int64_t b, int64_t c)
{
	const sm_out_info *t = info(f, r, name);
	int64_t w[3] = {a, b, c};
	if (t->ndim != nd)
		fail_msg("'%s': ndim %d != %d", name, t->ndim, nd);
	for (int k = 0; k < nd; k++)
		if (t->shape[k] != w[k])
			fail_msg("'%s' rank %u dim %d: %lld != %lld", name, r, k,
			         (long long)t->shape[k], (long long)w[k]);
}

static __attribute__((unused)) const uint8_t *out_bytes(const fx *f, uint32_t r, const char *name)
{
	return f->pr->b[r][tm_ix(f->p, r, name)];
}

/* Source rows [r0, r0+n) of tensor name (bytes), cols taken from its shape (the last
 * dimension: a stack [E, a, b] is [E*a, b] rows). */
static __attribute__((unused)) const uint8_t *src_rows(const fx *f, const char *name, int64_t r0,
                                                       size_t *rowb)
{
	int k = tm_find(f->m, name);
	assert_true(k >= 0);
	const st_desc *d = &f->m->d[k];
	*rowb = (size_t)(d->ndim >= 2 ? d->shape[d->ndim - 1] : 1) * wt_dtype_size(d->dtype);
	return (const uint8_t *)f->m->data[k] + (size_t)r0 * *rowb;
}

/* Rows [a, a+n) of tensor src equal rank r's tensor rt from its row o. */
static __attribute__((unused)) void rows_are(const fx *f, uint32_t r, const char *rt, int64_t o,
                                             const char *src, int64_t a, int64_t n)
{
	size_t rowb;
	const uint8_t *s = src_rows(f, src, a, &rowb);
	assert_memory_equal(out_bytes(f, r, rt) + (size_t)o * rowb, s, (size_t)n * rowb);
}

/* Rank r's rt [N, n] (BF16) from row o is columns [a, a+n) of src [N, K]. */
static __attribute__((unused)) void cols_at(const fx *f, uint32_t r, const char *rt, int64_t o,
                                            const char *src, int64_t N, int64_t K, int64_t a,
                                            int64_t n)
{
	size_t rowb;
	const uint8_t *s = src_rows(f, src, 0, &rowb), *out = out_bytes(f, r, rt) + o * n * 2;
	for (int64_t row = 0; row < N; row++)
		assert_memory_equal(out + (size_t)(row * n) * 2, s + (size_t)(row * K + a) * 2,
		                    (size_t)n * 2);
}

/* Rank r's rows [r0, r0+n) of source `src` at row `at` of output `name` (bytes equal). */
static __attribute__((unused)) void rows_at(const fx *f, uint32_t r, const char *name, int64_t at,
                                            const char *src, int64_t r0, int64_t n)
{
	size_t rowb;
	const uint8_t *s = src_rows(f, src, r0, &rowb);
	if (memcmp(out_bytes(f, r, name) + (size_t)at * rowb, s, (size_t)n * rowb) != 0)
		fail_msg("rank %u '%s' rows [%lld, +%lld) != '%s' rows [%lld, +%lld)", r, name,
		         (long long)at, (long long)n, src, (long long)r0, (long long)n);
}

/* Rank r's output `name` [rows, k/T] = columns [r*k/T, ...) of source `src` [rows, k]. */
static __attribute__((unused)) void cols_of(const fx *f, uint32_t r, uint32_t T, const char *name,
                                            const char *src, int64_t rows, int64_t k)
{
	size_t rowb;
	const uint8_t *s = src_rows(f, src, 0, &rowb);
	const uint8_t *o = out_bytes(f, r, name);
	int64_t kl = k / T;
	shp(f, r, name, 2, rows, kl, 0);
	for (int64_t a = 0; a < rows; a++)
		if (memcmp(o + a * kl * 2, s + (a * k + r * kl) * 2, (size_t)kl * 2) != 0)
			fail_msg("rank %u '%s' row %lld: not columns [%lld, +%lld) of '%s'", r,
			         name, (long long)a, (long long)(r * kl), (long long)kl, src);
}

/* Rank r of T holds Llama's fused [q_r; k_r; v_r] in rt (weights or 1-D biases): q heads
 * [r*H/T, +H/T) of q, then the rank's kv heads of k, then of v: [r*KV/T, +KV/T) or, when
 * KV < T, the one kv head r / (T/KV) (replicated); d rows a head. */
static __attribute__((unused)) void fx_qkv_is(const fx *f, uint32_t r, uint32_t T, const char *rt,
                                              const char *q, const char *k, const char *v,
                                              int64_t H, int64_t KV, int64_t d)
{
	int64_t hl = H / T, kvl = KV >= T ? KV / T : 1;
	int64_t g0 = KV >= T ? r * kvl : r / (T / KV);
	rows_at(f, r, rt, 0, q, r * hl * d, hl * d);
	rows_at(f, r, rt, hl * d, k, g0 * d, kvl * d);
	rows_at(f, r, rt, (hl + kvl) * d, v, g0 * d, kvl * d);
}

/* Rank r of T holds the merged [gate_r; up_r] in rt: rows [r*I/T, +I/T) of gate, then of up. */
static __attribute__((unused)) void fx_gate_up_is(const fx *f, uint32_t r, uint32_t T,
                                                  const char *rt, const char *gate, const char *up,
                                                  int64_t I)
{
	rows_at(f, r, rt, 0, gate, r * (I / T), I / T);
	rows_at(f, r, rt, I / T, up, r * (I / T), I / T);
}

/* Rank r of T's Llama attention under prefix p (one for the checkpoint's and the rank's names):
 * p "qkv_proj.weight" [q_r; k_r; v_r] of p "q_proj.weight" ... as fx_qkv_is, shape included,
 * and the output projection p o ("o_proj.weight"; LFM2's "out_proj.weight") [hid, H d] by
 * columns. */
static __attribute__((unused)) void fx_attn_is(const fx *f, uint32_t r, uint32_t T, const char *p,
                                               const char *o, int64_t H, int64_t KV, int64_t d,
                                               int64_t hid)
{
	char qkv[200], q[200], k[200], v[200], out[200];
	snprintf(qkv, sizeof(qkv), "%sqkv_proj.weight", p);
	snprintf(q, sizeof(q), "%sq_proj.weight", p);
	snprintf(k, sizeof(k), "%sk_proj.weight", p);
	snprintf(v, sizeof(v), "%sv_proj.weight", p);
	snprintf(out, sizeof(out), "%s%s", p, o);
	shp(f, r, qkv, 2, (H / T + 2 * (KV >= T ? KV / T : 1)) * d, hid, 0);
	fx_qkv_is(f, r, T, qkv, q, k, v, H, KV, d);
	cols_of(f, r, T, out, out, hid, H * d);
}

/* Rank r of T's merged MLP under prefix p: p "gate_up_proj.weight" [gate_r; up_r] of p
 * "gate_proj.weight" / p "up_proj.weight" [I, hid] (shape included), p "down_proj.weight"
 * [hid, I] by columns. */
static __attribute__((unused)) void fx_mlp_is(const fx *f, uint32_t r, uint32_t T, const char *p,
                                              int64_t I, int64_t hid)
{
	char gu[200], g[200], u[200], dn[200];
	snprintf(gu, sizeof(gu), "%sgate_up_proj.weight", p);
	snprintf(g, sizeof(g), "%sgate_proj.weight", p);
	snprintf(u, sizeof(u), "%sup_proj.weight", p);
	snprintf(dn, sizeof(dn), "%sdown_proj.weight", p);
	shp(f, r, gu, 2, 2 * (I / T), hid, 0);
	fx_gate_up_is(f, r, T, gu, g, u, I);
	cols_of(f, r, T, dn, dn, hid, I);
}

/* Rank r of T holds [q_r; k_r; v_r] of q/k/v packed per kv group ([KV, H/KV + 2, d] rows:
 * Falcon's query_key_value, InternLM2's wqkv): q head h (n = H/KV per group) at checkpoint row
 * ((h/n)(n+2) + h%n) d, kv head g's k at (g(n+2) + n) d, v one further; the rank's kv heads
 * [r*KV/T, ...) or, when KV < T, the one kv head r / (T/KV). */
static __attribute__((unused)) void fx_qkv_grouped_is(const fx *f, uint32_t r, uint32_t T,
                                                      int64_t H, int64_t KV, int64_t d,
                                                      const char *name)
{
	int64_t n = H / KV, hl = H / T, kvl = KV >= T ? KV / T : 1;
	int64_t g0 = KV >= T ? r * kvl : r / (T / KV);
	for (int64_t j = 0; j < hl; j++) {
		int64_t h = r * hl + j;
		rows_at(f, r, name, j * d, name, ((h / n) * (n + 2) + h % n) * d, d);
	}
	for (int64_t p = 0; p < 2; p++)
		for (int64_t m = 0; m < kvl; m++)
			rows_at(f, r, name, (hl + p * kvl + m) * d, name,
			        ((g0 + m) * (n + 2) + n + p) * d, d);
}

/* Rank r of T's rows of vocabulary table t ([V, hid] padded to Vp rows: Vp / T a rank) in a
 * 2-byte dtype: its rows of the checkpoint's table src, then zeros past V. */
static __attribute__((unused)) void fx_vocab_from(const fx *f, uint32_t r, int64_t T, const char *t,
                                                  const char *src, int64_t V, int64_t Vp,
                                                  int64_t hid)
{
	int64_t vl = Vp / T, from = r * vl, n = from + vl > V ? (V > from ? V - from : 0) : vl;
	shp(f, r, t, 2, vl, hid, 0);
	if (n > 0)
		rows_at(f, r, t, 0, src, from, n);
	const uint16_t *e = (const uint16_t *)out_bytes(f, r, t);
	for (int64_t i = n * hid; i < vl * hid; i++)
		assert_int_equal(e[i], 0);
}

/* fx_vocab_from of the checkpoint's table under the runtime name t. */
static __attribute__((unused)) void fx_vocab_is(const fx *f, uint32_t r, int64_t T, const char *t,
                                                int64_t V, int64_t Vp, int64_t hid)
{
	fx_vocab_from(f, r, T, t, t, V, Vp, hid);
}

/* A Mamba2 mixer's sizes for fx_mamba2_mixer_is: width W (heads x head dim), nh heads, G
 * groups of state N, conv kernel K, the model's width hid; whether the checkpoint has a conv1d
 * bias and a gated norm. */
typedef struct fx_m2 {
	int64_t W, nh, G, N, K, hid;
	bool conv_bias, norm;
} fx_m2;

/* Rank r of T's Mamba2 mixer under prefix M ("....mixer."): in_proj rows z_r, x_r, B and C of
 * its groups (all G on every rank when T does not divide G), dt_r; conv1d (and its bias)
 * [x_r; B_r; C_r]; A_log / D / dt_bias by heads, the norm's weight by channels, out_proj by
 * columns. */
static __attribute__((unused)) void fx_mamba2_mixer_is(const fx *f, uint32_t r, int64_t T,
                                                       const char *M, const fx_m2 *m)
{
	int64_t im = m->W / T, hl = m->nh / T, gl = m->G % T ? m->G : m->G / T;
	int64_t g0 = m->G % T ? 0 : r * gl, gn = m->G * m->N, bl = gl * m->N, b0 = g0 * m->N;
	char in[200], cv[3][200], out[200], h[200];
	snprintf(in, sizeof(in), "%sin_proj.weight", M);
	snprintf(cv[0], sizeof(cv[0]), "%sconv1d.weight", M);
	snprintf(cv[1], sizeof(cv[1]), "%sconv1d.bias", M);
	snprintf(out, sizeof(out), "%sout_proj.weight", M);
	shp(f, r, in, 2, 2 * im + 2 * bl + hl, m->hid, 0);
	rows_at(f, r, in, 0, in, r * im, im);                                   /* z */
	rows_at(f, r, in, im, in, m->W + r * im, im);                           /* x */
	rows_at(f, r, in, 2 * im, in, 2 * m->W + b0, bl);                       /* B */
	rows_at(f, r, in, 2 * im + bl, in, 2 * m->W + gn + b0, bl);             /* C */
	rows_at(f, r, in, 2 * im + 2 * bl, in, 2 * m->W + 2 * gn + r * hl, hl); /* dt */
	shp(f, r, cv[0], 3, im + 2 * bl, 1, m->K);
	for (int k = 0; k < (m->conv_bias ? 2 : 1); k++) {
		rows_at(f, r, cv[k], 0, cv[k], r * im, im);
		rows_at(f, r, cv[k], im, cv[k], m->W + b0, bl);
		rows_at(f, r, cv[k], im + bl, cv[k], m->W + gn + b0, bl);
	}
	static const char *const heads[] = {"A_log", "D", "dt_bias"};
	for (size_t k = 0; k < 3; k++) {
		snprintf(h, sizeof(h), "%s%s", M, heads[k]);
		shp(f, r, h, 1, hl, 0, 0);
		rows_at(f, r, h, 0, h, r * hl, hl);
	}
	if (m->norm) {
		snprintf(h, sizeof(h), "%snorm.weight", M);
		rows_at(f, r, h, 0, h, r * im, im);
	}
	shp(f, r, out, 2, m->hid, im, 0);
	cols_at(f, r, out, 0, out, m->hid, m->W, r * im, im);
}

/* Whether the plan lists checkpoint tensor `name` as skipped (not built by the engine). */
static __attribute__((unused)) bool fx_skipped(const fx *f, const char *name)
{
	for (size_t k = 0; k < shardmap_n_skipped(f->p); k++)
		if (strcmp(shardmap_skipped(f->p, k), name) == 0)
			return true;
	return false;
}

/* Rank r's replicated `name`: the whole source `src` (the checkpoint's name), byte for byte. */
static __attribute__((unused)) void repl_from(const fx *f, uint32_t r, const char *name,
                                              const char *src)
{
	int k = tm_find(f->m, src);
	assert_true(k >= 0);
	const st_desc *d = &f->m->d[k];
	uint64_t nb = wt_dtype_size(d->dtype);
	for (int j = 0; j < d->ndim; j++)
		nb *= (uint64_t)d->shape[j];
	assert_int_equal(info(f, r, name)->nbytes, nb);
	assert_memory_equal(out_bytes(f, r, name), f->m->data[k], nb);
}

/* repl_from of the checkpoint's tensor under its own name. */
static __attribute__((unused)) void repl(const fx *f, uint32_t r, const char *name)
{
	repl_from(f, r, name, name);
}

/* A tensor of a table: its name (or the tail of it), rows, and columns (0:
 * a vector). */
typedef struct fx_leaf {
	const char *leaf;
	int64_t n, k;
} fx_leaf;

/* The 16 tensors of a CLIP / SigLIP encoder block of width e, MLP width i,
 * as a checkpoint names them below the block's prefix. */
/* clang-format off */
#define FX_VIT_BLOCK_LEAVES(e, i)                                                   \
	{"layer_norm1.weight", e, 0},        {"layer_norm1.bias", e, 0},             \
	{"self_attn.q_proj.weight", e, e},   {"self_attn.q_proj.bias", e, 0},        \
	{"self_attn.k_proj.weight", e, e},   {"self_attn.k_proj.bias", e, 0},        \
	{"self_attn.v_proj.weight", e, e},   {"self_attn.v_proj.bias", e, 0},        \
	{"self_attn.out_proj.weight", e, e}, {"self_attn.out_proj.bias", e, 0},      \
	{"layer_norm2.weight", e, 0},        {"layer_norm2.bias", e, 0},             \
	{"mlp.fc1.weight", i, e},            {"mlp.fc1.bias", i, 0},                 \
	{"mlp.fc2.weight", e, i},            {"mlp.fc2.bias", e, 0}
/* The 15 tensors of a Whisper encoder layer of width e, MLP width i (Qwen2-Audio's and
 * Voxtral's audio towers: k_proj without a bias), below the layer's prefix. */
#define FX_WHISPER_LAYER_LEAVES(e, i)                                               \
	{"self_attn.q_proj.weight", e, e},   {"self_attn.q_proj.bias", e, 0},        \
	{"self_attn.k_proj.weight", e, e},                                           \
	{"self_attn.v_proj.weight", e, e},   {"self_attn.v_proj.bias", e, 0},        \
	{"self_attn.out_proj.weight", e, e}, {"self_attn.out_proj.bias", e, 0},      \
	{"self_attn_layer_norm.weight", e, 0}, {"self_attn_layer_norm.bias", e, 0},  \
	{"fc1.weight", i, e},                {"fc1.bias", i, 0},                     \
	{"fc2.weight", e, i},                {"fc2.bias", e, 0},                     \
	{"final_layer_norm.weight", e, 0},   {"final_layer_norm.bias", e, 0}
/* The 16 tensors of a BERT / RoBERTa encoder layer of width e, intermediate width i, below
 * encoder.layer.N. */
#define FX_BERT_LAYER_LEAVES(e, i)                                                  \
	{"attention.self.query.weight", e, e},   {"attention.self.query.bias", e, 0},    \
	{"attention.self.key.weight", e, e},     {"attention.self.key.bias", e, 0},      \
	{"attention.self.value.weight", e, e},   {"attention.self.value.bias", e, 0},    \
	{"attention.output.dense.weight", e, e}, {"attention.output.dense.bias", e, 0},  \
	{"attention.output.LayerNorm.weight", e, 0},                                     \
	{"attention.output.LayerNorm.bias", e, 0},                                       \
	{"intermediate.dense.weight", i, e},     {"intermediate.dense.bias", i, 0},      \
	{"output.dense.weight", e, i},           {"output.dense.bias", e, 0},            \
	{"output.LayerNorm.weight", e, 0},       {"output.LayerNorm.bias", e, 0}
/* clang-format on */

/* Rank r's ViT encoder block `blk` at TP T (CLIP / SigLIP as vLLM's clip.py and
 * siglip.py cut them): qkv_proj weight and bias = [q_r; k_r; v_r] rows, out_proj
 * columns, fc1 rows (weight and bias), fc2 columns, the rest replicated. vb: the
 * block's name prefix with a %d for blk; ve: width, vi: MLP width. */
static __attribute__((unused)) void fx_vit_block(const fx *f, uint32_t T, uint32_t r,
                                                 const char *vb, int blk, int64_t ve, int64_t vi)
{
	int64_t vl = ve / T, il = vi / T; /* q (k, v) rows: VH/T heads of ve/VH; MLP rows */
	char p[160], n[200], a[200];
	snprintf(p, sizeof(p), vb, blk);
	static const char *const qkv[] = {"q", "k", "v"};
	for (int w = 0; w < 2; w++) {
		const char *leaf = w ? "bias" : "weight";
		snprintf(n, sizeof(n), "%sself_attn.qkv_proj.%s", p, leaf);
		if (w)
			shp(f, r, n, 1, 3 * vl, 0, 0);
		else
			shp(f, r, n, 2, 3 * vl, ve, 0);
		for (int q = 0; q < 3; q++) {
			snprintf(a, sizeof(a), "%sself_attn.%s_proj.%s", p, qkv[q], leaf);
			rows_at(f, r, n, q * vl, a, r * vl, vl);
		}
	}
	snprintf(n, sizeof(n), "%sself_attn.out_proj.weight", p);
	cols_of(f, r, T, n, n, ve, ve);
	snprintf(n, sizeof(n), "%smlp.fc1.weight", p);
	shp(f, r, n, 2, il, ve, 0);
	rows_at(f, r, n, 0, n, r * il, il);
	snprintf(n, sizeof(n), "%smlp.fc1.bias", p);
	shp(f, r, n, 1, il, 0, 0);
	rows_at(f, r, n, 0, n, r * il, il);
	snprintf(n, sizeof(n), "%smlp.fc2.weight", p);
	cols_of(f, r, T, n, n, ve, vi);
	static const char *const rep[] = {"self_attn.out_proj.bias", "mlp.fc2.bias",
	                                  "layer_norm1.weight",      "layer_norm1.bias",
	                                  "layer_norm2.weight",      "layer_norm2.bias"};
	for (size_t k = 0; k < sizeof(rep) / sizeof(rep[0]); k++) {
		snprintf(n, sizeof(n), "%s%s", p, rep[k]);
		repl(f, r, n);
	}
}

/* Rank r's SigLIP tower of three blocks built up to a feature layer of -2 (LLaVA's towers,
 * init_vision_tower_for_llava): blocks 0 and 1 as fx_vit_block, block 2 and post_layernorm not
 * built, no class token, the patch bias and the position table whole. vt: the tower's prefix
 * (".../vision_model."), vb: its block prefix with a %d. */
static __attribute__((unused)) void fx_siglip_tower2(const fx *f, uint32_t T, uint32_t r,
                                                     const char *vt, const char *vb, int64_t ve,
                                                     int64_t vi)
{
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, vb, blk, ve, vi);
	static const char *const gone[] = {"encoder.layers.2.self_attn.qkv_proj.weight",
	                                   "post_layernorm.weight", "embeddings.class_embedding"};
	static const char *const whole[] = {"embeddings.patch_embedding.bias",
	                                    "embeddings.position_embedding.weight"};
	char n[200];
	for (size_t k = 0; k < sizeof(gone) / sizeof(gone[0]); k++) {
		snprintf(n, sizeof(n), "%s%s", vt, gone[k]);
		assert_int_equal(tm_ix(f->p, r, n), -1);
	}
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++) {
		snprintf(n, sizeof(n), "%s%s", vt, whole[k]);
		repl(f, r, n);
	}
}

/* A SigLIP tower's attention-pooling head under prefix ph (SiglipMultiheadAttentionPoolingHead):
 * probe [1, 1, ve], the MultiheadAttention's in / out projections, layernorm, the MLP. */
static __attribute__((unused)) void fx_add_siglip_head(tm_model *m, const char *ph, int64_t ve,
                                                       int64_t vi)
{
	static const struct {
		const char *leaf;
		int rows, cols; /* multiples: 1 = ve, 3 = 3 ve, 2 = vi; cols 0: a vector */
	} t[] = {{"attention.in_proj_weight", 3, 1},
	         {"attention.in_proj_bias", 3, 0},
	         {"attention.out_proj.weight", 1, 1},
	         {"attention.out_proj.bias", 1, 0},
	         {"layernorm.weight", 1, 0},
	         {"layernorm.bias", 1, 0},
	         {"mlp.fc1.weight", 2, 1},
	         {"mlp.fc1.bias", 2, 0},
	         {"mlp.fc2.weight", 1, 2},
	         {"mlp.fc2.bias", 1, 0}};
	char n[200];
	snprintf(n, sizeof(n), "%sprobe", ph);
	tm_add(m, n, WT_DTYPE_INVALID, 3, 1, 1, ve);
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		int64_t d0 = t[k].rows == 2 ? vi : t[k].rows * ve;
		int64_t d1 = t[k].cols == 2 ? vi : t[k].cols * ve;
		snprintf(n, sizeof(n), "%s%s", ph, t[k].leaf);
		tm_add2(m, n, d0, d1);
	}
}

/* Rank r's pooling head at TP T: its MLP's fc1 (and bias) by rows, fc2 by columns, the rest
 * whole. */
static __attribute__((unused)) void fx_siglip_head_is(const fx *f, uint32_t T, uint32_t r,
                                                      const char *ph, int64_t ve, int64_t vi)
{
	int64_t il = vi / T;
	char n[200];
	snprintf(n, sizeof(n), "%smlp.fc1.weight", ph);
	shp(f, r, n, 2, il, ve, 0);
	rows_at(f, r, n, 0, n, r * il, il);
	snprintf(n, sizeof(n), "%smlp.fc1.bias", ph);
	shp(f, r, n, 1, il, 0, 0);
	rows_at(f, r, n, 0, n, r * il, il);
	snprintf(n, sizeof(n), "%smlp.fc2.weight", ph);
	cols_of(f, r, T, n, n, ve, vi);
	static const char *const whole[] = {"probe",
	                                    "attention.in_proj_weight",
	                                    "attention.in_proj_bias",
	                                    "attention.out_proj.weight",
	                                    "attention.out_proj.bias",
	                                    "layernorm.weight",
	                                    "layernorm.bias",
	                                    "mlp.fc2.bias"};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++) {
		snprintf(n, sizeof(n), "%s%s", ph, whole[k]);
		repl(f, r, n);
	}
	snprintf(n, sizeof(n), "%sprobe", ph);
	shp(f, r, n, 3, 1, 1, ve);
	snprintf(n, sizeof(n), "%sattention.in_proj_weight", ph);
	shp(f, r, n, 2, 3 * ve, ve, 0);
}

/* Rank r's Pixtral encoder block `blk` at TP T (Mistral 3's and LLaVA's Pixtral-HF towers, as
 * vLLM's pixtral.py cuts them): attention.q/k/v_proj fused into qkv_proj by heads, o_proj by
 * columns, feed_forward.gate/up_proj merged into gate_up_proj by rows, down_proj by columns,
 * the two RMSNorms replicated. vb: the block's name prefix with a %d for blk; ve: width, vi:
 * MLP width. */
static __attribute__((unused)) void fx_pixtral_block(const fx *f, uint32_t T, uint32_t r,
                                                     const char *vb, int blk, int64_t ve,
                                                     int64_t vi)
{
	char p[160];
	snprintf(p, sizeof(p), vb, blk);
	int64_t vl = ve / T, il = vi / T; /* q (k, v) rows: VH/T heads of ve/VH; MLP rows */
	char n[200], a[200], b[200], c[200];
	snprintf(n, sizeof(n), "%sattention.qkv_proj.weight", p);
	snprintf(a, sizeof(a), "%sattention.q_proj.weight", p);
	snprintf(b, sizeof(b), "%sattention.k_proj.weight", p);
	snprintf(c, sizeof(c), "%sattention.v_proj.weight", p);
	shp(f, r, n, 2, 3 * vl, ve, 0);
	rows_at(f, r, n, 0, a, r * vl, vl);
	rows_at(f, r, n, vl, b, r * vl, vl);
	rows_at(f, r, n, 2 * vl, c, r * vl, vl);
	snprintf(n, sizeof(n), "%sattention.o_proj.weight", p);
	cols_of(f, r, T, n, n, ve, ve);
	snprintf(n, sizeof(n), "%sfeed_forward.gate_up_proj.weight", p);
	snprintf(a, sizeof(a), "%sfeed_forward.gate_proj.weight", p);
	snprintf(b, sizeof(b), "%sfeed_forward.up_proj.weight", p);
	shp(f, r, n, 2, 2 * il, ve, 0);
	rows_at(f, r, n, 0, a, r * il, il);
	rows_at(f, r, n, il, b, r * il, il);
	snprintf(n, sizeof(n), "%sfeed_forward.down_proj.weight", p);
	cols_of(f, r, T, n, n, ve, vi);
	snprintf(n, sizeof(n), "%sattention_norm.weight", p);
	repl(f, r, n);
	snprintf(n, sizeof(n), "%sffn_norm.weight", p);
	repl(f, r, n);
}

/* The multimodal families' checkpoint name layouts (Gemma 3, Mistral 3, LLaVA): LAY_TEXT the
 * text model alone, LAY_V450 the released names (language_model.* for the language model),
 * LAY_HF5 transformers >= 4.52's (model.language_model.*, model.<tower>, lm_head). */
typedef enum { LAY_TEXT, LAY_V450, LAY_HF5 } lay;

/* Checkpoint name of canonical name c (the text model's names for the language model, the
 * released names for the rest) in layout y. */
static __attribute__((unused)) void mm_ck_name(char *b, size_t n, const char *c, lay y)
{
	bool lm = strncmp(c, "model.", 6) == 0 || strncmp(c, "lm_head.", 8) == 0;
	if (y == LAY_V450 && lm)
		snprintf(b, n, "language_model.%s", c);
	else if (y == LAY_HF5 && strncmp(c, "model.", 6) == 0)
		snprintf(b, n, "model.language_model.%s", c + 6);
	else if (y == LAY_HF5 && !lm)
		snprintf(b, n, "model.%s", c);
	else
		snprintf(b, n, "%s", c);
}

/* Add 2-D (b > 0) or 1-D tensor c [a, b] to m under its name in layout y. */
static __attribute__((unused)) void mm_add(tm_model *m, lay y, const char *c, int64_t a, int64_t b)
{
	char n[200];
	mm_ck_name(n, sizeof(n), c, y);
	tm_add2(m, n, a, b);
}

/* mm_add of prefix + leaf. */
static __attribute__((unused)) void mm_add_at(tm_model *m, lay y, const char *prefix,
                                              const char *leaf, int64_t a, int64_t b)
{
	char c[200];
	snprintf(c, sizeof(c), "%s%s", prefix, leaf);
	mm_add(m, y, c, a, b);
}

/* The vision tower under prefix vt in layout y, as the CLIP (clip: class embedding, a 2x2
 * patch embedding without bias, pre_layrnorm) or SigLIP (the patch embedding's bias)
 * checkpoints name it: embeddings of width ve with np positions, `blocks` encoder blocks of
 * MLP width vi (FX_VIT_BLOCK_LEAVES) and post_layernorm. */
static __attribute__((unused)) void mm_add_vit_at(tm_model *m, lay y, const char *vt, bool clip,
                                                  int64_t ve, int64_t vi, int64_t np, int blocks)
{
	const fx_leaf block[] = {FX_VIT_BLOCK_LEAVES(ve, vi)};
	char b[200];
	if (clip)
		mm_add_at(m, y, vt, "embeddings.class_embedding", ve, 0);
	char c[200];
	snprintf(c, sizeof(c), "%sembeddings.patch_embedding.weight", vt);
	mm_ck_name(b, sizeof(b), c, y);
	tm_add(m, b, WT_DTYPE_INVALID, 1, ve * 3 * 2 * 2, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[0] = ve;
	d->shape[1] = 3;
	d->shape[2] = d->shape[3] = 2;
	if (!clip)
		mm_add_at(m, y, vt, "embeddings.patch_embedding.bias", ve, 0);
	mm_add_at(m, y, vt, "embeddings.position_embedding.weight", np, ve);
	if (clip) {
		mm_add_at(m, y, vt, "pre_layrnorm.weight", ve, 0);
		mm_add_at(m, y, vt, "pre_layrnorm.bias", ve, 0);
	}
	for (int blk = 0; blk < blocks; blk++) {
		char p[100];
		snprintf(p, sizeof(p), "%sencoder.layers.%d.", vt, blk);
		for (size_t k = 0; k < sizeof(block) / sizeof(block[0]); k++)
			mm_add_at(m, y, p, block[k].leaf, block[k].n, block[k].k);
	}
	mm_add_at(m, y, vt, "post_layernorm.weight", ve, 0);
	mm_add_at(m, y, vt, "post_layernorm.bias", ve, 0);
}
/* mm_add_vit_at under "vision_tower.vision_model." (the multimodal LMs' towers). */
static __attribute__((unused)) void mm_add_vit(tm_model *m, lay y, bool clip, int64_t ve,
                                               int64_t vi, int64_t np, int blocks)
{
	mm_add_vit_at(m, y, "vision_tower.vision_model.", clip, ve, vi, np, blocks);
}

/* Every output of rank r of a equals the one of b (names, shapes, bytes); b's names
 * are a's with `strip` removed from the front (NULL: the same names). */
static __attribute__((unused)) void fx_same_rank(const fx *a, const fx *b, uint32_t r,
                                                 const char *strip)
{
	size_t na = shardmap_rank_n_tensors(a->p, r), nb = 0;
	for (size_t i = 0; i < na; i++) {
		const sm_out_info *t = shardmap_rank_tensor(a->p, r, i);
		const char *n = t->name;
		if (strip && strncmp(n, strip, strlen(strip)) != 0)
			continue;
		nb++;
		const sm_out_info *u = info(b, r, strip ? n + strlen(strip) : n);
		assert_int_equal(t->ndim, u->ndim);
		assert_int_equal(t->nbytes, u->nbytes);
		assert_int_equal(t->dtype, u->dtype);
		if (memcmp(a->pr->b[r][i], out_bytes(b, r, u->name), t->nbytes) != 0)
			fail_msg("rank %u '%s' differs", r, n);
	}
	assert_int_equal(nb, shardmap_rank_n_tensors(b->p, r));
}

/* Every output of rank r of q is t's under the name rename() gives it (dtype, shape, bytes), and t
 * has no other: a release layout (Tarsier2's, OpenCUA's names) against the family's own. `what`
 * names q's family in a failure. */
static __attribute__((unused)) void
fx_same_rank_renamed(const fx *q, const fx *t, uint32_t r,
                     void (*rename)(char *, size_t, const char *), const char *what)
{
	size_t nq = shardmap_rank_n_tensors(q->p, r);
	for (size_t i = 0; i < nq; i++) {
		const sm_out_info *u = shardmap_rank_tensor(q->p, r, i);
		char n[200];
		rename(n, sizeof(n), u->name);
		const sm_out_info *v = info(t, r, n);
		assert_int_equal(u->dtype, v->dtype);
		assert_int_equal(u->ndim, v->ndim);
		assert_memory_equal(u->shape, v->shape, sizeof(u->shape[0]) * (size_t)u->ndim);
		assert_int_equal(u->nbytes, v->nbytes);
		if (memcmp(q->pr->b[r][i], out_bytes(t, r, n), u->nbytes) != 0)
			fail_msg("rank %u '%s' differs from %s's '%s'", r, n, what, u->name);
	}
	assert_int_equal(shardmap_rank_n_tensors(t->p, r), nq);
}

/* The name layouts of one model give the same shards: m planned with cfg at TP T x EP P, every
 * rank byte for byte as o's (the other layout with the same cfg; NULL: none) and, under
 * `prefix`, as the language model alone (text with text_cfg). Takes the models. */
static __attribute__((unused)) void fx_same_layouts(tm_model *m, tm_model *o, const char *cfg,
                                                    tm_model *text, const char *text_cfg,
                                                    uint32_t T, uint32_t P, const char *prefix)
{
	fx a, b, t;
	fx_open(&a, m, cfg, T, P, 0, true);
	if (o)
		fx_open(&b, o, cfg, T, P, 0, true);
	fx_open(&t, text, text_cfg, T, P, 0, true);
	for (uint32_t r = 0; r < T * P; r++) {
		if (o)
			fx_same_rank(&a, &b, r, NULL);
		fx_same_rank(&a, &t, r, prefix);
	}
	fx_close(&a);
	if (o)
		fx_close(&b);
	fx_close(&t);
}

static __attribute__((unused)) void coverage(tm_model *m, const char *cfg, int64_t KV,
                                             const uint32_t (*lays)[2], size_t n)
{
	for (size_t k = 0; k < n; k++) {
		fx f;
		tm_model *copy = m;
		fx_open(&f, copy, cfg, lays[k][0], lays[k][1], 0, false);
		tm_check_coverage(f.c, f.p, KV);
		f.m = NULL;
		fx_close(&f);
	}
	tm_free(m);
}

/* Plan model m (freed) under cfg with layout l; the error code, its message in err. */
static __attribute__((unused)) int plan_err_at(tm_model *m, const char *cfg, const wt_layout *l,
                                               wt_errbuf *err)
{
	char *dir = tu_mkdtemp("smfam");
	assert_int_equal(tm_write(m, dir, cfg), 0);
	store *s;
	ckpt *c;
	sm_plan *p;
	int rv = tm_plan_q(dir, l, true, &s, &c, &p, err);
	tm_close(s, c, p);
	tm_free(m);
	tu_rmrf(dir);
	free(dir);
	return rv;
}

/* plan_err_at at TP 2. */
static __attribute__((unused)) int plan_err(tm_model *m, const char *cfg, wt_errbuf *err)
{
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	return plan_err_at(m, cfg, &l, err);
}

/* Model m (freed) under cfg with layout l is refused with code, the message naming a and b
 * (printed, so a test's log shows what a user would read). */
static __attribute__((unused)) void fx_refused_at(tm_model *m, const char *cfg, const wt_layout *l,
                                                  int code, const char *a, const char *b)
{
	wt_errbuf err = {0};
	int rv = plan_err_at(m, cfg, l, &err);
	printf("refused (%s): %s\n", wt_errname(rv), err.msg);
	assert_int_equal(rv, code);
	if (!strstr(err.msg, a) || !strstr(err.msg, b))
		fail_msg("'%s' lacks '%s' or '%s'", err.msg, a, b);
}

/* fx_refused_at at TP tp. */
static __attribute__((unused)) void fx_refused_tp(tm_model *m, const char *cfg, uint32_t tp,
                                                  int code, const char *a, const char *b)
{
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = tp;
	fx_refused_at(m, cfg, &l, code, a, b);
}

/* fx_refused_at at TP tp x EP ep. */
static __attribute__((unused)) void fx_refused_tp_ep(tm_model *m, const char *cfg, uint32_t tp,
                                                     uint32_t ep, int code, const char *a,
                                                     const char *b)
{
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = tp;
	l.ep_size = ep;
	fx_refused_at(m, cfg, &l, code, a, b);
}

/* fx_refused_at at TP 2. */
static __attribute__((unused)) void fx_refused(tm_model *m, const char *cfg, int code,
                                               const char *a, const char *b)
{
	fx_refused_tp(m, cfg, 2, code, a, b);
}

#include "test_shardmap_quant.h"

#endif
