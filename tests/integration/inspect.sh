#!/usr/bin/env bash
# weightctl inspect: exit codes (0 valid, 1 invalid with the reason on stderr,
# 2 usage) and the summary lines, on model folders written byte by byte here.
set -u
B=${WT_BUILD:-build}
CTL=$B/weightctl
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-inspect-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "inspect.sh: FAIL: $*"; exit 1; }

# write_st FILE HEADER_JSON DATA_BYTES: a safetensors file, header padded to 8.
write_st() {
	local hdr=$2
	while [ $(( ${#hdr} % 8 )) -ne 0 ]; do hdr="$hdr "; done
	local n=${#hdr}
	printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x\\x00\\x00\\x00\\x00' \
		$((n & 255)) $(((n >> 8) & 255)) $(((n >> 16) & 255)) $(((n >> 24) & 255)))" >"$1"
	printf '%s' "$hdr" >>"$1"
	head -c "$3" /dev/zero >>"$1"
}

M=$T/model
mkdir -p "$M"
cat >"$M/config.json" <<'JSON'
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8,
 "num_attention_heads": 2, "num_hidden_layers": 1, "vocab_size": 4,
 "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}
JSON
write_st "$M/model.safetensors" \
	'{"a":{"dtype":"BF16","shape":[4,8],"data_offsets":[0,64]},"b":{"dtype":"F32","shape":[8],"data_offsets":[64,96]},"c":{"dtype":"BF16","shape":[2],"data_offsets":[96,100]}}' 100

out=$("$CTL" inspect "$M") || fail "valid folder: exit $?"
echo "$out"
for want in "architecture:  LlamaForCausalLM" "model_type:    llama" "tensors:       3" \
	"bytes BF16     68 (2 tensors)" "bytes F32      32 (1 tensors)" "total bytes:   100" \
	"quantization:  fp8-block 128x128" "status:        valid"; do
	grep -qF "$want" <<<"$out" || fail "missing line '$want'"
done
rev=$(sed -n 's/^revision: *//p' <<<"$out")
[ ${#rev} = 64 ] || fail "revision '$rev'"
rev2=$("$CTL" inspect "file://$M" | sed -n 's/^revision: *//p')
[ "$rev" = "$rev2" ] || fail "revision not stable: $rev vs $rev2"

# invalid: a hole in the data section -> exit 1, reason on stderr naming the tensor
write_st "$M/model.safetensors" \
	'{"a":{"dtype":"BF16","shape":[4,8],"data_offsets":[0,64]},"b":{"dtype":"F32","shape":[8],"data_offsets":[68,100]}}' 100
"$CTL" inspect "$M" >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 1 ] || fail "hole: exit $rc, want 1"
grep -q "WT_ECORRUPT.*tensor 'b': hole" "$T/err" || fail "hole: stderr: $(cat "$T/err")"
[ -s "$T/out" ] && fail "hole: stdout not empty"

"$CTL" inspect "$T/missing" 2>/dev/null
[ $? = 1 ] || fail "missing folder: want exit 1"
"$CTL" inspect 2>/dev/null
[ $? = 2 ] || fail "no argument: want exit 2"
"$CTL" inspect --bogus "$M" 2>/dev/null
[ $? = 2 ] || fail "unknown flag: want exit 2"
"$CTL" inspect --help | grep -q "usage: weightctl inspect" || fail "--help"
echo "inspect.sh: ok"
