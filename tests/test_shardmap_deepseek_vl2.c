/*
 * test_shardmap_deepseek_vl2.c — DeepSeek-VL2 (DeepseekVLV2ForCausalLM, model_type
 * deepseek_vl_v2; docs/format.md section 2.7), cut as vLLM's deepseek_vl2.py loads it: the
 * language model under language. byte for byte the deepseek (use_mla false: deepseek-vl2-tiny's
 * plain attention), deepseek_v2 (MLA) and deepseek_v3 (topk_method noaux_tc) families' ranks of
 * the same weights (TP 1 / 2 / 4 / 8, TP 2 x EP 2, int8-channel TP 2, fp8-channel TP 4) and by
 * hand at TP 2 / 4; timm's SigLIP tower with its MAP head, the projector, image_newline and
 * view_seperator whole on every rank and never quantized; coverage; the loader's pick of the
 * language model, the config classes' defaults and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0xd5e12ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* The LM: hid 128, H 8 = KV 8, 3 layers (0 dense, I 256; 1-2 MoE: 8 experts of Ie 32, 2 shared),
 * V 1000 (padded 1024). MHA: d 16. MLA: qk_nope 16, qk_rope 8, v_head 16, kv_lora_rank 32
 * (q_lora_rank 64 for V3, none for V2). The tower: width 48, 2 blocks, MLP int(48 x 3.7362) =
 * 179, image 42 / patch 14 (9 positions). The projector: 48 x 2^2 = 192 in, 128 x 2 = 256
 * hidden, 128 out. */
#define HID 128
#define HD  16
#define I   256
#define IE  32
#define NE  8
#define V   1000
#define VP  1024
#define VE  48
#define VI  179
#define VM  192
#define VPI 256
#define LM  "language."
#define L0  LM "model.layers.0."
#define L1  LM "model.layers.1."
#define A1  L1 "self_attn."
#define VB0 "vision.blocks.0."
#define AP  "vision.attn_pool."

#define LM_BASE                                                                                    \
	"\"hidden_size\":128,\"intermediate_size\":256,\"moe_intermediate_size\":32,"              \
	"\"num_attention_heads\":8,\"num_key_value_heads\":8,\"vocab_size\":1000,"                 \
	"\"num_hidden_layers\":3,\"n_routed_experts\":8,\"n_shared_experts\":2,"                   \
	"\"num_experts_per_tok\":3,\"first_k_dense_replace\":1,\"moe_layer_freq\":1"
#define LM_KEYS LM_BASE ",\"tie_word_embeddings\":false"
#define MHA_KEYS                                                                                   \
	LM_KEYS ",\"q_lora_rank\":null,\"qk_nope_head_dim\":0,\"qk_rope_head_dim\":0,"             \
	        "\"v_head_dim\":0,\"use_mla\":false,\"topk_method\":\"greedy\""
#define MLA_DIMS                                                                                   \
	",\"kv_lora_rank\":32,\"qk_nope_head_dim\":16,\"qk_rope_head_dim\":8,\"v_head_dim\":16"
#define V2_KEYS                                                                                    \
	LM_KEYS ",\"q_lora_rank\":null" MLA_DIMS ",\"use_mla\":true,\"topk_method\":\"greedy\""
#define V3_KEYS                                                                                    \
	LM_KEYS ",\"q_lora_rank\":64" MLA_DIMS ",\"use_mla\":true,\"topk_method\":\"noaux_tc\","   \
	        "\"scoring_func\":\"sigmoid\",\"n_group\":1,\"topk_group\":1"
#define VISX(width, layers, extra)                                                                 \
	"\"vision_config\":{\"model_name\":\"siglip_so400m_patch14_384\",\"model_type\":"          \
	"\"vision\",\"width\":" width ",\"layers\":" layers ",\"heads\":4,\"mlp_ratio\":3.7362,"   \
	"\"patch_size\":14,\"image_size\":42" extra "}"
#define VIS(extra) VISX("48", "2", extra)
#define PROJX(extra)                                                                               \
	"\"projector_config\":{\"model_type\":\"mlp_projector\",\"projector_type\":"               \
	"\"downsample_mlp_gelu\",\"input_dim\":48,\"n_embed\":128,\"mlp_ratio\":2" extra "}"
#define PROJ(extra) PROJX(",\"downsample_ratio\":2,\"depth\":2" extra)
#define CFG_ALL(mt, top, lm, vis, proj)                                                            \
	"{\"architectures\":[\"DeepseekVLV2ForCausalLM\"],\"model_type\":\"" mt "\"," top          \
	"\"global_view_pos\":\"head\",\"candidate_resolutions\":[[384,384]],"                      \
	"\"language_config\":{\"architectures\":[\"DeepseekV2ForCausalLM\"],\"model_type\":"       \
	"\"deepseek_v2\"," lm "}," vis "," proj "}"
#define CFG_VP(lm, vis, proj) CFG_ALL("deepseek_vl_v2", "\"tile_tag\":\"2D\",", lm, vis, proj)
#define CFG(lm)               CFG_VP(lm, VIS(""), PROJ(""))

static const char *const cfg[] = {CFG(MHA_KEYS), CFG(V2_KEYS), CFG(V3_KEYS)};
/* dslm_lm_is's names: the LM's model.* and lm_head under language. */
#define DSLM_PRE LM
#include "test_shardmap_dslm.h"
/* A tower block's leaves. */
static const tm_leaf blk[] = {
    {"norm1.weight", VE, 0, 0},         {"norm1.bias", VE, 0, 0},
    {"attn.qkv.weight", 3 * VE, VE, 0}, {"attn.qkv.bias", 3 * VE, 0, 0},
    {"attn.proj.weight", VE, VE, 0},    {"attn.proj.bias", VE, 0, 0},
    {"norm2.weight", VE, 0, 0},         {"norm2.bias", VE, 0, 0},
    {"mlp.fc1.weight", VI, VE, 0},      {"mlp.fc1.bias", VI, 0, 0},
    {"mlp.fc2.weight", VE, VI, 0},      {"mlp.fc2.bias", VE, 0, 0},
};

/* Every 1-D / 2-D tensor outside the blocks and the LM: name, rows, columns (0: 1-D). */
static const tm_leaf top[] = {
    {"vision.patch_embed.proj.bias", VE, 0, 0},
    {"vision.norm.weight", VE, 0, 0},
    {"vision.norm.bias", VE, 0, 0},
    {AP "q.weight", VE, VE, 0},
    {AP "q.bias", VE, 0, 0},
    {AP "kv.weight", 2 * VE, VE, 0},
    {AP "kv.bias", 2 * VE, 0, 0},
    {AP "proj.weight", VE, VE, 0},
    {AP "proj.bias", VE, 0, 0},
    {AP "norm.weight", VE, 0, 0},
    {AP "norm.bias", VE, 0, 0},
    {AP "mlp.fc1.weight", VI, VE, 0},
    {AP "mlp.fc1.bias", VI, 0, 0},
    {AP "mlp.fc2.weight", VE, VI, 0},
    {AP "mlp.fc2.bias", VE, 0, 0},
    {"projector.layers.0.weight", VPI, VM, 0},
    {"projector.layers.0.bias", VPI, 0, 0},
    {"projector.layers.2.weight", HID, VPI, 0},
    {"projector.layers.2.bias", HID, 0, 0},
    {"image_newline", HID, 0, 0},
    {"view_seperator", HID, 0, 0},
};

/* The VL model: kind k's LM moved under language., the tower (2 blocks, the MAP head), the
 * projector and the separators; skip (NULL: none) left out. */
static tm_model *vl_model(int k, const char *skip)
{
	tm_model *m = lm_model(k);
	for (size_t i = 0; i < m->n; i++) {
		char n[sizeof(m->name[0])];
		memcpy(n, m->name[i], sizeof(n));
		snprintf(m->name[i], sizeof(m->name[i]), LM "%.150s", n);
	}
	tm_add(m, "vision.pos_embed", WT_DTYPE_INVALID, 3, 1, 9, VE);
	add_4d(m, "vision.patch_embed.proj.weight", VE, 3, 14, 14);
	char b[200];
	for (int i = 0; i < 2; i++)
		for (size_t j = 0; j < TM_NLEAVES(blk); j++) {
			snprintf(b, sizeof(b), "vision.blocks.%d.%s", i, blk[j].leaf);
			tm_add2(m, b, blk[j].a, blk[j].b);
		}
	tm_add(m, AP "latent", WT_DTYPE_INVALID, 3, 1, 1, VE);
	for (size_t j = 0; j < TM_NLEAVES(top); j++)
		tm_add2(m, top[j].leaf, top[j].a, top[j].b);
	if (skip)
		tm_remove(m, skip);
	return m;
}

/* Every tower / projector tensor of the model whole on rank r, with its source dtype (BF16). */
static void vision_whole(const fx *f, uint32_t r)
{
	char b[200];
	for (int i = 0; i < 2; i++)
		for (size_t j = 0; j < TM_NLEAVES(blk); j++) {
			snprintf(b, sizeof(b), "vision.blocks.%d.%s", i, blk[j].leaf);
			repl(f, r, b);
			assert_int_equal(info(f, r, b)->dtype, WT_BF16);
		}
	for (size_t j = 0; j < TM_NLEAVES(top); j++) {
		repl(f, r, top[j].leaf);
		assert_int_equal(info(f, r, top[j].leaf)->dtype, WT_BF16);
	}
	repl(f, r, "vision.pos_embed");
	repl(f, r, AP "latent");
	repl(f, r, "vision.patch_embed.proj.weight");
	assert_int_equal(info(f, r, "vision.patch_embed.proj.weight")->ndim, 4);
	assert_int_equal(info(f, r, "vision.pos_embed")->ndim, 3);
}

/* TP 2 and 4 by hand (the MHA and V2 LMs): the tower and projector whole, the LM's attention,
 * dense MLP, shared experts, experts, router and vocabulary rows; nothing skipped. */
static void test_dsvl2_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2)
		for (int k = K_MHA; k <= K_V2; k++) {
			fx f;
			fx_open(&f, vl_model(k, NULL), cfg[k], T, 1, 0, true);
			assert_string_equal(shardmap_family(f.p), "deepseek_vl2");
			for (uint32_t r = 0; r < T; r++) {
				vision_whole(&f, r);
				dslm_lm_is(&f, r, T, k);
				/* the LM; the tower: 3 + 2 x 12 + 2 + 13 (attn_pool and latent),
				 * projector 4, separators 2 */
				assert_int_equal(shardmap_rank_n_tensors(f.p, r),
				                 dslm_lm_tensors(k) + 3 + 24 + 2 + 13 + 4 + 2);
			}
			assert_false(shardmap_tied_lm_head(f.p));
			assert_int_equal(shardmap_n_skipped(f.p), 0);
			fx_close(&f);
		}
}

/* Every rank's language.* outputs byte for byte the text family's ranks of the same weights
 * (no more, no fewer) in layout l. */
static void same_lm_at(int k, const wt_layout *l)
{
	fx a, b;
	fx_open_l(&a, vl_model(k, NULL), cfg[k], l, true);
	fx_open_l(&b, lm_model(k), text_cfg[k], l, true);
	assert_string_equal(shardmap_family(b.p), text_fam[k]);
	for (uint32_t r = 0; r < l->tp_size * l->ep_size; r++)
		fx_same_rank(&a, &b, r, LM);
	fx_close(&a);
	fx_close(&b);
}

/* TP 1 / 2 / 4 / 8, TP 2 x EP 2, int8-channel TP 2, fp8-channel TP 4; each language model. */
static void test_dsvl2_same_lm(void **state)
{
	(void)state;
	static const struct {
		uint32_t tp, ep;
		wt_quant q;
	} lays[] = {{1, 1, WT_QUANT_NONE},       {2, 1, WT_QUANT_NONE},
	            {4, 1, WT_QUANT_NONE},       {8, 1, WT_QUANT_NONE},
	            {2, 2, WT_QUANT_NONE},       {2, 1, WT_QUANT_INT8_CHANNEL},
	            {4, 1, WT_QUANT_FP8_CHANNEL}};
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

/* int8-channel TP 2 and fp8-channel TP 4: the LM's Linears quantized (rank 1's o_proj codes by
 * columns), the tower's Linears, the MAP head, the projector, the separators, norms, router and
 * embeddings kept BF16; every tower tensor whole on every rank. */
static void test_dsvl2_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {VB0 "attn.qkv.weight",
	                                   VB0 "attn.proj.weight",
	                                   VB0 "mlp.fc1.weight",
	                                   VB0 "mlp.fc2.weight",
	                                   AP "q.weight",
	                                   AP "kv.weight",
	                                   AP "mlp.fc1.weight",
	                                   "projector.layers.0.weight",
	                                   "projector.layers.2.weight",
	                                   "image_newline",
	                                   "view_seperator",
	                                   "vision.patch_embed.proj.weight",
	                                   L1 "mlp.gate.weight",
	                                   LM "model.embed_tokens.weight",
	                                   LM "lm_head.weight"};
	static const char *const q[] = {A1 "qkv_proj.weight", A1 "o_proj.weight",
	                                L0 "mlp.gate_up_proj.weight", L1 "mlp.experts.w13_weight",
	                                L1 "mlp.shared_experts.down_proj.weight"};
	fx f;
	fx_open_quant(&f, vl_model(K_MHA, NULL), cfg[K_MHA], 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(keep), FX_N(q));
	fx_cols_int8_is(&f, 1, 2, A1 "o_proj.weight", HID, HID);
	for (uint32_t r = 0; r < 2; r++)
		vision_whole(&f, r);
	fx_close(&f);
	fx_open_quant(&f, vl_model(K_MHA, NULL), cfg[K_MHA], 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(keep), FX_N(q));
	for (uint32_t r = 0; r < 4; r++)
		vision_whole(&f, r);
	fx_close(&f);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 / 8 and TP 2 x EP 2, each LM. */
static void test_dsvl2_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {2, 2}};
	for (int k = K_MHA; k <= K_V3; k++)
		coverage(vl_model(k, NULL), cfg[k], 8, lays, 5);
}

/* The language model's pick (use_mla false: deepseek; MLA: deepseek_v2; noaux_tc:
 * deepseek_v3; use_mla absent: true), the tower's sizes (int(width x mlp_ratio)), the
 * projector's; VisionEncoderConfig's / MlpProjectorConfig's defaults; the tie from
 * language_config alone. */
static void test_dsvl2_config(void **state)
{
	(void)state;
	static const char *const want[] = {"deepseek", "deepseek_v2", "deepseek_v3"};
	ckpt_config c;
	for (int k = K_MHA; k <= K_V3; k++) {
		tm_parse(cfg[k], &c);
		assert_string_equal(c.lm_model_type, want[k]);
		assert_true(c.has_vision);
		assert_int_equal(c.v_hidden_size, VE);
		assert_int_equal(c.v_intermediate_size, VI);
		assert_int_equal(c.v_num_layers, 2);
		assert_int_equal(c.v_num_pos, 9);
		assert_int_equal(c.v_spatial_merge_size, 2);
		assert_int_equal(c.v_proj_in_dim, VPI);
		assert_int_equal(c.hidden_size, HID);
		ckpt_config_clear(&c);
	}
	tm_parse(CFG(LM_KEYS MLA_DIMS), &c); /* use_mla and topk_method absent: true, greedy */
	assert_string_equal(c.lm_model_type, "deepseek_v2");
	ckpt_config_clear(&c);
	tm_parse(CFG_ALL("deepseek_vl_v2", "\"tile_tag\":\"2D\",\"tie_word_embeddings\":true,",
	                 "\"hidden_size\":2048,\"num_attention_heads\":16,\"vocab_size\":1000,"
	                 "\"num_hidden_layers\":1,\"intermediate_size\":256" MLA_DIMS,
	                 "\"vision_config\":{\"model_name\":\"siglip_so400m_patch14_384\"}",
	                 "\"projector_config\":{\"input_dim\":1024}"),
	         &c);
	assert_int_equal(c.v_hidden_size, 1024);
	assert_int_equal(c.v_num_layers, 24);
	assert_int_equal(c.v_num_attn_heads, 16);
	assert_int_equal(c.v_patch_size, 16);
	assert_int_equal(c.v_image_size, 384);
	assert_int_equal(c.v_num_pos, 576);
	assert_int_equal(c.v_intermediate_size, 4096);
	assert_int_equal(c.v_spatial_merge_size, 2);
	assert_int_equal(c.v_proj_in_dim, 2048);
	assert_false(c.tie_given && c.tie_word_embeddings);
	ckpt_config_clear(&c);
	/* tied by language_config: the head is skipped */
	fx f;
	fx_open(&f, vl_model(K_V2, NULL),
	        CFG_ALL("deepseek_vl_v2", "\"tile_tag\":\"2D\",\"tie_word_embeddings\":false,",
	                LM_BASE ",\"tie_word_embeddings\":true" MLA_DIMS, VIS(""), PROJ("")),
	        2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p) && fx_skipped(&f, LM "lm_head.weight"));
	fx_close(&f);
}

#define MHA_AS(extra) CFG(LM_KEYS ",\"qk_nope_head_dim\":0,\"qk_rope_head_dim\":0" extra)

/* The loader's refusals, each naming its key and the fix. */
static void test_dsvl2_config_errors(void **state)
{
	(void)state;
	static const struct {
		const char *cfg;
		int code;
		const char *a, *b;
	} cs[] = {
	    {"{\"architectures\":[\"DeepseekVLV2ForCausalLM\"],\"model_type\":\"deepseek_vl_v2\","
	     "\"tile_tag\":\"2D\"," VIS("") "," PROJ("") "}",
	     WT_ECORRUPT, "language_config", "missing"},
	    {"{\"architectures\":[\"DeepseekVLV2ForCausalLM\"],\"model_type\":\"deepseek_vl_v2\","
	     "\"language_config\":3}",
	     WT_ECORRUPT, "language_config", "not an object"},
	    {CFG_ALL("deepseek_vl_v2", "", MHA_KEYS, VIS(""), PROJ("")), WT_EUNSUPPORTED,
	     "tile_tag", "\"2D\""},
	    {CFG_ALL("deepseek_vl_v2", "\"tile_tag\":\"1D\",", MHA_KEYS, VIS(""), PROJ("")),
	     WT_EUNSUPPORTED, "tile_tag is \"1D\"", "2D"},
	    {CFG_VP(MHA_KEYS, "\"vision_config\":{}", PROJ("")), WT_EUNSUPPORTED,
	     "vision_config.model_name", "vit_so400m_patch14_siglip_384"},
	    {CFG_VP(MHA_KEYS, VIS(",\"class_token\":true"), PROJ("")), WT_EUNSUPPORTED,
	     "vision_config.class_token", "class token"},
	    {CFG_VP(MHA_KEYS, VIS(",\"global_pool\":\"token\""), PROJ("")), WT_EUNSUPPORTED,
	     "vision_config.global_pool", "attn_pool"},
	    {CFG_VP(MHA_KEYS, VISX("48", "0", ""), PROJ("")), WT_ECORRUPT, "vision_config",
	     "layers"},
	    {CFG_VP(MHA_KEYS, VIS(""),
	            "\"projector_config\":{\"projector_type\":\"mlp_gelu\",\"input_dim\":48,\"n_"
	            "embed\":128}"),
	     WT_EUNSUPPORTED, "projector_config.projector_type", "MlpProjector"},
	    {CFG_VP(MHA_KEYS, VIS(""), PROJ(",\"token_pooling\":true")), WT_EUNSUPPORTED,
	     "projector_config.token_pooling", "asserts"},
	    {CFG_VP(MHA_KEYS, VIS(""), PROJX(",\"depth\":3")), WT_EUNSUPPORTED,
	     "projector_config.depth 3", "layers.2"},
	    {CFG_VP(MHA_KEYS, VIS(""), "\"projector_config\":{\"input_dim\":48}"), WT_ECORRUPT,
	     "n_embed 2048", "language_config.hidden_size 128"},
	    {CFG_VP(MHA_KEYS, VISX("64", "2", ""), PROJ("")), WT_ECORRUPT,
	     "projector_config.input_dim 48", "vision_config.width 64"},
	    {CFG_VP(MHA_KEYS, "\"vision_config\":[]", PROJ("")), WT_ECORRUPT, "vision_config",
	     "not an object"},
	    {CFG(LM_KEYS MLA_DIMS ",\"use_mla\":false"), WT_EUNSUPPORTED,
	     "use_mla false (DeepseekForCausalLM)", "qk_nope_head_dim 16"},
	    {MHA_AS(",\"use_mla\":true"), WT_EUNSUPPORTED, "use_mla true", "both 0"},
	    {MHA_AS(""), WT_EUNSUPPORTED, "use_mla true (DeepseekV2ForCausalLM)",
	     "deepseek-vl2-tiny"},
	    {MHA_AS(",\"use_mla\":false,\"topk_method\":\"noaux_tc\""), WT_EUNSUPPORTED,
	     "topk_method noaux_tc", "plain attention"},
	    {MHA_AS(",\"use_mla\":false,\"topk_method\":3"), WT_ECORRUPT,
	     "language_config.topk_method", "not a string"},
	    {MHA_AS(",\"use_mla\":\"no\""), WT_ECORRUPT, "in language_config", "use_mla"},
	};
	for (size_t k = 0; k < sizeof(cs) / sizeof(cs[0]); k++)
		fx_refused(vl_model(K_MHA, NULL), cs[k].cfg, cs[k].code, cs[k].a, cs[k].b);
}

/* The planner's refusals: a missing tower / projector / separator tensor, a wrong shape (the
 * MAP head's kv, the projector at another downsample ratio), a V3 router without its
 * correction bias, an MLA config without its sizes, plain attention of another head size, the
 * architecture under another model_type, tp past the heads. */
static void test_dsvl2_plan_errors(void **state)
{
	(void)state;
	static const char *const gone[] = {AP "latent",
	                                   "view_seperator",
	                                   "image_newline",
	                                   "projector.layers.2.bias",
	                                   "vision.blocks.1.norm2.bias",
	                                   "vision.pos_embed"};
	for (size_t k = 0; k < sizeof(gone) / sizeof(gone[0]); k++)
		fx_refused(vl_model(K_MHA, gone[k]), cfg[K_MHA], WT_ENOTFOUND, gone[k], "");
	tm_model *m = vl_model(K_MHA, AP "kv.weight");
	tm_add2(m, AP "kv.weight", 3 * VE, VE);
	fx_refused(m, cfg[K_MHA], WT_ESHAPE, AP "kv.weight", "2 x vision_config.width = 96");
	fx_refused(vl_model(K_MHA, NULL),
	           CFG_VP(MHA_KEYS, VIS(""), PROJX(",\"downsample_ratio\":3")), WT_ESHAPE,
	           "projector.layers.0.weight", "432");
	fx_refused(vl_model(K_V2, NULL),
	           CFG(LM_KEYS ",\"q_lora_rank\":null" MLA_DIMS ",\"topk_method\":\"noaux_tc\""),
	           WT_ENOTFOUND, "e_score_correction_bias", "");
	fx_refused(vl_model(K_V3, NULL),
	           CFG(LM_KEYS ",\"q_lora_rank\":64" MLA_DIMS ",\"topk_method\":\"greedy\""),
	           WT_EUNSUPPORTED, "e_score_correction_bias", "unknown");
	fx_refused(vl_model(K_V2, NULL),
	           CFG(LM_KEYS ",\"qk_nope_head_dim\":16,\"qk_rope_head_dim\":8,\"v_head_dim\":16"),
	           WT_ECORRUPT, "kv_lora_rank", "use_mla true");
	fx_refused(vl_model(K_MHA, NULL), CFG(MHA_KEYS ",\"head_dim\":32"), WT_EUNSUPPORTED,
	           "language_config.head_dim 32", "16");
	fx_refused(vl_model(K_MHA, NULL),
	           "{\"architectures\":[\"DeepseekVLV2ForCausalLM\"],\"model_type\":\"deepseek_"
	           "v2\"," LM_KEYS "}",
	           WT_ECORRUPT, "DeepseekVLV2ForCausalLM", "deepseek_vl_v2");
	fx_refused_tp(vl_model(K_MHA, NULL), cfg[K_MHA], 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused(vl_model(K_MHA, NULL), cfg[K_V2], WT_EUNSUPPORTED, "self_attn.k_proj.weight",
	           "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dsvl2_slices),      cmocka_unit_test(test_dsvl2_same_lm),
	    cmocka_unit_test(test_dsvl2_quant),       cmocka_unit_test(test_dsvl2_coverage),
	    cmocka_unit_test(test_dsvl2_config),      cmocka_unit_test(test_dsvl2_config_errors),
	    cmocka_unit_test(test_dsvl2_plan_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
