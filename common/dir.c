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
	dirent_fn fn;
	dirent_bad_fn bad;	/* NULL: the first bad block ends the walk */
	void *ctx;
	uint8_t *buf;
};

static int dir_extent(void *ctx, const struct extent *x)
{
	struct dir_walk *w = ctx;
	struct tux3_volume *vol = w->vol;

	if (!x->physical)
		return 0;	/* a hole in a directory holds no entries */
	for (uint64_t i = 0; i < x->count; i++) {
		uint64_t logical = x->logical + i;
		if (logical << vol->blockbits >= w->dir->size)
			break;
		int r = vol_read_block(vol, x->physical + i, w->buf);
		if (!r)
			r = dirblock_iterate(vol, w->buf, vol->blocksize,
					     logical << vol->blockbits,
					     x->physical + i, w->dir->inum,
					     w->fn, w->ctx);
		if (r == -EUCLEAN && w->bad) {
			/* report the block and go on with the next one */
			r = w->bad(w->ctx, &vol->error, logical,
				   x->physical + i);
			tux3_clear_error(vol);
		}
		if (r)
			return r;
	}
	return 0;
}

int dir_iterate_salvage(struct tux3_volume *vol, const struct inode *dir,
			dirent_fn fn, dirent_bad_fn bad, void *ctx)
{
	unsigned bs = vol->blocksize;
	uint64_t nblocks = (dir->size + bs - 1) >> vol->blockbits;
	struct dir_walk w = { vol, dir, fn, bad, ctx, malloc(bs) };

	if (!w.buf)
		return -ENOMEM;
	int r = filemap_walk(vol, dir, 0, nblocks, dir_extent, &w);
	free(w.buf);
	return r;
}

int dir_iterate(struct tux3_volume *vol, const struct inode *dir,
		dirent_fn fn, void *ctx)
{
	return dir_iterate_salvage(vol, dir, fn, NULL, ctx);
}
