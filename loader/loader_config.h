/*
 * loader_config.h — part of the loader's interface (split from loader.h, which includes it):
 * config.json as the checkpoint view reads it: the quantization kinds and layer types it
 * tells apart, ckpt_config (the fields the shard format needs) and its parser, the typed
 * field reader for other consumers, and Solar's skip connections. config*.c.
 */
#ifndef WT_LOADER_LOADER_CONFIG_H
#define WT_LOADER_LOADER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weights/error.h"

typedef enum {
	CKPT_QUANT_NONE = 0,
	CKPT_QUANT_FP8_BLOCK =
	    1, /* weight F8_E4M3 + weight_scale_inv F32 [ceil(N/b0), ceil(K/b1)] */
	CKPT_QUANT_FP8_TENSOR = 2, /* weight F8_E4M3 + weight_scale F32 scalar (+ input_scale) */
	/* compressed-tensors (ct_config.c): I8 weight [N, K] + weight_scale [N, 1] (+ input_scale)
	 */
	CKPT_QUANT_CT_INT8 = 3,
	/* compressed-tensors: weight_packed I32 [N, K/8] + weight_scale [N, K/G] + weight_shape */
	CKPT_QUANT_CT_INT4 = 4,
	/* quant_method "mxfp4" (GPT-OSS experts): X_blocks U8 [..., N, K/32, 16] (FP4 E2M1, two
	 * per byte, low nibble first) + X_scales U8 [..., N, K/32] (E8M0, bias 127) */
	CKPT_QUANT_MXFP4 = 5,
	/* quant_method "fbgemm_fp8" (Llama 4 Maverick's FP8 release, per output channel): a
	 * Linear's X.weight F8_E4M3 [N, K] + X.weight_scale F32/BF16/F16 [N, 1]; Llama 4's
	 * expert stacks X F8_E4M3 [E, K, N] + X_scale [E, 1, N] (gate_up_proj) or [E, N, 1]
	 * (down_proj): one scale per output channel */
	CKPT_QUANT_FBGEMM_FP8 = 6,
	/* compressed-tensors float-quantized FP8 per channel (llm-compressor's FP8_DYNAMIC):
	 * X.weight F8_E4M3 [N, K] + X.weight_scale F32/BF16/F16 [N, 1], dynamic activations (no
	 * input_scale); read as fbgemm_fp8's Linears (shardmap_fb_source) */
	CKPT_QUANT_CT_FP8 = 7,
} ckpt_quant_kind;

/* A layer_types entry (transformers >= 4.53): what the planner tells apart. */
typedef enum {
	CKPT_LAYER_OTHER = 0,    /* any other string ("sliding_attention", ...) */
	CKPT_LAYER_FULL_ATTN,    /* "full_attention" */
	CKPT_LAYER_LINEAR_ATTN,  /* "linear_attention" (Qwen3-Next's gated delta net) */
	CKPT_LAYER_SLIDING_ATTN, /* "sliding_attention" (Cohere2) */
	CKPT_LAYER_CONV,         /* "conv" (LFM2's short-convolution layers) */
	CKPT_LAYER_MAMBA,        /* "mamba" (Granite 4.0's Mamba2 mixer) */
	CKPT_LAYER_ATTN,         /* "attention" (Granite 4.0's softmax attention) */
	CKPT_LAYER_HYBRID,       /* "hybrid" (Zamba2's shared block before its Mamba2 mixer) */
	CKPT_LAYER_MLP,          /* "mlp" (Nemotron-H's MLP-only layers) */
	CKPT_LAYER_MOE,          /* "moe" (Nemotron-H's MoE layers) */
} ckpt_layer_type;

/* config.json fields the shard format needs (docs/format.md section 1); -1 where absent and without
 * a default. */
#define CKPT_MAX_MROPE 16 /* longest mrope_section list read */

#define CKPT_MAX_VQ_LEVELS 8 /* longest Chameleon vq_config.channel_multiplier read */

#define CKPT_MAX_QUANT_BLOCK (1 << 16) /* weight_block_size entries (DeepSeek: 128) */
#define CKPT_MAX_QUANT_KEEP  4096      /* fbgemm_fp8 modules_to_not_convert entries */

typedef struct ckpt_config {
	char *architecture; /* architectures[0]; owned */
	char *model_type;   /* owned; "" if absent */
	int64_t hidden_size;
	int64_t num_attention_heads;
	int64_t num_key_value_heads; /* default num_attention_heads */
	int64_t head_dim;            /* default hidden_size / num_attention_heads */
	int64_t intermediate_size;
	int64_t vocab_size;
	int64_t num_hidden_layers;
	bool tie_word_embeddings; /* as given; false if absent */
	bool tie_given;           /* present in config.json: else the architecture's
	                             default decides (shardmap_tied) */
	bool lm_head_bias;        /* PhiMoE: lm_head has a bias [vocab_size]; false if absent */
	bool use_qk_norm; /* GLM-4.5 (Llama 4: the L2 norm): q_norm / k_norm; false if absent */
	bool use_bias;    /* ERNIE 4.5: every Linear has a bias; false if absent */
	bool use_cla;     /* Hunyuan V1: cross-layer attention (refused); false if absent */
	/* Phi's qk_layernorm (refused: vLLM's phi.py has no q/k layernorms); read for model_type
	 * phi only, false if absent */
	bool qk_layernorm;
	/* StableLM's use_parallel_residual (refused: vLLM's stablelm.py is sequential); read for
	 * model_type stablelm only (with qk_layernorm, and use_qkv_bias into attention_bias),
	 * false if absent */
	bool use_parallel_residual;
	/* openPangu-Ultra-MoE's sandwich_norm (pre_mlp_layernorm / post_mlp_layernorm); read for
	 * model_type pangu_ultra_moe only, false if absent */
	bool sandwich_norm;
	/* openPangu-Pro-MoE-V2's router_enable_expert_bias (mlp.e_score_correction_bias); read
	 * for model_type PanguProMoEV2 only, false if absent */
	bool router_expert_bias;
	/* openPangu-Pro-MoE-V2's param_sink_number, the rows of param_sink_key / _value (read for
	 * model_type PanguProMoEV2 only, 0 otherwise) */
	int64_t sink_number;
	/* EAGLE-3 drafts (Eagle3LlamaForCausalLM and its aliases; config_eagle.c): draft_vocab_size
	 * (vocab_size when absent or null), target_hidden_size (-1 when absent: hidden_size) and
	 * eagle_config.use_aux_hidden_state (true when absent); 0 / -1 / false for other models */
	int64_t draft_vocab_size, eagle_target_hidden;
	bool eagle_aux;
	/* Medusa drafts (MedusaModel; config_drafts.c): num_heads (0 for other models; the
	 * truncated vocabulary is draft_vocab_size), original_lm_head, medusa_fc_bias; an
	 * MLPSpeculator's tie_weights (false for other models) */
	int64_t medusa_heads;
	bool medusa_orig_lm_head, medusa_fc_bias, mlps_tied;
	/* MTP drafts (DeepSeekMTPModel; config_mtp.c): num_nextn_predict_layers, the MTP layers
	 * (>= 1: vLLM's n_predict); 0 for other models */
	int64_t mtp_layers;
	/* Falcon's LayerNorms (model_type falcon only; 0 otherwise): 1 one input_layernorm
	 * before the parallel attention and MLP, 2 ln_attn and ln_mlp (new_decoder_architecture),
	 * 3 input_layernorm and post_attention_layernorm (parallel_attn false: sequential) */
	int falcon_ln;
	/* Seed-OSS's bias switches: q/k/v biases, o_proj's, the MLP's; false if absent (but
	 * SeedOssConfig's attention_bias is true: config_defaults.c fills it) */
	bool attention_bias, attention_out_bias, mlp_bias;
	/* MoE */
	int64_t num_experts; /* num_local_experts | num_experts | n_routed_experts; 0 = dense */
	int64_t moe_intermediate_size;           /* Mixtral: intermediate_size */
	int64_t shared_expert_intermediate_size; /* Qwen2-MoE; GraniteMoeShared's
	                                            shared_intermediate_size; -1 if absent */
	int64_t n_shared_experts;                /* DeepSeek; 0 if absent */
	int64_t decoder_sparse_step;             /* Qwen2-MoE; default 1 */
	int64_t *mlp_only_layers;                /* Qwen2-MoE; owned */
	size_t n_mlp_only_layers;
	int64_t first_k_dense_replace; /* DeepSeek; default 0 */
	int64_t moe_layer_freq;        /* DeepSeek; default 1 */
	/* ERNIE 4.5 MoE: layer i is MoE iff (i + 1) % moe_layer_interval == 0 and
	 * moe_layer_start_index <= i <= moe_layer_end_index (-1 = the last layer); defaults
	 * 0, -1, 1 (Ernie4_5_MoeConfig's class defaults 1, -1, 1 for model_type ernie4_5_moe) */
	int64_t moe_layer_start_index;
	int64_t moe_layer_end_index;
	int64_t moe_layer_interval;
	/* Llama 4 (Llama4TextConfig): the dense MLPs' intermediate_size_mlp (-1 if absent);
	 * interleave_moe_layer_step (default 1); moe_layers, the MoE layers when given
	 * (has_moe_layers; an empty list is no MoE layer) */
	int64_t intermediate_size_mlp;
	int64_t interleave_moe_layer_step;
	bool has_moe_layers;
	int64_t *moe_layers; /* owned */
	size_t n_moe_layers;
	/* Qwen3-Next (Qwen3NextConfig): the gated-delta-net linear attention's
	 * linear_num_key_heads, linear_num_value_heads, linear_key_head_dim,
	 * linear_value_head_dim, linear_conv_kernel_dim (-1 if absent; the loader fills
	 * Qwen3NextConfig's defaults for model_type qwen3_next); full_attention_interval
	 * (-1 if absent); layer_types, one code per entry (has_layer_types when the list
	 * is present; its length and values are the family's to check) */
	int64_t lin_num_k_heads, lin_num_v_heads, lin_k_head_dim, lin_v_head_dim;
	int64_t lin_conv_kernel;
	int64_t full_attention_interval;
	bool has_layer_types;
	uint8_t *layer_types; /* ckpt_layer_type codes; owned */
	size_t n_layer_types;
	/* LFM2 (Lfm2Config; read for model_type lfm2 only, zero otherwise): conv_L_cache (the
	 * short conv's taps), block_multiple_of, block_dim / conv_dim (vLLM's names for the
	 * MLP and conv widths; -1 if absent: the loader fills Lfm2Config's defaults but for
	 * those two); conv_bias,
	 * block_auto_adjust_ff_dim; block_ffn_dim_multiplier (lfm2_ffn_mult_null when given
	 * as null: no multiplier and, in transformers, no rounding); full_attn_idxs, the
	 * attention layers when layer_types is absent (has_full_attn_idxs; for model_type
	 * bamba, BambaConfig's attn_layer_indices) */
	int64_t lfm2_conv_l_cache, lfm2_multiple_of, lfm2_block_dim, lfm2_conv_dim;
	bool lfm2_conv_bias, lfm2_auto_adjust, lfm2_ffn_mult_null;
	double lfm2_ffn_mult;
	/* LFM2-MoE (model_type lfm2_moe): use_expert_bias (feed_forward.expert_bias); its
	 * num_dense_layers is first_k_dense_replace */
	bool lfm2_expert_bias;
	bool has_full_attn_idxs;
	int64_t *full_attn_idxs; /* owned */
	size_t n_full_attn_idxs;
	/* Granite 4.0 (GraniteMoeHybridConfig): the Mamba2 mixer's mamba_n_heads,
	 * mamba_n_groups, mamba_d_state, mamba_d_conv, mamba_expand, mamba_d_head (-1 if
	 * absent; mamba_d_head also -1 for "auto", mamba_expand * hidden_size /
	 * mamba_n_heads; the loader fills the class's defaults for model_type
	 * granitemoehybrid), mamba_conv_bias / mamba_proj_bias (false if absent; the class
	 * default of mamba_conv_bias, true, is filled likewise) */
	int64_t mamba_n_heads, mamba_n_groups, mamba_d_state, mamba_d_conv, mamba_expand;
	int64_t mamba_d_head;
	bool mamba_conv_bias, mamba_proj_bias;
	/* Jamba (JambaConfig; read for model_type jamba only, -1 otherwise): attn_layer_period /
	 * attn_layer_offset (layer i is attention when i % period == offset, else Mamba),
	 * expert_layer_period / expert_layer_offset (layer i has num_experts experts when
	 * i % period == offset, else a dense MLP), mamba_dt_rank (-1 for "auto" or absent:
	 * ceil(hidden_size / 16)); the loader fills JambaConfig's defaults but for dt_rank */
	int64_t jamba_attn_period, jamba_attn_offset, jamba_expert_period, jamba_expert_offset;
	int64_t mamba_dt_rank;
	/* Falcon-H1 (FalconH1Config; read for model_type falcon_h1 only): mamba_d_ssm, the
	 * Mamba mixer's width (absent: the class's 1024; null or any other family: -1, that is
	 * mamba_expand * hidden_size); mamba_rms_norm (the gated norm is built only then),
	 * projectors_bias (out_proj's bias) */
	int64_t mamba_d_ssm;
	bool mamba_rms_norm, projectors_bias;
	/* Zamba2 (Zamba2Config; read for model_type zamba2 only, -1 / false otherwise):
	 * num_mem_blocks (1; the shared transformer blocks, block k at the hybrid layers whose
	 * order among them is k modulo it), adapter_rank (128; the LoRA adapters' rank),
	 * use_shared_attention_adapter (false; the q / k / v adapters); add_bias_linear is read
	 * into mamba_proj_bias (the mixer's in_proj / out_proj and the shared MLP's biases) */
	int64_t z2_mem_blocks, z2_adapter_rank;
	bool z2_attn_adapter;
	/* Gemma 3n (Gemma3nTextConfig; read for model_type gemma3n_text only, -1 otherwise):
	 * altup_num_inputs (4; AltUp's streams), altup_active_idx (0), laurel_rank (64),
	 * hidden_size_per_layer_input (256), vocab_size_per_layer_input (262144; the per-layer
	 * embedding's rows), num_kv_shared_layers (15; the last layers read an earlier layer's
	 * keys and values) */
	int64_t g3n_altup, g3n_active, g3n_laurel, g3n_ple, g3n_ple_vocab, g3n_kv_shared;
	/* LongCat-Flash (LongcatFlashConfig; read for model_type longcat_flash only, 0
	 * otherwise): zero_expert_num, the identity experts the router scores after the
	 * n_routed_experts real ones */
	int64_t zero_expert_num;
	/* OPT (OPTConfig; read for model_type opt only, config_opt.c): word_embed_proj_dim
	 * (absent or null: hidden_size; -1 for any other family), max_position_embeddings (the
	 * learned position table holds it + 2 rows; absent: the class's 2048),
	 * do_layer_norm_before (true if absent; false: opt-350m's post-norm layers),
	 * opt_final_norm (model.decoder.final_layer_norm exists: do_layer_norm_before and not
	 * _remove_final_layer_norm), layer_norm_elementwise_affine (true if absent; false refused
	 * by the planner); enable_bias is read into attention_bias (true if absent) */
	int64_t opt_word_embed_proj_dim, opt_max_pos;
	bool opt_ln_before, opt_final_norm, opt_ln_affine;
	/* JAIS (JAISConfig; read for model_type jais only, config_jais.c; false otherwise):
	 * jais_wpe: position_embedding_type is not "alibi" (absent: "learned"), so the model has
	 * learned positions transformer.wpe (vLLM's jais.py builds none with ALiBi) */
	bool jais_wpe;
	/* Snowflake Arctic (ArcticConfig; read for model_type arctic only, config_arctic.c; false
	 * / 2 otherwise): use_residual (the residual MLP residual_mlp and residual_layernorm
	 * beside each MoE layer's experts) and moe_layer_frequency (layer i is MoE when
	 * (i + 1) % it == 0; 1 or 2) */
	bool arctic_residual;
	int64_t arctic_moe_freq;
	/* RoBERTa / XLM-RoBERTa (RobertaConfig, XLMRobertaConfig; read for model_type roberta
	 * and xlm-roberta only, config_roberta.c; -1 / false otherwise): max_position_embeddings
	 * (the position table's rows; absent: 512), type_vocab_size (2), pad_token_id (1;
	 * positions start at pad_token_id + 1), is_decoder (false), rob_abs_pos:
	 * position_embedding_type absent or "absolute"; rob_num_labels: the classifier's outputs
	 * (PretrainedConfig: the entries of id2label, else num_labels, else 2). BERT's heads
	 * (BertForSequenceClassification, BertForTokenClassification) fill the same fields but
	 * rob_pad (BertConfig's 512, 2, false, "absolute"; config_parse_bert_head). Whisper:
	 * rob_max_pos is max_target_positions (448), the decoder's position table. CLIPModel
	 * (config_clip.c): rob_max_pos its text_config.max_position_embeddings (77),
	 * rob_num_labels its projection_dim (512: text_projection's / visual_projection's rows).
	 * SiglipModel (config_clip.c): rob_max_pos its text_config.max_position_embeddings (64),
	 * rob_num_labels its text_config.projection_size (hidden_size: text_model.head's rows) */
	int64_t rob_max_pos, rob_types, rob_pad, rob_num_labels;
	bool rob_decoder, rob_abs_pos;
	/* The decoder sequence classifiers (Llama-, Mistral-, Qwen2-, Qwen3ForSequence-
	 * Classification, GPT2ForSequenceClassification; config_seqcls.c): rob_num_labels holds
	 * the score head's outputs as RoBERTa's; cls_from_token (not read for GPT-2's):
	 * classifier_from_token or method given (vLLM's online conversion of a causal LM, refused
	 * by the planner) */
	bool cls_from_token;
	/* Chameleon (ChameleonConfig; read for model_type chameleon only, config_chameleon.c):
	 * swin_norm (false if absent: the 30B's norms after the attention and the MLP),
	 * hidden_act silu (cham_act_silu; vLLM's ChameleonMLP builds no other), and vq_config with
	 * ChameleonVQVAEConfig's defaults: channel_multiplier (vq_levels entries, the encoder's
	 * resolutions), num_res_blocks, resolution, attn_resolutions (the image sizes whose
	 * levels have attention blocks; none if absent or null) and attn_type "vanilla"
	 * (vq_attn: the attention blocks are built at all); the channels: base_channels (128),
	 * in_channels (3), latent_channels (256), embed_dim (256), num_embeddings (8192),
	 * double_latent (false: conv_out has latent_channels outputs, else twice as many) */
	bool cham_swin, cham_act_silu, vq_attn, vq_double;
	int64_t vq_levels, vq_res_blocks, vq_resolution;
	int64_t vq_base, vq_in, vq_latent, vq_embed, vq_n_embed;
	int64_t vq_mult[CKPT_MAX_VQ_LEVELS];
	int64_t vq_attn_res[CKPT_MAX_VQ_LEVELS];
	size_t vq_n_attn_res;
	/* ModernBERT (ModernBertConfig; read for model_type modernbert only,
	 * config_modernbert.c; -1 / 0 / false otherwise; rob_num_labels holds its classifier's
	 * outputs as RoBERTa's): global_attn_every_n_layers (3; layer i is global when i % it ==
	 * 0), local_attention (128; the local layers see |i - j| <= local_attention / 2),
	 * global_rope_theta (160000), local_rope_theta (10000 when absent, the global theta
	 * when null), norm_eps (1e-5), norm_bias / classifier_bias (false), hidden_activation
	 * and classifier_activation "gelu" (mb_gelu / mb_cls_gelu: absent or "gelu"),
	 * classifier_pooling: 0 "cls" (its default), 1 "mean", -1 anything else */
	int64_t mb_every, mb_local, mb_pool;
	double mb_global_theta, mb_local_theta, mb_norm_eps;
	bool mb_norm_bias, mb_cls_bias, mb_gelu, mb_cls_gelu;
	/* DeepSeek MLA */
	int64_t q_lora_rank; /* -1 = null */
	int64_t kv_lora_rank;
	int64_t qk_nope_head_dim;
	int64_t qk_rope_head_dim;
	int64_t v_head_dim;
	/* Vision tower (vision_config; Qwen2-VL). has_vision false when absent. */
	bool has_vision;
	int64_t v_depth, v_embed_dim, v_num_heads; /* -1 if absent */
	double v_mlp_ratio;                        /* default 4 */
	int64_t v_patch_size;                      /* default 14 */
	bool v_patch_given;                        /* patch_size present (SigLIP's default: 16) */
	int64_t v_temporal_patch_size;             /* default 2 */
	int64_t v_spatial_merge_size;              /* default 2 */
	int64_t v_in_chans; /* in_chans | in_channels | num_channels (SigLIP), default 3 */
	/* Qwen2.5-VL names: the vision width is hidden_size, its MLP hidden
	 * intermediate_size, the merger's output out_hidden_size (-1 if absent;
	 * in Qwen2-VL's vision_config hidden_size is the merger's output) */
	int64_t v_hidden_size, v_intermediate_size, v_out_hidden_size;
	/* SigLIP names (Gemma 3): blocks num_hidden_layers, heads num_attention_heads,
	 * image_size (-1 if absent; the planner applies SiglipVisionConfig's defaults) */
	int64_t v_num_layers, v_num_attn_heads, v_image_size;
	/* Llama 4's vision_config: vision_output_dim, projector_input_dim,
	 * projector_output_dim (-1 if absent; the planner applies Llama4VisionConfig's
	 * defaults) */
	int64_t v_output_dim, v_proj_in_dim, v_proj_out_dim;
	/* Qwen3-VL's vision_config: num_position_embeddings (pos_embed rows; -1 if absent)
	 * and deepstack_visual_indexes, the blocks whose output feeds one deepstack merger
	 * each (has_deepstack when the list is present; the planner applies
	 * Qwen3VLVisionConfig's defaults otherwise) */
	int64_t v_num_pos;
	/* Mistral 3 (Mistral3Config, top level): multimodal_projector_bias (default false);
	 * spatial_merge_size read there when vision_config has none (Pixtral's has none);
	 * vision_feature_layer given as a list (v_feature_list; the projector then takes
	 * several layers' features, which its norm cannot, so the planner refuses it) */
	bool mm_projector_bias, v_feature_list;
	/* LLaVA (LlavaConfig, model_type llava; read for it only): vision_feature_layer (an
	 * integer; default -2), vision_config.model_type (default clip_vision_model; pixtral
	 * makes the planner take LLaVA's Pixtral-tower table, pixtral-12b's) and
	 * text_config.model_type (default llama; "" without a text_config object), each
	 * truncated to its buffer; multimodal_projector_bias defaults to true there. Mistral 3
	 * (model_type mistral3) reads vision_feature_layer too, default -1 */
	int64_t v_feature_layer;
	char v_model_type[32], lm_model_type[32];
	/* LLaVA's and LLaVA-OneVision's (read for them only): vision_config.vision_use_head, true
	 * unless false or null (SiglipVisionTransformer builds its pooling head when the config has
	 * no such key: SiglipVisionConfig defines none) */
	bool v_use_head;
	/* LLaVA-NeXT-Video (LlavaNextVideoConfig; read for it only): spatial_pool_mode (default
	 * "average"; truncated to its buffer) and spatial_pool_stride (default 2), the video
	 * resampler's pooling */
	char v_pool_mode[16];
	int64_t v_pool_stride;
	/* Tarsier (TarsierForConditionalGeneration, model_type llava; read for it only):
	 * image_newline_idx and image_new_idx, the token ids whose embeddings vLLM's
	 * _add_tarsier_split_tokens puts after every row of patches and after the image (required:
	 * vLLM reads them unguarded); not read (-1 or 0) for any other architecture */
	int64_t ts_newline_idx, ts_new_idx;
	/* Qwen2-Audio (Qwen2AudioConfig's audio_config, Qwen2AudioEncoderConfig's defaults; read
	 * for model_type qwen2_audio only, has_audio when the object is there): num_mel_bins,
	 * encoder_layers, encoder_attention_heads, encoder_ffn_dim, d_model,
	 * max_source_positions; Voxtral's audio_config too, VoxtralEncoderConfig's names and
	 * defaults, config_voxtral.c; Qwen2.5-Omni's thinker_config.audio_config with
	 * Qwen2_5OmniAudioEncoderConfig's, and its output_dim, config_omni.c; Whisper's
	 * top-level encoder keys, WhisperConfig's defaults, config_whisper.c) */
	bool has_audio;
	int64_t a_mel, a_layers, a_heads, a_ffn, a_d_model, a_max_pos, a_out_dim;
	int64_t a_dsh; /* Qwen3-Omni's downsample_hidden_size (the Conv2d stem's channels) */
	/* Aria (AriaConfig, model_type aria; read for it only, config_aria.c): the projector's
	 * learned queries, max(projector_patch_to_query_dict.values()) (256 when absent) */
	int64_t aria_queries;
	/* Ultravox (UltravoxConfig, model_type ultravox; read for it only, config_ultravox.c): the
	 * top level's hidden_size (the projector's width, 4096 when absent), stack_factor (8),
	 * projector_act swiglu (the default: linear_2 reads half the width), projector_ln_mid
	 * (false: ln_post after linear_2, true: ln_mid before it); text_model_id / audio_model_id
	 * ("" when absent or null), whose weights vLLM loads from those repositories */
	int64_t uv_hidden, uv_stack;
	bool uv_swiglu, uv_ln_mid;
	char uv_text_id[96], uv_audio_id[96];
	/* Granite Speech (GraniteSpeechConfig, model_type granite_speech; read for it only,
	 * config_granite_speech.c): encoder_config (GraniteSpeechEncoderConfig's defaults:
	 * input_dim 160, num_layers 10, hidden_dim 1024, feedforward_mult 4, num_heads 8,
	 * dim_head 128, output_dim 42, context_size 200, max_pos_emb 512, conv_kernel_size 15,
	 * conv_expansion_factor 2), its projector_config into qf_* and the top level's
	 * window_size 15 / downsample_rate 5 */
	int64_t gs_in, gs_layers, gs_hidden, gs_ff_mult, gs_heads, gs_dim_head, gs_out, gs_ctx;
	int64_t gs_max_pos, gs_kernel, gs_conv_exp;
	int64_t gs_window, gs_downsample;
	/* A BLIP-2 Q-Former (Blip2QFormerConfig: Granite Speech's projector_config, BLIP-2's
	 * qformer_config; config_qformer.c, its defaults for absent keys): hidden_size 768,
	 * num_hidden_layers 12, num_attention_heads 12, intermediate_size 3072,
	 * cross_attention_frequency 2 (a crossattention in every layer i with i % qf_cross == 0),
	 * encoder_hidden_size 1408 (BLIP-2: vision_config.hidden_size, as Blip2Config sets it);
	 * qf_text for use_qformer_text_input true, qf_abs for position_embedding_type absolute,
	 * qf_model its model_type (blip_2_qformer when absent); BLIP-2's num_query_tokens (32;
	 * config_blip2.c, which also sets vision_config's sizes and qkv_bias into the v_* fields)
	 */
	int64_t qf_hidden, qf_layers, qf_heads, qf_inter, qf_cross, qf_enc, num_query_tokens;
	/* DeepSeek-OCR (DeepseekOCRForCausalLM; read for it only): its SAM ViT-B tower's width,
	 * blocks and heads (vision_config.width.sam_vit_b), its grid (vision_config.image_size /
	 * 16: pos_embed [1, grid, grid, width]), the blocks with global attention (bit i: block i,
	 * whose rel_pos tables hold 2 x grid - 1 rows, the windowed ones' 27) and net_2 / net_3's
	 * output channels (downsample_channels) */
	int64_t ocr_sam_width, ocr_sam_layers, ocr_sam_heads, ocr_sam_grid, ocr_sam_ds[2];
	uint64_t ocr_sam_global;
	bool qf_text, qf_abs;
	char qf_model[32];
	/* Mllama (MllamaConfig, model_type mllama; read for it only, config_mllama.c): the
	 * vision_config's num_global_layers (8: the gated global transformer), max_num_tiles (4),
	 * the entries of supported_aspect_ratios (8; max_aspect_ratio_id: the tile embeddings
	 * hold it + 1 rows), norm_eps (1e-5); the vision keys MllamaVisionConfig's defaults fill
	 * go to v_* (hidden_size 1280, intermediate_size 5120, num_hidden_layers 32,
	 * attention_heads 16, num_channels 3, image_size 448, patch_size 14, vision_output_dim
	 * 7680); text_config's cross_attention_layers (MllamaTextConfig's [3, 8, ..., 38]) go to
	 * full_attn_idxs (has_full_attn_idxs set); ml_head_dim_key: text_config gives head_dim */
	int64_t ml_global_layers, ml_max_tiles, ml_n_aspect;
	double ml_norm_eps;
	bool ml_head_dim_key;
	/* InternVL (InternVLConfig, model_type internvl; read for it only, config_internvl.c):
	 * InternVLVisionConfig's switches attention_bias (v_attn_bias: q/k/v biases),
	 * use_qk_norm (q_norm / k_norm), norm_type (v_norm_ln: layer_norm, whose norms have
	 * biases; false: rms_norm), use_mask_token, use_absolute_position_embeddings (v_abs_pos),
	 * use_mean_pooling (v_mean_pool: no final layernorm then); the top level's
	 * vision_feature_select_strategy (default "default"; truncated to its buffer). Its sizes
	 * go to v_hidden_size, v_intermediate_size, v_num_layers, v_num_attn_heads, v_in_chans,
	 * v_image_size, v_patch_size with the class's defaults applied, downsample_ratio to
	 * v_spatial_merge_size as 1 / ratio, vision_feature_layer to v_feature_layer (-1) */
	bool v_attn_bias, v_qk_norm, v_norm_ln, v_mask_token, v_abs_pos, v_mean_pool;
	char v_select[16];
	/* MiniCPM-V (MiniCPMVConfig, model_type minicpmv; read for it only, config_minicpmv.c):
	 * the version vLLM's MiniCPMV dispatches on as major * 10 + minor (25, 26, 40, 45; the
	 * others refused), query_num (the resampler's query rows; 64), drop_vision_last_layer
	 * (default true: vLLM builds vision_config.num_hidden_layers - 1 blocks, the count
	 * v_num_layers then holds) */
	int64_t mcv_version, mcv_query_num;
	bool mcv_drop_last;
	/* Kimi-VL (KimiVLConfig, model_type kimi_vl; read for it only, config_kimi_vl.c): the
	 * MoonViT tower's init_pos_emb_height / _width (the learned position table's rows and
	 * columns, 64 x 64) and merge_kernel_size [kh, kw] (2 x 2: the projector is
	 * VE x kh x kw wide); its sizes go to v_hidden_size, v_intermediate_size, v_num_layers,
	 * v_num_attn_heads, v_patch_size with MoonViTConfig's defaults applied. kv_noaux:
	 * text_config.topk_method is "noaux_tc" (vLLM's DeepseekV2MoE builds
	 * gate.e_score_correction_bias then only) */
	int64_t v_pos_h, v_pos_w, v_merge_h, v_merge_w;
	bool kv_noaux;
	int64_t kv_nextn; /* text_config.num_nextn_predict_layers (0 when absent: the MTP layers
	                     DeepseekV2ForCausalLM.load_weights skips); Kimi Linear's top-level
	                     one (config_mtp.c: KimiLinearModel.load_weights skips them) */
	/* Ovis (OvisConfig, model_type ovis; read for it only, config_ovis.c):
	 * visual_tokenizer_config.vocab_size (16384: the vte's rows, the head's + 5), the AIMv2
	 * backbone's use_bias (proj / fc1 / fc2 / fc3 biases; its qkv_bias goes to v_attn_bias,
	 * its sizes to the v_* fields, hidden_stride to v_spatial_merge_size), the top level's
	 * hidden_size (-1 when absent: the vte's width) */
	int64_t ov_vocab, ov_hidden;
	bool ov_use_bias;
	/* Ovis2.5 (Ovis2_5Config, model_type ovis2_5; config_ovis2_5.c): ov25 set for it (its
	 * vit_config's sizes go to the v_* fields, visual_vocab_size and the top level's
	 * hidden_size to ov_vocab / ov_hidden), vit_config.num_patches (-1: the patch Conv2d; > 0
	 * the NaFlex patch Linear) and preserve_original_pe (the position table) */
	bool ov25, ov25_pe;
	int64_t ov25_patches;
	/* dots.ocr (DotsOCRConfig, model_type dots_ocr; config_dots_ocr.c): vision_config.post_norm
	 * (true by default: post_trunk_norm built); its use_bias goes to v_attn_bias, embed_dim to
	 * v_hidden_size, hidden_size (the merger's output) to v_out_hidden_size; dt_config: read
	 * as one */
	bool dt_post_norm, dt_config;
	/* HyperCLOVAX-SEED-Vision (HCXVisionConfig, model_type hyperclovax_vlm; read for it only,
	 * config_hcx.c): the C-Abstractor's proj_pos_emb (default true: mm_projector.pos_emb) and
	 * proj_prenorm (default false: mm_projector.prenorm); use_nth_layer goes to
	 * v_feature_layer (-2), the sub-configs' model_type to v_model_type / lm_model_type */
	bool hcx_pos_emb, hcx_prenorm;
	/* ERNIE-4.5-VL (model_type ernie4_5_moe_vl; config_ernie45vl.c): the vision experts'
	 * width moe_intermediate_size[1] (the text experts' [0] is moe_intermediate_size) and
	 * use_temporal_conv (the resampler's temporal_linear.*) */
	int64_t ev_moe_inter_v;
	bool ev_temporal_conv;
	/* HyperCLOVAX-SEED-Think (model_type vlm; config_hcx_v2.c): text_config.use_post_norm
	 * (hyperclovax: each layer's post_norm1 / post_norm2) */
	bool hcx_post_norm;
	bool has_deepstack;
	int64_t *deepstack; /* owned */
	size_t n_deepstack;
	/* MRoPE: rope_scaling.mrope_section | rope_parameters.mrope_section (checked at plan
	 * time); has_mrope when the list is present, n_mrope its length. */
	bool has_mrope;
	size_t n_mrope;
	int64_t mrope_section[CKPT_MAX_MROPE];
	/* partial_rotary_factor as given (GLM-4.1V / 4.5V's MRoPE spans the first
	 * int(head_dim * factor) dims; the planner checks the sections against it): the
	 * number, or 0 when absent or null, -1 when not a positive number (the families that
	 * read it refuse that; the others never look) */
	double partial_rotary_factor;
	/* quantization_config */
	ckpt_quant_kind quant;
	int64_t quant_block[2]; /* weight_block_size, default 128x128 */
	/* CKPT_QUANT_FP8_BLOCK from compressed-tensors (strategy block, block_structure into
	 * quant_block): the block scales are X.weight_scale (F32, BF16 or F16), not
	 * weight_scale_inv */
	bool quant_block_ct;
	int64_t quant_group; /* compressed-tensors strategy group: weights.group_size;
	                        strategy channel (and other schemes): 0 */
	bool quant_int4_i8;  /* CKPT_QUANT_CT_INT4 stored int-quantized: one code per I8 */
	bool quant_pack8;    /* CKPT_QUANT_CT_INT8 stored pack-quantized: 4 codes per I32
	                        word, X.weight_packed I32 [N, K/4] */
	bool quant_asym;     /* compressed-tensors with zero points (symmetric false):
	                        X.weight_zero_point, packed along the rows (pack-quantized,
	                        I32 [ceil(N/(32/bits)), K/G or 1]) or I8 [N, 1] (int-quantized
	                        int8 per channel) */
	bool quant_gidx;     /* compressed-tensors actorder "group" (alias "dynamic"):
	                        X.weight_g_idx I32 [K], the group of each input column */
	char **quant_ignore; /* ignore | ignored_layers | modules_to_not_convert; owned */
	size_t n_quant_ignore;
	/* fbgemm_fp8's modules_to_not_convert, verbatim (not in quant_ignore): matched against
	 * module names as transformers does (shardmap_fb_kept); owned */
	char **quant_keep;
	size_t n_quant_keep;
} ckpt_config;

/* Parse config.json text (len bytes, need not be NUL-terminated) into out; on
 * failure out is left cleared. Missing required fields (architectures,
 * hidden_size, num_attention_heads, num_hidden_layers, vocab_size) and wrong
 * types are WT_ECORRUPT naming the field; an unknown quant_method is
 * WT_EUNSUPPORTED. A `text_config` object (transformers 5.x multimodal
 * configs) supplies the language-model fields in place of the top level;
 * architectures, model_type, quantization_config and vision_config are always
 * read from the top level. Free with ckpt_config_clear(). */
int ckpt_config_parse(const char *json, size_t len, ckpt_config *out, wt_errbuf *err);
void ckpt_config_clear(ckpt_config *c); /* frees owned fields; NULL-safe */

/*
 * Fields a consumer of config.json other than the planner reads (the reference
 * forward pass: rms_norm_eps, rope_theta, ...), read by the same parser rules
 * as ckpt_config_parse (one owner): JSON with duplicate keys refused, the
 * language-model view (a `text_config` object laid over the top level), null
 * counting as absent, a present field of the wrong JSON type WT_ECORRUPT
 * naming it. `key` is a field name or "parent.child" (one level, e.g.
 * "rope_parameters.rope_theta"; a present parent that is not an object is
 * WT_ECORRUPT naming it). A CKPT_FIELD_REAL accepts integers too. A string
 * longer than CKPT_FIELD_STR - 1 bytes is WT_ETOOBIG.
 */
#define CKPT_FIELD_STR 64
typedef enum ckpt_field_kind {
	CKPT_FIELD_INT,
	CKPT_FIELD_REAL,
	CKPT_FIELD_BOOL,
	CKPT_FIELD_STRING,
} ckpt_field_kind;

typedef struct ckpt_field {
	const char *key; /* in */
	ckpt_field_kind kind;
	bool present; /* out: false when absent or null (the value members are then 0) */
	int64_t i;
	double r;
	bool b;
	char s[CKPT_FIELD_STR];
} ckpt_field;

int ckpt_config_fields(const char *json, size_t len, ckpt_field *fields, size_t n, wt_errbuf *err);

/* Solar's block skip connections (SolarConfig's bskcn_1..4 and bskcn_tv; config_solar.c): bit i
 * of save[k] for the layers i < n_layers that bskcn_1 (k 0) / bskcn_2 (k 1) save, of mix[k] for
 * those that bskcn_3 / bskcn_4 mix; tv is bskcn_tv[1] (vLLM's inference value). Absent keys take
 * SolarConfig's defaults; the loader's refusals of these keys apply (WT_ECORRUPT /
 * WT_EUNSUPPORTED naming the key). */
#define CKPT_SOLAR_MAX_LAYERS 256
typedef struct ckpt_solar_skips {
	uint64_t save[2][CKPT_SOLAR_MAX_LAYERS / 64], mix[2][CKPT_SOLAR_MAX_LAYERS / 64];
	double tv;
} ckpt_solar_skips;
int ckpt_config_solar(const char *json, size_t len, int64_t n_layers, ckpt_solar_skips *out,
                      wt_errbuf *err);

#endif
