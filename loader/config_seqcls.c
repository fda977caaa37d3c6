/*
 * config_seqcls.c — the decoder sequence classifiers' keys (LlamaForSequenceClassification,
 * MistralForSequenceClassification, Qwen2ForSequenceClassification,
 * Qwen3ForSequenceClassification: reward models and rerankers such as
 * Skywork-Reward-Llama-3.1-8B or Qwen3-Reranker-*-seq-cls), read over the decoder's own
 * config (LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config and their class defaults).
 *
 * The score head's outputs: PretrainedConfig's num_labels (config_num_labels: the entries of
 * id2label, else num_labels, else 2) into rob_num_labels. classifier_from_token and method
 * (vLLM's online conversion of a *ForCausalLM checkpoint: the score built from lm_head rows,
 * adapters.py seq_cls_model_loader) are recorded when either is given and not null; the
 * planner refuses them (shardmap/family_seqcls.c).
 *
 * Qwen2's reward models (Qwen2ForRewardModel: Qwen2.5-Math-RM-72B; Qwen2ForProcessRewardModel:
 * Qwen2.5-Math-PRM-7B; remote code, vLLM's qwen2_rm.py): their score head's outputs are fixed
 * by the class, 1 and 2 (vLLM sets hf_config.num_labels so, the remote code's last Linear has
 * as many rows), whatever config.json says; neither reads classifier_from_token / method.
 * InternLM2's reward models (InternLM2ForRewardModel: internlm2-1_8b-reward, -7b-reward,
 * -20b-reward; remote code, vLLM's internlm2.py) likewise 1: v_head is RowParallelLinear(
 * hidden_size, 1); the rest is InternLM2Config's (model_type internlm2, config_internlm2.c).
 *
 * LlamaBidirectionalForSequenceClassification (nvidia/llama-nemotron-rerank-1b-v2, model_type
 * llama_bidirec: vLLM's as_seq_cls_model(LlamaForCausalLM)) is read as the above, over
 * LlamaBidirectionalConfig's keys (config_bidir.c: pooling avg / cls / last).
 *
 * GPT2ForSequenceClassification (vLLM's own class in gpt2.py, not as_seq_cls_model): num_labels
 * as above over GPT2Config's keys (config_gpt2.c); classifier_from_token / method are not read
 * (vLLM's online conversion applies to as_seq_cls_model only).
 *
 * JinaVLForRanking (jinaai/jina-reranker-m0, remote code; vLLM's jina_vl.py) likewise 1:
 * vLLM's JinaVLForSequenceClassificationConfig sets hf_config.num_labels = 1 whatever
 * config.json says; the rest is Qwen2VLConfig's (model_type qwen2_vl).
 *
 * JambaForSequenceClassification (vLLM's own class in jamba.py): num_labels as above over
 * JambaConfig's keys; vLLM's score_bias (getattr, default false; transformers' class has no
 * bias) true is refused; classifier_from_token / method are not read.
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_seqcls(const char *arch)
{
	static const char *const archs[] = {"LlamaForSequenceClassification",
	                                    "MistralForSequenceClassification",
	                                    "Qwen2ForSequenceClassification",
	                                    "Qwen3ForSequenceClassification",
	                                    "LlamaBidirectionalForSequenceClassification",
	                                    "Qwen2ForRewardModel",
	                                    "Qwen2ForProcessRewardModel",
	                                    "InternLM2ForRewardModel",
	                                    "GPT2ForSequenceClassification",
	                                    "JambaForSequenceClassification",
	                                    "JinaVLForRanking"};
	for (size_t i = 0; arch != NULL && i < sizeof(archs) / sizeof(archs[0]); i++)
		if (strcmp(arch, archs[i]) == 0)
			return true;
	return false;
}

int config_parse_seqcls(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	if (strcmp(c->architecture, "Qwen2ForRewardModel") == 0 ||
	    strcmp(c->architecture, "InternLM2ForRewardModel") == 0 ||
	    strcmp(c->architecture, "JinaVLForRanking") == 0 ||
	    strcmp(c->architecture, "Qwen2ForProcessRewardModel") == 0) {
		c->rob_num_labels =
		    strcmp(c->architecture, "Qwen2ForProcessRewardModel") == 0 ? 2 : 1;
		return WT_OK;
	}
	if (strcmp(c->architecture, "GPT2ForSequenceClassification") == 0)
		return config_num_labels(root, &c->rob_num_labels, err);
	if (strcmp(c->architecture, "JambaForSequenceClassification") == 0) {
		if (json_is_true(json_object_get(root, "score_bias")))
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: score_bias true asks vLLM's "
			    "JambaForSequenceClassification "
			    "for a score.bias, which transformers' class has no tensor for and "
			    "weightd does not cut; remove the key (false is the default)");
		return config_num_labels(root, &c->rob_num_labels, err);
	}
	json_t *tok = json_object_get(root, "classifier_from_token");
	json_t *method = json_object_get(root, "method");
	c->cls_from_token =
	    (tok != NULL && !json_is_null(tok)) || (method != NULL && !json_is_null(method));
	return config_num_labels(root, &c->rob_num_labels, err);
}
