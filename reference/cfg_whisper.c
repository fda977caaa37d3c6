/*
 * cfg_whisper.c — Whisper (WhisperForConditionalGeneration; transformers 4.57.1
 * configuration_whisper.py, modeling_whisper.py; vLLM whisper.py): its config.json fields
 * (the math: whisper.c). The decoder's sizes are the loader's (d_model, decoder_layers,
 * decoder_attention_heads, decoder_ffn_dim: config_whisper.c).
 *
 *   key                        default   what the reference does with it
 *   encoder_layers             4         the encoder's layers
 *   encoder_attention_heads    6         its heads (of d_model / heads)
 *   encoder_ffn_dim            1536      its fc1 rows
 *   num_mel_bins               80        conv1's input channels
 *   max_source_positions       1500      the encoder's positions; its input is twice as many
 *                                        frames (conv2's stride 2); at most REF_MAX_TOKENS
 *   max_target_positions       448       the decoder's positions: the tokens it may run
 *   activation_function        gelu      fc1's activation in both stacks; only gelu (exact)
 *
 * LayerNorms take nn.LayerNorm's eps 1e-5; the convolutions' GELU is always exact (erf).
 */
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { W_EL, W_EH, W_EI, W_MEL, W_SRC, W_TGT, W_ACT, W_COUNT };

int ref_cfg_whisper(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	static const ckpt_field spec[W_COUNT] = {
	    [W_EL] = {"encoder_layers", CKPT_FIELD_INT},
	    [W_EH] = {"encoder_attention_heads", CKPT_FIELD_INT},
	    [W_EI] = {"encoder_ffn_dim", CKPT_FIELD_INT},
	    [W_MEL] = {"num_mel_bins", CKPT_FIELD_INT},
	    [W_SRC] = {"max_source_positions", CKPT_FIELD_INT},
	    [W_TGT] = {"max_target_positions", CKPT_FIELD_INT},
	    [W_ACT] = {"activation_function", CKPT_FIELD_STRING},
	};
	ckpt_field f[W_COUNT];
	memcpy(f, spec, sizeof(spec));
	int rv = ckpt_config_fields(json, len, f, W_COUNT, err);
	if (rv != WT_OK)
		return rv;
	if (f[W_ACT].present && strcmp(f[W_ACT].s, "gelu") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: activation_function '%s' on Whisper; the reference "
		                 "runs gelu (every Whisper release's)",
		                 f[W_ACT].s);
	c->wh_el = f[W_EL].present ? f[W_EL].i : 4;
	c->wh_eh = f[W_EH].present ? f[W_EH].i : 6;
	c->wh_ei = f[W_EI].present ? f[W_EI].i : 1536;
	c->wh_mel = f[W_MEL].present ? f[W_MEL].i : 80;
	c->wh_src = f[W_SRC].present ? f[W_SRC].i : 1500;
	c->max_pos = f[W_TGT].present ? f[W_TGT].i : 448;
	c->act = REF_ACT_GELU;
	c->eps = 1e-5;
	if (c->wh_el < 1 || c->wh_eh < 1 || c->wh_eh > REF_MAX_HEADS || c->hid % c->wh_eh != 0 ||
	    c->wh_ei < 1 || c->wh_mel < 1 || c->wh_src < 1 || c->wh_src > REF_MAX_TOKENS ||
	    c->max_pos < 1 || c->KV != c->H || c->d * c->H != c->hid)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: encoder_layers %lld, encoder_attention_heads %lld "
		                 "over d_model %lld, encoder_ffn_dim %lld, num_mel_bins %lld, "
		                 "max_source_positions %lld, max_target_positions %lld; the "
		                 "reference needs positive sizes, heads that split d_model and at "
		                 "most %d source positions",
		                 (long long)c->wh_el, (long long)c->wh_eh, (long long)c->hid,
		                 (long long)c->wh_ei, (long long)c->wh_mel, (long long)c->wh_src,
		                 (long long)c->max_pos, REF_MAX_TOKENS);
	return WT_OK;
}
