#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: bisect-verify.sh [-h|--help] [--tsv FILE] [--series FILE] [--patches DIR]
                        [--tests NAMES] [--require-current]

Report how much of the committed per-patch matrix (results/bisect.tsv, written by
scripts/bisect.sh) is current for the series and the harness. The cell of patch k on an arch
is current when its row has the cell's content key as it is now (scripts/bisect-lib.sh):
the git tree of the base with patches 1..k applied (a reworded commit message keeps it; a
code change in patch k changes the cells k..N and no earlier one), the arch's harness hash
(the guest init, the lists, the arch's data and config fragments, the judge), and every test
qemu/bisect-tests.list selects for the patch at the test's current hash; for the last
patch, unexpected skips judged. Patch-ids are in the rows for readers, not in the key.
Prints one line: how many cells are current out of how many, which are stale (patch
numbers and arches) and the command that refreshes them.

Stale cells are evidence to refresh before posting, not a failure of the commit: without
--require-current the exit is 0 for any mix of current and stale cells. It is 1 when the file
is malformed (not bisect.sh's header, a row bisect.sh does not write) or when a current cell
records a failure: that is what the series fails now. A matrix of the layout before content
keys (15 columns) is read as all stale.

Options:
  --tsv FILE          matrix to check (default: results/bisect.tsv)
  --series FILE       series file (default: series)
  --patches DIR       patch directory (default: patches/)
  --tests NAMES       the tests every cell must have run (as bisect.sh --tests), instead of
                      what qemu/bisect-tests.list selects
  --require-current   also exit 1 unless every cell is current and passed (scripts/send.sh,
                      the gate before posting)
  -h, --help          show this help
Exit: 0 as above, 1 a malformed matrix, a current failure or (--require-current) a stale
cell, 64 a usage error."
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$KS_ROOT/scripts/bisect-lib.sh"

tsv=$KS_ROOT/results/bisect.tsv
series=$KS_ROOT/series
pdir=$KS_ROOT/patches
force_tests=
require=
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--tsv) tsv=$2; shift ;;
	--series) series=$2; shift ;;
	--patches) pdir=$2; shift ;;
	--tests) force_tests=$2; shift ;;
	--require-current) require=1 ;;
	*) echo "$usage" >&2; exit 64 ;;
	esac
	shift
done
[ -f "$tsv" ] || die "no matrix $tsv: run 'make bisect'"
[ -f "$series" ] || die "no series file $series"
[ -d "$KS_SRC/.git" ] || die "no base tree at $KS_SRC (run scripts/fetch-base.sh): the cells' trees are computed in it"

old_header=$(printf '#patch\tfile\tsubject\tpatch_id\tarch\tbuild\tboot\tverdict\tpassed\tfailed\tskipped\txfail\tsplats\tseconds\tsame_image_as')
first=$(head -1 "$tsv")
rows=$tsv
if [ "$first" = "$old_header" ]; then
	rows=/dev/null
elif [ "$first" != "$(bisect_header)" ]; then
	die "$tsv does not start with bisect.sh's header line"
else
	bad=$(bisect_row_problems "$tsv")
	[ -z "$bad" ] || die "$tsv has rows bisect.sh does not write:
$bad"
fi

mapfile -t names < <(series_names "$series")
total=${#names[@]}
for n in "${names[@]}"; do
	[ -f "$pdir/$n" ] || die "series names $n, which is not in $pdir"
done
declare -A trees harness
# (Not in a process substitution: a patch that does not apply ends this script here.)
treesf=$(mktemp)
trap 'rm -f "$treesf"' EXIT
series_trees "$pdir" "${names[@]}" > "$treesf"
while IFS=$'\t' read -r k tree; do
	trees[$k]=$tree
done < "$treesf"
hashed=$(with_hashes all)
arches=$(expand_arches all)

stale=
fail=
current=0
for a in $arches; do
	harness[$a]=$(harness_hash "$a")
	for k in $(seq 1 "$total"); do
		sel=$(cell_tests "$k" "$total" "$pdir/${names[k - 1]}" "$a" "$force_tests")
		row=$(matrix_row "$rows" "$k" "$a")
		if [ -z "$row" ] || ! cell_key_matches "$row" "${trees[$k]}" "${harness[$a]}" "$sel" "$hashed" "$k" "$total"; then
			stale="$stale$a	$k
"
			continue
		fi
		current=$((current + 1))
		cell_passed "$row" ||
			fail="$fail
  patch $k (${names[k - 1]}) on $a: verdict $(cut -f11 <<< "$row"), $(cut -f13 <<< "$row") failed case(s)"
	done
done
ncells=$((total * $(wc -w <<< "$arches")))
stale=$(printf '%s' "$stale" | stale_ranges)
line="per-patch matrix: $current of $ncells cells current"
[ -z "$stale" ] || line="$line; stale: $stale; refresh: make bisect (BUDGET=MINUTES for a part)"
echo "evidence: $line"
[ -z "$fail" ] || die "current cells of $tsv record failures:$fail"
[ -z "$require" ] || [ -z "$stale" ] || die "the matrix is not current (stale: $stale); run 'make bisect'"
exit 0
