#!/bin/sh
# The fsck damage campaign (issue 19): random single-block and
# single-field damage of volumes of every kind, and what fsck.tux3 makes
# of it.
#
#   sh tests/fuzz/fsck_campaign.sh [BUILD]          (make fuzz-fsck)
#
#   FUZZ_FSCK_N=600       mutations
#   FUZZ_FSCK_SEED=1      seed; case I of the run has seed SEED*100000+I
#   FUZZ_FSCK_JOBS=N      cases run at once (default: the cores, at most 4)
#   FUZZ_FSCK_KEEP=DIR    failing cases' images and logs (default
#                         BUILD/fuzz-fsck-failures; at most
#                         FUZZ_FSCK_KEEP_MAX=40 cases are kept)
#   FUZZ_FSCK_KINDS="pop4k pop1k ..."   only these volume kinds
#   FUZZ_FSCK_CASE=KIND:SEED[:DAMAGES]  run one case, say all, keep it
#   FUZZ_FSCK_RESULTS=FILE  also write the result of every case there, one
#                         line each (to compare two runs)
#   FUZZ_FSCK_DAMAGES=N   damages per case (default 1): the first is the
#                         case's single damage, damage k>1 has seed
#                         SEED*10+k, each on any block of any class, so
#                         the repairs meet one another's damage
#
# Volume kinds, each made once per run from host trees that
# tests/fuzz/fsck_fuzz.py writes (fixed contents, SOURCE_DATE_EPOCH and a
# fixed UUID, so a case is the same damage of the same volume on every
# run):
#   pop4k, pop1k   about 1,000 files, a 600-entry directory, xattrs, hard
#                  links, symlinks, a sparse file, a file of 40 extents;
#                  mkfs.tux3 -d at 4 KiB and 1 KiB blocks (as mkfs leaves
#                  it: the whole tree in the log, never unified)
#   small512, small16k, small64k   a tree of about 150 files at 512 B,
#                  16 KiB and 64 KiB blocks
#   unified4k      pop4k, edited with tux3debug, then unified (bitmap and
#                  countmap on disk, the log one block)
#   logonly1k      pop1k unified, then three deltas of edits after it
#   orphans4k      pop4k through tux3fuse: files unlinked while open, the
#                  daemon killed; orphans in the orphan table (a unify
#                  came between) and in the log (needs FUSE, else skipped)
#   dirindex1k     the populated tree at 1 KiB blocks made with -O
#                  dir_index: the on-disk directory index (format.md
#                  15.5) of its large directories (root, table and
#                  bucket blocks: block class dirindex)
#   snap4k         pop4k with snapshots (tux3debug snapshot create, writes
#                  in the live version and in a snapshot): a version
#                  table, versioned leaves
#   spill512       small512 with eight snapshots, a file's 150-byte
#                  xattrs changed after each: its older versions'
#                  attributes past the leaf, in an attribute chain
#                  (format.md 17.3b; block class spill)
#   echain512      small512 with /hot's first block rewritten after each
#                  of 32 snapshots: its elements in an element chain
#                  (format.md 17.3c; block class echain)
#   oracle-small-delta, oracle-small-unified, oracle-tree-fuse,
#   oracle-orphan, oracle-empty-512   volumes the reference Tux3 code
#                  wrote (../shared/oracle, or $TUX3_ORACLE_SRC; left
#                  out where they are not): its own log chains, unify
#                  states, orphans and sparse inode numbers
# pop4k and pop1k get twice the cases of the others.
#
# Damage (fsck_fuzz.py mutate): one live metadata block, found through
# tux3debug icheck (bnode, ileaf, oleaf, dleaf, vleaf, log, directory,
# directory index, atom table, bitmap, countmap blocks), given 1-4 flipped bits, 1-16
# random bytes, zeroes, or another such block's contents; or one
# superblock or extension-record field set to another value (the
# record's CRC mostly made good again); or, on snap4k, bits or one field
# of the version table (its CRC mostly made good).
#
# Each case: fsck.tux3 -fn, -fy, -fn again, each under timeout 60.
#   detected     the first -fn exits non-zero
#   repaired     detected, -fy exits 0 or 1, then -fn exits 0
#   gave up      detected, -fy exits 4 (or 5)
#   violations   unrepaired (-fy exits 0 or 1, the second -fn does not
#                exit 0); -fy disagreed with a clean -fn (exit not 0, the
#                image changed where it does not on the undamaged volume,
#                or the next -fn not clean); undetected damage (-fn
#                passed, but tux3debug manifest of the live version or of
#                a snapshot, or tux3debug check, reports an error)
#   legal        -fn passed and the volume reads back cleanly
#   exit>=8, signals, timeouts, sanitizer reports: of any of the runs
# The repair rate is repaired / detected, for all cases and for block
# damage on pop4k and pop1k.  The summary ends with one line
# "fuzz-fsck-counts: ..." for scripts; the exit status is 1 when any case
# failed (a violation, exit >= 8, a signal, a timeout, a sanitizer
# report), 2 when no volume could be made.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
helper=$top/tests/fuzz/fsck_fuzz.py
# The helper runs a few times per case: prefer the system's python3 to a
# version manager's shim in PATH, which can take ten times as long to
# start (PYTHON=... to choose).
if [ -z "${PYTHON:-}" ]; then
	PYTHON=python3
	[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
fi

# ---- one case (run by xargs: sh fsck_campaign.sh --case I) ----

# fsck_run NAME ARGS...: fsck.tux3 on the case's image, output in
# $d/NAME.out and .err; sets rc, and adds crash flags
fsck_run() {
	name=$1
	shift
	t0=$(date +%s)
	timeout -k 10 60 "$FZ_BUILD/fsck.tux3" "$@" "$img" \
		> "$d/$name.out" 2> "$d/$name.err"
	rc=$?
	t1=$(date +%s)
	crash "$rc" "$d/$name.err" $((t1 - t0)) "fsck $* ($name)"
}

# crash RC ERRFILE SECONDS WHAT: the flags of a run's end
crash() {
	if grep -q "Sanitizer\|runtime error" "$2"; then
		flag sanitizer "$4: $(grep -m1 "Sanitizer\|runtime error" "$2")"
	elif [ "$1" -eq 124 ] || { [ "$1" -ge 128 ] && [ "$3" -ge 60 ]; }; then
		flag timeout "$4: over 60 s"
	elif [ "$1" -gt 128 ]; then
		flag signal "$4: signal $(($1 - 128))"
	elif [ "$1" -ge 8 ]; then
		flag exit8 "$4: exit $1: $(cat "$2" "${2%.err}.out" |
			grep -v '^Pass' | head -1 | cut -c1-160)"
	else
		return 0
	fi
	return 1
}

flags= why=
flag() {
	case ,$flags, in
	*,$1,*) ;;
	*) flags="$flags${flags:+,}$1" ;;
	esac
	[ -z "$why" ] && [ -n "${2:-}" ] && why=$2
	return 0
}

# usable: the live version and every snapshot read back (tux3debug
# manifest: every file's data, xattrs and link target read, nothing
# written to the host; a walk of the names, find, when manifest runs out
# of time without an error), and tux3debug check finds nothing; sets why
# when not
usable() {
	tags=
	if [ -s "$FZ_WORK/base/$kind.snap" ]; then
		tags=$(timeout 60 "$FZ_BUILD/tux3debug" -R "snapshot list" "$img" \
			2>/dev/null | awk '{ print $1 }')
	fi
	for v in / $tags; do
		case $v in /) src=/ ;; *) src=@$v/ ;; esac
		timeout 30 "$FZ_BUILD/tux3debug" -R "manifest $src" "$img" \
			> "$d/manifest.out" 2> "$d/manifest.err"
		r=$?
		if [ $r -eq 124 ] && [ ! -s "$d/manifest.err" ]; then
			# out of time without an error: a legal size can make a
			# file petabytes of holes, which manifest hashes; the
			# namespace walk and check below must do
			timeout 60 "$FZ_BUILD/tux3debug" -R "find $src" "$img" \
				> "$d/manifest.out" 2> "$d/manifest.err"
			r=$?
		fi
		if [ $r -ne 0 ] || [ -s "$d/manifest.err" ]; then
			why="manifest $src: exit $r: $(head -1 "$d/manifest.err" |
				cut -c1-200)"
			return 1
		fi
	done
	timeout 60 "$FZ_BUILD/tux3debug" -R check "$img" > "$d/check.out" \
		2> "$d/check.err"
	r=$?
	if [ $r -ne 0 ] || [ -s "$d/check.err" ] ||
	   [ "$(tail -1 "$d/check.out")" != "0 problems" ]; then
		why="check: exit $r: $(cat "$d/check.err" "$d/check.out" |
			grep -v '^0 problems$' | head -1 | cut -c1-200)"
		return 1
	fi
	return 0
}

# keep: the damaged image before -fy, the image after, and every log
keep() {
	[ -n "$FZ_KEEP" ] || return 0
	k=$FZ_KEEP/$kind-$seed
	if [ -z "${FZ_ONE:-}" ]; then
		mkdir -p "$FZ_KEEP"
		[ "$(ls "$FZ_KEEP" | wc -l)" -lt "${FUZZ_FSCK_KEEP_MAX:-40}" ] ||
			return 0
	fi
	rm -rf "$k"
	mkdir -p "$k"
	cp --sparse=always "$FZ_WORK/base/$kind.img" "$k/before.img"
	damage "$k/before.img" > /dev/null
	cp --sparse=always "$img" "$k/after.img"
	for f in "$d"/*.out "$d"/*.err; do
		[ -e "$f" ] && cp "$f" "$k/"
	done
	{
		echo "kind $kind, seed $seed: $target $op: $detail"
		echo "exits (-fn/-fy/-fn): $rcs; $flags"
		echo "$why"
		echo "reproduce: $repro"
		echo "before.img: the damaged volume; after.img: after -fy"
	} > "$k/README"
}

# damage IMG: the case's damages (FUZZ_FSCK_DAMAGES, default 1), the
# first one's TARGET <TAB> OP <TAB> and every one's detail
damage() {
	_m=$("$PYTHON" "$helper" mutate "$1" "$FZ_WORK/base/$kind.idx" "$seed")
	_k=2
	while [ "$_k" -le "${FUZZ_FSCK_DAMAGES:-1}" ]; do
		_n=$("$PYTHON" "$helper" mutate "$1" "$FZ_WORK/base/$kind.idx" \
			"$((seed * 10 + _k))")
		_m="$_m + $(printf '%s' "$_n" | cut -f1,2 | tr '\t' ' '): $(
			printf '%s' "$_n" | cut -f3)"
		_k=$((_k + 1))
	done
	printf '%s\n' "$_m"
}

run_case() {
	i=$1
	if [ -n "${FZ_ONE:-}" ]; then
		kind=${FZ_ONE%%:*} seed=${FZ_ONE#*:}
		case $seed in *:*)	# KIND:SEED:DAMAGES
			FUZZ_FSCK_DAMAGES=${seed#*:} seed=${seed%%:*} ;;
		esac
	else
		set -- $FZ_SLOTS
		shift $(( (i - 1) % $# ))
		kind=$1 seed=$((FZ_SEED * 100000 + i))
	fi
	case_id=$kind:$seed
	[ "${FUZZ_FSCK_DAMAGES:-1}" -gt 1 ] && case_id=$case_id:$FUZZ_FSCK_DAMAGES
	repro="FUZZ_FSCK_CASE=$case_id sh tests/fuzz/fsck_campaign.sh $FZ_BUILDNAME"
	d=$FZ_WORK/c$i
	rm -rf "$d"
	mkdir -p "$d"
	img=$d/v.img
	cp --sparse=always "$FZ_WORK/base/$kind.img" "$img"
	m=$(damage "$img")
	target=$(printf '%s' "$m" | cut -f1)
	op=$(printf '%s' "$m" | cut -f2)
	detail=$(printf '%s' "$m" | cut -f3)
	flags= why=

	fsck_run n -fn
	rn=$rc
	ry=- rn2=-
	if [ $rn -ne 0 ] && [ $rn -ne 124 ] && [ $rn -le 128 ]; then
		flag detected
	fi
	if [ $rn -eq 0 ]; then
		if usable; then clean=1; else clean=0; fi
		sum=$(md5sum < "$img")
	fi
	fsck_run y -fy
	ry=$rc
	fsck_run n2 -fn
	rn2=$rc
	if [ $rn -eq 0 ]; then
		if [ $ry -ne 0 ] || [ $rn2 -ne 0 ] ||
		   { [ ! -e "$FZ_WORK/base/$kind.fywrites" ] &&
		     [ "$(md5sum < "$img")" != "$sum" ]; }; then
			flag fy-disagrees "-fn passed, then -fy exited $ry$(
				[ $ry -eq 0 ] && [ $rn2 -eq 0 ] &&
				echo ' and changed the image'), -fn $rn2: $(
				grep -m1 '(' "$d/y.out" | cut -c1-160)"
		fi
		if [ $clean = 1 ]; then
			case ,$flags, in *,fy-disagrees,*) ;; *) flag legal ;; esac
		else
			flag undetected
		fi
	elif [ $rn -ne 124 ] && [ $rn -le 128 ]; then
		if [ $ry -eq 0 ] || [ $ry -eq 1 ]; then
			if [ $rn2 -eq 0 ]; then
				flag repaired
			elif [ $rn2 -lt 8 ]; then
				flag unrepaired "-fy exited $ry, then -fn exited $rn2: $(
					grep -m1 '(' "$d/n2.out" | cut -c1-160)"
			fi
		elif [ $ry -ge 4 ] && [ $ry -lt 8 ]; then
			flag gaveup
		fi
	fi
	rcs=$rn/$ry/$rn2
	why=$(printf '%s' "$why" | tr '\t\n' '  ')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "$kind" "$seed" \
		"$target" "$op" "$rcs" "$flags" "$detail" "$why" "$repro" \
		> "$FZ_WORK/res/$i"
	case ,$flags, in
	*,unrepaired,*|*,fy-disagrees,*|*,undetected,*|*,exit8,*|*,signal,*|\
	*,timeout,*|*,sanitizer,*)
		keep ;;
	*)
		[ -n "${FZ_ONE:-}" ] && keep ;;
	esac
	if [ -n "${FZ_ONE:-}" ]; then
		echo "== $kind seed $seed: $target $op: $detail"
		for f in n y n2; do
			echo "-- fsck.tux3 $( [ $f = y ] && echo -fy || echo -fn):"
			cat "$d/$f.out" "$d/$f.err"
		done
		[ -e "$d/check.out" ] && { echo "-- tux3debug check:"; cat "$d/check.out"; }
		echo "-- exits $rcs, flags: $flags${why:+; $why}"
		echo "-- kept in $FZ_KEEP/$kind-$seed"
	fi
	rm -rf "$d"
}

if [ "${1:-}" = --case ]; then
	shift
	for c in "$@"; do run_case "$c"; done
	exit 0
fi

# ---- the run ----

build=${1:-build}
buildname=$build
case $build in /*) ;; *) build=$top/$build ;; esac
for t in mkfs.tux3 fsck.tux3 tux3debug; do
	if [ ! -x "$build/$t" ]; then
		echo "fuzz-fsck: $build/$t not built" >&2
		exit 2
	fi
done
command -v "$PYTHON" >/dev/null 2>&1 || { echo "fuzz-fsck: no python3" >&2; exit 2; }
n=${FUZZ_FSCK_N:-600}
seed=${FUZZ_FSCK_SEED:-1}
jobs=${FUZZ_FSCK_JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$jobs" -gt 4 ] && [ -z "${FUZZ_FSCK_JOBS:-}" ] && jobs=4
keepdir=${FUZZ_FSCK_KEEP-$build/fuzz-fsck-failures}
case $keepdir in /*|'') ;; *) keepdir=$(pwd)/$keepdir ;; esac
oracle=${TUX3_ORACLE_SRC:-$top/../shared/oracle}
oracle_kinds=
for o in small-delta small-unified tree-fuse orphan empty-512; do
	[ -e "$oracle/$o.img.zst" ] && oracle_kinds="$oracle_kinds oracle-$o"
done
kinds=${FUZZ_FSCK_KINDS:-pop4k pop1k small512 small16k small64k unified4k logonly1k orphans4k snap4k dirindex1k spill512 echain512$oracle_kinds}
one=${FUZZ_FSCK_CASE:-}
[ -n "$one" ] && kinds=${one%%:*}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=86}
export SOURCE_DATE_EPOCH=1700000000
UUID=4f1c2a6e-0d3b-4c5a-9e8f-0000000000$(printf %02d 19)

scratch=${TUX3_SCRATCH:-/tmp}
[ -z "${TUX3_SCRATCH:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && scratch=/dev/shm
work=$(mktemp -d "$scratch/fuzz-fsck.XXXXXX") || exit 2
mnt=
dpid=
cleanup() {
	[ -n "$dpid" ] && kill -9 "$dpid" 2>/dev/null
	[ -n "$mnt" ] && { umount -l "$mnt" 2>/dev/null ||
		fusermount3 -uz "$mnt" 2>/dev/null; }
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/base" "$work/res"
start=$(date +%s)
mkfs=$build/mkfs.tux3
dbg=$build/tux3debug

tree() {	# tree populated|small: the host tree, made once
	[ -d "$work/tree-$1" ] || "$PYTHON" "$helper" tree "$work/tree-$1" "$1"
}

# new KIND TREE BLOCKSIZE SIZE [MKFS-OPTION...]: mkfs.tux3 -d
new() {
	_k=$1 _t=$2 _b=$3 _s=$4
	shift 4
	tree "$_t" &&
	"$mkfs" -q -U "$UUID" -b "$_b" "$@" -d "$work/tree-$_t" \
		"$work/base/$_k.img" "$_s" 2> "$work/base/$_k.err"
}

# from KIND OTHER: start from another kind's volume
from() {
	[ -e "$work/base/$2.img" ] || make_kind "$2" || return 1
	cp --sparse=always "$work/base/$2.img" "$work/base/$1.img"
}

edits() {	# three deltas of edits
	cat <<-EOF
	write $work/note /new1
	mkdir /newdir
	delta
	rm /d00/sub0/f005
	setxattr /big user.x hello
	truncate /d03/sub0/f004 100
	delta
	mv /d01/sub1/f002 /newdir/moved
	ln /hard1 /newdir/hard
	ln -s /holes /newdir/sym
	write -f $work/note /d02/sub2/f003
	delta
	EOF
}

make_orphans() {
	if [ ! -c /dev/fuse ] || [ ! -x "$build/tux3fuse" ]; then
		echo "no /dev/fuse or no $build/tux3fuse"; return 1
	fi
	if [ "$(id -u)" != 0 ] && ! command -v fusermount3 >/dev/null 2>&1; then
		echo "not root and no fusermount3"; return 1
	fi
	from orphans4k pop4k || { echo "no pop4k"; return 1; }
	mnt=$work/mnt
	mkdir -p "$mnt"
	"$build/tux3fuse" -f -o commit=0 "$work/base/orphans4k.img" "$mnt" \
		> "$work/base/orphans4k.log" 2>&1 &
	dpid=$!
	i=0
	until grep -q " $mnt " /proc/self/mountinfo; do
		i=$((i + 1))
		if [ $i -gt 200 ] || ! kill -0 $dpid 2>/dev/null; then
			kill -9 $dpid 2>/dev/null; wait $dpid 2>/dev/null
			dpid= mnt=
			echo "tux3fuse did not mount: $(tail -1 "$work/base/orphans4k.log")"
			return 1
		fi
		sleep 0.1
	done
	timeout 120 "$PYTHON" - "$mnt" >> "$work/base/orphans4k.log" 2>&1 <<-'EOF'
	import os, sys
	m = sys.argv[1]
	fds = []
	def orphan(d, i):
	    p = '%s/d%02d/sub%d/f%03d' % (m, d, d % 3, i)
	    fd = os.open(p, os.O_RDWR)
	    os.write(fd, b'x' * 9000)
	    os.unlink(p)
	    os.fsync(fd)
	    fds.append(fd)
	for d in range(3):
	    orphan(d, 7)
	# 64 log blocks make a unify: these orphans move to the orphan table
	for i in range(80):
	    with open('%s/c%03d' % (m, i), 'wb') as f:
	        f.write(b'y' * 100)
	        os.fsync(f.fileno())
	# and these stay in the log
	for d in range(5, 7):
	    orphan(d, 8)
	EOF
	r=$?
	kill -9 $dpid 2>/dev/null
	wait $dpid 2>/dev/null
	dpid=
	umount -l "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null
	mnt=
	if [ $r -ne 0 ]; then
		echo "the workload in the mount failed"; return 1
	fi
	no=$("$dbg" -R orphans "$work/base/orphans4k.img" 2>/dev/null |
		grep -c "in the orphan table")
	nl=$("$dbg" -R orphans "$work/base/orphans4k.img" 2>/dev/null |
		grep -c "since the last unify")
	if [ "$no" -eq 0 ] || [ "$nl" -eq 0 ]; then
		echo "orphans: $no in the table, $nl in the log"; return 1
	fi
}

# make_kind KIND: the base volume $work/base/KIND.img; on failure
# prints why
make_kind() {
	case $1 in
	pop4k) new pop4k populated 4096 32m ;;
	pop1k) new pop1k populated 1024 32m ;;
	small512) new small512 small 512 16m ;;
	small16k) new small16k small 16384 32m ;;
	small64k) new small64k small 65536 64m ;;
	dirindex1k) new dirindex1k populated 1024 32m -O dir_index ;;
	unified4k)
		from unified4k pop4k && edits > "$work/script" &&
		echo unify >> "$work/script" &&
		"$dbg" -w -f "$work/script" "$work/base/unified4k.img" \
			> "$work/base/unified4k.log" 2>&1 ;;
	logonly1k)
		from logonly1k pop1k &&
		"$dbg" -w -R unify "$work/base/logonly1k.img" \
			> "$work/base/logonly1k.log" 2>&1 &&
		edits > "$work/script" &&
		"$dbg" -w -f "$work/script" "$work/base/logonly1k.img" \
			>> "$work/base/logonly1k.log" 2>&1 ;;
	orphans4k) make_orphans ;;
	snap4k)
		from snap4k pop4k && cat > "$work/script" <<-EOF &&
		snapshot create mon
		write -f $work/note /d00/sub0/f003
		rm /d01/sub1/f004
		mkdir /after-mon
		delta
		snapshot create tue
		write -f $work/note /holes
		setxattr /big user.y tue
		snapshot create wed --of mon
		EOF
		"$dbg" -w -f "$work/script" "$work/base/snap4k.img" \
			> "$work/base/snap4k.log" 2>&1 &&
		"$dbg" -w -S wed -R "write $work/note /in-wed" \
			"$work/base/snap4k.img" >> "$work/base/snap4k.log" 2>&1 &&
		echo yes > "$work/base/snap4k.snap" ;;
	spill512)
		from spill512 small512 &&
		v=$(printf '%0150d' 0) &&
		for i in 1 2 3 4 5 6 7 8; do
			echo "snapshot create s$i"
			echo "setxattr /spilled user.a $i${v#?}"
			echo "setxattr /spilled user.b $i${v#?}"
		done > "$work/script" &&
		"$dbg" -w -R "write $work/note /spilled" \
			"$work/base/spill512.img" > "$work/base/spill512.log" 2>&1 &&
		"$dbg" -w -f "$work/script" "$work/base/spill512.img" \
			>> "$work/base/spill512.log" 2>&1 &&
		"$dbg" -R "extents /spilled" "$work/base/spill512.img" |
			grep -q 'attributes past the leaf' &&
		echo yes > "$work/base/spill512.snap" ;;
	echain512)
		from echain512 small512 &&
		"$build/tests/mkvtable" "$work/base/echain512.img" hot \
			> "$work/base/echain512.log" 2>&1 &&
		"$dbg" -R "extents /hot" "$work/base/echain512.img" |
			grep -q 'element lists past the leaf' &&
		echo yes > "$work/base/echain512.snap" ;;
	oracle-*) oracle_kind "${1#oracle-}" ;;
	*) echo "unknown kind"; return 1 ;;
	esac
}

# oracle_kind NAME: a volume the reference code wrote, as it wrote it
# (../shared/oracle/NAME.img.zst, or $TUX3_ORACLE_SRC): its log chains,
# unify states and allocation policy are the reference's, not ours
oracle_kind() {
	z=$oracle/$1.img.zst
	[ -e "$z" ] || { echo "no $z (no oracle volumes)"; return 1; }
	command -v zstd >/dev/null 2>&1 || { echo "no zstd"; return 1; }
	zstd -q -f -d "$z" -o "$work/base/oracle-$1.img"
}

printf 'a note, written by the campaign\n' > "$work/note"
touch -d @1700000000 "$work/note"
built=
skipped=
for k in $kinds; do
	out=$(make_kind "$k" 2>&1)
	r=$?
	if [ $r -eq 0 ] && [ -e "$work/base/$k.img" ]; then
		# the undamaged volume must be clean and read back
		img=$work/base/$k.img d=$work/check-$k kind=$k
		mkdir -p "$d"
		"$build/fsck.tux3" -fn "$img" > "$d/n.out" 2>&1
		r=$?
		if [ $r -ne 0 ]; then
			out="fsck.tux3 -fn exits $r: $(grep -m1 '(' "$d/n.out")"
		elif ! FZ_WORK=$work FZ_BUILD=$build usable; then
			r=1 out="not readable: $why"
		else
			"$PYTHON" "$helper" index "$img" "$dbg" "$work/base/$k.idx" \
				> "$d/index" || r=1
			cp --sparse=always "$img" "$d/y.img"
			"$build/fsck.tux3" -fy "$d/y.img" > /dev/null 2>&1
			out=$(cat "$d/index")
			cmp -s "$img" "$d/y.img" || {
				touch "$work/base/$k.fywrites"
				out="$out (fsck -fy writes it undamaged: only its exit counts)"
			}
		fi
		rm -rf "$d"
	fi
	if [ $r -eq 0 ]; then
		built="$built $k"
		[ -z "$one" ] && echo "fuzz-fsck: $k: $out"
	else
		skipped="$skipped $k"
		echo "fuzz-fsck: kind $k not made: $(printf '%s' "$out" |
			tr '\n' ' ' | cut -c1-300)"
	fi
done
if [ -z "$built" ]; then
	echo "fuzz-fsck: no volume could be made"
	exit 2
fi

# the failing cases of an earlier run go
if [ -z "$one" ] && [ -n "$keepdir" ] && [ -d "$keepdir" ]; then
	for k in "$keepdir"/*-[0-9]*; do
		[ -f "$k/README" ] && rm -rf "$k"
	done
fi
export FZ_WORK=$work FZ_BUILD=$build FZ_BUILDNAME=$buildname FZ_SEED=$seed
export FZ_KEEP=$keepdir
if [ -n "$one" ]; then
	FZ_ONE=$one
	export FZ_ONE
	sh "$0" --case 1
	exit 0
fi
# interleave: pop4k pop1k, the others, pop4k pop1k again
slots=$(for k in $built; do echo $k; done | awk '
	{ k[NR] = $1 }
	END { for (i = 1; i <= NR; i++) printf "%s ", k[i]
	      for (i = 1; i <= NR; i++) if (k[i] == "pop4k" || k[i] == "pop1k")
		printf "%s ", k[i] }')
export FZ_SLOTS="$slots"
echo "fuzz-fsck: $n cases on $jobs jobs, seed $seed (case I: seed $((seed * 100000))+I), volumes:$built"
seq 1 "$n" | xargs -P "$jobs" -n 4 sh "$0" --case
end=$(date +%s)
cat "$work"/res/* > "$work/results" 2>/dev/null
[ -n "${FUZZ_FSCK_RESULTS:-}" ] && sort -n "$work/results" > "$FUZZ_FSCK_RESULTS"
"$PYTHON" "$helper" summary "$work/results" $((end - start)) "$seed" \
	"$buildname" "$(echo $built)${skipped:+ (not made:$skipped)}" |
	tee "$work/summary"
[ -n "$keepdir" ] && grep -q "failing cases" "$work/summary" &&
	echo "fuzz-fsck: failing cases kept in $keepdir"
grep -q "failing cases" "$work/summary" && exit 1
exit 0
