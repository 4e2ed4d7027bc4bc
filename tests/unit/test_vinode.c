/*
 * Layer: vinode.c, vinode_write.c -- the file operations in a version:
 * snapshots isolate data, sizes, modes, xattrs and names; an inode made
 * after a snapshot is absent from it, one unlinked lives on in it; the
 * implicit child of a written snapshot survives a reopen; deleting gives
 * back exactly what only the snapshot read; an inode whose versions no
 * longer fit its leaf is refused with ENOSPC, the volume left sound;
 * a version selected by tag reads as by name.
 */
#include <sys/stat.h>
#include "fixtures.h"
#include "tux3_walk.h"
#include "version/version.h"
#include "version/vleaf.h"
#include "version/vfilemap.h"

static const char *fresh(void)
{
	return scratch_volume(12, 32 << 20, TUX3_FEATURE_COMPAT_DEFAULT);
}

static struct tux3_volume *open_rw(const char *path)
{
	struct tux3_volume *vol = NULL;
	char msg[512];
	int err = tux3_open_err(path, TUX3_OPEN_RDWR, &vol, msg, sizeof(msg));
	if (err)
		fprintf(stderr, "open: %s\n", msg);
	CHECK_EQ(err, 0);
	return vol;
}

static tux3_ino_t make_file(struct tux3_volume *vol, const char *name,
			    const char *text)
{
	tux3_ino_t ino = 0;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, name, strlen(name), 0100644,
			     0, 0, &ino), 0);
	CHECK_EQ(tux3_write(vol, ino, text, strlen(text), 0),
		 (long long)strlen(text));
	return ino;
}

/* The file's content in the selected version ("" when absent). */
static const char *content(struct tux3_volume *vol, const char *path)
{
	static char buf[256];
	tux3_ino_t ino;
	buf[0] = 0;
	if (tux3_lookup_path(vol, path, &ino)) {
		tux3_clear_error(vol);
		return "";
	}
	ssize_t n = tux3_read(vol, ino, buf, sizeof(buf) - 1, 0);
	CHECK(n >= 0);
	buf[n] = 0;
	return buf;
}

static void in_version(struct tux3_volume *vol, const char *name)
{
	CHECK_EQ(tux3_version_select(vol, name), 0);
}

TEST(snapshot_isolates_data_and_names)
{
	const char *path = fresh();
	struct tux3_volume *vol = open_rw(path);
	tux3_ino_t a = make_file(vol, "a", "hello");
	CHECK_EQ(tux3_snapshot_create(vol, "s1", NULL), 0);
	CHECK_EQ(tux3_write(vol, a, "HELLO world", 11, 0), 11);
	make_file(vol, "b", "bee");
	CHECK(!strcmp(content(vol, "/a"), "HELLO world"));
	in_version(vol, "s1");
	CHECK(!strcmp(tux3_version_selected(vol), "s1"));
	CHECK(!strcmp(content(vol, "/a"), "hello"));
	CHECK(!strcmp(content(vol, "/b"), ""));	/* made after s1 */
	/* a write and an unlink in the snapshot stay there */
	CHECK_EQ(tux3_write(vol, a, "snap", 4, 0), 4);
	CHECK(!strcmp(content(vol, "/a"), "snapo"));
	CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, "a", 1), 0);
	CHECK(!strcmp(content(vol, "/a"), ""));
	in_version(vol, NULL);
	CHECK(!strcmp(content(vol, "/a"), "HELLO world"));
	CHECK(!strcmp(content(vol, "/b"), "bee"));
	/* unlinked in the live version, it lives on in a snapshot of it */
	CHECK_EQ(tux3_snapshot_create(vol, "s2", NULL), 0);
	CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, "b", 1), 0);
	CHECK(!strcmp(content(vol, "/b"), ""));
	in_version(vol, "s2");
	CHECK(!strcmp(content(vol, "/b"), "bee"));
	in_version(vol, NULL);
	/* its number is not given to a new inode */
	tux3_ino_t c = make_file(vol, "c", "sea");
	struct tux3_stat st;
	in_version(vol, "s2");
	CHECK_EQ(tux3_lookup_path(vol, "/b", &st.ino), 0);
	CHECK(st.ino != c);
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);

	/* all of it after a reopen (replay) */
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	CHECK(!strcmp(content(vol, "/a"), "HELLO world"));
	in_version(vol, "s1");
	CHECK(!strcmp(content(vol, "/a"), ""));
	in_version(vol, "s2");
	CHECK(!strcmp(content(vol, "/a"), "HELLO world"));
	CHECK(!strcmp(content(vol, "/b"), "bee"));
	CHECK_EQ(tux3_version_select(vol, "nope"), -ENOENT);
	tux3_close(vol);
}

/* Selecting by tag (tux3fuse's snapdir) reads what selecting by name
 * reads; tag 0 is the live version; a tag no snapshot has, or one whose
 * snapshot was deleted, is refused and leaves the selection alone. */
TEST(select_by_tag_reads_as_by_name)
{
	const char *path = fresh();
	struct tux3_volume *vol = open_rw(path);
	tux3_ino_t a = make_file(vol, "a", "one");
	CHECK_EQ(tux3_snapshot_create(vol, "s1", NULL), 0);
	CHECK_EQ(tux3_write(vol, a, "two", 3, 0), 3);
	CHECK_EQ(tux3_snapshot_create(vol, "s2", NULL), 0);
	CHECK_EQ(tux3_write(vol, a, "six", 3, 0), 3);
	struct tux3_version_info *list;
	unsigned n;
	CHECK_EQ(tux3_version_list(vol, &list, &n), 0);
	uint32_t t1 = 0, t2 = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!strcmp(list[i].name, "s1"))
			t1 = list[i].tag;
		if (!strcmp(list[i].name, "s2"))
			t2 = list[i].tag;
	}
	free(list);
	CHECK(t1 && t2 && t1 != t2);
	CHECK_EQ(tux3_version_select_tag(vol, t1), 0);
	CHECK_EQ(tux3_version_selected_tag(vol), t1);
	CHECK(!strcmp(tux3_version_selected(vol), "s1"));
	CHECK(!strcmp(content(vol, "/a"), "one"));
	CHECK_EQ(tux3_version_select_tag(vol, t2), 0);
	CHECK(!strcmp(content(vol, "/a"), "two"));
	CHECK_EQ(tux3_version_select_tag(vol, t1 + t2 + 100), -ENOENT);
	CHECK_EQ(tux3_version_selected_tag(vol), t2);
	CHECK_EQ(tux3_version_select_tag(vol, 0), 0);
	CHECK(!strcmp(content(vol, "/a"), "six"));
	CHECK_EQ(tux3_snapshot_delete(vol, "s1"), 0);
	CHECK_EQ(tux3_version_select_tag(vol, t1), -ENOENT);
	CHECK_EQ(tux3_version_selected_tag(vol), 0);
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);
}

TEST(snapshot_isolates_attributes_and_xattrs)
{
	const char *path = fresh();
	struct tux3_volume *vol = open_rw(path);
	tux3_ino_t a = make_file(vol, "a", "x");
	CHECK_EQ(tux3_setxattr(vol, a, "user.k", "v0", 2, 0), 0);
	CHECK_EQ(tux3_snapshot_create(vol, "s1", NULL), 0);
	struct tux3_setattr sa = { .valid = TUX3_SET_MODE, .mode = 0600 };
	CHECK_EQ(tux3_setattr(vol, a, &sa), 0);
	CHECK_EQ(tux3_setxattr(vol, a, "user.k", "v1", 2, 0), 0);
	CHECK_EQ(tux3_setxattr(vol, a, "user.new", "n", 1, 0), 0);
	CHECK_EQ(tux3_truncate(vol, a, 5000), 0);
	char v[8] = { 0 };
	struct tux3_stat st;
	CHECK_EQ(tux3_stat(vol, a, &st), 0);
	CHECK_EQ(st.mode & 07777, 0600);
	CHECK_EQ(st.size, 5000);
	CHECK_EQ(tux3_getxattr(vol, a, "user.k", v, sizeof(v)), 2);
	CHECK(!memcmp(v, "v1", 2));
	in_version(vol, "s1");
	CHECK_EQ(tux3_stat(vol, a, &st), 0);
	CHECK_EQ(st.mode & 07777, 0644);
	CHECK_EQ(st.size, 1);
	CHECK_EQ(tux3_getxattr(vol, a, "user.k", v, sizeof(v)), 2);
	CHECK(!memcmp(v, "v0", 2));
	CHECK_EQ(tux3_getxattr(vol, a, "user.new", v, sizeof(v)), -ENODATA);
	/* removing the snapshot's xattr leaves the live one */
	CHECK_EQ(tux3_removexattr(vol, a, "user.k"), 0);
	in_version(vol, NULL);
	CHECK_EQ(tux3_getxattr(vol, a, "user.k", v, sizeof(v)), 2);
	CHECK(!memcmp(v, "v1", 2));
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);	/* the atom counts hold every version's */
}

TEST(write_to_snapshot_with_children_makes_implicit_child)
{
	const char *path = fresh();
	struct tux3_volume *vol = open_rw(path);
	tux3_ino_t a = make_file(vol, "a", "base");
	CHECK_EQ(tux3_snapshot_create(vol, "s1", NULL), 0);
	CHECK_EQ(tux3_snapshot_create(vol, "s1b", "s1"), 0);
	in_version(vol, "s1");
	CHECK_EQ(tux3_write(vol, a, "S1", 2, 0), 2);
	CHECK(!strcmp(content(vol, "/a"), "S1se"));
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);

	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	struct tux3_version_info *list;
	unsigned n, ghosts = 0;
	CHECK_EQ(tux3_version_list(vol, &list, &n), 0);
	for (unsigned i = 0; i < n; i++)
		ghosts += list[i].ghost;
	free(list);
	CHECK_EQ(ghosts, 1);	/* s1's old label, read by s1b */
	in_version(vol, "s1");
	CHECK(!strcmp(content(vol, "/a"), "S1se"));
	in_version(vol, "s1b");
	CHECK(!strcmp(content(vol, "/a"), "base"));
	in_version(vol, NULL);
	CHECK(!strcmp(content(vol, "/a"), "base"));
	tux3_close(vol);
}

static uint64_t free_blocks(struct tux3_volume *vol)
{
	struct tux3_statfs sf;
	CHECK_EQ(tux3_statfs(vol, &sf), 0);
	return sf.bfree;
}

TEST(delete_gives_back_exactly_what_only_it_read)
{
	static uint8_t buf[64 << 12];
	const char *path = fresh();
	struct tux3_volume *vol = open_rw(path);
	memset(buf, 'a', sizeof(buf));
	tux3_ino_t a = make_file(vol, "a", "");
	CHECK_EQ(tux3_write(vol, a, buf, sizeof(buf), 0), (long long)sizeof(buf));
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK_EQ(tux3_snapshot_create(vol, "s1", NULL), 0);
	memset(buf, 'b', 16 << 12);
	CHECK_EQ(tux3_write(vol, a, buf, 16 << 12, 0), 16 << 12);
	CHECK_EQ(tux3_sync(vol), 0);

	uint64_t excl[8] = { 0 };
	CHECK_EQ(tux3_version_space(vol, excl, 8), 0);
	CHECK_EQ(excl[0], 16);	/* the live version's new blocks */
	CHECK_EQ(excl[1], 16);	/* the old ones s1 keeps */
	/* with the log folded in before and after (log blocks aside), the
	 * delete's net effect is the blocks only s1 read */
	CHECK_EQ(tux3_unify(vol), 0);
	CHECK_EQ(tux3_unify(vol), 0);
	uint64_t before = free_blocks(vol);
	CHECK_EQ(tux3_snapshot_delete(vol, "s1"), 0);
	CHECK_EQ(tux3_unify(vol), 0);
	CHECK_EQ(tux3_unify(vol), 0);
	/* s1 was the last snapshot: the volume went back to the 2014
	 * format too, and inode 3's blocks came back with the 16 (the
	 * file's one vleaf became one dleaf): the version table's, the
	 * version index's, and the dleaf that maps the two across the
	 * hole between them */
	CHECK_EQ(free_blocks(vol), before + 16 + 3);
	CHECK(!vtable_marked(vol));
	CHECK_EQ(tux3_version_select(vol, "s1"), -ENOENT);
	CHECK_EQ(tux3_snapshot_delete(vol, "s1"), -ENOENT);
	CHECK(content(vol, "/a")[0] == 'b');
	CHECK_EQ(tux3_check_alloc(vol, NULL, NULL), 0);
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);
}

/* Orphans of the live version are made absent in a new snapshot of it;
 * with an older snapshot below, the first of them moves the new label to
 * an implicit child, and the name and every other orphan must follow
 * (the name once stayed on the ghost: the snapshot could not be found). */
TEST(snapshot_over_orphans_keeps_its_name)
{
	const char *path = fresh();
	struct tux3_volume *vol = open_rw(path);
	tux3_ino_t a = make_file(vol, "a", "apple");
	tux3_ino_t b = make_file(vol, "b", "berry");
	make_file(vol, "c", "cherry");
	CHECK_EQ(tux3_snapshot_create(vol, "old", NULL), 0);
	CHECK_EQ(tux3_iopen(vol, a), 0);
	CHECK_EQ(tux3_iopen(vol, b), 0);
	CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, "a", 1), 0);
	CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, "b", 1), 0);
	CHECK_EQ(tux3_snapshot_create(vol, "new", NULL), 0);
	in_version(vol, "new");
	CHECK(!strcmp(content(vol, "/c"), "cherry"));
	CHECK(!strcmp(content(vol, "/a"), ""));
	struct tux3_stat st;
	CHECK(tux3_stat(vol, a, &st) != 0);	/* absent, not kept */
	tux3_clear_error(vol);
	CHECK(tux3_stat(vol, b, &st) != 0);
	tux3_clear_error(vol);
	in_version(vol, "old");
	CHECK(!strcmp(content(vol, "/a"), "apple"));
	in_version(vol, NULL);
	CHECK_EQ(tux3_irelease(vol, a), 0);
	CHECK_EQ(tux3_irelease(vol, b), 0);
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	in_version(vol, "new");
	CHECK(!strcmp(content(vol, "/b"), ""));
	CHECK(!strcmp(content(vol, "/c"), "cherry"));
	tux3_close(vol);
}

TEST(inode_only_a_deleted_snapshot_had_goes_with_it)
{
	const char *path = fresh();
	struct tux3_volume *vol = open_rw(path);
	make_file(vol, "keep", "k");
	CHECK_EQ(tux3_snapshot_create(vol, "s1", NULL), 0);
	in_version(vol, "s1");
	tux3_ino_t only = make_file(vol, "only", "in s1");
	CHECK_EQ(tux3_setxattr(vol, only, "user.s1", "1", 1, 0), 0);
	in_version(vol, NULL);
	CHECK_EQ(tux3_sync(vol), 0);
	uint64_t used = 0;
	struct tux3_statfs sf;
	CHECK_EQ(tux3_statfs(vol, &sf), 0);
	used = sf.files - sf.ffree;
	CHECK_EQ(tux3_snapshot_delete(vol, "s1"), 0);
	CHECK_EQ(tux3_statfs(vol, &sf), 0);
	CHECK_EQ(sf.files - sf.ffree, used - 1);
	struct tux3_stat st;
	CHECK_EQ(tux3_stat(vol, only, &st), -ENOENT);
	tux3_clear_error(vol);
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);	/* its atom went too */
}

/* A file changed after each of 2,048 snapshots (its mode, its
 * time and an appended block each time: a log under hourly snapshots)
 * keeps every version's attributes: past the leaf they go to the spill
 * chain (format.md 17.3b), and each version reads back its own. */
static int count_spill(void *ctx, tux3_ino_t ino, uint64_t logical,
		       tux3_block_t physical, uint64_t count, uint32_t version,
		       tux3_block_t leafblock)
{
	(void)ino; (void)logical; (void)physical; (void)leafblock;
	uint64_t *n = ctx;
	if (version == TUX3_EXTENT_SPILL)
		n[0] += count;
	if (version == TUX3_EXTENT_ELIST)
		n[1] += count;
	return 0;
}

/* Blocks of attribute chains (or with elist, of element chains) the
 * walker reports. */
static uint64_t chain_blocks(struct tux3_volume *vol, bool elist)
{
	struct tux3_walk_ops ops = { .extent = count_spill };
	uint64_t n[2] = { 0, 0 };
	CHECK_EQ(tux3_walk(vol, &ops, n), 0);
	return n[elist];
}

static uint64_t spill_blocks(struct tux3_volume *vol)
{
	return chain_blocks(vol, false);
}

static void changed_under_every_snapshot(unsigned bits, uint64_t bytes,
					 unsigned snaps)
{
	const char *path = scratch_volume(bits, bytes,
					  TUX3_FEATURE_COMPAT_DEFAULT);
	struct tux3_volume *vol = open_rw(path);
	tux3_ino_t a = make_file(vol, "log", "");
	char name[16];
	unsigned bs = 1u << bits;
	char *blk = malloc(bs);
	CHECK(blk != NULL);
	for (unsigned i = 1; i <= snaps; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		CHECK_EQ(tux3_snapshot_create(vol, name, NULL), 0);
		memset(blk, 'a' + i % 26, bs);
		CHECK_EQ(tux3_write(vol, a, blk, bs, (uint64_t)i * bs),
			 (ssize_t)bs);
		/* and its first block rewritten: one block of 2,048
		 * versions, past what a leaf holds (17.3c) */
		char stamp[8];
		snprintf(stamp, sizeof(stamp), "%06u", i);
		CHECK_EQ(tux3_write(vol, a, stamp, 6, 0), 6);
		struct tux3_setattr sa = { .valid = TUX3_SET_MODE |
					   TUX3_SET_MTIME,
					   .mode = 0400 + (i & 0377),
					   .mtime_ns = (int64_t)i * 1000 };
		CHECK_EQ(tux3_setattr(vol, a, &sa), 0);
		if (i % 512 == 0)
			CHECK_EQ(tux3_sync(vol), 0);
	}
	CHECK_EQ(tux3_umount(vol), 0);
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	/* about 40 bytes a version: past the leaf, the chain holds most */
	if ((uint64_t)snaps * 40 > bs)
		CHECK(spill_blocks(vol) * bs > (uint64_t)snaps * 20);
	/* block 0's elements, one a version: past a leaf's records */
	if (snaps + 1 > vleaf_capacity(bs))
		CHECK(chain_blocks(vol, true) * vechain_per_block(bs) >= snaps);
	for (unsigned i = 1; i <= snaps; i += i < 40 ? 1 : 61) {
		/* snapshot s(i) was taken after i - 1 changes */
		snprintf(name, sizeof(name), "s%u", i);
		in_version(vol, name);
		struct tux3_stat st;
		tux3_ino_t ino;
		CHECK_EQ(tux3_lookup_path(vol, "/log", &ino), 0);
		CHECK_EQ(tux3_stat(vol, ino, &st), 0);
		CHECK_EQ(st.size, i > 1 ? (uint64_t)i * bs : 0);
		CHECK_EQ(st.mode & 07777, i > 1 ? 0400 + ((i - 1) & 0377)
						: 0644);
		if (i > 1) {
			CHECK_EQ(st.mtime_ns, (int64_t)(i - 1) * 1000);
			char c = 0, stamp[8] = { 0 }, want[8];
			CHECK_EQ(tux3_read(vol, ino, &c, 1,
					   (uint64_t)(i - 1) * bs), 1);
			CHECK_EQ(c, 'a' + (i - 1) % 26);
			CHECK_EQ(tux3_read(vol, ino, stamp, 6, 0), 6);
			snprintf(want, sizeof(want), "%06u", i - 1);
			CHECK(!strcmp(stamp, want));
		}
	}
	in_version(vol, NULL);
	tux3_close(vol);
	free(blk);
	fsck_clean(path);
}

/* (the sanitizer build: a quarter of them, which at 64 KiB fit the leaf;
 * its allocator maps and unmaps every 64 KiB buffer, 90 s for all) */
TEST(changed_under_2048_snapshots_4k)
{
	changed_under_every_snapshot(12, 64 << 20, SANITIZER_SHARE(2048, 4));
}

TEST(changed_under_2048_snapshots_512)
{
	changed_under_every_snapshot(9, 64 << 20, SANITIZER_SHARE(2048, 4));
}

TEST(changed_under_2048_snapshots_64k)
{
	changed_under_every_snapshot(16, 512 << 20, SANITIZER_SHARE(2048, 4));
}

/* The chains go with the snapshots: deleting them one by one gives their
 * blocks back as the attributes and the first block's elements shrink,
 * and the last delete leaves a 2014 volume with no chain and every block
 * accounted for. */
TEST(chain_goes_with_the_last_snapshot)
{
	const char *path = scratch_volume(9, 16 << 20,
					  TUX3_FEATURE_COMPAT_DEFAULT);
	struct tux3_volume *vol = open_rw(path);
	tux3_ino_t a = make_file(vol, "a", "x");
	char name[16];
	for (unsigned i = 0; i < 60; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		CHECK_EQ(tux3_snapshot_create(vol, name, NULL), 0);
		char stamp[8];
		snprintf(stamp, sizeof(stamp), "%06u", i);
		CHECK_EQ(tux3_write(vol, a, stamp, 6, 0), 6);
		struct tux3_setattr sa = { .valid = TUX3_SET_MTIME,
					   .mtime_ns = (int64_t)i * 1000 };
		CHECK_EQ(tux3_setattr(vol, a, &sa), 0);
	}
	CHECK_EQ(tux3_sync(vol), 0);
	uint64_t chain = spill_blocks(vol);
	CHECK(chain >= 2);
	CHECK(chain_blocks(vol, true) >= 1);	/* 61 versions of block 0 */
	in_version(vol, "s30");
	CHECK(!strcmp(content(vol, "/a"), "000029"));
	in_version(vol, NULL);
	for (unsigned i = 0; i < 60; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		CHECK_EQ(tux3_snapshot_delete(vol, name), 0);
		if (i == 40)	/* fewer versions, a shorter chain */
			CHECK(spill_blocks(vol) < chain);
		if (i == 40) {	/* 20 versions of block 0 fit the leaf */
			CHECK_EQ(chain_blocks(vol, true), 0);
			in_version(vol, "s50");
			CHECK(!strcmp(content(vol, "/a"), "000049"));
			in_version(vol, NULL);
		}
	}
	CHECK(!vtable_marked(vol));
	CHECK_EQ(spill_blocks(vol), 0);
	CHECK(!strcmp(content(vol, "/a"), "000059"));
	CHECK_EQ(tux3_check_alloc(vol, NULL, NULL), 0);
	struct tux3_stat st;
	CHECK_EQ(tux3_stat(vol, a, &st), 0);
	CHECK_EQ(st.mtime_ns, 59000);
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);
}

/* The crash simulator's knob: leaves split at 4 records, and a block of
 * more elements goes to a chain with a few versions. */
TEST(vleaf_cap_makes_chains_with_few_versions)
{
	const char *path = scratch_volume(9, 16 << 20,
					  TUX3_FEATURE_COMPAT_DEFAULT);
	struct tux3_volume *vol = open_rw(path);
	vol->vleaf_cap = 4;
	tux3_ino_t a = make_file(vol, "a", "x");
	char name[16], stamp[8], big[4096];
	memset(big, 'b', sizeof(big));
	CHECK_EQ(tux3_write(vol, a, big, sizeof(big), 512), 4096);
	for (unsigned i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		CHECK_EQ(tux3_snapshot_create(vol, name, NULL), 0);
		snprintf(stamp, sizeof(stamp), "%06u", i);
		CHECK_EQ(tux3_write(vol, a, stamp, 6, 0), 6);
		CHECK_EQ(tux3_write(vol, a, stamp, 6, 512 * (i + 1)), 6);
	}
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK(chain_blocks(vol, true) >= 1);
	for (unsigned i = 1; i < 6; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		in_version(vol, name);
		snprintf(stamp, sizeof(stamp), "%06u", i - 1);
		CHECK(!strncmp(content(vol, "/a"), stamp, 6));
	}
	in_version(vol, NULL);
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);
}

/* Past what even the chain holds (every version its own 3,500-byte
 * xattr: 1 MiB in about 300 versions) a change is refused cleanly,
 * before it starts. */
TEST(inode_full_of_versions_is_refused_cleanly)
{
	const char *path = fresh();
	struct tux3_volume *vol = open_rw(path);
	tux3_ino_t a = make_file(vol, "a", "x");
	int err = 0;
	unsigned made = 0;
	char name[16];
	char *value = malloc(3500);
	CHECK(value != NULL);
	for (unsigned i = 0; i < 400 && !err; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		CHECK_EQ(tux3_snapshot_create(vol, name, NULL), 0);
		memset(value, 'a' + i % 26, 3500);
		value[0] = (char)i;
		err = tux3_setxattr(vol, a, "user.big", value, 3500, 0);
		made += !err;
	}
	free(value);
	CHECK_EQ(err, -ENOSPC);
	CHECK(made > 250);
	CHECK(strstr(tux3_last_error(vol)->what, "snapshot") != NULL);
	tux3_clear_error(vol);
	/* nothing of the refused change was made */
	char got[3500];
	CHECK_EQ(tux3_getxattr(vol, a, "user.big", got, sizeof(got)), 3500);
	CHECK_EQ((unsigned char)got[0], (made - 1) & 0xff);
	/* a small change still fits */
	CHECK_EQ(tux3_write(vol, a, "y", 1, 0), 1);
	CHECK(!strcmp(content(vol, "/a"), "y"));
	CHECK_EQ(tux3_sync(vol), 0);
	/* deleting snapshots makes room again */
	for (unsigned i = 0; i < made / 2 + 1; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		CHECK_EQ(tux3_snapshot_delete(vol, name), 0);
	}
	CHECK_EQ(tux3_setxattr(vol, a, "user.big", got, 3500, 0), 0);
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);
}

/* 2,048 tagged versions, the live one included, each readable after a
 * reopen, each reading what the live version had when it was taken. */
TEST(two_thousand_snapshots)
{
	const char *path = scratch_volume(12, 256 << 20,
					  TUX3_FEATURE_COMPAT_DEFAULT);
	struct tux3_volume *vol = open_rw(path);
	tux3_ino_t a = make_file(vol, "a", "0000");
	char name[16], text[16];
	for (unsigned i = 1; i < 2048; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		CHECK_EQ(tux3_snapshot_create(vol, name, NULL), 0);
		if (i % 256 == 0) {
			snprintf(text, sizeof(text), "%04u", i);
			CHECK_EQ(tux3_write(vol, a, text, 4, 0), 4);
		}
	}
	CHECK_EQ(tux3_umount(vol), 0);
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	struct tux3_version_info *list;
	unsigned n, tagged = 0;
	CHECK_EQ(tux3_version_list(vol, &list, &n), 0);
	for (unsigned i = 0; i < n; i++)
		tagged += !list[i].ghost && !list[i].dying;
	free(list);
	CHECK_EQ(tagged, 2048);
	for (unsigned i = 1; i < 2048; i += 97) {
		snprintf(name, sizeof(name), "s%u", i);
		in_version(vol, name);
		snprintf(text, sizeof(text), "%04u", (i - 1) / 256 * 256);
		CHECK(!strcmp(content(vol, "/a"), text));
	}
	tux3_close(vol);
	fsck_clean(path);
}

int main(void)
{
	return run_tests("vinode");
}
