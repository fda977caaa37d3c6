#!/usr/bin/env bash
# Install what weightd needs to build and test, only where something is missing.
# Debian packages through apt-get (as root); test tools through pip.
set -euo pipefail

PKGS="build-essential lld pkg-config libnng-dev librocksdb-dev libprotobuf-c-dev \
protobuf-c-compiler libcmocka-dev libcurl4-openssl-dev libjansson-dev libinih-dev \
libxxhash-dev libssl-dev gcc-aarch64-linux-gnu libc6-dev-arm64-cross libmicrohttpd-dev clang-format python3 python3-pip \
python3-numpy python3-torch python3-pytest curl openssl bc gdb"
# gdb: a daemon test that hangs prints the thread stacks of what it waits for (the watchdog in
# tests/integration/fetch_lib/common.sh, test_weightd_flow's test_sigterm): the rare hangs seen
# in CI so far could not be reproduced here, so the report must come from the run that hung.
# Python tools the tests use: safetensors+numpy (HF reader check), moto (S3 server).
PYPKGS="safetensors numpy moto flask flask_cors" # moto + flask + flask_cors = moto[server] for S3; import names = pip names

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "deps: installing Debian packages:$missing"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends $missing >/dev/null
	else
		echo "deps: missing Debian packages:$missing"
		echo "deps: run: sudo apt-get install -y$missing"
		exit 1
	fi
fi

PY=$(command -v python3 || echo /usr/bin/python3)
pymissing=""
for m in $PYPKGS; do
	"$PY" -c "import $m" 2>/dev/null || pymissing="$pymissing $m"
done
# The Python package's tests (tests/integration/python_pkg.sh) run Debian's
# /usr/bin/python3 with Debian's torch 1.13 (CPU), numpy and pytest above, and
# transformers from PyPI, pinned to 4.39.3 (below 4.40, checked with torch 1.13.1).
SYSPY=/usr/bin/python3
tf=""
if ! "$SYSPY" -c 'import transformers, sys; sys.exit(transformers.__version__ != "4.39.3")' \
	2>/dev/null; then
	tf='transformers==4.39.3'
fi
# One pip run where both go to the same Python (its resolver and downloads run once), and
# --no-compile: Python compiles the modules a test imports when it first imports them
# (measured: the five tools and transformers, 24.9 s with the byte-compilation, 17.3 without).
if [ "$PY" -ef "$SYSPY" ] && [ -n "$tf" ]; then
	pymissing="$pymissing $tf"
	tf=""
fi
if [ -n "$pymissing" ]; then
	echo "deps: installing Python packages:$pymissing"
	"$PY" -m pip install -q --no-compile $pymissing 2>/dev/null ||
		"$PY" -m pip install -q --no-compile --break-system-packages $pymissing
fi
if [ -n "$tf" ]; then
	echo "deps: installing $tf for $SYSPY"
	"$SYSPY" -m pip install -q --no-compile --break-system-packages "$tf"
fi
exit 0
