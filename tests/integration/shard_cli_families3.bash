# shard_cli_families3.bash — shard_cli.sh's family checks, continued (sourced by it; $CTL, $T,
# fail and the fixtures are its): the families after Granite Speech.

# Aria: int8-channel TP 2 rank 1: the experts' stacks transposed into w13 / w2 and quantized per
# expert row, the shared experts merged and quantized, the router whole and BF16; the tower
# quantized as idefics3's and its post_layernorm skipped; the projector whole and BF16 but its
# FFN (linear_in rows, linear_out columns, still BF16); a text_config without model_type refused
"$CTL" plan --model-dir "$T/aria" --tp-size 2 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan aria"
grep -q "lm_head tied" "$T/plan" && fail "aria: tied: $(cat "$T/plan")"
for l in "skipped vision_tower.post_layernorm.weight" \
	"language_model.model.layers.1.mlp.experts.w13_weight *I8 *\[4, 64, 128\]" \
	"language_model.model.layers.1.mlp.experts.w13_weight_scale *F32 *\[4, 64, 1\]" \
	"language_model.model.layers.1.mlp.experts.w2_weight *I8 *\[4, 128, 32\]" \
	"language_model.model.layers.1.mlp.router.weight *BF16 *\[4, 128\]" \
	"language_model.model.layers.1.mlp.shared_experts.gate_up_proj.weight *I8 *\[128, 128\]" \
	"language_model.model.layers.1.mlp.shared_experts.down_proj.weight *I8 *\[128, 64\]" \
	"vision_tower.encoder.layers.1.mlp.fc1.weight *I8 *\[64, 64\]" \
	"multi_modal_projector.query *BF16 *\[8, 64\]" \
	"multi_modal_projector.cross_attn.multihead_attn.in_proj_weight *BF16 *\[192, 64\]" \
	"multi_modal_projector.feed_forward.linear_in.weight *BF16 *\[64, 64\]" \
	"multi_modal_projector.feed_forward.linear_out.weight *BF16 *\[128, 64\]" \
	"language_model.lm_head.weight *BF16 *\[512, 128\]"; do
	grep -q "^ *$l" "$T/plan" || fail "aria line $l: $(cat "$T/plan")"
done
grep -q "multi_modal_projector.*_scale\|router.weight_scale" "$T/plan" &&
	fail "aria: the projector or the router quantized: $(cat "$T/plan")"
mkdir -p "$T/ar_bad" && cp "$T/aria/"*.safetensors* "$T/ar_bad/" &&
	sed 's/"model_type": "aria_text",//' "$T/aria/config.json" >"$T/ar_bad/config.json"
"$CTL" plan --model-dir "$T/ar_bad" --tp-size 2 >/dev/null 2>"$T/err" &&
	fail "aria with a text_config without model_type planned"
grep -q "text_config has no model_type" "$T/err" || fail "aria text_config: $(cat "$T/err")"
rm -rf "$T/ar_bad"
