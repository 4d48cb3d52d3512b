#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: apply.sh [-h|--help] [--series FILE] [--patches DIR] [--upto N] [--branch NAME]
                [--force]

Apply the quilt series file (patch names in order) onto a fresh branch of the base tree with
'git am', and report the first patch that fails: its number, name and git am's reason. The
base tree must exist (scripts/fetch-base.sh). A run with the same patches as the last one
leaves the branch as it is, so builds stay incremental; otherwise git am runs in a worktree
(\$KSERIES_CACHE/apply-tree) and the base tree checks out the result, which rewrites only
the files whose content changes (the others keep their mtimes: make rebuilds only what the
patches change against the tree checked out before). Refuses to run when the tree has
uncommitted changes or untracked files, or when the branch holds commits this script did not
make (a developer's work: export it with scripts/export.sh first, or use --force).

Options:
  --series FILE   series file (default: series in the repo)
  --patches DIR   directory of the patch files (default: patches/ in the repo)
  --upto N        apply only the first N patches (default: all)
  --branch NAME   branch to (re)create from 'base' (default: series)
  --force         recreate the branch even if it holds commits of its own
  -h, --help      show this help"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

series=$KS_ROOT/series
pdir=$KS_ROOT/patches
upto=
branch=series
force=
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--series) series=$2; shift ;;
	--patches) pdir=$2; shift ;;
	--upto) upto=$2; shift ;;
	--branch) branch=$2; shift ;;
	--force) force=1 ;;
	*) echo "$usage" >&2; exit 64 ;;
	esac
	shift
done
[ -d "$KS_SRC/.git" ] || die "no base tree at $KS_SRC (run scripts/fetch-base.sh)"
[ -f "$series" ] || die "no series file $series"
ks_lock

mapfile -t names < <(series_names "$series")
[ -z "$upto" ] || names=("${names[@]:0:$upto}")
for n in "${names[@]}"; do
	[ -f "$pdir/$n" ] || die "series names $n, which is not in $pdir"
done

git() { command git -C "$KS_SRC" "$@"; }
stamp=$KS_CACHE/applied.$branch
want=$(applied_key "$pdir" "${names[@]}")
# Also when the branch is applied already: a build would take untracked files, and the run
# is keyed and booted as the branch's tree.
guard_tree
if [ -f "$stamp" ] && [ "$(cut -d' ' -f1 "$stamp")" = "$want" ] &&
   [ "$(git rev-parse -q --verify "refs/heads/$branch" || true)" = "$(cut -d' ' -f2 "$stamp")" ] &&
   [ "$(git symbolic-ref -q HEAD || true)" = "refs/heads/$branch" ]; then
	note "${#names[@]} patch(es) already applied on branch $branch"
	exit 0
fi

tip=$(git rev-parse -q --verify "refs/heads/$branch" || true)
made=$( [ -f "$stamp" ] && cut -d' ' -f2 "$stamp" || true)
if [ -n "$tip" ] && [ "$tip" != "$(git rev-parse base)" ] && [ "$tip" != "$made" ] &&
   [ -z "$force" ]; then
	die "branch $branch in $KS_SRC holds commits apply.sh did not make (tip ${tip:0:12});
export them with 'scripts/export.sh $branch' (or rename the branch), or rerun with --force"
fi
rm -f "$stamp"
git am --abort >/dev/null 2>&1 || true
# git am runs in a worktree of its own, and the base tree then checks out the result: git
# rewrites only the files that differ from what the base tree has checked out, so their
# mtimes, and with them the incremental build, survive a re-apply of the same patches.
wt=$KS_CACHE/apply-tree
base_worktree "$wt"
wgit() { command git -C "$wt" "$@"; }
wgit am --abort >/dev/null 2>&1 || true
wgit checkout -q -f --detach base
i=0
for n in "${names[@]}"; do
	i=$((i + 1))
	if ! out=$(wgit -c user.name=kseries -c user.email=kseries@invalid am --quiet \
			--keep-cr "$pdir/$n" 2>&1); then
		wgit am --abort >/dev/null 2>&1 || true
		git checkout -q -B "$branch" "$(wgit rev-parse HEAD)"
		echo "partial $(git rev-parse HEAD)" > "$stamp"
		echo "$out" | sed 's/^/  /' >&2
		die "patch $i/${#names[@]} '$n' does not apply (git am output above)"
	fi
done
git checkout -q -B "$branch" "$(wgit rev-parse HEAD)"
echo "$want $(git rev-parse HEAD)" > "$stamp"
note "applied ${#names[@]} patch(es) on branch $branch ($(git rev-parse --short HEAD))"
