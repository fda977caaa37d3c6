#!/usr/bin/env bash
# Run every unit test binary, then every integration script; print one
# summary line "N passed, N failed, N skipped" at the end. Exit non-zero on
# any failure. A test that exits 77 (the automake convention) was skipped: it
# is counted and named as such, never as passed.
#
# Each test runs under a time limit (WT_TEST_TIMEOUT seconds, default 600): a
# hung test is killed, reported as failed with its elapsed time, and the
# suite goes on. Per-test wall times and CPU seconds (user + system of the test
# and every process it waited for) are printed so slow tests are visible, and at
# the end the pass's CPU in all and its heaviest tests (what a CI minute costs).
# Each test's output goes to a log first and is printed when it ends; the
# last lines of every failed test's log are printed again before the summary,
# so a CI report that keeps only the tail still shows why a test failed.
#
# The offline tests (OFFLINE below: no daemon, no socket, no clock in what
# they assert; CPU-bound) run in a background lane, WT_TEST_JOBS at a time
# (default: 2, or 1 on a one-core machine), under the SCHED_IDLE policy
# (nice 19 where it cannot be set): they take only the CPU time nothing else
# wants, and an offline test never delays a daemon, client or fault test.
# Every other test runs in the foreground meanwhile, WT_TEST_FG_JOBS at a time
# (default: 2, or 1 on a one-core machine), each reported when it ends: those
# tests wait on sockets and clocks most of the time (a pass's foreground took
# 312 s of wall time for 106 CPU-s one at a time, and each pass ended with it).
# WT_TEST_FG_JOBS=1 runs them one after another. The offline tests are reported
# after the others. WT_TEST_LANE=0 runs them first, in the foreground.
set -u
# (the tests do not inherit it: test_runner.sh runs this script itself)
then_cmd=${WT_TEST_THEN:-}
unset WT_TEST_THEN
BUILD=${BUILD:-build}
LIMIT=${WT_TEST_TIMEOUT:-600}
export WT_BUILD=$BUILD
# nng's own leak at socket close under load (see the file); harmless without ASan
here=$(cd "$(dirname "$0")/.." && pwd)
export LSAN_OPTIONS="suppressions=$here/tests/lsan.supp print_suppressions=0${LSAN_OPTIONS:+ $LSAN_OPTIONS}"
# (patterns: every reference and planner test but test_shardmap_plan, which
# runs threads on a clock)
OFFLINE=(test_config_sweep test_header_sweep 'test_reference*' test_fixtures
	'test_shardmap_*' test_checkpoint test_kernels test_kernels_mx ct_python.sh ct_moe.sh
	fixtures_python.sh shard_python.sh shard_cli.sh shard_memory.sh shard_all.sh verify_forward.sh
	experts_unstacked.sh)
NOT_OFFLINE=(test_shardmap_plan)
cores=$(nproc 2>/dev/null || echo 1)
JOBS=${WT_TEST_JOBS:-$([ "$cores" -ge 2 ] && echo 2 || echo 1)}
FG_JOBS=${WT_TEST_FG_JOBS:-$([ "$cores" -ge 2 ] && echo 2 || echo 1)}
case $FG_JOBS in '' | *[!0-9]* | 0)
	echo "run-tests.sh: WT_TEST_FG_JOBS must be a whole number >= 1, not '$FG_JOBS'" >&2
	exit 2 ;;
esac
pass=0
fail=0
skip=0
failed=""
skipped=""
cpu_total=0
logs=$(mktemp -d "${TMPDIR:-/tmp}/wt-tests.XXXXXX") || exit 1
trap 'rm -rf "$logs"' EXIT
n=0
failed_logs=""
declare -a cmd_of # test number -> command line

# Run test number $1 (command: the rest) into its log; its exit status and
# seconds into $logs/$1.rc.
run_to_log() {
	local k=$1 t0 rc
	shift
	t0=$(date +%s)
	# a file, not a pipe: a daemon a broken test leaves behind cannot hold the suite; the
	# subshell's `times` (second line: its children's user and system time) is the test's CPU
	(
		timeout --kill-after=10 "$LIMIT" "$@" >"$logs/$k.log" 2>&1
		rc=$?
		times >"$logs/$k.cpu" # not in a pipeline: that would be another subshell's
		exit "$rc"
	)
	rc=$?
	echo "$rc $(($(date +%s) - t0)) $(cpu_secs <"$logs/$k.cpu")" >"$logs/$k.rc"
}

# times' second line, "1m2.500s 0m0.250s" (children's user, system) -> "62.8" (their sum, s)
cpu_secs() {
	awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
	       printf "%.1f\n", t }'
}

# Print test number $1's log and result, and count it.
report() {
	local k=$1 rc secs cpu cmd=${cmd_of[$1]}
	read -r rc secs cpu <"$logs/$k.rc"
	cpu_total=$(awk -v a="$cpu_total" -v b="$cpu" 'BEGIN { printf "%.1f", a + b }')
	local name=${cmd##*/}
	case $cmd in "bash -c "*) name="(WT_TEST_THEN)" ;; esac
	echo "$cpu $name" >>"$logs/cpu.list"
	echo "== $cmd"
	cat "$logs/$k.log"
	[ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "!! $cmd timed out after ${LIMIT}s"
	echo "-- $cmd rc=$rc ${secs}s cpu ${cpu}s"
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1))
	elif [ "$rc" = 77 ]; then
		skip=$((skip + 1))
		skipped="$skipped $cmd"
	else
		fail=$((fail + 1))
		failed="$failed $cmd"
		failed_logs="$failed_logs $k:$(basename "${cmd##* }")"
	fi
}

offline() {
	local o b
	b=$(basename "$1")
	for o in "${NOT_OFFLINE[@]}"; do
		[ "$o" = "$b" ] && return 1
	done
	for o in "${OFFLINE[@]}"; do
		# shellcheck disable=SC2053 # a pattern on purpose
		[[ $b == $o ]] && return 0
	done
	return 1
}

tests=()
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] && tests+=("$t")
done
for t in tests/integration/*.sh; do
	[ -f "$t" ] && tests+=("bash $t")
done
# The offline lane: tests number $@ (cmd_of), JOBS at a time, logs and results
# into $logs; nothing is reported here (the foreground counts).
lane() {
	local k running=0
	for k in "$@"; do
		# shellcheck disable=SC2086 # "bash FILE" is two words on purpose
		run_to_log "$k" ${cmd_of[k]} &
		running=$((running + 1))
		if [ "$running" -ge "$JOBS" ]; then
			wait -n
			running=$((running - 1))
		fi
	done
	wait
}

ks=()
for t in "${tests[@]}"; do
	if offline "${t##* }"; then
		n=$((n + 1))
		cmd_of[n]="$t"
		ks+=("$n")
	fi
done
lane_pid=""
if [ "${WT_TEST_LANE:-1}" = 0 ]; then
	lane "${ks[@]}"
	for k in "${ks[@]}"; do report "$k"; done
elif [ "${#ks[@]}" -gt 0 ]; then
	(
		chrt --idle -p 0 "$BASHPID" >/dev/null 2>&1 ||
			renice -n 19 -p "$BASHPID" >/dev/null 2>&1
		lane "${ks[@]}"
	) &
	lane_pid=$!
fi
# The foreground: FG_JOBS tests at a time, each reported when it ends (fg_k: pid -> number).
declare -A fg_k=()
lane_done=0
# Wait for one foreground test to end and report it (the lane ending first is noted).
fg_reap() {
	local pid
	while :; do
		pid=""
		wait -n -p pid
		[ -z "$pid" ] && return 0 # no job left
		if [ "$pid" = "$lane_pid" ]; then
			lane_done=1
			continue
		fi
		[ -n "${fg_k[$pid]:-}" ] || continue
		report "${fg_k[$pid]}"
		unset "fg_k[$pid]"
		return 0
	done
}
fg_start() {
	while [ "${#fg_k[@]}" -ge "$FG_JOBS" ]; do fg_reap; done
	n=$((n + 1))
	cmd_of[n]="$*"
	run_to_log "$n" "$@" &
	fg_k[$!]=$n
}
for t in "${tests[@]}"; do
	# shellcheck disable=SC2086 # "bash FILE" is two words on purpose
	offline "${t##* }" || fg_start $t
done
# WT_TEST_THEN: one more foreground command (a shell string) after the foreground tests have
# started, while the lane still runs, counted as a test; make test runs the ThreadSanitizer
# pass so, during the ASan pass's lane (which ran about half a minute past the foreground
# tests, and the ThreadSanitizer pass after it left one core idle for two minutes).
if [ -n "$then_cmd" ]; then
	fg_start bash -c "$then_cmd"
fi
while [ "${#fg_k[@]}" -gt 0 ]; do fg_reap; done
if [ -n "$lane_pid" ]; then
	[ "$lane_done" = 1 ] || wait "$lane_pid"
	for k in "${ks[@]}"; do report "$k"; done
fi
for f in $failed_logs; do
	echo "---- the last 60 lines of ${f#*:} (failed) ----"
	tail -n 60 "$logs/${f%%:*}.log"
done
[ -n "$skipped" ] && echo "skipped:$skipped"
[ -n "$failed" ] && echo "failed:$failed"
label=suite
case "$BUILD" in *asan*) label=asan ;; esac
echo "$label: CPU ${cpu_total} s in all (user + system); the most:" \
	"$(sort -rn "$logs/cpu.list" | head -n 8 | awk '{ printf "%s%s %s s", (NR > 1 ? ", " : ""), $2, $1 }')"
echo "$label: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
