/*
 * One inode compared in two versions (tux3_snapshot_diff): what each
 * version reads of it through the read API (its stat, xattrs, data map,
 * entries or target, with the version selected), then what differs.
 * Data is compared by its map, not its bytes: two versions read the same
 * block only through the same element (each block has one owner), so a
 * physical block that differs is a block one of them wrote.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "internal.h"

struct diff_xattr {
	char *name;
	uint8_t *value;
	unsigned size;
};

struct diff_run {
	uint64_t logical, physical, count;
};

struct diff_side {
	int exists;
	struct tux3_stat st;
	struct diff_xattr *x;
	size_t nx, capx;
	struct tux3_diff_entry *e;	/* ino_a: the inode the name has */
	size_t ne, cape;
	struct diff_run *r;
	size_t nr, capr;
	char *target;
};

static void side_free(struct diff_side *s)
{
	for (size_t i = 0; i < s->nx; i++) {
		free(s->x[i].name);
		free(s->x[i].value);
	}
	for (size_t i = 0; i < s->ne; i++)
		free((char *)s->e[i].name);
	free(s->x);
	free(s->e);
	free(s->r);
	free(s->target);
	memset(s, 0, sizeof(*s));
}

static int add_xattr(void *ctx, const char *name, const void *value,
		     unsigned size)
{
	struct diff_side *s = ctx;
	if (array_grow((void **)&s->x, &s->capx, s->nx, sizeof(*s->x)))
		return -ENOMEM;
	struct diff_xattr *x = &s->x[s->nx];
	x->name = strdup(name);
	x->value = malloc(size ? size : 1);
	if (!x->name || !x->value) {
		free(x->name);
		free(x->value);
		return -ENOMEM;
	}
	memcpy(x->value, value, size);
	x->size = size;
	s->nx++;
	return 0;
}

static int add_entry(void *ctx, const char *name, unsigned len,
		     tux3_ino_t ino, unsigned type, uint64_t pos)
{
	struct diff_side *s = ctx;
	(void)type; (void)pos;
	if (array_grow((void **)&s->e, &s->cape, s->ne, sizeof(*s->e)))
		return -ENOMEM;
	char *n = strndup(name, len);
	if (!n)
		return -ENOMEM;
	s->e[s->ne++] = (struct tux3_diff_entry){ n, ino, 0 };
	return 0;
}

static int add_run(void *ctx, uint64_t logical, tux3_block_t physical,
		   uint64_t count, uint32_t version)
{
	struct diff_side *s = ctx;
	(void)version;
	if (!physical || !count)
		return 0;
	if (array_grow((void **)&s->r, &s->capr, s->nr, sizeof(*s->r)))
		return -ENOMEM;
	s->r[s->nr++] = (struct diff_run){ logical, physical, count };
	return 0;
}

static int xattr_cmp(const void *a, const void *b)
{
	return strcmp(((const struct diff_xattr *)a)->name,
		      ((const struct diff_xattr *)b)->name);
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tux3_diff_entry *)a)->name,
		      ((const struct tux3_diff_entry *)b)->name);
}

/* The inode's target (a symlink), xattrs, entries or data map. */
static int side_contents(struct tux3_volume *vol, tux3_ino_t ino,
			 struct diff_side *s)
{
	int err = tux3_listxattr(vol, ino, add_xattr, s);
	if (!err && s->nx)
		qsort(s->x, s->nx, sizeof(*s->x), xattr_cmp);
	if (err)
		return err;
	if (S_ISDIR(s->st.mode)) {
		err = tux3_readdir(vol, ino, add_entry, s);
		if (!err && s->ne)
			qsort(s->e, s->ne, sizeof(*s->e), entry_cmp);
	} else if (S_ISREG(s->st.mode)) {
		err = tux3_map_extents(vol, ino, add_run, s);
	} else if (S_ISLNK(s->st.mode)) {
		size_t cap = (size_t)s->st.size + 1;
		s->target = malloc(cap);
		ssize_t n = s->target ? tux3_readlink(vol, ino, s->target,
						      cap) : -ENOMEM;
		err = n < 0 ? (int)n : 0;
	}
	return err;
}

/* What version tag reads of the inode (tag 0: the live version). */
static int side_read(struct tux3_volume *vol, tux3_ino_t ino, uint32_t tag,
		     struct diff_side *s)
{
	vol->vtag = tag;
	int err = tux3_stat(vol, ino, &s->st);
	if (err == -ENOENT) {
		tux3_clear_error(vol);
		return 0;
	}
	s->exists = !err;
	return err ? err : side_contents(vol, ino, s);
}

/* The constant stretch of a map from pos: its length and block (0 a
 * hole); *i follows pos through the sorted runs. */
static uint64_t map_at(const struct diff_side *s, size_t *i, uint64_t pos,
		       uint64_t *phys)
{
	while (*i < s->nr && s->r[*i].logical + s->r[*i].count <= pos)
		(*i)++;
	*phys = 0;
	if (*i == s->nr)
		return UINT64_MAX - pos;
	const struct diff_run *r = &s->r[*i];
	if (r->logical > pos)
		return r->logical - pos;
	*phys = r->physical + (pos - r->logical);
	return r->logical + r->count - pos;
}

static uint64_t map_end(const struct diff_side *s)
{
	return s->nr ? s->r[s->nr - 1].logical + s->r[s->nr - 1].count : 0;
}

static int add_range(struct diff_item *it, uint64_t block, uint64_t count)
{
	struct tux3_diff_range *last = it->d.nranges ?
		&it->ranges[it->d.nranges - 1] : NULL;
	if (last && last->block + last->count == block) {
		last->count += count;
		return 0;
	}
	size_t n = it->d.nranges;
	if (array_grow((void **)&it->ranges, &it->capr, n, sizeof(*it->ranges)))
		return -ENOMEM;
	it->ranges[it->d.nranges++] = (struct tux3_diff_range){ block, count };
	return 0;
}

/* The logical blocks the two maps send to different blocks. */
static int diff_maps(const struct diff_side *a, const struct diff_side *b,
		     struct diff_item *it)
{
	uint64_t end = map_end(a) > map_end(b) ? map_end(a) : map_end(b);
	size_t i = 0, j = 0;
	for (uint64_t pos = 0; pos < end;) {
		uint64_t pa, pb;
		uint64_t la = map_at(a, &i, pos, &pa);
		uint64_t lb = map_at(b, &j, pos, &pb);
		uint64_t len = la < lb ? la : lb;
		if (len > end - pos)
			len = end - pos;
		if (pa != pb && add_range(it, pos, len))
			return -ENOMEM;
		pos += len;
	}
	return 0;
}

static int add_name(struct diff_item *it, const char *name)
{
	size_t n = it->d.nxattrs;
	if (array_grow((void **)&it->xattrs, &it->capx, n, sizeof(*it->xattrs)))
		return -ENOMEM;
	if (!(it->xattrs[n] = strdup(name)))
		return -ENOMEM;
	it->d.nxattrs++;
	return 0;
}

static int diff_xattrs(const struct diff_side *a, const struct diff_side *b,
		       struct diff_item *it)
{
	size_t i = 0, j = 0;
	while (i < a->nx || j < b->nx) {
		int c = i == a->nx ? 1 : j == b->nx ? -1 :
			strcmp(a->x[i].name, b->x[j].name);
		const char *name = c <= 0 ? a->x[i].name : b->x[j].name;
		bool same = !c && a->x[i].size == b->x[j].size &&
			    !memcmp(a->x[i].value, b->x[j].value,
				    a->x[i].size);
		if (!same && add_name(it, name))
			return -ENOMEM;
		i += c <= 0;
		j += c >= 0;
	}
	return 0;
}

static int add_dentry(struct diff_item *it, const char *name,
		      tux3_ino_t ino_a, tux3_ino_t ino_b)
{
	size_t n = it->d.nentries;
	if (array_grow((void **)&it->entries, &it->cape, n,
		      sizeof(*it->entries)))
		return -ENOMEM;
	char *copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	it->entries[n] = (struct tux3_diff_entry){ copy, ino_a, ino_b };
	it->d.nentries++;
	return 0;
}

static int diff_entries(const struct diff_side *a, const struct diff_side *b,
			struct diff_item *it)
{
	size_t i = 0, j = 0;
	while (i < a->ne || j < b->ne) {
		int c = i == a->ne ? 1 : j == b->ne ? -1 :
			strcmp(a->e[i].name, b->e[j].name);
		tux3_ino_t ia = c <= 0 ? a->e[i].ino_a : 0;
		tux3_ino_t ib = c >= 0 ? b->e[j].ino_a : 0;
		const char *name = c <= 0 ? a->e[i].name : b->e[j].name;
		if (ia != ib && add_dentry(it, name, ia, ib))
			return -ENOMEM;
		i += c <= 0;
		j += c >= 0;
	}
	return 0;
}

/* The attributes both versions have, compared. */
static unsigned diff_attrs(const struct diff_side *a, const struct diff_side *b)
{
	const struct tux3_stat *x = &a->st, *y = &b->st;
	unsigned what = 0;
	if (x->mode != y->mode)
		what |= TUX3_DIFF_MODE;
	if (x->uid != y->uid || x->gid != y->gid)
		what |= TUX3_DIFF_OWNER;
	if (x->mtime_ns != y->mtime_ns || x->ctime_ns != y->ctime_ns)
		what |= TUX3_DIFF_TIMES;
	if (x->nlink != y->nlink)
		what |= TUX3_DIFF_NLINK;
	if (x->size != y->size)
		what |= TUX3_DIFF_SIZE;
	if (x->rdev_major != y->rdev_major || x->rdev_minor != y->rdev_minor ||
	    (a->target && b->target && strcmp(a->target, b->target)))
		what |= TUX3_DIFF_TARGET;
	return what;
}

static int compare(const struct diff_side *a, const struct diff_side *b,
		   struct diff_item *it)
{
	static const struct diff_side none;
	int err = 0;
	it->d.in_a = a->exists;
	it->d.in_b = b->exists;
	if (a->exists)
		it->d.a = a->st;
	if (b->exists)
		it->d.b = b->st;
	if (!a->exists || !b->exists) {
		if (a->exists || b->exists)
			it->d.what = a->exists ? TUX3_DIFF_DELETED :
					TUX3_DIFF_CREATED;
		err = diff_entries(a->exists ? a : &none,
				   b->exists ? b : &none, it);
	} else {
		it->d.what = diff_attrs(a, b);
		if (!err)
			err = diff_xattrs(a, b, it);
		if (!err && (a->nr || b->nr))
			err = diff_maps(a, b, it);
		if (!err)
			err = diff_entries(a, b, it);
		it->d.what |= (it->d.nxattrs ? TUX3_DIFF_XATTR : 0) |
			      (it->d.nranges ? TUX3_DIFF_DATA : 0);
	}
	if (it->d.nentries)
		it->d.what |= TUX3_DIFF_ENTRIES;
	return err;
}

int diff_inode(struct tux3_volume *vol, tux3_ino_t ino, uint32_t tag_a,
	       uint32_t tag_b, struct diff_item *it)
{
	struct diff_side a = { 0 }, b = { 0 };
	uint32_t selected = vol->vtag;
	memset(it, 0, sizeof(*it));
	it->d.ino = ino;
	int err = side_read(vol, ino, tag_a, &a);
	if (!err)
		err = side_read(vol, ino, tag_b, &b);
	vol->vtag = selected;
	if (!err)
		err = compare(&a, &b, it);
	side_free(&a);
	side_free(&b);
	if (err)
		diff_item_free(it);
	return err;
}

void diff_item_free(struct diff_item *it)
{
	for (unsigned i = 0; i < it->d.nxattrs; i++)
		free(it->xattrs[i]);
	for (unsigned i = 0; i < it->d.nentries; i++)
		free((char *)it->entries[i].name);
	free(it->ranges);
	free(it->xattrs);
	free(it->entries);
	free(it->path_a);
	free(it->path_b);
	memset(it, 0, sizeof(*it));
}
