#!/bin/sh
# Run the tests against each build tree given (e.g. build build-asan):
#   unit programs: BUILD/tests/unit/test_*  (C, one forked child per case)
#   script groups: tests/scripts/NAME.sh    (called with BUILD as $1)
# Each prints PASS/FAIL/SKIP lines; the last line of the run is
#   N passed, N failed, N skipped
# and the exit status is 0 only with no failure and at least one pass.
#
#   TESTS=fsck,crash  only these groups: a script's NAME, `unit` for every
#                     unit program or one program's name (test_balloc)
#   TEST_JOBS=N       jobs at once (default 2); the groups that touch state
#                     global to the machine (fuse and boot: a temporary
#                     /sbin/mount.tux3, the PM QoS value) never run beside
#                     each other
#   TEST_TIMEOUT=S    a job's bound in seconds (default 3600)
#   TEST_PYTHON=P     the python3 the tests run (default /usr/bin/python3)
# Every job keeps its whole output in BUILD/tests/log/JOB.log (unit
# programs in BUILD/tests/log/unit/); a FAIL line names its log, and the
# summary gives each group's wall time and the failures again.  The times
# of the last run (BUILD/tests/log/times) put the longest jobs first.
# Oracle volumes from ../shared/oracle are decompressed once into a
# scratch directory (tests using them skip where ../shared is absent).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
[ $# -ge 1 ] || set -- build

# job_names BUILD: every job of a build tree, one a line
job_names() {
	for t in "$1"/tests/unit/test_*; do
		[ -x "$t" ] && echo "unit/${t##*/}"
	done
	for s in tests/scripts/*.sh; do
		[ -e "$s" ] && basename "$s" .sh
	done
}

# selected JOB: whether $TESTS (comma-separated) names JOB or its group
selected() {
	[ -z "${TESTS:-}" ] && return 0
	case ",$TESTS," in
	*",$1,"*) return 0 ;;
	esac
	case $1 in
	unit/*)
		case ",$TESTS," in
		*,unit,* | *",${1#unit/},"*) return 0 ;;
		esac ;;
	esac
	return 1
}

# check_tests_names: every name in $TESTS is a job or a group
check_tests_names() {
	known=" unit $(job_names "$1" | sed 's#^unit/##' | tr '\n' ' ')"
	for name in $(echo "${TESTS:-}" | tr ',' ' '); do
		case $known in
		*" ${name#unit/} "*) ;;
		*) echo "tests/run.sh: no test group '$name'; the groups:$known" >&2
		   exit 2 ;;
		esac
	done
}

# lock_of JOB: the lock a job holds while it runs, for the jobs that change
# state global to the machine and must not run beside each other (of
# either flavour): fuse and boot both put a temporary /sbin/mount.tux3 in
# place and take it away again (and fuse reads the PM QoS value)
lock_of() {
	case $1 in
	fuse | boot) echo mount-helper ;;
	esac
}

# lock_build BUILD: hold BUILD/tests/log/.run.lock until the run ends
# (waiting for another run on BUILD to end first); file descriptors 4 to
# 7, one per build tree
lock_fd=4
lock_build() {
	if [ $lock_fd -gt 7 ]; then
		echo "tests/run.sh: at most four build trees at once" >&2
		exit 2
	fi
	eval "exec $lock_fd> \"\$1/tests/log/.run.lock\"" || exit 2
	if ! flock -n $lock_fd; then
		echo "tests/run.sh: another test run uses $1; waiting for it to end" >&2
		flock $lock_fd || exit 2
	fi
	lock_fd=$((lock_fd + 1))
}

scratch=$(mktemp -d /tmp/tux3-tests.XXXXXX) || exit 2
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM	# (the EXIT trap then removes it, and the run ends)
export TUX3_SCRATCH="$scratch"
results=$scratch/results
mkdir -p "$results"

oracle_src="$top/../shared/oracle"
if [ -d "$oracle_src" ] && command -v zstd >/dev/null 2>&1; then
	mkdir -p "$scratch/oracle"
	for z in "$oracle_src"/*.img.zst; do
		[ -e "$z" ] || continue
		zstd -q -d "$z" -o "$scratch/oracle/$(basename "$z" .zst)" ||
			echo "warning: cannot decompress $z" >&2
	done
	chmod a-w "$scratch/oracle"/*.img 2>/dev/null
	export TUX3_ORACLE_DIR="$scratch/oracle"
	export TUX3_ORACLE_SRC="$oracle_src"
fi

# The tests start python3 hundreds of times: the system's, not a version
# manager's shim first in PATH (pyenv's costs 0.7 s of CPU a start, the
# interpreter itself 0.05 s).  TEST_PYTHON=... chooses another.
test_python=${TEST_PYTHON:-}
[ -z "$test_python" ] && [ -x /usr/bin/python3 ] && test_python=/usr/bin/python3
if [ -n "$test_python" ]; then
	mkdir -p "$scratch/bin"
	ln -s "$test_python" "$scratch/bin/python3"
	PATH=$scratch/bin:$PATH
	export PATH
fi

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86"

# The job list, longest first by the last run's times, else by those kept
# in tests/times/ (a job never timed counts as long), as "MS BUILD JOB"
# lines.
for build in "$@"; do
	check_tests_names "$build"
done
# One run at a time on a build tree: a second run's start would remove the
# logs the first run's jobs are writing (and both would write the same
# logs and times).
for build in "$@"; do
	mkdir -p "$build/tests/log"
	lock_build "$build"
done
for build in "$@"; do
	for job in $(job_names "$build"); do
		selected "$job" || continue
		ms=$(awk -v j="$job" '$2 == j { print $1 }' \
			"$build/tests/log/times" 2>/dev/null)
		# a clean tree: the times kept in tests/times/FLAVOUR
		[ -n "$ms" ] || ms=$(awk -v j="$job" '$2 == j { print $1 }' \
			"tests/times/${build##*/}" 2>/dev/null)
		echo "${ms:-999999999} $build $job"
		rm -f "$build/tests/log/$job.log"
	done
done | sort -k1,1nr > "$scratch/joblist"
if [ ! -s "$scratch/joblist" ]; then
	echo "tests/run.sh: no test selected" >&2
	exit 2
fi

jobs=${TEST_JOBS:-2}
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
start=$(date +%s%N)
while read -r _ build job; do
	lock=$(lock_of "$job")
	echo "$build" "$job" ${lock:+"$scratch/$lock.lock"}
done < "$scratch/joblist" |
	xargs -P "$jobs" -L 1 sh tests/run_job.sh "$results" 4>&- 5>&- 6>&- 7>&-
end=$(date +%s%N)

# Keep each build's job times for the next run's order.
for build in "$@"; do
	flavour=$(basename "$build")
	for f in "$results/$flavour".*.time; do
		[ -e "$f" ] || continue
		job=$(basename "$f" .time | sed "s#^$flavour\.##; s#^unit\.#unit/#")
		echo "$(cut -d' ' -f1 "$f") $job"
	done > "$scratch/times.new"
	if [ -s "$scratch/times.new" ]; then
		# the jobs not run this time keep their last time
		awk 'NR == FNR { seen[$2] = 1; print; next } !($2 in seen)' \
			"$scratch/times.new" "$build/tests/log/times" \
			2>/dev/null > "$scratch/times.all" ||
			cp "$scratch/times.new" "$scratch/times.all"
		cp "$scratch/times.all" "$build/tests/log/times"
	fi
done

TEST_JOBS=$jobs LOAD_START=$load_start \
	sh tests/run_summary.sh "$results" "$(( (end - start) / 1000000 ))" "$@"
