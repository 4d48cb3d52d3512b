#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: cover-letter.sh [-h|--help] [--check|--strict] [--file FILE]

Write the series' cover letter (the 0/N mail) from its template review/cover-letter.in: the
prose is written there by hand; the placeholders are filled from the repository, never typed:
  @SERIES@    the patch subjects, in series order (git mailinfo of patches/)
  @DIFFSTAT@  the diffstat of the whole series against the base (git apply --cached of every
              patch into a temporary index of the base tree; the checkout is not touched)
  @MATRIX@    the per-patch matrix from results/bisect.tsv and the date of results/README.md,
              and its coverage of the series (scripts/bisect-verify.sh: cells current)
  @NUMBERS@   the benchmark tables of results/*-bench*.md (a benchmark and its variants, e.g.
              batch-bench-x86_64-distro.md), each with its command and date
  @SELFTESTS@ the counts per arch, runner and kernel and the cases that differ between base
              and tip, from results/bpf-selftests.md (scripts/selftests-compare.sh)
  @BASE@      base-commit: from base.conf
The first line of the result is the subject of the 0/N mail, the rest its body.

Options:
  --check      regenerate into a temporary file and compare: exit 1, saying what differs,
               if FILE is stale (make check runs this); the matrix's coverage sentence is
               not compared (stale cells are reported by scripts/bisect-verify.sh)
  --strict     --check, the coverage sentence compared too (make send runs this)
  --file FILE  the cover letter to write or check (default: cover-letter.txt of the repo)
  -h, --help   show this help"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

check=
strict=
file=$KS_ROOT/cover-letter.txt
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--check) check=1 ;;
	--strict) check=1 strict=1 ;;
	--file) file=$2; shift ;;
	*) echo "$usage" >&2; exit 64 ;;
	esac
	shift
done
[ -d "$KS_SRC/.git" ] || die "no base tree at $KS_SRC (run scripts/fetch-base.sh)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mapfile -t names < <(series_names "$KS_ROOT/series")
n=${#names[@]}

# @SERIES@
{
	echo "Patches:"
	i=0
	for p in "${names[@]}"; do
		i=$((i + 1))
		subject=$(git mailinfo /dev/null /dev/null < "$KS_ROOT/patches/$p" | sed -n 's/^Subject: //p')
		printf '  %d/%d %s\n' "$i" "$n" "$subject"
	done
	[ "$n" -gt 0 ] || echo "  (none)"
} > "$tmp/series"

# @DIFFSTAT@: the series applied to a scratch index of the base tree.
export GIT_INDEX_FILE=$tmp/index
git -C "$KS_SRC" read-tree base
for p in "${names[@]}"; do
	git -C "$KS_SRC" apply --cached "$KS_ROOT/patches/$p" ||
		die "patches/$p does not apply to the base (scripts/apply.sh names the reason)"
done
tree=$(git -C "$KS_SRC" write-tree)
unset GIT_INDEX_FILE
git -C "$KS_SRC" diff --stat=72 --summary base "$tree" > "$tmp/diffstat"
[ -s "$tmp/diffstat" ] || echo " (no changes)" > "$tmp/diffstat"

# @MATRIX@
tsv=$KS_ROOT/results/bisect.tsv
{
	when=$(sed -n 's/^\(Generated\|Written\) by `\(.*\)` on \([^,]*\),.*/`\2`, \3/p' "$KS_ROOT/results/README.md" | head -1)
	echo "Per-patch matrix from results/bisect.tsv (${when:-an unknown run}):"
	if [ "$(head -1 "$tsv" | awk -F'\t' '{ print NF }')" -eq 20 ]; then
		echo "build, boot and the guest tests after every patch, per arch: the tests"
		echo "a patch's paths can affect plus a smoke set (qemu/bisect-tests.list),"
		echo "every test at the end of each part. Cell: verdict (0 = passed), then"
		echo "the passed, failed and skipped test cases."
	else
		echo "build, boot and the guest tests of the harness (qemu/guest/tests.list)"
		echo "after every patch, per arch. Cell: verdict (0 = passed), then the"
		echo "passed, failed and skipped test cases."
	fi
	echo
	# Columns of the verdict and counts: bisect.sh's layout, or the one before content keys.
	awk -F'\t' '
		NR == 1 { v = (NF == 20 ? 11 : 8); next }
		{ if (!($5 in col)) { col[$5] = ++na; an[na] = $5 }
		  if (!($1 in row)) { row[$1] = ++np; pn[np] = $1; ps[np] = $3 }
		  cell[$1 FS $5] = sprintf("%s %s/%s/%s", $v, $(v + 1), $(v + 2), $(v + 3)) }
		END {
			if (!np) { print "  (the series is empty)"; exit }
			printf "  %-3s", "#"
			for (a = 1; a <= na; a++) printf "  %-14s", an[a]
			printf "\n"
			for (p = 1; p <= np; p++) {
				printf "  %-3s", pn[p]
				for (a = 1; a <= na; a++) {
					c = cell[pn[p] FS an[a]]; printf "  %-14s", (c == "" ? "-" : c)
				}
				printf "\n"
			}
		}' "$tsv" | sed 's/ *$//'
	echo
	# The coverage as make check reports it: the cells whose content keys are current.
	coverage=$("$KS_ROOT/scripts/bisect-verify.sh") || die "results/bisect.tsv: scripts/bisect-verify.sh fails"
	coverage=${coverage#evidence: per-patch matrix: }
	echo "Coverage: ${coverage%%; refresh: *}." | fold -s -w 72 | sed "s/ *$//"
	echo "arm64 at EL2 with VHE and the uniprocessor riscv64 build run in 'make check'."
} > "$tmp/matrix"

# @NUMBERS@: every benchmark table in results/, as the benchmark script wrote it.
{
	found=
	for md in "$KS_ROOT"/results/*-bench*.md; do
		[ -e "$md" ] || continue
		found=1
		# Drop the markdown title; keep its provenance lines and tables.
		sed '1{/^# /d}' "$md" | sed '/./,$!d'
		echo
	done
	[ -n "$found" ] || echo "(no benchmark results in results/ yet)"
} > "$tmp/numbers"

# @SELFTESTS@: the counts table and the base/tip differences of results/bpf-selftests.md.
sel=$KS_ROOT/results/bpf-selftests.md
if [ -f "$sel" ]; then
	# The counts table is the only one before the first "## " section.
	awk '
		/^Generated by: / { sub(/^Generated by: /, ""); sub(/\.$/, "");
			print "From results/bpf-selftests.md, written by"; print $0 ":"; print ""; next }
		/^\| ---/ { next }
		/^\|/ && !sec { split($0, f, / *\| */)
			printf "  %-10s %-13s %-6s %7s %7s %8s %6s %6s\n", f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9]
			next }
		/^## / { sec = $0; d = /^## Cases whose result differs/
			if (d) { print ""; print "Cases whose result differs between base and tip:" }
			next }
		d && NF { print "  " $0 }
		/^Verdict: / { print ""; print }' "$sel"
else
	echo "(no results/bpf-selftests.md yet: run scripts/selftests-compare.sh)"
fi > "$tmp/selftests"

echo "base-commit: $BASE_COMMIT" > "$tmp/base"

awk -v dir="$tmp" '
	function put(name,   line) { while ((getline line < (dir "/" name)) > 0) print line; close(dir "/" name) }
	/^@SERIES@$/ { put("series"); next }
	/^@DIFFSTAT@$/ { put("diffstat"); next }
	/^@MATRIX@$/ { put("matrix"); next }
	/^@NUMBERS@$/ { put("numbers"); next }
	/^@SELFTESTS@$/ { put("selftests"); next }
	/^@BASE@$/ { put("base"); next }
	{ print }' "$KS_ROOT/review/cover-letter.in" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' > "$tmp/cover"

# without_coverage FILE: FILE less its "Coverage: ..." sentence. A harness change makes cells
# stale without touching the series: --check (make check) reports that through
# bisect-verify.sh, not as a stale cover letter; --strict (make send) compares it too.
without_coverage() {
	awk '/^Coverage: / { skip = 1 } skip { if (/\.$/) skip = 0; next } { print }' "$1"
}
if [ -n "$check" ]; then
	if [ -z "$strict" ]; then
		without_coverage "$tmp/cover" > "$tmp/cover.cmp"
		without_coverage "$file" > "$tmp/file.cmp"
	else
		cp "$tmp/cover" "$tmp/cover.cmp"
		cp "$file" "$tmp/file.cmp"
	fi
	if ! cmp -s "$tmp/cover.cmp" "$tmp/file.cmp"; then
		echo "cover-letter.sh: error: ${file#"$KS_ROOT"/} is stale (its series, diffstat," \
			"matrix, numbers, selftest counts or base differ from the repository); run scripts/cover-letter.sh:" >&2
		diff -u "$file" "$tmp/cover" | head -40 >&2 || true
		exit 1
	fi
	note "${file#"$KS_ROOT"/} is up to date ($n patches)"
	exit 0
fi
cp "$tmp/cover" "$file"
note "wrote ${file#"$KS_ROOT"/} ($n patches)"
