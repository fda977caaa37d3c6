#!/usr/bin/env bash
# shard_interrupt.sh — SIGINT / SIGTERM to `weightctl shard` (offline): while
# it writes OUT (its temporary "OUT.tmp.PID" has bytes) and before (while it
# reads and slices): weightctl exits 130 / 143 saying so, and neither OUT nor
# its temporary file is left. Before, the signal killed weightctl and the
# temporary file of a write in progress stayed, as large as what was written.
# A write that wins the race (renamed before the signal) is retried: that is
# not the case under test.
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
mkdir -p "$T/models" "$T/out"
"$B/wt-mkckpt" --family llama --size-mb 128 --out "$T/models/llama" >/dev/null || die "wt-mkckpt"

# run.py SIG WHEN OUT: starts weightctl shard (SIGINT at its default, as for a
# terminal's foreground job), sends SIG once OUT.tmp.* has bytes (WHEN=write)
# or as soon as weightctl catches SIG (WHEN=start: /proc/PID/status SigCgt;
# before that the default action kills it, as any program while it starts);
# prints "RC MS" (MS: signal to exit), or "late" when the shard ended before
# the signal could be sent.
cat >"$T/run.py" <<'EOF'
import glob, os, signal, subprocess, sys, time
sig, when, out, model, ctl = sys.argv[1:6]
sig = getattr(signal, "SIG" + sig)
p = subprocess.Popen([ctl, "shard", "--model-dir", model, "--out", out],
                     stdout=subprocess.DEVNULL, stderr=open(out + ".log", "w"),
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
t_end = time.monotonic() + 60
def catches(pid, signum):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return int(line.split()[1], 16) >> (signum - 1) & 1 == 1
    except OSError:
        pass
    return False
if when == "start":
    while time.monotonic() < t_end and p.poll() is None and not catches(p.pid, sig):
        time.sleep(0.0002)
else:
    while time.monotonic() < t_end and p.poll() is None:
        if any(os.path.getsize(f) > 0 for f in glob.glob(out + ".tmp.*")):
            break
        time.sleep(0.0005)
if p.poll() is not None:
    print("late")
    sys.exit(0)
t0 = time.monotonic()
p.send_signal(sig)
rc = p.wait(30)
print(rc, int((time.monotonic() - t0) * 1000))
EOF

# interrupt SIG WHEN CODE
interrupt() {
	local sig=$1 when=$2 want=$3 out="$T/out/$1-$2.safetensors" res=late
	for _ in 1 2 3 4 5; do
		rm -f "$out" "$out".*
		res=$(python3 "$T/run.py" "$sig" "$when" "$out" "$T/models/llama" "$B/weightctl") ||
			die "$sig $when: driver failed"
		[ "$res" != late ] && break
	done
	[ "$res" != late ] || die "$sig $when: the shard was written before every signal (5 tries)"
	local rc=${res% *} ms=${res#* }
	echo "$sig during $when: weightctl exited $rc after $ms ms: $(cat "$out.log")"
	[ "$rc" = "$want" ] || die "$sig $when: exit $rc, want $want"
	ls "$out" "$out".tmp.* >/dev/null 2>&1 && die "$sig $when: left $(ls "$out" "$out".tmp.*)"
	grep -q "interrupted by SIG$sig" "$out.log" || die "$sig $when: no message"
}
interrupt INT write 130
interrupt TERM write 143
interrupt INT start 130
"$B/weightctl" shard --model-dir "$T/models/llama" --out "$T/out/whole.safetensors" >/dev/null ||
	die "a shard after the interrupts"
[ -s "$T/out/whole.safetensors" ] || die "no shard after the interrupts"
ls "$T/out/"*.tmp.* >/dev/null 2>&1 && die "left $(ls "$T/out/"*.tmp.*)"
echo "shard_interrupt.sh: ok"
