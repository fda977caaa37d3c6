/*
 * test_shardmap_minicpmv2.c — MiniCPM-V 2.0 (MiniCPMV, model_type minicpmv, version 2.0:
 * openbmb/MiniCPM-V-2; docs/format.md section 2.7), cut as vLLM's minicpmv.py (MiniCPMV2_0),
 * resampler.py (Resampler2) and minicpm.py load it: the language model under llm. byte for
 * byte the minicpm family's ranks of the same weights (TP 1 / 2, int8-channel TP 2); timm's
 * vit_so400m_patch14_siglip_384 under vpm. at its fixed sizes, every tensor whole on every rank
 * and never quantized; the resampler whole, its pos_embed a parameter, kv_proj quantized;
 * drop_vision_last_layer; the version's recognition (key or derived) and defaults; coverage;
 * the refusals. The tower is SigLIP-400M whatever the config says (1152 wide, 26 blocks
 * built), so the plan-only tests use hollow models (shapes only). Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x3c9a6ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_same_lm.h"

/* the LM: hid 128 (the resampler's nn.MultiheadAttention: 1 head), H 8, KV 2, d 16, I 192,
 * V 1000 (padded 1024), 2 layers; 16 queries (a 4 x 4 grid); the timm tower: width 1152, 16
 * heads, MLP 4304, patch 14, image 384 (729 positions), 27 blocks (26 built) */
#define HID  128
#define HD   16
#define I    192
#define V    1000
#define VP   1024
#define VE   1152
#define VI   4304
#define NPOS 729
#define NQ   16
#define LM   "llm."
#define L1   LM "model.layers.1."
#define VT   "vpm."
#define VB   VT "blocks.%d."
#define RS   "resampler."

#define LMK0                                                                                       \
	"\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"                 \
	"\"num_key_value_heads\":2,\"vocab_size\":1000,\"num_hidden_layers\":2"
#define LMK       LMK0 ",\"tie_word_embeddings\":false"
#define CFGT(top) "{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\"," top LMK "}"
#define CFG       CFGT("\"version\":2.0,\"query_num\":16,")

static const char text_cfg[] =
    "{\"architectures\":[\"MiniCPMForCausalLM\"],\"model_type\":\"minicpm\"," LMK "}";

enum { O_HOLLOW = 1, O_POOL = 2, O_NOPOS = 4, O_BIAS = 8 }; /* mcv2_model options */

/* MiniCPM's decoder under prefix p, 2 layers, its head (O_BIAS: a q_proj bias). */
static void add_lm(tm_model *m, const char *p, unsigned opt)
{
	char b[200], fmt[100];
	snprintf(b, sizeof(b), "%smodel.embed_tokens.weight", p);
	tm_add2(m, b, V, HID);
	snprintf(b, sizeof(b), "%smodel.norm.weight", p);
	tm_add2(m, b, HID, 0);
	snprintf(b, sizeof(b), "%slm_head.weight", p);
	tm_add2(m, b, V, HID);
	snprintf(fmt, sizeof(fmt), "%smodel.layers.%%d.", p);
	static const tm_leaf lm_leaves[] = {{"input_layernorm.weight", HID, 0, 0},
	                                    {"post_attention_layernorm.weight", HID, 0, 0},
	                                    {"self_attn.q_proj.weight", 8 * HD, HID, 0},
	                                    {"self_attn.q_proj.bias", 8 * HD, 0, O_BIAS},
	                                    {"self_attn.k_proj.weight", 2 * HD, HID, 0},
	                                    {"self_attn.v_proj.weight", 2 * HD, HID, 0},
	                                    {"self_attn.o_proj.weight", HID, 8 * HD, 0},
	                                    {"mlp.gate_proj.weight", I, HID, 0},
	                                    {"mlp.up_proj.weight", I, HID, 0},
	                                    {"mlp.down_proj.weight", HID, I, 0}};
	tm_layers(m, fmt, 2, lm_leaves, TM_NLEAVES(lm_leaves), (int)(opt & O_BIAS));
}

/* A timm block's tensors: [rows, cols] (cols 0: a vector). */
static const tm_leaf block[] = {{"norm1.weight", VE, 0, 0},         {"norm1.bias", VE, 0, 0},
                                {"attn.qkv.weight", 3 * VE, VE, 0}, {"attn.qkv.bias", 3 * VE, 0, 0},
                                {"attn.proj.weight", VE, VE, 0},    {"attn.proj.bias", VE, 0, 0},
                                {"norm2.weight", VE, 0, 0},         {"norm2.bias", VE, 0, 0},
                                {"mlp.fc1.weight", VI, VE, 0},      {"mlp.fc1.bias", VI, 0, 0},
                                {"mlp.fc2.weight", VE, VI, 0},      {"mlp.fc2.bias", VE, 0, 0}};

/* The resampler's tensors: [rows, cols] (cols 0: a vector). */
static const tm_leaf rs[] = {{RS "query", NQ, HID, 0},
                             {RS "pos_embed", NQ, HID, 0},
                             {RS "kv_proj.weight", HID, VE, 0},
                             {RS "attn.in_proj_weight", 3 * HID, HID, 0},
                             {RS "attn.in_proj_bias", 3 * HID, 0, 0},
                             {RS "attn.out_proj.weight", HID, HID, 0},
                             {RS "attn.out_proj.bias", HID, 0, 0},
                             {RS "ln_q.weight", HID, 0, 0},
                             {RS "ln_q.bias", HID, 0, 0},
                             {RS "ln_kv.weight", HID, 0, 0},
                             {RS "ln_kv.bias", HID, 0, 0},
                             {RS "ln_post.weight", HID, 0, 0},
                             {RS "ln_post.bias", HID, 0, 0},
                             {RS "proj", HID, HID, 0}};

/* The MiniCPM-V 2.0 checkpoint: the LM, `blocks` timm blocks with the embeddings and the final
 * norm, the resampler (opt: O_HOLLOW shapes only, O_POOL with vpm.attn_pool.latent, O_NOPOS
 * without resampler.pos_embed, O_BIAS with q_proj biases). */
static tm_model *mcv2_model(int blocks, unsigned opt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	m->hollow = (opt & O_HOLLOW) != 0;
	add_lm(m, LM, opt);
	tm_add(m, VT "patch_embed.proj.weight", WT_DTYPE_INVALID, 1, VE * 3 * 14 * 14, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[0] = VE;
	d->shape[1] = 3;
	d->shape[2] = d->shape[3] = 14;
	tm_add2(m, VT "patch_embed.proj.bias", VE, 0);
	tm_add(m, VT "pos_embed", WT_DTYPE_INVALID, 3, 1, NPOS, VE);
	char b[200];
	for (int blk = 0; blk < blocks; blk++)
		for (size_t j = 0; j < TM_NLEAVES(block); j++) {
			snprintf(b, sizeof(b), VB "%s", blk, block[j].leaf);
			tm_add2(m, b, block[j].a, block[j].b);
		}
	tm_add2(m, VT "norm.weight", VE, 0);
	tm_add2(m, VT "norm.bias", VE, 0);
	if (opt & O_POOL)
		tm_add(m, VT "attn_pool.latent", WT_DTYPE_INVALID, 3, 1, 1, VE);
	for (size_t j = 0; j < TM_NLEAVES(rs); j++)
		if (!((opt & O_NOPOS) && strcmp(rs[j].leaf, RS "pos_embed") == 0))
			tm_add2(m, rs[j].leaf, rs[j].a, rs[j].b);
	return m;
}

/* Rank r of T: every tower and resampler tensor whole with its shape, the LM's layer 1 and
 * vocabulary tables by their cuts, the rank's count. */
static void rank_is(const fx *f, uint32_t T, uint32_t r)
{
	const sm_out_info *pe = info(f, r, VT "patch_embed.proj.weight");
	assert_int_equal(pe->ndim, 4);
	assert_true(pe->shape[0] == VE && pe->shape[1] == 3 && pe->shape[2] == 14 &&
	            pe->shape[3] == 14);
	shp(f, r, VT "patch_embed.proj.bias", 1, VE, 0, 0);
	shp(f, r, VT "pos_embed", 3, 1, NPOS, VE);
	shp(f, r, VT "norm.weight", 1, VE, 0, 0);
	shp(f, r, VT "norm.bias", 1, VE, 0, 0);
	char b[200];
	for (int blk = 0; blk < 26; blk += 25)
		for (size_t j = 0; j < TM_NLEAVES(block); j++) {
			snprintf(b, sizeof(b), VB "%s", blk, block[j].leaf);
			shp(f, r, b, block[j].b ? 2 : 1, block[j].a, block[j].b, 0);
		}
	for (size_t j = 0; j < TM_NLEAVES(rs); j++)
		shp(f, r, rs[j].leaf, rs[j].b ? 2 : 1, rs[j].a, rs[j].b, 0);
	int64_t kv = T < 2 ? 2 / T : 1; /* kv heads a rank (replicated past 2) */
	shp(f, r, L1 "self_attn.qkv_proj.weight", 2, (8 / T + 2 * kv) * HD, HID, 0);
	shp(f, r, L1 "self_attn.o_proj.weight", 2, HID, 8 * HD / T, 0);
	shp(f, r, L1 "mlp.gate_up_proj.weight", 2, 2 * I / T, HID, 0);
	shp(f, r, L1 "mlp.down_proj.weight", 2, HID, I / T, 0);
	shp(f, r, LM "model.embed_tokens.weight", 2, VP / T, HID, 0);
	shp(f, r, LM "lm_head.weight", 2, VP / T, HID, 0);
	/* the tower's 3 + 26 x 12 + 2, the resampler's 14; the LM's 3 + 2 layers x 6 */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 3 + 26 * 12 + 2 + 14 + 3 + 2 * 6);
}

/* TP 1 / 2 / 4, hollow (the release's tower): the family, every rank's shapes and count; the
 * checkpoint's last block (drop_vision_last_layer absent: MiniCPMVConfig's true) refused as
 * vLLM's AutoWeightsLoader refuses it; untied by the top level. */
static void test_mcv2_plan(void **state)
{
	(void)state;
	for (uint32_t T = 1; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, mcv2_model(26, O_HOLLOW), CFG, T, 1, 0, false);
		assert_string_equal(shardmap_family(f.p), "minicpmv");
		for (uint32_t r = 0; r < T; r++)
			rank_is(&f, T, r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		assert_int_equal(tm_ix(f.p, 0, VT "blocks.26.norm1.weight"), -1);
		fx_close(&f);
	}
	fx_refused(mcv2_model(27, O_HOLLOW), CFG, WT_ESHAPE, "vpm.blocks.26.",
	           "vit_so400m_patch14_siglip_384");
	/* drop_vision_last_layer false: all 27 built, each whole */
	fx f;
	fx_open(&f, mcv2_model(27, O_HOLLOW),
	        CFGT("\"version\":2.0,\"query_num\":16,\"drop_vision_last_layer\":false,"), 2, 1, 0,
	        false);
	shp(&f, 1, VT "blocks.26.mlp.fc1.weight", 2, VI, VE, 0);
	assert_int_equal(shardmap_rank_n_tensors(f.p, 1), 3 + 27 * 12 + 2 + 14 + 3 + 2 * 6);
	fx_close(&f);
	fx_refused(mcv2_model(26, O_HOLLOW),
	           CFGT("\"version\":2.0,\"query_num\":16,\"drop_vision_last_layer\":false,"),
	           WT_ENOTFOUND, "vpm.blocks.26.", "");
}

/* int8-channel TP 2 and fp8-channel TP 4 (hollow): the timm tower (plain torch modules) and the
 * resampler's query, pos_embed, MultiheadAttention, proj and norms kept BF16, resampler.kv_proj
 * (ReplicatedLinear with the quantization config) and the LM's Linears quantized. */
static void test_mcv2_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {VT "patch_embed.proj.weight",
	                                   VT "pos_embed",
	                                   VT "blocks.0.attn.qkv.weight",
	                                   VT "blocks.3.attn.proj.weight",
	                                   VT "blocks.25.mlp.fc1.weight",
	                                   VT "blocks.25.mlp.fc2.weight",
	                                   VT "norm.weight",
	                                   RS "query",
	                                   RS "pos_embed",
	                                   RS "attn.in_proj_weight",
	                                   RS "attn.out_proj.weight",
	                                   RS "proj",
	                                   LM "model.embed_tokens.weight"};
	static const char *const q[] = {RS "kv_proj.weight", L1 "self_attn.qkv_proj.weight",
	                                L1 "self_attn.o_proj.weight", L1 "mlp.gate_up_proj.weight",
	                                L1 "mlp.down_proj.weight"};
	static const struct {
		uint32_t tp;
		wt_quant q;
		wt_dtype dt;
	} lays[] = {{2, WT_QUANT_INT8_CHANNEL, WT_I8}, {4, WT_QUANT_FP8_CHANNEL, WT_F8_E4M3}};
	for (size_t k = 0; k < sizeof(lays) / sizeof(lays[0]); k++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[k].tp;
		l.quant = lays[k].q;
		fx f;
		fx_open_l(&f, mcv2_model(26, O_HOLLOW), CFG, &l, false);
		for (uint32_t r = 0; r < l.tp_size; r++) {
			for (size_t j = 0; j < TM_NLEAVES(keep); j++)
				if (info(&f, r, keep[j])->dtype != WT_BF16)
					fail_msg("rank %u '%s' quantized", r, keep[j]);
			for (size_t j = 0; j < TM_NLEAVES(q); j++)
				if (info(&f, r, q[j])->dtype != lays[k].dt)
					fail_msg("rank %u '%s' not quantized", r, q[j]);
			shp(&f, r, RS "kv_proj.weight", 2, HID, VE, 0);
		}
		fx_close(&f);
	}
}

/* Every rank's llm.* outputs byte for byte the minicpm family's ranks of the same weights (no
 * more, no fewer): TP 1, TP 2, int8-channel TP 2. The checkpoint is real (the tower's 0.8 GB
 * of BF16), written once and planned under each layout. */
static void test_mcv2_same_lm(void **state)
{
	(void)state;
	static const struct {
		uint32_t tp;
		wt_quant q;
	} lays[] = {{1, WT_QUANT_NONE}, {2, WT_QUANT_NONE}, {2, WT_QUANT_INT8_CHANNEL}};
	static const char *const skip[] = {VT, RS, NULL};
	fx a;
	for (size_t j = 0; j < sizeof(lays) / sizeof(lays[0]); j++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[j].tp;
		l.quant = lays[j].q;
		if (j == 0)
			fx_open_l(&a, mcv2_model(26, 0), CFG, &l, true);
		else
			fx_replan(&a, &l);
		fx b;
		tm_model *t = tm_new(SEED, WT_BF16);
		add_lm(t, "", 0); /* the same values: the LM's tensors come first in both */
		fx_open_l(&b, t, text_cfg, &l, true);
		assert_string_equal(shardmap_family(b.p), "minicpm");
		for (uint32_t r = 0; r < l.tp_size; r++)
			fx_same_rank_strip(&a, &b, r, skip, LM, "minicpm");
		fx_close(&b);
	}
	fx_close(&a);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 / 8 (hollow). */
static void test_mcv2_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(mcv2_model(26, O_HOLLOW), CFG, 2, lays, 4);
}

/* The version: the key (2.0 as a real, a string) or, without it, hidden_size 2304 with
 * query_num 64 (absent: MiniCPMVConfig's 64); the class minicpm with MiniCPMConfig's defaults;
 * the tower's fixed sizes whatever vision_config says; query_num, drop_vision_last_layer. */
static void test_mcv2_defaults(void **state)
{
	(void)state;
	ckpt_config c;
	tm_parse("{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"version\":2.0,"
	         "\"vision_config\":{\"hidden_size\":64,\"num_hidden_layers\":3}}",
	         &c);
	assert_int_equal(c.mcv_version, 20);
	assert_string_equal(c.lm_model_type, "minicpm");
	assert_int_equal(c.v_hidden_size, VE);
	assert_int_equal(c.v_intermediate_size, VI);
	assert_int_equal(c.v_num_layers, 26); /* 27, the last dropped */
	assert_int_equal(c.v_num_attn_heads, 16);
	assert_int_equal(c.v_image_size, 384);
	assert_int_equal(c.v_patch_size, 14);
	assert_int_equal(c.v_in_chans, 3);
	assert_int_equal(c.mcv_query_num, 64);
	assert_true(c.mcv_drop_last);
	assert_int_equal(c.hidden_size, 4096); /* MiniCPMConfig's */
	assert_int_equal(c.vocab_size, 32000);
	assert_int_equal(c.num_key_value_heads, 32);
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
	/* the release's config.json, no version key */
	tm_parse(
	    "{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"hidden_size\":2304,"
	    "\"num_attention_heads\":36,\"num_key_value_heads\":36,\"num_hidden_layers\":40,"
	    "\"intermediate_size\":5760,\"vocab_size\":122753,\"query_num\":64,"
	    "\"drop_vision_last_layer\":true,\"tie_word_embeddings\":false,"
	    "\"vision_encoder\":\"vit_so400m_patch14_siglip_384.webli\",\"scale_emb\":12}",
	    &c);
	assert_int_equal(c.mcv_version, 20);
	assert_string_equal(c.lm_model_type, "minicpm");
	assert_int_equal(c.vocab_size, 122753);
	assert_int_equal(c.v_num_layers, 26);
	ckpt_config_clear(&c);
	tm_parse(
	    "{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"version\":\"2.0\","
	    "\"drop_vision_last_layer\":false,\"query_num\":16,"
	    "\"vision_encoder\":\"vit_so400m_patch14_siglip_384\"}",
	    &c);
	assert_int_equal(c.mcv_version, 20);
	assert_int_equal(c.v_num_layers, 27);
	assert_int_equal(c.mcv_query_num, 16);
	ckpt_config_clear(&c);
	/* hidden_size 2304 with another query_num: 2.5 (Llama), as vLLM derives it */
	tm_parse(
	    "{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"hidden_size\":2304,"
	    "\"query_num\":96}",
	    &c);
	assert_int_equal(c.mcv_version, 25);
	assert_string_equal(c.lm_model_type, "llama");
	ckpt_config_clear(&c);
	/* tied by the top level: the head is skipped */
	fx f;
	fx_open(&f, mcv2_model(26, O_HOLLOW),
	        "{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"version\":2.0,"
	        "\"query_num\":16,\"tie_word_embeddings\":true," LMK0 "}",
	        2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p) && fx_skipped(&f, LM "lm_head.weight"));
	fx_close(&f);
}

/* The refusals, each naming its key or tensor. */
static void test_mcv2_errors(void **state)
{
	(void)state;
	fx_refused(mcv2_model(26, O_HOLLOW), CFGT("\"version\":2.1,\"query_num\":16,"),
	           WT_EUNSUPPORTED, "version 2.1", "2.0, 2.5, 2.6, 4.0 or 4.5");
	fx_refused(mcv2_model(26, O_HOLLOW), CFGT("\"version\":2,\"query_num\":16,"),
	           WT_EUNSUPPORTED, "version 2:", "2.0");
	fx_refused(mcv2_model(26, O_HOLLOW), CFGT("\"version\":2.0,\"query_num\":15,"),
	           WT_EUNSUPPORTED, "query_num 15", "Resampler2");
	fx_refused(mcv2_model(26, O_HOLLOW),
	           CFGT("\"version\":2.0,\"query_num\":16,\"vision_encoder\":"
	                "\"vit_so400m_patch14_siglip_224\","),
	           WT_EUNSUPPORTED, "vision_encoder", "vit_so400m_patch14_siglip_384.webli");
	fx_refused(mcv2_model(26, O_HOLLOW),
	           CFGT("\"version\":2.0,\"query_num\":16,\"num_experts\":4,"
	                "\"num_experts_per_tok\":2,"),
	           WT_EUNSUPPORTED, "num_experts 4", "version 2.0");
	fx_refused(mcv2_model(26, O_HOLLOW),
	           CFGT("\"version\":2.0,\"query_num\":16,\"attention_bias\":true,"),
	           WT_EUNSUPPORTED, "attention_bias", "minicpm.py");
	fx_refused(mcv2_model(26, O_HOLLOW),
	           CFGT("\"version\":2.0,\"query_num\":16,\"hidden_act\":\"gelu\","),
	           WT_EUNSUPPORTED, "hidden_act", "silu");
	/* a hidden_size whose resampler kv_proj is an identity (the tower's 1152) */
	fx_refused(mcv2_model(26, O_HOLLOW),
	           "{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"version\":2.0,"
	           "\"query_num\":16,\"hidden_size\":1152,\"num_attention_heads\":9,"
	           "\"num_key_value_heads\":9,\"intermediate_size\":192,\"vocab_size\":1000,"
	           "\"num_hidden_layers\":2}",
	           WT_EUNSUPPORTED, "timm tower's width (version 2.0) 1152", "kv_proj");
	/* a resampler sized for another query_num */
	fx_refused(mcv2_model(26, O_HOLLOW), CFGT("\"version\":2.0,\"query_num\":64,"), WT_ESHAPE,
	           "resampler.pos_embed", "[64, 128]");
	/* missing and unknown tensors: pos_embed (a parameter here), attn_pool (an Identity in
	 * vLLM), a q_proj bias (MiniCPMAttention has none) */
	fx_refused(mcv2_model(26, O_HOLLOW | O_NOPOS), CFG, WT_ENOTFOUND, "resampler.pos_embed",
	           "");
	fx_refused(mcv2_model(26, O_HOLLOW | O_POOL), CFG, WT_EUNSUPPORTED, "vpm.attn_pool.latent",
	           "unknown tensor");
	fx_refused(mcv2_model(26, O_HOLLOW | O_BIAS), CFG, WT_EUNSUPPORTED, "q_proj.bias",
	           "unknown tensor");
	/* a 2.5-style tower under 2.0 */
	tm_model *m = mcv2_model(26, O_HOLLOW);
	tm_add2(m, VT "encoder.layers.0.mlp.fc1.weight", 64, 64);
	fx_refused(m, CFG, WT_EUNSUPPORTED, "vpm.encoder.layers.0.mlp.fc1.weight",
	           "unknown tensor");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mcv2_plan),     cmocka_unit_test(test_mcv2_quant),
	    cmocka_unit_test(test_mcv2_coverage), cmocka_unit_test(test_mcv2_defaults),
	    cmocka_unit_test(test_mcv2_errors),   cmocka_unit_test(test_mcv2_same_lm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
