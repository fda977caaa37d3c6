#!/usr/bin/env bash
# enospc.sh — a cache on a full disk (a small tmpfs made here): a production
# that does not fit fails cleanly with WT_ENOSPC naming the figures, weightd
# stays up and keeps serving cached shards, and once space is freed the same
# production succeeds without a restart (RocksDB never meets the full disk:
# cache/disk.c). Needs root for the tmpfs (CI runs as root); skipped (77) elsewhere.
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
mkdir -p "$T/models" "$T/mnt"
mount -t tmpfs -o size=256m tmpfs "$T/mnt" 2>"$T/mount.err" || {
	echo "enospc.sh: SKIPPED: cannot mount a tmpfs here: $(cat "$T/mount.err")"
	exit 77
}
trap 'umount "$T/mnt" 2>/dev/null; cleanup' EXIT
"$B/wt-mkckpt" --family llama --out "$T/models/llama" --size-mb 48 >/dev/null || die "mkckpt llama"
"$B/wt-mkckpt" --family mixtral --out "$T/models/moe" >/dev/null || die "mkckpt moe"
"$B/weightctl" shard --model-dir "$T/models/llama" --out "$T/big.ref" || die "shard big"
start_weightd A "$T/models" "$T/mnt/cache" tcp://127.0.0.1:0 --cache-max-bytes 1G \
	--cache-memory-bytes 0
S=(--model moe --ep-size 2 --ep-rank 0 --quiet)
"$B/weightctl" fetch --endpoint "$WD_URL" "${S[@]}" --out "$T/s1.st" || die "small fetch"
dd if=/dev/zero of="$T/mnt/filler" bs=1M 2>/dev/null # fill the disk
rc=0
"$B/weightctl" fetch --endpoint "$WD_URL" --model llama --out "$T/b1.st" --quiet \
	--retry-budget-ms 1000 2>"$T/b1.err" || rc=$?
[ "$rc" = 1 ] && grep -q "WT_ENOSPC" "$T/b1.err" && grep -q "bytes free on its disk" "$T/b1.err" ||
	die "full disk: exit $rc: $(cat "$T/b1.err")"
kill -0 "$WD_PID" 2>/dev/null || die "weightd died on a full disk: $(tail -3 "$T/A.log")"
"$B/weightctl" fetch --endpoint "$WD_URL" "${S[@]}" --out "$T/s2.st" || die "cached shard not served"
cmp -s "$T/s1.st" "$T/s2.st" || die "cached shard differs"
rm -f "$T/mnt/filler"
"$B/weightctl" fetch --endpoint "$WD_URL" --model llama --out "$T/b2.st" --quiet ||
	die "no recovery after space was freed: $(tail -3 "$T/A.log")"
cmp -s "$T/big.ref" "$T/b2.st" || die "recovered production differs from weightctl shard"
"$B/weightctl" admin --endpoint "$WD_URL" verify >/dev/null || die "verify"
stop_weightd "$WD_PID"
# weightctl shard onto the full disk: exit 1 naming the disk's error, no file left
# (it writes each tensor as it is produced, so the disk fills mid-production)
# (8 MiB left of the 48 MiB shard)
dd if=/dev/zero of="$T/mnt/filler" bs=1M 2>/dev/null
truncate -s -8M "$T/mnt/filler"
rc=0
"$B/weightctl" shard --model-dir "$T/models/llama" --out "$T/mnt/x.st" 2>"$T/sh.err" || rc=$?
[ "$rc" = 1 ] && grep -q "No space left on device" "$T/sh.err" && grep -q "WT_ENOSPC" "$T/sh.err" ||
	die "weightctl shard on a full disk: exit $rc: $(cat "$T/sh.err")"
for f in "$T"/mnt/x.st*; do
	[ -e "$f" ] && die "weightctl shard on a full disk left $f"
done
echo "enospc: ok"
