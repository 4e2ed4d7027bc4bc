#!/bin/sh
# make bench-scale (second half): the same tree on volumes of growing size.  For each
# size: mkfs -d (populate), fsck -fn, tux3dot -T svg, tux3image, and an
# idle tux3fuse mount; time (s) and peak memory (max RSS, MB), and the
# growth per 8x of volume size against the previous row.  e2fsprogs
# beside them where ext4 can be that large (up to 64 TiB with 4K blocks
# and 64bit).  BENCH_SCALE_SIZES (default 64G 8T 64T 1P),
# BENCH_SCALE_TREE (default /usr/share/doc), BENCH_SCALE_DIR (scratch:
# a directory whose filesystem takes sparse files this large; tmpfs
# does, ext4 stops at 16 TiB).
BUILD=${1:-build}
SIZES=${BENCH_SCALE_SIZES:-64G 8T 64T 1P}
TREE=${BENCH_SCALE_TREE:-/usr/share/doc}
DIR=${BENCH_SCALE_DIR:-/tmp/tux3-bench-scale}
mkdir -p "$DIR" || exit 1
IMG=$DIR/vol.img
out=$DIR/time.out

# run LABEL CMD...: prints "LABEL seconds MB" from GNU time
run() {
	label=$1; shift
	/usr/bin/time -f '%e %M' -o "$out" "$@" >/dev/null 2>&1
	rc=$?
	set -- $(tail -1 "$out")
	printf '%s %s %s %s\n' "$label" "$1" "$(( $2 / 1024 ))" "$rc"
}

fuse_idle() {
	mnt=$DIR/mnt; mkdir -p "$mnt"
	"$BUILD/tux3fuse" -o ro "$IMG" "$mnt" >/dev/null 2>&1 || { echo "fuse - - 1"; return; }
	ls -R "$mnt" >/dev/null 2>&1
	sleep 1
	pid=$(pgrep -n -f "tux3fuse -o ro $IMG")
	kb=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null)
	fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt"
	printf 'fuse-idle - %s 0\n' "$(( ${kb:-0} / 1024 ))"
}

printf '%-6s %-22s %8s %8s %6s\n' size work seconds MB exit
for size in $SIZES; do
	rm -f "$IMG"
	{
		run populate "$BUILD/mkfs.tux3" -q -F -d "$TREE" "$IMG" "$size"
		run fsck-fn "$BUILD/fsck.tux3" -fn "$IMG"
		run tux3dot "$BUILD/tux3dot" -T svg -o "$DIR/v.svg" "$IMG"
		run tux3image "$BUILD/tux3image" "$IMG" "$DIR/v.t3i"
		[ "$(id -u)" = 0 ] && command -v fusermount3 >/dev/null && fuse_idle
		rm -f "$IMG" "$DIR/v.svg" "$DIR/v.t3i"
		case $size in *P) ;; *)
		if command -v mke2fs >/dev/null; then
			truncate -s "$size" "$IMG"
			run mke2fs-d mke2fs -q -F -t ext4 -O 64bit -d "$TREE" "$IMG"
			run e2fsck-fn e2fsck -fn "$IMG"
			rm -f "$IMG"
		fi ;;
		esac
	} | while read -r work t m rc; do
		printf '%-6s %-22s %8s %8s %6s\n' "$size" "$work" "$t" "$m" "$rc"
	done
done
rm -rf "$DIR"
