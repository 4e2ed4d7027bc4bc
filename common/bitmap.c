/*
 * The live allocation bitmap and the countmap, as read: one bit per block,
 * LSB first, 1 = in use (inode 1); a be16 used count per group of 2^13
 * blocks (inode 2).  The live bitmap is the on-disk one plus the log's
 * allocation records, built here in memory one bitmap block ("chunk") at
 * a time as replay touches it.  Replay, the walker and fsck read it here;
 * allocation and the write-back at unify are write/balloc.c's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "core.h"

int bitmap_init(struct tux3_volume *vol)
{
	struct bitmap *bm = &vol->bitmap;
	unsigned chunkbits = vol->blockbits + 3;

	bm->volblocks = vol->volblocks;
	bm->blockbits = vol->blockbits;
	bm->nchunks = (vol->volblocks + (1ULL << chunkbits) - 1) >> chunkbits;
	bm->ngroups = (vol->volblocks + (1ULL << TUX3_GROUPBITS) - 1) >>
		      TUX3_GROUPBITS;
	int err = spacemap_init(&bm->map, chunkbits,
				chunkbits < TUX3_GROUPBITS ? chunkbits :
				TUX3_GROUPBITS, vol->volblocks);
	if (err)
		return err;
	err = inode_load(vol, TUX3_BITMAP_INO, &vol->bitmap_inode);
	if (err == -ENOENT) {
		/* never unified: the bitmap exists only as log records */
		tux3_clear_error(vol);
		vol->has_bitmap_inode = false;
		err = 0;
	} else if (!err) {
		vol->has_bitmap_inode = true;
	}
	return err;
}

/*
 * bitmap_init for fsck's salvage: the bitmap inode read past damage of
 * the inode table's index nodes (inode_load_salvage; fsck's pass 3 then
 * repairs them).  Called after a bitmap_init that failed on the inode.
 */
int bitmap_init_salvage(struct tux3_volume *vol)
{
	if (!vol->bitmap.map.chunkbits)
		return -EINVAL;
	tux3_clear_error(vol);
	int err = inode_load_salvage(vol, TUX3_BITMAP_INO, &vol->bitmap_inode);
	vol->has_bitmap_inode = !err;
	if (err == -ENOENT) {
		/* never unified, as in bitmap_init */
		tux3_clear_error(vol);
		err = 0;
	}
	return err;
}

void bitmap_free(struct bitmap *bm)
{
	spacemap_free(&bm->map);
	memset(bm, 0, sizeof(*bm));
}

int bitmap_ondisk_chunk(struct tux3_volume *vol, uint64_t index, uint8_t *buf)
{
	if (!vol->has_bitmap_inode) {
		memset(buf, 0, vol->blocksize);
		return 0;
	}
	return filemap_read_block(vol, &vol->bitmap_inode, index, buf);
}

/* The first chunk at index from or after that the bitmap file holds
 * (not a hole), or nchunks: the file map says where the holes are. */
int bitmap_ondisk_next(struct tux3_volume *vol, uint64_t from,
		       uint64_t *index)
{
	*index = vol->bitmap.nchunks;
	if (!vol->has_bitmap_inode)
		return 0;
	return filemap_next_mapped(vol, &vol->bitmap_inode, from,
				   vol->bitmap.nchunks, index);
}

int bitmap_next_chunk(struct tux3_volume *vol, uint64_t from, uint64_t *index)
{
	struct spacemap_chunk *c = spacemap_next(&vol->bitmap.map, from);
	int err = bitmap_ondisk_next(vol, from, index);
	if (c && c->index < *index)
		*index = c->index;
	return err;
}

struct spacemap_chunk *bitmap_chunk_get(struct tux3_volume *vol,
					uint64_t index, int *err)
{
	struct bitmap *bm = &vol->bitmap;
	struct spacemap_chunk *c = spacemap_get(&bm->map, index);
	*err = 0;
	if (c)
		return c;
	if (index >= bm->nchunks) {
		*err = -ERANGE;
		return NULL;
	}
	uint8_t *buf = malloc(vol->blocksize);
	if (!buf) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = bitmap_ondisk_chunk(vol, index, buf);
	if (!*err && !(c = spacemap_make(&bm->map, index, buf)))
		*err = -ENOMEM;
	free(buf);
	return c;
}

uint8_t *bitmap_chunk(struct tux3_volume *vol, uint64_t index, int *err)
{
	struct spacemap_chunk *c = bitmap_chunk_get(vol, index, err);
	return c ? c->bits : NULL;
}

int bitmap_test(struct tux3_volume *vol, uint64_t block)
{
	int err;
	if (block >= vol->volblocks)
		return -ERANGE;
	unsigned shift = vol->blockbits + 3;
	uint8_t *c = bitmap_chunk(vol, block >> shift, &err);
	if (!c)
		return err;
	uint64_t bit = block & ((1ULL << shift) - 1);
	return (c[bit >> 3] >> (bit & 7)) & 1;
}

int64_t bitmap_modify(struct tux3_volume *vol, uint64_t start, uint64_t count,
		      bool set)
{
	struct spacemap *map = &vol->bitmap.map;
	unsigned shift = vol->blockbits + 3;
	int64_t conflicts = 0;
	int err;

	if (!vol_extent_valid(vol, start, count))
		return -ERANGE;
	for (uint64_t b = start; b < start + count; b++) {
		struct spacemap_chunk *c = bitmap_chunk_get(vol, b >> shift,
							    &err);
		if (!c)
			return err;
		if (spacemap_chunk_put(map, c, b & ((1ULL << shift) - 1),
				       set) == set) {
			conflicts++;
			continue;
		}
		if (set)
			vol->freeblocks--;
		else
			vol->freeblocks++;
		c->flags |= BITMAP_DIRTY;
	}
	return conflicts;
}

int tux3_block_is_used(struct tux3_volume *vol, tux3_block_t block)
{
	return bitmap_test(vol, block);
}

/* The runs of blocks in use in one chunk, in block order. */
static int chunk_runs(struct tux3_volume *vol, struct spacemap_chunk *chunk,
		      bitmap_run_fn fn, void *ctx)
{
	unsigned shift = vol->blockbits + 3;
	uint64_t per_chunk = 1ULL << shift, base = chunk->index << shift;
	uint64_t bits = vol->volblocks - base < per_chunk ?
			vol->volblocks - base : per_chunk;
	const uint8_t *c = chunk->bits;
	int stale = !!(chunk->flags & BITMAP_DIRTY), err;

	for (uint64_t bit = 0; bit < bits;) {
		if (!(bit & 7) && !c[bit >> 3]) {
			bit += 8;
			continue;
		}
		if (!((c[bit >> 3] >> (bit & 7)) & 1)) {
			bit++;
			continue;
		}
		uint64_t start = bit;
		while (bit < bits) {
			if (!(bit & 7) && c[bit >> 3] == 0xff &&
			    bits - bit >= 8) {
				bit += 8;
				continue;
			}
			if (!((c[bit >> 3] >> (bit & 7)) & 1))
				break;
			bit++;
		}
		if ((err = fn(ctx, chunk->index, base + start, bit - start,
			      stale)))
			return err;
	}
	return 0;
}

/*
 * The runs of blocks in use in the live bitmap, in block order.  A run
 * never crosses a bitmap block (chunk), so that the caller can tell which
 * on-disk bitmap block holds it and whether that block is stale (changed
 * by replay or by this session since it was read).  Only the chunks the
 * bitmap file holds or this session made are visited: a hole is free.
 */
int bitmap_runs(struct tux3_volume *vol, bitmap_run_fn fn, void *ctx)
{
	uint64_t index;
	int err = bitmap_next_chunk(vol, 0, &index);

	while (!err && index < vol->bitmap.nchunks) {
		struct spacemap_chunk *c = bitmap_chunk_get(vol, index, &err);
		if (!c || (err = chunk_runs(vol, c, fn, ctx)))
			break;
		err = bitmap_next_chunk(vol, index + 1, &index);
	}
	return err;
}

/* Blocks marked in use in [start, start + count) of the live bitmap:
 * the chunks there that exist are loaded, holes count as free. */
int bitmap_count_used(struct tux3_volume *vol, uint64_t start, uint64_t count,
		      uint64_t *used)
{
	unsigned shift = vol->blockbits + 3;
	uint64_t index, end;
	int err;

	*used = 0;
	if (start >= vol->volblocks || !count)
		return 0;
	end = count > vol->volblocks - start ? vol->volblocks : start + count;
	err = bitmap_next_chunk(vol, start >> shift, &index);
	while (!err && index <= (end - 1) >> shift) {
		if (!bitmap_chunk_get(vol, index, &err))
			break;
		err = bitmap_next_chunk(vol, index + 1, &index);
	}
	if (!err)
		*used = spacemap_count(&vol->bitmap.map, start, end - start);
	return err;
}

/* Blocks in use in group g, its chunks loaded (holes as zeroes): for the
 * allocator, which goes group by group from its goal. */
int bitmap_group_used(struct tux3_volume *vol, uint64_t group, uint64_t *used)
{
	unsigned shift = vol->blockbits + 3;
	uint64_t start = group << TUX3_GROUPBITS, size = 1ULL << TUX3_GROUPBITS;
	int err = 0;

	if (start >= vol->volblocks)
		return -ERANGE;
	if (size > vol->volblocks - start)
		size = vol->volblocks - start;
	for (uint64_t i = start >> shift; i <= (start + size - 1) >> shift &&
	     !err; i++)
		bitmap_chunk_get(vol, i, &err);
	*used = err ? 0 : spacemap_count(&vol->bitmap.map, start, size);
	return err;
}

/* The countmap (inode 2): a be16 count of used blocks per group of
 * 2^13 blocks, blocksize/2 groups per block.  Written only at unify. */
int countmap_ondisk(struct tux3_volume *vol, uint64_t group, uint32_t *count)
{
	struct inode countmap;
	unsigned per_block = vol->blocksize / 2;
	int err = inode_load(vol, TUX3_COUNTMAP_INO, &countmap);

	*count = 0;
	if (err == -ENOENT) {
		tux3_clear_error(vol);	/* never unified: no countmap yet */
		return 0;
	}
	if (err)
		return err;
	uint8_t *buf = malloc(vol->blocksize);
	if (!buf) {
		inode_free(&countmap);
		return -ENOMEM;
	}
	err = filemap_read_block(vol, &countmap, group / per_block, buf);
	if (!err)
		*count = be16(buf + 2 * (group % per_block));
	free(buf);
	inode_free(&countmap);
	return err;
}

int tux3_group_counts(struct tux3_volume *vol, uint64_t group,
		      uint32_t *ondisk, uint32_t *live)
{
	uint64_t used;
	if (group >= (vol->volblocks + (1ULL << TUX3_GROUPBITS) - 1) >>
		     TUX3_GROUPBITS)
		return -ERANGE;
	int err = countmap_ondisk(vol, group, ondisk);
	if (!err)
		err = bitmap_count_used(vol, group << TUX3_GROUPBITS,
					1ULL << TUX3_GROUPBITS, &used);
	if (!err)
		*live = (uint32_t)used;
	return err;
}
