# SPDX-License-Identifier: GPL-2.0
# KTAP output for the harness tests; sourced, never run.
#   ktap_plan N                  print the KTAP header and the plan
#   ktap_result NAME RC OUT MSG  "ok N NAME" if RC is 0, else "not ok N NAME", MSG and the
#                                tail of the file OUT as diagnostics
#   ktap_end                     print the counts; returns 1 if any result was "not ok"
KT_N=0
KT_FAILED=0

ktap_plan() {
	echo "KTAP version 1"
	echo "1..$1"
}

ktap_result() {
	KT_N=$((KT_N + 1))
	if [ "$2" -eq 0 ]; then
		echo "ok $KT_N $1"
		return
	fi
	echo "not ok $KT_N $1"
	echo "# $4"
	sed 's/^/#   /' "$3" | tail -15
	KT_FAILED=$((KT_FAILED + 1))
}

ktap_end() {
	echo "# $((KT_N - KT_FAILED)) passed, $KT_FAILED failed"
	[ "$KT_FAILED" -eq 0 ]
}
