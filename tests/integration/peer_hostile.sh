#!/usr/bin/env bash
# peer_hostile.sh — a node never caches a peer's manifest that is not its own
# plan of the layout: a peer that leaves a tensor out of every rank's manifest
# (wt-evilpeer, relaying to an honest warm node) is skipped, and the node
# produces the layout from its own source; what it serves is the checkpoint's
# shard, tensor for tensor (it used to cache and serve the shard without the
# tensor, and the fetch passed). A peer that answers each chunk 1.5 s late is
# given up after 10 s under 16 MiB/s and the node produces the layout (it
# waited for the whole fill: about a minute here).
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
[ -x "$B/tests/tools/wt-evilpeer" ] || die "$B/tests/tools/wt-evilpeer not built (make tests)"
mkdir -p "$T/a" "$T/b"
"$B/wt-mkckpt" --family llama --out "$T/a/m1" >/dev/null || die "mkckpt"
cp -r "$T/a/m1" "$T/b/m1" # the same bytes: the same revision on both nodes
start_weightd A "$T/a" "$T/cache-a" tcp://127.0.0.1:0
A_URL=$WD_URL
"$B/weightctl" fetch --endpoint "$A_URL" --model m1 --tp-size 2 --tp-rank 0 --out "$T/a0.st" \
	--quiet || die "warm A"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$B/tests/tools/wt-evilpeer" "tcp://127.0.0.1:$port" "$A_URL" 2>"$T/evil.log" &
EVIL=$!
WD_PIDS="$WD_PIDS $EVIL"
sleep 0.3
start_weightd B "$T/b" "$T/cache-b" tcp://127.0.0.1:0 --peer "tcp://127.0.0.1:$port" \
	--log-level info
"$B/weightctl" fetch --endpoint "$WD_URL" --model m1 --tp-size 2 --tp-rank 0 --out "$T/b0.st" \
	--quiet || die "fetch from B"
"$B/weightctl" shard --model-dir "$T/b/m1" --tp-size 2 --tp-rank 0 --out "$T/ref.st" || die "shard"
grep -q "leaving" "$T/evil.log" || die "the peer was never asked: $(cat "$T/evil.log")"
grep -q "not this node's plan of the layout" "$T/B.log" ||
	die "B did not refuse the peer's manifest: $(grep -i peer "$T/B.log")"
cmp "$T/b0.st" "$T/ref.st" || die "B served a shard that is not the checkpoint's"
echo "peer_hostile.sh: $(grep -o "not this node's plan[^;]*" "$T/B.log" | head -1); B produced the layout itself"
stop_weightd "$WD_PID"
kill "$EVIL" 2>/dev/null

# --- a slow peer: A in 64 KiB chunks (dozens per rank), each answered 1.5 s late ---
start_weightd A2 "$T/a" "$T/cache-a2" tcp://127.0.0.1:0 --chunk-bytes 64K
A2_URL=$WD_URL
"$B/weightctl" fetch --endpoint "$A2_URL" --model m1 --tp-size 2 --tp-rank 0 --out "$T/a20.st" \
	--quiet || die "warm A2"
"$B/tests/tools/wt-evilpeer" "tcp://127.0.0.1:$port" "$A2_URL" stall:1500 2>"$T/slow.log" &
EVIL=$!
WD_PIDS="$WD_PIDS $EVIL"
sleep 0.3
start_weightd C "$T/b" "$T/cache-c" tcp://127.0.0.1:0 --peer "tcp://127.0.0.1:$port"
t0=$(date +%s)
"$B/weightctl" fetch --endpoint "$WD_URL" --model m1 --tp-size 2 --tp-rank 0 --out "$T/c0.st" \
	--quiet || die "fetch from C"
dt=$(($(date +%s) - t0))
cmp "$T/c0.st" "$T/ref.st" || die "C served a shard that is not the checkpoint's"
grep -q "too slow, skipped" "$T/C.log" || die "C did not give the slow peer up: $(grep -i peer "$T/C.log")"
[ "$dt" -lt 30 ] || die "the fetch from C took $dt s"
echo "peer_hostile.sh: slow peer given up, fetch in $dt s: $(grep -o "peer tcp[^;]*too slow" "$T/C.log" | head -1)"
echo "peer_hostile.sh: ok"
