/*
 * config_int.h — private to loader/: the language-model view of config.json
 * shared by ckpt_config_parse (config.c) and ckpt_config_fields
 * (config_fields.c), so the `text_config` overlay has one implementation.
 */
#ifndef WT_LOADER_CONFIG_INT_H
#define WT_LOADER_CONFIG_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weights/error.h"

/* (config_view.c) *out = root itself, or (root has a `text_config` object) a shallow copy of
 * root with text_config's fields laid over it. A new reference either way. */
int config_lm_view(json_t *root, json_t **out, wt_errbuf *err);

/* (config_view.c) A family's own key names copied onto the ones the loader reads: for each of
 * the n pairs, v[keys[i][1]] = v[keys[i][0]] when v has keys[i][0] (with skip_null, when it is
 * not null either); the target is overwritten. WT_ENOMEM is the only error. */
int config_alias_keys(json_t *v, const char *const (*keys)[2], size_t n, bool skip_null,
                      wt_errbuf *err);

/* (config_hybrid.c) Is a Mamba2 time_step_limit (x: the key's value, NULL when absent) one that
 * clamps nothing: absent, null or (<= 0, >= 3.4e38)? transformers clamps dt to it, vLLM's
 * MambaMixer2 ignores it, so any other value is cut alike by neither. */
bool config_dt_limit_open(const json_t *x);

/*
 * Keys a language model's config class fills in when config.json leaves them
 * out. transformers' save_pretrained drops the keys of a nested config that
 * equal its class defaults, so Gemma 3 4B's text_config carries no
 * num_attention_heads, num_key_value_heads, head_dim or vocab_size
 * (Gemma3TextConfig's 8, 4, 256, 262208; transformers 4.57.1). Llama 4's the same
 * (Llama4TextConfig). Qwen3-Next's top-level config is read as Qwen3NextConfig reads
 * it: a key it leaves out takes the class default; GLM-4.5 (Glm4MoeConfig), ERNIE 4.5
 * (Ernie4_5Config, Ernie4_5_MoeConfig), Cohere, dots.llm1 (Dots1Config), Seed-OSS
 * (SeedOssConfig: head_dim 128 and the boolean attention_bias true) and SmolLM3
 * (SmolLM3Config) for the keys a hand-written config.json leaves out.
 */
typedef struct class_default {
	const char *key;
	bool real; /* a JSON real, else an integer */
	double v;
	bool boolean; /* a JSON true (v != 0) or false instead */
} class_default;

/* Is root a LLaVA / LLaVA-NeXT config (model_type llava or llava_next)? (config_llava.c) */
bool config_is_llava(json_t *root);
bool config_is_llava_next_video(json_t *root);
/* LlavaConfig's keys of root (v its vision_config) into c: vision_feature_layer, the
 * tower's and the language model's model_type (config_llava.c). */
struct ckpt_config;
int config_parse_llava(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* Is root an Idefics3 / SmolVLM config (model_type idefics3 or smolvlm)? Its scale_factor
 * (into v_spatial_merge_size) and text_config's model_type (config_llava.c). */
bool config_is_idefics3(json_t *root);
int config_parse_idefics3(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root a PaliGemma config (model_type paligemma)? Its text_config's model_type
 * (config_llava.c). */
bool config_is_paligemma(json_t *root);
void config_parse_paligemma(json_t *root, struct ckpt_config *c);
/* Is root an Aya Vision config (model_type aya_vision)? Its vision_feature_layer,
 * downsample_factor, alignment_intermediate_size, text_config's model_type (config_llava.c). */
bool config_is_aya_vision(json_t *root);
int config_parse_aya_vision(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root a LLaVA-OneVision config (model_type llava_onevision)? Its vision_feature_layer,
 * the tower's and text_config's model_type (config_llava.c). */
bool config_is_llava_onevision(json_t *root);
int config_parse_llava_onevision(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* Is root an R-4B config (architectures[0] RForConditionalGeneration; the remote class's
 * model_type is not relied on)? LLaVA-OneVision's keys, text_config.model_type required
 * (config_rvl.c). */
bool config_is_rvl(json_t *root);
int config_parse_rvl(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* Is root a MiniMax-VL-01 config (model_type minimax_vl_01)? Its vision_feature_layer, the
 * tower's and text_config's model_type, the latter required (config_llava.c). */
bool config_is_minimax_vl(json_t *root);
int config_parse_minimax_vl(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* root with text_config laid over it and MiniMax-Text-01's keys renamed (the reference). */
int config_minimax_vl_flat(json_t *root, wt_errbuf *err);
/* Is root a Bee config (model_type bee)? LLaVA-OneVision's keys, text_config.model_type,
 * vision_config.model_type and vision_feature_layer required (config_bee.c). */
bool config_is_bee(json_t *root);
int config_parse_bee(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* Is root a Kimi-VL config (model_type kimi_vl)? Its vision_config with MoonViTConfig's
 * defaults (v NULL or null: all of them), text_config required, its topk_method
 * (config_kimi_vl.c). config_kimi_vl_text_keys: DeepseekV2Config's q_lora_rank /
 * n_routed_experts / n_shared_experts when absent (a null is kept), over view v. */
/* Is root a Step3-VL config (model_type step3_vl)? Its vision_config with
 * Step3VisionEncoderConfig's defaults, understand_projector_stride, projector_bias
 * (config_step3_vl.c). config_step3_vl_need_text: a step3_vl root without a text_config object
 * is WT_ECORRUPT (checked before its view is read). */
bool config_is_step3_vl(json_t *root);
int config_parse_step3_vl(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
int config_step3_vl_need_text(json_t *root, wt_errbuf *err);
bool config_is_kimi_vl(json_t *root);
int config_parse_kimi_vl(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
int config_kimi_vl_text_keys(json_t *v, wt_errbuf *err);
/* A kimi_vl root without a text_config object: WT_ECORRUPT (checked before its view is read:
 * the top level has none of the language model's sizes). */
int config_kimi_vl_need_text(json_t *root, wt_errbuf *err);
/* Kimi Linear's keys over view v after its class defaults: linear_attn_config into layer_types
 * and the linear_* sizes, num_shared_experts into n_shared_experts, what vLLM cannot build
 * refused (config_kimi_linear.c). */
int config_kimi_linear_keys(json_t *v, wt_errbuf *err);
/* Is root a Cohere2Vision config (model_type cohere2_vision)? Its downsample_factor,
 * alignment_intermediate_size, text_config's model_type (config_llava.c). */
bool config_is_cohere2_vision(json_t *root);
int config_parse_cohere2_vision(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root a Qwen2-Audio config (model_type qwen2_audio)? Its audio_config and text_config's
 * model_type (config_audio.c). */
bool config_is_qwen2_audio(json_t *root);
/* Is root an InternVL config (model_type internvl, or Intern-S1's interns1)? Its vision_config (v,
 * NULL or null when absent) whole, the top level's downsample_ratio / vision_feature_layer /
 * vision_feature_select_strategy and text_config's model_type (config_internvl.c). */
bool config_is_internvl(json_t *root);
int config_parse_internvl(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
int config_parse_audio(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* An EAGLE-3 draft's keys (draft_vocab_size, target_hidden_size, eagle_config, the bias switches,
 * hidden_act silu) when architectures[0] is one vLLM maps onto llama_eagle3.py
 * (config_is_eagle3); the speculators format refused for any model (config_eagle.c). */
bool config_is_eagle3(const char *arch);
int config_parse_eagle(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* The drafts' keys (config_drafts.c): EAGLE's (config_parse_eagle, from root), Medusa's and an
 * MLPSpeculator's (from lm, the view config_lm_view made of root); the view's readers of
 * model_type medusa (MedusaConfig's renaming of *num*heads* / *num*layers*) and mlp_speculator
 * (hidden_size as emb_dim before the class defaults; the loader's sizes after them). */
int config_parse_drafts(json_t *root, json_t *lm, struct ckpt_config *c, wt_errbuf *err);
int config_medusa_keys(json_t *v, wt_errbuf *err);
int config_mlp_speculator_alias(json_t *v, wt_errbuf *err);
int config_mlp_speculator_keys(json_t *v, wt_errbuf *err);
/* An MTP draft's keys (DeepSeekMTPModel: num_nextn_predict_layers required >= 1, the
 * V3.2 indexer refused, untied) when architectures[0] is one (config_mtp.c); called by
 * config_parse_eagle, which reads every draft's keys. */
int config_parse_mtp(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root a Granite Speech config (model_type granite_speech)? Its encoder_config,
 * projector_config, window_size / downsample_rate and text_config's model_type (granite
 * when it has none; config_granite_speech.c, called by config_parse_audio). */
bool config_is_granite_speech(json_t *root);
int config_parse_granite_speech(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root a Voxtral config (model_type voxtral)? Its audio_config (VoxtralEncoderConfig's
 * defaults) and text_config's model_type (llama when it has none; config_voxtral.c, called by
 * config_parse_audio). */
bool config_is_voxtral(json_t *root);
int config_parse_voxtral(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root a GLM-ASR config (model_type glmasr)? Its audio_config (GlmAsrEncoderConfig's
 * defaults; grouped-query encoders refused) and text_config's model_type (llama when it has
 * none; config_glmasr.c, called by config_parse_audio). */
/* Voxtral's and GLM-ASR's shared head (config_voxtral.c): text_config's model_type (llama
 * when it has none; "" without a text_config object), audio_config an object or absent / null
 * (*src NULL: the defaults), its model_type `type` or absent (else WT_EUNSUPPORTED naming
 * `model`'s encoder class `cls`), and the Whisper-style sizes under their HF names (the
 * position table's under pos_key) with VoxtralEncoderConfig's / GlmAsrEncoderConfig's
 * defaults. */
int config_whisper_like(json_t *root, struct ckpt_config *c, const char *model, const char *cls,
                        const char *type, const char *pos_key, json_t **src, wt_errbuf *err);
bool config_is_glmasr(json_t *root);
int config_parse_glmasr(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root an Audio Flamingo 3 config (model_type audioflamingo3)? Its audio_config
 * (AudioFlamingo3EncoderConfig's defaults; the attribute_map aliases read when the canonical key
 * is absent), projector_bias and text_config's model_type (qwen2 when it has none;
 * config_audioflamingo3.c, called by config_parse_audio). */
bool config_is_audioflamingo3(json_t *root);
int config_parse_audioflamingo3(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root an Ultravox config (model_type ultravox)? config_ultravox_need_text refuses one whose
 * text_config / audio_config is absent (text_model_id / audio_model_id named) or whose language
 * model is not cut here (called by config_lm_view); config_ultravox_class maps text_config's
 * model_type to the class its defaults come from (NULL: not cut); config_parse_ultravox reads
 * audio_config (WhisperConfig's defaults) and the projector's keys (config_ultravox.c, called by
 * config_parse_audio). */
bool config_is_ultravox(json_t *root);
int config_ultravox_need_text(json_t *root, wt_errbuf *err);
const char *config_ultravox_class(const char *tmt);
int config_parse_ultravox(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root a Whisper config (model_type whisper)? Its encoder's top-level sizes (WhisperConfig's
 * defaults) into the audio fields, max_target_positions into rob_max_pos
 * (config_parse_whisper, called by config_parse_audio); config_whisper_keys lays the decoder's
 * key names over the language-model view's (config_whisper.c). */
bool config_is_whisper(json_t *root);
int config_parse_whisper(json_t *root, struct ckpt_config *c, wt_errbuf *err);
int config_whisper_keys(json_t *v, wt_errbuf *err);
/* Is root a Qwen2.5-Omni config (model_type qwen2_5_omni)? *out = the flat view the loader
 * reads it from (thinker_config's keys, the top level's architectures / model_type /
 * quantization_config, the classes' defaults for absent sub-configs; a new reference), and
 * its audio_config (Qwen2_5OmniAudioEncoderConfig's defaults) into c (config_omni.c). */
bool config_is_qwen2_5_omni(json_t *root);
/* ... or Qwen3-Omni's (model_type qwen3_omni_moe), or either */
bool config_is_qwen3_omni(json_t *root);
bool config_is_omni(json_t *root);
int config_omni_root(json_t *root, json_t **out, wt_errbuf *err);
int config_parse_omni_audio(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root Tarsier2's (architectures[0] Tarsier2ForConditionalGeneration)? *out = the flat
 * view the loader reads it from (text_config, a Qwen2-VL config, with the top level's
 * architectures and quantization_config; a new reference), text_config missing, not an object
 * or not qwen2_vl refused (config_tarsier2.c). config_flat_root: *out = Qwen2.5 / 3-Omni's or
 * Tarsier2's flat view, NULL for any other config. */
bool config_is_tarsier2(json_t *root);
int config_tarsier2_root(json_t *root, json_t **out, wt_errbuf *err);
/* Is root an InternVL chat-format config (model_type internvl_chat)? Its flat view:
 * llm_config as text_config, model_type the class of llm_config.architectures[0]; its
 * vision_config (InternVisionConfig's defaults), select_layer and downsample_ratio into c
 * (config_internvl_chat.c). */
bool config_is_internvl_chat(json_t *root);
int config_internvl_chat_root(json_t *root, json_t **out, wt_errbuf *err);
int config_parse_internvl_chat(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* Is root a DeepSeek-VL2 config (model_type deepseek_vl_v2, DeepseekVLV2ForCausalLM)? Its flat
 * view: language_config as text_config; its vision_config, projector_config, tile_tag and the
 * language model's architecture into c (config_deepseek_vl2.c). */
bool config_is_deepseek_vl2(json_t *root);
int config_deepseek_vl2_root(json_t *root, json_t **out, wt_errbuf *err);
int config_parse_deepseek_vl2(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* DeepSeek-VL2's and DeepSeek-OCR's string key `key` of o (absent or null: dflt) that must be
 * want; else WT_EUNSUPPORTED naming in.key ("vision_config." "model_name") and why
 * (config_deepseek_vl2.c). */
int config_deepseek_vl2_want(json_t *o, const char *in, const char *key, const char *dflt,
                             const char *want, const char *why, wt_errbuf *err);
/* Their config.json's shared part: vision_config v and projector_config absent, null or
 * objects (*p: the projector's object, else NULL), tile_tag "2D" (the only one vLLM's
 * `script`, deepseek_vl2.py or deepseek_ocr.py, supports); else an error naming the key. */
int config_deepseek_vl2_top(json_t *root, json_t *v, const char *script, json_t **p,
                            wt_errbuf *err);
/* Is root a DeepSeek-OCR config (model_type deepseek_vl_v2, DeepseekOCRForCausalLM)? Its flat
 * view is DeepSeek-VL2's (config_deepseek_vl2_root); its vision_config (the SAM ViT-B and
 * CLIP-L towers' sizes), projector_config, tile_tag and the language model's table into c
 * (config_deepseek_ocr.c). */
bool config_is_deepseek_ocr(json_t *root);
int config_parse_deepseek_ocr(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* Is root a MiniCPM-V config (model_type minicpmv)? Its flat view: text_config = its own
 * keys, model_type the class vLLM builds for its version (llama, qwen2, qwen3; other versions
 * refused); vision_config (SiglipVisionConfig's defaults, MiniCPMVConfig's without one),
 * query_num, drop_vision_last_layer and the version into c (config_minicpmv.c). */
bool config_is_minicpmv(json_t *root);
int config_minicpmv_root(json_t *root, json_t **out, wt_errbuf *err);
int config_parse_minicpmv(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* Is root an Ovis config (model_type ovis)? Its flat view: llm_config as text_config (a qwen2 /
 * llama model_type, else refused); its visual_tokenizer_config (the AIMv2 backbone with
 * AIMv2Config's defaults, vocab_size, hidden_stride) and top-level hidden_size into c
 * (config_ovis.c). */
bool config_is_ovis(json_t *root);
int config_ovis_root(json_t *root, json_t **out, wt_errbuf *err);
int config_parse_ovis(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root an Ovis2.5 config (model_type ovis2_5)? Its flat view is Ovis's (config_ovis_root,
 * qwen3 alone); its vit_config (Siglip2NavitConfig's defaults), visual_vocab_size and the top
 * level's hidden_size into c (config_ovis2_5.c). */
bool config_is_ovis2_5(json_t *root);
int config_parse_ovis2_5(json_t *root, struct ckpt_config *c, wt_errbuf *err);
int config_flat_root(json_t *root, json_t **out, wt_errbuf *err);
/* Is root a dots.ocr config (model_type dots_ocr)? Its vision_config (DotsVisionConfig's keys and
 * defaults, absent or null: every default) into c (config_dots_ocr.c). */
bool config_is_dots_ocr(json_t *root);
int config_parse_dots_ocr(json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* Is root a PaddleOCR-VL config (model_type paddleocr_vl)? The top-level keys the remote
 * PaddleOCRVLConfig and transformers 5's disagree on, required (config_paddleocr_vl.c). */
bool config_is_paddleocr_vl(json_t *root);
int config_parse_paddleocr_vl(json_t *root, wt_errbuf *err);
/* Is root a HunYuan-VL config (model_type hunyuan_vl)? HunYuanVLVisionConfig's defaults for
 * vision_config's absent keys, the position rows and the merger's 4 x width
 * (config_hunyuan_vl.c). */
bool config_is_hunyuan_vl(json_t *root);
int config_parse_hunyuan_vl(json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* Is root a Nemotron Nano VL v2 config (model_type NemotronH_Nano_VL_V2)? Its vision_config v
 * (RADIO: args.model's sizes) and the top level's mlp1 sizes (config_nano_vl.c). */
bool config_is_nano_vl(json_t *root);
int config_parse_nano_vl(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* Is root a Fuyu config (model_type fuyu)? Its top-level patch_size / num_channels /
 * hidden_size (vision_embed_tokens') and text_config's model_type (config_fuyu.c). */
bool config_is_fuyu(json_t *root);
int config_parse_fuyu(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root a Phi-3-Vision config (model_type phi3_v)? img_processor / embd_layer checked and
 * vLLM's fixed CLIP ViT-L/14-336 laid onto the vision fields (config_phi3v.c). */
bool config_is_phi3v(json_t *root);
int config_parse_phi3v(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root a Molmo config (model_type molmo)? vLLM's hard-coded VisionBackboneConfig laid onto
 * the vision fields (config_molmo.c); config_molmo_keys / config_molmo_width are its view's key
 * readers (before / after the class defaults: MolmoConfig's names, embedding_size as the
 * vocabulary, weight_tying true, layer_norm_type other than rms and MolmoE's experts refused;
 * intermediate_size halved, an odd one refused). */
bool config_is_molmo(json_t *root);
int config_parse_molmo(struct ckpt_config *c);
int config_molmo_keys(json_t *v, wt_errbuf *err);
int config_molmo_width(json_t *v, wt_errbuf *err);
/* Is root an Aria config (model_type aria)? The projector's queries (the largest value of
 * projector_patch_to_query_dict, 256 when absent) and text_config's model_type ("" without a
 * text_config object, "?" without model_type; config_aria.c, called by config_parse_vision). */
bool config_is_aria(json_t *root);
int config_parse_aria(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root an LFM2-VL config (model_type lfm2_vl, or lfm2-vl as Lfm2VlConfig writes it)? Its
 * vision_config v (an object) with Siglip2VisionConfig's defaults, the top level's
 * downsample_factor / projector_hidden_size / projector_bias / projector_use_layernorm and
 * text_config's model_type (config_lfm2_vl.c). */
bool config_is_lfm2_vl(json_t *root);
/* Is root a BLIP-2 config (model_type blip-2)? Its vision_config, qformer_config,
 * num_query_tokens and text_config's model_type with the classes' defaults
 * (config_blip2.c). */
bool config_is_blip2(json_t *root);
int config_parse_blip2(json_t *root, struct ckpt_config *c, wt_errbuf *err);
int config_parse_lfm2_vl(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* Is root an Isaac config (model_type isaac)? Its vision_config v (NULL, null or an object)
 * with PixelShuffleSiglip2VisionConfig's defaults (config_isaac.c). */
bool config_is_isaac(json_t *root);
int config_parse_isaac(json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* Is root a HyperCLOVAX-SEED-Vision config (model_type hyperclovax_vlm)? config_parse_hcx:
 * text_config / vision_config model_type (required), use_nth_layer (-2) as v_feature_layer,
 * vision_use_head, proj_pos_emb / proj_prenorm into c; anyres false, a projector other than
 * cabstractor and a non-square num_queries_vis_abstractor_image refused (config_hcx.c). */
bool config_is_hcx(json_t *root);
int config_parse_hcx(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* Is root a HyperCLOVAX-SEED-Think config (model_type vlm: HCXVisionV2ForCausalLM)?
 * config_parse_hcx_v2: text_config.model_type (hyperclovax or llama, required) and
 * use_post_norm, vision_config.model_type into c (config_hcx_v2.c). */
bool config_is_hcx_v2(json_t *root);
int config_parse_hcx_v2(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Is root a BAGEL config (model_type bagel)? Its flat view: llm_config as text_config (model_type
 * qwen2, qk_norm as use_qk_norm), vit_config as vision_config (siglip_vision_model, 27 blocks
 * as 26, vision_use_head false when absent); visual_und false refused. config_parse_bagel: the
 * view's vision_use_head and the language model's class into c (config_bagel.c). */
/* Is root an ERNIE-4.5-VL config (model_type ernie4_5_moe_vl)? Its flat view: the [text,
 * vision] lists moe_num_experts / moe_intermediate_size / moe_layer_start_index /
 * moe_layer_end_index as the text entries, the vision experts' width kept for
 * config_ernie45vl_vision; that one checks vision_config's and the resampler's keys into c
 * (config_ernie45vl.c). */
bool config_is_ernie45vl(json_t *root);
int config_ernie45vl_root(json_t *root, json_t **out, wt_errbuf *err);
int config_ernie45vl_vision(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
bool config_is_bagel(json_t *root);
int config_bagel_root(json_t *root, json_t **out, wt_errbuf *err);
void config_parse_bagel(json_t *v, struct ckpt_config *c);
/* Is root an Mllama config (model_type mllama)? Its vision_config v (NULL or null when absent:
 * MllamaVisionConfig's defaults) into c's v_* / ml_* fields, text_config's
 * cross_attention_layers into full_attn_idxs and its model_type (config_mllama.c). */
bool config_is_mllama(json_t *root);
int config_parse_mllama(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
/* Chameleon (model_type chameleon): swin_norm, hidden_act and vq_config into c's cham_* /
 * vq_* fields, ChameleonVQVAEConfig's defaults for absent keys; a wrong type, a
 * channel_multiplier past CKPT_MAX_VQ_LEVELS entries or attn_resolutions past as many is
 * WT_ECORRUPT / WT_EUNSUPPORTED naming the key (config_chameleon.c). */
int config_parse_chameleon(json_t *root, struct ckpt_config *c, wt_errbuf *err);

/* The class defaults of the language model whose model_type is mt (*n entries), or NULL
 * (config_defaults.c). Static tables. */
const class_default *config_class_defaults(const char *mt, size_t *n);
/* The same for the text families from Apertus to LongCat-Flash (config_defaults_more.c), then
 * config_class_defaults_classic's, or NULL; mt not NULL. */
const class_default *config_class_defaults_more(const char *mt, size_t *n);
/* The same for the GPT-era and state-space families (config_defaults_classic.c), then
 * config_class_defaults_remote's, or NULL; mt not NULL. */
const class_default *config_class_defaults_classic(const char *mt, size_t *n);
/* The same for the families whose configuration is remote code (config_defaults_remote.c), then
 * config_class_defaults_vl's, or NULL; mt not NULL. */
const class_default *config_class_defaults_remote(const char *mt, size_t *n);
/* Qwen2-VL's / Qwen2.5-VL's text classes (model_type qwen2_vl, qwen2_5_vl and their *_text), or
 * NULL; mt not NULL (config_defaults_vl.c). Static tables. */
const class_default *config_class_defaults_vl(const char *mt, size_t *n);
/* Qwen2-VL / Qwen2.5-VL: an explicit null num_key_value_heads of view v becomes
 * num_attention_heads, as Qwen2VLTextConfig does (config_defaults_vl.c). */
int config_qwen2_vl_keys(json_t *v, wt_errbuf *err);
/* root of model_type qwen2_vl / qwen2_5_vl: *out = a new copy of its vision_config (an empty
 * object when absent or null) with the vision class's defaults where keys are absent or null;
 * else (or vision_config not an object) *out = NULL, WT_OK (config_defaults_vl.c). */
int config_qwen2_vl_vision(json_t *root, json_t **out, wt_errbuf *err);

/* Hunyuan V1 MoE (model_type hunyuan_v1_moe): the per-layer lists moe_intermediate_size,
 * moe_topk, num_shared_expert of view v replaced by their one value (all entries equal, one
 * per layer; else WT_EUNSUPPORTED / WT_ECORRUPT naming the key) (config_hunyuan.c). */
int config_hunyuan_lists(json_t *v, wt_errbuf *err);

/* DBRX (model_type dbrx): DbrxConfig's d_model / n_heads / n_layers / max_seq_len and its
 * nested attn_config / ffn_config keys laid over view v under the names the loader reads
 * (config_dbrx.c); a nested config not an object or tie_word_embeddings true refused. */
int config_dbrx_keys(json_t *v, wt_errbuf *err);
/* MPT (model_type mpt): MptConfig's d_model / n_heads / n_layers / max_seq_len, attn_config's
 * kv_n_heads (vLLM's GQA; absent: n_heads) and clip_qkv laid over the common keys,
 * intermediate_size = expansion_ratio * d_model; the keys vLLM's mpt.py asserts on or ignores
 * (tie_word_embeddings, no_bias, alibi, prefix_lm, qk_ln, softmax_scale, ...) refused unless
 * they hold what it needs (config_dbrx.c). */
int config_mpt_keys(json_t *v, wt_errbuf *err);

/* GPT-2 (model_type gpt2) and GPTBigCode (gpt_bigcode: multi_query, one kv head): GPT2Config's
 * n_embd / n_head / n_layer / n_positions laid over view v under the names the loader reads,
 * intermediate_size = n_inner or 4 * n_embd; the attention switches vLLM's gpt2.py cannot run
 * refused naming the key (config_gpt2.c). */
int config_gpt2_keys(json_t *v, const char *mt, wt_errbuf *err);

/* OPT (model_type opt): OPTConfig's ffn_dim laid over view v as intermediate_size (an
 * intermediate_size key OPTConfig does not read dropped), before the class defaults
 * (config_opt.c). */
int config_opt_keys(json_t *v, wt_errbuf *err);
/* GPT-J (model_type gptj): GPTJConfig's n_embd / n_head / n_layer / n_positions laid over view
 * v under the names the loader reads, intermediate_size from n_inner or 4 x n_embd
 * (config_gptj.c). */
int config_gptj_keys(json_t *v, wt_errbuf *err);
/* EXAONE 3.x (model_type exaone): ExaoneConfig's num_layers / layer_norm_epsilon laid over
 * num_hidden_layers / rms_norm_eps, intermediate_size falsy -> 4 x hidden_size;
 * activation_function other than silu and a true bias switch refused (config_exaone.c). */
int config_exaone_keys(json_t *v, wt_errbuf *err);
/* Qwen, first generation (model_type qwen): QWenConfig's layer_norm_epsilon / kv_channels /
 * rotary_emb_base laid over rms_norm_eps / head_dim / rope_theta, intermediate_size halved (the
 * MLP's width); visual (Qwen-VL), no_bias false, scale_attn_weights false, tie_word_embeddings
 * true and rotary_pct other than 1 refused naming the key (config_qwen.c). */
int config_qwen_keys(json_t *v, wt_errbuf *err);
/* Baichuan (model_type baichuan): the dims of architectures[0]'s class (BaiChuanConfig for
 * BaiChuanForCausalLM, BaichuanConfig otherwise) where v leaves them out; a hidden_act other
 * than silu refused (config_baichuan.c). */
int config_baichuan_keys(json_t *v, wt_errbuf *err);
/* MiniCPM (model_type minicpm): hidden_act other than silu, attention_bias true, a head_dim
 * other than hidden_size / heads refused; MiniCPM-MoE (num_experts > 0): num_experts_per_tok
 * absent or outside [1, num_experts], moe_intermediate_size and the other expert-count keys
 * refused (config_minicpm.c). */
int config_minicpm_keys(json_t *v, wt_errbuf *err);
/* MiniCPM3 (model_type minicpm3): MiniCPM's hidden_act / attention_bias refusals, num_experts
 * other than 0 refused, q_lora_rank null refused, v_head_dim None -> qk_nope_head_dim
 * (config_minicpm.c). */
int config_minicpm3_keys(json_t *v, wt_errbuf *err);
/* InternLM3 (model_type internlm3): qkv_bias laid onto attention_bias (q/k/v), attention_bias
 * or bias onto attention_out_bias (o_proj), as vLLM's llama.py reads them; hidden_act other
 * than silu refused (config_internlm3.c). */
int config_internlm3_keys(json_t *v, wt_errbuf *err);
/* InternLM (model_type internlm): `attention_bias or bias` (bias defaults to true) laid onto
 * attention_out_bias and, unless qkv_bias is given, attention_bias; hidden_act other than silu,
 * rotary.type other than dynamic / origin and rotary.base other than rope_theta refused
 * (config_internlm3.c). */
int config_internlm_keys(json_t *v, wt_errbuf *err);
/* Xverse (model_type xverse): `attention_bias or bias` (both absent in XverseConfig: false) laid
 * onto attention_out_bias and, unless qkv_bias is given, attention_bias; hidden_act other than
 * silu refused (config_internlm3.c). Aquila (model_type aquila) is read alike. */
int config_xverse_keys(json_t *v, wt_errbuf *err);
/* openPangu-Embedded (model_type PanguEmbedded): the MLA, sink, MoE, sandwich / mHC / block
 * norm, sliding-window, is_causal false and interleaved M-RoPE variants of vLLM's openpangu.py
 * refused naming the key (config_pangu.c), then InternLM's switches (`attention_bias or bias`,
 * bias defaulting to true; hidden_act silu only: config_pangu_dense_switches). */
int config_pangu_dense_keys(json_t *v, wt_errbuf *err);
int config_pangu_dense_switches(json_t *v, wt_errbuf *err);
/* openPangu-Ultra-MoE (model_type pangu_ultra_moe): vLLM's DeepSeek-V3 names required, the
 * remote spellings and the other openpangu.py variants refused (config_pangu_moe.c). */
int config_pangu_moe_keys(json_t *v, wt_errbuf *err);
/* The MoE keys vLLM's OpenPanguMoE reads as config.X (n_routed_experts, first_k_dense_replace,
 * moe_intermediate_size, num_experts_per_tok, routed_scaling_factor, norm_topk_prob; the list
 * from index first: 4 skips the MLA dims) and n_shared_experts null or >= 1, each refusal naming
 * the key and arch (config_pangu_moe.c). */
int config_pangu_moe_need(json_t *v, const char *arch, size_t first, wt_errbuf *err);
/* sandwich_norm (model_types pangu_ultra_moe, PanguProMoEV2) and router_enable_expert_bias
 * (PanguProMoEV2) into c (config_pangu_moe.c). */
int config_pangu_flags(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* openPangu-Pro-MoE-V2 (model_type PanguProMoEV2): the sink attention's keys required and
 * laid onto head_dim / v_head_dim, the MoE keys, the other variants refused (config_pangu_v2.c). */
int config_pangu_v2_keys(json_t *v, wt_errbuf *err);
/* LlamaBidirectionalModel (model_type llama_bidirec): pooling one of avg / cls / last, as
 * vLLM's LlamaBidirectionalConfig maps it (config_bidir.c). */
int config_llama_bidirec_keys(json_t *v, wt_errbuf *err);
/* Nomic BERT (model_type nomic_bert): GPT2Config's dims laid over the common keys, the three bias
 * switches onto attention_bias / mlp_bias, the variants vLLM asserts off refused (config_nomic.c).
 */
int config_nomic_bert_keys(json_t *v, wt_errbuf *err);
/* GTE v1.5 (model_type new, GteNewModel): what vLLM's GteNewModelConfig asserts and
 * bert_with_rope.py cannot build refused naming the key; type_vocab_size required (config_gte.c).
 */
int config_gte_new_keys(json_t *v, wt_errbuf *err);
int config_gte_keys(json_t *v, wt_errbuf *err); /* model_type gte: every key required */
/* DeciLM (model_type nemotron-nas): block_configs checked layer by layer, the bias switches and
 * hidden_act refused as config_decilm.c says; run after the class defaults. */
int config_decilm_keys(json_t *v, wt_errbuf *err);
/* IQuest-Coder (model_type iquestcoder): hidden_act other than silu, clip_qkv not null and a
 * sliding window that would act (use_sliding_window true, sliding_window given, max_window_layers
 * below num_hidden_layers) refused: vLLM's llama.py runs none of them (config_iquestcoder.c). */
int config_iquestcoder_keys(json_t *v, wt_errbuf *err);
/* Ouro (model_type ouro): hidden_act other than silu, total_ut_steps outside [1,
 * CONFIG_OURO_MAX_UT_STEPS], is_causal false and a sliding window that would act
 * (use_sliding_window true with sliding_window given) refused (config_ouro.c). */
#define CONFIG_OURO_MAX_UT_STEPS 64
int config_ouro_keys(json_t *v, wt_errbuf *err);
/* PLaMo 3 (model_type plamo3): hidden_activation other than swiglu, attention_bias true and
 * rope_scaling_factor other than 1 refused; window_size / sliding_window_pattern integers >= 1,
 * an interleaved_sliding_window other than theirs refused (config_plamo3.c). */
int config_plamo3_keys(json_t *v, wt_errbuf *err);
/* PLaMo 2 (model_type plamo2): hidden_size_per_head as head_dim, mamba_num_heads and the
 * derived width / time_step_rank under the mixer's names, layer_types from mamba_step (>= 2);
 * mamba_enabled other than true refused (config_plamo2.c). */
int config_plamo2_keys(json_t *v, wt_errbuf *err);
/* Code World Model (model_type cwm; other model_types untouched): CwmConfig's derived
 * layer_types (full attention on every 4th layer from 0), sliding_window 8192, llama3
 * rope_scaling and its scalar defaults filled where absent; hidden_act other than silu refused
 * (config_cwm.c). Also run on the config.json text by the reference (reference/ckpt.c). */
int config_cwm_keys(json_t *v, wt_errbuf *err);
/* Jais 2 (model_type jais2): hidden_act other than relu2 and an interleaved_sliding_window
 * other than an integer > 0 or a non-empty list of them / null refused (WT_EUNSUPPORTED naming
 * the key); `attention_bias (default true) or bias` laid onto attention_bias (config_jais2.c). */
int config_jais2_keys(json_t *v, wt_errbuf *err);
/* Tele-FLM (model_type TeleFLM): Xverse's reading, use_mup required, and with it input_mult,
 * output_mult, mup_scale_factor required in [1e-6, 1e6]; intermediate_size, rms_norm_eps and
 * tie_word_embeddings required (the remote class's defaults unknown; config_teleflm.c). */
int config_teleflm_keys(json_t *v, wt_errbuf *err);
/* Solar (model_type solar): `attention_bias or bias` laid onto attention_bias and
 * attention_out_bias (qkv_bias not read), hidden_act other than silu refused, the block skip
 * connections' keys checked (config_solar.c, ckpt_config_solar). */
int config_solar_keys(json_t *v, wt_errbuf *err);
/* MiMo (model_type mimo): hidden_act other than silu refused (WT_EUNSUPPORTED), and
 * num_nextn_predict_layers not an integer >= 0 (WT_ECORRUPT) (config_mimo.c). */
int config_mimo_keys(json_t *v, wt_errbuf *err);
/* Orion (model_type orion): hidden_act other than silu, attention_bias / mlp_bias true and a
 * rope_scaling OrionConfig refuses (other than {type linear | dynamic, factor > 1}) refused
 * (config_orion.c). */
int config_orion_keys(json_t *v, wt_errbuf *err);
/* StableLM Epoch (model_type stablelm_epoch, StableLMEpochForCausalLM): rope_pct laid onto
 * partial_rotary_factor and norm_eps onto layer_norm_eps (vLLM's stablelm.py reads the old
 * names first); the keys StableLMEpochConfig would default required (config_stablelm_epoch.c). */
int config_stablelm_epoch_keys(json_t *v, wt_errbuf *err);
/* TeleChat2 (model_type telechat): Telechat2Config's n_layer / n_head / ffn_hidden_size /
 * layer_norm_epsilon laid over the Llama names config.json leaves out, n_embed over hidden_size,
 * a null num_key_value_heads removed, hidden_act laid to silu (vLLM forces it);
 * apply_residual_connection_post_layernorm true, embed_layernorm true and a base other than
 * rope_theta refused (config_telechat2.c). */
int config_telechat2_keys(json_t *v, wt_errbuf *err);
/* MiniMax-Text-01 / -M1's remote config (model_type minimax_text_01, minimax_m1; mt: whether
 * it is one): attn_type_list laid as layer_types, the layernorm_* residual factors under
 * MiniMaxConfig's names, int(rope_theta); what vLLM's minimax_text_01.py or the minimax cut
 * cannot build refused naming the key (config_minimax01.c). A no-op for other model types. */
bool config_is_minimax01(const char *mt);
int config_minimax01_keys(json_t *v, wt_errbuf *err);
/* JAIS (model_type jais): GPT-2's keys and refusals (config_gpt2_keys), activation_function
 * other than swiglu (JAISConfig's default gelu_new included), tie_word_embeddings false and a
 * position_embedding_type other than learned / alibi refused naming the key; the field it
 * decides, jais_wpe (config_jais.c). */
int config_jais_keys(json_t *v, wt_errbuf *err);
int config_parse_jais(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Snowflake Arctic (model_type arctic): hidden_act other than silu, tie_word_embeddings true,
 * use_residual missing or not a boolean, moe_layer_frequency other than 1 / 2, a deepspeedfp
 * quantization_config or quantization, rope_scaling and sliding_window refused naming the key;
 * the fields it decides, arctic_residual and arctic_moe_freq (config_arctic.c). */
int config_arctic_keys(json_t *v, wt_errbuf *err);
int config_parse_arctic(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Bailing MoE (model_type bailing_moe): num_key_value_heads / moe_intermediate_size required,
 * use_bias / tie_word_embeddings / use_qk_norm true, first_k_dense_replace not 0 and hidden_act
 * other than silu refused, use_qkv_bias / num_shared_experts read as attention_bias /
 * n_shared_experts (config_bailing.c). */
int config_bailing_keys(json_t *v, wt_errbuf *err);
/* Bailing MoE V2 (model_type bailing_moe_v2): num_key_value_heads / moe_intermediate_size
 * (intermediate_size with first_k_dense_replace) required; use_bias / tie_word_embeddings true,
 * use_qk_norm without use_rmsnorm, moe_router_enable_expert_bias false, score_function other than
 * sigmoid, hidden_act other than silu refused; use_qkv_bias read as attention_bias, the shared
 * experts' width as shared_expert_intermediate_size (config_bailing_v2.c). */
int config_bailing_v2_keys(json_t *v, wt_errbuf *err);
/* Step 3 (model_type step3_text): hidden_act other than silu, num_attention_groups /
 * num_key_value_heads other than 1, moe_layers_enum missing or not a string of layer numbers,
 * share_q_dim / share_expert_dim not an integer >= 1 refused; moe_layers_enum read as moe_layers,
 * share_q_dim as q_lora_rank, share_expert_dim as shared_expert_intermediate_size,
 * tie_word_embeddings as false (config_step3.c). */
int config_step3_text_keys(json_t *v, wt_errbuf *err);
/* MiMo-V2-Flash (model_type mimo_v2_flash): hidden_act other than silu, tie_word_embeddings
 * true, layernorm_epsilon / head_dim missing, the MoE keys missing where moe_layer_freq makes a
 * layer MoE refused; layernorm_epsilon read as rms_norm_eps, a moe_layer_freq list as
 * moe_layers (an integer or none: no MoE layer), scoring_func sigmoid, routed_scaling_factor 1
 * (config_mimo_v2.c). */
int config_mimo_v2_flash_keys(json_t *v, wt_errbuf *err);
/* AFMoE (model_type afmoe): hidden_act other than silu, tie_word_embeddings true, score_func
 * other than sigmoid / softmax refused; num_dense_layers read as first_k_dense_replace,
 * num_shared_experts as n_shared_experts (x moe_intermediate_size as
 * shared_expert_intermediate_size), score_func / route_norm / route_scale as scoring_func /
 * norm_topk_prob / routed_scaling_factor (config_afmoe.c). */
int config_afmoe_keys(json_t *v, wt_errbuf *err);
/* DeepSeek-MoE (model_type deepseek): hidden_act other than silu, scoring_func other than
 * softmax, attention_bias / tie_word_embeddings true and n_routed_experts without
 * num_experts_per_tok refused naming the key (config_deepseek.c). */
int config_deepseek_keys(json_t *v, wt_errbuf *err);
/* DeepSeek-V3.2 (model_type deepseek_v32): index_topk, index_n_heads, index_head_dim required,
 * integers >= 1, refused naming the key (config_deepseek_v32.c). */
int config_deepseek_v32_keys(json_t *v, wt_errbuf *err);
/* ChatGLM (model_type chatglm): ChatGLMConfig's num_layers / padded_vocab_size /
 * ffn_hidden_size / kv_channels / seq_length / layernorm_epsilon / multi_query_group_num /
 * rope_ratio / add_qkv_bias laid over view v under the names the loader reads; vision_config,
 * add_bias_linear true, rmsnorm false, post_layer_norm false and an absent original_rope
 * refused naming the key (config_chatglm.c). */
int config_chatglm_keys(json_t *v, wt_errbuf *err);
/* GLM-4V (GLM4VForCausalLM under model_type chatglm): its vision_config's EVA2CLIP keys, all
 * required (vLLM reads them without defaults), num_positions checked against the image grid
 * (config_glm4v_old.c). */
bool config_is_glm4v_old(json_t *root);
int config_parse_glm4v_old(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err);
struct ckpt_config;
/* OPT's own keys into c (struct ckpt_config's opt_* fields, enable_bias into attention_bias);
 * a wrong type is WT_ECORRUPT naming the key (config_opt.c). */
int config_parse_opt(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* RoBERTa / XLM-RoBERTa (model_type roberta or xlm-roberta): their embeddings' keys
 * (config_roberta.c). */
bool config_is_roberta(const char *model_type);
int config_parse_roberta(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* BERT's heads (architectures[0] BertForSequenceClassification or BertForTokenClassification):
 * RoBERTa's keys but pad_token_id into the rob_* fields (config_roberta.c). */
bool config_is_bert_head(const char *arch);
int config_parse_bert_head(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* PretrainedConfig's num_labels: the entries of id2label when it is an object, else
 * num_labels, else 2 (config_roberta.c; RoBERTa's and ModernBERT's classifiers). */
int config_num_labels(json_t *root, int64_t *out, wt_errbuf *err);
/* The decoder sequence classifiers (architectures[0] Llama-, Mistral-, Qwen2- or
 * Qwen3ForSequenceClassification): num_labels into rob_num_labels, classifier_from_token /
 * method into cls_from_token; Qwen2's reward models (Qwen2ForRewardModel,
 * Qwen2ForProcessRewardModel): their fixed 1 / 2 labels; GPT2ForSequenceClassification:
 * num_labels alone (config_seqcls.c). */
bool config_is_seqcls(const char *arch);
int config_parse_seqcls(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* CLIPModel (model_type clip; config_clip.c): projection_dim (root's) and
 * text_config.max_position_embeddings (lm: config_lm_view's object). */
bool config_is_clip(json_t *root);
int config_parse_clip(json_t *root, json_t *lm, struct ckpt_config *c, wt_errbuf *err);
/* SiglipModel (model_type siglip; config_clip.c): text_config.projection_size and
 * max_position_embeddings; vision_config.vision_use_head false refused. */
bool config_is_siglip(json_t *root);
int config_parse_siglip(json_t *root, json_t *lm, struct ckpt_config *c, wt_errbuf *err);
/* ModernBERT (model_type modernbert): ModernBertConfig's own keys into c's mb_* fields
 * (config_modernbert.c). */
int config_parse_modernbert(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* GTE v1.5 (config_gte.c): type_vocab_size; num_labels for GteNewForSequenceClassification */
int config_parse_gte_new(json_t *root, struct ckpt_config *c, wt_errbuf *err);

/* BLOOM (model_type bloom): BloomConfig's n_embed (over hidden_size), n_layer and n_head
 * (under num_hidden_layers / num_attention_heads when given) laid over view v before the
 * class defaults (config_bloom_keys); after them intermediate_size = 4 * hidden_size, the
 * MLP's width (config_bloom_width) (config_bloom.c). */
int config_bloom_keys(json_t *v, wt_errbuf *err);
int config_bloom_width(json_t *v, wt_errbuf *err);

/* The largest integer config_get_int accepts (2^40). */
#define CONFIG_INT_MAX (INT64_C(1) << 40)

/* config.json field readers shared by config.c and config_hybrid.c. An integer >= min
 * (absent or null: dflt; at most CONFIG_INT_MAX), a boolean (absent or null: dflt), a real > 0
 * (absent or null: dflt), a list of integers (v NULL or null: none; *out owned); a wrong type or
 * range is WT_ECORRUPT naming the key. */
int config_get_int(json_t *o, const char *name, int64_t dflt, int64_t min, int64_t *out,
                   wt_errbuf *err);
int config_get_bool(json_t *o, const char *name, bool dflt, bool *out, wt_errbuf *err);
/* The boolean key (absent or null: dflt) when it holds the value `bad` vLLM does not load:
 * WT_EUNSUPPORTED "config.json: KEY is true|false; why" (why names the fix). */
int config_refuse_bool(json_t *o, const char *key, bool dflt, bool bad, const char *why,
                       wt_errbuf *err);
int config_get_pos_real(json_t *o, const char *name, double dflt, double *out, wt_errbuf *err);
/* An integer key of a sub-config, its class's default, where it goes in ckpt_config. */
typedef struct config_int_key {
	const char *key;
	int64_t dflt;
	size_t off;
} config_int_key;
#define CONFIG_NKEYS(a) (sizeof(a) / sizeof((a)[0]))
/* The integer keys k[0..n) of o (NULL or JSON null: every default) into c, each >= 1
 * (config_get_int); an error is prefixed "in <in>", o not an object refused naming in. */
struct ckpt_config;
int config_read_ints(json_t *o, const char *in, const config_int_key *k, size_t n,
                     struct ckpt_config *c, wt_errbuf *err);
/* A BLIP-2 Q-Former's config (Blip2QFormerConfig; q NULL: all its defaults) into c's qf_*:
 * its sizes, cross_attention_frequency, encoder_hidden_size, model_type,
 * position_embedding_type and use_qformer_text_input (config_qformer.c); what vLLM cannot
 * build is refused at plan time. key names q in errors. */
int config_parse_qformer(json_t *q, const char *key, struct ckpt_config *c, wt_errbuf *err);
/* Persimmon (model_type persimmon): with qk_layernorm, a layer_norm_eps other than 1e-5
 * refused naming the key and its value (vLLM's persimmon.py builds q_layernorm / k_layernorm
 * with eps 1e-5 whatever it says, transformers with layer_norm_eps) (config_dbrx.c). */
int config_persimmon_eps(json_t *root, bool qk_layernorm, wt_errbuf *err);
int config_int_list(json_t *v, const char *name, int64_t **out, size_t *n, wt_errbuf *err);

/* The hybrid families' keys into c, each for its own model_type (config_hybrid.c): LFM2's
 * short conv, MLP size rule and full_attn_idxs; LFM2-MoE's; Jamba's periods / offsets and
 * mamba_dt_rank; the Mamba2 mixer's mamba_* keys; Bamba's attn_layer_indices; Falcon-H1's
 * mamba_d_ssm, mamba_rms_norm, projectors_bias. */
struct ckpt_config;
int config_parse_lfm2(json_t *root, struct ckpt_config *c, wt_errbuf *err);
int config_parse_lfm2_moe(json_t *root, struct ckpt_config *c, wt_errbuf *err);
int config_parse_jamba(json_t *root, struct ckpt_config *c, wt_errbuf *err);
int config_parse_mamba(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Mamba's (MambaConfig) keys laid over view v under the names the Mamba mixers' planner
 * reads, after its class defaults (config_hybrid.c); v is the caller's own. */
int config_mamba_keys(json_t *v, wt_errbuf *err);
/* Mamba2Config's keys under the Mamba2 mixer's names (config_hybrid.c). */
int config_mamba2_keys(json_t *v, wt_errbuf *err);
/* mamba_dt_rank of root into c ("auto" or absent: -1) (config_hybrid.c). */
int config_parse_dt_rank(json_t *root, struct ckpt_config *c, wt_errbuf *err);
int config_parse_bamba(json_t *root, struct ckpt_config *c, wt_errbuf *err);
int config_parse_falcon_h1(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Zamba2 (model_type zamba2, config_zamba2.c): Zamba2Config's keys under the Mamba2 mixer's
 * names, its derived keys and layers_block_type as layer_types, laid over view v after its
 * class defaults, the builds transformers and vLLM make apart refused naming the key
 * (config_zamba2_keys); num_mem_blocks, adapter_rank, use_shared_attention_adapter into c
 * (config_parse_zamba2). */
int config_zamba2_keys(json_t *v, wt_errbuf *err);
int config_parse_zamba2(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Nemotron-H (model_type nemotron_h, config_nemotron_h.c): NemotronHConfig's stored names
 * taken from its constructor's where only those are given, in view v before its class
 * defaults (config_nemotron_h_alias); after them its keys under the Mamba2 mixer's names,
 * mamba_d_ssm, hybrid_override_pattern as layer_types, what vLLM cannot build refused naming
 * the key (config_nemotron_h_keys). */
int config_nemotron_h_alias(json_t *v, wt_errbuf *err);
int config_nemotron_h_keys(json_t *v, wt_errbuf *err);
/* Gemma 3n (model_type gemma3n_text, config_gemma3n.c): a per-layer intermediate_size of
 * equal entries read as its value, layer_types' class default, activation_sparsity_pattern
 * checked, what vLLM cannot build refused naming the key, in view v after its class
 * defaults (config_gemma3n_keys); the AltUp / Laurel / per-layer input sizes and
 * num_kv_shared_layers into c (config_parse_gemma3n). */
int config_gemma3n_keys(json_t *v, wt_errbuf *err);
int config_parse_gemma3n(json_t *root, struct ckpt_config *c, wt_errbuf *err);

/* LongCat-Flash (model_type longcat_flash, config_longcat.c): the keys transformers and vLLM
 * read apart refused in view v before the class defaults (config_longcat_check); num_layers,
 * ffn_hidden_size, expert_ffn_hidden_size, moe_topk laid over the common names after them
 * (config_longcat_keys); zero_expert_num read (config_parse_longcat). */
int config_longcat_check(json_t *v, wt_errbuf *err);
int config_longcat_keys(json_t *v, wt_errbuf *err);
int config_parse_longcat(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* Falcon (model_type falcon): FalconConfig's n_embed over hidden_size, laid over view v
 * before the class defaults (config_falcon_keys); after them (config_parse_falcon) c's kv
 * heads (new_decoder_architecture: num_kv_heads; else multi_query: 1; else the heads), the
 * MLP 4 * hidden_size, the three bias switches from bias and falcon_ln from parallel_attn /
 * num_ln_in_parallel_attn; the layouts vLLM's falcon.py and transformers build differently
 * refused naming the keys (config_falcon.c). */
int config_falcon_keys(json_t *v, wt_errbuf *err);
/* The original releases' remote code (model_type RefinedWeb / RefinedWebModel, RWForCausalLM)
 * through vLLM's RWConfig: its n_layer / n_head / n_head_kv / n_embed laid onto FalconConfig's
 * names in view v (config_rw_keys); config_parse_falcon reads its defaults (parallel_attn false,
 * n_head_kv 1, the new architecture forced at hidden_size 8192) by config_is_rw. */
bool config_is_rw(const char *mt);
int config_rw_keys(json_t *v, wt_errbuf *err);
int config_parse_falcon(json_t *root, struct ckpt_config *c, wt_errbuf *err);
/* InternLM2 (model_type internlm2): bias (InternLM2Config's default true) and a hidden_act
 * other than silu refused naming the key, as vLLM's internlm2.py cannot load them
 * (config_internlm2.c). */
int config_parse_internlm2(json_t *root, struct ckpt_config *c, wt_errbuf *err);

/* First of `names` (NULL-terminated) present and non-null in o, its name in *which; NULL if
 * none. */
json_t *config_first_of(json_t *o, const char *const *names, const char **which);
/* config_vision.c: vision_config and the tower's top-level keys into c (LlavaConfig's:
 * vision_feature_layer, the tower's and language model's model_type); the language model
 * view lm's rope_scaling.mrope_section (4.x) or rope_parameters.mrope_section (5.x). */
int config_parse_vision(json_t *root, struct ckpt_config *c, wt_errbuf *err);
int config_parse_mrope(json_t *lm, struct ckpt_config *c, wt_errbuf *err);
/* MiniMax-M2 (model_type minimax_m2): rotary_dim, scoring_func, use_routing_bias,
 * use_qk_norm, qk_norm_type, attn_type_list, shared_intermediate_size, attention_bias,
 * tie_word_embeddings and num_experts_per_tok checked against what vLLM's minimax_m2.py
 * builds, the rest refused naming the key (config_minimax_m2.c). */
int config_parse_minimax_m2(json_t *root, const struct ckpt_config *c, wt_errbuf *err);
/* Grok-1 (model_type grok-1): the multipliers and the soft-cap numbers, rope_scaling absent,
 * num_experts_per_tok in 1..num_experts (config_grok1.c). */
int config_parse_grok1(json_t *root, const struct ckpt_config *c, wt_errbuf *err);

#endif
