#!/usr/bin/env bash
# ct_python.sh — compressed-tensors sources through `weightctl shard`, checked by an
# outside reader: tests/integration/ct_oracle.py reads the llama_w8a8 / llama_w4a16 /
# llama_w4a8 / llama_ct_fp8 / llama_ct_fp8_tensor / qwen3_ct_fp8_block (FP8 per
# channel / tensor / block; twin qwen3) fixtures with numpy and rebuilds every rank (pass-through bytes, dequantized
# values against the BF16 llama twin, dequantize -> requantize, dequantize to
# fp32); the CLI refusals (a group split by a rank, another scheme without --requant allow) exit 3
# naming the tensor and the fix.
set -u
B=${WT_BUILD:-build}
PY=$(command -v python3 || echo /usr/bin/python3)
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-ctpy-XXXXXX")
trap 'rm -rf "$T"' EXIT
if ! "$PY" -c 'import numpy' 2>/dev/null; then
	"$PY" -m pip install -q numpy >/dev/null 2>&1 ||
		"$PY" -m pip install -q --break-system-packages numpy >/dev/null 2>&1
fi
"$PY" -c 'import numpy' || { echo "ct_python.sh: FAIL: numpy unavailable"; exit 1; }
fail=0
for f in llama llama_w8a8 llama_w4a16 llama_w4a16_asym llama_w4a8 llama_w8a8_asym llama_w8a16 \
	llama_w4a16_actorder llama_ct_fp8 llama_ct_fp8_tensor qwen3 qwen3_ct_fp8_block; do
	"$B/wt-mkckpt" --family "$f" --out "$T/$f" --seed 11 >/dev/null ||
		{ echo "FAIL: wt-mkckpt $f"; exit 1; }
done
# the cases, one a line for ct_oracle.py --batch (one Python process for all: starting one a
# case, numpy imported and the folders read again each time, was most of this script's CPU)
case "$B$T" in *[[:space:]]*) echo "ct_python.sh: FAIL: a space in '$B' or '$T'"; exit 1 ;; esac
while read -r fam tp mode; do
	# the BF16 twin of the same seed: the family's first word (llama, qwen3)
	echo "$B/weightctl $T/$fam $T/${fam%%_*} $tp $mode"
done >"$T/cases" <<'CASES'
llama_w8a8 1 pass
llama_w8a8 2 pass
llama_w8a8 4 pass
llama_w8a8 8 pass
llama_w4a16 1 pass
llama_w4a16 2 pass
llama_w8a8 2 requant
llama_w4a16 4 requant
llama_w8a8 4 none
llama_w4a16 2 none
llama_w4a8 2 pass
llama_w4a8 1 requant
llama_ct_fp8 1 pass
llama_ct_fp8 4 pass
llama_ct_fp8 2 none
llama_ct_fp8 2 requant
llama_ct_fp8_tensor 1 pass
llama_ct_fp8_tensor 2 pass
llama_ct_fp8_tensor 4 none
llama_ct_fp8_tensor 2 requant
qwen3_ct_fp8_block 1 pass
qwen3_ct_fp8_block 2 pass
qwen3_ct_fp8_block 2 none
qwen3_ct_fp8_block 2 requant
llama_w4a8 2 none
llama_w4a16_asym 1 none
llama_w4a16_asym 2 none
llama_w4a16_asym 4 requant
llama_w8a8_asym 2 none
llama_w8a8_asym 2 requant
llama_w8a16 2 pass
llama_w8a16 4 none
llama_w4a16_actorder 2 none
llama_w4a16_actorder 4 requant
CASES
n=$(wc -l <"$T/cases")
"$PY" "$HERE/ct_oracle.py" --batch <"$T/cases" >"$T/oracle.log" 2>&1
rc=$?
cat "$T/oracle.log"
ok=$(grep -c ' T=[0-9]* [a-z]*: ok$' "$T/oracle.log")
[ "$rc" = 0 ] && [ "$ok" = "$n" ] || {
	echo "FAIL: ct_oracle.py --batch: exit $rc, $ok of $n cases ok"
	fail=$((fail + 1))
}

# refusals: exit 3 with the tensor and the fix in the message
refuse() {
	local why=$1 want=$2
	shift 2
	"$B/weightctl" shard --out "$T/x.st" "$@" >/dev/null 2>"$T/err"
	local rc=$?
	if [ "$rc" = 3 ] && grep -q -- "$want" "$T/err"; then
		echo "ok: refuses $why: $(head -c 200 "$T/err")"
	else
		echo "FAIL: $why: exit $rc, stderr: $(cat "$T/err")"
		fail=$((fail + 1))
	fi
}
refuse "int4 group split at TP 4" "split the checkpoint's int4 groups of 128" \
	--model-dir "$T/llama_w4a16" --tp-size 4 --tp-rank 0 --quant int4-group
refuse "int8 source as fp8-block" "requantizing needs --requant allow" \
	--model-dir "$T/llama_w8a8" --tp-size 2 --tp-rank 0 --quant fp8-block
refuse "int4 source at group 64" "--group-size 128" \
	--model-dir "$T/llama_w4a16" --tp-size 2 --tp-rank 0 --quant int4-group --group-size 64
refuse "asymmetric int4 source as int4-group" "with zero points (symmetric false)" \
	--model-dir "$T/llama_w4a16_asym" --tp-size 2 --tp-rank 0 --quant int4-group
refuse "actorder int4 source as int4-group" "with activation order" \
	--model-dir "$T/llama_w4a16_actorder" --tp-size 2 --tp-rank 0 --quant int4-group
refuse "asymmetric int8 source as int8-channel" "int8 per channel with zero points" \
	--model-dir "$T/llama_w8a8_asym" --tp-size 2 --tp-rank 0 --quant int8-channel
[ "$fail" = 0 ] || { echo "ct_python.sh: FAIL: $fail checks"; exit 1; }
echo "ct_python.sh: ok"
