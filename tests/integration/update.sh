#!/usr/bin/env bash
# update.sh — online weight updates against a real weightd: `weightctl watch`
# prints the current revision and then, within a few seconds, the revision of
# a checkpoint whose bytes changed; `weightctl fetch --update-from OLD` moves
# exactly the bytes of the runtime tensors whose hash changed (computed here
# from the two revisions' manifests) and writes a file byte-identical to a full
# fetch and to `weightctl shard` of the new revision; an unchanged revision
# moves 0 bytes; a file of another layout, and a checkpoint whose shapes
# changed, are refused with "full reload needed" (exit 3) and leave no file.
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
mkdir -p "$T/models" "$T/out"
"$B/wt-mkckpt" --family llama --out "$T/models/llama" >/dev/null || die "wt-mkckpt"
start_weightd wd "$T/models" "$T/cache" tcp://127.0.0.1:0 --revalidate-ms 200
URL=$WD_URL
LAY="--tp-size 2 --tp-rank 1"
W=("$B/weightctl")

# change_tensors DIR: rewrite the first shard file (new inode) with the lowest
# mantissa bit of every BF16 value of two tensors flipped (values stay finite).
change_tensors() {
	/usr/bin/python3 - "$1/model-00001-of-00002.safetensors" <<'PY'
import json, os, struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
names = sorted(k for k in h if k != "__metadata__")
picked = [k for k in names if k.endswith("mlp.gate_proj.weight")][:1] + \
         [k for k in names if k.endswith("self_attn.o_proj.weight")][:1]
assert len(picked) == 2, names
for k in picked:
    lo, hi = h[k]["data_offsets"]
    for i in range(8 + n + lo, 8 + n + hi, 2):
        b[i] ^= 1
open(p + ".new", "wb").write(b)
os.rename(p + ".new", p)
print(" ".join(picked))
PY
}

# changed_bytes OLD_MANIFEST NEW_MANIFEST: sum of nbytes of tensors whose hash differs
changed_bytes() {
	awk -F'\t' 'NR == FNR { if (NF >= 7) h[$1] = $7; next }
	            NF >= 7 && h[$1] != $7 { s += $4 } END { print s + 0 }' "$1" "$2"
}

"${W[@]}" fetch --endpoint "$URL" --model llama $LAY --out "$T/out/old.st" --quiet ||
	die "first fetch"
"${W[@]}" manifest --endpoint "$URL" --model llama $LAY >"$T/out/old.man" || die "manifest"
REV0=$(sed -n 's/^revision: //p' "$T/out/old.man")

# watch: the current revision first, then the next one
"${W[@]}" watch --endpoint "$URL" --model llama --count 2 --wait-ms 20000 >"$T/out/watch.txt" \
	2>"$T/out/watch.err" &
WPID=$!
WD_PIDS="$WD_PIDS $WPID" # killed by cleanup if the test fails
for _ in $(seq 1 100); do [ -s "$T/out/watch.txt" ] && break; sleep 0.05; done
[ "$(head -n1 "$T/out/watch.txt")" = "$REV0" ] || die "watch printed '$(cat "$T/out/watch.txt")', want $REV0"
sleep 0.5 # the watch is parked on the server now
t0=$(date +%s%N)
CHANGED=$(change_tensors "$T/models/llama") || die "rewrite of the checkpoint failed"
for _ in $(seq 1 100); do [ "$(wc -l <"$T/out/watch.txt")" -ge 2 ] && break; sleep 0.05; done
t1=$(date +%s%N)
wait "$WPID" || die "watch exit $?: $(cat "$T/out/watch.err")"
REV1=$(sed -n 2p "$T/out/watch.txt")
[ -n "$REV1" ] && [ "$REV1" != "$REV0" ] || die "watch did not print a new revision: $(cat "$T/out/watch.txt")"
WATCH_MS=$(((t1 - t0) / 1000000))
[ "$WATCH_MS" -lt 5000 ] || die "watch took $WATCH_MS ms to see the new revision"

"${W[@]}" manifest --endpoint "$URL" --model llama $LAY >"$T/out/new.man" || die "manifest 2"
[ "$(sed -n 's/^revision: //p' "$T/out/new.man")" = "$REV1" ] || die "manifest revision is not the watched one"
WANT=$(changed_bytes "$T/out/old.man" "$T/out/new.man")
NCH=$(awk -F'\t' 'NR == FNR { if (NF >= 7) h[$1] = $7; next } NF >= 7 && h[$1] != $7 { n++ } END { print n + 0 }' \
	"$T/out/old.man" "$T/out/new.man")
TOTAL=$(sed -n 's/^bytes: //p' "$T/out/new.man")
[ "$WANT" -gt 0 ] && [ "$WANT" -lt "$TOTAL" ] || die "changed bytes $WANT of $TOTAL: the edit should change some tensors"

"${W[@]}" fetch --endpoint "$URL" --model llama $LAY --update-from "$T/out/old.st" \
	--out "$T/out/upd.st" >"$T/out/upd.txt" 2>"$T/out/upd.err" || die "update: $(cat "$T/out/upd.err")"
grep -q "update ${REV0:0:12} -> ${REV1:0:12} rank tp=1 ep=0: $NCH of [0-9]* tensors, $WANT of $TOTAL bytes" \
	"$T/out/upd.txt" || die "update report '$(cat "$T/out/upd.txt")', want $NCH tensors $WANT of $TOTAL bytes"
"${W[@]}" fetch --endpoint "$URL" --model llama $LAY --out "$T/out/full.st" --quiet || die "full fetch"
"${W[@]}" shard --model-dir "$T/models/llama" $LAY --out "$T/out/shard.st" 2>/dev/null || die "shard"
cmp -s "$T/out/upd.st" "$T/out/full.st" || die "updated file differs from a full fetch"
cmp -s "$T/out/upd.st" "$T/out/shard.st" || die "updated file differs from weightctl shard"
cmp -s "$T/out/old.st" "$T/out/full.st" && die "old and new rank files are equal: nothing changed"

# no change: 0 bytes move, the file equals the input
"${W[@]}" fetch --endpoint "$URL" --model llama $LAY --update-from "$T/out/full.st" \
	--out "$T/out/same.st" >"$T/out/same.txt" || die "no-op update"
grep -q ": 0 of [0-9]* tensors, 0 of $TOTAL bytes" "$T/out/same.txt" || die "no-op update moved bytes: $(cat "$T/out/same.txt")"
cmp -s "$T/out/same.st" "$T/out/full.st" || die "no-op update changed the file"

# refusals: a file of another layout; a checkpoint whose shapes changed
"${W[@]}" fetch --endpoint "$URL" --model llama --tp-size 1 --update-from "$T/out/full.st" \
	--out "$T/out/bad.st" >/dev/null 2>"$T/out/bad.err"
rc=$?
[ "$rc" = 3 ] && [ ! -e "$T/out/bad.st" ] || die "update from another layout: exit $rc, want 3 and no file"
grep -q "full reload needed" "$T/out/bad.err" || die "refusal message: $(cat "$T/out/bad.err")"
rm -rf "$T/llama.new"
"$B/wt-mkckpt" --family llama --size-mb 8 --out "$T/llama.new" >/dev/null || die "wt-mkckpt 8"
for f in "$T/llama.new"/*; do # same folder (the daemon's store), new files
	cp "$f" "$T/models/llama/tmp" && mv "$T/models/llama/tmp" "$T/models/llama/$(basename "$f")"
done

for _ in $(seq 1 100); do # until the daemon has revalidated (revalidate_ms 200)
	REV2=$("${W[@]}" watch --endpoint "$URL" --model llama --count 1) || die "watch --count 1"
	[ "$REV2" != "$REV1" ] && break
	sleep 0.05
done
[ "$REV2" != "$REV1" ] || die "the daemon never saw the resized checkpoint"
"${W[@]}" fetch --endpoint "$URL" --model llama $LAY --update-from "$T/out/full.st" \
	--out "$T/out/bad.st" >/dev/null 2>"$T/out/bad.err"
rc=$?
[ "$rc" = 3 ] && [ ! -e "$T/out/bad.st" ] || die "update across a shape change: exit $rc, want 3 and no file"
grep -q "tensor '.*' is of another dtype or shape.*full reload needed" "$T/out/bad.err" ||
	die "shape refusal message: $(cat "$T/out/bad.err")"
echo "update.sh: ok (watch saw the new revision in $WATCH_MS ms; changed $CHANGED:" \
	"update moved $WANT of $TOTAL bytes ($NCH tensors), byte-identical to a full fetch and to shard)"
