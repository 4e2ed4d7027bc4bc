/*
 * A directory's on-disk index as tux3debug's htree shows it (doc/format.md
 * 15.5): the root's fields, whether it is stale, and each bucket once
 * with the slots that name it.  Read-only; every block is checked as a
 * lookup checks it, and the first one that fails ends the listing with
 * info->damaged and why.
 */
#include <stdio.h>
#include <stdlib.h>
#include "core.h"

static int bad(struct tux3_dir_index_info *info, const char *why,
	       uint64_t logical)
{
	info->damaged = 1;
	snprintf(info->why, sizeof(info->why), "%s (logical block %llu)",
		 why, (unsigned long long)logical);
	return 0;
}

/* Each bucket the table names, in slot order. */
static int list_buckets(struct tux3_volume *vol, const struct inode *dir,
			const uint8_t *rootblk, struct tux3_dir_index_info *info,
			tux3_dir_bucket_fn fn, void *ctx)
{
	unsigned per = dirhash_table_slots(vol->blocksize);
	uint64_t nslots = 1ull << info->depth;
	uint8_t *tbl = malloc(vol->blocksize), *blk = malloc(vol->blocksize);
	int err = tbl && blk ? 0 : -ENOMEM;
	struct dirhash_head th, bh;
	uint64_t cur = UINT64_MAX;	/* the table block in tbl */
	for (uint64_t s = 0; !err && s < nslots;) {
		uint64_t tat = dirhash_item(rootblk, (unsigned)(s / per));
		if (s / per != cur &&
		    dirhash_read(vol, dir, tat, DIRHASH_TABLE, tbl, &th)) {
			err = bad(info, "a table block is not sound", tat);
			break;
		}
		cur = s / per;
		uint64_t at = dirhash_item(tbl, (unsigned)(s % per));
		if (dirhash_read(vol, dir, at, DIRHASH_BUCKET, blk, &bh) ||
		    bh.depth > info->depth) {
			err = bad(info, "a slot names no sound bucket", at);
			break;
		}
		uint64_t span = 1ull << (info->depth - bh.depth);
		struct tux3_dir_bucket b = { .first_slot = s, .slots = span,
					     .logical = at, .depth = bh.depth,
					     .pairs = bh.count };
		info->buckets++;
		info->pairs += bh.count;
		if (fn)
			err = fn(ctx, &b);
		s += span - s % span;
	}
	free(tbl);
	free(blk);
	return err;
}

int tux3_dir_index_info(struct tux3_volume *vol, tux3_ino_t ino,
			struct tux3_dir_index_info *info,
			tux3_dir_bucket_fn fn, void *ctx)
{
	struct inode dir;
	struct dirhash_head root;
	*info = (struct tux3_dir_index_info){ .volume_generation = vol->dxgen,
		.feature = dirhash_feature(vol),
		.pairs_per_bucket = dirhash_bucket_pairs(vol->blocksize),
		.slots_per_table = dirhash_table_slots(vol->blocksize) };
	int err = inode_load_dir(vol, ino, &dir);
	if (err)
		return err;
	info->blocks = dir.size >> vol->blockbits;
	uint8_t *rootblk = malloc(vol->blocksize);
	err = rootblk ? 0 : -ENOMEM;
	if (!err && info->blocks)
		err = dir_read_block(vol, &dir, 0, rootblk);
	if (!err && info->blocks && dirhash_is_index(rootblk, vol->blocksize)) {
		info->present = 1;
		if (dirhash_decode(rootblk, vol->blocksize, ino, 0, &root) ||
		    root.kind != DIRHASH_ROOT)
			err = bad(info, "the root fails its checks", 0);
		else {
			info->depth = root.depth;
			info->generation = root.gen;
			info->seed = root.seed;
			info->table_blocks = root.count;
			info->stale = root.gen != vol->dxgen;
			if (root.count)
				err = list_buckets(vol, &dir, rootblk, info,
						   fn, ctx);
		}
	}
	free(rootblk);
	inode_free(&dir);
	return err;
}
