/*
 * family_internvl_chat.c — InternVL's chat format (InternVLChatModel, model_type internvl_chat,
 * remote code: OpenGVLab/InternVL2-*, InternVL2_5-*, InternVL3-* without -hf), cut as vLLM's
 * internvl.py / intern_vit.py load it, the language model as vLLM's registry builds
 * llm_config.architectures[0] (docs/format.md section 2.7). Runtime names keep the checkpoint's
 * (vLLM's AutoWeightsLoader loads them as they are: vision_model.*, mlp1.*, language_model.*).
 *
 * - Language model (language_model.*): InternLM2ForCausalLM is the internlm2 family's table
 *   (wqkv re-cut per rank into [q_r; k_r; v_r], wo / w2 by columns, w1 / w3 into gate_up_proj,
 *   tok_embeddings / output by padded vocabulary rows); Qwen2ForCausalLM and LlamaForCausalLM
 *   Llama's (q/k/v into qkv_proj with Qwen2's biases, gate / up into gate_up_proj),
 *   Qwen3ForCausalLM Qwen3's (the same plus per-head q_norm / k_norm replicated), and
 *   Phi3ForCausalLM the phi3 family's (InternVL2-4B: qkv_proj / gate_up_proj fused in the
 *   checkpoint, re-cut per rank). The loader
 *   (loader/config_internvl_chat.c) reads llm_config as text_config and refuses any other
 *   architecture. Tied by llm_config.tie_word_embeddings alone.
 * - The tower (vLLM's InternVisionModel, built with the quantization config):
 *   embeddings.class_embedding [1, 1, VE], patch_embedding (Conv2d with its bias) and
 *   position_embedding [1, (image / patch)^2 + 1, VE] replicated; per block attn.qkv
 *   [3 VE, VE] ([q; k; v] rows) and its bias (vision_config.qkv_bias) by heads into
 *   [q_r; k_r; v_r] and attn.proj by columns (its bias replicated) when
 *   vision_config.num_attention_heads divides tp_size (InternParallelAttention:
 *   QKVParallelLinear / RowParallelLinear, quantized), else both whole on every rank and never
 *   quantized (InternSdpaAttention's plain nn.Linear: InternViT-6B's 25 heads at TP 2 / 4 / 8);
 *   attn.q_norm / k_norm [VE] (qk_normalization; normed over the gathered width) replicated;
 *   mlp.fc1 by rows with its bias, fc2 by columns (bias replicated), both quantized; norm1 /
 *   norm2 (biases when norm_type is layer_norm) and the layer scales ls1 / ls2 replicated.
 *   vLLM builds num_hidden_layers + select_layer + 1 blocks (select_layer + 1 when >= 0):
 *   the loader puts that count in v_num_layers; a checkpoint block past it is refused (vLLM's
 *   InternVisionModel.load_weights has no parameter for it).
 * - The projector mlp1 (nn.Sequential: 0 LayerNorm [VE n^2], 1 Linear [hid, VE n^2], 3 Linear
 *   [hid, hid], with biases; n = 1 / downsample_ratio): whole on every rank, never quantized.
 *
 * H2OVLChatModel (model_type h2ovl_chat: h2oai/h2ovl-mississippi-800m / -2b), vLLM's h2ovl.py:
 * an InternVLChatModel whose _init_vision_model builds the same tower; the same cut.
 * SkyworkR1VChatModel (model_type skywork_chat: Skywork/Skywork-R1V-38B, R1V2 / R1V3-38B),
 * vLLM's skyworkr1v.py: the same tower and names, mlp1.1 / mlp1.3 ReplicatedLinear built with
 * the quantization config (whole on every rank, quantized: the arch_variant table); its
 * InternLM2 / Phi-3 language model is refused (no release has one).
 *
 * NVLM-D (NVLM_D: nvidia/NVLM-D-72B, model_type NVLM_D, remote code; its own family nvlm_d),
 * vLLM's nvlm_d.py: an InternVLChatModel whose _init_vision_model builds InternViT with
 * num_dummy_heads 7 (InternViT-6B's 25 heads padded to 32 with zero heads, stored so in the
 * checkpoint: attn.qkv [3 (H + 7) d, VE], q_norm / k_norm [(H + 7) d], attn.proj
 * [VE, (H + 7) d]): split by H + 7 heads where they divide tp_size (InternParallelAttention),
 * else whole and never quantized (InternSdpaAttention); and whose _init_mlp1 is 0 LayerNorm
 * [VE n^2], 1 Linear [intermediate_size, VE n^2], 3 Linear [hidden_size, intermediate_size]
 * without biases (the language model's sizes; plain nn.Linear: whole, never quantized). Its
 * language model is Qwen2ForCausalLM (vLLM's NVLM_D_Config reads llm_config as a Qwen2Config);
 * any other is refused.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shardmap/families.h"
#include "shardmap/family_internlm2.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define IVC_VT "vision_model."
#define IVC_VL IVC_VT "encoder.layers."
#define IVC_VB IVC_VL "{i}."

/* A [d] tensor of every block, whole on every rank, under condition c. */
#define IVC_VREPLD(n, c, d)                                                                        \
	SM_RULE(IVC_VB n, IVC_VB n, SM_K_REPL, 0, SM_U_NONE, c, SM_F_VIS, 1, d, SM_D_ANY)
#define IVC_VREPL(n, c) IVC_VREPLD(n, c, SM_D_VE)
/* A tensor of the embeddings or projector, whole on every rank, never quantized. */
#define IVC_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)

/* InternViT as vLLM's intern_vit.py builds it; the attention [VA] wide ((H + n) x d with
 * NVLM-D's n dummy heads, VE without). */
#define IVC_VIT_RULES                                                                              \
	SM_RULE3(IVC_VT "embeddings.class_embedding", IVC_VT "embeddings.class_embedding",         \
	         SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, SM_D_ONE, SM_D_ONE, SM_D_VE),               \
	    SM_RULE3(IVC_VT "embeddings.position_embedding",                                       \
	             IVC_VT "embeddings.position_embedding", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, \
	             SM_D_ONE, SM_D_VNP, SM_D_VE),                                                 \
	    {IVC_VT "embeddings.patch_embedding.weight",                                           \
	     IVC_VT "embeddings.patch_embedding.weight",                                           \
	     SM_K_REPL,                                                                            \
	     0,                                                                                    \
	     SM_U_NONE,                                                                            \
	     SM_C_ALL,                                                                             \
	     0,                                                                                    \
	     4,                                                                                    \
	     {SM_D_VE, SM_D_VCH, SM_D_VP, SM_D_VP}},                                               \
	    IVC_REPL(IVC_VT "embeddings.patch_embedding.bias", 1, SM_D_VE, SM_D_ANY),              \
	    SM_RULE(IVC_VB "attn.qkv.weight", IVC_VB "attn.qkv.weight", SM_K_QKVFW, 0,             \
	            SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_V3A, SM_D_VE),           \
	    SM_RULE(IVC_VB "attn.qkv.bias", IVC_VB "attn.qkv.bias", SM_K_QKVFW, 0, SM_U_VHEADS,    \
	            SM_C_IVQKVB, SM_F_VIS, 1, SM_D_V3A, SM_D_ANY),                                 \
	    IVC_VREPLD("attn.q_norm.weight", SM_C_IVQKN, SM_D_VA),                                 \
	    IVC_VREPLD("attn.k_norm.weight", SM_C_IVQKN, SM_D_VA),                                 \
	    SM_RULE(IVC_VB "attn.proj.weight", IVC_VB "attn.proj.weight", SM_K_COLSW, 0,           \
	            SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VA),            \
	    IVC_VREPL("attn.proj.bias", SM_C_ALL),                                                 \
	    SM_RULE(IVC_VB "mlp.fc1.weight", IVC_VB "mlp.fc1.weight", SM_K_ROWS, 0, SM_U_VI,       \
	            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VI, SM_D_VE),                         \
	    SM_RULE(IVC_VB "mlp.fc1.bias", IVC_VB "mlp.fc1.bias", SM_K_ROWS, 0, SM_U_VI, SM_C_ALL, \
	            SM_F_VIS, 1, SM_D_VI, SM_D_ANY),                                               \
	    SM_RULE(IVC_VB "mlp.fc2.weight", IVC_VB "mlp.fc2.weight", SM_K_COLS, 0, SM_U_VI,       \
	            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VI),                         \
	    IVC_VREPL("mlp.fc2.bias", SM_C_ALL), IVC_VREPL("norm1.weight", SM_C_ALL),              \
	    IVC_VREPL("norm1.bias", SM_C_IVLN), IVC_VREPL("norm2.weight", SM_C_ALL),               \
	    IVC_VREPL("norm2.bias", SM_C_IVLN), IVC_VREPL("ls1", SM_C_ALL),                        \
	    IVC_VREPL("ls2", SM_C_ALL), IVC_REPL("mlp1.0.weight", 1, SM_D_VM, SM_D_ANY),           \
	    IVC_REPL("mlp1.0.bias", 1, SM_D_VM, SM_D_ANY)

/* InternViT and mlp1, as vLLM's intern_vit.py / internvl.py build them; mlp1's Linears get
 * flags MQ (0: plain nn.Linear; SM_F_QUANT: SkyworkR1V's ReplicatedLinear). */
#define IVC_TOWER_RULES(MQ)                                                                        \
	IVC_VIT_RULES,                                                                             \
	    SM_RULE("mlp1.1.weight", "mlp1.1.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, MQ, 2,    \
	            SM_D_HID, SM_D_VM),                                                            \
	    IVC_REPL("mlp1.1.bias", 1, SM_D_HID, SM_D_ANY),                                        \
	    SM_RULE("mlp1.3.weight", "mlp1.3.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, MQ, 2,    \
	            SM_D_HID, SM_D_HID),                                                           \
	    IVC_REPL("mlp1.3.bias", 1, SM_D_HID, SM_D_ANY)

/* Qwen2ForCausalLM / LlamaForCausalLM / Qwen3ForCausalLM under language_model. */
static const sm_rule ivc_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LLAMA_QWEN_LAYER,
    IVC_TOWER_RULES(0),
};

/* SkyworkR1VChatModel (vLLM's skyworkr1v.py): the same, mlp1.1 / mlp1.3 ReplicatedLinear built
 * with the quantization config: whole on every rank, quantized. */
static const sm_rule ivc_sky_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LLAMA_QWEN_LAYER,
    IVC_TOWER_RULES(SM_F_QUANT),
};

/* NVLM_D_Model (vLLM's nvlm_d.py): the tower with its dummy heads ([VA], [V3A]) and
 * NVLMProjector's mlp1 (_init_mlp1: no biases, through the language model's intermediate_size),
 * plain nn.Linear: whole on every rank, never quantized. */
static const sm_rule nvlm_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LLAMA_QWEN_LAYER,
    IVC_VIT_RULES,
    SM_RULE("mlp1.1.weight", "mlp1.1.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_I,
            SM_D_VM),
    SM_RULE("mlp1.3.weight", "mlp1.3.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_HID,
            SM_D_I),
};

/* InternLM2ForCausalLM under language_model. (InternVL2-2B / 8B / 20B, InternVL2_5-2B / 8B /
 * 26B, InternVL-Chat-V1-5). */
static const sm_rule ivc_il2_rules[] = {
    IL_RULES_AT("language_model."),
    IL_OUTPUT_AT("language_model."),
    IVC_TOWER_RULES(0),
};

/* Phi3ForCausalLM under language_model. (InternVL2-4B, Mini-InternVL-Chat-4B-V1-5): the phi3
 * family's table (q/k/v and gate/up fused in the checkpoint, re-cut per rank). */
static const sm_rule ivc_phi3_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    SM_RULES_PHI3_ATTN,
    SM_RULES_MLP_FUSED,
    IVC_TOWER_RULES(0),
};

/* The tower's block of canonical name cn (-1: not one). */
static int64_t ivc_block(const char *cn)
{
	return shardmap_index_after(cn, IVC_VL);
}

/* A block vLLM does not build (select_layer): listed as skipped here, then refused by
 * ivc_extra with the reason. */
static bool ivc_drop(const ckpt_config *c, const char *cn)
{
	return ivc_block(cn) >= c->v_num_layers;
}

static int ivc_extra(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	for (size_t k = 0; k < ckpt_n_tensors(ck); k++) {
		const char *n = ckpt_tensor_at(ck, k)->name;
		if (ivc_block(n) >= c->v_num_layers)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "tensor '%s': select_layer %" PRId64 " makes vLLM build %" PRId64
			    " InternViT blocks (num_hidden_layers_override) and its "
			    "InternVisionModel.load_weights has no parameter for block %" PRId64
			    "; remove the blocks from %" PRId64 " on from the checkpoint, or set "
			    "select_layer -1",
			    n, c->v_feature_layer, c->v_num_layers, ivc_block(n), c->v_num_layers);
	}
	return WT_OK;
}

/* Is cn an InternViT block's attn.qkv / attn.proj weight? */
static bool ivc_attn_linear(const char *cn)
{
	size_t n = strlen(cn);
	return ivc_block(cn) >= 0 && ((n > 16 && strcmp(cn + n - 16, ".attn.qkv.weight") == 0) ||
	                              (n > 17 && strcmp(cn + n - 17, ".attn.proj.weight") == 0));
}

/* InternViT's qkv / proj are InternSdpaAttention's plain nn.Linear when its heads do not
 * divide tp_size: never quantized then. */
static bool ivc_float_at_tp(const ckpt_config *c, uint32_t tp, const char *cn)
{
	return ivc_attn_linear(cn) && c->v_num_attn_heads % (int64_t)tp != 0;
}

/* NVLM-D's: its heads with the 7 dummy ones (vLLM's _init_attn tests num_heads +
 * num_dummy_heads). */
#define NVLM_DUMMY_HEADS 7
static bool nvlm_float_at_tp(const ckpt_config *c, uint32_t tp, const char *cn)
{
	return ivc_attn_linear(cn) && (c->v_num_attn_heads + NVLM_DUMMY_HEADS) % (int64_t)tp != 0;
}

/* The loader's vision fields (model_type internvl_chat); the tower's sizes; the language model's
 * own checks. */
static int ivc_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type internvl_chat with its "
		                 "vision_config and llm_config (InternVLChatConfig)",
		                 c->architecture);
	if (c->v_hidden_size % c->v_num_attn_heads != 0)
		return shardmap_vision_heads_err("num_attention_heads", c->v_num_attn_heads,
		                                 c->v_hidden_size, err);
	if (c->v_image_size < c->v_patch_size)
		return shardmap_vision_patch_err(c->v_image_size, c->v_patch_size, err);
	bool il2 = strcmp(c->lm_model_type, "internlm2") == 0;
	if (!il2 && strcmp(c->lm_model_type, "phi3") != 0)
		return WT_OK;
	if (strcmp(c->architecture, "SkyworkR1VChatModel") == 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: llm_config.architectures %s under "
		    "SkyworkR1VChatModel is not cut here (the releases' language model is "
		    "Qwen2ForCausalLM); give a Qwen2 / Llama / Qwen3 llm_config",
		    il2 ? "InternLM2ForCausalLM" : "Phi3ForCausalLM");
	return il2 ? shardmap_internlm2_check(c, err) : WT_OK;
}

/* NVLM-D: the InternVL chat format's checks, model_type NVLM_D, a Qwen2 language model. */
static int nvlm_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: %s needs model_type NVLM_D with its vision_config and "
		    "llm_config (NVLM_D_Config)",
		    c->architecture);
	if (strcmp(c->lm_model_type, "qwen2") != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: llm_config.architectures[0] builds a language model of "
		    "model_type %s under %s, which is not cut here: vLLM's NVLM_D_Config reads "
		    "llm_config as a Qwen2Config and NVLM-D's language model is Qwen2ForCausalLM; "
		    "give a Qwen2ForCausalLM llm_config",
		    c->lm_model_type, c->architecture);
	return ivc_check(c, err);
}

/* A tower tensor stored without NVLM-D's dummy heads, or InternVL's mlp1 biases (an InternVL
 * chat checkpoint labelled NVLM_D): refused naming them before the shape check's bare
 * numbers. */
static int nvlm_names(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	int64_t h = c->v_num_attn_heads, ve = c->v_hidden_size;
	if (h <= 0 || ve % h != 0)
		return WT_OK; /* the check refuses it */
	for (size_t k = 0; k < ckpt_n_tensors(ck); k++) {
		const ckpt_tensor *t = ckpt_tensor_at(ck, k);
		size_t n = strlen(t->name);
		if (strcmp(t->name, "mlp1.1.bias") == 0 || strcmp(t->name, "mlp1.3.bias") == 0)
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "tensor '%s': vLLM's nvlm_d.py builds mlp1's Linears "
			                 "without biases (_init_mlp1, bias=False: the projector "
			                 "of InternVLChatModel has them); remove it, or serve the "
			                 "checkpoint as InternVLChatModel",
			                 t->name);
		if (!ivc_attn_linear(t->name) || t->ndim != 2)
			continue;
		bool qkv = strcmp(t->name + n - 16, ".attn.qkv.weight") == 0; /* n > 16 */
		if (t->shape[qkv ? 0 : 1] == (qkv ? 3 : 1) * ve)
			return wt_seterr(
			    err, WT_ESHAPE,
			    "tensor '%s': [%" PRId64 ", %" PRId64 "] holds InternViT's %" PRId64
			    " heads alone; vLLM's nvlm_d.py builds them with %d zero dummy heads "
			    "(num_dummy_heads), %s %" PRId64 " wide, as NVLM-D's checkpoint stores "
			    "them: serve NVLM-D's own weights, or this one as InternVLChatModel",
			    t->name, t->shape[0], t->shape[1], h, NVLM_DUMMY_HEADS,
			    qkv ? "q, k and v each" : "its input",
			    (h + NVLM_DUMMY_HEADS) * (ve / h));
	}
	return WT_OK;
}

static const sm_family ivc_phi3;

/* InternLM2's table when llm_config's architecture is InternLM2ForCausalLM, Phi-3's when it is
 * Phi3ForCausalLM. */
static const sm_family *ivc_variant(const ckpt_config *c)
{
	if (strcmp(c->lm_model_type, "phi3") == 0)
		return &ivc_phi3;
	return strcmp(c->lm_model_type, "internlm2") == 0 ? &shardmap_family_internvl_chat_il2
	                                                  : NULL;
}

static const char *const ivc_archs[] = {"InternVLChatModel", "H2OVLChatModel",
                                        "SkyworkR1VChatModel", NULL};
static const char *const ivc_sky_archs[] = {"SkyworkR1VChatModel", NULL};

#define IVC_FAMILY_OF(N, A, R, CHK, FAT)                                                           \
	.name = N, .archs = A, .rules = R, .n_rules = SM_NRULES(R),                                \
	.layer_prefix = "language_model.model.layers.", .check = CHK, .check_extra = ivc_extra,    \
	.drop_canon = ivc_drop, .float_at_tp = FAT, .vision_gated = true, .vision_siglip = true,   \
	.internvl = true
#define IVC_FAMILY(A, R) IVC_FAMILY_OF("internvl_chat", A, R, ivc_check, ivc_float_at_tp)

static const sm_family ivc_sky = {IVC_FAMILY(ivc_sky_archs, ivc_sky_rules)};
static const sm_family ivc_phi3 = {IVC_FAMILY(ivc_archs, ivc_phi3_rules)};

const sm_family shardmap_family_internvl_chat = {
    IVC_FAMILY(ivc_archs, ivc_rules), .variant_for = ivc_variant, .arch_variant = &ivc_sky};
const sm_family shardmap_family_internvl_chat_il2 = {IVC_FAMILY(ivc_archs, ivc_il2_rules)};

/* NVLM_D is config.json's architecture (vLLM's registry key), NVLM_D_Model vLLM's class. */
static const char *const nvlm_archs[] = {"NVLM_D", "NVLM_D_Model", NULL};
const sm_family shardmap_family_nvlm_d = {
    IVC_FAMILY_OF("nvlm_d", nvlm_archs, nvlm_rules, nvlm_check, nvlm_float_at_tp),
    .check_names = nvlm_names, .vis_dummy_heads = NVLM_DUMMY_HEADS,
    .vis_heads_key = "vision_config.num_attention_heads plus its dummy heads"};
