#!/bin/sh
# fsck mutation test: random bytes flipped in the metadata area of a
# populated volume.  fsck.tux3 -n and -y must never end by a signal,
# hang, or leave a sanitizer report; after -y, a second -n exits 0 unless
# -y itself said it could not repair (exit 4).
#   sh tests/scripts/fsck_mutate.sh BUILD     (FSCK_MUTATIONS=N, default 60)
set -u
build=${1:-build}
. "$(dirname "$0")/lib/time_limit.sh"
hang_limit=$(time_limit 30)	# a hang, not a slow run
fsck=$build/fsck.tux3
mkfs=$build/mkfs.tux3
n=${FSCK_MUTATIONS:-60}
work=$(mktemp -d "${TUX3_SCRATCH:-/tmp}/fsck-mutate.XXXXXX") ||
	{ echo "FAIL fsck_mutate/scratch: cannot make a directory under ${TUX3_SCRATCH:-/tmp}"; exit 1; }
trap 'rm -rf "$work"' EXIT

# a small tree: files, a sparse file, a symlink, a hard link, xattrs
src="$work/src"
mkdir -p "$src/d1/d2" "$src/d3"
for i in 1 2 3 4 5 6 7 8; do
	head -c $((i * 3000)) /dev/urandom > "$src/d1/f$i"
	: > "$src/d3/empty$i"
done
ln -s d1/f1 "$src/link"
ln "$src/d1/f2" "$src/d2hard"
truncate -s 1M "$src/sparse"
if ! "$mkfs" -q -b 1024 -d "$src" "$work/base.img" 4m 2>"$work/err"; then
	echo "FAIL fsck_mutate/setup: $(head -c 200 "$work/err")"
	exit 0
fi

bad_end() {	# STATUS ERRFILE -> reason or empty
	if [ "$1" -eq 124 ]; then echo "hang"; return; fi
	if [ "$1" -ge 128 ]; then echo "signal $(($1 - 128))"; return; fi
	if grep -q "Sanitizer\|runtime error" "$2"; then echo "sanitizer report"; fi
}

seed=1
detected=0
while [ "$seed" -le "$n" ]; do
	img="$work/m$seed.img"
	cp --sparse=always "$work/base.img" "$img"
	# flip 1..4 bits in metadata: the superblock fields, or blocks that
	# carry a metadata magic (bnode, ileaf, oleaf, dleaf, log)
	python3 - "$img" "$seed" <<'PY'
import random, sys
path, seed = sys.argv[1], int(sys.argv[2])
r = random.Random(seed)
bs = 1024
magics = {b'\xb4\xde', b'\x90\xde', b'\x6e\xaf', b'\xbe\xaf', b'\x10\xad'}
with open(path, 'r+b') as f:
    data = f.read()
    meta = [b for b in range(8, len(data) // bs)
            if data[b * bs:b * bs + 2] in magics]
    for _ in range(r.randint(1, 4)):
        if meta and r.random() < 0.9:
            blk = r.choice(meta)
            off = blk * bs + r.randint(0, 63 if r.random() < 0.7 else bs - 1)
        else:
            off = 4096 + r.randint(0, 99)
        f.seek(off)
        b = f.read(1)
        f.seek(off)
        f.write(bytes([b[0] ^ (1 << r.randint(0, 7))]))
PY
	name="fsck_mutate/$seed"
	timeout "$hang_limit" "$fsck" -fn "$img" > "$work/out" 2> "$work/err"
	st=$?
	why=$(bad_end $st "$work/err")
	if [ -n "$why" ]; then
		echo "FAIL $name/n: $why (exit $st)"
		seed=$((seed + 1)); continue
	fi
	timeout "$hang_limit" "$fsck" -fy "$img" > "$work/out" 2> "$work/err"
	sty=$?
	why=$(bad_end $sty "$work/err")
	if [ -n "$why" ]; then
		echo "FAIL $name/y: $why (exit $sty)"
		seed=$((seed + 1)); continue
	fi
	timeout "$hang_limit" "$fsck" -fn "$img" > "$work/out2" 2> "$work/err"
	st2=$?
	why=$(bad_end $st2 "$work/err")
	if [ -n "$why" ]; then
		echo "FAIL $name/second: $why (exit $st2)"
	elif [ $st2 -ne 0 ] && [ $sty -ne 4 ] && [ $sty -ne 8 ]; then
		echo "FAIL $name/second: -y exited $sty, then -n exited $st2: $(grep -m1 '(' "$work/out2")"
	else
		echo "PASS $name"
		[ $st -ne 0 ] && detected=$((detected + 1))
	fi
	rm -f "$img"
	seed=$((seed + 1))
done
echo "# fsck_mutate: $detected of $n mutations were detected by fsck -n ($build)"
