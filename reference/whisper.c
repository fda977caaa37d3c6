/*
 * whisper.c — both reference paths for WhisperForConditionalGeneration (transformers 4.57.1
 * modeling_whisper.py, vLLM whisper.py):
 *
 *   encoder (S = max_source_positions, its input ref_whisper_mel's [mel, 2S] array):
 *     e = gelu(conv1(mel)) (kernel 3, padding 1), e = gelu(conv2(e)) (kernel 3, stride 2,
 *     padding 1), x = e^T + embed_positions[0..S); per layer (pre-norm)
 *       x += out_proj(attn(q, k, v of self_attn_layer_norm(x)))   (all positions)
 *       x += fc2(gelu(fc1(final_layer_norm(x))))
 *     then enc = layer_norm(x);
 *   decoder: x = embed_tokens[tokens] + embed_positions[t]; per layer
 *       x += self_attn(self_attn_layer_norm(x))                     (causal)
 *       x += encoder_attn(q of encoder_attn_layer_norm(x), k / v of enc)
 *       x += fc2(gelu(fc1(final_layer_norm(x))))
 *     then layer_norm, and the logits against embed_tokens (proj_out is tied).
 *   Every Linear has a bias but k_proj; scores scaled by head_dim^-0.5; LayerNorms eps 1e-5.
 *
 * Sharded (docs/format.md, Whisper): self_attn.qkv_proj [q_r; k_r; v_r] of the rank's heads
 * with its bias [q_r; 0; v_r], encoder_attn.q_proj rows and kv_proj [k_r; v_r] with its bias
 * [0; v_r], out_proj and fc2 row-parallel (partial sums all-reduced in rank order, the
 * replicated biases added once), fc1 column-parallel with its bias. The replicated tensors
 * (convs, positions, embed_tokens, LayerNorms, the row-parallel biases) are read from rank 0
 * after every other rank's copy is checked equal to it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

#define WH_ENC "model.encoder."
#define WH_DEC "model.decoder."

typedef struct wh_run {
	const ref_cfg *c;
	ref_set *sets; /* the checkpoint (T 1, ckpt) or the ranks */
	uint32_t T;
	bool ckpt;    /* q/k/v separate under the checkpoint's names */
	int64_t n, S; /* decoder tokens, encoder positions */
	float *enc;   /* [S, hid]: the encoder's output */
	float *x, *h, *q, *k, *v, *att, *o, *acc, *f, *sc;
	wt_errbuf *err;
} wh_run;

/* One stack: its prefix, heads, MLP width and rows; causal self-attention (the decoder's). */
typedef struct wh_stack {
	const char *pre;
	int64_t H, I, rows;
	bool causal;
} wh_stack;

void ref_whisper_mel(float *out, int64_t mel, int64_t src)
{
	uint64_t s = 0x5eedu;
	for (int64_t i = 0; i < mel * 2 * src; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		out[i] = (float)(s >> 40) / 16777216.0f * 2.0f - 1.0f;
	}
}

/* The replicated tensor `name` of nd dims a, b, c: rank 0's, every other rank's copy checked
 * equal to it. */
static int repl(wh_run *r, const float **out, int nd, int64_t a, int64_t b, int64_t c,
                const char *name)
{
	int rv = ref_getf(&r->sets[0], out, false, r->err, nd, a, b, c, "%s", name);
	size_t n = (size_t)a * (size_t)(nd > 1 ? b : 1) * (size_t)(nd > 2 ? c : 1);
	for (uint32_t k = 1; rv == WT_OK && k < r->T; k++) {
		const float *o;
		if ((rv = ref_getf(&r->sets[k], &o, false, r->err, nd, a, b, c, "%s", name)))
			break;
		if (memcmp(o, *out, n * sizeof(float)) != 0)
			rv = wt_seterr(r->err, WT_ECORRUPT,
			               "rank %u '%s': its replica differs from rank 0's", k, name);
	}
	return rv;
}

/* LayerNorm `leaf` (under pre; weight and bias replicated) of rows of x into y. */
static int norm(wh_run *r, float *y, const float *x, int64_t rows, const char *pre,
                const char *leaf)
{
	char b[200];
	const float *w, *bias;
	int64_t hid = r->c->hid;
	snprintf(b, sizeof(b), "%s%s.weight", pre, leaf);
	int rv = repl(r, &w, 1, hid, 0, 0, b);
	snprintf(b, sizeof(b), "%s%s.bias", pre, leaf);
	if (rv == WT_OK)
		rv = repl(r, &bias, 1, hid, 0, 0, b);
	if (rv == WT_OK)
		ref_layernorm(y, x, w, bias, rows, hid, 1e-5f);
	return rv;
}

/* acc[rows, hid] += the replicated bias `name`, then x += acc. */
static int add_out(wh_run *r, float *x, int64_t rows, const char *name)
{
	const float *bias;
	int64_t hid = r->c->hid;
	int rv = repl(r, &bias, 1, hid, 0, 0, name);
	for (int64_t t = 0; rv == WT_OK && t < rows; t++)
		for (int64_t i = 0; i < hid; i++)
			x[t * hid + i] += r->acc[t * hid + i] + bias[i];
	return rv;
}

/* y[nq, Hl*d] = softmax(q k^T * d^-0.5) v per head, q [nq, Hl*d], k / v [nk, Hl*d]; causal:
 * query t sees keys 0..t. */
static void mha(wh_run *r, float *y, int64_t nq, int64_t nk, int64_t Hl, int64_t d, bool causal)
{
	int64_t w = Hl * d;
	float scale = 1.0f / sqrtf((float)d);
	for (int64_t t = 0; t < nq; t++)
		for (int64_t h = 0; h < Hl; h++) {
			int64_t ns = causal ? t + 1 : nk;
			for (int64_t s = 0; s < ns; s++) {
				float dot = 0.0f;
				for (int64_t i = 0; i < d; i++)
					dot += r->q[t * w + h * d + i] * r->k[s * w + h * d + i];
				r->sc[s] = dot * scale;
			}
			ref_softmax(r->sc, r->sc, ns);
			for (int64_t i = 0; i < d; i++) {
				float acc = 0.0f;
				for (int64_t s = 0; s < ns; s++)
					acc += r->sc[s] * r->v[s * w + h * d + i];
				y[t * w + h * d + i] = acc;
			}
		}
}

/* Rank k's q (of h, nq rows) and k / v (of kv, nk rows), w = its heads x d wide, of module
 * mod ("self_attn." or "encoder_attn.") of the layer under lp. */
static int project(wh_run *r, uint32_t k, const char *lp, const char *mod, const float *kv,
                   int64_t nq, int64_t nk, int64_t w)
{
	ref_set *s = &r->sets[k];
	int64_t hid = r->c->hid;
	const float *W, *B;
	int rv;
	if (r->ckpt) { /* q_proj, k_proj (no bias), v_proj */
		const float *Wk, *Wv, *Bv;
		if ((rv = ref_getf(s, &W, false, r->err, 2, w, hid, 0, "%s%sq_proj.weight", lp,
		                   mod)) ||
		    (rv = ref_getf(s, &B, false, r->err, 1, w, 0, 0, "%s%sq_proj.bias", lp, mod)) ||
		    (rv = ref_getf(s, &Wk, false, r->err, 2, w, hid, 0, "%s%sk_proj.weight", lp,
		                   mod)) ||
		    (rv = ref_getf(s, &Wv, false, r->err, 2, w, hid, 0, "%s%sv_proj.weight", lp,
		                   mod)) ||
		    (rv = ref_getf(s, &Bv, false, r->err, 1, w, 0, 0, "%s%sv_proj.bias", lp, mod)))
			return rv;
		ref_linear(r->q, r->h, W, B, nq, hid, w);
		ref_linear(r->k, kv, Wk, NULL, nk, hid, w);
		ref_linear(r->v, kv, Wv, Bv, nk, hid, w);
		return WT_OK;
	}
	if (kv == r->h) { /* self_attn.qkv_proj [q; k; v], its bias [q; 0; v] */
		if ((rv = ref_getf(s, &W, false, r->err, 2, 3 * w, hid, 0,
		                   "%sself_attn.qkv_proj.weight", lp)) ||
		    (rv = ref_getf(s, &B, false, r->err, 1, 3 * w, 0, 0,
		                   "%sself_attn.qkv_proj.bias", lp)))
			return rv;
		ref_linear(r->q, r->h, W, B, nq, hid, w);
		ref_linear(r->k, r->h, W + w * hid, B + w, nq, hid, w);
		ref_linear(r->v, r->h, W + 2 * w * hid, B + 2 * w, nq, hid, w);
		return WT_OK;
	}
	const float *Wkv, *Bkv; /* encoder_attn.q_proj, kv_proj [k; v] with its bias [0; v] */
	if ((rv = ref_getf(s, &W, false, r->err, 2, w, hid, 0, "%sencoder_attn.q_proj.weight",
	                   lp)) ||
	    (rv = ref_getf(s, &B, false, r->err, 1, w, 0, 0, "%sencoder_attn.q_proj.bias", lp)) ||
	    (rv = ref_getf(s, &Wkv, false, r->err, 2, 2 * w, hid, 0,
	                   "%sencoder_attn.kv_proj.weight", lp)) ||
	    (rv = ref_getf(s, &Bkv, false, r->err, 1, 2 * w, 0, 0, "%sencoder_attn.kv_proj.bias",
	                   lp)))
		return rv;
	ref_linear(r->q, r->h, W, B, nq, hid, w);
	ref_linear(r->k, kv, Wkv, Bkv, nk, hid, w);
	ref_linear(r->v, kv, Wkv + w * hid, Bkv + w, nk, hid, w);
	return WT_OK;
}

/* x += the attention block `mod` of layer l of stack st (cross: keys / values of enc). */
static int attn(wh_run *r, const wh_stack *st, int64_t l, bool cross)
{
	int64_t hid = r->c->hid, n = st->rows, Hl = st->H / (int64_t)r->T, d = hid / st->H;
	int64_t w = Hl * d, nk = cross ? r->S : n;
	const char *mod = cross ? "encoder_attn." : "self_attn.";
	char lp[96], b[200];
	snprintf(lp, sizeof(lp), "%slayers.%lld.", st->pre, (long long)l);
	int rv =
	    norm(r, r->h, r->x, n, lp, cross ? "encoder_attn_layer_norm" : "self_attn_layer_norm");
	memset(r->acc, 0, (size_t)(n * hid) * sizeof(float));
	for (uint32_t k = 0; k < r->T && rv == WT_OK; k++) {
		const float *wo;
		if ((rv = project(r, k, lp, mod, cross ? r->enc : r->h, n, nk, w)) ||
		    (rv = ref_getf(&r->sets[k], &wo, false, r->err, 2, hid, w, 0,
		                   "%s%sout_proj.weight", lp, mod)))
			break;
		mha(r, r->att, n, nk, Hl, d, st->causal && !cross);
		ref_linear(r->o, r->att, wo, NULL, n, w, hid);
		for (int64_t i = 0; i < n * hid; i++)
			r->acc[i] += r->o[i];
	}
	snprintf(b, sizeof(b), "%s%sout_proj.bias", lp, mod);
	return rv == WT_OK ? add_out(r, r->x, n, b) : rv;
}

/* x += fc2(gelu(fc1(final_layer_norm(x)))) of layer l of stack st. */
static int mlp(wh_run *r, const wh_stack *st, int64_t l)
{
	int64_t hid = r->c->hid, n = st->rows, Il = st->I / (int64_t)r->T;
	char lp[96], b[200];
	snprintf(lp, sizeof(lp), "%slayers.%lld.", st->pre, (long long)l);
	int rv = norm(r, r->h, r->x, n, lp, "final_layer_norm");
	memset(r->acc, 0, (size_t)(n * hid) * sizeof(float));
	for (uint32_t k = 0; k < r->T && rv == WT_OK; k++) {
		ref_set *s = &r->sets[k];
		const float *w1, *b1, *w2;
		if ((rv = ref_getf(s, &w1, false, r->err, 2, Il, hid, 0, "%sfc1.weight", lp)) ||
		    (rv = ref_getf(s, &b1, false, r->err, 1, Il, 0, 0, "%sfc1.bias", lp)) ||
		    (rv = ref_getf(s, &w2, false, r->err, 2, hid, Il, 0, "%sfc2.weight", lp)))
			break;
		ref_linear(r->f, r->h, w1, b1, n, hid, Il);
		ref_gelu(r->f, n * Il);
		ref_linear(r->o, r->f, w2, NULL, n, Il, hid);
		for (int64_t i = 0; i < n * hid; i++)
			r->acc[i] += r->o[i];
	}
	snprintf(b, sizeof(b), "%sfc2.bias", lp);
	return rv == WT_OK ? add_out(r, r->x, n, b) : rv;
}

/* y[t][o] = gelu(b[o] + sum_i,j w[o][i][j] x[i][t*stride + j - 1]) over in x [ci, tin]. */
static void conv(float *y, const float *x, const float *w, const float *b, int64_t co, int64_t ci,
                 int64_t tin, int64_t stride, int64_t tout)
{
	for (int64_t t = 0; t < tout; t++)
		for (int64_t o = 0; o < co; o++) {
			float acc = b[o];
			for (int64_t i = 0; i < ci; i++)
				for (int64_t j = 0; j < 3; j++) {
					int64_t at = t * stride + j - 1;
					if (at >= 0 && at < tin)
						acc += w[(o * ci + i) * 3 + j] * x[i * tin + at];
				}
			y[t * co + o] = acc;
		}
	ref_gelu(y, tout * co);
}

/* The encoder over the fixed log-mel into r->enc. */
static int encoder(wh_run *r)
{
	const ref_cfg *c = r->c;
	int64_t hid = c->hid, S = r->S, mel = c->wh_mel;
	float *in = malloc((size_t)(mel * 2 * S + 2 * S * hid) * sizeof(float));
	if (in == NULL)
		return wt_seterr(r->err, WT_ENOMEM, "reference forward: out of memory");
	float *c1 = in + mel * 2 * S, *c1t = r->f; /* conv1's output, channels by frames */
	ref_whisper_mel(in, mel, S);
	const float *w1, *b1, *w2, *b2, *pos;
	int rv = repl(r, &w1, 3, hid, mel, 3, WH_ENC "conv1.weight");
	if (rv == WT_OK)
		rv = repl(r, &b1, 1, hid, 0, 0, WH_ENC "conv1.bias");
	if (rv == WT_OK)
		rv = repl(r, &w2, 3, hid, hid, 3, WH_ENC "conv2.weight");
	if (rv == WT_OK)
		rv = repl(r, &b2, 1, hid, 0, 0, WH_ENC "conv2.bias");
	if (rv == WT_OK)
		rv = repl(r, &pos, 2, S, hid, 0, WH_ENC "embed_positions.weight");
	if (rv == WT_OK) {
		conv(c1, in, w1, b1, hid, mel, 2 * S, 1, 2 * S);
		for (int64_t t = 0; t < 2 * S; t++) /* [frames, hid] -> [hid, frames] */
			for (int64_t o = 0; o < hid; o++)
				c1t[o * 2 * S + t] = c1[t * hid + o];
		conv(r->x, c1t, w2, b2, hid, hid, 2 * S, 2, S);
		for (int64_t i = 0; i < S * hid; i++)
			r->x[i] += pos[i];
	}
	free(in);
	wh_stack st = {WH_ENC, c->wh_eh, c->wh_ei, S, false};
	for (int64_t l = 0; rv == WT_OK && l < c->wh_el; l++)
		if ((rv = attn(r, &st, l, false)) == WT_OK)
			rv = mlp(r, &st, l);
	return rv == WT_OK ? norm(r, r->enc, r->x, S, WH_ENC, "layer_norm") : rv;
}

/* The decoder over tokens with cross-attention to r->enc, then the tied head. */
static int decoder(wh_run *r, const int64_t *tokens, float *logits)
{
	const ref_cfg *c = r->c;
	int64_t hid = c->hid, n = r->n;
	const float *emb, *pos;
	int rv = repl(r, &emb, 2, c->V, hid, 0, WH_DEC "embed_tokens.weight");
	if (rv == WT_OK)
		rv = repl(r, &pos, 2, c->max_pos, hid, 0, WH_DEC "embed_positions.weight");
	for (int64_t t = 0; rv == WT_OK && t < n; t++)
		for (int64_t i = 0; i < hid; i++)
			r->x[t * hid + i] = emb[tokens[t] * hid + i] + pos[t * hid + i];
	wh_stack st = {WH_DEC, c->H, c->I, n, true};
	for (int64_t l = 0; rv == WT_OK && l < c->L; l++)
		if ((rv = attn(r, &st, l, false)) == WT_OK && (rv = attn(r, &st, l, true)) == WT_OK)
			rv = mlp(r, &st, l);
	if (rv == WT_OK)
		rv = norm(r, r->x, r->x, n, WH_DEC, "layer_norm");
	if (rv == WT_OK)
		ref_linear(logits, r->x, emb, NULL, n, hid, c->V);
	return rv;
}

static int run(wh_run *r, const int64_t *tokens, float *logits)
{
	const ref_cfg *c = r->c;
	if (r->n < 1 || r->n > REF_MAX_TOKENS || r->n > c->max_pos)
		return wt_seterr(r->err, WT_EINVAL,
		                 "%lld tokens; the reference runs 1 to %d within "
		                 "max_target_positions %lld",
		                 (long long)r->n, REF_MAX_TOKENS, (long long)c->max_pos);
	for (int64_t t = 0; t < r->n; t++)
		if (tokens[t] < 0 || tokens[t] >= c->V)
			return wt_seterr(r->err, WT_EINVAL,
			                 "token %lld is %lld; vocab_size is %lld", (long long)t,
			                 (long long)tokens[t], (long long)c->V);
	int64_t m = r->n > 2 * r->S ? r->n : 2 * r->S, I = c->I > c->wh_ei ? c->I : c->wh_ei;
	size_t rows = (size_t)m, hid = (size_t)c->hid;
	size_t fw = (size_t)(I > 2 * c->hid ? I : 2 * c->hid);
	float *buf = calloc(rows * (9 * hid + fw) + (size_t)m, sizeof(float));
	if (buf == NULL)
		return wt_seterr(r->err, WT_ENOMEM, "reference forward: out of memory");
	float **p[] = {&r->enc, &r->x, &r->h, &r->q, &r->k, &r->v, &r->att, &r->o, &r->acc};
	for (size_t i = 0; i < 9; i++)
		*p[i] = buf + i * rows * hid;
	r->f = buf + 9 * rows * hid;
	r->sc = r->f + rows * fw;
	int rv = encoder(r);
	if (rv == WT_OK)
		rv = decoder(r, tokens, logits);
	free(buf);
	return rv;
}

int ref_whisper_full(const ref_cfg *c, ref_set *ck, const int64_t *tokens, size_t n_tok,
                     float *logits, wt_errbuf *err)
{
	wh_run r = {.c = c,
	            .sets = ck,
	            .T = 1,
	            .ckpt = true,
	            .n = (int64_t)n_tok,
	            .S = c->wh_src,
	            .err = err};
	return run(&r, tokens, logits);
}

int ref_whisper_sharded(const ref_cfg *c, ref_set *ranks, uint32_t T, const int64_t *tokens,
                        size_t n_tok, float *logits, wt_errbuf *err)
{
	if (c->wh_eh % T != 0 || c->wh_ei % T != 0)
		return wt_seterr(err, WT_ELAYOUT,
		                 "layout tp %u does not fit the encoder's %lld heads and %lld "
		                 "encoder_ffn_dim; the planner refuses it too",
		                 T, (long long)c->wh_eh, (long long)c->wh_ei);
	wh_run r = {.c = c, .sets = ranks, .T = T, .n = (int64_t)n_tok, .S = c->wh_src, .err = err};
	return run(&r, tokens, logits);
}
