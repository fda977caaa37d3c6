# common.sh — sourced by tests/integration/fetch_*.sh: start/stop real weightd
# processes on 127.0.0.1 with a free port, fixtures, cleanup. Not a test itself.
set -u
B=${WT_BUILD:-build}
B=$(cd "$B" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-fetch-XXXXXX")
WD_PIDS=""

cleanup() {
	[ -n "${WATCHDOG_PID:-}" ] && kill "$WATCHDOG_PID" 2>/dev/null
	for p in $WD_PIDS; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	if [ -n "${WT_KEEP_TMP:-}" ]; then echo "kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT

die() {
	echo "$(basename "$0"): FAIL: $*" >&2
	exit 1
}

# step TEXT: what the script does now, for the watchdog's report (a builtin: no process)
step() { echo "$*" >"$T/step"; }

# The watchdog: a script still running after WT_WATCHDOG_S seconds (default 300: the slowest,
# fetch_equivalence.sh, takes 40-80 s; the suite kills a test at 600 s and then shows only its
# log) reports where it is stuck: the last `step`, the thread stacks of its daemons and of the
# command it waits for (where gdb is installed), the tail of every daemon log. It then kills
# that command (not the daemons), so the script fails with the report and its own message.
# (fetch_equivalence.sh once reached the suite's limit on 8 s of CPU, with nothing to show why.)
watchdog_report() { # MAIN_PID LIMIT
	local main=$1 limit=$2 me=$BASHPID p kids
	echo "$(basename "$0"): WATCHDOG: still running after $limit s; last step:" \
		"$(cat "$T/step" 2>/dev/null || echo '(none)')" >&2
	kids=$(cat /proc/"$main"/task/*/children 2>/dev/null)
	kids=$(for p in $kids; do [ "$p" = "$me" ] || echo "$p"; done)
	for p in $kids; do
		echo "== pid $p: $({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | cut -c1-300)" >&2
		command -v gdb >/dev/null &&
			timeout 60 gdb -p "$p" -batch -ex "thread apply all bt 12" 2>&1 |
			grep -E "^Thread|^#" | cut -c1-200 | head -n 400 >&2
	done
	for p in "$T"/*.log; do
		[ -e "$p" ] || continue
		echo "== $p (last 40 lines)" >&2
		tail -n 40 "$p" >&2
	done
	for p in $kids; do
		grep -qx "$p" "$T/daemons" 2>/dev/null || kill -9 "$p" 2>/dev/null
	done
}
watchdog_start() {
	local limit=${WT_WATCHDOG_S:-300} main=$$
	(
		sleep "$limit" &
		s=$!
		trap 'kill $s 2>/dev/null; exit 0' TERM
		wait "$s"
		watchdog_report "$main" "$limit"
	) &
	WATCHDOG_PID=$!
}
watchdog_start

need_bins() {
	for b in weightd weightctl wt-mkckpt; do
		[ -x "$B/$b" ] || die "$B/$b not built"
	done
}

# start_weightd NAME MODELS_DIR CACHE_DIR [URL] [extra flags...]
# Sets WD_PID and WD_URL. URL defaults to tcp://127.0.0.1:0 (a free port).
# WD_BIN (optional) replaces "$B/weightd" as the daemon command; WD_LOG_LEVEL
# (optional) its --log-level (default warning).
start_weightd() {
	local name=$1 models=$2 cache=$3 url=${4:-tcp://127.0.0.1:0}
	shift 4 2>/dev/null || shift $#
	local ready="$T/$name.ready"
	rm -f "$ready"
	# WD_BIN: another daemon command (tests/tools/wt-faultyd ...); word-split on purpose
	${WD_BIN:-"$B/weightd"} --listen "$url" --models-dir "$models" --cache-dir "$cache" --workers 2 \
		--log-level "${WD_LOG_LEVEL:-warning}" --ready-file "$ready" "$@" 2>>"$T/$name.log" &
	WD_PID=$!
	WD_PIDS="$WD_PIDS $WD_PID"
	echo "$WD_PID" >>"$T/daemons" # for the watchdog, a subshell that started before
	for _ in $(seq 1 300); do
		if [ -s "$ready" ]; then
			WD_URL=$(head -n1 "$ready")
			return 0
		fi
		kill -0 "$WD_PID" 2>/dev/null || { cat "$T/$name.log" >&2; die "weightd $name exited"; }
		sleep 0.05
	done
	cat "$T/$name.log" >&2
	die "weightd $name not ready after 15 s"
}

stop_weightd() { # PID
	kill -TERM "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}
