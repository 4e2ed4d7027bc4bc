/*
 * Layer: vtable_inode.c -- the version table in inode 3 and the gate: the
 * first table turns the magic and the VERSIONS feature together, both
 * survive a reopen; a volume where they disagree, or whose table is
 * damaged, still reads (the origin), with a warning naming the fault,
 * and is never opened for writing.
 */
#include "fixtures.h"
#include "version/version.h"
#include "version/vfilemap.h"
#include "tux3_walk.h"

static const char *fresh_volume(unsigned bits)
{
	return scratch_volume(bits, 16 << 20, TUX3_FEATURE_COMPAT_DEFAULT);
}

static struct tux3_volume *open_mode(const char *path,
				     enum tux3_open_mode mode)
{
	struct tux3_volume *vol = NULL;
	char msg[512];
	int err = tux3_open_err(path, mode, &vol, msg, sizeof(msg));
	if (err)
		fprintf(stderr, "open: %s\n", msg);
	CHECK_EQ(err, 0);
	return vol;
}

/* Opens read-only with a warning containing want, and no table (or
 * only what its salvage kept, for the live version to read: no snapshot
 * can be selected); a read-write open is refused. */
static void opens_with_warning(const char *path, const char *want)
{
	struct tux3_volume *vol = open_mode(path, TUX3_OPEN_RDONLY);
	bool seen = false;
	CHECK(vol->vt == NULL || vol->vt_bad);
	CHECK(tux3_version_select(vol, "monday") != 0);
	for (unsigned i = 0; i < tux3_warning_count(vol); i++)
		seen |= strstr(tux3_warning(vol, i), want) != NULL;
	if (!seen)
		fprintf(stderr, "no warning with \"%s\"\n", want);
	CHECK(seen);
	tux3_close(vol);
	char msg[512];
	CHECK_EQ(tux3_open_err(path, TUX3_OPEN_RDWR, &vol, msg, sizeof(msg)),
		 -EROFS);
}

static void make_table(struct vtree *vt)
{
	vtree_init(vt);
	int a = vtree_snapshot(vt, 0, 7, 100);
	CHECK(a > 0);
	snprintf(vt->v[a].name, sizeof(vt->v[a].name), "monday");
	int b = vtree_snapshot(vt, (unsigned)a, 8, 200);
	CHECK(b > 0);
	snprintf(vt->v[b].name, sizeof(vt->v[b].name), "monday-test");
}

static void table_round_trip(unsigned bits)
{
	static struct vtree vt;
	const char *path = fresh_volume(bits);
	struct tux3_volume *vol = open_mode(path, TUX3_OPEN_RDWR);
	CHECK(vol->vt == NULL);
	make_table(&vt);
	CHECK_EQ(vtable_save(vol, &vt), 0);
	CHECK_EQ(tux3_umount(vol), 0);

	vol = open_mode(path, TUX3_OPEN_RDONLY);
	CHECK(vol->vt != NULL);
	CHECK(vol->vpending == NULL);
	CHECK_EQ(vol->vt->used, 3);
	CHECK_EQ(vtree_find_tag(vol->vt, 8), 2);
	CHECK(!strcmp(vol->vt->v[2].name, "monday-test"));
	CHECK_EQ(vol->vt->v[1].birth_ns, 100);
	CHECK(!memcmp(vol->super.magic, tux3_magic_versions, 8));
	CHECK(vol->ident.incompat & TUX3_FEATURE_INCOMPAT_VERSIONS);
	CHECK_EQ(vtree_check(vol->vt, NULL, NULL), 0);
	tux3_close(vol);

	/* a read-write open writes through the versions */
	vol = open_mode(path, TUX3_OPEN_RDWR);
	CHECK(vol->vt != NULL);
	CHECK_EQ(tux3_umount(vol), 0);

	/* without replay the table is there too (after a unify it is in
	 * the on-disk trees; here the log holds it, so only a warning) */
	vol = open_mode(path, TUX3_OPEN_NOREPLAY);
	tux3_close(vol);
}

TEST(vtable_saved_and_loaded_4k)
{
	table_round_trip(12);
}

TEST(vtable_saved_and_loaded_512)
{
	table_round_trip(9);
}

/* The magic and the feature bit go together: either alone is damage. */
TEST(vtable_gate_refuses_half_marked)
{
	static struct vtree vt;
	const char *path = fresh_volume(12);
	struct tux3_volume *vol = open_mode(path, TUX3_OPEN_RDWR);
	make_table(&vt);
	CHECK_EQ(vtable_save(vol, &vt), 0);
	CHECK_EQ(tux3_umount(vol), 0);

	/* the 2014 magic back over the versions magic */
	int fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pwrite(fd, tux3_magic_2014, 8, 4096) == 8);
	close(fd);
	opens_with_warning(path, "has the versions feature but the magic");

	/* a 2014 volume with the versions magic but no feature bit */
	path = fresh_volume(12);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pwrite(fd, tux3_magic_versions, 8, 4096) == 8);
	close(fd);
	opens_with_warning(path, "lacks the versions feature");
}

/* A damaged table names inode 3 and the byte. */
TEST(vtable_damage_named)
{
	static struct vtree vt;
	const char *path = fresh_volume(12);
	struct tux3_volume *vol = open_mode(path, TUX3_OPEN_RDWR);
	make_table(&vt);
	vt.v[2].flags = 0x40;	/* unknown flag: encoded as is */
	CHECK_EQ(vtable_save(vol, &vt), 0);
	CHECK_EQ(tux3_umount(vol), 0);
	opens_with_warning(path, "byte 194");	/* 64 + 2 * 64 + 2 */
}

/* ---- snapshot create and delete through snapshot.c ---- */

static struct tux3_volume *open_writer(const char *path)
{
	return open_mode(path, (enum tux3_open_mode)(TUX3_OPEN_RDWR));
}

/* What version label reads at logical 'which' of /f: the first byte of
 * the block, or 0 for a hole. */
struct first_byte {
	struct tux3_volume *vol;
	uint64_t want;
	int byte;
	uint64_t phys;
};

static int first_byte_of(void *ctx, const struct extent *x)
{
	struct first_byte *f = ctx;
	if (f->want < x->logical || f->want >= x->logical + x->count ||
	    !x->physical)
		return 0;
	f->phys = x->physical + f->want - x->logical;
	uint8_t *b = read_vol_block(f->vol, f->phys);
	f->byte = b[0];
	free(b);
	return 1;
}

static uint64_t last_phys;

static int reads(struct tux3_volume *vol, const char *name, uint64_t block)
{
	tux3_ino_t ino;
	struct inode inode;
	unsigned label = 0;
	for (unsigned l = 1; name && l < vol->vt->top; l++)
		if ((vol->vt->v[l].flags & VERSION_USED) &&
		    !strcmp(vol->vt->v[l].name, name))
			label = l;
	CHECK(!name || label);
	CHECK_EQ(tux3_lookup_path(vol, "/f", &ino), 0);
	CHECK_EQ(inode_load(vol, ino, &inode), 0);
	struct first_byte f = { vol, block, 0, 0 };
	CHECK(vfilemap_walk(vol, &inode, vol->vt, label, 0, 64, first_byte_of,
			    &f) >= 0);
	inode_free(&inode);
	last_phys = f.phys;
	return f.byte;
}

static void no_alloc_problem(void *ctx, uint64_t block, uint64_t count,
			     enum tux3_block_problem what)
{
	(void)ctx;
	fprintf(stderr, "check_alloc: block %llu +%llu: problem %d\n",
		(unsigned long long)block, (unsigned long long)count, what);
	CHECK(0);
}

/* monday of the live version, tuesday of monday; /f written in the live
 * version (4 blocks of 'a'), then block 1 rewritten 'b' in the live
 * version and block 2 punched in tuesday. */
static const char *two_snapshots_and_a_file(void)
{
	static uint8_t buf[4 * 4096];
	const char *path = scratch_volume(12, 16 << 20,
					  TUX3_FEATURE_COMPAT_DEFAULT);
	struct tux3_volume *vol = open_writer(path);
	tux3_ino_t ino;
	struct inode inode;
	uint64_t written;
	unsigned label = 0;
	memset(buf, 'a', sizeof(buf));
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "f", 1, 0644, 0, 0, &ino), 0);
	CHECK_EQ(tux3_write(vol, ino, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	CHECK_EQ(version_create(vol, "monday", NULL, NULL), 0);
	CHECK_EQ(version_create(vol, "tuesday", "monday", NULL), 0);
	CHECK_EQ(version_create(vol, "monday", NULL, NULL), -EEXIST);
	CHECK_EQ(version_create(vol, "x", "nosuch", NULL), -ENOENT);
	CHECK_EQ(inode_load(vol, ino, &inode), 0);
	CHECK_EQ(vfilemap_update(vol, &inode, vol->vt, &label, 1, 1,
				 VEXT_REDIRECT, &written), 0);
	memset(buf, 'b', 4096);
	CHECK_EQ(dev_pwrite(&vol->dev, buf, 4096, written << 12), 0);
	label = (unsigned)vtree_find_tag(vol->vt, 2);	/* tuesday */
	CHECK_EQ(vfilemap_update(vol, &inode, vol->vt, &label, 2, 1,
				 VEXT_PUNCH, &written), 0);
	CHECK_EQ(inode_store(vol, &inode), 0);
	inode_free(&inode);
	CHECK_EQ(reads(vol, NULL, 1), 'b');
	CHECK_EQ(reads(vol, "monday", 1), 'a');
	CHECK_EQ(reads(vol, "tuesday", 1), 'a');
	CHECK_EQ(reads(vol, "tuesday", 2), 0);
	CHECK_EQ(reads(vol, "monday", 2), 'a');
	CHECK_EQ(tux3_umount(vol), 0);
	return path;
}

static void clean(struct tux3_volume *vol)
{
	CHECK_EQ(tux3_check_alloc(vol, no_alloc_problem, NULL), 0);
	CHECK(vol->vpending == NULL);
	if (!vol->vt)
		return;		/* back to the 2014 format */
	CHECK_EQ(vtree_check(vol->vt, NULL, NULL), 0);
	CHECK_EQ(vol->vt->dying, 0);
}

TEST(snapshot_create_delete)
{
	const char *path = two_snapshots_and_a_file();
	struct tux3_volume *vol = open_writer(path);
	CHECK_EQ(version_delete(vol, "tuesday", true), 0);
	CHECK_EQ(version_delete(vol, "tuesday", true), -ENOENT);
	CHECK_EQ(reads(vol, "monday", 1), 'a');
	CHECK_EQ(reads(vol, "monday", 2), 'a');
	CHECK_EQ(reads(vol, NULL, 1), 'b');
	CHECK_EQ(tux3_umount(vol), 0);
	vol = open_mode(path, TUX3_OPEN_RDONLY);
	clean(vol);
	CHECK_EQ(vol->vt->used, 2);
	tux3_close(vol);
	/* the last snapshot goes: its old block 1 is freed */
	vol = open_writer(path);
	CHECK_EQ(reads(vol, "monday", 1), 'a');
	uint64_t old = last_phys;
	CHECK_EQ(tux3_block_is_used(vol, old), 1);
	CHECK_EQ(version_delete(vol, "monday", true), 0);
	CHECK_EQ(tux3_umount(vol), 0);
	vol = open_mode(path, TUX3_OPEN_RDONLY);
	clean(vol);
	/* and the volume is back to the 2014 format (17.8) */
	CHECK(!vol->vt);
	CHECK(!vtable_marked(vol));
	CHECK(!memcmp(vol->super.magic, tux3_magic_2014, 8));
	CHECK_EQ(tux3_block_is_used(vol, old), 0);
	CHECK_EQ(reads(vol, NULL, 1), 'b');
	tux3_close(vol);
}

/* A crash after the plan was committed: read-only opens see it pending;
 * the next writer of versions finishes it. */
TEST(snapshot_delete_resumed)
{
	static struct vdelete_plan plan;
	const char *path = two_snapshots_and_a_file();
	struct tux3_volume *vol = open_writer(path);
	CHECK_EQ(version_delete_begin(vol, "monday", &plan), 0);
	CHECK_EQ(plan.count, 1);	/* monday promotes tuesday */
	tux3_close(vol);		/* the crash: nothing more written */

	vol = open_mode(path, TUX3_OPEN_RDONLY);
	CHECK(vol->vpending != NULL);
	CHECK_EQ(vol->vpending->count, 1);
	tux3_close(vol);

	vol = open_writer(path);	/* resumes */
	CHECK(vol->vpending == NULL);
	CHECK_EQ(tux3_umount(vol), 0);
	vol = open_mode(path, TUX3_OPEN_RDONLY);
	clean(vol);
	CHECK_EQ(vol->vt->used, 2);
	/* tuesday inherited monday's block 1, and keeps its own hole */
	CHECK_EQ(reads(vol, "tuesday", 1), 'a');
	CHECK_EQ(reads(vol, "tuesday", 2), 0);
	CHECK_EQ(reads(vol, NULL, 1), 'b');
	tux3_close(vol);
}

int main(void)
{
	return run_tests("vtable_io");
}
