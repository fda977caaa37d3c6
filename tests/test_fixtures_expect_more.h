/*
 * test_fixtures_expect_more.h — test_fixtures_expect.h's table, continued after
 * test_fixtures_expect_mm.h's: the families from qwen3_cls on (classifiers, embedders and the
 * later text and vision families) in `wt-mkckpt --family list` order, and fam_at(), which reads
 * the three tables as one. Included by test_fixtures_expect_mm.h only. New fixtures' rows go at
 * the end of fams_more.
 */
#ifndef WT_TEST_FIXTURES_EXPECT_MORE_H
#define WT_TEST_FIXTURES_EXPECT_MORE_H

static const fam_expect fams_more[] = {
    /* qwen3_cls: F32; embed_tokens, norm, score [1, 128] (no lm_head); 2 layers of Qwen3's
     * norms, q 192x128, k / v 96x128, o 128x192, q_norm / k_norm [48], gate / up 192x128,
     * down 128x192 */
    {"qwen3_cls", 25,
     4 * (1000 * 128 + 128 + 128 +
          2 * (2 * 128 + 192 * 128 + 2 * 96 * 128 + 128 * 192 + 2 * 48 + 3 * 192 * 128)),
     128, 4, 2, 48, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* bert_cls: bert's tensors (pooler too) under bert., classifier [2, 128] and its bias;
     * bert_tok: without the pooler, classifier [4, 128] and its bias */
    {"bert_cls", 41, BERT_BYTES + 4 * (2 * 128 + 2), 128, 4, 4, 32, 512, 1000, 2, 0, 0, -1,
     CKPT_QUANT_NONE, 1},
    {"bert_tok", 39, BERT_BYTES - 4 * (128 * 128 + 128) + 4 * (4 * 128 + 4), 128, 4, 4, 32, 512,
     1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* bert_splade: bert's, the pooler's bytes the transform's, LayerNorm, decoder [1000, 128] */
    {"bert_splade", 43, BERT_BYTES + 4 * (2 * 128 + 1000 * 129), 128, 4, 4, 32, 512, 1000, 2, 0, 0,
     -1, CKPT_QUANT_NONE, 1},
    /* qwen2_5_omni: the thinker's Qwen2 LM under thinker.model. (as qwen2_audio's, untied) + the
     * vision tower (patch_embed [64, 3, 2, 14, 14]; per block norm1 / norm2, q / k / v / proj
     * 64x64 with biases, gate / up 128x64 + [128], down 64x128 + [64]; ln_q, merger mlp.0
     * 256x256 + [256], mlp.2 128x256 + [128]) + the audio encoder (d_model 32: conv1
     * [32, 16, 3], conv2 [32, 32, 3] with biases, audio_bos_eos_token [2, 128]; per layer q /
     * k / v / out [32, 32] with three biases, two LayerNorms, fc1 [96, 32] / fc2 [32, 96] with
     * biases; ln_post, proj [128, 32] + [128]) + talker.codec_head [16, 128] and
     * token2wav's proj_out [16, 32] */
    {"qwen2_5_omni", 106,
     2 * (2 * 1000 * 128 + 128) +
         2 * 2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 256 + 3 * 256 * 128) +
         2 * (64 * 3 * 2 * 14 * 14 + 64 + 256 * 256 + 256 + 128 * 256 + 128) +
         2 * 2 * (2 * 64 + 4 * (64 * 64 + 64) + 2 * (128 * 64 + 128) + 64 * 128 + 64) +
         2 * (32 * 16 * 3 + 32 + 32 * 32 * 3 + 32 + 2 * 128 + 2 * 32 + 128 * 32 + 128) +
         2 * 2 * (4 * 32 * 32 + 3 * 32 + 4 * 32 + 96 * 32 + 96 + 32 * 96 + 32) +
         2 * (16 * 128 + 16 * 32),
     128, 4, 2, 32, 256, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
    /* gemma3n_text: F32; embed_tokens [1200, 64], norm, embed_tokens_per_layer [1000, 80],
     * per_layer_model_projection 80x64, per_layer_projection_norm [16], 3 + 3 AltUp
     * projections 64x64 (tied: no lm_head); 5 layers of 8 norms / scales [64], q 128x64, k / v
     * 64x64, o 64x128, q_norm / k_norm [32], gate / up 128x64, down 64x128, laurel 16x64 +
     * 64x16, AltUp's correction 4x4, prediction 16x4, router 4x64, the per-layer gate 16x64
     * and projection 64x16 */
    {"gemma3n_text", 131,
     4 * (1200 * 64 + 64 + 1000 * 80 + 80 * 64 + 16 + 6 * 64 * 64 +
          5 * (8 * 64 + 128 * 64 + 2 * 64 * 64 + 64 * 128 + 2 * 32 + 3 * 128 * 64 + 2 * 16 * 64 +
               16 + 64 + 4 * 64 + 2 * 16 * 64)),
     64, 4, 2, 32, 128, 1200, 5, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* qwen2_emb: F32; embed_tokens, norm under the base model's names (no model., no lm_head);
     * 2 layers of norms, q 128x128 + bias, k / v 64x128 + biases, o 128x128, gate / up
     * 192x128, down 128x192 */
    {"qwen2_emb", 26,
     4 * (1000 * 128 + 128 +
          2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 128 + 2 * 64 + 3 * 192 * 128)),
     128, 4, 2, 32, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* qwen2_rm: F32; embed_tokens, norm, score.0 [128, 128] + bias, score.2 [1, 128] + bias (no
     * lm_head); 2 layers as qwen2_emb's */
    {"qwen2_rm", 30,
     4 * (1000 * 128 + 128 + 128 * 128 + 128 + 128 + 1 +
          2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 128 + 2 * 64 + 3 * 192 * 128)),
     128, 4, 2, 32, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* qwen3_omni_moe: the thinker's Qwen3-MoE LM under thinker.model. (untied; 3 layers: q 128x128,
     * k / v 64x128, o 128x128, q / k norms [32], two norms; layers 0, 2: router [4, 128] and 4
     * experts of gate / up 64x128, down 128x64; layer 1: gate / up 256x128, down 128x256) + the
     * vision tower (patch_embed [64, 3, 2, 4, 4] + [64], pos_embed [16, 64]; per block two
     * LayerNorms, qkv 192x64, proj 64x64, linear_fc1 128x64, linear_fc2 64x128 with biases; the
     * merger: ln_q [64] + bias, mlp.0 256x256, mlp.2 128x256 with biases; merger_list.0 / .1:
     * ln_q [256] + bias, the same MLP) + the audio encoder (d_model 32: conv2d1 [8, 1, 3, 3],
     * conv2d2 / 3 [8, 8, 3, 3] with biases, conv_out [32, 16]; per layer q / k / v / out
     * [32, 32] with biases, two LayerNorms, fc1 [96, 32] / fc2 [32, 96] with biases; ln_post,
     * proj1 [32, 32], proj2 [128, 32] with biases) + talker.codec_head [16, 128] and code2wav's
     * code_embedding [16, 32] */
    {"qwen3_omni_moe", 148,
     2 * (2 * 1000 * 128 + 128) + 3 * 2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 2 * 32) +
         2 * 2 * (4 * 128 + 4 * 3 * 64 * 128) + 2 * 3 * 256 * 128 +
         2 * (64 * 3 * 2 * 4 * 4 + 64 + 16 * 64) +
         2 * 2 * (4 * 64 + 192 * 64 + 192 + 64 * 64 + 64 + 128 * 64 + 128 + 64 * 128 + 64) +
         2 * (2 * 64 + 256 * 256 + 256 + 128 * 256 + 128) +
         2 * 2 * (2 * 256 + 256 * 256 + 256 + 128 * 256 + 128) +
         2 * (8 * 9 + 8 + 2 * (8 * 8 * 9 + 8) + 32 * 16) +
         2 * 2 * (4 * (32 * 32 + 32) + 4 * 32 + 96 * 32 + 96 + 32 * 96 + 32) +
         2 * (64 + 32 * 32 + 32 + 128 * 32 + 128) + 2 * (16 * 128 + 16 * 32),
     128, 4, 2, 32, 256, 1000, 3, 0, 4, 64, CKPT_QUANT_NONE, 2},
    /* whisper: F32; the encoder's conv1 [64, 16, 3], conv2 [64, 64, 3] + biases, positions
     * [8, 64], layer_norm; 2 layers of q / v 64x64 + biases, k 64x64, out 64x64 + bias, two
     * LayerNorms, fc1 128x64 + bias, fc2 64x128 + bias; the decoder's embed_tokens [1000, 64],
     * positions [32, 64], layer_norm; 2 layers of that self-attention and its cross-attention
     * (encoder_attn, the same shapes), three LayerNorms, fc1 192x64 + bias, fc2 64x192 + bias
     * (tied: no proj_out) */
    {"whisper", 89,
     4 * (64 * 16 * 3 + 64 + 64 * 64 * 3 + 64 + 8 * 64 + 2 * 64 +
          2 * (4 * 64 * 64 + 3 * 64 + 4 * 64 + 128 * 64 + 128 + 64 * 128 + 64) + 1000 * 64 +
          32 * 64 + 2 * 64 +
          2 * (2 * (4 * 64 * 64 + 3 * 64) + 6 * 64 + 192 * 64 + 192 + 64 * 192 + 64)),
     64, 8, 8, 8, 192, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* gpt2_cls: gpt2's tensors in F32 (the attn.masked_bias scalars too), no lm_head, and
     * score [2, 128] */
    {"gpt2_cls", 31,
     4 * (1000 * 128 + 64 * 128 + 2 * 128 + 2 * 128) +
         2 * (4 * (4 * 128 + 384 * 128 + 384 + 128 * 128 + 128 + 2 * 512 * 128 + 512 + 128) + 4),
     128, 8, 8, 16, 512, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* clip: F32; the text tower (token / position tables, 2 layers of LayerNorms and q/k/v /
     * out_proj / fc1 / fc2 with biases, final_layer_norm), the CLIP vision tower (2 blocks of
     * width 64), text_projection [80, 96], visual_projection [80, 64], logit_scale []; the
     * I64 position_ids buffer [1, 16] */
    {"clip", 79,
     4 * (1000 * 96 + 16 * 96 + 2 * (4 * 96 + 4 * (96 * 96 + 96) + 192 * 96 + 192 + 96 * 192 + 96) +
          2 * 96 + 64 + 64 * 3 * 14 * 14 + 5 * 64 + 4 * 64 +
          2 * (4 * 64 + 4 * (64 * 64 + 64) + 128 * 64 + 128 + 64 * 128 + 64) + 80 * 96 + 80 * 64 +
          1) +
         8 * 16,
     96, 4, 4, 24, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* internlm2: F32; tok_embeddings / output [1000, 128] (untied), model.norm, 2 layers of
     * attention_norm / ffn_norm, wqkv [(8 + 2*2)*16 = 192, 128] packed per kv group, wo
     * [128, 128], w1 / w3 [192, 128], w2 [128, 192] */
    {"internlm2", 17,
     4 * (2 * 1000 * 128 + 128 + 2 * (2 * 128 + 192 * 128 + 128 * 128 + 3 * 192 * 128)), 128, 8, 2,
     16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* internlm2_ve: internlm2's tensors with KV 4 (wqkv [(8 + 2*4)*16 = 256, 128]) and per
     * layer the visual expert feed_forward_ve.w1 / w3 [192, 128], w2 [128, 192] */
    {"internlm2_ve", 23,
     4 * (2 * 1000 * 128 + 128 + 2 * (2 * 128 + 256 * 128 + 128 * 128 + 6 * 192 * 128)), 128, 8, 4,
     16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* internlm2_rm: internlm2's tensors less output, plus v_head [1, 128] */
    {"internlm2_rm", 17,
     4 * (1000 * 128 + 128 + 128 + 2 * (2 * 128 + 192 * 128 + 128 * 128 + 3 * 192 * 128)), 128, 8,
     2, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* minimax_m2: 3 layers of 2 norms, q / o 256x256, k / v 64x256, q_norm [256], k_norm [64],
     * router [4, 256], e_score_correction_bias [4] (F32), 4 experts w1 / w3 128x256, w2
     * 256x128; untied */
    {"minimax_m2", 69,
     2 * (2 * 1000 * 256 + 256) + 3 * (2 * (2 * 256 + 2 * 256 * 256 + 2 * 64 * 256 + 256 + 64 +
                                            4 * 256 + 4 * 3 * 128 * 256) +
                                       4 * 4),
     256, 8, 2, 32, 128, 1000, 3, 0, 4, 128, CKPT_QUANT_NONE, 1},
    /* nemotron_h: backbone.embeddings, norm_f, lm_head (untied); 5 layers ("M-M*-") of a
     * norm and one mixer: Mamba2 in 0 and 2 (in_proj 392x64 [z 128; x 128; B 64; C 64; dt 8],
     * conv1d [256, 1, 4] + [256], A_log / D / dt_bias [8], the gated norm [128], out_proj
     * 64x128), attention in 3 (q 64x64, k / v 32x64, o 64x64), the MLP in 1 and 4 (up 128x64,
     * down 64x128) */
    {"nemotron_h", 32,
     2 * (2 * 1000 * 64 + 64 + 5 * 64 + 2 * (392 * 64 + 256 * 4 + 256 + 3 * 8 + 128 + 64 * 128) +
          3 * 64 * 64 + 2 * (128 * 64 + 64 * 128)),
     64, 4, 2, 16, 128, 1000, 5, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* siglip: F32; the text tower as clip's without position_ids, text_model.head [80, 96] with
     * its bias, the SigLIP vision tower (patch Conv2d with bias, 4 positions, 2 blocks of width
     * 64, post_layernorm), the pooling head (probe [1, 1, 64], in_proj [192, 64] + bias,
     * out_proj, layernorm, fc1 / fc2 with biases), logit_bias / logit_scale [1] */
    {"siglip", 88,
     4 * (1000 * 96 + 16 * 96 + 2 * (4 * 96 + 4 * (96 * 96 + 96) + 192 * 96 + 192 + 96 * 192 + 96) +
          2 * 96 + 80 * 96 + 80 + 64 * 3 * 14 * 14 + 64 + 4 * 64 +
          2 * (4 * 64 + 4 * (64 * 64 + 64) + 128 * 64 + 128 + 64 * 128 + 64) + 2 * 64 + 64 +
          192 * 64 + 192 + 64 * 64 + 64 + 2 * 64 + 128 * 64 + 128 + 64 * 128 + 64 + 2),
     96, 4, 4, 24, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* jamba_cls: jamba's tensors in F32 without lm_head (1000 x 128), and score [2, 128] */
    {"jamba_cls", 83, 2 * (JB_BYTES - 2 * 1000 * 128) + 4 * 2 * 128, 128, 4, 2, 32, 64, 1000, 4, 0,
     4, 64, CKPT_QUANT_NONE, 1},
    /* modernbert_tok: modernbert_cls's tensors, head.dense's bias [128], classifier [2, 128] +
     * [2] */
    {"modernbert_tok", 25,
     4 * (1000 * 128 + 2 * 128 + 128 * 128 + 128 + 128 + 2 * 128 + 2 + 2 * 128 +
          3 * (384 * 128 + 128 * 128 + 128 + 192 * 128 + 128 * 96)),
     128, 8, 8, 16, 96, 1000, 3, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* chatglm: F32; word_embeddings / output_layer [1000, 128] (untied), final_layernorm, 2
     * layers of input_layernorm / post_attention_layernorm, query_key_value [(8 + 2*2)*16 =
     * 192, 128] and its bias [192], dense [128, 128], dense_h_to_4h [384, 128], dense_4h_to_h
     * [128, 192] */
    {"chatglm", 17,
     4 * (2 * 1000 * 128 + 128 + 2 * (2 * 128 + 192 * 128 + 192 + 128 * 128 + 3 * 192 * 128)), 128,
     8, 2, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* exaone: F32; wte / lm_head [1000, 128] (untied), ln_f, 2 layers of ln_1 / ln_2, q_proj
     * [128, 128], k_proj / v_proj [2*16 = 32, 128], out_proj [128, 128], c_fc_0 / c_fc_1
     * [192, 128], c_proj [128, 192] */
    {"exaone", 21,
     4 * (2 * 1000 * 128 + 128 + 2 * (2 * 128 + 2 * 128 * 128 + 2 * 32 * 128 + 3 * 192 * 128)), 128,
     8, 2, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* qwen: F32; wte / lm_head [1000, 128] (untied), ln_f, 2 layers of ln_1 / ln_2, c_attn
     * [3*128 = 384, 128] with its bias [384], attn.c_proj [128, 128], w1 / w2 [192, 128]
     * (intermediate_size 384 halved), mlp.c_proj [128, 192] */
    {"qwen", 19,
     4 * (2 * 1000 * 128 + 128 + 2 * (2 * 128 + 384 * 128 + 384 + 128 * 128 + 3 * 192 * 128)), 128,
     8, 8, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* baichuan: F32; embed_tokens / lm_head [1000, 128] (untied), norm, 2 layers of the two
     * norms, W_pack [3*128, 128], o_proj [128, 128], gate_proj / up_proj [192, 128], down_proj
     * [128, 192] */
    {"baichuan", 17, 4 * (2 * 1000 * 128 + 128 + 2 * (2 * 128 + 4 * 128 * 128 + 3 * 192 * 128)),
     128, 8, 8, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* baichuan_7b: the same with 4 heads of 32 and I 256 */
    {"baichuan_7b", 17, 4 * (2 * 1000 * 128 + 128 + 2 * (2 * 128 + 4 * 128 * 128 + 3 * 256 * 128)),
     128, 4, 4, 32, 256, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* minicpm: F32; embed_tokens [1000, 128] (tied: no lm_head), norm, 2 layers of input /
     * post_attention_layernorm, q_proj [128, 128], k_proj / v_proj [2*16 = 32, 128], o_proj
     * [128, 128], gate_proj / up_proj [192, 128], down_proj [128, 192] */
    {"minicpm", 20,
     4 * (1000 * 128 + 128 + 2 * (2 * 128 + 2 * 128 * 128 + 2 * 32 * 128 + 3 * 192 * 128)), 128, 8,
     2, 16, 192, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* internlm3: F32; embed_tokens / lm_head [1000, 128] (untied), norm, 2 layers of input /
     * post_attention_layernorm, q_proj [128, 128], k_proj / v_proj [2*16 = 32, 128], o_proj
     * [128, 128], gate_proj / up_proj [192, 128], down_proj [128, 192], no biases */
    {"internlm3", 21,
     4 * (2 * 1000 * 128 + 128 + 2 * (2 * 128 + 2 * 128 * 128 + 2 * 32 * 128 + 3 * 192 * 128)), 128,
     8, 2, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* nemotron_h_moe: nemotron_h's backbone and mixers at 4 layers ("ME*E"): Mamba2 in 0,
     * attention in 2, the MoE in 1 and 3 (gate [8, 64], e_score_correction_bias [8] F32, 8
     * experts of up 64x64 / down 64x64, shared_experts up 128x64 / down 64x128) */
    {"nemotron_h_moe", 59,
     2 * (2 * 1000 * 64 + 64 + 4 * 64 + 392 * 64 + 256 * 4 + 256 + 3 * 8 + 128 + 64 * 128 +
          3 * 64 * 64 + 2 * (8 * 64 + 8 * 2 * 64 * 64 + 2 * 128 * 64)) +
         2 * 4 * 8,
     64, 4, 2, 16, 128, 1000, 4, 0, 8, 64, CKPT_QUANT_NONE, 1},
    /* minicpm3: F32; embed_tokens [1000, 128] (tied: no lm_head), norm, 2 layers of input /
     * post_attention_layernorm, q_a_proj [64, 128], q_a_layernorm [64], q_b_proj [8*24, 64],
     * kv_a_proj_with_mqa [32+8, 128], kv_a_layernorm [32], kv_b_proj [8*32, 32], o_proj
     * [128, 8*16], gate_proj / up_proj [192, 128], down_proj [128, 192] */
    {"minicpm3", 26,
     4 * (1000 * 128 + 128 +
          2 * (2 * 128 + 64 * 128 + 64 + 192 * 64 + 40 * 128 + 32 + 256 * 32 + 128 * 128 +
               3 * 192 * 128)),
     128, 8, 8, 16, 192, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* lfm2_moe: embed_tokens [1000, 128] (tied: no lm_head), embedding_norm, 4 layers of
     * operator_norm / ffn_norm; layer 1 attention (q / out_proj 128x128, k / v 64x128, q/k
     * layernorms [32]), layers 0, 2, 3 short conv (in_proj 384x128, conv [128, 1, 3], out_proj
     * 128x128); layer 0's w1 / w3 [192, 128], w2 [128, 192]; layers 1-3 gate [8, 128],
     * expert_bias [8] F32, 8 experts of w1 / w3 64x128, w2 128x64 */
    {"lfm2_moe", 106,
     2 * (1000 * 128 + 128 + 4 * 2 * 128 + (2 * 128 * 128 + 2 * 64 * 128 + 2 * 32) +
          3 * (384 * 128 + 128 * 3 + 128 * 128) + 3 * 192 * 128 +
          3 * (8 * 128 + 8 * 3 * 64 * 128)) +
         4 * 3 * 8,
     128, 4, 2, 32, 192, 1000, 4, 1, 8, 64, CKPT_QUANT_NONE, 1},
    /* minicpm_moe: F32; embed_tokens [1000, 128] (tied: no lm_head), norm, 2 layers of input /
     * post_attention_layernorm, q_proj [128, 128], k_proj / v_proj [2*16 = 32, 128], o_proj
     * [128, 128], the router mlp.gate [4, 128], 4 experts of w1 / w3 [64, 128] and w2 [128, 64] */
    {"minicpm_moe", 40,
     4 * (1000 * 128 + 128 +
          2 * (2 * 128 + 2 * 128 * 128 + 2 * 32 * 128 + 4 * 128 + 4 * 3 * 64 * 128)),
     128, 8, 2, 16, 64, 1000, 2, 1, 4, 64, CKPT_QUANT_NONE, 1},
    /* internlm: F32; embed_tokens / lm_head [1000, 128] (untied), norm, 2 layers of input /
     * post_attention_layernorm, q_proj / k_proj / v_proj / o_proj [128, 128] and their biases
     * [128], gate_proj / up_proj [192, 128], down_proj [128, 192] */
    {"internlm", 29,
     4 * (2 * 1000 * 128 + 128 + 2 * (2 * 128 + 4 * 128 * 128 + 4 * 128 + 3 * 192 * 128)), 128, 8,
     8, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* orion: F32; embed_tokens / lm_head [1000, 128] (untied), model.norm weight and bias, 2
     * layers of input / post_attention_layernorm weight and bias, q_proj / o_proj [128, 128],
     * k_proj / v_proj [2*32 = 64, 128] (no biases), gate_proj / up_proj [192, 128], down_proj
     * [128, 192] */
    {"orion", 26,
     4 * (2 * 1000 * 128 + 2 * 128 + 2 * (4 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 3 * 192 * 128)),
     128, 4, 2, 32, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* telechat2: F32; word_embeddings / lm_head [1000, 128] (untied), ln_f, 2 layers of input /
     * post_attention_layernorm, query / dense [128, 128], key_value [2*8*16 = 256, 128], the
     * dense bias [128], gate_proj / up_proj [192, 128], down_proj [128, 192] and its bias */
    {"telechat2", 23,
     4 * (2 * 1000 * 128 + 128 +
          2 * (2 * 128 + 2 * 128 * 128 + 256 * 128 + 2 * 128 + 3 * 192 * 128)),
     128, 8, 8, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* jais: F32; wte [1000, 128] (tied: no lm_head), ln_f with its bias, the F32 ALiBi buffer
     * relative_pe.slopes [8, 1] (no wpe); per layer ln_1 / ln_2 with biases, the Conv1D
     * c_attn 128x384 + [384], c_proj 128x128 + [128], c_fc and c_fc2 128x320 + [320],
     * mlp.c_proj 320x128 + [128] (n_inner 320) */
    {"jais", 32,
     4 * (1000 * 128 + 2 * 128 + 8 +
          2 * (4 * 128 + 384 * 128 + 384 + 128 * 128 + 128 + 3 * 320 * 128 + 2 * 320 + 128)),
     128, 8, 8, 16, 320, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* arctic: F32; embed_tokens / lm_head [1000, 128] (untied), norm, 2 layers of input /
     * post_attention_layernorm, q_proj / o_proj [128, 128], k_proj / v_proj [2*16 = 32, 128];
     * layer 0's block_sparse_moe.mlp w1 / w3 [64, 128], w2 [128, 64]; layer 1's router [4, 128],
     * 4 experts of w1 / w3 [64, 128] and w2 [128, 64], residual_layernorm, residual_mlp w1 / w3
     * / w2 [128, 128] */
    {"arctic", 35,
     4 * (2 * 1000 * 128 + 128 + 2 * (2 * 128 + 2 * 128 * 128 + 2 * 32 * 128) + 3 * 64 * 128 +
          4 * 128 + 4 * 3 * 64 * 128 + 128 + 3 * 128 * 128),
     128, 8, 2, 16, 64, 1000, 2, 0, 4, 64, CKPT_QUANT_NONE, 1},
    /* grok1: embed_tokens [1000, 128] (tied: no lm_head), model.norm.scale; 2 layers of four
     * norms (.scale), attn.q / o_proj 128x128, k / v 64x128, moe_block.gate [4, 128], 4 experts
     * of linear / linear_v 64x128, linear_1 128x64 */
    {"grok1", 44,
     2 * (1000 * 128 + 128 +
          2 * (4 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 4 * 128 + 4 * 3 * 64 * 128)),
     128, 4, 2, 32, 64, 1000, 2, 1, 4, 64, CKPT_QUANT_NONE, 1},
    /* bailing_moe: F32; word_embeddings / lm_head [1000, 128] (untied), model.norm; 2 MoE
     * layers of input / post_attention_layernorm, query_key_value [(8 + 2*4)*16 = 256, 128] and
     * its bias, dense [128, 128], router [4, 128], 4 experts of 3 x 64x128, one shared expert
     * of 3 x 64x128 */
    {"bailing_moe", 45,
     4 * (2 * 1000 * 128 + 128 +
          2 * (2 * 128 + 256 * 128 + 256 + 128 * 128 + 4 * 128 + 5 * 3 * 64 * 128)),
     128, 8, 4, 16, 256, 1000, 2, 0, 4, 64, CKPT_QUANT_NONE, 1},
    /* bailing_moe_v2: BF16; word_embeddings / lm_head [1000, 128] (untied), model.norm; 4 layers
     * (the MTP layer 3 included) of norms, query_key_value [(8 + 2*2)*32 = 384, 128], q/k norms
     * [32], dense [128, 256]; layer 0 dense (3 x 256x128); layers 1-3 MoE (router 8x128, F32
     * expert_bias [8], 8 experts and 1 shared expert of 3 x 64x128); the MTP layer's
     * embed_tokens / shared_head.head 1000x128, 3 norms, eh_proj 128x256 */
    {"bailing_moe_v2", 123,
     2 * (2 * 1000 * 128 + 128) + 4 * 2 * (2 * 128 + 384 * 128 + 2 * 32 + 128 * 256) +
         2 * 3 * 256 * 128 + 3 * (2 * (8 * 128 + 9 * 3 * 64 * 128) + 4 * 8) +
         2 * (2 * 1000 * 128 + 3 * 128 + 128 * 256),
     128, 8, 2, 32, 256, 1000, 3, 0, 8, 64, CKPT_QUANT_NONE, 1},
    /* xverse: F32; embed_tokens / lm_head [1000, 128] (untied), norm, 2 layers of input /
     * post_attention_layernorm, q_proj / k_proj / v_proj / o_proj [128, 128], gate_proj /
     * up_proj [192, 128], down_proj [128, 192]; no biases */
    {"xverse", 21, 4 * (2 * 1000 * 128 + 128 + 2 * (2 * 128 + 4 * 128 * 128 + 3 * 192 * 128)), 128,
     8, 8, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* aquila: F32; embed_tokens / lm_head [1000, 128] (untied), norm, 2 layers of input /
     * post_attention_layernorm, q_proj / o_proj [128, 128], k_proj / v_proj [32, 128],
     * gate_proj / up_proj [192, 128], down_proj [128, 192]; no biases */
    {"aquila", 21,
     4 * (2 * 1000 * 128 + 128 + 2 * (2 * 128 + 2 * 128 * 128 + 2 * 32 * 128 + 3 * 192 * 128)), 128,
     8, 2, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* stablelm_epoch: F32; embed_tokens / lm_head [1000, 128] (untied), model.norm weight and
     * bias, 2 layers of input / post_attention_layernorm weights and biases, q_proj / o_proj
     * [128, 128], k_proj / v_proj [64, 128], q/k/v biases [128] / [64] / [64], gate_proj /
     * up_proj [192, 128], down_proj [128, 192] */
    {"stablelm_epoch", 32,
     4 * (2 * 1000 * 128 + 2 * 128 +
          2 * (4 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 128 + 2 * 64 + 3 * 192 * 128)),
     128, 8, 4, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* teleflm: F32; xverse's tensors (MHA, untied, no biases); the muP keys add none */
    {"teleflm", 21, 4 * (2 * 1000 * 128 + 128 + 2 * (2 * 128 + 4 * 128 * 128 + 3 * 192 * 128)), 128,
     8, 8, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* falcon_rw: falcon's tensors (BF16, tied) under falcon-40b's RWConfig keys (n_head 8,
     * n_head_kv 2, n_layer 2, new_decoder_architecture given) */
    {"falcon_rw", 19,
     2 * (1000 * 128 + 2 * 128) + 2 * 2 * (4 * 128 + 192 * 128 + 128 * 128 + 2 * 512 * 128), 128, 8,
     2, 16, 512, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* minimax_text01: minimax's tensors (MM_BYTES, test_fixtures_expect.h) under
     * MiniMax-Text-01's remote config keys */
    {"minimax_text01", 79, MM_BYTES, 256, 8, 4, 32, 128, 1000, 4, 0, 4, 128, CKPT_QUANT_NONE, 1},
    /* solar: aquila's tensors over 4 layers (the skip connections store nothing) */
    {"solar", 39,
     4 * (2 * 1000 * 128 + 128 + 4 * (2 * 128 + 2 * 128 * 128 + 2 * 32 * 128 + 3 * 192 * 128)), 128,
     8, 2, 16, 192, 1000, 4, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* mimo: F32; embed_tokens / lm_head [1000, 128] (untied), norm, 2 layers of input /
     * post_attention_layernorm, q_proj / o_proj [128, 128], k_proj / v_proj [32, 128], q/k/v
     * biases [128], [32], [32], gate_proj / up_proj [192, 128], down_proj [128, 192]; the MTP
     * layer (model.mtp_layers.0.*): 5 norms, input_proj [128, 256] and a layer's attention
     * (with biases) and MLP: 16 tensors */
    {"mimo", 43,
     4 * (2 * 1000 * 128 + 128 +
          2 * (2 * 128 + 2 * 128 * 128 + 2 * 32 * 128 + 192 + 3 * 192 * 128) + 5 * 128 + 128 * 256 +
          2 * 128 * 128 + 2 * 32 * 128 + 192 + 3 * 192 * 128),
     128, 8, 2, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* deepseek_moe: BF16; embed_tokens / lm_head [1000, 128] (untied), norm; layer 0: input /
     * post_attention_layernorm, q/k/v/o_proj [128, 128], gate_proj / up_proj [256, 128],
     * down_proj [128, 256]; layers 1, 2: the norms and attention, router [8, 128], 8 experts of
     * 3 x 64x128, two shared experts as one MLP of 3 x 128x128 */
    {"deepseek_moe", 80,
     2 * (2 * 1000 * 128 + 128 + (2 * 128 + 4 * 128 * 128 + 3 * 256 * 128) +
          2 * (2 * 128 + 4 * 128 * 128 + 8 * 128 + 8 * 3 * 64 * 128 + 3 * 128 * 128)),
     128, 8, 8, 16, 256, 1000, 3, 0, 8, 64, CKPT_QUANT_NONE, 1},
    /* telechat: F32; transformer.word_embeddings [1000, 128] (tied: no lm_head), ln_f, 2 layers of
     * input / post_attention_layernorm, query [128, 128], key_value [256, 128], dense [128, 128]
     * with its bias, gate_proj / up_proj [192, 128], down_proj [128, 192] with its bias */
    {"telechat", 22,
     4 * (1000 * 128 + 128 +
          2 * (2 * 128 + 128 * 128 + 256 * 128 + 128 * 128 + 128 + 3 * 192 * 128 + 128)),
     128, 8, 8, 16, 192, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* afmoe: BF16; embed_tokens / lm_head [1000, 128] (untied), model.norm; 4 layers of 4 norms,
     * q_proj / gate_proj [256, 128], k_proj / v_proj [64, 128], o_proj [128, 256], q/k norms
     * [32]; layer 0 dense (3 x 256x128); layers 1-3 MoE (router 8x128, F32 expert_bias [8], 8
     * experts of 3 x 64x128, the shared MLP of 3 x 128x128) */
    {"afmoe", 137,
     2 * (2 * 1000 * 128 + 128) + 4 * 2 * (4 * 128 + 896 * 128 + 2 * 32) + 2 * 3 * 256 * 128 +
         3 * (2 * (8 * 128 + 8 * 3 * 64 * 128 + 3 * 128 * 128) + 4 * 8),
     128, 8, 2, 32, 256, 1000, 4, 0, 8, 64, CKPT_QUANT_NONE, 1},
    /* ouro: F32; embed_tokens / lm_head [1000, 128] (untied), norm, early_exit_gate [1, 128]
     * and its bias [1]; 2 layers of four norms, q_proj / o_proj [128, 128], k_proj / v_proj
     * [32, 128], gate_proj / up_proj [192, 128], down_proj [128, 192]; no biases */
    {"ouro", 27,
     4 * (2 * 1000 * 128 + 128 + 128 + 1 +
          2 * (4 * 128 + 2 * 128 * 128 + 2 * 32 * 128 + 3 * 192 * 128)),
     128, 8, 2, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* decilm: F32; embed_tokens / lm_head [1000, 128] (untied), model.norm; per layer as its
     * block_configs entry: layer 0 attention (input_layernorm, q / o [128, 128], k / v over 2 kv
     * heads [32, 128]) and an MLP 256 wide (post_attention_layernorm, 3 x 256x128), layer 1 an
     * MLP 512 wide only, layer 2 attention over 1 kv head ([16, 128]) only, layer 3 attention
     * over 1 kv head and an MLP 256 wide; intermediate_size / num_key_value_heads null (the
     * heads), no biases */
    {"decilm", 30,
     4 * (2 * 1000 * 128 + 128 + (128 + 2 * 128 * 128 + 2 * 32 * 128) + 2 * (128 + 3 * 256 * 128) +
          (128 + 3 * 512 * 128) + 2 * (128 + 2 * 128 * 128 + 2 * 16 * 128)),
     128, 8, 8, 16, -1, 1000, 4, 0, 0, 0, CKPT_QUANT_NONE, 1},
    /* jais2: F32; embed_tokens / lm_head [1000, 128] (untied), model.norm weight and bias, 3
     * layers of input / post_attention_layernorm weight and bias, q_proj / o_proj [128, 128]
     * and k_proj / v_proj [2*16 = 32, 128] with their biases, up_proj [256, 128] and down_proj
     * [128, 256] with theirs */
    {"jais2", 52,
     4 * (2 * 1000 * 128 + 2 * 128 +
          3 * (4 * 128 + 2 * 128 * 128 + 2 * 32 * 128 + 128 + 2 * 32 + 128 + 2 * 256 * 128 + 256 +
               128)),
     128, 8, 2, 16, 256, 1000, 3, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* deepseek_v32: BF16; embed_tokens / lm_head [1024, 256], model.norm; layers 0-2 (2: MTP) of
     * 2 norms, q_a_proj [128, 256], q_a_layernorm [128], q_b_proj [512, 128], kv_a_proj_with_mqa
     * [96, 256], kv_a_layernorm [64], kv_b_proj [512, 64], o_proj [256, 256] and the indexer's
     * wq_b [128, 128], wk [32, 256], k_norm weight and bias [32], weights_proj [4, 256]; layer 0
     * dense (3 x 512x256); layers 1, 2 MoE (router 4x256, F32 correction bias [4], 4 experts of
     * 3 x 256x256, 1 shared of 3 x 256x256); the MTP modules (embed_tokens / shared_head.head
     * [1024, 256], enorm, hnorm, shared_head.norm, eh_proj [256, 512]) */
    {"deepseek_v32", 88,
     2 * (2 * 1024 * 256 + 256 +
          3 * (2 * 256 + 128 * 256 + 128 + 512 * 128 + 96 * 256 + 64 + 512 * 64 + 256 * 256 +
               128 * 128 + 32 * 256 + 2 * 32 + 4 * 256) +
          3 * 512 * 256 + 2 * (4 * 256 + 4 * 3 * 256 * 256 + 3 * 256 * 256) + 2 * 1024 * 256 +
          3 * 256 + 256 * 512) +
         2 * 4 * 4,
     256, 8, 8, 32, 512, 1024, 2, 0, 4, 256, CKPT_QUANT_NONE, 1},
    /* step3_text: F32; embed_tokens / lm_head [1000, 128] (untied), model.norm; 3 layers of 2
     * norms, q_proj [96, 128] (share_q_dim), k_proj / v_proj [64, 128] (one kv head),
     * inter_norm [96], wq [256, 96], o_proj [128, 256]; layer 0 dense (3 x 256x128); layers 1-2
     * MoE (router 4x128, stacks 3 x 4x64x128, share_expert 3 x 96x128) */
    {"step3_text", 44,
     4 * (2 * 1000 * 128 + 128 +
          3 * (2 * 128 + 96 * 128 + 2 * 64 * 128 + 96 + 256 * 96 + 128 * 256) + 3 * 256 * 128 +
          2 * (4 * 128 + 3 * 4 * 64 * 128 + 3 * 96 * 128)),
     128, 4, 1, 64, 256, 1000, 3, 0, 4, 64, CKPT_QUANT_NONE, 1},
    /* plamo3: F32; embed_tokens / lm_head [1008, 128] (untied), model.norm; 3 layers under
     * model.layers.layers. of four norms [128], q_norm / k_norm [32], qkv_proj [384, 128]
     * ((8 + 2 * 2) * 32 rows), o_proj [128, 256], gate_up_proj [384, 128], down_proj [128, 192] */
    {"plamo3", 33,
     4 * (2 * 1008 * 128 + 128 +
          3 * (4 * 128 + 2 * 32 + 384 * 128 + 128 * 256 + 384 * 128 + 128 * 192)),
     128, 8, 2, 32, 192, 1008, 3, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* plamo2: F32, untied; 4 layers of 4 norms, gate_up / down; Mamba mixers in 0 and 2, attention
     * (qkv_proj [160, 64], q_weight [8, 16], k_weight [1, 16], o_proj) in 1 and 3 (fam_plamo2.c) */
    {"plamo2", 57,
     4 * (2 * 1000 * 64 + 64 + 4 * (4 * 64 + 256 * 64 + 64 * 128) +
          2 * (256 * 64 + 128 * 4 + 96 * 128 + 8 * 64 + 3 * 8 + 64 + 2 * 16 + 64 * 128) +
          2 * (160 * 64 + 8 * 16 + 16 + 64 * 128)),
     64, 8, 1, 16, 128, 1000, 4, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* pangu_dense: F32; embed_tokens / lm_head [1000, 128] (untied), norm, 2 layers of input /
     * post_attention_layernorm, q_proj / o_proj [128, 128] with biases [128], k_proj / v_proj
     * [32, 128] with biases [32], gate_proj / up_proj [192, 128], down_proj [128, 192] */
    {"pangu_dense", 29,
     4 * (2 * 1000 * 128 + 128 +
          2 * (2 * 128 + 2 * 128 * 128 + 2 * 32 * 128 + 2 * 128 + 2 * 32 + 3 * 192 * 128)),
     128, 8, 2, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* pangu_ultra_moe: deepseek_v32's tensors without the indexer and the correction bias, with
     * pre_mlp_layernorm / post_mlp_layernorm [256] on layers 0-2 (2: MTP); 77 tensors, BF16 */
    {"pangu_ultra_moe", 77,
     2 * (2 * 1024 * 256 + 256 +
          3 * (4 * 256 + 128 * 256 + 128 + 512 * 128 + 96 * 256 + 64 + 512 * 64 + 256 * 256) +
          3 * 512 * 256 + 2 * (4 * 256 + 4 * 3 * 256 * 256 + 3 * 256 * 256) + 2 * 1024 * 256 +
          3 * 256 + 256 * 512),
     256, 8, 8, 32, 512, 1024, 2, 0, 4, 256, CKPT_QUANT_NONE, 1},
    /* pangu_pro_moe_v2: 3 layers (2: MTP) of 4 norms, q 320 / k 160 / v 96 x256, o 256x192,
     * k_layernorm [40], sinks [4,4,40] / [4,4,24]; the MoE of pangu_ultra_moe with F32 router
     * biases [4]; 79 tensors, BF16 */
    {"pangu_pro_moe_v2", 79,
     2 * (4 * 1024 * 256 + 4 * 256 + 256 * 512 + 3 * (4 * 256 + 576 * 256 + 256 * 192 + 1064) +
          3 * 512 * 256 + 2 * (4 * 256 + 15 * 256 * 256)) +
         32,
     256, 8, 4, 40, 512, 1024, 2, 0, 4, 256, CKPT_QUANT_NONE, 1},
    /* mimo_v2_flash: BF16; embed_tokens / lm_head [1000, 128] (untied), model.norm; 3 layers of 2
     * norms; layers 0 / 2 full attention (q 256x128, k 64x128, v 32x128: v_head_dim 16, o
     * 128x128), layer 1 SWA (q 384x128, k 96x128, v 48x128, o 128x192, sinks [16]); layer 0
     * dense (3 x 256x128); layers 1-2 MoE (F32 router 8x128 + bias [8], 8 experts 3 x 64x128);
     * one MTP norm [128] */
    {"mimo_v2_flash", 78,
     2 * (2 * 1000 * 128 + 128 + 3 * 2 * 128 + 2 * (256 + 64 + 32 + 128) * 128 +
          (384 + 96 + 48) * 128 + 128 * 192 + 16 + 3 * 256 * 128 + 2 * 8 * 3 * 64 * 128 + 128) +
         4 * 2 * (8 * 128 + 8),
     128, 8, 2, 32, 256, 1000, 3, 0, 8, 64, CKPT_QUANT_NONE, 1},
    /* llama_bidir_emb: F32; embed_tokens, norm under the base model's names (no model., no
     * lm_head); 2 layers of norms, q / o 128x128, k / v 64x128, gate / up 192x128, down
     * 128x192; tied as the 1B release (nothing to drop) */
    {"llama_bidir_emb", 20,
     4 * (1000 * 128 + 128 + 2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 3 * 192 * 128)), 128, 4,
     2, 32, 192, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* llama_bidir_cls: llama_bidir_emb's decoder under model., score.weight 1x128, no lm_head */
    {"llama_bidir_cls", 21,
     4 * (1000 * 128 + 2 * 128 + 2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 3 * 192 * 128)), 128,
     4, 2, 32, 192, 1000, 2, 1, 0, -1, CKPT_QUANT_NONE, 1},
    /* gritlm: F32; MistralForCausalLM's tensors, untied lm_head 1000x128 */
    {"gritlm", 21,
     4 * (2 * 1000 * 128 + 128 + 2 * (2 * 128 + 2 * 128 * 128 + 2 * 64 * 128 + 3 * 192 * 128)), 128,
     4, 2, 32, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* nomic_bert: F32; word 1000x128, token types 2x128, emb_ln; per layer Wqkv 384x128, out_proj
     * 128x128, fc11 / fc12 192x128, fc2 128x192, every bias, norm1 / norm2 with biases */
    {"nomic_bert", 32,
     4 * (1000 * 128 + 4 * 128 + 2 * (384 * 129 + 128 * 129 + 2 * 192 * 129 + 128 * 193 + 4 * 128)),
     128, 8, 8, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* gte_new: F32; word 1000x128, token types 1x128, embeddings.LayerNorm; per layer qkv_proj
     * 384x128 and o_proj 128x128 with biases, up_gate_proj 384x128 (no bias), down_proj 128x192
     * with its bias, attn_ln / mlp_ln with biases */
    {"gte_new", 26,
     4 * (1000 * 128 + 3 * 128 + 2 * (384 * 129 + 128 * 129 + 384 * 128 + 128 * 193 + 4 * 128)),
     128, 8, 8, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* gte_new_cls: gte_new's under new., new.pooler.dense 128x128, classifier 1x128, biases */
    {"gte_new_cls", 30,
     4 * (1000 * 128 + 3 * 128 + 2 * (384 * 129 + 128 * 129 + 384 * 128 + 128 * 193 + 4 * 128) +
          129 * 128 + 129),
     128, 8, 8, 16, 192, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 1},
    /* minimax_vl_01: minimax_text01's LM, llava's CLIP tower, linear_1 [256, 64] / linear_2 [256,
     * 256] with biases, image_newline [256]; two files */
    {"minimax_vl_01", 123,
     MM_BYTES + 2 * (64 + 64 * 3 * 14 * 14 + 5 * 64 + 4 * 64 +
                     2 * (4 * 64 + 4 * (64 * 64 + 64) + 128 * 64 + 128 + 64 * 128 + 64) + 256 * 64 +
                     256 * 256 + 3 * 256),
     256, 8, 4, 32, 128, 1000, 4, 0, 4, 128, CKPT_QUANT_NONE, 2},
    /* phi3v: phi3's LM (PHI3_LAYER, test_fixtures_expect.h), CLIP ViT-L/14-336's embeddings
     * (class, patch [1024, 3, 14, 14], 577 positions), pre_layrnorm / post_layernorm, one block
     * (LayerNorms, q/k/v/out_proj, fc1 [4096, 1024], fc2 with biases), glb_GN / sub_GN [4096],
     * img_projection.0 [256, 4096] / .2 [256, 256] with biases; two files */
    {"phi3v", 44,
     2 * (2 * 1000 * 256 + 256) + 2 * PHI3_LAYER +
         2 * (1024 + 1024 * 3 * 14 * 14 + 577 * 1024 + 8 * 1024 + 4 * (1024 * 1024 + 1024) +
              2 * 4096 * 1024 + 4096 + 1024 + 2 * 4096 + 256 * 4096 + 256 * 256 + 2 * 256),
     256, 8, 2, 32, 512, 1000, 2, 0, 0, -1, CKPT_QUANT_NONE, 2},
};
#define N_FAMS_MM (sizeof(fams_mm) / sizeof(fams_mm[0]))
#define N_FAMS    (N_FAMS_A + N_FAMS_MM + sizeof(fams_more) / sizeof(fams_more[0]))

/* Family i of the three tables, in list order. */
static const fam_expect *fam_at(size_t i)
{
	if (i < N_FAMS_A)
		return &fams[i];
	if (i < N_FAMS_A + N_FAMS_MM)
		return &fams_mm[i - N_FAMS_A];
	return &fams_more[i - N_FAMS_A - N_FAMS_MM];
}

#endif
