#!/usr/bin/env bash
# fetch_restart.sh — issue 11: 8 concurrent `weightctl fetch` (default flags,
# one endpoint) of 4 layouts on a cold cache; weightd is SIGKILLed while it
# produces (4 fetches waiting; the other 4 start while it is down) and
# restarted 0.6 s later on the same cache and port. Every fetch
# must complete (the client retries refused connections within its retry
# budget and resumes) and be byte-identical to `weightctl shard`. Then a
# silent first endpoint (accepts TCP, never answers) must cost at most a few
# seconds per fetch (printed; asserted < 20 s for shared CI machines).
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
CTL=${WT_WEIGHTCTL:-$B/weightctl} # the fetch client (override to measure another build)
mkdir -p "$T/models"
"$B/wt-mkckpt" --family llama --out "$T/models/big" --size-mb 96 >/dev/null || die "mkckpt"
LAYOUTS=("--tp-size 2 --tp-rank 0" "--tp-size 2 --tp-rank 1"
	"--tp-size 2 --tp-rank 0 --quant fp8-channel" "--tp-size 2 --tp-rank 1 --quant fp8-channel"
	"--tp-size 4 --tp-rank 0 --quant int8-channel" "--tp-size 4 --tp-rank 3 --quant int8-channel"
	"--tp-size 4 --tp-rank 1 --quant int4-group" "--tp-size 4 --tp-rank 2 --quant int4-group")
N=${#LAYOUTS[@]}
for i in $(seq 0 $((N - 1))); do
	# shellcheck disable=SC2086
	"$B/weightctl" shard --model-dir "$T/models/big" ${LAYOUTS[$i]} --out "$T/ref$i.st" ||
		die "shard ${LAYOUTS[$i]}"
done

start_weightd r1 "$T/models" "$T/cache"
URL=$WD_URL
PIDS=()
fetch_bg() { # i
	# shellcheck disable=SC2086
	"$CTL" fetch --endpoint "$URL" --model big ${LAYOUTS[$1]} --out "$T/f$1.st" --quiet \
		2>"$T/f$1.err" &
	PIDS+=($!)
}
t0=$(date +%s.%N)
# half the clients start before the kill (they wait for the production), half
# while the daemon is down (their first connection is refused)
for i in $(seq 0 $((N / 2 - 1))); do fetch_bg "$i"; done
sleep 0.4
running=0
for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && running=$((running + 1)); done
[ "$running" = $((N / 2)) ] || die "only $running of $((N / 2)) fetches still running at the kill; use a bigger fixture"
kill -9 "$WD_PID"
wait "$WD_PID" 2>/dev/null
for i in $(seq $((N / 2)) $((N - 1))); do fetch_bg "$i"; done
sleep 0.6
start_weightd r2 "$T/models" "$T/cache" "$URL"
failed=0
for i in $(seq 0 $((N - 1))); do
	if ! wait "${PIDS[$i]}"; then
		failed=$((failed + 1))
		echo "fetch ${LAYOUTS[$i]}: $(tail -n1 "$T/f$i.err")" >&2
	elif ! cmp -s "$T/ref$i.st" "$T/f$i.st"; then
		die "fetch ${LAYOUTS[$i]} across the restart differs from weightctl shard"
	fi
done
t1=$(date +%s.%N)
echo "restart: $((N - failed)) of $N fetches completed ($running waiting at the kill, $((N - running)) started while down), $(echo "$t1 - $t0" | bc) s"
[ "$failed" = 0 ] || die "$failed of $N fetches failed across a daemon restart"

# --- a silent endpoint first: bounded by the connect timeout, not nng's 10 s handshake ---
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
time.sleep(600)' >"$T/silent.port" &
SP=$!
WD_PIDS="$WD_PIDS $SP"
for _ in $(seq 1 100); do [ -s "$T/silent.port" ] && break; sleep 0.05; done
SILENT="tcp://127.0.0.1:$(cat "$T/silent.port")"
for k in 0 4; do # two layouts (rendezvous may put either endpoint first)
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	"$CTL" fetch --endpoint "$SILENT" --endpoint "$URL" --model big ${LAYOUTS[$k]} \
		--out "$T/s$k.st" --quiet 2>"$T/s.err" || die "fetch past a silent endpoint: $(cat "$T/s.err")"
	t=$(echo "$(date +%s.%N) - $t0" | bc)
	cmp -s "$T/ref$k.st" "$T/s$k.st" || die "fetch past a silent endpoint differs"
	echo "silent endpoint listed first: fetch in $t s (target < 10 s)"
	[ "$(echo "$t < 20" | bc)" = 1 ] || die "fetch past a silent endpoint took $t s"
done
stop_weightd "$WD_PID"
echo "fetch_restart.sh: ok"
