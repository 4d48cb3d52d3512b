#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: send.sh [-h|--help] [--out DIR] [--no-gate]

The gate before posting, then the mails. The gate: every committed result that depends on
the series is current and passed, else the script names what is stale and writes nothing:
 0. the per-patch matrix (scripts/bisect-verify.sh --require-current: every cell of every
    patch and arch), the runs on the distributions' configurations
    (scripts/distro-verify.sh --require-current) and the cover letter, its coverage sentence included
    (scripts/cover-letter.sh --strict).
Then it writes the series as mails with b4 (Debian's b4 0.12), never sending them:
 1. a git worktree of the base tree at \$KSERIES_CACHE/send-tree (made once; the base tree's
    own checkout is not touched), branch 'send' = base + git am of patches/;
 2. b4 prep --enroll base, and as cover letter the prose of cover-letter.txt (up to its
    'Patches:' list: b4 adds the shortlog, diffstat and base-commit itself) signed off by
    the series' author, through b4 prep --edit-cover;
 3. b4 prep --auto-to-cc: To/Cc from the base tree's scripts/get_maintainer.pl;
 4. b4 send --output-dir DIR --no-sign: the N+1 mails as DIR/*.eml (dry run: b4 sends
    nothing with an output directory, and its SMTP server is set to /bin/false as well);
 5. round trip: the N+1 mails as one mbox, b4 am -m of it (b4 picks the thread, orders
    the patches and writes an am-ready .mbx), git am of that onto the base must rebuild the
    series exactly (the same tree as git am of patches/, the same git patch-id for every
    patch). b4 0.12 fails (ValueError) on the folded Subject: headers its own b4 send
    writes, so the mbox gets its header lines unfolded first (RFC 5322 unfolding, by hand
    in awk: a workaround for that b4 bug, not a change of content).
The author and committer identity is the From: of the first patch.

Options:
  --out DIR   where to write the mails (default: \$KSERIES_CACHE/out/mails); replaced
  --no-gate   skip step 0: write and round-trip the mails of a series whose evidence is not
              current yet (make check tests every commit's mails this way; stale evidence
              is reported there by scripts/bisect-verify.sh and distro-verify.sh, not failed)
  -h, --help  show this help
Exit codes: 0 mails written and round trip exact, 1 round trip differs or (step 0) stale or
failed evidence, 5 a tool failed."
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$KS_CACHE/out/mails
gate=1
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--out) out=$2; shift ;;
	--no-gate) gate= ;;
	*) echo "$usage" >&2; exit 64 ;;
	esac
	shift
done
[ -d "$KS_SRC/.git" ] || die "no base tree at $KS_SRC (run scripts/fetch-base.sh)"
mapfile -t names < <(series_names "$KS_ROOT/series")
[ "${#names[@]}" -gt 0 ] || die "the series is empty: nothing to send"
patches=()
for n in "${names[@]}"; do
	patches+=("$KS_ROOT/patches/$n")
done
[ -f "$KS_ROOT/cover-letter.txt" ] || die "no cover-letter.txt (run scripts/cover-letter.sh)"
if [ -n "$gate" ]; then
	"$KS_ROOT/scripts/bisect-verify.sh" --require-current ||
		die "not posting: the per-patch matrix is not current and passed (--no-gate writes the mails anyway)"
	"$KS_ROOT/scripts/distro-verify.sh" --require-current ||
		die "not posting: the distribution runs are not current and passed (make distro; --no-gate writes the mails anyway)"
	"$KS_ROOT/scripts/cover-letter.sh" --strict ||
		die "not posting: cover-letter.txt is stale; run scripts/cover-letter.sh"
fi

info=$(git mailinfo /dev/null /dev/null < "${patches[0]}")
name=$(sed -n 's/^Author: //p' <<< "$info")
email=$(sed -n 's/^Email: //p' <<< "$info")
# Identity and a harmless SMTP setting for every git and b4 call below.
export GIT_CONFIG_COUNT=3 \
	GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0="$name" \
	GIT_CONFIG_KEY_1=user.email GIT_CONFIG_VALUE_1="$email" \
	GIT_CONFIG_KEY_2=sendemail.smtpserver GIT_CONFIG_VALUE_2=/bin/false

wt=$KS_CACHE/send-tree
am_series "$wt" send
cd "$wt"
series_tree=$(command git rev-parse 'HEAD^{tree}')

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b4 prep --enroll base > "$tmp/b4.log" 2>&1 || { cat "$tmp/b4.log"; die "b4 prep --enroll failed"; }
cat > "$tmp/editor" <<'ED'
#!/bin/bash
# EDITOR for b4 prep --edit-cover: our prose, the sign-off, then b4's tracking block.
{
	sed '/^Patches:$/,$d' "$COVER" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
	printf '\nSigned-off-by: %s\n\n' "$SOB"
	sed -n '/^--- b4-submit-tracking ---$/,$p' "$1"
} > "$1.new"
mv "$1.new" "$1"
ED
chmod +x "$tmp/editor"
COVER=$KS_ROOT/cover-letter.txt SOB="$name <$email>" EDITOR=$tmp/editor \
	b4 prep --edit-cover > "$tmp/b4.log" 2>&1 || { cat "$tmp/b4.log"; die "b4 prep --edit-cover failed"; }
b4 prep --auto-to-cc > "$tmp/b4.log" 2>&1 || { cat "$tmp/b4.log"; die "b4 prep --auto-to-cc failed"; }
rm -rf "$out"
b4 send --output-dir "$out" --no-sign > "$tmp/b4.log" 2>&1 ||
	{ cat "$tmp/b4.log"; die "b4 send --output-dir failed"; }
mapfile -t mails < <(find "$out" -name '*.eml' | sort)
[ "${#mails[@]}" -eq $(( ${#names[@]} + 1 )) ] ||
	die "b4 wrote ${#mails[@]} mails to $out, expected $(( ${#names[@]} + 1 )) (cover + patches)"
grep -q '^To: ' "${mails[0]}" || die "the cover letter mail has no To: (get_maintainer.pl)"
note "wrote ${#mails[@]} mails to $out: $(sed -n 's/^Subject: //p' "${mails[0]}" | head -1) ..."

# Round trip: every mail into one mbox with unfolded headers, b4 am -m, git am onto the base.
for m in "${mails[@]}"; do
	echo "From b4-roundtrip Thu Jan  1 00:00:00 1970"
	awk 'head && /^$/ { if (held != "") print held; held = ""; head = 0 }
		head && /^[ \t]/ { sub(/^[ \t]+/, " "); held = held $0; next }
		head { if (held != "") print held; held = $0; next }
		{ print }' head=1 "$m"
	echo
done > "$tmp/mails.mbox"
msgid=$(sed -n 's/^[Mm]essage-[Ii][Dd]:[[:space:]]*<\(.*\)>.*/\1/p' "${mails[0]}" | head -1)
[ -n "$msgid" ] || die "the cover letter mail has no Message-Id"
mkdir -p "$tmp/am"
b4 am -m "$tmp/mails.mbox" -o "$tmp/am" "$msgid" > "$tmp/b4.log" 2>&1 ||
	{ cat "$tmp/b4.log"; die "b4 am -m of the mails failed"; }
mbx=$(find "$tmp/am" -name '*.mbx' | head -1)
[ -n "$mbx" ] || { cat "$tmp/b4.log"; die "b4 am -m wrote no .mbx"; }
command git checkout -q -B send-roundtrip base
command git am -q "$mbx" || { command git am --abort || true; die "git am of b4 am's mbox failed"; }
rc=0
if [ "$(command git rev-parse 'HEAD^{tree}')" != "$series_tree" ]; then
	echo "send.sh: round trip: the mails give another tree than patches/:" >&2
	command git diff --stat "$series_tree" HEAD >&2
	rc=1
fi
i=0
for c in $(command git rev-list --reverse base..HEAD); do
	a=$(command git show "$c" | command git patch-id --stable | cut -d' ' -f1)
	b=$(command git patch-id --stable < "${patches[$i]}" | cut -d' ' -f1)
	[ "$a" = "$b" ] || { echo "send.sh: round trip: patch $((i + 1)) differs (patch-id)" >&2; rc=1; }
	i=$((i + 1))
done
[ "$i" -eq "${#names[@]}" ] || { echo "send.sh: round trip: $i commits, expected ${#names[@]}" >&2; rc=1; }
[ "$rc" -ne 0 ] || note "round trip: b4 am -m of the mails, then git am, rebuilds the ${#names[@]} patches exactly"
exit "$rc"
