#!/bin/sh
# The main job on an embedded default.  In this release (read path only)
# it opens a reference Tux3 volume, replays its log in memory, and lists
# and dumps it with tux3debug; mkfs + populate + fsck + diagram come with
# the write path.  The image is used read-only and left bit-identical.
set -eu
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
src=${TUX3_DEMO_IMAGE:-$top/../shared/oracle/tree-fuse.img.zst}
work=$(mktemp -d /tmp/tux3-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
dbg="$top/$build/tux3debug"

if [ ! -e "$src" ]; then
	echo "demo: no reference volume at $src" >&2
	echo "demo: set TUX3_DEMO_IMAGE to a Tux3 image (.img or .img.zst)" >&2
	exit 1
fi
case "$src" in
*.zst) zstd -q -d "$src" -o "$work/volume.img" ;;
*) cp --sparse=always "$src" "$work/volume.img" ;;
esac
img="$work/volume.img"
before=$(sha256sum < "$img")

echo "== volume: $src"
"$dbg" -R super "$img"
echo
echo "== free space after log replay"
"$dbg" -R statfs "$img"
echo
echo "== the log of the current unify cycle"
"$dbg" -R log "$img" | head -40
echo
echo "== ls -l /"
"$dbg" -R "ls -l /" "$img"
echo
echo "== manifest (first 15 rows of $("$dbg" -R "manifest /" "$img" | wc -l))"
"$dbg" -R "manifest /" "$img" | head -15
echo
echo "== rdump / to a host directory"
if "$dbg" -R "rdump / $work/tree" "$img" 2>"$work/rdump.err"; then
	echo "rdump: $(find "$work/tree" | wc -l) host paths restored"
else
	echo "rdump: restored with warnings:"; head -5 "$work/rdump.err"
fi
after=$(sha256sum < "$img")
[ "$before" = "$after" ] && echo "image unchanged (sha256 identical)" ||
	{ echo "demo: the image changed!" >&2; exit 1; }
