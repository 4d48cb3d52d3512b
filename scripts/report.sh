#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: report.sh [-h|--help] [--timed-out | --qemu-exit CODE] [--allow-skips] [--arch NAME]
                 [--out FILE] [--cases FILE] [--firmware-hang FILE] CONSOLE_LOG

Judge one guest console log: scan it for kernel splats (qemu/splat.patterns), turn the raw
output of its tests into KTAP (scripts/raw2ktap.c), parse the KTAP with the kernel's own
tools/testing/kunit/kunit.py parse (from the base tree), apply the
expected failures of qemu/xfail.list and of the arch (qemu/xfail.ARCH.list, see below) and
the expected skips of qemu/xskip.list and qemu/xskip.ARCH.list (same format), print a
summary (and write it to FILE with --out). A skipped case that no expected-skip list names
(a test missing from the build, a program that gave up) fails the run: listed as
'SKIP ... (unexpected: no qemu/xskip*.list names it)'.
Exit codes as scripts/boot.sh: 0 passed (at least one case passed, none failed, every skip
expected), 1 test failed, unexpected skip, nothing passed or a kernel message the arch
requires missing (BOOT_LINES of qemu/arch/NAME.conf, with --arch), 2 splat (also: QEMU stopped by
the guest), 3 timeout (the boot's, or a test's: the guest init's watchdog names it), 4 no
KTAP, 5 QEMU failed (crashed on the host, or did not start).

Options:
  --timed-out  the guest was stopped by the wall-clock timeout, or by scripts/boot.sh when
               its console still ended with the firmware's last line 120 s in
  --qemu-exit CODE  QEMU exited with CODE (not 0, not the timeout's): a guest fault when the
               log has QEMU's TCG fatal error ('qemu: fatal:', code the guest made QEMU give
               up on), verdict 2; otherwise a harness error (QEMU crashed or did not start),
               verdict 5
  --debug      a make debug run: qemu/xskip.debug.list (and xfail.debug.list) apply last
  --allow-skips  unexpected skips do not fail the run (the unpatched base and the per-patch
               matrix, whose early patches lack the tests of later ones)
  --arch NAME  the arch (qemu/arch/NAME.conf): the summary header, its expected failures and
               skips, the kernel messages its console must show (BOOT_LINES, and the
               early console's own line with EARLYCON)
  --out FILE   also write the summary to FILE
  --cases FILE write every case to FILE, one line SUITE.CASE<TAB>STATUS (PASS, FAIL, SKIP,
               XSKIP, XFAIL, XPASS, ERROR: expected failures and skips applied)
  --firmware-hang FILE  the console of an earlier boot of the same run that hung before the
               kernel's first message (scripts/boot.sh booted again): named in the summary
  -h, --help   show this help"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

timed_out=
debug=
qemu_exit=
allow_skips=
arch=
outfile=
casefile=
fw_hang_log=
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--timed-out) timed_out=1 ;;
	--allow-skips) allow_skips=1 ;;
	--debug) debug=1 ;;
	--qemu-exit) [ $# -ge 2 ] || { echo "$usage" >&2; exit 64; }; qemu_exit=$2; shift ;;
	--arch) arch=$2; shift ;;
	--out) outfile=$2; shift ;;
	--cases) casefile=$2; shift ;;
	--firmware-hang) [ $# -ge 2 ] || { echo "$usage" >&2; exit 64; }; fw_hang_log=$2; shift ;;
	-*) echo "$usage" >&2; exit 64 ;;
	*) break ;;
	esac
	shift
done
[ $# -eq 1 ] || { echo "$usage" >&2; exit 64; }
log=$1
[ -f "$log" ] || die "no console log $log"
kunit=$KS_SRC/tools/testing/kunit/kunit.py
[ -f "$kunit" ] || die "$kunit missing (run scripts/fetch-base.sh)"
command -v jq >/dev/null || die "jq missing (run scripts/deps.sh)"
raw2ktap=$(host_tool raw2ktap)

# The arch file's facts for the judging (BOOT_LINES, EARLYCON, FIRMWARE_LAST_LINE), when
# --arch names one; an unknown name only labels the summary.
BOOT_LINES='' EARLYCON='' FIRMWARE_LAST_LINE=''
[ -z "$arch" ] || [ ! -f "$KS_ROOT/qemu/arch/$arch.conf" ] || load_arch "$arch"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
summary=$tmp/summary

[ -z "$casefile" ] || : > "$casefile"
splats=$(grep -a -n -E -f <(splat_patterns) "$log" | head -20 || true)
verdict=0
{
	echo "arch: ${arch:-?}  log: $log"
	if grep -a -q -E '(K?TAP version [0-9]+)' "$log"; then
		# The guest's own KTAP follows its marker line; anything before it (KTAP printed by
		# built-in KUnit during boot, on a verbose console) is not ours to parse. The tests'
		# raw output becomes KTAP here (scripts/raw2ktap.c; a console whose guest converted
		# it itself passes unchanged).
		if grep -a -q '^# harness: guest init' "$log"; then
			sed -n '/^# harness: guest init/,$p' "$log"
		else
			cat "$log"
		fi | "$raw2ktap" > "$tmp/ktap.log" || die "scripts/raw2ktap.c could not convert $log"
		# kunit.py exits 1 on any failed test; the JSON is judged below, with xfails.
		python3 "$kunit" parse --json="$tmp/result.json" "$tmp/ktap.log" \
			> "$tmp/kunit.txt" 2>&1 || true
		sed -e 's/\x1b\[[0-9;]*m//g' "$tmp/kunit.txt" |
			sed -n -E 's/^\[[0-9:]+\] ((=|Testing complete|\[ERROR\]).*)/\1/p'
		echo "(kunit.py parse: $kunit)"
		if ! jq -r 'def cases(p): (.test_cases[] | [p + .name, .status]),
			(.sub_groups[] | .name as $n | cases(p + $n + "."));
			cases("") | @tsv' "$tmp/result.json" > "$tmp/cases.tsv" 2>&1; then
			echo "cannot read kunit.py's JSON:"
			sed 's/^/  /' "$tmp/kunit.txt" "$tmp/cases.tsv" | tail -10
			: > "$tmp/cases.tsv"
		fi
		# Expected failures and skips of every arch, of the arch and its variants (x86_64,
		# arm64 for arm64, arm64-vhe and arm64-smp4), of one variant: each line gets its
		# file name.
		# A variant's or the debug build's list may take back an expected failure or skip
		# of the lists before it with a line "!TEST<TAB>REASON": a job that exists to run a
		# case, a configuration (make distro) that has what the case needs.
		for kind in xfail xskip; do
			for f in $kind "$kind.${arch%%-*}" "$kind.$arch" ${debug:+$kind.debug}; do
				[ -n "$arch" ] || [ "$f" = $kind ] || [ "$f" = $kind.debug ] || continue
				[ -f "$KS_ROOT/qemu/$f.list" ] || continue
				grep -v -e '^#' -e '^$' "$KS_ROOT/qemu/$f.list" | sed "s|\$|\tqemu/$f.list|" || true
			done | awk '!seen[$0]++' > "$tmp/$kind"
		done
		# A failed case is followed by its diagnostic lines ("# CASE: ..."), at most three,
		# so that a summary alone (CI's excerpt, results/) says why.
		awk -F'\t' -v xf="$tmp/xfail" -v xs="$tmp/xskip" -v cf="$casefile" \
			-v ktap="$tmp/ktap.log" '
			function diag(name,    c, l, k) {
				c = name
				sub(/^[^.]*\./, "", c)
				k = 0
				while (k < 3 && (getline l < ktap) > 0)
					if (index(l, "# " c ": ")) {
						sub(/^[ \t]*# /, "", l)
						printf "        %s\n", substr(l, 1, 400)
						k++
					}
				close(ktap)
			}
			BEGIN {
				while ((getline l < xf) > 0) {
					split(l, f, "\t")
					if (f[1] ~ /^!/) {
						delete x[substr(f[1], 2)]
						continue
					}
					x[f[1]] = f[2]
					file[f[1]] = f[3]
				}
				while ((getline l < xs) > 0) {
					split(l, f, "\t")
					if (f[1] ~ /^!/)
						delete xskip[substr(f[1], 2)]
					else
						xskip[f[1]] = f[2]
				}
			}
			{
				s = $2
				if ($1 in x)
					s = (s == "PASS") ? "XPASS" : (s == "FAIL" ? "XFAIL" : s)
				if (s == "SKIP" && ($1 in xskip))
					s = "XSKIP"
				n[s]++
				if (cf != "")
					printf "%s\t%s\n", $1, s > cf
				if (s == "XFAIL" || s == "XPASS")
					printf "  %-5s %s (%s: %s)\n", s, $1, file[$1], x[$1]
				else if (s == "SKIP")
					printf "  SKIP  %s (unexpected: no qemu/xskip*.list names it)\n", $1
				else if (s == "XSKIP") {
					# Expected skips are listed per suite at the end, counted when many.
					suite = $1
					sub(/\..*/, "", suite)
					if (!(suite in nskip))
						skipped[ns++] = suite
					if (nskip[suite]++ < 5)
						skips[suite] = skips[suite] sprintf("  XSKIP %s\n", $1)
				} else if (s != "PASS") {
					printf "  %-5s %s\n", s, $1
					if (s == "FAIL")
						diag($1)
				}
			}
			END {
				for (i = 0; i < ns; i++) {
					suite = skipped[i]
					if (nskip[suite] <= 5)
						printf "%s", skips[suite]
					else
						printf "  XSKIP %s: %d cases (the console log has each with its reason)\n",
							suite, nskip[suite]
				}
				printf "cases: %d passed, %d failed, %d skipped, %d xfail, %d xpass, %d error, %d unexpected skip\n",
					n["PASS"], n["FAIL"], n["SKIP"] + n["XSKIP"], n["XFAIL"], n["XPASS"],
					n["ERROR"], n["SKIP"]
			}' "$tmp/cases.tsv"
		if [ ! -s "$tmp/cases.tsv" ]; then
			echo "KTAP header but no test results"
			verdict=4
		fi
	else
		echo "no KTAP in the console log"
		verdict=4
	fi
} > "$summary"

# How the guest booted (qemu/guest/init.c: print_boot_facts), and what the arch requires of it.
boot_facts=$(grep -a '^# harness: kernel: ' "$log" | tr -d '\r' | sed 's/^# harness: kernel: //' || true)
[ -z "$boot_facts" ] || sed 's/^/boot: /' <<< "$boot_facts" >> "$summary"
missing=()
IFS=';' read -r -a want <<< "$BOOT_LINES"
for l in "${want[@]}"; do
	grep -q -F -x -- "$l" <<< "$boot_facts" || missing+=("$l")
done

# With an early console (EARLYCON), its own line: without it a hang before the serial
# driver would look like one in the firmware (scripts/boot.sh).
no_earlycon=
if [ -n "$EARLYCON" ] && ! grep -a -q '^earlycon: ' "$log"; then
	no_earlycon=1
fi

last=$(grep '^cases:' "$summary" || true)
if [ -n "$qemu_exit" ] && grep -a -q '^qemu: fatal:' "$log"; then
	# TCG gave up on what the guest executed: a guest fault (bad JIT output).
	verdict=2
	{ echo "QEMU stopped by the guest (exit $qemu_exit):"
	  grep -a -m3 '^qemu: fatal:' "$log" | sed 's/^/  /'
	  [ -z "$splats" ] || { echo "kernel splat(s):"; echo "$splats" | sed 's/^/  /'; }
	} >> "$summary"
elif [ -n "$qemu_exit" ]; then
	# Any other exit (a QEMU crash or abort on the host, a missing binary or firmware) is
	# not the guest's doing.
	verdict=5
	{ echo "QEMU exited with $qemu_exit (harness error; the log's last lines):"
	  tail -5 "$log" | sed 's/^/  /'
	  [ -z "$splats" ] || { echo "kernel splat(s) before it:"; echo "$splats" | sed 's/^/  /'; }
	} >> "$summary"
elif [ -n "$splats" ]; then
	verdict=2
	{ echo "kernel splat(s):"; echo "$splats" | sed 's/^/  /'; } >> "$summary"
elif [ -n "$timed_out" ]; then
	verdict=3
	running=$(sed -n -E 's/^# ([^ :]+): (running|loading|reading) .*/\1/p' "$log" | tail -1)
	if console_ends_in_firmware "$log"; then
		# Also when scripts/boot.sh stopped it 120 s in (FIRMWARE_LAST_LINE).
		echo "guest timed out before the kernel's first message (the console ends with the firmware's last line)" >> "$summary"
	else
		echo "guest timed out${running:+ in test $running (the last one the guest init started)}" \
			>> "$summary"
	fi
elif hung=$(grep -a -m1 '^# harness: watchdog: ' "$log"); then
	# The guest init's per-test watchdog named the test that hung and powered off.
	verdict=3
	echo "test ${hung#\# harness: watchdog: }" >> "$summary"
elif [ "$verdict" -eq 0 ]; then
	skips_ok=
	! grep -q ', 0 unexpected skip$' <<< "$last" || skips_ok=1
	if echo "$last" | grep -qE '^cases: [1-9][0-9]* passed, 0 failed.* 0 xpass, 0 error, [0-9]+ unexpected skip$' &&
	   grep -a -q '^# harness: done' "$log" && [ -n "$skips_ok$allow_skips" ] &&
	   [ ${#missing[@]} -eq 0 ] && [ -z "$no_earlycon" ]; then
		verdict=0
		[ -n "$skips_ok" ] || echo "unexpected skips allowed (--allow-skips)" >> "$summary"
	else
		verdict=1
		grep -a -q '^# harness: done' "$log" || echo "guest init did not finish" >> "$summary"
		echo "$last" | grep -qE '^cases: [1-9]' || echo "no test case passed" >> "$summary"
		[ -n "$skips_ok$allow_skips" ] ||
			echo "a case was skipped that no qemu/xskip*.list expects" >> "$summary"
		[ -z "$no_earlycon" ] ||
			echo "no 'earlycon:' line: the early console (EARLYCON of qemu/arch/$arch.conf) did not register" >> "$summary"
		for l in "${missing[@]}"; do
			echo "boot line missing: '$l' (BOOT_LINES of qemu/arch/$arch.conf)" >> "$summary"
		done
	fi
fi
[ -z "$fw_hang_log" ] || echo "booted twice: the first boot hung before the kernel's first message (its console: $fw_hang_log)" >> "$summary"
names=("passed" "test failed" "kernel splat or guest fault" "timeout" "no KTAP (boot failure)" "harness error")
echo "verdict: $verdict (${names[$verdict]})" >> "$summary"
cat "$summary"
[ -z "$outfile" ] || cp "$summary" "$outfile"
exit "$verdict"
