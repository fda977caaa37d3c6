# shard_cli_families1.bash — sourced by shard_cli.sh (run-tests.sh runs only *.sh): each
# family's own plan / shard checks, Seed-OSS to Hunyuan V1 MoE, on the fixtures shard_cli.sh
# generated into $T, with its fail, $CTL and $T.
# shellcheck shell=bash disable=SC2154
# Seed-OSS: the fixture's three bias switches on: q/k/v biases fused (kv head 1 shared by
# ranks 2-3 at TP 4), o_proj's and down_proj's replicated, gate / up's merged by rows; none
# quantized
"$CTL" plan --model-dir "$T/seed_oss" --tp-size 4 --tp-rank 3 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan seed_oss"
for l in "1.self_attn.qkv_proj.weight *I8 *\[256, 256\]" "1.self_attn.qkv_proj.bias *BF16 *\[256\]" \
	"1.self_attn.o_proj.weight *I8 *\[256, 128\]" "1.self_attn.o_proj.bias *BF16 *\[256\]" \
	"1.mlp.gate_up_proj.bias *BF16 *\[256\]" "1.mlp.down_proj.bias *BF16 *\[256\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "seed_oss line $l: $(cat "$T/plan")"
done
grep -q "bias_scale" "$T/plan" && fail "seed_oss: a quantized bias: $(cat "$T/plan")"
mkdir -p "$T/so_nomlp" && cp "$T/seed_oss/model.safetensors" "$T/so_nomlp/" &&
	sed 's/"mlp_bias": true/"mlp_bias": false/' "$T/seed_oss/config.json" >"$T/so_nomlp/config.json"
"$CTL" plan --model-dir "$T/so_nomlp" --tp-size 2 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "seed_oss with mlp_bias false should exit 3"
grep -q "without MLP biases (mlp_bias is false or absent)" "$T/err" ||
	fail "seed_oss mlp_bias false: $(cat "$T/err")"
# SmolLM3: Llama's rows (the NoPE layer 3 like any other), tied with the key absent (no
# lm_head), no biases; layer_types checked
"$CTL" plan --model-dir "$T/smollm3" --tp-size 4 --tp-rank 2 --rank-only >"$T/plan" ||
	fail "plan smollm3"
for l in "3.self_attn.qkv_proj.weight *BF16 *\[128, 256\]" "3.mlp.gate_up_proj.weight *BF16 *\[256, 256\]" \
	"3.self_attn.o_proj.weight *BF16 *\[256, 64\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "smollm3 line $l: $(cat "$T/plan")"
done
grep -q "^ *lm_head\|bias" "$T/plan" && fail "smollm3: an lm_head or a bias: $(cat "$T/plan")"
mkdir -p "$T/smol_lt" && cp "$T/smollm3/model.safetensors" "$T/smol_lt/" &&
	sed 's/"full_attention",$/"chunked_attention",/' "$T/smollm3/config.json" >"$T/smol_lt/config.json"
"$CTL" plan --model-dir "$T/smol_lt" --tp-size 2 >/dev/null 2>"$T/err"
[ $? -eq 1 ] || fail "smollm3 with a chunked_attention layer should exit 1"
grep -q "layer_types\[0\] is neither" "$T/err" || fail "smollm3 layer_types: $(cat "$T/err")"
# GraniteMoE: the experts stacked in the checkpoint become Mixtral's stacks and router
"$CTL" plan --model-dir "$T/granitemoe" --tp-size 2 --tp-rank 1 --ep-size 2 --ep-rank 1 \
	--rank-only >"$T/plan" || fail "plan granitemoe"
grep -q "model.layers.1.block_sparse_moe.experts.w13_weight *BF16 *\[3, 256, 256\]" "$T/plan" ||
	fail "granitemoe w13 line: $(grep w13 "$T/plan")"
grep -q "model.layers.1.block_sparse_moe.gate.weight *BF16 *\[6, 256\]" "$T/plan" ||
	fail "granitemoe router line"
"$CTL" plan --model-dir "$T/granitemoe" --tp-size 1 --ep-size 7 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "granitemoe ep 7 > 6 experts should exit 3"
grep -q "exceeds the 6 routed experts" "$T/err" || fail "granitemoe ep message: $(cat "$T/err")"
# GPT-OSS: MXFP4 experts dequantized to BF16 (dtype source), biases stacked, sinks by heads
"$CTL" plan --model-dir "$T/gpt_oss" --tp-size 2 --tp-rank 1 --ep-size 2 --ep-rank 1 \
	--rank-only >"$T/plan" || fail "plan gpt_oss"
for l in "mlp.experts.w13_weight *BF16 *\[2, 256, 256\]" "mlp.experts.w13_bias *BF16 *\[2, 256\]" \
	"mlp.experts.w2_bias *BF16 *\[2, 256\]" "self_attn.sinks *BF16 *\[4\]"; do
	grep -q "model.layers.1.$l" "$T/plan" || fail "gpt_oss line $l: $(cat "$T/plan")"
done
"$CTL" shard --model-dir "$T/gpt_oss" --tp-size 2 --tp-rank 0 --quant int8-channel \
	--out "$T/go.st" || fail "gpt_oss int8 shard"
# Llama 4: layer 0 dense (intermediate_size_mlp 384), layer 1 MoE (experts stacked [E, hid,
# 2I], transposed; shared expert), the vision tower by heads / columns / rows
"$CTL" plan --model-dir "$T/llama4" --tp-size 2 --tp-rank 1 --ep-size 2 --ep-rank 1 \
	--rank-only >"$T/plan" || fail "plan llama4"
for l in "1.feed_forward.experts.w13_weight *BF16 *\[2, 128, 256\]" \
	"1.feed_forward.experts.w2_weight *BF16 *\[2, 256, 64\]" \
	"1.feed_forward.shared_expert.gate_up_proj.weight *BF16 *\[64, 256\]" \
	"0.feed_forward.gate_up_proj.weight *BF16 *\[384, 256\]"; do
	grep -q "language_model.model.layers.$l" "$T/plan" || fail "llama4 line $l: $(cat "$T/plan")"
done
grep -q "vision_model.model.layers.1.self_attn.qkv_proj.weight *BF16 *\[96, 64\]" "$T/plan" ||
	fail "llama4 vision qkv: $(cat "$T/plan")"
"$CTL" shard --model-dir "$T/llama4" --tp-size 2 --tp-rank 0 --quant int8-channel \
	--out "$T/l4.st" || fail "llama4 int8 shard"
# Qwen3-Next: layers 0, 2 linear attention (in_proj_qkvz / in_proj_ba by key-head groups,
# conv1d's q / k / v channels each split, A_log by value heads), 1, 3 full attention (q with its
# gates fused with k / v), layer 0 dense; mtp.* skipped; in_proj_ba never quantized
"$CTL" plan --model-dir "$T/qwen3_next" --tp-size 2 --tp-rank 1 --ep-size 2 --ep-rank 1 \
	--quant fp8-block --rank-only >"$T/plan" || fail "plan qwen3_next"
for l in "0.linear_attn.in_proj_qkvz.weight *F8_E4M3 *\[384, 256\]" \
	"0.linear_attn.in_proj_ba.weight *BF16 *\[8, 256\]" \
	"0.linear_attn.conv1d.weight *BF16 *\[256, 1, 4\]" "2.linear_attn.A_log *F32 *\[4\]" \
	"1.self_attn.qkv_proj.weight *F8_E4M3 *\[384, 256\]" \
	"3.mlp.experts.w13_weight *F8_E4M3 *\[2, 128, 256\]" \
	"0.mlp.gate_up_proj.weight *F8_E4M3 *\[384, 256\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "qwen3_next line $l: $(cat "$T/plan")"
done
grep -q "in_proj_ba.weight_scale" "$T/plan" && fail "qwen3_next: in_proj_ba quantized"
grep -qx "skipped mtp.fc.weight" "$T/plan" || fail "qwen3_next: mtp.fc.weight not skipped"
"$CTL" plan --model-dir "$T/qwen3_next" --tp-size 8 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "qwen3_next tp 8 should exit 3"
grep -q "does not divide num_attention_heads 4; use tp_size 1, 2 or 4" "$T/err" ||
	fail "qwen3_next tp 8: $(cat "$T/err")"
# GLM-4.5: fused q/k/v with biases, per-head q/k norms and the router with its F32
# correction bias replicated, layer 0 dense, experts EP-owned, the shared expert TP-split,
# the MTP layer 3 dropped and listed as skipped
"$CTL" plan --model-dir "$T/glm4_moe" --tp-size 2 --tp-rank 1 --ep-size 2 --ep-rank 1 \
	--rank-only >"$T/plan" || fail "plan glm4_moe"
for l in "1.self_attn.qkv_proj.weight *BF16 *\[192, 128\]" "1.self_attn.qkv_proj.bias *BF16 *\[192\]" \
	"1.self_attn.q_norm.weight *BF16 *\[32\]" "1.mlp.gate.e_score_correction_bias *F32 *\[8\]" \
	"1.mlp.experts.w13_weight *BF16 *\[4, 128, 128\]" "1.mlp.experts.w2_weight *BF16 *\[4, 128, 64\]" \
	"1.mlp.shared_experts.gate_up_proj.weight *BF16 *\[64, 128\]" \
	"0.mlp.gate_up_proj.weight *BF16 *\[256, 128\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "glm4_moe line $l: $(cat "$T/plan")"
done
grep -q "^skipped model.layers.3.eh_proj.weight" "$T/plan" || fail "glm4_moe MTP not skipped"
grep -v "^skipped" "$T/plan" | grep -q "model.layers.3." && fail "glm4_moe MTP layer emitted"
"$CTL" shard --model-dir "$T/glm4_moe" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--out "$T/glm.st" || fail "glm4_moe int8 shard"
"$CTL" plan --model-dir "$T/glm4_moe" --tp-size 1 --ep-size 16 --ep-rank 0 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "glm4_moe ep 16 should exit 3"
grep -q "ep_size 16 exceeds the 8 routed experts; use ep_size <= 8" "$T/err" ||
	fail "glm4_moe ep 16 message: $(cat "$T/err")"
# dots.llm1: Qwen3's attention (q/k/v without biases, per-head q/k norms on every layer),
# the router with its F32 correction bias replicated, layer 0 dense, experts EP-owned, the
# two shared experts (128 rows) TP-split; no MTP layer, nothing skipped
"$CTL" plan --model-dir "$T/dots1" --tp-size 2 --tp-rank 1 --ep-size 2 --ep-rank 1 \
	--rank-only >"$T/plan" || fail "plan dots1"
for l in "2.self_attn.qkv_proj.weight *BF16 *\[256, 256\]" "0.self_attn.k_norm.weight *BF16 *\[32\]" \
	"2.mlp.gate.e_score_correction_bias *F32 *\[8\]" "2.mlp.gate.weight *BF16 *\[8, 256\]" \
	"1.mlp.experts.w13_weight *BF16 *\[4, 128, 256\]" "1.mlp.experts.w2_weight *BF16 *\[4, 256, 64\]" \
	"1.mlp.shared_experts.gate_up_proj.weight *BF16 *\[128, 256\]" \
	"0.mlp.gate_up_proj.weight *BF16 *\[512, 256\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "dots1 line $l: $(cat "$T/plan")"
done
grep -q "qkv_proj.bias\|^skipped\|layers.0.mlp.gate.weight" "$T/plan" &&
	fail "dots1: a bias, a skipped tensor or a router on the dense layer: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/dots1" --tp-size 1 --ep-size 16 --ep-rank 0 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "dots1 ep 16 should exit 3"
grep -q "ep_size 16 exceeds the 8 routed experts; use ep_size <= 8" "$T/err" ||
	fail "dots1 ep 16 message: $(cat "$T/err")"
# ERNIE 4.5 MoE: the F32 router and Ernie4_5_MoeStatics' correction bias [1, E] replicated,
# layers 0 and 3 dense (moe_layer_start_index 1, moe_layer_end_index 2), experts EP-owned,
# the 2 shared experts TP-split, the MTP module (model.mtp_*) dropped and listed as skipped
"$CTL" plan --model-dir "$T/ernie4_5_moe" --tp-size 2 --tp-rank 1 --ep-size 2 --ep-rank 1 \
	--rank-only >"$T/plan" || fail "plan ernie4_5_moe"
for l in "1.self_attn.qkv_proj.weight *BF16 *\[128, 128\]" "1.mlp.gate.weight *F32 *\[8, 128\]" \
	"1.mlp.moe_statics.e_score_correction_bias *F32 *\[1, 8\]" \
	"2.mlp.experts.w13_weight *BF16 *\[4, 128, 128\]" "1.mlp.experts.w2_weight *BF16 *\[4, 128, 64\]" \
	"1.mlp.shared_experts.gate_up_proj.weight *BF16 *\[128, 128\]" \
	"0.mlp.gate_up_proj.weight *BF16 *\[256, 128\]" "3.mlp.down_proj.weight *BF16 *\[128, 128\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "ernie4_5_moe line $l: $(cat "$T/plan")"
done
grep -q "^skipped model.mtp_linear_proj.0.weight" "$T/plan" || fail "ernie4_5_moe MTP not skipped"
grep -v "^skipped" "$T/plan" | grep -q "mtp" && fail "ernie4_5_moe MTP emitted"
grep -q "model.layers.3.mlp.gate.weight" "$T/plan" && fail "ernie4_5_moe layer 3 made MoE"
"$CTL" shard --model-dir "$T/ernie4_5_moe" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--out "$T/ern.st" || fail "ernie4_5_moe int8 shard"
# ERNIE-4.5-0.3B's layout: tied by default, every use_bias bias
"$CTL" plan --model-dir "$T/ernie4_5" --tp-size 2 --tp-rank 0 --rank-only >"$T/plan" ||
	fail "plan ernie4_5"
grep -q "lm_head tied" "$T/plan" || fail "ernie4_5 not tied"
for l in "0.self_attn.qkv_proj.bias *BF16 *\[192\]" "0.self_attn.o_proj.bias *BF16 *\[128\]" \
	"1.mlp.gate_up_proj.bias *BF16 *\[256\]" "1.mlp.down_proj.bias *BF16 *\[128\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "ernie4_5 line $l: $(cat "$T/plan")"
done
# Command R+ (cohere): at TP 4 (> KV 2) rank 3 holds q heads 6..7 and kv head 1, with their
# rows of the per-head q_norm [8, 32] / k_norm [2, 32] (never quantized); one norm per layer
# (the parallel block); tied by default, so no lm_head. Cohere2: untied, lm_head by rows.
"$CTL" plan --model-dir "$T/cohere" --tp-size 4 --tp-rank 3 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan cohere"
for l in "1.self_attn.qkv_proj.weight *I8 *\[128, 256\]" "1.self_attn.q_norm.weight *BF16 *\[2, 32\]" \
	"1.self_attn.k_norm.weight *BF16 *\[1, 32\]" "1.input_layernorm.weight *BF16 *\[256\]" \
	"1.mlp.gate_up_proj.weight *I8 *\[256, 256\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "cohere line $l: $(cat "$T/plan")"
done
grep -q "post_attention_layernorm\|_norm.weight_scale\|^lm_head" "$T/plan" &&
	fail "cohere: a second norm, a quantized q/k norm or an lm_head: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/cohere2" --tp-size 2 --tp-rank 1 --rank-only >"$T/plan" ||
	fail "plan cohere2"
grep -q "lm_head.weight *BF16 *\[512, 256\]" "$T/plan" || fail "cohere2 lm_head: $(cat "$T/plan")"
grep -q "q_norm" "$T/plan" && fail "cohere2 has no q/k norms"
"$CTL" plan --model-dir "$T/cohere" --tp-size 16 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "cohere tp 16 should exit 3"
grep -q "does not divide num_attention_heads 8; use tp_size 1, 2, 4 or 8" "$T/err" ||
	fail "cohere tp 16: $(cat "$T/err")"
# Qwen3-VL-MoE (released names model.language_model.* / model.visual.*, served under
# Qwen2-VL's model.layers.* / visual.*): at TP 2 x EP 2 rank 3 holds experts 4..7 of the
# bmm stacks, transposed into w13 [4, 2 * 64, 256] / w2 [4, 256, 64], int8 per row; layer 1
# (mlp_only_layers) a dense MLP; the deepstack mergers' fc1 by rows, fc2 by columns; the
# patch embed (with its bias) and pos_embed replicated and never quantized.
"$CTL" plan --model-dir "$T/qwen3_vl_moe" --tp-size 2 --tp-rank 1 --ep-size 2 --ep-rank 1 \
	--quant int8-channel --rank-only >"$T/plan" || fail "plan qwen3_vl_moe"
for l in "model.layers.2.mlp.experts.w13_weight *I8 *\[4, 128, 256\]" \
	"model.layers.2.mlp.experts.w2_weight *I8 *\[4, 256, 64\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[384, 256\]" \
	"visual.deepstack_merger_list.1.linear_fc1.weight *I8 *\[128, 256\]" \
	"visual.deepstack_merger_list.1.linear_fc2.weight *I8 *\[256, 128\]" \
	"visual.patch_embed.proj.weight *BF16 *\[64, 3, 2, 4, 4\]" \
	"visual.patch_embed.proj.bias *BF16 *\[64\]" "visual.pos_embed.weight *BF16 *\[16, 64\]"; do
	grep -q "$l" "$T/plan" || fail "qwen3_vl_moe line $l: $(cat "$T/plan")"
done
grep -q "language_model\|model.visual\|mlp.gate.weight_scale" "$T/plan" &&
	fail "qwen3_vl_moe: a released name or a quantized router: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/qwen3_vl" --tp-size 8 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "qwen3_vl tp 8 should exit 3 (4 vision heads)"
grep -q "does not divide vision_config.num_heads 4; use tp_size 1, 2 or 4" "$T/err" ||
	fail "qwen3_vl tp 8: $(cat "$T/err")"
# OLMo 3: OLMo 2's tensors (no input_layernorm, q_norm [256] / k_norm [64] whole on every
# rank, never quantized); a layer_types entry that is neither type refused, naming it
"$CTL" plan --model-dir "$T/olmo3" --tp-size 4 --tp-rank 3 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan olmo3"
for l in "3.self_attn.qkv_proj.weight *I8 *\[128, 256\]" "3.self_attn.q_norm.weight *BF16 *\[256\]" \
	"3.self_attn.k_norm.weight *BF16 *\[64\]" "3.post_feedforward_layernorm.weight *BF16 *\[256\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "olmo3 line $l: $(cat "$T/plan")"
done
grep -q "input_layernorm\|_norm.weight_scale" "$T/plan" &&
	fail "olmo3: an input norm or a quantized q/k norm: $(cat "$T/plan")"
cp -r "$T/olmo3" "$T/olmo3_bad"
sed -i 's/"full_attention"/"chunked_attention"/' "$T/olmo3_bad/config.json"
"$CTL" plan --model-dir "$T/olmo3_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "olmo3_bad planned"
grep -q 'layer_types\[3\] is neither "sliding_attention" nor "full_attention", the two OLMo 3' "$T/err" ||
	fail "olmo3 layer_types: $(cat "$T/err")"
rm -rf "$T/olmo3_bad"
# EXAONE 4.0: per-head q_norm / k_norm [32] whole on every rank, the post norms, tied (no
# lm_head); an attention bias is not EXAONE 4.0's
"$CTL" plan --model-dir "$T/exaone4" --tp-size 8 --tp-rank 5 --rank-only >"$T/plan" ||
	fail "plan exaone4"
for l in "3.self_attn.qkv_proj.weight *BF16 *\[96, 256\]" "3.self_attn.q_norm.weight *BF16 *\[32\]" \
	"3.self_attn.k_norm.weight *BF16 *\[32\]" "3.post_attention_layernorm.weight *BF16 *\[256\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "exaone4 line $l: $(cat "$T/plan")"
done
grep -q "input_layernorm\|^ *lm_head" "$T/plan" && fail "exaone4: an input norm or an lm_head: $(cat "$T/plan")"
# Mistral 3 (>= 4.52 layout, projector biases): served under the released names; the
# Pixtral tower's q/k/v and gate / up fused, the projector's linear_1 by rows (its bias
# too), linear_2 by columns (its bias whole); merging_layer whole, never quantized
"$CTL" plan --model-dir "$T/mistral3_hf5" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan mistral3_hf5"
for l in "vision_tower.transformer.layers.1.attention.qkv_proj.weight *I8 *\[192, 128\]" \
	"vision_tower.transformer.layers.1.feed_forward.gate_up_proj.weight *I8 *\[256, 128\]" \
	"multi_modal_projector.linear_1.weight *I8 *\[128, 128\]" \
	"multi_modal_projector.linear_1.bias *BF16 *\[128\]" \
	"multi_modal_projector.linear_2.weight *I8 *\[256, 128\]" \
	"multi_modal_projector.linear_2.bias *BF16 *\[256\]" \
	"multi_modal_projector.patch_merger.merging_layer.weight *BF16 *\[128, 512\]" \
	"language_model.lm_head.weight"; do
	grep -q "$l" "$T/plan" || fail "mistral3_hf5 line $l: $(cat "$T/plan")"
done
grep -q "model.language_model\|model.vision_tower\|merging_layer.weight_scale" "$T/plan" &&
	fail "mistral3_hf5: a >= 4.52 name or a quantized merger: $(cat "$T/plan")"
# GLM-4.1V (released layout): served under model.layers.* / visual.*; the tower's qkv by heads,
# the blocks' and the merger's gate / up fused, the merger's proj by rows, all quantized; the
# Conv3d / Conv2d kernels and the position table whole, never quantized; TP 8 refused naming
# the 4 heads
"$CTL" plan --model-dir "$T/glm4v" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan glm4v"
for l in "visual.blocks.1.attn.qkv.weight *I8 *\[96, 64\]" \
	"visual.blocks.1.mlp.gate_up_proj.weight *I8 *\[128, 64\]" \
	"visual.merger.proj.weight *I8 *\[64, 128\]" \
	"visual.merger.gate_up_proj.weight *I8 *\[256, 128\]" \
	"visual.merger.down_proj.weight *I8 *\[128, 128\]" \
	"visual.downsample.weight *BF16 *\[128, 64, 2, 2\]" \
	"visual.patch_embed.proj.weight *BF16 *\[64, 3, 2, 4, 4\]" \
	"visual.embeddings.position_embedding.weight *BF16 *\[16, 64\]" \
	"model.layers.1.self_attn.qkv_proj.bias *BF16 *\[128\]" \
	"model.layers.1.post_mlp_layernorm.weight *BF16 *\[128\]"; do
	grep -q "$l" "$T/plan" || fail "glm4v line $l: $(cat "$T/plan")"
done
grep -q "model.language_model\|model.visual\|downsample.weight_scale" "$T/plan" &&
	fail "glm4v: a released name or a quantized Conv kernel: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/glm4v" --tp-size 8 >/dev/null 2>"$T/err" && fail "glm4v TP 8 planned"
grep -q "num_attention_heads 4" "$T/err" || fail "glm4v TP 8: $(cat "$T/err")"
# GLM-4.5V: its MTP layer (model.language_model.layers.3.*) skipped under its released name
"$CTL" plan --model-dir "$T/glm4v_moe" --tp-size 2 --ep-size 2 >"$T/plan" || fail "plan glm4v_moe"
grep -q "skipped model.language_model.layers.3.eh_proj.weight" "$T/plan" ||
	fail "glm4v_moe MTP layer: $(cat "$T/plan")"
# Apertus: no gate, so up_proj keeps its name (rows by intermediate_size) and down_proj is cut
# by columns, both quantized; xIELU's alpha_p / alpha_n [1] and beta / eps [] whole and
# never quantized; a gate in the checkpoint refused as unknown
"$CTL" plan --model-dir "$T/apertus" --tp-size 4 --tp-rank 3 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan apertus"
for l in "3.mlp.up_proj.weight *I8 *\[128, 256\]" "3.mlp.down_proj.weight *I8 *\[256, 128\]" \
	"3.mlp.act_fn.alpha_p *BF16 *\[1\]" "3.mlp.act_fn.alpha_n *BF16 *\[1\]" \
	"3.mlp.act_fn.beta *BF16 *\[\]" "3.mlp.act_fn.eps *BF16 *\[\]" \
	"3.attention_layernorm.weight *BF16 *\[256\]" "3.feedforward_layernorm.weight *BF16 *\[256\]" \
	"3.self_attn.q_norm.weight *BF16 *\[32\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "apertus line $l: $(cat "$T/plan")"
done
grep -q "gate_up_proj\|act_fn.*_scale\|input_layernorm" "$T/plan" &&
	fail "apertus: a gate_up_proj, a quantized xIELU scalar or an input norm: $(cat "$T/plan")"
cp -r "$T/apertus" "$T/apertus_bad"
python3 - "$T/apertus_bad/model.safetensors" <<'PY' || fail "apertus_bad: adding a gate"
import json, struct, sys
p = sys.argv[1]
b = open(p, "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
end = max(v["data_offsets"][1] for k, v in h.items() if k != "__metadata__")
h["model.layers.2.mlp.gate_proj.weight"] = {"dtype": "BF16", "shape": [512, 256],
                                            "data_offsets": [end, end + 512 * 256 * 2]}
hb = json.dumps(h).encode()
hb += b" " * (-len(hb) % 8)
open(p, "wb").write(struct.pack("<Q", len(hb)) + hb + b[8 + n:8 + n + end] + bytes(512 * 256 * 2))
PY
"$CTL" plan --model-dir "$T/apertus_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "apertus_bad planned"
grep -q "model.layers.2.mlp.gate_proj.weight': unknown tensor for family apertus" "$T/err" ||
	fail "apertus gate: $(cat "$T/err")"
rm -rf "$T/apertus_bad"
# Arcee: up_proj by rows under its own name with its mlp_bias bias (rows alike), down_proj by
# columns with its bias whole; the biases never quantized; mlp_bias false refuses them
"$CTL" plan --model-dir "$T/arcee" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan arcee"
for l in "1.mlp.up_proj.weight *I8 *\[256, 256\]" "1.mlp.up_proj.bias *BF16 *\[256\]" \
	"1.mlp.down_proj.weight *I8 *\[256, 256\]" "1.mlp.down_proj.bias *BF16 *\[256\]" \
	"1.input_layernorm.weight *BF16 *\[256\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "arcee line $l: $(cat "$T/plan")"
done
grep -q "gate_up_proj\|bias_scale" "$T/plan" && fail "arcee: a gate_up_proj or a quantized bias: $(cat "$T/plan")"
cp -r "$T/arcee" "$T/arcee_bad"
sed -i 's/"mlp_bias": true/"mlp_bias": false/' "$T/arcee_bad/config.json"
"$CTL" plan --model-dir "$T/arcee_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "arcee_bad planned"
grep -q "without MLP biases (mlp_bias is false or absent)" "$T/err" || fail "arcee mlp_bias: $(cat "$T/err")"
rm -rf "$T/arcee_bad"
# LFM2: the short conv under vLLM's short_conv. names, in_proj [B_r; C_r; x_r] (3 x 64 rows at
# TP 4), conv [64, 1, 3] by channels, out_proj by columns, all BF16 under int8; w1 / w3 merged
# into w13 and quantized; the tied head absent; a layer_types entry LFM2 has no layer for
# refused naming it
"$CTL" plan --model-dir "$T/lfm2" --tp-size 4 --tp-rank 3 --quant int8-channel --rank-only \
	>"$T/plan" || fail "plan lfm2"
for l in "0.short_conv.in_proj.weight *BF16 *\[192, 256\]" "0.short_conv.conv.weight *BF16 *\[64, 1, 3\]" \
	"3.short_conv.out_proj.weight *BF16 *\[256, 64\]" "2.self_attn.qkv_proj.weight *I8 *\[128, 256\]" \
	"2.self_attn.out_proj.weight *I8 *\[256, 64\]" "2.self_attn.q_layernorm.weight *BF16 *\[32\]" \
	"1.feed_forward.w13.weight *I8 *\[256, 256\]" "1.feed_forward.w2.weight *I8 *\[256, 128\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "lfm2 line $l: $(cat "$T/plan")"
done
grep -q "short_conv.*weight_scale\|layers\.[0-9]*\.conv\.\|^ *lm_head" "$T/plan" &&
	fail "lfm2: a quantized conv, a checkpoint name or an lm_head: $(cat "$T/plan")"
cp -r "$T/lfm2" "$T/lfm2_bad"
sed -i 's/"full_attention"/"linear_attention"/' "$T/lfm2_bad/config.json"
"$CTL" plan --model-dir "$T/lfm2_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "lfm2_bad planned"
grep -q 'layer_types\[2\] is neither "conv" nor "full_attention"' "$T/err" ||
	fail "lfm2 layer_types: $(cat "$T/err")"
rm -rf "$T/lfm2_bad"
# Granite 4.0: the Mamba2 mixer cut as vLLM's MambaMixer2 loads it (in_proj [z_r; x_r; B; C;
# dt_r]: 128 + 128 + 16 + 16 + 4 rows at TP 2, the one group's B and C on both ranks;
# conv1d [x_r; B; C]); quantized at TP 1 (in_proj / out_proj, not conv1d), refused at TP 2
# with one group (exit 3, naming the numbers and tp_size 1); a layer type that is neither
# mamba nor attention refused
"$CTL" plan --model-dir "$T/granitemoehybrid" --tp-size 2 --tp-rank 1 --rank-only >"$T/plan" ||
	fail "plan granitemoehybrid"
for l in "0.mamba.in_proj.weight *BF16 *\[292, 128\]" "0.mamba.conv1d.weight *BF16 *\[160, 1, 4\]" \
	"0.mamba.conv1d.bias *BF16 *\[160\]" "0.mamba.A_log *BF16 *\[4\]" "0.mamba.norm.weight *BF16 *\[128\]" \
	"0.mamba.out_proj.weight *BF16 *\[128, 128\]" "2.self_attn.qkv_proj.weight *BF16 *\[128, 128\]" \
	"1.block_sparse_moe.experts.w13_weight *BF16 *\[4, 64, 128\]" \
	"3.shared_mlp.input_linear.weight *BF16 *\[96, 128\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "granitemoehybrid line $l: $(cat "$T/plan")"
done
grep -q "2.mamba\|3.self_attn\|^ *lm_head" "$T/plan" && fail "granitemoehybrid layer kinds: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/granitemoehybrid" --tp-size 1 --tp-rank 0 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan granitemoehybrid int8"
for l in "0.mamba.in_proj.weight *I8 *\[552, 128\]" "0.mamba.out_proj.weight_scale *F32" \
	"0.mamba.conv1d.weight *BF16 *\[288, 1, 4\]" "0.mamba.D *BF16 *\[8\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "granitemoehybrid int8 line $l: $(cat "$T/plan")"
done
"$CTL" plan --model-dir "$T/granitemoehybrid" --tp-size 2 --quant int8-channel >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "granitemoehybrid int8 tp 2 should exit 3"
grep -q "quant int8-channel at tp_size 2 with mamba_n_groups 1.*; use tp_size 1" "$T/err" ||
	fail "granitemoehybrid int8 tp 2: $(cat "$T/err")"
cp -r "$T/granitemoehybrid" "$T/g4_bad"
sed -i 's/"attention"/"full_attention"/' "$T/g4_bad/config.json"
"$CTL" plan --model-dir "$T/g4_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "g4_bad planned"
grep -q 'layer_types\[2\] is neither "mamba" nor "attention"' "$T/err" ||
	fail "granitemoehybrid layer_types: $(cat "$T/err")"
rm -rf "$T/g4_bad"
# Hunyuan V1 dense: q/k/v biases fused (kv head 1 shared by ranks 2-3 at TP 4), o_proj's
# bias and the per-head query / key layernorms [64] whole, none of them quantized, tied (no
# lm_head); use_cla true refused (exit 3)
"$CTL" plan --model-dir "$T/hunyuan_v1_dense" --tp-size 4 --tp-rank 3 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan hunyuan_v1_dense"
for l in "1.self_attn.qkv_proj.weight *I8 *\[256, 256\]" "1.self_attn.qkv_proj.bias *BF16 *\[256\]" \
	"1.self_attn.o_proj.weight *I8 *\[256, 128\]" "1.self_attn.o_proj.bias *BF16 *\[256\]" \
	"1.self_attn.query_layernorm.weight *BF16 *\[64\]" "1.self_attn.key_layernorm.weight *BF16 *\[64\]" \
	"1.mlp.gate_up_proj.weight *I8 *\[256, 256\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "hunyuan_v1_dense line $l: $(cat "$T/plan")"
done
grep -q "bias_scale\|layernorm.weight_scale\|^ *lm_head" "$T/plan" &&
	fail "hunyuan_v1_dense: a quantized bias or norm, or an lm_head: $(cat "$T/plan")"
mkdir -p "$T/hy_cla" && cp "$T/hunyuan_v1_dense/model.safetensors" "$T/hy_cla/" &&
	sed 's/"use_cla": false/"use_cla": true/' "$T/hunyuan_v1_dense/config.json" >"$T/hy_cla/config.json"
"$CTL" plan --model-dir "$T/hy_cla" --tp-size 2 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "hunyuan_v1_dense with use_cla true should exit 3"
grep -q "use_cla true (cross-layer attention" "$T/err" || fail "hunyuan_v1_dense use_cla: $(cat "$T/err")"
rm -rf "$T/hy_cla"
# Hunyuan V1 MoE: the router mlp.gate.wg served as mlp.gate, unquantized; EP 2 x TP 2 rank 3
# holds experts 4..7 whole, the shared MLP's tp half; moe_intermediate_size with different
# per-layer entries refused (the model's config.json, before any layout)
"$CTL" plan --model-dir "$T/hunyuan_v1_moe" --tp-size 2 --tp-rank 1 --ep-size 2 --ep-rank 1 \
	--quant int8-channel --rank-only >"$T/plan" || fail "plan hunyuan_v1_moe"
for l in "1.mlp.gate.weight *BF16 *\[8, 256\]" "1.mlp.experts.w13_weight *I8 *\[4, 256, 256\]" \
	"1.mlp.experts.w2_weight *I8 *\[4, 256, 128\]" "1.mlp.shared_mlp.gate_up_proj.weight *I8 *\[128, 256\]" \
	"1.mlp.shared_mlp.down_proj.weight *I8 *\[256, 64\]" "1.self_attn.query_layernorm.weight *BF16 *\[32\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "hunyuan_v1_moe line $l: $(cat "$T/plan")"
done
grep -q "gate.wg\|gate.weight_scale" "$T/plan" && fail "hunyuan_v1_moe: a checkpoint router name or a quantized router: $(cat "$T/plan")"
refused_edit hunyuan_v1_moe 's/"moe_intermediate_size":\[128,128\]/"moe_intermediate_size":[128,64]/' "moe_intermediate_size\[1\] is 64" flat
