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
