#!/usr/bin/env bash
# check-abi.sh [BUILD] — the symbols libweights.so exports must be exactly the
# committed list include/weights/libweights.abi, and exactly the functions the
# public headers declare with WT_API. Any difference fails and names it.
# The library must also not CONTAIN code of the internal-only modules (the
# reference forward pass, kernels, planner, cache, daemon, store backends:
# any defined symbol, hidden or not, with their prefixes, in libweights.so or
# libweights.a) nor NEED the CUDA runtime (the CUDA sink dlopens it), so a
# host without CUDA can load it (docs/architecture.md).
#
# To change the list deliberately (docs/client.md, "ABI rules"): adding a function
# is a compatible change (bump WT_VERSION_MINOR); removing or renaming one, or
# changing its signature, breaks every program linked against libweights.so.1
# (bump WT_VERSION_MAJOR, which is the SONAME). Then regenerate the list:
#     scripts/check-abi.sh --update [BUILD]
set -u
update=0
[ "${1:-}" = --update ] && { update=1; shift; }
B=${1:-${WT_BUILD:-build}}
cd "$(dirname "$0")/.." || exit 1
LIST=${WT_ABI_LIST:-include/weights/libweights.abi} # tests point it elsewhere
SO=$B/libweights.so
[ -e "$SO" ] || { echo "check-abi: $SO not built; run make first"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-abi-XXXXXX")
trap 'rm -rf "$T"' EXIT

# defined dynamic symbols of any kind (code T, data D/B/R, weak W/V, ...)
nm -D --defined-only "$SO" | awk '{print $NF}' | grep -v '^_\(init\|fini\)$' | sort -u >"$T/exported"
grep -v '^#' "$LIST" 2>/dev/null | sed '/^$/d' | sort -u >"$T/listed"
# every `WT_API type name(` in the public headers
sed -n 's/^WT_API[^(]*[ *]\([a-z_][a-z0-9_]*\)(.*/\1/p' include/weights/*.h | sort -u >"$T/declared"

if [ "$update" = 1 ]; then
	{
		echo "# Symbols exported by libweights.so.$(sed -n 's/^.define WT_VERSION_MAJOR *//p' include/weights/weights.h) (nm -D --defined-only), one a line."
		echo "# Checked by scripts/check-abi.sh in make check. Change it only with"
		echo "# scripts/check-abi.sh --update, following docs/client.md \"ABI rules\"."
		cat "$T/exported"
	} >"$LIST"
	echo "check-abi: wrote $LIST ($(wc -l <"$T/exported") symbols)"
	exit 0
fi

rc=0
# internal-only modules, by symbol prefix (Makefile MODULES minus LIB_MODULES)
FORBID=${WT_ABI_FORBID:-ref_ engine_ref_ kern_ shardmap_ sm_ cache_ wd_ store_ ckpt_}
: >"$T/inside"
for f in "$SO" "$B/libweights.a"; do
	[ -e "$f" ] || continue
	nm --defined-only "$f" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u >"$T/syms"
	for p in $FORBID; do
		grep "^$p" "$T/syms" | sed "s|^|  $f: |" >>"$T/inside"
	done
done
if [ -s "$T/inside" ]; then
	echo "check-abi: libweights contains code of internal-only modules (reference, kernels,"
	echo "  planner, cache, daemon, stores; prefixes: $FORBID):"
	head -20 "$T/inside"
	echo "  move the code out of LIB_MODULES (Makefile) or stop calling it from the library"
	rc=1
fi
NEEDED_RE=${WT_ABI_NO_NEED:-'libcuda|libcudart|libnvrtc|libcublas'}
if readelf -d "$SO" | grep NEEDED | grep -E "$NEEDED_RE" >"$T/needed"; then
	echo "check-abi: $SO needs a CUDA library at load time, so a host without CUDA cannot"
	echo "  load it:"
	sed 's/^/  /' "$T/needed"
	echo "  load it with dlopen (engine/cudart.c) instead of linking it (CUDA_LIBS)"
	rc=1
fi
if ! diff -u "$T/listed" "$T/exported" >"$T/d1"; then
	echo "check-abi: $SO exports a different set of symbols than $LIST"
	echo "  (- listed but not exported: programs using it no longer link / load;"
	echo "   + exported but not listed: a new public symbol, or an internal one leaking)"
	sed -n '/^[-+][^-+]/p' "$T/d1" | sed 's/^/  /'
	rc=1
fi
if ! diff -u "$T/declared" "$T/exported" >"$T/d2"; then
	echo "check-abi: WT_API declarations in include/weights/*.h and exports of $SO differ"
	echo "  (- declared but not exported: not defined in libweights;"
	echo "   + exported but not declared: WT_API on a function no header declares)"
	sed -n '/^[-+][^-+]/p' "$T/d2" | sed 's/^/  /'
	rc=1
fi
if [ "$rc" != 0 ]; then
	echo "check-abi: if the change is deliberate, follow docs/client.md \"ABI rules\" (removing or"
	echo "  changing a symbol bumps WT_VERSION_MAJOR = the SONAME; adding one bumps"
	echo "  WT_VERSION_MINOR), then run: scripts/check-abi.sh --update $B"
	exit 1
fi
echo "check-abi: $SO exports the $(wc -l <"$T/exported") listed symbols, all declared WT_API"
