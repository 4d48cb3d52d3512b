#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: build-selftests.sh [-h|--help] [--src DIR] ARCH

Build the BPF selftest runners that qemu/arch/ARCH.conf names in SELFTESTS (test_verifier,
test_progs) from the kernel tree with the selftests' own Makefile (tools/testing/selftests/bpf,
which also builds the tree's libbpf, and bpftool and resolve_btfids for the build machine),
statically linked with the arch's cross compiler and Debian's libelf and zlib
(scripts/deps.sh installs them, for arm64 as multiarch packages; riscv64's are cross-built
from Debian's sources by scripts/build-selftest-libs.sh), into
\$KSERIES_CACHE/selftests/BUILD_NAME. test_progs is built from the suites qemu/test_progs.allow
lists and the BPF programs they use (compiled with clang against the vmlinux.h of the ARCH
kernel build, which must exist), linked into that directory's prog_tests/ and progs/; the
Makefile is pointed at them with its own TRUNNER_* variables. make's own dependency tracking
keeps the build incremental: a tree whose tools/ did not change rebuilds nothing (a new
kernel build regenerates vmlinux.h and so recompiles the BPF programs). An arch whose
SELFTESTS is empty builds nothing (the guest then reports the runner as SKIP); the arch file
says why. Prints the path of every runner built, one per line, and after test_progs the
paths of its BPF objects (NAME.bpf.o; it opens some by name from its working directory).

Options:
  --src DIR    kernel source tree (default: the cached base tree, checked out at what
               scripts/apply.sh applied)
  -h, --help   show this help

Environment: JOBS (make -j, default: number of CPUs + 1), KSERIES_CACHE."
set -euo pipefail
. "$(dirname "$0")/lib.sh"

src=$KS_SRC
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--src) src=$2; shift ;;
	-*) echo "$usage" >&2; exit 64 ;;
	*) break ;;
	esac
	shift
done
[ $# -eq 1 ] || { echo "$usage" >&2; exit 64; }
load_arch "$1"
ks_lock
sdir=$src/tools/testing/selftests/bpf
[ -f "$sdir/Makefile" ] || die "no BPF selftests in $src (run scripts/fetch-base.sh)"
if [ -z "$SELFTESTS" ]; then
	note "no BPF selftest runners for $ARCH_NAME (qemu/arch/$ARCH_NAME.conf: SELFTESTS)"
	exit 0
fi

out=$KS_CACHE/selftests/$BUILD_NAME
mkdir -p "$out"
jobs=${JOBS:-$(($(nproc) + 1))}
cc="${CROSS}gcc"
if [ -n "$SELFTEST_SRC_PKGS" ]; then
	# Libraries cross-built from source: their headers and archives come first. CC carries
	# the paths, as the only variable every sub-make (libbpf's too) compiles and links with.
	"$KS_ROOT/scripts/build-selftest-libs.sh" "$ARCH_NAME" >&2
	sysroot=$KS_CACHE/sysroot/$BUILD_NAME
	cc="$cc -isystem $sysroot/include -L$sysroot/lib"
fi
# test_progs_subset DIR: link the allow-listed suites (qemu/test_progs.allow) and the BPF
# programs they use into DIR/prog_tests and DIR/progs, and print the make variables that
# point the Makefile's test_progs runner at them. A suite uses the programs whose skeleton
# (NAME.skel.h, NAME.lskel.h) it includes or whose object (NAME.bpf.o) it opens, and those
# programs' own #include "NAME.c"; btf_data.c is the runner's resolve_btfids input. The
# Makefile's light-skeleton lists are replaced by the subset's: LSKELS for programs used
# only as light skeletons, LSKELS_EXTRA for those used as both kinds.
test_progs_subset() {
	local dir=$1 rel t p names=btf_data todo skels="" lskels="" lonly="" both=""
	rel=$(realpath --relative-to="$sdir" "$dir")
	mkdir -p "$dir/prog_tests" "$dir/progs"
	find "$dir/prog_tests" "$dir/progs" -type l -delete
	ln -s "$sdir"/progs/*.h "$dir/progs/"
	for t in $(sed 's/#.*//' "$KS_ROOT/qemu/test_progs.allow" | sort -u); do
		# +NAME: a suite the series adds, absent from the trees before its patch
		# (the base, the matrix's earlier cells, the fixture series).
		case "$t" in
		+*)
			t=${t#+}
			[ -f "$sdir/prog_tests/$t.c" ] || continue
			;;
		esac
		[ -f "$sdir/prog_tests/$t.c" ] ||
			die "qemu/test_progs.allow: no suite $t (no prog_tests/$t.c in $src)"
		ln -s "$sdir/prog_tests/$t.c" "$dir/prog_tests/"
		names="$names $({ grep -ohE '[A-Za-z0-9_]+\.(skel\.h|bpf\.o)' \
			"$sdir/prog_tests/$t.c" || true; } | sed -E 's/\.[a-z.]+$//' | tr '\n' ' ')"
		skels="$skels $(sed -nE 's/^#include "([A-Za-z0-9_]+)\.skel\.h"/\1/p' \
			"$sdir/prog_tests/$t.c" | tr '\n' ' ')"
		lskels="$lskels $(sed -nE 's/^#include "([A-Za-z0-9_]+)\.lskel\.h"/\1/p' \
			"$sdir/prog_tests/$t.c" | tr '\n' ' ')"
	done
	todo="$names $lskels"
	names=""
	while [ -n "${todo// /}" ]; do
		# shellcheck disable=SC2086 # word splitting of the name list is intended
		set -- $todo
		todo=""
		for p; do
			case " $names " in *" $p "*) continue ;; esac
			[ -f "$sdir/progs/$p.c" ] ||
				die "a test_progs suite uses $p, but there is no progs/$p.c in $src"
			names="$names $p"
			todo="$todo $(sed -nE 's/^#include "([A-Za-z0-9_]+)\.c"$/\1/p' \
				"$sdir/progs/$p.c" | tr '\n' ' ')"
		done
	done
	for p in $names; do
		ln -s "$sdir/progs/$p.c" "$dir/progs/"
	done
	# The Makefile regenerates prog_tests/tests.h (the suite list) when a suite is newer
	# than it, not when one leaves the allow-list: drop it when the list changed.
	find "$dir/prog_tests" -name "*.c" -printf "%f\n" | sort > "$dir/suites.new"
	cmp -s "$dir/suites.new" "$dir/suites" || rm -f "$dir/prog_tests/tests.h"
	mv "$dir/suites.new" "$dir/suites"
	for p in $(tr ' ' '\n' <<< "$lskels" | sort -u); do
		case " $skels " in
		*" $p "*) both="$both $p.c" ;;
		*) lonly="$lonly $p.c" ;;
		esac
	done
	# Command-line variables win over every assignment in the Makefile, so test_maps' rules
	# (never built here) are also defined on the subset: make warns "overriding recipe"
	# for the same, identical recipes (see build.log).
	printf '%s\n' "TRUNNER_TESTS_DIR=$rel/prog_tests" "TRUNNER_BPF_PROGS_DIR=$rel/progs" \
		"LSKELS=${lonly# }" "LSKELS_EXTRA=${both# }" "LINKED_SKELS=" "TRUNNER_EXTRA_FILES="
}

log=$out/build.log
# LDLIBS replaces the Makefile's own list (-lelf -lz -lrt -lpthread) to add -static: the
# initramfs has no shared libraries. EXTRA_CFLAGS or LDFLAGS would reach libbpf's shared
# library link too, which cannot be static.
for r in $SELFTESTS; do
	vars=()
	if [ "$r" = test_progs ]; then
		# Built against the guest kernel's BTF (vmlinux.h). The runner's
		# <prog_tests/tests.h> (the list of suites) must be the subset's, not the full
		# one the Makefile also generates in the tree: CFLAGS has -I$(CURDIR) first, so
		# CC carries a directory holding only prog_tests/, searched before it.
		[ -f "$KS_BUILD/vmlinux" ] || die "$KS_BUILD/vmlinux missing: build the kernel first"
		# Through a file, not a process substitution: its die must stop this script
		# (and no "|| ...": that would turn off errexit inside the function).
		test_progs_subset "$out" > "$out/subset.vars"
		mapfile -t vars < "$out/subset.vars"
		mkdir -p "$out/first"
		ln -sfn ../prog_tests "$out/first/prog_tests"
		vars+=("VMLINUX_BTF=$KS_BUILD/vmlinux" "CC=$cc -I$out/first")
	fi
	# (A CC in vars, later on the command line, replaces this one.)
	if ! make -C "$sdir" -j"$jobs" ARCH="$KARCH" CROSS_COMPILE="$CROSS" CC="$cc" \
			OUTPUT="$out" LDLIBS="-static -lelf -lz -lrt -lpthread" "${vars[@]}" \
			"$out/$r" > "$log" 2>&1; then
		tail -20 "$log" >&2
		die "building $r for $ARCH_NAME failed (make -C $sdir OUTPUT=$out $out/$r; log $log)"
	fi
	! "${CROSS}readelf" -l "$out/$r" | grep -q 'program interpreter' ||
		die "$out/$r is not statically linked"
	echo "$out/$r"
	# test_progs opens some programs' objects from its working directory at run time.
	if [ "$r" = test_progs ]; then
		for p in "$out"/progs/*.c; do
			p=${p##*/}
			echo "$out/${p%.c}.bpf.o"
		done
	fi
done
