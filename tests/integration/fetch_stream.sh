#!/usr/bin/env bash
# fetch_stream.sh — `weightctl fetch --stream` (the bulk data plane, docs/client.md
# "Bulk data plane") against a real weightd: with --stream-listen the chunks
# come over the bulk stream and the file is byte-identical to `weightctl
# shard` and to a fetch over messages; against a weightd without
# --stream-listen (what an older server looks like) --stream falls back to
# messages with the same bytes.
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
mkdir -p "$T/models" "$T/out"
"$B/wt-mkckpt" --family llama --out "$T/models/llama" >/dev/null || die "wt-mkckpt"
W=("$B/weightctl")
"${W[@]}" shard --model-dir "$T/models/llama" --tp-size 2 --tp-rank 1 \
	--out "$T/out/ref.safetensors" >/dev/null || die "shard"
fetch() { # URL OUT [flags...]
	local url=$1 out=$2
	shift 2
	"${W[@]}" fetch --endpoint "$url" --model llama --tp-size 2 --tp-rank 1 --connections 2 \
		--verbose --quiet --out "$T/out/$out.safetensors" "$@" 2>"$T/out/$out.log" ||
		die "fetch $out: $(cat "$T/out/$out.log")"
	cmp -s "$T/out/$out.safetensors" "$T/out/ref.safetensors" ||
		die "$out: bytes differ from weightctl shard"
}
start_weightd on "$T/models" "$T/cache-on" tcp://127.0.0.1:0 --stream-listen tcp://127.0.0.1:0
fetch "$WD_URL" msg
grep -q "bulk stream" "$T/out/msg.log" && die "a client without --stream used the bulk stream"
fetch "$WD_URL" stream --stream
grep -q "2 bulk stream(s) on tcp://127.0.0.1:" "$T/out/stream.log" ||
	die "--stream against a server offering it did not use the stream: $(cat "$T/out/stream.log")"
grep -q "going on over messages" "$T/out/stream.log" &&
	die "the bulk stream failed: $(cat "$T/out/stream.log")"
stop_weightd "$WD_PID"
start_weightd off "$T/models" "$T/cache-off" tcp://127.0.0.1:0
fetch "$WD_URL" fallback --stream
grep -q "bulk stream" "$T/out/fallback.log" &&
	die "a server without stream_listen offered a stream: $(cat "$T/out/fallback.log")"
echo "fetch_stream.sh: ok (stream, messages and fallback byte-identical to weightctl shard)"
