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
import time

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
    # written a while ago: weightd asks again, a second later, about an http
    # object answered in the second of its last write (README "Revision digest")
    old = time.time() - 10
    for f in os.listdir(os.path.join(models, "llama")):
        os.utime(os.path.join(models, "llama", f), (old, old))
    helper = subprocess.Popen([sys.executable, os.path.join(REPO, "tests", "integration",
                                                            "objstore_server.py"),
                               "--root", models, "--stdin"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    proc = None
    try:
        port = int(helper.stdout.readline().split()[1])
        host = "127.0.0.1:%d" % port
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

        # an exception in progress stops the waiting at once (the gate is
        # still closed); the registration goes on in the server
        gate(helper, "close")
        t0 = time.monotonic()
        with pytest.raises(RuntimeError):
            c.register("boom", base + "/gate/llama", progress=boom)
        assert time.monotonic() - t0 < 10
        listed = {m.name: m for m in c.models()}
        assert not listed["boom"].available and "being registered" in listed["boom"].error
        gate(helper, "open")
        for _ in range(200):
            if {m.name: m for m in c.models()}["boom"].available:
                break
            time.sleep(0.05)
        else:
            pytest.fail("boom never became available")
        for op in ("evict", "stats"):
            with pytest.raises(weightd.Error) as e:
                c.admin(op, "llama", tp_size=2)  # only warm takes a layout
            assert e.value.name == "WT_EINVAL" and "only warm" in e.value.message
        warm = c.admin("warm", "llama", tp_size=2, tp_rank=0)  # both ranks of the layout
        assert warm.shards == 2 and warm.bytes > 0 and "2 shards warm" in warm.text, warm
        ev = c.admin("evict", "llama")
        assert ev.text.startswith("evicted 2 shards"), ev
        with pytest.raises(weightd.Error) as e:
            c.admin("warm", "llama", tp_size=3)  # the layout is checked
        assert e.value.name in ("WT_EINVAL", "WT_ELAYOUT")


def test_register_ctrl_c(gated):
    """Ctrl-C while register() waits for a long read: KeyboardInterrupt within
    a second or two (the library stops waiting), not when the server ends."""
    import signal

    url, helper, base, _ = gated
    # a shell's background job inherits SIGINT ignored, and Python then never
    # raises KeyboardInterrupt: the child restores the default first
    code = ("import signal, weightd, sys\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "c = weightd.Client(%r)\n"
            "print('waiting', flush=True)\n"
            "c.register('intr', %r)\n" % (url, base + "/gate/llama"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "waiting"
        time.sleep(1.5)  # inside the call: the first answer said "opening"
        t0 = time.monotonic()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=15)
        took = time.monotonic() - t0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert "KeyboardInterrupt" in err, err
    assert took < 5, took
    import weightd

    with weightd.Client(url) as c:  # the registration went on in the server
        m = {m.name: m for m in c.models()}["intr"]
        assert not m.available and "being registered" in m.error


def test_register_config_override(gated):
    """config_override (vLLM's hf_overrides): the llama folder registered as the Mistral
    class is listed so, under its own revision; a dict and the same JSON text are one
    registration; no override under that name is WT_EEXIST; a bad one names the fix."""
    import weightd

    url, helper, base, _ = gated
    gate(helper, "open")
    with weightd.Client(url) as c:
        res = c.register("mis", base + "/gate/llama",
                         config_override={"architectures": ["MistralForCausalLM"]})
        assert "config override {\"architectures\":[\"MistralForCausalLM\"]}" in res.text, \
            res.text
        models = {m.name: m for m in c.models()}
        assert models["mis"].architecture == "MistralForCausalLM"
        assert models["llama"].architecture == "LlamaForCausalLM"
        assert models["mis"].revision != models["llama"].revision
        assert models["mis"].config_override == '{"architectures":["MistralForCausalLM"]}'
        assert models["llama"].config_override == ""
        assert models["mis"].uri == base + "/gate/llama"
        again = c.register("mis", base + "/gate/llama",
                           config_override='{"architectures": ["MistralForCausalLM"]}')
        assert "nothing changed" in again.text, again.text
        with pytest.raises(weightd.Error) as e:
            c.register("mis", base + "/gate/llama")
        assert e.value.name == "WT_EEXIST"
        with pytest.raises(weightd.Error) as e:
            c.register("bad", base + "/gate/llama", config_override="[1]")
        assert e.value.name == "WT_EINVAL" and "JSON object" in e.value.message
        c.unregister("mis")
