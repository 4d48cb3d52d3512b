#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: build-selftest-libs.sh [-h|--help] ARCH

Cross-build the static libraries the BPF selftest runners link (libelf and zlib) for an
arch that Debian 12 has no binary packages for: qemu/arch/ARCH.conf names their development
packages in SELFTEST_SRC_PKGS (riscv64: libelf-dev zlib1g-dev), whose Debian source packages
(elfutils, zlib) are built at the versions of the build machine's packages scripts/deps.sh installs. They are fetched with 'apt-get source' from the Debian 12
mirror (signed Sources index, Debian's patches applied by dpkg-source), built with the
arch's cross compiler and installed into \$KSERIES_CACHE/sysroot/BUILD_NAME (include/, lib/),
once: a later run with the same versions does nothing. An arch with an empty
SELFTEST_SRC_PKGS (Debian's own packages serve it) needs nothing.

Options:
  -h, --help   show this help

Environment: DEBIAN_MIRROR (default: http://deb.debian.org/debian), DEBIAN_SECURITY_MIRROR
(default: http://deb.debian.org/debian-security), KSERIES_CACHE."
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
host=$(dpkg --print-architecture)
want=
for p in $SELFTEST_SRC_PKGS; do
	# The source package and version of the build machine's own package.
	v=$(dpkg-query -W -f='${source:Package}=${source:Version}' "$p:$host" 2>/dev/null) ||
		die "$p:$host is not installed (scripts/deps.sh); its source version is the one built"
	want="$want $v"
done
if [ -f "$root/.built" ] && [ "$(cat "$root/.built")" = "$want" ]; then
	note "$ARCH_NAME:$want already built in $root"
	exit 0
fi

work=$KS_CACHE/sysroot/src-$BUILD_NAME
rm -rf "$root" "$work"
mkdir -p "$root/include" "$root/lib" "$work/lists/partial"
trap 'rm -rf "$work"' EXIT
# The installed versions may come from the point-release, updates or security archive.
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
{
	echo "deb-src $mirror bookworm main"
	echo "deb-src $mirror bookworm-updates main"
	echo "deb-src ${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} bookworm-security main"
} > "$work/sources.list"
apt_opts=(-q -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$work/lists")
log=$KS_CACHE/sysroot/build-$BUILD_NAME.log
: > "$log"
note "$ARCH_NAME: fetching Debian sources:$want (log: $log)"
apt-get "${apt_opts[@]}" update >> "$log" 2>&1 || die "apt-get update of the deb-src index failed (see $log)"
# shellcheck disable=SC2086 # one word per package=version
(cd "$work" && apt-get "${apt_opts[@]}" source $want) >> "$log" 2>&1 ||
	die "apt-get source$want failed (see $log)"

# -fPIC: libbpf's Makefile also links a shared libbpf.so against these.
cc="${CROSS}gcc"
(
	cd "$work"/zlib-*/
	CC=$cc CFLAGS="-O2 -fPIC" ./configure --static --prefix="$root"
	make -j"$(nproc)" libz.a
	make install
) >> "$log" 2>&1 || die "zlib does not build for $ARCH_NAME (see $log)"
(
	cd "$work"/elfutils-*/
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
