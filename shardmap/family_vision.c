/*
 * family_vision.c — the vision_config checks the LLaVA-style families share (LLaVA /
 * LLaVA-NeXT with CLIP, LLaVA with Pixtral, Idefics3 / SmolVLM, PaliGemma, Aya Vision): the
 * tower's class defaults for absent keys, its heads dividing its width, a patch within the
 * image, one feature layer within the tower and the blocks vLLM builds for it, the pixel
 * shuffle's factor dividing the patch grid.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shardmap/family_rules.h"
#include "shardmap/tower_defaults.h"

const sm_vis_class shardmap_vis_siglip = {"SigLIP: ",       SM_SIGLIP_HIDDEN, SM_SIGLIP_HEADS,
                                          SM_SIGLIP_LAYERS, SM_SIGLIP_IMAGE,  SM_SIGLIP_PATCH,
                                          SM_SIGLIP_INTER};
const sm_vis_class shardmap_vis_clip = {"CLIP: ",       SM_CLIP_HIDDEN, SM_CLIP_HEADS,
                                        SM_CLIP_LAYERS, SM_CLIP_IMAGE,  SM_CLIP_PATCH,
                                        SM_CLIP_INTER};
const sm_vis_class shardmap_vis_pixtral = {"Pixtral: ",  SM_PIX_HIDDEN, SM_PIX_HEADS, SM_PIX_LAYERS,
                                           SM_PIX_IMAGE, SM_PIX_PATCH,  SM_PIX_INTER};
const sm_vis_class shardmap_vis_i3v = {"",           SM_I3V_HIDDEN, SM_I3V_HEADS, SM_I3V_LAYERS,
                                       SM_I3V_IMAGE, SM_I3V_PATCH,  SM_I3V_INTER};

int shardmap_vision_need(const ckpt_config *c, const sm_vis_class *k, wt_errbuf *err)
{
	if (c->has_vision)
		return WT_OK;
	return wt_seterr(err, WT_ECORRUPT,
	                 "config.json: %s needs vision_config (%shidden_size, "
	                 "intermediate_size, num_attention_heads, num_hidden_layers, "
	                 "image_size, patch_size)",
	                 c->architecture, k->label);
}

int shardmap_text_config_is(const ckpt_config *c, const char *type, const char *missing,
                            const char *why, wt_errbuf *err)
{
	if (c->lm_model_type[0] == '\0')
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs a text_config object (model_type %s, its "
		                 "sizes)%s%s",
		                 c->architecture, type, missing ? ": " : "",
		                 missing ? missing : "");
	if (strcmp(c->lm_model_type, type) != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: text_config.model_type '%s': only model_type %s is "
		                 "supported for %s's language model (%s)",
		                 c->lm_model_type, type, c->architecture, why);
	return WT_OK;
}

int shardmap_siglip_text_check(const ckpt_config *c, const char *whose, const char *type,
                               const char *why, sm_vis_geom *g, wt_errbuf *err)
{
	int rv = shardmap_vision_need(c, &shardmap_vis_siglip, err);
	if (rv != WT_OK)
		return rv;
	if (strcmp(c->v_model_type, "siglip_vision_model") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: vision_config.model_type '%s': only a SigLIP tower "
		                 "(siglip_vision_model, %s) is supported for %s",
		                 c->v_model_type, whose, c->architecture);
	if ((rv = shardmap_text_config_is(c, type, NULL, why, err)) != WT_OK)
		return rv;
	return shardmap_vision_geom(c, &shardmap_vis_siglip, g, err);
}

int shardmap_vision_geom(const ckpt_config *c, const sm_vis_class *k, sm_vis_geom *g,
                         wt_errbuf *err)
{
	g->ve = c->v_hidden_size > 0 ? c->v_hidden_size : k->hidden;
	g->vh = c->v_num_attn_heads > 0 ? c->v_num_attn_heads : k->heads;
	g->vd = c->v_num_layers > 0 ? c->v_num_layers : k->layers;
	g->img = c->v_image_size > 0 ? c->v_image_size : k->image;
	g->patch = c->v_patch_given ? c->v_patch_size : k->patch;
	if (g->ve % g->vh)
		return shardmap_vision_heads_err("num_attention_heads", g->vh, g->ve, err);
	if (g->img < g->patch)
		return shardmap_vision_patch_err(g->img, g->patch, err);
	return WT_OK;
}

int64_t shardmap_vision_kept(const ckpt_config *c, int64_t vd)
{
	int64_t fl = c->v_feature_layer;
	return fl < 0 ? vd + fl + 1 : fl;
}

int shardmap_vision_feature(const ckpt_config *c, const sm_vis_geom *g, const char *who,
                            const char *wide, const char *eg, wt_errbuf *err)
{
	if (c->v_feature_list)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: vision_feature_layer is a list; %s takes one layer's "
		    "features (%s wide): give one index, e.g. %s",
		    who, wide, eg);
	int64_t kept = shardmap_vision_kept(c, g->vd);
	if (kept < 0 || kept > g->vd)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_feature_layer %" PRId64
		                 " is outside the tower's %" PRId64
		                 " blocks (vision_config.num_hidden_layers): give an index in "
		                 "[%" PRId64 ", %" PRId64 "], e.g. %s",
		                 c->v_feature_layer, g->vd, -g->vd - 1, g->vd, eg);
	return WT_OK;
}

bool shardmap_tower_drop(const char *vt, int64_t kept, int64_t vd, bool post_always, const char *cn)
{
	static const char post[] = "post_layernorm.";
	static const char blk[] = "encoder.layers.";
	size_t n = strlen(vt);
	if (strncmp(cn, vt, n) != 0)
		return false;
	cn += n;
	if (strncmp(cn, post, sizeof(post) - 1) == 0)
		return post_always || kept < vd;
	if (strncmp(cn, blk, sizeof(blk) - 1) != 0)
		return false;
	const char *s = cn + sizeof(blk) - 1;
	if (*s < '0' || *s > '9')
		return false;
	char *end;
	long long b = strtoll(s, &end, 10);
	return *end == '.' && b >= kept && b < vd;
}

bool shardmap_vision_drop(const ckpt_config *c, const char *vt, int64_t vd, bool post_always,
                          const char *cn)
{
	return shardmap_tower_drop(vt, shardmap_vision_kept(c, vd), vd, post_always, cn);
}

bool shardmap_pixtral_drop(const ckpt_config *c, const char *cn)
{
	static const char blk[] = "vision_tower.transformer.layers.";
	if (strncmp(cn, blk, sizeof(blk) - 1) != 0)
		return false;
	const char *s = cn + sizeof(blk) - 1;
	if (*s < '0' || *s > '9')
		return false;
	char *end;
	long long b = strtoll(s, &end, 10);
	int64_t vd = c->v_num_layers > 0 ? c->v_num_layers : SM_PIX_LAYERS;
	return *end == '.' && b >= shardmap_vision_kept(c, vd) && b < vd;
}

/* vLLM's siglip.py SiglipMLP hands its quant_config to fc1 / fc2 only when hidden_size and
 * intermediate_size are both multiples of 64; otherwise it builds them unquantized. */
bool shardmap_siglip_mlp_odd(int64_t hidden, int64_t inter)
{
	return hidden % 64 != 0 || inter % 64 != 0;
}

bool shardmap_siglip_mlp_float(const ckpt_config *c, const char *vt, const char *cn)
{
	size_t n = strlen(vt), len = strlen(cn);
	static const char fc1[] = ".mlp.fc1.weight", fc2[] = ".mlp.fc2.weight";
	size_t k = sizeof(fc1) - 1;
	if (strncmp(cn, vt, n) != 0 || len < n + k ||
	    (strcmp(cn + len - k, fc1) != 0 && strcmp(cn + len - k, fc2) != 0))
		return false;
	int64_t h = c->v_hidden_size > 0 ? c->v_hidden_size : SM_SIGLIP_HIDDEN;
	int64_t i = c->v_intermediate_size > 0 ? c->v_intermediate_size : SM_SIGLIP_INTER;
	return shardmap_siglip_mlp_odd(h, i);
}

bool shardmap_siglip_tower_float(const ckpt_config *c, const char *cn)
{
	return shardmap_siglip_mlp_float(c, "vision_tower.vision_model.", cn);
}

int shardmap_vision_shuffle(const ckpt_config *c, const sm_vis_geom *g, const char *key,
                            const char *who, const char *tail, wt_errbuf *err)
{
	int64_t side = g->img / g->patch, f = c->v_spatial_merge_size;
	if (side % f == 0)
		return WT_OK;
	return wt_seterr(err, WT_ESHAPE,
	                 "config.json: %s %" PRId64 " does not divide the tower's %" PRId64
	                 " patches a side (vision_config.image_size %" PRId64
	                 " / patch_size %" PRId64 "): %s pixel shuffle folds %s x %s patches "
	                 "into one; give a %s dividing %" PRId64 "%s",
	                 key, f, side, g->img, g->patch, who, key, key, key, side, tail);
}

int shardmap_vision_mlp_ar_check(const ckpt_config *c, const char *whose, const char *proj,
                                 wt_errbuf *err)
{
	int rv;
	if ((rv = shardmap_vision_need(c, &shardmap_vis_siglip, err)) != WT_OK)
		return rv;
	const struct {
		const char *key;
		bool given;
	} need[] = {{"hidden_size", c->v_hidden_size > 0},
	            {"intermediate_size", c->v_intermediate_size > 0},
	            {"num_hidden_layers", c->v_num_layers > 0},
	            {"num_attention_heads", c->v_num_attn_heads > 0},
	            {"image_size", c->v_image_size > 0},
	            {"patch_size", c->v_patch_given}};
	for (size_t k = 0; k < sizeof(need) / sizeof(need[0]); k++)
		if (!need[k].given)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: %s needs vision_config.%s (%s): give the "
			                 "release's value",
			                 c->architecture, need[k].key, whose);
	if (c->v_spatial_merge_size != 2)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: vision_config.spatial_merge_size %" PRId64
		                 ": vLLM's %s projector (mlp_AR) merges 2 x 2 patches whatever it "
		                 "says (merge_kernel_size (2, 2)); give 2",
		                 c->v_spatial_merge_size, proj);
	sm_vis_geom g;
	return shardmap_vision_geom(c, &shardmap_vis_siglip, &g, err);
}
