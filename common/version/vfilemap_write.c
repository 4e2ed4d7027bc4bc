/*
 * Versioned file data changed (vfilemap.h): a write, a punch, a delete of
 * versions, a conversion of a 2014 map, and the whole map destroyed,
 * through the copy-on-write write path.  Reading is vfilemap.c's.
 *
 * Every change works leaf by leaf: the leaf for the next logical block is
 * made writable (btree_wprobe: copied on write once per delta), its
 * records are loaded into a struct vextents, the part of the change
 * inside the leaf's key range is applied there (vext_update /
 * vext_delete) and the records are stored back (vleaf_store).  When they
 * no longer fit, everything the attempt did is undone (its new data
 * blocks given back unlogged, its frees forgotten), the old leaf is split
 * (btree_split_leaf) and the leaf is done again; a leaf that cannot be
 * split takes the change in smaller pieces.  Only a stored leaf makes its
 * allocations (BALLOC, fresh) and frees (BFREE, freed at once when fresh,
 * else after the commit: filemap_write.c's release_blocks rule) real.
 * A version tree change an attempt made (an implicit child) stays: it
 * needs no leaf change, the new label inherits the old one's elements.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "version/vinode.h"
#include "version/version.h"
#include "version/vleaf.h"
#include "version/vfilemap.h"

/* The leaf holding key, made writable (copied on write once per delta):
 * its buffer and key range; the file's root follows a moved root. */
static int probe_leaf(struct tux3_volume *vol, struct inode *inode,
		      struct btree *bt, uint64_t key, struct wpath *p,
		      uint8_t **leaf, uint64_t *lo, uint64_t *hi)
{
	bool moved = false;
	int err = btree_wprobe(bt, key, p, &moved);
	if (moved)
		inode->dtree = root_pack(bt->root);
	if (err)
		return err;
	*lo = p->lv[p->depth - 1].lo;
	*hi = p->lv[p->depth - 1].hi;
	*leaf = wpath_leaf(vol, p);
	return *leaf ? 0 : -EIO;
}

/* A list of block numbers. */
struct blist {
	uint64_t *v;
	size_t n, cap;
};

static int blist_add(struct blist *l, uint64_t b)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		uint64_t *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = b;
	return 0;
}

/* Blocks a mapping change released, as filemap_set releases them: logged
 * (BFREE), freed at once if this delta allocated them, else after the
 * commit. */
static int release_list(struct tux3_volume *vol, struct blist *l)
{
	int err = 0;
	if (!l->n)
		return 0;
	qsort(l->v, l->n, sizeof(*l->v), cmp_u64);
	for (size_t i = 0; i < l->n && !err;) {
		size_t j = i + 1;
		while (j < l->n && l->v[j] == l->v[j - 1] + 1)
			j++;
		err = log_bfree(vol, LOG_BFREE, l->v[i], j - i);
		for (size_t k = i; k < j && !err; k++)
			err = blockset_has(&vol->fresh, l->v[k]) ?
			      bfree_now(vol, l->v[k], 1) :
			      bfree_deferred(vol, l->v[k], 1);
		i = j;
	}
	l->n = 0;
	return err;
}

/* New data blocks of a stored leaf: logged and fresh (rewritable in this
 * delta), as inode_write_data makes them. */
static int keep_allocs(struct tux3_volume *vol, struct blist *l)
{
	int err = 0;
	for (size_t i = 0; i < l->n && !err;) {
		size_t j = i + 1;
		while (j < l->n && l->v[j] == l->v[j - 1] + 1)
			j++;
		err = log_balloc(vol, l->v[i], j - i);
		for (size_t k = i; k < j && err >= 0; k++)
			err = blockset_add(&vol->fresh, l->v[k]);
		if (err > 0)
			err = 0;
		i = j;
	}
	l->n = 0;
	return err;
}

/* An attempt that was not stored: its new blocks go back, unlogged. */
static int undo_allocs(struct tux3_volume *vol, struct blist *l)
{
	int err = 0;
	for (size_t i = 0; i < l->n; i++) {
		int e = bfree_now(vol, l->v[i], 1);
		if (!err)
			err = e;
	}
	l->n = 0;
	return err;
}

struct uctx {
	struct tux3_volume *vol;
	uint64_t goal;
	struct blist alloc, freed;
	int err;
};

static uint64_t u_alloc(void *ctx)
{
	struct uctx *u = ctx;
	uint64_t b, got;
	if (u->err)
		return 0;
	int err = balloc(u->vol, u->goal, 1, false, &b, &got);
	if (!err && (err = blist_add(&u->alloc, b)))
		bfree_now(u->vol, b, 1);
	if (err) {
		u->err = err;
		return 0;
	}
	u->goal = b + 1;
	return b;
}

static void u_free(void *ctx, uint64_t phys)
{
	struct uctx *u = ctx;
	int err = blist_add(&u->freed, phys);
	if (err && !u->err)
		u->err = err;
}

/* Would the leaf split?  (a trial on copies: btree_split_leaf allocates
 * the new leaf before it asks) */
static int can_split(struct tux3_volume *vol, const uint8_t *leaf,
		     bool *yes)
{
	uint8_t *a = malloc(vol->blocksize), *b = malloc(vol->blocksize);
	uint64_t sep;
	int err = 0;
	*yes = false;
	if (!a || !b) {
		err = -ENOMEM;
	} else {
		memcpy(a, leaf, vol->blocksize);
		*yes = !vdtree_leaf_split(vol, a, b, &sep);
	}
	free(a);
	free(b);
	return err;
}

/* ---- element lists past the leaf (vechain.c, format.md 17.3c) ---- */

static int cmp_logical_label(const void *a, const void *b)
{
	const struct vextent *x = a, *y = b;
	if (x->logical != y->logical)
		return x->logical < y->logical ? -1 : 1;
	return x->label < y->label ? -1 : x->label > y->label;
}

/* The logical block in [lo, hi) with the most elements (records covering
 * it), and how many. */
static unsigned busiest(const struct vextents *x, uint64_t lo, uint64_t hi,
			uint64_t *at)
{
	unsigned best = 0;
	for (unsigned i = 0; i < x->n; i++) {
		uint64_t l = x->r[i].logical;
		if (l < lo || l >= hi || (i && x->r[i - 1].logical == l))
			continue;
		unsigned m = 0;
		for (unsigned j = 0; j < x->n && x->r[j].logical <= l; j++)
			m += l < x->r[j].logical + x->r[j].count;
		if (m > best) {
			best = m;
			*at = l;
		}
	}
	return best;
}

/* Every record covering logical cut so that its element there is a
 * one-block record of its own (x stays sorted; room for two more pieces
 * per record is made). */
static int cut_around(struct vextents *x, uint64_t logical)
{
	unsigned n = x->n;
	int err = vextents_reserve(x, n + 2 * n);
	for (unsigned i = 0; i < n && !err; i++) {
		struct vextent r = x->r[i];
		uint64_t end = r.logical + r.count;
		if (r.logical > logical || end <= logical || r.count == 1)
			continue;
		uint64_t off = logical - r.logical;
		x->r[i].logical = logical;
		x->r[i].count = 1;
		x->r[i].phys = r.phys ? r.phys + off : 0;
		if (off)
			x->r[x->n++] = (struct vextent){ .logical = r.logical,
				.count = (uint32_t)off, .label = r.label,
				.phys = r.phys };
		if (end > logical + 1)
			x->r[x->n++] = (struct vextent){
				.logical = logical + 1,
				.count = (uint32_t)(end - logical - 1),
				.label = r.label,
				.phys = r.phys ? r.phys + off + 1 : 0 };
	}
	if (!err)
		qsort(x->r, x->n, sizeof(*x->r), cmp_logical_label);
	return err;
}

static bool same_elements(const struct vechain_old *o, const struct vextent *e,
			  unsigned n)
{
	if (o->nelem != n)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (o->elem[i].label != e[i].label ||
		    o->elem[i].phys != e[i].phys)
			return false;
	return true;
}

/* The elements of the busiest block of x moved to a chain (the one the
 * load met when they are the same, else a new one: its blocks go to
 * u->alloc) and one ELIST record put in their place.  -ENOSPC: no block
 * has more than one element. */
static int externalize(struct tux3_volume *vol, tux3_ino_t inum,
		       struct vextents *x, uint64_t lo, uint64_t hi,
		       struct vechain_seen *seen, struct blist *alloc)
{
	uint64_t at = 0;
	if (busiest(x, lo, hi, &at) < 2)
		return -ENOSPC;
	int err = cut_around(x, at);
	if (err)
		return err;
	unsigned a = 0, b;
	while (a < x->n && x->r[a].logical < at)
		a++;
	for (b = a; b < x->n && x->r[b].logical == at; b++)
		;
	uint64_t first = 0;
	for (unsigned i = 0; seen && i < seen->n && !first; i++)
		if (seen->v[i].logical == at && !seen->v[i].kept &&
		    same_elements(&seen->v[i], x->r + a, b - a)) {
			seen->v[i].kept = true;
			first = seen->v[i].first;
		}
	if (!first) {
		uint64_t *blocks;
		unsigned n;
		uint64_t goal = x->r[a].phys ? x->r[a].phys :
				vol->alloc_cursor;
		if ((err = vechain_write(vol, inum, at, x->r + a, b - a, goal,
					 &blocks, &n)))
			return err;
		for (unsigned i = 0; i < n && !err; i++)
			err = blist_add(alloc, blocks[i]);
		first = blocks[0];
		free(blocks);
		if (err)
			return err;
	}
	x->r[a] = (struct vextent){ .logical = at, .count = 1,
				    .label = VERSION_ORIGIN, .phys = first,
				    .flags = VEXT_ELIST };
	memmove(x->r + a + 1, x->r + b, (x->n - b) * sizeof(*x->r));
	x->n -= b - a - 1;
	return 0;
}

/*
 * The records stored as the leaf covering [lo, hi).  With chains allowed,
 * a set that does not fit moves its busiest blocks' elements out until it
 * does.  Once stored, the chains the load met that the leaf no longer
 * names are released with u->freed.
 */
static int store_leaf(struct tux3_volume *vol, tux3_ino_t inum, uint8_t *leaf,
		      struct vextents *x, uint64_t lo, uint64_t hi,
		      bool chains, struct vechain_seen *seen,
		      struct blist *alloc, struct blist *freed)
{
	/* the labels first, while x holds every element (a chain takes
	 * some out of the leaf below) */
	int err = vindex_note_extents(vol, inum, x, lo, hi);
	if (err)
		return err;
	if (vol->vleaf_cap && vleaf_store_count(x, lo, hi) > vol->vleaf_cap) {
		/* a leaf filled to the knob: split it first, as a full one
		 * would be, then move the busiest blocks' elements out */
		if (!chains)
			return -ENOSPC;
		while (!err && vleaf_store_count(x, lo, hi) > vol->vleaf_cap)
			err = externalize(vol, inum, x, lo, hi, seen, alloc);
		if (err && err != -ENOSPC)
			return err;
	}
	err = vleaf_store(leaf, vol->blocksize, x, lo, hi);
	while (err == -ENOSPC && chains &&
	       !(err = externalize(vol, inum, x, lo, hi, seen, alloc)))
		err = vleaf_store(leaf, vol->blocksize, x, lo, hi);
	for (unsigned i = 0; !err && seen && i < seen->n; i++)
		for (unsigned k = 0; !seen->v[i].kept && !err &&
		     k < seen->v[i].nblocks; k++)
			err = blist_add(freed, seen->v[i].blocks[k]);
	return err;
}

/* An empty one-leaf tree goes (the file has no data in any version). */
static int drop_if_empty(struct tux3_volume *vol, struct inode *inode)
{
	struct root r = root_unpack(inode->dtree);
	if (!inode->dtree || r.direct || r.depth != 1)
		return 0;
	uint8_t *buf = malloc(vol->blocksize);
	if (!buf)
		return -ENOMEM;
	int err = vol_read_block(vol, r.block, buf);
	bool empty = !err && be16(buf) == TUX3_MAGIC_VLEAF &&
		     !vleaf_count(buf);
	free(buf);
	if (err || !empty)
		return err;
	if ((err = log_bfree(vol, LOG_BFREE, r.block, 1)))
		return err;
	err = blockset_has(&vol->fresh, r.block) ? bfree_now(vol, r.block, 1) :
	      bfree_deferred(vol, r.block, 1);
	if (!err)
		inode->dtree = 0;
	return err;
}

/* ---- conversion ---- */

int vfilemap_convert(struct tux3_volume *vol, struct inode *inode)
{
	enum vfilemap_kind kind;
	struct root r = root_unpack(inode->dtree);
	int err = vfilemap_kind(vol, inode, &kind);

	if (err || kind == VFM_NONE || kind == VFM_VLEAF)
		return err;
	if (vol->mode != TUX3_OPEN_RDWR)
		return -EROFS;
	if (kind == VFM_DIRECT) {
		struct btree bt = vfilemap_tree(vol, inode, &vdtree_ops);
		struct vextent rec = { .logical = 0, .count = r.count,
				       .label = VERSION_ORIGIN,
				       .phys = r.block };
		struct vextents x = { .r = &rec, .n = 1, .cap = 1 };
		if ((err = btree_create_leaf(&bt, r.block)))
			return err;
		uint8_t *leaf = overlay_edit(&vol->overlay, bt.root.block,
					     NULL);
		if (!leaf)
			return -EIO;
		if ((err = vleaf_store(leaf, vol->blocksize, &x, 0,
				       TUX3_KEY_LIMIT)))
			return err;
		inode->dtree = root_pack(bt.root);
		return 0;
	}
	/* a dleaf tree: each leaf copied on write and converted in place */
	struct btree bt = vfilemap_tree(vol, inode, &dtree_ops);
	uint8_t *tmp = malloc(vol->blocksize);
	uint64_t key = 0;
	if (!tmp)
		return -ENOMEM;
	for (;;) {
		struct wpath p;
		bool moved = false;
		uint64_t lo, hi;
		uint8_t *leaf;
		if ((err = probe_leaf(vol, inode, &bt, key, &p, &leaf, &lo,
				      &hi)))
			break;
		err = vleaf_from_dleaf(leaf, vol->blocksize, lo, hi, tmp);
		if (err == -ENOSPC) {
			/* extents past 65535 blocks need more records than
			 * the leaf has entries: split the dleaf first */
			err = btree_split_leaf(&bt, &p, &moved);
			if (moved)
				inode->dtree = root_pack(bt.root);
			if (err)
				break;
			continue;
		}
		if (err) {
			err = vol_error(vol, err, p.lv[p.depth - 1].block,
					inode->inum, TUX3_NONE, "cannot "
					"convert a malformed dleaf");
			break;
		}
		memcpy(leaf, tmp, vol->blocksize);
		if (hi >= TUX3_KEY_LIMIT)
			break;
		key = hi;
	}
	free(tmp);
	return err;
}

/* ---- writing ---- */

/* Where a data block for logical goes: after what the writer reads just
 * before it, else where the last allocation ended. */
static uint64_t data_goal(struct tux3_volume *vol, const struct inode *inode,
			  struct vtree *vt, const struct vextents *x,
			  unsigned label, uint64_t logical, uint64_t lo,
			  struct velem *e)
{
	if (logical > lo) {
		uint64_t prev = vextents_read_at(vt, x, label, logical - 1, e);
		if (prev)
			return prev + 1;
	}
	if (vol->alloc_cursor)
		return vol->alloc_cursor;
	return (inode->inum + logical) % vol->volblocks;
}

int vfilemap_update(struct tux3_volume *vol, struct inode *inode,
		    struct vtree *vt, unsigned *label, uint64_t logical,
		    uint64_t count, enum vext_mode mode, uint64_t *written)
{
	enum vfilemap_kind kind;
	int err;

	if (!count)
		return 0;
	if (mode != VEXT_REDIRECT && mode != VEXT_PUNCH)
		return -EINVAL;
	if (vol->mode != TUX3_OPEN_RDWR)
		return -EROFS;
	if (logical >= TUX3_KEY_LIMIT || count > TUX3_KEY_LIMIT - logical)
		return -EFBIG;
	if (!vtree_used(vt, *label) || vtree_ghost(vt, *label) ||
	    (vt->v[*label].flags & VERSION_DYING))
		return -EINVAL;
	memset(written, 0, count * sizeof(*written));
	if ((err = vfilemap_kind(vol, inode, &kind)))
		return err;
	if (kind == VFM_NONE) {
		if (mode == VEXT_PUNCH)
			return 0;	/* a hole in every version already */
		struct btree bt = vfilemap_tree(vol, inode, &vdtree_ops);
		uint64_t goal = vol->alloc_cursor ? vol->alloc_cursor :
				(inode->inum + logical) % vol->volblocks;
		if ((err = btree_create_leaf(&bt, goal)))
			return err;
		inode->dtree = root_pack(bt.root);
		inode->present |= 1u << ATTR_DATA_BTREE;
	} else if (kind != VFM_VLEAF) {
		if ((err = vfilemap_convert(vol, inode)))
			return err;
	}

	struct btree bt = vfilemap_tree(vol, inode, &vdtree_ops);
	struct vextents x;
	struct vechain_seen seen = { 0 };
	struct uctx u = { .vol = vol };
	struct velem *e = malloc(VERSION_LABELS * sizeof(*e));
	if (!e || vextents_alloc(&x, vleaf_capacity(vol->blocksize) + 16)) {
		free(e);
		return -ENOMEM;
	}
	uint64_t pos = logical, end = logical + count;
	uint64_t limit = VEXT_WRITE_MAX;
	bool chains = false;	/* a block's elements may leave the leaf */
	while (pos < end) {
		struct wpath p;
		bool moved = false, fits;
		uint64_t lo, hi;
		uint8_t *leaf;
		if ((err = probe_leaf(vol, inode, &bt, pos, &p, &leaf, &lo,
				      &hi)))
			break;
		uint64_t n = (hi < end ? hi : end) - pos;
		if (n > limit)
			n = limit;
		if ((err = vextents_load_vol(vol, inode->inum, leaf, &x,
					     &seen)))
			break;
		u.goal = data_goal(vol, inode, vt, &x, *label, pos, lo, e);
		u.err = 0;
		err = vext_update(vt, &x, label, pos, (uint32_t)n, mode,
				  u_alloc, u_free, &u, written + (pos - logical),
				  vol_now(vol));
		if (u.err)
			err = u.err;
		else if (!err)
			err = store_leaf(vol, inode->inum, leaf, &x, lo, hi,
					 chains || seen.n, &seen, &u.alloc,
					 &u.freed);
		fits = !(err == -ENOSPC && !u.err);
		if (err) {
			int e2 = undo_allocs(vol, &u.alloc);
			u.freed.n = 0;
			if (e2) {
				err = e2;
				break;
			}
		}
		if (!fits) {
			/* the leaf is unchanged: split it, or take the
			 * change in smaller pieces */
			bool split;
			if ((err = can_split(vol, leaf, &split)))
				break;
			if (split) {
				err = btree_split_leaf(&bt, &p, &moved);
				if (moved)
					inode->dtree = root_pack(bt.root);
				if (err)
					break;
				continue;
			}
			if (n > 1) {
				limit = n / 2;
				continue;
			}
			if (!chains) {
				/* one block with more elements than a
				 * leaf holds: they go to a chain */
				chains = true;
				continue;
			}
			err = -ENOSPC;
			break;
		}
		if (err)
			break;
		if ((err = keep_allocs(vol, &u.alloc)) ||
		    (err = release_list(vol, &u.freed)))
			break;
		pos += n;
		limit = VEXT_WRITE_MAX;
		chains = false;
	}
	if (err)
		memset(written + (pos - logical), 0,
		       (end - pos) * sizeof(*written));
	if (!err && mode == VEXT_PUNCH)
		err = drop_if_empty(vol, inode);
	free(u.alloc.v);
	free(u.freed.v);
	free(x.r);
	free(e);
	vechain_seen_free(&seen);
	return err;
}

/* ---- deleting a version ---- */

static bool same_set(const struct vextents *a, const struct vextents *b)
{
	if (a->n != b->n)
		return false;
	for (unsigned i = 0; i < a->n; i++)
		if (a->r[i].logical != b->r[i].logical ||
		    a->r[i].count != b->r[i].count ||
		    a->r[i].label != b->r[i].label ||
		    a->r[i].phys != b->r[i].phys)
			return false;
	return true;
}

/* A change to every leaf's records: a delete's plan (plan set) or
 * fsck's repair of the element lists. */
static int leaf_op(struct vtree *vt, const struct vdelete_plan *plan,
		   struct vextents *x, vfree_fn free_fn, void *ctx)
{
	return plan ? vext_delete(vt, plan, x, free_fn, ctx) :
		      vext_repair(vt, x, free_fn, ctx);
}

static int apply_to_leaves(struct tux3_volume *vol, struct inode *inode,
			   struct vtree *vt, const struct vdelete_plan *plan);

int vfilemap_delete(struct tux3_volume *vol, struct inode *inode,
		    struct vtree *vt, const struct vdelete_plan *plan)
{
	if (!plan->count)
		return 0;
	return apply_to_leaves(vol, inode, vt, plan);
}

int vfilemap_repair(struct tux3_volume *vol, struct inode *inode,
		    struct vtree *vt)
{
	return apply_to_leaves(vol, inode, vt, NULL);
}

static int apply_to_leaves(struct tux3_volume *vol, struct inode *inode,
			   struct vtree *vt, const struct vdelete_plan *plan)
{
	enum vfilemap_kind kind;
	int err;

	if (!inode->dtree)
		return 0;
	if ((err = vfilemap_kind(vol, inode, &kind)) || kind != VFM_VLEAF)
		return err;
	if (vol->mode != TUX3_OPEN_RDWR)
		return -EROFS;

	unsigned cap = vleaf_capacity(vol->blocksize) + 16;
	struct btree bt = vfilemap_tree(vol, inode, &vdtree_ops);
	struct vextents x, y;
	struct vechain_seen seen = { 0 };
	struct uctx u = { .vol = vol };
	if (vextents_alloc(&x, cap) || vextents_alloc(&y, cap)) {
		free(x.r);
		return -ENOMEM;
	}
	uint64_t key = 0;
	for (;;) {
		/* read first: only leaves the plan changes are written */
		struct cursor c = { 0 };
		uint64_t lo, hi;
		err = btree_probe(&bt, key, &c);
		if (!err) {
			cursor_leaf_range(&c, &lo, &hi);
			err = vextents_load_vol(vol, inode->inum,
						cursor_leaf(&c), &x, NULL);
		}
		cursor_release(&c);
		if (!err)
			err = vextents_reserve(&y, x.cap);
		if (err)
			break;
		memcpy(y.r, x.r, x.n * sizeof(*x.r));
		y.n = x.n;
		err = leaf_op(vt, plan, &y, NULL, NULL);
		if (!err && same_set(&x, &y)) {
			if (hi >= TUX3_KEY_LIMIT)
				break;
			key = hi;
			continue;
		}
		if (err && err != -ENOSPC)
			break;
		struct wpath p;
		bool moved = false, split;
		uint8_t *leaf;
		if ((err = probe_leaf(vol, inode, &bt, key, &p, &leaf, &lo,
				      &hi)))
			break;
		if ((err = vextents_load_vol(vol, inode->inum, leaf, &x,
					     &seen)))
			break;
		u.err = 0;
		u.freed.n = 0;
		u.alloc.n = 0;
		err = leaf_op(vt, plan, &x, u_free, &u);
		if (u.err)
			err = u.err;
		else if (!err)
			err = store_leaf(vol, inode->inum, leaf, &x, lo, hi,
					 true, &seen, &u.alloc, &u.freed);
		if (err && u.alloc.n) {
			int e2 = undo_allocs(vol, &u.alloc);
			if (!err)
				err = e2;
		}
		if (err == -ENOSPC && !u.err) {
			u.freed.n = 0;
			if ((err = can_split(vol, leaf, &split)))
				break;
			if (!split) {
				err = -ENOSPC;
				break;
			}
			err = btree_split_leaf(&bt, &p, &moved);
			if (moved)
				inode->dtree = root_pack(bt.root);
			if (err)
				break;
			continue;	/* the same key: its left part */
		}
		if (err || (err = keep_allocs(vol, &u.alloc)) ||
		    (err = release_list(vol, &u.freed)))
			break;
		if (hi >= TUX3_KEY_LIMIT)
			break;
		key = hi;
	}
	if (!err)
		err = drop_if_empty(vol, inode);
	free(u.freed.v);
	free(u.alloc.v);
	free(x.r);
	free(y.r);
	vechain_seen_free(&seen);
	return err;
}

/* ---- destroying ---- */

struct destroy {
	struct tux3_volume *vol;
	tux3_ino_t inum;
	struct blist data;
};

/* An element chain's blocks and every element's data block. */
static int destroy_chain(struct destroy *d, const struct vextent *r)
{
	struct vextents elem = { 0 };
	uint64_t *blocks;
	unsigned n;
	int err = vechain_blocks(d->vol, d->inum, r->logical, r->phys, &elem,
				 &blocks, &n);
	for (unsigned k = 0; k < elem.n && !err; k++)
		if (elem.r[k].phys)
			err = blist_add(&d->data, elem.r[k].phys);
	for (unsigned k = 0; k < n && !err; k++)
		err = blist_add(&d->data, blocks[k]);
	free(elem.r);
	free(blocks);
	return err;
}

static int destroy_leaf(void *ctx, struct btree *bt, uint64_t blocknr,
			const uint8_t *buf, uint64_t lo, uint64_t hi)
{
	struct destroy *d = ctx;
	int err = 0;
	(void)bt; (void)blocknr; (void)lo; (void)hi;
	for (unsigned i = 0; i < vleaf_count(buf) && !err; i++) {
		struct vextent r;
		vleaf_get(buf, i, &r);
		if (r.flags & VEXT_ELIST) {
			err = destroy_chain(d, &r);
			continue;
		}
		for (uint32_t k = 0; k < r.count && r.phys && !err; k++)
			err = blist_add(&d->data, r.phys + k);
	}
	return err;
}

int vfilemap_destroy(struct tux3_volume *vol, struct inode *inode)
{
	enum vfilemap_kind kind;
	int err = vfilemap_kind(vol, inode, &kind);
	if (err || kind != VFM_VLEAF)
		return err ? err : -EINVAL;
	static const struct btree_visit visit = { .leaf = destroy_leaf };
	struct btree bt = vfilemap_tree(vol, inode, &vdtree_ops);
	struct destroy d = { .vol = vol, .inum = inode->inum };
	/* every version's data and element chains, then the nodes; a
	 * damaged tree frees nothing */
	err = btree_traverse(&bt, &visit, &d);
	if (!err)
		err = btree_free_nodes(&bt);
	if (!err)
		err = release_list(vol, &d.data);
	if (!err)
		inode->dtree = 0;
	free(d.data.v);
	return err;
}
