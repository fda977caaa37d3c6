/*
 * test_shardmap_same_lm.h — a multimodal family's language model against the text family it
 * reuses, shared by the planner tests of Keye-VL, PaddleOCR-VL, GLM-4V, dots.ocr, Step3-VL,
 * Isaac, HunYuan-VL, Nemotron Nano VL, R-4B and Bee-8B: every output of a rank outside the
 * vision and projector prefixes is the text family's rank's tensor of the same name (less a
 * prefix such as Nemotron Nano VL's language_model.; dtype, rank of shape, bytes), and the
 * text family's rank has no other; fx_same_lm_lays under the six layouts they compare.
 */
#ifndef WT_TEST_SHARDMAP_SAME_LM_H
#define WT_TEST_SHARDMAP_SAME_LM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "test_shardmap_fx.h"

/* Rank r of a (the multimodal plan) against rank r of b (the text family `what`'s plan of the
 * same weights); a's outputs under any of skip (NULL-terminated name prefixes) are left out, the
 * others looked up in b without their prefix strip (Nemotron Nano VL's language_model.; "" for
 * none). */
static __attribute__((unused)) void fx_same_rank_strip(const fx *a, const fx *b, uint32_t r,
                                                       const char *const *skip, const char *strip,
                                                       const char *what)
{
	size_t na = shardmap_rank_n_tensors(a->p, r), nb = 0;
	for (size_t i = 0; i < na; i++) {
		const sm_out_info *t = shardmap_rank_tensor(a->p, r, i);
		bool other = false;
		for (const char *const *s = skip; *s != NULL && !other; s++)
			other = strncmp(t->name, *s, strlen(*s)) == 0;
		if (other)
			continue;
		nb++;
		assert_true(strncmp(t->name, strip, strlen(strip)) == 0);
		const char *bn = t->name + strlen(strip);
		const sm_out_info *u = info(b, r, bn);
		assert_int_equal(t->ndim, u->ndim);
		assert_int_equal(t->nbytes, u->nbytes);
		assert_int_equal(t->dtype, u->dtype);
		if (memcmp(a->pr->b[r][i], out_bytes(b, r, bn), t->nbytes) != 0)
			fail_msg("rank %u '%s' differs from the %s family's", r, t->name, what);
	}
	assert_int_equal(nb, shardmap_rank_n_tensors(b->p, r));
}

/* fx_same_rank_strip with the same names in both plans. */
static __attribute__((unused)) void fx_same_rank_but(const fx *a, const fx *b, uint32_t r,
                                                     const char *const *skip, const char *what)
{
	fx_same_rank_strip(a, b, r, skip, "", what);
}

/* Under TP 1 / 2 / 4 / 8, int8-channel TP 2 and fp8-channel TP 4: every rank of mm()'s plan
 * (cfg) against the same rank of the text family `what`'s plan of tm() (tcfg), as
 * fx_same_rank_strip (skip, strip); when alt is not NULL, alt()'s plan (the same weights in
 * another layout, cfg) gives mm()'s ranks byte for byte. */
static __attribute__((unused)) void fx_same_lm_lays(tm_model *(*mm)(void), tm_model *(*alt)(void),
                                                    const char *cfg, tm_model *(*tm)(void),
                                                    const char *tcfg, const char *const *skip,
                                                    const char *strip, const char *what)
{
	static const struct {
		uint32_t tp;
		wt_quant q;
	} lays[] = {{1, WT_QUANT_NONE}, {2, WT_QUANT_NONE},         {4, WT_QUANT_NONE},
	            {8, WT_QUANT_NONE}, {2, WT_QUANT_INT8_CHANNEL}, {4, WT_QUANT_FP8_CHANNEL}};
	for (size_t j = 0; j < sizeof(lays) / sizeof(lays[0]); j++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[j].tp;
		l.quant = lays[j].q;
		fx a, b, o;
		fx_open_l(&a, mm(), cfg, &l, true);
		if (alt != NULL)
			fx_open_l(&o, alt(), cfg, &l, true);
		fx_open_l(&b, tm(), tcfg, &l, true);
		assert_string_equal(shardmap_family(b.p), what);
		for (uint32_t r = 0; r < l.tp_size; r++) {
			fx_same_rank_strip(&a, &b, r, skip, strip, what);
			if (alt != NULL)
				fx_same_rank(&a, &o, r, NULL);
		}
		fx_close(&a);
		if (alt != NULL)
			fx_close(&o);
		fx_close(&b);
	}
}

#endif
