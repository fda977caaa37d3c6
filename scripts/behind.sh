#!/usr/bin/env bash
# behind.sh LOG 'BUILD COMMAND' CMD... — run CMD in the foreground while the
# build command (one shell string) runs behind it, in the background under the
# SCHED_IDLE policy (nice 19 where that cannot be set), its output into LOG;
# wait for both. Fails when either failed; a failed build's last lines are
# printed. `make test` builds the next sanitizer pass this way while a test
# pass runs: the tests wait on sockets and clocks much of the time, and the
# build takes only the CPU time they leave.
set -u
[ $# -ge 3 ] || {
	echo "usage: $0 LOG 'BUILD COMMAND' CMD..." >&2
	exit 2
}
log=$1
bg=$2
shift 2
(
	chrt --idle -p 0 "$BASHPID" >/dev/null 2>&1 || renice -n 19 -p "$BASHPID" >/dev/null 2>&1
	exec bash -c "$bg"
) >"$log" 2>&1 &
pid=$!
"$@"
rc=$?
wait "$pid"
brc=$?
if [ "$brc" != 0 ]; then
	echo "behind.sh: the build behind the tests failed (exit $brc): $bg; the last lines of $log:"
	tail -n 80 "$log"
fi
[ "$rc" = 0 ] && [ "$brc" = 0 ]
