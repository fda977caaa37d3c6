#!/usr/bin/env bash
# http:// store end to end: weightctl inspect and shard on a model served by a
# local Range-capable server (objstore_server.py) agree with the local folder;
# a weightd serving --model llama=http://... answers fetch like weightctl shard;
# a server that ignores Range is refused with a clear error; redirects are
# followed, but an https:// store never follows one to http://; libcurl is
# loaded only for a URL, and a missing one is a clear error.
set -u
B=${WT_BUILD:-build}
ME=objstore_http.sh
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/objstore_lib.bash"
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-objhttp-XXXXXX")
SRV=
TLS=
trap 'for p in $SRV $TLS; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT

"$B/wt-mkckpt" --family llama --seed 7 --out "$T/srv/llama" >/dev/null || fail "wt-mkckpt"
# written a while ago: an object answered in the second of its last write is
# asked again a second later (README "Revision digest")
touch -d '10 seconds ago' "$T/srv/llama"/*
python3 "$HERE/objstore_server.py" --root "$T/srv" >"$T/port" 2>"$T/srv.err" &
SRV=$!
for _ in $(seq 100); do grep -q '^PORT ' "$T/port" && break; sleep 0.1; done
PORT=$(sed -n 's/^PORT //p' "$T/port")
[ -n "$PORT" ] || fail "server did not start: $(cat "$T/srv.err")"
URL=http://127.0.0.1:$PORT

local_out=$("$B/weightctl" inspect "$T/srv/llama") || fail "inspect local"
http_out=$("$B/weightctl" inspect "$URL/ok/llama") || fail "inspect $URL/ok/llama: exit $?"
echo "$http_out"
[ "$(inspect_body "$local_out")" = "$(inspect_body "$http_out")" ] ||
	fail "inspect differs: $(diff <(inspect_body "$local_out") <(inspect_body "$http_out"))"
r1=$(sed -n 's/^revision: *//p' <<<"$http_out")
r2=$("$B/weightctl" inspect "$URL/ok/llama/" | sed -n 's/^revision: *//p')
[ ${#r1} = 64 ] && [ "$r1" = "$r2" ] || fail "revision not stable: '$r1' vs '$r2'"

L="--tp-size 2 --tp-rank 1 --quant fp8-block"
"$B/weightctl" shard --model-dir "$T/srv/llama" $L --out "$T/local.st" || fail "shard local"
"$B/weightctl" shard --model-dir "$URL/ok/llama" $L --out "$T/http.st" || fail "shard http"
same_tensors "$T/local.st" "$T/http.st" || fail "shard over http differs from local"
weightd_check llama "$URL/ok/llama" "$T/local.st" $L

# libcurl is loaded when a URL is first opened (loader/curl_dl.h), not linked: no program
# needs it at start; a libcurl that cannot be loaded, or lacks a function, is exit 1 naming
# the library and the fix (WEIGHTD_LIBCURL names another one)
for p in weightctl weightd wt-mkckpt; do
	! readelf -d "$B/$p" | grep -q 'NEEDED.*libcurl' || fail "$p links libcurl at start"
done
WEIGHTD_LIBCURL=/nonexistent/libcurl.so.4 "$B/weightctl" inspect "$URL/ok/llama" >/dev/null \
	2>"$T/err"
rc=$?
[ $rc = 1 ] && grep -q "WT_EUNSUPPORTED.*need libcurl.*'/nonexistent/libcurl.so.4' (WEIGHTD_LIBCURL).*apt-get install" \
	"$T/err" || fail "libcurl missing: exit $rc: $(cat "$T/err")"
WEIGHTD_LIBCURL=libz.so.1 "$B/weightctl" inspect "$URL/ok/llama" >/dev/null 2>"$T/err"
rc=$?
[ $rc = 1 ] && grep -q "WT_EUNSUPPORTED.*'libz.so.1' (WEIGHTD_LIBCURL) has no curl_global_init" \
	"$T/err" || fail "not a libcurl: exit $rc: $(cat "$T/err")"
"$B/weightctl" inspect "$T/srv/llama" >/dev/null || fail "a folder needs no libcurl"

# a server that ignores Range: exit 1 and a message that says so
"$B/weightctl" inspect "$URL/norange/llama" >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 1 ] || fail "norange: exit $rc, want 1"
grep -q "WT_EIO.*config.json.*instead of 206" "$T/err" || fail "norange: stderr: $(cat "$T/err")"
"$B/weightctl" inspect "$URL/ok/missing" 2>"$T/err"
grep -q "WT_ENOTFOUND" "$T/err" || fail "missing model: $(cat "$T/err")"
redir_out=$("$B/weightctl" inspect "$URL/redir/llama") || fail "inspect through a redirect"
# a sharded model where a missing key is 403 (S3 credentials without s3:ListBucket)
nolist_out=$("$B/weightctl" inspect "$URL/nolist/llama") || fail "inspect with 403 for missing keys"
[ "$(inspect_body "$local_out")" = "$(inspect_body "$nolist_out")" ] || fail "nolist inspect differs"
[ "$(inspect_body "$local_out")" = "$(inspect_body "$redir_out")" ] || fail "redirected inspect differs"

# https with a private CA: refused until WEIGHTD_HTTP_CA_BUNDLE names it
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$T/key.pem" -out "$T/cert.pem" \
	>/dev/null 2>&1 || fail "openssl req"
python3 "$HERE/objstore_server.py" --root "$T/srv" --tls "$T/cert.pem" "$T/key.pem" \
	--redirect-to "$URL/ok" >"$T/tport" 2>"$T/tls.err" &
TLS=$!
for _ in $(seq 100); do grep -q '^PORT ' "$T/tport" && break; sleep 0.1; done
TPORT=$(sed -n 's/^PORT //p' "$T/tport")
[ -n "$TPORT" ] || fail "https server did not start: $(cat "$T/tls.err")"
WEIGHTD_HTTP_RETRIES=0 "$B/weightctl" inspect "https://127.0.0.1:$TPORT/ok/llama" 2>"$T/err"
grep -q "WT_EIO.*WEIGHTD_HTTP_CA_BUNDLE" "$T/err" || fail "untrusted https: $(cat "$T/err")"
cat "$T/err"
tls_out=$(WEIGHTD_HTTP_CA_BUNDLE=$T/cert.pem "$B/weightctl" inspect "https://127.0.0.1:$TPORT/ok/llama") ||
	fail "https inspect with WEIGHTD_HTTP_CA_BUNDLE"
[ "$(inspect_body "$local_out")" = "$(inspect_body "$tls_out")" ] || fail "https inspect differs"
# an https:// store redirected to http://: refused, nothing read in the clear
WEIGHTD_HTTP_CA_BUNDLE=$T/cert.pem WEIGHTD_HTTP_RETRIES=0 \
	"$B/weightctl" inspect "https://127.0.0.1:$TPORT/redir/llama" >"$T/out" 2>"$T/err" &&
	fail "an https store followed a redirect to http: $(cat "$T/out")"
grep -q "follows redirects to https only" "$T/err" || fail "https -> http redirect: $(cat "$T/err")"
cat "$T/err"
echo "$ME: ok"
