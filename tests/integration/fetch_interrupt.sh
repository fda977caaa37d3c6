#!/usr/bin/env bash
# fetch_interrupt.sh — Ctrl-C (SIGINT) and SIGTERM to `weightctl fetch` in the
# middle of a fetch whose server stopped answering (SIGSTOP: its connections
# stay up): weightctl exits within 2 s with 130 / 143, and neither the output
# file nor its temporary file ("OUT.tmp.PID", as large as what had come) is
# left. Before, the signal killed weightctl and the temporary file stayed.
# Then the server resumes and the same fetch completes, equal to `weightctl
# shard`.
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
mkdir -p "$T/models" "$T/out"
"$B/wt-mkckpt" --family llama --size-mb 64 --out "$T/models/llama" >/dev/null || die "wt-mkckpt"
"$B/weightctl" shard --model-dir "$T/models/llama" --out "$T/out/ref.safetensors" >/dev/null ||
	die "shard"
start_weightd wd "$T/models" "$T/cache" tcp://127.0.0.1:0 --chunk-bytes 64K
"$B/weightctl" fetch --endpoint "$WD_URL" --model llama --out "$T/out/warm.safetensors" \
	--quiet || die "warm-up fetch"

# interrupt SIG CODE: a fetch, the server stopped once the temporary file has
# bytes, then SIG to weightctl: exit CODE within 2 s, no file left
interrupt() {
	local sig=$1 want=$2 out="$T/out/$1.safetensors"
	# a background job of this shell ignores SIGINT: start it with the default
	# disposition, as a terminal's foreground job has it
	python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL);
os.execv(sys.argv[1], sys.argv[1:])' "$B/weightctl" fetch --endpoint "$WD_URL" --model llama \
		--out "$out" --window 1 --quiet 2>"$T/out/$sig.log" &
	local ctl=$! tmp=""
	for _ in $(seq 1 400); do
		tmp=$(ls "$out".tmp.* 2>/dev/null | head -n1)
		[ -n "$tmp" ] && [ -s "$tmp" ] && break
		sleep 0.005
	done
	[ -n "$tmp" ] || die "$sig: no temporary file appeared"
	kill -STOP "$WD_PID"
	sleep 0.3
	kill -0 "$ctl" 2>/dev/null || die "$sig: the fetch ended before the signal"
	local t0 rc t
	t0=$(date +%s%N)
	kill "-$sig" "$ctl"
	wait "$ctl"
	rc=$?
	t=$((($(date +%s%N) - t0) / 1000000))
	kill -CONT "$WD_PID"
	echo "$sig: weightctl exited $rc after $t ms: $(cat "$T/out/$sig.log")"
	[ "$rc" = "$want" ] || die "$sig: exit $rc, want $want"
	[ "$t" -lt 2000 ] || die "$sig: exit took $t ms"
	ls "$out"* >/dev/null 2>&1 && die "$sig: left $(ls "$out"*)"
	grep -q "interrupted by SIG$sig" "$T/out/$sig.log" || die "$sig: no message"
}
interrupt INT 130
interrupt TERM 143
"$B/weightctl" fetch --endpoint "$WD_URL" --model llama --out "$T/out/after.safetensors" \
	--quiet || die "fetch after the resume"
cmp -s "$T/out/after.safetensors" "$T/out/ref.safetensors" || die "bytes differ from weightctl shard"
echo "fetch_interrupt.sh: ok"
