#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: check.sh [-h|--help] [--full] [ARCH...|all]

The project's tests ('make check'): the harness unit tests (tests/harness-test.sh), the quilt
round trip (scripts/quilt-check.sh), the mail gates (scripts/lint-series.sh), the cover
letter's freshness (scripts/cover-letter.sh --check), the b4 mails and their git am round
trip (scripts/send.sh --no-gate), MAINTAINERS.snippet (scripts/maintainers-check.sh), the
per-patch matrix check (scripts/bisect-verify.sh: well-formed, no current cell failed; stale
cells are reported), the same for the committed runs on the distributions' configurations
(scripts/distro-verify.sh; the lines 'evidence: ...' are repeated before the totals, as are
lines 'retried: ...' for boots that hung before the kernel's first message, see boot.sh),
the main job on every arch (scripts/run.sh; default all), with each arch also test_bpf and
the per-CPU tests with the JIT off (ARCH-interp), with x86_64 also bpf_batch's
attach_under_load alone on one TCG thread (x86_64-tcg1), with arm64 also the JIT, per-CPU
and execmem tests booted at EL2 with VHE (arm64-vhe, where the per-CPU offset lives in
another register) and the per-CPU tests at EL1 with 4 CPUs (arm64-smp4; the main arm64 job
boots 2), and with --full ('make check-full') riscv64's uniprocessor build (riscv64-up,
CONFIG_SMP=n) booted with the per-CPU and execmem tests and a CONFIG_MMU=n compile check
(scripts/build-nommu.sh), two more kernel builds that keep a cold 'make check' (CI) under an
hour; then on the first arch planted failures (tests/planted-test.sh) and the bisection of a
fixture series (tests/bisect-test.sh). Prints the time of every stage and ends with the line
'N passed, N failed': one count per KTAP result of the test scripts and one per other stage.
The main jobs' summaries go to \$KSERIES_CACHE/out/check-results/ARCH.txt, not results/
(plain 'make ARCH=...' runs write those): make check leaves the clone unchanged.
Exit 0 only if all passed.

Options:
  --full       also the riscv64 uniprocessor and CONFIG_MMU=n builds (make check-full)
  -h, --help   show this help"
set -uo pipefail
. "$(dirname "$0")/lib.sh"

full=
words=()
for w in "$@"; do
	case $w in
	-h|--help) echo "$usage"; exit 0 ;;
	--full) full=1 ;;
	-*) echo "$usage" >&2; exit 64 ;;
	*) words+=("$w") ;;
	esac
done
arches=$(expand_arches "${words[@]:-all}") || exit 64
ks_lock

passed=0
failed=0
t_start=$SECONDS
# Summaries written after this, for the boots scripts/boot.sh had to repeat.
started=$(mktemp)
count() {
	if [ "$1" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
timed() {
	local t0=$SECONDS rc=0
	echo "##### $1"
	shift
	"$@" || rc=$?
	echo "##### ($((SECONDS - t0)) s, exit $rc)"
	return $rc
}

# Packages and the base first: the unit tests need jq, kunit.py and the base tree.
timed "deps" "$KS_ROOT/scripts/deps.sh" || { echo "0 passed, 1 failed"; exit 1; }
timed "base" "$KS_ROOT/scripts/fetch-base.sh" || { echo "0 passed, 1 failed"; exit 1; }

# ktap_stage NAME CMD...: run a KTAP-printing test script as a stage and count its results;
# results missing from its plan, or a failing exit with no "not ok", count as failures.
ktap_stage() {
	local out rc ok notok plan
	out=$(mktemp)
	timed "$@" | tee "$out"
	rc=${PIPESTATUS[0]}
	ok=$(grep -c '^ok ' "$out")
	notok=$(grep -c '^not ok ' "$out")
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$out" | head -1)
	passed=$((passed + ok))
	failed=$((failed + notok))
	if [ "$((ok + notok))" -lt "${plan:-1}" ]; then
		echo "$1: $((${plan:-1} - ok - notok)) planned result(s) missing"
		failed=$((failed + ${plan:-1} - ok - notok))
	elif [ "$rc" -ne 0 ] && [ "$notok" -eq 0 ]; then
		echo "$1: exit $rc without a failed result"
		failed=$((failed + 1))
	fi
	rm -f "$out"
}

ktap_stage "harness unit tests" "$KS_ROOT/tests/harness-test.sh"

rc=0
timed "quilt push -a" "$KS_ROOT/scripts/quilt-check.sh" || rc=$?
count $rc
rc=0
timed "mail gates (checkpatch --strict, Signed-off-by, prefixes)" "$KS_ROOT/scripts/lint-series.sh" || rc=$?
count $rc

rc=0
timed "cover letter up to date (scripts/cover-letter.sh --check)" \
	"$KS_ROOT/scripts/cover-letter.sh" --check || rc=$?
count $rc
rc=0
timed "b4 writes the mails, b4 am -m + git am of them rebuild the series (send.sh --no-gate)" \
	"$KS_ROOT/scripts/send.sh" --no-gate || rc=$?
count $rc
rc=0
timed "MAINTAINERS.snippet in the patched tree, get_maintainer.pl self-test" \
	"$KS_ROOT/scripts/maintainers-check.sh" || rc=$?
count $rc
rc=0
# Stale cells are reported, not failed (make send requires them current): a malformed matrix
# or a current cell that failed fails.
evidence=$(mktemp)
timed "per-patch matrix: well-formed, no current cell failed (make bisect-verify)" \
	"$KS_ROOT/scripts/bisect-verify.sh" | tee "$evidence"
rc=${PIPESTATUS[0]}
count $rc
rc=0
timed "distribution runs: well-formed, no current run failed (make distro-verify)" \
	"$KS_ROOT/scripts/distro-verify.sh" | tee -a "$evidence"
rc=${PIPESTATUS[0]}
count $rc

for a in $arches; do
	rc=0
	# The summaries go to the cache: make check leaves the clone as it was.
	timed "main job $a" "$KS_ROOT/scripts/run.sh" --results "$KS_CACHE/out/check-results" "$a" ||
		rc=$?
	count $rc
	# Same build with the JIT off: the interpreter runs test_bpf's per-CPU MOV and the
	# per-CPU tests (qemu/arch/ARCH-interp.conf).
	rc=0
	timed "$a with the JIT off (bpf_jit_enable=0): test_bpf, bpf_percpu" \
		"$KS_ROOT/scripts/run.sh" --append "harness.only=test_bpf,bpf_percpu" "$a-interp" ||
		rc=$?
	count $rc
	case $a in
	x86_64)
		# Same build, all vCPUs on one TCG thread: attach and detach batches while
		# other CPUs call the functions (see qemu/arch/x86_64-tcg1.conf for why).
		rc=0
		timed "x86_64 on one TCG thread: bpf_batch with attach_under_load" \
			"$KS_ROOT/scripts/run.sh" --append "harness.only=bpf_batch" x86_64-tcg1 || rc=$?
		count $rc
		;;
	arm64)
		# Same build, booted at EL2 with VHE: the JIT must use TPIDR_EL2 there.
		rc=0
		timed "arm64 at EL2 with VHE: test_bpf, bpf_percpu, execmem_kunit, bpf_jit_execmem, bpf_tramp_execmem" \
			"$KS_ROOT/scripts/run.sh" \
			--append "harness.only=test_bpf,bpf_percpu,execmem_kunit,bpf_jit_execmem,bpf_tramp_execmem" \
			arm64-vhe || rc=$?
		count $rc
		# Same build at EL1 with 4 CPUs (arm64 boots with 2): the per-CPU tests run on
		# every CPU of a 4-CPU guest.
		rc=0
		timed "arm64 with 4 CPUs: bpf_percpu" \
			"$KS_ROOT/scripts/run.sh" --append "harness.only=bpf_percpu" arm64-smp4 || rc=$?
		count $rc
		;;
	riscv64)
		[ -n "$full" ] || continue
		# CONFIG_SMP=n: the per-CPU code must build, and the helper must give CPU 0;
		# execmem and the JIT on it must build and pass there too.
		rc=0
		timed "riscv64 uniprocessor (CONFIG_SMP=n): bpf_percpu, execmem_kunit, bpf_jit_execmem" \
			"$KS_ROOT/scripts/run.sh" \
			--append "harness.only=bpf_percpu,execmem_kunit,bpf_jit_execmem" \
			riscv64-up || rc=$?
		count $rc
		# CONFIG_MMU=n: compiles (execmem stubs), nothing to boot.
		rc=0
		timed "riscv64 CONFIG_MMU=n compiles (scripts/build-nommu.sh)" \
			"$KS_ROOT/scripts/build-nommu.sh" || rc=$?
		count $rc
		;;
	esac
done

# Planted failures on the first arch booted: each must give its own exit code.
first=${arches%%[[:space:]]*}
ktap_stage "planted failures $first" "$KS_ROOT/tests/planted-test.sh" "$first"

# The bisection must name the planted bad patch of its fixture series.
ktap_stage "bisection fixture $first" "$KS_ROOT/tests/bisect-test.sh" "$first"

# What committed evidence is stale, repeated where CI's reader looks: not a failure.
grep '^evidence: ' "$evidence"
rm -f "$evidence"
# Boots that hung before the kernel's first message and were booted again: not a failure of
# the series (qemu/arch/x86_64.conf, FIRMWARE_LAST_LINE), but each one is said here.
find "$KS_CACHE/out" -name summary.txt -newer "$started" -print0 2>/dev/null |
	xargs -0 -r grep -H '^booted twice: ' | sed "s|^$KS_CACHE/out/\([^/]*\)/summary.txt:|retried: \1: |" || true
rm -f "$started"
echo "total time: $((SECONDS - t_start)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
