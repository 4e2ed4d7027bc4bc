#!/bin/sh
# Tux3 volumes at boot (issue 21): util-linux fsck -A with a test fstab
# (FSTAB_FILE) runs fsck.tux3 on a clean volume (exit 0) and on a damaged
# one returns what fsck.tux3 -a returns; systemd-fsck's form
# (fsck -a -T -l -M -C3 DEV) runs it, and fsck.tux3 -C speaks the
# progress protocol; the traps fsck.tux3(8) documents (a relative path
# with -t tux3 runs nothing; no type and no fstab line runs fsck.ext2);
# mount.tux3's exit codes (1 usage, 32 failure, nofail), options dropped,
# UUID= found by tux3probe and mounted through FUSE (root, loop, FUSE);
# by-uuid links and fsck -A with UUID= where udevd runs (SKIP otherwise).
#   sh tests/scripts/boot.sh BUILD
set -u
build=$(cd "${1:-build}" && pwd)
mkfs=$build/mkfs.tux3
fsck_tux3=$build/fsck.tux3
mnt_helper=$build/mount.tux3
t=boot

pass() { echo "PASS $t/$1"; }
fail() { echo "FAIL $t/$1: $2"; }
skip() { echo "SKIP $t/$1: $2"; }
for x in "$mkfs" "$fsck_tux3" "$mnt_helper" "$build/tux3probe"; do
	[ -x "$x" ] || { skip all "$x not built"; exit 0; }
done
work=$(mktemp -d "${TUX3_SCRATCH:-/tmp}/boot.XXXXXX") ||
	{ echo "FAIL boot/scratch: cannot make a directory under ${TUX3_SCRATCH:-/tmp}"; exit 1; }
work=$(cd "$work" && pwd)
loopdev= mounted=
cleanup() {
	[ -n "$mounted" ] && umount "$mounted" 2>/dev/null
	[ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null
	rm -f /run/udev/rules.d/59-tux3-boot-test.rules 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
uuid=5eed0000-1111-4222-8333-444455556666
img=$work/vol.img
"$mkfs" -q -L bootvol -U $uuid "$img" 8M || { fail mkfs "mkfs.tux3"; exit 0; }
# util-linux fsck looks for fsck.TYPE in /sbin:/sbin/fs.d:/sbin/fs:/etc/fs:
# /etc and then PATH
export PATH="$build:$PATH"

if ! command -v fsck >/dev/null 2>&1 || ! fsck --version 2>/dev/null | grep -q util-linux; then
	skip fsck "no util-linux fsck"
else
	printf '%s /mnt tux3 defaults 0 2\n' "$img" > "$work/fstab"
	export FSTAB_FILE="$work/fstab"
	# ---- fsck -A ----
	FSTAB_FILE=$work/fstab fsck -A -N > "$work/out" 2>&1
	grep -q "fsck.tux3 $img" "$work/out" && pass fsck-A-finds-tux3 ||
		fail fsck-A-finds-tux3 "$(tail -1 "$work/out")"
	fsck -A -T -a -C0 > "$work/out" 2>&1; rc=$?
	[ $rc -eq 0 ] && grep -q clean "$work/out" && pass fsck-A-clean ||
		fail fsck-A-clean "exit $rc: $(head -2 "$work/out")"
	cp "$img" "$work/good.img"
	printf '\000\000\000\000' | dd of="$img" bs=1 seek=4096 conv=notrunc 2>/dev/null
	cp "$img" "$work/direct.img"
	"$fsck_tux3" -a "$work/direct.img" > /dev/null 2>&1; want=$?
	fsck -A -T -a -C0 > "$work/out" 2>&1; rc=$?
	[ $want -ne 0 ] && [ $rc -eq $want ] && pass "fsck-A-damaged" ||
		fail fsck-A-damaged "exit $rc, fsck.tux3 -a alone $want"
	echo "boot: fsck -A on a volume without its primary superblock magic: exit $rc"
	cp "$work/good.img" "$img"
	# ---- systemd-fsck's form ----
	fsck -N -a -T -l -M -C3 "$img" > "$work/out" 2>&1
	grep -q "fsck.tux3 .*$img" "$work/out" && pass systemd-form-runs-tux3 ||
		fail systemd-form-runs-tux3 "$(cat "$work/out")"
	fsck -a -T -l -M -C3 "$img" 3> "$work/prog" > "$work/out" 2>&1; rc=$?
	[ $rc -eq 0 ] && pass systemd-form-clean || fail systemd-form-clean "exit $rc"
	# fsck(8) of util-linux passes -C only to ext2/3/4; fsck.tux3 -C on
	# its own: "pass current max device" lines, passes rising
	"$fsck_tux3" -f -a -C3 "$img" 3> "$work/prog" > /dev/null 2>&1
	if [ -s "$work/prog" ] && awk -v dev="$img" '
		NF != 4 || $4 != dev || $2 > $3 || $1 < last { bad = 1 }
		{ last = $1 } END { exit bad }' "$work/prog"; then
		pass progress-fd
	else
		fail progress-fd "$(head -3 "$work/prog")"
	fi
	# ---- the traps fsck.tux3(8) documents ----
	(cd "$work" && FSTAB_FILE=/dev/null fsck -N -t tux3 -n vol.img) > "$work/out" 2>&1
	grep -q fsck.tux3 "$work/out" && fail trap-relative "a relative path ran fsck.tux3: fsck changed" ||
		pass trap-relative
	printf '\n' > "$work/empty-fstab"
	FSTAB_FILE=$work/empty-fstab fsck -N -a "$img" > "$work/out" 2>&1
	grep -q "fsck.ext2 .*$img" "$work/out" && pass trap-no-type ||
		fail trap-no-type "fsck without a type no longer runs fsck.ext2: $(tail -1 "$work/out")"
	unset FSTAB_FILE
fi

# ---- mount.tux3 ----
mkdir -p "$work/mnt"
"$mnt_helper" > /dev/null 2>&1; rc=$?
[ $rc -eq 1 ] && pass mount-usage || fail mount-usage "exit $rc, want 1"
"$mnt_helper" "$work/none.img" "$work/mnt" 2> "$work/err"; rc=$?
[ $rc -eq 32 ] && [ "$(wc -l < "$work/err")" -eq 1 ] && pass mount-missing ||
	fail mount-missing "exit $rc: $(cat "$work/err")"
"$mnt_helper" "$work/none.img" "$work/mnt" -o defaults,nofail 2> "$work/err"; rc=$?
[ $rc -eq 0 ] && [ ! -s "$work/err" ] && pass mount-nofail || fail mount-nofail "exit $rc"
"$mnt_helper" UUID=00000000-dead-beef-0000-000000000000 "$work/mnt" 2> "$work/err"; rc=$?
[ $rc -eq 32 ] && grep -q 'no Tux3 volume has UUID=' "$work/err" && pass mount-uuid-unknown ||
	fail mount-uuid-unknown "exit $rc: $(cat "$work/err")"
"$mnt_helper" -fv "$img" "$work/mnt" -o defaults,noauto,_netdev,x-systemd.device-timeout=5,nofail,ro \
	2> "$work/err"; rc=$?
[ $rc -eq 0 ] && grep -q -- "-o ro $img" "$work/err" && pass mount-options ||
	fail mount-options "exit $rc: $(cat "$work/err")"
if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ] || ! command -v losetup >/dev/null 2>&1; then
	skip mount-fuse "needs root, /dev/fuse and losetup"; exit 0
fi
head -c 1048576 /dev/zero > "$work/zero.img"
"$mnt_helper" "$work/zero.img" "$work/mnt" 2> "$work/err"; rc=$?
[ $rc -eq 32 ] && pass mount-not-tux3 || fail mount-not-tux3 "exit $rc: $(cat "$work/err")"
loopdev=$(losetup -f --show "$img" 2>/dev/null) ||
	{ skip mount-fuse "cannot attach a loop device"; exit 0; }
if "$mnt_helper" UUID=$uuid "$work/mnt" 2> "$work/err"; then
	mounted=$work/mnt
	grep -q " $work/mnt .* fuse.tux3 $loopdev " /proc/self/mountinfo &&
		pass mount-uuid || fail mount-uuid "not in mountinfo: $(grep "$work/mnt" /proc/self/mountinfo)"
	umount "$work/mnt" && mounted=
else
	fail mount-uuid "$(cat "$work/err")"
fi

# ---- udev: by-uuid links, lsblk -f, fsck -A by UUID= ----
if ! command -v udevadm >/dev/null 2>&1 || [ ! -S /run/udev/control ]; then
	skip udev "no udevd running here (udevadm or /run/udev/control missing)"
	exit 0
fi
sed "s|/[^ \"]*/tux3probe|$build/tux3probe|" "$build/59-tux3.rules" \
	> /run/udev/rules.d/59-tux3-boot-test.rules
udevadm control --reload
udevadm trigger --action=change --settle "$loopdev" 2>/dev/null ||
	{ udevadm trigger --action=change "$loopdev"; udevadm settle; }
if [ -L "/dev/disk/by-uuid/$uuid" ] && [ -L /dev/disk/by-label/bootvol ]; then
	pass udev-links
else
	fail udev-links "no /dev/disk/by-uuid/$uuid"
fi
lsblk -f -n -o NAME,FSTYPE,LABEL,UUID "$loopdev" | grep -q "tux3 *bootvol *$uuid" &&
	pass lsblk || fail lsblk "$(lsblk -f "$loopdev")"
printf 'UUID=%s /mnt tux3 defaults 0 2\n' $uuid > "$work/fstab-uuid"
FSTAB_FILE=$work/fstab-uuid fsck -A -T -a -C0 > "$work/out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q clean "$work/out" && pass fsck-A-uuid ||
	fail fsck-A-uuid "exit $rc: $(head -2 "$work/out")"
