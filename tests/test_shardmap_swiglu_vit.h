/*
 * test_shardmap_swiglu_vit.h — the check of one block of a ViT with a fused qkv and a SwiGLU
 * MLP (fc1 / fc3 merged into fc13, fc2), cut as vLLM cuts it, shared by the planner tests of
 * the families that carry one under their own names: Ovis's AIMv2 trunk
 * (test_shardmap_ovis.c) and dots.ocr's DotsVisionTransformer (test_shardmap_dots_ocr.c).
 */
#ifndef WT_TEST_SHARDMAP_SWIGLU_VIT_H
#define WT_TEST_SHARDMAP_SWIGLU_VIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "test_shardmap_fx.h"

/* Rank r of T's block under pre (".../blocks.N.") by hand: qkv (weight and, with biases, bias)
 * the rank's heads of q, k and v ([q; k; v] rows, ve each); proj by columns; fc13 [fc1_r;
 * fc3_r] (weight and bias); fc2 by columns ([ve, vi]); the two norms (named norm1 / norm2 as
 * the family calls them) and the row-parallel biases whole. */
static __attribute__((unused)) void fx_swiglu_vit_block_is(const fx *f, uint32_t T, uint32_t r,
                                                           const char *pre, const char *norm1,
                                                           const char *norm2, int64_t ve,
                                                           int64_t vi, bool bias)
{
	char n[200], s[200];
	const char *const w[] = {norm1, norm2, "attn.proj.bias", "mlp.fc2.bias"};
	for (size_t k = 0; k < (bias ? 4u : 2u); k++) {
		snprintf(n, sizeof(n), "%s%s", pre, w[k]);
		repl(f, r, n);
	}
	int64_t loc = ve / T, il = vi / T;
	static const char *const qkv[] = {"attn.qkv.weight", "attn.qkv.bias"};
	for (int k = 0; k < (bias ? 2 : 1); k++) {
		snprintf(n, sizeof(n), "%s%s", pre, qkv[k]);
		shp(f, r, n, k ? 1 : 2, 3 * loc, k ? 0 : ve, 0);
		for (int part = 0; part < 3; part++)
			rows_at(f, r, n, part * loc, n, part * ve + r * loc, loc);
	}
	snprintf(n, sizeof(n), "%sattn.proj.weight", pre);
	cols_of(f, r, T, n, n, ve, ve);
	static const char *const sfx[] = {"weight", "bias"};
	for (int k = 0; k < (bias ? 2 : 1); k++) {
		snprintf(n, sizeof(n), "%smlp.fc13.%s", pre, sfx[k]);
		shp(f, r, n, k ? 1 : 2, 2 * il, k ? 0 : ve, 0);
		snprintf(s, sizeof(s), "%smlp.fc1.%s", pre, sfx[k]);
		rows_at(f, r, n, 0, s, r * il, il);
		snprintf(s, sizeof(s), "%smlp.fc3.%s", pre, sfx[k]);
		rows_at(f, r, n, il, s, r * il, il);
	}
	snprintf(n, sizeof(n), "%smlp.fc2.weight", pre);
	cols_of(f, r, T, n, n, ve, vi);
}

#endif
