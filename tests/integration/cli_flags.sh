#!/usr/bin/env bash
# The command lines of weightctl (every command), weightd and wt-mkckpt go
# through getopt_long (common/opt.c): an unknown flag, a flag written as a
# prefix, a missing value, a value given to a switch and a stray word are each
# refused with the usage exit code and a message naming the flag; both
# "--flag V" and "--flag=V", short aliases and "--" keep working; --timeout-ms
# is one request's limit and leaves the connect phase to --connect-timeout-ms.
set -u
B=${WT_BUILD:-build}
CTL=$B/weightctl
WD=$B/weightd
MK=$B/wt-mkckpt
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-cliflags-XXXXXX")
SILENT=
trap '[ -n "$SILENT" ] && kill "$SILENT" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "cli_flags.sh: FAIL: $*"; exit 1; }

# refuse WANT_RC PATTERN PROGRAM ARGS...: exit WANT_RC, PATTERN on stderr, nothing on stdout
refuse() {
	local want=$1 pat=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	[ "$rc" = "$want" ] || fail "$*: exit $rc, want $want; stderr: $(cat "$T/err")"
	grep -qF -- "$pat" "$T/err" || fail "$*: stderr lacks '$pat': $(cat "$T/err")"
	[ -s "$T/out" ] && fail "$*: stdout not empty: $(cat "$T/out")"
	return 0
}

# --- weightctl: the shared flags (fetch) ---
refuse 2 "unknown flag '--bogus'" "$CTL" fetch --bogus
refuse 2 "--endpoint needs a value" "$CTL" fetch --model m --endpoint
refuse 2 "'--time' is not a flag; write --timeout-ms in full" "$CTL" fetch --time 5
refuse 2 "'--connect=5' is not a flag; write --connect-timeout-ms in full" "$CTL" fetch --connect=5
refuse 2 "--verbose takes no value" "$CTL" fetch --verbose=1
refuse 2 "--quiet takes no value" "$CTL" fetch --quiet=yes
refuse 2 "unknown flag '-x'" "$CTL" fetch -x
refuse 2 "unexpected argument 'stray'" "$CTL" fetch --model m stray
refuse 2 "--window '0': use an integer in 1..256" "$CTL" fetch --window 0
refuse 2 "--tp-size: 'x' is not an integer >= 1" "$CTL" fetch --tp-size=x
refuse 2 "--dtype 'fp64': use source, bf16, fp16 or fp32" "$CTL" manifest --dtype fp64
refuse 2 "--mode" "$CTL" models --mode sideways
# flags parsed (short alias, = form), then the missing endpoint is what is refused
refuse 2 "--endpoint URL is required" "$CTL" fetch -q --out="$T/x" --model=m --tp-size 1
# --- weightctl: each command's own flags ---
refuse 2 "unknown operation 'frob'" "$CTL" admin --endpoint tcp://127.0.0.1:1 frob
refuse 2 "unexpected argument 'warm'" "$CTL" admin --endpoint tcp://127.0.0.1:1 stats warm
refuse 2 "--uri needs a value" "$CTL" admin --endpoint tcp://127.0.0.1:1 register --uri
refuse 2 "--count '0': use an integer in 1..1000000" "$CTL" watch --count 0
refuse 2 "--wait-ms needs a value" "$CTL" watch --wait-ms
refuse 2 "--model-dir needs a value" "$CTL" plan --model-dir
refuse 2 "'--rank' is not a flag; write --rank-only in full" "$CTL" shard --rank
refuse 2 "--rank-only takes no value" "$CTL" plan --model-dir "$T" --rank-only=1
refuse 2 "--tokens needs a value" "$CTL" verify-forward --tokens
refuse 2 "unexpected argument 'b'" "$CTL" inspect a b
refuse 2 "--model-dir DIR is required" "$CTL" inspect
refuse 2 "unknown flag '--endpoint'" "$CTL" capabilities --model-dir "$T" --endpoint tcp://x:1
refuse 2 "--json takes no value" "$CTL" capabilities --json=1
"$CTL" fetch --help | grep -q "usage: weightctl fetch" || fail "fetch --help"
"$CTL" plan -h | grep -q "usage: weightctl plan" || fail "plan -h"

# the layout commands on a real model: split and = forms, "--" before a folder
"$MK" --family llama --out "$T/m" >/dev/null || fail "wt-mkckpt"
"$CTL" plan --model-dir="$T/m" --tp-size 2 --tp-rank=1 --rank-only >"$T/a" 2>&1 || fail "plan: $(cat "$T/a")"
"$CTL" plan --model-dir "$T/m" --tp-size=2 --tp-rank 1 --rank-only >"$T/b" 2>&1 || fail "plan (2)"
cmp -s "$T/a" "$T/b" || fail "--flag=V and --flag V differ"
"$CTL" plan --model-dir "$T/m" --tp-size 2 --tp-rank 0 --rank-only >"$T/c" 2>&1 || fail "plan (3)"
cmp -s "$T/a" "$T/c" && fail "--tp-rank=1 was not applied (same output as rank 0)"
"$CTL" inspect -- "$T/m" >/dev/null 2>&1 || fail "inspect -- DIR"
# the configuration override (vLLM's hf_overrides) on the layout commands: --architecture
# names the class the folder is cut as (MistralForCausalLM: the mistral family) and the
# revision names the override; a bad override or both flags refused
"$CTL" plan --model-dir "$T/m" --tp-size 2 --tp-rank 1 --rank-only --architecture MistralForCausalLM \
	>"$T/d" 2>&1 || fail "plan --architecture: $(cat "$T/d")"
grep -q "(family mistral)" "$T/d" || fail "--architecture not applied: $(head -1 "$T/d")"
grep -q "(family llama)" "$T/a" || fail "plan without an override: $(head -1 "$T/a")"
[ "$(head -1 "$T/a" | awk '{print $NF}')" != "$(head -1 "$T/d" | awk '{print $NF}')" ] ||
	fail "the revision does not name the override"
"$CTL" plan --model-dir "$T/m" --tp-size 2 --tp-rank 1 --rank-only \
	--config-override '{"architectures": ["MistralForCausalLM"]}' >"$T/e" 2>&1 || fail "plan --config-override"
cmp -s "$T/d" "$T/e" || fail "--architecture X is not --config-override {architectures: [X]}"
refuse 2 "give one of --config-override and --architecture" "$CTL" plan --model-dir "$T/m" \
	--architecture A --config-override '{"a": 1}'
refuse 1 "config override: a JSON object is needed" "$CTL" shard --model-dir "$T/m" \
	--out "$T/x.safetensors" --config-override '["MistralForCausalLM"]'
refuse 2 "--architecture: architecture override: control character" "$CTL" plan \
	--model-dir "$T/m" --architecture "$(printf 'A\tB')"
refuse 3 "architecture 'NopeForCausalLM'" "$CTL" plan --model-dir "$T/m" --architecture NopeForCausalLM

# --- weightd ---
refuse 2 "unknown flag '--bogus'" "$WD" --bogus 1
refuse 2 "'--work' is not a flag; write --workers in full" "$WD" --work 3
refuse 2 "--workers needs a value" "$WD" --workers
refuse 2 "'stray': not a flag" "$WD" stray
refuse 2 "--config needs a value" "$WD" --config
refuse 2 "--help takes no value" "$WD" --help=1
# one release number for the daemon and the library (weightd said 0.1.0 while libweights was 1.4.0)
wdv=$("$WD" --version | awk '/^weightd /{print $2}')
ctv=$("$CTL" --version | awk '/^weightctl /{print $2}')
[ -n "$wdv" ] && [ "$wdv" = "$ctv" ] || fail "weightd --version '$wdv' is not weightctl's (libweights) '$ctv'"
"$WD" -h | grep -q "usage: weightd" || fail "weightd -h"

# --- wt-mkckpt ---
refuse 1 "'--fam' is not a flag; write --family in full" "$MK" --fam llama
refuse 1 "--family needs a value" "$MK" --family
refuse 1 "unknown flag '--layers'" "$MK" --family llama --out "$T/y" --layers 3
refuse 1 "--position-ids takes no value" "$MK" --position-ids=1
refuse 1 "unexpected argument 'stray'" "$MK" --family llama stray

# --- --timeout-ms is not the connect timeout: a listener that never answers Hello ---
PY=$(command -v python3 || echo /usr/bin/python3)
"$PY" -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True)
held = []
while True:
    held.append(s.accept()[0])
' >"$T/port" &
SILENT=$!
for _ in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
P=$(cat "$T/port")
[ -n "$P" ] || fail "silent listener did not start"
refuse 1 "no protocol handshake within 2000 ms" \
	"$CTL" models --endpoint "tcp://127.0.0.1:$P" --retries 0 --retry-budget-ms 1 --timeout-ms 100
refuse 1 "no protocol handshake within 300 ms" \
	"$CTL" models --endpoint "tcp://127.0.0.1:$P" --retries 0 --retry-budget-ms 1 \
	--timeout-ms 60000 --connect-timeout-ms 300
echo "cli_flags.sh: ok"
