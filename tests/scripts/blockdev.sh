#!/bin/sh
# Block devices: a reference volume on a loop device reads exactly as the
# image file does (size from BLKGETSIZE64, not st_size), and a read-only
# session leaves the device's contents unchanged.
#   sh tests/scripts/blockdev.sh BUILD
# Skips where loop devices cannot be set up (not root, no loop driver).
set -u
build=${1:-build}
dbg=$build/tux3debug
name=small-delta

skip() { echo "SKIP blockdev/$1: $2"; }
if [ -z "${TUX3_ORACLE_DIR:-}" ] || [ -z "${TUX3_ORACLE_SRC:-}" ]; then
	skip all "TUX3_ORACLE_DIR or TUX3_ORACLE_SRC not set"; exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null 2>&1; then
	skip all "needs root and losetup"; exit 0
fi
work=$(mktemp -d "${TUX3_SCRATCH:-/tmp}/blockdev.XXXXXX") ||
	{ echo "FAIL blockdev/scratch: cannot make a directory under ${TUX3_SCRATCH:-/tmp}"; exit 1; }
cp --sparse=always "$TUX3_ORACLE_DIR/$name.img" "$work/vol.img"
chmod u+w "$work/vol.img"
dev=$(losetup -f --show "$work/vol.img" 2>/dev/null) || {
	skip all "cannot attach a loop device"; rm -rf "$work"; exit 0; }
trap 'losetup -d "$dev" 2>/dev/null; rm -rf "$work"' EXIT INT TERM

before=$(sha256sum < "$dev")
if "$dbg" -R "manifest /" "$dev" > "$work/manifest" 2> "$work/err" &&
   cmp -s "$work/manifest" "$TUX3_ORACLE_SRC/$name.manifest.tsv"; then
	echo "PASS blockdev/manifest"
else
	echo "FAIL blockdev/manifest: $(head -c 300 "$work/err")"
fi
blocks=$("$dbg" -R statfs "$dev" | sed -n 's/^blocks: *//p')
if [ "$blocks" = 16384 ]; then
	echo "PASS blockdev/size"
else
	echo "FAIL blockdev/size: statfs blocks '$blocks', expected 16384"
fi
"$dbg" -R "rdump / $work/tree" "$dev" >/dev/null 2>&1
after=$(sha256sum < "$dev")
if [ "$before" = "$after" ]; then
	echo "PASS blockdev/readonly"
else
	echo "FAIL blockdev/readonly: device contents changed"
fi
# A volume that claims more blocks than the device holds is refused with
# a message naming the superblock field (the device is 64 MiB).
printf '\000\000\000\000\000\001\000\000' |
	dd of="$dev" bs=1 seek=$((4096 + 32)) conv=notrunc 2>/dev/null
sync
if "$dbg" -R super "$dev" > /dev/null 2> "$work/err"; then
	echo "FAIL blockdev/too-small: a volume larger than the device opened"
elif grep -q "device holds only 16384" "$work/err"; then
	echo "PASS blockdev/too-small"
else
	echo "FAIL blockdev/too-small: $(head -c 300 "$work/err")"
fi
