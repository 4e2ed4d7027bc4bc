#!/bin/sh
# fsck.tux3's work and memory follow the file count, counted rather than
# timed (fsck -t prints each pass's inode loads and device reads and the
# size of pass 5's per-inode state):
#   fsck_scale/reads    device reads of each pass, 10x the files: 10x the
#                       reads, within 8x..12x (a pass per entry over a tree
#                       lookup, or a cache that thrashes, shows as more)
#   fsck_scale/loads    inodes loaded in all passes: 10x, within 8x..12x
#   fsck_scale/state    pass 5's per-inode state: under 2 bytes a file
#   fsck_scale/populate mkfs.tux3 -d's peak memory: the larger tree costs
#                       less than 1 MiB more than the smaller (flat)
# Trees of empty files in directories of 100 entries (FSCK_SCALE_N and
# 10x that; default 2,000 and 20,000).
set -u
T=fsck_scale
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
mkfs=$build/mkfs.tux3
fsck=$build/fsck.tux3
N=${FSCK_SCALE_N:-2000}

if [ ! -x "$mkfs" ] || [ ! -x "$fsck" ]; then
	fail all "tools not built in $build"
	exit 0
fi
[ -x /usr/bin/time ] || { skip populate "no /usr/bin/time"; }
scratch_dir

# tree DIR COUNT: COUNT empty files, 100 to a directory
tree() {
	d=0
	while [ $((d * 100)) -lt "$2" ]; do
		mkdir -p "$1/d$d"
		seq -f "$1/d$d/f%03g" 0 99 | xargs touch
		d=$((d + 1))
	done
}

# one size: mkfs (peak KiB in $work/rss.N), then fsck -fnt
measure() {
	tree "$work/src$1" "$1"
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f %M -o "$work/rss.$1" "$mkfs" -q -d \
			"$work/src$1" "$work/v$1.img" 512m > "$work/mkfs.$1" 2>&1
	else
		"$mkfs" -q -d "$work/src$1" "$work/v$1.img" 512m \
			> "$work/mkfs.$1" 2>&1
	fi || { fail make "mkfs.tux3 -d of $1 files: $(head -1 "$work/mkfs.$1")"; exit 0; }
	rm -rf "$work/src$1"
	timeout 300 "$fsck" -fnt "$work/v$1.img" > "$work/fsck.$1" 2>&1 ||
		{ fail make "fsck.tux3 -fnt of $1 files: exit $?"; exit 0; }
}

small=$N
big=$((N * 10))
measure $small
measure $big

# per pass: "PASS LOADS READS"
work_of() {
	sed -n 's/^Pass \([0-9]\): time .*, \([0-9]*\) inodes loaded, \([0-9]*\) device reads$/\1 \2 \3/p' "$work/fsck.$1"
}
work_of $small > "$work/w.small"
work_of $big > "$work/w.big"
bad=$(awk 'NR == FNR { r[$1] = $3; next }
	   r[$1] > 50 && ($3 < 8 * r[$1] || $3 > 12 * r[$1]) {
		printf "pass %s: %d -> %d reads; ", $1, r[$1], $3 }' \
	"$work/w.small" "$work/w.big")
passes=$(wc -l < "$work/w.big")
if [ "$passes" -ge 8 ] && [ -z "$bad" ]; then
	pass reads
else
	fail reads "${bad:-$passes passes counted}"
fi

ls=$(awk '{ s += $2 } END { print s + 0 }' "$work/w.small")
lb=$(awk '{ s += $2 } END { print s + 0 }' "$work/w.big")
if [ "$ls" -gt 0 ] && [ "$lb" -ge $((ls * 8)) ] && [ "$lb" -le $((ls * 12)) ]; then
	pass loads
else
	fail loads "$ls inodes loaded for $small files, $lb for $big"
fi

kib=$(sed -n 's/^Inode state: \([0-9]*\) KiB$/\1/p' "$work/fsck.$big")
if [ -n "$kib" ] && [ $((kib * 1024)) -lt $((big * 2)) ]; then
	pass state
else
	fail state "${kib:-?} KiB of per-inode state for $big files"
fi

# A sanitizer build's peak memory is its quarantine's, not the program's.
if readelf -d "$build/libtux3.so.1" 2>/dev/null | grep -q 'libasan'; then
	skip populate "peak memory means nothing under AddressSanitizer"
elif [ -x /usr/bin/time ]; then
	rs=$(tail -1 "$work/rss.$small") rb=$(tail -1 "$work/rss.$big")
	if [ "$rb" -lt $((rs + 1024)) ]; then
		pass populate
	else
		fail populate "mkfs.tux3 -d peak $rs KiB for $small files, $rb KiB for $big"
	fi
fi
