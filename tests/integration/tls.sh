#!/usr/bin/env bash
# tls.sh — weightd over tls+tcp:// (nng's TLS) with certificates made here by
# openssl: a fetch over TLS is byte-identical to one over plain TCP and to
# `weightctl shard`; a client without the CA, or with a CA that did not sign
# the server, is refused; with tls_ca_file set (mutual TLS) a client without a
# certificate is refused and one with a certificate the CA signed is served.
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
command -v openssl >/dev/null || die "openssl missing (make deps)"
cd "$T" || die "cd"
mkcert() { # NAME CN CA_PREFIX: key + certificate signed by CA (or self-signed CA when CA_PREFIX = -)
	openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -subj "/CN=$2" -out "$1.csr" \
		-addext "subjectAltName=DNS:$2" >/dev/null 2>&1 || die "csr $1"
	if [ "$3" = - ]; then
		openssl x509 -req -in "$1.csr" -signkey "$1.key" -days 2 -out "$1.crt" \
			-extfile <(printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=keyCertSign,cRLSign\n') \
			>/dev/null 2>&1 || die "ca $1"
	else
		openssl x509 -req -in "$1.csr" -CA "$3.crt" -CAkey "$3.key" -CAcreateserial -days 2 \
			-out "$1.crt" -extfile <(printf 'subjectAltName=DNS:%s\n' "$2") >/dev/null 2>&1 ||
			die "sign $1"
	fi
	cat "$1.crt" "$1.key" >"$1.pem"
}
mkcert ca "weightd test CA" -
mkcert other "another CA" -
mkcert server localhost ca
mkcert client rank-0 ca
mkdir -p m
"$B/wt-mkckpt" --family llama --out m/llama --size-mb 4 >/dev/null || die "mkckpt"
"$B/weightctl" shard --model-dir m/llama --tp-size 2 --tp-rank 1 --quant fp8-block --out ref.st ||
	die "shard"
L=(--model llama --tp-size 2 --tp-rank 1 --quant fp8-block --quiet)

start_weightd A "$T/m" "$T/cache" tcp://127.0.0.1:0 --listen tls+tcp://127.0.0.1:0 \
	--tls-cert-key-file "$T/server.pem"
PLAIN=$(sed -n 1p "$T/A.ready")
TLS=$(sed -n 2p "$T/A.ready")
case "$TLS" in tls+tcp://127.0.0.1:[1-9]*) ;; *) die "ready file: '$TLS'" ;; esac
TLS=${TLS/127.0.0.1/localhost} # the certificate names localhost
"$B/weightctl" fetch --endpoint "$PLAIN" "${L[@]}" --out plain.st || die "plain fetch"
"$B/weightctl" fetch --endpoint "$TLS" "${L[@]}" --out tls.st --tls-ca-file ca.crt || die "tls fetch"
cmp -s plain.st tls.st || die "TLS fetch differs from the plain one"
cmp -s ref.st tls.st || die "TLS fetch differs from weightctl shard"
# no CA given: refused at open, naming the option
"$B/weightctl" fetch --endpoint "$TLS" "${L[@]}" --out x.st 2>err1 && die "no CA accepted"
grep -q "tls_ca_file" err1 || die "no-CA message: $(cat err1)"
# a CA that did not sign the server: the handshake fails, the client gives up
"$B/weightctl" fetch --endpoint "$TLS" "${L[@]}" --out x.st --tls-ca-file other.crt \
	--retry-budget-ms 1000 2>err2 && die "wrong CA accepted"
grep -q "WT_EUNAVAIL" err2 || die "wrong-CA message: $(cat err2)"
[ ! -e x.st ] || die "output written without a verified server"
stop_weightd "$WD_PID"

# mutual TLS: tls_ca_file makes client certificates required
start_weightd B "$T/m" "$T/cache" tls+tcp://127.0.0.1:0 --tls-cert-key-file "$T/server.pem" \
	--tls-ca-file "$T/ca.crt"
TLS=${WD_URL/127.0.0.1/localhost}
"$B/weightctl" fetch --endpoint "$TLS" "${L[@]}" --out y.st --tls-ca-file ca.crt \
	--retry-budget-ms 1000 2>err3 && die "client without a certificate accepted"
"$B/weightctl" fetch --endpoint "$TLS" "${L[@]}" --out m.st --tls-ca-file ca.crt \
	--tls-cert-key-file client.pem || die "client with a certificate refused"
cmp -s ref.st m.st || die "mutual-TLS fetch differs"
stop_weightd "$WD_PID"

# the bulk data plane over TLS: the stream is verified like the control
# connection (CA, the endpoint's server name; mutual TLS with tls_ca_file)
start_weightd C "$T/m" "$T/cache" tls+tcp://127.0.0.1:0 --tls-cert-key-file "$T/server.pem" \
	--tls-ca-file "$T/ca.crt" --stream-listen tls+tcp://127.0.0.1:0 --listen tcp://127.0.0.1:0
TLS=$(sed -n 1p "$T/C.ready")
PLAIN=$(sed -n 2p "$T/C.ready")
TLS=${TLS/127.0.0.1/localhost}
"$B/weightctl" fetch --endpoint "$TLS" "${L[@]}" --out s.st --tls-ca-file ca.crt \
	--tls-cert-key-file client.pem --stream --verbose 2>s.log || die "TLS stream fetch: $(cat s.log)"
grep -q "bulk stream(s) on tls+tcp://127.0.0.1:" s.log || die "TLS stream not used: $(cat s.log)"
grep -q "going on over messages" s.log && die "the TLS stream failed: $(cat s.log)"
cmp -s ref.st s.st || die "TLS stream fetch differs"
# a client on the plain endpoint has no CA to verify the TLS stream: messages, same bytes
"$B/weightctl" fetch --endpoint "$PLAIN" "${L[@]}" --out p.st --stream --verbose 2>p.log ||
	die "plain fetch with a TLS stream offered: $(cat p.log)"
grep -q "fetching over messages" p.log || die "no fallback on the plain endpoint: $(cat p.log)"
cmp -s ref.st p.st || die "fallback fetch differs"
stop_weightd "$WD_PID"
# a tls+tcp stream_listen without a certificate stops start-up (exit 2)
rc=0
"$B/weightd" --stream-listen tls+tcp://127.0.0.1:0 --models-dir "$T/m" --cache-dir "$T/c4" \
	2>err5 || rc=$?
[ "$rc" = 2 ] && grep -q tls_cert_key_file err5 || die "tls stream without cert: exit $rc: $(cat err5)"
# a tls+tcp listen URL without a certificate stops start-up (exit 2)
rc=0
"$B/weightd" --listen tls+tcp://127.0.0.1:0 --models-dir "$T/m" --cache-dir "$T/c3" 2>err4 || rc=$?
[ "$rc" = 2 ] && grep -q tls_cert_key_file err4 || die "tls without cert: exit $rc: $(cat err4)"
echo "tls: ok (control and bulk stream)"
