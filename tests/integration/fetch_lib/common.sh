# common.sh — sourced by tests/integration/fetch_*.sh: start/stop real weightd
# processes on 127.0.0.1 with a free port, fixtures, cleanup. Not a test itself.
set -u
B=${WT_BUILD:-build}
B=$(cd "$B" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-fetch-XXXXXX")
WD_PIDS=""

cleanup() {
	for p in $WD_PIDS; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	if [ -n "${WT_KEEP_TMP:-}" ]; then echo "kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT

die() {
	echo "$(basename "$0"): FAIL: $*" >&2
	exit 1
}

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
