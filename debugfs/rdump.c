/*
 * dump and rdump: copy files and subtrees out to the host.
 *
 * rdump restores contents (holes stay holes), symlinks, hard links (as
 * links), fifos, device nodes and sockets, owners, xattrs (after chown,
 * which would clear security.capability), then modes (chown before chmod
 * so set-id bits survive), then times
 * (directories after their children, symlinks without following).  The
 * format stores no atime: it is restored equal to mtime.  Whatever the
 * host refuses is a warning; the walk goes on and the command fails at the
 * end.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "debugfs.h"

/* The first host path of each inode with more than one link, by inode
 * number: an open-addressed table (a tree of many hard links stays
 * linear), a quarter to a half full. */
struct linkmap {
	tux3_ino_t *inos;	/* 0: a free slot */
	char **paths;
	size_t count, cap;	/* cap a power of two, or 0 */
};

/* A directory being copied: its children, read a batch at a time, and
 * the host identity of its copy (to check the way back up). */
struct rd_frame {
	tux3_ino_t ino;
	struct tux3_stat st;
	struct dir_batch *batch;
	size_t pathlen;		/* host path of this directory: path[0..len) */
	dev_t hdev;
	ino_t hino;
	int top_root;		/* 'rdump / D': D keeps its own attributes */
};

/* The walk keeps its state on the heap, not on the call stack, and works
 * in the host directory open on fd (the innermost frame's), so neither
 * the nesting depth nor the length of host paths is bounded. */
struct rdump {
	struct shell *sh;
	struct linkmap links;
	struct rd_frame *frames;
	size_t depth, cap;
	int fd;			/* the innermost frame's host directory */
	char *path;		/* host path of the current object, for
				 * messages and hard links */
	size_t pathlen, pathcap;
	int warned;
	int failed;		/* library error: volume unreadable here */
	/* What a new host object gets without asking: the owner (when the
	 * target directory is not set-group-ID, whose group a new object
	 * would take) and the umask.  Objects that need no chown or chmod
	 * get none: two system calls of six for a small file. */
	int owner_known;
	int perm_known;		/* no default ACL, which would replace the
				 * umask */
	uid_t euid;
	gid_t egid;
	mode_t umask;
};

static size_t linkmap_slot(const struct linkmap *l, tux3_ino_t ino)
{
	size_t i = (size_t)((ino * 0x9e3779b97f4a7c15ull) >> 32) & (l->cap - 1);
	while (l->inos[i] && l->inos[i] != ino)
		i = (i + 1) & (l->cap - 1);
	return i;
}

static const char *linkmap_find(const struct linkmap *l, tux3_ino_t ino)
{
	return l->cap ? l->paths[linkmap_slot(l, ino)] : NULL;
}

static int linkmap_grow(struct linkmap *l)
{
	size_t ncap = l->cap ? l->cap * 2 : 64;
	struct linkmap n = { calloc(ncap, sizeof(*n.inos)),
			     calloc(ncap, sizeof(*n.paths)), l->count, ncap };
	if (!n.inos || !n.paths) {
		free(n.inos);
		free(n.paths);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->cap; i++)
		if (l->inos[i]) {
			size_t j = linkmap_slot(&n, l->inos[i]);
			n.inos[j] = l->inos[i];
			n.paths[j] = l->paths[i];
		}
	free(l->inos);
	free(l->paths);
	*l = n;
	return 0;
}

/* A path not remembered (out of memory) only costs the link: the next
 * name of the inode is copied as a file of its own. */
static void linkmap_add(struct linkmap *l, tux3_ino_t ino, const char *path)
{
	if ((l->count + 1) * 2 > l->cap && linkmap_grow(l))
		return;
	char *p = strdup(path);
	if (!p)
		return;
	size_t i = linkmap_slot(l, ino);
	l->inos[i] = ino;
	l->paths[i] = p;
	l->count++;
}

static void linkmap_free(struct linkmap *l)
{
	for (size_t i = 0; i < l->cap; i++)
		free(l->paths[i]);
	free(l->paths);
	free(l->inos);
	*l = (struct linkmap){ 0 };
}

static void host_warn(struct rdump *r, const char *path, const char *what)
{
	sh_warn(r->sh, "%s: %s: %s", path, what, strerror(errno));
	r->warned = 1;
}

struct data_copy {
	struct tux3_volume *vol;
	tux3_ino_t ino;
	int fd;
	uint64_t size;
	unsigned blocksize;
	int err;		/* library error */
	int host_errno;
	uint64_t written;	/* the host file's size so far */
};

static int copy_extent(void *ctx, uint64_t logical, tux3_block_t physical,
		       uint64_t count, uint32_t version)
{
	static char buf[1 << 20];
	struct data_copy *d = ctx;
	(void)version;
	if (!physical)
		return 0;	/* leave the hole */
	uint64_t pos = logical * d->blocksize;
	uint64_t end = (logical + count) * d->blocksize;
	if (end > d->size)
		end = d->size;
	while (pos < end) {
		size_t want = end - pos < sizeof(buf) ? (size_t)(end - pos) :
			      sizeof(buf);
		ssize_t n = tux3_read(d->vol, d->ino, buf, want, pos);
		if (n <= 0) {
			d->err = n < 0 ? (int)n : -EIO;
			return 1;
		}
		if (pwrite(d->fd, buf, (size_t)n, (off_t)pos) != n) {
			d->host_errno = errno;
			return 1;
		}
		pos += (uint64_t)n;
	}
	if (pos > d->written)
		d->written = pos;
	return 0;
}

/* Contents of a regular file into fd: extents only, so holes stay holes. */
static int copy_data(struct shell *sh, tux3_ino_t ino, uint64_t size, int fd,
		     const char *path, int *host_failed)
{
	struct tux3_statfs sfs;
	tux3_statfs(sh->vol, &sfs);
	struct data_copy d = { sh->vol, ino, fd, size, sfs.bsize, 0, 0, 0 };
	int err = tux3_map_extents(sh->vol, ino, copy_extent, &d);
	if (err < 0 || d.err)
		return sh_volerr(sh, path, err < 0 ? err : d.err);
	/* a trailing hole: the size past the last data written */
	if (d.host_errno ||
	    (d.written != size && ftruncate(fd, (off_t)size) < 0)) {
		errno = d.host_errno ? d.host_errno : errno;
		sh_warn(sh, "%s: write: %s", path, strerror(errno));
		*host_failed = 1;
	}
	return 0;
}

/* Where the host object is: open on fd (a directory or a regular file),
 * or else the entry name in the directory open on dirfd.  path names it
 * in messages. */
struct host_obj {
	int fd, dirfd;
	const char *name, *path;
	int fresh;		/* made by this rdump, owned by its creator */
	unsigned made_perm;	/* if fresh: its permission bits */
};

struct xattr_target {
	struct rdump *r;
	const struct host_obj *h;
	char proc[64];		/* /proc/self/fd/N/NAME when path is too long */
};

static int set_xattr(void *ctx, const char *name, const void *value,
		     unsigned size)
{
	struct xattr_target *x = ctx;
	const struct host_obj *h = x->h;
	int err;
	if (h->fd >= 0) {
		err = fsetxattr(h->fd, name, value, size, 0);
	} else if (strlen(h->path) < PATH_MAX) {
		err = lsetxattr(h->path, name, value, size, 0);
	} else {
		/* no *at() call for xattrs: the directory through procfs */
		char *p = NULL;
		err = asprintf(&p, "/proc/self/fd/%d/%s", h->dirfd, h->name);
		if (err >= 0)
			err = lsetxattr(p, name, value, size, 0);
		free(p);
	}
	if (err < 0) {
		char what[300];
		snprintf(what, sizeof(what), "cannot set xattr %s", name);
		host_warn(x->r, h->path, what);
	}
	return 0;
}

static void restore_meta(struct rdump *r, const struct host_obj *h,
			 tux3_ino_t ino, const struct tux3_stat *st)
{
	struct xattr_target x = { .r = r, .h = h };
	int on_fd = h->fd >= 0;
	int owned = h->fresh && r->owner_known && st->uid == r->euid &&
		    st->gid == r->egid;
	if (!owned && (on_fd ? fchown(h->fd, st->uid, st->gid) :
		       fchownat(h->dirfd, h->name, st->uid, st->gid,
				AT_SYMLINK_NOFOLLOW)) < 0)
		host_warn(r, h->path, "cannot chown");
	int err = tux3_listxattr(r->sh->vol, ino, set_xattr, &x);
	if (err < 0) {
		sh_volerr(r->sh, h->path, err);
		r->failed = 1;
	}
	int moded = h->fresh && r->perm_known &&
		    h->made_perm == (st->mode & 07777);
	if (!S_ISLNK(st->mode) && !moded &&
	    (on_fd ? fchmod(h->fd, st->mode & 07777) :
	     fchmodat(h->dirfd, h->name, st->mode & 07777, 0)) < 0)
		host_warn(r, h->path, "cannot chmod");
	struct timespec ts[2] = {
		{ st->mtime_ns / 1000000000, st->mtime_ns % 1000000000 },
		{ st->mtime_ns / 1000000000, st->mtime_ns % 1000000000 },
	};
	for (int i = 0; i < 2; i++)
		if (ts[i].tv_nsec < 0) {
			ts[i].tv_nsec += 1000000000;
			ts[i].tv_sec--;
		}
	if ((on_fd ? futimens(h->fd, ts) :
	     utimensat(h->dirfd, h->name, ts, AT_SYMLINK_NOFOLLOW)) < 0)
		host_warn(r, h->path, "cannot set times");
}

/* r->path = its first len bytes, then "/name" (name NULL: nothing) */
static int path_set(struct rdump *r, size_t len, const char *name)
{
	size_t n = name ? strlen(name) + 1 : 0;
	if (len + n + 1 > r->pathcap) {
		size_t cap = r->pathcap ? r->pathcap : 256;
		while (cap < len + n + 1)
			cap *= 2;
		char *p = realloc(r->path, cap);
		if (!p)
			return -ENOMEM;
		r->path = p;
		r->pathcap = cap;
	}
	if (name) {
		r->path[len] = '/';
		memcpy(r->path + len + 1, name, n - 1);
	}
	r->pathlen = len + n;
	r->path[r->pathlen] = 0;
	return 0;
}

/* The directory holding host path p, which may be longer than PATH_MAX:
 * opened a piece at a time.  *base is then p's last component.  Returns
 * a descriptor (or AT_FDCWD) or -1 with errno set. */
static int open_parent(const char *p, const char **base)
{
	const char *slash = strrchr(p, '/');
	int fd = AT_FDCWD;
	*base = slash ? slash + 1 : p;
	if (!slash)
		return fd;
	if (*p == '/') {
		fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		while (*p == '/' && p < slash)
			p++;
	}
	while (p < slash) {
		const char *end = slash;
		if (end - p >= PATH_MAX) {
			end = p + PATH_MAX - 1;
			while (end > p && *end != '/')
				end--;
		}
		char *piece = end > p ? strndup(p, (size_t)(end - p)) : NULL;
		int nfd = piece ? openat(fd, piece, O_PATH | O_DIRECTORY |
					 O_CLOEXEC) : -1;
		int e = piece ? errno : end > p ? ENOMEM : ENAMETOOLONG;
		free(piece);
		if (fd != AT_FDCWD)
			close(fd);
		if (nfd < 0) {
			errno = e;
			return -1;
		}
		fd = nfd;
		p = end;
		while (*p == '/' && p < slash)
			p++;
	}
	return fd;
}

static void frame_free(struct rd_frame *f)
{
	if (f->batch)
		dir_batch_free(f->batch);
	free(f->batch);
	f->batch = NULL;
}

static int rd_is_ancestor(struct rdump *r, tux3_ino_t ino)
{
	for (size_t i = 0; i < r->depth; i++)
		if (r->frames[i].ino == ino)
			return 1;
	return 0;
}

/* Enter the host directory open on fd, the copy of directory inode ino:
 * it becomes the innermost frame, its entries read by rd_walk.  Closes
 * fd if it fails (0 or -1). */
static int rd_enter(struct rdump *r, int fd, tux3_ino_t ino,
		    const struct tux3_stat *st, int top_root)
{
	struct stat hst;
	if (r->depth == r->cap) {
		size_t ncap = r->cap ? r->cap * 2 : 64;
		struct rd_frame *n = realloc(r->frames, ncap * sizeof(*n));
		if (!n) {
			r->failed = sh_err(r->sh, "out of memory");
			close(fd);
			return -1;
		}
		r->frames = n;
		r->cap = ncap;
	}
	if (fstat(fd, &hst) < 0) {
		host_warn(r, r->path, "cannot stat");
		close(fd);
		return -1;
	}
	struct dir_batch *batch = malloc(sizeof(*batch));
	if (!batch) {
		r->failed = sh_err(r->sh, "out of memory");
		close(fd);
		return -1;
	}
	dir_batch_init(batch, ino);
	struct rd_frame *f = &r->frames[r->depth];
	*f = (struct rd_frame){ .ino = ino, .st = *st, .batch = batch,
				.pathlen = r->pathlen, .hdev = hst.st_dev,
				.hino = hst.st_ino, .top_root = top_root };
	if (r->depth)
		close(r->fd);
	r->fd = fd;
	r->depth++;
	return 0;
}

/* The innermost directory is done: back to its parent's host directory
 * (through "..", checked to be the one we came from), then the finished
 * one's attributes.  0, or -1 if the walk cannot go on. */
static int rd_leave(struct rdump *r)
{
	struct rd_frame *f = &r->frames[r->depth - 1];
	int fd = r->fd, ret = 0;
	r->fd = -1;
	r->depth--;
	path_set(r, f->pathlen, NULL);	/* shorter: cannot fail */
	if (r->depth) {
		struct rd_frame *up = &r->frames[r->depth - 1];
		struct stat hst;
		int pfd = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0) {
			host_warn(r, r->path, "cannot open its parent "
				  "directory again");
			ret = -1;
		} else if (fstat(pfd, &hst) < 0 || hst.st_dev != up->hdev ||
			   hst.st_ino != up->hino) {
			sh_err(r->sh, "%s: moved on the host during rdump: "
			       "stopping", r->path);
			r->failed = 1;
			close(pfd);
			ret = -1;
		} else {
			r->fd = pfd;
		}
	}
	if (!f->top_root) {
		struct host_obj h = { fd, -1, r->path, r->path, 1,
				      0700 & ~r->umask };
		restore_meta(r, &h, f->ino, &f->st);
	}
	close(fd);
	frame_free(f);
	return ret;
}

/* Copy inode ino to the entry name of the host directory dirfd (r->path
 * names it): a directory is entered (rd_enter), anything else copied
 * whole.  -1 if the walk cannot go on. */
static int rd_copy(struct rdump *r, int dirfd, const char *name,
		   tux3_ino_t ino)
{
	struct shell *sh = r->sh;
	const char *path = r->path;
	struct host_obj h = { -1, dirfd, name, path, 0, 0 };
	struct tux3_stat st;
	int err = tux3_stat(sh->vol, ino, &st);
	if (err) {
		sh_volerr(sh, path, err);
		r->failed = 1;
		return 0;
	}
	if (S_ISDIR(st.mode)) {
		if (rd_is_ancestor(r, ino)) {
			sh_err(sh, "%s: directory inode %" PRIu64 " is its own "
			       "ancestor: not descending", path, ino);
			r->failed = 1;
			return 0;
		}
		if (mkdirat(dirfd, name, 0700) < 0) {
			host_warn(r, path, "cannot mkdir");
			return 0;
		}
		int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY |
				O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			host_warn(r, path, "cannot open the new directory");
			return 0;
		}
		rd_enter(r, fd, ino, &st, 0);
		return 0;
	}
	if (st.nlink > 1) {
		const char *first = linkmap_find(&r->links, ino);
		if (first) {
			const char *base;
			int pfd = open_parent(first, &base);
			if (pfd == -1 || linkat(pfd, base, dirfd, name, 0) < 0)
				host_warn(r, path, "cannot link");
			if (pfd >= 0)
				close(pfd);
			return 0;
		}
		linkmap_add(&r->links, ino, path);
	}
	if (S_ISREG(st.mode)) {
		int host_failed = 0;
		/* made with its permission bits (the set-ID bits come after
		 * the chown): most files need no chmod */
		unsigned perm = st.mode & 0777;
		h.fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL |
			      O_NOFOLLOW | O_CLOEXEC, perm);
		h.fresh = 1;
		h.made_perm = perm & ~r->umask;
		if (h.fd < 0) {
			host_warn(r, path, "cannot create");
			return 0;
		}
		if (copy_data(sh, ino, st.size, h.fd, path, &host_failed))
			r->failed = 1;
		if (host_failed)
			r->warned = 1;
	} else if (S_ISLNK(st.mode)) {
		static char target[65537];
		ssize_t n = tux3_readlink(sh->vol, ino, target, sizeof(target));
		if (n < 0) {
			sh_volerr(sh, path, (int)n);
			r->failed = 1;
			return 0;
		}
		if (symlinkat(target, dirfd, name) < 0) {
			host_warn(r, path, "cannot create symlink");
			return 0;
		}
	} else if (S_ISFIFO(st.mode)) {
		if (mkfifoat(dirfd, name, 0600) < 0) {
			host_warn(r, path, "cannot create fifo");
			return 0;
		}
	} else if (S_ISCHR(st.mode) || S_ISBLK(st.mode) || S_ISSOCK(st.mode)) {
		dev_t dev = makedev(st.rdev_major, st.rdev_minor);
		if (mknodat(dirfd, name, (st.mode & S_IFMT) | 0600, dev) < 0) {
			host_warn(r, path, "cannot create device node");
			return 0;
		}
	} else {
		sh_err(sh, "%s: inode %" PRIu64 " has unknown type 0%o", path,
		       ino, st.mode & S_IFMT);
		r->failed = 1;
		return 0;
	}
	restore_meta(r, &h, ino, &st);
	if (h.fd >= 0 && close(h.fd) < 0)
		host_warn(r, path, "write");
	return 0;
}

/* Depth first, one directory frame per level on the heap. */
static void rd_walk(struct rdump *r)
{
	while (r->depth) {
		struct rd_frame *f = &r->frames[r->depth - 1];
		struct dir_entry_ref e;
		int more = dir_batch_next(r->sh->vol, f->batch, &e);
		if (more < 0) {
			path_set(r, f->pathlen, NULL);	/* the directory's */
			r->failed = dir_batch_report(r->sh, f->batch, r->path,
						     more);
		}
		if (more <= 0) {
			if (rd_leave(r))
				break;
			continue;
		}
		if (path_set(r, f->pathlen, e.name)) {
			r->failed = sh_err(r->sh, "out of memory");
			break;
		}
		/* e.name stays valid: a frame entered meanwhile has its own
		 * batch */
		if (rd_copy(r, r->fd, e.name, e.ino))
			break;
	}
	/* stopped early: what is still open */
	while (r->depth) {
		struct rd_frame *f = &r->frames[--r->depth];
		frame_free(f);
	}
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

static int rdump_finish(struct rdump *r)
{
	linkmap_free(&r->links);
	free(r->frames);
	free(r->path);
	return r->failed || r->warned;
}

int cmd_rdump(struct shell *sh, int argc, char **argv)
{
	struct rdump r = { .sh = sh, .fd = -1 };
	tux3_ino_t ino;

	if (argc != 3)
		return sh_err(sh, "usage: rdump PATH HOSTDIR");
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	const char *path = argv[1], *dir = argv[2];
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return sh_err(sh, "%s: %s", dir, strerror(errno));
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return sh_err(sh, "%s: %s", dir, strerror(errno));
	struct stat dst;
	r.owner_known = !fstat(dfd, &dst) && !(dst.st_mode & S_ISGID);
	r.perm_known = fgetxattr(dfd, "system.posix_acl_default", NULL, 0) < 0
		       && (errno == ENODATA || errno == ENOTSUP);
	r.euid = geteuid();
	r.egid = getegid();
	r.umask = umask(0);
	umask(r.umask);
	if (path_set(&r, strlen(dir), NULL)) {
		close(dfd);
		return sh_err(sh, "out of memory");
	}
	memcpy(r.path, dir, r.pathlen);
	if (ino == TUX3_ROOT_INO) {
		struct tux3_stat st;
		int err = tux3_stat(sh->vol, ino, &st);
		if (err) {
			close(dfd);
			sh_volerr(sh, path, err);
			r.failed = 1;
		} else if (!rd_enter(&r, dfd, ino, &st, 1)) {
			rd_walk(&r);
		}
		return rdump_finish(&r);
	}
	/* D/NAME, NAME the last component of PATH (<inum> as given) */
	size_t end = strlen(path);
	while (end > 1 && path[end - 1] == '/')
		end--;
	size_t start = end;
	while (start && path[start - 1] != '/')
		start--;
	char *base = strndup(path + start, end - start);
	if (!base || path_set(&r, r.pathlen, base)) {
		free(base);
		close(dfd);
		rdump_finish(&r);
		return sh_err(sh, "out of memory");
	}
	rd_copy(&r, dfd, base, ino);
	free(base);
	close(dfd);
	rd_walk(&r);		/* a directory: its contents */
	return rdump_finish(&r);
}

int cmd_dump(struct shell *sh, int argc, char **argv)
{
	int preserve = 0, c;
	tux3_ino_t ino;
	struct tux3_stat st;

	optind = 0;
	while ((c = getopt(argc, argv, "p")) != -1) {
		if (c != 'p')
			return sh_err(sh, "usage: dump [-p] PATH HOSTFILE");
		preserve = 1;
	}
	if (argc - optind != 2)
		return sh_err(sh, "usage: dump [-p] PATH HOSTFILE");
	const char *path = argv[optind], *host = argv[optind + 1];
	if (sh_resolve(sh, path, &ino))
		return 1;
	int err = tux3_stat(sh->vol, ino, &st);
	if (err)
		return sh_volerr(sh, path, err);
	if (!S_ISREG(st.mode))
		return sh_err(sh, "%s: not a regular file", path);
	int fd = open(host, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return sh_err(sh, "%s: %s", host, strerror(errno));
	int host_failed = 0;
	int rc = copy_data(sh, ino, st.size, fd, host, &host_failed);
	struct rdump r = { .sh = sh, .fd = -1 };
	if (!rc && !host_failed && preserve) {
		struct host_obj h = { fd, AT_FDCWD, host, host, 0, 0 };
		restore_meta(&r, &h, ino, &st);
	}
	if (close(fd) < 0) {
		sh_warn(sh, "%s: write: %s", host, strerror(errno));
		host_failed = 1;
	}
	if (rc || host_failed)
		return 1;
	return rdump_finish(&r);
}
