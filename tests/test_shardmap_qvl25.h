/*
 * test_shardmap_qvl25.h — Qwen2.5-VL for planner tests of the families that carry it under their
 * own names (test_shardmap_opencua.c, test_shardmap_hcx_v2.c): its language model (Qwen2's: two
 * layers, q/k/v biases, lm_head with `head`) and its tower (two blocks of RMSNorms and a gated
 * MLP with biases, the merger, the 5-D patch embed), in that order, each tensor added through
 * the test's own add(), which maps the 4.x name (model.*, lm_head.*, visual.*) to the layout
 * under test.
 */
#ifndef WT_TEST_SHARDMAP_QVL25_H
#define WT_TEST_SHARDMAP_QVL25_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "test_shardmap_builder.h"

typedef void (*vl_add_fn)(tm_model *m, int layout, const char *c, int64_t a, int64_t b);

/* Language model width hid, MLP inter (V 256, q 128, k / v 32); tower width ve, MLP vi, merger
 * width vm (ve x 4 after the 2 x 2 merge). */
typedef struct qvl25_dims {
	int64_t hid, inter, ve, vi, vm;
} qvl25_dims;

static __attribute__((unused)) void qvl25_add(tm_model *m, int layout, vl_add_fn add, bool head,
                                              const qvl25_dims *d)
{
	const int64_t hid = d->hid, in = d->inter, ve = d->ve, vi = d->vi, vm = d->vm;
	add(m, layout, "model.embed_tokens.weight", 256, hid);
	add(m, layout, "model.norm.weight", hid, 0);
	if (head)
		add(m, layout, "lm_head.weight", 256, hid);
	const struct {
		const char *n;
		int64_t a, b;
	} lm[] =
	    {{"input_layernorm.weight", hid, 0},    {"post_attention_layernorm.weight", hid, 0},
	     {"self_attn.q_proj.weight", 128, hid}, {"self_attn.k_proj.weight", 32, hid},
	     {"self_attn.v_proj.weight", 32, hid},  {"self_attn.o_proj.weight", hid, 128},
	     {"self_attn.q_proj.bias", 128, 0},     {"self_attn.k_proj.bias", 32, 0},
	     {"self_attn.v_proj.bias", 32, 0},      {"mlp.gate_proj.weight", in, hid},
	     {"mlp.up_proj.weight", in, hid},       {"mlp.down_proj.weight", hid, in}},
	  blk[] = {{"norm1.weight", ve, 0},          {"norm2.weight", ve, 0},
	           {"attn.qkv.weight", 3 * ve, ve},  {"attn.qkv.bias", 3 * ve, 0},
	           {"attn.proj.weight", ve, ve},     {"attn.proj.bias", ve, 0},
	           {"mlp.gate_proj.weight", vi, ve}, {"mlp.gate_proj.bias", vi, 0},
	           {"mlp.up_proj.weight", vi, ve},   {"mlp.up_proj.bias", vi, 0},
	           {"mlp.down_proj.weight", ve, vi}, {"mlp.down_proj.bias", ve, 0}};
	char b[200];
	for (int l = 0; l < 2; l++)
		for (size_t k = 0; k < sizeof(lm) / sizeof(lm[0]); k++) {
			snprintf(b, sizeof(b), "model.layers.%d.%s", l, lm[k].n);
			add(m, layout, b, lm[k].a, lm[k].b);
		}
	for (int v = 0; v < 2; v++)
		for (size_t k = 0; k < sizeof(blk) / sizeof(blk[0]); k++) {
			snprintf(b, sizeof(b), "visual.blocks.%d.%s", v, blk[k].n);
			add(m, layout, b, blk[k].a, blk[k].b);
		}
	add(m, layout, "visual.merger.ln_q.weight", ve, 0);
	add(m, layout, "visual.merger.mlp.0.weight", vm, vm);
	add(m, layout, "visual.merger.mlp.0.bias", vm, 0);
	add(m, layout, "visual.merger.mlp.2.weight", hid, vm);
	add(m, layout, "visual.merger.mlp.2.bias", hid, 0);
	add(m, layout, "visual.patch_embed.proj.weight", ve * 3 * 2 * 2 * 2, 0);
	st_desc *p = &m->d[m->n - 1];
	int64_t shape5[5] = {ve, 3, 2, 2, 2};
	p->ndim = 5;
	memcpy(p->shape, shape5, sizeof(shape5));
}

#endif
