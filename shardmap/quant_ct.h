/*
 * quant_ct.h — compressed-tensors sources (docs/format.md section 4.5): which
 * checkpoint tensors are the quantized weights and their companions, their
 * plan-time checks, the pass-through pieces into the int8-channel and
 * int4-group layouts, and dequantization for every other target.
 */
#ifndef WT_SHARDMAP_QUANT_CT_H
#define WT_SHARDMAP_QUANT_CT_H

#include "shardmap/plan_part.h"

#define SHARDMAP_CT_NAME_MAX 512 /* longest tensor name built from a weight name */

/* A compressed-tensors int8 or int4 checkpoint. */
bool shardmap_ct_source(const ckpt_config *cfg);
/* A checkpoint whose codes are packed in I32 words X.weight_packed (pack-quantized: 8 int4
 * or 4 int8 codes per word; int-quantized keeps one code per I8 byte X.weight). */
bool shardmap_ct_packed(const ckpt_config *cfg);
/* Codes per packed I32 word: 8 (int4) or 4 (int8). */
int64_t shardmap_ct_per_word(const ckpt_config *cfg);
/* The logical column count K of stored weight t (I32: words times codes per word). */
int64_t shardmap_ct_cols(const ckpt_config *cfg, const ckpt_tensor *t);
/* (shardmap_ct_describe, shardmap_ct_keepable: shardmap.h) */
/* Companion `leaf` ("weight_zero_point", "weight_g_idx") of weight `wname` ("X.weight" or
 * "X.weight_packed"), or NULL. Borrowed from c. */
const ckpt_tensor *shardmap_ct_aux(const ckpt *c, const char *wname, const char *leaf);
/* Unpack n int8 codes from pack_to_int32 words (code + 128, element k at bits 8*(k%4)). */
void shardmap_ct_unpack8(const uint32_t *words, int64_t n, int8_t *codes);
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
/* The logical view of a packed weight: [N, K/8] (int4) or [N, K/4] (int8) -> [N, K]. Other
 * tensors unchanged. */
void shardmap_ct_view(const ckpt_config *cfg, ckpt_tensor *t);
/* Companions X.weight_scale, X.input_scale, X.weight_shape, X.weight_zero_point,
 * X.weight_g_idx of an existing quantized weight: *used true (weight_shape, and
 * weight_zero_point of a symmetric scheme, are listed as skipped in p; a g_idx without
 * actorder "group" in config.json is WT_EUNSUPPORTED). A weight_scale beside a float weight
 * is WT_EUNSUPPORTED. */
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
 * (K logical): (f32(code) - f32(zp)) * f32(scale[n, g]) (quant_ct_dq.c); zero points and
 * g_idx are read from c and validated (WT_ECORRUPT naming the tensor). */
int shardmap_ct_dequant(const ckpt *c, const ckpt_tensor *t, const ckpt_tensor *st, const void *raw,
                        float *dst, wt_errbuf *err);
/* Read a one-element scale (F32, BF16 or F16 bytes) as float32. */
float shardmap_ct_scalar(const void *p, wt_dtype dt);

#endif
