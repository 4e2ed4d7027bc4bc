/*
 * The low-level FUSE operations over libtux3.
 *
 * Every library call runs under fs->lock (libtux3 is not thread-safe; see
 * tux3fuse.h).  Inode numbers are the volume's, except that FUSE's root
 * (FUSE_ROOT_ID, 1) is the volume's root (TUX3_ROOT_INO, 63) and 63 is
 * given to the kernel as 1 (the volume's inode 1 is the bitmap, never
 * named by a directory).
 *
 * Lookup counts and space: the library frees an inode's space with its
 * last link unless the inode is held open (tux3_iopen), and then at its
 * last tux3_irelease.  The kernel may use an inode until its last forget,
 * so an inode the kernel holds must be held open before it can lose its
 * last link.  Instead of holding every inode the kernel knows (the
 * library's table of open inodes is a list), the table here counts the
 * kernel's lookups, and unlink, rmdir and a rename over an existing name
 * hold the inode they may unlink (tux3_iopen) when the kernel holds it;
 * the forget that brings its count to zero releases it (tux3_irelease),
 * and the library then frees an inode with no links.  The root is never
 * counted nor forgotten.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include "tux3fuse.h"

#define T3_NAME_MAX 255

static struct t3f *FS(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* The lock, and with it the version a snapshot's view reads (snapdir.c):
 * the library's selected version is the handle's, so it is the view's
 * only while the lock is held. */
static void lock(struct t3f *fs)
{
	pthread_mutex_lock(&fs->lock);
	fs->lock_view = t3f_view;
	if (t3f_view && fs->vol) {
		fs->outer_tag = tux3_version_selected_tag(fs->vol);
		/* cannot fail: the snapshots are those of the mount's start,
		 * and nothing changes the version table while it runs */
		if (tux3_version_select_tag(fs->vol, t3f_view->tag))
			t3f_log(fs, "snapshot %s: cannot select its version",
				t3f_view->name);
	}
}

static void unlock(struct t3f *fs)
{
	if (fs->lock_view && fs->vol)
		tux3_version_select_tag(fs->vol, fs->outer_tag);
	fs->lock_view = NULL;
	pthread_mutex_unlock(&fs->lock);
}

/* The kernel's lookups in the view of this request (snapdir.c). */
static struct itable *itab_cur(struct t3f *fs)
{
	return t3f_view ? &t3f_view->itab : &fs->itab;
}

/* A snapshot's view changes nothing, on any mount. */
static bool read_only(const struct t3f *fs)
{
	return fs->readonly || t3f_view;
}

static tux3_ino_t tino(fuse_ino_t ino)
{
	ino &= T3F_INO_MASK;	/* the view is the request's (t3f_view) */
	if (ino == FUSE_ROOT_ID)
		return TUX3_ROOT_INO;
	if (ino == TUX3_ROOT_INO)
		return 0;	/* never handed out: no such inode */
	return ino;
}

static fuse_ino_t fino(tux3_ino_t ino)
{
	fuse_ino_t view = t3f_view ? (fuse_ino_t)t3f_view->slot <<
				     T3F_SLOT_SHIFT : 0;
	return view | (ino == TUX3_ROOT_INO ? FUSE_ROOT_ID : ino);
}

void t3f_log(struct t3f *fs, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (fs && !fs->foreground) {
		va_list aq;
		va_copy(aq, ap);
		vsyslog(LOG_ERR, fmt, aq);
		va_end(aq);
	}
	fprintf(stderr, "tux3fuse: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* A library error as the positive errno for fuse_reply_err.  Errors that
 * mean damage or a failing device are logged with the library's context. */
static int lib_err(struct t3f *fs, int err, const char *op)
{
	if (err == -EIO || err == -EUCLEAN || err == -ENOMEM ||
	    err == -EFAULT || err == -EOVERFLOW) {
		char buf[512];
		t3f_log(fs, "%s: %s", op,
			tux3_error_text(fs->vol, buf, sizeof(buf)));
	}
	tux3_clear_error(fs->vol);
	return -err;
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct timespec ns_ts(int64_t ns)
{
	struct timespec ts;
	ts.tv_sec = ns / 1000000000;
	ts.tv_nsec = ns % 1000000000;
	if (ts.tv_nsec < 0) {
		ts.tv_nsec += 1000000000;
		ts.tv_sec--;
	}
	return ts;
}

static void fill_stat(const struct tux3_stat *s, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = fino(s->ino);
	st->st_mode = s->mode;
	/* the library loads an orphan (no names left, still open) with
	 * nlink 1, as the reference does; fstat of an unlinked file says 0 */
	st->st_nlink = s->orphan ? 0 : s->nlink;
	st->st_uid = s->uid;
	st->st_gid = s->gid;
	st->st_size = (off_t)s->size;
	/* tux3_stat gives the stored i_size, which for a symlink is the
	 * format's (the target with its NUL: length + 1, as the reference
	 * writes it); POSIX wants the length */
	if (S_ISLNK(s->mode) && s->size)
		st->st_size--;
	st->st_rdev = makedev(s->rdev_major, s->rdev_minor);
	st->st_blksize = s->blksize;
	st->st_blocks = (blkcnt_t)s->blocks;
	st->st_atim = ns_ts(s->atime_ns);	/* mtime without -O atime */
	st->st_mtim = ns_ts(s->mtime_ns);
	st->st_ctim = ns_ts(s->ctime_ns);
}

/* Locked: stat ino and count one lookup of it.  parent: the directory it
 * was found in (kept for directories). */
static int make_entry(struct t3f *fs, tux3_ino_t ino, tux3_ino_t parent,
		      struct fuse_entry_param *e)
{
	struct tux3_stat s;
	int err = tux3_stat(fs->vol, ino, &s);
	if (err)
		return err;
	memset(e, 0, sizeof(*e));
	fill_stat(&s, &e->attr);
	e->ino = fino(ino);
	e->attr_timeout = fs->timeout;
	e->entry_timeout = fs->timeout;
	if (ino == TUX3_ROOT_INO)
		return 0;
	return itab_ref(itab_cur(fs), ino, S_ISDIR(s.mode) ? parent : 0, 1,
			NULL);
}

/* Locked: the kernel gives back n lookups of ino. */
static void forget_locked(struct t3f *fs, tux3_ino_t ino, uint64_t n)
{
	bool held = false;
	if (ino == TUX3_ROOT_INO || !ino)
		return;
	if (itab_unref(itab_cur(fs), ino, n, &held) == 1 && held) {
		int err = tux3_irelease(fs->vol, ino);
		if (err)
			lib_err(fs, err, "release");
		else if (!fs->readonly)
			t3f_mark_dirty(fs);
	}
}

/* Reply with an entry counted by make_entry; if the kernel never gets it
 * (the request was interrupted), take the lookup back. */
static void reply_entry(fuse_req_t req, struct fuse_entry_param *e)
{
	if (fuse_reply_entry(req, e) && e->ino && e->ino != FUSE_ROOT_ID) {
		struct t3f *fs = FS(req);
		lock(fs);
		forget_locked(fs, tino(e->ino), 1);
		unlock(fs);
	}
}

/* Locked: before a call that may take the last link of dir/name, hold
 * that inode open if the kernel holds it. */
static void hold_target(struct t3f *fs, tux3_ino_t dir, const char *name)
{
	tux3_ino_t ino;
	if (tux3_lookup(fs->vol, dir, name, strlen(name), &ino)) {
		tux3_clear_error(fs->vol);
		return;
	}
	struct ientry *e = itab_find(itab_cur(fs), ino);
	if (e && !e->held) {
		if (tux3_iopen(fs->vol, ino) == 0)
			e->held = true;
		else
			tux3_clear_error(fs->vol);
	}
}

static bool name_ok(fuse_req_t req, const char *name)
{
	if (strlen(name) > T3_NAME_MAX) {
		fuse_reply_err(req, ENAMETOOLONG);
		return false;
	}
	return true;
}

/* Every change starts here: a read-write mount (else EROFS) and, when
 * the change makes a name, one the format takes (else ENAMETOOLONG).
 * false: the request is answered. */
static bool may_change(fuse_req_t req, const struct t3f *fs, const char *name)
{
	if (read_only(fs)) {
		fuse_reply_err(req, EROFS);
		return false;
	}
	return !name || name_ok(req, name);
}

/* Locked: an ENOSPC may be the open delta's doing, since the blocks it
 * freed become free only when it is committed.  So, as ext4 commits its
 * journal and retries an allocation, a change that failed with ENOSPC
 * commits once and is tried again (true: retry), when a change since the
 * last commit may have freed blocks (else failing calls would commit in
 * a loop, each commit's log taking from the reserve). */
static bool enospc_retry(struct t3f *fs, int err, bool *tried)
{
	if (err != -ENOSPC || *tried || !fs->may_free || fs->readonly)
		return false;
	*tried = true;
	tux3_clear_error(fs->vol);
	return t3f_commit(fs) == 0;
}

/* ---- init and destroy ---- */

static void t3_init(void *userdata, struct fuse_conn_info *conn)
{
	struct t3f *fs = userdata;
	/* the kernel sends setattr(size) for O_TRUNC; no export by handle;
	 * suid/sgid: KILLPRIV_V2 (kernel_io.c) or else the kernel's own
	 * clearing, never v1's guess at the caller's CAP_FSETID */
	conn->want &= ~(unsigned)(FUSE_CAP_ATOMIC_O_TRUNC |
				  FUSE_CAP_EXPORT_SUPPORT |
				  FUSE_CAP_HANDLE_KILLPRIV);
	/* an O_DIRECT write that only partly fits (ENOSPC) returns what it
	 * wrote: the kernel's asynchronous direct I/O turns a short write
	 * into EIO, its synchronous one returns the count */
	conn->want &= ~(unsigned)FUSE_CAP_ASYNC_DIO;
	/* every change comes through the kernel, so its caches stay true:
	 * written data stays in its page cache until writeback (it then
	 * owns the size and mtime of a file it caches, and fsync flushes
	 * before it asks us to commit), and symlink targets are kept */
	if (fs->writeback && (conn->capable & FUSE_CAP_WRITEBACK_CACHE))
		conn->want |= FUSE_CAP_WRITEBACK_CACHE;
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
	int err = t3f_timer_start(fs);
	if (err)
		t3f_log(fs, "cannot start the commit timer: %s",
			strerror(-err));
}

/* directory handles (below) */
static void dirh_unlink(struct t3f *fs, struct dirh *h);
static void dirh_free(struct dirh *h);

int t3f_shutdown(struct t3f *fs)
{
	int err = 0;
	t3f_timer_stop(fs);
	lock(fs);
	if (fs->closed) {
		err = fs->close_err;
	} else if (fs->vol) {
		/* what the kernel still holds: no more users */
		for (size_t i = 0; i < fs->itab.nbucket; i++)
			for (struct ientry *e = fs->itab.bucket[i]; e;
			     e = e->next)
				if (e->held) {
					e->held = false;
					int r = tux3_irelease(fs->vol, e->ino);
					if (r)
						lib_err(fs, r, "release");
				}
		if (!fs->readonly) {
			/* committed with the volume still open, so that a
			 * failure can still be told (tux3_umount closes) */
			err = tux3_sync(fs->vol);
			if (err) {
				char buf[512];
				t3f_log(fs, "final commit failed: %s",
					t3f_error_text(fs, err, buf,
						       sizeof(buf)));
			}
		}
		tux3_close(fs->vol);
		fs->vol = NULL;
	}
	/* handles a SIGTERM left open: the kernel releases them no more */
	while (fs->open_dirs) {
		struct dirh *h = fs->open_dirs;
		dirh_unlink(fs, h);
		dirh_free(h);
	}
	fs->closed = true;
	fs->close_err = err;
	unlock(fs);
	return err;
}

static void t3_destroy(void *userdata)
{
	t3f_shutdown(userdata);
}

/* ---- names ---- */

static void t3_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct t3f *fs = FS(req);
	struct fuse_entry_param e;
	tux3_ino_t dir = tino(parent), ino;
	int err;

	if (!name_ok(req, name))
		return;
	lock(fs);
	if (!strcmp(name, ".")) {
		ino = dir;
		err = 0;
	} else if (!strcmp(name, "..")) {
		struct ientry *d = itab_find(itab_cur(fs), dir);
		ino = d && d->parent ? d->parent : TUX3_ROOT_INO;
		err = 0;
	} else {
		err = tux3_lookup(fs->vol, dir, name, strlen(name), &ino);
	}
	if (!err)
		err = make_entry(fs, ino, dir, &e);
	if (err == -ENOENT) {
		tux3_clear_error(fs->vol);
		unlock(fs);
		/* a negative entry: every change comes through the kernel */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = fs->timeout;
		fuse_reply_entry(req, &e);
		return;
	}
	if (err)
		err = lib_err(fs, err, "lookup");
	unlock(fs);
	if (err)
		fuse_reply_err(req, err);
	else
		reply_entry(req, &e);
}

static void t3_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct t3f *fs = FS(req);
	lock(fs);
	forget_locked(fs, tino(ino), nlookup);
	unlock(fs);
	fuse_reply_none(req);
}

static void t3_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	struct t3f *fs = FS(req);
	lock(fs);
	for (size_t i = 0; i < count; i++) {
		fuse_ino_t ino = forgets[i].ino;
		/* with snapdir, each in its own view's table (no version
		 * is read: the lock keeps the one it selected) */
		t3f_view = T3F_SLOT(ino) ? t3f_view_of(fs, ino) : NULL;
		if (!T3F_SLOT(ino) || t3f_view)
			forget_locked(fs, tino(ino), forgets[i].nlookup);
	}
	t3f_view = fs->lock_view;
	unlock(fs);
	fuse_reply_none(req);
}

/* ---- attributes ---- */

/* Locked: what a write or truncate by a caller without CAP_FSETID, or a
 * chown, does to the mode (the kernel says when, KILLPRIV_V2): set-user-ID
 * goes, and set-group-ID when group execute is set (without it, the bit
 * means mandatory locking, which stays).  Returns 1 when the mode
 * changed, 0 when there was nothing to clear, or a negative errno. */
static int kill_suidgid(struct t3f *fs, tux3_ino_t ino)
{
	struct tux3_stat s;
	int err = tux3_stat(fs->vol, ino, &s);
	if (err)
		return err;
	uint32_t mode = s.mode & ~(uint32_t)S_ISUID;
	if (mode & S_IXGRP)
		mode &= ~(uint32_t)S_ISGID;
	if (mode == s.mode || S_ISDIR(s.mode))
		return 0;
	struct tux3_setattr sa = {
		.valid = TUX3_SET_MODE | TUX3_SET_CTIME,
		.mode = mode & 07777,
		.ctime_ns = now_ns(),
	};
	err = tux3_setattr(fs->vol, ino, &sa);
	return err ? err : 1;
}

/* Locked: a write of [lo, hi) or a truncate to lo.. (hi UINT64_MAX)
 * reached the library: a recorded writeback error it covers is handled. */
static void wb_covered(struct t3f *fs, tux3_ino_t ino, uint64_t lo,
		       uint64_t hi)
{
	struct ientry *e = itab_find(itab_cur(fs), ino);
	if (e && e->wb_err && lo <= e->wb_lo && hi >= e->wb_hi)
		e->wb_err = 0;
}

/* Locked: a write of [lo, hi) the kernel's cache had accepted failed:
 * every later fsync says so (t3_fsync) until it is handled. */
static void wb_failed(struct t3f *fs, tux3_ino_t ino, int err, uint64_t lo,
		      uint64_t hi)
{
	struct ientry *e = itab_find(itab_cur(fs), ino);
	if (!e)
		return;
	if (!e->wb_err) {
		e->wb_lo = lo;
		e->wb_hi = hi;
	} else {
		e->wb_lo = lo < e->wb_lo ? lo : e->wb_lo;
		e->wb_hi = hi > e->wb_hi ? hi : e->wb_hi;
	}
	e->wb_err = err;
	e->wb_tell_writer = true;
}

static void t3_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct t3f *fs = FS(req);
	struct tux3_stat s;
	struct stat st;
	lock(fs);
	int err = tux3_stat(fs->vol, tino(ino), &s);
	if (err)
		err = lib_err(fs, err, "getattr");
	/* with a file handle: the question a cached write(2) asks first
	 * (or fstat) after a write back of the file failed */
	struct ientry *e = fi ? itab_find(itab_cur(fs), tino(ino)) : NULL;
	if (!err && e && e->wb_err && e->wb_tell_writer) {
		e->wb_tell_writer = false;
		err = e->wb_err;
	}
	unlock(fs);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fill_stat(&s, &st);
	fuse_reply_attr(req, &st, fs->timeout);
}

/* A time setattr carries (utimensat's UTIME_NOW: the _NOW flag, the
 * daemon's clock): whether it is set, and its value in *out */
static bool time_arg(int to_set, int given, int now, struct timespec ts,
		     int64_t *out)
{
	if (to_set & now)
		*out = now_ns();
	else if (to_set & given)
		*out = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return to_set & (given | now);
}

static void t3_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct t3f *fs = FS(req);
	struct tux3_setattr sa = { 0 };
	struct tux3_stat s;
	struct stat st;
	(void)fi;

	if (!may_change(req, fs, NULL))
		return;
	if (to_set & FUSE_SET_ATTR_MODE) {
		sa.valid |= TUX3_SET_MODE;
		sa.mode = attr->st_mode & 07777;
	}
	if (to_set & FUSE_SET_ATTR_UID) {
		sa.valid |= TUX3_SET_UID;
		sa.uid = attr->st_uid;
	}
	if (to_set & FUSE_SET_ATTR_GID) {
		sa.valid |= TUX3_SET_GID;
		sa.gid = attr->st_gid;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		sa.valid |= TUX3_SET_SIZE;
		sa.size = (uint64_t)attr->st_size;
		/* truncate and ftruncate change mtime with the size */
		sa.valid |= TUX3_SET_MTIME;
		sa.mtime_ns = now_ns();
	}
	sa.valid |= time_arg(to_set, FUSE_SET_ATTR_MTIME,
			     FUSE_SET_ATTR_MTIME_NOW, attr->st_mtim,
			     &sa.mtime_ns) ? TUX3_SET_MTIME : 0;
	if (to_set & FUSE_SET_ATTR_CTIME) {
		sa.valid |= TUX3_SET_CTIME;
		sa.ctime_ns = (int64_t)attr->st_ctim.tv_sec * 1000000000 +
			      attr->st_ctim.tv_nsec;
	}
	/* FUSE_SET_ATTR_ATIME(_NOW): stored on a volume with the atime
	 * feature, ignored elsewhere (noatime); the call changes ctime
	 * either way, as utimensat does */
	sa.valid |= time_arg(to_set, FUSE_SET_ATTR_ATIME,
			     FUSE_SET_ATTR_ATIME_NOW, attr->st_atim,
			     &sa.atime_ns) ? TUX3_SET_ATIME : 0;
	bool kill = t3f_request_kills_suidgid() &&
		    !(to_set & FUSE_SET_ATTR_MODE);

	bool tried = false;
	int err;
	lock(fs);
	do
		err = tux3_setattr(fs->vol, tino(ino), &sa);
	while (enospc_retry(fs, err, &tried));
	if (!err && kill) {
		int k = kill_suidgid(fs, tino(ino));
		err = k < 0 ? k : 0;
	}
	if (!err) {
		t3f_mark_dirty(fs);
		if (sa.valid & TUX3_SET_SIZE)
			wb_covered(fs, tino(ino), sa.size, UINT64_MAX);
		err = tux3_stat(fs->vol, tino(ino), &s);
	}
	if (err)
		err = lib_err(fs, err, "setattr");
	unlock(fs);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fill_stat(&s, &st);
	fuse_reply_attr(req, &st, fs->timeout);
}

static void t3_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct t3f *fs = FS(req);
	char buf[PATH_MAX + 1];
	lock(fs);
	ssize_t n = tux3_readlink(fs->vol, tino(ino), buf, sizeof(buf));
	int err = n < 0 ? lib_err(fs, (int)n, "readlink") : 0;
	unlock(fs);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_readlink(req, buf);
}

/* ---- making names ---- */

/* Owner of a new inode: the caller, with the group of a set-group-ID
 * directory (which directories made in it inherit).  Locked. */
static int new_owner(struct t3f *fs, fuse_req_t req, tux3_ino_t dir,
		     uint32_t *mode, uint32_t *uid, uint32_t *gid)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct tux3_stat ds;
	int err = tux3_stat(fs->vol, dir, &ds);
	if (err)
		return err;
	if (!S_ISDIR(ds.mode))
		return -ENOTDIR;
	*uid = ctx->uid;
	*gid = ctx->gid;
	if (ds.mode & S_ISGID) {
		*gid = ds.gid;
		if (S_ISDIR(*mode))
			*mode |= S_ISGID;
	}
	return 0;
}

enum make_kind { MAKE_NODE, MAKE_DIR, MAKE_SYMLINK };

/* Locked: make dir/name and its entry. */
static int make_locked(struct t3f *fs, fuse_req_t req, enum make_kind kind,
		       tux3_ino_t dir, const char *name, uint32_t mode,
		       dev_t rdev, const char *target,
		       struct fuse_entry_param *e)
{
	uint32_t uid, gid;
	tux3_ino_t ino;
	size_t len = strlen(name);
	if (kind == MAKE_DIR)
		mode = S_IFDIR | (mode & 07777);
	int err = new_owner(fs, req, dir, &mode, &uid, &gid);
	if (err)
		return err;
	bool tried = false;
	do {
		switch (kind) {
		case MAKE_DIR:
			err = tux3_mkdir(fs->vol, dir, name, len, mode, uid,
					 gid, &ino);
			break;
		case MAKE_SYMLINK:
			err = tux3_symlink(fs->vol, dir, name, len, target,
					   uid, gid, &ino);
			break;
		default:
			err = tux3_mknod(fs->vol, dir, name, len, mode, uid,
					 gid, major(rdev), minor(rdev), &ino);
			break;
		}
	} while (enospc_retry(fs, err, &tried));
	if (err)
		return err;
	t3f_mark_dirty(fs);
	return make_entry(fs, ino, dir, e);
}

static void make(fuse_req_t req, enum make_kind kind, fuse_ino_t parent,
		 const char *name, uint32_t mode, dev_t rdev,
		 const char *target)
{
	struct t3f *fs = FS(req);
	struct fuse_entry_param e;
	if (!may_change(req, fs, name))
		return;
	lock(fs);
	int err = make_locked(fs, req, kind, tino(parent), name, mode, rdev,
			      target, &e);
	if (err)
		err = lib_err(fs, err, "create");
	unlock(fs);
	if (err)
		fuse_reply_err(req, err);
	else
		reply_entry(req, &e);
}

static void t3_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	make(req, MAKE_NODE, parent, name, mode, rdev, NULL);
}

static void t3_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	make(req, MAKE_DIR, parent, name, mode, 0, NULL);
}

static void t3_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	make(req, MAKE_SYMLINK, parent, name, S_IFLNK | 0777, 0, link);
}

static void t3_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct t3f *fs = FS(req);
	struct fuse_entry_param e;
	if (!may_change(req, fs, name))
		return;
	lock(fs);
	int err = make_locked(fs, req, MAKE_NODE, tino(parent), name,
			      S_IFREG | (mode & 07777), 0, NULL, &e);
	if (err)
		err = lib_err(fs, err, "create");
	unlock(fs);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fi->keep_cache = 1;
	if (fuse_reply_create(req, &e, fi)) {
		lock(fs);
		forget_locked(fs, tino(e.ino), 1);
		unlock(fs);
	}
}

static void t3_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	struct t3f *fs = FS(req);
	struct fuse_entry_param e;
	if (!may_change(req, fs, newname))
		return;
	lock(fs);
	bool tried = false;
	int err;
	do
		err = tux3_link(fs->vol, tino(ino), tino(newparent), newname,
				strlen(newname));
	while (enospc_retry(fs, err, &tried));
	if (!err) {
		t3f_mark_dirty(fs);
		err = make_entry(fs, tino(ino), tino(newparent), &e);
	}
	if (err)
		err = lib_err(fs, err, "link");
	unlock(fs);
	if (err)
		fuse_reply_err(req, err);
	else
		reply_entry(req, &e);
}

/* ---- removing and renaming ---- */

static void remove_name(fuse_req_t req, fuse_ino_t parent, const char *name,
			bool dir)
{
	struct t3f *fs = FS(req);
	if (!may_change(req, fs, name))
		return;
	lock(fs);
	hold_target(fs, tino(parent), name);
	int err = dir ? tux3_rmdir(fs->vol, tino(parent), name, strlen(name))
		      : tux3_unlink(fs->vol, tino(parent), name, strlen(name));
	if (!err)
		t3f_mark_dirty(fs);
	else
		err = lib_err(fs, err, dir ? "rmdir" : "unlink");
	unlock(fs);
	fuse_reply_err(req, err);
}

static void t3_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, false);
}

static void t3_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, true);
}

/* Locked: rename with RENAME_WHITEOUT (overlayfs on a lower filesystem):
 * od/name moves to nd/newname and a whiteout (a character device 0:0
 * owned by the caller) takes its place, all or nothing.  The whiteout is
 * made first under a temporary name and exchanged with the source, so
 * that running out of space changes nothing; a failing move then puts
 * the source back. */
static int rename_whiteout(struct t3f *fs, fuse_req_t req, tux3_ino_t od,
			   const char *name, tux3_ino_t nd, const char *newname,
			   unsigned tflags)
{
	size_t len = strlen(name);
	uint32_t mode = S_IFCHR, uid, gid;
	char tmp[48];
	tux3_ino_t wh;
	int err = new_owner(fs, req, od, &mode, &uid, &gid);
	for (unsigned i = 0; !err; i++) {
		snprintf(tmp, sizeof(tmp), ".tux3fuse-whiteout.%u", i);
		err = tux3_mknod(fs->vol, od, tmp, strlen(tmp), S_IFCHR, uid,
				 gid, 0, 0, &wh);
		if (err != -EEXIST || i == 99)
			break;
		tux3_clear_error(fs->vol);
		err = 0;
	}
	if (err)
		return err;
	size_t tlen = strlen(tmp);
	err = tux3_rename(fs->vol, od, tmp, tlen, od, name, len,
			  TUX3_RENAME_EXCHANGE);
	if (!err) {
		hold_target(fs, nd, newname);
		err = tux3_rename(fs->vol, od, tmp, tlen, nd, newname,
				  strlen(newname), tflags);
		if (err && tux3_rename(fs->vol, od, tmp, tlen, od, name, len,
				       TUX3_RENAME_EXCHANGE))
			t3f_log(fs, "rename: whiteout %s left in directory "
				"%llu", tmp, (unsigned long long)od);
	}
	if (err) {
		int e2 = tux3_unlink(fs->vol, od, tmp, tlen);
		if (e2)
			t3f_log(fs, "rename: cannot remove %s in directory "
				"%llu: %s", tmp, (unsigned long long)od,
				strerror(-e2));
	}
	return err;
}

static void t3_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	struct t3f *fs = FS(req);
	tux3_ino_t od = tino(parent), nd = tino(newparent), src = 0, dst = 0;
	unsigned tflags = 0;

	if (!may_change(req, fs, NULL))
		return;
	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE |
				RENAME_WHITEOUT) ||
	    ((flags & RENAME_EXCHANGE) &&
	     (flags & (RENAME_NOREPLACE | RENAME_WHITEOUT)))) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (!name_ok(req, name) || !name_ok(req, newname))
		return;
	if (flags & RENAME_NOREPLACE)
		tflags |= TUX3_RENAME_NOREPLACE;
	if (flags & RENAME_EXCHANGE)
		tflags |= TUX3_RENAME_EXCHANGE;

	lock(fs);
	if (tux3_lookup(fs->vol, od, name, strlen(name), &src))
		src = 0;
	if (tux3_lookup(fs->vol, nd, newname, strlen(newname), &dst))
		dst = 0;
	tux3_clear_error(fs->vol);
	bool tried = false;
	int err;
	do {
		if (flags & RENAME_WHITEOUT) {
			err = rename_whiteout(fs, req, od, name, nd, newname,
					      tflags);
		} else {
			if (!(flags & RENAME_EXCHANGE))
				hold_target(fs, nd, newname);
			err = tux3_rename(fs->vol, od, name, strlen(name), nd,
					  newname, strlen(newname), tflags);
		}
	} while (enospc_retry(fs, err, &tried));
	if (!err) {
		t3f_mark_dirty(fs);
		/* where the moved directories now live, for ".." */
		struct ientry *e = src ? itab_find(itab_cur(fs), src) : NULL;
		if (e && e->parent)
			e->parent = nd;
		e = dst && (flags & RENAME_EXCHANGE) ?
			itab_find(itab_cur(fs), dst) : NULL;
		if (e && e->parent)
			e->parent = od;
	} else {
		err = lib_err(fs, err, "rename");
	}
	unlock(fs);
	fuse_reply_err(req, err);
}

/* ---- file data ---- */

/* A read the daemon sees: the inode's atime by the mount's rule (lock
 * held).  A failure (a full volume) does not fail the read. */
static void atime_read(struct t3f *fs, tux3_ino_t ino)
{
	if (fs->atime == T3F_NOATIME || t3f_view)
		return;
	int r = tux3_atime_touch(fs->vol, ino, fs->atime, now_ns());
	if (r > 0)
		t3f_mark_dirty(fs);
	else if (r < 0)
		tux3_clear_error(fs->vol);
}

/* Whether a read through this open would change the atime: then the
 * kernel is not to keep its page cache, so that the first read reaches
 * the daemon (the kernel never updates a FUSE atime itself) */
static bool atime_wants_read(struct t3f *fs, tux3_ino_t ino, int flags)
{
	struct tux3_stat s;
	if (fs->atime == T3F_NOATIME || t3f_view ||
	    (flags & O_ACCMODE) == O_WRONLY)
		return false;
	lock(fs);
	bool due = !tux3_stat(fs->vol, ino, &s) &&
		   tux3_atime_due(&s, fs->atime, now_ns());
	if (!due)
		tux3_clear_error(fs->vol);
	unlock(fs);
	return due;
}

static void t3_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct t3f *fs = FS(req);
	if (read_only(fs) && (fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EROFS);
		return;
	}
	/* every change comes through this process: the kernel's page cache
	 * stays valid across opens, unless a read is to update atime */
	fi->keep_cache = !atime_wants_read(fs, tino(ino), fi->flags);
	fuse_reply_open(req, fi);
}

static void t3_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct t3f *fs = FS(req);
	(void)fi;
	char *buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	lock(fs);
	ssize_t n = tux3_read(fs->vol, tino(ino), buf, size, (uint64_t)off);
	int err = n < 0 ? lib_err(fs, (int)n, "read") : 0;
	if (!err)
		atime_read(fs, tino(ino));
	unlock(fs);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

static void t3_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct t3f *fs = FS(req);
	tux3_ino_t t = tino(ino);
	uint64_t at = (uint64_t)off;
	int killed = 0;
	if (!may_change(req, fs, NULL))
		return;
	bool kill = t3f_request_kills_suidgid();
	lock(fs);
	bool tried = false;
	ssize_t n;
	do
		n = tux3_write(fs->vol, t, buf, size, at);
	while (enospc_retry(fs, n < 0 ? (int)n : 0, &tried));
	if (n < 0)	/* even a failed write may have changed some */
		t3f_mark_failed(fs);
	else
		t3f_mark_dirty(fs);
	int err = n < 0 ? lib_err(fs, (int)n, "write") : 0;
	bool failed_back = err && fi->writepage;
	if (failed_back)
		wb_failed(fs, t, err, at, at + size);
	if (!err) {
		wb_covered(fs, t, at, at + (uint64_t)n);
		if (kill && n > 0)
			killed = kill_suidgid(fs, t);
		if (killed < 0)
			lib_err(fs, killed, "write: clearing set-user-ID");
	}
	unlock(fs);
	/* the kernel's copy of the mode is stale: attributes only (no page
	 * is touched, so the writer's locked pages cannot deadlock this) */
	if (killed > 0 || failed_back)
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_write(req, (size_t)n);
}

/* No flush operation: a write is in the library when it is answered, so
 * close(2) has nothing to push, and after the first ENOSYS the kernel
 * stops sending FLUSH, a round trip saved on every close. */

static void t3_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	/* the inode stays held by its lookups until the last forget */
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

/* fallocate: preallocation (mode 0, KEEP_SIZE within the size) and
 * PUNCH_HOLE|KEEP_SIZE; other modes are EOPNOTSUPP (tux3_fallocate). */
static void t3_fallocate(fuse_req_t req, fuse_ino_t ino, int mode,
			 off_t offset, off_t length, struct fuse_file_info *fi)
{
	struct t3f *fs = FS(req);
	unsigned flags = 0;
	(void)fi;
	if (!may_change(req, fs, NULL))
		return;
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (offset < 0 || length <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (mode & FALLOC_FL_KEEP_SIZE)
		flags |= TUX3_FALLOC_KEEP_SIZE;
	if (mode & FALLOC_FL_PUNCH_HOLE)
		flags |= TUX3_FALLOC_PUNCH_HOLE;
	lock(fs);
	bool tried = false;
	int err;
	do
		err = tux3_fallocate(fs->vol, tino(ino), (uint64_t)offset,
				     (uint64_t)length, flags);
	while (enospc_retry(fs, err, &tried));
	if (!err)
		t3f_mark_dirty(fs);
	else
		err = lib_err(fs, err, "fallocate");
	unlock(fs);
	fuse_reply_err(req, err);
}

/* fsync and fsyncdir: commit the open delta (everything, not only ino);
 * then a write of ino's cached data that failed is told again */
static void t3_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	struct t3f *fs = FS(req);
	(void)datasync;
	(void)fi;
	lock(fs);
	int err = t3f_commit(fs);
	struct ientry *e = itab_find(itab_cur(fs), tino(ino));
	if (!err && e && e->wb_err)
		err = -e->wb_err;	/* until handled, not only once */
	unlock(fs);
	fuse_reply_err(req, -err);
}

/* ---- directories ---- */

/* A directory handle: the entries as they were at opendir (or at the
 * last rewind), so that offsets stay stable while it changes. */
struct dent {
	tux3_ino_t ino;
	uint32_t mode;		/* S_IFMT of the entry type */
	size_t name;		/* offset in names */
};

struct dirh {
	tux3_ino_t dir, parent;
	struct dent *d;
	size_t n, cap;
	char *names;
	size_t nlen, ncap;
	bool fresh;		/* loaded and not yet read */
	struct dirh *prev, *next;	/* fs->open_dirs, under the lock */
};

static uint32_t dtype_mode(unsigned type)
{
	switch (type) {
	case TUX3_DT_REG: return S_IFREG;
	case TUX3_DT_DIR: return S_IFDIR;
	case TUX3_DT_CHR: return S_IFCHR;
	case TUX3_DT_BLK: return S_IFBLK;
	case TUX3_DT_FIFO: return S_IFIFO;
	case TUX3_DT_SOCK: return S_IFSOCK;
	case TUX3_DT_LNK: return S_IFLNK;
	default: return 0;
	}
}

static int collect(void *ctx, const char *name, unsigned len, tux3_ino_t ino,
		   unsigned type, uint64_t pos)
{
	struct dirh *h = ctx;
	(void)pos;
	if ((len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		struct dent *d = realloc(h->d, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		h->d = d;
		h->cap = cap;
	}
	if (h->nlen + len + 1 > h->ncap) {
		size_t cap = h->ncap ? h->ncap * 2 : 1024;
		while (cap < h->nlen + len + 1)
			cap *= 2;
		char *p = realloc(h->names, cap);
		if (!p)
			return -ENOMEM;
		h->names = p;
		h->ncap = cap;
	}
	memcpy(h->names + h->nlen, name, len);
	h->names[h->nlen + len] = 0;
	h->d[h->n++] = (struct dent){ ino, dtype_mode(type), h->nlen };
	h->nlen += len + 1;
	return 0;
}

/* Locked: (re)read the directory into h. */
static int dir_load(struct t3f *fs, struct dirh *h)
{
	h->n = h->nlen = 0;
	int err = tux3_readdir(fs->vol, h->dir, collect, h);
	if (err < 0)
		return err;
	struct ientry *e = itab_find(itab_cur(fs), h->dir);
	h->parent = h->dir == TUX3_ROOT_INO ? TUX3_ROOT_INO :
		    e && e->parent ? e->parent : h->dir;
	h->fresh = true;
	return 0;
}

static void dirh_free(struct dirh *h)
{
	if (h) {
		free(h->d);
		free(h->names);
		free(h);
	}
}

/* Under the lock: a handle the kernel holds, or one it released. */
static void dirh_link(struct t3f *fs, struct dirh *h)
{
	h->prev = NULL;
	h->next = fs->open_dirs;
	if (h->next)
		h->next->prev = h;
	fs->open_dirs = h;
}

static void dirh_unlink(struct t3f *fs, struct dirh *h)
{
	if (h->prev)
		h->prev->next = h->next;
	else
		fs->open_dirs = h->next;
	if (h->next)
		h->next->prev = h->prev;
}

static void t3_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct t3f *fs = FS(req);
	struct dirh *h = calloc(1, sizeof(*h));
	if (!h) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	h->dir = tino(ino);
	lock(fs);
	int err = dir_load(fs, h);
	if (err)
		err = lib_err(fs, err, "opendir");
	else
		dirh_link(fs, h);
	unlock(fs);
	if (err) {
		dirh_free(h);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uintptr_t)h;
	if (fuse_reply_open(req, fi)) {
		lock(fs);
		dirh_unlink(fs, h);
		unlock(fs);
		dirh_free(h);
	}
}

static void do_readdir(fuse_req_t req, size_t size, off_t off,
		       struct fuse_file_info *fi, bool plus)
{
	struct t3f *fs = FS(req);
	struct dirh *h = (struct dirh *)(uintptr_t)fi->fh;
	char *buf = malloc(size ? size : 1);
	tux3_ino_t *counted = NULL;
	size_t ncounted = 0, used = 0;
	int err = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	lock(fs);
	if (off == 0 && !h->fresh)	/* rewinddir: see the changes */
		err = dir_load(fs, h);
	if (off == 0 && !err)
		atime_read(fs, h->dir);
	h->fresh = false;
	if (plus && !err && h->n)
		counted = malloc(h->n * sizeof(*counted));
	if (plus && !err && h->n && !counted)
		err = -ENOMEM;
	/* "." and "..", and in the root of a snapdir=visible mount the
	 * snapshots' directory (snapdir.c) */
	size_t fixed = 2;
	if (h->dir == TUX3_ROOT_INO && !t3f_view &&
	    fs->snapdir == T3F_SNAPDIR_VISIBLE)
		fixed = 3;
	for (size_t i = (size_t)off; !err && i < h->n + fixed; i++) {
		const char *name;
		tux3_ino_t ino;
		uint32_t mode;
		if (i < fixed) {
			name = i == 0 ? "." : i == 1 ? ".." : SNAPDIR_NAME;
			ino = i == 0 ? h->dir : h->parent;
			mode = S_IFDIR;
		} else {
			name = h->names + h->d[i - fixed].name;
			ino = h->d[i - fixed].ino;
			mode = h->d[i - fixed].mode;
		}
		size_t room = size - used, len;
		if (!plus || i < fixed) {
			/* "." and "..": no lookup counted (ino 0 in plus) */
			struct fuse_entry_param e = { 0 };
			e.attr.st_ino = i == 2 && fixed == 3 ?
				(fuse_ino_t)SNAPDIR_SLOT << T3F_SLOT_SHIFT |
				FUSE_ROOT_ID : fino(ino);
			e.attr.st_mode = mode;
			len = plus ? fuse_add_direntry_plus(req, buf + used,
							    room, name, &e,
							    (off_t)i + 1)
				   : fuse_add_direntry(req, buf + used, room,
						       name, &e.attr,
						       (off_t)i + 1);
			if (len > room)
				break;
			used += len;
			continue;
		}
		struct fuse_entry_param e = { 0 };
		struct tux3_stat s;
		int r = tux3_stat(fs->vol, ino, &s);
		if (r == -ENOENT) {	/* gone since the directory was read */
			tux3_clear_error(fs->vol);
			continue;
		}
		if (r) {
			err = r;
			break;
		}
		fill_stat(&s, &e.attr);
		e.ino = fino(ino);
		e.attr_timeout = e.entry_timeout = fs->timeout;
		len = fuse_add_direntry_plus(req, buf + used, room, name, &e,
					     (off_t)i + 1);
		if (len > room)
			break;
		err = itab_ref(itab_cur(fs), ino,
			       S_ISDIR(s.mode) ? h->dir : 0, 1, NULL);
		if (err)
			break;
		counted[ncounted++] = ino;
		used += len;
	}
	if (err) {
		for (size_t i = 0; i < ncounted; i++)
			forget_locked(fs, counted[i], 1);
		err = lib_err(fs, err, "readdir");
	}
	unlock(fs);
	if (err) {
		fuse_reply_err(req, err);
	} else if (fuse_reply_buf(req, buf, used) && ncounted) {
		lock(fs);
		for (size_t i = 0; i < ncounted; i++)
			forget_locked(fs, counted[i], 1);
		unlock(fs);
	}
	free(counted);
	free(buf);
}

static void t3_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)ino;
	do_readdir(req, size, off, fi, false);
}

static void t3_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	(void)ino;
	do_readdir(req, size, off, fi, true);
}

static void t3_releasedir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	struct t3f *fs = FS(req);
	struct dirh *h = (struct dirh *)(uintptr_t)fi->fh;
	(void)ino;
	if (h) {	/* none for a view's own root (snapdir.c) */
		lock(fs);
		dirh_unlink(fs, h);
		unlock(fs);
		dirh_free(h);
	}
	fuse_reply_err(req, 0);
}

/* ---- the volume ---- */

static void t3_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct t3f *fs = FS(req);
	struct tux3_statfs s;
	struct statvfs st;
	(void)ino;
	lock(fs);
	int err = tux3_statfs(fs->vol, &s);
	if (err)
		err = lib_err(fs, err, "statfs");
	unlock(fs);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	memset(&st, 0, sizeof(st));
	st.f_bsize = st.f_frsize = s.bsize;
	st.f_blocks = s.blocks;
	st.f_bfree = st.f_bavail = s.bfree;
	st.f_files = s.files;
	st.f_ffree = st.f_favail = s.ffree;
	st.f_namemax = s.namelen;
	fuse_reply_statfs(req, &st);
}

/* ---- xattrs ---- */

#define ACL_ACCESS "system.posix_acl_access"

/* An access ACL that is only a mode (acl.c): the permission bits change,
 * and a stored ACL goes, so that getxattr then answers ENODATA as on
 * ext4.  The kernel does not refresh its copy of the mode after a
 * setxattr, so it is told to. */
static void set_acl_mode(fuse_req_t req, struct t3f *fs, tux3_ino_t ino,
			 uint32_t perm)
{
	struct tux3_stat st;
	lock(fs);
	int err = tux3_stat(fs->vol, ino, &st);
	if (!err) {
		struct tux3_setattr sa = {
			.valid = TUX3_SET_MODE,
			.mode = (st.mode & 07000) | perm,
		};
		err = tux3_setattr(fs->vol, ino, &sa);
	}
	if (!err) {
		t3f_mark_dirty(fs);
		err = tux3_removexattr(fs->vol, ino, ACL_ACCESS);
		if (err == -ENODATA)
			err = 0;
	}
	if (err)
		err = lib_err(fs, err, "setxattr");
	unlock(fs);
	if (!err)
		fuse_lowlevel_notify_inval_inode(fs->se, fino(ino), -1, 0);
	fuse_reply_err(req, err);
}

static void t3_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	struct t3f *fs = FS(req);
	int tflags = 0;
	if (!may_change(req, fs, NULL))
		return;
	if (flags & ~(XATTR_CREATE | XATTR_REPLACE)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (flags & XATTR_CREATE)
		tflags |= TUX3_XATTR_CREATE;
	if (flags & XATTR_REPLACE)
		tflags |= TUX3_XATTR_REPLACE;
	uint32_t perm;
	if (!strcmp(name, ACL_ACCESS) &&
	    t3f_acl_is_mode(value, size, &perm)) {
		set_acl_mode(req, fs, tino(ino), perm);
		return;
	}
	lock(fs);
	bool tried = false;
	int err;
	do
		err = tux3_setxattr(fs->vol, tino(ino), name, value, size,
				    tflags);
	while (enospc_retry(fs, err, &tried));
	if (!err)
		t3f_mark_dirty(fs);
	else
		err = lib_err(fs, err, "setxattr");
	unlock(fs);
	fuse_reply_err(req, err);
}

static void t3_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			size_t size)
{
	struct t3f *fs = FS(req);
	char *buf = size ? malloc(size) : NULL;
	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	lock(fs);
	ssize_t n = tux3_getxattr(fs->vol, tino(ino), name, buf, size);
	int err = n < 0 ? lib_err(fs, (int)n, "getxattr") : 0;
	unlock(fs);
	if (err)
		fuse_reply_err(req, err);
	else if (!size)
		fuse_reply_xattr(req, (size_t)n);	/* the size probe */
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

struct names {
	char *buf;
	size_t len, cap;
};

static int add_name(void *ctx, const char *name, const void *value,
		    unsigned size)
{
	struct names *l = ctx;
	size_t n = strlen(name) + 1;
	(void)value;
	(void)size;
	if (l->len + n > l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		while (cap < l->len + n)
			cap *= 2;
		char *p = realloc(l->buf, cap);
		if (!p)
			return -ENOMEM;
		l->buf = p;
		l->cap = cap;
	}
	memcpy(l->buf + l->len, name, n);
	l->len += n;
	return 0;
}

static void t3_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct t3f *fs = FS(req);
	struct names l = { 0 };
	lock(fs);
	int err = tux3_listxattr(fs->vol, tino(ino), add_name, &l);
	if (err < 0)
		err = lib_err(fs, err, "listxattr");
	else
		err = 0;
	unlock(fs);
	if (err)
		fuse_reply_err(req, err);
	else if (!size)
		fuse_reply_xattr(req, l.len);
	else if (l.len > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, l.buf, l.len);
	free(l.buf);
}

static void t3_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct t3f *fs = FS(req);
	if (!may_change(req, fs, NULL))
		return;
	lock(fs);
	int err = tux3_removexattr(fs->vol, tino(ino), name);
	if (!err)
		t3f_mark_dirty(fs);
	else
		err = lib_err(fs, err, "removexattr");
	unlock(fs);
	fuse_reply_err(req, err);
}

/* ---- permissions ---- */

/* access(2) when the kernel does not check modes itself (without
 * default_permissions): the owner, group and other bits, root passing
 * all but execute of a file no one may execute. */
static void t3_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct t3f *fs = FS(req);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct tux3_stat s;
	lock(fs);
	int err = tux3_stat(fs->vol, tino(ino), &s);
	if (err)
		err = lib_err(fs, err, "access");
	unlock(fs);
	if (err || mask == F_OK) {
		fuse_reply_err(req, err);
		return;
	}
	if ((mask & W_OK) && read_only(fs) &&
	    (S_ISREG(s.mode) || S_ISDIR(s.mode) || S_ISLNK(s.mode))) {
		fuse_reply_err(req, EROFS);
		return;
	}
	unsigned bits;
	if (ctx->uid == 0) {
		bits = R_OK | W_OK;
		if (S_ISDIR(s.mode) || (s.mode & 0111))
			bits |= X_OK;
	} else if (ctx->uid == s.uid) {
		bits = (s.mode >> 6) & 7;
	} else {
		bool member = ctx->gid == s.gid;
		gid_t groups[64];
		int n = member ? 0 : fuse_req_getgroups(req, 64, groups);
		for (int i = 0; i < n && i < 64 && !member; i++)
			member = groups[i] == s.gid;
		bits = member ? (s.mode >> 3) & 7 : s.mode & 7;
	}
	fuse_reply_err(req, ((unsigned)mask & bits) == (unsigned)mask ? 0
								      : EACCES);
}

const struct fuse_lowlevel_ops t3f_ops = {
	.init = t3_init,
	.destroy = t3_destroy,
	.lookup = t3_lookup,
	.forget = t3_forget,
	.forget_multi = t3_forget_multi,
	.getattr = t3_getattr,
	.setattr = t3_setattr,
	.readlink = t3_readlink,
	.mknod = t3_mknod,
	.mkdir = t3_mkdir,
	.unlink = t3_unlink,
	.rmdir = t3_rmdir,
	.symlink = t3_symlink,
	.rename = t3_rename,
	.link = t3_link,
	.open = t3_open,
	.read = t3_read,
	.write = t3_write,
	.release = t3_release,
	.fsync = t3_fsync,
	.fallocate = t3_fallocate,
	.opendir = t3_opendir,
	.readdir = t3_readdir,
	.releasedir = t3_releasedir,
	.fsyncdir = t3_fsync,
	.statfs = t3_statfs,
	.setxattr = t3_setxattr,
	.getxattr = t3_getxattr,
	.listxattr = t3_listxattr,
	.removexattr = t3_removexattr,
	.access = t3_access,
	.create = t3_create,
	.readdirplus = t3_readdirplus,
};
