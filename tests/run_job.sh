#!/bin/sh
# Run one test job and keep its evidence (called by tests/run.sh):
#   sh tests/run_job.sh RESULTS BUILD JOB [LOCK]
# JOB is unit/test_NAME (the program BUILD/tests/unit/test_NAME) or NAME (the
# script tests/scripts/NAME.sh, called with BUILD as $1).
#   BUILD/tests/log/JOB.log   the job's whole output (stdout and stderr),
#                             then its exit status and wall time; kept
#   RESULTS/FLAVOUR.JOB.res   its result lines, prefixed with the flavour
#   RESULTS/FLAVOUR.JOB.time  "MILLISECONDS EXIT-STATUS CPU-MILLISECONDS"
# A job that prints no result line, or that exits non-zero without a FAIL
# line (a crash, a sanitizer report, a script stopped by `set -e`), gets a
# FAIL line of its own: a test that says nothing has not passed.
# TEST_TIMEOUT (seconds, default 3600) bounds a job that hangs.  With LOCK,
# the job runs holding that file's lock (flock), for jobs that must not run
# at once; its time counts from when it holds it.
set -u
[ $# -ge 4 ] && exec flock "$4" sh "$0" "$1" "$2" "$3"
results=$1 build=$2 job=$3
flavour=$(basename "$build")
log="$build/tests/log/$job.log"
key=$(printf '%s.%s' "$flavour" "$job" | tr / .)	# no ':' (LD_PRELOAD and PKG_CONFIG_PATH split on it)
mkdir -p "$(dirname "$log")" || exit 2

case $job in
unit/*) set -- "$build/tests/$job" ;;
*) set -- sh "tests/scripts/$job.sh" "$build" ;;
esac

# Each job its own scratch directory: two flavours of one job may run at once.
jobscratch="$TUX3_SCRATCH/jobs/$key"
mkdir -p "$jobscratch" || exit 2
limit=${TEST_TIMEOUT:-3600}

start=$(date +%s%N)
TUX3_SCRATCH="$jobscratch" timeout -k 30 "$limit" "$@" > "$log" 2>&1 < /dev/null
rc=$?
end=$(date +%s%N)
ms=$(( (end - start) / 1000000 ))
# the CPU time (user + system) of the job's waited-for processes: a
# figure that load does not inflate, to compare groups between runs
# (`times` in this shell: in a $(...) subshell it would count nothing)
times > "$jobscratch.times"
cpu=$(awk 'NR == 2 { t = 0
	for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
	printf "%d", t * 1000 }' "$jobscratch.times")
rm -f "$jobscratch.times"
# a directory that went during the run: someone else's doing, say so
[ -d "$jobscratch" ] ||
	echo "FAIL $flavour/$job: its scratch directory $jobscratch went during the run" >> "$log"
rm -rf "$jobscratch"

res="$results/$key.res"
sed -n "s#^\(PASS\|FAIL\|SKIP\) #\1 $flavour/#p" "$log" > "$res"
why=
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	why="timed out after $limit s"
elif [ ! -s "$res" ]; then
	why="printed no result line (exit $rc)"
elif [ "$rc" -ne 0 ] && ! grep -q '^FAIL' "$res"; then
	why="exited $rc without a FAIL line"
fi
[ -z "$why" ] || echo "FAIL $flavour/$job: $why" >> "$res"
printf '\n# exit %s after %s ms (%s ms of CPU)\n' "$rc" "$ms" "${cpu:-?}" >> "$log"
echo "$ms $rc ${cpu:-0}" > "$results/$key.time"

# The lines worth seeing while the run goes on; PASS lines stay in the log.
grep -v '^PASS' "$res" | sed "/^FAIL/s#\$#  [log: $log]#"
exit 0
