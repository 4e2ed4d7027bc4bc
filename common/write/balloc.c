/*
 * Allocation: finding free runs near a goal (by the per-group used counts),
 * frees deferred until the delta that made them is durable, and the
 * bitmap and countmap written back to their files at unify.  The bitmap
 * itself, as read and as replay changes it, is bitmap.c's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "write/write.h"

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
 * Ready the allocator after replay: a reserve of about 0.2% of the volume
 * (at least 16 blocks, at most 4096) that only privileged allocations may
 * use, so that unlink and truncate can always commit on a full volume.
 * The per-group used counts live with the bitmap's chunks, made as the
 * chunks are loaded (the countmap on disk is stale between unifies).
 */
static uint64_t repair_reserve(uint64_t reserve);

int balloc_init(struct tux3_volume *vol)
{
	if (vol->bitmap.ready)
		return 0;
	vol->reserve_blocks = balloc_reserve_size(vol);
	if (vol->reserve_released)
		vol->reserve_blocks = repair_reserve(vol->reserve_blocks);
	vol->bitmap.ready = true;
	return 0;
}

uint64_t balloc_reserve_size(const struct tux3_volume *vol)
{
	uint64_t reserve = vol->volblocks / 512;
	return reserve < 16 ? 16 : reserve > 4096 ? 4096 : reserve;
}

uint64_t balloc_deferred(const struct tux3_volume *vol)
{
	uint64_t n = 0;
	for (size_t i = 0; i < vol->defer_free.count; i++)
		n += vol->defer_free.v[i].count;
	return n;
}

/*
 * The repairer's open: allocations may take three quarters of the
 * reserve, as e2fsck ignores the root-reserved blocks, so that fsck -y
 * can make /lost+found and connect what a damaged directory lost on a
 * volume that was full when the damage happened.  The last quarter (at
 * least 4 blocks) stays for what only privileged allocations may use:
 * the commits that write the repairs.
 */
static uint64_t repair_reserve(uint64_t reserve)
{
	return reserve / 4 > 4 ? reserve / 4 : 4;
}

void balloc_release_reserve(struct tux3_volume *vol)
{
	vol->reserve_released = true;
	if (vol->bitmap.ready)
		vol->reserve_blocks = repair_reserve(balloc_reserve_size(vol));
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
		uint8_t *c = bitmap_chunk(vol, b >> shift, &err);
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
			uint64_t size = group_blocks(vol, g), used;
			if ((err = bitmap_group_used(vol, g, &used)))
				return err;
			if (size - used < (pass ? 1 : want))
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
				for (uint64_t b = 0; b < *got; b++)
					overlay_drop(&vol->overlay, *block + b);
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

static int cmp_extent(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;	/* block first */
	return *x < *y ? -1 : *x > *y;
}

/*
 * The frees balloc_commit_done applies after the commit point, checked
 * before it: every extent in use in the live bitmap, no block freed
 * twice.  Found here, a fault leaves the last commit as the volume;
 * found after the superblock write, it would leave a committed delta
 * whose bookkeeping cannot be finished.
 */
int balloc_commit_check(struct tux3_volume *vol)
{
	size_t n = vol->defer_free.count;
	if (!n)
		return 0;
	size_t size = sizeof(vol->defer_free.v[0]);
	uint64_t (*v)[2] = malloc(n * size);
	if (!v)
		return -ENOMEM;
	memcpy(v, vol->defer_free.v, n * size);
	qsort(v, n, size, cmp_extent);
	int err = 0;
	for (size_t i = 0; i < n && !err; i++) {
		uint64_t block = v[i][0], count = v[i][1], used;
		if (i && v[i - 1][0] + v[i - 1][1] > block)
			err = vol_error(vol, -EUCLEAN, block, TUX3_NONE,
					TUX3_NONE, "commit refused: the delta "
					"frees block %" PRIu64 " twice", block);
		else if (!(err = bitmap_count_used(vol, block, count, &used)) &&
			 used != count)
			err = vol_error(vol, -EUCLEAN, block, TUX3_NONE,
					TUX3_NONE, "commit refused: the delta "
					"frees %" PRIu64 " blocks from %" PRIu64
					", %" PRIu64 " of them free already "
					"(double free)", count, block,
					count - used);
	}
	free(v);
	return err;
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

static bool all_zero(const uint8_t *p, unsigned size)
{
	return !p[0] && !memcmp(p, p + 1, size - 1);
}

/* Write snapshot blocks of an internal file to new blocks; a block of
 * zeroes where the file has a hole is not written. */
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
		if (!old && all_zero(snap[i], vol->blocksize))
			continue;	/* a hole stays a hole: all free */
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

/* Snapshots of file blocks for flush_file: index[i] and its bytes. */
struct snaps {
	uint64_t *index;
	uint8_t **data;
	size_t count, cap;
};

static uint8_t *snaps_add(struct snaps *s, uint64_t index, unsigned bs)
{
	if (s->count == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 16;
		uint64_t *i = realloc(s->index, ncap * sizeof(*i));
		if (i)
			s->index = i;
		uint8_t **d = realloc(s->data, ncap * sizeof(*d));
		if (d)
			s->data = d;
		if (!i || !d)
			return NULL;
		s->cap = ncap;
	}
	uint8_t *p = calloc(1, bs);
	if (p) {
		s->index[s->count] = index;
		s->data[s->count++] = p;
	}
	return p;
}

static void snaps_free(struct snaps *s)
{
	for (size_t i = 0; i < s->count; i++)
		free(s->data[i]);
	free(s->data);
	free(s->index);
}

/* Countmap block cb from the live counts: the bitmap chunks it covers
 * that exist are loaded, the holes count 0. */
static int countmap_block(struct tux3_volume *vol, uint64_t cb, uint8_t *out)
{
	unsigned per_cblock = vol->blocksize / 2;
	struct bitmap *bm = &vol->bitmap;
	uint64_t first = cb * per_cblock << TUX3_GROUPBITS, used;
	/* loads the chunks there are; then the counts are in memory */
	int err = bitmap_count_used(vol, first,
				    (uint64_t)per_cblock << TUX3_GROUPBITS,
				    &used);
	for (unsigned k = 0; k < per_cblock && !err && used; k++) {
		uint64_t g = cb * per_cblock + k;
		if (g >= bm->ngroups)
			break;
		put_be16(out + 2 * k, (uint16_t)spacemap_count(&bm->map,
			 g << TUX3_GROUPBITS, 1ULL << TUX3_GROUPBITS));
	}
	return err;
}

/*
 * The unify writes what the bitmap and countmap say at the unify mark:
 * a snapshot taken before their own new blocks are allocated (those
 * allocations are logged after the mark, and replay applies them on top).
 * Only the chunks changed since their disk copy are visited, and with
 * them the countmap blocks of their groups.
 */
int bitmap_flush(struct tux3_volume *vol)
{
	struct bitmap *bm = &vol->bitmap;
	unsigned bs = vol->blocksize, per_cblock = bs / 2;
	unsigned shift = vol->blockbits + 3;
	struct snaps snap = { 0 }, csnap = { 0 };
	int err = balloc_init(vol);
	if (err)
		return err;

	for (struct spacemap_chunk *c = spacemap_next(&bm->map, 0); c && !err;
	     c = spacemap_next(&bm->map, c->index + 1)) {
		if (!(c->flags & BITMAP_DIRTY))
			continue;
		uint8_t *p = snaps_add(&snap, c->index, bs);
		if (!p) {
			err = -ENOMEM;
			break;
		}
		memcpy(p, c->bits, bs);
		c->flags &= (uint8_t)~BITMAP_DIRTY;
		/* the countmap blocks of the groups this chunk covers */
		uint64_t g0 = (c->index << shift) >> TUX3_GROUPBITS;
		uint64_t g1 = (((c->index + 1) << shift) - 1) >> TUX3_GROUPBITS;
		for (uint64_t cb = g0 / per_cblock; cb <= g1 / per_cblock &&
		     !err; cb++) {
			if (cb * per_cblock >= bm->ngroups ||
			    (csnap.count && csnap.index[csnap.count - 1] >= cb))
				continue;
			if (!(p = snaps_add(&csnap, cb, bs)))
				err = -ENOMEM;
		}
	}
	for (size_t i = 0; i < csnap.count && !err; i++)
		err = countmap_block(vol, csnap.index[i], csnap.data[i]);
	if (!err)
		err = flush_file(vol, TUX3_BITMAP_INO, snap.data, snap.index,
				 snap.count);
	if (!err)
		err = flush_file(vol, TUX3_COUNTMAP_INO, csnap.data,
				 csnap.index, csnap.count);
	snaps_free(&snap);
	snaps_free(&csnap);
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
	uint64_t used;
	if (bitmap_group_used(vol, cur, &used) ||
	    used * 2 <= group_blocks(vol, cur))
		return vol->alloc_cursor;
	uint64_t first = cur + 1;
	uint64_t best = first % bm->ngroups, best_free = 0;
	unsigned span = bm->ngroups < 64 ? (unsigned)bm->ngroups : 64;
	for (unsigned i = 0; i < span; i++) {
		uint64_t g = (first + i) % bm->ngroups;
		if (bitmap_group_used(vol, g, &used))
			return vol->alloc_cursor;
		uint64_t free = group_blocks(vol, g) - used;
		if (free > best_free) {
			best = g;
			best_free = free;
		}
	}
	uint64_t goal = best << TUX3_GROUPBITS;
	return goal < vol->reserved_blocks ? vol->reserved_blocks : goal;
}
