#!/bin/sh
# tux3debug -w: the editing commands on fresh volumes made by mkfs.tux3,
# at block sizes 512, 1024, 4096 and 16384.  A script of edits runs with
# -w -f; the result must match a manifest computed from the host files,
# pass 'check', read the same in a new session, restore with rdump to a
# tree equal to the host source, and keep a sparse file sparse.  Then:
# refusal without -w, script errors naming FILE:LINE, the batching rule
# (the end of a script commits the lines that succeeded), a crash between
# deltas (kill -9) and reproducible images under SOURCE_DATE_EPOCH.
#   sh tests/scripts/debugfs_write.sh BUILD
set -u
build=${1:-build}
dbg=$build/tux3debug
mkfs=$build/mkfs.tux3
t=debugfs_write

pass() { echo "PASS $t/$1"; }
fail() { echo "FAIL $t/$1: $2"; }
if [ ! -x "$dbg" ] || [ ! -x "$mkfs" ]; then
	echo "SKIP $t/all: $dbg or $mkfs not built"; exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP $t/all: needs python3"; exit 0
fi
work=$(mktemp -d "${TUX3_SCRATCH:-/tmp}/debugfs_write.XXXXXX") ||
	{ echo "FAIL debugfs_write/scratch: cannot make a directory under ${TUX3_SCRATCH:-/tmp}"; exit 1; }
trap 'rm -rf "$work"' EXIT INT TERM
export SOURCE_DATE_EPOCH=1700000000
first() { head -c 400 "$1" | tr '\n' ' '; }

# The host source: the tree the edits should produce (regular files,
# symlinks, hard links, directories).  Files in in/ are the inputs of
# 'write'; src/ is then brought to the expected end state by the same
# chmod/truncate done on the host.
make_source() {
	s=$1
	rm -rf "$s"
	mkdir -p "$s/in" "$s/src/tree/sub/deeper" "$s/src/special"
	printf 'hello, tux3\n' > "$s/in/a.txt"
	head -c 300000 /dev/urandom > "$s/in/big.bin"
	head -c 5000 /dev/urandom > "$s/in/grow"
	head -c 70000 /dev/urandom > "$s/in/shrink"
	head -c 777 /dev/urandom > "$s/in/mode.txt"
	: > "$s/in/empty"
	printf 'deep\n' > "$s/in/deep"
	printf 'gone\n' > "$s/in/gone"
	printf 'first version\n' > "$s/in/replace"
	printf 'the second, longer version\n' > "$s/in/replace2"
	# sparse: 4 MiB with data at 1 MiB and a tail at the end
	truncate -s 4194304 "$s/in/sparse.bin"
	head -c 10000 /dev/urandom |
		dd of="$s/in/sparse.bin" bs=1024 seek=1024 conv=notrunc 2>/dev/null
	printf 'tail' |
		dd of="$s/in/sparse.bin" bs=1 seek=4194300 conv=notrunc 2>/dev/null
	chmod 644 "$s/in"/*
	# the expected end state
	for f in a.txt big.bin grow shrink mode.txt empty sparse.bin; do
		cp --sparse=always -p "$s/in/$f" "$s/src/tree/$f"
	done
	cp -p "$s/in/deep" "$s/src/tree/sub/deeper/deep"
	cp -p "$s/in/replace2" "$s/src/tree/replace"
	cp -p "$s/in/a.txt" "$s/src/special/owned"
	ln "$s/src/tree/a.txt" "$s/src/tree/sub/hard"
	ln -s ../a.txt "$s/src/tree/sub/link"
	ln -s /absolute/nowhere "$s/src/tree/dangling"
	truncate -s 100000 "$s/src/tree/grow"
	truncate -s 1000 "$s/src/tree/shrink"
	chmod 640 "$s/src/tree/mode.txt"
	mkfifo -m 644 "$s/src/special/fifo"
}

# The edit script; $1 = directory of the host inputs
make_script() {
	i=$1
	cat <<EOF
# directories, nested
mkdir /tree
mkdir /tree/sub
mkdir tree/sub/deeper
mkdir /special
mkdir /scratch
mkdir /scratch/empty
# host files
write $i/a.txt /tree/a.txt
write $i/big.bin /tree/big.bin
write $i/sparse.bin /tree/sparse.bin
write $i/grow /tree/grow
write $i/shrink /tree/shrink
write $i/mode.txt /tree/mode.txt
write $i/empty /tree/empty
write $i/deep /tree/sub/deeper/deep
write $i/replace /tree/replace
delta
write -f $i/replace2 /tree/replace
write $i/a.txt /special/owned
write $i/gone /scratch/gone
# links and special files
ln -s ../a.txt /tree/sub/link
ln -s /absolute/nowhere /tree/dangling
ln /tree/a.txt /tree/sub/hard
mknod /special/fifo p
mknod /special/null c 1 3
# attributes and sizes
chmod 640 /tree/mode.txt
chown 1234:5678 /special/owned
truncate /tree/grow 100000
truncate /tree/shrink 1000
# removals
rm /scratch/gone
rmdir /scratch/empty
rmdir /scratch
EOF
}

# The expected manifest of the volume from the host tree
# (tux3 conventions: directories are one block here, symlink size is the
# target plus its NUL, objects made by tux3debug are owned by 0:0).
expected_manifest() {
	python3 - "$1" "$2" <<'EOF'
import hashlib, os, stat, sys
src, bs = sys.argv[1], int(sys.argv[2])
rows = []
def row(path, st, full):
    m = st.st_mode
    uid, gid = 0, 0
    if stat.S_ISDIR(m):
        typ, size, mode, extra = 'd', bs, 0o755, '-'
        nlink = 2 + sum(1 for e in os.scandir(full)
                        if e.is_dir(follow_symlinks=False))
    elif stat.S_ISLNK(m):
        target = os.readlink(full)
        typ, size, mode, nlink, extra = 'l', len(target) + 1, 0o777, 1, target
    elif stat.S_ISFIFO(m):
        typ, size, mode, nlink, extra = 'p', 0, 0o644, 1, '-'
    else:
        typ, size, mode, nlink = 'f', st.st_size, m & 0o7777, st.st_nlink
        uid, gid = st.st_uid, st.st_gid
        extra = hashlib.sha256(open(full, 'rb').read()).hexdigest()
    if path == '/special/owned':
        uid, gid = 1234, 5678
    rows.append((path, typ, '%04o' % mode, str(uid), str(gid), str(size),
                 str(nlink), extra, '-'))
rows.append(('/', 'd', '0755', '0', '0', str(bs), '4', '-', '-'))
for d, dirs, files in os.walk(src):
    for n in dirs + files:
        full = os.path.join(d, n)
        row('/' + os.path.relpath(full, src), os.lstat(full), full)
rows.append(('/special/null', 'c', '0644', '0', '0', '0', '1', '1:3', '-'))
rows.sort(key=lambda r: r[0].encode())
print('#path\ttype\tmode\tuid\tgid\tsize\tnlink\tsha256|target|rdev\txattrs')
for r in rows:
    print('\t'.join(r))
EOF
}

for bs in 512 1024 4096 16384; do
	d=$work/$bs
	mkdir -p "$d"
	img=$d/vol.img
	make_source "$d/host"
	make_script "$d/host/in" > "$d/script"
	# a manifest inside the session sees the batched, uncommitted delta
	echo "manifest /" >> "$d/script"
	if ! "$mkfs" -q -b "$bs" "$img" 32m 2> "$d/err"; then
		fail "$bs/mkfs" "$(first "$d/err")"; continue
	fi
	if "$dbg" -w -f "$d/script" "$img" > "$d/live" 2> "$d/err" &&
	   [ ! -s "$d/err" ]; then
		pass "$bs/script"
	else
		fail "$bs/script" "$(first "$d/err")"; continue
	fi
	expected_manifest "$d/host/src" "$bs" > "$d/expected"
	if cmp -s "$d/live" "$d/expected"; then
		pass "$bs/manifest-live"
	else
		fail "$bs/manifest-live" "$(diff "$d/expected" "$d/live" | head -c 400)"
	fi
	"$dbg" -R "manifest /" "$img" > "$d/got" 2> "$d/err"
	if cmp -s "$d/got" "$d/expected" && [ ! -s "$d/err" ]; then
		pass "$bs/manifest"
	else
		fail "$bs/manifest" "$(diff "$d/expected" "$d/got" | head -c 400) $(first "$d/err")"
	fi
	if out=$("$dbg" -R check "$img" 2>&1) && [ "$out" = "0 problems" ]; then
		pass "$bs/check"
	else
		fail "$bs/check" "$(echo "$out" | head -c 400)"
	fi
	# a second read-only session sees the same
	"$dbg" -R "manifest /" "$img" > "$d/got2" 2> "$d/err"
	if cmp -s "$d/got2" "$d/expected"; then
		pass "$bs/second-session"
	else
		fail "$bs/second-session" "$(diff "$d/expected" "$d/got2" | head -c 400)"
	fi
	# rdump gives back the host tree (regular files, symlinks, links)
	if "$dbg" -R "rdump /tree $d/out" "$img" 2> "$d/err" &&
	   diff -r --no-dereference "$d/host/src/tree" "$d/out/tree" > "$d/diff" 2>&1; then
		pass "$bs/rdump"
	else
		fail "$bs/rdump" "$(first "$d/err") $(first "$d/diff")"
	fi
	# the sparse file is sparse in the image too
	blocks=$("$dbg" -R "stat /tree/sparse.bin" "$img" |
		 sed -n 's/^Blocks: \([0-9]*\) .*/\1/p')
	if [ -n "$blocks" ] && [ "$blocks" -gt 0 ] &&
	   [ "$blocks" -lt $((4194304 / 512 / 4)) ]; then
		pass "$bs/sparse"
	else
		fail "$bs/sparse" "stat shows '$blocks' blocks for 4 MiB"
	fi
	# mtime copied from the host file, ctime from SOURCE_DATE_EPOCH
	want=$(date -u -d "@$(stat -c %Y "$d/host/in/big.bin")" '+%Y-%m-%d %H:%M:%S')
	st=$("$dbg" -R "stat /tree/big.bin" "$img")
	if echo "$st" | grep -q "^mtime: $want" &&
	   echo "$st" | grep -q "^ctime: 2023-11-14 22:13:20.000000000 UTC"; then
		pass "$bs/times"
	else
		fail "$bs/times" "$(echo "$st" | grep time | tr '\n' ' ')"
	fi
	rm -rf "$d"
done

d=$work/misc
mkdir -p "$d"
img=$d/vol.img
"$mkfs" -q -b 1024 "$img" 16m

# read-only refusal: every editing command, and the image is unchanged
before=$(sha256sum < "$img")
ok=1
for cmd in "write /etc/hostname /x" "mkdir /x" "rm /x" "rmdir /x" \
	   "ln / /x" "ln -s t /x" "truncate / 0" "chmod 644 /" \
	   "chown 1:1 /" "touch /x" "mknod /x p" "delta" "unify"; do
	if "$dbg" -R "$cmd" "$img" > /dev/null 2> "$d/err" ||
	   ! grep -q "volume opened read-only (use -w)" "$d/err"; then
		ok=0; fail readonly "'$cmd': $(first "$d/err")"
	fi
done
if [ "$(sha256sum < "$img")" != "$before" ]; then
	ok=0; fail readonly "the image changed"
fi
[ $ok = 1 ] && pass readonly
if "$dbg" -R check "$img" > /dev/null 2>&1; then
	pass check-readonly
else
	fail check-readonly "check failed on a fresh read-only volume"
fi
if "$dbg" -c -w -R ls "$img" > /dev/null 2>&1; [ $? = 2 ]; then
	pass c-and-w
else
	fail c-and-w "-c -w was not a usage error"
fi

# a script error names FILE:LINE and exits 1; the end of the script
# still commits the lines that succeeded, before and after it
printf 'mkdir /s1\n\nmkdir /nodir/x\nrmdir /nonexistent\nmkdir /s2\n' > "$d/bad"
"$dbg" -w -f "$d/bad" "$img" > /dev/null 2> "$d/err"; rc=$?
if [ $rc = 1 ] && grep -q "^tux3debug: $d/bad:3: /nodir/x: " "$d/err" &&
   grep -q "^tux3debug: $d/bad:4: /nonexistent: " "$d/err"; then
	pass script-error
else
	fail script-error "status $rc: $(first "$d/err")"
fi
if "$dbg" -R "stat /s1" "$img" > /dev/null 2>&1 &&
   "$dbg" -R "stat /s2" "$img" > /dev/null 2>&1; then
	pass script-error-commits
else
	fail script-error-commits "/s1 or /s2 missing after the script"
fi
# the same from standard input
printf 'mkdir /s3\nbogus\n' | "$dbg" -w "$img" > /dev/null 2> "$d/err"; rc=$?
if [ $rc = 1 ] && grep -q "^tux3debug: stdin:2: bogus: no such command" "$d/err" &&
   "$dbg" -R "stat /s3" "$img" > /dev/null 2>&1; then
	pass stdin-batch
else
	fail stdin-batch "status $rc: $(first "$d/err")"
fi
# bad names and arguments
ok=1
for cmd in "mkdir /" "mkdir /a/.." "mkdir $(printf '%0256d' 0)" \
	   "chmod 8 /" "chmod 17777 /" "chown x /" "mknod /n c 1" \
	   "mknod /n q" "truncate / -1" "truncate /s1 10" "rm /s1" \
	   "rmdir /nonexistent" "ln /missing /l"; do
	if "$dbg" -w -R "$cmd" "$img" > /dev/null 2> "$d/err" ||
	   [ ! -s "$d/err" ]; then
		ok=0; fail bad-args "'$cmd' did not fail: $(first "$d/err")"
	fi
done
[ $ok = 1 ] && pass bad-args

# crash: edits with -R (each commits), then a batch killed after its
# 'delta' but before the end: what the delta held is there, what came
# after it is not, and the volume checks clean
"$dbg" -w -R "mkdir /c1" "$img" &&
"$dbg" -w -R "write /etc/passwd /c1/passwd" "$img" ||
	fail crash "-R edits failed"
mkfifo "$d/fifo"
"$dbg" -w -f - "$img" < "$d/fifo" > "$d/crash.out" 2> "$d/err" &
pid=$!
exec 3> "$d/fifo"
# markers are failing lines: errors go unbuffered to standard error
wait_lines() {
	n=0
	while [ "$(grep -c marker "$d/err")" -lt "$1" ] && [ $n -lt 200 ]; do
		sleep 0.05; n=$((n + 1))
	done
}
printf 'mkdir /c2\nwrite /etc/passwd /c2/passwd\ndelta\nmarker1\n' >&3
wait_lines 1
printf 'mkdir /c3\nwrite /etc/passwd /c3/passwd\nrm /c1/passwd\nmarker2\n' >&3
wait_lines 2
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
exec 3>&-
[ "$(grep -c marker "$d/err")" = 2 ] ||
	fail crash "the batch did not get through: $(first "$d/err")"
man=$("$dbg" -R "manifest /" "$img" 2> "$d/err" | cut -f1 | tr '\n' ' ')
case "$man" in
*" /c1/passwd /c2 /c2/passwd "*)
	case "$man" in
	*/c3*) fail crash "uncommitted /c3 survived: $man" ;;
	*) pass crash ;;
	esac ;;
*) fail crash "committed entries missing: $man $(first "$d/err")" ;;
esac
if out=$("$dbg" -R check "$img" 2>&1) && [ "$out" = "0 problems" ]; then
	pass crash-check
else
	fail crash-check "$(echo "$out" | head -c 400)"
fi
# and a writer can carry on after the crash
if "$dbg" -w -R "mkdir /c4" "$img" 2> "$d/err" &&
   out=$("$dbg" -R check "$img" 2>&1) && [ "$out" = "0 problems" ]; then
	pass crash-reopen
else
	fail crash-reopen "$(first "$d/err") $out"
fi

# reproducible: the same script on the same mkfs gives the same bytes
make_source "$d/host"
make_script "$d/host/in" > "$d/script"
echo unify >> "$d/script"
for n in 1 2; do
	"$mkfs" -q -b 4096 -U clear "$d/r$n.img" 16m
	"$dbg" -w -f "$d/script" "$d/r$n.img" 2> "$d/err$n"
done
if [ ! -s "$d/err1" ] && cmp -s "$d/r1.img" "$d/r2.img"; then
	pass reproducible
else
	fail reproducible "$(first "$d/err1") $(cmp "$d/r1.img" "$d/r2.img" 2>&1)"
fi

# a full volume: removals free space only when their delta commits, so a
# long run of them in one session must commit early enough to keep going
# (it failed with ENOSPC after about 230 of the 700)
d=$work/full
mkdir -p "$d"
head -c 512 /dev/zero | tr '\0' a > "$d/one"
"$mkfs" -q -b 512 -U clear "$d/f.img" 1m
i=1
while [ $i -le 1400 ]; do echo "write $d/one /f$i"; i=$((i + 1)); done > "$d/fill"
echo unify >> "$d/fill"
"$dbg" -w -f "$d/fill" "$d/f.img" > /dev/null 2> "$d/err0"
free0=$("$dbg" -R statfs "$d/f.img" | sed -n 's/^free blocks: *//p')
i=1
while [ $i -le 1400 ]; do echo "rm /f$i"; i=$((i + 2)); done > "$d/rm"
echo unify >> "$d/rm"
"$dbg" -w -f "$d/rm" "$d/f.img" > /dev/null 2> "$d/err"
free1=$("$dbg" -R statfs "$d/f.img" | sed -n 's/^free blocks: *//p')
left=$("$dbg" -R "ls /" "$d/f.img" 2>&1 | grep -c '^ *[0-9].* f[0-9]*$')
if [ ! -s "$d/err" ] && [ "${free0:-9999}" -lt 200 ] &&
   [ "${free1:-0}" -gt 700 ] &&
   out=$("$dbg" -R check "$d/f.img" 2>&1) && [ "$out" = "0 problems" ]; then
	pass full-volume-removals
else
	fail full-volume-removals "free $free0 -> $free1, $left left: $(first "$d/err") ${out:-}"
fi
