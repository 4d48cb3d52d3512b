#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: bisect.sh [-h|--help] [--series FILE] [--patches DIR] [--out DIR] [--append ARGS]
                 [--from K] [ARCH...|all]

Per-patch matrix: for every arch (default: all) and every prefix of the series (patch 1, 1..2,
..., 1..N), apply, build (incremental: patches are added one at a time on branch 'bisect'),
pack the initramfs, boot and run the guest tests. Branch 'bisect' of the base tree is
scratch space, recreated on every run. Nothing stops it; every cell is recorded in
OUT/bisect.tsv (one row per patch x arch: patch number, file, subject, git patch-id, arch,
build ok, boot ok, verdict, passed, failed, skipped, xfail, splats, seconds, and the earlier
patch whose result was reused) and rendered as OUT/README.md. A patch after which an arch's
kernel image and initramfs are byte-identical to the last booted ones (it touched another
arch, tools or docs) reuses that boot's result instead of booting again. The rows of arches
this run does not boot are kept from the previous matrix (an interrupted run's
OUT/bisect.tsv.new, else OUT/bisect.tsv) when they cover the current series exactly (one row
per patch, same git patch-ids), so 'bisect.sh arm64' redoes one arch. A kept row takes the
file name and subject (without its [PATCH k/N] tag) of the current series' patch with its
number and patch-id. OUT/README.md ends with the cells' seconds summed per arch. Prints the
first bad patch and the command that reproduces it.

Options:
  --series FILE   series file (default: series)
  --patches DIR   patch directory (default: patches/)
  --out DIR       where bisect.tsv and README.md go (default: results/)
  --append ARGS   extra guest kernel arguments (see scripts/boot.sh)
  --from K        keep the rows of patches 1..K-1 of the booted arches from the previous
                  matrix (they must be there with the same git patch-ids: after appending
                  patches to a bisected series) and build and boot from patch K on; the
                  kept rows ran the guest tests of their day, which README.md says;
                  --from N+1 (N patches) boots nothing and only renders the matrix again
  -h, --help      show this help
Exit: 0 if every cell passed, 1 otherwise, 64 on a usage error."
set -uo pipefail
. "$(dirname "$0")/lib.sh"

series=$KS_ROOT/series
pdir=$KS_ROOT/patches
outdir=$KS_ROOT/results
extra=
from=1
invocation="scripts/bisect.sh${*:+ $*}"	# for the rendered matrix
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--series) series=$2; shift ;;
	--patches) pdir=$2; shift ;;
	--out) outdir=$2; shift ;;
	--append) extra=$2; shift ;;
	--from) from=$2; shift
		case "$from" in ''|*[!0-9]*|0) echo "bisect.sh: --from needs a patch number >= 1" >&2; exit 64 ;; esac ;;
	-*) echo "$usage" >&2; exit 64 ;;
	*) break ;;
	esac
	shift
done
arches=$(expand_arches "${@:-all}") || exit 64
[ -f "$series" ] || die "no series file $series"
mapfile -t names < <(series_names "$series")
for n in "${names[@]}"; do
	[ -f "$pdir/$n" ] || die "series names $n, which is not in $pdir"
done
"$KS_ROOT/scripts/fetch-base.sh" || exit 1
ks_lock
mkdir -p "$outdir"
tsv=$outdir/bisect.tsv
logdir=$KS_CACHE/bisect
mkdir -p "$logdir"
S=$KS_ROOT/scripts
git() { command git -C "$KS_SRC" "$@"; }

# The previous matrix, for the rows of arches this run does not boot.
prev=$logdir/previous.tsv
if [ -s "$tsv.new" ]; then
	cp "$tsv.new" "$prev"
elif [ -s "$tsv" ]; then
	cp "$tsv" "$prev"
else
	: > "$prev"
fi
# Each patch's git patch-id and subject, once: pids[k - 1], subjects[k - 1] for patch k.
pids=() subjects=()
for n in "${names[@]}"; do
	pids+=("$(command git patch-id --stable < "$pdir/$n" | cut -d' ' -f1)")
	subjects+=("$(patch_subject "$pdir/$n")")
done
want=$(for i in "${!names[@]}"; do printf '%d\t%s\n' $((i + 1)) "${pids[i]}"; done)

# --from K: the booted arches' rows of patches 1..K-1 must be in the previous matrix.
[ "$from" -le $((${#names[@]} + 1)) ] || die "--from $from: the series has ${#names[@]} patch(es)"
want_before=$(printf '%s\n' "$want" | awk -F'\t' -v k="$from" '$1 < k')
if [ "$from" -gt 1 ]; then
	for a in $arches; do
		have=$(awk -F'\t' -v a="$a" -v k="$from" '!/^#/ && $5 == a && $1 < k { print $1 "\t" $4 }' "$prev")
		[ "$have" = "$want_before" ] ||
			die "--from $from: the previous matrix has no rows for patches 1..$((from - 1)) on $a with the current patch-ids; run without --from"
	done
fi

printf '#patch\tfile\tsubject\tpatch_id\tarch\tbuild\tboot\tverdict\tpassed\tfailed\tskipped\txfail\tsplats\tseconds\tsame_image_as\n' > "$tsv.new"
total=${#names[@]}
t_run=$SECONDS
for a in $arches; do
	load_arch "$a"
	git am --abort >/dev/null 2>&1
	guard_tree
	git checkout -q -B bisect base || die "cannot check out a bisect branch in $KS_SRC"
	k=0
	broken=
	last_hash=
	for n in "${names[@]}"; do
		k=$((k + 1))
		t0=$SECONDS
		subject=${subjects[k - 1]}
		pid=${pids[k - 1]}
		log=$logdir/$a-$k
		build=no boot=no verdict=- p=0 f=0 s=0 x=0 splats=0 same_as=-
		if [ "$k" -lt "$from" ] && [ -z "$broken" ]; then
			# Kept from the previous matrix (checked above); applied so that patch
			# $from builds on the whole prefix.
			if git -c user.name=kseries -c user.email=kseries@invalid am --quiet --keep-cr \
					"$pdir/$n" > "$log.apply" 2>&1; then
				awk -F'\t' -v a="$a" -v k="$k" '!/^#/ && $5 == a && $1 == k' "$prev" >> "$tsv.new"
				continue
			fi
			git am --abort >/dev/null 2>&1
			broken="patch $k does not apply"
			verdict="does not apply"
		elif [ -n "$broken" ]; then
			verdict="not applied ($broken)"
		elif ! git -c user.name=kseries -c user.email=kseries@invalid am --quiet --keep-cr \
				"$pdir/$n" > "$log.apply" 2>&1; then
			git am --abort >/dev/null 2>&1
			broken="patch $k does not apply"
			verdict="does not apply"
		elif ! "$S/build.sh" "$a" > "$log.build" 2>&1; then
			verdict="build failed"
		elif ! "$S/initramfs.sh" "$a" > "$log.initramfs" 2>&1; then
			build=yes
			verdict="initramfs failed"
		else
			build=yes
			rc=0
			# A patch that leaves this arch's kernel image and initramfs as they were
			# (it touches another arch, tools or docs) gets the last boot's result.
			hash=$(cat "$KS_BUILD/$IMAGE" "$KS_OUT"/initramfs/* | sha256sum | cut -d' ' -f1)
			if [ "$hash" = "$last_hash" ]; then
				cp "$last_log.console" "$log.console"
				cp "$last_log.report" "$log.report"
				rc=$last_rc
				same_as=$last_k
			else
				# --allow-skips: a patch's cell lacks the tests of later patches (and
				# a fixture series' tip those of the real one); make check's main jobs
				# judge the real tip without it.
				"$S/boot.sh" --allow-skips --append "$extra" --log "$log.console" "$a" \
					> "$log.report" 2>&1 || rc=$?
				last_hash=$hash last_log=$log last_rc=$rc last_k=$k
			fi
			verdict=$rc
			[ "$rc" -eq 4 ] || boot=yes
			read -r p f s x < <(sed -n -E 's/^cases: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped, ([0-9]+) xfail.*/\1 \2 \3 \4/p' "$log.report")
			p=${p:-0} f=${f:-0} s=${s:-0} x=${x:-0}
			splats=$(grep -a -c -E -f <(splat_patterns) "$log.console")
		fi
		printf '%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n' "$k" "$n" \
			"$subject" "$pid" "$a" "$build" "$boot" "$verdict" "$p" "$f" "$s" "$x" \
			"$splats" $((SECONDS - t0)) "$same_as" | tee -a "$tsv.new"
	done
done

kept=
for a in $(arch_names | grep -v -- '-'); do
	case " $(echo $arches) " in *" $a "*) continue ;; esac
	have=$(awk -F'\t' -v a="$a" '!/^#/ && $5 == a { print $1 "\t" $4 }' "$prev")
	[ -n "$have" ] && [ "$have" = "$want" ] || continue
	awk -F'\t' -v a="$a" '!/^#/ && $5 == a' "$prev" >> "$tsv.new"
	kept="$kept $a"
done
# Kept rows name their patch as the series does now: a row whose number and patch-id match a
# patch of the series gets its file name and subject (an older series may have named the
# same change otherwise, or tagged it [PATCH k/N] of another N).
names_map=$(mktemp)
for i in "${!names[@]}"; do
	printf '%d\t%s\t%s\t%s\n' $((i + 1)) "${pids[i]}" "${names[i]}" "${subjects[i]}"
done > "$names_map"
awk -F'\t' -v OFS='\t' -v map="$names_map" '
	FILENAME == map { f[$1 FS $2] = $3; s[$1 FS $2] = $4; next }
	!/^#/ && ($1 FS $4) in f { $2 = f[$1 FS $4]; $3 = s[$1 FS $4] }
	{ print }' "$names_map" "$tsv.new" > "$tsv.new2" && mv "$tsv.new2" "$tsv" ||
	die "cannot write $tsv (this run's rows are in $tsv.new)"
rm -f "$tsv.new" "$names_map"
narches=$(awk -F'\t' '!/^#/ { print $5 }' "$tsv" | sort -u | wc -l)

# First bad patch: the lowest patch number with a cell that is not verdict 0.
bad=$(awk -F'\t' '!/^#/ && $8 != "0" { print $1 "\t" $2 "\t" $5 "\t" $8 }' "$tsv" | sort -n -k1,1 | head -1)
{
	echo "# Per-patch matrix"
	echo
	echo "Generated by \`$invocation\` on $(date -u '+%Y-%m-%d %H:%M UTC'), base Debian"
	echo "$BASE_PKG $BASE_DEB_VERSION; $total patch(es); verdict as scripts/boot.sh (0 = passed)."
	if [ "$from" -gt "$total" ] && [ "$total" -gt 0 ]; then
		echo "Every row kept from the previous matrix (same patch-ids, the guest tests of their run); nothing booted in this run."
	else
		[ -z "$kept" ] || echo "Rows of$kept kept from the previous matrix (same patch-ids); booted in this run: $(echo $arches)."
	fi
	if [ "$from" -gt 1 ] && [ "$from" -le "$total" ]; then
		echo "Rows of patches 1..$((from - 1)) kept from the previous matrix (same patch-ids, the guest tests of that run): booted in this run from patch $from on."
	fi
	echo
	echo "| # | patch | arch | build | boot | verdict | passed | failed | skipped | xfail | splats | s | same image as |"
	echo "|---|-------|------|-------|------|---------|--------|--------|---------|-------|--------|---|---|"
	awk -F'\t' '!/^#/ { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
		$1, $3, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15 }' "$tsv"
	[ "$total" -gt 0 ] || echo "| - | (the series is empty) | | | | | | | | | | | |"
	echo
	if [ -n "$bad" ]; then
		echo "First bad patch: $(echo "$bad" | cut -f1)/$total $(echo "$bad" | cut -f2)" \
			"($(echo "$bad" | cut -f3): $(echo "$bad" | cut -f4))"
	else
		echo "Every cell passed ($total patch(es) x $narches arch(es))."
	fi
	echo
	# Seconds of a cell: apply, build, initramfs and boot with the guest tests (a
	# reused boot costs only apply, build and initramfs), as measured by the run that made
	# the row.
	awk -F'\t' '!/^#/ { t += $14; a[$5] += $14; if (!($5 in seen)) { seen[$5] = 1; o[n++] = $5 } }
		END { printf "Time: the cells add up to %.1f min (", t / 60
			for (i = 0; i < n; i++) printf "%s%s %.1f", i ? ", " : "", o[i], a[o[i]] / 60
			print "), one cell after another (the seconds of each row as measured by the run that made it);" }' "$tsv"
	m=$(((SECONDS - t_run + 30) / 60))
	if [ "$m" -gt 0 ]; then echo "this run took $m min."; else echo "this run took under a minute."; fi
} > "$outdir/README.md.new"
mv "$outdir/README.md.new" "$outdir/README.md"

if [ -n "$bad" ]; then
	k=$(echo "$bad" | cut -f1)
	a=$(echo "$bad" | cut -f3)
	echo "first bad patch: $k/$total $(echo "$bad" | cut -f2) ($a: $(echo "$bad" | cut -f4))"
	src_args=
	[ "$series" = "$KS_ROOT/series" ] || src_args=" --series $(printf '%q' "$series")"
	[ "$pdir" = "$KS_ROOT/patches" ] || src_args="$src_args --patches $(printf '%q' "$pdir")"
	echo "reproduce: scripts/apply.sh$src_args --upto $k --branch bisect && scripts/build.sh $a &&" \
		"scripts/initramfs.sh $a && scripts/boot.sh${extra:+ --append $(printf '%q' "$extra")} $a" \
		"  (logs: $logdir/$a-$k.*)"
	exit 1
fi
echo "bisect: $total patch(es) x $narches arch(es), every cell passed"
