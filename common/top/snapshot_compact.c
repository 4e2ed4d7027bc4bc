/*
 * The way back to the 2014 format (doc/format.md 17.8).  A volume whose
 * version table holds the live version alone reads exactly as its
 * elements of label 0 say, and every element left is of label 0: the
 * versioned forms can go.  One delta does it all, committed by one
 * commit (a unify): every inode rewritten in its 2014 form
 * (vinode_compact), inode 3 freed, the 2014 magic written over the
 * versions magic and the VERSIONS bit cleared.  The superblock decides:
 * a crash before the commit leaves the versioned volume, one after it
 * the 2014 volume; the two marks are in two sectors, and a torn write of
 * them is settled by the magic at the next open (vtable_inode.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static int count_mapped(void *ctx, const struct extent *e)
{
	if (e->physical)
		*(uint64_t *)ctx += e->count;
	return 0;
}

/* Inode 3 and its blocks given back: the 2014 format never has it. */
static int drop_table(struct tux3_volume *vol, uint64_t *blocks)
{
	struct inode inode;
	int err = inode_load(vol, TUX3_VTABLE_INO, &inode);
	if (err == -ENOENT) {
		tux3_clear_error(vol);
		return 0;
	}
	if (err)
		return err;
	/* the table's and the version index's (a hole between them) */
	err = filemap_walk(vol, &inode, 0, TUX3_KEY_LIMIT, count_mapped,
			   blocks);
	if (!err)
		err = inode_free_unversioned(vol, &inode);
	if (!err)
		err = inode_delete(vol, TUX3_VTABLE_INO);
	inode_free(&inode);
	return err;
}

static void gate_close(struct tux3_volume *vol)
{
	vtable_unload(vol);
	vol->vt_dirty = false;
	vol->vtag = 0;
	vol->ident.incompat &= ~TUX3_FEATURE_INCOMPAT_VERSIONS;
	vindex_end(vol);	/* it went with inode 3 */
	/* 2014, or the features magic of a volume that keeps atime */
	memcpy(vol->super.magic, tux3_magic_for(vol->ident.incompat), 8);
	vol->super_dirty = true;
}

int version_compact_delta(struct tux3_volume *vol,
			  struct tux3_compact_report *rep)
{
	struct tux3_compact_report none;
	struct vcompact_count count = { 0 };
	tux3_ino_t *ino;
	size_t n;
	if (!rep)
		rep = &none;
	memset(rep, 0, sizeof(*rep));
	int err = version_inodes(vol, "compacting", &ino, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n && !err; i++) {
		err = vinode_compact(vol, ino[i], &count);
		rep->inodes += !err;
	}
	free(ino);
	if (!err)
		err = drop_table(vol, &rep->table_blocks);
	rep->files = count.files;
	rep->blobs = count.blobs;
	if (!err)
		gate_close(vol);
	else if (err != -EUCLEAN)
		vol->commit_failed = true;	/* a half-made map stays out */
	return err;
}

int tux3_snapshot_compact(struct tux3_volume *vol,
			  struct tux3_compact_report *rep)
{
	struct tux3_compact_report none;
	if (!rep)
		rep = &none;
	memset(rep, 0, sizeof(*rep));
	tux3_clear_error(vol);
	if (vol->mode != TUX3_OPEN_RDWR)
		return vol_error(vol, -EROFS, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "compacting needs a read-write open");
	if (!vtable_marked(vol)) {
		rep->already = 1;
		return 0;
	}
	if (!vol->vt || vol->vt_bad)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_VTABLE_INO,
				 TUX3_NONE, "the version table could not be "
				 "read: run fsck.tux3 first");
	if (vol->vpending || !vtree_alone(vol->vt))
		return vol_error(vol, -EBUSY, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "%s: the volume keeps its versions",
				 vol->vpending ? "a delete is pending" :
				 "snapshots remain");
	int err = tux3_sync(vol);
	if (!err)
		err = version_compact_delta(vol, rep);
	if (!err)
		err = tux3_unify(vol);
	return err;
}
