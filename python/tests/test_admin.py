"""Client.admin / register / unregister against a real weightd: stats, a
registration of a checkpoint served over http whose tensor reads wait on a
gate (tests/integration/objstore_server.py /gate/): progress reported while
the server reads it, then the model served with the revision of the same
bytes through file://; unregister; errors named."""

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import REPO, bin_path, start_weightd, stop_weightd


@pytest.fixture
def gated():
    """(weightd URL, objstore helper, http base URL, models folder) of a weightd
    that may register from the helper's host; the helper serves models/."""
    tmp = tempfile.mkdtemp(prefix="wt-pyadmin-")
    models = os.path.join(tmp, "models")
    os.makedirs(models)
    subprocess.run([bin_path("wt-mkckpt"), "--family", "llama", "--seed", "11", "--out",
                    os.path.join(models, "llama")], check=True, stdout=subprocess.DEVNULL)
    helper = subprocess.Popen([sys.executable, os.path.join(REPO, "tests", "integration",
                                                            "objstore_server.py"),
                               "--root", models, "--stdin"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = int(helper.stdout.readline().split()[1])
    host = "127.0.0.1:%d" % port
    proc = None
    try:
        proc, url, log = start_weightd(tmp, models, "--register-hosts", host)
        yield url, helper, "http://" + host, models
    finally:
        helper.stdin.write("open\n")  # a registration never waits on the gate
        helper.stdin.flush()
        if proc is not None:
            stop_weightd(proc, log)
        helper.stdin.close()
        helper.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


def gate(helper, cmd):
    helper.stdin.write(cmd + "\n")
    helper.stdin.flush()
    assert helper.stdout.readline().strip() == "ok"


def test_register_progress_and_unregister(gated):
    import weightd

    url, helper, base, _ = gated
    calls = []

    def progress(read, total):
        calls.append((read, total))
        if len(calls) == 2:
            gate(helper, "open")  # the server may finish reading now

    with weightd.Client(url) as c:
        st = c.admin("stats")
        assert "cache" in st.text
        res = c.register("remote", base + "/gate/llama", progress=progress)
        assert "registered model 'remote'" in res.text, res.text
        assert res.bytes > 0
        assert len(calls) >= 2, calls
        assert all(t == 0 or r <= t for r, t in calls)
        models = {m.name: m for m in c.models()}
        assert models["remote"].source == "registered"
        assert models["remote"].revision == models["llama"].revision  # the same bytes
        assert c.manifest("remote", tp_size=2, tp_rank=1).revision == models["llama"].revision
        again = c.register("remote", base + "/gate/llama")
        assert "already registered" in again.text
        out = c.unregister("remote")
        assert "unregistered model 'remote'" in out.text
        assert "remote" not in {m.name for m in c.models()}


def test_admin_errors(gated):
    import weightd

    url, helper, base, models = gated
    gate(helper, "open")
    with weightd.Client(url) as c:
        with pytest.raises(weightd.Error) as e:
            c.register("x", "http://elsewhere.example/m")  # not in register_hosts
        assert e.value.name == "WT_EPERM" and "register_hosts" in e.value.message
        with pytest.raises(weightd.Error) as e:
            c.unregister("llama")  # a models_dir folder
        assert e.value.name == "WT_EPERM"
        with pytest.raises(weightd.Error) as e:
            c.admin("register")
        assert e.value.name == "WT_EINVAL" and "register()" in e.value.message

        def boom(read, total):
            raise RuntimeError("progress failed")

        gate(helper, "close")
        with pytest.raises(RuntimeError):  # raised after the call; the server went on
            c.register("boom", base + "/gate/llama", progress=lambda r, t: (
                gate(helper, "open"), boom(r, t)))
        assert "boom" in {m.name for m in c.models()}
        warm = c.admin("warm", "llama", tp_size=2, tp_rank=0)  # both ranks of the layout
        assert warm.shards == 2 and warm.bytes > 0 and "2 shards warm" in warm.text, warm
        ev = c.admin("evict", "llama")
        assert ev.text.startswith("evicted 2 shards"), ev
        with pytest.raises(weightd.Error) as e:
            c.admin("warm", "llama", tp_size=3)  # the layout is checked
        assert e.value.name in ("WT_EINVAL", "WT_ELAYOUT")
