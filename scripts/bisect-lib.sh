# SPDX-License-Identifier: GPL-2.0
# The content keys of committed evidence and the per-patch matrix's test selection, shared by
# scripts/bisect.sh, scripts/bisect-verify.sh, scripts/run.sh and scripts/distro-verify.sh;
# sourced after scripts/lib.sh, never run. Not part of the harness
# hash: these decide which cells are valid, not how a guest runs or is judged.

# harness_paths ARCH: the paths whose contents decide how the tests of a matrix cell of ARCH
# (an arch of 'all') run and are judged, one per line: the guest init and the headers of its
# programs, the splat patterns, the expected failures and skips common to all arches and
# ARCH's, ARCH's data file and config fragments (common, its own, the series' options), the pinned sources of the
# selftests' libraries, the scripts that build the test runners and pack the guest, and the
# judge (scripts/report.sh, scripts/raw2ktap.c). For a variant (x86_64-distro, ...): its own
# data file, lists and fragments and the lists of its base arch (report.sh reads both), and no
# common.config where the variant starts from a distribution's configuration (BASE_CONFIG).
# Not the mechanics around them (scripts/lib.sh, build.sh,
# boot.sh: a change there that altered a verdict would fail make check's main jobs first),
# not a single test's own files (its line of qemu/guest/tests.list, its program: test_hash),
# not the benchmarks and planted failures no cell or committed run runs, nor
# qemu/bisect-tests.list, which only picks a cell's share of the tests and is checked on its own.
harness_paths() {
	local a=$1 f
	printf '%s\n' qemu/guest/init.c qemu/guest/*.h qemu/guest/tests/*.h qemu/splat.patterns \
		qemu/xfail.list qemu/xskip.list qemu/config/series.config \
		sources.conf scripts/build-selftests.sh scripts/build-selftest-libs.sh \
		scripts/initramfs.sh scripts/report.sh scripts/raw2ktap.c
	printf '%s\n' "qemu/arch/$a.conf" "qemu/xfail.$a.list" "qemu/xskip.$a.list" \
		"qemu/xfail.${a%%-*}.list" "qemu/xskip.${a%%-*}.list"
	(load_arch "$a" && [ -n "$BASE_CONFIG" ]) || echo qemu/config/common.config
	for f in $(load_arch "$a" && echo "${CONFIG_FRAGMENTS:-$BUILD_NAME}"); do
		echo "qemu/config/$f.config"
	done
}

# harness_hash ARCH: 16 hex digits naming the harness a guest run of ARCH used: every file
# of harness_paths ARCH (tracked or not, as it is in the working tree; ignored files left out) by
# path, mode and git blob id, in C-locale order. A clean checkout of a commit gives the same
# hash as the working tree it was committed from. Dies if git cannot list or hash the files.
harness_hash() {
	local files f mode list paths
	paths=$(cd "$KS_ROOT" && harness_paths "$1" | LC_ALL=C sort -u) || die "cannot list the harness paths"
	# shellcheck disable=SC2086 # paths: one word per line
	files=$(cd "$KS_ROOT" && { command git ls-files -- $paths &&
		command git ls-files --others --exclude-standard -- $paths; }) ||
		die "cannot list the harness files in $KS_ROOT"
	list=$(cd "$KS_ROOT" && while read -r f; do
		[ -f "$f" ] || continue
		if [ -x "$f" ]; then mode=100755; else mode=100644; fi
		printf '%s %s %s\n' "$mode" "$(command git hash-object -- "$f")" "$f" || exit 1
	done <<< "$files" | LC_ALL=C sort) || die "cannot hash the harness files in $KS_ROOT"
	[ -n "$list" ] || die "no harness files in $KS_ROOT"
	printf '%s\n' "$list" | sha256sum | cut -c1-16
}

# test_hash NAME: 8 hex digits naming test NAME of qemu/guest/tests.list as a cell ran it:
# its fields there (spacing aside), the names of the tests listed before it (they run
# first: the W^X and leak scans see what they left), and its own files: the program of an
# exec test (qemu/guest/tests/MODULE.c, which must exist), the suites of test_progs
# (qemu/test_progs.allow, comments aside). Modules, KUnit suites and the selftest runners are
# built from the tree, which the cell's key has. Dies if the list has no such test.
test_hash() {
	local name=$1 list=$KS_ROOT/qemu/guest/tests.list line kind module prog
	line=$(awk -v n="$name" '!/^#/ && $1 == n { $1 = $1; print; exit }' "$list")
	[ -n "$line" ] || die "qemu/guest/tests.list has no test $name"
	read -r _ kind module _ <<< "$line"
	prog=$KS_ROOT/qemu/guest/tests/$module.c
	[ "$kind" != exec ] || [ -f "$prog" ] || die "test $name: no program $prog"
	{
		echo "$line"
		awk -v n="$name" '!/^#/ && NF { if ($1 == n) exit; print $1 }' "$list"
		case $kind in
		exec) cat "$prog" ;;
		test_progs) grep -v -e '^#' -e '^[[:space:]]*$' "$KS_ROOT/qemu/test_progs.allow" ;;
		esac
	} | sha256sum | cut -c1-8
}

# all_tests: every test of qemu/guest/tests.list, comma-separated, in its order.
all_tests() {
	grep -v '^#' "$KS_ROOT/qemu/guest/tests.list" | awk 'NF { printf "%s%s", s, $1; s = "," }'
	echo
}

# with_hashes TESTS: TESTS ('all' or a comma-separated list) as NAME:HASH,... (test_hash),
# what a matrix row records of the tests its cell ran.
with_hashes() {
	local t list=$1 out=
	[ "$list" != all ] || list=$(all_tests)
	for t in ${list//,/ }; do
		out="$out${out:+,}$t:$(test_hash "$t")" || return 1
	done
	echo "$out"
}

# pick_hashes HASHED TESTS: TESTS ('all' or a comma-separated list) as NAME:HASH,... taken
# from HASHED, every test's NAME:HASH as with_hashes all gave it once (hashing a test reads
# its files; callers hash them once per run). A name HASHED lacks gives NAME: with no hash.
pick_hashes() {
	local t out=
	[ "$2" != all ] || { echo "$1"; return; }
	for t in ${2//,/ }; do
		out="$out${out:+,}$(echo "$1" | tr , '\n' | awk -F: -v t="$t" '$1 == t { print; f = 1 }
			END { if (!f) print t ":" }')"
	done
	echo "$out"
}

# covers RAN WANT HASHED: RAN (a row's NAME:HASH,... list) has every test of WANT ('all' or
# a comma-separated list) with its hash in HASHED (with_hashes all, now). Prints the tests
# missing or changed.
covers() {
	local t missing=
	for t in $(pick_hashes "$3" "$2" | tr , ' '); do
		case ",$1," in *",$t,"*) ;; *) missing="$missing ${t%%:*}" ;; esac
	done
	[ -z "$missing" ] || { echo "${missing# }"; return 1; }
}

# run_key ARCH TREE: the content key of a main job's run of ARCH (scripts/run.sh) on the
# kernel tree TREE (a git tree id), as its summary records it ('# Key: ...'): the tree, the
# arch's harness hash, the configuration the build starts from and every test of
# qemu/guest/tests.list at its hash (the job runs them all, or those the arch file's APPEND
# names with harness.only=NAME,...). The configuration: for
# BASE_CONFIG=debian:DEBARCH (make distro) the pinned sha256 of Debian's file (distro.conf),
# which the tree does not hold; otherwise the tree's own (tinyconfig, defconfig) and the
# fragments, which the tree and the harness hash cover.
run_key() {
	local cfg args pin tests only harness
	cfg=$(load_arch "$1" && echo "${BASE_CONFIG:-tinyconfig}") || return 1
	# APPEND, one kernel argument per line.
	# shellcheck disable=SC2086 # APPEND: kernel arguments, split on spaces
	args=$(load_arch "$1" && printf '%s\n' $APPEND)
	! grep -q '^harness\.list=' <<< "$args" ||
		die "qemu/arch/$1.conf: a run with harness.list= in APPEND has no key (another test list)"
	# As the guest init reads its command line: the first harness.only counts.
	only=$(sed -n 's/^harness\.only=//p' <<< "$args" | head -1)
	case $cfg in
	debian:*)
		pin=DISTRO_FILE_SHA256_${cfg#debian:}
		pin=$(. "$KS_ROOT/distro.conf" && echo "${!pin:-}")
		[ -n "$pin" ] || die "distro.conf pins no configuration for $cfg"
		cfg=$cfg:$pin
		;;
	esac
	tests=$(with_hashes "${only:-all}") || return 1
	harness=$(harness_hash "$1") || return 1
	echo "tree $2 harness $harness config $cfg tests $tests"
}

# bisect_header: the first line of results/bisect.tsv (the columns of scripts/bisect.sh).
bisect_header() {
	printf '#patch\tfile\tsubject\tpatch_id\tarch\ttree\tharness\ttests\tbuild\tboot\tverdict\tpassed\tfailed\tskipped\txfail\tsplats\tseconds\tsame_image_as\tkept\tskips\n'
}

# series_trees PDIR NAME...: the git tree id of the base with patches PDIR/NAME... applied
# one after another, one line per patch ("K<TAB>TREE" for the tree after patch K), computed
# in a private index of the base tree (no checkout changes); dies naming the first patch that
# does not apply. The tree after patch K is what a matrix cell of patch K builds.
series_trees() {
	local pdir idx k=0 n
	pdir=$(cd "$1" && pwd) || die "no patch directory $1"
	shift
	idx=$(mktemp)
	GIT_INDEX_FILE=$idx command git -C "$KS_SRC" read-tree base ||
		{ rm -f "$idx"; die "cannot read the base tree of $KS_SRC"; }
	for n in "$@"; do
		k=$((k + 1))
		GIT_INDEX_FILE=$idx command git -C "$KS_SRC" apply --cached "$pdir/$n" ||
			{ rm -f "$idx"; die "patch $k ($n) does not apply to the base and patches 1..$((k - 1))"; }
		printf '%d\t%s\n' "$k" "$(GIT_INDEX_FILE=$idx command git -C "$KS_SRC" write-tree)"
	done
	rm -f "$idx"
}

# patch_paths FILE: the paths a patch file changes (old and new names), one per line, from
# its "diff --git a/OLD b/NEW" lines (read as text: git apply inside a repository would
# leave out paths outside the current directory).
patch_paths() {
	sed -n -E 's|^diff --git a/([^ ]+) b/([^ ]+)$|\1\n\2|p' "$1" | sort -u
}

# bisect_tests K N PATCHFILE KARCH: the guest tests the matrix cell of patch K of N on kernel
# arch KARCH must run, as qemu/bisect-tests.list selects them: "all", or a comma-separated
# list in the order of qemu/guest/tests.list. Paths under another arch's arch/ directory
# select nothing (they are not in this arch's build); a patch with no path, or a path no
# line maps, selects every test. Dies on a test name qemu/guest/tests.list lacks.
bisect_tests() {
	local k=$1 total=$2 patch=$3 karch=$4 list=$KS_ROOT/qemu/bisect-tests.list
	local want=" " path pat tests line kw rest hit name names paths srcarch=$karch
	[ -f "$list" ] || die "no $list: it selects the tests of each cell"
	case $karch in x86_64|i386) srcarch=x86 ;; esac
	[ "$k" -lt "$total" ] || { echo all; return; }
	while read -r kw rest; do
		case $kw in
		smoke) want="$want$rest " ;;
		full-after) case " ${rest//[[:space:]]/ } " in *" $k "*) echo all; return ;; esac ;;
		esac
	done < <(grep -v '^#' "$list")
	paths=$(patch_paths "$patch")
	[ -n "$paths" ] || { echo all; return; }
	while read -r path; do
		case $path in arch/"$srcarch"/*) ;; arch/*/*) continue ;; esac
		hit=
		while read -r pat tests; do
			case $pat in smoke|full-after) continue ;; esac
			# shellcheck disable=SC2053 # pat is a pattern
			if [[ $path == $pat ]]; then
				hit=1
				want="$want$tests "
			fi
		done < <(grep -v '^#' "$list" | awk 'NF')
		[ -n "$hit" ] || { echo all; return; }
	done <<< "$paths"
	names=" $(all_tests | tr , ' ') "
	for name in $want; do
		case "$names" in *" $name "*) ;; *) die "$list names $name, which qemu/guest/tests.list does not have" ;; esac
	done
	line=
	for name in $names; do
		case "$want" in *" $name "*) line="$line${line:+,}$name" ;; esac
	done
	echo "$line"
}

# matrix_row FILE K ARCH: the row of patch K on ARCH in FILE (rows of results/bisect.tsv's
# layout, its header or none), the first if there are more; nothing if FILE has none.
matrix_row() {
	awk -F'\t' -v k="$2" -v a="$3" '!/^#/ && $1 == k && $5 == a { print; exit }' "$1"
}

# cell_tests K N PATCHFILE ARCH [FORCED]: the tests the cell of patch K of N on ARCH (an arch
# name) runs: FORCED when given (bisect.sh --tests), else what bisect_tests selects.
cell_tests() {
	if [ -n "${5:-}" ]; then
		echo "$5"
	else
		bisect_tests "$1" "$2" "$3" "$(load_arch "$4" && echo "$KARCH")"
	fi
}

# cell_key_matches ROW TREE HARNESS TESTS HASHED K N: ROW (a line of results/bisect.tsv) is
# the current evidence of its cell, patch K of N: it was built from TREE (the tree after its
# patch now), ran under HARNESS (harness_hash of its arch now), ran every test of TESTS (what
# the cell selects now: cell_tests) at its hash in HASHED (with_hashes all, now), and, for
# the series' last patch, judged unexpected skips; a cell that did not build or boot needs
# only the tree and harness. Whether it passed is
# another question (cell_passed): a current cell that failed is a failure of the series.
cell_key_matches() {
	local row=$1 fields
	IFS=$'\t' read -r -a fields <<< "$row"
	[ "${#fields[@]}" -eq 20 ] && [ "${fields[5]}" = "$2" ] && [ "${fields[6]}" = "$3" ] || return 1
	# A cell that did not build or boot ran no test: its tree and harness are its whole key
	# (a current build failure must fail make check).
	[ "${fields[8]}" = yes ] && [ "${fields[9]}" = yes ] || return 0
	[ "$6" -lt "$7" ] || [ "${fields[19]}" = judged ] || return 1
	covers "${fields[7]}" "$4" "$5" > /dev/null
}

# cell_passed ROW: ROW records a cell that built, booted, exited 0 with no failed case.
cell_passed() {
	[ "$(cut -f9-11,13 <<< "$1" | tr '\t' ' ')" = "yes yes 0 0" ]
}

# bisect_row_problems FILE: the rows of FILE (a results/bisect.tsv of bisect_header's layout)
# bisect.sh does not write, as "  line N: WHY" lines; nothing if every row is well-formed.
bisect_row_problems() {
	awk -F'\t' -v arches=" $(expand_arches all | tr '\n' ' ')" 'NR > 1 {
		why = ""
		if (/\r/) why = "carriage return"
		else if (NF != 20) why = NF " fields, not 20"
		else if (/^\t|\t\t|\t$/) why = "an empty field"
		else if ($1 !~ /^[1-9][0-9]*$/) why = "patch number " $1
		else if (index(arches, " " $5 " ") == 0) why = "arch " $5 " is not one of:" arches
		else if ($9 !~ /^(yes|no)$/ || $10 !~ /^(yes|no)$/) why = "build/boot " $9 "/" $10
		else if ($11 == "") why = "empty verdict"
		else if ($12 $13 $14 $15 $16 $17 !~ /^[0-9]+$/) why = "counts " $12 " " $13 " " $14 " " $15 " " $16 " " $17
		else if ($19 !~ /^(yes|no)$/ || $20 !~ /^(judged|allowed|-)$/) why = "kept/skips " $19 "/" $20
		else if (seen[$1 "/" $5]++) why = "patch " $1 " on " $5 " twice"
		else if ($8 != "-") {
			n = split($8, t, ",")
			delete names
			for (i = 1; i <= n; i++) {
				# (mawk has no {8})
				if (t[i] !~ /^[a-z0-9_]+:[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$/) {
					why = "test field " t[i]
					break
				}
				split(t[i], nh, ":")
				if (names[nh[1]]++) { why = "test " nh[1] " twice"; break }
			}
		}
		if (why != "") print "  line " NR ": " why
	}' "$1"
}

# stale_ranges: "ARCH<TAB>K" lines on stdin (in arch order, K ascending) as one phrase,
# "patches 11-20 on x86_64, riscv64, arm64; patch 3 on x86_64": each arch's patch numbers as
# ranges, arches with the same ranges together.
stale_ranges() {
	awk -F'\t' '
	{ if (!($1 in ks)) order[++na] = $1; ks[$1] = ks[$1] " " $2 }
	END {
		for (i = 1; i <= na; i++) {
			a = order[i]; m = split(ks[a], k, " "); r = ""; j = 1; many = 0
			while (j <= m) {
				e = j
				while (e < m && k[e + 1] == k[e] + 1) e++
				r = r (r == "" ? "" : ",") (e > j ? k[j] "-" k[e] : k[j])
				many = many || e > j || r ~ /,/
				j = e + 1
			}
			if (!(r in on)) { ranges[++nr] = r; plural[r] = many }
			on[r] = on[r] (on[r] == "" ? "" : ", ") a
		}
		for (i = 1; i <= nr; i++)
			printf "%s%s %s on %s", (i > 1 ? "; " : ""), (plural[ranges[i]] ? "patches" : "patch"),
				ranges[i], on[ranges[i]]
	}'
}
