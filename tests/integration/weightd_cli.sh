#!/usr/bin/env bash
# weightd as a process: exit 2 with file:line on bad configuration, the test
# no fault-injection flag, --help lists the flags, the
# readiness line and ready file, the embedded defaults (./models,
# ./weightd-cache, tcp://127.0.0.1:7450 unless taken), SIGTERM/SIGINT -> exit 0.
set -u
B=$(cd "${WT_BUILD:-build}" && pwd)
D=$B/weightd
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-wdcli-XXXXXX")
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "weightd_cli.sh: FAIL: $*"; [ -f "$T/err" ] && cat "$T/err"; exit 1; }

# bad flags / config -> exit 2 with the place named
"$D" --workers 0 2>"$T/err"; rc=$?
[ $rc = 2 ] || fail "--workers 0: exit $rc"
grep -q -- "--workers: workers 0 is out of range" "$T/err" || fail "--workers message"
printf 'workers = 2\nno_such_key = 1\n' >"$T/bad.conf"
"$D" --config "$T/bad.conf" 2>"$T/err"; rc=$?
[ $rc = 2 ] || fail "unknown key: exit $rc"
grep -q "$T/bad.conf:2: unknown key 'no_such_key'" "$T/err" || fail "file:line message"
# the daemon carries no fault injection (tests use build/tests/tools/wt-faultyd)
WEIGHTD_TEST_HOOKS=1 "$D" --test-corrupt-chunk 1 2>"$T/err"; rc=$?
[ $rc = 2 ] || fail "old test hook flag: exit $rc"
grep -q "unknown flag" "$T/err" || fail "old test hook flag message: $(cat "$T/err")"
"$D" --help | grep -q -- "--cache-max-bytes" || fail "--help"
"$D" --cache-reclaim-ratio 0.5 2>"$T/err"; rc=$?
[ $rc = 2 ] || fail "--cache-reclaim-ratio 0.5: exit $rc"
grep -q -- "--cache-reclaim-ratio: cache_reclaim_ratio 0.5 must be above 1" "$T/err" ||
	fail "--cache-reclaim-ratio message: $(cat "$T/err")"
"$D" --cache-reclaim-ratio 1.5x 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q "is not a decimal number" "$T/err" || fail "--cache-reclaim-ratio 1.5x"

# starts that fail before the models are open: the message, an exit code
# (not a crash in the shutdown of what did not start)
"$D" --models-dir "$T/no-such-dir" --cache-dir "$T/cache3" 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q "models_dir $T/no-such-dir" "$T/err" || fail "missing models_dir: exit $rc"
"$D" --cache-dir /proc/no-such-dir/c --pid-file "$T/pid0" 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "cache_dir /proc/no-such-dir/c" "$T/err" || fail "bad cache_dir: exit $rc"
# a failed start leaves no pid file naming its dead process
[ ! -e "$T/pid0" ] || fail "a failed start left its pid file ($(cat "$T/pid0"))"
# cache_dir inside models_dir (here through a symlink): listed as a model that
# never opened; refused before the cache is created
mkdir -p "$T/nest/models" && ln -s "$T/nest/models" "$T/nest/link"
timeout 10 "$D" --listen "ipc://$T/nest.sock" --models-dir "$T/nest/models" --cache-dir "$T/nest/link/cache" 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q "is inside models_dir $T/nest/models" "$T/err" &&
	[ ! -e "$T/nest/models/cache" ] || fail "cache_dir in models_dir: exit $rc $(cat "$T/err")"
# server_id: control characters went out in HelloReply (and clients' logs)
timeout 10 "$D" --listen "ipc://$T/sid.sock" --server-id "$(printf 'a\033[2Jb')" 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q -- "--server-id: server_id holds byte 0x1b" "$T/err" ||
	fail "--server-id with ESC: exit $rc $(cat "$T/err")"

# start with a ready file on a kernel-chosen port; wait for readiness
mkdir -p "$T/models"
echo 1 >"$T/pid" # left by a daemon that died: nobody holds it, it is taken over
(cd "$T" && exec "$D" --listen tcp://127.0.0.1:0 --listen "ipc://$T/w.sock" \
	--ready-file "$T/ready" --pid-file "$T/pid" --cache-max-bytes 16M 2>"$T/err") &
pid=$!
for _ in $(seq 100); do [ -s "$T/ready" ] && break; sleep 0.05; done
[ -s "$T/ready" ] || fail "no ready file"
grep -q "^tcp://127.0.0.1:[1-9][0-9]*$" "$T/ready" || fail "ready file: $(cat "$T/ready")"
grep -q "^ipc://$T/w.sock$" "$T/ready" || fail "ready file lacks the ipc URL"
grep -q "weightd: listening on tcp://127.0.0.1:" "$T/err" || fail "no readiness line"
[ "$(cat "$T/pid")" = "$pid" ] || fail "pid file"
# a second daemon given the same pid_file (its own cache and URL) is refused
# before it touches the file: it overwrote the running daemon's pid (and, had
# its start failed, left its own dead one there)
timeout 10 "$D" --listen "ipc://$T/w9.sock" --cache-dir "$T/cache9" --models-dir "$T/models" \
	--pid-file "$T/pid" 2>"$T/err9"; rc=$?
[ $rc = 1 ] || fail "second daemon on the pid file: exit $rc: $(cat "$T/err9")"
grep -q "pid_file $T/pid is held by a running weightd (pid $pid)" "$T/err9" ||
	fail "second daemon on the pid file: message $(cat "$T/err9")"
[ "$(cat "$T/pid")" = "$pid" ] || fail "pid file overwritten: $(cat "$T/pid"), want $pid"
[ -d "$T/weightd-cache" ] || fail "default cache dir ./weightd-cache not created"
# a second daemon on the same port fails to start: exit 1, the URL named
url=$(head -1 "$T/ready")
"$D" --listen "$url" --cache-dir "$T/cache2" --models-dir "$T/models" 2>"$T/err2"; rc=$?
[ $rc = 1 ] || fail "port in use: exit $rc"
grep -q "listen $url" "$T/err2" || fail "port in use: message $(cat "$T/err2")"
kill -TERM "$pid"; wait "$pid"; rc=$?; pid=""
[ $rc = 0 ] || fail "SIGTERM: exit $rc"
[ ! -e "$T/pid" ] || fail "pid file left behind"

# SIGHUP: reload-safe keys apply, others are reported as needing a restart,
# a broken file keeps the running configuration
printf 'log_level = notice\nworkers = 2\n' >"$T/w.conf"
(cd "$T" && exec "$D" --config "$T/w.conf" --listen "ipc://$T/w3.sock" \
	--ready-file "$T/ready3" 2>"$T/err") &
pid=$!
for _ in $(seq 100); do [ -s "$T/ready3" ] && break; sleep 0.05; done
[ -s "$T/ready3" ] || fail "reload: no ready file"
printf 'log_level = debug\nworkers = 3\nrevalidate_ms = 50\n' >"$T/w.conf"
kill -HUP "$pid"
for _ in $(seq 100); do grep -q "settings differ" "$T/err" && break; sleep 0.05; done
grep -q "reload: log_level changed" "$T/err" || fail "reload: log_level"
grep -q "reload: revalidate_ms changed" "$T/err" || fail "reload: revalidate_ms"
grep -q "reload: workers changed but is not reload-safe" "$T/err" || fail "reload: workers"
grep -q "reload: 3 settings differ" "$T/err" || fail "reload: count"
printf 'workers = 0\n' >"$T/w.conf"
kill -HUP "$pid"
for _ in $(seq 100); do grep -q "keeping the running" "$T/err" && break; sleep 0.05; done
grep -q "w.conf:1: workers 0 is out of range.*keeping the running configuration" "$T/err" ||
	fail "reload: bad file"
kill -TERM "$pid"; wait "$pid"; rc=$?; pid=""
[ $rc = 0 ] || fail "after reloads: exit $rc"

# a SIGHUP whose rescan opens a new folder slowly (each read of 1 MiB or more of
# it waits 1 s: a slow network file system, by LD_PRELOAD) holds no SIGTERM
# back: the rescan runs on a thread of its own and a stop cancels its open
# (it ran on the signal thread: the stop waited for the whole digest)
if command -v cc >/dev/null; then
	cat >"$T/slow.c" <<'SHIM'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, void *, size_t, off_t);
	if (!real)
		real = (ssize_t(*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
	char p[64], t[4096];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	ssize_t k = readlink(p, t, sizeof t - 1);
	if (k > 0 && n >= (1u << 20)) {
		t[k] = 0;
		if (strstr(t, "/slowbig/"))
			sleep(1);
	}
	return real(fd, buf, n, off);
}
ssize_t pread64(int fd, void *buf, size_t n, off_t off) { return pread(fd, buf, n, off); }
SHIM
	cc -shared -fPIC -o "$T/slow.so" "$T/slow.c" -ldl || fail "cc: the slow-read shim"
	mkdir -p "$T/hupm"
	# (an ASan build wants its runtime first in the library list: told not to check)
	(cd "$T" && LD_PRELOAD="$T/slow.so" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		exec "$D" --listen "ipc://$T/w4.sock" \
		--models-dir "$T/hupm" --cache-dir "$T/cache4" --ready-file "$T/ready4" 2>"$T/err4") &
	pid=$!
	for _ in $(seq 100); do [ -s "$T/ready4" ] && break; sleep 0.05; done
	[ -s "$T/ready4" ] || fail "slow rescan: no ready file"
	"$B/wt-mkckpt" --family llama --size-mb 256 --out "$T/hupm/slowbig" >/dev/null ||
		fail "wt-mkckpt slowbig"
	kill -HUP "$pid"
	sleep 1.5
	t0=$(date +%s%N)
	kill -TERM "$pid"; wait "$pid"; rc=$?; pid=""
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "SIGTERM during a slow rescan: exit $rc after $ms ms"
	[ $rc = 0 ] || fail "slow rescan: exit $rc: $(tail -3 "$T/err4")"
	[ "$ms" -lt 3000 ] || fail "slow rescan: the stop took $ms ms: $(tail -3 "$T/err4")"

	# a SIGTERM during start-up (the same model read at start, into a new
	# cache) stops the start at once, exit 0, pid file removed: the signals were
	# blocked until weightd listened, so a stop waited for the whole digest
	(cd "$T" && LD_PRELOAD="$T/slow.so" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		exec "$D" --listen "ipc://$T/w5.sock" --models-dir "$T/hupm" --cache-dir "$T/cache5" \
		--ready-file "$T/ready5" --pid-file "$T/pid5" 2>"$T/err5") &
	pid=$!
	for _ in $(seq 100); do [ -s "$T/pid5" ] && break; sleep 0.05; done
	sleep 1.5
	[ ! -e "$T/ready5" ] || fail "start-up stop: ready before the slow model opened"
	t0=$(date +%s%N)
	kill -TERM "$pid"; wait "$pid"; rc=$?; pid=""
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "SIGTERM during start-up: exit $rc after $ms ms"
	[ $rc = 0 ] || fail "start-up stop: exit $rc: $(tail -3 "$T/err5")"
	[ "$ms" -lt 3000 ] || fail "start-up stop: the stop took $ms ms: $(tail -3 "$T/err5")"
	grep -q "SIGTERM during start-up" "$T/err5" || fail "start-up stop: not logged: $(cat "$T/err5")"
	[ ! -e "$T/pid5" ] || fail "start-up stop: pid file left"
else
	echo "skip: no cc for the slow-read shim"
fi

# the same cache reopens; SIGINT also exits 0; admin reclaim and the disk bytes in stats
(cd "$T" && exec "$D" --listen "ipc://$T/w2.sock" --ready-file "$T/ready2" \
	--cache-reclaim-ratio 2.25 2>"$T/err") &
pid=$!
for _ in $(seq 100); do [ -s "$T/ready2" ] && break; sleep 0.05; done
[ -s "$T/ready2" ] || fail "second start: no ready file"
C=$B/weightctl
"$C" admin --endpoint "ipc://$T/w2.sock" reclaim >"$T/rc.txt" || fail "admin reclaim: $(cat "$T/rc.txt")"
grep -q "^reclaim: [0-9]* -> [0-9]* bytes on disk (0 live chunk bytes)" "$T/rc.txt" ||
	fail "admin reclaim text: $(cat "$T/rc.txt")"
grep -q "^disk_before=[0-9]* disk_after=[0-9]* live=0 rewritten=0$" "$T/rc.txt" ||
	fail "admin reclaim numbers: $(cat "$T/rc.txt")"
grep -q "admin: reclaim: " "$T/err" || fail "admin reclaim not logged"
"$C" admin --endpoint "ipc://$T/w2.sock" reclaim --model x 2>"$T/rc.err"; rc=$?
[ $rc = 2 ] && grep -q "reclaim works on the whole cache" "$T/rc.err" || fail "reclaim --model: exit $rc"
"$C" admin --endpoint "ipc://$T/w2.sock" stats >"$T/st.txt" || fail "admin stats"
grep -q "bytes ([0-9]* on disk)" "$T/st.txt" && grep -q " disk=[0-9]*$" "$T/st.txt" ||
	fail "admin stats: no disk bytes: $(cat "$T/st.txt")"
kill -INT "$pid"; wait "$pid"; rc=$?; pid=""
[ $rc = 0 ] || fail "SIGINT: exit $rc"
echo "weightd_cli.sh: ok"
