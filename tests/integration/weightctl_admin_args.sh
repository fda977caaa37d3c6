#!/usr/bin/env bash
# weightctl admin's cache ops against a real weightd: what each one takes.
# warm without layout flags produces the default layout (it used to send no
# layout at all: WT_EPROTO "request has no layout"); evict drops a model's
# shards of every layout, so a layout flag (which read as "this layout only"
# and still dropped them all) is refused, as is --model '' (which read as no
# model: evict dropped every model's shards); stats and verify work on the
# whole cache and refuse --model. Every refusal exits 2 before any request
# and leaves the cache as it was.
set -u
B=$(cd "${WT_BUILD:-build}" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-admargs-XXXXXX")
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid"; rm -rf "$T"' EXIT
fail() { echo "weightctl_admin_args.sh: FAIL: $*"; exit 1; }
EP="ipc://$T/w.sock"
W() { "$B/weightctl" admin --endpoint "$EP" "$@" >"$T/out" 2>"$T/err"; }
shards() { W stats || fail "stats: $(cat "$T/err")"; sed -n 's/.* shards=\([0-9]*\) .*/\1/p' "$T/out"; }

"$B/wt-mkckpt" --family llama --out "$T/models/llama" >/dev/null || fail "mkckpt llama"
"$B/wt-mkckpt" --family qwen2 --out "$T/models/q2" >/dev/null || fail "mkckpt qwen2"
"$B/weightd" --listen "$EP" --models-dir "$T/models" --cache-dir "$T/cache" \
	--ready-file "$T/ready" --cache-max-bytes 64M 2>"$T/daemon.err" &
pid=$!
for _ in $(seq 200); do [ -s "$T/ready" ] && break; sleep 0.05; done
[ -s "$T/ready" ] || fail "weightd did not start: $(cat "$T/daemon.err")"

# warm with no layout flag: the default layout (tp=1), one shard
W warm --model llama || fail "warm without layout flags: exit $?: $(cat "$T/err")"
grep -q "layout tp=1,ep=1,.*: 1 shards warm" "$T/out" || fail "warm default: $(cat "$T/out")"
W warm --model llama --tp-size 2 || fail "warm llama tp=2: $(cat "$T/err")"
W warm --model q2 --tp-size 2 || fail "warm q2 tp=2: $(cat "$T/err")"
[ "$(shards)" = 5 ] || fail "after warm: $(cat "$T/out")"

# refused with exit 2 and a message naming the fix; nothing evicted
refuse() {
	local pat=$1
	shift
	W "$@"
	local rc=$?
	[ $rc = 2 ] || fail "$*: exit $rc, want 2: $(cat "$T/out" "$T/err")"
	grep -qF -- "$pat" "$T/err" || fail "$*: stderr lacks '$pat': $(cat "$T/err")"
	[ "$(shards)" = 5 ] || fail "$*: the cache changed: $(cat "$T/out")"
}
refuse "--model '': name a model" evict --model ""
refuse "drop the layout flags (only warm takes them)" evict --model llama --tp-size 2
refuse "warm needs --model NAME" warm
refuse "verify re-hashes the whole cache; drop --model" verify --model nosuch
refuse "stats are of the whole cache; drop --model" stats --model llama
refuse "reclaim works on the whole cache" reclaim --model llama

# evict --model NAME: that model's shards of every layout, the other model's stay
W evict --model llama || fail "evict llama: $(cat "$T/err")"
grep -q "^evicted 3 shards of llama" "$T/out" || fail "evict llama: $(cat "$T/out")"
[ "$(shards)" = 2 ] || fail "after evict llama: $(cat "$T/out")"
W verify || fail "verify: $(cat "$T/err")"
grep -q "bad=0" "$T/out" || fail "verify: $(cat "$T/out")"
echo "weightctl_admin_args.sh: ok"
