#!/bin/sh
# mkfs.tux3 -d checks:   sh tests/scripts/mkfs_populate.sh BUILD
#   mkfs_populate/BS/make          mkfs.tux3 -b BS -d TREE succeeds
#   mkfs_populate/BS/manifest      tux3debug `manifest /` equals a manifest
#                                  of the host tree (all columns but the
#                                  size of directories and symlinks)
#   mkfs_populate/BS/check         tux3debug `check`: no block problem
#   mkfs_populate/BS/rdump         `rdump / OUT`: diff -r against the tree
#                                  is empty, mtimes equal to the ns
#   mkfs_populate/BS/sparse        the sparse files (3 MiB, and 40,004
#                                  bytes, read whole) map fewer blocks
#                                  than their size
#   mkfs_populate/reproducible     SOURCE_DATE_EPOCH and -U: two runs give
#                                  identical images
#   mkfs_populate/threads-N        and so do -E threads=0, 1 and 5 (the
#                                  helpers that read the tree ahead);
#                                  threads-range: 65 is refused, exit 2
#   mkfs_populate/socket           a socket is skipped with a warning
#   mkfs_populate/quiet, no-tty, progress   the progress line
#   mkfs_populate/enospc           a library error names the host path,
#                                  exit 1, the image file is removed
#   mkfs_populate/deep-paths       a symlink and a fifo below host paths
#                                  longer than PATH_MAX, without warnings
#   mkfs_populate/usage/...        -d on a missing path or a file
#   mkfs_populate/usr-include/..., usr-share-doc/...  the host trees copied:
#                                  manifest equal, rdump identical
#                                  (the acceptance test), time printed
# The tree: nested directories, files of 0, 1, bs-1, bs, bs+1 bytes for
# each block size, 300 KiB random, a sparse file (data at 1 MiB), symlinks
# (relative, dangling, a 200-byte target), hard links across directories,
# a fifo, setuid/setgid/sticky modes, user xattrs (where the host has
# them), ns mtimes, 3000 entries in one directory; as root also char and
# block devices and files owned by 1000:1000 (SKIP lines otherwise).
set -u
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
mkfs=$build/mkfs.tux3
dbg=$build/tux3debug
T=mkfs_populate

if [ ! -x "$mkfs" ] || [ ! -x "$dbg" ]; then
	echo "FAIL $T/all: $mkfs or $dbg not built"
	exit 1
fi
for tool in python3 cmp diff; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "SKIP $T/all: $tool not installed"
		exit 0
	fi
done

scratch_dir

now_ms() { python3 -c 'import time; print(int(time.time() * 1000))'; }

root=0
[ "$(id -u)" -eq 0 ] && root=1
export SOURCE_DATE_EPOCH=1700000000
FIXED=4f1c2a6e-0d3b-4c5a-9e8f-112233445566

# ---- the host tree ----
src=$work/src
cat > "$work/mktree.py" <<'EOF'
import os, random, stat, sys
src, root = sys.argv[1], sys.argv[2] == '1'
rnd = random.Random(1234)
def mk(path, data=b''):
    with open(path, 'wb') as f:
        f.write(data)
os.makedirs(src + '/a/b/c/d')
os.makedirs(src + '/empty')
os.makedirs(src + '/modes')
for bs in (512, 4096, 16384):
    for n in (0, 1, bs - 1, bs, bs + 1):
        mk('%s/a/size-%05d' % (src, n), bytes(rnd.getrandbits(8)
                                              for _ in range(n)))
mk(src + '/a/b/random300k', rnd.randbytes(300 * 1024))
mk(src + '/a/b/c/d/deep', b'at the bottom\n')
with open(src + '/sparse', 'wb') as f:
    f.write(b'head')
    f.seek(1 << 20)
    f.write(b'data at one MiB' * 100)
    f.truncate(3 << 20)             # and a hole at the end
with open(src + '/sparse-small', 'wb') as f:   # read whole, holes kept
    f.write(b'head')
    f.seek(40000)
    f.write(b'tail')
with open(src + '/zeros', 'wb') as f:   # written zeros: need no blocks
    f.write(bytes(64 * 1024))
os.symlink('b/random300k', src + '/a/rel-link')
os.symlink('/nonexistent/dangling', src + '/dangling')
os.symlink('t' * 200, src + '/long-link')
os.symlink('a', src + '/dir-link')
mk(src + '/a/linked', b'one inode, three names\n')
os.link(src + '/a/linked', src + '/a/b/linked-2')
os.link(src + '/a/linked', src + '/z-linked-3')
os.mkfifo(src + '/fifo')
os.link(src + '/fifo', src + '/a/fifo-link')
for name, mode in (('setuid', 0o4755), ('setgid', 0o2755),
                   ('sticky-file', 0o1644), ('none', 0o000),
                   ('odd', 0o0531)):
    mk(src + '/modes/' + name, name.encode())
    os.chmod(src + '/modes/' + name, mode)
os.makedirs(src + '/modes/sticky-dir')
os.chmod(src + '/modes/sticky-dir', 0o1777)
os.makedirs(src + '/modes/setgid-dir')
os.chmod(src + '/modes/setgid-dir', 0o2750)
big = src + '/big3000'
os.makedirs(big)
for i in range(3000):
    n = '%04d-%s' % (i, 'x' * rnd.randrange(0, 60))
    mk(big + '/' + n, b'' if i % 7 else n.encode())
try:
    os.setxattr(src + '/a/linked', 'user.colour', b'blue')
    os.setxattr(src + '/a/linked', 'user.empty', b'')
    os.setxattr(src + '/a/b', 'user.dir', bytes(range(40)))
    os.setxattr(src + '/sparse', 'user.z', b'last')
    print('xattrs')
except OSError:
    pass
if root:
    os.mknod(src + '/a/chr', 0o620 | stat.S_IFCHR, os.makedev(1, 3))
    os.mknod(src + '/a/blk', 0o660 | stat.S_IFBLK, os.makedev(7, 200))
    os.mknod(src + '/a/chr-big', 0o600 | stat.S_IFCHR,
             os.makedev(4095, 1048575))
    for p in ('/a/b/random300k', '/a/b', '/modes/setuid', '/dangling'):
        os.chown(src + p, 1000, 1000, follow_symlinks=False)
    os.chmod(src + '/modes/setuid', 0o4755)     # chown cleared it
    print('devices')
# ns mtimes on everything, directories last (children first)
t = 1234567890 * 10**9 + 123456789
for d, dirs, files in os.walk(src, topdown=False):
    for n in sorted(files + [x for x in dirs
                             if os.path.islink(os.path.join(d, x))]):
        t += 1000000007
        os.utime(os.path.join(d, n), ns=(t, t), follow_symlinks=False)
    t += 999
    os.utime(d, ns=(t, t))
EOF
have=$(python3 "$work/mktree.py" "$src" "$root") || {
	echo "FAIL $T/tree: cannot build the host tree"
	exit 1
}
# touch -d with nanoseconds on a file and on a symlink (without following)
touch -d '2001-02-03 04:05:06.987654321' "$src/a/b/c/d/deep" &&
	touch -h -d '1999-12-31 23:59:59.000000001' "$src/a/rel-link" &&
	touch -d '2010-01-01 00:00:00.5' "$src/a/b/c/d" ||
	fail tree "touch -d failed"
case $have in *xattrs*) ;; *) skip xattrs "the host takes no user xattrs here" ;; esac
case $have in *devices*) ;; *) skip devices "not root: no device nodes, no 1000:1000 owners" ;; esac

# A manifest of a host tree in the oracle format.
cat > "$work/hostman.py" <<'EOF'
import hashlib, os, stat, sys
root = sys.argv[1]
def tchar(m):
    for test, c in ((stat.S_ISREG, 'f'), (stat.S_ISDIR, 'd'),
                    (stat.S_ISLNK, 'l'), (stat.S_ISFIFO, 'p'),
                    (stat.S_ISCHR, 'c'), (stat.S_ISBLK, 'b'),
                    (stat.S_ISSOCK, 's')):
        if test(m):
            return c
    return '?'
def xattrs(p):
    try:
        names = os.listxattr(p, follow_symlinks=False)
    except OSError:
        return '-'
    names = sorted(n for n in names if n != 'security.selinux')
    out = [n + '=' + os.getxattr(p, n, follow_symlinks=False).hex()
           for n in names]
    return ','.join(out) if out else '-'
rows = []
def visit(host, rel):
    st = os.lstat(host)
    t = tchar(st.st_mode)
    if t == 's':
        return                      # mkfs.tux3 -d skips sockets
    if t == 'f':
        h = hashlib.sha256()
        with open(host, 'rb') as f:
            for b in iter(lambda: f.read(1 << 20), b''):
                h.update(b)
        extra = h.hexdigest()
    elif t == 'l':
        extra = os.fsdecode(os.readlink(os.fsencode(host)))
    elif t in 'cb':
        extra = '%d:%d' % (os.major(st.st_rdev), os.minor(st.st_rdev))
    else:
        extra = '-'
    rows.append([rel, t, '%04o' % stat.S_IMODE(st.st_mode), str(st.st_uid),
                 str(st.st_gid), str(st.st_size), str(st.st_nlink), extra,
                 xattrs(host)])
    if t == 'd':
        for n in os.listdir(host):
            visit(os.path.join(host, n), rel.rstrip('/') + '/' + n)
visit(root, '/')
rows.sort(key=lambda r: os.fsencode(r[0]))
out = sys.stdout.buffer
out.write(b'#path\ttype\tmode\tuid\tgid\tsize\tnlink\tsha256|target|rdev\txattrs\n')
for r in rows:
    out.write(os.fsencode('\t'.join(r)) + b'\n')
EOF

# Compare two manifests, all columns but the size of directories and
# symlinks (Tux3: whole blocks; target length + 1).
cat > "$work/cmpman.py" <<'EOF'
import sys
def load(p):
    rows = {}
    with open(p, encoding='utf-8', errors='surrogateescape') as f:
        for line in f:
            if line.startswith('#'):
                continue
            c = line.rstrip('\n').split('\t')
            rows[c[0]] = c
    return rows
want, got = load(sys.argv[1]), load(sys.argv[2])
names = ['path', 'type', 'mode', 'uid', 'gid', 'size', 'nlink',
         'sha256|target|rdev', 'xattrs']
bad = []
for p in sorted(set(want) | set(got)):
    w, g = want.get(p), got.get(p)
    if w is None:
        bad.append('%s: in the image, not on the host' % p)
        continue
    if g is None:
        bad.append('%s: on the host, not in the image' % p)
        continue
    for i in range(1, 9):
        if i == 5 and w[1] in 'dl':
            continue
        if w[i] != g[i]:
            bad.append('%s: %s %s in the image, %s on the host'
                       % (p, names[i], g[i][:70], w[i][:70]))
if bad:
    for b in bad[:10]:
        sys.stderr.write(b + '\n')
    print('%d of %d rows differ, first: %s' % (len(bad), len(want), bad[0]))
    sys.exit(1)
print('%d rows' % len(want))
EOF

# mtimes of two trees, every entry below the top, to the nanosecond
# (`rdump / D` does not give D the root's attributes: the root's mtime
# is compared with `stat /` separately)
cat > "$work/mtimes.py" <<'EOF'
import os, sys
a, b = sys.argv[1], sys.argv[2]
bad = []
n = 0
for d, dirs, files in os.walk(a):
    for name in ([''] if d != a else []) + dirs + files:
        pa = os.path.join(d, name) if name else d
        pb = os.path.join(b, os.path.relpath(pa, a))
        try:
            ma = os.lstat(pa).st_mtime_ns
            mb = os.lstat(pb).st_mtime_ns
        except OSError as e:
            bad.append(str(e))
            continue
        n += 1
        if ma != mb:
            bad.append('%s: %d on the host, %d restored' % (pa, ma, mb))
if bad:
    print('%d of %d differ, first: %s' % (len(bad), n, bad[0]))
    sys.exit(1)
EOF

python3 "$work/hostman.py" "$src" > "$work/host.manifest" || {
	echo "FAIL $T/tree: cannot make the host manifest"
	exit 1
}

have_check=-1	# known once there is an image to ask

# ---- each block size ----
for bs in 512 4096 16384; do
	img=$work/img-$bs
	if ! "$mkfs" -q -b $bs -U $FIXED -d "$src" "$img" 64m \
		> "$work/out-$bs" 2>&1; then
		fail $bs/make "$(head -3 "$work/out-$bs" | tr '\n' ' ')"
		continue
	fi
	pass $bs/make
	if "$dbg" -R "manifest /" "$img" > "$work/man-$bs" 2> "$work/err" &&
	   why=$(python3 "$work/cmpman.py" "$work/host.manifest" \
		 "$work/man-$bs" 2>/dev/null); then
		pass $bs/manifest
	else
		fail $bs/manifest "${why:-} $(head -1 "$work/err")"
	fi
	if [ $have_check -lt 0 ]; then
		have_check=0
		"$dbg" -R "help check" "$img" >/dev/null 2>&1 && have_check=1
	fi
	if [ $have_check -eq 0 ]; then
		skip $bs/check "tux3debug has no check command yet"
	elif out=$("$dbg" -R check "$img" 2>&1) &&
	     [ "$out" = "0 problems" ]; then
		pass $bs/check
	else
		fail $bs/check "$(echo "$out" | head -3 | tr '\n' ' ')"
	fi
	out=$work/rdump-$bs
	if ! "$dbg" -R "rdump / $out" "$img" > "$work/err" 2>&1; then
		fail $bs/rdump "$(head -2 "$work/err" | tr '\n' ' ')"
	else
		# diff reports two fifos or two device nodes as different
		# files without comparing them; the manifest has compared
		# their types and device numbers already
		d=$(diff -r --no-dereference "$src" "$out" 2>&1 |
		    grep -v '^File .* is a \(fifo\|character special file\|block special file\) while file .* is a \(fifo\|character special file\|block special file\)$')
		if [ -n "$d" ]; then
			fail $bs/rdump "diff: $(echo "$d" | head -2 | tr '\n' ' ')"
		elif ! why=$(python3 "$work/mtimes.py" "$src" "$out"); then
			fail $bs/rdump "mtimes: $why"
		elif [ "$("$dbg" -R "stat /" "$img" 2>/dev/null |
			   sed -n 's/^mtime: \(.*\) UTC$/\1/p')" != \
		       "$(TZ=UTC stat -c %y "$src" | sed 's/ +0000$//')" ]; then
			fail $bs/rdump "the root's mtime differs from $src's"
		else
			pass $bs/rdump
		fi
	fi
	rm -rf "$out"
	blocks=$("$dbg" -R "stat /sparse" "$img" 2>/dev/null |
		 sed -n 's/^Blocks: \([0-9]*\).*/\1/p')
	zblocks=$("$dbg" -R "stat /zeros" "$img" 2>/dev/null |
		  sed -n 's/^Blocks: \([0-9]*\).*/\1/p')
	sblocks=$("$dbg" -R "stat /sparse-small" "$img" 2>/dev/null |
		  sed -n 's/^Blocks: \([0-9]*\).*/\1/p')
	full=$(( (3 << 20) / 512 ))
	if [ -n "$blocks" ] && [ "$blocks" -gt 0 ] &&
	   [ $((blocks * 512)) -le $((3 * bs + 2048)) ] &&
	   [ "$blocks" -lt $full ] && [ "$zblocks" = 0 ] &&
	   [ -n "$sblocks" ] && [ "$sblocks" -gt 0 ] &&
	   [ $((sblocks * 512)) -le $((2 * bs)) ]; then
		pass $bs/sparse
	else
		fail $bs/sparse "sparse maps ${blocks:-?} sectors of $full, zeros ${zblocks:-?}, sparse-small ${sblocks:-?}"
	fi
	[ $bs = 4096 ] || rm -f "$img"
done

# ---- reproducible: the same tree twice ----
"$mkfs" -q -U $FIXED -d "$src" "$work/again" 64m > /dev/null 2>&1
if [ -e "$work/img-4096" ] && cmp -s "$work/img-4096" "$work/again"; then
	pass reproducible
else
	fail reproducible "$(cmp "$work/img-4096" "$work/again" 2>&1 | head -1)"
fi
# the helpers that read the tree ahead change nothing in the image
for t in 0 1 5; do
	rm -f "$work/again"
	"$mkfs" -q -U $FIXED -E threads=$t -d "$src" "$work/again" 64m \
		> "$work/threads.out" 2>&1
	if [ -e "$work/img-4096" ] && cmp -s "$work/img-4096" "$work/again"; then
		pass threads-$t
	else
		fail threads-$t "$(cat "$work/threads.out"; cmp "$work/img-4096" "$work/again" 2>&1 | head -1)"
	fi
done
"$mkfs" -q -E threads=65 -d "$src" "$work/again" 64m > "$work/threads.out" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "bad threads '65'" "$work/threads.out"; then
	pass threads-range
else
	fail threads-range "exit $rc: $(cat "$work/threads.out")"
fi
rm -f "$work/img-4096" "$work/again"

# ---- a socket is skipped with a warning ----
mkdir -p "$work/sock"
echo x > "$work/sock/file"
if python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$work/sock/sock" 2>/dev/null; then
	"$mkfs" -q -d "$work/sock" "$work/sock.img" 16m > "$work/out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q 'warning: .*sock/sock: socket skipped' "$work/out" &&
	   "$dbg" -R "manifest /" "$work/sock.img" > "$work/m" 2>/dev/null &&
	   ! grep -q '^/sock' "$work/m" && grep -q '^/file' "$work/m"; then
		pass socket
	else
		fail socket "rc $rc: $(head -2 "$work/out" | tr '\n' ' ')"
	fi
	rm -f "$work/sock.img"
else
	skip socket "cannot bind a unix socket here"
fi

# ---- the progress line: only on a terminal, never with -q ----
"$mkfs" -d "$work/sock" "$work/p.img" 16m > /dev/null 2> "$work/err"
if grep -q populating "$work/err"; then
	fail no-tty "progress written to a non-terminal"
else
	pass no-tty
fi
rm -f "$work/p.img"
if command -v script >/dev/null 2>&1; then
	script -qec "'$mkfs' -d '$src' '$work/p.img' 64m" /dev/null \
		> "$work/tty" 2>&1
	if grep -q "populating: [0-9]* files" "$work/tty"; then
		pass progress
	else
		fail progress "$(tr '\r' '\n' < "$work/tty" | tail -2 | tr '\n' ' ')"
	fi
	rm -f "$work/p.img"
	script -qec "'$mkfs' -q -d '$src' '$work/p.img' 64m" /dev/null \
		> "$work/tty" 2>&1
	if [ -s "$work/tty" ]; then
		fail quiet "$(head -c 200 "$work/tty")"
	else
		pass quiet
	fi
	rm -f "$work/p.img"
else
	skip progress "script(1) not installed"
fi

# ---- a library error: the volume is too small ----
"$mkfs" -q -d "$src" "$work/small.img" 1m > "$work/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "$src" "$work/out" &&
   grep -qi 'space' "$work/out" && [ ! -e "$work/small.img" ]; then
	pass enospc
else
	fail enospc "rc $rc, $(head -2 "$work/out" | tr '\n' ' ')"
fi

# ---- host paths longer than PATH_MAX: a symlink and a fifo 3000 levels
# down (their xattrs are read by path) come in without a warning ----
chain=$(awk 'BEGIN { for (i = 0; i < 1000; i++) printf "d/" }')
if ( mkdir -p "$work/deep" && cd "$work/deep" &&
     for k in 1 2 3; do mkdir -p "$chain" && cd -P "$chain" || exit 1; done &&
     ln -s target sym && mkfifo fifo ); then
	"$mkfs" -q -d "$work/deep" "$work/deep.img" 32m > "$work/out" 2>&1
	rc=$?
	found=$("$dbg" -R "find / -name sym -type l" "$work/deep.img" 2>&1 |
		wc -l)
	if [ $rc -eq 0 ] && [ ! -s "$work/out" ] && [ "$found" = 1 ]; then
		pass deep-paths
	else
		fail deep-paths "rc $rc, sym found $found: $(head -c 200 "$work/out")"
	fi
else
	fail deep-paths "cannot make the tree"
fi
rm -rf "$work/deep" "$work/deep.img"

# ---- usage ----
"$mkfs" -q -d "$work/nonexistent" "$work/u.img" 16m > /dev/null 2>&1
rc=$?
if [ $rc -eq 1 ] && [ ! -e "$work/u.img" ]; then pass usage/missing
else fail usage/missing "rc $rc"; fi
"$mkfs" -q -d "$work/host.manifest" "$work/u.img" 16m > /dev/null 2>&1
rc=$?
if [ $rc -eq 1 ] && [ ! -e "$work/u.img" ]; then pass usage/not-a-dir
else fail usage/not-a-dir "rc $rc"; fi
rm -rf "$src"

# ---- the acceptance tests: /usr/include and /usr/share/doc ----
# The manifest equals the host tree's, and an rdump of the volume is
# identical to the source (diff -r), ns mtimes included.
for host in /usr/include /usr/share/doc; do
	name=$(echo "$host" | tr / - | sed 's/^-//')
	if [ ! -d "$host" ]; then
		skip "$name" "no $host"
		continue
	fi
	t0=$(now_ms)
	"$mkfs" -q -d "$host" "$work/inc.img" 1g > "$work/out" 2>&1
	rc=$?
	t1=$(now_ms)
	if [ $rc -ne 0 ]; then
		fail "$name/make" "$(head -2 "$work/out" | tr '\n' ' ')"
		continue
	fi
	pass "$name/make"
	python3 "$work/hostman.py" "$host" > "$work/host.manifest"
	if "$dbg" -R "manifest /" "$work/inc.img" > "$work/m" 2> "$work/err" &&
	   why=$(python3 "$work/cmpman.py" "$work/host.manifest" "$work/m" \
		 2>/dev/null); then
		pass "$name/manifest"
		echo "# $T: $host, $why, mkfs.tux3 -d took $((t1 - t0)) ms ($build)"
	else
		fail "$name/manifest" "${why:-} $(head -1 "$work/err")"
	fi
	rm -rf "$work/restored"
	if "$dbg" -R "rdump / $work/restored" "$work/inc.img" > /dev/null \
		2> "$work/err" &&
	   diff -r --no-dereference "$host" "$work/restored" > "$work/diff" 2>&1
	then
		pass "$name/rdump-identical"
	else
		fail "$name/rdump-identical" "$(head -c 300 "$work/diff" "$work/err" | tr '\n' ' ')"
	fi
	rm -rf "$work/restored"
	rm -f "$work/inc.img"
done
