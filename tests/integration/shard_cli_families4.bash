# shard_cli_families4.bash — shard_cli.sh's family checks, continued (sourced by it; $CTL, $T,
# fail, plan_has, refused_edit and the fixtures are its): the families added after Aquila
# (shard_cli_families3.bash had grown near 800 lines). Each family's block: its plan lines at
# one rank and scheme, and the config.json edits it refuses, naming the key.

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
