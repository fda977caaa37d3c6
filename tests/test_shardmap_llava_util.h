/*
 * test_shardmap_llava_util.h — tests/test_shardmap_llava.c's LLaVA fixture (test code only):
 * its sizes, the config.json texts (LLaVA on a CLIP tower, its text-only language model, the
 * tower at other widths, LLaVA-NeXT with a Mistral language model), the model builder
 * (language model, tower, projector; image_newline for LLaVA-NeXT), the hand-computed checks
 * of one rank's slices and the rank-by-rank comparison of two plans. Include after
 * test_shardmap_fx.h (SEED defined).
 */
#ifndef WT_TEST_SHARDMAP_LLAVA_UTIL_H
#define WT_TEST_SHARDMAP_LLAVA_UTIL_H

#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* LM: hid 64, H 8, KV 2, d 8 (H*d 64, KV*d 16), I 128, V 128, L 1, untied. Vision: 3
 * blocks (feature layer -2: blocks 0 and 1 built), width 32, 8 heads, MLP 64, image 8 /
 * patch 2: 16 patches + the class token. */
#define HID 64
#define VE  32
#define VI  64
#define VNP 17

#define LM_KEYS                                                                                    \
	"\"model_type\":\"llama\",\"hidden_size\":64,\"num_attention_heads\":8,"                   \
	"\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"                  \
	"\"num_hidden_layers\":1"
#define VISION_CFG(keys) ",\"vision_config\":{\"model_type\":\"clip_vision_model\"" keys "}}"
#define VISION_KEYS_W(h, i)                                                                        \
	",\"hidden_size\":" h ",\"intermediate_size\":" i ",\"num_attention_heads\":8,"            \
	"\"num_hidden_layers\":3,\"image_size\":8,\"patch_size\":2"
#define VISION_KEYS VISION_KEYS_W("32", "64")
#define CFG_HEAD(top)                                                                              \
	"{\"architectures\":[\"LlavaForConditionalGeneration\"],\"model_type\":\"llava\"," top     \
	"\"text_config\":{" LM_KEYS "}"
static const char cfg_lv[] = CFG_HEAD("") VISION_CFG(VISION_KEYS);
static const char cfg_nobias[] =
    CFG_HEAD("\"multimodal_projector_bias\":false,") VISION_CFG(VISION_KEYS);
static const char cfg_text[] = "{\"architectures\":[\"LlamaForCausalLM\"]," LM_KEYS "}";

#define VT "vision_tower.vision_model."
#define VB VT "encoder.layers.%d."
#define PJ "multi_modal_projector."

/* The language model (values first: the same in every layout and as Llama's), then,
 * unless text-only, the tower of `blocks` blocks and the projector (biases if bias). */
/* lv_model_w's tower: CLIP's (class embedding, pre_layrnorm) unless lv_siglip_tower is set
 * (SigLIP's: a patch bias, no class token). */
static bool lv_siglip_tower;

static tm_model *lv_model_w(lay y, bool bias, int blocks, int64_t ve, int64_t vi)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	mm_add(m, y, "model.embed_tokens.weight", 128, HID);
	mm_add(m, y, "model.norm.weight", HID, 0);
	static const struct {
		const char *leaf;
		int64_t n, k;
	} lm[] = {{"input_layernorm.weight", HID, 0},   {"post_attention_layernorm.weight", HID, 0},
	          {"self_attn.q_proj.weight", 64, HID}, {"self_attn.k_proj.weight", 16, HID},
	          {"self_attn.v_proj.weight", 16, HID}, {"self_attn.o_proj.weight", HID, 64},
	          {"mlp.gate_proj.weight", 128, HID},   {"mlp.up_proj.weight", 128, HID},
	          {"mlp.down_proj.weight", HID, 128}};
	for (size_t k = 0; k < sizeof(lm) / sizeof(lm[0]); k++) {
		char b[200];
		snprintf(b, sizeof(b), "model.layers.0.%s", lm[k].leaf);
		mm_add(m, y, b, lm[k].n, lm[k].k);
	}
	mm_add(m, y, "lm_head.weight", 128, HID);
	if (y == LAY_TEXT)
		return m;
	mm_add_vit(m, y, !lv_siglip_tower, ve, vi, lv_siglip_tower ? VNP - 1 : VNP, blocks);
	mm_add(m, y, PJ "linear_1.weight", HID, ve);
	mm_add(m, y, PJ "linear_2.weight", HID, HID);
	if (bias) {
		mm_add(m, y, PJ "linear_1.bias", HID, 0);
		mm_add(m, y, PJ "linear_2.bias", HID, 0);
	}
	return m;
}

static tm_model *lv_model(lay y, bool bias, int blocks)
{
	return lv_model_w(y, bias, blocks, VE, VI);
}

static void check_rank(const fx *f, uint32_t T, uint32_t r, bool bias)
{
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	/* block 2 (past the feature layer) and post_layernorm: not built by vLLM */
	assert_int_equal(tm_ix(f->p, r, VT "encoder.layers.2.self_attn.qkv_proj.weight"), -1);
	assert_int_equal(tm_ix(f->p, r, VT "post_layernorm.weight"), -1);
	static const char *const rep[] = {VT "embeddings.class_embedding",
	                                  VT "embeddings.patch_embedding.weight",
	                                  VT "embeddings.position_embedding.weight",
	                                  VT "pre_layrnorm.weight", VT "pre_layrnorm.bias"};
	for (size_t j = 0; j < sizeof(rep) / sizeof(rep[0]); j++)
		repl(f, r, rep[j]);
	assert_int_equal(info(f, r, VT "embeddings.patch_embedding.weight")->ndim, 4);
	int64_t hl = HID / T;
	shp(f, r, PJ "linear_1.weight", 2, hl, VE, 0);
	rows_at(f, r, PJ "linear_1.weight", 0, PJ "linear_1.weight", r * hl, hl);
	cols_of(f, r, T, PJ "linear_2.weight", PJ "linear_2.weight", HID, HID);
	if (bias) {
		shp(f, r, PJ "linear_1.bias", 1, hl, 0, 0);
		rows_at(f, r, PJ "linear_1.bias", 0, PJ "linear_1.bias", r * hl, hl);
		repl(f, r, PJ "linear_2.bias");
	} else {
		assert_int_equal(tm_ix(f->p, r, PJ "linear_1.bias"), -1);
		assert_int_equal(tm_ix(f->p, r, PJ "linear_2.bias"), -1);
	}
	/* LM: H 8 KV 2 d 8; TP 2: kv head r, TP 4: kv head r/2 replicated */
	const char *lq = "language_model.model.layers.0.self_attn.qkv_proj.weight";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	shp(f, r, lq, 2, ql + 16, HID, 0);
	rows_at(f, r, lq, 0, "language_model.model.layers.0.self_attn.q_proj.weight", r * ql, ql);
	rows_at(f, r, lq, ql, "language_model.model.layers.0.self_attn.k_proj.weight", kvh * 8, 8);
	rows_at(f, r, lq, ql + 8, "language_model.model.layers.0.self_attn.v_proj.weight", kvh * 8,
	        8);
	cols_of(f, r, T, "language_model.model.layers.0.self_attn.o_proj.weight",
	        "language_model.model.layers.0.self_attn.o_proj.weight", HID, 64);
	assert_true(tm_ix(f->p, r, "language_model.lm_head.weight") >= 0); /* untied */
}

/* The tower at 64 / 96 and 64 / 128 (vision hidden_size / intermediate_size). */
static const char cfg_i96[] = CFG_HEAD("") VISION_CFG(VISION_KEYS_W("64", "96"));
static const char cfg_w64[] = CFG_HEAD("") VISION_CFG(VISION_KEYS_W("64", "128"));

/* Every output of rank r of a equals the one of b (names, shapes, bytes); b's names
 * are a's with `strip` removed from the front (NULL: the same names). */
static void same_rank(const fx *a, const fx *b, uint32_t r, const char *strip)
{
	size_t na = shardmap_rank_n_tensors(a->p, r), nb = 0;
	for (size_t i = 0; i < na; i++) {
		const sm_out_info *t = shardmap_rank_tensor(a->p, r, i);
		const char *n = t->name;
		if (strip && strncmp(n, strip, strlen(strip)) != 0)
			continue;
		nb++;
		const sm_out_info *u = info(b, r, strip ? n + strlen(strip) : n);
		assert_int_equal(t->ndim, u->ndim);
		assert_int_equal(t->nbytes, u->nbytes);
		assert_int_equal(t->dtype, u->dtype);
		if (memcmp(a->pr->b[r][i], out_bytes(b, r, u->name), t->nbytes) != 0)
			fail_msg("rank %u '%s' differs", r, n);
	}
	assert_int_equal(nb, shardmap_rank_n_tensors(b->p, r));
}

/* LLaVA-NeXT: LLaVA's table with a Mistral language model, plus image_newline [hid]. */
#define CFG_NEXT(top)                                                                              \
	"{\"architectures\":[\"LlavaNextForConditionalGeneration\"],\"model_type\":"               \
	"\"llava_next\"," top "\"text_config\":{" LM_KEYS_MISTRAL "}"
#define LM_KEYS_MISTRAL                                                                            \
	"\"model_type\":\"mistral\",\"hidden_size\":64,\"num_attention_heads\":8,"                 \
	"\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"                  \
	"\"num_hidden_layers\":1,\"sliding_window\":null"
static const char cfg_next[] = CFG_NEXT("") VISION_CFG(VISION_KEYS);

static tm_model *next_model(lay y, bool newline)
{
	tm_model *m = lv_model(y, true, 3);
	if (newline)
		mm_add(m, y, "image_newline", HID, 0);
	return m;
}

#endif
