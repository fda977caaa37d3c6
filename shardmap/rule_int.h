/*
 * rule_int.h — private to shardmap/: the words a family table's rows are written in (split
 * from shardmap_int.h, which includes it): the partition kinds, the symbolic dimensions
 * checked against config.json, the units a split counts in, the conditions a rule applies
 * under, the rule flags, the row itself (sm_rule) and one layer's own dimensions
 * (sm_layer_dims, for a family's layer_dims hook).
 */
#ifndef WT_SHARDMAP_RULE_INT_H
#define WT_SHARDMAP_RULE_INT_H

#include <stdbool.h>
#include <stdint.h>

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
	SM_K_SINKKV, /* static sink keys / values [S, KV, d] split on dim 1 by kv heads
	                (openPangu's param_sink_key / _value: sharded_weight_loader(1)) */
	SM_K_ROWS2H, /* two parts interleaved per unit in the checkpoint ([U, 2, n] rows: PLaMo 2's
	                mixer.in_proj, [gate_h; x_h] per mamba head): [gate_r; x_r], the rank's
	                units' pieces gathered part by part (vLLM's plamo2.py load_weights
	                de-interleaves before MergedColumnParallelLinear's split) */
	SM_K_QKVFW,  /* SM_K_QKVF when tp_size divides the unit count, else whole on every rank
	                (InternViT's qkv: vLLM's InternParallelAttention, else InternSdpaAttention's
	                plain nn.Linear) */
	SM_K_COLSW,  /* SM_K_COLS when tp_size divides the unit count, else whole (InternViT's
	                attn.proj, the same choice) */
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
	SM_D_KV2,   /* 2 * KV * d: TeleChat2's key_value rows ([KV, 2, d]) */
	SM_D_KVV,   /* KV * v_head_dim (d when unset): v_proj rows of a qkv_v_head_dim family */
	SM_D_VHD,   /* v_head_dim (d when unset): openPangu's param_sink_value columns */
	SM_D_SINKS, /* param_sink_number: openPangu's param_sink_key / _value rows */
	SM_D_HID2,  /* 2 * hidden_size: an EAGLE-3 draft's layer-0 q/k/v columns [embeds; hidden] */
	SM_D_EFC,   /* 3 * target_hidden_size (hidden_size when absent): EAGLE-3's fc columns */
	SM_D_DV,    /* draft_vocab_size (vocab_size when absent): EAGLE-3's lm_head rows */
	/* Kimi-VL's MoonViT: init_pos_emb_height / _width (patch_embed.pos_emb [h, w, VE]) */
	SM_D_VPH,
	SM_D_VPW,
	/* Ovis's visual tokenizer: visual_tokenizer_config.vocab_size (the vte's rows) and that
	 * less the 5 image indicator tokens (the head's rows) */
	SM_D_OVV,
	SM_D_OVH,
	/* Ovis2.5's: visual_vocab_size less the 4 indicator tokens (the head's rows) */
	SM_D_OV4,
	/* InternViT's attention width with its dummy heads, (H + n) x d (VE without: NVLM-D's
	 * q_norm / k_norm, attn.proj columns), and three times it (attn.qkv rows) */
	SM_D_VA,
	SM_D_V3A,
	SM_D_HID4, /* 4 * hidden_size: Bee's projector linear_1 rows, linear_2 columns */
	/* ERNIE-4.5-VL: the vision experts' width moe_intermediate_size[1] (mlp.vision_experts),
	 * and twice the merged width (the resampler's temporal_linear.0 columns: two time steps) */
	SM_D_IEV,
	SM_D_VM2,
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
	SM_U_IEV,    /* ERNIE-4.5-VL's vision expert rows (moe_intermediate_size[1]) */
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
	SM_C_SANDWICH, /* config.json sandwich_norm true (openPangu's pre / post_mlp_layernorm) */
	SM_C_RBIAS,    /* MoE layers when router_enable_expert_bias (openPangu's
	                  mlp.e_score_correction_bias) */
	SM_C_VHEAD,    /* vision_config.vision_use_head not false (a SigLIP tower's pooling head,
	                  LLaVA's: v_use_head) */
	SM_C_EAGLEFC,  /* an EAGLE-3 draft's eagle_config.use_aux_hidden_state (default true: fc) */
	SM_C_IVQKVB,   /* InternViT's vision_config.qkv_bias true (v_attn_bias; default false) */
	SM_C_IVQKN,    /* InternViT's vision_config.qk_normalization true (v_qk_norm; default
	                  true) */
	SM_C_IVLN,     /* InternViT's vision_config.norm_type layer_norm (v_norm_ln; default
	                  rms_norm) */
	/* A Medusa draft's switches: medusa_fc_bias (the blocks' biases), original_lm_head (one
	 * lm_head shared by the heads), not original_lm_head (lm_heads.{j}), truncated_vocab_size
	 * below vocab_size (token_map); MDBLK always holds (the blocks: named num_heads and
	 * num_hidden_layers when one is missing) */
	SM_C_MDFCB,
	SM_C_MDBLK,
	SM_C_MDORIG,
	SM_C_MDHEADS,
	SM_C_MDTMAP,
	/* An MLPSpeculator's stages {i} that hold their own emb / head / ln (MSTIE0: stage 0, or
	 * every stage when tie_weights is false) and proj (MSTIE1: stages 0 and 1, or every one) */
	SM_C_MSTIE0,
	SM_C_MSTIE1,
	/* Ovis's AIMv2 backbone: backbone_config.qkv_bias (attn.qkv.bias), use_bias (attn.proj /
	 * mlp.fc1 / fc2 / fc3 biases); its SigLIP backbone's vision_use_head not false (v_use_head:
	 * the pooling head) */
	SM_C_OVQKVB,
	SM_C_OVBIAS,
	SM_C_OVHEAD,
	/* Ultravox's projector: projector_ln_mid true (ln_mid after the activation) or false or
	 * absent (ln_post after linear_2; uv_ln_mid) */
	SM_C_UVLNMID,
	SM_C_UVLNPOST,
	/* dots.ocr's tower: vision_config.use_bias (attn.qkv / attn.proj / mlp.fc1 / fc2 / fc3
	 * biases: v_attn_bias), vision_config.post_norm (post_trunk_norm: dt_post_norm) */
	SM_C_DTBIAS,
	SM_C_DTPOST,
	/* Ovis2.5's SigLIP2-NaViT: vit_config.preserve_original_pe (the position table) */
	SM_C_O25PE,
	/* BAGEL's vit_config.vision_use_head true (v_use_head; bagel.py sets it false when absent):
	 * SiglipVisionModel's pooling head */
	SM_C_BGHEAD,
	/* HyperCLOVAX-SEED-Vision's C-Abstractor: proj_pos_emb true or absent
	 * (mm_projector.pos_emb: hcx_pos_emb), proj_prenorm true (mm_projector.prenorm:
	 * hcx_prenorm) */
	SM_C_HCXPOS,
	SM_C_HCXPRE,
	/* ERNIE-4.5-VL's use_temporal_conv (the resampler's temporal_linear.*: ev_temporal_conv) */
	SM_C_EVTEMP,
	/* HyperCLOVAX-SEED-Think's text_config.use_post_norm (each layer's post_norm1 /
	 * post_norm2: hcx_post_norm) */
	SM_C_HCXPOST,
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

#endif
