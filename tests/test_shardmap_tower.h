/*
 * test_shardmap_tower.h — the SigLIP vision tower the multimodal planner tests build under
 * their own prefix (Keye, PaddleOCR-VL, Isaac, BAGEL, MiniCPM-V, Idefics3): tm_siglip_tower.
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

#endif
