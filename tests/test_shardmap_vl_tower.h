/*
 * test_shardmap_vl_tower.h — Qwen2-VL's vision tower for planner tests of the families that
 * carry it under their own names (test_shardmap_jina_vl.c, test_shardmap_tarsier2.c,
 * test_shardmap_opencua.c): two blocks, the merger and the 5-D patch embed, each tensor added
 * through the test's own add(), which maps the 4.x name (visual.*) to the layout under test;
 * and vl_ck_name, the checkpoint names of the release layouts (Tarsier2's, OpenCUA's).
 */
#ifndef WT_TEST_SHARDMAP_VL_TOWER_H
#define WT_TEST_SHARDMAP_VL_TOWER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "test_shardmap_builder.h"

/* VL_QVL: Qwen2-VL's / Qwen2.5-VL's 4.x names (the rules'); VL_REL: the release layout
 * (language_model.*, vision_tower.*); VL_HF5: transformers 5.x's names; VL_MIXED: the release's
 * but the tower under visual. */
typedef enum { VL_QVL, VL_REL, VL_HF5, VL_MIXED } lay_t;

/* Checkpoint name of the 4.x name c in layout y. */
static __attribute__((unused)) void vl_ck_name(char *b, size_t n, const char *c, lay_t y)
{
	bool lm = strncmp(c, "model.", 6) == 0, head = strncmp(c, "lm_head.", 8) == 0,
	     vis = strncmp(c, "visual.", 7) == 0;
	if ((y == VL_REL || y == VL_MIXED) && (lm || head))
		snprintf(b, n, "language_model.%s", c);
	else if (y == VL_REL && vis)
		snprintf(b, n, "vision_tower.%s", c + 7);
	else if (y == VL_HF5 && lm)
		snprintf(b, n, "model.language_model.%s", c + 6);
	else if (y == VL_HF5 && vis)
		snprintf(b, n, "model.visual.%s", c + 7);
	else
		snprintf(b, n, "%s", c);
}

typedef void (*vl_add_fn)(tm_model *m, int layout, const char *c, int64_t a, int64_t b);

/* Width ve, merger width vm (ve x 4 after the 2 x 2 merge), language model width hid. */
static __attribute__((unused)) void vl_add_tower(tm_model *m, int layout, vl_add_fn add, int64_t ve,
                                                 int64_t vm, int64_t hid)
{
	const struct {
		const char *n;
		int64_t a, b;
	} v[] = {
	    {"norm1.weight", ve, 0},         {"norm1.bias", ve, 0},
	    {"norm2.weight", ve, 0},         {"norm2.bias", ve, 0},
	    {"attn.qkv.weight", 3 * ve, ve}, {"attn.qkv.bias", 3 * ve, 0},
	    {"attn.proj.weight", ve, ve},    {"attn.proj.bias", ve, 0},
	    {"mlp.fc1.weight", 4 * ve, ve},  {"mlp.fc1.bias", 4 * ve, 0},
	    {"mlp.fc2.weight", ve, 4 * ve},  {"mlp.fc2.bias", ve, 0},
	};
	char b[200];
	for (int blk = 0; blk < 2; blk++)
		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
			snprintf(b, sizeof(b), "visual.blocks.%d.%s", blk, v[k].n);
			add(m, layout, b, v[k].a, v[k].b);
		}
	add(m, layout, "visual.merger.ln_q.weight", ve, 0);
	add(m, layout, "visual.merger.ln_q.bias", ve, 0);
	add(m, layout, "visual.merger.mlp.0.weight", vm, vm);
	add(m, layout, "visual.merger.mlp.0.bias", vm, 0);
	add(m, layout, "visual.merger.mlp.2.weight", hid, vm);
	add(m, layout, "visual.merger.mlp.2.bias", hid, 0);
	add(m, layout, "visual.patch_embed.proj.weight", ve * 3 * 2 * 2 * 2, 0);
	st_desc *d = &m->d[m->n - 1];
	int64_t shape5[5] = {ve, 3, 2, 2, 2};
	d->ndim = 5;
	memcpy(d->shape, shape5, sizeof(shape5));
}

#endif
