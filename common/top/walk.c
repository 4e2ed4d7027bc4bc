/*
 * The volume walker (see tux3_walk.h).  Built on btree_traverse(), the
 * attribute decoder, filemap_walk() and dir_iterate(): it adds no parsing
 * of its own, only the order of the visit and error containment.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "internal.h"
#include "tux3_walk.h"
#include "version/version.h"
#include "version/vfilemap.h"
#include "version/vleaf.h"

struct walk {
	struct tux3_volume *vol;
	const struct tux3_walk_ops *ops;
	void *ctx;
	bool bad;		/* something was skipped as invalid */
	int stop;		/* a callback's negative return */
	tux3_ino_t inum;	/* inode being visited */
	uint64_t *keys, *children;
	bool no_blocks;		/* stat.blocks left 0 (walk_uncounted) */
	/* the inode's blob as its leaf holds it (a loaded inode's is its
	 * version's view, which has no SPILL attribute) */
	const uint8_t *raw;
	unsigned rawlen;
};

/* A validation error at a site: report it, forget it, go on. */
static int contain_at(struct walk *w, int err,
		      const struct tux3_walk_error *site)
{
	if (err >= 0)
		return err;
	if (err == -ENOMEM)
		return err;
	w->bad = true;
	if (!w->vol->error.err)
		vol_error(w->vol, err, TUX3_NONE, w->inum, TUX3_NONE, "%s",
			  strerror(-err));
	int r = 0;
	if (w->ops->site_error) {
		struct tux3_walk_error e = *site;
		e.err = &w->vol->error;
		r = w->ops->site_error(w->ctx, &e);
	} else if (w->ops->error) {
		r = w->ops->error(w->ctx, &w->vol->error);
	}
	tux3_clear_error(w->vol);
	return r < 0 ? r : 0;
}

/* An inode's attributes or entries failed validation. */
static int contain(struct walk *w, int err, enum tux3_walk_site site)
{
	struct tux3_walk_error e = {
		.site = site, .tree = TUX3_TREE_ITREE, .owner = w->inum,
		.block = TUX3_NONE, .parent = TUX3_NONE,
	};
	return contain_at(w, err, &e);
}

static enum tux3_tree tree_of(const struct btree *bt);

/* A tree's root was refused before any node was read: btree_traverse
 * returned -EUCLEAN with the error still pending (nodes report through
 * visit_bad, which clears it). */
static int contain_root(struct walk *w, struct btree *bt, int err)
{
	if (err != -EUCLEAN || !w->vol->error.err)
		return err;
	struct tux3_walk_error e = {
		.site = TUX3_SITE_ROOT, .tree = tree_of(bt),
		.owner = bt->owner, .block = TUX3_NONE, .parent = TUX3_NONE,
	};
	return contain_at(w, err, &e);
}

static int walk_log(struct walk *w)
{
	struct tux3_volume *vol = w->vol;
	struct logrec rec;

	for (unsigned i = 0; i < vol->logcount; i++) {
		struct logblk *lb = &vol->log[i];
		unsigned end = LOG_HEADER_SIZE + lb->head.bytes;
		int r = 0;
		if (w->ops->logblock)
			r = w->ops->logblock(w->ctx, i, lb->blocknr,
					     lb->head.bytes, lb->head.logchain);
		if (r < 0)
			return r;
		for (unsigned off = LOG_HEADER_SIZE; off < end && w->ops->logrec;) {
			unsigned size = log_decode_record(lb->data, off, end,
							  &rec);
			if (!size)
				break;	/* checked at load */
			struct tux3_logrec_info info;
			log_record_info(&rec, off, size,
					vol->unify_index < 0 ||
					(int)i > vol->unify_index ||
					((int)i == vol->unify_index &&
					 off >= vol->unify_offset), &info);
			if ((r = w->ops->logrec(w->ctx, lb->blocknr, &info)) < 0)
				return r;
			off += size;
		}
	}
	return 0;
}

static unsigned leaf_used(const struct tux3_volume *vol, const uint8_t *leaf,
			  unsigned magic)
{
	if (magic == TUX3_MAGIC_DLEAF)
		return DLEAF_HEADER + DLEAF_ENTRY * dleaf_count(leaf);
	if (magic == TUX3_MAGIC_VLEAF)
		return VLEAF_HEADER + VLEAF_RECORD * vleaf_count(leaf);
	unsigned count = ileaf_count(leaf);
	unsigned end = count ? be16(leaf + vol->blocksize - 2 * count) : 0;
	return ILEAF_HEADER + end + 2 * count;
}

static enum tux3_tree tree_of(const struct btree *bt)
{
	return bt->ops == &itree_ops ? TUX3_TREE_ITREE :
	       bt->ops == &otree_ops ? TUX3_TREE_OTREE : TUX3_TREE_DTREE;
}

static int visit_bnode(void *ctx, struct btree *bt, int level,
		       uint64_t blocknr, const uint8_t *buf, uint64_t lo,
		       uint64_t hi)
{
	struct walk *w = ctx;
	if (!w->ops->bnode)
		return 0;
	unsigned count = bnode_count(buf);
	for (unsigned i = 0; i < count; i++) {
		w->keys[i] = bnode_key(buf, i);
		w->children[i] = bnode_child(buf, i);
	}
	struct tux3_node_info n = {
		.tree = tree_of(bt), .owner = bt->owner, .block = blocknr,
		.level = level, .count = count, .lo = lo, .hi = hi,
		.replayed = overlay_find(&w->vol->overlay, blocknr, NULL) != NULL,
		.used_bytes = BNODE_HEADER + BNODE_ENTRY * count,
		.keys = w->keys, .children = w->children,
	};
	return w->ops->bnode(w->ctx, &n);
}

static int visit_bad(void *ctx, struct btree *bt, const struct btree_pos *pos,
		     int err)
{
	struct tux3_walk_error e = {
		.site = pos->level == (int)bt->root.depth - 1 ?
			TUX3_SITE_LEAF : TUX3_SITE_NODE,
		.tree = tree_of(bt), .owner = bt->owner, .level = pos->level,
		.block = pos->blocknr, .lo = pos->lo, .hi = pos->hi,
		.parent = pos->parent, .index = pos->index,
		.twice = pos->twice,
	};
	return contain_at(ctx, err, &e);
}

static int leaf_callback(struct walk *w, struct btree *bt, uint64_t blocknr,
			 const uint8_t *leaf, uint64_t lo, uint64_t hi)
{
	if (!w->ops->leaf)
		return 0;
	unsigned magic = be16(leaf);
	struct tux3_node_info n = {
		.tree = tree_of(bt), .owner = bt->owner, .block = blocknr,
		.level = (int)bt->root.depth - 1,
		.count = magic == TUX3_MAGIC_DLEAF ? dleaf_count(leaf) :
			 magic == TUX3_MAGIC_VLEAF ? vleaf_count(leaf) :
			 ileaf_count(leaf),
		.lo = lo, .hi = hi,
		.replayed = overlay_find(&w->vol->overlay, blocknr, NULL) != NULL,
		.used_bytes = leaf_used(w->vol, leaf, magic),
	};
	return w->ops->leaf(w->ctx, &n);
}

static int visit_dleaf(void *ctx, struct btree *bt, uint64_t blocknr,
		       const uint8_t *leaf, uint64_t lo, uint64_t hi)
{
	struct walk *w = ctx;
	int r = leaf_callback(w, bt, blocknr, leaf, lo, hi);
	if (r < 0 || !w->ops->extent)
		return r;
	unsigned count = dleaf_count(leaf);
	struct dleaf_entry e, next;
	for (unsigned i = 0; i + 1 < count; i++) {
		dleaf_entry_get(leaf, i, &e);
		dleaf_entry_get(leaf, i + 1, &next);
		r = w->ops->extent(w->ctx, bt->owner, e.logical, e.physical,
				   next.logical - e.logical, e.version,
				   blocknr);
		if (r < 0)
			return r;
	}
	return 0;
}

/* An element chain (format.md 17.3c): its blocks, metadata of the
 * inode, then each element as an extent of its label; a chain that does
 * not read is the leaf's damage. */
static int visit_echain(struct walk *w, struct btree *bt, uint64_t blocknr,
			const struct vextent *x)
{
	struct vextents elem = { 0 };
	uint64_t *blocks;
	unsigned n;
	int r = vechain_blocks(w->vol, bt->owner, x->logical, x->phys, &elem,
			       &blocks, &n);
	if (r) {
		struct tux3_walk_error e = {
			.site = TUX3_SITE_LEAF, .tree = TUX3_TREE_DTREE,
			.owner = bt->owner, .block = blocknr,
			.parent = TUX3_NONE,
		};
		return contain_at(w, r, &e);
	}
	for (unsigned k = 0; k < n && r >= 0; k++)
		r = w->ops->extent(w->ctx, bt->owner, k, blocks[k], 1,
				   TUX3_EXTENT_ELIST, blocknr);
	for (unsigned k = 0; k < elem.n && r >= 0; k++)
		r = w->ops->extent(w->ctx, bt->owner, x->logical,
				   elem.r[k].phys, 1, elem.r[k].label,
				   blocknr);
	free(elem.r);
	free(blocks);
	return r;
}

/* A versioned leaf: one extent per record, .version its label (a hole
 * element has physical 0). */
static int visit_vleaf(void *ctx, struct btree *bt, uint64_t blocknr,
		       const uint8_t *leaf, uint64_t lo, uint64_t hi)
{
	struct walk *w = ctx;
	int r = leaf_callback(w, bt, blocknr, leaf, lo, hi);
	if (r < 0 || !w->ops->extent)
		return r;
	for (unsigned i = 0; i < vleaf_count(leaf); i++) {
		struct vextent x;
		vleaf_get(leaf, i, &x);
		if (x.flags & VEXT_ELIST)
			r = visit_echain(w, bt, blocknr, &x);
		else
			r = w->ops->extent(w->ctx, bt->owner, x.logical,
					   x.phys, x.count, x.label, blocknr);
		if (r < 0)
			return r;
	}
	return 0;
}

static int visit_attr(struct tux3_volume *vol, void *ctx,
		      const struct attr_info *a)
{
	struct walk *w = ctx;
	struct tux3_attr_desc d = { a->kind, a->version, a->offset, a->size,
				    iattr_name(vol, a->kind) };
	return w->ops->attr(w->ctx, w->inum, &d);
}

static int visit_dirent(void *ctx, const struct dirent_info *d)
{
	struct walk *w = ctx;
	return w->ops->dirent(w->ctx, w->inum, d->name, d->name_len, d->inum,
			      d->type, d->pos, d->blocknr);
}

/* The blocks of the inode's attribute chain (format.md 17.3b), one
 * extent each; a chain that does not read is the inode's damage. */
static int walk_spill(struct walk *w, const struct inode *inode)
{
	struct tux3_volume *vol = w->vol;
	uint64_t *blocks;
	unsigned n;
	(void)inode;
	if (!vtable_marked(vol) || !w->raw || !vspill_has(w->raw, w->rawlen))
		return 0;
	int err = vspill_blocks(vol, w->inum, w->raw, w->rawlen, &blocks, &n);
	if (err)
		return contain(w, err, TUX3_SITE_INODE);
	for (unsigned i = 0; i < n && !err; i++)
		err = w->ops->extent(w->ctx, w->inum, i, blocks[i], 1,
				     TUX3_EXTENT_SPILL, TUX3_NONE);
	free(blocks);
	return err;
}

static int walk_inode_data(struct walk *w, struct inode *inode)
{
	static const struct btree_visit dvisit = {
		.bnode = visit_bnode, .leaf = visit_dleaf, .bad_at = visit_bad,
	};
	static const struct btree_visit vvisit = {
		.bnode = visit_bnode, .leaf = visit_vleaf, .bad_at = visit_bad,
	};
	struct tux3_volume *vol = w->vol;
	struct root r = root_unpack(inode->dtree);
	int err = 0;

	if (w->ops->attr)
		err = contain(w, iattr_decode(vol, inode, visit_attr, w),
			      TUX3_SITE_INODE);
	if (err >= 0 && w->ops->extent)
		err = walk_spill(w, inode);
	if (err < 0 || !inode->dtree)
		return err;
	if (r.direct) {
		if (w->ops->extent)
			err = w->ops->extent(w->ctx, inode->inum, 0, r.block,
					     r.count, 0, 0);
	} else {
		/* a tree of versioned leaves belongs to a volume with
		 * versions only */
		bool versioned = vfilemap_is_versioned(vol, inode);
		tux3_clear_error(vol);
		struct btree bt = { .vol = vol, .root = r,
				    .ops = versioned ? &vdtree_ops : &dtree_ops,
				    .owner = inode->inum };
		if (versioned && !vtable_marked(vol)) {
			struct tux3_walk_error e = {
				.site = TUX3_SITE_ROOT, .tree = TUX3_TREE_DTREE,
				.owner = inode->inum, .block = TUX3_NONE,
				.parent = TUX3_NONE,
			};
			vol_error(vol, -EUCLEAN, r.block, inode->inum,
				  TUX3_NONE, "inode %" PRIu64 ": a versioned "
				  "data tree (vleaf) on a volume without "
				  "versions", inode->inum);
			return contain_at(w, -EUCLEAN, &e);
		}
		err = contain_root(w, &bt, btree_traverse(&bt, versioned ?
							  &vvisit : &dvisit, w));
		if (err == -EUCLEAN)
			err = 0;	/* already reported through .bad_at */
	}
	if (err < 0)
		return err;
	if (S_ISDIR(inode->mode) && w->ops->dirent)
		err = contain(w, dir_iterate(vol, inode, visit_dirent, w),
			      TUX3_SITE_DIRENT);
	return err;
}

static int visit_ileaf(void *ctx, struct btree *bt, uint64_t blocknr,
		       const uint8_t *leaf, uint64_t lo, uint64_t hi)
{
	struct walk *w = ctx;
	struct tux3_volume *vol = w->vol;
	int r = leaf_callback(w, bt, blocknr, leaf, lo, hi);
	if (r < 0)
		return r;
	uint64_t ibase = ileaf_ibase(leaf);
	unsigned count = ileaf_count(leaf);
	/* the blob pointers below are into `leaf`, a buffer of the traversal
	 * that nothing under this call reuses (dtrees get their own) */
	for (unsigned k = 0; k < count; k++) {
		const uint8_t *blob;
		unsigned len;
		struct inode inode;
		uint64_t blocks = 0;
		ileaf_blob(leaf, vol->blocksize, ibase + k, &blob, &len);
		if (!len)
			continue;
		w->inum = ibase + k;
		r = inode_from_blob(vol, ibase + k, blob, len, blocknr, &inode);
		if (r) {
			if ((r = contain(w, r, TUX3_SITE_INODE)) < 0)
				return r;
			continue;
		}
		if (w->ops->inode) {
			struct tux3_stat st;
			/* a walk of the whole data map: only for a
			 * visitor that uses the count */
			if (!w->no_blocks &&
			    inode_count_blocks(vol, &inode, &blocks))
				tux3_clear_error(vol);	/* reported below */
			inode_to_stat(vol, &inode, &st, blocks);
			vol->walk_blob = blob;
			vol->walk_bloblen = len;
			vol->walk_ino = ibase + k;
			r = w->ops->inode(w->ctx, &st, blocknr, len);
			vol->walk_blob = NULL;
		}
		w->raw = blob;
		w->rawlen = len;
		if (!r)
			r = walk_inode_data(w, &inode);
		w->raw = NULL;
		inode_free(&inode);
		w->inum = TUX3_NONE;
		if (r < 0)
			return r;
	}
	return 0;
}

static int visit_oleaf(void *ctx, struct btree *bt, uint64_t blocknr,
		       const uint8_t *leaf, uint64_t lo, uint64_t hi)
{
	struct walk *w = ctx;
	int r = leaf_callback(w, bt, blocknr, leaf, lo, hi);
	if (r < 0 || !w->ops->orphan)
		return r;
	uint64_t ibase = ileaf_ibase(leaf);
	for (unsigned k = 0; k < ileaf_count(leaf); k++) {
		const uint8_t *blob;
		unsigned len;
		ileaf_blob(leaf, w->vol->blocksize, ibase + k, &blob, &len);
		if (len && (r = w->ops->orphan(w->ctx, ibase + k, 1)) < 0)
			return r;
	}
	return 0;
}

/* Callback returns are kept apart from validation errors, which are
 * contained (reported, and the walk goes on). */
static int visit_atom(void *ctx, const struct tux3_atom *atom)
{
	struct walk *w = ctx;
	int r = w->ops->atom(w->ctx, atom);
	if (r < 0)
		w->stop = r;
	return r;
}

static int visit_bitrun(void *ctx, uint64_t chunk, uint64_t start,
			uint64_t count, int stale)
{
	struct walk *w = ctx;
	int r = w->ops->bitrun(w->ctx, chunk, start, count, stale);
	if (r < 0)
		w->stop = r;
	return r;
}

/* A failure of the atom table or the bitmap as a whole. */
static int contain_table(struct walk *w, int err, enum tux3_walk_site site,
			 tux3_ino_t inum)
{
	struct tux3_walk_error e = {
		.site = site, .tree = TUX3_TREE_ITREE, .owner = inum,
		.block = err < 0 && w->vol->error.err ? w->vol->error.block :
			 TUX3_NONE,
		.parent = TUX3_NONE,
	};
	if (w->stop)
		return w->stop;
	w->inum = inum;
	err = contain_at(w, err, &e);
	w->inum = TUX3_NONE;
	return err;
}

static int walk_atoms(struct walk *w)
{
	if (!w->ops->atom)
		return 0;
	return contain_table(w, tux3_atoms(w->vol, visit_atom, w),
			     TUX3_SITE_ATOM, TUX3_ATABLE_INO);
}

static int walk_bitmap(struct walk *w)
{
	if (!w->ops->bitrun)
		return 0;
	return contain_table(w, bitmap_runs(w->vol, visit_bitrun, w),
			     TUX3_SITE_BITMAP, TUX3_BITMAP_INO);
}

static int walk_atoms_bitmap(struct walk *w)
{
	int r = walk_atoms(w);
	return r < 0 ? r : walk_bitmap(w);
}

/* One table of the volume alone (the atoms or the bitmap). */
static int walk_table(struct tux3_volume *vol, const struct tux3_walk_ops *ops,
		      void *ctx, int (*part)(struct walk *w))
{
	struct walk w = { .vol = vol, .ops = ops, .ctx = ctx,
			  .inum = TUX3_NONE };
	tux3_clear_error(vol);
	int r = part(&w);
	return r < 0 ? r : w.bad ? -EUCLEAN : 0;
}

int tux3_walk_atoms(struct tux3_volume *vol, const struct tux3_walk_ops *ops,
		    void *ctx)
{
	return walk_table(vol, ops, ctx, walk_atoms);
}

int tux3_walk_bitmap(struct tux3_volume *vol, const struct tux3_walk_ops *ops,
		     void *ctx)
{
	return walk_table(vol, ops, ctx, walk_bitmap);
}

static int walk_run(struct tux3_volume *vol, const struct tux3_walk_ops *ops,
		    void *ctx, bool no_blocks);

int tux3_walk(struct tux3_volume *vol, const struct tux3_walk_ops *ops,
	      void *ctx)
{
	return walk_run(vol, ops, ctx, false);
}

int walk_uncounted(struct tux3_volume *vol, const struct tux3_walk_ops *ops,
		   void *ctx)
{
	return walk_run(vol, ops, ctx, true);
}

static int walk_run(struct tux3_volume *vol, const struct tux3_walk_ops *ops,
		    void *ctx, bool no_blocks)
{
	static const struct btree_visit ivisit = {
		.bnode = visit_bnode, .leaf = visit_ileaf, .bad_at = visit_bad,
	};
	static const struct btree_visit ovisit = {
		.bnode = visit_bnode, .leaf = visit_oleaf, .bad_at = visit_bad,
	};
	unsigned cap = bnode_capacity(vol->blocksize);
	struct walk w = { .vol = vol, .ops = ops, .ctx = ctx,
			  .inum = TUX3_NONE, .no_blocks = no_blocks };
	int r = 0;

	w.keys = malloc(cap * sizeof(*w.keys));
	w.children = malloc(cap * sizeof(*w.children));
	if (!w.keys || !w.children) {
		r = -ENOMEM;
		goto out;
	}
	tux3_clear_error(vol);
	if (ops->super) {
		struct tux3_super_info info;
		tux3_super_info(vol, &info);
		if ((r = ops->super(ctx, &info)) < 0)
			goto out;
	}
	if ((r = walk_log(&w)) < 0)
		goto out;
	struct btree it = { .vol = vol, .root = vol->iroot, .ops = &itree_ops };
	r = contain_root(&w, &it, btree_traverse(&it, &ivisit, &w));
	if (r < 0 && r != -EUCLEAN)
		goto out;
	if (vol->super.oroot) {
		struct btree ot = { .vol = vol, .root = vol->oroot,
				    .ops = &otree_ops };
		r = contain_root(&w, &ot, btree_traverse(&ot, &ovisit, &w));
		if (r < 0 && r != -EUCLEAN)
			goto out;
	}
	r = 0;
	if (ops->orphan) {
		/* orphans known only from the log (not yet in the otree) */
		for (unsigned i = 0; i < vol->log_orphans.count; i++)
			if ((r = ops->orphan(ctx, vol->log_orphans.inums[i],
					     0)) < 0)
				goto out;
	}
	if ((r = walk_atoms_bitmap(&w)) < 0)
		goto out;
out:
	free(w.keys);
	free(w.children);
	if (r < 0)
		return r;
	return w.bad ? -EUCLEAN : 0;
}

int tux3_walk_log(struct tux3_volume *vol, const struct tux3_walk_ops *ops,
		  void *ctx)
{
	struct walk w = { .vol = vol, .ops = ops, .ctx = ctx,
			  .inum = TUX3_NONE };
	return walk_log(&w);
}

/*
 * One inode: its inode callback, attributes, data tree (nodes, leaves,
 * extents) and, for a directory, its entries, exactly as tux3_walk()
 * visits them, without the rest of the volume.  For tools that look at
 * one file (tux3debug blocks, dtree, frag PATH).
 */
int tux3_walk_inode(struct tux3_volume *vol, tux3_ino_t ino,
		    const struct tux3_walk_ops *ops, void *ctx)
{
	unsigned cap = bnode_capacity(vol->blocksize);
	struct walk w = { .vol = vol, .ops = ops, .ctx = ctx, .inum = ino };
	struct inode inode;
	int r;

	tux3_clear_error(vol);
	w.keys = malloc(cap * sizeof(*w.keys));
	w.children = malloc(cap * sizeof(*w.children));
	if (!w.keys || !w.children) {
		r = -ENOMEM;
		goto out;
	}
	/* an inode that cannot be loaded is the caller's error to report
	 * (it stays pending in tux3_last_error) */
	if ((r = inode_load(vol, ino, &inode)))
		goto out;
	uint8_t *raw = NULL;
	if (vtable_marked(vol) && !itree_blob(vol, ino, &raw, &w.rawlen))
		w.raw = raw;
	tux3_clear_error(vol);
	r = 0;
	if (ops->inode) {
		struct tux3_stat st;
		uint64_t blocks = 0;
		if (inode_count_blocks(vol, &inode, &blocks))
			tux3_clear_error(vol);	/* reported by the visit */
		inode_to_stat(vol, &inode, &st, blocks);
		r = ops->inode(ctx, &st, inode.leafblock, inode.bloblen);
	}
	if (!r)
		r = walk_inode_data(&w, &inode);
	inode_free(&inode);
	free(raw);
out:
	free(w.keys);
	free(w.children);
	if (r < 0)
		return r;
	return w.bad ? -EUCLEAN : 0;
}

/*
 * Every inode's blob as the inode table holds it, undecoded: for a pass
 * that looks at the element lists of every version at once (snapshot
 * diff) and loads only the inodes it needs.  Reads the itree's nodes and
 * leaves and nothing else; a node that fails validation stops it
 * (-EUCLEAN, named by the traversal).
 */
struct blob_walk {
	walk_blob_fn fn;
	void *ctx;
	tux3_block_t leafblock;
};

static int visit_blob(void *ctx, uint64_t inum, const uint8_t *blob,
		      unsigned len)
{
	struct blob_walk *b = ctx;
	return b->fn(b->ctx, inum, blob, len, b->leafblock);
}

static int visit_blob_leaf(void *ctx, struct btree *bt, uint64_t blocknr,
			   const uint8_t *leaf, uint64_t lo, uint64_t hi)
{
	struct blob_walk *b = ctx;
	(void)lo; (void)hi;
	b->leafblock = blocknr;
	return ileaf_each(leaf, bt->vol->blocksize, visit_blob, b);
}

bool walk_blob_of(const struct tux3_volume *vol, tux3_ino_t inum,
		  const uint8_t **blob, unsigned *len)
{
	if (!vol->walk_blob || vol->walk_ino != inum)
		return false;
	*blob = vol->walk_blob;
	*len = vol->walk_bloblen;
	return true;
}

bool walk_blob_plain(const struct tux3_volume *vol, tux3_ino_t inum)
{
	const uint8_t *blob;
	unsigned len;
	return walk_blob_of(vol, inum, &blob, &len) && vattrs_plain(blob, len);
}

int walk_inode_blobs(struct tux3_volume *vol, walk_blob_fn fn, void *ctx)
{
	static const struct btree_visit visit = { .leaf = visit_blob_leaf };
	struct blob_walk b = { fn, ctx, TUX3_NONE };
	struct btree it = { .vol = vol, .root = vol->iroot, .ops = &itree_ops };
	return btree_traverse(&it, &visit, &b);
}
