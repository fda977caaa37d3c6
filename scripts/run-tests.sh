#!/usr/bin/env bash
# Run every unit test binary, then every integration script; print one
# summary line "N passed, N failed" at the end. Exit non-zero on any failure.
set -u
BUILD=${BUILD:-build}
export WT_BUILD=$BUILD
pass=0
fail=0
failed=""
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	echo "== $t"
	if "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed="$failed $t"; fi
done
for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	echo "== $t"
	if bash "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed="$failed $t"; fi
done
[ -n "$failed" ] && echo "failed:$failed"
label=suite; case "$BUILD" in *asan*) label=asan ;; esac
echo "$label: $pass passed, $fail failed"
[ "$fail" = 0 ]
