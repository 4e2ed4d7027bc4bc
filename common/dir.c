/*
 * A directory's records, block by block through its file map (the atom
 * table's dictionary is read the same way).  Decoding one block is
 * format/dirent.c's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "core.h"

struct dir_walk {
	struct tux3_volume *vol;
	const struct inode *dir;
	dir_block_fn fn;
	void *ctx;
	uint8_t *buf;
	uint64_t first;		/* blocks before it are not passed on */
	uint64_t hinted;	/* logical blocks before it were asked for */
};

/* Read ahead a window at a time: one wait for many blocks, without asking
 * for a whole large directory again at each resumed batch (a reader of a
 * million-entry directory in batches resumes thousands of times). */
#define DIR_READAHEAD_BLOCKS 256

static void dir_hint(struct dir_walk *w, const struct extent *x, uint64_t i)
{
	struct tux3_volume *vol = w->vol;
	uint64_t logical = x->logical + i;
	if (logical < w->hinted || !vol_readahead_on(vol))
		return;
	uint64_t end = (w->dir->size + vol->blocksize - 1) >> vol->blockbits;
	uint64_t n = end > logical ? end - logical : 0;
	if (n > x->count - i)
		n = x->count - i;
	if (n > DIR_READAHEAD_BLOCKS)
		n = DIR_READAHEAD_BLOCKS;
	vol_readahead(vol, x->physical + i, n);
	w->hinted = logical + n;
}

static int dir_extent(void *ctx, const struct extent *x)
{
	struct dir_walk *w = ctx;
	struct tux3_volume *vol = w->vol;

	if (!x->physical)
		return 0;	/* a hole in a directory holds no entries */
	/* the map passes the whole extent that holds the first block */
	uint64_t skip = w->first > x->logical ? w->first - x->logical : 0;
	if (skip >= x->count)
		return 0;
	for (uint64_t i = skip; i < x->count; i++) {
		uint64_t logical = x->logical + i;
		if (logical << vol->blockbits >= w->dir->size)
			break;
		dir_hint(w, x, i);
		vol->dir_block_reads++;
		int r = vol_read_block(vol, x->physical + i, w->buf);
		r = w->fn(w->ctx, logical, x->physical + i, w->buf, r);
		if (r)
			return r;
	}
	return 0;
}

int dir_walk_blocks_from(struct tux3_volume *vol, const struct inode *dir,
			 uint64_t first, dir_block_fn fn, void *ctx)
{
	unsigned bs = vol->blocksize;
	uint64_t nblocks = (dir->size + bs - 1) >> vol->blockbits;
	struct dir_walk w = { vol, dir, fn, ctx, NULL, first, 0 };

	if (first >= nblocks)
		return 0;
	w.buf = malloc(bs);
	if (!w.buf)
		return -ENOMEM;
	int r = filemap_walk(vol, dir, first, nblocks, dir_extent, &w);
	free(w.buf);
	return r;
}

int dir_walk_blocks(struct tux3_volume *vol, const struct inode *dir,
		    dir_block_fn fn, void *ctx)
{
	return dir_walk_blocks_from(vol, dir, 0, fn, ctx);
}

struct dir_records {
	const struct inode *dir;
	dirent_fn fn;
	dirent_bad_fn bad;	/* NULL: the first bad block ends the walk */
	void *ctx;
	struct tux3_volume *vol;
	uint64_t start;		/* records before this byte are skipped */
	uint64_t next;		/* salvage: the block expected next */
	unsigned holes;		/* salvage: holes reported */
};

/* A directory never has a hole (every block holds entries, if only an
 * empty one), and a create cannot go on past one: a salvage walk
 * reports each as a damaged block, whose repair writes an empty one
 * there (fsck pass 5), as after a lost data tree.  A directory with
 * more holes than DIR_HOLES_MAX is not one that lost some blocks but
 * one whose size or map is garbage (a foreign extent far out, the size
 * made to reach it): filling it would write gigabytes of empty blocks,
 * so its holes are left to the checks of its size and map. */
#define DIR_HOLES_MAX 1024

static int count_mapped(void *ctx, const struct extent *x)
{
	if (x->physical)
		*(uint64_t *)ctx += x->count;
	return 0;
}

/* Whether the holes of the directory are few enough to fill. */
static bool holes_fillable(struct dir_records *d)
{
	struct tux3_volume *vol = d->vol;
	uint64_t nblocks = (d->dir->size + vol->blocksize - 1) >>
			   vol->blockbits, mapped = 0;
	int err = filemap_walk(vol, d->dir, 0, nblocks, count_mapped, &mapped);
	tux3_clear_error(vol);
	return !err && nblocks - (mapped < nblocks ? mapped : nblocks) <=
		       DIR_HOLES_MAX;
}

static int report_holes(struct dir_records *d, uint64_t upto)
{
	struct tux3_volume *vol = d->vol;
	int r = 0;
	if (d->next < upto && !d->holes && !holes_fillable(d))
		d->holes = DIR_HOLES_MAX;	/* none reported */
	for (; d->next < upto && !r && d->holes < DIR_HOLES_MAX; d->next++) {
		d->holes++;
		vol_error(vol, -EUCLEAN, TUX3_NONE, d->dir->inum,
			  d->next << vol->blockbits, "directory block %"
			  PRIu64 " is a hole: no block holds its entries",
			  d->next);
		r = d->bad(d->ctx, &vol->error, d->next, 0);
		tux3_clear_error(vol);
	}
	d->next = upto > d->next ? upto : d->next;
	return r;
}

/* A walk resumed inside a block passes on only the records at or past
 * its start: a position need not be a record's, as a caller may resume
 * one byte past the last record it saw. */
static int dir_record_from(void *ctx, const struct dirent_info *d)
{
	const struct dir_records *r = ctx;
	return d->pos < r->start ? 0 : r->fn(r->ctx, d);
}

static int dir_block_records(void *ctx, uint64_t logical, uint64_t physical,
			     const uint8_t *blk, int read_err)
{
	struct dir_records *d = ctx;
	struct tux3_volume *vol = d->vol;
	int r = read_err;
	uint64_t base = logical << vol->blockbits;
	if (d->bad && (r = report_holes(d, logical)))
		return r;
	d->next = logical + 1;
	r = read_err;
	if (!r && base >= d->start)
		r = dirblock_iterate(vol, blk, vol->blocksize, base, physical,
				     d->dir->inum, d->fn, d->ctx);
	else if (!r)
		r = dirblock_iterate(vol, blk, vol->blocksize, base, physical,
				     d->dir->inum, dir_record_from, d);
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
	struct dir_records d = { dir, fn, bad, ctx, vol, 0, 0, 0 };
	int r = dir_walk_blocks(vol, dir, dir_block_records, &d);
	uint64_t nblocks = (dir->size + vol->blocksize - 1) >> vol->blockbits;
	return r || !bad ? r : report_holes(&d, nblocks);
}

int dir_iterate(struct tux3_volume *vol, const struct inode *dir,
		dirent_fn fn, void *ctx)
{
	return dir_iterate_salvage(vol, dir, fn, NULL, ctx);
}

int dir_iterate_from(struct tux3_volume *vol, const struct inode *dir,
		     uint64_t start, dirent_fn fn, void *ctx)
{
	struct dir_records d = { dir, fn, NULL, ctx, vol, start, 0, 0 };
	return dir_walk_blocks_from(vol, dir, start >> vol->blockbits,
				    dir_block_records, &d);
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
