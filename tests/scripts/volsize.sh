#!/bin/sh
# Volume size costs nothing (issue 23): volumes of 1 PiB and at the
# 48-bit limit (2^48 - 1 blocks), as sparse files on a tmpfs this test
# mounts (root only, else SKIP), every tool under ulimit -v 256 MiB:
#   volsize/SIZE/populate   mkfs.tux3 -d of a small tree
#   volsize/SIZE/far-write  a block written through tux3fuse at a file
#                           offset whose goal is the volume's last block
#                           lands there (testb says in use)
#   volsize/SIZE/detect     the last block's bit cleared in its on-disk
#                           bitmap block (after a unify): fsck -fn exit 4
#   volsize/SIZE/repair     fsck -fy, then fsck -fn clean
#   volsize/SIZE/read-back  tux3fuse -o ro reads the far block back
#                           (SKIP without /dev/fuse)
#   volsize/SIZE/image, volsize/SIZE/dot   tux3image and tux3dot
#   volsize/SIZE/freefrag   tux3debug freefrag agrees with the free count
#   volsize/limit-BS        2^48 - 1 blocks at 512 B and 64 KiB blocks
#                           (64 KiB: 2^47 - 1, the 2^63-byte file limit):
#                           mkfs and fsck -fn; one block more is refused
#                           with a message naming the limit
set -u
T=volsize
. "$(dirname "$0")/lib/report.sh"
. "$(dirname "$0")/lib/fuse_mount.sh"
build=${1:-build}
mkfs=$build/mkfs.tux3
fsck=$build/fsck.tux3
dbg=$build/tux3debug
fuse=$build/tux3fuse
for b in "$mkfs" "$fsck" "$dbg" "$build/tux3image" "$build/tux3dot"; do
	[ -x "$b" ] || { fail all "$b not built"; exit 0; }
done
[ "$(id -u)" = 0 ] || { skip all "mounting a tmpfs needs root"; exit 0; }
scratch_dir
t=$work/tmpfs
mkdir -p "$t"
if ! mount -t tmpfs -o size=128m tux3-volsize "$t" 2>/dev/null; then
	skip all "cannot mount a tmpfs here"
	exit 0
fi
trap 'fusermount3 -u "$t/mnt" 2>/dev/null; umount "$t" 2>/dev/null;
      rm -rf "$work"' EXIT INT TERM
LIMIT_KB=262144
# lim CMD...: CMD under the address-space limit.  AddressSanitizer maps
# terabytes of shadow, so a sanitizer build runs the same steps without
# it (the memory bound is the normal build's to show).
sanitized=
readelf -d "$build/libtux3.so.1" 2>/dev/null | grep -q libasan && sanitized=1
lim() {
	if [ -n "$sanitized" ]; then
		"$@"
	else
		(ulimit -v $LIMIT_KB && exec "$@")
	fi
}

fuse_ok=
[ -c /dev/fuse ] && [ -x "$fuse" ] && command -v fusermount3 >/dev/null &&
	fuse_ok=1
mkdir -p "$work/tree/d" "$t/mnt"
seq 1 3000 >"$work/tree/numbers"
echo hello >"$work/tree/d/hello"
ln -s d/hello "$work/tree/link"
head -c 4096 /dev/urandom >"$work/far.dat"

# fuse_up IMG [OPT]: tux3fuse on $t/mnt under the limit; 0 when mounted
fuse_up() {
	lim "$fuse" ${2:+-o "$2"} "$1" "$t/mnt" >"$work/fuse.log" 2>&1 &
	wait_mount "$t/mnt" $!
}
fuse_down() { fusermount3 -u "$t/mnt" 2>/dev/null; sleep 0.2; }

# big NAME BLOCKSIZE BLOCKS: the whole sequence on one volume
big() {
	n=$1 bs=$2 blocks=$3
	img=$t/$n.img
	last=$((blocks - 1))
	rm -f "$img"
	truncate -s $((blocks * bs)) "$img"
	if lim "$mkfs" -q -F -b "$bs" -d "$work/tree" "$img" >"$work/out" 2>&1 &&
	   lim "$fsck" -fn "$img" >>"$work/out" 2>&1; then
		pass "$n/populate"
	else
		fail "$n/populate" "$(tail -2 "$work/out" | tr '\n' ' ')"
		return
	fi
	# goal of a data block with no cursor: (inode + logical) % volblocks
	lim "$dbg" -w -R "write $work/tree/d/hello /far" "$img" >/dev/null 2>&1
	ino=$("$dbg" -R "stat /far" "$img" | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
	if [ -z "$fuse_ok" ]; then
		skip "$n/far-write" "no FUSE here"
	elif ! fuse_up "$img"; then
		fail "$n/far-write" "tux3fuse: $(tail -1 "$work/fuse.log")"
	else
		dd if="$work/far.dat" of="$t/mnt/far" bs="$bs" count=1 \
		   seek=$((last - ino)) conv=notrunc 2>/dev/null
		fuse_down
		if "$dbg" -R "testb $last" "$img" | grep -q "marked in use"; then
			pass "$n/far-write"
		else
			fail "$n/far-write" "block $last not in use: $("$dbg" -R "extents /far" "$img" | tail -1)"
		fi
	fi
	# the last block's bit in its bitmap block, on disk after a unify
	lim "$dbg" -w -R unify "$img" >/dev/null 2>&1
	bits=$(awk -v b="$bs" 'BEGIN { print log(b) / log(2) }')
	chunk=$((last >> (bits + 3)))
	# the extent holding it (fields as text: mawk's numbers are doubles)
	set -- $("$dbg" -R "extents <1>" "$img" | awk -v c="$chunk" \
		'$2 != 0 && c >= $1 && c < $1 + $3 { print $1, $2 }')
	bblock=$(( ${2:-0} + chunk - ${1:-0} ))
	byte=$(( (last & ((1 << (bits + 3)) - 1)) >> 3 ))
	"$dbg" -w -R "set_block $bblock $byte 00" "$img" >/dev/null 2>&1
	lim "$fsck" -fn "$img" >"$work/out" 2>&1
	rc=$?
	if [ $rc = 4 ]; then
		pass "$n/detect"
	else
		fail "$n/detect" "fsck -fn exit $rc (bitmap block ${bblock:-?} byte $byte): $(tail -1 "$work/out")"
	fi
	lim "$fsck" -fy "$img" >"$work/out" 2>&1
	rc=$?
	lim "$fsck" -fn "$img" >>"$work/out" 2>&1
	rc2=$?
	if [ $rc = 1 ] && [ $rc2 = 0 ] &&
	   "$dbg" -R "testb $last" "$img" | grep -q "marked in use"; then
		pass "$n/repair"
	else
		fail "$n/repair" "fsck -fy exit $rc, then -fn exit $rc2"
	fi
	if [ -z "$fuse_ok" ]; then
		skip "$n/read-back" "no FUSE here"
	elif ! fuse_up "$img" ro; then
		fail "$n/read-back" "tux3fuse: $(tail -1 "$work/fuse.log")"
	else
		dd if="$t/mnt/far" bs="$bs" skip=$((last - ino)) count=1 \
		   2>/dev/null | cmp -s - "$work/far.dat"
		far=$?
		cmp -s "$t/mnt/numbers" "$work/tree/numbers"
		near=$?
		fuse_down
		if [ $far = 0 ] && [ $near = 0 ]; then
			pass "$n/read-back"
		else
			fail "$n/read-back" "far block $far, numbers $near"
		fi
	fi
	if lim "$build/tux3image" "$img" "$t/$n.t3i" >"$work/out" 2>&1 &&
	   [ "$(stat -c %s "$t/$n.t3i")" -lt 4194304 ]; then
		pass "$n/image"
	else
		fail "$n/image" "$(tail -1 "$work/out")"
	fi
	if lim "$build/tux3dot" -T svg -o "$t/$n.svg" "$img" >"$work/out" 2>&1 &&
	   grep -q "<svg" "$t/$n.svg"; then
		pass "$n/dot"
	else
		fail "$n/dot" "$(tail -1 "$work/out")"
	fi
	# free extents from the bitmap's runs, agreeing with the free count
	# (read block by block, this would not end)
	lim "$dbg" -R freefrag "$img" >"$work/out" 2>&1
	if grep -q "^free blocks: .* in [0-9]* free extents" "$work/out" &&
	   ! grep -q "differs from the bitmap" "$work/out"; then
		pass "$n/freefrag"
	else
		fail "$n/freefrag" "$(head -3 "$work/out" | tr '\n' ' ')"
	fi
	rm -f "$img" "$t/$n.t3i" "$t/$n.svg"
}

MAX=$(( (1 << 48) - 1 ))
big 1PiB 4096 $(( 1 << 38 ))
big limit-4096 4096 $MAX

# limit BS BLOCKS TOOBIG: the largest volume is made and checked, a size
# of TOOBIG (one block more) refused with the limit named
limit() {
	bs=$1 blocks=$2 toobig=$3
	img=$t/limit.img
	rm -f "$img"
	if lim "$mkfs" -q -F -b "$bs" "$img" $((blocks * bs)) >"$work/out" 2>&1 &&
	   lim "$fsck" -fn "$img" >>"$work/out" 2>&1 &&
	   rm -f "$img" &&
	   ! lim "$mkfs" -q -F -b "$bs" "$img" "$toobig" \
		>"$work/out" 2>&1 &&
	   grep -q "48 bits\|2^63 bytes" "$work/out" && [ ! -e "$img" ]; then
		pass "limit-$bs"
	else
		fail "limit-$bs" "$(tail -1 "$work/out")"
	fi
	rm -f "$img"
}
limit 512 $MAX $(( (1 << 48) * 512 ))
limit 65536 $(( (1 << 47) - 1 )) 8e	# 2^63 does not fit the shell's numbers
