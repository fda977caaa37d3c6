#!/usr/bin/env bash
# cut_through.sh — `weightctl fetch --cut-through` against a real weightd on a
# cold cache: the four ranks of a TP=4 layout asked at once get a live manifest
# (the layout is still being produced) and write files byte-identical to
# `weightctl shard`; asked again once committed, the manifest is not live and
# the bytes are the same; without the flag the manifest is never live.
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
mkdir -p "$T/models" "$T/out"
"$B/wt-mkckpt" --family llama --out "$T/models/llama" >/dev/null || die "wt-mkckpt"
start_weightd wd "$T/models" "$T/cache" tcp://127.0.0.1:0
URL=$WD_URL
W=("$B/weightctl")
pids=()
for r in 0 1 2 3; do
	"${W[@]}" fetch --endpoint "$URL" --model llama --tp-size 4 --tp-rank $r --quant fp8-block \
		--cut-through --verbose --quiet --out "$T/out/cut$r.safetensors" 2>"$T/out/cut$r.log" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || die "cut-through fetch failed: $(cat "$T"/out/cut*.log)"; done
live=$(grep -l "cut-through (live manifest)" "$T"/out/cut*.log | wc -l)
[ "$live" -ge 1 ] || die "no rank got a live manifest on a cold cache: $(cat "$T"/out/cut*.log)"
for r in 0 1 2 3; do
	"${W[@]}" shard --model-dir "$T/models/llama" --tp-size 4 --tp-rank $r --quant fp8-block \
		--out "$T/out/ref$r.safetensors" >/dev/null || die "shard rank $r"
	cmp -s "$T/out/cut$r.safetensors" "$T/out/ref$r.safetensors" ||
		die "rank $r: cut-through bytes differ from weightctl shard"
done
# the cache is written behind serving (write-behind): a plain client waits
# for the commit; committed then, a cut-through client does not see a live
# manifest either (rank 1 again: the plain fetch proves that rank committed,
# not the others, which the writer may still be committing)
"${W[@]}" fetch --endpoint "$URL" --model llama --tp-size 4 --tp-rank 1 --quant fp8-block \
	--verbose --quiet --out "$T/out/commit.safetensors" 2>"$T/out/commit.log" ||
	die "plain fetch of the layout: $(cat "$T/out/commit.log")"
grep -q "live manifest" "$T/out/commit.log" && die "a client without --cut-through got a live manifest"
cmp -s "$T/out/commit.safetensors" "$T/out/ref1.safetensors" || die "committed bytes differ"
"${W[@]}" fetch --endpoint "$URL" --model llama --tp-size 4 --tp-rank 1 --quant fp8-block \
	--cut-through --verbose --quiet --out "$T/out/warm.safetensors" 2>"$T/out/warm.log" ||
	die "warm fetch: $(cat "$T/out/warm.log")"
grep -q "live manifest" "$T/out/warm.log" && die "a committed layout was served live"
cmp -s "$T/out/warm.safetensors" "$T/out/ref1.safetensors" || die "warm bytes differ"
"${W[@]}" fetch --endpoint "$URL" --model llama --tp-size 2 --tp-rank 0 \
	--verbose --quiet --out "$T/out/plain.safetensors" 2>"$T/out/plain.log" ||
	die "plain fetch: $(cat "$T/out/plain.log")"
grep -q "live manifest" "$T/out/plain.log" && die "a client without --cut-through got a live manifest"
echo "cut_through.sh: ok ($live of 4 ranks live on the cold cache)"
