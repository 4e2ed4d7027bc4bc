/* Layer: orphan.c -- the orphan set and the live orphan list. */
#include "fixtures.h"

TEST(set_add_has_del)
{
	struct orphan_set s = { 0 };
	CHECK(!orphan_has(&s, 65));
	CHECK(!orphan_del(&s, 65));
	CHECK_EQ(orphan_add(&s, 65), 0);
	CHECK(orphan_has(&s, 65));
	CHECK(!orphan_has(&s, 64));
	CHECK_EQ(s.count, 1);
	/* adding twice keeps one entry */
	CHECK_EQ(orphan_add(&s, 65), 0);
	CHECK_EQ(s.count, 1);
	CHECK_EQ(orphan_add(&s, 70), 0);
	CHECK_EQ(orphan_add(&s, 80), 0);
	CHECK_EQ(s.count, 3);
	CHECK(orphan_del(&s, 65));
	CHECK(!orphan_has(&s, 65));
	CHECK(orphan_has(&s, 70));
	CHECK(orphan_has(&s, 80));
	CHECK_EQ(s.count, 2);
	CHECK(!orphan_del(&s, 65));	/* already gone */
	CHECK(orphan_del(&s, 80));
	CHECK(orphan_del(&s, 70));
	CHECK_EQ(s.count, 0);
	orphan_set_free(&s);
	CHECK(s.inums == NULL);
	CHECK_EQ(s.cap, 0);
}

TEST(set_growth)
{
	struct orphan_set s = { 0 };
	for (tux3_ino_t i = 64; i < 64 + 1000; i++)
		CHECK_EQ(orphan_add(&s, i * 7), 0);
	CHECK_EQ(s.count, 1000);
	CHECK(s.cap >= 1000);
	for (tux3_ino_t i = 64; i < 64 + 1000; i++) {
		CHECK(orphan_has(&s, i * 7));
		CHECK(!orphan_has(&s, i * 7 + 1));
	}
	/* delete every other one */
	for (tux3_ino_t i = 64; i < 64 + 1000; i += 2)
		CHECK(orphan_del(&s, i * 7));
	CHECK_EQ(s.count, 500);
	for (tux3_ino_t i = 64; i < 64 + 1000; i++)
		CHECK_EQ(orphan_has(&s, i * 7), (i - 64) % 2 == 1);
	orphan_set_free(&s);
}

TEST(set_extreme_inums)
{
	struct orphan_set s = { 0 };
	CHECK_EQ(orphan_add(&s, TUX3_MAX_BLOCK), 0);
	CHECK_EQ(orphan_add(&s, 1), 0);
	CHECK(orphan_has(&s, TUX3_MAX_BLOCK));
	CHECK(orphan_has(&s, 1));
	CHECK(!orphan_has(&s, 0));
	orphan_set_free(&s);
}

TEST(oracle_orphan)
{
	struct tux3_volume *vol = open_oracle("orphan");
	/* from the log only: the otree is empty */
	CHECK_EQ(vol->super.oroot, 0);
	CHECK_EQ(vol->log_orphans.count, 1);
	CHECK_EQ(vol->log_orphans.inums[0], 65);
	CHECK_EQ(vol->otree_deletes.count, 0);
	CHECK_EQ(tux3_orphan_count(vol), 1);
	CHECK_EQ(tux3_orphan(vol, 0), 65);
	CHECK_EQ(tux3_orphan(vol, 1), 0);
	/* an ORPHAN_DEL of an inode not added in this cycle deletes an
	 * otree entry: resolve again with one queued */
	CHECK_EQ(orphan_add(&vol->otree_deletes, 65), 0);
	orphan_set_free(&vol->orphans);
	CHECK_EQ(orphans_resolve(vol), 0);
	CHECK_EQ(tux3_orphan_count(vol), 1);	/* the log ADD still counts */
	tux3_close(vol);

	/* volumes without orphans */
	static const char *none[] = { "empty-4k", "small-delta",
				      "small-unified", "tree-fuse" };
	for (unsigned i = 0; i < 4; i++) {
		vol = oracle_or_null(none[i]);
		if (!vol)
			continue;
		CHECK_EQ(tux3_orphan_count(vol), 0);
		CHECK_EQ(tux3_orphan(vol, 0), 0);
		tux3_close(vol);
	}
}

/* Orphans far apart in number (files unlinked while open, here and there
 * in a large tree: rm -rf under a FUSE mount): a leaf of the orphan table
 * full of close numbers cannot reach one far above, and splitting its
 * entries in halves never brings it nearer, so the range from there goes
 * to a leaf of its own.  Before, the insertion halved the leaf eight
 * times, gave up, and said it had stored the orphan. */
TEST(sparse_orphans_reach_the_otree)
{
	const char *path = scratch_volume(12, 64 << 20,
					  TUX3_FEATURE_COMPAT_DEFAULT);
	struct tux3_volume *vol;
	enum { FILES = 8000, DENSE = 300, FAR = 3 };
	tux3_ino_t first = 0, ino;
	char name[32];
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR, &vol), 0);
	for (unsigned i = 0; i < FILES; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, name, strlen(name),
				     0100644, 0, 0, &ino), 0);
		if (!i)
			first = ino;
		CHECK_EQ(ino, first + i);
	}
	CHECK_EQ(tux3_sync(vol), 0);
	/* DENSE close together, then FAR each thousands above the last,
	 * all open and unlinked in one unify cycle */
	unsigned picks[DENSE + FAR], n = 0;
	for (unsigned i = 0; i < DENSE; i++)
		picks[n++] = i;
	for (unsigned k = 1; k <= FAR; k++)
		picks[n++] = k * 2500;
	for (unsigned k = 0; k < n; k++) {
		snprintf(name, sizeof(name), "f%u", picks[k]);
		CHECK_EQ(tux3_iopen(vol, first + picks[k]), 0);
		CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, name, strlen(name)),
			 0);
	}
	CHECK_EQ(tux3_unify(vol), 0);
	CHECK_EQ(tux3_orphan_count(vol), n);
	CHECK_EQ(tux3_umount(vol), 0);

	/* every one of them is in the otree: the next open finds them all
	 * (and, read-write, releases them) */
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	CHECK_EQ(tux3_orphan_count(vol), n);
	tux3_close(vol);
	fsck_clean(path);
}

int main(void)
{
	return run_tests("orphan");
}
