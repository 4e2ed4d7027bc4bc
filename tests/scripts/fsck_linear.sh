#!/bin/sh
# fsck.tux3's cost follows the damage, counted rather than timed (fsck -t
# prints the inodes each pass loaded):
#   fsck_linear/lost-dir/detect   a 20,000-entry directory whose only name
#                                 is gone: -fn reports the directory alone
#                                 (its entries come back with it), and
#                                 pass 5 loads a few inodes per entry, not
#                                 one per pair of entries
#   fsck_linear/lost-dir/repair   -fy connects it to /lost+found (exit 1)
#                                 and a second -fn is clean
# A quadratic pass 5 would load about 4e8 inodes here; the runs are
# bounded (timeout) so that a regression fails instead of hanging.
set -u
T=fsck_linear
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
mkfs=$build/mkfs.tux3
fsck=$build/fsck.tux3
dbg=$build/tux3debug
N=${FSCK_LINEAR_N:-20000}

if [ ! -x "$mkfs" ] || [ ! -x "$fsck" ] || [ ! -x "$dbg" ]; then
	fail all "tools not built in $build"
	exit 0
fi
scratch_dir
. tests/fsck/lib.sh

mkdir -p "$work/src/big" "$work/src/etc"
seq -f "$work/src/big/f%05g" 0 $((N - 1)) | xargs touch
echo hello > "$work/src/etc/motd"
img=$work/lost.img
if ! "$mkfs" -q -d "$work/src" "$img" 256m > "$work/mkfs.out" 2>&1; then
	fail lost-dir/make "mkfs.tux3 -d: $(head -1 "$work/mkfs.out")"
	exit 0
fi
# the root's record "big" deleted by hand (name_len 0)
blk=$(dir_block "$dbg" "$img" /)
off=$(entry_offset "$img" "$blk" big)
if [ -z "$blk" ] || [ -z "$off" ] ||
   ! "$dbg" -w -R "set_block $blk $((off + 10)) 00" "$img" > /dev/null 2>&1; then
	fail lost-dir/make "cannot delete the record of /big"
	exit 0
fi

timeout 300 "$fsck" -fnt "$img" > "$work/n.out" 2>&1
rc=$?
loads=$(sed -n 's/^Pass 5: time .*, \([0-9]*\) inodes loaded, .*$/\1/p' "$work/n.out")
lost=$(grep -c 'PASS5_UNREACHABLE' "$work/n.out")
if [ $rc -eq 4 ] && [ -n "$loads" ] && [ "$loads" -le $((N * 8)) ] &&
   [ "$lost" -eq 1 ]; then
	pass lost-dir/detect
else
	fail lost-dir/detect "exit $rc, pass 5 loaded ${loads:-?} inodes for $N entries, $lost unreachable reported"
fi

cp "$img" "$work/fix.img"
timeout 300 "$fsck" -fy "$work/fix.img" > "$work/y.out" 2>&1
ry=$?
timeout 300 "$fsck" -fn "$work/fix.img" > "$work/n2.out" 2>&1
rn=$?
if [ $ry -eq 1 ] && [ $rn -eq 0 ]; then
	pass lost-dir/repair
else
	fail lost-dir/repair "-fy exit $ry, then -fn exit $rn: $(grep -m1 PASS "$work/n2.out")"
fi
