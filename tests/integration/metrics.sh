#!/usr/bin/env bash
# metrics.sh — the operator endpoint with a real scrape (curl): /healthz,
# /readyz, /metrics after a cold and a warm fetch (counters, cache gauges,
# histograms), 404/405 for other paths and methods (with a body too), the
# probes answered while weightd holds over 1024 descriptors (select() could
# not watch them), a bad metrics_listen refused at start (exit 2).
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
command -v curl >/dev/null || die "curl missing (make deps)"
ulimit -n 4096 2>/dev/null || true # room for the descriptor check below
mkdir -p "$T/m"
"$B/wt-mkckpt" --family llama --out "$T/m/llama" --size-mb 2 >/dev/null || die "mkckpt"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start_weightd A "$T/m" "$T/cache" tcp://127.0.0.1:0 --metrics-listen "http://127.0.0.1:$port" \
	--stream-listen tcp://127.0.0.1:0 --max-connections 2000
grep -q "metrics on port $port" "$T/A.log" || die "no metrics line: $(cat "$T/A.log")"
M="http://127.0.0.1:$port"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$M/healthz")" = 200 ] || die "healthz"
[ "$(curl -s "$M/readyz")" = ready ] || die "readyz: $(curl -s "$M/readyz")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$M/nope")" = 404 ] || die "404"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$M/metrics")" = 405 ] || die "405"
# with a body: answered once the body is in (it was dropped: code 000)
[ "$(curl -s -o /dev/null -w '%{http_code}' -X PUT -d x "$M/metrics")" = 405 ] || die "PUT + body"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d abc "$M/healthz")" = 405 ] || die "POST + body"
# over 1024 descriptors in weightd (1100 connections that said the SP header)
if [ "$(ulimit -n)" -ge 4096 ]; then
	code=$(python3 - "${WD_URL##*:}" "$M" "$WD_PID" <<'PY'
import os, resource, socket, sys, time, urllib.request
port, url, pid = int(sys.argv[1]), sys.argv[2], sys.argv[3]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
socks = []
for _ in range(1100):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"\x00SP\x00\x00\x30\x00\x00")  # SP header: a req0 peer
    socks.append(s)
time.sleep(1.0)
n = len(os.listdir("/proc/%s/fd" % pid))
try:
    code = urllib.request.urlopen(url + "/healthz", timeout=5).status
except Exception as e:
    code = "failed (%r)" % e
print("%s with %d descriptors in weightd" % (code, n))
PY
)
	echo "healthz: $code"
	case "$code" in 200*) ;; *) die "healthz with over 1024 descriptors: $code" ;; esac
else
	echo "skip: ulimit -n $(ulimit -n) (< 4096) leaves no room for the descriptor check"
fi
for i in 1 2; do # cold, then warm
	"$B/weightctl" fetch --endpoint "$WD_URL" --model llama --tp-size 2 --tp-rank 1 \
		--out "$T/r1.st" --quiet || die "fetch $i"
done
# a warm fetch over the bulk stream
"$B/weightctl" fetch --endpoint "$WD_URL" --model llama --tp-size 2 --tp-rank 1 \
	--out "$T/r1s.st" --quiet --stream || die "fetch over the stream"
cmp "$T/r1.st" "$T/r1s.st" || die "stream fetch differs"
curl -s -D "$T/h" "$M/metrics" >"$T/metrics" || die "scrape"
grep -qi '^content-type: text/plain; version=0.0.4' "$T/h" || die "content type: $(cat "$T/h")"
val() { awk -v k="$1" '$1 == k {print $2}' "$T/metrics"; }
[ "$(val weightd_productions_total)" = 1 ] || die "productions: $(val weightd_productions_total)"
# models by state: the one folder model, served
[ "$(val 'weightd_models{state="available"}')" = 1 ] &&
	[ "$(val 'weightd_models{state="unavailable"}')" = 0 ] &&
	[ "$(val 'weightd_models{state="registering"}')" = 0 ] ||
	die "models by state: $(grep '^weightd_models' "$T/metrics")"
[ "$(val weightd_cache_shards)" = 2 ] || die "cache shards: $(val weightd_cache_shards)"
[ "$(val 'weightd_request_seconds_count{kind="manifest"}')" -ge 2 ] || die "manifest count"
chunks=$(val 'weightd_request_seconds_count{kind="chunk"}')
# chunk requests over messages; replies on the bulk stream are counted apart
[ "$chunks" -ge 1 ] &&
	[ "$chunks" = $(($(val weightd_chunk_replies_total) - $(val weightd_bulk_replies_total))) ] ||
	die "chunk histogram $chunks vs replies $(val weightd_chunk_replies_total)"
[ "$(val 'weightd_request_seconds_bucket{kind="chunk",le="+Inf"}')" = "$chunks" ] ||
	die "+Inf bucket != count"
[ "$(val weightd_production_seconds_count)" = 1 ] || die "production histogram"
[ "$(val weightd_production_output_bytes_total)" -gt 0 ] || die "production bytes"
[ "$(val weightd_source_bytes_read_total)" -gt 0 ] || die "source bytes"
[ "$(val weightd_source_rewrites_total)" = 0 ] || die "source rewrites: $(val weightd_source_rewrites_total)"
[ "$(val weightd_bulk_replies_total)" -gt 0 ] || die "bulk replies: $(val weightd_bulk_replies_total)"
# the warm fetches read the chunks' RAM copies: the first read of each was
# hashed, the stream fetch's were not hashed again (cache/README.md)
[ "$(val weightd_cache_memory_reads_total)" -gt 0 ] &&
	[ "$(val weightd_cache_memory_reads_total)" -lt "$(val weightd_cache_chunk_reads_total)" ] ||
	die "RAM reads $(val weightd_cache_memory_reads_total) of $(val weightd_cache_chunk_reads_total)"
[ "$(val weightd_bulk_replies_total)" -lt "$(val weightd_chunk_replies_total)" ] ||
	die "bulk replies are a part of all chunk replies"
# weightctl fetch --stream: one stream per connection (2 by default)
[ "$(val weightd_bulk_streams_total)" = 2 ] || die "bulk streams: $(val weightd_bulk_streams_total)"
[ "$(val weightd_writeback_bytes)" = 0 ] || die "write-behind RAM left: $(val weightd_writeback_bytes)"
[ "$(val weightd_writeback_peak_bytes)" -gt 0 ] || die "write-behind peak"
# released write-behind buffers are kept for the next production (test_writeback_pool)
[ "$(val weightd_writeback_kept_bytes)" -gt 0 ] || die "kept: $(val weightd_writeback_kept_bytes)"
[ -n "$(val weightd_writeback_buffers_reused_total)" ] || die "reused buffers: no metric"
[ "$(val weightd_writeback_prefaulted_bytes)" = 0 ] || die "prefaulted without writeback_prefault_bytes"
grep -q '^# TYPE weightd_request_seconds histogram' "$T/metrics" || die "TYPE line"
# buckets are cumulative (non-decreasing)
awk -F' ' '/^weightd_request_seconds_bucket\{kind="chunk"/ {if ($2 < last) bad=1; last=$2} END {exit bad}' \
	"$T/metrics" || die "buckets not cumulative"
stop_weightd "$WD_PID"
# a bad URL stops start-up with exit 2, naming the key
rc=0
"$B/weightd" --models-dir "$T/m" --cache-dir "$T/cache2" --metrics-listen ftp://x:1 \
	2>"$T/bad.log" || rc=$?
[ "$rc" = 2 ] || die "bad metrics_listen: exit $rc, want 2"

grep -q "metrics_listen" "$T/bad.log" || die "bad URL message: $(cat "$T/bad.log")"
echo "metrics: scraped $(wc -l <"$T/metrics") lines; manifest/chunk/production histograms ok"
echo "metrics: ok"
