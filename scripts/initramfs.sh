#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: initramfs.sh [-h|--help] ARCH

Build the guest initramfs for ARCH from static binaries: qemu/guest/init.c and the test and
benchmark programs qemu/guest/tests/*.c and qemu/guest/bench/*.c and the planted failures
qemu/guest/planted/*.c (tests/planted-test.sh; into /bin) compiled with
the arch's cross compiler (-static), the BPF selftest runners the arch file names in
SELFTESTS (scripts/build-selftests.sh, into /bin; test_progs' BPF objects into /lib/bpf), the lists qemu/guest/*.list into /etc (tests.list runs
by default, others by harness.list=NAME), and the modules the lists name, copied from the
ARCH build (scripts/build.sh) with debug info stripped.
Packed with the kernel's own usr/gen_init_cpio into \$KSERIES_CACHE/out/ARCH/initramfs.cpio.gz;
the build it was packed from (tree and .config) goes to out/ARCH/initramfs.build
(scripts/boot.sh boots it only with that build).

Options:
  -h, --help   show this help"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "${1:-}" in
-h|--help) echo "$usage"; exit 0 ;;
""|-*) echo "$usage" >&2; exit 64 ;;
esac
load_arch "$1"

gen=$KS_BUILD/usr/gen_init_cpio
[ -x "$gen" ] || die "$gen missing: build the kernel first (scripts/build.sh $ARCH_NAME)"
[ -f "$KS_BUILD/$KS_TREE_RECORD" ] ||
	die "the $ARCH_NAME build in $KS_BUILD has no $KS_TREE_RECORD record (its build did not finish): scripts/build.sh $ARCH_NAME"
# Taken before packing: a build that changes during the packing is not recorded as packed.
identity=$(build_identity)
stage=$KS_OUT/initramfs
rm -rf "$stage"
mkdir -p "$stage"

progs=$(guest_programs "$stage") || die "a guest program does not compile for $ARCH_NAME"
list=$stage/cpio.list
{
	echo "dir /dev 0755 0 0"
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/kmsg 0644 0 0 c 1 11"
	# /mnt: test_progs' cgroup helpers mount cgroup2 there.
	for d in /proc /sys /etc /lib /lib/modules /tmp /mnt; do
		echo "dir $d 0755 0 0"
	done
	echo "file /init $stage/init 0755 0 0"
	for l in "$KS_ROOT"/qemu/guest/*.list; do
		echo "file /etc/${l##*/} $l 0644 0 0"
	done
	echo "dir /bin 0755 0 0"
} > "$list"

# Guest test and benchmark programs (list kind "exec"): one static binary per .c file.
for b in $progs; do
	echo "file /bin/$b $stage/$b 0755 0 0" >> "$list"
done

# The BPF selftest runners of the arch (SELFTESTS, built from the tree) and bpftool where the
# arch file asks for it (BPFTOOL), debug info stripped.
runners=$("$KS_ROOT/scripts/build-selftests.sh" "$ARCH_NAME") ||
	die "the BPF selftest runners do not build for $ARCH_NAME"
tool=$("$KS_ROOT/scripts/build-bpftool.sh" "$ARCH_NAME") ||
	die "bpftool does not build for $ARCH_NAME"
# test_progs' BPF objects (NAME.bpf.o) go to /lib/bpf, where the guest runs it: it opens some
# by name; their BTF and debug info stay. The directory only where there are objects.
case "$runners" in
*.bpf.o*) echo "dir /lib/bpf 0755 0 0" >> "$list" ;;
esac
for r in $runners $tool; do
	case "$r" in
	*.bpf.o) echo "file /lib/bpf/${r##*/} $r 0644 0 0" >> "$list" ;;
	*)
		${CROSS}strip --strip-debug -o "$stage/${r##*/}" "$r"
		echo "file /bin/${r##*/} $stage/${r##*/} 0755 0 0" >> "$list"
		;;
	esac
done

# Every module the test list names; one that is not built is left out (the guest then
# reports the test as SKIP), but a module file that exists must be the one from this build.
for m in $(guest_modules); do
	if [ -f "$KS_BUILD/modules.order" ]; then
		# modules.order lists exactly the modules of the current configuration.
		ko=$(grep -E "(^|/)${m//./\\.}\$" "$KS_BUILD/modules.order" | head -1 || true)
	else
		# A build of single-module targets (a distribution's configuration,
		# scripts/build.sh) has no modules.order: its modules are where the tree's
		# Makefiles put those the .config has as =m, the same lookup that chose them.
		ko=$(module_path "$KS_SRC" "$KS_BUILD/.config" "$m")
		[ -z "$ko" ] || [ -f "$KS_BUILD/$ko" ] || ko=
	fi
	if [ -z "$ko" ]; then
		note "$m not built for $ARCH_NAME; the guest will report it as SKIP"
		continue
	fi
	${CROSS}strip --strip-debug -o "$stage/$m" "$KS_BUILD/$ko"
	echo "file /lib/modules/$m $stage/$m 0644 0 0" >> "$list"
done

"$gen" "$list" | gzip -n -1 > "$KS_OUT/initramfs.cpio.gz.tmp"
# The build it was packed from (scripts/boot.sh checks it): the old record goes first, so
# that an interrupted run leaves an archive boot.sh refuses.
rm -f "$KS_OUT/$KS_INITRAMFS_RECORD"
mv "$KS_OUT/initramfs.cpio.gz.tmp" "$KS_OUT/initramfs.cpio.gz"
echo "$identity" > "$KS_OUT/$KS_INITRAMFS_RECORD.tmp"
mv "$KS_OUT/$KS_INITRAMFS_RECORD.tmp" "$KS_OUT/$KS_INITRAMFS_RECORD"
note "wrote $KS_OUT/initramfs.cpio.gz ($(du -k "$KS_OUT/initramfs.cpio.gz" | cut -f1) KiB)"
