#!/usr/bin/env bash
# fetch_corrupt_disk.sh — issue 11 item 4: three bytes flipped in the cache's
# blob files of a stopped weightd. On restart, the fetch that reads a damaged
# chunk gets WT_ECORRUPT (the daemon evicts the shard; the chunks in flight
# get WT_ENOTFOUND); the client asks for
# the manifest again, the daemon produces the shard again, and the fetch
# completes byte-identical to `weightctl shard`.
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
CTL=${WT_WEIGHTCTL:-$B/weightctl} # the fetch client (override to measure another build)
mkdir -p "$T/models"
"$B/wt-mkckpt" --family llama --out "$T/models/big" --size-mb 32 >/dev/null || die "mkckpt"
"$B/weightctl" shard --model-dir "$T/models/big" --out "$T/ref.st" || die "shard"
start_weightd c1 "$T/models" "$T/cache"
URL=$WD_URL
"$B/weightctl" manifest --endpoint "$URL" --model big >/dev/null || die "produce the shard"
stop_weightd "$WD_PID"
# flip a byte at 1/4, 1/2 and 3/4 of the largest blob file (chunk payload)
python3 - "$T/cache" <<'PY' || die "flip bytes"
import glob, os, sys
f = max(glob.glob(os.path.join(sys.argv[1], "*.blob")), key=os.path.getsize)
size = os.path.getsize(f)
with open(f, "r+b") as fh:
    for q in (1, 2, 3):
        fh.seek(size * q // 4)
        b = fh.read(1)
        fh.seek(size * q // 4)
        fh.write(bytes([b[0] ^ 0x55]))
print(f"flipped 3 bytes of {os.path.basename(f)} ({size} bytes)")
PY
start_weightd c2 "$T/models" "$T/cache" "$URL"
"$CTL" fetch --endpoint "$URL" --model big --out "$T/f.st" --quiet --verbose 2>"$T/f.err" ||
	die "fetch over a damaged cache: $(cat "$T/f.err")"
cmp -s "$T/ref.st" "$T/f.st" || die "fetch over a damaged cache differs from weightctl shard"
# the damaged chunk's reply (WT_ECORRUPT) or a chunk of the evicted shard (WT_ENOTFOUND)
# came first: either way the fetch asked for the manifest again
grep -q "does not match its XXH3-128" "$T/c2.log" || die "the daemon met no damaged chunk"
grep -q "resumes [1-9]" "$T/f.err" || die "the fetch did not ask again: $(cat "$T/f.err")"
grep "weightctl fetch:" "$T/f.err" | tail -n1
"$B/weightctl" admin --endpoint "$URL" verify >"$T/v.txt" || die "verify: $(cat "$T/v.txt")"
stop_weightd "$WD_PID"
echo "fetch_corrupt_disk.sh: ok"
