#!/bin/sh
# make crash: the large set of the crash simulator, on every core.
#   sh tests/crash/large.sh BUILD
# The full ACE set (37059 sequences) at 4096 and 512-byte blocks, and
# CRASH_RANDOM (default 1000) random workloads of CRASH_OPS (default 40)
# operations at each of the two block sizes, and CRASH_SNAP (default 200)
# random workloads with snapshot create, delete and write-to-snapshot,
# and CRASH_DIRINDEX (default 400) random workloads on a DIR_INDEX
# volume whose directory D reaches the size at which its on-disk index
# is built at 512-byte blocks, half as many at 1 KiB and at 4 KiB.
set -u
build=${1:-build}
sim=$build/tests/crash/crashsim
nrandom=${CRASH_RANDOM:-1000}
nops=${CRASH_OPS:-40}
nsnap=${CRASH_SNAP:-200}
ndx=${CRASH_DIRINDEX:-400}
jobs=$(nproc 2>/dev/null || echo 2)
out=$(mktemp -d "${TMPDIR:-/tmp}/crash-large.XXXXXX")
status=0

run() {	# NAME ARGS...: $jobs shards at once
	name=$1
	shift
	start=$(date +%s)
	i=0
	pids=
	while [ $i -lt "$jobs" ]; do
		"$sim" --shard $i/"$jobs" --print 3 "$@" >"$out/$name.$i" 2>&1 &
		pids="$pids $!"
		i=$((i + 1))
	done
	rc=0
	for p in $pids; do
		wait "$p" || rc=1
	done
	ok=0 bad=0 images=0
	for f in "$out/$name".*; do
		set -- $(sed -n 's/^states: \([0-9]*\) ok, \([0-9]*\) bad$/\1 \2/p' "$f")
		ok=$((ok + ${1:-0}))
		bad=$((bad + ${2:-0}))
		set -- $(sed -n 's/^images checked: \([0-9]*\).*/\1/p' "$f")
		images=$((images + ${1:-0}))
	done
	echo "$name: states: $ok ok, $bad bad ($images images checked), $(($(date +%s) - start)) s"
	case $name in *dirindex*)
		sed -n 's/^dir index: \([0-9]*\) states with D indexed, in \([0-9]*\) of \([0-9]*\).*/\1 \2 \3/p' "$out/$name".* |
			awk '{a += $1; b += $2; c += $3} END {
				printf "%s: states with D indexed: %d, in %d of %d workloads\n", n, a, b, c }' n="$name" ;;
	esac
	case $name in *snap*)
		set -- $(sed -n 's/^snapshots: .*states expecting snapshots: \([0-9]*\), a pending delete: \([0-9]*\).*/\1 \2/p' "$out/$name".* |
			awk '{a += $1; b += $2} END {print a + 0, b + 0}')
		echo "$name: states expecting snapshots: $1, a pending snapshot delete: $2" ;;
	esac
	if [ $rc -ne 0 ]; then
		grep -h "^BAD\|^LINT\|^WORKLOAD\|regression" "$out/$name".* | head -n 20
		status=1
	fi
}

run ace-4096 --workload ace --block-size 4096
run ace-512 --workload ace --block-size 512
run random-4096 --workload random --seed 1 --workloads "$nrandom" --ops "$nops"
run random-512 --workload random --seed 100001 --workloads "$nrandom" \
	--ops "$nops" --block-size 512
run random-snap-4096 --workload random --snapshots --seed 1 \
	--workloads "$nsnap" --ops "$nops"
run random-snap-512 --workload random --snapshots --seed 100001 \
	--workloads "$nsnap" --ops "$nops" --block-size 512
run random-dirindex-512 --workload random --dir-index --seed 1 \
	--workloads "$ndx" --ops "$nops" --block-size 512
run random-dirindex-1024 --workload random --dir-index --seed 200001 \
	--workloads "$((ndx / 2))" --ops "$nops" --block-size 1024
run random-dirindex-4096 --workload random --dir-index --seed 300001 \
	--workloads "$((ndx / 2))" --ops "$nops" --block-size 4096
echo "outputs in $out"
exit $status
