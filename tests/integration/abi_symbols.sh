#!/usr/bin/env bash
# abi_symbols.sh — libweights.so exports exactly include/weights/libweights.abi
# and the WT_API declarations of the public headers (scripts/check-abi.sh); the
# checker itself fails, naming the symbol and the way to update the list, when
# a listed symbol is missing or an unlisted one appears.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${WT_BUILD:-build}
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-abisym-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "abi_symbols.sh: FAIL: $*"; cat "$T/out" 2>/dev/null; exit 1; }

scripts/check-abi.sh "$B" >"$T/out" 2>&1 || fail "exported symbols differ from the list"
cat "$T/out"
grep -qx wt_version include/weights/libweights.abi || fail "wt_version not in the list"

# a symbol the list has but the library lost (a removed function)
grep -v '^wt_version$' include/weights/libweights.abi >"$T/short.abi"
echo wt_client_reticulate >>"$T/short.abi"
WT_ABI_LIST=$T/short.abi scripts/check-abi.sh "$B" >"$T/out" 2>&1 && fail "checker passed a changed list"
grep -q '^  -wt_client_reticulate$' "$T/out" || fail "checker does not name the missing symbol"
grep -q '^  +wt_version$' "$T/out" || fail "checker does not name the unlisted symbol"
grep -q 'check-abi.sh --update' "$T/out" || fail "checker does not say how to update the list"
grep -q 'WT_VERSION_MAJOR' "$T/out" || fail "checker does not state the SONAME rule"

# libweights must not contain the reference forward pass (or any internal-only
# module) nor need the CUDA runtime: the real library passes (above); a fake
# one that has a hidden ref_ function and links a libcudart must fail, naming both.
mkdir -p "$T/fake" "$T/cu"
printf 'int wt_version_x(void){return 1;}\n' >"$T/cu/c.c"
cc -shared -fPIC -Wl,-soname,libcudart.so.99 -o "$T/cu/libcudart.so" "$T/cu/c.c" ||
	fail "cannot build the fake cudart"
printf '%s\n' '__attribute__((visibility("hidden"))) int ref_forward_full(void){return 2;}' \
	'int wt_version_x(void); int wt_version(void){return wt_version_x()+ref_forward_full();}' \
	>"$T/fake/l.c"
cc -shared -fPIC -Wl,--no-as-needed -o "$T/fake/libweights.so" "$T/fake/l.c" -L"$T/cu" -lcudart ||
	fail "cannot build the fake library"
scripts/check-abi.sh "$T/fake" >"$T/out" 2>&1 && fail "checker passed a library with ref_ code and cudart"
grep -q "libweights.so: ref_forward_full" "$T/out" || fail "checker does not name the contained ref_ symbol"
grep -q "internal-only modules" "$T/out" || fail "checker does not say why ref_ is refused"
grep -q "libcudart.so.99" "$T/out" || fail "checker does not name the CUDA library needed"
grep -q "dlopen" "$T/out" || fail "checker does not say how to drop the CUDA dependency"
# and the real library: none of the reference/kernels symbols, no CUDA NEEDED
nm --defined-only "$B/libweights.so" | grep -E ' (ref_|engine_ref_|kern_)' &&
	fail "libweights.so contains reference or kernels code"
readelf -d "$B/libweights.so" | grep NEEDED | grep -q cudart && fail "libweights.so needs libcudart"
# test and benchmark hooks stay out of the shipped library (issue 15): no switch
# that turns hash verification off, no fault injection, hidden or not
for lib in "$B/libweights.a" "$B/libweights.so"; do
	hooks=$(nm -A "$lib" 2>/dev/null | grep -E ' [TtDdBb] [a-z_]*(set_verify|set_faults)' || true)
	[ -z "$hooks" ] || fail "$lib defines test/benchmark hooks: $hooks"
done
echo "abi_symbols.sh: ok"
