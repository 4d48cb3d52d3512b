#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: fetch-base.sh [-h|--help]

Download the pinned Debian base (base.conf: BASE_PKG=BASE_DEB_VERSION) with apt, verify the
sha256 of the .deb and of the tarball inside it, unpack it into the cache and make a git tree
with one base commit (tag 'base', branch debian-VERSION). A second run is a no-op when the tree exists and
its base commit matches base.conf.

Options:
  -h, --help   show this help

Environment: KSERIES_CACHE (cache directory, see scripts/lib.sh)."
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "${1:-}" in
-h|--help) echo "$usage"; exit 0 ;;
"") ;;
*) echo "$usage" >&2; exit 64 ;;
esac

want="$BASE_PKG=$BASE_DEB_VERSION"

# Fast path: the tree is there and its base commit (tag base) is the pinned one.
if [ -d "$KS_SRC/.git" ]; then
	have=$(git -C "$KS_SRC" rev-parse -q --verify 'refs/tags/base^{commit}' || true)
	if [ -n "$BASE_COMMIT" ] && [ "$have" = "$BASE_COMMIT" ]; then
		note "base $want present at $KS_SRC (commit ${have:0:12})"
		exit 0
	fi
	die "$KS_SRC exists but its base commit (tag base) is '${have:-none}', not '$BASE_COMMIT' from base.conf ($want);
remove $KS_SRC and run again"
fi

mkdir -p "$KS_DL"
deb=$KS_DL/${BASE_PKG}_${BASE_DEB_VERSION}_all.deb
if [ ! -f "$deb" ]; then
	note "downloading $want with apt-get"
	apt_download "$want" "$deb" ||
		die "apt-get download $want failed: the pinned version is not in the apt sources.
Check 'apt-cache policy $BASE_PKG' (run 'apt-get update' first, as root); bookworm-security
must be configured. Do not change base.conf to another version without redoing the series."
fi

sum=$(sha256sum "$deb" | cut -d' ' -f1)
if [ "$sum" != "$BASE_DEB_SHA256" ]; then
	die "sha256 of $deb is $sum, base.conf pins $BASE_DEB_SHA256 for $want.
The download is corrupt or Debian rebuilt the package: delete $deb and run again; if it
persists, the pinned base has changed and base.conf must be reviewed."
fi

work=$(mktemp -d "$KS_CACHE/unpack.XXXXXX")
trap 'rm -rf "$work"' EXIT
note "unpacking $deb"
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" "./$BASE_TARBALL"
sum=$(sha256sum "$work/$BASE_TARBALL" | cut -d' ' -f1)
[ "$sum" = "$BASE_TARBALL_SHA256" ] ||
	die "sha256 of $BASE_TARBALL in $want is $sum, base.conf pins $BASE_TARBALL_SHA256"
tar -x -C "$work" -f "$work/$BASE_TARBALL"
rm -f "$work/$BASE_TARBALL"

mf=$work/$BASE_TOPDIR/Makefile
ver=$(awk '/^VERSION =/{v=$3} /^PATCHLEVEL =/{p=$3} /^SUBLEVEL =/{s=$3} END{print v"."p"."s}' "$mf")
[ "$ver" = "$BASE_UPSTREAM" ] || die "tarball of $want is Linux $ver, base.conf says $BASE_UPSTREAM"

note "making the base commit (takes about a minute)"
src=$work/$BASE_TOPDIR
git -C "$src" init -q -b "debian-$BASE_DEB_VERSION"
git -C "$src" config core.autocrlf false
# -f: the tarball may hold files the kernel's own .gitignore patterns match; keep them all.
git -C "$src" add -A -f .
GIT_AUTHOR_NAME=$KS_BASE_IDENT_NAME GIT_AUTHOR_EMAIL=$KS_BASE_IDENT_EMAIL \
GIT_COMMITTER_NAME=$KS_BASE_IDENT_NAME GIT_COMMITTER_EMAIL=$KS_BASE_IDENT_EMAIL \
GIT_AUTHOR_DATE=$KS_BASE_DATE GIT_COMMITTER_DATE=$KS_BASE_DATE \
	git -C "$src" commit -q --no-verify --no-gpg-sign \
		-m "Linux $BASE_UPSTREAM from Debian $want" \
		-m "Unpacked from $BASE_TARBALL (sha256 $BASE_TARBALL_SHA256)."
git -C "$src" tag base
have=$(git -C "$src" rev-parse HEAD)
if [ -n "$BASE_COMMIT" ] && [ "$have" != "$BASE_COMMIT" ]; then
	die "base commit from $want is $have, base.conf expects $BASE_COMMIT; the tree differs"
fi
mv "$src" "$KS_SRC"
note "base $want ready at $KS_SRC (commit $have)"
