#!/bin/sh
# tux3image checks:   sh tests/scripts/image.sh BUILD
#   image/VOL/compact     image -> -R restore: fsck.tux3 -fn exits as on the
#                         source, the listing (names, types, modes, owners,
#                         sizes, links, mtimes to the ns) is identical
#   image/VOL/raw         -r: a sparse file of the volume's size, fsck clean,
#                         the same listing, fewer blocks allocated than data
#   image/VOL/data        -a: every file's sha256 identical (manifest)
#   image/VOL/nodata      without -a: sizes kept, file contents read as zeros
#   image/VOL/scramble    -s: fsck clean, same shape per directory (entries,
#                         inodes, types, modes, sizes, links), names differ,
#                         one name -> one scramble everywhere, symlink
#                         targets mapped component by component
#   image/VOL/source      the volume is bit-identical after imaging
#   image/damaged/...     a flipped header byte, a flipped payload byte, a
#                         truncated file: -R exits 8 naming the offset, the
#                         target is untouched (or not created)
#   image/corrupt/...     a volume with random bytes over a directory block,
#                         an inode table leaf, the newest log block: no
#                         crash, exit 1, the image restores with the damaged
#                         block, fsck -fn exits as on the volume
#   image/usage/...       bad usage and operational errors exit 8
# Volumes: empty (mkfs 64m), a host tree (/usr/include; its linux/ part on
# a sanitizer build), a made tree with symlinks, repeated names and
# lost+found, edited after a unify (a live log over stale bnodes), a
# volume with only tux3debug -w edits, and the reference volumes of
# $TUX3_ORACLE_DIR.
set -u
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
tool=$build/tux3image
mkfs=$build/mkfs.tux3
dbg=$build/tux3debug
fsck=$build/fsck.tux3
T=image

for b in "$tool" "$mkfs" "$dbg" "$fsck"; do
	if [ ! -x "$b" ]; then
		echo "FAIL $T/all: $b not built"
		exit 1
	fi
done
for t in python3 sha256sum cmp dd; do
	if ! command -v $t >/dev/null 2>&1; then
		echo "SKIP $T/all: $t not installed"
		exit 0
	fi
done

scratch_dir
export SOURCE_DATE_EPOCH=1700000000

# ---- the listing: tux3debug `ls -l --json` of every directory, by inode
cat > "$work/list.py" <<'EOF'
import json, subprocess, sys

dbg = sys.argv[1]

def run(img, cmds):
    p = subprocess.run([dbg, '-f', '-', img], capture_output=True,
                       input=('\n'.join(cmds) + '\n').encode())
    return p.stdout.decode('utf-8', 'surrogateescape')

def docs(text):
    d = json.JSONDecoder()
    i, out = 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        o, i = d.raw_decode(text, i)
        out.append(o)

def tree(img):
    """{dir inode: [entry]}, and the symlink targets by inode"""
    dirs, level = {}, [63]
    while level:
        got = docs(run(img, ['ls -l --json <%d>' % i for i in level]))
        if len(got) != len(level):
            sys.exit('%s: %d listings for %d directories' %
                     (img, len(got), len(level)))
        nxt = []
        for ino, doc in zip(level, got):
            dirs[ino] = doc['ls']
            nxt += [e['inode'] for e in doc['ls'] if e['type'] == 'd'
                    and e['inode'] not in dirs]
        level = nxt
    links = [e['inode'] for es in dirs.values() for e in es
             if e['type'] == 'l']
    out = run(img, ['readlink <%d>' % i for i in links]).split('\n')
    return dirs, dict(zip(links, out))

PARENTS = {}

def resolve(dirs, start, target):
    parent = PARENTS.get(id(dirs))
    if parent is None:
        parent = PARENTS[id(dirs)] = {e['inode']: d for d, es in dirs.items() for e in es
                                      if e['type'] == 'd'}
    cur = 63 if target.startswith('/') else start
    for c in target.split('/'):
        if c in ('', '.'):
            continue
        if c == '..':
            cur = parent.get(cur, 63)
            continue
        if cur not in dirs:
            return None
        hit = [e for e in dirs[cur] if e['name'] == c]
        if not hit or (hit[0]['type'] == 'l'):
            return None
        cur = hit[0]['inode']
    return cur

def lines(img):
    dirs, targets = tree(img)
    res = []
    def walk(ino, path):
        for e in dirs.get(ino, []):
            p = path + '/' + e['name']
            res.append('\t'.join(str(x) for x in (
                p, e['type'], oct(e['mode']), e['nlink'], e['uid'],
                e['gid'], e['size'], e['mtime_ns'],
                targets.get(e['inode'], '-'))))
            if e['type'] == 'd':
                walk(e['inode'], p)
    walk(63, '')
    return sorted(res)

def blen(name):
    return len(name.encode('utf-8', 'surrogateescape'))

SHAPE = ('inode', 'type', 'mode', 'nlink', 'uid', 'gid', 'size', 'mtime_ns')

def shape(src, scr):
    """scr is src with names scrambled: report how it is not"""
    a, ta = tree(src)
    b, tb = tree(scr)
    bad, fwd, back, same, names = [], {}, {}, 0, 0
    if sorted(a) != sorted(b):
        bad.append('not the same directories')
    for d in a:
        ea = sorted(a[d], key=lambda e: e['inode'])
        eb = sorted(b.get(d, []), key=lambda e: e['inode'])
        if [[e[k] for k in SHAPE] for e in ea] != \
           [[e[k] for k in SHAPE] for e in eb]:
            bad.append('directory %d: entries differ beyond names' % d)
            continue
        # hard links: one inode under several names in a directory
        # pair the names by inode (by length among hard links)
        ga, gb, pairs = {}, {}, []
        for e in ea:
            ga.setdefault(e['inode'], []).append(e['name'])
        for e in eb:
            gb.setdefault(e['inode'], []).append(e['name'])
        for i in ga:
            x = sorted(ga[i], key=blen)
            y = sorted(gb.get(i, []), key=blen)
            if [blen(n) for n in x] != [blen(n) for n in y]:
                bad.append('inode %d: names %r -> %r' % (i, x, y))
            elif len(set(blen(n) for n in x)) == len(x):
                pairs += zip(x, y)
        for x, y in pairs:
            names += 1
            if '/' in y or '\0' in y or y in ('.', '..'):
                bad.append('%r -> %r: not a valid name' % (x, y))
            if x == y and x != 'lost+found':
                same += 1
            if fwd.setdefault(x, y) != y:
                bad.append('%r scrambled as %r and %r' % (x, fwd[x], y))
            if back.setdefault(y, x) != x:
                bad.append('%r and %r both scrambled as %r' % (back[y], x, y))
        if len(set(e['name'] for e in eb)) != len(eb):
            bad.append('directory %d: two entries with one name' % d)
    if same:
        bad.append('%d of %d names unchanged' % (same, names))
    if fwd.get('lost+found', 'lost+found') != 'lost+found':
        bad.append('lost+found scrambled')
    for ino, t in ta.items():
        u = tb.get(ino)
        if u is None or len(u) != len(t):
            bad.append('symlink %d: %r -> %r' % (ino, t, u))
            continue
        for x, y in zip(t.split('/'), u.split('/')):
            want = x if x in ('', '.', '..') else fwd.get(x)
            if want is not None and y != want:
                bad.append('symlink %d: component %r -> %r, the name map '
                           'says %r' % (ino, x, y, want))
            if want is None and x == y and len(x) > 3:
                bad.append('symlink %d: component %r kept' % (ino, x))
    # a target naming something of the volume names the same inode after
    resolved = 0
    for d, es in a.items():
        for e in es:
            if e['type'] != 'l' or e['inode'] not in tb:
                continue
            want = resolve(a, d, ta[e['inode']])
            if want is None:
                continue
            got = resolve(b, d, tb[e['inode']])
            if got != want:
                bad.append('symlink %d: %r resolves to %r, %r to %r' %
                           (e['inode'], ta[e['inode']], want,
                            tb[e['inode']], got))
            resolved += 1
    for x in sys.argv[5:]:
        if x.startswith('links='):
            if resolved < int(x[6:]):
                bad.append('only %d symlinks resolve' % resolved)
        elif x not in fwd:
            bad.append('%r not in the volume' % x)
    print('%d names, %d unchanged, %d symlinks, %d resolved' %
          (names, same, len(ta), resolved))
    for m in bad[:10]:
        print(m)
    return not bad

if sys.argv[2] == 'list':
    print('\n'.join(lines(sys.argv[3])))
elif sys.argv[2] == 'shape':
    sys.exit(0 if shape(sys.argv[3], sys.argv[4]) else 1)
EOF
lst() { python3 "$work/list.py" "$dbg" list "$1"; }

# ---- a made tree: symlinks, one name in several directories, lost+found,
# more one-letter names than letters and digits, a hole, a big directory
cat > "$work/mktree.py" <<'EOF'
import os, random, sys
src = sys.argv[1]
rnd = random.Random(7)
def mk(p, data=b''):
    with open(p, 'wb') as f:
        f.write(data)
for d in ('d1', 'd2/sub', 'lost+found', 'one', 'big', 'x/y/z'):
    os.makedirs(src + '/' + d)
for d in ('d1', 'd2', 'd2/sub'):
    mk(src + '/' + d + '/same.h', b'same name, other directory\n')
    mk(src + '/' + d + '/common', rnd.randbytes(5000))
mk(src + '/x/y/z/deep', rnd.randbytes(70000))
with open(src + '/sparse', 'wb') as f:
    f.write(b'head')
    f.seek(1 << 20)
    f.write(b'tail')
one = [chr(c) for c in range(33, 127) if chr(c) not in './']
for c in one[:70]:                          # 62 letters and digits, and more
    mk(src + '/one/' + c)
for i in range(600):
    mk(src + '/big/entry-%04d-%s' % (i, 'n' * (i % 40)), b'%d\n' % i)
os.symlink('../d1/same.h', src + '/d2/rel')
os.symlink('/d2/sub/common', src + '/d1/abs')
os.symlink('./same.h', src + '/d1/dot')
os.symlink('nowhere/at/all', src + '/d1/dangling')
os.symlink('x/' * 40 + 'y', src + '/long')
os.link(src + '/d1/same.h', src + '/d2/sub/hard')
EOF
python3 "$work/mktree.py" "$work/tree" || { fail all "cannot make the tree"; exit 1; }

# ---- the volumes
vols=""
if "$mkfs" -q "$work/empty.img" 64m; then
	vols="$vols empty"
else
	fail empty/mkfs
fi
case $build in
*asan*) inc=/usr/include/linux ;;
*) inc=/usr/include ;;
esac
if [ -d "$inc" ]; then
	if "$mkfs" -q -d "$inc" "$work/include.img" 512m 2>"$work/err"; then
		vols="$vols include"
	else
		fail include/mkfs "$(head -1 "$work/err")"
	fi
else
	skip include "$inc absent"
fi
# the made tree, unified, then edited: the live log builds on stale bnodes
cat > "$work/edit.cmd" <<EOF
unify
mkdir /late
write $work/tree/x/y/z/deep /late/deep
ln -s ../d1/same.h /late/same.h
mv /d1/common /late/common
rm /d2/common
delta
mkdir /late/more
write $work/tree/d1/same.h /late/more/same.h
EOF
if "$mkfs" -q -b 1024 -d "$work/tree" "$work/made.img" 64m 2>"$work/err" &&
   "$dbg" -w -f "$work/edit.cmd" "$work/made.img" >"$work/err" 2>&1; then
	vols="$vols made"
else
	fail made/mkfs "$(head -1 "$work/err")"
fi
# only tux3debug -w commands after mkfs: nothing but the log
cat > "$work/log.cmd" <<EOF
mkdir /a
mkdir /a/b
write $work/tree/d1/same.h /a/same.h
write $work/tree/x/y/z/deep /a/b/deep
ln -s /a/same.h /link
mkdir /lost+found
setxattr /a/same.h user.k value
EOF
if "$mkfs" -q -b 512 "$work/log.img" 16m &&
   "$dbg" -w -f "$work/log.cmd" "$work/log.img" >"$work/err" 2>&1; then
	vols="$vols log"
else
	fail log/mkfs "$(head -1 "$work/err")"
fi
# chain: snapshots of a file whose xattrs change between them, at 512-byte
# blocks: its older versions' attributes in an attribute chain (format.md
# 17.3b), which the image must carry as metadata (fsck of the restored
# volume finds a chain that does not read otherwise)
v120=$(printf '%0120d' 0)
{
	echo "write $work/tree/d1/same.h /f"
	for i in 1 2 3 4 5; do
		echo "snapshot create s$i"
		echo "setxattr /f user.a $i${v120#?}"
		echo "setxattr /f user.b $i${v120#?}"
	done
} > "$work/chain.cmd"
if "$mkfs" -q -b 512 "$work/chain.img" 16m &&
   "$dbg" -w -f "$work/chain.cmd" "$work/chain.img" >"$work/err" 2>&1 &&
   "$dbg" -R "extents /f" "$work/chain.img" 2>&1 |
	grep -q 'attributes past the leaf'; then
	vols="$vols chain"
else
	fail chain/mkfs "no attribute chain: $(head -1 "$work/err")"
fi
if [ -n "${TUX3_ORACLE_DIR:-}" ]; then
	for f in "$TUX3_ORACLE_DIR"/*.img; do
		[ -e "$f" ] || continue
		n=oracle-$(basename "$f" .img)
		ln -s "$f" "$work/$n.img"
		vols="$vols $n"
	done
else
	skip oracle "TUX3_ORACLE_DIR not set"
fi

# a run of tux3image that must not have crashed: 0 or 1 only
ran_ok() { [ "$1" -eq 0 ] || [ "$1" -eq 1 ]; }

for v in $vols; do
	img=$work/$v.img
	# bit-identical after imaging: a CRC is enough for a write by
	# mistake, and reads a sparse volume of up to 256 MiB faster
	sum=$(cksum < "$img")
	"$fsck" -fn "$img" >/dev/null 2>&1
	want_fsck=$?
	lst "$img" > "$work/$v.list" 2>"$work/err" ||
		{ fail "$v/list" "$(tail -1 "$work/err")"; continue; }
	want_rc=0
	case $v in oracle-corrupt-*) want_rc=1 ;; esac

	# compact, restored
	"$tool" "$img" "$work/$v.t3i" 2>"$work/err"
	rc=$?
	r=$work/$v.restored
	if ! ran_ok $rc; then
		fail "$v/compact" "exit $rc: $(head -1 "$work/err")"
	elif ! "$tool" -R "$work/$v.t3i" "$r" 2>"$work/err"; then
		fail "$v/compact" "-R: $(head -1 "$work/err")"
	else
		"$fsck" -fn "$r" >"$work/fsck.out" 2>&1
		got=$?
		if [ $got -ne $want_fsck ]; then
			fail "$v/compact" "fsck -fn exits $got, $want_fsck on the source: $(grep -v '^Pass' "$work/fsck.out" | head -1)"
		elif ! lst "$r" | cmp -s - "$work/$v.list"; then
			fail "$v/compact" "the listing differs"
		elif [ $rc -ne 0 ] && [ $want_rc -eq 0 ]; then
			fail "$v/compact" "exit $rc: $(head -1 "$work/err")"
		else
			pass "$v/compact"
		fi
	fi

	# raw
	raw=$work/$v.raw
	"$tool" -r "$img" "$raw" 2>"$work/err"
	rc=$?
	size=$(stat -L -c %s "$img")
	if ! ran_ok $rc; then
		fail "$v/raw" "exit $rc: $(head -1 "$work/err")"
	elif ! "$fsck" -fn "$raw" >/dev/null 2>&1 && [ $want_fsck -eq 0 ]; then
		fail "$v/raw" "fsck -fn fails on the raw image"
	elif ! lst "$raw" | cmp -s - "$work/$v.list"; then
		fail "$v/raw" "the listing differs"
	elif [ "$(stat -c %s "$raw")" -ne "$size" ]; then
		fail "$v/raw" "$(stat -c %s "$raw") bytes, the volume $size"
	elif [ $(($(stat -c %b "$raw") * 512)) -gt \
	       $(($(stat -L -c %b "$img") * 512 + 65536)) ]; then
		fail "$v/raw" "more space allocated than the volume's"
	else
		pass "$v/raw"
	fi
	rm -f "$raw"

	# -a: the data too
	"$dbg" -R 'manifest /' "$img" > "$work/m1" 2>/dev/null
	if "$tool" -a "$img" "$work/a.t3i" 2>"$work/err" || ran_ok $?; then
		rm -f "$work/a.img"
		if ! "$tool" -R "$work/a.t3i" "$work/a.img" 2>"$work/err"; then
			fail "$v/data" "-R: $(head -1 "$work/err")"
		elif ! "$dbg" -R 'manifest /' "$work/a.img" 2>/dev/null |
		     cmp -s - "$work/m1"; then
			fail "$v/data" "the manifest (sha256 of every file) differs"
		else
			pass "$v/data"
		fi
	else
		fail "$v/data" "$(head -1 "$work/err")"
	fi
	rm -f "$work/a.t3i" "$work/a.img"

	# without -a: the biggest regular file reads as zeros, at its size
	big=$(awk -F'\t' '$2 == "f" && $6 > max { max = $6; p = $1 }
			   END { print p }' "$work/m1")
	if [ -n "$big" ] && [ -e "$r" ]; then
		n1=$("$dbg" -R "cat $big" "$r" 2>/dev/null | wc -c)
		nz=$("$dbg" -R "cat $big" "$r" 2>/dev/null | tr -d '\0' | wc -c)
		n0=$("$dbg" -R "cat $big" "$img" 2>/dev/null | wc -c)
		if [ "$n1" -ne "$n0" ] || [ "$nz" -ne 0 ]; then
			fail "$v/nodata" "$big: $n1 bytes ($nz not zero), $n0 on the source"
		else
			pass "$v/nodata"
		fi
	fi
	rm -f "$r"

	# -s
	s=$work/$v.s
	"$tool" -s "$img" "$work/s.t3i" 2>"$work/err"
	rc=$?
	rm -f "$s"
	extra=""
	[ "$v" = made ] && extra="same.h lost+found links=4"
	if ! ran_ok $rc; then
		fail "$v/scramble" "exit $rc: $(head -1 "$work/err")"
	elif ! "$tool" -R "$work/s.t3i" "$s" 2>"$work/err"; then
		fail "$v/scramble" "-R: $(head -1 "$work/err")"
	elif ! "$fsck" -fn "$s" >/dev/null 2>&1 && [ $want_fsck -eq 0 ]; then
		fail "$v/scramble" "fsck -fn fails"
	elif ! python3 "$work/list.py" "$dbg" shape "$img" "$s" $extra \
	       >"$work/shape" 2>&1; then
		fail "$v/scramble" "$(sed -n 2p "$work/shape")"
	else
		pass "$v/scramble"
	fi
	rm -f "$s" "$work/s.t3i"

	if [ "$(cksum < "$img")" = "$sum" ]; then
		pass "$v/source"
	else
		fail "$v/source" "the volume changed"
	fi
	[ "$v" = made ] || [ "$v" = include ] || rm -f "$work/$v.t3i"
done

# ---- a damaged compact image is refused, and the target untouched
if [ -e "$work/made.t3i" ]; then
	good=$work/made.t3i
	bad=$work/bad.t3i
	flip() {	# FILE OFFSET
		b=$(dd if="$1" bs=1 skip="$2" count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
		printf "$(printf '\\%03o' $((b ^ 0x55)))" |
			dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
	}
	refused() {	# NAME WANT-OFFSET
		rm -f "$work/target"
		"$tool" -R "$bad" "$work/target" 2>"$work/err"
		rc=$?
		if [ $rc -ne 8 ]; then
			fail "damaged/$1" "exit $rc"
		elif [ -e "$work/target" ]; then
			fail "damaged/$1" "the target was created"
		elif ! grep -q "at byte $2:" "$work/err"; then
			fail "damaged/$1" "no offset $2 in: $(head -1 "$work/err")"
		else
			# an existing target is left as it was
			printf 'keep me' > "$work/target"
			"$tool" -R "$bad" "$work/target" 2>/dev/null
			if [ "$(cat "$work/target")" = "keep me" ]; then
				pass "damaged/$1"
			else
				fail "damaged/$1" "an existing target was changed"
			fi
		fi
	}
	cp "$good" "$bad"; flip "$bad" 20; refused header-flags 124
	cp "$good" "$bad"; flip "$bad" 0; refused header-magic 0
	# the first run's payload (a data run: the superblock area)
	# the first data run's payload: named by the offset where it starts
	pay=$(python3 -c '
import struct, sys
f = open(sys.argv[1], "rb").read()
pos = 128
while pos < len(f):
    flags, = struct.unpack(">I", f[pos + 4:pos + 8])
    count, = struct.unpack(">I", f[pos + 16:pos + 20])
    if not flags & 1:
        print(pos + 32)
        break
    pos += 32' "$good")
	cp "$good" "$bad"; flip "$bad" $((pay + 100)); refused payload "$pay"
	cp "$good" "$bad"; flip "$bad" $((128 + 8)); refused run-header 156
	size=$(stat -c %s "$good")
	cp "$good" "$bad"; truncate -s $((size - 100)) "$bad"
	refused truncated $((size - 100))
	cp "$good" "$bad"; truncate -s 100 "$bad"; refused truncated-header 100
	# an intact image restores onto an existing, larger file
	dd if=/dev/urandom of="$work/target" bs=1k count=80000 2>/dev/null
	if "$tool" -R "$good" "$work/target" 2>"$work/err" &&
	   "$fsck" -fn "$work/target" >/dev/null 2>&1; then
		pass damaged/over-garbage
	else
		fail damaged/over-garbage "$(head -1 "$work/err")"
	fi
	rm -f "$work/target" "$bad"
fi

# ---- a corrupt volume: random bytes over tree blocks
if [ -e "$work/made.img" ]; then
	c=$work/corrupt.img
	for what in dir leaf log; do
		cp "$work/made.img" "$c"
		if [ $what = log ]; then
			# the newest log block: no replay, the on-disk trees
			blk=$("$dbg" -R super "$c" | awk '$1 == "logchain" { print $2 }')
		elif [ $what = dir ]; then
			blk=$("$dbg" -R 'bmap /d2 0' "$c" 2>/dev/null |
			      awk '{ print $NF }')
		else
			blk=$("$dbg" -R 'find_magic ileaf' "$c" 2>/dev/null |
			      awk 'NR == 2 { print $1 }')
		fi
		bs=$("$dbg" -R super "$c" | sed -n 's/^blockbits.*size \([0-9]*\)).*/\1/p')
		if [ -z "$blk" ] || [ -z "$bs" ]; then
			fail "corrupt/$what" "no block to corrupt"
			continue
		fi
		head -c "$bs" /dev/urandom |
			dd of="$c" bs="$bs" seek="$blk" conv=notrunc 2>/dev/null
		sum=$(sha256sum < "$c")
		"$tool" "$c" "$work/c.t3i" >/dev/null 2>"$work/err"
		rc=$?
		rm -f "$work/c.img"
		if [ $rc -ne 1 ]; then
			fail "corrupt/$what" "exit $rc (want 1): $(tail -1 "$work/err")"
		elif ! "$tool" -R "$work/c.t3i" "$work/c.img" 2>"$work/err"; then
			fail "corrupt/$what" "-R: $(head -1 "$work/err")"
		elif ! cmp -s "$work/c.img" "$c" 2>/dev/null &&
		     [ "$(dd if="$work/c.img" bs="$bs" skip="$blk" count=1 2>/dev/null | sha256sum)" != \
		       "$(dd if="$c" bs="$bs" skip="$blk" count=1 2>/dev/null | sha256sum)" ]; then
			fail "corrupt/$what" "the damaged block $blk is not in the image"
		elif [ "$(sha256sum < "$c")" != "$sum" ]; then
			fail "corrupt/$what" "the volume changed"
		elif "$fsck" -fn "$c" >/dev/null 2>&1; [ $? -ne "$("$fsck" -fn "$work/c.img" >/dev/null 2>&1; echo $?)" ]; then
			fail "corrupt/$what" "fsck -fn exits differently on the restored image"
		else
			pass "corrupt/$what"
		fi
	done
	rm -f "$c" "$work/c.t3i" "$work/c.img"
fi

# ---- usage and operational errors: exit 8
u() {	# NAME ARGS...
	name=$1
	shift
	"$tool" "$@" >/dev/null 2>&1
	rc=$?
	if [ $rc -eq 8 ]; then
		pass "usage/$name"
	else
		fail "usage/$name" "exit $rc"
	fi
}
: > "$work/zero.img"
truncate -s 1m "$work/zero.img"
u none
u one "$work/empty.img"
u three "$work/empty.img" "$work/x" "$work/y"
u option -x "$work/empty.img" "$work/x"
u restore-scramble -R -s "$work/x" "$work/y"
u missing "$work/nonexistent.img" "$work/x"
u not-tux3 "$work/zero.img" "$work/x"
u same-file "$work/empty.img" "$work/empty.img"
u restore-missing -R "$work/nonexistent.t3i" "$work/y"
u restore-not-image -R "$work/zero.img" "$work/y"
u output-dir "$work/empty.img" "$work"
if "$fsck" -fn "$work/empty.img" >/dev/null 2>&1; then
	pass usage/same-file-intact
else
	fail usage/same-file-intact "the volume was damaged"
fi
exit 0
