# shard_cli_families4.bash — shard_cli.sh's family checks, continued (sourced by it; $CTL, $T,
# fail, plan_has, refused_edit and the fixtures are its): the families added after Aquila
# (shard_cli_families3.bash had grown near 800 lines). Each family's block: its plan lines at
# one rank and scheme, and the config.json edits it refuses, naming the key.

# StableLM Epoch: StableLM's cut (vLLM's stablelm.py) read from the remote config's keys (GQA 8 /
# 4; TP 4: 2 q heads and one kv head a rank), the q/k/v biases fused beside qkv_proj and the
# LayerNorm biases kept in F32, lm_head unquantized; rope_pct left out and use_qkv_bias false over
# the checkpoint's biases refused
"$CTL" plan --model-dir "$T/stablelm_epoch" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan stablelm_epoch"
plan_has stablelm_epoch "model.layers.1.self_attn.qkv_proj.weight *I8 *\[64, 128\]" \
	"model.layers.1.self_attn.qkv_proj.bias *F32 *\[64\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.layers.1.input_layernorm.bias *F32 *\[128\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "lm_head.weight_scale\|o_proj.bias" "$T/plan" &&
	fail "stablelm_epoch: an o_proj bias or a quantized lm_head: $(cat "$T/plan")"
refused_edit stablelm_epoch '/"rope_pct"/d' "rope_pct"
refused_edit stablelm_epoch 's/"use_qkv_bias": true/"use_qkv_bias": false/' "use_qkv_bias is false"

# Tele-FLM: vLLM's teleflm.py cut (Llama's; MHA 8 / 8, TP 4: 2 q, 2 k, 2 v heads a rank), no
# biases, untied lm_head by vocabulary rows unquantized; the muP keys change no tensor, and a
# use_mup that is not a boolean, a mup_scale_factor of 0 and a missing input_mult are refused
"$CTL" plan --model-dir "$T/teleflm" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan teleflm"
plan_has teleflm "model.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "\.bias\|lm_head.weight_scale" "$T/plan" &&
	fail "teleflm: a bias or a quantized lm_head: $(cat "$T/plan")"
refused_edit teleflm 's/"use_mup": true/"use_mup": 1/' "use_mup"
refused_edit teleflm 's/"mup_scale_factor": 0.8/"mup_scale_factor": 0/' "mup_scale_factor"
refused_edit teleflm 's/"input_mult": 3.0/"inputmult": 3.0/' "input_mult"

# RWForCausalLM (falcon-40b's config.json, model_type RefinedWeb): falcon.py's cut under RWConfig's
# keys (TP 4: 2 q heads and the rank's kv group, replicated; the MLP 4 * 128), tied; without
# new_decoder_architecture at this width (RWConfig sets it only at 8192), with parallel_attn
# absent (RWConfig's false) and with apply_residual_connection_post_layernorm true refused
"$CTL" plan --model-dir "$T/falcon_rw" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan falcon_rw"
plan_has falcon_rw "transformer.h.1.self_attention.query_key_value.weight *I8 *\[64, 128\]" \
	"transformer.h.1.self_attention.dense.weight *I8 *\[128, 32\]" \
	"transformer.h.1.mlp.dense_h_to_4h.weight *I8 *\[128, 128\]" \
	"transformer.h.1.mlp.dense_4h_to_h.weight *I8 *\[128, 128\]" \
	"transformer.h.1.ln_attn.weight *BF16 *\[128\]" \
	"transformer.word_embeddings.weight *BF16 *\[256, 128\]"
grep -q "^ *lm_head\.weight \|\.bias .*I8" "$T/plan" &&
	fail "falcon_rw: an lm_head or a quantized bias: $(cat "$T/plan")"
refused_edit falcon_rw '/"new_decoder_architecture"/d' "without new_decoder_architecture"
refused_edit falcon_rw '/"parallel_attn"/d' "parallel_attn false"
refused_edit falcon_rw 's/"apply_residual_connection_post_layernorm": false/"apply_residual_connection_post_layernorm": true/' \
	"apply_residual_connection_post_layernorm true"

# MiniMax-Text-01 under its remote name (MiniMaxText01ForCausalLM): the minimax cut (TP 4: the
# lightning attention's 2 whole heads of qkv_proj / output_gate rows, norm channels, out_proj
# columns; the softmax layer's 2 q heads and its kv head; experts' Ie rows), the layer kinds from
# attn_type_list, the lightning norm and routers unquantized; attn_type_list missing,
# shared_intermediate_size above 0 and tie_word_embeddings true refused
"$CTL" plan --model-dir "$T/minimax_text01" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan minimax_text01"
plan_has minimax_text01 "model.layers.0.self_attn.qkv_proj.weight *I8 *\[192, 256\]" \
	"model.layers.0.self_attn.output_gate.weight *I8 *\[64, 256\]" \
	"model.layers.0.self_attn.norm.weight *BF16 *\[64\]" \
	"model.layers.0.self_attn.out_proj.weight *I8 *\[256, 64\]" \
	"model.layers.2.self_attn.qkv_proj.weight *I8 *\[128, 256\]" \
	"model.layers.2.self_attn.o_proj.weight *I8 *\[256, 64\]" \
	"model.layers.1.block_sparse_moe.experts.w13_weight *I8 *\[4, 64, 256\]" \
	"model.layers.1.block_sparse_moe.gate.weight *BF16 *\[4, 256\]"
grep -q "self_attn\.norm\.weight_scale\|block_sparse_moe\.gate\.weight_scale" "$T/plan" &&
	fail "minimax_text01: a quantized norm or router: $(cat "$T/plan")"
refused_edit minimax_text01 's/"attn_type_list"/"attn_type_lst"/' "attn_type_list is missing"
refused_edit minimax_text01 's/"shared_intermediate_size": 0/"shared_intermediate_size": 64/' \
	"shared_intermediate_size"
refused_edit minimax_text01 's/"tie_word_embeddings": false/"tie_word_embeddings": true/' \
	"tie_word_embeddings"

# Solar: vLLM's solar.py cut (Llama's: GQA 8 / 2; TP 4: 2 q heads, the rank's kv head replicated),
# no biases, untied lm_head by vocabulary rows unquantized, the skip connections storing nothing;
# hidden_act other than silu, a skip saved at layer 0 and a mix with nothing saved refused
"$CTL" plan --model-dir "$T/solar" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan solar"
plan_has solar "model.layers.3.self_attn.qkv_proj.weight *I8 *\[64, 128\]" \
	"model.layers.3.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.3.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.3.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "\.bias\|lm_head.weight_scale\|model.layers.4\." "$T/plan" &&
	fail "solar: a bias, a quantized lm_head or a fifth layer: $(cat "$T/plan")"
refused_edit solar 's/"hidden_act": "silu"/"hidden_act": "gelu"/' "hidden_act"
refused_edit solar 's/"bskcn_2":\[1\]/"bskcn_2":[0,1]/' "bskcn_2" flat
refused_edit solar 's/"bskcn_1":\[1,2\]/"bskcn_1":[]/' "bskcn_3 names layer 3" flat
refused_edit solar 's/"bskcn_tv":\[0.9,0.7\]/"bskcn_tv":[0.7]/' "bskcn_tv" flat

# MiMo: vLLM's mimo.py cut over Qwen2's (GQA 8 / 2; TP 4: 2 q heads, the rank's kv head
# replicated), the q/k/v biases fused beside the weight and unquantized, no o_proj bias, untied
# lm_head unquantized; the MTP layer's 16 tensors listed as skipped; a hidden_act other than silu
# and a num_nextn_predict_layers that is no count refused, naming the key
"$CTL" plan --model-dir "$T/mimo" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan mimo"
plan_has mimo "model.layers.1.self_attn.qkv_proj.weight *I8 *\[64, 128\]" \
	"model.layers.1.self_attn.qkv_proj.bias *F32 *\[64\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]" \
	"skipped model.mtp_layers.0.input_proj.weight" \
	"skipped model.mtp_layers.0.self_attn.q_proj.bias"
[ "$(grep -c "^skipped model.mtp_layers.0." "$T/plan")" = 16 ] ||
	fail "mimo: not the 16 MTP tensors skipped: $(cat "$T/plan")"
grep -q "o_proj.bias\|lm_head.weight_scale\|^ *model.mtp" "$T/plan" &&
	fail "mimo: an o_proj bias, a quantized lm_head or an MTP tensor served: $(cat "$T/plan")"
refused_edit mimo 's/"hidden_act": "silu"/"hidden_act": "gelu"/' "hidden_act"
refused_edit mimo 's/"num_nextn_predict_layers": 1/"num_nextn_predict_layers": "1"/' \
	"num_nextn_predict_layers"

# DeepSeek-MoE: vLLM's deepseek_v2.py cut with DeepseekAttention (q/k/v fused by heads, no bias),
# layer 0's dense MLP and layer 1's shared experts merged, the router whole and unquantized, the
# experts stacked; the embedding and lm_head unquantized; hidden_act other than silu,
# attention_bias true, a tie and a non-softmax scoring_func refused
"$CTL" plan --model-dir "$T/deepseek_moe" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan deepseek_moe"
plan_has deepseek_moe "model.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.0.mlp.gate_up_proj.weight *I8 *\[128, 128\]" \
	"model.layers.0.mlp.down_proj.weight *I8 *\[128, 64\]" \
	"model.layers.1.mlp.gate.weight *BF16 *\[8, 128\]" \
	"model.layers.1.mlp.experts.w13_weight *I8 *\[8, 32, 128\]" \
	"model.layers.1.mlp.experts.w2_weight *I8 *\[8, 128, 16\]" \
	"model.layers.1.mlp.shared_experts.gate_up_proj.weight *I8 *\[64, 128\]" \
	"model.layers.1.mlp.shared_experts.down_proj.weight *I8 *\[128, 32\]" \
	"model.embed_tokens.weight *BF16 *\[256, 128\]" "lm_head.weight *BF16 *\[256, 128\]"
grep -q "\.bias\|lm_head.weight_scale\|mlp.gate.weight_scale" "$T/plan" &&
	fail "deepseek_moe: a bias, a quantized lm_head or router: $(cat "$T/plan")"
refused_edit deepseek_moe 's/"hidden_act": "silu"/"hidden_act": "gelu"/' "hidden_act"
refused_edit deepseek_moe 's/"attention_bias": false/"attention_bias": true/' "attention_bias"
refused_edit deepseek_moe 's/"tie_word_embeddings": false/"tie_word_embeddings": true/' \
	"tie_word_embeddings"
refused_edit deepseek_moe 's/"scoring_func": "softmax"/"scoring_func": "sigmoid"/' "scoring_func"

# TeleChat (TeleChatForCausalLM, the first generation): TeleChat2's cut under Llama's runtime names
# (TP 4: 2 heads' query rows and their de-interleaved k / v rows), the dense and down_proj biases
# whole and unquantized, tied (no lm_head); TeleChat2's refusals (embed_layernorm true)
"$CTL" plan --model-dir "$T/telechat" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan telechat"
plan_has telechat "model.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.self_attn.o_proj.bias *F32 *\[128\]" \
	"model.layers.1.mlp.down_proj.bias *F32 *\[128\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]"
grep -q "^ *lm_head\.\|^ *transformer\.\|key_value" "$T/plan" &&
	fail "telechat: lm_head or a checkpoint name served: $(cat "$T/plan")"
refused_edit telechat 's/"embed_layernorm": false/"embed_layernorm": true/' "embed_layernorm"

# InternLM2-VE (InternLM2VEForCausalLM, Mono-InternVL's language model): InternLM2's cut (TP 4:
# rank 1 its kv group whole, 2 q heads and their k / v, 4 * 16 rows) with the visual expert
# feed_forward_ve cut and quantized as feed_forward (w1 / w3 into feed_forward_ve.gate_up_proj,
# w2 by columns), tok_embeddings / output unquantized; bias true refused; InternLM2ForCausalLM
# over the same checkpoint refused naming feed_forward_ve (internlm2.py has none)
"$CTL" plan --model-dir "$T/internlm2_ve" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan internlm2_ve"
plan_has internlm2_ve "model.layers.1.attention.wqkv.weight *I8 *\[64, 128\]" \
	"model.layers.1.feed_forward.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.feed_forward_ve.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.feed_forward_ve.w2.weight *I8 *\[128, 48\]" \
	"model.tok_embeddings.weight *F32 *\[256, 128\]" "output.weight *F32 *\[256, 128\]"
grep -q "feed_forward_ve.w1\|feed_forward_ve.w3\|output.weight_scale" "$T/plan" &&
	fail "internlm2_ve: w1 / w3 unmerged or output quantized: $(cat "$T/plan")"
refused_edit internlm2_ve 's/"bias": false/"bias": true/' "bias is true"
refused_edit internlm2_ve 's/"InternLM2VEForCausalLM"/"InternLM2ForCausalLM"/' "feed_forward_ve"

# Bailing MoE V2 (Ling 2.0): the later vLLM bailing_moe.py's cut: query_key_value by heads (TP 4:
# 2 q heads and kv head 0 replicated on ranks 0, 1) and dense quantized, the per-head
# query_layernorm / key_layernorm whole, layer 0's dense MLP merged, the router and its F32
# expert_bias whole and unquantized, experts stacked, the shared expert merged; the MTP layer's 41
# tensors skipped; TP 8 over 2 kv heads planned (replicated); use_qk_norm without use_rmsnorm, a
# non-sigmoid score_function, no expert bias and a tie refused, naming the key
"$CTL" plan --model-dir "$T/bailing_moe_v2" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan bailing_moe_v2"
plan_has bailing_moe_v2 "model.layers.1.attention.query_key_value.weight *I8 *\[128, 128\]" \
	"model.layers.1.attention.dense.weight *I8 *\[128, 64\]" \
	"model.layers.1.attention.query_layernorm.weight *BF16 *\[32\]" \
	"model.layers.0.mlp.gate_up_proj.weight *I8 *\[128, 128\]" \
	"model.layers.1.mlp.gate.weight *BF16 *\[8, 128\]" \
	"model.layers.1.mlp.gate.expert_bias *F32 *\[8\]" \
	"model.layers.1.mlp.experts.w13_weight *I8 *\[8, 32, 128\]" \
	"model.layers.1.mlp.shared_experts.down_proj.weight *I8 *\[128, 16\]" \
	"model.word_embeddings.weight *BF16 *\[256, 128\]" "lm_head.weight *BF16 *\[256, 128\]"
[ "$(grep -c "^skipped model.layers.3." "$T/plan")" = 41 ] ||
	fail "bailing_moe_v2: not the 41 MTP tensors skipped: $(cat "$T/plan")"
grep -q "mlp.gate.weight_scale\|expert_bias_scale\|layernorm.weight_scale" "$T/plan" &&
	fail "bailing_moe_v2: a quantized router, bias or norm: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/bailing_moe_v2" --tp-size 8 --rank-only >"$T/plan" 2>&1 ||
	fail "bailing_moe_v2: tp 8 over 2 kv heads: $(cat "$T/plan")"
refused_edit bailing_moe_v2 's/"use_rmsnorm": true/"use_rmsnorm": false/' "use_rmsnorm is false"
refused_edit bailing_moe_v2 's/"score_function": "sigmoid"/"score_function": "softmax"/' \
	"score_function"
refused_edit bailing_moe_v2 \
	's/"moe_router_enable_expert_bias": true/"moe_router_enable_expert_bias": false/' \
	"moe_router_enable_expert_bias"
refused_edit bailing_moe_v2 's/"tie_word_embeddings": false/"tie_word_embeddings": true/' \
	"tie_word_embeddings"

# AFMoE (Arcee's Trinity): vLLM's afmoe.py cut: q/k/v fused by heads (TP 4: 2 q heads and kv head
# 0 on rank 1), the output gate self_attn.gate_proj by the rank's heads' rows and o_proj quantized,
# the per-head q_norm / k_norm and the four layer norms whole, layer 0's dense MLP merged, the
# router mlp.router.gate served as mlp.gate and the F32 expert_bias whole and unquantized, experts
# stacked, the two shared experts merged; TP 8 over 2 kv heads planned (replicated); hidden_act,
# score_func, layer_types and a tie refused, naming the key
"$CTL" plan --model-dir "$T/afmoe" --tp-size 4 --tp-rank 1 --quant int8-channel --rank-only \
	>"$T/plan" || fail "plan afmoe"
plan_has afmoe "model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]" \
	"model.layers.1.self_attn.gate_proj.weight *I8 *\[64, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 64\]" \
	"model.layers.1.self_attn.q_norm.weight *BF16 *\[32\]" \
	"model.layers.1.pre_mlp_layernorm.weight *BF16 *\[128\]" \
	"model.layers.0.mlp.gate_up_proj.weight *I8 *\[128, 128\]" \
	"model.layers.1.mlp.gate.weight *BF16 *\[8, 128\]" \
	"model.layers.1.mlp.expert_bias *F32 *\[8\]" \
	"model.layers.1.mlp.experts.w13_weight *I8 *\[8, 32, 128\]" \
	"model.layers.1.mlp.shared_experts.gate_up_proj.weight *I8 *\[64, 128\]" \
	"model.embed_tokens.weight *BF16 *\[256, 128\]" "lm_head.weight *BF16 *\[256, 128\]"
grep -q "router\|mlp.gate.weight_scale\|expert_bias_scale\|norm.weight_scale" "$T/plan" &&
	fail "afmoe: the router's checkpoint name, a quantized router, bias or norm: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/afmoe" --tp-size 8 --rank-only >"$T/plan" 2>&1 ||
	fail "afmoe: tp 8 over 2 kv heads: $(cat "$T/plan")"
refused_edit afmoe 's/"hidden_act": "silu"/"hidden_act": "gelu"/' "hidden_act"
refused_edit afmoe 's/"score_func": "sigmoid"/"score_func": "sparsemixer"/' "score_func"
refused_edit afmoe 's/"layer_types":/"no_layer_types":/' "layer_types"
refused_edit afmoe 's/"tie_word_embeddings": false/"tie_word_embeddings": true/' \
	"tie_word_embeddings"

# Ouro (OuroForCausalLM): Qwen2's cut without biases at TP 4 rank 1 int8 (q heads 2, 3 and kv
# head 0 replicated on ranks 0, 1), the four norms a layer whole, model.early_exit_gate's weight
# by columns [1, 32] and its bias [1] whole, both unquantized; TP 8 planned; hidden_act gelu, an
# acting sliding window, is_causal false and total_ut_steps 65 refused, naming the key
"$CTL" plan --model-dir "$T/ouro" --tp-size 4 --tp-rank 1 --quant int8-channel --rank-only \
	>"$T/plan" || fail "plan ouro"
plan_has ouro "model.layers.1.self_attn.qkv_proj.weight *I8 *\[64, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.input_layernorm_2.weight *F32 *\[128\]" \
	"model.layers.1.post_attention_layernorm_2.weight *F32 *\[128\]" \
	"model.early_exit_gate.weight *F32 *\[1, 32\]" "model.early_exit_gate.bias *F32 *\[1\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "early_exit_gate.weight_scale\|layernorm.weight_scale\|layernorm_2.weight_scale\|qkv_proj.bias" \
	"$T/plan" && fail "ouro: a quantized gate or norm, or a q/k/v bias: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/ouro" --tp-size 8 --rank-only >"$T/plan" 2>&1 ||
	fail "ouro: tp 8 over 2 kv heads: $(cat "$T/plan")"
refused_edit ouro 's/"hidden_act": "silu"/"hidden_act": "gelu"/' "hidden_act"
refused_edit ouro 's/"use_sliding_window": false/"use_sliding_window": true/; s/"sliding_window": null/"sliding_window": 64/' \
	"use_sliding_window is true"
refused_edit ouro 's/"total_ut_steps": 3/"total_ut_steps": 65/' "total_ut_steps 65"
refused_edit ouro 's/"use_cache": true/"use_cache": true, "is_causal": false/' "is_causal is false"

# DeciLM (Llama-Nemotron): Llama's cut, each layer sized by its block_configs entry (TP 4 rank 1:
# layer 0's 2 q heads and kv head 0 of 2 replicated, layer 1's MLP 512 wide, layer 2's one kv
# head), the no-op attention (layer 1) and ffn (layer 2) without tensors; TP 8 planned;
# replace_with_linear, an n_heads_in_group not dividing the heads and a short block_configs
# refused, naming the key and the layer
"$CTL" plan --model-dir "$T/decilm" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan decilm"
plan_has decilm "model.layers.0.self_attn.qkv_proj.weight *I8 *\[64, 128\]" \
	"model.layers.0.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.0.mlp.gate_up_proj.weight *I8 *\[128, 128\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[256, 128\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 128\]" \
	"model.layers.2.self_attn.qkv_proj.weight *I8 *\[64, 128\]" \
	"model.layers.3.mlp.down_proj.weight *I8 *\[128, 64\]" \
	"model.layers.2.input_layernorm.weight *F32 *\[128\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "model.layers.1.self_attn\|model.layers.1.input_layernorm\|model.layers.2.mlp\|model.layers.2.post_attention" "$T/plan" &&
	fail "decilm: a no-op half planned: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/decilm" --tp-size 8 --rank-only >"$T/plan" 2>&1 ||
	fail "decilm: tp 8 over 2 and 1 kv heads: $(cat "$T/plan")"
refused_edit decilm '0,/"replace_with_linear": false/s//"replace_with_linear": true/' \
	"attention.replace_with_linear is true"
refused_edit decilm 's/"n_heads_in_group": 4/"n_heads_in_group": 3/' \
	"attention.n_heads_in_group 3 does not divide"
refused_edit decilm 's/"num_hidden_layers": 4/"num_hidden_layers": 5/' "block_configs has 4 entries"

# Jais 2 (Jais2ForCausalLM): TP 4 rank 1 (2 q heads and kv head 0 replicated, 4 * 16 rows) with
# q/k/v stacked into qkv_proj and its bias, o_proj / down_proj by columns with their biases whole,
# up_proj by rows under its own name with its bias (no gate); the LayerNorms' weights and biases,
# embed_tokens and lm_head unquantized; hidden_act silu, an interleaved_sliding_window string and
# mlp_bias false over the checkpoint's MLP biases refused, naming the key
"$CTL" plan --model-dir "$T/jais2" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan jais2"
plan_has jais2 "model.layers.1.self_attn.qkv_proj.weight *I8 *\[64, 128\]" \
	"model.layers.1.self_attn.qkv_proj.bias *F32 *\[64\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.self_attn.o_proj.bias *F32 *\[128\]" \
	"model.layers.1.mlp.up_proj.weight *I8 *\[64, 128\]" \
	"model.layers.1.mlp.up_proj.bias *F32 *\[64\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 64\]" \
	"model.layers.1.post_attention_layernorm.bias *F32 *\[128\]" \
	"model.norm.bias *F32 *\[128\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "gate_up_proj\|layernorm.weight_scale\|lm_head.weight_scale" "$T/plan" &&
	fail "jais2: a gate, or a quantized norm / lm_head: $(cat "$T/plan")"
refused_edit jais2 's/"hidden_act": "relu2"/"hidden_act": "silu"/' "hidden_act"
refused_edit jais2 's/"interleaved_sliding_window":\[4,null\]/"interleaved_sliding_window":"4"/' \
	"interleaved_sliding_window" flat
refused_edit jais2 's/"mlp_bias": true/"mlp_bias": false/' "mlp_bias is false"

# DeepSeek-V3.2 (DeepseekV32ForCausalLM): TP 4 rank 1 int8-channel: V3's MLA (q_b_proj by 2 of 8
# heads, o_proj by columns) and the lightning indexer whole on the rank: wq_b and wk quantized with
# their scales, weights_proj and k_norm's weight and bias kept BF16; the MTP layer's indexer
# skipped; index_topk 0, index_n_heads missing and q_lora_rank null refused, naming the key
"$CTL" plan --model-dir "$T/deepseek_v32" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan deepseek_v32"
plan_has deepseek_v32 "model.layers.1.self_attn.indexer.wq_b.weight *I8 *\[128, 128\]" \
	"model.layers.1.self_attn.indexer.wq_b.weight_scale *F32 *\[128, 1\]" \
	"model.layers.1.self_attn.indexer.wk.weight *I8 *\[32, 256\]" \
	"model.layers.1.self_attn.indexer.weights_proj.weight *BF16 *\[4, 256\]" \
	"model.layers.1.self_attn.indexer.k_norm.bias *BF16 *\[32\]" \
	"model.layers.0.self_attn.indexer.k_norm.weight *BF16 *\[32\]" \
	"model.layers.1.self_attn.q_b_proj.weight *I8 *\[128, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[256, 64\]" \
	"skipped model.layers.2.self_attn.indexer.wq_b.weight"
grep -q "weights_proj.weight_scale\|k_norm.weight_scale" "$T/plan" &&
	fail "deepseek_v32: weights_proj or k_norm quantized: $(cat "$T/plan")"
refused_edit deepseek_v32 's/"index_topk": 2048/"index_topk": 0/' "'index_topk' = 0, must be >= 1"
refused_edit deepseek_v32 '/"index_n_heads"/d' "needs index_n_heads"
refused_edit deepseek_v32 's/"q_lora_rank": 128/"q_lora_rank": null/' "q_lora_rank is missing"

# Step 3 (Step3TextForCausalLM): TP 4 rank 1 (one of 4 heads of 64) with q_proj / k_proj / v_proj
# fused WHOLE into the replicated qkv_proj (96 + 64 + 64 rows), wq's 64 rows, o_proj's 64 columns,
# the MoE layer's stacks by Ie / 4 (w13 [4, 32, 128], w2 [4, 128, 16]) and share_expert's merged
# rows / down columns (96 / 4), all int8; the router moe.gate, inter_norm, norms, embed_tokens and
# lm_head unquantized; a config without moe_layers_enum or with two attention groups refused,
# naming the key
"$CTL" plan --model-dir "$T/step3_text" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan step3_text"
plan_has step3_text "model.layers.1.self_attn.qkv_proj.weight *I8 *\[224, 128\]" \
	"model.layers.1.self_attn.wq.weight *I8 *\[64, 96\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 64\]" \
	"model.layers.1.self_attn.inter_norm.weight *F32 *\[96\]" \
	"model.layers.1.moe.gate.weight *F32 *\[4, 128\]" \
	"model.layers.1.moe.experts.w13_weight *I8 *\[4, 32, 128\]" \
	"model.layers.1.moe.experts.w2_weight *I8 *\[4, 128, 16\]" \
	"model.layers.1.share_expert.gate_up_proj.weight *I8 *\[48, 128\]" \
	"model.layers.1.share_expert.down_proj.weight *I8 *\[128, 24\]" \
	"model.layers.0.mlp.gate_up_proj.weight *I8 *\[128, 128\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "moe.gate.weight_scale\|inter_norm.weight_scale\|lm_head.weight_scale" "$T/plan" &&
	fail "step3_text: a quantized router / inter_norm / lm_head: $(cat "$T/plan")"
refused_edit step3_text '/"moe_layers_enum"/d' "moe_layers_enum"
refused_edit step3_text 's/"num_attention_groups": 1/"num_attention_groups": 2/' \
	"num_attention_groups"

# PLaMo 3 (Plamo3ForCausalLM): TP 4 rank 1 int8 under model.layers.layers.: the checkpoint's
# fused qkv_proj cut to q heads 2, 3 and kv head 0 (replicated on ranks 0, 1) ((2 + 2) x 32
# rows), o_proj's 64 columns, gate_up_proj's [gate_r; up_r] (2 x 48 rows), down_proj's 48
# columns; q_norm / k_norm [32], the four norms a layer, embed_tokens and lm_head unquantized;
# TP 8 planned; hidden_activation gelu, attention_bias true, rope_scaling_factor 2, a
# sliding_window_pattern of 0, an interleaved_sliding_window other than the pattern's and a
# vocab_size not a multiple of 16 refused, naming the key
"$CTL" plan --model-dir "$T/plamo3" --tp-size 4 --tp-rank 1 --quant int8-channel --rank-only \
	>"$T/plan" || fail "plan plamo3"
plan_has plamo3 "model.layers.layers.1.mixer.qkv_proj.weight *I8 *\[128, 128\]" \
	"model.layers.layers.1.mixer.o_proj.weight *I8 *\[128, 64\]" \
	"model.layers.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.layers.1.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.layers.layers.1.mixer.q_norm.weight *F32 *\[32\]" \
	"model.layers.layers.1.mixer.k_norm.weight *F32 *\[32\]" \
	"model.layers.layers.1.post_mixer_norm.weight *F32 *\[128\]" \
	"model.layers.layers.1.post_mlp_norm.weight *F32 *\[128\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "norm.weight_scale\|lm_head.weight_scale" "$T/plan" &&
	fail "plamo3: a quantized norm or lm_head: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/plamo3" --tp-size 8 --rank-only >"$T/plan" 2>&1 ||
	fail "plamo3: tp 8 over 2 kv heads: $(cat "$T/plan")"
refused_edit plamo3 's/"hidden_activation": "swiglu"/"hidden_activation": "gelu"/' \
	"hidden_activation"
refused_edit plamo3 's/"attention_bias": false/"attention_bias": true/' "attention_bias is true"
refused_edit plamo3 's/"rope_scaling_factor": 1.0/"rope_scaling_factor": 2.0/' \
	"rope_scaling_factor 2"
refused_edit plamo3 's/"sliding_window_pattern": 2/"sliding_window_pattern": 0/' \
	"sliding_window_pattern"
refused_edit plamo3 's/"sliding_window_pattern": 2/"sliding_window_pattern": 3/' \
	"interleaved_sliding_window"
refused_edit plamo3 's/"vocab_size": 1008/"vocab_size": 1000/' "vocab_size 1000"

# openPangu-Embedded (PanguEmbeddedForCausalLM): vLLM's openpangu.py dense cut (GQA 8 / 2; TP 4:
# 2 q heads, the rank's kv head replicated), q/k/v biases fused by heads as the weights and
# o_proj's bias whole, both unquantized; untied lm_head by vocabulary rows unquantized; bias false
# without dropping the biases, a hidden_act other than silu and the MLA / sandwich variants of
# openpangu.py refused, naming the key
"$CTL" plan --model-dir "$T/pangu_dense" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan pangu_dense"
plan_has pangu_dense "model.layers.1.self_attn.qkv_proj.weight *I8 *\[64, 128\]" \
	"model.layers.1.self_attn.qkv_proj.bias *F32 *\[64\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.self_attn.o_proj.bias *F32 *\[128\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "bias_scale\|lm_head.weight_scale" "$T/plan" &&
	fail "pangu_dense: a quantized bias or lm_head: $(cat "$T/plan")"
refused_edit pangu_dense 's/"bias": true/"bias": false/' "bias"
refused_edit pangu_dense 's/"hidden_act": "silu"/"hidden_act": "gelu"/' "hidden_act"
refused_edit pangu_dense 's/"bias": true/"bias": true, "sandwich_norm": true/' "sandwich_norm"
refused_edit pangu_dense \
	's/"bias": true/"bias": true, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 16, "kv_lora_rank": 32/' \
	"kv_lora_rank"

# openPangu-Ultra-MoE (PanguUltraMoEForCausalLM): DeepSeek-V3's cut at TP 4 rank 1 int8-channel
# (q_b_proj by 2 of 8 heads, o_proj by columns, kv_a_proj_with_mqa whole and quantized), the
# sandwich norms and the router whole and unquantized, the MTP layer skipped; sandwich_norm false
# with the norms present, hidden_act gelu and the remote key spelling refused, naming the key
"$CTL" plan --model-dir "$T/pangu_ultra_moe" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan pangu_ultra_moe"
plan_has pangu_ultra_moe "model.layers.1.self_attn.q_b_proj.weight *I8 *\[128, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[256, 64\]" \
	"model.layers.1.self_attn.kv_a_proj_with_mqa.weight *I8 *\[96, 256\]" \
	"model.layers.1.pre_mlp_layernorm.weight *BF16 *\[256\]" \
	"model.layers.1.post_mlp_layernorm.weight *BF16 *\[256\]" \
	"model.layers.1.mlp.gate.weight *BF16 *\[4, 256\]" \
	"skipped model.layers.2.pre_mlp_layernorm.weight"
grep -q "mlp_layernorm.weight_scale\|mlp.gate.weight_scale" "$T/plan" &&
	fail "pangu_ultra_moe: a quantized norm or router: $(cat "$T/plan")"
refused_edit pangu_ultra_moe 's/"sandwich_norm": true/"sandwich_norm": false/' "sandwich_norm"
refused_edit pangu_ultra_moe 's/"hidden_act": "silu"/"hidden_act": "gelu"/' "hidden_act"
refused_edit pangu_ultra_moe 's/"qk_nope_head_dim": 32/"attention_qk_dim": 32/' "attention_qk_dim"

# MiMo-V2-Flash (MiMoV2FlashForCausalLM): TP 4 rank 1 with each layer's attention by its own sizes
# (full layer 0: 2 of 8 heads of 32 + kv head 0's k 32 rows and v 16 rows (v_head_dim) = 112,
# o_proj 128 / 4 columns; SWA layer 1: 4 of 16 heads of 24 + kv head 1's 24 k rows and 12 v rows =
# 132, o_proj 192 / 4 columns, attention_sink_bias 4 of 16 heads unquantized), the F32 router and
# its F32 e_score_correction_bias whole and unquantized, the stacks by Ie / 4, the MTP tensor
# skipped; TP 16 (above the 8 experts) refused; hidden_act, a tie and a SWA layer without its
# swa_num_attention_heads refused, naming the key
"$CTL" plan --model-dir "$T/mimo_v2_flash" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan mimo_v2_flash"
plan_has mimo_v2_flash "model.layers.0.self_attn.qkv_proj.weight *I8 *\[112, 128\]" \
	"model.layers.0.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.self_attn.qkv_proj.weight *I8 *\[132, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 48\]" \
	"model.layers.1.self_attn.attention_sink_bias *BF16 *\[4\]" \
	"model.layers.1.mlp.gate.weight *F32 *\[8, 128\]" \
	"model.layers.1.mlp.gate.e_score_correction_bias *F32 *\[8\]" \
	"model.layers.1.mlp.experts.w13_weight *I8 *\[8, 32, 128\]" \
	"model.layers.0.mlp.gate_up_proj.weight *I8 *\[128, 128\]" \
	"model.embed_tokens.weight *BF16 *\[256, 128\]" "lm_head.weight *BF16 *\[256, 128\]"
grep -q "^skipped model.mtp.layers.0.input_layernorm.weight" "$T/plan" ||
	fail "mimo_v2_flash: the MTP tensor not skipped: $(cat "$T/plan")"
grep -q "mlp.gate.weight_scale\|correction_bias_scale\|sink_bias_scale" "$T/plan" &&
	fail "mimo_v2_flash: a quantized router, bias or sink: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/mimo_v2_flash" --tp-size 16 --tp-rank 0 >/dev/null 2>"$T/err" &&
	fail "mimo_v2_flash: tp 16 above the 8 experts planned"
grep -q "tp_size 16 exceeds the 8 routed experts" "$T/err" ||
	fail "mimo_v2_flash tp 16: $(cat "$T/err")"
refused_edit mimo_v2_flash 's/"hidden_act": "silu"/"hidden_act": "gelu"/' "hidden_act"
refused_edit mimo_v2_flash 's/"tie_word_embeddings": false/"tie_word_embeddings": true/' \
	"tie_word_embeddings"
refused_edit mimo_v2_flash '/"swa_num_attention_heads"/d' "swa_num_attention_heads"

# InternLM2's reward model (InternLM2ForRewardModel): InternLM2's decoder cut and quantized (TP 2:
# rank 1 its kv group whole, 4 q heads and their k / v, 6 * 16 rows), no output, v_head [1, hid]
# by columns and never quantized; InternLM2ForCausalLM over it refused naming v_head
"$CTL" plan --model-dir "$T/internlm2_rm" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan internlm2_rm"
plan_has internlm2_rm "model.layers.1.attention.wqkv.weight *I8 *\[96, 128\]" \
	"model.layers.1.feed_forward.gate_up_proj.weight *I8 *\[192, 128\]" \
	"v_head.weight *F32 *\[1, 64\]" "model.tok_embeddings.weight *F32 *\[512, 128\]"
grep -q "output.weight\|v_head.weight_scale" "$T/plan" &&
	fail "internlm2_rm: an output or v_head quantized: $(cat "$T/plan")"
refused_edit internlm2_rm 's/"InternLM2ForRewardModel"/"InternLM2ForCausalLM"/' "v_head"

# LlamaBidirectionalModel (model_type llama_bidirec): LlamaModel's cut (q/k/v fused by heads, every
# Linear quantized, the norms and the embedding kept F32) under the base model's names, no
# lm_head; a pooling vLLM's LlamaBidirectionalConfig does not map refused, naming the key
"$CTL" plan --model-dir "$T/llama_bidir_emb" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan llama_bidir_emb"
plan_has llama_bidir_emb "embed_tokens.weight *F32 *\[512, 128\]" \
	"layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]" \
	"layers.1.self_attn.o_proj.weight *I8 *\[128, 64\]" \
	"layers.0.mlp.gate_up_proj.weight *I8 *\[192, 128\]" \
	"layers.0.mlp.down_proj.weight *I8 *\[128, 96\]" "norm.weight *F32 *\[128\]"
grep -q "^ *lm_head\|^ *model\." "$T/plan" && fail "llama_bidir_emb: lm_head or model.: $(cat "$T/plan")"
refused_edit llama_bidir_emb 's/"pooling": "avg"/"pooling": "mean"/' "pooling"

# NomicBertModel (model_type nomic_bert): its checkpoint names onto vLLM's bert_with_rope.py
# (emb_ln as embeddings.LayerNorm, Wqkv as qkv_proj by heads, fc12 / fc11 merged into
# gate_up_proj, fc2 as down_proj, norm1 / norm2 as attn_ln / mlp_ln), the Linears quantized, the
# 2 token type rows padded to 64 (32 a rank); the MoE release's gelu refused, naming the key
"$CTL" plan --model-dir "$T/nomic_bert" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan nomic_bert"
plan_has nomic_bert "embeddings.token_type_embeddings.weight *F32 *\[32, 128\]" \
	"embeddings.LayerNorm.weight *F32 *\[128\]" \
	"encoder.layers.1.attn.qkv_proj.weight *I8 *\[192, 128\]" \
	"encoder.layers.0.attn.out_proj.weight *I8 *\[128, 64\]" \
	"encoder.layers.0.mlp.gate_up_proj.weight *I8 *\[192, 128\]" \
	"encoder.layers.0.mlp.gate_up_proj.bias *F32 *\[192\]" \
	"encoder.layers.1.mlp.down_proj.weight *I8 *\[128, 96\]" "encoder.layers.1.mlp_ln.bias *F32"
grep -q "emb_ln\|Wqkv\|fc1[12]\|norm[12]\." "$T/plan" && fail "nomic_bert: a checkpoint name: $(cat "$T/plan")"
refused_edit nomic_bert 's/"activation_function": "swiglu"/"activation_function": "gelu"/' \
	"activation_function"

# GteNewModel (model_type new): NewModel's names onto vLLM's bert_with_rope.py (encoder.layer. as
# encoder.layers., attention.qkv_proj / o_proj as attn.qkv_proj / out_proj by heads,
# up_gate_proj re-merged gate first into gate_up_proj, no bias), the Linears quantized, the one
# token type row padded to 64 (16 a rank at TP 4); a hidden_act other than gelu refused
"$CTL" plan --model-dir "$T/gte_new" --tp-size 4 --tp-rank 1 --quant fp8-channel \
	--rank-only >"$T/plan" || fail "plan gte_new"
plan_has gte_new "embeddings.token_type_embeddings.weight *F32 *\[16, 128\]" \
	"encoder.layers.0.attn.qkv_proj.weight *F8_E4M3 *\[96, 128\]" \
	"encoder.layers.0.attn.out_proj.weight *F8_E4M3 *\[128, 32\]" \
	"encoder.layers.0.mlp.gate_up_proj.weight *F8_E4M3 *\[96, 128\]" \
	"encoder.layers.1.mlp.down_proj.weight *F8_E4M3 *\[128, 48\]" "encoder.layers.1.attn_ln.bias"
grep -q "gate_up_proj.bias\|encoder\.layer\.\|up_gate\|attention\." "$T/plan" &&
	fail "gte_new: a checkpoint name or a gate_up bias: $(cat "$T/plan")"
refused_edit gte_new 's/"hidden_act": "gelu"/"hidden_act": "silu"/' "hidden_act"

# LlamaBidirectionalForSequenceClassification (model_type llama_bidirec): llama_cls's cut (q/k/v
# fused by heads, every Linear quantized, score.weight whole on every rank and quantized, the
# norms and the embedding kept F32) under model., no lm_head; a pooling vLLM's
# LlamaBidirectionalConfig does not map refused, naming the key
"$CTL" plan --model-dir "$T/llama_bidir_cls" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan llama_bidir_cls"
plan_has llama_bidir_cls "model.embed_tokens.weight *F32 *\[512, 128\]" \
	"model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 64\]" \
	"model.layers.0.mlp.down_proj.weight *I8 *\[128, 96\]" "score.weight *I8 *\[1, 128\]" \
	"score.weight_scale *F32 *\[1, 1\]" "model.norm.weight *F32 *\[128\]"
grep -q "^ *lm_head" "$T/plan" && fail "llama_bidir_cls: lm_head: $(cat "$T/plan")"
refused_edit llama_bidir_cls 's/"pooling": "avg"/"pooling": "mean"/' "pooling"

# GritLM (vLLM's gritlm.py: LlamaForCausalLM over Mistral's config): MistralForCausalLM's cut,
# lm_head kept (both runners load it) by vocabulary rows and not quantized; config.json read as
# Mistral's (hidden_size required)
"$CTL" plan --model-dir "$T/gritlm" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan gritlm"
grep -q "(family mistral)" "$T/plan" || fail "gritlm: not read as mistral: $(cat "$T/plan")"
plan_has gritlm "lm_head.weight *F32 *\[512, 128\]" \
	"model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]" \
	"model.layers.0.mlp.gate_up_proj.weight *I8 *\[192, 128\]" "model.norm.weight *F32 *\[128\]"
refused_edit gritlm 's/"hidden_size": 128,//' "hidden_size"
# GteNewForSequenceClassification (model_type new): gte_new's cut under new. (kept), the pooler
# whole and BF16 / F32 as stored (a plain nn.Linear), the classifier whole and quantized (a
# ReplicatedLinear built with the quant config) on every rank; an unprefixed encoder refused
"$CTL" plan --model-dir "$T/gte_new_cls" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan gte_new_cls"
plan_has gte_new_cls "new.encoder.layers.0.attn.qkv_proj.weight *I8 *\[192, 128\]" \
	"new.pooler.dense.weight *F32 *\[128, 128\]" "classifier.weight *I8 *\[1, 128\]" \
	"classifier.bias *F32 *\[1\]" "new.encoder.layers.1.mlp.gate_up_proj.weight *I8 *\[192, 128\]"
grep -q "encoder\.layer\.\|up_gate\|pooler.dense.weight_scale" "$T/plan" &&
	fail "gte_new_cls: a checkpoint name or a quantized pooler: $(cat "$T/plan")"
refused_edit gte_new_cls 's/"id2label": {/"id2label": {}, "x": {/' "id2label"

# BertSpladeSparseEmbeddingModel: BERT's cut under bert. (the encoder's Linears int8), the
# masked-LM head cls.predictions.* whole and unquantized; a relative position type refused
"$CTL" plan --model-dir "$T/bert_splade" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan bert_splade"
plan_has bert_splade "bert.encoder.layer.0.attention.self.qkv_proj.weight *I8 *\[192, 128\]" \
	"cls.predictions.decoder.weight *F32 *\[1000, 128\]" "cls.predictions.decoder.bias *F32" \
	"cls.predictions.transform.dense.weight *F32 *\[128, 128\]"
grep -q "cls.predictions.*_scale" "$T/plan" && fail "bert_splade: a quantized head: $(cat "$T/plan")"
refused_edit bert_splade 's/"absolute"/"relative_key"/' "position_embedding_type"

# JinaVLForRanking (jina-reranker-m0, model_type qwen2_vl): Qwen2-VL's cut (the language model's
# Linears and the vision tower's int8, tied: no lm_head), the score head as vLLM's jina_vl.py
# builds it without the quant config: score.0 and its bias by rows, score.2 by columns, its bias
# whole, all BF16; untied without an lm_head.weight refused, naming it
"$CTL" plan --model-dir "$T/jina_vl" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan jina_vl"
plan_has jina_vl "model.layers.1.self_attn.o_proj.weight *I8 *\[256, 128\]" \
	"visual.blocks.0.attn.qkv.weight *I8 *\[192, 128\]" "score.0.weight *BF16 *\[128, 256\]" \
	"score.0.bias *BF16 *\[128\]" "score.2.weight *BF16 *\[1, 128\]" "score.2.bias *BF16 *\[1\]"
grep -q "^ *lm_head\|score\..*_scale" "$T/plan" &&
	fail "jina_vl: an lm_head or a quantized head: $(cat "$T/plan")"
refused_edit jina_vl 's/"tie_word_embeddings": true/"tie_word_embeddings": false/' "lm_head"
# openPangu-Pro-MoE-V2 (PanguProMoEV2ForCausalLM): the sink attention at TP 4 rank 1 int8-channel
# (qkv_proj: 2 of 8 heads of 40 + kv head 1's 40 k rows and 24 v rows (v_channels) = 144, o_proj
# 192 / 4 columns), k_layernorm, the sinks by kv head ([4, 1, 40] / [4, 1, 24]) and the router bias
# (F32, renamed mlp.gate.e_score_correction_bias) unquantized, the MTP layer skipped; the router
# bias without router_enable_expert_bias, param_sink_number 0 and hidden_act gelu refused, naming
# the key
"$CTL" plan --model-dir "$T/pangu_pro_moe_v2" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan pangu_pro_moe_v2"
plan_has pangu_pro_moe_v2 "model.layers.1.self_attn.qkv_proj.weight *I8 *\[144, 256\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[256, 48\]" \
	"model.layers.1.self_attn.k_layernorm.weight *BF16 *\[40\]" \
	"model.layers.1.self_attn.param_sink_key *BF16 *\[4, 1, 40\]" \
	"model.layers.1.self_attn.param_sink_value *BF16 *\[4, 1, 24\]" \
	"model.layers.1.mlp.gate.e_score_correction_bias *F32 *\[4\]" \
	"skipped model.layers.2.self_attn.param_sink_key"
grep -q "param_sink_key_scale\|param_sink_value_scale\|e_score_correction_bias_scale" "$T/plan" &&
	fail "pangu_pro_moe_v2: a quantized sink or router bias: $(cat "$T/plan")"
refused_edit pangu_pro_moe_v2 's/"router_enable_expert_bias": true/"router_enable_expert_bias": false/' \
	"router_enable_expert_bias"
refused_edit pangu_pro_moe_v2 's/"param_sink_number": 4/"param_sink_number": 0/' "param_sink_number"
refused_edit pangu_pro_moe_v2 's/"hidden_act": "silu"/"hidden_act": "gelu"/' "hidden_act"
# PLaMo 2 (Plamo2ForCausalLM): TP 4 rank 1 int8 under model.layers.layers.: layer 0's Mamba mixer
# (in_proj [gate_r; x_r] of heads 2, 3 (2 x 2 x 16 rows), conv1d's 32 channels, bcdt_proj's and
# out_proj's 32 columns, dt_proj's 2 heads; A_log, dt_norm_weight unquantized), layer 1's
# attention (qkv_proj of q heads 2, 3 and the one kv head, (2 + 2) x 16 rows; q_weight [2, 16],
# k_weight [1, 16] whole, unquantized); TP 8 planned; mamba_enabled false, mamba_step 1 and
# mamba_step 4 (layer 1 then Mamba) refused, naming the key or the layer kind
"$CTL" plan --model-dir "$T/plamo2" --tp-size 4 --tp-rank 1 --quant int8-channel --rank-only \
	>"$T/plan" || fail "plan plamo2"
plan_has plamo2 "model.layers.layers.0.mixer.in_proj.weight *I8 *\[64, 64\]" \
	"model.layers.layers.0.mixer.conv1d.weight *F32 *\[32, 1, 4\]" \
	"model.layers.layers.0.mixer.bcdt_proj.weight *I8 *\[96, 32\]" \
	"model.layers.layers.0.mixer.dt_proj.weight *I8 *\[2, 64\]" \
	"model.layers.layers.0.mixer.out_proj.weight *I8 *\[64, 32\]" \
	"model.layers.layers.0.mixer.A_log *F32 *\[2\]" \
	"model.layers.layers.0.mixer.dt_norm_weight *F32 *\[64\]" \
	"model.layers.layers.1.mixer.qkv_proj.weight *I8 *\[64, 64\]" \
	"model.layers.layers.1.mixer.q_weight *F32 *\[2, 16\]" \
	"model.layers.layers.1.mixer.k_weight *F32 *\[1, 16\]" \
	"model.layers.layers.1.post_mlp_norm.weight *F32 *\[64\]" \
	"model.embed_tokens.weight *F32 *\[256, 64\]" "lm_head.weight *F32 *\[256, 64\]"
grep -q "norm.weight_scale\|norm_weight_scale\|lm_head.weight_scale\|conv1d.weight_scale" \
	"$T/plan" && fail "plamo2: a quantized norm, conv1d or lm_head: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/plamo2" --tp-size 8 --rank-only >"$T/plan" 2>&1 ||
	fail "plamo2: tp 8 over one kv head: $(cat "$T/plan")"
refused_edit plamo2 's/"mamba_enabled": true/"mamba_enabled": false/' "mamba_enabled"
refused_edit plamo2 's/"mamba_step": 2/"mamba_step": 1/' "mamba_step"
refused_edit plamo2 's/"mamba_step": 2/"mamba_step": 4/' "a Mamba layer"

# MiniMax-VL-01 (MiniMaxVL01ForConditionalGeneration): minimax_text01's cut under language_model.
# (TP 4: the lightning attention's 2 whole heads of qkv_proj), the CLIP tower's qkv_proj by heads,
# the projector's linear_1 rows with its bias, linear_2 columns with its bias whole,
# image_newline whole and unquantized, post_layernorm skipped; the text model's model_type, a
# list vision_feature_layer and another tower refused
"$CTL" plan --model-dir "$T/minimax_vl_01" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan minimax_vl_01"
plan_has minimax_vl_01 "language_model.model.layers.0.self_attn.qkv_proj.weight *I8 *\[192, 256\]" \
	"language_model.model.layers.0.self_attn.norm.weight *BF16 *\[64\]" \
	"vision_tower.vision_model.encoder.layers.0.self_attn.qkv_proj.weight *I8 *\[48, 64\]" \
	"multi_modal_projector.linear_1.weight *I8 *\[64, 64\]" \
	"multi_modal_projector.linear_1.bias *BF16 *\[64\]" \
	"multi_modal_projector.linear_2.weight *I8 *\[256, 64\]" \
	"multi_modal_projector.linear_2.bias *BF16 *\[256\]" "image_newline *BF16 *\[256\]" \
	"skipped vision_tower.vision_model.post_layernorm.weight"
refused_edit minimax_vl_01 's/"minimax_text_01"/"llama"/' "text_config.model_type 'llama'"
refused_edit minimax_vl_01 's/"vision_feature_layer": -1/"vision_feature_layer": [-1]/' \
	"vision_feature_layer is a list"
refused_edit minimax_vl_01 's/"clip_vision_model"/"idefics3_vision"/' \
	"init_vision_tower_for_MiniMaxVL01"

# Phi-3-Vision (Phi3VForCausalLM): Phi-3's cut under model.* (TP 4: qkv_proj [q_r; k_r; v_r],
# gate_up_proj [gate_r; up_r]), the CLIP tower's qkv_proj by heads and fc2 by columns (quantized
# like the LM's Linears), glb_GN / sub_GN / img_projection whole and unquantized,
# post_layernorm skipped (one block built of 24); the releases' layer_idx -2 over the fixture's
# one block, use_hd_transform false and another width refused
"$CTL" plan --model-dir "$T/phi3v" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan phi3v"
P3V_E="model.vision_embed_tokens."
P3V_B="${P3V_E}img_processor.vision_model.encoder.layers.0."
plan_has phi3v "model.layers.0.self_attn.qkv_proj.weight *I8 *\[128, 256\]" \
	"model.layers.0.mlp.gate_up_proj.weight *I8 *\[256, 256\]" \
	"${P3V_B}self_attn.qkv_proj.weight *I8 *\[768, 1024\]" \
	"${P3V_B}mlp.fc2.weight *I8 *\[1024, 1024\]" "${P3V_E}glb_GN *BF16 *\[1, 1, 4096\]" \
	"${P3V_E}sub_GN *BF16 *\[1, 1, 1, 4096\]" \
	"${P3V_E}img_projection.0.weight *BF16 *\[256, 4096\]" \
	"skipped ${P3V_E}img_processor.vision_model.post_layernorm.weight"
refused_edit phi3v 's/"layer_idx": -24/"layer_idx": -2/' "encoder.layers.1.layer_norm1.weight"
refused_edit phi3v 's/"use_hd_transform": true/"use_hd_transform": false/' "use_hd_transform"
refused_edit phi3v 's/"image_dim_out": 1024/"image_dim_out": 768/' "image_dim_out 768"
