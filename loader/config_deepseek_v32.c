/*
 * config_deepseek_v32.c — DeepSeek-V3.2's config keys (model_type deepseek_v32,
 * DeepseekV32ForCausalLM: deepseek-ai/DeepSeek-V3.2-Exp, DeepSeek-V3.2). transformers 4.57.1 has
 * no class for it; vLLM's config registry (vllm/transformers_utils/config.py) reads it with
 * transformers' DeepseekV3Config, whose keys and defaults are V3's (read as for
 * model_type deepseek_v3). The lightning indexer's keys are in no class: vLLM's deepseek_v2.py
 * switches the indexer on by hasattr(config, "index_topk") and reads the three as attributes,
 * so here each is required:
 *
 *   key              class default   here
 *   index_topk       (none)          required, an integer >= 1 (V3.2: 2048 tokens kept)
 *   index_n_heads    (none)          required, an integer >= 1 (V3.2: 64)
 *   index_head_dim   (none)          required, an integer >= 1 (V3.2: 128)
 *
 * A wrong type or a value below 1 is WT_ECORRUPT naming the key (config_get_int); a missing
 * one WT_ECORRUPT naming it and the fix. q_lora_rank (the indexer's wq_b input) is the
 * planner's check (family_deepseek.c).
 */
#include "loader/config_int.h"
#include "loader/loader.h"

static int dsv32_required(json_t *v, const char *key, int64_t example, wt_errbuf *err)
{
	int64_t n = -1;
	int rv = config_get_int(v, key, -1, 1, &n, err);
	if (rv != WT_OK)
		return rv;
	if (n < 1)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: model_type deepseek_v32 needs %s (vLLM's "
		    "deepseek_v2.py builds the lightning indexer from it; DeepseekV3Config "
		    "has no default): give it (DeepSeek-V3.2: %lld)",
		    key, (long long)example);
	return WT_OK;
}

int config_deepseek_v32_keys(json_t *v, wt_errbuf *err)
{
	int rv = dsv32_required(v, "index_topk", 2048, err);
	if (rv == WT_OK)
		rv = dsv32_required(v, "index_n_heads", 64, err);
	if (rv == WT_OK)
		rv = dsv32_required(v, "index_head_dim", 128, err);
	return rv;
}
