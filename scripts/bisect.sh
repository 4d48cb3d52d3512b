#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: bisect.sh [-h|--help] [--series FILE] [--patches DIR] [--out DIR] [--append ARGS]
                 [--tests NAMES] [--jobs N] [--budget MINUTES] [--force] [ARCH...|all]

Refresh the per-patch matrix: for every arch (default: all) and every prefix of the series
(patch 1, 1..2, ..., 1..N), build, pack the initramfs, boot and run the guest tests; only the
cells that are stale, lowest patch first, each written into OUT/bisect.tsv as soon as it
finishes (atomically: a run that is killed keeps every cell it finished, and the next run
starts at the first stale cell).

A cell is current when its row has its content key as it is now (scripts/bisect-lib.sh):
the git tree after patch k (series_trees), the arch's harness hash (harness_hash: the guest
init, the lists, the arch's data and config fragments, the judge; with --append or
KSERIES_DEBUG the key gets a suffix no committed matrix may carry), and every test the cell
selects at the test's current hash (test_hash), with the last patch's skips judged. A
current cell that passed is kept (neither built nor booted; --force runs it again, to
re-measure); scripts/bisect-verify.sh reports the same states.

The stale cells run in two phases. First every cell is built: patch k is applied on branch
'bisect' of the base tree (scratch space, recreated), then each arch builds incrementally
and packs its initramfs; kernel image and initramfs are kept under
\$KSERIES_CACHE/bisect/cells (a run cut short builds none of them again). Then the distinct
images are booted, N at a time (--jobs): cells of an arch whose image and initramfs are
byte-identical (the patch touched another arch, tools or docs) share one boot, which runs
the union of their tests; an image an earlier boot of this cache passed, under the same
harness, QEMU and arch setup, a per-test watchdog no longer than now, with every test the
cells select at its current hash (and judging skips where they must) is not booted again
(unless --force): its cells take that boot (\$KSERIES_CACHE/bisect/images.tsv, the logs in
images/). Only the arches of 'all' (a variant's data is not in the harness hash). The
kernel is built with a fixed KBUILD_BUILD_VERSION, timestamp, user and host
(scripts/build.sh), so identical sources give identical images.

--budget MINUTES: cells are taken lowest patch first while the sum of their estimated
times (the median of this cache's last measured builds and boots of the arch,
\$KSERIES_CACHE/bisect/history.tsv; 5 and 6 minutes when there are none) fits; a boot whose
estimate no longer fits when its turn comes is not started. The run then ends with exit 0
(if nothing failed) and the line 'bisect: left for a later run: ...'.

A cell runs what qemu/bisect-tests.list selects for its patch: the smoke set plus the tests
a changed path can affect; every test at the end of each part and at the last patch. Skips
no qemu/xskip*.list names fail only the last patch's cells (earlier ones lack the tests of
later patches). Logs are kept under \$KSERIES_CACHE/bisect (another series than series:
\$KSERIES_CACHE/bisect-other).

OUT/bisect.tsv has one row per patch x arch: patch number, file, subject, git patch-id, arch,
tree, harness hash, tests run (NAME:HASH,...), build ok, boot ok, verdict (as
scripts/boot.sh; 0 = passed), passed, failed, skipped, xfail, splats, seconds (the cell's
build, plus the boot for the first cell of a shared boot), the earlier patch or boot whose
boot it shares, whether the row was carried over under a new file name or subject, and
whether unexpected skips were judged (the boot standing for the last patch) or allowed.
OUT/README.md renders it. Prints the first bad patch and the command that reproduces it,
then the matrix's coverage (scripts/bisect-verify.sh).

Options:
  --series FILE     series file (default: series)
  --patches DIR     patch directory (default: patches/)
  --out DIR         where bisect.tsv and README.md go (default: results/)
  --append ARGS     extra guest kernel arguments (see scripts/boot.sh; not harness.only or
                    harness.list: the cell's tests are chosen by qemu/bisect-tests.list)
  --tests NAMES     run these tests (comma-separated names of qemu/guest/tests.list, or
                    'all') in every cell instead of what qemu/bisect-tests.list selects
  --jobs N          guests booted at once (default 2); each boot's wall-clock limit and
                    the guest's per-test watchdog are multiplied by N
  --budget MINUTES  start no cell whose estimated end is past MINUTES from the start
                    (make bisect BUDGET=MINUTES)
  --force           run current cells too, and boot images an earlier boot passed
                    (make bisect FORCE=1)
  -h, --help        show this help
Exit: 0 if no cell of this run failed (cells may be left for a later run), 1 otherwise,
64 on a usage error."
set -uo pipefail
. "$(dirname "$0")/lib.sh"

series=$KS_ROOT/series
pdir=$KS_ROOT/patches
outdir=$KS_ROOT/results
extra=
force_tests=
njobs=2
budget=
force=
invocation="scripts/bisect.sh${*:+ $*}"	# for the rendered matrix
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--series) series=$2; shift ;;
	--patches) pdir=$2; shift ;;
	--out) outdir=$2; shift ;;
	--append) extra=$2; shift
		case " $extra" in *" harness.only="*|*" harness.list="*)
			echo "bisect.sh: --append: harness.only and harness.list are chosen per cell (see --tests)" >&2
			exit 64 ;;
		esac ;;
	--tests) force_tests=$2; shift
		[ -n "$force_tests" ] || { echo "bisect.sh: --tests needs test names or 'all'" >&2; exit 64; } ;;
	--jobs) njobs=$2; shift
		case "$njobs" in ''|*[!0-9]*|0) echo "bisect.sh: --jobs needs a number >= 1" >&2; exit 64 ;; esac ;;
	--budget) budget=$2; shift
		case "$budget" in ''|*[!0-9]*) echo "bisect.sh: --budget needs a number of minutes" >&2; exit 64 ;; esac ;;
	--force) force=1 ;;
	-*) echo "$usage" >&2; exit 64 ;;
	*) break ;;
	esac
	shift
done
. "$KS_ROOT/scripts/bisect-lib.sh"
arches=$(expand_arches "${@:-all}") || exit 64
arches=$(echo "$arches" | awk '!seen[$0]++')
for a in $arches; do
	expand_arches all | grep -Fqx -- "$a" || {
		echo "bisect.sh: $a is a variant; the matrix runs the arches of 'all': $(expand_arches all | tr '\n' ' ')" >&2
		exit 64
	}
done
[ -f "$series" ] || die "no series file $series"
mapfile -t names < <(series_names "$series")
for n in "${names[@]}"; do
	[ -f "$pdir/$n" ] || die "series names $n, which is not in $pdir"
done
if [ -n "$force_tests" ] && [ "$force_tests" != all ]; then
	for t in ${force_tests//,/ }; do
		case ",$(all_tests)," in *",$t,"*) ;; *)
			echo "bisect.sh: --tests: no test $t in qemu/guest/tests.list" >&2; exit 64 ;;
		esac
	done
fi
"$KS_ROOT/scripts/fetch-base.sh" || exit 1
ks_lock
mkdir -p "$outdir"
tsv=$outdir/bisect.tsv
logdir=$KS_CACHE/bisect
[ "$series" -ef "$KS_ROOT/series" ] || logdir=$KS_CACHE/bisect-other
cells=$logdir/cells
mkdir -p "$logdir" "$cells"
S=$KS_ROOT/scripts
git() { command git -C "$KS_SRC" "$@"; }
t_run=$SECONDS
total=${#names[@]}

header=$(bisect_header)
# The rows of OUT/bisect.tsv of this layout (one of the layout before content keys has none:
# every cell is stale, and the first row this run writes replaces the file).
prev=$logdir/previous.tsv
{ [ -s "$tsv" ] && [ "$(head -1 "$tsv")" = "$header" ] && awk -F'\t' 'NR > 1 && NF == 20' "$tsv"; } > "$prev"

# Every test with its hash as this run starts: what the guests of this run pack and run.
hashed=$(with_hashes all) || exit 1
# Guest arguments or a debug build change what a cell runs: their cells get their own key,
# which bisect-verify (the plain harness hash) never accepts.
variant="$extra${KSERIES_DEBUG:+ debug}"
suffix=
[ -z "$variant" ] || suffix="+$(echo "$variant" | sha256sum | cut -c1-8)"
all_arches=$(expand_arches all)
declare -A harness=()
for a in $all_arches; do
	harness[$a]=$(harness_hash "$a")$suffix || exit 1
done
# Per patch k (index k - 1): patch-id, subject, tree after it; tests["ARCH/K"]: the tests
# the cell runs.
pids=() subjects=() trees=()
declare -A tests=()
for n in "${names[@]}"; do
	pids+=("$(command git patch-id --stable < "$pdir/$n" | cut -d' ' -f1)")
	subjects+=("$(patch_subject "$pdir/$n")")
done
for a in $arches; do
	for k in $(seq 1 "$total"); do
		tests[$a/$k]=$(cell_tests "$k" "$total" "$pdir/${names[k - 1]}" "$a" "$force_tests") || exit 1
	done
done
while IFS=$'\t' read -r k tree; do
	trees[k - 1]=$tree
done < <(series_trees "$pdir" "${names[@]}")

# union A B: the tests of both, in the order of qemu/guest/tests.list.
union() {
	local name line=
	if [ "$1" = all ] || [ "$2" = all ]; then echo all; return; fi
	for name in $(all_tests | tr , ' '); do
		case ",$1,$2," in *",$name,"*) line="$line${line:+,}$name" ;; esac
	done
	echo "$line"
}

# store_rows ROW...: put ROWs into OUT/bisect.tsv, replacing the rows of the same patch and
# arch and dropping rows past the series' last patch, in patch, then arch order; written to
# a temporary file and renamed, under a lock (boots end in parallel), then rendered.
store_rows() {
	(
		flock 8
		tmpf=$(mktemp "$outdir/.bisect.tsv.XXXXXX") || exit 1
		{
			echo "$header"
			{ printf '%s\n' "$@"; cat "$prev.current" 2>/dev/null; } |
				awk -F'\t' -v total="$total" -v arches=" $all_arches " '
				NF == 20 && $1 <= total && !seen[$1 "/" $5]++ {
					printf "%d\t%d\t%s\n", $1, index(arches, " " $5 " "), $0 }' |
				sort -t "$(printf '\t')" -k1,1n -k2,2n | cut -f3-
		} > "$tmpf" && chmod 644 "$tmpf" && tail -n +2 "$tmpf" > "$prev.current" && mv "$tmpf" "$tsv" ||
			{ rm -f "$tmpf"; exit 1; }
		render_readme
	) 8> "$logdir/store.lock" || die "cannot write $tsv"
}
# The rows this run starts from; store_rows keeps it as OUT/bisect.tsv's rows are now. A
# temporary file a killed run left beside OUT/bisect.tsv goes.
cp "$prev" "$prev.current"
rm -f "$outdir"/.bisect.tsv.* "$outdir/.README.md.new"
trap 'rm -f "$outdir"/.bisect.tsv.* "$outdir/.README.md.new"' EXIT

# Cell state, indexed "ARCH/K": the kept row, or what the build phase found.
declare -A row=() state=() imghash=() secs=() same=()
for a in $arches; do
	for k in $(seq 1 "$total"); do
		[ -z "$force" ] && [ -n "${trees[k - 1]:-}" ] || continue
		r=$(matrix_row "$prev" "$k" "$a")
		[ -n "$r" ] && cell_key_matches "$r" "${trees[k - 1]}" "${harness[$a]}" \
			"${tests[$a/$k]}" "$hashed" "$k" "$total" && cell_passed "$r" && row[$a/$k]=$r
	done
done

# cell_row A K: the matrix row of cell A/K (as this run's build and boot left it).
cell_row() {
	local a=$1 k=$2 c=$1/$2 n=${names[$2 - 1]} build=no boot=no verdict p=0 f=0 s=0 x=0
	local splats=0 sec ran same_as=- k0 log rc bsec skips=-
	verdict=${state[$c]:-"no tree"} sec=${secs[$c]:-0} ran=-
	if [ "${state[$c]:-}" = built ]; then
		build=yes
		k0=${same[$c]:-$k}
		[ "$k0" = "$k" ] || same_as=$k0
		# A cell that took an earlier boot of its image names that boot.
		[ -z "${group_boot[$a/${imghash[$c]}]:-}" ] ||
			same_as="boot ${group_boot[$a/${imghash[$c]}]}"
		ran=${group_ran[$a/${imghash[$c]}]:-$(pick_hashes "$hashed" "${group_tests[$a/${imghash[$c]}]}")}
		skips=$(group_skips "$a/${imghash[$c]}")
		log=$logdir/$a-$k0
		read -r rc bsec < "$log.rc" 2>/dev/null || { rc=5; bsec=0; }
		[ "$k0" != "$k" ] || sec=$((sec + bsec))
		verdict=$rc
		[ "$rc" -eq 4 ] || boot=yes
		read -r p f s x < <(sed -n -E 's/^cases: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped, ([0-9]+) xfail.*/\1 \2 \3 \4/p' "$log.report")
		p=${p:-0} f=${f:-0} s=${s:-0} x=${x:-0}
		splats=$(grep -a -c -E -f <(splat_patterns) "$log.console")
	fi
	printf '%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\tno\t%s\n' \
		"$k" "$n" "${subjects[k - 1]:--}" "${pids[k - 1]}" "$a" "${trees[k - 1]:--}" \
		"${harness[$a]}" "${ran:--}" "$build" "$boot" "$verdict" "$p" "$f" "$s" "$x" "$splats" \
		"$sec" "$same_as" "$skips"
}
# group_skips GROUP: how the boot of GROUP (ARCH/IMAGE-HASH) judges unexpected skips:
# 'judged' if it stands for the last patch (which has every test), else 'allowed'.
group_skips() {
	if [ "${group_last[$1]}" -lt "$total" ]; then echo allowed; else echo judged; fi
}
# group_rows ARCH K: the rows of the cells whose boot is the one of cell ARCH/K.
group_rows() {
	local j
	for j in $(seq "$2" "$total"); do
		if [ "${state[$1/$j]:-}" = built ] && [ "${same[$1/$j]:-$j}" = "$2" ]; then
			cell_row "$1" "$j"
		fi
	done
}

# group_cells ARCH K: the cells whose boot is the one of cell ARCH/K, as ARCH/J lines.
group_cells() {
	local j
	for j in $(seq "$2" "$total"); do
		[ "${state[$1/$j]:-}" = built ] && [ "${same[$1/$j]:-$j}" = "$2" ] && echo "$1/$j"
	done
	return 0
}

# render_readme [END]: OUT/README.md from OUT/bisect.tsv; END: this run's summary (without
# it the file says that the run was still going: a run cut short leaves it so).
render_readme() {
	local bad
	bad=$(awk -F'\t' 'NR > 1 && ($11 != "0" || $13 != "0") { print $1 "\t" $2 "\t" $5 "\t" $11 }' "$tsv" |
		sort -n -k1,1 | head -1)
	{
		echo "# Per-patch matrix"
		echo
		echo "Written by \`$invocation\` on $(date -u '+%Y-%m-%d %H:%M UTC'), base Debian"
		echo "$BASE_PKG $BASE_DEB_VERSION; $total patch(es); verdict as scripts/boot.sh (0 = passed)."
		echo "A cell runs the tests qemu/bisect-tests.list selects for its patch (all: every test"
		echo "of qemu/guest/tests.list); cells with byte-identical images share one boot (same image"
		echo "as). Which cells are current for the series and harness now: \`make bisect-verify\`."
		echo
		echo "| # | patch | arch | tests | build | boot | verdict | passed | failed | skipped | xfail | splats | s | same image as | renamed | skips |"
		echo "|---|-------|------|-------|-------|------|---------|--------|--------|---------|-------|--------|---|---|---|---|"
		awk -F'\t' 'NR > 1 { t = $8; if (t != "-") t = gsub(/,/, ",", t) + 1 " tests"
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			$1, $3, $5, t, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20 }' "$tsv"
		echo
		if [ -n "$bad" ]; then
			echo "First bad patch in the file: $(cut -f1 <<< "$bad")/$total $(cut -f2 <<< "$bad")" \
				"($(cut -f3 <<< "$bad"): $(cut -f4 <<< "$bad"))"
		else
			echo "No row records a failure."
		fi
		echo
		if [ -n "${1:-}" ]; then
			echo "$1"
		else
			echo "This run was still going when this file was written; if it ends here, the run"
			echo "was cut short and the rows above are what it had finished."
		fi
	} > "$outdir/.README.md.new" && mv "$outdir/.README.md.new" "$outdir/README.md"
}

# A kept row takes the file name, subject and patch-id of the current series (its tree is
# the same: a patch re-sent with another message or context lines) and says so.
renamed=()
for c in "${!row[@]}"; do
	k=${c#*/}
	r=$(awk -F'\t' -v OFS='\t' -v n="${names[k - 1]}" -v s="${subjects[k - 1]}" -v p="${pids[k - 1]}" \
		'{ if ($2 != n || $3 != s || $4 != p) { $2 = n; $3 = s; $4 = p; $19 = "yes" } print }' <<< "${row[$c]}")
	[ "$r" = "${row[$c]}" ] || renamed+=("$r")
done
[ "${#renamed[@]}" -eq 0 ] || store_rows "${renamed[@]}"

# estimate ARCH KIND: seconds a build or boot of ARCH takes here: the median of the last five
# of history.tsv, else 300 (build) or 360 (boot).
history=$logdir/history.tsv
estimate() {
	local v
	v=$(awk -v a="$1" -v k="$2" '$1 == a && $2 == k { s[n++ % 5] = $3 } END {
		if (n > 5) n = 5
		for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
		if (n) print s[int(n / 2)] }' "$history" 2>/dev/null)
	[ -n "$v" ] || { [ "$2" = build ] && v=300 || v=360; }
	echo "$v"
}

# The cells of this run: every stale one of the arches named (or all with --force), lowest
# patch first; with a budget, those whose estimated build and boot fit, in that order.
declare -A planned=() finished=()
left=
over=
spent=0
for k in $(seq 1 "$total"); do
	for a in $arches; do
		c=$a/$k
		[ -z "${row[$c]:-}" ] || continue
		if [ -n "$budget" ] && [ -z "$over" ]; then
			cost=$(estimate "$a" boot)
			key="$a ${trees[k - 1]:-} ${harness[$a]} $hashed"
			[ "$(cat "$cells/$a-$k/key" 2>/dev/null)" = "$key" ] || cost=$((cost + $(estimate "$a" build)))
			spent=$((spent + cost))
			[ "$spent" -le $((budget * 60)) ] || over=1
		fi
		if [ -n "$over" ]; then
			left="$left$a	$k
"
		else
			planned[$c]=1
		fi
	done
done
echo "bisect: ${#row[@]} cell(s) current and kept, ${#planned[@]} to run${budget:+ within $budget min}"

# Phase 1: build every planned cell.
t_build=$SECONDS
if [ "${#planned[@]}" -gt 0 ]; then
	git am --abort >/dev/null 2>&1
	guard_tree
	git checkout -q -B bisect base || die "cannot check out a bisect branch in $KS_SRC"
fi
broken=
for k in $(seq 1 "$total"); do
	[ "${#planned[@]}" -gt 0 ] || break
	# Past the last planned cell, nothing to apply.
	more=
	for c in "${!planned[@]}"; do [ "${c#*/}" -lt "$k" ] || more=1; done
	[ -n "$more" ] || break
	n=${names[k - 1]}
	if [ -z "$broken" ] && ! git -c user.name=kseries -c user.email=kseries@invalid am --quiet \
			--keep-cr "$pdir/$n" > "$logdir/apply-$k" 2>&1; then
		git am --abort >/dev/null 2>&1
		broken=$k
	elif [ -z "$broken" ] && [ "$(git rev-parse 'HEAD^{tree}')" != "${trees[k - 1]:-}" ]; then
		# git am and series_trees' git apply must agree: the row names the tree it built.
		echo "git am gave tree $(git rev-parse 'HEAD^{tree}'), series_trees ${trees[k - 1]:-none}" \
			>> "$logdir/apply-$k"
		broken=$k
	fi
	for a in $arches; do
		c=$a/$k
		[ -n "${planned[$c]:-}" ] || continue
		# The estimates were a plan: a cell whose build and boot no longer fit is left.
		if [ -n "$budget" ] && [ $((SECONDS - t_run + $(estimate "$a" build) + $(estimate "$a" boot))) -gt $((budget * 60)) ]; then
			unset "planned[$c]"
			left="$left$a	$k
"
			echo "bisect: patch $k/$total on $a: not built, past the budget"
			continue
		fi
		if [ -n "$broken" ]; then
			if [ "$broken" = "$k" ]; then state[$c]="does not apply"; else state[$c]="not applied (patch $broken does not apply)"; fi
			store_rows "$(cell_row "$a" "$k")"
			finished[$c]=1
			continue
		fi
		t0=$SECONDS
		load_arch "$a"
		log=$logdir/$a-$k
		# A cell an interrupted run built (same arch, tree, harness and tests) is not
		# built again: the next build starts from whatever the build directory holds.
		key="$a ${trees[k - 1]} ${harness[$a]} $hashed"
		d=$cells/$a-$k
		if [ "$(cat "$d/key" 2>/dev/null)" = "$key" ] && [ -s "$d/hash" ] &&
				[ -s "$d/image" ] && [ -s "$d/initramfs.cpio.gz" ]; then
			imghash[$c]=$(cat "$d/hash")
			secs[$c]=$(cat "$d/seconds" 2>/dev/null || echo 0)
			state[$c]=built
			echo "bisect: patch $k/$total on $a: built by an earlier run"
			continue
		fi
		rm -rf "${cells:?}/$a-$k"
		if ! "$S/build.sh" "$a" > "$log.build" 2>&1; then
			state[$c]="build failed"
		elif ! "$S/initramfs.sh" "$a" > "$log.initramfs" 2>&1; then
			state[$c]="initramfs failed"
		elif [ "$(harness_hash "$a")$suffix" != "${harness[$a]}" ] || [ "$(with_hashes all)" != "$hashed" ]; then
			# The rows say what the guests packed: the harness and tests as the run began.
			state[$c]="harness or tests changed during the run"
		else
			# The image, the archive's list and every file packed, by name (the
			# archive itself holds the time of packing).
			if mkdir -p "$d" && cp "$KS_BUILD/$IMAGE" "$d/image" &&
				cp "$KS_OUT/initramfs.cpio.gz" "$d/initramfs.cpio.gz" &&
				h=$({ sha256sum "$d/image" | cut -d' ' -f1 &&
					sha256sum "$KS_OUT/initramfs/cpio.list" | cut -d' ' -f1 &&
					awk '$1 == "file" { print $3 }' "$KS_OUT/initramfs/cpio.list" |
						xargs sha256sum; } | sha256sum | cut -c1-64); then
				imghash[$c]=$h
				state[$c]=built
			else
				state[$c]="cannot keep the image"
			fi
		fi
		secs[$c]=$((SECONDS - t0))
		if [ "${state[$c]}" = built ]; then
			echo "$a build ${secs[$c]}" >> "$history"
			echo "${imghash[$c]}" > "$d/hash" && echo "${secs[$c]}" > "$d/seconds" &&
				echo "$key" > "$d/key" || die "cannot write to $d"
		else
			store_rows "$(cell_row "$a" "$k")"
			finished[$c]=1
		fi
		echo "bisect: built patch $k/$total on $a: ${state[$c]} ($((SECONDS - t0)) s)"
	done
done
t_build=$((SECONDS - t_build))

# Phase 2: one boot per arch and distinct image, running the union of its cells' tests.
t_boot=$SECONDS
# The guest's per-test watchdog (qemu/guest/init.c's default), longer with more guests at once.
test_timeout=$((600 * njobs))
declare -A group_tests=() group_first=() group_last=()
for k in $(seq 1 "$total"); do
	for a in $arches; do
		c=$a/$k
		[ "${state[$c]:-}" = built ] || continue
		g=$a/${imghash[$c]}
		if [ -z "${group_first[$g]:-}" ]; then
			group_first[$g]=$k
			group_tests[$g]=${tests[$c]}
		else
			group_tests[$g]=$(union "${group_tests[$g]}" "${tests[$c]}")
			same[$c]=${group_first[$g]}
		fi
		group_last[$g]=$k
	done
done
boot_one() {	# ARCH K TESTS: boot cell ARCH/K's image with TESTS; rc in $log.rc
	local a=$1 k=$2 t=$3 log=$logdir/$1-$2 only='' allow='' rc=0 t0=$SECONDS mode
	load_arch "$a"
	[ "$t" = all ] || only="harness.only=$t"
	# A patch's cell lacks the tests of later patches: skips are allowed, except in a boot
	# that stands for the last patch, which has every test (qemu/xskip*.list then apply).
	mode=$(group_skips "$a/${imghash[$a/$k]}")
	[ "$mode" = judged ] || allow=--allow-skips
	"$S/boot.sh" $allow --kernel "$cells/$a-$k/image" \
		--initrd "$cells/$a-$k/initramfs.cpio.gz" --timeout $((TIMEOUT * njobs)) \
		--append "$only harness.test_timeout=$test_timeout $extra" \
		--log "$log.console" "$a" > "$log.report" 2>&1 || rc=$?
	echo "$rc $((SECONDS - t0))" > "$log.rc"
	echo "$a boot $((SECONDS - t0))" >> "$history"
	echo "bisect: booted patch $k/$total on $a (${t//,/, }): exit $rc ($((SECONDS - t0)) s)"
	# Each boot is recorded for its image, first the line (a failure must never go
	# unrecorded), then its logs under the boot's own id: a later cell (another tree, same
	# bytes) takes the newest boot of the image when it passed.
	local id
	id=$(date -u +%Y%m%d%H%M%S)-$$-$a-$k
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$a" "${imghash[$a/$k]}" "${harness[$a]}" \
		"$(boot_setup "$a")" "$test_timeout" "$mode" "$(pick_hashes "$hashed" "$t")" "$rc" "$id" |
		flock "$logdir/images.tsv" sh -c 'cat >> "$1"' sh "$logdir/images.tsv"
	mkdir -p "$logdir/images" && cp "$log.console" "$logdir/images/$id.console" &&
		cp "$log.report" "$logdir/images/$id.report"
	# A first boot hung before the kernel's first message, which the report names.
	[ ! -f "$log.console.firmware-hang" ] ||
		cp "$log.console.firmware-hang" "$logdir/images/$id.console.firmware-hang"
	# Every cell of this boot, into the matrix at once.
	local rows
	mapfile -t rows < <(group_rows "$a" "$k")
	store_rows "${rows[@]}"
}
# A group whose image (kernel and every file packed) was booted before in this cache is not
# booted again when the newest boot of those bytes on this arch passed under the same
# harness, the same QEMU and arch setup, a per-test watchdog no longer than now, judging
# skips if this group must, with every test this group selects at its current hash: a patch
# that changes another arch's files, or docs, changes the tree but not these bytes. A
# newest boot that failed, ran otherwise, or whose logs are gone, is booted again; so is
# every group with --force.
reused=0
reused_cells=0
declare -A group_ran=() group_boot=()
# boot_setup ARCH: what of the arch's data and the host decides a boot besides the image and
# the harness: the arch's data file and lists and QEMU's version.
boot_setup() {
	load_arch "$1"
	{ cat "$KS_ROOT/qemu/arch/$1.conf" "$KS_ROOT/qemu/xfail.$1.list" "$KS_ROOT/qemu/xskip.$1.list" \
		2>/dev/null; "$QEMU" --version | head -1; } | sha256sum | cut -c1-16
}
: > "$logdir/boots.unsorted"
for g in "${!group_first[@]}"; do
	k=${group_first[$g]}
	a=${g%%/*}
	mode=$(group_skips "$g")
	hit=
	# The newest line of this arch and image, whatever its harness (awk: empty fields kept).
	rec=$(awk -F'\t' -v a="$a" -v h="${g#*/}" '$1 == a && $2 == h && NF == 9 { r = $0 }
		END { print r }' "$logdir/images.tsv" 2>/dev/null)
	if [ -z "$force" ] && [ -n "$rec" ]; then
		# cut, not read: read would merge empty fields.
		ihar=$(cut -f3 <<< "$rec") isetup=$(cut -f4 <<< "$rec") iwd=$(cut -f5 <<< "$rec")
		imode=$(cut -f6 <<< "$rec") iran=$(cut -f7 <<< "$rec") irc=$(cut -f8 <<< "$rec")
		id=$(cut -f9 <<< "$rec")
		[ "$ihar" = "${harness[$a]}" ] && [ "$isetup" = "$(boot_setup "$a")" ] &&
			[ "$iwd" -le "$test_timeout" ] && [ "$irc" = 0 ] &&
			{ [ "$mode" = allowed ] || [ "$imode" = judged ]; } &&
			covers "$iran" "${group_tests[$g]}" "$hashed" > /dev/null &&
			[ -s "$logdir/images/$id.console" ] && [ -s "$logdir/images/$id.report" ] && hit=1
	fi
	if [ -n "$hit" ] && cp "$logdir/images/$id.console" "$logdir/$a-$k.console" &&
			cp "$logdir/images/$id.report" "$logdir/$a-$k.report"; then
		echo "0 0" > "$logdir/$a-$k.rc"
		# The row names what that boot ran, at the hashes it ran them.
		group_ran[$g]=$iran
		group_boot[$g]=$id
		reused=$((reused + 1))
		echo "bisect: patch $k/$total on $a: its image passed an earlier boot; not booted"
		mapfile -t rows < <(group_rows "$a" "$k")
		for c in $(group_cells "$a" "$k"); do finished[$c]=1; done
		reused_cells=$((reused_cells + ${#rows[@]}))
		store_rows "${rows[@]}"
		continue
	fi
	echo "$a $k ${group_tests[$g]}" >> "$logdir/boots.unsorted"
done
sort -k2,2n -k1,1 "$logdir/boots.unsorted" > "$logdir/boots"
nboots=0
boot_failed=
while read -r a k t; do
	while [ "$(jobs -rp | wc -l)" -ge "$njobs" ]; do wait -n || boot_failed=1; done
	if [ -n "$budget" ] && [ $((SECONDS - t_run + $(estimate "$a" boot))) -gt $((budget * 60)) ]; then
		# Out of budget: this boot's cells stay stale, built for the next run.
		for c in $(group_cells "$a" "$k"); do
			left="$left${c%/*}	${c#*/}
"
		done
		echo "bisect: patch $k/$total on $a: not booted, past the budget"
		continue
	fi
	rm -f "$logdir/$a-$k.rc"
	nboots=$((nboots + 1))
	for c in $(group_cells "$a" "$k"); do finished[$c]=1; done
	boot_one "$a" "$k" "$t" &
done < "$logdir/boots"
# Every boot's status: one that could not write its rows fails the run.
for p in $(jobs -p); do wait "$p" || boot_failed=1; done
t_boot=$((SECONDS - t_boot))

# Cells that failed in this run (the matrix may hold failures of cells this run left alone).
bad=
for k in $(seq 1 "$total"); do
	for a in $arches; do
		[ -n "${finished[$a/$k]:-}" ] || continue
		r=$(matrix_row "$tsv" "$k" "$a" 2>/dev/null)
		[ -n "$r" ] && cell_passed "$r" && continue
		bad="$k	${names[k - 1]}	$a	$(cut -f11 <<< "${r:-x	x	x	x	x	x	x	x	x	x	no row}")"
		break 2
	done
done
left=$(printf '%s' "$left" | sort -t "$(printf '\t')" -k2,2n | stale_ranges)
ran=${#finished[@]}
[ -s "$tsv" ] || store_rows
render_readme "Last run: $(((SECONDS - t_run + 30) / 60)) min on $(nproc) CPUs, building $(((t_build + 30) / 60)) min, booting $(((t_boot + 30) / 60)) min with $njobs guest(s) at once: $ran cell(s) finished with $nboots boot(s), $reused_cells of them taking an earlier boot of the same image ($reused image(s)); ${#row[@]} current cell(s) kept${left:+; left for a later run: $left}."

if [ -n "$bad" ]; then
	k=$(cut -f1 <<< "$bad")
	a=$(cut -f3 <<< "$bad")
	echo "first bad patch: $k/$total $(cut -f2 <<< "$bad") ($a: $(cut -f4 <<< "$bad"))"
	src_args=
	[ "$series" = "$KS_ROOT/series" ] || src_args=" --series $(printf '%q' "$series")"
	[ "$pdir" = "$KS_ROOT/patches" ] || src_args="$src_args --patches $(printf '%q' "$pdir")"
	t=${tests[$a/$k]:-all}
	args=$extra
	[ "$t" = all ] || args="harness.only=$t${extra:+ $extra}"
	allow=" --allow-skips"
	[ "$k" -lt "$total" ] || allow=
	echo "reproduce: scripts/apply.sh$src_args --upto $k --branch bisect && scripts/build.sh $a &&" \
		"scripts/initramfs.sh $a && scripts/boot.sh$allow${args:+ --append $(printf '%q' "$args")} $a" \
		"  (logs: $logdir/$a-$k.*)"
fi
echo "bisect: finished $ran cell(s) with $nboots boot(s), $reused_cells of them taking an earlier boot; ${#row[@]} current cell(s) kept"
[ -z "$boot_failed" ] || { echo "bisect: a boot job failed (see above): its cells may lack rows" >&2; exit 1; }
[ -z "$left" ] || echo "bisect: left for a later run: $left"
verify_args=(--tsv "$tsv" --series "$series" --patches "$pdir")
[ -z "$force_tests" ] || verify_args+=(--tests "$force_tests")
[ -n "$suffix" ] || "$S/bisect-verify.sh" "${verify_args[@]}" || true
[ -z "$bad" ]
