#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: lint-series.sh [-h|--help] [--series FILE] [--patches DIR]

Mail gates for every patch of the series: the base tree's scripts/checkpatch.pl --strict with
no error, warning or check (except those in review/checkpatch-exceptions, each with its
reason); a Signed-off-by: from the patch's author; a subject 'PREFIX: summary' with a PREFIX
from review/subject-prefixes; no kernel-doc warning (scripts/kernel-doc -none) in the
C files the patch touches that the same files did not have before it (the patches are
applied one by one to a scratch index of the base tree; the checkout is not touched).
Every finding is listed with its patch; exit 1 if any.

Options:
  --series FILE   series file (default: series)
  --patches DIR   patch directory (default: patches/)
  -h, --help      show this help"
set -uo pipefail
. "$(dirname "$0")/lib.sh"

series=$KS_ROOT/series
pdir=$KS_ROOT/patches
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--series) series=$2; shift ;;
	--patches) pdir=$2; shift ;;
	*) echo "$usage" >&2; exit 64 ;;
	esac
	shift
done
[ -f "$series" ] || die "no series file $series"
pdir=$(realpath "$pdir")
[ -f "$KS_SRC/scripts/checkpatch.pl" ] || die "no base tree at $KS_SRC (run scripts/fetch-base.sh)"

bad=0
finding() {
	echo "$1: $2"
	bad=$((bad + 1))
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GIT_INDEX_FILE=$tmp/index
command git -C "$KS_SRC" read-tree base
prev=$(command git -C "$KS_SRC" write-tree)

# kdoc_warnings TREE FILE: kernel-doc -none warnings of FILE in TREE, without line numbers.
kdoc_warnings() {
	local d=$tmp/kdoc/$1
	mkdir -p "$d/${2%/*}"
	command git -C "$KS_SRC" show "$1:$2" > "$d/$2" 2>/dev/null || return 0
	perl "$KS_SRC/scripts/kernel-doc" -none "$d/$2" 2>&1 | grep "warning:" |
		sed -e "s|^$d/||" -e 's/:[0-9]*:/:/' | sort
}
k=0
for n in $(series_names "$series"); do
	k=$((k + 1))
	p=$pdir/$n
	[ -f "$p" ] || { finding "$n" "named in the series but missing"; continue; }

	ignore=$(awk -F'\t' -v n="$n" '!/^#/ && $1 == n { printf "%s%s", sep, $2; sep = "," }' \
		"$KS_ROOT/review/checkpatch-exceptions")
	if ! out=$(cd "$KS_SRC" && perl scripts/checkpatch.pl --strict --terse --show-types \
			${ignore:+--ignore "$ignore"} "$p" 2>&1); then
		found=$(echo "$out" | grep -E '(ERROR|WARNING|CHECK):' | sed "s|^$p:||")
		[ -n "$found" ] || found="checkpatch.pl failed: $out"
		while read -r line; do
			finding "$n" "checkpatch: $line"
		done <<< "$found"
	fi

	# git mailinfo unfolds and decodes the mail headers (long From: lines are folded).
	info=$(git mailinfo /dev/null /dev/null < "$p")
	author="$(sed -n 's/^Author: //p' <<< "$info") <$(sed -n 's/^Email: //p' <<< "$info")>"
	grep -qixF "Signed-off-by: $author" "$p" ||
		finding "$n" "no 'Signed-off-by: $author' (the From: author)"

	subject=$(sed -n 's/^Subject: //p' <<< "$info")
	prefix=${subject%%: *}
	if [ "$prefix" = "$subject" ] ||
	   ! grep -v '^#' "$KS_ROOT/review/subject-prefixes" | grep -qxF -- "$prefix"; then
		finding "$n" "subject '$subject' does not start with a prefix of review/subject-prefixes"
	fi

	# kernel-doc: warnings this patch adds to the C files it touches.
	if ! command git -C "$KS_SRC" apply --cached "$p" 2>/dev/null; then
		finding "$n" "does not apply on the patches before it (kernel-doc not checked)"
		continue
	fi
	cur=$(command git -C "$KS_SRC" write-tree)
	for f in $(command git -C "$KS_SRC" diff --name-only "$prev" "$cur" -- '*.c' '*.h'); do
		while read -r w; do
			[ -n "$w" ] && finding "$n" "kernel-doc: $w"
		done < <(comm -13 <(kdoc_warnings "$prev" "$f") <(kdoc_warnings "$cur" "$f"))
	done
	prev=$cur
done
if [ "$bad" -ne 0 ]; then
	die "$bad finding(s) in $k patch(es)"
fi
note "$k patch(es): checkpatch --strict clean, signed off, subject prefixes known, no new kernel-doc warnings"
