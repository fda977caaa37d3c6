/*
 * family_nano_vl.c — Nemotron Nano VL v2 (NemotronH_Nano_VL_V2, model_type
 * NemotronH_Nano_VL_V2: nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL, remote code; docs/format.md
 * section 2.7), cut as vLLM's nano_nemotron_vl.py / radio.py / intern_vit.py / nemotron_h.py
 * load it. Runtime names keep the checkpoint's (SHARDS.md).
 *
 * - The language model (language_model.*: load_weights strips the prefix and hands the rest to
 *   NemotronHForCausalLM built of text_config): the nemotron_h family's rules
 *   (SM_RULES_NEMOTRON_H) under language_model. (aliases language_model.backbone. /
 *   language_model.lm_head. / language_model.mtp. onto the canonical names), the same bytes
 *   as the nemotron_h family's ranks of the same weights; mtp.* dropped as there. An LM
 *   outside language_model. (bare backbone.* / lm_head.*) is refused: vLLM ignores it.
 * - The RADIO tower (vision_model.radio_model.*: RadioModel.load_weights, built WITHOUT the
 *   quantization config: nothing in it is quantized): model.patch_generator.embedder.weight
 *   (ViTPatchLinear [VE, 3 p^2], no bias), video_embedder.weight ([VE, 3 T p^2], a parameter
 *   only when video_temporal_patch_size T > 1: optional then, dropped when T is 1), pos_embed
 *   [1, N, VE] and cls_token.token [n, VE] whole (vLLM interpolates a pos_embed of another
 *   grid: N is not checked); per block model.blocks.{i}. (vLLM's model.encoder.layers.{i}.,
 *   RadioVisionEncoderLayer over InternVisionEncoderLayer): attn.qkv [3 VE, VE] and its bias
 *   (args.qkv_bias) by heads into [q_r; k_r; v_r] and attn.proj by columns (its bias whole)
 *   where the heads divide tp_size (InternParallelAttention's QKVParallelLinear /
 *   RowParallelLinear), else whole (InternSdpaAttention); q_norm / k_norm with
 *   qk_normalization; mlp.fc1 by rows with its bias, fc2 by columns (bias whole); norm1 /
 *   norm2 whole. Dropped as vLLM skips them: the blocks' ls1 / ls2, and every
 *   vision_model.radio_model.* name outside model.patch_generator. / model.blocks.
 *   (summary_idxs, input_conditioner.*, feature normalizers: no vLLM key).
 * - The projector mlp1 (nn.Sequential, load_weights' default_weight_loader): 0 RMSNorm [VM]
 *   (VM = vit_hidden_size x round(1 / downsample_ratio)^2), 1 Linear [projector_hidden_size,
 *   VM], 3 Linear [hid, projector_hidden_size], no biases; plain nn.Linear: whole on every
 *   rank, never quantized.
 * - The Parakeet sound encoder (sound*) is refused (not cut here).
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/families.h"
#include "shardmap/family_nemotron_h.h"

#define NV_RM "vision_model.radio_model."
#define NV_VT NV_RM "model."
#define NV_PG NV_VT "patch_generator."
#define NV_VL NV_VT "blocks."
#define NV_VB NV_VL "{i}."

/* A [d] tensor of every block, whole on every rank, under condition c. */
#define NV_VREPLD(n, c, d)                                                                         \
	SM_RULE(NV_VB n, NV_VB n, SM_K_REPL, 0, SM_U_NONE, c, SM_F_VIS, 1, d, SM_D_ANY)
#define NV_VREPL(n, c) NV_VREPLD(n, c, SM_D_VE)
/* A tensor whole on every rank, never quantized, under flags fl. */
#define NV_REPL(n, fl, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, fl, nd, d0, d1)

static const sm_rule nano_vl_rules[] = {
    SM_RULES_NEMOTRON_H,
    /* the 3 x p^2 (x T) columns are checked by nv_extra */
    NV_REPL(NV_PG "embedder.weight", 0, 2, SM_D_VE, SM_D_ANY),
    NV_REPL(NV_PG "video_embedder.weight", SM_F_OPT, 2, SM_D_VE, SM_D_ANY),
    SM_RULE3(NV_PG "pos_embed", NV_PG "pos_embed", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, SM_D_ONE,
             SM_D_ANY, SM_D_VE),
    NV_REPL(NV_PG "cls_token.token", 0, 2, SM_D_ANY, SM_D_VE),
    SM_RULE(NV_VB "attn.qkv.weight", NV_VB "attn.qkv.weight", SM_K_QKVFW, 0, SM_U_VHEADS, SM_C_ALL,
            SM_F_VIS, 2, SM_D_V3A, SM_D_VE),
    SM_RULE(NV_VB "attn.qkv.bias", NV_VB "attn.qkv.bias", SM_K_QKVFW, 0, SM_U_VHEADS, SM_C_IVQKVB,
            SM_F_VIS, 1, SM_D_V3A, SM_D_ANY),
    NV_VREPLD("attn.q_norm.weight", SM_C_IVQKN, SM_D_VA),
    NV_VREPLD("attn.k_norm.weight", SM_C_IVQKN, SM_D_VA),
    SM_RULE(NV_VB "attn.proj.weight", NV_VB "attn.proj.weight", SM_K_COLSW, 0, SM_U_VHEADS,
            SM_C_ALL, SM_F_VIS, 2, SM_D_VE, SM_D_VA),
    NV_VREPL("attn.proj.bias", SM_C_ALL),
    SM_RULE(NV_VB "mlp.fc1.weight", NV_VB "mlp.fc1.weight", SM_K_ROWS, 0, SM_U_VI, SM_C_ALL,
            SM_F_VIS, 2, SM_D_VI, SM_D_VE),
    SM_RULE(NV_VB "mlp.fc1.bias", NV_VB "mlp.fc1.bias", SM_K_ROWS, 0, SM_U_VI, SM_C_ALL, SM_F_VIS,
            1, SM_D_VI, SM_D_ANY),
    SM_RULE(NV_VB "mlp.fc2.weight", NV_VB "mlp.fc2.weight", SM_K_COLS, 0, SM_U_VI, SM_C_ALL,
            SM_F_VIS, 2, SM_D_VE, SM_D_VI),
    NV_VREPL("mlp.fc2.bias", SM_C_ALL),
    NV_VREPL("norm1.weight", SM_C_ALL),
    NV_VREPL("norm1.bias", SM_C_IVLN),
    NV_VREPL("norm2.weight", SM_C_ALL),
    NV_VREPL("norm2.bias", SM_C_IVLN),
    /* mlp1's projector_hidden_size is checked by nv_extra */
    NV_REPL("mlp1.0.weight", 0, 1, SM_D_VM, SM_D_ANY),
    NV_REPL("mlp1.1.weight", 0, 2, SM_D_ANY, SM_D_VM),
    NV_REPL("mlp1.3.weight", 0, 2, SM_D_HID, SM_D_ANY),
};

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* What RadioModel.load_weights skips: a radio_model.* name outside model.patch_generator. /
 * model.blocks. (no vLLM key), the blocks' layer scales ls1 / ls2; the video embedder when
 * video_temporal_patch_size is 1 (no parameter then). */
static bool nv_drop(const ckpt_config *c, const char *cn)
{
	if (!has_prefix(cn, NV_RM))
		return false;
	if (strcmp(cn, NV_PG "video_embedder.weight") == 0)
		return c->v_temporal_patch_size <= 1;
	if (has_prefix(cn, NV_PG))
		return false;
	if (!has_prefix(cn, NV_VL))
		return true;
	const char *dot = strchr(cn + strlen(NV_VL), '.');
	return dot != NULL && (has_prefix(dot, ".ls1") || has_prefix(dot, ".ls2")) &&
	       (dot[4] == '\0' || dot[4] == '.');
}

/* The loader's RADIO fields; the tower's heads; Nemotron-H's own checks. */
static int nv_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: %s needs model_type NemotronH_Nano_VL_V2 with its "
		    "vision_config (RADIO: args.model) and text_config (NemotronHConfig)",
		    c->architecture);
	if (c->v_hidden_size % c->v_num_attn_heads != 0)
		return shardmap_vision_heads_err("num_attention_heads", c->v_num_attn_heads,
		                                 c->v_hidden_size, err);
	return shardmap_nemotron_h_check(c, err);
}

/* A language model outside language_model. (vLLM's load_weights ignores it) or a sound
 * encoder (not cut here). */
static int nv_names(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	(void)c;
	static const char *const bare[] = {"backbone.", "lm_head.", "mtp."};
	for (size_t k = 0; k < ckpt_n_tensors(ck); k++) {
		const char *n = ckpt_tensor_at(ck, k)->name;
		if (has_prefix(n, "sound"))
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "tensor '%s': Nemotron Nano VL's Parakeet sound encoder "
			    "(sound_config) is not cut here; serve a checkpoint without "
			    "sound_encoder.* (the 12B v2 release has none)",
			    n);
		for (size_t b = 0; b < sizeof(bare) / sizeof(bare[0]); b++)
			if (has_prefix(n, bare[b]))
				return wt_seterr(
				    err, WT_EUNSUPPORTED,
				    "tensor '%s': NemotronH_Nano_VL_V2's language model is "
				    "language_model.* (vLLM's load_weights passes only those to "
				    "NemotronHForCausalLM and ignores '%s'); rename it to "
				    "language_model.%s, or serve a text checkpoint as "
				    "NemotronHForCausalLM",
				    n, n, n);
	}
	return WT_OK;
}

/* The patch Linears' 3 x T x patch_size^2 columns and mlp1's projector_hidden_size. */
static int nv_extra(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	const int64_t p2 =
	    3 * c->v_patch_size * c->v_patch_size; /* the loader: patch_size <= 1024 */
	const struct {
		const char *n;
		int dim;
		int64_t want;
		const char *what;
	} w[] = {
	    {NV_PG "embedder.weight", 1, p2, "3 x vision_config.patch_size^2"},
	    {NV_PG "video_embedder.weight", 1, p2 * c->v_temporal_patch_size,
	     "3 x video_temporal_patch_size x patch_size^2"},
	    {"mlp1.1.weight", 0, c->v_proj_in_dim, "projector_hidden_size"},
	    {"mlp1.3.weight", 1, c->v_proj_in_dim, "projector_hidden_size"},
	};
	for (size_t k = 0; k < sizeof(w) / sizeof(w[0]); k++) {
		const ckpt_tensor *t = ckpt_find(ck, w[k].n);
		if (t == NULL || t->ndim != 2 || t->shape[w[k].dim] == w[k].want ||
		    (k == 1 && c->v_temporal_patch_size <= 1)) /* skipped then */
			continue;
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': %s %" PRId64 ", but vLLM builds %s = %" PRId64
		                 "; the checkpoint does not match its config.json",
		                 w[k].n, w[k].dim ? "columns" : "rows", t->shape[w[k].dim],
		                 w[k].what, w[k].want);
	}
	return WT_OK;
}

static const char *const nano_vl_archs[] = {"NemotronH_Nano_VL_V2", NULL};
static const char *const nano_vl_aliases[] = {"language_model.backbone.",
                                              "backbone.",
                                              "language_model.lm_head.",
                                              "lm_head.",
                                              "language_model.mtp.",
                                              "mtp.",
                                              NULL};

/* text_config's tie_word_embeddings false (NemotronHConfig's; true refused as for Nemotron-H) */
const sm_family shardmap_family_nano_vl = {
    .name = "nano_vl",
    .archs = nano_vl_archs,
    .rules = nano_vl_rules,
    .n_rules = SM_NRULES(nano_vl_rules),
    .layer_prefix = "backbone.layers.",
    .layer_is_moe = shardmap_nemotron_h_moe,
    .check = nv_check,
    .check_names = nv_names,
    .check_extra = nv_extra,
    .drop_canon = nv_drop,
    .layer_is_linear = shardmap_nemotron_h_mamba,
    .linear_keys = "hybrid_override_pattern",
    .drop_prefix = "mtp.",
    .mamba = true,
    .mamba_use_keys = true,
    .aliases = nano_vl_aliases,
    .alias_runtime = true,
    .vision_gated = true,
    .vision_siglip = true,
    .internvl = true,
};
