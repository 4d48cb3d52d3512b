#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: bisect-verify.sh [-h|--help] [--tsv FILE] [--series FILE] [--patches DIR]
                        [--require-current]

Report how much of the committed per-patch matrix (results/bisect.tsv, written by
scripts/bisect.sh) is current for the series. The cell of patch k on an arch is current when
the matrix has its row and, on that arch, the rows of patches 1..k carry the file name and git
patch-id that patches 1..k have now: a change in patch k makes the cells k..N stale and no
earlier one. Prints one line: how many cells are current out of how many, which are stale
(patch numbers and arches) and the command that refreshes them.

Stale cells are evidence to refresh before posting, not a failure of the commit: without
--require-current the exit is 0 for any mix of current and stale cells. It is 1 when the file
is malformed (not bisect.sh's header, a row with another number of fields, a patch number,
arch, build, boot or verdict bisect.sh does not write) or when a current cell records a
failure (verdict not 0): that is what the series fails now.

Options:
  --tsv FILE          matrix to check (default: results/bisect.tsv)
  --series FILE       series file (default: series)
  --patches DIR       patch directory (default: patches/)
  --require-current   also exit 1 unless every cell is current and passed (scripts/send.sh,
                      the gate before posting)
  -h, --help          show this help
Exit: 0 as above, 1 a malformed matrix, a current failure or (--require-current) a stale
cell, 64 a usage error."
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tsv=$KS_ROOT/results/bisect.tsv
series=$KS_ROOT/series
pdir=$KS_ROOT/patches
require=
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--tsv) tsv=$2; shift ;;
	--series) series=$2; shift ;;
	--patches) pdir=$2; shift ;;
	--require-current) require=1 ;;
	*) echo "$usage" >&2; exit 64 ;;
	esac
	shift
done
[ -f "$tsv" ] || die "no matrix $tsv: run 'make bisect ARCH=all'"
[ -f "$series" ] || die "no series file $series"

header=$(printf '#patch\tfile\tsubject\tpatch_id\tarch\tbuild\tboot\tverdict\tpassed\tfailed\tskipped\txfail\tsplats\tseconds\tsame_image_as')
[ "$(head -1 "$tsv")" = "$header" ] || die "$tsv does not start with bisect.sh's header line"
arches=$(expand_arches all | tr '\n' ' ')

# The series now: "K<TAB>FILE<TAB>PATCH-ID", one line per patch.
want=$(mktemp)
trap 'rm -f "$want"' EXIT
k=0
for n in $(series_names "$series"); do
	k=$((k + 1))
	[ -f "$pdir/$n" ] || die "series names $n, which is not in $pdir"
	printf '%d\t%s\t%s\n' "$k" "$n" "$(git patch-id --stable < "$pdir/$n" | cut -d' ' -f1)"
done > "$want"

# One awk pass: check every row's form, then walk each arch in patch order; a cell is current
# while every row up to it matches the series. Prints "bad", "fail" and "stale" lines, then
# "count CURRENT TOTAL".
verdicts=$(awk -F'\t' -v arches="$arches" -v tsv="$tsv" '
	FNR == NR { file[$1] = $2; pid[$1] = $3; n = $1; next }
	FNR == 1 { next }
	{
		why = ""
		if (/\r/) why = "carriage return"
		else if (NF != 15) why = NF " fields, not 15"
		else if ($1 !~ /^[1-9][0-9]*$/) why = "patch number " $1
		else if (index(" " arches, " " $5 " ") == 0) why = "arch " $5 " is not one of: " arches
		else if ($6 !~ /^(yes|no)$/ || $7 !~ /^(yes|no)$/) why = "build/boot " $6 "/" $7
		else if ($8 == "") why = "empty verdict"
		else if (seen[$1 "/" $5]++) why = "patch " $1 " on " $5 " twice"
		if (why != "") { print "bad\tline " FNR ": " why; next }
		rfile[$1 "/" $5] = $2; rpid[$1 "/" $5] = $4; rverdict[$1 "/" $5] = $8
	}
	END {
		na = split(arches, a, " ")
		for (i = 1; i <= na; i++) {
			ok = 1
			for (k = 1; k <= n; k++) {
				c = k "/" a[i]
				if (ok && (!(c in rfile) || rfile[c] != file[k] || rpid[c] != pid[k]))
					ok = 0
				if (!ok) { print "stale\t" a[i] "\t" k; continue }
				current++
				if (rverdict[c] != "0")
					print "fail\tpatch " k " (" file[k] ") on " a[i] ": verdict " rverdict[c]
			}
		}
		print "count\t" current + 0 "\t" n * na
	}' "$want" "$tsv")

bad=$(awk -F'\t' '$1 == "bad" { print "  " $2 }' <<< "$verdicts")
[ -z "$bad" ] || die "$tsv has rows bisect.sh does not write:
$bad"
read -r current total < <(awk -F'\t' '$1 == "count" { print $2, $3 }' <<< "$verdicts")
# Stale cells as "patches 11-20 on arm64, riscv64, x86_64; patch 3 on x86_64": each arch's
# patch numbers as ranges, arches with the same ranges together.
stale=$(awk -F'\t' '$1 == "stale" { print $2 "\t" $3 }' <<< "$verdicts" | awk -F'\t' '
	{ if ($1 != last) { order[++na] = $1; last = $1 } ks[$1] = ks[$1] " " $2 }
	END {
		for (i = 1; i <= na; i++) {
			a = order[i]; m = split(ks[a], k, " "); r = ""; j = 1
			while (j <= m) {
				e = j
				while (e < m && k[e + 1] == k[e] + 1) e++
				r = r (r == "" ? "" : ",") (e > j ? k[j] "-" k[e] : k[j])
				plural[a] = plural[a] || e > j
				j = e + 1
			}
			if (!(r in on)) { ranges[++nr] = r; many[r] = 0 }
			on[r] = on[r] (on[r] == "" ? "" : ", ") a
			many[r] = many[r] || plural[a] || index(r, ",")
		}
		for (i = 1; i <= nr; i++)
			printf "%s%s %s on %s", (i > 1 ? "; " : ""), (many[ranges[i]] ? "patches" : "patch"),
				ranges[i], on[ranges[i]]
	}')
fail=$(awk -F'\t' '$1 == "fail" { print "  " $2 }' <<< "$verdicts")

if [ -z "$stale" ]; then
	line="per-patch matrix: $current of $total cells current"
else
	line="per-patch matrix: $current of $total cells current; stale: $stale; refresh: make bisect ARCH=all"
fi
echo "evidence: $line"
[ -z "$fail" ] || die "current cells of $tsv record failures:
$fail"
[ -z "$require" ] || [ -z "$stale" ] || die "the matrix is not current ($stale); run 'make bisect ARCH=all'"
exit 0
