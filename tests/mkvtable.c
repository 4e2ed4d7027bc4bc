/*
 * mkvtable: give a test volume a version table (fsck pass 9's cases).
 *
 *   mkvtable IMAGE ok|ghost1|dying|dup-tag|vfile|snap-ns|snap-attr|orphan
 *
 * ok: two snapshots, 'monday' (tag 7, of the origin) and 'tuesday' (tag 8,
 * of monday).  The others break one rule of the table on purpose: a
 * ghost with one child, a delete left half done, one tag on two labels.
 * vfile: ok, plus /versioned, a 4-block file whose block 1 the live
 * version rewrote after the snapshots (so monday and tuesday keep the old
 * block by relabelling) and whose block 2 tuesday punched: a vleaf tree.
 * snap-ns, snap-attr: ok, then /only-tuesday created in tuesday through
 * the file operations, and its blob damaged: snap-ns makes the inode
 * absent in tuesday (tuesday's root names an inode it does not have),
 * snap-attr moves its times and size to label 9, which is not in the
 * tree.
 * hot: /hot, its first block rewritten after each of N snapshots (N
 * one more than a versioned leaf holds records): its elements go to an
 * element chain (format.md 17.3c); made through the file operations.
 * The volume must not have versions yet (the library writes the first
 * table of a volume only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "version/version.h"
#include "version/vfilemap.h"

/* /versioned: 4 blocks written unversioned, then changed per version. */
static int versioned_file(struct tux3_volume *vol, struct vtree *vt)
{
	static uint8_t buf[4 << 16];
	uint64_t written[4];
	struct inode inode;
	tux3_ino_t ino;
	unsigned bs = vol->blocksize, label;
	int err;

	memset(buf, 'a', 4 * bs);
	if ((err = tux3_create(vol, TUX3_ROOT_INO, "versioned", 9, 0644, 0, 0,
			       &ino)) ||
	    tux3_write(vol, ino, buf, 4 * bs, 0) != (ssize_t)(4 * bs) ||
	    (err = inode_load(vol, ino, &inode)))
		return err ? err : -EIO;
	label = VERSION_ORIGIN;
	err = vfilemap_update(vol, &inode, vt, &label, 1, 1, VEXT_REDIRECT,
			      written);
	memset(buf, 'b', bs);
	if (!err)
		err = dev_pwrite(&vol->dev, buf, bs, written[0] << vol->blockbits);
	label = (unsigned)vtree_find_tag(vt, 8);
	if (!err)
		err = vfilemap_update(vol, &inode, vt, &label, 2, 1, VEXT_PUNCH,
				      written);
	if (!err)
		err = inode_store(vol, &inode);
	inode_free(&inode);
	return err;
}

/* Block 0 of the file written by the version tagged tag. */
static int write_block0(struct tux3_volume *vol, struct inode *inode,
			struct vtree *vt, uint32_t tag)
{
	static uint8_t buf[65536];
	uint64_t written;
	unsigned label = (unsigned)vtree_find_tag(vt, tag);
	int err = vfilemap_update(vol, inode, vt, &label, 0, 1, VEXT_REDIRECT,
				  &written);
	memset(buf, (int)tag, vol->blocksize);
	return err ? err : dev_pwrite(&vol->dev, buf, vol->blocksize,
				      written << vol->blockbits);
}

/*
 * orphan: a table of its own.  /orphaned is written by monday, then
 * tuesday and wednesday are taken of monday and each writes it too; then
 * the table is edited to make monday a ghost.  The tree is sound (a ghost
 * with two children), but monday's element is read by no version: an
 * orphan element (EL3).
 */
static int orphan_file(struct tux3_volume *vol, struct vtree *vt)
{
	struct inode inode;
	tux3_ino_t ino;
	int err;

	vtree_init(vt);
	int a = vtree_snapshot(vt, 0, 7, 1);
	snprintf(vt->v[a].name, sizeof(vt->v[a].name), "monday");
	if ((err = tux3_create(vol, TUX3_ROOT_INO, "orphaned", 8, 0644, 0, 0,
			       &ino)) ||
	    (err = inode_load(vol, ino, &inode)))
		return err;
	err = write_block0(vol, &inode, vt, 7);
	int b = vtree_snapshot(vt, (unsigned)a, 8, 2);
	int c = vtree_snapshot(vt, (unsigned)a, 9, 3);
	snprintf(vt->v[b].name, sizeof(vt->v[b].name), "tuesday");
	snprintf(vt->v[c].name, sizeof(vt->v[c].name), "wednesday");
	if (!err)
		err = write_block0(vol, &inode, vt, 8);
	if (!err)
		err = write_block0(vol, &inode, vt, 9);
	if (!err)
		err = inode_store(vol, &inode);
	inode_free(&inode);
	/* the damage: monday made a ghost by the table alone */
	vt->v[a].flags |= VERSION_GHOST;
	vt->v[a].tag = 0;
	memset(vt->v[a].name, 0, sizeof(vt->v[a].name));
	vt->ghosts++;
	return err;
}

/* /only-tuesday made in tuesday, then its blob damaged as mode says. */
static int snapshot_file(struct tux3_volume *vol, const char *mode)
{
	struct vattrs x;
	uint8_t *blob, out[4096];
	unsigned len, bad_at, label;
	tux3_ino_t ino;
	int err = tux3_version_select(vol, "tuesday");
	if (!err)
		err = tux3_create(vol, TUX3_ROOT_INO, "only-tuesday", 12, 0644,
				  0, 0, &ino);
	if (!err && tux3_write(vol, ino, "tuesday\n", 8, 0) != 8)
		err = -EIO;
	if (err || (err = tux3_sync(vol)) ||
	    (err = itree_blob(vol, ino, &blob, &len)))
		return err;
	err = vattrs_decode(blob, len, &x, &bad_at);
	free(blob);
	if (err)
		return err;
	label = (unsigned)vtree_find_tag(vol->vt, 8);
	/* snap-attr: its times and size (kind 3) on label 9 */
	for (unsigned i = 0; i < x.n; i++)
		if (x.a[i].key == VATTR_KEY(3, 0) && x.a[i].label == label)
			x.a[i].label = !strcmp(mode, "snap-attr") ? 9 : label;
	if (!strcmp(mode, "snap-ns"))
		err = vattrs_set(vol->vt, &x, &label, VATTR_KEY(1, 0), NULL,
				 0, 0);
	int n = err ? err : vattrs_encode(&x, out, sizeof(out));
	vattrs_free(&x);
	if (n < 0)
		return n;
	err = itree_store(vol, ino, out, (unsigned)n);
	return err ? err : tux3_sync(vol);
}

/* The table written again with monday's name filling all 40 bytes (no
 * terminating NUL) and a good CRC: damage that must cost the name only. */
static int name_without_nul(struct tux3_volume *vol, const struct vtree *vt,
			    unsigned a)
{
	size_t size = vtable_size(vt);
	uint8_t *buf = malloc(size);
	struct inode inode;
	int err;
	if (!buf)
		return -ENOMEM;
	vtable_encode(vt, buf);
	memset(buf + VTABLE_HEADER + (size_t)a * VTABLE_RECORD + 24, 'm',
	       VERSION_NAME_MAX + 1);
	uint32_t crc = tux3_crc32c(0, buf, 12);
	crc = tux3_crc32c(crc, "\0\0\0\0", 4);
	crc = tux3_crc32c(crc, buf + 16, size - 16);
	put_be32(buf + 12, crc);
	err = internal_inode(vol, TUX3_VTABLE_INO, &inode);
	if (!err) {
		err = inode_write_data(vol, &inode, buf, size, 0, true);
		if (!err)
			err = inode_store(vol, &inode);
		inode_free(&inode);
	}
	free(buf);
	return err;
}

/* hot: snapshots s1..sN, /hot's first block rewritten after each. */
static int hot_block(struct tux3_volume *vol)
{
	unsigned n = (vol->blocksize - 8) / 16 + 1;
	tux3_ino_t ino;
	char name[24], stamp[24];
	int err = tux3_create(vol, TUX3_ROOT_INO, "hot", 3, 0100644, 0, 0,
			      &ino);
	for (unsigned i = 0; i <= n && !err; i++) {
		snprintf(stamp, sizeof(stamp), "version %04u\n", i);
		ssize_t w = tux3_write(vol, ino, stamp, strlen(stamp), 0);
		if (w < 0)
			err = (int)w;
		snprintf(name, sizeof(name), "s%u", i + 1);
		if (!err && i < n)
			err = tux3_snapshot_create(vol, name, NULL);
	}
	return err ? err : tux3_umount(vol);
}

int main(int argc, char **argv)
{
	static struct vtree vt;
	static struct vdelete_plan plan;
	struct tux3_volume *vol;
	char msg[512];

	if (argc != 3) {
		fprintf(stderr, "usage: mkvtable IMAGE "
			"ok|ghost1|dying|dup-tag|vfile|snap-ns|snap-attr|orphan|"
			"name-nul|hot\n");
		return 2;
	}
	if (tux3_open_err(argv[1], TUX3_OPEN_RDWR, &vol, msg, sizeof(msg))) {
		fprintf(stderr, "mkvtable: %s\n", msg);
		return 1;
	}
	if (!strcmp(argv[2], "hot")) {
		if (hot_block(vol)) {
			fprintf(stderr, "mkvtable: %s\n",
				tux3_error_text(vol, msg, sizeof(msg)));
			return 1;
		}
		return 0;
	}
	vtree_init(&vt);
	int a = vtree_snapshot(&vt, 0, 7, 1);
	int b = vtree_snapshot(&vt, (unsigned)a, 8, 2);
	snprintf(vt.v[a].name, sizeof(vt.v[a].name), "monday");
	snprintf(vt.v[b].name, sizeof(vt.v[b].name), "tuesday");
	if (!strcmp(argv[2], "ghost1")) {
		vt.v[a].flags |= VERSION_GHOST;
		vt.v[a].tag = 0;
		memset(vt.v[a].name, 0, sizeof(vt.v[a].name));
	} else if (!strcmp(argv[2], "dying")) {
		if (vtree_delete(&vt, 8, &plan))
			return 1;
		vtree_plan_record(&vt, &plan);
	} else if (!strcmp(argv[2], "vfile")) {
		if (versioned_file(vol, &vt)) {
			fprintf(stderr, "mkvtable: %s\n",
				tux3_error_text(vol, msg, sizeof(msg)));
			return 1;
		}
	} else if (!strcmp(argv[2], "orphan")) {
		if (orphan_file(vol, &vt)) {
			fprintf(stderr, "mkvtable: %s\n",
				tux3_error_text(vol, msg, sizeof(msg)));
			return 1;
		}
	} else if (!strcmp(argv[2], "dup-tag")) {
		vt.v[b].tag = 7;
	} else if (strcmp(argv[2], "ok") && strcmp(argv[2], "snap-ns") &&
		   strcmp(argv[2], "snap-attr") && strcmp(argv[2], "name-nul")) {
		fprintf(stderr, "mkvtable: unknown table %s\n", argv[2]);
		return 2;
	}
	bool snap = !strncmp(argv[2], "snap-", 5);
	bool nul = !strcmp(argv[2], "name-nul");
	/* the index names the elements made before the table (the
	 * library's writes note their own) */
	if (vtable_save(vol, &vt) || version_index_rebuild(vol) ||
	    (snap && (tux3_sync(vol) ||
	    snapshot_file(vol, argv[2]))) ||
	    (nul && name_without_nul(vol, &vt, (unsigned)a)) ||
	    tux3_umount(vol)) {
		fprintf(stderr, "mkvtable: %s\n",
			tux3_error_text(vol, msg, sizeof(msg)));
		return 1;
	}
	return 0;
}
