#!/usr/bin/env bash
# test_runner.sh — the suite's own runner and make test's build helper, on fake
# tests in a temp folder: scripts/run-tests.sh counts an offline test that fails
# (background lane) as failed, prints its log's tail and exits non-zero, counts a
# skip (77) as skipped, in both WT_TEST_LANE modes, runs WT_TEST_FG_JOBS foreground
# tests side by side (one at a time at 1); scripts/tsan-run.sh passes nng's reports
# only and runs WT_TSAN_JOBS side by side; scripts/behind.sh fails when
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
# WT_TEST_FG_JOBS: two foreground tests that each wait for the other to start both pass
# at 2 (run side by side, each reported), and time out waiting at 1 (one after another)
mkdir -p "$T/p/b/tests" "$T/p/tests/integration"
for me in a b; do
	other=$([ "$me" = a ] && echo b || echo a)
	cat >"$T/p/b/tests/test_meet_$me" <<EOF
#!/bin/sh
touch "$T/p/on_$me"; i=0
while [ ! -f "$T/p/on_$other" ]; do
	[ \$i -ge 40 ] && { echo no-$other; exit 1; }
	i=\$((i + 1)); sleep 0.1
done
echo met-$other
EOF
done
chmod +x "$T"/p/b/tests/*
out=$(cd "$T/p" && WT_TEST_FG_JOBS=2 BUILD=b bash "$HERE/scripts/run-tests.sh" 2>&1)
grep -q '^met-a$' <<<"$out" && grep -q '^met-b$' <<<"$out" && grep -q '^suite: 2 passed, 0 failed, 0 skipped$' <<<"$out" ||
	fail "WT_TEST_FG_JOBS=2: the foreground tests did not run side by side: $out"
rm -f "$T/p/on_a" "$T/p/on_b"
out=$(cd "$T/p" && WT_TEST_FG_JOBS=1 BUILD=b bash "$HERE/scripts/run-tests.sh" 2>&1)
grep -q '^suite: 1 passed, 1 failed, 0 skipped$' <<<"$out" ||
	fail "WT_TEST_FG_JOBS=1: the foreground tests ran side by side: $(tail -n 3 <<<"$out")"
(cd "$T/p" && WT_TEST_FG_JOBS=x BUILD=b bash "$HERE/scripts/run-tests.sh" >"$T/out" 2>&1)
[ $? = 2 ] && grep -q 'WT_TEST_FG_JOBS must be a whole number' "$T/out" ||
	fail "WT_TEST_FG_JOBS=x: not refused: $(cat "$T/out")"
# scripts/tsan-run.sh: a ThreadSanitizer report of ours or a test's own failure fails the run,
# nng's are named and passed; WT_TSAN_JOBS=2 runs two side by side (the pair above meets)
mkdir -p "$T/ts/tests"
cp "$T"/p/b/tests/test_meet_* "$T/ts/tests/"
printf '#!/bin/sh\necho "SUMMARY: ThreadSanitizer: data race /x/libnng.so in nni_f"\n' >"$T/ts/tests/test_nng"
printf '#!/bin/sh\necho "WARNING: ThreadSanitizer: data race"\necho "SUMMARY: ThreadSanitizer: data race a.c:1 in f"\n' \
	>"$T/ts/tests/test_race"
printf '#!/bin/sh\necho own-failure; exit 3\n' >"$T/ts/tests/test_fails"
chmod +x "$T"/ts/tests/*
rm -f "$T/p/on_a" "$T/p/on_b"
WT_TSAN_JOBS=2 "$HERE/scripts/tsan-run.sh" "$T/ts" test_meet_a test_meet_b test_nng >"$T/out" 2>&1 ||
	fail "tsan-run.sh: two tests side by side and nng's report: $(cat "$T/out")"
grep -q '^tsan: test_meet_a ok' "$T/out" && grep -q '^tsan: test_nng ok ([0-9]* s) (1 nng-internal' "$T/out" ||
	fail "tsan-run.sh: verdicts: $(cat "$T/out")"
WT_TSAN_JOBS=2 "$HERE/scripts/tsan-run.sh" "$T/ts" test_race test_nng test_fails >"$T/out" 2>&1 &&
	fail "tsan-run.sh: a report of ours and a failing test passed: $(cat "$T/out")"
grep -q '^tsan: test_race FAILED (exit 0, 1 report(s)' "$T/out" && grep -q '^WARNING: ThreadSanitizer' "$T/out" &&
	grep -q '^tsan: test_fails FAILED (exit 3, 0 report(s)' "$T/out" && grep -q '^own-failure$' "$T/out" ||
	fail "tsan-run.sh: failures not named with their evidence: $(cat "$T/out")"
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
