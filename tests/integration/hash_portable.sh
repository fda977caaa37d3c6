#!/usr/bin/env bash
# common/hash.c builds without the x86-only dispatch entry points (issue 15,
# aarch64 Grace nodes): forced portable on this host (-DWT_HASH_PORTABLE) it
# references no *_dispatch symbol and gives the same digests as the default
# build; cross-compiled for aarch64 (gcc-aarch64-linux-gnu, scripts/deps.sh) it
# references the portable entry points only (xxhash.h is arch-independent:
# /usr/include after the cross sysroot). Without the cross compiler the
# aarch64 half is reported as skipped (exit 77), never as passed.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${WT_BUILD:-build}
CC=${CC:-cc}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FLAGS="-std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Iinclude -I. -I$BUILD/gen -DWT_BUILDING"
fail() { echo "FAIL: $*"; exit 1; }

dispatch_refs() { nm "$1" | grep -c '_dispatch' || true; }

# 1. the default x86 build uses the dispatch entry points (so the check below means something)
$CC $FLAGS -c common/hash.c -o "$T/hash_default.o"
[ "$(dispatch_refs "$T/hash_default.o")" -gt 0 ] || fail "default x86 build does not use XXH3 dispatch"
# 2. forced portable: no dispatch symbol, the plain entry points instead
$CC $FLAGS -DWT_HASH_PORTABLE -c common/hash.c -o "$T/hash_portable.o"
[ "$(dispatch_refs "$T/hash_portable.o")" = 0 ] || fail "WT_HASH_PORTABLE build still references *_dispatch"
nm "$T/hash_portable.o" | grep -q ' U XXH3_128bits_update$' || fail "portable build does not call XXH3_128bits_update"

# 3. the same digests: one-shot, streamed (hasher) and hash-while-copy, sizes around the pieces
cat > "$T/drv.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "common/common.h"
int main(void)
{
	size_t sizes[] = {0, 1, 16, 240, 241, 4096, (128u << 10) + 7, 3u << 20};
	size_t max = 3u << 20;
	unsigned char *a = malloc(max), *b = malloc(max);
	if (a == NULL || b == NULL)
		return 1;
	for (size_t i = 0; i < max; i++)
		a[i] = (unsigned char)(i * 2654435761u >> 13);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		wt_hash128 h1 = common_hash128(a, sizes[k]);
		wt_hash128 h2 = common_hash128_copy(b, a, sizes[k]);
		printf("%zu %016llx%016llx %016llx%016llx\n", sizes[k], (unsigned long long)h1.hi,
		       (unsigned long long)h1.lo, (unsigned long long)h2.hi, (unsigned long long)h2.lo);
	}
	free(a);
	free(b);
	return 0;
}
C
$CC $FLAGS -c "$T/drv.c" -o "$T/drv.o"
$CC -o "$T/drv_default" "$T/drv.o" "$T/hash_default.o" -lxxhash
$CC -o "$T/drv_portable" "$T/drv.o" "$T/hash_portable.o" -lxxhash
"$T/drv_default" > "$T/default.txt"
"$T/drv_portable" > "$T/portable.txt"
[ "$(wc -l < "$T/default.txt")" = 8 ] || fail "driver printed $(wc -l < "$T/default.txt") lines"
diff "$T/default.txt" "$T/portable.txt" || fail "portable digests differ from the dispatch build"
echo "ok: x86 dispatch and portable builds give the same digests"

# 4. aarch64: the module compiles for the target and uses the portable entry points
XCC=$(command -v aarch64-linux-gnu-gcc || true)
if [ -z "$XCC" ]; then
	echo "SKIP: aarch64-linux-gnu-gcc not installed (make deps installs gcc-aarch64-linux-gnu)"
	exit 77
fi
"$XCC" $FLAGS -idirafter /usr/include -c common/hash.c -o "$T/hash_arm64.o"
file "$T/hash_arm64.o" | grep -q 'ARM aarch64' || fail "not an aarch64 object: $(file "$T/hash_arm64.o")"
[ "$(dispatch_refs "$T/hash_arm64.o")" = 0 ] || fail "aarch64 build references the x86-only *_dispatch symbols"
nm "$T/hash_arm64.o" | grep -q ' U XXH3_128bits_update$' || fail "aarch64 build does not call XXH3_128bits_update"
echo "ok: common/hash.c cross-compiles for aarch64 with the portable entry points"
