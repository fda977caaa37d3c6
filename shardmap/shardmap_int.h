/*
 * shardmap_int.h — private types of shardmap/: the family tables (registry),
 * the mapped checkpoint entries and the plan representation shared by the
 * planner and the producer.
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
#include "shardmap/shardmap.h"

/* ---------- family tables ---------- */

/* Partition kinds (docs/format.md section 2.1). */
typedef enum {
	SM_K_REPL = 0, /* replicated */
	SM_K_QKV,      /* fused q/k/v with GQA kv replication (part 0 q, 1 k, 2 v) */
	SM_K_ROWS,     /* column parallel: rows split by `unit` (fused parts concatenate) */
	SM_K_COLS,     /* row parallel: columns split by `unit` */
	SM_K_VOCAB,    /* rows of the padded vocabulary */
	SM_K_EXP13,    /* expert gate (part 0) / up (part 1), stacked over local experts */
	SM_K_EXP2,     /* expert down, stacked over local experts */
	SM_K_QKVF,     /* q/k/v fused in the checkpoint ([q; k; v] rows), split by heads */
	SM_K_QKVC,     /* q/k/v fused in the checkpoint with GQA ([H*d; KV*d; KV*d] rows):
	                  as SM_K_QKV from one source (Phi-3 qkv_proj) */
	SM_K_ROWS2,    /* two halves fused in the checkpoint ([gate; up] rows): [gate_r ;
	                  up_r], each half split by `unit` (Phi-3 gate_up_proj) */
	SM_K_EXP13S,   /* expert gate/up stacked in the checkpoint [E, 2*Ie, hid] ([gate_j;
	                  up_j] rows per expert): as SM_K_EXP13 from one source (GraniteMoE) */
	SM_K_EXP2S,    /* expert down stacked in the checkpoint [E, hid, Ie]: as SM_K_EXP2 */
	SM_K_EXP13I,   /* as SM_K_EXP13S from [E, 2*Ie, hid] with gate/up rows interleaved
	                  (GPT-OSS: rows 2k gate, 2k+1 up), de-interleaved when loaded */
	SM_K_EXPB13,   /* expert gate/up bias [E, 2*Ie], interleaved as SM_K_EXP13I: the rows
	                  of w13 per local expert, [count, 2*Il] */
	SM_K_EXPB2,    /* expert down bias [E, hid]: the local experts' rows, [count, hid] */
	SM_K_CONVQKV,  /* Qwen3-Next conv1d [2*Hk*dk + Hv*dv, 1, K]: channels [q; k; v], each
	                  segment's rows split by tp, [q_r; k_r; v_r] (vLLM's
	                  mamba_v2_sharded_weight_loader) */
	SM_K_KVH,      /* rows per kv head ([KV, d]: Command R+'s k_norm): the kv heads the rank's
	                  k_proj rows hold, with SM_K_QKV's GQA replication when KV < T */
	SM_K_ROWS3,  /* three equal segments fused in the checkpoint (LFM2's conv.in_proj [B; C; x]
	                rows): [B_r; C_r; x_r], each segment split by `unit` (vLLM's
	                MergedColumnParallelLinear over [dim] * 3) */
	SM_K_QKVH,   /* q/k/v fused per kv group in the checkpoint ([KV, H/KV + 2, d] rows:
	                Falcon's query_key_value; GPT-NeoX's / BLOOM's [H, 3, d] with KV == H):
	                rank r's [q_r; k_r; v_r] as SM_K_QKV's, gathered head by head (one d-row
	                piece per head and part) */
	SM_K_MAMBA,  /* Granite 4.0's Mamba2 in_proj [z; x; B; C; dt] (dims[0] SM_D_MIN) or
	                conv1d [x; B; C] (SM_D_MCONV), weight or bias: each segment's rows
	                split by tp, B and C whole on every rank when tp does not divide
	                mamba_n_groups (1), as vLLM's MambaMixer2 loads them */
	SM_K_EXPGU,  /* expert gate (part 0) and up (part 1) each stacked in the checkpoint, two
	                sources [E, Ie, hid] (DBRX's w1 / v1, stored 2-D [E*Ie, hid]): as
	                SM_K_EXP13 */
	SM_K_QKVZ,   /* the q (part 0) and v (part 1) biases of a q/k/v whose k has none
	                (Whisper's encoder: vLLM's QKVParallelLinear with a zero k bias,
	                _create_fake_bias_for_k_proj): [q_r; zeros; v_r], each split by `unit` */
	SM_K_KVZ,    /* the v bias of a k/v whose k has none (Whisper's cross-attention kv_proj:
	                vLLM's MergedColumnParallelLinear with a zero k bias): [zeros; v_r] */
	SM_K_EXP1,   /* a non-gated expert's up (Nemotron-H's experts.{j}.up_proj): w13 of the
	                local experts holding only w1, [count, Il, hid] (vLLM's FusedMoE with
	                is_act_and_mul false) */
	SM_K_QKVI,   /* q (part 0) and k / v interleaved per kv head in one checkpoint tensor
	                (part 1, [KV, 2, d] rows: TeleChat2's self_attention.key_value): rank r's
	                [q_r; k_r; v_r] as SM_K_QKV's, k and v gathered one d-row piece per kv
	                head (vLLM's telechat2.py _split_key_value before QKVParallelLinear) */
	SM_K_REPLF,  /* parts fused whole on every rank ([p0; p1; ...] rows, never split: Step3's
	                q_proj / k_proj / v_proj into a ReplicatedLinear qkv_proj) */
	SM_K_ROWS2R, /* two halves fused in the checkpoint as [up; gate] rows: [gate_r; up_r], each
	                half split by `unit` (GTE's mlp.up_gate_proj, split and re-merged by vLLM's
	                bert_with_rope.py) */
} sm_kind;

/* Symbolic dimensions checked against config.json. */
typedef enum {
	SM_D_ANY = 0, /* not derivable from config.json */
	SM_D_ONE,
	SM_D_HID,
	SM_D_Q,   /* H * d */
	SM_D_KV,  /* KV * d */
	SM_D_HD,  /* d */
	SM_D_I,   /* intermediate_size */
	SM_D_V,   /* vocab_size */
	SM_D_E,   /* routed experts */
	SM_D_IE,  /* expert intermediate */
	SM_D_ISH, /* shared expert intermediate */
	SM_D_QLORA,
	SM_D_KVLORA,
	SM_D_KVA, /* kv_lora_rank + qk_rope_head_dim */
	SM_D_QB,  /* H * (qk_nope + qk_rope) */
	SM_D_KVB, /* H * (qk_nope + v_head) */
	SM_D_OV,  /* H * v_head */
	/* vision tower (vision_config) */
	SM_D_VE,   /* embed_dim */
	SM_D_V3E,  /* 3 * embed_dim: fused qkv rows */
	SM_D_VI,   /* vision MLP hidden: int(embed_dim * mlp_ratio) */
	SM_D_VM,   /* merger hidden: embed_dim * spatial_merge_size^2 */
	SM_D_VCH,  /* in_chans */
	SM_D_VTP,  /* temporal_patch_size */
	SM_D_VP,   /* patch_size */
	SM_D_QKV,  /* (H + 2 * KV) * d: q/k/v fused in the checkpoint */
	SM_D_I2,   /* 2 * intermediate_size: gate/up fused in the checkpoint */
	SM_D_IE2,  /* 2 * expert intermediate: expert gate/up stacked in the checkpoint */
	SM_D_ISH2, /* 2 * shared expert intermediate: shared gate/up fused in the checkpoint */
	SM_D_VNP,  /* SigLIP positions: (image_size / patch_size)^2 */
	SM_D_H,    /* num_attention_heads (GPT-OSS attention sinks [H]) */
	/* Llama 4's vision tower (vision_config) */
	SM_D_VUNF, /* num_channels * patch_size^2: the unfolded patch (patch_embedding.linear) */
	SM_D_VPI,  /* projector_input_dim: vision_adapter.mlp.fc1 rows */
	SM_D_VPO,  /* projector_output_dim: vision_adapter.mlp.fc2 */
	SM_D_VOD,  /* vision_output_dim: multi_modal_projector.linear_1 columns */
	/* Qwen3-Next: gated q and the gated delta net (Hk, Hv key / value heads of dk, dv) */
	SM_D_Q2,    /* 2 * H * d: q_proj with its output gate ([query_h; gate_h] per head) */
	SM_D_LQKVZ, /* 2*Hk*dk + 2*Hv*dv: linear_attn.in_proj_qkvz rows */
	SM_D_LBA,   /* 2 * Hv: linear_attn.in_proj_ba rows */
	SM_D_LCONV, /* 2*Hk*dk + Hv*dv: linear_attn.conv1d channels */
	SM_D_LKER,  /* linear_conv_kernel_dim */
	SM_D_LHV,   /* Hv: A_log, dt_bias */
	SM_D_LVD,   /* Hv * dv: linear_attn.out_proj columns */
	SM_D_LDV,   /* dv: linear_attn.norm */
	SM_D_KVH,   /* num_key_value_heads (Command R+'s k_norm [KV, d]) */
	SM_D_VMS,   /* vision spatial_merge_size (GLM-4.1V's downsample Conv2d kernel) */
	SM_D_HID3,  /* 3 * hidden_size: LFM2's conv.in_proj rows [B; C; x] */
	/* Granite 4.0's Mamba2 mixer: Im = mamba_expand * hidden_size = Hm * dm, G groups of
	 * N = mamba_d_state */
	SM_D_MIN,   /* 2*Im + 2*G*N + Hm: mamba.in_proj rows [z; x; B; C; dt] */
	SM_D_MCONV, /* Im + 2*G*N: mamba.conv1d channels [x; B; C] */
	SM_D_MKER,  /* mamba_d_conv */
	SM_D_MH,    /* Hm = mamba_n_heads: A_log, D, dt_bias */
	SM_D_MI,    /* Im: the gated norm, out_proj columns */
	SM_D_Q3,    /* 3 * H * d: MiniMax's lightning qkv_proj ([q_h; k_h; v_h] per head) */
	/* Jamba's Mamba (v1) mixer: Im = mamba_expand * hidden_size, R = mamba_dt_rank, N =
	 * mamba_d_state */
	SM_D_MI2, /* 2*Im: mamba.in_proj rows [x; z] */
	SM_D_MXP, /* R + 2*N: mamba.x_proj rows [dt; B; C] */
	SM_D_MR,  /* R: dt_proj columns, dt_layernorm */
	SM_D_MN,  /* N: A_log columns, b_layernorm / c_layernorm */
	SM_D_EZ,  /* routed + zero (identity) experts: LongCat-Flash's router rows */
	/* OPT */
	SM_D_WEP,  /* word_embed_proj_dim: embed_tokens / lm_head columns, project_in / out */
	SM_D_OPOS, /* max_position_embeddings + 2: embed_positions rows (OPT's offset) */
	/* RoBERTa / XLM-RoBERTa */
	SM_D_RPOS,   /* max_position_embeddings: position_embeddings rows */
	SM_D_RTYPES, /* type_vocab_size: token_type_embeddings rows */
	SM_D_NLAB,   /* num_labels (id2label's entries): the sequence classifier's out_proj rows */
	/* Granite Speech's conformer encoder (encoder_config) */
	SM_D_GSA,  /* num_heads * dim_head: attn.to_q rows, to_out columns */
	SM_D_GSA2, /* 2 * num_heads * dim_head: attn.to_kv rows */
	SM_D_GSDH, /* dim_head: attn.rel_pos_emb columns */
	SM_D_GSC,  /* hidden_dim * conv_expansion_factor: the conv module's channels */
	SM_D_GSC2, /* twice that: conv.up_conv rows (the GLU's two halves) */
	SM_D_GSK,  /* conv_kernel_size */
	/* A BLIP-2 Q-Former (Granite Speech's projector_config, BLIP-2's qformer_config) */
	SM_D_QFH, /* hidden_size */
	SM_D_QFI, /* intermediate_size */
	SM_D_QFE, /* encoder_hidden_size: crossattention key / value columns */
	/* its queries: Granite Speech's window_size / downsample_rate (projector.query), BLIP-2's
	 * num_query_tokens (query_tokens) */
	SM_D_QFQ,
	/* Mllama: vocab_size + 8 (embed_tokens' rows: the image tokens), max_aspect_ratio_id + 1
	 * (the tile embeddings' rows), max_num_tiles x hidden (the aspect-ratio embeddings'
	 * columns), max_num_tiles x positions x hidden (the tile position embedding's) */
	SM_D_V8,
	SM_D_MLAR,
	SM_D_MLTH,
	SM_D_MLTE,
	SM_D_ZAR, /* Zamba2's adapter_rank: the LoRA adapters' A rows / B columns */
	/* Qwen2.5-Omni's audio encoder (thinker_config.audio_config): d_model, encoder_ffn_dim,
	 * num_mel_bins */
	SM_D_AE,
	SM_D_AI,
	SM_D_AMEL,
	/* Qwen3-Omni's: downsample_hidden_size (the Conv2d stem's channels), conv_out's columns
	 * (that x the mel bins after three stride-2 convolutions) */
	SM_D_ADH,
	SM_D_ACO,
	/* Gemma 3n: altup_num_inputs (the AltUp coefficients), its square (prediction_coefs'
	 * rows), hidden_size_per_layer_input, num_hidden_layers x that (the per-layer
	 * embedding's columns, per_layer_model_projection's rows), laurel_rank,
	 * vocab_size_per_layer_input (the per-layer embedding's rows) */
	SM_D_G3NA,
	SM_D_G3NA2,
	SM_D_G3NP,
	SM_D_G3NLP,
	SM_D_G3NLR,
	SM_D_G3NVP,
	SM_D_KV2, /* 2 * KV * d: TeleChat2's key_value rows ([KV, 2, d]) */
	SM_D_KVV, /* KV * v_head_dim (d when unset): v_proj rows of a qkv_v_head_dim family */
	SM_D_COUNT_
} sm_dim;

/* Units a split counts in (the divisibility that must hold). */
typedef enum {
	SM_U_NONE = 0,
	SM_U_HEADS,  /* num_attention_heads */
	SM_U_I,      /* intermediate_size rows */
	SM_U_IE,     /* expert intermediate rows */
	SM_U_ISH,    /* shared expert intermediate rows */
	SM_U_VHEADS, /* vision_config.num_heads */
	SM_U_VI,     /* vision MLP hidden rows */
	SM_U_VM,     /* vision merger hidden rows */
	SM_U_VPI,    /* Llama 4 vision adapter rows (projector_input_dim) */
	SM_U_LKH,    /* Qwen3-Next linear_num_key_heads */
	SM_U_LVH,    /* Qwen3-Next linear_num_value_heads */
	SM_U_HID,    /* hidden_size rows (Mistral 3's projector linear_1) */
	SM_U_MH,     /* Granite 4.0 mamba_n_heads */
	SM_U_MI,     /* Jamba mamba_expand * hidden_size channels */
	SM_U_VPO,    /* Cohere2Vision's projector: alignment_intermediate_size / 2 rows */
	SM_U_ZAR,    /* Zamba2's adapter_rank rows (the adapters' A) */
	SM_U_G3NLP,  /* Gemma 3n's num_hidden_layers x hidden_size_per_layer_input rows */
	SM_U_G3NLR,  /* Gemma 3n's laurel_rank rows / columns */
} sm_unit;

/* When a rule applies. */
typedef enum {
	SM_C_ALL = 0,
	SM_C_DENSE, /* layers with a dense MLP */
	SM_C_MOE,   /* MoE layers */
	SM_C_QLORA, /* DeepSeek q_lora_rank set */
	SM_C_NOQLORA,
	SM_C_SHARED,  /* MoE layers of a model with shared experts (intermediate > 0) */
	SM_C_LMBIAS,  /* config.json lm_head_bias true (PhiMoE's lm_head.bias) */
	SM_C_MX,      /* MoE layers of an MXFP4 checkpoint (GPT-OSS X_blocks + X_scales) */
	SM_C_NOMX,    /* MoE layers of a checkpoint that is not MXFP4 (GPT-OSS saved dequantized) */
	SM_C_FULLATT, /* layers with softmax attention (Qwen3-Next: not linear attention) */
	SM_C_LINATT,  /* Qwen3-Next's linear-attention layers (layer_is_linear) */
	SM_C_QKNORM,  /* config.json use_qk_norm true (GLM-4.5's q_norm / k_norm) */
	SM_C_ATTNBIAS, /* config.json attention_bias true (Seed-OSS's q/k/v biases) */
	SM_C_OUTBIAS,  /* config.json attention_out_bias true (Seed-OSS's o_proj bias) */
	SM_C_MLPBIAS,  /* config.json mlp_bias true (Seed-OSS's gate / up / down biases) */
	SM_C_MMBIAS,   /* multimodal_projector_bias true (Mistral 3's projector biases) */
	SM_C_CONVBIAS, /* LFM2's conv layers (layer_is_linear) when conv_bias is true */
	SM_C_SHMLP,    /* every layer when the shared MLP's size is > 0 (Granite 4.0's
	                  shared_mlp, MoE layer or not) */
	SM_C_FULLATTB, /* softmax-attention layers when attention_bias (Granite 4.0) */
	SM_C_MCONVB,   /* Mamba layers (layer_is_linear) when mamba_conv_bias */
	SM_C_MPROJB,   /* Mamba layers when mamba_proj_bias (in_proj / out_proj biases) */
	SM_C_MNORM,    /* Mamba layers when mamba_rms_norm (Falcon-H1's optional gated norm) */
	SM_C_OPROJ,    /* OPT's project_in / project_out: word_embed_proj_dim != hidden_size */
	SM_C_OFNORM,   /* OPT's model.decoder.final_layer_norm: do_layer_norm_before and not
	                  _remove_final_layer_norm */
	SM_C_FLN2,     /* Falcon's ln_attn / ln_mlp (falcon_ln 2: new_decoder_architecture) */
	SM_C_FLN1,     /* Falcon's input_layernorm (falcon_ln 1 or 3) */
	SM_C_FPOST,    /* Falcon's post_attention_layernorm (falcon_ln 3: parallel_attn false) */
	SM_C_QKLN,     /* config.json qk_layernorm true (Persimmon's q_layernorm / k_layernorm) */
	SM_C_GEMMA2,   /* PaliGemma's gemma2 text_config (pre / post_feedforward_layernorm) */
	/* InternVL's vision_config switches (shardmap_vswitch names them): attention_bias
	 * (q/k/v biases), use_qk_norm (q_norm / k_norm), norm_type layer_norm (the norms'
	 * biases), use_mask_token, use_absolute_position_embeddings, use_mean_pooling false
	 * (the tower's final layernorm) */
	SM_C_VATTNB,
	SM_C_VQKN,
	SM_C_VLN,
	SM_C_VMASK,
	SM_C_VPOS,
	SM_C_VPOOL,
	SM_C_QWEN3, /* a qwen3 or qwen3_moe text_config (InternVL3.5's q_norm / k_norm) */
	/* ModernBERT: layers past the first (layer 0's attn_norm is an Identity), their
	 * attn_norm's bias with norm_bias, the other LayerNorms' biases with norm_bias, the
	 * classifier head's dense bias with classifier_bias */
	SM_C_MBLATER,
	SM_C_MBLATERB,
	SM_C_NORMBIAS,
	SM_C_CLSBIAS,
	/* BLIP-2: vision_config.qkv_bias (each block's qkv.bias) */
	SM_C_VQKVB,
	/* Q-Former layers i with i % cross_attention_frequency == 0 (Granite Speech's projector,
	 * BLIP-2's qformer: their crossattention) */
	SM_C_QFCROSS,
	/* Zamba2 (shardmap_zamba2_cond): the hybrid layers (their mamba_decoder. and linear),
	 * those with add_bias_linear (the mixer's biases), the layers holding a shared block
	 * (the first hybrid layer of each: shared_transformer.), those with add_bias_linear (the
	 * MLP's biases), those with use_shared_attention_adapter (the q / k / v adapters) */
	SM_C_Z2HYB,
	SM_C_Z2HYBB,
	SM_C_Z2BLK,
	SM_C_Z2BLKB,
	SM_C_Z2ATTAD,
	/* Nemotron-H (shardmap_nemotron_h_cond): the attention layers ("*"), the MLP layers
	 * ("-"), those with mlp_bias (the MLP's biases) */
	SM_C_NHATT,
	SM_C_NHMLP,
	SM_C_NHMLPB,
	SM_C_LFMEB,  /* LFM2-MoE's MoE layers when use_expert_bias (feed_forward.expert_bias) */
	SM_C_JWPE,   /* JAIS's transformer.wpe: position_embedding_type learned (not alibi) */
	SM_C_ARES,   /* Arctic's MoE layers when use_residual (residual_mlp, residual_layernorm) */
	SM_C_LATT,   /* layers with attention by the family's layer_dims (DeciLM's block_configs) */
	SM_C_LMLP,   /* layers with an MLP by the family's layer_dims */
	SM_C_LSINK,  /* layers with attention sinks by the family's layer_dims (MiMo-V2-Flash) */
	SM_C_TTYPES, /* type_vocab_size > 0 (GTE's token_type_embeddings: none with 0) */
} sm_cond;

enum {
	SM_F_QUANT = 1u << 0,  /* a linear weight that quantization applies to */
	SM_F_OPT = 1u << 1,    /* may be absent (biases); fused parts all or none */
	SM_F_LMHEAD = 1u << 2, /* dropped when tie_word_embeddings */
	SM_F_VIS = 1u << 3,    /* {i} is a vision block (vision_config.depth), not a layer */
	/* a stack stored [E, K, N] (GptOssExperts' orientation): viewed and loaded as [E, N, K];
	 * a 2-D weight stored [K, N] (GPT-2's Conv1D [in, out]) as [N, K] (one such "expert") */
	SM_F_TRANS = 1u << 4,
	/* {i} is a Qwen3-VL deepstack merger (len(vision_config.deepstack_visual_indexes)), not
	 * a layer */
	SM_F_DEEP = 1u << 5,
	/* a stack stored 2-D [E*a, b] (DBRX's experts.mlp.w1 / v1 / w2): viewed [E, a, b] (then
	 * as SM_F_TRANS says), num_experts from config.json */
	SM_F_STACK2 = 1u << 6,
	/* {i} is a Q-Former layer (Granite Speech's projector_config.num_hidden_layers, BLIP-2's
	 * qformer_config's), not a layer */
	SM_F_QF = 1u << 7
};

typedef struct sm_rule {
	const char *ckpt;    /* checkpoint name pattern with {i} (layer) and {j} (expert) */
	const char *runtime; /* runtime name pattern */
	uint8_t kind;        /* sm_kind */
	uint8_t part;        /* order within the fusion */
	uint8_t unit;        /* sm_unit for ROWS/COLS splits */
	uint8_t cond;        /* sm_cond */
	uint8_t flags;       /* SM_F_* */
	uint8_t ndim;
	uint8_t dims[5]; /* sm_dim; dims past ndim unused */
} sm_rule;

/* One layer's own attention and MLP (sm_family.layer_dims): whether it has them, its kv heads
 * and MLP width; its q heads, head_dim and v head dim (0: the model's), whether it has
 * attention sinks (SM_C_LSINK) and the config.json keys its q / kv head counts come from in
 * errors (NULL: num_attention_heads / num_key_value_heads). */
typedef struct sm_layer_dims {
	bool attn, mlp;
	int64_t kv_heads, inter;
	int64_t heads, head_dim, v_head_dim;
	bool sinks;
	const char *heads_key, *kv_key;
} sm_layer_dims;

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
	 * planner's messages name */
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
} sm_family;

/* The checkpoint prefixes transformers >= 4.52 writes for the LLaVA-style layouts
 * (model.language_model., model.vision_tower., model.multi_modal_projector., lm_head.)
 * and the released ones they map to (family_gemma3.c; Gemma 3, Mistral 3). */
extern const char *const shardmap_llava_aliases[];
/* The Qwen2-VL-style prefixes (model.language_model. -> model., model.visual. -> visual.;
 * family_qwen2vl.c; Qwen2-VL, Qwen2.5-VL, Qwen3-VL, GLM-4.1V / 4.5V). */
extern const char *const shardmap_qwen_vl_aliases[];

/* Why architectures[0] arch, one vLLM serves, is not cut here and what to serve instead
 * (registry.c not_cut); NULL for any other. */
const char *shardmap_not_cut_why(const char *arch);
/* Registry lookup by architectures[0] (then model_type). NULL if unknown. */
const sm_family *shardmap_family_find(const char *arch, const char *model_type);
/* The family of checkpoint c: shardmap_family_find's, its pixtral_tower table when
 * vision_config.model_type is pixtral, or its per_expert table when c holds an
 * "...experts.<digits>." tensor. */
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

bool shardmap_moe_qwen(const ckpt_config *cfg, int64_t i);
/* Glm4MoeDecoderLayer's selection (also GLM-4.5V's and dots.llm1's): MoE from
 * first_k_dense_replace on. */
bool shardmap_moe_glm4(const ckpt_config *cfg, int64_t i);

/* ---------- mapper ---------- */

/* Match name against pattern; {i}/{j} capture decimal indices (-1 if absent); {k} matches
 * one without capturing it (a rule with {k} keeps the checkpoint's name as its runtime name:
 * Chameleon's VQ-VAE). */
bool shardmap_match(const char *pattern, const char *name, int64_t *i, int64_t *j);
/* Expand pattern with i/j into buf. Returns false if it does not fit. */
bool shardmap_expand(const char *pattern, int64_t i, int64_t j, char *buf, size_t cap);
/* True for tensors dropped by every family (rotary caches). */
bool shardmap_generic_drop(const char *name);
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
