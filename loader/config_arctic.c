/*
 * config_arctic.c — Snowflake Arctic's config keys (model_type arctic, ArcticForCausalLM:
 * Snowflake/snowflake-arctic-base / -instruct; remote code), read as vLLM's ArcticConfig
 * (vllm/transformers_utils/configs/arctic.py, a copy of the remote configuration_arctic.py)
 * and arctic.py read them. The Llama-like dims are read for every family (ArcticConfig's
 * defaults for those: config_defaults_classic.c).
 *
 *   key                  ArcticConfig  here
 *   hidden_act           "silu"        must be silu: vLLM's ArcticMLP raises on any other
 *   tie_word_embeddings  false         must be false: arctic.py builds its own lm_head and
 *                                      never ties it to embed_tokens
 *   use_residual         (none)        required, a boolean: ArcticDecoderLayer reads
 *                                      config.use_residual, which the class never sets (an
 *                                      AttributeError when config.json leaves it out)
 *   moe_layer_frequency  2             1 or 2: arctic.py's load_weights maps the dense MLP of
 *                                      even layers only and the experts of any layer (whose
 *                                      names it collects from the odd layers), so a dense odd
 *                                      layer (frequency > 2) would not load
 *   quantization_config  None          quant_method deepspeedfp refused (vLLM's
 *                                      DeepSpeedFPParameter stacks, not a checkpoint format
 *                                      this reads); ArcticConfig's own `quantization` (its
 *                                      deepspeedfp settings) refused when not null
 *   num_local_experts    8             >= 1 (every MoE layer's experts)
 *   num_experts_per_tok  1             in [1, num_local_experts]
 *   moe_intermediate_size (none)       must be absent: ArcticMoE's experts are
 *                                      intermediate_size wide
 *   rope_scaling         (none)        must be null or absent: ArcticAttention's get_rope
 *                                      takes no scaling
 *   sliding_window       None          must be null or absent: ArcticAttention builds no
 *                                      sliding window
 *
 * parallel_attn_mlp_res, the capacity factors, enable_expert_tensor_parallelism and
 * moe_token_dropping are not read (vLLM's arctic.py does not).
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* A key vLLM's arctic.py would ignore or cannot run, refused unless absent or null. */
static int arctic_null(json_t *v, const char *key, const char *why, wt_errbuf *err)
{
	json_t *x = json_object_get(v, key);
	if (x == NULL || json_is_null(x))
		return WT_OK;
	return wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s is not null; %s", key, why);
}

static int arctic_quant(json_t *v, wt_errbuf *err)
{
	json_t *q = json_object_get(v, "quantization_config");
	json_t *m = json_is_object(q) ? json_object_get(q, "quant_method") : NULL;
	if (json_is_string(m) && strcmp(json_string_value(m), "deepspeedfp") == 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: quantization_config.quant_method deepspeedfp; "
		                 "vLLM's arctic.py quantizes its expert stacks at load time "
		                 "(DeepSpeedFPParameter), not a checkpoint format read here: give "
		                 "the 16-bit checkpoint without quantization_config");
	return arctic_null(v, "quantization",
	                   "ArcticConfig's deepspeedfp settings are not a checkpoint format read "
	                   "here: give the 16-bit checkpoint with quantization null",
	                   err);
}

/* The experts: ArcticConfig's defaults for absent keys (8, top-1), the bounds vLLM's
 * ArcticMoE needs, and the expert width intermediate_size alone. */
static int arctic_experts(json_t *v, wt_errbuf *err)
{
	int64_t E = 8, k = 1;
	int rv = config_get_int(v, "num_local_experts", 8, 0, &E, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "num_experts_per_tok", 1, 0, &k, err);
	if (rv != WT_OK)
		return rv;
	if (E < 1 || k < 1 || k > E)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_local_experts %lld, num_experts_per_tok %lld; "
		                 "Arctic routes each token to between 1 and num_local_experts "
		                 "(>= 1) experts: fix the keys",
		                 (long long)E, (long long)k);
	if (json_object_get(v, "moe_intermediate_size") != NULL)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: moe_intermediate_size is set; vLLM's ArcticMoE sizes "
		    "its experts by intermediate_size: remove the key");
	return WT_OK;
}

int config_arctic_keys(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act is not \"silu\"; vLLM's ArcticMLP runs "
		                 "only silu: give \"silu\" or remove the key");
	int rv = config_refuse_bool(v, "tie_word_embeddings", false, true,
	                            "vLLM's arctic.py never ties lm_head to embed_tokens: give "
	                            "false with the checkpoint's lm_head.weight",
	                            err);
	json_t *res = json_object_get(v, "use_residual");
	if (rv == WT_OK && !json_is_boolean(res))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: use_residual %s; vLLM's arctic.py reads "
		                 "config.use_residual, which ArcticConfig does not default: give "
		                 "true (the residual MLP beside each MoE) or false",
		                 res == NULL ? "is missing" : "is not a boolean");
	int64_t freq = 2;
	if (rv == WT_OK)
		rv = config_get_int(v, "moe_layer_frequency", 2, 1, &freq, err);
	if (rv == WT_OK && freq > 2)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: moe_layer_frequency %lld; vLLM's arctic.py loads the "
		    "dense MLP of even layers only, so only 1 (every layer MoE) or 2 "
		    "(odd layers MoE) load: give 1 or 2",
		    (long long)freq);
	if (rv == WT_OK)
		rv = arctic_experts(v, err);
	if (rv == WT_OK)
		rv = arctic_quant(v, err);
	if (rv == WT_OK)
		rv = arctic_null(v, "rope_scaling",
		                 "vLLM's ArcticAttention applies no rope scaling: remove it", err);
	if (rv == WT_OK)
		rv = arctic_null(
		    v, "sliding_window",
		    "vLLM's ArcticAttention attends over the whole sequence: remove it", err);
	return rv;
}

int config_parse_arctic(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int rv = config_get_bool(root, "use_residual", false, &c->arctic_residual, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "moe_layer_frequency", 2, 1, &c->arctic_moe_freq, err);
	return rv;
}
