#!/usr/bin/env bash
# headers.sh — every header of the tree compiles on its own and included twice
# (include guards close at the end, no definitions outside them), with the
# project's warnings as errors. A header that needs another to come first, or
# whose guard ends early (weightd_int.h once declared enums after its #endif),
# fails here.
set -u
cd "$(dirname "$0")/../.."
B=${WT_BUILD:-build}
[ -f "$B/gen/proto/weights.pb-c.h" ] || { echo "headers.sh: FAIL: build first ($B/gen missing)"; exit 1; }
CUDA_INC=""
for d in /usr/local/cuda/include; do [ -d "$d" ] && CUDA_INC="-I$d"; done
n=0
bad=0
for h in $(git ls-files '*.h' | grep -v '^tests/'); do
	out=$(printf '#include "%s"\n#include "%s"\n' "$h" "$h" |
		cc -std=c11 -D_GNU_SOURCE -DWT_BUILDING -Wall -Wextra -Werror -Wshadow \
			-Wstrict-prototypes -Wno-missing-field-initializers -Wno-unused-function \
			-Iinclude -I. -I"$B/gen" $CUDA_INC -fsyntax-only -x c - 2>&1)
	if [ $? -ne 0 ]; then
		echo "headers.sh: $h:"
		echo "$out" | head -5
		bad=$((bad + 1))
	fi
	n=$((n + 1))
done
echo "headers.sh: $n headers, $bad failed"
[ "$bad" = 0 ] && echo "headers: ok"
[ "$bad" = 0 ]
