/*
 * config_bidir.c — the bidirectional Llama embedding models' config keys (model_type
 * llama_bidirec, LlamaBidirectionalModel: nvidia/llama-nemotron-embed-1b-v2,
 * llama-embed-nemotron-8b; the remote LlamaBidirectionalConfig, a LlamaConfig with pooling
 * "avg" and temperature 1.0 added), read as vLLM's LlamaBidirectionalConfig
 * (model_executor/models/config.py) takes them: it sets is_causal false whatever the file says
 * and maps pooling avg / cls / last onto the pooler's MEAN / CLS / LAST, raising on any other
 * value. The decoder's keys are LlamaConfig's (class defaults: config_defaults_remote.c).
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

int config_llama_bidirec_keys(json_t *v, wt_errbuf *err)
{
	static const char *const ok[] = {"avg", "cls", "last"};
	json_t *p = json_object_get(v, "pooling");
	if (p == NULL)
		return WT_OK; /* the class default, avg */
	const char *s = json_string_value(p);
	for (size_t i = 0; s != NULL && i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(s, ok[i]) == 0)
			return WT_OK;
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "config.json: pooling is not one of \"avg\", \"cls\", \"last\" (vLLM's "
	                 "LlamaBidirectionalConfig raises on any other): set one of them");
}
