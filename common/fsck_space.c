/*
 * Pass 8: free space: the bitmap against every block the volume
 * references (tux3_check_alloc), and the allocation conflicts replay met.
 */
#include <inttypes.h>
#include <stdio.h>
#include "fsck_internal.h"

static void alloc_problem(void *ctx, uint64_t block, uint64_t count,
			  enum tux3_block_problem what)
{
	struct fsck *f = ctx;
	switch (what) {
	case TUX3_BLOCK_LEAKED:
		if (fsck_problem(f, P8_LEAKED, true,
				 FSCK_AT(.block = block, .count = count),
				 block)) {
			int64_t r = fsck_bitmap_set(f->vol, block, count,
						    false);
			fsck_fixed(f, r < 0 ? (int)r : 0);
		}
		break;
	case TUX3_BLOCK_FREE_IN_USE:
		if (fsck_problem(f, P8_FREE_IN_USE, true,
				 FSCK_AT(.block = block, .count = count),
				 block)) {
			int64_t r = fsck_bitmap_set(f->vol, block, count, true);
			fsck_fixed(f, r < 0 ? (int)r : 0);
		}
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
}

static void pass8_conflicts(struct fsck *f)
{
	unsigned n = tux3_replay_conflict_count(f->vol);
	for (unsigned i = 0; i < n && !f->stop; i++) {
		const struct replay_conflict *c = tux3_replay_conflict(f->vol, i);
		char w[200];
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
}

int fsck_pass8(struct fsck *f)
{
	pass8_conflicts(f);
	int err = tux3_check_alloc(f->vol, alloc_problem, f);
	if (err < 0)
		return err;
	fsck_progress(f, f->vol->volblocks, f->vol->volblocks);
	return 0;
}
