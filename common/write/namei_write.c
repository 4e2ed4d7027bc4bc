/*
 * Namespace changes: create, mkdir, mknod, symlink, link, unlink, rmdir,
 * rename, and the start every change makes (change_begin).  Each one
 * changes inodes and directory blocks through the copy-on-write layers
 * and logs what it did; tux3_sync() commits.  File data is
 * data_write.c's, inode attributes inode_write.c's.  A delta also commits by itself when it grows
 * past a bound.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "write/write.h"

static int writable(struct tux3_volume *vol)
{
	return vol_writable(vol);
}

/*
 * A delta that grew past its bound commits before the next change.  So
 * does one whose frees would give back space a volume near full needs:
 * each change copies the blocks it touches, and what it frees is free
 * only once its delta commits, so a long run of removals on a full
 * volume failed with ENOSPC while the space it had freed waited in the
 * delta (as the kernel commits its journal when space runs short).
 */
static int maybe_commit(struct tux3_volume *vol)
{
	if (vol->wlog.len >= (size_t)vol->commit_bound * 11)
		return delta_commit(vol, false);
	uint64_t low = 4 * vol->reserve_blocks;
	if (vol->delta_open && vol->bitmap.ready && vol->freeblocks < low &&
	    balloc_deferred(vol) >= low / 4)
		return delta_commit(vol, false);
	return 0;
}

/* Every change starts here: a writable volume, a valid name (if any),
 * and a delta that has not outgrown its bound. */
static int valid_name(const char *name, size_t len);
static int begin_change(struct tux3_volume *vol, const char *name,
			size_t len)
{
	int err = writable(vol);
	if (!err && name)
		err = valid_name(name, len);
	if (!err)
		err = maybe_commit(vol);
	return err;
}

/* The start of a change that names nothing (data, attributes). */
int change_begin(struct tux3_volume *vol)
{
	return begin_change(vol, NULL, 0);
}

/* ---- directories ---- */

static unsigned dirent_type(uint32_t mode)
{
	return inode_dtype(mode);
}

/* Try the blocks from..to-1 in order: -ENOSPC when none has room, else
 * the block taken in *at. */
static int dir_add_from(struct tux3_volume *vol, struct inode *dir,
			uint8_t *blk, uint64_t from, uint64_t to,
			const char *name, unsigned len, tux3_ino_t inum,
			unsigned type, uint64_t *at)
{
	unsigned bs = vol->blocksize;
	int err = -ENOSPC;
	for (uint64_t i = from; i < to && err == -ENOSPC; i++) {
		if ((err = dir_read_block(vol, dir, i, blk)))
			break;
		err = dirblock_add(blk, bs, name, len, inum, type);
		*at = i;
		if (err >= 0)
			err = inode_write_data(vol, dir, blk, bs,
					       i << vol->blockbits, false);
	}
	return err;
}

/* Add an entry: the first block with room, else a new block.  The
 * directory index, when there is one, names that block without reading
 * the others (the same block, so the same bytes on disk).  A bulk
 * append (append_only) looks at the last block only, so filling a
 * directory with new names costs linear time.  So does a directory with
 * a current on-disk index but no in-memory one yet (a cold create, as
 * every one-shot tool makes): its lookup read a few blocks, and building
 * the in-memory index only to find a hole would read all of them; the
 * holes are used again once that index is built (tux3fuse keeps it) or
 * after fsck.tux3 -D. */
static int dir_add_at(struct tux3_volume *vol, struct inode *dir,
		      const char *name, unsigned len, tux3_ino_t inum,
		      unsigned type, bool append_only)
{
	unsigned bs = vol->blocksize;
	uint64_t nblocks = (dir->size + bs - 1) >> vol->blockbits, from = 0;
	uint64_t at = nblocks;
	uint8_t *blk = malloc(bs);
	int err = -ENOSPC;

	if (!blk)
		return -ENOMEM;
	if (append_only || (!dir_index_cached(vol, dir) &&
			    dirhash_current(vol, dir, blk))) {
		from = nblocks ? nblocks - 1 : 0;
	} else if (!dir_index_room(vol, dir, len, &from) && from < nblocks) {
		err = dir_add_from(vol, dir, blk, from, from + 1, name, len,
				   inum, type, &at);
		if (err == -ENOSPC) {
			/* the index is out of step: the linear path decides */
			dir_index_forget(vol, dir->inum);
			from = 0;
		}
	}
	if (err == -ENOSPC)
		err = dir_add_from(vol, dir, blk, from, nblocks, name, len,
				   inum, type, &at);
	if (err == -ENOSPC) {
		at = nblocks;
		dirblock_init(blk, bs);
		err = dirblock_add(blk, bs, name, len, inum, type);
		if (err >= 0)
			err = inode_write_data(vol, dir, blk, bs,
					       nblocks << vol->blockbits, false);
	}
	free(blk);
	if (err >= 0)	/* the on-disk index follows, in the same delta */
		err = dirhash_added(vol, dir, name, len, at);
	return err < 0 ? err : 0;
}

static int dir_add(struct tux3_volume *vol, struct inode *dir,
		   const char *name, unsigned len, tux3_ino_t inum,
		   unsigned type)
{
	return dir_add_at(vol, dir, name, len, inum, type, false);
}

struct find_ctx {
	const char *name;
	unsigned len;
	uint64_t pos, inum;
	unsigned type;
	bool found;
};

static int find_entry(void *ctx, const struct dirent_info *d)
{
	struct find_ctx *f = ctx;
	if (d->name_len != f->len || memcmp(d->name, f->name, f->len))
		return 0;
	f->pos = d->pos;
	f->inum = d->inum;
	f->type = d->type;
	f->found = true;
	return 1;
}

static int dir_find(struct tux3_volume *vol, const struct inode *dir,
		    const char *name, unsigned len, struct find_ctx *f)
{
	*f = (struct find_ctx){ .name = name, .len = len };
	struct dirent_info d;
	int err = dir_lookup_indexed(vol, dir, name, len, &d);
	if (err != DIR_INDEX_NONE) {
		if (!err)
			*f = (struct find_ctx){ .name = name, .len = len,
						.pos = d.pos, .inum = d.inum,
						.type = d.type, .found = true };
		return err;
	}
	err = dir_iterate(vol, dir, find_entry, f);
	if (err < 0)
		return err;
	return f->found ? 0 : -ENOENT;
}

/* Remove name, found at pos (an index build since may have moved the
 * records of block 0: then it is looked up again). */
static int dir_remove(struct tux3_volume *vol, struct inode *dir,
		      uint64_t pos, const char *name, unsigned len)
{
	unsigned bs = vol->blocksize;
	uint8_t *blk = malloc(bs);
	uint64_t logical = pos >> vol->blockbits;
	struct find_ctx f;
	if (!blk)
		return -ENOMEM;
	int err = dir_read_block(vol, dir, logical, blk);
	if (!err && dirblock_find(blk, bs, name, len) != (int)(pos & (bs - 1)) &&
	    !(err = dir_find(vol, dir, name, len, &f))) {
		logical = f.pos >> vol->blockbits;
		pos = f.pos;
		err = dir_read_block(vol, dir, logical, blk);
	}
	if (!err)
		err = dirblock_delete(blk, bs, (unsigned)(pos & (bs - 1)));
	if (!err)
		err = inode_write_data(vol, dir, blk, bs,
				       logical << vol->blockbits, true);
	free(blk);
	if (!err)
		err = dirhash_removed(vol, dir, name, len, logical);
	return err;
}

struct empty_ctx { bool empty; };
static int any_entry(void *ctx, const struct dirent_info *d)
{
	(void)d;
	((struct empty_ctx *)ctx)->empty = false;
	return 1;
}

static int valid_name(const char *name, size_t len)
{
	if (!len)
		return -ENOENT;
	if (len > 255)
		return -ENAMETOOLONG;
	if (memchr(name, '/', len) || memchr(name, 0, len) ||
	    (len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return -EINVAL;
	return 0;
}

/* ---- creating ---- */

static int new_inode(struct tux3_volume *vol, const struct inode *dir,
		     uint32_t mode, uint32_t uid, uint32_t gid, uint64_t rdev,
		     struct inode *inode)
{
	memset(inode, 0, sizeof(*inode));
	int err = inum_alloc(vol, dir->inum + 1, &inode->inum);
	if (err)
		return err;
	inode->present = 1u << ATTR_MODE_OWNER | 1u << ATTR_CTIME_SIZE |
			 1u << ATTR_LINK_COUNT | 1u << ATTR_MTIME;
	if (S_ISCHR(mode) || S_ISBLK(mode)) {
		inode->present |= 1u << ATTR_RDEV;
		inode->rdev = rdev;
	}
	inode->mode = mode;
	inode->uid = uid;
	inode->gid = gid;
	inode->nlink = S_ISDIR(mode) ? 2 : 1;
	inode->ctime = inode->mtime = vol_now(vol);
	inode_atime_set(vol, inode, inode->mtime);
	return 0;
}

/*
 * A new inode named dir/name; a symlink's target (data, dlen bytes) is
 * written into it before it gets the name.  The name comes last because
 * the directory's block is the one allocation that may fail with ENOSPC
 * (data blocks are not privileged): a failure there takes the stored
 * inode back, so no inode is left without a name.
 */
static int mknod_common(struct tux3_volume *vol, tux3_ino_t dirino,
			const char *name, size_t len, uint32_t mode,
			uint32_t uid, uint32_t gid, unsigned major,
			unsigned minor, const void *data, size_t dlen,
			tux3_ino_t *ino, bool known_new)
{
	struct inode dir, inode;
	struct find_ctx f;
	int err;

	if ((err = begin_change(vol, name, len)))
		return err;
	if (!(mode & S_IFMT))
		mode |= S_IFREG;
	if ((err = inode_load_dir(vol, dirino, &dir)))
		return err;
	if (!known_new) {
		err = dir_find(vol, &dir, name, (unsigned)len, &f);
		if (err != -ENOENT) {
			inode_free(&dir);
			return err ? err : -EEXIST;
		}
		tux3_clear_error(vol);
	}
	if ((err = inode_room(vol, dirino))) {
		inode_free(&dir);
		return err;
	}
	uint64_t rdev = (uint64_t)major << 20 | minor;
	if ((err = new_inode(vol, &dir, mode, uid, gid, rdev, &inode)))
		goto out;
	if ((err = inode_store(vol, &inode))) {
		vol->super.usedinodes--;	/* counted by inum_alloc */
		goto out2;
	}
	if (data && !(err = inode_write_data(vol, &inode, data, dlen, 0,
					     false)))
		err = inode_store(vol, &inode);
	if (!err)
		err = dir_add_at(vol, &dir, name, (unsigned)len, inode.inum,
				 dirent_type(mode), known_new);
	if (err) {
		/* the first error is the one to report */
		inode_destroy(vol, &inode);
		goto out2;
	}
	if (S_ISDIR(mode))
		dir.nlink++;
	dir.mtime = dir.ctime = inode.ctime;
	err = inode_store(vol, &dir);
	if (!err && ino)
		*ino = inode.inum;
out2:
	inode_free(&inode);
out:
	inode_free(&dir);
	return err;
}

int tux3_mknod(struct tux3_volume *vol, tux3_ino_t dir, const char *name,
	       size_t len, uint32_t mode, uint32_t uid, uint32_t gid,
	       unsigned major, unsigned minor, tux3_ino_t *ino)
{
	return mknod_common(vol, dir, name, len, mode, uid, gid, major, minor,
			    NULL, 0, ino, false);
}

int tux3_mknod_append(struct tux3_volume *vol, tux3_ino_t dir,
		      const char *name, size_t len, uint32_t mode, uint32_t uid,
		      uint32_t gid, unsigned major, unsigned minor,
		      tux3_ino_t *ino)
{
	return mknod_common(vol, dir, name, len, mode, uid, gid, major, minor,
			    NULL, 0, ino, true);
}

int tux3_create(struct tux3_volume *vol, tux3_ino_t dir, const char *name,
		size_t len, uint32_t mode, uint32_t uid, uint32_t gid,
		tux3_ino_t *ino)
{
	return tux3_mknod(vol, dir, name, len, S_IFREG | (mode & 07777), uid,
			  gid, 0, 0, ino);
}

int tux3_mkdir(struct tux3_volume *vol, tux3_ino_t dir, const char *name,
	       size_t len, uint32_t mode, uint32_t uid, uint32_t gid,
	       tux3_ino_t *ino)
{
	return tux3_mknod(vol, dir, name, len, S_IFDIR | (mode & 07777), uid,
			  gid, 0, 0, ino);
}

/* The target is stored as file data with its NUL: i_size = length + 1. */
static int symlink_common(struct tux3_volume *vol, tux3_ino_t dir,
			  const char *name, size_t len, const char *target,
			  uint32_t uid, uint32_t gid, tux3_ino_t *ino,
			  bool known_new)
{
	size_t tlen = strlen(target);

	if (!tlen)
		return -ENOENT;
	if (tlen > 4095)
		return -ENAMETOOLONG;
	return mknod_common(vol, dir, name, len, S_IFLNK | 0777, uid, gid, 0,
			    0, target, tlen + 1, ino, known_new);
}

int tux3_symlink(struct tux3_volume *vol, tux3_ino_t dir, const char *name,
		 size_t len, const char *target, uint32_t uid, uint32_t gid,
		 tux3_ino_t *ino)
{
	return symlink_common(vol, dir, name, len, target, uid, gid, ino,
			      false);
}

int tux3_symlink_append(struct tux3_volume *vol, tux3_ino_t dir,
			const char *name, size_t len, const char *target,
			uint32_t uid, uint32_t gid, tux3_ino_t *ino)
{
	return symlink_common(vol, dir, name, len, target, uid, gid, ino, true);
}

static int link_common(struct tux3_volume *vol, tux3_ino_t ino,
		       tux3_ino_t dirino, const char *name, size_t len,
		       bool known_new)
{
	struct inode dir, inode;
	struct find_ctx f;
	int err;

	if ((err = begin_change(vol, name, len)))
		return err;
	if ((err = inode_load(vol, ino, &inode)))
		return err;
	if (S_ISDIR(inode.mode)) {
		inode_free(&inode);
		return -EPERM;
	}
	if ((err = inode_load_dir(vol, dirino, &dir))) {
		inode_free(&inode);
		return err;
	}
	err = known_new ? -ENOENT :
			  dir_find(vol, &dir, name, (unsigned)len, &f);
	if (err != -ENOENT) {
		err = err ? err : -EEXIST;
		goto out;
	}
	tux3_clear_error(vol);
	if (inode.nlink >= 0xffffffffu) {
		err = -EMLINK;
		goto out;
	}
	if ((err = inode_room(vol, ino)) || (err = inode_room(vol, dirino)))
		goto out;
	/* the entry first: its block may run out of space, and then
	 * nothing has changed */
	if ((err = dir_add_at(vol, &dir, name, (unsigned)len, ino,
			      dirent_type(inode.mode), known_new)))
		goto out;
	inode.nlink++;
	inode.ctime = vol_now(vol);
	if ((err = inode_store(vol, &inode)))
		goto out;
	dir.mtime = dir.ctime = inode.ctime;
	err = inode_store(vol, &dir);
out:
	inode_free(&dir);
	inode_free(&inode);
	return err;
}

int tux3_link(struct tux3_volume *vol, tux3_ino_t ino, tux3_ino_t dirino,
	      const char *name, size_t len)
{
	return link_common(vol, ino, dirino, name, len, false);
}

int tux3_link_append(struct tux3_volume *vol, tux3_ino_t ino,
		     tux3_ino_t dirino, const char *name, size_t len)
{
	return link_common(vol, ino, dirino, name, len, true);
}

/* Last link gone: the inode and its blocks go (no open handles yet in
 * this API level, so no orphan). */
int inode_destroy(struct tux3_volume *vol, struct inode *inode)
{
	dir_index_forget(vol, inode->inum);	/* the number may come back */
	if (vinode_applies(vol, inode->inum))
		return vol->vops->destroy(vol, inode);
	int err = xattr_release_all(vol, inode);
	if (!err)
		err = inode_free_unversioned(vol, inode);
	if (!err)
		err = inode_delete(vol, inode->inum);
	if (!err) {
		vol->super.usedinodes--;
		vol->super_dirty = true;
	}
	return err;
}

/* No links left but still open: store it with nlink 0 as an orphan. */
static int orphan_keep(struct tux3_volume *vol, struct inode *inode)
{
	int err = inode_store(vol, inode);
	return err ? err : orphan_begin(vol, inode->inum);
}

static int remove_entry(struct tux3_volume *vol, tux3_ino_t dirino,
			const char *name, size_t len, bool want_dir)
{
	struct inode dir, inode;
	struct find_ctx f;
	int err;

	if ((err = begin_change(vol, name, len)))
		return err;
	if ((err = inode_load_dir(vol, dirino, &dir)))
		return err;
	if ((err = dir_find(vol, &dir, name, (unsigned)len, &f)))
		goto out;
	if ((err = inode_load(vol, f.inum, &inode)))
		goto out;
	if (want_dir && !S_ISDIR(inode.mode))
		err = -ENOTDIR;
	else if (!want_dir && S_ISDIR(inode.mode))
		err = -EISDIR;
	if (!err && want_dir) {
		struct empty_ctx e = { true };
		err = dir_iterate(vol, &inode, any_entry, &e);
		if (err > 0)
			err = 0;
		if (!err && !e.empty)
			err = -ENOTEMPTY;
	}
	if (!err && !(err = inode_room(vol, dirino)))
		err = inode_room(vol, f.inum);
	if (!err)
		err = dir_remove(vol, &dir, f.pos, name, (unsigned)len);
	if (!err) {
		int64_t now = vol_now(vol);
		if (want_dir) {
			dir.nlink--;
			inode.nlink = 0;
		} else {
			inode.nlink--;
		}
		dir.mtime = dir.ctime = now;
		inode.ctime = now;
		if (inode.nlink)
			err = inode_store(vol, &inode);
		else if (inode_open_count(vol, inode.inum))
			err = orphan_keep(vol, &inode);
		else
			err = inode_destroy(vol, &inode);
		if (!err)
			err = inode_store(vol, &dir);
	}
	inode_free(&inode);
out:
	inode_free(&dir);
	return err;
}

int tux3_unlink(struct tux3_volume *vol, tux3_ino_t dir, const char *name,
		size_t len)
{
	return remove_entry(vol, dir, name, len, false);
}

int tux3_rmdir(struct tux3_volume *vol, tux3_ino_t dir, const char *name,
	       size_t len)
{
	return remove_entry(vol, dir, name, len, true);
}

/* ---- rename ---- */

/* Rewrite the inode number and type of the record at pos. */
static int dir_set_entry(struct tux3_volume *vol, struct inode *dir,
			 uint64_t pos, uint64_t inum, unsigned type)
{
	unsigned bs = vol->blocksize;
	uint64_t logical = pos >> vol->blockbits;
	unsigned off = (unsigned)(pos & (bs - 1));
	uint8_t *blk = malloc(bs);
	if (!blk)
		return -ENOMEM;
	int err = dir_read_block(vol, dir, logical, blk);
	if (!err && off + DIRENT_HEADER > bs)
		err = -EUCLEAN;
	if (!err) {
		put_be64(blk + off, inum);
		blk[off + 11] = (uint8_t)type;
		err = inode_write_data(vol, dir, blk, bs,
				       logical << vol->blockbits, true);
	}
	free(blk);
	return err;
}

struct subtree_ctx {
	struct tux3_volume *vol;
	uint64_t target;
	struct blockset seen;
	unsigned depth;
	int found;
};

static int subtree_entry(void *ctx, const struct dirent_info *d);

static int subtree_scan(struct subtree_ctx *s, uint64_t dirino)
{
	struct inode dir;
	if (blockset_add(&s->seen, dirino) <= 0 || s->depth > 4096)
		return 0;	/* visited (a corrupt loop) or absurdly deep */
	int err = inode_load(s->vol, dirino, &dir);
	if (err)
		return err;
	s->depth++;
	err = dir_iterate(s->vol, &dir, subtree_entry, s);
	s->depth--;
	inode_free(&dir);
	return err;
}

static int subtree_entry(void *ctx, const struct dirent_info *d)
{
	struct subtree_ctx *s = ctx;
	if (d->type != TUX3_DT_DIR)
		return 0;
	if (d->inum == s->target) {
		s->found = 1;
		return 1;
	}
	int err = subtree_scan(s, d->inum);
	return err ? err : s->found;
}

/* Is dir inside the subtree of top (or top itself)?  The format keeps no
 * parent links, so this searches top's subtree. */
static int in_subtree(struct tux3_volume *vol, uint64_t top, uint64_t dir)
{
	struct subtree_ctx s = { .vol = vol, .target = dir };
	if (top == dir)
		return 1;
	int err = subtree_scan(&s, top);
	blockset_free(&s.seen);
	return err < 0 ? err : s.found;
}

/* May src replace dst?  A directory only an empty directory, a
 * non-directory only a non-directory. */
static int replace_ok(struct tux3_volume *vol, const struct inode *src,
		      const struct inode *dst)
{
	bool sdir = S_ISDIR(src->mode), ddir = S_ISDIR(dst->mode);
	if (ddir && !sdir)
		return -EISDIR;
	if (!ddir && sdir)
		return -ENOTDIR;
	if (!ddir)
		return 0;
	struct empty_ctx e = { true };
	int err = dir_iterate(vol, dst, any_entry, &e);
	if (err > 0)
		err = 0;
	return !err && !e.empty ? -ENOTEMPTY : err;
}

int tux3_rename(struct tux3_volume *vol, tux3_ino_t olddir,
		const char *oldname, size_t oldlen, tux3_ino_t newdir,
		const char *newname, size_t newlen, unsigned flags)
{
	struct inode d1, d2, src, dst;
	struct find_ctx fo, fn;
	bool same = olddir == newdir, have_dst = false;
	int err;

	if ((flags & TUX3_RENAME_NOREPLACE) && (flags & TUX3_RENAME_EXCHANGE))
		return -EINVAL;
	if ((err = writable(vol)) || (err = valid_name(oldname, oldlen)) ||
	    (err = valid_name(newname, newlen)) || (err = maybe_commit(vol)))
		return err;
	if ((err = inode_load_dir(vol, olddir, &d1)))
		return err;
	struct inode *od = &d1, *nd = &d1;
	if (!same) {
		if ((err = inode_load_dir(vol, newdir, &d2))) {
			inode_free(&d1);
			return err;
		}
		nd = &d2;
	}
	memset(&src, 0, sizeof(src));
	memset(&dst, 0, sizeof(dst));
	if ((err = dir_find(vol, od, oldname, (unsigned)oldlen, &fo)) ||
	    (err = inode_load(vol, fo.inum, &src)))
		goto out;
	err = dir_find(vol, nd, newname, (unsigned)newlen, &fn);
	if (!err) {
		have_dst = true;
		if ((err = inode_load(vol, fn.inum, &dst)))
			goto out;
	} else if (err != -ENOENT) {
		goto out;
	}
	tux3_clear_error(vol);
	err = 0;
	if (have_dst && fn.inum == fo.inum)
		goto out;	/* the same inode: nothing to do */
	if (have_dst && (flags & TUX3_RENAME_NOREPLACE)) {
		err = -EEXIST;
		goto out;
	}
	if (!have_dst && (flags & TUX3_RENAME_EXCHANGE)) {
		err = -ENOENT;
		goto out;
	}
	bool sdir = S_ISDIR(src.mode), ddir = have_dst && S_ISDIR(dst.mode);
	/* a directory may not move below itself */
	if (sdir && !same && (err = in_subtree(vol, src.inum, newdir))) {
		err = err < 0 ? err : -EINVAL;
		goto out;
	}
	if ((flags & TUX3_RENAME_EXCHANGE) && ddir && !same &&
	    (err = in_subtree(vol, dst.inum, olddir))) {
		err = err < 0 ? err : -EINVAL;
		goto out;
	}
	/* a replaced target: a directory by a directory, an empty one */
	if (have_dst && !(flags & TUX3_RENAME_EXCHANGE) &&
	    (err = replace_ok(vol, &src, &dst)))
		goto out;
	/* every check is made: room for what the change stores, then the
	 * change */
	if ((err = inode_room(vol, olddir)) ||
	    (err = inode_room(vol, newdir)) ||
	    (err = inode_room(vol, fo.inum)) ||
	    (have_dst && (err = inode_room(vol, fn.inum))))
		goto out;
	int64_t now = vol_now(vol);
	if (flags & TUX3_RENAME_EXCHANGE) {
		if ((err = dir_set_entry(vol, od, fo.pos, dst.inum,
					 inode_dtype(dst.mode))) ||
		    (err = dir_set_entry(vol, nd, fn.pos, src.inum,
					 inode_dtype(src.mode))))
			goto out;
		if (!same && sdir != ddir) {
			od->nlink += ddir ? 1 : -1;
			nd->nlink += sdir ? 1 : -1;
		}
		dst.ctime = now;
		if ((err = inode_store(vol, &dst)))
			goto out;
	} else if (have_dst) {
		/* the new name's record now names the source */
		if ((err = dir_set_entry(vol, nd, fn.pos, src.inum,
					 inode_dtype(src.mode))) ||
		    (err = dir_remove(vol, od, fo.pos, oldname,
				      (unsigned)oldlen)))
			goto out;
		if (ddir) {
			nd->nlink--;
			dst.nlink = 0;
		} else {
			dst.nlink--;
		}
		dst.ctime = now;
		if (dst.nlink)
			err = inode_store(vol, &dst);
		else if (inode_open_count(vol, dst.inum))
			err = orphan_keep(vol, &dst);
		else
			err = inode_destroy(vol, &dst);
		if (err)
			goto out;
		if (sdir && !same) {
			od->nlink--;
			nd->nlink++;
		}
	} else {
		if ((err = dir_add(vol, nd, newname, (unsigned)newlen, src.inum,
				   inode_dtype(src.mode))) ||
		    (err = dir_remove(vol, od, fo.pos, oldname,
				      (unsigned)oldlen)))
			goto out;
		if (sdir && !same) {
			od->nlink--;
			nd->nlink++;
		}
	}
	src.ctime = now;
	od->mtime = od->ctime = nd->mtime = nd->ctime = now;
	if ((err = inode_store(vol, &src)) || (err = inode_store(vol, od)))
		goto out;
	if (!same)
		err = inode_store(vol, nd);
out:
	inode_free(&src);
	inode_free(&dst);
	inode_free(&d1);
	if (!same)
		inode_free(&d2);
	return err;
}
