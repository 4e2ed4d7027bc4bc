/*
 * Access time (the atime feature, doc/format.md 15.6): the ATIME attribute
 * that a volume with TUX3_FEATURE_INCOMPAT_ATIME keeps on every inode its
 * writers create, the setattr that sets it, and the read that refreshes
 * it (inode_atime_set, in inode_write.c, gives an inode the attribute).
 * A volume without the feature stores none: atime reads as mtime and
 * setting it is a no-op (noatime), so its inodes stay 2014 blobs.
 */
#include "write/write.h"

int tux3_atime_enabled(const struct tux3_volume *vol)
{
	return atime_enabled(vol);
}

/* Linux's relatime: a read refreshes an atime that does not say the file
 * was read since its last change, or one a day old; strictatime: every
 * read.  An atime already equal to now changes nothing either way. */
int tux3_atime_due(const struct tux3_stat *st, int mode, int64_t now_ns)
{
	if (st->atime_ns == now_ns)
		return 0;
	if (mode == TUX3_ATIME_STRICT)
		return 1;
	return st->atime_ns <= st->mtime_ns || st->atime_ns <= st->ctime_ns ||
	       now_ns - st->atime_ns >= TUX3_RELATIME_NS;
}

int tux3_atime_touch(struct tux3_volume *vol, tux3_ino_t ino, int mode,
		     int64_t now_ns)
{
	struct tux3_stat st;
	struct inode inode;
	int err;

	if (!atime_enabled(vol) || vol->mode != TUX3_OPEN_RDWR)
		return 0;
	if ((err = inode_load(vol, ino, &inode)))
		return err;
	inode_to_stat(vol, &inode, &st, 0);
	if (!tux3_atime_due(&st, mode, now_ns)) {
		inode_free(&inode);
		return 0;
	}
	inode_free(&inode);
	/* change_begin may commit a full delta: load again after it */
	if ((err = change_begin(vol)) || (err = inode_load(vol, ino, &inode)))
		return err;
	inode_atime_set(vol, &inode, now_ns);
	err = inode_store(vol, &inode);
	inode_free(&inode);
	return err ? err : 1;
}
