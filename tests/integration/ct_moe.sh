#!/usr/bin/env bash
# ct_moe.sh — compressed-tensors MoE checkpoints (experts quantized one Linear per expert,
# as llm-compressor writes them for Mixtral, Qwen2-MoE / Qwen3-MoE or DeepSeek (MLA and
# shared experts quantized too); router gates and
# lm_head ignored) through `weightctl shard`, checked by tests/integration/ct_moe.py with
# numpy: FP8_DYNAMIC (fp8 per channel), FP8 (per tensor, static input scales), W4A16 (int4
# group 128) and W8A8 (int8 per channel, static input scales), each rank of TP, EP and
# TP x EP layouts: dequantized against a BF16 twin whose experts are scaled apart, the
# pass-through target against that, and the stacks' input scales (max over local experts).
set -u
B=${WT_BUILD:-build}
PY=$(command -v python3 || echo /usr/bin/python3)
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-ctmoe-XXXXXX")
trap 'rm -rf "$T"' EXIT
"$PY" -c 'import numpy' || { echo "ct_moe.sh: FAIL: numpy unavailable (make deps)"; exit 1; }
fail=0
for f in mixtral qwen2_moe deepseek_v2; do
	"$B/wt-mkckpt" --family "$f" --out "$T/$f" --seed 7 >/dev/null ||
		{ echo "ct_moe.sh: FAIL: wt-mkckpt $f"; exit 1; }
done
# qwen2_moe's experts (intermediate 128) split by TP 2 would split W4A16's groups of
# 128 (refused, tested in ct_python.sh): under EP they stay whole; deepseek_v2's
# kv_b_proj has 64 columns (kv_lora_rank): no W4A16 group of 128
# (the cases, one a line for ct_moe.py batch: one Python process makes and checks them all;
# one for each make and each check, numpy imported each time, was a third of this script's CPU)
case "$B$T" in *[[:space:]]*) echo "ct_moe.sh: FAIL: a space in '$B' or '$T'"; exit 1 ;; esac
while read -r fam scheme layouts; do
	echo "$T/$fam $T/$fam-$scheme $scheme $B/weightctl $layouts"
done >"$T/cases" <<'CASES'
mixtral fp8-channel 2,1 1,2 2,2
mixtral fp8-tensor 2,1 1,2 2,2
mixtral w4a16 2,1 1,2 2,2
mixtral w8a8 2,1 1,2 2,2
qwen2_moe fp8-channel 2,1 1,2 2,2
qwen2_moe fp8-tensor 4,1 2,2
qwen2_moe w4a16 1,2 2,2
qwen2_moe w8a8 2,1 1,2
deepseek_v2 fp8-channel 2,1 1,2
deepseek_v2 fp8-tensor 2,2
deepseek_v2 w8a8 2,1 2,2
CASES
n=$(wc -l <"$T/cases")
"$PY" "$HERE/ct_moe.py" batch <"$T/cases" >"$T/moe.log" 2>&1
rc=$?
cat "$T/moe.log"
ok=$(grep -c '^ct_moe [^ ]* [^ ]*: [0-9]* tensors, ok$' "$T/moe.log")
[ "$rc" = 0 ] && [ "$ok" = "$n" ] || {
	echo "ct_moe.sh: ct_moe.py batch: exit $rc, $ok of $n cases ok"
	fail=$((fail + 1))
}
if [ "$fail" -ne 0 ]; then
	echo "ct_moe.sh: FAIL ($fail cases)"
	exit 1
fi
echo "ct_moe.sh: ok"
