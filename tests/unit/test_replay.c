/* Layer: replay.c and balloc.c -- log chain loading, the two replay
 * stages, the live bitmap and free count. */
#include "fixtures.h"

/* ---- crafted volumes: 4K blocks, 64 blocks, ileaf at 5, log at 7.. ---- */

#define VB 64
static uint8_t *img;

static uint8_t *blk(uint64_t b) { return img + (b << 12); }

static void img_init(void)
{
	img = calloc(VB, 4096);
	CHECK(img);
	uint8_t *sb = img + 4096;
	memcpy(sb, tux3_magic_2014, 8);
	put_be16(sb + 24, 12);
	put_be64(sb + 32, VB);
	put_be64(sb + 40, (1ULL << 48) | 5);
	put_be64(sb + 56, 64);
	put_be32(sb + 84, 1);
	uint8_t *l = blk(5);
	put_be16(l, TUX3_MAGIC_ILEAF);
	put_be16(l + 2, 1);
	put_be64(l + 8, TUX3_ROOT_INO);
	put_be16(l + 16, ATTR_MODE_OWNER << 12);
	put_be32(l + 18, 040755);
	put_be16(l + 30, ATTR_LINK_COUNT << 12);
	put_be32(l + 32, 2);
	put_be16(l + 4094, 20);
}

/* Append a log block at b chained to prev; returns the payload cursor. */
static uint8_t *log_block(uint64_t b, uint64_t prev)
{
	uint8_t *g = blk(b);
	put_be16(g, TUX3_MAGIC_LOG);
	put_be64(g + 8, prev);
	return g + LOG_HEADER_SIZE;
}

static uint8_t *rec_count(uint8_t *p, unsigned code, uint32_t count,
			  uint64_t block)
{
	p[0] = (uint8_t)code;
	put_be32(p + 1, count);
	put_be48(p + 5, block);
	return p + 11;
}

static uint8_t *rec_2(uint8_t *p, unsigned code, uint64_t a, uint64_t b)
{
	p[0] = (uint8_t)code;
	put_be48(p + 1, a);
	put_be48(p + 7, b);
	return p + 13;
}

static void log_end(uint64_t b, uint8_t *p)
{
	put_be16(blk(b) + 2, (uint16_t)(p - blk(b) - LOG_HEADER_SIZE));
}

static void set_log(uint64_t chain, uint32_t count)
{
	put_be64(img + 4096 + 88, chain);
	put_be32(img + 4096 + 96, count);
}

/* A fresh crafted volume whose log is the one block 7; returns its
 * payload cursor. */
static uint8_t *one_block_log(void)
{
	img_init();
	return log_block(7, 0);
}

static const char *img_write(void)
{
	return scratch_image(img, VB * 4096);
}

static int open_msg(struct tux3_volume **vol, char *msg, size_t len)
{
	return tux3_open_err(img_write(), TUX3_OPEN_RDONLY, vol, msg, len);
}

/* Open the crafted volume, which must succeed. */
static struct tux3_volume *open_crafted(void)
{
	struct tux3_volume *vol;
	char msg[512];
	int err = open_msg(&vol, msg, sizeof(msg));
	if (err)
		fprintf(stderr, "%s\n", msg);
	CHECK_EQ(err, 0);
	return vol;
}

TEST(crafted_two_block_chain)
{
	uint8_t *p = one_block_log();
	p = rec_count(p, LOG_BALLOC, 2, 0);
	p = rec_count(p, LOG_BALLOC, 1, 5);
	*p++ = LOG_DELTA;
	log_end(7, p);
	p = log_block(9, 7);
	*p++ = LOG_DELTA;
	p = rec_count(p, LOG_BALLOC, 10, 20);
	p = rec_count(p, LOG_BFREE, 3, 22);
	p = rec_2(p, LOG_LEAF_REDIRECT, 5, 6);
	p = rec_count(p, LOG_BFREE_ON_UNIFY, 1, 30);
	log_end(9, p);
	set_log(9, 2);
	struct tux3_volume *vol = open_crafted();
	CHECK_EQ(vol->logcount, 2);
	CHECK_EQ(vol->log[0].blocknr, 7);	/* chronological */
	CHECK_EQ(vol->log[1].blocknr, 9);
	CHECK_EQ(vol->unify_index, -1);
	/* 64 - 2 - 1 - 10 + 3 (leaf 5 -> 6: net 0) - 2 log blocks */
	CHECK_EQ(vol->freeblocks, 64 - 2 - 1 - 10 + 3 - 2);
	CHECK_EQ(tux3_block_is_used(vol, 5), 0);
	CHECK_EQ(tux3_block_is_used(vol, 6), 1);
	CHECK_EQ(tux3_block_is_used(vol, 7), 1);
	CHECK_EQ(tux3_block_is_used(vol, 9), 1);
	CHECK_EQ(tux3_block_is_used(vol, 21), 1);
	CHECK_EQ(tux3_block_is_used(vol, 22), 0);
	CHECK_EQ(tux3_block_is_used(vol, 24), 0);
	CHECK_EQ(tux3_block_is_used(vol, 29), 1);
	CHECK_EQ(tux3_block_is_used(vol, 30), 0);	/* freed only later */
	CHECK_EQ(tux3_warning_count(vol), 0);
	/* deferred: BFREE_ON_UNIFY 30 and both log blocks */
	CHECK_EQ(vol->ndeunify, 3);
	tux3_close(vol);
	free(img);
}

TEST(crafted_unify_skips_older_records)
{
	uint8_t *p = one_block_log();
	p = rec_count(p, LOG_BALLOC, 40, 20);	/* before the unify */
	log_end(7, p);
	p = log_block(8, 7);
	p = rec_count(p, LOG_BALLOC, 1, 60);	/* before the unify */
	*p++ = LOG_UNIFY;
	p[0] = LOG_FREEBLOCKS;
	put_be48(p + 1, 50);
	p += 7;
	p = rec_count(p, LOG_BALLOC, 1, 61);
	*p++ = LOG_UNIFY;			/* a second one: not the start */
	p = rec_count(p, LOG_BALLOC, 1, 62);
	log_end(8, p);
	set_log(8, 2);
	struct tux3_volume *vol = open_crafted();
	CHECK_EQ(vol->unify_index, 1);
	CHECK_EQ(vol->unify_offset, 16 + 11);
	/* FREEBLOCKS 50, BALLOC 61 and 62, then both log blocks */
	CHECK_EQ(vol->freeblocks, 50 - 2 - 2);
	CHECK_EQ(tux3_block_is_used(vol, 20), 0);	/* not replayed */
	CHECK_EQ(tux3_block_is_used(vol, 60), 0);
	CHECK_EQ(tux3_block_is_used(vol, 61), 1);
	CHECK_EQ(tux3_block_is_used(vol, 62), 1);
	CHECK_EQ(tux3_block_is_used(vol, 7), 1);	/* whole chain marked */
	CHECK_EQ(tux3_block_is_used(vol, 8), 1);
	tux3_close(vol);
	free(img);
}

TEST(crafted_conflicts_are_warnings)
{
	uint8_t *p = one_block_log();
	p = rec_count(p, LOG_BALLOC, 2, 20);
	p = rec_count(p, LOG_BALLOC, 3, 21);	/* 21 already set */
	p = rec_count(p, LOG_BFREE, 1, 40);	/* 40 already clear */
	p = rec_count(p, LOG_BALLOC, 1, 7);	/* the log block itself */
	log_end(7, p);
	set_log(7, 1);
	struct tux3_volume *vol = open_crafted();
	CHECK_EQ(tux3_warning_count(vol), 3);
	CHECK(strstr(tux3_warning(vol, 0), "block 21"));
	CHECK(strstr(tux3_warning(vol, 0), "already allocated"));
	CHECK(strstr(tux3_warning(vol, 1), "block 40"));
	CHECK(strstr(tux3_warning(vol, 1), "double free"));
	CHECK(strstr(tux3_warning(vol, 2), "log block itself"));
	CHECK(tux3_warning(vol, 3) == NULL);
	CHECK_EQ(vol->replay_conflicts, 3);
	/* each bit counted once: 20..23, 7 */
	CHECK_EQ(vol->freeblocks, 64 - 5);
	tux3_close(vol);
	free(img);
}

TEST(crafted_bnode_records)
{
	/* a depth-2 itree whose root bnode exists only in the log */
	img_init();
	put_be64(img + 4096 + 40, (2ULL << 48) | 10);
	uint8_t *p = log_block(7, 0);
	p[0] = LOG_BNODE_ROOT;
	p[1] = 1;
	put_be48(p + 2, 10);
	put_be48(p + 8, 5);
	put_be48(p + 14, 0);
	put_be48(p + 20, 0);
	p += 26;
	/* a second leaf for inums >= 1000 */
	uint8_t *l = blk(12);
	put_be16(l, TUX3_MAGIC_ILEAF);
	put_be16(l + 2, 1);
	put_be64(l + 8, 1000);
	put_be16(l + 16, ATTR_MODE_OWNER << 12);
	put_be32(l + 18, 0100600);
	put_be16(l + 4094, 14);
	p[0] = LOG_BNODE_ADD;
	put_be48(p + 1, 10);
	put_be48(p + 7, 12);
	put_be48(p + 13, 1000);
	p += 19;
	/* redirect the root to 11, then point entry 1000 at a copy (13) */
	memcpy(blk(13), blk(12), 4096);
	p = rec_2(p, LOG_BNODE_REDIRECT, 10, 11);
	p[0] = LOG_BNODE_UPDATE;
	put_be48(p + 1, 11);
	put_be48(p + 7, 13);
	put_be48(p + 13, 1000);
	p += 19;
	log_end(7, p);
	set_log(7, 1);
	put_be64(img + 4096 + 40, (2ULL << 48) | 11);
	/* block 12 on disk is garbage-free but the live tree must use 13 */
	put_be32(blk(12) + 18, 0100777);
	struct tux3_volume *vol = open_crafted();
	const uint8_t *root = overlay_find(&vol->overlay, 11, NULL);
	CHECK(root);
	CHECK_EQ(bnode_count(root), 2);
	CHECK_EQ(bnode_key(root, 0), 0);
	CHECK_EQ(bnode_child(root, 0), 5);
	CHECK_EQ(bnode_key(root, 1), 1000);
	CHECK_EQ(bnode_child(root, 1), 13);
	const uint8_t *old = overlay_find(&vol->overlay, 10, NULL);
	CHECK(old);
	CHECK_EQ(bnode_child(old, 1), 12);	/* the old image unchanged */
	struct tux3_stat st;
	CHECK_EQ(tux3_stat(vol, 1000, &st), 0);
	CHECK_EQ(st.mode, 0100600);
	CHECK_EQ(tux3_stat(vol, TUX3_ROOT_INO, &st), 0);
	CHECK_EQ(st.mode, 040755);
	/* BNODE_ROOT 10 and REDIRECT new 11 allocate; the log block too */
	CHECK_EQ(tux3_block_is_used(vol, 10), 1);
	CHECK_EQ(tux3_block_is_used(vol, 11), 1);
	CHECK_EQ(vol->freeblocks, 64 - 3);
	tux3_close(vol);
	free(img);
}

static void expect_log_error(const char *what)
{
	struct tux3_volume *vol = (void *)1;
	char msg[512];
	CHECK_EQ(open_msg(&vol, msg, sizeof(msg)), -EUCLEAN);
	CHECK(vol == NULL);
	if (!strstr(msg, what))
		fprintf(stderr, "'%s' lacks '%s'\n", msg, what);
	CHECK(strstr(msg, what));
	free(img);
}

/* Block 7's payload ends at end and opening fails naming what. */
static void expect_block_error(uint8_t *end, const char *what)
{
	log_end(7, end);
	set_log(7, 1);
	expect_log_error(what);
}

TEST(crafted_invalid_code)
{
	uint8_t *p = one_block_log();
	*p++ = LOG_DELTA;
	*p++ = 0x47;
	expect_block_error(p, "block 7: offset 17: invalid log code 0x47");
	p = one_block_log();
	*p++ = 0x32;
	expect_block_error(p, "invalid log code 0x32");
}

TEST(crafted_record_overrun)
{
	uint8_t *p = one_block_log();
	p = rec_count(p, LOG_BALLOC, 1, 20);
	expect_block_error(p - 1, "runs past");	/* payload ends one byte early */
}

TEST(crafted_bad_ranges)
{
	uint8_t *p = one_block_log();
	p = rec_count(p, LOG_BALLOC, 0, 20);
	expect_block_error(p, "outside the volume");
	p = one_block_log();
	p = rec_count(p, LOG_BALLOC, 5, 60);	/* 60..64 past 64 blocks */
	expect_block_error(p, "outside the volume");
	p = one_block_log();
	p = rec_2(p, LOG_LEAF_REDIRECT, 5, 64);
	expect_block_error(p, "outside the volume");
	p = one_block_log();
	p[0] = LOG_FREEBLOCKS;
	put_be48(p + 1, 65);
	expect_block_error(p + 7, "FREEBLOCKS 65");
	p = one_block_log();
	p[0] = LOG_ORPHAN_ADD;
	expect_block_error(p + 9, "inode 0");
}

TEST(crafted_chain_errors)
{
	/* a chain that loops */
	img_init();
	uint8_t *p = log_block(7, 8);
	*p++ = LOG_DELTA;
	log_end(7, p);
	p = log_block(8, 7);
	*p++ = LOG_DELTA;
	log_end(8, p);
	set_log(8, 3);
	expect_log_error("links back to block 8");
	/* a chain leaving the volume */
	img_init();
	p = log_block(7, 100);
	*p++ = LOG_DELTA;
	log_end(7, p);
	set_log(7, 2);
	expect_log_error("outside the volume");
	/* a block without the log magic */
	p = one_block_log();
	log_end(7, p);
	set_log(7, 1);
	put_be16(blk(7), TUX3_MAGIC_BNODE);
	expect_log_error("bad log block magic");
	/* logcount 1 never follows the chain past the first block */
	img_init();
	p = log_block(7, 100);
	*p++ = LOG_DELTA;
	log_end(7, p);
	set_log(7, 1);
	struct tux3_volume *vol = open_crafted();
	tux3_close(vol);
	free(img);
}

TEST(crafted_noreplay_ignores_log)
{
	uint8_t *p = one_block_log();
	*p++ = 0x47;	/* damaged log */
	log_end(7, p);
	set_log(7, 1);
	struct tux3_volume *vol;
	const char *path = img_write();
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), -EUCLEAN);
	CHECK_EQ(tux3_open(path, TUX3_OPEN_NOREPLAY, &vol), 0);
	CHECK(!vol->replayed);
	CHECK_EQ(vol->freeblocks, 64);	/* no bitmap on disk */
	struct tux3_stat st;
	CHECK_EQ(tux3_stat(vol, TUX3_ROOT_INO, &st), 0);
	tux3_close(vol);
	free(img);
}

/* ---- the oracle volumes ---- */

static bool in_runs(uint64_t b, const uint64_t (*runs)[2], unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (b >= runs[i][0] && b <= runs[i][1])
			return true;
	return false;
}

TEST(small_unified_live_bitmap)
{
	struct tux3_volume *vol = open_oracle_mode("small-unified",
					      TUX3_OPEN_RDONLY);
	static const uint64_t live[][2] = { { 0, 1 }, { 4, 6 }, { 63, 63 },
		{ 66, 67 }, { 69, 143 }, { 147, 149 } };
	uint64_t used = 0;
	for (uint64_t b = 0; b < 16384; b++) {
		int r = tux3_block_is_used(vol, b);
		CHECK(r >= 0);
		if (r != in_runs(b, live, 6))
			fprintf(stderr, "block %" PRIu64 ": %d\n", b, r);
		CHECK_EQ(r, in_runs(b, live, 6));
		used += (uint64_t)r;
	}
	CHECK_EQ(16384 - used, 16298);
	CHECK_EQ(vol->freeblocks, 16298);
	CHECK(vol->has_bitmap_inode);
	CHECK_EQ(vol->unify_index, 0);
	CHECK_EQ(tux3_warning_count(vol), 0);
	tux3_close(vol);
}

TEST(small_unified_noreplay_bitmap)
{
	struct tux3_volume *vol = open_oracle_mode("small-unified",
					      TUX3_OPEN_NOREPLAY);
	static const uint64_t disk[][2] = { { 0, 1 }, { 4, 7 }, { 63, 146 } };
	for (uint64_t b = 0; b < 16384; b++)
		CHECK_EQ(tux3_block_is_used(vol, b), in_runs(b, disk, 3));
	/* 90 used, as the on-disk countmap says */
	CHECK_EQ(vol->freeblocks, 16384 - 90);
	CHECK(!vol->replayed);
	tux3_close(vol);
}

TEST(corrupt_bitmap_block_4000)
{
	struct tux3_volume *vol = open_oracle_mode("corrupt-bitmap",
					      TUX3_OPEN_RDONLY);
	CHECK_EQ(tux3_block_is_used(vol, 4000), 1);
	CHECK_EQ(tux3_block_is_used(vol, 3999), 0);
	CHECK_EQ(tux3_block_is_used(vol, 4001), 0);
	CHECK_EQ(vol->freeblocks, 16298);	/* from FREEBLOCKS, not bits */
	CHECK_EQ(tux3_warning_count(vol), 0);
	tux3_close(vol);
}

TEST(corrupt_bitmap_alloc_warning)
{
	struct tux3_volume *vol = open_oracle_mode("corrupt-bitmap-alloc",
					      TUX3_OPEN_RDONLY);
	CHECK_EQ(tux3_warning_count(vol), 1);
	const char *w = tux3_warning(vol, 0);
	CHECK(w);
	CHECK(strstr(w, "block 148 "));
	CHECK(strstr(w, "BALLOC"));
	CHECK(strstr(w, "already allocated"));
	CHECK(strstr(w, "log block 149"));
	CHECK_EQ(vol->replay_conflicts, 1);
	CHECK_EQ(tux3_block_is_used(vol, 148), 1);
	/* the conflicting BALLOC does not count twice */
	CHECK_EQ(vol->freeblocks, 16299);
	tux3_close(vol);
}

TEST(tree_fuse_bnode_overlay)
{
	struct tux3_volume *vol = open_oracle_mode("tree-fuse", TUX3_OPEN_RDONLY);
	CHECK_EQ(vol->unify_index, 0);
	CHECK_EQ(vol->log[0].blocknr, 63);
	CHECK_EQ(vol->log[1].blocknr, 62);
	CHECK_EQ(vol->log[2].blocknr, 65);
	CHECK_EQ(vol->unify_offset, 144);
	const uint8_t *root = overlay_find(&vol->overlay, 5, NULL);
	CHECK(root);
	CHECK_EQ(bnode_count(root), 119);
	CHECK_EQ(bnode_check(vol, root, 5, 0, TUX3_KEY_LIMIT, true), 0);
	unsigned i = bnode_lookup(root, 0);
	CHECK_EQ(bnode_child(root, i), 12);
	i = bnode_lookup(root, 704);
	CHECK_EQ(bnode_key(root, i), 704);
	CHECK_EQ(bnode_child(root, i), 1893);
	i = bnode_lookup(root, 960);
	CHECK_EQ(bnode_key(root, i), 960);
	CHECK_EQ(bnode_child(root, i), 2010);
	i = bnode_lookup(root, 16382);
	CHECK_EQ(bnode_child(root, i), 16389);
	i = bnode_lookup(root, 16128);
	CHECK_EQ(bnode_child(root, i), 16384);
	/* reads of block 5 go through the overlay */
	uint8_t *b = read_vol_block(vol, 5);
	CHECK(!memcmp(b, root, 4096));
	free(b);
	struct tux3_super_info si;
	tux3_super_info(vol, &si);
	CHECK(si.live_iroot == 0x0002000000000005ULL);
	CHECK_EQ(si.freeblocks, 28175);
	tux3_close(vol);

	/* without replay, block 5 is the stale 117-entry image */
	vol = open_oracle_mode("tree-fuse", TUX3_OPEN_NOREPLAY);
	CHECK_EQ(vol->overlay.count, 0);
	b = read_vol_block(vol, 5);
	CHECK_EQ(bnode_count(b), 117);
	free(b);
	CHECK_EQ(vol->freeblocks, 28177);
	tux3_close(vol);
}

TEST(empty_volumes_free_space)
{
	static const struct { const char *name; uint64_t reserved, free; } e[] = {
		{ "empty-4k", 2, 16380 }, { "empty-1k", 8, 32758 },
		{ "empty-512", 16, 32750 }, { "empty-16k", 1, 16381 },
	};
	for (unsigned k = 0; k < 4; k++) {
		char buf[1024];
		if (!oracle_image(e[k].name, buf, sizeof(buf)))
			SKIP("oracle image missing");
		struct tux3_volume *vol = open_oracle_mode(e[k].name,
						      TUX3_OPEN_RDONLY);
		CHECK_EQ(vol->reserved_blocks, e[k].reserved);
		CHECK_EQ(vol->freeblocks, e[k].free);
		CHECK(!vol->has_bitmap_inode);
		for (uint64_t b = 0; b < 80; b++)
			CHECK_EQ(tux3_block_is_used(vol, b),
				 b < e[k].reserved || b == 63 || b == 64);
		tux3_close(vol);
	}
}

int main(void)
{
	return run_tests("replay");
}
