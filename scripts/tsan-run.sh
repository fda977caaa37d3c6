#!/usr/bin/env bash
# tsan-run.sh BUILD TEST... — run test binaries built with -fsanitize=thread
# (make tsan). A test fails on its own failure, or on a ThreadSanitizer report
# whose top frame is not inside nng: RocksDB's are suppressed by
# tests/tsan.supp; nng's internal ones (SUMMARY "... (.../libnng.so...)") are
# named and passed, since suppressing libnng.so would hide races in our own
# aio callbacks. Logs: BUILD/TEST.log; a failed test's last lines (its own
# failure, or the first ThreadSanitizer report of ours) are printed after it.
# Each test runs under timeout(1) (WT_TSAN_TIMEOUT seconds, 300 unless set):
# one that hangs fails with its log's tail instead of holding the whole run.
# WT_TSAN_JOBS tests run side by side (default 2, or 1 on a one-core machine),
# each reported when it ends: they wait on sockets and clocks most of the time
# (one at a time, the 24 took 149 s of wall time for 47 CPU-s).
set -u
limit=${WT_TSAN_TIMEOUT:-300}
cores=$(nproc 2>/dev/null || echo 1)
jobs=${WT_TSAN_JOBS:-$([ "$cores" -ge 2 ] && echo 2 || echo 1)}
case $jobs in '' | *[!0-9]* | 0)
	echo "tsan-run.sh: WT_TSAN_JOBS must be a whole number >= 1, not '$jobs'" >&2
	exit 2 ;;
esac
build=$1
shift
here=$(cd "$(dirname "$0")/.." && pwd)

# Run test $1; print its verdict (and a failure's evidence) into BUILD/TEST.out; exit 1 on failure.
run_one() {
	local t=$1 log="$build/$1.log" t0 rc secs ours nng
	t0=$(date +%s)
	WT_BUILD=$build TSAN_OPTIONS="suppressions=$here/tests/tsan.supp halt_on_error=0 exitcode=0" \
		timeout --kill-after=10 "$limit" "$build/tests/$t" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	exec >"$build/$t.out"
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "tsan: $t timed out after ${limit} s"
	fi
	ours=$(grep '^SUMMARY: ThreadSanitizer' "$log" | grep -vc 'libnng\.so' || true)
	nng=$(grep '^SUMMARY: ThreadSanitizer' "$log" | grep -c 'libnng\.so' || true)
	if [ "$rc" != 0 ] || [ "$ours" != 0 ]; then
		echo "tsan: $t FAILED (exit $rc, $ours report(s), ${secs} s; $log)"
		if [ "$ours" != 0 ]; then
			awk '/^WARNING: ThreadSanitizer/ { on = 1; r = "" }
			     on { r = r $0 "\n" }
			     on && /^SUMMARY/ { on = 0; if ($0 !~ /libnng\.so/) { printf "%s", r; exit } }' \
				"$log" | head -n 80
		else
			tail -n 60 "$log"
		fi
		return 1
	fi
	echo "tsan: $t ok (${secs} s)${nng:+$([ "$nng" != 0 ] && echo " ($nng nng-internal report(s) passed)")}"
	return 0
}

bad=0
declare -A test_of=() # running: pid -> test
# Wait for one running test to end, print its verdict, count a failure.
reap() {
	local pid="" rc
	wait -n -p pid
	rc=$?
	[ -n "$pid" ] || return 0
	cat "$build/${test_of[$pid]}.out"
	[ "$rc" = 0 ] || bad=1
	unset "test_of[$pid]"
}
for t in "$@"; do
	while [ "${#test_of[@]}" -ge "$jobs" ]; do reap; done
	run_one "$t" &
	test_of[$!]=$t
done
while [ "${#test_of[@]}" -gt 0 ]; do reap; done
exit $bad
