# shard_cli_families2.bash — sourced by shard_cli.sh (run-tests.sh runs only *.sh): each
# family's own plan / shard checks, Bamba to Persimmon, on the fixtures shard_cli.sh generated
# into $T, with its fail, $CTL and $T.
# shellcheck shell=bash disable=SC2154
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
refused_edit minimax 's/"linear_attention","linear_attention","full_attention"/"linear_attention","full_attention","linear_attention"/' "layer_types" flat
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
refused_edit jamba 's/"attn_layer_offset":2/"attn_layer_offset":4/' \
	"attn_layer_offset 4 must be smaller than attn_layer_period 4" flat
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
refused_edit gpt_neox 's/"num_attention_heads": 8,/"num_attention_heads": 8, "num_key_value_heads": 2,/' "has no grouped kv heads"
# Phi: q/k/v (and biases) fused into qkv_proj, dense / fc2 by columns, fc1 by rows with its bias,
# lm_head.bias [512] by vocabulary rows; qk_layernorm true refused (vLLM's phi.py has none)
"$CTL" plan --model-dir "$T/phi" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan phi"
for l in "model.layers.1.self_attn.qkv_proj.weight *I8 *\[192, 128\]" "model.layers.1.self_attn.qkv_proj.bias *BF16 *\[192\]" \
	"model.layers.1.self_attn.dense.weight *I8 *\[128, 64\]" "model.layers.1.mlp.fc1.bias *BF16 *\[256\]" \
	"lm_head.bias *BF16 *\[512\]" "model.final_layernorm.bias *BF16 *\[128\]"; do
	grep -q "$l" "$T/plan" || fail "phi line $l: $(cat "$T/plan")"
done
refused_edit phi 's/"qk_layernorm": false/"qk_layernorm": true/' "qk_layernorm true"
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
refused_edit dbrx 's/"name": "silu"/"name": "gelu"/' "ffn_config.ffn_act_fn"
# StableLM: q/k/v biases (use_qkv_bias) fused into qkv_proj, gate/up merged, the LayerNorm biases
# replicated; qk_layernorm true refused (vLLM's stablelm.py has no per-head q/k layernorms)
"$CTL" plan --model-dir "$T/stablelm" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan stablelm"
for l in "model.layers.1.self_attn.qkv_proj.weight *I8 *\[192, 256\]" "model.layers.1.self_attn.qkv_proj.bias *BF16 *\[192\]" \
	"model.layers.1.mlp.gate_up_proj.weight *I8 *\[512, 256\]" "model.layers.1.post_attention_layernorm.bias *BF16 *\[256\]" \
	"model.norm.bias *BF16 *\[256\]"; do
	grep -q "$l" "$T/plan" || fail "stablelm line $l: $(cat "$T/plan")"
done
refused_edit stablelm 's/"qk_layernorm": false/"qk_layernorm": true/' "qk_layernorm true"
# Ministral: Mistral's tensors; a layer_types entry of neither hybrid kind refused
refused_edit ministral 's/"full_attention"/"chunked_attention"/' "two Ministral layer types"
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
refused_edit mpt 's/"alibi": true/"alibi": false/' "attn_config.alibi is false"
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
refused_edit longcat_flash 's/"mla_scale_q_lora": true/"mla_scale_q_lora": false/' "mla_scale_q_lora is false"
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
refused_edit gpt2 's/"scale_attn_weights": true/"scale_attn_weights": false/' "scale_attn_weights false"
# GPTBigCode: Linear weights kept, c_attn to the rank's q heads and the one kv head; multi_query
# false refused (transformers reads that c_attn per head, vLLM as [q; k; v])
"$CTL" plan --model-dir "$T/gpt_bigcode" --tp-size 4 --tp-rank 3 --rank-only >"$T/plan" ||
	fail "plan gpt_bigcode"
for l in "1.attn.c_attn.weight *BF16 *\[64, 128\]" "1.attn.c_attn.bias *BF16 *\[64\]" \
	"1.mlp.c_fc.weight *BF16 *\[96, 128\]" "1.mlp.c_proj.weight *BF16 *\[128, 96\]"; do
	grep -q "transformer.h.$l" "$T/plan" || fail "gpt_bigcode line $l: $(cat "$T/plan")"
done
refused_edit gpt_bigcode 's/"multi_query": true/"multi_query": false/' "multi_query false"
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
refused_edit opt 's/"do_layer_norm_before": true/"do_layer_norm_before": false/' "do_layer_norm_before is false"
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
refused_edit gptj 's/"tie_word_embeddings": false/"tie_word_embeddings": true/' "asserts an untied lm_head"
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
refused_edit bloom 's/"tie_word_embeddings": true/"tie_word_embeddings": false/' "skips lm_head.weight"
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
refused_edit persimmon 's/"qk_layernorm": true/"qk_layernorm": false/' "qk_layernorm is false"
# Falcon (new_decoder_architecture): query_key_value [KV, H/KV + 2, d] re-cut into the rank's
# 2 q heads and its kv group's k / v (KV 2 < TP 4: replicated), dense / dense_4h_to_h by
# columns, dense_h_to_4h by rows, ln_attn / ln_mlp whole; parallel_attn false refused
"$CTL" plan --model-dir "$T/falcon" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan falcon"
for l in "h.1.self_attention.query_key_value.weight *I8 *\[64, 128\]" \
	"h.1.self_attention.dense.weight *I8 *\[128, 32\]" "h.1.mlp.dense_h_to_4h.weight *I8 *\[128, 128\]" \
	"h.1.mlp.dense_4h_to_h.weight *I8 *\[128, 128\]" "h.1.ln_attn.bias *BF16 *\[128\]" \
	"h.1.ln_mlp.weight *BF16 *\[128\]" "word_embeddings.weight *BF16 *\[256, 128\]"; do
	grep -q "transformer.$l" "$T/plan" || fail "falcon line $l: $(cat "$T/plan")"
done
refused_edit falcon 's/"parallel_attn": true/"parallel_attn": false/' "new_decoder_architecture true with parallel_attn false"
# Mamba2: backbone.* names; Granite 4.0's Mamba2 mixer under mixer., one of the two groups a
# rank at TP 2 (in_proj 128 + 128 + 16 + 16 + 4 rows), in_proj / out_proj quantized under
# int8-channel, lm_head untied; TP 4 refused naming the groups
"$CTL" plan --model-dir "$T/mamba2" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan mamba2"
for l in "layers.0.mixer.in_proj.weight *I8 *\[292, 128\]" "layers.1.mixer.out_proj.weight_scale *F32" \
	"layers.1.mixer.conv1d.weight *BF16 *\[160, 1, 4\]" "layers.0.mixer.dt_bias *BF16 *\[4\]" \
	"layers.0.mixer.norm.weight *BF16 *\[128\]" "embeddings.weight *BF16 *\[512, 128\]"; do
	grep -q "backbone.$l" "$T/plan" || fail "mamba2 line $l: $(cat "$T/plan")"
done
grep -q "^ *lm_head.weight *BF16 *\[512, 128\]" "$T/plan" || fail "mamba2: no untied lm_head: $(cat "$T/plan")"
"$CTL" plan --model-dir "$T/mamba2" --tp-size 4 >/dev/null 2>"$T/err" && fail "mamba2 at tp 4 planned"
grep -q "tp_size 4 does not divide mamba_n_groups 2" "$T/err" || fail "mamba2 tp 4: $(cat "$T/err")"
# Idefics3: Llama's LM under model.text_model., lm_head untied at the top; the SigLIP-style
# tower's q/k/v fused by heads (rank 1 of 2: 2 heads of 16 each), fc1 by rows with its bias,
# the patch Conv2d with its bias and post_layernorm whole; the connector's proj whole on
# every rank (vLLM's ReplicatedLinear) and quantized
"$CTL" plan --model-dir "$T/idefics3" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan idefics3"
plan_has idefics3 "model.vision_model.encoder.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 64\]" \
	"model.vision_model.encoder.layers.1.mlp.fc1.bias *BF16 *\[64\]" \
	"model.vision_model.embeddings.patch_embedding.weight *BF16 *\[64, 3, 8, 8\]" \
	"model.vision_model.embeddings.patch_embedding.bias *BF16 *\[64\]" \
	"model.vision_model.post_layernorm.bias *BF16 *\[64\]" \
	"model.connector.modality_projection.proj.weight *I8 *\[128, 256\]" \
	"model.text_model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]" \
	"lm_head.weight *BF16 *\[512, 128\]"
# SmolVLM: Idefics3's runtime names; tied by text_config (no lm_head line, the plan says so)
# while the top level says false; the one kv head on every rank at TP 4
"$CTL" plan --model-dir "$T/smolvlm" --tp-size 4 --tp-rank 3 >"$T/plan" || fail "plan smolvlm"
grep -q "lm_head tied" "$T/plan" || fail "smolvlm: not tied: $(cat "$T/plan")"
grep -q "^ *lm_head.weight" "$T/plan" && fail "smolvlm: lm_head served: $(cat "$T/plan")"
plan_has smolvlm "model.text_model.layers.0.self_attn.qkv_proj.weight *BF16 *\[96, 128\]" \
	"model.connector.modality_projection.proj.weight *BF16 *\[128, 256\]" \
	"model.vision_model.encoder.layers.0.self_attn.qkv_proj.weight *BF16 *\[48, 64\]"
# PaliGemma (transformers 4.57's layout): runtime names are the released ones (language_model.,
# vision_tower., multi_modal_projector.); a Gemma 2 LM tied by text_config's default (no
# lm_head line), its MLP norms whole; the SigLIP tower's q/k/v fused by heads (rank 1 of 2),
# fc1 by rows; the projector's linear whole and never quantized (vLLM's plain nn.Linear)
"$CTL" plan --model-dir "$T/paligemma" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan paligemma"
grep -q "lm_head tied" "$T/plan" || fail "paligemma: not tied: $(cat "$T/plan")"
grep -q "lm_head.weight" "$T/plan" && fail "paligemma: lm_head served: $(cat "$T/plan")"
plan_has paligemma "vision_tower.vision_model.encoder.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 64\]" \
	"vision_tower.vision_model.encoder.layers.1.mlp.fc1.weight *I8 *\[64, 64\]" \
	"multi_modal_projector.linear.weight *BF16 *\[128, 64\]" \
	"multi_modal_projector.linear.bias *BF16 *\[128\]" \
	"language_model.model.layers.1.pre_feedforward_layernorm.weight *BF16 *\[128\]" \
	"language_model.model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]"
# Aya Vision: a Cohere 2 LM tied by text_config's default (no lm_head line); the SigLIP tower
# cut as Gemma 3's with post_layernorm (vision_feature_layer -1 builds every block); the
# projector's layernorm, linear_1 and linear_2 whole and never quantized
"$CTL" plan --model-dir "$T/aya_vision" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan aya_vision"
grep -q "lm_head tied" "$T/plan" || fail "aya_vision: not tied: $(cat "$T/plan")"
plan_has aya_vision "vision_tower.vision_model.encoder.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 64\]" \
	"vision_tower.vision_model.post_layernorm.weight *BF16 *\[64\]" \
	"multi_modal_projector.layernorm.weight *BF16 *\[256\]" \
	"multi_modal_projector.linear_1.weight *BF16 *\[256, 256\]" \
	"multi_modal_projector.linear_2.weight *BF16 *\[128, 128\]" \
	"language_model.model.layers.3.self_attn.qkv_proj.weight *I8 *\[128, 128\]"
# LLaVA-OneVision: a Qwen2 LM tied by text_config (no lm_head line though the top level says
# false); the SigLIP tower cut as Gemma 3's without post_layernorm (require_post_norm=False);
# the projector's linear_1 / linear_2 and image_newline whole and never quantized
"$CTL" plan --model-dir "$T/llava_onevision" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan llava_onevision"
grep -q "lm_head tied" "$T/plan" || fail "llava_onevision: not tied: $(cat "$T/plan")"
grep -q "^skipped vision_tower.vision_model.post_layernorm.weight" "$T/plan" ||
	fail "llava_onevision: post_layernorm not skipped: $(cat "$T/plan")"
plan_has llava_onevision "vision_tower.vision_model.encoder.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 64\]" \
	"multi_modal_projector.linear_1.weight *BF16 *\[128, 64\]" \
	"multi_modal_projector.linear_2.weight *BF16 *\[128, 128\]" \
	"image_newline *BF16 *\[128\]" \
	"language_model.model.layers.1.self_attn.qkv_proj.bias *BF16 *\[128\]" \
	"language_model.model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]"
# Cohere2Vision: a Cohere 2 LM tied by text_config's default (no lm_head line); the whole
# SigLIP tower with post_layernorm; the projector's linear_1 ([x_r; gate_r] rows) and linear_2
# (columns) cut as vLLM's Merged/RowParallelLinear and never quantized
"$CTL" plan --model-dir "$T/cohere2_vision" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan cohere2_vision"
grep -q "lm_head tied" "$T/plan" || fail "cohere2_vision: not tied: $(cat "$T/plan")"
plan_has cohere2_vision "vision_tower.vision_model.encoder.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 64\]" \
	"vision_tower.vision_model.post_layernorm.weight *BF16 *\[64\]" \
	"multi_modal_projector.linear_1.weight *BF16 *\[128, 256\]" \
	"multi_modal_projector.linear_1.bias *BF16 *\[128\]" \
	"multi_modal_projector.linear_2.weight *BF16 *\[128, 64\]" \
	"multi_modal_projector.linear_2.bias *BF16 *\[128\]" \
	"language_model.model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]"
# LLaVA-NeXT-Video: a Llama LM, untied (lm_head cut); LLaVA's CLIP tower to the feature layer
# (block 1 and post_layernorm skipped); image_newline skipped (vLLM ignores it); the projector
# whole and never quantized (plain nn.Linear in vLLM's llava_next_video.py)
"$CTL" plan --model-dir "$T/llava_next_video" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan llava_next_video"
grep -q "lm_head tied" "$T/plan" && fail "llava_next_video: tied: $(cat "$T/plan")"
plan_has llava_next_video "skipped image_newline" "skipped vision_tower.vision_model.post_layernorm.weight" \
	"skipped vision_tower.vision_model.encoder.layers.1.mlp.fc1.weight" \
	"vision_tower.vision_model.encoder.layers.0.self_attn.qkv_proj.weight *I8 *\[96, 64\]" \
	"multi_modal_projector.linear_1.weight *BF16 *\[128, 64\]" \
	"multi_modal_projector.linear_1.bias *BF16 *\[128\]" \
	"multi_modal_projector.linear_2.weight *BF16 *\[128, 128\]" \
	"language_model.lm_head.weight *BF16 *\[512, 128\]" \
	"language_model.model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]"
# Qwen2-Audio: a Qwen2 LM, untied (lm_head cut); the audio encoder (transformers' own module in
# vLLM) and the projector whole on every rank and never quantized
"$CTL" plan --model-dir "$T/qwen2_audio" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan qwen2_audio"
grep -q "lm_head tied" "$T/plan" && fail "qwen2_audio: tied: $(cat "$T/plan")"
plan_has qwen2_audio "audio_tower.conv1.weight *BF16 *\[64, 16, 3\]" \
	"audio_tower.embed_positions.weight *BF16 *\[16, 64\]" \
	"audio_tower.layers.1.self_attn.q_proj.weight *BF16 *\[64, 64\]" \
	"audio_tower.layers.1.fc1.weight *BF16 *\[128, 64\]" \
	"multi_modal_projector.linear.weight *BF16 *\[128, 64\]" \
	"language_model.lm_head.weight *BF16 *\[512, 128\]" \
	"language_model.model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]"
# InternVL: a Qwen2 LM, untied (lm_head cut); the InternViT tower whole on every rank and never
# quantized but fc1 (rows) / fc2 (columns), the projector whole (vLLM's interns1.py / _vit.py)
"$CTL" plan --model-dir "$T/internvl" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan internvl"
grep -q "lm_head tied" "$T/plan" && fail "internvl: tied: $(cat "$T/plan")"
plan_has internvl "vision_tower.embeddings.cls_token *BF16 *\[1, 1, 64\]" \
	"vision_tower.embeddings.position_embeddings *BF16 *\[1, 17, 64\]" \
	"vision_tower.embeddings.patch_embeddings.projection.weight *BF16 *\[64, 3, 8, 8\]" \
	"vision_tower.encoder.layer.1.attention.q_proj.weight *BF16 *\[64, 64\]" \
	"vision_tower.encoder.layer.1.mlp.fc1.weight *BF16 *\[64, 64\]" \
	"vision_tower.encoder.layer.1.mlp.fc2.weight *BF16 *\[64, 64\]" \
	"multi_modal_projector.linear_1.weight *BF16 *\[128, 256\]" \
	"language_model.lm_head.weight *BF16 *\[512, 128\]" \
	"language_model.model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]"
grep -q "vision_tower.*_scale" "$T/plan" && fail "internvl: a tower scale: $(cat "$T/plan")"
# InternVL3.5: a Qwen3 LM tied by text_config (no lm_head), its per-head q / k norms whole
"$CTL" plan --model-dir "$T/internvl_qwen3" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan internvl_qwen3"
grep -q "lm_head tied" "$T/plan" || fail "internvl_qwen3: untied: $(cat "$T/plan")"
plan_has internvl_qwen3 "language_model.model.layers.1.self_attn.q_norm.weight *BF16 *\[64\]" \
	"language_model.model.layers.1.self_attn.qkv_proj.weight *I8 *\[256, 128\]" \
	"vision_tower.encoder.layer.1.mlp.fc1.weight *BF16 *\[64, 64\]"
# RoBERTa / XLM-RoBERTa: BERT's cut with the position table [max_position_embeddings, hid] and
# token_type_embeddings [type_vocab_size, hid] whole, the four Linears quantized, the pooler
# skipped (vLLM loads none)
for f in roberta xlm_roberta; do
	"$CTL" plan --model-dir "$T/$f" --tp-size 2 --tp-rank 1 --quant int8-channel \
		--rank-only >"$T/plan" || fail "plan $f"
	for l in "skipped pooler.dense.weight" "skipped pooler.dense.bias" \
		"embeddings.position_embeddings.weight *F32 *\[66, 128\]" \
		"embeddings.token_type_embeddings.weight *F32 *\[1, 128\]" \
		"encoder.layer.1.attention.self.qkv_proj.weight *I8 *\[192, 128\]" \
		"encoder.layer.1.attention.self.qkv_proj.bias *F32 *\[192\]" \
		"encoder.layer.1.output.dense.bias *F32 *\[128\]"; do
		grep -q "^ *$l" "$T/plan" || fail "$f line $l: $(cat "$T/plan")"
	done
	grep -q "pooler.dense.weight *F32" "$T/plan" && fail "$f: pooler emitted: $(cat "$T/plan")"
done
# XLMRobertaForSequenceClassification: the encoder under roberta. (kept in the runtime names),
# the head classifier.dense / out_proj whole and never quantized, no pooler
"$CTL" plan --model-dir "$T/xlm_roberta_cls" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan xlm_roberta_cls"
plan_has xlm_roberta_cls "classifier.dense.weight *F32 *\[128, 128\]" "classifier.out_proj.weight *F32 *\[1, 128\]" \
	"classifier.out_proj.bias *F32 *\[1\]" \
	"roberta.embeddings.position_embeddings.weight *F32 *\[66, 128\]" \
	"roberta.encoder.layer.2.attention.self.qkv_proj.weight *I8 *\[192, 128\]"
# LLaVA with a Pixtral tower (pixtral-12b): a Mistral LM (head_dim 48), untied (lm_head cut);
# Mistral 3's tower cut and quantized as vLLM's pixtral.py builds it (every block: feature
# layer -1); LLaVA's projector by rows / columns, quantized, its biases kept
"$CTL" plan --model-dir "$T/llava_pixtral" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan llava_pixtral"
grep -q "lm_head tied" "$T/plan" && fail "llava_pixtral: tied: $(cat "$T/plan")"
grep -q "skipped" "$T/plan" && fail "llava_pixtral: a skipped tensor: $(cat "$T/plan")"
plan_has llava_pixtral "vision_tower.patch_conv.weight *BF16 *\[64, 3, 14, 14\]" \
	"vision_tower.transformer.layers.1.attention.qkv_proj.weight *I8 *\[96, 64\]" \
	"vision_tower.transformer.layers.1.feed_forward.gate_up_proj.weight *I8 *\[128, 64\]" \
	"vision_tower.transformer.layers.1.feed_forward.down_proj.weight *I8 *\[64, 64\]" \
	"multi_modal_projector.linear_1.weight *I8 *\[64, 64\]" \
	"multi_modal_projector.linear_1.bias *BF16 *\[64\]" \
	"multi_modal_projector.linear_2.weight *I8 *\[128, 64\]" \
	"language_model.lm_head.weight *BF16 *\[512, 128\]" \
	"language_model.model.layers.1.self_attn.qkv_proj.weight *I8 *\[192, 128\]"
# FuyuForCausalLM: Persimmon's rows under language_model., vision_embed_tokens [128, 192] a
# ColumnParallelLinear (64 rows a rank at TP 2, quantized, its bias by rows); a llama
# text_config refused
"$CTL" plan --model-dir "$T/fuyu" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan fuyu"
plan_has fuyu "vision_embed_tokens.weight *I8 *\[64, 192\]" "vision_embed_tokens.bias *BF16 *\[64\]" \
	"vision_embed_tokens.weight_scale *F32 *\[64, 1\]" \
	"language_model.model.layers.1.self_attn.query_key_value.weight *I8 *\[192, 128\]" \
	"language_model.model.layers.1.self_attn.q_layernorm.bias *BF16 *\[16\]" \
	"language_model.lm_head.weight *BF16 *\[512, 128\]"
refused_edit fuyu 's/"model_type": "persimmon"/"model_type": "llama"/' "text_config.model_type 'llama'"
# Lfm2VlForConditionalGeneration: LFM2's rows under language_model. (short conv unquantized),
# the SigLIP2 tower's patch Linear [64, 192] and position table whole and BF16, its blocks cut
# and quantized, the projector whole and BF16; a pooling head (vision_use_head absent) refused
"$CTL" plan --model-dir "$T/lfm2_vl" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan lfm2_vl"
plan_has lfm2_vl "vision_tower.vision_model.embeddings.patch_embedding.weight *BF16 *\[64, 192\]" \
	"vision_tower.vision_model.embeddings.position_embedding.weight *BF16 *\[16, 64\]" \
	"vision_tower.vision_model.encoder.layers.1.self_attn.qkv_proj.weight *I8 *\[96, 64\]" \
	"vision_tower.vision_model.encoder.layers.1.mlp.fc2.weight *I8 *\[64, 64\]" \
	"vision_tower.vision_model.post_layernorm.bias *BF16 *\[64\]" \
	"multi_modal_projector.linear_1.weight *BF16 *\[160, 256\]" \
	"multi_modal_projector.linear_2.weight *BF16 *\[256, 160\]" \
	"language_model.model.layers.0.short_conv.in_proj.weight *BF16 *\[384, 256\]" \
	"language_model.model.layers.2.self_attn.qkv_proj.weight *I8 *\[256, 256\]" \
	"language_model.lm_head.weight *BF16 *\[512, 256\]"
refused_edit lfm2_vl 's/"vision_use_head": false/"vision_use_head": true/' "vision_use_head is not false"
# InternVL3.5-MoE: a Qwen3-MoE LM untied; layer 1's router whole and unquantized, its 4 experts
# split by EP 2 (2 whole experts a rank) and quantized; layer 0's dense MLP by TP
"$CTL" plan --model-dir "$T/internvl_qwen3_moe" --tp-size 2 --tp-rank 1 --ep-size 2 --ep-rank 1 \
	--quant int8-channel --rank-only >"$T/plan" || fail "plan internvl_qwen3_moe"
grep -q "lm_head tied" "$T/plan" && fail "internvl_qwen3_moe: tied: $(cat "$T/plan")"
plan_has internvl_qwen3_moe "language_model.model.layers.1.mlp.gate.weight *BF16 *\[4, 128\]" \
	"language_model.model.layers.1.mlp.experts.w13_weight *I8 *\[2, 256, 128\]" \
	"language_model.model.layers.1.mlp.experts.w2_weight *I8 *\[2, 128, 128\]" \
	"language_model.model.layers.0.mlp.gate_up_proj.weight *I8 *\[256, 128\]" \
	"language_model.model.layers.1.self_attn.k_norm.weight *BF16 *\[64\]"
grep -q "layers.1.mlp.gate.weight_scale" "$T/plan" && fail "internvl_qwen3_moe: a router scale"
mkdir -p "$T/ivm_oss" && cp "$T/internvl_qwen3_moe/"*.safetensors* "$T/ivm_oss/" &&
	sed 's/"model_type": "qwen3_moe"/"model_type": "gpt_oss"/' "$T/internvl_qwen3_moe/config.json" \
		>"$T/ivm_oss/config.json"
"$CTL" plan --model-dir "$T/ivm_oss" --tp-size 2 >/dev/null 2>"$T/err" &&
	fail "internvl with a gpt_oss text_config planned"
grep -q "text_config.model_type 'gpt_oss'" "$T/err" || fail "internvl gpt_oss: $(cat "$T/err")"
rm -rf "$T/ivm_oss"
# ChameleonForConditionalGeneration: q_norm / k_norm [H, d] / [KV, d] by the rank's heads
# (BF16), the VQ-VAE whole and unquantized; a VQ-VAE module vLLM does not build skipped;
# attention_bias true refused
"$CTL" plan --model-dir "$T/chameleon" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan chameleon"
plan_has chameleon "model.layers.1.self_attn.q_norm.weight *BF16 *\[4, 16\]" \
	"model.layers.1.self_attn.k_norm.bias *BF16 *\[2, 16\]" \
	"model.layers.1.self_attn.qkv_proj.weight *I8 *\[128, 128\]" \
	"model.vqmodel.encoder.conv_out.weight *BF16 *\[32, 64, 3, 3\]" \
	"model.vqmodel.quantize.embedding.weight *BF16 *\[64, 32\]" "lm_head.weight *BF16 *\[512, 128\]"
refused_edit chameleon 's/"attention_bias": false/"attention_bias": true/' "attention_bias true"
# ModernBertModel: Wqkv [q_r; k_r; v_r] (192 of its 384 rows a rank at TP 2), attn.Wo / mlp.Wo
# by columns, mlp.Wi whole; nothing quantized under int8-channel (vLLM builds no Linear of
# ModernBERT with the quantization config); layer 0 has no attn_norm; a hidden_activation other
# than gelu refused
"$CTL" plan --model-dir "$T/modernbert" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan modernbert"
plan_has modernbert "layers.1.attn.Wqkv.weight *F32 *\[192, 128\]" "layers.1.attn.Wqkv.bias *F32 *\[192\]" \
	"layers.1.attn.Wo.weight *F32 *\[128, 64\]" "layers.1.mlp.Wi.weight *F32 *\[192, 128\]" \
	"layers.1.mlp.Wo.weight *F32 *\[128, 48\]" "layers.1.attn_norm.bias *F32 *\[128\]" \
	"embeddings.tok_embeddings.weight *F32 *\[512, 128\]"
grep -q "_scale\|layers.0.attn_norm" "$T/plan" && fail "modernbert: a scale or layer 0's attn_norm"
refused_edit modernbert 's/"hidden_activation": "gelu"/"hidden_activation": "gelu_new"/' \
	"hidden_activation"
