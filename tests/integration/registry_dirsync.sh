#!/usr/bin/env bash
# registry_dirsync.sh — a registration is saved with an atomic rename and then a
# folder fsync; when that fsync fails (a failing disk; some FUSE and network
# file systems answer EINVAL), the file already holds the new line, so the
# registration stands (answered OK, a warning logged) and is there after a
# restart. It used to answer an error and drop the model in memory while the
# file kept it: registered again after the restart ('ghost').
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
command -v cc >/dev/null || { echo "registry_dirsync.sh: skip (no cc)"; exit 0; }
cat >"$T/faildirsync.c" <<'SHIM'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
int fsync(int fd)
{
	static int (*real)(int);
	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	struct stat st;
	const char *flag = getenv("WT_FAIL_DIRSYNC"); /* while that file exists */
	if (flag && access(flag, F_OK) == 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		errno = EIO;
		return -1;
	}
	return real(fd);
}
SHIM
cc -shared -fPIC -o "$T/faildirsync.so" "$T/faildirsync.c" -ldl || die "cc: the shim"
mkdir -p "$T/models" "$T/src"
"$B/wt-mkckpt" --family llama --out "$T/src/ghost" >/dev/null || die "mkckpt"
# (an ASan build wants its runtime first in the library list: told not to check)
WD_BIN="env LD_PRELOAD=$T/faildirsync.so WT_FAIL_DIRSYNC=$T/FAIL \
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 $B/weightd" \
	start_weightd A "$T/models" "$T/cache" tcp://127.0.0.1:0 --register-roots "$T/src"
touch "$T/FAIL" # from now on a folder fsync fails (RocksDB's open went before)
"$B/weightctl" admin --endpoint "$WD_URL" register --model ghost --uri "file://$T/src/ghost" \
	>"$T/reg.out" 2>&1
rc=$?
rm -f "$T/FAIL"
[ $rc = 0 ] || die "register with a failing folder fsync: exit $rc: $(cat "$T/reg.out")"
grep -q "crash now may bring back the old one" "$T/A.log" || die "no warning: $(cat "$T/A.log")"
"$B/weightctl" models --endpoint "$WD_URL" | grep -q "^ghost" || die "ghost not served"
stop_weightd "$WD_PID"
grep -q "^ghost=" "$T/cache/registered-models" || die "not in the registry file"
start_weightd B "$T/models" "$T/cache" tcp://127.0.0.1:0 --register-roots "$T/src"
"$B/weightctl" models --endpoint "$WD_URL" | grep -q "^ghost" || die "ghost gone after a restart"
echo "registry_dirsync.sh: ok"
