#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: boot.sh [-h|--help] [--append ARGS] [--timeout SECONDS] [--log FILE] [--allow-skips]
               [--tree TREE | --kernel FILE --initrd FILE] ARCH

Boot the ARCH kernel (scripts/build.sh) with the guest initramfs (scripts/initramfs.sh) under
QEMU TCG, as qemu/arch/ARCH.conf describes it (-no-reboot, panic=-1, SMP CPUs), keep the
console log, and judge it with scripts/report.sh. A boot whose console still ends with the
firmware's last line 120 s in (FIRMWARE_LAST_LINE of the arch file: the kernel printed
nothing, not even its banner on the early console) is stopped and booted once more, so a
run may take up to 130 s more than --timeout; the first console is kept as
LOG.firmware-hang and the summary names it. Exit codes:
  0  all tests passed            3  wall-clock timeout
  1  a test failed               4  no KTAP at all (boot failure)
  2  kernel panic, oops, BUG, WARN, KASAN, lockdep, RCU stall or hung-task splat, or QEMU
     stopped by the guest (a TCG fatal error)
  5  harness or build error (here: QEMU failed to start the guest, the build is not of
     the tree asked for, or the initramfs was packed from another build)
 64  usage error (for example an unknown ARCH; the message lists the valid names)

Options:
  --append ARGS      extra kernel command-line arguments, e.g. MODULE.PARAM=VALUE for a test
                     module or harness.only=NAME (see qemu/guest/init.c)
  --timeout SECONDS  wall-clock limit (default: TIMEOUT from qemu/arch/ARCH.conf)
  --log FILE         console log (default: \$KSERIES_CACHE/out/ARCH/console.log)
  --allow-skips      a skip no qemu/xskip*.list names does not fail the run (scripts/report.sh)
  --tree TREE        the git tree id the ARCH build must have been made from (default: the
                     sources in \$KSERIES_CACHE as they are now, uncommitted changes included);
                     a build of another tree, or one that records none, is not booted (exit 5,
                     naming both trees and the command that rebuilds)
  --kernel FILE      boot this kernel image instead of the ARCH build's (scripts/bisect.sh
                     boots the images it kept of each cell)
  --initrd FILE      and this initramfs instead of the ARCH one (given with --kernel)
  -v, --verbose      also copy the console to standard error as it comes (make V=1; the
                     environment variable V=1 does the same)
  -h, --help         show this help
Environment: KSERIES_FIRMWARE_WAIT=SECONDS instead of the 120 s (the harness tests)."
set -euo pipefail
. "$(dirname "$0")/lib.sh"
KS_DIE_CODE=5	# a harness error, as the exit codes above say

extra=
timeout=
log=
allow_skips=
kernel=
initrd=
want_tree=
verbose=${V:-0}
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--append) extra=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--log) log=$2; shift ;;
	--allow-skips) allow_skips=--allow-skips ;;
	--tree) want_tree=$2; shift ;;
	--kernel) kernel=$2; shift ;;
	--initrd) initrd=$2; shift ;;
	-v|--verbose) verbose=1 ;;
	-*) echo "$usage" >&2; exit 64 ;;
	*) break ;;
	esac
	shift
done
[ $# -eq 1 ] || { echo "$usage" >&2; exit 64; }
[ -z "$kernel$initrd" ] || { [ -n "$kernel" ] && [ -n "$initrd" ]; } || { echo "boot.sh: --kernel and --initrd go together" >&2; exit 64; }
[ -z "$kernel" ] || [ -z "$want_tree" ] || { echo "boot.sh: --tree is for the ARCH build, not --kernel" >&2; exit 64; }
load_arch "$1"
timeout=${timeout:-$TIMEOUT}
log=${log:-$KS_OUT/console.log}
if [ -z "$kernel" ]; then
	# The build and its modules must be of the sources asked for: a build directory keeps
	# whatever was built in it last, possibly from another series or branch.
	[ -n "$want_tree" ] || want_tree=$(src_tree "$KS_SRC") || exit 5
	have_tree=$(cat "$KS_BUILD/$KS_TREE_RECORD" 2>/dev/null) || have_tree=
	if [ "$have_tree" != "$want_tree" ]; then
		what="of tree $have_tree"
		[ -n "$have_tree" ] || what="of no recorded tree (its build did not finish, or predates the record)"
		note "error: the $ARCH_NAME build in $KS_BUILD is $what, not of tree $want_tree, which was asked for; rebuild it from those sources: scripts/build.sh $ARCH_NAME"
		echo "verdict: 5 (harness error: the build is $what, not of tree $want_tree)"
		exit 5
	fi
	# The initramfs carries the build's modules and runners built against it: it must be
	# packed from the build as it is now. By content (tree and .config), not by time: every
	# run of a variant sharing the build (ARCH-interp, x86_64-tcg1) runs a build that
	# changes nothing.
	if [ -f "$KS_OUT/initramfs.cpio.gz" ]; then
		packed=$(cat "$KS_OUT/$KS_INITRAMFS_RECORD" 2>/dev/null) ||
			packed="no recorded build"
		now=$(build_identity)
		if [ "$packed" != "$now" ]; then
			note "error: $KS_OUT/initramfs.cpio.gz was packed from $packed, not from the $ARCH_NAME build there now ($now); pack it again: scripts/initramfs.sh $ARCH_NAME"
			echo "verdict: 5 (harness error: the initramfs was packed from another build)"
			exit 5
		fi
	fi
fi
kernel=${kernel:-$KS_BUILD/$IMAGE}
initrd=${initrd:-$KS_OUT/initramfs.cpio.gz}
[ -f "$kernel" ] || die "no kernel image $kernel (run scripts/build.sh $ARCH_NAME)"
[ -f "$initrd" ] || die "no initramfs $initrd (run scripts/initramfs.sh $ARCH_NAME)"
mkdir -p "$(dirname "$log")"

# EARLYCON before loglevel=5: the early console registers while every level still prints,
# and shows the kernel's banner and its own "earlycon:" line.
cmdline="console=$CONSOLE ${EARLYCON:+$EARLYCON }panic=-1 oops=panic loglevel=5 log_buf_len=16M $APPEND $extra"
qemu=("$QEMU" -M "$MACHINE" -cpu "$CPU" -smp "$SMP" -m "$MEM" -no-reboot
	-display none -monitor none -serial stdio
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline")
[ -n "$BIOS" ] && qemu+=(-bios "$BIOS")
# shellcheck disable=SC2206 # QEMU_EXTRA is a word list by design
qemu+=($QEMU_EXTRA)

# The kernel's banner reaches the early console (EARLYCON) within seconds of the firmware's
# last line (riscv64 under TCG: about one; on a loaded host, or in make bisect's parallel
# boots, a few): a console that still ends with the firmware's line this long after the
# start is hung before the kernel's first message.
firmware_wait=${KSERIES_FIRMWARE_WAIT:-120}
case $firmware_wait in
''|*[!0-9]*) die "KSERIES_FIRMWARE_WAIT=$firmware_wait: not a number of seconds" ;;
esac

# qemu_running: the QEMU job (timeout and its QEMU) has not ended. Asks the shell's job
# table, not kill -0, which could hit another process given the pid of one already reaped.
qemu_running() {
	[ -n "$qemu_pid" ] && jobs -rp | grep -q -x -- "$qemu_pid"
}

# run_qemu LOG: one boot, its console in LOG (and on standard error with --verbose); sets rc
# to QEMU's exit code: 124 for the wall-clock timeout and for a hang before the kernel's
# first message (then fw_hang is set: QEMU is stopped $firmware_wait seconds in).
run_qemu() {
	local out=$1 tailpid=
	fw_hang=
	note "booting $ARCH_NAME (timeout ${timeout}s): ${qemu[*]}"
	start=$(date +%s)
	: > "$out"
	# --foreground: QEMU stays in our process group, so a Ctrl-C at the terminal reaches
	# it at once. In the background, so that the console can be watched while it runs.
	timeout --foreground -k 10 "$timeout" "${qemu[@]}" < /dev/null > "$out" 2>&1 &
	qemu_pid=$!
	if [ "$verbose" = 1 ]; then
		tail -f -n +1 --pid="$qemu_pid" "$out" >&2 &
		tailpid=$!
	fi
	if [ -n "$FIRMWARE_LAST_LINE" ]; then
		while qemu_running && [ $(($(date +%s) - start)) -lt "$firmware_wait" ]; do
			sleep 1
		done
		if qemu_running && console_ends_in_firmware "$out"; then
			fw_hang=1
			# timeout passes the TERM on to QEMU (and KILLs it 10 s later if need be).
			kill -TERM "$qemu_pid" 2>/dev/null || true
		fi
	fi
	rc=0
	wait "$qemu_pid" || rc=$?
	qemu_pid=
	[ -z "$tailpid" ] || wait "$tailpid" || true
	[ -z "$fw_hang" ] || rc=124
	note "QEMU exited with $rc after $(($(date +%s) - start))s; console log: $out"
}

# A TERM (or INT) sent to this script alone, not to its process group: stop QEMU too.
qemu_pid=
stop_qemu() {
	if [ -n "$qemu_pid" ]; then
		kill -TERM "$qemu_pid" 2>/dev/null || true
		wait "$qemu_pid" 2>/dev/null || true
	fi
	exit "$1"
}
trap 'stop_qemu 130' INT
trap 'stop_qemu 143' TERM

# A boot hung before the kernel's first message (see FIRMWARE_LAST_LINE in
# qemu/arch/x86_64.conf for why it is not the series'): keep its console, boot once more,
# and the summary names it (make check repeats the line at its end).
retried=()
rm -f "$log.firmware-hang"
run_qemu "$log"
if [ -n "$fw_hang" ]; then
	mv "$log" "$log.firmware-hang"
	note "the boot hung before the kernel's first message (console: $log.firmware-hang); booting once more"
	retried=(--firmware-hang "$log.firmware-hang")
	run_qemu "$log"
fi
timed_out=
case $rc in
0) ;;
124|137) timed_out=--timed-out ;;
# A guest that panics or powers off makes QEMU exit 0 (-no-reboot); any other code is QEMU
# failing: report.sh tells a guest that made it fail (a TCG fatal error on code the JIT
# wrote) from QEMU failing to start (missing binary, bad machine or firmware).
*) timed_out="--qemu-exit $rc" ;;
esac
# shellcheck disable=SC2086 # options or nothing
exec "$KS_ROOT/scripts/report.sh" $timed_out $allow_skips "${retried[@]}" ${KSERIES_DEBUG:+--debug} \
	--arch "$ARCH_NAME" "$log"
