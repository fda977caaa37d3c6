#!/usr/bin/env bash
# weightctl admin register/unregister against a real weightd process: one line
# of output, exit 0 / 2 (usage) / 1 (server error, named by its WT_E code);
# `weightctl models` says where each model comes from; a configuration override
# (--architecture) is served, saved and compared as part of the registration; a registration survives
# a restart on the same cache dir and an unregister is gone after one; a
# damaged registry line is skipped with file:line and the daemon serves; a
# registration that reads for seconds (an http source whose tensor reads are
# slow) reports its progress on stderr and prints its one line at the end.
set -u
B=$(cd "${WT_BUILD:-build}" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-wdreg-XXXXXX")
pid=""
hpid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$hpid" ] && kill "$hpid" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "weightctl_register.sh: FAIL: $*"; [ -f "$T/out" ] && cat "$T/out" "$T/err"; exit 1; }
EP="ipc://$T/w.sock"
W() { "$B/weightctl" "$@" >"$T/out" 2>"$T/err"; }
# `weightctl models` (in $T/out) lists NAME with ARCHITECTURE, URI, SOURCE and OVERRIDE
row() {
	awk -F'\t' -v n="$1" -v a="$2" -v u="$3" -v s="$4" -v o="$5" \
		'$1 == n && $2 == a && $6 == u && $7 == s && $8 == o { f = 1 } END { exit !f }' "$T/out"
}
MISOV='{"architectures":["MistralForCausalLM"]}'

start() {
	rm -f "$T/ready"
	"$B/weightd" --listen "$EP" --models-dir "$T/models" --cache-dir "$T/cache" \
		--ready-file "$T/ready" --cache-max-bytes 64M --register-roots "$T" "$@" \
		2>"$T/daemon.err" &
	pid=$!
	for _ in $(seq 200); do [ -s "$T/ready" ] && break; sleep 0.05; done
	[ -s "$T/ready" ] || fail "weightd did not start: $(cat "$T/daemon.err")"
}
stop() {
	kill -TERM "$pid"; wait "$pid"; local rc=$?; pid=""
	[ $rc = 0 ] || fail "weightd exit $rc"
}

"$B/wt-mkckpt" --family llama --out "$T/models/llama" >/dev/null || fail "mkckpt llama"
"$B/wt-mkckpt" --family qwen2 --out "$T/ext/q2" >/dev/null || fail "mkckpt qwen2"
# written a while ago (served over http below: an object answered in the
# second of its last write is asked again a second later)
touch -d '10 seconds ago' "$T/ext/q2"/*
URI="file://$T/ext/q2"
start

W admin --endpoint "$EP" register --model q2 --uri "$URI"; rc=$?
[ $rc = 0 ] || fail "register: exit $rc"
[ "$(wc -l <"$T/out")" = 1 ] || fail "register: not one line"
grep -q "^registered model 'q2' ($URI) revision [0-9a-f]*, 26 tensors; saved in $T/cache/registered-models$" \
	"$T/out" || fail "register output"
W models --endpoint "$EP" || fail "models"
grep -q "^q2	Qwen2ForCausalLM	26	.*	$URI	registered	-$" "$T/out" || fail "models: q2 registered"
grep -q "^llama	LlamaForCausalLM	.*	file://$T/models/llama	folder	-$" "$T/out" || fail "models: llama folder"
W admin --endpoint "$EP" register --model q2 --uri "$URI"; rc=$?
[ $rc = 0 ] && grep -q "nothing changed" "$T/out" || fail "same register again: exit $rc"
W admin --endpoint "$EP" register --model q2 --uri "file://$T/models/llama"; rc=$?
[ $rc = 1 ] && grep -q "(WT_EEXIST)$" "$T/err" || fail "register another URI: exit $rc"
W admin --endpoint "$EP" register --model nope --uri "file://$T/none"; rc=$?
[ $rc = 1 ] && grep -q "(WT_ENOTFOUND)$" "$T/err" || fail "register a bad URI: exit $rc"
W admin --endpoint "$EP" unregister --model llama; rc=$?
[ $rc = 1 ] && grep -q "models folder.*(WT_EPERM)$" "$T/err" || fail "unregister folder: exit $rc"
W admin --endpoint "$EP" unregister --model nosuch; rc=$?
[ $rc = 1 ] && grep -q "(WT_ENOTFOUND)$" "$T/err" || fail "unregister unknown: exit $rc"
# usage errors: exit 2 before any request
W admin --endpoint "$EP" register --model x; rc=$?
[ $rc = 2 ] && grep -q "needs --uri" "$T/err" || fail "register without --uri: exit $rc"
W admin --endpoint "$EP" unregister; rc=$?
[ $rc = 2 ] && grep -q "needs --model" "$T/err" || fail "unregister without --model: exit $rc"
W admin --endpoint "$EP" stats --uri "$URI"; rc=$?
[ $rc = 2 ] && grep -q "for register only" "$T/err" || fail "stats --uri: exit $rc"
W admin --endpoint "$EP" register --model x --uri "$URI" --tp-size 2; rc=$?
[ $rc = 2 ] && grep -q "no layout flags" "$T/err" || fail "register with a layout: exit $rc"

# a configuration override (vLLM's hf_overrides): the llama fixture registered as the
# Mistral class is served as that family, under a revision of its own, byte for byte what
# `weightctl shard --architecture` writes offline; it is part of the registration (the
# same override spelled otherwise is the same, another or none is WT_EEXIST) and is saved
# canonically after a tab
LURI="file://$T/models/llama"
W admin --endpoint "$EP" register --model mis --uri "$LURI" --architecture MistralForCausalLM; rc=$?
[ $rc = 0 ] || fail "register --architecture: exit $rc"
grep -q "^registered model 'mis' ($LURI, config override {\"architectures\":\[\"MistralForCausalLM\"\]}) revision " \
	"$T/out" || fail "register --architecture output"
printf 'mis=%s\t{"architectures":["MistralForCausalLM"]}\n' "$LURI" >"$T/line"
grep -qxFf "$T/line" "$T/cache/registered-models" || fail "override not saved after a tab"
W admin --endpoint "$EP" register --model mis --uri "$LURI" \
	--config-override '{ "architectures" : [ "MistralForCausalLM" ] }'; rc=$?
[ $rc = 0 ] && grep -q "nothing changed" "$T/out" || fail "same override spelled otherwise: exit $rc"
W admin --endpoint "$EP" register --model mis --uri "$LURI"; rc=$?
[ $rc = 1 ] && grep -q "(WT_EEXIST)$" "$T/err" || fail "register without the override: exit $rc"
W admin --endpoint "$EP" register --model mis2 --uri "$LURI" --config-override '[1]'; rc=$?
[ $rc = 1 ] && grep -q "a JSON object is needed.*(WT_EINVAL)$" "$T/err" || fail "bad override: exit $rc"
# a class no family cuts registers (as a folder whose config.json names it would) and its
# layouts are refused naming it
W admin --endpoint "$EP" register --model mis2 --uri "$LURI" --architecture NopeForCausalLM; rc=$?
[ $rc = 0 ] || fail "register an override naming an unknown class: exit $rc"
W manifest --endpoint "$EP" --model mis2 --tp-size 2 --tp-rank 0; rc=$?
[ $rc = 3 ] && grep -q "architecture 'NopeForCausalLM'.*(WT_EUNSUPPORTED)$" "$T/err" ||
	fail "manifest of an unknown class: exit $rc: $(cat "$T/err")"
W admin --endpoint "$EP" unregister --model mis2 || fail "unregister mis2"
W admin --endpoint "$EP" unregister --model q2 --architecture X; rc=$?
[ $rc = 2 ] && grep -q "for register only" "$T/err" || fail "unregister --architecture: exit $rc"
W models --endpoint "$EP" || fail "models with mis"
row mis MistralForCausalLM "$LURI" registered "$MISOV" ||
	fail "models: mis as Mistral, its override shown"
W fetch --endpoint "$EP" --model mis --tp-size 2 --tp-rank 1 --out "$T/mis1.safetensors" ||
	fail "fetch mis"
"$B/weightctl" shard --model-dir "$T/models/llama" --name mis --tp-size 2 --tp-rank 1 \
	--architecture MistralForCausalLM --out "$T/off1.safetensors" >/dev/null 2>&1 || fail "shard --architecture"
cmp -s "$T/mis1.safetensors" "$T/off1.safetensors" || fail "fetched mis differs from shard --architecture"
"$B/weightctl" shard --model-dir "$T/models/llama" --name mis --tp-size 2 --tp-rank 1 \
	--out "$T/plain1.safetensors" >/dev/null 2>&1 || fail "shard"
cmp -s "$T/mis1.safetensors" "$T/plain1.safetensors" && fail "the override did not reach the fetched shard"
# the use it is for: a DeepSeek-V3 checkpoint's MTP draft served from the target's own
# folder (vLLM's speculative config names it DeepSeekMTPModel), beside the target itself
"$B/wt-mkckpt" --family deepseek_v3 --out "$T/ext/ds3" >/dev/null || fail "mkckpt deepseek_v3"
W admin --endpoint "$EP" register --model ds3 --uri "file://$T/ext/ds3" || fail "register ds3"
W admin --endpoint "$EP" register --model ds3-mtp --uri "file://$T/ext/ds3" \
	--architecture DeepSeekMTPModel || fail "register ds3-mtp"
W manifest --endpoint "$EP" --model ds3-mtp --tp-size 2 --tp-rank 1 || fail "manifest of ds3-mtp"
grep -q "^model.layers.2.eh_proj.weight	" "$T/out" && grep -q "^model.layers.2.mtp_block.mlp.experts.w13_weight	" "$T/out" ||
	fail "ds3-mtp's manifest lacks the MTP layer: $(head -5 "$T/out")"
grep -q "^model.layers.0\." "$T/out" && fail "ds3-mtp's manifest holds a target layer"
W manifest --endpoint "$EP" --model ds3 --tp-size 2 --tp-rank 1 || fail "manifest of ds3"
grep -q "^model.layers.0\." "$T/out" && ! grep -q "^model.layers.2.eh_proj" "$T/out" || fail "ds3 is not the target"
W fetch --endpoint "$EP" --model ds3-mtp --tp-size 2 --tp-rank 1 --out "$T/mtp1.safetensors" ||
	fail "fetch ds3-mtp"
"$B/weightctl" shard --model-dir "$T/ext/ds3" --name ds3-mtp --tp-size 2 --tp-rank 1 \
	--architecture DeepSeekMTPModel --out "$T/mtpoff1.safetensors" >/dev/null 2>&1 || fail "shard ds3 --architecture"
cmp -s "$T/mtp1.safetensors" "$T/mtpoff1.safetensors" || fail "fetched ds3-mtp differs from shard --architecture"
W admin --endpoint "$EP" unregister --model ds3-mtp || fail "unregister ds3-mtp"
W admin --endpoint "$EP" unregister --model ds3 || fail "unregister ds3"
# MiMo's likewise (MiMoMTPModel: model.mtp_layers.0.*, the Qwen2 layer under mtp_block.)
"$B/wt-mkckpt" --family mimo --out "$T/ext/mimo" >/dev/null || fail "mkckpt mimo"
W admin --endpoint "$EP" register --model mimo-mtp --uri "file://$T/ext/mimo" \
	--architecture MiMoMTPModel || fail "register mimo-mtp"
W manifest --endpoint "$EP" --model mimo-mtp --tp-size 2 --tp-rank 1 || fail "manifest of mimo-mtp"
grep -q "^model.mtp_layers.0.input_proj.weight	" "$T/out" &&
	grep -q "^model.mtp_layers.0.mtp_block.self_attn.qkv_proj.weight	" "$T/out" ||
	fail "mimo-mtp's manifest lacks the MTP layer: $(head -5 "$T/out")"
grep -q "^model.layers\." "$T/out" && fail "mimo-mtp's manifest holds a target layer"
W fetch --endpoint "$EP" --model mimo-mtp --tp-size 2 --tp-rank 1 --out "$T/mm1.safetensors" ||
	fail "fetch mimo-mtp"
"$B/weightctl" shard --model-dir "$T/ext/mimo" --name mimo-mtp --tp-size 2 --tp-rank 1 \
	--architecture MiMoMTPModel --out "$T/mmoff1.safetensors" >/dev/null 2>&1 || fail "shard mimo --architecture"
cmp -s "$T/mm1.safetensors" "$T/mmoff1.safetensors" || fail "fetched mimo-mtp differs from shard --architecture"
W admin --endpoint "$EP" unregister --model mimo-mtp || fail "unregister mimo-mtp"
# a hand-edited line whose override is not canonical is skipped, naming it
printf 'hand=%s\t{ "architectures": ["MistralForCausalLM"] }\n' "$LURI" >>"$T/cache/registered-models"

# restart on the same cache: still registered and served; a damaged line is skipped
printf 'this line is damaged\n' >>"$T/cache/registered-models"
stop
start
grep -q "registered-models:6: no '='" "$T/daemon.err" || fail "damaged line not reported"
grep -q "registered-models:5: model 'hand': the config override is not in canonical form" \
	"$T/daemon.err" || fail "a non-canonical override not reported: $(cat "$T/daemon.err")"
W models --endpoint "$EP" || fail "models after restart (mis)"
grep -q "^mis	MistralForCausalLM	.*	$LURI	registered	{" "$T/out" || fail "mis lost its override at restart"
grep -q "^hand	" "$T/out" && fail "the non-canonical line was served"
W models --endpoint "$EP" || fail "models after restart"
grep -q "^q2	.*	registered	-$" "$T/out" || fail "q2 gone after restart"
W manifest --endpoint "$EP" --model q2 --tp-size 2 --tp-rank 1 || fail "manifest of q2 after restart"
grep -q "q2" "$T/out" || fail "manifest output"

W admin --endpoint "$EP" unregister --model q2; rc=$?
[ $rc = 0 ] || fail "unregister: exit $rc"
[ "$(wc -l <"$T/out")" = 1 ] || fail "unregister: not one line"
grep -q "^unregistered model 'q2' ($URI).*cached shards stay" "$T/out" || fail "unregister output"
stop
start
W models --endpoint "$EP" || fail "models after the second restart"
grep -q "^q2	" "$T/out" && fail "q2 listed after unregister + restart"
grep -q "^llama	" "$T/out" || fail "llama gone"
grep -q "damaged" "$T/cache/registered-models" && fail "damaged line kept after a rewrite"
stop

# a model key with a model_override (the configuration's form of the same override)
start --model "cfgmis=$LURI" --model-override 'cfgmis={"architectures": ["MistralForCausalLM"]}'
W models --endpoint "$EP" || fail "models with a model_override"
row cfgmis MistralForCausalLM "$LURI" config "$MISOV" ||
	fail "model_override not applied: $(cat "$T/out")"
W manifest --endpoint "$EP" --model cfgmis --tp-size 2 --tp-rank 1 || fail "manifest of cfgmis"
stop
# a models_dir folder takes its model_override by folder name: served as that class, byte for
# byte weightctl shard --architecture's
start --model-override 'llama={"architectures": ["MistralForCausalLM"]}'
W models --endpoint "$EP" || fail "models with a folder's model_override"
row llama MistralForCausalLM "file://$T/models/llama" folder "$MISOV" ||
	fail "the folder's model_override not applied: $(cat "$T/out")"
W fetch --endpoint "$EP" --model llama --tp-size 2 --tp-rank 1 --out "$T/fold1.safetensors" ||
	fail "fetch the overridden folder"
"$B/weightctl" shard --model-dir "$T/models/llama" --name llama --tp-size 2 --tp-rank 1 \
	--architecture MistralForCausalLM --out "$T/foldoff1.safetensors" >/dev/null 2>&1 ||
	fail "shard --architecture of the folder"
cmp -s "$T/fold1.safetensors" "$T/foldoff1.safetensors" ||
	fail "the folder's fetched rank differs from shard --architecture's"
stop
for bad in '../models/llama' '.hidden' 'nosuchfolder'; do
	"$B/weightd" --listen "$EP" --models-dir "$T/models" --cache-dir "$T/cache" \
		--model-override "$bad"'={"a": 1}' >"$T/out" 2>"$T/err"; rc=$?
	[ $rc = 2 ] && grep -q "which is not a folder of models_dir $T/models" "$T/err" ||
		fail "a model_override naming '$bad': exit $rc: $(cat "$T/err")"
done
"$B/weightd" --listen "$EP" --models-dir "$T/models" --cache-dir "$T/cache" \
	--model-override 'nomodel={"a": 1}' >"$T/out" 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q "model_override names 'nomodel', which no model key defines" "$T/err" ||
	fail "a model_override without its model: exit $rc: $(cat "$T/err")"

# a slow registration: /slow/ GETs over 64 KiB (the tensor bytes) wait 3 s
# each, well past the client's 1 s poll; the helper exits when this script's
# end of the fifo closes, even if the script is killed
mkfifo "$T/http.in"
python3 "$(dirname "$0")/objstore_server.py" --root "$T/ext" --slow-s 3 --stdin \
	<"$T/http.in" >"$T/http.port" &
hpid=$!
exec 7>"$T/http.in"
for _ in $(seq 100); do [ -s "$T/http.port" ] && break; sleep 0.05; done
port=$(awk '{print $2}' "$T/http.port")
[ -n "$port" ] || fail "objstore_server.py did not start"
start --register-hosts "127.0.0.1:$port"
W admin --endpoint "$EP" register --model slowq2 --uri "http://127.0.0.1:$port/slow/q2"; rc=$?
[ $rc = 0 ] || fail "slow register: exit $rc"
[ "$(wc -l <"$T/out")" = 1 ] && grep -q "^registered model 'slowq2' " "$T/out" ||
	fail "slow register output"
grep -Eq "^weightctl admin: registering slowq2: read for its revision, (.* of .* MiB \(.*%\)|size not known yet), [0-9]+ s$" \
	"$T/err" || fail "slow register: no progress line on stderr"
W models --endpoint "$EP" || fail "models after the slow register"
grep -q "^slowq2	Qwen2ForCausalLM	26	" "$T/out" || fail "slowq2 not served"
stop
exec 7>&-
wait "$hpid" 2>/dev/null; hpid=""
echo "weightctl_register.sh: ok"
