#!/usr/bin/env bash
# fetch_faults.sh — weightctl fetch against real weightd processes when things
# go wrong: a chunk corrupted in flight (wt-faultyd) is WT_EHASH naming the
# chunk, exit 1, no file; the daemon SIGKILLed mid-fetch and restarted on the
# same cache completes the fetch; a dead first endpoint fails over; an unknown
# model is exit 1 with WT_ENOTFOUND; an impossible layout is exit 3.
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
mkdir -p "$T/models" "$T/small"
"$B/wt-mkckpt" --family llama --out "$T/models/big" --size-mb 64 >/dev/null || die "mkckpt big"
"$B/wt-mkckpt" --family qwen2 --out "$T/small/q" >/dev/null || die "mkckpt small"
# a Qwen2-MoE whose config makes layer 1 dense while the file has its experts
"$B/wt-mkckpt" --family qwen2_moe --out "$T/small/badmoe" >/dev/null || die "mkckpt badmoe"
sed -i '/"mlp_only_layers": \[$/,/\]/c\  "mlp_only_layers": [0, 1],' "$T/small/badmoe/config.json"
grep -q '"mlp_only_layers": \[0, 1\]' "$T/small/badmoe/config.json" || die "badmoe config"
"$B/weightctl" shard --model-dir "$T/models/big" --out "$T/ref.st" || die "shard big"

# --- 1. corruption in flight -> WT_EHASH, exit 1, no output file ---
# (wt-faultyd: the real server with a fault injected; weightd has no such flag)
[ -x "$B/tests/tools/wt-faultyd" ] || die "$B/tests/tools/wt-faultyd not built (make tests)"
WD_BIN="$B/tests/tools/wt-faultyd --corrupt-chunk 2" \
	start_weightd corrupt "$T/small" "$T/cache-c" tcp://127.0.0.1:0
"$B/weightctl" fetch --endpoint "$WD_URL" --model q --out "$T/c.st" --quiet 2>"$T/c.err"
rc=$?
[ "$rc" = 1 ] || die "corrupt: exit $rc, want 1: $(cat "$T/c.err")"
grep -q "WT_EHASH" "$T/c.err" || die "corrupt: no WT_EHASH in: $(cat "$T/c.err")"
grep -q "chunk" "$T/c.err" || die "corrupt: message does not name the chunk: $(cat "$T/c.err")"
[ ! -e "$T/c.st" ] || die "corrupt: output file written"
ls "$T"/c.st.tmp.* >/dev/null 2>&1 && die "corrupt: temp file left"
# the next fetch (hook fired once) succeeds
"$B/weightctl" fetch --endpoint "$WD_URL" --model q --out "$T/c.st" --quiet ||
	die "fetch after the corrupted one failed"
stop_weightd "$WD_PID"

# --- 2. SIGKILL mid-fetch, restart on the same cache and port -> completes ---
# with a token: it is checked per connection, so the client must greet the restarted daemon
start_weightd kill1 "$T/models" "$T/cache-k" tcp://127.0.0.1:0 --chunk-bytes 64K --auth-token s3cret
URL=$WD_URL
"$B/weightctl" manifest --endpoint "$URL" --model big 2>"$T/k.err"
rc=$?
[ "$rc" = 1 ] && grep -q WT_EPERM "$T/k.err" || die "no token: exit $rc: $(cat "$T/k.err")"
"$B/weightctl" manifest --endpoint "$URL" --model big --token s3cret >/dev/null || die "warm the cache"
# the token without the command line: WEIGHTCTL_TOKEN, --token-file
WEIGHTCTL_TOKEN=s3cret "$B/weightctl" manifest --endpoint "$URL" --model big >/dev/null ||
	die "token from WEIGHTCTL_TOKEN"
printf 's3cret\n' >"$T/tok" && chmod 600 "$T/tok"
"$B/weightctl" manifest --endpoint "$URL" --model big --token-file "$T/tok" >/dev/null ||
	die "token from --token-file"
printf 'wrong\n' >"$T/tok.bad"
"$B/weightctl" manifest --endpoint "$URL" --model big --token-file "$T/tok.bad" 2>"$T/k.err"
rc=$?
[ "$rc" = 1 ] && grep -q WT_EPERM "$T/k.err" || die "wrong --token-file: exit $rc"
"$B/weightctl" fetch --endpoint "$URL" --model big --out "$T/k.st" --window 1 --quiet \
	--retries 50 --timeout-ms 5000 --token s3cret --verbose 2>"$T/k.err" &
FP=$!
# kill once a few MiB of the shard have arrived (the temp file grows)
for _ in $(seq 1 400); do
	sz=$(stat -c %s "$T/k.st.tmp.$FP" 2>/dev/null || echo 0)
	[ "$sz" -gt 4000000 ] && break
	sleep 0.01
done
kill -0 "$FP" 2>/dev/null || die "fetch finished before the kill; use a bigger fixture"
kill -9 "$WD_PID"
wait "$WD_PID" 2>/dev/null
sleep 0.5
start_weightd kill2 "$T/models" "$T/cache-k" "$URL" --chunk-bytes 64K --auth-token s3cret
wait "$FP"
rc=$?
[ "$rc" = 0 ] || die "fetch across a daemon restart: exit $rc: $(cat "$T/k.err")"
cmp -s "$T/ref.st" "$T/k.st" || die "fetch across a restart differs from weightctl shard"
grep "weightctl fetch:" "$T/k.err" | tail -n1
# several connections: each one says Hello with the token
"$B/weightctl" fetch --endpoint "$URL" --model big --out "$T/k3.st" --window 6 --connections 3 \
	--quiet --token s3cret 2>"$T/k3.err" || die "fetch over 3 connections: $(cat "$T/k3.err")"
cmp -s "$T/ref.st" "$T/k3.st" || die "fetch over 3 connections differs from weightctl shard"
stop_weightd "$WD_PID"

# --- 3. fail-over: the first endpoint is dead ---
start_weightd fo "$T/small" "$T/cache-f"
DEAD="ipc://$T/nobody.ipc"
"$B/weightctl" fetch --endpoint "$DEAD" --endpoint "$WD_URL" --model q --out "$T/f1.st" --quiet \
	2>"$T/f.err" || die "fail-over (dead first): $(cat "$T/f.err")"
"$B/weightctl" fetch --endpoint "$WD_URL" --endpoint "$DEAD" --model q --out "$T/f2.st" --quiet \
	2>"$T/f.err" || die "fail-over (dead second): $(cat "$T/f.err")"
"$B/weightctl" shard --model-dir "$T/small/q" --out "$T/fref.st" || die "shard q"
cmp -s "$T/fref.st" "$T/f1.st" && cmp -s "$T/fref.st" "$T/f2.st" || die "fail-over output differs"
# all dead: retried for the retry budget (default 30 s), then WT_EUNAVAIL
s0=$(date +%s%N)
"$B/weightctl" fetch --endpoint "$DEAD" --model q --out "$T/f3.st" --quiet --retry-budget-ms 1000 \
	2>"$T/f.err"
rc=$?
ms=$((($(date +%s%N) - s0) / 1000000))
[ "$rc" = 1 ] && grep -q WT_EUNAVAIL "$T/f.err" && grep -q "retry budget 1000 ms" "$T/f.err" ||
	die "all dead: exit $rc: $(cat "$T/f.err")"
[ "$ms" -ge 900 ] || die "all dead: gave up after $ms ms, before the 1000 ms retry budget"

# --- 4. exit codes: unknown model 1, impossible layout 3, bad flag 2 ---
"$B/weightctl" fetch --endpoint "$WD_URL" --model nope --out "$T/x.st" --quiet 2>"$T/x.err"
rc=$?
[ "$rc" = 1 ] && grep -q WT_ENOTFOUND "$T/x.err" || die "unknown model: exit $rc: $(cat "$T/x.err")"
"$B/weightctl" fetch --endpoint "$WD_URL" --model q --tp-size 3 --out "$T/x.st" --quiet 2>"$T/x.err"
rc=$?
[ "$rc" = 3 ] || die "tp 3: exit $rc, want 3: $(cat "$T/x.err")"
[ ! -e "$T/x.st" ] || die "refused layout left a file"
# the same refusal exits 3 for shard and fetch alike: a checkpoint its family
# refuses (WT_EUNSUPPORTED from the daemon's planner), and an invalid rank
"$B/weightctl" shard --model-dir "$T/small/badmoe" --out "$T/x.st" 2>"$T/s.err"
rc=$?
[ "$rc" = 3 ] || die "shard badmoe: exit $rc, want 3: $(cat "$T/s.err")"
"$B/weightctl" fetch --endpoint "$WD_URL" --model badmoe --out "$T/x.st" --quiet 2>"$T/x.err"
rc=$?
[ "$rc" = 3 ] && grep -q "WT_EUNSUPPORTED" "$T/x.err" ||
	die "fetch badmoe: exit $rc, want 3: $(cat "$T/x.err")"
"$B/weightctl" manifest --endpoint "$WD_URL" --model badmoe >/dev/null 2>&1
rc=$?
[ "$rc" = 3 ] || die "manifest badmoe: exit $rc, want 3"
for cmd in fetch shard; do
	if [ $cmd = fetch ]; then src=(--endpoint "$WD_URL" --model q --quiet); else src=(--model-dir "$T/small/q"); fi
	"$B/weightctl" $cmd "${src[@]}" --tp-size 2 --tp-rank 2 --out "$T/x.st" 2>/dev/null
	rc=$?
	[ "$rc" = 3 ] || die "$cmd --tp-rank 2 of 2: exit $rc, want 3"
done
[ ! -e "$T/x.st" ] || die "refused layout left a file"
"$B/weightctl" fetch --endpoint "$WD_URL" --model q --bogus 2>/dev/null
[ $? = 2 ] || die "unknown flag: want exit 2"
"$B/weightctl" fetch --endpoint "$WD_URL" --model q --out "$T/x.st" --connections 17 2>"$T/x.err"
[ $? = 2 ] && grep -q "1..16" "$T/x.err" || die "--connections 17: want exit 2: $(cat "$T/x.err")"
"$B/weightctl" manifest --endpoint "$WD_URL" --model q --tp-size 2 --tp-rank 1 >"$T/m.txt" ||
	die "manifest"
grep -q "^rank: tp_rank=1,ep_rank=0" "$T/m.txt" || die "manifest: no rank line"
grep -q "qkv_proj.weight" "$T/m.txt" || die "manifest: no fused qkv tensor"
"$B/weightctl" admin --endpoint "$WD_URL" verify >"$T/a.txt" || die "admin verify: $(cat "$T/a.txt")"
grep -q "bad=0" "$T/a.txt" || die "admin verify output: $(cat "$T/a.txt")"
# reclaim on a cache holding layouts: nothing is lost, the disk does not grow
"$B/weightctl" admin --endpoint "$WD_URL" reclaim >"$T/r.txt" || die "admin reclaim: $(cat "$T/r.txt")"
read -r before after live < <(sed -n 's/^disk_before=\([0-9]*\) disk_after=\([0-9]*\) live=\([0-9]*\).*/\1 \2 \3/p' "$T/r.txt")
[ -n "$live" ] && [ "$live" -gt 0 ] && [ "$after" -le "$before" ] && [ "$after" -ge "$live" ] ||
	die "admin reclaim numbers: $(cat "$T/r.txt")"
"$B/weightctl" admin --endpoint "$WD_URL" verify >"$T/a.txt" && grep -q "bad=0" "$T/a.txt" ||
	die "verify after reclaim: $(cat "$T/a.txt")"
stop_weightd "$WD_PID"
echo "fetch_faults.sh: ok"
