/*
 * family_keye.c — Keye-VL (KeyeForConditionalGeneration: Kwai-Keye/Keye-VL-8B-Preview;
 * KeyeVL1_5ForConditionalGeneration: Kwai-Keye/Keye-VL-1_5-8B; remote code; docs/format.md
 * section 2.7), cut as vLLM's keye.py / keye_vl1_5.py load them (BaseKeyeModule: a bare
 * AutoWeightsLoader whose hf_to_vllm_mapper only moves model.* / lm_head.* under
 * language_model.; SHARDS.md keeps the checkpoint's names).
 *
 * - The language model: init_vllm_registered_model with architectures ["Qwen3ForCausalLM"]
 *   on the top-level config, whatever it says: the qwen3 family's rules (embed_tokens /
 *   lm_head by padded vocabulary rows, q/k/v fused by heads, gate / up merged, o_proj /
 *   down_proj by columns, norms and the per-head q_norm / k_norm replicated), the same bytes
 *   as the qwen3 family's ranks of the same weights.
 * - The tower visual.vision_model.* (KeyeSiglipVisionModel, given the quant_config unless it
 *   is GPTQ's): SigLIP's rows (SM_RULES_SIGLIP_TOWER: separate q/k/v with biases fused by
 *   heads into self_attn.qkv_proj, QKVParallelLinear with KV = H; out_proj by columns, its
 *   bias replicated; SiglipMLP's fc1 by rows, fc2 by columns, quantized only when
 *   hidden_size and intermediate_size are both multiples of 64; the LayerNorms, the patch
 *   Conv2d with its bias, the position table [(image / patch)^2, VE] and post_layernorm
 *   replicated), and KeyeVisionEmbeddings' packing_position_embedding, an nn.Embedding of
 *   vLLM's fixed 32768 rows, replicated. Its load_weights skips a SigLIP pooling head
 *   (head.attention / head.layernorm / head.mlp / head.probe): dropped here.
 * - The projector mlp_AR (Projector / KeyeVL1_5Projector, merge_kernel_size fixed (2, 2)):
 *   pre_norm an nn.LayerNorm replicated, over VE (Keye-VL) or the merged 4 VE
 *   (Keye-VL-1.5: the one difference between the two); linear_1 [4 VE, 4 VE]
 *   ColumnParallelLinear (rows, its bias split with them), linear_2 [hid, 4 VE]
 *   RowParallelLinear (columns, its bias replicated), both weights quantized.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#define KY_VT "visual.vision_model."
#define KY_P  "mlp_AR."
/* KeyeVisionEmbeddings' packing_position_embedding: nn.Embedding(32768, embed_dim) */
#define KY_PACK_ROWS 32768

#define KY_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)

/* The language model (Qwen3ForCausalLM), the tower and mlp_AR; pre_norm's width (VE or 4 VE
 * by the architecture) is checked by keye_extra. */
static const sm_rule keye_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_QK_NORM,
    SM_RULES_SIGLIP_TOWER(KY_VT),
    KY_REPL(KY_VT "embeddings.packing_position_embedding.weight", 2, SM_D_ANY, SM_D_VE),
    KY_REPL(KY_P "pre_norm.weight", 1, SM_D_ANY, SM_D_ANY),
    KY_REPL(KY_P "pre_norm.bias", 1, SM_D_ANY, SM_D_ANY),
    /* linear_1 / linear_2 with their biases (VM: VE x spatial_merge_size^2, checked 2) */
    SM_RULE(KY_P "linear_1.weight", KY_P "linear_1.weight", SM_K_ROWS, 0, SM_U_VM, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_VM, SM_D_VM),
    SM_RULE(KY_P "linear_1.bias", KY_P "linear_1.bias", SM_K_ROWS, 0, SM_U_VM, SM_C_ALL, 0, 1,
            SM_D_VM, SM_D_ANY),
    SM_RULE(KY_P "linear_2.weight", KY_P "linear_2.weight", SM_K_COLS, 0, SM_U_VM, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_VM),
    KY_REPL(KY_P "linear_2.bias", 1, SM_D_HID, SM_D_ANY),
};

/* vision_config's sizes, given (the remote KeyeVisionConfig's defaults are not read here),
 * the heads splitting the width, a patch grid, and the 2 x 2 merge vLLM's projector
 * hard-codes. */
static int keye_check(const ckpt_config *c, wt_errbuf *err)
{
	return shardmap_vision_mlp_ar_check(
	    c, "the remote KeyeVisionConfig's default is not assumed here", "Keye", err);
}

/* mlp_AR.pre_norm's width tells the two projectors apart: Keye-VL's over vision_config.hidden_size
 * VE, Keye-VL-1.5's over the 2 x 2-merged 4 VE; the other architecture's width is refused naming
 * it, any other width naming the one vLLM builds. */
static int keye_pre_norm(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	static const char *const n[] = {KY_P "pre_norm.weight", KY_P "pre_norm.bias"};
	bool v15 = strcmp(c->architecture, "KeyeVL1_5ForConditionalGeneration") == 0;
	int64_t ve = c->v_hidden_size, want = v15 ? 4 * ve : ve, other = v15 ? ve : 4 * ve;
	for (size_t k = 0; k < 2; k++) {
		const ckpt_tensor *t = ckpt_find(ck, n[k]);
		if (t == NULL || t->shape[0] == want)
			continue;
		if (t->shape[0] == other)
			return wt_seterr(
			    err, WT_ESHAPE,
			    "tensor '%s': [%" PRId64
			    "] is %s's pre_norm (over %s), but config.json "
			    "says %s, whose pre_norm is [%" PRId64 "]: set architectures to %s",
			    n[k], other, v15 ? "Keye-VL" : "Keye-VL-1.5",
			    v15 ? "vision_config.hidden_size" : "the 2 x 2-merged 4 x hidden_size",
			    c->architecture, want,
			    v15 ? "KeyeForConditionalGeneration"
			        : "KeyeVL1_5ForConditionalGeneration");
		return wt_seterr(
		    err, WT_ESHAPE,
		    "tensor '%s': [%" PRId64 "], but vLLM's %s builds its LayerNorm "
		    "over [%" PRId64 "] (%s); the checkpoint does not match its "
		    "vision_config",
		    n[k], t->shape[0], v15 ? "KeyeVL1_5Projector" : "Keye Projector", want,
		    v15 ? "4 x vision_config.hidden_size" : "vision_config.hidden_size");
	}
	return WT_OK;
}

/* packing_position_embedding: vLLM's fixed 32768 rows (its rule reads any row count); the
 * projector's pre_norm width. */
static int keye_extra(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	static const char n[] = KY_VT "embeddings.packing_position_embedding.weight";
	const ckpt_tensor *t = ckpt_find(ck, n);
	if (t != NULL && t->ndim == 2 && t->shape[0] != KY_PACK_ROWS)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': %" PRId64
		                 " rows, but vLLM's KeyeVisionEmbeddings builds "
		                 "nn.Embedding(32768, vision_config.hidden_size); the checkpoint "
		                 "is not a Keye-VL tower",
		                 n, t->shape[0]);
	return keye_pre_norm(ck, c, err);
}

/* KeyeSiglipVisionModel.load_weights skips a pooling head's tensors (a name holding
 * head.attention, head.layernorm, head.mlp or head.probe): they have no parameter. */
static bool keye_drop(const ckpt_config *c, const char *cn)
{
	(void)c;
	static const char *const head[] = {"head.attention", "head.layernorm", "head.mlp",
	                                   "head.probe"};
	if (strncmp(cn, KY_VT, sizeof(KY_VT) - 1) != 0)
		return false;
	for (size_t k = 0; k < sizeof(head) / sizeof(head[0]); k++)
		if (strstr(cn, head[k]) != NULL)
			return true;
	return false;
}

/* SiglipMLP's fc1 / fc2 built without the quant_config when the tower's sizes are not both
 * multiples of 64 (Keye-VL-8B's 1152 / 4304). */
static bool keye_float(const ckpt_config *c, const char *cn)
{
	return shardmap_siglip_mlp_float(c, KY_VT, cn);
}

static const char *const keye_archs[] = {"KeyeForConditionalGeneration",
                                         "KeyeVL1_5ForConditionalGeneration", NULL};

const sm_family shardmap_family_keye = {
    .name = "keye",
    .archs = keye_archs,
    .rules = keye_rules,
    .n_rules = SM_NRULES(keye_rules),
    .layer_prefix = "model.layers.",
    .check = keye_check,
    .check_extra = keye_extra,
    .drop_canon = keye_drop,
    .keep_float = keye_float,
    .vision_gated = true,
    .vision_siglip = true,
};
