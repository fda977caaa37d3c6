/*
 * gpt_oss.c — GPT-OSS's own parts of the reference forward pass (GptOssForCausalLM;
 * transformers 4.57.1 modeling_gpt_oss.py), over the checkpoint (full) and over the
 * rank tensors (sharded). The decoder around them is Llama's (reference.c, shard.c):
 * RMSNorm, q/k/v/o with biases, GQA, RoPE (yarn, cfg_gpt_oss.c), causal attention with
 * a sliding window on the layers layer_types calls sliding_attention.
 *
 *  - attention sinks: `self_attn.sinks` [H], one logit per head, joins each query
 *    row's softmax (after the mask) and is dropped: p_s = exp(s_s - m) / (sum_s'
 *    exp(s_s' - m) + exp(sink - m)), m the max over the row and the sink
 *    (eager_attention_forward). A rank holds its heads' entries [Hl].
 *  - router (GptOssTopKRouter): logits = h W^T + b over E experts, the top k logits
 *    (ties to the lower index), weights = softmax over those k.
 *  - experts (GptOssExperts): gate_up = h @ gate_up_proj[e] + gate_up_proj_bias[e]
 *    [2*Ie] with gate = gate_up[0::2], up = gate_up[1::2]; gate clamped to at most
 *    limit, up to [-limit, limit]; glu = gate * sigmoid(1.702 * gate); out =
 *    ((up + 1) * glu) @ down_proj[e] + down_proj_bias[e]; the block's output is the
 *    sum of the k outputs times their weights (the down bias too: sum_j w_j b2_e).
 *
 * Checkpoint forms (docs/format.md 2.7, 4.6): MXFP4 `X_blocks` U8 [E, N, K/32, 16]
 * with `X_scales` U8 [E, N, K/32], the nn.Linear orientation ([E, 2*Ie, hid] with
 * gate / up rows interleaved, [E, hid, Ie]), dequantized exactly with the producer's
 * kernel (kern_dequant_mxfp4) and cached in the blocks tensor; or the dequantized
 * float form transformers saves, gate_up_proj [E, hid, 2*Ie] (gate / up columns
 * interleaved) and down_proj [E, Ie, hid]. Both are read in place through strided
 * views, so no transposed copy is made.
 *
 * Ranks: w13_weight [count, 2*Il, hid] de-interleaved to [gate_r; up_r] (w13_order
 * up_gate: [up_r; gate_r]), w13_bias [count, 2*Il] the same way, w2_weight
 * [count, hid, Il], w2_bias [count, hid] whole on every tp rank, added by one of them.
 * The clamp and the activation are elementwise on the intermediate, so each tp rank's
 * slice of it is exact and its partial down sum is all-reduced as for Mixtral.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

#define GO_ALPHA 1.702f /* GptOssExperts.alpha */

/* A matrix view: element (n, k) at w[n * sn + k * sk]. */
typedef struct go_mat {
	const float *w;
	int64_t sn, sk;
} go_mat;

/* One expert: gate / up rows [n, hid] with their biases (entry j at b[j * sb]),
 * down [hid, n] and its bias [hid] (NULL: not added here). */
typedef struct go_expert {
	go_mat g, u, dn;
	const float *bg, *bu, *b2;
	int64_t sb, n;
} go_expert;

static float dot_view(const float *x, const go_mat *m, int64_t row, int64_t K)
{
	const float *w = m->w + row * m->sn;
	float acc = 0.0f;
	for (int64_t k = 0; k < K; k++)
		acc += x[k] * w[k * m->sk];
	return acc;
}

/* y [hid] = the expert on one token h; a: n floats of scratch. */
static void expert_run(const ref_cfg *c, const go_expert *e, const float *h, float *y, float *a)
{
	const float lim = (float)c->swiglu_limit;
	for (int64_t j = 0; j < e->n; j++) {
		float g = dot_view(h, &e->g, j, c->hid) + e->bg[j * e->sb];
		float u = dot_view(h, &e->u, j, c->hid) + e->bu[j * e->sb];
		g = g > lim ? lim : g; /* torch clamp: NaN stays NaN */
		u = u > lim ? lim : (u < -lim ? -lim : u);
		float glu = g / (1.0f + expf(-(g * GO_ALPHA)));
		a[j] = (u + 1.0f) * glu;
	}
	for (int64_t i = 0; i < c->hid; i++)
		y[i] = dot_view(a, &e->dn, i, e->n) + (e->b2 ? e->b2[i] : 0.0f);
}

void ref_route_topk_softmax(const float *logits, int64_t E, int64_t k, const int64_t *forced,
                            int64_t *idx, float *w)
{
	ref_eset taken = {0}; /* E <= REF_MAX_EXPERTS, checked by the config parser */
	float mx = -INFINITY, sum = 0.0f;
	for (int64_t j = 0; j < k; j++) {
		int64_t best = forced ? forced[j] : -1;
		for (int64_t e = 0; !forced && e < E; e++)
			if (!ref_eset_has(&taken, e) && (best < 0 || logits[e] > logits[best]))
				best = e;
		ref_eset_add(&taken, best);
		idx[j] = best;
		if (logits[best] > mx)
			mx = logits[best];
	}
	for (int64_t j = 0; j < k; j++) {
		w[j] = expf(logits[idx[j]] - mx);
		sum += w[j];
	}
	for (int64_t j = 0; j < k; j++)
		w[j] /= sum;
}

int ref_gpt_oss_sinks(const ref_cfg *c, ref_set *s, int64_t l, int64_t n_heads, ref_attn_opt *o,
                      wt_errbuf *err)
{
	if (!c->gpt_oss)
		return WT_OK;
	return ref_getf(s, &o->sinks, false, err, 1, n_heads, 0, 0,
	                "model.layers.%lld.self_attn.sinks", (long long)l);
}

/* Shapes of an MXFP4 pair: blocks U8 [E, N, K/32, 16], scales U8 [E, N, K/32]. */
static int mx_check(const ref_tensor *b, const ref_tensor *sc, const char *sname, int64_t E,
                    int64_t N, int64_t K, wt_errbuf *err)
{
	const int64_t want[4] = {E, N, K / 32, 16};
	bool ok = b->dtype == WT_U8 && b->ndim == 4 && K % 32 == 0;
	for (int k = 0; ok && k < 4; k++)
		ok = b->shape[k] == want[k];
	if (!ok || b->nbytes != (uint64_t)(E * N * K / 2))
		return wt_seterr(
		    err, WT_ESHAPE,
		    "MXFP4 tensor '%s': want U8 [%lld, %lld, %lld, 16] (docs/format.md "
		    "4.6)",
		    b->name, (long long)E, (long long)N, (long long)(K / 32));
	if (sc == NULL)
		return wt_seterr(err, WT_ENOTFOUND, "MXFP4 tensor '%s' has no '%s'", b->name,
		                 sname);
	ok = sc->dtype == WT_U8 && sc->ndim == 3 && sc->nbytes == (uint64_t)(E * N * K / 32);
	for (int k = 0; ok && k < 3; k++)
		ok = sc->shape[k] == want[k];
	if (!ok)
		return wt_seterr(err, WT_ESHAPE, "MXFP4 scales '%s': want U8 [%lld, %lld, %lld]",
		                 sname, (long long)E, (long long)N, (long long)(K / 32));
	return WT_OK;
}

/* The float32 values [E, N, K] of MXFP4 weight `<m>experts.<leaf>`, dequantized once
 * (kern_dequant_mxfp4) and cached in the blocks tensor. Borrowed from s. */
static int mx_get(ref_set *s, const char *m, const char *leaf, int64_t E, int64_t N, int64_t K,
                  const float **out, wt_errbuf *err)
{
	char bname[256], sname[256];
	snprintf(bname, sizeof(bname), "%sexperts.%s_blocks", m, leaf);
	snprintf(sname, sizeof(sname), "%sexperts.%s_scales", m, leaf);
	ref_tensor *b = ref_set_find(s, bname);
	if (b == NULL)
		return wt_seterr(err, WT_ENOTFOUND, "tensor '%s' is missing", bname);
	if (b->f32 == NULL) {
		const ref_tensor *sc = ref_set_find(s, sname);
		int rv = mx_check(b, sc, sname, E, N, K, err);
		if (rv != WT_OK)
			return rv;
		float *f = malloc((size_t)(E * N * K) * sizeof(float));
		if (f == NULL)
			return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", bname);
		int64_t bad = kern_dequant_mxfp4(f, b->data, sc->data, E * N * K / 32);
		if (bad >= 0) {
			free(f);
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "MXFP4 scales '%s': block %lld has the E8M0 scale 255 (NaN)", sname,
			    (long long)bad);
		}
		b->f32 = f;
	}
	*out = b->f32;
	return WT_OK;
}

/* The checkpoint's expert stacks of MoE module m: which form, and the values. */
typedef struct go_stacks {
	const float *gu, *bgu, *dn, *bd;
	bool mx_gu, mx_dn; /* MXFP4 [E, N, K] views, else the float [E, K, N] form */
} go_stacks;

static int stacks_full(const ref_cfg *c, ref_set *s, const char *m, go_stacks *k, wt_errbuf *err)
{
	int64_t E = c->E, hid = c->hid, ie = c->Ie;
	char name[256];
	int rv;
	snprintf(name, sizeof(name), "%sexperts.gate_up_proj_blocks", m);
	k->mx_gu = ref_set_find(s, name) != NULL;
	snprintf(name, sizeof(name), "%sexperts.down_proj_blocks", m);
	k->mx_dn = ref_set_find(s, name) != NULL;
	if (k->mx_gu)
		rv = mx_get(s, m, "gate_up_proj", E, 2 * ie, hid, &k->gu, err);
	else
		rv =
		    ref_getf(s, &k->gu, false, err, 3, E, hid, 2 * ie, "%sexperts.gate_up_proj", m);
	if (rv != WT_OK)
		return rv;
	if (k->mx_dn)
		rv = mx_get(s, m, "down_proj", E, hid, ie, &k->dn, err);
	else
		rv = ref_getf(s, &k->dn, false, err, 3, E, ie, hid, "%sexperts.down_proj", m);
	if (rv == WT_OK)
		rv = ref_getf(s, &k->bgu, false, err, 2, E, 2 * ie, 0,
		              "%sexperts.gate_up_proj_bias", m);
	if (rv == WT_OK)
		rv = ref_getf(s, &k->bd, false, err, 2, E, hid, 0, "%sexperts.down_proj_bias", m);
	return rv;
}

/* Expert e of the checkpoint's stacks as views (gate / up interleaved: gate row j is
 * row 2j of [2*Ie, hid], or column 2j of the float form's [hid, 2*Ie]). */
static go_expert expert_full(const ref_cfg *c, const go_stacks *k, int64_t e)
{
	int64_t hid = c->hid, ie = c->Ie;
	go_expert x = {.n = ie, .sb = 2};
	const float *gu = k->gu + e * 2 * ie * hid;
	if (k->mx_gu) {
		x.g = (go_mat){gu, 2 * hid, 1};
		x.u = (go_mat){gu + hid, 2 * hid, 1};
	} else {
		x.g = (go_mat){gu, 2, 2 * ie};
		x.u = (go_mat){gu + 1, 2, 2 * ie};
	}
	const float *dn = k->dn + e * hid * ie;
	x.dn = k->mx_dn ? (go_mat){dn, ie, 1} : (go_mat){dn, 1, hid};
	x.bg = k->bgu + e * 2 * ie;
	x.bu = x.bg + 1;
	x.b2 = k->bd + e * hid;
	return x;
}

int ref_gpt_oss_moe_full(const ref_cfg *c, ref_set *s, int64_t l, const float *h, int64_t T,
                         float *acc, int64_t *routes, float *y, float *scratch, wt_errbuf *err)
{
	char m[160];
	ref_moe_prefix(c, l, m, sizeof(m));
	go_stacks k;
	int rv = stacks_full(c, s, m, &k, err);
	if (rv != WT_OK)
		return rv;
	memset(acc, 0, (size_t)(T * c->hid) * sizeof(float));
	for (int64_t t = 0; t < T; t++) {
		float w[REF_MAX_EXPERTS]; /* top-k <= E <= REF_MAX_EXPERTS */
		int64_t idx[REF_MAX_EXPERTS];
		if ((rv = ref_moe_route(c, s, true, m, h + t * c->hid, NULL, idx, w, err)))
			return rv;
		if (routes)
			memcpy(routes + t * c->topk, idx, (size_t)c->topk * sizeof(int64_t));
		for (int64_t j = 0; j < c->topk; j++) {
			go_expert x = expert_full(c, &k, idx[j]);
			expert_run(c, &x, h + t * c->hid, y, scratch);
			for (int64_t i = 0; i < c->hid; i++)
				acc[t * c->hid + i] += w[j] * y[i];
		}
	}
	return WT_OK;
}

int ref_gpt_oss_experts_rank(const ref_cfg *c, ref_set *rs, int64_t l, const ref_go_rank *k,
                             const float *h, int64_t T, float *out, float *y, float *scratch,
                             wt_errbuf *err)
{
	char m[160];
	ref_moe_prefix(c, l, m, sizeof(m));
	int64_t hid = c->hid, il = k->Il, n = k->count;
	const float *w13, *b13, *w2, *b2;
	int rv;
	if ((rv = ref_getf(rs, &w13, false, err, 3, n, 2 * il, hid, "%sexperts.w13_weight", m)) ||
	    (rv = ref_getf(rs, &b13, false, err, 2, n, 2 * il, 0, "%sexperts.w13_bias", m)) ||
	    (rv = ref_getf(rs, &w2, false, err, 3, n, hid, il, "%sexperts.w2_weight", m)) ||
	    (rv = ref_getf(rs, &b2, false, err, 2, n, hid, 0, "%sexperts.w2_bias", m)))
		return rv;
	for (int64_t t = 0; t < T; t++) {
		float w[REF_MAX_EXPERTS]; /* top-k <= E <= REF_MAX_EXPERTS */
		int64_t idx[REF_MAX_EXPERTS];
		const int64_t *forced = k->forced ? k->forced + t * c->topk : NULL;
		if ((rv = ref_moe_route(c, rs, false, m, h + t * hid, forced, idx, w, err)))
			return rv;
		for (int64_t j = 0; j < c->topk; j++) {
			int64_t loc = idx[j] - k->start;
			if (loc < 0 || loc >= n)
				continue; /* another EP rank owns it */
			const float *a = w13 + loc * 2 * il * hid, *ba = b13 + loc * 2 * il;
			go_expert x = {.n = il, .sb = 1};
			x.g = (go_mat){k->up_gate ? a + il * hid : a, hid, 1};
			x.u = (go_mat){k->up_gate ? a : a + il * hid, hid, 1};
			x.bg = k->up_gate ? ba + il : ba;
			x.bu = k->up_gate ? ba : ba + il;
			x.dn = (go_mat){w2 + loc * hid * il, il, 1};
			x.b2 = k->add_b2 ? b2 + loc * hid : NULL;
			expert_run(c, &x, h + t * hid, y, scratch);
			for (int64_t i = 0; i < hid; i++)
				out[t * hid + i] += w[j] * y[i];
		}
	}
	return WT_OK;
}
