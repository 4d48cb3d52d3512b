#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: fetch-sources.sh [-h|--help] [--list FILE] PACKAGE...

Download the files of the pinned Debian source packages PACKAGE... (sources.conf: version,
files and their sha256) from the mirror's pool into \$KSERIES_CACHE/sources/PACKAGE_VERSION/,
verify every file's sha256 (cached ones too, on every run) and print the path of each
package's .dsc, one per line, for dpkg-source -x. Nothing depends on the versions installed
on this machine. A package sources.conf does not pin, a file the mirror does not serve or a
sha256 that differs is an error naming the package, its version and the file; a file that
fails its check is removed.

Options:
  --list FILE  read the pins from FILE instead of sources.conf
  -h, --help   show this help

Environment: DEBIAN_MIRROR (default: http://deb.debian.org/debian), KSERIES_CACHE."
set -euo pipefail
. "$(dirname "$0")/lib.sh"

list=$KS_ROOT/sources.conf
while [ $# -gt 0 ]; do
	case $1 in
	-h|--help) echo "$usage"; exit 0 ;;
	--list) [ $# -ge 2 ] || { echo "$usage" >&2; exit 64; }; list=$2; shift 2 ;;
	-*) echo "$usage" >&2; exit 64 ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || { echo "$usage" >&2; exit 64; }
[ -f "$list" ] || die "$list: no such file"
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
pins=$(grep -v -e '^#' -e '^[[:space:]]*$' "$list") || true

for pkg in "$@"; do
	files=$(awk -v p="$pkg" '$1 == p' <<< "$pins")
	[ -n "$files" ] ||
		die "$pkg: no such source package in $list; pinned: $(awk '{print $1}' <<< "$pins" | sort -u | tr '\n' ' ')"
	version=$(awk '{print $2}' <<< "$files" | sort -u)
	[ "$(wc -l <<< "$version")" -eq 1 ] || die "$pkg: more than one version in $list"
	# Debian's pool directory: lib* packages by their first four letters, others by one.
	case $pkg in
	lib?*) pool=$mirror/pool/main/${pkg:0:4}/$pkg ;;
	*) pool=$mirror/pool/main/${pkg:0:1}/$pkg ;;
	esac
	dir=$KS_CACHE/sources/${pkg}_${version#*:}
	mkdir -p "$dir"
	dsc=
	while read -r _ _ file sum; do
		if [ ! -f "$dir/$file" ]; then
			note "downloading $pkg $version: $file"
			curl -fsSL --retry 3 -o "$dir/$file.part" "$pool/$file" ||
				{ rm -f "$dir/$file.part"; die "$pkg $version: $pool/$file could not be downloaded"; }
			mv "$dir/$file.part" "$dir/$file"
		fi
		have=$(sha256sum "$dir/$file" | cut -d' ' -f1)
		if [ "$have" != "$sum" ]; then
			rm -f "$dir/$file"
			die "$pkg $version: sha256 of $file is $have, $list pins $sum (file removed)"
		fi
		case $file in *.dsc) dsc=$dir/$file ;; esac
	done <<< "$files"
	[ -n "$dsc" ] || die "$pkg $version: $list pins no .dsc file"
	echo "$dsc"
done
