/*
 * family_plamo3.c — PLaMo 3 (Plamo3ForCausalLM, model_type plamo3: pfnet/plamo-3-*; remote
 * code), cut as vLLM's plamo3.py loads it.
 *
 * Its Plamo3Decoder holds the layers under model.layers.layers.{i}. (the doubled "layers"
 * of Plamo3Model.layers = Plamo3Decoder, whose make_layers prefix is its own ".layers").
 * The checkpoint already holds the fused tensors under the runtime names, loaded by
 * AutoWeightsLoader straight into vLLM's parallel layers:
 *   mixer.qkv_proj.weight [(H + 2*KV)*d, hid] ([q; k; v] rows; QKVParallelLinear, no bias):
 *     the rank's q heads, then its kv heads' k and v rows (replicated when KV < T);
 *   mixer.o_proj.weight [hid, H*d] by columns (RowParallelLinear);
 *   mlp.gate_up_proj.weight [2*I, hid] ([gate; up] rows; MergedColumnParallelLinear):
 *     [gate_r; up_r]; mlp.down_proj.weight [hid, I] by columns;
 *   mixer.q_norm / mixer.k_norm [d] (per-head RMSNorms) and the four norms of the layer
 *     (pre_mixer_norm, post_mixer_norm, pre_mlp_norm, post_mlp_norm) [hid] replicated, as
 *     stored: vLLM's rms_norm_weight_loader adds its offsets (+1, +1/5 post_mixer_norm,
 *     +1/5^1.5 post_mlp_norm) at load time, the engine's to add as Gemma's (1 + w);
 *   model.embed_tokens / lm_head by padded vocabulary rows (lm_head dropped when tied).
 * Every Linear quantized; the embedding, lm_head and the norms not. head_dim is the
 * config's (H*d need not be hid). vocab_size must be a multiple of 16: vLLM builds
 * ParallelLMHead(round_up(V, 16), org_num_embeddings=V), whose extra rows form a second
 * padded segment per rank that this cut does not lay out.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define P3_LAYER "model.layers.layers.{i}."
#define P3_REPL(x, d)                                                                              \
	SM_RULE(P3_LAYER x, P3_LAYER x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, d, SM_D_ANY)

static const sm_rule plamo3_rules[] = {
    SM_RULES_TOP,
    P3_REPL("pre_mixer_norm.weight", SM_D_HID),
    P3_REPL("post_mixer_norm.weight", SM_D_HID),
    P3_REPL("pre_mlp_norm.weight", SM_D_HID),
    P3_REPL("post_mlp_norm.weight", SM_D_HID),
    P3_REPL("mixer.q_norm.weight", SM_D_HD),
    P3_REPL("mixer.k_norm.weight", SM_D_HD),
    SM_RULE(P3_LAYER "mixer.qkv_proj.weight", P3_LAYER "mixer.qkv_proj.weight", SM_K_QKVC, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),
    SM_RULE(P3_LAYER "mixer.o_proj.weight", P3_LAYER "mixer.o_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULE(P3_LAYER "mlp.gate_up_proj.weight", P3_LAYER "mlp.gate_up_proj.weight", SM_K_ROWS2, 0,
            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I2, SM_D_HID),
    SM_RULE(P3_LAYER "mlp.down_proj.weight", P3_LAYER "mlp.down_proj.weight", SM_K_COLS, 0, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),
};

/* vLLM's lm_head is ParallelLMHead(round_up(V, 16), org_num_embeddings=V): V a multiple of 16
 * (the releases') is the plain padded vocabulary every family's lm_head has. */
static int plamo3_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->vocab_size % 16 != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: vocab_size %" PRId64 " is not a multiple of 16; "
		                 "vLLM's plamo3.py then adds round_up(vocab_size, 16) - vocab_size "
		                 "rows to lm_head in a second padded segment per rank, which these "
		                 "shards do not lay out: pad the embedding and lm_head to a "
		                 "multiple of 16 rows and set vocab_size to match",
		                 c->vocab_size);
	return WT_OK;
}

static const char *const plamo3_archs[] = {"Plamo3ForCausalLM", NULL};

/* Plamo3Config ties by default (tie_word_embeddings=True) */
const sm_family shardmap_family_plamo3 = {
    .name = "plamo3",
    .archs = plamo3_archs,
    .rules = plamo3_rules,
    .n_rules = SM_NRULES(plamo3_rules),
    .layer_prefix = "model.layers.layers.",
    .check = plamo3_check,
    .tie_default = true,
};
