/*
 * splade.c — BertSpladeSparseEmbeddingModel's head (c->bt_splade, family bert_splade), as vLLM's
 * bert.py runs it after BERT's encoder (bert.c): BertMLMHead on every token's last hidden state,
 * logits = decoder(layer_norm(gelu(dense x))) (cls.predictions.transform.dense / .LayerNorm,
 * cls.predictions.decoder [V, hid] with its bias; nn.GELU, exact), then SPLADESparsePooler:
 * log1p(relu(logits)) and the max over the tokens, the first left out when it is cls_token_id
 * and the last when it is sep_token_id (no token left: zeros). The output is [T + 1, V]: each
 * token's logits, then the pooled sparse embedding. Sharded: each rank's head copy over its own
 * residual stream, the logits averaged, the pooling over the average.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

/* An integer token id key (absent or null: -1, none). */
static int token_id(json_t *root, const char *key, int64_t *out, wt_errbuf *err)
{
	json_t *v = json_object_get(root, key);
	*out = -1;
	if (v == NULL || json_is_null(v))
		return WT_OK;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not a token id", key);
	*out = (int64_t)json_integer_value(v);
	return WT_OK;
}

int ref_cfg_splade(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	int rv = token_id(root, "cls_token_id", &c->sp_cls, err);
	if (rv == WT_OK)
		rv = token_id(root, "sep_token_id", &c->sp_sep, err);
	json_decref(root);
	return rv;
}

int ref_mlm_get(ref_set *s, const ref_cfg *c, ref_mlm *h, wt_errbuf *err)
{
	int rv;
	if ((rv = ref_getf(s, &h->dw, false, err, 2, c->hid, c->hid, 0,
	                   "cls.predictions.transform.dense.weight")) ||
	    (rv = ref_getf(s, &h->db, false, err, 1, c->hid, 0, 0,
	                   "cls.predictions.transform.dense.bias")) ||
	    (rv = ref_getf(s, &h->lw, false, err, 1, c->hid, 0, 0,
	                   "cls.predictions.transform.LayerNorm.weight")) ||
	    (rv = ref_getf(s, &h->lb, false, err, 1, c->hid, 0, 0,
	                   "cls.predictions.transform.LayerNorm.bias")) ||
	    (rv = ref_getf(s, &h->ow, false, err, 2, c->V, c->hid, 0,
	                   "cls.predictions.decoder.weight")) ||
	    (rv = ref_getf(s, &h->ob, false, err, 1, c->V, 0, 0, "cls.predictions.decoder.bias")))
		return rv;
	return WT_OK;
}

int ref_mlm_rows(const ref_cfg *c, const float *x, const ref_mlm *h, int64_t T, float div,
                 float *out, wt_errbuf *err)
{
	float *y = malloc((size_t)c->hid * sizeof(float)),
	      *lg = malloc((size_t)c->V * sizeof(float));
	if (y == NULL || lg == NULL) {
		free(y);
		free(lg);
		return wt_seterr(err, WT_ENOMEM, "SPLADE reference: out of memory");
	}
	for (int64_t t = 0; t < T; t++) {
		ref_linear(y, x + t * c->hid, h->dw, h->db, 1, c->hid, c->hid);
		ref_gelu(y, c->hid);
		ref_layernorm(y, y, h->lw, h->lb, 1, c->hid, (float)c->eps);
		ref_linear(lg, y, h->ow, h->ob, 1, c->hid, c->V);
		for (int64_t v = 0; v < c->V; v++)
			out[t * c->V + v] += lg[v] / div;
	}
	free(y);
	free(lg);
	return WT_OK;
}

void ref_splade_pool(const ref_cfg *c, const int64_t *tokens, int64_t T, float *out)
{
	int64_t s = T > 0 && tokens[0] == c->sp_cls ? 1 : 0, e = T;
	if (T > 0 && tokens[T - 1] == c->sp_sep)
		e = T - 1 > s ? T - 1 : s;
	float *row = out + T * c->V;
	for (int64_t v = 0; v < c->V; v++) {
		float m = 0.0f; /* log1p(relu(.)) >= 0: 0 is the max's floor and the empty row's */
		for (int64_t t = s; t < e; t++) {
			float l = out[t * c->V + v];
			float sc = log1pf(l > 0.0f ? l : 0.0f);
			m = sc > m ? sc : m;
		}
		row[v] = m;
	}
}
