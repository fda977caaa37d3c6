#!/usr/bin/env bash
# bench_smoke.sh — every benchmark in bench/ run once at its smallest size, so
# a bench that no longer works fails `make test` instead of rotting until the
# next `make bench` (bench_cold died at its first EVICT for a whole session).
# Checks per bench: exit status 0 and its result lines (a bench that needs
# nginx or a GPU may print its own skip line instead: exactly that one). The
# figures are not judged: at these sizes they mean nothing.
#
# Normal build only (WT_BUILD=build): the sanitizer passes do not build the
# benches (`make check` builds them when SAN is unset). Builds nothing itself;
# a bench binary missing from the normal build is a failure. A new
# bench/bench_*.c without an entry here fails too. About 30 s on two cores.
set -u
B=${WT_BUILD:-build}
case "$B" in
*asan* | *tsan*)
	echo "bench_smoke.sh: SKIPPED: $B is a sanitizer build; the benches are smoked in the normal build only"
	exit 77
	;;
esac
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-bench-smoke-XXXXXX")
trap 'rm -rf "$T"' EXIT
export TMPDIR=$T # benches that take their temp folder from TMPDIR clean up into it
failed=""
summary=""

# smoke NAME 'REGEX...' -- ENV... -- ARGS...: run $B/bench/NAME with ENV set and
# ARGS; fail unless it exits 0 and every REGEX (grep -E, one per word, | for
# alternatives, no spaces: use . ) matches a line of its output.
smoke() {
	local name=$1 pats=$2 env=() args=() t0 t1 rc p
	shift 2
	[ "${1:-}" = -- ] && shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do env+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	args=("$@")
	local bin=$B/bench/$name out=$T/$name.out
	if [ ! -x "$bin" ]; then
		echo "bench_smoke.sh: FAIL: $bin is not built (make benches)"
		failed="$failed $name"
		return
	fi
	t0=$(date +%s.%N)
	env ${env[@]+"${env[@]}"} timeout 60 "$bin" ${args[@]+"${args[@]}"} >"$out" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	local secs
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	summary="$summary $name=${secs}s"
	if [ "$rc" != 0 ]; then
		echo "bench_smoke.sh: FAIL: $name ${args[*]+${args[*]}} exited $rc after ${secs}s; its output:"
		sed 's/^/    /' "$out"
		failed="$failed $name"
		return
	fi
	for p in $pats; do
		if ! grep -Eq -- "$p" "$out"; then
			echo "bench_smoke.sh: FAIL: $name printed no line matching /$p/; its output:"
			sed 's/^/    /' "$out"
			failed="$failed $name"
			return
		fi
	done
	echo "bench_smoke.sh: ok $name (${secs}s)"
}

# Expected output, per bench (the lines that carry its results).
smoke bench_quant '^baseline.memcpy ^fp8-block.+threads=1 ^int4-group.+threads=all'
smoke bench_cache '^bench_cache: ^.+put.+file.write.+get.+file.read.+view' \
	-- -- --total-mb 8 --shard-mb 4
smoke bench_reclaim '^shared.norms.\(evict.A\):.live ^dead.files.\(evict.B\):.live' \
	-- -- --layout-mb 16 --blob-mb 1
smoke bench_produce '^generating: ^sequential.read ^produce.TP=4 ^ratio.production/read' \
	-- WT_BENCH_DIR="$T/produce-llama" WT_BENCH_MB=16
smoke bench_stack '^round.1.assembled ^round.1.streamed ^RATIO.peak.RSS.streamed ^RATIO.seconds' \
	-- -- --experts 64 --rounds 1
smoke bench_stack '^deepseek_v3,.64.experts ^round.1.streamed ^RATIO.peak.RSS.streamed' \
	-- -- --family deepseek_v3 --experts 64 --rounds 1
smoke bench_objstore '^reads.of.+16.MiB:.file://.+4.ranges ^reads.of.+32.MiB:' \
	-- WT_BENCH_MB=32
smoke bench_weightd '^production.TP=4 ^chunk.serving,.1.client ^chunk.serving,.4.clients' \
	-- -- 8
smoke bench_peer '^.+fill.from.peer ^.+ratio.fill./.produce' -- -- 16
smoke bench_tls '^.+plain.tcp:// ^.+tls\+tcp:// ^.+TLS./.plain.goodput' -- WT_BENCH_MB=16
smoke bench_fetch '^\(a\).cache-hit ^\(b\).verified ^\(c\).weightctl ^\(d\).warm ^\(e\).bulk ^\(f\).into' \
	-- WT_BENCH_MB=16
smoke bench_bcast '^\(a\).plain.fetch ^\(b\).broadcast.R=2.ipc ^\(b\).broadcast.R=4.tcp ^.+RATIO.broadcast./.one ^.+CPU.s.per.GB.delivered ^\(c\).one.slow ^.+slow.replica:' \
	-- WT_BENCH_MB=16 -- --rounds 1 --lag-ms 300
smoke bench_cuda_sink '^\(a\).cuda.sink|^cuda:.no.usable.device' -- WT_BENCH_MB=16
if grep -q '^(a) cuda sink' "$T/bench_cuda_sink.out" 2>/dev/null &&
	! grep -q '^(b) cuda sink' "$T/bench_cuda_sink.out"; then
	echo "bench_smoke.sh: FAIL: bench_cuda_sink printed (a) but not (b)"
	failed="$failed bench_cuda_sink(b)"
fi
smoke bench_cold '^RATIO.time.to.first.byte ^RATIO.cold.fetch./ ^RATIO.\(a.daemon ^RATIO.production.quant.none ^RATIO.production.fp8-block' \
	-- -- --gib 0.05 --workers 2
# nginx absent: its SKIP line and nothing else; present: all three RATIO lines.
smoke bench_http '^SKIP.bench_http:.nginx.not.found|^RATIO.http.store./.curl,' -- -- --gib 0.05 --rounds 1
if grep -q '^RATIO http store' "$T/bench_http.out" 2>/dev/null; then
	for p in '^RATIO cold fetch file:// / http' '^RATIO http store / curl into a buffer'; do
		grep -q "$p" "$T/bench_http.out" || {
			echo "bench_smoke.sh: FAIL: bench_http printed no line /$p/"
			failed="$failed bench_http"
		}
	done
fi

# Every bench binary built must have been smoked above.
for bin in "$B"/bench/bench_*; do
	[ -x "$bin" ] || continue
	n=$(basename "$bin")
	case " $summary " in
	*" $n="*) ;;
	*)
		case " $failed " in *" $n "*) ;; *)
			echo "bench_smoke.sh: FAIL: $n has no smoke entry here (add one)"
			failed="$failed $n"
			;;
		esac
		;;
	esac
done
for src in bench/bench_*.c; do
	n=$(basename "$src" .c)
	[ -x "$B/bench/$n" ] || case " $failed " in *" $n "*) ;; *)
		echo "bench_smoke.sh: FAIL: $src has no binary $B/bench/$n (make benches)"
		failed="$failed $n"
		;;
	esac
done
echo "bench_smoke.sh: times:$summary"
[ -z "$failed" ] || { echo "bench_smoke.sh: FAILED:$failed"; exit 1; }
echo "bench_smoke.sh: all benches ok"
