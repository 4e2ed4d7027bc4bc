#!/bin/sh
# tux3debug in versions (snapshots), beyond the expect case
# tests/debugfs/snapshots.cmd:   sh tests/scripts/debugfs_versions.sh BUILD
#   session/fsck       a -w script that makes snapshots, edits the live
#                      version and a snapshot, copies between them: the
#                      volume checks clean (fsck.tux3 -fn, tux3debug check)
#   session/reopen     what each version holds, read back in new sessions
#   commit-each        -R: each command its own delta (snapshot, write in
#                      it with -S, read back)
#   batch-before       in a script, edits before 'snapshot create' are in
#                      the snapshot (it commits them first)
#   start/*            -S TAG: starts in TAG; an unknown TAG fails (1);
#                      -S without a DEVICE is a usage error (2)
#   readonly           a read-only session in snapshots leaves the image
#                      bit-identical; create/delete refused (EROFS)
#   delete/frees       deleting a snapshot whose data only it read gives
#                      the blocks back; fsck clean after
#   delete/atoms       ... and the xattr names' references only it held
#   rollback/*         snapshot rollback: the live version reads what the
#                      snapshot reads (manifests equal, inode numbers
#                      included), the snapshots unchanged, fsck clean; a
#                      second rollback finds nothing to do; an unknown
#                      name and a read-only session refused, the image
#                      bit-identical; deleting the snapshots after it
#                      gives the 2014 format back
#   tty/*              the prompt shows the version; @ completes names
set -u
build=${1:-build}
top=$(pwd)
dbg=$top/$build/tux3debug
mkfs=$top/$build/mkfs.tux3
fsck=$top/$build/fsck.tux3
T=debugfs_versions
. tests/scripts/lib/report.sh
if [ ! -x "$dbg" ] || [ ! -x "$mkfs" ] || [ ! -x "$fsck" ]; then
	skip all "$dbg, $mkfs or $fsck not built"; exit 0
fi
scratch_dir
export SOURCE_DATE_EPOCH=1700000000 LC_ALL=C TZ=UTC
unset PAGER TUX3DEBUG_PAGER
cd "$work" || exit 1
flat() { tr '\n' '|' < "$1" | head -c 600; }

src=$work/src
mkdir -p "$src/docs"
printf 'one\n' > "$src/a.txt"
printf 'readme\n' > "$src/docs/readme.md"
printf 'new text\n' > host.txt
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "%c", i % 253 }' > host.big
fresh() {
	rm -f "$1"
	"$mkfs" -q -b 1024 -d "$src" "$1" 16m > out 2>&1 ||
		{ fail "$2" "mkfs: $(flat out)"; return 1; }
}

# ---- a session that uses every kind of edit in versions ----
img=$work/s.img
fresh "$img" session || exit 0
cat > session.cmd <<'EOF'
snapshot create mon
write -f host.txt /a.txt
mkdir /live-only
cd @mon
write host.big big
mkdir docs/sub
mv docs/readme.md docs/sub/readme.md
ln -s sub/readme.md docs/link
setxattr a.txt user.x mon
truncate a.txt 2
cd @
snapshot create tue --of mon
cd @tue/docs
rm link
write host.txt tue.txt
cd @
cp @mon/big /big-restored
cp -p @mon/a.txt @tue/a-copy
chmod 600 @mon/a.txt
EOF
if "$dbg" -w -f session.cmd "$img" > out 2>&1; then
	pass session
else
	fail session "$(flat out)"
fi
if "$fsck" -fn "$img" > out 2>&1 && "$dbg" -R check "$img" > out2 2>&1; then
	pass session/fsck
else
	fail session/fsck "$(tail -5 out | tr '\n' '|') $(flat out2)"
fi
cat > read.cmd <<'EOF'
cat /a.txt
find /
cat @mon/a.txt
xattrs @mon/a.txt
find @mon/docs
readlink @mon/docs/link
find @tue/docs
cat @tue/docs/tue.txt
cat @tue/a-copy
xattrs @tue/a-copy
manifest @mon/
EOF
"$dbg" -f read.cmd "$img" > out 2>&1
cat > want <<'EOF'
new text
/
/a.txt
/docs
/docs/readme.md
/live-only
/big-restored
on  user.x (3) = "mon"
@mon/docs
@mon/docs/link
@mon/docs/sub
@mon/docs/sub/readme.md
sub/readme.md
@tue/docs
@tue/docs/tue.txt
@tue/docs/sub
@tue/docs/sub/readme.md
new text
on  user.x (3) = "mon"
EOF
head -n "$(wc -l < want)" out > got
if cmp -s got want && grep -q "^/a.txt	f	0600	" out &&
   grep -q "^/big	f	0644	0	0	200000	" out &&
   ! grep -q tux3debug: out; then
	pass session/reopen
else
	fail session/reopen "$(diff want got | tr '\n' '|')"
fi
"$dbg" -R "dump @mon/big big.out" "$img" > out 2>&1
"$dbg" -R "dump /big-restored big2.out" "$img" >> out 2>&1
if cmp -s big.out host.big && cmp -s big2.out host.big; then
	pass session/big
else
	fail session/big "$(flat out)"
fi

# ---- -R: each command its own delta ----
img=$work/r.img
fresh "$img" commit-each || exit 0
"$dbg" -w -R "snapshot create a" "$img" > out 2>&1 &&
"$dbg" -w -S a -R "write host.txt /only-a" "$img" >> out 2>&1 &&
"$dbg" -w -R "rm /a.txt" "$img" >> out 2>&1
"$dbg" -R "cat @a/only-a" "$img" > got 2>&1
"$dbg" -R "cat @a/a.txt" "$img" >> got 2>&1
"$dbg" -R "ls" "$img" >> got 2>&1
printf 'new text\none\n      65  docs\n' > want
if cmp -s got want && "$fsck" -fn "$img" > /dev/null 2>&1; then
	pass commit-each
else
	fail commit-each "$(flat out) / $(flat got)"
fi

# ---- a script: edits before the snapshot are in it ----
img=$work/b.img
fresh "$img" batch-before || exit 0
printf 'write host.txt /before\nsnapshot create s\nrm /before\n' |
	"$dbg" -w -f - "$img" > out 2>&1
if [ "$("$dbg" -R 'cat @s/before' "$img" 2>&1)" = "new text" ] &&
   ! "$dbg" -R 'stat /before' "$img" > /dev/null 2>&1; then
	pass batch-before
else
	fail batch-before "$(flat out)"
fi

# ---- -S TAG ----
got=$("$dbg" -S a -R pwd "$work/r.img" 2>&1); rc=$?
if [ $rc = 0 ] && [ "$got" = "@a/" ]; then
	pass start
else
	fail start "exit $rc: $got"
fi
got=$("$dbg" -S nope -R pwd "$work/r.img" 2>&1); rc=$?
if [ $rc = 1 ] && printf '%s' "$got" | grep -q "no such snapshot"; then
	pass start/unknown
else
	fail start/unknown "exit $rc: $got"
fi
"$dbg" -S a -R pwd > out 2>&1; rc=$?
if [ $rc = 2 ] && grep -q "^usage:" out; then
	pass start/no-device
else
	fail start/no-device "exit $rc: $(flat out)"
fi

# ---- read-only sessions change nothing ----
img=$work/r.img
sum=$(cksum < "$img")
printf 'cd @a\nls\ncat only-a\ncd @\nsnapshot create z\nsnapshot delete a\n' |
	"$dbg" -f - "$img" > out 2>&1; rc=$?
if [ $rc = 1 ] && [ "$(cksum < "$img")" = "$sum" ] &&
   [ "$(grep -c 'volume opened read-only (use -w)' out)" = 2 ] &&
   grep -q "^new text$" out; then
	pass readonly
else
	fail readonly "exit $rc: $(flat out)"
fi

# ---- delete gives back what only the snapshot read ----
img=$work/d.img
fresh "$img" delete/frees || exit 0
free() { "$dbg" -R statfs "$img" | sed -n 's/^free blocks: *//p'; }
"$dbg" -w -R "snapshot create big" "$img" > out 2>&1
f0=$(free)
"$dbg" -w -S big -R "write host.big /big" "$img" >> out 2>&1
f1=$(free)
"$dbg" -w -R "snapshot delete big" "$img" >> out 2>&1
f2=$(free)
if [ -n "$f0" ] && [ "$f1" -lt $((f0 - 150)) ] && [ "$f2" -gt $((f1 + 150)) ] &&
   "$fsck" -fn "$img" > out2 2>&1 &&
   [ "$("$dbg" -R versions "$img" | tail -1)" = "0 snapshots, 0 ghosts" ]; then
	pass delete/frees
else
	fail delete/frees "free $f0 $f1 $f2: $(flat out) $(tail -3 out2 | tr '\n' '|')"
fi

# ---- deleting a snapshot drops the atom references only it held ----
img=$work/x.img
fresh "$img" delete/atoms || exit 0
cat > atoms.cmd <<'EOF'
setxattr /a.txt user.live yes
snapshot create s
cd @s
setxattr /a.txt user.snap only-s
write host.txt /new
setxattr /new user.new only-s
cd @
write -f host.txt /a.txt
snapshot delete s
EOF
"$dbg" -w -f atoms.cmd "$img" > out 2>&1
if "$fsck" -fn "$img" > out2 2>&1; then
	pass delete/atoms
else
	fail delete/atoms "$(grep PASS out2 | tr '\n' '|') $(flat out)"
fi

# ---- rollback: the live version made to read what a snapshot reads ----
img=$work/rb.img
fresh "$img" rollback || exit 0
cat > rb.cmd <<'EOF'
setxattr /a.txt user.keep kept
snapshot create s1
write host.big /big
write host.txt /a.txt
setxattr /a.txt user.new added
rmxattr /a.txt user.keep
rm /docs/readme.md
mkdir /docs/new
write host.txt /docs/new/file
ln /a.txt /a-link
chmod 600 /a.txt
snapshot create s2
truncate /big 5000
EOF
"$dbg" -w -f rb.cmd "$img" > out 2>&1
man() { "$dbg" -R "manifest $1" "$img" 2>&1 | sed 's|^@[^/]*||'; }
inums() { "$dbg" -R "ls -l $1" "$img" 2>&1 | awk '{ print $1, $NF }'; }
man @s1/ > m.s1; man @s2/ > m.s2; inums @s1/ > i.s1
"$dbg" -w -R "snapshot rollback s1" "$img" > out.rb 2>&1; rc=$?
man / > m.live; inums / > i.live
if [ $rc = 0 ] && cmp -s m.s1 m.live && cmp -s i.s1 i.live &&
   [ "$(man @s1/ | cksum)" = "$(cksum < m.s1)" ] &&
   [ "$(man @s2/ | cksum)" = "$(cksum < m.s2)" ] &&
   grep -q "rolled back to snapshot s1: .* 1 brought back, 3 removed" \
	out.rb && "$fsck" -fn "$img" > out2 2>&1; then
	pass rollback/live
else
	fail rollback/live "exit $rc: $(flat out.rb) $(diff m.s1 m.live |
		head -5 | tr '\n' '|') $(tail -3 out2 | tr '\n' '|')"
fi
"$dbg" -w -R "snapshot rollback s1" "$img" > out 2>&1; rc=$?
if [ $rc = 0 ] &&
   grep -q " 0 changed, 0 brought back, 0 removed; 0 blocks copied, 0 punched" out &&
   [ "$(man / | cksum)" = "$(cksum < m.s1)" ]; then
	pass rollback/again
else
	fail rollback/again "exit $rc: $(flat out)"
fi
sum=$(cksum < "$img")
"$dbg" -w -R "snapshot rollback nosuch" "$img" > out 2>&1; rc=$?
"$dbg" -R "snapshot rollback s2" "$img" >> out 2>&1; rc2=$?
if [ $rc = 1 ] && [ $rc2 = 1 ] && [ "$(cksum < "$img")" = "$sum" ] &&
   grep -q "nosuch: no such snapshot" out &&
   grep -q "volume opened read-only (use -w)" out; then
	pass rollback/refused
else
	fail rollback/refused "exit $rc/$rc2: $(flat out)"
fi
# back to s2 (the newer one), then both gone: the 2014 format again
"$dbg" -w -R "snapshot rollback s2" "$img" > out 2>&1; rc=$?
"$dbg" -w -R "snapshot delete s1" -R "snapshot delete s2" "$img" >> out 2>&1
if [ $rc = 0 ] && [ "$(man / | cksum)" = "$(cksum < m.s2)" ] &&
   "$fsck" -fn "$img" > out2 2>&1 &&
   "$dbg" -R super "$img" | grep -q "magic.*tux3" &&
   ! "$dbg" -R super "$img" | grep -q "tux3ver1"; then
	pass rollback/to-2014
else
	fail rollback/to-2014 "exit $rc: $(flat out) $(tail -3 out2 | tr '\n' '|')"
fi

# ---- the interactive prompt and completion ----
cc=${CC:-cc}
if ! command -v "$cc" > /dev/null 2>&1; then
	skip tty "no C compiler for the pty driver"; exit 0
fi
if ! "$cc" -std=gnu11 -O2 -Wall -Wextra -Werror -o ptydrive \
	"$top/tests/debugfs/ptydrive.c" > out 2>&1; then
	fail tty "ptydrive: $(flat out)"; exit 0
fi
mkdir -p home
cat > tty.script <<'EOF'
expect tux3debug: 
send cd @\t
expect cd @
send \t
expect a/
send \x15
send cd @a\t\n
expect tux3debug @a: 
send cat /on\t\n
expect cat /only-a
expect new text
expect tux3debug @a: 
send pwd\n
expect \n@a/\n
send ls @/do\t\n
expect ls @/docs/
expect readme.md
expect tux3debug @a: 
send cd @\n
expect tux3debug: 
send quit\n
wait 0
EOF
HOME=$work/home TERM=dumb ./ptydrive -t 20 tty.script "$dbg" "$work/r.img" \
	> out 2>&1
rc=$?
if [ $rc = 77 ]; then
	skip tty "no pseudo-terminal"
elif [ $rc = 0 ]; then
	pass tty
else
	fail tty "$(tail -c 500 out | tr '\n' '|')"
fi
