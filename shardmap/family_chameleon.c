/*
 * family_chameleon.c — Chameleon (ChameleonForConditionalGeneration, transformers 4.57.1
 * modeling_chameleon.py: facebook/chameleon-7b, -30b), cut as vLLM's chameleon.py loads it.
 *
 * The language model is Llama's table (q/k/v fused by heads, o_proj by columns, gate/up
 * merged, down_proj by columns, RMSNorms replicated, embed_tokens / lm_head by vocabulary
 * rows, lm_head tied as the top-level tie_word_embeddings says: ChameleonConfig has no
 * text_config) with per-head LayerNorms on q and k: self_attn.q_norm.{weight,bias} [H, d]
 * and self_attn.k_norm.{weight,bias} [KV, d] (ChameleonLayerNorm((heads, head_dim)): each
 * head its own gamma and beta). vLLM builds them (num_heads / tp, head_dim) and
 * (num_kv_heads / tp, head_dim) and loads them with row_parallel_weight_loader: rank r
 * holds q heads [r*H/T, (r+1)*H/T) of q_norm (SM_K_ROWS over heads) and the kv heads of its
 * k slice of k_norm (SM_K_KVH; at T > KV vLLM's loader narrows row r, which a KV-row
 * tensor does not have for r >= KV: it cannot load such a layout, weightd gives each rank
 * its shared kv head's row). Never quantized. vLLM's ChameleonAttention has no biases
 * (bias=False, and its loader skips a checkpoint's): attention_bias true is refused. The
 * MLP's biases (mlp_bias) split as the weights, down_proj's replicated. swin_norm (the
 * 30B) moves the two norms after the attention and the MLP: the same tensors.
 *
 * model.vqmodel.* is the VQ-VAE image tokenizer: vLLM builds ChameleonVQVAE (encoder,
 * quantize.embedding, quant_conv, post_quant_conv: Conv2dLayer / GroupNorm / Embedding
 * without a quantization config) and loads it with default_weight_loader, whole on every
 * rank: replicated, never quantized. A vqmodel.* tensor of a module vLLM does not build
 * (vq_config decides which: chameleon_vq_built) is skipped, as vLLM's loader skips a name
 * not among its parameters; every one it builds is required with the shape vq_config's
 * channels give (chameleon_vq_check: vLLM fails on a parameter left unloaded, and its
 * default_weight_loader asserts the shapes). One name layout: transformers 4.57.1 writes and reads
 * model.* / lm_head.weight (no conversion mapping).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "shardmap/family_rules.h"

#define CH_HEADS(x, kind, d0)                                                                      \
	SM_RULE(SM_LAYER "self_attn." x, SM_LAYER "self_attn." x, kind, 0, SM_U_HEADS, SM_C_ALL,   \
	        0, 2, d0, SM_D_HD)
/* A VQ-VAE tensor: replicated whole, unquantized, its name kept; ndim checked here, presence
 * and sizes by chameleon_vq_check ({k} names expand to nothing the table could require) */
#define CH_VQ(x, nd)                                                                               \
	SM_RULE("model.vqmodel." x, "model.vqmodel." x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL,         \
	        SM_F_OPT, nd, SM_D_ANY, SM_D_ANY)
#define CH_VQ_CONV(x) CH_VQ(x ".weight", 4), CH_VQ(x ".bias", 1)
#define CH_VQ_NORM(x) CH_VQ(x ".weight", 1), CH_VQ(x ".bias", 1)
#define CH_VQ_RES(x)                                                                               \
	CH_VQ_NORM(x "norm1"), CH_VQ_CONV(x "conv1"), CH_VQ_NORM(x "norm2"), CH_VQ_CONV(x "conv2")
#define CH_VQ_ATTN(x)                                                                              \
	CH_VQ_NORM(x "norm"), CH_VQ_CONV(x "q"), CH_VQ_CONV(x "k"), CH_VQ_CONV(x "v"),             \
	    CH_VQ_CONV(x "proj_out")

static const sm_rule chameleon_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_QKV_W("q", 0, SM_D_Q),
    SM_QKV_W("k", 1, SM_D_KV),
    SM_QKV_W("v", 2, SM_D_KV),
    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    CH_HEADS("q_norm.weight", SM_K_ROWS, SM_D_H),
    CH_HEADS("q_norm.bias", SM_K_ROWS, SM_D_H),
    CH_HEADS("k_norm.weight", SM_K_KVH, SM_D_KVH),
    CH_HEADS("k_norm.bias", SM_K_KVH, SM_D_KVH),
    SM_RULES_MLP_SWITCHED,
    CH_VQ_CONV("encoder.conv_in"),
    CH_VQ_RES("encoder.down.{k}.block.{k}."),
    CH_VQ_CONV("encoder.down.{k}.block.{k}.nin_shortcut"),
    CH_VQ_ATTN("encoder.down.{k}.attn.{k}."),
    CH_VQ_CONV("encoder.down.{k}.downsample.conv"),
    CH_VQ_RES("encoder.mid.block_1."),
    CH_VQ_ATTN("encoder.mid.attn_1."),
    CH_VQ_RES("encoder.mid.block_2."),
    CH_VQ_NORM("encoder.norm_out"),
    CH_VQ_CONV("encoder.conv_out"),
    CH_VQ("quantize.embedding.weight", 2),
    CH_VQ_CONV("quant_conv"),
    CH_VQ_CONV("post_quant_conv"),
};

/* Is n "<one of mods>.weight" or ".bias"? */
static bool leaf_of(const char *n, const char *const *mods)
{
	for (; *mods != NULL; mods++) {
		size_t k = strlen(*mods);
		if (strncmp(n, *mods, k) == 0 && n[k] == '.' &&
		    (strcmp(n + k + 1, "weight") == 0 || strcmp(n + k + 1, "bias") == 0))
			return true;
	}
	return false;
}

static const char *const res_mods[] = {"norm1", "conv1", "norm2", "conv2", NULL};
static const char *const attn_mods[] = {"norm", "q", "k", "v", "proj_out", NULL};
#define VQ_E "model.vqmodel.encoder."

/* Does level l of the encoder have attention blocks (its resolution, resolution / 2^l, in
 * attn_resolutions, attn_type vanilla)? */
static bool vq_level_attn(const ckpt_config *c, int64_t l)
{
	int64_t res = c->vq_resolution;
	for (int64_t k = 0; k < l; k++)
		res /= 2;
	for (size_t k = 0; c->vq_attn && k < c->vq_n_attn_res; k++)
		if (c->vq_attn_res[k] == res)
			return true;
	return false;
}

/* encoder.down.<l>.* (n past "down."): blocks, their attention, the downsample. */
static bool vq_down_built(const ckpt_config *c, const char *n)
{
	long long l, b;
	int used = 0;
	if (sscanf(n, "%lld.%n", &l, &used) != 1 || used == 0 || l < 0 || l >= c->vq_levels)
		return false;
	n += used;
	if (strcmp(n, "downsample.conv.weight") == 0 || strcmp(n, "downsample.conv.bias") == 0)
		return l != c->vq_levels - 1;
	used = 0;
	if (sscanf(n, "block.%lld.%n", &b, &used) == 1 && used > 0 && b >= 0 &&
	    b < c->vq_res_blocks) {
		static const char *const nin[] = {"nin_shortcut", NULL};
		int64_t in = l == 0 ? 1 : c->vq_mult[l - 1]; /* (1,) + channel_multiplier */
		return leaf_of(n + used, res_mods) ||
		       (b == 0 && in != c->vq_mult[l] && leaf_of(n + used, nin));
	}
	used = 0;
	if (sscanf(n, "attn.%lld.%n", &b, &used) == 1 && used > 0 && b >= 0 && b < c->vq_res_blocks)
		return vq_level_attn(c, l) && leaf_of(n + used, attn_mods);
	return false;
}

/* Is canonical name cn (under model.vqmodel.) a parameter vLLM's ChameleonVQVAE, built of
 * vq_config, holds? */
static bool chameleon_vq_built(const ckpt_config *c, const char *cn)
{
	static const char *const top[] = {"quant_conv", "post_quant_conv", NULL};
	static const char *const enc[] = {"conv_in", "norm_out", "conv_out", NULL};
	const char *n = cn + strlen("model.vqmodel.");
	if (strcmp(n, "quantize.embedding.weight") == 0 || leaf_of(n, top))
		return true;
	if (strncmp(n, "encoder.", 8) != 0)
		return false;
	n += 8;
	if (leaf_of(n, enc))
		return true;
	if (strncmp(n, "mid.block_1.", 12) == 0 || strncmp(n, "mid.block_2.", 12) == 0)
		return leaf_of(n + 12, res_mods);
	if (strncmp(n, "mid.attn_1.", 11) == 0)
		return c->vq_attn && leaf_of(n + 11, attn_mods);
	if (strncmp(n, "down.", 5) == 0)
		return vq_down_built(c, n + 5);
	return false;
}

/* The VQ-VAE's parameters as vLLM's ChameleonVQVAE builds them of vq_config, each required
 * with its shape (its loader fails on a parameter the checkpoint does not give): a walk
 * checking name by name, the first failure kept. */
typedef struct vq_walk {
	const ckpt *c;
	wt_errbuf *err;
	int rv;
} vq_walk;

static void vq_want(vq_walk *w, const char *name, int nd, int64_t a, int64_t b, int64_t k)
{
	if (w->rv != WT_OK)
		return;
	const ckpt_tensor *t = ckpt_find(w->c, name);
	const int64_t want[4] = {a, b, k, k};
	if (t == NULL) {
		w->rv = wt_seterr(w->err, WT_ENOTFOUND,
		                  "tensor '%s': missing from the checkpoint, which config.json's "
		                  "vq_config builds (family chameleon: vLLM's ChameleonVQVAE loads "
		                  "every parameter)",
		                  name);
		return;
	}
	bool ok = t->ndim == nd;
	for (int d = 0; ok && d < nd; d++)
		ok = t->shape[d] == want[d];
	if (!ok)
		w->rv =
		    wt_seterr(w->err, WT_ESHAPE,
		              "tensor '%s': shape disagrees with config.json's vq_config, which "
		              "implies %d dims [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
		              "] (the first %d); fix vq_config or the checkpoint",
		              name, nd, a, b, k, k, nd);
}

/* Conv2d p (weight [o, i, k, k] and bias [o]) or GroupNorm p ([c] weight and bias) */
static void vq_conv(vq_walk *w, const char *p, int64_t o, int64_t i, int64_t k)
{
	char n[256];
	snprintf(n, sizeof(n), "%s.weight", p);
	vq_want(w, n, 4, o, i, k);
	snprintf(n, sizeof(n), "%s.bias", p);
	vq_want(w, n, 1, o, 0, 0);
}

static void vq_norm(vq_walk *w, const char *p, int64_t c)
{
	char n[256];
	snprintf(n, sizeof(n), "%s.weight", p);
	vq_want(w, n, 1, c, 0, 0);
	snprintf(n, sizeof(n), "%s.bias", p);
	vq_want(w, n, 1, c, 0, 0);
}

/* The res block (ci -> co channels) or attention block (c) under prefix p ("...block.0."). */
static void vq_res(vq_walk *w, const char *p, int64_t ci, int64_t co)
{
	char n[224];
	snprintf(n, sizeof(n), "%snorm1", p);
	vq_norm(w, n, ci);
	snprintf(n, sizeof(n), "%sconv1", p);
	vq_conv(w, n, co, ci, 3);
	snprintf(n, sizeof(n), "%snorm2", p);
	vq_norm(w, n, co);
	snprintf(n, sizeof(n), "%sconv2", p);
	vq_conv(w, n, co, co, 3);
	snprintf(n, sizeof(n), "%snin_shortcut", p);
	if (ci != co)
		vq_conv(w, n, co, ci, 1);
}

static void vq_attn(vq_walk *w, const char *p, int64_t c)
{
	char n[224];
	snprintf(n, sizeof(n), "%snorm", p);
	vq_norm(w, n, c);
	for (size_t k = 1; attn_mods[k] != NULL; k++) {
		snprintf(n, sizeof(n), "%s%s", p, attn_mods[k]);
		vq_conv(w, n, c, c, 1);
	}
}

/* Every parameter of the VQ-VAE vq_config builds, present with its shape (the channel
 * counts are within 2^24: chameleon_check). */
static int chameleon_vq_check(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	vq_walk w = {ck, err, WT_OK};
	char p[160];
	int64_t ch = c->vq_base;
	vq_conv(&w, VQ_E "conv_in", ch, c->vq_in, 3);
	for (int64_t l = 0; l < c->vq_levels; l++) {
		for (int64_t b = 0; b < c->vq_res_blocks; b++) {
			snprintf(p, sizeof(p), VQ_E "down.%" PRId64 ".block.%" PRId64 ".", l, b);
			vq_res(&w, p, ch, c->vq_base * c->vq_mult[l]);
			ch = c->vq_base * c->vq_mult[l];
			snprintf(p, sizeof(p), VQ_E "down.%" PRId64 ".attn.%" PRId64 ".", l, b);
			if (vq_level_attn(c, l))
				vq_attn(&w, p, ch);
		}
		snprintf(p, sizeof(p), VQ_E "down.%" PRId64 ".downsample.conv", l);
		if (l != c->vq_levels - 1)
			vq_conv(&w, p, ch, ch, 3);
	}
	vq_res(&w, VQ_E "mid.block_1.", ch, ch);
	if (c->vq_attn)
		vq_attn(&w, VQ_E "mid.attn_1.", ch);
	vq_res(&w, VQ_E "mid.block_2.", ch, ch);
	vq_norm(&w, VQ_E "norm_out", ch);
	vq_conv(&w, VQ_E "conv_out", c->vq_double ? 2 * c->vq_latent : c->vq_latent, ch, 3);
	vq_want(&w, "model.vqmodel.quantize.embedding.weight", 2, c->vq_n_embed, c->vq_embed, 0);
	vq_conv(&w, "model.vqmodel.quant_conv", c->vq_embed, c->vq_latent, 1);
	vq_conv(&w, "model.vqmodel.post_quant_conv", c->vq_latent, c->vq_embed, 1);
	return w.rv;
}

/* vqmodel.* tensors vLLM builds no parameter for are skipped, as its loader skips them. */
static bool chameleon_drop(const ckpt_config *c, const char *cn)
{
	return strncmp(cn, "model.vqmodel.", 14) == 0 && !chameleon_vq_built(c, cn);
}

/* What vLLM's chameleon.py cannot build: q/k/v/o biases (ChameleonAttention's bias=False;
 * its loader skips them, so the model would run without them), an activation other than
 * silu (ChameleonMLP raises), a head_dim other than hidden_size / num_attention_heads
 * (ChameleonConfig has no head_dim key: both transformers and vLLM divide). */
static int chameleon_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->attention_bias)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: attention_bias true: vLLM's chameleon.py builds q/k/v/o "
		    "without biases and skips the checkpoint's; only attention_bias "
		    "false is supported");
	if (!c->cham_act_silu)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: hidden_act is not silu; vLLM's ChameleonMLP supports "
		    "only silu");
	int64_t mm = 1; /* the VQ-VAE's channel counts within 2^24 (its shapes then fit) */
	for (int64_t l = 0; l < c->vq_levels; l++)
		mm = c->vq_mult[l] > mm ? c->vq_mult[l] : mm;
	const int64_t lim = 1 << 24;
	if (c->vq_base > lim || mm > lim || c->vq_base * mm > lim || c->vq_in > lim ||
	    c->vq_latent > lim || c->vq_embed > lim || c->vq_n_embed > lim)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vq_config's channel counts (base_channels x "
		                 "channel_multiplier, in_channels, latent_channels, embed_dim, "
		                 "num_embeddings) are not a model's (each at most 2^24)");
	if (c->hidden_size % c->num_attention_heads != 0 ||
	    c->head_dim != c->hidden_size / c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: head_dim %" PRId64 " with hidden_size %" PRId64
		                 " and %" PRId64
		                 " heads: ChameleonAttention's head_dim is hidden_size / "
		                 "num_attention_heads (exactly); remove head_dim",
		                 c->head_dim, c->hidden_size, c->num_attention_heads);
	return WT_OK;
}

static const char *const chameleon_archs[] = {"ChameleonForConditionalGeneration", NULL};

const sm_family shardmap_family_chameleon = {
    .name = "chameleon",
    .archs = chameleon_archs,
    .rules = chameleon_rules,
    .n_rules = SM_NRULES(chameleon_rules),
    .layer_prefix = "model.layers.",
    .check = chameleon_check,
    .drop_canon = chameleon_drop,
    .check_extra = chameleon_vq_check,
};
