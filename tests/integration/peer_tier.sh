#!/usr/bin/env bash
# peer_tier.sh — the weightd peer tier with real processes on 127.0.0.1.
# Node B serves an exact copy of A's model (revisions are content digests, so
# both resolve the same revision; a copy with other bytes gets another one):
#   1. A warm, B --peer A: every rank of TP=2 fp8-block fetched from B equals
#      `weightctl shard` of A's folder; B: 0 productions, 1 peer fill, no
#      source bytes read after its start (the start hashed the files once).
#   2. a peer at another revision (different files) is skipped: C produces.
#   3. a peer cold for a layout is asked cache_only and produces nothing.
#   4. A stopped: a new layout on B is produced from B's (overwritten) source.
#   5. two cold nodes that peer each other, same layout on both at once: both
#      complete with the right bytes (no deadlock, no loop).
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
L2=(--tp-size 2 --quant fp8-block)
mkdir -p "$T/a" "$T/b" "$T/c"
"$B/wt-mkckpt" --family llama --out "$T/a/big" --size-mb 8 >/dev/null || die "mkckpt a"
"$B/wt-mkckpt" --family llama --out "$T/c/big" --size-mb 8 --seed 2 >/dev/null || die "mkckpt c"
for r in 0 1; do
	"$B/weightctl" shard --model-dir "$T/a/big" "${L2[@]}" --tp-rank $r --out "$T/ref$r.st" ||
		die "shard rank $r"
done

# B's copy: the same bytes, so the same revision. A copy whose tensor bytes
# differ (even with sizes and mtimes kept) is another revision: never filled
# from A.
cp -a "$T/a/big" "$T/b/big"
cp -a "$T/a/big" "$T/b/forged"
for f in "$T"/b/forged/*.safetensors; do
	hl=$(od -An -t u8 -N8 "$f" | tr -d ' ')
	printf '\125' | dd of="$f" bs=1 seek=$((8 + hl)) conv=notrunc status=none || die "forge $f"
	touch -r "$T/a/big/$(basename "$f")" "$f"
done

stats() { # URL -> the stats text line
	"$B/weightctl" admin --endpoint "$1" stats | head -n1
}
counts() { # URL -> "PRODUCTIONS PEER_FILLS" of its stats line
	stats "$1" | sed -n 's/.* \([0-9][0-9]*\) productions, \([0-9][0-9]*\) peer fills.*/\1 \2/p'
}
has() { # URL NEEDLE: the stats line contains NEEDLE
	local s
	s=$(stats "$1")
	case "$s" in *"$2"*) return 0 ;; esac
	echo "stats of $1: $s" >&2
	return 1
}

# --- 1. warm A; B fills from A ---
start_weightd A "$T/a" "$T/cache-a"
A=$WD_URL
APID=$WD_PID
"$B/weightctl" admin --endpoint "$A" warm --model big "${L2[@]}" >/dev/null || die "warm A"
start_weightd B "$T/b" "$T/cache-b" tcp://127.0.0.1:0 --peer "$A" --log-level notice
BURL=$WD_URL
BPID=$WD_PID
ra=$("$B/weightctl" models --endpoint "$A" | awk -F'\t' '$1 == "big" {print $5}')
rb=$("$B/weightctl" models --endpoint "$BURL" | awk -F'\t' '$1 == "big" {print $5}')
[ -n "$ra" ] && [ "$ra" = "$rb" ] || die "A and B resolve different revisions: '$ra' '$rb'"
rf=$("$B/weightctl" models --endpoint "$BURL" | awk -F'\t' '$1 == "forged" {print $5}')
[ -n "$rf" ] && [ "$rf" != "$ra" ] || die "a copy with other bytes kept revision '$rf'"
read0=$(stats "$BURL" | grep -o '[0-9]* source bytes read')
for r in 0 1; do
	"$B/weightctl" fetch --endpoint "$BURL" --model big "${L2[@]}" --tp-rank $r \
		--out "$T/b$r.st" --quiet || die "fetch rank $r from B"
	cmp -s "$T/ref$r.st" "$T/b$r.st" || die "rank $r from B differs from weightctl shard"
done
has "$BURL" "$read0, 0 productions, 1 peer fills" || die "B did not fill from A"
grep -q "filled layout .* from peer $A: 2 ranks" "$T/B.log" || die "no fill line: $(cat "$T/B.log")"
grep "filled layout" "$T/B.log" | sed 's/.*from peer/from peer/'

# --- 2. a peer at another revision is skipped ---
start_weightd C "$T/c" "$T/cache-c" tcp://127.0.0.1:0 --peer "$A"
CURL=$WD_URL
"$B/weightctl" manifest --endpoint "$CURL" --model big "${L2[@]}" >/dev/null || die "manifest C"
has "$CURL" " 1 productions, 0 peer fills" || die "C did not produce"

# --- 3. a peer cold for the layout answers cache_only WT_ENOTFOUND, produces nothing ---
start_weightd D "$T/a" "$T/cache-d" tcp://127.0.0.1:0 --peer "$BURL"
DURL=$WD_URL
"$B/weightctl" manifest --endpoint "$DURL" --model big --tp-size 2 >/dev/null || die "manifest D"
has "$DURL" " 1 productions, 0 peer fills" || die "D did not produce"
has "$BURL" "2 shards" || die "B was asked cache_only and changed its cache"
has "$BURL" " 0 productions, 1 peer fills" || die "B produced for a cache_only request"
stop_weightd "$WD_PID"

# --- 4. A down: a new layout on B comes from B's own source ---
stop_weightd "$APID"
"$B/weightctl" fetch --endpoint "$BURL" --model big --tp-size 1 --quant fp8-block \
	--out "$T/b1x.st" --quiet || die "fetch TP=1 from B with A down"
has "$BURL" " 1 productions, 1 peer fills" || die "B did not produce with A down"
"$B/weightctl" shard --model-dir "$T/a/big" --tp-size 1 --quant fp8-block --out "$T/ref1x.st" ||
	die "shard TP=1"
cmp -s "$T/ref1x.st" "$T/b1x.st" || die "TP=1 produced by B differs from weightctl shard"
stop_weightd "$BPID"

# --- 5. two cold nodes that peer each other ---
P=ipc://$T/p.ipc
Q=ipc://$T/q.ipc
start_weightd P "$T/a" "$T/cache-p" "$P" --peer "$Q" --peer "$P"
start_weightd Q "$T/a" "$T/cache-q" "$Q" --peer "$P" --peer "$Q"
FPIDS=""
for u in "$P" "$Q"; do
	n=${u##*/}
	"$B/weightctl" fetch --endpoint "$u" --model big "${L2[@]}" --tp-rank 1 \
		--out "$T/m-$n.st" --quiet --timeout-ms 20000 2>"$T/m-$n.err" &
	FPIDS="$FPIDS $!"
done
for p in $FPIDS; do
	wait "$p" || die "mutual: a fetch failed: $(cat "$T"/m-*.err)"
done
for n in p.ipc q.ipc; do
	cmp -s "$T/ref1.st" "$T/m-$n.st" || die "mutual: rank 1 from $n differs"
done
# then a layout warm on P only: Q fills it from P (its own URL in the list is
# skipped). Whether Q produced the mutual layout or filled it from P depends
# on which fetch came first (under load, P's may end before Q asks): count
# from here.
q_before=$(counts "$Q")
"$B/weightctl" admin --endpoint "$P" warm --model big --tp-size 1 >/dev/null || die "warm P"
"$B/weightctl" manifest --endpoint "$Q" --model big --tp-size 1 >/dev/null || die "manifest Q"
read -r qp qf <<<"$q_before"
if [ -z "$qp" ] || [ $((qp + qf)) != 1 ]; then
	die "mutual: Q should have produced or filled the layout once ($q_before)"
fi
has "$Q" " $qp productions, $((qf + 1)) peer fills" || die "Q did not fill from P"
echo "P: $(stats "$P")"
echo "Q: $(stats "$Q")"
echo "peer_tier: ok"
