/*
 * test_shardmap_gpt2_fx.h — GPT-2's test checkpoint and its transposed-slice checks, shared by
 * the planner tests of GPT2LMHeadModel (test_shardmap_gpt2.c) and
 * GPT2ForSequenceClassification (test_shardmap_gpt2_cls.c). Include after test_shardmap_fx.h.
 */
#ifndef WT_TEST_SHARDMAP_GPT2_FX_H
#define WT_TEST_SHARDMAP_GPT2_FX_H

/* hid 128, H 8, head size 16, I 256 (n_inner), V 1000, 2 layers, 32 positions */
#define HID 128
#define INN 256
#define H1  "transformer.h.1."

/* The model under prefix pre ("transformer." or ""); lm_head.weight when lm_head; the
 * attn.bias / attn.masked_bias buffers when bufs. */
static __attribute__((unused)) tm_model *tm_gpt2(const char *pre, int lm_head, int bufs)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
	snprintf(b, sizeof(b), "%swte.weight", pre);
	tm_add2(m, b, 1000, HID);
	snprintf(b, sizeof(b), "%swpe.weight", pre);
	tm_add2(m, b, 32, HID);
	snprintf(b, sizeof(b), "%sln_f.weight", pre);
	tm_add2(m, b, HID, 0);
	snprintf(b, sizeof(b), "%sln_f.bias", pre);
	tm_add2(m, b, HID, 0);
	if (lm_head)
		tm_add2(m, "lm_head.weight", 1000, HID);
	static const struct {
		const char *leaf;
		int64_t a, b;
	} leaves[] = {
	    {"ln_1.weight", HID, 0},
	    {"ln_1.bias", HID, 0},
	    {"ln_2.weight", HID, 0},
	    {"ln_2.bias", HID, 0},
	    {"attn.c_attn.weight", HID, 3 * HID},
	    {"attn.c_attn.bias", 3 * HID, 0},
	    {"attn.c_proj.weight", HID, HID},
	    {"attn.c_proj.bias", HID, 0},
	    {"mlp.c_fc.weight", HID, INN},
	    {"mlp.c_fc.bias", INN, 0},
	    {"mlp.c_proj.weight", INN, HID},
	    {"mlp.c_proj.bias", HID, 0},
	};
	for (int i = 0; i < 2; i++) {
		for (size_t k = 0; k < sizeof(leaves) / sizeof(leaves[0]); k++) {
			snprintf(b, sizeof(b), "%sh.%d.%s", pre, i, leaves[k].leaf);
			tm_add2(m, b, leaves[k].a, leaves[k].b);
		}
		if (bufs) {
			snprintf(b, sizeof(b), "%sh.%d.attn.bias", pre, i);
			tm_add2(m, b, 32, 32);
			snprintf(b, sizeof(b), "%sh.%d.attn.masked_bias", pre, i);
			tm_add(m, b, WT_F32, 0, 0, 0, 0);
		}
	}
	return m;
}

/* Rank r's rt (BF16 [n, K]) from row o is columns [a, a+n) of source src [K, N], transposed
 * (a Conv1D's outputs a.. as nn.Linear rows). */
static __attribute__((unused)) void trows_are(const fx *f, uint32_t r, const char *rt, int64_t o,
                                              const char *src, int64_t a, int64_t n)
{
	int k = tm_find(f->m, src);
	assert_true(k >= 0);
	int64_t K = f->m->d[k].shape[0], N = f->m->d[k].shape[1];
	const uint16_t *s = (const uint16_t *)f->m->data[k];
	const uint16_t *out = (const uint16_t *)out_bytes(f, r, rt);
	for (int64_t j = 0; j < n; j++)
		for (int64_t c = 0; c < K; c++)
			if (out[(o + j) * K + c] != s[c * N + a + j])
				fail_msg("rank %u '%s' [%lld, %lld] != '%s' [%lld, %lld]", r, rt,
				         (long long)(o + j), (long long)c, src, (long long)c,
				         (long long)(a + j));
}

/* Rank r's rt (BF16 [N, K/T]) is source src [K, N] transposed, its columns [r*K/T, ...). */
static __attribute__((unused)) void tcols_of(const fx *f, uint32_t r, uint32_t T, const char *rt,
                                             const char *src)
{
	int k = tm_find(f->m, src);
	assert_true(k >= 0);
	int64_t K = f->m->d[k].shape[0], N = f->m->d[k].shape[1], Kl = K / T;
	shp(f, r, rt, 2, N, Kl, 0);
	const uint16_t *s = (const uint16_t *)f->m->data[k];
	const uint16_t *out = (const uint16_t *)out_bytes(f, r, rt);
	for (int64_t j = 0; j < N; j++)
		for (int64_t c = 0; c < Kl; c++)
			if (out[j * Kl + c] != s[(r * Kl + c) * N + j])
				fail_msg("rank %u '%s' [%lld, %lld]: not '%s' [%lld, %lld]", r, rt,
				         (long long)j, (long long)c, src, (long long)(r * Kl + c),
				         (long long)j);
}

#endif
