#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: fetch-distro-config.sh [-h|--help] DEBARCH

Download Debian's kernel configuration pinned in distro.conf for the Debian architecture
DEBARCH (amd64, arm64) with apt, verify the sha256 of the .deb and of the configuration
file in it, and print the path of the uncompressed configuration
(\$KSERIES_CACHE/distro/DEBARCH.config). A second run only verifies.

Options:
  -h, --help   show this help"
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$KS_ROOT/distro.conf"

case "${1:-}" in
-h|--help) echo "$usage"; exit 0 ;;
""|-*) echo "$usage" >&2; exit 64 ;;
esac
debarch=$1
deb_sum_var=DISTRO_DEB_SHA256_$debarch
file_var=DISTRO_FILE_$debarch
file_sum_var=DISTRO_FILE_SHA256_$debarch
[ -n "${!deb_sum_var:-}" ] ||
	die "no configuration pinned for Debian architecture '$debarch' in distro.conf; pinned: $(
		sed -n 's/^DISTRO_DEB_SHA256_\([a-z0-9]*\)=.*/\1/p' "$KS_ROOT/distro.conf" | tr '\n' ' ')"
want="$DISTRO_PKG:$debarch=$DISTRO_DEB_VERSION"

mkdir -p "$KS_DL" "$KS_CACHE/distro"
deb=$KS_DL/${DISTRO_PKG}_${DISTRO_DEB_VERSION}_$debarch.deb
if [ ! -f "$deb" ]; then
	note "downloading $want with apt-get"
	apt_download "$want" "$deb" ||
		die "apt-get download $want failed: the pinned version is not in the apt sources
(bookworm-security must be configured; for arm64 the multiarch setup of scripts/deps.sh)"
fi
sum=$(sha256sum "$deb" | cut -d' ' -f1)
[ "$sum" = "${!deb_sum_var}" ] ||
	die "sha256 of $deb is $sum, distro.conf pins ${!deb_sum_var} for $want: delete it and run again"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" "./${!file_var}" 2>/dev/null ||
	die "$want has no ${!file_var}"
sum=$(sha256sum "$work/${!file_var}" | cut -d' ' -f1)
[ "$sum" = "${!file_sum_var}" ] ||
	die "sha256 of ${!file_var} in $want is $sum, distro.conf pins ${!file_sum_var}"
out=$KS_CACHE/distro/$debarch.config
xz -dc "$work/${!file_var}" > "$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
