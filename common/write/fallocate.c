/*
 * fallocate(2) for regular files: preallocation and punching holes.
 *
 * The 2014 format has no unwritten extents, so preallocated blocks are
 * written with zeroes: what a hole read as, it still reads as, and a
 * later write into the range finds its blocks there.  Blocks past the
 * size would be a damaged inode to fsck (data reaching beyond the size),
 * so preallocation that keeps the size stops at the size's last block;
 * asking for more is EOPNOTSUPP.  Versioned inodes (snapshots) are not
 * served here: EOPNOTSUPP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "write/write.h"

/* Zeroes into every hole of blocks [first, last]. */
static int fill_holes(struct tux3_volume *vol, struct inode *inode,
		      uint64_t first, uint64_t last, const uint8_t *zero,
		      unsigned zero_blocks)
{
	unsigned bits = vol->blockbits;
	uint64_t b = first;
	while (b <= last) {
		uint64_t physical, run;
		int err = filemap_lookup(vol, inode, b, &physical, &run);
		if (err)
			return err;
		if (physical) {
			b += run ? run : 1;
			continue;
		}
		/* a hole: how far it reaches, up to one buffer */
		uint64_t n = 1;
		while (n < zero_blocks && b + n <= last) {
			if ((err = filemap_lookup(vol, inode, b + n,
						  &physical, &run)))
				return err;
			if (physical)
				break;
			n++;
		}
		err = inode_write_data(vol, inode, zero, (size_t)(n << bits),
				       b << bits, false);
		if (err)
			return err;
		b += n;
	}
	return 0;
}

/* The range's whole blocks unmapped, its partial blocks zeroed where
 * they hold data. */
static int punch_range(struct tux3_volume *vol, struct inode *inode,
		       uint64_t off, uint64_t end, const uint8_t *zero)
{
	unsigned bits = vol->blockbits, bs = vol->blocksize;
	uint64_t first = (off + bs - 1) >> bits, stop = end >> bits;
	int err = 0;
	if (first < stop)
		err = filemap_set(vol, inode, first, 0, stop - first);
	/* the edges: within one block, or the head and the tail */
	uint64_t edges[2][2] = {
		{ off, (first << bits) < end ? first << bits : end },
		{ stop << bits > off ? stop << bits : end, end },
	};
	for (int i = 0; i < 2 && !err; i++) {
		uint64_t a = edges[i][0], z = edges[i][1], physical, run;
		if (a >= z)
			continue;
		if ((err = filemap_lookup(vol, inode, a >> bits, &physical,
					  &run)) || !physical)
			continue;
		/* privileged, as truncate's tail: freeing must not fail
		 * for want of space (at most two blocks of the reserve) */
		err = inode_write_data(vol, inode, zero, (size_t)(z - a), a,
				       true);
		if (i == 0 && z == end)
			break;	/* one block held both edges */
	}
	return err;
}

int tux3_fallocate(struct tux3_volume *vol, tux3_ino_t ino, uint64_t off,
		   uint64_t len, unsigned flags)
{
	unsigned bits = vol->blockbits;
	struct inode inode;
	int err;

	if (flags & ~(TUX3_FALLOC_KEEP_SIZE | TUX3_FALLOC_PUNCH_HOLE))
		return -EOPNOTSUPP;
	if ((flags & TUX3_FALLOC_PUNCH_HOLE) &&
	    !(flags & TUX3_FALLOC_KEEP_SIZE))
		return -EOPNOTSUPP;	/* as Linux: a punch keeps the size */
	if (!len)
		return -EINVAL;
	if (off > iattr_max_data(bits) || len > iattr_max_data(bits) - off)
		return -EFBIG;
	if ((err = change_begin(vol)))
		return err;
	if ((err = inode_load(vol, ino, &inode)))
		return err;
	if (!S_ISREG(inode.mode))
		err = S_ISDIR(inode.mode) ? -EISDIR : -ENODEV;
	else if (vinode_applies(vol, ino))
		err = -EOPNOTSUPP;
	uint64_t end = off + len, size = inode.size;
	uint64_t size_blocks = (size + vol->blocksize - 1) >> bits;
	if (!err && flags == TUX3_FALLOC_KEEP_SIZE &&
	    ((end + vol->blocksize - 1) >> bits) > size_blocks)
		err = -EOPNOTSUPP;	/* blocks past the size */
	const unsigned zero_blocks = 64;
	uint8_t *zero = err ? NULL : calloc(zero_blocks, vol->blocksize);
	if (!err && !zero)
		err = -ENOMEM;
	int werr = 0;
	if (!err && (flags & TUX3_FALLOC_PUNCH_HOLE)) {
		if (off < size)
			werr = punch_range(vol, &inode, off,
					   end < size ? end : size, zero);
		inode.size = size;
	} else if (!err) {
		werr = fill_holes(vol, &inode, off >> bits, (end - 1) >> bits,
				  zero, zero_blocks);
		/* fill_holes writes whole blocks: the size is the one
		 * asked for, or the old one */
		inode.size = !(flags & TUX3_FALLOC_KEEP_SIZE) && end > size ?
			     end : size;
	}
	free(zero);
	if (!err) {
		/* what was done is stored, even when a write ran out of
		 * space part way (as ext4 keeps a partial preallocation) */
		inode.ctime = vol_now(vol);
		if (inode.size != size)
			inode.mtime = inode.ctime;
		err = inode_store(vol, &inode);
		if (!err)
			err = werr;
	}
	inode_free(&inode);
	return err;
}
