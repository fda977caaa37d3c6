#!/usr/bin/env python3
"""reliability.py — `make reliability`: weightd and weightctl under load and
faults, real processes on 127.0.0.1 only.

One line per scenario with its figures and PASS/FAIL, then "N passed, M failed".
Every scenario checks each fetched rank byte for byte against `weightctl shard`
(offline production of the same layout and rank) and ends with
`weightctl admin verify` reporting no bad chunk.

Scenarios:
  cold64        64 concurrent fetches (9 layouts of two models) on an empty cache
  warm64        the same 64 again, from the cache
  kill9-produce kill -9 during a cold production, restart 0.6 s later: all complete
  kill9-fetch   kill -9 during warm fetches, restart 0.6 s later: all complete
  corrupt-blob  3 bytes flipped in the cache's blob files: all fetches complete
  enospc        a cache on a small tmpfs fills up; once space is freed, new
                productions succeed without a restart; cached shards keep serving
  source-swap   a new file renamed over the checkpoint during a cold production:
                the rank equals the old or the new revision's shard, never a mix
  silent        first endpoint accepts TCP and never answers: fetch time < 10 s
  slowloris     500 connections dribbling bytes while a real client fetches
  fuzz          seeded random and structured raw requests; RSS before/after
  failover-kill 2 nodes, 32 concurrent stream fetches (8 ranks of a 64 MiB
                llama, chunk 256K), kill -9 of node A mid-fetch, default
                timeouts: all complete in < 30 s (155-184 s before 71cb059)
  failover-stop the same with node A SIGSTOPped right after the fetches start
                (default timeouts since 2026-12-02: a quiet stream or
                manifest wait is probed with a Hello after connect_timeout_ms;
                60 s before; --timeout-ms 3000 until then), SIGCONT once
                they ended: < 20 s, outputs
                unchanged after the resume, node B served <= 2x the chunks
                needed (no retry storm); both scenarios compare node B's
                chunk replies (metrics endpoint) with that bound
  failover-stop-msg  the same over messages (no --stream), node A SIGSTOPped
                mid-fetch: < 20 s (a fetch waited its 30 s request timeout
                before its requests could be left in flight, 2026-12-03)

  interrupt     32 fetches from node B (16 stream, 16 messages), SIGINT to
                all once 8 began their files: each running one exits 130
                within 2 s leaving no file or temporary file (before
                2026-12-03 each left OUT.tmp.PID), node B's open files come
                back, and 32 fetches again all complete, equal

`reliability.py failover` runs the fail-over scenarios and interrupt alone
(about 30 s).
Sizes are chosen for a 2-core machine (whole run well under 10 minutes):
WT_REL_SIZE_MB (default 48) scales the dense model. Exit status: 0 when every
scenario passed.
"""
import os
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

B = os.environ.get("WT_BUILD", "build")
SIZE_MB = int(os.environ.get("WT_REL_SIZE_MB", "48"))
FO_SIZE_MB = 64  # fail-over scenarios: fixed, so that their time bounds hold
WD = os.path.join(B, "weightd")
CTL = os.path.join(B, "weightctl")
MK = os.path.join(B, "wt-mkckpt")

# (model, layout flags): 9 layouts of two models (a dense llama, a Mixtral MoE)
LAYOUTS = [
    ("llama", ["--tp-size", "8", "--quant", "none"]),
    ("llama", ["--tp-size", "8", "--quant", "fp8-block"]),
    ("llama", ["--tp-size", "4", "--quant", "int8-channel"]),
    ("llama", ["--tp-size", "2", "--quant", "int4-group"]),
    ("llama", ["--tp-size", "1", "--quant", "fp8-channel"]),
    ("moe", ["--ep-size", "2", "--quant", "none"]),
    ("moe", ["--ep-size", "3", "--quant", "fp8-channel"]),
    ("moe", ["--tp-size", "2", "--ep-size", "2", "--quant", "none"]),
    ("moe", ["--ep-size", "6", "--quant", "int8-channel"]),
]


def flag(lay, name, default):
    return int(lay[lay.index(name) + 1]) if name in lay else default


def ranks(lay):
    """Every (tp_rank, ep_rank) of a layout."""
    tp, ep = flag(lay, "--tp-size", 1), flag(lay, "--ep-size", 1)
    return [(t, e) for e in range(ep) for t in range(tp)]


def rank_flags(lay, r):
    f = list(lay)
    if flag(lay, "--tp-size", 1) > 1:
        f += ["--tp-rank", str(r[0])]
    if flag(lay, "--ep-size", 1) > 1:
        f += ["--ep-rank", str(r[1])]
    return f


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return -1


class Daemon:
    def __init__(self, T, name, cache, port=None, extra=()):
        self.T, self.name, self.cache = T, name, cache
        self.port = port or free_port()
        self.url = f"tcp://127.0.0.1:{self.port}"
        self.extra = list(extra)
        self.p = None

    def start(self, models=None):
        ready = os.path.join(self.T, self.name + ".ready")
        if os.path.exists(ready):
            os.unlink(ready)
        log = open(os.path.join(self.T, self.name + ".log"), "a")
        self.p = subprocess.Popen(
            [WD, "--listen", self.url, "--models-dir", models or os.path.join(self.T, "models"),
             "--cache-dir", self.cache, "--ready-file", ready, "--log-level", "warning"]
            + self.extra, stdout=log, stderr=log)
        for _ in range(600):
            if os.path.exists(ready) and os.path.getsize(ready) > 0:
                return
            if self.p.poll() is not None:
                raise RuntimeError(f"weightd {self.name} exited {self.p.returncode}")
            time.sleep(0.05)
        raise RuntimeError(f"weightd {self.name} not ready")

    def kill9(self):
        self.p.send_signal(signal.SIGKILL)
        self.p.wait()

    def stop(self):
        if self.p and self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()

    def verify(self):
        r = subprocess.run([CTL, "admin", "--endpoint", self.url, "verify"],
                           capture_output=True, text=True)
        return r.returncode == 0, (r.stdout + r.stderr).strip().splitlines()[:1]


class Suite:
    def __init__(self):
        self.T = tempfile.mkdtemp(prefix="wt-rel-")
        self.passed = 0
        self.failed = 0
        self.refs = {}
        self.jobs = []  # the 64 (model, layout, rank)

    def result(self, name, ok, figures):
        print(f"{name:14s} {figures} {'PASS' if ok else 'FAIL'}", flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1

    # ---- set-up ----
    def setup(self):
        models = os.path.join(self.T, "models")
        os.makedirs(models)
        for fam, out, extra in (("llama", "llama", ["--size-mb", str(SIZE_MB)]),
                                ("mixtral", "moe", [])):
            subprocess.run([MK, "--family", fam, "--out", os.path.join(models, out)] + extra,
                           check=True, stdout=subprocess.DEVNULL)
        pairs = [(m, lay, r) for m, lay in LAYOUTS for r in ranks(lay)]
        self.jobs = [pairs[i % len(pairs)] for i in range(64)]
        t0 = time.time()
        for m, lay, r in pairs:
            self.refs[(m, tuple(lay), r)] = self.shard(models, m, lay, r, "ref")
        print(f"setup: llama {SIZE_MB} MiB + mixtral, {len(LAYOUTS)} layouts, {len(pairs)} "
              f"reference ranks by `weightctl shard` in {time.time() - t0:.1f} s", flush=True)

    def shard(self, models, m, lay, r, tag):
        out = os.path.join(self.T, f"{tag}-{m}-{'_'.join(lay)}-{r[0]}-{r[1]}.st")
        subprocess.run([CTL, "shard", "--model-dir", os.path.join(models, m), "--out", out]
                       + rank_flags(lay, r), check=True)
        return out

    # ---- fetching ----
    def fetch_cmd(self, url, job, out, extra=()):
        m, lay, r = job
        return ([CTL, "fetch"] + [a for u in url for a in ("--endpoint", u)]
                + ["--model", m, "--out", out, "--quiet"] + rank_flags(lay, r) + list(extra))

    def start_fetches(self, urls, jobs, tag, extra=()):
        procs = []
        for i, job in enumerate(jobs):
            out = os.path.join(self.T, f"{tag}-{i}.st")
            if os.path.exists(out):
                os.unlink(out)
            err = open(os.path.join(self.T, f"{tag}-{i}.err"), "w")
            procs.append((subprocess.Popen(self.fetch_cmd(urls, job, out, extra),
                                           stdout=subprocess.DEVNULL, stderr=err), out, job, err))
        return procs

    def finish(self, procs, timeout=300, deadline=None):
        """Waits for each fetch (timeout s each, or until deadline, a time.time(), for
        all of them); one still running then is killed and counts as failed."""
        failed, differ, first = 0, 0, ""
        for p, out, job, err in procs:
            try:
                rc = p.wait(timeout if deadline is None else max(0.01, deadline - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                rc = -9
                first = first or "still running at its time limit: killed"
            err.close()
            if rc != 0:
                failed += 1
                if not first:
                    with open(err.name) as f:
                        first = f.read().strip().splitlines()[-1:] or ["?"]
                        first = first[0][:160]
                continue
            ref = self.refs[(job[0], tuple(job[1]), job[2])]
            if not same(out, ref):
                differ += 1
        return failed, differ, first

    # ---- scenarios ----
    def run_all(self):
        self.setup()
        cache = os.path.join(self.T, "cache")
        d = Daemon(self.T, "main", cache)
        d.start()
        try:
            self.cold_warm(d)
            self.kill9(d, "kill9-produce", cold=True)
            self.kill9(d, "kill9-fetch", cold=False)
            self.corrupt(d)
            self.silent(d)
            self.slowloris(d)
            self.fuzz(d)
        finally:
            d.stop()
        self.source_swap()
        self.enospc()
        self.failover()

    def check(self, name, d, ok, figures):
        vok, vline = d.verify()
        self.result(name, ok and vok, f"{figures}; verify: {' '.join(vline) or '?'}")

    def cold_warm(self, d):
        for name in ("cold64", "warm64"):
            t0 = time.time()
            procs = self.start_fetches([d.url], self.jobs, name)
            failed, differ, first = self.finish(procs)
            dt = time.time() - t0
            self.check(name, d, failed == 0 and differ == 0,
                       f"{len(procs)} clients: {failed} failed, {differ} differ, {dt:.1f} s"
                       + (f" (first error: {first})" if first else ""))

    def kill9(self, d, name, cold):
        jobs = self.jobs  # all 64
        if cold:  # a fresh cache: every layout is produced while we kill
            d.stop()
            shutil.rmtree(d.cache, ignore_errors=True)
            d.start()
        t0 = time.time()
        procs = self.start_fetches([d.url], jobs, name)
        time.sleep(0.5 if cold else 0.15)
        d.kill9()
        time.sleep(0.6)
        d.start()
        failed, differ, first = self.finish(procs)
        self.check(name, d, failed == 0 and differ == 0,
                   f"{len(jobs)} clients across a kill -9 + restart after 0.6 s: "
                   f"{failed} failed, {differ} differ, {time.time() - t0:.1f} s"
                   + (f" (first error: {first})" if first else ""))

    def corrupt(self, d):
        d.stop()
        blobs = [os.path.join(dp, f) for dp, _, fs in os.walk(d.cache) for f in fs
                 if f.endswith(".blob")]
        rnd = random.Random(0x5eed)
        flipped = 0
        for _ in range(3):
            if not blobs:
                break
            path = rnd.choice(blobs)
            size = os.path.getsize(path)
            if size < 4096:
                continue
            off = rnd.randrange(1024, size - 1024)
            with open(path, "r+b") as f:
                f.seek(off)
                b = f.read(1)
                f.seek(off)
                f.write(bytes([b[0] ^ 0x5a]))
            flipped += 1
        d.start()
        procs = self.start_fetches([d.url], self.jobs, "corrupt")
        failed, differ, first = self.finish(procs)
        self.check("corrupt-blob", d, flipped == 3 and failed == 0 and differ == 0,
                   f"{flipped} bytes flipped in {len(blobs)} blob files; {len(procs)} clients: "
                   f"{failed} failed, {differ} differ" + (f" (first error: {first})" if first else ""))

    def silent(self, d):
        ls = socket.socket()
        ls.bind(("127.0.0.1", 0))
        ls.listen(64)
        conns = []
        stop = threading.Event()

        def accept():
            ls.settimeout(0.2)
            while not stop.is_set():
                try:
                    conns.append(ls.accept()[0])  # accept, never answer
                except OSError:
                    pass
        th = threading.Thread(target=accept, daemon=True)
        th.start()
        silent_url = f"tcp://127.0.0.1:{ls.getsockname()[1]}"
        # 8 ranks: the client orders endpoints by rendezvous hashing per shard,
        # so some of them meet the silent endpoint first; each fetch is timed
        jobs = self.jobs[:8]
        times, failed, differ, first = [], 0, 0, ""
        for k, job in enumerate(jobs):
            t0 = time.time()
            f, df, fe = self.finish(self.start_fetches([silent_url, d.url], [job], f"silent{k}"),
                                    timeout=120)
            times.append(time.time() - t0)
            failed, differ, first = failed + f, differ + df, first or fe
        dt = max(times)
        stop.set()
        th.join()
        for c in conns:
            c.close()
        ls.close()
        self.check("silent", d, failed == 0 and differ == 0 and dt < 10,
                   f"{len(jobs)} fetches listing a silent endpoint first: slowest {dt:.1f} s, "
                   f"median {sorted(times)[len(times) // 2]:.1f} s (target < 10 s)"
                   + (f" (error: {first})" if first else ""))

    def slowloris(self, d):
        job = self.jobs[0]
        t0 = time.time()
        failed0, _, _ = self.finish(self.start_fetches([d.url], [job], "sl-base"))
        base = time.time() - t0
        socks = []
        for _ in range(500):
            try:
                s = socket.create_connection(("127.0.0.1", d.port), timeout=2)
                s.sendall(b"\x00SP\x00")  # half an SP handshake, then dribble
                socks.append(s)
            except OSError:
                break
        stop = threading.Event()

        def dribble():
            while not stop.is_set():
                for s in socks:
                    try:
                        s.send(b"\x00")
                    except OSError:
                        pass
                stop.wait(0.5)
        th = threading.Thread(target=dribble, daemon=True)
        th.start()
        rss = rss_mib(d.p.pid)
        t0 = time.time()
        failed, differ, first = self.finish(self.start_fetches([d.url], [job], "sl"))
        dt = time.time() - t0
        stop.set()
        th.join()
        for s in socks:
            s.close()
        self.check("slowloris", d, failed0 == 0 and failed == 0 and differ == 0,
                   f"{len(socks)} dribbling connections: fetch {dt:.2f} s vs {base:.2f} s "
                   f"without ({dt / max(base, 1e-3):.1f}x), daemon RSS {rss} MiB"
                   + (f" (error: {first})" if first else ""))

    def fuzz(self, d):
        rnd = random.Random(0xf022)
        rss0 = rss_mib(d.p.pid)
        sent = 0
        t0 = time.time()
        for i in range(1500):
            try:
                s = socket.create_connection(("127.0.0.1", d.port), timeout=2)
                s.sendall(b"\x00SP\x00\x00\x30\x00\x00")  # req0 handshake
                s.settimeout(0.05)
                try:
                    s.recv(8)
                except OSError:
                    pass
                if i % 2 == 0:  # random bytes of a random declared length
                    body = rnd.randbytes(rnd.randrange(0, 512))
                    frame = struct.pack(">Q", len(body) + 4) + b"\x80\x00\x00\x01" + body
                else:  # framed protobuf-ish: [u32 hdr len][fields], mutated
                    pb = bytearray([0x08, 0x01, 0x12, rnd.randrange(0, 40)])
                    pb += rnd.randbytes(rnd.randrange(0, 64))
                    for _ in range(rnd.randrange(0, 4)):
                        if pb:
                            pb[rnd.randrange(len(pb))] = rnd.randrange(256)
                    inner = struct.pack(">I", len(pb)) + bytes(pb)
                    frame = struct.pack(">Q", len(inner) + 4) + b"\x80\x00\x00\x02" + inner
                s.sendall(frame)
                sent += 1
                s.close()
            except OSError:
                pass
        dt = time.time() - t0
        time.sleep(1)
        alive = d.p.poll() is None
        rss1 = rss_mib(d.p.pid) if alive else -1
        failed, differ, first = self.finish(self.start_fetches([d.url], self.jobs[:4], "fz"))
        ok = alive and failed == 0 and differ == 0 and rss1 - rss0 < 64
        self.check("fuzz", d, ok,
                   f"{sent} raw requests (seed 0xf022) in {dt:.1f} s; daemon "
                   f"{'alive' if alive else 'DEAD'}, RSS {rss0} -> {rss1} MiB; then "
                   f"4 fetches: {failed} failed, {differ} differ")

    def source_swap(self):
        """A new checkpoint file renamed over the old during a cold production."""
        models = os.path.join(self.T, "swap-models")
        os.makedirs(models)
        m = os.path.join(models, "llama")
        subprocess.run([MK, "--family", "llama", "--out", m, "--size-mb", str(SIZE_MB)],
                       check=True, stdout=subprocess.DEVNULL)
        nxt = os.path.join(self.T, "swap-next")
        subprocess.run([MK, "--family", "llama", "--out", nxt, "--size-mb", str(SIZE_MB),
                        "--seed", "7"], check=True, stdout=subprocess.DEVNULL)
        lay = ["--tp-size", "4", "--quant", "fp8-block"]
        old = {r: self.shard(models, "llama", lay, r, "swapold") for r in ranks(lay)}
        new = {r: self.shard(os.path.dirname(nxt) + "/", os.path.basename(nxt), lay, r,
                             "swapnew") for r in ranks(lay)}
        d = Daemon(self.T, "swap", os.path.join(self.T, "swap-cache"))
        d.start(models)
        try:
            procs = self.start_fetches([d.url], [("llama", lay, r) for r in ranks(lay)], "swap")
            time.sleep(0.2)
            for f in sorted(os.listdir(nxt)):  # rename every file over its old name
                os.rename(os.path.join(nxt, f), os.path.join(m, f))
            failed, got_old, got_new, mixed = 0, 0, 0, 0
            for p, out, job, err in procs:
                rc = p.wait(300)
                err.close()
                if rc != 0:
                    failed += 1
                elif same(out, old[job[2]]):
                    got_old += 1
                elif same(out, new[job[2]]):
                    got_new += 1
                else:
                    mixed += 1
            self.check("source-swap", d, failed == 0 and mixed == 0,
                       f"{len(procs)} ranks of a cold layout, files renamed over mid-production: "
                       f"{got_old} old revision, {got_new} new, {mixed} neither, {failed} failed")
        finally:
            d.stop()

    def enospc(self):
        """A cache on a small tmpfs fills up, recovers once space is freed."""
        mnt = os.path.join(self.T, "tmpfs")
        os.makedirs(mnt)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", mnt],
                           capture_output=True, text=True)
        if r.returncode != 0:
            self.result("enospc", False, f"cannot mount a tmpfs here: {r.stderr.strip()}")
            return
        d = Daemon(self.T, "enospc", os.path.join(mnt, "cache"),
                   extra=["--cache-max-bytes", "1G", "--cache-memory-bytes", "0"])
        try:
            filler = os.path.join(mnt, "filler")
            d.start()
            small = ("moe", ["--ep-size", "2", "--quant", "none"], (0, 0))
            f1, d1, _ = self.finish(self.start_fetches([d.url], [small], "en-small"))
            with open(filler, "wb") as f:  # leave too little room for the big layout
                try:
                    while True:
                        f.write(b"\0" * (1 << 20))
                except OSError:
                    pass
            st = os.statvfs(mnt)
            free_mb = st.f_bavail * st.f_frsize // (1 << 20)
            big = ("llama", ["--tp-size", "1", "--quant", "none"], (0, 0))
            self.refs[(big[0], tuple(big[1]), big[2])] = self.shard(
                os.path.join(self.T, "models"), *big, "ref")
            f2, _, e2 = self.finish(self.start_fetches([d.url], [big], "en-big"))
            # cached shards keep serving while the disk is full
            f3, d3, _ = self.finish(self.start_fetches([d.url], [small], "en-small2"))
            os.unlink(filler)
            time.sleep(1)
            f4, d4, e4 = self.finish(self.start_fetches([d.url], [big], "en-big2"))
            ok = f1 == 0 and d1 == 0 and f2 == 1 and f3 == 0 and d3 == 0 and f4 == 0 and d4 == 0
            self.check("enospc", d, ok,
                       f"full disk ({free_mb} MiB free): big layout "
                       f"{'failed' if f2 else 'succeeded'} ({e2 or '-'}), cached small served "
                       f"{'ok' if f3 == 0 else 'FAILED'}; after freeing space the big layout "
                       f"{'succeeded' if f4 == 0 else 'failed: ' + e4}")
        finally:
            d.stop()
            subprocess.run(["umount", mnt], capture_output=True)

    # ---- fail-over between two nodes ----
    def failover(self):
        """2 nodes, 32 stream fetches, node A killed or stopped mid-fetch."""
        models = os.path.join(self.T, "fo-models")
        os.makedirs(models)
        subprocess.run([MK, "--family", "llama", "--out", os.path.join(models, "llama64"),
                        "--size-mb", str(FO_SIZE_MB)], check=True, stdout=subprocess.DEVNULL)
        lay = ["--tp-size", "8"]
        for r in ranks(lay):
            self.refs[("llama64", tuple(lay), r)] = self.shard(models, "llama64", lay, r, "ref")
        jobs = [("llama64", lay, (i % 8, 0)) for i in range(32)]
        nodes = []
        for name in ("foA", "foB"):
            mport = free_port()
            d = Daemon(self.T, name, os.path.join(self.T, name + "-cache"),
                       extra=["--chunk-bytes", "256K", "--stream-listen", "tcp://127.0.0.1:0",
                              "--metrics-listen", f"http://127.0.0.1:{mport}"])
            d.metrics = f"http://127.0.0.1:{mport}/metrics"
            nodes.append(d)
        try:
            for d in nodes:
                d.start(models)
            a, b = nodes
            # chunk replies one fetch of each rank takes from node B alone
            for d in nodes:
                self.fo_warm(d, lay)
            c0 = chunk_replies(b)
            f, df, e = self.finish(self.start_fetches([b.url], jobs[:8], "fo-base", ["--stream"]))
            needed = 4 * (chunk_replies(b) - c0)  # 32 fetches = 4 of each rank
            if f or df:
                self.result("failover", False, f"fetches from node B alone: {f} failed, "
                            f"{df} differ ({e or '-'})")
                return
            self.fo_fault("failover-kill", a, b, jobs, signal.SIGKILL, ["--stream"], 30, needed)
            a.start(models)
            self.fo_warm(a, lay)
            self.fo_fault("failover-stop", a, b, jobs, signal.SIGSTOP, ["--stream"], 20, needed)
            self.fo_fault("failover-stop-msg", a, b, jobs, signal.SIGSTOP, [], 20, needed,
                          mid=True)
            a.p.send_signal(signal.SIGCONT)
            self.interrupt(b, models)
        finally:
            for d in nodes:
                if d.p and d.p.poll() is None:
                    d.p.send_signal(signal.SIGCONT)
                d.stop()

    def interrupt(self, d, models):
        """32 fetches of TP-2 ranks (32 MiB each, window 1) from node d, half
        over the bulk stream, half over messages; SIGINT to every one once
        they are started: each one in its fetch exits 130 within 2 s leaving
        neither its file nor its temporary file (Ctrl-C; before 2026-12-03
        each left OUT.tmp.PID behind), one not yet fetching dies of the signal
        with no file, one that ended first has its file equal to `weightctl
        shard`; node d's open files come back to where they were after a
        complete round, and the 32 fetches again all complete, equal."""
        name = "interrupt"
        lay = ["--tp-size", "2"]
        for r in ranks(lay):
            self.refs[("llama64", tuple(lay), r)] = self.shard(models, "llama64", lay, r, "ref")
        jobs = [("llama64", lay, (i % 2, 0)) for i in range(32)]
        failed, differ, e0 = self.finish(self.start_fetches([d.url], jobs, name + "-before"))
        fds0 = len(os.listdir(f"/proc/{d.p.pid}/fd"))
        tmp = re.compile(re.escape(name) + r"-\d+\.st\.tmp\.")
        procs = []
        t0 = time.time()
        for i, job in enumerate(jobs):
            out = os.path.join(self.T, f"{name}-{i}.st")
            err = open(os.path.join(self.T, f"{name}-{i}.err"), "w")
            extra = ["--window", "1"] + (["--stream"] if i % 2 else [])
            # SIGINT as a terminal's foreground job has it (this script may run
            # as a shell's background job, whose children inherit it ignored)
            procs.append((subprocess.Popen(
                self.fetch_cmd([d.url], job, out, extra), stdout=subprocess.DEVNULL, stderr=err,
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)), out, job, err))
        while time.time() - t0 < 10:  # most of them in their fetch
            if sum(1 for f in os.listdir(self.T) if tmp.match(f)) >= 24:
                break
            time.sleep(0.005)
        t_sig = time.time() - t0
        for p, _, _, _ in procs:
            p.send_signal(signal.SIGINT)
        t1 = time.time()
        stopped = early = done = bad = 0
        first = ""
        for p, out, job, err in procs:
            try:
                rc = p.wait(max(0.01, t1 + 2 - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
                first = first or "still running 2 s after SIGINT"
            err.close()
            if rc == 130 and not os.path.exists(out):
                stopped += 1
            elif rc == -signal.SIGINT and not os.path.exists(out):
                early += 1  # before its fetch began: no file of any kind yet
            elif rc == 0 and same(out, self.refs[(job[0], tuple(job[1]), job[2])]):
                done += 1
            else:
                bad += 1
                if not first:
                    with open(err.name) as f:
                        first = f"exit {rc}: " + (f.read().strip().splitlines()[-1:] or ["?"])[0]
        dt = time.time() - t1
        left = sum(1 for f in os.listdir(self.T) if tmp.match(f))
        time.sleep(2)  # the server notices the closed connections
        fds1 = len(os.listdir(f"/proc/{d.p.pid}/fd"))
        f2, d2, e2 = self.finish(self.start_fetches([d.url], jobs, name + "-again"))
        ok = bad == 0 and left == 0 and stopped >= 8 and fds1 <= fds0 and \
            failed + differ + f2 + d2 == 0
        err_text = first or e0 or e2
        self.check(name, d, ok,
                   f"32 fetches (TP 2, 16 stream, 16 messages, window 1), SIGINT at "
                   f"{t_sig:.2f} s: {stopped} exited 130 with no file, {early} died before "
                   f"their fetch, {done} had ended (files equal), {bad} bad, all gone "
                   f"{dt:.2f} s after the signal, {left} temp files; node fds {fds0} -> "
                   f"{fds1}; 32 fetches again: {f2} failed, {d2} differ"
                   + (f" (first error: {err_text})" if err_text else ""))

    def fo_warm(self, d, lay):
        for r in ranks(lay):
            subprocess.run([CTL, "admin", "--endpoint", d.url, "warm", "--model", "llama64"]
                           + rank_flags(lay, r), check=True, stdout=subprocess.DEVNULL)

    def fo_fault(self, name, a, b, jobs, sig, extra, bound_s, needed, mid=False):
        c0 = chunk_replies(b)
        t0 = time.time()
        procs = self.start_fetches([a.url, b.url], jobs, name, extra)
        tmp = re.compile(re.escape(name) + r"-\d+\.st\.tmp\.")
        # mid-fetch / right after the start
        want = 8 if sig == signal.SIGKILL or mid else 1
        while time.time() - t0 < 10:
            if sum(1 for f in os.listdir(self.T) if tmp.match(f)) >= want:
                break
            time.sleep(0.01)
        t_sig = time.time() - t0
        a.p.send_signal(sig)
        # a deadline, so that the old code's minutes of waiting end as a FAIL
        failed, differ, first = self.finish(procs, deadline=t0 + 4 * bound_s)
        dt = time.time() - t0
        served = chunk_replies(b) - c0
        late = ""
        ok = failed == 0 and differ == 0 and dt < bound_s and 0 < served <= 2 * needed
        if sig == signal.SIGSTOP:
            a.p.send_signal(signal.SIGCONT)
            time.sleep(1)  # node A answers what it was asked before it stopped
            changed = sum(1 for p, out, job, err in procs
                          if not os.path.exists(out)
                          or not same(out, self.refs[(job[0], tuple(job[1]), job[2])]))
            left = sum(1 for f in os.listdir(self.T) if tmp.match(f))
            aok, aline = a.verify()
            ok = ok and changed == 0 and left == 0 and aok
            late = (f"; after SIGCONT: {changed} outputs missing or different, {left} temp files, "
                    f"node A verify: {' '.join(aline) or '?'}")
        else:
            a.p.wait()
        self.check(name, b, ok,
                   f"{len(procs)} {'stream' if '--stream' in extra else 'message'} fetches, "
                   f"SIG{sig.name[3:]} to node A at {t_sig:.2f} s: "
                   f"{failed} failed, {differ} differ, {dt:.1f} s (bound {bound_s} s); node B "
                   f"served {served} chunks for {needed} needed (bound 2x){late}"
                   + (f" (first error: {first})" if first else ""))


def chunk_replies(d):
    """weightd_chunk_replies_total from a node's metrics endpoint."""
    with urllib.request.urlopen(d.metrics, timeout=10) as r:
        m = re.search(rb"^weightd_chunk_replies_total (\d+)$", r.read(), re.M)
    if not m:
        raise RuntimeError(f"{d.metrics}: no weightd_chunk_replies_total")
    return int(m.group(1))


def same(a, b):
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as x, open(b, "rb") as y:
        while True:
            p, q = x.read(1 << 20), y.read(1 << 20)
            if p != q:
                return False
            if not p:
                return True


def main():
    for b in (WD, CTL, MK):
        if not os.access(b, os.X_OK):
            print(f"reliability: {b} not built (make all)")
            return 2
    s = Suite()
    t0 = time.time()
    try:
        if sys.argv[1:] == ["failover"]:  # the fail-over pair alone
            s.failover()
        else:
            s.run_all()
    finally:
        shutil.rmtree(s.T, ignore_errors=True)
    print(f"reliability: {time.time() - t0:.0f} s")
    print(f"{s.passed} passed, {s.failed} failed")
    return 0 if s.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
