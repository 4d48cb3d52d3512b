#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: bisect-test.sh [-h|--help] [ARCH]

Harness test of scripts/bisect.sh: bisect the fixture series tests/fixtures/series-bisect
(patch 1 builds and passes, patch 2 plants a build error, patch 3 removes it) on ARCH
(default x86_64), booting only test_vmalloc (--tests), and check that the matrix has one row
per patch, that patch 2 is named as the first bad patch with its reproducer, that patches 1
and 3 pass, that patch 3, which gives patch 1's tree again, shares patch 1's boot (its image
is byte-identical), that subjects lose their [PATCH k/N] tag, and that a rerun of a renamed
copy of the series (one subject folded onto two lines) keeps the passed cells (same trees,
arch and harness: nothing booted) under the new file names and subjects and builds only the
failed one again, that the same series with a documentation file added by patch 1 (new
trees, byte-identical images) boots nothing: its cells take the earlier boot of their image,
and, after a code change in patch 3: that --budget 0 runs nothing, exits 0 and names the
cells left; that a run killed after building patch 3 keeps the rows it wrote (a well-formed
matrix) and that the next run builds nothing again, keeps patch 1, runs exactly patches 2
and 3 and boots patch 3's new image; and that bisect-verify then fails on patch 2, a current
cell that failed. Prints KTAP.

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

ktap_plan 14
# Start from no earlier fixture bisection: a boot an earlier run of this test left in
# bisect-other's image registry would stand in for this run's boots.
. "$R/scripts/lib.sh"
rm -rf "${KS_CACHE:?}/bisect-other"
rc=0
"$R/scripts/bisect.sh" --series "$F/series" --patches "$F" --out "$tmp/res" \
	--tests test_vmalloc "$arch" > "$tmp/out" 2>&1 || rc=$?
cell() { awk -F'\t' -v k="$1" '$1 == k { print $11 }' "$tmp/res/bisect.tsv"; }
check bisect_exits_1 '[ "$rc" -eq 1 ]'
check matrix_has_3_rows '[ "$(grep -vc "^#" "$tmp/res/bisect.tsv")" -eq 3 ]'
check names_patch_2 'grep -q "^first bad patch: 2/3 0002-lib-test_vmalloc-fixture-patch-two-breaks-the-build.patch ($arch: build failed)" "$tmp/out"'
check gives_reproducer 'grep -q "^reproduce: scripts/apply.sh --series .* --upto 2 --branch bisect && scripts/build.sh $arch && .* --append harness.only=test_vmalloc $arch" "$tmp/out"'
# Patch 3 restores patch 1's tree exactly: same image, so patch 1's boot is shared.
check patch_3_reuses_patch_1 '[ "$(awk -F"\t" "\$1 == 3 { print \$18 }" "$tmp/res/bisect.tsv")" = 1 ]'
check patches_1_and_3_pass '[ "$(cell 1)" = 0 ] && [ "$(cell 3)" = 0 ]'
check subject_untagged '[ "$(awk -F"\t" "\$1 == 1 { print \$3 }" "$tmp/res/bisect.tsv")" = "lib/test_vmalloc: fixture patch one (builds, passes)" ]'
# The same patches under another file name and [PATCH v2 k/N] tags, patch 1's subject folded
# onto two header lines: the rerun keeps the passed cells 1 and 3 (same trees) under the new
# name and the whole subject, and builds patch 2 again.
mkdir "$tmp/v2"
for p in "$F"/*.patch; do
	sed -e 's/^Subject: \[PATCH /Subject: [PATCH v2 /' \
		-e 's/^\(Subject: .* patch one\) (builds/\1\n (builds/' "$p" > "$tmp/v2/v2-${p##*/}"
done
(cd "$tmp/v2" && ls v2-*.patch) > "$tmp/v2/series"
rc2=0
"$R/scripts/bisect.sh" --series "$tmp/v2/series" --patches "$tmp/v2" --out "$tmp/res" \
	--tests test_vmalloc "$arch" > "$tmp/out" 2>&1 || rc2=$?
check kept_rows_renamed '[ "$rc2" -eq 1 ] && [ "$(grep -vc "^#" "$tmp/res/bisect.tsv")" -eq 3 ] &&
	[ "$(awk -F"\t" "\$1 == 1 { print \$2 \"|\" \$3 \"|\" \$11 \"|\" \$19 }" "$tmp/res/bisect.tsv")" = "v2-0001-lib-test_vmalloc-fixture-patch-one-builds-passes.patch|lib/test_vmalloc: fixture patch one (builds, passes)|0|yes" ] &&
	[ "$(awk -F"\t" "!/^#/ { printf \"%s\", \$19 }" "$tmp/res/bisect.tsv")" = yesnoyes ] &&
	grep -q "^bisect: 2 cell(s) current and kept, 1 to run" "$tmp/out" &&
	! grep -q "booted patch" "$tmp/out"'
# The same series with a file no build reads added by patch 1 (new trees, same images): the
# rerun builds every cell again, boots none, and cells 1 and 3 take patch 1's first boot.
mkdir "$tmp/v3"
for p in "$tmp"/v2/*.patch; do
	awk -v one="${p##*/}" 'one ~ /^v2-0001/ && !done && /^diff --git / {
		print "diff --git a/Documentation/kseries-fixture.txt b/Documentation/kseries-fixture.txt"
		print "new file mode 100644"
		print "--- /dev/null"
		print "+++ b/Documentation/kseries-fixture.txt"
		print "@@ -0,0 +1 @@"
		print "+A file no build reads."
		done = 1
	} { print }' "$p" > "$tmp/v3/${p##*/}"
done
cp "$tmp/v2/series" "$tmp/v3/series"
rc3=0
"$R/scripts/bisect.sh" --series "$tmp/v3/series" --patches "$tmp/v3" --out "$tmp/res" \
	--tests test_vmalloc "$arch" > "$tmp/out" 2>&1 || rc3=$?
check same_image_takes_earlier_boot '[ "$rc3" -eq 1 ] &&
	[ "$(awk -F"\t" "!/^#/ { printf \"%s|%s|%s;\", \$11, \$19, substr(\$18, 1, 4) }" "$tmp/res/bisect.tsv")" = "0|no|boot;build failed|no|-;0|no|boot;" ] &&
	grep -q "its image passed an earlier boot; not booted" "$tmp/out" && ! grep -q "booted patch" "$tmp/out"'

# A code change in patch 3: the line it removes becomes a kept constant (patch 3's tree and
# image are new; patches 1 and 2 keep theirs).
cp -r "$tmp/v3" "$tmp/v4"
p3=$tmp/v4/$(tail -1 "$tmp/v4/series")
sed -i -e 's/^@@ -73,7 +73,6 @@/@@ -73,7 +73,7 @@/' \
	-e 's|^-#error "planted build failure (bisection fixture)"$|&\n+static const char fixture_changed[] __used = "patch 3 changed";|' "$p3"
v4() { "$R/scripts/bisect.sh" --series "$tmp/v4/series" --patches "$tmp/v4" --out "$tmp/res" \
	--tests test_vmalloc "$@" "$arch"; }
cp "$tmp/res/bisect.tsv" "$tmp/before.tsv"
rc4=0
v4 --budget 0 > "$tmp/out" 2>&1 || rc4=$?
check budget_0_runs_nothing '[ "$rc4" -eq 0 ] && grep -q "^bisect: left for a later run: patches 2-3 on $arch$" "$tmp/out" &&
	cmp -s "$tmp/before.tsv" "$tmp/res/bisect.tsv" && ! grep -q "^bisect: built" "$tmp/out"'
# Killed once patch 3 is built (its boot, the run's last step, running or about to): the
# matrix is whole, patch 2's new row (written when its build failed) in it.
# (Patch 3's cell of the earlier runs goes first: its key file is what the kill waits for. In
# a session of its own: the kill reaches the boot and QEMU too, which hold the cache lock.)
rm -rf "$KS_CACHE/bisect-other/cells/$arch-3"
setsid "$R/scripts/bisect.sh" --series "$tmp/v4/series" --patches "$tmp/v4" --out "$tmp/res" \
	--tests test_vmalloc "$arch" > "$tmp/out" 2>&1 &
pid=$!
for _ in $(seq 1800); do
	[ ! -s "$KS_CACHE/bisect-other/cells/$arch-3/key" ] || break
	kill -0 "$pid" 2>/dev/null || break
	sleep 1
done
kill -TERM -- "-$pid" 2>/dev/null
wait "$pid" 2>/dev/null
for _ in $(seq 30); do
	pgrep -s "$pid" > /dev/null || break
	sleep 1
done
check killed_run_keeps_rows '[ -s "$KS_CACHE/bisect-other/cells/$arch-3/key" ] &&
	[ "$(head -1 "$tmp/res/bisect.tsv")" = "$(. "$R/scripts/lib.sh"; . "$R/scripts/bisect-lib.sh"; bisect_header)" ] &&
	[ "$(grep -vc "^#" "$tmp/res/bisect.tsv")" -eq 3 ] && grep -q "cut short" "$tmp/res/README.md"'
rc5=0
v4 > "$tmp/out" 2>&1 || rc5=$?
check rerun_runs_exactly_stale '[ "$rc5" -eq 1 ] &&
	grep -q "^bisect: 1 cell(s) current and kept, 2 to run" "$tmp/out" &&
	grep -q "^bisect: patch 3/3 on $arch: built by an earlier run" "$tmp/out" &&
	grep -q "^bisect: booted patch 3/3 on $arch" "$tmp/out" && ! grep -q "booted patch 1/" "$tmp/out"'
check rerun_new_image_passes '[ "$(awk -F"\t" "\$1 == 3 { print \$11 \"|\" \$18 }" "$tmp/res/bisect.tsv")" = "0|-" ] &&
	grep -q "^first bad patch: 2/3 " "$tmp/out"'
rc6=0
"$R/scripts/bisect-verify.sh" --series "$tmp/v4/series" --patches "$tmp/v4" --tsv "$tmp/res/bisect.tsv" \
	--tests test_vmalloc > "$tmp/out" 2>&1 || rc6=$?
check verify_fails_current_failure '[ "$rc6" -eq 1 ] &&
	grep -q "3 of 9 cells current; stale: patches 1-3 on " "$tmp/out" &&
	grep -q "patch 2 (v2-0002-.*) on $arch: verdict build failed" "$tmp/out"'
ktap_end
