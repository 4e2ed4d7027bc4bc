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

static int mark(struct tux3_volume *vol, uint64_t block, uint64_t count)
{
	if (!count || !vol_extent_valid(vol, block, count))
		return 0;	/* out of the volume: the passes report it */
	int64_t r = bitmap_modify(vol, block, count, true);
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

static int ref_damage(void *ctx, const struct tux3_walk_error *err)
{
	(void)err;
	tux3_clear_error(ctx);	/* skipped: the passes report it */
	return 0;
}

int fsck_bitmap_from_refs(struct tux3_volume *vol)
{
	static const struct tux3_walk_ops ops = {
		.logblock = ref_logblock,
		.bnode = ref_node,
		.leaf = ref_node,
		.extent = ref_extent,
		.site_error = ref_damage,
	};
	int err = tux3_walk(vol, &ops, vol);
	tux3_clear_error(vol);
	/* damage was skipped and is the passes' to report */
	return err == -ENOMEM || err == -EIO ? err : 0;
}
