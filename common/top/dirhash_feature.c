/*
 * DIR_INDEX set or cleared on a volume (tux3tune -O dir_index,
 * -O ^dir_index; doc/format.md 15.5).  Setting builds the index of every
 * directory of DIRHASH_MIN_BLOCKS blocks or more at once (not lazily),
 * so a cold lookup is cheap from the first mount on.  Clearing packs
 * every directory that has index blocks (dir_compact with the bit off
 * drops them), so the volume is the 2014 format again.  The changes go
 * into deltas that tux3_sync or tux3_umount commit.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include "internal.h"
#include "tux3_walk.h"

struct ino_list {
	tux3_ino_t *v;
	size_t n, cap;
	bool dirs_only;
};

static int list_inode(void *ctx, const struct tux3_stat *st,
		      tux3_block_t leafblock, unsigned bloblen)
{
	struct ino_list *l = ctx;
	(void)leafblock;
	(void)bloblen;
	if (l->dirs_only && !S_ISDIR(st->mode))
		return 0;
	if (array_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)))
		return -ENOMEM;
	l->v[l->n++] = st->ino;
	return 0;
}

static int volume_list(struct tux3_volume *vol, bool dirs_only,
		       tux3_ino_t **v, size_t *n)
{
	struct ino_list l = { .dirs_only = dirs_only };
	static const struct tux3_walk_ops ops = { .inode = list_inode };
	int err = tux3_walk(vol, &ops, &l);
	*v = l.v;
	*n = l.n;
	return err;
}

int volume_dirs(struct tux3_volume *vol, tux3_ino_t **dirs, size_t *n)
{
	return volume_list(vol, true, dirs, n);
}

int volume_inodes(struct tux3_volume *vol, tux3_ino_t **inodes, size_t *n)
{
	return volume_list(vol, false, inodes, n);
}

/* One directory: its index built (on) or its index blocks dropped
 * (off).  *done: it changed. */
static int follow_feature(struct tux3_volume *vol, tux3_ino_t inum, bool on,
			  bool *done)
{
	struct inode dir;
	uint8_t *blk = malloc(vol->blocksize);
	int err = blk ? inode_load_dir(vol, inum, &dir) : -ENOMEM;
	*done = false;
	if (err) {
		free(blk);
		return err;
	}
	uint64_t blocks = dir.size >> vol->blockbits;
	if (on && blocks >= DIRHASH_MIN_BLOCKS) {
		err = dirhash_build(vol, &dir);
		*done = !err;
		if (!err)
			err = inode_store(vol, &dir);
	} else if (!on && blocks) {
		err = dir_read_block(vol, &dir, 0, blk);
		if (!err && dirhash_is_index(blk, vol->blocksize)) {
			struct dir_compact_result r;
			err = dir_compact(vol, &dir, &r);
			*done = !err;
		}
	}
	inode_free(&dir);
	free(blk);
	return err == DIRHASH_NONE ? 0 : err;
}

int tux3_set_dir_index_feature(struct tux3_volume *vol, int on,
			       uint64_t *dirs)
{
	tux3_ino_t *v = NULL;
	size_t n = 0;
	*dirs = 0;
	int err = tux3_set_identity(vol, NULL, NULL);	/* a record */
	if (err)
		return err;
	if (vol->ident.incompat & TUX3_FEATURE_INCOMPAT_VERSIONS)
		return vol_error(vol, -EOPNOTSUPP, TUX3_NONE, TUX3_NONE,
				 TUX3_NONE, "dir_index cannot be changed on a "
				 "volume with snapshots");
	if (on)
		vol->ident.ro_compat |= TUX3_FEATURE_RO_COMPAT_DIR_INDEX;
	else
		vol->ident.ro_compat &= ~TUX3_FEATURE_RO_COMPAT_DIR_INDEX;
	err = volume_dirs(vol, &v, &n);
	for (size_t i = 0; !err && i < n; i++) {
		bool done = false;
		err = change_begin(vol);
		if (!err)
			err = follow_feature(vol, v[i], on, &done);
		*dirs += done;
	}
	free(v);
	return err;
}
