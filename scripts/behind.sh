#!/usr/bin/env bash
# behind.sh LOG 'BUILD COMMAND' CMD... — run CMD in the foreground while the
# build command (one shell string) runs behind it, in the background under the
# SCHED_IDLE policy (nice 19 where that cannot be set), its output into LOG;
# wait for both. Fails when either failed; a failed build's last lines are
# printed. `make test` builds the next sanitizer pass this way while a test
# pass runs: the tests wait on sockets and clocks much of the time, and the
# build takes only the CPU time they leave. The build's exit status goes to
# LOG.rc when it ends, so that CMD can wait for it:
# behind.sh --await LOG — wait until the build behind that writes LOG has ended;
# exit 0 when it succeeded, 1 (naming LOG) when it failed or when no status came
# within WT_AWAIT_SECONDS (default 1800: no build behind writes LOG).
set -u
if [ "${1:-}" = --await ] && [ $# = 2 ]; then
	waited=0
	until [ -s "$2.rc" ]; do
		if [ "$waited" -ge "${WT_AWAIT_SECONDS:-1800}" ]; then
			echo "behind.sh: no build behind wrote $2.rc within ${waited} s" >&2
			exit 1
		fi
		sleep 1
		waited=$((waited + 1))
	done
	[ "$(cat "$2.rc")" = 0 ] && exit 0
	echo "behind.sh: the build writing $2 failed (exit $(cat "$2.rc"))" >&2
	exit 1
fi
[ $# -ge 3 ] || {
	echo "usage: $0 LOG 'BUILD COMMAND' CMD... | $0 --await LOG" >&2
	exit 2
}
log=$1
bg=$2
shift 2
rm -f "$log.rc"
(
	chrt --idle -p 0 "$BASHPID" >/dev/null 2>&1 || renice -n 19 -p "$BASHPID" >/dev/null 2>&1
	bash -c "$bg"
	rc=$?
	echo "$rc" >"$log.rc"
	exit "$rc"
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
