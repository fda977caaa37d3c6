"""README.md shows python/examples/quickstart.py verbatim; it runs against the
test weightd and prints what the README says it does."""

import os
import subprocess
import sys

from conftest import REPO, need

EXAMPLE = os.path.join(REPO, "python", "examples", "quickstart.py")


def test_readme_holds_the_example_verbatim():
    with open(EXAMPLE) as f:
        code = f.read()
    with open(os.path.join(REPO, "README.md")) as f:
        readme = f.read()
    assert "```python\n" + code + "```\n" in readme, \
        "README.md must show python/examples/quickstart.py verbatim in a ```python block"


def test_example_runs(url):
    need("torch")
    import weightd

    pkg_root = os.path.dirname(os.path.dirname(weightd.__file__))  # the weightd under test
    path = os.pathsep.join(p for p in (pkg_root, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, WEIGHTD_ENDPOINT=url, WEIGHTD_MODEL="llama", PYTHONPATH=path)
    r = subprocess.run([sys.executable, EXAMPLE], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert any(line.startswith("model llama LlamaForCausalLM ") for line in out), out
    assert "qkv torch.bfloat16 (192, 256)" in out
    assert any(line.startswith("fetched ") for line in out)
    assert any(line.startswith("loaded ") and line.endswith(" tensors into engine memory")
               for line in out), out
    assert any(line.startswith("streamed ") and line.endswith(" tensors into engine memory")
               for line in out), out
    assert out[-1] in ("cancelled", "finished before the cancel")
