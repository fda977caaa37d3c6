#!/usr/bin/env bash
# harness_watchdog.sh — fetch_lib/common.sh's watchdog reports a stuck script and unsticks it:
# a script that waits on a command past WT_WATCHDOG_S gets the report (its last `step`, the
# command line of each child, the daemon's log tail) and the stuck command is killed, while the
# daemon it started is left serving (a fetch after it succeeds).
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
cat >"$T/stuck.sh" <<SH
. "$(cd "$(dirname "$0")" && pwd)/fetch_lib/common.sh"
mkdir -p "\$T/models"
"\$B/wt-mkckpt" --family llama --out "\$T/models/llama" >/dev/null || die "wt-mkckpt"
start_weightd wd "\$T/models" "\$T/cache"
step "a stuck command (sleep 60)"
sleep 60
echo "stuck command exit \$?"
"\$B/weightctl" fetch --endpoint "\$WD_URL" --model llama --tp-size 2 --tp-rank 1 \
	--out "\$T/r1.st" --quiet && echo "fetch after the report: ok"
SH
t0=$(date +%s)
WT_WATCHDOG_S=2 timeout 50 bash "$T/stuck.sh" >"$T/out.txt" 2>&1
rc=$?
took=$(($(date +%s) - t0))
[ "$rc" = 0 ] || { cat "$T/out.txt"; die "the stuck script exit $rc, want 0 after the watchdog"; }
[ "$took" -lt 40 ] || die "the stuck script took $took s: the watchdog did not kill its command"
for want in "stuck.sh: WATCHDOG: still running after 2 s; last step: a stuck command (sleep 60)" \
	"weightd --listen tcp://127.0.0.1:0" "== pid [0-9]*: sleep 60" "wd.log (last 40 lines)" \
	"weightd: listening on tcp://127.0.0.1:" "stuck command exit 137" "fetch after the report: ok"; do
	grep -q -- "$want" "$T/out.txt" || { cat "$T/out.txt"; die "report lacks '$want'"; }
done
echo "harness_watchdog.sh: ok (report and unstick after 2 s; the script ended in $took s)"
