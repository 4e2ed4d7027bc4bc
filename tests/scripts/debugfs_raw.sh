#!/bin/sh
# tux3debug raw inspection and editing (debugfs/raw.c) on a fresh volume
# made by mkfs.tux3 (4 KiB blocks: ileaf at block 63, log at block 64):
# 'block' decodes the ileaf and the log block, 'inode' the attributes;
# set_super, set_block (corruptions on purpose) make the next open or
# lookup fail naming the field or block; set_inode goes through the
# write path (stat changes, check stays clean); without -w every set_*
# is refused.  With oracle images: 'block' on small-delta's itree leaf.
#   sh tests/scripts/debugfs_raw.sh BUILD
set -u
build=${1:-build}
dbg=$build/tux3debug
mkfs=$build/mkfs.tux3
t=debugfs_raw

pass() { echo "PASS $t/$1"; }
fail() { echo "FAIL $t/$1: $2"; }
if [ ! -x "$dbg" ] || [ ! -x "$mkfs" ]; then
	echo "SKIP $t/all: $dbg or $mkfs not built"; exit 0
fi
work=$(mktemp -d "${TUX3_SCRATCH:-/tmp}/debugfs_raw.XXXXXX") ||
	{ echo "FAIL debugfs_raw/scratch: cannot make a directory under ${TUX3_SCRATCH:-/tmp}"; exit 1; }
trap 'rm -rf "$work"' EXIT INT TERM
export SOURCE_DATE_EPOCH=1700000000
first() { head -c 400 "$1" | tr '\n' ' '; }

img=$work/fresh.img
truncate -s 64M "$img"
if ! "$mkfs" "$img" > "$work/mkfs.out" 2>&1; then
	fail mkfs "$(first "$work/mkfs.out")"; exit 0
fi
copy() { cp --sparse=always "$img" "$work/copy.img"; }

# ---- block 63: the ileaf ----
if "$dbg" -R "block 63" "$img" > "$work/out" 2>&1 &&
   grep -q '^type: ileaf (magic 0x90de)' "$work/out" &&
   grep -q '^00000000: 90de 0040' "$work/out" &&
   grep -q 'count  *64' "$work/out" &&
   grep -q 'dict\[64\]  *inum 63 -> offset 64, 48 bytes' "$work/out"; then
	pass block_ileaf
else
	fail block_ileaf "$(first "$work/out")"
fi

# ---- block 64: the log block and its records ----
if "$dbg" -R "block 64" "$img" > "$work/out" 2>&1 &&
   grep -q '^type: log (magic 0x10ad)' "$work/out" &&
   grep -q 'bytes  *23' "$work/out" &&
   grep -q 'record\[0\]  *BALLOC count 2, block 0' "$work/out" &&
   grep -q 'record\[1\]  *DELTA' "$work/out" &&
   grep -q 'record\[2\]  *BALLOC count 1, block 63' "$work/out"; then
	pass block_log
else
	fail block_log "$(first "$work/out")"
fi

# ---- block 1: the superblock area, every field ----
if "$dbg" -R "block 1" "$img" > "$work/out" 2>&1 &&
   grep -q '^type: superblock' "$work/out" &&
   grep -q 'volblocks  *16384' "$work/out" &&
   grep -q 'pad26  *zero (6 bytes)' "$work/out" &&
   grep -q 'ext.magic  *0x54335831 (T3X1)' "$work/out" &&
   grep -q 'tail1024  *zero (3072 bytes)' "$work/out"; then
	pass block_super
else
	fail block_super "$(first "$work/out")"
fi

# out of range
if "$dbg" -R "block 16384" "$img" > "$work/out" 2>&1; then
	fail block_range "block 16384 accepted"
elif grep -q 'outside the volume' "$work/out"; then
	pass block_range
else
	fail block_range "$(first "$work/out")"
fi

# ---- inode 63 ----
if "$dbg" -R "inode 63" "$img" > "$work/out" 2>&1 &&
   grep -q '^inode 63: 48-byte attribute blob in ileaf block 63' "$work/out" &&
   grep -q '^attribute MODE_OWNER: kind 1, version 0, offset 0, 14 bytes' "$work/out" &&
   grep -q 'mode  *040755' "$work/out" &&
   grep -q 'nlink  *2' "$work/out"; then
	pass inode_root
else
	fail inode_root "$(first "$work/out")"
fi

# ---- without -w the set_* commands are refused ----
ok=1
for c in "set_super volblocks 1" "set_inode 63 mode 040700" \
	 "set_block 63 0 dead"; do
	copy
	if "$dbg" -R "$c" "$work/copy.img" > "$work/out" 2>&1 ||
	   ! grep -q 'read-only (use -w)' "$work/out" ||
	   ! cmp -s "$img" "$work/copy.img"; then
		ok=0; fail refused_readonly "$c: $(first "$work/out")"
	fi
done
[ $ok = 1 ] && pass refused_readonly

# ---- set_super: the next open fails naming the field's offset ----
copy
if ! "$dbg" -w -R "set_super volblocks 99999999" "$work/copy.img" \
	> "$work/out" 2>&1; then
	fail set_super "$(first "$work/out")"
elif ! grep -q 'superblock volblocks (byte 4128, 8 bytes) = 99999999' "$work/out"; then
	fail set_super "$(first "$work/out")"
elif "$dbg" -R "ls /" "$work/copy.img" > "$work/out" 2>&1; then
	fail set_super "the corrupted volume still opens"
elif grep -q 'offset 4128: superblock: volume has 99999999 blocks' "$work/out"; then
	pass set_super
else
	fail set_super "$(first "$work/out")"
fi

# range errors and unknown fields change nothing
copy
if "$dbg" -w -R "set_super blockbits 65536" "$work/copy.img" > "$work/out" 2>&1 ||
   ! grep -q 'blockbits: 65536 out of range 0..65535' "$work/out" ||
   "$dbg" -w -R "set_super nosuch 1" "$work/copy.img" > "$work/out2" 2>&1 ||
   ! grep -q "no superblock field 'nosuch'" "$work/out2" ||
   ! cmp -s "$img" "$work/copy.img"; then
	fail set_super_range "$(first "$work/out") $(first "$work/out2")"
else
	pass set_super_range
fi

# ---- set_block: a corrupt ileaf magic makes ls / fail naming block 63 ----
copy
if ! "$dbg" -w -R "set_block 63 0 dead" "$work/copy.img" > "$work/out" 2>&1 ||
   ! grep -q 'block 63: wrote 2 bytes' "$work/out"; then
	fail set_block "$(first "$work/out")"
elif "$dbg" -R "ls /" "$work/copy.img" > "$work/out" 2>&1; then
	fail set_block "ls / succeeded on a corrupt ileaf"
elif grep -q 'block 63: .*ileaf: bad magic 0xdead' "$work/out"; then
	pass set_block
else
	fail set_block "$(first "$work/out")"
fi
copy
if "$dbg" -w -R "set_block 63 4095 0102" "$work/copy.img" > "$work/out" 2>&1 ||
   ! grep -q 'run past the end' "$work/out" ||
   "$dbg" -w -R "set_block 63 0 abc" "$work/copy.img" > "$work/out2" 2>&1 ||
   ! cmp -s "$img" "$work/copy.img"; then
	fail set_block_range "$(first "$work/out") $(first "$work/out2")"
else
	pass set_block_range
fi

# ---- set_inode: a normal delta; stat shows it, check stays clean ----
copy
if ! "$dbg" -w -R "set_inode 63 mode 040700" "$work/copy.img" \
	> "$work/out" 2>&1; then
	fail set_inode "$(first "$work/out")"
elif ! "$dbg" -R "stat /" "$work/copy.img" > "$work/out" 2>&1 ||
     ! grep -q 'Mode: 0700 (drwx------)' "$work/out"; then
	fail set_inode "stat: $(first "$work/out")"
elif ! "$dbg" -R check "$work/copy.img" > "$work/out" 2>&1 ||
     ! grep -q '^0 problems' "$work/out"; then
	fail set_inode "check: $(first "$work/out")"
elif ! "$dbg" -R "inode 63" "$work/copy.img" > "$work/out" 2>&1 ||
     ! grep -q 'mode  *040700' "$work/out"; then
	fail set_inode "inode: $(first "$work/out")"
else
	pass set_inode
fi
# several in one batch, then errors
printf 'set_inode 63 uid 1000\nset_inode / gid 2000\nset_inode 63 nlink 2\n' \
	> "$work/script"
if "$dbg" -w -f "$work/script" "$work/copy.img" > "$work/out" 2>&1 &&
   "$dbg" -R "stat /" "$work/copy.img" > "$work/out" 2>&1 &&
   grep -q 'User: 1000   Group: 2000   Links: 2' "$work/out" &&
   "$dbg" -R check "$work/copy.img" > "$work/out" 2>&1; then
	pass set_inode_batch
else
	fail set_inode_batch "$(first "$work/out")"
fi
if "$dbg" -w -R "set_inode 63 uid 4294967296" "$work/copy.img" > "$work/out" 2>&1 ||
   ! grep -q 'uid: 4294967296 out of range' "$work/out" ||
   "$dbg" -w -R "set_inode 63 colour 1" "$work/copy.img" > "$work/out" 2>&1 ||
   ! grep -q "no inode field 'colour'" "$work/out"; then
	fail set_inode_errors "$(first "$work/out")"
else
	pass set_inode_errors
fi

# ---- help lists the raw group and warns about the corruption tools ----
if "$dbg" -R "help set_super" > "$work/out" 2>&1 &&
   grep -q 'CORRUPTION TOOL' "$work/out" &&
   grep -q 'not as a delta' "$work/out"; then
	pass help
else
	fail help "$(first "$work/out")"
fi

# ---- oracle: small-delta's itree leaf (block 65) and the atable dleaf ----
if [ -z "${TUX3_ORACLE_DIR:-}" ] || [ ! -e "$TUX3_ORACLE_DIR/small-delta.img" ]; then
	echo "SKIP $t/oracle_small_delta: oracle images absent (TUX3_ORACLE_DIR)"
else
	o=$TUX3_ORACLE_DIR/small-delta.img
	if "$dbg" -R "block 65" "$o" > "$work/out" 2>&1 &&
	   grep -q 'count  *66' "$work/out" &&
	   grep -q 'inum 65 -> offset' "$work/out" &&
	   "$dbg" -R "block 4" "$o" > "$work/out2" 2>&1 &&
	   grep -q '^type: dleaf' "$work/out2" &&
	   grep -q 'entry\[0\]  *logical 0 -> physical 66, version 0' "$work/out2" &&
	   grep -q 'entry\[2\]  *logical 268435456 -> physical 5' "$work/out2"; then
		pass oracle_small_delta
	else
		fail oracle_small_delta "$(first "$work/out") $(first "$work/out2")"
	fi
fi
