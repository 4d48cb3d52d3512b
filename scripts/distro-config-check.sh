#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: distro-config-check.sh [-h|--help] BASE FINAL [FRAGMENT...]

Check that the kernel configuration FINAL keeps every option of the distribution's
configuration BASE as BASE has it ('=y', '=m', a value, or '# ... is not set'), except the
options a FRAGMENT names (the documented differences, qemu/config/distro.config, and the
options of the series, qemu/config/series.config) and CONFIG_CC_VERSION_TEXT (the name of the
compiler binary, e.g. Debian's gcc-12 against a cross gcc of the same version). Options BASE
does not mention (new with the series, or hidden by their dependencies there) are free.
Prints each option that differs and exits 1 if there is any; exits 0 silently otherwise.

Options:
  -h, --help   show this help"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "${1:-}" in
-h|--help) echo "$usage"; exit 0 ;;
esac
[ $# -ge 2 ] || { echo "$usage" >&2; exit 64; }
base=$1 final=$2
shift 2
for f in "$base" "$final" "$@"; do
	[ -r "$f" ] || die "cannot read $f"
done

# Lines "SYMBOL VALUE" of a .config, "n" for "# CONFIG_X is not set".
values() {
	sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=\(.*\)/\1 \2/p' \
		-e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1 n/p' "$1"
}
diffs=$(awk -v allowed="$(config_requests "$@" | cut -f1 | tr '\n' ' ') CONFIG_CC_VERSION_TEXT" '
	BEGIN { n = split(allowed, a, " "); for (i = 1; i <= n; i++) ok[a[i]] = 1 }
	FNR == NR { final[$1] = substr($0, length($1) + 2); next }
	{
		want = substr($0, length($1) + 2)
		have = ($1 in final) ? final[$1] : "n"
		if (!($1 in ok) && have != want)
			printf "  %s: %s in the distribution'"'"'s, %s here\n", $1, want, have
	}' <(values "$final") <(values "$base"))
if [ -n "$diffs" ]; then
	echo "${0##*/}: $(wc -l <<< "$diffs") option(s) of $base differ in $final and no fragment names them:" >&2
	echo "$diffs" >&2
	exit 1
fi
