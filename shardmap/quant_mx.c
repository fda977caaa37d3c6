/*
 * quant_mx.c — MXFP4 sources (docs/format.md section 4.6). A weight X (GPT-OSS
 * `mlp.experts.gate_up_proj`, `mlp.experts.down_proj`) is stored as
 *
 *   X_blocks  U8 [E, N, K/32, 16]  two E2M1 codes per byte, low nibble first
 *   X_scales  U8 [E, N, K/32]      E8M0 block exponents, value 2^(s - 127)
 *
 * The rules see X_blocks as [E, N, K] (nn.Linear orientation per expert); it is
 * always dequantized whole to BF16 (kern_dequant_mxfp4_bf16: exact, half of F32's
 * memory), never passed through.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "kernels/kernels.h"
#include "shardmap/quant_mx.h"

#define MX_BLOCKS   "_blocks"
#define MX_SCALES   "_scales"
#define MX_NAME_MAX 512

static bool ends_with(const char *s, const char *sfx)
{
	size_t n = strlen(s), m = strlen(sfx);
	return n >= m && strcmp(s + n - m, sfx) == 0;
}

bool shardmap_mx_weight(const ckpt_tensor *t)
{
	return ends_with(t->name, MX_BLOCKS);
}

/* `name` with suffix `from` replaced by `to` into buf; NULL if it does not fit. */
static const char *swap_suffix(const char *name, const char *from, const char *to, char *buf)
{
	size_t base = strlen(name) - strlen(from);
	if (base + strlen(to) + 1 > MX_NAME_MAX)
		return NULL;
	memcpy(buf, name, base);
	memcpy(buf + base, to, strlen(to) + 1);
	return buf;
}

void shardmap_mx_entry(const sm_ctx *x, sm_entry *e)
{
	const ckpt_tensor *t = ckpt_tensor_at(x->c, e->t);
	char buf[MX_NAME_MAX];
	if ((x->fam->rules[e->rule].flags & SM_F_TRANS) && e->view.ndim == 3) {
		int64_t k = e->view.shape[1]; /* [E, K, N] is viewed [E, N, K] */
		e->view.shape[1] = e->view.shape[2];
		e->view.shape[2] = k;
	}
	if (!shardmap_mx_weight(t))
		return;
	/* [..., N, G, 16] -> [..., N, G*32]; another last dimension is refused by the check */
	if (t->ndim >= 2 && t->shape[t->ndim - 1] == 16) {
		e->view.ndim--;
		e->view.shape[e->view.ndim - 1] *= 32;
	}
	e->wscale = SM_NONE;
	const ckpt_tensor *s =
	    swap_suffix(t->name, MX_BLOCKS, MX_SCALES, buf) ? ckpt_find(x->c, buf) : NULL;
	if (s)
		e->wscale = (uint32_t)ckpt_tensor_index(x->c, s);
}

bool shardmap_mx_companion(const sm_ctx *x, const char *name)
{
	char buf[MX_NAME_MAX];
	return ends_with(name, MX_SCALES) && swap_suffix(name, MX_SCALES, MX_BLOCKS, buf) &&
	       ckpt_find(x->c, buf) != NULL;
}

int shardmap_mx_check(const sm_ctx *x, const sm_entry *e, wt_errbuf *err)
{
	const ckpt_tensor *t = ckpt_tensor_at(x->c, e->t);
	if (x->cfg->quant != CKPT_QUANT_MXFP4)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "tensor '%s': an MXFP4 blocks tensor, but config.json's "
		    "quantization_config is not quant_method \"mxfp4\"; fix config.json",
		    t->name);
	if (t->dtype != WT_U8 || t->ndim < 3 || t->ndim != e->view.ndim + 1)
		return wt_seterr(err, WT_EDTYPE,
		                 "tensor '%s': MXFP4 blocks must be U8 [..., N, K/32, 16], have %s "
		                 "with %d dimensions",
		                 t->name, wt_dtype_name(t->dtype), t->ndim);
	if (e->wscale == SM_NONE)
		return wt_seterr(err, WT_ENOTFOUND,
		                 "tensor '%s': its MXFP4 scales ('..._scales') are missing; the "
		                 "checkpoint is incomplete",
		                 t->name);
	const ckpt_tensor *s = ckpt_tensor_at(x->c, e->wscale);
	bool ok = s->dtype == WT_U8 && s->ndim == t->ndim - 1;
	for (int k = 0; ok && k < s->ndim; k++)
		ok = s->shape[k] == t->shape[k];
	if (!ok)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': MXFP4 scales must be U8 with the blocks' shape "
		                 "without its last dimension (one per 32 elements of '%s'); fix "
		                 "the checkpoint",
		                 s->name, t->name);
	return WT_OK;
}

int shardmap_mx_dequant(const ckpt *c, const ckpt_tensor *t, int64_t e0, const ckpt_tensor *st,
                        const uint8_t *raw, bool deint, uint16_t *out, wt_errbuf *err)
{
	/* t is U8 [lead..., N, G, 16]: groups = product of lead, rows N, G blocks per row */
	int64_t G = t->shape[t->ndim - 2], N = t->shape[t->ndim - 3], groups = 1;
	for (int k = 0; k + 3 < t->ndim; k++)
		groups *= t->shape[k];
	size_t nb = (size_t)(groups * N * G);
	if (deint && N % 2)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': %" PRId64 " rows are not gate/up pairs", t->name, N);
	uint8_t *sc = malloc(nb);
	if (sc == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory dequantizing it",
		                 t->name);
	/* a part's scales: those of its experts, nb per t->shape[0] leading indices */
	WT_ASSERT(e0 == 0 || t->ndim >= 4);
	size_t first = e0 > 0 ? (size_t)e0 * (nb / (size_t)t->shape[0]) : 0;
	int rv = ckpt_read(c, st, first, sc, nb, err);
	for (size_t k = 0; rv == WT_OK && k < nb; k++)
		if (sc[k] == 255)
			rv = wt_seterr(err, WT_ECORRUPT,
			               "tensor '%s': E8M0 scale 255 (NaN) at element %zu; fix the "
			               "checkpoint",
			               st->name, first + k);
	/* row by row, each into its de-interleaved place: no copy of the blocks */
	for (int64_t r = 0; rv == WT_OK && r < groups * N; r++) {
		int64_t j = r % N, from = !deint ? j : j < N / 2 ? 2 * j : 2 * (j - N / 2) + 1;
		size_t src = (size_t)(r - j + from) * (size_t)G;
		int64_t bad = kern_dequant_mxfp4_bf16(out + (size_t)r * (size_t)G * 32,
		                                      raw + src * 16, sc + src, G);
		WT_ASSERT(bad < 0); /* every scale was checked above */
	}
	free(sc);
	return rv;
}

bool shardmap_mx_cond(const ckpt_config *cfg, int cond)
{
	if (cond == SM_C_MX || cond == SM_C_NOMX)
		return cfg->num_experts > 0 &&
		       (cfg->quant == CKPT_QUANT_MXFP4) == (cond == SM_C_MX);
	return true;
}

const char *shardmap_mx_why(int cond)
{
	if (cond == SM_C_MX)
		return "a layer without MXFP4 experts (quantization_config quant_method is not "
		       "\"mxfp4\", so the experts are read as saved dequantized: "
		       "mlp.experts.gate_up_proj / down_proj)";
	if (cond == SM_C_NOMX)
		return "a layer with MXFP4 experts (quant_method \"mxfp4\": "
		       "mlp.experts.gate_up_proj_blocks / _scales expected)";
	return "a dense layer (see mlp_only_layers, first_k_dense_replace)";
}
