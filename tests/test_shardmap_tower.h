/*
 * test_shardmap_tower.h — the SigLIP vision tower the multimodal planner tests build under
 * their own prefix (Keye, PaddleOCR-VL, Isaac, BAGEL, MiniCPM-V, Idefics3, HyperCLOVAX):
 * tm_siglip_tower; its attention-pooling head (BAGEL, HyperCLOVAX): tm_siglip_head.
 * Include test_shardmap_fx.h first (mm_add_vit_at).
 */
#ifndef WT_TEST_SHARDMAP_TOWER_H
#define WT_TEST_SHARDMAP_TOWER_H

/* tm_siglip_tower's flags: the patch embedding stored 2-D [ve, 3 x 2 x 2] (Isaac's linear
 * patch embedding; BAGEL's flattened one) instead of 4-D [ve, 3, 2, 2]. */
enum { TM_TOWER_PE2D = 1u << 0 };

/* A SigLIP tower under prefix vt ("....vision_model."), the names as given (mm_add_vit_at,
 * LAY_TEXT): the patch embedding (4-D, or 2-D with TM_TOWER_PE2D) and its bias, np
 * positions, `blocks` encoder blocks of width ve and MLP width vi (FX_VIT_BLOCK_LEAVES),
 * post_layernorm. */
static __attribute__((unused)) void tm_siglip_tower(tm_model *m, const char *vt, int blocks,
                                                    int64_t ve, int64_t vi, int64_t np,
                                                    unsigned flags)
{
	size_t pe = m->n;
	mm_add_vit_at(m, LAY_TEXT, vt, false, ve, vi, np, blocks);
	if (flags & TM_TOWER_PE2D) {
		st_desc *d = &m->d[pe];
		d->ndim = 2;
		d->shape[1] = 3 * 2 * 2;
		d->shape[2] = d->shape[3] = 0;
	}
}

/* SigLIP's attention-pooling head under prefix vt, the names as given: probe [1, 1, ve], the
 * attention's in_proj [3 ve, ve] / out_proj and biases, layernorm, an MLP of width vi. */
static __attribute__((unused)) void tm_siglip_head(tm_model *m, const char *vt, int64_t ve,
                                                   int64_t vi)
{
	static const struct {
		const char *leaf;
		int n3, k; /* n in ve (3: 3 ve; -1: vi), k: 1 ve, -1 vi, 0 none */
	} hl[] = {{"head.attention.in_proj_weight", 3, 1},  {"head.attention.in_proj_bias", 3, 0},
	          {"head.attention.out_proj.weight", 1, 1}, {"head.attention.out_proj.bias", 1, 0},
	          {"head.layernorm.weight", 1, 0},          {"head.layernorm.bias", 1, 0},
	          {"head.mlp.fc1.weight", -1, 1},           {"head.mlp.fc1.bias", -1, 0},
	          {"head.mlp.fc2.weight", 1, -1},           {"head.mlp.fc2.bias", 1, 0}};
	char b[200];
	snprintf(b, sizeof(b), "%shead.probe", vt);
	tm_add(m, b, WT_DTYPE_INVALID, 3, 1, 1, ve);
	for (size_t k = 0; k < sizeof(hl) / sizeof(hl[0]); k++) {
		snprintf(b, sizeof(b), "%s%s", vt, hl[k].leaf);
		tm_add2(m, b, hl[k].n3 < 0 ? vi : hl[k].n3 * ve, hl[k].k < 0 ? vi : hl[k].k * ve);
	}
}

#endif
