/*
 * afmoe.h — AFMoE (AfmoeForCausalLM, Arcee's Trinity; c->afmoe) in the reference: its config
 * (cfg_afmoe.c), its tensors under the names the decoder passes read and its gated attention
 * (afmoe.c).
 */
#ifndef WT_REFERENCE_AFMOE_H
#define WT_REFERENCE_AFMOE_H

#include "reference/reference_int.h"

/* The AFMoE fields of c (afmoe set by the family map; kind REF_DEEPSEEK with glm4_moe for the
 * router) from config.json: WT_EUNSUPPORTED naming what the reference does not run. */
int ref_cfg_afmoe(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);

/* Whether s holds AFMoE's own names (pre_mlp_layernorm), which ref_afmoe_rename lays onto Gemma
 * 2's sandwich and DeepSeek-V3's router names. */
bool ref_afmoe_named(ref_set *s);
/* in's tensors (the checkpoint's or a rank's) into the empty set out, renamed. */
int ref_afmoe_rename(ref_set *in, ref_set *out, wt_errbuf *err);

/* AfmoeAttention of layer l on the heads of p (the checkpoint: p->ckpt, its q/k/v_proj; a rank:
 * its fused qkv_proj and gate_proj rows) over T normed rows h: out [T, hid] is o_proj's output (a
 * rank's partial sum), before post_attention_layernorm. */
int ref_afmoe_attn(const ref_cfg *c, ref_set *s, int64_t l, const ref_q3n_part *p, const float *h,
                   int64_t T, float *out, wt_errbuf *err);

#endif
