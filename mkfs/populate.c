/*
 * mkfs.tux3 -d ROOTDIR: copy a host directory tree into the volume just
 * made, through libtux3's write path.
 *
 * Like mke2fs -d: regular files with their data (holes kept: only the
 * regions lseek(SEEK_DATA/SEEK_HOLE) reports, and within them only the
 * blocks that are not all zeros, are written; the size is set after),
 * directories, symlinks (never followed), hard links (a second name of
 * a host inode, by st_dev/st_ino, becomes a link to the first one's
 * inode), character and block devices, fifos; sockets are skipped with
 * a warning.  Mode (with setuid, setgid, sticky), owner, mtime and ctime
 * to the nanosecond, and xattrs.  Mount points inside the tree are
 * crossed, as mke2fs does.
 *
 * Reproducibility: each directory's entries are taken in strcmp order,
 * depth first, so inode numbers and block placement depend only on the
 * tree.  A directory's times are set after its children are made (adding
 * an entry changes a directory's mtime and ctime), a file's after its
 * data and xattrs, a hard-linked inode's ctime again after each link.
 *
 * Cost: one lstat, one library call per name and one setattr per inode,
 * plus data.  Names of one host directory are unique and the volume's
 * directories start empty, so files, directories, devices, fifos and
 * symlinks are made with the library's bulk append (tux3_mknod_append,
 * tux3_symlink_append: no duplicate scan, the entry goes into the
 * directory's last block): linear in the number of entries.  Extra
 * hard-link names are appended the same way (tux3_link_append).
 *
 * The host side (lstat, open, small files' data, whether a file has
 * xattrs) is fetched ahead by helper threads (prefetch.c) while this
 * thread is in the library; the order of library calls is the same with
 * any number of helpers, so is the image.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include "populate.h"
#include "prefetch.h"

#define SYNC_EVERY 1000		/* objects per commit */
#define COPY_BUF (1u << 20)	/* bytes read at a time */
_Static_assert(COPY_BUF >= PF_DATA_MAX, "a small file is read in one piece");
#define MAX_DEPTH 4096		/* directory nesting we follow */

/* A host inode already copied, for hard links. */
struct link_ent {
	dev_t dev;
	ino_t ino;
	tux3_ino_t tino;	/* 0: empty slot */
};

struct ancestor {
	dev_t dev;
	ino_t ino;
};

struct pop {
	struct tux3_volume *vol;
	const struct populate_params *pp;
	struct populate_stats *stats;
	/* the host path of the entry being copied, for messages */
	char *path;
	size_t pathlen, pathcap;
	/* hard links */
	struct link_ent *links;
	size_t nlinks, linkcap;
	/* directories being copied, to refuse a loop (bind mounts) */
	struct ancestor up[MAX_DEPTH];
	unsigned depth;
	/* the source tree, read ahead by helper threads */
	struct prefetch *pf;
	/* data */
	uint8_t *buf;
	unsigned blocksize;
	unsigned since_sync;
	struct timespec last_progress;
	bool progress_shown;
};

/* ---- messages ---- */

static void progress_clear(struct pop *p)
{
	if (p->progress_shown) {
		fputs("\r\033[K", stderr);
		p->progress_shown = false;
	}
}

static void progress(struct pop *p, bool final)
{
	if (!p->pp->progress)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t ms = (now.tv_sec - p->last_progress.tv_sec) * 1000 +
		     (now.tv_nsec - p->last_progress.tv_nsec) / 1000000;
	if (!final && p->progress_shown && ms < 100)
		return;
	p->last_progress = now;
	fprintf(stderr, "\rpopulating: %" PRIu64 " files%s",
		p->stats->objects, final ? "\n" : "");
	fflush(stderr);
	p->progress_shown = !final;
}

static void __attribute__((format(printf, 2, 3)))
host_error(struct pop *p, const char *fmt, ...)
{
	va_list ap;
	progress_clear(p);
	fprintf(stderr, "%s: %s: ", p->pp->prog, p->path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void __attribute__((format(printf, 2, 3)))
warn(struct pop *p, const char *fmt, ...)
{
	va_list ap;
	p->stats->warnings++;	/* printed even with -q, as mke2fs does */
	progress_clear(p);
	fprintf(stderr, "%s: warning: %s: ", p->pp->prog, p->path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The library's account of a failure (block, inode, offset, reason),
 * with the errno's text when the reason does not already give it. */
static void error_text(struct pop *p, int err, char *text, size_t len)
{
	const struct tux3_error *e = tux3_last_error(p->vol);
	const char *why = strerror(-(e->err ? e->err : err));
	if (!e->err) {
		snprintf(text, len, "%s", why);
		return;
	}
	tux3_error_text(p->vol, text, len);
	size_t n = strlen(text);
	if (!strstr(text, why) && n + strlen(why) + 4 < len)
		snprintf(text + n, len - n, " (%s)", why);
}

/* A library call failed: the host path, what we were doing, and the
 * library's own account (block, inode, offset, reason). */
static int lib_error(struct pop *p, int err, const char *doing)
{
	char text[512];
	error_text(p, err, text, sizeof(text));
	host_error(p, "%s: %s", doing, text);
	return -1;
}

/* ---- the host path ---- */

static int path_push(struct pop *p, const char *name, size_t *saved)
{
	size_t n = strlen(name);
	*saved = p->pathlen;
	if (p->pathlen + n + 2 > p->pathcap) {
		size_t cap = (p->pathlen + n + 2) * 2;
		char *s = realloc(p->path, cap);
		if (!s)
			return -1;
		p->path = s;
		p->pathcap = cap;
	}
	if (p->pathlen && p->path[p->pathlen - 1] != '/')
		p->path[p->pathlen++] = '/';
	memcpy(p->path + p->pathlen, name, n + 1);
	p->pathlen += n;
	return 0;
}

static void path_pop(struct pop *p, size_t saved)
{
	p->pathlen = saved;
	p->path[saved] = 0;
}

/* ---- hard links: (st_dev, st_ino) -> volume inode ---- */

static size_t link_hash(dev_t dev, ino_t ino, size_t cap)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)dev * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 29;
	return (size_t)h & (cap - 1);
}

static tux3_ino_t link_find(struct pop *p, dev_t dev, ino_t ino)
{
	if (!p->linkcap)
		return 0;
	for (size_t i = link_hash(dev, ino, p->linkcap);;
	     i = (i + 1) & (p->linkcap - 1)) {
		struct link_ent *e = &p->links[i];
		if (!e->tino)
			return 0;
		if (e->dev == dev && e->ino == ino)
			return e->tino;
	}
}

static int link_add(struct pop *p, dev_t dev, ino_t ino, tux3_ino_t tino)
{
	if ((p->nlinks + 1) * 2 > p->linkcap) {
		size_t cap = p->linkcap ? p->linkcap * 2 : 256;
		struct link_ent *n = calloc(cap, sizeof(*n));
		if (!n)
			return -1;
		for (size_t i = 0; i < p->linkcap; i++) {
			struct link_ent *e = &p->links[i];
			if (!e->tino)
				continue;
			size_t j = link_hash(e->dev, e->ino, cap);
			while (n[j].tino)
				j = (j + 1) & (cap - 1);
			n[j] = *e;
		}
		free(p->links);
		p->links = n;
		p->linkcap = cap;
	}
	size_t i = link_hash(dev, ino, p->linkcap);
	while (p->links[i].tino)
		i = (i + 1) & (p->linkcap - 1);
	p->links[i] = (struct link_ent){ dev, ino, tino };
	p->nlinks++;
	return 0;
}

/* ---- commits ---- */

static int counted(struct pop *p)
{
	p->stats->objects++;
	progress(p, false);
	if (++p->since_sync < SYNC_EVERY)
		return 0;
	p->since_sync = 0;
	tux3_clear_error(p->vol);
	int err = tux3_sync(p->vol);
	return err ? lib_error(p, err, "cannot commit") : 0;
}

/* ---- xattrs ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Copy the host entry's xattrs (fd >= 0: through the open file, else by
 * path without following a symlink), in name order.  A name the host
 * will not give us, or the library will not take, is a warning. */
static int copy_xattrs(struct pop *p, int fd, int dfd, const char *entry,
		       tux3_ino_t ino)
{
	ssize_t len;
	char *list = NULL;
	int ret = 0;
	/* no *at() call for xattrs: past PATH_MAX, the entry in its
	 * directory through procfs */
	char proc[64 + NAME_MAX];
	const char *path = p->path;
	if (fd < 0 && p->pathlen >= PATH_MAX) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d/%s", dfd, entry);
		path = proc;
	}

	for (;;) {
		len = fd >= 0 ? flistxattr(fd, NULL, 0) :
			       llistxattr(path, NULL, 0);
		if (len <= 0)
			break;
		char *n = realloc(list, (size_t)len);
		if (!n) {
			free(list);
			host_error(p, "out of memory");
			return -1;
		}
		list = n;
		len = fd >= 0 ? flistxattr(fd, list, (size_t)len) :
			       llistxattr(path, list, (size_t)len);
		if (len >= 0 || errno != ERANGE)
			break;
	}
	if (len < 0) {
		if (errno != ENOTSUP)
			warn(p, "cannot list xattrs: %s", strerror(errno));
		free(list);
		return 0;
	}
	if (len == 0) {
		free(list);
		return 0;
	}

	size_t count = 0;
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(list + i) + 1)
		count++;
	char **names = malloc(count * sizeof(*names));
	void *value = NULL;
	size_t valcap = 0;
	if (!names) {
		free(list);
		host_error(p, "out of memory");
		return -1;
	}
	count = 0;
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(list + i) + 1)
		if (list[i])
			names[count++] = list + i;
	qsort(names, count, sizeof(*names), cmp_str);

	for (size_t k = 0; k < count && !ret; k++) {
		const char *name = names[k];
		ssize_t size = -1;
		/* learn the size, then read; again if it grew meanwhile */
		for (int tries = 0; tries < 4; tries++) {
			ssize_t want = fd >= 0 ? fgetxattr(fd, name, NULL, 0) :
					lgetxattr(path, name, NULL, 0);
			if (want < 0)
				break;
			if ((size_t)want >= valcap) {
				void *nv = realloc(value, (size_t)want + 1);
				if (!nv) {
					host_error(p, "out of memory");
					ret = -1;
					break;
				}
				value = nv;
				valcap = (size_t)want + 1;
			}
			size = fd >= 0 ? fgetxattr(fd, name, value, valcap) :
					lgetxattr(path, name, value, valcap);
			if (size >= 0 || errno != ERANGE)
				break;
		}
		if (ret)
			break;
		if (size < 0) {
			warn(p, "cannot read xattr %s: %s", name,
			     strerror(errno));
			continue;
		}
		tux3_clear_error(p->vol);
		int err = tux3_setxattr(p->vol, ino, name, value,
					(size_t)size, 0);
		if (err == -EIO || err == -ENOMEM || err == -EUCLEAN ||
		    err == -EROFS) {
			char doing[300];
			snprintf(doing, sizeof(doing), "cannot set xattr %s",
				 name);
			ret = lib_error(p, err, doing);
		} else if (err) {
			char text[512];
			error_text(p, err, text, sizeof(text));
			warn(p, "xattr %s not copied: %s", name, text);
		}
	}
	free(value);
	free(names);
	free(list);
	return ret;
}

/* ---- attributes ---- */

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static int set_attrs(struct pop *p, tux3_ino_t ino, const struct stat *st,
		     unsigned extra)
{
	struct tux3_setattr sa = {
		.valid = TUX3_SET_MTIME | TUX3_SET_CTIME | extra,
		.mode = st->st_mode & 07777,
		.uid = st->st_uid,
		.gid = st->st_gid,
		.size = (uint64_t)st->st_size,
		.mtime_ns = ts_ns(&st->st_mtim),
		.ctime_ns = ts_ns(&st->st_ctim),
	};
	tux3_clear_error(p->vol);
	int err = tux3_setattr(p->vol, ino, &sa);
	return err ? lib_error(p, err, "cannot set attributes") : 0;
}

/* ---- file data ---- */

static bool all_zero(const uint8_t *b, size_t n)
{
	return !n || (!b[0] && !memcmp(b, b + 1, n - 1));
}

/* Write [pos, pos + n) of the buffer, leaving out the volume blocks
 * (or pieces of them) that are all zeros: they read back as zeros
 * whether written or left a hole. */
static int write_nonzero(struct pop *p, tux3_ino_t ino, const uint8_t *b,
			 size_t n, uint64_t pos)
{
	size_t i = 0, run = 0, bs = p->blocksize;
	while (i < n) {
		size_t piece = bs - (size_t)((pos + i) & (bs - 1));
		if (piece > n - i)
			piece = n - i;
		bool zero = all_zero(b + i, piece);
		if (!zero)
			run += piece;
		if (run && (zero || i + piece == n)) {
			size_t start = zero ? i - run : i + piece - run;
			tux3_clear_error(p->vol);
			ssize_t w = tux3_write(p->vol, ino, b + start, run,
					       pos + start);
			if (w < 0)
				return lib_error(p, (int)w, "cannot write");
			p->stats->bytes += run;
			run = 0;
		}
		i += piece;
	}
	return 0;
}

static int copy_range(struct pop *p, int fd, tux3_ino_t ino, uint64_t from,
		      uint64_t to)
{
	uint64_t bs = p->blocksize;
	while (from < to) {
		/* end reads on volume block boundaries where we can */
		uint64_t end = (from + COPY_BUF) & ~(bs - 1);
		if (end > to || end <= from)
			end = to;
		ssize_t n = pread(fd, p->buf, (size_t)(end - from),
				  (off_t)from);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			host_error(p, "read error at offset %" PRIu64 ": %s",
				   from, strerror(errno));
			return -1;
		}
		if (n == 0)
			break;	/* shrank while we copy: the rest reads 0 */
		if (write_nonzero(p, ino, p->buf, (size_t)n, from))
			return -1;
		from += (uint64_t)n;
	}
	return 0;
}

/* The data regions of the file, in order; without SEEK_DATA support
 * the whole file is one region.  A file of at most PF_DATA_MAX bytes
 * is read whole, as a helper reads it (prefetch.c): its holes read as
 * zeros, which write_nonzero leaves out as it leaves out holes, and two
 * lseeks would cost it more than the read. */
static int copy_data(struct pop *p, int fd, tux3_ino_t ino, uint64_t size)
{
	uint64_t pos = 0;
	if (size <= PF_DATA_MAX)
		return copy_range(p, fd, ino, 0, size);
	while (pos < size) {
		off_t data = lseek(fd, (off_t)pos, SEEK_DATA);
		if (data < 0) {
			if (errno == ENXIO)
				return 0;	/* a hole to the end */
			if (errno == EINVAL || errno == ENOTSUP)
				return copy_range(p, fd, ino, pos, size);
			host_error(p, "lseek(SEEK_DATA): %s", strerror(errno));
			return -1;
		}
		if ((uint64_t)data >= size)
			return 0;
		off_t hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0 || (uint64_t)hole > size)
			hole = (off_t)size;
		if (copy_range(p, fd, ino, (uint64_t)data, (uint64_t)hole))
			return -1;
		pos = (uint64_t)hole;
	}
	return 0;
}

/* ---- one entry ---- */

/* The fetched entry's open file, else one opened here (kept in the
 * entry, which closes it when released). */
static int open_regular(struct pop *p, int dfd, const char *name,
			struct pf_entry *e)
{
	int err;
	if (e->fd >= 0)
		return e->fd;
	e->fd = pf_open_regular(dfd, name, &e->st, &err);
	if (e->fd < 0) {
		if (err == PF_CHANGED)
			host_error(p, "changed while being copied");
		else
			host_error(p, "cannot open: %s", strerror(err));
	}
	return e->fd;
}

static int copy_dir(struct pop *p, int dfd, tux3_ino_t dino,
		    const struct stat *dst);

/* Every type but a directory: create, data, xattrs, attributes.  Kept
 * out of copy_entry so that the recursion through directories carries
 * only their small frames, not this one's buffers, at every level of a
 * deep tree. */
static __attribute__((noinline)) int copy_nondir(struct pop *p, int dfd,
		const char *name, struct pf_entry *e, tux3_ino_t dino)
{
	const struct stat *st = &e->st;
	size_t len = strlen(name);
	tux3_ino_t ino = 0;
	int err, fd = -1;

	if (S_ISSOCK(st->st_mode)) {
		warn(p, "socket skipped");
		return 0;
	}
	if (!S_ISREG(st->st_mode) && !S_ISLNK(st->st_mode) &&
	    !S_ISCHR(st->st_mode) && !S_ISBLK(st->st_mode) &&
	    !S_ISFIFO(st->st_mode)) {
		warn(p, "unknown file type %07o skipped",
		     (unsigned)st->st_mode);
		return 0;
	}
	if (p->pp->skip_self && st->st_dev == p->pp->skip_dev &&
	    st->st_ino == p->pp->skip_ino) {
		warn(p, "the volume being made is inside the source tree: "
		     "skipped");
		return 0;
	}

	/* a further name of a host inode already copied */
	if (st->st_nlink > 1) {
		tux3_ino_t first = link_find(p, st->st_dev, st->st_ino);
		if (first) {
			tux3_clear_error(p->vol);
			err = tux3_link_append(p->vol, first, dino, name, len);
			if (err)
				return lib_error(p, err, "cannot link");
			/* linking set the inode's ctime to now */
			struct tux3_setattr sa = {
				.valid = TUX3_SET_CTIME,
				.ctime_ns = ts_ns(&st->st_ctim),
			};
			tux3_clear_error(p->vol);
			err = tux3_setattr(p->vol, first, &sa);
			if (err)
				return lib_error(p, err,
						 "cannot set attributes");
			return counted(p);
		}
	}

	tux3_clear_error(p->vol);
	if (S_ISREG(st->st_mode)) {
		if ((fd = open_regular(p, dfd, name, e)) < 0)
			return -1;
		err = tux3_mknod_append(p->vol, dino, name, len,
				        S_IFREG | (st->st_mode & 07777),
				        st->st_uid, st->st_gid, 0, 0, &ino);
		if (err)
			return lib_error(p, err, "cannot create");
		if (e->data == PF_DATA_READY) {
			if (e->len && write_nonzero(p, ino, e->buf, e->len, 0))
				return -1;
		} else if (copy_data(p, fd, ino, (uint64_t)st->st_size)) {
			return -1;
		}
	} else if (S_ISLNK(st->st_mode)) {
		size_t cap = st->st_size > 0 ? (size_t)st->st_size + 1 : 256;
		char *target = NULL;
		ssize_t n;
		for (;;) {
			char *t = realloc(target, cap);
			if (!t) {
				free(target);
				host_error(p, "out of memory");
				return -1;
			}
			target = t;
			n = readlinkat(dfd, name, target, cap);
			if (n < 0 || (size_t)n < cap)
				break;
			cap *= 2;
		}
		if (n < 0) {
			host_error(p, "cannot read the symlink: %s",
				   strerror(errno));
			free(target);
			return -1;
		}
		target[n] = 0;
		err = tux3_symlink_append(p->vol, dino, name, len, target,
					  st->st_uid, st->st_gid, &ino);
		free(target);
		if (err)
			return lib_error(p, err, "cannot create the symlink");
	} else {
		unsigned major = 0, minor = 0;
		if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) {
			major = major(st->st_rdev);
			minor = minor(st->st_rdev);
		}
		err = tux3_mknod_append(p->vol, dino, name, len,
				        (st->st_mode & S_IFMT) |
				        (st->st_mode & 07777), st->st_uid,
				        st->st_gid, major, minor, &ino);
		if (err)
			return lib_error(p, err, "cannot create");
	}

	/* (the file stays open until the entry is released) */
	if (!(fd >= 0 && e->no_xattrs) && copy_xattrs(p, fd, dfd, name, ino))
		return -1;
	if (set_attrs(p, ino, st, S_ISREG(st->st_mode) ? TUX3_SET_SIZE : 0))
		return -1;
	if (st->st_nlink > 1 && link_add(p, st->st_dev, st->st_ino, ino)) {
		host_error(p, "out of memory");
		return -1;
	}
	return counted(p);
}

static int copy_entry(struct pop *p, int dfd, const char *name,
		      struct pf_entry *e, tux3_ino_t dino)
{
	/* a helper's failed lstat is tried again here, for the message */
	if (!e->stat_ok && fstatat(dfd, name, &e->st, AT_SYMLINK_NOFOLLOW)) {
		host_error(p, "%s", strerror(errno));
		return -1;
	}
	struct stat st = e->st;
	if (!S_ISDIR(st.st_mode))
		return copy_nondir(p, dfd, name, e, dino);

	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			O_CLOEXEC);
	struct stat now;
	if (fd < 0) {
		host_error(p, "cannot open the directory: %s",
			   strerror(errno));
		return -1;
	}
	if (fstat(fd, &now) || now.st_ino != st.st_ino ||
	    now.st_dev != st.st_dev) {
		host_error(p, "changed while being copied");
		close(fd);
		return -1;
	}
	tux3_ino_t ino;
	tux3_clear_error(p->vol);
	int err = tux3_mknod_append(p->vol, dino, name, strlen(name),
				 S_IFDIR | (st.st_mode & 07777), st.st_uid,
				 st.st_gid, 0, 0, &ino);
	if (err) {
		close(fd);
		return lib_error(p, err, "cannot make the directory");
	}
	if (counted(p)) {
		close(fd);
		return -1;
	}
	/* copy_dir closes fd and sets the directory's times last */
	return copy_dir(p, fd, ino, &st);
}

/* ---- directories ---- */

struct names {
	char **v;
	size_t count, cap;
};

static void names_free(struct names *n)
{
	for (size_t i = 0; i < n->count; i++)
		free(n->v[i]);
	free(n->v);
}

/* The entries of an open directory, sorted by strcmp. */
static int read_names(struct pop *p, int fd, struct names *out)
{
	int dup_fd = dup(fd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct names n = { 0 };
	if (!d) {
		host_error(p, "cannot read the directory: %s",
			   strerror(errno));
		if (dup_fd >= 0)
			close(dup_fd);
		return -1;
	}
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			if (errno) {
				host_error(p, "cannot read the directory: %s",
					   strerror(errno));
				goto fail;
			}
			break;
		}
		const char *s = de->d_name;
		if (s[0] == '.' && (!s[1] || (s[1] == '.' && !s[2])))
			continue;
		if (n.count == n.cap) {
			size_t cap = n.cap ? n.cap * 2 : 64;
			char **v = realloc(n.v, cap * sizeof(*v));
			if (!v)
				goto nomem;
			n.v = v;
			n.cap = cap;
		}
		if (!(n.v[n.count] = pf_name_dup(s, de->d_type)))
			goto nomem;
		n.count++;
	}
	closedir(d);
	if (n.count)
		qsort(n.v, n.count, sizeof(*n.v), cmp_str);
	*out = n;
	return 0;
nomem:
	host_error(p, "out of memory");
fail:
	closedir(d);
	names_free(&n);
	return -1;
}

/* Copy the children of the host directory open on fd into dino, then
 * its xattrs and times.  Closes fd. */
static int copy_dir(struct pop *p, int fd, tux3_ino_t dino,
		    const struct stat *dst)
{
	struct names n = { 0 };
	struct pf_dir *dir = NULL;
	int ret = -1;

	for (unsigned i = 0; i < p->depth; i++)
		if (p->up[i].dev == dst->st_dev && p->up[i].ino == dst->st_ino) {
			host_error(p, "directory loop: this is also an "
				   "ancestor (a bind mount?)");
			close(fd);
			return -1;
		}
	if (p->depth == MAX_DEPTH) {
		host_error(p, "nested more than %d directories deep",
			   MAX_DEPTH);
		close(fd);
		return -1;
	}
	p->up[p->depth++] = (struct ancestor){ dst->st_dev, dst->st_ino };

	if (read_names(p, fd, &n))
		goto out;
	if (!(dir = pf_dir_begin(p->pf, fd, n.v, n.count))) {
		host_error(p, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n.count; i++) {
		size_t saved;
		if (path_push(p, n.v[i], &saved)) {
			host_error(p, "out of memory");
			goto out;
		}
		int err = copy_entry(p, fd, n.v[i], pf_take(dir, i), dino);
		pf_release(dir, i);
		path_pop(p, saved);
		if (err)
			goto out;
	}
	if (copy_xattrs(p, fd, -1, NULL, dino))
		goto out;
	/* the root also takes ROOTDIR's mode and owner (mkdir gave the
	 * others theirs) */
	if (set_attrs(p, dino, dst, dino == TUX3_ROOT_INO ?
		      TUX3_SET_MODE | TUX3_SET_UID | TUX3_SET_GID : 0))
		goto out;
	ret = 0;
out:
	p->depth--;
	if (dir)
		pf_dir_end(dir);	/* before the names it fetches go */
	names_free(&n);
	close(fd);
	return ret;
}

/* Deep trees keep one descriptor open per level: raise the soft limit. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int populate(struct tux3_volume *vol, const char *rootdir,
	     const struct populate_params *pp, struct populate_stats *stats)
{
	struct tux3_super_info si;
	struct pop p = { .vol = vol, .pp = pp, .stats = stats };
	size_t saved;
	int ret = -1;

	memset(stats, 0, sizeof(*stats));
	tux3_super_info(vol, &si);
	p.blocksize = si.blocksize;
	raise_nofile();
	if (path_push(&p, rootdir, &saved)) {
		fprintf(stderr, "%s: out of memory\n", pp->prog);
		return -1;
	}
	p.buf = malloc(COPY_BUF);
	p.pf = pf_start(pp->threads < 0 ? pf_default_threads() :
			(unsigned)pp->threads);
	if (!p.buf || !p.pf) {
		host_error(&p, "out of memory");
		goto out;
	}
	int fd = open(rootdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		host_error(&p, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	if (copy_dir(&p, fd, TUX3_ROOT_INO, &st))
		goto out;
	tux3_clear_error(vol);
	int err = tux3_sync(vol);
	if (err) {
		lib_error(&p, err, "cannot commit");
		goto out;
	}
	progress(&p, true);
	ret = 0;
out:
	progress_clear(&p);
	pf_stop(p.pf);
	free(p.buf);
	free(p.links);
	free(p.path);
	return ret;
}
