/*
 * What differs between two versions (tux3_snapshot_diff, doc/format.md
 * 17.9), found in the element lists rather than in the files.
 *
 * A version reads, at every key, the element of its nearest ancestor.
 * Two versions A and B therefore read alike at a key unless it has an
 * element whose label is an ancestor of one of them and not of the other
 * (the labels of the two chains up to where they meet, the "labels that
 * differ").  So one pass over the inode table's blobs, undecoded save
 * for their element labels, finds the inodes whose attributes may
 * differ, and the versioned data trees' labels (a read of their leaves)
 * the inodes whose data may; a 2014 map is every version's alike.  Only
 * those inodes are loaded, in both versions, and compared
 * (snapshot_diff_inode.c).  A name is an entry of a directory, and a
 * directory whose entries change has data that does: the renames show in
 * the directories' entries.  The format has no parent pointers, so
 * naming an inode is a search of the namespace, stopped when every inode
 * to name has its name.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "version/version.h"
#include "version/vfilemap.h"

/* The scan for inodes that may differ between two labels. */
struct differ {
	struct tux3_volume *vol;
	uint8_t differs[VERSION_LABELS / 8];	/* labels that differ */
	struct tux3_diff_count *count;
	tux3_ino_t *ino;
	size_t n, cap;
};

struct diff {
	struct tux3_volume *vol;
	uint32_t tag[2];
	struct diff_item *it;
	size_t n, cap;
	struct tux3_diff_count *count;
};

/* A snapshot's tag and label by name (NULL or "": the live version). */
static int find_version(struct tux3_volume *vol, const char *name,
			uint32_t *tag, unsigned *label)
{
	*tag = 0;
	*label = VERSION_ORIGIN;
	if (!name || !*name)
		return 0;
	int err = tux3_version_select(vol, name);
	if (!err && (err = vol_label(vol, label)) == 0)
		*tag = vol->vtag;
	return err;
}

/* The labels on one chain and not the other: an ancestor chain toggled
 * twice cancels where the two meet. */
static void toggle_chain(struct differ *df, unsigned label)
{
	const struct vtree *vt = df->vol->vt;
	for (unsigned i = 0; label < VERSION_LABELS && i < VERSION_LABELS; i++) {
		df->differs[label / 8] ^= (uint8_t)(1u << (label & 7));
		label = vt->v[label].parent;
	}
}

static bool label_differs(const struct differ *df, unsigned label)
{
	return label < VERSION_LABELS &&
	       (df->differs[label / 8] >> (label & 7) & 1);
}

struct labels_seen {
	const struct differ *df;
	bool differs;
};

static void data_label(void *ctx, unsigned label)
{
	struct labels_seen *s = ctx;
	s->differs |= label_differs(s->df, label);
}

/* Has the file's data an element of a label that differs?  Only a vleaf
 * tree can: a direct extent or dleaves read alike in every version. */
static int data_differs(struct differ *df, tux3_ino_t inum, uint64_t dtree,
			bool *differs)
{
	struct inode inode = { .inum = inum, .dtree = dtree };
	enum vfilemap_kind kind;
	struct labels_seen s = { df, false };
	struct root r = root_unpack(dtree);
	df->count->roots += !r.direct;
	int err = vfilemap_kind(df->vol, &inode, &kind);
	if (err || kind != VFM_VLEAF)
		return err;
	df->count->trees++;
	err = vfilemap_labels(df->vol, &inode, data_label, &s);
	*differs = s.differs;
	return err;
}

static int add_item(struct diff *df, struct diff_item *it)
{
	if (array_grow((void **)&df->it, &df->cap, df->n, sizeof(*df->it))) {
		diff_item_free(it);
		return -ENOMEM;
	}
	df->it[df->n++] = *it;
	return 0;
}

/* The inode compared in both versions, kept when anything differs (or
 * when keep: an inode a rename may have moved). */
static int compare_inode(struct diff *df, tux3_ino_t inum, bool keep)
{
	struct diff_item it;
	df->count->compared++;
	int err = diff_inode(df->vol, inum, df->tag[0], df->tag[1], &it);
	if (err)
		return err;
	if (!it.d.what && !(keep && it.d.in_a && it.d.in_b)) {
		diff_item_free(&it);
		return 0;
	}
	return add_item(df, &it);
}

static int scan_blob(void *ctx, tux3_ino_t inum, const uint8_t *blob,
		     unsigned len, tux3_block_t leafblock)
{
	struct differ *df = ctx;
	struct vattrs x;
	unsigned bad_at;
	bool differs = false;
	uint64_t dtree = 0;
	if (inum < TUX3_ROOT_INO)
		return 0;
	df->count->blobs++;
	int err = vattrs_decode_whole(df->vol, inum, blob, len, &x, &bad_at);
	if (err == -EUCLEAN)
		return vol_error(df->vol, err, leafblock, inum, bad_at,
				 "inode %" PRIu64 ": attribute blob damaged at "
				 "byte %u", inum, bad_at);
	if (err)
		return err;
	for (unsigned i = 0; i < x.n; i++)
		differs |= label_differs(df, x.a[i].label);
	dtree = vattrs_dtree(&x);
	vattrs_free(&x);
	if (!differs && dtree)
		err = data_differs(df, inum, dtree, &differs);
	if (!err && differs &&
	    !(err = array_grow((void **)&df->ino, &df->cap, df->n,
			       sizeof(*df->ino))))
		df->ino[df->n++] = inum;
	return err;
}

int version_differing(struct tux3_volume *vol, unsigned label_a,
		      unsigned label_b, tux3_ino_t **ino, size_t *n,
		      struct tux3_diff_count *count)
{
	struct differ *df = calloc(1, sizeof(*df));
	int err = df ? 0 : -ENOMEM;
	*ino = NULL;
	*n = 0;
	if (!err && vol->vt) {
		df->vol = vol;
		df->count = count;
		toggle_chain(df, label_a);
		toggle_chain(df, label_b);
		/* the index names them without a read of the inode table
		 * (count->blobs stays 0) */
		err = vindex_inodes(vol, df->differs, &df->ino, &df->n);
		if (err == -ENOENT)
			err = walk_inode_blobs(vol, scan_blob, df);
	}
	if (!err) {
		*ino = df->ino;
		*n = df->n;
	} else if (df) {
		free(df->ino);
	}
	free(df);
	return err;
}

static struct diff_item *find_item(struct diff *df, tux3_ino_t ino)
{
	size_t lo = 0, hi = df->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (df->it[mid].d.ino == ino)
			return &df->it[mid];
		if (df->it[mid].d.ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int item_cmp(const void *a, const void *b)
{
	const struct diff_item *x = a, *y = b;
	return x->d.ino < y->d.ino ? -1 : x->d.ino > y->d.ino;
}

/* Inodes whose names changed but nothing else (a rename keeps the
 * inode's own elements when the clock does not move) joined to the
 * list; then RENAMED set on every inode in both versions that lost a
 * name and gained one. */
static int find_renames(struct diff *df)
{
	tux3_ino_t *more = NULL;
	size_t nmore = 0, cap = 0;
	int err = 0;
	for (size_t i = 0; i < df->n && !err; i++)
		for (unsigned k = 0; k < df->it[i].d.nentries && !err; k++) {
			const struct tux3_diff_entry *e = &df->it[i].entries[k];
			tux3_ino_t ino[2] = { e->ino_a, e->ino_b };
			for (unsigned s = 0; s < 2 && !err; s++) {
				if (!ino[s] || find_item(df, ino[s]))
					continue;
				err = array_grow((void **)&more, &cap, nmore,
						sizeof(*more));
				if (!err)
					more[nmore++] = ino[s];
			}
		}
	for (size_t i = 0; i < nmore && !err; i++) {
		bool twice = false;
		for (size_t j = 0; j < i; j++)
			twice |= more[j] == more[i];
		if (!twice)
			err = compare_inode(df, more[i], true);
	}
	free(more);
	if (err)
		return err;
	if (df->n)
		qsort(df->it, df->n, sizeof(*df->it), item_cmp);
	uint8_t *moved = calloc(df->n ? df->n : 1, 1);
	if (!moved)
		return -ENOMEM;
	for (size_t i = 0; i < df->n; i++)
		for (unsigned k = 0; k < df->it[i].d.nentries; k++) {
			const struct tux3_diff_entry *e = &df->it[i].entries[k];
			struct diff_item *a = e->ino_a ? find_item(df, e->ino_a) : NULL;
			struct diff_item *b = e->ino_b ? find_item(df, e->ino_b) : NULL;
			if (a)
				moved[a - df->it] |= 1;	/* lost a name */
			if (b)
				moved[b - df->it] |= 2;	/* gained one */
		}
	for (size_t i = 0; i < df->n; i++)
		if (moved[i] == 3 && df->it[i].d.in_a && df->it[i].d.in_b)
			df->it[i].d.what |= TUX3_DIFF_RENAMED;
	free(moved);
	return 0;
}

/* ---- naming: a search of one version's namespace ---- */

struct dirq {
	tux3_ino_t ino;
	char *path;
};

struct namer {
	struct diff *df;
	unsigned side;		/* 0: a, 1: b */
	size_t left;		/* inodes still to name */
	struct dirq *q;
	size_t head, n, cap;
	const char *parent;
	int err;
};

static bool wants_name(const struct diff_item *it, unsigned side)
{
	if (side == 1)
		return it->d.in_b;
	return it->d.in_a && (!it->d.in_b || !it->path_b ||
			      (it->d.what & TUX3_DIFF_RENAMED));
}

static char *join(const char *dir, const char *name, unsigned len)
{
	size_t dl = strcmp(dir, "/") ? strlen(dir) : 0;
	char *p = malloc(dl + len + 2);
	if (p) {
		memcpy(p, dir, dl);
		p[dl] = '/';
		memcpy(p + dl + 1, name, len);
		p[dl + len + 1] = 0;
	}
	return p;
}

static int push_dir(struct namer *nm, tux3_ino_t ino, char *path)
{
	if (!path ||
	    array_grow((void **)&nm->q, &nm->cap, nm->n, sizeof(*nm->q))) {
		free(path);
		return -ENOMEM;
	}
	nm->q[nm->n++] = (struct dirq){ ino, path };
	return 0;
}

static int name_entry(void *ctx, const char *name, unsigned len,
		      tux3_ino_t ino, unsigned type, uint64_t pos)
{
	struct namer *nm = ctx;
	struct diff_item *it = find_item(nm->df, ino);
	char **slot = it ? (nm->side ? &it->path_b : &it->path_a) : NULL;
	(void)pos;
	if (slot && !*slot && wants_name(it, nm->side)) {
		if (!(*slot = join(nm->parent, name, len)))
			return -ENOMEM;
		nm->left--;
	}
	if (type == TUX3_DT_DIR)
		return push_dir(nm, ino, join(nm->parent, name, len));
	return 0;
}

/* Breadth first from path (its inode named too), until every inode the
 * side wants named is. */
static int name_side(struct diff *df, unsigned side, const char *path)
{
	struct tux3_volume *vol = df->vol;
	struct namer nm = { .df = df, .side = side };
	tux3_ino_t top;
	for (size_t i = 0; i < df->n; i++)
		nm.left += wants_name(&df->it[i], side);
	if (!nm.left)
		return 0;
	vol->vtag = df->tag[side];
	int err = tux3_lookup_path(vol, path, &top);
	if (err == -ENOENT || err == -ENOTDIR) {
		tux3_clear_error(vol);
		return 0;
	}
	if (!err)
		err = push_dir(&nm, top, strdup(path));
	struct diff_item *it = find_item(df, top);
	if (!err && it && wants_name(it, side)) {
		char **slot = side ? &it->path_b : &it->path_a;
		err = (*slot = strdup(path)) ? 0 : -ENOMEM;
		nm.left--;
	}
	for (; !err && nm.left && nm.head < nm.n; nm.head++) {
		nm.parent = nm.q[nm.head].path;
		df->count->dirs_named++;
		err = tux3_readdir(vol, nm.q[nm.head].ino, name_entry, &nm);
	}
	for (size_t i = 0; i < nm.n; i++)
		free(nm.q[i].path);
	free(nm.q);
	return err;
}

/* Inodes in both versions, unmoved, have the name they had. */
static int copy_names(struct diff *df)
{
	for (size_t i = 0; i < df->n; i++) {
		struct diff_item *it = &df->it[i];
		if (it->path_b && !it->path_a && it->d.in_a &&
		    !(it->d.what & TUX3_DIFF_RENAMED) &&
		    !(it->path_a = strdup(it->path_b)))
			return -ENOMEM;
	}
	return 0;
}

static int name_items(struct diff *df, const char *path)
{
	int err = name_side(df, 1, path);
	if (!err)
		err = name_side(df, 0, path);
	return err ? err : copy_names(df);
}

static int emit(struct diff *df, bool filtered, tux3_diff_fn fn, void *ctx)
{
	for (size_t i = 0; i < df->n; i++) {
		struct diff_item *it = &df->it[i];
		if (!it->d.what || (filtered && !it->path_a && !it->path_b))
			continue;
		it->d.ranges = it->ranges;
		it->d.xattrs = (const char *const *)it->xattrs;
		it->d.entries = it->entries;
		it->d.path_a = it->d.in_a ? it->path_a : NULL;
		it->d.path_b = it->d.in_b ? it->path_b : NULL;
		int r = fn(ctx, &it->d);
		if (r)
			return r;
	}
	return 0;
}

static int diff_run(struct diff *df, const char *a, const char *b,
		    const char *path, unsigned flags, tux3_diff_fn fn,
		    void *ctx)
{
	struct tux3_volume *vol = df->vol;
	unsigned label[2];
	int err = find_version(vol, a, &df->tag[0], &label[0]);
	if (!err)
		err = find_version(vol, b, &df->tag[1], &label[1]);
	if (err)
		return err;
	tux3_ino_t *ino;
	size_t n;
	err = version_differing(vol, label[0], label[1], &ino, &n, df->count);
	for (size_t i = 0; i < n && !err; i++)
		err = compare_inode(df, ino[i], false);
	free(ino);
	if (!err)
		err = find_renames(df);
	if (!err && (path || !(flags & TUX3_DIFF_NO_NAMES)))
		err = name_items(df, path ? path : "/");
	return err ? err : emit(df, path != NULL, fn, ctx);
}

int tux3_snapshot_diff(struct tux3_volume *vol, const char *a, const char *b,
		       const char *path, unsigned flags, tux3_diff_fn fn,
		       void *ctx, struct tux3_diff_count *count)
{
	struct tux3_diff_count none;
	struct diff *df = calloc(1, sizeof(*df));
	uint32_t selected = vol->vtag;
	if (!count)
		count = &none;
	memset(count, 0, sizeof(*count));
	tux3_clear_error(vol);
	if (!df)
		return -ENOMEM;
	df->vol = vol;
	df->count = count;
	int err = diff_run(df, a, b, path, flags, fn, ctx);
	vol->vtag = selected;
	for (size_t i = 0; i < df->n; i++)
		diff_item_free(&df->it[i]);
	free(df->it);
	free(df);
	return err;
}
