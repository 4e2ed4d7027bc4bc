/*
 * Layer: snapshot_compact.c, vcompact.c -- the way back to the 2014
 * format (doc/format.md 17.8).  A volume given snapshots, written in
 * every version, then rid of them all is the 2014 format again: the 2014
 * magic, no VERSIONS bit, no inode 3, no versioned leaf or attribute
 * left, fsck clean, and the live tree as it was.  The explicit compact
 * reports what it rewrote and refuses while snapshots or foreign
 * elements remain.
 */
#include <sys/stat.h>
#include "fixtures.h"
#include "tux3_walk.h"
#include "version/version.h"

static struct tux3_volume *open_as(const char *path, int mode)
{
	struct tux3_volume *vol = NULL;
	char msg[512];
	int err = tux3_open_err(path, mode, &vol, msg, sizeof(msg));
	if (err)
		fprintf(stderr, "open: %s\n", msg);
	CHECK_EQ(err, 0);
	return vol;
}

/* ---- the live tree as a digest: every inode's stat and content, every
 * name ---- */
struct digest {
	struct tux3_volume *vol;
	uint64_t h;
};

static void mix(struct digest *d, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		d->h = (d->h ^ b[i]) * 0x100000001b3ull;
}

static int digest_inode(void *ctx, const struct tux3_stat *st,
			tux3_block_t leafblock, unsigned bloblen)
{
	struct digest *d = ctx;
	static uint8_t buf[1 << 16];
	(void)leafblock; (void)bloblen;
	if (st->ino < TUX3_ROOT_INO || !st->mode)
		return 0;	/* (mode 0: an inode only snapshots have) */
	uint64_t f[] = { st->ino, st->mode, st->uid, st->gid, st->nlink,
			 st->size, (uint64_t)st->mtime_ns,
			 (uint64_t)st->ctime_ns, st->blocks, st->xattr_count };
	mix(d, f, sizeof(f));
	if (S_ISREG(st->mode))
		for (uint64_t pos = 0; pos < st->size; pos += sizeof(buf)) {
			ssize_t n = tux3_read(d->vol, st->ino, buf,
					      sizeof(buf), pos);
			CHECK(n > 0);
			mix(d, buf, (size_t)n);
		}
	return 0;
}

static int digest_dirent(void *ctx, tux3_ino_t dir, const char *name,
			 unsigned len, tux3_ino_t ino, unsigned type,
			 uint64_t pos, tux3_block_t block)
{
	struct digest *d = ctx;
	(void)pos; (void)block;
	uint64_t f[] = { dir, ino, type };
	mix(d, f, sizeof(f));
	mix(d, name, len);
	return 0;
}

static uint64_t live_digest(struct tux3_volume *vol)
{
	struct tux3_walk_ops ops = { .inode = digest_inode,
				     .dirent = digest_dirent };
	struct digest d = { vol, 0xcbf29ce484222325ull };
	CHECK_EQ(tux3_walk(vol, &ops, &d), 0);
	return d.h;
}

/* ---- the 2014 format, checked structure by structure ---- */
static void check_2014(const char *path, uint64_t digest)
{
	struct tux3_volume *vol = open_as(path, TUX3_OPEN_RDONLY);
	struct inode table;
	tux3_ino_t *ino;
	size_t n;
	CHECK(!memcmp(vol->super.magic, tux3_magic_2014, 8));
	CHECK(!(vol->ident.incompat & TUX3_FEATURE_INCOMPAT_VERSIONS));
	CHECK(!vol->vt && !vtable_marked(vol));
	CHECK_EQ(inode_load(vol, TUX3_VTABLE_INO, &table), -ENOENT);
	tux3_clear_error(vol);
	CHECK_EQ(version_inodes(vol, NULL, &ino, &n), 0);
	CHECK(n > 1);
	for (size_t i = 0; i < n; i++) {
		uint8_t *blob;
		unsigned len, bad_at;
		struct vattrs x;
		struct inode inode;
		enum vfilemap_kind kind;
		CHECK_EQ(itree_blob(vol, ino[i], &blob, &len), 0);
		CHECK_EQ(vattrs_decode(blob, len, &x, &bad_at), 0);
		for (unsigned k = 0; k < x.n; k++)
			CHECK(!x.a[k].label && !x.a[k].absent);
		vattrs_free(&x);
		free(blob);
		CHECK_EQ(inode_load(vol, ino[i], &inode), 0);
		CHECK_EQ(vfilemap_kind(vol, &inode, &kind), 0);
		CHECK(kind != VFM_VLEAF);
		inode_free(&inode);
	}
	free(ino);
	CHECK_EQ(live_digest(vol), digest);
	tux3_close(vol);
	fsck_clean(path);
}

/* Snapshots of the live version and of a snapshot, and every kind of
 * change in the live version and in a snapshot: data rewritten in the
 * middle of a file of many leaves, a truncate, xattrs set and removed, a
 * chmod, a rename, an unlink, a file made after a snapshot. */
static void lived_with_snapshots(const char *path, uint64_t *digest)
{
	static uint8_t buf[300 << 9];
	struct tux3_volume *vol = open_as(path, TUX3_OPEN_RDWR);
	tux3_ino_t d = 0;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + i / 511);
	CHECK_EQ(tux3_mkdir(vol, TUX3_ROOT_INO, "d", 1, 040755, 0, 0, &d), 0);
	tux3_ino_t big = file_made(vol, d, "big", buf, sizeof(buf));
	tux3_ino_t small = file_made(vol, d, "small", "hello", 5);
	file_made(vol, d, "gone", "bye", 3);
	CHECK_EQ(tux3_setxattr(vol, small, "user.a", "one", 3, 0), 0);
	CHECK_EQ(tux3_snapshot_create(vol, "s1", NULL), 0);
	/* every other block of big rewritten: many records, many leaves */
	for (unsigned b = 0; b < 300; b += 2)
		CHECK_EQ(tux3_write(vol, big, "X", 1, (uint64_t)b << 9), 1);
	CHECK_EQ(tux3_truncate(vol, big, (uint64_t)250 << 9), 0);
	CHECK_EQ(tux3_write(vol, small, "HELLO world", 11, 0), 11);
	CHECK_EQ(tux3_setxattr(vol, small, "user.a", "two", 3, 0), 0);
	CHECK_EQ(tux3_setxattr(vol, small, "user.b", "three", 5, 0), 0);
	struct tux3_setattr sa = { .valid = TUX3_SET_MODE, .mode = 0600 };
	CHECK_EQ(tux3_setattr(vol, small, &sa), 0);
	CHECK_EQ(tux3_rename(vol, d, "small", 5, d, "renamed", 7, 0), 0);
	CHECK_EQ(tux3_unlink(vol, d, "gone", 4), 0);
	file_made(vol, TUX3_ROOT_INO, "new", "new", 3);
	CHECK_EQ(tux3_snapshot_create(vol, "s2", "s1"), 0);
	/* a write in s1, which has a child: s1 moves to an implicit child */
	CHECK_EQ(tux3_version_select(vol, "s1"), 0);
	CHECK_EQ(tux3_write(vol, big, "snap", 4, 0), 4);
	CHECK_EQ(tux3_removexattr(vol, small, "user.a"), 0);
	CHECK_EQ(tux3_version_select(vol, NULL), 0);
	CHECK_EQ(tux3_snapshot_create(vol, "s3", NULL), 0);
	CHECK_EQ(tux3_write(vol, big, "again", 5, 100), 5);
	CHECK_EQ(tux3_sync(vol), 0);
	*digest = live_digest(vol);
	tux3_close(vol);
	fsck_clean(path);
}

/* A fresh volume of 2^bits-byte blocks that lived with snapshots. */
static const char *lived_volume(unsigned bits, uint64_t *digest)
{
	const char *path = scratch_volume(bits, 8 << 20,
					  TUX3_FEATURE_COMPAT_DEFAULT);
	lived_with_snapshots(path, digest);
	return path;
}

static void back_to_2014(unsigned bits)
{
	uint64_t digest;
	const char *path = lived_volume(bits, &digest);
	struct tux3_volume *vol = open_as(path, TUX3_OPEN_RDWR);
	CHECK_EQ(tux3_snapshot_delete(vol, "s2"), 0);
	CHECK_EQ(tux3_snapshot_delete(vol, "s3"), 0);
	CHECK(vtable_marked(vol));	/* s1 remains */
	CHECK_EQ(tux3_snapshot_compact(vol, NULL), -EBUSY);
	CHECK_EQ(tux3_snapshot_delete(vol, "s1"), 0);
	CHECK(!vtable_marked(vol) && !vol->vt);
	CHECK_EQ(live_digest(vol), digest);
	/* compact on a 2014 volume: nothing to do */
	struct tux3_compact_report rep;
	CHECK_EQ(tux3_snapshot_compact(vol, &rep), 0);
	CHECK(rep.already);
	CHECK_EQ(tux3_umount(vol), 0);
	check_2014(path, digest);
	/* and snapshots work again on it */
	vol = open_as(path, TUX3_OPEN_RDWR);
	CHECK_EQ(tux3_snapshot_create(vol, "again", NULL), 0);
	CHECK(vtable_marked(vol));
	CHECK_EQ(tux3_snapshot_delete(vol, "again"), 0);
	CHECK_EQ(tux3_umount(vol), 0);
	check_2014(path, digest);
}

TEST(back_to_2014_4k) { back_to_2014(12); }
TEST(back_to_2014_512) { back_to_2014(9); }

/* A volume left versioned with no snapshot (as a delete by an older
 * library left it): the explicit compact reports what it rewrote. */
TEST(explicit_compact_reports)
{
	uint64_t digest;
	const char *path = lived_volume(12, &digest);
	struct tux3_volume *vol = open_as(path, TUX3_OPEN_RDWR);
	/* the deletes without the step back: the version table alone */
	static struct vdelete_plan plan;
	const char *names[] = { "s2", "s3", "s1" };
	for (unsigned i = 0; i < 3; i++) {
		CHECK_EQ(version_delete_begin(vol, names[i], &plan), 0);
		CHECK_EQ(version_delete_finish(vol, &plan, false), 0);
	}
	CHECK(vtable_marked(vol) && vtree_alone(vol->vt));
	CHECK_EQ(tux3_umount(vol), 0);
	vol = open_as(path, TUX3_OPEN_RDONLY);
	struct tux3_compact_report rep;
	CHECK_EQ(tux3_snapshot_compact(vol, &rep), -EROFS);
	tux3_close(vol);
	vol = open_as(path, TUX3_OPEN_RDWR);
	CHECK_EQ(tux3_snapshot_compact(vol, &rep), 0);
	CHECK(!rep.already);
	CHECK(rep.inodes >= 5);
	CHECK(rep.files >= 1);		/* big, d */
	CHECK(rep.blobs >= 1);
	CHECK_EQ(rep.table_blocks, 2);	/* the table's, the index's */
	CHECK_EQ(tux3_umount(vol), 0);
	check_2014(path, digest);
}

/* An element of a label the table no longer has: refused, the volume
 * stays versioned and reads as before. */
TEST(compact_refuses_foreign_elements)
{
	uint64_t digest;
	const char *path = lived_volume(12, &digest);
	struct tux3_volume *vol = open_as(path, TUX3_OPEN_RDWR);
	static struct vtree vt;
	vtree_init(&vt);
	CHECK_EQ(vtable_save(vol, &vt), 0);	/* the labels dropped alone */
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK_EQ(tux3_snapshot_compact(vol, NULL), -EUCLEAN);
	CHECK(strstr(vol->error.what, "remains"));
	CHECK_EQ(tux3_umount(vol), 0);
	vol = open_as(path, TUX3_OPEN_RDONLY);
	CHECK(vtable_marked(vol));
	CHECK_EQ(live_digest(vol), digest);
	tux3_close(vol);
}

int main(void)
{
	return run_tests("vcompact");
}
