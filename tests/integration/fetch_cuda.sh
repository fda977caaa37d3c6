#!/usr/bin/env bash
# fetch_cuda.sh — `weightctl fetch --cuda-device N` against a real weightd.
# WT_CUDART naming a missing runtime: exit 1, "CUDA runtime not found" naming it.
# Without a usable GPU (no nvidia-smi listing one): exit 1 with WT_EDEVICE and a
# message naming the cause and the fix, before any server is asked. With one:
# exit 0 and a summary line with the same tensor count and bytes as the
# verified file fetch of the same rank. Both: --out with --cuda-device is exit 2.
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
mkdir -p "$T/models"
"$B/wt-mkckpt" --family qwen2 --out "$T/models/q" >/dev/null || die "mkckpt"
start_weightd cuda "$T/models" "$T/cache"

"$B/weightctl" fetch --endpoint "$WD_URL" --model q --cuda-device 0 --out "$T/x.st" \
	2>"$T/u.err" >/dev/null
rc=$?
[ "$rc" = 2 ] || die "--out with --cuda-device: exit $rc, want 2: $(cat "$T/u.err")"

# the CUDA runtime is loaded at run time: a missing one is a clear WT_EDEVICE (exit 1)
WT_CUDART=$T/no/libcudart.so.99 "$B/weightctl" fetch --endpoint "$WD_URL" --model q \
	--cuda-device 0 2>"$T/r.err" >/dev/null
rc=$?
[ "$rc" = 1 ] && grep -q "CUDA runtime not found: $T/no/libcudart.so.99" "$T/r.err" &&
	grep -q WT_CUDART "$T/r.err" || die "missing runtime: exit $rc: $(cat "$T/r.err")"

if nvidia-smi -L >/dev/null 2>&1; then
	"$B/weightctl" fetch --endpoint "$WD_URL" --model q --tp-size 2 --tp-rank 1 \
		--out "$T/r1.st" --quiet --verbose 2>"$T/f.err" || die "file fetch: $(cat "$T/f.err")"
	want=$(grep -o '[0-9]* tensors, [0-9]* bytes' "$T/f.err")
	"$B/weightctl" fetch --endpoint "$WD_URL" --model q --tp-size 2 --tp-rank 1 \
		--cuda-device 0 >"$T/c.out" 2>"$T/c.err" || die "cuda fetch: $(cat "$T/c.err")"
	cat "$T/c.out"
	grep -q "$want on cuda device 0" "$T/c.out" ||
		die "cuda summary '$(cat "$T/c.out")' does not say '$want on cuda device 0'"
	"$B/weightctl" fetch --endpoint "$WD_URL" --model q --cuda-device 1023 2>"$T/n.err"
	rc=$?
	[ "$rc" = 1 ] && grep -q WT_EINVAL "$T/n.err" ||
		die "device 1023: exit $rc: $(cat "$T/n.err")"
	echo "fetch_cuda: device fetch ok"
else
	"$B/weightctl" fetch --endpoint "$WD_URL" --model q --cuda-device 0 2>"$T/c.err" >"$T/c.out"
	rc=$?
	[ "$rc" = 1 ] || die "no GPU: exit $rc, want 1: $(cat "$T/c.err")"
	grep -q "WT_EDEVICE" "$T/c.err" || die "no WT_EDEVICE in: $(cat "$T/c.err")"
	grep -q "use the host or file sink" "$T/c.err" || die "no fix named in: $(cat "$T/c.err")"
	grep -Eq "no usable CUDA device|build with nvcc" "$T/c.err" ||
		die "no cause named in: $(cat "$T/c.err")"
	[ ! -s "$T/c.out" ] || die "no GPU: printed a summary: $(cat "$T/c.out")"
	cat "$T/c.err"
	# the device is checked before the server: a dead endpoint gives the same error
	"$B/weightctl" fetch --endpoint "ipc://$T/nobody.ipc" --model q --cuda-device 0 \
		2>"$T/d.err"
	rc=$?
	[ "$rc" = 1 ] && grep -q WT_EDEVICE "$T/d.err" || die "dead endpoint: exit $rc: $(cat "$T/d.err")"
	echo "fetch_cuda: no usable device here: clear error, exit 1"
fi
stop_weightd "$WD_PID"
