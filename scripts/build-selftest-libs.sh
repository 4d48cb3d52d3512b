#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: build-selftest-libs.sh [-h|--help] ARCH

Cross-build the static libraries the BPF selftest runners link (libelf and zlib) for an
arch that Debian 12 has no binary packages for: qemu/arch/ARCH.conf names their Debian source
packages in SELFTEST_SRC_PKGS (riscv64: elfutils zlib), at the versions sources.conf pins.
scripts/fetch-sources.sh downloads and verifies them; dpkg-source applies Debian's patches;
the arch's cross compiler builds them into \$KSERIES_CACHE/sysroot/BUILD_NAME (include/,
lib/), once: a later run with the same pinned versions does nothing. An arch with an empty
SELFTEST_SRC_PKGS (Debian's own packages serve it) needs nothing.

Options:
  -h, --help   show this help

Environment: DEBIAN_MIRROR (see scripts/fetch-sources.sh), KSERIES_CACHE."
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "${1:-}" in
-h|--help) echo "$usage"; exit 0 ;;
""|-*) echo "$usage" >&2; exit 64 ;;
esac
[ $# -eq 1 ] || { echo "$usage" >&2; exit 64; }
load_arch "$1"
[ -n "$SELFTEST_SRC_PKGS" ] || exit 0

root=$KS_CACHE/sysroot/$BUILD_NAME
want=
for p in $SELFTEST_SRC_PKGS; do
	v=$(awk -v p="$p" '$1 == p { print $2; exit }' "$KS_ROOT/sources.conf")
	[ -n "$v" ] || die "$p (SELFTEST_SRC_PKGS of $ARCH_NAME) is not pinned in sources.conf"
	want="$want $p=$v"
done
if [ -f "$root/.built" ] && [ "$(cat "$root/.built")" = "$want" ]; then
	note "$ARCH_NAME:$want already built in $root"
	exit 0
fi

# shellcheck disable=SC2086 # one word per package
dscs=$("$KS_ROOT/scripts/fetch-sources.sh" $SELFTEST_SRC_PKGS) || exit 1
mapfile -t dscs <<< "$dscs"
work=$KS_CACHE/sysroot/src-$BUILD_NAME
rm -rf "$root" "$work"
mkdir -p "$root/include" "$root/lib" "$work"
trap 'rm -rf "$work"' EXIT
log=$KS_CACHE/sysroot/build-$BUILD_NAME.log
: > "$log"
note "$ARCH_NAME: unpacking Debian sources:$want (log: $log)"
for dsc in "${dscs[@]}"; do
	d=${dsc##*/}
	(cd "$work" && dpkg-source -x "$dsc" "${d%%_*}") >> "$log" 2>&1 ||
		die "dpkg-source -x $dsc failed (see $log)"
done

# -fPIC: libbpf's Makefile also links a shared libbpf.so against these.
cc="${CROSS}gcc"
(
	cd "$work"/zlib
	CC=$cc CFLAGS="-O2 -fPIC" ./configure --static --prefix="$root"
	make -j"$(nproc)" libz.a
	make install
) >> "$log" 2>&1 || die "zlib does not build for $ARCH_NAME (see $log)"
(
	cd "$work"/elfutils
	./configure --host="${CROSS%-}" --disable-debuginfod --disable-libdebuginfod \
		--disable-demangler --disable-nls --without-bzlib --without-lzma --without-zstd \
		CFLAGS="-O2 -fPIC" CPPFLAGS="-I$root/include" LDFLAGS="-L$root/lib"
	make -C lib -j"$(nproc)"
	make -C libelf -j"$(nproc)" libelf.a
	cp libelf/libelf.a "$root/lib/"
	cp libelf/libelf.h libelf/gelf.h libelf/nlist.h "$root/include/"
) >> "$log" 2>&1 || die "libelf (elfutils) does not build for $ARCH_NAME (see $log)"
echo "$want" > "$root/.built"
note "$ARCH_NAME: built libz.a and libelf.a into $root"
