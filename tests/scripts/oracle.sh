#!/bin/sh
# Oracle volume checks for tux3debug:   sh tests/scripts/oracle.sh BUILD
#   manifest/NAME     `manifest /` equals NAME.manifest.tsv byte for byte
#   rdump/NAME        `rdump / DIR`, then a manifest of the host tree
#                     (python3) equals the oracle's, except the sizes of
#                     directories and symlinks; rows the host refused
#                     (rdump warnings) are SKIP lines, not failures
#   readonly/NAME/CMD each read-only command leaves a writable copy of the
#                     image unchanged (fingerprint of size, mtime and every
#                     data extent after each command)
#   sha256/NAME       sha256 of the copy before and after all commands
#                     equals the info file's image sha256
#   orphan/...        the orphan image's log shows the ORPHAN_ADD and the
#                     manifest leaves the orphan out
#   noreplay/NAME     `tux3debug -c` opens the image and `super` works
# Needs TUX3_ORACLE_DIR (decompressed images) and TUX3_ORACLE_SRC (the
# manifests and info files); prints SKIP lines without them.
set -u
T=oracle
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
dbg=$build/tux3debug

if [ -z "${TUX3_ORACLE_DIR:-}" ] || [ -z "${TUX3_ORACLE_SRC:-}" ]; then
	echo "SKIP oracle/all: TUX3_ORACLE_DIR or TUX3_ORACLE_SRC not set"
	exit 0
fi
if [ ! -x "$dbg" ]; then
	echo "FAIL oracle/all: $dbg not built"
	exit 1
fi
for tool in python3 sha256sum cmp; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "SKIP oracle/all: $tool not installed"
		exit 0
	fi
done

scratch_dir


# ---- helpers in python3 ----
cat > "$work/fp.py" <<'EOF'
# Fingerprint of an image: size, mtime and the sha256 of every data
# extent with its offset (holes read as zeros and are skipped, so this is
# fast on sparse images; a write anywhere changes it).
import hashlib, os, sys
p = sys.argv[1]
st = os.stat(p)
h = hashlib.sha256()
h.update(b'%d %d\n' % (st.st_size, st.st_mtime_ns))
fd = os.open(p, os.O_RDONLY)
pos = 0
while pos < st.st_size:
    try:
        d = os.lseek(fd, pos, os.SEEK_DATA)
    except OSError:
        break
    e = os.lseek(fd, d, os.SEEK_HOLE)
    h.update(b'@%d\n' % d)
    o = d
    while o < e:
        b = os.pread(fd, min(1 << 20, e - o), o)
        if not b:
            break
        h.update(b)
        o += len(b)
    pos = e
os.close(fd)
print(h.hexdigest())
EOF

cat > "$work/hostman.py" <<'EOF'
# Compare a host tree restored by rdump with an oracle manifest.
#   hostman.py TESTNAME HOSTDIR MANIFEST REFUSED
# REFUSED lists manifest paths the host refused (one a line): their rows
# are reported as SKIP lines.  Prints PASS/FAIL/SKIP lines.
import hashlib, os, stat, sys

name, root, manifest, refused_file = sys.argv[1:5]
refused = set()
with open(refused_file, encoding='utf-8', errors='surrogateescape') as f:
    for line in f:
        if line.strip('\n'):
            refused.add(line.rstrip('\n'))

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
    # labels a host security module adds by itself are not volume data
    names = sorted(n for n in names if n != 'security.selinux')
    out = []
    for n in names:
        v = os.getxattr(p, n, follow_symlinks=False)
        out.append(n + '=' + v.hex())
    return ','.join(out) if out else '-'

rows = {}
def visit(host, rel):
    st = os.lstat(host)
    m = st.st_mode
    t = tchar(m)
    if t == 'f':
        h = hashlib.sha256()
        with open(host, 'rb') as f:
            for b in iter(lambda: f.read(1 << 20), b''):
                h.update(b)
        extra = h.hexdigest()
    elif t == 'l':
        extra = os.readlink(host)
    elif t in 'cb':
        extra = '%d:%d' % (os.major(st.st_rdev), os.minor(st.st_rdev))
    else:
        extra = '-'
    rows[rel] = [rel, t, '%04o' % stat.S_IMODE(m), str(st.st_uid),
                 str(st.st_gid), str(st.st_size), str(st.st_nlink), extra,
                 xattrs(host)]
    if t == 'd':
        for n in os.listdir(host):
            visit(os.path.join(host, n), rel.rstrip('/') + '/' + n)

visit(root, '/')

want = {}
with open(manifest, encoding='utf-8', errors='surrogateescape') as f:
    for line in f:
        if line.startswith('#'):
            continue
        cols = line.rstrip('\n').split('\t')
        want[cols[0]] = cols

cols_names = ['path', 'type', 'mode', 'uid', 'gid', 'size', 'nlink',
              'sha256|target|rdev', 'xattrs']
bad = []
skipped = []
for path in sorted(set(want) | set(rows)):
    w, g = want.get(path), rows.get(path)
    if path in refused:
        skipped.append(path)
        continue
    if w is None:
        bad.append('%s: on the host, not in the manifest' % path)
        continue
    if g is None:
        bad.append('%s: missing on the host' % path)
        continue
    for i in range(1, 9):
        if i == 5 and w[1] in 'dl':
            continue        # host directory and symlink sizes differ
        if w[i] != g[i]:
            bad.append('%s: %s %s, expected %s' % (path, cols_names[i],
                                                   g[i][:80], w[i][:80]))
for path in skipped:
    print('SKIP oracle/rdump/%s%s: the host refused this row' % (name, path))
if bad:
    for b in bad[:20]:
        sys.stderr.write(b + '\n')
    print('FAIL oracle/rdump/%s: %d of %d rows differ (first: %s)'
          % (name, len(bad), len(want), bad[0]))
    sys.exit(1)
print('PASS oracle/rdump/%s' % name)
EOF

found=0
for img in "$TUX3_ORACLE_DIR"/*.img; do
	[ -e "$img" ] || continue
	name=$(basename "$img" .img)
	man="$TUX3_ORACLE_SRC/$name.manifest.tsv"
	info="$TUX3_ORACLE_SRC/$name.info.txt"
	if [ ! -e "$man" ] || [ ! -e "$info" ]; then
		echo "SKIP oracle/$name: no manifest or info file"
		continue
	fi
	found=1

	# (a) manifest, byte for byte
	if "$dbg" -R "manifest /" "$img" > "$work/$name.manifest" \
		2> "$work/$name.manifest.err" &&
	   cmp -s "$work/$name.manifest" "$man"; then
		pass "manifest/$name"
	else
		fail "manifest/$name" "$(cmp "$work/$name.manifest" "$man" 2>&1 |
			head -1) $(head -1 "$work/$name.manifest.err")"
	fi

	# a writable copy, so that a write would be possible
	copy="$work/$name.img"
	cp --sparse=always "$img" "$copy" && chmod u+w "$copy"
	want_sha=$(sed -n 's/^Image sha256 (uncompressed): *\([0-9a-f]*\).*/\1/p' "$info")
	before=$(sha256sum "$copy" | cut -d' ' -f1)
	if [ -n "$want_sha" ] && [ "$before" != "$want_sha" ]; then
		fail "sha256/$name" "copy differs from the info file before the test"
	fi

	# (c) every read-only command leaves the image unchanged; (b) rdump
	rdir="$work/$name.rdump"
	fp=$(python3 "$work/fp.py" "$copy")
	for cmd in super statfs log "manifest /" "ls -l /" "stat /" \
		   "xattrs /" "rdump / $rdir"; do
		tag=$(echo "$cmd" | cut -d' ' -f1)
		"$dbg" -R "$cmd" "$copy" > "$work/$name.$tag.out" \
			2> "$work/$name.$tag.err"
		rc=$?
		now=$(python3 "$work/fp.py" "$copy")
		if [ "$now" != "$fp" ]; then
			fail "readonly/$name/$tag" "image changed by '$cmd'"
			fp=$now
		elif [ $rc -ne 0 ] && [ "$tag" != rdump ]; then
			fail "readonly/$name/$tag" "exit $rc: $(head -1 "$work/$name.$tag.err")"
		else
			pass "readonly/$name/$tag"
		fi
	done

	# (b) rows the host refused: rdump warns "HOSTPATH: what: error"
	sed -n "s#^tux3debug: warning: $rdir\([^:]*\): .*#\1#p" \
		"$work/$name.rdump.err" | sed 's#^$#/#' | sort -u \
		> "$work/$name.refused"
	rdump_rc=$(grep -c . "$work/$name.refused")
	if [ ! -d "$rdir" ]; then
		fail "rdump/$name" "no tree restored: $(head -1 "$work/$name.rdump.err")"
	elif grep -v '^tux3debug: warning: ' "$work/$name.rdump.err" |
		grep -q . ; then
		fail "rdump/$name" "$(grep -v '^tux3debug: warning: ' \
			"$work/$name.rdump.err" | head -1)"
	else
		python3 "$work/hostman.py" "$name" "$rdir" "$man" \
			"$work/$name.refused" 2> "$work/$name.hostman.err"
		[ "$rdump_rc" -eq 0 ] ||
			echo "SKIP oracle/rdump-refused/$name: the host refused $rdump_rc rows"
	fi
	chmod -R u+rwx "$rdir" 2>/dev/null
	rm -rf "$rdir"

	# (e) without replay: opens, and super works
	if "$dbg" -c -R super "$copy" > "$work/$name.c.out" \
		2> "$work/$name.c.err" &&
	   grep -q '^magic  *7475783320140506' "$work/$name.c.out" &&
	   grep -q 'no replay' "$work/$name.c.out" &&
	   [ "$(python3 "$work/fp.py" "$copy")" = "$fp" ]; then
		pass "noreplay/$name"
	else
		fail "noreplay/$name" "$(head -1 "$work/$name.c.err")"
	fi

	after=$(sha256sum "$copy" | cut -d' ' -f1)
	if [ "$after" = "$before" ] && { [ -z "$want_sha" ] ||
					 [ "$after" = "$want_sha" ]; }; then
		pass "sha256/$name"
	else
		fail "sha256/$name" "before $before, after $after, info ${want_sha:-?}"
	fi

	# (d) the orphan image
	if [ "$name" = orphan ]; then
		if grep -q 'ORPHAN_ADD version 0, inum 65$' "$work/$name.log.out"
		then
			pass "orphan/log"
		else
			fail "orphan/log" "no 'ORPHAN_ADD version 0, inum 65' in log"
		fi
		if cmp -s "$work/$name.manifest" "$man" &&
		   ! grep -q victim "$work/$name.manifest" &&
		   [ "$(grep -vc '^#' "$work/$name.manifest")" -eq 2 ]; then
			pass "orphan/manifest"
		else
			fail "orphan/manifest" "the orphan is listed"
		fi
		if "$dbg" -R "stat <65>" "$img" 2>&1 | grep -q 'ORPHAN' &&
		   "$dbg" -R "stat <65>" "$img" 2>&1 | grep -q 'Links: 1' &&
		   ! grep -q '	65	' "$work/$name.manifest"; then
			pass "orphan/kept"
		else
			fail "orphan/kept" "inode 65 not readable as an orphan"
		fi
	fi
	rm -f "$copy"
done
[ $found -eq 1 ] || echo "SKIP oracle/all: no images in $TUX3_ORACLE_DIR"
exit 0
