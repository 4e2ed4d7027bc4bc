/*
 * A directory's records, block by block through its file map (the atom
 * table's dictionary is read the same way).  Decoding one block is
 * format/dirent.c's.
 */
#include <stdlib.h>
#include "core.h"

struct dir_walk {
	struct tux3_volume *vol;
	const struct inode *dir;
	dir_block_fn fn;
	void *ctx;
	uint8_t *buf;
};

static int dir_extent(void *ctx, const struct extent *x)
{
	struct dir_walk *w = ctx;
	struct tux3_volume *vol = w->vol;

	if (!x->physical)
		return 0;	/* a hole in a directory holds no entries */
	if (vol_readahead_on(vol)) {	/* one wait for the extent, not each */
		uint64_t n = ((w->dir->size + vol->blocksize - 1) >>
			      vol->blockbits);
		n = x->logical < n ? n - x->logical : 0;
		vol_readahead(vol, x->physical, n < x->count ? n : x->count);
	}
	for (uint64_t i = 0; i < x->count; i++) {
		uint64_t logical = x->logical + i;
		if (logical << vol->blockbits >= w->dir->size)
			break;
		vol->dir_block_reads++;
		int r = vol_read_block(vol, x->physical + i, w->buf);
		r = w->fn(w->ctx, logical, x->physical + i, w->buf, r);
		if (r)
			return r;
	}
	return 0;
}

int dir_walk_blocks(struct tux3_volume *vol, const struct inode *dir,
		    dir_block_fn fn, void *ctx)
{
	unsigned bs = vol->blocksize;
	uint64_t nblocks = (dir->size + bs - 1) >> vol->blockbits;
	struct dir_walk w = { vol, dir, fn, ctx, malloc(bs) };

	if (!w.buf)
		return -ENOMEM;
	int r = filemap_walk(vol, dir, 0, nblocks, dir_extent, &w);
	free(w.buf);
	return r;
}

struct dir_records {
	const struct inode *dir;
	dirent_fn fn;
	dirent_bad_fn bad;	/* NULL: the first bad block ends the walk */
	void *ctx;
	struct tux3_volume *vol;
};

static int dir_block_records(void *ctx, uint64_t logical, uint64_t physical,
			     const uint8_t *blk, int read_err)
{
	struct dir_records *d = ctx;
	struct tux3_volume *vol = d->vol;
	int r = read_err;
	if (!r)
		r = dirblock_iterate(vol, blk, vol->blocksize,
				     logical << vol->blockbits, physical,
				     d->dir->inum, d->fn, d->ctx);
	if (r == -EUCLEAN && d->bad) {
		/* report the block and go on with the next one */
		r = d->bad(d->ctx, &vol->error, logical, physical);
		tux3_clear_error(vol);
	}
	return r;
}

int dir_iterate_salvage(struct tux3_volume *vol, const struct inode *dir,
			dirent_fn fn, dirent_bad_fn bad, void *ctx)
{
	struct dir_records d = { dir, fn, bad, ctx, vol };
	return dir_walk_blocks(vol, dir, dir_block_records, &d);
}

int dir_iterate(struct tux3_volume *vol, const struct inode *dir,
		dirent_fn fn, void *ctx)
{
	return dir_iterate_salvage(vol, dir, fn, NULL, ctx);
}

int dir_read_block(struct tux3_volume *vol, const struct inode *dir,
		   uint64_t logical, uint8_t *buf)
{
	vol->dir_block_reads++;
	return filemap_read_block(vol, dir, logical, buf);
}

int dir_lookup_indexed(struct tux3_volume *vol, const struct inode *dir,
		       const char *name, unsigned len, struct dirent_info *d)
{
	int err = dirhash_find(vol, dir, name, len, d);
	if (err != DIRHASH_NONE)
		return err;
	return dir_index_find(vol, dir, name, len, d);
}
