/*
 * test_shardmap_quant.h — the family tests' checks of quantized layouts (test_shardmap_fx.h
 * includes it, after its fx): a BF16 row's int8-channel codes and scale, a run of rows', a
 * row-parallel weight's and a fused qkv_proj's int8 codes against the source (fx_rows_int8_is,
 * fx_cols_int8_is, fx_qkv_int8_is), which tensors of a rank are quantized and which kept
 * (fx_quant_split_as), every rank of a quantized layout at once (fx_open_quant; fx_requant and
 * fx_replan: a written folder planned again),
 * SigLIP's MLP quantization switch.
 */
#ifndef WT_TEST_SHARDMAP_QUANT_H
#define WT_TEST_SHARDMAP_QUANT_H

/* An array and its length, for the (list, n) parameter pairs below. */
#define FX_N(a) (a), TM_NLEAVES(a)

/* q[0..n) and scale s are the int8-channel quantization of BF16 row x (docs/format.md 4.2):
 * s = max(amax, 1e-8) / 127, q = clamp(rint(x / s), -127, 127). */
static __attribute__((unused)) void int8_row_is(const int8_t *q, float s, const uint16_t *x,
                                                int64_t n)
{
	float amax = 0;
	for (int64_t h = 0; h < n; h++)
		amax = fmaxf(amax, fabsf(kern_bf16_to_f32(x[h])));
	assert_true(s == fmaxf(amax, 1e-8f) / 127.0f);
	for (int64_t h = 0; h < n; h++) {
		float c = rintf(kern_bf16_to_f32(x[h]) / s);
		c = c > 127 ? 127 : c < -127 ? -127 : c;
		assert_int_equal(q[h], (int)c);
	}
}

/* Rank r of T's int8-channel `name` (a row-parallel weight: its codes [rows, k/T] and
 * name_scale) are columns [r*k/T, +k/T) of the BF16 source `name` [rows, k], each row quantized
 * on its own. */
static __attribute__((unused)) void fx_cols_int8_is(const fx *f, uint32_t r, uint32_t T,
                                                    const char *name, int64_t rows, int64_t k)
{
	char sn[256];
	snprintf(sn, sizeof(sn), "%s_scale", name);
	const int8_t *q = (const int8_t *)out_bytes(f, r, name);
	const float *s = (const float *)(const void *)out_bytes(f, r, sn);
	int64_t kl = k / T;
	for (int64_t j = 0; j < rows; j++) {
		size_t rowb;
		const uint16_t *x = (const uint16_t *)(const void *)src_rows(f, name, j, &rowb);
		int8_row_is(q + j * kl, s[j], x + r * kl, kl);
	}
}

/* Rows at.. at+n of rank r's int8-channel `name` (k codes a row; name_scale one a row) are the
 * BF16 source `src`'s rows s0.. s0+n, each quantized on its own. */
static __attribute__((unused)) void fx_rows_int8_is(const fx *f, uint32_t r, const char *name,
                                                    int64_t at, const char *src, int64_t s0,
                                                    int64_t n, int64_t k)
{
	char sn[256];
	snprintf(sn, sizeof(sn), "%s_scale", name);
	const int8_t *q = (const int8_t *)out_bytes(f, r, name);
	const float *s = (const float *)(const void *)out_bytes(f, r, sn);
	for (int64_t j = 0; j < n; j++) {
		size_t rowb;
		const uint16_t *x = (const uint16_t *)(const void *)src_rows(f, src, s0 + j, &rowb);
		int8_row_is(q + (at + j) * k, s[at + j], x, k);
	}
}

/* Rank r of T's int8-channel qkv_proj codes rt (and rt_scale) are Llama's [q_r; k_r; v_r] rows
 * of q / k / v (the rows fx_qkv_is checks; BF16 [*, hid]), each row quantized on its own. */
static __attribute__((unused)) void fx_qkv_int8_is(const fx *f, uint32_t r, uint32_t T,
                                                   const char *rt, const char *q, const char *k,
                                                   const char *v, int64_t H, int64_t KV, int64_t d,
                                                   int64_t hid)
{
	int64_t hl = H / T, kvl = KV >= T ? KV / T : 1;
	int64_t g0 = KV >= T ? r * kvl : r / (T / KV);
	char sn[256];
	snprintf(sn, sizeof(sn), "%s_scale", rt);
	const int8_t *c = (const int8_t *)out_bytes(f, r, rt);
	const float *sc = (const float *)out_bytes(f, r, sn);
	for (int64_t row = 0; row < (hl + 2 * kvl) * d; row++) {
		const char *src = row < hl * d ? q : row < (hl + kvl) * d ? k : v;
		int64_t sr = row < hl * d ? r * hl * d + row : g0 * d + (row - hl * d) % (kvl * d);
		size_t rowb;
		int8_row_is(c + row * hid, sc[row], (const uint16_t *)src_rows(f, src, sr, &rowb),
		            hid);
	}
}

/* Rank r of a quantized layout: every tensor of keep[] kept in dtype keep_dt (any but
 * WT_I8 when keep_dt < 0) without a scale under the name derive_name would give it, and
 * every tensor of q[] quantized to q_dt with its _scale. */
static __attribute__((unused)) void fx_quant_split_as(const fx *f, uint32_t r, int keep_dt,
                                                      const char *const *keep, size_t nkeep,
                                                      const char *const *q, size_t nq, int q_dt)
{
	char s[200];
	for (size_t k = 0; k < nkeep; k++) {
		bool w = strstr(keep[k], ".weight") != NULL;
		snprintf(s, sizeof(s), "%s_%sscale", keep[k], w ? "" : "weight_");
		if (keep_dt >= 0)
			assert_int_equal(info(f, r, keep[k])->dtype, keep_dt);
		else
			assert_int_not_equal(info(f, r, keep[k])->dtype, WT_I8);
		if (tm_ix(f->p, r, s) >= 0)
			fail_msg("rank %u: '%s' kept unquantized has a scale '%s'", r, keep[k], s);
	}
	for (size_t k = 0; k < nq; k++) {
		assert_int_equal(info(f, r, q[k])->dtype, q_dt);
		snprintf(s, sizeof(s), "%s_scale", q[k]);
		if (tm_ix(f->p, r, s) < 0)
			fail_msg("rank %u: quantized '%s' has no scale '%s'", r, q[k], s);
	}
}

/* fx_quant_split_as with q8[] quantized to WT_I8. */
static __attribute__((unused)) void fx_quant_split(const fx *f, uint32_t r, int keep_dt,
                                                   const char *const *keep, size_t nkeep,
                                                   const char *const *q8, size_t nq8)
{
	fx_quant_split_as(f, r, keep_dt, keep, nkeep, q8, nq8, WT_I8);
}

/* vLLM's siglip.py SiglipMLP (quant_config reaches fc1 / fc2 only when the tower's
 * hidden_size and intermediate_size are both multiples of 64): the model mk builds (a fresh one
 * each time) under cfg at TP 2, int8-channel and fp8-block, on both ranks: every block's
 * mlp.fc1.weight / mlp.fc2.weight under tower prefix vt kept BF16 without a scale when kept,
 * quantized with their scales when not; the blocks' qkv_proj / out_proj quantized either way. */
static __attribute__((unused)) void fx_siglip_mlp(tm_model *(*mk)(void), const char *cfg,
                                                  const char *vt, int blocks, bool kept)
{
	static const struct {
		int quant, dt;
	} qs[] = {{WT_QUANT_INT8_CHANNEL, WT_I8}, {WT_QUANT_FP8_BLOCK, WT_F8_E4M3}};
	char fc[8][200], at[8][200];
	const char *fcp[8], *atp[8];
	size_t n = 0;
	for (int b = 0; b < blocks && n + 2 <= 8; b++, n += 2) {
		snprintf(fc[n], sizeof(fc[n]), "%sencoder.layers.%d.mlp.fc1.weight", vt, b);
		snprintf(fc[n + 1], sizeof(fc[n + 1]), "%sencoder.layers.%d.mlp.fc2.weight", vt, b);
		snprintf(at[n], sizeof(at[n]), "%sencoder.layers.%d.self_attn.qkv_proj.weight", vt,
		         b);
		snprintf(at[n + 1], sizeof(at[n + 1]),
		         "%sencoder.layers.%d.self_attn.out_proj.weight", vt, b);
	}
	for (size_t k = 0; k < n; k++) {
		fcp[k] = fc[k];
		atp[k] = at[k];
	}
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = 2;
		l.quant = qs[i].quant;
		fx f;
		fx_open_l(&f, mk(), cfg, &l, false);
		for (uint32_t r = 0; r < 2; r++) {
			if (kept) {
				fx_quant_split_as(&f, r, WT_BF16, fcp, n, atp, n, qs[i].dt);
			} else {
				fx_quant_split_as(&f, r, WT_BF16, NULL, 0, fcp, n, qs[i].dt);
				fx_quant_split_as(&f, r, WT_BF16, NULL, 0, atp, n, qs[i].dt);
			}
		}
		fx_close(&f);
	}
}

/* Every rank of f (TP tp, scheme quant: int8-channel I8 codes, the fp8 schemes F8_E4M3)
 * through fx_quant_split_as: keep[] kept in keep_dt, q[] quantized. */
static __attribute__((unused)) void fx_quant_ranks_are(const fx *f, uint32_t tp, wt_quant quant,
                                                       int keep_dt, const char *const *keep,
                                                       size_t nkeep, const char *const *q,
                                                       size_t nq)
{
	int dt = quant == WT_QUANT_INT8_CHANNEL ? WT_I8 : WT_F8_E4M3;
	for (uint32_t r = 0; r < tp; r++)
		fx_quant_split_as(f, r, keep_dt, keep, nkeep, q, nq, dt);
}

/* Model m under cfg at TP tp with scheme quant, every rank through fx_quant_ranks_are; f is
 * left open for the caller's own checks and fx_close. */
static __attribute__((unused)) void fx_open_quant(fx *f, tm_model *m, const char *cfg, uint32_t tp,
                                                  wt_quant quant, int keep_dt,
                                                  const char *const *keep, size_t nkeep,
                                                  const char *const *q, size_t nq)
{
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = tp;
	l.quant = quant;
	fx_open_l(f, m, cfg, &l, true);
	fx_quant_ranks_are(f, tp, quant, keep_dt, keep, nkeep, q, nq);
}

/* f (opened with produce) planned and produced again under layout l, its written folder kept
 * (a large model written once for several layouts). */
static __attribute__((unused)) void fx_replan(fx *f, const wt_layout *l)
{
	tm_prod_free(f->pr);
	tm_close(f->s, f->c, f->p);
	f->pr = NULL;
	wt_errbuf err = {0};
	int rv = tm_plan(f->dir, l, &f->s, &f->c, &f->p, &err);
	if (rv == WT_OK)
		f->pr = tm_produce(f->c, f->p, -1, &rv, &err);
	if (rv != WT_OK)
		fail_msg("%s", err.msg);
}

/* fx_open_quant of f's model as already written (an fx_open that produced): fx_replan. */
static __attribute__((unused)) void fx_requant(fx *f, uint32_t tp, wt_quant quant, int keep_dt,
                                               const char *const *keep, size_t nkeep,
                                               const char *const *q, size_t nq)
{
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = tp;
	l.quant = quant;
	fx_replan(f, &l);
	fx_quant_ranks_are(f, tp, quant, keep_dt, keep, nkeep, q, nq);
}

#endif
