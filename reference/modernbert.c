/*
 * modernbert.c — both reference paths for ModernBertModel (pre-norm encoder,
 * transformers' modeling_modernbert.py with attn_implementation "eager"):
 * tok_embeddings -> embeddings.norm, then per layer
 * x += attn.Wo(attn(rope(attn.Wqkv(attn_norm(x))))) (layer 0: no attn_norm) and
 * x += mlp.Wo(gelu(input) * gate), [input; gate] = mlp.Wi(mlp_norm(x)), then final_norm.
 * Attention is bidirectional; layer i is global (RoPE base global_rope_theta, every key)
 * when i % global_attn_every_n_layers == 0, else local (local_rope_theta, the keys within
 * local_attention / 2 of the query). Output: the last hidden state [n_tok, hid].
 *
 * Sharded (docs/format.md section 2.7, ModernBERT): tok_embeddings vocab-parallel; Wqkv
 * [q_r; k_r; v_r] with its bias; attn.Wo and mlp.Wo row-parallel (column slices, partial sums
 * all-reduced, bias added once); mlp.Wi whole on every rank (vLLM's nn.Linear): each rank
 * computes gelu(input) * gate over all of intermediate_size and feeds its own slice of it to
 * its mlp.Wo columns. Each rank keeps its own residual stream and applies its own replicated
 * LayerNorms and biases; the output is the mean over ranks, so a wrong replica shows.
 *
 * ModernBertForSequenceClassification (c->mb_cls): the encoder under model., then the head on
 * the last hidden state, pooled by classifier_pooling (token 0 or the mean), head.dense, GELU,
 * head.norm, classifier: one more output row holding the n_labels logits then zeros (each
 * rank its own head on its own stream, averaged).
 *
 * ModernBertForTokenClassification (c->mb_tok): the encoder under model., then on every
 * token head.dense (with mb_cls_bias), GELU (classifier_activation's default, the one the
 * reference runs), head.norm, classifier: each row holds its token's n_labels logits, then
 * zeros (each rank its own head on its own stream, averaged).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

/* The encoder's prefix: ModernBertForSequenceClassification keeps it under model. */
static const char *mb_prefix(const ref_cfg *c)
{
	return c->mb_cls || c->mb_tok ? "model." : "";
}

/* Work buffers of one pass: the fused q/k/v rows, Wi's output, the gated activation. */
typedef struct mb_work {
	float *qkv, *wi, *g, *gl;
} mb_work;

static int mb_work_alloc(mb_work *w, const ref_cfg *c, int64_t T, wt_errbuf *err)
{
	w->qkv = calloc((size_t)(T * 3 * c->hid), sizeof(float));
	w->wi = calloc((size_t)(T * 2 * c->I), sizeof(float));
	w->g = calloc((size_t)(T * c->I), sizeof(float));
	w->gl = calloc((size_t)(T * c->I), sizeof(float));
	if (!w->qkv || !w->wi || !w->g || !w->gl)
		return wt_seterr(err, WT_ENOMEM, "ModernBERT reference: out of memory");
	return WT_OK;
}

static void mb_work_free(mb_work *w)
{
	free(w->qkv);
	free(w->wi);
	free(w->g);
	free(w->gl);
}

/* y = LayerNorm m (m.weight, m.bias when norm_bias) of x. */
static int mb_norm(const ref_cfg *c, ref_set *s, float *y, const float *x, int64_t T, const char *m,
                   wt_errbuf *err)
{
	const float *w, *b = NULL;
	int rv = ref_getf(s, &w, false, err, 1, c->hid, 0, 0, "%s.weight", m);
	if (rv == WT_OK && c->mb_norm_bias)
		rv = ref_getf(s, &b, false, err, 1, c->hid, 0, 0, "%s.bias", m);
	if (rv == WT_OK)
		ref_layernorm(y, x, w, b, T, c->hid, (float)c->mb_eps);
	return rv;
}

/* x += v (+ bias m when on): the all-reduced partial sums plus a row-parallel bias. */
static int mb_add(const ref_cfg *c, ref_set *s, float *x, const float *v, int64_t T, bool on,
                  const char *m, wt_errbuf *err)
{
	const float *b = NULL;
	int rv = on ? ref_getf(s, &b, false, err, 1, c->hid, 0, 0, "%s", m) : WT_OK;
	for (int64_t t = 0; t < T && rv == WT_OK; t++)
		for (int64_t i = 0; i < c->hid; i++)
			x[t * c->hid + i] += v[t * c->hid + i] + (b ? b[i] : 0.0f);
	return rv;
}

/* o = attn.Wo (no bias) of the attention of `heads` heads over h (layer l, one rank). */
static int mb_attn(const ref_cfg *c, ref_set *s, ref_bufs *b, mb_work *w, const float *h, int64_t T,
                   int64_t l, int64_t heads, wt_errbuf *err)
{
	int64_t d = c->d, hl = heads * d;
	long long L = (long long)l;
	const char *P = mb_prefix(c);
	const float *wqkv, *bqkv = NULL, *wo;
	int rv = ref_getf(s, &wqkv, false, err, 2, 3 * hl, c->hid, 0,
	                  "%slayers.%lld.attn.Wqkv.weight", P, L);
	if (rv == WT_OK && c->mb_attn_bias)
		rv = ref_getf(s, &bqkv, false, err, 1, 3 * hl, 0, 0, "layers.%lld.attn.Wqkv.bias",
		              L);
	if (rv == WT_OK)
		rv = ref_getf(s, &wo, false, err, 2, c->hid, hl, 0, "%slayers.%lld.attn.Wo.weight",
		              P, L);
	if (rv != WT_OK)
		return rv;
	ref_linear(w->qkv, h, wqkv, bqkv, T, c->hid, 3 * hl);
	for (int64_t t = 0; t < T; t++) {
		memcpy(b->q + t * hl, w->qkv + t * 3 * hl, (size_t)hl * sizeof(float));
		memcpy(b->k + t * hl, w->qkv + t * 3 * hl + hl, (size_t)hl * sizeof(float));
		memcpy(b->v + t * hl, w->qkv + t * 3 * hl + 2 * hl, (size_t)hl * sizeof(float));
	}
	bool local = l % c->mb_every != 0;
	double theta = local ? c->mb_theta_local : c->mb_theta;
	ref_rope(b->q, T, heads, d, hl, theta);
	ref_rope(b->k, T, heads, d, hl, theta);
	int64_t kv_of[REF_MAX_HEADS];
	for (int64_t k = 0; k < heads; k++)
		kv_of[k] = k;
	const ref_attn_opt opt = {.causal = false, .bidir_window = local ? c->mb_window : 0};
	ref_attention(b->att, b->q, b->k, b->v, T, heads, heads, kv_of, d, &opt);
	ref_linear(b->o, b->att, wo, NULL, T, hl, c->hid);
	return WT_OK;
}

/* o = mlp.Wo (no bias) of rank r's slice (of TP) of gelu(input) * gate over h (layer l). */
static int mb_mlp(const ref_cfg *c, ref_set *s, ref_bufs *b, mb_work *w, const float *h, int64_t T,
                  int64_t l, int64_t r, int64_t TP, wt_errbuf *err)
{
	int64_t I = c->I, il = I / TP;
	long long L = (long long)l;
	const char *P = mb_prefix(c);
	const float *wi, *bi = NULL, *wo;
	int rv =
	    ref_getf(s, &wi, false, err, 2, 2 * I, c->hid, 0, "%slayers.%lld.mlp.Wi.weight", P, L);
	if (rv == WT_OK && c->mb_mlp_bias)
		rv =
		    ref_getf(s, &bi, false, err, 1, 2 * I, 0, 0, "%slayers.%lld.mlp.Wi.bias", P, L);
	if (rv == WT_OK)
		rv = ref_getf(s, &wo, false, err, 2, c->hid, il, 0, "%slayers.%lld.mlp.Wo.weight",
		              P, L);
	if (rv != WT_OK)
		return rv;
	ref_linear(w->wi, h, wi, bi, T, c->hid, 2 * I);
	for (int64_t t = 0; t < T; t++)
		memcpy(w->g + t * I, w->wi + t * 2 * I, (size_t)I * sizeof(float));
	ref_gelu(w->g, T * I);
	for (int64_t t = 0; t < T; t++)
		for (int64_t i = 0; i < il; i++)
			w->gl[t * il + i] =
			    w->g[t * I + r * il + i] * w->wi[t * 2 * I + I + r * il + i];
	ref_linear(b->o, w->gl, wo, NULL, T, il, c->hid);
	return WT_OK;
}

/* h = the input of layer l's attention (pass 0) or MLP (pass 1) from residual x. */
static int mb_block_in(const ref_cfg *c, ref_set *s, float *h, const float *x, int64_t T, int64_t l,
                       int pass, wt_errbuf *err)
{
	char m[64];
	if (pass == 0 && l == 0) { /* attn_norm is an Identity */
		memcpy(h, x, (size_t)(T * c->hid) * sizeof(float));
		return WT_OK;
	}
	snprintf(m, sizeof(m), "%slayers.%lld.%s", mb_prefix(c), (long long)l,
	         pass ? "mlp_norm" : "attn_norm");
	return mb_norm(c, s, h, x, T, m, err);
}

/* x += block output of layer l, pass 0 (attention) or 1 (MLP), over TP rank sets (TP 1: the
 * checkpoint); xs holds each rank's residual stream. */
static int mb_pass(const ref_cfg *c, ref_set *sets, int64_t TP, float *xs, int64_t T, int64_t l,
                   int pass, ref_bufs *b, mb_work *w, wt_errbuf *err)
{
	size_t n = (size_t)(T * c->hid);
	int rv = WT_OK;
	memset(b->acc, 0, n * sizeof(float));
	for (int64_t r = 0; r < TP && rv == WT_OK; r++) {
		rv = mb_block_in(c, &sets[r], b->h, xs + (size_t)r * n, T, l, pass, err);
		if (rv == WT_OK)
			rv = pass ? mb_mlp(c, &sets[r], b, w, b->h, T, l, r, TP, err)
			          : mb_attn(c, &sets[r], b, w, b->h, T, l, c->H / TP, err);
		for (size_t i = 0; i < n && rv == WT_OK; i++)
			b->acc[i] += b->o[i];
	}
	char m[64];
	snprintf(m, sizeof(m), "%slayers.%lld.%s.Wo.bias", mb_prefix(c), (long long)l,
	         pass ? "mlp" : "attn");
	for (int64_t r = 0; r < TP && rv == WT_OK; r++)
		rv = mb_add(c, &sets[r], xs + (size_t)r * n, b->acc, T,
		            pass ? c->mb_mlp_bias : c->mb_attn_bias, m, err);
	return rv;
}

/* Rank r's rows >= V of the padded vocabulary must be zero. */
static int mb_padding(const ref_cfg *c, const float *e, int64_t Vl, int64_t r, wt_errbuf *err)
{
	int64_t first = c->V - r * Vl;
	for (int64_t row = first < 0 ? 0 : first; row < Vl; row++)
		for (int64_t i = 0; i < c->hid; i++)
			if (e[row * c->hid + i] != 0.0f)
				return wt_seterr(err, WT_ECORRUPT,
				                 "rank %lld 'embeddings.tok_embeddings.weight': "
				                 "padding row %lld is not zero",
				                 (long long)r, (long long)row);
	return WT_OK;
}

/* The sequence classifier's head over the final hidden state y [T, hid] (each rank its own):
 * pooled (token 0 with classifier_pooling cls, the mean of the tokens with mean), head.dense,
 * GELU, head.norm, classifier: out (hid floats) holds the n_labels logits then zeros; pool
 * is hid floats of scratch. */
static int mb_head(const ref_cfg *c, ref_set *s, const float *y, int64_t T, float *pool, float *out,
                   wt_errbuf *err)
{
	const float *dw, *db = NULL, *cw, *cb;
	int rv = ref_getf(s, &dw, false, err, 2, c->hid, c->hid, 0, "head.dense.weight");
	if (rv == WT_OK && c->mb_cls_bias)
		rv = ref_getf(s, &db, false, err, 1, c->hid, 0, 0, "head.dense.bias");
	if (rv == WT_OK)
		rv = ref_getf(s, &cw, false, err, 2, c->n_labels, c->hid, 0, "classifier.weight");
	if (rv == WT_OK)
		rv = ref_getf(s, &cb, false, err, 1, c->n_labels, 0, 0, "classifier.bias");
	if (rv != WT_OK)
		return rv;
	for (int64_t i = 0; i < c->hid; i++) {
		float acc = 0.0f;
		for (int64_t t = 0; t < (c->mb_pool_mean ? T : 1); t++)
			acc += y[t * c->hid + i];
		pool[i] = c->mb_pool_mean ? acc / (float)T : acc;
	}
	ref_linear(out, pool, dw, db, 1, c->hid, c->hid);
	ref_gelu(out, c->hid);
	if ((rv = mb_norm(c, s, out, out, 1, "head.norm", err)))
		return rv;
	memcpy(pool, out, (size_t)c->hid * sizeof(float));
	memset(out, 0, (size_t)c->hid * sizeof(float));
	ref_linear(out, pool, cw, cb, 1, c->hid, c->n_labels);
	return WT_OK;
}

/* The token classifier's head on every row of y [T, hid] (one rank's): head.dense, GELU,
 * head.norm, classifier; out[t] += its n_labels logits / div (the rest of each hid-wide row
 * untouched); x and z are hid floats of scratch each. */
static int mb_tok_rows(const ref_cfg *c, ref_set *s, const float *y, int64_t T, float div, float *x,
                       float *z, float *out, wt_errbuf *err)
{
	const float *dw, *db = NULL, *cw, *cb;
	int rv = ref_getf(s, &dw, false, err, 2, c->hid, c->hid, 0, "head.dense.weight");
	if (rv == WT_OK && c->mb_cls_bias)
		rv = ref_getf(s, &db, false, err, 1, c->hid, 0, 0, "head.dense.bias");
	if (rv == WT_OK)
		rv = ref_getf(s, &cw, false, err, 2, c->n_labels, c->hid, 0, "classifier.weight");
	if (rv == WT_OK)
		rv = ref_getf(s, &cb, false, err, 1, c->n_labels, 0, 0, "classifier.bias");
	for (int64_t t = 0; t < T && rv == WT_OK; t++) {
		ref_linear(x, y + t * c->hid, dw, db, 1, c->hid, c->hid);
		ref_gelu(x, c->hid);
		if ((rv = mb_norm(c, s, x, x, 1, "head.norm", err)) != WT_OK)
			break;
		ref_linear(z, x, cw, cb, 1, c->hid, c->n_labels);
		for (int64_t i = 0; i < c->n_labels; i++)
			out[t * c->hid + i] += z[i] / div;
	}
	return rv;
}

/* Both paths: TP rank sets (TP 1 and Vl = V: the checkpoint). */
static int mb_forward(const ref_cfg *c, ref_set *sets, int64_t TP, int64_t Vl,
                      const int64_t *tokens, int64_t T, ref_bufs *b, float *out, wt_errbuf *err)
{
	size_t n = (size_t)(T * c->hid);
	float *xs = calloc(n * (size_t)TP, sizeof(float));
	mb_work w = {0};
	int rv = xs ? mb_work_alloc(&w, c, T, err)
	            : wt_seterr(err, WT_ENOMEM, "ModernBERT reference: out of memory");
	memset(b->acc, 0, n * sizeof(float));
	for (int64_t r = 0; r < TP && rv == WT_OK; r++) { /* vocab-parallel, all-reduced */
		const float *e;
		rv = ref_getf(&sets[r], &e, false, err, 2, Vl, c->hid, 0,
		              "%sembeddings.tok_embeddings.weight", mb_prefix(c));
		if (rv == WT_OK)
			rv = mb_padding(c, e, Vl, r, err);
		for (int64_t t = 0; t < T && rv == WT_OK; t++) {
			int64_t row = tokens[t] - r * Vl;
			if (row >= 0 && row < Vl)
				for (int64_t i = 0; i < c->hid; i++)
					b->acc[t * c->hid + i] += e[row * c->hid + i];
		}
	}
	for (int64_t r = 0; r < TP && rv == WT_OK; r++)
		rv = mb_norm(c, &sets[r], xs + (size_t)r * n, b->acc, T,
		             c->mb_cls || c->mb_tok ? "model.embeddings.norm" : "embeddings.norm",
		             err);
	for (int64_t l = 0; l < c->L && rv == WT_OK; l++)
		for (int pass = 0; pass < 2 && rv == WT_OK; pass++)
			rv = mb_pass(c, sets, TP, xs, T, l, pass, b, &w, err);
	size_t nh = c->mb_cls ? (size_t)c->hid : 0;
	if (rv == WT_OK)
		memset(out, 0, (n + nh) * sizeof(float));
	for (int64_t r = 0; r < TP && rv == WT_OK; r++) {
		rv = mb_norm(c, &sets[r], b->y, xs + (size_t)r * n, T,
		             c->mb_cls || c->mb_tok ? "model.final_norm" : "final_norm", err);
		if (rv == WT_OK && c->mb_tok)
			rv = mb_tok_rows(c, &sets[r], b->y, T, (float)TP, b->row, b->h, out, err);
		for (size_t i = 0; i < n && rv == WT_OK && !c->mb_tok; i++)
			out[i] += b->y[i] / (float)TP;
		if (rv == WT_OK && c->mb_cls)
			rv = mb_head(c, &sets[r], b->y, T, b->row, b->h, err);
		for (size_t i = 0; i < nh && rv == WT_OK; i++)
			out[n + i] += b->h[i] / (float)TP;
	}
	mb_work_free(&w);
	free(xs);
	return rv;
}

int ref_modernbert_full(const ref_cfg *c, ref_set *s, const int64_t *tokens, int64_t T, ref_bufs *b,
                        float *out, wt_errbuf *err)
{
	return mb_forward(c, s, 1, c->V, tokens, T, b, out, err);
}

int ref_modernbert_sharded(const ref_cfg *c, ref_set *ranks, uint32_t TP, int64_t Vl,
                           const int64_t *tokens, int64_t T, ref_bufs *b, float *out,
                           wt_errbuf *err)
{
	return mb_forward(c, ranks, (int64_t)TP, Vl, tokens, T, b, out, err);
}
