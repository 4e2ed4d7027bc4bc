#!/bin/sh
# Crash consistency: the recorded-write crash simulator (tests/crash/crashsim)
# on a bounded set, each run split in two shards run at once, and the
# states kept in tests/crash/regressions.  The sanitizer build runs a
# smaller set.  `make crash` runs the large set (tests/crash/large.sh).
#   sh tests/scripts/crash.sh BUILD
set -u
T=crash
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
sim=$build/tests/crash/crashsim
if [ ! -x "$sim" ]; then
	skip all "$sim is not built"
	exit 0
fi
scratch_dir

# NAME CRASHSIM-ARGS...: both shards must end with status 0 ("states: N ok,
# 0 bad", no lint, no disagreement with the model)
sharded() {
	name=$1
	shift
	"$sim" --shard 0/2 "$@" >"$work/$name.0" 2>&1 &
	p0=$!
	"$sim" --shard 1/2 "$@" >"$work/$name.1" 2>&1 &
	p1=$!
	wait $p0
	s0=$?
	wait $p1
	s1=$?
	# the snapshot workloads: how many states they checked
	case $name in *snap*)
		cat "$work/$name.0" "$work/$name.1" | awk -v n="$name" '
		/^states: / { ok += $2; bad += $4 }
		/^snapshots: / { c += $2; d += $4; w += $6
			sub(/.*states expecting snapshots: /, ""); s += $1
			sub(/^[0-9]*, a pending delete: /, ""); p += $1
			sub(/.*back to the 2014 format: /, ""); bd += $1
			bs += $3 }
		END { printf "%s: states: %d ok, %d bad; snapshots %d created, " \
			"%d deleted, %d writes in one; states expecting " \
			"snapshots: %d, a pending delete: %d; back to the " \
			"2014 format: %d deletes, %d states\n", n, ok, bad, c,
			d, w, s, p, bd, bs }' ;;
	esac
	# each shard's cost, for the log (what makes the group long)
	grep -h '^time:' "$work/$name.0" "$work/$name.1" | sed "s/^/# $name: /" >&2
	if [ $s0 -eq 0 ] && [ $s1 -eq 0 ]; then
		pass "$name"
		return
	fi
	why=$(grep -h -m1 "^BAD\|^LINT\|^WORKLOAD\|Sanitizer\|runtime error" \
		"$work/$name.0" "$work/$name.1" | head -n1 | cut -c1-400)
	[ -n "$why" ] || why="exit $s0/$s1: $(tail -n1 "$work/$name.0" | cut -c1-200)"
	fail "$name" "$why"
	# the ready-to-paste regression lines, for the log
	grep -h "regression" "$work/$name.0" "$work/$name.1" | head -n5 >&2
}

# dx_states NAME: the --dir-index run crashed states whose D had an
# index (else it tested nothing of the index)
dx_states() {
	n=$(sed -n 's/^dir index: \([0-9]*\) states.*/\1/p' "$work/$1".* |
		awk '{ s += $1 } END { print s + 0 }')
	if [ "$n" -gt 0 ]; then
		pass "$1/indexed-states"
	else
		fail "$1/indexed-states" "no crash state had D indexed"
	fi
}

# chain_states NAME attribute|element: the run crashed states in which
# an inode had such a chain (format.md 17.3b, 17.3c), else it tested
# nothing of them
chain_states() {
	n=$(sed -n "s/^$2 chains: \([0-9]*\) states.*/\1/p" \
		"$work/$1".* | awk '{ s += $1 } END { print s + 0 }')
	if [ "$n" -gt 0 ]; then
		pass "$1/chained-states"
	else
		fail "$1/chained-states" "no crash state had an $2 chain"
	fi
}

case $(basename "$build") in
*asan*)
	# The normal build runs every workload below; the sanitizer build a
	# sample of them (one workload in N, --every), for the memory errors
	# a state could show: same generators, block sizes and snapshot
	# paths, a third of the time.
	sharded ace1-4096-sampled --workload ace --ops 1 --block-size 4096 \
		--every 3
	sharded ace1-512-sampled --workload ace --ops 1 --block-size 512 \
		--every 4
	sharded ace2-4096-sampled --workload ace --ops 2 --block-size 4096 \
		--every 32 --max-states 16 --torn 4
	sharded random-4096 --workload random --seed 7 --workloads 2
	sharded random-512 --workload random --seed 1007 --workloads 2 \
		--block-size 512
	sharded random-snap-4096 --workload random --snapshots --seed 3 \
		--workloads 1 --ops 20
	sharded random-snap-512 --workload random --snapshots --seed 1003 \
		--workloads 1 --ops 20 --block-size 512 --max-states 32 --torn 4
	sharded random-snap-compact-4096 --workload random --compact --seed 6 \
		--workloads 1 --ops 16 --max-states 64 --torn 4
	sharded random-atime-4096 --workload random --atime --seed 9 \
		--workloads 1 --ops 20 --max-states 64 --torn 4
	sharded random-dirindex-512 --workload random --dir-index --seed 3 \
		--workloads 4 --ops 30 --block-size 512 --max-states 16 --torn 4
	dx_states random-dirindex-512
	sharded random-snap-spill-512 --workload random --snapshots \
		--xattr-max 90 --seed 1012 --workloads 4 --ops 80 \
		--block-size 512 --max-states 8 --torn 4
	chain_states random-snap-spill-512 attribute
	sharded random-snap-echain-512 --workload random --snapshots \
		--vleaf-cap 4 --seed 1036 --workloads 2 --ops 40 \
		--block-size 512 --max-states 8 --torn 4
	chain_states random-snap-echain-512 element
	;;
*)
	# every sequence of one or two operations (1122), then one in 32 of
	# the three-operation ones (35937; make crash runs them all)
	sharded ace2-4096 --workload ace --ops 2 --block-size 4096
	sharded ace2-512 --workload ace --ops 2 --block-size 512 \
		--max-states 256
	sharded ace3-4096-sampled --workload ace --block-size 4096 \
		--seed 1122 --every 48 --max-states 64
	sharded random-4096 --workload random --seed 1 --workloads 12
	sharded random-512 --workload random --seed 1001 --workloads 12 \
		--block-size 512
	# random workloads that also take, delete and write snapshots
	sharded random-snap-4096 --workload random --snapshots --seed 1 \
		--workloads 6 --ops 20
	sharded random-snap-512 --workload random --snapshots --seed 1001 \
		--workloads 4 --ops 20 --block-size 512 --max-states 32
	# the same ending with every snapshot deleted: the last delete
	# takes the volume back to the 2014 format (format.md 17.8)
	sharded random-snap-compact-4096 --workload random --compact --seed 5 \
		--workloads 4 --ops 16
	sharded random-snap-compact-512 --workload random --compact \
		--seed 1005 --workloads 2 --ops 16 --block-size 512 \
		--max-states 48
	# a volume with access times (format.md 15.6), snapshots too
	sharded random-atime-4096 --workload random --atime --seed 7 \
		--workloads 4 --ops 20
	sharded random-atime-snap-512 --workload random --atime --snapshots \
		--seed 1007 --workloads 1 --ops 20 --block-size 512 \
		--max-states 32
	# snapshots of a file whose long xattrs change between them: its
	# attributes go past the leaf, to a chain (format.md 17.3b)
	sharded random-snap-spill-512 --workload random --snapshots \
		--xattr-max 90 --seed 1011 --workloads 12 --ops 80 \
		--block-size 512 --max-states 16
	chain_states random-snap-spill-512 attribute
	# versioned leaves split at four records and a block of more
	# elements moved to an element chain (format.md 17.3c): small
	# writes at one file's start between snapshots
	sharded random-snap-echain-512 --workload random --snapshots \
		--vleaf-cap 4 --seed 1031 --workloads 8 --ops 40 \
		--block-size 512 --max-states 16
	chain_states random-snap-echain-512 element
	sharded random-snap-echain-4096 --workload random --snapshots \
		--vleaf-cap 4 --seed 1051 --workloads 6 --ops 40 --max-states 16
	chain_states random-snap-echain-4096 element
	# a DIR_INDEX volume (format.md 15.5) whose directory D reaches the
	# four blocks at which its on-disk index is built, then keeps it
	sharded random-dirindex-512 --workload random --dir-index --seed 1 \
		--workloads 24 --ops 30 --block-size 512 --max-states 64
	dx_states random-dirindex-512
	# the same at 1 KiB and 4 KiB (D of 47 and 191 entries of 64 bytes)
	sharded random-dirindex-1024 --workload random --dir-index \
		--seed 2001 --workloads 12 --ops 30 --block-size 1024 \
		--max-states 64
	dx_states random-dirindex-1024
	sharded random-dirindex-4096 --workload random --dir-index \
		--seed 3001 --workloads 8 --ops 30 --block-size 4096 \
		--max-states 32
	dx_states random-dirindex-4096
	;;
esac

# the kept states: one crashsim argument line each (# comments)
n=0
while IFS= read -r line; do
	case $line in '' | '#'*) continue ;; esac
	n=$((n + 1))
	# shellcheck disable=SC2086
	if "$sim" $line >"$work/reg.$n" 2>&1; then
		pass "regression-$n"
	else
		fail "regression-$n" "$line: $(grep -m1 '^state' "$work/reg.$n" | cut -c1-300)"
	fi
done <tests/crash/regressions
