/*
 * family_internlm2.c — InternLM2 (InternLM2ForCausalLM, remote code: internlm/internlm2_5-7b-chat,
 * internlm2-chat-20b, the language model inside many InternVL2 releases), cut as vLLM's
 * internlm2.py loads it.
 *
 * Names are kept (model.tok_embeddings, model.layers.{i}.*, model.norm, output). Llama's
 * decoder under other names: attention.wqkv [(H + 2*KV)*d, hid] holds its rows per kv group,
 * [KV, H/KV + 2, d] (group g's H/KV q heads, then its k head, then its v head), Falcon's
 * layout. vLLM's InternLM2Attention loads it whole into a QKVParallelLinear as if it were
 * [q; k; v] and regroups the all-gathered outputs in split_qkv; a rank of these shards gets
 * its own heads instead, [q_r; k_r; v_r] as SHARDS.md's fused QKV (SM_K_QKVH: the q heads
 * [r*H/T, (r+1)*H/T), the kv heads of kv_shard, replicated when KV < T, which vLLM's split_qkv
 * cannot run), under the runtime name attention.wqkv, so no all-gather is needed and the
 * heads line up with the KV cache; attention.wo by columns; feed_forward.w1 / w3 (gate / up)
 * merged by rows into feed_forward.gate_up_proj ([gate_r; up_r]: vLLM's stacked_params_mapping),
 * w2 by columns; attention_norm / ffn_norm / model.norm replicated; tok_embeddings / output
 * by vocabulary rows, output not emitted when tie_word_embeddings is true (InternLM2Config
 * unties by default). No biases: vLLM builds every Linear without one (bias true is refused
 * by the loader, loader/config_internlm2.c), so a bias tensor is unknown.
 *
 * InternLM2-VE (InternLM2VEForCausalLM, remote code: the language model of
 * OpenGVLab/Mono-InternVL-2B, model_type internlm2), vLLM's internlm2_ve.py: the same layers
 * with a visual expert MLP feed_forward_ve per layer (chosen per token by the visual-token
 * mask), required and cut as feed_forward: w1 / w3 into feed_forward_ve.gate_up_proj, w2 by
 * columns, quantized alike.
 *
 * InternLM2's reward models (InternLM2ForRewardModel, remote code: internlm/internlm2-1_8b-reward,
 * -7b-reward, -20b-reward), vLLM's internlm2.py: InternLM2's decoder without output (the
 * causal LM's lm_head is never built, so a checkpoint's output.weight has no parameter and is
 * unknown here) and v_head [1, hid], vLLM's RowParallelLinear(hidden_size, 1, bias=False,
 * input_is_parallel=False) built without the quantization config: by columns (the rank's
 * hid / T channels; the ranks' partial scores are all-reduced), never quantized, no bias.
 */
#include <inttypes.h>

#include "shardmap/family_internlm2.h"

static const sm_rule internlm2_rules[] = {IL_RULES_AT(""), IL_OUTPUT_AT("")};

/* InternLM2VEForCausalLM (vLLM's internlm2_ve.py): InternLM2's layers plus the visual expert
 * feed_forward_ve, an InternLM2MLP of the same sizes cut as feed_forward (vLLM's load_weights
 * maps its w1 / w3 onto feed_forward_ve.gate_up_proj through the same stacked_params_mapping). */
static const sm_rule internlm2_ve_rules[] = {IL_RULES_AT(""), IL_OUTPUT_AT(""),
                                             IL_MLP("feed_forward_ve.")};

/* InternLM2ForRewardModel (vLLM's internlm2.py): the decoder, then v_head [1, hid] by columns,
 * unquantized (its RowParallelLinear gets no quantization config). */
static const sm_rule internlm2_rm_rules[] = {
    IL_RULES_AT(""),
    SM_RULE("v_head.weight", "v_head.weight", SM_K_COLS, 0, SM_U_HID, SM_C_ALL, 0, 2, SM_D_NLAB,
            SM_D_HID),
};

/* vLLM's InternLM2Attention: head size hidden_size / num_attention_heads (InternLM2Config has no
 * head_dim key), the q heads grouped evenly over the kv heads (split_qkv's view). */
int shardmap_internlm2_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq =
	    shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads", "head_dim", err);
	if (hq != WT_OK)
		return hq;
	if (c->num_key_value_heads <= 0 || c->num_attention_heads % c->num_key_value_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: num_key_value_heads %" PRId64
		                 " does not divide num_attention_heads %" PRId64
		                 "; InternLM2's wqkv groups the q heads evenly over them",
		                 c->num_key_value_heads, c->num_attention_heads);
	return WT_OK;
}

static const char *const internlm2_archs[] = {"InternLM2ForCausalLM", NULL};
static const char *const internlm2_ve_archs[] = {"InternLM2VEForCausalLM", NULL};
static const char *const internlm2_rm_archs[] = {"InternLM2ForRewardModel", NULL};

const sm_family shardmap_family_internlm2 = {
    .name = "internlm2",
    .archs = internlm2_archs,
    .rules = internlm2_rules,
    .n_rules = SM_NRULES(internlm2_rules),
    .layer_prefix = "model.layers.",
    .check = shardmap_internlm2_check,
};

const sm_family shardmap_family_internlm2_ve = {
    .name = "internlm2_ve",
    .archs = internlm2_ve_archs,
    .rules = internlm2_ve_rules,
    .n_rules = SM_NRULES(internlm2_ve_rules),
    .layer_prefix = "model.layers.",
    .check = shardmap_internlm2_check,
};

const sm_family shardmap_family_internlm2_rm = {
    .name = "internlm2_rm",
    .archs = internlm2_rm_archs,
    .rules = internlm2_rm_rules,
    .n_rules = SM_NRULES(internlm2_rm_rules),
    .layer_prefix = "model.layers.",
    .check = shardmap_internlm2_check,
};
