/*
 * longcat.c — LongCat-Flash (LongcatFlashForCausalLM, transformers 4.57.1
 * modeling_longcat_flash.py) in the reference forward pass. A decoder layer i is
 *
 *   x += MLA_0(input_layernorm.0(x));   h = post_attention_layernorm.0(x)
 *   m  = MoE(h);                        x += mlps.0(h)
 *   x += MLA_1(input_layernorm.1(x));   x += mlps.1(post_attention_layernorm.1(x)) + m
 *
 * read as two virtual layers 2i and 2i + 1 of DeepSeek's MLA decoder (mla.c) with a dense
 * MLP each, under the names ref_lc_rename gives them; the shortcut MoE m runs on virtual
 * layer 2i's MLP input and is added after virtual layer 2i + 1 (reference.c, shard.c).
 * LongcatFlashMLA scales q (q_b_proj's output) by sqrt(hidden / q_lora_rank) and the
 * normed kv latent by sqrt(hidden / kv_lora_rank): the rename multiplies q_a_layernorm and
 * kv_a_layernorm by them, as vLLM's load_weights does, which q_b_proj / kv_b_proj carry
 * through linearly. The router: softmax of classifier(h) in float32 over the E routed and
 * the Z zero experts, the top-k of scores + e_score_correction_bias, weights the softmax
 * scores times routed_scaling_factor (no renormalisation); a zero expert adds weight * h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/shard_int.h"

/* The virtual name of LongCat name `name` into buf ("" when it is not a layer's). */
static int lc_name(const char *name, char *buf, size_t cap, float *scale, const ref_cfg *c,
                   wt_errbuf *err)
{
	static const struct {
		const char *from, *to;
		bool sub; /* followed by ".<k>." */
	} map[] = {{"input_layernorm.", "input_layernorm.", true},
	           {"post_attention_layernorm.", "post_attention_layernorm.", true},
	           {"self_attn.", "self_attn.", true},
	           {"mlps.", "mlp.", true},
	           {"mlp.", "mlp.", false}};
	static const char pre[] = "model.layers.";
	*scale = 1.0f;
	int n = snprintf(buf, cap, "%s", name);
	if (strncmp(name, pre, sizeof(pre) - 1) == 0) {
		char *end;
		long long i = strtoll(name + sizeof(pre) - 1, &end, 10);
		for (size_t m = 0; *end == '.' && m < sizeof(map) / sizeof(map[0]); m++) {
			size_t fl = strlen(map[m].from);
			if (strncmp(end + 1, map[m].from, fl) != 0)
				continue;
			const char *rest = end + 1 + fl;
			long long k = 0;
			if (map[m].sub) {
				char *e2;
				k = strtoll(rest, &e2, 10);
				if (e2 == rest || *e2 != '.' || k < 0 || k > 1)
					return wt_seterr(err, WT_ECORRUPT,
					                 "tensor '%s': not a sublayer 0 or 1",
					                 name);
				rest = e2 + 1;
			}
			n = snprintf(buf, cap, "%s%lld.%s%s", pre, 2 * i + k, map[m].to, rest);
			if (strcmp(rest, "q_a_layernorm.weight") == 0)
				*scale = sqrtf((float)c->hid / (float)c->q_lora);
			else if (strcmp(rest, "kv_a_layernorm.weight") == 0)
				*scale = sqrtf((float)c->hid / (float)c->kv_lora);
			break;
		}
	}
	if (n < 0 || (size_t)n >= cap)
		return wt_seterr(err, WT_EINVAL, "tensor '%s': name too long", name);
	return WT_OK;
}

static int lc_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                  wt_errbuf *err)
{
	char name[512];
	float sc;
	int rv = lc_name(t->name, name, sizeof(name), &sc, x->c, err);
	if (rv != WT_OK)
		return rv;
	if (sc == 1.0f)
		return ref_set_add_as(out, name, t, err);
	const float *w;
	int64_t n = t->ndim == 1 ? t->shape[0] : 0;
	if ((rv = ref_getf(in, &w, false, err, 1, n, 0, 0, "%s", t->name)) != WT_OK)
		return rv;
	float *f = malloc((size_t)(n ? n : 1) * sizeof(float));
	if (f == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
	for (int64_t j = 0; j < n; j++)
		f[j] = w[j] * sc;
	rv = ref_set_add(out, name, WT_F32, 1, &n, (const uint8_t *)f, (uint64_t)n * sizeof(float),
	                 err);
	free(f);
	return rv;
}

int ref_lc_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err)
{
	return ref_rename_each(in, out, lc_one, c, false, err);
}

/* Layer l's router on h: the k experts (indices >= E are zero experts) and weights. */
static int lc_route(const ref_cfg *c, ref_set *s, const char *m, const float *h,
                    const int64_t *forced, int64_t *idx, float *w, wt_errbuf *err)
{
	int64_t EZ = c->E + c->n_zero;
	const float *cls, *bias;
	float lg[REF_MAX_EXPERTS], sc[REF_MAX_EXPERTS], ch[REF_MAX_EXPERTS];
	int rv;
	if ((rv = ref_getf(s, &cls, false, err, 2, EZ, c->hid, 0, "%srouter.classifier.weight",
	                   m)) ||
	    (rv = ref_getf(s, &bias, false, err, 1, EZ, 0, 0, "%srouter.e_score_correction_bias",
	                   m)))
		return rv;
	ref_linear(lg, h, cls, NULL, 1, c->hid, EZ);
	ref_softmax(sc, lg, EZ);
	for (int64_t e = 0; e < EZ; e++)
		ch[e] = sc[e] + bias[e];
	ref_eset taken = {0};
	for (int64_t j = 0; j < c->topk; j++) {
		int64_t best = forced ? forced[j] : -1;
		for (int64_t e = 0; !forced && e < EZ; e++)
			if (!ref_eset_has(&taken, e) && (best < 0 || ch[e] > ch[best]))
				best = e;
		ref_eset_add(&taken, best);
		idx[j] = best;
		w[j] = sc[best] * (float)c->routed_scale;
	}
	return WT_OK;
}

/* What one rank (or the checkpoint) holds of the routed experts. */
typedef struct lc_part {
	bool stacked;             /* w13_weight / w2_weight (a rank), else experts.{j}. */
	int64_t count, start, Il; /* local experts, the first's index, rows of each */
	bool up_gate;             /* w13_order up_gate */
	bool add_zero;            /* this rank adds the zero experts' weight * h */
} lc_part;

/* The MoE block of virtual layer l on h [T, hid] added into out; routes as ref_forward_full's
 * (forced: read; else written when not NULL). */
static int lc_moe(const ref_cfg *c, ref_set *s, int64_t l, const lc_part *p, const float *h,
                  int64_t T, const int64_t *forced, int64_t *routes, float *out, float *y,
                  float *scratch, wt_errbuf *err)
{
	char m[160];
	snprintf(m, sizeof(m), "model.layers.%lld.mlp.", (long long)l);
	const float *w13 = NULL, *w2 = NULL;
	int rv;
	if (p->stacked && ((rv = ref_getf(s, &w13, false, err, 3, p->count, 2 * p->Il, c->hid,
	                                  "%sexperts.w13_weight", m)) ||
	                   (rv = ref_getf(s, &w2, false, err, 3, p->count, c->hid, p->Il,
	                                  "%sexperts.w2_weight", m))))
		return rv;
	float w[REF_MAX_EXPERTS];
	int64_t idx[REF_MAX_EXPERTS];
	for (int64_t t = 0; t < T; t++) {
		const float *ht = h + t * c->hid;
		float *o = out + t * c->hid;
		if ((rv = lc_route(c, s, m, ht, forced ? forced + t * c->topk : NULL, idx, w, err)))
			return rv;
		if (routes)
			memcpy(routes + t * c->topk, idx, (size_t)c->topk * sizeof(int64_t));
		for (int64_t j = 0; j < c->topk; j++) {
			if (idx[j] >= c->E) { /* a zero expert: the identity */
				for (int64_t i = 0; p->add_zero && i < c->hid; i++)
					o[i] += w[j] * ht[i];
				continue;
			}
			int64_t loc = idx[j] - p->start;
			if (loc < 0 || loc >= p->count)
				continue; /* another EP rank owns it */
			const float *wg, *wu, *wd;
			if (p->stacked) {
				const float *a = w13 + loc * 2 * p->Il * c->hid,
				            *b = a + p->Il * c->hid;
				wg = p->up_gate ? b : a;
				wu = p->up_gate ? a : b;
				wd = w2 + loc * c->hid * p->Il;
			} else {
				long long x = (long long)idx[j];
				if ((rv = ref_getf(s, &wg, false, err, 2, p->Il, c->hid, 0,
				                   "%sexperts.%lld.gate_proj.weight", m, x)) ||
				    (rv = ref_getf(s, &wu, false, err, 2, p->Il, c->hid, 0,
				                   "%sexperts.%lld.up_proj.weight", m, x)) ||
				    (rv = ref_getf(s, &wd, false, err, 2, c->hid, p->Il, 0,
				                   "%sexperts.%lld.down_proj.weight", m, x)))
					return rv;
			}
			ref_ffn(y, ht, 1, c->hid, p->Il, wg, NULL, wu, NULL, wd, c->act, scratch);
			for (int64_t i = 0; i < c->hid; i++)
				o[i] += w[j] * y[i];
		}
	}
	return WT_OK;
}

int ref_lc_moe_full(const ref_cfg *c, ref_set *s, int64_t l, int64_t T, ref_bufs *b,
                    int64_t *routes, wt_errbuf *err)
{
	const lc_part p = {.count = c->E, .Il = c->Ie, .add_zero = true};
	memset(b->sc, 0, (size_t)(T * c->hid) * sizeof(float));
	return lc_moe(c, s, l, &p, b->h, T, NULL, routes, b->sc, b->y, b->scratch, err);
}

/* Each TP rank of EP group e's partial: P == 1 its TP slice of every expert (the zero
 * experts once, on tp rank 0), all-reduced; P > 1 the experts of ranks (r, 0..P-1), the
 * zero experts on ep rank 0, each tp rank's sum averaged over the T copies. Each rank
 * normalises with its own post_attention_layernorm and routes with its own router. */
int ref_shard_lc_moe(shard *s, int64_t l)
{
	const ref_cfg *c = s->c;
	int64_t n = s->n_tok * c->hid, E = c->E, P = s->P;
	const int64_t *forced = s->routes ? s->routes + l * s->n_tok * c->topk : NULL;
	int rv;
	memset(s->b.sc, 0, (size_t)n * sizeof(float));
	for (uint32_t r = 0; r < s->T; r++) {
		memset(s->b.part, 0, (size_t)n * sizeof(float));
		for (uint32_t e = 0; e < s->P; e++) {
			lc_part p = {.stacked = true,
			             .count = E,
			             .Il = c->Ie / (int64_t)s->T,
			             .up_gate = s->up_gate != 0,
			             .add_zero = P > 1 ? e == 0 : r == 0};
			if (P > 1) {
				p.count = E / P + ((int64_t)e < E % P);
				p.start = (int64_t)e * (E / P) +
				          ((int64_t)e < E % P ? (int64_t)e : E % P);
				p.Il = c->Ie;
			}
			ref_set *rs = rank_set(s, r, e);
			if ((rv = ref_block_input(c, rs, s->b.h, s->b.x, s->n_tok, l,
			                          "post_attention_layernorm", s->err)) ||
			    (rv = lc_moe(c, rs, l, &p, s->b.h, s->n_tok, forced, NULL, s->b.part,
			                 s->b.y, s->b.scratch, s->err)))
				return rv;
		}
		for (int64_t i = 0; i < n; i++)
			s->b.sc[i] += P > 1 ? s->b.part[i] / (float)s->T : s->b.part[i];
	}
	return WT_OK;
}
