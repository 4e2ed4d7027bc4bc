#!/bin/sh
# The main job on an embedded default: make a Tux3 volume in an image
# file, populate it from a directory tree (this repository's own sources
# and docs, plus a sparse file, a symlink and a hard link), check it,
# and read it back: manifest, restore with rdump, compare with the source;
# take a snapshot, change a file, read both versions and print what
# differs between them (snapshot diff), then roll the live version back
# to the snapshot (snapshot rollback);
# end by drawing the volume with tux3dot (DEMO_OUT, default
# BUILD/demo.svg and BUILD/demo.dot).
set -eu
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/tux3-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkfs="$top/$build/mkfs.tux3"
dbg="$top/$build/tux3debug"

src="$work/tree"
mkdir -p "$src"
cp -a "$top/common" "$top/doc" "$top/README.md" "$src/"
truncate -s 10M "$src/sparse.img"
printf 'data at 5 MiB\n' | dd of="$src/sparse.img" bs=1 seek=$((5 << 20)) \
	conv=notrunc 2>/dev/null
ln -s README.md "$src/readme-link"
ln "$src/README.md" "$src/README.hardlink"

img="$work/volume.img"
echo "== mkfs.tux3 -d: a 64 MiB volume populated from $(find "$src" | wc -l) host paths"
"$mkfs" -q -L demo -d "$src" "$img" 64m
echo
echo "== superblock"
"$dbg" -R super "$img"
echo
echo "== fsck.tux3 -fn (read-only full check)"
"$top/$build/fsck.tux3" -fn "$img"
echo
echo "== block ownership and namespace check (tux3debug check)"
"$dbg" -R check "$img"
echo
echo "== ls -l /"
"$dbg" -R "ls -l /" "$img"
echo
echo "== manifest (first 12 rows)"
"$dbg" -R "manifest /" "$img" | head -12
echo
echo "== restore with rdump and compare with the source"
"$dbg" -R "rdump / $work/out" "$img"
if diff -r --no-dereference "$src" "$work/out" >/dev/null; then
	echo "restored tree identical to the source"
else
	echo "demo: restored tree differs" >&2
	exit 1
fi
echo
echo "== a snapshot: the live README changed after it, the snapshot keeps the old one"
printf 'changed after the snapshot\n' > "$work/new-readme"
"$dbg" -w -R "snapshot create before-change" "$img"
"$dbg" -w -R "write -f $work/new-readme /README.md" "$img"
"$dbg" -R "versions" "$img"
if [ "$("$dbg" -R "cat /README.md" "$img")" = "changed after the snapshot" ] &&
   "$dbg" -R "cat @before-change/README.md" "$img" | cmp -s - "$src/README.md"
then
	echo "live /README.md is the new text; @before-change/README.md the original"
else
	echo "demo: the snapshot does not hold the original" >&2
	exit 1
fi
"$dbg" -R "snapshot list -s" "$img"
echo "== what differs between the snapshot and the live version (@), from the element lists"
echo "   (write -f made /README.md a new inode; the old one keeps its hard link)"
"$dbg" -R "snapshot diff --stats before-change @" "$img" > "$work/diff"
cat "$work/diff"
if ! grep -q '^+  /README.md$' "$work/diff"; then
	echo "demo: snapshot diff does not show the changed README" >&2
	exit 1
fi
echo "== roll the live version back to the snapshot: the old README is live again"
"$dbg" -w -R "snapshot rollback before-change" "$img"
if ! "$dbg" -R "cat /README.md" "$img" | cmp -s - "$src/README.md"; then
	echo "demo: the rollback did not bring the original README back" >&2
	exit 1
fi
"$dbg" -R "snapshot diff before-change @" "$img"
"$top/$build/fsck.tux3" -fn "$img" | tail -1
echo
echo "== free space"
"$dbg" -R statfs "$img"
echo
out=${DEMO_OUT:-$top/$build/demo}
echo "== tux3dot: a diagram of the volume"
"$top/$build/tux3dot" -o "$out.dot" "$img"
"$top/$build/tux3dot" -T svg -o "$out.svg" "$img"
echo "wrote $out.svg ($(grep -c '<g id="node' "$out.svg") nodes drawn) and $out.dot"
