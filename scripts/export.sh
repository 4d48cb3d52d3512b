#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: export.sh [-h|--help] [BRANCH]

Turn the commits base..BRANCH of the base tree (default BRANCH: series) into patches/ and the
series file with 'git format-patch --base=base', replacing what is there. Write patches as
commits on a branch of \$KSERIES_CACHE/linux-VERSION, then export them with this script.

Options:
  -h, --help   show this help"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "${1:-}" in
-h|--help) echo "$usage"; exit 0 ;;
-*) echo "$usage" >&2; exit 64 ;;
esac
branch=${1:-series}
[ -d "$KS_SRC/.git" ] || die "no base tree at $KS_SRC (run scripts/fetch-base.sh)"
command git -C "$KS_SRC" rev-parse -q --verify "$branch^{commit}" >/dev/null ||
	die "no branch '$branch' in $KS_SRC"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command git -C "$KS_SRC" format-patch -q --base=base --no-signature -o "$tmp" "base..$branch"
rm -f "$KS_ROOT"/patches/*.patch
: > "$KS_ROOT/series"
for p in "$tmp"/*.patch; do
	[ -e "$p" ] || break
	cp "$p" "$KS_ROOT/patches/"
	echo "${p##*/}" >> "$KS_ROOT/series"
done
note "exported $(wc -l < "$KS_ROOT/series") patch(es) from base..$branch"
