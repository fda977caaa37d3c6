/*
 * ckpt.h — the reference forward pass over a checkpoint: the glue between
 * the reference (reference.h, tensors by name) and the loader / planner
 * (ckpt.c). reference/ is an internal module (build/libwt_internal.a, linked
 * by weightctl and the tests), never part of libweights.
 *
 * ref_verify() is the whole check: plan the layout, produce every
 * rank, run the full path over the checkpoint and the sharded path for every
 * EP group, and report the worst difference against the layout's budget.
 */
#ifndef WT_REFERENCE_CKPT_H
#define WT_REFERENCE_CKPT_H

#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "loader/loader.h"
#include "shardmap/shardmap.h"

/*
 * The reference configuration of a checkpoint: the fields the planner reads
 * come from the loader's parse (cc, loader/config.c) exactly as shardmap_plan
 * sees them — one parser for both, a Qwen2-VL `text_config` overlay
 * included — and the reference-only ones from the config.json text
 * (ref_cfg_finish, which lays text_config over the top level the same
 * way).
 */
int ref_cfg_from_ckpt(const ckpt_config *cc, const char *json, size_t len, ref_cfg *out,
                      wt_errbuf *err);

/* ref_cfg_from_ckpt over config.json text alone (tests). */
int ref_cfg_parse_json(const char *json, size_t len, ref_cfg *out, wt_errbuf *err);

/* Read every checkpoint tensor into ck under the names the family's rules use
 * (shardmap_canonical_name: a transformers 5.x checkpoint's names become the
 * 4.x ones), and the configuration into cfg (ref_cfg_from_ckpt). */
int ref_load_ckpt(const ckpt *c, ref_cfg *cfg, ref_set *ck, wt_errbuf *err);

/* Produce every rank of plan p into a new array of shardmap_n_ranks(p) sets (caller frees
 * with ref_free_ranks). */
int ref_load_ranks(const ckpt *c, const sm_plan *p, const wt_layout *l, ref_set **out,
                   wt_errbuf *err);

void ref_free_ranks(ref_set *r, uint32_t n);

/*
 * The budget a layout is held to, with its reason in *why: exact
 * (REF_TOL_F32) when the rank tensors hold the checkpoint's values
 * bit for bit (same float dtype, F32 output, or FP8-block pass-through), the
 * rounding budget when an unquantized output narrows them, else the scheme's
 * (REF_BUDGET_MX_* for an MXFP4 source, REF_BUDGET_LIN_* for a model with gated-delta-net
 * layers or PLaMo 2's Mamba mixers).
 */
double ref_layout_budget(ref_set *ck, const wt_layout *l, const char **why);

/* Result of one verification. */
typedef struct ref_result {
	ref_diff diff; /* worst EP group */
	uint32_t worst_group;
	double budget;   /* relative to diff.max_abs_ref */
	const char *why; /* the budget's reason; static */
	bool pass;
	uint32_t n_ranks;
	size_t n_tok;
	int64_t width; /* output floats per row: V logits, or hid for BERT */
} ref_result;

/* Optional hook between production and the sharded pass (tests break a shard here). */
typedef void (*ref_tamper_fn)(void *ctx, ref_set *ranks, uint32_t n_ranks);

/*
 * Plan and produce every rank of layout l (rank fields ignored), run both
 * paths on tokens and compare. WT_OK means the check RAN; res->pass says
 * whether the outputs agree within ref_layout_budget().
 */
int ref_verify(const ckpt *c, const wt_layout *l, const int64_t *tokens, size_t n_tok,
               ref_tamper_fn tamper, void *tctx, ref_result *res, wt_errbuf *err);

/*
 * The layout-independent half of ref_verify: a checkpoint's tensors and configuration
 * (ref_load_ckpt), the tokens, and once a layout needs them, the full path's outputs and
 * (MoE) expert choices. A caller checking several layouts of one checkpoint loads it once
 * (ref_full_load) and runs the full path once. ref_full_clear frees it (a zeroed or
 * cleared one too).
 */
typedef struct ref_full {
	ref_cfg cfg;
	ref_set ck;
	int64_t *tokens;
	size_t n_tok;
	float *out;      /* ref_out_count(cfg, n_tok) floats; NULL until a layout ran */
	int64_t *routes; /* [L * n_tok * topk] for an MoE model, else NULL */
} ref_full;

int ref_full_load(const ckpt *c, const int64_t *tokens, size_t n_tok, ref_full *f, wt_errbuf *err);
void ref_full_clear(ref_full *f);

/* ref_verify of layout l over f, loaded (ref_full_load) from the same checkpoint c. */
int ref_verify_full(const ckpt *c, ref_full *f, const wt_layout *l, ref_tamper_fn tamper,
                    void *tctx, ref_result *res, wt_errbuf *err);

/*
 * The full path alone: the reference outputs for tokens over checkpoint c in
 * *out (malloc'd, the caller frees; *rows x *width floats, row-major: decoders
 * one row of logits per token, BERT its hidden states plus the pooler row).
 */
int ref_full_outputs(const ckpt *c, const int64_t *tokens, size_t n_tok, float **out, size_t *rows,
                     int64_t *width, wt_errbuf *err);

#endif
