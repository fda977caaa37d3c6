/*
 * test_fixtures_expect_mm.h — test_fixtures_expect.h's table, continued: the families from
 * idefics3 to zamba2 (multimodal and hybrid ones) in `wt-mkckpt --family list` order; the
 * rest, and fam_at(), in test_fixtures_expect_more.h. Included by test_fixtures_expect.h only.
 */
#ifndef WT_TEST_FIXTURES_EXPECT_MM_H
#define WT_TEST_FIXTURES_EXPECT_MM_H

/* chameleon's VQ-VAE, elements: conv_in 32x3x3x3; level 0's block (32 -> 32) and downsample;
 * level 1's block (32 -> 64, nin_shortcut) and attention block; the middle blocks and
 * attention (64); norm_out; conv_out 32x64x3x3; the 64 x 32 codebook; quant_conv and
 * post_quant_conv 32x32 (each conv with its bias, each GroupNorm weight and bias) */
#define CH_RES(i, o) (2 * i + o * i * 9 + o + 2 * o + o * o * 9 + o)
#define CH_ATT(c)    (2 * c + 4 * (c * c + c))
#define CH_VQ                                                                                      \
	(32 * 27 + 32 + CH_RES(32, 32) + 32 * 32 * 9 + 32 + CH_RES(32, 64) + 64 * 32 + 64 +        \
	 CH_ATT(64) + 2 * CH_RES(64, 64) + CH_ATT(64) + 2 * 64 + 32 * 64 * 9 + 32 + 64 * 32 +      \
	 2 * (32 * 32 + 32))
/* granite_speech: a conformer block (ff1 / ff2 with pre_norm, attn's pre_norm, to_q 64x64,
 * to_kv 128x64, to_out 64x64 + bias, rel_pos_emb 17x16, the conv module: norm, up_conv
 * [256, 64, 1] + bias, depth_conv [128, 1, 3], batch_norm's four [128], down_conv [64, 128, 1]
 * + bias; post_norm); a Q-Former
 * attention (query / key / value / output.dense 64x64 with biases, LayerNorm), its MLP
 * (intermediate_query 128x64, output_query 64x128 with biases, LayerNorm) */
#define GS_FF (2 * 64 + 128 * 64 + 128 + 64 * 128 + 64)
#define GS_BLOCK                                                                                   \
	(2 * GS_FF + 6 * 64 + 2 * 64 * 64 + 128 * 64 + 64 + 17 * 16 + 256 * 64 + 256 + 128 * 3 +   \
	 4 * 128 + 64 * 128 + 64)
#define QF_ATT (4 * (64 * 64 + 64) + 2 * 64)
#define QF_FFN (128 * 64 + 128 + 64 * 128 + 64 + 2 * 64)
/* mllama: a vision encoder layer (width 64: q/k/v/o 64x64, fc1 128x64 + [128], fc2 64x128 +
 * [64], two LayerNorms with biases) */
#define ML_VL (4 * 64 * 64 + 128 * 64 + 128 + 64 * 128 + 64 + 4 * 64)

static const fam_expect fams_mm[] = {
    /* idefics3: Llama's LM under model.text_model. (hid 128, q / o 128x128, k / v 64x128,
     * gate / up / down 256x128; untied) + SigLIP-style blocks (width 64: LayerNorms with
     * biases, q/k/v/out_proj 64x64 with biases, fc1 128x64 + [128], fc2 64x128 + [64]),
     * patch_embedding [64, 3, 8, 8] + [64], position_embedding [16, 64], post_layernorm [64] x
     * 2, the connector's proj [128, 64 * 2^2] */
    {"idefics3", 59,
     2 * (2 * 1000 * 128 + 128) + 2 * 2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128) +
         2 * (64 * 3 * 8 * 8 + 64 + 16 * 64 + 2 * 64 + 128 * 256) +
         2 * 2 * (4 * 64 + 4 * (64 * 64 + 64) + 128 * 64 + 128 + 64 * 128 + 64),
     128, 4, 2, 32, 256, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    /* smolvlm: idefics3's tensors with one kv head (k / v 32x128) and no lm_head (tied by
     * text_config), one file */
    {"smolvlm", 58,
     2 * (1000 * 128 + 128) + 2 * 2 * (2 * 128 + 2 * 128 * 128 + 2 * 32 * 128 + 3 * 256 * 128) +
         2 * (64 * 3 * 8 * 8 + 64 + 16 * 64 + 2 * 64 + 128 * 256) +
         2 * 2 * (4 * 64 + 4 * (64 * 64 + 64) + 128 * 64 + 128 + 64 * 128 + 64),
     128, 4, 1, 32, 256, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* paligemma: a Gemma 2 LM under model.language_model. (hid 128, 4 norms a layer, q / o
     * 128x128, k / v 64x128, gate / up / down 256x128; tied) + SigLIP blocks (width 64),
     * patch_embedding [64, 3, 8, 8] + [64], position_embedding [16, 64], post_layernorm [64] x
     * 2, the projector's linear [128, 64] + [128]; text_config's hidden_size over the top
     * level's 2048 */
    {"paligemma", 63,
     2 * (1000 * 128 + 128) + 2 * 2 * (4 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128) +
         2 * (64 * 3 * 8 * 8 + 64 + 16 * 64 + 2 * 64 + 128 * 64 + 128) +
         2 * 2 * (4 * 64 + 4 * (64 * 64 + 64) + 128 * 64 + 128 + 64 * 128 + 64),
     128, 4, 2, 32, 256, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 2},
    /* aya_vision: a Cohere 2 LM under language_model.model. (hid 128, one norm a layer, q / o
     * 128x128, k / v 64x128, gate / up / down 256x128; L 4, tied) + SigLIP blocks (width 64),
     * patch_embedding, position_embedding, post_layernorm as paligemma's, the projector's
     * layernorm [256] x 2, linear_1 [256, 256] + [256], linear_2 [128, 128] + [128] */
    {"aya_vision", 77,
     2 * (1000 * 128 + 128) + 2 * 4 * (128 + 2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128) +
         2 * (64 * 3 * 8 * 8 + 64 + 16 * 64 + 2 * 64) +
         2 * 2 * (4 * 64 + 4 * (64 * 64 + 64) + 128 * 64 + 128 + 64 * 128 + 64) +
         2 * (2 * 256 + 256 * 256 + 256 + 128 * 128 + 128),
     128, 4, 2, 32, 256, 1000, 4, 1, 0, -1, CKPT_QUANT_NONE, 2},
    /* llava_onevision: a Qwen2 LM under language_model.model. (hid 128, 2 norms a layer, q / o
     * 128x128, k / v 64x128 with the q/k/v biases [256], gate / up / down 256x128; L 2, tied
     * by text_config) + SigLIP blocks (width 64), patch_embedding, position_embedding,
     * post_layernorm as paligemma's, the projector's linear_1 [128, 64] + [128], linear_2
     * [128, 128] + [128] and image_newline [128] */
    {"llava_onevision", 68,
     2 * (1000 * 128 + 128) +
         2 * 2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 256 + 3 * 256 * 128) +
         2 * (64 * 3 * 8 * 8 + 64 + 16 * 64 + 2 * 64) +
         2 * 2 * (4 * 64 + 4 * (64 * 64 + 64) + 128 * 64 + 128 + 64 * 128 + 64) +
         2 * (128 * 64 + 128 + 128 * 128 + 128 + 128),
     128, 4, 2, 32, 256, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 2},
    /* cohere2_vision: a Cohere 2 LM under model.language_model. (hid 128, one norm a layer, q /
     * o 128x128, k / v 64x128, gate / up / down 256x128; L 2, tied) + SigLIP blocks (width 64),
     * patch_embedding, position_embedding, post_layernorm as paligemma's, the projector's
     * linear_1 [256, 256] + [256], linear_2 [128, 128] + [128] (no layernorm) */
    {"cohere2_vision", 59,
     2 * (1000 * 128 + 128) + 2 * 2 * (128 + 2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128) +
         2 * (64 * 3 * 8 * 8 + 64 + 16 * 64 + 2 * 64) +
         2 * 2 * (4 * 64 + 4 * (64 * 64 + 64) + 128 * 64 + 128 + 64 * 128 + 64) +
         2 * (256 * 256 + 256 + 128 * 128 + 128),
     128, 4, 2, 32, 256, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 2},
    /* llava_next_video: llava_next's tensors (Llama's LM of the same dims, untied) in the
     * released layout, two files; image_newline [128] is vLLM's skipped one */
    {"llava_next_video", 65,
     2 * (2 * 1000 * 128 + 128) + 2 * 2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128) +
         2 * (64 + 64 * 3 * 14 * 14 + 5 * 64 + 4 * 64 + 128 * 64 + 128 + 128 * 128 + 128) +
         2 * 2 * (4 * 64 + 4 * (64 * 64 + 64) + 128 * 64 + 128 + 64 * 128 + 64) + 2 * 128,
     128, 4, 2, 32, 256, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    /* qwen2_audio: a Qwen2 LM under language_model.model. (hid 128, 2 norms a layer, q / o
     * 128x128, k / v 64x128 with the q/k/v biases [256], gate / up / down 256x128; L 2,
     * untied) + the audio encoder (d_model 64: conv1 [64, 16, 3], conv2 [64, 64, 3] with
     * biases, embed_positions [16, 64], layer_norm; per layer q / k / v / out [64, 64] with
     * three biases, two LayerNorms, fc1 [128, 64] / fc2 [64, 128] with biases) + the
     * projector's linear [128, 64] + [128] */
    {"qwen2_audio", 66,
     2 * (2 * 1000 * 128 + 128) +
         2 * 2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 256 + 3 * 256 * 128) +
         2 * (64 * 16 * 3 + 64 + 64 * 64 * 3 + 64 + 16 * 64 + 2 * 64) +
         2 * 2 * (4 * 64 * 64 + 3 * 64 + 4 * 64 + 128 * 64 + 128 + 64 * 128 + 64) +
         2 * (128 * 64 + 128),
     128, 4, 2, 32, 256, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    /* internvl: a Qwen2 LM under model.language_model. (as qwen2_audio's, untied) + the
     * InternViT (width 64: cls_token [1, 1, 64], the patch conv [64, 3, 8, 8] with its bias,
     * position_embeddings [1, 17, 64]; per layer q / k / v / projection_layer [64, 64] with
     * biases, two LayerNorms, lambda_1 / lambda_2, fc1 [128, 64] / fc2 [64, 128] with biases) +
     * the projector (layer_norm [256] with its bias, linear_1 [128, 256], linear_2 [128, 128]
     * with biases) */
    {"internvl", 73,
     2 * (2 * 1000 * 128 + 128) +
         2 * 2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 256 + 3 * 256 * 128) +
         2 * (64 + 64 * 3 * 8 * 8 + 64 + 17 * 64) +
         2 * 2 * (4 * 64 * 64 + 4 * 64 + 4 * 64 + 2 * 64 + 128 * 64 + 128 + 64 * 128 + 64) +
         2 * (2 * 256 + 128 * 256 + 128 + 128 * 128 + 128),
     128, 4, 2, 32, 256, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    /* internvl_qwen3: a Qwen3 LM under model.language_model. (hid 128, head_dim 64: q / o
     * 256x128 / 128x256, k / v 128x128, q_norm / k_norm [64], no biases; L 2, tied: no
     * lm_head) + internvl's tower and projector */
    {"internvl_qwen3", 70,
     2 * (1000 * 128 + 128) +
         2 * 2 * (2 * 128 + 2 * 256 * 128 + 2 * 128 * 128 + 2 * 64 + 3 * 256 * 128) +
         2 * (64 + 64 * 3 * 8 * 8 + 64 + 17 * 64) +
         2 * 2 * (4 * 64 * 64 + 4 * 64 + 4 * 64 + 2 * 64 + 128 * 64 + 128 + 64 * 128 + 64) +
         2 * (2 * 256 + 128 * 256 + 128 + 128 * 128 + 128),
     128, 4, 2, 64, 256, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 2},
    {"roberta", 39, ROBERTA_BYTES(1000) + 2 * BERT_LAYER, 128, 4, 4, 32, 512, 1000, 2, 0, 0, -1,
     CKPT_QUANT_NONE, 1},
    {"xlm_roberta", 55, ROBERTA_BYTES(1200) + 3 * XLMR_LAYER, 128, 8, 8, 16, 256, 1200, 3, 0, 0, -1,
     CKPT_QUANT_NONE, 1},
    /* xlm_roberta_cls: xlm_roberta's encoder under roberta. without the pooler, the head
     * classifier.dense [128, 128] + [128] (the pooler's size) and out_proj [1, 128] + [1] */
    {"xlm_roberta_cls", 57, ROBERTA_BYTES(1200) + 4 * (128 + 1) + 3 * XLMR_LAYER, 128, 8, 8, 16,
     256, 1200, 3, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* llava_pixtral: a Mistral LM under language_model.model. (hid 128, head_dim 48: q / o
     * 192x128 / 128x192, k / v 96x128; L 2, untied) + the Pixtral tower (width 64: patch_conv
     * [64, 3, 14, 14], ln_pre [64]; per block attention_norm / ffn_norm [64], q / k / v / o
     * [64, 64], gate / up [128, 64], down [64, 128]) + the projector's linear_1 [128, 64] +
     * [128], linear_2 [128, 128] + [128] */
    {"llava_pixtral", 45,
     2 * (2 * 1000 * 128 + 128) +
         2 * 2 * (2 * 128 + 192 * 128 + 2 * 96 * 128 + 128 * 192 + 3 * 256 * 128) +
         2 * (64 * 3 * 14 * 14 + 64) + 2 * 2 * (2 * 64 + 4 * 64 * 64 + 3 * 128 * 64) +
         2 * (128 * 64 + 128 + 128 * 128 + 128),
     128, 4, 2, 48, 256, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    /* fuyu: persimmon's tensors under language_model. and vision_embed_tokens [128, 3 x 8^2]
     * with its bias [128], 2 files */
    {"fuyu", 38,
     2 * (2 * 1000 * 128 + 2 * 128) + 2 * (128 * 192 + 128) +
         2 * 2 * (4 * 128 + 384 * 128 + 384 + 4 * 16 + 128 * 128 + 128 + 2 * 512 * 128 + 512 + 128),
     128, 8, 8, 16, 512, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    /* lfm2_vl: lfm2's tensors under model.language_model. with lm_head [1000, 256] (untied);
     * the SigLIP2 tower (patch_embedding [64, 3 x 8^2] + [64], position_embedding [16, 64];
     * per block 2 LayerNorms [64] + biases, q / k / v / out_proj [64, 64] + [64], fc1
     * [128, 64] + [128], fc2 [64, 128] + [64]; post_layernorm); the projector's layer_norm
     * [256] + bias, linear_1 [160, 256] + [160], linear_2 [256, 160] + [256]; 2 files */
    {"lfm2_vl", 81,
     LFM2_BYTES + 2 * 1000 * 256 +
         2 * (64 * 192 + 64 + 16 * 64 +
              2 * (4 * 64 + 4 * (64 * 64 + 64) + 128 * 64 + 128 + 64 * 128 + 64) + 2 * 64) +
         2 * (2 * 256 + 160 * 256 + 160 + 256 * 160 + 256),
     256, 8, 4, 32, 700, 1000, 4, 0, 0, -1, CKPT_QUANT_NONE, 2},
    /* internvl_qwen3_moe: internvl_qwen3's attention (q_norm / k_norm [64]) under
     * model.language_model., layer 0 a dense MLP of 256 (mlp_only_layers), layer 1 the router
     * [4, 128] and 4 experts of 128 (gate / up 128x128, down 128x128); untied + internvl's tower
     * and projector */
    {"internvl_qwen3_moe", 81,
     2 * (2 * 1000 * 128 + 128) + 2 * 2 * (2 * 128 + 2 * 256 * 128 + 2 * 128 * 128 + 2 * 64) +
         2 * 3 * 256 * 128 + 2 * (4 * 128 + 4 * 3 * 128 * 128) +
         2 * (64 + 64 * 3 * 8 * 8 + 64 + 17 * 64) +
         2 * 2 * (4 * 64 * 64 + 4 * 64 + 4 * 64 + 2 * 64 + 128 * 64 + 128 + 64 * 128 + 64) +
         2 * (2 * 256 + 128 * 256 + 128 + 128 * 128 + 128),
     128, 4, 2, 64, 256, 1000, 2, 0, 4, 128, CKPT_QUANT_NONE, 2},
    /* chameleon: Llama's tensors with q_norm / k_norm weights and biases [8, 16] / [4, 16], and
     * the VQ-VAE (CH_VQ elements), 2 files */
    {"chameleon", 96,
     2 * (2 * 1000 * 128 + 128) +
         2 * 2 *
             (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 2 * 8 * 16 + 2 * 4 * 16 + 3 * 256 * 128) +
         2 * CH_VQ,
     128, 8, 4, 16, 256, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    /* modernbert: F32, tok_embeddings [1000, 128], embeddings.norm / final_norm with biases;
     * per layer Wqkv [384, 128] + [384], attn.Wo [128, 128] + [128], mlp_norm, Wi [192, 128]
     * + [192], mlp.Wo [128, 96] + [128]; attn_norm in layers 1..3 */
    {"modernbert", 51,
     4 * (1000 * 128 + 4 * 128 + 3 * 2 * 128 +
          4 * (384 * 128 + 384 + 128 * 128 + 128 + 2 * 128 + 192 * 128 + 192 + 128 * 96 + 128)),
     128, 8, 8, 16, 96, 1000, 4, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* modernbert_cls: no bias; the encoder under model. (3 layers, attn_norm in 1..2), head.dense
     * [128, 128], head.norm [128], classifier [1, 128] + [1] */
    {"modernbert_cls", 24,
     4 * (1000 * 128 + 2 * 128 + 128 * 128 + 128 + 128 + 1 + 2 * 128 +
          3 * (384 * 128 + 128 * 128 + 128 + 192 * 128 + 128 * 96)),
     128, 8, 8, 16, 96, 1000, 3, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* granite_speech: Granite's LM under language_model. (as qwen2_audio's without biases) +
     * the conformer (GS_BLOCK a block, two I64 num_batches_tracked) + the Q-Former (QF_ATT an
     * attention: layer 0 two, layer 1 one; QF_FFN a layer's MLP) and projector.linear */
    {"granite_speech", 140,
     2 * (2 * 1000 * 128 + 128) + 2 * 2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128) +
         2 * (64 * 16 + 64 + 2 * GS_BLOCK + 2 * (64 * 64 + 64)) + 2 * 8 +
         2 * (4 * 64 + 3 * QF_ATT + 2 * QF_FFN + 128 * 64 + 128),
     128, 4, 2, 32, 256, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    /* blip2: opt's tensors without projections under language_model. (tied); the tower's
     * embeddings [64] + [5, 64] + [64, 3, 8, 8] + [64], 2 blocks of qkv [192, 64] + [192],
     * projection / fc1 / fc2 with biases and 2 LayerNorms, post_layernorm; query_tokens
     * [4, 48], qformer.layernorm, 3 Q-Former layers (cross-attention in 0 and 2: key / value
     * [48, 64]), language_projection [128, 48] + [128]; 2 files */
    {"blip2", 139,
     2 * (1000 * 128 + 66 * 128 + 2 * 128) +
         2 * 2 * (4 * 128 + 4 * (128 * 128 + 128) + 2 * 256 * 128 + 256 + 128) +
         2 * (64 + 5 * 64 + 64 * 192 + 64 + 2 * 64 +
              2 * (4 * 64 + 192 * 64 + 192 + 64 * 64 + 64 + 2 * 128 * 64 + 128 + 64)) +
         2 * (4 * 48 + 2 * 48 + 3 * (4 * (48 * 48 + 48) + 2 * 48 + 2 * 96 * 48 + 96 + 3 * 48) +
              2 * (48 * 48 + 2 * 48 * 64 + 48 * 48 + 4 * 48 + 2 * 48) + 128 * 48 + 128),
     128, 8, 8, 16, 256, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 2},
    /* aria: Llama's attention under language_model.model. (q / o 128x128, k / v 32x128), per
     * layer the router [4, 128], experts.fc1 [4, 128, 128] / fc2 [4, 64, 128], shared experts
     * gate / up / down 128x128; untied + the Idefics3 tower as idefics3's under vision_tower.
     * (its 8 x 8 patches) + the projector: query [8, 64], cross_attn q / k / v / linear 64x64
     * (linear + [64]), multihead_attn in_proj [192, 64] + [192] and out_proj 64x64 + [64],
     * three LayerNorms [64] with biases, linear_in [128, 64], linear_out 128x128 */
    {"aria", 82,
     2 * (2 * 1000 * 128 + 128) +
         2 * 2 *
             (2 * 128 + 2 * 128 * 128 + 2 * 32 * 128 + 4 * 128 + 4 * 128 * 128 + 4 * 64 * 128 +
              3 * 128 * 128) +
         2 * (64 * 3 * 8 * 8 + 64 + 16 * 64 + 2 * 64 +
              2 * (4 * 64 + 4 * (64 * 64 + 64) + 128 * 64 + 128 + 64 * 128 + 64)) +
         2 * (8 * 64 + 3 * 64 * 64 + 192 * 64 + 192 + 2 * (64 * 64 + 64) + 6 * 64 + 128 * 64 +
              128 * 128),
     128, 8, 2, 16, 64, 1000, 2, 0, 4, 64, CKPT_QUANT_NONE, 2},
    /* voxtral: a Llama LM under language_model.model. (as qwen2_audio's without biases, head_dim
     * given) + the Whisper encoder (as qwen2_audio's with intermediate_size 256: fc1
     * [256, 64] / fc2 [64, 256]) + the projector's linear_1 [128, 256] and linear_2
     * [128, 128] without biases */
    {"voxtral", 60,
     2 * (2 * 1000 * 128 + 128) + 2 * 2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128) +
         2 * (64 * 16 * 3 + 64 + 64 * 64 * 3 + 64 + 16 * 64 + 2 * 64) +
         2 * 2 * (4 * 64 * 64 + 3 * 64 + 4 * 64 + 256 * 64 + 256 + 64 * 256 + 64) +
         2 * (128 * 256 + 128 * 128),
     128, 4, 2, 32, 256, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    /* mllama: Llama's LM under language_model. (hid 128, q / o 128x128, k / v 32x128, gate /
     * up / down 256x128; embed_tokens 1032 rows, untied), layer 1 cross-attention (+ q_norm /
     * k_norm [16], two gates [1]) + the vision model: patch_embedding [64, 3, 14, 14],
     * class_embedding, gated positional embedding [5, 64] + gate + tile_embedding [4, 640],
     * pre / post tile embeddings [4, 128] + gates, layernorm_pre / _post, 2 local and 2 global
     * layers (ML_VL; the global ones' two gates) + multi_modal_projector [128, 128] + [128] */
    {"mllama", 101,
     2 * (1032 * 128 + 128 + 1024 * 128 +
          3 * (2 * 128 + 2 * 128 * 128 + 2 * 32 * 128 + 3 * 256 * 128) + 2 * 16 + 2) +
         2 * (64 * 3 * 14 * 14 + 64 + 5 * 64 + 1 + 4 * 640 + 2 * (4 * 128 + 1) + 4 * 64 +
              4 * ML_VL + 2 * 2 + 128 * 128 + 128),
     128, 8, 2, 16, 256, 1024, 3, 0, 0, -1, CKPT_QUANT_NONE, 2},
    /* zamba2: embed_tokens, final_layernorm (tied: no lm_head); 5 layers of a norm and the Mamba2
     * mixer (in_proj 392x64 [z 128; x 128; B 64; C 64; dt 8], conv1d [256, 1, 4] + [256],
     * A_log / D / dt_bias [8], the gated norm [128], out_proj 64x128); linear 64x64 in the 3
     * hybrid layers; 2 shared blocks (norms [128] / [64], q / k / v 128x128, o 64x128,
     * gate_up 256x64, down 64x128); 3 applications' adapters (q / k / v A 8x128 + B 128x8,
     * gate_up A 8x64 + B 256x8); head_dim 2 x 64 / 8 heads */
    {"zamba2", 90,
     2 * (1000 * 64 + 64) +
         2 * (5 * (64 + 392 * 64 + 256 * 4 + 256 + 3 * 8 + 128 + 64 * 128) + 3 * 64 * 64 +
              2 * (128 + 64 + 3 * 128 * 128 + 64 * 128 + 256 * 64 + 64 * 128) +
              3 * (6 * 8 * 128 + 8 * 64 + 256 * 8)),
     64, 8, 8, 16, 128, 1000, 5, 1, 0, -1, CKPT_QUANT_NONE, 2},
};

#include "tests/test_fixtures_expect_more.h"

#endif
