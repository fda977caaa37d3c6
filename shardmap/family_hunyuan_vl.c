/*
 * family_hunyuan_vl.c — HunYuan-VL (HunYuanVLForConditionalGeneration, model_type hunyuan_vl:
 * tencent/HunyuanOCR; docs/format.md section 2.7), cut as vLLM's hunyuan_vision.py loads it
 * (vllm-project/vllm at commit 1c1b86e1; the earlier stored 05045ba1 builds the same modules).
 * load_weights is an AutoWeightsLoader whose hf_to_vllm_mapper moves vit.vit. / vit. to visual.
 * and model. to language_model.model.; SHARDS.md keeps the checkpoint's names (vit.*, model.*).
 *
 * - The language model: init_vllm_registered_model(architectures HunYuanDenseV1ForCausalLM
 *   first) on the top-level config, so the hunyuan_v1_dense family's rows: embed_tokens by
 *   padded vocabulary rows, q/k/v fused by heads (biases when attention_bias), o_proj by
 *   columns, query_layernorm / key_layernorm whole when use_qk_norm, gate / up merged,
 *   down_proj by columns. The lm_head is skipped by load_weights when tie_word_embeddings (the
 *   model has no top-level lm_head module otherwise: untied is refused). The xdrope
 *   rope_scaling (xdrope_section, alpha) changes positions only, no weight.
 * - The tower vit.* (HunYuanVisionTransformer, given the quant_config): the patch Conv2d
 *   [VE, C, p, p] with its bias, the position table [(max_image_size / p)^2 + 1, VE] (the loader
 *   puts the row count into v_num_pos), per layer input_layernorm / post_attention_layernorm
 *   (nn.LayerNorm, weight and bias) whole, self_attn.q_proj / k_proj / v_proj with biases fused
 *   by heads into self_attn.qkv (QKVParallelLinear, KV = H, the tower's load_weights stacks
 *   them), self_attn.o_proj by columns (RowParallelLinear, its bias whole), mlp.dense_h_to_4h by
 *   rows (ColumnParallelLinear, bias alike), mlp.dense_4h_to_h by columns (its bias whole).
 * - The merger vit.perceive.* (HunYuanVisionPatchMerger: plain torch modules and vLLM's RMSNorm,
 *   no quant_config): before_rms [VE], proj.0 (Conv2d VE -> 2 VE, kernel spatial_merge_size,
 *   bias), proj.2 (Conv2d 2 VE -> 4 VE, kernel 1, bias), mlp (nn.Linear 4 VE -> hid, bias),
 *   image_newline [4 VE], image_begin / image_end / image_sep [hid], after_rms [hid]: whole on
 *   every rank, never quantized. vLLM skips nothing else by name.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#define HV_T "vit."
#define HV_B "vit.layers.{i}."
#define HV_P "vit.perceive."

#define HV_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define HV_BREPL(n)                                                                                \
	SM_RULE(HV_B n, HV_B n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
#define HV_QKV(x, part)                                                                            \
	SM_RULE(HV_B "self_attn." x "_proj.weight", HV_B "self_attn.qkv.weight", SM_K_ROWS, part,  \
	        SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),                \
	    SM_RULE(HV_B "self_attn." x "_proj.bias", HV_B "self_attn.qkv.bias", SM_K_ROWS, part,  \
	            SM_U_VHEADS, SM_C_ALL, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
/* Per-head query / key RMSNorms, as family_hunyuan.c's (built when use_qk_norm). */
#define HV_QK_NORM(x)                                                                              \
	SM_RULE(SM_LAYER "self_attn." x ".weight", SM_LAYER "self_attn." x ".weight", SM_K_REPL,   \
	        0, SM_U_NONE, SM_C_QKNORM, 0, 1, SM_D_HD, SM_D_ANY)

/* The hunyuan_v1_dense rows, the tower and the merger ([VPI] = 4 VE: the loader's
 * v_proj_in_dim; proj.0's 2 VE rows checked by hunyuan_vl_shapes). */
static const sm_rule hunyuan_vl_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN_SWITCHED,
    HV_QK_NORM("query_layernorm"),
    HV_QK_NORM("key_layernorm"),
    SM_RULES_MLP_NOBIAS,
    {HV_T "embeddings.patch_embedding.weight",
     HV_T "embeddings.patch_embedding.weight",
     SM_K_REPL,
     0,
     SM_U_NONE,
     SM_C_ALL,
     0,
     4,
     {SM_D_VE, SM_D_VCH, SM_D_VP, SM_D_VP}},
    HV_REPL(HV_T "embeddings.patch_embedding.bias", 1, SM_D_VE, SM_D_ANY),
    HV_REPL(HV_T "embeddings.position_embedding.weight", 2, SM_D_VNP, SM_D_VE),
    HV_BREPL("input_layernorm.weight"),
    HV_BREPL("input_layernorm.bias"),
    HV_BREPL("post_attention_layernorm.weight"),
    HV_BREPL("post_attention_layernorm.bias"),
    HV_QKV("q", 0),
    HV_QKV("k", 1),
    HV_QKV("v", 2),
    SM_RULE(HV_B "self_attn.o_proj.weight", HV_B "self_attn.o_proj.weight", SM_K_COLS, 0,
            SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),
    HV_BREPL("self_attn.o_proj.bias"),
    SM_RULE(HV_B "mlp.dense_h_to_4h.weight", HV_B "mlp.dense_h_to_4h.weight", SM_K_ROWS, 0, SM_U_VI,
            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VI, SM_D_VE),
    SM_RULE(HV_B "mlp.dense_h_to_4h.bias", HV_B "mlp.dense_h_to_4h.bias", SM_K_ROWS, 0, SM_U_VI,
            SM_C_ALL, SM_F_VIS, 1, SM_D_VI, SM_D_ANY),
    SM_RULE(HV_B "mlp.dense_4h_to_h.weight", HV_B "mlp.dense_4h_to_h.weight", SM_K_COLS, 0, SM_U_VI,
            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VI),
    HV_BREPL("mlp.dense_4h_to_h.bias"),
    HV_REPL(HV_P "before_rms.weight", 1, SM_D_VE, SM_D_ANY),
    {HV_P "proj.0.weight",
     HV_P "proj.0.weight",
     SM_K_REPL,
     0,
     SM_U_NONE,
     SM_C_ALL,
     0,
     4,
     {SM_D_ANY, SM_D_VE, SM_D_VMS, SM_D_VMS}},
    HV_REPL(HV_P "proj.0.bias", 1, SM_D_ANY, SM_D_ANY),
    {HV_P "proj.2.weight",
     HV_P "proj.2.weight",
     SM_K_REPL,
     0,
     SM_U_NONE,
     SM_C_ALL,
     0,
     4,
     {SM_D_VPI, SM_D_ANY, SM_D_ONE, SM_D_ONE}},
    HV_REPL(HV_P "proj.2.bias", 1, SM_D_VPI, SM_D_ANY),
    HV_REPL(HV_P "mlp.weight", 2, SM_D_HID, SM_D_VPI),
    HV_REPL(HV_P "mlp.bias", 1, SM_D_HID, SM_D_ANY),
    HV_REPL(HV_P "image_newline", 1, SM_D_VPI, SM_D_ANY),
    HV_REPL(HV_P "image_begin", 1, SM_D_HID, SM_D_ANY),
    HV_REPL(HV_P "image_end", 1, SM_D_HID, SM_D_ANY),
    HV_REPL(HV_P "image_sep", 1, SM_D_HID, SM_D_ANY),
    HV_REPL(HV_P "after_rms.weight", 1, SM_D_HID, SM_D_ANY),
};

/* The language model vLLM builds (HunYuanDenseV1ForCausalLM, tied, self-attending layers),
 * the tower's heads splitting its width and the merger's output feeding the LM. */
static int hunyuan_vl_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs vision_config (HunYuanVLVisionConfig's "
		                 "keys); give the release's",
		                 c->architecture);
	if (c->use_cla)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s with use_cla true (cross-layer attention) is not "
		                 "supported: set use_cla false for a checkpoint whose layers all "
		                 "have k_proj / v_proj",
		                 c->architecture);
	if (c->num_experts > 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s with num_experts %" PRId64
		                 ": vLLM's hunyuan_vision.py builds HunYuanDenseV1ForCausalLM (the "
		                 "first of its architectures), whose loader takes no experts; give "
		                 "num_experts 1 or drop it",
		                 c->architecture, c->num_experts);
	if (!c->tie_word_embeddings)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %s with tie_word_embeddings false: vLLM's "
		    "HunYuanVLForConditionalGeneration has no top-level lm_head module "
		    "(its load_weights skips lm_head. only when tied); the releases "
		    "tie: give tie_word_embeddings true",
		    c->architecture);
	if (c->v_hidden_size % c->v_num_attn_heads)
		return shardmap_vision_heads_err("num_attention_heads", c->v_num_attn_heads,
		                                 c->v_hidden_size, err);
	if (c->v_out_hidden_size != c->hidden_size)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.out_hidden_size %" PRId64
		                 " must equal the language model's hidden_size %" PRId64
		                 " (vit.perceive.mlp's output is its input)",
		                 c->v_out_hidden_size, c->hidden_size);
	return WT_OK;
}

/* proj.0's and proj.2's 2 VE channels (no dim of their own in the table). */
static int hunyuan_vl_shapes(const ckpt *k, const ckpt_config *c, wt_errbuf *err)
{
	static const struct {
		const char *name;
		int dim;
	} two[] = {{HV_P "proj.0.weight", 0}, {HV_P "proj.0.bias", 0}, {HV_P "proj.2.weight", 1}};
	for (size_t j = 0; j < sizeof(two) / sizeof(two[0]); j++) {
		const ckpt_tensor *d = ckpt_find(k, two[j].name);
		if (d == NULL || d->ndim <= two[j].dim)
			continue; /* missing or misshapen: the table refuses it */
		if (d->shape[two[j].dim] != 2 * c->v_hidden_size)
			return wt_seterr(err, WT_ESHAPE,
			                 "tensor '%s': dim %d is %" PRId64 ", expected 2 x "
			                 "vision_config.hidden_size = %" PRId64
			                 " (HunYuanVisionPatchMerger's first Conv2d)",
			                 two[j].name, two[j].dim, d->shape[two[j].dim],
			                 2 * c->v_hidden_size);
	}
	return WT_OK;
}

static const char *const hunyuan_vl_archs[] = {"HunYuanVLForConditionalGeneration", NULL};

const sm_family shardmap_family_hunyuan_vl = {
    .name = "hunyuan_vl",
    .archs = hunyuan_vl_archs,
    .rules = hunyuan_vl_rules,
    .n_rules = SM_NRULES(hunyuan_vl_rules),
    .layer_prefix = "model.layers.",
    .check = hunyuan_vl_check,
    .check_extra = hunyuan_vl_shapes,
    .vision_gated = true,
    .vision_siglip = true,
    .siglip2 = true,
};
