#!/bin/sh
# Mutations of a volume with versions: random bits flipped in its vleaf,
# its version table (inode 3's data), its inode table and superblock.
# fsck.tux3 -n and -y, tux3dot, and tux3debug's versions, extents and cat
# must never end by a signal, hang or leave a sanitizer report; after -y,
# a second -n exits 0 unless -y said it could not repair (exit 4).
#   sh tests/scripts/versions_mutate.sh BUILD   (VERSIONS_MUTATIONS=N, 30)
set -u
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
. "$(dirname "$0")/lib/time_limit.sh"
hang_limit=$(time_limit 30)	# a hang, not a slow run
T=versions_mutate
mkv=$build/tests/mkvtable
if [ ! -x "$mkv" ] || ! command -v python3 >/dev/null 2>&1; then
	skip all "$mkv or python3 missing"; exit 0
fi
n=${VERSIONS_MUTATIONS:-30}
scratch_dir
"$build/mkfs.tux3" -q -b 1024 "$work/base.img" 4m &&
	"$mkv" "$work/base.img" vfile || { fail setup "mkvtable"; exit 0; }

bad_end() {	# STATUS ERRFILE -> reason or empty
	if [ "$1" -eq 124 ]; then echo "hang"; return; fi
	if [ "$1" -ge 128 ]; then echo "signal $(($1 - 128))"; return; fi
	if grep -q "Sanitizer\|runtime error" "$2"; then echo "sanitizer report"; fi
}

# run NAME COMMAND...: fails the case on a signal, hang or sanitizer
run() {
	name=$1; shift
	timeout "$hang_limit" "$@" > "$work/out" 2> "$work/err"
	st=$?
	why=$(bad_end $st "$work/err")
	[ -z "$why" ] && return 0
	fail "$seed/$name" "$why (exit $st)"
	return 1
}

seed=1
detected=0
while [ "$seed" -le "$n" ]; do
	img=$work/m.img
	cp --sparse=always "$work/base.img" "$img"
	python3 - "$img" "$seed" <<'PY'
import random, sys
path, seed = sys.argv[1], int(sys.argv[2])
r = random.Random(seed)
bs = 1024
with open(path, 'r+b') as f:
    data = f.read()
    meta = [b for b in range(8, len(data) // bs)
            if data[b * bs:b * bs + 2] in (b'\xbe\x7a', b'\x90\xde')
            or data[b * bs:b * bs + 4] == b'T3VT']
    for _ in range(r.randint(1, 3)):
        if meta and r.random() < 0.85:
            blk = r.choice(meta)
            off = blk * bs + r.randint(0, 95 if r.random() < 0.8 else bs - 1)
        else:
            off = 4096 + r.choice([r.randint(0, 7), 512 + r.randint(0, 31)])
        f.seek(off)
        b = f.read(1)
        f.seek(off)
        f.write(bytes([b[0] ^ (1 << r.randint(0, 7))]))
PY
	ok=1
	run dot "$build/tux3dot" "$img" || ok=0
	run versions "$build/tux3debug" -R versions "$img" || ok=0
	run extents "$build/tux3debug" -R "extents /versioned" "$img" || ok=0
	run cat "$build/tux3debug" -R "cat /versioned" "$img" || ok=0
	run fsck-n "$build/fsck.tux3" -fn "$img" || ok=0
	[ $st -ne 0 ] && detected=$((detected + 1))
	run fsck-y "$build/fsck.tux3" -fy "$img" || ok=0
	sty=$st
	run fsck-n2 "$build/fsck.tux3" -fn "$img" || ok=0
	if [ $ok = 1 ] && [ $st -ne 0 ] && [ $sty -ne 4 ] && [ $sty -ne 8 ]; then
		fail "$seed/second" "-y exited $sty, then -n exited $st: $(grep -m1 '(' "$work/out")"
	elif [ $ok = 1 ]; then
		pass "$seed"
	fi
	seed=$((seed + 1))
done
echo "# versions_mutate: $detected of $n mutations were detected by fsck -n ($build)"
