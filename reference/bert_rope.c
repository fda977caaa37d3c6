/*
 * bert_rope.c — both reference paths for vLLM's bert_with_rope.py encoders: NomicBertModel
 * (c->brope 1, nomic_bert) and GteNewModel (c->brope 2, gte_new). Post-norm blocks:
 * word (+ token type 0's row when the table exists) embeddings -> embeddings.LayerNorm, then per
 * layer x = attn_ln(x + out_proj(attn(rope(qkv(x))))) and x = mlp_ln(x + down(act(gate x) * up
 * x)), attention bidirectional, rotate-half RoPE (base c->theta) on the first c->rot_dim dims
 * of each head. Nomic: act silu (activation_function swiglu), gate = mlp.fc12, up = mlp.fc11,
 * every Linear biased when c->br_bias (qkv_proj_bias). GTE: act exact GELU (vLLM's geglu),
 * [up; gate] = mlp.up_gate_proj without a bias, the other Linears biased. The output is the
 * last hidden state [T, hid] (vLLM's pooler picks token 0 or the mean of it); for
 * GteNewForSequenceClassification (c->br_cls; its encoder's new. dropped from the names as
 * bert. is) one more row: BertPooler tanh(pooler.dense(x[0])), then classifier: the n_labels
 * logits, then zeros (each rank its own pooler and classifier over its own stream, averaged).
 *
 * Full path: the checkpoint under its own names (Nomic: emb_ln, attn.Wqkv, norm1, norm2, mlp.fc*;
 * GTE: encoder.layer.{i}.attention.qkv_proj / o_proj, mlp.up_gate_proj). Sharded (docs/format.md
 * section 2.7): vLLM's names; word and token type tables vocab-parallel (padded rows, all-
 * reduced); qkv_proj [q_r; k_r; v_r]; gate_up_proj [gate_r; up_r] (its bias alike for Nomic);
 * out_proj and down_proj row-parallel (partial sums all-reduced, bias added once). Each rank
 * keeps its own residual stream and applies its own replicated LayerNorms and biases; the
 * output is the mean over ranks, so a wrong replica on any rank shows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

/* One layer's tensors on one rank (or the checkpoint), T-way slices. */
typedef struct br_w {
	const float *qkv, *qkv_b, *out, *out_b, *gate, *gate_b, *up, *up_b, *down, *down_b;
	const float *aln_w, *aln_b, *mln_w, *mln_b;
} br_w;

/* Work buffers: the fused q/k/v rows, the gate and up activations. */
typedef struct br_work {
	float *qkv, *g, *u;
} br_work;

/* The layer prefix: the checkpoint's (GTE: encoder.layer.) or vLLM's (encoder.layers.). */
static void br_prefix(const ref_cfg *c, bool ck, int64_t l, char *p, size_t cap)
{
	snprintf(p, cap, "encoder.%s.%lld.", ck && c->brope == 2 ? "layer" : "layers",
	         (long long)l);
}

/* weight / bias pair of module m (prefix p), the bias when `bias`. */
static int br_lin(ref_set *s, const char *p, const char *m, int64_t n, int64_t k, bool bias,
                  const float **w, const float **b, wt_errbuf *err)
{
	*b = NULL;
	int rv = ref_getf(s, w, false, err, 2, n, k, 0, "%s%s.weight", p, m);
	if (rv == WT_OK && bias)
		rv = ref_getf(s, b, false, err, 1, n, 0, 0, "%s%s.bias", p, m);
	return rv;
}

/* Layer l's gate / up halves: Nomic's checkpoint fc12 / fc11, GTE's checkpoint up_gate_proj
 * [up; gate], a rank's gate_up_proj [gate_r; up_r]. */
static int br_mlp_in(const ref_cfg *c, ref_set *s, bool ck, const char *p, int64_t il, br_w *w,
                     wt_errbuf *err)
{
	bool nb = c->brope == 1 && c->br_bias;
	int rv;
	if (ck && c->brope == 1)
		return (rv = br_lin(s, p, "mlp.fc12", il, c->hid, nb, &w->gate, &w->gate_b, err))
		           ? rv
		           : br_lin(s, p, "mlp.fc11", il, c->hid, nb, &w->up, &w->up_b, err);
	const float *gu, *gub;
	if ((rv = br_lin(s, p, ck ? "mlp.up_gate_proj" : "mlp.gate_up_proj", 2 * il, c->hid, nb,
	                 &gu, &gub, err)))
		return rv;
	const float *first = gu, *second = gu + il * c->hid;
	w->gate = ck ? second : first; /* GTE's checkpoint: [up; gate] */
	w->up = ck ? first : second;
	w->gate_b = gub;
	w->up_b = gub ? gub + il : NULL;
	return WT_OK;
}

static int br_layer(const ref_cfg *c, ref_set *s, bool ck, int64_t l, int64_t TP, br_w *w,
                    wt_errbuf *err)
{
	char p[64];
	int64_t hl = c->hid / TP, il = c->I / TP;
	bool g = c->brope == 2, b = g || c->br_bias;
	br_prefix(c, ck, l, p, sizeof(p));
	const char *qkv = !ck ? "attn.qkv_proj" : g ? "attention.qkv_proj" : "attn.Wqkv";
	const char *out = !ck ? "attn.out_proj" : g ? "attention.o_proj" : "attn.out_proj";
	const char *down = ck && !g ? "mlp.fc2" : "mlp.down_proj";
	const char *aln = ck && !g ? "norm1" : "attn_ln", *mln = ck && !g ? "norm2" : "mlp_ln";
	int rv;
	if ((rv = br_lin(s, p, qkv, 3 * hl, c->hid, b, &w->qkv, &w->qkv_b, err)) ||
	    (rv = br_lin(s, p, out, c->hid, hl, b, &w->out, &w->out_b, err)) ||
	    (rv = br_mlp_in(c, s, ck, p, il, w, err)) ||
	    (rv = br_lin(s, p, down, c->hid, il, b, &w->down, &w->down_b, err)) ||
	    (rv = ref_getf(s, &w->aln_w, false, err, 1, c->hid, 0, 0, "%s%s.weight", p, aln)) ||
	    (rv = ref_getf(s, &w->aln_b, false, err, 1, c->hid, 0, 0, "%s%s.bias", p, aln)) ||
	    (rv = ref_getf(s, &w->mln_w, false, err, 1, c->hid, 0, 0, "%s%s.weight", p, mln)) ||
	    (rv = ref_getf(s, &w->mln_b, false, err, 1, c->hid, 0, 0, "%s%s.bias", p, mln)))
		return rv;
	return WT_OK;
}

/* b->o = out_proj (no bias) of the attention of H / TP heads over x. */
static void br_attn(const ref_cfg *c, ref_bufs *b, br_work *wk, const br_w *w, const float *x,
                    int64_t T, int64_t TP)
{
	int64_t heads = c->H / TP, d = c->d, hl = heads * d;
	ref_linear(wk->qkv, x, w->qkv, w->qkv_b, T, c->hid, 3 * hl);
	for (int64_t t = 0; t < T; t++) {
		memcpy(b->q + t * hl, wk->qkv + t * 3 * hl, (size_t)hl * sizeof(float));
		memcpy(b->k + t * hl, wk->qkv + t * 3 * hl + hl, (size_t)hl * sizeof(float));
		memcpy(b->v + t * hl, wk->qkv + t * 3 * hl + 2 * hl, (size_t)hl * sizeof(float));
	}
	ref_rope_part(b->q, T, heads, d, c->rot_dim, hl, c->theta);
	ref_rope_part(b->k, T, heads, d, c->rot_dim, hl, c->theta);
	int64_t kv_of[REF_MAX_HEADS];
	for (int64_t h = 0; h < heads; h++)
		kv_of[h] = h;
	const ref_attn_opt bidir = {.causal = false};
	ref_attention(b->att, b->q, b->k, b->v, T, heads, heads, kv_of, d, &bidir);
	ref_linear(b->o, b->att, w->out, NULL, T, hl, c->hid);
}

/* b->o = down_proj (no bias) of act(gate x) * (up x), I / TP wide. */
static void br_mlp(const ref_cfg *c, ref_bufs *b, br_work *wk, const br_w *w, const float *x,
                   int64_t T, int64_t TP)
{
	int64_t il = c->I / TP;
	ref_linear(wk->g, x, w->gate, w->gate_b, T, c->hid, il);
	ref_linear(wk->u, x, w->up, w->up_b, T, c->hid, il);
	if (c->brope == 2)
		ref_gelu(wk->g, T * il);
	for (int64_t i = 0; i < T * il; i++) {
		float g = wk->g[i];
		if (c->brope == 1)
			g = g / (1.0f + expf(-g));
		wk->g[i] = g * wk->u[i];
	}
	ref_linear(b->o, wk->g, w->down, NULL, T, il, c->hid);
}

/* acc += rank r's rows of a vocab-parallel table (rows >= n must be zero) for ids[t]
 * (NULL: token type 0 for every token); rows per rank from the tensor. */
static int br_table(ref_set *s, const char *name, int64_t n, int64_t hid, int64_t r,
                    const int64_t *ids, int64_t T, float *acc, wt_errbuf *err)
{
	ref_tensor *t = ref_set_find(s, name);
	int64_t rows = t != NULL && t->ndim == 2 ? t->shape[0] : 0;
	const float *e;
	int rv = ref_getf(s, &e, false, err, 2, rows, hid, 0, "%s", name);
	for (int64_t row = n - r * rows < 0 ? 0 : n - r * rows; row < rows && rv == WT_OK; row++)
		for (int64_t i = 0; i < hid; i++)
			if (e[row * hid + i] != 0.0f)
				return wt_seterr(err, WT_ECORRUPT,
				                 "rank %lld '%s': padding row %lld is not zero",
				                 (long long)r, name, (long long)row);
	for (int64_t k = 0; k < T && rv == WT_OK; k++) {
		int64_t row = (ids ? ids[k] : 0) - r * rows;
		if (row >= 0 && row < rows)
			for (int64_t i = 0; i < hid; i++)
				acc[k * hid + i] += e[row * hid + i];
	}
	return rv;
}

/* Each rank's x = LayerNorm(x + acc + bias) with its own copies (pass 0: attention, 1: MLP). */
static int br_residual(const ref_cfg *c, ref_set *sets, bool ck, int64_t TP, float *xs,
                       const float *acc, int64_t T, int64_t l, int pass, wt_errbuf *err)
{
	size_t n = (size_t)(T * c->hid);
	for (int64_t r = 0; r < TP; r++) {
		br_w w;
		int rv = br_layer(c, &sets[r], ck, l, TP, &w, err);
		if (rv != WT_OK)
			return rv;
		const float *bias = pass ? w.down_b : w.out_b;
		float *x = xs + (size_t)r * n;
		for (int64_t t = 0; t < T; t++)
			for (int64_t i = 0; i < c->hid; i++)
				x[t * c->hid + i] += acc[t * c->hid + i] + (bias ? bias[i] : 0.0f);
		ref_layernorm(x, x, pass ? w.mln_w : w.aln_w, pass ? w.mln_b : w.aln_b, T, c->hid,
		              (float)c->eps);
	}
	return WT_OK;
}

/* The embeddings of every rank into xs: the all-reduced tables, then each rank's LayerNorm. */
static int br_embed(const ref_cfg *c, ref_set *sets, bool ck, int64_t TP, float *xs,
                    const int64_t *tokens, int64_t T, float *acc, wt_errbuf *err)
{
	size_t n = (size_t)(T * c->hid);
	const char *ln = ck && c->brope == 1 ? "emb_ln" : "embeddings.LayerNorm";
	int rv = WT_OK;
	memset(acc, 0, n * sizeof(float));
	for (int64_t r = 0; r < TP && rv == WT_OK; r++) {
		rv = br_table(&sets[r], "embeddings.word_embeddings.weight", c->V, c->hid, r,
		              tokens, T, acc, err);
		if (rv == WT_OK && c->n_types > 0)
			rv = br_table(&sets[r], "embeddings.token_type_embeddings.weight",
			              c->n_types, c->hid, r, NULL, T, acc, err);
	}
	for (int64_t r = 0; r < TP && rv == WT_OK; r++) {
		const float *w, *b;
		if ((rv = ref_getf(&sets[r], &w, false, err, 1, c->hid, 0, 0, "%s.weight", ln)) ||
		    (rv = ref_getf(&sets[r], &b, false, err, 1, c->hid, 0, 0, "%s.bias", ln)))
			break;
		ref_layernorm(xs + (size_t)r * n, acc, w, b, T, c->hid, (float)c->eps);
	}
	return rv;
}

/* GteNewForSequenceClassification's head (c->br_cls): each rank's BertPooler
 * tanh(pooler.dense(x[0])), then its classifier, over its own stream xs + r * n; the n_labels
 * logits averaged over the ranks into row (hid floats: the logits, then zeros). */
static int br_head(const ref_cfg *c, ref_set *sets, int64_t TP, const float *xs, size_t n,
                   ref_bufs *b, float *row, wt_errbuf *err)
{
	memset(row, 0, (size_t)c->hid * sizeof(float));
	for (int64_t r = 0; r < TP; r++) {
		const float *pw, *pb, *cw, *cb;
		int rv;
		if ((rv = br_lin(&sets[r], "", "pooler.dense", c->hid, c->hid, true, &pw, &pb,
		                 err)) ||
		    (rv = br_lin(&sets[r], "", "classifier", c->n_labels, c->hid, true, &cw, &cb,
		                 err)))
			return rv;
		ref_linear(b->y, xs + (size_t)r * n, pw, pb, 1, c->hid, c->hid); /* token 0 */
		for (int64_t i = 0; i < c->hid; i++)
			b->y[i] = tanhf(b->y[i]);
		ref_linear(b->scratch, b->y, cw, cb, 1, c->hid, c->n_labels);
		for (int64_t i = 0; i < c->n_labels; i++)
			row[i] += b->scratch[i] / (float)TP;
	}
	return WT_OK;
}

/* Both paths: TP rank sets (ck: TP 1, the checkpoint under its own names). */
static int br_forward(const ref_cfg *c, ref_set *sets, bool ck, int64_t TP, const int64_t *tokens,
                      int64_t T, ref_bufs *b, float *out, wt_errbuf *err)
{
	size_t n = (size_t)(T * c->hid);
	float *xs = calloc(n * (size_t)TP, sizeof(float));
	br_work wk = {calloc((size_t)(T * 3 * c->hid), sizeof(float)),
	              calloc((size_t)(T * c->I), sizeof(float)),
	              calloc((size_t)(T * c->I), sizeof(float))};
	int rv = xs && wk.qkv && wk.g && wk.u
	             ? br_embed(c, sets, ck, TP, xs, tokens, T, b->acc, err)
	             : wt_seterr(err, WT_ENOMEM, "BERT-with-RoPE reference: out of memory");
	for (int64_t l = 0; l < c->L && rv == WT_OK; l++)
		for (int pass = 0; pass < 2 && rv == WT_OK; pass++) {
			memset(b->acc, 0, n * sizeof(float));
			for (int64_t r = 0; r < TP && rv == WT_OK; r++) {
				br_w w;
				if ((rv = br_layer(c, &sets[r], ck, l, TP, &w, err)))
					break;
				if (pass == 0)
					br_attn(c, b, &wk, &w, xs + (size_t)r * n, T, TP);
				else
					br_mlp(c, b, &wk, &w, xs + (size_t)r * n, T, TP);
				for (size_t i = 0; i < n; i++)
					b->acc[i] += b->o[i];
			}
			if (rv == WT_OK)
				rv = br_residual(c, sets, ck, TP, xs, b->acc, T, l, pass, err);
		}
	if (rv == WT_OK)
		memset(out, 0, n * sizeof(float));
	for (int64_t r = 0; r < TP && rv == WT_OK; r++)
		for (size_t i = 0; i < n; i++)
			out[i] += xs[(size_t)r * n + i] / (float)TP;
	if (rv == WT_OK && c->br_cls)
		rv = br_head(c, sets, TP, xs, n, b, out + n, err);
	free(xs);
	free(wk.qkv);
	free(wk.g);
	free(wk.u);
	return rv;
}

int ref_bert_rope_full(const ref_cfg *c, ref_set *s, const int64_t *tokens, int64_t T, ref_bufs *b,
                       float *out, wt_errbuf *err)
{
	return br_forward(c, s, true, 1, tokens, T, b, out, err);
}

int ref_bert_rope_sharded(const ref_cfg *c, ref_set *ranks, uint32_t TP, const int64_t *tokens,
                          int64_t T, ref_bufs *b, float *out, wt_errbuf *err)
{
	return br_forward(c, ranks, false, (int64_t)TP, tokens, T, b, out, err);
}
