# SPDX-License-Identifier: GPL-2.0
# Common definitions for the harness scripts; sourced, never run.
#
# Paths (override with environment variables):
#   KSERIES_CACHE  cache directory for the base, builds and ccache
#                  (default: ${XDG_CACHE_HOME:-$HOME/.cache}/kseries)

KS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$KS_ROOT/base.conf"

KS_CACHE=${KSERIES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kseries}
KS_SRC=$KS_CACHE/linux-$BASE_DEB_VERSION      # git tree: tag "base", branch "series" and scratch branches
KS_DL=$KS_CACHE/dl
export CCACHE_DIR=${CCACHE_DIR:-$KS_CACHE/ccache}

# Fixed identity and date of the base commit (see base.conf: BASE_COMMIT).
KS_BASE_IDENT_NAME="kseries base"
KS_BASE_IDENT_EMAIL="base@kseries.invalid"
KS_BASE_DATE="2026-11-26T17:12:00+0000"

# die MESSAGE: print it as an error and exit with KS_DIE_CODE (default 1; the scripts whose
# exit codes say 5 for a harness error set it to 5).
die() {
	echo "${0##*/}: error: $*" >&2
	exit "${KS_DIE_CODE:-1}"
}

note() {
	echo "${0##*/}: $*" >&2
}

# arch_names: the valid ARCH names, one per line (one data file each in qemu/arch/).
arch_names() {
	local f
	for f in "$KS_ROOT"/qemu/arch/*.conf; do
		f=${f##*/}
		echo "${f%.conf}"
	done
}

# load_arch NAME: read qemu/arch/NAME.conf into the environment, or exit 64 naming the
# valid names.
load_arch() {
	local name=$1
	if [ -z "$name" ] || [ ! -f "$KS_ROOT/qemu/arch/$name.conf" ]; then
		echo "${0##*/}: error: unknown ARCH '$name'; valid names: $(arch_names | tr '\n' ' ')all" >&2
		exit 64
	fi
	ARCH_NAME=$name
	CONFIG_FRAGMENTS=	# optional key: reset, as the files are sourced one after another
	SELFTESTS=
	SELFTEST_SRC_PKGS=
	DEBUG_FRAGMENTS=
	DEBUG_MEM=
	DEBUG_SMP=
	LLVM=
	BOOT_LINES=
	BASE_CONFIG=
	MAKE_EXTRA=
	BPFTOOL=
	COUNT_FUNCTIONS=
	EARLYCON=
	FIRMWARE_LAST_LINE=
	. "$KS_ROOT/qemu/arch/$name.conf"
	# make debug's guests (KASAN's shadow, kmemleak, lockdep) may need more memory, and
	# fewer vCPUs than the host has cores (see DEBUG_SMP in qemu/arch/x86_64.conf).
	if [ -n "${KSERIES_DEBUG:-}" ]; then
		MEM=${DEBUG_MEM:-$MEM}
		SMP=${DEBUG_SMP:-$SMP}
	fi
	# A debug build (KSERIES_DEBUG set: qemu/config/debug.config) has its own build and
	# output directories, so that it never dirties the plain incremental build.
	KS_BUILD=$KS_CACHE/build/$BUILD_NAME${KSERIES_DEBUG:+-debug}
	KS_OUT=$KS_CACHE/out/$ARCH_NAME${KSERIES_DEBUG:+-debug}
}

# console_ends_in_firmware LOG: the console's last line is the firmware's last one
# (FIRMWARE_LAST_LINE of the arch file loaded by load_arch): the kernel did not print its
# banner on its early console (EARLYCON), so it hung, if it started at all, before any code
# the series changes (qemu/arch/x86_64.conf). False for an arch file without the key.
console_ends_in_firmware() {
	[ -n "$FIRMWARE_LAST_LINE" ] || return 1
	grep -a -v -e '^qemu-system-[a-z0-9_]*: terminating on signal' "$1" | tr -d '\r' |
		grep -a -v '^[[:space:]]*$' | tail -1 | grep -a -q -E -- "$FIRMWARE_LAST_LINE"
}

# expand_arches LIST: "all" or a space/comma separated list -> validated names.
expand_arches() {
	local a
	for a in $(echo "$*" | tr ',' ' '); do
		if [ "$a" = all ]; then
			# Every arch without a variant suffix, the default (x86_64) first.
			arch_names | grep -v -- '-' | sort -r || true
			continue
		fi
		(load_arch "$a") || exit 64
		echo "$a"
	done
}

# base_worktree DIR: make DIR a git worktree of the base tree, detached at base, unless it is
# one already; for steps that git am the series without touching the base tree's checkout.
base_worktree() {
	[ ! -e "$1/.git" ] || return 0
	command git -C "$KS_SRC" worktree prune
	command git -C "$KS_SRC" worktree add -q --detach "$1" base
}

# am_series DIR BRANCH: in the base worktree DIR (made by base_worktree if need be), point
# BRANCH at base and git am every patch of series onto it; dies, with the am aborted, if one
# does not apply. The committer identity comes from the caller's environment.
am_series() {
	local wt=$1 branch=$2 names
	base_worktree "$wt"
	mapfile -t names < <(series_names "$KS_ROOT/series")
	command git -C "$wt" am --abort >/dev/null 2>&1 || true
	command git -C "$wt" checkout -q -f -B "$branch" base
	command git -C "$wt" am -q "${names[@]/#/$KS_ROOT/patches/}" ||
		{ command git -C "$wt" am --abort || true; die "git am of patches/ failed in $wt"; }
}

# src_tree DIR: the git tree id of the kernel tree DIR as it is now: its checkout with every
# uncommitted change and untracked file (ignored files left out), written through a copy of
# its index, so that neither the index nor the checkout changes. A clean checkout gives
# HEAD^{tree}. Dies if git cannot write the tree.
src_tree() {
	local d tree
	d=$(mktemp -d) || die "cannot make a temporary directory"
	cp "$(command git -C "$1" rev-parse --path-format=absolute --git-path index)" "$d/index" \
		2>/dev/null || true
	tree=$(export GIT_INDEX_FILE=$d/index; command git -C "$1" add -A . &&
		command git -C "$1" write-tree) || { rm -rf "$d"; die "cannot write the tree of $1"; }
	rm -rf "$d"
	echo "$tree"
}

# KS_TREE_RECORD: the file of a build directory that names the source tree (src_tree) its
# kernel and modules were built from; scripts/build.sh writes it after a build that
# finished, scripts/boot.sh compares it with the tree the caller asks for.
KS_TREE_RECORD=source-tree

# KS_INITRAMFS_RECORD: the file of an out directory that says which build (build_identity)
# scripts/initramfs.sh packed its initramfs from; scripts/boot.sh compares it with the build.
KS_INITRAMFS_RECORD=initramfs.build

# build_identity: print what identifies the current build of the loaded arch (load_arch):
# "tree TREE config SHA256" (its source tree's record and its .config's SHA-256; "none"
# for either that is missing). A rebuild that changes neither gives the same modules.
build_identity() {
	local tree config
	tree=$(cat "$KS_BUILD/$KS_TREE_RECORD" 2>/dev/null) || tree=none
	config=$(sha256sum < "$KS_BUILD/.config" 2>/dev/null | cut -c1-64) || config=none
	echo "tree ${tree:-none} config ${config:-none}"
}

# splat_patterns: the console patterns of qemu/splat.patterns (extended regular
# expressions, comments dropped), for grep -E -f.
splat_patterns() {
	grep -v '^#' "$KS_ROOT/qemu/splat.patterns"
}

# series_names FILE: the patch file names of a quilt series file, one per line, in order
# (comments, blank lines and quilt's per-patch options such as -p1 dropped).
series_names() {
	sed -e 's/#.*//' "$1" | awk 'NF { print $1 }'
}

# applied_key PDIR NAME...: what scripts/apply.sh records in $KS_CACHE/applied.BRANCH for
# the patches PDIR/NAME... applied on the base: a hash of the base commit and the patches'
# contents. scripts/export.sh records it too, for the branch it exported, whose commits
# then are what applying the exported patches makes.
applied_key() {
	local pdir=$1 n
	shift
	{
		command git -C "$KS_SRC" rev-parse base
		for n in "$@"; do sha256sum < "$pdir/$n"; done
	} | sha256sum | cut -d' ' -f1
}

# patch_subject FILE: the patch mail's subject as git am takes it (folded lines joined, the
# [PATCH k/N] tag dropped), by git mailinfo.
patch_subject() {
	command git mailinfo /dev/null /dev/null < "$1" | sed -n 's/^Subject: //p'
}

# ks_lock: take the cache lock for the rest of this script and its children, so that two
# harness runs never switch the shared source tree or build into one build directory at
# once. A child of a holder (KS_LOCKED set) does not lock again.
ks_lock() {
	[ -z "${KS_LOCKED:-}" ] || return 0
	mkdir -p "$KS_CACHE"
	exec 9> "$KS_CACHE/lock"
	flock -n 9 || die "another harness run holds $KS_CACHE/lock; wait for it to finish"
	export KS_LOCKED=$$
}

# guard_tree: refuse to switch branches in the base tree while it holds uncommitted changes
# or untracked files (a developer's work in progress).
guard_tree() {
	local dirty
	dirty=$(command git -C "$KS_SRC" status --porcelain | head -5)
	[ -z "$dirty" ] || die "uncommitted changes or untracked files in $KS_SRC:
$dirty
commit them on a branch (and export it with scripts/export.sh) or remove them first"
}


# KS_AWK_MEDIAN: an awk function median(LIST), the median of the numbers of the
# space-separated string LIST, for the benchmarks' tables; put before an awk program
# (mawk, Debian's awk, has no sort function).
KS_AWK_MEDIAN='
	function median(list,    a, n, i, j, x) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++) {
			x = a[i] + 0
			for (j = i - 1; j >= 1 && a[j] + 0 > x; j--)
				a[j + 1] = a[j]
			a[j + 1] = x
		}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}'

# bench_options USAGE ARGS...: the options every benchmark script takes: -h/--help (print
# USAGE, exit 0) and --out DIR (sets $out; default results/ of the repo). The words after
# the options go to the array bench_words; another option prints USAGE and exits 64.
bench_options() {
	local usage=$1
	shift
	KS_DIE_CODE=5	# "5 a build, boot or benchmark failed", as every benchmark's usage says
	out=$KS_ROOT/results
	while [ $# -gt 0 ]; do
		case "$1" in
		-h|--help) echo "$usage"; exit 0 ;;
		--out) [ $# -ge 2 ] || { echo "$usage" >&2; exit 64; }; out=$2; shift ;;
		-*) echo "$usage" >&2; exit 64 ;;
		*) break ;;
		esac
		shift
	done
	bench_words=("$@")
}

# kcc: the kernel compiler of the loaded arch: clang where its file sets LLVM (the kernel's
# LLVM=1 toolchain, for the sanitizers only clang has), else its cross gcc.
kcc() {
	if [ -n "${LLVM:-}" ]; then echo clang; else echo "${CROSS}gcc"; fi
}

# kmake SRC MAKE-ARGS...: make in the kernel tree SRC for the loaded arch (load_arch), with
# its compiler (kcc) through ccache.
kmake() {
	local src=$1 hostcc=gcc

	shift
	[ -z "${LLVM:-}" ] || hostcc=clang
	# shellcheck disable=SC2086 # MAKE_EXTRA: make variables, split on spaces
	make -C "$src" ARCH="$KARCH" CROSS_COMPILE="$CROSS" ${LLVM:+LLVM=1} CC="ccache $(kcc)" \
		HOSTCC="ccache $hostcc" ${MAKE_EXTRA:-} "$@"
}

# apt_download PKG=VERSION DEB: download that .deb with apt-get to the path DEB (notes on
# stderr). apt downloads as its _apt user, which cannot write into root's cache: the download
# goes to a temporary directory that user owns, then moves. 0, or 1 if apt-get failed.
apt_download() {
	local want=$1 deb=$2 tmp
	tmp=$(mktemp -d)
	chmod 755 "$tmp"
	if [ "$(id -u)" -eq 0 ] && id -u _apt >/dev/null 2>&1; then
		chown _apt "$tmp"
	fi
	if ! (cd "$tmp" && apt-get download -q "$want") >&2; then
		rm -rf "$tmp"
		return 1
	fi
	mv "$tmp"/*.deb "$deb.part"
	rm -rf "$tmp"
	mv "$deb.part" "$deb"
}

# guest_modules: the module files (NAME.ko) the guest's lists (qemu/guest/*.list) load.
guest_modules() {
	grep -hv '^#' "$KS_ROOT"/qemu/guest/*.list | awk 'NF >= 3 && $3 ~ /\.ko$/ { print $3 }' |
		sort -u
}

# module_path SRC DOTCONFIG NAME.ko: the module's path in the tree SRC (DIR/NAME.ko, where
# DIR/Makefile has "obj-$(CONFIG_X) += NAME.o") if DOTCONFIG has CONFIG_X=m; else nothing.
module_path() {
	local src=$1 cfg=$2 m=$3 hit
	hit=$(grep -rsE --include=Makefile "^obj-[$][(]CONFIG_[A-Za-z0-9_]+[)][[:space:]]*[+]=[[:space:]]*${m%.ko}[.]o([[:space:]]|$)" "$src" |
		head -1) || true
	[ -n "$hit" ] || return 0
	local sym=${hit#*obj-\$(} dir=${hit%%/Makefile:*}
	sym=${sym%%)*}
	grep -qx "$sym=m" "$cfg" && echo "${dir#"$src"/}/$m"
	return 0
}

# config_requests FRAGMENT...: one line "CONFIG_X<TAB>fragment name<TAB>request" for every
# option the kconfig fragments set ("CONFIG_X=...") or unset ("# CONFIG_X is not set"), the
# last fragment that names an option winning, as in merge_config.sh.
config_requests() {
	local f
	for f in "$@"; do
		sed -n -e "s|^\(CONFIG_[A-Za-z0-9_]*\)=.*|\1\t${f##*/}\t&|p" \
			-e "s|^# \(CONFIG_[A-Za-z0-9_]*\) is not set|\1\t${f##*/}\t&|p" "$f"
	done | awk -F'\t' '{ last[$1] = $0; if (!seen[$1]++) order[n++] = $1 }
		END { for (i = 0; i < n; i++) print last[order[i]] }'
}

# config_missing DOTCONFIG: reads config_requests lines on stdin and prints, one per line,
# each request the .config file DOTCONFIG does not hold, with where it came from and what
# DOTCONFIG has instead. Prints nothing when all hold.
config_missing() {
	local cfg=$1 f line opt
	while IFS=$'\t' read -r _ f line; do
		case "$line" in
		CONFIG_*=*)
			grep -qxF -- "$line" "$cfg" ||
				echo "  $line (from $f; have: $(grep -E "^(# )?${line%%=*}[= ]" "$cfg" ||
					echo unset))"
			;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }; opt=${opt%% *}
			! grep -q "^$opt=" "$cfg" ||
				echo "  $line (from $f; have: $(grep "^$opt=" "$cfg"))"
			;;
		esac
	done
}

# bench_prepare: what every benchmark does before its first build: take the build lock,
# install the packages, fetch the base, make a scratch directory $tmp (removed on exit)
# and count the patches of the series into $npatches.
bench_prepare() {
	ks_lock
	"$KS_ROOT/scripts/deps.sh" >/dev/null
	"$KS_ROOT/scripts/fetch-base.sh" >/dev/null
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	npatches=$(series_names "$KS_ROOT/series" | wc -l)
}

# kernel_boot ARCH KERNEL APPEND LOG [APPLY-ARGS...]: apply the series onto branch
# bench-KERNEL (scripts/apply.sh APPLY-ARGS, e.g. --upto 0 for the base), build ARCH, build
# its initramfs and boot it with the kernel arguments APPEND, the console going to LOG;
# returns scripts/boot.sh's exit code (its summary on stdout), or 5 after showing the failing
# step's output on stderr if the apply, build or initramfs step fails. The base lacks the
# series' tests: its skips are allowed (scripts/report.sh --allow-skips).
kernel_boot() {
	local a=$1 kernel=$2 append=$3 log=$4 S=$KS_ROOT/scripts out rc=0
	shift 4
	out=$(mktemp)
	load_arch "$a"
	mkdir -p "$(dirname "$log")"
	note "$a $kernel: apply, build, boot ($append)"
	if ! "$S/apply.sh" --branch "bench-$kernel" "$@" > "$out" 2>&1; then
		cat "$out" >&2
		note "apply failed ($a $kernel)"
		rc=5
	elif ! "$S/build.sh" "$a" > "$KS_CACHE/build-$a.log" 2>&1; then
		tail -20 "$KS_CACHE/build-$a.log" >&2
		note "build failed ($a $kernel; log $KS_CACHE/build-$a.log)"
		rc=5
	elif ! "$S/initramfs.sh" "$a" > "$out" 2>&1; then
		tail -20 "$out" >&2
		note "initramfs failed ($a $kernel)"
		rc=5
	fi
	rm -f "$out"
	local skips=()
	[ "$kernel" != base ] || skips=(--allow-skips)
	# KS_BOOT_TIMEOUT: a benchmark longer than the arch's test boot (scripts/bench-batch.sh).
	[ $rc -ne 0 ] || "$S/boot.sh" "${skips[@]}" ${KS_BOOT_TIMEOUT:+--timeout "$KS_BOOT_TIMEOUT"} \
		--append "$append" --log "$log" "$a" || rc=$?
	return $rc
}

# bench_boot ARCH KERNEL NAME LOG [APPLY-ARGS...]: kernel_boot with harness.list=bench
# harness.only=NAME (the benchmark NAME of qemu/guest/bench.list), and the kernel arguments
# of BENCH_APPEND if set. Dies, showing the boot's summary (a failed step's output is on
# stderr already), if the boot does not pass.
bench_boot() {
	local a=$1 kernel=$2 name=$3 log=$4 out
	shift 4
	out=$(mktemp)
	# harness.test_timeout=0: a benchmark's length is its own (no per-test watchdog).
	kernel_boot "$a" "$kernel" \
		"harness.list=bench harness.only=$name harness.test_timeout=0${BENCH_APPEND:+ $BENCH_APPEND}" \
		"$log" "$@" > "$out" ||
		{ tail -20 "$out"; rm -f "$out"; die "benchmark boot failed ($a $kernel; log $log)"; }
	rm -f "$out"
}

# guest_programs DIR: compile the guest's PID 1 (qemu/guest/init.c -> DIR/init) and every
# test and benchmark program (qemu/guest/tests/*.c, qemu/guest/bench/*.c -> DIR/NAME)
# statically with the loaded arch's compiler (load_arch), warnings as errors. Prints the
# program names, one per line; returns 1 (compiler messages on stderr) if one fails.
guest_programs() {
	local dir=$1 c b
	"${CROSS}gcc" -static -O2 -Wall -Wextra -Werror -o "$dir/init" "$KS_ROOT/qemu/guest/init.c" ||
		return 1
	for c in "$KS_ROOT"/qemu/guest/tests/*.c "$KS_ROOT"/qemu/guest/bench/*.c \
		"$KS_ROOT"/qemu/guest/planted/*.c; do
		[ -e "$c" ] || continue
		b=$(basename "$c" .c)
		"${CROSS}gcc" -static -O2 -Wall -Wextra -Werror -o "$dir/$b" "$c" || return 1
		echo "$b"
	done
}

# host_tool NAME: the path of the host program scripts/NAME.c, compiled (warnings as errors)
# into $KS_CACHE/host/NAME-HASH the first time its source (HASH: its sha256) is used, so that
# every run of a source uses one binary and an edit compiles again. Dies if it does not compile.
host_tool() {
	local src=$KS_ROOT/scripts/$1.c bin hash
	hash=$(sha256sum "$src" | cut -c1-16) || die "cannot read $src"
	bin=$KS_CACHE/host/$1-$hash
	if [ ! -x "$bin" ]; then
		mkdir -p "$KS_CACHE/host"
		gcc -O2 -Wall -Wextra -Werror -o "$bin.$$" "$src" || { rm -f "$bin.$$"; die "$src does not compile"; }
		mv -f "$bin.$$" "$bin"
	fi
	echo "$bin"
}

# console_ktap LOG: the guest console LOG with its tests' raw output turned into KTAP
# (scripts/raw2ktap.c), for the scripts that read a test's diagnostic lines from it.
console_ktap() {
	"$(host_tool raw2ktap)" "$1"
}
