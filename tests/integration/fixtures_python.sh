#!/usr/bin/env bash
# fixtures_python.sh — wt-mkckpt checked by an outside reader: every family is
# generated into a temp folder and read with Hugging Face's `safetensors`
# (tests/fixtures/check_fixtures.py: names, shapes, dtypes, index, config dims,
# values, FP8 scales); the same seed twice must give byte-identical folders, a
# different seed different weights; bad arguments must exit 1 with a message.
# Under a sanitizer build the families are fams.sh's subset (the normal pass runs all).
# Prints "fixtures: N passed, M failed"; exits non-zero on any failure.
set -u
BUILD=${WT_BUILD:-build}
MK=$BUILD/wt-mkckpt
PY=$(command -v python3 || echo /usr/bin/python3)
HERE=$(cd "$(dirname "$0")/.." && pwd)
SEED=7 # fixed; a second seed 8 checks that the seed matters
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "[       OK ] $1"; }
bad() { fail=$((fail + 1)); echo "[  FAILED  ] $1"; }
finish() {
	echo "fixtures: $pass passed, $fail failed"
	[ "$fail" = 0 ]
	exit
}

if [ ! -x "$MK" ]; then
	bad "$MK missing: run make"
	finish
fi
if ! "$PY" -c 'from safetensors import deserialize; import numpy' 2>/dev/null; then
	"$PY" -m pip install -q safetensors numpy >/dev/null 2>&1 ||
		"$PY" -m pip install -q --break-system-packages safetensors numpy >/dev/null 2>&1
fi
if ! "$PY" -c 'from safetensors import deserialize; import numpy' 2>/dev/null; then
	bad "python safetensors or numpy not importable (scripts/deps.sh installs them)"
	finish
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/fetch_lib/fams.sh"
families=$("$MK" --family list)
[ "$(echo "$families" | wc -l)" -ge 8 ] && ok "--family list: $(echo $families)" ||
	bad "--family list printed: $families"

echo "seeds: $SEED (runs a, b) and $((SEED + 1)) (run c)"
# under a sanitizer build, fams.sh's subset (test_fixtures runs every family's generator under
# the sanitizers; the Python reading of the bytes is the normal pass's), with the folders
# check_fixtures.py compares a subset family against (gemma3's language model: gemma3_text's)
fams=$(san_fams "$(echo $families)")
case " $fams " in *" gemma3 "*) case " $fams " in *" gemma3_text "*) ;; *) fams="$fams gemma3_text" ;; esac ;; esac
for f in $fams; do
	for run in a b c; do
		seed=$SEED
		[ "$run" = c ] && seed=$((SEED + 1))
		if ! "$MK" --family "$f" --out "$TMP/$run/$f" --seed "$seed" >"$TMP/$f.$run.log" 2>&1; then
			bad "$f seed $seed: wt-mkckpt failed: $(cat "$TMP/$f.$run.log")"
			continue 2
		fi
	done
	if diff -r "$TMP/a/$f" "$TMP/b/$f" >/dev/null; then
		ok "$f: same seed, byte-identical folder"
	else
		bad "$f: two runs with seed $SEED differ"
	fi
	if ! cmp -s "$TMP/a/$f/config.json" "$TMP/c/$f/config.json"; then
		bad "$f: config.json depends on the seed"
	else
		differ=1
		for st in "$TMP/a/$f"/*.safetensors; do
			cmp -s "$st" "$TMP/c/$f/$(basename "$st")" && differ=0
		done
		[ "$differ" = 1 ] && ok "$f: seed $((SEED + 1)) changes every safetensors file" ||
			bad "$f: a safetensors file is the same for seeds $SEED and $((SEED + 1))"
	fi
done

# --size-mb: llama scaled (sharded, TP/alignment-friendly dims, about M MiB)
if "$MK" --family llama --size-mb 24 --out "$TMP/a/llama@24" --seed "$SEED" >"$TMP/size.log" 2>&1; then
	ok "llama --size-mb 24: $(cat "$TMP/size.log")"
else
	bad "llama --size-mb 24 failed: $(cat "$TMP/size.log")"
fi

# --experts: a MoE family with more experts (its stacks, router and config follow;
# check_fixtures.py reads the folder against config.json)
if "$MK" --family gpt_oss --experts 16 --out "$TMP/a/gpt_oss+e16" --seed "$SEED" >"$TMP/ex.log" 2>&1 &&
	grep -q '"num_local_experts": 16' "$TMP/a/gpt_oss+e16/config.json"; then
	ok "gpt_oss --experts 16: $(cat "$TMP/ex.log")"
else
	bad "gpt_oss --experts 16: $(cat "$TMP/ex.log") $(grep experts "$TMP/a/gpt_oss+e16/config.json" 2>&1)"
fi

# --format mistral: llama in Mistral's native format, read against the transformers folder
# (tests/fixtures/check_mistral_native.py: Meta names, wq / wk as vLLM un-permutes them)
mkdir -p "$TMP/m"
if "$MK" --family llama --out "$TMP/m/hf" --seed "$SEED" >/dev/null 2>&1 &&
	"$MK" --family llama --format mistral --out "$TMP/m/native" --seed "$SEED" >/dev/null 2>&1 &&
	msg=$("$PY" "$HERE/fixtures/check_mistral_native.py" "$TMP/m/hf" "$TMP/m/native" 2>&1); then
	ok "llama --format mistral: $msg"
else
	bad "llama --format mistral: ${msg:-wt-mkckpt failed}"
fi

# bad arguments: exit 1 and say why
check_bad() {
	local why=$1
	shift
	"$MK" "$@" >"$TMP/bad.out" 2>"$TMP/bad.err"
	local rc=$?
	if [ "$rc" = 1 ] && [ -s "$TMP/bad.err" ]; then
		ok "refuses $why: $(head -n 1 "$TMP/bad.err")"
	else
		bad "$why: exit $rc, stderr '$(cat "$TMP/bad.err")' (want exit 1 and a message)"
	fi
}
check_bad "unknown family" --family no_such_family --out "$TMP/x"
check_bad "unknown --format" --family llama --out "$TMP/x" --format gguf
check_bad "--format mistral on qwen2" --family qwen2 --out "$TMP/x" --format mistral
check_bad "missing --out" --family llama
check_bad "missing --family" --out "$TMP/x"
check_bad "--size-mb on qwen2" --family qwen2 --out "$TMP/x" --size-mb 10
check_bad "--size-mb 0" --family llama --out "$TMP/x" --size-mb 0
check_bad "--experts on llama" --family llama --out "$TMP/x" --experts 8
check_bad "--experts 0" --family gpt_oss --out "$TMP/x" --experts 0
check_bad "--experts below experts per token" --family mixtral --out "$TMP/x" --experts 1
check_bad "non-numeric seed" --family llama --out "$TMP/x" --seed abc
check_bad "negative seed" --family llama --out "$TMP/x" --seed -3
check_bad "unknown flag" --family llama --out "$TMP/x" --layers 3
check_bad "flag without value" --family llama --out
touch "$TMP/file"
check_bad "--out is a file" --family llama --out "$TMP/file"
[ ! -e "$TMP/x" ] && ok "bad arguments write nothing" || bad "bad arguments created $TMP/x"

# the outside reader
"$PY" "$HERE/fixtures/check_fixtures.py" "$TMP"/a/* >"$TMP/py.log" 2>&1
pyrc=$?
grep -E '^\[' "$TMP/py.log"
counts=$(grep -E '^counts [0-9]+ [0-9]+$' "$TMP/py.log" | tail -n 1)
if [ -z "$counts" ]; then
	bad "check_fixtures.py crashed (exit $pyrc): $(tail -n 5 "$TMP/py.log")"
else
	set -- $counts
	pass=$((pass + $2))
	fail=$((fail + $3))
	[ "$pyrc" = 0 ] || [ "$3" != 0 ] || bad "check_fixtures.py exit $pyrc with no failed check"
fi
finish
