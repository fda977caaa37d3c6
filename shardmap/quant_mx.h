/*
 * quant_mx.h — MXFP4 sources (config.json quant_method "mxfp4", GPT-OSS experts;
 * docs/format.md section 4.6): which tensors they are, how the rules see them, their
 * scale companions, and the producer's dequantization. Private to shardmap/.
 */
#ifndef WT_SHARDMAP_QUANT_MX_H
#define WT_SHARDMAP_QUANT_MX_H

#include "shardmap/plan_int.h"

/* A tensor named "..._blocks" (an MXFP4 weight under any quantization_config: the
 * checks refuse it without quant_method mxfp4). */
bool shardmap_mx_weight(const ckpt_tensor *t);
/* For an MXFP4 weight entry: the rules' view (U8 [..., N, G, 16] is [..., N, G*32]) and
 * e->wscale = the X_scales beside it (SM_NONE if absent); for an SM_F_TRANS rule's stack
 * [E, K, N], the view [E, N, K]. Other entries: unchanged. */
void shardmap_mx_entry(const sm_ctx *x, sm_entry *e);
/* True for an X_scales whose X_blocks exists (consumed with it). */
bool shardmap_mx_companion(const sm_ctx *x, const char *name);
/* Dtype and shape of an MXFP4 weight and its scales; the config's quant_method. */
int shardmap_mx_check(const sm_ctx *x, const sm_entry *e, wt_errbuf *err);
/* Whether rule condition cond holds for the experts of cfg: SM_C_MX / SM_C_NOMX (a model
 * with experts whose quant_method is / is not "mxfp4"); true for any other. */
bool shardmap_mx_cond(const ckpt_config *cfg, int cond);
/* Why a tensor whose rule's condition failed is unknown ("config.json makes layer i
 * <why>"): the MXFP4 conditions' reasons, else the dense-layer one. */
const char *shardmap_mx_why(int cond);
/* Dequantize blocks `raw` (all of t) with scales st to BF16 out (raw bits; every
 * MXFP4 value is exact in BF16), t's view [..., N, K]; with deint, the N rows of each
 * leading index are de-interleaved (GPT-OSS gate/up: rows 2k gate, 2k+1 up ->
 * [gate; up]), each row dequantized straight into its place. t may be a part of a
 * stack [E, N, G, 16]: its experts [e0, e0 + t->shape[0]) (t's shape[0] and nbytes
 * those of the part, raw its bytes), whose scales alone are read (e0 is 0 for a
 * tensor read whole). A scale of 255 (NaN) is WT_ECORRUPT naming the tensor and the
 * element. */
int shardmap_mx_dequant(const ckpt *c, const ckpt_tensor *t, int64_t e0, const ckpt_tensor *st,
                        const uint8_t *raw, bool deint, uint16_t *out, wt_errbuf *err);

#endif
