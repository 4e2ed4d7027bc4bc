#!/bin/sh
# The libblkid prober of contrib/libblkid (issue 21): util-linux's blkid
# built with it (contrib/libblkid/build.sh) agrees with tux3probe on
# every block size (type, UUID, label, version, block size, the udev
# encoding), shows a reference volume (no extension record) and a volume
# whose record fails its CRC as tux3 without identity, leaves ext4 and
# zero images alone, and never calls a damaged image of the fsck cases
# anything but tux3 or nothing.  On a loop device (root), util-linux's
# own fsck and findfs, given the patched libblkid, resolve UUID= and
# match systemd-fsck's device form to a UUID= fstab line: the trap
# fsck.tux3(8) describes is gone with the prober.
# SKIP unless TUX3_BLKID_BUILD names a build.sh output directory (make
# contrib-blkid makes one and runs this).
#   TUX3_BLKID_BUILD=DIR sh tests/scripts/blkid_prober.sh BUILD
set -u
build=${1:-build}
t=blkid-prober
pass() { echo "PASS $t/$1"; }
fail() { echo "FAIL $t/$1: $2"; }
skip() { echo "SKIP $t/$1: $2"; }
ul=${TUX3_BLKID_BUILD:-}/util-linux
if [ -z "${TUX3_BLKID_BUILD:-}" ] || [ ! -x "$ul/blkid" ]; then
	skip all "no util-linux build with the prober (make contrib-blkid)"
	exit 0
fi
probe=$build/tux3probe mkfs=$build/mkfs.tux3 dbg=$build/tux3debug
for x in "$probe" "$mkfs" "$dbg"; do
	[ -x "$x" ] || { skip all "$x not built"; exit 0; }
done
work=$(mktemp -d "${TUX3_SCRATCH:-/tmp}/blkidp.XXXXXX") ||
	{ fail scratch "cannot make a directory"; exit 1; }
loopdev=
cleanup() {
	[ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
# blkid -p: low-level probing, no cache; the patched library first.
blkid_p() {
	LD_LIBRARY_PATH="$ul/.libs" timeout 10 "$ul/blkid" -p "$@"
}
# The udev keys both tools print, in one order.
udev_keys() {
	grep -E '^ID_FS_(TYPE|USAGE|VERSION|UUID|UUID_ENC|LABEL|LABEL_ENC)=' "$1" | sort
}
uuid=0badcafe-1234-4321-8765-0123456789ab

# ---- agreement with tux3probe at every block size ----
for bs in 512 1024 4096 16384 65536; do
	img=$work/bs$bs.img
	"$mkfs" -q -b $bs -L "vol $bs" -U $uuid "$img" 8M > /dev/null 2>&1 ||
		{ fail "bs-$bs" "mkfs failed"; continue; }
	blkid_p -o udev "$img" > "$work/b" 2>&1
	timeout 10 "$probe" -o udev "$img" > "$work/p" 2>&1
	udev_keys "$work/b" > "$work/b.k"
	udev_keys "$work/p" > "$work/p.k"
	if ! grep -qx ID_FS_TYPE=tux3 "$work/b.k"; then
		fail "bs-$bs" "blkid says: $(head -3 "$work/b")"
	elif ! cmp -s "$work/b.k" "$work/p.k"; then
		fail "bs-$bs" "blkid and tux3probe differ: $(diff "$work/p.k" "$work/b.k" | head -4)"
	elif ! grep -qx "ID_FS_BLOCK_SIZE=$bs" "$work/b"; then
		fail "bs-$bs" "block size: $(grep BLOCK_SIZE "$work/b")"
	else
		pass "bs-$bs"
	fi
done
base=$work/bs4096.img

# ---- a label with every kind of byte: the same encoding ----
cp "$base" "$work/enc.img"
label='a "b" \c é/x'
"$build/tux3tune" -L "$label" "$work/enc.img" > /dev/null 2>&1
blkid_p -o udev "$work/enc.img" > "$work/b" 2>&1
timeout 10 "$probe" -o udev "$work/enc.img" > "$work/p" 2>&1
if udev_keys "$work/b" > "$work/b.k" && udev_keys "$work/p" > "$work/p.k" &&
   cmp -s "$work/b.k" "$work/p.k" && grep -q '^ID_FS_LABEL_ENC=' "$work/b.k"; then
	pass label-encoding
else
	fail label-encoding "$(diff "$work/p.k" "$work/b.k" | head -4)"
fi

# ---- with snapshots: the versioned magic, the same version string ----
cp "$base" "$work/snap.img"
if "$dbg" -w -R "snapshot create s1" "$work/snap.img" > /dev/null 2>&1; then
	v=$(blkid_p -s VERSION -o value "$work/snap.img")
	w=$(timeout 10 "$probe" -o udev "$work/snap.img" | sed -n 's/^ID_FS_VERSION=//p')
	[ "$(blkid_p -s TYPE -o value "$work/snap.img")" = tux3 ] && [ "$v" = "$w" ] &&
		pass versioned || fail versioned "blkid version '$v', tux3probe '$w'"
else
	skip versioned "snapshot create failed"
fi

# ---- a record that fails its CRC: tux3, no identity ----
cp "$base" "$work/crc.img"
printf '\377' | dd of="$work/crc.img" bs=1 seek=$((4608 + 50)) conv=notrunc 2>/dev/null
out=$(blkid_p -o export "$work/crc.img" 2>&1)
case "$out" in
*TYPE=tux3*UUID=*|*UUID=*TYPE=tux3*) fail bad-record "identity from a bad record: $out" ;;
*TYPE=tux3*) pass bad-record ;;
*) fail bad-record "not tux3: $out" ;;
esac

# ---- reference volumes (no extension record): tux3 without identity ----
n=0 bad=
if command -v zstd > /dev/null 2>&1; then
	for z in ../shared/oracle/*.img.zst; do
		[ -f "$z" ] || continue
		zstd -qdcf "$z" > "$work/o.img" 2>/dev/null || continue
		timeout 10 "$probe" -o udev "$work/o.img" 2>/dev/null | grep -qx ID_FS_TYPE=tux3 ||
			continue
		n=$((n + 1))
		typ=$(blkid_p -s TYPE -o value "$work/o.img")
		[ "$typ" = tux3 ] || bad="$bad $(basename "$z")($typ)"
	done
	rm -f "$work/o.img"
fi
if [ $n -eq 0 ]; then
	skip oracle "no ../shared/oracle (or no zstd)"
elif [ -n "$bad" ]; then
	fail oracle "not tux3:$bad"
else
	pass "oracle ($n images)"
fi

# ---- not Tux3: ext4 and zeros stay what they are ----
truncate -s 8M "$work/zero.img"
[ -z "$(blkid_p -s TYPE -o value "$work/zero.img")" ] && pass zero ||
	fail zero "a type on zeros"
if command -v mkfs.ext4 >/dev/null 2>&1; then
	truncate -s 8M "$work/e4.img"
	mkfs.ext4 -q -F "$work/e4.img" > /dev/null 2>&1
	[ "$(blkid_p -s TYPE -o value "$work/e4.img")" = ext4 ] && pass ext4 ||
		fail ext4 "ext4 not seen as ext4"
else
	skip ext4 "no mkfs.ext4"
fi

# ---- the damaged images of the fsck cases: tux3 or nothing ----
src=$work/src
mkdir -p "$src/d"
echo hello > "$src/a"
"$mkfs" -q -U 00000000-0000-0000-0000-000000000001 -d "$src" "$work/fb.img" 4M \
	> /dev/null 2>&1
n=0 bad=
for d in tests/fsck/*/; do
	[ -f "$d/corrupt" ] || continue
	cp "$work/fb.img" "$work/c.img"
	sh "$d/corrupt" "$dbg" "$work/c.img" "$build" > /dev/null 2>&1 || continue
	n=$((n + 1))
	typ=$(blkid_p -s TYPE -o value "$work/c.img" 2>/dev/null); rc=$?
	[ $rc -ge 124 ] && { bad="$bad $(basename "$d")(exit $rc)"; continue; }
	case "$typ" in ""|tux3) ;; *) bad="$bad $(basename "$d")($typ)" ;; esac
done
[ -z "$bad" ] && [ $n -gt 0 ] && pass "fsck-images ($n)" ||
	fail fsck-images "${bad:-no image built}"

# ---- util-linux fsck and findfs through the patched library ----
if [ "$(id -u)" != 0 ] || ! command -v losetup > /dev/null 2>&1; then
	skip loop "needs root and losetup"
	exit 0
fi
loopdev=$(losetup -f --show "$base" 2>/dev/null) ||
	{ skip loop "no loop device"; exit 0; }
# A private blkid cache: the system's /run/blkid is not touched.
export BLKID_FILE="$work/blkid.tab"
found=$(LD_LIBRARY_PATH="$ul/.libs" findfs "UUID=$uuid" 2>&1)
[ "$found" = "$loopdev" ] && pass findfs-uuid ||
	fail findfs-uuid "findfs says '$found', the device is $loopdev"
found=$(LD_LIBRARY_PATH="$ul/.libs" findfs "LABEL=vol 4096" 2>&1)
[ "$found" = "$loopdev" ] && pass findfs-label ||
	fail findfs-label "findfs says '$found'"
# systemd-fsck's form: the device path; fsck must find the UUID= line.
# fsck(8) looks for fsck.TYPE on PATH; the stock libblkid shows the trap.
absbuild=$(cd "$build" && pwd)
echo "UUID=$uuid /mnt/t3 tux3 defaults 0 2" > "$work/fstab"
fsck_n() {	# FSTAB LIBDIR ARGS...: the checker fsck(8) would run
	f=$1 lib=$2; shift 2
	FSTAB_FILE="$f" PATH="$absbuild:$PATH" LD_LIBRARY_PATH="$lib" \
		fsck -N "$@" 2>&1
}
stock=$(fsck_n "$work/fstab" "" -a -T "$loopdev")
out=$(fsck_n "$work/fstab" "$ul/.libs" -a -T "$loopdev")
case "$stock:$out" in
*fsck.tux3*:*) skip systemd-form "the stock libblkid already knows tux3" ;;
*:*"fsck.tux3 -a $loopdev"*) pass systemd-form ;;
*) fail systemd-form "fsck -N chose: '$out'" ;;
esac
# No fstab line and no -t: fsck asks libblkid for the type.
echo "# empty" > "$work/fstab0"
out=$(fsck_n "$work/fstab0" "$ul/.libs" "$loopdev")
case "$out" in
*"fsck.tux3 $loopdev"*) pass fsck-type ;;
*) fail fsck-type "fsck -N chose: '$out'" ;;
esac
# And for real: systemd-fsck's command line checks the volume, exit 0.
out=$(FSTAB_FILE="$work/fstab" PATH="$absbuild:$PATH" \
	LD_LIBRARY_PATH="$ul/.libs" fsck -a -T "$loopdev" 2>&1); rc=$?
[ $rc -eq 0 ] && case "$out" in *clean*) true ;; *) false ;; esac &&
	pass systemd-run || fail systemd-run "exit $rc: $out"
