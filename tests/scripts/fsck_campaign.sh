#!/bin/sh
# The fsck damage campaign (tests/fuzz/fsck_campaign.sh, make fuzz-fsck),
# short and at a fixed seed:   sh tests/scripts/fsck_campaign.sh BUILD
#   fsck_campaign/no-violations   every repair (-fy exit 0 or 1) leaves a
#                                 volume the next -fn passes; -fy changes
#                                 nothing -fn passed; what -fn passes
#                                 reads back (rdump, tux3debug check)
#   fsck_campaign/exit8           runs that exit 8 or more: no more than
#                                 EXIT8_CEILING (a ratchet, see below)
#   fsck_campaign/no-signals, no-timeouts, no-sanitizer
#   fsck_campaign/rate            the repair rate (repaired / detected) is
#                                 at least RATE_FLOOR
#   fsck_campaign/regression/KIND:SEED   a kept case (tests/fuzz/
#                                 fsck_regressions) keeps its outcome
# FSCK_CAMPAIGN_N mutations (150; 60 on a sanitizer build), seed 19.
# Failing cases are kept in BUILD/fsck-campaign-failures, each with the
# command that runs it alone.
set -u
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
T=fsck_campaign

# The floor: what this seed measures with issue 19's repairs (restart
# rounds, log salvage, the secondary superblock, version-table salvage,
# internal inodes, full volumes, single superblock fields from the copy):
# 95.0% or more (113 of 119 detected) in 150 cases; less a margin for the
# sanitizer build's smaller count.  It came in at 58.5%, was 80 at 90.8%.
# Raise it as fsck repairs more, never lower it.
RATE_FLOOR=90

# Runs ending in exit 8: none since a failed repair restarts its round
# (there were 4 in 150 when the campaign came).  The ceiling stays 0.
EXIT8_CEILING=0

for t in mkfs.tux3 fsck.tux3 tux3debug; do
	if [ ! -x "$build/$t" ]; then
		fail all "$build/$t not built"
		exit 0
	fi
done
if ! command -v python3 >/dev/null 2>&1; then
	skip all "python3 not installed"
	exit 0
fi
case $build in
*asan*) n=${FSCK_CAMPAIGN_N:-40} ;;
*) n=${FSCK_CAMPAIGN_N:-150} ;;
esac
scratch_dir
keep=$build/fsck-campaign-failures
# the campaign's whole output also into this script's (the run's log),
# indented so that none of it reads as a result line
FUZZ_FSCK_N=$n FUZZ_FSCK_SEED=19 FUZZ_FSCK_KEEP=$keep \
	sh "$(dirname "$0")/../fuzz/fsck_campaign.sh" "$build" 2>&1 |
	tee "$work/out" | sed 's/^/  | /'
line=$(grep '^fuzz-fsck-counts:' "$work/out")
if [ -z "$line" ]; then
	fail all "no summary: $(tail -3 "$work/out" | tr '\n' ' ')"
	exit 0
fi
grep '^fuzz-fsck: ' "$work/out" | grep -v '^fuzz-fsck: [a-z0-9-]*: ' |
	sed 's/^/# /'

count() {	# count NAME: its value on the counts line
	printf '%s\n' "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# failing KIND: the reproduce lines of the failing cases of that kind
failing() {
	awk -v f="$1" '
		/^  [a-z0-9-]+ seed [0-9]+: / { hit = ($0 ~ f) }
		hit && /reproduce:/ { sub(/^ *reproduce: /, ""); print }' \
		"$work/out" | head -3 | tr '\n' ';'
}

check_zero() {	# check_zero TEST COUNT-NAME FLAGS-REGEX
	v=$(count "$2")
	if [ "$v" = 0 ]; then
		pass "$1"
	else
		fail "$1" "$v case(s), kept in $keep; $(failing "$3")"
	fi
}
check_zero no-violations violations 'unrepaired|fy-disagrees|undetected'
v=$(count exit8)
if [ -n "$v" ] && [ "$v" -le "$EXIT8_CEILING" ]; then
	pass exit8
	echo "# fsck_campaign: $v run(s) ending in exit 8 (ceiling $EXIT8_CEILING)"
else
	fail exit8 "${v:-?} case(s), more than $EXIT8_CEILING; kept in $keep; $(failing exit8)"
fi
check_zero no-signals signals signal
check_zero no-timeouts timeouts timeout
check_zero no-sanitizer sanitizer sanitizer

# the kept cases (tests/fuzz/fsck_regressions), each alone, with the
# outcome it must keep
while read -r c want _; do
	case $c in '' | '#'*) continue ;; esac
	FUZZ_FSCK_CASE=$c FUZZ_FSCK_KEEP=$keep \
		sh "$(dirname "$0")/../fuzz/fsck_campaign.sh" "$build" \
		> "$work/case" 2>&1
	cat "$work/case" >> "$work/regressions"
	got=$(sed -n 's/^-- exits \([0-9/]*\), flags: \(.*\)/\1 \2/p' \
		"$work/case")
	case $got in
	'') if grep -q "not made" "$work/case"; then
		skip "regression/$c" "its volume kind was not made here"
	    else
		fail "regression/$c" "no result: $(tail -1 "$work/case")"
	    fi ;;
	*exit8* | *unrepaired* | *disagrees* | *undetected* | *signal* | \
	*timeout* | *sanitizer*)
		fail "regression/$c" "$got (want $want)" ;;
	*"$want"*) pass "regression/$c" ;;
	*) fail "regression/$c" "$got (want $want)" ;;
	esac
done < "$(dirname "$0")/../fuzz/fsck_regressions"
sed 's/^/  | /' "$work/regressions" 2>/dev/null

rate=$(count rate)
if [ "$rate" = - ]; then
	fail rate "nothing detected"
elif awk "BEGIN { exit !($rate >= $RATE_FLOOR) }"; then
	pass rate
	echo "# fsck_campaign: repair rate $rate% (floor $RATE_FLOOR%)"
else
	fail rate "repair rate $rate% below the floor $RATE_FLOOR%"
fi
