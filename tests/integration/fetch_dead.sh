#!/usr/bin/env bash
# fetch_dead.sh — the only weightd dies (kill -9) while a client waits for its
# manifest (a cold production) and never comes back: the client notices the
# lost connection (pipe monitor), retries for --retry-budget-ms and fails with
# WT_EUNAVAIL — within seconds, not after manifest_timeout_ms (600 s).
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
mkdir -p "$T/models"
"$B/wt-mkckpt" --family llama --out "$T/models/big" --size-mb 128 >/dev/null || die "mkckpt"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start_weightd A "$T/models" "$T/cache" tcp://127.0.0.1:0 --producers 1 \
	--metrics-listen "http://127.0.0.1:$port"
t0=$(date +%s.%N)
"$B/weightctl" fetch --endpoint "$WD_URL" --model big --tp-size 2 --tp-rank 1 --quant int4-group \
	--out "$T/x.st" --quiet --retry-budget-ms 2000 2>"$T/x.err" &
F=$!
# kill it while the layout is being produced (the client waits for its manifest)
for _ in $(seq 1 400); do
	curl -s "http://127.0.0.1:$port/metrics" | grep -qx 'weightd_productions_running 1' && break
	sleep 0.01
done
kill -9 "$WD_PID"
t0=$(date +%s.%N)
rc=0
wait "$F" || rc=$?
dt=$(echo "$(date +%s.%N) - $t0" | bc)
echo "fetch_dead: the client gave up ${dt} s after the kill (rc $rc): $(tail -c 300 "$T/x.err")"
[ "$rc" = 1 ] || die "exit $rc, want 1"
grep -q "WT_EUNAVAIL" "$T/x.err" || die "no WT_EUNAVAIL"
[ "$(echo "$dt < 20" | bc)" = 1 ] || die "took ${dt} s (manifest_timeout_ms is 600 s; the budget 2 s)"
[ ! -e "$T/x.st" ] || die "output written"
echo "fetch_dead: ok"
