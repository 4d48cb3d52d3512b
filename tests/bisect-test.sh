#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: bisect-test.sh [-h|--help] [ARCH]

Harness test of scripts/bisect.sh: bisect the fixture series tests/fixtures/series-bisect
(patch 1 builds and passes, patch 2 plants a build error, patch 3 removes it) on ARCH
(default x86_64), booting only test_vmalloc, and check that the matrix has one row per patch,
that patch 2 is named as the first bad patch with its reproducer, that patches 1 and 3 pass,
that patch 3, which gives patch 1's tree again, reuses patch 1's boot, that subjects lose
their [PATCH k/N] tag, and that a rerun with --from past the last patch keeps every row under
the file names and subjects of a renamed copy of the series (one subject folded onto two
lines). Prints KTAP.

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

ktap_plan 8
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
check subject_untagged '[ "$(awk -F"\t" "\$1 == 1 { print \$3 }" "$tmp/res/bisect.tsv")" = "lib/test_vmalloc: fixture patch one (builds, passes)" ]'
# The same patches under another file name and [PATCH v2 k/N] tags, patch 1's subject folded
# onto two header lines: --from 4 keeps every row (same patch-ids, nothing built) under the
# new name and the whole subject.
mkdir "$tmp/v2"
for p in "$F"/*.patch; do
	sed -e 's/^Subject: \[PATCH /Subject: [PATCH v2 /' \
		-e 's/^\(Subject: .* patch one\) (builds/\1\n (builds/' "$p" > "$tmp/v2/v2-${p##*/}"
done
(cd "$tmp/v2" && ls v2-*.patch) > "$tmp/v2/series"
rc2=0
"$R/scripts/bisect.sh" --series "$tmp/v2/series" --patches "$tmp/v2" --out "$tmp/res" \
	--from 4 "$arch" > "$tmp/out" 2>&1 || rc2=$?
check kept_rows_renamed '[ "$rc2" -eq 1 ] && [ "$(grep -vc "^#" "$tmp/res/bisect.tsv")" -eq 3 ] &&
	[ "$(awk -F"\t" "\$1 == 1 { print \$2 \"|\" \$3 \"|\" \$8 }" "$tmp/res/bisect.tsv")" = "v2-0001-lib-test_vmalloc-fixture-patch-one-builds-passes.patch|lib/test_vmalloc: fixture patch one (builds, passes)|0" ] &&
	grep -q "^Every row kept from the previous matrix" "$tmp/res/README.md"'
ktap_end
