#!/bin/sh
# The on-disk directory index (DIR_INDEX, doc/format.md 15.5) through the
# tools: fsck.tux3 -D packs directories (the tree reads back the same,
# the directory shrinks, the index is rebuilt and checks clean), with and
# without the feature; tux3tune -O dir_index / ^dir_index; tux3debug
# htree.
#   sh tests/scripts/dir_index.sh BUILD
set -u
build=${1:-build}
T=dir_index
. "$(dirname "$0")/lib/report.sh"
fsck=$build/fsck.tux3
dbg=$build/tux3debug
mkfs=$build/mkfs.tux3
tune=$build/tux3tune
if [ ! -x "$fsck" ] || [ ! -x "$dbg" ] || [ ! -x "$mkfs" ]; then
	skip all "$fsck, $dbg or $mkfs not built"; exit 0
fi
scratch_dir
export SOURCE_DATE_EPOCH=1700000000

# A tree with one directory of 2,000 names (32 blocks of 4 KiB) and a
# small one; the command file removes every second name of the big one.
src=$work/src
mkdir -p "$src/big" "$src/small"
i=1
while [ $i -le 2000 ]; do
	: > "$src/big/file-with-a-longish-name-$i"
	[ $((i % 2)) -eq 0 ] ||
		echo "rm /big/file-with-a-longish-name-$i" >> "$work/rm-half"
	i=$((i + 1))
done
echo x > "$src/small/a"

# size_of IMAGE PATH: a file's size in bytes
size_of() {
	"$dbg" -R "stat $2" "$1" | sed -n 's/.*Size: \([0-9]*\).*/\1/p'
}
# manifest IMAGE: the tree, directory sizes left out (packing changes them)
manifest() {
	"$dbg" -R manifest "$1" |
		awk -F '\t' 'BEGIN { OFS = "\t" } $2 == "d" { $6 = "-" } { print }'
}

# ---- fsck -D ----
for feat in dir_index ^dir_index; do
	n=optimize-${feat#^}
	[ "$feat" = ^dir_index ] && n=optimize-linear
	img=$work/$n.img
	if ! "$mkfs" -q -O "$feat" -d "$src" "$img" 32M > "$work/out" 2>&1 ||
	   ! "$dbg" -w -f "$work/rm-half" "$img" > "$work/out" 2>&1; then
		fail "$n" "mkfs or rm: $(head -2 "$work/out")"; continue
	fi
	manifest "$img" > "$work/m1"
	before=$(size_of "$img" /big)
	"$fsck" -yD "$img" > "$work/out" 2>&1; rc=$?
	after=$(size_of "$img" /big)
	manifest "$img" > "$work/m2"
	"$fsck" -fn "$img" > "$work/out2" 2>&1; rc2=$?
	if [ $rc -ne 1 ] || ! grep -q '1 directory optimized' "$work/out"; then
		fail "$n" "-yD exit $rc: $(tail -3 "$work/out" | tr '\n' ' ')"
	elif ! cmp -s "$work/m1" "$work/m2"; then
		fail "$n" "the tree changed: $(diff "$work/m1" "$work/m2" | head -3 | tr '\n' ' ')"
	elif [ -z "$after" ] || [ "$after" -ge $((before * 2 / 3)) ]; then
		fail "$n" "/big did not shrink: $before -> $after bytes"
	elif [ $rc2 -ne 0 ]; then
		fail "$n" "-fn after -D exit $rc2: $(tail -3 "$work/out2" | tr '\n' ' ')"
	else
		pass "$n"
	fi
done
# a second -D on a packed linear volume writes nothing
img=$work/optimize-linear.img
sum=$(sha256sum < "$img")
"$fsck" -yD "$img" > "$work/out" 2>&1; rc=$?
{ [ $rc -eq 0 ] && [ "$(sha256sum < "$img")" = "$sum" ]; } &&
	pass optimize-packed || fail optimize-packed "exit $rc or image changed"
"$fsck" -nD "$img" > "$work/out" 2>&1; rc=$?
[ $rc -eq 16 ] && pass optimize-not-with-n || fail optimize-not-with-n "exit $rc"
# the packed directory lists every kept name, and lookups find them
img=$work/optimize-dir_index.img
"$dbg" -R "ls /big" "$img" | grep -c 'file-with' > "$work/count"
if [ "$(cat "$work/count")" != 1000 ]; then
	fail optimize-lookup "ls lists $(cat "$work/count") names, want 1000"
elif ! "$dbg" -R "stat /big/file-with-a-longish-name-1000" "$img" \
	> /dev/null 2>&1 ||
     "$dbg" -R "stat /big/file-with-a-longish-name-999" "$img" \
	> /dev/null 2>&1; then
	fail optimize-lookup "a kept name is not found, or a removed one is"
else
	pass optimize-lookup
fi

# ---- tux3tune -O dir_index / ^dir_index ----
# is_index IMAGE PATH: logical block 0 of the directory is an index root
is_index() {
	b=$("$dbg" -R "bmap $2 0" "$1") &&
	dd if="$1" bs=4096 skip="$b" count=1 2>/dev/null | od -An -c -j16 -N4 |
		grep -q 'T   3   D   X'
}
if [ -x "$tune" ]; then
	img=$work/tune.img
	"$mkfs" -q -d "$src" "$img" 32M > /dev/null 2>&1
	manifest "$img" > "$work/m1"
	"$tune" -O dir_index "$img" > "$work/out" 2>&1; rc=$?
	"$fsck" -fn "$img" > "$work/out2" 2>&1; rc2=$?
	if [ $rc -ne 0 ] || ! grep -q '1 directory indexed' "$work/out"; then
		fail tune-set "exit $rc: $(head -2 "$work/out" | tr '\n' ' ')"
	elif ! "$tune" -l "$img" | grep -q 'features:.*dir_index' ||
	     ! is_index "$img" /big || is_index "$img" /small; then
		fail tune-set "no feature bit, or /big has no index root"
	elif [ $rc2 -ne 0 ]; then
		fail tune-set "fsck -fn exit $rc2: $(tail -3 "$work/out2" | tr '\n' ' ')"
	else
		pass tune-set
	fi
	"$tune" -O ^dir_index "$img" > "$work/out" 2>&1; rc=$?
	"$fsck" -fn "$img" > "$work/out2" 2>&1; rc2=$?
	manifest "$img" > "$work/m2"
	if [ $rc -ne 0 ] || ! grep -q '1 directory packed' "$work/out"; then
		fail tune-clear "exit $rc: $(head -2 "$work/out" | tr '\n' ' ')"
	elif "$tune" -l "$img" | grep -q 'features:.*dir_index' ||
	     is_index "$img" /big; then
		fail tune-clear "the feature bit or the index root is still there"
	elif [ $rc2 -ne 0 ] || ! cmp -s "$work/m1" "$work/m2"; then
		fail tune-clear "fsck exit $rc2, or the tree changed"
	else
		pass tune-clear
	fi
	"$tune" -O log_crc "$img" > /dev/null 2>&1; rc=$?
	[ $rc -eq 2 ] && pass tune-other-feature ||
		fail tune-other-feature "exit $rc, want 2"
else
	skip tune "$tune not built"
fi

# ---- tux3debug htree ----
img=$work/htree.img
"$mkfs" -q -O dir_index -d "$src" "$img" 32M > /dev/null 2>&1
"$dbg" -R "htree -v /big" "$img" > "$work/out" 2>&1; rc=$?
"$dbg" -R "htree /small" "$img" > "$work/out2" 2>&1
if [ $rc -ne 0 ] || ! grep -q 'index: depth [1-9].*(current)' "$work/out" ||
   ! grep -q 'pairs: 2000 ' "$work/out" ||
   ! grep -q '^  slots 0-' "$work/out" ||
   ! grep -q '^no index' "$work/out2"; then
	fail htree "exit $rc: $(head -3 "$work/out" | tr '\n' ' ')"
else
	pass htree
fi
