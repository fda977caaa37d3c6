#!/usr/bin/env bash
# weightctl inspect: exit codes (0 valid, 1 invalid with the reason on stderr,
# 2 usage) and the summary lines; the loader's checks on model folders written
# byte by byte here, the family's checks (the TP 1 plan) on wt-mkckpt fixtures.
set -u
B=${WT_BUILD:-build}
CTL=$B/weightctl
MK=$B/wt-mkckpt
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

# a folder the loader accepts but whose tensors fit no rule of its family: invalid
"$CTL" inspect "$M" >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 1 ] || fail "tensors unknown to llama: exit $rc, want 1"
grep -q "WT_EUNSUPPORTED.*tensor 'a': unknown tensor for family llama" "$T/err" ||
	fail "unknown tensor: stderr: $(cat "$T/err")"
[ -s "$T/out" ] && fail "unknown tensor: stdout not empty"

D=$T/deepseek
"$MK" --family deepseek_v3 --out "$D" >/dev/null || fail "wt-mkckpt deepseek_v3"
out=$("$CTL" inspect "$D") || fail "valid folder: exit $?"
echo "$out"
for want in "architecture:  DeepseekV3ForCausalLM" "model_type:    deepseek_v3" \
	"family:        deepseek_v3" "bytes F8_E4M3" "quantization:  fp8-block 128x128" \
	"skipped:       " "model.layers.2." "status:        valid"; do
	grep -qF "$want" <<<"$out" || fail "missing line '$want'"
done
rev=$(sed -n 's/^revision: *//p' <<<"$out")
[ ${#rev} = 64 ] || fail "revision '$rev'"
rev2=$("$CTL" inspect "file://$D" | sed -n 's/^revision: *//p')
[ "$rev" = "$rev2" ] || fail "revision not stable: $rev vs $rev2"
# --model-dir, like every other command
[ "$("$CTL" inspect --model-dir "$D" | sed -n 's/^revision: *//p')" = "$rev" ] ||
	fail "--model-dir DIR"
[ "$("$CTL" inspect --model-dir="$D" | sed -n 's/^revision: *//p')" = "$rev" ] ||
	fail "--model-dir=DIR"
"$CTL" inspect --model-dir "$D" "$D" 2>/dev/null
[ $? = 2 ] || fail "two folders: want exit 2"

# a Qwen2-MoE whose config makes layer 1 dense while the file has its experts:
# refused by every plan, so invalid for inspect too (it was "valid")
Q=$T/qwen2_moe
"$MK" --family qwen2_moe --out "$Q" >/dev/null || fail "wt-mkckpt qwen2_moe"
"$CTL" inspect "$Q" >/dev/null || fail "qwen2_moe fixture should be valid"
sed -i 's/"mlp_only_layers": \[\]/"mlp_only_layers": [0, 1]/; /"mlp_only_layers": \[$/,/\]/c\  "mlp_only_layers": [0, 1],' \
	"$Q/config.json"
grep -q '"mlp_only_layers": \[0, 1\]' "$Q/config.json" || fail "config edit: $(cat "$Q/config.json")"
"$CTL" inspect "$Q" >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 1 ] || fail "qwen2_moe dense layer 1 with experts: exit $rc, want 1"
grep -q "WT_EUNSUPPORTED.*model.layers.1.mlp.*a dense layer" "$T/err" ||
	fail "dense layer message: $(cat "$T/err")"
# an architecture no family supports
sed -i 's/Qwen2MoeForCausalLM/XLNetLMHeadModel/' "$Q/config.json"
"$CTL" inspect "$Q" >/dev/null 2>"$T/err"
[ $? = 1 ] || fail "unsupported architecture: want exit 1"
grep -q "XLNetLMHeadModel.*is not supported" "$T/err" || fail "arch message: $(cat "$T/err")"

# BERT with the I64 embeddings.position_ids buffer: valid, the buffer skipped
"$MK" --family bert --position-ids --out "$T/bert" >/dev/null || fail "wt-mkckpt bert"
out=$("$CTL" inspect "$T/bert") || fail "bert with position_ids: exit $?"
grep -qF "bytes I64      512 (1 tensors)" <<<"$out" || fail "bert: I64 line: $out"
grep -qF "skipped:       1 (embeddings.position_ids)" <<<"$out" || fail "bert: skipped: $out"

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
