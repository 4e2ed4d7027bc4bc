/*
 * The public read API over inodes: lookup, stat, readdir, read, readlink,
 * extent maps.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "core.h"

struct lookup_ctx {
	const char *name;
	size_t len;
	tux3_ino_t ino;
};

static int lookup_entry(void *ctx, const struct dirent_info *d)
{
	struct lookup_ctx *l = ctx;
	if (d->name_len != l->len || memcmp(d->name, l->name, l->len))
		return 0;
	l->ino = d->inum;
	return 1;
}

int tux3_lookup(struct tux3_volume *vol, tux3_ino_t dirino, const char *name,
		size_t len, tux3_ino_t *ino)
{
	struct inode dir;
	struct lookup_ctx l = { name, len, 0 };

	if (!len || len > 255)
		return len ? -ENAMETOOLONG : -ENOENT;
	int err = inode_load_dir(vol, dirino, &dir);
	if (err)
		return err;
	struct dirent_info d;
	err = dir_lookup_indexed(vol, &dir, name, (unsigned)len, &d);
	if (err == DIR_INDEX_NONE)
		err = dir_iterate(vol, &dir, lookup_entry, &l);
	else if (!err)
		l.ino = d.inum, err = 1;	/* found, as lookup_entry says */
	else if (err == -ENOENT)
		err = 0;
	inode_free(&dir);
	if (err < 0)
		return err;
	if (!err)
		return -ENOENT;
	*ino = l.ino;
	return 0;
}

int tux3_lookup_path(struct tux3_volume *vol, const char *path,
		     tux3_ino_t *ino)
{
	tux3_ino_t cur = TUX3_ROOT_INO;
	const char *p = path;

	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = p;
		while (*e && *e != '/')
			e++;
		size_t len = (size_t)(e - p);
		if (len == 1 && p[0] == '.') {
			p = e;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return -EINVAL;	/* no parent links in this format */
		int err = tux3_lookup(vol, cur, p, len, &cur);
		if (err)
			return err;
		p = e;
	}
	*ino = cur;
	return 0;
}

static int count_blocks(void *ctx, const struct extent *x)
{
	if (x->physical)
		*(uint64_t *)ctx += x->count;
	return 0;
}

int inode_count_blocks(struct tux3_volume *vol, const struct inode *inode,
		       uint64_t *blocks)
{
	*blocks = 0;
	int err = filemap_walk(vol, inode, 0, TUX3_KEY_LIMIT, count_blocks,
			       blocks);
	return err < 0 ? err : 0;
}

void inode_to_stat(struct tux3_volume *vol, const struct inode *inode,
		   struct tux3_stat *st, uint64_t blocks)
{
	memset(st, 0, sizeof(*st));
	st->ino = inode->inum;
	st->mode = inode->mode;
	st->uid = inode->uid;
	st->gid = inode->gid;
	st->nlink = inode->nlink;
	st->size = inode->size;
	st->ctime_ns = inode->ctime;
	st->mtime_ns = inode->mtime;
	st->atime_ns = inode_atime(inode);
	st->blksize = vol->blocksize;
	st->dtree_root = inode->dtree;
	st->xattr_count = inode->nxattr;
	st->orphan = inode->orphan;
	if (S_ISCHR(inode->mode) || S_ISBLK(inode->mode)) {
		st->rdev_major = rdev_major(inode->rdev);
		st->rdev_minor = rdev_minor(inode->rdev);
	}
	st->blocks = blocks << (vol->blockbits - 9);
}

int tux3_stat(struct tux3_volume *vol, tux3_ino_t ino, struct tux3_stat *st)
{
	struct inode inode;
	uint64_t blocks;
	int err = inode_load(vol, ino, &inode);
	if (err)
		return err;
	err = inode_count_blocks(vol, &inode, &blocks);
	if (!err)
		inode_to_stat(vol, &inode, st, blocks);
	inode_free(&inode);
	return err;
}

struct readdir_ctx {
	tux3_filldir_t filldir;
	void *ctx;
};

static int readdir_entry(void *ctx, const struct dirent_info *d)
{
	struct readdir_ctx *r = ctx;
	return r->filldir(r->ctx, d->name, d->name_len, d->inum, d->type,
			  d->pos);
}

int tux3_readdir_from(struct tux3_volume *vol, tux3_ino_t dirino,
		      uint64_t start, tux3_filldir_t filldir, void *ctx)
{
	struct inode dir;
	struct readdir_ctx r = { filldir, ctx };
	int err = inode_load_dir(vol, dirino, &dir);
	if (err)
		return err;
	err = dir_iterate_from(vol, &dir, start, readdir_entry, &r);
	inode_free(&dir);
	return err;
}

int tux3_readdir(struct tux3_volume *vol, tux3_ino_t dirino,
		 tux3_filldir_t filldir, void *ctx)
{
	return tux3_readdir_from(vol, dirino, 0, filldir, ctx);
}

ssize_t tux3_read(struct tux3_volume *vol, tux3_ino_t ino, void *buf,
		  size_t len, uint64_t pos)
{
	struct inode inode;
	size_t done;
	int err = inode_load(vol, ino, &inode);
	if (err)
		return err;
	if (S_ISDIR(inode.mode)) {
		inode_free(&inode);
		return -EISDIR;
	}
	err = inode_read(vol, &inode, buf, len, pos, &done);
	inode_free(&inode);
	return err ? err : (ssize_t)done;
}

ssize_t tux3_readlink(struct tux3_volume *vol, tux3_ino_t ino, char *buf,
		      size_t len)
{
	struct inode inode;
	size_t done;
	int err = inode_load(vol, ino, &inode);
	if (err)
		return err;
	if (!S_ISLNK(inode.mode)) {
		inode_free(&inode);
		return -EINVAL;
	}
	/* the target is stored with its trailing NUL: i_size = length + 1 */
	uint64_t want = inode.size;
	if (want > 65536)
		err = vol_error(vol, -EUCLEAN, inode.leafblock, ino, TUX3_NONE,
				"symlink of %" PRIu64 " bytes is too long", want);
	else if (!len)
		err = -EINVAL;
	if (!err) {
		char *tmp = malloc(want + 1);
		if (!tmp) {
			err = -ENOMEM;
		} else {
			err = inode_read(vol, &inode, tmp, want, 0, &done);
			if (!err) {
				tmp[done] = 0;
				size_t tlen = strnlen(tmp, done);
				if (tlen >= len)
					tlen = len - 1;
				memcpy(buf, tmp, tlen);
				buf[tlen] = 0;
				err = (int)tlen;
			}
			free(tmp);
		}
	}
	inode_free(&inode);
	return err;
}

struct map_ctx {
	tux3_extent_fn fn;
	void *ctx;
};

static int map_one(void *ctx, const struct extent *x)
{
	struct map_ctx *m = ctx;
	return m->fn(m->ctx, x->logical, x->physical, x->count, x->version);
}

int tux3_map_extents(struct tux3_volume *vol, tux3_ino_t ino,
		     tux3_extent_fn fn, void *ctx)
{
	struct inode inode;
	struct map_ctx m = { fn, ctx };
	int err = inode_load(vol, ino, &inode);
	if (err)
		return err;
	err = filemap_walk(vol, &inode, 0, TUX3_KEY_LIMIT, map_one, &m);
	inode_free(&inode);
	return err;
}
