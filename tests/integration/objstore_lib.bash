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
