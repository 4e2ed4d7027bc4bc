/*
 * manifest: the subtree as TSV rows in the oracle manifest format
 *   path type mode uid gid size nlink sha256|target|rdev xattrs
 * sorted bytewise by path; straight from the library's read API, and
 * streamed: each row is printed as it is made (see manifest_children).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <openssl/evp.h>
#include "debugfs.h"

char manifest_type(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return 'f';
	case S_IFDIR: return 'd';
	case S_IFLNK: return 'l';
	case S_IFIFO: return 'p';
	case S_IFCHR: return 'c';
	case S_IFBLK: return 'b';
	case S_IFSOCK: return 's';
	}
	return '?';
}

int file_sha256(struct tux3_volume *vol, tux3_ino_t ino, uint64_t size,
		char hex[65])
{
	static unsigned char buf[1 << 20];
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	int err = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(ctx);
		return -ENOMEM;
	}
	for (uint64_t pos = 0; pos < size;) {
		ssize_t n = tux3_read(vol, ino, buf, sizeof(buf), pos);
		if (n <= 0) {
			err = n < 0 ? (int)n : -EIO;
			break;
		}
		EVP_DigestUpdate(ctx, buf, (size_t)n);
		pos += (uint64_t)n;
	}
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	EVP_MD_CTX_free(ctx);
	for (unsigned i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	hex[64] = 0;
	return err;
}

/* A growable string */
struct sbuf {
	char *s;
	size_t len, cap;
};

static int sb_add(struct sbuf *b, const char *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t ncap = (b->len + n + 1) * 2;
		char *s = realloc(b->s, ncap);
		if (!s)
			return -ENOMEM;
		b->s = s;
		b->cap = ncap;
	}
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = 0;
	return 0;
}

static int sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n < sizeof(tmp))
		return sb_add(b, tmp, (size_t)n);
	char *big = malloc((size_t)n + 1);
	if (!big)
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	int err = sb_add(b, big, (size_t)n);
	free(big);
	return err;
}

struct xattr_item {
	char *name;
	unsigned char *value;
	unsigned size;
};

struct xattr_list {
	struct xattr_item *items;
	unsigned count, cap;
};

static int collect_xattr(void *ctx, const char *name, const void *value,
			 unsigned size)
{
	struct xattr_list *l = ctx;
	if (l->count == l->cap) {
		unsigned ncap = l->cap ? l->cap * 2 : 8;
		void *n = realloc(l->items, ncap * sizeof(*l->items));
		if (!n)
			return -ENOMEM;
		l->items = n;
		l->cap = ncap;
	}
	struct xattr_item *it = &l->items[l->count];
	it->name = strdup(name);
	it->value = malloc(size ? size : 1);
	if (!it->name || !it->value) {
		free(it->name);
		free(it->value);
		return -ENOMEM;
	}
	memcpy(it->value, value, size);
	it->size = size;
	l->count++;
	return 0;
}

static int cmp_xattr(const void *a, const void *b)
{
	return strcmp(((const struct xattr_item *)a)->name,
		      ((const struct xattr_item *)b)->name);
}

static void xattr_list_free(struct xattr_list *l)
{
	for (unsigned i = 0; i < l->count; i++) {
		free(l->items[i].name);
		free(l->items[i].value);
	}
	free(l->items);
}

struct manifest {
	struct shell *sh;
	struct ancestry up;
	int failed;
};

/* One row; recursion into directories is done by the caller. */
static int manifest_row(struct manifest *m, const char *path, tux3_ino_t ino,
			struct tux3_stat *st)
{
	struct tux3_volume *vol = m->sh->vol;
	struct sbuf row = { 0 };
	struct xattr_list xl = { 0 };
	int err = tux3_stat(vol, ino, st);
	if (err)
		return err;
	err = sb_printf(&row, "%s\t%c\t%04o\t%u\t%u\t%" PRIu64 "\t%u\t", path,
			manifest_type(st->mode), st->mode & 07777, st->uid,
			st->gid, st->size, st->nlink);
	if (err)
		goto out;
	if (S_ISREG(st->mode)) {
		char hex[65];
		if ((err = file_sha256(vol, ino, st->size, hex)))
			goto out;
		err = sb_add(&row, hex, 64);
	} else if (S_ISLNK(st->mode)) {
		char target[65537];
		ssize_t n = tux3_readlink(vol, ino, target, sizeof(target));
		if (n < 0) {
			err = (int)n;
			goto out;
		}
		err = sb_add(&row, target, (size_t)n);
	} else if (S_ISCHR(st->mode) || S_ISBLK(st->mode)) {
		err = sb_printf(&row, "%u:%u", st->rdev_major, st->rdev_minor);
	} else {
		err = sb_add(&row, "-", 1);
	}
	if (!err)
		err = sb_add(&row, "\t", 1);
	if (!err)
		err = tux3_listxattr(vol, ino, collect_xattr, &xl);
	if (err)
		goto out;
	if (!xl.count) {
		err = sb_add(&row, "-", 1);
	} else {
		qsort(xl.items, xl.count, sizeof(*xl.items), cmp_xattr);
		for (unsigned i = 0; i < xl.count && !err; i++) {
			err = sb_printf(&row, "%s%s=", i ? "," : "",
					xl.items[i].name);
			for (unsigned j = 0; j < xl.items[i].size && !err; j++)
				err = sb_printf(&row, "%02x", xl.items[i].value[j]);
		}
	}
	if (!err)
		fprintf(m->sh->out, "%s\n", row.s);
out:
	xattr_list_free(&xl);
	free(row.s);
	return err;
}

/* A directory's children: their names back to back in one arena (no
 * allocation per name: a directory of a million entries is listed in
 * about 40 bytes an entry). */
struct child {
	size_t name;		/* offset in names */
	tux3_ino_t ino;
};
struct children {
	struct child *v;
	size_t count, cap;
	struct sbuf names;	/* each name with its terminator */
};

static int collect_child(void *ctx, const char *name, unsigned len,
			 tux3_ino_t ino, unsigned type, uint64_t pos)
{
	struct children *c = ctx;
	(void)type; (void)pos;
	if (c->count == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 32;
		void *n = realloc(c->v, ncap * sizeof(*c->v));
		if (!n)
			return -ENOMEM;
		c->v = n;
		c->cap = ncap;
	}
	size_t at = c->names.len;
	if (sb_add(&c->names, name, len))
		return -ENOMEM;
	c->names.len++;		/* keep the terminator sb_add wrote */
	c->v[c->count++] = (struct child){ at, ino };
	return 0;
}

static const char *child_name(const struct children *c, size_t i)
{
	return c->names.s + c->v[i].name;
}

static void children_free(struct children *c)
{
	free(c->v);
	free(c->names.s);
}

int ancestry_push(struct ancestry *a, tux3_ino_t ino)
{
	for (unsigned i = 0; i < a->depth; i++)
		if (a->ino[i] == ino)
			return 1;
	if (a->depth == MAX_NEST)
		return 1;
	a->ino[a->depth++] = ino;
	return 0;
}

/*
 * Rows go out as they are made, in the bytewise order of their paths,
 * so nothing but the names of the directories being listed is held.
 * Within a directory, a child's row sorts by its name and the rows below
 * a child directory by its name and a '/': "a.c" (0x2e) comes between
 * "a" and "a/x" (0x2f), "a0" after them.  Each child is two items of
 * one sorted list: its row, then its subtree (child number * 2, + 1 for
 * the subtree).
 */
typedef uint32_t item_t;

/* Byte at of an item's key: the name, then "/" for a subtree item; -1
 * past the end (below every byte, as strcmp's terminator). */
static int key_byte(const char *name, size_t len, bool subtree, size_t at)
{
	if (at < len)
		return (unsigned char)name[at];
	return at == len && subtree ? '/' : -1;
}

/* strcmp of the two items' keys, without making the keys */
static int cmp_item(const void *a, const void *b, void *ctx)
{
	const struct children *c = ctx;
	item_t x = *(const item_t *)a, y = *(const item_t *)b;
	const char *p = child_name(c, x >> 1), *q = child_name(c, y >> 1);
	size_t lp = strlen(p), lq = strlen(q), i = 0;
	while (i < lp && i < lq && p[i] == q[i])
		i++;
	for (;; i++) {
		int u = key_byte(p, lp, x & 1, i), v = key_byte(q, lq, y & 1, i);
		if (u != v || u < 0)
			return u - v;
	}
}

static int manifest_children(struct manifest *m, const char *path,
			     tux3_ino_t ino);

static char *child_path(const char *path, const char *name)
{
	size_t plen = strlen(path);
	char *sub = malloc(plen + strlen(name) + 2);
	if (sub)
		sprintf(sub, "%s%s%s", path, path[plen - 1] == '/' ? "" : "/",
			name);
	return sub;
}

/* One row; 1 when it is a directory to descend into. */
static int manifest_one(struct manifest *m, const char *path, tux3_ino_t ino)
{
	struct tux3_stat st;
	int err = manifest_row(m, path, ino, &st);
	if (err) {
		sh_volerr(m->sh, path, err);
		m->failed = 1;
		return err == -ENOMEM ? err : 0;
	}
	return S_ISDIR(st.mode) ? 1 : 0;
}

static int manifest_subtree(struct manifest *m, const char *path,
			    tux3_ino_t ino)
{
	if (ancestry_push(&m->up, ino)) {
		sh_err(m->sh, "%s: directory inode %" PRIu64 " is its own "
		       "ancestor, or nesting is too deep: not descending", path,
		       ino);
		m->failed = 1;
		return 0;
	}
	int err = manifest_children(m, path, ino);
	m->up.depth--;
	return err;
}

static int manifest_children(struct manifest *m, const char *path,
			     tux3_ino_t ino)
{
	struct children ch = { 0 };
	item_t *items = NULL;
	uint8_t *isdir = NULL;
	int err = tux3_readdir(m->sh->vol, ino, collect_child, &ch);
	if (err) {
		sh_volerr(m->sh, path, err);
		m->failed = 1;
	}
	size_t n = ch.count;
	if (n > UINT32_MAX / 2) {
		err = -ENOMEM;	/* more names than a directory can hold */
		goto out;
	}
	items = malloc((2 * n + 1) * sizeof(*items));
	isdir = calloc(n / 8 + 1, 1);
	if (!items || !isdir) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < 2 * n; i++)
		items[i] = (item_t)i;
	qsort_r(items, 2 * n, sizeof(*items), cmp_item, &ch);
	err = 0;
	for (size_t k = 0; k < 2 * n && err != -ENOMEM; k++) {
		size_t child = items[k] >> 1;
		bool subtree = items[k] & 1;
		if (subtree && !(isdir[child / 8] & (1u << (child % 8))))
			continue;
		char *sub = child_path(path, child_name(&ch, child));
		if (!sub) {
			err = -ENOMEM;
			break;
		}
		if (!subtree) {
			int r = manifest_one(m, sub, ch.v[child].ino);
			if (r > 0)
				isdir[child / 8] |= (uint8_t)(1u << (child % 8));
			err = r < 0 ? r : 0;
		} else {
			err = manifest_subtree(m, sub, ch.v[child].ino);
		}
		free(sub);
	}
out:
	free(isdir);
	free(items);
	children_free(&ch);
	return err == -ENOMEM ? err : 0;
}

int cmd_manifest(struct shell *sh, int argc, char **argv)
{
	static struct manifest m;
	memset(&m, 0, sizeof(m));
	m.sh = sh;
	tux3_ino_t ino;
	char path[8300];

	if (argc > 2)
		return sh_err(sh, "usage: manifest [PATH]");
	const char *arg = argc == 2 ? argv[1] : "/";
	if (sh_resolve(sh, arg, &ino))
		return 1;
	if (arg[0] == '@') {
		/* paths inside the version: comparable with another's */
		if (join_path(sh, arg, path, sizeof(path)))
			return sh_err(sh, "%s: path too long", arg);
	} else if (arg[0] == '/') {
		snprintf(path, sizeof(path), "%s", arg);
	} else {
		snprintf(path, sizeof(path), "%s%s%s", sh->cwdpath,
			 strcmp(sh->cwdpath, "/") ? "/" : "", arg);
	}
	size_t plen = strlen(path);
	while (plen > 1 && path[plen - 1] == '/')
		path[--plen] = 0;
	fprintf(sh->out, "#path\ttype\tmode\tuid\tgid\tsize\tnlink\t"
		"sha256|target|rdev\txattrs\n");
	int err = manifest_one(&m, path, ino);
	if (err > 0)
		err = manifest_subtree(&m, path, ino);
	if (err == -ENOMEM)
		sh_err(sh, "manifest: out of memory");
	return m.failed || err;
}
