#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: quilt-check.sh [-h|--help] [--series FILE] [--patches DIR]

Prove that 'quilt push -a' applies the series to the base and gives the same tree as
'git am' (scripts/apply.sh onto the scratch branch quilt-check): check out 'base' in a temporary
worktree, push all patches with quilt, and compare the result with that branch.

Options:
  --series FILE   series file (default: series)
  --patches DIR   patch directory (default: patches/)
  -h, --help      show this help"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

series=$KS_ROOT/series
pdir=$KS_ROOT/patches
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--series) series=$(realpath "$2"); shift ;;
	--patches) pdir=$(realpath "$2"); shift ;;
	*) echo "$usage" >&2; exit 64 ;;
	esac
	shift
done
command -v quilt >/dev/null || die "quilt missing (run scripts/deps.sh)"
ks_lock
if [ -z "$(series_names "$series")" ]; then
	note "series is empty: nothing for quilt to push"
	exit 0
fi
"$KS_ROOT/scripts/apply.sh" --series "$series" --patches "$pdir" --branch quilt-check --force \
	>/dev/null

wt=$(mktemp -d "$KS_CACHE/quilt.XXXXXX")
cleanup() {
	command git -C "$KS_SRC" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"
	command git -C "$KS_SRC" worktree prune
}
trap cleanup EXIT
command git -C "$KS_SRC" worktree add -q --detach "$wt" base
(cd "$wt" && QUILT_PATCHES="$pdir" QUILT_SERIES="$series" \
	quilt push -a -q) || die "quilt push -a failed (see above)"
rm -rf "$wt/.pc"
command git -C "$wt" add -A -f .
if ! command git -C "$wt" diff --cached --quiet quilt-check; then
	command git -C "$wt" diff --cached --stat quilt-check >&2
	die "quilt push -a gives a different tree from git am (files above)"
fi
note "quilt push -a applies $(series_names "$series" | wc -l) patch(es), same tree as git am"
