#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: harness-test.sh [-h|--help]

Unit tests of the harness itself, without booting: scripts/report.sh on saved console logs
(tests/fixtures/*.log: pass, failing test, panic, splat with passing tests, timeout, no KTAP,
expected failure that passed, KTAP of built-in KUnit before the guest's own, a KUnit
module's suite), unknown ARCH names, a series whose patch does not apply, a re-apply that keeps mtimes, quilt
against git am and the export round trip on a fixture series, a
kconfig fragment whose option a dependency drops, an arch file building with clang (KMSAN), the mail gates on a fixture series with a
missing sign-off, an unknown subject prefix and a checkpatch error, a patch adding a
kernel-doc warning, a stale cover letter, the guest programs compiling for every arch, the
pinned Debian sources fetched into an empty cache (and a changed sum or missing file refused),
the host's conversion of the guest's raw test output (scripts/raw2ktap.c) on hand-written
runner outputs and on a recorded console in the old and the raw format, cut or crashed
mid-output, boot.sh refusing a build of another source tree than the one asked for or an
initramfs packed from another build, the per-patch
matrix's evidence rule (stale cells reported, a current failure or a malformed matrix failed,
make send refusing stale cells) and the same rule for the runs on the distributions'
configurations, and shellcheck.
Prints KTAP; exits 1 if any test failed.

Options:
  -h, --help   show this help"
set -uo pipefail
case "${1:-}" in
-h|--help) echo "$usage"; exit 0 ;;
"") ;;
*) echo "$usage" >&2; exit 64 ;;
esac
T=$(cd "$(dirname "$0")" && pwd)
R=$T/..
F=$T/fixtures
. "$T/ktap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect NAME CODE PATTERN CMD...: CMD exits with CODE and its output matches PATTERN (if set).
expect() {
	local name=$1 code=$2 pattern=$3 rc=0
	shift 3
	"$@" > "$tmp/out" 2>&1 || rc=$?
	[ "$rc" -eq "$code" ] && { [ -z "$pattern" ] || grep -q -E -- "$pattern" "$tmp/out"; }
	ktap_result "$name" $? "$tmp/out" "expected exit $code and /$pattern/, got exit $rc:"
}

# Every guest program compiles for every arch (the initramfs of each needs all of them).
guest_programs_all() {
	local arch
	for arch in $(. "$R/scripts/lib.sh"; arch_names | grep -v -- '-'); do
		mkdir -p "$tmp/guest-$arch"
		(. "$R/scripts/lib.sh"; load_arch "$arch"; guest_programs "$tmp/guest-$arch" > /dev/null) ||
			{ echo "guest programs do not compile for $arch"; return 1; }
	done
	echo "guest programs compile for every arch"
}

# A console with one test's raw block as the guest init prints it (qemu/guest/init.c:
# run_test()) from a runner's standard output and error files (hand-written from the
# runners' printf formats), converted by scripts/raw2ktap.c and read back by kunit.py.
# raw_report NAME KIND STATUS OUT ERR prints the converted test's result line, then kunit.py's
# summary. test_verifier: one case per "#N/x" block, whatever lines a block has, a repeated
# name numbered. test_progs: one case per result line before "All error logs:" (the repeats
# after it not counted), the name after the last ':' cut, '#' as '_'.
raw_report() {
	local name=$1 kind=$2 status=$3 conv
	conv=$(. "$R/scripts/lib.sh" && host_tool raw2ktap) || return 1
	{ printf 'KTAP version 1\r\n1..1\r\n# harness: raw begin 1 %s %s\r\n' "$name" "$kind"
	  sed 's/^/|o /; s/$/\r/' "$4"
	  sed 's/^/|e /; s/$/\r/' "$5"
	  printf '# harness: raw end 1 %s %s elapsed=1.000 bpf_jit_enable=1\r\n' "$name" "$status"
	} > "$tmp/$name.console"
	"$conv" "$tmp/$name.console" > "$tmp/$name.ktap" || return 1
	grep -E "^(not )?ok 1 $name\$" "$tmp/$name.ktap"
	# kunit.py exits 1 when a test failed, as some do here.
	{ python3 "$(. "$R/scripts/lib.sh" && echo "$KS_SRC")/tools/testing/kunit/kunit.py" \
		parse "$tmp/$name.ktap" || true; } | sed -e 's/\x1b\[[0-9;]*m//g'
}
selftest_report() {
	local runner=$1
	raw_report "$runner" "$runner" exit=1 "$F/$runner.out" "$F/$runner.err" || return 1
	grep -q "^not ok 1 $runner\$" "$tmp/$runner.ktap" ||
		{ echo "the converter did not fail a run with failures"; return 1; }
	case $runner in
	test_verifier)
		grep -q 'ok 12 add+sub+mul (2)/p$' "$tmp/$runner.ktap" ||
			{ echo "the repeated name is not numbered"; return 1; } ;;
	test_progs)
		grep -q '^    ok 9 xdp_attach/mode: skb _2 # SKIP$' "$tmp/$runner.ktap" ||
			{ echo "the name with ':' and '#' is not as expected"; return 1; } ;;
	esac
}

ktap_plan 106
expect report_pass 0 'verdict: 0' "$R/scripts/report.sh" "$F/pass.log"
expect report_xfail_counted 0 'XFAIL +test_vmalloc.align_shift_alloc_test' \
	"$R/scripts/report.sh" "$F/pass.log"
expect report_failing_test 1 'FAIL +test_bpf' "$R/scripts/report.sh" "$F/fail.log"
expect report_failure_says_why 1 '^        test_bpf: no Summary line in the log' \
	"$R/scripts/report.sh" "$F/fail.log"
expect report_panic 2 'Kernel panic' "$R/scripts/report.sh" "$F/panic.log"
expect report_warn_with_passing_tests 2 'WARNING: ' "$R/scripts/report.sh" "$F/warn.log"
expect report_timeout 3 'timed out in test test_bpf' "$R/scripts/report.sh" --timed-out "$F/timeout.log"
expect report_no_ktap 4 'no KTAP' "$R/scripts/report.sh" "$F/noktap.log"
expect report_skips_boot_ktap 0 'cases: 6 passed, 0 failed' "$R/scripts/report.sh" "$F/boot-ktap.log"
expect report_xpass_fails 1 'XPASS +test_vmalloc.align_shift_alloc_test' \
	"$R/scripts/report.sh" "$F/xpass.log"
expect report_unexpected_skip_fails 1 'SKIP +execmem_kunit \(unexpected: no qemu/xskip' \
	"$R/scripts/report.sh" "$F/skip.log"
expect report_skips_allowed 0 'unexpected skips allowed' \
	"$R/scripts/report.sh" --allow-skips "$F/skip.log"
grep -v 'execmem_kunit' "$F/skip.log" | sed 's/^1\.\.4$/1..3/; s/^ok 4 kmemleak$/ok 3 kmemleak/' \
	> "$tmp/xskip.log"
expect report_expected_skip_passes 0 'XSKIP kmemleak.kmemleak_scan' \
	"$R/scripts/report.sh" "$tmp/xskip.log"
expect report_qemu_fatal_is_guest_fault 2 'QEMU stopped by the guest \(exit 134\)' \
	"$R/scripts/report.sh" --qemu-exit 134 "$F/qemu-fatal.log"
expect report_qemu_no_start_is_harness_error 5 'QEMU exited with 1 \(harness error' \
	"$R/scripts/report.sh" --qemu-exit 1 "$F/qemu-nostart.log"
expect report_qemu_crash_is_harness_error 5 'QEMU exited with 139 \(harness error' \
	"$R/scripts/report.sh" --qemu-exit 139 "$F/pass.log"
# The x86_64-tcg1 variant exists to run attach_under_load: its list takes back the skip
# qemu/xskip.x86_64.list allows; make debug (--debug) takes back kmemleak's.
sed -e 's/^1\.\.2\r\?$/1..3/' -e 's/^# harness: done\r\?$/    KTAP version 1\n    # Subtest: bpf_batch\n    1..1\n    ok 1 attach_under_load # SKIP bpf_batch.load=1 runs it\nok 3 bpf_batch\n&/' \
	"$F/pass.log" > "$tmp/tcg1-skip.log"
expect report_variant_takes_back_skip 1 'SKIP +bpf_batch.attach_under_load \(unexpected' \
	"$R/scripts/report.sh" --arch x86_64-tcg1 "$tmp/tcg1-skip.log"
expect report_debug_takes_back_skip 1 'SKIP +kmemleak.kmemleak_scan \(unexpected' \
	"$R/scripts/report.sh" --debug "$tmp/xskip.log"
# An arch's BOOT_LINES (qemu/arch/*.conf): the arm64-vhe run exists to test EL2 with VHE, so
# a console whose guest started at EL1 fails it; the summary quotes what the guest printed.
{ printf '# harness: kernel: CPU: All CPU(s) started at EL1\r\n'; cat "$F/pass.log"; } > "$tmp/el1.log"
{ printf '# harness: kernel: CPU: All CPU(s) started at EL2\r\n'
  printf '# harness: kernel: CPU features: detected: Virtualization Host Extensions\r\n'
  cat "$F/pass.log"; } > "$tmp/el2.log"
expect report_boot_line_missing 1 "boot line missing: 'CPU: All CPU\\(s\\) started at EL2'" \
	"$R/scripts/report.sh" --arch arm64-vhe "$tmp/el1.log"
expect report_boot_lines_present 0 '^boot: CPU: All CPU\(s\) started at EL2$' \
	"$R/scripts/report.sh" --arch arm64-vhe "$tmp/el2.log"
expect bad_arch_boot 64 'valid names: .*x86_64.*arm64.*riscv64|valid names: .*arm64.*riscv64.*x86_64' \
	"$R/scripts/boot.sh" no_such_arch
expect bad_arch_run 64 'unknown ARCH .sparc.' "$R/scripts/run.sh" sparc
# make debug's guests take DEBUG_MEM MiB and DEBUG_SMP CPUs where the arch file sets them
# (arm64: memory; x86_64: both), MEM and SMP elsewhere (riscv64's memory, arm64-smp4's CPUs).
expect debug_guest 0 '^2048 1024 1024 2 4 4$' bash -c \
	". '$R/scripts/lib.sh'; g() { (KSERIES_DEBUG=\$1; load_arch \$2; echo \${!3}); }; echo \$(g 1 arm64 MEM) \$(g '' arm64 MEM) \$(g 1 riscv64 MEM) \$(g 1 x86_64 SMP) \$(g '' x86_64 SMP) \$(g 1 arm64-smp4 SMP)"
expect bad_arch_make 2 'unknown ARCH .mips.; valid names' make -C "$R" ARCH=mips run

# A series whose second patch does not apply: apply.sh names it, on a scratch branch.
expect apply_names_bad_patch 1 "patch 2/3 '0002-break.patch' does not apply" \
	"$R/scripts/apply.sh" --series "$F/series-bad/series" --patches "$F/series-bad" \
	--branch harness-test --force

# apply.sh refuses to recreate a branch that holds a commit it did not make (a developer's
# unexported work), and leaves that branch alone.
guard_refuses() {
	local src own
	src=$(. "$R/scripts/lib.sh" && echo "$KS_SRC")
	own=$(git -C "$src" commit-tree -p base -m "unexported work" 'base^{tree}')
	git -C "$src" branch -f guard-test "$own"
	"$R/scripts/apply.sh" --series "$F/series-bisect/series" --patches "$F/series-bisect" \
		--branch guard-test
	local rc=$?
	[ "$(git -C "$src" rev-parse guard-test)" = "$own" ] || rc=99
	git -C "$src" branch -D guard-test >/dev/null
	return $rc
}
expect apply_keeps_unexported_work 1 'holds commits apply.sh did not make' guard_refuses

# quilt push -a and git am give the same tree for a real (fixture) series, and export.sh
# turns the applied branch back into the same patches (same git patch-ids, same order).
B=$F/series-bisect
expect quilt_same_tree_as_git_am 0 'same tree as git am' \
	"$R/scripts/quilt-check.sh" --series "$B/series" --patches "$B"
patch_ids() {
	local p
	for p in $(cat "$1/series"); do git patch-id --stable < "$1/$p" | cut -d' ' -f1; done
}
export_round_trip() {
	"$R/scripts/apply.sh" --series "$B/series" --patches "$B" --branch export-test --force &&
		"$R/scripts/export.sh" --out "$tmp/export" export-test &&
		[ "$(patch_ids "$tmp/export")" = "$(patch_ids "$B")" ] &&
		[ "$(wc -l < "$tmp/export/series")" -eq 3 ]
}
expect export_round_trip 0 'exported 3 patch' export_round_trip
# The tree run.sh keys a run with (HEAD^{tree} after apply.sh's git am) is the tree
# series_trees computes with git apply for the same patches (the keys distro-verify.sh and
# the matrix compare with): were they to differ, every committed run would look stale.
am_tree_is_apply_tree() {
	local src am ap
	src=$(. "$R/scripts/lib.sh" && echo "$KS_SRC")
	am=$(git -C "$src" rev-parse 'export-test^{tree}') || return 1
	ap=$(. "$R/scripts/lib.sh" && . "$R/scripts/bisect-lib.sh" &&
		mapfile -t names < <(series_names "$B/series") &&
		series_trees "$B" "${names[@]}" | tail -1 | cut -f2) || return 1
	echo "git am: $am, git apply: $ap"
	[ "$am" = "$ap" ]
}
expect am_tree_is_apply_tree 0 'git am: ([0-9a-f]{40}), git apply: \1$' am_tree_is_apply_tree

# README's patch workflow: commit on the applied branch, export.sh it, and the next apply
# (make) takes the branch as applied instead of refusing to replace it. Run from a copy of
# the scripts whose patches/ is a fixture series, on a scratch branch.
export_then_apply() {
	local repo=$tmp/workflow src rc=0
	src=$(. "$R/scripts/lib.sh" && echo "$KS_SRC")
	mkdir -p "$repo/patches"
	cp -r "$R/scripts" "$R/base.conf" "$repo/"
	cp "$B"/*.patch "$repo/patches/"
	cp "$B/series" "$repo/series"
	"$repo/scripts/apply.sh" --branch workflow-test --force || return 2
	echo "workflow" >> "$src/lib/test_vmalloc.c"
	git -C "$src" -c user.name=t -c user.email=t@invalid commit -q -am "lib: workflow test" ||
		rc=3
	[ "$rc" != 0 ] || "$repo/scripts/export.sh" workflow-test || rc=4
	[ "$rc" != 0 ] || [ "$(wc -l < "$repo/series")" -eq 4 ] || rc=5
	[ "$rc" != 0 ] || "$repo/scripts/apply.sh" --branch workflow-test || rc=$?
	git -C "$src" checkout -q --detach
	git -C "$src" branch -q -D workflow-test
	rm -f "$(. "$R/scripts/lib.sh" && echo "$KS_CACHE")/applied.workflow-test"
	return "$rc"
}
expect export_then_apply 0 '4 patch\(es\) already applied on branch workflow-test' export_then_apply

# Applying patches whose result the base tree already has checked out (here: patch 1 again,
# on another branch) rewrites no file, so make keeps the objects built from it.
mtimes_survive() {
	local src f old rc=0
	src=$(. "$R/scripts/lib.sh" && echo "$KS_SRC")
	f=$src/lib/test_vmalloc.c
	"$R/scripts/apply.sh" --series "$B/series" --patches "$B" --upto 1 --branch mtime-a \
		--force || return 2
	touch -d '2001-01-01 00:00:00' "$f"
	old=$(stat -c %Y "$f")
	"$R/scripts/apply.sh" --series "$B/series" --patches "$B" --upto 1 --branch mtime-b \
		--force || rc=3
	if [ "$rc" = 0 ] && [ "$(stat -c %Y "$f")" = "$old" ]; then
		echo "lib/test_vmalloc.c kept its mtime"
	else
		echo "lib/test_vmalloc.c was rewritten"
		rc=${rc/#0/1}
	fi
	git -C "$src" checkout -q --detach
	git -C "$src" branch -q -D mtime-a mtime-b
	rm -f "$(. "$R/scripts/lib.sh" && echo "$KS_CACHE")"/applied.mtime-[ab]
	return "$rc"
}
expect apply_keeps_mtimes 0 'kept its mtime' mtimes_survive

# A fragment option that a dependency drops is an error naming it (config stage only).
expect build_dropped_option 1 'CONFIG_KASAN_SW_TAGS=y \(from dropped.config' \
	"$R/scripts/build.sh" --config-only --fragment "$F/dropped.config" x86_64

# An arch file that sets LLVM configures with clang: x86_64-kmsan gets KMSAN, which only a
# clang build offers (config stage only).
kmsan_config() {
	local cfg
	"$R/scripts/build.sh" --config-only x86_64-kmsan || return 1
	cfg=$(. "$R/scripts/lib.sh" && echo "$KS_CACHE")/config/x86_64-kmsan/.config
	grep -x -e CONFIG_CC_IS_CLANG=y -e CONFIG_KMSAN=y "$cfg"
}
expect kmsan_config_clang 0 'CONFIG_KMSAN=y' kmsan_config

# Mail gates: each planted defect of the lint fixture series is named with its patch.
L=$F/series-lint
# make distro's configuration check (scripts/distro-config-check.sh): options the fragment
# names, options the distribution's file does not mention and the compiler's name may differ;
# a built-in turned on, a value changed and a module dropped without a fragment line may not.
D=$F/distro
expect distro_config_kept 0 '' \
	"$R/scripts/distro-config-check.sh" "$D/debian.config" "$D/same.config" "$D/frag.config"
expect distro_config_changed 1 '3 option\(s\) of .*debian.config differ.*' \
	"$R/scripts/distro-config-check.sh" "$D/debian.config" "$D/changed.config" "$D/frag.config"
expect distro_config_names_changes 1 '^  CONFIG_VIRTIO_NET: m in the distribution.s, n here$' \
	"$R/scripts/distro-config-check.sh" "$D/debian.config" "$D/changed.config" "$D/frag.config"
expect distro_config_unfragmented 1 'CONFIG_KUNIT: n in the distribution.s, y here' \
	"$R/scripts/distro-config-check.sh" "$D/debian.config" "$D/same.config"
expect distro_fetch_unknown_arch 1 "no configuration pinned for Debian architecture 'riscv64' in distro.conf; pinned: amd64 arm64" \
	"$R/scripts/fetch-distro-config.sh" riscv64
expect lint_missing_signoff 1 "0001-nosob.patch: no 'Signed-off-by: " \
	"$R/scripts/lint-series.sh" --series "$L/series" --patches "$L"
expect lint_unknown_prefix 1 "0002-badprefix.patch: subject 'vmalloc test: .*' does not start" \
	"$R/scripts/lint-series.sh" --series "$L/series" --patches "$L"
expect lint_checkpatch_finding 1 '0003-style.patch: checkpatch: .*TRAILING_WHITESPACE' \
	"$R/scripts/lint-series.sh" --series "$L/series" --patches "$L"

# The harness scripts themselves: shellcheck at warning level (sourced-file and
# unused-variable notes are expected with lib.sh and the arch data files).
expect lint_kernel_doc_warning 1 "0001-kdoc.patch: kernel-doc: lib/test_vmalloc.c: warning: Excess" \
	"$R/scripts/lint-series.sh" --series "$F/series-kdoc/series" --patches "$F/series-kdoc"

# The cover letter: the committed one is current; one with a changed line is refused.
expect cover_letter_current 0 'up to date' "$R/scripts/cover-letter.sh" --check
sed 's/^base-commit: .*/base-commit: 0000000000000000000000000000000000000000/' \
	"$R/cover-letter.txt" > "$tmp/stale-cover.txt"
expect cover_letter_stale 1 'stale-cover.txt is stale.*run scripts/cover-letter.sh' \
	"$R/scripts/cover-letter.sh" --check --file "$tmp/stale-cover.txt"

expect guest_programs_compile 0 'compile for every arch' guest_programs_all
expect test_verifier_report 0 'Ran 12 tests: passed: 6, failed: 2, skipped: 4' \
	selftest_report test_verifier
expect test_progs_report 0 'Ran 10 tests: passed: 5, failed: 2, skipped: 3' \
	selftest_report test_progs

# The pinned Debian sources (sources.conf): every package is fetched (from the mirror when
# the cache lacks it) and every file checked against its pin on each run, whatever versions
# this machine has installed; a changed sum or a file the mirror lacks is an error naming
# the package and its version (those two against a local file:// pool made of the cached
# files, so they need no network).
fetch_all_pinned() {
	local pkgs
	pkgs=$(grep -v -e '^#' -e '^[[:space:]]*$' "$R/sources.conf" | awk '{print $1}' | sort -u)
	# shellcheck disable=SC2086 # one word per package
	"$R/scripts/fetch-sources.sh" $pkgs > "$tmp/dscs" && cat "$tmp/dscs" &&
		echo "fetched and verified: $(echo $pkgs)"
}
expect fetch_sources_pinned 0 'fetched and verified: elfutils zlib' fetch_all_pinned
mkdir -p "$tmp/pool/pool/main/z/zlib"
cp "$(dirname "$(grep zlib_ "$tmp/dscs")")"/* "$tmp/pool/pool/main/z/zlib/" 2>/dev/null
awk '$3 ~ /\.dsc$/ && $1 == "zlib" { $4 = "0" substr($4, 2) } 1' "$R/sources.conf" > "$tmp/sum.conf"
expect fetch_sources_bad_sum 1 'zlib 1:1.2.13.dfsg-1: sha256 of zlib_1.2.13.dfsg-1.dsc is .*pins 0' \
	env KSERIES_CACHE="$tmp/fetch-cache" DEBIAN_MIRROR="file://$tmp/pool" \
	"$R/scripts/fetch-sources.sh" --list "$tmp/sum.conf" zlib
sed 's/ zlib_1.2.13.dfsg-1.debian.tar.xz / zlib_1.2.13.dfsg-0.debian.tar.xz /' "$R/sources.conf" \
	> "$tmp/missing.conf"
expect fetch_sources_missing_file 1 'zlib 1:1.2.13.dfsg-1: .*zlib_1.2.13.dfsg-0.debian.tar.xz could not be downloaded' \
	env KSERIES_CACHE="$tmp/fetch-cache" DEBIAN_MIRROR="file://$tmp/pool" \
	"$R/scripts/fetch-sources.sh" --list "$tmp/missing.conf" zlib

# A guest program's exit status counts: one that crashes after its last result (killed by
# signal 11), or exits non-zero with every result passed, fails one more case, exit_status
# (scripts/raw2ktap.c), on one line for patterns that span lines.
program_exit() {
	raw_report program exec "$1" "$F/program.out" "$F/program.err" | tr '\n' ' '
}

expect program_exit_0_passes 0 '^ok 1 program .*Ran 2 tests: passed: 1, skipped: 1' \
	program_exit exit=0
expect program_segfault_after_results 0 '^not ok 1 program .*killed by signal 11.*\[FAILED\] exit_status.*Ran 3 tests: passed: 1, failed: 1, skipped: 1' \
	program_exit signal=11
expect program_exit_1_without_failure 0 '^not ok 1 program .*exited with status 1 although.*Ran 3 tests: passed: 1, failed: 1' \
	program_exit exit=1

# The judging on the host (scripts/raw2ktap.c): the same guest run (x86_64-interp,
# harness.only=test_bpf,test_vmalloc,wx_check) recorded with a guest init that converted to
# KTAP itself (interp-ktap.log) and with one that prints raw output (interp-raw.log) gets the
# same summary. From interp-raw.log: a console that ends inside test_bpf's output (a hang
# stopped by the boot's timeout; the same with a panic after it), and bpf_jit_enable=1 in
# test_bpf's end marker, which fails its interpreted 0/1014 JIT'ed.
same_summary() {
	diff <("$R/scripts/report.sh" --arch x86_64-interp "$F/interp-ktap.log" | sed 1d) \
		<("$R/scripts/report.sh" --arch x86_64-interp "$F/interp-raw.log" | sed 1d) &&
		"$R/scripts/report.sh" --arch x86_64-interp "$F/interp-raw.log"
}
expect report_old_and_raw_console_agree 0 'cases: 14 passed, 0 failed, 0 skipped, 1 xfail' same_summary
head -n 600 "$F/interp-raw.log" > "$tmp/raw-cut.log"
report_flat() { "$R/scripts/report.sh" "$@" | tr '\n' ' '; return "${PIPESTATUS[0]}"; }
expect report_raw_console_cut 3 'FAIL +test_bpf .*guest timed out in test test_bpf' \
	report_flat --timed-out --arch x86_64-interp "$tmp/raw-cut.log"
{ cat "$tmp/raw-cut.log"; sed -n '/^Kernel panic/,$p' "$F/panic.log"; } > "$tmp/raw-panic.log"
expect report_raw_console_crash 2 'FAIL +test_bpf .*Kernel panic' \
	report_flat --arch x86_64-interp "$tmp/raw-panic.log"
raw_cut_diag() {
	"$(. "$R/scripts/lib.sh" && host_tool raw2ktap)" "$tmp/raw-cut.log" | tail -3 | tr '\n' ' '
}
expect raw2ktap_names_the_cut 0 'the console ends before its end marker.*not ok 1 test_bpf' raw_cut_diag
sed 's/^\(# harness: raw end 1 test_bpf .*\)bpf_jit_enable=0/\1bpf_jit_enable=1/' "$F/interp-raw.log" \
	> "$tmp/raw-jit.log"
expect report_raw_jit_mismatch 1 'FAIL +test_bpf.tests' \
	"$R/scripts/report.sh" --arch x86_64-interp "$tmp/raw-jit.log"

# A variant's list takes back an expected failure ("!TEST"): on Debian's configuration the
# key kfunc case passes (x86_64-distro), the other expected failure still counts as one.
expect report_variant_takes_back_xfail 1 'cases: 1 passed, 0 failed, 0 skipped, 0 xfail, 1 xpass' \
	"$R/scripts/report.sh" --arch x86_64-distro "$F/xfail-takeback.log"
expect report_xfail_without_takeback 1 'cases: 0 passed, 0 failed, 0 skipped, 0 xfail, 2 xpass' \
	"$R/scripts/report.sh" --arch x86_64 "$F/xfail-takeback.log"
# A KUnit module's suite: 6.1 numbers it after the built-in suites (3 here) with no plan;
# raw2ktap renumbers it, so that kunit.py reads the failed case and reports no parse error.
expect report_kunit_module 1 'Ran 1 tests: failed: 1 \(kunit\.py.*FAIL +ftrace_direct_ops\.ftrace_direct_ops\.direct_ops_after_ftrace_kill' \
	report_flat "$F/kunit-module.log"

# Evidence, not a gate: bisect-verify reports stale cells of the matrix and exits 0; a
# malformed matrix or a current cell that failed fails; --require-current (make send) refuses
# stale cells. The fixture matrix: the fixture series' cells on every arch as bisect.sh
# writes them (content keys of now: tree, harness, every test at its hash), all passed.
fixture_matrix() {	# SERIES-DIR [K ARCH VERDICT]: its matrix, one cell's verdict set
	(
		. "$R/scripts/lib.sh"
		. "$R/scripts/bisect-lib.sh"
		local k pfile pid arch v skips tests
		local -A tree
		mapfile -t pfiles < <(series_names "$1/series")
		tests=$(with_hashes all) || exit 1
		while IFS=$'\t' read -r k pfile; do tree[$k]=$pfile; done < <(series_trees "$1" "${pfiles[@]}")
		bisect_header
		k=0
		for pfile in "${pfiles[@]}"; do
			k=$((k + 1))
			pid=$(git patch-id --stable < "$1/$pfile" | cut -d' ' -f1)
			skips=allowed
			[ "$k" -lt "${#pfiles[@]}" ] || skips=judged
			for arch in $(expand_arches all); do
				v=0
				[ "$k $arch" != "${2:-} ${3:-}" ] || v=$4
				printf '%d\t%s\tsubject\t%s\t%s\t%s\t%s\t%s\tyes\tyes\t%s\t9\t0\t0\t0\t0\t60\t-\tno\t%s\n' \
					"$k" "$pfile" "$pid" "$arch" "${tree[$k]}" "$(harness_hash "$arch")" "$tests" "$v" "$skips"
			done
		done
	)
}
# change_last_patch DIR: a code change in the fixture series' last patch: the line it removes
# becomes a comment (a new tree after patch 3; patches 1 and 2 keep theirs).
change_last_patch() {
	local p
	p=$1/$(tail -1 "$1/series")
	sed -i -e 's/^@@ -73,7 +73,6 @@/@@ -73,7 +73,7 @@/' \
		-e 's|^-#error "planted build failure (bisection fixture)"$|&\n+/* The planted failure, removed. */|' "$p"
	grep -q '^+/\* The planted failure' "$p"
}
cp -r "$B" "$tmp/changed"
change_last_patch "$tmp/changed"
fixture_matrix "$B" > "$tmp/matrix.tsv"
bv() {	# SERIES-DIR ARGS...: bisect-verify.sh of that series
	local d=$1
	shift
	"$R/scripts/bisect-verify.sh" --series "$d/series" --patches "$d" "$@"
}
bv_flat() { bv "$@" 2>&1 | tr '\n' ' '; return "${PIPESTATUS[0]}"; }
expect evidence_all_current 0 'evidence: per-patch matrix: 9 of 9 cells current$' \
	bv "$B" --tsv "$tmp/matrix.tsv"
expect evidence_stale_reported_not_failed 0 \
	'evidence: per-patch matrix: 6 of 9 cells current; stale: patch 3 on x86_64, riscv64, arm64; refresh: make bisect' \
	bv "$tmp/changed" --tsv "$tmp/matrix.tsv"
expect evidence_gate_refuses_stale 1 'not current \(stale: patch 3 on x86_64, riscv64, arm64\)' \
	bv "$tmp/changed" --tsv "$tmp/matrix.tsv" --require-current
expect evidence_gate_passes_current 0 '9 of 9 cells current' \
	bv "$B" --tsv "$tmp/matrix.tsv" --require-current
fixture_matrix "$B" 2 arm64 1 > "$tmp/failed.tsv"
expect evidence_current_failure_fails 1 'patch 2 .* on arm64: verdict 1' \
	bv "$B" --tsv "$tmp/failed.tsv"
# A current cell whose build failed ran no test: still current, and a failure.
awk -F'\t' -v OFS='\t' '$1 == 2 && $5 == "x86_64" { $8 = "-"; $9 = "no"; $10 = "no"; $11 = "build failed"; $20 = "-" } { print }' \
	"$tmp/matrix.tsv" > "$tmp/build-failed.tsv"
expect evidence_current_build_failure_fails 1 '9 of 9 cells current.*patch 2 .* on x86_64: verdict build failed' \
	bv_flat "$B" --tsv "$tmp/build-failed.tsv"
fixture_matrix "$B" 3 arm64 1 > "$tmp/stale-failed.tsv"
expect evidence_stale_failure_reported 0 'stale: patch 3 on' \
	bv "$tmp/changed" --tsv "$tmp/stale-failed.tsv"
# Another harness (one cell run with an older guest init), one test fewer or at another
# version, the last patch's skips not judged: the cell is stale, reported, not failed.
awk -F'\t' -v OFS='\t' '$1 == 1 && $5 == "riscv64" { $7 = "0000000000000000" } { print }' \
	"$tmp/matrix.tsv" > "$tmp/other-harness.tsv"
expect evidence_other_harness_stale 0 '8 of 9 cells current; stale: patch 1 on riscv64;' \
	bv "$B" --tsv "$tmp/other-harness.tsv"
awk -F'\t' -v OFS='\t' '$1 == 2 && $5 == "x86_64" { sub(/wx_check:[0-9a-f]+/, "wx_check:00000000", $8) } { print }' \
	"$tmp/matrix.tsv" > "$tmp/changed-test.tsv"
expect evidence_changed_test_stale 0 '8 of 9 cells current; stale: patch 2 on x86_64;' \
	bv "$B" --tsv "$tmp/changed-test.tsv"
sed 's/\tjudged$/\tallowed/' "$tmp/matrix.tsv" > "$tmp/skips-allowed.tsv"
expect evidence_last_patch_judges_skips 0 '6 of 9 cells current; stale: patch 3 on' \
	bv "$B" --tsv "$tmp/skips-allowed.tsv"
sed '3s/\t[a-z]*$//' "$tmp/matrix.tsv" > "$tmp/malformed.tsv"
expect evidence_malformed_fails 1 'line 3: 19 fields, not 20' bv "$B" --tsv "$tmp/malformed.tsv"
sed '1s/^#patch/#cell/' "$tmp/matrix.tsv" > "$tmp/header.tsv"
expect evidence_other_header_fails 1 "does not start with bisect.sh's header" \
	bv "$B" --tsv "$tmp/header.tsv"
# make send refuses a series whose matrix is stale, naming the cells, and writes no mail: a
# copy of the repository with the fixture series, its matrix, and patch 3 changed since.
send_refuses_stale() {
	local repo=$tmp/repo
	mkdir -p "$repo"
	(cd "$R" && tar --exclude=.git -cf - .) | tar -xf - -C "$repo"
	git -C "$repo" init -q
	rm "$repo"/patches/*
	cp "$tmp"/changed/*.patch "$repo/patches/" && cp "$tmp/changed/series" "$repo/series"
	cp "$tmp/matrix.tsv" "$repo/results/bisect.tsv"
	"$repo/scripts/send.sh" --out "$tmp/mails"
	local rc=$?
	[ ! -e "$tmp/mails" ] || { echo "send.sh wrote $tmp/mails"; rc=99; }
	return $rc
}
expect send_refuses_stale_matrix 1 "not current \(stale: patch 3 on x86_64, riscv64, arm64\)" \
	send_refuses_stale
# The same rule for the runs on the distributions' configurations (distro-verify): a summary
# as scripts/run.sh writes it for each distro arch, keyed to the fixture series (run_key).
fixture_distro_runs() {	# SERIES-DIR DIR [ARCH VERDICT]: the summaries, one run's verdict set
	(
		. "$R/scripts/lib.sh"
		. "$R/scripts/bisect-lib.sh"
		local a tree
		mapfile -t pfiles < <(series_names "$1/series")
		tree=$(series_trees "$1" "${pfiles[@]}" | tail -1 | cut -f2)
		mkdir -p "$2"
		for a in $(arch_names | grep -- '-distro'); do
			{ echo "# Generated by: make distro ARCH=${a%%-distro*} (scripts/run.sh $a)"
			  echo "# Build: 60 s (scripts/build.sh $a, ccache in \$KSERIES_CACHE)"
			  echo "# Key: $(run_key "$a" "$tree")"
			  echo "cases: 9 passed, 0 failed"
			  if [ "$a" = "${3:-}" ]; then echo "verdict: $4 (failed)"; else echo "verdict: 0 (passed)"; fi
			} > "$2/$a.txt"
		done
	)
}
dv() {	# SERIES-DIR ARGS...: distro-verify.sh of that series
	local d=$1
	shift
	"$R/scripts/distro-verify.sh" --series "$d/series" --patches "$d" "$@"
}
fixture_distro_runs "$B" "$tmp/distro"
expect distro_all_current 0 'evidence: distribution runs: 6 of 6 current$' dv "$B" --results "$tmp/distro"
expect distro_stale_reported_not_failed 0 \
	'evidence: distribution runs: 0 of 6 current; stale: arm64-distro, arm64-distro-interp, riscv64-distro, riscv64-distro-interp, x86_64-distro, x86_64-distro-interp; refresh: make distro ARCH=arm64; make distro ARCH=riscv64; make distro ARCH=x86_64$' \
	dv "$tmp/changed" --results "$tmp/distro"
expect distro_gate_refuses_stale 1 'not current \(stale: arm64-distro, arm64-distro-interp, riscv64-distro, .*, x86_64-distro-interp\)' \
	dv "$tmp/changed" --results "$tmp/distro" --require-current
fixture_distro_runs "$B" "$tmp/distro-failed" arm64-distro 2
expect distro_current_failure_fails 1 'arm64-distro: verdict 2 \(failed\)' \
	dv "$B" --results "$tmp/distro-failed"
expect distro_stale_failure_reported 0 '0 of 6 current' dv "$tmp/changed" --results "$tmp/distro-failed"
cp -r "$tmp/distro" "$tmp/distro-missing"
rm "$tmp/distro-missing/riscv64-distro.txt"
sed -i 's/\(config debian:amd64:\)[0-9a-f]*/\10000/' "$tmp/distro-missing/x86_64-distro.txt"
expect distro_missing_or_other_config_stale 0 '4 of 6 current; stale: riscv64-distro \(no run\), x86_64-distro; refresh: make distro ARCH=riscv64; make distro ARCH=x86_64$' \
	dv "$B" --results "$tmp/distro-missing"
cp -r "$tmp/distro" "$tmp/distro-malformed"
sed -i '/^# Key: /d' "$tmp/distro-malformed/arm64-distro.txt"
expect distro_malformed_fails 1 "arm64-distro.txt is not a summary" dv "$B" --results "$tmp/distro-malformed"
cp -r "$tmp/distro" "$tmp/distro-noverdict"
sed -i '/^verdict: /d' "$tmp/distro-noverdict/x86_64-distro-interp.txt"
expect distro_no_verdict_fails 1 "x86_64-distro-interp.txt is not a summary" \
	dv "$B" --results "$tmp/distro-noverdict"
# A distro run is judged with its base arch's lists too (report.sh), and built without
# common.config: the key has those lists and not that fragment.
distro_harness_paths() {
	local p
	p=$(. "$R/scripts/lib.sh" && . "$R/scripts/bisect-lib.sh" && harness_paths x86_64-distro) || return 1
	grep -qx qemu/xskip.x86_64.list <<< "$p" && grep -qx qemu/xfail.x86_64.list <<< "$p" &&
		grep -qx qemu/config/distro.config <<< "$p" && ! grep -q common.config <<< "$p" ||
		{ echo "harness_paths x86_64-distro:"; echo "$p"; return 1; }
}
expect distro_key_has_base_arch_lists 0 '' distro_harness_paths

# qemu/bisect-tests.list: a patch of arm64's JIT gives an x86_64 cell the smoke set only and
# an arm64 cell the JIT's tests; a path no line maps, the end of a part and the last patch
# give every test.
selection() {	# K N ARCH PATH...: what bisect_tests selects for a patch changing PATHs
	local k=$1 n=$2 karch=$3 p
	shift 3
	for p in "$@"; do printf 'diff --git a/%s b/%s\n' "$p" "$p"; done > "$tmp/sel.patch"
	(. "$R/scripts/lib.sh" && . "$R/scripts/bisect-lib.sh" && bisect_tests "$k" "$n" "$tmp/sel.patch" "$karch")
}
expect select_other_arch_smoke 0 '^wx_check$' selection 4 20 x86_64 arch/arm64/net/bpf_jit_comp.c
expect select_own_arch_jit_tests 0 '^test_bpf,.*bpf_percpu.*,wx_check' \
	selection 4 20 arm64 arch/arm64/net/bpf_jit_comp.c
expect select_unmapped_path_all 0 '^all$' selection 3 20 x86_64 kernel/bpf/core.c fs/namei.c
expect select_end_of_part_all 0 '^all$' selection 9 28 x86_64 MAINTAINERS
expect select_last_patch_all 0 '^all$' selection 20 20 x86_64 MAINTAINERS
# Patch 1 (ftrace alone) must not run bpf_batch, whose single_detach_fails shows the bug
# patch 2 fixes; patch 2 (trampolines) and the bpftool patch must.
expect select_ftrace_without_bpf_batch 0 '^ftrace_direct_cow,bpf_tramp_execmem,test_progs,wx_check,ftrace_direct_ops$' \
	selection 1 39 x86_64 kernel/trace/ftrace.c
expect select_trampoline_bpf_batch 0 '^bpf_batch,' selection 2 39 x86_64 kernel/bpf/trampoline.c
expect select_bpftool_bpf_batch 0 '^bpf_batch,wx_check$' selection 34 39 x86_64 tools/bpf/bpftool/link.c
# bpftool only for an arch file that asks for it (BPFTOOL): arm64's does not.
expect bpftool_not_asked 0 '^0$' bash -c "set -o pipefail; '$R/scripts/build-bpftool.sh' arm64 | wc -l"
expect bpftool_unknown_arch 64 "valid names: .*x86_64" "$R/scripts/build-bpftool.sh" x86
expect bench_batch_unknown_arch 64 "unknown arch 'arm64'; the names: x86_64 x86_64-distro" \
	"$R/scripts/bench-batch.sh" arm64
expect boot_kernel_needs_initrd 64 'go together' "$R/scripts/boot.sh" --kernel /dev/null x86_64

# boot.sh boots a build only of the tree asked for (build.sh records it in the build
# directory): a cache of its own with a small git tree for the sources, and a build
# directory with no image, so that a build that passes the check stops at "no kernel image"
# (exit 5, a harness error).
tree_cache() {	# prints the cache, its source tree and the x86_64 build directory
	local c=$tmp/tree-cache src
	src=$c/linux-$(. "$R/base.conf" && echo "$BASE_DEB_VERSION")
	if [ ! -d "$src/.git" ]; then
		mkdir -p "$src" && git -C "$src" init -q && echo one > "$src/file" &&
			git -C "$src" add file &&
			git -C "$src" -c user.name=t -c user.email=t@t.invalid commit -q -m one || return 1
	fi
	echo "$c" "$src" "$(KSERIES_CACHE=$c; . "$R/scripts/lib.sh" && load_arch x86_64 && echo "$KS_BUILD")"
}
boot_tree() {	# RECORD [BOOT-ARGS...]: boot.sh x86_64 with the build recording RECORD
	local c src b record=$1
	shift
	read -r c src b <<< "$(tree_cache)" || return 1
	git -C "$src" checkout -q -- . && git -C "$src" clean -q -f -d
	mkdir -p "$b"
	rm -f "$b/source-tree"
	rm -rf "$c/out"
	case $record in
	none) ;;
	head) git -C "$src" rev-parse 'HEAD^{tree}' > "$b/source-tree" ;;
	initramfs-*)
		# An initramfs packed long before the build's last run, from the build as it
		# is (same tree and .config), from another tree's build, from another .config,
		# or with no record of its build.
		mkdir -p "$c/out/x86_64"
		touch -d '2001-01-01' "$c/out/x86_64/initramfs.cpio.gz"
		echo CONFIG_ONE=y > "$b/.config"
		git -C "$src" rev-parse 'HEAD^{tree}' > "$b/source-tree"
		echo "tree $(cat "$b/source-tree") config $(sha256sum < "$b/.config" | cut -c1-64)" \
			> "$c/out/x86_64/initramfs.build"
		case $record in
		initramfs-other-tree) sed -i 's/^tree [0-9a-f]*/tree 3333333333333333333333333333333333333333/' \
			"$c/out/x86_64/initramfs.build" ;;
		initramfs-other-config) echo CONFIG_TWO=y >> "$b/.config" ;;
		initramfs-unrecorded) rm "$c/out/x86_64/initramfs.build" ;;
		esac ;;
	dirty) git -C "$src" rev-parse 'HEAD^{tree}' > "$b/source-tree"; echo two >> "$src/file" ;;
	*) echo "$record" > "$b/source-tree" ;;
	esac
	KSERIES_CACHE=$c "$R/scripts/boot.sh" "$@" x86_64
}
expect boot_refuses_other_tree 5 "is of tree 1111111111111111111111111111111111111111, not of tree [0-9a-f]{40}, which was asked for; rebuild it from those sources: scripts/build.sh x86_64" \
	boot_tree 1111111111111111111111111111111111111111
expect boot_refuses_unrecorded_tree 5 'is of no recorded tree .*scripts/build.sh x86_64' boot_tree none
expect boot_refuses_changed_sources 5 'not of tree [0-9a-f]{40}, which was asked for' boot_tree dirty
# The initramfs must be packed from the build as it is: a build that changed nothing (a
# no-op rebuild, as every run.sh of a variant sharing the build does) leaves it valid.
expect boot_takes_initramfs_of_same_build 5 'no kernel image' boot_tree initramfs-same
expect boot_refuses_initramfs_of_other_tree 5 'packed from tree 3333333333333333333333333333333333333333 config [0-9a-f]{64}, not from the x86_64 build there now \(tree [0-9a-f]{40} config .*scripts/initramfs.sh x86_64' \
	boot_tree initramfs-other-tree
expect boot_refuses_initramfs_of_other_config 5 'packed from tree [0-9a-f]{40} config [0-9a-f]{64}, not from the x86_64 build there now .*scripts/initramfs.sh x86_64' \
	boot_tree initramfs-other-config
expect boot_refuses_unrecorded_initramfs 5 'packed from no recorded build, .*scripts/initramfs.sh x86_64' \
	boot_tree initramfs-unrecorded
expect boot_takes_its_tree 5 'no kernel image' boot_tree head
expect boot_takes_tree_asked_for 5 'no kernel image' \
	boot_tree 2222222222222222222222222222222222222222 --tree 2222222222222222222222222222222222222222
expect boot_tree_not_with_kernel 64 'not --kernel' \
	"$R/scripts/boot.sh" --tree 2222 --kernel /dev/null --initrd /dev/null x86_64

# A boot hung in the firmware (the console ends with FIRMWARE_LAST_LINE, riscv64's OpenSBI
# banner) is stopped and booted once more, and the summary says so; a kernel that printed
# its banner and then hung is not booted again. A fake QEMU first in PATH plays the boots,
# one word of its script per boot: "hang" (the banner, then nothing), "kernel" (the banner,
# the kernel's first lines, then nothing), "pass" (the kernel's first lines and
# tests/fixtures/pass.log, then power off), each boot's lines up to its hang in one write.
# The firmware wait is 3 s, the wall clock TIMEOUT, longer for a hang that boot.sh must stop
# before it.
fake_boots() {	# TIMEOUT SCRIPT...: boot.sh riscv64 on the fake
	local d=$tmp/fake-qemu rc=0 timeout=$1
	shift
	rm -rf "$d" && mkdir -p "$d/bin" && printf '%s\n' "$@" > "$d/script"
	cat > "$d/bin/qemu-system-riscv64" <<-EOS
	#!/bin/bash
	n=\$(( \$(cat "$d/count" 2>/dev/null || echo 0) + 1 )); echo \$n > "$d/count"
	sbi='OpenSBI v1.1\\nBoot HART MEDELEG         : 0x0000000000f0b509\\n'
	kernel='Linux version 6.1.192+\\nearlycon: ns16550a0 at MMIO 0x0000000010000000\\n'
	case \$(sed -n "\${n}p" "$d/script") in
	hang) printf "\$sbi"; exec sleep 60 ;;
	kernel) printf "\$sbi\$kernel"; exec sleep 60 ;;
	pass) printf "\$sbi\$kernel"; cat "$F/pass.log" ;;
	esac
	EOS
	chmod +x "$d/bin/qemu-system-riscv64"
	touch "$d/Image" "$d/initramfs"
	PATH=$d/bin:$PATH KSERIES_FIRMWARE_WAIT=3 "$R/scripts/boot.sh" --timeout "$timeout" \
		--log "$d/console.log" --kernel "$d/Image" --initrd "$d/initramfs" riscv64 || rc=$?
	echo "boots: $(cat "$d/count")"
	[ ! -s "$d/console.log.firmware-hang" ] || echo "kept: console.log.firmware-hang"
	return "$rc"
}
expect boot_again_after_firmware_hang 0 \
	"booted twice: the first boot hung before the kernel's first message \\(its console: .*console.log.firmware-hang\\)" \
	fake_boots 15 hang pass
expect boot_again_keeps_first_console 0 '^kept: console.log.firmware-hang$' fake_boots 15 hang pass
expect boot_firmware_hang_twice 3 "guest timed out before the kernel's first message" \
	fake_boots 15 hang hang
expect boot_firmware_hang_twice_boots 3 '^boots: 2$' fake_boots 15 hang hang
expect boot_kernel_hang_not_again 3 '^guest timed out$' fake_boots 6 kernel pass
expect boot_kernel_hang_boots_once 3 '^boots: 1$' fake_boots 6 kernel pass
expect boot_pass_boots_once 0 '^boots: 1$' fake_boots 15 pass
# The console CI recorded of a hang in the firmware, judged again on the host.
expect report_firmware_hang 3 "^guest timed out before the kernel's first message" \
	"$R/scripts/report.sh" --timed-out --arch riscv64-interp "$F/firmware-hang.log"
expect report_timeout_not_firmware 3 '^guest timed out$' \
	"$R/scripts/report.sh" --timed-out --arch x86_64 "$F/firmware-hang.log"
# A riscv64 console without the early console's line fails: a hang before the serial driver
# would have looked like one in the firmware.
expect report_requires_earlycon 1 "no 'earlycon:' line: the early console \\(EARLYCON of qemu/arch/riscv64.conf\\) did not register" \
	"$R/scripts/report.sh" --arch riscv64 "$F/pass.log"

expect shellcheck_clean 0 '' shellcheck -x -S warning -e SC2034,SC1090,SC2148 \
	"$R"/scripts/*.sh "$R"/tests/*.sh "$R/.ci/run"

ktap_end
