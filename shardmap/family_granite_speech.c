/*
 * family_granite_speech.c — Granite Speech (GraniteSpeechForConditionalGeneration, model_type
 * granite_speech: ibm-granite/granite-speech-3.3-2b, -8b), cut as vLLM's granite_speech.py /
 * granite.py / blip2.py load it.
 *
 * The language model is Granite's table (Llama's: q/k/v fused by heads, o_proj by columns,
 * gate/up merged, down_proj by columns, RMSNorms replicated, embed_tokens / lm_head by
 * vocabulary rows) under `language_model.` (vLLM builds GraniteForCausalLM of text_config),
 * tied by text_config.tie_word_embeddings alone (GraniteConfig's default false). The LoRA
 * adapter the releases ship beside the weights is not part of the checkpoint.
 *
 * The CTC conformer `encoder.*` (GraniteSpeechCTCEncoder): vLLM builds each block's
 * feed-forward up_proj as a ColumnParallelLinear and down_proj as a RowParallelLinear, but
 * builds the blocks without the quantization config: ff1 / ff2 up_proj weight and bias by
 * rows, down_proj by columns (its bias replicated), never quantized. The encoder's `out`
 * (ColumnParallelLinear: weight and bias by rows) and `out_mid` (RowParallelLinear: weight by
 * columns, bias replicated) are built with the quantization config: their weights quantized.
 * Everything else (input_linear, the norms, attn.to_q / to_kv / to_out / rel_pos_emb, the
 * conv module's Conv1d / BatchNorm1d) is a plain torch module: whole on every rank, never
 * quantized. BatchNorm1d's num_batches_tracked (an int64 scalar vLLM's eval-mode BatchNorm
 * never reads) is dropped and listed as skipped, as BERT's integer position_ids are.
 *
 * The projector (GraniteSpeechEncoderProjector): `query` [1, window_size / downsample_rate,
 * Q], the BLIP-2 Q-Former `qformer.*` (vLLM's Blip2QFormerModel: every Linear a plain
 * nn.Linear, every LayerNorm whole; crossattention in layers i with i %
 * cross_attention_frequency == 0) and `linear` [hid, Q] with its bias: whole on every rank,
 * never quantized. One name layout: transformers 4.57.1 writes and reads the released names
 * (no _checkpoint_conversion_mapping).
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_qformer.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define GS_E "encoder."
#define GS_B GS_E "layers.{i}."

/* a tensor kept whole: top level (no {i}), conformer block (SM_F_VIS) */
#define GS_R(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define GS_BR(n, nd, d0, d1)                                                                       \
	SM_RULE(GS_B n, GS_B n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, nd, d0, d1)
#define GS_BLN(n) GS_BR(n ".weight", 1, SM_D_VE, SM_D_ANY), GS_BR(n ".bias", 1, SM_D_VE, SM_D_ANY)
/* a Conv1d weight [out, in, kernel] of a conformer block */
#define GS_CONV(n, d0, d1, d2)                                                                     \
	SM_RULE3(GS_B n, GS_B n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, d0, d1, d2)
/* a conformer feed-forward ffN: up_proj by rows, down_proj by columns, unquantized */
#define GS_FF(f)                                                                                   \
	GS_BLN(f ".pre_norm"),                                                                     \
	    SM_RULE(GS_B f ".up_proj.weight", GS_B f ".up_proj.weight", SM_K_ROWS, 0, SM_U_VI,     \
	            SM_C_ALL, SM_F_VIS, 2, SM_D_VI, SM_D_VE),                                      \
	    SM_RULE(GS_B f ".up_proj.bias", GS_B f ".up_proj.bias", SM_K_ROWS, 0, SM_U_VI,         \
	            SM_C_ALL, SM_F_VIS, 1, SM_D_VI, SM_D_ANY),                                     \
	    SM_RULE(GS_B f ".down_proj.weight", GS_B f ".down_proj.weight", SM_K_COLS, 0, SM_U_VI, \
	            SM_C_ALL, SM_F_VIS, 2, SM_D_VE, SM_D_VI),                                      \
	    GS_BR(f ".down_proj.bias", 1, SM_D_VE, SM_D_ANY)
static const sm_rule granite_speech_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    /* the conformer */
    GS_R(GS_E "input_linear.weight", 2, SM_D_VE, SM_D_VCH),
    GS_R(GS_E "input_linear.bias", 1, SM_D_VE, SM_D_ANY),
    GS_FF("ff1"),
    GS_BLN("attn.pre_norm"),
    GS_BR("attn.to_q.weight", 2, SM_D_GSA, SM_D_VE),
    GS_BR("attn.to_kv.weight", 2, SM_D_GSA2, SM_D_VE),
    GS_BR("attn.to_out.weight", 2, SM_D_VE, SM_D_GSA),
    GS_BR("attn.to_out.bias", 1, SM_D_VE, SM_D_ANY),
    GS_BR("attn.rel_pos_emb.weight", 2, SM_D_VNP, SM_D_GSDH),
    GS_BLN("conv.norm"),
    GS_CONV("conv.up_conv.weight", SM_D_GSC2, SM_D_VE, SM_D_ONE),
    GS_BR("conv.up_conv.bias", 1, SM_D_GSC2, SM_D_ANY),
    GS_CONV("conv.depth_conv.conv.weight", SM_D_GSC, SM_D_ONE, SM_D_GSK),
    GS_BR("conv.batch_norm.weight", 1, SM_D_GSC, SM_D_ANY),
    GS_BR("conv.batch_norm.bias", 1, SM_D_GSC, SM_D_ANY),
    GS_BR("conv.batch_norm.running_mean", 1, SM_D_GSC, SM_D_ANY),
    GS_BR("conv.batch_norm.running_var", 1, SM_D_GSC, SM_D_ANY),
    GS_CONV("conv.down_conv.weight", SM_D_VE, SM_D_GSC, SM_D_ONE),
    GS_BR("conv.down_conv.bias", 1, SM_D_VE, SM_D_ANY),
    GS_FF("ff2"),
    GS_BLN("post_norm"),
    SM_RULE(GS_E "out.weight", GS_E "out.weight", SM_K_ROWS, 0, SM_U_VPO, SM_C_ALL, SM_F_QUANT, 2,
            SM_D_VPO, SM_D_VE),
    SM_RULE(GS_E "out.bias", GS_E "out.bias", SM_K_ROWS, 0, SM_U_VPO, SM_C_ALL, 0, 1, SM_D_VPO,
            SM_D_ANY),
    SM_RULE(GS_E "out_mid.weight", GS_E "out_mid.weight", SM_K_COLS, 0, SM_U_VPO, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_VE, SM_D_VPO),
    GS_R(GS_E "out_mid.bias", 1, SM_D_VE, SM_D_ANY),
    /* the projector */
    SM_RULE3("projector.query", "projector.query", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, SM_D_ONE,
             SM_D_QFQ, SM_D_QFH),
    SM_RULES_QFORMER("projector.qformer."),
    GS_R("projector.linear.weight", 2, SM_D_HID, SM_D_QFH),
    GS_R("projector.linear.bias", 1, SM_D_HID, SM_D_ANY),
};

/* What vLLM's granite_speech.py / blip2.py cannot build, or what no model is: a text model
 * other than granite, a Q-Former of another kind, with text input (intermediate / output
 * modules vLLM's Blip2QFormerLayer lacks) or relative positions (Blip2QFormerMultiHeadAttention
 * raises), heads not dividing its width (it raises too), a context_size past max_pos_emb
 * (GraniteSpeechConformerAttention raises), no query (window_size below downsample_rate), a
 * Q-Former attending to another width than the encoder's. */
static int granite_speech_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = shardmap_text_config_is(
	    c, "granite", NULL, "granite-speech's releases; vLLM builds GraniteForCausalLM", err);
	if (rv != WT_OK)
		return rv;
	rv = shardmap_qformer_check(c, "projector_config", err);
	if (rv != WT_OK)
		return rv;
	if (c->gs_ctx > c->gs_max_pos)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: encoder_config.context_size %" PRId64
		                 " exceeds max_pos_emb %" PRId64
		                 " (GraniteSpeechConformerAttention refuses it)",
		                 c->gs_ctx, c->gs_max_pos);
	if (c->gs_window < c->gs_downsample)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: window_size %" PRId64
		                 " is below downsample_rate %" PRId64
		                 " (the projector would have no query)",
		                 c->gs_window, c->gs_downsample);
	if (c->qf_enc != c->gs_hidden)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: projector_config.encoder_hidden_size %" PRId64
		                 " differs from encoder_config.hidden_dim %" PRId64
		                 " (the Q-Former attends to the encoder's output)",
		                 c->qf_enc, c->gs_hidden);
	return WT_OK;
}

static const char *const granite_speech_archs[] = {"GraniteSpeechForConditionalGeneration", NULL};
static const char *const granite_speech_drops[] = {"num_batches_tracked", NULL};

const sm_family shardmap_family_granite_speech = {
    .name = "granite_speech",
    .archs = granite_speech_archs,
    .rules = granite_speech_rules,
    .n_rules = SM_NRULES(granite_speech_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = granite_speech_check,
    .drop_suffixes = granite_speech_drops,
    .gspeech = true,
};
