/*
 * Versioned file data read (vfilemap.h): a file's dtree of vleaves, its
 * extents as one version sees them, checked and counted per version, and
 * the tree's ops.  Changes are vfilemap_write.c's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "version/vinode.h"
#include "version/version.h"
#include "version/vleaf.h"
#include "version/vfilemap.h"

/* ---- the tree's ops ---- */

static void vdtree_leaf_init(struct tux3_volume *vol, uint8_t *leaf,
			     uint64_t key)
{
	(void)vol; (void)key;
	vleaf_init(leaf);
}

/*
 * btree_split_leaf gives no key range, and vleaf_split wants one.  The
 * span of the records, [first logical, last end), gives the same
 * separator as the leaf's true range [lo, hi): a candidate at or below
 * the first logical leaves no record on the left, one at or above the
 * last end none on the right, so vleaf_split rejects both either way, and
 * the records lie inside the span, as its check wants.
 */
static void vleaf_span(const uint8_t *leaf, uint64_t *lo, uint64_t *hi)
{
	unsigned n = vleaf_count(leaf);
	struct vextent r;
	*lo = *hi = 0;
	for (unsigned i = 0; i < n; i++) {
		vleaf_get(leaf, i, &r);
		if (!i)
			*lo = r.logical;
		if (r.logical + r.count > *hi)
			*hi = r.logical + r.count;
	}
}

int vdtree_leaf_split(struct tux3_volume *vol, uint8_t *leaf,
			     uint8_t *newleaf, uint64_t *sep)
{
	uint64_t lo, hi;
	if (vleaf_count(leaf) < 2)
		return -ENOSPC;
	vleaf_span(leaf, &lo, &hi);
	int64_t s = vleaf_split(leaf, newleaf, vol->blocksize, lo, hi);
	if (s < 0)
		return (int)s;
	*sep = (uint64_t)s;
	return 0;
}

const struct btree_ops vdtree_ops = {
	.name = "versioned data tree",
	.leaf_magic = TUX3_MAGIC_VLEAF,
	.leaf_check = vleaf_check,
	.leaf_init = vdtree_leaf_init,
	.leaf_split = vdtree_leaf_split,
};

/* ---- helpers ---- */

struct btree vfilemap_tree(struct tux3_volume *vol, const struct inode *inode,
			    const struct btree_ops *ops)
{
	struct btree bt = { .vol = vol, .root = root_unpack(inode->dtree),
			    .ops = ops, .owner = inode->inum };
	return bt;
}

/* What the file's data is: the magic of its leftmost leaf decides. */
int vfilemap_kind(struct tux3_volume *vol, const struct inode *inode,
		     enum vfilemap_kind *kind)
{
	struct root r = root_unpack(inode->dtree);
	*kind = !inode->dtree ? VFM_NONE : r.direct ? VFM_DIRECT : VFM_DLEAF;
	if (*kind != VFM_DLEAF)
		return 0;
	if (r.depth < 1 || r.depth > TUX3_MAX_DEPTH)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, inode->inum,
				 TUX3_NONE, "data tree: invalid root (depth "
				 "%u)", r.depth);
	uint8_t *buf = malloc(vol->blocksize);
	if (!buf)
		return -ENOMEM;
	uint64_t b = r.block;
	int err = 0;
	for (unsigned l = 0; l < r.depth && !err; l++) {
		if (!vol_block_valid(vol, b)) {
			err = vol_error(vol, -EUCLEAN, b, inode->inum,
					TUX3_NONE, "data tree: block outside "
					"the volume");
			break;
		}
		if ((err = vol_read_block(vol, b, buf)))
			break;
		if (l + 1 == r.depth)
			break;
		if (be16(buf) != TUX3_MAGIC_BNODE || !bnode_count(buf))
			err = vol_error(vol, -EUCLEAN, b, inode->inum,
					TUX3_NONE, "data tree: bad bnode");
		else
			b = bnode_child(buf, 0);
	}
	if (!err) {
		unsigned magic = be16(buf);
		if (magic == TUX3_MAGIC_VLEAF)
			*kind = VFM_VLEAF;
		else if (magic != TUX3_MAGIC_DLEAF)
			err = vol_error(vol, -EUCLEAN, b, inode->inum,
					TUX3_NONE, "data tree: leaf magic "
					"0x%04x", magic);
	}
	free(buf);
	return err;
}

bool vfilemap_is_versioned(struct tux3_volume *vol,
			   const struct inode *inode)
{
	enum vfilemap_kind kind;
	return !vfilemap_kind(vol, inode, &kind) && kind == VFM_VLEAF;
}

/* The element list at logical of a leaf's records (no cap below the
 * number of labels, unlike vext_read's). */
uint64_t vextents_read_at(struct vtree *vt, const struct vextents *x,
			unsigned label, uint64_t logical, struct velem *e)
{
	unsigned m = 0;
	for (unsigned i = 0; i < x->n && x->r[i].logical <= logical; i++) {
		const struct vextent *r = &x->r[i];
		if (logical >= r->logical + r->count || m == VERSION_LABELS)
			continue;
		e[m].label = r->label;
		e[m].phys = r->phys ? r->phys + (logical - r->logical) : 0;
		m++;
	}
	int k = velist_read(vt, e, m, label);
	return k < 0 ? 0 : e[k].phys;
}

int vextents_alloc(struct vextents *x, unsigned cap)
{
	x->r = malloc(cap * sizeof(*x->r));
	x->n = 0;
	x->cap = cap;
	return x->r ? 0 : -ENOMEM;
}


/* ---- reading ---- */

struct seg_emit {
	extent_fn fn;
	void *ctx;
	struct extent run;
	bool have;
};

static int seg_flush(struct seg_emit *s)
{
	if (!s->have)
		return 0;
	s->have = false;
	return s->fn(s->ctx, &s->run);
}

static int seg_add(struct seg_emit *s, uint64_t logical, uint64_t phys,
		   uint64_t count, unsigned label, uint64_t leafblock)
{
	if (s->have && s->run.logical + s->run.count == logical &&
	    s->run.physical + s->run.count == phys) {
		s->run.count += count;
		return 0;
	}
	int err = seg_flush(s);
	s->run = (struct extent){ .logical = logical, .physical = phys,
				  .count = count, .version = label,
				  .leafblock = leafblock };
	s->have = true;
	return err;
}

/* Version label's mapped runs of one leaf's records inside [from, to). */
static int walk_leaf(struct vtree *vt, const struct vextents *x,
		     unsigned label, uint64_t from, uint64_t to,
		     uint64_t leafblock, struct seg_emit *s, uint64_t *bounds,
		     struct velem *e)
{
	unsigned nb = 0;
	bounds[nb++] = from;
	bounds[nb++] = to;
	for (unsigned i = 0; i < x->n; i++) {
		uint64_t a = x->r[i].logical, b = a + x->r[i].count;
		if (a > from && a < to)
			bounds[nb++] = a;
		if (b > from && b < to)
			bounds[nb++] = b;
	}
	qsort(bounds, nb, sizeof(*bounds), cmp_u64);
	int err = 0;
	for (unsigned i = 0; i + 1 < nb && !err; i++) {
		uint64_t a = bounds[i], b = bounds[i + 1];
		if (a == b)
			continue;
		uint64_t phys = vextents_read_at(vt, x, label, a, e);
		if (phys)
			err = seg_add(s, a, phys, b - a, label, leafblock);
	}
	if (!err)
		err = seg_flush(s);
	return err;
}

int vfilemap_walk(struct tux3_volume *vol, const struct inode *inode,
		  struct vtree *vt, unsigned label, uint64_t start,
		  uint64_t end, extent_fn fn, void *ctx)
{
	enum vfilemap_kind kind;
	int err;

	if (!inode->dtree || start >= end)
		return 0;
	if ((err = vfilemap_kind(vol, inode, &kind)))
		return err;
	if (kind != VFM_VLEAF)
		return filemap_walk(vol, inode, start, end, fn, ctx);

	unsigned cap = vleaf_capacity(vol->blocksize), nbounds = 0;
	struct btree bt = vfilemap_tree(vol, inode, &vdtree_ops);
	struct cursor c = { 0 };
	struct seg_emit s = { .fn = fn, .ctx = ctx };
	struct vextents x;
	uint64_t *bounds = NULL;
	struct velem *e = malloc(VERSION_LABELS * sizeof(*e));
	if (!e || vextents_alloc(&x, cap)) {
		free(e);
		return -ENOMEM;
	}
	err = btree_probe(&bt, start, &c);
	while (!err) {
		uint64_t lo, hi;
		cursor_leaf_range(&c, &lo, &hi);
		if ((err = vextents_load_vol(vol, inode->inum, cursor_leaf(&c),
					     &x, NULL)))
			break;
		if (2 * x.n + 2 > nbounds) {
			/* an element chain's block brings many records */
			uint64_t *nb = realloc(bounds, (2 * (size_t)x.n + 2) *
					       sizeof(*bounds));
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			bounds = nb;
			nbounds = 2 * x.n + 2;
		}
		err = walk_leaf(vt, &x, label, lo > start ? lo : start,
				hi < end ? hi : end, cursor_leaf_block(&c), &s,
				bounds, e);
		if (err || hi >= end)
			break;
		err = btree_next_leaf(&c);
		if (err == 1)
			err = 0;
		else if (!err)
			break;
	}
	cursor_release(&c);
	free(x.r);
	free(bounds);
	free(e);
	return err;
}

/* ---- checking ---- */

/* Every leaf's records in turn, in logical order (read only). */
static int each_leaf(struct tux3_volume *vol, const struct inode *inode,
		     void (*fn)(void *ctx, const struct vextents *x),
		     void *ctx)
{
	enum vfilemap_kind kind;
	int err;

	if (!inode->dtree)
		return 0;
	if ((err = vfilemap_kind(vol, inode, &kind)) || kind != VFM_VLEAF)
		return err;
	struct btree bt = vfilemap_tree(vol, inode, &vdtree_ops);
	struct cursor c = { 0 };
	struct vextents x;
	if (vextents_alloc(&x, vleaf_capacity(vol->blocksize)))
		return -ENOMEM;
	err = btree_probe(&bt, 0, &c);
	while (!err) {
		if ((err = vextents_load_vol(vol, inode->inum, cursor_leaf(&c),
					     &x, NULL)))
			break;
		fn(ctx, &x);
		err = btree_next_leaf(&c);
		if (err == 1)
			err = 0;
		else if (!err)
			break;
	}
	cursor_release(&c);
	free(x.r);
	return err;
}

struct check_ctx {
	struct vtree *vt;
	vcheck_fn fn;
	void *ctx;
	unsigned bad;
};

static void check_leaf(void *ctx, const struct vextents *x)
{
	struct check_ctx *c = ctx;
	c->bad += vext_check(c->vt, x, c->fn, c->ctx);
}

int vfilemap_check(struct tux3_volume *vol, const struct inode *inode,
		   struct vtree *vt, vcheck_fn fn, void *ctx)
{
	struct check_ctx c = { vt, fn, ctx, 0 };
	int err = each_leaf(vol, inode, check_leaf, &c);
	return err < 0 ? err : (int)c.bad;
}

struct exclusive_ctx {
	struct vtree *vt;
	uint64_t *exclusive;
};

static void exclusive_leaf(void *ctx, const struct vextents *x)
{
	struct exclusive_ctx *e = ctx;
	vext_exclusive(e->vt, x, e->exclusive);
}

int vfilemap_exclusive(struct tux3_volume *vol, const struct inode *inode,
		       struct vtree *vt, uint64_t *exclusive)
{
	struct exclusive_ctx e = { vt, exclusive };
	return each_leaf(vol, inode, exclusive_leaf, &e);
}

struct labels_ctx {
	void (*fn)(void *ctx, unsigned label);
	void *ctx;
};

static void labels_leaf(void *ctx, const struct vextents *x)
{
	struct labels_ctx *c = ctx;
	for (unsigned i = 0; i < x->n; i++)
		if (x->r[i].label != VERSION_ORIGIN &&
		    (!i || x->r[i].label != x->r[i - 1].label))
			c->fn(c->ctx, x->r[i].label);
}

int vfilemap_labels(struct tux3_volume *vol, const struct inode *inode,
		    void (*fn)(void *ctx, unsigned label), void *ctx)
{
	struct labels_ctx c = { fn, ctx };
	return each_leaf(vol, inode, labels_leaf, &c);
}

/* The file's extents as the volume's selected version sees them (an
 * internal inode: as the origin does). */
int vfilemap_walk_selected(struct tux3_volume *vol, const struct inode *inode,
			   uint64_t start, uint64_t end, extent_fn fn,
			   void *ctx)
{
	unsigned label = VERSION_ORIGIN;
	if (!vol->vt)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, inode->inum,
				 TUX3_NONE, "inode %" PRIu64 ": versioned "
				 "data, but the version table could not be "
				 "read", inode->inum);
	int err = inode->inum >= TUX3_ROOT_INO ? vol_label(vol, &label) : 0;
	return err ? err : vfilemap_walk(vol, inode, vol->vt, label, start,
					 end, fn, ctx);
}
