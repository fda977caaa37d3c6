/*
 * test_shardmap_mtp.h — what the MTP draft tests share (test_shardmap_deepseek_mtp.c,
 * test_shardmap_glm4_moe_mtp.c): the draft's config from the target's, an MTP layer's own
 * modules added to a model, a rank's decoder layer under mtp_block. against the target
 * family's same layer, the MTP modules' and the vocabulary tables' slices. Define SEED and
 * include test_shardmap_util.h and test_shardmap_fx.h first.
 */
#ifndef WT_TEST_SHARDMAP_MTP_H
#define WT_TEST_SHARDMAP_MTP_H

/* The sizes the MTP modules are checked against: hidden_size, vocab_size and the padded
 * vocabulary (vocab_pad 64: V rounded up to a multiple of 64 and T). */
typedef struct mtp_dims {
	int64_t hid, V, Vp;
} mtp_dims;

/* out: the target's config `cfg` with architecture `from` renamed `to`,
 * num_nextn_predict_layers `n` (NULL: none) and `keys` appended; cfg must not hold
 * num_nextn_predict_layers when n is given. */
static __attribute__((unused)) void mtp_cfg(char *out, size_t cap, const char *cfg,
                                            const char *from, const char *to, const char *n,
                                            const char *keys)
{
	const char *a = strstr(cfg, from);
	assert_non_null(a);
	size_t len = strlen(cfg), fl = strlen(from);
	assert_true(cfg[len - 1] == '}');
	char nk[64] = "";
	if (n != NULL)
		snprintf(nk, sizeof(nk), ",\"num_nextn_predict_layers\":%s", n);
	snprintf(out, cap, "%.*s%s%.*s%s%s}", (int)(a - cfg), cfg, to,
	         (int)(cfg + len - 1 - (a + fl)), a + fl, nk, keys);
}

/* Layer i's MTP modules not yet in m: enorm, hnorm, shared_head.norm, eh_proj [hid, 2 hid],
 * shared_head.head [V, hid] and (emb) embed_tokens [V, hid], in the model's dtype. */
static __attribute__((unused)) void mtp_own_add(tm_model *m, int i, const mtp_dims *d, bool emb)
{
	static const struct {
		const char *leaf;
		int what; /* 0 [hid], 1 [hid, 2 hid], 2 [V, hid] */
	} own[] = {{"enorm.weight", 0},
	           {"hnorm.weight", 0},
	           {"shared_head.norm.weight", 0},
	           {"eh_proj.weight", 1},
	           {"shared_head.head.weight", 2},
	           {"embed_tokens.weight", 2}};
	for (size_t k = 0; k < sizeof(own) / sizeof(own[0]); k++) {
		char b[200];
		tm_fmt(b, sizeof(b), TM_L, i, own[k].leaf);
		if (tm_find(m, b) >= 0 || (!emb && k == 5))
			continue;
		tm_add2(m, b, own[k].what == 2 ? d->V : d->hid,
		        own[k].what == 0   ? 0
		        : own[k].what == 1 ? 2 * d->hid
		                           : d->hid);
	}
}

/* Remove every tensor of m whose name starts with `prefix`. */
static __attribute__((unused)) void mtp_remove_prefix(tm_model *m, const char *prefix)
{
	for (size_t k = m->n; k-- > 0;)
		if (strncmp(m->name[k], prefix, strlen(prefix)) == 0) {
			char n[160];
			snprintf(n, sizeof(n), "%s", m->name[k]);
			tm_remove(m, n);
		}
}

/* Rank r (tp_rank r % T) of a vocabulary table t: its Vp / T padded rows of the checkpoint's
 * src [V, hid] (BF16), zeros past V. */
static __attribute__((unused)) void mtp_vocab_at(const fx *f, uint32_t r, uint32_t T,
                                                 const mtp_dims *d, const char *t, const char *src)
{
	int64_t vl = d->Vp / T, from = (int64_t)(r % T) * vl;
	int64_t n = from + vl > d->V ? (d->V > from ? d->V - from : 0) : vl;
	shp(f, r, t, 2, vl, d->hid, 0);
	if (n > 0)
		rows_at(f, r, t, 0, src, from, n);
	const uint16_t *e = (const uint16_t *)(const void *)out_bytes(f, r, t);
	for (int64_t i = n * d->hid; i < vl * d->hid; i++)
		assert_int_equal(e[i], 0);
}

/* Rank r of T's MTP modules of layer i: the norms and eh_proj whole, shared_head.head by padded
 * vocabulary rows. */
static __attribute__((unused)) void mtp_own_is(const fx *f, uint32_t r, uint32_t T, int i,
                                               const mtp_dims *d)
{
	static const char *const whole[] = {"enorm.weight", "hnorm.weight",
	                                    "shared_head.norm.weight", "eh_proj.weight"};
	char b[200];
	for (size_t k = 0; k < 4; k++) {
		tm_fmt(b, sizeof(b), TM_L, i, whole[k]);
		repl(f, r, b);
	}
	tm_fmt(b, sizeof(b), TM_L, i, "eh_proj.weight");
	shp(f, r, b, 2, d->hid, 2 * d->hid, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "shared_head.head.weight");
	mtp_vocab_at(f, r, T, d, b, b);
}

/* Rank r of the MTP draft (a) holds, under model.layers.<i>.mtp_block., every tensor of layer i
 * of rank r of the target family (b) byte for byte, and besides them its `own` tensors. */
static __attribute__((unused)) void mtp_block_same(const fx *a, const fx *b, uint32_t r, int i,
                                                   size_t own)
{
	char lp[64];
	snprintf(lp, sizeof(lp), "model.layers.%d.", i);
	size_t nb = shardmap_rank_n_tensors(b->p, r), n2 = 0;
	for (size_t k = 0; k < nb; k++) {
		const sm_out_info *u = shardmap_rank_tensor(b->p, r, k);
		if (strncmp(u->name, lp, strlen(lp)) != 0)
			continue;
		char n[200];
		snprintf(n, sizeof(n), "%smtp_block.%s", lp, u->name + strlen(lp));
		const sm_out_info *t = info(a, r, n);
		assert_int_equal(t->dtype, u->dtype);
		assert_int_equal(t->ndim, u->ndim);
		assert_memory_equal(t->shape, u->shape, sizeof(u->shape[0]) * (size_t)u->ndim);
		assert_int_equal(t->nbytes, u->nbytes);
		if (memcmp(out_bytes(a, r, n), b->pr->b[r][k], u->nbytes) != 0)
			fail_msg("rank %u '%s' differs from the target's '%s'", r, n, u->name);
		n2++;
	}
	assert_true(n2 > 10);
	assert_int_equal(shardmap_rank_n_tensors(a->p, r), n2 + own);
}

#endif
