#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: bisect-verify.sh [-h|--help] [--tsv FILE]

Check the committed per-patch matrix (results/bisect.tsv, written by scripts/bisect.sh) against
the current series: one row per patch x arch (every arch of 'all'), the same patch file and
git patch-id at every position, and verdict 0 in every cell. Any difference is listed; rerun
'make bisect ARCH=all' to regenerate the matrix.

Options:
  --tsv FILE   matrix to check (default: results/bisect.tsv)
  -h, --help   show this help"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tsv=$KS_ROOT/results/bisect.tsv
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--tsv) tsv=$2; shift ;;
	*) echo "$usage" >&2; exit 64 ;;
	esac
	shift
done
[ -f "$tsv" ] || die "no matrix $tsv: run 'make bisect ARCH=all'"

want=$(mktemp)
have=$(mktemp)
trap 'rm -f "$want" "$have"' EXIT
k=0
for n in $(series_names "$KS_ROOT/series"); do
	k=$((k + 1))
	pid=$(git patch-id --stable < "$KS_ROOT/patches/$n" | cut -d' ' -f1)
	for a in $(expand_arches all); do
		printf '%d\t%s\t%s\t%s\t0\n' "$k" "$n" "$pid" "$a"
	done
done | sort > "$want"
awk -F'\t' '!/^#/ { printf "%s\t%s\t%s\t%s\t%s\n", $1, $2, $4, $5, $8 }' "$tsv" | sort > "$have"
if ! diff -u "$want" "$have" > /dev/null; then
	echo "bisect-verify: $tsv does not match the series (- wanted, + in the matrix):" >&2
	diff -u "$want" "$have" | sed -n '/^[-+][^-+]/p' | sed 's/^/  /' >&2
	die "stale or failing matrix; run 'make bisect ARCH=all'"
fi
note "matrix covers $(grep -c . "$want") cell(s) ($(expand_arches all | wc -l) arches), every cell passed"
