/* Free-space structures: live bitmap counts and the on-disk countmap. */
#include "fixtures.h"

/* small-unified: the countmap on disk says 90 used in group 0; after
 * replay the live bitmap holds 86 (format notes, oracle README). */
TEST(countmap_small_unified)
{
	struct tux3_volume *vol = open_oracle("small-unified");
	uint32_t ondisk, live;
	CHECK_EQ(tux3_group_counts(vol, 0, &ondisk, &live), 0);
	CHECK_EQ(ondisk, 90);
	CHECK_EQ(live, 86);
	CHECK_EQ(tux3_group_counts(vol, 2, &ondisk, &live), -ERANGE);
	tux3_close(vol);
}

/* Never unified: no countmap inode, so the on-disk count is 0. */
TEST(countmap_absent_before_unify)
{
	struct tux3_volume *vol = open_oracle("empty-4k");
	uint32_t ondisk, live;
	CHECK_EQ(tux3_group_counts(vol, 0, &ondisk, &live), 0);
	CHECK_EQ(ondisk, 0);
	CHECK_EQ(live, 4);	/* blocks 0-1, the ileaf 63, the log 64 */
	CHECK_EQ(tux3_group_counts(vol, 1, &ondisk, &live), 0);
	CHECK_EQ(live, 0);
	tux3_close(vol);
}

/* Live counts add up to volblocks - freeblocks, on every oracle. */
TEST(live_counts_match_freeblocks)
{
	static const char *names[] = { "empty-4k", "empty-1k", "empty-512",
		"empty-16k", "small-delta", "small-unified", "orphan",
		"tree-fuse" };
	for (unsigned n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
		struct tux3_volume *vol = open_oracle(names[n]);
		struct tux3_statfs sfs;
		uint64_t used = 0, groups;
		tux3_statfs(vol, &sfs);
		groups = (sfs.blocks + 8191) >> 13;
		for (uint64_t g = 0; g < groups; g++) {
			uint32_t ondisk, live;
			CHECK_EQ(tux3_group_counts(vol, g, &ondisk, &live), 0);
			used += live;
		}
		CHECK_EQ(used, sfs.blocks - sfs.bfree);
		tux3_close(vol);
	}
}

/* bitmap_count_used at unaligned edges equals bit-by-bit testing. */
TEST(count_used_edges)
{
	struct tux3_volume *vol = open_oracle("tree-fuse");
	static const uint64_t starts[] = { 0, 1, 7, 9, 63, 1000, 32760 };
	for (unsigned i = 0; i < 7; i++) {
		for (uint64_t len = 0; len < 70; len += 3) {
			uint64_t used, expect = 0;
			CHECK_EQ(bitmap_count_used(vol, starts[i], len, &used), 0);
			for (uint64_t b = starts[i]; b < starts[i] + len &&
			     b < 32768; b++)
				expect += (uint64_t)bitmap_test(vol, b);
			CHECK_EQ(used, expect);
		}
	}
	tux3_close(vol);
}

/* ---- the allocator ---- */

/* Allocations come from free space, near the goal, in runs. */
TEST(alloc_near_goal)
{
	struct tux3_volume *vol = open_oracle("small-delta");
	uint64_t block, got, free0 = vol->freeblocks;
	CHECK_EQ(bitmap_test(vol, 5000), 0);
	CHECK_EQ(balloc(vol, 5000, 10, false, &block, &got), 0);
	CHECK_EQ(block, 5000);
	CHECK_EQ(got, 10);
	CHECK_EQ(vol->freeblocks, free0 - 10);
	for (uint64_t b = 5000; b < 5010; b++)
		CHECK_EQ(bitmap_test(vol, b), 1);
	/* the next one continues the run */
	CHECK_EQ(balloc(vol, 5010, 5, false, &block, &got), 0);
	CHECK_EQ(block, 5010);
	/* a goal inside used space skips to the next free block */
	CHECK_EQ(balloc(vol, 63, 1, false, &block, &got), 0);
	CHECK_EQ(bitmap_test(vol, 63), 1);
	CHECK(block > 63);
	/* the group counts follow the bitmap */
	uint32_t ondisk, live;
	uint64_t used;
	CHECK_EQ(tux3_group_counts(vol, 0, &ondisk, &live), 0);
	CHECK_EQ(bitmap_count_used(vol, 0, 8192, &used), 0);
	CHECK_EQ(live, used);
	uint64_t gused;
	CHECK_EQ(bitmap_group_used(vol, 0, &gused), 0);
	CHECK_EQ(gused, used);
	tux3_close(vol);
}

/* A goal past the end wraps; the reserved area is never handed out. */
TEST(alloc_wraps_and_skips_reserved)
{
	struct tux3_volume *vol = open_oracle("empty-4k");
	uint64_t block, got;
	CHECK_EQ(balloc(vol, 0, 1, false, &block, &got), 0);
	CHECK(block >= 2);
	CHECK_EQ(balloc(vol, 1ULL << 40, 1, false, &block, &got), 0);
	CHECK(block >= 2 && block < 16384);
	tux3_close(vol);
}

/* Filling the volume: ordinary allocations stop at the reserve with
 * ENOSPC; privileged ones may use it; nothing is handed out twice. */
TEST(enospc_and_reserve)
{
	struct tux3_volume *vol = open_oracle("empty-512");
	uint64_t block, got, total = 0, used0;
	int err;
	CHECK_EQ(bitmap_count_used(vol, 0, 32768, &used0), 0);
	while (!(err = balloc(vol, 0, 1000, false, &block, &got)))
		total += got;
	CHECK_EQ(err, -ENOSPC);
	CHECK_EQ(vol->freeblocks, vol->reserve_blocks);
	CHECK_EQ(balloc(vol, 0, 1, true, &block, &got), 0);
	CHECK_EQ(got, 1);
	while (!(err = balloc(vol, 0, 1000, true, &block, &got)))
		total += got;
	CHECK_EQ(err, -ENOSPC);
	CHECK_EQ(vol->freeblocks, 0);
	uint64_t used;
	CHECK_EQ(bitmap_count_used(vol, 0, 32768, &used), 0);
	CHECK_EQ(used, 32768);
	/* every free block handed out once: the allocations add up */
	CHECK_EQ(used0 + total + 1, 32768);
	tux3_close(vol);
}

/* Deferred frees stay in use until the commit is durable. */
TEST(deferred_free)
{
	struct tux3_volume *vol = open_oracle("empty-4k");
	uint64_t block, got;
	CHECK_EQ(balloc(vol, 1000, 4, false, &block, &got), 0);
	CHECK_EQ(bfree_deferred(vol, block, 4), 0);
	CHECK_EQ(bitmap_test(vol, block), 1);
	CHECK_EQ(balloc_commit_done(vol), 0);
	CHECK_EQ(bitmap_test(vol, block), 0);
	CHECK_EQ(bfree_now(vol, block, 1), -EUCLEAN);	/* double free */
	CHECK_EQ(bfree_deferred(vol, 1ULL << 40, 1), -ERANGE);
	tux3_close(vol);
}

int main(void)
{
	return run_tests("balloc");
}
