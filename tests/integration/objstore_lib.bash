# objstore_lib.bash — helpers sourced by objstore_http.sh and objstore_s3.sh
# (run-tests.sh runs only *.sh): fail, same_tensors A B (tensor names,
# dtypes, shapes and bytes of two safetensors files are equal; __metadata__
# names the source and may differ), inspect_body.

fail() { echo "${ME:-objstore}: FAIL: $*"; exit 1; }

same_tensors() {
	python3 - "$1" "$2" <<'PY'
import json, struct, sys
def load(p):
    b = open(p, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n]); h.pop("__metadata__", None)
    base = 8 + n
    return {k: (v["dtype"], v["shape"], b[base + v["data_offsets"][0]:base + v["data_offsets"][1]])
            for k, v in h.items()}
a, b = load(sys.argv[1]), load(sys.argv[2])
if a != b:
    print("tensors differ:", sorted(set(a) ^ set(b)) or [k for k in a if a[k] != b[k]][:5])
    sys.exit(1)
print(f"{len(a)} tensors identical")
PY
}

# inspect_body OUT: the summary without the lines that name the source
inspect_body() { grep -v -e '^model:' -e '^revision:' <<<"$1"; }

# weightd_check NAME URI LOCAL_SHARD LAYOUT...: a weightd serving NAME=URI
# (--model) answers `weightctl fetch` with a file byte-identical to
# `weightctl shard --model-dir URI` (same source, same revision), whose tensors
# equal LOCAL_SHARD (the local copy; only __metadata__'s revision differs).
# Needs $B, $T. Stops its weightd.
weightd_check() {
	local name=$1 uri=$2 local_st=$3
	shift 3
	mkdir -p "$T/wd-empty"
	rm -f "$T/wd.ready"
	"$B/weightd" --listen tcp://127.0.0.1:0 --models-dir "$T/wd-empty" --model "$name=$uri" \
		--cache-dir "$T/wd-cache-$name" --workers 2 --log-level warning \
		--ready-file "$T/wd.ready" 2>"$T/wd.log" &
	local pid=$!
	for _ in $(seq 300); do [ -s "$T/wd.ready" ] && break; sleep 0.05; done
	[ -s "$T/wd.ready" ] || { kill "$pid"; fail "weightd --model $name=$uri: $(cat "$T/wd.log")"; }
	local url
	url=$(head -n1 "$T/wd.ready")
	"$B/weightctl" fetch --endpoint "$url" --model "$name" "$@" --out "$T/fetch-$name.st" \
		--quiet 2>"$T/fetch.err"
	local rc=$?
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null
	[ $rc = 0 ] || fail "fetch $name from weightd ($uri): exit $rc: $(cat "$T/fetch.err") $(cat "$T/wd.log")"
	"$B/weightctl" shard --model-dir "$uri" "$@" --out "$T/shard-$name.st" || fail "shard $uri"
	cmp -s "$T/fetch-$name.st" "$T/shard-$name.st" ||
		fail "weightd fetch of $uri differs from weightctl shard of it"
	same_tensors "$T/fetch-$name.st" "$local_st" || fail "fetch of $uri differs from the local copy"
	echo "weightd --model $name=$uri: fetch == shard, tensors == local copy"
}
