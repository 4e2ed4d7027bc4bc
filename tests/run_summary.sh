#!/bin/sh
# The end of a test run (called by tests/run.sh):
#   sh tests/run_summary.sh RESULTS WALL_MS BUILD...
# reads the jobs' RESULTS/FLAVOUR.JOB.res and .time files (tests/run_job.sh)
# and prints each group's wall time, CPU time and counts, longest first (the unit
# programs of a build summed as one group `unit`), the failures again with
# their logs, the run's wall time and load, and last the one line
#   N passed, N failed, N skipped
# Exit status 0 only with no failure and at least one pass.
set -u
results=$1 wall_ms=$2
shift 2

# seconds MS: milliseconds as seconds with one decimal
seconds() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }

echo "== test groups (wall time, longest first) =="
for build in "$@"; do
	flavour=$(basename "$build")
	for f in "$results/$flavour".*.time; do
		[ -e "$f" ] || continue
		key=$(basename "$f" .time)
		group=${key#*.}
		case $group in unit.*) group=unit ;; esac
		res="$results/$key.res"
		read -r ms _ cpu < "$f"
		echo "$flavour/$group $ms ${cpu:-0}" \
			"$(grep -c '^PASS' "$res")" "$(grep -c '^FAIL' "$res")" \
			"$(grep -c '^SKIP' "$res")"
	done
done | awk '{ ms[$1] += $2; cpu[$1] += $3; p[$1] += $4; f[$1] += $5; s[$1] += $6 }
	END { for (g in ms) printf "%d %d %s %d %d %d\n", ms[g], cpu[g], g,
		p[g], f[g], s[g] }' |
	sort -k1,1nr | while read -r ms cpu group p f s; do
		printf '%8s s %8s s CPU  %-28s %5d passed %4d failed %4d skipped\n' \
			"$(seconds "$ms")" "$(seconds "$cpu")" "$group" "$p" "$f" "$s"
	done
cpu_all=$(cat "$results"/*.time 2>/dev/null | awk '{ t += $3 } END { print t + 0 }')

cat "$results"/*.res 2>/dev/null > "$results/all"
if grep -q '^FAIL' "$results/all"; then
	echo "== failures (whole output in the log named) =="
	for res in "$results"/*.res; do
		key=$(basename "$res" .res)
		flavour=${key%%.*} job=$(echo "${key#*.}" | sed 's#^unit\.#unit/#')
		for build in "$@"; do
			[ "$(basename "$build")" = "$flavour" ] || continue
			grep '^FAIL' "$res" | sed "s#\$#  [log: $build/tests/log/$job.log]#"
		done
	done
fi

pass=$(grep -c '^PASS' "$results/all")
fail=$(grep -c '^FAIL' "$results/all")
skip=$(grep -c '^SKIP' "$results/all")
echo "tests took $(seconds "$wall_ms") s with ${TEST_JOBS:-1} jobs," \
	"$(seconds "$cpu_all") s of CPU" \
	"(load average at the start ${LOAD_START:-?}," \
	"at the end $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
