#!/usr/bin/env python3
"""py_iter_tensors.py — Client.iter_tensors over the bulk stream (stream=1)
with the tensors received in place (wt_sink_ops.recv_buf, the default) against
the same stream sink with recv_buf taken out (every chunk copied by write()).

    python3 bench/py_iter_tensors.py [--rounds N] [--max-mb M ...]

Makes a llama of WT_BENCH_MB MiB (default 256) with $WT_BUILD/wt-mkckpt
(default build/), starts weightd with a bulk stream (2 workers, default
chunk bytes) and streams the whole rank (TP=1) with the client's defaults
(window 8, 2 connections), the loop dropping each tensor. Rounds alternate
in place / copied; each prints GB/s and CPU s/GB of this process (the
client: receivers, hashing, the Python sink) and of weightd, then the
medians and the in place / copied ratios. No thresholds: numbers only."""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(REPO, os.environ.get("WT_BUILD", "build"))
sys.path.insert(0, os.path.join(REPO, "python"))
os.environ.setdefault("WEIGHTD_LIB", os.path.join(BUILD, "libweights.so.1"))

import weightd  # noqa: E402
from weightd import _lib, stream  # noqa: E402


def start(tmp, mb):
    models = os.path.join(tmp, "models")
    subprocess.run([os.path.join(BUILD, "wt-mkckpt"), "--family", "llama", "--size-mb",
                    str(mb), "--out", os.path.join(models, "llama")], check=True,
                   stdout=subprocess.DEVNULL)
    ready = os.path.join(tmp, "ready")
    proc = subprocess.Popen([os.path.join(BUILD, "weightd"), "--listen", "tcp://127.0.0.1:0",
                             "--stream-listen", "tcp://127.0.0.1:0", "--models-dir", models,
                             "--cache-dir", os.path.join(tmp, "cache"), "--workers", "2",
                             "--log-level", "warning", "--ready-file", ready])
    for _ in range(1200):
        if os.path.exists(ready) and os.path.getsize(ready) > 0:
            return proc, open(ready).read().split()[0]
        if proc.poll() is not None:
            sys.exit("weightd exited")
        time.sleep(0.05)
    proc.kill()
    sys.exit("weightd not ready")


def proc_cpu(pid):
    """user + system seconds of process pid (/proc/PID/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def self_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def one(c, m, wd_pid, in_place, max_bytes):
    """(GB/s, client CPU s/GB, weightd CPU s/GB, in-place fraction) of one stream."""
    init = stream._StreamSink.__init__

    def no_recv_buf(self, *a):
        init(self, *a)
        self.ops.recv_buf = _lib.SinkRecvBuf()  # NULL: every chunk through write()

    if not in_place:
        stream._StreamSink.__init__ = no_recv_buf
    try:
        c0, w0, t0 = self_cpu(), proc_cpu(wd_pid), time.monotonic()
        s = c.iter_tensors(m, as_torch=False, max_bytes=max_bytes)
        n = 0
        for _name, t in s:
            n += t.nbytes
            del t
        dt = time.monotonic() - t0
        c1, w1 = self_cpu(), proc_cpu(wd_pid)
    finally:
        stream._StreamSink.__init__ = init
    assert n == m.total_bytes
    gb = n / 1e9
    return gb / dt, (c1 - c0) / gb, (w1 - w0) / gb, s.in_place_chunks / m.n_chunks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-mb", type=int, nargs="+", default=[256, 64],
                    help="iter_tensors max_bytes in MiB (default 256 64)")
    a = ap.parse_args()
    mb = int(os.environ.get("WT_BENCH_MB", "256"))
    tmp = tempfile.mkdtemp(prefix="wt-bench-py-")
    proc, url = start(tmp, mb)
    try:
        with weightd.Client(url, stream=1) as c:
            m = c.manifest("llama")  # produced here, not in the timed runs
            c.fetch(m, as_torch=False)  # warm: cache read once, streams dialed
            print("llama %d MiB: %d tensors, %d chunks, %.1f MB, stream=1, window 8, "
                  "2 connections" % (mb, len(m.tensors), m.n_chunks, m.total_bytes / 1e6))
            for max_mb in a.max_mb:
                runs = {True: [], False: []}
                for r in range(a.rounds):
                    for ip in (True, False) if r % 2 == 0 else (False, True):
                        res = one(c, m, proc.pid, ip, max_mb << 20)
                        runs[ip].append(res)
                        print("max_bytes %3d MiB %-8s %.2f GB/s  client %.3f s/GB  weightd "
                              "%.3f s/GB  in place %.0f%%" % (
                                  max_mb, "in place" if ip else "copied", res[0], res[1],
                                  res[2], 100 * res[3]))
                med = {ip: [statistics.median(x[k] for x in runs[ip]) for k in range(4)]
                       for ip in runs}
                print("max_bytes %d MiB, medians of %d: in place %.2f GB/s %.3f s/GB (client), "
                      "copied %.2f GB/s %.3f s/GB; ratios in place / copied: GB/s %.2f, client "
                      "CPU %.2f" % (max_mb, a.rounds, med[True][0], med[True][1], med[False][0],
                                    med[False][1], med[True][0] / med[False][0],
                                    med[True][1] / med[False][1]))
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
