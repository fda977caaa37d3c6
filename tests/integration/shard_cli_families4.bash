# shard_cli_families4.bash — shard_cli.sh's family checks, continued (sourced by it; $CTL, $T,
# fail, plan_has, refused_edit and the fixtures are its): the families added after Aquila
# (shard_cli_families3.bash had grown near 800 lines). Each family's block: its plan lines at
# one rank and scheme, and the config.json edits it refuses, naming the key.

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
