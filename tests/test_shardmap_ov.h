/*
 * test_shardmap_ov.h — what the planner tests of LLaVA-OneVision and its variants with a
 * pre-normed projector (R-4B, Bee-8B) share: the config text builders (OV_LM_KEYS, SIGLIP, ...),
 * the model builder (ov_build: a one-layer language model of the file's rows, the SigLIP tower,
 * the file's projector rows and image_newline), the per-rank tower / projector / attention
 * checks, the vision_feature_layer checks, coverage, SiglipMLP's rule and the refusals the
 * three word alike. Sizes: LM hid 64, H 8, KV 2, d 8, I 128, V 128, L 1; vision blocks of width
 * 32, 8 heads, MLP 64, image 8 / patch 2: 4 x 4 = 16 patches.
 *
 * Define SEED and OV_OPT (ov_model's options for the default model: 0 or OV_HEAD), include
 * test_shardmap_fx.h first, and define ov_model_w (declared here) after the include.
 */
#ifndef WT_TEST_SHARDMAP_OV_H
#define WT_TEST_SHARDMAP_OV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HID 64
#define VE  32
#define VI  64
#define VNP 16

/* text_config's keys; hd is "" or "\"head_dim\":8," */
#define OV_LM_KEYS(mt, hd)                                                                         \
	"\"model_type\":\"" mt "\",\"hidden_size\":64,\"num_attention_heads\":8,"                  \
	"\"num_key_value_heads\":2," hd "\"intermediate_size\":128,\"vocab_size\":128,"            \
	"\"num_hidden_layers\":1"
#define VISION_CFG(vmt, keys) ",\"vision_config\":{\"model_type\":\"" vmt "\"" keys "}}"
/* the released configs': no pooling head */
#define NOHEAD ",\"vision_use_head\":false"
#define VISION_KEYS_W(h, i, vd)                                                                    \
	",\"hidden_size\":" h ",\"intermediate_size\":" i ",\"num_attention_heads\":8,"            \
	"\"num_hidden_layers\":" vd ",\"image_size\":8,\"patch_size\":2"
#define VISION_KEYS(vd) VISION_KEYS_W("32", "64", vd)
#define SIGLIP(vd)      VISION_CFG("siglip_vision_model", NOHEAD VISION_KEYS(vd))
/* a tower of 3 heads, which do not divide its width 32 */
#define VISION_3H(pre)                                                                             \
	VISION_CFG("siglip_vision_model",                                                          \
	           pre ",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":3,"   \
	               "\"num_hidden_layers\":2,\"image_size\":8,\"patch_size\":2")

#define VT "vision_tower.vision_model."
#define VB VT "encoder.layers.%d."
#define PJ "multi_modal_projector."
#define LM "language_model.model."

/* A tensor of the language model's layer (its leaf under model.layers.0.; qkn: q_norm / k_norm,
 * left out under OV_NOQKN) or of the projector (its name; n or k VE: the tower's width). */
typedef struct {
	const char *name;
	int64_t n, k;
	bool qkn;
} ov_row;

/* ov_build's options: lm_head; without q_norm / k_norm */
enum { OV_HEAD = 1, OV_NOQKN = 2 };

/* The language model (embed_tokens, norm, the layer's rows lm, lm_head with OV_HEAD), then
 * unless LAY_TEXT the tower of `blocks` blocks of width ve / MLP vi with post_layernorm, the
 * projector's rows pj and image_newline (a row of pj), all in layout y. */
static __attribute__((unused)) tm_model *ov_build(const ov_row *lm, size_t nlm, const ov_row *pj,
                                                  size_t npj, lay y, unsigned opt, int blocks,
                                                  int64_t ve, int64_t vi)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
	mm_add(m, y, "model.embed_tokens.weight", 128, HID);
	mm_add(m, y, "model.norm.weight", HID, 0);
	for (size_t k = 0; k < nlm; k++) {
		if (lm[k].qkn && (opt & OV_NOQKN))
			continue;
		snprintf(b, sizeof(b), "model.layers.0.%s", lm[k].name);
		mm_add(m, y, b, lm[k].n, lm[k].k);
	}
	if (opt & OV_HEAD)
		mm_add(m, y, "lm_head.weight", 128, HID);
	if (y == LAY_TEXT)
		return m;
	mm_add_vit(m, y, false, ve, vi, VNP, blocks);
	for (size_t k = 0; k < npj; k++)
		mm_add(m, y, pj[k].name, pj[k].n == VE ? ve : pj[k].n,
		       pj[k].k == VE ? ve : pj[k].k);
	return m;
}

/* The file's model (ov_build of its rows): defined by the file including this header. */
static tm_model *ov_model_w(lay y, unsigned opt, int blocks, int64_t ve, int64_t vi);

static __attribute__((unused)) tm_model *ov_model(lay y, unsigned opt, int blocks)
{
	return ov_model_w(y, opt, blocks, VE, VI);
}

/* The released layout's model of `blocks` blocks with the file's default options */
static __attribute__((unused)) tm_model *ov_v450(int blocks)
{
	return ov_model(LAY_V450, OV_OPT, blocks);
}

/* ov_v450(2) without tensor `name` */
static __attribute__((unused)) tm_model *ov_without(const char *name)
{
	tm_model *m = ov_v450(2);
	tm_remove(m, name);
	return m;
}

/* Rank r of T: the tower's 2 blocks by hand (fx_vit_block), its position table and patch bias
 * whole, post_layernorm absent; the projector's rows pj and image_newline whole. */
static __attribute__((unused)) void ov_tower_rank(const fx *f, uint32_t T, uint32_t r,
                                                  const ov_row *pj, size_t npj)
{
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	for (size_t k = 0; k < npj; k++)
		repl(f, r, pj[k].name);
	repl(f, r, VT "embeddings.position_embedding.weight");
	repl(f, r, VT "embeddings.patch_embedding.bias");
	assert_int_equal(tm_ix(f->p, r, VT "post_layernorm.weight"), -1);
}

/* Rank r of T's attention by hand: qkv_proj's q / k / v rows (weight, and bias when `bias`),
 * 8 heads of 8 over 2 kv heads; o_proj by columns. */
static __attribute__((unused)) void ov_attn_rank(const fx *f, uint32_t T, uint32_t r, bool bias)
{
	const char *lq = LM "layers.0.self_attn.qkv_proj.";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	char n[200], a[200];
	for (int w = 0; w < (bias ? 2 : 1); w++) {
		const char *leaf = w ? "bias" : "weight";
		snprintf(n, sizeof(n), "%s%s", lq, leaf);
		snprintf(a, sizeof(a), LM "layers.0.self_attn.q_proj.%s", leaf);
		rows_at(f, r, n, 0, a, r * ql, ql);
		snprintf(a, sizeof(a), LM "layers.0.self_attn.k_proj.%s", leaf);
		rows_at(f, r, n, ql, a, kvh * 8, 8);
		snprintf(a, sizeof(a), LM "layers.0.self_attn.v_proj.%s", leaf);
		rows_at(f, r, n, ql + 8, a, kvh * 8, 8);
	}
	cols_of(f, r, T, LM "layers.0.self_attn.o_proj.weight",
	        LM "layers.0.self_attn.o_proj.weight", HID, 64);
}

/* vision_feature_layer -2 of 3 blocks, planned in f: vLLM builds 2; block 2 and
 * post_layernorm dropped (listed as skipped). */
static __attribute__((unused)) void ov_feature_drop(const fx *f)
{
	assert_true(tm_ix(f->p, 1, VT "encoder.layers.1.mlp.fc1.weight") >= 0);
	assert_int_equal(tm_ix(f->p, 1, VT "encoder.layers.2.mlp.fc1.weight"), -1);
	assert_int_equal(tm_ix(f->p, 1, VT "post_layernorm.weight"), -1);
	assert_int_equal(shardmap_n_skipped(f->p), 16 + 2);
}

/* vision_feature_layer a list (cfgl) or an index outside the tower (cfgo: -4) refused, the
 * former naming the projector class cls */
static __attribute__((unused)) void ov_feature_refused(const char *cfgl, const char *cfgo,
                                                       const char *cls)
{
	fx_refused(ov_v450(2), cfgl, WT_EUNSUPPORTED, "vision_feature_layer is a list", cls);
	fx_refused(ov_v450(2), cfgo, WT_ECORRUPT, "vision_feature_layer -4", "[-3, 2]");
}

/* ov_feature_drop of cfg3 (3 blocks, -2) at TP 2, then ov_feature_refused */
static __attribute__((unused)) void ov_feature_layer(const char *cfg3, const char *cfgl,
                                                     const char *cfgo, const char *cls)
{
	fx f;
	fx_open(&f, ov_v450(3), cfg3, 2, 1, 0, false);
	ov_feature_drop(&f);
	fx_close(&f);
	ov_feature_refused(cfgl, cfgo, cls);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 / 8, both layouts. */
static __attribute__((unused)) void ov_coverage(const char *cfg)
{
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(ov_model(LAY_V450, OV_OPT, 2), cfg, 2, lays, 4);
	coverage(ov_model(LAY_HF5, OV_OPT, 2), cfg, 2, lays, 4);
}

/* ov_model of 2 blocks (the file's default options): released layout, transformers 4.57's;
 * the text model alone (the text family's checkpoint of the same weights) */
static __attribute__((unused)) tm_model *ov_rel(void)
{
	return ov_v450(2);
}

static __attribute__((unused)) tm_model *ov_hf(void)
{
	return ov_model(LAY_HF5, OV_OPT, 2);
}

static __attribute__((unused)) tm_model *ov_text(void)
{
	return ov_model(LAY_TEXT, OV_OPT, 0);
}

static __attribute__((unused)) tm_model *ov_mlp_i96(void)
{
	return ov_model_w(LAY_V450, OV_OPT, 2, 64, 96);
}

static __attribute__((unused)) tm_model *ov_mlp_w64(void)
{
	return ov_model_w(LAY_V450, OV_OPT, 2, 64, 128);
}

/* vLLM's siglip.py SiglipMLP: under int8-channel and fp8-block the tower's fc1 / fc2 kept BF16
 * without scales at width 32 (cfg) and at 64 / 96 (cfg_i96, NULL: not tried), quantized at
 * 64 / 128 (cfg_w64). */
static __attribute__((unused)) void ov_siglip_mlp(const char *cfg, const char *cfg_i96,
                                                  const char *cfg_w64)
{
	fx_siglip_mlp(ov_rel, cfg, VT, 2, true);
	if (cfg_i96 != NULL)
		fx_siglip_mlp(ov_mlp_i96, cfg_i96, VT, 2, true);
	fx_siglip_mlp(ov_mlp_w64, cfg_w64, VT, 2, false);
}

/* Each of need (n names) missing from ov_v450(2) refused under cfg, naming it. */
static __attribute__((unused)) void ov_need(const char *cfg, const char *const *need, size_t n)
{
	for (size_t k = 0; k < n; k++)
		fx_refused(ov_without(need[k]), cfg, WT_ENOTFOUND, need[k], "");
}

/* The tower's refusals: 3 heads that do not divide 32 (cfg3h), a CLIP tower (cfg_clip), no
 * vision_config (cfg_nov). */
static __attribute__((unused)) void ov_tower_refused(const char *cfg3h, const char *cfg_clip,
                                                     const char *cfg_nov)
{
	fx_refused(ov_v450(2), cfg3h, WT_ECORRUPT,
	           "num_attention_heads 3 does not divide hidden_size 32", "");
	fx_refused(ov_v450(2), cfg_clip, WT_EUNSUPPORTED,
	           "vision_config.model_type 'clip_vision_model'", "siglip_vision_model");
	fx_refused(ov_v450(2), cfg_nov, WT_ECORRUPT, "needs vision_config", "SigLIP");
}

/* linear_1 of twice the tower's width, and SigLIP's attention-pooling head (not built by
 * vLLM's tower under vision_use_head false), refused under cfg. */
static __attribute__((unused)) void ov_shape_refused(const char *cfg)
{
	tm_model *m = ov_without(PJ "linear_1.weight");
	tm_add2(m, PJ "linear_1.weight", HID, VE * 2);
	fx_refused(m, cfg, WT_ESHAPE, PJ "linear_1.weight", "");
	m = ov_v450(2);
	tm_add2(m, VT "head.probe", 1, VE);
	fx_refused(m, cfg, WT_EUNSUPPORTED, VT "head.probe", "");
}

#endif
