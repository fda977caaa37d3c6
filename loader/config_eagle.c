/*
 * config_eagle.c — an EAGLE-3 draft's config keys (architectures Eagle3LlamaForCausalLM,
 * LlamaForCausalLMEagle3, Eagle3Qwen2_5vlForCausalLM, Eagle3Qwen3vlForCausalLM: the names
 * vLLM's registry maps onto llama_eagle3.py's Eagle3LlamaForCausalLM; their config.json is a
 * LlamaConfig, model_type llama, plus the draft's keys), read as that file reads them:
 *
 *   key                               vLLM's reading                      here
 *   draft_vocab_size                  getattr None -> vocab_size          lm_head's rows
 *   target_hidden_size                hasattr -> fc in 3 x it, else 3 x   fc's columns (null
 *                                     hidden_size                         refused)
 *   eagle_config.use_aux_hidden_state "in" the dict -> its value, else    fc built / dropped
 *                                     true
 *   attention_bias                    qkv_proj's bias; o_proj's with bias q/k/v, o_proj biases
 *   bias                              o_proj's bias (`attention_bias or   o_proj's bias
 *                                     bias`)
 *   mlp_bias                          the MLP's biases                    (config.c)
 *   hidden_act                        LlamaMLP: silu only                 other refused
 *   norm_before_residual              the forward pass only               not read
 *   tie_word_embeddings               never read: lm_head is the draft's  read as false
 *   speculators_model_type            vLLM converts RedHat's speculators  refused: convert it
 *                                     format (transformer_layer_config)
 *
 * and an EAGLE-1 draft's (EagleLlamaForCausalLM, llama_eagle.py: a LlamaConfig): hidden_act silu
 * only, Llama's bias keys as llama's; no lm_head of its own (tie_word_embeddings read as false).
 * add_para_norm (HASS) is not read: the llama_eagle.py followed here builds no such norms.
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static const char *const eagle3_archs[] = {"Eagle3LlamaForCausalLM", "LlamaForCausalLMEagle3",
                                           "Eagle3Qwen2_5vlForCausalLM",
                                           "Eagle3Qwen3vlForCausalLM"};

bool config_is_eagle3(const char *arch)
{
	for (size_t i = 0; arch != NULL && i < sizeof(eagle3_archs) / sizeof(eagle3_archs[0]); i++)
		if (strcmp(arch, eagle3_archs[i]) == 0)
			return true;
	return false;
}

/* eagle_config: absent or null, or an object whose use_aux_hidden_state (when given) is a
 * boolean. */
static int eagle_aux(json_t *root, bool *aux, wt_errbuf *err)
{
	json_t *ec = json_object_get(root, "eagle_config");
	*aux = true;
	if (ec == NULL || json_is_null(ec))
		return WT_OK;
	if (!json_is_object(ec))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: eagle_config is not an object (vLLM's "
		                 "llama_eagle3.py reads use_aux_hidden_state from it)");
	json_t *u = json_object_get(ec, "use_aux_hidden_state");
	if (u == NULL)
		return WT_OK;
	if (!json_is_boolean(u))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: eagle_config.use_aux_hidden_state is not a boolean "
		                 "(true: the draft's fc over 3 target hidden states; false: none)");
	*aux = json_is_true(u);
	return WT_OK;
}

/* hidden_act: silu or absent (vLLM's LlamaMLP raises on any other) */
static int eagle_act(json_t *root, wt_errbuf *err)
{
	json_t *act = json_object_get(root, "hidden_act");
	if (act != NULL && !json_is_null(act) &&
	    (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act is not \"silu\"; vLLM's LlamaMLP (the "
		                 "EAGLE draft's layers) runs only silu: give \"silu\"");
	return WT_OK;
}

/* EagleLlamaForCausalLM (llama_eagle.py): LlamaConfig's keys; no lm_head of its own, so nothing
 * tied */
static int eagle1_keys(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	c->tie_word_embeddings = false;
	return eagle_act(root, err);
}

static int eagle_keys(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int rv = eagle_act(root, err);
	if (rv != WT_OK)
		return rv;
	rv = config_get_int(root, "draft_vocab_size", c->vocab_size, 1, &c->draft_vocab_size, err);
	json_t *th = json_object_get(root, "target_hidden_size");
	if (rv == WT_OK && th != NULL && json_is_null(th))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: target_hidden_size is null (vLLM's llama_eagle3.py "
		                 "sizes fc by it whenever the key exists): give the target's "
		                 "hidden_size or remove the key");
	if (rv == WT_OK)
		rv =
		    config_get_int(root, "target_hidden_size", -1, 1, &c->eagle_target_hidden, err);
	if (rv == WT_OK)
		rv = eagle_aux(root, &c->eagle_aux, err);
	bool bias = false;
	if (rv == WT_OK)
		rv = config_get_bool(root, "bias", false, &bias, err);
	/* LlamaAttention's bias_o_proj is `attention_bias or bias`; the draft's own qkv_proj
	 * takes attention_bias alone (config.c read it) */
	c->attention_out_bias = c->attention_bias || bias;
	/* Eagle3LlamaForCausalLM builds its own ParallelLMHead and never ties it, whatever
	 * tie_word_embeddings says (the manifest must not say tied) */
	c->tie_word_embeddings = false;
	return rv;
}

int config_parse_eagle(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	c->draft_vocab_size = 0;
	c->eagle_target_hidden = -1;
	c->eagle_aux = false;
	int rv = config_parse_mtp(root, c, err); /* the MTP drafts: config_mtp.c */
	if (rv != WT_OK)
		return rv;
	if (json_object_get(root, "speculators_model_type") != NULL)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: speculators_model_type (the speculators format: "
		    "transformer_layer_config, speculators_config) is not read here; give the "
		    "draft an Eagle3LlamaForCausalLM config.json (LlamaConfig keys with "
		    "draft_vocab_size, target_hidden_size) as vLLM's conversion writes it");
	if (c->architecture != NULL && strcmp(c->architecture, "EagleLlamaForCausalLM") == 0)
		return eagle1_keys(root, c, err);
	return config_is_eagle3(c->architecture) ? eagle_keys(root, c, err) : WT_OK;
}
