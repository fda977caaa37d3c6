#!/usr/bin/env bash
# cxx_link.sh — libweights from C++: every public header compiles alone as
# C++11 and C++17 (and as C11) with -Wall -Wextra -Werror -pedantic; a C++
# program (tests/cxx/cxx_fetch.cpp) compiled with c++ links against
# libweights.so (the symbols are unmangled: extern "C"), fetches rank 1 of 2 of
# a fixture from a real weightd into the host sink, a C++ sink and a file, and
# the file is byte-identical to `weightctl shard` of the same rank.
. "$(dirname "$0")/fetch_lib/common.sh"
need_bins
cd "$(dirname "$0")/../.." || exit 1
command -v c++ >/dev/null || die "c++ not found (Debian: build-essential; make deps)"
SAN=""
readelf -d "$B/libweights.so" | grep -q 'NEEDED.*libasan' && SAN="-fsanitize=address,undefined"
STRICT="-Wall -Wextra -Werror -pedantic"

for h in include/weights/*.h; do
	printf '#include "weights/%s"\nint main(void) { return 0; }\n' "$(basename "$h")" >"$T/one.c"
	cp "$T/one.c" "$T/one.cpp"
	for std in c++11 c++17; do
		# shellcheck disable=SC2086
		c++ -std=$std $STRICT -Iinclude -fsyntax-only "$T/one.cpp" 2>"$T/hdr.err" ||
			{ cat "$T/hdr.err"; die "$h does not compile alone as $std"; }
	done
	# shellcheck disable=SC2086
	cc -std=c11 $STRICT -Iinclude -fsyntax-only "$T/one.c" 2>"$T/hdr.err" ||
		{ cat "$T/hdr.err"; die "$h does not compile alone as C11"; }
done
for h in include/weights/*.hpp; do
	printf '#include "weights/%s"\nint main() { return 0; }\n' "$(basename "$h")" >"$T/hpp.cpp"
	# shellcheck disable=SC2086
	c++ -std=c++17 $STRICT -Iinclude -fsyntax-only "$T/hpp.cpp" 2>"$T/hdr.err" ||
		{ cat "$T/hdr.err"; die "$h does not compile alone as c++17"; }
done
printf '#include "weights/weights.hpp"\nint main() { return 0; }\n' >"$T/hpp.cpp"
# shellcheck disable=SC2086
c++ -std=c++11 $STRICT -Iinclude -fsyntax-only "$T/hpp.cpp" 2>"$T/hdr.err" &&
	die "weights.hpp compiled as c++11"
grep -q 'needs C++17' "$T/hdr.err" || { cat "$T/hdr.err"; die "weights.hpp under c++11: no clear error"; }

# shellcheck disable=SC2086
c++ -std=c++11 $STRICT $SAN -Iinclude -c tests/cxx/cxx_fetch.cpp -o "$T/cxx_fetch.o" ||
	die "compiling tests/cxx/cxx_fetch.cpp"
nm -u "$T/cxx_fetch.o" | grep -qE ' wt_client_opts_init$' ||
	die "wt_client_opts_init is referenced with C++ linkage (missing extern \"C\")"
# shellcheck disable=SC2086
c++ $SAN "$T/cxx_fetch.o" -L"$B" -lweights -Wl,-rpath,"$B" -o "$T/cxx_fetch" ||
	die "linking the C++ program against $B/libweights.so"
# shellcheck disable=SC2086
c++ -std=c++17 $STRICT $SAN -pthread -Iinclude tests/cxx/cxx_wrapper.cpp -L"$B" -lweights \
	-Wl,-rpath,"$B" -o "$T/cxx_wrapper" || die "building tests/cxx/cxx_wrapper.cpp"

mkdir -p "$T/models" "$T/ext"
"$B/wt-mkckpt" --family llama --out "$T/models/llama" >/dev/null || die "wt-mkckpt llama"
for m in m1 m2 m3; do cp -r "$T/models/llama" "$T/ext/$m"; done
# http:// copies whose tensor reads take 1.2 s each (register with progress);
# the helper exits when this script's end of the fifo closes
mkfifo "$T/http.in"
python3 tests/integration/objstore_server.py --root "$T/ext" --slow-s 1.2 \
	--stdin <"$T/http.in" >"$T/http.port" &
exec 7>"$T/http.in"
for _ in $(seq 100); do [ -s "$T/http.port" ] && break; sleep 0.05; done
hport=$(awk '{print $2}' "$T/http.port")
[ -n "$hport" ] || die "objstore_server.py did not start"
start_weightd wd "$T/models" "$T/cache" "" --register-roots "$T/models" --revalidate-ms 200 \
	--register-hosts "127.0.0.1:$hport"
"$T/cxx_fetch" "$WD_URL" llama 2 1 "$T/cxx.safetensors" || die "cxx_fetch"
"$B/weightctl" shard --model-dir "$T/models/llama" --tp-size 2 --tp-rank 1 \
	--out "$T/shard.safetensors" 2>"$T/shard.err" || die "weightctl shard: $(cat "$T/shard.err")"
cmp -s "$T/cxx.safetensors" "$T/shard.safetensors" || die "C++ fetch differs from weightctl shard"
"$T/cxx_wrapper" "$WD_URL" llama "$T" "$T/models/llama" "http://127.0.0.1:$hport/slow/" ||
	die "cxx_wrapper"
for f in file fwd; do
	cmp -s "$T/$f.safetensors" "$T/shard.safetensors" ||
		die "weights.hpp fetch ($f.safetensors) differs from weightctl shard"
done
exec 7>&-
echo "cxx_link.sh: ok"
