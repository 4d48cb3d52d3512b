#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: maintainers-check.sh [-h|--help]

Check MAINTAINERS.snippet against the series with the kernel's own tooling, in a git worktree
of the base tree at \$KSERIES_CACHE/maint-tree (branch 'maint' = base + git am of patches/):
 1. every section of the snippet is in the patched tree's MAINTAINERS, line for line;
 2. scripts/get_maintainer.pl --self-test=sections reports nothing on those lines (sorted
    F: entries, patterns that match files, known section layout);
 3. every file the series adds is covered: get_maintainer.pl -f FILE names a maintainer
    (M:) of one of the snippet's sections; a test added to a directory the base has (a
    selftest under tools/testing/selftests/, or a KUnit file NAME_test.c) may instead be
    its existing maintainers' (a test_verifier file is BPF's, kernel/trace/*_test.c
    ftrace's).

Options:
  -h, --help  show this help
Exit codes: 0 all good, 1 a check failed (each failure printed), 5 a tool failed."
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "${1:-}" in
-h|--help) echo "$usage"; exit 0 ;;
"") ;;
*) echo "$usage" >&2; exit 64 ;;
esac
[ -d "$KS_SRC/.git" ] || die "no base tree at $KS_SRC (run scripts/fetch-base.sh)"
snippet=$KS_ROOT/MAINTAINERS.snippet
[ -s "$snippet" ] || die "$snippet is missing or empty"

wt=$KS_CACHE/maint-tree
export GIT_AUTHOR_NAME=kseries GIT_AUTHOR_EMAIL=kseries@localhost \
	GIT_COMMITTER_NAME=kseries GIT_COMMITTER_EMAIL=kseries@localhost
am_series "$wt" maint
cd "$wt"

fail=0
bad() { echo "maintainers-check.sh: $*" >&2; fail=1; }

# 1. Sections (blank-line separated) of the snippet, found verbatim in MAINTAINERS; keep
# their line ranges for the self-test.
ranges=()
while IFS= read -r -d '' section; do
	first=${section%%$'\n'*}
	start=$(grep -nxF -- "$first" MAINTAINERS | cut -d: -f1 | head -1)
	if [ -z "$start" ]; then
		bad "section '$first' is not in the patched MAINTAINERS"
		continue
	fi
	n=$(printf '%s\n' "$section" | wc -l)
	if [ "$(sed -n "${start},$((start + n - 1))p" MAINTAINERS)" != "$section" ]; then
		bad "section '$first' differs from the patched MAINTAINERS (line $start)"
	fi
	ranges+=("$start $((start + n - 1))")
done < <(awk 'BEGIN { RS = ""; ORS = "\0" } { print }' "$snippet")

# 2. The kernel's own self-test, limited to the snippet's lines.
perl scripts/get_maintainer.pl --self-test=sections > "$KS_CACHE/maint-selftest.log" 2>&1 || true
for r in "${ranges[@]}"; do
	read -r s e <<< "$r"
	awk -F: -v s="$s" -v e="$e" '$1 ~ /MAINTAINERS$/ && $2 >= s && $2 <= e' \
		"$KS_CACHE/maint-selftest.log" | while IFS= read -r line; do
		echo "get_maintainer.pl --self-test=sections: $line"
	done | grep . >&2 && fail=1
done

# 3. Files the series adds, each covered by a maintainer of the snippet, or a test (a
# selftest, or a KUnit file NAME_test.c) of an existing directory by that subsystem's
# existing maintainers (only M: entries count, not lists).
mapfile -t ms < <(sed -n 's/^M:[[:space:]]*//p' "$snippet")
while IFS= read -r f; do
	who=$(perl scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats --nol \
		--nor -f "$f" 2>/dev/null)
	hit=
	for m in "${ms[@]}"; do
		grep -qF -- "$m" <<< "$who" && hit=1
	done
	# A new test belongs to its subsystem's maintainers; the series adds only the
	# snippet to MAINTAINERS, so any other M: is the base's.
	case $f in tools/testing/selftests/*|*_test.c)
		[ -n "$hit" ] || [ -z "$who" ] || [ -z "$(git ls-tree base -- "${f%/*}")" ] || hit=base ;;
	esac
	[ -n "$hit" ] || bad "$f (added by the series) has no maintainer from MAINTAINERS.snippet"
done < <(git diff --name-only --diff-filter=A base HEAD)

[ "$fail" = 0 ] || exit 1
note "MAINTAINERS.snippet: ${#ranges[@]} section(s) in the patched MAINTAINERS, self-test clean, added files covered"
