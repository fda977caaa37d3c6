/*
 * baichuan.c — Baichuan's tensors (BaiChuanForCausalLM / BaichuanForCausalLM, remote code;
 * c->baichuan) under the names the decoder passes read: Llama's but for the attention's
 * self_attn.W_pack.
 *
 * The checkpoint's W_pack [3*hid, hid] holds [q; k; v] rows (multi-head), which become
 * self_attn.q_proj / k_proj / v_proj (its three thirds); a rank's W_pack holds [q_r; k_r; v_r]
 * (docs/format.md, Baichuan) and is read as Llama's fused self_attn.qkv_proj (suffixes such as
 * weight_scale follow). Baichuan2's lm_head (vocab_size 125696) is NormHead: vLLM's
 * lm_head_weight_loader normalizes every row to unit L2 norm at load (torch's F.normalize, the
 * norm clamped at 1e-12), so lm_head.weight is read so normalized, the checkpoint's rows and a
 * rank's alike (row-local: the padded rows stay zero).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

/* vLLM's is_baichuan2 test (baichuan.py lm_head_weight_loader) */
#define BC_NORMHEAD_VOCAB 125696

static const char *const bc_leaves[][2] = {
    {".self_attn.W_pack.", ".self_attn.qkv_proj."},
};

/* A 16- or 32-bit float t of rows rows as float32 (malloc'd) into *out. */
static int as_f32(const ref_tensor *t, int64_t rows, float **out, wt_errbuf *err)
{
	int64_t n = t->ndim == 2 ? rows * t->shape[1] : 0;
	if (n <= 0 || !wt_dtype_is_float(t->dtype) || t->dtype == WT_F8_E4M3 ||
	    t->dtype == WT_F8_E5M2 || (uint64_t)n * wt_dtype_size(t->dtype) != t->nbytes)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': a %s of %lld rows; the reference reads a 16- or "
		                 "32-bit float matrix here",
		                 t->name, wt_dtype_name(t->dtype), (long long)rows);
	*out = malloc((size_t)n * sizeof(float));
	if (*out == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
	int rv = kern_convert(*out, WT_F32, t->data, t->dtype, (size_t)n);
	if (rv != WT_OK) {
		free(*out);
		*out = NULL;
		return wt_seterr(err, rv, "tensor '%s': cannot convert %s to F32", t->name,
		                 wt_dtype_name(t->dtype));
	}
	return WT_OK;
}

/* lm_head t (rows x cols) added to out as name with every row divided by max(|row|, 1e-12). */
static int norm_head(const ref_tensor *t, const char *name, ref_set *out, wt_errbuf *err)
{
	float *w = NULL;
	int64_t rows = t->ndim == 2 ? t->shape[0] : 0;
	int rv = as_f32(t, rows, &w, err);
	if (rv != WT_OK)
		return rv;
	int64_t cols = t->shape[1];
	for (int64_t r = 0; r < rows; r++) {
		double s = 0.0;
		for (int64_t k = 0; k < cols; k++)
			s += (double)w[r * cols + k] * w[r * cols + k];
		double nrm = sqrt(s) > 1e-12 ? sqrt(s) : 1e-12;
		for (int64_t k = 0; k < cols; k++)
			w[r * cols + k] = (float)(w[r * cols + k] / nrm);
	}
	rv = ref_set_add(out, name, WT_F32, 2, t->shape, w, (uint64_t)(rows * cols) * sizeof(float),
	                 err);
	free(w);
	return rv;
}

bool ref_baichuan_named(ref_set *s)
{
	return ref_set_find(s, "model.layers.0.self_attn.W_pack.weight") != NULL;
}

static int bc_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                  wt_errbuf *err)
{
	(void)in;
	char name[512];
	int leaf;
	const char *tail;
	int rv = ref_map_name(t->name, (ref_name_map){NULL, 0}, REF_NAME_MAP(bc_leaves), name,
	                      sizeof(name), NULL, &leaf, &tail, err);
	if (rv != WT_OK)
		return rv;
	if (x->ckpt && leaf == 0 && strcmp(tail, "weight") == 0) {
		name[strlen(name) - strlen("qkv_proj.weight")] = '\0';
		return ref_split_thirds(t, name, "weight", x->c->H * x->c->d, out, err);
	}
	if (x->c->V == BC_NORMHEAD_VOCAB && strcmp(name, "lm_head.weight") == 0)
		return norm_head(t, name, out, err);
	return ref_set_add_as(out, name, t, err);
}

int ref_baichuan_rename(const ref_cfg *c, ref_set *in, ref_set *out, bool ckpt, wt_errbuf *err)
{
	return ref_rename_each(in, out, bc_one, c, ckpt, err);
}
