/*
 * quant_f8.h — FP8 sources: the dequantization of every FP8 checkpoint kind
 * (block, per-tensor and per-channel; docs/format.md 4.4, 4.7), and the
 * fbgemm_fp8 checkpoints' names, scale companions, plan-time checks and
 * modules_to_not_convert (section 4.7). Private to shardmap/.
 */
#ifndef WT_SHARDMAP_QUANT_F8_H
#define WT_SHARDMAP_QUANT_F8_H

#include "shardmap/plan_int.h"

/* A quant_method "fbgemm_fp8" checkpoint. */
bool shardmap_fb_source(const ckpt_config *cfg);
/* The modules_to_not_convert entry that keeps the module of checkpoint tensor `name`
 * (the name without its last component: "X.weight" is module X, a Llama 4 stack
 * "L.feed_forward.experts.gate_up_proj" module "L.feed_forward.experts") unquantized, as
 * transformers' _replace_with_fbgemm_fp8_linear matches them: the module's own name (its
 * last component) equals an entry, the module's full name equals it, or entry + "." occurs
 * anywhere in the full name. NULL when none does, or cfg is not fbgemm_fp8. Borrowed. */
const char *shardmap_fb_kept(const ckpt_config *cfg, const char *name);
/* For an fbgemm_fp8 F8_E4M3 tensor that is no "X.weight" (a Llama 4 expert stack X): its
 * scale "X_scale" in e->wscale (SM_NONE if absent) and true; false for other tensors. */
bool shardmap_fb_attach(const sm_ctx *x, sm_entry *e);
/* In an fbgemm_fp8 checkpoint: `name` is "X_scale" beside an existing stack X: *used when X
 * is F8_E4M3 (consumed with it), else WT_EUNSUPPORTED; "X.input_scale" beside an existing
 * X.weight: WT_EUNSUPPORTED (activations are scaled dynamically; the format stores no
 * input scale). Anything else: *used false, WT_OK. */
int shardmap_fb_companion(const sm_ctx *x, const char *name, bool *used, wt_errbuf *err);
/* Dtype and shape checks of an fbgemm_fp8 F8_E4M3 weight e and its scale, and that no
 * modules_to_not_convert entry keeps its module. */
int shardmap_fb_check(const sm_ctx *x, const sm_entry *e, wt_errbuf *err);

/* Dequantize FP8 source t (raw: all its bytes) with scales st (F32, BF16 or F16, read here)
 * to F32 dst by mode: SM_SRC_DQ_TENSOR one scale; SM_SRC_DQ_BLOCK the checkpoint's block
 * scales, or per row (a 1 x K block) in an fbgemm_fp8 checkpoint; SM_SRC_DQ_TRANS a stack
 * [E, K, N] transposed per expert to [E, N, K], then per row (E * N scales). For
 * SM_SRC_DQ_TRANS t may be a part of the stack: its experts [e0, e0 + t->shape[0]) (t's
 * shape[0] and nbytes those of the part, raw its bytes), whose scales alone are read;
 * e0 is 0 otherwise. dst holds every element; *cols receives its row width. Scales are not checked
 * (as FP8 sources' never were: a NaN fails a quantizer downstream). */
int shardmap_f8_dequant(const ckpt *c, uint8_t mode, const ckpt_tensor *t, int64_t e0,
                        const ckpt_tensor *st, const uint8_t *raw, float *dst, int64_t *cols,
                        wt_errbuf *err);

#endif
