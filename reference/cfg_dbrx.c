/*
 * cfg_dbrx.c — DBRX (DbrxForCausalLM, transformers 4.57.1 modeling_dbrx.py): its
 * config.json read as the Mixtral pass's switches.
 *
 * The math followed: Mixtral's decoder with nn.LayerNorm(d_model, bias=False) (eps 1e-5,
 * DbrxConfig has no epsilon key) for norm_1 (before attention), norm_2 (before the MoE) and
 * norm_f; attention through one Wqkv [q; k; v] (Phi-3's qkv_proj) whose output is clamped
 * to [-clip_qkv, clip_qkv] when attn_config.clip_qkv is set (OLMo's clip_qkv), then
 * rotate-half RoPE with attn_config.rope_theta (DbrxRotaryEmbedding's float base; vLLM's
 * dbrx.py builds it as int(rope_theta), the same for the released 500000), causal GQA over
 * kv_n_heads, out_proj; the router softmax(layer(h)) over moe_num_experts, its moe_top_k
 * largest divided by their sum (moe_normalize_expert_weights 1: the p-norm of p = 1 of
 * positive weights; another value, null included, is refused: vLLM's fused_moe
 * renormalises as p = 1 does), each expert silu(h w1_j^T) * (h v1_j^T) @ w2_j (ffn_act_fn
 * silu; the loader refuses another), lm_head untied.
 *
 * The nested keys are laid over the top level as the loader lays them (loader/config_dbrx.c's
 * config_dbrx_keys: num_experts_per_tok, rope_theta, clip_qkv, ...) before the common
 * fields are read (config_dbrx_keys through ref_json_keys, ckpt.c); the tensors are renamed onto
 * Mixtral's (dbrx.c).
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loader/config_int.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

int ref_cfg_dbrx(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	c->eps = 1e-5;
	c->act = REF_ACT_SILU;
	int rv = ref_cfg_clip_qkv(root, c, err);
	/* read in ffn_config itself: a null there (no renormalisation in transformers) is not
	 * laid over the top level */
	json_t *nw =
	    json_object_get(json_object_get(root, "ffn_config"), "moe_normalize_expert_weights");
	if (rv == WT_OK && nw != NULL && !(json_is_number(nw) && json_number_value(nw) == 1.0))
		rv =
		    wt_seterr(err, WT_EUNSUPPORTED,
		              "config.json: ffn_config.moe_normalize_expert_weights is %s; the "
		              "reference (as vLLM's dbrx.py) renormalises the top-k weights to sum "
		              "1 only: set it to 1",
		              json_is_null(nw) ? "null" : "not 1");
	json_t *mp = json_object_get(root, "max_position_embeddings");
	ref_rope_in in = {arch ? arch : "DbrxForCausalLM", c->d,
	                  json_is_integer(mp) ? (int64_t)json_integer_value(mp) : 0};
	if (rv == WT_OK)
		rv = ref_cfg_rope(root, &in, c, err);
	c->norm_topk = true;
	json_decref(root);
	return rv;
}

/*
 * MPT (MptForCausalLM, transformers 4.57.1 modeling_mpt.py; vLLM mpt.py): x += out_proj(
 * attn(norm_1(x))), x += down_proj(gelu(up_proj(norm_2(x)))), norm_f, lm_head = wte (tied);
 * every LayerNorm without bias, eps 1e-5 (vLLM's nn.LayerNorm default; the loader refuses
 * another layer_norm_epsilon), no Linear bias (no_bias true; false refused); Wqkv [q; k; v]
 * clamped to [-clip_qkv, clip_qkv] when attn_config.clip_qkv is set, no RoPE, the scores
 * scaled by head_dim^-0.5 plus ALiBi's slope_h * (s - t) (attn_config.alibi_bias_max,
 * default 8), GQA over attn_config.kv_n_heads where present (vLLM; transformers' MPT has
 * n_heads kv heads); exact (erf) GELU (vLLM's get_act_fn("gelu"), transformers'
 * nn.GELU(approximate="none")).
 */
int ref_omni_json(const char *json, size_t len, char **out, size_t *out_len, wt_errbuf *err)
{
	json_t *root = ref_cfg_root(json, len, err), *flat = NULL;
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	int rv = config_omni_root(root, &flat, err);
	char *s = rv == WT_OK ? json_dumps(flat, JSON_COMPACT) : NULL;
	json_decref(flat);
	json_decref(root);
	if (rv != WT_OK)
		return rv;
	if (s == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	*out = s;
	*out_len = strlen(s);
	return WT_OK;
}

int ref_cfg_mpt(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	(void)arch;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	c->eps = 1e-5;
	c->act = REF_ACT_GELU;
	int rv = ref_cfg_clip_qkv(root, c, err);
	json_t *m = json_object_get(json_object_get(root, "attn_config"), "alibi_bias_max");
	c->alibi_max = json_is_number(m) ? json_number_value(m) : 8.0;
	if (rv == WT_OK && !(c->alibi_max > 0.0 && isfinite(c->alibi_max)))
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: attn_config.alibi_bias_max must be a positive number");
	json_decref(root);
	return rv;
}
