/*
 * ATIME set or cleared on a volume (tux3tune -O atime, -O ^atime;
 * doc/format.md 15.6).  Setting is the incompat bit and the magic it
 * implies: an inode without the attribute reads its atime as mtime until
 * a setattr or a read gives it one, so no inode is rewritten.  Clearing
 * first drops the attribute from every inode that has one (each such
 * inode stays valid on a volume with the bit), then the bit, so the
 * volume is the 2014 format again; the changes go into deltas that
 * tux3_sync or tux3_umount commit.
 */
#include <stdlib.h>
#include "internal.h"

/* One inode's ATIME attribute dropped, if it has one.  *done: it had. */
static int drop_atime(struct tux3_volume *vol, tux3_ino_t ino, bool *done)
{
	struct inode inode;
	int err = inode_load(vol, ino, &inode);
	*done = false;
	if (err)
		return err;
	if (inode.present & (1u << ATTR_ATIME)) {
		inode.present &= ~(1u << ATTR_ATIME);
		inode.atime = 0;
		err = inode_store(vol, &inode);
		*done = !err;
	}
	inode_free(&inode);
	return err;
}

static int drop_every_atime(struct tux3_volume *vol, uint64_t *inodes)
{
	tux3_ino_t *v;
	size_t n;
	int err = volume_inodes(vol, &v, &n);
	for (size_t i = 0; !err && i < n; i++) {
		bool done = false;
		/* change_begin may commit a full delta before this inode */
		if (!(err = change_begin(vol)))
			err = drop_atime(vol, v[i], &done);
		*inodes += done;
	}
	free(v);
	return err;
}

int tux3_set_atime_feature(struct tux3_volume *vol, int on,
			   uint64_t *inodes)
{
	*inodes = 0;
	int err = tux3_set_identity(vol, NULL, NULL);	/* a record */
	if (err)
		return err;
	if (!on && (vol->ident.incompat & TUX3_FEATURE_INCOMPAT_VERSIONS))
		return vol_error(vol, -EOPNOTSUPP, TUX3_NONE, TUX3_NONE,
				 TUX3_NONE, "atime cannot be cleared on a "
				 "volume with snapshots (their versions keep "
				 "access times)");
	if (!on && atime_enabled(vol) &&
	    (err = drop_every_atime(vol, inodes)))
		return err;
	superext_set_incompat(vol, TUX3_FEATURE_INCOMPAT_ATIME, on);
	return 0;
}
