#!/usr/bin/env bash
# test_runner.sh — the suite's own runner and make test's build helper, on fake
# tests in a temp folder: scripts/run-tests.sh counts an offline test that fails
# (background lane) as failed, prints its log's tail and exits non-zero, counts a
# skip (77) as skipped, in both WT_TEST_LANE modes; scripts/behind.sh fails when
# the build behind fails (its log printed) or the foreground fails, and runs
# the build under SCHED_IDLE (or nice 19).
set -u
HERE=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-runner-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() {
	echo "test_runner.sh: FAIL: $*"
	exit 1
}
mkdir -p "$T/b/tests" "$T/tests/integration"
printf '#!/bin/sh\nsleep 1; echo offline-broke; exit 1\n' >"$T/b/tests/test_fixtures"
printf '#!/bin/sh\nexit 77\n' >"$T/b/tests/test_kernels"
printf '#!/bin/sh\ni=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done; echo foreground-ok\n' \
	>"$T/b/tests/test_cache"
printf '#!/bin/sh\necho "then=${WT_TEST_THEN:-unset}"\n' >"$T/b/tests/test_then_env"
printf 'echo offline-script-ok\n' >"$T/tests/integration/shard_cli.sh"
chmod +x "$T"/b/tests/*
for lane in 1 0; do
	out=$(cd "$T" && WT_TEST_LANE=$lane BUILD=b bash "$HERE/scripts/run-tests.sh" 2>&1)
	rc=$?
	[ "$rc" != 0 ] || fail "lane=$lane: a failing offline test left the suite at exit 0"
	grep -q '^suite: 3 passed, 1 failed, 1 skipped$' <<<"$out" ||
		fail "lane=$lane: counts wrong: $(tail -n 1 <<<"$out")"
	grep -q '^failed: b/tests/test_fixtures$' <<<"$out" || fail "lane=$lane: failed test not named"
	grep -q 'the last 60 lines of test_fixtures' <<<"$out" || fail "lane=$lane: no log tail"
	grep -q '^offline-broke$' <<<"$out" || fail "lane=$lane: the failed test's output is missing"
	grep -q '^offline-script-ok$' <<<"$out" || fail "lane=$lane: the offline script did not run"
	# the busy test's CPU seconds on its line, and in the pass's total and its heaviest
	cpu=$(sed -n 's|^-- b/tests/test_cache rc=0 [0-9]*s cpu \([0-9.]*\)s$|\1|p' <<<"$out")
	awk -v c="$cpu" 'BEGIN { exit !(c >= 0.05) }' ||
		fail "lane=$lane: the busy test's CPU is '$cpu': $(grep test_cache <<<"$out")"
	grep -q '^suite: CPU [0-9.]* s in all (user + system); the most: .*test_cache [0-9.]* s' \
		<<<"$out" || fail "lane=$lane: no CPU summary: $(grep '^suite' <<<"$out")"
done
# WT_TEST_THEN: run after the foreground tests and counted; its failure fails the suite
out=$(cd "$T" && WT_TEST_THEN='echo then-ran' BUILD=b bash "$HERE/scripts/run-tests.sh" 2>&1)
grep -q '^then=unset$' <<<"$out" || fail "WT_TEST_THEN: the tests inherit it (test_runner.sh runs in the ASan pass)"
grep -q '^then-ran$' <<<"$out" && grep -q '^suite: 4 passed, 1 failed, 1 skipped$' <<<"$out" ||
	fail "WT_TEST_THEN: not run or not counted: $(tail -n 3 <<<"$out")"
out=$(cd "$T" && WT_TEST_THEN='exit 4' BUILD=b bash "$HERE/scripts/run-tests.sh" 2>&1)
grep -q '^-- bash -c exit 4 rc=4 ' <<<"$out" && grep -q '^suite: 3 passed, 2 failed, 1 skipped$' <<<"$out" ||
	fail "WT_TEST_THEN: a failing command not counted as failed: $(tail -n 3 <<<"$out")"
B="$HERE/scripts/behind.sh"
"$B" "$T/log" 'echo building; exit 3' true >"$T/out" 2>&1 && fail "behind.sh: a failed build passed"
grep -q '^building$' "$T/out" || fail "behind.sh: the failed build's log was not printed"
"$B" "$T/log" true false >/dev/null 2>&1 && fail "behind.sh: a failed foreground passed"
"$B" "$T/log" true true || fail "behind.sh: two successes failed"
"$B" "$T/log" 'chrt -p $$; ps -o ni= -p $$' true || fail "behind.sh: the build's policy could not be read"
grep -q 'SCHED_IDLE' "$T/log" || grep -qx ' *19' "$T/log" ||
	fail "behind.sh: the build ran neither SCHED_IDLE nor nice 19: $(cat "$T/log")"
# --await LOG: the foreground waits for the build behind, and fails when it failed
"$B" "$T/log" "sleep 1; echo built >'$T/log.out'" bash -c "\"$B\" --await '$T/log' && cat '$T/log.out'" \
	>"$T/out" 2>&1 || fail "behind.sh --await: $(cat "$T/out")"
grep -q '^built$' "$T/out" || fail "behind.sh --await returned before the build ended: $(cat "$T/out")"
"$B" "$T/log" 'sleep 1; exit 5' "$B" --await "$T/log" >"$T/out" 2>&1 &&
	fail "behind.sh --await: a failed build passed"
grep -q 'the build writing .* failed (exit 5)' "$T/out" ||
	fail "behind.sh --await: the failure not named: $(cat "$T/out")"
# --await on a LOG no build writes: a clear failure after WT_AWAIT_SECONDS, not a hang
WT_AWAIT_SECONDS=1 timeout 20 "$B" --await "$T/none" >"$T/out" 2>&1
[ $? = 1 ] && grep -q 'no build behind wrote .*none.rc' "$T/out" ||
	fail "behind.sh --await without a build: $(cat "$T/out")"
echo "test_runner: ok"
