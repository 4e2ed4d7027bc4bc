#!/bin/sh
# fsck.tux3's work and memory follow the file count, counted rather than
# timed (fsck -t prints each pass's inode loads and device reads and the
# size of pass 5's per-inode state):
#   fsck_scale/reads    device reads of each pass, 10x the files: 10x the
#                       reads, within 8x..12x (a pass per entry over a tree
#                       lookup, or a cache that thrashes, shows as more)
#   fsck_scale/loads    inodes loaded in all passes: 10x, within 8x..12x
#   fsck_scale/one-walk-pass8  pass 8 reads the inode table once (its
#                       block walk counts the inodes too): no more than
#                       1.25x pass 4's reads, which walk the same trees
#   fsck_scale/state    pass 5's per-inode state: under 2 bytes a file
#   fsck_scale/populate mkfs.tux3 -d's peak memory: the larger tree costs
#                       less than 1 MiB more than the smaller (flat)
#   fsck_scale/dot-kept  tux3dot keeps only what it may draw: the nodes it
#                       keeps in memory stay under 4x --max-nodes at both
#                       sizes while the nodes it walks grow 8x..12x
#   fsck_scale/work/TOOL device reads and inode loads of tux3dot,
#                       tux3image and tux3debug's manifest, rdump, find
#                       and ncheck: 10x the files, within 8x..12x
# Trees of empty files in directories of 100 entries (FSCK_SCALE_N and
# 10x that; default 2,000 and 20,000).
set -u
T=fsck_scale
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
mkfs=$build/mkfs.tux3
fsck=$build/fsck.tux3
dot=$build/tux3dot
image=$build/tux3image
debug=$build/tux3debug
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

# one size: mkfs (peak KiB in $work/rss.N: the least of three runs, as
# a loaded machine's page cache moves a run's resident pages of shared
# libraries by a few hundred KiB), then fsck -fnt.  1 KiB blocks: the
# library's bounded buffers are counted in blocks (a unify cycle keeps
# up to 256 dirty bnodes in memory, 1 MiB of 4 KiB blocks, which the
# smaller tree never fills and the larger does), so at 1 KiB what they
# add between the two sizes stays well under the 1 MiB a leak of 50
# bytes a file would show.
measure() {
	tree "$work/src$1" "$1"
	if [ -x /usr/bin/time ]; then
		for run in 1 2 3; do
			rm -f "$work/v$1.img"
			/usr/bin/time -f %M -o "$work/rss.$1.$run" "$mkfs" -q \
				-b 1024 -d "$work/src$1" "$work/v$1.img" 512m \
				> "$work/mkfs.$1" 2>&1 ||
				{ : > "$work/mkfs.$1.failed"; break; }
			tail -1 "$work/rss.$1.$run"
		done | sort -n | head -1 > "$work/rss.$1"
		[ ! -e "$work/mkfs.$1.failed" ]
	else
		"$mkfs" -q -b 1024 -d "$work/src$1" "$work/v$1.img" 512m \
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

r4=$(awk '$1 == 4 { print $3 }' "$work/w.big")
r8=$(awk '$1 == 8 { print $3 }' "$work/w.big")
if [ -n "$r4" ] && [ -n "$r8" ] && [ "$r8" -gt 0 ] &&
   [ $((r8 * 4)) -le $((r4 * 5)) ]; then
	pass one-walk-pass8
else
	fail one-walk-pass8 "pass 8 read ${r8:-?} blocks, pass 4 ${r4:-?}"
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

# ---- the other walkers: work counted (-v, tux3debug's 'work') ----
# work TOOL SIZE: "READS LOADS" of one run on the volume of SIZE files
work() {
	v=$work/v$2.img
	case $1 in
	dot)	"$dot" -v -o /dev/null "$v" 2>&1 |
		sed -n 's/^tux3dot: \([0-9]*\) device reads, \([0-9]*\) inodes loaded$/\1 \2/p' ;;
	image)	"$image" -v "$v" "$work/meta" 2>&1 |
		sed -n 's/.*: \([0-9]*\) device reads, \([0-9]*\) inodes loaded$/\1 \2/p'
		rm -f "$work/meta" ;;
	*)	rm -rf "$work/out"; mkdir "$work/out"
		case $1 in
		manifest) c="manifest /" ;;
		rdump) c="rdump / $work/out" ;;
		find) c="find /" ;;
		ncheck) c="ncheck $2" ;;	# a file near the end
		esac
		printf '%s\nwork\n' "$c" > "$work/script"
		"$debug" -f "$work/script" "$v" 2>/dev/null | awk '
			/^device reads/ { r = $3 } /^inode loads/ { l = $3 }
			END { if (r != "") print r, l }'
		rm -rf "$work/out" ;;
	esac
}

if [ -x "$dot" ] && [ -x "$image" ] && [ -x "$debug" ]; then
	ks=$("$dot" -v -o /dev/null "$work/v$small.img" 2>&1 |
		sed -n 's/^tux3dot: \([0-9]*\) nodes walked, \([0-9]*\) kept.*/\1 \2/p')
	kb=$("$dot" -v -o /dev/null "$work/v$big.img" 2>&1 |
		sed -n 's/^tux3dot: \([0-9]*\) nodes walked, \([0-9]*\) kept.*/\1 \2/p')
	set -- $ks $kb
	if [ $# -eq 4 ] && [ "$2" -lt 1600 ] && [ "$4" -lt 1600 ] &&
	   [ "$3" -ge $(($1 * 8)) ] && [ "$3" -le $(($1 * 12)) ]; then
		pass dot-kept
	else
		fail dot-kept "walked/kept: ${ks:-?} for $small files, ${kb:-?} for $big"
	fi
	for tool in dot image manifest rdump find ncheck; do
		ws=$(work $tool $small) wb=$(work $tool $big)
		set -- $ws $wb
		if [ $# -ne 4 ]; then
			fail work/$tool "no work counts: '$ws', '$wb'"
			continue
		fi
		# a count too small to scale (one inode loaded) is not judged
		bad=$(awk -v a="$1" -v b="$3" -v c="$2" -v d="$4" 'BEGIN {
			if (a > 20 && (b < 8 * a || b > 12 * a))
				printf "reads %d -> %d; ", a, b
			if (c > 20 && (d < 8 * c || d > 12 * c))
				printf "loads %d -> %d", c, d }')
		if [ -z "$bad" ]; then
			pass work/$tool
		else
			fail work/$tool "$bad"
		fi
	done
else
	skip work "tux3dot, tux3image or tux3debug not built"
fi
