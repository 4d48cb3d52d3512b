#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: apply.sh [-h|--help] [--series FILE] [--patches DIR] [--upto N] [--branch NAME]

Apply the quilt series file (patch names in order) onto a fresh branch of the base tree with
'git am', and report the first patch that fails: its number, name and git am's reason. The
base tree must exist (scripts/fetch-base.sh). A run with the same patches as the last one
leaves the branch as it is, so builds stay incremental.

Options:
  --series FILE   series file (default: series in the repo)
  --patches DIR   directory of the patch files (default: patches/ in the repo)
  --upto N        apply only the first N patches (default: all)
  --branch NAME   branch to (re)create from 'base' (default: series)
  -h, --help      show this help"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

series=$KS_ROOT/series
pdir=$KS_ROOT/patches
upto=
branch=series
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--series) series=$2; shift ;;
	--patches) pdir=$2; shift ;;
	--upto) upto=$2; shift ;;
	--branch) branch=$2; shift ;;
	*) echo "$usage" >&2; exit 64 ;;
	esac
	shift
done
[ -d "$KS_SRC/.git" ] || die "no base tree at $KS_SRC (run scripts/fetch-base.sh)"
[ -f "$series" ] || die "no series file $series"

mapfile -t names < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$series" | awk 'NF { print $1 }')
[ -z "$upto" ] || names=("${names[@]:0:$upto}")
for n in "${names[@]}"; do
	[ -f "$pdir/$n" ] || die "series names $n, which is not in $pdir"
done

git() { command git -C "$KS_SRC" "$@"; }
stamp=$KS_CACHE/applied.$branch
want=$( { echo "$(git rev-parse base)"; for n in "${names[@]}"; do sha256sum < "$pdir/$n"; done; } |
	sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cut -d' ' -f1 "$stamp")" = "$want" ] &&
   [ "$(git rev-parse -q --verify "refs/heads/$branch" || true)" = "$(cut -d' ' -f2 "$stamp")" ] &&
   [ "$(git symbolic-ref -q HEAD || true)" = "refs/heads/$branch" ] &&
   [ -z "$(git status --porcelain --untracked-files=no)" ]; then
	note "${#names[@]} patch(es) already applied on branch $branch"
	exit 0
fi

rm -f "$stamp"
git am --abort >/dev/null 2>&1 || true
git checkout -q -f -B "$branch" base
git clean -q -f -d
i=0
for n in "${names[@]}"; do
	i=$((i + 1))
	if ! out=$(git -c user.name=kseries -c user.email=kseries@invalid am --quiet \
			--keep-cr "$pdir/$n" 2>&1); then
		git am --abort >/dev/null 2>&1 || true
		echo "$out" | sed 's/^/  /' >&2
		die "patch $i/${#names[@]} '$n' does not apply (git am output above)"
	fi
done
echo "$want $(git rev-parse HEAD)" > "$stamp"
note "applied ${#names[@]} patch(es) on branch $branch ($(git rev-parse --short HEAD))"
