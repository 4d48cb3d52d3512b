#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: quilt-check.sh [-h|--help]

Prove that 'quilt push -a' applies the series to the base and gives the same tree as
'git am' (scripts/apply.sh, branch series): check out 'base' in a temporary worktree, push
all patches with quilt, and compare the result with the series branch.

Options:
  -h, --help   show this help"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "${1:-}" in
-h|--help) echo "$usage"; exit 0 ;;
"") ;;
*) echo "$usage" >&2; exit 64 ;;
esac
command -v quilt >/dev/null || die "quilt missing (run scripts/deps.sh)"
if ! grep -q '[^[:space:]]' "$KS_ROOT/series"; then
	note "series is empty: nothing for quilt to push"
	exit 0
fi
"$KS_ROOT/scripts/apply.sh" >/dev/null

wt=$(mktemp -d "$KS_CACHE/quilt.XXXXXX")
cleanup() {
	command git -C "$KS_SRC" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"
	command git -C "$KS_SRC" worktree prune
}
trap cleanup EXIT
command git -C "$KS_SRC" worktree add -q --detach "$wt" base
(cd "$wt" && QUILT_PATCHES="$KS_ROOT/patches" QUILT_SERIES="$KS_ROOT/series" \
	quilt push -a -q) || die "quilt push -a failed (see above)"
rm -rf "$wt/.pc"
command git -C "$wt" add -A -f .
if ! command git -C "$wt" diff --cached --quiet series; then
	command git -C "$wt" diff --cached --stat series >&2
	die "quilt push -a gives a different tree from git am (files above)"
fi
note "quilt push -a applies $(grep -c . "$KS_ROOT/series") patch(es), same tree as git am"
