/*
 * File data written: one loop for every kind of file (data_write), which
 * asks a placement for the blocks' homes.  A 2014 file's placement
 * rewrites this delta's own blocks in place and gives every other block
 * a new home near its neighbours (the committed one must stay); a
 * versioned file's placement is version/vinode_write.c's.  Also truncate,
 * and a file's unversioned map given back.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "write/write.h"

static uint64_t data_goal(struct tux3_volume *vol, const struct inode *inode,
			  uint64_t logical)
{
	uint64_t prev, run;
	if (logical && !filemap_lookup(vol, inode, logical - 1, &prev, &run) &&
	    prev)
		return prev + 1;
	tux3_clear_error(vol);
	/* a directory's first block: an emptier group (directories spread) */
	if (!logical && S_ISDIR(inode->mode) && !inode->dtree)
		return balloc_dir_goal(vol);
	/* a file's first blocks: where the last allocation ended, so files
	 * written one after another lie one after another */
	if (vol->alloc_cursor)
		return vol->alloc_cursor;
	return (inode->inum + logical) % vol->volblocks;
}

/*
 * A 2014 file's placement.  Blocks this delta allocated are its own, not
 * referenced by the committed state: they are rewritten in place.
 */
static int plain_in_place(struct tux3_volume *vol, struct inode *inode,
			  uint64_t logical, uint64_t *physical)
{
	uint64_t run;
	int err = filemap_lookup(vol, inode, logical, physical, &run);
	if (err)
		return err;
	return *physical && blockset_has(&vol->fresh, *physical);
}

/* Every other block gets a new home, as a run where the allocator finds
 * one, near the file's previous block. */
static int plain_place(struct tux3_volume *vol, struct inode *inode,
		       uint64_t logical, uint64_t *n, uint64_t *phys,
		       bool privileged)
{
	uint64_t block, got;
	int err;
	if ((err = balloc(vol, data_goal(vol, inode, logical), *n, privileged,
			  &block, &got)))
		return err;
	if ((err = log_balloc(vol, block, got)))
		return err;
	for (uint64_t i = 0; i < got; i++) {
		if ((err = blockset_add(&vol->fresh, block + i)) < 0)
			return err;
		phys[i] = block + i;
	}
	if ((err = filemap_set(vol, inode, logical, block, got)))
		return err;
	inode->present |= 1u << ATTR_DATA_BTREE;
	*n = got;
	return 0;
}

static const struct data_placement plain_placement = {
	.in_place = plain_in_place,
	.place = plain_place,
};

/* Runs of consecutive blocks in phys[] written with one call each. */
static int write_runs(struct tux3_volume *vol, const uint64_t *phys,
		      uint64_t n, const uint8_t *src)
{
	unsigned bits = vol->blockbits;
	int err = 0;
	for (uint64_t i = 0; i < n && !err;) {
		uint64_t j = i + 1;
		while (j < n && phys[j] == phys[j - 1] + 1)
			j++;
		if (!phys[i])
			return -EIO;
		err = dev_pwrite(&vol->dev, src + (i << bits),
				 (size_t)(j - i) << bits, phys[i] << bits);
		i = j;
	}
	return err;
}

/*
 * Write len bytes at pos through a placement: whole blocks go to the
 * homes it gives, a partial block keeps the old bytes around the new
 * ones (read before the placement moves it).  vol->write_done counts
 * what was written, so a write that stops part way (ENOSPC) can say how
 * far it got.
 */
int data_write(struct tux3_volume *vol, struct inode *inode, const void *buf,
	       size_t len, uint64_t pos, bool privileged,
	       const struct data_placement *pl)
{
	unsigned bs = vol->blocksize, bits = vol->blockbits;
	const uint8_t *src = buf;
	uint64_t phys[DATA_RUN_MAX];
	uint8_t *blk;
	int err = 0;

	if (pos > iattr_max_data(bits) || len > iattr_max_data(bits) - pos)
		return -EFBIG;
	/* the volume's spare block buffers: a bulk load writes a small
	 * file per call, and a malloc and free of a block each time cost
	 * it a tenth of its time (the free returned memory to the host) */
	if (!(blk = vol_buf_get(vol)))
		return -ENOMEM;
	while (len && !err) {
		uint64_t logical = pos >> bits, physical, n = 1;
		unsigned off = pos & (bs - 1);
		size_t chunk = bs - off < len ? bs - off : len;
		int here = pl->in_place ? pl->in_place(vol, inode, logical,
						       &physical) : 0;
		if (here < 0) {
			err = here;
		} else if (here) {
			err = dev_pwrite(&vol->dev, src, chunk,
					 (physical << bits) + off);
		} else if (chunk < bs) {
			if (!(err = filemap_read_block(vol, inode, logical,
						       blk)) &&
			    !(err = pl->place(vol, inode, logical, &n, phys,
					      privileged))) {
				memcpy(blk + off, src, chunk);
				err = write_runs(vol, phys, 1, blk);
			}
		} else {
			n = len >> bits;
			if (n > DATA_RUN_MAX)
				n = DATA_RUN_MAX;
			if (!(err = pl->place(vol, inode, logical, &n, phys,
					      privileged))) {
				chunk = (size_t)n << bits;
				err = write_runs(vol, phys, n, src);
			}
		}
		if (err)
			break;
		src += chunk;
		pos += chunk;
		len -= chunk;
		vol->write_done += chunk;
	}
	vol_buf_put(vol, blk);
	if (err < 0 && !vol->error.err)
		vol_error(vol, err, TUX3_NONE, inode->inum, pos,
			  "cannot write data: %s", strerror(-err));
	if (pos > inode->size)
		inode->size = pos;
	return err < 0 ? err : 0;
}

int inode_write_data(struct tux3_volume *vol, struct inode *inode,
		     const void *buf, size_t len, uint64_t pos, bool privileged)
{
	vol->write_done = 0;
	if (!len)
		return 0;
	int err;
	if (vinode_applies(vol, inode->inum))
		err = vol->vops->write_data(vol, inode, buf, len, pos);
	else
		err = data_write(vol, inode, buf, len, pos, privileged,
				 &plain_placement);
	/* an indexed directory's index follows its blocks */
	dir_index_wrote(vol, inode, buf, len, pos, err);
	return err;
}

/* Cut a file to size: blocks past it unmapped, the tail of the last
 * block zeroed (so a later grow reads zeros). */
int inode_truncate(struct tux3_volume *vol, struct inode *inode,
		   uint64_t size)
{
	unsigned bits = vol->blockbits, bs = vol->blocksize;
	int err = 0;

	dir_index_forget(vol, inode->inum);
	if (vinode_applies(vol, inode->inum))
		return vol->vops->truncate(vol, inode, size);
	if (size > iattr_max_data(bits))
		return -EFBIG;
	if (size < inode->size) {
		uint64_t keep = (size + bs - 1) >> bits;
		err = filemap_set(vol, inode, keep, 0, TUX3_KEY_LIMIT - keep);
		if (!err && (size & (bs - 1))) {
			uint8_t *zero = calloc(1, bs);
			unsigned tail = bs - (unsigned)(size & (bs - 1));
			uint64_t physical, run;
			if (!zero)
				return -ENOMEM;
			err = filemap_lookup(vol, inode, size >> bits,
					     &physical, &run);
			if (!err && physical)
				err = inode_write_data(vol, inode, zero, tail,
						       size, true);
			free(zero);
		}
	}
	inode->size = size;
	return err;
}

int inode_free_unversioned(struct tux3_volume *vol, struct inode *inode)
{
	int err = filemap_set(vol, inode, 0, 0, TUX3_KEY_LIMIT);
	struct root r = root_unpack(inode->dtree);
	if (!err && inode->dtree && !r.direct) {
		/* the emptied dtree's nodes, at any depth */
		struct btree bt = { .vol = vol, .root = r, .ops = &dtree_ops,
				    .owner = inode->inum };
		err = btree_free_nodes(&bt);
	}
	if (!err)
		inode->dtree = 0;
	return err;
}

ssize_t tux3_write(struct tux3_volume *vol, tux3_ino_t ino, const void *buf,
		   size_t len, uint64_t pos)
{
	struct inode inode;
	int err;

	if ((err = change_begin(vol)))
		return err;
	if ((err = inode_load(vol, ino, &inode)))
		return err;
	if (S_ISDIR(inode.mode))
		err = -EISDIR;
	else if (!S_ISREG(inode.mode))
		err = -EINVAL;
	if (!err) {
		/* a write that fails part way (ENOSPC) keeps what it wrote:
		 * the inode is stored either way, so its map and size agree
		 * with the blocks it holds */
		err = inode_write_data(vol, &inode, buf, len, pos, false);
		size_t done = vol->write_done;
		inode.mtime = inode.ctime = vol_now(vol);
		int serr = inode_store(vol, &inode);
		/* a write that stopped part way returns what it wrote, as
		 * write(2) does; the next call meets the error */
		if (err && done && !serr) {
			tux3_clear_error(vol);
			len = done;
			err = 0;
		}
		if (!err)
			err = serr;
	}
	inode_free(&inode);
	return err ? err : (ssize_t)len;
}

int tux3_truncate(struct tux3_volume *vol, tux3_ino_t ino, uint64_t size)
{
	struct inode inode;
	int err;

	if ((err = change_begin(vol)))
		return err;
	if ((err = inode_load(vol, ino, &inode)))
		return err;
	if (!S_ISREG(inode.mode))
		err = S_ISDIR(inode.mode) ? -EISDIR : -EINVAL;
	if (!err)
		err = inode_truncate(vol, &inode, size);
	if (!err) {
		inode.mtime = inode.ctime = vol_now(vol);
		err = inode_store(vol, &inode);
	}
	inode_free(&inode);
	return err;
}
