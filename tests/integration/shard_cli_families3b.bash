# shard_cli_families3b.bash — shard_cli.sh's family checks, continued (sourced by it, after
# shard_cli_families3.bash, from which these blocks were split; $CTL, $T, fail, plan_has,
# refused_edit and the fixtures are its): the decoder language models from EXAONE to Aquila
# (ExaoneForCausalLM, QWenLMHeadModel, Baichuan, MiniCPM, InternLM3, MiniCPM3, LFM2-MoE, Orion,
# TeleChat2, JAIS, Arctic, Bailing MoE, Xverse, Aquila), in the order they were added.

# ExaoneForCausalLM: q/k/v fused by heads into attn.attention.qkv_proj (TP 4: 2 q heads and
# its kv head, 4 * 16 rows), c_fc_0 / c_fc_1 merged into mlp.gate_up_proj, out_proj / c_proj
# by columns, all quantized; wte / lm_head by vocabulary rows and the norms unquantized;
# activation_function gelu refused
"$CTL" plan --model-dir "$T/exaone" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan exaone"
plan_has exaone "transformer.h.1.attn.attention.qkv_proj.weight *I8 *\[64, 128\]" \
	"transformer.h.1.attn.attention.out_proj.weight *I8 *\[128, 32\]" \
	"transformer.h.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"transformer.h.1.mlp.c_proj.weight *I8 *\[128, 48\]" \
	"transformer.h.1.ln_1.weight *F32 *\[128\]" \
	"transformer.wte.weight *F32 *\[256, 128\]" \
	"lm_head.weight *F32 *\[256, 128\]"
grep -q "q_proj\|c_fc_0\|lm_head.weight_scale\|wte.weight_scale" "$T/plan" &&
	fail "exaone: an unfused or quantized embedding tensor: $(cat "$T/plan")"
refused_edit exaone 's/"activation_function": "silu"/"activation_function": "gelu"/' \
	"activation_function is not"
# QWenLMHeadModel: attn.c_attn [q; k; v] by heads (TP 4: 2 heads of each, 3 * 32 rows, its bias
# alike and unquantized), mlp.w2 / w1 merged into mlp.gate_up_proj (48 + 48 rows of the 192-wide
# MLP, intermediate_size 384 halved), attn.c_proj / mlp.c_proj by columns, all quantized; wte /
# lm_head by vocabulary rows and the norms unquantized; a Qwen-VL visual config refused
"$CTL" plan --model-dir "$T/qwen" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan qwen"
plan_has qwen "transformer.h.1.attn.c_attn.weight *I8 *\[96, 128\]" \
	"transformer.h.1.attn.c_attn.bias *F32 *\[96\]" \
	"transformer.h.1.attn.c_proj.weight *I8 *\[128, 32\]" \
	"transformer.h.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"transformer.h.1.mlp.c_proj.weight *I8 *\[128, 48\]" \
	"transformer.h.1.ln_1.weight *F32 *\[128\]" \
	"transformer.wte.weight *F32 *\[256, 128\]" \
	"lm_head.weight *F32 *\[256, 128\]"
grep -q "mlp.w1\|mlp.w2\|c_attn.bias_scale\|lm_head.weight_scale\|wte.weight_scale" "$T/plan" &&
	fail "qwen: an unmerged or quantized embedding / bias tensor: $(cat "$T/plan")"
refused_edit qwen 's/"no_bias": true/"visual": {"heads": 16}, "no_bias": true/' "Qwen-VL"
# BaichuanForCausalLM: W_pack re-cut by heads into each rank's [q_r; k_r; v_r] under its own
# name (TP 4: 2 heads of 16, 3 * 32 rows), gate_proj / up_proj merged into mlp.gate_up_proj,
# o_proj / down_proj by columns, all quantized; embed_tokens / lm_head by vocabulary rows and
# the norms unquantized; hidden_act gelu refused
"$CTL" plan --model-dir "$T/baichuan" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan baichuan"
plan_has baichuan "model.layers.1.self_attn.W_pack.weight *I8 *\[96, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.layers.1.input_layernorm.weight *F32 *\[128\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" \
	"lm_head.weight *F32 *\[256, 128\]"
grep -q "gate_proj\|q_proj\|lm_head.weight_scale\|embed_tokens.weight_scale" "$T/plan" &&
	fail "baichuan: an unfused or quantized embedding tensor: $(cat "$T/plan")"
refused_edit baichuan 's/"hidden_act": "silu"/"hidden_act": "gelu"/' "hidden_act 'gelu'"
refused_edit baichuan_7b 's/"num_attention_heads": 4/"num_attention_heads": 4, "num_key_value_heads": 2/' \
	"multi-head"
# MiniCPMForCausalLM: Llama's names, q/k/v fused by heads into self_attn.qkv_proj (TP 4: 2 q
# heads and its kv head, 4 * 16 rows), gate / up merged into mlp.gate_up_proj, o_proj /
# down_proj by columns, all quantized; embed_tokens by vocabulary rows and the norms unquantized;
# tied by MiniCPMConfig's default (no lm_head); num_experts without num_experts_per_tok refused
"$CTL" plan --model-dir "$T/minicpm" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan minicpm"
plan_has minicpm "model.layers.1.self_attn.qkv_proj.weight *I8 *\[64, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.layers.1.input_layernorm.weight *F32 *\[128\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]"
grep -q "lm_head tied" "$T/plan" || fail "minicpm: lm_head not tied: $(cat "$T/plan")"
grep -q "q_proj\.weight\|gate_proj\|lm_head.weight\|embed_tokens.weight_scale" "$T/plan" &&
	fail "minicpm: an unfused, untied or quantized embedding tensor: $(cat "$T/plan")"
refused_edit minicpm 's/"hidden_act": "silu"/"hidden_act": "silu", "num_experts": 8/' \
	"num_experts 8 without num_experts_per_tok"
# InternLM3ForCausalLM: vLLM's llama.py cut (head_dim 16; TP 4: 2 q heads and its kv head), no
# biases (qkv_bias / bias false), untied lm_head by vocabulary rows; bias true without an
# o_proj.bias tensor refused naming the key
"$CTL" plan --model-dir "$T/internlm3" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan internlm3"
plan_has internlm3 "model.layers.1.self_attn.qkv_proj.weight *I8 *\[64, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "_proj\.bias\|lm_head.weight_scale" "$T/plan" &&
	fail "internlm3: a bias or a quantized lm_head: $(cat "$T/plan")"
refused_edit internlm3 's/"bias": false/"bias": true/' "bias true asks for"

# NemotronHForCausalLM with MoE layers ("ME*E"): the router gate.weight and its F32
# e_score_correction_bias whole and unquantized, the non-gated experts stacked as w13_weight
# (up_proj alone: [E, Ie/T, hid]) / w2_weight and quantized, whole experts per EP rank, the
# shared experts by rows / columns and quantized; a latent MoE and mlp_bias refused
"$CTL" plan --model-dir "$T/nemotron_h_moe" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan nemotron_h_moe"
plan_has nemotron_h_moe "backbone.layers.1.mixer.experts.w13_weight *I8 *\[8, 32, 64\]" \
	"backbone.layers.1.mixer.experts.w2_weight *I8 *\[8, 64, 32\]" \
	"backbone.layers.1.mixer.gate.weight *BF16 *\[8, 64\]" \
	"backbone.layers.1.mixer.gate.e_score_correction_bias *F32 *\[8\]" \
	"backbone.layers.3.mixer.shared_experts.up_proj.weight *I8 *\[64, 64\]" \
	"backbone.layers.3.mixer.shared_experts.down_proj.weight *I8 *\[64, 64\]"
grep -q "gate.weight_scale\|e_score_correction_bias_scale" "$T/plan" &&
	fail "nemotron_h_moe: a quantized router: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/nemotron_h_moe" --tp-size 2 --tp-rank 1 --ep-size 2 --ep-rank 1 \
	--rank-only >"$T/plan" || fail "plan nemotron_h_moe ep"
plan_has nemotron_h_moe "backbone.layers.3.mixer.experts.w13_weight *BF16 *\[4, 64, 64\]" \
	"backbone.layers.3.mixer.experts.w2_weight *BF16 *\[4, 64, 64\]"
refused_edit nemotron_h_moe 's/"moe_latent_size": null/"moe_latent_size": 32/' "latent MoE"
refused_edit nemotron_h_moe 's/"mlp_bias": false/"mlp_bias": true/' "build no biases"

# MiniCPM3ForCausalLM: DeepSeek-V2's MLA as vLLM's minicpm3.py loads it (q_a_proj /
# kv_a_proj_with_mqa whole, q_b_proj / kv_b_proj by heads: TP 4 gives 2 heads of 24 / 32 rows,
# o_proj by columns), gate / up merged into mlp.gate_up_proj, down_proj by columns, every
# Linear quantized; the latent norms and embed_tokens unquantized; tied by MiniCPM3Config's
# default (no lm_head); q_lora_rank null and num_experts refused
"$CTL" plan --model-dir "$T/minicpm3" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan minicpm3"
plan_has minicpm3 "model.layers.1.self_attn.q_a_proj.weight *I8 *\[64, 128\]" \
	"model.layers.1.self_attn.q_b_proj.weight *I8 *\[48, 64\]" \
	"model.layers.1.self_attn.kv_a_proj_with_mqa.weight *I8 *\[40, 128\]" \
	"model.layers.1.self_attn.kv_b_proj.weight *I8 *\[64, 32\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.layers.1.self_attn.q_a_layernorm.weight *F32 *\[64\]" \
	"model.layers.1.self_attn.kv_a_layernorm.weight *F32 *\[32\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]"
grep -q "lm_head tied" "$T/plan" || fail "minicpm3: lm_head not tied: $(cat "$T/plan")"
grep -q "gate_proj\|lm_head.weight\|layernorm.weight_scale\|embed_tokens.weight_scale" \
	"$T/plan" && fail "minicpm3: an unmerged, untied or quantized norm tensor: $(cat "$T/plan")"
refused_edit minicpm3 's/"q_lora_rank": 64/"q_lora_rank": null/' "q_lora_rank is null"
refused_edit minicpm3 's/"hidden_act": "silu"/"hidden_act": "silu", "num_experts": 8/' \
	"num_experts is 8"

# Lfm2MoeForCausalLM: LFM2's layers (short_conv.* whole-width conv channels by rows, never
# quantized; q/k/v fused), layer 0's dense feed_forward w1 / w3 merged into w13, layers 1-3's
# MoE: the router feed_forward.gate.weight and the expert bias (runtime
# gate.e_score_correction_bias, F32) whole and unquantized, experts stacked as w13_weight
# [w1; w3] / w2_weight and quantized, whole experts per EP rank; tied (no lm_head); an untied
# config and a config without layer_types refused
"$CTL" plan --model-dir "$T/lfm2_moe" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan lfm2_moe"
plan_has lfm2_moe "model.layers.1.feed_forward.experts.w13_weight *I8 *\[8, 64, 128\]" \
	"model.layers.1.feed_forward.experts.w2_weight *I8 *\[8, 128, 32\]" \
	"model.layers.1.feed_forward.gate.weight *BF16 *\[8, 128\]" \
	"model.layers.1.feed_forward.gate.e_score_correction_bias *F32 *\[8\]" \
	"model.layers.0.feed_forward.w13.weight *I8 *\[192, 128\]" \
	"model.layers.0.feed_forward.w2.weight *I8 *\[128, 96\]" \
	"model.layers.0.short_conv.in_proj.weight *BF16 *\[192, 128\]" \
	"model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]"
grep -q "lm_head tied" "$T/plan" || fail "lfm2_moe: lm_head not tied: $(cat "$T/plan")"
grep -q "gate.weight_scale\|e_score_correction_bias_scale\|expert_bias\|short_conv.*_scale" \
	"$T/plan" && fail "lfm2_moe: a quantized router or conv, or an unrenamed bias: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/lfm2_moe" --tp-size 2 --tp-rank 1 --ep-size 2 --ep-rank 1 \
	--rank-only >"$T/plan" || fail "plan lfm2_moe ep"
plan_has lfm2_moe "model.layers.3.feed_forward.experts.w13_weight *BF16 *\[4, 128, 128\]" \
	"model.layers.3.feed_forward.experts.w2_weight *BF16 *\[4, 128, 64\]"
refused_edit lfm2_moe 's/"tie_embedding": true/"tie_embedding": false/' "ties lm_head"
refused_edit lfm2_moe 's/"layer_types"/"layer_kinds"/' "needs layer_types"
# MiniCPMForCausalLM with num_experts (MiniCPM-MoE): vLLM's MiniCPMMoE, not FusedMoE: the router
# mlp.gate whole and unquantized, every expert on every rank cut by tp (TP 2: mlp.ws [E, 2*64/2,
# hid] = [w1_r; w3_r] per expert, mlp.w2s [E, hid, 64/2]) and unquantized while q/k/v/o are;
# ep_size 2, num_experts_per_tok past num_experts and moe_intermediate_size refused
"$CTL" plan --model-dir "$T/minicpm_moe" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan minicpm_moe"
plan_has minicpm_moe "model.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 64\]" \
	"model.layers.1.mlp.gate.weight *F32 *\[4, 128\]" \
	"model.layers.1.mlp.ws *F32 *\[4, 64, 128\]" \
	"model.layers.1.mlp.w2s *F32 *\[4, 128, 32\]"
grep -q "lm_head tied" "$T/plan" || fail "minicpm_moe: lm_head not tied: $(cat "$T/plan")"
grep -q "ws_scale\|w2s_scale\|gate.weight_scale\|w13_weight\|experts\.0\." "$T/plan" &&
	fail "minicpm_moe: a quantized or FusedMoE-named expert or router: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/minicpm_moe" --tp-size 1 --ep-size 2 >/dev/null 2>"$T/err" &&
	fail "minicpm_moe: ep_size 2 planned"
grep -q "no expert parallelism; use ep_size 1" "$T/err" ||
	fail "minicpm_moe: the ep_size refusal: $(cat "$T/err")"
refused_edit minicpm_moe 's/"num_experts_per_tok": 2/"num_experts_per_tok": 5/' \
	"num_experts_per_tok 5"
refused_edit minicpm_moe 's/"num_experts": 4/"num_experts": 4, "moe_intermediate_size": 32/' \
	"moe_intermediate_size on MiniCPM"
# InternLMForCausalLM (first generation): vLLM's llama.py cut (MHA; TP 4: 2 heads of q, k and v),
# bias true giving q/k/v's biases fused as the weights and o_proj's whole, unquantized; untied
# lm_head by vocabulary rows; bias false with the biases present, a rotary base other than
# rope_theta and a rotary type other than dynamic / origin refused
"$CTL" plan --model-dir "$T/internlm" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan internlm"
plan_has internlm "model.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.self_attn.qkv_proj.bias *F32 *\[96\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.self_attn.o_proj.bias *F32 *\[128\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "bias_scale\|lm_head.weight_scale" "$T/plan" &&
	fail "internlm: a quantized bias or lm_head: $(cat "$T/plan")"
refused_edit internlm 's/"bias": true/"bias": false/' "bias is false"
refused_edit internlm 's/"base": 10000/"base": 20000/' "rotary.base 20000 differs"
refused_edit internlm 's/"type": "dynamic"/"type": "linear"/' "rotary.type"
# OrionForCausalLM: vLLM's orion.py cut (H 4, KV 2; TP 4: one q head, kv head 0 for ranks 0-1),
# the LayerNorms' weights and biases whole and unquantized, no linear biases; untied lm_head by
# vocabulary rows; attention_bias true, mlp_bias true, a rope_scaling OrionConfig refuses and
# hidden_act gelu refused
"$CTL" plan --model-dir "$T/orion" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan orion"
plan_has orion "model.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.layers.1.input_layernorm.bias *F32 *\[128\]" \
	"model.layers.1.post_attention_layernorm.weight *F32 *\[128\]" \
	"model.norm.bias *F32 *\[128\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "qkv_proj.bias\|o_proj.bias\|layernorm.bias_scale\|lm_head.weight_scale" "$T/plan" &&
	fail "orion: a linear bias, a quantized norm bias or lm_head: $(cat "$T/plan")"
refused_edit orion 's/"attention_bias": false/"attention_bias": true/' "attention_bias is true"
refused_edit orion 's/"attention_bias": false/"attention_bias": false, "mlp_bias": true/' \
	"mlp_bias is true"
refused_edit orion 's/"rope_scaling": null/"rope_scaling": {"type": "yarn", "factor": 4.0}/' \
	"rope_scaling is not"
refused_edit orion 's/"hidden_act": "silu"/"hidden_act": "gelu"/' "hidden_act"
# TeleChat2ForCausalLM: vLLM's telechat2.py cut under Llama's runtime names (MHA; TP 4: 2 heads of
# query and of key_value's de-interleaved k / v), dense / down_proj biases whole and unquantized;
# untied lm_head by vocabulary rows; no checkpoint name served; apply_residual_connection_post_
# layernorm true, embed_layernorm true and a base other than rope_theta refused
"$CTL" plan --model-dir "$T/telechat2" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan telechat2"
plan_has telechat2 "model.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.self_attn.o_proj.bias *F32 *\[128\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.layers.1.mlp.down_proj.bias *F32 *\[128\]" \
	"model.norm.weight *F32 *\[128\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "bias_scale\|lm_head.weight_scale\|transformer\.\|qkv_proj.bias" "$T/plan" &&
	fail "telechat2: a quantized bias, a checkpoint name or a qkv bias: $(cat "$T/plan")"
refused_edit telechat2 's/"embed_layernorm": false/"embed_layernorm": true/' "embed_layernorm is true"
refused_edit telechat2 \
	's/"apply_residual_connection_post_layernorm": false/"apply_residual_connection_post_layernorm": true/' \
	"apply_residual_connection_post_layernorm is true"
refused_edit telechat2 's/"n_head": 8/"n_head": 8, "base": 20000/' "base 20000 differs"
# JAIS: GPT-2's names with the Conv1D weights transposed, c_attn [q_r; k_r; v_r] and c_fc /
# c_fc2 (apart) by rows, both c_proj by columns (biases whole), quantized; biases, LayerNorms
# and wte F32 unscaled; tied (no lm_head), the ALiBi buffer relative_pe.slopes skipped, no
# wpe; activation_function other than swiglu, tie_word_embeddings false and wpe under
# position_embedding_type alibi's name refused
"$CTL" plan --model-dir "$T/jais" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan jais"
plan_has jais "transformer.h.1.attn.c_attn.weight *I8 *\[96, 128\]" \
	"transformer.h.1.attn.c_attn.bias *F32 *\[96\]" \
	"transformer.h.1.attn.c_proj.weight *I8 *\[128, 32\]" \
	"transformer.h.1.attn.c_proj.bias *F32 *\[128\]" \
	"transformer.h.1.mlp.c_fc.weight *I8 *\[80, 128\]" \
	"transformer.h.1.mlp.c_fc2.weight *I8 *\[80, 128\]" \
	"transformer.h.1.mlp.c_fc2.bias *F32 *\[80\]" \
	"transformer.h.1.mlp.c_proj.weight *I8 *\[128, 80\]" \
	"transformer.wte.weight *F32 *\[256, 128\]" "skipped transformer.relative_pe.slopes"
grep -q "bias_scale\|lm_head.weight\|wpe.weight" "$T/plan" &&
	fail "jais: a quantized bias, an lm_head or a wpe: $(cat "$T/plan")"
refused_edit jais 's/"activation_function": "swiglu"/"activation_function": "gelu_new"/' \
	"runs only swiglu"
refused_edit jais 's/"tie_word_embeddings": true/"tie_word_embeddings": false/' \
	"skips every lm_head.weight"
refused_edit jais 's/"position_embedding_type": "alibi"/"position_embedding_type": "learned"/' \
	"position_embedding_type learned"
# ArcticForCausalLM: Llama's attention, layer 0's dense block_sparse_moe.mlp w13 / w2 quantized,
# layer 1's ArcticMoE: the router quantized (ReplicatedLinear with quant_config), ws / w2s every
# expert cut by tp and unquantized, the residual MLP unquantized; no EP; untied
"$CTL" plan --model-dir "$T/arctic" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan arctic"
plan_has arctic "model.layers.0.block_sparse_moe.mlp.w13.weight *I8 *\[64, 128\]" \
	"model.layers.0.block_sparse_moe.mlp.w2.weight *I8 *\[128, 32\]" \
	"model.layers.1.block_sparse_moe.gate.weight *I8 *\[4, 128\]" \
	"model.layers.1.block_sparse_moe.ws *F32 *\[4, 64, 128\]" \
	"model.layers.1.block_sparse_moe.w2s *F32 *\[4, 128, 32\]" \
	"model.layers.1.residual_mlp.w13.weight *F32 *\[128, 128\]" \
	"model.layers.1.residual_mlp.w2.weight *F32 *\[128, 64\]" \
	"model.layers.1.residual_layernorm.weight *F32 *\[128\]" \
	"lm_head.weight *F32 *\[512, 128\]"
grep -q "ws_scale\|w2s_scale\|residual_mlp.w13.weight_scale\|w13_weight\|experts\.0\." \
	"$T/plan" && fail "arctic: a quantized expert / residual MLP or FusedMoE name: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/arctic" --tp-size 1 --ep-size 2 >/dev/null 2>"$T/err" &&
	fail "arctic: ep_size 2 planned"
grep -q "vLLM's ArcticMoE) holds every expert" "$T/err" ||
	fail "arctic: the ep_size refusal: $(cat "$T/err")"
refused_edit arctic 's/"use_residual": true,//' "use_residual is missing"
refused_edit arctic 's/"moe_layer_frequency": 2/"moe_layer_frequency": 3/' \
	"moe_layer_frequency 3"
refused_edit arctic 's/"tie_word_embeddings": false/"tie_word_embeddings": true/' \
	"never ties lm_head"
# Grok-1: attn.q/k/v fused into attn.qkv_proj [q_r; k_r; v_r] (kv head 0 shared by ranks 0 and
# 1 at TP 4), o_proj by columns, the experts linear / linear_v / linear_1 stacked as
# moe_block.experts.w13_weight / w2_weight, quantized; moe_block.gate and the four norms (.scale
# served as .weight) whole and unscaled; tied (no lm_head); num_experts_per_tok past num_experts
# and rope_scaling refused
"$CTL" plan --model-dir "$T/grok1" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan grok1"
plan_has grok1 "model.layers.1.attn.qkv_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.moe_block.experts.w13_weight *I8 *\[4, 32, 128\]" \
	"model.layers.1.moe_block.experts.w2_weight *I8 *\[4, 128, 16\]" \
	"model.layers.1.moe_block.gate.weight *BF16 *\[4, 128\]" \
	"model.layers.1.post_moe_norm.weight *BF16 *\[128\]" "model.norm.weight *BF16 *\[128\]"
grep -q "gate.weight_scale\|norm.weight_scale\|lm_head.weight\|\.scale " "$T/plan" &&
	fail "grok1: a quantized router / norm, an lm_head or a .scale name: $(cat "$T/plan")"
refused_edit grok1 's/"num_experts_per_tok": 2/"num_experts_per_tok": 5/' \
	"num_experts_per_tok 5 is more than num_experts 4"
refused_edit grok1 's/"rms_norm_eps": 1e-5/"rms_norm_eps": 1e-5, "rope_scaling": {"type": "linear"}/' \
	"rope_scaling is set"

# Bailing MoE: query_key_value [q_r; k_r; v_r] (kv heads never replicated) and dense by columns,
# quantized, the qkv bias F32; the router whole and unquantized; the experts stacked (TP inside
# each), the shared expert merged; word_embeddings / lm_head by vocabulary rows; use_bias
# (BailingMoeConfig's default true), a tied head, first_k_dense_replace and TP past the kv
# heads refused
"$CTL" plan --model-dir "$T/bailing_moe" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan bailing_moe"
plan_has bailing_moe "model.layers.1.attention.query_key_value.weight *I8 *\[64, 128\]" \
	"model.layers.1.attention.query_key_value.bias *F32 *\[64\]" \
	"model.layers.1.attention.dense.weight *I8 *\[128, 32\]" \
	"model.layers.1.mlp.gate.weight *F32 *\[4, 128\]" \
	"model.layers.1.mlp.experts.w13_weight *I8 *\[4, 32, 128\]" \
	"model.layers.1.mlp.experts.w2_weight *I8 *\[4, 128, 16\]" \
	"model.layers.1.mlp.shared_experts.gate_up_proj.weight *I8 *\[32, 128\]" \
	"model.layers.1.mlp.shared_experts.down_proj.weight *I8 *\[128, 16\]" \
	"model.word_embeddings.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "bias_scale\|mlp.gate.weight_scale" "$T/plan" &&
	fail "bailing_moe: a quantized bias or router: $(cat "$T/plan")"
refused_edit bailing_moe 's/"use_bias": false/"use_bias": true/' "no Ling release sets it"
refused_edit bailing_moe 's/"tie_word_embeddings": false/"tie_word_embeddings": true/' \
	"BailingMoeForCausalLM does not have"
refused_edit bailing_moe 's/"first_k_dense_replace": 0/"first_k_dense_replace": 1/' \
	"every layer as an MoE block"
"$CTL" plan --model-dir "$T/bailing_moe" --tp-size 8 --rank-only >"$T/plan" 2>&1 &&
	fail "bailing_moe: tp 8 over 4 kv heads not refused"
grep -q "does not divide num_key_value_heads 4" "$T/plan" ||
	fail "bailing_moe: tp 8: $(cat "$T/plan")"

# Xverse: vLLM's llama.py cut (MHA; TP 4: 2 heads of q, k and v), no biases, untied lm_head by
# vocabulary rows unquantized; a bias key true without the biases and a hidden_act other than
# silu refused
"$CTL" plan --model-dir "$T/xverse" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan xverse"
plan_has xverse "model.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "\.bias\|lm_head.weight_scale" "$T/plan" &&
	fail "xverse: a bias or a quantized lm_head: $(cat "$T/plan")"
refused_edit xverse 's/"hidden_act": "silu"/"hidden_act": "gelu", "bias": false/' "hidden_act"
refused_edit xverse 's/"hidden_act": "silu"/"hidden_act": "silu", "bias": true/' "bias true"

# Aquila: vLLM's llama.py cut (GQA 8 / 2; TP 4: 2 q heads, the rank's kv head replicated), no
# biases, untied lm_head by vocabulary rows unquantized; a bias key true without the biases and a
# hidden_act other than silu refused
"$CTL" plan --model-dir "$T/aquila" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan aquila"
plan_has aquila "model.layers.1.self_attn.qkv_proj.weight *I8 *\[64, 128\]" \
	"model.layers.1.self_attn.o_proj.weight *I8 *\[128, 32\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[96, 128\]" \
	"model.layers.1.mlp.down_proj.weight *I8 *\[128, 48\]" \
	"model.embed_tokens.weight *F32 *\[256, 128\]" "lm_head.weight *F32 *\[256, 128\]"
grep -q "\.bias\|lm_head.weight_scale" "$T/plan" &&
	fail "aquila: a bias or a quantized lm_head: $(cat "$T/plan")"
refused_edit aquila 's/"hidden_act": "silu"/"hidden_act": "gelu"/' "hidden_act"
refused_edit aquila 's/"hidden_act": "silu"/"hidden_act": "silu", "attention_bias": true/' "bias true"
