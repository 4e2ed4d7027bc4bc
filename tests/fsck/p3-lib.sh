# Setup shared by the corrupt scripts of tests/fsck/p3-*/ (sourced).
# p3_volume TUX3DEBUG IMAGE BUILDDIR: remake IMAGE as a 512-byte-block
# volume with a three-level inode table: /a with 115 files (inodes 64 to
# 179), then /b with 84 files (inodes 180 to 264).  The root's last entry
# (key 180) leads to an index node over /b alone, so cutting anything
# under it loses files of /b only, and never the volume's own inodes.
# Sets P3_ROOT (the root bnode) and P3_NODE (that index node).
p3_volume() {
	"$3/mkfs.tux3" -q -F -b 512 -U 00000000-0000-0000-0000-000000000001 \
		"$2" 4M || return 1
	{
		echo "mkdir /a"
		_i=1
		while [ $_i -le 115 ]; do echo "touch /a/f$_i"; _i=$((_i + 1)); done
		echo "mkdir /b"
		_i=1
		while [ $_i -le 84 ]; do echo "touch /b/g$_i"; _i=$((_i + 1)); done
		echo unify
	} | "$1" -w -f - "$2" > /dev/null || return 1
	P3_ROOT=$("$1" -R super "$2" |
		sed -n 's/^iroot .*depth 3, block \([0-9]*\)).*/\1/p')
	[ -n "$P3_ROOT" ] || return 1
	P3_NODE=$(p3_child "$1" "$2" "$P3_ROOT" 2)
	[ -n "$P3_NODE" ]
}

# p3_child TUX3DEBUG IMAGE BNODE I: the child of entry I (block dump)
p3_child() {
	"$1" -R "block $3" "$2" |
		sed -n "s/^  [0-9a-f]*  entry\[$4\] *key [0-9]* -> child \([0-9]*\)$/\1/p"
}

# p3_key TUX3DEBUG IMAGE BNODE I: the key of entry I
p3_key() {
	"$1" -R "block $3" "$2" |
		sed -n "s/^  [0-9a-f]*  entry\[$4\] *key \([0-9]*\) -> .*/\1/p"
}

# p3_entry_offset I: byte offset of bnode entry I (be64 key, be64 child)
p3_entry_offset() {
	echo $((8 + 16 * $1))
}
