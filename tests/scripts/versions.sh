#!/bin/sh
# Volumes with a version table (written by tests/mkvtable until the tools
# can make snapshots):   sh tests/scripts/versions.sh BUILD
#   versions/tree          tux3debug versions: the tree, indented, counts
#   versions/list          snapshot list: name, tag, label, time
#   versions/ghost, dying  a ghost and an interrupted delete shown as such
#   versions/dying-fsck-n  fsck -fn: the interrupted delete is information
#                          (exit 0, image unchanged)
#   versions/dying-fsck-y  fsck -fy finishes it (exit 1), then clean
#   versions/magic         the superblock shows the versions magic, the
#                          extension record the VERSIONS bit
#   versions/write         tux3debug -w writes in the live version (a
#                          copy): the new directory is there, fsck clean
#   versions/fsck          fsck.tux3 -fn: clean, pass 9 ran
#   versions/vfile-fsck    a file with versioned leaves: clean, counted
#   versions/vfile-read    the live version reads the file as rewritten
#                          (cat), extents lists every version's elements
#   versions/vfile-image   tux3image -a and -R keep it: fsck clean, the
#                          same picture (tux3dot: every block and record)
#   versions/vindex-tune   tux3tune -O ^version_index drops the index
#                          (diff scans, same answer), -O version_index
#                          builds it again (2 pairs), fsck clean both ways
#                          and tux3tune -l names the feature
set -u
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
T=versions
dbg=$build/tux3debug
mkfs=$build/mkfs.tux3
mkv=$build/tests/mkvtable
if [ ! -x "$mkv" ] || [ ! -x "$dbg" ] || [ ! -x "$mkfs" ]; then
	skip all "$mkv, $dbg or $mkfs not built"; exit 0
fi
scratch_dir
img=$work/v.img
"$mkfs" -q "$img" 16m && "$mkv" "$img" ok || { fail all "setup"; exit 0; }

# check NAME EXPECTED COMMAND...: output equal to EXPECTED
check() {
	name=$1 want=$2
	shift 2
	got=$("$@" 2>&1)
	if [ "$got" = "$want" ]; then pass "$name"
	else fail "$name" "got: $(printf '%s' "$got" | tr '\n' '|')"; fi
}

check tree "label 0: live (the origin), 1 child
  label 1: 'monday' tag 7, made 1970-01-01 00:00:00.000000001 UTC, 1 child
    label 2: 'tuesday' tag 8, made 1970-01-01 00:00:00.000000002 UTC
2 snapshots, 0 ghosts" "$dbg" -R versions "$img"
check list "monday               tag 7      label 1     1970-01-01 00:00:00.000000001 UTC
tuesday              tag 8      label 2     1970-01-01 00:00:00.000000002 UTC" \
	"$dbg" -R "snapshot list" "$img"

g=$work/g.img
"$mkfs" -q "$g" 16m && "$mkv" "$g" ghost1
check ghost "label 0: live (the origin), 1 child
  label 1: ghost, made 1970-01-01 00:00:00.000000001 UTC, 1 child
    label 2: 'tuesday' tag 8, made 1970-01-01 00:00:00.000000002 UTC
1 snapshot, 1 ghost" "$dbg" -R versions "$g"
d=$work/d.img
"$mkfs" -q "$d" 16m && "$mkv" "$d" dying
check dying "label 0: live (the origin), 1 child
  label 1: 'monday' tag 7, made 1970-01-01 00:00:00.000000001 UTC
dying: label 2: dying (a delete in progress)
1 snapshot, 0 ghosts" "$dbg" -R versions "$d"

# an interrupted delete is a normal state: -n reports it and exits 0
# without writing, -y finishes it, then it is gone
sum=$(sha256sum < "$d")
out=$("$build/fsck.tux3" -fnv "$d" 2>&1); rc=$?
if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q "delete was interrupted" &&
   [ "$(sha256sum < "$d")" = "$sum" ]; then
	pass dying-fsck-n
else
	fail dying-fsck-n "exit $rc: $out"
fi
out=$("$build/fsck.tux3" -fy "$d" 2>&1); rc=$?
out2=$("$build/fsck.tux3" -fnv "$d" 2>&1); rc2=$?
if [ $rc -eq 1 ] && printf '%s' "$out" | grep -q "PASS9_DELETE_PENDING" &&
   [ $rc2 -eq 0 ] && ! printf '%s' "$out2" | grep -q "interrupted" &&
   ! "$dbg" -R versions "$d" | grep -q dying; then
	pass dying-fsck-y
else
	fail dying-fsck-y "exit $rc then $rc2: $out $out2"
fi

if "$dbg" -R super "$img" | grep -q "^magic.*'ver1': with versions" &&
   "$dbg" -R super "$img" | grep -q "^incompat *0x00000001"; then
	pass magic
else
	fail magic "$("$dbg" -R super "$img" | grep -e magic -e incompat | tr '\n' '|')"
fi

cp "$img" "$img.w"
out=$("$dbg" -w -R "mkdir /x" "$img.w" 2>&1); rc=$?
if [ $rc -eq 0 ] && "$dbg" -R "ls /" "$img.w" | grep -q " x$" &&
   "$build/fsck.tux3" -fn "$img.w" >/dev/null 2>&1; then
	pass write
else
	fail write "exit $rc: $out"
fi
rm -f "$img.w"

out=$("$build/fsck.tux3" -fn "$img" 2>&1); rc=$?
if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q "Pass 9: Checking versions"; then
	pass fsck
else
	fail fsck "exit $rc: $(printf '%s' "$out" | tail -2 | tr '\n' '|')"
fi

v=$work/vf.img
"$mkfs" -q "$v" 16m && "$mkv" "$v" vfile || { fail vfile-fsck "setup"; exit 0; }
out=$("$build/fsck.tux3" -fnv "$v" 2>&1); rc=$?
if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q "versions: 1 versioned file"; then
	pass vfile-fsck
else
	fail vfile-fsck "exit $rc: $(printf '%s' "$out" | tail -3 | tr '\n' '|')"
fi
"$dbg" -R "cat /versioned" "$v" > "$work/live" 2>&1
bs=4096
head -c $bs /dev/zero | tr '\0' a > "$work/want"
head -c $bs /dev/zero | tr '\0' b >> "$work/want"
head -c $((2 * bs)) /dev/zero | tr '\0' a >> "$work/want"
ext=$("$dbg" -R "extents /versioned" "$v" 2>&1)
if cmp -s "$work/live" "$work/want" &&
   printf '%s\n' "$ext" | grep -q "elements of every version" &&
   printf '%s\n' "$ext" | grep -Eq "^ +2 +0 +1 +2  \(hole\)$" &&
   printf '%s\n' "$ext" | grep -Eq "^ +1 +[0-9]+ +1 +1$"; then
	pass vfile-read
else
	fail vfile-read "$(printf '%s' "$ext" | tr '\n' '|')"
fi
if [ -x "$build/tux3image" ]; then
	"$build/tux3image" -a "$v" "$work/vf.t3i" >/dev/null 2>&1 &&
	"$build/tux3image" -R "$work/vf.t3i" "$work/vf2.img" >/dev/null 2>&1
	rc=$?
	"$build/tux3dot" --max-nodes 100000 "$v" > "$work/a.dot" 2>&1
	"$build/tux3dot" --max-nodes 100000 "$work/vf2.img" > "$work/b.dot" 2>&1
	if [ $rc -eq 0 ] && "$build/fsck.tux3" -fn "$work/vf2.img" >/dev/null 2>&1 &&
	   grep -q 'dleaf_' "$work/a.dot" && cmp -s "$work/a.dot" "$work/b.dot"; then
		pass vfile-image
	else
		fail vfile-image "exit $rc, or the restored volume differs"
	fi
fi

# the version index (format.md 17.11) dropped and built again by tux3tune
tune=$build/tux3tune
if [ -x "$tune" ]; then
	d0=$("$dbg" -R "snapshot diff monday @" "$v" 2>&1)
	off=$("$tune" -O ^version_index "$v" 2>&1)
	d1=$("$dbg" -R "snapshot diff monday @" "$v" 2>&1)
	f1=$("$build/fsck.tux3" -fn "$v" 2>&1); r1=$?
	l1=$("$tune" -l "$v" 2>&1)
	on=$("$tune" -O version_index "$v" 2>&1)
	d2=$("$dbg" -R "snapshot diff monday @" "$v" 2>&1)
	f2=$("$build/fsck.tux3" -fn "$v" 2>&1); r2=$?
	l2=$("$tune" -l "$v" 2>&1)
	if [ -n "$d0" ] && [ "$d0" = "$d1" ] && [ "$d0" = "$d2" ] &&
	   [ $r1 -eq 0 ] && [ $r2 -eq 0 ] &&
	   printf '%s' "$off" | grep -q '^version_index cleared' &&
	   printf '%s' "$on" | grep -q '^version_index set: 2 (label, inode) pairs' &&
	   ! printf '%s' "$l1" | grep -q version_index &&
	   printf '%s' "$l2" | grep -q 'features:.* version_index'; then
		pass vindex-tune
	else
		fail vindex-tune "off: $off; on: $on; fsck $r1 $r2; diff: $(printf '%s' "$d0" | head -3 | tr '\n' '|')"
	fi
fi
