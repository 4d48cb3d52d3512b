#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: planted-test.sh [-h|--help] [--save DIR] [ARCH]

Boot the already built ARCH guest (default x86_64) with planted failures and check that
scripts/boot.sh reports each with its exit code and names it: a failing test (test_bpf asked
for a test that does not exist) 1, a kernel panic (rdinit=/nonexistent: no init, no root) 2, a
guest timeout 3, a boot with the console on a VT the guest does not have (no KTAP) 4, and the
planted failures of qemu/guest/planted.list: a test missing from the initramfs (an unexpected
skip) 1, a program killed by SIGSEGV after its last passing result 1, a program that hangs
(the guest init's per-test watchdog, set to 20 s) 3. Prints KTAP.

Options:
  --save DIR   keep the console logs as DIR/{fail,panic,timeout,noktap}.log (the fixtures
               of tests/harness-test.sh are made this way, plus pass.log from a normal run)
  -h, --help   show this help"
set -uo pipefail
save=
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--save) save=$2; shift ;;
	-*) echo "$usage" >&2; exit 64 ;;
	*) break ;;
	esac
	shift
done
arch=${1:-x86_64}
R=$(cd "$(dirname "$0")/.." && pwd)
. "$R/tests/ktap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# planted NAME CODE PATTERN BOOT-ARGS...: boot.sh with BOOT-ARGS exits with CODE, and its
# output matches PATTERN (if set).
planted() {
	local name=$1 code=$2 pattern=$3 rc=0
	shift 3
	"$R/scripts/boot.sh" --log "$tmp/$name.log" "$@" "$arch" > "$tmp/out" 2>&1 || rc=$?
	[ "$rc" -eq "$code" ] && { [ -z "$pattern" ] || grep -q -E -- "$pattern" "$tmp/out"; }
	ktap_result "planted_$name" $? "$tmp/out" "expected exit $code and /$pattern/, got $rc:"
	[ -z "$save" ] || cp "$tmp/$name.log" "$save/$name.log"
}

ktap_plan 7
planted fail 1 'FAIL +test_bpf' --append "harness.only=test_bpf test_bpf.test_name=NO_SUCH_TEST"
planted panic 2 '' --append "rdinit=/nonexistent"
planted timeout 3 'guest timed out' --timeout 15
planted noktap 4 'no KTAP' --append "console=tty0 harness.only="
planted missing_test 1 'SKIP +missing_program \(unexpected' \
	--append "harness.list=planted harness.only=missing_program"
planted crash_after_results 1 'FAIL +crash_after_results.exit_status' \
	--append "harness.list=planted harness.only=crash_after_results"
planted hang 3 'test hang still running after 20 s' \
	--append "harness.list=planted harness.only=hang harness.test_timeout=20"
ktap_end
