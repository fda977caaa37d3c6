/*
 * family_stablelm.c — StableLM (StableLmForCausalLM, model_type stablelm: stabilityai
 * stablelm-2-1_6b, stablelm-zephyr-3b, stablelm-3b-4e1t), cut as vLLM's stablelm.py loads it.
 *
 * Llama's layout whose norms are nn.LayerNorm with a bias (input_layernorm,
 * post_attention_layernorm, model.norm: weight and bias replicated, never quantized), q/k/v
 * fused by heads into self_attn.qkv_proj with their biases exactly when use_qkv_bias (the
 * loader reads it into attention_bias for this model_type), o_proj without a bias, the
 * SwiGLU MLP gate_proj / up_proj merged into gate_up_proj without biases, down_proj by
 * columns. vLLM's StablelmDecoderLayer is always sequential with both norms and builds no
 * q_layernorm / k_layernorm: use_parallel_residual true and qk_layernorm true (stablelm-2-12b)
 * are refused at plan time.
 *
 * StableLM Epoch (StableLMEpochForCausalLM, model_type stablelm_epoch, remote code) is the
 * same model under the remote config's key names: vLLM's registry maps it onto stablelm.py.
 *
 * Orion (OrionForCausalLM, model_type orion: OrionStarAI/Orion-14B-Base, -Chat, -LongChat; remote
 * code), cut as vLLM's orion.py loads it, reads StableLM's table: the same names, cuts and
 * LayerNorm norms with biases (OrionDecoderLayer's and OrionModel's nn.LayerNorm, eps
 * rms_norm_eps), no biases on q/k/v (QKVParallelLinear bias=False), o_proj or the MLP. The
 * q/k/v bias rules never hold: the loader refuses attention_bias true (loader/config_orion.c),
 * so a q/k/v bias in the checkpoint is refused as one without its switch.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

/* A replicated LayerNorm weight or bias [hid]. */
#define STABLELM_NORM(x) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)

static const sm_rule stablelm_rules[] = {
    SM_RULES_TOP,
    STABLELM_NORM("model.norm.bias"),
    SM_RULES_LNORM,
    STABLELM_NORM(SM_LAYER "input_layernorm.bias"),
    STABLELM_NORM(SM_LAYER "post_attention_layernorm.bias"),
    SM_QKV_W("q", 0, SM_D_Q),
    SM_QKV_W("k", 1, SM_D_KV),
    SM_QKV_W("v", 2, SM_D_KV),
    SM_QKV_BS("q", 0, SM_D_Q),
    SM_QKV_BS("k", 1, SM_D_KV),
    SM_QKV_BS("v", 2, SM_D_KV),
    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULES_MLP_NOBIAS,
};

/* vLLM's StablelmAttention takes head_dim = hidden_size / num_attention_heads (no head_dim
 * key); its decoder layer is sequential and has no per-head q/k LayerNorms. */
static int stablelm_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq =
	    shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads", "head_dim", err);
	if (hq != WT_OK)
		return hq;
	if (c->qk_layernorm)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: qk_layernorm true; vLLM's stablelm.py builds no "
		                 "q_layernorm / k_layernorm (per-head "
		                 "self_attn.q_layernorm.norms.{h}.weight): only qk_layernorm false "
		                 "(stablelm-2-1_6b, stablelm-zephyr-3b) is supported");
	if (c->use_parallel_residual)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: use_parallel_residual true; vLLM's stablelm.py runs "
		                 "the sequential block with post_attention_layernorm only: set it "
		                 "false");
	return WT_OK;
}

/* StableLMEpochForCausalLM (model_type stablelm_epoch, remote code: stablelm-3b-4e1t,
 * stablelm-zephyr-3b, stable-code-3b, stablelm-2-1_6b's early revisions): vLLM's registry maps
 * it onto the same StablelmForCausalLM, so it reads this table; the loader lays its rope_pct /
 * norm_eps onto partial_rotary_factor / layer_norm_eps and reads its use_qkv_bias
 * (loader/config_stablelm_epoch.c). */
static const char *const stablelm_archs[] = {"StableLmForCausalLM", "StableLMEpochForCausalLM",
                                             NULL};

/* StableLmConfig unties by default (tie_word_embeddings=False); StableLMEpochConfig's configs
 * give the key (the loader requires it) */
const sm_family shardmap_family_stablelm = {
    .name = "stablelm",
    .archs = stablelm_archs,
    .rules = stablelm_rules,
    .n_rules = SM_NRULES(stablelm_rules),
    .layer_prefix = "model.layers.",
    .check = stablelm_check,
    .attn_bias_key = "use_qkv_bias",
};

/* vLLM's OrionAttention takes head_dim = hidden_size / num_attention_heads (OrionConfig has
 * no head_dim key). */
static int orion_check(const ckpt_config *c, wt_errbuf *err)
{
	return shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads", "head_dim",
	                                    err);
}

static const char *const orion_archs[] = {"OrionForCausalLM", NULL};

/* OrionConfig unties by default (tie_word_embeddings=False) */
const sm_family shardmap_family_orion = {
    .name = "orion",
    .archs = orion_archs,
    .rules = stablelm_rules,
    .n_rules = SM_NRULES(stablelm_rules),
    .layer_prefix = "model.layers.",
    .check = orion_check,
};
