/*
 * test_shardmap_phi3v.c — Phi-3-Vision (Phi3VForCausalLM, model_type phi3_v; docs/format.md
 * section 2.7), cut as vLLM's phi3v.py / clip.py / llama.py load it: the CLIP ViT-L/14-336
 * tower's rank slices by hand at TP 2 and 4 (fx_vit_block at vLLM's fixed width 1024, MLP 4096,
 * 16 heads), the blocks past img_processor.layer_idx and post_layernorm skipped, glb_GN /
 * sub_GN / img_projection whole on every rank and never quantized, the optional
 * vision_embed_tokens.wte by padded vocabulary rows; the language model byte for byte the phi3
 * family's ranks of the same weights as a Phi3ForCausalLM checkpoint (TP 1 / 2 / 4 / 8,
 * int8-channel TP 2, fp8-channel TP 4), coverage, Phi3VConfig's defaults and the refusals.
 *
 * The tower's sizes are vLLM's hard-coded CLIP_VIT_LARGE_PATCH14_336_CONFIG, not config.json's,
 * so the tests build 1024-wide blocks and keep them few through layer_idx (0: one block).
 * Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x5eed03f3ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* tm_phi3's LM (hid 256, H 8, KV 2, d 32, I 512, V 1000 padded to 1024); vLLM's CLIP. */
#define HID 256
#define HD  32
#define I   512
#define V   1000
#define VP  1024
#define VE  1024
#define VI  4096
#define VNP 577 /* (336 / 14)^2 + the class token */
#define E   "model.vision_embed_tokens."
#define VT  E "img_processor.vision_model."
#define VB  VT "encoder.layers.%d."
#define L0  "model.layers.0."
#define L1  "model.layers.1."

#define P3V_LM                                                                                     \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":2,"                   \
	"\"tie_word_embeddings\":false"
#define P3V_IP(extra)                                                                              \
	"\"img_processor\":{\"image_dim_out\":1024,\"model_name\":"                                \
	"\"openai/clip-vit-large-patch14-336\",\"name\":\"clip_vision_model\","                    \
	"\"num_img_tokens\":144" extra "}"
#define P3V_EL(extra)                                                                              \
	"\"embd_layer\":{\"embedding_cls\":\"image\",\"projection_cls\":\"mlp\"" extra "}"
#define P3V_HD                                                                                     \
	",\"hd_transform_order\":\"sub_glb\",\"use_hd_transform\":true,"                           \
	"\"with_learnable_separator\":true"
#define P3V_CFG_MT(mt, ip, el)                                                                     \
	"{\"architectures\":[\"Phi3VForCausalLM\"],\"model_type\":\"" mt "\"," P3V_LM "," ip       \
	"," el "}"
#define P3V_CFG(ip, el) P3V_CFG_MT("phi3_v", ip, el)
/* layer_idx 0: vLLM builds one block */
#define P3V(ip_extra) P3V_CFG(P3V_IP(",\"layer_idx\":0" ip_extra), P3V_EL(P3V_HD))

static const char cfg_p3v[] = P3V("");

static void add_4d(tm_model *m, const char *name, int64_t a, int64_t b, int64_t c, int64_t d)
{
	tm_add(m, name, WT_DTYPE_INVALID, 1, a * b * c * d, 0, 0);
	st_desc *s = &m->d[m->n - 1];
	s->ndim = 4;
	s->shape[0] = a;
	s->shape[1] = b;
	s->shape[2] = c;
	s->shape[3] = d;
}

/* Phi-3's LM (tm_phi3), then the image embedding: wte when asked, the tower's embeddings,
 * `blocks` 1024-wide blocks and post_layernorm, glb_GN, sub_GN and img_projection. */
static tm_model *p3v_model_h(int blocks, bool wte, bool hollow)
{
	static const fx_leaf blk[] = {FX_VIT_BLOCK_LEAVES(VE, VI)};
	tm_model *m = tm_phi3(SEED, 0);
	m->hollow = hollow;
	if (wte)
		tm_add2(m, E "wte.weight", V, HID);
	tm_add2(m, VT "embeddings.class_embedding", VE, 0);
	add_4d(m, VT "embeddings.patch_embedding.weight", VE, 3, 14, 14);
	tm_add2(m, VT "embeddings.position_embedding.weight", VNP, VE);
	tm_add2(m, VT "pre_layrnorm.weight", VE, 0);
	tm_add2(m, VT "pre_layrnorm.bias", VE, 0);
	for (int b = 0; b < blocks; b++)
		for (size_t k = 0; k < sizeof(blk) / sizeof(blk[0]); k++) {
			char n[200];
			snprintf(n, sizeof(n), VB "%s", b, blk[k].leaf);
			tm_add2(m, n, blk[k].n, blk[k].k);
		}
	tm_add2(m, VT "post_layernorm.weight", VE, 0);
	tm_add2(m, VT "post_layernorm.bias", VE, 0);
	tm_add(m, E "glb_GN", WT_DTYPE_INVALID, 3, 1, 1, 4 * VE);
	add_4d(m, E "sub_GN", 1, 1, 1, 4 * VE);
	tm_add2(m, E "img_projection.0.weight", HID, 4 * VE);
	tm_add2(m, E "img_projection.0.bias", HID, 0);
	tm_add2(m, E "img_projection.2.weight", HID, HID);
	tm_add2(m, E "img_projection.2.bias", HID, 0);
	return m;
}

static tm_model *p3v_model(int blocks, bool wte)
{
	return p3v_model_h(blocks, wte, false);
}

/* The same, shapes only (tm_model.hollow): for what is only planned, a 24-block tower
 * without its 300M values made and written */
static tm_model *p3v_hollow(int blocks)
{
	return p3v_model_h(blocks, false, true);
}

static const char *const whole[] = {VT "embeddings.class_embedding",
                                    VT "embeddings.patch_embedding.weight",
                                    VT "embeddings.position_embedding.weight",
                                    VT "pre_layrnorm.weight",
                                    VT "pre_layrnorm.bias",
                                    E "glb_GN",
                                    E "sub_GN",
                                    E "img_projection.0.weight",
                                    E "img_projection.0.bias",
                                    E "img_projection.2.weight",
                                    E "img_projection.2.bias"};

/* Rank r of T's Phi-3 layer under p by hand: qkv_proj [q_r; k_r; v_r] from the fused rows
 * (q at 0, k at H d, v at (H + KV) d; the kv head r / (T / KV) when KV < T), o_proj columns,
 * gate_up_proj [gate_r; up_r] (up at row I), down_proj columns. */
static void phi3_layer_is(const fx *f, uint32_t r, uint32_t T, const char *p)
{
	char qkv[96], o[96], gu[96], dn[96];
	snprintf(qkv, sizeof(qkv), "%sself_attn.qkv_proj.weight", p);
	snprintf(o, sizeof(o), "%sself_attn.o_proj.weight", p);
	snprintf(gu, sizeof(gu), "%smlp.gate_up_proj.weight", p);
	snprintf(dn, sizeof(dn), "%smlp.down_proj.weight", p);
	int64_t hl = 8 / T, kvl = T <= 2 ? 2 / T : 1, g0 = T <= 2 ? r * kvl : r / (T / 2);
	shp(f, r, qkv, 2, (hl + 2 * kvl) * HD, HID, 0);
	rows_at(f, r, qkv, 0, qkv, r * hl * HD, hl * HD);
	rows_at(f, r, qkv, hl * HD, qkv, 8 * HD + g0 * HD, kvl * HD);
	rows_at(f, r, qkv, (hl + kvl) * HD, qkv, 10 * HD + g0 * HD, kvl * HD);
	cols_of(f, r, T, o, o, HID, 8 * HD);
	shp(f, r, gu, 2, 2 * (I / T), HID, 0);
	rows_at(f, r, gu, 0, gu, r * (I / T), I / T);
	rows_at(f, r, gu, I / T, gu, I + r * (I / T), I / T);
	cols_of(f, r, T, dn, dn, HID, I);
}

/* TP 2 and 4 (layer_idx 0 of a checkpoint with two blocks): block 0 by hand, block 1 and
 * post_layernorm skipped, the embeddings, separators and projector whole; wte, embed_tokens
 * and lm_head by padded vocabulary rows; the LM's layers by hand. */
static void test_p3v_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, p3v_model(2, true), cfg_p3v, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "phi3v");
		for (uint32_t r = 0; r < T; r++) {
			fx_vit_block(&f, T, r, VB, 0, VE, VI);
			assert_int_equal(
			    tm_ix(f.p, r, VT "encoder.layers.1.self_attn.qkv_proj.weight"), -1);
			assert_int_equal(tm_ix(f.p, r, VT "post_layernorm.weight"), -1);
			for (size_t j = 0; j < sizeof(whole) / sizeof(whole[0]); j++)
				repl(&f, r, whole[j]);
			assert_int_equal(info(&f, r, E "sub_GN")->ndim, 4);
			assert_int_equal(info(&f, r, E "glb_GN")->shape[2], 4 * VE);
			fx_vocab_from(&f, r, T, E "wte.weight", E "wte.weight", V, VP, HID);
			fx_vocab_from(&f, r, T, "model.embed_tokens.weight",
			              "model.embed_tokens.weight", V, VP, HID);
			fx_vocab_from(&f, r, T, "lm_head.weight", "lm_head.weight", V, VP, HID);
			phi3_layer_is(&f, r, T, L0);
			phi3_layer_is(&f, r, T, L1);
		}
		assert_false(shardmap_tied_lm_head(f.p));
		assert_true(fx_skipped(&f, VT "post_layernorm.weight") &&
		            fx_skipped(&f, VT "post_layernorm.bias") &&
		            fx_skipped(&f, VT "encoder.layers.1.mlp.fc1.weight"));
		assert_false(fx_skipped(&f, VT "encoder.layers.0.mlp.fc1.weight") ||
		             fx_skipped(&f, E "wte.weight"));
		fx_close(&f);
	}
}

/* Every rank's outputs outside model.vision_embed_tokens. equal the Phi3ForCausalLM
 * checkpoint's ranks of the same weights, byte for byte, no more, no fewer. */
static void same_as_phi3(const wt_layout *l)
{
	fx a, b;
	fx_open_l(&a, p3v_model(1, true), cfg_p3v, l, true);
	fx_open_l(&b, tm_phi3(SEED, 0), tm_phi3_cfg, l, true);
	for (uint32_t r = 0; r < l->tp_size; r++) {
		size_t na = shardmap_rank_n_tensors(a.p, r), n = 0;
		for (size_t i = 0; i < na; i++) {
			const sm_out_info *t = shardmap_rank_tensor(a.p, r, i);
			if (strncmp(t->name, E, strlen(E)) == 0)
				continue;
			n++;
			const sm_out_info *u = info(&b, r, t->name);
			assert_true(t->nbytes == u->nbytes && t->dtype == u->dtype &&
			            t->ndim == u->ndim);
			if (memcmp(a.pr->b[r][i], out_bytes(&b, r, t->name), t->nbytes) != 0)
				fail_msg("rank %u '%s' differs from phi3's", r, t->name);
		}
		assert_int_equal(n, shardmap_rank_n_tensors(b.p, r));
	}
	fx_close(&a);
	fx_close(&b);
}

static void test_p3v_same_lm(void **state)
{
	(void)state;
	for (uint32_t T = 1; T <= 8; T *= 2) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = T;
		same_as_phi3(&l);
	}
}

static const char *const p3v_keep[] = {L0 "input_layernorm.weight",
                                       "model.embed_tokens.weight",
                                       E "wte.weight",
                                       "lm_head.weight",
                                       VT "pre_layrnorm.weight",
                                       VT "encoder.layers.0.layer_norm1.weight",
                                       VT "encoder.layers.0.mlp.fc2.bias",
                                       E "glb_GN",
                                       E "sub_GN",
                                       E "img_projection.0.weight",
                                       E "img_projection.0.bias",
                                       E "img_projection.2.weight",
                                       E "img_projection.2.bias"};
static const char *const p3v_quant[] = {L0 "self_attn.qkv_proj.weight",
                                        L1 "self_attn.o_proj.weight",
                                        L0 "mlp.gate_up_proj.weight",
                                        L1 "mlp.down_proj.weight",
                                        VT "encoder.layers.0.self_attn.qkv_proj.weight",
                                        VT "encoder.layers.0.self_attn.out_proj.weight",
                                        VT "encoder.layers.0.mlp.fc1.weight",
                                        VT "encoder.layers.0.mlp.fc2.weight"};

/* int8-channel at TP 2: the LM's and the tower's Linears quantized (vLLM passes quant_config
 * to both), img_projection (plain nn.Linear), the separators, embeddings, norms and biases
 * BF16; rank 1's o_proj and fc2 codes their columns. fp8-channel at TP 4 the same split. The
 * LM byte for byte phi3's either way. */
static void test_p3v_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, p3v_model(1, true), cfg_p3v, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(p3v_keep), FX_N(p3v_quant));
	fx_cols_int8_is(&f, 1, 2, L1 "self_attn.o_proj.weight", HID, 8 * HD);
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.0.mlp.fc2.weight", VE, VI);
	for (uint32_t r = 0; r < 2; r++)
		repl(&f, r, E "img_projection.0.weight");
	/* the same folder (its tower written once) */
	fx_requant(&f, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(p3v_keep), FX_N(p3v_quant));
	fx_close(&f);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	same_as_phi3(&l);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	same_as_phi3(&l);
}

/* Coverage over TP 1..8 with and without wte; the block count vLLM builds from layer_idx. */
static void test_p3v_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(p3v_model(1, true), cfg_p3v, 2, lays, 4);
	coverage(p3v_model(1, false), cfg_p3v, 2, lays, 4);
	/* without wte vLLM reuses the LM's table: nothing of that name on any rank */
	fx f;
	fx_open(&f, p3v_model(1, false), cfg_p3v, 2, 1, 0, false);
	assert_int_equal(tm_ix(f.p, 0, E "wte.weight"), -1);
	fx_close(&f);
	/* layer_idx -24: 24 - 24 + 1 = one block, as layer_idx 0 */
	fx_open(&f, p3v_model(2, true), P3V_CFG(P3V_IP(",\"layer_idx\":-24"), P3V_EL(P3V_HD)), 2, 1,
	        0, false);
	assert_true(fx_skipped(&f, VT "encoder.layers.1.mlp.fc1.weight") &&
	            fx_skipped(&f, VT "post_layernorm.weight"));
	assert_false(fx_skipped(&f, VT "encoder.layers.0.mlp.fc1.weight"));
	fx_close(&f);
	/* layer_idx 1: idx + 1 = two blocks kept, post_layernorm still dropped (2 < 24) */
	fx_open(&f, p3v_model(3, false), P3V_CFG(P3V_IP(",\"layer_idx\":1"), P3V_EL(P3V_HD)), 2, 1,
	        0, false);
	assert_true(fx_skipped(&f, VT "encoder.layers.2.mlp.fc1.weight") &&
	            fx_skipped(&f, VT "post_layernorm.bias"));
	assert_false(fx_skipped(&f, VT "encoder.layers.1.mlp.fc1.weight"));
	fx_close(&f);
	/* the default layer_idx -2 needs 23 blocks: a checkpoint of two is missing block 2 on */
	fx_refused(p3v_model(2, false), P3V_CFG(P3V_IP(""), P3V_EL(P3V_HD)), WT_ENOTFOUND,
	           VT "encoder.layers.", "");
}

/* layer_idx -1 (and 23): all 24 blocks built, so post_layernorm too (require_post_norm None),
 * on every rank whole; planned only (the 1024-wide tower is 300M values: hollow, shapes
 * only). */
static void test_p3v_full_tower(void **state)
{
	(void)state;
	static const char *const cfgs[] = {P3V_CFG(P3V_IP(",\"layer_idx\":-1"), P3V_EL(P3V_HD)),
	                                   P3V_CFG(P3V_IP(",\"layer_idx\":23"), P3V_EL(P3V_HD))};
	for (size_t k = 0; k < 2; k++) {
		fx f;
		fx_open(&f, p3v_hollow(24), cfgs[k], 2, 1, 0, false);
		assert_false(fx_skipped(&f, VT "post_layernorm.weight") ||
		             fx_skipped(&f, VT "encoder.layers.23.mlp.fc1.weight"));
		for (uint32_t r = 0; r < 2; r++)
			assert_true(tm_ix(f.p, r, VT "post_layernorm.bias") >= 0 &&
			            tm_ix(f.p, r, VT "encoder.layers.23.mlp.fc2.weight") >= 0);
		tm_check_coverage(f.c, f.p, 2);
		fx_close(&f);
	}
	/* the releases' layer_idx -2 on their 24 blocks: 23 built, block 23 and post_layernorm
	 * skipped */
	fx f;
	fx_open(&f, p3v_hollow(24), P3V_CFG(P3V_IP(""), P3V_EL(P3V_HD)), 2, 1, 0, false);
	assert_true(fx_skipped(&f, VT "post_layernorm.weight") &&
	            fx_skipped(&f, VT "encoder.layers.23.mlp.fc1.weight") &&
	            !fx_skipped(&f, VT "encoder.layers.22.mlp.fc1.weight"));
	for (uint32_t r = 0; r < 2; r++)
		assert_true(tm_ix(f.p, r, VT "encoder.layers.22.mlp.fc2.weight") >= 0 &&
		            tm_ix(f.p, r, VT "encoder.layers.23.mlp.fc2.weight") < 0);
	tm_check_coverage(f.c, f.p, 2);
	fx_close(&f);
}

/* Phi3VConfig's defaults (Phi3Config's sizes, untied) and vLLM's fixed CLIP in the vision
 * fields; layer_idx read as the block count vLLM builds. */
static void test_p3v_defaults(void **state)
{
	(void)state;
	static const char cls[] = "{\"architectures\":[\"Phi3VForCausalLM\"],\"model_type\":"
	                          "\"phi3_v\"," P3V_IP("") "," P3V_EL(P3V_HD) "}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.vocab_size == 32064 && c.hidden_size == 3072 && c.intermediate_size == 8192 &&
	            c.num_hidden_layers == 32 && c.num_attention_heads == 32 &&
	            c.num_key_value_heads == 32 && !c.tie_word_embeddings);
	assert_true(c.has_vision && c.v_hidden_size == 1024 && c.v_intermediate_size == 4096 &&
	            c.v_num_layers == 23 && c.v_num_attn_heads == 16 && c.v_image_size == 336 &&
	            c.v_patch_size == 14 && c.v_feature_layer == -2 &&
	            strcmp(c.v_model_type, "clip_vision_model") == 0);
	ckpt_config_clear(&c);
	static const char idx5[] = "{\"architectures\":[\"Phi3VForCausalLM\"],\"model_type\":"
	                           "\"phi3_v\"," P3V_IP(",\"layer_idx\":5") "," P3V_EL(P3V_HD) "}";
	assert_int_equal(ckpt_config_parse(idx5, strlen(idx5), &c, &err), WT_OK);
	assert_true(c.v_feature_layer == 6 && c.v_num_layers == 6);
	ckpt_config_clear(&c);
}

static void test_p3v_errors(void **state)
{
	(void)state;
	fx_refused(p3v_model(0, false), P3V_CFG_MT("phi3_v", "\"x\":1", P3V_EL(P3V_HD)),
	           WT_ECORRUPT, "img_processor is missing", "image_dim_out");
	fx_refused(p3v_model(0, false), P3V_CFG("\"img_processor\":null", P3V_EL(P3V_HD)),
	           WT_ECORRUPT, "img_processor is not an object", "");
	fx_refused(p3v_model(0, false),
	           P3V_CFG("\"img_processor\":{\"num_img_tokens\":144}", P3V_EL(P3V_HD)),
	           WT_ECORRUPT, "img_processor.image_dim_out is missing", "1024");
	fx_refused(p3v_model(0, false),
	           P3V_CFG("\"img_processor\":{\"image_dim_out\":1024}", P3V_EL(P3V_HD)),
	           WT_ECORRUPT, "img_processor.num_img_tokens is missing", "144");
	fx_refused(p3v_model(0, false),
	           P3V_CFG("\"img_processor\":{\"image_dim_out\":768,\"num_img_tokens\":144}",
	                   P3V_EL(P3V_HD)),
	           WT_EUNSUPPORTED, "image_dim_out 768", "set it to 1024");
	fx_refused(p3v_model(0, false), P3V(",\"type_feature\":\"cls_patch\""), WT_EUNSUPPORTED,
	           "img_processor.type_feature 'cls_patch'", "\"patch\"");
	fx_refused(p3v_model(0, false), P3V_CFG(P3V_IP(",\"layer_idx\":24"), P3V_EL(P3V_HD)),
	           WT_ECORRUPT, "img_processor.layer_idx 24", "[-24, 23]");
	fx_refused(p3v_model(0, false), P3V_CFG(P3V_IP(",\"layer_idx\":-25"), P3V_EL(P3V_HD)),
	           WT_ECORRUPT, "img_processor.layer_idx -25", "e.g. -2");
	fx_refused(p3v_model(0, false), P3V_CFG(P3V_IP(""), "\"x\":1"), WT_ECORRUPT,
	           "embd_layer is missing", "use_hd_transform");
	fx_refused(p3v_model(0, false), P3V_CFG(P3V_IP(""), "\"embd_layer\":\"default\""),
	           WT_ECORRUPT, "embd_layer is not an object", "");
	fx_refused(p3v_model(0, false),
	           P3V_CFG(P3V_IP(""), P3V_EL(",\"use_hd_transform\":false,"
	                                      "\"with_learnable_separator\":true")),
	           WT_EUNSUPPORTED, "embd_layer.use_hd_transform is false", "set both true");
	fx_refused(p3v_model(0, false),
	           P3V_CFG(P3V_IP(""), P3V_EL(",\"use_hd_transform\":true,"
	                                      "\"hd_transform_order\":\"sub_glb\"")),
	           WT_EUNSUPPORTED, "with_learnable_separator is false (the default)", "");
	fx_refused(p3v_model(0, false),
	           P3V_CFG(P3V_IP(""), P3V_EL(",\"use_hd_transform\":true,"
	                                      "\"with_learnable_separator\":true")),
	           WT_EUNSUPPORTED, "hd_transform_order 'glb_sub' (the default)", "\"sub_glb\"");
	fx_refused(p3v_model(0, false),
	           P3V_CFG_MT("phi3", P3V_IP(",\"layer_idx\":0"), P3V_EL(P3V_HD)), WT_ECORRUPT,
	           "needs model_type phi3_v", "img_processor");
}

/* The image embedding's own tensors: each required, each shape checked. */
static void test_p3v_tensors(void **state)
{
	(void)state;
	static const char cfg0[] = P3V("");
	tm_model *m = p3v_model(1, false);
	tm_remove(m, E "glb_GN");
	fx_refused(m, cfg0, WT_ENOTFOUND, E "glb_GN", "");
	m = p3v_model(1, false);
	tm_remove(m, E "img_projection.2.bias");
	fx_refused(m, cfg0, WT_ENOTFOUND, E "img_projection.2.bias", "");
	m = p3v_model(1, false);
	tm_remove(m, E "sub_GN");
	tm_add(m, E "sub_GN", WT_DTYPE_INVALID, 3, 1, 1, 4 * VE);
	fx_refused(m, cfg0, WT_ESHAPE, E "sub_GN", "");
	m = p3v_model(1, false);
	tm_remove(m, E "img_projection.0.weight");
	tm_add2(m, E "img_projection.0.weight", HID, VE);
	fx_refused(m, cfg0, WT_ESHAPE, E "img_projection.0.weight", "");
	m = p3v_model(1, true);
	tm_remove(m, E "wte.weight");
	tm_add2(m, E "wte.weight", V, 128);
	fx_refused(m, cfg0, WT_ESHAPE, E "wte.weight", "");
	/* a tower of another width than vLLM's fixed 1024 */
	m = p3v_model(1, false);
	tm_remove(m, VT "pre_layrnorm.weight");
	tm_add2(m, VT "pre_layrnorm.weight", 768, 0);
	fx_refused(m, cfg0, WT_ESHAPE, VT "pre_layrnorm.weight", "");
	m = p3v_model(1, false);
	tm_remove(m, VT "encoder.layers.0.mlp.fc1.bias");
	fx_refused(m, cfg0, WT_ENOTFOUND, VT "encoder.layers.0.mlp.fc1.bias", "");
	fx_refused_tp(p3v_model(1, false), cfg0, 16, WT_ELAYOUT, "tp_size 16", "use tp_size");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_p3v_slices),   cmocka_unit_test(test_p3v_same_lm),
	    cmocka_unit_test(test_p3v_quant),    cmocka_unit_test(test_p3v_coverage),
	    cmocka_unit_test(test_p3v_defaults), cmocka_unit_test(test_p3v_errors),
	    cmocka_unit_test(test_p3v_tensors),  cmocka_unit_test(test_p3v_full_tower),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
