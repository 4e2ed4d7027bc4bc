/*
 * The version index built from the volume's elements (doc/format.md
 * 17.11): every inode's attribute labels and its versioned data's, one
 * pass over the inode table.  fsck.tux3 pass 9 rebuilds a damaged or
 * short index with it, and tux3tune -O version_index gives one to a
 * volume versioned before the index.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "internal.h"
#include "version/version.h"
#include "version/vfilemap.h"

struct data_note {
	struct tux3_volume *vol;
	tux3_ino_t inum;
	int err;
};

static void note_data_label(void *ctx, unsigned label)
{
	struct data_note *d = ctx;
	if (!d->err)
		d->err = vindex_add(d->vol, label, d->inum);
}

static int note_inode(void *ctx, tux3_ino_t inum, const uint8_t *blob,
		      unsigned len, tux3_block_t leafblock)
{
	struct tux3_volume *vol = ctx;
	struct vattrs x;
	unsigned bad_at;
	uint64_t dtree = 0;
	(void)leafblock;
	/* the whole blob, a chain's part too; a damaged one gives no
	 * labels (fsck repairs it before it rebuilds the index) */
	if (inum < TUX3_ROOT_INO ||
	    vattrs_decode_whole(vol, inum, blob, len, &x, &bad_at)) {
		tux3_clear_error(vol);
		return 0;
	}
	int err = 0;
	for (unsigned i = 0; i < x.n && !err; i++)
		err = vindex_add(vol, x.a[i].label, inum);
	dtree = vattrs_dtree(&x);
	vattrs_free(&x);
	struct inode inode = { .inum = inum, .dtree = dtree };
	if (!err && dtree && vfilemap_is_versioned(vol, &inode)) {
		struct data_note d = { vol, inum, 0 };
		int r = vfilemap_labels(vol, &inode, note_data_label, &d);
		err = d.err ? d.err : r == -ENOMEM ? r : 0;
	}
	tux3_clear_error(vol);
	return err;
}

int version_index_rebuild(struct tux3_volume *vol)
{
	if (!vol->vt || vol->vt_bad)
		return -ENOENT;
	int err = vindex_begin(vol);
	if (!err)
		err = walk_inode_blobs(vol, note_inode, vol);
	if (!err && vindex_incomplete(vol))
		vol_warn(vol, "version index: more than %u pairs, kept as "
			 "incomplete (snapshot diff reads the inode table)",
			 VINDEX_MAX_RECORDS);
	return err;
}

int tux3_set_version_index_feature(struct tux3_volume *vol, int on,
				   uint64_t *pairs)
{
	*pairs = 0;
	if (vol->mode != TUX3_OPEN_RDWR)
		return vol_error(vol, -EROFS, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "volume opened read-only");
	if (!vol->vt || vol->vt_bad)
		return vol_error(vol, vol->vt ? -EUCLEAN : -ENOENT, TUX3_NONE,
				 TUX3_VTABLE_INO, TUX3_NONE, vol->vt ?
				 "the version table does not decode (run "
				 "fsck.tux3)" : "the volume has no versions");
	int err;
	if (on) {
		/* built whole even when the bit is set: a damaged or
		 * incomplete index is made again too */
		if (!(err = version_index_rebuild(vol)))
			*pairs = vindex_count(vol);
		return err;
	}
	if (!vindex_feature(vol))
		return 0;
	struct inode inode;
	vindex_end(vol);
	vol->super_dirty = true;
	if ((err = inode_load(vol, TUX3_VTABLE_INO, &inode)))
		return err;
	err = inode_truncate(vol, &inode, vtable_size(vol->vt));
	if (!err)
		err = inode_store(vol, &inode);
	inode_free(&inode);
	return err;
}
