/*
 * Pass 4: every inode of the inode table (e2fsck's pass 1, with its
 * passes 1B-1D for blocks that have two owners).
 *
 *  - Attribute syntax: every attribute parses (a known kind, inside the
 *    blob: else the inode is cleared), no fixed attribute twice and no
 *    xattr atom twice (the first is kept), version 0 only (the 2014
 *    format writes no other; readers skip the rest, so they are
 *    dropped), xattr records long enough to name their atom.
 *  - Mode: a valid file type (else the inode is cleared; the root is
 *    made a directory instead).
 *  - Data: the direct extent or the data tree through the library's own
 *    checks (bnode key ranges, dleaf order, sentinel, versions), every
 *    extent inside the volume.  A dleaf refused only because extents
 *    lie outside the volume keeps its other extents.  Repair rebuilds
 *    the map: the readable extents mapped into a new tree with
 *    filemap_set, the old tree's blocks released.
 *  - Sizes against the data: a size must reach the last mapped block,
 *    must not pass the format's maximum; a directory's is a whole number
 *    of blocks; a symlink holds a target of 1..4095 bytes and its NUL
 *    (i_size = length + 1); devices, fifos and sockets have no data.
 *  - No block with two owners.  Phase 1 marks every referenced block
 *    (reserved area, log, blocks freed at the next unify or commit,
 *    inode and orphan table nodes, data tree nodes, extents: what
 *    check.c's shadow_build marks) in a space map and keeps
 *    the runs met twice; phase 2 walks again and lists every owner of
 *    those runs.  Per block a keeper is chosen: the tables, log or
 *    reserved area first, then an internal inode (bitmap, countmap,
 *    atoms), then the first data tree that reached it, then the first
 *    extent.  Other data trees lose their data (their tree is someone
 *    else's); other extents get a copy of the blocks in newly
 *    allocated ones, and their map points there.
 *
 * Problems are reported as met; the repairs wait until the walks are
 * done (phase 3), then go inode by inode through the write path:
 * inode_store (attributes are re-encoded from what was kept),
 * inode_delete, filemap_set into a new map, balloc for copies, and
 * logged frees (leaves and extents when the commit is durable, bnodes at
 * the unify).  A block with two owners is never freed; a cleared inode
 * whose attributes do not parse far enough to find its data leaves its
 * blocks to pass 8.  While the repairs allocate, blocks referenced but
 * free in the bitmap are held in use, so no repair hands out a block
 * that something still uses; they are let go afterwards and pass 8
 * reports them as before.
 *
 * Memory: a space map of the referenced blocks (io/spacemap.c: chunks
 * of one bitmap block's span only where something is referenced, so
 * it follows the space in use, not the volume), freed at the end of the
 * pass, and nothing per clean inode:
 * an inode with a problem costs one 24-byte record in an array sorted
 * by inode number (inode numbers are sparse up to 2^48), a run of
 * blocks met twice 16 bytes, each owner of such a run 40 bytes, each
 * range to copy 24 bytes.  The walks hold one block per tree level and
 * one inode blob at a time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "check/fsck_internal.h"
#include "version/vfilemap.h"
#include "version/vleaf.h"

#define SYMLINK_MAX	4096		/* target and NUL, as PATH_MAX */
#define MAX_RECS	(1u << 22)	/* bounds on what is kept: past */
#define MAX_RUNS	(1u << 20)	/* them problems are still */
#define MAX_OWNERS	(1u << 21)	/* reported, not repaired */
#define MAX_COPIES	(1u << 20)

/* Repairs wanted for an inode (struct rec.flags). */
enum {
	F_CLEAR = 1,	/* delete it, release its blocks */
	F_STORE = 2,	/* store it again (attributes re-encoded) */
	F_REBUILD = 4,	/* a new data map: readable extents, copies */
	F_DROP = 8,	/* release all its data */
	F_SIZE = 16,	/* set the size to rec.size */
	F_ROOTDIR = 32,	/* make it a directory */
	F_SHARE_TOLD = 64, /* its data tree's sharing was reported */
	F_NOTYPE = 128,	/* an internal inode: clear the file type */
	F_SPILL = 256,	/* drop its attribute chain, which does not read */
};

struct rec {
	uint64_t inum;
	uint64_t size;
	uint32_t flags;
	uint32_t fixes;		/* accepted problems the repair answers */
};

struct run {
	uint64_t start, end;
};

/* Owners of blocks met twice, in the order a keeper is chosen. */
enum what {
	W_RESERVED, W_LOG, W_PENDING, W_ITREE, W_OTREE,	/* rank 0 */
	W_INTERNAL_NODE, W_INTERNAL,			/* rank 1 */
	W_DNODE,					/* rank 2 */
	W_EXTENT,					/* rank 3 */
};

struct owner {
	uint64_t block, count;
	uint64_t inum, logical;	/* W_EXTENT: logical block of .block */
	uint32_t seq;		/* walk order */
	uint8_t what;
};

struct copy {
	uint64_t inum, logical, count;
	uint64_t physical;	/* the shared blocks copied from */
};

enum phase { PH_MARK = 1, PH_OWNERS, PH_REPAIR };

struct p4 {
	struct fsck *f;
	struct tux3_volume *vol;
	enum phase phase;
	struct spacemap map;		/* the referenced blocks */
	int map_err;			/* -ENOMEM: the map could not grow */
	struct run *runs;		/* blocks met twice */
	size_t nruns, capruns;
	struct owner *own;
	size_t nown, capown;
	struct rec *recs;		/* sorted by inum */
	size_t nrecs, caprecs;
	struct copy *copies;
	size_t ncopies, capcopies;
	bool full;			/* a bound was met */
	uint32_t seq;
	uint8_t *buf;			/* one block */
	/* the inode being walked (phases 1 and 2) */
	struct {
		tux3_ino_t inum;
		bool internal;
		bool quiet;		/* going away: mark, report no more */
		bool data_bad;		/* its data map has damage */
		bool symlink;		/* a damaged map makes it bad */
		uint64_t dataend;	/* blocks */
		struct rec r;		/* what phase 1 gathers */
	} cur;
};

static bool is_internal(tux3_ino_t inum)
{
	return inum < TUX3_ROOT_INO;
}

static void *grow(void *v, size_t *cap, size_t n, size_t size, size_t max)
{
	if (n < *cap)
		return v;
	size_t ncap = *cap ? *cap * 2 : 64;
	if (ncap > max)
		ncap = max;
	if (n >= ncap)
		return NULL;
	void *nv = realloc(v, ncap * size);
	if (nv)
		*cap = ncap;
	return nv;
}

/* ---- per-inode records ---- */

static struct rec *rec_find(struct p4 *p, uint64_t inum, size_t *at)
{
	size_t lo = 0, hi = p->nrecs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->recs[mid].inum == inum)
			return &p->recs[mid];
		if (p->recs[mid].inum < inum)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (at)
		*at = lo;
	return NULL;
}

/* The record of inum, made if missing; NULL when the bound is met. */
static struct rec *rec_get(struct p4 *p, uint64_t inum)
{
	size_t at;
	struct rec *r = rec_find(p, inum, &at);
	if (r)
		return r;
	struct rec *v = grow(p->recs, &p->caprecs, p->nrecs, sizeof(*v),
			     MAX_RECS);
	if (!v) {
		p->full = true;
		return NULL;
	}
	p->recs = v;
	memmove(&v[at + 1], &v[at], (p->nrecs - at) * sizeof(*v));
	p->nrecs++;
	v[at] = (struct rec){ .inum = inum };
	return &v[at];
}

static uint32_t rec_flags(struct p4 *p, uint64_t inum)
{
	struct rec *r = rec_find(p, inum, NULL);
	return r ? r->flags : 0;
}

/* ---- phase 1: the map and the runs met twice ---- */

static void run_add(struct p4 *p, uint64_t b)
{
	if (p->nruns && p->runs[p->nruns - 1].end == b) {
		p->runs[p->nruns - 1].end++;
		return;
	}
	struct run *v = grow(p->runs, &p->capruns, p->nruns, sizeof(*v),
			     MAX_RUNS);
	if (!v) {
		p->full = true;
		return;
	}
	p->runs = v;
	v[p->nruns++] = (struct run){ b, b + 1 };
}

static void mark(struct p4 *p, uint64_t block, uint64_t count)
{
	if (!vol_extent_valid(p->vol, block, count))
		return;		/* reported where it was met */
	for (uint64_t b = block; b < block + count && !p->map_err; b++) {
		int was = spacemap_set(&p->map, b, true);
		if (was < 0)
			p->map_err = was;
		else if (was)
			run_add(p, b);
	}
}

static int cmp_run(const void *a, const void *b)
{
	const struct run *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sorted, merged: one run per stretch of blocks met twice. */
static void runs_settle(struct p4 *p)
{
	size_t n = 0;
	if (p->nruns > 1)
		qsort(p->runs, p->nruns, sizeof(*p->runs), cmp_run);
	for (size_t i = 0; i < p->nruns; i++) {
		if (n && p->runs[i].start <= p->runs[n - 1].end) {
			if (p->runs[i].end > p->runs[n - 1].end)
				p->runs[n - 1].end = p->runs[i].end;
			continue;
		}
		p->runs[n++] = p->runs[i];
	}
	p->nruns = n;
}

/* Index of the first run ending after b. */
static size_t run_after(const struct p4 *p, uint64_t b)
{
	size_t lo = 0, hi = p->nruns;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->runs[mid].end <= b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool in_runs(const struct p4 *p, uint64_t b)
{
	size_t i = run_after(p, b);
	return i < p->nruns && p->runs[i].start <= b;
}

/* ---- phase 2: owners of the runs ---- */

static void owner_add(struct p4 *p, enum what what, uint64_t inum,
		      uint64_t logical, uint64_t block, uint64_t count)
{
	if (!vol_extent_valid(p->vol, block, count))
		return;
	uint64_t end = block + count;
	for (size_t i = run_after(p, block);
	     i < p->nruns && p->runs[i].start < end; i++) {
		uint64_t s = p->runs[i].start > block ? p->runs[i].start : block;
		uint64_t e = p->runs[i].end < end ? p->runs[i].end : end;
		struct owner *v = grow(p->own, &p->capown, p->nown, sizeof(*v),
				       MAX_OWNERS);
		if (!v) {
			p->full = true;
			return;
		}
		p->own = v;
		v[p->nown++] = (struct owner){
			.block = s, .count = e - s, .inum = inum,
			.logical = logical + (s - block), .seq = p->seq++,
			.what = (uint8_t)what,
		};
	}
}

/* A referenced range, by phase: marked, or its owners listed. */
static void ref(struct p4 *p, enum what what, uint64_t inum, uint64_t logical,
		uint64_t block, uint64_t count)
{
	if (p->phase == PH_MARK)
		mark(p, block, count);
	else if (p->phase == PH_OWNERS && p->nruns)
		owner_add(p, what, inum, logical, block, count);
}

/* ---- data trees ---- */

/* What a walk of one inode's data does with what it meets. */
struct dwalk;
struct dwalk_ops {
	int (*node)(struct dwalk *w, uint64_t block, bool leaf);
	int (*extent)(struct dwalk *w, uint64_t logical, uint64_t physical,
		      uint64_t count);
	int (*outside)(struct dwalk *w, uint64_t logical, uint64_t physical,
		       uint64_t count);
	int (*bad)(struct dwalk *w, uint64_t block, const char *what);
	/* an index node whose entry 0 key is not below entry 1's goes to
	 * bad too: lookups never read that key, but a write of the node's
	 * first child finds its entry by key (btree_edit.c) and fails */
	bool key0_bad;
};

struct dwalk {
	struct p4 *p;
	tux3_ino_t inum;
	const struct dwalk_ops *ops;
	void *ctx;
	int depth;
	/* the bnodes above the node being visited: their buffers stay valid
	 * while their children are visited, one callback per child */
	struct dlevel {
		const uint8_t *buf;
		uint64_t lo, hi;
		unsigned count, next;
	} lv[TUX3_MAX_DEPTH];
	int err;		/* a callback's own error */
};

static bool extent_inside(const struct tux3_volume *vol, uint64_t physical,
			  uint64_t count)
{
	return physical >= vol->reserved_blocks &&
	       vol_extent_valid(vol, physical, count);
}

/* Key range of the child being visited at level (and count it). */
static void dw_range(struct dwalk *w, int level, uint64_t *lo, uint64_t *hi)
{
	if (level <= 0 || level > w->depth - 1) {
		*lo = 0;
		*hi = TUX3_KEY_LIMIT;
		return;
	}
	struct dlevel *up = &w->lv[level - 1];
	unsigned i = up->next++;
	*lo = i ? bnode_key(up->buf, i) : up->lo;
	*hi = i + 1 < up->count ? bnode_key(up->buf, i + 1) : up->hi;
}

static int dw_bnode(void *ctx, struct btree *bt, int level, uint64_t blocknr,
		    const uint8_t *buf, uint64_t lo, uint64_t hi)
{
	struct dwalk *w = ctx;
	uint64_t l, h;
	(void)bt;
	dw_range(w, level, &l, &h);
	if (level < TUX3_MAX_DEPTH)
		w->lv[level] = (struct dlevel){ buf, lo, hi, bnode_count(buf),
						0 };
	int err = 0;
	if (w->ops->key0_bad && bnode_count(buf) >= 2 &&
	    bnode_key(buf, 0) >= bnode_key(buf, 1)) {
		char what[160];
		snprintf(what, sizeof(what), "bnode: entry 0's key %" PRIu64
			 " is not below entry 1's key %" PRIu64 ", so a write "
			 "of its first child cannot find it",
			 bnode_key(buf, 0), bnode_key(buf, 1));
		err = w->ops->bad(w, blocknr, what);
	}
	if (!err && w->ops->node)
		err = w->ops->node(w, blocknr, false);
	if (err)
		w->err = err;
	return err;
}

static int dleaf_extents(struct dwalk *w, const uint8_t *leaf)
{
	unsigned count = dleaf_count(leaf);
	struct dleaf_entry e, next;
	for (unsigned i = 0; i + 1 < count; i++) {
		dleaf_entry_get(leaf, i, &e);
		dleaf_entry_get(leaf, i + 1, &next);
		if (!e.physical)
			continue;
		uint64_t n = next.logical - e.logical;
		int err = extent_inside(w->p->vol, e.physical, n) ?
			  w->ops->extent(w, e.logical, e.physical, n) :
			  w->ops->outside(w, e.logical, e.physical, n);
		if (err)
			return err;
	}
	return 0;
}

static void error_what(struct tux3_volume *vol, tux3_ino_t inum, int err,
		       char *what, size_t len);

/* An element chain (format.md 17.3c): its blocks are the tree's, as its
 * nodes are, and each element owns its block; one that does not read is
 * the leaf's damage. */
static int echain_extents(struct dwalk *w, uint64_t leafblock,
			  const struct vextent *r)
{
	struct tux3_volume *vol = w->p->vol;
	struct vextents elem = { 0 };
	uint64_t *blocks;
	unsigned n;
	int err = vechain_blocks(vol, w->inum, r->logical, r->phys, &elem,
				 &blocks, &n);
	if (err == -ENOMEM)
		return err;
	if (err) {
		char what[300];
		error_what(vol, w->inum, err, what, sizeof(what));
		return w->ops->bad ? w->ops->bad(w, leafblock, what) : 0;
	}
	for (unsigned k = 0; k < n && !err; k++)
		err = w->ops->node ? w->ops->node(w, blocks[k], false) : 0;
	for (unsigned k = 0; k < elem.n && !err; k++) {
		uint64_t b = elem.r[k].phys;
		if (b)
			err = extent_inside(vol, b, 1) ?
			      w->ops->extent(w, r->logical, b, 1) :
			      w->ops->outside(w, r->logical, b, 1);
	}
	free(elem.r);
	free(blocks);
	return err;
}

/* A versioned leaf: every mapped record, whatever its label (each
 * element owns its blocks). */
static int vleaf_extents(struct dwalk *w, const uint8_t *leaf,
			 uint64_t leafblock)
{
	for (unsigned i = 0; i < vleaf_count(leaf); i++) {
		struct vextent x;
		vleaf_get(leaf, i, &x);
		if (x.flags & VEXT_ELIST) {
			int err = echain_extents(w, leafblock, &x);
			if (err)
				return err;
			continue;
		}
		if (!x.phys)
			continue;
		int err = extent_inside(w->p->vol, x.phys, x.count) ?
			  w->ops->extent(w, x.logical, x.phys, x.count) :
			  w->ops->outside(w, x.logical, x.phys, x.count);
		if (err)
			return err;
	}
	return 0;
}

static int dw_leaf(void *ctx, struct btree *bt, uint64_t blocknr,
		   const uint8_t *leaf, uint64_t lo, uint64_t hi)
{
	struct dwalk *w = ctx;
	uint64_t l, h;
	(void)bt; (void)lo; (void)hi;
	dw_range(w, w->depth - 1, &l, &h);
	int err = w->ops->node ? w->ops->node(w, blocknr, true) : 0;
	if (!err)
		err = be16(leaf) == TUX3_MAGIC_VLEAF ?
		      vleaf_extents(w, leaf, blocknr) :
		      dleaf_extents(w, leaf);
	if (err)
		w->err = err;
	return err;
}

/*
 * A dleaf the library refused: usable when the refusal was only for
 * extents outside the volume, i.e. it passes every other check of
 * dleaf_check (magic, count, sentinel, versions, key range, order) and
 * has such an extent.
 */
static bool dleaf_salvageable(const struct tux3_volume *vol,
			      const uint8_t *leaf, uint64_t lo, uint64_t hi)
{
	unsigned count = dleaf_count(leaf);
	struct dleaf_entry e, next;
	bool outside = false;

	if (be16(leaf) != TUX3_MAGIC_DLEAF ||
	    count > (vol->blocksize - DLEAF_HEADER) / DLEAF_ENTRY || !count)
		return false;
	dleaf_entry_get(leaf, count - 1, &e);
	if (e.physical)
		return false;
	for (unsigned i = 0; i < count; i++) {
		dleaf_entry_get(leaf, i, &e);
		if (e.version || e.logical < lo || e.logical > hi ||
		    (i + 1 < count && e.logical == hi))
			return false;
		if (i + 1 == count)
			break;
		dleaf_entry_get(leaf, i + 1, &next);
		if (next.logical <= e.logical)
			return false;
		if (e.physical && !extent_inside(vol, e.physical,
						 next.logical - e.logical))
			outside = true;
	}
	return outside;
}

static int dw_bad(void *ctx, struct btree *bt, int level, uint64_t blocknr,
		  int err)
{
	struct dwalk *w = ctx;
	struct tux3_volume *vol = w->p->vol;
	char what[sizeof(vol->error.what)];
	uint64_t lo, hi;
	int r;
	(void)bt; (void)err;

	snprintf(what, sizeof(what), "%s", vol->error.what[0] ?
		 vol->error.what : strerror(-err));
	tux3_clear_error(vol);
	dw_range(w, level, &lo, &hi);
	if (level == w->depth - 1 &&
	    !vol_read_block(vol, blocknr, w->p->buf) &&
	    dleaf_salvageable(vol, w->p->buf, lo, hi)) {
		r = w->ops->node ? w->ops->node(w, blocknr, true) : 0;
		if (!r)
			r = dleaf_extents(w, w->p->buf);
	} else {
		tux3_clear_error(vol);
		r = w->ops->bad ? w->ops->bad(w, blocknr, what) : 0;
	}
	if (r)
		w->err = r;
	return r;
}

/*
 * Walk the data of an inode whose data attribute is packed (0: none):
 * the direct extent, or every node and extent of its tree.  Returns the
 * first callback error; damage goes to the callbacks.
 */
static int data_walk(struct p4 *p, tux3_ino_t inum, uint64_t packed,
		     const struct dwalk_ops *ops, void *ctx)
{
	static const struct btree_visit visit = {
		.bnode = dw_bnode, .leaf = dw_leaf, .bad = dw_bad,
	};
	struct tux3_volume *vol = p->vol;
	struct root r = root_unpack(packed);
	struct dwalk w = { .p = p, .inum = inum, .ops = ops, .ctx = ctx };
	char what[120];

	if (!packed)
		return 0;
	if (r.direct) {
		if (r.count && extent_inside(vol, r.block, r.count))
			return ops->extent(&w, 0, r.block, r.count);
		return ops->outside(&w, 0, r.block, r.count);
	}
	if (r.depth < 1 || r.depth > TUX3_MAX_DEPTH ||
	    r.block < vol->reserved_blocks || r.block >= vol->volblocks) {
		snprintf(what, sizeof(what), "invalid data tree root 0x%016"
			 PRIx64 " (depth %u)", packed, r.depth);
		return ops->bad ? ops->bad(&w, r.block, what) : 0;
	}
	/* a tree of versioned leaves (pass 9 checks their labels) */
	struct inode probe = { .inum = inum, .dtree = packed };
	bool versioned = vfilemap_is_versioned(vol, &probe);
	tux3_clear_error(vol);
	if (versioned && p->phase == PH_MARK)
		p->f->vtrees++;
	if (versioned && !vtable_marked(vol)) {
		snprintf(what, sizeof(what), "a versioned data tree (vleaf) on "
			 "a volume without versions");
		return ops->bad ? ops->bad(&w, r.block, what) : 0;
	}
	struct btree bt = { .vol = vol, .root = r,
			    .ops = versioned ? &vdtree_ops : &dtree_ops,
			    .owner = inum };
	w.depth = (int)r.depth;
	tux3_clear_error(vol);
	int err = btree_traverse(&bt, &visit, &w);
	tux3_clear_error(vol);
	if (w.err)
		return w.err;
	return err == -ENOMEM ? err : 0;
}

/* ---- attributes, tolerantly ---- */

/* The inode as the repair keeps it: the first version-0 attribute of
 * each fixed kind, the well-formed xattrs with their first atom. */
struct tdec {
	struct p4 *p;		/* reporting (phase 1) or NULL */
	struct inode *inode;
	unsigned cap;
	bool library_refuses;	/* a finding inode_from_blob also rejects */
	uint32_t flags, fixes;	/* phase 1: repairs wanted */
};

static bool tdec_reporting(const struct tdec *d)
{
	return d->p && !d->p->cur.quiet;
}

static void tdec_found(struct tdec *d, int yes)
{
	if (yes) {
		d->flags |= F_STORE;
		d->fixes++;
	}
}

/* An ATIME attribute where none belongs (format.md 15.6): on a volume
 * without the feature, or on an internal file (below the normal inode
 * numbers, the root excepted), which nothing reads it on. */
static bool atime_stray(const struct tux3_volume *vol, uint64_t inum)
{
	return !atime_marked(vol) ||
	       (inum < TUX3_NORMAL_INO && inum != TUX3_ROOT_INO);
}

static int tdec_one(struct tux3_volume *vol, void *ctx,
		    const struct attr_info *a)
{
	struct tdec *d = ctx;
	struct inode *inode = d->inode;
	const uint8_t *pl = a->payload;
	char name[40];

	/* the internal inodes are never versioned (format.md 17.7) */
	bool versioned = vtable_marked(vol) && inode->inum >= TUX3_ROOT_INO;
	if (a->kind == VATTR_SPILL && versioned)
		return 0;	/* its chain: spill_walk's */
	if (a->version || a->kind == VATTR_ABSENT ||
	    a->kind == VATTR_SPILL) {
		/* readers skip it (another version's attribute): dropping it
		 * changes nothing they see, unless the inode has versions,
		 * where it is a snapshot's (pass 9's business) */
		if (tdec_reporting(d) && !versioned)
			tdec_found(d, fsck_problem(d->p->f, P4_ATTR_VERSION,
				true, FSCK_AT(.inum = inode->inum),
				inode->inum, iattr_kind_name(a->kind),
				(uint64_t)a->offset, (uint64_t)a->version));
		return 0;
	}
	if (a->kind == ATTR_ATIME && atime_stray(vol, inode->inum)) {
		/* readers refuse it (or, on an internal file, never use
		 * it): the inode is stored again without it */
		d->library_refuses = !atime_marked(vol);
		if (tdec_reporting(d))
			tdec_found(d, fsck_problem(d->p->f, P4_ATIME_STRAY,
				true, FSCK_AT(.inum = inode->inum),
				inode->inum, (uint64_t)a->offset,
				atime_marked(vol) ? "on an internal file" :
				"on a volume without the atime feature"));
		return 0;
	}
	if (iattr_kind_fixed(a->kind)) {
		if (inode->present & (1u << a->kind)) {
			d->library_refuses = true;
			if (tdec_reporting(d))
				tdec_found(d, fsck_problem(d->p->f,
					P4_ATTR_DUP, true,
					FSCK_AT(.inum = inode->inum),
					inode->inum,
					iattr_kind_name(a->kind)));
			return 0;
		}
		inode->present |= 1u << a->kind;
	}
	switch (a->kind) {
	case ATTR_RDEV:
		inode->rdev = be64(pl);
		break;
	case ATTR_MODE_OWNER:
		inode->mode = be32(pl);
		inode->uid = be32(pl + 4);
		inode->gid = be32(pl + 8);
		break;
	case ATTR_DATA_BTREE:
		inode->dtree = be64(pl);
		break;
	case ATTR_CTIME_SIZE:
		inode->ctime = (int64_t)be64(pl);
		inode->size = be64(pl + 8);
		break;
	case ATTR_LINK_COUNT:
		inode->nlink = be32(pl);
		break;
	case ATTR_MTIME:
		inode->mtime = (int64_t)be64(pl);
		break;
	case ATTR_ATIME:
		inode->atime = (int64_t)be64(pl);
		break;
	case ATTR_XATTR: {
		if (a->paylen < 4) {
			d->library_refuses = true;
			if (tdec_reporting(d))
				tdec_found(d, fsck_problem(d->p->f,
					P4_XATTR_BAD, true,
					FSCK_AT(.inum = inode->inum),
					inode->inum, (uint64_t)a->offset));
			return 0;
		}
		unsigned atom = be16(pl + 2);
		for (unsigned i = 0; i < inode->nxattr; i++) {
			if (inode->xattrs[i].atom != atom)
				continue;
			snprintf(name, sizeof(name), "XATTR (atom %u)", atom);
			if (tdec_reporting(d))
				tdec_found(d, fsck_problem(d->p->f,
					P4_ATTR_DUP, true,
					FSCK_AT(.inum = inode->inum),
					inode->inum, name));
			return 0;
		}
		if (inode->nxattr == d->cap) {
			unsigned ncap = d->cap ? d->cap * 2 : 8;
			struct xattr_ref *n = realloc(inode->xattrs,
						      ncap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			inode->xattrs = n;
			d->cap = ncap;
		}
		inode->xattrs[inode->nxattr++] = (struct xattr_ref){
			.atom = atom, .offset = a->offset + 6,
			.size = a->paylen - 4,
		};
		break;
	}
	}
	return 0;
}

/* The volume's error text without its "inode N: " (the problem names
 * the inode already), then the error cleared. */
static void error_what(struct tux3_volume *vol, tux3_ino_t inum, int err,
		       char *what, size_t len)
{
	char prefix[40];
	const char *w = vol->error.what[0] ? vol->error.what : strerror(-err);
	int n = snprintf(prefix, sizeof(prefix), "inode %" PRIu64 ": ", inum);
	if (n > 0 && !strncmp(w, prefix, (size_t)n))
		w += n;
	snprintf(what, len, "%s", w);
	tux3_clear_error(vol);
}

/*
 * Decode a blob tolerantly into inode (which owns a copy of the blob).
 * Returns 0, -EUCLEAN when the blob stops parsing (what is set, the
 * attributes before the break are decoded), or -ENOMEM.
 */
static int tdecode(struct tdec *d, struct tux3_volume *vol, tux3_ino_t inum,
		   const uint8_t *blob, unsigned len, uint64_t leafblock,
		   char *what, size_t whatlen)
{
	struct inode *inode = d->inode;
	memset(inode, 0, sizeof(*inode));
	inode->inum = inum;
	inode->leafblock = leafblock;
	inode->blob = malloc(len ? len : 1);
	if (!inode->blob)
		return -ENOMEM;
	memcpy(inode->blob, blob, len);
	inode->bloblen = len;
	tux3_clear_error(vol);
	int err = iattr_decode(vol, inode, tdec_one, d);
	if (err == -ENOMEM)
		return err;
	if (err) {
		error_what(vol, inum, err, what, whatlen);
		return -EUCLEAN;
	}
	return 0;
}

/* The live blob of inum, decoded tolerantly (repairs). */
static int load_tolerant(struct p4 *p, tux3_ino_t inum, struct inode *inode,
			 bool *whole)
{
	struct tux3_volume *vol = p->vol;
	struct btree bt = { .vol = vol, .root = vol->iroot, .ops = &itree_ops };
	struct cursor c = { 0 };
	const uint8_t *blob;
	unsigned len = 0;
	char what[200];
	int err = btree_probe(&bt, inum, &c);
	if (!err) {
		ileaf_blob(cursor_leaf(&c), vol->blocksize, inum, &blob, &len);
		if (!len)
			err = -ENOENT;
	}
	if (!err) {
		struct tdec d = { .inode = inode };
		err = tdecode(&d, vol, inum, blob, len, cursor_leaf_block(&c),
			      what, sizeof(what));
		*whole = !err;
		if (err == -EUCLEAN)
			err = 0;
		if (err)
			inode_free(inode);
	}
	cursor_release(&c);
	return err;
}

/* ---- phase 1: one inode ---- */

/* Can an inode whose attributes do not decode be cleared?  A file's,
 * and the atom table's: pass 6 makes a missing one again, empty. */
/* Files, the root directory (pass 5 makes a new one and connects what
 * it named to /lost+found), the atom table (pass 6 makes a new one), the
 * numbers below 64 that the format gives no internal inode (5 to 60:
 * one there is left by damage, a leaf's dictionary read past its end,
 * and holds nothing the volume needs), and once the internal inodes are
 * to be made anew (PASS2_INTERNAL_LOST), the bitmap and the countmap,
 * which pass 8 rebuilds and the commit writes in new files. */
static bool clearable(const struct fsck *f, tux3_ino_t inum)
{
	if ((f->salvage & FSCK_SALVAGE_INTERNAL) &&
	    (inum == TUX3_BITMAP_INO || inum == TUX3_COUNTMAP_INO))
		return true;
	return inum >= TUX3_ROOT_INO || inum == TUX3_ATABLE_INO ||
	       inum == TUX3_VTABLE_INO ||
	       (inum > TUX3_ATABLE_INO && inum < TUX3_VOLMAP_INO);
}

static void want(struct p4 *p, int yes, uint32_t flags)
{
	/* an inode whose repair failed in an earlier round is cleared:
	 * the coarse fix (not an internal inode, which pass 4 rebuilds) */
	if (yes && !p->cur.internal && p->cur.r.inum > TUX3_ROOT_INO &&
	    fsck_refused_inode(p->f, p->cur.r.inum))
		flags = F_CLEAR;
	if (yes) {
		p->cur.r.flags |= flags;
		p->cur.r.fixes++;
	}
}

static int p1_node(struct dwalk *w, uint64_t block, bool leaf)
{
	(void)leaf;
	mark(w->p, block, 1);
	return 0;
}

static int p1_extent(struct dwalk *w, uint64_t logical, uint64_t physical,
		     uint64_t count)
{
	struct p4 *p = w->p;
	mark(p, physical, count);
	if (logical + count > p->cur.dataend)
		p->cur.dataend = logical + count;
	return 0;
}

/*
 * Can the data map of the inode being walked be rebuilt from what is
 * readable?  Any file's can; of the internal inodes, the atom table's
 * (inode 4: ordinary file data, what is lost becomes a hole, whose atoms
 * pass 6 then finds without a name).  Not the bitmap's or countmap's:
 * the volume reads them through their map until the unify rewrites
 * them, and not the version table's (pass 9's).  On a volume with
 * versions too: pass 6 drops a versioned inode's xattrs of the atoms
 * lost in every version (vinode_drop_atom).
 */
/*
 * Every version's attributes, as the library reads them whole (tdecode
 * reads the live version's): a blob whose other versions' part does not
 * decode is refused by every load of the inode, its own repairs'
 * included, so it is as unreadable as one whose live part is.  A blob
 * with an attribute chain is left to the SPILL check, which drops what
 * the chain cannot give back (PASS4_SPILL_BAD).  0, or -EUCLEAN with
 * what set, or -ENOMEM.
 */
static int versions_decode(struct tux3_volume *vol, tux3_ino_t inum,
			   const uint8_t *blob, unsigned len, char *what,
			   size_t wlen)
{
	if (vspill_has(blob, len))
		return 0;
	struct vattrs x;
	int err = vinode_decode(vol, inum, blob, len, &x);
	vattrs_free(&x);
	if (err && err != -ENOMEM) {
		snprintf(what, wlen, "%s", vol->error.what[0] ?
			 vol->error.what : strerror(-err));
		tux3_clear_error(vol);
		err = -EUCLEAN;
	}
	return err;
}

static bool map_mendable(const struct p4 *p)
{
	if (!p->cur.internal)
		return true;
	return p->cur.inum == TUX3_ATABLE_INO;
}

static int p1_outside(struct dwalk *w, uint64_t logical, uint64_t physical,
		      uint64_t count)
{
	struct p4 *p = w->p;
	p->cur.data_bad = true;
	if (p->cur.quiet || p->cur.symlink)
		return 0;	/* a symlink is told whole (p1_type) */
	want(p, fsck_problem(p->f, P4_EXTENT_OUTSIDE, map_mendable(p),
			     FSCK_AT(.inum = w->inum, .block = physical,
				     .count = count),
			     w->inum, physical, count, logical), F_REBUILD);
	return p->f->stop ? -ECANCELED : 0;
}

static int p1_bad(struct dwalk *w, uint64_t block, const char *what)
{
	struct p4 *p = w->p;
	p->cur.data_bad = true;
	if (p->cur.quiet || p->cur.symlink)
		return 0;	/* a symlink is told whole (p1_type) */
	want(p, fsck_problem(p->f, P4_DTREE_BAD, map_mendable(p),
			     FSCK_AT(.inum = w->inum, .block = block),
			     w->inum, block, what), F_REBUILD);
	return p->f->stop ? -ECANCELED : 0;
}

static const struct dwalk_ops p1_ops = {
	.node = p1_node, .extent = p1_extent, .outside = p1_outside,
	.bad = p1_bad, .key0_bad = true,
};

static const char *special_name(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFCHR: return "character device";
	case S_IFBLK: return "block device";
	case S_IFIFO: return "fifo";
	default: return "socket";
	}
}

/* A symlink's target: 1..4095 bytes and its NUL, all mapped. */
static int symlink_check(struct p4 *p, const struct inode *inode, char *why,
			 size_t whylen)
{
	struct tux3_volume *vol = p->vol;
	uint64_t size = inode->size;
	size_t done;
	if (size < 2 || size > SYMLINK_MAX) {
		snprintf(why, whylen, "size %" PRIu64 " is not that of a "
			 "target of 1 to %u bytes with its NUL", size,
			 SYMLINK_MAX - 1);
		return 1;
	}
	if (p->cur.dataend > (size + vol->blocksize - 1) >> vol->blockbits) {
		snprintf(why, whylen, "data blocks beyond its %" PRIu64
			 "-byte target", size);
		return 1;
	}
	char *t = malloc((size_t)size);
	if (!t)
		return -ENOMEM;
	tux3_clear_error(vol);
	int err = inode_read(vol, inode, t, (size_t)size, 0, &done);
	tux3_clear_error(vol);
	if (err == -ENOMEM) {
		free(t);
		return err;
	}
	if (err || done != size)
		snprintf(why, whylen, "target unreadable");
	else if (memchr(t, 0, (size_t)size - 1))
		snprintf(why, whylen, "target of %" PRIu64 " bytes holds a "
			 "NUL byte", size - 1);
	else if (t[size - 1])
		snprintf(why, whylen, "target is not NUL-terminated");
	else
		why[0] = 0;
	free(t);
	return why[0] != 0;
}

static void want_size(struct p4 *p, int yes, uint64_t size)
{
	if (yes) {
		p->cur.r.flags |= F_SIZE;
		p->cur.r.fixes++;
		p->cur.r.size = size;
	}
}

/* Sizes and types against the data, once the data is walked. */
static int p1_type(struct p4 *p, struct inode *inode, bool size_big)
{
	struct fsck *f = p->f;
	struct tux3_volume *vol = p->vol;
	tux3_ino_t inum = inode->inum;
	uint64_t dataend = p->cur.dataend, size = inode->size;
	uint64_t reach = dataend << vol->blockbits;
	uint64_t max = iattr_max_size(vol->blockbits);
	char why[200];

	/* a symlink's size is its target's: one too big makes it bad */
	if (size_big && !p->cur.symlink) {
		uint64_t to = p->cur.internal ? max : reach;
		want_size(p, fsck_problem(f, P4_SIZE_BIG, true,
					  FSCK_AT(.inum = inum, .have = size,
						  .want = to), inum, size, max),
			  to);
		size = to;	/* the other size checks are answered */
	}
	if (p->cur.internal)
		return 0;
	switch (inode->mode & S_IFMT) {
	case S_IFDIR:
		if (size & (vol->blocksize - 1)) {
			uint64_t to = size & ~(uint64_t)(vol->blocksize - 1);
			if (to < reach)
				to = reach;
			want_size(p, fsck_problem(f, P4_DIR_SIZE, true,
						  FSCK_AT(.inum = inum,
							  .have = size,
							  .want = to),
						  inum, size), to);
			return 0;
		}
		/* fall through */
	case S_IFREG:
		/* the last mapped block must start below the size */
		if (dataend && size <= (dataend - 1) << vol->blockbits)
			want_size(p, fsck_problem(f, P4_SIZE_SHORT, true,
						  FSCK_AT(.inum = inum,
							  .have = size,
							  .want = reach),
						  inum, size, reach), reach);
		return 0;
	case S_IFLNK: {
		/* a target with a piece missing is no target: no rebuild */
		int bad = 1;
		if (p->cur.data_bad)
			snprintf(why, sizeof(why), "its data map is damaged");
		else
			bad = symlink_check(p, inode, why, sizeof(why));
		if (bad < 0)
			return bad;
		if (bad)
			want(p, fsck_problem(f, P4_SYMLINK_BAD, true,
					     FSCK_AT(.inum = inum), inum, why),
			     F_CLEAR);
		return 0;
	}
	default:
		if (inode->dtree)
			want(p, fsck_problem(f, P4_SPECIAL_DATA, true,
					     FSCK_AT(.inum = inum), inum,
					     special_name(inode->mode)),
			     F_DROP);
		return 0;
	}
}

static int end_of(void *ctx, const struct extent *x)
{
	uint64_t *end = ctx;
	if (x->logical + x->count > *end)
		*end = x->logical + x->count;
	return 0;
}

/* The size checks are the live version's: in a versioned tree, only the
 * blocks it reads count (the walk counted every version's). */
static int live_dataend(struct p4 *p, tux3_ino_t inum, uint64_t dtree)
{
	struct tux3_volume *vol = p->vol;
	struct inode t = { .inum = inum, .dtree = dtree };
	if (!vol->vt || !dtree || p->cur.data_bad ||
	    !vfilemap_is_versioned(vol, &t)) {
		tux3_clear_error(vol);
		return 0;
	}
	uint64_t end = 0;
	int err = vfilemap_walk(vol, &t, vol->vt, VERSION_ORIGIN, 0,
				TUX3_KEY_LIMIT, end_of, &end);
	if (err == -ENOMEM)
		return err;
	tux3_clear_error(vol);
	if (!err)
		p->cur.dataend = end;
	return 0;
}

/*
 * The blocks of the inode's attribute chain (format.md 17.3b) are
 * referenced as its data tree's nodes are.  One that does not read
 * (phase 1 reports it) references nothing: the repair drops the SPILL
 * attribute, the blocks that did read are then leaks for pass 8, and
 * the versions whose attributes were there read their nearest
 * ancestor's (pass 9 checks what that makes of their namespaces).
 */
static int spill_walk(struct p4 *p, tux3_ino_t inum, const uint8_t *blob,
		      unsigned len, bool report)
{
	struct tux3_volume *vol = p->vol;
	uint64_t *blocks;
	unsigned n;
	char what[300];
	if (!vtable_marked(vol) || !vspill_has(blob, len))
		return 0;
	int err = vspill_blocks(vol, inum, blob, len, &blocks, &n);
	if (err == -ENOMEM)
		return err;
	if (err) {
		error_what(vol, inum, err, what, sizeof(what));
		if (report && !p->cur.quiet)
			want(p, fsck_problem(p->f, P4_SPILL_BAD, true,
					     FSCK_AT(.inum = inum), inum,
					     what), F_SPILL);
		return p->f->stop ? -ECANCELED : 0;
	}
	for (unsigned i = 0; i < n; i++)
		ref(p, W_DNODE, inum, i, blocks[i], 1);
	free(blocks);
	return 0;
}

/* The leaf's blob without its SPILL attribute (F_SPILL). */
static int spill_drop(struct p4 *p, tux3_ino_t inum)
{
	struct tux3_volume *vol = p->vol;
	uint8_t *raw;
	unsigned len;
	int err = itree_blob(vol, inum, &raw, &len);
	if (!err && len) {
		unsigned n = vspill_strip(raw, len);
		if (n != len)
			err = itree_store_leaf(vol, inum, raw, n);
	}
	free(raw);
	return err;
}

/* On a volume with versions: an inode the live version does not have,
 * which a snapshot does, or a snapshot a pending delete removes (the
 * delete, finished, frees it).  Its blocks count like any inode's; its
 * attributes are the snapshot's (pass 9 checks their lists, and the
 * namespace of each version). */
static bool snapshot_only(struct tux3_volume *vol, tux3_ino_t inum,
			  const struct inode *inode, const uint8_t *blob,
			  unsigned len)
{
	struct vattrs x;
	unsigned bad_at;
	if (!vinode_applies(vol, inum) ||
	    (inode->present & (1u << ATTR_MODE_OWNER)) ||
	    vattrs_decode_whole(vol, inum, blob, len, &x, &bad_at))
		return false;
	bool live = vattrs_inode_live(vol->vt, &x) ||
		    vattrs_inode_dying(vol->vt, &x);
	vattrs_free(&x);
	return live;
}

static int p1_inode(struct p4 *p, tux3_ino_t inum, const uint8_t *blob,
		    unsigned len, uint64_t leafblock)
{
	struct fsck *f = p->f;
	struct tux3_volume *vol = p->vol;
	struct inode inode;
	struct tdec d = { .p = p, .inode = &inode };
	char what[300];
	int err;

	p->cur.inum = inum;
	p->cur.internal = is_internal(inum);
	p->cur.quiet = false;
	p->cur.data_bad = false;
	p->cur.symlink = false;
	p->cur.dataend = 0;
	uint64_t found = f->res->found;
	p->cur.r = (struct rec){ .inum = inum };

	/* what pass 9 has to check: inodes some version changed */
	if (vol->vt && !vattrs_plain(blob, len))
		f->vblobs++;
	err = tdecode(&d, vol, inum, blob, len, leafblock, what, sizeof(what));
	if (err == -ENOMEM)
		goto out;
	if (!err && vol->vt && !vattrs_plain(blob, len) &&
	    (err = versions_decode(vol, inum, blob, len, what,
				   sizeof(what))) == -ENOMEM)
		goto out;
	p->cur.r.flags |= d.flags;
	p->cur.r.fixes += d.fixes;
	/* the attribute fixes too take the coarse fix (want()) when this
	 * inode's repair failed in an earlier round */
	if (d.fixes && !p->cur.internal && inum > TUX3_ROOT_INO &&
	    fsck_refused_inode(f, inum))
		p->cur.r.flags = F_CLEAR;
	bool whole = !err, size_big = false;
	bool elsewhere = whole && snapshot_only(vol, inum, &inode, blob, len);
	if (elsewhere) {
		/* nothing of the live version's to check: only its data */
	} else if (!whole) {
		/* the internal inodes are not cleared (clearable() says
		 * which are made again when they go) */
		want(p, fsck_problem(f, P4_INODE_BAD, clearable(f, inum),
				     FSCK_AT(.inum = inum), inum, what),
		     F_CLEAR);
		p->cur.quiet = true;
	} else if (!p->cur.internal && inum != TUX3_ROOT_INO &&
		   inode_dtype(inode.mode) == TUX3_DT_UNKNOWN) {
		want(p, fsck_problem(f, P4_MODE_BAD, true,
				     FSCK_AT(.inum = inum),
				     inum, (uint64_t)inode.mode), F_CLEAR);
		p->cur.quiet = true;
	} else if (inum == TUX3_ROOT_INO && !S_ISDIR(inode.mode)) {
		want(p, fsck_problem(f, P4_ROOT_MODE, true,
				     FSCK_AT(.inum = inum),
				     (uint64_t)inode.mode), F_ROOTDIR);
	} else if (p->cur.internal && (inode.mode & S_IFMT)) {
		/* the format's internal inodes (bitmap, countmap, version
		 * and atom tables) are files of no type: one that says it
		 * is a directory or a device would be read as one */
		want(p, fsck_problem(f, P4_INTERNAL_MODE, true,
				     FSCK_AT(.inum = inum), inum,
				     (uint64_t)inode.mode), F_NOTYPE);
	}
	p->cur.symlink = !p->cur.internal && S_ISLNK(inode.mode);
	if (whole && inode.size > iattr_max_size(vol->blockbits)) {
		size_big = true;
		d.library_refuses = true;
	}
	if (f->stop)
		goto out;

	struct root r = root_unpack(inode.dtree);
	if (inode.dtree && (r.direct ? !r.count ||
			    !extent_inside(vol, r.block, r.count) :
			    r.depth < 1 || r.depth > TUX3_MAX_DEPTH ||
			    r.block < vol->reserved_blocks ||
			    r.block >= vol->volblocks))
		d.library_refuses = true;
	if ((err = data_walk(p, inum, inode.dtree, &p1_ops, NULL)))
		goto out;
	if ((err = spill_walk(p, inum, blob, len, true)))
		goto out;
	if ((err = live_dataend(p, inum, inode.dtree)))
		goto out;

	if (!p->cur.quiet && !elsewhere && !d.library_refuses &&
	    f->res->found == found) {
		/* nothing found: the library must agree, or something this
		 * pass does not know about makes the inode unreadable */
		struct inode check;
		tux3_clear_error(vol);
		err = inode_from_blob(vol, inum, blob, len, leafblock, &check);
		if (err == -ENOMEM)
			goto out;
		if (err) {
			error_what(vol, inum, err, what, sizeof(what));
			want(p, fsck_problem(f, P4_INODE_BAD,
					     clearable(f, inum),
					     FSCK_AT(.inum = inum), inum, what),
			     F_CLEAR);
			p->cur.quiet = true;
		} else {
			inode_free(&check);
		}
		err = 0;
	}
	if (!p->cur.quiet && !elsewhere && !f->stop)
		err = p1_type(p, &inode, size_big);
out:
	inode_free(&inode);
	if (err)
		return err;
	if (p->cur.r.fixes) {
		/* what the repair does follows from the worst of it */
		if (p->cur.r.flags & F_CLEAR)
			p->cur.r.flags = F_CLEAR;
		struct rec *rec = rec_get(p, inum);
		if (rec)
			*rec = p->cur.r;
		else	/* the bound is met: answered, not repaired */
			f->res->unfixed += p->cur.r.fixes;
	}
	return f->stop ? -ECANCELED : 0;
}

/* ---- phase 2: one inode ---- */

static int p2_node(struct dwalk *w, uint64_t block, bool leaf)
{
	(void)leaf;
	ref(w->p, is_internal(w->inum) ? W_INTERNAL_NODE : W_DNODE, w->inum, 0,
	    block, 1);
	return 0;
}

static int p2_extent(struct dwalk *w, uint64_t logical, uint64_t physical,
		     uint64_t count)
{
	ref(w->p, is_internal(w->inum) ? W_INTERNAL : W_EXTENT, w->inum,
	    logical, physical, count);
	return 0;
}

static int p2_outside(struct dwalk *w, uint64_t logical, uint64_t physical,
		      uint64_t count)
{
	(void)w; (void)logical; (void)physical; (void)count;
	return 0;
}

static const struct dwalk_ops p2_ops = {
	.node = p2_node, .extent = p2_extent, .outside = p2_outside,
};

static int p2_inode(struct p4 *p, tux3_ino_t inum, const uint8_t *blob,
		    unsigned len, uint64_t leafblock)
{
	struct inode inode;
	struct tdec d = { .inode = &inode };
	char what[8];
	/* inodes cleared or losing their data own nothing any more */
	if (rec_flags(p, inum) & (F_CLEAR | F_DROP))
		return 0;
	int err = tdecode(&d, p->vol, inum, blob, len, leafblock, what,
			  sizeof(what));
	if (err != -ENOMEM)
		err = data_walk(p, inum, inode.dtree, &p2_ops, NULL);
	if (!err && !(rec_flags(p, inum) & F_SPILL))
		err = spill_walk(p, inum, blob, len, false);
	inode_free(&inode);
	return err;
}

/* ---- the walk of everything referenced (phases 1 and 2) ---- */

static int it_node(void *ctx, struct btree *bt, int level, uint64_t blocknr,
		   const uint8_t *buf, uint64_t lo, uint64_t hi)
{
	struct p4 *p = ctx;
	(void)level; (void)buf; (void)lo; (void)hi;
	ref(p, bt->ops == &otree_ops ? W_OTREE : W_ITREE, 0, 0, blocknr, 1);
	return 0;
}

static int it_leaf(void *ctx, struct btree *bt, uint64_t blocknr,
		   const uint8_t *leaf, uint64_t lo, uint64_t hi)
{
	struct p4 *p = ctx;
	struct tux3_volume *vol = p->vol;
	(void)lo; (void)hi;
	ref(p, bt->ops == &otree_ops ? W_OTREE : W_ITREE, 0, 0, blocknr, 1);
	if (bt->ops == &otree_ops)
		return 0;
	uint64_t ibase = ileaf_ibase(leaf);
	unsigned count = ileaf_count(leaf);
	/* the blobs are in the traversal's buffer for this leaf, which the
	 * data walks below do not touch (they have their own) */
	for (unsigned k = 0; k < count; k++) {
		const uint8_t *blob;
		unsigned len;
		ileaf_blob(leaf, vol->blocksize, ibase + k, &blob, &len);
		if (!len)
			continue;
		int err = p->phase == PH_MARK ?
			  p1_inode(p, ibase + k, blob, len, blocknr) :
			  p2_inode(p, ibase + k, blob, len, blocknr);
		if (err)
			return err;
		if (p->phase == PH_MARK &&
		    (++p->f->progress & 1023) == 0) {
			fsck_progress(p->f, p->f->progress,
				      p->f->progress_max);
			if (fsck_cancelled(p->f))
				return -ECANCELED;
		}
	}
	return 0;
}

static int it_bad(void *ctx, struct btree *bt, int level, uint64_t blocknr,
		  int err)
{
	struct p4 *p = ctx;
	(void)bt; (void)level; (void)blocknr; (void)err;
	tux3_clear_error(p->vol);	/* pass 3's */
	return 0;
}

static int walk_all(struct p4 *p)
{
	static const struct btree_visit visit = {
		.bnode = it_node, .leaf = it_leaf, .bad = it_bad,
	};
	struct tux3_volume *vol = p->vol;
	int err;

	p->seq = 0;
	ref(p, W_RESERVED, 0, 0, 0, vol->reserved_blocks);
	for (unsigned i = 0; i < vol->logcount && vol->log; i++)
		ref(p, W_LOG, 0, 0, vol->log[i].blocknr, 1);
	/* still in use until the next unify frees them (the log blocks are
	 * on that list too: marked above) */
	for (unsigned i = 0; i < vol->ndeunify; i++) {
		bool is_log = false;
		for (unsigned k = 0; k < vol->logcount && vol->log; k++)
			if (vol->log[k].blocknr == vol->deunify[i].block)
				is_log = true;
		if (!is_log)
			ref(p, W_PENDING, 0, 0, vol->deunify[i].block,
			    vol->deunify[i].count);
	}
	/* freed by the open delta: in use until its commit is durable */
	for (size_t i = 0; i < vol->defer_free.count; i++)
		ref(p, W_PENDING, 0, 0, vol->defer_free.v[i].block,
		    vol->defer_free.v[i].count);

	struct btree it = { .vol = vol, .root = vol->iroot, .ops = &itree_ops };
	tux3_clear_error(vol);
	err = btree_traverse(&it, &visit, p);
	tux3_clear_error(vol);
	if (err < 0 && err != -EUCLEAN)
		return err;
	if (vol->super.oroot) {
		struct btree ot = { .vol = vol, .root = vol->oroot,
				    .ops = &otree_ops };
		err = btree_traverse(&ot, &visit, p);
		tux3_clear_error(vol);
		if (err < 0 && err != -EUCLEAN)
			return err;
	}
	return 0;
}

/* ---- phase 2: who keeps a block met twice, who gets a copy ---- */

static int rank(uint8_t what)
{
	return what <= W_OTREE ? 0 : what <= W_INTERNAL ? 1 :
	       what == W_DNODE ? 2 : 3;
}

static void describe(const struct owner *o, char *buf, size_t len)
{
	switch (o->what) {
	case W_RESERVED: snprintf(buf, len, "the reserved area"); break;
	case W_LOG: snprintf(buf, len, "the log"); break;
	case W_PENDING:
		snprintf(buf, len, "blocks freed only at the next commit");
		break;
	case W_ITREE: snprintf(buf, len, "the inode table"); break;
	case W_OTREE: snprintf(buf, len, "the orphan table"); break;
	case W_INTERNAL_NODE: case W_DNODE:
		snprintf(buf, len, "the data tree of inode %" PRIu64, o->inum);
		break;
	default:
		snprintf(buf, len, "inode %" PRIu64, o->inum);
		break;
	}
}

static int cmp_owner(const void *a, const void *b)
{
	const struct owner *x = a, *y = b;
	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool owner_gone(struct p4 *p, const struct owner *o)
{
	return (o->what == W_DNODE || o->what == W_EXTENT) &&
	       (rec_flags(p, o->inum) & (F_CLEAR | F_DROP));
}

static int copy_add(struct p4 *p, uint64_t inum, uint64_t logical,
		    uint64_t physical, uint64_t count)
{
	struct copy *v = grow(p->copies, &p->capcopies, p->ncopies,
			      sizeof(*v), MAX_COPIES);
	if (!v) {
		p->full = true;
		return -ENOSPC;
	}
	p->copies = v;
	v[p->ncopies++] = (struct copy){ inum, logical, count, physical };
	return 0;
}

/* The atom table's data map can be rebuilt (map_mendable), on a volume
 * with versions too (pass 6 drops the lost atoms' xattrs from every
 * version): its extents get copies as a file's do, from another owner
 * or from each other. */
static bool atom_extent(const struct owner *o)
{
	return o->what == W_INTERNAL && o->inum == TUX3_ATABLE_INO;
}

/*
 * An owner's rank, as rank() gives it, but the version table's blocks
 * last when the table does not decode (vt_bad): its map is then what
 * damage made it (a dleaf given another file's extents), its contents
 * are pass 9's to write again through a fresh map, and the blocks it
 * claims are the other owner's.  Nothing is done for it here.
 */
static int owner_rank(const struct p4 *p, const struct owner *o)
{
	if (o->inum == TUX3_VTABLE_INO && p->vol->vt_bad &&
	    (o->what == W_INTERNAL || o->what == W_INTERNAL_NODE))
		return 4;
	return rank(o->what);
}

/* One stretch [s, e) and the owners covering it: step 0 settles data
 * trees against the tables and each other, step 1 extents. */
static int settle(struct p4 *p, int step, uint64_t s, uint64_t e,
		  const struct owner *g, size_t n)
{
	const struct owner *keeper = NULL;
	char desc[80];
	for (size_t k = 0; k < n; k++) {
		const struct owner *o = &g[k];
		if (o->block > s || o->block + o->count <= s)
			continue;
		if (o->inum == TUX3_VTABLE_INO && (o->what == W_INTERNAL ||
						   o->what == W_INTERNAL_NODE))
			p->f->vtable_shared = true;
		if (owner_gone(p, o) || (step == 0 && owner_rank(p, o) > 2))
			continue;
		/* the lowest rank, then the first met in the walk */
		if (!keeper || owner_rank(p, o) < owner_rank(p, keeper) ||
		    (owner_rank(p, o) == owner_rank(p, keeper) &&
		     o->seq < keeper->seq))
			keeper = o;
	}
	if (!keeper)
		return 0;
	describe(keeper, desc, sizeof(desc));
	for (size_t k = 0; k < n && !p->f->stop; k++) {
		const struct owner *o = &g[k];
		if (o == keeper || o->block > s || o->block + o->count <= s ||
		    owner_gone(p, o))
			continue;
		if (step == 0 && o->what == W_DNODE) {
			struct rec *r = rec_get(p, o->inum);
			if (!r || (r->flags & F_SHARE_TOLD))
				continue;
			r->flags |= F_SHARE_TOLD;
			char what[120];
			snprintf(what, sizeof(what), "also used by %s", desc);
			if (fsck_problem(p->f, P4_DTREE_BAD, true,
					 FSCK_AT(.inum = o->inum, .block = s,
						 .count = e - s),
					 o->inum, s, what)) {
				r = rec_get(p, o->inum);
				r->flags = (r->flags & ~F_REBUILD) | F_DROP;
				r->fixes++;
			}
		} else if (step == 1 && (o->what == W_EXTENT ||
					 atom_extent(o))) {
			struct rec *r = rec_get(p, o->inum);
			bool fixable = r && p->ncopies < MAX_COPIES;
			if (fsck_problem(p->f, P4_EXTENT_SHARED, fixable,
					 FSCK_AT(.inum = o->inum, .block = s,
						 .count = e - s),
					 o->inum, s, e - s, desc)) {
				r = rec_get(p, o->inum);
				if (copy_add(p, o->inum,
					     o->logical + (s - o->block), s,
					     e - s)) {
					p->f->res->unfixed++;
					continue;
				}
				r->flags |= F_REBUILD;
				r->fixes++;
			}
		}
	}
	return 0;
}

static int decide(struct p4 *p)
{
	if (!p->nown)
		return 0;
	qsort(p->own, p->nown, sizeof(*p->own), cmp_owner);
	uint64_t *cut = malloc(2 * (p->nown + 1) * sizeof(*cut));
	if (!cut)
		return -ENOMEM;
	for (int step = 0; step < 2 && !p->f->stop; step++) {
		size_t i = 0;
		while (i < p->nown && !p->f->stop) {
			/* the owners of one run are together: pieces were
			 * cut at the runs' bounds */
			size_t r = run_after(p, p->own[i].block), j = i;
			uint64_t end = r < p->nruns ? p->runs[r].end :
				       UINT64_MAX;
			size_t ncut = 0;
			while (j < p->nown && p->own[j].block < end) {
				cut[ncut++] = p->own[j].block;
				cut[ncut++] = p->own[j].block +
					      p->own[j].count;
				j++;
			}
			qsort(cut, ncut, sizeof(*cut), cmp_u64);
			for (size_t c = 0; c + 1 < ncut; c++) {
				if (cut[c] == cut[c + 1])
					continue;
				int err = settle(p, step, cut[c], cut[c + 1],
						 &p->own[i], j - i);
				if (err) {
					free(cut);
					return err;
				}
			}
			i = j;
		}
	}
	free(cut);
	return 0;
}

/* ---- phase 3: repairs ---- */

static int shield_scan(struct p4 *p);

static bool shielded(const struct p4 *p, uint64_t b)
{
	size_t lo = 0, hi = p->f->shield.count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->f->shield.v[mid].block + p->f->shield.v[mid].count <= b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->f->shield.count && p->f->shield.v[lo].block <= b;
}

static int by_block(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Hold the blocks referenced but free in the bitmap in use, so that the
 * repairs' allocations pass them by.  Pass 3 may have shielded some
 * already (fsck_shield_refs): the list is sorted again for shielded(). */
static int shield_on(struct p4 *p)
{
	size_t before = p->f->shield.count;
	int err = shield_scan(p);
	if (!err && before)
		qsort(p->f->shield.v, p->f->shield.count,
		      sizeof(*p->f->shield.v), by_block);
	return err;
}

static int shield_scan(struct p4 *p)
{
	struct tux3_volume *vol = p->vol;
	unsigned shift = vol->blockbits + 3;
	for (struct spacemap_chunk *c = spacemap_next(&p->map, 0); c;
	     c = spacemap_next(&p->map, c->index + 1)) {
		for (uint64_t bit = 0; bit < 1ULL << shift; bit++) {
			uint64_t b = c->index << shift | bit;
			if (!(bit & 7) && !c->bits[bit >> 3]) {
				bit += 7;
				continue;
			}
			if (b >= vol->volblocks || !(c->bits[bit >> 3] >>
						     (bit & 7) & 1))
				continue;
			int used = bitmap_test(vol, b);
			if (used < 0)
				return used;
			if (used)
				continue;
			int64_t r = bitmap_modify(vol, b, 1, true);
			if (r < 0)
				return (int)r;
			struct extent_list *l = &p->f->shield;
			if (l->count && l->v[l->count - 1].block +
			    l->v[l->count - 1].count == b)
				l->v[l->count - 1].count++;
			else if ((r = extent_list_add(l, b, 1)))
				return (int)r;
		}
	}
	return 0;
}

int fsck_shield_off(struct fsck *f)
{
	int err = 0;
	for (size_t i = 0; i < f->shield.count; i++) {
		int64_t r = bitmap_modify(f->vol, f->shield.v[i].block,
					  f->shield.v[i].count, false);
		if (r < 0 && !err)
			err = (int)r;
	}
	extent_list_free(&f->shield);
	return err;
}

/* Give back a run no longer referenced: never a block with another
 * owner, nor one the bitmap already had free; tree index nodes at the
 * unify (replay may still need them until then), the rest once the
 * commit is durable. */
static int release(struct p4 *p, uint64_t block, uint64_t count, bool bnode)
{
	struct tux3_volume *vol = p->vol;
	if (!extent_inside(vol, block, count))
		return 0;
	for (uint64_t b = block; b < block + count;) {
		if (in_runs(p, b) || shielded(p, b)) {
			b++;
			continue;
		}
		uint64_t e = b + 1;
		while (e < block + count && e - b < (1u << 30) &&
		       !in_runs(p, e) && !shielded(p, e))
			e++;
		int err;
		if (bnode) {
			err = log_bfree(vol, LOG_BFREE_ON_UNIFY, b, e - b);
			if (!err)
				err = defer_unify_add(vol, b, (uint32_t)(e - b));
		} else {
			err = log_bfree(vol, LOG_BFREE, b, e - b);
			for (uint64_t x = b; x < e && !err; x++)
				err = blockset_has(&vol->fresh, x) ?
				      bfree_now(vol, x, 1) :
				      bfree_deferred(vol, x, 1);
		}
		if (err)
			return err;
		b = e;
	}
	return 0;
}

static int rel_node(struct dwalk *w, uint64_t block, bool leaf)
{
	return release(w->p, block, 1, !leaf);
}

static int rel_extent(struct dwalk *w, uint64_t logical, uint64_t physical,
		      uint64_t count)
{
	(void)logical;
	return release(w->p, physical, count, false);
}

static int skip_outside(struct dwalk *w, uint64_t logical, uint64_t physical,
			uint64_t count)
{
	(void)w; (void)logical; (void)physical; (void)count;
	return 0;
}

static const struct dwalk_ops release_ops = {
	.node = rel_node, .extent = rel_extent, .outside = skip_outside,
};

/* The new map of a rebuild, in the inode being repaired. */
struct rebuild {
	struct inode *inode;
	const struct copy *copies;	/* of this inode, by logical */
	size_t ncopies;
	size_t next;			/* extents come in logical order */
};

/* Copy count blocks from src into new blocks mapped at logical. */
static int copy_blocks(struct p4 *p, struct inode *inode, uint64_t logical,
		       uint64_t src, uint64_t count)
{
	struct tux3_volume *vol = p->vol;
	unsigned bits = vol->blockbits;
	while (count) {
		uint64_t block, got;
		int err = balloc(vol, src, count, true, &block, &got);
		if (!err)
			err = log_balloc(vol, block, got);
		for (uint64_t i = 0; i < got && !err; i++) {
			err = blockset_add(&vol->fresh, block + i);
			if (err > 0)
				err = 0;
			if (!err)
				err = dev_pread(&vol->dev, p->buf,
						vol->blocksize,
						(src + i) << bits);
			if (!err)
				err = dev_pwrite(&vol->dev, p->buf,
						 vol->blocksize,
						 (block + i) << bits);
		}
		if (!err)
			err = filemap_set(vol, inode, logical, block, got);
		if (err)
			return err;
		logical += got;
		src += got;
		count -= got;
	}
	return 0;
}

static int rb_extent(struct dwalk *w, uint64_t logical, uint64_t physical,
		     uint64_t count)
{
	struct rebuild *rb = w->ctx;
	struct p4 *p = w->p;
	uint64_t at = logical, end = logical + count;
	size_t c = rb->next;
	while (at < end) {
		while (c < rb->ncopies &&
		       rb->copies[c].logical + rb->copies[c].count <= at)
			c++;
		const struct copy *k = c < rb->ncopies ? &rb->copies[c] : NULL;
		uint64_t stop;
		int err;
		if (k && k->logical <= at) {
			stop = k->logical + k->count < end ?
			       k->logical + k->count : end;
			err = copy_blocks(p, rb->inode, at,
					  physical + (at - logical), stop - at);
		} else {
			stop = k && k->logical < end ? k->logical : end;
			err = filemap_set(p->vol, rb->inode, at,
					  physical + (at - logical), stop - at);
		}
		if (err)
			return err;
		at = stop;
	}
	rb->next = c;
	return 0;
}

static const struct dwalk_ops rebuild_ops = {
	.node = rel_node, .extent = rb_extent, .outside = skip_outside,
};

/*
 * A versioned data map is rebuilt as the live version sees it, as a
 * plain map: the rebuild writes no versioned records, so the snapshots'
 * own extents of this file are released and the snapshots then read the
 * live data.  Flattening every version's extents instead would hand the
 * live version blocks it never had (a snapshot's extent damaged to cover
 * other owners' blocks became live data beyond the size).
 */
struct live_view {
	struct extent *seg;	/* by logical, then sorted by physical */
	size_t n, cap;
};

static int live_add(void *ctx, const struct extent *x)
{
	struct live_view *v = ctx;
	if (!x->physical)
		return 0;	/* a hole */
	struct extent *seg = grow(v->seg, &v->cap, v->n, sizeof(*seg),
				  SIZE_MAX / sizeof(*seg));
	if (!seg)
		return -ENOMEM;
	v->seg = seg;
	v->seg[v->n++] = *x;
	return 0;
}

static int cmp_physical(const void *a, const void *b)
{
	const struct extent *x = a, *y = b;
	return x->physical < y->physical ? -1 : x->physical > y->physical;
}

/* Map one live segment, copying the pieces other owners keep. */
static int live_map(struct p4 *p, struct inode *inode, const struct extent *x,
		    const struct copy *k, size_t nk)
{
	uint64_t at = x->physical, end = x->physical + x->count;
	while (at < end) {
		uint64_t stop = end;
		const struct copy *in = NULL;
		for (size_t i = 0; i < nk; i++) {
			uint64_t ks = k[i].physical, ke = ks + k[i].count;
			if (ks <= at && at < ke) {
				in = &k[i];
				stop = ke < end ? ke : end;
				break;
			}
			if (ks > at && ks < stop)
				stop = ks;
		}
		uint64_t logical = x->logical + (at - x->physical);
		int err = in ? copy_blocks(p, inode, logical, at, stop - at) :
			  filemap_set(p->vol, inode, logical, at, stop - at);
		if (err)
			return err;
		at = stop;
	}
	return 0;
}

/* The old map's blocks the live view does not keep are released. */
static int rel_unless_live(struct dwalk *w, uint64_t logical,
			   uint64_t physical, uint64_t count)
{
	const struct live_view *v = w->ctx;
	uint64_t at = physical, end = physical + count;
	(void)logical;
	for (size_t i = 0; i < v->n && at < end; i++) {
		uint64_t ls = v->seg[i].physical, le = ls + v->seg[i].count;
		if (le <= at || ls >= end)
			continue;
		if (ls > at) {
			int err = release(w->p, at, ls - at, false);
			if (err)
				return err;
		}
		at = le;
	}
	return at < end ? release(w->p, at, end - at, false) : 0;
}

static const struct dwalk_ops release_dead_ops = {
	.node = rel_node, .extent = rel_unless_live, .outside = skip_outside,
};

/* Returns 1 when the old map is not versioned (the plain rebuild's). */
static int rebuild_live_view(struct p4 *p, struct inode *inode, uint64_t old,
			     const struct copy *k, size_t nk)
{
	struct tux3_volume *vol = p->vol;
	struct inode t = { .inum = inode->inum, .dtree = old };
	if (!vol->vt || !vfilemap_is_versioned(vol, &t)) {
		tux3_clear_error(vol);
		return 1;
	}
	struct live_view v = { 0 };
	int err = vfilemap_walk(vol, &t, vol->vt, VERSION_ORIGIN, 0,
				TUX3_KEY_LIMIT, live_add, &v);
	if (err && err != -ENOMEM) {
		/* unreadable as versions: every readable extent instead */
		tux3_clear_error(vol);
		free(v.seg);
		return 1;
	}
	fsck_info(p->f, "inode %" PRIu64 ": its data map is versioned: it "
		  "is rebuilt as the live version reads it, which the "
		  "snapshots then read too", inode->inum);
	for (size_t i = 0; i < v.n && !err; i++)
		err = live_map(p, inode, &v.seg[i], k, nk);
	if (!err && v.n > 1)
		qsort(v.seg, v.n, sizeof(*v.seg), cmp_physical);
	if (!err)
		err = data_walk(p, inode->inum, old, &release_dead_ops, &v);
	free(v.seg);
	return err;
}

static int clear_inode(struct p4 *p, tux3_ino_t inum)
{
	struct tux3_volume *vol = p->vol;
	struct inode inode;
	bool whole;
	int err = load_tolerant(p, inum, &inode, &whole);
	if (err)
		return err;
	err = data_walk(p, inum, inode.dtree, &release_ops, NULL);
	/* its xattrs' atoms lose a user, as when the write path destroys
	 * an inode; a damaged atom table is pass 6's */
	for (unsigned i = 0; i < inode.nxattr && !err; i++) {
		int r = atom_put(vol, inode.xattrs[i].atom);
		tux3_clear_error(vol);
		if (r == -ENOMEM)
			err = r;
	}
	if (!err)
		err = inode_delete(vol, inum);
	if (!err) {
		uint64_t used = vol->super.usedinodes;
		repair_set_usedinodes(vol, used ? used - 1 : 0);
		err = fsck_inodes_gone(vol, inum, inum + 1);
	}
	inode_free(&inode);
	return err;
}

static int cmp_copy(const void *a, const void *b)
{
	const struct copy *x = a, *y = b;
	if (x->inum != y->inum)
		return x->inum < y->inum ? -1 : 1;
	return x->logical < y->logical ? -1 : x->logical > y->logical;
}

static int mend_inode(struct p4 *p, const struct rec *r)
{
	struct tux3_volume *vol = p->vol;
	struct inode inode;
	bool whole;
	int err = r->flags & F_SPILL ? spill_drop(p, r->inum) : 0;
	if (!err)
		err = load_tolerant(p, r->inum, &inode, &whole);
	if (err)
		return err;
	if (r->flags & F_ROOTDIR) {
		inode.mode = S_IFDIR | (inode.mode & 07777);
		inode.present |= 1u << ATTR_MODE_OWNER;
	}
	if (r->flags & F_NOTYPE) {
		inode.mode &= 07777;
		inode.present |= 1u << ATTR_MODE_OWNER;
	}
	if (r->flags & (F_DROP | F_REBUILD)) {
		uint64_t old = inode.dtree;
		inode.dtree = 0;
		if (r->flags & F_DROP) {
			err = data_walk(p, r->inum, old, &release_ops, NULL);
			if (!err && S_ISDIR(inode.mode)) {
				inode.size = 0;
				inode.present |= 1u << ATTR_CTIME_SIZE;
			}
		} else {
			/* this inode's copies, by logical */
			size_t lo = 0, hi = p->ncopies;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (p->copies[mid].inum < r->inum)
					lo = mid + 1;
				else
					hi = mid;
			}
			size_t n = lo;
			while (n < p->ncopies && p->copies[n].inum == r->inum)
				n++;
			err = rebuild_live_view(p, &inode, old, p->copies + lo,
						n - lo);
			if (err == 1) {
				struct rebuild rb = { &inode, p->copies + lo,
						      n - lo, 0 };
				err = data_walk(p, r->inum, old, &rebuild_ops,
						&rb);
			}
		}
		if (inode.dtree)
			inode.present |= 1u << ATTR_DATA_BTREE;
		else
			inode.present &= ~(1u << ATTR_DATA_BTREE);
	}
	if (r->flags & F_SIZE) {
		inode.size = r->size;
		inode.present |= 1u << ATTR_CTIME_SIZE;
	}
	if (!err)
		err = inode_store(vol, &inode);
	inode_free(&inode);
	return err;
}

static int repair(struct p4 *p)
{
	struct fsck *f = p->f;
	bool any = false;
	for (size_t i = 0; i < p->nrecs; i++)
		if (p->recs[i].fixes)
			any = true;
	if (!any || !fsck_repairing(f))
		return 0;
	if (p->ncopies > 1)
		qsort(p->copies, p->ncopies, sizeof(*p->copies),
		      cmp_copy);
	int err = 0;
	for (size_t i = 0; i < p->nrecs; i++) {
		const struct rec *r = &p->recs[i];
		if (!r->fixes)
			continue;
		if (fsck_cancelled(f) || f->err)
			break;
		tux3_clear_error(p->vol);
		if ((r->flags & F_CLEAR) && fsck_refused_inode(f, r->inum))
			fsck_info(f, "inode %" PRIu64 ": its repair failed in "
				  "an earlier round: the inode is cleared "
				  "instead", r->inum);
		int e = r->flags & F_CLEAR ? clear_inode(p, r->inum) :
			mend_inode(p, r);
		for (uint32_t k = 0; k < r->fixes; k++)
			fsck_fixed_inode(f, e, r->inum);
		if (e < 0)
			err = e;	/* the round is lost (see fsck.c) */
	}
	return err;
}

/* ---- the pass ---- */

static void p4_free(struct p4 *p)
{
	if (!p)
		return;
	spacemap_free(&p->map);
	free(p->runs);
	free(p->own);
	free(p->recs);
	free(p->copies);
	free(p->buf);
	free(p);
}

int fsck_pass4(struct fsck *f)
{
	struct tux3_volume *vol = f->vol;
	struct tux3_super_info si;
	struct p4 *p = calloc(1, sizeof(*p));
	int err = -ENOMEM;

	if (!p)
		return err;
	fsck_inode_state_free(f);
	f->inodes = p;
	p->f = f;
	p->vol = vol;
	p->buf = malloc(vol->blocksize);
	if (!p->buf || (err = spacemap_init(&p->map, vol->blockbits + 3,
					    vol->blockbits + 3,
					    vol->volblocks)))
		goto out;
	err = -ENOMEM;
	tux3_super_info(vol, &si);
	f->progress_max = si.usedinodes;

	p->phase = PH_MARK;
	f->vblobs = f->vtrees = 0;
	f->vcounted = false;
	if ((err = walk_all(p)) || (err = p->map_err))
		goto out;
	f->vcounted = true;
	f->vcounted_fixed = f->res->fixed;
	fsck_progress(f, f->progress, f->progress_max);
	runs_settle(p);
	if (p->nruns && !f->stop) {
		p->phase = PH_OWNERS;
		if ((err = walk_all(p)) || (err = decide(p)))
			goto out;
	}
	if (p->full)
		fsck_info(f, "too many damaged inodes or shared blocks to "
			  "repair them all in one run: run fsck again");
	/* from here to pass 8 no repair may allocate a block something
	 * references (a repair of pass 5 rewrites directory blocks too) */
	if (!f->stop && fsck_repairing(f) && (err = shield_on(p)))
		goto out;
	if (!f->stop) {
		p->phase = PH_REPAIR;
		err = repair(p);
	}
out:
	fsck_inode_state_free(f);
	if (err == -ECANCELED)
		err = 0;
	return err;
}

void fsck_inode_state_free(struct fsck *f)
{
	p4_free(f->inodes);
	f->inodes = NULL;
}
