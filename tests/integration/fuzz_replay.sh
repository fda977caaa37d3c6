#!/usr/bin/env bash
# fuzz_replay.sh — every fuzz target (tests/fuzz/fuzz_*.c) run over its seed
# corpus tests/fuzz/corpus/NAME by its replay binary ($WT_BUILD/tests/fuzz/NAME,
# tests/fuzz/replay.c): the hand-made valid inputs and every input a fuzzing
# run (make fuzz) once crashed on. Under build-asan (make asan) the same
# inputs run with ASan/UBSan. A target without a corpus, or a corpus without
# a binary, fails.
set -u
cd "$(dirname "$0")/../.."
B=${WT_BUILD:-build}
n=0
bad=0
for src in tests/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c)
	corpus=tests/fuzz/corpus/$name
	bin=$B/tests/fuzz/$name
	if [ ! -d "$corpus" ] || [ ! -x "$bin" ]; then
		echo "fuzz_replay.sh: FAIL: $name: corpus $corpus or binary $bin missing"
		bad=$((bad + 1))
		continue
	fi
	t0=$(date +%s%N)
	out=$(timeout 60 "$bin" "$corpus" 2>&1)
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	if [ "$rc" != 0 ]; then
		echo "fuzz_replay.sh: FAIL: $name (rc=$rc):"
		echo "$out" | tail -40
		bad=$((bad + 1))
	else
		echo "fuzz_replay.sh: $name: $(echo "$out" | grep "^replay: .* ok" | tail -1) (${ms} ms)"
	fi
	n=$((n + 1))
done
echo "fuzz_replay.sh: $n targets, $bad failed"
[ "$n" -gt 0 ] && [ "$bad" = 0 ]
