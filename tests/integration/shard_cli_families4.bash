# shard_cli_families4.bash — shard_cli.sh's family checks, continued (sourced by it; $CTL, $T,
# fail, plan_has, refused_edit and the fixtures are its): the families added after Aquila
# (shard_cli_families3.bash had grown near 800 lines). Each family's block: its plan lines at
# one rank and scheme, and the config.json edits it refuses, naming the key.

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
