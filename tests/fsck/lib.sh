# Helpers for the corrupt scripts of tests/fsck/NAME/ (sourced):
# locate structures through tux3debug and the image, not fixed offsets.
# Images here have 4096-byte blocks.

# dir_block TUX3DEBUG IMAGE PATH|<inum> [LOGICAL]: the physical block
# holding a file's logical block (default 0)
dir_block() {
	"$1" -R "bmap $3 ${4:-0}" "$2"
}

# entry_offset IMAGE BLOCK NAME: byte offset in BLOCK of the directory
# record named NAME (the name follows the record's 12-byte header)
entry_offset() {
	dd if="$1" bs=4096 skip="$2" count=1 2>/dev/null |
		grep -obUa -- "$3" | head -1 | cut -d: -f1 |
		awk '{ print $1 - 12 }'
}

# vtable_edit TUX3DEBUG IMAGE crc|nocrc OFFSET=HEXBYTES...: bytes of the
# version table (inode 3) replaced, its CRC made good again with crc
vtable_edit() {
	_d=$1 _img=$2
	shift 2
	_b=$("$_d" -R "bmap <3> 0" "$_img") || return 1
	[ "$_b" -gt 0 ] || return 1
	python3 tests/fsck/vtable_edit.py "$_img" "$_b" "$@"
}

# drop_copy IMAGE: zero the secondary superblock (bytes 1024..2559,
# format.md 15.3), as on a volume made without sb_backup: pass 1 has no
# copy to restore the primary from
drop_copy() {
	dd if=/dev/zero of="$1" bs=512 seek=2 count=3 conv=notrunc 2>/dev/null
}
