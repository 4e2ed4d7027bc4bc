/*
 * Layer: snapshot_diff.c, snapshot_diff_inode.c -- what differs between
 * two versions (doc/format.md 17.9).  Every kind of change is reported
 * with what changed (created, deleted, data ranges, size, mode, xattrs,
 * a directory's entries, a rename of the same inode), in both directions
 * and between two snapshots; a version against itself and PATH outside
 * the changes give nothing.  Counted work, not time: a one-file change
 * between a snapshot and the live version of a 5,000- and a 50,000-file
 * volume compares the same inodes and loads the same number of inodes;
 * the blocks read grow only by the inode table's leaves.
 */
#include "fixtures.h"

struct seen {
	unsigned n;
	struct {
		tux3_ino_t ino;
		unsigned what, nranges, nxattrs, nentries;
		uint64_t first_block;
		char path_a[64], path_b[64];
	} d[32];
};

static int collect(void *ctx, const struct tux3_diff_inode *d)
{
	struct seen *s = ctx;
	CHECK(s->n < 32);
	s->d[s->n].ino = d->ino;
	s->d[s->n].what = d->what;
	s->d[s->n].nranges = d->nranges;
	s->d[s->n].nxattrs = d->nxattrs;
	s->d[s->n].nentries = d->nentries;
	s->d[s->n].first_block = d->nranges ? d->ranges[0].block : 0;
	snprintf(s->d[s->n].path_a, 64, "%s", d->path_a ? d->path_a : "");
	snprintf(s->d[s->n].path_b, 64, "%s", d->path_b ? d->path_b : "");
	s->n++;
	return 0;
}

static unsigned what_of(const struct seen *s, tux3_ino_t ino)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->d[i].ino == ino)
			return s->d[i].what;
	return 0;
}

static unsigned index_of(const struct seen *s, tux3_ino_t ino)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->d[i].ino == ino)
			return i;
	CHECK(!"inode reported");
	return 0;
}

static void diff(struct tux3_volume *vol, const char *a, const char *b,
		 const char *path, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	CHECK_EQ(tux3_snapshot_diff(vol, a, b, path, 0, collect, s, NULL), 0);
}

TEST(every_kind_of_change)
{
	static uint8_t buf[16 << 10];
	const char *path = scratch_volume(12, 16 << 20,
					  TUX3_FEATURE_COMPAT_DEFAULT);
	struct tux3_volume *vol = oracle_open_path(path, TUX3_OPEN_RDWR);
	struct seen s;
	tux3_ino_t d, ino;
	memset(buf, 'a', sizeof(buf));
	CHECK_EQ(tux3_mkdir(vol, TUX3_ROOT_INO, "d", 1, 040755, 0, 0, &d), 0);
	tux3_ino_t big = file_made(vol, d, "big", buf, sizeof(buf));
	tux3_ino_t small = file_made(vol, d, "small", "hello", 5);
	tux3_ino_t gone = file_made(vol, TUX3_ROOT_INO, "gone", "bye", 3);
	tux3_ino_t same = file_made(vol, TUX3_ROOT_INO, "same", "same", 4);
	/* no versions yet: the live version against itself */
	diff(vol, NULL, "", NULL, &s);
	CHECK_EQ(s.n, 0);
	CHECK_EQ(tux3_snapshot_create(vol, "s1", NULL), 0);
	CHECK_EQ(tux3_write(vol, big, "XY", 2, 2 << 12), 2);
	CHECK_EQ(tux3_setxattr(vol, small, "user.a", "one", 3, 0), 0);
	struct tux3_setattr sa = { .valid = TUX3_SET_MODE, .mode = 0600 };
	CHECK_EQ(tux3_setattr(vol, small, &sa), 0);
	CHECK_EQ(tux3_rename(vol, d, "small", 5, TUX3_ROOT_INO, "moved", 5,
			     0), 0);
	CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, "gone", 4), 0);
	tux3_ino_t made = file_made(vol, d, "made", "new", 3);
	CHECK_EQ(tux3_truncate(vol, big, 12 << 10), 0);
	CHECK_EQ(tux3_snapshot_create(vol, "s2", NULL), 0);

	diff(vol, "s1", NULL, NULL, &s);
	CHECK(what_of(&s, big) & TUX3_DIFF_DATA);
	CHECK(what_of(&s, big) & TUX3_DIFF_SIZE);
	CHECK_EQ(s.d[index_of(&s, big)].nranges, 1);
	CHECK_EQ(s.d[index_of(&s, big)].first_block, 2);
	unsigned w = what_of(&s, small);
	CHECK(w & TUX3_DIFF_XATTR && w & TUX3_DIFF_MODE &&
	      w & TUX3_DIFF_RENAMED);
	CHECK(!strcmp(s.d[index_of(&s, small)].path_a, "/d/small"));
	CHECK(!strcmp(s.d[index_of(&s, small)].path_b, "/moved"));
	CHECK_EQ(what_of(&s, gone), TUX3_DIFF_DELETED);
	CHECK(!strcmp(s.d[index_of(&s, gone)].path_a, "/gone"));
	CHECK_EQ(what_of(&s, made), TUX3_DIFF_CREATED);
	CHECK(!strcmp(s.d[index_of(&s, made)].path_b, "/d/made"));
	CHECK(what_of(&s, d) & TUX3_DIFF_ENTRIES);
	CHECK(what_of(&s, TUX3_ROOT_INO) & TUX3_DIFF_ENTRIES);
	CHECK_EQ(what_of(&s, same), 0);
	/* the other way round, and between the two snapshots */
	diff(vol, NULL, "s1", NULL, &s);
	CHECK_EQ(what_of(&s, gone), TUX3_DIFF_CREATED);
	CHECK_EQ(what_of(&s, made), TUX3_DIFF_DELETED);
	diff(vol, "s2", "s1", NULL, &s);
	CHECK_EQ(what_of(&s, made), TUX3_DIFF_DELETED);
	CHECK(what_of(&s, small) & TUX3_DIFF_RENAMED);
	/* s2 and the live version read alike; a version against itself */
	diff(vol, "s2", "", NULL, &s);
	CHECK_EQ(s.n, 0);
	diff(vol, "s1", "s1", NULL, &s);
	CHECK_EQ(s.n, 0);
	/* a change in a snapshot, seen from the live version */
	CHECK_EQ(tux3_version_select(vol, "s1"), 0);
	CHECK_EQ(tux3_lookup(vol, TUX3_ROOT_INO, "same", 4, &ino), 0);
	CHECK_EQ(tux3_write(vol, ino, "SAME", 4, 0), 4);
	CHECK_EQ(tux3_version_select(vol, NULL), 0);
	diff(vol, NULL, "s1", NULL, &s);
	CHECK(what_of(&s, same) & TUX3_DIFF_DATA);
	CHECK(!strcmp(tux3_version_selected(vol), ""));
	/* PATH keeps what is named under it in either version */
	diff(vol, "s1", NULL, "/d", &s);
	CHECK(what_of(&s, small) & TUX3_DIFF_RENAMED);	/* was /d/small */
	CHECK_EQ(what_of(&s, gone), 0);
	CHECK_EQ(what_of(&s, same), 0);
	CHECK(tux3_snapshot_diff(vol, "nosuch", NULL, NULL, 0, collect, &s,
				 NULL) == -ENOENT);
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);
}

/* ---- the cost follows the changes, not the volume ---- */

struct cost {
	uint64_t loads, reads, leaves, scan;
	struct tux3_diff_count count;
	unsigned found;
};

static int count_one(void *ctx, const struct tux3_diff_inode *d)
{
	struct cost *c = ctx;
	c->found += d->ino > TUX3_ROOT_INO && (d->what & TUX3_DIFF_DATA);
	return 0;
}

static int count_leaf(void *ctx, tux3_ino_t inum, const uint8_t *blob,
		      unsigned len, tux3_block_t leafblock)
{
	tux3_block_t *last = ctx;
	(void)inum; (void)blob; (void)len;
	last[1] += leafblock != last[0];
	last[0] = leafblock;
	return 0;
}

/* files files in 100 directories, a snapshot, one file's second block
 * rewritten: the diff's work, from a cold open. */
static struct cost one_change(unsigned files, bool index)
{
	static uint8_t buf[8192];
	const char *path = scratch_volume(12, 512 << 20,
					  TUX3_FEATURE_COMPAT_DEFAULT);
	struct tux3_volume *vol = oracle_open_path(path, TUX3_OPEN_RDWR);
	tux3_ino_t dir[100], target = 0;
	char name[32];
	struct cost c = { 0 };
	for (unsigned i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "d%u", i);
		CHECK_EQ(tux3_mkdir(vol, TUX3_ROOT_INO, name, strlen(name),
				    040755, 0, 0, &dir[i]), 0);
	}
	for (unsigned i = 0; i < files; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		tux3_ino_t ino = file_made(vol, dir[i % 100], name, buf,
					   i == files / 2 ? sizeof(buf) : 16);
		if (i == files / 2)
			target = ino;
	}
	CHECK_EQ(tux3_snapshot_create(vol, "before", NULL), 0);
	CHECK_EQ(tux3_write(vol, target, "changed", 7, 4096), 7);
	CHECK(vindex_feature(vol));
	if (!index) {
		/* as a volume versioned before the index: the bit clear */
		vol->ident.ro_compat &= ~TUX3_FEATURE_RO_COMPAT_VERSION_INDEX;
		vol->super_dirty = true;
	}
	CHECK_EQ(tux3_umount(vol), 0);

	vol = oracle_open_path(path, TUX3_OPEN_RDONLY);
	uint64_t loads = vol->inode_loads, reads = vol->dev.reads;
	CHECK_EQ(tux3_snapshot_diff(vol, "before", NULL, NULL,
				    TUX3_DIFF_NO_NAMES, count_one, &c,
				    &c.count), 0);
	c.loads = vol->inode_loads - loads;
	c.reads = vol->dev.reads - reads;
	tux3_close(vol);
	/* the scan of the inode table alone, from a cold open */
	vol = oracle_open_path(path, TUX3_OPEN_RDONLY);
	tux3_block_t last[2] = { TUX3_NONE, 0 };
	reads = vol->dev.reads;
	CHECK_EQ(walk_inode_blobs(vol, count_leaf, last), 0);
	c.scan = vol->dev.reads - reads;
	c.leaves = last[1];
	tux3_close(vol);
	return c;
}

TEST(one_file_change_costs_the_same_at_5k_and_50k_files)
{
	struct cost small = one_change(5000, true);
	struct cost big = one_change(50000, true);
	printf("snapshot diff, one file rewritten: %llu/%llu inodes loaded, "
	       "%llu/%llu compared, %llu/%llu blocks read (%llu/%llu "
	       "by the scan of the inode table, %llu/%llu leaves) at "
	       "5,000/50,000 files; %llu/%llu data tree roots read\n",
	       (unsigned long long)small.loads, (unsigned long long)big.loads,
	       (unsigned long long)small.count.compared,
	       (unsigned long long)big.count.compared,
	       (unsigned long long)small.reads, (unsigned long long)big.reads,
	       (unsigned long long)small.scan, (unsigned long long)big.scan,
	       (unsigned long long)small.leaves,
	       (unsigned long long)big.leaves,
	       (unsigned long long)small.count.roots,
	       (unsigned long long)big.count.roots);
	CHECK_EQ(small.found, 1);
	CHECK_EQ(big.found, 1);
	CHECK_EQ(big.count.compared, small.count.compared);
	CHECK_EQ(big.loads, small.loads);
	CHECK(big.count.compared <= 2);	/* the file (and no directory) */
	CHECK_EQ(big.count.trees, small.count.trees);
	/* the version index names the file: no blob scanned, no data
	 * tree's root read, and the same blocks read at both sizes */
	CHECK_EQ(small.count.blobs, 0);
	CHECK_EQ(big.count.blobs, 0);
	CHECK_EQ(big.count.roots, 0);
	CHECK(big.reads <= small.reads + 4);
	CHECK(big.reads < big.scan / 4);
}

/* A volume that keeps no version index (versioned before it): the scan
 * of the inode table finds the same change, at the scan's cost. */
TEST(without_the_index_the_scan_finds_it)
{
	struct cost c = one_change(5000, false);
	printf("without the index: %llu blocks read, %llu blobs scanned\n",
	       (unsigned long long)c.reads,
	       (unsigned long long)c.count.blobs);
	CHECK_EQ(c.found, 1);
	CHECK(c.count.blobs >= 5000);
	CHECK(c.reads >= c.scan);
}

int main(void)
{
	return run_tests("vdiff");
}
