/*
 * Pass 2's stand-in for a lost bitmap file (FSCK_SALVAGE_REFMAP): when
 * the inode table leaf of the volume's own inodes is lost on a volume
 * unified since mkfs, the bitmap file went with it, and the log holds
 * only the allocations since the last unify.  Before any repair
 * allocates, every block the volume's structures still reach (log
 * blocks, index nodes and leaves of every tree, data extents) is set
 * in the live bitmap: an over-count at worst (blocks of the lost inodes
 * read as free, and they are lost), which pass 8 settles when it
 * rebuilds the bitmap from what it finds in use.
 *
 * A visitor of the shared walker: it reads what fsck's own passes read
 * again later, once, in memory no larger than the bitmap itself.
 */
#include "check/fsck_internal.h"

/* What a walk of the references does with each block it meets: sets
 * it in the live bitmap, and (shield) records those it had free. */
struct refwalk {
	struct tux3_volume *vol;
	struct extent_list *shield;	/* NULL: only set the bits */
};

static int shield_block(struct refwalk *w, uint64_t b)
{
	int used = bitmap_test(w->vol, b);
	if (used)
		return used < 0 ? used : 0;
	int64_t r = bitmap_modify(w->vol, b, 1, true);
	if (r < 0)
		return (int)r;
	struct extent_list *l = w->shield;
	if (l->count && l->v[l->count - 1].block + l->v[l->count - 1].count
	    == b) {
		l->v[l->count - 1].count++;
		return 0;
	}
	return extent_list_add(l, b, 1);
}

static int mark(void *ctx, uint64_t block, uint64_t count)
{
	struct refwalk *w = ctx;
	if (!count || !vol_extent_valid(w->vol, block, count))
		return 0;	/* out of the volume: the passes report it */
	if (w->shield) {
		for (uint64_t b = block; b < block + count; b++) {
			int err = shield_block(w, b);
			if (err)
				return err;
		}
		return 0;
	}
	int64_t r = bitmap_modify(w->vol, block, count, true);
	return r < 0 && r != -ERANGE ? (int)r : 0;
}

static int ref_logblock(void *ctx, unsigned index, tux3_block_t block,
			unsigned bytes, tux3_block_t logchain)
{
	(void)index; (void)bytes; (void)logchain;
	return mark(ctx, block, 1);
}

static int ref_node(void *ctx, const struct tux3_node_info *node)
{
	return mark(ctx, node->block, 1);
}

static int ref_extent(void *ctx, tux3_ino_t ino, uint64_t logical,
		      tux3_block_t physical, uint64_t count, uint32_t version,
		      tux3_block_t leafblock)
{
	(void)ino; (void)logical; (void)version; (void)leafblock;
	return physical ? mark(ctx, physical, count) : 0;
}

/* Damage is the passes' to report; a damaged node or leaf is still
 * referenced by its parent until a repair cuts or replaces it. */
static int ref_damage(void *ctx, const struct tux3_walk_error *err)
{
	struct refwalk *w = ctx;
	tux3_clear_error(w->vol);
	if ((err->site == TUX3_SITE_NODE || err->site == TUX3_SITE_LEAF) &&
	    err->block != TUX3_NONE)
		return mark(w, err->block, 1);
	return 0;
}

static int walk_refs(struct refwalk *w)
{
	static const struct tux3_walk_ops ops = {
		.logblock = ref_logblock,
		.bnode = ref_node,
		.leaf = ref_node,
		.extent = ref_extent,
		.site_error = ref_damage,
	};
	int err = tux3_walk(w->vol, &ops, w);
	tux3_clear_error(w->vol);
	/* damage was skipped and is the passes' to report */
	return err == -ENOMEM || err == -EIO ? err : 0;
}

int fsck_bitmap_from_refs(struct tux3_volume *vol)
{
	struct refwalk w = { .vol = vol };
	return walk_refs(&w);
}

/*
 * Pass 3's repairs allocate before pass 4 holds in use what the bitmap
 * wrongly has free, and a damaged bitmap block reads as all free: the
 * allocator then gave a rebuilt index node the block of the node it
 * replaced, which the rebuild's own free then took away.  So before
 * pass 3 repairs, every block the walk reaches and the bitmap has free
 * is set and kept in f->shield, as pass 4's are, until pass 8 (which
 * reports them) begins.
 */
int fsck_shield_refs(struct fsck *f)
{
	struct refwalk w = { .vol = f->vol, .shield = &f->shield };
	return walk_refs(&w);
}
