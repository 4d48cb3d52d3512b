#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: build-bpftool.sh [-h|--help] [--src DIR] ARCH

Build bpftool from the kernel tree (tools/bpf/bpftool, with the tree's own libbpf) for the
guest of ARCH, statically linked with the arch's compiler and Debian's libelf and zlib, into
\$KSERIES_CACHE/bpftool/BUILD_NAME, and print its path; scripts/initramfs.sh puts it in
/bin. Only for an arch whose qemu/arch/ARCH.conf sets BPFTOOL (the guest tests that run it:
bpf_batch shows a batch link with it); for any other it builds and prints nothing. make's
dependency tracking keeps the build incremental.

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
[ -n "$BPFTOOL" ] || exit 0
ks_lock
[ -f "$src/tools/bpf/bpftool/Makefile" ] || die "no bpftool in $src (run scripts/fetch-base.sh)"

out=$KS_CACHE/bpftool/$BUILD_NAME
mkdir -p "$out"
log=$out/build.log
# EXTRA_LDFLAGS reaches only bpftool's own link (its libbpf is a static archive already).
# Features found on the build machine (libbfd, libcap) would need their static archives
# too: switched off, bpftool then has no disassembler, which no guest test needs.
if ! make -C "$src/tools/bpf/bpftool" -j"${JOBS:-$(($(nproc) + 1))}" ARCH="$KARCH" \
		CROSS_COMPILE="$CROSS" OUTPUT="$out/" EXTRA_LDFLAGS=-static \
		feature-libbfd=0 feature-libcap=0 > "$log" 2>&1; then
	tail -20 "$log" >&2
	die "building bpftool for $ARCH_NAME failed (make -C $src/tools/bpf/bpftool OUTPUT=$out/; log $log)"
fi
! "${CROSS}readelf" -l "$out/bpftool" | grep -q 'program interpreter' ||
	die "$out/bpftool is not statically linked"
echo "$out/bpftool"
