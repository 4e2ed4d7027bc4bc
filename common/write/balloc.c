/*
 * Free space.  The bitmap (inode 1) has one bit per block, LSB first, 1 =
 * in use; the countmap (inode 2) a be16 used count per group of 2^13
 * blocks.  Both reach the disk only at a unify: the live bitmap is the
 * on-disk one plus the log's allocation records, built here in memory one
 * bitmap block ("chunk") at a time as replay touches it.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "internal.h"

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

static uint8_t *chunk_get(struct tux3_volume *vol, uint64_t index, int *err)
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
	uint8_t *c = chunk_get(vol, block >> shift, &err);
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
		uint8_t *c = chunk_get(vol, b >> shift, &err);
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
		uint8_t *c = chunk_get(vol, chunk, &err);
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
		uint8_t *c = chunk_get(vol, b >> shift, &err);
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

/* ---- the allocator ---- */

int extent_list_add(struct extent_list *l, uint64_t block, uint64_t count)
{
	if (l->count == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 64;
		void *n = realloc(l->v, ncap * sizeof(*l->v));
		if (!n)
			return -ENOMEM;
		l->v = n;
		l->cap = ncap;
	}
	l->v[l->count].block = block;
	l->v[l->count].count = count;
	l->count++;
	return 0;
}

void extent_list_free(struct extent_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/*
 * Ready the allocator after replay: per-group used counts from the live
 * bitmap (the countmap on disk is stale between unifies), and a reserve
 * of about 0.2% of the volume (at least 16 blocks, at most 4096) that only
 * privileged allocations may use, so that unlink and truncate can always
 * commit on a full volume.
 */
int balloc_init(struct tux3_volume *vol)
{
	struct bitmap *bm = &vol->bitmap;
	uint64_t groupsize = 1ULL << TUX3_GROUPBITS;

	if (bm->groupused)
		return 0;
	bm->ngroups = (vol->volblocks + groupsize - 1) >> TUX3_GROUPBITS;
	uint32_t *g = calloc(bm->ngroups, sizeof(*g));
	if (!g)
		return -ENOMEM;
	for (uint64_t i = 0; i < bm->ngroups; i++) {
		uint64_t used;
		int err = bitmap_count_used(vol, i << TUX3_GROUPBITS, groupsize,
					    &used);
		if (err) {
			free(g);
			return err;
		}
		g[i] = (uint32_t)used;
	}
	bm->groupused = g;
	uint64_t reserve = vol->volblocks / 512;
	vol->reserve_blocks = reserve < 16 ? 16 : reserve > 4096 ? 4096 :
			      reserve;
	return 0;
}

static uint64_t group_blocks(const struct tux3_volume *vol, uint64_t group)
{
	uint64_t start = group << TUX3_GROUPBITS, size = 1ULL << TUX3_GROUPBITS;
	return vol->volblocks - start < size ? vol->volblocks - start : size;
}

/* First free run in [start, end) of at most count blocks.  Scans the
 * bitmap a byte at a time where bytes are full, so that crossing a used
 * region costs a few instructions per 8 blocks. */
static int find_run(struct tux3_volume *vol, uint64_t start, uint64_t end,
		    uint64_t count, uint64_t *block, uint64_t *got)
{
	unsigned shift = vol->blockbits + 3;
	uint64_t per_chunk = 1ULL << shift;
	uint64_t b = start, run_start = 0, n = 0;
	int err;

	while (b < end) {
		uint8_t *c = chunk_get(vol, b >> shift, &err);
		if (!c)
			return err;
		uint64_t bit = b & (per_chunk - 1);
		uint64_t stop = end - b < per_chunk - bit ? bit + (end - b) :
				per_chunk;
		while (bit < stop) {
			if (!n && !(bit & 7) && stop - bit >= 8 &&
			    c[bit >> 3] == 0xff) {
				bit += 8;	/* a full byte: nothing here */
				continue;
			}
			bool used = (c[bit >> 3] >> (bit & 7)) & 1;
			uint64_t here = (b & ~(per_chunk - 1)) + bit;
			if (!used) {
				if (!n)
					run_start = here;
				if (++n == count)
					goto found;
			} else if (n) {
				goto found;
			}
			bit++;
		}
		b = (b & ~(per_chunk - 1)) + stop;
	}
	if (!n)
		return 0;
found:
	*block = run_start;
	*got = n;
	return 1;
}

/*
 * Two passes over the groups from the goal's group on, wrapping: the
 * first skips groups with less free space than min(count, groupsize/4),
 * so a large request does not fragment into crowded groups; the second
 * takes any free block.  The reserved area (bytes 0..8191) is never
 * handed out.
 */
int balloc(struct tux3_volume *vol, uint64_t goal, uint64_t count,
	   bool privileged, uint64_t *block, uint64_t *got)
{
	struct bitmap *bm = &vol->bitmap;
	int err = balloc_init(vol);

	if (err)
		return err;
	if (!count)
		return -EINVAL;
	uint64_t avail = vol->freeblocks > vol->reserve_blocks || privileged ?
			 vol->freeblocks - (privileged ? 0 : vol->reserve_blocks) :
			 0;
	if (!avail)
		return -ENOSPC;
	if (count > avail)
		count = avail;
	if (goal >= vol->volblocks || goal < vol->reserved_blocks)
		goal = vol->reserved_blocks;
	uint64_t want = count < (1ULL << TUX3_GROUPBITS) / 4 ? count :
			(1ULL << TUX3_GROUPBITS) / 4;
	for (int pass = 0; pass < 2; pass++) {
		uint64_t first = goal >> TUX3_GROUPBITS;
		for (uint64_t i = 0; i <= bm->ngroups; i++) {
			uint64_t g = (first + i) % bm->ngroups;
			uint64_t size = group_blocks(vol, g);
			if (size - bm->groupused[g] < (pass ? 1 : want))
				continue;
			uint64_t start = g << TUX3_GROUPBITS;
			uint64_t from = i == 0 ? goal : start;
			uint64_t end = start + size;
			if (i == bm->ngroups) {	/* the goal group's head */
				if (goal == start)
					break;
				from = start;
				end = goal;
			}
			if (from < vol->reserved_blocks)
				from = vol->reserved_blocks;
			int found = find_run(vol, from, end, count, block, got);
			if (found < 0)
				return found;
			if (found) {
				int64_t c = bitmap_modify(vol, *block, *got,
							  true);
				/* no image of an earlier life of these blocks
				 * may shadow what is written to them now */
				for (uint64_t i = 0; i < *got; i++)
					overlay_drop(&vol->overlay, *block + i);
				vol->alloc_cursor = *block + *got;
				return c < 0 ? (int)c : c ? -EUCLEAN : 0;
			}
		}
	}
	return -ENOSPC;
}

int bfree_now(struct tux3_volume *vol, uint64_t block, uint64_t count)
{
	if (!vol_extent_valid(vol, block, count))
		return -ERANGE;
	/* a freed block's image must neither be written nor read again */
	for (uint64_t i = 0; i < count; i++)
		overlay_drop(&vol->overlay, block + i);
	int64_t c = bitmap_modify(vol, block, count, false);
	return c < 0 ? (int)c : c ? vol_error(vol, -EUCLEAN, block, TUX3_NONE,
					       TUX3_NONE, "double free of %"
					       PRIu64 " blocks", count) : 0;
}

int bfree_deferred(struct tux3_volume *vol, uint64_t block, uint64_t count)
{
	if (!vol_extent_valid(vol, block, count))
		return -ERANGE;
	return extent_list_add(&vol->defer_free, block, count);
}

int balloc_commit_done(struct tux3_volume *vol)
{
	int err = 0;
	for (size_t i = 0; i < vol->defer_free.count && !err; i++)
		err = bfree_now(vol, vol->defer_free.v[i].block,
				vol->defer_free.v[i].count);
	vol->defer_free.count = 0;
	return err;
}

/* ---- writing the bitmap and countmap at unify ---- */

/* An internal file (bitmap, countmap): mode 0, one link, the largest
 * size, as the reference creates them at the first unify. */
int internal_inode(struct tux3_volume *vol, tux3_ino_t inum,
		   struct inode *inode)
{
	int err = inode_load(vol, inum, inode);
	if (err != -ENOENT)
		return err;
	tux3_clear_error(vol);
	memset(inode, 0, sizeof(*inode));
	inode->inum = inum;
	inode->present = 1u << ATTR_MODE_OWNER | 1u << ATTR_CTIME_SIZE |
			 1u << ATTR_LINK_COUNT | 1u << ATTR_MTIME;
	inode->nlink = 1;
	inode->size = iattr_max_size(vol->blockbits);
	inode->ctime = inode->mtime = vol_now(vol);
	return 0;
}

/* Write snapshot blocks of an internal file to new blocks. */
static int flush_file(struct tux3_volume *vol, tux3_ino_t inum,
		      uint8_t **snap, const uint64_t *index, size_t n)
{
	struct inode inode;
	int err = internal_inode(vol, inum, &inode);
	if (err)
		return err;
	for (size_t i = 0; i < n && !err; i++) {
		uint64_t block, got, old, run;
		if ((err = filemap_lookup(vol, &inode, index[i], &old, &run)))
			break;
		if ((err = balloc(vol, old ? old : index[i] + inum, 1, true,
				  &block, &got)) ||
		    (err = log_balloc(vol, block, 1)) ||
		    (err = blockset_add(&vol->fresh, block)) < 0)
			break;
		err = dev_pwrite(&vol->dev, snap[i], vol->blocksize,
				 block << vol->blockbits);
		if (err) {
			err = vol_error(vol, err, block, inum, TUX3_NONE,
					"cannot write block");
			break;
		}
		inode.present |= 1u << ATTR_DATA_BTREE;
		err = filemap_set(vol, &inode, index[i], block, 1);
	}
	if (!err)
		err = inode_store(vol, &inode);
	if (!err && inum == TUX3_BITMAP_INO) {
		if (vol->has_bitmap_inode)
			inode_free(&vol->bitmap_inode);
		vol->bitmap_inode = inode;	/* keeps the blob */
		vol->has_bitmap_inode = true;
		return 0;
	}
	inode_free(&inode);
	return err;
}

/*
 * The unify writes what the bitmap and countmap say at the unify mark:
 * a snapshot taken before their own new blocks are allocated (those
 * allocations are logged after the mark, and replay applies them on top).
 */
int bitmap_flush(struct tux3_volume *vol)
{
	struct bitmap *bm = &vol->bitmap;
	unsigned bs = vol->blocksize, per_cblock = bs / 2;
	size_t nsnap = 0, ncsnap = 0;
	uint64_t *index = NULL, *cindex = NULL;
	uint8_t **snap = NULL, **csnap = NULL;
	int err = balloc_init(vol);
	if (err)
		return err;

	size_t ncblocks = (size_t)((bm->ngroups + per_cblock - 1) / per_cblock);
	index = calloc(bm->nchunks + 1, sizeof(*index));
	snap = calloc(bm->nchunks + 1, sizeof(*snap));
	cindex = calloc(ncblocks + 1, sizeof(*cindex));
	csnap = calloc(ncblocks + 1, sizeof(*csnap));
	uint8_t *cdirty = calloc(ncblocks + 1, 1);
	if (!index || !snap || !cindex || !csnap || !cdirty) {
		err = -ENOMEM;
		goto out;
	}
	uint64_t groups_per_chunk = ((uint64_t)bs * 8) >> TUX3_GROUPBITS;
	if (!groups_per_chunk)
		groups_per_chunk = 1;
	for (size_t i = 0; i < bm->nchunks; i++) {
		if (!bm->dirty[i] || !bm->chunks[i])
			continue;
		if (!(snap[nsnap] = malloc(bs))) {
			err = -ENOMEM;
			goto out;
		}
		memcpy(snap[nsnap], bm->chunks[i], bs);
		index[nsnap++] = i;
		bm->dirty[i] = 0;
		/* the groups this chunk covers: their countmap blocks */
		uint64_t g0 = ((uint64_t)i * bs * 8) >> TUX3_GROUPBITS;
		for (uint64_t g = g0; g < g0 + groups_per_chunk &&
		     g < bm->ngroups; g++)
			cdirty[g / per_cblock] = 1;
	}
	for (size_t c = 0; c < ncblocks; c++) {
		if (!cdirty[c])
			continue;
		if (!(csnap[ncsnap] = calloc(1, bs))) {
			err = -ENOMEM;
			goto out;
		}
		for (unsigned k = 0; k < per_cblock; k++) {
			uint64_t g = (uint64_t)c * per_cblock + k;
			if (g < bm->ngroups)
				put_be16(csnap[ncsnap] + 2 * k,
					 (uint16_t)bm->groupused[g]);
		}
		cindex[ncsnap++] = c;
	}
	if (!(err = flush_file(vol, TUX3_BITMAP_INO, snap, index, nsnap)))
		err = flush_file(vol, TUX3_COUNTMAP_INO, csnap, cindex, ncsnap);
out:
	for (size_t i = 0; i < nsnap; i++)
		free(snap[i]);
	for (size_t i = 0; i < ncsnap; i++)
		free(csnap[i]);
	free(snap);
	free(index);
	free(csnap);
	free(cindex);
	free(cdirty);
	return err;
}

/*
 * Where a new directory's first block should go: once the cursor's group
 * is more than half full, the emptiest of the next 64 groups, so
 * directories spread over the volume and the files written into them
 * follow.
 */
uint64_t balloc_dir_goal(struct tux3_volume *vol)
{
	struct bitmap *bm = &vol->bitmap;
	if (balloc_init(vol) || !bm->ngroups)
		return vol->alloc_cursor;
	/* while the current group is at most half full, stay: moving
	 * costs locality and time for little gain */
	uint64_t cur = (vol->alloc_cursor >> TUX3_GROUPBITS) % bm->ngroups;
	if (bm->groupused[cur] * 2 <= group_blocks(vol, cur))
		return vol->alloc_cursor;
	uint64_t first = cur + 1;
	uint64_t best = first % bm->ngroups, best_free = 0;
	unsigned span = bm->ngroups < 64 ? (unsigned)bm->ngroups : 64;
	for (unsigned i = 0; i < span; i++) {
		uint64_t g = (first + i) % bm->ngroups;
		uint64_t free = group_blocks(vol, g) - bm->groupused[g];
		if (free > best_free) {
			best = g;
			best_free = free;
		}
	}
	uint64_t goal = best << TUX3_GROUPBITS;
	return goal < vol->reserved_blocks ? vol->reserved_blocks : goal;
}
