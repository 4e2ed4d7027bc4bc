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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "debugfs.h"

struct linkmap {
	tux3_ino_t *inos;
	char **paths;
	size_t count, cap;
};

struct rdump {
	struct shell *sh;
	struct ancestry up;
	struct linkmap links;
	int warned;
	int failed;		/* library error: volume unreadable here */
};

static const char *linkmap_find(struct linkmap *l, tux3_ino_t ino)
{
	for (size_t i = 0; i < l->count; i++)
		if (l->inos[i] == ino)
			return l->paths[i];
	return NULL;
}

static void linkmap_add(struct linkmap *l, tux3_ino_t ino, const char *path)
{
	if (l->count == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 64;
		tux3_ino_t *a = realloc(l->inos, ncap * sizeof(*a));
		if (!a)
			return;
		l->inos = a;
		char **b = realloc(l->paths, ncap * sizeof(*b));
		if (!b)
			return;
		l->paths = b;
		l->cap = ncap;
	}
	l->paths[l->count] = strdup(path);
	if (l->paths[l->count])
		l->inos[l->count++] = ino;
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
	return 0;
}

/* Contents of a regular file into fd: extents only, so holes stay holes. */
static int copy_data(struct shell *sh, tux3_ino_t ino, uint64_t size, int fd,
		     const char *path, int *host_failed)
{
	struct tux3_statfs sfs;
	tux3_statfs(sh->vol, &sfs);
	struct data_copy d = { sh->vol, ino, fd, size, sfs.bsize, 0, 0 };
	int err = tux3_map_extents(sh->vol, ino, copy_extent, &d);
	if (err < 0 || d.err)
		return sh_volerr(sh, path, err < 0 ? err : d.err);
	if (d.host_errno || ftruncate(fd, (off_t)size) < 0) {
		errno = d.host_errno ? d.host_errno : errno;
		sh_warn(sh, "%s: write: %s", path, strerror(errno));
		*host_failed = 1;
	}
	return 0;
}

static int set_xattr(void *ctx, const char *name, const void *value,
		     unsigned size)
{
	void **pair = ctx;
	struct rdump *r = pair[0];
	const char *path = pair[1];
	if (lsetxattr(path, name, value, size, 0) < 0) {
		char what[300];
		snprintf(what, sizeof(what), "cannot set xattr %s", name);
		host_warn(r, path, what);
	}
	return 0;
}

static void restore_meta(struct rdump *r, const char *path, tux3_ino_t ino,
			 const struct tux3_stat *st)
{
	void *pair[2] = { r, (void *)path };
	if (lchown(path, st->uid, st->gid) < 0)
		host_warn(r, path, "cannot chown");
	int err = tux3_listxattr(r->sh->vol, ino, set_xattr, pair);
	if (err < 0) {
		sh_volerr(r->sh, path, err);
		r->failed = 1;
	}
	if (!S_ISLNK(st->mode) && chmod(path, st->mode & 07777) < 0)
		host_warn(r, path, "cannot chmod");
	struct timespec ts[2] = {
		{ st->mtime_ns / 1000000000, st->mtime_ns % 1000000000 },
		{ st->mtime_ns / 1000000000, st->mtime_ns % 1000000000 },
	};
	for (int i = 0; i < 2; i++)
		if (ts[i].tv_nsec < 0) {
			ts[i].tv_nsec += 1000000000;
			ts[i].tv_sec--;
		}
	if (utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) < 0)
		host_warn(r, path, "cannot set times");
}

static int rdump_tree(struct rdump *r, tux3_ino_t ino, const char *host,
		      unsigned depth, int is_top_root);

struct rd_children {
	char **names;
	tux3_ino_t *inos;
	size_t count, cap;
};

static int rd_collect(void *ctx, const char *name, unsigned len,
		      tux3_ino_t ino, unsigned type, uint64_t pos)
{
	struct rd_children *c = ctx;
	(void)type; (void)pos;
	if (c->count == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 32;
		char **a = realloc(c->names, ncap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		c->names = a;
		tux3_ino_t *b = realloc(c->inos, ncap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		c->inos = b;
		c->cap = ncap;
	}
	c->names[c->count] = strndup(name, len);
	if (!c->names[c->count])
		return -ENOMEM;
	c->inos[c->count++] = ino;
	return 0;
}

static int rdump_dir(struct rdump *r, tux3_ino_t ino, const char *host,
		     unsigned depth)
{
	struct rd_children ch = { 0 };
	int err = tux3_readdir(r->sh->vol, ino, rd_collect, &ch);
	if (err < 0) {
		sh_volerr(r->sh, host, err);
		r->failed = 1;
	}
	for (size_t i = 0; i < ch.count; i++) {
		char *sub = malloc(strlen(host) + strlen(ch.names[i]) + 2);
		if (sub) {
			sprintf(sub, "%s/%s", host, ch.names[i]);
			rdump_tree(r, ch.inos[i], sub, depth + 1, 0);
			free(sub);
		}
		free(ch.names[i]);
	}
	free(ch.names);
	free(ch.inos);
	return 0;
}

static int rdump_tree(struct rdump *r, tux3_ino_t ino, const char *host,
		      unsigned depth, int is_top_root)
{
	struct shell *sh = r->sh;
	struct tux3_stat st;
	int err = tux3_stat(sh->vol, ino, &st);
	if (err) {
		sh_volerr(sh, host, err);
		r->failed = 1;
		return 0;
	}
	if (S_ISDIR(st.mode) && ancestry_push(&r->up, ino)) {
		sh_err(sh, "%s: directory inode %" PRIu64 " is its own "
		       "ancestor, or nesting is too deep: not descending", host,
		       ino);
		r->failed = 1;
		return 0;
	}
	(void)depth;
	if (S_ISDIR(st.mode)) {
		if (mkdir(host, 0700) < 0 && !(errno == EEXIST && is_top_root)) {
			host_warn(r, host, "cannot mkdir");
			r->up.depth--;
			return 0;
		}
		rdump_dir(r, ino, host, depth);
		r->up.depth--;
		if (!is_top_root)
			restore_meta(r, host, ino, &st);
		return 0;
	}
	if (st.nlink > 1) {
		const char *first = linkmap_find(&r->links, ino);
		if (first) {
			if (link(first, host) < 0)
				host_warn(r, host, "cannot link");
			return 0;
		}
		linkmap_add(&r->links, ino, host);
	}
	if (S_ISREG(st.mode)) {
		int fd = open(host, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		int host_failed = 0;
		if (fd < 0) {
			host_warn(r, host, "cannot create");
			return 0;
		}
		if (copy_data(sh, ino, st.size, fd, host, &host_failed))
			r->failed = 1;
		if (host_failed)
			r->warned = 1;
		close(fd);
	} else if (S_ISLNK(st.mode)) {
		char target[65537];
		ssize_t n = tux3_readlink(sh->vol, ino, target, sizeof(target));
		if (n < 0) {
			sh_volerr(sh, host, (int)n);
			r->failed = 1;
			return 0;
		}
		if (symlink(target, host) < 0) {
			host_warn(r, host, "cannot create symlink");
			return 0;
		}
	} else if (S_ISFIFO(st.mode)) {
		if (mkfifo(host, 0600) < 0) {
			host_warn(r, host, "cannot create fifo");
			return 0;
		}
	} else if (S_ISCHR(st.mode) || S_ISBLK(st.mode) || S_ISSOCK(st.mode)) {
		dev_t dev = makedev(st.rdev_major, st.rdev_minor);
		if (mknod(host, (st.mode & S_IFMT) | 0600, dev) < 0) {
			host_warn(r, host, "cannot create device node");
			return 0;
		}
	} else {
		sh_err(sh, "%s: inode %" PRIu64 " has unknown type 0%o", host,
		       ino, st.mode & S_IFMT);
		r->failed = 1;
		return 0;
	}
	restore_meta(r, host, ino, &st);
	return 0;
}

static int rdump_finish(struct rdump *r)
{
	for (size_t i = 0; i < r->links.count; i++)
		free(r->links.paths[i]);
	free(r->links.paths);
	free(r->links.inos);
	return r->failed || r->warned;
}

int cmd_rdump(struct shell *sh, int argc, char **argv)
{
	static struct rdump r;
	memset(&r, 0, sizeof(r));
	r.sh = sh;
	tux3_ino_t ino;

	if (argc != 3)
		return sh_err(sh, "usage: rdump PATH HOSTDIR");
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	const char *path = argv[1], *dir = argv[2];
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return sh_err(sh, "%s: %s", dir, strerror(errno));
	if (ino == TUX3_ROOT_INO) {
		rdump_tree(&r, ino, dir, 0, 1);
	} else {
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		if (!*base || (base[0] == '<'))
			base = path;
		char *host = malloc(strlen(dir) + strlen(base) + 2);
		if (!host)
			return sh_err(sh, "out of memory");
		sprintf(host, "%s/%s", dir, base);
		rdump_tree(&r, ino, host, 0, 0);
		free(host);
	}
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
	close(fd);
	if (rc || host_failed)
		return 1;
	if (preserve) {
		static struct rdump r;
		memset(&r, 0, sizeof(r));
		r.sh = sh;
		restore_meta(&r, host, ino, &st);
		return rdump_finish(&r);
	}
	return 0;
}
