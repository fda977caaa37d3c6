#!/usr/bin/env bash
# install.sh — `make install DESTDIR=... PREFIX=/usr` stages the library with
# SONAME libweights.so.1 (+ .so.1 and .so links, static archive), the public
# headers, weights.pc, weightd, weightctl and the sample config; a C program
# built only from pkg-config's flags against that tree (-Wall -Wextra -Werror
# -pedantic) links to libweights.so.1, runs, and gets the version it was
# compiled against; the same program links statically with Libs.private.
set -u
B=$(cd "${WT_BUILD:-build}" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-install-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "install.sh: FAIL: $*"; exit 1; }
cd "$(dirname "$0")/../.."
[ -f "$B/weightd" ] || { echo "install.sh: FAIL: $B/weightd not built (make all)"; exit 1; }

# An ASan build's library needs the sanitizer runtime in the program too.
SAN=""
readelf -d "$B/libweights.so" | grep -q 'NEEDED.*libasan' && SAN="-fsanitize=address,undefined"

# -o all: install what the suite built, never rebuild it here
make -s -o all install BUILD="$B" DESTDIR="$T/root" PREFIX=/usr >"$T/make.out" 2>&1 ||
	{ cat "$T/make.out"; fail "make install"; }
R=$T/root/usr
for f in lib/libweights.a lib/pkgconfig/weights.pc include/weights/weights.h \
	include/weights/client.h include/weights/engine.h include/weights/weights.hpp \
	include/weights/weights_admin.hpp \
	bin/weightd bin/weightctl \
	share/weightd/weightd.conf.example share/weightd/deploy/weightd.conf \
	lib/systemd/system/weightd.service; do
	[ -f "$R/$f" ] || fail "$f not installed"
done
U=$R/lib/systemd/system/weightd.service
grep -qx 'ExecStart=/usr/bin/weightd --config /etc/weightd/weightd.conf' "$U" ||
	fail "unit: ExecStart not filled in: $(grep ExecStart "$U")"
grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$U" || fail "unit: no reload on SIGHUP"
grep -q '@PREFIX@' "$U" && fail "unit: @PREFIX@ left"
for k in User=weightd CacheDirectory=weightd LimitNOFILE= ProtectSystem=strict; do
	grep -q "^$k" "$U" || fail "unit: no $k"
done
# the unit's three sections, each key in one of them (systemd-analyze verify
# needs a booted systemd, which build machines and CI containers lack)
[ "$(grep -c '^\[\(Unit\|Service\|Install\)\]$' "$U")" = 3 ] || fail "unit: sections"
grep -vE '^(#|$|\[(Unit|Service|Install)\]$|[A-Za-z]+=)' "$U" && fail "unit: a line that is no key"
real=$(readlink "$R/lib/libweights.so.1") || fail "lib/libweights.so.1 is not a link"
[ "$(readlink "$R/lib/libweights.so")" = "$real" ] || fail "lib/libweights.so does not point at $real"
case "$real" in libweights.so.1.*.*) ;; *) fail "library file '$real' is not libweights.so.1.X.Y" ;; esac
for so in "$R/lib/$real" "$B/libweights.so"; do
	readelf -d "$so" | grep -q 'SONAME.*\[libweights\.so\.1\]' || fail "$so: SONAME is not libweights.so.1"
done
grep -q '^prefix=/usr$' "$R/lib/pkgconfig/weights.pc" || fail "weights.pc: prefix is not /usr"
want=${real#libweights.so.}
"$R/bin/weightctl" --version | grep -qx "weightctl $want" || fail "installed weightctl --version"

cat >"$T/prog.c" <<'C'
#include <stdio.h>
#include <string.h>

#include <weights/client.h>
#include <weights/weights.h>

int main(void)
{
	int ma, mi, pa;
	const char *v = wt_version(&ma, &mi, &pa);
	if (strcmp(v, WT_VERSION_STRING) != 0 || ma != WT_VERSION_MAJOR) {
		fprintf(stderr, "library %s, header %s\n", v, WT_VERSION_STRING);
		return 1;
	}
	wt_client_opts o;
	wt_client_opts_init(&o);
	wt_client *c = NULL;
	wt_errbuf err;
	/* no endpoint: refused with a message */
	if (o.struct_size != sizeof(o) || wt_client_open(&c, &o, &err) != WT_EINVAL || c != NULL)
		return 2;
	printf("libweights %s (%d.%d.%d): %s\n", v, ma, mi, pa, err.msg);
	return 0;
}
C
PC="pkg-config --define-prefix"
export PKG_CONFIG_LIBDIR="$R/lib/pkgconfig" # ours only
[ "$($PC --modversion weights)" = "$want" ] || fail "pkg-config --modversion: want $want"
cflags=$($PC --cflags weights) && libs=$($PC --libs weights) || fail "pkg-config weights"
case "$cflags $libs" in *"$R/include"*"$R/lib"*) ;; *) fail "pkg-config flags not in the staged tree: $cflags $libs" ;; esac
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror -pedantic $SAN $cflags "$T/prog.c" $libs -o "$T/prog" ||
	fail "compiling against the installed tree"
readelf -d "$T/prog" | grep -q 'NEEDED.*\[libweights\.so\.1\]' || fail "program does not need libweights.so.1"
LD_LIBRARY_PATH="$R/lib" "$T/prog" >"$T/out" 2>&1 || { cat "$T/out"; fail "program failed"; }
grep -q "^libweights $want " "$T/out" || fail "unexpected output: $(cat "$T/out")"
cat "$T/out"

# static: the archive plus Libs.private, no libweights.so at run time
priv=$($PC --static --libs-only-L --libs-only-l weights | sed 's/-lweights//') || fail "pkg-config --static"
# shellcheck disable=SC2086
cc -std=c11 $SAN $cflags "$T/prog.c" "$R/lib/libweights.a" $priv -o "$T/prog_static" ||
	fail "static link with Libs.private ($priv)"
readelf -d "$T/prog_static" | grep -q 'NEEDED.*libweights' && fail "static program needs libweights.so"
"$T/prog_static" >/dev/null || fail "static program failed"
echo "install.sh: ok (staged /usr, SONAME libweights.so.1, file $real)"
