/*
 * family_mtp.c — MTP drafts: a model's own multi-token-prediction layers served as the
 * speculative-decoding draft, cut as vLLM's deepseek_mtp.py loads them (DeepSeekMTPModel: the
 * name vLLM's speculative config gives a DeepSeek-V3 / R1 config, model_type deepseek_mtp,
 * n_predict = num_nextn_predict_layers; it loads the target's own checkpoint).
 *
 * Which tensors: only the layers num_hidden_layers .. num_hidden_layers +
 * num_nextn_predict_layers - 1 (get_spec_layer_idx_from_weight_name); every other name (the
 * layers below, model.embed_tokens, model.norm, lm_head, a layer past the MTP ones) is skipped,
 * as vLLM's load_weights skips it. Names: _rewrite_spec_layer_name's. An MTP layer's own
 * modules keep their names (enorm, hnorm: RMSNorms, replicated; eh_proj: an nn.Linear
 * [hid, 2 x hid] without bias, whole on every rank and never quantized: no quant_config reaches
 * it; shared_head.norm replicated; shared_head.head: a ParallelLMHead over vocab_size, padded
 * vocabulary rows, never tied); its embed_tokens is the model's shared VocabParallelEmbedding
 * model.embed_tokens (padded vocabulary rows), loaded from the first MTP layer only (the later
 * layers' embed_tokens skipped: "MTP modules share the embedding layer"); every other tensor
 * is the decoder layer's (DeepseekV2DecoderLayer) under model.layers.N.mtp_block., cut as the
 * deepseek_v3 family cuts that layer (MLA, the MoE or dense MLP by first_k_dense_replace /
 * moe_layer_freq at index N, the same bytes).
 *
 * GLM-4.5 / 4.6's (Glm4MoeMTPModel: vLLM's speculative config renames a Glm4MoeForCausalLM
 * config so; glm4_moe_mtp.py) is the same module around Glm4MoeDecoderLayer: the MTP layer's
 * decoder layer cut as the glm4_moe family cuts it (q/k/v fused with their biases, q_norm /
 * k_norm with use_qk_norm, V3's MoE rows from first_k_dense_replace on).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "shardmap/family_rules.h"

/* The MTP layer's own modules (vLLM's spec_layer_weight_names); embed_tokens is the shared one
 * (required in the first MTP layer: mtp_check). */
#define MTP_RULES_OWN                                                                              \
	SM_RULE(SM_LAYER "enorm.weight", SM_LAYER "enorm.weight", SM_K_REPL, 0, SM_U_NONE,         \
	        SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),                                               \
	    SM_RULE(SM_LAYER "hnorm.weight", SM_LAYER "hnorm.weight", SM_K_REPL, 0, SM_U_NONE,     \
	            SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),                                           \
	    SM_RULE(SM_LAYER "eh_proj.weight", SM_LAYER "eh_proj.weight", SM_K_REPL, 0, SM_U_NONE, \
	            SM_C_ALL, 0, 2, SM_D_HID, SM_D_HID2),                                          \
	    SM_RULE(SM_LAYER "shared_head.norm.weight", SM_LAYER "shared_head.norm.weight",        \
	            SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),                  \
	    SM_RULE(SM_LAYER "shared_head.head.weight", SM_LAYER "shared_head.head.weight",        \
	            SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),                   \
	    SM_RULE(SM_LAYER "embed_tokens.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0,    \
	            SM_U_NONE, SM_C_ALL, SM_F_OPT, 2, SM_D_V, SM_D_HID)

/* DeepSeek-V3's decoder layer (family_deepseek.c's rows without the top-level ones). */
static const sm_rule deepseek_mtp_rules[] = {
    MTP_RULES_OWN,
    SM_RULES_LNORM,
    SM_RULES_MLA("self_attn."),
    DEEPSEEK_RULES_MOE,
    SM_RULE_ROUTER("mlp.gate.e_score_correction_bias", 1, SM_D_E, SM_D_ANY),
};

/* GLM-4.5 / 4.6's (Glm4MoeMTPModel, glm4_moe_mtp.py): the same MTP modules around
 * Glm4MoeDecoderLayer, family_deepseek.c's glm4_moe rows without the top-level ones (q/k/v
 * fused with their optional biases, o_proj by columns, q_norm / k_norm with use_qk_norm, V3's
 * MoE rows). */
#define MTP_ATT SM_LAYER "self_attn."
static const sm_rule glm4_moe_mtp_rules[] = {
    MTP_RULES_OWN,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULE(MTP_ATT "q_norm.weight", MTP_ATT "q_norm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_QKNORM,
            0, 1, SM_D_HD, SM_D_ANY),
    SM_RULE(MTP_ATT "k_norm.weight", MTP_ATT "k_norm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_QKNORM,
            0, 1, SM_D_HD, SM_D_ANY),
    DEEPSEEK_RULES_MOE,
    SM_RULE_ROUTER("mlp.gate.e_score_correction_bias", 1, SM_D_E, SM_D_ANY),
};

static const char *const mtp_own[] = {"enorm.", "hnorm.", "eh_proj.", "shared_head.",
                                      "embed_tokens."};

bool shardmap_mtp_rename(char *buf, size_t cap)
{
	static const char lp[] = "model.layers.";
	if (strncmp(buf, lp, sizeof(lp) - 1) != 0)
		return true; /* model.embed_tokens.weight */
	char *s = buf + sizeof(lp) - 1;
	while (*s >= '0' && *s <= '9')
		s++;
	if (*s != '.')
		return true;
	s++;
	for (size_t k = 0; k < sizeof(mtp_own) / sizeof(mtp_own[0]); k++)
		if (strncmp(s, mtp_own[k], strlen(mtp_own[k])) == 0)
			return true;
	static const char mb[] = "mtp_block.";
	size_t n = strlen(buf), at = (size_t)(s - buf);
	if (n + sizeof(mb) > cap)
		return false;
	memmove(s + sizeof(mb) - 1, s, n - at + 1);
	memcpy(s, mb, sizeof(mb) - 1);
	return true;
}

/* The index of layer model.layers.N. that cn names, or -1 (also for a leading zero: vLLM's
 * startswith("model.layers.{N}.") matches none of its layers). */
static int64_t mtp_layer(const char *cn)
{
	static const char lp[] = "model.layers.";
	if (strncmp(cn, lp, sizeof(lp) - 1) != 0)
		return -1;
	const char *s = cn + sizeof(lp) - 1;
	if (s[0] == '0' && s[1] >= '0' && s[1] <= '9')
		return -1;
	int64_t v = 0;
	int n = 0;
	for (; *s >= '0' && *s <= '9' && n < 10; s++, n++)
		v = v * 10 + (*s - '0');
	return n > 0 && n < 10 && *s == '.' ? v : -1;
}

/* What vLLM's load_weights skips: every name outside the MTP layers, and the embed_tokens of an
 * MTP layer past the first (only the first is loaded into the shared model.embed_tokens). */
static bool mtp_drop(const ckpt_config *c, const char *cn)
{
	int64_t i = mtp_layer(cn), lo = c->num_hidden_layers;
	if (i < lo || i >= lo + c->mtp_layers)
		return true;
	const char *leaf = strchr(cn + 13, '.') + 1;
	return i > lo && strncmp(leaf, "embed_tokens.", 13) == 0;
}

/* config.json's MTP layer count (the loader refuses it missing or 0; a plan of a config the
 * loader did not read is refused here too). */
static int mtp_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->mtp_layers <= 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: an MTP draft (%s) needs num_nextn_predict_layers >= 1 "
		    "(vLLM builds the MTP layers num_hidden_layers .. + "
		    "num_nextn_predict_layers - 1); give the target's count "
		    "(DeepSeek-V3, GLM-4.5: 1)",
		    c->architecture ? c->architecture : "?");
	return WT_OK;
}

/* Before any tensor is mapped (the layer_dims hook, which leaves every layer the model's
 * sizes): the checkpoint holds the first MTP layer at all (a release without its MTP module
 * has no draft), and that layer's embed_tokens (the shared embedding vLLM loads from it). */
static int mtp_present(const ckpt *c, sm_layer_dims **out, wt_errbuf *err)
{
	*out = NULL;
	const ckpt_config *cfg = ckpt_get_config(c);
	int rv = mtp_check(cfg, err);
	if (rv != WT_OK)
		return rv;
	int64_t lo = cfg->num_hidden_layers;
	bool any = false;
	for (size_t k = 0; k < ckpt_n_tensors(c) && !any; k++)
		any = mtp_layer(ckpt_tensor_at(c, k)->name) == lo;
	if (!any)
		return wt_seterr(
		    err, WT_ENOTFOUND,
		    "no tensor 'model.layers.%" PRId64
		    ".*': the checkpoint holds no MTP layer (num_hidden_layers %" PRId64
		    ", num_nextn_predict_layers %" PRId64
		    "), which an MTP draft (%s) loads; serve a checkpoint with its MTP "
		    "module (the full release), or the target alone",
		    lo, lo, cfg->mtp_layers, cfg->architecture ? cfg->architecture : "?");
	char emb[64];
	snprintf(emb, sizeof(emb), "model.layers.%" PRId64 ".embed_tokens.weight", lo);
	if (ckpt_find(c, emb) == NULL)
		return wt_seterr(err, WT_ENOTFOUND,
		                 "tensor '%s': missing from the checkpoint; vLLM's MTP draft loads "
		                 "its shared model.embed_tokens from the first MTP layer's "
		                 "embed_tokens; add it (a copy of the target's model.embed_tokens)",
		                 emb);
	return WT_OK;
}

static const char *const deepseek_mtp_archs[] = {"DeepSeekMTPModel", NULL};
static const char *const glm4_moe_mtp_archs[] = {"Glm4MoeMTPModel", NULL};

const sm_family shardmap_family_deepseek_mtp = {
    .name = "deepseek_mtp",
    .archs = deepseek_mtp_archs,
    .rules = deepseek_mtp_rules,
    .n_rules = SM_NRULES(deepseek_mtp_rules),
    .layer_is_moe = shardmap_moe_deepseek,
    .layer_prefix = "model.layers.",
    .drop_canon = mtp_drop,
    .layer_dims = mtp_present,
    .mtp = true,
};

/* GLM-4.5's MTP layer (model.layers.92.* in GLM-4.5, .46.* in GLM-4.5-Air): Glm4MoeDecoderLayer's
 * MoE from first_k_dense_replace on. */
const sm_family shardmap_family_glm4_moe_mtp = {
    .name = "glm4_moe_mtp",
    .archs = glm4_moe_mtp_archs,
    .rules = glm4_moe_mtp_rules,
    .n_rules = SM_NRULES(glm4_moe_mtp_rules),
    .layer_is_moe = shardmap_moe_glm4,
    .layer_prefix = "model.layers.",
    .drop_canon = mtp_drop,
    .layer_dims = mtp_present,
    .mtp = true,
};
