/*
 * Changing a file's block map: a direct extent while the file is one run
 * from block 0 (at most 32767 blocks, as the reference makes them), else a
 * dtree of dleaves.  Blocks a change unmaps are logged as BFREE and freed
 * after the commit, or at once if this delta allocated them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "write/write.h"

#define MAX_DIRECT 32767

struct unmap_ctx {
	struct tux3_volume *vol;
	int err;
};

/* Give back blocks a mapping change released. */
static int release_blocks(struct tux3_volume *vol, uint64_t physical,
			  uint64_t count)
{
	int err = log_bfree(vol, LOG_BFREE, physical, count);
	for (uint64_t i = 0; i < count && !err; i++) {
		if (blockset_has(&vol->fresh, physical + i))
			err = bfree_now(vol, physical + i, 1);
		else
			err = bfree_deferred(vol, physical + i, 1);
	}
	return err;
}

static void unmapped(void *ctx, uint64_t physical, uint64_t count)
{
	struct unmap_ctx *u = ctx;
	if (!u->err && physical)
		u->err = release_blocks(u->vol, physical, count);
}

static struct btree dtree_of(struct tux3_volume *vol, struct inode *inode)
{
	struct btree bt = { .vol = vol, .root = root_unpack(inode->dtree),
			    .ops = &dtree_ops, .owner = inode->inum };
	return bt;
}

/* Map [logical, logical + count) in the dtree (physical 0: unmap). */
static int dtree_map(struct tux3_volume *vol, struct inode *inode,
		     uint64_t logical, uint64_t physical, uint64_t count)
{
	struct btree bt = dtree_of(vol, inode);
	struct unmap_ctx u = { vol, 0 };
	int splits = 0;

	while (count) {
		struct wpath p;
		bool moved;
		int err = btree_wprobe(&bt, logical, &p, &moved);
		if (moved)
			inode->dtree = root_pack(bt.root);
		if (err)
			return err;
		uint64_t lo = p.lv[p.depth - 1].lo, hi = p.lv[p.depth - 1].hi;
		uint64_t n = hi - logical < count ? hi - logical : count;
		err = dleaf_write_extent(wpath_leaf(vol, &p), vol->blocksize,
					 logical, physical, n, lo, hi,
					 unmapped, &u);
		if (err == -ENOSPC && splits++ < 4) {
			err = btree_split_leaf(&bt, &p, &moved);
			if (moved)
				inode->dtree = root_pack(bt.root);
			if (err)
				return err;
			continue;
		}
		if (err)
			return err;
		if (u.err)
			return u.err;
		splits = 0;
		logical += n;
		count -= n;
		if (physical)
			physical += n;
	}
	return 0;
}

/* The direct extent becomes a one-leaf dtree. */
static int direct_to_tree(struct tux3_volume *vol, struct inode *inode)
{
	struct root r = root_unpack(inode->dtree);
	struct btree bt = { .vol = vol, .ops = &dtree_ops,
			    .owner = inode->inum };
	int err = btree_create_leaf(&bt, r.block);
	if (err)
		return err;
	inode->dtree = root_pack(bt.root);
	return dtree_map(vol, inode, 0, r.block, r.count);
}

int filemap_set(struct tux3_volume *vol, struct inode *inode,
		uint64_t logical, uint64_t physical, uint64_t count)
{
	struct root r = root_unpack(inode->dtree);
	int err;

	if (!count)
		return 0;
	if (logical >= TUX3_KEY_LIMIT || count > TUX3_KEY_LIMIT - logical ||
	    (physical && !vol_extent_valid(vol, physical, count)))
		return -EFBIG;
	if (!inode->dtree) {
		if (!physical)
			return 0;	/* nothing mapped, nothing to unmap */
		if (!logical && count <= MAX_DIRECT) {
			r = (struct root){ .direct = true, .block = physical,
					   .count = (unsigned)count };
			inode->dtree = root_pack(r);
			return 0;
		}
		struct btree bt = { .vol = vol, .ops = &dtree_ops,
				    .owner = inode->inum };
		if ((err = btree_create_leaf(&bt, physical)))
			return err;
		inode->dtree = root_pack(bt.root);
		return dtree_map(vol, inode, logical, physical, count);
	}
	if (r.direct) {
		/* growing the run at its end keeps it direct */
		if (physical && logical == r.count &&
		    physical == r.block + r.count &&
		    r.count + count <= MAX_DIRECT) {
			r.count += (unsigned)count;
			inode->dtree = root_pack(r);
			return 0;
		}
		/* a new home for all of it (a small file rewritten, such as
		 * the version table) keeps it direct */
		if (physical && !logical && count >= r.count &&
		    count <= MAX_DIRECT) {
			if ((err = release_blocks(vol, r.block, r.count)))
				return err;
			r = (struct root){ .direct = true, .block = physical,
					   .count = (unsigned)count };
			inode->dtree = root_pack(r);
			return 0;
		}
		/* unmapping its tail shortens it */
		if (!physical && logical < r.count &&
		    logical + count >= r.count) {
			if ((err = release_blocks(vol, r.block + logical,
						  r.count - logical)))
				return err;
			r.count = (unsigned)logical;
			inode->dtree = r.count ? root_pack(r) : 0;
			return 0;
		}
		if (!physical && logical >= r.count)
			return 0;
		if ((err = direct_to_tree(vol, inode)))
			return err;
	}
	return dtree_map(vol, inode, logical, physical, count);
}
