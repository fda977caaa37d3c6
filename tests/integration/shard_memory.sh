#!/usr/bin/env bash
# shard_memory.sh — `weightctl shard` writes each tensor at its place in the
# file as it is produced (client/weightctl/cmd_shard.c, st_writer_open_at), so
# its peak RSS stays far below the checkpoint it shards: a 128 MiB llama
# written whole (TP 1) and quantized (fp8-block) on one thread peaks under half of it (every
# tensor was held until the end before: 606 MiB for a 516 MiB shard; here 159
# and 99 MiB; now about 30).
# The bytes are those of `weightctl fetch` (fetch_equivalence.sh) and of the
# sequential writer (test_safetensors). Peak RSS by Python's resource module;
# skipped under a sanitizer build (its shadow memory is not the command's).
set -u
B=${WT_BUILD:-build}
case "$B" in
*asan* | *tsan*)
	echo "shard_memory.sh: SKIPPED: $B is a sanitizer build (RSS includes its shadow memory)"
	exit 77
	;;
esac
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-shardmem-XXXXXX")
trap 'rm -rf "$T"' EXIT
die() {
	echo "shard_memory.sh: FAIL: $*" >&2
	exit 1
}
"$B/wt-mkckpt" --family llama --size-mb 128 --out "$T/m" >/dev/null || die "wt-mkckpt"
# peak RSS (KiB) of the command after --
peak() {
	python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
sys.exit(r.returncode) if r.returncode else print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
' "$@"
}
# one production thread (each holds its own buffers); three give the same bytes
for q in fp8-block none; do
	kb=$(peak "$B/weightctl" shard --model-dir "$T/m" --quant "$q" --threads 1 --out "$T/s.st") ||
		die "weightctl shard --quant $q failed"
	"$B/weightctl" shard --model-dir "$T/m" --quant "$q" --threads 3 --out "$T/s3.st" ||
		die "weightctl shard --quant $q --threads 3 failed"
	cmp -s "$T/s.st" "$T/s3.st" || die "--quant $q: --threads 3 wrote other bytes than --threads 1"
	bytes=$(stat -c %s "$T/s.st")
	[ "$kb" -lt $((64 << 10)) ] ||
		die "--quant $q: peak RSS $((kb / 1024)) MiB sharding a 128 MiB checkpoint (want under 64; shard $((bytes >> 20)) MiB)"
	echo "shard_memory.sh: --quant $q: peak RSS $((kb / 1024)) MiB, shard $((bytes >> 20)) MiB"
done
echo "shard_memory.sh: ok"
