#!/usr/bin/env bash
# san_runtime.sh — the build's programs carry the runtime the build promises. Under the
# sanitizer build (WT_BUILD naming asan: make asan) weightctl, weightd, wt-mkckpt, a unit test
# and a test tool start AddressSanitizer's runtime (ASAN_OPTIONS=help=1 makes it list its
# flags), carry UBSan's handlers, and have both linked in (no libasan.so / libubsan.so needed:
# the Makefile's EXE_SAN, a cheaper start for the thousands of programs the pass starts), while
# libweights.so needs them (a program that loads it brings the runtime). Under the normal
# build none carries them.
set -u
B=${WT_BUILD:-build}
fail() {
	echo "san_runtime.sh: FAIL: $*"
	exit 1
}
progs="$B/weightctl $B/weightd $B/wt-mkckpt $B/tests/test_cache $B/tests/tools/wt-faultyd"
for p in $progs; do
	[ -x "$p" ] || fail "$p is not built (make tests)"
done
case $B in
*asan*)
	for p in $progs; do
		ASAN_OPTIONS=help=1 "$p" --version 2>&1 | grep -q 'Available flags for AddressSanitizer' ||
			fail "$p does not start AddressSanitizer's runtime"
		nm "$p" | grep -q ' __ubsan_handle_' || fail "$p carries no UBSan handler"
		readelf -d "$p" | grep -E 'NEEDED.*lib(asan|ubsan)' &&
			fail "$p loads the sanitizer runtimes as shared libraries (Makefile EXE_SAN)"
	done
	readelf -d "$B/libweights.so" | grep -q 'NEEDED.*libasan' ||
		fail "$B/libweights.so does not need libasan.so"
	;;
*)
	for p in $progs "$B/libweights.so"; do
		nm -D "$p" 2>/dev/null | grep -qE ' (__asan_init|__ubsan_handle_)' && fail "$p uses a sanitizer"
		nm "$p" 2>/dev/null | grep -qE ' (__asan_init|__ubsan_handle_)' && fail "$p carries a sanitizer"
	done
	;;
esac
echo "san_runtime.sh: ok ($B)"
