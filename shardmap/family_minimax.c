/*
 * family_minimax.c — MiniMax-Text-01 / MiniMax-M1 (MiniMaxForCausalLM, model_type minimax;
 * docs/format.md section 2.7), as transformers 4.57.1's modeling_minimax.py lays it out
 * and vLLM's minimax_text_01.py shards it.
 *
 * Layers are softmax attention or lightning (linear) attention: layer_types when given,
 * else MiniMaxConfig's default (layer i is full attention iff (i + 1) % 2 != 0). Both
 * kinds live under self_attn.:
 * - Full attention: Mixtral's q / k / v fused into qkv_proj (GQA), o_proj by columns.
 * - Lightning attention (H heads of d, no kv heads): qkv_proj [3*H*d, hid] holds per head
 *   [q_h; k_h; v_h] (MiniMaxLightningAttention reshapes it to [H, 3*d]), so vLLM's
 *   ColumnParallelLinear row split gives each rank whole heads; output_gate [H*d, hid]
 *   by rows, norm [H*d] by channels (MiniMaxText01RMSNormTP, its variance all-reduced),
 *   out_proj by columns. The per-head slope decay is computed: the buffers transformers
 *   saves for it (slope_rate, query_decay, key_decay, diagonal_decay) are dropped.
 * - block_sparse_moe in every layer: Mixtral's router and w1 / w3 / w2 experts stacked as
 *   w13 / w2 (Ie split under TP, whole experts under EP).
 */
#include <inttypes.h>

#include "shardmap/family_minimax.h"

static const sm_rule minimax_rules[] = {
    SM_RULES_TOP,
    SM_RULES_MINIMAX_LAYERS,
};

/* MiniMaxDecoderLayer: MiniMaxLightningAttention when layer_types[i] is
 * "linear_attention"; without layer_types MiniMaxConfig's alternation (odd layers). */
bool shardmap_minimax_linear(const ckpt_config *c, int64_t i)
{
	if (c->has_layer_types)
		return i >= 0 && (uint64_t)i < c->n_layer_types &&
		       c->layer_types[i] == CKPT_LAYER_LINEAR_ATTN;
	return (i + 1) % 2 == 0;
}

bool shardmap_minimax_moe(const ckpt_config *c, int64_t i)
{
	(void)i;
	return c->num_experts > 0;
}

/* layer_types one per layer, each of the two kinds a MiniMax layer can be; experts in
 * every layer (MiniMaxSparseMoeBlock). */
int shardmap_minimax_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->has_layer_types) {
		if ((uint64_t)c->num_hidden_layers != c->n_layer_types)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: layer_types has %zu entries but "
			                 "num_hidden_layers is %" PRId64
			                 "; give one type per layer",
			                 c->n_layer_types, c->num_hidden_layers);
		for (size_t k = 0; k < c->n_layer_types; k++)
			if (c->layer_types[k] != CKPT_LAYER_LINEAR_ATTN &&
			    c->layer_types[k] != CKPT_LAYER_FULL_ATTN)
				return wt_seterr(err, WT_ECORRUPT,
				                 "config.json: layer_types[%zu] is neither "
				                 "\"linear_attention\" nor \"full_attention\", "
				                 "the two MiniMax layer types",
				                 k);
	}
	if (c->num_experts <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: MiniMaxForCausalLM needs num_local_experts > 0 "
		                 "(every layer is MoE); write the model's expert count into "
		                 "config.json");
	return WT_OK;
}

/* MiniMaxLightningAttention's persistent buffers: a checkpoint transformers saved holds
 * them, vLLM's minimax_text_01.py computes the slopes itself (and has no parameter of
 * these names), so they are dropped as the rotary inv_freq is. */
const char *const shardmap_minimax_drops[] = {"self_attn.slope_rate", "self_attn.query_decay",
                                              "self_attn.key_decay", "self_attn.diagonal_decay",
                                              NULL};

/* MiniMaxText01ForCausalLM / MiniMaxM1ForCausalLM: the releases' remote-code names, which
 * vLLM's registry maps onto the same minimax_text_01.py (their config.json's own keys read
 * as MiniMaxConfig's by loader/config_minimax01.c) */
static const char *const minimax_archs[] = {"MiniMaxForCausalLM", "MiniMaxText01ForCausalLM",
                                            "MiniMaxM1ForCausalLM", NULL};

/* MiniMaxConfig leaves tie_word_embeddings false */
const sm_family shardmap_family_minimax = {
    .name = "minimax",
    .archs = minimax_archs,
    .rules = minimax_rules,
    .n_rules = SM_NRULES(minimax_rules),
    .layer_is_moe = shardmap_minimax_moe,
    .layer_prefix = "model.layers.",
    .check = shardmap_minimax_check,
    .layer_is_linear = shardmap_minimax_linear,
    .linear_keys = "layer_types",
    .drop_suffixes = shardmap_minimax_drops,
};
