/*
 * config_mtp.c — an MTP draft's config keys (architectures DeepSeekMTPModel: the name vLLM's
 * speculative config gives a DeepSeek-V3 / R1 config, whose model_type it rewrites to
 * deepseek_mtp; the config.json is the target's with that name, model_type deepseek_v3 or
 * deepseek_mtp), read as vLLM's deepseek_mtp.py reads them:
 *
 *   key                        vLLM's reading                        here
 *   num_nextn_predict_layers   n_predict; the MTP layers             required, an integer >= 1
 *                              num_hidden_layers .. + it - 1         (missing, null, 0:
 *                                                                    WT_ECORRUPT, no layer)
 *   index_topk                 DeepSeek-V3.2's indexer in the layer  refused (WT_EUNSUPPORTED):
 *                              (the deepseek_mtp.py followed builds  the V3.2 MTP layer is not
 *                              V3's decoder layer)                   cut here
 *   tie_word_embeddings        never read: shared_head.head is each  read as false
 *                              layer's own ParallelLMHead
 *
 * Every other key is DeepSeek-V3's (config.c, as for DeepseekV3ForCausalLM). GLM-4.5 / 4.6's
 * (Glm4MoeMTPModel: vLLM's speculative config renames a Glm4MoeForCausalLM config so, model_type
 * glm4_moe_mtp; glm4_moe_mtp.py) alike: num_nextn_predict_layers required >= 1, untied, every
 * other key Glm4MoeConfig's (model_type glm4_moe: its class defaults, config_defaults.c).
 * MiMo's (MiMoMTPModel: vLLM's speculative config renames a MiMoForCausalLM config so and sets
 * num_hidden_layers 0; mimo_mtp.py) alike: num_nextn_predict_layers required >= 1 (the
 * model.mtp_layers.{n} it builds), untied (the draft's own lm_head), every other key MiMoConfig's
 * (model_type mimo: config_mimo.c, Qwen2Config's class defaults).
 * Qwen3-Next's (Qwen3NextMTP: vLLM's speculative config renames a qwen3_next config so, model_type
 * qwen3_next_mtp; qwen3_next_mtp.py) alike but for the count: num_nextn_predict_layers may be
 * absent (Qwen3-Next's config has none) and is then 1, as the draft reads getattr(config,
 * "num_nextn_predict_layers", 1); present, an integer >= 1. Untied (the draft's own lm_head),
 * every other key Qwen3NextConfig's (model_type qwen3_next: its class defaults).
 * ERNIE 4.5 MoE's (ErnieMTPModel: vLLM's speculative config renames an ernie4_5_moe config so,
 * model_type ernie_mtp; ernie_mtp.py) alike: num_nextn_predict_layers required >= 1 (vLLM reads
 * config.num_nextn_predict_layers with no default; the planner takes 1 only: the draft loads the
 * checkpoint's index 0 alone); tie_word_embeddings read as the target's (ErnieMTP ties its
 * lm_head to the embedding when it is true; Ernie4_5_MoeConfig's default true), every other key
 * Ernie4_5_MoeConfig's (model_type ernie4_5_moe: its class defaults).
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static bool is_mtp(const char *arch)
{
	return arch != NULL &&
	       (strcmp(arch, "DeepSeekMTPModel") == 0 || strcmp(arch, "Glm4MoeMTPModel") == 0 ||
	        strcmp(arch, "MiMoMTPModel") == 0 || strcmp(arch, "Qwen3NextMTP") == 0 ||
	        strcmp(arch, "ErnieMTPModel") == 0);
}

/* The drafts whose MTP layer count has a default when config.json lacks the key (vLLM's
 * getattr(config, "num_nextn_predict_layers", 1)). */
static bool count_defaults(const char *arch)
{
	return strcmp(arch, "Qwen3NextMTP") == 0;
}

int config_parse_mtp(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	c->mtp_layers = 0;
	if (c->architecture != NULL && strcmp(c->architecture, "KimiLinearForCausalLM") == 0)
		return config_get_int(root, "num_nextn_predict_layers", 0, 0, &c->kv_nextn, err);
	if (!is_mtp(c->architecture))
		return WT_OK;
	json_t *n = json_object_get(root, "num_nextn_predict_layers");
	if ((n == NULL || json_is_null(n)) && !count_defaults(c->architecture))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: %s needs num_nextn_predict_layers (vLLM builds the "
		    "MTP layers num_hidden_layers .. + num_nextn_predict_layers - 1 and "
		    "has none without it); give the target's count (DeepSeek-V3, GLM-4.5, "
		    "MiMo-7B, ERNIE-4.5: 1)",
		    c->architecture);
	int rv = config_get_int(root, "num_nextn_predict_layers", 1, 1, &c->mtp_layers, err);
	if (rv != WT_OK)
		return rv;
	if (strcmp(c->architecture, "DeepSeekMTPModel") == 0 &&
	    json_object_get(root, "index_topk") != NULL)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: index_topk makes this DeepSeek-V3.2, whose MTP layer "
		    "holds the lightning indexer; the deepseek_mtp family cuts V3's MTP "
		    "layer (vLLM's deepseek_mtp.py without the indexer) and not V3.2's: "
		    "serve the target (DeepseekV32ForCausalLM) without the draft");
	if (strcmp(c->architecture, "ErnieMTPModel") != 0) /* ErnieMTP ties as its config says */
		c->tie_word_embeddings = false;
	return WT_OK;
}
