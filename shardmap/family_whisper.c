/*
 * family_whisper.c — Whisper (WhisperForConditionalGeneration, model_type whisper:
 * openai/whisper-large-v3, -small, distil-whisper/distil-large-v3), cut as vLLM's whisper.py loads
 * it: its only encoder-decoder. One layout (transformers 4.57.1 saves the released names).
 *
 * The encoder `model.encoder.*` (WhisperEncoder, built with the quantization config): the
 * Whisper encoder's rules (SM_RULES_WHISPER_ENCODER, as Voxtral's audio tower), its sizes
 * d_model, encoder_ffn_dim, encoder_layers, encoder_attention_heads, num_mel_bins and
 * max_source_positions (the vision dims).
 *
 * The decoder `model.decoder.*` (WhisperDecoder): embed_tokens [V, d_model] is a plain
 * nn.Embedding in vLLM (not vocab-parallel: whole on every rank, never quantized), as are
 * embed_positions [max_target_positions, d_model] (a learned table) and the final layer_norm.
 * Each layer: self-attention as an encoder layer's (SM_RULES_WHISPER_LAYER: q/k/v fused into
 * qkv_proj by heads, k without bias, out_proj by columns, fc1 / fc2, the two LayerNorms) over
 * d_model, decoder_attention_heads and decoder_ffn_dim; the cross-attention encoder_attn as
 * WhisperCrossAttention builds it: q_proj [E, E] by rows with its bias (ColumnParallelLinear),
 * k_proj / v_proj fused into encoder_attn.kv_proj ([k_r; v_r], MergedColumnParallelLinear),
 * its bias [zeros; v_r] (k_proj has none: vLLM loads zeros for it), out_proj by columns with
 * its bias replicated; those four weights quantized; encoder_attn_layer_norm replicated.
 *
 * proj_out: vLLM ties it to embed_tokens whatever the config says and skips every proj_out.*
 * tensor (skip_prefixes), so a stray proj_out.weight is skipped and listed; a config that
 * unties it (tie_word_embeddings false) is refused.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#define WH_D "model.decoder."
#define WH_L WH_D "layers.{i}."
#define WH_X "encoder_attn."

#define WH_R(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define WH_S(n, rt, kind, part, flags, nd, d0, d1)                                                 \
	SM_RULE(WH_L n, WH_L rt, kind, part, SM_U_HEADS, SM_C_ALL, flags, nd, d0, d1)

static const sm_rule whisper_rules[] = {
    SM_RULES_WHISPER_ENCODER("model.encoder."),
    WH_R(WH_D "embed_tokens.weight", 2, SM_D_V, SM_D_HID),
    WH_R(WH_D "embed_positions.weight", 2, SM_D_RPOS, SM_D_HID),
    SM_RULES_WHISPER_LAYER(WH_L, 0, SM_U_HEADS, SM_U_I, SM_D_HID, SM_D_I),
    WH_S(WH_X "q_proj.weight", WH_X "q_proj.weight", SM_K_ROWS, 0, SM_F_QUANT, 2, SM_D_HID,
         SM_D_HID),
    WH_S(WH_X "q_proj.bias", WH_X "q_proj.bias", SM_K_ROWS, 0, 0, 1, SM_D_HID, SM_D_ANY),
    WH_S(WH_X "k_proj.weight", WH_X "kv_proj.weight", SM_K_ROWS, 0, SM_F_QUANT, 2, SM_D_HID,
         SM_D_HID),
    WH_S(WH_X "v_proj.weight", WH_X "kv_proj.weight", SM_K_ROWS, 1, SM_F_QUANT, 2, SM_D_HID,
         SM_D_HID),
    WH_S(WH_X "v_proj.bias", WH_X "kv_proj.bias", SM_K_KVZ, 0, 0, 1, SM_D_HID, SM_D_ANY),
    WH_S(WH_X "out_proj.weight", WH_X "out_proj.weight", SM_K_COLS, 0, SM_F_QUANT, 2, SM_D_HID,
         SM_D_HID),
    WH_R(WH_L WH_X "out_proj.bias", 1, SM_D_HID, SM_D_ANY),
    WH_R(WH_L "encoder_attn_layer_norm.weight", 1, SM_D_HID, SM_D_ANY),
    WH_R(WH_L "encoder_attn_layer_norm.bias", 1, SM_D_HID, SM_D_ANY),
    WH_R(WH_D "layer_norm.weight", 1, SM_D_HID, SM_D_ANY),
    WH_R(WH_D "layer_norm.bias", 1, SM_D_HID, SM_D_ANY),
};

static bool whisper_drop(const ckpt_config *cfg, const char *cn)
{
	(void)cfg;
	return strncmp(cn, "proj_out.", strlen("proj_out.")) == 0;
}

int shardmap_audio_heads_check(const ckpt_config *c, const char *heads, const char *width,
                               const char *attn, wt_errbuf *err)
{
	if (c->a_d_model % c->a_heads == 0)
		return WT_OK;
	return wt_seterr(err, WT_ECORRUPT,
	                 "config.json: %s %" PRId64 " does not divide %s %" PRId64
	                 " (%s splits it into heads)",
	                 heads, c->a_heads, width, c->a_d_model, attn);
}

/* vLLM ties proj_out to embed_tokens whatever the config says; heads that split their width
 * (WhisperAttention's own check, encoder and decoder). */
static int whisper_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->tie_given && !c->tie_word_embeddings)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: tie_word_embeddings false: vLLM's whisper.py ties "
		    "proj_out to model.decoder.embed_tokens and skips proj_out.weight; "
		    "only a tied Whisper is supported (set it true, or remove the key)");
	int rv = shardmap_audio_heads_check(c, "encoder_attention_heads", "d_model",
	                                    "WhisperAttention", err);
	if (rv != WT_OK)
		return rv;
	if (c->hidden_size % c->num_attention_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: decoder_attention_heads %" PRId64
		                 " does not divide d_model %" PRId64
		                 " (WhisperAttention splits it into heads)",
		                 c->num_attention_heads, c->hidden_size);
	return WT_OK;
}

static const char *const whisper_archs[] = {"WhisperForConditionalGeneration", NULL};

const sm_family shardmap_family_whisper = {
    .name = "whisper",
    .archs = whisper_archs,
    .rules = whisper_rules,
    .n_rules = SM_NRULES(whisper_rules),
    .layer_prefix = "model.decoder.layers.",
    .check = whisper_check,
    .drop_canon = whisper_drop,
    .tie_default = true,
    .audio = true,
    .whisper = true,
    .layers_key = "decoder_layers",
};
