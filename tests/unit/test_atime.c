/*
 * Layer: write/atime.c, the ATIME attribute (doc/format.md 15.6).  The
 * relatime and strictatime rules; a volume made with the feature has the
 * features magic, a root with an atime, new inodes with one, setattr and
 * reads that store it (and keep it over a reopen), and keeps it through a
 * snapshot and its deletion; a volume without the feature stores none
 * and keeps the 2014 magic.
 */
#include "fixtures.h"

#define SEC 1000000000LL

/* the volume at path, opened in mode (the test stops if it cannot be) */
static struct tux3_volume *open_as(const char *path, int mode)
{
	struct tux3_volume *vol = NULL;
	CHECK_EQ(tux3_open(path, mode, &vol), 0);
	return vol;
}

/* a new file "f" in the root, given atime 5 s and mtime 7 s */
static tux3_ino_t file_at_5_7(struct tux3_volume *vol)
{
	tux3_ino_t f;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "f", 1, 0100644, 0, 0, &f),
		 0);
	struct tux3_setattr sa = { .valid = TUX3_SET_ATIME | TUX3_SET_MTIME,
				   .atime_ns = 5 * SEC, .mtime_ns = 7 * SEC };
	CHECK_EQ(tux3_setattr(vol, f, &sa), 0);
	return f;
}

static const char *atime_volume(uint32_t incompat)
{
	int fd = scratch_create();
	CHECK(ftruncate(fd, 8 << 20) == 0);
	close(fd);
	struct tux3_mkfs_params p = { .blockbits = 12, .volblocks = 2048,
				      .time_ns = 1, .incompat = incompat };
	char err[300];
	CHECK_EQ(tux3_mkfs(scratch_path(), &p, err, sizeof(err)), 0);
	return scratch_path();
}

TEST(relatime_rules)
{
	struct tux3_stat st = { .atime_ns = 100 * SEC, .mtime_ns = 50 * SEC,
				.ctime_ns = 50 * SEC };
	int64_t now = 200 * SEC;
	CHECK(!tux3_atime_due(&st, TUX3_ATIME_RELATIME, now));
	CHECK(tux3_atime_due(&st, TUX3_ATIME_STRICT, now));
	st.mtime_ns = 100 * SEC;		/* atime <= mtime */
	CHECK(tux3_atime_due(&st, TUX3_ATIME_RELATIME, now));
	st.mtime_ns = 50 * SEC;
	st.ctime_ns = 150 * SEC;		/* atime <= ctime */
	CHECK(tux3_atime_due(&st, TUX3_ATIME_RELATIME, now));
	st.ctime_ns = 50 * SEC;
	now = 100 * SEC + TUX3_RELATIME_NS;	/* a day old */
	CHECK(tux3_atime_due(&st, TUX3_ATIME_RELATIME, now));
	CHECK(!tux3_atime_due(&st, TUX3_ATIME_RELATIME, now - 1));
	st.atime_ns = now;			/* already now */
	CHECK(!tux3_atime_due(&st, TUX3_ATIME_STRICT, now));
}

TEST(stored_and_kept)
{
	const char *path = atime_volume(TUX3_FEATURE_INCOMPAT_ATIME);
	struct tux3_volume *vol = open_as(path, TUX3_OPEN_RDWR);
	struct tux3_stat st;
	tux3_ino_t f;
	CHECK(tux3_atime_enabled(vol));
	CHECK(!memcmp(vol->super.magic, "tux3inc1", 8));
	CHECK_EQ(tux3_stat(vol, TUX3_ROOT_INO, &st), 0);
	CHECK_EQ(st.atime_ns, 1);
	f = file_at_5_7(vol);
	CHECK_EQ(tux3_stat(vol, f, &st), 0);
	CHECK_EQ(st.atime_ns, 5 * SEC);
	CHECK_EQ(st.mtime_ns, 7 * SEC);
	/* atime <= mtime: a relatime read stores now */
	CHECK_EQ(tux3_atime_touch(vol, f, TUX3_ATIME_RELATIME, 9 * SEC), 1);
	CHECK_EQ(tux3_stat(vol, f, &st), 0);
	CHECK_EQ(st.atime_ns, 9 * SEC);
	CHECK_EQ(st.mtime_ns, 7 * SEC);	/* and nothing else */
	/* ctime was set to the clock by setattr: no longer due under
	 * relatime only once past it; strictatime always */
	CHECK_EQ(tux3_atime_touch(vol, f, TUX3_ATIME_STRICT, st.ctime_ns + 3),
		 1);
	CHECK_EQ(tux3_atime_touch(vol, f, TUX3_ATIME_RELATIME,
				  st.ctime_ns + 4), 0);
	CHECK_EQ(tux3_sync(vol), 0);
	tux3_close(vol);

	vol = open_as(path, TUX3_OPEN_RDONLY);
	CHECK_EQ(tux3_stat(vol, f, &st), 0);
	CHECK_EQ(st.atime_ns, st.ctime_ns + 3);
	/* a read-only open stores nothing */
	CHECK_EQ(tux3_atime_touch(vol, f, TUX3_ATIME_STRICT, 99 * SEC), 0);
	tux3_close(vol);
}

TEST(snapshots_keep_it)
{
	const char *path = atime_volume(TUX3_FEATURE_INCOMPAT_ATIME);
	struct tux3_volume *vol = open_as(path, TUX3_OPEN_RDWR);
	struct tux3_stat st;
	tux3_ino_t f;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "f", 1, 0100644, 0, 0, &f),
		 0);
	struct tux3_setattr sa = { .valid = TUX3_SET_ATIME, .atime_ns = SEC };
	CHECK_EQ(tux3_setattr(vol, f, &sa), 0);
	CHECK_EQ(tux3_snapshot_create(vol, "s", NULL), 0);
	CHECK(!memcmp(vol->super.magic, "tux3ver1", 8));
	sa.atime_ns = 2 * SEC;
	CHECK_EQ(tux3_setattr(vol, f, &sa), 0);
	CHECK_EQ(tux3_stat(vol, f, &st), 0);
	CHECK_EQ(st.atime_ns, 2 * SEC);
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK_EQ(tux3_version_select(vol, "s"), 0);
	CHECK_EQ(tux3_stat(vol, f, &st), 0);
	CHECK_EQ(st.atime_ns, SEC);		/* the snapshot's own */
	CHECK_EQ(tux3_version_select(vol, ""), 0);
	/* the last snapshot gone: the features magic, not 2014's */
	CHECK_EQ(tux3_snapshot_delete(vol, "s"), 0);
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK(!memcmp(vol->super.magic, "tux3inc1", 8));
	CHECK_EQ(tux3_stat(vol, f, &st), 0);
	CHECK_EQ(st.atime_ns, 2 * SEC);
	tux3_close(vol);
}

TEST(without_the_feature)
{
	const char *path = atime_volume(0);
	struct tux3_volume *vol = open_as(path, TUX3_OPEN_RDWR);
	struct tux3_stat st;
	tux3_ino_t f;
	CHECK(!tux3_atime_enabled(vol));
	f = file_at_5_7(vol);
	CHECK_EQ(tux3_stat(vol, f, &st), 0);
	CHECK_EQ(st.atime_ns, 7 * SEC);		/* noatime: reads as mtime */
	CHECK_EQ(tux3_atime_touch(vol, f, TUX3_ATIME_STRICT, 9 * SEC), 0);
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK(!memcmp(vol->super.magic, tux3_magic_2014, 8));
	tux3_close(vol);
}

TEST(mkfs_refuses_versions)
{
	int fd = scratch_create();
	CHECK(ftruncate(fd, 8 << 20) == 0);
	close(fd);
	struct tux3_mkfs_params p = { .blockbits = 12, .volblocks = 2048,
		.incompat = TUX3_FEATURE_INCOMPAT_VERSIONS };
	char err[300];
	CHECK_EQ(tux3_mkfs(scratch_path(), &p, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	return run_tests("atime");
}
