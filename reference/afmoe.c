/*
 * afmoe.c — AFMoE's tensors under the names the decoder passes read, and its gated attention
 * (vLLM's afmoe.py AfmoeAttention), for the full pass (the checkpoint) and the sharded one (a
 * tp rank) alike.
 *
 *   model.layers.{i}.pre_mlp_layernorm.    pre_feedforward_layernorm.   (Gemma 2's sandwich:
 *   model.layers.{i}.post_mlp_layernorm.   post_feedforward_layernorm.   c->sandwich)
 *   mlp.router.gate.                       mlp.gate.                   (the checkpoint's router;
 *                                                                       vLLM's rename, a rank's)
 *   mlp.expert_bias                        mlp.gate.e_score_correction_bias
 *
 * AfmoeAttention, hid -> hid, on Hl heads of d (GQA over KVl kv heads):
 *   q, k, v = x wq^T, x wk^T, x wv^T (no biases); gate = x wg^T [Hl*d];
 *   q / k per head RMSNorm (q_norm / k_norm [d], rms_norm_eps);
 *   on a sliding_attention layer rotate-half RoPE over the whole head and the sliding mask
 *   (key s seen from query t when t - s < sliding_window); on a full_attention layer neither;
 *   causal softmax at 1/sqrt(d); o = attn * sigmoid(gate); out = o wo^T.
 * A rank holds q_r / k_r / v_r fused in qkv_proj, gate_proj's rows of its heads (as q's) and
 * o_proj's columns: every step before o_proj is per head, so the caller sums the ranks' outputs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/afmoe.h"
#include "reference/reference.h"

#define LAYER "model.layers.%lld."

static const char *const af_tops[][2] = {{"", ""}};
static const char *const af_leaves[][2] = {
    {".pre_mlp_layernorm.", ".pre_feedforward_layernorm."},
    {".post_mlp_layernorm.", ".post_feedforward_layernorm."},
    {".mlp.router.gate.", ".mlp.gate."},
    {".mlp.expert_bias", ".mlp.gate.e_score_correction_bias"},
    {".mlp.e_score_correction_bias", ".mlp.gate.e_score_correction_bias"}, /* Pangu V2 */
};

bool ref_afmoe_named(ref_set *s)
{
	return ref_set_find(s, "model.layers.0.pre_mlp_layernorm.weight") != NULL;
}

static int af_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                  wt_errbuf *err)
{
	(void)x, (void)in;
	char name[512];
	int rv = ref_map_name(t->name, REF_NAME_MAP(af_tops), REF_NAME_MAP(af_leaves), name,
	                      sizeof(name), NULL, NULL, NULL, err);
	return rv != WT_OK ? rv : ref_set_add_as(out, name, t, err);
}

int ref_afmoe_rename(ref_set *in, ref_set *out, wt_errbuf *err)
{
	return ref_rename_each(in, out, af_one, NULL, false, err);
}

static float af_sigmoid(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

/* The q / k / v / gate / o weights of layer l for the heads of p. */
typedef struct af_w {
	const float *wq, *wk, *wv, *wg, *wo, *qn, *kn;
} af_w;

static int af_get(const ref_cfg *c, ref_set *s, int64_t l, const ref_q3n_part *p, af_w *w,
                  wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t d = c->d, hid = c->hid, qd = p->Hl * d, kvd = p->KVl * d;
	int rv;
	if (p->ckpt) {
		if ((rv = ref_getf(s, &w->wq, false, err, 2, qd, hid, 0,
		                   LAYER "self_attn.q_proj.weight", L)) ||
		    (rv = ref_getf(s, &w->wk, false, err, 2, kvd, hid, 0,
		                   LAYER "self_attn.k_proj.weight", L)) ||
		    (rv = ref_getf(s, &w->wv, false, err, 2, kvd, hid, 0,
		                   LAYER "self_attn.v_proj.weight", L)))
			return rv;
	} else {
		const float *f;
		if ((rv = ref_getf(s, &f, false, err, 2, qd + 2 * kvd, hid, 0,
		                   LAYER "self_attn.qkv_proj.weight", L)))
			return rv;
		w->wq = f;
		w->wk = f + qd * hid;
		w->wv = f + (qd + kvd) * hid;
	}
	if ((rv = ref_getf(s, &w->wg, false, err, 2, qd, hid, 0, LAYER "self_attn.gate_proj.weight",
	                   L)) ||
	    (rv = ref_getf(s, &w->wo, false, err, 2, hid, qd, 0, LAYER "self_attn.o_proj.weight",
	                   L)) ||
	    (rv = ref_getf(s, &w->qn, false, err, 1, d, 0, 0, LAYER "self_attn.q_norm.weight", L)))
		return rv;
	return ref_getf(s, &w->kn, false, err, 1, d, 0, 0, LAYER "self_attn.k_norm.weight", L);
}

/* kv_of[j]: the rank's kv head of its head j (whole kv heads from p->kv0). */
static int af_kv_of(const ref_cfg *c, int64_t l, const ref_q3n_part *p, int64_t *kv_of,
                    wt_errbuf *err)
{
	if (p->Hl > REF_MAX_HEADS)
		return wt_seterr(err, WT_EUNSUPPORTED, "%lld heads; the reference handles %d",
		                 (long long)p->Hl, REF_MAX_HEADS);
	for (int64_t j = 0; j < p->Hl; j++) {
		int64_t g = (p->q0 + j) / (c->H / c->KV);
		kv_of[j] = g - p->kv0;
		if (kv_of[j] < 0 || kv_of[j] >= p->KVl)
			return wt_seterr(err, WT_ELAYOUT,
			                 "layer %lld: head %lld needs kv head %lld, not among the "
			                 "%lld held from %lld",
			                 (long long)l, (long long)(p->q0 + j), (long long)g,
			                 (long long)p->KVl, (long long)p->kv0);
	}
	return WT_OK;
}

int ref_afmoe_attn(const ref_cfg *c, ref_set *s, int64_t l, const ref_q3n_part *p, const float *h,
                   int64_t T, float *out, wt_errbuf *err)
{
	int64_t d = c->d, Hl = p->Hl, KVl = p->KVl, qd = Hl * d, kvd = KVl * d;
	int64_t kv_of[REF_MAX_HEADS];
	af_w w;
	int rv = af_get(c, s, l, p, &w, err);
	if (rv == WT_OK)
		rv = af_kv_of(c, l, p, kv_of, err);
	if (rv != WT_OK)
		return rv;
	float *buf = malloc((size_t)(T * (3 * qd + 2 * kvd)) * sizeof(float));
	if (buf == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld attention: out of memory",
		                 (long long)l);
	float *q = buf, *g = q + T * qd, *att = g + T * qd, *k = att + T * qd, *v = k + T * kvd;
	ref_linear(q, h, w.wq, NULL, T, c->hid, qd);
	ref_linear(k, h, w.wk, NULL, T, c->hid, kvd);
	ref_linear(v, h, w.wv, NULL, T, c->hid, kvd);
	ref_linear(g, h, w.wg, NULL, T, c->hid, qd);
	ref_norm(c, q, q, w.qn, T * Hl, d);
	ref_norm(c, k, k, w.kn, T * KVl, d);
	ref_rope_layer(c, l, q, T, Hl, qd); /* none on a full_attention layer (nope_global) */
	ref_rope_layer(c, l, k, T, KVl, kvd);
	double theta, factor;
	ref_attn_opt ao;
	ref_layer_attn(c, l, &theta, &factor, &ao);
	ref_attention(att, q, k, v, T, Hl, KVl, kv_of, d, &ao);
	for (int64_t i = 0; i < T * qd; i++)
		att[i] *= af_sigmoid(g[i]);
	ref_linear(out, att, w.wo, NULL, T, qd, c->hid);
	free(buf);
	return WT_OK;
}
