#!/usr/bin/env bash
# fetch_out_dir.sh — `weightctl fetch --out-dir DIR`: every rank of a layout on one connection,
# each file byte-identical to what `weightctl shard --out-dir` writes for it (TP 2 x EP 2 of a
# MoE); the usage errors (with --tp-rank, with --out, DIR a file: exit 2 / 2 / 1) and a layout
# the model cannot take (exit 3, DIR not made). The ranks are of one revision: through
# wt-evilpeer relaying the second manifest request on to a daemon that serves other bytes
# under the same name (the model changed between two ranks), the fetch says so, removes the
# file it wrote and fetches the layout again (all ranks the new bytes'); relayed to the two
# daemons in turn (a model that keeps changing) it gives up after three passes, exit 1, no
# rank file left.
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
[ -x "$B/tests/tools/wt-evilpeer" ] || die "$B/tests/tools/wt-evilpeer not built (make tests)"
mkdir -p "$T/a" "$T/b"
"$B/wt-mkckpt" --family mixtral --out "$T/a/m" --seed 1 >/dev/null || die "wt-mkckpt a"
"$B/wt-mkckpt" --family mixtral --out "$T/b/m" --seed 2 >/dev/null || die "wt-mkckpt b"
for s in a b; do
	"$B/weightctl" shard --model-dir "$T/$s/m" --tp-size 2 --ep-size 2 --out-dir "$T/ref-$s" ||
		die "shard $s"
done
start_weightd A "$T/a" "$T/cache-a"
A_URL=$WD_URL
start_weightd B "$T/b" "$T/cache-b"
B_URL=$WD_URL

# same_as REF DIR: DIR holds REF's four rank files, byte for byte, and nothing else
same_as() {
	[ "$(ls "$2" | tr '\n' ' ')" = "tp0-ep0.safetensors tp0-ep1.safetensors tp1-ep0.safetensors tp1-ep1.safetensors " ] ||
		die "$2 holds: $(ls -a "$2" | tr '\n' ' ')"
	for f in "$1"/*; do
		cmp -s "$f" "$2/${f##*/}" || die "$2/${f##*/} differs from $f"
	done
}

step "fetch --out-dir"
"$B/weightctl" fetch --endpoint "$A_URL" --model m --tp-size 2 --ep-size 2 --out-dir "$T/got" \
	--quiet || die "fetch --out-dir"
same_as "$T/ref-a" "$T/got"

step "usage"
"$B/weightctl" fetch --endpoint "$A_URL" --model m --tp-size 2 --tp-rank 1 --out-dir "$T/x" \
	2>"$T/err"
[ $? = 2 ] && grep -q "drop --tp-rank" "$T/err" || die "--tp-rank with --out-dir: $(cat "$T/err")"
"$B/weightctl" fetch --endpoint "$A_URL" --model m --out "$T/x.st" --out-dir "$T/x" 2>"$T/err"
[ $? = 2 ] || die "--out with --out-dir: $(cat "$T/err")"
touch "$T/file"
"$B/weightctl" fetch --endpoint "$A_URL" --model m --tp-size 2 --out-dir "$T/file" 2>"$T/err"
[ $? = 1 ] && grep -q "exists and is not a folder" "$T/err" || die "DIR a file: $(cat "$T/err")"
"$B/weightctl" fetch --endpoint "$A_URL" --model m --tp-size 3 --out-dir "$T/x" 2>"$T/err"
[ $? = 3 ] && grep -q "rank tp=0 ep=0: .*tp_size 3" "$T/err" && [ ! -e "$T/x" ] ||
	die "tp 3: want exit 3 and no folder: $(cat "$T/err")"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# evil MODE: wt-evilpeer on a free port relaying to A, MODE naming B; sets EVIL_URL
evil() {
	EVIL_URL="tcp://127.0.0.1:$(port)"
	"$B/tests/tools/wt-evilpeer" "$EVIL_URL" "$A_URL" "$1:$B_URL" 2>>"$T/evil.log" &
	WD_PIDS="$WD_PIDS $!"
	echo "$!" >>"$T/daemons"
	for _ in $(seq 1 100); do
		grep -q " -> $A_URL" "$T/evil.log" 2>/dev/null && return 0
		sleep 0.05
	done
	die "wt-evilpeer did not start: $(cat "$T/evil.log")"
}

step "a model that changed between two ranks"
evil switch
"$B/weightctl" fetch --endpoint "$EVIL_URL" --model m --tp-size 2 --ep-size 2 --out-dir "$T/sw" \
	2>"$T/err" || die "fetch through a switching relay: $(cat "$T/err")"
grep -q "model m changed on the server during the fetch .*every rank fetched again" "$T/err" ||
	die "the change was not said: $(cat "$T/err")"
same_as "$T/ref-b" "$T/sw"

step "a model that keeps changing"
rm -f "$T/evil.log"
evil flip
"$B/weightctl" fetch --endpoint "$EVIL_URL" --model m --tp-size 2 --ep-size 2 --out-dir "$T/fl" \
	2>"$T/err"
rc=$?
[ "$rc" = 1 ] && grep -q "giving up after three passes" "$T/err" ||
	die "a model that keeps changing: exit $rc: $(cat "$T/err")"
[ -z "$(ls -A "$T/fl")" ] || die "rank files left after giving up: $(ls -A "$T/fl")"
echo "fetch_out_dir.sh: ok (TP 2 x EP 2 as shard --out-dir; usage; exit 3; a changed model" \
	"fetched again, one that keeps changing refused)"
