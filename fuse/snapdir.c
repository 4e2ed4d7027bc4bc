/*
 * -o snapdir: every snapshot of the volume, read-only, as
 * /.snapshots/NAME beside the mounted tree; /.snapshots is left out of
 * readdir of / unless snapdir=visible (as ZFS's .zfs), and found by name
 * either way.  A real entry named .snapshots in the root is hidden by it.
 *
 * Inode numbers carry their view (tux3fuse.h): the operations here find
 * it, answer for /.snapshots themselves, refuse every change in a view
 * (EROFS), and hand the rest to fuse_ops.c's with t3f_view set, which
 * then reads the view's version under the lock and counts its lookups in
 * the view's own table.  So a file reads the same in a view as through
 * `tux3fuse -o snapshot=NAME`, with inode numbers that differ between
 * versions and stay the same within one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "tux3fuse.h"

__thread struct snap_view *t3f_view;

struct fuse_lowlevel_ops t3f_snapdir_ops;

#define SNAPDIR_INO ((fuse_ino_t)SNAPDIR_SLOT << T3F_SLOT_SHIFT | FUSE_ROOT_ID)
/* past the tags kept as slots, the slots handed out at mount */
#define TAG_SLOTS 0x8000u

static struct t3f *FS(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static int slot_cmp(const void *a, const void *b)
{
	const struct snap_view *x = a, *y = b;
	return (x->slot > y->slot) - (x->slot < y->slot);
}

int t3f_snapdir_init(struct t3f *fs)
{
	struct tux3_version_info *list;
	unsigned count, n = 0, big = 0;
	int err = tux3_version_list(fs->vol, &list, &count);
	if (err) {
		char buf[512];
		fprintf(stderr, "tux3fuse: %s: snapdir: cannot read the "
			"snapshots: %s\n", fs->device,
			tux3_error_text(fs->vol, buf, sizeof(buf)));
		return err;
	}
	fs->views = calloc(count ? count : 1, sizeof(*fs->views));
	if (!fs->views) {
		free(list);
		fprintf(stderr, "tux3fuse: out of memory\n");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < count; i++) {
		const struct tux3_version_info *v = &list[i];
		if (!v->tag || v->ghost || v->dying || !*v->name)
			continue;
		struct snap_view *w = &fs->views[n];
		/* 2,048 versions at most: the slots past the tags fit */
		w->slot = v->tag < TAG_SLOTS ? v->tag : TAG_SLOTS + big++;
		w->tag = v->tag;
		w->name = strdup(v->name);
		if (!w->name) {
			free(list);
			fs->nviews = n;
			t3f_snapdir_free(fs);
			fprintf(stderr, "tux3fuse: out of memory\n");
			return -ENOMEM;
		}
		n++;
	}
	free(list);
	qsort(fs->views, n, sizeof(*fs->views), slot_cmp);
	fs->nviews = n;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	fs->snapdir_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return 0;
}

void t3f_snapdir_free(struct t3f *fs)
{
	for (unsigned i = 0; i < fs->nviews; i++) {
		free(fs->views[i].name);
		itab_free(&fs->views[i].itab);
	}
	free(fs->views);
	fs->views = NULL;
	fs->nviews = 0;
}

struct snap_view *t3f_view_of(struct t3f *fs, fuse_ino_t ino)
{
	struct snap_view key = { .slot = T3F_SLOT(ino) };
	if (!key.slot || key.slot == SNAPDIR_SLOT || !fs->nviews)
		return NULL;
	return bsearch(&key, fs->views, fs->nviews, sizeof(*fs->views),
		       slot_cmp);
}

static struct snap_view *view_named(struct t3f *fs, const char *name)
{
	for (unsigned i = 0; i < fs->nviews; i++)
		if (!strcmp(fs->views[i].name, name))
			return &fs->views[i];
	return NULL;
}

/* ---- where a request goes ---- */

enum where { LIVE, VIEW, SNAPDIR, STALE };

/* The view of ino: t3f_view set for VIEW, NULL otherwise.  STALE: a
 * slot no snapshot of this mount has (never handed out). */
static enum where route(struct t3f *fs, fuse_ino_t ino)
{
	unsigned slot = T3F_SLOT(ino);
	t3f_view = NULL;
	if (!slot)
		return LIVE;
	if (slot == SNAPDIR_SLOT)
		return (ino & T3F_INO_MASK) == FUSE_ROOT_ID ? SNAPDIR : STALE;
	t3f_view = t3f_view_of(fs, ino);
	return t3f_view ? VIEW : STALE;
}

/* Neither in a view nor the snapdir: a change the mount may make. */
static bool live(fuse_req_t req, fuse_ino_t ino)
{
	enum where w = route(FS(req), ino);
	t3f_view = NULL;
	if (w == LIVE)
		return true;
	fuse_reply_err(req, w == STALE ? ESTALE : EROFS);
	return false;
}

/* The name /.snapshots in the root, which no change may take or make. */
static bool names_snapdir(const struct t3f *fs, fuse_ino_t parent,
			  const char *name)
{
	return fs->snapdir && parent == FUSE_ROOT_ID &&
	       !strcmp(name, SNAPDIR_NAME);
}

/* ---- /.snapshots itself ---- */

static void snapdir_stat(const struct t3f *fs, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = SNAPDIR_INO;
	st->st_mode = S_IFDIR | 0555;
	st->st_nlink = 2 + fs->nviews;
	st->st_blksize = 4096;
	st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec =
		fs->snapdir_ns / 1000000000;
	st->st_atim.tv_nsec = st->st_mtim.tv_nsec = st->st_ctim.tv_nsec =
		fs->snapdir_ns % 1000000000;
}

/* Its entry; the kernel's lookups of it are not counted (it is never
 * freed), and its forgets are ignored. */
static void snapdir_entry(fuse_req_t req)
{
	struct t3f *fs = FS(req);
	struct fuse_entry_param e = { 0 };
	e.ino = SNAPDIR_INO;
	snapdir_stat(fs, &e.attr);
	e.attr_timeout = e.entry_timeout = fs->timeout;
	fuse_reply_entry(req, &e);
}

static void snapdir_readdir(fuse_req_t req, size_t size, off_t off,
			    bool plus)
{
	struct t3f *fs = FS(req);
	char *buf = malloc(size ? size : 1);
	size_t used = 0;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (size_t i = (size_t)off; i < (size_t)fs->nviews + 2; i++) {
		/* no lookup counted (ino 0 in plus): the kernel looks up
		 * what it uses */
		struct fuse_entry_param e = { 0 };
		const char *name = i == 0 ? "." : i == 1 ? ".." :
				   fs->views[i - 2].name;
		e.attr.st_mode = S_IFDIR;
		e.attr.st_ino = i == 0 ? SNAPDIR_INO : i == 1 ? FUSE_ROOT_ID :
				(fuse_ino_t)fs->views[i - 2].slot <<
				T3F_SLOT_SHIFT | FUSE_ROOT_ID;
		size_t room = size - used;
		size_t len = plus ?
			fuse_add_direntry_plus(req, buf + used, room, name, &e,
					       (off_t)i + 1) :
			fuse_add_direntry(req, buf + used, room, name, &e.attr,
					  (off_t)i + 1);
		if (len > room)
			break;
		used += len;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

/* ---- the operations ---- */

static void sd_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct t3f *fs = FS(req);
	switch (route(fs, parent)) {
	case LIVE:
		if (names_snapdir(fs, parent, name))
			snapdir_entry(req);
		else
			t3f_ops.lookup(req, parent, name);
		return;
	case SNAPDIR:
		if (!strcmp(name, "."))
			snapdir_entry(req);
		else if (!strcmp(name, ".."))
			t3f_ops.lookup(req, FUSE_ROOT_ID, ".");
		else if ((t3f_view = view_named(fs, name)))
			t3f_ops.lookup(req, FUSE_ROOT_ID, ".");
		else
			fuse_reply_err(req, ENOENT);
		break;
	case VIEW:
		if ((parent & T3F_INO_MASK) == FUSE_ROOT_ID &&
		    !strcmp(name, ".."))
			snapdir_entry(req);
		else
			t3f_ops.lookup(req, parent, name);
		break;
	case STALE:
		fuse_reply_err(req, ESTALE);
		return;
	}
	t3f_view = NULL;
}

static void sd_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	if (route(FS(req), ino) == LIVE || t3f_view)
		t3f_ops.forget(req, ino, nlookup);
	else
		fuse_reply_none(req);
	t3f_view = NULL;
}

/* A read of ino: true to hand it to fuse_ops.c (with t3f_view set for
 * a view), else answered: ESTALE, or snapdir_err for /.snapshots. */
static bool readable(fuse_req_t req, fuse_ino_t ino, int snapdir_err)
{
	switch (route(FS(req), ino)) {
	case SNAPDIR:
		fuse_reply_err(req, snapdir_err);
		return false;
	case STALE:
		fuse_reply_err(req, ESTALE);
		return false;
	default:
		return true;
	}
}

static void sd_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct stat st;
	if (route(FS(req), ino) == SNAPDIR) {
		snapdir_stat(FS(req), &st);
		fuse_reply_attr(req, &st, FS(req)->timeout);
	} else if (readable(req, ino, 0)) {
		t3f_ops.getattr(req, ino, fi);
	}
	t3f_view = NULL;
}

static void sd_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	if (live(req, ino))
		t3f_ops.setattr(req, ino, attr, to_set, fi);
}

static void sd_readlink(fuse_req_t req, fuse_ino_t ino)
{
	if (readable(req, ino, EINVAL))
		t3f_ops.readlink(req, ino);
	t3f_view = NULL;
}

/* A new name in parent: refused in a view, the snapdir, and as
 * /.snapshots (which exists). */
static bool may_name(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (!live(req, parent))
		return false;
	if (names_snapdir(FS(req), parent, name)) {
		fuse_reply_err(req, EEXIST);
		return false;
	}
	return true;
}

/* A name that goes: not in a view or the snapdir, and not /.snapshots. */
static bool may_drop(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (!live(req, parent))
		return false;
	if (names_snapdir(FS(req), parent, name)) {
		fuse_reply_err(req, EROFS);
		return false;
	}
	return true;
}

static void sd_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	if (may_name(req, parent, name))
		t3f_ops.mknod(req, parent, name, mode, rdev);
}

static void sd_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	if (may_name(req, parent, name))
		t3f_ops.mkdir(req, parent, name, mode);
}

static void sd_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	if (may_name(req, parent, name))
		t3f_ops.symlink(req, link, parent, name);
}

static void sd_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	if (may_name(req, parent, name))
		t3f_ops.create(req, parent, name, mode, fi);
}

static void sd_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (may_drop(req, parent, name))
		t3f_ops.unlink(req, parent, name);
}

static void sd_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (may_drop(req, parent, name))
		t3f_ops.rmdir(req, parent, name);
}

static void sd_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	if (may_drop(req, parent, name) && may_drop(req, newparent, newname))
		t3f_ops.rename(req, parent, name, newparent, newname, flags);
}

static void sd_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	if (live(req, ino) && may_name(req, newparent, newname))
		t3f_ops.link(req, ino, newparent, newname);
}

static void sd_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (readable(req, ino, EISDIR))
		t3f_ops.open(req, ino, fi);
	t3f_view = NULL;
}

static void sd_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	if (readable(req, ino, EISDIR))
		t3f_ops.read(req, ino, size, off, fi);
	t3f_view = NULL;
}

static void sd_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	if (live(req, ino))
		t3f_ops.write(req, ino, buf, size, off, fi);
}

static void sd_fallocate(fuse_req_t req, fuse_ino_t ino, int mode,
			 off_t offset, off_t length, struct fuse_file_info *fi)
{
	if (live(req, ino))
		t3f_ops.fallocate(req, ino, mode, offset, length, fi);
}

/* fsync and fsyncdir: a view has nothing to commit */
static void sd_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	if (route(FS(req), ino) == LIVE)
		t3f_ops.fsync(req, ino, datasync, fi);
	else
		fuse_reply_err(req, 0);
	t3f_view = NULL;
}

static void sd_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	if (route(FS(req), ino) == SNAPDIR) {
		fi->fh = 0;	/* the snapshots are the mount's: no handle */
		fuse_reply_open(req, fi);
	} else if (readable(req, ino, 0)) {
		t3f_ops.opendir(req, ino, fi);
	}
	t3f_view = NULL;
}

static void dir_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi, bool plus)
{
	if (route(FS(req), ino) == SNAPDIR)
		snapdir_readdir(req, size, off, plus);
	else if (readable(req, ino, 0))
		(plus ? t3f_ops.readdirplus : t3f_ops.readdir)(req, ino, size,
							      off, fi);
	t3f_view = NULL;
}

static void sd_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
		       off_t off, struct fuse_file_info *fi)
{
	dir_read(req, ino, size, off, fi, false);
}

static void sd_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	dir_read(req, ino, size, off, fi, true);
}

static void sd_releasedir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	if (T3F_SLOT(ino) == SNAPDIR_SLOT)
		fuse_reply_err(req, 0);
	else
		t3f_ops.releasedir(req, ino, fi);
}

static void sd_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	if (live(req, ino))
		t3f_ops.setxattr(req, ino, name, value, size, flags);
}

static void sd_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	if (live(req, ino))
		t3f_ops.removexattr(req, ino, name);
}

static void sd_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			size_t size)
{
	if (readable(req, ino, ENODATA))
		t3f_ops.getxattr(req, ino, name, size);
	t3f_view = NULL;
}

static void sd_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	if (route(FS(req), ino) != SNAPDIR) {
		if (readable(req, ino, 0))
			t3f_ops.listxattr(req, ino, size);
	} else if (size) {
		fuse_reply_buf(req, NULL, 0);	/* no names */
	} else {
		fuse_reply_xattr(req, 0);
	}
	t3f_view = NULL;
}

static void sd_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	if (route(FS(req), ino) == SNAPDIR)
		fuse_reply_err(req, mask & W_OK ? EROFS : 0);
	else if (readable(req, ino, 0))
		t3f_ops.access(req, ino, mask);
	t3f_view = NULL;
}

void t3f_snapdir_ops_init(void)
{
	t3f_snapdir_ops = t3f_ops;
	t3f_snapdir_ops.lookup = sd_lookup;
	t3f_snapdir_ops.forget = sd_forget;
	t3f_snapdir_ops.getattr = sd_getattr;
	t3f_snapdir_ops.setattr = sd_setattr;
	t3f_snapdir_ops.readlink = sd_readlink;
	t3f_snapdir_ops.mknod = sd_mknod;
	t3f_snapdir_ops.mkdir = sd_mkdir;
	t3f_snapdir_ops.unlink = sd_unlink;
	t3f_snapdir_ops.rmdir = sd_rmdir;
	t3f_snapdir_ops.symlink = sd_symlink;
	t3f_snapdir_ops.rename = sd_rename;
	t3f_snapdir_ops.link = sd_link;
	t3f_snapdir_ops.open = sd_open;
	t3f_snapdir_ops.read = sd_read;
	t3f_snapdir_ops.write = sd_write;
	t3f_snapdir_ops.fsync = sd_fsync;
	t3f_snapdir_ops.fallocate = sd_fallocate;
	t3f_snapdir_ops.opendir = sd_opendir;
	t3f_snapdir_ops.readdir = sd_readdir;
	t3f_snapdir_ops.releasedir = sd_releasedir;
	t3f_snapdir_ops.fsyncdir = sd_fsync;
	t3f_snapdir_ops.setxattr = sd_setxattr;
	t3f_snapdir_ops.getxattr = sd_getxattr;
	t3f_snapdir_ops.listxattr = sd_listxattr;
	t3f_snapdir_ops.removexattr = sd_removexattr;
	t3f_snapdir_ops.access = sd_access;
	t3f_snapdir_ops.create = sd_create;
	t3f_snapdir_ops.readdirplus = sd_readdirplus;
}
