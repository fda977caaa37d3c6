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
set -u
limit=${WT_TSAN_TIMEOUT:-300}
build=$1
shift
here=$(cd "$(dirname "$0")/.." && pwd)
bad=0
for t in "$@"; do
	log="$build/$t.log"
	t0=$(date +%s)
	WT_BUILD=$build TSAN_OPTIONS="suppressions=$here/tests/tsan.supp halt_on_error=0 exitcode=0" \
		timeout --kill-after=10 "$limit" "$build/tests/$t" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
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
		bad=1
	else
		echo "tsan: $t ok (${secs} s)${nng:+$([ "$nng" != 0 ] && echo " ($nng nng-internal report(s) passed)")}"
	fi
done
exit $bad
