/*
 * ref_mixers.h — the reference passes' recurrent and hybrid token mixers (included by
 * reference_int.h): Qwen3-Next's gated delta net
 * (qwen3_next.c), LFM2's short convolutions (lfm2.c), MiniMax's lightning attention
 * (minimax.c), the Mamba2 mixers of Granite 4.0 / Bamba / Falcon-H1 (granite4.c), Nemotron-H's
 * layers (nemotron_h.c) and Jamba's Mamba (v1) mixer (jamba.c): their config readers, layer
 * predicates and mixers.
 */
#ifndef WT_REFERENCE_REF_MIXERS_H
#define WT_REFERENCE_REF_MIXERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reference/reference.h"

struct ckpt_config; /* loader/loader.h */

/* The Qwen3-Next fields of c (q3n set by the family map; the linear-attention sizes and
 * layers from the loader's parse, ckpt.c) from config.json (cfg_qwen3_next.c); arch is
 * named in refusals. */
int ref_cfg_qwen3_next(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Whether Qwen3-Next's layer l is linear attention (the gated delta net). */
static inline bool ref_q3n_linear(const ref_cfg *c, int64_t l)
{
	return c->q3n && ref_l4_bit(c->q3n_linear, l);
}
/* What one set holds of Qwen3-Next's token mixers: the checkpoint (ckpt: q_proj / k_proj
 * / v_proj and o_proj's bias, added here) or one tp rank (the fused qkv_proj; o_proj's
 * bias is the caller's, once after the all-reduce). Full attention: q heads [q0, q0 + Hl)
 * and kv heads [kv0, kv0 + KVl); linear attention: hk key heads with their value heads
 * (lin_hv / lin_hk each), whole groups of in_proj_qkvz / in_proj_ba rows. */
typedef struct ref_q3n_part {
	bool ckpt;
	int64_t Hl, KVl, q0, kv0;
	int64_t hk;
} ref_q3n_part;
/* Layer l's token mixer (gated delta net or gated attention, ref_q3n_linear) of set s on
 * T normed rows h: out [T, hid] is out_proj's / o_proj's output (a rank's partial)
 * (qwen3_next.c). */
int ref_q3n_mixer(const ref_cfg *c, ref_set *s, int64_t l, const ref_q3n_part *p, const float *h,
                  int64_t T, float *out, wt_errbuf *err);

/* The LFM2 fields of c (lfm2 set by the family map; the conv layers, kernel and MLP size
 * from the loader's parse, ckpt.c) from config.json (cfg_lfm2.c). */
int ref_cfg_lfm2(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Whether LFM2's layer l is a short-conv layer. */
static inline bool ref_lfm2_conv(const ref_cfg *c, int64_t l)
{
	return c->lfm2 && ref_l4_bit(c->lfm2_conv, l);
}
/* What one set holds of LFM2's mixers: the checkpoint (ckpt: q_proj / k_proj / v_proj,
 * conv.*) or one tp rank (the fused qkv_proj, short_conv.* with its [B_r; C_r; x_r] rows).
 * Attention: q heads [q0, q0 + Hl), kv heads [kv0, kv0 + KVl); short conv: ch channels;
 * out_bias: add out_proj's bias (conv_bias; the checkpoint, or one rank of a TP group). */
typedef struct ref_lfm2_part {
	bool ckpt, out_bias;
	int64_t Hl, KVl, q0, kv0, ch;
} ref_lfm2_part;
/* Layer l's mixer (short conv or attention) of set s on T normed rows h into out [T, hid]
 * (out_proj's output, a rank's partial) (lfm2.c). */
int ref_lfm2_mixer(const ref_cfg *c, ref_set *s, int64_t l, const ref_lfm2_part *p, const float *h,
                   int64_t T, float *out, wt_errbuf *err);
/* MiniMax's factors from config.json (cfg_minimax.c; minimax and the layers set by the
 * family map and ckpt.c). */
int ref_cfg_minimax(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* The MiniMax-M2 fields of c (m2 set by the family map): rotary_dim and its RoPE, the
 * sigmoid routing's one group (cfg_minimax_m2.c); arch is named in refusals. */
int ref_cfg_minimax_m2(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Whether MiniMax's layer l is a lightning-attention layer. */
static inline bool ref_mm_lin(const ref_cfg *c, int64_t l)
{
	return c->minimax && ref_l4_bit(c->mm_lin, l);
}
/* MiniMax: x = alpha * h (h the block's normed input, the residual MiniMaxDecoderLayer
 * keeps) before the residual add of layer l's attention (mlp false) or MoE (true); a no-op
 * for every other family. */
static inline void ref_mm_resid(const ref_cfg *c, float *x, const float *h, int64_t n, int64_t l,
                                bool mlp)
{
	if (!c->minimax)
		return;
	float a = (float)c->mm_alpha[mlp ? 2 : ref_mm_lin(c, l) ? 1 : 0];
	for (int64_t i = 0; i < n; i++)
		x[i] = a * h[i];
}
/* What one set holds of a lightning layer: heads [q0, q0 + Hl) of H. */
typedef struct ref_mm_part {
	int64_t Hl, q0;
} ref_mm_part;
/* MiniMax's lightning attention (minimax.c) of layer l on T normed rows h. With ss: add each
 * token's sum of squares over the part's Hl*d attention channels into ss[T] and stop there
 * (the sharded pass's all-reduced norm). Else out [T, hid] = out_proj(sigmoid(output_gate h)
 * * norm(attn)) of the part, the norm's mean square per token ms[T] over all H*d channels
 * (NULL: the part's own, the full path). */
int ref_mm_lightning(const ref_cfg *c, ref_set *s, int64_t l, const ref_mm_part *p, const float *h,
                     int64_t T, float *ss, const float *ms, float *out, wt_errbuf *err);

/* The causal depthwise conv1d of K taps over T tokens of nc channels (x, y [T, nc]; w [nc,
 * K]): y[t, ch] = sum_j w[ch, j] x[t - K + 1 + j, ch] (zero before the first token) + b[ch]
 * (b may be NULL) — torch's Conv1d(groups=nc, padding=K-1)[..., :T] (math.c). */
void ref_causal_conv1d(const float *x, const float *w, const float *b, int64_t T, int64_t nc,
                       int64_t K, float *y);

/* The Granite 4.0 fields of c (g4 set by the family map, granite's switches too; the
 * Mamba sizes and layers from the loader's parse, ckpt.c) from config.json
 * (cfg_granite4.c); arch is named in refusals. */
int ref_cfg_granite4(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Bamba's fields of c (the layers from ckpt.c, as Granite 4.0's) from config.json
 * (cfg_granite4.c). */
int ref_cfg_bamba(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Falcon-H1's fields of c (the layers from ckpt.c, all Mamba and attention) from
 * config.json (cfg_granite4.c). */
int ref_cfg_falconh1(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Whether layer l is an Mllama cross-attention layer, skipped on text tokens. */
static inline bool ref_ml_cross(const ref_cfg *c, int64_t l)
{
	return c->mllama && ref_l4_bit(c->ml_cross, l);
}
/* Rows of embed_tokens: the vocabulary, Mllama's 8 image tokens after it. */
static inline int64_t ref_embed_rows(const ref_cfg *c)
{
	return c->V + (c->mllama ? 8 : 0);
}
/* Whether Nemotron-H's layer l is an MLP or MoE layer (its one mixer the relu2 MLP or the
 * MoE of relu2 experts). */
static inline bool ref_nh_mlp(const ref_cfg *c, int64_t l)
{
	return c->nh && ref_l4_bit(c->nh_mlp, l);
}
/* Nemotron-H (nemotron_h.c). ref_nh_layers: the mixer's sizes and the layer kinds of
 * ckpt_config cc (its layer_types from hybrid_override_pattern); ref_cfg_nemotron_h:
 * layer_norm_epsilon (1e-5), relu2, no RoPE, the mixer's sizes checked; ref_nh_rename: the
 * checkpoint's backbone. names under the Granite 4.0 / Arcee ones (in's tensors borrowed). */
int ref_nh_layers(const struct ckpt_config *cc, ref_cfg *c, wt_errbuf *err);
int ref_cfg_nemotron_h(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
int ref_nh_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err);
/* Whether Granite 4.0's layer l is a Mamba2 mixer. */
static inline bool ref_g4_mamba_layer(const ref_cfg *c, int64_t l)
{
	return c->g4 && ref_l4_bit(c->g4_mamba, l);
}
/* What one set holds of a Granite 4.0 Mamba2 mixer: the checkpoint (ckpt: every head and
 * group) or one tp rank: heads [h0, h0 + hl) and groups [g0, g0 + gl) of B / C (the
 * whole one group on every rank when tp does not divide mamba_n_groups), as
 * docs/format.md 2.7 cuts in_proj, conv1d, A_log, D, dt_bias, the norm and out_proj. */
typedef struct ref_g4_part {
	bool ckpt;
	int64_t h0, hl, g0, gl;
} ref_g4_part;
/* Groups of the gated norm: Falcon-H1's mamba_n_groups (m_norm_groups), else one. */
#define REF_G4_MAX_NORM_GROUPS 16
static inline int64_t ref_g4_norm_groups(const ref_cfg *c)
{
	return c->m_norm_groups > 0 ? c->m_norm_groups : 1;
}
/* Stage 1 of layer l's mixer on the heads of p (granite4.c): the scan output times
 * silu(z), y [T, hl * m_dh], and each token's sum of squares per norm group (of the gated
 * output, or with Falcon-H1's m_norm_before_gate of the scan output) added to
 * ssq[T * ref_g4_norm_groups]. Falcon-H1: in_proj's input times fh1_ssm_in, its rows
 * times fh1_mup. */
int ref_g4_scan(const ref_cfg *c, ref_set *s, int64_t l, const ref_g4_part *p, const float *h,
                int64_t T, float *y, float *ssq, wt_errbuf *err);
/* Stage 2: y / sqrt(ms + eps) times the gated norm's weight (the heads' slice), then
 * out_proj's columns into out [T, hid] (no bias: the caller adds out_proj.bias once);
 * ms[T * ref_g4_norm_groups] the mean squares over each group's channels. Falcon-H1
 * without m_rms_norm: y as it is (ms not read). */
int ref_g4_out(const ref_cfg *c, ref_set *s, int64_t l, const ref_g4_part *p, const float *y,
               const float *ms, int64_t T, float *out, wt_errbuf *err);
/* The whole mixer of the checkpoint (both stages, out_proj.bias added). */
int ref_g4_mixer_full(const ref_cfg *c, ref_set *s, int64_t l, const float *h, int64_t T,
                      float *out, wt_errbuf *err);

/* Falcon-H1's attention inputs: q, k, v (rows of nq / nkv floats) times
 * attention_in_multiplier, k times key_multiplier too (no biases: FalconH1Config has none). */
static inline void ref_fh1_qkv(const ref_cfg *c, float *q, float *k, float *v, int64_t nq,
                               int64_t nkv)
{
	for (int64_t i = 0; c->fh1 && i < nq; i++)
		q[i] *= c->fh1_attn_in;
	for (int64_t i = 0; c->fh1 && i < nkv; i++) {
		k[i] = k[i] * c->fh1_attn_in * c->fh1_key;
		v[i] *= c->fh1_attn_in;
	}
}
/* Falcon-H1's block output: o = o * attention_out_multiplier + m (the Mamba mixer's output,
 * already times ssm_out_multiplier). */
static inline void ref_fh1_sum(const ref_cfg *c, float *o, const float *m, int64_t n)
{
	for (int64_t i = 0; c->fh1 && i < n; i++)
		o[i] = o[i] * c->fh1_attn_out + m[i];
}

/* Jamba's fields of c (the Mamba sizes and the layer masks from ckpt.c) from config.json
 * (cfg_jamba.c); arch is named in refusals. */
int ref_cfg_jamba(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);

/* Whether Jamba's layer l is a Mamba (v1) mixer. */
static inline bool ref_jb_mamba_layer(const ref_cfg *c, int64_t l)
{
	return c->jamba && ref_l4_bit(c->g4_mamba, l);
}
/* Stage 1 of Jamba's mixer of layer l on the il channels set s holds (the checkpoint: all
 * m_inner; a tp rank: its slice) (jamba.c): in_proj, the causal conv and hidden_act into
 * xc [T, il], z [T, il], and x_proj's (partial) product added into xp [T, m_rank +
 * 2 * m_state], the row-parallel sum the caller all-reduces. */
int ref_jb_in(const ref_cfg *c, ref_set *s, int64_t l, int64_t il, const float *h, int64_t T,
              float *xc, float *z, float *xp, wt_errbuf *err);
/* Stage 2: the dt / B / C norms of the summed xp with s's replicas, dt_proj and softplus,
 * the scan of the il channels, times hidden_act(z), out_proj's columns into out [T, hid]
 * (no bias: the caller adds out_proj.bias once). */
int ref_jb_out(const ref_cfg *c, ref_set *s, int64_t l, int64_t il, const float *xc, const float *z,
               const float *xp, int64_t T, float *out, wt_errbuf *err);
/* The whole mixer of the checkpoint (both stages, out_proj.bias added). */
int ref_jb_mixer_full(const ref_cfg *c, ref_set *s, int64_t l, const float *h, int64_t T,
                      float *out, wt_errbuf *err);

/* PLaMo 2 (plamo2.c; c->plamo2, with c->plamo3's decoder switches). ref_p2_layers: the
 * mixer's sizes and the Mamba layers (bits of g4_mamba) from ckpt_config cc; ref_cfg_plamo2:
 * the sandwich, per-head q/k norms, fused qkv_proj / gate_up_proj; ref_plamo2_rename: the
 * checkpoint's (whole) or a rank's names as the passes read them, the norms' load-time offsets
 * added, the checkpoint's in_proj rows as [gate; x]. */
int ref_p2_layers(const struct ckpt_config *cc, ref_cfg *c, wt_errbuf *err);
int ref_cfg_plamo2(ref_cfg *c); /* WT_OK */
int ref_plamo2_rename(const ref_cfg *c, ref_set *in, ref_set *out, bool whole, wt_errbuf *err);
/* Whether PLaMo 2's layer l is a Mamba mixer (vLLM's is_mamba). */
static inline bool ref_p2_mamba_layer(const ref_cfg *c, int64_t l)
{
	return c->plamo2 && ref_l4_bit(c->g4_mamba, l);
}
/* PLaMo 2's q / k norms: T rows of nh heads of d, each head by its own weight row w [nh, d]. */
void ref_p2_head_norm(const ref_cfg *c, float *x, const float *w, int64_t T, int64_t nh);
/* Stage 1 of PLaMo 2's Mamba mixer of layer l on the hl heads set s holds (the checkpoint:
 * all; a tp rank: its own): in_proj into z (the gate) and x, the causal conv and silu into
 * xc [T, hl d], z [T, hl d], and bcdt_proj's (partial) product added into xp [T, 2N + R]
 * ([B; C; dt]), the row-parallel sum the caller all-reduces. */
int ref_p2_in(const ref_cfg *c, ref_set *s, int64_t l, int64_t hl, const float *h, int64_t T,
              float *xc, float *z, float *xp, wt_errbuf *err);
/* Stage 2: the B / C / dt norms of the summed xp with s's replicas, dt_proj, softplus with
 * dt_bias, the scan of the hl heads with D, times silu(z), out_proj's columns into out
 * [T, hid] (a rank's partial). */
int ref_p2_out(const ref_cfg *c, ref_set *s, int64_t l, int64_t hl, const float *xc, const float *z,
               const float *xp, int64_t T, float *out, wt_errbuf *err);
/* The whole mixer of the checkpoint (both stages). */
int ref_p2_mixer_full(const ref_cfg *c, ref_set *s, int64_t l, const float *h, int64_t T,
                      float *out, wt_errbuf *err);

#endif
