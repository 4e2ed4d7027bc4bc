#!/bin/sh
# make bench-scale: tux3-tools against e2fsprogs as the file count grows.
# For each size of SCALE_SIZES (default 100000 1000000 10000000 files) a
# tree of small files (0-1,500 bytes; empty files from 10 million on, so
# that the tree and both images stay under ~30 GB) in directories of 1,000
# entries (scripts/scale_tree.py), and one directory of SCALE_FLAT entries
# (default 1000000; 0: none).  On each tree, side by side:
#   populate   mkfs.tux3 -d            mke2fs -t ext4 -d
#   fsck       fsck.tux3 -fn           e2fsck -fn
#   fsck-cold  the same after dropping the host's page cache, as at boot
#              (root only: /proc/sys/vm/drop_caches)
#   dot        tux3dot -T svg          -
#   image      tux3image               e2image -Q
#   manifest   tux3debug manifest /    -
#   rdump      tux3debug rdump / DIR   debugfs -R 'rdump / DIR' (DIR a
#              fresh ext4 on a loop device for each, as root)
#   find       tux3debug find /        -
#   ncheck     tux3debug ncheck INUM   debugfs -R 'ncheck INUM' (the
#              inode of the last file, by name: a whole walk for both)
# printing wall seconds, CPU seconds (user + system: on a shared machine
# the wall time includes waiting), peak RSS and the ratios to e2fsprogs
# (wall to the ms; the read-only rows: the run of median wall time of
# SCALE_REPEAT, 5);
# at the end, per operation, the growth factor from each size to the next.
# Each populate follows a sync; below SCALE_TWICE_MAX files (1,000,000)
# each tool populates and rdumps twice (tux3, e2fs, e2fs, tux3), the
# faster counts.
# The tree is made once and kept for both mkfs programs; each tree,
# image and restored copy is removed as soon as its row is measured.
# SCALE_DIR (default /tmp) holds them.  Past SCALE_E2_FLAT_MAX (100000)
# entries the one-directory tree leaves mke2fs -d out (quadratic).  Not part of the test count.
set -u
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/$build
sizes=${SCALE_SIZES:-100000 1000000 10000000}
flat=${SCALE_FLAT:-1000000}
work=$(mktemp -d "${SCALE_DIR:-/tmp}/tux3-scale.XXXXXX")
trap 'mountpoint -q "$work/out" 2>/dev/null && umount "$work/out"; rm -rf "$work"' EXIT
results=$work/results
: > "$results"
[ -x /usr/bin/time ] || { echo "bench-scale: needs GNU time (/usr/bin/time)" >&2; exit 1; }
have_e2=0
command -v mke2fs >/dev/null 2>&1 && command -v e2fsck >/dev/null 2>&1 &&
	have_e2=1

# run LABEL OP WHO CMD...: one measured run; appends
# "LABEL OP WHO wall cpu rss_kib" to $results ("fail" for a failure).
# With reps=N (a read-only command), the run of median wall time of N,
# each after $pre if set (drop_caches for the cold rows): a single run
# of a few hundredths of a second is mostly noise.
reps=1 pre=
run() {
	label=$1 op=$2 who=$3; shift 3
	: > "$work/runs"
	k=0
	while [ $k -lt $reps ]; do
		[ -n "$pre" ] && $pre
		t0=$(date +%s%N)
		if ! /usr/bin/time -f "%U %S %M" -o "$work/time" "$@" \
			>/dev/null 2>"$work/err"; then
			# e2fsck -n exits 4 on a volume it did not fix: a
			# real failure
			echo "$label $op $who fail fail fail" >> "${out:-$results}"
			sed -n 1p "$work/err" >&2
			return
		fi
		t1=$(date +%s%N)
		# the wall time in ms (GNU time's %e is in hundredths: a
		# 50 ms fsck would be read to 20%)
		echo "$(awk "BEGIN{printf \"%.3f\", ($t1 - $t0) / 1e9}")" \
			"$(tail -1 "$work/time")" >> "$work/runs"
		k=$((k + 1))
	done
	set -- $(sort -n "$work/runs" |
		 awk '{ r[NR] = $0 } END { print r[int((NR + 1) / 2)] }')
	echo "$label $op $who $1 $(awk "BEGIN{print $2 + $3}") $4" >> "${out:-$results}"
}

# populate WHO: make an image of $src with mkfs.tux3 or mke2fs, in a
# new file (the one the later rows read is the last).  No image is
# deleted between populates: right after gigabytes are freed, the host's
# ext4 is slower to take new writes (its freed extents are busy until
# its journal commits), and the run that followed a deletion paid for it
# (1M files: the same mkfs.tux3 22 s after one, 12 s otherwise).
populate() {
	pops=$((pops + 1))
	if [ $1 = tux3 ]; then
		[ -e "$timg" ] && mv "$timg" "$work/old.$pops.img"
		truncate -s "$size" "$timg"
		sync
		run "$label" populate tux3 "$b/mkfs.tux3" -q -F -d "$src" "$timg"
	else
		[ -e "$eimg" ] && mv "$eimg" "$work/old.$pops.img"
		truncate -s "$size" "$eimg"
		sync
		run "$label" populate e2fs mke2fs -q -F -t ext4 \
			-N $((n + n / 8 + 4096)) -d "$src" "$eimg"
	fi
}

# paired OP: OP tux3 and OP e2fs (populate, rdump), below
# SCALE_TWICE_MAX files twice, in the order tux3, e2fs, e2fs, tux3; each
# tool's fastest run goes to $results
paired() {
	out=$work/$1.runs
	: > "$out"
	$1 tux3
	[ $e2 = 1 ] && $1 e2fs
	if [ "$n" -le "${SCALE_TWICE_MAX:-1000000}" ]; then
		[ $e2 = 1 ] && $1 e2fs
		$1 tux3
	fi
	awk '{ k = $1 " " $2 " " $3 }
	     !(k in w) || w[k] == "fail" || ($4 != "fail" && $4 + 0 < w[k] + 0) {
		w[k] = $4; line[k] = $0 }
	     END { for (k in line) print line[k] }' "$out" | sort >> "$results"
	out=
}

# rdump WHO: one rdump of the row's image into a fresh target
rdump() {
	rdump_target "$n"
	if [ $1 = tux3 ]; then
		run "$label" rdump tux3 "$b/tux3debug" -R "rdump / $work/out" "$timg"
	else
		run "$label" rdump e2fs debugfs -R "rdump / $work/out" "$eimg"
	fi
	rdump_target_done
}

# one tree: LABEL FILES [--empty|--flat]
row() {
	label=$1 n=$2 how=${3:-}
	src=$work/src
	t0=$(date +%s)
	python3 "$top/scripts/scale_tree.py" "$src" "$n" $how || exit 1
	echo "== $label: $n files$how; tree made in $(( $(date +%s) - t0 )) s, $(du -sh "$src" | cut -f1)"
	per=$([ "$how" = --empty ] && echo 1 || echo 6)	# KiB per file
	size=$(( n * per / 1024 + 1024 ))m
	timg=$work/t.img eimg=$work/e.img
	e2=$have_e2
	# mke2fs -d is quadratic in one directory's entries (469 s for
	# 100,000 on the 2-core VM): past SCALE_E2_FLAT_MAX it is left out
	if [ "$how" = --flat ] && [ "$n" -gt "${SCALE_E2_FLAT_MAX:-100000}" ]; then
		echo "(e2fsprogs left out: mke2fs -d is quadratic in one directory)"
		e2=0
	fi
	# Each populate starts after a sync: the tree just made, and the
	# image made before, are gigabytes of dirty pages that would be
	# written back during it.  The first large write after the last
	# row's deletions is still slower for the host (1M files: 48 s
	# against 15-17 s for the same mkfs.tux3, mostly in the kernel), so
	# below SCALE_TWICE_MAX files (1,000,000) each tool populates twice,
	# in the order tux3, e2fs, e2fs, tux3, and its faster run counts.
	pops=0
	paired populate
	rm -rf "$src" "$work"/old.*.img
	# the read-only rows start with the images on disk: the kernel
	# writing back gigabytes of them meanwhile slowed the first tool
	# measured (1M files: fsck.tux3 0.89 s, 0.57 s after a sync)
	sync
	reps=${SCALE_REPEAT:-5}	# the read-only rows: the median of 5
	run "$label" fsck tux3 "$b/fsck.tux3" -fn "$timg"
	[ $e2 = 1 ] && run "$label" fsck e2fs e2fsck -fn "$eimg"
	if drop_caches; then
		pre=drop_caches
		run "$label" fsck-cold tux3 "$b/fsck.tux3" -fn "$timg"
		[ $e2 = 1 ] && run "$label" fsck-cold e2fs e2fsck -fn "$eimg"
		pre=
	fi
	run "$label" dot tux3 "$b/tux3dot" -T svg -o "$work/v.svg" "$timg"
	rm -f "$work/v.svg"
	pre="rm -f $work/t.meta"	# each run writes a new image
	run "$label" image tux3 "$b/tux3image" "$timg" "$work/t.meta"
	rm -f "$work/t.meta"
	pre="rm -f $work/e.meta"
	[ $e2 = 1 ] && run "$label" image e2fs e2image -Q "$eimg" "$work/e.meta"
	rm -f "$work/e.meta"
	pre=
	run "$label" manifest tux3 "$b/tux3debug" -R "manifest /" "$timg"
	# rdump creates a million host files and is mostly the host's
	# work: the run right after the other rows' gigabytes of reads (1M
	# files: the same rdump 42.8 s first, 25.3-26.1 s after) paid for
	# them, so below SCALE_TWICE_MAX each tool runs twice, tux3, e2fs,
	# e2fs, tux3, and its faster run counts, as populate does
	reps=1
	paired rdump
	reps=${SCALE_REPEAT:-5}
	run "$label" find tux3 "$b/tux3debug" -R "find /" "$timg"
	last=$(last_file "$n" "$how")
	ti=$("$b/tux3debug" -R "stat $last" "$timg" 2>/dev/null | inum)
	[ -n "$ti" ] && run "$label" ncheck tux3 "$b/tux3debug" -R "ncheck $ti" "$timg"
	if [ $e2 = 1 ]; then
		ei=$(debugfs -R "stat $last" "$eimg" 2>/dev/null | inum)
		[ -n "$ei" ] && run "$label" ncheck e2fs debugfs -R "ncheck $ei" "$eimg"
	fi
	reps=1
	rm -f "$timg" "$eimg"
	table "$label"
}

# rdump_target N: $work/out, where an rdump of N files goes.  As root, a
# fresh ext4 on a loop device: after a tree of millions of files is
# deleted, the host filesystem's inode allocator makes the next million
# creates several times slower (measured: 33 s against 10 s for 200,000
# files), so that whichever tool ran first would pay for the deletion.
# Elsewhere a directory of the host's filesystem.
rdump_target() {
	mkdir -p "$work/out"
	loopdst=
	[ "$(id -u)" = 0 ] && command -v mkfs.ext4 >/dev/null 2>&1 ||
		return 0
	truncate -s $(( $1 * 8 / 1024 + 1024 ))m "$work/dst.img"
	mkfs.ext4 -q -F -N $(( $1 + $1 / 8 + 4096 )) "$work/dst.img" \
		>/dev/null 2>&1 &&
		mount -o loop "$work/dst.img" "$work/out" 2>/dev/null &&
		loopdst=1
	[ -n "$loopdst" ] || rm -f "$work/dst.img"
}

rdump_target_done() {
	if [ -n "$loopdst" ]; then
		umount "$work/out"
		rm -f "$work/dst.img"
	fi
	rm -rf "$work/out"
}

# Empty the host's page cache (as after a boot); false where not root.
drop_caches() {
	[ -w /proc/sys/vm/drop_caches ] || return 1
	sync && echo 3 > /proc/sys/vm/drop_caches
}

# the number of 'stat' (both debugfs print "Inode: N")
inum() {
	sed -n 's/^Inode: \([0-9][0-9]*\).*/\1/p' | head -1
}

# last_file N HOW: the path of the last file scale_tree.py made
last_file() {
	i=$(( $1 - 1 ))
	if [ "$2" = --flat ]; then
		printf '/f%07d' $i
	else
		printf '/g%04d/d%04d/f%07d' $((i / 1000000)) $((i / 1000 % 1000)) $i
	fi
}

# the rows of one tree, tux3 beside e2fsprogs
table() {
	printf '%-9s %9s %9s %10s | %9s %9s %10s | %7s %7s\n' op "tux3 s" \
		"cpu s" "rss KiB" "e2fs s" "cpu s" "rss KiB" "time x" "rss x"
	for op in populate fsck fsck-cold dot image manifest rdump find ncheck; do
		awk -v l="$1" -v op="$op" '
			$1 == l && $2 == op && $3 == "tux3" { t = $4; tc = $5; tr = $6 }
			$1 == l && $2 == op && $3 == "e2fs" { e = $4; ec = $5; er = $6 }
			END {
				if (t == "") exit
				if (e == "") { e = "-"; ec = "-"; er = "-" }
				tx = "-"; rx = "-"
				if (e != "-" && e != "fail" && t != "fail" && t > 0)
					tx = sprintf("%.2f", e / t)
				if (er != "-" && er != "fail" && tr != "fail" && tr > 0)
					rx = sprintf("%.2f", er / tr)
				printf "%-9s %9s %9s %10s | %9s %9s %10s | %7s %7s\n",
					op, t, tc, tr, e, ec, er, tx, rx
			}' "$results"
	done
	echo "(time x, rss x: e2fsprogs / tux3, above 1 = tux3 ahead)"
	echo
}

start=$(date +%s)
echo "bench-scale: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
prev=""
for n in $sizes; do
	how=""
	[ "$n" -ge 10000000 ] && how=--empty
	row "n$n" "$n" $how
done
[ "$flat" -gt 0 ] 2>/dev/null && row "flat$flat" "$flat" --flat

echo "== growth per 10x files (tux3 wall, cpu and rss; e2fsprogs wall)"
printf '%-9s %-14s %8s %8s %8s %8s\n' op sizes wall cpu rss e2fs
for op in populate fsck fsck-cold dot image manifest rdump find ncheck; do
	prev=""
	for n in $sizes; do
		if [ -n "$prev" ]; then
			awk -v a="n$prev" -v b="n$n" -v op="$op" '
				$2 == op && $3 == "tux3" && $1 == a { w0 = $4; c0 = $5; r0 = $6 }
				$2 == op && $3 == "tux3" && $1 == b { w1 = $4; c1 = $5; r1 = $6 }
				$2 == op && $3 == "e2fs" && $1 == a { e0 = $4 }
				$2 == op && $3 == "e2fs" && $1 == b { e1 = $4 }
				function f(x, y) {
					if (x > 0 && y != "" && y != "fail")
						return sprintf("%.1f", y / x)
					return "-"
				}
				END { if (w0 != "") printf "%-9s %-14s %8s %8s %8s %8s\n",
					op, a "->" b, f(w0, w1), f(c0, c1), f(r0, r1), f(e0, e1) }' \
				"$results"
		fi
		prev=$n
	done
done
echo "bench-scale: $(( $(date +%s) - start )) s in all"
if [ -n "${SCALE_RESULTS:-}" ]; then
	cp "$results" "$SCALE_RESULTS"
fi
