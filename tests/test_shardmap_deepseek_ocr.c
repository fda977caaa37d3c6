/*
 * test_shardmap_deepseek_ocr.c — DeepSeek-OCR (DeepseekOCRForCausalLM, model_type
 * deepseek_vl_v2; docs/format.md section 2.7), cut as vLLM's deepseek_ocr.py / deepencoder.py /
 * clip.py / deepseek_v2.py load it: the language model byte for byte the deepseek (plain
 * attention: the release), deepseek_v2 (MLA) and deepseek_v3 (noaux_tc) families' ranks of the
 * same weights (TP 1 / 2 / 4, TP 2 x EP 2, int8-channel TP 2, fp8-channel TP 4) and by hand
 * at TP 2 / 4; the CLIP-L tower's fused qkv_proj by heads, out_proj / fc2 by columns, fc1 by
 * rows, quantized; SAM ViT-B, the projector, image_newline and view_seperator whole on every
 * rank and never quantized; coverage; the release's 2710 tensors planned (shapes only) at TP 2;
 * the loader's defaults and refusals, the planner's. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0xd50c7ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"
#include "test_shardmap_same_lm.h"

/* The LM: hid 128, H 8 = KV 8, 3 layers (0 dense, I 256; 1-2 MoE: 8 experts of Ie 32, 2 shared),
 * V 1000 (padded 1024); MHA d 16; MLA qk_nope 16, qk_rope 8, v_head 16, kv_lora_rank 32. CLIP:
 * width 32, 3 blocks, 4 heads, MLP 128, image 28 / patch 14 (5 positions). SAM: width 24, 2
 * blocks (block 1 global), 2 heads (12 wide), image 64 (grid 4: global rel_pos 7 rows, the
 * windowed 27), neck 256, net_2 / net_3 8 / 16. The projector: 32 + 16 = 48 in, 128 out. */
#define HID 128
#define HD  16
#define I   256
#define IE  32
#define NE  8
#define V   1000
#define VP  1024
#define VE  32
#define VI  128
#define SW  24
#define L0  "model.layers.0."
#define L1  "model.layers.1."
#define A1  L1 "self_attn."
#define VT  "model.vision_model."
#define VB  VT "transformer.layers.%d."
#define ST  "model.sam_model."

#define LM_BASE                                                                                    \
	"\"hidden_size\":128,\"intermediate_size\":256,\"moe_intermediate_size\":32,"              \
	"\"num_attention_heads\":8,\"num_key_value_heads\":8,\"vocab_size\":1000,"                 \
	"\"num_hidden_layers\":3,\"n_routed_experts\":8,\"n_shared_experts\":2,"                   \
	"\"num_experts_per_tok\":3,\"first_k_dense_replace\":1,\"moe_layer_freq\":1"
#define LM_KEYS LM_BASE ",\"tie_word_embeddings\":false"
#define MHA_KEYS                                                                                   \
	LM_KEYS ",\"q_lora_rank\":null,\"kv_lora_rank\":null,\"qk_nope_head_dim\":0,"              \
	        "\"qk_rope_head_dim\":0,\"v_head_dim\":0,\"use_mla\":false,\"topk_method\":"       \
	        "\"greedy\""
#define MLA_DIMS                                                                                   \
	",\"kv_lora_rank\":32,\"qk_nope_head_dim\":16,\"qk_rope_head_dim\":8,\"v_head_dim\":16"
#define V2_KEYS                                                                                    \
	LM_KEYS ",\"q_lora_rank\":null" MLA_DIMS ",\"use_mla\":true,\"topk_method\":\"greedy\""
#define V3_KEYS                                                                                    \
	LM_KEYS ",\"q_lora_rank\":64" MLA_DIMS ",\"use_mla\":true,\"topk_method\":\"noaux_tc\","   \
	        "\"scoring_func\":\"sigmoid\",\"n_group\":1,\"topk_group\":1"
#define CLIPL(layers)                                                                              \
	"\"clip-l-14-224\":{\"heads\":4,\"image_size\":28,\"layers\":" layers                      \
	",\"patch_size\":14,"                                                                      \
	"\"width\":32}"
#define SAMB(heads, layers, glob, ds)                                                              \
	"\"sam_vit_b\":{\"downsample_channels\":" ds ",\"global_attn_indexes\":" glob              \
	",\"heads\":" heads ",\"layers\":" layers ",\"width\":24}"
#define CLIPX CLIPL("3")
#define SAMX  SAMB("2", "2", "[1]", "[8,16]")
#define VISW(top, clip, sam)                                                                       \
	"\"vision_config\":{\"image_size\":64,\"mlp_ratio\":3.7362,\"model_type\":\"vision\"" top  \
	",\"width\":{" clip "," sam "}}"
#define VIS(top) VISW(",\"model_name\":\"deeplip_b_l\"" top, CLIPX, SAMX)
#define PROJ(extra)                                                                                \
	"\"projector_config\":{\"input_dim\":48,\"model_type\":\"mlp_projector\",\"n_embed\":128," \
	"\"projector_type\":\"linear\"" extra "}"
#define CFG_ALL(mt, top, arch, lm, vis, proj)                                                      \
	"{\"architectures\":[\"DeepseekOCRForCausalLM\"],\"model_type\":\"" mt "\"," top           \
	"\"global_view_pos\":\"head\",\"candidate_resolutions\":[[1024,1024]],"                    \
	"\"language_config\":{\"architectures\":[\"" arch "\"]," lm "}," vis "," proj "}"
#define CFG_VP(lm, vis, proj)                                                                      \
	CFG_ALL("deepseek_vl_v2", "\"tile_tag\":\"2D\",", "DeepseekV2ForCausalLM", lm, vis, proj)
#define CFG(lm) CFG_VP(lm, VIS(""), PROJ(""))

static const char *const cfg[] = {CFG(MHA_KEYS), CFG(V2_KEYS), CFG(V3_KEYS)};
/* dslm_lm_is's names: the LM's own, model.* and lm_head, with no prefix. */
#define DSLM_PRE ""
#include "test_shardmap_dslm.h"
static const char *const towers[] = {
    ST, VT, "model.projector.", "model.image_newline", "model.view_seperator", NULL};

/* A CLIP block's leaves, a SAM block's (rel_pos rows: rel, set per block), the 1-D / 2-D
 * tensors outside the blocks. */
static const tm_leaf clip_blk[] = {
    {"layer_norm1.weight", VE, 0, 0},
    {"layer_norm1.bias", VE, 0, 0},
    {"self_attn.qkv_proj.weight", 3 * VE, VE, 0},
    {"self_attn.qkv_proj.bias", 3 * VE, 0, 0},
    {"self_attn.out_proj.weight", VE, VE, 0},
    {"self_attn.out_proj.bias", VE, 0, 0},
    {"layer_norm2.weight", VE, 0, 0},
    {"layer_norm2.bias", VE, 0, 0},
    {"mlp.fc1.weight", VI, VE, 0},
    {"mlp.fc1.bias", VI, 0, 0},
    {"mlp.fc2.weight", VE, VI, 0},
    {"mlp.fc2.bias", VE, 0, 0},
};
static const tm_leaf sam_blk[] = {
    {"norm1.weight", SW, 0, 0},         {"norm1.bias", SW, 0, 0},
    {"attn.qkv.weight", 3 * SW, SW, 0}, {"attn.qkv.bias", 3 * SW, 0, 0},
    {"attn.proj.weight", SW, SW, 0},    {"attn.proj.bias", SW, 0, 0},
    {"attn.rel_pos_h", 0, 12, 0},       {"attn.rel_pos_w", 0, 12, 0},
    {"norm2.weight", SW, 0, 0},         {"norm2.bias", SW, 0, 0},
    {"mlp.lin1.weight", 4 * SW, SW, 0}, {"mlp.lin1.bias", 4 * SW, 0, 0},
    {"mlp.lin2.weight", SW, 4 * SW, 0}, {"mlp.lin2.bias", SW, 0, 0},
};
static const tm_leaf top[] = {
    {VT "embeddings.class_embedding", VE, 0, 0},
    {VT "embeddings.position_embedding.weight", 5, VE, 0},
    {VT "pre_layrnorm.weight", VE, 0, 0},
    {VT "pre_layrnorm.bias", VE, 0, 0},
    {ST "patch_embed.proj.bias", SW, 0, 0},
    {ST "neck.1.weight", 256, 0, 0},
    {ST "neck.1.bias", 256, 0, 0},
    {ST "neck.3.weight", 256, 0, 0},
    {ST "neck.3.bias", 256, 0, 0},
    {"model.projector.layers.weight", HID, 48, 0},
    {"model.projector.layers.bias", HID, 0, 0},
    {"model.image_newline", HID, 0, 0},
    {"model.view_seperator", HID, 0, 0},
};
static const char *const convs[] = {VT "embeddings.patch_embedding.weight",
                                    ST "patch_embed.proj.weight",
                                    ST "pos_embed",
                                    ST "neck.0.weight",
                                    ST "neck.2.weight",
                                    ST "net_2.weight",
                                    ST "net_3.weight"};

/* The towers of blocks CLIP / SAM blocks (rel_pos of the global block 1: 7 rows). */
static void add_towers(tm_model *m, int clip_blocks, int sam_blocks)
{
	char b[200];
	for (int i = 0; i < clip_blocks; i++)
		for (size_t j = 0; j < TM_NLEAVES(clip_blk); j++) {
			snprintf(b, sizeof(b), VB "%s", i, clip_blk[j].leaf);
			tm_add2(m, b, clip_blk[j].a, clip_blk[j].b);
		}
	for (int i = 0; i < sam_blocks; i++)
		for (size_t j = 0; j < TM_NLEAVES(sam_blk); j++) {
			snprintf(b, sizeof(b), ST "blocks.%d.%s", i, sam_blk[j].leaf);
			tm_add2(m, b,
			        sam_blk[j].a > 0 ? sam_blk[j].a
			        : i == 1         ? 7
			                         : 27,
			        sam_blk[j].b);
		}
	for (size_t j = 0; j < TM_NLEAVES(top); j++)
		tm_add2(m, top[j].leaf, top[j].a, top[j].b);
	add_4d(m, convs[0], VE, 3, 14, 14);
	add_4d(m, convs[1], SW, 3, 16, 16);
	add_4d(m, convs[2], 1, 4, 4, SW);
	add_4d(m, convs[3], 256, SW, 1, 1);
	add_4d(m, convs[4], 256, 256, 3, 3);
	add_4d(m, convs[5], 8, 256, 3, 3);
	add_4d(m, convs[6], 16, 8, 3, 3);
}

/* The OCR model: kind k's LM and both towers; skip (NULL: none) left out. */
static tm_model *ocr_model(int k, const char *skip)
{
	tm_model *m = lm_model(k);
	add_towers(m, 3, 2);
	if (skip)
		tm_remove(m, skip);
	return m;
}

/* Every SAM / projector / separator tensor and CLIP's outside its blocks whole on rank r, the
 * source dtype (BF16). */
static void whole_on(const fx *f, uint32_t r)
{
	char b[200];
	for (int i = 0; i < 2; i++)
		for (size_t j = 0; j < TM_NLEAVES(sam_blk); j++) {
			snprintf(b, sizeof(b), ST "blocks.%d.%s", i, sam_blk[j].leaf);
			repl(f, r, b);
			assert_int_equal(info(f, r, b)->dtype, WT_BF16);
		}
	for (size_t j = 0; j < TM_NLEAVES(top); j++) {
		repl(f, r, top[j].leaf);
		assert_int_equal(info(f, r, top[j].leaf)->dtype, WT_BF16);
	}
	for (size_t j = 0; j < sizeof(convs) / sizeof(convs[0]); j++) {
		repl(f, r, convs[j]);
		assert_int_equal(info(f, r, convs[j])->ndim, 4);
		assert_int_equal(info(f, r, convs[j])->dtype, WT_BF16);
	}
}

/* Rank r of T's CLIP block blk by hand: qkv_proj [q_r; k_r; v_r] of the fused rows (weight and
 * bias), out_proj and fc2 by columns, fc1 by rows (and its bias), the rest whole. */
static void clip_block_is(const fx *f, uint32_t r, uint32_t T, int blk)
{
	int64_t vl = VE / T, il = VI / T;
	char n[200];
	for (int w = 0; w < 2; w++) {
		snprintf(n, sizeof(n), VB "self_attn.qkv_proj.%s", blk, w ? "bias" : "weight");
		shp(f, r, n, w ? 1 : 2, 3 * vl, w ? 0 : VE, 0);
		for (int q = 0; q < 3; q++)
			rows_at(f, r, n, q * vl, n, q * VE + r * vl, vl);
	}
	snprintf(n, sizeof(n), VB "self_attn.out_proj.weight", blk);
	cols_of(f, r, T, n, n, VE, VE);
	snprintf(n, sizeof(n), VB "mlp.fc2.weight", blk);
	cols_of(f, r, T, n, n, VE, VI);
	snprintf(n, sizeof(n), VB "mlp.fc1.weight", blk);
	shp(f, r, n, 2, il, VE, 0);
	rows_at(f, r, n, 0, n, r * il, il);
	snprintf(n, sizeof(n), VB "mlp.fc1.bias", blk);
	rows_at(f, r, n, 0, n, r * il, il);
	static const char *const rep[] = {"layer_norm1.weight", "layer_norm2.bias",
	                                  "self_attn.out_proj.bias", "mlp.fc2.bias"};
	for (size_t k = 0; k < sizeof(rep) / sizeof(rep[0]); k++) {
		snprintf(n, sizeof(n), VB "%s", blk, rep[k]);
		repl(f, r, n);
	}
}

/* TP 2 and 4 by hand (the plain-attention and MLA LMs): the towers, the LM's attention, dense
 * MLP, shared experts, experts, router and vocabulary rows; counts; nothing skipped. */
static void test_dsocr_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2)
		for (int k = K_MHA; k <= K_V2; k++) {
			fx f;
			fx_open(&f, ocr_model(k, NULL), cfg[k], T, 1, 0, true);
			assert_string_equal(shardmap_family(f.p), "deepseek_ocr");
			for (uint32_t r = 0; r < T; r++) {
				whole_on(&f, r);
				for (int blk = 0; blk < 3; blk++)
					clip_block_is(&f, r, T, blk);
				dslm_lm_is(&f, r, T, k);
				/* the LM; CLIP 3 x 12 + 5, SAM 2 x 14 + 11, projector 2,
				 * separators 2 */
				assert_int_equal(shardmap_rank_n_tensors(f.p, r),
				                 dslm_lm_tensors(k) + 36 + 5 + 28 + 11 + 4);
			}
			assert_false(shardmap_tied_lm_head(f.p));
			assert_int_equal(shardmap_n_skipped(f.p), 0);
			fx_close(&f);
		}
}

/* Every rank's LM outputs byte for byte the text family's of the same weights in layout l. */
static void same_lm_at(int k, const wt_layout *l)
{
	fx a, b;
	fx_open_l(&a, ocr_model(k, NULL), cfg[k], l, true);
	fx_open_l(&b, lm_model(k), text_cfg[k], l, true);
	assert_string_equal(shardmap_family(b.p), text_fam[k]);
	for (uint32_t r = 0; r < l->tp_size * l->ep_size; r++)
		fx_same_rank_but(&a, &b, r, towers, text_fam[k]);
	fx_close(&a);
	fx_close(&b);
}

/* TP 1 / 2 / 4, TP 2 x EP 2, int8-channel TP 2, fp8-channel TP 4 (CLIP's 4 heads: TP 8
 * refused, plan_errors); each language model. */
static void test_dsocr_same_lm(void **state)
{
	(void)state;
	static const struct {
		uint32_t tp, ep;
		wt_quant q;
	} lays[] = {{1, 1, WT_QUANT_NONE},         {2, 1, WT_QUANT_NONE},
	            {4, 1, WT_QUANT_NONE},         {2, 2, WT_QUANT_NONE},
	            {2, 1, WT_QUANT_INT8_CHANNEL}, {4, 1, WT_QUANT_FP8_CHANNEL}};
	for (size_t j = 0; j < sizeof(lays) / sizeof(lays[0]); j++)
		for (int k = K_MHA; k <= K_V3; k++) {
			wt_layout l;
			wt_layout_init(&l);
			l.tp_size = lays[j].tp;
			l.ep_size = lays[j].ep;
			l.quant = lays[j].q;
			same_lm_at(k, &l);
		}
}

/* int8-channel TP 2 and fp8-channel TP 4: the LM's and CLIP's Linears quantized (rank 1's CLIP
 * out_proj codes by columns), SAM, the projector, the separators, norms, router and
 * embeddings kept BF16. */
static void test_dsocr_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {ST "blocks.0.attn.qkv.weight",
	                                   ST "blocks.1.mlp.lin1.weight",
	                                   ST "blocks.1.attn.proj.weight",
	                                   ST "net_3.weight",
	                                   "model.projector.layers.weight",
	                                   "model.image_newline",
	                                   VT "embeddings.patch_embedding.weight",
	                                   L1 "mlp.gate.weight",
	                                   "model.embed_tokens.weight",
	                                   "lm_head.weight"};
	static const char *const q[] = {
	    A1 "qkv_proj.weight",
	    A1 "o_proj.weight",
	    L0 "mlp.gate_up_proj.weight",
	    L1 "mlp.experts.w13_weight",
	    VT "transformer.layers.0.self_attn.qkv_proj.weight",
	    VT "transformer.layers.2.self_attn.out_proj.weight",
	    VT "transformer.layers.1.mlp.fc1.weight",
	    VT "transformer.layers.1.mlp.fc2.weight",
	};
	fx f;
	fx_open_quant(&f, ocr_model(K_MHA, NULL), cfg[K_MHA], 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(keep), FX_N(q));
	fx_cols_int8_is(&f, 1, 2, VT "transformer.layers.2.self_attn.out_proj.weight", VE, VE);
	for (uint32_t r = 0; r < 2; r++)
		whole_on(&f, r);
	fx_close(&f);
	fx_open_quant(&f, ocr_model(K_MHA, NULL), cfg[K_MHA], 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(keep), FX_N(q));
	for (uint32_t r = 0; r < 4; r++)
		whole_on(&f, r);
	fx_close(&f);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 and TP 2 x EP 2, each LM. */
static void test_dsocr_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {2, 2}};
	for (int k = K_MHA; k <= K_V3; k++)
		coverage(ocr_model(k, NULL), cfg[k], 8, lays, 4);
}

/* deepseek-ai/DeepSeek-OCR's config.json (its language_config without model_type, use_mla false,
 * qk sizes and v_head_dim 0; the top level's copies of the language model's keys). */
#define RELEASE_LM(nl)                                                                             \
	"\"bos_token_id\":0,\"eos_token_id\":1,\"first_k_dense_replace\":1,\"hidden_size\":1280,"  \
	"\"intermediate_size\":6848,\"kv_lora_rank\":null,\"lm_head\":true,"                       \
	"\"max_position_embeddings\":8192,\"moe_intermediate_size\":896,\"n_group\":1,"            \
	"\"n_routed_experts\":64,\"n_shared_experts\":2,\"num_attention_heads\":10,"               \
	"\"num_experts_per_tok\":6,\"num_hidden_layers\":" nl ",\"num_key_value_heads\":10,"       \
	"\"q_lora_rank\":null,\"qk_nope_head_dim\":0,\"qk_rope_head_dim\":0,\"rm_head\":false,"    \
	"\"topk_group\":1,\"topk_method\":\"greedy\",\"use_mla\":false,\"v_head_dim\":0,"          \
	"\"vocab_size\":129280"
#define RELEASE_VIS(width)                                                                         \
	"\"vision_config\":{\"image_size\":1024,\"mlp_ratio\":3.7362,\"model_name\":"              \
	"\"deeplip_b_l\",\"model_type\":\"vision\"" width "}"
#define RELEASE_WIDTH                                                                              \
	",\"width\":{\"clip-l-14-224\":{\"heads\":16,\"image_size\":224,\"layers\":24,"            \
	"\"patch_size\":14,\"width\":1024},\"sam_vit_b\":{\"downsample_channels\":[512,1024],"     \
	"\"global_attn_indexes\":[2,5,8,11],\"heads\":12,\"layers\":12,\"width\":768}}"
#define RELEASE(nl, width)                                                                         \
	"{\"_name_or_path\":\"deepseek-ai/DeepSeek-OCR\",\"candidate_resolutions\":[[1024,1024]]," \
	"\"global_view_pos\":\"head\",\"architectures\":[\"DeepseekOCRForCausalLM\"],"             \
	"\"auto_map\":{\"AutoConfig\":\"modeling_deepseekocr.DeepseekOCRConfig\",\"AutoModel\":"   \
	"\"modeling_deepseekocr.DeepseekOCRForCausalLM\"},\"language_config\":{\"architectures\":" \
	"[\"DeepseekV2ForCausalLM\"],\"torch_dtype\":\"bfloat16\"," RELEASE_LM(                    \
	    nl) "},"                                                                               \
	        "\"model_type\":\"deepseek_vl_v2\",\"projector_config\":{\"input_dim\":2048,"      \
	        "\"model_type\":"                                                                  \
	        "\"mlp_projector\",\"n_embed\":1280,\"projector_type\":\"linear\"},\"tile_tag\":"  \
	        "\"2D\","                                                                          \
	        "\"torch_dtype\":\"bfloat16\",\"transformers_version\":\"4.46.3\"," RELEASE_VIS(   \
	            width) "," RELEASE_LM(nl) "}"

/* The release's tensors, shapes only (tm_model.hollow), the language model cut to its first two
 * layers (layer 0 dense, 1 MoE: the test builder holds 800 tensors; the release's 12 hold 2710):
 * 690 tensors. */
static tm_model *release_model(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	m->hollow = true;
	tm_top(m, 129280, 1280, 1);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 10, 10, 128, 1280, 0, 0);
		if (i == 0) {
			tm_mlp(m, i, "mlp.", 6848, 1280);
			continue;
		}
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add2(m, b, 64, 1280);
		tm_experts(m, i, "mlp.experts.", 64, 896, 1280, "gate_proj", "up_proj",
		           "down_proj");
		tm_mlp(m, i, "mlp.shared_experts.", 1792, 1280);
	}
	const tm_leaf cb[] = {
	    {"layer_norm1.weight", 1024, 0, 0},
	    {"layer_norm1.bias", 1024, 0, 0},
	    {"self_attn.qkv_proj.weight", 3072, 1024, 0},
	    {"self_attn.qkv_proj.bias", 3072, 0, 0},
	    {"self_attn.out_proj.weight", 1024, 1024, 0},
	    {"self_attn.out_proj.bias", 1024, 0, 0},
	    {"layer_norm2.weight", 1024, 0, 0},
	    {"layer_norm2.bias", 1024, 0, 0},
	    {"mlp.fc1.weight", 4096, 1024, 0},
	    {"mlp.fc1.bias", 4096, 0, 0},
	    {"mlp.fc2.weight", 1024, 4096, 0},
	    {"mlp.fc2.bias", 1024, 0, 0},
	};
	tm_layers(m, VB, 24, cb, TM_NLEAVES(cb), 0);
	const tm_leaf sb[] = {
	    {"norm1.weight", 768, 0, 0},       {"norm1.bias", 768, 0, 0},
	    {"attn.qkv.weight", 2304, 768, 0}, {"attn.qkv.bias", 2304, 0, 0},
	    {"attn.proj.weight", 768, 768, 0}, {"attn.proj.bias", 768, 0, 0},
	    {"norm2.weight", 768, 0, 0},       {"norm2.bias", 768, 0, 0},
	    {"mlp.lin1.weight", 3072, 768, 0}, {"mlp.lin1.bias", 3072, 0, 0},
	    {"mlp.lin2.weight", 768, 3072, 0}, {"mlp.lin2.bias", 768, 0, 0},
	};
	tm_layers(m, ST "blocks.%d.", 12, sb, TM_NLEAVES(sb), 0);
	for (int i = 0; i < 12; i++) {
		int64_t rel = i % 3 == 2 ? 127 : 27; /* global attention in blocks 2, 5, 8, 11 */
		snprintf(b, sizeof(b), ST "blocks.%d.attn.rel_pos_h", i);
		tm_add2(m, b, rel, 64);
		snprintf(b, sizeof(b), ST "blocks.%d.attn.rel_pos_w", i);
		tm_add2(m, b, rel, 64);
	}
	const tm_leaf t[] = {
	    {VT "embeddings.class_embedding", 1024, 0, 0},
	    {VT "embeddings.position_embedding.weight", 257, 1024, 0},
	    {VT "pre_layrnorm.weight", 1024, 0, 0},
	    {VT "pre_layrnorm.bias", 1024, 0, 0},
	    {ST "patch_embed.proj.bias", 768, 0, 0},
	    {ST "neck.1.weight", 256, 0, 0},
	    {ST "neck.1.bias", 256, 0, 0},
	    {ST "neck.3.weight", 256, 0, 0},
	    {ST "neck.3.bias", 256, 0, 0},
	    {"model.projector.layers.weight", 1280, 2048, 0},
	    {"model.projector.layers.bias", 1280, 0, 0},
	    {"model.image_newline", 1280, 0, 0},
	    {"model.view_seperator", 1280, 0, 0},
	};
	for (size_t j = 0; j < TM_NLEAVES(t); j++)
		tm_add2(m, t[j].leaf, t[j].a, t[j].b);
	add_4d(m, convs[0], 1024, 3, 14, 14);
	add_4d(m, convs[1], 768, 3, 16, 16);
	add_4d(m, convs[2], 1, 64, 64, 768);
	add_4d(m, convs[3], 256, 768, 1, 1);
	add_4d(m, convs[4], 256, 256, 3, 3);
	add_4d(m, convs[5], 512, 256, 3, 3);
	add_4d(m, convs[6], 1024, 512, 3, 3);
	return m;
}

/* The release (shapes only, two LM layers) planned at TP 2: 494 tensors a rank (the LM 18, CLIP
 * 293, SAM 179, the projector and separators 4), CLIP's qkv_proj / fc1 rows and out_proj / fc2
 * columns halved, SAM's and the projector's whole, the LM's attention over 5 of the 10 heads;
 * TP 4 refused by the 10 heads. */
static void test_dsocr_release(void **state)
{
	(void)state;
	tm_model *m = release_model();
	assert_int_equal(m->n, 690);
	tm_free(m);
	fx f;
	fx_open(&f, release_model(), RELEASE("2", RELEASE_WIDTH), 2, 1, 0, false);
	assert_string_equal(shardmap_family(f.p), "deepseek_ocr");
	for (uint32_t r = 0; r < 2; r++) {
		assert_int_equal(shardmap_rank_n_tensors(f.p, r), 494);
		shp(&f, r, VT "transformer.layers.23.self_attn.qkv_proj.weight", 2, 1536, 1024, 0);
		shp(&f, r, VT "transformer.layers.23.self_attn.qkv_proj.bias", 1, 1536, 0, 0);
		shp(&f, r, VT "transformer.layers.0.self_attn.out_proj.weight", 2, 1024, 512, 0);
		shp(&f, r, VT "transformer.layers.0.mlp.fc1.weight", 2, 2048, 1024, 0);
		shp(&f, r, VT "transformer.layers.0.mlp.fc2.weight", 2, 1024, 2048, 0);
		shp(&f, r, VT "embeddings.position_embedding.weight", 2, 257, 1024, 0);
		shp(&f, r, ST "blocks.11.attn.rel_pos_h", 2, 127, 64, 0);
		shp(&f, r, ST "blocks.10.attn.rel_pos_w", 2, 27, 64, 0);
		shp(&f, r, ST "blocks.0.attn.qkv.weight", 2, 2304, 768, 0);
		shp(&f, r, "model.projector.layers.weight", 2, 1280, 2048, 0);
		shp(&f, r, L1 "self_attn.qkv_proj.weight", 2, 3 * 640, 1280, 0);
		shp(&f, r, L1 "mlp.experts.w13_weight", 3, 64, 896, 1280);
		assert_int_equal(info(&f, r, ST "net_3.weight")->shape[0], 1024);
	}
	assert_false(shardmap_tied_lm_head(f.p));
	fx_close(&f);
	fx_refused_tp(release_model(), RELEASE("2", RELEASE_WIDTH), 4, WT_ELAYOUT, "tp_size 4",
	              "10");
}

/* The loader: the release's sizes from vision_config.width, vLLM's towers when it has none;
 * the language model's table from its sizes and topk_method; the tie from language_config. */
static void test_dsocr_config(void **state)
{
	(void)state;
	static const char *const cs[] = {RELEASE("12", RELEASE_WIDTH), RELEASE("12", "")};
	ckpt_config c;
	for (size_t k = 0; k < 2; k++) {
		tm_parse(cs[k], &c);
		assert_string_equal(c.lm_model_type, "deepseek");
		assert_true(c.has_vision);
		assert_int_equal(c.hidden_size, 1280);
		assert_int_equal(c.v_hidden_size, 1024);
		assert_int_equal(c.v_num_layers, 24);
		assert_int_equal(c.v_num_attn_heads, 16);
		assert_int_equal(c.v_intermediate_size, 4096);
		assert_int_equal(c.v_num_pos, 257);
		assert_int_equal(c.ocr_sam_width, 768);
		assert_int_equal(c.ocr_sam_layers, 12);
		assert_int_equal(c.ocr_sam_heads, 12);
		assert_int_equal(c.ocr_sam_grid, 64);
		assert_true(c.ocr_sam_global == ((1u << 2) | (1u << 5) | (1u << 8) | (1u << 11)));
		assert_int_equal(c.ocr_sam_ds[0], 512);
		assert_int_equal(c.ocr_sam_ds[1], 1024);
		assert_int_equal(c.v_proj_in_dim, 2048);
		assert_false(c.tie_given && c.tie_word_embeddings);
		ckpt_config_clear(&c);
	}
	static const char *const want[] = {"deepseek", "deepseek_v2", "deepseek_v3"};
	for (int k = K_MHA; k <= K_V3; k++) {
		tm_parse(cfg[k], &c);
		assert_string_equal(c.lm_model_type, want[k]);
		assert_int_equal(c.v_num_pos, 5);
		assert_int_equal(c.ocr_sam_grid, 4);
		assert_true(c.ocr_sam_global == 2);
		ckpt_config_clear(&c);
	}
	/* tied by language_config: the head is skipped */
	fx f;
	fx_open(&f, ocr_model(K_MHA, NULL),
	        CFG_ALL("deepseek_vl_v2", "\"tile_tag\":\"2D\",\"tie_word_embeddings\":false,",
	                "DeepseekV2ForCausalLM",
	                LM_BASE ",\"tie_word_embeddings\":true,\"qk_nope_head_dim\":0,"
	                        "\"qk_rope_head_dim\":0",
	                VIS(""), PROJ("")),
	        2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p) && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
}

#define VIS_W(width) "\"vision_config\":{\"model_name\":\"deeplip_b_l\",\"width\":" width "}"

/* The loader's refusals, each naming its key and the fix. */
static void test_dsocr_config_errors(void **state)
{
	(void)state;
	static const struct {
		const char *cfg;
		int code;
		const char *a, *b;
	} cs[] = {
	    {"{\"architectures\":[\"DeepseekOCRForCausalLM\"],\"model_type\":\"deepseek_vl_v2\","
	     "\"tile_tag\":\"2D\"," VIS("") "," PROJ("") "}",
	     WT_ECORRUPT, "language_config", "missing"},
	    {CFG_ALL("deepseek_vl_v2", "", "DeepseekV2ForCausalLM", MHA_KEYS, VIS(""), PROJ("")),
	     WT_EUNSUPPORTED, "tile_tag", "\"2D\""},
	    {CFG_VP(MHA_KEYS, VISW("", CLIPX, SAMX), PROJ("")), WT_EUNSUPPORTED,
	     "vision_config.model_name", "deeplip_b_l"},
	    {CFG_VP(MHA_KEYS, VIS_W("1024"), PROJ("")), WT_ECORRUPT, "vision_config.width",
	     "DeepSeek-VL2"},
	    {CFG_VP(MHA_KEYS, VIS_W("{" SAMB("5", "2", "[1]", "[8,16]") "}"), PROJ("")),
	     WT_ECORRUPT, "sam_vit_b.heads 5", "divide"},
	    {CFG_VP(MHA_KEYS,
	            VISW(",\"model_name\":\"deeplip_b_l\"", CLIPX, SAMB("2", "4", "[1]", "[8,16]")),
	            PROJ("")),
	     WT_EUNSUPPORTED, "sam_vit_b.layers 4", "clip-l-14-224.layers 3"},
	    {CFG_VP(MHA_KEYS, VISW(",\"model_name\":\"deeplip_b_l\"", CLIPL("0"), SAMX), PROJ("")),
	     WT_ECORRUPT, "clip-l-14-224", "layers"},
	    {CFG_VP(MHA_KEYS,
	            VISW(",\"model_name\":\"deeplip_b_l\"", CLIPX, SAMB("2", "2", "[2]", "[8,16]")),
	            PROJ("")),
	     WT_ECORRUPT, "global_attn_indexes[0]", "below layers 2"},
	    {CFG_VP(MHA_KEYS,
	            VISW(",\"model_name\":\"deeplip_b_l\"", CLIPX, SAMB("2", "2", "[1]", "[8]")),
	            PROJ("")),
	     WT_ECORRUPT, "downsample_channels", "[512, 1024]"},
	    {CFG_VP(MHA_KEYS, VIS(""), "\"projector_config\":{\"input_dim\":48,\"n_embed\":128}"),
	     WT_EUNSUPPORTED, "projector_config.projector_type", "linear"},
	    {CFG_VP(MHA_KEYS, VIS(""), PROJ(",\"token_pooling\":true")), WT_EUNSUPPORTED,
	     "projector_config.token_pooling", "asserts"},
	    {CFG_VP(MHA_KEYS, VIS(""),
	            "\"projector_config\":{\"input_dim\":64,\"n_embed\":128,\"projector_type\":"
	            "\"linear\"}"),
	     WT_ECORRUPT, "input_dim 64", "net_3's channels 48"},
	    {CFG_VP(MHA_KEYS, VIS(""),
	            "\"projector_config\":{\"input_dim\":48,\"projector_type\":\"linear\"}"),
	     WT_ECORRUPT, "n_embed 2048", "language_config.hidden_size 128"},
	    {CFG_VP(MHA_KEYS, "\"vision_config\":[]", PROJ("")), WT_ECORRUPT, "vision_config",
	     "not an object"},
	    {CFG_ALL("deepseek_vl_v2", "\"tile_tag\":\"2D\",", "LlamaForCausalLM", MHA_KEYS,
	             VIS(""), PROJ("")),
	     WT_EUNSUPPORTED, "language_config.architectures[0] is LlamaForCausalLM",
	     "DeepseekV2ForCausalLM"},
	    {CFG(LM_KEYS ",\"qk_nope_head_dim\":0,\"qk_rope_head_dim\":0,\"topk_method\":"
	                 "\"noaux_tc\""),
	     WT_EUNSUPPORTED, "noaux_tc", "plain attention"},
	    {CFG(LM_KEYS ",\"qk_nope_head_dim\":0,\"qk_rope_head_dim\":0,\"topk_method\":3"),
	     WT_ECORRUPT, "language_config.topk_method", "not a string"},
	};
	for (size_t k = 0; k < sizeof(cs) / sizeof(cs[0]); k++)
		fx_refused(ocr_model(K_MHA, NULL), cs[k].cfg, cs[k].code, cs[k].a, cs[k].b);
	fx_refused(ocr_model(K_MHA, NULL),
	           "{\"architectures\":[\"DeepseekOCRForCausalLM\"],\"model_type\":\"deepseek_vl_"
	           "v2\",\"tile_tag\":\"2D\",\"language_config\":{" MHA_KEYS
	           "}," VIS("") "," PROJ("") "}",
	           WT_EUNSUPPORTED, "language_config.architectures[0] is missing", "");
}

/* The planner's refusals: a missing SAM / CLIP / projector / separator tensor, a SAM block past
 * its count, wrong SAM shapes (a global block's rel_pos, net_3), the projector's columns, a
 * CLIP block past its count, the architecture under another model_type, an MLA config without
 * its sizes, the other attention's tensors, tp past CLIP's heads. */
static void test_dsocr_plan_errors(void **state)
{
	(void)state;
	static const char *const gone[] = {ST "blocks.1.attn.rel_pos_h",
	                                   ST "net_2.weight",
	                                   VT "transformer.layers.2.mlp.fc2.bias",
	                                   "model.projector.layers.bias",
	                                   "model.view_seperator",
	                                   ST "pos_embed"};
	for (size_t k = 0; k < sizeof(gone) / sizeof(gone[0]); k++)
		fx_refused(ocr_model(K_MHA, gone[k]), cfg[K_MHA], WT_ENOTFOUND, gone[k], "");
	tm_model *m = ocr_model(K_MHA, NULL);
	tm_add2(m, ST "blocks.2.norm1.weight", SW, 0);
	fx_refused(m, cfg[K_MHA], WT_ESHAPE, "SAM block 2", "sam_vit_b.layers is 2");
	m = ocr_model(K_MHA, ST "blocks.1.attn.rel_pos_h");
	tm_add2(m, ST "blocks.1.attn.rel_pos_h", 27, 12);
	fx_refused(m, cfg[K_MHA], WT_ESHAPE, ST "blocks.1.attn.rel_pos_h", "[7, 12]");
	m = ocr_model(K_MHA, ST "net_3.weight");
	add_4d(m, ST "net_3.weight", 16, 16, 3, 3);
	fx_refused(m, cfg[K_MHA], WT_ESHAPE, ST "net_3.weight", "[16, 8, ...]");
	m = ocr_model(K_MHA, "model.projector.layers.weight");
	tm_add2(m, "model.projector.layers.weight", HID, 40);
	fx_refused(m, cfg[K_MHA], WT_ESHAPE, "model.projector.layers.weight", "input_dim is 48");
	m = ocr_model(K_MHA, NULL);
	tm_add2(m, VT "transformer.layers.3.layer_norm1.weight", VE, 0);
	fx_refused(m, cfg[K_MHA], WT_ESHAPE, "vision block 3", "clip-l-14-224.layers is 3");
	fx_refused(ocr_model(K_MHA, NULL),
	           "{\"architectures\":[\"DeepseekOCRForCausalLM\"],\"model_type\":\"deepseek_"
	           "v2\"," LM_KEYS ",\"qk_nope_head_dim\":0,\"qk_rope_head_dim\":0}",
	           WT_ECORRUPT, "DeepseekOCRForCausalLM", "deepseek_vl_v2");
	fx_refused(ocr_model(K_V2, NULL),
	           CFG(LM_KEYS ",\"qk_nope_head_dim\":16,\"qk_rope_head_dim\":8,\"v_head_dim\":16"),
	           WT_ECORRUPT, "kv_lora_rank", "use_mla true");
	fx_refused(ocr_model(K_MHA, NULL), cfg[K_V2], WT_EUNSUPPORTED, "self_attn.k_proj.weight",
	           "unknown");
	fx_refused_tp(ocr_model(K_MHA, NULL), cfg[K_MHA], 8, WT_ELAYOUT, "tp_size 8",
	              "clip-l-14-224.heads");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dsocr_slices),        cmocka_unit_test(test_dsocr_same_lm),
	    cmocka_unit_test(test_dsocr_quant),         cmocka_unit_test(test_dsocr_coverage),
	    cmocka_unit_test(test_dsocr_release),       cmocka_unit_test(test_dsocr_config),
	    cmocka_unit_test(test_dsocr_config_errors), cmocka_unit_test(test_dsocr_plan_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
