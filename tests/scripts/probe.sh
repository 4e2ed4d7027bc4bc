#!/bin/sh
# tux3probe and tux3tune (issue 21): the probe's blkid and udev output on
# volumes of every block size with label and UUID, nothing (exit 2) on an
# ext4 image, a zero file, a tiny file, an empty file; a damaged primary
# superblock (the copy stands in), a damaged extension record; every
# damaged image of the fsck cases (tests/fsck/*/corrupt): no crash, no
# hang, never a foreign identity, never lost while the primary magic
# stands; the image left bit-identical.  tux3tune -L/-U/-l, seen by the
# probe and clean for fsck, refused on a volume in use.  On a loop device
# (root): the probe through the device node, -t UUID= found by the scan
# of /proc/partitions, and the udev rule by `udevadm test` where udevadm
# exists, then by a udevd (the running one, else a private one the test
# starts and stops): the tux3 properties in udev's database, the by-uuid
# and by-label links, libblkid's properties alone for a device ext4 and
# Tux3 both claim (SKIP where udevadm or a udevd cannot be had).
#   sh tests/scripts/probe.sh BUILD
set -u
build=${1:-build}
probe=$build/tux3probe
tune=$build/tux3tune
mkfs=$build/mkfs.tux3
fsck=$build/fsck.tux3
dbg=$build/tux3debug
t=probe
. "$(dirname "$0")/lib/udevd.sh"

pass() { echo "PASS $t/$1"; }
fail() { echo "FAIL $t/$1: $2"; }
skip() { echo "SKIP $t/$1: $2"; }
for x in "$probe" "$tune" "$mkfs" "$fsck" "$dbg"; do
	[ -x "$x" ] || { skip all "$x not built"; exit 0; }
done
work=$(mktemp -d "${TUX3_SCRATCH:-/tmp}/probe.XXXXXX") ||
	{ echo "FAIL probe/scratch: cannot make a directory under ${TUX3_SCRATCH:-/tmp}"; exit 1; }
loopdev=
cleanup() {
	[ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null
	udevd_down
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
uuid=0badcafe-1234-4321-8765-0123456789ab
# timeout: a hang is a failure, not a stuck test run
run_probe() { timeout 10 "$probe" "$@"; }

# ---- every block size: blkid line and udev properties ----
for bs in 512 1024 4096 16384 65536; do
	img=$work/bs$bs.img
	"$mkfs" -q -b $bs -L "vol $bs" -U $uuid "$img" 8M > "$work/out" 2>&1 ||
		{ fail "bs-$bs" "mkfs: $(head -2 "$work/out")"; continue; }
	sum=$(sha256sum < "$img")
	line=$(run_probe "$img"); rc=$?
	want="$img: LABEL=\"vol $bs\" UUID=\"$uuid\" BLOCK_SIZE=\"$bs\" TYPE=\"tux3\""
	[ $rc -eq 0 ] && [ "$line" = "$want" ] ||
		{ fail "bs-$bs" "exit $rc, '$line'"; continue; }
	run_probe -o udev "$img" > "$work/udev"; rc=$?
	cat > "$work/want" <<EOF
ID_FS_TYPE=tux3
ID_FS_USAGE=filesystem
ID_FS_VERSION=2014.05.06
ID_FS_UUID=$uuid
ID_FS_UUID_ENC=$uuid
ID_FS_LABEL=vol_$bs
ID_FS_LABEL_ENC=vol\\x20$bs
ID_FS_BLOCK_SIZE=$bs
EOF
	[ $rc -eq 0 ] && cmp -s "$work/udev" "$work/want" ||
		{ fail "bs-$bs" "udev output: $(diff "$work/want" "$work/udev" | head -4)"; continue; }
	[ "$(sha256sum < "$img")" = "$sum" ] ||
		{ fail "bs-$bs" "the probe changed the image"; continue; }
	pass "bs-$bs"
done
base=$work/bs4096.img

# ---- the encoding is libblkid's own: compare with blkid on ext4 ----
label='a "b" \c é'
if command -v mkfs.ext4 >/dev/null 2>&1 && command -v blkid >/dev/null 2>&1; then
	truncate -s 8M "$work/e4.img"
	mkfs.ext4 -q -F -L "$label" "$work/e4.img" > /dev/null 2>&1
	cp "$base" "$work/enc.img"
	"$tune" -L "$label" "$work/enc.img" > /dev/null 2>&1
	b=$(blkid -o udev "$work/e4.img" | grep '^ID_FS_LABEL')
	p=$(run_probe -o udev "$work/enc.img" | grep '^ID_FS_LABEL')
	if [ -n "$b" ] && [ "$b" = "$p" ]; then pass encoding
	else fail encoding "blkid '$b', tux3probe '$p'"; fi
	out=$(run_probe "$work/e4.img"); rc=$?
	[ $rc -eq 2 ] && [ -z "$out" ] && pass ext4 || fail ext4 "exit $rc, '$out'"
	# a Tux3 superblock under a filesystem libblkid knows: udev gets
	# libblkid's properties alone
	cp "$base" "$work/mix.img"
	dd if="$work/e4.img" of="$work/mix.img" bs=1024 skip=1 seek=1 count=1 \
		conv=notrunc 2>/dev/null
	if blkid -p "$work/mix.img" | grep -q 'TYPE="ext4"'; then
		out=$(run_probe -o udev "$work/mix.img"); rc=$?
		[ $rc -eq 2 ] && [ -z "$out" ] && pass udev-defers-to-libblkid ||
			fail udev-defers-to-libblkid "exit $rc, '$out'"
	else
		skip udev-defers-to-libblkid "libblkid does not see the grafted ext4 superblock"
	fi
else
	skip encoding "mkfs.ext4 or blkid missing"
fi

# ---- not Tux3: zero, tiny, empty, not a file ----
head -c 1048576 /dev/zero > "$work/zero.img"
printf 'tux3' > "$work/tiny.img"
: > "$work/empty.img"
head -c 6000 "$base" > "$work/short.img"	# a real superblock, cut short
for f in zero tiny empty short; do
	out=$(run_probe "$work/$f.img" 2>&1); rc=$?
	[ $rc -eq 2 ] && [ -z "$out" ] && pass "not-tux3-$f" ||
		fail "not-tux3-$f" "exit $rc, '$out'"
done
out=$(run_probe -o udev /dev/null 2>/dev/null); rc=$?
[ $rc -eq 2 ] && [ -z "$out" ] && pass not-a-device || fail not-a-device "exit $rc"
run_probe -o bogus "$base" > /dev/null 2>&1; rc=$?
[ $rc -eq 4 ] && pass usage || fail usage "exit $rc, want 4"

# ---- damage: the copy stands in; a damaged record's identity ----
cp "$base" "$work/d.img"
printf '\000\000\000\000' | dd of="$work/d.img" bs=1 seek=4096 conv=notrunc 2>/dev/null
out=$(run_probe "$work/d.img"); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "UUID=\"$uuid\"" && pass primary-gone ||
	fail primary-gone "exit $rc, '$out'"
cp "$base" "$work/d.img"
printf 'X' | dd of="$work/d.img" bs=1 seek=$((4608 + 40)) conv=notrunc 2>/dev/null
out=$(run_probe "$work/d.img"); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q 'LABEL="vol 4096"' && pass record-damaged ||
	fail record-damaged "exit $rc, '$out'"
"$mkfs" -q -O ^sb_backup "$work/nocopy.img" 8M > /dev/null 2>&1
printf '\000' | dd of="$work/nocopy.img" bs=1 seek=4096 conv=notrunc 2>/dev/null
out=$(run_probe "$work/nocopy.img"); rc=$?
[ $rc -eq 2 ] && [ -z "$out" ] && pass no-magic-no-copy || fail no-magic-no-copy "exit $rc"

# ---- the damaged images of the fsck cases ----
src=$work/src
mkdir -p "$src/d"
echo hello > "$src/a"
echo world > "$src/d/b"
"$mkfs" -q -U 00000000-0000-0000-0000-000000000001 -d "$src" "$work/fb.img" 4M \
	> /dev/null 2>&1
n=0 bad= k=0
# the sanitizer build probes one case in 3 (each case's damage is made by
# a tux3debug run, the bulk of this loop's time there)
case $(basename "$build") in *asan*) every=3 ;; *) every=1 ;; esac
export ASAN_OPTIONS="${ASAN_OPTIONS:-}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}"
for d in tests/fsck/*/; do
	[ -f "$d/corrupt" ] || continue
	k=$((k + 1))
	[ $((k % every)) -eq 0 ] || continue
	c=$(basename "$d")
	cp "$work/fb.img" "$work/c.img"
	sh "$d/corrupt" "$dbg" "$work/c.img" "$build" > /dev/null 2>&1 || continue
	sum=$(sha256sum < "$work/c.img")
	out=$(run_probe "$work/c.img" 2> "$work/err"); rc=$?
	magic=$(dd if="$work/c.img" bs=1 skip=4096 count=4 2>/dev/null)
	n=$((n + 1))
	case $rc in
	0) echo "$out" | grep -q 'TYPE="tux3"$' &&
	   ! echo "$out" | grep 'UUID=' | grep -qv '00000000-0000-0000-0000-000000000001' ||
		bad="$bad $c(output '$out')" ;;
	2) [ "$magic" != tux3 ] || bad="$bad $c(lost)" ;;
	*) bad="$bad $c(exit $rc: $(head -c 200 "$work/err"))" ;;
	esac
	[ "$(sha256sum < "$work/c.img")" = "$sum" ] || bad="$bad $c(changed)"
done
if [ "$n" -gt 0 ] && [ -z "$bad" ]; then pass fsck-cases; echo "probe: $n damaged images of the fsck cases"
else fail fsck-cases "$n images:$bad"; fi

# ---- tux3tune ----
cp "$base" "$work/t.img"
if "$tune" -L backup -U 11111111-2222-3333-4444-555555555555 "$work/t.img" \
	> "$work/out" 2>&1 &&
   [ "$(run_probe -o udev "$work/t.img" | grep -c '^ID_FS_LABEL=backup$\|^ID_FS_UUID=11111111-2222-3333-4444-555555555555$')" = 2 ] &&
   "$fsck" -fn "$work/t.img" > /dev/null 2>&1; then
	pass tune-set
else
	fail tune-set "$(head -3 "$work/out")"
fi
# the copy carries the new identity too (primary magic gone)
cp "$work/t.img" "$work/t2.img"
printf '\000' | dd of="$work/t2.img" bs=1 seek=4096 conv=notrunc 2>/dev/null
run_probe "$work/t2.img" | grep -q 'LABEL="backup" UUID="11111111-' &&
	pass tune-copy || fail tune-copy "$(run_probe "$work/t2.img")"
"$tune" -l "$work/t.img" > "$work/out" 2>&1
grep -q '^Filesystem volume name: *backup$' "$work/out" &&
grep -q '^Filesystem UUID: *11111111-2222-3333-4444-555555555555$' "$work/out" &&
grep -q '^Block size: *4096$' "$work/out" && pass tune-list ||
	fail tune-list "$(head -3 "$work/out")"
"$tune" -L "" -U clear "$work/t.img" > /dev/null 2>&1
out=$(run_probe "$work/t.img")
[ "$out" = "$work/t.img: BLOCK_SIZE=\"4096\" TYPE=\"tux3\"" ] && pass tune-clear ||
	fail tune-clear "'$out'"
"$tune" -L "$(printf '%065d' 0)" "$work/t.img" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && pass tune-label-long || fail tune-label-long "exit $rc, want 2"
"$tune" "$work/t.img" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && pass tune-usage || fail tune-usage "exit $rc, want 2"
# -O atime, -O ^atime (format.md 15.6): clearing drops every inode's
# atime (fsck would find a stray one) and gives back the 2014 magic
magic_of() { dd if="$1" bs=1 skip=4096 count=8 2>/dev/null | od -An -c | tr -d ' '; }
"$mkfs" -q -F "$work/plain.img" 8m > /dev/null 2>&1
if "$mkfs" -q -F -O atime -d "$src" "$work/at.img" 8m > /dev/null 2>&1 &&
   "$tune" -O ^atime "$work/at.img" > "$work/out" 2>&1 &&
   grep -q "atime cleared: [3-9] inodes" "$work/out" &&
   [ "$(magic_of "$work/at.img")" = "$(magic_of "$work/plain.img")" ] &&
   "$fsck" -fn "$work/at.img" > "$work/fsck.out" 2>&1 &&
   ! "$tune" -l "$work/at.img" | grep -q '^Filesystem features:.* atime'; then
	pass tune-atime-clear
else
	fail tune-atime-clear "$(head -2 "$work/out") magic $(magic_of "$work/at.img"): $(grep -m1 PASS "$work/fsck.out")"
fi
if "$tune" -O atime,dir_index "$work/at.img" > "$work/out" 2>&1 &&
   [ "$(magic_of "$work/at.img")" = tux3inc1 ] &&
   "$fsck" -fn "$work/at.img" > /dev/null 2>&1 &&
   "$tune" -l "$work/at.img" | grep -q '^Filesystem features:.* dir_index atime'; then
	pass tune-atime-set
else
	fail tune-atime-set "$(head -2 "$work/out") magic $(magic_of "$work/at.img")"
fi
# snapshots keep access times per version: clearing is refused, unwritten
if "$dbg" -w -R "snapshot create s1" "$work/at.img" > /dev/null 2>&1; then
	sum=$(sha256sum < "$work/at.img")
	"$tune" -O ^atime "$work/at.img" > "$work/out" 2>&1; rc=$?
	[ $rc -eq 1 ] && [ "$(sha256sum < "$work/at.img")" = "$sum" ] &&
		grep -q snapshots "$work/out" && pass tune-atime-snapshots ||
		fail tune-atime-snapshots "exit $rc: $(head -2 "$work/out")"
else
	fail tune-atime-snapshots "snapshot create failed"
fi
"$tune" -O atime,nosuch "$work/at.img" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && pass tune-features-usage ||
	fail tune-features-usage "exit $rc, want 2"
if command -v flock >/dev/null 2>&1; then
	sum=$(sha256sum < "$work/t.img")
	flock -s "$work/t.img" "$tune" -L busy "$work/t.img" > "$work/out" 2>&1; rc=$?
	[ $rc -eq 1 ] && [ "$(sha256sum < "$work/t.img")" = "$sum" ] &&
		grep -q 'in use' "$work/out" && pass tune-in-use ||
		fail tune-in-use "exit $rc: $(head -2 "$work/out")"
else
	skip tune-in-use "flock missing"
fi

# ---- a loop device: the node, the scan, udev ----
if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null 2>&1; then
	skip loop "needs root and losetup"; exit 0
fi
cp "$base" "$work/loop.img"
loopdev=$(losetup -f --show "$work/loop.img" 2>/dev/null) ||
	{ skip loop "cannot attach a loop device"; exit 0; }
out=$(run_probe -o udev "$loopdev")
echo "$out" | grep -q "^ID_FS_UUID=$uuid$" && pass loop-node || fail loop-node "'$out'"
out=$(run_probe -o device -t UUID=$uuid); rc=$?
echo "$out" | grep -qx "$loopdev" && pass loop-scan-uuid ||
	fail loop-scan-uuid "exit $rc, '$out'"
out=$(run_probe -o device -t "LABEL=vol 4096")
echo "$out" | grep -qx "$loopdev" && pass loop-scan-label ||
	fail loop-scan-label "'$out'"
if ! command -v udevadm >/dev/null 2>&1; then
	skip udev "udevadm missing (package udev not installed)"; exit 0
fi
# the rule with this build's tux3probe, in /run/udev/rules.d
sed "s|/[^ \"]*/tux3probe|$(cd "$build" && pwd)/tux3probe|" "$build/59-tux3.rules" \
	> "$work/59-tux3.rules"
if ! udevd_rule "$work/59-tux3.rules" 59-tux3-test.rules; then
	skip udev "cannot install a rule in /run/udev/rules.d"; exit 0
fi
# `udevadm test` runs the rules once, no udevd needed
udevadm test "/sys/class/block/${loopdev#/dev/}" > "$work/udev" 2>&1
grep -q "ID_FS_UUID_ENC=$uuid" "$work/udev" &&
grep -q "disk/by-uuid/$uuid" "$work/udev" && pass udev-test ||
	fail udev-test "$(grep -i 'tux3\|ID_FS' "$work/udev" | head -5)"
# a udevd (the running one, or a private one for this test): the
# properties in udev's database, the links, and a device libblkid knows
# keeps libblkid's properties alone
if ! udevd_up; then
	skip udev-daemon "$udevd_why"; exit 0
fi
udevd_settle "$loopdev"
udevadm info --query=property "$loopdev" > "$work/props" 2>&1
grep -qx ID_FS_TYPE=tux3 "$work/props" && grep -qx "ID_FS_UUID=$uuid" "$work/props" &&
	grep -qx ID_FS_LABEL=vol_4096 "$work/props" && pass udev-db ||
	fail udev-db "$(grep ID_FS "$work/props" | tr '\n' ' ')"
[ "$(readlink -f "/dev/disk/by-uuid/$uuid")" = "$loopdev" ] &&
[ "$(readlink -f '/dev/disk/by-label/vol\x204096')" = "$loopdev" ] && pass udev-links ||
	fail udev-links "$(ls /dev/disk/by-uuid /dev/disk/by-label 2>&1 | tr '\n' ' ')"
if [ -f "$work/mix.img" ]; then
	mixdev=$(losetup -f --show "$work/mix.img" 2>/dev/null)
	if [ -n "$mixdev" ]; then
		udevd_settle "$mixdev"
		props=$(udevadm info --query=property "$mixdev" | grep '^ID_FS_')
		losetup -d "$mixdev"
		# printf: the ext4 label holds a \c that echo would obey
		printf '%s\n' "$props" | grep -qx ID_FS_TYPE=ext4 &&
		! printf '%s\n' "$props" | grep -q "tux3\|$uuid\|vol" && pass udev-foreign ||
			fail udev-foreign "$(printf '%s ' "$props")"
	else
		skip udev-foreign "cannot attach a second loop device"
	fi
else
	skip udev-foreign "no ext4 image (mkfs.ext4 missing)"
fi
