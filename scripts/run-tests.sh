#!/usr/bin/env bash
# Run every unit test binary, then every integration script; print one
# summary line "N passed, N failed, N skipped" at the end. Exit non-zero on
# any failure. A test that exits 77 (the automake convention) was skipped: it
# is counted and named as such, never as passed.
#
# Each test runs under a time limit (WT_TEST_TIMEOUT seconds, default 600): a
# hung test is killed, reported as failed with its elapsed time, and the
# suite goes on. Per-test wall times are printed so slow tests are visible.
# Each test's output goes to a log first and is printed when it ends; the
# last lines of every failed test's log are printed again before the summary,
# so a CI report that keeps only the tail still shows why a test failed.
set -u
BUILD=${BUILD:-build}
LIMIT=${WT_TEST_TIMEOUT:-600}
export WT_BUILD=$BUILD
# nng's own leak at socket close under load (see the file); harmless without ASan
here=$(cd "$(dirname "$0")/.." && pwd)
export LSAN_OPTIONS="suppressions=$here/tests/lsan.supp print_suppressions=0${LSAN_OPTIONS:+ $LSAN_OPTIONS}"
pass=0
fail=0
skip=0
failed=""
skipped=""
logs=$(mktemp -d "${TMPDIR:-/tmp}/wt-tests.XXXXXX") || exit 1
trap 'rm -rf "$logs"' EXIT
n=0
failed_logs=""

run_one() {
	local t0 t1 rc log
	n=$((n + 1))
	log="$logs/$n.log"
	echo "== $*"
	t0=$(date +%s)
	# a file, not a pipe: a daemon a broken test leaves behind cannot hold the suite
	timeout --kill-after=10 "$LIMIT" "$@" > "$log" 2>&1
	rc=$?
	t1=$(date +%s)
	cat "$log"
	[ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "!! $* timed out after ${LIMIT}s"
	echo "-- $* rc=$rc $((t1 - t0))s"
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1))
	elif [ "$rc" = 77 ]; then
		skip=$((skip + 1))
		skipped="$skipped $*"
	else
		fail=$((fail + 1))
		failed="$failed $*"
		failed_logs="$failed_logs $n:$(basename "${!#}")"
	fi
}

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "$t"
done
for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	run_one bash "$t"
done
[ -n "$skipped" ] && echo "skipped:$skipped"
for f in $failed_logs; do
	echo "---- the last 60 lines of ${f#*:} (failed) ----"
	tail -n 60 "$logs/${f%%:*}.log"
done
[ -n "$failed" ] && echo "failed:$failed"
label=suite
case "$BUILD" in *asan*) label=asan ;; esac
echo "$label: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
