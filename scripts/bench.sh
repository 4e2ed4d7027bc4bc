#!/bin/sh
# make bench: build the same tree into an image with mkfs.tux3 -d,
# mke2fs -t ext4 -d and mkfs.btrfs --rootdir, and print per tool the wall
# time, the peak RSS and the allocated size of the image, with ratios to
# mkfs.tux3.  Then, on the images of /usr/include, the read-only checks:
# fsck.tux3 -fn, e2fsck -fn and btrfs check --readonly, wall time (best
# of 3, warm cache) and peak RSS with ratios to fsck.tux3.  Installs
# e2fsprogs, btrfs-progs and GNU time when missing (as root).  Then a
# short run of the fsck damage campaign (BENCH_FUZZ_FSCK_N mutations,
# default 100, seed 1; make fuzz-fsck runs it in full) and its summary,
# the repair rate among it.  Then the
# versioned layers' costs, fsck.tux3 -fn against the number of snapshots,
# and tux3fuse's workloads (scripts/bench_fuse.sh) against ext4 on a loop
# device, fuse2fs and tmpfs (as root).  Last, one big directory
# (dir_bench), and bench-scale's 100,000-file row.  Not part of the test
# count.  BENCH_ONLY="PART..." runs only those parts, of: trees (the mkfs
# and fsck tables), fuzz, versions, vfsck, diff, fuse, dir, scale.
set -u
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
mkfs_tux3="$top/$build/mkfs.tux3"
fsck_tux3="$top/$build/fsck.tux3"
work=$(mktemp -d /tmp/tux3-bench.XXXXXX)
# part NAME: whether BENCH_ONLY (if set) names this part
part() {
	[ -z "${BENCH_ONLY:-}" ] && return 0
	case " $BENCH_ONLY " in *" $1 "*) return 0 ;; esac
	return 1
}
trap 'umount "$work/btmnt" 2>/dev/null; umount "$work/fmnt" 2>/dev/null;
	rm -rf "$work"' EXIT

need=""
command -v mke2fs >/dev/null 2>&1 || need="$need e2fsprogs"
command -v mkfs.btrfs >/dev/null 2>&1 || need="$need btrfs-progs"
[ -x /usr/bin/time ] || need="$need time"
if [ -n "$need" ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "bench: installing:$need"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $need >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $need >/dev/null; } ||
		echo "bench: could not install$need" >&2
	else
		echo "bench: missing$need (run as root to install)" >&2
	fi
fi

# One run: TOOL-NAME COMMAND... ; prints "seconds rss_kib alloc_kib"
measure() {
	img=$1; shift
	rm -f "$img"
	truncate -s "$size" "$img"
	/usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" ||
		{ echo "fail"; return; }
	set -- $(cat "$work/time")
	echo "$1 $2 $(du -k "$img" | cut -f1)"
}

# One read-only check of an existing image: prints "seconds rss_kib", the
# best wall time of 3 runs (ns clock: these take milliseconds) and the
# largest peak RSS (GNU time %M), or "fail" if the check did not exit 0.
check() {
	best="" rss=0
	for run in 1 2 3; do
		t0=$(date +%s%N)
		/usr/bin/time -f "%M" -o "$work/time" "$@" >/dev/null \
			2>"$work/err" || { echo "fail"; return; }
		t1=$(date +%s%N)
		ns=$((t1 - t0))
		{ [ -z "$best" ] || [ $ns -lt $best ]; } && best=$ns
		r=$(tail -1 "$work/time")
		[ "$r" -gt "$rss" ] && rss=$r
	done
	echo "$(awk "BEGIN{printf \"%.4f\", $best / 1e9}") $rss"
}

# fsck table: the images t.img, e.img and b.img of one tree
fsck_bench() {
	tt=fail ee=fail bb=fail
	[ "$t" != fail ] && [ -x "$fsck_tux3" ] &&
		tt=$(check "$fsck_tux3" -fn "$work/t.img")
	[ "$e" != fail ] && command -v e2fsck >/dev/null 2>&1 &&
		ee=$(check e2fsck -fn "$work/e.img")
	[ "$b" != fail ] && command -v btrfs >/dev/null 2>&1 &&
		bb=$(check btrfs check --readonly "$work/b.img")
	echo "-- read-only check of the same images (best of 3, warm cache)"
	printf '%-22s %9s %10s %8s %8s\n' check seconds "rss KiB" "time x" "rss x"
	for row in "fsck.tux3 -fn:$tt" "e2fsck -fn:$ee" \
		   "btrfs check --readonly:$bb"; do
		name=${row%%:*}; vals=${row#*:}
		if [ "$vals" = fail ] || [ "$tt" = fail ]; then
			printf '%-22s %s\n' "$name" "failed or not installed"
			continue
		fi
		set -- $vals; s=$1 r=$2
		set -- $tt; ts=$1 tr=$2
		printf '%-22s %9s %10s %8s %8s\n' "$name" "$s" "$r" \
			"$(awk "BEGIN{printf \"%.2f\", $s / ($ts > 0 ? $ts : 0.0001)}")" \
			"$(awk "BEGIN{printf \"%.2f\", $r / $tr}")"
	done
	echo
}

part trees &&
for tree in /usr/share/doc /usr/include; do
	[ -d "$tree" ] || continue
	bytes=$(du -sk "$tree" | cut -f1)
	files=$(find "$tree" | wc -l)
	# room for the tree with slack, at least 256 MiB (btrfs needs it)
	size=$(( (bytes * 3 / 1024 + 256) ))m
	echo "== $tree: $files paths, $((bytes / 1024)) MiB; images of $size"
	t=$(measure "$work/t.img" "$mkfs_tux3" -q -F -d "$tree" "$work/t.img")
	e=fail; b=fail
	command -v mke2fs >/dev/null 2>&1 &&
		e=$(measure "$work/e.img" mke2fs -q -F -t ext4 -d "$tree" "$work/e.img")
	command -v mkfs.btrfs >/dev/null 2>&1 &&
		b=$(measure "$work/b.img" mkfs.btrfs -q -f --rootdir "$tree" "$work/b.img")
	printf '%-12s %9s %10s %12s %8s %8s %8s\n' tool seconds "rss KiB" \
		"alloc KiB" "time x" "rss x" "size x"
	for row in "mkfs.tux3:$t" "mke2fs:$e" "mkfs.btrfs:$b"; do
		name=${row%%:*}; vals=${row#*:}
		if [ "$vals" = fail ] || [ "$t" = fail ]; then
			printf '%-12s %s\n' "$name" "failed or not installed"
			continue
		fi
		set -- $vals; s=$1 r=$2 a=$3
		set -- $t; ts=$1 tr=$2 ta=$3
		printf '%-12s %9s %10s %12s %8s %8s %8s\n' "$name" "$s" "$r" "$a" \
			"$(awk "BEGIN{printf \"%.2f\", $s / ($ts > 0 ? $ts : 0.01)}")" \
			"$(awk "BEGIN{printf \"%.2f\", $r / $tr}")" \
			"$(awk "BEGIN{printf \"%.2f\", $a / $ta}")"
	done
	echo
	[ "$tree" = /usr/include ] && fsck_bench
done
part trees &&
echo "(ratios are relative to mkfs.tux3, and to fsck.tux3 for the checks: above 1
 means the tux3 tool is faster, leaner or smaller)"

# ---- fsck damage campaign (issue 19): a short run, its summary ----
if part fuzz; then
echo
fz_n=${BENCH_FUZZ_FSCK_N:-100}
echo "== fsck.tux3 damage campaign: $fz_n mutations, seed 1 (make fuzz-fsck: 600)"
FUZZ_FSCK_N=$fz_n FUZZ_FSCK_SEED=1 FUZZ_FSCK_KEEP= \
	sh "$top/tests/fuzz/fsck_campaign.sh" "$build" 2>&1 |
	grep '^fuzz-fsck: \(detected\|-fn clean\|repair rate\|[0-9]* mutations\|kind .* not made\)'
fi

# snapshot_tree DIR N: the tree the snapshot figures use, N empty files
# in directories of 100, and /big, 1 MiB of random data.
snapshot_tree() {
	mkdir -p "$1/d"
	i=0
	while [ $i -lt $(($2 / 100)) ]; do
		mkdir "$1/d/$i"
		(cd "$1/d/$i" && seq 1 100 | xargs touch)
		i=$((i + 1))
	done
	head -c 1048576 /dev/urandom > "$1/big"
}

# btrfs beside it: the same tree in a subvolume of a loop-mounted image,
# a read-only snapshot, then one 4 KiB block of /big rewritten twice,
# each followed by sync; the loop device's written sectors (its sysfs
# stat) give the blocks each step wrote.  Needs root, loop devices and
# the btrfs module: skipped otherwise.
btrfs_snapshot_cost() {
	n=$1
	if [ "$(id -u)" != 0 ] || ! command -v mkfs.btrfs >/dev/null 2>&1; then
		echo "btrfs: skipped (needs root and btrfs-progs)"
		return 0
	fi
	if ! grep -qw btrfs /proc/filesystems 2>/dev/null &&
	   ! modprobe btrfs 2>/dev/null; then
		echo "btrfs: skipped (no btrfs in this kernel)"
		return 0
	fi
	bimg=$work/bt.img bmnt=$work/btmnt t=$work/bt$n
	mkdir -p "$bmnt"
	snapshot_tree "$t" "$n"
	rm -f "$bimg"
	truncate -s 512m "$bimg"
	if ! mkfs.btrfs -q -f "$bimg" >/dev/null 2>&1 ||
	   ! mount -o loop "$bimg" "$bmnt" 2>/dev/null; then
		echo "btrfs: skipped (cannot make or loop-mount a btrfs image)"
		rm -rf "$t" "$bimg"
		return 0
	fi
	loop=$(basename "$(findmnt -n -o SOURCE "$bmnt")")
	written() { awk '{ print $7 }' "/sys/block/$loop/stat"; }
	btrfs subvolume create "$bmnt/live" >/dev/null &&
	cp -a "$t/." "$bmnt/live/" && sync
	w0=$(written)
	t0=$(date +%s%N)
	btrfs subvolume snapshot -r "$bmnt/live" "$bmnt/snap" >/dev/null && sync
	t1=$(date +%s%N)
	w1=$(written)
	dd if=/dev/urandom of="$bmnt/live/big" bs=4096 count=1 conv=notrunc \
		status=none && sync
	w2=$(written)
	dd if=/dev/urandom of="$bmnt/live/big" bs=4096 seek=1 count=1 \
		conv=notrunc status=none && sync
	w3=$(written)
	umount "$bmnt"
	printf '%6s files: btrfs snapshot + sync: %s ms, %s blocks written;' \
		"$n" "$(( (t1 - t0) / 1000000 ))" "$(( (w1 - w0) / 8 ))"
	printf ' one block rewritten after it: %s blocks, the next: %s\n' \
		"$(( (w2 - w1) / 8 ))" "$(( (w3 - w2) / 8 ))"
	echo "(btrfs's figures are 4 KiB blocks the loop device wrote, both"
	echo " superblock copies and the copied path to each tree root included)"
	rm -rf "$t" "$bimg"
}

# ---- versions (issue 8): what the library's versioned layers cost ----
vbench="$top/$build/tests/vbench"
if part versions && [ -x "$vbench" ]; then
	echo
	echo "== versions: reading one block as the number of versions grows"
	echo "   (chain: every snapshot of the live version, the deepest tree;"
	echo "    bushy: snapshots of random snapshots; n elems: every version"
	echo "    wrote the block; 1 elem: only the live version did)"
	"$vbench" read
	echo
	echo "== versions: snapshot create and a one-block change, by volume size"
	for n in 1000 10000 40000; do
		t=$work/vt$n
		snapshot_tree "$t" "$n"
		rm -f "$work/v.img"
		truncate -s 512m "$work/v.img"
		"$mkfs_tux3" -q -d "$t" "$work/v.img" 512m || continue
		printf '%6s files: ' "$n"
		"$vbench" create "$work/v.img"
		printf '%6s files: ' "$n"
		"$vbench" change "$work/v.img" /big
		rm -rf "$t"
	done
	echo "(a snapshot writes the version table and its inode whatever the"
	echo " volume holds)"
	btrfs_snapshot_cost 10000
fi

# ---- fsck with snapshots (issue 26): time against the snapshot count ----
# One tree of BENCH_VFSCK_FILES empty files (default 100000) in
# directories of 100; fsck.tux3 -fn (best of 3) after 0, 64, 512 and 2048
# snapshots of the unchanged tree (BENCH_VFSCK_SNAPS), then the same
# counts with one file rewritten and one created before each snapshot,
# with the ratio to no snapshots.  Beside it, btrfs check --readonly on
# the same tree in a subvolume with as many read-only snapshots (root,
# loop devices and btrfs needed; skipped otherwise).
vfsck_snapshots() {
	# $1 image, $2 target count, $3 count so far, $4 changes (0/1)
	i=$3
	while [ $i -lt $2 ]; do
		i=$((i + 1))
		if [ "$4" = 1 ]; then
			echo "write -f $work/one /d/$((i % 100))/1"
			echo "write $work/one /d/$((i % 100))/new$i"
		fi
		echo "snapshot create s$i"
	done | "$top/$build/tux3debug" -w "$1" >/dev/null 2>&1
}

vfsck_btrfs() {
	# $1 tree, $2 snapshot counts: prints "count seconds" lines
	[ "$(id -u)" = 0 ] && command -v btrfs >/dev/null 2>&1 || return 0
	bimg=$work/vb.img bmnt=$work/btmnt
	mkdir -p "$bmnt"
	rm -f "$bimg"
	truncate -s 2g "$bimg"
	mkfs.btrfs -q -f "$bimg" >/dev/null 2>&1 &&
	mount -o loop "$bimg" "$bmnt" 2>/dev/null || return 0
	btrfs subvolume create "$bmnt/live" >/dev/null &&
	cp -a "$1/." "$bmnt/live/"
	k=0
	for n in $2; do
		while [ $k -lt $n ]; do
			k=$((k + 1))
			btrfs subvolume snapshot -r "$bmnt/live" "$bmnt/s$k" \
				>/dev/null
		done
		umount "$bmnt"
		set -- $(check btrfs check --readonly "$bimg")
		echo "$n $1"
		mount -o loop "$bimg" "$bmnt" 2>/dev/null || break
	done
	umount "$bmnt" 2>/dev/null
	rm -f "$bimg"
}

vfsck_bench() {
	files=${BENCH_VFSCK_FILES:-100000}
	counts=${BENCH_VFSCK_SNAPS:-0 64 512 2048}
	t=$work/vf
	echo
	echo "== fsck.tux3 -fn against the number of snapshots ($files files)"
	rm -rf "$t"
	snapshot_tree "$t" "$files"
	echo changed > "$work/one"
	vfsck_btrfs "$t" "$counts" > "$work/vfb"
	printf '%9s %14s %9s %16s %9s %14s %9s\n' snapshots unchanged ratio \
		"+2 files each" ratio "btrfs check" ratio
	for changes in 0 1; do
		img=$work/vf$changes.img
		rm -f "$img"
		truncate -s 2g "$img"
		"$mkfs_tux3" -q -d "$t" "$img" 2g || return 0
	done
	done0=0 base0="" base1=""
	for n in $counts; do
		vfsck_snapshots "$work/vf0.img" "$n" "$done0" 0
		vfsck_snapshots "$work/vf1.img" "$n" "$done0" 1
		done0=$n
		set -- $(check "$fsck_tux3" -fn "$work/vf0.img")
		a=$1
		set -- $(check "$fsck_tux3" -fn "$work/vf1.img")
		b=$1
		[ -z "$base0" ] && base0=$a base1=$b
		bt=$(awk -v n="$n" '$1 == n { print $2 }' "$work/vfb")
		r=$(awk "BEGIN{printf \"%.2f\", $a / $base0}")
		rb=$(awk "BEGIN{printf \"%.2f\", $b / $base1}")
		btr=- bts=-
		[ -n "$bt" ] && bts=${bt}s &&
			btr=$(awk "BEGIN{printf \"%.2f\", $bt / $a}")
		printf '%9s %13ss %9s %15ss %9s %14s %9s\n' "$n" "$a" "$r" \
			"$b" "$rb" "$bts" "$btr"
	done
	echo "(ratios: to the same volume without snapshots; btrfs's to"
	echo " fsck.tux3 on the unchanged tree)"
	rm -rf "$t" "$work"/vf*.img
}
part vfsck && vfsck_bench

# snapshot diff (issue 26): a tree of N empty files in directories of 100
# (BENCH_DIFF_FILES, default 5000 50000), a snapshot, /big (1 MiB)
# truncated to 1,000,000 bytes in place: tux3debug snapshot diff between the snapshot
# and the live version, best of 3, without names (the library's diff) and
# with them (the search of the namespace the format needs for a name).
diff_bench() {
	sizes=${BENCH_DIFF_FILES:-5000 50000}
	echo
	echo "== snapshot diff: one file changed between a snapshot and the live version"
	printf '%9s %14s %14s %s\n' files "--no-names" "with names" "work"
	first=""
	for n in $sizes; do
		t=$work/df img=$work/df.img
		rm -rf "$t" "$img"
		snapshot_tree "$t" "$n"
		truncate -s 2g "$img"
		"$mkfs_tux3" -q -d "$t" "$img" 2g || return 0
		printf 'snapshot create s\ntruncate /big 1000000\n' |
			"$top/$build/tux3debug" -w "$img" >/dev/null 2>&1
		set -- $(check "$top/$build/tux3debug" -R \
			"snapshot diff --no-names s @" "$img")
		a=$1
		set -- $(check "$top/$build/tux3debug" -R "snapshot diff s @" \
			"$img")
		b=$1
		w=$("$top/$build/tux3debug" -R "snapshot diff --stats s @" \
			"$img" | tail -1 | sed 's/.*: //')
		[ -z "$first" ] && first=$a
		printf '%9s %13ss %13ss %s\n' "$n" "$a" "$b" "$w"
		rm -rf "$t" "$img"
	done
	echo "(times include opening the volume; no btrfs row yet:"
	echo " btrfs send --no-data needs root and loop devices)"
}
part diff && diff_bench

# ---- tux3fuse (issues 9, 25): the workloads users run ----
# scripts/bench_fuse.sh: cp -a, tar x, find, du, rm -rf, fio, the round
# trip, against ext4 on a loop device, fuse2fs and tmpfs (medians, ratios
# to ext4).  Then what the copy costs in FUSE requests.
fuse_bench() {
	sh "$top/scripts/bench_fuse.sh" "$build"
	[ "$(id -u)" = 0 ] && [ -c /dev/fuse ] || return 0
	src=/usr/share/doc
	fuse="$top/$build/tux3fuse"
	fsize=$(($(du -sk "$src" | cut -f1) * 2 / 1024 + 256))m
	fmnt=$work/fmnt
	mkdir -p "$fmnt"
	fuse_round_trips
}

# What the copy costs in FUSE requests, and what one request costs: the
# requests of the same copy by opcode (tux3fuse -d), and the time of one
# round trip (getxattr of a missing name, answered at once) into a
# tux3fuse mount with and without polling, against ext4.
fuse_round_trips() {
	rt="$top/$build/tests/fuse_roundtrip"
	[ -x "$rt" ] || return 0
	img=$work/f.img
	rm -f "$img"
	"$mkfs_tux3" -q "$img" "$fsize" || return 0
	"$fuse" -d "$img" "$fmnt" 2> "$work/requests.log" &
	dpid=$!
	i=0
	until grep -q " $fmnt " /proc/self/mountinfo || [ $i -ge 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	cp -a "$src" "$fmnt/" && sync
	umount "$fmnt"
	wait "$dpid"
	echo
	echo "== the copy's FUSE requests (tux3fuse -d), by opcode"
	grep -o "opcode: [A-Z_]*" "$work/requests.log" | sort | uniq -c |
		sort -rn | awk '{ n += $1; printf "  %-12s %7d\n", $3, $1 }
			END { printf "  %-12s %7d\n", "total", n }'
	echo "== one FUSE round trip (getxattr of a missing name, 50000 times)"
	for opt in "" "-o spin=0" "-o cpu_latency=0"; do
		rm -f "$img"
		"$mkfs_tux3" -q "$img" 64m && "$fuse" $opt "$img" "$fmnt" ||
			continue
		touch "$fmnt/f"
		printf '  tux3fuse %-19s %s\n' "${opt:-(default)}" \
			"$("$rt" "$fmnt/f" 50000)"
		umount "$fmnt"
		flock -x "$img" true
	done
	rm -f "$img"
	truncate -s 64m "$img" && mkfs.ext4 -q -F "$img" >/dev/null 2>&1 &&
	mount -o loop "$img" "$fmnt" && touch "$fmnt/f" &&
	printf '  %-28s %s\n' "ext4" "$("$rt" "$fmnt/f" 50000)"
	umount "$fmnt" 2>/dev/null
	rm -f "$img"
}
part fuse && fuse_bench

# ---- one big directory (issue 24): the in-memory directory index ----
# Through the library (tests/dirbench: create, lookup of existing and
# missing names, rename, unlink; microseconds and directory blocks read
# per operation, index on and off) at BENCH_DIR_SIZES, then one directory
# of a tux3fuse mount beside ext4 on a loop device (as root) at
# BENCH_DIR_FUSE_SIZES: create, stat of existing and missing names,
# rename within, readdir, unlink, in microseconds per operation; also
# through tux3fuse -o io_uring (tux3-uring) where the kernel has it.
dir_bench() {
	sizes=${BENCH_DIR_SIZES:-5000 20000 50000}
	# through tux3fuse and ext4: BENCH_DIR_FUSE_SIZES (1,000,000 takes
	# a few minutes a file system)
	fuse_sizes=${BENCH_DIR_FUSE_SIZES:-10000 100000 1000000}
	dirbench="$top/$build/tests/dirbench"
	if [ -x "$dirbench" ]; then
		for n in $sizes; do
			echo "== library: $n files in one directory"
			"$dirbench" "$work/d.img" "$n"
			[ "$n" -le 20000 ] && "$dirbench" "$work/d.img" "$n" off
			rm -f "$work/d.img"
		done
	fi
	fuse="$top/$build/tux3fuse"
	if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ] || [ ! -x "$fuse" ] ||
	   ! command -v python3 >/dev/null 2>&1; then
		echo "dir bench through tux3fuse: skipped (needs root, /dev/fuse, python3)"
		return 0
	fi
	img=$work/dir.img fmnt=$work/fmnt
	mkdir -p "$fmnt"
	fss="ext4 tux3fuse"
	. "$top/scripts/uring_param.sh"
	uring_on && fss="$fss tux3-uring"
	echo "== one directory through tux3fuse and ext4 (loop): microseconds per operation"
	echo "   (create all N; stat of up to 20,000 existing and 20,000 missing names in random"
	echo "   order; rename within of up to 20,000; readdir of all; unlink of all)"
	printf '%-10s %8s %9s %9s %9s %9s %9s %9s %12s\n' target files create \
		stat stat-miss rename readdir unlink "create/ext4"
	for n in $fuse_sizes; do
		ext=
		for fs in $fss; do
			rm -f "$img"
			size=$((256 + n / 64))m
			case $fs in
			tux3fuse) "$mkfs_tux3" -q "$img" "$size" &&
				  "$fuse" "$img" "$fmnt" ;;
			tux3-uring) "$mkfs_tux3" -q "$img" "$size" &&
				  "$fuse" -o io_uring "$img" "$fmnt" ;;
			ext4) truncate -s "$size" "$img" &&
			      mkfs.ext4 -q -F "$img" >/dev/null 2>&1 &&
			      mount -o loop "$img" "$fmnt" ;;
			esac || { echo "$fs: cannot mount"; continue; }
			set -- $(python3 - "$fmnt/d" "$n" <<'PY'
import os, random, sys, time
d, n = sys.argv[1], int(sys.argv[2])
os.mkdir(d)
r = random.Random(1)
def us(t, k):
    return "%.1f" % ((time.monotonic() - t) * 1e6 / max(k, 1))
out = []
t = time.monotonic()
for i in range(n):
    os.close(os.open("%s/f%08d" % (d, i), os.O_CREAT | os.O_WRONLY, 0o644))
out.append(us(t, n))
k = min(n, 20000)
some = r.sample(range(n), k)
t = time.monotonic()
for i in some:
    os.stat("%s/f%08d" % (d, i))
out.append(us(t, k))
t = time.monotonic()
for i in some:
    try:
        os.stat("%s/m%08d" % (d, i))
    except FileNotFoundError:
        pass
out.append(us(t, k))
t = time.monotonic()
for i in some:
    os.rename("%s/f%08d" % (d, i), "%s/r%08d" % (d, i))
out.append(us(t, k))
t = time.monotonic()
m = sum(1 for _ in os.scandir(d))
out.append(us(t, m))
t = time.monotonic()
for e in os.scandir(d):
    os.unlink(e.path)
out.append(us(t, n))
print(" ".join(out))
PY
)
			umount "$fmnt"
			[ $fs != ext4 ] && flock -x "$img" true
			[ $fs = ext4 ] && ext=$1
			ratio=-
			[ -n "$ext" ] && ratio=$(awk "BEGIN{printf \"%.2f\", $1 / $ext}")
			printf '%-10s %8s %9s %9s %9s %9s %9s %9s %12s\n' "$fs" \
				"$n" "$1" "$2" "$3" "$4" "$5" "$6" "$ratio"
		done
	done
	rm -f "$img"
	uring_restore
}
part dir && dir_bench

# the 100,000-file row of make bench-scale
if part scale; then
echo "== scale: 100,000 small files (make bench-scale for 1M and 10M)"
SCALE_SIZES=100000 SCALE_FLAT=0 sh "$top/scripts/bench_scale.sh" "$build"
fi
