#!/bin/sh
# make bench-scale (second half): the same tree on volumes of growing size.
# For each size: mkfs -d (populate), fsck -fn, tux3dot -T svg, tux3image,
# and an idle tux3fuse mount (resident memory after ls -R); time (s) and
# peak memory (max RSS, MB), and the growth per 8x of volume size against
# the previous size (time and memory ratios, scaled to a factor of 8 of
# volume size: x1.00 is flat).  e2fsprogs beside them up to
# BENCH_E2FS_MAX (default 8T: ext4 with 4K blocks and 64bit reaches
# 64 TiB, but mke2fs and e2fsck take minutes there).
#   BENCH_SCALE_SIZES  default 64G 8T 64T 1P
#   BENCH_SCALE_TREE   default /usr/share/doc
#   BENCH_SCALE_DIR    scratch; by default a tmpfs this script mounts
#                      (root only; tmpfs takes sparse files up to 8 EiB,
#                      ext4 stops at 16 TiB)
BUILD=${1:-build}
SIZES=${BENCH_SCALE_SIZES:-64G 8T 64T 1P}
TREE=${BENCH_SCALE_TREE:-/usr/share/doc}
E2FS_MAX=${BENCH_E2FS_MAX:-8T}
DIR=${BENCH_SCALE_DIR:-/tmp/tux3-bench-volsize.$$}
mkdir -p "$DIR" || exit 1
mounted=
if [ -z "${BENCH_SCALE_DIR:-}" ] && [ "$(id -u)" = 0 ] &&
   mount -t tmpfs -o size=4g tux3-bench "$DIR" 2>/dev/null; then
	mounted=1
fi
IMG=$DIR/vol.img
out=$DIR/time.out
rows=$DIR/rows

bytes() { numfmt --from=iec "$1"; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# run LABEL CMD...: prints "LABEL seconds MB exit" from GNU time
run() {
	label=$1; shift
	/usr/bin/time -f '%e %M' -o "$out" "$@" >/dev/null 2>&1
	rc=$?
	set -- $(tail -1 "$out")
	printf '%s %s %s %s\n' "$label" "$1" "$(mb "$2")" "$rc"
}

fuse_idle() {
	mnt=$DIR/mnt; mkdir -p "$mnt"
	"$BUILD/tux3fuse" -o ro "$IMG" "$mnt" >/dev/null 2>&1 ||
		{ echo "fuse-idle - - 1"; return; }
	ls -R "$mnt" >/dev/null 2>&1
	sleep 1
	pid=$(pgrep -n -f "tux3fuse -o ro $IMG")
	kb=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null)
	fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt"
	printf 'fuse-idle - %s 0\n' "$(mb "${kb:-0}")"
}

one_size() {
	size=$1
	rm -f "$IMG"
	run populate "$BUILD/mkfs.tux3" -q -F -d "$TREE" "$IMG" "$size"
	run fsck-fn "$BUILD/fsck.tux3" -fn "$IMG"
	run tux3dot "$BUILD/tux3dot" -T svg -o "$DIR/v.svg" "$IMG"
	run tux3image "$BUILD/tux3image" "$IMG" "$DIR/v.t3i"
	[ "$(id -u)" = 0 ] && [ -c /dev/fuse ] &&
		command -v fusermount3 >/dev/null && fuse_idle
	rm -f "$IMG" "$DIR/v.svg" "$DIR/v.t3i"
	if command -v mke2fs >/dev/null &&
	   [ "$(bytes "$size")" -le "$(bytes "$E2FS_MAX")" ]; then
		truncate -s "$size" "$IMG"
		run mke2fs-d mke2fs -q -F -t ext4 -O 64bit -d "$TREE" "$IMG"
		run e2fsck-fn e2fsck -fn "$IMG"
		rm -f "$IMG"
	fi
}

: >"$rows"
for size in $SIZES; do
	one_size "$size" | while read -r work t m rc; do
		echo "$size $(bytes "$size") $work $t $m $rc" >>"$rows"
	done
done

# growth per 8x: ratio ^ (log 8 / log (size ratio)) against the same
# work's previous size
awk '
BEGIN { printf "%-6s %-10s %8s %6s %5s %9s %9s\n", "size", "work",
	"seconds", "MB", "exit", "time/8x", "mem/8x" }
function per8(a, b, f) {
	if (a == "-" || b == "-" || b + 0 <= 0 || a + 0 <= 0) return "-"
	return sprintf("x%.2f", exp(log(a / b) * log(8) / log(f)))
}
{
	tg = mg = "-"
	if ($3 in psz) {
		f = $2 / psz[$3]
		tg = per8($4, pt[$3], f); mg = per8($5, pm[$3], f)
	}
	printf "%-6s %-10s %8s %6s %5s %9s %9s\n", $1, $3, $4, $5, $6, tg, mg
	psz[$3] = $2; pt[$3] = $4; pm[$3] = $5
}' "$rows"
if [ -n "$mounted" ]; then
	umount "$DIR" && rmdir "$DIR"
else
	rm -rf "$DIR"
fi
