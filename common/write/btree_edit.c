/*
 * Changing a B-tree (itree, otree, dtrees), the way the 2014 format's
 * atomic commit requires:
 *  - a leaf is copied on write once per delta (LEAF_REDIRECT), since the
 *    committed copy must survive until the new commit is durable;
 *  - a bnode is redirected once per unify cycle (BNODE_REDIRECT) and then
 *    changed in memory only, each change logged logically (BNODE_UPDATE,
 *    BNODE_ADD, BNODE_SPLIT, BNODE_ROOT); bnodes reach the disk at unify.
 * The images being changed live in the volume's overlay, flagged with when
 * they must be written.  Metadata allocations are privileged: they may use
 * the reserve, so that any operation that was admitted can commit.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "write/write.h"

/* The image of a block, cached in the overlay (read from disk once). */
static int image_get(struct tux3_volume *vol, uint64_t block, uint8_t **img)
{
	bool dropped;
	uint8_t *d = overlay_edit(&vol->overlay, block, &dropped);
	if (d) {
		*img = d;
		return 0;
	}
	int err = overlay_put(&vol->overlay, block, vol->blocksize, &d);
	if (err)
		return err;
	err = dev_pread(&vol->dev, d, vol->blocksize, block << vol->blockbits);
	if (err) {
		overlay_drop(&vol->overlay, block);
		return vol_error(vol, err, block, TUX3_NONE, TUX3_NONE,
				 "cannot read block");
	}
	*img = d;
	return 0;
}

/* A new metadata block: its image zeroed, flagged, counted as fresh. */
int meta_alloc(struct tux3_volume *vol, uint64_t goal, unsigned flags,
	       uint64_t *block, uint8_t **img)
{
	uint64_t got;
	int err = balloc(vol, goal, 1, true, block, &got);
	if (err)
		return err;
	if ((err = overlay_put(&vol->overlay, *block, vol->blocksize, img)) ||
	    (err = blockset_add(&vol->fresh, *block)) < 0)
		return err;
	memset(*img, 0, vol->blocksize);
	overlay_set_flags(&vol->overlay, *block, flags);
	return 0;
}

/* The allocator handed out the block being copied: the bitmap says free
 * a block the tree uses (damage fsck has not repaired yet).  Refused
 * before a record "redirect X to X" is logged, which replay rejects. */
static int moved_onto_itself(struct tux3_volume *vol, uint64_t block)
{
	return vol_error(vol, -EUCLEAN, block, TUX3_NONE, TUX3_NONE,
			 "the allocator gave out block %" PRIu64 ", which "
			 "the tree still uses (the bitmap marks it free)",
			 block);
}

/* Copy-on-write of a leaf: at most once per delta. */
static int leaf_cow(struct tux3_volume *vol, uint64_t old, uint64_t *newp)
{
	uint8_t *src, *dst;
	int err;

	if (overlay_flags(&vol->overlay, old) & OV_DELTA_DIRTY) {
		*newp = old;
		return 0;
	}
	if ((err = image_get(vol, old, &src)))
		return err;
	if ((err = meta_alloc(vol, old, OV_DELTA_DIRTY, newp, &dst)))
		return err;
	if (*newp == old)
		return moved_onto_itself(vol, old);
	src = overlay_edit(&vol->overlay, old, NULL);
	memcpy(dst, src, vol->blocksize);
	overlay_drop(&vol->overlay, old);	/* clean copy: not needed */
	if ((err = log_redirect(vol, LOG_LEAF_REDIRECT, old, *newp)))
		return err;
	return bfree_deferred(vol, old, 1);
}

/* Redirect of a bnode: at most once per unify cycle. */
static int bnode_cow(struct tux3_volume *vol, uint64_t old, uint64_t *newp)
{
	uint8_t *src, *dst;
	int err;

	if (overlay_flags(&vol->overlay, old) & OV_UNIFY_DIRTY) {
		*newp = old;
		return 0;
	}
	if ((err = image_get(vol, old, &src)))
		return err;
	if ((err = meta_alloc(vol, old, OV_UNIFY_DIRTY, newp, &dst)))
		return err;
	if (*newp == old)
		return moved_onto_itself(vol, old);
	src = overlay_edit(&vol->overlay, old, NULL);
	memcpy(dst, src, vol->blocksize);
	overlay_drop(&vol->overlay, old);
	if ((err = log_redirect(vol, LOG_BNODE_REDIRECT, old, *newp)))
		return err;
	/* the committed bnode stays until the unify that replaces it */
	return defer_unify_add(vol, old, 1);
}

/*
 * A path copy that fails above a level it moved (an index node whose
 * entry for the moved child is not found by its key, no room for a
 * node): the delta holds the moved copy, logged, that nothing points to,
 * and the old block freed at the commit while its parent still does.
 * No undo is kept, so the volume takes no more commits (what the last
 * one left stays), as a kernel file system turns read-only on an error
 * it cannot back out of.
 */
static int path_copy_failed(struct tux3_volume *vol, uint64_t node, int err)
{
	vol->commit_failed = true;
	if (!vol->error.err)
		vol_error(vol, err, node, TUX3_NONE, TUX3_NONE, "index node: "
			  "the copy of a path to a leaf failed half way (%s): "
			  "nothing more is committed", strerror(-err));
	return err;
}

/* The blocks a path copy takes: the leaf unless this delta copied it,
 * and each index node above a moved child unless this unify cycle did. */
static uint64_t path_copies(struct tux3_volume *vol, const struct wpath *p)
{
	uint64_t need = 0;
	for (int l = p->depth - 1; l >= 0; l--) {
		unsigned mark = l == p->depth - 1 ? OV_DELTA_DIRTY :
			        OV_UNIFY_DIRTY;
		if (overlay_flags(&vol->overlay, p->lv[l].block) & mark)
			break;	/* stays: nothing above it moves */
		need++;
	}
	return need;
}

/*
 * Find the leaf for key and make the whole path to it writable, from the
 * leaf up, stopping at the first level that did not move.  bt->root may
 * change; *root_moved tells the caller to store it.
 */
int btree_wprobe(struct btree *bt, uint64_t key, struct wpath *p,
		 bool *root_moved)
{
	struct tux3_volume *vol = bt->vol;
	struct cursor c = { 0 };
	int err = btree_probe(bt, key, &c);

	*root_moved = false;
	if (err) {
		cursor_release(&c);
		return err;
	}
	p->depth = c.depth;
	for (int l = 0; l < c.depth; l++) {
		p->lv[l].block = c.path[l].blocknr;
		p->lv[l].index = c.path[l].index;
		p->lv[l].lo = c.path[l].lo;
		p->lv[l].hi = c.path[l].hi;
	}
	cursor_release(&c);

	/* room for the copies first: an ENOSPC half way would stop the
	 * volume's commits (path_copy_failed), one here changes nothing */
	if ((err = balloc_init(vol)))
		return err;
	if (vol->freeblocks < path_copies(vol, p))
		return -ENOSPC;
	uint64_t child = 0;
	bool moved = false;
	for (int l = p->depth - 1; l >= 0; l--) {
		uint64_t old = p->lv[l].block, new;
		if (l == p->depth - 1) {
			err = leaf_cow(vol, old, &new);
		} else {
			if (!moved)
				break;
			err = bnode_cow(vol, old, &new);
			if (!err) {
				uint8_t *img = overlay_edit(&vol->overlay, new,
							    NULL);
				uint64_t k = bnode_key(img, p->lv[l].index);
				err = bnode_update(img, k, child);
				if (!err)
					err = log_bnode_change(vol,
						LOG_BNODE_UPDATE, new, child, k);
			}
		}
		if (err)
			return moved ? path_copy_failed(vol, old, err) : err;
		moved = new != old;
		p->lv[l].block = new;
		child = new;
		if (l == 0 && moved) {
			bt->root.block = new;
			*root_moved = true;
		}
	}
	return 0;
}

uint8_t *wpath_leaf(struct tux3_volume *vol, const struct wpath *p)
{
	return overlay_edit(&vol->overlay, p->lv[p->depth - 1].block, NULL);
}

/* Entry 0's key is never read: a node's range starts at its lo.  A cut
 * made by fsck (the first child dropped), or a tree another writer left
 * so, may hold a key above lo there, and a separator at or below it
 * would then be refused as a duplicate or land out of order: the key is
 * set to lo first, logged as a key change (BNODE_ADJUST). */
static int entry0_to_lo(struct tux3_volume *vol, uint8_t *img,
			uint64_t node, uint64_t lo, uint64_t key)
{
	if (!bnode_count(img) || bnode_key(img, 0) <= lo ||
	    key > bnode_key(img, 0))
		return 0;
	uint64_t from = bnode_key(img, 0);
	int err = bnode_adjust(img, from, lo);
	if (err)
		return err;
	struct logrec r = { .code = LOG_BNODE_ADJUST, .block = node,
			    .from = from, .to = lo };
	return log_append(vol, &r);
}

/* Insert {key -> child} at level (a bnode of the writable path), splitting
 * upwards as needed; level -1 means above the root: a new root. */
static int insert_index(struct btree *bt, struct wpath *p, int level,
			uint64_t key, uint64_t child, bool *root_moved)
{
	struct tux3_volume *vol = bt->vol;
	unsigned bs = vol->blocksize;
	uint8_t *img, *nimg;
	uint64_t newb;
	int err;

	if (level < 0) {
		if (bt->root.depth >= TUX3_MAX_DEPTH)
			return -EFBIG;
		if ((err = meta_alloc(vol, bt->root.block, OV_UNIFY_DIRTY,
				      &newb, &img)))
			return err;
		bnode_init_root(img, bs, 2, bt->root.block, child, key);
		struct logrec r = { .code = LOG_BNODE_ROOT, .count = 2,
				    .root = newb, .left = bt->root.block,
				    .right = child, .rkey = key };
		if ((err = log_append(vol, &r)))
			return err;
		bt->root.block = newb;
		bt->root.depth++;
		*root_moved = true;
		return 0;
	}
	uint64_t parent = p->lv[level].block;
	img = overlay_edit(&vol->overlay, parent, NULL);
	if (!img)
		return -EIO;
	if ((err = entry0_to_lo(vol, img, parent, p->lv[level].lo, key)))
		return err;
	err = bnode_add(img, bs, key, child);
	if (!err)
		return log_bnode_change(vol, LOG_BNODE_ADD, parent, child, key);
	if (err != -ENOSPC)
		return err;
	/* full: split it in half, add to the half that covers key, then
	 * give the new half its place one level up */
	if ((err = meta_alloc(vol, parent, OV_UNIFY_DIRTY, &newb, &nimg)))
		return err;
	img = overlay_edit(&vol->overlay, parent, NULL);
	unsigned half = bnode_count(img) / 2;
	uint64_t newkey = bnode_key(img, half);
	if ((err = bnode_split(img, half, nimg, bs)))
		return err;
	struct logrec r = { .code = LOG_BNODE_SPLIT, .pos = half, .src = parent,
			    .dst = newb };
	if ((err = log_append(vol, &r)))
		return err;
	uint64_t target = key >= newkey ? newb : parent;
	err = bnode_add(target == newb ? nimg : img, bs, key, child);
	if (!err)
		err = log_bnode_change(vol, LOG_BNODE_ADD, target, child, key);
	if (err)
		return err;
	return insert_index(bt, p, level - 1, newkey, newb, root_moved);
}

/*
 * Split the (writable) leaf of the path: a new leaf takes the upper part
 * and its first key becomes the separator in the parent.  The path is
 * stale afterwards: probe again.
 */
int btree_split_leaf(struct btree *bt, struct wpath *p, bool *root_moved)
{
	if (!bt->ops->leaf_split)
		return -EOPNOTSUPP;
	return btree_split_leaf_by(bt, p, bt->ops->leaf_split, root_moved);
}

/* The same, with a split rule of the caller's (see itable_set). */
int btree_split_leaf_by(struct btree *bt, struct wpath *p,
			leaf_split_fn split, bool *root_moved)
{
	struct tux3_volume *vol = bt->vol;
	uint64_t leaf = p->lv[p->depth - 1].block, newb, sep;
	uint8_t *img, *nimg;
	int err;

	if ((err = meta_alloc(vol, leaf + 1, OV_DELTA_DIRTY, &newb, &nimg)))
		return err;
	if ((err = log_balloc(vol, newb, 1)))
		return err;
	img = overlay_edit(&vol->overlay, leaf, NULL);
	err = split(vol, img, nimg, &sep);
	/* a separator at an end of the leaf's range splits nothing (one
	 * inode at the end of an ileaf's range): the new block goes back */
	if (!err && (sep <= p->lv[p->depth - 1].lo ||
		     sep >= p->lv[p->depth - 1].hi))
		err = -EINVAL;
	if (err) {
		int e2 = log_bfree(vol, LOG_BFREE, newb, 1);
		if (!e2)
			e2 = bfree_now(vol, newb, 1);
		return e2 ? e2 : err;
	}
	return insert_index(bt, p, p->depth - 2, sep, newb, root_moved);
}

int btree_split_leaf_at(struct btree *bt, struct wpath *p, uint64_t at,
			bool *root_moved)
{
	struct tux3_volume *vol = bt->vol;
	uint64_t leaf = p->lv[p->depth - 1].block, newb;
	uint8_t *nimg;
	int err;

	if (at <= p->lv[p->depth - 1].lo || at >= p->lv[p->depth - 1].hi)
		return -EINVAL;
	if ((err = meta_alloc(vol, leaf + 1, OV_DELTA_DIRTY, &newb, &nimg)) ||
	    (err = log_balloc(vol, newb, 1)))
		return err;
	bt->ops->leaf_init(vol, nimg, at);
	return insert_index(bt, p, p->depth - 2, at, newb, root_moved);
}

/* A new tree of one empty leaf (depth 1), e.g. a file's first dleaf. */
int btree_create_leaf(struct btree *bt, uint64_t goal)
{
	struct tux3_volume *vol = bt->vol;
	uint64_t block;
	uint8_t *img;
	int err;

	if ((err = meta_alloc(vol, goal, OV_DELTA_DIRTY, &block, &img)))
		return err;
	if ((err = log_balloc(vol, block, 1)))
		return err;
	bt->ops->leaf_init(vol, img, 0);
	bt->root = (struct root){ .block = block, .depth = 1 };
	return 0;
}

/* ---- a whole tree given back ---- */

struct free_nodes {
	uint64_t *v;
	size_t n, cap;
	size_t nleaves;		/* v[0..nleaves) leaves, the rest bnodes */
	bool leaves;
};

static int note_node(struct free_nodes *f, uint64_t block)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		uint64_t *v = realloc(f->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n++] = block;
	return 0;
}

static int free_leaf(void *ctx, struct btree *bt, uint64_t blocknr,
		     const uint8_t *buf, uint64_t lo, uint64_t hi)
{
	struct free_nodes *f = ctx;
	(void)bt; (void)buf; (void)lo; (void)hi;
	return f->leaves ? note_node(f, blocknr) : 0;
}

static int free_bnode(void *ctx, struct btree *bt, int level,
		      uint64_t blocknr, const uint8_t *buf, uint64_t lo,
		      uint64_t hi)
{
	struct free_nodes *f = ctx;
	(void)bt; (void)level; (void)buf; (void)lo; (void)hi;
	return f->leaves ? 0 : note_node(f, blocknr);
}

/* A block this delta allocated goes at once, any other after the commit
 * (the committed state still references it). */
static int give_back(struct tux3_volume *vol, uint64_t block)
{
	return blockset_has(&vol->fresh, block) ? bfree_now(vol, block, 1) :
						 bfree_deferred(vol, block, 1);
}

int btree_free_nodes(struct btree *bt)
{
	static const struct btree_visit visit = { .bnode = free_bnode,
						  .leaf = free_leaf };
	struct tux3_volume *vol = bt->vol;
	struct free_nodes f = { 0 };
	int err;

	/* every node first, leaves then bnodes: a damaged tree frees
	 * nothing */
	f.leaves = true;
	err = btree_traverse(bt, &visit, &f);
	f.nleaves = f.n;
	f.leaves = false;
	if (!err)
		err = btree_traverse(bt, &visit, &f);
	/* a leaf with BFREE; a bnode with BNODE_FREE, which also drops the
	 * image replay keeps of it, so that the block reused reads as what
	 * is written there */
	for (size_t i = 0; i < f.n && !err; i++) {
		err = log_bfree(vol, i < f.nleaves ? LOG_BFREE : LOG_BNODE_FREE,
				f.v[i], 1);
		if (!err)
			err = give_back(vol, f.v[i]);
	}
	free(f.v);
	return err;
}
