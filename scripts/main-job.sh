#!/usr/bin/env bash
# The README's main job on the embedded default: a local models folder and a
# local RocksDB cache. Creates a sample model in ./models if there is none,
# starts weightd with no arguments (tcp://127.0.0.1:7450, ./models,
# ./weightd-cache), fetches every rank of a TP=2 fp8-block layout, checks each
# rank against offline production, prints a summary and stops weightd.
set -euo pipefail
BUILD=${BUILD:-build}
ENDPOINT=tcp://127.0.0.1:7450
MODEL=${MODEL:-sample-llama}
TP=2
LAYOUT=(--tp-size "$TP" --quant fp8-block)
OUT=${OUT:-$BUILD/main-job}

if [ ! -d models ] || [ -z "$(ls -A models 2>/dev/null)" ]; then
	echo "main: no models in ./models; generating ./models/$MODEL (wt-mkckpt --family llama --size-mb 64)"
	mkdir -p models
	"$BUILD/wt-mkckpt" --family llama --size-mb 64 --out "models/$MODEL" --seed 1
fi
[ -d "models/$MODEL" ] || MODEL=$(ls models | head -n 1)

"$BUILD/weightctl" inspect "models/$MODEL"

mkdir -p "$OUT"
"$BUILD/weightd" >"$OUT/weightd.log" 2>&1 &
WD=$!
cleanup() {
	kill -TERM "$WD" 2>/dev/null || true
	wait "$WD" 2>/dev/null || true
}
trap cleanup EXIT

for _ in $(seq 1 100); do
	"$BUILD/weightctl" models --endpoint "$ENDPOINT" >/dev/null 2>&1 && break
	kill -0 "$WD" 2>/dev/null || { cat "$OUT/weightd.log"; echo "main: weightd exited"; exit 1; }
	sleep 0.1
done
"$BUILD/weightctl" models --endpoint "$ENDPOINT"

ckpt_bytes=$(du -cb models/"$MODEL"/*.safetensors | tail -n 1 | cut -f1)
total=0
for ((r = 0; r < TP; r++)); do
	t0=$(date +%s.%N)
	"$BUILD/weightctl" fetch --endpoint "$ENDPOINT" --model "$MODEL" "${LAYOUT[@]}" \
		--tp-rank "$r" --out "$OUT/rank$r.safetensors" --quiet
	t1=$(date +%s.%N)
	"$BUILD/weightctl" shard --model-dir "models/$MODEL" "${LAYOUT[@]}" --tp-rank "$r" \
		--out "$OUT/offline$r.safetensors"
	cmp -s "$OUT/rank$r.safetensors" "$OUT/offline$r.safetensors" ||
		{ echo "main: rank $r differs from offline production"; exit 1; }
	bytes=$(stat -c %s "$OUT/rank$r.safetensors")
	total=$((total + bytes))
	awk -v r="$r" -v b="$bytes" -v c="$ckpt_bytes" -v t0="$t0" -v t1="$t1" 'BEGIN {
		printf "rank %d: %d bytes (%.3f of checkpoint %d), %.1f MB/s (%s), hashes OK, identical to offline shard\n",
		       r, b, b / c, c, b / (t1 - t0) / 1e6,
		       r == 0 ? "cold: weightd produced every rank" : "warm: from the cache" }'
done
echo "main: fetched $TP ranks of '$MODEL' (tp=$TP, fp8-block): $total bytes in all, checkpoint $ckpt_bytes bytes"
