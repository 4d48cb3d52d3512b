#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: bisect-test.sh [-h|--help] [ARCH]

Harness test of scripts/bisect.sh: bisect the fixture series tests/fixtures/series-bisect
(patch 1 builds and passes, patch 2 plants a build error, patch 3 removes it) on ARCH
(default x86_64), booting only test_vmalloc, and check that the matrix has one row per patch,
that patch 2 is named as the first bad patch with its reproducer, that patches 1 and 3 pass,
and that patch 3, which gives patch 1's tree again, reuses patch 1's boot. Prints KTAP.

Options:
  -h, --help   show this help"
set -uo pipefail
case "${1:-}" in
-h|--help) echo "$usage"; exit 0 ;;
-*) echo "$usage" >&2; exit 64 ;;
esac
arch=${1:-x86_64}
R=$(cd "$(dirname "$0")/.." && pwd)
F=$R/tests/fixtures/series-bisect
. "$R/tests/ktap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# check NAME CONDITION: CONDITION (shell code) holds; else show bisect.sh's output.
check() {
	eval "$2"
	ktap_result "$1" $? "$tmp/out" "scripts/bisect.sh said:"
}

ktap_plan 6
rc=0
"$R/scripts/bisect.sh" --series "$F/series" --patches "$F" --out "$tmp/res" \
	--append harness.only=test_vmalloc "$arch" > "$tmp/out" 2>&1 || rc=$?
cell() { awk -F'\t' -v k="$1" '$1 == k { print $8 }' "$tmp/res/bisect.tsv"; }
check bisect_exits_1 '[ "$rc" -eq 1 ]'
check matrix_has_3_rows '[ "$(grep -vc "^#" "$tmp/res/bisect.tsv")" -eq 3 ]'
check names_patch_2 'grep -q "^first bad patch: 2/3 0002-lib-test_vmalloc-fixture-patch-two-breaks-the-build.patch ($arch: build failed)" "$tmp/out"'
check gives_reproducer 'grep -q "^reproduce: scripts/apply.sh --series .* --upto 2 --branch bisect && scripts/build.sh $arch && .* --append harness.only=test_vmalloc $arch" "$tmp/out"'
# Patch 3 restores patch 1's tree exactly: same image, so patch 1's boot is reused.
check patch_3_reuses_patch_1 '[ "$(awk -F"\t" "\$1 == 3 { print \$15 }" "$tmp/res/bisect.tsv")" = 1 ]'
check patches_1_and_3_pass '[ "$(cell 1)" = 0 ] && [ "$(cell 3)" = 0 ]'
ktap_end
