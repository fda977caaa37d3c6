# shard_cli_families3.bash — shard_cli.sh's family checks, continued (sourced by it; $CTL, $T,
# fail and the fixtures are its): from Granite Speech to ChatGLM (shard_cli_families3b.bash goes
# on from EXAONE).

# GraniteSpeechForConditionalGeneration: Granite's LM, untied (lm_head cut); the conformer's
# ff1 / ff2 up_proj by rows and down_proj by columns, BF16 (vLLM builds the blocks without the
# quantization config), encoder.out / out_mid by rows / columns and quantized, the rest of the
# encoder and the Q-Former projector whole and BF16; num_batches_tracked skipped; a Q-Former
# with text input refused
"$CTL" plan --model-dir "$T/granite_speech" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan granite_speech"
grep -q "lm_head tied" "$T/plan" && fail "granite_speech: tied: $(cat "$T/plan")"
plan_has granite_speech "skipped encoder.layers.0.conv.batch_norm.num_batches_tracked" \
	"encoder.layers.1.ff1.up_proj.weight *BF16 *\[64, 64\]" \
	"encoder.layers.1.ff1.up_proj.bias *BF16 *\[64\]" \
	"encoder.layers.1.ff2.down_proj.weight *BF16 *\[64, 64\]" \
	"encoder.layers.0.attn.to_kv.weight *BF16 *\[128, 64\]" \
	"encoder.layers.0.conv.up_conv.weight *BF16 *\[256, 64, 1\]" \
	"encoder.out.weight *I8 *\[32, 64\]" "encoder.out.weight_scale *F32 *\[32, 1\]" \
	"encoder.out_mid.weight *I8 *\[64, 32\]" "encoder.out_mid.bias *BF16 *\[64\]" \
	"projector.query *BF16 *\[1, 2, 64\]" \
	"projector.qformer.encoder.layer.0.crossattention.attention.key.weight *BF16 *\[64, 64\]" \
	"projector.linear.weight *BF16 *\[128, 64\]" \
	"language_model.lm_head.weight *BF16 *\[512, 128\]" \
	"language_model.model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]"
grep -q "ff1.up_proj.weight_scale\|projector.linear.weight_scale" "$T/plan" &&
	fail "granite_speech: a feed-forward or the projector quantized: $(cat "$T/plan")"
refused_edit granite_speech 's/"use_qformer_text_input": false/"use_qformer_text_input": true/' "use_qformer_text_input"
# Blip2ForConditionalGeneration: OPT's rows under language_model. (tied: no lm_head); the BLIP
# tower's fused self_attn.qkv [192, 64] by heads (96 rows a rank at TP 2, quantized, its bias
# alike), projection by columns; the Q-Former, query_tokens and language_projection whole and
# unquantized; a flan-t5 text_config refused
"$CTL" plan --model-dir "$T/blip2" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan blip2"
plan_has blip2 "vision_model.encoder.layers.1.self_attn.qkv.weight *I8 *\[96, 64\]" \
	"vision_model.encoder.layers.1.self_attn.qkv.bias *BF16 *\[96\]" \
	"vision_model.encoder.layers.1.self_attn.projection.weight *I8 *\[64, 32\]" \
	"qformer.encoder.layer.2.crossattention.attention.key.weight *BF16 *\[48, 64\]" \
	"query_tokens *BF16 *\[1, 4, 48\]" "language_projection.weight *BF16 *\[128, 48\]" \
	"language_model.model.decoder.layers.1.self_attn.qkv_proj.weight *I8 *\[192, 128\]"
grep -q "lm_head tied" "$T/plan" || fail "blip2: lm_head not tied"
grep -q "lm_head.weight\|qformer.*_scale\|layer\.1\.crossattention" "$T/plan" &&
	fail "blip2: lm_head, a Q-Former scale or layer 1's cross-attention"
refused_edit blip2 's/"model_type": "opt"/"model_type": "t5"/' "text_config.model_type 't5'"
# VoxtralForConditionalGeneration: Llama's LM, untied (lm_head cut); the Whisper encoder's q/k/v
# fused by heads into qkv_proj (its bias [q_r; zeros; v_r]), out_proj / fc2 by columns, fc1 by
# rows, those weights quantized, convs / positions / norms / biases whole and BF16, the projector
# whole and BF16; another audio_config.model_type refused
"$CTL" plan --model-dir "$T/voxtral" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan voxtral"
grep -q "lm_head tied" "$T/plan" && fail "voxtral: tied: $(cat "$T/plan")"
plan_has voxtral "audio_tower.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 64\]" \
	"audio_tower.layers.1.self_attn.qkv_proj.bias *BF16 *\[96\]" \
	"audio_tower.layers.0.self_attn.out_proj.weight *I8 *\[64, 32\]" \
	"audio_tower.layers.0.self_attn.out_proj.bias *BF16 *\[64\]" \
	"audio_tower.layers.1.fc1.weight *I8 *\[128, 64\]" "audio_tower.layers.1.fc1.bias *BF16 *\[128\]" \
	"audio_tower.layers.1.fc2.weight *I8 *\[64, 128\]" "audio_tower.conv1.weight *BF16 *\[64, 16, 3\]" \
	"audio_tower.embed_positions.weight *BF16 *\[16, 64\]" \
	"multi_modal_projector.linear_1.weight *BF16 *\[128, 256\]" \
	"multi_modal_projector.linear_2.weight *BF16 *\[128, 128\]" \
	"language_model.lm_head.weight *BF16 *\[512, 128\]" \
	"language_model.model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]"
grep -q "projector.linear_1.weight_scale\|conv1.weight_scale\|q_proj\|k_proj" "$T/plan" &&
	fail "voxtral: the projector or a conv quantized, or q/k/v unfused: $(cat "$T/plan")"
refused_edit voxtral 's/"voxtral_encoder"/"whisper"/' "audio_config.model_type 'whisper'"
# MllamaForConditionalGeneration: Llama's LM untied; the cross-attention layer's q / k / v
# fused and quantized, its q_norm / k_norm and gates whole; embed_tokens' 1032 rows padded to
# 1088 apart from lm_head's 1024; the Conv2d patch embedding by output channels and BF16
# (built without the quantization config), the vision layers' q / k / v / fc1 / fc2 and the
# projector quantized, the tile embeddings and gates whole and BF16; a tied text_config refused
"$CTL" plan --model-dir "$T/mllama" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan mllama"
plan_has mllama "language_model.model.embed_tokens.weight *BF16 *\[544, 128\]" \
	"language_model.lm_head.weight *BF16 *\[512, 128\]" \
	"language_model.model.layers.1.cross_attn.qkv_proj.weight *I8 *\[96, 128\]" \
	"language_model.model.layers.1.cross_attn.q_norm.weight *BF16 *\[16\]" \
	"language_model.model.layers.1.cross_attn_attn_gate *BF16 *\[1\]" \
	"language_model.model.layers.2.self_attn.qkv_proj.weight *I8 *\[96, 128\]" \
	"vision_model.patch_embedding.weight *BF16 *\[32, 3, 14, 14\]" \
	"vision_model.transformer.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 64\]" \
	"vision_model.global_transformer.layers.0.mlp.fc2.weight *I8 *\[64, 64\]" \
	"vision_model.global_transformer.layers.0.gate_attn *BF16 *\[1\]" \
	"vision_model.gated_positional_embedding.tile_embedding.weight *BF16 *\[4, 640\]" \
	"multi_modal_projector.weight *I8 *\[64, 128\]" \
	"multi_modal_projector.bias *BF16 *\[64\]"
grep -q "patch_embedding.weight_scale\|model.layers.1.self_attn" "$T/plan" &&
	fail "mllama: the patch embedding quantized or layer 1 self-attention: $(cat "$T/plan")"
refused_edit mllama 's/"tie_word_embeddings": false/"tie_word_embeddings": true/' "tie_word_embeddings is true"

# Aria: int8-channel TP 2 rank 1: the experts' stacks transposed into w13 / w2 and quantized per
# expert row, the shared experts merged and quantized, the router whole and BF16; the tower
# quantized as idefics3's and its post_layernorm skipped; the projector whole and BF16 but its
# FFN (linear_in rows, linear_out columns, still BF16); a text_config without model_type refused
"$CTL" plan --model-dir "$T/aria" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan aria"
grep -q "lm_head tied" "$T/plan" && fail "aria: tied: $(cat "$T/plan")"
plan_has aria "skipped vision_tower.post_layernorm.weight" \
	"language_model.model.layers.1.mlp.experts.w13_weight *I8 *\[4, 64, 128\]" \
	"language_model.model.layers.1.mlp.experts.w13_weight_scale *F32 *\[4, 64, 1\]" \
	"language_model.model.layers.1.mlp.experts.w2_weight *I8 *\[4, 128, 32\]" \
	"language_model.model.layers.1.mlp.router.weight *BF16 *\[4, 128\]" \
	"language_model.model.layers.1.mlp.shared_experts.gate_up_proj.weight *I8 *\[128, 128\]" \
	"language_model.model.layers.1.mlp.shared_experts.down_proj.weight *I8 *\[128, 64\]" \
	"vision_tower.encoder.layers.1.mlp.fc1.weight *I8 *\[64, 64\]" \
	"multi_modal_projector.query *BF16 *\[8, 64\]" \
	"multi_modal_projector.cross_attn.multihead_attn.in_proj_weight *BF16 *\[192, 64\]" \
	"multi_modal_projector.feed_forward.linear_in.weight *BF16 *\[64, 64\]" \
	"multi_modal_projector.feed_forward.linear_out.weight *BF16 *\[128, 64\]" \
	"language_model.lm_head.weight *BF16 *\[512, 128\]"
grep -q "multi_modal_projector.*_scale\|router.weight_scale" "$T/plan" &&
	fail "aria: the projector or the router quantized: $(cat "$T/plan")"
refused_edit aria 's/"model_type": "aria_text",//' "text_config has no model_type"

# Zamba2ForCausalLM: every layer's Mamba2 mixer cut as Granite 4.0's (mamba. or a hybrid layer's
# mamba_decoder.mamba.), in_proj / out_proj quantized; the shared blocks under the first hybrid
# layer running each: q / k / v fused by heads, the adapters' A by rows of adapter_rank and B by
# rows ([gate_r; up_r] for gate_up's), every Linear quantized, norms BF16; linear whole and
# quantized; tied (vLLM always ties); TP 8 refused by the mixer's 4 groups, use_shared_mlp_adapter
# false refused
"$CTL" plan --model-dir "$T/zamba2" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan zamba2"
grep -q "lm_head tied" "$T/plan" || fail "zamba2: untied: $(cat "$T/plan")"
plan_has zamba2 "model.embed_tokens.weight *BF16 *\[512, 64\]" \
	"model.layers.1.shared_transformer.self_attn.qkv_proj.weight *I8 *\[192, 128\]" \
	"model.layers.1.shared_transformer.self_attn.linear_q_adapter_list.2.0.weight *I8 *\[4, 128\]" \
	"model.layers.2.shared_transformer.feed_forward.gate_up_proj_adapter_list.1.1.weight *I8 *\[128, 8\]" \
	"model.layers.2.shared_transformer.feed_forward.gate_up_proj.weight *I8 *\[128, 64\]" \
	"model.layers.1.shared_transformer.input_layernorm.weight *BF16 *\[128\]" \
	"model.layers.4.linear.weight *I8 *\[64, 64\]" \
	"model.layers.4.mamba_decoder.mamba.in_proj.weight *I8 *\[196, 64\]" \
	"model.layers.0.mamba.conv1d.weight *BF16 *\[128, 1, 4\]"
"$CTL" plan --model-dir "$T/zamba2" --tp-size 8 >/dev/null 2>"$T/err" && fail "zamba2 TP 8 planned"
grep -q "mamba_n_groups 4" "$T/err" || fail "zamba2 TP 8: $(cat "$T/err")"
refused_edit zamba2 's/"use_conv_bias": true/"use_conv_bias": true, "use_shared_mlp_adapter": false/' "use_shared_mlp_adapter"

# Qwen3ForSequenceClassification: Qwen3's decoder cut as Qwen3ForCausalLM's (q/k/v fused by
# heads, every Linear quantized, q / k norms and the embedding BF16), no lm_head, score.weight
# [num_labels, hid] whole on every rank and quantized (vLLM's ReplicatedLinear built with the
# quantization config); classifier_from_token (vLLM's online conversion) refused
"$CTL" plan --model-dir "$T/qwen3_cls" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan qwen3_cls"
plan_has qwen3_cls "model.embed_tokens.weight *F32 *\[512, 128\]" \
	"model.layers.1.self_attn.qkv_proj.weight *I8 *\[192, 128\]" \
	"model.layers.1.self_attn.q_norm.weight *F32 *\[48\]" \
	"model.layers.0.mlp.gate_up_proj.weight *I8 *\[192, 128\]" \
	"score.weight *I8 *\[1, 128\]"
grep -q "lm_head" "$T/plan" && fail "qwen3_cls: an lm_head: $(cat "$T/plan")"
refused_edit qwen3_cls 's/"use_cache": true/"use_cache": true, "classifier_from_token": ["no", "yes"]/' \
	"classifier_from_token"

# BertForSequenceClassification / BertForTokenClassification: BertModel's cut under bert. (q/k/v
# fused by heads and quantized, intermediate.dense by rows, the embeddings F32), the pooler
# (the sequence classifier's; the token classifier builds none) and classifier whole and never
# quantized (plain nn.Linear in vLLM); position_embedding_type other than absolute and
# is_decoder refused
"$CTL" plan --model-dir "$T/bert_cls" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan bert_cls"
plan_has bert_cls "bert.encoder.layer.1.attention.self.qkv_proj.weight *I8 *\[192, 128\]" \
	"bert.encoder.layer.0.intermediate.dense.weight *I8 *\[256, 128\]" \
	"bert.embeddings.position_embeddings.weight *F32 *\[64, 128\]" \
	"bert.pooler.dense.weight *F32 *\[128, 128\]" "classifier.weight *F32 *\[2, 128\]" \
	"classifier.bias *F32 *\[2\]"
grep -q "classifier.weight_scale\|pooler.dense.weight_scale" "$T/plan" &&
	fail "bert_cls: the head quantized: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/bert_tok" --tp-size 4 --tp-rank 3 --rank-only >"$T/plan" ||
	fail "plan bert_tok"
plan_has bert_tok "bert.encoder.layer.1.attention.self.qkv_proj.weight *F32 *\[96, 128\]" \
	"classifier.weight *F32 *\[4, 128\]" "classifier.bias *F32 *\[4\]"
grep -q "pooler" "$T/plan" && fail "bert_tok: a pooler: $(cat "$T/plan")"
refused_edit bert_cls 's/"position_embedding_type": "absolute"/"position_embedding_type": "relative_key"/' \
	"position_embedding_type"
refused_edit bert_tok 's/"use_cache": true/"use_cache": true, "is_decoder": true/' "is_decoder"
# Qwen2_5OmniForConditionalGeneration: the thinker's Qwen2 LM under thinker. (q/k/v with biases by
# heads, quantized; untied: thinker.lm_head cut); the vision tower's attn.q / k / v fused into
# attn.qkv by heads (quantized, its bias alike), the gated MLP and the merger quantized, the patch
# embed BF16; the audio encoder whole and BF16 (transformers' own modules in vLLM); the speech
# generator skipped; an audio output_dim other than the LM's hidden_size refused
"$CTL" plan --model-dir "$T/qwen2_5_omni" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan qwen2_5_omni"
grep -q "lm_head tied" "$T/plan" && fail "qwen2_5_omni: tied: $(cat "$T/plan")"
plan_has qwen2_5_omni "thinker.model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]" \
	"thinker.model.layers.1.self_attn.qkv_proj.bias *BF16 *\[128\]" \
	"thinker.lm_head.weight *BF16 *\[512, 128\]" \
	"thinker.visual.blocks.1.attn.qkv.weight *I8 *\[96, 64\]" \
	"thinker.visual.blocks.1.attn.qkv.bias *BF16 *\[96\]" \
	"thinker.visual.blocks.0.mlp.gate_up_proj.weight *I8 *\[128, 64\]" \
	"thinker.visual.merger.mlp.0.weight *I8 *\[128, 256\]" \
	"thinker.visual.patch_embed.proj.weight *BF16 *\[64, 3, 2, 14, 14\]" \
	"thinker.audio_tower.layers.1.fc1.weight *BF16 *\[96, 32\]" \
	"thinker.audio_tower.proj.weight *BF16 *\[128, 32\]" \
	"skipped talker.codec_head.weight" "skipped token2wav.code2wav_dit_model.proj_out.weight"
grep -q "audio_tower.*_scale" "$T/plan" && fail "qwen2_5_omni: the audio encoder quantized: $(cat "$T/plan")"
refused_edit qwen2_5_omni 's/"output_dim": 128/"output_dim": 64/' "audio_config.output_dim 64"
# Gemma3nForCausalLM: Gemma 3's attention (q/k/v fused by heads, q / k norms) and MLP, Laurel's
# linear_left by rows and linear_right by columns, per_layer_model_projection and AltUp's
# projections by rows (gathered ColumnParallelLinears), the AltUp coefficients / router and the
# per-layer gate / projection whole (ReplicatedLinear), every Linear quantized, both
# embeddings by their own padded vocabulary rows, tied; TP 8 refused by the 4 heads, a
# hidden_activation vLLM refuses refused
"$CTL" plan --model-dir "$T/gemma3n_text" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan gemma3n_text"
grep -q "lm_head tied" "$T/plan" || fail "gemma3n_text: untied: $(cat "$T/plan")"
plan_has gemma3n_text "model.embed_tokens.weight *F32 *\[608, 64\]" \
	"model.embed_tokens_per_layer.weight *F32 *\[512, 80\]" \
	"model.per_layer_model_projection.weight *I8 *\[40, 64\]" \
	"model.altup_unembed_projections.2.weight *I8 *\[32, 64\]" \
	"model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 64\]" \
	"model.layers.1.laurel.linear_left.weight *I8 *\[8, 64\]" \
	"model.layers.1.laurel.linear_right.weight *I8 *\[64, 8\]" \
	"model.layers.4.altup.prediction_coefs.weight *I8 *\[16, 4\]" \
	"model.layers.4.per_layer_input_gate.weight *I8 *\[16, 64\]" \
	"model.layers.4.altup.correct_output_scale *F32 *\[64\]"
"$CTL" plan --model-dir "$T/gemma3n_text" --tp-size 8 >/dev/null 2>"$T/err" &&
	fail "gemma3n_text TP 8 planned"
grep -q "num_attention_heads 4" "$T/err" || fail "gemma3n_text TP 8: $(cat "$T/err")"
refused_edit gemma3n_text 's/"gelu_pytorch_tanh"/"gelu"/' "hidden_activation"
# Qwen2Model (a decoder embedding model saved as a base model): Qwen2ForCausalLM's cut (q/k/v
# and their biases fused by heads, every Linear quantized, norms, biases and the embedding kept
# F32) under the base model's names (no model. prefix), no lm_head; Gemma2Model's table asks
# for Gemma 2's norms around the MLP, which this checkpoint lacks
"$CTL" plan --model-dir "$T/qwen2_emb" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan qwen2_emb"
plan_has qwen2_emb "embed_tokens.weight *F32 *\[512, 128\]" \
	"layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]" \
	"layers.1.self_attn.qkv_proj.bias *F32 *\[128\]" \
	"layers.0.mlp.gate_up_proj.weight *I8 *\[192, 128\]" \
	"norm.weight *F32 *\[128\]"
grep -q "lm_head\|^ *model\." "$T/plan" && fail "qwen2_emb: lm_head or model.: $(cat "$T/plan")"
refused_edit qwen2_emb 's/"Qwen2Model"/"Gemma2Model"/' "pre_feedforward_layernorm"

# Qwen2ForRewardModel: Qwen2's decoder cut as Qwen2ForCausalLM's, no lm_head, the score head
# as vLLM's qwen2_rm.py builds it: score.0 (ColumnParallelLinear) and its bias by rows,
# score.2 (RowParallelLinear) by columns, both quantized, score.2.bias whole; a config.json
# num_labels does not change the class's one label
"$CTL" plan --model-dir "$T/qwen2_rm" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan qwen2_rm"
plan_has qwen2_rm "model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]" \
	"score.0.weight *I8 *\[64, 128\]" "score.0.bias *F32 *\[64\]" \
	"score.2.weight *I8 *\[1, 64\]" "score.2.bias *F32 *\[1\]"
grep -q "lm_head" "$T/plan" && fail "qwen2_rm: an lm_head: $(cat "$T/plan")"
refused_edit qwen2_rm 's/"Qwen2ForRewardModel"/"Qwen2ForProcessRewardModel"/' "implies \[2\]"

# Qwen3OmniMoeForConditionalGeneration: the thinker's Qwen3-MoE language model under thinker.
# (experts into w13 / w2, layer 1 dense), the Qwen3-VL style tower (qkv by heads, the merger's
# and merger_list's mlp.0 rows / mlp.2 columns, all quantized; patch embed and pos_embed whole),
# the audio encoder whole and BF16, talker.* / code2wav.* skipped; rope_scaling left out refused
"$CTL" plan --model-dir "$T/qwen3_omni_moe" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan qwen3_omni_moe"
grep -q "lm_head tied" "$T/plan" && fail "qwen3_omni_moe: tied: $(cat "$T/plan")"
plan_has qwen3_omni_moe "thinker.model.layers.0.mlp.experts.w13_weight *I8 *\[4, 64, 128\]" \
	"thinker.model.layers.2.mlp.experts.w2_weight *I8 *\[4, 128, 32\]" \
	"thinker.model.layers.1.mlp.gate_up_proj.weight *I8 *\[256, 128\]" \
	"thinker.model.layers.0.mlp.gate.weight *BF16 *\[4, 128\]" \
	"thinker.lm_head.weight *BF16 *\[512, 128\]" \
	"thinker.visual.blocks.1.attn.qkv.weight *I8 *\[96, 64\]" \
	"thinker.visual.merger_list.1.mlp.0.weight *I8 *\[128, 256\]" \
	"thinker.visual.merger_list.1.mlp.2.weight *I8 *\[128, 128\]" \
	"thinker.visual.pos_embed.weight *BF16 *\[16, 64\]" \
	"thinker.audio_tower.conv2d2.weight *BF16 *\[8, 8, 3, 3\]" \
	"thinker.audio_tower.conv_out.weight *BF16 *\[32, 16\]" \
	"skipped talker.codec_head.weight" "skipped code2wav.code_embedding.weight"
grep -q "audio_tower.*_scale" "$T/plan" && fail "qwen3_omni_moe: the audio encoder quantized: $(cat "$T/plan")"
refused_edit qwen3_omni_moe 's/"rope_scaling"/"rope_scaling_x"/' "text_config.rope_scaling"
# WhisperForConditionalGeneration: the encoder as Voxtral's (qkv_proj by heads, fc1 / fc2), the
# decoder's cross-attention encoder_attn.q_proj by rows and kv_proj [k_r; v_r] (vLLM's
# MergedColumnParallelLinear), both quantized; embed_tokens whole (a plain nn.Embedding in
# vLLM) and never quantized; no proj_out (tied whatever the config says: untied refused)
"$CTL" plan --model-dir "$T/whisper" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan whisper"
plan_has whisper "model.encoder.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 64\]" \
	"model.encoder.conv1.weight *F32 *\[64, 16, 3\]" \
	"model.decoder.layers.0.encoder_attn.q_proj.weight *I8 *\[32, 64\]" \
	"model.decoder.layers.0.encoder_attn.kv_proj.weight *I8 *\[64, 64\]" \
	"model.decoder.layers.0.encoder_attn.kv_proj.bias *F32 *\[64\]" \
	"model.decoder.layers.1.fc2.weight *I8 *\[64, 96\]" \
	"model.decoder.embed_tokens.weight *F32 *\[1000, 64\]"
grep -q "proj_out" "$T/plan" && fail "whisper: a proj_out: $(cat "$T/plan")"
refused_edit whisper 's/"scale_embedding": false/"scale_embedding": false, "tie_word_embeddings": false/' \
	"tie_word_embeddings false"
# GPT2ForSequenceClassification: GPT-2's cut (Conv1Ds transposed, quantized), no lm_head, the
# score head as vLLM's gpt2.py builds it: a plain nn.Linear without the quantization config,
# whole and F32 on every rank; an empty id2label and grouped kv heads refused
"$CTL" plan --model-dir "$T/gpt2_cls" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan gpt2_cls"
plan_has gpt2_cls "transformer.h.1.attn.c_attn.weight *I8 *\[192, 128\]" \
	"transformer.h.1.mlp.c_proj.weight *I8 *\[128, 256\]" "score.weight *F32 *\[2, 128\]"
grep -q "lm_head\|score.weight_scale" "$T/plan" && fail "gpt2_cls: lm_head or a score scale: $(cat "$T/plan")"
refused_edit gpt2_cls 's/"id2label":{[^}]*}/"id2label":{}/' "id2label is empty" flat
refused_edit gpt2_cls 's/"n_head": 8,/"n_head": 8, "num_key_value_heads": 2,/' \
	"GPT2ForSequenceClassification has no grouped kv heads"
# CLIPModel: the text tower's token and position tables by padded vocabulary rows, its q/k/v
# fused by heads and quantized, the CLIP vision tower whole (every block and post_layernorm),
# text_projection / visual_projection whole and never quantized; logit_scale and position_ids
# skipped; text_config.num_key_value_heads refused (CLIP's attention has one kv head per head)
"$CTL" plan --model-dir "$T/clip" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan clip"
plan_has clip "text_model.embeddings.token_embedding.weight *F32 *\[512, 96\]" \
	"text_model.embeddings.position_embedding.weight *F32 *\[32, 96\]" \
	"text_model.encoder.layers.1.self_attn.qkv_proj.weight *I8 *\[144, 96\]" \
	"text_model.encoder.layers.1.mlp.fc2.weight *I8 *\[96, 96\]" \
	"vision_model.encoder.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 64\]" \
	"vision_model.post_layernorm.weight *F32 *\[64\]" \
	"text_projection.weight *F32 *\[80, 96\]" "visual_projection.weight *F32 *\[80, 64\]"
grep -q "^skipped logit_scale" "$T/plan" && grep -q "^skipped text_model.embeddings.position_ids" \
	"$T/plan" || fail "clip: logit_scale / position_ids not skipped: $(cat "$T/plan")"
grep -q "^ *logit_scale\|^ *text_model.embeddings.position_ids" "$T/plan" &&
	fail "clip: a skipped tensor planned: $(cat "$T/plan")"
refused_edit clip 's/"max_position_embeddings": 16/"max_position_embeddings": 16, "num_key_value_heads": 2/' \
	"num_key_value_heads 2"
# InternLM2ForCausalLM: wqkv (packed per kv group in the checkpoint) as the rank's own
# [q_r; k_r; v_r] (TP 4: 2 q heads and its group's k / v, 4 * 16 rows) and quantized, wo / w2
# by columns, w1 / w3 merged into gate_up_proj, tok_embeddings / output by vocabulary rows and
# unquantized, the norms whole; bias true refused (vLLM builds wqkv / wo without biases)
"$CTL" plan --model-dir "$T/internlm2" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan internlm2"
plan_has internlm2 "model.layers.1.attention.wqkv.weight *I8 *\[64, 128\]" \
	"model.layers.1.attention.wo.weight *I8 *\[128, 32\]" \
	"model.layers.1.feed_forward.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.feed_forward.w2.weight *I8 *\[128, 48\]" \
	"model.layers.1.attention_norm.weight *F32 *\[128\]" \
	"model.tok_embeddings.weight *F32 *\[256, 128\]" "output.weight *F32 *\[256, 128\]"
grep -q "feed_forward.w1\|feed_forward.w3\|output.weight_scale" "$T/plan" &&
	fail "internlm2: w1 / w3 unmerged or output quantized: $(cat "$T/plan")"
refused_edit internlm2 's/"bias": false/"bias": true/' "bias is true"
# MiniMaxM2ForCausalLM at TP 4 (KV 2: ranks 2 and 3 share kv head 1): q/k/v fused by heads and
# quantized, q_norm by the rank's heads [64], k_norm its shared kv head's [32], o_proj by columns;
# the router and e_score_correction_bias whole and never quantized, the experts stacked (Ie 32 a
# rank) and quantized; a linear-attention layer in attn_type_list and a per-head q/k norm refused
"$CTL" plan --model-dir "$T/minimax_m2" --tp-size 4 --tp-rank 3 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan minimax_m2"
plan_has minimax_m2 "model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 256\]" \
	"model.layers.1.self_attn.q_norm.weight *BF16 *\[64\]" \
	"model.layers.1.self_attn.k_norm.weight *BF16 *\[32\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[256, 64\]" \
	"model.layers.2.block_sparse_moe.gate.weight *BF16 *\[4, 256\]" \
	"model.layers.2.block_sparse_moe.e_score_correction_bias *F32 *\[4\]" \
	"model.layers.2.block_sparse_moe.experts.w13_weight *I8 *\[4, 64, 256\]" \
	"model.layers.2.block_sparse_moe.experts.w2_weight *I8 *\[4, 256, 32\]" \
	"lm_head.weight *BF16 *\[256, 256\]"
grep -q "q_norm.weight_scale\|gate.weight_scale\|correction_bias_scale\|lm_head tied" "$T/plan" &&
	fail "minimax_m2: a norm or router quantized, or tied: $(cat "$T/plan")"
refused_edit minimax_m2 's/"attn_type_list":\[1,1,1\]/"attn_type_list":[1,0,1]/' \
	"attn_type_list\[1\] is not 1" flat
refused_edit minimax_m2 's/"qk_norm_type": "per_layer"/"qk_norm_type": "per_head"/' \
	"qk_norm_type is not"
# NemotronHForCausalLM: one mixer per layer ("M-M*-"): the Mamba2 mixer's in_proj / out_proj,
# the attention's fused qkv_proj / o_proj and the MLP's up_proj / down_proj quantized, conv1d /
# A_log / D / dt_bias / the gated norm, the norms, backbone.embeddings and the untied lm_head
# not; an attention layer's tensors where the pattern says "E" (MoE), a tied lm_head and
# attention biases refused
"$CTL" plan --model-dir "$T/nemotron_h" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan nemotron_h"
plan_has nemotron_h "backbone.layers.0.mixer.in_proj.weight *I8 *\[196, 64\]" \
	"backbone.layers.0.mixer.conv1d.weight *BF16 *\[128, 1, 4\]" \
	"backbone.layers.0.mixer.norm.weight *BF16 *\[64\]" \
	"backbone.layers.1.mixer.up_proj.weight *I8 *\[64, 64\]" \
	"backbone.layers.3.mixer.qkv_proj.weight *I8 *\[64, 64\]" \
	"backbone.layers.3.mixer.o_proj.weight *I8 *\[64, 32\]" \
	"backbone.layers.4.mixer.down_proj.weight *I8 *\[64, 64\]" \
	"backbone.embeddings.weight *BF16 *\[512, 64\]" "lm_head.weight *BF16 *\[512, 64\]"
refused_edit nemotron_h 's/"hybrid_override_pattern": "M-M\*-"/"hybrid_override_pattern": "M-ME-"/' \
	"a MoE layer"
refused_edit nemotron_h 's/"tie_word_embeddings": false/"tie_word_embeddings": true/' \
	"never ties"
refused_edit nemotron_h 's/"attention_bias": false/"attention_bias": true/' \
	"NemotronHAttention builds q/k/v and o_proj without biases"

# SiglipModel: CLIP's text tower (the text MLP of 96 / 192 left unquantized: SiglipMLP's
# quantizable needs multiples of 64), text_model.head whole and never quantized, the SigLIP
# vision tower whole with its quantized MLPs, the pooling head's MultiheadAttention whole and
# its MLP split; logit_scale / logit_bias skipped; vision_use_head false refused
"$CTL" plan --model-dir "$T/siglip" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan siglip"
plan_has siglip "text_model.embeddings.token_embedding.weight *F32 *\[512, 96\]" \
	"text_model.embeddings.position_embedding.weight *F32 *\[32, 96\]" \
	"text_model.encoder.layers.1.self_attn.qkv_proj.weight *I8 *\[144, 96\]" \
	"text_model.encoder.layers.1.mlp.fc1.weight *F32 *\[96, 96\]" \
	"text_model.encoder.layers.1.mlp.fc2.weight *F32 *\[96, 96\]" \
	"text_model.head.weight *F32 *\[80, 96\]" \
	"vision_model.encoder.layers.1.mlp.fc1.weight *I8 *\[64, 64\]" \
	"vision_model.head.attention.in_proj_weight *F32 *\[192, 64\]" \
	"vision_model.head.mlp.fc2.weight *I8 *\[64, 64\]"
grep -q "^skipped logit_scale" "$T/plan" && grep -q "^skipped logit_bias" "$T/plan" ||
	fail "siglip: logit_scale / logit_bias not skipped: $(cat "$T/plan")"
refused_edit siglip 's/"patch_size": 14/"patch_size": 14, "vision_use_head": false/' \
	"vision_use_head is false"

# JambaForSequenceClassification: Jamba's cut (the Mamba mixer never quantized, attention and
# experts quantized), score.weight whole and never quantized, no lm_head; score_bias refused
"$CTL" plan --model-dir "$T/jamba_cls" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan jamba_cls"
plan_has jamba_cls "model.layers.0.mamba.in_proj.weight *F32 *\[256, 128\]" \
	"model.layers.2.self_attn.qkv_proj.weight *I8 *\[128, 128\]" \
	"model.layers.1.feed_forward.experts.w13_weight *I8 *\[4, 64, 128\]" \
	"score.weight *F32 *\[2, 128\]"
grep -q "lm_head\|score.weight_scale" "$T/plan" && fail "jamba_cls: an lm_head or a score scale: $(cat "$T/plan")"
refused_edit jamba_cls 's/"attn_layer_offset": 2/"attn_layer_offset": 2, "score_bias": true/' \
	"score_bias true"

# ModernBertForTokenClassification: the sequence classifier's table (Wqkv by heads, nothing
# quantized, the head whole); an empty id2label refused
"$CTL" plan --model-dir "$T/modernbert_tok" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan modernbert_tok"
plan_has modernbert_tok "model.layers.1.attn.Wqkv.weight *F32 *\[192, 128\]" \
	"head.dense.bias *F32 *\[128\]" "classifier.weight *F32 *\[2, 128\]"
grep -q "weight_scale" "$T/plan" && fail "modernbert_tok: a quantized tensor: $(cat "$T/plan")"
refused_edit modernbert_tok 's/"id2label":{[^}]*}/"id2label":{}/' "id2label is empty" flat
# ChatGLMModel (THUDM's format): query_key_value [q; k; v] as the rank's [q_r; k_r; v_r]
# (TP 4: 2 q heads and its kv head, 4 * 16 rows) and quantized, its bias alike and unquantized,
# dense / dense_4h_to_h by columns, dense_h_to_4h [gate; up] re-cut, word_embeddings /
# output_layer by vocabulary rows and unquantized, the norms whole; add_bias_linear true refused
"$CTL" plan --model-dir "$T/chatglm" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan chatglm"
plan_has chatglm "transformer.encoder.layers.1.self_attention.query_key_value.weight *I8 *\[64, 128\]" \
	"transformer.encoder.layers.1.self_attention.query_key_value.bias *F32 *\[64\]" \
	"transformer.encoder.layers.1.self_attention.dense.weight *I8 *\[128, 32\]" \
	"transformer.encoder.layers.1.mlp.dense_h_to_4h.weight *I8 *\[96, 128\]" \
	"transformer.encoder.layers.1.mlp.dense_4h_to_h.weight *I8 *\[128, 48\]" \
	"transformer.encoder.layers.1.input_layernorm.weight *F32 *\[128\]" \
	"transformer.embedding.word_embeddings.weight *F32 *\[256, 128\]" \
	"transformer.output_layer.weight *F32 *\[256, 128\]"
grep -q "query_key_value.bias_scale\|output_layer.weight_scale" "$T/plan" &&
	fail "chatglm: the qkv bias or output_layer quantized: $(cat "$T/plan")"
refused_edit chatglm 's/"add_bias_linear": false/"add_bias_linear": true/' "add_bias_linear is true"
