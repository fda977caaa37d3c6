#!/usr/bin/env bash
# shard_all.sh — `weightctl shard --out-dir DIR`: every rank of a layout in one
# pass over the checkpoint, DIR/tpR-epE.safetensors, each file byte-identical to
# `weightctl shard --out` of that rank (dense, MoE with TP x EP, expert stacks
# transposed and dequantized, block FP8 sources; quantized and not); the flag
# refusals (with a rank flag, with --out, no output, DIR a file) exit 2 / 1
# naming the fix; SIGTERM while the files are written leaves no file behind.
set -u
B=${WT_BUILD:-build}
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-shardall-XXXXXX")
trap 'rm -rf "$T"' EXIT
die() {
	echo "shard_all.sh: FAIL: $*" >&2
	exit 1
}
for f in llama mixtral gpt_oss llama4_text deepseek_v3; do
	"$B/wt-mkckpt" --family "$f" --out "$T/$f" >/dev/null || die "wt-mkckpt $f"
done
n=0
# check FAMILY TP EP [FLAGS...]
check() {
	local fam=$1 tp=$2 ep=$3 r e d="$T/out-$1-$2-$3"
	shift 3
	rm -rf "$d"
	"$B/weightctl" shard --model-dir "$T/$fam" --tp-size "$tp" --ep-size "$ep" "$@" \
		--out-dir "$d" 2>"$T/err" || die "$fam tp $tp ep $ep $*: --out-dir: $(cat "$T/err")"
	[ "$(find "$d" -type f | wc -l)" = $((tp * ep)) ] ||
		die "$fam tp $tp ep $ep: want $((tp * ep)) files, got: $(ls "$d")"
	for e in $(seq 0 $((ep - 1))); do
		for r in $(seq 0 $((tp - 1))); do
			"$B/weightctl" shard --model-dir "$T/$fam" --tp-size "$tp" --tp-rank "$r" \
				--ep-size "$ep" --ep-rank "$e" "$@" --out "$T/one.st" 2>"$T/err" ||
				die "$fam rank ($r, $e): --out: $(cat "$T/err")"
			cmp -s "$T/one.st" "$d/tp$r-ep$e.safetensors" ||
				die "$fam tp $tp ep $ep $*: rank ($r, $e) of --out-dir differs from --out"
			n=$((n + 1))
		done
	done
}
check llama 4 1 --quant fp8-block
check llama 2 1
check mixtral 2 2 --quant int8-channel
check gpt_oss 2 2
check llama4_text 4 1 --quant fp8-channel --threads 3
check deepseek_v3 2 2 --quant fp8-block

# refusals
want() { # RC "MESSAGE" ARGS...: exit RC and MESSAGE on stderr
	local rc=$1 msg=$2 got=0
	shift 2
	"$B/weightctl" shard --model-dir "$T/llama" "$@" >/dev/null 2>"$T/err" || got=$?
	[ "$got" = "$rc" ] && grep -qF -- "$msg" "$T/err" ||
		die "shard $*: want exit $rc and '$msg', got exit $got: $(cat "$T/err")"
}
want 2 "--out-dir writes every rank; drop --tp-rank" --tp-size 2 --tp-rank 1 --out-dir "$T/x"
want 2 "--out FILE (one rank) or --out-dir DIR (every rank), not both" --out "$T/a.st" --out-dir "$T/x"
want 2 "--out FILE is required (or --out-dir DIR for every rank)" --tp-size 2
want 2 "--tp-rank R (0..1) is required (or --out-dir DIR for every rank)" --tp-size 2 --out "$T/a.st"
: >"$T/file"
want 1 "exists and is not a folder" --tp-size 2 --out-dir "$T/file"
[ ! -e "$T/x" ] && [ ! -e "$T/a.st" ] || die "a refused shard wrote something"

# SIGTERM while the ranks are written: exit 143, no file left (tried until the
# signal lands before the end, as large a model as it takes)
"$B/wt-mkckpt" --family llama --size-mb 256 --out "$T/big" >/dev/null || die "wt-mkckpt big"
landed=0
for _ in 1 2 3 4 5; do
	d="$T/out-big"
	rm -rf "$d"
	mkdir "$d"
	"$B/weightctl" shard --model-dir "$T/big" --tp-size 4 --threads 1 --out-dir "$d" 2>"$T/err" &
	pid=$!
	for _ in $(seq 1 4000); do
		for f in "$d"/*.tmp.*; do
			[ -s "$f" ] && break 2
		done
		sleep 0.002
	done
	kill -TERM "$pid" 2>/dev/null
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" = 0 ] && continue # it ended first
	[ "$rc" = 143 ] || die "SIGTERM: exit $rc: $(cat "$T/err")"
	grep -q "interrupted by SIGTERM; no partial file left" "$T/err" || die "SIGTERM message: $(cat "$T/err")"
	[ -z "$(find "$d" -type f)" ] || die "SIGTERM left: $(ls "$d")"
	landed=1
	break
done
[ "$landed" = 1 ] || die "the shard ended before SIGTERM in 5 tries"
echo "shard_all.sh: ok ($n rank files of --out-dir byte-identical to --out)"
