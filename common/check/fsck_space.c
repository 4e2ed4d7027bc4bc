/*
 * Pass 8: free space: the bitmap against every block the volume
 * references (tux3_check_alloc), and the allocation conflicts replay
 * met; then the counters, once the bitmap repairs are made: the
 * countmap, the free block count and the used inode count.
 *
 * Memory: besides what tux3_check_alloc keeps (a space map of the blocks
 * in use), two blocks for the countmap check and a set of the groups whose bitmap bits
 * were found wrong (a few bytes per such group); nothing per inode.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "check/fsck_internal.h"

/* What the counters below need from the bitmap checks. */
struct pass8 {
	struct fsck *f;
	uint64_t free0;		/* the free count as found */
	/* blocks whose bitmap bit is wrong and stays wrong (not repaired):
	 * the true free count differs from the bitmap's by these */
	uint64_t leaked_left, free_in_use_left;
	/* groups whose bitmap is wrong: their countmap is not compared (a
	 * bitmap repair rewrites it from the repaired counts) */
	struct blockset bad_groups;
};

static int bad_groups_add(struct pass8 *p, uint64_t block, uint64_t count)
{
	struct tux3_volume *vol = p->f->vol;
	if (!vol_extent_valid(vol, block, count))
		return 0;
	for (uint64_t g = block >> TUX3_GROUPBITS;
	     g <= (block + count - 1) >> TUX3_GROUPBITS; g++) {
		int err = blockset_add(&p->bad_groups, g);
		if (err < 0)
			return err;
	}
	return 0;
}

static void alloc_problem(void *ctx, uint64_t block, uint64_t count,
			  enum tux3_block_problem what)
{
	struct pass8 *p = ctx;
	struct fsck *f = p->f;
	int err = 0;
	switch (what) {
	case TUX3_BLOCK_LEAKED:
		err = bad_groups_add(p, block, count);
		if (fsck_problem(f, P8_LEAKED, true,
				 FSCK_AT(.block = block, .count = count),
				 block)) {
			int64_t r = fsck_bitmap_set(f->vol, block, count,
						    false);
			fsck_fixed(f, r < 0 ? (int)r : 0);
			if (r >= 0)
				break;
		}
		p->leaked_left += count;
		break;
	case TUX3_BLOCK_FREE_IN_USE:
		err = bad_groups_add(p, block, count);
		if (fsck_problem(f, P8_FREE_IN_USE, true,
				 FSCK_AT(.block = block, .count = count),
				 block)) {
			int64_t r = fsck_bitmap_set(f->vol, block, count, true);
			fsck_fixed(f, r < 0 ? (int)r : 0);
			if (r >= 0)
				break;
		}
		p->free_in_use_left += count;
		break;
	case TUX3_BLOCK_SHARED:
		fsck_problem(f, P8_SHARED, false,
			     FSCK_AT(.block = block, .count = count), block);
		break;
	case TUX3_BLOCK_OUTSIDE:
		fsck_problem(f, P8_OUTSIDE, false,
			     FSCK_AT(.block = block, .count = count), block,
			     count);
		break;
	case TUX3_BLOCK_UNREADABLE:
		break;		/* reported by pass 3 */
	}
	if (err)
		fsck_fixed(f, err);	/* out of memory: keep the error */
}

static int pass8_conflicts(struct pass8 *p)
{
	struct fsck *f = p->f;
	unsigned n = tux3_replay_conflict_count(f->vol);
	for (unsigned i = 0; i < n && !f->stop; i++) {
		const struct replay_conflict *c = tux3_replay_conflict(f->vol, i);
		char w[200];
		int err = bad_groups_add(p, c->block, c->count);
		if (err)
			return err;
		snprintf(w, sizeof(w), "log block %" PRIu64 " offset %u: "
			 "block %" PRIu64 " (%" PRIu64 " block%s) %s",
			 c->logblock, c->offset, c->block, c->count,
			 c->count == 1 ? "" : "s",
			 c->set ? "already allocated (double allocation)" :
			 "already free (double free)");
		if (fsck_problem(f, P8_REPLAY_CONFLICT, true,
				 FSCK_AT(.block = c->block, .count = c->count),
				 w))
			fsck_fixed(f, fsck_bitmap_touch(f->vol, c->block, c->count));
	}
	return 0;
}

/*
 * The countmap (inode 2) against the bitmap.  Both are written together
 * at a unify, from the same snapshot, and lag the live state until the
 * next one: so the countmap on disk is compared with the bitmap on disk,
 * group by group (the live counts are rebuilt from the live bitmap at
 * every read-write open and never read from the countmap).  Entries
 * past the last group, in the last countmap block, must be 0.  A repair
 * makes the unify rewrite the group's countmap block from the live
 * counts, together with the live bitmap chunk: the two stay a pair.
 */
struct cmap_check {
	struct fsck *f;
	struct tux3_volume *vol;
	uint8_t *chunk;		/* on-disk bitmap block ... */
	uint64_t chunk_index;	/* ... and its index (UINT64_MAX: none) */
};

static int ondisk_group_used(struct cmap_check *c, uint64_t group,
			     uint32_t *used)
{
	struct tux3_volume *vol = c->vol;
	unsigned shift = vol->blockbits + 3;
	uint64_t start = group << TUX3_GROUPBITS;
	uint64_t end = start + (1ULL << TUX3_GROUPBITS);
	if (end > vol->volblocks)
		end = vol->volblocks;
	*used = 0;
	for (uint64_t b = start; b < end;) {
		uint64_t index = b >> shift;
		if (index != c->chunk_index) {
			int err = bitmap_ondisk_chunk(vol, index, c->chunk);
			if (err)
				return err;
			c->chunk_index = index;
		}
		uint64_t bit = b & ((1ULL << shift) - 1);
		uint64_t stop = bit + (end - b);
		if (stop > 1ULL << shift)
			stop = 1ULL << shift;
		b += stop - bit;
		/* whole bytes where aligned, single bits at the edges */
		while (bit < stop) {
			if (!(bit & 7) && stop - bit >= 8) {
				*used += (uint32_t)__builtin_popcount(
					c->chunk[bit >> 3]);
				bit += 8;
			} else {
				*used += (c->chunk[bit >> 3] >> (bit & 7)) & 1;
				bit++;
			}
		}
	}
	return 0;
}

/*
 * The next countmap block to compare, from cb on: one the countmap file
 * holds, or one whose groups the bitmap file holds a block of.  Where
 * both are holes, both say 0.
 */
static int cmap_next(struct tux3_volume *vol, const struct inode *cmap,
		     uint64_t cb, uint64_t ncblocks, uint64_t *next)
{
	unsigned shift = vol->blockbits + 3, per = vol->blocksize / 2;
	uint64_t chunk, mapped = ncblocks;
	int err = 0;
	*next = ncblocks;
	if (cb >= ncblocks)
		return 0;
	if (cmap && (err = filemap_next_mapped(vol, cmap, cb, ncblocks,
					       &mapped)))
		return err;
	uint64_t first = ((cb * per) << TUX3_GROUPBITS) >> shift;
	if ((err = bitmap_ondisk_next(vol, first, &chunk)))
		return err;
	if (chunk < vol->bitmap.nchunks)
		*next = ((chunk << shift) >> TUX3_GROUPBITS) / per;
	if (mapped < *next)
		*next = mapped;
	return 0;
}

static int pass8_countmap(struct pass8 *p)
{
	struct fsck *f = p->f;
	struct tux3_volume *vol = f->vol;
	unsigned bs = vol->blocksize, per = bs / 2;
	uint64_t ngroups = (vol->volblocks + (1ULL << TUX3_GROUPBITS) - 1) >>
			   TUX3_GROUPBITS;
	uint64_t ncblocks = (ngroups + per - 1) / per;
	struct cmap_check c = { .f = f, .vol = vol,
				.chunk_index = UINT64_MAX };
	struct inode cmap;
	bool has_cmap = true;
	int err = inode_load(vol, TUX3_COUNTMAP_INO, &cmap);

	if (err == -ENOENT) {
		/* never unified: no countmap, and no bitmap either */
		tux3_clear_error(vol);
		has_cmap = false;
	} else if (err) {
		/* an unreadable inode is pass 4's */
		tux3_clear_error(vol);
		return err == -ENOMEM ? err : 0;
	}
	uint8_t *cblk = malloc(bs);
	c.chunk = malloc(bs);
	err = cblk && c.chunk ? 0 : -ENOMEM;
	uint64_t cb;
	if (!err)
		err = cmap_next(vol, has_cmap ? &cmap : NULL, 0, ncblocks, &cb);
	for (; !err && cb < ncblocks && !f->stop;
	     err = err ? err : cmap_next(vol, has_cmap ? &cmap : NULL, cb + 1,
					 ncblocks, &cb)) {
		if (!has_cmap)
			memset(cblk, 0, bs);
		else if ((err = filemap_read_block(vol, &cmap, cb, cblk)))
			break;
		bool past_reported = false;
		for (unsigned k = 0; k < per && !err; k++) {
			uint64_t g = cb * per + k;
			uint32_t have = be16(cblk + 2 * k), want = 0;
			if (g < ngroups &&
			    (err = ondisk_group_used(&c, g, &want)))
				break;
			if (have == want || (g >= ngroups && past_reported) ||
			    (g < ngroups && blockset_has(&p->bad_groups, g)))
				continue;
			past_reported = g >= ngroups;
			if (fsck_problem(f, P8_COUNTMAP, true,
					 FSCK_AT(.block = g << TUX3_GROUPBITS,
						 .have = have, .want = want),
					 g, (uint64_t)have, (uint64_t)want))
				fsck_fixed(f, repair_countmap_rewrite(vol, g));
		}
	}
	if (err && err != -ENOMEM) {
		/* a damaged countmap or bitmap tree: pass 4 reports it */
		tux3_clear_error(vol);
		err = 0;
	}
	free(cblk);
	free(c.chunk);
	if (has_cmap)
		inode_free(&cmap);
	return err;
}

/*
 * The free count (the log's FREEBLOCKS, moved by replay) against the
 * bitmap, once this pass's bitmap repairs are made.  The count as found
 * is compared with the true one: the bitmap's, corrected by the bits
 * found wrong and left so; a bitmap repair moves the count by its own
 * arithmetic, which says nothing about the count found.  Either way a
 * repair run leaves the count the bitmap's.
 */
static int pass8_freeblocks(struct pass8 *p)
{
	struct fsck *f = p->f;
	struct tux3_volume *vol = f->vol;
	uint64_t used;
	int err = bitmap_count_used(vol, 0, vol->volblocks, &used);
	if (err)
		return err;
	uint64_t bitmap_free = vol->volblocks - used;
	uint64_t want = bitmap_free + p->leaked_left - p->free_in_use_left;
	bool fix = true;
	if (p->free0 != want)
		fix = fsck_problem(f, P8_FREEBLOCKS, true,
				   FSCK_AT(.have = p->free0, .want = want),
				   p->free0, want);
	if (fix && fsck_repairing(f) && vol->freeblocks != bitmap_free)
		repair_set_freeblocks(vol, bitmap_free);
	if (fix && p->free0 != want)
		fsck_fixed(f, 0);
	return 0;
}

/* Inodes in the inode table at and above the first normal inode: the
 * 64 reserved numbers count as used whether they exist or not. */
struct icount {
	uint64_t count;
	bool damaged;
};

static int icount_leaf(void *ctx, struct btree *bt, uint64_t blocknr,
		       const uint8_t *leaf, uint64_t lo, uint64_t hi)
{
	struct icount *c = ctx;
	uint64_t ibase = ileaf_ibase(leaf);
	unsigned count = ileaf_count(leaf);
	(void)blocknr; (void)lo; (void)hi;
	for (unsigned k = 0; k < count; k++) {
		const uint8_t *blob;
		unsigned len;
		if (ibase + k < TUX3_NORMAL_INO)
			continue;
		if (!ileaf_blob(leaf, bt->vol->blocksize, ibase + k, &blob,
				&len) && len)
			c->count++;
	}
	return 0;
}

static int icount_bad(void *ctx, struct btree *bt, int level,
		      uint64_t blocknr, int err)
{
	struct icount *c = ctx;
	(void)level; (void)blocknr; (void)err;
	c->damaged = true;
	tux3_clear_error(bt->vol);
	return 0;
}

/* inodes: what the block walk of this pass counted, or UINT64_MAX when
 * it met damage: then every blob is counted by a walk of its own. */
static int pass8_usedinodes(struct fsck *f, uint64_t inodes)
{
	static const struct btree_visit visit = { .leaf = icount_leaf,
						  .bad = icount_bad };
	struct tux3_volume *vol = f->vol;
	struct btree bt = { .vol = vol, .root = vol->iroot, .ops = &itree_ops };
	struct icount c = { .count = inodes };
	if (inodes == UINT64_MAX) {
		c.count = 0;
		int err = btree_traverse(&bt, &visit, &c);
		if (err == -ENOMEM)
			return err;
		if (err || c.damaged) {
			tux3_clear_error(vol);
			fsck_info(f, "used inode count not checked: the inode "
				  "table is damaged");
			return 0;
		}
	}
	uint64_t want = TUX3_NORMAL_INO + c.count;
	if (vol->super.usedinodes != want &&
	    fsck_problem(f, P8_USEDINODES, true,
			 FSCK_AT(.have = vol->super.usedinodes, .want = want),
			 vol->super.usedinodes, want)) {
		repair_set_usedinodes(vol, want);
		fsck_fixed(f, 0);
	}
	return 0;
}

int fsck_pass8(struct fsck *f)
{
	/* the blocks pass 4 held for the repairs go back to what the
	 * bitmap said, and this pass reports them */
	int err = fsck_shield_off(f);
	if (err)
		return err;
	struct pass8 p = { .f = f, .free0 = f->vol->freeblocks };
	uint64_t inodes = UINT64_MAX;
	err = pass8_conflicts(&p);
	if (!err && (err = check_alloc_counted(f->vol, alloc_problem, &p,
					       &inodes)) > 0)
		err = 0;
	if (!err)
		fsck_progress(f, f->vol->volblocks, f->vol->volblocks);
	/* the counters last: the bitmap repairs above change them */
	if (!err && !f->stop)
		err = pass8_countmap(&p);
	if (!err && !f->stop)
		err = pass8_freeblocks(&p);
	if (!err && !f->stop)
		err = pass8_usedinodes(f, inodes);
	blockset_free(&p.bad_groups);
	return err;
}
