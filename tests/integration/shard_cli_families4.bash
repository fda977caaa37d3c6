# shard_cli_families4.bash — shard_cli.sh's family checks, continued (sourced by it; $CTL, $T,
# fail, plan_has, refused_edit and the fixtures are its): the families added after Aquila
# (shard_cli_families3.bash had grown near 800 lines). Each family's block: its plan lines at
# one rank and scheme, and the config.json edits it refuses, naming the key.

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
