#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: distro-verify.sh [-h|--help] [--results DIR] [--series FILE] [--patches DIR]
                        [--require-current]

Report how many of the committed runs on the distributions' configurations (make distro:
results/ARCH.txt of every ARCH whose qemu/arch/ARCH.conf sets BASE_CONFIG, ARCH-distro and its
JIT-off variant ARCH-distro-interp) are current for the series and the harness. A run is current when the key its summary records ('# Key: ...',
written by scripts/run.sh) is the run's content key now (scripts/bisect-lib.sh: run_key):
the git tree of the base with the whole series applied, the arch's harness hash, the
configuration the build starts from (Debian's file by the sha256 distro.conf pins; riscv64's
defconfig through the tree) and every guest test the run ran at its hash. A reworded commit message
keeps a run current; a code change in any patch makes every run stale.
Prints one line: how many runs are current out of how many, which are stale or missing, and
the command that refreshes them.

Stale runs are evidence to refresh before posting, not a failure of the commit: without
--require-current the exit is 0 for any mix of current and stale runs. It is 1 when a
summary is malformed (no key or no verdict line) or when a current run records a failure
(a verdict other than 0): that is what the series fails now.

Options:
  --results DIR       where the summaries are (default: results/)
  --series FILE       series file (default: series)
  --patches DIR       patch directory (default: patches/)
  --require-current   also exit 1 unless every run is current and passed (scripts/send.sh,
                      the gate before posting)
  -h, --help          show this help
Exit: 0 as above, 1 a malformed summary, a current failure or (--require-current) a stale
run, 64 a usage error."
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$KS_ROOT/scripts/bisect-lib.sh"

results=$KS_ROOT/results
series=$KS_ROOT/series
pdir=$KS_ROOT/patches
require=
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--results) results=$2; shift ;;
	--series) series=$2; shift ;;
	--patches) pdir=$2; shift ;;
	--require-current) require=1 ;;
	*) echo "$usage" >&2; exit 64 ;;
	esac
	shift
done
[ $# -eq 0 ] || { echo "$usage" >&2; exit 64; }
[ -f "$series" ] || die "no series file $series"
[ -d "$KS_SRC/.git" ] || die "no base tree at $KS_SRC (run scripts/fetch-base.sh): the series' tree is computed in it"

arches=$(for a in $(arch_names); do
	if (load_arch "$a" && [ -n "$BASE_CONFIG" ]); then echo "$a"; fi
done | LC_ALL=C sort)
[ -n "$arches" ] || die "no qemu/arch/*.conf sets BASE_CONFIG"
mapfile -t names < <(series_names "$series")
tree=$(series_trees "$pdir" "${names[@]}" | tail -1 | cut -f2)
[ -n "$tree" ] || die "the series $series is empty"

current=0 total=0 stale="" fail="" refresh=""
for a in $arches; do
	total=$((total + 1))
	f=$results/$a.txt
	have=
	if [ -f "$f" ]; then
		have=$(sed -n 's/^# Key: //p' "$f")
		verdict=$(sed -n 's/^verdict: //p' "$f" | tail -1)
		[ -n "$have" ] && [ "$(wc -l <<< "$have")" -eq 1 ] && [ -n "$verdict" ] ||
			die "$f is not a summary scripts/run.sh writes (one '# Key:' and a 'verdict:' line)"
	fi
	want=$(run_key "$a" "$tree") || die "cannot compute the key of $a's run"
	if [ "$have" != "$want" ]; then
		[ -n "$have" ] || a="$a (no run)"
		stale="$stale${stale:+, }$a"
		refresh="$refresh ${a%%-distro*}"
		continue
	fi
	current=$((current + 1))
	[ "${verdict%% *}" = 0 ] || fail="$fail
  $a: verdict $verdict ($f)"
done
line="distribution runs: $current of $total current"
# One make distro per arch with a stale run (it runs ARCH-distro and ARCH-distro-interp).
# shellcheck disable=SC2086 # refresh: arch names
refresh=$(printf '%s\n' $refresh | LC_ALL=C sort -u | sed 's/^/make distro ARCH=/' | paste -sd';' |
	sed 's/;/; /g')
[ -z "$stale" ] || line="$line; stale: $stale; refresh: $refresh"
echo "evidence: $line"
[ -z "$fail" ] || die "current distribution runs record failures:$fail"
[ -z "$require" ] || [ -z "$stale" ] || die "the distribution runs are not current (stale: $stale); run 'make distro'"
exit 0
