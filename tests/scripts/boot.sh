#!/bin/sh
# Tux3 volumes at boot (issue 21): util-linux fsck -A with a test fstab
# (FSTAB_FILE) runs fsck.tux3 on a clean volume (exit 0) and on a damaged
# one returns what fsck.tux3 -a returns; systemd-fsck's form
# (fsck -a -T -l -M -C3 DEV) runs it, and fsck.tux3 -C speaks the
# progress protocol; the traps fsck.tux3(8) documents (a relative path
# with -t tux3 runs nothing; no type and no fstab line runs fsck.ext2);
# mount.tux3's exit codes (1 usage, 32 failure, nofail), options dropped,
# UUID= found by tux3probe and mounted through FUSE (root, loop, FUSE);
# with a udevd (the running one, else a private one started and stopped
# here; SKIP where none can run): by-uuid/by-label links, lsblk -f,
# fsck -t tux3 UUID=, fsck -A with a UUID= line, systemd-fsck's form with
# a UUID= line (runs fsck.ext2: the trap) and with a by-uuid link line,
# and mount(8) through mount.tux3 (put in /sbin for the test when none is
# there): -t tux3 UUID=/LABEL=, --fstab -a, --fstab DIR, and no -t with
# /etc/filesystems listing tux3 (in a mount namespace).
#   sh tests/scripts/boot.sh BUILD
set -u
build=$(cd "${1:-build}" && pwd)
mkfs=$build/mkfs.tux3
fsck_tux3=$build/fsck.tux3
mnt_helper=$build/mount.tux3
t=boot
. "$(dirname "$0")/lib/udevd.sh"
. "$(dirname "$0")/lib/time_limit.sh"

pass() { echo "PASS $t/$1"; }
fail() { echo "FAIL $t/$1: $2"; }
skip() { echo "SKIP $t/$1: $2"; }
for x in "$mkfs" "$fsck_tux3" "$mnt_helper" "$build/tux3probe"; do
	[ -x "$x" ] || { skip all "$x not built"; exit 0; }
done
work=$(mktemp -d "${TUX3_SCRATCH:-/tmp}/boot.XXXXXX") ||
	{ echo "FAIL boot/scratch: cannot make a directory under ${TUX3_SCRATCH:-/tmp}"; exit 1; }
work=$(cd "$work" && pwd)
loopdev= mounted= helper=
cleanup() {
	[ -n "$mounted" ] && umount "$mounted" 2>/dev/null
	[ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null
	udevd_down
	[ -n "$helper" ] && grep -q "^# $work: " "$helper" && rm -f "$helper"
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

# ---- udev: by-uuid links, lsblk -f, mount(8) and fsck by UUID= ----
# (the udevd running here, else a private one this test starts and stops)
sed "s|/[^ \"]*/tux3probe|$build/tux3probe|" "$build/59-tux3.rules" > "$work/59-tux3.rules"
if ! udevd_up; then
	skip udev "$udevd_why"; exit 0
fi
udevd_rule "$work/59-tux3.rules" 59-tux3-boot-test.rules ||
	{ skip udev "cannot install a rule in /run/udev/rules.d"; exit 0; }
udevd_settle "$loopdev"
if [ "$(readlink -f "/dev/disk/by-uuid/$uuid")" = "$loopdev" ] &&
   [ "$(readlink -f /dev/disk/by-label/bootvol)" = "$loopdev" ]; then
	pass udev-links
else
	fail udev-links "no /dev/disk/by-uuid/$uuid or by-label/bootvol -> $loopdev"
fi
lsblk -f -n -o NAME,FSTYPE,LABEL,UUID "$loopdev" | grep -q "tux3 *bootvol *$uuid" &&
	pass lsblk || fail lsblk "$(lsblk -f "$loopdev")"
# fsck(8) learns the type from -t or an fstab line (libblkid knows no
# Tux3; without either it runs fsck.ext2, the trap above)
fsck -t tux3 -n UUID=$uuid > "$work/out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "$loopdev: clean" "$work/out" && pass fsck-uuid ||
	fail fsck-uuid "exit $rc: $(tail -1 "$work/out")"
printf 'UUID=%s %s tux3 defaults 0 2\n' $uuid "$work/mnt" > "$work/fstab-uuid"
# systemd-fsck's form names the device: fsck(8) matches it to a UUID=
# line only through libblkid, which cannot read a Tux3 UUID, and runs
# fsck.ext2 (the trap fsck.tux3(8) documents); a line naming the
# /dev/disk/by-uuid link is matched by path and runs fsck.tux3
FSTAB_FILE=$work/fstab-uuid fsck -N -a -T -l -M -C3 "$loopdev" 3>/dev/null > "$work/out" 2>&1
grep -q "fsck.ext2 .*$loopdev" "$work/out" && pass trap-systemd-uuid ||
	fail trap-systemd-uuid "fsck now finds the UUID= line: $(tail -1 "$work/out")"
printf '/dev/disk/by-uuid/%s %s tux3 defaults 0 2\n' $uuid "$work/mnt" > "$work/fstab-link"
FSTAB_FILE=$work/fstab-link fsck -a -T -l -M -C3 "$loopdev" 3>/dev/null > "$work/out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "$loopdev: clean" "$work/out" && pass systemd-form-by-uuid-link ||
	fail systemd-form-by-uuid-link "exit $rc: $(tail -1 "$work/out")"
FSTAB_FILE=$work/fstab-uuid fsck -A -T -a -C0 > "$work/out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "$loopdev: clean" "$work/out" && pass fsck-A-uuid ||
	fail fsck-A-uuid "exit $rc: $(head -2 "$work/out")"
# mount(8) runs helpers from /sbin only: this build's mount.tux3 there for
# the test, unless one is installed (never replaced)
if [ -e /sbin/mount.tux3 ]; then
	skip mount8 "/sbin/mount.tux3 is installed; the test does not replace it"; exit 0
fi
printf '#!/bin/sh\n# %s: boot.sh test helper\nTUX3FUSE=%s TUX3PROBE=%s exec %s "$@"\n' \
	"$work" "$build/tux3fuse" "$build/tux3probe" "$mnt_helper" > /sbin/mount.tux3 &&
	chmod 755 /sbin/mount.tux3 && helper=/sbin/mount.tux3 ||
	{ skip mount8 "cannot write /sbin/mount.tux3"; exit 0; }
# mount8 NAME ARGS...: mount(8) with ARGS mounts the volume on $work/mnt
mount8() {
	_name=$1; shift
	if mount "$@" > "$work/err" 2>&1; then
		mounted=$work/mnt
		grep -q " $work/mnt .* fuse.tux3 $loopdev " /proc/self/mountinfo &&
			pass "$_name" || fail "$_name" "not in mountinfo"
		umount "$work/mnt" && mounted=
		# umount returns before tux3fuse has let go of the volume (its
		# final commit, and a sanitizer's exit report, on a loaded
		# machine: 5 s was once too short)
		wait_for 30 flock -n "$loopdev" true 2>/dev/null
	else
		fail "$_name" "$(tail -1 "$work/err")"
	fi
}
mount8 mount8-uuid -t tux3 UUID=$uuid "$work/mnt"
mount8 mount8-label -t tux3 LABEL=bootvol "$work/mnt"
mount8 mount8-fstab-a --fstab "$work/fstab-uuid" -a
mount8 mount8-fstab-dir --fstab "$work/fstab-uuid" "$work/mnt"
# no -t and no fstab line: libmount tries the types /etc/filesystems
# lists; one that lists tux3 (a private one, in a mount namespace)
if command -v unshare >/dev/null 2>&1 && unshare -m true 2>/dev/null; then
	printf 'tux3\n*\n' > "$work/filesystems"
	unshare -m sh -c 'mount --make-rprivate / && mount --bind "$1" /etc/filesystems 2>/dev/null ||
		{ mount -t tmpfs none /etc && cp "$1" /etc/filesystems; } &&
		mount UUID="$2" "$3" && grep -q " $3 .* fuse.tux3 " /proc/self/mountinfo &&
		umount "$3"' sh "$work/filesystems" $uuid "$work/mnt" > "$work/err" 2>&1 &&
		pass mount8-no-type || fail mount8-no-type "$(tail -1 "$work/err")"
else
	skip mount8-no-type "unshare -m not possible here"
fi
