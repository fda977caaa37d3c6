/*
 * plamo2.c — PLaMo 2 (Plamo2ForCausalLM, pfnet/plamo-2-*, remote code; c->plamo2, which also
 * sets c->plamo3's decoder switches) as vLLM's plamo2.py runs it: every layer
 *   x += post_mixer_norm(mixer(pre_mixer_norm(x)));  x += post_mlp_norm(mlp(pre_mlp_norm(x)))
 * (Plamo2DecoderLayer's fused residual adds, model.norm at the end), the mixer of layer i
 * Plamo2MambaMixer when vLLM's is_mamba(config, i) holds (the loader's layer_types), else
 * Plamo2AttentionMixer: qkv_proj [q; k; v], RMSNorms per head with each head's own weight row
 * (q_weight [H, d], k_weight [KV, d]; no offset), RoPE (rope_theta, absent 1e4) on the whole
 * head, 1/sqrt(d) scores, o_proj; the MLP is SwiGLU over gate_up_proj [gate; up].
 *
 * The checkpoint's names are read as Gemma 3's (PLaMo 3's table) and the mixer's as stored:
 *
 *   checkpoint / rank (model.layers.layers.{i}.)   read as (model.layers.{i}.)    offset
 *   pre_mixer_norm.                                 input_layernorm.               1
 *   post_mixer_norm.                                post_attention_layernorm.      1/5
 *   pre_mlp_norm.                                   pre_feedforward_layernorm.     1
 *   post_mlp_norm.                                  post_feedforward_layernorm.    1/5^1.5
 *   mixer.q_weight / mixer.k_weight                 self_attn.q_norm. / k_norm.    -
 *   mixer.qkv_proj. / mixer.o_proj.                 self_attn.                     -
 *   mixer.* of a Mamba layer                        mixer.* (as stored)            -
 *   model.norm.                                     model.norm.                    1
 *
 * The offsets are the ones vLLM's load_weights adds (the shards carry the stored bytes); it adds
 * none to q_weight / k_weight or the mixer's dt / B / C norms, nor does this. The checkpoint's
 * in_proj rows are per head [gate_h; x_h] (load_weights' reshape to [hid, Hm, 2 d] and chunk):
 * read as [gate; x] (every head's gate rows, then every head's x rows), the rank's form.
 *
 * The Mamba mixer, Hm heads of d channels (Im = Hm d), state N, dt rank R, a conv of K taps:
 *   [gate; x] = in_proj h; x = silu(conv1d(x)) (causal, depthwise, no bias; over x only);
 *   [B (N); C (N); dt (R)] = bcdt_proj x, each through its RMSNorm (B_norm_weight,
 *   C_norm_weight, dt_norm_weight; rms_norm_eps); dt = softplus(dt_proj dt + dt_bias) [Hm],
 *   A = -exp(A_log) [Hm]; per head h and channel p the state [N] (zero at first):
 *   S = exp(dt_h A_h) S + dt_h B x_p, y_p = S . C + D_h x_p; y times silu(gate) (no gated
 *   norm); out_proj [hid, Im].
 * A tp rank holds Hm / tp heads: its gate and x rows of in_proj, conv1d's channels, bcdt_proj's
 * input columns (row-parallel: B / C / dt are the all-reduced sum of the ranks' partial
 * products), dt_proj's rows, A_log / D / dt_bias of its heads, out_proj's columns; the three
 * norms whole on every rank (each rank normalises the sum with its own replica).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/plamo3.h"
#include "reference/reference_int.h"

#define MIXER "model.layers.%lld.mixer."

int ref_p2_layers(const ckpt_config *cc, ref_cfg *c, wt_errbuf *err)
{
	c->plamo2 = true;
	c->m_heads = cc->mamba_n_heads;
	c->m_dh = cc->mamba_d_head;
	c->m_state = cc->mamba_d_state;
	c->m_conv = cc->mamba_d_conv;
	c->m_rank = cc->mamba_dt_rank;
	c->m_inner = c->m_heads * c->m_dh;
	if (c->L > REF_L4_MAX_LAYERS || (int64_t)cc->n_layer_types != c->L)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %lld layers (%zu typed); the reference runs PLaMo 2 "
		                 "with up to %d, one type each",
		                 (long long)c->L, cc->n_layer_types, REF_L4_MAX_LAYERS);
	if (c->m_heads <= 0 || c->m_dh <= 0 || c->m_state <= 0 || c->m_conv <= 0 || c->m_rank <= 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: PLaMo 2's Mamba mixer of %lld heads of %lld, state "
		    "%lld, conv %lld, dt rank %lld; the reference needs positive sizes",
		    (long long)c->m_heads, (long long)c->m_dh, (long long)c->m_state,
		    (long long)c->m_conv, (long long)c->m_rank);
	for (int64_t i = 0; i < c->L; i++)
		if (cc->layer_types[i] == CKPT_LAYER_MAMBA)
			c->g4_mamba[i / 64] |= 1ull << (i % 64);
	return WT_OK;
}

/* rope_theta is read (and refused when not above 1) with every family's keys (cfg.c), absent
 * the loader's Plamo2Config default 1e4 (config_defaults_remote.c); no windows. */
int ref_cfg_plamo2(ref_cfg *c)
{
	c->sandwich = c->qk_norm = c->fused_ckpt = c->fused_gate_up = true;
	return WT_OK;
}

static const char *const p2_tops[][2] = {{"model.layers.layers.", "model.layers."}};
static const char *const p2_leaves[][2] = {
    {".pre_mixer_norm.", ".input_layernorm."},
    {".post_mixer_norm.", ".post_attention_layernorm."},
    {".pre_mlp_norm.", ".pre_feedforward_layernorm."},
    {".post_mlp_norm.", ".post_feedforward_layernorm."},
    {".mixer.q_weight", ".self_attn.q_norm.weight"},
    {".mixer.k_weight", ".self_attn.k_norm.weight"},
    {".mixer.qkv_proj.", ".self_attn.qkv_proj."},
    {".mixer.o_proj.", ".self_attn.o_proj."},
};

/* The checkpoint's in_proj t (rows per head [gate_h; x_h]) added to out under name as
 * [gate; x], row bytes moved as they are. */
static int p2_in_proj(const ref_cfg *c, const ref_tensor *t, const char *name, ref_set *out,
                      wt_errbuf *err)
{
	int64_t hm = c->m_heads, d = c->m_dh, rows = t->ndim == 2 ? t->shape[0] : 0;
	if (rows != 2 * hm * d || t->nbytes % (uint64_t)rows != 0)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': %lld rows, not %lld heads of [gate; x] of %lld",
		                 t->name, (long long)rows, (long long)hm, (long long)d);
	size_t rb = (size_t)(t->nbytes / (uint64_t)rows);
	uint8_t *b = malloc(t->nbytes ? (size_t)t->nbytes : 1);
	if (b == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
	for (int64_t h = 0; h < hm; h++)
		for (int64_t j = 0; j < d; j++) {
			memcpy(b + (size_t)(h * d + j) * rb, t->data + (size_t)(h * 2 * d + j) * rb,
			       rb);
			memcpy(b + (size_t)(hm * d + h * d + j) * rb,
			       t->data + (size_t)(h * 2 * d + d + j) * rb, rb);
		}
	int rv = ref_set_add(out, name, t->dtype, t->ndim, t->shape, b, t->nbytes, err);
	free(b);
	return rv;
}

static int p2_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                  wt_errbuf *err)
{
	(void)in;
	char name[512];
	int rv = ref_map_name(t->name, REF_NAME_MAP(p2_tops), REF_NAME_MAP(p2_leaves), name,
	                      sizeof(name), NULL, NULL, NULL, err);
	if (rv != WT_OK)
		return rv;
	size_t n = strlen(name);
	static const char ip[] = ".mixer.in_proj.weight";
	if (x->ckpt && n >= sizeof(ip) - 1 && strcmp(name + n - (sizeof(ip) - 1), ip) == 0)
		return p2_in_proj(x->c, t, name, out, err);
	return ref_set_add_as(out, name, t, err);
}

/* vLLM's load-time offset of the (renamed) norm n; 0: none. */
static double p2_offset(const char *n)
{
	if (strstr(n, ".post_attention_layernorm.weight") != NULL)
		return 1.0 / 5.0;
	if (strstr(n, ".post_feedforward_layernorm.weight") != NULL)
		return 1.0 / pow(5.0, 1.5);
	if (strstr(n, ".input_layernorm.weight") != NULL ||
	    strstr(n, ".pre_feedforward_layernorm.weight") != NULL ||
	    strcmp(n, "model.norm.weight") == 0)
		return 1.0;
	return 0.0;
}

int ref_plamo2_rename(const ref_cfg *c, ref_set *in, ref_set *out, bool whole, wt_errbuf *err)
{
	int rv = ref_rename_each(in, out, p2_one, c, whole, err);
	return rv != WT_OK ? rv : ref_norm_offsets(out, p2_offset, err);
}

void ref_p2_head_norm(const ref_cfg *c, float *x, const float *w, int64_t T, int64_t nh)
{
	for (int64_t t = 0; t < T; t++)
		for (int64_t h = 0; h < nh; h++) {
			float *v = x + (t * nh + h) * c->d;
			ref_norm(c, v, v, w + h * c->d, 1, c->d);
		}
}

static float siluf(float v)
{
	return v / (1.0f + expf(-v));
}

/* torch.nn.functional.softplus (beta 1, threshold 20), as the scan kernel's. */
static float softplusf(float v)
{
	return v > 20.0f ? v : log1pf(expf(v));
}

int ref_p2_in(const ref_cfg *c, ref_set *s, int64_t l, int64_t hl, const float *h, int64_t T,
              float *xc, float *z, float *xp, wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t il = hl * c->m_dh, nxp = c->m_rank + 2 * c->m_state;
	const float *w, *cw, *bw;
	int rv;
	if ((rv = ref_getf(s, &w, false, err, 2, 2 * il, c->hid, 0, MIXER "in_proj.weight", L)) ||
	    (rv = ref_getf(s, &cw, false, err, 3, il, 1, c->m_conv, MIXER "conv1d.weight", L)) ||
	    (rv = ref_getf(s, &bw, false, err, 2, nxp, il, 0, MIXER "bcdt_proj.weight", L)))
		return rv;
	float *proj = malloc((size_t)(T * 2 * il + T * il + T * nxp) * sizeof(float));
	if (proj == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld Mamba mixer: out of memory", L);
	float *xin = proj + T * 2 * il, *part = xin + T * il;
	ref_linear(proj, h, w, NULL, T, c->hid, 2 * il);
	for (int64_t t = 0; t < T; t++) { /* [gate; x] */
		memcpy(z + t * il, proj + t * 2 * il, (size_t)il * sizeof(float));
		memcpy(xin + t * il, proj + t * 2 * il + il, (size_t)il * sizeof(float));
	}
	ref_causal_conv1d(xin, cw, NULL, T, il, c->m_conv, xc);
	for (int64_t i = 0; i < T * il; i++)
		xc[i] = siluf(xc[i]);
	ref_linear(part, xc, bw, NULL, T, il, nxp);
	for (int64_t i = 0; i < T * nxp; i++)
		xp[i] += part[i];
	free(proj);
	return WT_OK;
}

/* The scan of hl heads over T tokens into y [T, hl d]: xc the convolved x, dt [T, hl] after
 * softplus, bc [T, 2N] the normalised B and C, A [hl] = -exp(A_log). The state in double. */
static void p2_scan(const ref_cfg *c, int64_t hl, const float *A, const float *D, const float *xc,
                    const float *dt, const float *bc, int64_t T, float *y, double *S)
{
	int64_t N = c->m_state, dh = c->m_dh, il = hl * dh;
	memset(S, 0, (size_t)(il * N) * sizeof(double));
	for (int64_t t = 0; t < T; t++) {
		const float *B = bc + t * 2 * N, *C = B + N;
		for (int64_t hh = 0; hh < hl; hh++) {
			float dl = dt[t * hl + hh];
			double dA = exp((double)(dl * A[hh]));
			for (int64_t p = 0; p < dh; p++) {
				int64_t i = hh * dh + p;
				float x = xc[t * il + i];
				double acc = 0.0, dx = (double)dl * (double)x;
				for (int64_t n = 0; n < N; n++) {
					double v = S[i * N + n] * dA + dx * (double)B[n];
					S[i * N + n] = v;
					acc += v * (double)C[n];
				}
				y[t * il + i] = (float)(acc + (double)D[hh] * (double)x);
			}
		}
	}
}

int ref_p2_out(const ref_cfg *c, ref_set *s, int64_t l, int64_t hl, const float *xc, const float *z,
               const float *xp, int64_t T, float *out, wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t R = c->m_rank, N = c->m_state, nxp = R + 2 * N, il = hl * c->m_dh;
	const float *dn, *bn, *cn, *dw, *db, *al, *dd, *wo;
	int rv;
	if ((rv = ref_getf(s, &bn, false, err, 1, N, 0, 0, MIXER "B_norm_weight", L)) ||
	    (rv = ref_getf(s, &cn, false, err, 1, N, 0, 0, MIXER "C_norm_weight", L)) ||
	    (rv = ref_getf(s, &dn, false, err, 1, R, 0, 0, MIXER "dt_norm_weight", L)) ||
	    (rv = ref_getf(s, &dw, false, err, 2, hl, R, 0, MIXER "dt_proj.weight", L)) ||
	    (rv = ref_getf(s, &db, false, err, 1, hl, 0, 0, MIXER "dt_bias", L)) ||
	    (rv = ref_getf(s, &al, false, err, 1, hl, 0, 0, MIXER "A_log", L)) ||
	    (rv = ref_getf(s, &dd, false, err, 1, hl, 0, 0, MIXER "D", L)) ||
	    (rv = ref_getf(s, &wo, false, err, 2, c->hid, il, 0, MIXER "out_proj.weight", L)))
		return rv;
	size_t n = (size_t)(T * R + T * 2 * N + T * hl + hl + T * il) * sizeof(float) +
	           (size_t)(il * N) * sizeof(double);
	float *dr = malloc(n);
	if (dr == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld Mamba scan: out of memory", L);
	float *bc = dr + T * R, *dt = bc + T * 2 * N, *A = dt + T * hl, *y = A + hl;
	double *S = (double *)(y + T * il);
	for (int64_t t = 0; t < T; t++) { /* the norms on the all-reduced [B; C; dt] */
		ref_norm(c, bc + t * 2 * N, xp + t * nxp, bn, 1, N);
		ref_norm(c, bc + t * 2 * N + N, xp + t * nxp + N, cn, 1, N);
		ref_norm(c, dr + t * R, xp + t * nxp + 2 * N, dn, 1, R);
	}
	ref_linear(dt, dr, dw, NULL, T, R, hl);
	for (int64_t t = 0; t < T; t++)
		for (int64_t hh = 0; hh < hl; hh++)
			dt[t * hl + hh] = softplusf(dt[t * hl + hh] + db[hh]);
	for (int64_t hh = 0; hh < hl; hh++)
		A[hh] = -expf(al[hh]);
	p2_scan(c, hl, A, dd, xc, dt, bc, T, y, S);
	for (int64_t i = 0; i < T * il; i++)
		y[i] *= siluf(z[i]);
	ref_linear(out, y, wo, NULL, T, il, c->hid);
	free(dr);
	return WT_OK;
}

int ref_p2_mixer_full(const ref_cfg *c, ref_set *s, int64_t l, const float *h, int64_t T,
                      float *out, wt_errbuf *err)
{
	int64_t im = c->m_inner, nxp = c->m_rank + 2 * c->m_state;
	float *xc = calloc((size_t)(2 * T * im + T * nxp), sizeof(float));
	if (xc == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld Mamba mixer: out of memory",
		                 (long long)l);
	float *z = xc + T * im, *xp = z + T * im;
	int rv = ref_p2_in(c, s, l, c->m_heads, h, T, xc, z, xp, err);
	if (rv == WT_OK)
		rv = ref_p2_out(c, s, l, c->m_heads, xc, z, xp, T, out, err);
	free(xc);
	return rv;
}
