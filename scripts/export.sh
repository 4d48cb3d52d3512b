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
# When git am of the exported series gives the branch's tree (it does not when the branch
# has merges or empty commits), the branch is what scripts/apply.sh would make of it: record
# it as applied, so that the next make builds it instead of refusing to replace it.
if [ "$series" = "$KS_ROOT/series" ]; then
	ks_lock
	mapfile -t names < <(series_names "$series")
	# apply.sh's worktree, on the scratch branch export-check (apply.sh detaches it first).
	wt=$KS_CACHE/apply-tree
	if (export GIT_AUTHOR_NAME=kseries GIT_AUTHOR_EMAIL=kseries@invalid \
		GIT_COMMITTER_NAME=kseries GIT_COMMITTER_EMAIL=kseries@invalid
	    am_series "$wt" export-check) >/dev/null 2>&1 &&
	   [ "$(command git -C "$wt" rev-parse 'HEAD^{tree}')" = \
	     "$(command git -C "$KS_SRC" rev-parse "$branch^{tree}")" ]; then
		echo "$(applied_key "$pdir" "${names[@]}") $(command git -C "$KS_SRC" rev-parse "$branch")" \
			> "$KS_CACHE/applied.$branch"
	else
		note "the exported patches do not rebuild the tree of $branch; make will not take $branch as applied"
	fi
fi
note "exported $(wc -l < "$series") patch(es) from base..$branch to $pdir"
