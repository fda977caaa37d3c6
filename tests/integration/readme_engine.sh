#!/usr/bin/env bash
# readme_engine.sh — docs/engines.md ("Use from an engine", linked from the
# README): the C and C++ programs
# (the code block after each `<!-- readme-test: NAME -->` line) are extracted
# verbatim, built only with pkg-config's flags against a `make install
# DESTDIR=` tree (-Wall -Wextra -Werror), and run against a real weightd
# serving a fixture; their output must report the rank's tensor count and
# bytes as `weightctl fetch` of the same rank does. An edit that breaks an
# example, or drops one, fails here.
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
cd "$(dirname "$0")/../.." || exit 1
SAN=""
readelf -d "$B/libweights.so" | grep -q 'NEEDED.*libasan' && SAN="-fsanitize=address,undefined"

# extract NAME: the fenced block after the marker line, without the fences
extract() {
	awk -v name="$1" '
		$0 == "<!-- readme-test: " name " -->" { want = 1; next }
		want && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }' docs/engines.md >"$T/$1"
	[ -s "$T/$1" ] || die "docs/engines.md has no block after <!-- readme-test: $1 -->"
}
extract engine.c
extract engine.cpp
extract bcast.c

make -s -o all install BUILD="$B" DESTDIR="$T/root" PREFIX=/usr >"$T/make.out" 2>&1 ||
	{ cat "$T/make.out"; die "make install"; }
R=$T/root/usr
export PKG_CONFIG_LIBDIR="$R/lib/pkgconfig"
PC="pkg-config --define-prefix"
cflags=$($PC --cflags weights) && libs=$($PC --libs weights) || die "pkg-config weights"
STRICT="-Wall -Wextra -Werror"
# shellcheck disable=SC2086
cc -std=c11 $STRICT $SAN $cflags "$T/engine.c" $libs -o "$T/engine_c" 2>"$T/cc.err" ||
	{ cat "$T/cc.err"; die "docs/engines.md's C example does not build"; }
# shellcheck disable=SC2086
cc -std=c11 $STRICT $SAN $cflags "$T/bcast.c" $libs -o "$T/bcast_c" 2>"$T/cc.err" ||
	{ cat "$T/cc.err"; die "docs/engines.md's broadcast example does not build"; }
# shellcheck disable=SC2086
c++ -std=c++17 $STRICT $SAN $cflags "$T/engine.cpp" $libs -o "$T/engine_cpp" 2>"$T/cxx.err" ||
	{ cat "$T/cxx.err"; die "docs/engines.md's C++ example does not build"; }

mkdir -p "$T/models"
"$B/wt-mkckpt" --family llama --out "$T/models/llama" >/dev/null || die "wt-mkckpt llama"
start_weightd wd "$T/models" "$T/cache"

# what each rank holds, from weightctl (tensors, bytes)
rank_summary() {
	"$B/weightctl" fetch --endpoint "$WD_URL" --model llama --tp-size 2 --tp-rank "$1" \
		--out "$T/r$1.st" --quiet --verbose 2>&1 | grep -o '[0-9]* tensors, [0-9]* bytes'
}
want0=$(rank_summary 0) && want1=$(rank_summary 1) || die "weightctl fetch"
[ -n "$want0" ] && [ -n "$want1" ] || die "no summary from weightctl fetch"

LD_LIBRARY_PATH="$R/lib" "$T/engine_c" "$WD_URL" llama >"$T/c.out" 2>&1 ||
	{ cat "$T/c.out"; die "the C example failed"; }
cat "$T/c.out"
grep -q "^$want0; model.norm.weight: [1-9][0-9]* bytes at 0x" "$T/c.out" ||
	die "C example: want '$want0; model.norm.weight: ...', got: $(cat "$T/c.out")"
LD_LIBRARY_PATH="$R/lib" "$T/engine_cpp" "$WD_URL" llama >"$T/cpp.out" 2>&1 ||
	{ cat "$T/cpp.out"; die "the C++ example failed"; }
cat "$T/cpp.out"
grep -qx "$want1 in engine memory" "$T/cpp.out" ||
	die "C++ example: want '$want1 in engine memory', got: $(cat "$T/cpp.out")"
# the broadcast example: a root and two replicas over ipc, each holding rank 0
U="ipc://$T/bcast.ipc"
LD_LIBRARY_PATH="$R/lib" "$T/bcast_c" "$WD_URL" llama root "$U" 3 >"$T/b0.out" 2>&1 &
ROOT_PID=$!
REP_PIDS=""
for k in 1 2; do
	LD_LIBRARY_PATH="$R/lib" "$T/bcast_c" "$WD_URL" llama replica "$U" 3 >"$T/b$k.out" 2>&1 &
	REP_PIDS="$REP_PIDS $!"
done
wait "$ROOT_PID" || { cat "$T/b0.out"; die "the broadcast example's root failed"; }
for p in $REP_PIDS; do
	wait "$p" || { cat "$T/b1.out" "$T/b2.out"; die "a broadcast replica failed"; }
done
cat "$T/b0.out" "$T/b1.out" "$T/b2.out"
grep -qx "root: $want0" "$T/b0.out" || die "broadcast root: want 'root: $want0'"
for k in 1 2; do
	grep -qx "replica: $want0" "$T/b$k.out" || die "broadcast replica $k: want 'replica: $want0'"
done
# both fail cleanly (exit 1, a message) against a model that does not exist
LD_LIBRARY_PATH="$R/lib" "$T/engine_c" "$WD_URL" nosuch >/dev/null 2>"$T/e.err" && die "C: nosuch succeeded"
grep -q WT_ENOTFOUND "$T/e.err" || grep -q "nosuch" "$T/e.err" || die "C: no error named: $(cat "$T/e.err")"
LD_LIBRARY_PATH="$R/lib" "$T/engine_cpp" "$WD_URL" nosuch >/dev/null 2>"$T/e.err" && die "C++: nosuch succeeded"
grep -q "nosuch.*(WT_ENOTFOUND)" "$T/e.err" || die "C++: no weights::Error: $(cat "$T/e.err")"
stop_weightd "$WD_PID"
echo "readme_engine.sh: ok"
