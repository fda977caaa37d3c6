/*
 * family_qformer.c — the refusals of a BLIP-2 Q-Former's config (Granite Speech's
 * projector_config, BLIP-2's qformer_config), as vLLM's blip2.py builds the model.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_qformer.h"

int shardmap_qformer_check(const ckpt_config *c, const char *key, wt_errbuf *err)
{
	if (strcmp(c->qf_model, "blip_2_qformer") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s.model_type '%s': vLLM builds a BLIP-2 Q-Former "
		                 "(Blip2QFormerModel); only blip_2_qformer is supported",
		                 key, c->qf_model);
	if (c->qf_text)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %s.use_qformer_text_input is true: the Q-Former then "
		    "has text embeddings (InstructBLIP-style embeddings.*) and "
		    "intermediate / output modules vLLM's Blip2QFormerModel does not "
		    "build; set it false",
		    key);
	if (!c->qf_abs)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %s.position_embedding_type is not \"absolute\": "
		    "vLLM's Blip2QFormerMultiHeadAttention raises NotImplementedError "
		    "for any other; set it \"absolute\" (Blip2QFormerConfig's default)",
		    key);
	if (c->qf_hidden % c->qf_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s.num_attention_heads %" PRId64
		                 " does not divide hidden_size %" PRId64,
		                 key, c->qf_heads, c->qf_hidden);
	return WT_OK;
}
