/*
 * quant_ct.h — compressed-tensors sources (docs/format.md section 4.5): which
 * checkpoint tensors are the quantized weights and their companions, their
 * plan-time checks, the pass-through pieces into the int8-channel and
 * int4-group layouts, and dequantization for every other target.
 */
#ifndef WT_SHARDMAP_QUANT_CT_H
#define WT_SHARDMAP_QUANT_CT_H

#include "shardmap/plan_part.h"

/* A compressed-tensors int8 (I8 X.weight) or int4 (I32 X.weight_packed) checkpoint. */
bool shardmap_ct_source(const ckpt_config *cfg);
/* An int4 checkpoint whose codes are packed 8 per I32 (pack-quantized; int-quantized W4A8
 * keeps one code per I8 byte and is packed while producing). */
bool shardmap_ct_packed(const ckpt_config *cfg);
/* Pack n int4 codes (-8..7, n % 8 == 0) as 4.3 / pack_to_int32 do: code + 8, element k of
 * each run of 8 at bits 4*(k%8). The index of the first code outside -8..7 (nothing is
 * then promised of words), or -1. */
int64_t shardmap_ct_pack(const int8_t *codes, int64_t n, uint32_t *words);
/* WT_ECORRUPT naming tensor `name` and element `bad` of int4 codes outside -8..7. */
int shardmap_ct_bad_code(const char *name, int64_t bad, int code, wt_errbuf *err);
/* Whether t is a quantized weight of cfg's compressed-tensors scheme. */
bool shardmap_ct_weight(const ckpt_config *cfg, const ckpt_tensor *t);
/* The tensor `name` (a weight name ending ".weight"), or in an int4 checkpoint its
 * "<name>_packed" form; NULL if neither exists. */
const ckpt_tensor *shardmap_ct_find(const ckpt *c, const ckpt_config *cfg, const char *name);
/* The name the family rules match: "X.weight_packed" -> "X.weight" in buf (int4
 * checkpoints), else name itself. NULL if it does not fit. */
const char *shardmap_ct_rule_name(const ckpt_config *cfg, const char *name, char *buf, size_t cap);
/* The logical view of a packed int4 weight: [N, K/8] -> [N, K]. Other tensors unchanged. */
void shardmap_ct_view(const ckpt_config *cfg, ckpt_tensor *t);
/* Companions X.weight_scale, X.input_scale, X.weight_shape, X.weight_zero_point of an
 * existing quantized weight: *used true (weight_shape and weight_zero_point are listed as
 * skipped in p). A weight_scale beside a float weight is WT_EUNSUPPORTED. */
int shardmap_ct_companion(const sm_ctx *x, sm_plan *p, const char *name, bool *used,
                          wt_errbuf *err);
/* Set e->wscale / e->iscale of a quantized weight; false (nothing set) for other tensors. */
bool shardmap_ct_attach(const sm_ctx *x, sm_entry *e);
/* Dtypes and shapes of quantized weight e (its view) and of its scales. */
int shardmap_ct_check(const sm_ctx *x, const sm_entry *e, wt_errbuf *err);
/* Whether the layout keeps the checkpoint's scheme (pass-through). */
bool shardmap_ct_pass(const ckpt_config *cfg, const wt_layout *l);
/* Int4 pass-through: false (and *bad set to the first offending piece) when a column
 * piece of pv does not start and end on a whole group. */
bool shardmap_ct_group_aligned(const ckpt_config *cfg, const sm_pvec *pv, const sm_piece **bad);
/* Pass-through pieces of an instance of n parts from its logical pieces pv: the weight's
 * (wp, in stored columns) and the weight scale's (sp, sources n + part). *wcols and
 * *scols receive the per-row widths of the emitted weight and scale. */
int shardmap_ct_pieces(const sm_ctx *x, size_t n, const sm_pvec *pv, int64_t cols, sm_pvec *wp,
                       sm_pvec *sp, int64_t *wcols, int64_t *scols, const char *rt, wt_errbuf *err);
/* Dequantize weight t (raw bytes as stored, whole) with its scale st into dst F32 [N, K]
 * (K logical): f32(code) * f32(scale). */
int shardmap_ct_dequant(const ckpt *c, const ckpt_tensor *t, const ckpt_tensor *st, const void *raw,
                        float *dst, wt_errbuf *err);
/* Read a one-element scale (F32, BF16 or F16 bytes) as float32. */
float shardmap_ct_scalar(const void *p, wt_dtype dt);

#endif
