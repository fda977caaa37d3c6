/*
 * step3.h — Step 3's language model (Step3TextForCausalLM, vLLM's step3_text.py; c->step3) in
 * the reference: its config (ref_cfg_step3), its MoE layers, its tensors under DeepSeek-MoE's
 * names and its attention (step3.c).
 */
#ifndef WT_REFERENCE_STEP3_H
#define WT_REFERENCE_STEP3_H

#include "reference/reference_int.h"

struct ckpt_config; /* loader/loader.h */

/* The Step 3 fields of c from config.json (rms_norm_eps, RoPE, norm_expert_weight; moe_top_k
 * reaches num_experts_per_tok through the loader's key reader): WT_EUNSUPPORTED naming what the
 * reference does not run. */
int ref_cfg_step3(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* The layers moe_layers_enum names (the loader's moe_layers) into c->l4_moe. */
int ref_step3_layers(const struct ckpt_config *cc, ref_cfg *c, wt_errbuf *err);

/* Whether s holds Step 3's own names (a moe. or share_expert. module). */
bool ref_step3_named(ref_set *s);
/* in's tensors (the checkpoint's: its expert stacks split per expert; or a rank's) into the empty
 * set out under DeepSeek-MoE's names: moe. -> mlp., share_expert. -> mlp.shared_experts. */
int ref_step3_rename(const ref_cfg *c, ref_set *in, ref_set *out, bool whole, wt_errbuf *err);

/* Step3TextAttention of layer l on the heads of p (the checkpoint: p->ckpt, its q/k/v_proj; a
 * rank: the whole fused qkv_proj and its heads' wq rows / o_proj columns) over T normed rows h:
 * out [T, hid] is o_proj's output (a rank's partial sum). */
int ref_step3_attn(const ref_cfg *c, ref_set *s, int64_t l, const ref_q3n_part *p, const float *h,
                   int64_t T, float *out, wt_errbuf *err);

#endif
