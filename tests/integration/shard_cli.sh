#!/usr/bin/env bash
# weightctl plan / shard: exit codes (0 ok, 2 usage, 3 layout invalid, 1 other),
# safetensors metadata, and byte-identical output across runs for every scheme
# on every family fixture (deepseek_v3 with none and fp8-block included).
set -u
B=${WT_BUILD:-build}
CTL=$B/weightctl
MK=$B/wt-mkckpt
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-shardcli-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "shard_cli.sh: FAIL: $*"; exit 1; }
. "$(dirname "$0")/fetch_lib/fams.sh"

FAMS="llama qwen2 qwen3 mixtral qwen2_moe deepseek_v3 bert llama_fp8 llama_ct_fp8 llama_ct_fp8_tensor qwen3_ct_fp8_block gemma gemma2 gemma3_text phi3 deepseek_v2 starcoder2 glm glm4 olmo2 granite seed_oss smollm3 granitemoe granitemoeshared olmoe olmo phimoe gemma3 gemma3_hf5 gpt_oss llama4 llama4_text qwen3_next glm4_moe dots1 llama4_fbgemm ernie4_5 ernie4_5_moe cohere cohere2 qwen3_vl qwen3_vl_moe olmo3 exaone4 mistral3 mistral3_hf5 glm4v glm4v_moe apertus arcee lfm2 granitemoehybrid granitemoehybrid_dense hunyuan_v1_dense hunyuan_v1_moe bamba nemotron minimax jamba gpt_neox phi flex_olmo vaultgemma dbrx stablelm ministral falcon_h1 mpt longcat_flash gpt2 gpt_bigcode llava llava_next mamba falcon_mamba opt gptj bloom persimmon"
for f in $FAMS; do
	"$MK" --family "$f" --out "$T/$f" >/dev/null || fail "wt-mkckpt $f"
done

# exit codes
"$CTL" plan --model-dir "$T/llama" --tp-size 3 --tp-rank 0 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "tp 3 on llama should exit 3"
grep -q "does not divide num_attention_heads 8; use tp_size 1, 2, 4 or 8" "$T/err" ||
	fail "tp 3 message: $(cat "$T/err")"
"$CTL" plan --model-dir "$T/llama" --tp-size 1 --tp-rank 0 --ep-size 2 --ep-rank 0 \
	>/dev/null 2>&1
[ $? -eq 3 ] || fail "ep on a dense model should exit 3"
"$CTL" plan --tp-size 1 --tp-rank 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "missing --model-dir should exit 2"
"$CTL" plan --model-dir "$T/llama" --tp-size 2 --tp-rank 0 --quant fp9 >/dev/null 2>&1
[ $? -eq 2 ] || fail "bad --quant should exit 2"
# flags that parse but make no valid layout are a layout error (3), for the
# offline commands as for fetch/manifest
"$CTL" plan --model-dir "$T/llama" --tp-size 2 --tp-rank 2 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "tp-rank >= tp-size should exit 3"
grep -q "WT_EINVAL" "$T/err" || fail "tp-rank >= tp-size message: $(cat "$T/err")"
"$CTL" shard --model-dir "$T/llama" --tp-size 2 --tp-rank 2 --out "$T/x.st" >/dev/null 2>&1
[ $? -eq 3 ] || fail "shard tp-rank >= tp-size should exit 3"
"$CTL" plan --model-dir "$T/llama" --tp-size 1 --exclude 're:model.(layers' --quant fp8-block \
	>/dev/null 2>&1
[ $? -eq 3 ] || fail "invalid exclude regex should exit 3"
# shard writes one rank: never a guessed rank 0
"$CTL" shard --model-dir "$T/llama" --tp-size 2 --out "$T/x.st" >/dev/null 2>"$T/err"
[ $? -eq 2 ] || fail "shard --tp-size 2 without --tp-rank should exit 2"
grep -q -- "--tp-rank R (0..1) is required" "$T/err" || fail "tp-rank message: $(cat "$T/err")"
"$CTL" shard --model-dir "$T/mixtral" --ep-size 2 --out "$T/x.st" >/dev/null 2>"$T/err"
[ $? -eq 2 ] || fail "shard --ep-size 2 without --ep-rank should exit 2"
grep -q -- "--ep-rank E (0..1) is required" "$T/err" || fail "ep-rank message: $(cat "$T/err")"
for n in 0 17 two -1; do
	"$CTL" shard --model-dir "$T/llama" --threads "$n" --out "$T/x.st" >/dev/null 2>"$T/err"
	[ $? -eq 2 ] || fail "shard --threads $n should exit 2"
	grep -q -- "--threads '$n': use an integer in 1..16" "$T/err" || fail "--threads $n message: $(cat "$T/err")"
done
[ ! -e "$T/x.st" ] || fail "refused shard wrote a file"
"$CTL" shard --model-dir "$T/llama" --tp-size 1 --out "$T/x.st" >/dev/null ||
	fail "tp 1 needs no --tp-rank"
# a partly excluded fused module: both sides named, no tp sizes suggested
"$CTL" plan --model-dir "$T/llama" --tp-size 2 --tp-rank 0 --quant fp8-block \
	--exclude model.layers.0.self_attn.q_proj >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "partial exclusion should exit 3"
grep -q "(excluded: model.layers.0.self_attn.q_proj; not excluded: model.layers.0.self_attn.k_proj, model.layers.0.self_attn.v_proj)" \
	"$T/err" || fail "partial exclusion message: $(cat "$T/err")"
grep -q "use tp_size" "$T/err" && fail "partial exclusion suggests tp sizes: $(cat "$T/err")"
"$CTL" shard --model-dir "$T/llama" --tp-size 2 --tp-rank 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "shard without --out should exit 2"
"$CTL" plan --model-dir "$T/nonexistent" --tp-size 1 --tp-rank 0 >/dev/null 2>&1
[ $? -eq 1 ] || fail "missing model folder should exit 1"
"$CTL" shard --model-dir "$T/deepseek_v3" --tp-size 4 --tp-rank 0 --quant fp8-block \
	--out "$T/x.st" >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "deepseek fp8-block tp 4 should exit 3"
grep -q "requant allow" "$T/err" || fail "alignment message: $(cat "$T/err")"

# plan output: per rank totals, --rank-only
"$CTL" plan --model-dir "$T/llama" --tp-size 4 --tp-rank 1 >"$T/plan" || fail "plan llama"
[ "$(grep -c '^rank ' "$T/plan")" -eq 4 ] || fail "plan should list 4 ranks"
grep -q "model.layers.0.self_attn.qkv_proj.weight *BF16 *\[128, 256\] *65536 weight" "$T/plan" ||
	fail "plan qkv line"
"$CTL" plan --model-dir "$T/llama" --tp-size 4 --tp-rank 1 --rank-only >"$T/plan1" ||
	fail "plan --rank-only"
[ "$(grep -c '^rank ' "$T/plan1")" -eq 1 ] || fail "--rank-only should list 1 rank"
grep -q '^rank 1 (tp_rank=1,ep_rank=0)' "$T/plan1" || fail "--rank-only rank line"

# determinism: every scheme on every family, two runs byte-identical
for f in $(san_fams "$FAMS"); do
	for q in none fp8-tensor fp8-channel fp8-block int8-channel int4-group; do
		# Granite 4.0's, Bamba's and Falcon-H1's one Mamba group: quantized only at TP 1 (vLLM's
		# MambaMixer2)
		tp=2 && { [ "$f" = granitemoehybrid ] || [ "$f" = bamba ] || [ "$f" = falcon_h1 ]; } &&
			[ "$q" != none ] && tp=1
		args=(--model-dir "$T/$f" --tp-size "$tp" --tp-rank $((tp - 1)) --quant "$q" --group-size 32)
		"$CTL" shard "${args[@]}" --out "$T/a.st" 2>"$T/err" || fail "$f $q: $(cat "$T/err")"
		"$CTL" shard "${args[@]}" --out "$T/b.st" 2>"$T/err" || fail "$f $q (2): $(cat "$T/err")"
		cmp -s "$T/a.st" "$T/b.st" || fail "$f $q: two runs differ"
	done
done
"$CTL" shard --model-dir "$T/mixtral" --tp-size 1 --tp-rank 0 --ep-size 4 --ep-rank 3 \
	--out "$T/ep.st" || fail "mixtral ep shard"
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
mkdir -p "$T/hy_moe_bad" && cp "$T/hunyuan_v1_moe/model.safetensors" "$T/hy_moe_bad/" &&
	tr -d '\n ' <"$T/hunyuan_v1_moe/config.json" | sed 's/"moe_intermediate_size":\[128,128\]/"moe_intermediate_size":[128,64]/' >"$T/hy_moe_bad/config.json"
"$CTL" plan --model-dir "$T/hy_moe_bad" --tp-size 2 >/dev/null 2>"$T/err" &&
	fail "hunyuan_v1_moe with per-layer sizes planned"
grep -q "moe_intermediate_size\[1\] is 64" "$T/err" || fail "hunyuan_v1_moe lists: $(cat "$T/err")"
rm -rf "$T/hy_moe_bad"
# Bamba: attn_layer_indices [1] makes layer 1 attention (qkv 4 q heads + kv head of 16),
# layers 0 and 2 Mamba (in_proj [z_r; x_r; B; C; dt_r]); the feed_forward fused into
# gate_up_proj; pre_ff_layernorm and model.final_layernorm whole; untied
"$CTL" plan --model-dir "$T/bamba" --tp-size 2 --tp-rank 1 --rank-only >"$T/plan" ||
	fail "plan bamba"
for l in "model.layers.1.self_attn.qkv_proj.weight *BF16 *\[96, 128\]" \
	"model.layers.0.mamba.in_proj.weight *BF16 *\[292, 128\]" \
	"model.layers.2.mamba.conv1d.weight *BF16 *\[160, 1, 4\]" \
	"model.layers.2.feed_forward.gate_up_proj.weight *BF16 *\[192, 128\]" \
	"model.layers.1.pre_ff_layernorm.weight *BF16 *\[128\]" \
	"model.final_layernorm.weight *BF16 *\[128\]" "lm_head.weight *BF16 *\[512, 128\]"; do
	grep -q "$l" "$T/plan" || fail "bamba line $l: $(cat "$T/plan")"
done
grep -q "1.mamba\|0.self_attn\|2.self_attn" "$T/plan" && fail "bamba layer kinds: $(cat "$T/plan")"
cp -r "$T/bamba" "$T/ba_bad"
sed -i 's/"attn_layer_indices": \[/"attn_layer_indices": [7, /' "$T/ba_bad/config.json"
"$CTL" plan --model-dir "$T/ba_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "ba_bad planned"
grep -q 'attn_layer_indices\[0\] is 7, not a layer of the 3' "$T/err" ||
	fail "bamba attn_layer_indices: $(cat "$T/err")"
rm -rf "$T/ba_bad"
# Nemotron: the LayerNorm1P weights and biases whole and never quantized, q/k/v fused with
# their biases, up_proj by rows under its own name, down_proj by columns; a checkpoint
# without a norm's bias is refused
"$CTL" plan --model-dir "$T/nemotron" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan nemotron"
for l in "1.input_layernorm.weight *BF16 *\[256\]" "1.input_layernorm.bias *BF16 *\[256\]" \
	"1.post_attention_layernorm.bias *BF16 *\[256\]" "1.self_attn.qkv_proj.weight *I8 *\[192, 256\]" \
	"1.self_attn.qkv_proj.bias *BF16 *\[192\]" "1.self_attn.o_proj.bias *BF16 *\[256\]" \
	"1.mlp.up_proj.weight *I8 *\[256, 256\]" "1.mlp.down_proj.weight *I8 *\[256, 256\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "nemotron line $l: $(cat "$T/plan")"
done
grep -q "model.norm.bias *BF16 *\[256\]" "$T/plan" || fail "nemotron model.norm.bias: $(cat "$T/plan")"
grep -q "gate_up_proj\|norm.weight_scale\|bias_scale" "$T/plan" &&
	fail "nemotron: a gate_up_proj or a quantized norm or bias: $(cat "$T/plan")"
mkdir -p "$T/nm_bad"
cp "$T/nemotron/config.json" "$T/nm_bad/"
python3 - "$T/nemotron/model.safetensors" "$T/nm_bad/model.safetensors" <<'PY' || fail "nm_bad"
import json, struct, sys
src = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", src[:8])[0]
hdr = json.loads(src[8:8 + n])
body = src[8 + n:]
drop = "model.layers.1.input_layernorm.bias"
out, parts, off = {}, [], 0
for k, v in sorted(hdr.items(), key=lambda kv: kv[1]["data_offsets"][0] if kv[0] != "__metadata__" else -1):
    if k == "__metadata__":
        out[k] = v
        continue
    if k == drop:
        continue
    a, b = v["data_offsets"]
    parts.append(body[a:b])
    out[k] = dict(v, data_offsets=[off, off + b - a])
    off += b - a
h = json.dumps(out).encode()
h += b" " * (-len(h) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(h)) + h + b"".join(parts))
PY
"$CTL" plan --model-dir "$T/nm_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "nm_bad planned"
grep -q "model.layers.1.input_layernorm.bias': missing from the checkpoint" "$T/err" ||
	fail "nemotron norm bias: $(cat "$T/err")"
rm -rf "$T/nm_bad"
# MiniMax: the lightning attention (qkv_proj / output_gate rows, norm channels, out_proj
# columns) beside a softmax-attention layer, the experts of every layer stacked; the lightning
# norm and the router never quantized; the buffers a transformers save writes are skipped
"$CTL" plan --model-dir "$T/minimax" --tp-size 4 --tp-rank 3 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan minimax"
for l in "0.self_attn.qkv_proj.weight *I8 *\[192, 256\]" "0.self_attn.output_gate.weight *I8 *\[64, 256\]" \
	"0.self_attn.norm.weight *BF16 *\[64\]" "0.self_attn.out_proj.weight *I8 *\[256, 64\]" \
	"2.self_attn.qkv_proj.weight *I8 *\[128, 256\]" "2.self_attn.o_proj.weight *I8 *\[256, 64\]" \
	"3.block_sparse_moe.experts.w13_weight *I8 *\[4, 64, 256\]" "3.block_sparse_moe.gate.weight *BF16 *\[4, 256\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "minimax line $l: $(cat "$T/plan")"
done
grep -q "norm.weight_scale\|moe.gate.weight_scale" "$T/plan" && fail "minimax: a quantized norm or router: $(cat "$T/plan")"
mkdir -p "$T/mm_bad" && cp "$T/minimax/model.safetensors" "$T/mm_bad/" &&
	tr -d '\n ' <"$T/minimax/config.json" | sed 's/"linear_attention","linear_attention","full_attention"/"linear_attention","full_attention","linear_attention"/' >"$T/mm_bad/config.json"
"$CTL" plan --model-dir "$T/mm_bad" --tp-size 2 >/dev/null 2>"$T/err" &&
	fail "minimax with the layer kinds exchanged planned"
grep -q "layer_types" "$T/err" || fail "minimax layer_types: $(cat "$T/err")"
rm -rf "$T/mm_bad"
# Jamba: the Mamba v1 mixer cut as vLLM's MambaMixer loads it and never quantized (in_proj
# [x_r; z_r], x_proj and out_proj by columns, A_log by channels), the attention in layer 2,
# the experts in layers 1 / 3 and the dense MLP in 0 / 2 quantized; the router whole, BF16
"$CTL" plan --model-dir "$T/jamba" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan jamba"
for l in "0.mamba.in_proj.weight *BF16 *\[256, 128\]" "0.mamba.x_proj.weight *BF16 *\[40, 128\]" \
	"0.mamba.out_proj.weight *BF16 *\[128, 128\]" "3.mamba.A_log *BF16 *\[128, 16\]" \
	"3.mamba.dt_layernorm.weight *BF16 *\[8\]" "2.self_attn.qkv_proj.weight *I8 *\[128, 128\]" \
	"1.feed_forward.experts.w13_weight *I8 *\[4, 64, 128\]" "1.feed_forward.router.weight *BF16 *\[4, 128\]" \
	"2.feed_forward.gate_up_proj.weight *I8 *\[64, 128\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "jamba line $l: $(cat "$T/plan")"
done
grep -q "mamba.*_scale\|2.mamba\|3.self_attn\|0.feed_forward.experts" "$T/plan" &&
	fail "jamba: a quantized mixer tensor or a wrong layer kind: $(cat "$T/plan")"
mkdir -p "$T/jb_bad" && cp "$T/jamba/"*.safetensors* "$T/jb_bad/" &&
	tr -d '\n ' <"$T/jamba/config.json" | sed 's/"attn_layer_offset":2/"attn_layer_offset":4/' >"$T/jb_bad/config.json"
"$CTL" plan --model-dir "$T/jb_bad" --tp-size 2 >/dev/null 2>"$T/err" &&
	fail "jamba with attn_layer_offset 4 of period 4 planned"
grep -q "attn_layer_offset 4 must be smaller than attn_layer_period 4" "$T/err" ||
	fail "jamba offset: $(cat "$T/err")"
rm -rf "$T/jb_bad"
# GPT-NeoX: names kept, query_key_value re-cut per head into the rank's [q_r; k_r; v_r]
# (quantized), its bias and the LayerNorm biases BF16, the old masked_bias buffers skipped;
# a num_key_value_heads that differs from the heads refused
"$CTL" plan --model-dir "$T/gpt_neox" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan gpt_neox"
for l in "1.attention.query_key_value.weight *I8 *\[192, 128\]" "1.attention.query_key_value.bias *BF16 *\[192\]" \
	"1.attention.dense.weight *I8 *\[128, 64\]" "1.mlp.dense_h_to_4h.bias *BF16 *\[256\]" \
	"1.mlp.dense_4h_to_h.weight *I8 *\[128, 256\]" "1.input_layernorm.bias *BF16 *\[128\]"; do
	grep -q "gpt_neox.layers.$l" "$T/plan" || fail "gpt_neox line $l: $(cat "$T/plan")"
done
grep -q "^skipped gpt_neox.layers.1.attention.masked_bias" "$T/plan" || fail "gpt_neox: masked_bias not skipped: $(cat "$T/plan")"
mkdir -p "$T/neox_bad" && cp "$T/gpt_neox/model.safetensors" "$T/neox_bad/" &&
	sed 's/"num_attention_heads": 8,/"num_attention_heads": 8, "num_key_value_heads": 2,/' "$T/gpt_neox/config.json" >"$T/neox_bad/config.json"
"$CTL" plan --model-dir "$T/neox_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "gpt_neox with kv heads planned"
grep -q "has no grouped kv heads" "$T/err" || fail "gpt_neox kv heads: $(cat "$T/err")"
rm -rf "$T/neox_bad"
# Phi: q/k/v (and biases) fused into qkv_proj, dense / fc2 by columns, fc1 by rows with its bias,
# lm_head.bias [512] by vocabulary rows; qk_layernorm true refused (vLLM's phi.py has none)
"$CTL" plan --model-dir "$T/phi" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan phi"
for l in "model.layers.1.self_attn.qkv_proj.weight *I8 *\[192, 128\]" "model.layers.1.self_attn.qkv_proj.bias *BF16 *\[192\]" \
	"model.layers.1.self_attn.dense.weight *I8 *\[128, 64\]" "model.layers.1.mlp.fc1.bias *BF16 *\[256\]" \
	"lm_head.bias *BF16 *\[512\]" "model.final_layernorm.bias *BF16 *\[128\]"; do
	grep -q "$l" "$T/plan" || fail "phi line $l: $(cat "$T/plan")"
done
mkdir -p "$T/phi_bad" && cp "$T/phi/model.safetensors" "$T/phi_bad/" &&
	sed 's/"qk_layernorm": false/"qk_layernorm": true/' "$T/phi/config.json" >"$T/phi_bad/config.json"
"$CTL" plan --model-dir "$T/phi_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "phi with qk_layernorm planned"
grep -q "qk_layernorm true" "$T/err" || fail "phi qk_layernorm: $(cat "$T/err")"
rm -rf "$T/phi_bad"
# FlexOlmo: OLMo 2's norms whole on every rank, no input_layernorm, OLMoE's experts split by
# EP; an input_layernorm is refused as an unknown tensor
"$CTL" plan --model-dir "$T/flex_olmo" --tp-size 2 --ep-size 2 --tp-rank 1 --ep-rank 1 \
	--rank-only >"$T/plan" || fail "plan flex_olmo"
for l in "model.layers.1.self_attn.qkv_proj.weight *BF16 *\[192, 256\]" "model.layers.1.self_attn.q_norm.weight *BF16 *\[256\]" \
	"model.layers.1.self_attn.k_norm.weight *BF16 *\[64\]" "model.layers.1.post_feedforward_layernorm.weight *BF16 *\[256\]" \
	"model.layers.1.mlp.experts.w13_weight *BF16 *\[2, 256, 256\]" "model.layers.1.mlp.gate.weight *BF16 *\[4, 256\]"; do
	grep -q "$l" "$T/plan" || fail "flex_olmo line $l: $(cat "$T/plan")"
done
grep -q "input_layernorm" "$T/plan" && fail "flex_olmo plan has an input_layernorm"
# VaultGemma: Gemma 2's table without the post norms, tied (no lm_head)
"$CTL" plan --model-dir "$T/vaultgemma" --tp-size 2 --tp-rank 1 --rank-only >"$T/plan" || fail "plan vaultgemma"
for l in "model.layers.1.self_attn.qkv_proj.weight *BF16 *\[512, 256\]" "model.layers.1.pre_feedforward_layernorm.weight *BF16 *\[256\]" \
	"model.layers.1.input_layernorm.weight *BF16 *\[256\]"; do
	grep -q "$l" "$T/plan" || fail "vaultgemma line $l: $(cat "$T/plan")"
done
grep -q "post_attention_layernorm\|lm_head.weight" "$T/plan" && fail "vaultgemma plan has a post norm or lm_head"
# DBRX: Wqkv by heads (KV 2 whole at TP 2), out_proj by columns, the 2-D stacks w1 / v1 made
# each expert's [gate_r; up_r] rows of w13_weight, w2 transposed into w2_weight [E, hid, Il];
# EP 2 gives whole experts; an ffn_act_fn other than silu refused (vLLM's experts run silu)
"$CTL" plan --model-dir "$T/dbrx" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan dbrx"
for l in "transformer.blocks.1.norm_attn_norm.attn.Wqkv.weight *I8 *\[192, 256\]" \
	"transformer.blocks.1.norm_attn_norm.attn.out_proj.weight *I8 *\[256, 128\]" \
	"transformer.blocks.1.ffn.experts.w13_weight *I8 *\[4, 128, 256\]" \
	"transformer.blocks.1.ffn.experts.w2_weight *I8 *\[4, 256, 64\]" \
	"transformer.blocks.1.ffn.router.layer.weight *BF16 *\[4, 256\]" "lm_head.weight *BF16 *\[512, 256\]"; do
	grep -q "$l" "$T/plan" || fail "dbrx line $l: $(cat "$T/plan")"
done
"$CTL" plan --model-dir "$T/dbrx" --ep-size 2 --ep-rank 1 --rank-only >"$T/plan" || fail "plan dbrx ep"
for l in "transformer.blocks.0.ffn.experts.w13_weight *BF16 *\[2, 256, 256\]" \
	"transformer.blocks.0.ffn.experts.w2_weight *BF16 *\[2, 256, 128\]"; do
	grep -q "$l" "$T/plan" || fail "dbrx ep line $l: $(cat "$T/plan")"
done
mkdir -p "$T/dbrx_bad" && cp "$T/dbrx/model.safetensors" "$T/dbrx_bad/" &&
	sed 's/"name": "silu"/"name": "gelu"/' "$T/dbrx/config.json" >"$T/dbrx_bad/config.json"
"$CTL" plan --model-dir "$T/dbrx_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "dbrx with gelu experts planned"
grep -q "ffn_config.ffn_act_fn" "$T/err" || fail "dbrx ffn_act_fn: $(cat "$T/err")"
rm -rf "$T/dbrx_bad"
# StableLM: q/k/v biases (use_qkv_bias) fused into qkv_proj, gate/up merged, the LayerNorm biases
# replicated; qk_layernorm true refused (vLLM's stablelm.py has no per-head q/k layernorms)
"$CTL" plan --model-dir "$T/stablelm" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan stablelm"
for l in "model.layers.1.self_attn.qkv_proj.weight *I8 *\[192, 256\]" "model.layers.1.self_attn.qkv_proj.bias *BF16 *\[192\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[512, 256\]" "model.layers.1.post_attention_layernorm.bias *BF16 *\[256\]" \
	"model.norm.bias *BF16 *\[256\]"; do
	grep -q "$l" "$T/plan" || fail "stablelm line $l: $(cat "$T/plan")"
done
mkdir -p "$T/stablelm_bad" && cp "$T/stablelm/model.safetensors" "$T/stablelm_bad/" &&
	sed 's/"qk_layernorm": false/"qk_layernorm": true/' "$T/stablelm/config.json" >"$T/stablelm_bad/config.json"
"$CTL" plan --model-dir "$T/stablelm_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "stablelm with qk_layernorm planned"
grep -q "qk_layernorm true" "$T/err" || fail "stablelm qk_layernorm: $(cat "$T/err")"
rm -rf "$T/stablelm_bad"
# Ministral: Mistral's tensors; a layer_types entry of neither hybrid kind refused
mkdir -p "$T/ministral_bad" && cp "$T/ministral/model.safetensors" "$T/ministral_bad/" &&
	sed 's/"full_attention"/"chunked_attention"/' "$T/ministral/config.json" >"$T/ministral_bad/config.json"
"$CTL" plan --model-dir "$T/ministral_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "ministral with chunked_attention planned"
grep -q "two Ministral layer types" "$T/err" || fail "ministral layer_types: $(cat "$T/err")"
rm -rf "$T/ministral_bad"
# MPT: Wqkv by heads (12 kv heads: no kv_n_heads), out_proj / down_proj by columns, up_proj by
# rows, the bias-free LayerNorms replicated, wte tied (no lm_head); attn_config.alibi false
# refused (vLLM's mpt.py asserts ALiBi)
"$CTL" plan --model-dir "$T/mpt" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan mpt"
for l in "transformer.blocks.1.attn.Wqkv.weight *I8 *\[288, 192\]" \
	"transformer.blocks.1.attn.out_proj.weight *I8 *\[192, 96\]" \
	"transformer.blocks.1.ffn.up_proj.weight *I8 *\[384, 192\]" \
	"transformer.blocks.1.ffn.down_proj.weight *I8 *\[192, 384\]" \
	"transformer.blocks.1.norm_2.weight *BF16 *\[192\]" "transformer.wte.weight *BF16 *\[512, 192\]"; do
	grep -q "$l" "$T/plan" || fail "mpt line $l: $(cat "$T/plan")"
done
grep -q "lm_head.weight" "$T/plan" && fail "mpt plan has an lm_head (tied)"
mkdir -p "$T/mpt_bad" && cp "$T/mpt/model.safetensors" "$T/mpt_bad/" &&
	sed 's/"alibi": true/"alibi": false/' "$T/mpt/config.json" >"$T/mpt_bad/config.json"
"$CTL" plan --model-dir "$T/mpt_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "mpt without ALiBi planned"
grep -q "attn_config.alibi is false" "$T/err" || fail "mpt alibi: $(cat "$T/err")"
rm -rf "$T/mpt_bad"
# LongCat-Flash: two MLA sublayers (q_b / kv_b by heads, o_proj by columns, q_a / kv_a whole),
# two dense MLPs, the router over 4 routed + 2 zero experts and its F32 correction bias whole
# and unquantized, the 4 routed experts stacked; model.mtp.* skipped; EP 2 whole experts;
# mla_scale_q_lora false refused (transformers always scales the latents)
"$CTL" plan --model-dir "$T/longcat_flash" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan longcat_flash"
for l in "1.self_attn.1.q_b_proj.weight *I8 *\[96, 64\]" "1.self_attn.1.kv_b_proj.weight *I8 *\[128, 32\]" \
	"1.self_attn.0.o_proj.weight *I8 *\[128, 64\]" "1.self_attn.0.q_a_proj.weight *I8 *\[64, 128\]" \
	"1.self_attn.0.kv_a_layernorm.weight *BF16 *\[32\]" "1.mlps.1.gate_up_proj.weight *I8 *\[192, 128\]" \
	"1.mlp.router.classifier.weight *BF16 *\[6, 128\]" "1.mlp.router.e_score_correction_bias *F32 *\[6\]" \
	"1.mlp.experts.w13_weight *I8 *\[4, 64, 128\]" "1.mlp.experts.w2_weight *I8 *\[4, 128, 32\]"; do
	grep -q "model.layers.$l" "$T/plan" || fail "longcat_flash line $l: $(cat "$T/plan")"
done
grep -q "^skipped model.mtp.norm.weight" "$T/plan" || fail "longcat_flash mtp: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/longcat_flash" --ep-size 2 --ep-rank 1 --rank-only >"$T/plan" ||
	fail "plan longcat_flash ep"
grep -q "model.layers.0.mlp.experts.w13_weight *BF16 *\[2, 128, 128\]" "$T/plan" ||
	fail "longcat_flash ep: $(cat "$T/plan")"
mkdir -p "$T/longcat_bad" && cp "$T/longcat_flash/model.safetensors" "$T/longcat_bad/" &&
	sed 's/"mla_scale_q_lora": true/"mla_scale_q_lora": false/' "$T/longcat_flash/config.json" >"$T/longcat_bad/config.json"
"$CTL" plan --model-dir "$T/longcat_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "longcat_flash unscaled planned"
grep -q "mla_scale_q_lora is false" "$T/err" || fail "longcat_flash mla_scale_q_lora: $(cat "$T/err")"
rm -rf "$T/longcat_bad"
# GPT-2: the Conv1D weights ([in, out]) transposed to [out, in], c_attn cut into the rank's
# [q_r; k_r; v_r] (quantized), c_fc by rows, the c_proj's by columns, wpe and the biases BF16,
# the old attn.masked_bias buffers skipped; scale_attn_weights false refused
"$CTL" plan --model-dir "$T/gpt2" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan gpt2"
for l in "1.attn.c_attn.weight *I8 *\[192, 128\]" "1.attn.c_attn.bias *BF16 *\[192\]" \
	"1.attn.c_proj.weight *I8 *\[128, 64\]" "1.mlp.c_fc.weight *I8 *\[256, 128\]" \
	"1.mlp.c_proj.weight *I8 *\[128, 256\]" "1.ln_1.bias *BF16 *\[128\]"; do
	grep -q "transformer.h.$l" "$T/plan" || fail "gpt2 line $l: $(cat "$T/plan")"
done
grep -q "transformer.wpe.weight *BF16 *\[64, 128\]" "$T/plan" || fail "gpt2 wpe: $(cat "$T/plan")"
grep -q "^skipped transformer.h.1.attn.masked_bias" "$T/plan" || fail "gpt2: masked_bias not skipped: $(cat "$T/plan")"
mkdir -p "$T/gpt2_bad" && cp "$T/gpt2/model.safetensors" "$T/gpt2_bad/" &&
	sed 's/"scale_attn_weights": true/"scale_attn_weights": false/' "$T/gpt2/config.json" >"$T/gpt2_bad/config.json"
"$CTL" plan --model-dir "$T/gpt2_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "gpt2 without scale_attn_weights planned"
grep -q "scale_attn_weights false" "$T/err" || fail "gpt2 scale_attn_weights: $(cat "$T/err")"
rm -rf "$T/gpt2_bad"
# GPTBigCode: Linear weights kept, c_attn to the rank's q heads and the one kv head; multi_query
# false refused (transformers reads that c_attn per head, vLLM as [q; k; v])
"$CTL" plan --model-dir "$T/gpt_bigcode" --tp-size 4 --tp-rank 3 --rank-only >"$T/plan" ||
	fail "plan gpt_bigcode"
for l in "1.attn.c_attn.weight *BF16 *\[64, 128\]" "1.attn.c_attn.bias *BF16 *\[64\]" \
	"1.mlp.c_fc.weight *BF16 *\[96, 128\]" "1.mlp.c_proj.weight *BF16 *\[128, 96\]"; do
	grep -q "transformer.h.$l" "$T/plan" || fail "gpt_bigcode line $l: $(cat "$T/plan")"
done
mkdir -p "$T/bc_bad" && cp "$T/gpt_bigcode/model.safetensors" "$T/bc_bad/" &&
	sed 's/"multi_query": true/"multi_query": false/' "$T/gpt_bigcode/config.json" >"$T/bc_bad/config.json"
"$CTL" plan --model-dir "$T/bc_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "gpt_bigcode multi_query false planned"
grep -q "multi_query false" "$T/err" || fail "gpt_bigcode multi_query: $(cat "$T/err")"
rm -rf "$T/bc_bad"
# LLaVA: served under the released names; the CLIP tower's q/k/v (with biases) fused, fc1 by
# rows, out_proj / fc2 by columns, the embeddings whole; the projector's linear_1 by rows (its
# bias too), linear_2 by columns (its bias whole); block 1 (past vision_feature_layer -2) and
# post_layernorm skipped, as vLLM's llava.py builds neither
"$CTL" plan --model-dir "$T/llava" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan llava"
for l in "encoder.layers.0.self_attn.qkv_proj.weight *I8 *\[96, 64\]" \
	"encoder.layers.0.self_attn.qkv_proj.bias *BF16 *\[96\]" \
	"encoder.layers.0.self_attn.out_proj.weight *I8 *\[64, 32\]" \
	"encoder.layers.0.mlp.fc1.weight *I8 *\[64, 64\]" \
	"embeddings.position_embedding.weight *BF16 *\[5, 64\]" \
	"embeddings.class_embedding *BF16 *\[64\]"; do
	grep -q "vision_tower.vision_model.$l" "$T/plan" || fail "llava line $l: $(cat "$T/plan")"
done
for l in "multi_modal_projector.linear_1.weight *I8 *\[64, 64\]" \
	"multi_modal_projector.linear_1.bias *BF16 *\[64\]" \
	"multi_modal_projector.linear_2.weight *I8 *\[128, 64\]" \
	"multi_modal_projector.linear_2.bias *BF16 *\[128\]" \
	"skipped vision_tower.vision_model.post_layernorm.weight" \
	"skipped vision_tower.vision_model.encoder.layers.1.mlp.fc2.weight" \
	"language_model.lm_head.weight"; do
	grep -q "$l" "$T/plan" || fail "llava line $l: $(cat "$T/plan")"
done
grep -q "^ .*encoder.layers.1\.\|^ .*post_layernorm" "$T/plan" &&
	fail "llava: a block vLLM does not build emitted: $(cat "$T/plan")"
# LLaVA-NeXT (>= 4.52 layout): llava's runtime names, model.image_newline served whole as
# image_newline, never quantized
"$CTL" plan --model-dir "$T/llava_next" --tp-size 4 --tp-rank 3 --quant fp8-channel \
	--rank-only >"$T/plan" || fail "plan llava_next"
for l in "^ *image_newline *BF16 *\[128\]" "multi_modal_projector.linear_1.weight *F8_E4M3 *\[32, 64\]" \
	"vision_tower.vision_model.encoder.layers.0.self_attn.qkv_proj.weight *F8_E4M3 *\[48, 64\]" \
	"skipped model.vision_tower.vision_model.post_layernorm.weight" "language_model.lm_head.weight"; do
	grep -q "$l" "$T/plan" || fail "llava_next line $l: $(cat "$T/plan")"
done
grep -q "^ *model\.\|image_newline_scale" "$T/plan" && fail "llava_next: a >= 4.52 name or a quantized image_newline: $(cat "$T/plan")"
# Mamba: backbone.* names; Jamba's v1 mixer cut, none of it quantized under int8-channel
# (vLLM's MambaMixer takes no quant_config), the embeddings vocab-parallel, lm_head tied; a
# tp_size that does not divide intermediate_size refused naming it
"$CTL" plan --model-dir "$T/mamba" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan mamba"
for l in "layers.0.mixer.in_proj.weight *BF16 *\[256, 128\]" "layers.1.mixer.x_proj.weight *BF16 *\[40, 128\]" \
	"layers.1.mixer.A_log *BF16 *\[128, 16\]" "embeddings.weight *BF16 *\[512, 128\]" "norm_f.weight *BF16 *\[128\]"; do
	grep -q "backbone.$l" "$T/plan" || fail "mamba line $l: $(cat "$T/plan")"
done
grep -q "_scale\|lm_head.weight" "$T/plan" && fail "mamba: a quantized tensor or an untied lm_head: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/mamba" --tp-size 3 >/dev/null 2>"$T/err" && fail "mamba at tp 3 planned"
grep -q "does not divide intermediate_size 256" "$T/err" || fail "mamba tp 3: $(cat "$T/err")"
# OPT: q/k/v (and biases) fused into qkv_proj, out_proj / fc2 by columns, fc1 by rows with its
# bias, embed_tokens [V, word_embed_proj_dim] by vocabulary rows, embed_positions and project_in
# / project_out replicated (the projections quantized), tied; model.decoder.final_layer_norm
# with do_layer_norm_before false refused
"$CTL" plan --model-dir "$T/opt" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan opt"
for l in "model.decoder.layers.1.self_attn.qkv_proj.weight *I8 *\[192, 128\]" \
	"model.decoder.layers.1.self_attn.qkv_proj.bias *BF16 *\[192\]" \
	"model.decoder.layers.1.self_attn.out_proj.weight *I8 *\[128, 64\]" \
	"model.decoder.layers.1.fc1.bias *BF16 *\[128\]" "model.decoder.project_in.weight *I8 *\[128, 64\]" \
	"model.decoder.embed_positions.weight *BF16 *\[66, 128\]" \
	"model.decoder.embed_tokens.weight *BF16 *\[512, 64\]"; do
	grep -q "$l" "$T/plan" || fail "opt line $l: $(cat "$T/plan")"
done
grep -q "^ *lm_head" "$T/plan" && fail "opt: an lm_head while tied: $(cat "$T/plan")"
mkdir -p "$T/opt_bad" && cp "$T/opt/model.safetensors" "$T/opt_bad/" &&
	sed 's/"do_layer_norm_before": true/"do_layer_norm_before": false/' "$T/opt/config.json" >"$T/opt_bad/config.json"
"$CTL" plan --model-dir "$T/opt_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "opt post-norm with a final LayerNorm planned"
grep -q "do_layer_norm_before is false" "$T/err" || fail "opt do_layer_norm_before: $(cat "$T/err")"
rm -rf "$T/opt_bad"
# GPT-J: q/k/v (no biases) fused into qkv_proj, out_proj / fc_out by columns, fc_in by rows with
# its bias, lm_head.bias [512] by vocabulary rows, the attn.masked_bias buffers skipped;
# tie_word_embeddings true refused (vLLM's gpt_j.py asserts an untied lm_head)
"$CTL" plan --model-dir "$T/gptj" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan gptj"
for l in "transformer.h.1.attn.qkv_proj.weight *I8 *\[192, 128\]" \
	"transformer.h.1.attn.out_proj.weight *I8 *\[128, 64\]" "transformer.h.1.mlp.fc_in.bias *BF16 *\[128\]" \
	"lm_head.bias *BF16 *\[512\]" "transformer.ln_f.bias *BF16 *\[128\]"; do
	grep -q "$l" "$T/plan" || fail "gptj line $l: $(cat "$T/plan")"
done
grep -q "qkv_proj.bias\|^ *transformer.h.1.attn.masked_bias" "$T/plan" && fail "gptj: a q/k/v bias or a buffer: $(cat "$T/plan")"
mkdir -p "$T/gptj_bad" && cp "$T/gptj/model.safetensors" "$T/gptj_bad/" &&
	sed 's/"tie_word_embeddings": false/"tie_word_embeddings": true/' "$T/gptj/config.json" >"$T/gptj_bad/config.json"
"$CTL" plan --model-dir "$T/gptj_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "gptj tied planned"
grep -q "asserts an untied lm_head" "$T/err" || fail "gptj tie: $(cat "$T/err")"
rm -rf "$T/gptj_bad"
# BLOOM: vLLM's transformer.* names, query_key_value re-cut per head into the rank's
# [q_r; k_r; v_r] (quantized), its bias and the embedding's LayerNorm BF16, the MLP 4 * hid
# wide; tie_word_embeddings false refused (vLLM's bloom.py never loads lm_head.weight)
"$CTL" plan --model-dir "$T/bloom" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan bloom"
for l in "h.1.self_attention.query_key_value.weight *I8 *\[192, 128\]" \
	"h.1.self_attention.query_key_value.bias *BF16 *\[192\]" "h.1.self_attention.dense.weight *I8 *\[128, 64\]" \
	"h.1.mlp.dense_h_to_4h.bias *BF16 *\[256\]" "h.1.mlp.dense_4h_to_h.weight *I8 *\[128, 256\]" \
	"word_embeddings_layernorm.bias *BF16 *\[128\]" "word_embeddings.weight *BF16 *\[512, 128\]"; do
	grep -q "transformer.$l" "$T/plan" || fail "bloom line $l: $(cat "$T/plan")"
done
mkdir -p "$T/bloom_bad" && cp "$T/bloom/model.safetensors" "$T/bloom_bad/" &&
	sed 's/"tie_word_embeddings": true/"tie_word_embeddings": false/' "$T/bloom/config.json" >"$T/bloom_bad/config.json"
"$CTL" plan --model-dir "$T/bloom_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "bloom untied planned"
grep -q "skips lm_head.weight" "$T/err" || fail "bloom untied: $(cat "$T/err")"
rm -rf "$T/bloom_bad"
# Persimmon: query_key_value [H, 3, d] re-cut by heads, dense / dense_4h_to_h by columns,
# dense_h_to_4h by rows, q_layernorm / k_layernorm [16] replicated; qk_layernorm false
# leaves the norms unknown
"$CTL" plan --model-dir "$T/persimmon" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan persimmon"
for l in "model.layers.1.self_attn.query_key_value.weight *I8 *\[192, 128\]" \
	"model.layers.1.self_attn.query_key_value.bias *BF16 *\[192\]" \
	"model.layers.1.self_attn.dense.weight *I8 *\[128, 64\]" \
	"model.layers.1.self_attn.q_layernorm.bias *BF16 *\[16\]" \
	"model.layers.1.mlp.dense_h_to_4h.weight *I8 *\[256, 128\]" \
	"model.layers.1.mlp.dense_4h_to_h.weight *I8 *\[128, 256\]" "lm_head.weight *BF16 *\[512, 128\]"; do
	grep -q "$l" "$T/plan" || fail "persimmon line $l: $(cat "$T/plan")"
done
mkdir -p "$T/persimmon_bad" && cp "$T/persimmon/model.safetensors" "$T/persimmon_bad/" &&
	sed 's/"qk_layernorm": true/"qk_layernorm": false/' "$T/persimmon/config.json" >"$T/persimmon_bad/config.json"
"$CTL" plan --model-dir "$T/persimmon_bad" --tp-size 2 >/dev/null 2>"$T/err" && fail "persimmon without qk_layernorm planned"
grep -q "qk_layernorm is false" "$T/err" || fail "persimmon qk_layernorm: $(cat "$T/err")"
rm -rf "$T/persimmon_bad"
# Maverick's FP8 release (quant_method fbgemm_fp8): fp8-channel keeps the codes, one F32
# scale per emitted row; modules_to_not_convert stay BF16; an FP8 tensor in a kept
# module is refused naming the entry
"$CTL" plan --model-dir "$T/llama4_fbgemm" --tp-size 2 --tp-rank 1 --ep-size 2 --ep-rank 1 \
	--quant fp8-channel --rank-only >"$T/plan" || fail "plan llama4_fbgemm"
for l in "1.feed_forward.experts.w13_weight *F8_E4M3 *\[2, 128, 256\]" \
	"1.feed_forward.experts.w13_weight_scale *F32 *\[2, 128, 1\]" \
	"1.feed_forward.experts.w2_weight_scale *F32 *\[2, 256, 1\]" \
	"0.feed_forward.down_proj.weight_scale *F32 *\[256, 1\]" \
	"1.self_attn.qkv_proj.weight *BF16 *\[192, 256\]"; do
	grep -q "language_model.model.layers.$l" "$T/plan" || fail "llama4_fbgemm line $l: $(cat "$T/plan")"
done
cp -r "$T/llama4_fbgemm" "$T/l4keep"
sed -i 's/"router",/"router", "experts",/' "$T/l4keep/config.json"
"$CTL" plan --model-dir "$T/l4keep" --tp-size 1 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "an FP8 stack in a kept module should exit 3"
grep -q "modules_to_not_convert entry 'experts'" "$T/err" || fail "fbgemm_fp8 keep: $(cat "$T/err")"

# metadata
"$CTL" shard --model-dir "$T/qwen2" --tp-size 2 --tp-rank 1 --quant fp8-block \
	--out "$T/m.st" || fail "qwen2 shard"
hdr=$(head -c 4096 "$T/m.st" | tr -d '\0')
for k in '"weightd.format":"1"' '"weightd.model":"qwen2"' '"weightd.rank":"tp_rank=1,ep_rank=0"' \
	'"weightd.layout":"tp=2,ep=1,quant=fp8-block' '"weightd.revision":"'; do
	case "$hdr" in *"$k"*) ;; *) fail "metadata lacks $k" ;; esac
done
# --name sets weightd.model (default: the folder's basename); bytes otherwise equal
"$CTL" shard --model-dir "$T/qwen2" --tp-size 2 --tp-rank 1 --quant fp8-block --name Qwen/Qwen2-0.5B \
	--out "$T/n.st" >/dev/null 2>&1
[ $? -eq 2 ] || fail "--name with '/' should exit 2"
"$CTL" shard --model-dir "$T/qwen2" --tp-size 2 --tp-rank 1 --quant fp8-block --name qwen2-small \
	--out "$T/n.st" || fail "shard --name"
hdr=$(head -c 4096 "$T/n.st" | tr -d '\0')
case "$hdr" in *'"weightd.model":"qwen2-small"'*) ;; *) fail "--name not in metadata" ;; esac
"$CTL" shard --model-dir "$T/qwen2" --tp-size 2 --tp-rank 1 --quant fp8-block --name qwen2 \
	--out "$T/n2.st" || fail "shard --name qwen2"
cmp -s "$T/n2.st" "$T/m.st" || fail "--name equal to the basename should change no byte"
"$CTL" plan --model-dir "$T/qwen2" --tp-size 1 --name=qwen2-small | grep -q "^model qwen2-small " ||
	fail "plan --name"

# BERT with the I64 embeddings.position_ids buffer: dropped and listed as skipped,
# the shards hold the same tensors as without it
"$MK" --family bert --position-ids --out "$T/bert_pos" >/dev/null || fail "wt-mkckpt bert --position-ids"
"$CTL" plan --model-dir "$T/bert_pos" --tp-size 2 >"$T/plan" || fail "plan bert_pos"
grep -qx "skipped embeddings.position_ids" "$T/plan" || fail "position_ids not listed as skipped"
for r in 0 1; do
	"$CTL" shard --model-dir "$T/bert_pos" --tp-size 2 --tp-rank $r --quant int8-channel \
		--name bert --out "$T/bp.st" || fail "shard bert_pos"
	"$CTL" shard --model-dir "$T/bert" --tp-size 2 --tp-rank $r --quant int8-channel \
		--out "$T/b0.st" || fail "shard bert"
	# identical but for the revision digest (64 hex digits) in the metadata
	cmp -s <(sed 's/"weightd.revision":"[0-9a-f]*"//' "$T/bp.st") \
		<(sed 's/"weightd.revision":"[0-9a-f]*"//' "$T/b0.st") ||
		fail "bert rank $r: position_ids changed the shard"
done
echo "shard_cli.sh: ok"
