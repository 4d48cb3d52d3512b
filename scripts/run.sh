#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: run.sh [-h|--help] [--debug] [--append ARGS] [--results DIR] [ARCH...|all]

The main job, for each ARCH (default: x86_64; 'all' = every arch in qemu/arch/ without a
variant suffix): install missing packages, fetch the pinned base, apply the series, build,
pack the initramfs, boot under QEMU and run the guest tests, then write the summary to
results/ARCH.txt (results/ARCH-debug.txt with --debug; nothing with --append), headed by the
build time and the run's content key (scripts/bisect-lib.sh: run_key; for the distribution
configurations' runs scripts/distro-verify.sh compares it with the series of now). Prints the time of every
stage. Exit code: as scripts/boot.sh for one ARCH (5 also when the base, apply, build or
initramfs step fails); for several ARCHes, the first non-zero one.

Options:
  --debug        build with qemu/config/debug.config (KASAN, lockdep, kmemleak, DEBUG_WX; the
                 arch file's DEBUG_FRAGMENTS instead where it names them: riscv64 without KASAN) in
                 separate build and output directories (see scripts/build.sh --debug)
  --append ARGS  extra kernel command-line arguments for the guest (see scripts/boot.sh)
  --results DIR  write the summaries into DIR instead of results/ (make check: the clone
                 stays clean; the committed summaries come from plain runs)
  -h, --help     show this help"
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$KS_ROOT/scripts/bisect-lib.sh"
KS_DIE_CODE=5	# a harness error, as the exit codes above say

debug=
slow=1		# boot timeout multiplier
extra=
results=$KS_ROOT/results
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--debug) debug=-debug slow=3; export KSERIES_DEBUG=1 ;;
	--append) extra=$2; shift ;;
	--results) [ $# -ge 2 ] || { echo "$usage" >&2; exit 64; }; results=$2; shift ;;
	-*) echo "$usage" >&2; exit 64 ;;
	*) break ;;
	esac
	shift
done
arches=$(expand_arches "${@:-x86_64}") || exit 64
# Debug runs: test_vmalloc's loops are 100 instead of 2,000 (KASAN, lockdep and kmemleak
# make every allocation slow under TCG), and of the ten cases of 6.1's test (mask 1023) its
# pcpu_alloc_test (bit 128) is left out: that case makes 35,000 __alloc_percpu() calls whatever test_loop_count says,
# without a reschedule point, which under TCG with kmemleak holds a CPU past the RCU stall
# timeout (seen on x86_64: results/x86_64-debug.txt of 2026-11-30 16:19). The series does
# not change mm/percpu.c, and mm/vmalloc.c only gains execmem at its end. Plain runs keep
# the case. The guest init's per-test watchdog gets the boot timeout's factor (3 x 600 s).
debug_args="test_vmalloc.test_loop_count=100 test_vmalloc.run_test_mask=$((1023 & ~128))"
debug_args="$debug_args harness.test_timeout=1800"
# The lockup detectors' thresholds as syzbot sets them for its emulated debug guests
# (kernel.watchdog_thresh 55, RCU CPU stall timeout 100 s) instead of 10 s and 21 s: under TCG
# with lockdep and kmemleak a loop of the base that frees without a reschedule point runs
# for tens of seconds where hardware takes well under one, e.g. the verifier's pop_stack()
# loop at the end of do_check_common() after a test_verifier program with thousands of
# pending states (riscv64: "soft lockup - CPU#0 stuck for 23s! [test_verifier]" in
# __slab_free from do_check_common; the series does not change that code). A CPU held for
# 110 s (soft lockup) or 100 s (RCU) is still reported.
debug_args="$debug_args watchdog_thresh=55 rcupdate.rcu_cpu_stall_timeout=100"
[ -z "$debug" ] || extra="$debug_args${extra:+ $extra}"
ks_lock

S=$KS_ROOT/scripts
stage() {
	local name=$1 t0=$SECONDS rc=0
	shift
	echo "=== stage $name: $*"
	"$@" || rc=$?
	stage_secs=$((SECONDS - t0))
	echo "=== stage $name: $stage_secs s, exit $rc"
	return $rc
}

stage deps "$S/deps.sh" || exit 5
stage base "$S/fetch-base.sh" || exit 5
stage apply "$S/apply.sh" || exit 5
tip=$(git -C "$KS_SRC" rev-parse --short HEAD)
tree=$(git -C "$KS_SRC" rev-parse 'HEAD^{tree}')

# results/ARCH.txt (ARCH-debug.txt): the summary of a run without planted arguments, which
# would overwrite the committed results with something else. Its key line (KEY, computed
# before the build) is what scripts/distro-verify.sh compares with the series and harness of
# now (run_key); a harness changed while the run went on gives no summary. The build time is
# that of this run (a warm ccache makes it short).
write_results() {
	local a=$1 summary=$2 build_secs=$3 key=$4 cmd="make ARCH=$1 (scripts/run.sh $1)"
	[ "$extra" = "${debug:+$debug_args}" ] ||
		{ note "$results/$a$debug.txt not written (--append run)"; return 0; }
	if [ -n "$debug" ]; then
		cmd="make debug ARCH=$a (scripts/run.sh --debug $a)"
	elif [ -n "$BASE_CONFIG" ]; then
		cmd="make distro ARCH=${a%%-distro*} (scripts/run.sh $a)"
	fi
	[ "$(run_key "$a" "$tree")" = "$key" ] || {
		note "$results/$a$debug.txt not written: the harness or the tests changed during the run"
		return 0
	}
	mkdir -p "$results"
	{
		echo "# Generated by: $cmd"
		echo "# Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "# Base: Debian $BASE_PKG $BASE_DEB_VERSION (Linux $BASE_UPSTREAM)," \
			"series tip $tip ($(series_names "$KS_ROOT/series" | wc -l) patches)"
		echo "# QEMU: $QEMU -M $MACHINE -cpu $CPU -smp $SMP (TCG)"
		echo "# Build: $build_secs s (scripts/build.sh $a, ccache in \$KSERIES_CACHE)"
		echo "# Key: $key"
		grep -v '^===\|^arch:' "$summary" | sed "s|$KS_CACHE|\$KSERIES_CACHE|g"
	} > "$results/$a$debug.txt"
}

final=0
table=
for a in $arches; do
	load_arch "$a"
	rc=0
	mkdir -p "$KS_OUT"
	key=$(run_key "$a" "$tree") || die "cannot compute the key of $a's run"
	stage "build $a" "$S/build.sh" "$a" > "$KS_CACHE/build-$a.log" 2>&1 || rc=5
	build_secs=$stage_secs
	grep '^=== stage' "$KS_CACHE/build-$a.log" || true
	if [ $rc -ne 0 ]; then
		tail -30 "$KS_CACHE/build-$a.log"
		echo "verdict: 5 (build failed; full log: $KS_CACHE/build-$a.log)" |
			tee "$KS_OUT/summary.txt"
	else
		stage "initramfs $a" "$S/initramfs.sh" "$a" || rc=5
		[ $rc -eq 0 ] || echo "verdict: 5 (initramfs failed)" | tee "$KS_OUT/summary.txt"
	fi
	if [ $rc -eq 0 ]; then
		# KASAN and lockdep slow the guest down about threefold under TCG.
		stage "boot+test $a" "$S/boot.sh" --append "$extra" --log "$KS_OUT/console.log" \
			--timeout $((TIMEOUT * slow)) --tree "$tree" "$a" \
			| tee "$KS_OUT/summary.txt" || rc=${PIPESTATUS[0]}
	fi
	write_results "$a" "$KS_OUT/summary.txt" "$build_secs" "$key"
	table="$table$(printf '%-10s exit %d' "$a" "$rc")
"
	[ $final -ne 0 ] || final=$rc
done
echo "=== summary"
printf '%s' "$table"
exit $final
