#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: build-selftests.sh [-h|--help] [--src DIR] ARCH

Build the BPF selftest runners that qemu/arch/ARCH.conf names in SELFTESTS (test_verifier)
from the kernel tree with the selftests' own Makefile (tools/testing/selftests/bpf, which
also builds the tree's libbpf), statically linked with the arch's cross compiler and
Debian's libelf and zlib (scripts/deps.sh installs them, for arm64 as multiarch packages;
riscv64's are cross-built from Debian's sources by scripts/build-selftest-libs.sh),
into \$KSERIES_CACHE/selftests/BUILD_NAME. make's own dependency tracking keeps the build
incremental: a tree whose tools/ did not change rebuilds nothing. An arch whose SELFTESTS is
empty builds nothing (the guest then reports the runner as SKIP); the arch file says why.
Prints the path of every runner built, one per line.

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
log=$out/build.log
# LDLIBS replaces the Makefile's own list (-lelf -lz -lrt -lpthread) to add -static: the
# initramfs has no shared libraries. EXTRA_CFLAGS or LDFLAGS would reach libbpf's shared
# library link too, which cannot be static.
for r in $SELFTESTS; do
	if ! make -C "$sdir" -j"$jobs" ARCH="$KARCH" CROSS_COMPILE="$CROSS" CC="$cc" \
			OUTPUT="$out" LDLIBS="-static -lelf -lz -lrt -lpthread" "$out/$r" > "$log" 2>&1; then
		tail -20 "$log" >&2
		die "building $r for $ARCH_NAME failed (make -C $sdir OUTPUT=$out $out/$r; log $log)"
	fi
	! "${CROSS}readelf" -l "$out/$r" | grep -q 'program interpreter' ||
		die "$out/$r is not statically linked"
	echo "$out/$r"
done
