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
	uint64_t bits_per_chunk = (uint64_t)vol->blocksize * 8;

	bm->volblocks = vol->volblocks;
	bm->blockbits = vol->blockbits;
	bm->nchunks = (size_t)((vol->volblocks + bits_per_chunk - 1) /
			       bits_per_chunk);
	bm->chunks = calloc(bm->nchunks, sizeof(*bm->chunks));
	bm->dirty = calloc(bm->nchunks, 1);
	if (!bm->chunks || !bm->dirty)
		return -ENOMEM;
	int err = inode_load(vol, TUX3_BITMAP_INO, &vol->bitmap_inode);
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
	if (!vol->bitmap.chunks || !vol->bitmap.dirty)
		return -ENOMEM;
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
	for (size_t i = 0; i < bm->nchunks && bm->chunks; i++)
		free(bm->chunks[i]);
	free(bm->chunks);
	free(bm->dirty);
	free(bm->groupused);
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

uint8_t *bitmap_chunk(struct tux3_volume *vol, uint64_t index, int *err)
{
	struct bitmap *bm = &vol->bitmap;
	*err = 0;
	if (!bm->chunks[index]) {
		uint8_t *c = malloc(vol->blocksize);
		if (!c) {
			*err = -ENOMEM;
			return NULL;
		}
		*err = bitmap_ondisk_chunk(vol, index, c);
		if (*err) {
			free(c);
			return NULL;
		}
		bm->chunks[index] = c;
	}
	return bm->chunks[index];
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
	unsigned shift = vol->blockbits + 3;
	int64_t conflicts = 0;
	int err;

	if (!vol_extent_valid(vol, start, count))
		return -ERANGE;
	for (uint64_t b = start; b < start + count; b++) {
		uint8_t *c = bitmap_chunk(vol, b >> shift, &err);
		if (!c)
			return err;
		uint64_t bit = b & ((1ULL << shift) - 1);
		uint8_t mask = (uint8_t)(1u << (bit & 7));
		bool was = c[bit >> 3] & mask;
		if (was == set) {
			conflicts++;
			continue;
		}
		if (set) {
			c[bit >> 3] |= mask;
			vol->freeblocks--;
		} else {
			c[bit >> 3] &= (uint8_t)~mask;
			vol->freeblocks++;
		}
		vol->bitmap.dirty[b >> shift] = 1;
		if (vol->bitmap.groupused) {
			uint32_t *g = &vol->bitmap.groupused[b >> TUX3_GROUPBITS];
			*g = set ? *g + 1 : *g - 1;
		}
	}
	return conflicts;
}

int tux3_block_is_used(struct tux3_volume *vol, tux3_block_t block)
{
	return bitmap_test(vol, block);
}

/*
 * The runs of blocks in use in the live bitmap, in block order.  A run
 * never crosses a bitmap block (chunk), so that the caller can tell which
 * on-disk bitmap block holds it and whether that block is stale (changed
 * by replay or by this session since it was read).
 */
int bitmap_runs(struct tux3_volume *vol, bitmap_run_fn fn, void *ctx)
{
	unsigned shift = vol->blockbits + 3;
	uint64_t per_chunk = 1ULL << shift;
	int err;

	for (uint64_t chunk = 0; chunk < vol->bitmap.nchunks; chunk++) {
		uint8_t *c = bitmap_chunk(vol, chunk, &err);
		if (!c)
			return err;
		uint64_t base = chunk << shift;
		uint64_t bits = vol->volblocks - base < per_chunk ?
				vol->volblocks - base : per_chunk;
		int stale = vol->bitmap.dirty[chunk];
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
			if ((err = fn(ctx, chunk, base + start, bit - start,
				      stale)))
				return err;
		}
	}
	return 0;
}

/* Blocks marked in use in [start, start + count) of the live bitmap. */
int bitmap_count_used(struct tux3_volume *vol, uint64_t start, uint64_t count,
		      uint64_t *used)
{
	unsigned shift = vol->blockbits + 3;
	uint64_t per_chunk = 1ULL << shift, end;
	int err;

	*used = 0;
	if (start >= vol->volblocks)
		return 0;
	end = count > vol->volblocks - start ? vol->volblocks : start + count;
	for (uint64_t b = start; b < end;) {
		uint8_t *c = bitmap_chunk(vol, b >> shift, &err);
		if (!c)
			return err;
		uint64_t bit = b & (per_chunk - 1);
		uint64_t stop = end - b < per_chunk - bit ? bit + (end - b) :
				per_chunk;
		/* whole bytes where aligned, single bits at the edges */
		while (bit < stop) {
			if (!(bit & 7) && stop - bit >= 8) {
				*used += (uint64_t)__builtin_popcount(c[bit >> 3]);
				bit += 8;
			} else {
				*used += (c[bit >> 3] >> (bit & 7)) & 1;
				bit++;
			}
		}
		b = (b & ~(per_chunk - 1)) + stop;
	}
	return 0;
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
