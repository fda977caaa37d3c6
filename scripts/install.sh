#!/usr/bin/env bash
# install.sh — what `make install` does (the Makefile passes the variables):
#
#   $LIBDIR/libweights.so.X.Y.Z   the library; SONAME libweights.so.X
#   $LIBDIR/libweights.so.X       -> libweights.so.X.Y.Z (what programs load)
#   $LIBDIR/libweights.so         -> libweights.so.X.Y.Z (what -lweights links)
#   $LIBDIR/libweights.a          static archive
#   $LIBDIR/pkgconfig/weights.pc  from scripts/weights.pc.in
#   $PREFIX/include/weights/*.h   the public headers (and weights*.hpp, the C++17 wrapper)
#   $PREFIX/bin/weightd, weightctl
#   $PREFIX/share/weightd/weightd.conf.example   the annotated sample config
#                                 (never an active config: copy it to /etc yourself)
#   $PREFIX/share/weightd/deploy/weightd.conf    a deployment example for the unit
#   $PREFIX/lib/systemd/system/weightd.service   the systemd unit (@PREFIX@ filled in)
#
# Everything goes under $DESTDIR (empty by default) for staging and packaging;
# the paths written into weights.pc are without $DESTDIR.
set -eu
: "${BUILD:?}" "${PREFIX:?}" "${SOFILE:?}" "${SONAME:?}" "${WT_VERSION:?}"
DESTDIR=${DESTDIR:-}
LIBDIR=${LIBDIR:-$PREFIX/lib}
case "$PREFIX$LIBDIR" in
/*) ;;
*) echo "install: PREFIX '$PREFIX' and LIBDIR '$LIBDIR' must be absolute paths" >&2; exit 1 ;;
esac
for f in "$SOFILE" libweights.a weightd weightctl; do
	[ -f "$BUILD/$f" ] || { echo "install: $BUILD/$f is not built; run make first" >&2; exit 1; }
done

# Libs.private (static linking): the libraries the shared library needs, with
# the directories of its run path (CUDA) — so it never goes stale.
so_libs=$(readelf -d "$BUILD/$SOFILE" |
	sed -n 's/.*(NEEDED).*\[lib\([^.]*\)\.so.*\]/-l\1/p' | grep -vxE -- '-l(c|gcc_s|asan|ubsan)' || true)
so_dirs=$(readelf -d "$BUILD/$SOFILE" | sed -n 's/.*(R*UNPATH).*\[\(.*\)\]/\1/p' | tr ':' '\n' |
	sed -n 's|^/|-L/|p' || true)
private=$(echo $so_dirs $so_libs -lpthread)
# libdir relative to ${prefix} where it lies below it (pkg-config --define-prefix)
pc_libdir=$LIBDIR
case "$LIBDIR" in "$PREFIX"/*) pc_libdir="\${prefix}${LIBDIR#"$PREFIX"}" ;; esac

L=$DESTDIR$LIBDIR
install -d "$L/pkgconfig" "$DESTDIR$PREFIX/include/weights" "$DESTDIR$PREFIX/bin" \
	"$DESTDIR$PREFIX/share/weightd"
install -m 0755 "$BUILD/$SOFILE" "$L/$SOFILE"
ln -sf "$SOFILE" "$L/$SONAME"
ln -sf "$SOFILE" "$L/libweights.so"
install -m 0644 "$BUILD/libweights.a" "$L/libweights.a"
install -m 0644 include/weights/*.h include/weights/*.hpp "$DESTDIR$PREFIX/include/weights/"
sed -e "s|@PREFIX@|$PREFIX|g" -e "s|@LIBDIR@|$pc_libdir|g" -e "s|@VERSION@|$WT_VERSION|g" \
	-e "s|@LIBS_PRIVATE@|$private|g" scripts/weights.pc.in >"$L/pkgconfig/weights.pc"
install -m 0755 "$BUILD/weightd" "$BUILD/weightctl" "$DESTDIR$PREFIX/bin/"
install -m 0644 weightd/weightd.conf "$DESTDIR$PREFIX/share/weightd/weightd.conf.example"
install -d "$DESTDIR$PREFIX/share/weightd/deploy" "$DESTDIR$PREFIX/lib/systemd/system"
install -m 0644 dist/weightd.conf "$DESTDIR$PREFIX/share/weightd/deploy/weightd.conf"
sed -e "s|@PREFIX@|$PREFIX|g" dist/weightd.service \
	>"$DESTDIR$PREFIX/lib/systemd/system/weightd.service"
echo "installed libweights $WT_VERSION ($SONAME), weightd, weightctl under $DESTDIR$PREFIX"
