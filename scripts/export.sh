#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: export.sh [-h|--help] [--out DIR] [BRANCH]

Turn the commits base..BRANCH of the base tree (default BRANCH: series) into patches/ and the
series file with 'git format-patch --base=base', replacing what is there. Write patches as
commits on a branch of \$KSERIES_CACHE/linux-VERSION, then export them with this script.

Options:
  --out DIR    write DIR/*.patch and DIR/series instead of patches/ and series
  -h, --help   show this help"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

pdir=$KS_ROOT/patches
series=$KS_ROOT/series
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--out) mkdir -p "$2"; pdir=$(realpath "$2"); series=$pdir/series; shift ;;
	-*) echo "$usage" >&2; exit 64 ;;
	*) break ;;
	esac
	shift
done
branch=${1:-series}
[ -d "$KS_SRC/.git" ] || die "no base tree at $KS_SRC (run scripts/fetch-base.sh)"
command git -C "$KS_SRC" rev-parse -q --verify "$branch^{commit}" >/dev/null ||
	die "no branch '$branch' in $KS_SRC"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command git -C "$KS_SRC" format-patch -q --base=base --no-signature -o "$tmp" "base..$branch"
rm -f "$pdir"/*.patch
: > "$series"
for p in "$tmp"/*.patch; do
	[ -e "$p" ] || break
	cp "$p" "$pdir/"
	echo "${p##*/}" >> "$series"
done
# The branch is now what scripts/apply.sh would make of the exported series: record it as
# applied, so that the next make builds it instead of refusing to replace it.
if [ "$pdir" = "$KS_ROOT/patches" ]; then
	mapfile -t names < <(series_names "$series")
	echo "$(applied_key "$pdir" "${names[@]}") $(command git -C "$KS_SRC" rev-parse "$branch")" \
		> "$KS_CACHE/applied.$branch"
fi
note "exported $(wc -l < "$series") patch(es) from base..$branch to $pdir"
