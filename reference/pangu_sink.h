/*
 * pangu_sink.h — openPangu-Pro-MoE-V2 (PanguProMoEV2ForCausalLM, vLLM's openpangu.py with
 * OpenPanguSinkAttention; c->pv2) in the reference: its config (ref_cfg_pangu_v2) and its sink
 * attention, for the checkpoint and for a tp rank (pangu_sink.c).
 */
#ifndef WT_REFERENCE_PANGU_SINK_H
#define WT_REFERENCE_PANGU_SINK_H

#include "reference/reference_int.h"

/* The openPangu-Pro-MoE-V2 fields of c from config.json text (len bytes): sandwich_norm,
 * qk_nope_dim + qk_rope_dim (the loader's head_dim), qk_rope_dim rotary dims (even, from 2),
 * v_channels, param_sink_number (1 to 63), rope_interleave (true when absent: GPT-J's pairs),
 * rope_theta (required: vLLM reads config.rope_theta); rope_scaling given, n_group / topk_group
 * other than 1 WT_EUNSUPPORTED naming the key. Sets c->pv2 and c->pangu_moe (the sandwich). */
int ref_cfg_pangu_v2(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);

/* OpenPanguSinkAttention of layer l over T normed rows h into out [T, hid] (o_proj's output; a
 * rank's partial sum): tp 0 the checkpoint's q_proj / k_proj / v_proj / o_proj, k_layernorm and
 * param_sink_key / param_sink_value; else rank r of tp, its fused qkv_proj [q; k; v] (v heads of
 * v_channels rows), o_proj's columns (its bias on rank 0) and its kv heads' sinks. Heads or kv
 * heads not divisible by tp WT_ELAYOUT; more than 64 sinks and tokens together WT_EUNSUPPORTED. */
int ref_pv2_attn(const ref_cfg *c, ref_set *s, int64_t l, int64_t r, int64_t tp, const float *h,
                 int64_t T, float *out, wt_errbuf *err);

#endif
