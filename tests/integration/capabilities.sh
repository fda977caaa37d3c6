#!/usr/bin/env bash
# Raw serving, mode auto|partitioned|raw and weightctl capabilities against a real
# weightd: a raw fetch equals the checkpoint's tensors byte for byte (names, dtypes,
# shapes, bytes, compared with the safetensors files), a subset by --include; an
# unknown architecture (FooForCausalLM) falls back to raw under --mode auto with the
# planner's reason and fails with it under partitioned (exit 3); capabilities text
# and --json for a dense model, a MoE, an FP8-block checkpoint and the unknown one,
# offline and remote (plan only: nothing is produced).
set -u
B=$(cd "${WT_BUILD:-build}" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-caps-XXXXXX")
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "capabilities.sh: FAIL: $*"; [ -f "$T/out" ] && cat "$T/out" "$T/err"; exit 1; }
EP="ipc://$T/w.sock"
W() { "$B/weightctl" "$@" >"$T/out" 2>"$T/err"; }
J() { python3 -c "import json,sys; d=json.load(open('$T/out')); c={x['name']:x for x in d['capabilities']}; $1" \
	|| fail "json: $1"; }

for f in llama mixtral deepseek_v3; do
	"$B/wt-mkckpt" --family $f --out "$T/models/$f" >/dev/null || fail "mkckpt $f"
done
"$B/wt-mkckpt" --family llama --out "$T/models/foo" --seed 7 >/dev/null || fail "mkckpt foo"
sed -i 's/LlamaForCausalLM/FooForCausalLM/; s/"model_type": *"llama"/"model_type": "foo"/' \
	"$T/models/foo/config.json"
grep -q FooForCausalLM "$T/models/foo/config.json" || fail "foo config"

# ---- offline capabilities ----
W capabilities --model-dir "$T/models/llama" --tp-size 2 || fail "caps llama: exit $?"
grep -q "^partitioned(tp=2,ep=1) *yes" "$T/out" || fail "llama tp2 partitioned"
for q in none fp8-tensor fp8-channel fp8-block int8-channel int4-group; do
	grep -q "^quant:$q *yes" "$T/out" || fail "llama quant $q"
done
grep -q "^prequant-passthrough *no .*not pre-quantized" "$T/out" || fail "llama pass-through"
grep -q "^raw *yes" "$T/out" && grep -q "^in-place-update *yes .*partitioned" "$T/out" ||
	fail "llama raw/update"
grep -q "^cuda-sink *\(yes\|no  WT_EDEVICE\)" "$T/out" || fail "cuda-sink line"
W capabilities --model-dir "$T/models/llama" --tp-size 3 --json || fail "caps llama tp3 json"
J "assert not c['partitioned(tp=3,ep=1)']['available']; assert 'WT_ELAYOUT' in c['quant:none']['reason'] and 'does not divide num_attention_heads 8' in c['quant:none']['reason']; assert c['raw']['available']; assert c['in-place-update']['available'] and 'raw' in c['in-place-update']['reason']; assert d['model']=='llama' and d['layout'].startswith('tp=3,')"
W capabilities --model-dir "$T/models/mixtral" --ep-size 8 --json || fail "caps mixtral"
J "assert not c['partitioned(tp=1,ep=8)']['available'] and 'exceeds the 6 routed experts' in c['partitioned(tp=1,ep=8)']['reason'], c; assert c['raw']['available']"
W capabilities --model-dir "$T/models/mixtral" --ep-size 2 --tp-size 2 --json || fail "caps mixtral 2x2"
J "assert c['partitioned(tp=2,ep=2)']['available'] and c['quant:fp8-channel']['available']"
W capabilities --model-dir "$T/models/deepseek_v3" --json || fail "caps deepseek"
J "p=c['prequant-passthrough']; assert p['available'] and 'fp8-block' in p['reason'], p; q=c['quant:int4-group']; assert not q['available'] and 'WT_ELAYOUT' in q['reason'] and 'group_size 128' in q['reason'], q; assert c['quant:fp8-block']['available']"
W capabilities --model-dir "$T/models/foo" --tp-size 2 || fail "caps foo: exit $?"
grep -q "^partitioned(tp=2,ep=1) *no  WT_EUNSUPPORTED: architecture 'FooForCausalLM'" "$T/out" ||
	fail "foo partitioned"
grep -q "^raw *yes" "$T/out" && grep -q "^in-place-update *yes .*raw layout" "$T/out" ||
	fail "foo raw/update"
W capabilities --model-dir "$T/nosuch"; [ $? = 1 ] || fail "caps on a missing folder"

# ---- daemon ----
"$B/weightd" --listen "$EP" --models-dir "$T/models" --cache-dir "$T/cache" \
	--ready-file "$T/ready" --cache-max-bytes 256M 2>"$T/daemon.err" &
pid=$!
for _ in $(seq 200); do [ -s "$T/ready" ] && break; sleep 0.05; done
[ -s "$T/ready" ] || fail "weightd did not start: $(cat "$T/daemon.err")"

# partitioned (the default) fails with the planner's message; auto falls back to raw
W manifest --endpoint "$EP" --model foo --tp-size 2 --tp-rank 1; rc=$?
[ $rc = 3 ] && grep -q "architecture 'FooForCausalLM' .* is not supported.*(WT_EUNSUPPORTED)$" \
	"$T/err" || fail "partitioned foo: exit $rc"
W manifest --endpoint "$EP" --model foo --tp-size 2 --tp-rank 1 --mode partitioned; rc=$?
[ $rc = 3 ] || fail "--mode partitioned foo: exit $rc"
W manifest --endpoint "$EP" --model foo --tp-size 2 --tp-rank 1 --mode auto --verbose ||
	fail "auto foo: exit $?"
grep -q "^layout: raw$" "$T/out" && grep -q "^rank: tp_rank=0,ep_rank=0$" "$T/out" ||
	fail "auto foo: not raw"
grep -q "^mode: raw partitioned refused (WT_EUNSUPPORTED): .*FooForCausalLM" "$T/out" ||
	fail "auto foo: mode line"
grep -q "mode auto: serving raw tensors: partitioned refused (WT_EUNSUPPORTED)" "$T/err" ||
	fail "auto foo: not logged"
W manifest --endpoint "$EP" --model llama --tp-size 2 --mode auto || fail "auto llama"
grep -q "^layout: tp=2,ep=1" "$T/out" && grep -q "^mode: partitioned$" "$T/out" ||
	fail "auto llama: not partitioned"
# auto falls back on a layout the model cannot take (WT_ELAYOUT) too
W manifest --endpoint "$EP" --model llama --tp-size 3 --mode auto || fail "auto llama tp3"
grep -q "^mode: raw partitioned refused (WT_ELAYOUT): .*tp_size 3 does not divide" "$T/out" ||
	fail "auto llama tp3: mode line"
# an unknown model is no planner refusal: no fallback
W manifest --endpoint "$EP" --model nosuch --mode auto; rc=$?
[ $rc = 1 ] && grep -q "(WT_ENOTFOUND)$" "$T/err" || fail "auto unknown model: exit $rc"

# raw fetches equal the checkpoint's tensors byte for byte
cat >"$T/cmp.py" <<'PY'
import json, struct, sys, glob
def load(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for k, v in h.items():
            if k == "__metadata__":
                continue
            f.seek(base + v["data_offsets"][0])
            out[k] = (v["dtype"], v["shape"], f.read(v["data_offsets"][1] - v["data_offsets"][0]))
        return out
got = load(sys.argv[1])
want = {}
for p in sorted(glob.glob(sys.argv[2] + "/*.safetensors")):
    want.update(load(p))
names = sys.argv[3:]
if names:
    want = {k: want[k] for k in names}
assert sorted(got) == sorted(want), (sorted(got)[:5], sorted(want)[:5])
for k in want:
    assert got[k] == want[k], k
print(len(got), "tensors equal")
PY
for m in foo llama deepseek_v3; do
	W fetch --endpoint "$EP" --model $m --mode raw --tp-size 2 --out "$T/$m.raw.safetensors" ||
		fail "raw fetch $m: exit $?"
	python3 "$T/cmp.py" "$T/$m.raw.safetensors" "$T/models/$m" >"$T/cmp.out" 2>&1 ||
		fail "raw $m differs: $(cat "$T/cmp.out")"
done
W fetch --endpoint "$EP" --model llama --mode raw --include model.norm.weight \
	--include lm_head.weight --out "$T/sub.safetensors" || fail "raw subset: exit $?"
python3 "$T/cmp.py" "$T/sub.safetensors" "$T/models/llama" model.norm.weight lm_head.weight \
	>"$T/cmp.out" 2>&1 || fail "raw subset differs: $(cat "$T/cmp.out")"
W manifest --endpoint "$EP" --model llama --mode raw --include model.norm.weight \
	--include lm_head.weight || fail "raw subset manifest"
grep -q "^layout: raw,include=\[lm_head.weight;model.norm.weight\]$" "$T/out" || fail "subset text"
W manifest --endpoint "$EP" --model llama --mode raw --include nosuch.weight; rc=$?
[ $rc = 1 ] && grep -q "include 'nosuch.weight': no such tensor.*(WT_ENOTFOUND)$" "$T/err" ||
	fail "raw unknown include: exit $rc"
W manifest --endpoint "$EP" --model llama --include model.norm.weight; rc=$?
[ $rc = 2 ] && grep -q "mode raw only" "$T/err" || fail "--include without raw: exit $rc"

# remote capabilities: planned by the daemon, nothing produced
W admin --endpoint "$EP" stats || fail "stats"
before=$(cat "$T/out")
W capabilities --endpoint "$EP" --model mixtral --tp-size 2 --json || fail "remote caps mixtral"
J "assert c['partitioned(tp=2,ep=1)']['available'] and c['quant:int4-group']['available'] and c['raw']['available']; assert not c['prequant-passthrough']['available'] and 'model-dir' in c['prequant-passthrough']['reason']"
W capabilities --endpoint "$EP" --model foo || fail "remote caps foo"
grep -q "^quant:int8-channel *no  WT_EUNSUPPORTED: .*FooForCausalLM" "$T/out" || fail "remote foo"
grep -q "^raw *yes" "$T/out" || fail "remote foo raw"
W capabilities --endpoint "$EP" --model nosuch; [ $? = 0 ] && grep -q "^raw *no  WT_ENOTFOUND" "$T/out" ||
	fail "remote caps of an unknown model"
W admin --endpoint "$EP" stats || fail "stats"
[ "$(grep -o '[0-9]* productions' "$T/out")" = "$(echo "$before" | grep -o '[0-9]* productions')" ] ||
	fail "capabilities produced shards: $before / $(cat "$T/out")"
kill -TERM "$pid"; wait "$pid"; rc=$?; pid=""
[ $rc = 0 ] || fail "weightd exit $rc"
echo "capabilities.sh: ok"
