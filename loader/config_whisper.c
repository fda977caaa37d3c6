/*
 * config_whisper.c — Whisper's config keys (model_type whisper: WhisperConfig, transformers
 * 4.57.1), all top-level.
 *
 * The decoder is the language model: the view lays d_model over hidden_size,
 * decoder_attention_heads over num_attention_heads (and num_key_value_heads: as many kv heads
 * as heads), decoder_layers over num_hidden_layers (which WhisperConfig sets to
 * encoder_layers and its model never reads) and decoder_ffn_dim over intermediate_size, after
 * the class defaults (config_defaults_classic.c: vocab_size 51865, d_model 384,
 * decoder_layers 4, decoder_attention_heads 6, decoder_ffn_dim 1536) filled the absent ones;
 * head_dim is d_model / heads (a head_dim key is no argument of the class's). The encoder's
 * sizes (num_mel_bins 80, encoder_layers 4, encoder_attention_heads 6, encoder_ffn_dim 1536,
 * d_model 384, max_source_positions 1500 when absent) go to the audio fields, and
 * max_target_positions (448) to rob_max_pos: the decoder's embed_positions rows. Each size at
 * least 1 (config_get_int). tie_word_embeddings is PretrainedConfig's (true when absent).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_whisper(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "whisper") == 0;
}

int config_whisper_keys(json_t *v, wt_errbuf *err)
{
	static const char *const alias[][2] = {{"d_model", "hidden_size"},
	                                       {"decoder_attention_heads", "num_attention_heads"},
	                                       {"decoder_attention_heads", "num_key_value_heads"},
	                                       {"decoder_layers", "num_hidden_layers"},
	                                       {"decoder_ffn_dim", "intermediate_size"}};
	json_object_del(v, "head_dim");
	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++) {
		json_t *x = json_object_get(v, alias[i][0]);
		if (x != NULL && json_object_set(v, alias[i][1], x) != 0)
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	return WT_OK;
}

int config_parse_whisper(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	c->has_audio = true;
	static const config_int_key keys[] = {
	    {"num_mel_bins", 80, offsetof(ckpt_config, a_mel)},
	    {"encoder_layers", 4, offsetof(ckpt_config, a_layers)},
	    {"encoder_attention_heads", 6, offsetof(ckpt_config, a_heads)},
	    {"encoder_ffn_dim", 1536, offsetof(ckpt_config, a_ffn)},
	    {"d_model", 384, offsetof(ckpt_config, a_d_model)},
	    {"max_source_positions", 1500, offsetof(ckpt_config, a_max_pos)},
	    {"max_target_positions", 448, offsetof(ckpt_config, rob_max_pos)},
	};
	return config_read_ints(root, "config.json", keys, CONFIG_NKEYS(keys), c, err);
}
