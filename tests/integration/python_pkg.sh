#!/usr/bin/env bash
# python_pkg.sh — the Python package (python/, docs/engines.md "Python"):
# `pip install` of ./python into a temp target, then
# `/usr/bin/python3 -m pytest python/tests` with that copy and $WT_BUILD's
# libweights.so.1; the fixtures (python/tests/conftest.py) start weightd on a
# free port. Missing torch, numpy, pytest or transformers is a failure here
# (scripts/deps.sh installs them), and so is a run that collects no tests.
# In an ASan build the sanitizer runtime is preloaded into Python (not into the build's
# programs, which carry it).
set -u
B=${WT_BUILD:-build}
B=$(cd "$B" && pwd)
PY=/usr/bin/python3
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-pypkg-XXXXXX")
trap 'rm -rf "$T"' EXIT
die() {
	echo "$(basename "$0"): FAIL: $*" >&2
	exit 1
}

[ -e "$B/libweights.so.1" ] || die "$B/libweights.so.1 not built: run make"
# found, not imported (importing torch and transformers took 5.5 CPU-s; pytest imports them
# anyway, and a module that is found but breaks on import fails the run there)
missing=$("$PY" -c 'import importlib.util as u, sys
print(" ".join(m for m in sys.argv[1:] if u.find_spec(m) is None))' numpy torch pytest transformers) ||
	die "$PY does not run"
[ -z "$missing" ] || die "$missing not installed for $PY: run scripts/deps.sh"

# pip builds a local folder in place: build a copy, keep the tree clean.
cp -r python "$T/src"
rm -rf "$T/src/build" "$T/src"/*.egg-info
"$PY" -m pip install -q --no-build-isolation --no-deps --target "$T/site" "$T/src" \
	>"$T/pip.log" 2>&1 || { cat "$T/pip.log" >&2; die "pip install ./python failed"; }
[ -f "$T/site/weightd/__init__.py" ] || die "pip install put no weightd/ in $T/site"

export PYTHONPATH="$T/site" WEIGHTD_LIB="$B/libweights.so.1" WEIGHTD_EXPECT_PKG="$T/site"
export WEIGHTD_REQUIRE_ALL=1 WT_BUILD="$B" PYTHONDONTWRITEBYTECODE=1
if nm -D "$B/libweights.so.1" 2>/dev/null | grep -q __asan_init; then
	# Python itself is not instrumented: the runtime must load first; its
	# allocations are not ours to leak-check.
	LD_PRELOAD="$(cc -print-file-name=libasan.so):$(cc -print-file-name=libubsan.so)"
	export LD_PRELOAD ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
	# The build's programs carry the runtime linked in (the Makefile's EXE_SAN) and abort on a
	# second one preloaded ("linked against incompatible ASan runtimes"): the tests start them
	# (conftest.bin_path: $WT_BUILD/NAME) through wrappers that drop LD_PRELOAD and exec them.
	W=$T/bin
	mkdir -p "$W/tests/tools"
	for p in weightctl weightd wt-mkckpt tests/tools/wt-faultyd; do
		printf '#!/bin/sh\nunset LD_PRELOAD\nexec %q "$@"\n' "$B/$p" >"$W/$p"
		chmod +x "$W/$p"
	done
	export WT_BUILD="$W"
fi
"$PY" -m pytest -q -p no:cacheprovider -rs python/tests ${WT_PYTEST_ARGS:-}
rc=$?
[ "$rc" = 5 ] && die "pytest collected no tests in python/tests"
[ "$rc" = 0 ] || die "pytest exited $rc"
echo "python_pkg: ok"
