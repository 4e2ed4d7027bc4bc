/*
 * Layer: vtable_inode.c -- the version table in inode 3 and the gate: the
 * first table turns the magic and the VERSIONS feature together, both
 * survive a reopen; a volume where they disagree, or whose table is
 * damaged, still reads (the origin), with a warning naming the fault,
 * and is never opened for writing.
 */
#include "fixtures.h"
#include "version.h"

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

/* Opens read-only with a warning containing want, and no table; a
 * read-write open is refused. */
static void opens_with_warning(const char *path, const char *want)
{
	struct tux3_volume *vol = open_mode(path, TUX3_OPEN_RDONLY);
	bool seen = false;
	CHECK(vol->vt == NULL);
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

	/* no unversioned writer may touch it */
	char msg[512];
	CHECK_EQ(tux3_open_err(path, TUX3_OPEN_RDWR, &vol, msg, sizeof(msg)),
		 -EROFS);
	CHECK(strstr(msg, "versions") != NULL);

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

int main(void)
{
	return run_tests("vtable_io");
}
