/*
 * The one generic B-tree reader.  itree, otree and every dtree share it;
 * the per-tree ops only say what a valid leaf looks like.  Every node is
 * validated on the way down, including that its keys stay inside the
 * separator range its parent gave it, and depth is bounded, so a corrupt
 * tree can neither crash nor loop.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "core.h"

static int cursor_load(struct cursor *c, int level, uint64_t blocknr,
		       uint64_t lo, uint64_t hi)
{
	struct btree *bt = c->btree;
	struct tux3_volume *vol = bt->vol;
	struct cursor_level *at = &c->path[level];
	int err;

	if (!at->buf) {
		at->buf = vol_buf_get(vol);
		if (!at->buf)
			return -ENOMEM;
		c->vol = vol;
	}
	at->blocknr = blocknr;
	at->lo = lo;
	at->hi = hi;
	at->index = 0;
	err = vol_read_block(vol, blocknr, at->buf);
	if (err)
		return err;
	/* a probe loads the same nodes again and again (the root and
	 * index nodes always, a directory's or the inode table's last
	 * leaf for every create): each is checked once while its bytes
	 * stay */
	bool leaf = level == c->depth - 1;
	uintptr_t kind = leaf ? (uintptr_t)bt->ops : NODE_MEMO_BNODE;
	if (node_memo_has(&vol->memo, blocknr, lo, hi, kind))
		err = 0;
	else if (!leaf)
		err = bnode_check(vol, at->buf, blocknr, lo, hi, level == 0);
	else
		err = bt->ops->leaf_check(vol, at->buf, blocknr, lo, hi);
	if (!err)
		node_memo_add(&vol->memo, blocknr, lo, hi, kind);
	at->count = err || leaf ? 0 : bnode_count(at->buf);
	if (err && vol->error.inum == TUX3_NONE)
		vol->error.inum = bt->owner;
	return err;
}

/* Descend from `level` (already loaded) along entry `index`, always taking
 * entry 0 below it when leftmost is set, else following key. */
static int cursor_descend(struct cursor *c, int level, uint64_t key,
			  bool leftmost)
{
	for (; level < c->depth - 1; level++) {
		struct cursor_level *at = &c->path[level];
		unsigned i = leftmost ? at->index : bnode_search(at->buf, key);
		uint64_t lo = i ? bnode_key(at->buf, i) : at->lo;
		uint64_t hi = i + 1 < at->count ? bnode_key(at->buf, i + 1) :
			      at->hi;
		at->index = i;
		int err = cursor_load(c, level + 1, bnode_child(at->buf, i),
				      lo, hi);
		if (err)
			return err;
		if (leftmost)
			c->path[level + 1].index = 0;
	}
	return 0;
}

int btree_probe(struct btree *bt, uint64_t key, struct cursor *c)
{
	if (!c->btree) {
		memset(c, 0, sizeof(*c));
		c->btree = bt;
	}
	c->btree = bt;
	if (bt->root.direct || bt->root.depth < 1 ||
	    bt->root.depth > TUX3_MAX_DEPTH)
		return vol_error(bt->vol, -EUCLEAN, TUX3_NONE, bt->owner,
				 TUX3_NONE, "%s: invalid root (depth %u)",
				 bt->ops->name, bt->root.depth);
	c->depth = (int)bt->root.depth;
	int err = cursor_load(c, 0, bt->root.block, 0, TUX3_KEY_LIMIT);
	if (err)
		return err;
	return cursor_descend(c, 0, key, false);
}

int btree_next_leaf(struct cursor *c)
{
	int level = c->depth - 2;
	while (level >= 0 && c->path[level].index + 1 >= c->path[level].count)
		level--;
	if (level < 0)
		return 0;
	c->path[level].index++;
	struct cursor_level *at = &c->path[level];
	unsigned i = at->index;
	uint64_t hi = i + 1 < at->count ? bnode_key(at->buf, i + 1) : at->hi;
	int err = cursor_load(c, level + 1, bnode_child(at->buf, i),
			      bnode_key(at->buf, i), hi);
	if (err)
		return err;
	c->path[level + 1].index = 0;
	err = cursor_descend(c, level + 1, 0, true);
	return err ? err : 1;
}

/* Key range of the current leaf */
void cursor_leaf_range(struct cursor *c, uint64_t *lo, uint64_t *hi)
{
	*lo = c->path[c->depth - 1].lo;
	*hi = c->path[c->depth - 1].hi;
}

void cursor_release(struct cursor *c)
{
	for (int i = 0; i <= TUX3_MAX_DEPTH; i++) {
		if (c->path[i].buf)
			vol_buf_put(c->vol, c->path[i].buf);
		c->path[i].buf = NULL;
	}
	c->btree = NULL;
}

/*
 * Depth-first traversal of a whole tree, for the walker.  A node that
 * fails validation, or is reached a second time, is reported through
 * visit->bad_at (with where it hangs: its range, its parent and the
 * entry there) or visit->bad, and skipped; its siblings are still
 * visited.  Returns the first error met, or the first
 * non-zero value a callback returned (which also stops the walk).
 */
struct traverse {
	struct btree *bt;
	const struct btree_visit *v;
	void *ctx;
	uint8_t *bufs[TUX3_MAX_DEPTH];
	uint64_t path[TUX3_MAX_DEPTH];	/* the bnodes above the node ... */
	unsigned index[TUX3_MAX_DEPTH];	/* ... and the entries followed */
	struct blockset seen;
	struct spacemap dense;		/* seen, once it grew (seen_add) */
	bool dense_on;
	int err;
};

/*
 * The nodes a traversal has reached, to refuse a cycle or a node reached
 * twice: a hash set while there are few (a file's tree has a handful),
 * then, past SEEN_DENSE of them, a bitmap of the volume's blocks in
 * chunks made where nodes are (io/spacemap.c).  The set costs 16 to 32
 * bytes a node, which for the inode table of ten million files was most
 * of fsck's memory; the bitmap costs a bit a block of the regions the
 * tree lies in.  Blocks beyond the volume (damage) stay in the set.
 */
#define SEEN_DENSE	4096
#define SEEN_CHUNK_BITS	15

static int seen_densify(struct traverse *t)
{
	struct tux3_volume *vol = t->bt->vol;
	struct blockset outside = { 0 };
	int err = spacemap_init(&t->dense, SEEN_CHUNK_BITS, SEEN_CHUNK_BITS,
				vol->volblocks);
	for (size_t i = 0; !err && i < t->seen.cap; i++) {
		uint64_t b = t->seen.slots[i];
		if (!b--)
			continue;
		int r = b < vol->volblocks ? spacemap_set(&t->dense, b, true) :
			blockset_add(&outside, b);
		err = r < 0 ? r : 0;
	}
	if (err) {
		spacemap_free(&t->dense);
		blockset_free(&outside);
		return err;
	}
	blockset_free(&t->seen);
	t->seen = outside;
	t->dense_on = true;
	return 0;
}

/* 1: blocknr is new, 0: reached before, or a negative errno. */
static int seen_add(struct traverse *t, uint64_t blocknr)
{
	if (t->dense_on && blocknr < t->bt->vol->volblocks) {
		int was = spacemap_set(&t->dense, blocknr, true);
		return was < 0 ? was : !was;
	}
	int r = blockset_add(&t->seen, blocknr);
	if (r == 1 && !t->dense_on && t->seen.count >= SEEN_DENSE) {
		int err = seen_densify(t);
		if (err)
			return err;
	}
	return r;
}

/* A traversal reads every child of a bnode: ask for them all before
 * the first is needed, runs of adjacent blocks as one request, so that
 * on a cold cache the device works while we check (the children were
 * range-checked by bnode_check). */
static void readahead_children(struct tux3_volume *vol, const uint8_t *buf,
			       unsigned count)
{
	uint64_t start = 0, n = 0;
	for (unsigned i = 0; i <= count; i++) {
		uint64_t b = i < count ? bnode_child(buf, i) : 0;
		if (n && b == start + n) {
			n++;
			continue;
		}
		if (n)
			vol_readahead(vol, start, n);
		start = b;
		n = i < count;
	}
}

static int traverse_node(struct traverse *t, int level, uint64_t blocknr,
			 uint64_t lo, uint64_t hi)
{
	struct btree *bt = t->bt;
	struct tux3_volume *vol = bt->vol;
	bool leaf = level == (int)bt->root.depth - 1;
	uint8_t *buf = t->bufs[level];
	int err = seen_add(t, blocknr);
	bool twice = !err;

	if (err < 0)
		return err;
	if (twice)
		err = vol_error(vol, -EUCLEAN, blocknr, bt->owner, TUX3_NONE,
				"%s: block reached twice (cycle or shared "
				"node)", bt->ops->name);
	else
		err = vol_read_block(vol, blocknr, buf);

	if (!err)
		err = leaf ? bt->ops->leaf_check(vol, buf, blocknr, lo, hi) :
			     bnode_check(vol, buf, blocknr, lo, hi, !level);
	if (err) {
		if (vol->error.inum == TUX3_NONE)
			vol->error.inum = bt->owner;
		if (!t->err)
			t->err = err;
		if (t->v->bad_at) {
			struct btree_pos pos = {
				.level = level, .blocknr = blocknr, .lo = lo,
				.hi = hi, .twice = twice,
				.parent = level ? t->path[level - 1] :
					  TUX3_NONE,
				.index = level ? t->index[level - 1] : 0,
			};
			return t->v->bad_at(t->ctx, bt, &pos, err);
		}
		if (t->v->bad)
			return t->v->bad(t->ctx, bt, level, blocknr, err);
		return 0;
	}
	if (leaf)
		return t->v->leaf ? t->v->leaf(t->ctx, bt, blocknr, buf, lo, hi)
				  : 0;
	if (t->v->bnode) {
		int r = t->v->bnode(t->ctx, bt, level, blocknr, buf, lo, hi);
		if (r > 0)
			return 0;	/* skip children */
		if (r < 0)
			return r;
	}
	unsigned count = bnode_count(buf);
	t->path[level] = blocknr;
	if (vol_readahead_on(vol))
		readahead_children(vol, buf, count);
	for (unsigned i = 0; i < count; i++) {
		/* buf is reused below this level: re-read entries each time
		 * from our own level's buffer, which deeper calls don't touch */
		uint64_t clo = i ? bnode_key(buf, i) : lo;
		uint64_t chi = i + 1 < count ? bnode_key(buf, i + 1) : hi;
		t->index[level] = i;
		int r = traverse_node(t, level + 1, bnode_child(buf, i), clo,
				      chi);
		if (r)
			return r;
	}
	return 0;
}

int btree_traverse(struct btree *bt, const struct btree_visit *v, void *ctx)
{
	struct traverse t = { .bt = bt, .v = v, .ctx = ctx };
	int r;

	if (bt->root.direct || bt->root.depth < 1 ||
	    bt->root.depth > TUX3_MAX_DEPTH)
		return vol_error(bt->vol, -EUCLEAN, TUX3_NONE, bt->owner,
				 TUX3_NONE, "%s: invalid root (depth %u)",
				 bt->ops->name, bt->root.depth);
	for (unsigned i = 0; i < bt->root.depth; i++) {
		t.bufs[i] = malloc(bt->vol->blocksize);
		if (!t.bufs[i]) {
			r = -ENOMEM;
			goto out;
		}
	}
	r = traverse_node(&t, 0, bt->root.block, 0, TUX3_KEY_LIMIT);
	if (!r)
		r = t.err;
out:
	for (unsigned i = 0; i < bt->root.depth; i++)
		free(t.bufs[i]);
	blockset_free(&t.seen);
	if (t.dense_on)
		spacemap_free(&t.dense);
	return r;
}
