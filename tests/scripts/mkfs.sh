#!/bin/sh
# mkfs.tux3 checks:   sh tests/scripts/mkfs.sh BUILD
#   mkfs/golden/NAME      `mkfs.tux3 -b N` at the oracle's size equals the
#                         oracle's empty-N image byte for byte, with the
#                         ileaf timestamps and our extension sector
#                         (superblock bytes 512..1023) masked in both
#   mkfs/manifest/NAME    tux3debug `manifest /` equals the oracle manifest
#   mkfs/freeblocks/NAME  tux3debug `super` freeblocks equals the oracle's
#   mkfs/reproducible     SOURCE_DATE_EPOCH + -U fixed: identical images
#   mkfs/identity         uuid, label and seal shown by tux3debug `super`
#   mkfs/64k              65536-byte blocks: made, warned, readable
#   mkfs/small, too-small smallest volumes per block size; one less refused
#   mkfs/dry-run          -n creates nothing and leaves a file unchanged
#   mkfs/ext4/...         an ext4 image is refused without -F and left
#                         unchanged; with -F blkid no longer finds ext4
#   mkfs/tux3-overwrite   an existing Tux3 volume needs -F
#   mkfs/usage/...        bad options exit 2
#   mkfs/root-owner       -E root_owner=UID:GID
# The golden tests need TUX3_ORACLE_DIR and TUX3_ORACLE_SRC (SKIP lines
# without them); the ext4 tests need mkfs.ext4 and blkid.
set -u
T=mkfs
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
mkfs=$build/mkfs.tux3
dbg=$build/tux3debug

if [ ! -x "$mkfs" ] || [ ! -x "$dbg" ]; then
	echo "FAIL mkfs/all: $mkfs or $dbg not built"
	exit 1
fi
if ! command -v python3 >/dev/null 2>&1 || ! command -v cmp >/dev/null 2>&1; then
	echo "SKIP mkfs/all: python3 or cmp not installed"
	exit 0
fi

scratch_dir
mkfs_abs=$(cd "$(dirname "$mkfs")" && pwd)/mkfs.tux3

check() {	# check NAME CONDITION-EXIT-STATUS [why]
	if [ "$2" -eq 0 ]; then pass "$1"; else fail "$1" "${3:-}"; fi
}

# Copy an image with the 8-byte ileaf timestamps (ctime and mtime of
# inodes 4 and 63, at leaf bytes 32, 56, 80, 104), our extension
# sector (bytes 4608..5119), the secondary superblock (1024..2559) and the
# log block's spare field (bytes 4..7 of the block at logchain: our log
# CRC) zeroed.  The ileaf is found through
# iroot.
cat > "$work/mask.py" <<'EOF'
import sys
src, dst = sys.argv[1], sys.argv[2]
d = bytearray(open(src, 'rb').read())
bits = int.from_bytes(d[4096 + 24:4096 + 26], 'big')
iroot = int.from_bytes(d[4096 + 40:4096 + 48], 'big') & ((1 << 48) - 1)
leaf = iroot << bits
for off in (32, 56, 80, 104):
    d[leaf + off:leaf + off + 8] = bytes(8)
d[4608:5120] = bytes(512)
d[1024:2560] = bytes(1536)
log = int.from_bytes(d[4096 + 88:4096 + 96], 'big') << bits
d[log + 4:log + 8] = bytes(4)
open(dst, 'wb').write(d)
EOF

export SOURCE_DATE_EPOCH=1700000000
FIXED=4f1c2a6e-0d3b-4c5a-9e8f-112233445566

# ---- golden comparison against the reference mkfs ----
if [ -z "${TUX3_ORACLE_DIR:-}" ] || [ -z "${TUX3_ORACLE_SRC:-}" ]; then
	echo "SKIP mkfs/golden: TUX3_ORACLE_DIR or TUX3_ORACLE_SRC not set"
else
	for spec in 512:16m:empty-512 1024:32m:empty-1k 4096:64m:empty-4k \
		    16384:256m:empty-16k; do
		bs=${spec%%:*}; rest=${spec#*:}; size=${rest%%:*}; name=${rest#*:}
		oracle=$TUX3_ORACLE_DIR/$name.img
		if [ ! -r "$oracle" ]; then
			echo "SKIP mkfs/golden/$name: $oracle absent"
			continue
		fi
		img=$work/$name.img
		if ! "$mkfs" -q -b "$bs" "$img" "$size" 2>"$work/err"; then
			fail "golden/$name" "mkfs failed: $(cat "$work/err")"
			continue
		fi
		python3 "$work/mask.py" "$img" "$work/a" &&
		python3 "$work/mask.py" "$oracle" "$work/b" &&
		cmp -s "$work/a" "$work/b"
		check "golden/$name" $? "differs from $oracle: $(cmp "$work/a" "$work/b" 2>&1 | head -1)"
		rm -f "$work/a" "$work/b"

		"$dbg" -R "manifest /" "$img" > "$work/man" 2>&1
		cmp -s "$work/man" "$TUX3_ORACLE_SRC/$name.manifest.tsv"
		check "manifest/$name" $? "$(head -3 "$work/man")"

		want=$(sed -n 's/.*freeblocks after log replay.*: \([0-9]*\)$/\1/p' \
			"$TUX3_ORACLE_SRC/$name.info.txt" | head -1)
		got=$("$dbg" -R super "$img" 2>&1 |
		      sed -n 's/^freeblocks *\([0-9]*\).*/\1/p')
		[ -n "$want" ] && [ "$got" = "$want" ]
		check "freeblocks/$name" $? "got '$got', oracle '$want'"
		rm -f "$img"
	done
fi

# ---- reproducibility and identity ----
"$mkfs" -q -U "$FIXED" -L repro "$work/r1.img" 32m &&
"$mkfs" -q -U "$FIXED" -L repro "$work/r2.img" 32m &&
cmp -s "$work/r1.img" "$work/r2.img"
check reproducible $? "two runs with SOURCE_DATE_EPOCH and -U differ"

out=$("$dbg" -R super "$work/r1.img" 2>&1)
echo "$out" | grep -q "^uuid *$FIXED" &&
echo "$out" | grep -q '^label *"repro"' &&
echo "$out" | grep -q '^seal *sealed' &&
echo "$out" | grep -q '(1700000000000000000 ns)'
check identity $? "$(echo "$out" | grep -E '^(uuid|label|seal|mkfs)')"
rm -f "$work/r1.img" "$work/r2.img"

# ---- 64 KiB blocks ----
if "$mkfs" -b 65536 "$work/k64.img" 64m >"$work/out" 2>"$work/err" &&
   grep -q "reference Tux3 code cannot use" "$work/err" &&
   "$dbg" -R super "$work/k64.img" 2>&1 | grep -q '^freeblocks *1021 ' &&
   "$dbg" -R "manifest /" "$work/k64.img" 2>&1 | grep -q "^/	d	0755	0	0	0	2	"; then
	pass 64k
else
	fail 64k "$(cat "$work/err")"
fi
rm -f "$work/k64.img"

# ---- smallest volumes: reserved + 2 blocks; one block less refused ----
for spec in 512:18 1024:10 4096:4 16384:3 65536:3; do
	bs=${spec%%:*}; n=${spec#*:}
	img=$work/small-$bs.img
	if "$mkfs" -q -b "$bs" "$img" $((bs * n)) 2>"$work/err" &&
	   "$dbg" -R "manifest /" "$img" >/dev/null 2>&1; then
		pass "small/$bs"
	else
		fail "small/$bs" "$(cat "$work/err")"
	fi
	rm -f "$img"
	"$mkfs" -q -b "$bs" "$img" $((bs * (n - 1))) 2>/dev/null
	rc=$?
	[ $rc -eq 1 ] && [ ! -e "$img" ]
	check "too-small/$bs" $? "exit $rc, image left: $(ls "$img" 2>&1)"
done

# ---- -n writes nothing ----
"$mkfs" -n -q "$work/dry.img" 8m
[ $? -eq 0 ] && [ ! -e "$work/dry.img" ]
check dry-run/create $? "-n created the image"
"$mkfs" -q "$work/dry.img" 8m && cp "$work/dry.img" "$work/dry.ref" &&
	"$mkfs" -n -b 1024 -F "$work/dry.img" >/dev/null 2>&1 &&
	cmp -s "$work/dry.img" "$work/dry.ref"
check dry-run/existing $? "-n changed an existing image"

# ---- an existing Tux3 volume needs -F ----
"$mkfs" -q "$work/dry.img" 2>/dev/null </dev/null
rc=$?
[ $rc -eq 1 ] && cmp -s "$work/dry.img" "$work/dry.ref"
check tux3-overwrite/refused $? "exit $rc"
"$mkfs" -q -F -b 1024 "$work/dry.img" &&
	"$dbg" -R super "$work/dry.img" 2>&1 | grep -q '^blockbits *10 '
check tux3-overwrite/forced $? "-F did not remake the volume"
rm -f "$work/dry.img" "$work/dry.ref"

# ---- an ext4 image ----
if ! command -v mkfs.ext4 >/dev/null 2>&1 || ! command -v blkid >/dev/null 2>&1; then
	echo "SKIP mkfs/ext4: mkfs.ext4 or blkid not installed"
else
	e=$work/ext4.img
	mkfs.ext4 -q -F "$e" 16m >/dev/null 2>&1
	cp "$e" "$work/ext4.ref"
	"$mkfs" -q "$e" </dev/null 2>"$work/err"
	rc=$?
	[ $rc -eq 1 ] && grep -q ext4 "$work/err" && cmp -s "$e" "$work/ext4.ref"
	check ext4/refused $? "exit $rc: $(cat "$work/err")"
	"$mkfs" -q -F -E nodiscard "$e" 2>"$work/err" &&
		! blkid -p "$e" 2>/dev/null | grep -q ext4 &&
		"$dbg" -R "manifest /" "$e" >/dev/null 2>&1
	check ext4/forced $? "$(blkid -p "$e" 2>&1) $(cat "$work/err")"
	rm -f "$e" "$work/ext4.ref"
fi

# ---- root owner ----
"$mkfs" -q -E root_owner=1000:100 "$work/own.img" 8m &&
	"$dbg" -R "manifest /" "$work/own.img" 2>&1 | grep -q "^/	d	0755	1000	100	"
check root-owner $?
rm -f "$work/own.img"

# ---- usage errors exit 2 ----
for args in "-b 1000 x 8m" "-b 131072 x 8m" "-O nosuch x 8m" "-E bogus x 8m" \
	    "-E root_owner=1 x 8m" "-U not-a-uuid x 8m" "-b +4096 x 8m" \
	    "-E root_owner=+1:0 x 8m" "-E root_owner=0:-0 x 8m" \
	    "-E threads=-1 x 8m" "-E threads=1x x 8m" \
	    "x 8q" "" "-L 01234567890123456789012345678901234567890123456789012345678901234 x 8m"; do
	# shellcheck disable=SC2086
	(cd "$work" && "$mkfs_abs" $args >/dev/null 2>&1)
	rc=$?
	tag=$(echo "${args:-noargs}" | cut -c1-24 | tr ' /' '__')
	[ $rc -eq 2 ] && [ ! -e "$work/x" ]
	check "usage/$tag" $? "exit $rc"
	rm -f "$work/x"
done
exit 0
