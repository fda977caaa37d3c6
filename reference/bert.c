/*
 * reference_bert.c — both reference paths for BertModel (post-norm encoder):
 * word + position + token-type embeddings -> LayerNorm, then per layer
 * x = LN(x + dense(attn(qkv(x)))), x = LN(x + out(gelu(inter(x)))), and the
 * pooler tanh(dense(x[0])). Attention is bidirectional, without RoPE.
 * Output: the last hidden state [n_tok, hid], then the pooler row.
 *
 * RobertaModel / XLMRobertaModel (c->roberta): the same encoder; token t's position is
 * pad_id + the count of non-pad tokens in 0..t, a pad token's pad_id (transformers'
 * create_position_ids_from_input_ids, vLLM's replace_roberta_positions); no pooler (vLLM
 * loads none, the planner skips it): the output is the last hidden state alone. Their sequence
 * classifiers (c->rb_cls): the same encoder, then RobertaClassificationHead on token 0 (dense,
 * tanh, out_proj): the last row holds its n_labels logits, then zeros. BERT's heads (encoder
 * under bert.): BertForSequenceClassification (c->bt_cls) the pooler, then classifier: the
 * last row holds its n_labels logits, then zeros; BertForTokenClassification (c->bt_tok) no
 * pooler, classifier on every token: each row holds its token's logits, then zeros.
 *
 * Sharded (docs/format.md section 2.7, BERT): word embeddings vocab-parallel; qkv_proj
 * [q_r; k_r; v_r] with KV = H; attention.output.dense and output.dense
 * row-parallel (column slices, partial sums all-reduced, bias added once);
 * intermediate.dense column-parallel with its bias split. Each rank keeps its
 * own copy of the residual stream and applies its own replicated LayerNorms,
 * biases, position/type embeddings and pooler, as a TP engine does; the output
 * is the mean over ranks, so a wrong replica on any rank shows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

typedef struct bert_w {
	const float *qkv, *qkv_b, *ao, *ao_b, *aln_w, *aln_b, *in, *in_b, *out, *out_b, *oln_w,
	    *oln_b;
} bert_w;

/* Layer l's tensors with T-way slices (T = 1: the checkpoint, q/k/v separately
 * fused into buf by the caller). */
static int bert_layer(ref_set *s, const ref_cfg *c, int64_t l, int64_t T, bert_w *w, wt_errbuf *err)
{
	int64_t hl = c->hid / T, il = c->I / T;
	long long L = (long long)l;
	int rv;
	if ((rv = ref_getf(s, &w->ao, false, err, 2, c->hid, hl, 0,
	                   "encoder.layer.%lld.attention.output.dense.weight", L)) ||
	    (rv = ref_getf(s, &w->ao_b, false, err, 1, c->hid, 0, 0,
	                   "encoder.layer.%lld.attention.output.dense.bias", L)) ||
	    (rv = ref_getf(s, &w->aln_w, false, err, 1, c->hid, 0, 0,
	                   "encoder.layer.%lld.attention.output.LayerNorm.weight", L)) ||
	    (rv = ref_getf(s, &w->aln_b, false, err, 1, c->hid, 0, 0,
	                   "encoder.layer.%lld.attention.output.LayerNorm.bias", L)) ||
	    (rv = ref_getf(s, &w->in, false, err, 2, il, c->hid, 0,
	                   "encoder.layer.%lld.intermediate.dense.weight", L)) ||
	    (rv = ref_getf(s, &w->in_b, false, err, 1, il, 0, 0,
	                   "encoder.layer.%lld.intermediate.dense.bias", L)) ||
	    (rv = ref_getf(s, &w->out, false, err, 2, c->hid, il, 0,
	                   "encoder.layer.%lld.output.dense.weight", L)) ||
	    (rv = ref_getf(s, &w->out_b, false, err, 1, c->hid, 0, 0,
	                   "encoder.layer.%lld.output.dense.bias", L)) ||
	    (rv = ref_getf(s, &w->oln_w, false, err, 1, c->hid, 0, 0,
	                   "encoder.layer.%lld.output.LayerNorm.weight", L)) ||
	    (rv = ref_getf(s, &w->oln_b, false, err, 1, c->hid, 0, 0,
	                   "encoder.layer.%lld.output.LayerNorm.bias", L)))
		return rv;
	return WT_OK;
}

/* Attention partial of one rank with hl = heads*d columns: b->o = att(x) ao^T. */
static void bert_attn_part(const ref_cfg *c, ref_bufs *b, const float *x, const float *wq,
                           const float *bq, const float *wk, const float *bk, const float *wv,
                           const float *bv, const float *ao, int64_t heads, int64_t T)
{
	int64_t d = c->d, hl = heads * d;
	int64_t kv_of[REF_MAX_HEADS];
	for (int64_t h = 0; h < heads; h++)
		kv_of[h] = h;
	ref_linear(b->q, x, wq, bq, T, c->hid, hl);
	ref_linear(b->k, x, wk, bk, T, c->hid, hl);
	ref_linear(b->v, x, wv, bv, T, c->hid, hl);
	const ref_attn_opt bidir = {.causal = false};
	ref_attention(b->att, b->q, b->k, b->v, T, heads, heads, kv_of, d, &bidir);
	ref_linear(b->o, b->att, ao, NULL, T, hl, c->hid);
}

/* x = LN(x + part + bias) */
static void bert_residual_ln(float *x, const float *part, const float *bias, const float *lw,
                             const float *lb, int64_t T, int64_t hid, float eps)
{
	for (int64_t t = 0; t < T; t++)
		for (int64_t i = 0; i < hid; i++)
			x[t * hid + i] += part[t * hid + i] + bias[i];
	ref_layernorm(x, x, lw, lb, T, hid, eps);
}

/* Token t's row of the position table: t (BERT), or RoBERTa's (ref_bufs_alloc has checked
 * that pad_id + T is below max_position_embeddings). */
static int64_t bert_position(const ref_cfg *c, const int64_t *tokens, int64_t t, int64_t *seen)
{
	if (!c->roberta)
		return t;
	if (tokens[t] == c->pad_id)
		return c->pad_id;
	return c->pad_id + ++*seen;
}

/* The output head: BERT's pooler (dense, tanh), a RoBERTa sequence classifier's
 * RobertaClassificationHead (dense, tanh, out_proj to n_labels), BERT's heads' pooler and
 * classifier (bt_cls) or classifier alone (bt_tok); RobertaModel has none. */
typedef struct bert_hd {
	const float *w, *b, *ow, *ob;
	ref_mlm mlm; /* bt_splade's masked-LM head (splade.c) */
} bert_hd;

static int bert_head_get(ref_set *s, const ref_cfg *c, bert_hd *h, wt_errbuf *err)
{
	const char *m = c->roberta ? "classifier.dense" : "pooler.dense";
	const char *o = c->roberta ? "classifier.out_proj" : "classifier";
	bool pool = c->roberta ? c->rb_cls : !c->bt_tok && !c->bt_splade;
	memset(h, 0, sizeof(*h));
	int rv;
	if (c->bt_splade)
		return ref_mlm_get(s, c, &h->mlm, err);
	if (pool && ((rv = ref_getf(s, &h->w, false, err, 2, c->hid, c->hid, 0, "%s.weight", m)) ||
	             (rv = ref_getf(s, &h->b, false, err, 1, c->hid, 0, 0, "%s.bias", m))))
		return rv;
	if ((c->rb_cls || c->bt_cls || c->bt_tok) &&
	    ((rv = ref_getf(s, &h->ow, false, err, 2, c->n_labels, c->hid, 0, "%s.weight", o)) ||
	     (rv = ref_getf(s, &h->ob, false, err, 1, c->n_labels, 0, 0, "%s.bias", o))))
		return rv;
	return WT_OK;
}

static int bert_embed_rest(ref_set *s, const ref_cfg *c, const int64_t *tokens, int64_t T, float *x,
                           bert_hd *hd, wt_errbuf *err)
{
	const float *pos, *typ, *lw, *lb;
	int rv;
	if ((rv = ref_getf(s, &pos, false, err, 2, c->max_pos, c->hid, 0,
	                   "embeddings.position_embeddings.weight")) ||
	    (rv = ref_getf(s, &typ, false, err, 2, c->n_types, c->hid, 0,
	                   "embeddings.token_type_embeddings.weight")) ||
	    (rv = ref_getf(s, &lw, false, err, 1, c->hid, 0, 0, "embeddings.LayerNorm.weight")) ||
	    (rv = ref_getf(s, &lb, false, err, 1, c->hid, 0, 0, "embeddings.LayerNorm.bias")))
		return rv;
	if ((rv = bert_head_get(s, c, hd, err)))
		return rv;
	int64_t seen = 0;
	for (int64_t t = 0; t < T; t++) {
		const float *p = pos + bert_position(c, tokens, t, &seen) * c->hid;
		for (int64_t i = 0; i < c->hid; i++)
			x[t * c->hid + i] += p[i] + typ[i]; /* token type 0 */
	}
	ref_layernorm(x, x, lw, lb, T, c->hid, (float)c->eps);
	return WT_OK;
}

/* out (hid floats) = the head of token 0's state x: the pooler's row, or the classifier's
 * n_labels logits then zeros (tmp: hid floats of scratch). */
static void bert_pool(const ref_cfg *c, const float *x, const bert_hd *h, float *tmp, float *out)
{
	if ((c->roberta && !c->rb_cls) || c->bt_tok)
		return;
	ref_linear(out, x, h->w, h->b, 1, c->hid, c->hid);
	for (int64_t i = 0; i < c->hid; i++)
		out[i] = tanhf(out[i]);
	if (!c->rb_cls && !c->bt_cls)
		return;
	memcpy(tmp, out, (size_t)c->hid * sizeof(float));
	memset(out, 0, (size_t)c->hid * sizeof(float));
	ref_linear(out, tmp, h->ow, h->ob, 1, c->hid, c->n_labels);
}

/* Token classification (bt_tok): out[t] += the classifier's n_labels logits of x's row t
 * divided by div, for T rows of hid floats (the rest of each row untouched; y: hid floats of
 * scratch). */
static void bert_tok_rows(const ref_cfg *c, const float *x, const bert_hd *h, int64_t T, float div,
                          float *y, float *out)
{
	for (int64_t t = 0; t < T; t++) {
		ref_linear(y, x + t * c->hid, h->ow, h->ob, 1, c->hid, c->n_labels);
		for (int64_t i = 0; i < c->n_labels; i++)
			out[t * c->hid + i] += y[i] / div;
	}
}

int ref_bert_full(const ref_cfg *c, ref_set *s, const int64_t *tokens, int64_t T, ref_bufs *b,
                  float *out, wt_errbuf *err)
{
	const float *emb;
	bert_hd hd;
	int rv;
	if ((rv = ref_getf(s, &emb, false, err, 2, c->V, c->hid, 0,
	                   "embeddings.word_embeddings.weight")))
		return rv;
	for (int64_t t = 0; t < T; t++)
		memcpy(b->x + t * c->hid, emb + tokens[t] * c->hid, (size_t)c->hid * sizeof(float));
	if ((rv = bert_embed_rest(s, c, tokens, T, b->x, &hd, err)))
		return rv;
	for (int64_t l = 0; l < c->L; l++) {
		bert_w w;
		const float *q, *k, *v, *qb, *kb, *vb;
		long long L = (long long)l;
		if ((rv = bert_layer(s, c, l, 1, &w, err)) ||
		    (rv = ref_getf(s, &q, false, err, 2, c->hid, c->hid, 0,
		                   "encoder.layer.%lld.attention.self.query.weight", L)) ||
		    (rv = ref_getf(s, &k, false, err, 2, c->hid, c->hid, 0,
		                   "encoder.layer.%lld.attention.self.key.weight", L)) ||
		    (rv = ref_getf(s, &v, false, err, 2, c->hid, c->hid, 0,
		                   "encoder.layer.%lld.attention.self.value.weight", L)) ||
		    (rv = ref_getf(s, &qb, false, err, 1, c->hid, 0, 0,
		                   "encoder.layer.%lld.attention.self.query.bias", L)) ||
		    (rv = ref_getf(s, &kb, false, err, 1, c->hid, 0, 0,
		                   "encoder.layer.%lld.attention.self.key.bias", L)) ||
		    (rv = ref_getf(s, &vb, false, err, 1, c->hid, 0, 0,
		                   "encoder.layer.%lld.attention.self.value.bias", L)))
			return rv;
		bert_attn_part(c, b, b->x, q, qb, k, kb, v, vb, w.ao, c->H, T);
		bert_residual_ln(b->x, b->o, w.ao_b, w.aln_w, w.aln_b, T, c->hid, (float)c->eps);
		ref_linear(b->scratch, b->x, w.in, w.in_b, T, c->hid, c->I);
		ref_gelu(b->scratch, T * c->I);
		ref_linear(b->o, b->scratch, w.out, NULL, T, c->I, c->hid);
		bert_residual_ln(b->x, b->o, w.out_b, w.oln_w, w.oln_b, T, c->hid, (float)c->eps);
	}
	if (c->bt_tok) {
		memset(out, 0, (size_t)(T * c->hid) * sizeof(float));
		bert_tok_rows(c, b->x, &hd, T, 1.0f, b->y, out);
		return WT_OK;
	}
	if (c->bt_splade) {
		memset(out, 0, (size_t)((T + 1) * c->V) * sizeof(float));
		rv = ref_mlm_rows(c, b->x, &hd.mlm, T, 1.0f, out, err);
		if (rv == WT_OK)
			ref_splade_pool(c, tokens, T, out);
		return rv;
	}
	memcpy(out, b->x, (size_t)(T * c->hid) * sizeof(float));
	bert_pool(c, b->x, &hd, b->scratch, out + T * c->hid);
	return WT_OK;
}

/* Rows >= V of rank r's word embeddings must be zero. */
static int bert_padding(const ref_cfg *c, const float *e, int64_t Vl, uint32_t r, wt_errbuf *err)
{
	int64_t first = c->V - (int64_t)r * Vl;
	for (int64_t row = first < 0 ? 0 : first; row < Vl; row++)
		for (int64_t i = 0; i < c->hid; i++)
			if (e[row * c->hid + i] != 0.0f)
				return wt_seterr(
				    err, WT_ECORRUPT,
				    "rank %u 'embeddings.word_embeddings.weight': padding "
				    "row %lld (vocab row %lld >= vocab_size %lld) is not zero",
				    r, (long long)row, (long long)(r * Vl + row), (long long)c->V);
	return WT_OK;
}

int ref_bert_sharded(const ref_cfg *c, ref_set *ranks, uint32_t TP, int64_t Vl,
                     const int64_t *tokens, int64_t T, ref_bufs *b, float *out, wt_errbuf *err)
{
	size_t n = (size_t)(T * c->hid);
	int64_t Hl = c->H / TP, hl = Hl * c->d, il = c->I / TP;
	float *xs = calloc(n * TP, sizeof(float)); /* per-rank residual streams */
	bert_hd *hd = calloc(TP, sizeof(*hd));
	int rv = WT_OK;
	if (xs == NULL || hd == NULL) {
		rv = wt_seterr(err, WT_ENOMEM, "BERT reference: out of memory");
		goto out;
	}
	/* vocab-parallel word embeddings, all-reduced into b->acc */
	memset(b->acc, 0, n * sizeof(float));
	for (uint32_t r = 0; r < TP; r++) {
		const float *e;
		if ((rv = ref_getf(&ranks[r], &e, false, err, 2, Vl, c->hid, 0,
		                   "embeddings.word_embeddings.weight")) ||
		    (rv = bert_padding(c, e, Vl, r, err)))
			goto out;
		for (int64_t t = 0; t < T; t++) {
			int64_t row = tokens[t] - (int64_t)r * Vl;
			for (int64_t i = 0; i < c->hid; i++)
				b->acc[t * c->hid + i] +=
				    (row >= 0 && row < Vl) ? e[row * c->hid + i] : 0.0f;
		}
	}
	for (uint32_t r = 0; r < TP; r++) {
		memcpy(xs + r * n, b->acc, n * sizeof(float));
		if ((rv = bert_embed_rest(&ranks[r], c, tokens, T, xs + r * n, &hd[r], err)))
			goto out;
	}
	for (int64_t l = 0; l < c->L; l++) {
		for (int pass = 0; pass < 2; pass++) { /* 0: attention, 1: FFN */
			memset(b->acc, 0, n * sizeof(float));
			for (uint32_t r = 0; r < TP; r++) {
				bert_w w;
				const float *qkv, *qkv_b;
				float *x = xs + r * n;
				if ((rv = bert_layer(&ranks[r], c, l, TP, &w, err)))
					goto out;
				if (pass == 0) {
					if ((rv = ref_getf(&ranks[r], &qkv, false, err, 2, 3 * hl,
					                   c->hid, 0,
					                   "encoder.layer.%lld.attention."
					                   "self.qkv_proj.weight",
					                   (long long)l)) ||
					    (rv = ref_getf(
					         &ranks[r], &qkv_b, false, err, 1, 3 * hl, 0, 0,
					         "encoder.layer.%lld.attention.self.qkv_proj.bias",
					         (long long)l)))
						goto out;
					bert_attn_part(c, b, x, qkv, qkv_b, qkv + hl * c->hid,
					               qkv_b + hl, qkv + 2 * hl * c->hid,
					               qkv_b + 2 * hl, w.ao, Hl, T);
				} else {
					ref_linear(b->scratch, x, w.in, w.in_b, T, c->hid, il);
					ref_gelu(b->scratch, T * il);
					ref_linear(b->o, b->scratch, w.out, NULL, T, il, c->hid);
				}
				for (size_t i = 0; i < n; i++)
					b->acc[i] += b->o[i];
			}
			for (uint32_t r = 0; r < TP; r++) { /* each rank: its bias and LayerNorm */
				bert_w w;
				if ((rv = bert_layer(&ranks[r], c, l, TP, &w, err)))
					goto out;
				bert_residual_ln(xs + r * n, b->acc, pass ? w.out_b : w.ao_b,
				                 pass ? w.oln_w : w.aln_w, pass ? w.oln_b : w.aln_b,
				                 T, c->hid, (float)c->eps);
			}
		}
	}
	if (c->bt_splade) { /* each rank's head over its own stream, the logits averaged */
		memset(out, 0, (size_t)((T + 1) * c->V) * sizeof(float));
		for (uint32_t r = 0; r < TP && rv == WT_OK; r++)
			rv = ref_mlm_rows(c, xs + r * n, &hd[r].mlm, T, (float)TP, out, err);
		if (rv == WT_OK)
			ref_splade_pool(c, tokens, T, out);
		goto out;
	}
	bool head = (!c->roberta && !c->bt_tok) || c->rb_cls;
	memset(out, 0, (n + (head ? (size_t)c->hid : 0)) * sizeof(float));
	for (uint32_t r = 0; r < TP; r++) {
		if (c->bt_tok) /* each rank its own classifier copy over its own stream */
			bert_tok_rows(c, xs + r * n, &hd[r], T, (float)TP, b->y, out);
		for (size_t i = 0; i < n && !c->bt_tok; i++)
			out[i] += xs[r * n + i] / (float)TP;
		if (!head)
			continue;
		bert_pool(c, xs + r * n, &hd[r], b->scratch, b->y);
		for (int64_t i = 0; i < c->hid; i++)
			out[n + (size_t)i] += b->y[i] / (float)TP;
	}
out:
	free(xs);
	free(hd);
	return rv;
}
