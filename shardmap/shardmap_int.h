/*
 * shardmap_int.h — private types of shardmap/: the family tables (registry),
 * the mapped checkpoint entries and the plan representation shared by the
 * planner and the producer. The words of the family tables' rows (sm_kind, sm_dim,
 * sm_unit, sm_cond, SM_F_*, sm_rule, sm_layer_dims) are in rule_int.h, included here.
 *
 * Every runtime tensor is viewed as a 2-D [rows, cols] array (1-D [N] is
 * [N, 1], a scalar [1, 1]) that is the ROW-concatenation of pieces; a piece
 * is a row range of a source (all columns), a column range of a source (all
 * rows), or zero rows. Experts stack by rows too ([count, a, b] is
 * [count*a, b]), so one representation serves every rule of docs/format.md.
 * Sources are viewed alike (sm_trows / sm_tcols, plan_int.h): a checkpoint
 * that stores experts stacked ([E, a, b], GraniteMoE) is [E*a, b].
 */
#ifndef WT_SHARDMAP_INT_H
#define WT_SHARDMAP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader/loader_mistral.h"
#include "shardmap/rule_int.h"
#include "shardmap/shardmap.h"

/* ---------- family tables ---------- */

typedef struct sm_family {
	const char *name;         /* "llama" */
	const char *const *archs; /* NULL-terminated architectures[0] values */
	const sm_rule *rules;
	size_t n_rules;
	/* Hook: is layer i a MoE layer? NULL = dense model. */
	bool (*layer_is_moe)(const ckpt_config *cfg, int64_t i);
	bool drop_extra_layers;   /* DeepSeek MTP: tensors of layers >= L are dropped */
	const char *layer_prefix; /* "model.layers." / "encoder.layer." */
	/* Checks of config.json beyond the table's shapes (NULL = none). */
	int (*check)(const ckpt_config *cfg, wt_errbuf *err);
	/* The config.json key the loader reads into attention_bias for this family, named in
	 * the SM_C_ATTNBIAS refusals (NULL: attention_bias; StableLM: use_qkv_bias) */
	const char *attn_bias_key;
	/* The one config.json key behind all three bias switches (attention_bias,
	 * attention_out_bias, mlp_bias), named in their refusals (Falcon: bias); NULL = none */
	const char *bias_key_all;
	/* The family's rules when the checkpoint stores its experts one Linear each
	 * (a tensor named "...experts.<digits>." exists; Qwen3-VL-MoE's FP8 releases)
	 * where the table above reads them stacked; NULL = one layout only.
	 * shardmap_family_for picks it. */
	const struct sm_family *per_expert;
	/* The family's rules when vision_config.model_type is pixtral (LLaVA's Pixtral-HF
	 * conversions: a Pixtral tower where the table above has CLIP's); NULL = none.
	 * shardmap_family_for picks it. */
	const struct sm_family *pixtral_tower;
	/* The family's rules when vision_config.model_type is siglip_vision_model (LLaVA with a
	 * SigLIP tower: vLLM's init_vision_tower_for_llava builds CLIP, SigLIP or Pixtral);
	 * NULL = none. shardmap_family_for picks it. */
	const struct sm_family *siglip_tower;
	/* Alternative checkpoint name layout: NULL-terminated pairs {checkpoint prefix,
	 * canonical prefix}, e.g. transformers 5.x "model.language_model." -> "model.".
	 * Rules are written in canonical names. NULL = none. */
	const char *const *aliases;
	/* Qwen2.5-VL's vision_config: the width is hidden_size and the MLP hidden
	 * intermediate_size (Qwen2-VL: embed_dim and embed_dim x mlp_ratio). */
	bool vision_gated;
	/* SigLIP's vision_config (Gemma 3): as vision_gated, with the blocks counted by
	 * num_hidden_layers and the heads by num_attention_heads, SiglipVisionConfig's
	 * defaults for absent keys. */
	bool vision_siglip;
	/* tie_word_embeddings when config.json omits it: the default of the
	 * transformers config class, as transformers itself loads such a config
	 * (Gemma: true, and save_pretrained omits the key of a tied Gemma) */
	bool tie_default;
	/* Llama 4's config (Llama4TextConfig, Llama4VisionConfig): the dense MLPs' size
	 * I is intermediate_size_mlp, the routed and shared experts' intermediate_size; the
	 * vision tower's keys as SigLIP's names them, Llama4VisionConfig's defaults for
	 * absent ones, and (image_size / patch_size)^2 + 1 positions (the class token);
	 * Llama4ForConditionalGeneration also sets vision_siglip (the same key names) */
	bool llama4;
	/* Qwen3-VL's vision_config (Qwen3VLVisionConfig): width hidden_size, MLP
	 * intermediate_size, merger output out_hidden_size, pos_embed num_position_embeddings
	 * rows, one deepstack merger per deepstack_visual_indexes entry; the class's defaults
	 * for absent keys (also sets vision_gated: the same key names) */
	bool qwen3_vl;
	/* Pixtral's vision_config (PixtralVisionConfig, Mistral 3): SigLIP's key names (also
	 * sets vision_siglip), the class's defaults for absent keys, no position table */
	bool pixtral;
	/* GLM-4.1V's vision_config (Glm4vVisionConfig): width hidden_size, each block's MLP
	 * out_hidden_size wide ([VI] = out_hidden_size), the merger's MLP intermediate_size
	 * wide ([VM] = intermediate_size), (image_size / patch_size)^2 positions, the class's
	 * defaults for absent keys (also sets vision_gated: the same key names) */
	bool glm4v;
	/* Hook: is layer i a linear-attention layer (Qwen3-Next's gated delta net)? NULL =
	 * every layer has softmax attention. */
	bool (*layer_is_linear)(const ckpt_config *cfg, int64_t i);
	/* q_proj holds each head's output gate after its query ([query_h; gate_h], 2*d rows
	 * per head, Qwen3-Next): the fused QKV takes whole heads with their gates. */
	bool q_gated;
	/* Tensors under this prefix are dropped and listed as skipped (Qwen3-Next's "mtp."
	 * multi-token-prediction module, ERNIE 4.5 MoE's "model.mtp_"); NULL = none. */
	const char *drop_prefix;
	/* The config.json keys that decide which layers are linear attention / conv, named
	 * when a layer's tensors do not match its kind (NULL: "layer_types,
	 * full_attention_interval"). */
	const char *linear_keys;
	/* LFM2 (Lfm2Config): the MLP's size is block_auto_adjust_ff_dim's rule over
	 * intermediate_size (shardmap_lfm2_ff_dim), the conv kernel conv_L_cache */
	bool lfm2;
	/* The config.json keys that decide which layers are MoE, named when a layer's MLP
	 * tensors do not match its kind (NULL: "mlp_only_layers, first_k_dense_replace"). */
	const char *moe_keys;
	/* layer_is_linear picks Mamba2 layers (Granite 4.0's mamba.*): named so in refusals */
	bool mamba;
	/* Tensors whose names end with "." and one of these (NULL-terminated) are dropped and
	 * listed as skipped: buffers a checkpoint may hold that vLLM computes (MiniMax's
	 * lightning-attention self_attn.slope_rate / query_decay / key_decay / diagonal_decay,
	 * GPT-NeoX's old attention.bias / attention.masked_bias); NULL = none. */
	const char *const *drop_suffixes;
	/* CLIP's vision_config (CLIPVisionConfig: LLaVA, LLaVA-NeXT): SigLIP's key names (also
	 * sets vision_siglip), the class's defaults for absent keys, (image_size /
	 * patch_size)^2 + 1 positions (the class token) */
	bool clip;
	/* Hook: is the tensor of canonical name cn one vLLM builds no module for, so dropped and
	 * listed as skipped (LLaVA's vision blocks past vision_feature_layer and its
	 * post_layernorm)? NULL = none. */
	bool (*drop_canon)(const ckpt_config *cfg, const char *cn);
	/* Mamba / Falcon-Mamba (MambaConfig, FalconMambaConfig): the mixer is intermediate_size
	 * wide, its switches are use_conv_bias / use_bias (the loader reads them as
	 * mamba_conv_bias / mamba_proj_bias), named so in refusals */
	bool mamba_lm;
	/* PLaMo 2: kv heads are not replicated unless there is one (vLLM's plamo2.py cuts its
	 * [KV, d] k norm by rank, out of range when 1 < KV < tp_size) */
	bool kv_one_or_split;
	/* Mamba2 (Mamba2Config): the Mamba2 mixer's switches are use_conv_bias / use_bias too,
	 * named so in refusals (mamba_lm implies it) */
	bool mamba_use_keys;
	/* Idefics3's / SmolVLM's vision_config (Idefics3VisionConfig, SmolVLMVisionConfig):
	 * SigLIP's key names (also sets vision_siglip) with those classes' defaults for absent
	 * keys (SM_I3V_*); the connector's input is hidden_size x scale_factor^2 wide (the
	 * loader reads config.json's scale_factor as the spatial merge) */
	bool idefics3;
	/* Aya Vision's projector (AyaVisionConfig): linear_1 alignment_intermediate_size rows
	 * (SM_D_VPI; the loader's v_proj_in_dim, text hidden_size when absent), linear_2 half as
	 * many columns (SM_D_VPO); also Cohere2Vision's (Cohere2VisionConfig's default 36864) */
	bool aya_vision;
	/* Qwen2-Audio's audio_config: the encoder's d_model / encoder_ffn_dim / encoder_layers /
	 * encoder_attention_heads / num_mel_bins / max_source_positions as the vision dims
	 * (SM_D_VE, SM_D_VI, vis_depth, vis_heads, SM_D_VCH, SM_D_VNP; {i} of SM_F_VIS rules an
	 * encoder layer) */
	bool audio;
	/* Whisper (WhisperConfig): the encoder's sizes are top-level keys (encoder_layers,
	 * encoder_attention_heads, encoder_ffn_dim; also sets audio), the decoder's the language
	 * model's (decoder_layers, decoder_attention_heads, decoder_ffn_dim, d_model): named so
	 * in refusals; SM_D_RPOS is max_target_positions */
	bool whisper;
	/* InternVL's vision_config (InternVLVisionConfig; the loader applies its defaults): width
	 * hidden_size, MLP intermediate_size, blocks num_hidden_layers (also sets vision_siglip
	 * and vision_gated: the same key names), (image_size / patch_size)^2 + 1 positions (the
	 * class token), the projector's input hidden_size x (1 / downsample_ratio)^2 ([VM]) */
	bool internvl;
	/* Fuyu's vision_embed_tokens (FuyuConfig's top-level keys; the loader applies its
	 * defaults into v_patch_size / v_in_chans / v_hidden_size): [VUNF] = num_channels x
	 * patch_size^2 columns */
	bool fuyu;
	/* LFM2-VL's SigLIP2 vision_config (Siglip2VisionConfig; the loader applies its defaults):
	 * SigLIP's key names (also sets vision_siglip), num_patches position rows ([VNP]), the
	 * patch Linear's num_channels x patch_size^2 columns ([VUNF]), the projector's
	 * projector_hidden_size ([VPI]) and VE x downsample_factor^2 ([VM]) */
	bool siglip2;
	/* BLIP-2's vision_config (Blip2VisionConfig; the loader applies its defaults): SigLIP's
	 * key names (also sets vision_siglip and vision_gated), (image_size / patch_size)^2 + 1
	 * positions (the class token); qformer_config's Q-Former (SM_D_QF*, SM_F_QF rules' {i}),
	 * num_query_tokens its SM_D_QFQ */
	bool blip2;
	/* The config.json switch of SM_C_MMBIAS's projector biases, named in refusals (NULL:
	 * multimodal_projector_bias; LFM2-VL: projector_bias) */
	const char *mm_bias_key;
	/* Granite Speech's encoder_config (the loader's gs_*): the conformer's hidden_dim,
	 * hidden_dim x feedforward_mult, num_layers, input_dim, 2 x max_pos_emb + 1 and output_dim
	 * as the vision dims (SM_D_VE, SM_D_VI, vis_depth, SM_D_VCH, SM_D_VNP, SM_D_VPO; {i} of
	 * SM_F_VIS rules a conformer block), its attention and conv sizes SM_D_GS*, the Q-Former's
	 * SM_D_QF* ({i} of SM_F_QF rules a Q-Former layer) */
	bool gspeech;
	/* Voxtral's audio_config (VoxtralEncoderConfig): as audio, under that class's key names
	 * (hidden_size, intermediate_size, num_hidden_layers, num_attention_heads), which the
	 * planner's messages name; also Audio Flamingo 3's (AudioFlamingo3EncoderConfig) */
	bool voxtral;
	/* Mllama's vision_config (the loader's v_* / ml_* fields, MllamaVisionConfig's defaults
	 * applied): width hidden_size, MLP intermediate_size, heads attention_heads, the local
	 * transformer's num_hidden_layers ({i} of SM_F_VIS rules) and the global one's
	 * num_global_layers ({i} of SM_F_QF rules), (image_size / patch_size)^2 + 1 positions,
	 * vision_output_dim ([VOD]), SM_D_MLAR / MLTH / MLTE; layer_is_linear picks the
	 * cross-attention layers, named so in refusals */
	bool mllama;
	/* Hook: the checkpoint tensors the family requires beyond its table's, each present with
	 * its shape (Chameleon's VQ-VAE, which vq_config shapes), else an error naming it; NULL =
	 * none. */
	int (*check_extra)(const ckpt *c, const ckpt_config *cfg, wt_errbuf *err);
	/* Aria's projector (AriaConfig): query's rows are the loader's aria_queries (SM_D_QFQ,
	 * max(projector_patch_to_query_dict.values())) */
	bool aria;
	/* Hook: {j} is not an expert but an index the family ties to layer i (Zamba2's adapter
	 * of hybrid application j, held by the layer of its shared block): does (i, j) name a
	 * tensor? j runs below num_hidden_layers. NULL = {j} is an expert. */
	bool (*j_holds)(const ckpt_config *cfg, int64_t i, int64_t j);
	/* Qwen2.5-Omni's thinker: Qwen2.5-VL's vision_config (also sets vision_gated) beside its
	 * audio_config, whose encoder has dims of its own (SM_D_AE, SM_D_AI, SM_D_AMEL; {i} of
	 * SM_F_QF rules an encoder layer, encoder_layers of them) */
	bool omni;
	/* What bounds {j} where j_holds says no, named in that refusal (NULL: Zamba2's shared
	 * blocks' adapters) */
	const char *j_key;
	/* Hook: is the SM_F_QUANT tensor of canonical name cn one vLLM builds without its
	 * quant_config (SigLIP's MLPs whose sizes are not multiples of 64), so kept unquantized as
	 * an excluded one is? NULL = none. */
	bool (*keep_float)(const ckpt_config *cfg, const char *cn);
	/* The config.json key the loader reads into attention_out_bias for this family, named in
	 * the SM_C_OUTBIAS refusals (NULL: attention_out_bias; InternLM3: bias) */
	const char *out_bias_key;
	bool tp_experts; /* vLLM's MiniCPMMoE / ArcticMoE: all experts on every rank cut by tp,
	                  * ep_size > 1 refused, w13 [gate; up] whatever w13_order,
	                  * intermediate_size named */
	/* vLLM's first bailing_moe.py: asserts num_key_value_heads % tp_size == 0 (no kv head
	 * replicated on several ranks) */
	bool kv_divides_tp;
	/* the vLLM model file (no ".py") named in that refusal; NULL: the family's name */
	const char *vllm_py;
	/* Hook: each layer's own attention and MLP (DeciLM's block_configs), read once per plan
	 * into *out (num_hidden_layers entries, owned by the planner): a layer's kv heads and MLP
	 * width stand for KV and I in its tensors' shapes and cuts, and SM_C_LATT / SM_C_LMLP
	 * rules hold where it has them. NULL = every layer has the model's. */
	int (*layer_dims)(const ckpt *c, sm_layer_dims **out, wt_errbuf *err);
	/* v_proj holds v_head_dim rows a kv head (QKVParallelLinear's v_head_size: MiMo-V2-Flash),
	 * o_proj H x v_head_dim columns: SM_K_QKV's v part is cut in those rows */
	bool qkv_v_head_dim;
	/* vLLM's MiMoV2MoE: tp_size above the routed experts is refused where a layer is MoE */
	bool tp_le_experts;
	/* The family's table for one more architecture, its archs[0] (Tarsier2 on Qwen2-VL: the
	 * same cut under the checkpoint's own prefixes); NULL = none. shardmap_family_for picks
	 * it. */
	const struct sm_family *arch_variant;
	/* Runtime names keep the checkpoint's prefixes (SHARDS.md: the module path): a name in the
	 * aliases' layout is served with its prefix, not the rules' canonical one */
	bool alias_runtime;
	/* The runtime name of the one integer table the family serves as stored, never converted
	 * or quantized (an EAGLE-3 draft's draft_id_to_target_id, I64); NULL = none: every
	 * integer tensor refused (shardmap_int_kept) */
	const char *int_keep;
	/* The family's table when a tensor's name starts with prefix_at (an EAGLE-3 draft's
	 * midlayer.: the other aliases); NULL = none. shardmap_family_for picks it. */
	const struct sm_family *prefix_variant;
	const char *prefix_at;
	/* Hook: the family's table for this config (InternVLChatModel: the one of its
	 * llm_config's language model), picked by shardmap_family_for; NULL = this one. */
	const struct sm_family *(*variant_for)(const ckpt_config *cfg);
	/* Hook: is the SM_F_QUANT tensor of canonical name cn built without quantization at
	 * tp_size tp (InternViT's qkv / proj: a plain nn.Linear when its heads do not divide
	 * tp)? Checked beside keep_float. */
	bool (*float_at_tp)(const ckpt_config *cfg, uint32_t tp, const char *cn);
	/* MiniCPM-V's resampler (MiniCPMVConfig): query's rows are the loader's mcv_query_num
	 * (SM_D_QFQ, query_num) */
	bool minicpmv;
	/* The config.json key counting {i} of the rules without a block flag, named in refusals
	 * (NULL: num_hidden_layers; Whisper: decoder_layers, an MLPSpeculator: n_predict) */
	const char *layers_key;
	/* Hook: how far {j} runs where j_holds is set (a Medusa draft's num_heads); NULL:
	 * num_hidden_layers */
	int64_t (*j_count)(const ckpt_config *cfg);
	/* Kimi-VL's MoonViT vision_config (the loader applies MoonViTConfig's defaults): width
	 * hidden_size, MLP intermediate_size, blocks num_hidden_layers, heads
	 * num_attention_heads (also sets vision_siglip and vision_gated: the same key names), the
	 * position table init_pos_emb_height x init_pos_emb_width ([VPH], [VPW]), the projector
	 * hidden_size x kh x kw wide ([VM], merge_kernel_size [kh, kw]) */
	bool moonvit;
	/* An MTP draft (DeepSeekMTPModel, Glm4MoeMTPModel: family_mtp.c): {i} runs over the
	 * layers num_hidden_layers .. + num_nextn_predict_layers - 1 only (the config's
	 * mtp_layers), and a runtime name of such a layer gets vLLM's _rewrite_spec_layer_name
	 * (shardmap_mtp_rename: the decoder layer's tensors under mtp_block.) */
	bool mtp;
	/* MiMo's MTP draft (MiMoMTPModel: family_mimo_mtp.c): {i} runs over the layers 0 ..
	 * num_nextn_predict_layers - 1 only (model.mtp_layers.{n}: vLLM's speculative config sets
	 * num_hidden_layers 0, so n is the runtime index too; Qwen3NextMTP's mtp.layers.{n} alike:
	 * family_qwen3_next_mtp.c) */
	bool mtp_from0;
	/* ERNIE 4.5's MTP draft (ErnieMTPModel: family_ernie_mtp.c): {i} of a runtime name is the
	 * checkpoint's index + num_hidden_layers (model.mtp_block.0. is served as
	 * model.layers.{num_hidden_layers}.mtp_block.: vLLM's _rewrite_spec_layer_name) */
	bool mtp_rt_shift;
	/* Ovis (family_ovis.c): the AIMv2 backbone's keys are under
	 * visual_tokenizer_config.backbone_config (named so where its heads do not divide tp) */
	bool ovis;
	/* Ultravox (UltravoxModel: family_ultravox.c): the audio dims as audio sets them, and the
	 * projector's: [VM] = d_model x stack_factor (ln_pre, linear_1 columns), [VPI] the top
	 * level's hidden_size (linear_1 rows), [VPO] half of it under projector_act swiglu, else
	 * all of it (linear_2 columns, ln_mid) */
	bool ultravox;
	/* Hook: checks of the checkpoint's tensor names before any is mapped (Ultravox: the
	 * weights text_model_id / audio_model_id name are there, no whole Whisper under
	 * audio_tower.model.), each failure an error naming the fix; NULL = none. */
	int (*check_names)(const ckpt *c, const ckpt_config *cfg, wt_errbuf *err);
	/* The config.json key the loader reads into use_qk_norm for this family, named in the
	 * SM_C_QKNORM refusals (NULL: use_qk_norm; Molmo: attention_layer_norm) */
	const char *qk_norm_key;
	/* The config.json key (or where the count comes from) named when a vision block's index
	 * is past the tower's count (NULL: the one the vision flags imply, plan.c vis_depth_key) */
	const char *depth_key;
	/* InternViT built with this many zero dummy heads beside vision_config's
	 * num_attention_heads H (NVLM-D: vLLM's nvlm_d.py passes num_dummy_heads 7, its checkpoint
	 * holds them): attn.qkv 3 x (H + n) x d rows, q_norm / k_norm and proj's columns
	 * (H + n) x d ([VA], [V3A]), split by H + n heads; 0 = none */
	int vis_dummy_heads;
	/* the config.json key its vision heads come from, named where tp_size does not divide them
	 * (NULL: the one the vision flags imply, plan_part.c unit_count) */
	const char *vis_heads_key;
	/* the config.json key its vision MLP width comes from, named where tp_size does not divide
	 * it (NULL: the one the vision flags imply, plan_part.c unit_count) */
	const char *vis_inter_key;
	/* the config.json key of the linear-attention heads SM_U_LVH counts, named where tp_size
	 * does not divide them (NULL: linear_num_value_heads; Kimi-Linear's
	 * linear_attn_config.num_heads) */
	const char *lin_heads_key;
	/* Hook: checkpoint name `name` into the rules' name (to_rules) or back, after / before the
	 * aliases, into buf (cap bytes); name itself when unchanged, NULL when it does not fit
	 * (ERNIE-4.5-VL: mlp.experts.{E + j} is its vision set, mlp.vision_experts.{j}); NULL =
	 * none. plan_rename.c applies it. */
	const char *(*rename)(const ckpt_config *cfg, bool to_rules, const char *name, char *buf,
	                      size_t cap);
	/* ERNIE-4.5-VL's tower (Ernie4_5_VisionTransformer): Qwen2-VL's vision_config keys, its
	 * patch_embed a Linear over in_channels x patch_size^2 ([VUNF]) */
	bool ernie_vl;
} sm_family;

/* vLLM's _rewrite_spec_layer_name on runtime name buf (cap bytes), in place: in
 * model.layers.N.X, X not enorm / hnorm / eh_proj / shared_head / embed_tokens becomes
 * mtp_block.X. False when the result does not fit (family_mtp.c). */
bool shardmap_mtp_rename(char *buf, size_t cap);

/* Whether tensor t under rule r is family f's int_keep table in I64 (family_eagle.c). */
bool shardmap_int_kept(const sm_family *f, const sm_rule *r, const ckpt_tensor *t);

/* The checkpoint prefixes transformers >= 4.52 writes for the LLaVA-style layouts
 * (model.language_model., model.vision_tower., model.multi_modal_projector., lm_head.)
 * and the released ones they map to (family_gemma3.c; Gemma 3, Mistral 3). */
extern const char *const shardmap_llava_aliases[];
/* Those and model.image_newline -> image_newline (family_llava.c; LLaVA-NeXT, LLaVA-OneVision,
 * LLaVA-NeXT-Video, Bee: vLLM's hf_to_vllm_mapper of llava_next.py / bee.py). */
extern const char *const shardmap_llava_next_aliases[];
/* LLaVA-OneVision's tower cut (family_llava.c; R-4B, Bee-8B alike): the SigLIP blocks at
 * vision_tower.vision_model. past vision_feature_layer and post_layernorm dropped
 * (init_vision_tower_for_llava, require_post_norm=False). */
bool shardmap_onevision_drop(const ckpt_config *c, const char *cn);
/* The Qwen2-VL-style prefixes (model.language_model. -> model., model.visual. -> visual.;
 * family_qwen2vl.c; Qwen2-VL, Qwen2.5-VL, Qwen3-VL, GLM-4.1V / 4.5V). */
extern const char *const shardmap_qwen_vl_aliases[];

/* Why architectures[0] arch, one vLLM serves, is not cut here and what to serve instead
 * (registry.c not_cut); NULL for any other. */
const char *shardmap_not_cut_why(const char *arch);
/* Registry lookup by architectures[0] (then model_type). NULL if unknown. */
const sm_family *shardmap_family_find(const char *arch, const char *model_type);
/* The family of checkpoint c: shardmap_family_find's (its variant_for table when that
 * hook names one), its arch_variant table when
 * architectures[0] is that table's, its pixtral_tower table when
 * vision_config.model_type is pixtral, its siglip_tower table when it is
 * siglip_vision_model, its prefix_variant table when a tensor starts with its prefix_at, or
 * its per_expert table when c holds an "...experts.<digits>." tensor. */
const sm_family *shardmap_family_for(const ckpt *c);

/* The vision towers' shape errors (plan_dims.c): vision_config.<key> (the family's name for
 * the head count) not dividing hidden_size; image_size below patch_size. WT_ECORRUPT. */
int shardmap_vision_heads_err(const char *key, int64_t heads, int64_t hidden, wt_errbuf *err);
int shardmap_vision_patch_err(int64_t image, int64_t patch, wt_errbuf *err);

/* RobertaEmbedding's config checks (family_roberta.c), shared by the sequence classifiers. */
int shardmap_roberta_check(const ckpt_config *c, wt_errbuf *err);
/* BertWithRopeAttention's head sizes for Nomic BERT and GTE (family_nomic_bert.c). */
int shardmap_bert_rope_check(const ckpt_config *c, const char *heads_key, const char *hidden_key,
                             wt_errbuf *err);
/* family_zamba2.c: whether Zamba2's condition cond (SM_C_Z2*) holds at layer i, and what
 * config.json makes a layer where it does not ("a Mamba layer (see layers_block_type)"). */
bool shardmap_zamba2_cond(const ckpt_config *c, uint8_t cond, int64_t i);
const char *shardmap_zamba2_why(const ckpt_config *c, uint8_t cond, int64_t i);
/* family_nemotron_h.c: whether Nemotron-H's condition cond (SM_C_NH*) holds at layer i, and
 * what hybrid_override_pattern makes a layer where a rule of family f does not hold (NULL:
 * another family, or a condition it leaves to the generic words). */
bool shardmap_nemotron_h_cond(const ckpt_config *c, uint8_t cond, int64_t i);
const char *shardmap_nemotron_h_why(const sm_family *f, const ckpt_config *c, uint8_t cond,
                                    int64_t i);
/* family_granite4.c: the Mamba2 mixer's config rules (mamba_expand * hidden_size =
 * mamba_n_heads x the heads' width, whole groups of heads), fam naming the family, is_mamba
 * the layers with a mixer. */
int shardmap_mamba2_mixers_check(const ckpt_config *c, const char *fam,
                                 bool (*is_mamba)(const ckpt_config *, int64_t), wt_errbuf *err);

/* A family whose head size is hidden_size / num_attention_heads (family_neox.c): the hidden
 * size divisible by the heads (WT_ECORRUPT) and head_dim equal to their quotient
 * (WT_EUNSUPPORTED: "remove it", or "fix KEY" for ChatGLM's / Qwen's kv_channels); hid, heads
 * and dim are the config's own key names, c->architecture names the model. */
int shardmap_check_head_quotient(const ckpt_config *c, const char *hid, const char *heads,
                                 const char *dim, wt_errbuf *err);
/* A classifier's labels (c->rob_num_labels, the loader's num_labels): at least one, else
 * WT_ECORRUPT naming id2label and head, the tensor that needs them (family_seqcls.c). */
int shardmap_check_labels(const ckpt_config *c, const char *head, wt_errbuf *err);
/* vLLM's OpenPanguMoEModel raises "No MOE layer found" without one: n_routed_experts must be
 * set and first_k_dense_replace below num_hidden_layers (model names the release in the
 * message; family_pangu_moe.c). */
int shardmap_pangu_moe_layers(const ckpt_config *c, const char *model, wt_errbuf *err);
/* layer_types of a hybrid sliding-window family (Cohere2, OLMo 3, EXAONE 4.0, SmolLM3; fam names it
 * in the refusal): one entry per layer, each "sliding_attention" or "full_attention";
 * absent is fine (the config class builds them) (family_cohere.c). */
int shardmap_check_swa_layer_types(const ckpt_config *c, const char *fam, wt_errbuf *err);
/* family_qwen2vl.c: MRoPE's sections (rope_scaling.mrope_section) non-negative and summing to
 * head_dim / 2; model names the family in the refusal. WT_ECORRUPT. */
int shardmap_mrope_check(const ckpt_config *c, const char *model, wt_errbuf *err);
/* family_qwen2_5_omni.c: an Omni thinker's audio encoder (thinker_config.audio_config): d_model
 * even and split by its heads (attn names the attention class), output_dim the language
 * model's hidden_size (proj names the projection). WT_ECORRUPT. */
int shardmap_omni_audio_check(const ckpt_config *c, const char *attn, const char *proj,
                              wt_errbuf *err);
/* family_whisper.c: an audio encoder's heads split its width (the loader's a_heads /
 * a_d_model): WT_ECORRUPT naming `heads` and `width` (their config keys, e.g.
 * "audio_config.num_attention_heads", "hidden_size") and `attn` (the attention class that
 * splits it). */
int shardmap_audio_heads_check(const ckpt_config *c, const char *heads, const char *width,
                               const char *attn, wt_errbuf *err);

bool shardmap_moe_qwen(const ckpt_config *cfg, int64_t i);
/* Glm4MoeDecoderLayer's selection (also GLM-4.5V's and dots.llm1's): MoE from
 * first_k_dense_replace on. */
bool shardmap_moe_glm4(const ckpt_config *cfg, int64_t i);
/* DeepseekV2DecoderLayer's selection (DeepSeek-V2 / V3, DeepSeek-MoE, the language models of
 * DeepSeek-VL2 and Kimi-VL, the DeepSeek MTP draft): MoE when there are routed experts, from
 * first_k_dense_replace on, every moe_layer_freq-th layer. */
bool shardmap_moe_deepseek(const ckpt_config *cfg, int64_t i);
/* DeepSeek-VL2's and DeepSeek-OCR's check: the loader's vision fields (model_type
 * deepseek_vl_v2; `as` ends the message: "" or ", as <release>'s"), then the language model
 * its loader picks (lm_model_type): plain attention's head_dim hid / H, an MLA one's
 * kv_lora_rank / qk_nope_head_dim / qk_rope_head_dim / v_head_dim set (the deepseek_v3
 * family's own check names that family's table alone) (family_deepseek_vl2.c). */
int shardmap_deepseek_vl2_check(const ckpt_config *cfg, const char *as, wt_errbuf *err);

/* ---------- mapper ---------- */

/* Match name against pattern; {i}/{j} capture decimal indices (-1 if absent); {k} matches
 * one without capturing it (a rule with {k} keeps the checkpoint's name as its runtime name:
 * Chameleon's VQ-VAE). */
bool shardmap_match(const char *pattern, const char *name, int64_t *i, int64_t *j);
/* Expand pattern with i/j into buf. Returns false if it does not fit. */
bool shardmap_expand(const char *pattern, int64_t i, int64_t j, char *buf, size_t cap);
/* A rule's runtime name: pattern expanded (shardmap_expand), then, for a family with
 * alias_runtime whose checkpoint is in the aliases' layout (alt), put back under the
 * checkpoint's prefix. Returns false if it does not fit. */
bool shardmap_expand_rt(const sm_family *f, bool alt, const char *pattern, int64_t i, int64_t j,
                        char *buf, size_t cap);
/* True for tensors dropped by every family (rotary caches). */
bool shardmap_generic_drop(const char *name);
/* The number right after prefix in name (a block or layer index: "model.layers." in
 * "model.layers.12.mlp"), -1 when name does not start with prefix and a digit. */
int64_t shardmap_index_after(const char *name, const char *prefix);
/* Whether a checkpoint uses the family's alternative name layout (any tensor under an
 * alias checkpoint prefix). */
bool shardmap_alias_layout(const sm_family *f, const ckpt *c);
/* Canonical name of checkpoint name `name` (alias layout `alt`): buf, or `name` itself
 * when no alias applies. *mixed is set when alt and the name is already canonical
 * (a checkpoint mixing both layouts). NULL if it does not fit. */
const char *shardmap_alias_canon(const sm_family *f, bool alt, const char *name, char *buf,
                                 size_t cap, bool *mixed);
/* Checkpoint name of canonical name `name` in the alias layout `alt` (inverse). */
const char *shardmap_alias_ckpt(const sm_family *f, bool alt, const char *name, char *buf,
                                size_t cap);

/* ---------- exclusions (exclude.c) ---------- */

typedef struct sm_excl sm_excl;
/* Most patterns a plan compiles: the layout's WT_MAX_EXCLUDE plus config.json's lists. */
#define SM_EXCL_MAX_PATTERNS 4096
/* Merge, sort, de-duplicate and compile patterns (copied). Bad `re:` or a pattern over a
 * WT_EXCLUDE_* limit -> WT_EINVAL; more than SM_EXCL_MAX_PATTERNS -> WT_ETOOBIG.
 * *out is owned by the caller: shardmap_excl_free(). */
int shardmap_excl_compile(const char *const *pats, size_t n, sm_excl **out, wt_errbuf *err);
bool shardmap_excl_match(const sm_excl *x, const char *module);
size_t shardmap_excl_count(const sm_excl *x);
const char *shardmap_excl_pattern(const sm_excl *x, size_t i); /* sorted; borrowed */
void shardmap_excl_free(sm_excl *x);                           /* NULL-safe */

/* ---------- plan ---------- */

/* Vocabulary padding: a step lcm(vocab_pad, tp_size) up to this is always allowed (engines
 * pad to 64..1024); a larger one may not add more rows than the vocabulary has. */
#define SM_VOCAB_FREE_MULTIPLE 1024

/* How a source is loaded for production. */
typedef enum {
	SM_SRC_RAW = 0,   /* bytes as stored */
	SM_SRC_DQ_BLOCK,  /* FP8 + weight_scale_inv -> F32 (fbgemm_fp8: per row, weight_scale) */
	SM_SRC_DQ_TENSOR, /* FP8 + scalar weight_scale -> F32 */
	SM_SRC_DQ_CT,     /* compressed-tensors int8 / packed int4 + weight_scale -> F32 */
	SM_SRC_PACK_CT,   /* compressed-tensors codes repacked for pass-through: int4 in I8 ->
	                     packed I32 [N, K/8]; int8 packed I32 [N, K/4] -> I8 [N, K] */
	SM_SRC_DQ_MX,     /* MXFP4 X_blocks + X_scales -> F32 [..., N, K] (quant_mx.c) */
	SM_SRC_DEINT,     /* bytes as stored, rows de-interleaved ([E, 2n] as [E*2n, 1]: GPT-OSS
	                     gate/up bias) */
	SM_SRC_TRANS,     /* a float stack [E, K, N] transposed per expert to [E, N, K] (rows
	                     de-interleaved when deint): GPT-OSS saved dequantized; an fbgemm
	                     FP8 stack passing through (its bytes) */
	SM_SRC_DQ_TRANS,  /* an fbgemm FP8 stack [E, K, N] + per-column scales -> F32 [E, N, K]
	                     (transposed per expert, then one scale per row; quant_f8.c) */
	SM_SRC_COLVEC,    /* bytes as stored, viewed as one column [numel, 1] (an fbgemm stack's
	                     scales [E, 1, N] passing through with the transposed weight) */
	SM_SRC_ROPE,      /* bytes as stored, read whole, each head's rows de-interleaved: Meta's
	                     RoPE pairs to transformers' halves (Mistral's native wq / wk;
	                     ckpt_rope_heads) */
} sm_src_mode;

typedef struct sm_src {
	uint32_t t;     /* ckpt tensor index */
	uint32_t scale; /* ckpt index of the scale for DQ modes */
	uint8_t mode;   /* sm_src_mode */
	bool whole;     /* read whole (scales, dequantized sources), not by rows; an expert
	                   stack (produce_stack.c) only the experts the ranks need */
	bool deint;     /* SM_SRC_DQ_MX, SM_SRC_TRANS: gate/up rows de-interleaved (SM_K_EXP13I) */
	int64_t e2d;    /* > 0: a stack stored 2-D [E*K, N], read as [E, K, N] (SM_F_STACK2) */
} sm_src;

/* Output kinds. */
typedef enum {
	SM_O_DATA = 0,  /* concatenate pieces, converting to info.dtype */
	SM_O_QUANT,     /* concatenate, then kern_quantize per unit; scale_pos gets the scales */
	SM_O_QSCALE,    /* scales written by their SM_O_QUANT weight */
	SM_O_MERGE,     /* per-tensor FP8 parts merged to the unit's max scale */
	SM_O_SCALE_MAX, /* F32 [units]: max of the pieces' scalar sources per unit */
} sm_okind;

#define SM_ZERO UINT32_MAX /* piece source: zero rows */

typedef struct sm_piece {
	uint32_t src; /* group source index, or SM_ZERO */
	uint32_t aux; /* SM_O_MERGE: group source index of the part's scalar scale */
	bool cols;    /* false: rows [start, start+len); true: columns, all rows */
	int64_t start;
	int64_t len;
	int64_t out_rows; /* rows this piece adds to the output */
	int64_t unit;     /* expert slot (0 for dense) */
} sm_piece;

typedef struct sm_out {
	sm_out_info info; /* info.name points at name */
	char *name;       /* owned */
	uint32_t group;
	uint8_t okind; /* sm_okind */
	wt_quant q;    /* SM_O_QUANT */
	wt_dtype work; /* dtype pieces are assembled in (SM_O_QUANT) */
	int64_t rows;  /* 2-D view of the assembled (unquantized) tensor */
	int64_t cols;
	int64_t units;   /* experts stacked (1 for dense) */
	size_t p0, np;   /* pieces */
	size_t scale_ix; /* SM_O_QUANT: index (unsorted) of its SM_O_QSCALE out */
} sm_out;

typedef struct sm_rank {
	sm_out *outs; /* unsorted, owned */
	size_t n, cap;
	size_t *order; /* name order -> outs index */
	size_t *pos;   /* outs index -> name order */
	uint64_t nbytes;
} sm_rank;

typedef struct sm_member {
	uint32_t rank;
	size_t ix; /* outs index (unsorted) */
} sm_member;

typedef struct sm_group {
	sm_src *srcs; /* owned */
	size_t n_srcs;
	sm_member *m; /* every output of the group, all ranks; owned */
	size_t n_m, cap_m;
} sm_group;

struct sm_plan {
	const sm_family *fam;
	uint32_t tp, ep;
	sm_rank *ranks;
	sm_piece *pieces;
	size_t n_pieces, cap_pieces;
	sm_group *groups;
	size_t n_groups, cap_groups;
	char **skipped;
	size_t n_skipped, cap_skipped;
	bool tied;
	wt_layout layout; /* copy */
};

/* Plan building helpers (plan_build.c). */
int shardmap_plan_add_piece(sm_plan *p, const sm_piece *pc, wt_errbuf *err);
int shardmap_plan_add_out(sm_plan *p, uint32_t rank, const sm_out *o, size_t *ix, wt_errbuf *err);
int shardmap_plan_add_group(sm_plan *p, uint32_t *gid, wt_errbuf *err);
int shardmap_plan_group_member(sm_plan *p, uint32_t gid, uint32_t rank, size_t ix, wt_errbuf *err);
int shardmap_plan_add_skipped(sm_plan *p, const char *name, wt_errbuf *err);
int shardmap_plan_finish(sm_plan *p, wt_errbuf *err); /* sort ranks, byte totals */

/* The raw plan of a raw layout (plan_raw.c); fam is NULL in it. */
int shardmap_plan_raw(const ckpt *c, const wt_layout *l, sm_plan **out, wt_errbuf *err);

/* Quantization schemes (quant.c): shapes of docs/format.md section 4.2. */
typedef struct sm_scheme {
	wt_quant q;
	wt_dtype wdtype; /* emitted weight dtype */
	/* Weight and scale shape of one [N,K] unit (int4: group used). */
	void (*shapes)(int64_t N, int64_t K, int64_t group, int64_t wshape[2], int64_t sshape[2],
	               int *sndim);
} sm_scheme;
const sm_scheme *shardmap_scheme(wt_quant q); /* NULL for none */

#endif
