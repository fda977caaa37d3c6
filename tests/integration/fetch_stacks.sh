#!/usr/bin/env bash
# fetch_stacks.sh — expert stacks produced in batches by a live weightd
# (stack_batch_bytes 4K: one expert at a time) with TP and no EP (stacked in the
# checkpoint: gpt_oss, llama4; one tensor per expert: mixtral, deepseek_v3), where the
# ranks' outputs are streamed into the cache in chunks as the batches come
# (shardmap/produce_batch.c): every rank fetched (and fetched cut-through, while
# it is produced) is byte-identical to `weightctl shard` of the same layout,
# which assembles each output whole; and the daemon's production log counts more
# tensors emitted in parts than a daemon with the default stack_batch_bytes
# (whose stacks come whole), so the streamed path is the one that ran.
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
FAMS="gpt_oss llama4_text llama4_fbgemm mixtral deepseek_v3"
mkdir -p "$T/models" "$T/out"
for f in $FAMS; do
	"$B/wt-mkckpt" --family "$f" --out "$T/models/$f" >/dev/null || die "wt-mkckpt $f"
done
export WD_LOG_LEVEL=info
start_weightd batched "$T/models" "$T/cache-b" tcp://127.0.0.1:0 \
	--chunk-bytes 4096 --stack-batch-bytes 4096
URL_B=$WD_URL
start_weightd whole "$T/models" "$T/cache-w" tcp://127.0.0.1:0 --chunk-bytes 4096
URL_W=$WD_URL

n=0
# check FAMILY "FLAGS" TP
check() {
	local fam=$1 flags=$2 tp=$3 r a b ct
	for r in $(seq 0 $((tp - 1))); do
		local lay="$flags --tp-size $tp --tp-rank $r"
		a="$T/out/shard.st"
		rm -f "$a" "$T"/out/fetch-*.st
		# shellcheck disable=SC2086
		"$B/weightctl" shard --model-dir "$T/models/$fam" $lay --out "$a" 2>"$T/out/err" ||
			die "$fam [$lay]: shard: $(cat "$T/out/err")"
		for url in "$URL_B" "$URL_W"; do
			b="$T/out/fetch-$n.st"
			# rank 0 cut-through: it reads the layout while it is produced
			ct=""
			[ "$r" = 0 ] && ct=--cut-through
			# shellcheck disable=SC2086
			"$B/weightctl" fetch --endpoint "$url" --model "$fam" $lay $ct --out "$b" --quiet \
				2>"$T/out/err" ||
				die "$fam [$lay] from $url: fetch: $(cat "$T/out/err")"
			cmp -s "$a" "$b" || die "$fam [$lay] from $url: fetched file differs from weightctl shard"
			n=$((n + 1))
		done
	done
}
for f in $FAMS; do
	check "$f" "" 2
	# deepseek_v3's FP8 blocks pass through whole: TP 4 would split them
	check "$f" "--quant fp8-block" "$([ "$f" = deepseek_v3 ] && echo 2 || echo 4)"
	check "$f" "--quant int8-channel" 2
done
# "produced model 'M' ... (N tensors in parts)": summed over each daemon's productions
# (of the models matching $2)
parts() {
	grep -E "produced model '($2)' " "$T/$1.log" |
		sed -n 's/.*(\([0-9]*\) tensors in parts).*/\1/p' | awk '{ s += $1 } END { print s + 0 }'
}
pb=$(parts batched '[a-z_0-9]+')
pw=$(parts whole '[a-z_0-9]+')
# experts stored one tensor each (produce_batch.c's units) on their own
ub=$(parts batched 'mixtral|deepseek_v3')
uw=$(parts whole 'mixtral|deepseek_v3')
[ "$ub" -gt "$uw" ] || die "mixtral / deepseek_v3 tensors in parts: $ub with stack_batch_bytes 4K, $uw without: their experts were not streamed"
[ "$(grep -c "produced model" "$T/batched.log")" = 15 ] || die "batched daemon: want 15 productions logged: $(grep "produced model" "$T/batched.log")"
[ "$pb" -gt "$pw" ] || die "tensors in parts: $pb with stack_batch_bytes 4K, $pw without: the stacks were not streamed"
echo "fetch_stacks.sh: ok ($n rank files byte-identical to weightctl shard; tensors in parts: $pb batched, $pw whole; of mixtral and deepseek_v3: $ub, $uw)"
