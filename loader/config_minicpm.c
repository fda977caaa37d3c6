/*
 * config_minicpm.c — MiniCPM's config keys (model_type minicpm, MiniCPMForCausalLM: the remote
 * MiniCPMConfig, openbmb's configuration_minicpm.py), checked as vLLM's minicpm.py builds the
 * model. The keys are Llama's own; the class defaults are config_defaults_classic.c's, the tie
 * the family's tie_default. scale_emb, scale_depth and dim_model_base are the forward pass's
 * (the reference reads them), not the layout's.
 *
 *   key                 MiniCPMConfig   here
 *   hidden_act          "silu"          must be silu: vLLM's MiniCPMMLP raises on another
 *   attention_bias      false           must not be true: vLLM builds q/k/v/o_proj without
 *                                       biases and drops a checkpoint's, a different model
 *   num_experts         absent (0)      0: dense MLPs; > 0: MiniCPM-MoE, every layer's MLP
 *                                       vLLM's MiniCPMMoE (getattr(config, "num_experts", 0))
 *   num_experts_per_tok absent          required with num_experts > 0 (vLLM reads
 *                                       config.num_experts_per_tok, the class has no
 *                                       default), in [1, num_experts]
 *   moe_intermediate_size absent        must be absent: MiniCPMMoE's experts are
 *                                       intermediate_size wide
 *   num_local_experts, n_routed_experts, moe_num_experts
 *                       absent          must be absent: vLLM reads num_experts alone
 *   head_dim            absent          must be hidden_size / num_attention_heads: vLLM's
 *                                       MiniCPMAttention never reads the key
 *
 * MiniCPM3 (model_type minicpm3, MiniCPM3ForCausalLM: the remote MiniCPM3Config, openbmb's
 * MiniCPM3-4B configuration_minicpm.py) shares the first two rows, refuses num_experts other
 * than 0 (vLLM's minicpm3.py builds its layers on MiniCPMDecoderLayer, whose ffn is MiniCPMMoE
 * when num_experts > 0: no release has it, and the MiniCPM3 table has no experts), and adds:
 *
 *   key                 MiniCPM3Config  here
 *   q_lora_rank         768             null refused: the remote config sets 768 when the key
 *                                       is absent, and the null path (q_proj) is no release's
 *   v_head_dim          None            None / absent: qk_nope_head_dim (as the class does)
 *   head_dim            nope + rope     not read (vLLM's MiniCPM3Attention ignores it)
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* An integer key of v, or dflt when absent or null; false when it is not a usable integer
 * (the field readers name it later). */
static bool int_or(json_t *v, const char *key, json_int_t dflt, json_int_t *out)
{
	json_t *x = json_object_get(v, key);
	if (x == NULL || json_is_null(x)) {
		*out = dflt;
		return true;
	}
	if (!json_is_integer(x) || json_integer_value(x) < 1 ||
	    json_integer_value(x) > CONFIG_INT_MAX)
		return false;
	*out = json_integer_value(x);
	return true;
}

static int minicpm_head_dim(json_t *v, wt_errbuf *err)
{
	json_int_t hid, H, d;
	json_t *hd = json_object_get(v, "head_dim");
	if (hd == NULL || json_is_null(hd) || !int_or(v, "head_dim", 0, &d) ||
	    !int_or(v, "hidden_size", 4096, &hid) || !int_or(v, "num_attention_heads", 32, &H))
		return WT_OK;
	if (d != hid / H)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: head_dim %lld is not hidden_size / num_attention_heads "
		    "= %lld; vLLM's minicpm.py never reads head_dim: remove the key",
		    (long long)d, (long long)(hid / H));
	return WT_OK;
}

/* What MiniCPM and MiniCPM3 refuse alike: hidden_act, attention_bias. */
static int minicpm_common(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act is not \"silu\"; vLLM's minicpm.py runs "
		                 "only silu: give \"silu\" or remove the key");
	bool bias = false;
	int rv = config_get_bool(v, "attention_bias", false, &bias, err);
	if (rv != WT_OK)
		return rv;
	if (bias)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: attention_bias is true; vLLM's minicpm.py builds "
		                 "q/k/v/o_proj without biases (no release has them): give false or "
		                 "remove the key");
	return WT_OK;
}

/* MiniCPM-MoE's keys (num_experts > 0: vLLM's MiniCPMMoE in every layer). */
static int minicpm_experts(json_t *v, wt_errbuf *err)
{
	static const char *const other[] = {"num_local_experts", "n_routed_experts",
	                                    "moe_num_experts", "moe_intermediate_size"};
	for (size_t k = 0; k < sizeof(other) / sizeof(other[0]); k++)
		if (json_object_get(v, other[k]) != NULL)
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "config.json: %s on MiniCPM; vLLM's minicpm.py reads "
			                 "num_experts and sizes the experts by intermediate_size: "
			                 "remove the key",
			                 other[k]);
	int64_t E = 0, k = 0;
	int rv = config_get_int(v, "num_experts", 0, 0, &E, err);
	if (rv != WT_OK || E == 0)
		return rv;
	if (json_object_get(v, "num_experts_per_tok") == NULL)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: num_experts %lld without num_experts_per_tok; vLLM's "
		    "MiniCPMMoE reads its top-k from it (MiniCPMConfig has no "
		    "default): give it",
		    (long long)E);
	if ((rv = config_get_int(v, "num_experts_per_tok", 0, 0, &k, err)) != WT_OK)
		return rv;
	if (k < 1 || k > E)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_experts_per_tok %lld; MiniCPM-MoE routes each "
		                 "token to between 1 and num_experts (%lld) experts: fix the key",
		                 (long long)k, (long long)E);
	return WT_OK;
}

int config_minicpm_keys(json_t *v, wt_errbuf *err)
{
	int rv = minicpm_common(v, err);
	if (rv == WT_OK)
		rv = minicpm_experts(v, err);
	return rv != WT_OK ? rv : minicpm_head_dim(v, err);
}

int config_minicpm3_keys(json_t *v, wt_errbuf *err)
{
	int rv = minicpm_common(v, err);
	if (rv != WT_OK)
		return rv;
	int64_t E = 0;
	if ((rv = config_get_int(v, "num_experts", 0, 0, &E, err)) != WT_OK)
		return rv;
	if (E != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_experts is %lld; weightd cuts MiniCPM3 without "
		                 "experts (MiniCPM-MoE's are cut for MiniCPMForCausalLM only; no "
		                 "MiniCPM3 release has them): give 0 or remove the key",
		                 (long long)E);
	json_t *q = json_object_get(v, "q_lora_rank");
	if (q != NULL && json_is_null(q))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: q_lora_rank is null; weightd cuts MiniCPM3 with "
		    "q_a_proj / q_b_proj only (MiniCPM3Config's default 768): give the "
		    "rank or remove the key");
	json_t *vh = json_object_get(v, "v_head_dim");
	if (vh != NULL && !json_is_null(vh))
		return WT_OK;
	json_int_t nope = 64; /* MiniCPM3Config's qk_nope_head_dim */
	if (!int_or(v, "qk_nope_head_dim", 64, &nope))
		return WT_OK; /* the field reader names it */
	if (json_object_set_new(v, "v_head_dim", json_integer(nope)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}
