#!/usr/bin/env bash
# experts_unstacked.sh — Qwen3-VL-MoE with its experts stored one Linear each (as its FP8
# releases store them: mlp.experts.{j}.gate_proj / up_proj / down_proj) instead of
# transformers' bmm stacks (shardmap_family_for picks the family's per-expert table):
# the wt-mkckpt fixture rewritten so (tests/integration/unstack_experts.py) gives the
# same rank tensors, byte for byte, as the stacked one for TP, EP and TP x EP under
# none / int8-channel / fp8-block; its FP8 block form (experts F8_E4M3 with
# weight_scale_inv, every other Linear in modules_to_not_convert) gives the BF16 values
# within e4m3's rounding; verify-forward passes on the per-expert checkpoint (the
# reference reads its experts one by one); a checkpoint mixing both is refused naming
# a tensor.
set -u
B=${WT_BUILD:-build}
PY=$(command -v python3 || echo /usr/bin/python3)
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-unstack-XXXXXX")
trap 'rm -rf "$T"' EXIT
die() { echo "experts_unstacked.sh: FAIL: $*"; exit 1; }
"$PY" -c 'import numpy' || die "numpy unavailable (make deps)"
"$B/wt-mkckpt" --family qwen3_vl_moe --out "$T/stacked" --seed 5 >/dev/null || die "wt-mkckpt"
"$PY" "$HERE/unstack_experts.py" "$T/stacked" "$T/pe" || die "unstack"
"$PY" "$HERE/unstack_experts.py" fp8 "$T/stacked" "$T/fp8" "$T/twin" || die "unstack fp8"
"$PY" "$HERE/unstack_experts.py" mix "$T/stacked" "$T/mix" || die "unstack mix"
grep -q '"model.language_model.layers.0.mlp.experts.7.down_proj.weight"' \
	"$T/pe/model.safetensors" || die "no per-expert tensor written"
n=0
shard() { # shard DIR OUT LAYOUT... (stderr kept)
	local d=$1 o=$2
	shift 2
	"$B/weightctl" shard --model-dir "$d" --out "$o" "$@" 2>"$T/err" ||
		die "shard $d $*: $(cat "$T/err")"
}
for lay in "--tp-size 2 --tp-rank 1" "--ep-size 2 --ep-rank 1" \
	"--tp-size 2 --ep-size 2 --tp-rank 0 --ep-rank 1"; do
	for q in none int8-channel fp8-block; do
		# shellcheck disable=SC2086 # the layout is words
		shard "$T/stacked" "$T/a.st" $lay --quant "$q"
		# shellcheck disable=SC2086
		shard "$T/pe" "$T/b.st" $lay --quant "$q"
		"$PY" "$HERE/unstack_experts.py" cmp "$T/b.st" "$T/a.st" || die "per-expert [$lay $q]"
		n=$((n + 1))
	done
	# shellcheck disable=SC2086
	shard "$T/fp8" "$T/f.st" $lay
	# shellcheck disable=SC2086
	shard "$T/twin" "$T/t.st" $lay
	"$PY" "$HERE/unstack_experts.py" cmp "$T/f.st" "$T/t.st" fp8 || die "FP8 per-expert [$lay]"
	n=$((n + 1))
done
"$B/weightctl" verify-forward --model-dir "$T/pe" --tp-size 2 --ep-size 2 >"$T/vf" 2>&1 ||
	die "verify-forward on the per-expert checkpoint: $(tail -3 "$T/vf")"
grep -q '^PASS' "$T/vf" || die "verify-forward printed no PASS: $(cat "$T/vf")"
if "$B/weightctl" shard --model-dir "$T/mix" --out "$T/m.st" 2>"$T/err"; then
	die "a checkpoint with stacked and per-expert experts was accepted"
fi
grep -q "experts" "$T/err" || die "the mixed checkpoint's refusal names no expert tensor: $(cat "$T/err")"
echo "experts_unstacked.sh: ok ($n rank files equal; mixed refused: $(head -c 160 "$T/err"))"
