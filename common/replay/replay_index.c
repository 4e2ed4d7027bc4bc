/*
 * Salvage replay (replay.c): the inode table's index rebuilt from the
 * leaves found on the volume.
 *
 * Before the first unify the inode table's bnodes exist only as the log's
 * BNODE_* records: mkfs's first delta creates the root (BNODE_ROOT), adds
 * a leaf per split (BNODE_ADD) and, as the table grows, splits bnodes
 * (BNODE_SPLIT) and roots a deeper tree (BNODE_ROOT again).  When a log
 * block of that delta is lost, the salvage replay has no image to apply
 * the later records to, or applies them to nodes that no longer fit
 * their parents, and inodes are out of reach although each leaf is on
 * the volume as it was written (nothing is overwritten before a unify).
 * So when the index stage 1 leaves does not serve (a node that is no
 * bnode, keys outside the parent's range, a block reached twice, a leaf
 * that is no ileaf of its range), it is rebuilt, every level, from the
 * ileaves a scan of the volume finds; and when it serves but the scan
 * finds leaves it lacks (their BNODE_ADDs lost), it is rebuilt over
 * them too.  The nodes below the root go to the blocks of the old
 * index's nodes (the walk of what stage 1 left, and the bnodes records
 * tie to them or to a leaf), none a record freed: a level's entries are
 * spread evenly over as few nodes as hold them, so the old tree, built
 * by splits, had blocks enough unless a lost record made most of them.
 * The images go to the overlay; the unify of fsck's commit writes them.
 *
 * Choosing among stale copies: a leaf moved by a delta (LEAF_REDIRECT)
 * leaves its old copy behind, and a split leaves the old, longer copy of
 * the leaf it split.  The log's surviving records decide first: the
 * latest BNODE_ADD or BNODE_UPDATE for a key of a node names its leaf,
 * a LEAF_REDIRECT's old block and a freed block are stale, a block
 * allocated or redirected to later is not.  What they do not decide is
 * taken newest first by block number (the writer allocates upwards while
 * nothing was freed, as in mkfs's first delta), and a copy whose inodes
 * overlap a leaf already taken is left out.  Under a sound index its own
 * leaves come first, and another leaf is taken only if this cycle
 * allocated it or the volume was never unified (an older cycle's freed
 * leaf must not come back).  Pass 3 and the later passes
 * of fsck check what this gives like any other tree.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "core.h"

/* The largest volume whose blocks are looked through for leaves. */
#define INDEX_SCAN_MAX_BLOCKS (1ULL << 22)

struct leaf {
	uint64_t block, ibase, last;	/* the inodes it holds: ibase..last */
	uint64_t key;			/* a surviving record's key for it */
	uint64_t seq;			/* ... and that record's place */
	bool stale, named;
	bool fresh;			/* allocated by a surviving record */
	bool in_tree;			/* under the sound index stage 1 left */
};

struct leaves {
	struct leaf *v;
	size_t n, cap;
};

static int leaves_push(struct leaves *l, const struct leaf *x)
{
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 64;
		void *n = realloc(l->v, ncap * sizeof(*l->v));
		if (!n)
			return -ENOMEM;
		l->v = n;
		l->cap = ncap;
	}
	l->v[l->n++] = *x;
	return 0;
}

/* In an array of n records of size bytes, sorted by the block number
 * each begins with: the first at or after block, or n. */
static size_t first_at(const void *v, size_t n, size_t size, uint64_t block)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t b;
		memcpy(&b, (const char *)v + mid * size, sizeof(b));
		if (b < block)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The leaves are in block order (the scan's): the first at or after
 * block, or l->n. */
static size_t leaf_at(const struct leaves *l, uint64_t block)
{
	return first_at(l->v, l->n, sizeof(*l->v), block);
}

/* Mark the leaves in [block, block + count) stale or current. */
static void mark_range(struct leaves *l, uint64_t block, uint64_t count,
		       bool stale)
{
	for (size_t i = leaf_at(l, block);
	     i < l->n && l->v[i].block - block < count; i++)
		l->v[i].stale = stale;
}

/* The leaves in [block, block + count) were allocated in this cycle. */
static void mark_fresh(struct leaves *l, uint64_t block, uint64_t count)
{
	for (size_t i = leaf_at(l, block);
	     i < l->n && l->v[i].block - block < count; i++)
		l->v[i].fresh = true;
}

/* Is block one of the log chain's?  Such a block can hold an ileaf's
 * bytes only by damage (a misdirected write, a copy): it is the log's. */
static bool in_log(const struct tux3_volume *vol, uint64_t block)
{
	for (unsigned i = 0; i < vol->logcount; i++)
		if (vol->log[i].blocknr == block)
			return true;
	return block == vol->super.logchain;
}

/* Every ileaf of the volume that validates on its own, and holds an
 * inode, in block order; the log's blocks and the bnodes stage 1 left
 * in the overlay (an older leaf's bytes under them on the disk) are not
 * looked at. */
static int scan_leaves(struct tux3_volume *vol, uint64_t root,
		       struct leaves *l)
{
	uint8_t *buf = malloc(vol->blocksize);
	int err = 0;
	if (!buf)
		return -ENOMEM;
	for (uint64_t b = vol->reserved_blocks; b < vol->volblocks; b++) {
		bool dropped;
		if (b == root || overlay_find(&vol->overlay, b, &dropped) ||
		    dropped ||
		    dev_pread(&vol->dev, buf, 2, b << vol->blockbits) ||
		    be16(buf) != TUX3_MAGIC_ILEAF || in_log(vol, b) ||
		    dev_pread(&vol->dev, buf, vol->blocksize,
			      b << vol->blockbits))
			continue;
		uint64_t ibase = ileaf_ibase(buf);
		if (ileaf_check(vol, buf, b, 0, TUX3_KEY_LIMIT,
				TUX3_MAGIC_ILEAF)) {
			tux3_clear_error(vol);
			continue;
		}
		struct leaf x = { .block = b, .ibase = ibase, .last = ibase };
		bool any = false;
		for (unsigned k = ileaf_count(buf); k > 0 && !any; k--) {
			const uint8_t *blob;
			unsigned len;
			ileaf_blob(buf, vol->blocksize, ibase + k - 1, &blob,
				   &len);
			if (len) {
				x.last = ibase + k - 1;
				any = true;
			}
		}
		if (any && (err = leaves_push(l, &x)))
			break;
	}
	free(buf);
	return err;
}

/* Call fn on each record the salvage replay reads, in log order (the
 * damaged bytes stage 1 stepped over are stepped over here too). */
static void for_each_record(struct tux3_volume *vol,
			    void (*fn)(void *ctx, const struct logrec *r),
			    void *ctx)
{
	struct logrec r;
	for (unsigned i = 0; i < vol->logcount; i++) {
		struct logblk *lb = &vol->log[i];
		if (!lb->data)
			continue;
		unsigned end = LOG_HEADER_SIZE + lb->head.bytes, size;
		for (unsigned off = LOG_HEADER_SIZE; off < end; off += size) {
			for (unsigned g = 0; g < vol->salvage.ngaps; g++)
				if (vol->salvage.gaps[g].index == i &&
				    vol->salvage.gaps[g].from == off)
					off = vol->salvage.gaps[g].to;
			if (off >= end ||
			    !(size = log_decode_record(lb->data, off, end, &r)))
				break;
			fn(ctx, &r);
		}
	}
}

/* The index nodes of the inode table: the root, the bnodes a walk from
 * it reaches, and those the records tie to them or to a leaf. */
struct node {
	uint64_t block;
	bool walked;		/* in the tree stage 1 left */
	bool dead;		/* freed (or moved away from) by a record */
	bool moved;		/* dead only as a redirect's source: its
				 * block stays allocated until the unify */
};

struct rebuild {
	struct tux3_volume *vol;
	uint64_t root;
	unsigned depth;
	struct leaves leaves;
	struct blockset known;	/* the nodes' blocks */
	struct blockset visited;	/* blocks the walk reached */
	struct node *v;
	size_t n, cap;
	uint64_t seq;		/* records that name a leaf, counted */
	bool unsound;		/* the index stage 1 left cannot serve */
	bool never_unified;	/* every block is of this log cycle */
	size_t in_tree;		/* leaves under the sound index */
	bool grew;
};

static int node_add(struct rebuild *rb, uint64_t block, bool walked)
{
	if (block < rb->vol->reserved_blocks || block >= rb->vol->volblocks)
		return 0;
	int added = blockset_add(&rb->known, block);
	if (added <= 0)
		return added;
	if (rb->n == rb->cap) {
		size_t ncap = rb->cap ? rb->cap * 2 : 32;
		void *n = realloc(rb->v, ncap * sizeof(*rb->v));
		if (!n)
			return -ENOMEM;
		rb->v = n;
		rb->cap = ncap;
	}
	rb->v[rb->n++] = (struct node){ .block = block, .walked = walked };
	rb->grew = true;
	return 0;
}

/* A block's image as the read path sees it: the overlay's, else the
 * disk's (into buf); NULL when dropped or unreadable. */
static const uint8_t *node_image(struct tux3_volume *vol, uint64_t block,
				 uint8_t *buf)
{
	bool dropped;
	uint8_t *d = overlay_edit(&vol->overlay, block, &dropped);
	if (d || dropped)
		return d;
	return dev_pread(&vol->dev, buf, vol->blocksize,
			 block << vol->blockbits) ? NULL : buf;
}

/* Does the child at the leaf level look like the leaf for [lo, hi)? */
static bool leaf_fits(struct rebuild *rb, uint64_t block, uint64_t lo,
		      uint64_t hi)
{
	struct tux3_volume *vol = rb->vol;
	uint8_t head[ILEAF_HEADER];
	bool dropped;
	if (block < vol->reserved_blocks || block >= vol->volblocks ||
	    blockset_add(&rb->visited, block) != 1)
		return false;
	const uint8_t *d = overlay_find(&vol->overlay, block, &dropped);
	if (dropped)
		return false;
	if (!d) {
		if (dev_pread(&vol->dev, head, sizeof(head),
			      block << vol->blockbits))
			return false;
		d = head;
	}
	return be16(d) == TUX3_MAGIC_ILEAF && ileaf_ibase(d) >= lo &&
	       ileaf_ibase(d) < hi;
}

/* Walk the index stage 1 left, as far as its bnodes read: each one is
 * a node (a block to build the new index in), and any fault (not a
 * bnode, keys out of range, a block reached twice, a leaf that is not
 * one) makes it unsound. */
static int walk_index(struct rebuild *rb, uint64_t block, unsigned level,
		      uint64_t lo, uint64_t hi)
{
	struct tux3_volume *vol = rb->vol;
	int err = blockset_add(&rb->visited, block);
	if (err <= 0) {
		rb->unsound = true;
		return err;
	}
	uint8_t *buf = malloc(vol->blocksize);
	if (!buf)
		return -ENOMEM;
	const uint8_t *d = node_image(vol, block, buf);
	unsigned count = d ? bnode_count(d) : 0;
	if (!d || be16(d) != TUX3_MAGIC_BNODE || !count ||
	    count > bnode_capacity(vol->blocksize)) {
		rb->unsound = true;
		free(buf);
		return 0;
	}
	if (bnode_check(vol, d, block, lo, hi, !level)) {
		tux3_clear_error(vol);
		rb->unsound = true;
	}
	err = node_add(rb, block, true);
	for (unsigned i = 0; i < count && !err; i++) {
		uint64_t child = bnode_child(d, i);
		uint64_t clo = i ? bnode_key(d, i) : lo;
		uint64_t chi = i + 1 < count ? bnode_key(d, i + 1) : hi;
		if (level + 2 < rb->depth) {
			if (child >= vol->reserved_blocks &&
			    child < vol->volblocks)
				err = walk_index(rb, child, level + 1, clo, chi);
			else
				rb->unsound = true;
		} else if (!leaf_fits(rb, child, clo, chi)) {
			rb->unsound = true;
		}
	}
	free(buf);
	return err;
}

static bool is_leaf(const struct rebuild *rb, uint64_t block)
{
	size_t k = leaf_at(&rb->leaves, block);
	return k < rb->leaves.n && rb->leaves.v[k].block == block;
}

/* A block under a node of the inode table's index: a node or a leaf. */
static bool is_child(const struct rebuild *rb, uint64_t block)
{
	return blockset_has(&rb->known, block) || is_leaf(rb, block);
}

static void tie(struct rebuild *rb, bool known, uint64_t block, int *err)
{
	if (known && !*err && !blockset_has(&rb->known, block))
		*err = node_add(rb, block, false);
}

struct infer_ctx {
	struct rebuild *rb;
	int err;
};

/* The records that tie a bnode to the inode table's index: the parent
 * of one of its leaves or nodes, a split of a node, its new place. */
static void infer(void *ctx, const struct logrec *r)
{
	struct infer_ctx *c = ctx;
	struct rebuild *rb = c->rb;
	switch (r->code) {
	case LOG_BNODE_ADD: case LOG_BNODE_UPDATE:
		tie(rb, is_child(rb, r->child), r->parent, &c->err);
		break;
	case LOG_BNODE_ROOT:
		tie(rb, is_child(rb, r->left) ||
		    (r->count > 1 && is_child(rb, r->right)), r->root, &c->err);
		break;
	case LOG_BNODE_SPLIT:
		tie(rb, blockset_has(&rb->known, r->src), r->dst, &c->err);
		tie(rb, blockset_has(&rb->known, r->dst), r->src, &c->err);
		break;
	case LOG_BNODE_MERGE:
		tie(rb, blockset_has(&rb->known, r->src), r->dst, &c->err);
		tie(rb, blockset_has(&rb->known, r->dst), r->src, &c->err);
		break;
	case LOG_BNODE_REDIRECT:
		tie(rb, blockset_has(&rb->known, r->oldb), r->newb, &c->err);
		tie(rb, blockset_has(&rb->known, r->newb), r->oldb, &c->err);
		break;
	}
}

static int by_node_block(const void *a, const void *b)
{
	const struct node *x = a, *y = b;
	return x->block < y->block ? -1 : x->block > y->block;
}

/* Set the nodes in [block, block + count) dead or alive (v sorted);
 * moved: dead as a redirect's source, whose free waits for the unify. */
static void mark_nodes(struct rebuild *rb, uint64_t block, uint64_t count,
		       bool dead, bool moved)
{
	size_t lo = first_at(rb->v, rb->n, sizeof(*rb->v), block);
	for (; lo < rb->n && rb->v[lo].block - block < count; lo++) {
		rb->v[lo].dead = dead;
		rb->v[lo].moved = moved;
	}
}

/* Blocks a record allocates: a moved node among them is not free to
 * take. */
static void unmove_nodes(struct rebuild *rb, uint64_t block, uint64_t count)
{
	size_t lo = first_at(rb->v, rb->n, sizeof(*rb->v), block);
	for (; lo < rb->n && rb->v[lo].block - block < count; lo++)
		rb->v[lo].moved = false;
}

/* What the log's records say of the leaves and of the nodes, in log
 * order: which are stale, and the key a record gave a leaf. */
static void apply_record(void *ctx, const struct logrec *r)
{
	struct rebuild *rb = ctx;
	struct leaves *l = &rb->leaves;
	size_t k;
	uint64_t count;
	switch (r->code) {
	case LOG_LEAF_REDIRECT:
		mark_range(l, r->oldb, 1, true);
		mark_range(l, r->newb, 1, false);
		mark_fresh(l, r->newb, 1);
		unmove_nodes(rb, r->newb, 1);
		break;
	case LOG_BNODE_REDIRECT:
		mark_nodes(rb, r->oldb, 1, true, true);
		mark_nodes(rb, r->newb, 1, false, false);
		break;
	case LOG_BFREE: case LOG_BFREE_RELOG:
	case LOG_LEAF_FREE: case LOG_BNODE_FREE:
		count = r->code == LOG_BFREE || r->code == LOG_BFREE_RELOG ?
			r->count : 1;
		mark_range(l, r->block, count, true);
		mark_nodes(rb, r->block, count, true, false);
		break;
	case LOG_BNODE_MERGE:
		mark_nodes(rb, r->src, 1, true, false);
		break;
	case LOG_BALLOC:
		/* not a node's: a bnode's block comes with its record; but
		 * a moved node's block allocated again is not free to take */
		mark_range(l, r->block, r->count, false);
		mark_fresh(l, r->block, r->count);
		unmove_nodes(rb, r->block, r->count);
		break;
	case LOG_BNODE_ROOT:
		mark_nodes(rb, r->root, 1, false, false);
		break;
	case LOG_BNODE_SPLIT:
		mark_nodes(rb, r->dst, 1, false, false);
		break;
	case LOG_BNODE_ADD: case LOG_BNODE_UPDATE:
		if (!blockset_has(&rb->known, r->parent))
			break;
		k = leaf_at(l, r->child);
		if (k < l->n && l->v[k].block == r->child &&
		    r->key <= l->v[k].ibase) {
			l->v[k].named = true;
			l->v[k].key = r->key;
			l->v[k].seq = ++rb->seq;
		}
		break;
	}
}

/* By key, the latest record first. */
static int by_key_latest(const void *a, const void *b)
{
	const struct leaf *x = *(const struct leaf *const *)a;
	const struct leaf *y = *(const struct leaf *const *)b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->seq > y->seq ? -1 : x->seq < y->seq;
}

static int by_block_desc(const void *a, const void *b)
{
	const struct leaf *x = *(const struct leaf *const *)a;
	const struct leaf *y = *(const struct leaf *const *)b;
	return x->block > y->block ? -1 : x->block < y->block;
}

/* Does x's range of inodes overlap a leaf of taken[0..n), sorted by
 * ibase? */
static bool overlaps(struct leaf *const *taken, size_t n,
		     const struct leaf *x, size_t *pos)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (taken[mid]->ibase < x->ibase)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pos = lo;
	return (lo < n && taken[lo]->ibase <= x->last) ||
	       (lo > 0 && taken[lo - 1]->last >= x->ibase);
}

/* Take x into taken (sorted by ibase) unless it overlaps. */
static void take(struct leaf **taken, size_t *n, struct leaf *x)
{
	size_t pos;
	if (overlaps(taken, *n, x, &pos))
		return;
	memmove(taken + pos + 1, taken + pos, (*n - pos) * sizeof(*taken));
	taken[pos] = x;
	(*n)++;
}

/*
 * Pick the leaves into taken, by ibase, none overlapping another: those
 * under a sound index first; then the ones the records name (the latest
 * record for a key names its leaf); then the others, newest first.
 * Under a sound index, another leaf is one lost with the records that
 * added it: one this cycle allocated, or on a volume never unified any
 * leaf no record made stale (an older cycle's leaf that was freed, whose
 * record is folded into the bitmap, must not come back).  Returns how
 * many.
 */
static size_t pick_leaves(const struct rebuild *rb, struct leaf **taken,
			  struct leaf **order)
{
	const struct leaves *l = &rb->leaves;
	size_t n = 0, m = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].in_tree)
			take(taken, &n, &l->v[i]);
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].named && !l->v[i].in_tree)
			order[m++] = &l->v[i];
	qsort(order, m, sizeof(*order), by_key_latest);
	for (size_t i = 0; i < m; i++)
		if (!i || order[i]->key != order[i - 1]->key)
			take(taken, &n, order[i]);
	m = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct leaf *x = &l->v[i];
		if (!x->named && !x->stale && !x->in_tree &&
		    (rb->unsound || x->fresh || rb->never_unified))
			order[m++] = &l->v[i];
	}
	qsort(order, m, sizeof(*order), by_block_desc);
	for (size_t i = 0; i < m; i++)
		take(taken, &n, order[i]);
	return n;
}

/* One entry of a level being built: a child and the key it begins at. */
struct entry {
	uint64_t key, block;
};

/* A node whose block the new index may take: alive, or (moved) the
 * source of a redirect, allocated until the unify and so taken by
 * nothing else of this cycle (stage 2 then keeps it: salvage.kept). */
static bool node_usable(const struct rebuild *rb, const struct node *x,
			bool moved)
{
	if (x->block == rb->root || is_leaf(rb, x->block) ||
	    in_log(rb->vol, x->block))
		return false;
	return moved ? x->dead && x->moved : !x->dead;
}

/* The blocks the new index's nodes below the root go to: nodes of the
 * old index that no record freed and that hold no leaf taken, those of
 * the tree stage 1 left first; then, when a damaged node's lost records
 * leave too few (the cycle moved the old nodes away), the sources of its
 * redirects, from pool[*alive] on.  Returns how many, into pool. */
static size_t node_pool(struct rebuild *rb, uint64_t *pool, size_t need,
			size_t *alive)
{
	size_t m = 0;
	for (int walked = 1; walked >= 0; walked--)
		for (size_t i = 0; i < rb->n; i++) {
			const struct node *x = &rb->v[i];
			if (x->walked == (walked == 1) &&
			    node_usable(rb, x, false))
				pool[m++] = x->block;
		}
	*alive = m;
	for (size_t i = 0; i < rb->n && m < need; i++)
		if (node_usable(rb, &rb->v[i], true))
			pool[m++] = rb->v[i].block;
	return m;
}

/* Write one node of the new index over entries e[0..n). */
static int put_node(struct tux3_volume *vol, uint64_t block,
		    const struct entry *e, size_t n)
{
	uint8_t *d;
	int err = overlay_put(&vol->overlay, block, vol->blocksize, &d);
	if (err)
		return err;
	overlay_set_flags(&vol->overlay, block, OV_UNIFY_DIRTY);
	bnode_init(d, vol->blocksize);
	for (size_t i = 0; i < n && !err; i++)
		err = bnode_add(d, vol->blocksize, e[i].key, e[i].block);
	return err;
}

/*
 * Build the index over the leaves e[0..n) (their keys), level by level
 * up to the root, each level's entries spread evenly over as few nodes
 * as hold them.  Returns 1 when built, 0 when the leaves do not fit the
 * tree's depth or there are too few blocks for its nodes, <0.
 */
static int build_levels(struct rebuild *rb, struct entry *e, size_t n)
{
	struct tux3_volume *vol = rb->vol;
	size_t cap = bnode_capacity(vol->blocksize), need = 0;
	size_t m = n;
	for (unsigned level = rb->depth - 1; level-- > 1;) {
		m = (m + cap - 1) / cap;
		need += m;
	}
	if (m > cap)
		return 0;
	uint64_t *pool = malloc((rb->n + 1) * sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	size_t alive, have = node_pool(rb, pool, need, &alive), next = 0;
	int err = 0;
	if (have < need)
		goto out;
	for (unsigned level = rb->depth - 1; level-- > 0 && !err;) {
		size_t nodes = level ? (n + cap - 1) / cap : 1;
		/* node j takes entries [j*n/nodes, (j+1)*n/nodes): at least
		 * one each, at most cap; its own entry goes to slot j */
		for (size_t j = 0; j < nodes && !err; j++) {
			size_t from = j * n / nodes, to = (j + 1) * n / nodes;
			uint64_t block = level ? pool[next++] : rb->root;
			err = put_node(vol, block, e + from, to - from);
			e[j] = (struct entry){ .key = e[from].key,
					       .block = block };
		}
		n = nodes;
	}
	/* a redirect's source taken stays allocated past the unify */
	for (size_t i = alive; i < next && !err; i++)
		if (blockset_add(&vol->salvage.kept, pool[i]) < 0)
			err = -ENOMEM;
	/* the old nodes left out are gone: nothing may write them */
	for (size_t i = next; i < have && !err; i++)
		overlay_drop(&vol->overlay, pool[i]);
	err = err ? err : 1;
out:
	free(pool);
	return err;
}

/* Pick the leaves and build the index over them.  Returns the number of
 * leaves indexed, 0 when it cannot be built, <0. */
static int build_index(struct rebuild *rb)
{
	struct leaves *l = &rb->leaves;
	struct leaf **taken = calloc(l->n + 1, sizeof(*taken));
	struct leaf **order = calloc(l->n + 1, sizeof(*order));
	struct entry *e = calloc(l->n + 1, sizeof(*e));
	int ret = -ENOMEM;
	if (taken && order && e) {
		size_t n = pick_leaves(rb, taken, order);
		/* a sound index that has every leaf stays */
		if (!rb->unsound && n == rb->in_tree)
			n = 0;
		for (size_t i = 0; i < n; i++) {
			const struct leaf *x = taken[i];
			/* a record's key where it still separates the
			 * leaves */
			e[i].key = !i ? 0 : x->named &&
				   x->key > taken[i - 1]->last ? x->key :
				   x->ibase;
			e[i].block = x->block;
		}
		ret = n ? build_levels(rb, e, n) : 0;
		if (ret > 0)
			ret = n > INT32_MAX ? INT32_MAX : (int)n;
	}
	free(taken);
	free(order);
	free(e);
	return ret;
}

/* The inode table's index as stage 1 left it: its nodes, and whether
 * it serves (ret 1) or must be rebuilt (0). */
static int index_serves(struct rebuild *rb)
{
	return walk_index(rb, rb->root, 0, 0, TUX3_KEY_LIMIT);
}

/* Under a sound index, the leaves it reaches come first. */
static void mark_in_tree(struct rebuild *rb)
{
	if (rb->unsound)
		return;
	for (size_t i = 0; i < rb->leaves.n; i++)
		if (blockset_has(&rb->visited, rb->leaves.v[i].block) &&
		    !blockset_has(&rb->known, rb->leaves.v[i].block)) {
			rb->leaves.v[i].in_tree = true;
			rb->in_tree++;
		}
}

/* Was the volume never unified?  The log then reaches back to mkfs's
 * first block (intact, linking to none) and holds no unify mark. */
static bool never_unified(const struct tux3_volume *vol)
{
	return vol->logcount && vol->log[0].data && vol->unify_index < 0 &&
	       vol->log[0].head.magic == TUX3_MAGIC_LOG &&
	       !vol->log[0].head.logchain && !vol->salvage.lost;
}

/* The nodes the records tie to the index, until no more are found; then
 * which of them and of the leaves the records leave current. */
static int read_records(struct rebuild *rb)
{
	struct infer_ctx c = { .rb = rb };
	do {
		rb->grew = false;
		for_each_record(rb->vol, infer, &c);
	} while (rb->grew && !c.err);
	if (c.err)
		return c.err;
	if (rb->n)
		qsort(rb->v, rb->n, sizeof(*rb->v), by_node_block);
	for_each_record(rb->vol, apply_record, rb);
	return 0;
}

int replay_salvage_index(struct tux3_volume *vol)
{
	struct rebuild rb = { .vol = vol, .root = vol->iroot.block,
			      .depth = vol->iroot.depth };
	if (!vol->salvage.on || vol->iroot.direct || rb.depth < 2 ||
	    vol->volblocks > INDEX_SCAN_MAX_BLOCKS)
		return 0;
	rb.never_unified = never_unified(vol);
	int err = index_serves(&rb);
	if (!err && !(err = scan_leaves(vol, rb.root, &rb.leaves))) {
		mark_in_tree(&rb);
		if (!(err = read_records(&rb)) &&
		    (err = build_index(&rb)) > 0) {
			vol->salvage.index_leaves = (unsigned)err;
			err = 0;
		}
	}
	blockset_free(&rb.known);
	blockset_free(&rb.visited);
	free(rb.v);
	free(rb.leaves.v);
	return err;
}
