/*
 * test_fixtures_expect.h — what each wt-mkckpt family must hold (test_fixtures.c): its
 * tensor count, bytes (hand-computed from the dims in the README's fixture table), config
 * dims, quantization and file count. In `wt-mkckpt --family list` order (from idefics3 on:
 * test_fixtures_expect_mm.h; fam_at(i) reads both). Included once.
 */
#ifndef WT_TEST_FIXTURES_EXPECT_H
#define WT_TEST_FIXTURES_EXPECT_H

#include <stddef.h>
#include <stdint.h>

#include "loader/loader.h"

typedef struct fam_expect {
	const char *name;
	size_t n_tensors;
	uint64_t total_bytes;
	int64_t hidden, heads, kv_heads, head_dim, inter, vocab, layers;
	int tied;
	int64_t experts, moe_inter;
	ckpt_quant_kind quant;
	size_t n_objects; /* safetensors files */
} fam_expect;

/* BF16 = 2 bytes. */
#define LLAMA_LAYER (2 * (256 * 256 * 2 + 2 * 64 * 256 + 3 * 512 * 256 + 2 * 256))
#define LLAMA_BYTES (2 * (2 * 1000 * 256 + 256) + 2 * LLAMA_LAYER)
/* seed_oss: norms, q 512x256 + k, v 128x256 with biases, o 256x512 + bias [256], gate / up
 * 512x256 + biases, down 256x512 + bias */
#define SEED_LAYER                                                                                 \
	(2 * (2 * 256 + 512 * 256 + 2 * 128 * 256 + 256 * 512 + 3 * 512 * 256 + 768 + 256 +        \
	      2 * 512 + 256))
/* hunyuan_v1_dense: norms, q 512x256 + k, v 128x256 with biases, o 256x512 + bias [256], query /
 * key layernorms [64], gate / up 512x256, down 256x512 */
#define HY_LAYER                                                                                   \
	(2 * (2 * 256 + 512 * 256 + 2 * 128 * 256 + 256 * 512 + 768 + 256 + 2 * 64 + 3 * 512 * 256))
#define HYM_LAYER                                                                                  \
	(2 * (2 * 256 + 2 * 256 * 256 + 2 * 64 * 256 + 2 * 32 + 8 * 256 + 9 * 3 * 128 * 256))
/* jamba: every layer 2 norms; Mamba layers 0 / 1 / 3 in_proj 512x128, conv1d [256, 1, 4] +
 * bias, x_proj 40x256, dt_proj 256x8 + bias, A_log 256x16, D [256], out_proj 128x256, norms
 * [8], [16], [16]; attention layer 2 q / o 128x128, k / v 64x128; dense layers 0 / 2 gate /
 * up / down 64x128; MoE layers 1 / 3 router [4, 128] and 4 experts of 64; untied */
#define JB_MAMBA                                                                                   \
	(2 *                                                                                       \
	 (512 * 128 + 256 * 4 + 256 + 40 * 256 + 256 * 8 + 256 + 256 * 16 + 256 + 128 * 256 + 40))
#define JB_BYTES                                                                                   \
	(2 * (2 * 1000 * 128 + 128) + 4 * 2 * 2 * 128 + 3 * JB_MAMBA +                             \
	 2 * (2 * 128 * 128 + 2 * 64 * 128) + 2 * 2 * 3 * 64 * 128 +                               \
	 2 * 2 * (4 * 128 + 4 * 3 * 64 * 128))
/* llama_fp8: 7 linears/layer become 1 byte/element + two 4-byte scalars each */
#define FP8_LAYER (256 * 256 * 2 + 2 * 64 * 256 + 3 * 512 * 256 + 7 * 8 + 2 * 256 * 2)
/* compressed-tensors twins: the 7 linears' 557056 elements as I8 (W8A8) or 4 bits (W4A16),
 * BF16 scales per row (1920 rows) or per 128-group (4352), BF16 input scales / I64 shapes */
#define CT_LINEAR  (256 * 256 * 2 + 2 * 64 * 256 + 3 * 512 * 256)
#define W8_LAYER   (CT_LINEAR + 1920 * 2 + 7 * 2 + 2 * 256 * 2)
#define W4_LAYER   (CT_LINEAR / 2 + 4352 * 2 + 7 * 16 + 2 * 256 * 2)
#define W4A8_LAYER (CT_LINEAR + 4352 * 2 + 2 * 256 * 2) /* int4 codes one per I8 byte */
/* asymmetric W4A16: + I32 zero points, 8 rows per word per 128-group: 2176 bytes */
#define W4ASYM_LAYER (W4_LAYER + 4 * (32 * 2 + 8 * 2 + 8 * 2 + 32 * 2 + 64 * 2 + 64 * 2 + 32 * 4))
/* asymmetric W8A8: + I8 zero points, one per row (1920); W8A16 pack-quantized: 4 codes per
 * I32 (CT_LINEAR bytes), BF16 scales per row, I64 shapes; W4A16 actorder: + I32 g_idx per
 * input column (six linears of K 256, down_proj of K 512) */
#define W8ASYM_LAYER (W8_LAYER + 1920)
#define W8P_LAYER    (CT_LINEAR + 1920 * 2 + 7 * 16 + 2 * 256 * 2)
#define W4ACT_LAYER  (W4_LAYER + 4 * (6 * 256 + 512))
/* compressed-tensors FP8_DYNAMIC: F8_E4M3 codes, BF16 scales per row, no input scales */
#define CTF8_LAYER (CT_LINEAR + 1920 * 2 + 2 * 256 * 2)
/* ... per tensor, static activations: a BF16 weight_scale [1] and input_scale [1] per linear */
#define CTF8T_LAYER (CT_LINEAR + 7 * 2 * 2 + 2 * 256 * 2)
#define QWEN2_LAYER (LLAMA_LAYER + 2 * (256 + 2 * 64))
#define QWEN3_LAYER (2 * (2 * 512 * 256 + 2 * 256 * 256 + 3 * 512 * 256 + 2 * 256 + 2 * 64))
/* qwen3_ct_fp8_block: the linears in FP8, BF16 scales per 128 x 128 block (8+4+4+8+8+8+8) */
#define QWEN3_CTB_LAYER                                                                            \
	(2 * 512 * 256 + 2 * 256 * 256 + 3 * 512 * 256 + 48 * 2 + 2 * (2 * 256 + 2 * 64))
#define MIXTRAL_LAYER (2 * (256 * 256 * 2 + 2 * 64 * 256 + 2 * 256 + 6 * 256 + 6 * 3 * 256 * 256))
#define QMOE_ATTN     (2 * (4 * 256 * 256 + 3 * 256 + 2 * 256))
#define QMOE_MOE      (2 * (4 * 256 + 4 * 3 * 128 * 256 + 3 * 256 * 256 + 256))
/* deepseek: MLA linears q_a 128x256, q_b 512x128, kv_a 96x256, kv_b 512x64, o 256x256 in FP8
 * with 128-block scales (2+4+2+4+4 = 16 floats); norms 256+128+64+256 BF16 */
#define DS_ATTN  (128 * 256 + 512 * 128 + 96 * 256 + 512 * 64 + 256 * 256 + 16 * 4 + 2 * 704)
#define DS_DENSE (3 * 512 * 256 + 3 * 8 * 4)
#define DS_MOE   (2 * 4 * 256 + 4 * 4 + 5 * (3 * 256 * 256 + 3 * 4 * 4))
#define DS_MTP   (2 * 2 * 1024 * 256 + 3 * 2 * 256 + 256 * 512 + 8 * 4)
/* deepseek_v2 (V2-Lite shape): q_proj 512x256 without LoRA, kv_a 96x256, kv_b 512x64, o
 * 256x256, norms 2*256+64; layer 0 dense; layer 1: router, 4 experts of 128, 2 shared */
#define DSV2_ATTN (2 * 256 + 512 * 256 + 96 * 256 + 64 + 512 * 64 + 256 * 256)
#define DSV2_BYTES                                                                                 \
	(2 * (2 * 1000 * 256 + 256) +                                                              \
	 2 * (2 * DSV2_ATTN + 3 * 512 * 256 + 4 * 256 + 4 * 3 * 128 * 256 + 3 * 256 * 256))
#define DS_BYTES                                                                                   \
	(2 * (2 * 1024 * 256 + 256) + 16 * 4 + DS_ATTN + DS_DENSE + 2 * (DS_ATTN + DS_MOE) + DS_MTP)
/* qwen2_vl: qwen2 LM untied + vision blocks (embed 128, mlp 512) and merger (512) */
#define QVL_LM    (2 * (2 * 1024 * 256 + 256) + 2 * QWEN2_LAYER)
#define QVL_BLOCK (2 * (4 * 128 + 384 * 128 + 384 + 128 * 128 + 128 + 2 * 512 * 128 + 512 + 128))
#define QVL_TOP   (2 * (128 * 3 * 2 * 14 * 14 + 2 * 128 + 512 * 512 + 512 + 256 * 512 + 256))
#define QVL_BYTES (QVL_LM + 2 * QVL_BLOCK + QVL_TOP)
/* qwen2_5_vl: the same LM + 4 RMSNorm blocks (width 128, gated MLP 384 with
 * biases) and the merger (ln_q without bias) */
#define QVL25_BLOCK                                                                                \
	(2 * (2 * 128 + 384 * 128 + 384 + 128 * 128 + 128 + 3 * 384 * 128 + 2 * 384 + 128))
#define QVL25_TOP   (2 * (128 * 3 * 2 * 14 * 14 + 128 + 512 * 512 + 512 + 256 * 512 + 256))
#define QVL25_BYTES (QVL_LM + 4 * QVL25_BLOCK + QVL25_TOP)
/* qwen3_vl: a qwen3 LM (head_dim 48: q 384 rows, k/v 96, q/k norms [48]) untied; vision:
 * Conv3d patch embed [64, 3, 2, 4, 4] + bias, pos_embed [16, 64], 3 LayerNorm blocks
 * (width 64: qkv 192 rows, proj, linear_fc1 192 / linear_fc2 with biases), the merger (norm
 * [64]) and 2 deepstack mergers (norm [256]), each fc1 256x256 + fc2 256x256 with biases */
#define Q3V_ATTN  (2 * (2 * 256 + 2 * 384 * 256 + 2 * 96 * 256 + 2 * 48))
#define Q3V_LM    (2 * (2 * 1024 * 256 + 256))
#define Q3V_BLOCK (2 * (4 * 64 + 192 * 64 + 192 + 64 * 64 + 64 + 2 * 192 * 64 + 192 + 64))
#define Q3V_MERGE (2 * (2 * 256 * 256 + 2 * 256))
#define Q3V_VIS                                                                                    \
	(2 * (64 * 3 * 2 * 4 * 4 + 64 + 16 * 64) + 3 * Q3V_BLOCK + Q3V_MERGE + 2 * 2 * 64 +        \
	 2 * (Q3V_MERGE + 2 * 2 * 256))
#define Q3V_BYTES (Q3V_LM + 2 * (Q3V_ATTN + 2 * 3 * 512 * 256) + Q3V_VIS)
/* qwen3_vl_moe: L 3, layers 0 and 2 a router 8x256 and the bmm stacks gate_up [8, 256, 128] /
 * down [8, 64, 256], layer 1 a dense MLP of 384 */
#define Q3VM_BYTES                                                                                 \
	(Q3V_LM + 3 * Q3V_ATTN + 2 * 2 * (8 * 256 + 8 * 256 * 128 + 8 * 64 * 256) +                \
	 2 * 3 * 384 * 256 + Q3V_VIS)
/* gemma families: tied (one embedding), head_dim given (H x d != hidden for gemma) */
#define GEMMA_LAYER  (2 * (2 * 256 + 512 * 256 + 2 * 128 * 256 + 256 * 512 + 3 * 512 * 256))
#define GEMMA2_LAYER (2 * (4 * 256 + 512 * 256 + 2 * 256 * 256 + 256 * 512 + 3 * 512 * 256))
#define GEMMA3_LAYER (2 * (4 * 256 + 2 * 64 + 256 * 256 + 2 * 64 * 256 + 256 * 256 + 3 * 384 * 256))
/* gemma3: gemma3_text's LM + SigLIP blocks (width 128: LayerNorms, q/k/v/out with biases,
 * fc1 256x128 / fc2 128x256 with biases), patch embed [128, 3, 14, 14] + bias, 16
 * positions, post_layernorm, projector [128, 256] + norm [128] */
#define G3_BLOCK (2 * (4 * 128 + 4 * (128 * 128 + 128) + 256 * 128 + 256 + 128 * 256 + 128))
#define G3_TOP   (2 * (128 * 3 * 14 * 14 + 128 + 16 * 128 + 2 * 128 + 128 * 256 + 128))
#define G3_BYTES (2 * (1000 * 256 + 256) + 2 * GEMMA3_LAYER + 2 * G3_BLOCK + G3_TOP)
/* mistral3: Mistral's LM (head_dim 48: q 192 rows, k / v 96; untied) + Pixtral blocks (width
 * 128: RMSNorms, q/k/v/o without biases, gate / up 256x128, down 128x256), patch_conv
 * [128, 3, 14, 14], ln_pre, projector norm [128], merging_layer [128, 512], linear_1
 * [256, 128], linear_2 [256, 256]; mistral3_hf5 adds their two biases [256] */
#define M3_LAYER (2 * (2 * 256 + 192 * 256 + 2 * 96 * 256 + 256 * 192 + 3 * 384 * 256))
#define M3_BLOCK (2 * (2 * 128 + 4 * 128 * 128 + 3 * 256 * 128))
#define M3_TOP   (2 * (128 * 3 * 14 * 14 + 128 + 128 + 128 * 512 + 256 * 128 + 256 * 256))
#define M3_BYTES (2 * (2 * 1000 * 256 + 256) + 2 * M3_LAYER + 2 * M3_BLOCK + M3_TOP)
/* glm4v: GLM-4-0414's layer at hid 128 (H 4 KV 2 d 32: q 128 + k, v 64 rows with biases,
 * o 128x128, gate_up 384x128 fused, down 128x192, four norms) + the GLM-4.1V tower (width
 * 64: RMSNorms, qkv 192x64 and proj without biases, gate / up 128x64, down 64x128; patch
 * embed [64, 3, 2, 4, 4] + bias, post_conv / post norms, 16 positions, downsample
 * [128, 64, 2, 2] + bias, merger proj 128x128, LayerNorm [128], gate / up 256x128, down
 * 128x256) */
#define G4V_LM    (2 * (2 * 1000 * 128 + 128))
#define G4V_ATTN  (2 * (2 * 128 + 128 * 128 + 2 * 64 * 128 + 256 + 128 * 128))
#define G4V_LAYER (G4V_ATTN + 2 * (2 * 128 + 384 * 128 + 128 * 192))
#define G4V_BLOCK (2 * (2 * 64 + 192 * 64 + 64 * 64 + 2 * 128 * 64 + 64 * 128))
#define G4V_VIS                                                                                    \
	(2 * (64 * 3 * 2 * 4 * 4 + 3 * 64 + 16 * 64 + 128 * 64 * 2 * 2 + 128 + 128 * 128 +         \
	      2 * 128 + 2 * 256 * 128 + 128 * 256) +                                               \
	 2 * G4V_BLOCK)
#define G4V_BYTES (G4V_LM + 2 * G4V_LAYER + G4V_VIS)
/* glm4v_moe: layer 0 dense (gate / up / down 192), layers 1-2 and the MTP layer 3 a router
 * 8x128 + correction bias (F32), 8 experts and 1 shared expert of 64; the MTP layer's
 * embed_tokens / shared_head.head [1000, 128], enorm / hnorm / shared_head.norm, eh_proj
 * [128, 256] */
#define G4VM_MOE (2 * (8 * 128 + 9 * 3 * 64 * 128) + 4 * 8)
#define G4VM_BYTES                                                                                 \
	(G4V_LM + 4 * G4V_ATTN + 2 * 3 * 192 * 128 + 3 * G4VM_MOE +                                \
	 2 * (2 * 1000 * 128 + 3 * 128 + 128 * 256) + G4V_VIS)
/* lfm2: embed + embedding_norm (tied); every layer its two norms and the SwiGLU 512 x 256;
 * three conv layers (in_proj 768 x 256, conv 256 x 1 x 3, out_proj 256 x 256), one
 * attention layer (q, o 256 x 256; k, v 128 x 256; q/k layernorms [32]) */
#define LFM2_BYTES                                                                                 \
	(2 * (1000 * 256 + 256) + 4 * 2 * (2 * 256 + 3 * 512 * 256) +                              \
	 3 * 2 * (768 * 256 + 256 * 3 + 256 * 256) + 2 * (2 * 256 * 256 + 2 * 128 * 256 + 2 * 32))
/* granitemoehybrid: every layer 2 norms, router [4, 128], input_linear [4, 128, 128],
 * output_linear [4, 128, 64], shared_mlp 192x128 / 128x96; Mamba layers in_proj 552x128,
 * conv1d [288, 1, 4] + bias, A_log / D / dt_bias [8], norm [256], out_proj 128x256; the
 * attention layer q / o 128x128, k / v 64x128; tied */
#define G4_LAYER (2 * (2 * 128 + 4 * 128 + 4 * 128 * 128 + 4 * 128 * 64 + 192 * 128 + 128 * 96))
#define G4_MAMBA (2 * (552 * 128 + 288 * 4 + 288 + 3 * 8 + 256 + 128 * 256))
#define G4_ATTN  (2 * (2 * 128 * 128 + 2 * 64 * 128))
#define G4_BYTES (2 * (1000 * 128 + 128) + 4 * G4_LAYER + 3 * G4_MAMBA + G4_ATTN)
/* granitemoehybrid_dense: untied; every layer 2 norms and the shared MLP 384x128 / 128x192;
 * the Mamba layers in_proj 584x128 + bias, conv1d [320, 1, 3] + bias, [8] x 3, norm [256],
 * out_proj 128x256 + bias; the attention layer q / o 128x128, k / v 32x128, their biases */
#define G4D_LAYER (2 * (2 * 128 + 384 * 128 + 128 * 192))
#define G4D_MAMBA (2 * (584 * 128 + 584 + 320 * 3 + 320 + 3 * 8 + 256 + 128 * 256 + 128))
#define G4D_ATTN  (2 * (2 * 128 * 128 + 2 * 32 * 128 + 2 * 128 + 2 * 32))
#define G4D_BYTES (2 * (2 * 1000 * 128 + 128) + 3 * G4D_LAYER + 2 * G4D_MAMBA + G4D_ATTN)
/* bamba: untied; every layer input_layernorm / pre_ff_layernorm and the feed_forward
 * 192x128 (x2) / 128x192; layers 0 and 2 granitemoehybrid's Mamba mixer; the attention layer
 * q / o 128x128, k / v 32x128 */
#define BA_LAYER (2 * (2 * 128 + 3 * 192 * 128))
#define BA_BYTES                                                                                   \
	(2 * (2 * 1000 * 128 + 128) + 3 * BA_LAYER + 2 * G4_MAMBA +                                \
	 2 * (2 * 128 * 128 + 2 * 32 * 128))
/* minimax: every layer 2 norms, router [4, 256], 4 experts w1 / w3 128x256, w2 256x128;
 * three lightning layers (qkv_proj 768x256, output_gate / out_proj 256x256, norm [256]), one
 * softmax-attention layer (q / o 256x256, k / v 128x256); untied */
#define MM_LAYER (2 * (2 * 256 + 4 * 256 + 4 * 3 * 128 * 256))
#define MM_LIN   (2 * (5 * 256 * 256 + 256))
#define MM_ATTN  (2 * (2 * 256 * 256 + 2 * 128 * 256))
#define MM_BYTES (2 * (2 * 1000 * 256 + 256) + 4 * MM_LAYER + 3 * MM_LIN + MM_ATTN)
/* phi3: qkv_proj (8 + 2 * 2) * 32 rows and gate_up_proj 2 * 512 rows fused in the checkpoint */
#define PHI3_LAYER (2 * (2 * 256 + 384 * 256 + 256 * 256 + 1024 * 256 + 256 * 512))
/* starcoder2: LayerNorm and linear biases, c_fc 1024x256 / c_proj 256x1024, tied */
#define SC2_LAYER                                                                                  \
	(2 * (4 * 256 + 256 * 256 + 2 * 64 * 256 + 256 * 256 + 256 + 256 + 2 * 64 + 1024 * 256 +   \
	      1024 + 256 * 1024 + 256))
/* glm: q 512 + k, v 128 rows (biases), o 256x512, gate_up 768x256 fused, down 256x384 */
#define GLM_LAYER                                                                                  \
	(2 * (2 * 256 + 512 * 256 + 2 * 128 * 256 + 256 * 512 + 768 + 768 * 256 + 256 * 384))
/* olmo2: no input_layernorm; q_norm [256], k_norm [64]; two norms after the blocks */
#define OLMO2_LAYER (2 * (2 * 256 * 256 + 2 * 64 * 256 + 256 + 64 + 2 * 256 + 3 * 512 * 256))
/* olmo: no norm tensor anywhere (parameter-free LayerNorms), q/k/v/o, MLP; tied */
#define OLMO_LAYER (2 * (2 * 256 * 256 + 2 * 64 * 256 + 3 * 512 * 256))
/* granitemoe: experts stacked, input_linear 6x256x256 and output_linear 6x256x128, router
 * 6x256; granitemoeshared: 4 experts + shared_mlp input_linear 512x256, output_linear
 * 256x256 */
#define GM_ATTN   (256 * 256 * 2 + 2 * 64 * 256 + 2 * 256)
#define GM_LAYER  (2 * (GM_ATTN + 6 * 256 + 6 * 256 * 256 + 6 * 256 * 128))
#define GMS_LAYER (2 * (GM_ATTN + 4 * 256 + 4 * 256 * 256 + 4 * 256 * 128 + 3 * 256 * 256))
/* olmoe: Llama's norms and attention, q_norm [256] / k_norm [64], router 8x256, 8 experts of
 * gate/up 128x256 and down 256x128 */
#define OLMOE_LAYER                                                                                \
	(2 * (2 * 256 + 256 * 256 * 2 + 2 * 64 * 256 + 256 + 64 + 8 * 256 + 8 * 3 * 128 * 256))
/* phimoe: LayerNorm weights and biases, q/k/v/o with biases, router 4x256, 4 experts of
 * w1/w3 128x256 and w2 256x128; globally + model.norm.bias and lm_head.bias [1003] */
#define PHIMOE_LAYER                                                                               \
	(2 * (4 * 256 + 2 * 256 * 256 + 2 * 64 * 256 + 2 * 256 + 2 * 64 + 4 * 256 +                \
	      4 * 3 * 128 * 256))
/* gpt_oss: norms, q/k/v/o with biases, sinks [8], router 4x256 + bias [4]; MXFP4 experts:
 * gate_up blocks 4x256x8x16 U8 + scales 4x256x8, down blocks 4x256x4x16 + scales 4x256x4,
 * BF16 biases 4x256 each */
#define GO_LAYER                                                                                   \
	(2 * 2 * 256 + 2 * (2 * 256 * 256 + 2 * 64 * 256) + 2 * (384 + 256 + 8 + 4 * 256 + 4) +    \
	 4 * 256 * 8 * 17 + 4 * 256 * 4 * 17 + 2 * 2 * 4 * 256)
/* llama4 / llama4_text: layer 0 dense (feed_forward gate/up/down 384x256), layer 1 MoE
 * (router 4x256, experts gate_up_proj 4x256x128 and down_proj 4x64x256, shared expert
 * 3 x 64x256); llama4 adds the vision tower (patch 64x588, class 64, positions 17x64, 4
 * norms; 2 blocks of 4 norms, q/k/v/o 64x64 + biases, fc1 256x64 + bias, fc2 64x256 +
 * bias), the adapter (128x256, 128x128) and the projector (256x128) */
#define L4_ATTN (2 * 256 + 256 * 256 * 2 + 2 * 64 * 256)
#define L4_TEXT                                                                                    \
	(2 * ((2 * 1000 * 256 + 256) + 2 * L4_ATTN + 3 * 384 * 256 + 4 * 256 + 4 * 256 * 128 +     \
	      4 * 64 * 256 + 3 * 64 * 256))
#define L4_VIS_B (4 * 64 + 4 * (64 * 64 + 64) + 256 * 64 + 256 + 64 * 256 + 64)
#define L4_BYTES                                                                                   \
	(L4_TEXT + 2 * (64 * 588 + 64 + 17 * 64 + 4 * 64 + 2 * L4_VIS_B + 128 * 256 + 128 * 128 +  \
	                256 * 128))
/* qwen3_next: layers 0, 2 linear attention (in_proj_qkvz 768x256, in_proj_ba 16x256,
 * conv1d 512x1x4, A_log [8] F32, dt_bias [8], norm [32], out_proj 256x256), layers 1, 3 full
 * attention (q_proj 512x256 with the gates, k/v 128x256, o 256x256, q/k norms [64]); layer
 * 0 dense (3 x 384x256), layers 1-3 MoE (router 4x256, 4 experts of 3 x 64x256, shared
 * expert 3 x 128x256, shared_expert_gate 1x256); mtp.fc 256x512 and 4 mtp norms */
#define Q3N_FULL (2 * (512 * 256 + 2 * 128 * 256 + 256 * 256 + 2 * 64))
#define Q3N_LIN  (2 * (768 * 256 + 16 * 256 + 512 * 4 + 8 + 32 + 256 * 256) + 4 * 8)
#define Q3N_MOE  (2 * (4 * 256 + 4 * 3 * 64 * 256 + 3 * 128 * 256 + 256))
/* cohere / cohere2: one input_layernorm (the parallel block), q 256 + k, v 64 rows, o, gate /
 * up / down 512; cohere adds q_norm [8, 32] and k_norm [2, 32] per layer */
#define COHERE_LAYER (2 * (256 + 256 * 256 + 2 * 64 * 256 + 256 * 256 + 3 * 512 * 256))
#define Q3N_BYTES                                                                                  \
	(2 * (2 * 1000 * 256 + 256) + 4 * 2 * 2 * 256 + 2 * Q3N_FULL + 2 * Q3N_LIN +               \
	 2 * 3 * 384 * 256 + 3 * Q3N_MOE + 2 * (256 * 512 + 4 * 256))
/* glm4_moe: 4 layers (the MTP layer 3 included) of norms, q 256x128, k/v 64x128, o
 * 128x256, q/k/v biases, q/k norms [32]; layer 0 dense (3 x 256x128); layers 1-3 MoE
 * (router 8x128, F32 correction bias [8], 8 experts and 1 shared expert of 3 x 64x128);
 * the MTP layer's embed_tokens / shared_head.head 1000x128, 3 norms, eh_proj 128x256 */
#define GLM_ATTN (2 * (2 * 128 + 256 * 128 + 2 * 64 * 128 + 128 * 256 + 384 + 64))
#define GLM_MOE  (2 * (8 * 128 + 9 * 3 * 64 * 128) + 8 * 4)
#define GLM_MTP  (2 * (2 * 1000 * 128 + 3 * 128 + 128 * 256))
#define GLM_BYTES                                                                                  \
	(2 * (2 * 1000 * 128 + 128) + 4 * GLM_ATTN + 2 * 3 * 256 * 128 + 3 * GLM_MOE + GLM_MTP)
/* dots1: 3 layers of norms, q 256x256, k/v 128x256, o 256x256, q/k norms [32]; layer 0
 * dense (3 x 512x256); layers 1-2 MoE (router 8x256, F32 correction bias [8], 8 experts of
 * 3 x 64x256, 2 shared experts of 3 x 128x256) */
#define D1_ATTN  (2 * (2 * 256 + 256 * 256 + 2 * 128 * 256 + 256 * 256 + 2 * 32))
#define D1_MOE   (2 * (8 * 256 + 8 * 3 * 64 * 256 + 3 * 128 * 256) + 8 * 4)
#define D1_BYTES (2 * (2 * 1000 * 256 + 256) + 3 * D1_ATTN + 2 * 3 * 512 * 256 + 2 * D1_MOE)
/* llama4_fbgemm: llama4 with layer 0's q/k/v/o and dense MLP and layer 1's expert stacks
 * F8_E4M3 (one byte an element, not two) + one F32 scale per output channel: q 256, k 64,
 * v 64, o 256, gate 384, up 384, down 256, gate_up 4 x 128, down 4 x 256 */
#define L4_FP8_EL   (2 * 256 * 256 + 2 * 64 * 256 + 3 * 384 * 256 + 4 * 256 * 128 + 4 * 64 * 256)
#define L4_FB_BYTES (L4_BYTES - L4_FP8_EL + 4 * (640 + 1024 + 4 * 128 + 4 * 256))
/* ernie4_5: tied (no lm_head); per layer norms, q 256x128, k/v 64x128, o 128x256 and
 * use_bias's q/k/v (384), o (128), gate/up (2 x 256) and down (128) biases, MLP 3 x 256x128 */
#define ERN_LAYER                                                                                  \
	(2 *                                                                                       \
	 (2 * 128 + 256 * 128 + 2 * 64 * 128 + 128 * 256 + 384 + 128 + 3 * 256 * 128 + 512 + 128))
#define ERN_BYTES (2 * (1000 * 128 + 128) + 2 * ERN_LAYER)
/* ernie4_5_moe: 4 layers of norms, q 128x128, k/v 64x128, o 128x128; layers 0 and 3 dense
 * (3 x 256x128); layers 1-2 MoE: F32 router 8x128 and correction bias [1, 8], 8 experts of
 * 3 x 64x128, 2 shared (3 x 128x128); the MTP module's 3 norms, linear_proj 128x256 and
 * q_proj 128x128 */
#define ERNM_ATTN (2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128))
#define ERNM_MOE  (2 * (8 * 3 * 64 * 128 + 3 * 128 * 128) + 4 * (8 * 128 + 8))
#define ERNM_MTP  (2 * (3 * 128 + 128 * 256 + 128 * 128))
#define ERNM_BYTES                                                                                 \
	(2 * (2 * 1000 * 128 + 128) + 4 * ERNM_ATTN + 2 * 2 * 3 * 256 * 128 + 2 * ERNM_MOE +       \
	 ERNM_MTP)
#define BERT_LAYER (4 * (4 * 128 * 128 + 2 * 512 * 128 + 5 * 128 + 512 + 4 * 128))
#define BERT_BYTES (4 * ((1000 + 64 + 2) * 128 + 2 * 128 + 128 * 128 + 128) + 2 * BERT_LAYER)
/* roberta / xlm_roberta: BERT's tensors (pooler too), 66 positions, 1 token type; xlm_roberta
 * with I 256 */
#define XLMR_LAYER       (4 * (4 * 128 * 128 + 2 * 256 * 128 + 5 * 128 + 256 + 4 * 128))
#define ROBERTA_BYTES(v) (4 * (((v) + 66 + 1) * 128 + 2 * 128 + 128 * 128 + 128))

static const fam_expect fams[] = {
    {"llama", 21, LLAMA_BYTES, 256, 8, 2, 32, 512, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    {"llama_fp8", 49, 2 * (2 * 1000 * 256 + 256) + 2 * FP8_LAYER, 256, 8, 2, 32, 512, 1000, 2, 0, 0,
     -1, CKPT_QUANT_FP8_TENSOR, 1},
    {"llama_w8a8", 49, 2 * (2 * 1000 * 256 + 256) + 2 * W8_LAYER, 256, 8, 2, 32, 512, 1000, 2, 0, 0,
     -1, CKPT_QUANT_CT_INT8, 1},
    {"llama_w4a16", 49, 2 * (2 * 1000 * 256 + 256) + 2 * W4_LAYER, 256, 8, 2, 32, 512, 1000, 2, 0,
     0, -1, CKPT_QUANT_CT_INT4, 1},
    {"llama_w4a16_asym", 63, 2 * (2 * 1000 * 256 + 256) + 2 * W4ASYM_LAYER, 256, 8, 2, 32, 512,
     1000, 2, 0, 0, -1, CKPT_QUANT_CT_INT4, 1},
    {"llama_w4a8", 35, 2 * (2 * 1000 * 256 + 256) + 2 * W4A8_LAYER, 256, 8, 2, 32, 512, 1000, 2, 0,
     0, -1, CKPT_QUANT_CT_INT4, 1},
    {"llama_w8a8_asym", 63, 2 * (2 * 1000 * 256 + 256) + 2 * W8ASYM_LAYER, 256, 8, 2, 32, 512, 1000,
     2, 0, 0, -1, CKPT_QUANT_CT_INT8, 1},
    {"llama_w8a16", 49, 2 * (2 * 1000 * 256 + 256) + 2 * W8P_LAYER, 256, 8, 2, 32, 512, 1000, 2, 0,
     0, -1, CKPT_QUANT_CT_INT8, 1},
    {"llama_w4a16_actorder", 63, 2 * (2 * 1000 * 256 + 256) + 2 * W4ACT_LAYER, 256, 8, 2, 32, 512,
     1000, 2, 0, 0, -1, CKPT_QUANT_CT_INT4, 1},
    {"llama_ct_fp8", 35, 2 * (2 * 1000 * 256 + 256) + 2 * CTF8_LAYER, 256, 8, 2, 32, 512, 1000, 2,
     0, 0, -1, CKPT_QUANT_CT_FP8, 1},
    {"llama_ct_fp8_tensor", 49, 2 * (2 * 1000 * 256 + 256) + 2 * CTF8T_LAYER, 256, 8, 2, 32, 512,
     1000, 2, 0, 0, -1, CKPT_QUANT_FP8_TENSOR, 1},
    {"qwen2", 26, 2 * (1024 * 256 + 256) + 2 * QWEN2_LAYER, 256, 8, 2, 32, 512, 1024, 2, 1, 0, -1,
     CKPT_QUANT_NONE, 1},
    {"qwen3", 25, 2 * (2 * 1024 * 256 + 256) + 2 * QWEN3_LAYER, 256, 8, 4, 64, 512, 1024, 2, 0, 0,
     -1, CKPT_QUANT_NONE, 1},
    {"qwen3_ct_fp8_block", 39, 2 * (2 * 1024 * 256 + 256) + 2 * QWEN3_CTB_LAYER, 256, 8, 4, 64, 512,
     1024, 2, 0, 0, -1, CKPT_QUANT_FP8_BLOCK, 1},
    {"granite", 20, 2 * (1003 * 256 + 256) + 2 * LLAMA_LAYER, 256, 8, 2, 32, 512, 1003, 2, 1, 0, -1,
     CKPT_QUANT_NONE, 1},
    {"seed_oss", 35, 2 * (2 * 1000 * 256 + 256) + 2 * SEED_LAYER, 256, 8, 2, 64, 512, 1000, 2, 0, 0,
     -1, CKPT_QUANT_NONE, 1},
    /* smollm3: llama's layers (no biases), 4 of them, tied with no lm_head.weight */
    {"smollm3", 38, 2 * (1000 * 256 + 256) + 4 * LLAMA_LAYER, 256, 8, 2, 32, 512, 1000, 4, 1, 0, -1,
     CKPT_QUANT_NONE, 1},
    {"mixtral", 53, 2 * (2 * 1000 * 256 + 256) + 2 * MIXTRAL_LAYER, 256, 8, 2, 32, 256, 1000, 2, 0,
     6, 256, CKPT_QUANT_NONE, 1},
    {"qwen2_moe", 41, 2 * (2 * 1024 * 256 + 256) + 2 * QMOE_ATTN + 2 * 3 * 512 * 256 + QMOE_MOE,
     256, 8, 8, 32, 512, 1024, 2, 0, 4, 128, CKPT_QUANT_NONE, 1},
    {"granitemoe", 20, 2 * (1003 * 256 + 256) + 2 * GM_LAYER, 256, 8, 2, 32, 128, 1003, 2, 1, 6,
     128, CKPT_QUANT_NONE, 1},
    {"granitemoeshared", 25, 2 * (2 * 1000 * 256 + 256) + 2 * GMS_LAYER, 256, 8, 2, 32, 128, 1000,
     2, 0, 4, 128, CKPT_QUANT_NONE, 1},
    {"olmoe", 69, 2 * (2 * 1000 * 256 + 256) + 2 * OLMOE_LAYER, 256, 8, 2, 32, 128, 1000, 2, 0, 8,
     128, CKPT_QUANT_NONE, 1},
    {"phimoe", 55, 2 * (2 * 1003 * 256 + 1003 + 2 * 256) + 2 * PHIMOE_LAYER, 256, 8, 2, 32, 128,
     1003, 2, 0, 4, 128, CKPT_QUANT_NONE, 1},
    {"deepseek_v3", 123, DS_BYTES, 256, 8, 8, 32, 512, 1024, 2, 0, 4, 256, CKPT_QUANT_FP8_BLOCK, 1},
    {"deepseek_v2", 36, DSV2_BYTES, 256, 8, 8, 32, 512, 1000, 2, 0, 4, 128, CKPT_QUANT_NONE, 1},
    {"glm4_moe", 143, GLM_BYTES, 128, 8, 2, 32, 256, 1000, 3, 0, 8, 64, CKPT_QUANT_NONE, 1},
    {"dots1", 88, D1_BYTES, 256, 8, 4, 32, 512, 1000, 3, 0, 8, 64, CKPT_QUANT_NONE, 1},
    {"bert", 39, BERT_BYTES, 128, 4, 4, 32, 512, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    {"qwen2_vl", 58, QVL_BYTES, 256, 8, 2, 32, 512, 1024, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    {"qwen2_vl_hf5", 58, QVL_BYTES, 256, 8, 2, 32, 512, 1024, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    {"qwen2_5_vl", 81, QVL25_BYTES, 256, 8, 2, 32, 512, 1024, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    {"qwen2_5_vl_hf5", 81, QVL25_BYTES, 256, 8, 2, 32, 512, 1024, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* jina_vl: qwen2_vl tied (no lm_head) + score.0 [256, 256] + bias, score.2 [1, 256] + bias */
    {"jina_vl", 61, QVL_BYTES - 2 * 1024 * 256 + 2 * (256 * 256 + 2 * 256 + 1), 256, 8, 2, 32, 512,
     1024, 2, 1, 0, -1, CKPT_QUANT_NONE, 2},
    {"gemma", 20, 2 * (1000 * 256 + 256) + 2 * GEMMA_LAYER, 256, 4, 1, 128, 512, 1000, 2, 1, 0, -1,
     CKPT_QUANT_NONE, 1},
    {"gemma2", 24, 2 * (1024 * 256 + 256) + 2 * GEMMA2_LAYER, 256, 8, 4, 64, 512, 1024, 2, 1, 0, -1,
     CKPT_QUANT_NONE, 1},
    {"gemma3_text", 28, 2 * (1000 * 256 + 256) + 2 * GEMMA3_LAYER, 256, 4, 1, 64, 384, 1000, 2, 1,
     0, -1, CKPT_QUANT_NONE, 1},
    {"olmo2", 25, 2 * (2 * 1000 * 256 + 256) + 2 * OLMO2_LAYER, 256, 8, 2, 32, 512, 1000, 2, 0, 0,
     -1, CKPT_QUANT_NONE, 1},
    {"olmo", 15, 2 * 1000 * 256 + 2 * OLMO_LAYER, 256, 8, 2, 32, 512, 1000, 2, 1, 0, -1,
     CKPT_QUANT_NONE, 1},
    {"phi3", 15, 2 * (2 * 1000 * 256 + 256) + 2 * PHI3_LAYER, 256, 8, 2, 32, 512, 1000, 2, 0, 0, -1,
     CKPT_QUANT_NONE, 1},
    {"glm", 25, 2 * (2 * 1000 * 256 + 256) + 2 * GLM_LAYER, 256, 8, 2, 64, 384, 1000, 2, 0, 0, -1,
     CKPT_QUANT_NONE, 1},
    {"glm4", 29, 2 * (2 * 1000 * 256 + 256) + 2 * (GLM_LAYER + 2 * 2 * 256), 256, 8, 2, 64, 384,
     1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    {"starcoder2", 35, 2 * (1000 * 256 + 2 * 256) + 2 * SC2_LAYER, 256, 8, 2, 32, 1024, 1000, 2, 1,
     0, -1, CKPT_QUANT_NONE, 1},
    {"gemma3", 67, G3_BYTES, 256, 4, 1, 64, 384, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 2},
    {"gemma3_hf5", 67, G3_BYTES, 256, 4, 1, 64, 384, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    {"gpt_oss", 41, 2 * (2 * 1003 * 256 + 256) + 2 * GO_LAYER, 256, 8, 2, 32, 128, 1003, 2, 0, 4,
     128, CKPT_QUANT_MXFP4, 1},
    {"llama4", 66, L4_BYTES, 256, 8, 2, 32, 64, 1000, 2, 0, 4, 64, CKPT_QUANT_NONE, 2},
    {"llama4_text", 24, L4_TEXT, 256, 8, 2, 32, 64, 1000, 2, 0, 4, 64, CKPT_QUANT_NONE, 1},
    {"llama4_fbgemm", 75, L4_FB_BYTES, 256, 8, 2, 32, 64, 1000, 2, 0, 4, 64, CKPT_QUANT_FBGEMM_FP8,
     2},
    {"qwen3_next", 96, Q3N_BYTES, 256, 4, 2, 64, 384, 1000, 4, 0, 4, 64, CKPT_QUANT_NONE, 2},
    {"ernie4_5", 34, ERN_BYTES, 128, 8, 2, 32, 256, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    {"ernie4_5_moe", 96, ERNM_BYTES, 128, 4, 2, 32, 256, 1000, 4, 0, 8, 64, CKPT_QUANT_NONE, 1},
    {"cohere", 22, 2 * (1000 * 256 + 256) + 2 * (COHERE_LAYER + 2 * (8 + 2) * 32), 256, 8, 2, 32,
     512, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    {"cohere2", 35, 2 * (2 * 1000 * 256 + 256) + 4 * COHERE_LAYER, 256, 8, 2, 32, 512, 1000, 4, 0,
     0, -1, CKPT_QUANT_NONE, 1},
    {"qwen3_vl", 82, Q3V_BYTES, 256, 8, 2, 48, 512, 1024, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    {"qwen3_vl_moe", 93, Q3VM_BYTES, 256, 8, 2, 48, 384, 1024, 3, 0, 8, 64, CKPT_QUANT_NONE, 2},
    /* olmo3: OLMo 2's tensors over 4 layers */
    {"olmo3", 47, 2 * (2 * 1000 * 256 + 256) + 4 * OLMO2_LAYER, 256, 8, 2, 32, 512, 1000, 4, 0, 0,
     -1, CKPT_QUANT_NONE, 1},
    /* exaone4: olmo2's layer with q_norm / k_norm [32]; tied */
    {"exaone4", 46, 2 * (1000 * 256 + 256) + 4 * (OLMO2_LAYER - 2 * (256 + 64 - 2 * 32)), 256, 8, 2,
     32, 512, 1000, 4, 1, 0, -1, CKPT_QUANT_NONE, 1},
    {"mistral3", 45, M3_BYTES, 256, 4, 2, 48, 384, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    {"mistral3_hf5", 47, M3_BYTES + 2 * 2 * 256, 256, 4, 2, 48, 384, 1000, 2, 0, 0, -1,
     CKPT_QUANT_NONE, 1},
    {"glm4v", 56, G4V_BYTES, 128, 4, 2, 32, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    {"glm4v_moe", 162, G4VM_BYTES, 128, 4, 2, 32, 192, 1000, 3, 0, 8, 64, CKPT_QUANT_NONE, 2},
    /* apertus: its two norms, q 256x256 + k, v 64x256, o, q/k norms [32], up / down 512x256
     * without a gate, xIELU's alpha_p / alpha_n [1] and beta / eps [] */
    {"apertus", 59,
     2 * (2 * 1000 * 256 + 256) +
         4 * 2 * (2 * 256 + 2 * 256 * 256 + 2 * 64 * 256 + 2 * 512 * 256 + 2 * 32 + 4),
     256, 8, 2, 32, 512, 1000, 4, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* arcee: Llama's norms and q/k/v/o, up / down 512x256 with their biases [512] / [256] */
    {"arcee", 23,
     2 * (2 * 1000 * 256 + 256) +
         2 * 2 * (2 * 256 + 2 * 256 * 256 + 2 * 64 * 256 + 2 * 512 * 256 + 512 + 256),
     256, 8, 2, 32, 512, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* lfm2: intermediate_size read from block_ff_dim (700; the tensors' 512 by the rule) */
    {"lfm2", 37, LFM2_BYTES, 256, 8, 4, 32, 700, 1000, 4, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* granitemoehybrid: mamba, mamba, attention, mamba; experts and the shared MLP in all */
    {"granitemoehybrid", 58, G4_BYTES, 128, 4, 2, 32, 64, 1000, 4, 1, 4, 64, CKPT_QUANT_NONE, 2},
    /* granitemoehybrid_dense: attention, mamba, mamba; no experts; every bias */
    {"granitemoehybrid_dense", 43, G4D_BYTES, 128, 4, 1, 32, 64, 1000, 3, 0, 0, -1, CKPT_QUANT_NONE,
     1},
    /* hunyuan_v1_dense: seed_oss's attention (q 512x256, o 256x512, q/k/v and o biases) with
     * query / key layernorms [64], a bias-free MLP; tied */
    {"hunyuan_v1_dense", 32, 2 * (1000 * 256 + 256) + 2 * HY_LAYER, 256, 8, 2, 64, 512, 1000, 2, 1,
     0, -1, CKPT_QUANT_NONE, 1},
    /* hunyuan_v1_moe: q 256x256, k / v 64x256, o, norms [32], router [8, 256], 8 experts of
     * 128 and the shared MLP [128]; tied */
    {"hunyuan_v1_moe", 74, 2 * (1000 * 256 + 256) + 2 * HYM_LAYER, 256, 8, 2, 32, 128, 1000, 2, 1,
     8, 128, CKPT_QUANT_NONE, 1},
    /* bamba: mamba, attention, mamba (attn_layer_indices [1]); SwiGLU in every layer */
    {"bamba", 38, BA_BYTES, 128, 8, 2, 16, 192, 1000, 3, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* nemotron: LayerNorm1P weights and biases [256] (model.norm's too), q/k/v/o with their
     * biases, up / down 512x256 without */
    {"nemotron", 32,
     2 * (2 * 1000 * 256 + 2 * 256) +
         2 * 2 * (4 * 256 + 2 * 256 * 256 + 2 * 64 * 256 + 256 + 2 * 64 + 256 + 2 * 512 * 256),
     256, 8, 2, 32, 512, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* minimax: lightning, lightning, softmax attention, lightning; 4 experts in every layer
     * (intermediate_size the expert size) */
    {"minimax", 79, MM_BYTES, 256, 8, 4, 32, 128, 1000, 4, 0, 4, 128, CKPT_QUANT_NONE, 1},
    /* jamba: mamba, mamba, attention, mamba; experts in layers 1 / 3 */
    {"jamba", 83, JB_BYTES, 128, 4, 2, 32, 64, 1000, 4, 0, 4, 64, CKPT_QUANT_NONE, 2},
    /* gpt_neox: LayerNorms with biases, query_key_value 384x128 + [384], dense 128x128 + [128],
     * dense_h_to_4h 512x128 + [512], dense_4h_to_h 128x512 + [128] (BF16), the F32 scalar
     * attention.masked_bias a layer; final_layer_norm with its bias, embed_out */
    {"gpt_neox", 30,
     2 * (2 * 1000 * 128 + 2 * 128) +
         2 * (2 * (4 * 128 + 384 * 128 + 384 + 128 * 128 + 128 + 2 * 512 * 128 + 512 + 128) + 4),
     128, 8, 8, 16, 512, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* phi: input_layernorm with its bias, q/k/v/dense 128x128 + [128], fc1 512x128 + [512],
     * fc2 128x512 + [128]; final_layernorm with its bias, lm_head with its bias [1000] */
    {"phi", 33,
     2 * (2 * 1000 * 128 + 2 * 128 + 1000) +
         2 * 2 * (2 * 128 + 4 * (128 * 128 + 128) + 2 * 512 * 128 + 512 + 128),
     128, 8, 8, 16, 512, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* flex_olmo: OLMo 2's post norms and q_norm [256] / k_norm [64], no input_layernorm,
     * router 4x256, 4 experts of gate/up 128x256 and down 256x128 */
    {"flex_olmo", 45,
     2 * (2 * 1000 * 256 + 256) +
         2 * 2 * (2 * 256 + 256 * 256 * 2 + 2 * 64 * 256 + 256 + 64 + 4 * 256 + 4 * 3 * 128 * 256),
     256, 8, 2, 32, 128, 1000, 2, 0, 4, 128, CKPT_QUANT_NONE, 1},
    /* vaultgemma: input_layernorm and pre_feedforward_layernorm only, q 512x256, k / v 256x256,
     * o 256x512, gate / up 512x256, down 256x512; tied */
    {"vaultgemma", 20,
     2 * (1000 * 256 + 256) + 2 * 2 * (2 * 256 + 512 * 256 * 2 + 2 * 256 * 256 + 3 * 512 * 256),
     256, 8, 4, 64, 512, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* dbrx: norm_1 / norm_2 (no bias), Wqkv 384x256, out_proj 256x256, router 4x256, the
     * 2-D stacks w1 / v1 / w2 [4*128, 256]; wte, norm_f, lm_head (untied) */
    {"dbrx", 19,
     2 * (2 * 1000 * 256 + 256) +
         2 * 2 * (2 * 256 + 384 * 256 + 256 * 256 + 4 * 256 + 3 * 4 * 128 * 256),
     256, 8, 2, 32, 128, 1000, 2, 0, 4, 128, CKPT_QUANT_NONE, 1},
    /* stablelm: LayerNorm weights and biases [256] (model.norm's too), q/k/v with their
     * biases (use_qkv_bias), o_proj, gate / up / down 512x256 without */
    {"stablelm", 32,
     2 * (2 * 1000 * 256 + 2 * 256) +
         2 * 2 * (4 * 256 + 2 * 256 * 256 + 2 * 64 * 256 + 256 + 2 * 64 + 3 * 512 * 256),
     256, 8, 2, 32, 512, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* ministral: Mistral's tensors (RMSNorms, no biases), layer_types sliding / full */
    {"ministral", 21,
     2 * (2 * 1000 * 256 + 256) + 2 * 2 * (2 * 256 + 2 * 256 * 256 + 2 * 64 * 256 + 3 * 512 * 256),
     256, 8, 2, 32, 512, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* falcon_h1: every layer both mixers: q / o 256x128 / 128x256, k / v 64x128, in_proj
     * 424x128, conv1d [224, 1, 4] + [224], [8] x 3, norm [192], out_proj 128x192; the
     * feed_forward 192x128 (x2) / 128x192; its two norms; untied */
    {"falcon_h1", 37,
     2 * (2 * 1000 * 128 + 128) + 2 * 2 *
                                      (2 * 128 + 640 * 128 + 424 * 128 + 224 * 4 + 224 + 3 * 8 +
                                       192 + 128 * 192 + 3 * 192 * 128),
     128, 8, 2, 32, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* mpt: norm_1 / norm_2 (no bias), Wqkv 576x192 (12 kv heads: no kv_n_heads), out_proj
     * 192x192, up_proj 768x192, down_proj 192x768; wte, norm_f; tied */
    {"mpt", 14, 2 * (1000 * 192 + 192) + 2 * 2 * (2 * 192 + 576 * 192 + 192 * 192 + 2 * 768 * 192),
     192, 12, 12, 16, 768, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* longcat_flash: per layer two sublayers of 2 norms, q_a 64x128, q_a_layernorm [64], q_b
     * 192x64, kv_a 40x128, kv_a_layernorm [32], kv_b 256x32, o 128x128, gate / up 192x128,
     * down 128x192; router 6x128, its F32 correction bias [6], 4 experts of 3 x 64x128;
     * embed, norm, lm_head (untied) and the two model.mtp. tensors (norm [128], eh_proj
     * 128x256) */
    {"longcat_flash", 81,
     2 * (2 * 1000 * 128 + 2 * 128 + 128 * 256) +
         2 * (2 * (2 * (2 * 128 + 64 * 128 + 64 + 192 * 64 + 40 * 128 + 32 + 256 * 32 + 128 * 128 +
                        3 * 192 * 128) +
                   6 * 128 + 4 * 3 * 64 * 128) +
              4 * 6),
     128, 8, 8, 8, 192, 1000, 2, 0, 4, 64, CKPT_QUANT_NONE, 1},
    /* gpt2: wte, wpe [64, 128], ln_f with its bias; per layer ln_1 / ln_2 with biases, the
     * Conv1D c_attn 128x384 + [384], c_proj 128x128 + [128], c_fc 128x512 + [512], mlp.c_proj
     * 512x128 + [128] (BF16), the F32 scalar attn.masked_bias; tied (n_inner null: I 512) */
    {"gpt2", 30,
     2 * (1000 * 128 + 64 * 128 + 2 * 128) +
         2 * (2 * (4 * 128 + 384 * 128 + 384 + 128 * 128 + 128 + 2 * 512 * 128 + 512 + 128) + 4),
     128, 8, 8, 16, 512, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* gpt_bigcode: gpt2's names with Linear weights: c_attn 160x128 + [160] (one kv head),
     * c_proj 128x128 + [128], c_fc 384x128 + [384], mlp.c_proj 128x384 + [128]; no buffers;
     * tied */
    {"gpt_bigcode", 28,
     2 * (1000 * 128 + 64 * 128 + 2 * 128) +
         2 * 2 * (4 * 128 + 160 * 128 + 160 + 128 * 128 + 128 + 2 * 384 * 128 + 384 + 128),
     128, 8, 1, 16, 384, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* llava: Llama's LM (hid 128, q / o 128x128, k / v 64x128, gate / up / down 256x128;
     * untied) + CLIP blocks (width 64: LayerNorms with biases, q/k/v/out_proj 64x64 with
     * biases, fc1 128x64 + [128], fc2 64x128 + [64]), class embedding [64], patch_embedding
     * [64, 3, 14, 14], position_embedding [5, 64], pre_layrnorm / post_layernorm [64] x 2,
     * linear_1 [128, 64] + [128], linear_2 [128, 128] + [128] */
    {"llava", 64,
     2 * (2 * 1000 * 128 + 128) + 2 * 2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128) +
         2 * (64 + 64 * 3 * 14 * 14 + 5 * 64 + 4 * 64 + 128 * 64 + 128 + 128 * 128 + 128) +
         2 * 2 * (4 * 64 + 4 * (64 * 64 + 64) + 128 * 64 + 128 + 64 * 128 + 64),
     128, 4, 2, 32, 256, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    /* llava_next: llava's tensors (Mistral's LM of the same dims) + image_newline [128], one
     * file in the transformers >= 4.52 layout */
    {"llava_next", 65,
     2 * (2 * 1000 * 128 + 128) + 2 * 2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128) +
         2 * (64 + 64 * 3 * 14 * 14 + 5 * 64 + 4 * 64 + 128 * 64 + 128 + 128 * 128 + 128) +
         2 * 2 * (4 * 64 + 4 * (64 * 64 + 64) + 128 * 64 + 128 + 64 * 128 + 64) + 2 * 128,
     128, 4, 2, 32, 256, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* mamba: backbone.embeddings, norm_f; every layer its norm, in_proj 512x128, conv1d
     * [256, 1, 4] + [256], x_proj 40x256, dt_proj 256x8 + [256], A_log 256x16, D [256],
     * out_proj 128x256; tied; no attention: the loader's placeholder head (1 x 128) */
    {"mamba", 22,
     2 * (1000 * 128 + 128) + 2 * 2 *
                                  (128 + 512 * 128 + 256 * 4 + 256 + 40 * 256 + 256 * 8 + 256 +
                                   256 * 16 + 256 + 128 * 256),
     128, 1, 1, 128, 256, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* falcon_mamba: mamba's tensors and lm_head [1000, 128] (untied) */
    {"falcon_mamba", 23,
     2 * (2 * 1000 * 128 + 128) + 2 * 2 *
                                      (128 + 512 * 128 + 256 * 4 + 256 + 40 * 256 + 256 * 8 + 256 +
                                       256 * 16 + 256 + 128 * 256),
     128, 1, 1, 128, 256, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* opt: embed_tokens 1000x64, embed_positions (64 + 2)x128, project_in 128x64, project_out
     * 64x128, final_layer_norm with its bias; a layer's two LayerNorms with biases, q/k/v/out
     * 128x128 + [128], fc1 256x128 + [256], fc2 128x256 + [128]; tied */
    {"opt", 38,
     2 * (1000 * 64 + 66 * 128 + 2 * 128 * 64 + 2 * 128) +
         2 * 2 * (4 * 128 + 4 * (128 * 128 + 128) + 2 * 256 * 128 + 256 + 128),
     128, 8, 8, 16, 256, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* gptj: ln_1 with its bias, q/k/v/out_proj 128x128 without biases, the F32
     * attn.masked_bias scalar, fc_in 256x128 + [256], fc_out 128x256 + [128]; wte, ln_f with
     * its bias, lm_head with its bias [1000] (untied) */
    {"gptj", 27,
     2 * (2 * 1000 * 128 + 2 * 128 + 1000) +
         2 * (2 * (2 * 128 + 4 * 128 * 128 + 2 * 256 * 128 + 256 + 128) + 4),
     128, 8, 8, 16, 256, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* bloom: word_embeddings and its LayerNorm, ln_f, per layer two LayerNorms with biases,
     * query_key_value 384x128 + [384], dense 128x128 + [128], dense_h_to_4h 512x128 + [512],
     * dense_4h_to_h 128x512 + [128] (BF16); tied */
    {"bloom", 29,
     2 * (1000 * 128 + 4 * 128) +
         2 * 2 * (4 * 128 + 384 * 128 + 384 + 128 * 128 + 128 + 2 * 512 * 128 + 512 + 128),
     128, 8, 8, 16, 512, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* persimmon: LayerNorms with biases, query_key_value 384x128 + [384], q_layernorm /
     * k_layernorm [16] with biases, dense 128x128 + [128], dense_h_to_4h 512x128 + [512],
     * dense_4h_to_h 128x512 + [128]; final_layernorm with its bias, lm_head */
    {"persimmon", 36,
     2 * (2 * 1000 * 128 + 2 * 128) +
         2 * 2 * (4 * 128 + 384 * 128 + 384 + 4 * 16 + 128 * 128 + 128 + 2 * 512 * 128 + 512 + 128),
     128, 8, 8, 16, 512, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* falcon: new_decoder_architecture, ln_attn / ln_mlp with biases, query_key_value
     * [(8 + 2*2)*16 = 192]x128 grouped per kv head, dense 128x128, dense_h_to_4h 512x128,
     * dense_4h_to_h 128x512, no biases (BF16); ln_f with its bias; tied */
    {"falcon", 19,
     2 * (1000 * 128 + 2 * 128) + 2 * 2 * (4 * 128 + 192 * 128 + 128 * 128 + 2 * 512 * 128), 128, 8,
     2, 16, 512, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* mamba2: backbone.embeddings, norm_f, lm_head (untied); every layer its norm, in_proj
     * 584x128 ([z 256; x 256; B 32; C 32; dt 8]), conv1d [320, 1, 4] + [320], A_log / D /
     * dt_bias [8], the gated norm [256], out_proj 128x256; no attention: the loader's
     * placeholder head (1 x 128); no intermediate_size (-1) */
    {"mamba2", 21,
     2 * (2 * 1000 * 128 + 128) +
         2 * 2 * (128 + 584 * 128 + 320 * 4 + 320 + 3 * 8 + 256 + 128 * 256),
     128, 1, 1, 128, -1, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
};
#define N_FAMS_A (sizeof(fams) / sizeof(fams[0]))

#include "tests/test_fixtures_expect_mm.h"

#endif
