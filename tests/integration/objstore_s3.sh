#!/usr/bin/env bash
# s3:// store end to end against moto (in-process S3 with SigV4 checking,
# objstore_s3.py): weightctl inspect and shard on s3://bucket/prefix agree
# with the local folder; weightd --model llama=s3://... answers fetch like
# weightctl shard; a wrong secret is WT_EPERM without leaking it.
# moto missing: pip install 'moto[server]'; if that fails too, this FAILS
# under CI=true and is skipped (loudly) otherwise.
set -u
B=${WT_BUILD:-build}
ME=objstore_s3.sh
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/objstore_lib.bash"
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-objs3-XXXXXX")
trap 'exec {H[1]}>&- 2>/dev/null; [ -n "${H_PID:-}" ] && kill "$H_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT

if ! python3 -c 'import moto.server, boto3, flask_cors' 2>/dev/null; then
	echo "$ME: moto missing; pip install 'moto[server]'"
	python3 -m pip install -q 'moto[server]' >/dev/null 2>&1 ||
		python3 -m pip install -q --break-system-packages 'moto[server]' >/dev/null 2>&1
	if ! python3 -c 'import moto.server, boto3' 2>/dev/null; then
		[ "${CI:-}" = true ] && fail "moto is not installable here (CI=true: not skipping)"
		echo "$ME: SKIPPED: moto not available (pip install 'moto[server]')"
		exit 77 # counted as skipped, not passed (scripts/run-tests.sh)
	fi
fi

M=$T/llama
"$B/wt-mkckpt" --family llama --seed 11 --out "$M" >/dev/null || fail "wt-mkckpt"
coproc H { python3 "$HERE/objstore_s3.py" --bucket wt-models --prefix hf/llama --upload "$M" --auth 2>"$T/moto.err"; }
H_PID=$H_PID
read -r -t 40 -u "${H[0]}" ready ep id secret || fail "moto did not start: $(tail -3 "$T/moto.err")"
[ "$ready" = READY ] || fail "moto: $ready $ep"
export AWS_ENDPOINT_URL=$ep AWS_ACCESS_KEY_ID=$id AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=us-east-1
unset AWS_SESSION_TOKEN WEIGHTD_S3_ENDPOINT AWS_ENDPOINT_URL_S3

local_out=$("$B/weightctl" inspect "$M") || fail "inspect local"
s3_out=$("$B/weightctl" inspect s3://wt-models/hf/llama) || fail "inspect s3: exit $?"
echo "$s3_out"
[ "$(inspect_body "$local_out")" = "$(inspect_body "$s3_out")" ] ||
	fail "inspect differs: $(diff <(inspect_body "$local_out") <(inspect_body "$s3_out"))"
r1=$(sed -n 's/^revision: *//p' <<<"$s3_out")
r2=$("$B/weightctl" inspect s3://wt-models/hf/llama/ | sed -n 's/^revision: *//p')
[ ${#r1} = 64 ] && [ "$r1" = "$r2" ] || fail "revision not stable: '$r1' vs '$r2'"

L="--tp-size 2 --tp-rank 0 --quant int8-channel"
"$B/weightctl" shard --model-dir "$M" $L --out "$T/local.st" || fail "shard local"
"$B/weightctl" shard --model-dir s3://wt-models/hf/llama $L --out "$T/s3.st" || fail "shard s3"
same_tensors "$T/local.st" "$T/s3.st" || fail "shard over s3 differs from local"
weightd_check llama s3://wt-models/hf/llama "$T/local.st" $L

# re-upload config.json with a change: a new revision
sed 's/"vocab_size"/ "vocab_size"/' "$M/config.json" >"$T/config.json"
echo "put hf/llama/config.json $T/config.json" >&"${H[1]}"
read -r -t 20 -u "${H[0]}" reply && [ "$reply" = OK ] || fail "re-upload: $reply"
r3=$("$B/weightctl" inspect s3://wt-models/hf/llama | sed -n 's/^revision: *//p')
[ ${#r3} = 64 ] && [ "$r3" != "$r1" ] || fail "revision did not change after re-upload: $r3"

AWS_SECRET_ACCESS_KEY=wrong-secret-xyz "$B/weightctl" inspect s3://wt-models/hf/llama 2>"$T/err"
[ $? = 1 ] || fail "wrong secret: want exit 1"
grep -q "WT_EPERM.*AWS_ACCESS_KEY_ID" "$T/err" || fail "wrong secret: $(cat "$T/err")"
grep -q "wrong-secret-xyz" "$T/err" && fail "the secret leaked into the message"
"$B/weightctl" inspect s3://wt-models/hf/nope 2>"$T/err"
grep -q "WT_ENOTFOUND" "$T/err" || fail "missing model: $(cat "$T/err")"
echo "$ME: ok"
