#!/usr/bin/env python3
"""objstore_server.py — a small HTTP/1.1 file server with Range support and
fault injection, for the http:// store tests (python's http.server ignores
Range). Serves --root; the first path component picks the behaviour:

  /ok/K       HEAD/GET with Range (206 + Content-Range), ETag, Last-Modified
  /norange/K  ignores Range: 200 with the whole body
  /short/K    206 with a correct Content-Range but one byte missing
  /badcr/K    206 whose Content-Range starts one byte late
  /deny/K     403 with an S3-style XML error body
  /flaky/K    503 for the first 2 requests of each (method, path, range), then ok
  /down/K     always 500
  /noetag/K   like /ok without ETag (Last-Modified is the version)
  /novalid/K  like /ok with neither ETag nor Last-Modified (no version at all)
  /lmnow/K    like /noetag, but the reply's Date is its Last-Modified (answered in
              the second of the object's last write)
  /etagnow/K  like /lmnow with an ETag as nginx makes it (the mtime's second and the
              size in hex: kept by a same-size write in the same second)
  /long/K     206 with the Content-Range asked, chunked, one byte more than it says
  /gzip/K     the object gzip'ed (Content-Encoding: gzip), ranges and sizes over
              the gzip'ed bytes, consistently (what a compressing proxy may do)
  /counted/K  like /ok, and every GET and HEAD is counted; GET /_gets and /_heads
              return the counts
  /slow/K     like /ok, but a GET of more than 64 KiB waits 1 s (--slow-s) before its reply
              (reading tensor bytes is slow; config, index and headers are not)
  /gate/K     like /ok, but a GET of more than 64 KiB waits (up to 60 s) while
              the gate is closed: closed at start; with --stdin, the lines
              "open" and "close" open and close it (each answered "ok")
  /sizetag/K  like /ok, but the ETag is the size alone and Last-Modified a fixed
              2020 date: a server (or a caching proxy) that keeps an object's
              version over a same-size rewrite
  /redir/K    302 to /ok/K on this server, or to --redirect-to BASE + "/K"
  /away/H/K   302 to http://H:<this port>/ok/K (H another name of this server,
              such as localhost or 127.0.0.2: a redirect to another host)
  /bigaway/H/K  like /ok, but a GET of more than 64 KiB is that 302 (the tensor
              bytes redirected; config, index and headers not)
  /nolist/K   like /ok, but a missing key is 403 AccessDenied (S3 without s3:ListBucket)
  /s3loop, /s3outside, /s3garbage   bad ListObjectsV2 replies (see LISTINGS)
  /s3cycle    truncated pages whose tokens go A, B, A, ... (a cycle)
  /s3endless  truncated empty pages, each with a new token

Prints "PORT <n>" on stdout once listening on 127.0.0.1 (port 0 = any free
port), then serves (https with --tls CERT KEY) until SIGTERM (or, with
--stdin, until stdin closes, so a crashed parent cannot leave it behind).
Logs nothing.
"""
import argparse
import email.utils
import gzip
import hashlib
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = "."
# Misbehaving ListObjectsV2 replies for s3://<mode>/k with the endpoint here.
LISTINGS = {
    "s3loop": "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>"
              "same</NextContinuationToken><Contents><Key>k/a</Key><Size>1</Size>"
              "</Contents></ListBucketResult>",
    "s3outside": "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>other/a"
                 "</Key><Size>1</Size></Contents></ListBucketResult>",
    "s3garbage": "hello",
}
COUNTS = {}
LOCK = threading.Lock()
GATE = threading.Event()  # set = open; /gate/ tensor reads wait while clear
SLOW_S = 1.0  # /slow/: the wait of a large GET (--slow-s)
REDIRECT_TO = None  # /redir/: where to (--redirect-to); None = /ok/ here


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _plain(self, code, body=b"", ctype="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _redirect(self, where):
        self.send_response(302)
        self.send_header("Location", where)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _serve(self):
        parts = urllib.parse.unquote(self.path.split("?", 1)[0]).lstrip("/").split("/", 1)
        mode, rel = (parts[0], parts[1]) if len(parts) == 2 else (parts[0], "")
        rng = self.headers.get("Range", "")
        if mode == "deny":
            return self._plain(403, b"<Error><Code>AccessDenied</Code></Error>",
                               "application/xml")
        if mode == "down":
            return self._plain(500, b"internal error")
        away = None  # /away/H/K, /bigaway/H/K: the redirect's target
        if mode in ("away", "bigaway"):
            host, _, rel = rel.partition("/")
            port = self.server.server_address[1]
            away = f"http://{host}:{port}/ok/" + urllib.parse.quote(rel)
        if mode == "away":
            return self._redirect(away)
        if mode == "redir":
            self.send_response(302)
            self.send_header("Location", (REDIRECT_TO or "/ok") + "/" + urllib.parse.quote(rel))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if mode in LISTINGS:  # a fake S3 bucket answering ListObjectsV2 badly
            return self._plain(200, LISTINGS[mode].encode(), "application/xml")
        if mode in ("s3cycle", "s3endless"):
            q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            tok = q.get("continuation-token", [""])[0]
            if mode == "s3cycle":
                nxt = "B" if tok == "A" else "A"
            else:
                nxt = "t" + str(int(tok[1:] or "0") + 1)
            xml = ("<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>"
                   + nxt + "</NextContinuationToken></ListBucketResult>")
            return self._plain(200, xml.encode(), "application/xml")
        if mode in ("_gets", "_heads"):
            with LOCK:
                n = COUNTS.get(mode[1:], 0)
            return self._plain(200, str(n).encode())
        if mode == "counted" and self.command in ("GET", "HEAD"):
            with LOCK:
                k = "gets" if self.command == "GET" else "heads"
                COUNTS[k] = COUNTS.get(k, 0) + 1
        if mode == "flaky":
            with LOCK:
                k = (self.command, self.path, rng)
                COUNTS[k] = COUNTS.get(k, 0) + 1
                n = COUNTS[k]
            if n <= 2:
                return self._plain(503, b"try again")
        path = os.path.realpath(os.path.join(ROOT, rel))
        if not path.startswith(ROOT + os.sep) or not os.path.isfile(path):
            if mode == "nolist":
                return self._plain(403, b"<Error><Code>AccessDenied</Code></Error>",
                                   "application/xml")
            return self._plain(404, b"not found")
        st = os.stat(path)
        size = st.st_size
        zbody = None
        if mode == "gzip":
            with open(path, "rb") as f:
                zbody = gzip.compress(f.read(), mtime=0)
            size = len(zbody)
        etag = hashlib.sha1(f"{st.st_mtime_ns}-{size}".encode()).hexdigest()
        if mode == "etagnow":
            etag = f"{int(st.st_mtime):x}-{size:x}"
        if mode == "sizetag":
            etag = f"size-{size:x}"
        first, last, partial = 0, size - 1, False
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", rng)
        if m and mode != "norange":
            first = int(m.group(1))
            last = min(int(m.group(2)) if m.group(2) else size - 1, size - 1)
            if first >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            partial = True
        count = last - first + 1 if size else 0
        if mode == "bigaway" and self.command == "GET" and count > 65536:
            return self._redirect(away)
        if mode == "slow" and self.command == "GET" and count > 65536:
            time.sleep(SLOW_S)
        if mode == "gate" and self.command == "GET" and count > 65536:
            GATE.wait(60.0)
        cr_first = first
        if partial and mode == "short":
            count -= 1
        if partial and mode == "badcr":
            cr_first += 1
        lastmod = email.utils.formatdate(1577880000 if mode == "sizetag" else st.st_mtime,
                                         usegmt=True)
        if mode in ("lmnow", "etagnow"):
            self.send_response_only(206 if partial else 200)
            self.send_header("Date", lastmod)
        else:
            self.send_response(206 if partial else 200)
        if partial:
            self.send_header("Content-Range", f"bytes {cr_first}-{last}/{size}")
        if partial and mode == "long":
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(count))
        self.send_header("Accept-Ranges", "bytes")
        if mode not in ("noetag", "novalid", "lmnow"):
            self.send_header("ETag", f'"{etag}"')
        if mode != "novalid":
            self.send_header("Last-Modified", lastmod)
        if zbody is not None:
            self.send_header("Content-Encoding", "gzip")
        self.end_headers()
        if self.command == "HEAD" or count <= 0:
            return
        if zbody is not None:
            self.wfile.write(zbody[first:first + count])
            return
        if partial and mode == "long":
            with open(path, "rb") as f:
                f.seek(first)
                body = f.read(count) + b"!"
            self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
            return
        with open(path, "rb") as f:
            try:
                self.connection.sendfile(f, first, count)  # plain send() under TLS
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

    do_GET = _serve
    do_HEAD = _serve


def main():
    global ROOT, SLOW_S, REDIRECT_TO
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--stdin", action="store_true", help="exit when stdin closes")
    ap.add_argument("--slow-s", type=float, default=1.0, help="/slow/: seconds a large GET waits")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), help="serve https")
    ap.add_argument("--redirect-to", help="/redir/K: 302 to this base URL + /K")
    a = ap.parse_args()
    ROOT = os.path.realpath(a.root)
    SLOW_S = a.slow_s
    REDIRECT_TO = a.redirect_to
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.handle_error = lambda *args: None  # a client hanging up is not news
    if a.tls:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls[0], a.tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print(f"PORT {srv.server_address[1]}", flush=True)
    if not a.stdin:
        srv.serve_forever()
        return
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        for line in sys.stdin:  # until the parent closes our stdin (or dies)
            cmd = line.strip()
            if cmd in ("open", "close"):
                (GATE.set if cmd == "open" else GATE.clear)()
                print("ok", flush=True)
            elif cmd:
                print(f"unknown command {cmd!r}", flush=True)
    except KeyboardInterrupt:
        pass
    srv.shutdown()


if __name__ == "__main__":
    main()
