/*
 * plan_part_int.h — what the partition rules' files share (plan_part.c, which dispatches
 * by rule kind, and plan_part_expert.c, the routed experts' kinds): the request each kind
 * function receives and its helpers.
 */
#ifndef WT_SHARDMAP_PLAN_PART_INT_H
#define WT_SHARDMAP_PLAN_PART_INT_H

#include "shardmap/plan_part.h"

/* One rank's cut of one instance: the request every kind function receives. */
typedef struct part_req {
	const sm_ctx *ctx;
	size_t first, n_parts;  /* the instance's entries [first, first + n_parts) */
	const sm_rule *rule;    /* the rule of its first entry (all share kind and unit) */
	const char *rt;         /* runtime name, for messages */
	int64_t tp_size;        /* T */
	int64_t tp_rank;        /* r */
	int64_t ep_rank;        /* e */
	const ckpt_tensor *src; /* the first entry's checkpoint tensor */
	sm_pvec *pieces;        /* out: pieces */
	sm_geo *geom;           /* out: geometry */
	wt_errbuf *err;
} part_req;

/* Append pc to the request's pieces (WT_ENOMEM naming its tensor). */
int shardmap_part_push(const part_req *req, sm_piece pc);
/* Geometry of a plain [rows, cols] tensor of ndim dimensions. */
void shardmap_geo_2d(sm_geo *g, int64_t rows, int64_t cols, int ndim);

/* The routed experts' kinds (plan_part_expert.c, docs/format.md section 2.4): w13 per expert
 * (SM_K_EXP13), stacked (SM_K_EXP13S / EXP13I), from two stacks (SM_K_EXPGU), non-gated
 * (SM_K_EXP1: w1 alone); w2 per expert (SM_K_EXP2) and stacked (SM_K_EXP2S); the w13 / w2 biases
 * (SM_K_EXPB13 / EXPB2). */
/* WT_ELAYOUT (naming the tensor, tp_size and the count) unless tp_size divides the rule's unit
 * count, which goes to *units (plan_part.c). */
int shardmap_part_check_units(const part_req *req, int64_t *units);

/* The vocabulary's rows (plan_part_vocab.c): SM_K_VOCAB. */
int shardmap_part_vocab(const part_req *req);

/* The recurrent mixers' kinds (plan_part_mixer.c): SM_K_ROWS2H, SM_K_CONVQKV, SM_K_ROWS3,
 * SM_K_MAMBA. */
int shardmap_part_halves_per_unit(const part_req *req);
int shardmap_part_conv_qkv(const part_req *req);
int shardmap_part_thirds(const part_req *req);
int shardmap_part_mamba(const part_req *req);

int shardmap_part_expert_w13(const part_req *req);
int shardmap_part_expert_w13_stacked(const part_req *req);
int shardmap_part_expert_w13_two(const part_req *req);
int shardmap_part_expert_w1(const part_req *req);
int shardmap_part_expert_w2(const part_req *req);
int shardmap_part_expert_w2_stacked(const part_req *req);
int shardmap_part_expert_b13(const part_req *req);
int shardmap_part_expert_b2(const part_req *req);

#endif
