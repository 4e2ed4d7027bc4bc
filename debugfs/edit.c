/*
 * The editing commands of tux3debug (group "Editing", volumes opened with
 * -w) and the block-ownership check.  When each change is committed is
 * decided by shell_execute() (one delta per command) or by the batch
 * (see tux3debug.c); 'delta' and 'unify' commit on request.
 *
 * New objects are owned by 0:0 (as debugfs does), whatever user runs the
 * tool, so that images come out the same; 'write' copies the owner of its
 * host file, and chown sets one.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>
#include "debugfs.h"
#include "tux3_fields.h"

#define NAME_MAX_TUX3 255

/* Split PATH at its last '/' into a parent directory (resolved as any
 * PATH: relative to the current directory, or <inum>) and a final name
 * of 1..255 bytes, neither "." nor "..".  Trailing slashes are dropped. */
static int split_parent(struct shell *sh, const char *arg, tux3_ino_t *dir,
			const char **name, size_t *len)
{
	static char buf[8300];
	size_t n = strlen(arg);
	if (n >= sizeof(buf))
		return sh_err(sh, "%s: path too long", arg);
	memcpy(buf, arg, n + 1);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = 0;
	char *slash = strrchr(buf, '/');
	if (buf[0] == '@' && !slash)
		return sh_err(sh, "%s: the root directory of a version, not a "
			      "name that can be created or removed (a name "
			      "starting with @ is ./%s)", arg, buf);
	const char *base = slash ? slash + 1 : buf;
	size_t blen = strlen(base);
	if (!blen || !strcmp(base, ".") || !strcmp(base, ".."))
		return sh_err(sh, "%s: not a name that can be created or "
			      "removed", arg);
	if (blen > NAME_MAX_TUX3)
		return sh_err(sh, "%s: %s", arg, strerror(ENAMETOOLONG));
	const char *parent = ".";
	if (slash == buf)
		parent = "/";
	else if (slash) {
		*slash = 0;
		parent = buf;
	}
	size_t plen = strlen(parent);
	if (plen > 2 && parent[0] == '<' && parent[plen - 1] == '>') {
		if (sh_resolve(sh, parent, dir))
			return 1;
	} else {
		/* as sh_resolve, but errors name the whole PATH */
		char full[8300];
		if (sh_path(sh, parent, arg, full, sizeof(full)))
			return 1;
		int err = tux3_lookup_path(sh->vol, full, dir);
		if (err)
			return sh_volerr(sh, arg, err);
	}
	*name = base;
	*len = blen;
	return 0;
}

static int64_t now_ns(struct shell *sh)
{
	if (sh->has_time)
		return sh->time_ns;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int parse_u64(const char *s, int base, uint64_t *v)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, base);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

/* ---- write ---- */

static int copy_range(struct shell *sh, int fd, tux3_ino_t ino,
		      const char *path, off_t from, off_t to)
{
	static char buf[1 << 20];
	while (from < to) {
		size_t want = (size_t)(to - from) < sizeof(buf) ?
			(size_t)(to - from) : sizeof(buf);
		ssize_t got = pread(fd, buf, want, from);
		if (got < 0)
			return sh_err(sh, "%s: read: %s", path,
				      strerror(errno));
		if (!got)
			break;	/* the host file shrank meanwhile */
		for (ssize_t done = 0; done < got;) {
			ssize_t n = tux3_write(sh->vol, ino, buf + done,
					       (size_t)(got - done),
					       (uint64_t)(from + done));
			if (n < 0)
				return sh_volerr(sh, path, (int)n);
			if (!n)
				return sh_err(sh, "%s: short write", path);
			done += n;
		}
		from += got;
	}
	return 0;
}

/* Copy the data regions only, so that holes stay holes.  Without
 * SEEK_DATA support on the host the whole file is copied. */
static int copy_data(struct shell *sh, int fd, tux3_ino_t ino,
		     const char *path, off_t size)
{
	off_t pos = 0;
	while (pos < size) {
		off_t data = lseek(fd, pos, SEEK_DATA);
		if (data < 0) {
			if (errno == ENXIO)
				return 0;	/* only a hole is left */
			if (errno == EINVAL || errno == EOPNOTSUPP)
				return copy_range(sh, fd, ino, path, pos, size);
			return sh_err(sh, "%s: lseek: %s", path,
				      strerror(errno));
		}
		off_t hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			return sh_err(sh, "%s: lseek: %s", path,
				      strerror(errno));
		if (hole > size)
			hole = size;
		if (copy_range(sh, fd, ino, path, data, hole))
			return 1;
		pos = hole;
	}
	return 0;
}

int cmd_write(struct shell *sh, int argc, char **argv)
{
	int force = 0, c;
	optind = 0;
	while ((c = getopt(argc, argv, "f")) != -1) {
		if (c != 'f')
			return sh_err(sh, "usage: write [-f] HOSTFILE PATH");
		force = 1;
	}
	if (argc - optind != 2)
		return sh_err(sh, "usage: write [-f] HOSTFILE PATH");
	const char *host = argv[optind], *path = argv[optind + 1];
	tux3_ino_t dir, ino;
	const char *name;
	size_t len;
	struct stat st;
	int err, failed = 1;

	int fd = open(host, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return sh_err(sh, "%s: %s", host, strerror(errno));
	if (fstat(fd, &st)) {
		sh_err(sh, "%s: %s", host, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		sh_err(sh, "%s: not a regular file", host);
		goto out;
	}
	if (split_parent(sh, path, &dir, &name, &len))
		goto out;
	if (force) {
		err = tux3_lookup(sh->vol, dir, name, len, &ino);
		if (!err)
			err = tux3_unlink(sh->vol, dir, name, len);
		if (err == -ENOENT)
			tux3_clear_error(sh->vol);
		else if (err) {
			sh_volerr(sh, path, err);
			goto out;
		}
	}
	err = tux3_create(sh->vol, dir, name, len, st.st_mode & 07777,
			  st.st_uid, st.st_gid, &ino);
	if (err) {
		sh_volerr(sh, path, err);
		goto out;
	}
	if (copy_data(sh, fd, ino, path, st.st_size))
		goto out;
	if ((err = tux3_truncate(sh->vol, ino, (uint64_t)st.st_size))) {
		sh_volerr(sh, path, err);
		goto out;
	}
	struct tux3_setattr sa = {
		.valid = TUX3_SET_MTIME,
		.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
			st.st_mtim.tv_nsec,
	};
	if ((err = tux3_setattr(sh->vol, ino, &sa))) {
		sh_volerr(sh, path, err);
		goto out;
	}
	failed = 0;
out:
	close(fd);
	return failed;
}

/* ---- namespace ---- */

int cmd_mkdir(struct shell *sh, int argc, char **argv)
{
	tux3_ino_t dir, ino;
	const char *name;
	size_t len;
	if (argc != 2)
		return sh_err(sh, "usage: mkdir PATH");
	if (split_parent(sh, argv[1], &dir, &name, &len))
		return 1;
	int err = tux3_mkdir(sh->vol, dir, name, len, 0755, 0, 0, &ino);
	return err ? sh_volerr(sh, argv[1], err) : 0;
}

int cmd_rm(struct shell *sh, int argc, char **argv)
{
	tux3_ino_t dir;
	const char *name;
	size_t len;
	if (argc != 2)
		return sh_err(sh, "usage: rm PATH");
	if (split_parent(sh, argv[1], &dir, &name, &len))
		return 1;
	int err = tux3_unlink(sh->vol, dir, name, len);
	return err ? sh_volerr(sh, argv[1], err) : 0;
}

/* mv [-n|-x] OLD NEW: rename (-n: never replace, -x: exchange). */
int cmd_mv(struct shell *sh, int argc, char **argv)
{
	tux3_ino_t odir, ndir;
	const char *oname, *nname;
	size_t olen, nlen;
	unsigned flags = 0;
	int c;
	optind = 0;
	while ((c = getopt(argc, argv, "nx")) != -1) {
		if (c == 'n')
			flags = TUX3_RENAME_NOREPLACE;
		else if (c == 'x')
			flags = TUX3_RENAME_EXCHANGE;
		else
			return sh_err(sh, "usage: mv [-n|-x] OLD NEW");
	}
	if (argc - optind != 2)
		return sh_err(sh, "usage: mv [-n|-x] OLD NEW");
	/* split_parent's name lives in its buffer until the next call */
	char old[256];
	if (split_parent(sh, argv[optind], &odir, &oname, &olen))
		return 1;
	memcpy(old, oname, olen);
	oname = old;
	if (split_parent(sh, argv[optind + 1], &ndir, &nname, &nlen))
		return 1;
	int err = tux3_rename(sh->vol, odir, oname, olen, ndir, nname, nlen,
			      flags);
	return err ? sh_volerr(sh, argv[optind], err) : 0;
}

/* setxattr PATH NAME VALUE: VALUE as text, or 0xHEX for bytes. */
int cmd_setxattr(struct shell *sh, int argc, char **argv)
{
	tux3_ino_t ino;
	unsigned char buf[65536];
	size_t len;
	if (argc != 4)
		return sh_err(sh, "usage: setxattr PATH NAME VALUE");
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	const char *v = argv[3];
	if (!strncmp(v, "0x", 2)) {
		size_t hex = strlen(v + 2);
		if (hex % 2 || hex / 2 > sizeof(buf))
			return sh_err(sh, "setxattr: bad hex value");
		for (len = 0; len < hex / 2; len++) {
			unsigned byte;
			if (sscanf(v + 2 + 2 * len, "%2x", &byte) != 1)
				return sh_err(sh, "setxattr: bad hex value");
			buf[len] = (unsigned char)byte;
		}
	} else {
		len = strlen(v);
		if (len > sizeof(buf))
			return sh_err(sh, "setxattr: value too long");
		memcpy(buf, v, len);
	}
	int err = tux3_setxattr(sh->vol, ino, argv[2], buf, len, 0);
	return err ? sh_volerr(sh, argv[1], err) : 0;
}

int cmd_rmxattr(struct shell *sh, int argc, char **argv)
{
	tux3_ino_t ino;
	if (argc != 3)
		return sh_err(sh, "usage: rmxattr PATH NAME");
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	int err = tux3_removexattr(sh->vol, ino, argv[2]);
	return err ? sh_volerr(sh, argv[1], err) : 0;
}

int cmd_rmdir(struct shell *sh, int argc, char **argv)
{
	tux3_ino_t dir;
	const char *name;
	size_t len;
	if (argc != 2)
		return sh_err(sh, "usage: rmdir PATH");
	if (split_parent(sh, argv[1], &dir, &name, &len))
		return 1;
	int err = tux3_rmdir(sh->vol, dir, name, len);
	return err ? sh_volerr(sh, argv[1], err) : 0;
}

int cmd_ln(struct shell *sh, int argc, char **argv)
{
	int symbolic = 0, c, err;
	tux3_ino_t dir, ino;
	const char *name;
	size_t len;
	optind = 0;
	while ((c = getopt(argc, argv, "s")) != -1) {
		if (c != 's')
			return sh_err(sh, "usage: ln [-s] TARGET PATH");
		symbolic = 1;
	}
	if (argc - optind != 2)
		return sh_err(sh, "usage: ln [-s] TARGET PATH");
	const char *target = argv[optind], *path = argv[optind + 1];
	if (symbolic) {
		if (!*target)
			return sh_err(sh, "%s: empty symlink target", path);
		if (split_parent(sh, path, &dir, &name, &len))
			return 1;
		err = tux3_symlink(sh->vol, dir, name, len, target, 0, 0, &ino);
	} else {
		if (sh_resolve(sh, target, &ino) ||
		    split_parent(sh, path, &dir, &name, &len))
			return 1;
		err = tux3_link(sh->vol, ino, dir, name, len);
	}
	return err ? sh_volerr(sh, path, err) : 0;
}

int cmd_mknod(struct shell *sh, int argc, char **argv)
{
	static const char usage[] = "usage: mknod PATH p|c|b|s [MAJOR MINOR]";
	tux3_ino_t dir, ino;
	const char *name;
	size_t len;
	uint64_t major = 0, minor = 0;
	uint32_t type;

	if (argc < 3 || strlen(argv[2]) != 1)
		return sh_err(sh, "%s", usage);
	switch (argv[2][0]) {
	case 'p': type = S_IFIFO; break;
	case 's': type = S_IFSOCK; break;
	case 'c': type = S_IFCHR; break;
	case 'b': type = S_IFBLK; break;
	default: return sh_err(sh, "%s", usage);
	}
	int dev = type == S_IFCHR || type == S_IFBLK;
	if (argc != (dev ? 5 : 3))
		return sh_err(sh, "%s", usage);
	if (dev && (parse_u64(argv[3], 0, &major) || major > 0xfff ||
		    parse_u64(argv[4], 0, &minor) || minor > 0xfffff))
		return sh_err(sh, "%s: bad device number %s %s (major 0..4095, "
			      "minor 0..1048575)", argv[1], argv[3], argv[4]);
	if (split_parent(sh, argv[1], &dir, &name, &len))
		return 1;
	int err = tux3_mknod(sh->vol, dir, name, len, type | 0644, 0, 0,
			     (unsigned)major, (unsigned)minor, &ino);
	return err ? sh_volerr(sh, argv[1], err) : 0;
}

/* ---- attributes ---- */

int cmd_truncate(struct shell *sh, int argc, char **argv)
{
	tux3_ino_t ino;
	uint64_t size;
	if (argc != 3)
		return sh_err(sh, "usage: truncate PATH SIZE");
	if (parse_u64(argv[2], 10, &size) || size > (uint64_t)INT64_MAX)
		return sh_err(sh, "%s: bad size (bytes, in decimal)", argv[2]);
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	int err = tux3_truncate(sh->vol, ino, size);
	return err ? sh_volerr(sh, argv[1], err) : 0;
}

int cmd_chmod(struct shell *sh, int argc, char **argv)
{
	tux3_ino_t ino;
	uint64_t mode;
	if (argc != 3)
		return sh_err(sh, "usage: chmod MODE PATH");
	if (parse_u64(argv[1], 8, &mode) || mode > 07777)
		return sh_err(sh, "%s: bad mode (octal, 0 to 7777)", argv[1]);
	if (sh_resolve(sh, argv[2], &ino))
		return 1;
	struct tux3_setattr sa = { .valid = TUX3_SET_MODE,
				   .mode = (uint32_t)mode };
	int err = tux3_setattr(sh->vol, ino, &sa);
	return err ? sh_volerr(sh, argv[2], err) : 0;
}

int cmd_chown(struct shell *sh, int argc, char **argv)
{
	tux3_ino_t ino;
	uint64_t uid = 0, gid = 0;
	struct tux3_setattr sa = { 0 };
	if (argc != 3)
		return sh_err(sh, "usage: chown UID:GID PATH");
	char *colon = strchr(argv[1], ':');
	if (colon)
		*colon = 0;
	int bad = !colon;
	if (!bad && *argv[1]) {
		bad |= parse_u64(argv[1], 10, &uid) || uid > UINT32_MAX;
		sa.valid |= TUX3_SET_UID;
	}
	if (!bad && colon[1]) {
		bad |= parse_u64(colon + 1, 10, &gid) || gid > UINT32_MAX;
		sa.valid |= TUX3_SET_GID;
	}
	if (colon)
		*colon = ':';
	if (bad || !sa.valid)
		return sh_err(sh, "%s: bad owner (UID:GID, UID: or :GID, in "
			      "decimal)", argv[1]);
	if (sh_resolve(sh, argv[2], &ino))
		return 1;
	sa.uid = (uint32_t)uid;
	sa.gid = (uint32_t)gid;
	int err = tux3_setattr(sh->vol, ino, &sa);
	return err ? sh_volerr(sh, argv[2], err) : 0;
}

int cmd_touch(struct shell *sh, int argc, char **argv)
{
	tux3_ino_t dir, ino;
	const char *name;
	size_t len;
	int err;
	if (argc != 2)
		return sh_err(sh, "usage: touch PATH");
	const char *path = argv[1];
	size_t plen = strlen(path);
	if (plen > 2 && path[0] == '<' && path[plen - 1] == '>') {
		if (sh_resolve(sh, path, &ino))
			return 1;
	} else {
		if (split_parent(sh, path, &dir, &name, &len))
			return 1;
		err = tux3_lookup(sh->vol, dir, name, len, &ino);
		if (err == -ENOENT) {
			tux3_clear_error(sh->vol);
			err = tux3_create(sh->vol, dir, name, len, 0644, 0, 0,
					  &ino);
			return err ? sh_volerr(sh, path, err) : 0;
		}
		if (err)
			return sh_volerr(sh, path, err);
	}
	struct tux3_setattr sa = { .valid = TUX3_SET_MTIME,
				   .mtime_ns = now_ns(sh) };
	err = tux3_setattr(sh->vol, ino, &sa);
	return err ? sh_volerr(sh, path, err) : 0;
}

/* ---- cp ---- */

struct cp_extent {
	uint64_t logical, count;
};

struct cp_extents {
	struct cp_extent *v;
	size_t count, cap;
};

static int cp_collect(void *ctx, uint64_t logical, tux3_block_t physical,
		      uint64_t count, uint32_t version)
{
	struct cp_extents *e = ctx;
	(void)version;
	if (!physical)
		return 0;
	if (e->count == e->cap) {
		size_t ncap = e->cap ? e->cap * 2 : 16;
		void *n = realloc(e->v, ncap * sizeof(*e->v));
		if (!n)
			return -ENOMEM;
		e->v = n;
		e->cap = ncap;
	}
	e->v[e->count++] = (struct cp_extent){ logical, count };
	return 0;
}

/* cp copies between two versions too (@TAG/... paths): what it reads is
 * read in the source's version, what it writes written in the target's. */
struct cp_versions {
	char src[SH_VERSION_MAX], dst[SH_VERSION_MAX];
};

/* The source's xattrs, gathered in its version, then set in the
 * target's. */
struct cp_xattrs {
	struct { char *name; void *value; unsigned size; } *v;
	size_t count, cap;
};

static int cp_xattr(void *ctx, const char *name, const void *value,
		    unsigned size)
{
	struct cp_xattrs *x = ctx;
	if (x->count == x->cap) {
		size_t ncap = x->cap ? x->cap * 2 : 8;
		void *n = realloc(x->v, ncap * sizeof(*x->v));
		if (!n)
			return -ENOMEM;
		x->v = n;
		x->cap = ncap;
	}
	char *copy = strdup(name);
	void *val = malloc(size ? size : 1);
	if (!copy || !val) {
		free(copy);
		free(val);
		return -ENOMEM;
	}
	memcpy(val, value, size);
	x->v[x->count].name = copy;
	x->v[x->count].value = val;
	x->v[x->count++].size = size;
	return 0;
}

static int cp_xattrs(struct shell *sh, tux3_ino_t from, tux3_ino_t to,
		     const struct cp_versions *v)
{
	struct cp_xattrs x = { 0 };
	int err = sh_select(sh, v->src);
	if (!err)
		err = tux3_listxattr(sh->vol, from, cp_xattr, &x);
	if (!err)
		err = sh_select(sh, v->dst);
	for (size_t i = 0; i < x.count; i++) {
		if (!err)
			err = tux3_setxattr(sh->vol, to, x.v[i].name,
					    x.v[i].value, x.v[i].size, 0);
		free(x.v[i].name);
		free(x.v[i].value);
	}
	free(x.v);
	return err;
}

/* The data of a regular file: its mapped extents only (holes stay
 * holes), gathered first, then the size. */
static int cp_data(struct shell *sh, tux3_ino_t from, tux3_ino_t to,
		   uint64_t size, const char *path, const struct cp_versions *v)
{
	static char buf[1 << 20];
	struct cp_extents e = { 0 };
	unsigned bs = tux3_block_size(sh->vol);
	int err = sh_select(sh, v->src);
	if (!err)
		err = tux3_map_extents(sh->vol, from, cp_collect, &e);
	for (size_t i = 0; !err && i < e.count; i++) {
		uint64_t pos = e.v[i].logical * bs;
		uint64_t end = (e.v[i].logical + e.v[i].count) * bs;
		if (end > size)
			end = size;
		while (!err && pos < end) {
			size_t want = end - pos < sizeof(buf) ?
				(size_t)(end - pos) : sizeof(buf);
			if ((err = sh_select(sh, v->src)))
				break;
			ssize_t n = tux3_read(sh->vol, from, buf, want, pos);
			if (n <= 0) {
				err = n < 0 ? (int)n : -EIO;
				break;
			}
			if ((err = sh_select(sh, v->dst)))
				break;
			for (ssize_t done = 0; done < n;) {
				ssize_t w = tux3_write(sh->vol, to, buf + done,
						       (size_t)(n - done),
						       pos + (uint64_t)done);
				if (w <= 0) {
					err = w < 0 ? (int)w : -EIO;
					break;
				}
				done += w;
			}
			pos += (uint64_t)n;
		}
	}
	free(e.v);
	if (!err)
		err = sh_select(sh, v->dst);
	if (!err)
		err = tux3_truncate(sh->vol, to, size);
	return err ? sh_volerr(sh, path, err) : 0;
}

/* cp [-p] SOURCE TARGET: a regular file, symlink, fifo, socket or
 * device node; into TARGET/name when TARGET is a directory.  SOURCE and
 * TARGET may be in two versions. */
int cmd_cp(struct shell *sh, int argc, char **argv)
{
	static const char usage[] = "usage: cp [-p] SOURCE TARGET";
	struct cp_versions v;
	int preserve = 0, c, err;
	optind = 0;
	while ((c = getopt(argc, argv, "p")) != -1) {
		if (c != 'p')
			return sh_err(sh, "%s", usage);
		preserve = 1;
	}
	if (argc - optind != 2)
		return sh_err(sh, "%s", usage);
	const char *src = argv[optind], *dst = argv[optind + 1];
	struct tux3_stat st, dt;
	tux3_ino_t from, to, dir;
	if (sh_resolve(sh, src, &from))
		return 1;
	if ((err = tux3_stat(sh->vol, from, &st)))
		return sh_volerr(sh, src, err);
	if (S_ISDIR(st.mode))
		return sh_err(sh, "%s: is a directory (cp copies one file)",
			      src);
	snprintf(v.src, sizeof(v.src), "%s", tux3_version_selected(sh->vol));
	sh->path_chosen = 0;	/* TARGET: a version of its own */
	/* TARGET a directory: copy into it under the source's name */
	char target[8300];
	snprintf(target, sizeof(target), "%s", dst);
	tux3_ino_t existing;
	char full[8300];
	if (!join_path(sh, dst, full, sizeof(full)) &&
	    !tux3_lookup_path(sh->vol, full, &existing) &&
	    !tux3_stat(sh->vol, existing, &dt) && S_ISDIR(dt.mode)) {
		const char *base = strrchr(src, '/');
		base = base ? base + 1 : src;
		if (!*base || base[0] == '<')
			return sh_err(sh, "%s: name the new file in %s", src,
				      dst);
		snprintf(target, sizeof(target), "%s%s%s", dst,
			 dst[strlen(dst) - 1] == '/' ? "" : "/", base);
	}
	tux3_clear_error(sh->vol);
	const char *name;
	size_t len;
	if (split_parent(sh, target, &dir, &name, &len))
		return 1;
	snprintf(v.dst, sizeof(v.dst), "%s", tux3_version_selected(sh->vol));
	uint32_t uid = preserve ? st.uid : 0, gid = preserve ? st.gid : 0;
	if (S_ISLNK(st.mode)) {
		static char link[65537];
		ssize_t n = (err = sh_select(sh, v.src)) ? err :
			tux3_readlink(sh->vol, from, link, sizeof(link));
		if (n < 0)
			return sh_volerr(sh, src, (int)n);
		err = sh_select(sh, v.dst);
		if (!err)
			err = tux3_symlink(sh->vol, dir, name, len, link, uid,
					   gid, &to);
	} else if (S_ISREG(st.mode)) {
		err = tux3_create(sh->vol, dir, name, len, st.mode & 07777,
				  uid, gid, &to);
	} else {
		err = tux3_mknod(sh->vol, dir, name, len, st.mode, uid, gid,
				 st.rdev_major, st.rdev_minor, &to);
	}
	if (err)
		return sh_volerr(sh, target, err);
	if (S_ISREG(st.mode) && cp_data(sh, from, to, st.size, target, &v))
		return 1;
	if (preserve && st.xattr_count &&
	    (err = cp_xattrs(sh, from, to, &v)))
		return sh_volerr(sh, target, err);
	if ((err = sh_select(sh, v.dst)))
		return sh_volerr(sh, target, err);
	struct tux3_setattr sa = { .valid = TUX3_SET_MODE,
				   .mode = st.mode & 07777 };
	if (preserve) {
		sa.valid |= TUX3_SET_MTIME;
		sa.mtime_ns = st.mtime_ns;
	}
	if (!S_ISLNK(st.mode) || preserve) {
		if ((err = tux3_setattr(sh->vol, to, &sa)))
			return sh_volerr(sh, target, err);
	}
	return 0;
}

/* ---- identity: label and UUID (the extension record) ---- */

int cmd_set_label(struct shell *sh, int argc, char **argv)
{
	if (argc != 2)
		return sh_err(sh, "usage: set_label LABEL");
	if (strlen(argv[1]) > TUX3_LABEL_MAX)
		return sh_err(sh, "set_label: a label of %zu bytes is longer "
			      "than %d", strlen(argv[1]), TUX3_LABEL_MAX);
	int err = tux3_set_identity(sh->vol, argv[1], NULL);
	return err ? sh_volerr(sh, "set_label", err) : 0;
}

int cmd_set_uuid(struct shell *sh, int argc, char **argv)
{
	uint8_t uuid[16];
	if (argc != 2)
		return sh_err(sh, "usage: set_uuid UUID|random|time|clear");
	if (!strcmp(argv[1], "random"))
		uuid_generate_random(uuid);
	else if (!strcmp(argv[1], "time"))
		uuid_generate_time(uuid);
	else if (!strcmp(argv[1], "clear") || !strcmp(argv[1], "null"))
		memset(uuid, 0, sizeof(uuid));
	else if (uuid_parse(argv[1], uuid))
		return sh_err(sh, "set_uuid: '%s' is not a UUID (8-4-4-4-12 "
			      "hex digits, random, time or clear)", argv[1]);
	int err = tux3_set_identity(sh->vol, NULL, uuid);
	return err ? sh_volerr(sh, "set_uuid", err) : 0;
}

/* ---- commits ---- */

int cmd_delta(struct shell *sh, int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return sh_err(sh, "usage: delta");
	return sh_commit(sh);
}

int cmd_unify(struct shell *sh, int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return sh_err(sh, "usage: unify");
	int err = tux3_unify(sh->vol);
	if (err)
		return sh_volerr(sh, "unify", err);
	sh->dirty = 0;
	return 0;
}

/* ---- check ---- */

static void check_problem(void *ctx, uint64_t block, uint64_t count,
			  enum tux3_block_problem what)
{
	struct shell *sh = ctx;
	static const char *const text[] = {
		[TUX3_BLOCK_LEAKED] = "leaked",
		[TUX3_BLOCK_FREE_IN_USE] = "free but in use",
		[TUX3_BLOCK_SHARED] = "shared",
		[TUX3_BLOCK_OUTSIDE] = "outside the volume",
		[TUX3_BLOCK_UNREADABLE] = "unreadable",
	};
	const char *t = (unsigned)what < sizeof(text) / sizeof(text[0]) &&
		text[what] ? text[what] : "unknown problem";
	if (count > 1)
		fprintf(sh->out, "block %" PRIu64 "-%" PRIu64 ": %s\n", block,
			block + count - 1, t);
	else
		fprintf(sh->out, "block %" PRIu64 ": %s\n", block, t);
}

static void ns_problem(void *ctx, enum tux3_ns_problem what, uint64_t inum,
		       uint64_t dir, uint64_t have, uint64_t want)
{
	struct shell *sh = ctx;
	switch (what) {
	case TUX3_NS_DANGLING:
		fprintf(sh->out, "inode %" PRIu64 ": named in directory %"
			PRIu64 " but does not exist\n", inum, dir);
		break;
	case TUX3_NS_TYPE:
		fprintf(sh->out, "inode %" PRIu64 ": entry in directory %"
			PRIu64 " has type %" PRIu64 ", the inode is type %"
			PRIu64 "\n", inum, dir, have, want);
		break;
	case TUX3_NS_DIR_TWICE:
		fprintf(sh->out, "inode %" PRIu64 ": directory named again in "
			"directory %" PRIu64 "\n", inum, dir);
		break;
	case TUX3_NS_UNREACHABLE:
		fprintf(sh->out, "inode %" PRIu64 ": no name reaches it (links %"
			PRIu64 ")\n", inum, have);
		break;
	case TUX3_NS_NLINK:
		fprintf(sh->out, "inode %" PRIu64 ": link count %" PRIu64
			", should be %" PRIu64 "\n", inum, have, want);
		break;
	case TUX3_NS_UNREADABLE:
		fprintf(sh->out, "inode %" PRIu64 ": directory unreadable\n",
			inum);
		break;
	case TUX3_NS_NO_ROOT:
		fprintf(sh->out, "inode %" PRIu64 ": root directory missing\n",
			inum);
		break;
	case TUX3_NS_ENTRY_BAD:
		fprintf(sh->out, "directory %" PRIu64 " block %" PRIu64
			": damaged entry at byte %" PRIu64 ": %s\n", dir, want,
			have, tux3_last_error(sh->vol)->what);
		break;
	}
}

/* Block ownership, then the namespace (links, types, reachability). */
int cmd_check(struct shell *sh, int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return sh_err(sh, "usage: check");
	int n = tux3_check_alloc(sh->vol, check_problem, sh);
	if (n < 0)
		return sh_volerr(sh, "check", n);
	int m = tux3_check_namespace(sh->vol, ns_problem, sh);
	if (m < 0)
		return sh_volerr(sh, "check", m);
	n += m;
	fprintf(sh->out, "%d problem%s\n", n, n == 1 ? "" : "s");
	return n ? 1 : 0;
}
