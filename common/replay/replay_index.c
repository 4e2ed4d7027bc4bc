/*
 * Salvage replay (replay.c): the inode table's index rebuilt from the
 * leaves found on the volume.
 *
 * Before the first unify the inode table's bnodes exist only as the log's
 * BNODE_* records: mkfs's first delta creates the root (BNODE_ROOT) and
 * adds a leaf per split (BNODE_ADD).  When a log block of that delta is
 * lost, the salvage replay has no root image to apply the later records
 * to, and every inode is out of reach although each leaf is on the
 * volume as it was written (nothing is overwritten before a unify).  So
 * when the root named by the superblock is still no bnode after stage 1,
 * and the tree has one bnode level (depth 2), a new root image is made in
 * the overlay from the ileaves a scan of the volume finds; the unify of
 * fsck's commit writes it.
 *
 * Choosing among stale copies: a leaf moved by a delta (LEAF_REDIRECT)
 * leaves its old copy behind, and a split leaves the old, longer copy of
 * the leaf it split.  The log's surviving records decide first: the
 * latest BNODE_ADD or BNODE_UPDATE for a key of the root names its leaf,
 * a LEAF_REDIRECT's old block and a freed block are stale, a block
 * allocated or redirected to later is not.  What they do not decide is
 * taken newest first by block number (the writer allocates upwards while
 * nothing was freed, as in mkfs's first delta), and a copy whose inodes
 * overlap a leaf already taken is left out.  Pass 3 and the later passes
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

/* The leaves are in block order (the scan's): the first at or after
 * block, or l->n. */
static size_t leaf_at(const struct leaves *l, uint64_t block)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->v[mid].block < block)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Mark the leaves in [block, block + count) stale or current. */
static void mark_range(struct leaves *l, uint64_t block, uint64_t count,
		       bool stale)
{
	for (size_t i = leaf_at(l, block);
	     i < l->n && l->v[i].block - block < count; i++)
		l->v[i].stale = stale;
}

/* Every ileaf of the volume that validates on its own, and holds an
 * inode, in block order. */
static int scan_leaves(struct tux3_volume *vol, uint64_t root,
		       struct leaves *l)
{
	uint8_t *buf = malloc(vol->blocksize);
	int err = 0;
	if (!buf)
		return -ENOMEM;
	for (uint64_t b = vol->reserved_blocks; b < vol->volblocks; b++) {
		if (b == root || dev_pread(&vol->dev, buf, 2, b << vol->blockbits) ||
		    be16(buf) != TUX3_MAGIC_ILEAF ||
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

/* What the log's records say of the leaves, in log order. */
static void apply_records(struct tux3_volume *vol, uint64_t root,
			  struct leaves *l)
{
	struct logrec r;
	uint64_t seq = 0;
	for (unsigned i = 0; i < vol->logcount; i++) {
		struct logblk *lb = &vol->log[i];
		if (!lb->data)
			continue;
		unsigned end = LOG_HEADER_SIZE + lb->head.bytes, size;
		for (unsigned off = LOG_HEADER_SIZE; off < end; off += size) {
			if (vol->salvage.ngaps) {
				for (unsigned g = 0; g < vol->salvage.ngaps; g++)
					if (vol->salvage.gaps[g].index == i &&
					    vol->salvage.gaps[g].from == off)
						off = vol->salvage.gaps[g].to;
				if (off >= end)
					break;
			}
			if (!(size = log_decode_record(lb->data, off, end, &r)))
				break;
			size_t k;
			switch (r.code) {
			case LOG_LEAF_REDIRECT:
				mark_range(l, r.oldb, 1, true);
				mark_range(l, r.newb, 1, false);
				break;
			case LOG_BFREE: case LOG_BFREE_RELOG:
			case LOG_LEAF_FREE: case LOG_BNODE_FREE:
				mark_range(l, r.block, r.code == LOG_BFREE ||
					   r.code == LOG_BFREE_RELOG ?
					   r.count : 1, true);
				break;
			case LOG_BALLOC:
				mark_range(l, r.block, r.count, false);
				break;
			case LOG_BNODE_ADD: case LOG_BNODE_UPDATE:
				if (r.parent != root)
					break;
				k = leaf_at(l, r.child);
				if (k < l->n && l->v[k].block == r.child &&
				    r.key <= l->v[k].ibase) {
					l->v[k].named = true;
					l->v[k].key = r.key;
					l->v[k].seq = ++seq;
				}
				break;
			}
		}
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

/* Pick the leaves (named ones first, then newest first) and write the
 * root image.  Returns the number of leaves indexed, 0 when they do not
 * fit one bnode, <0. */
static int build_root(struct tux3_volume *vol, uint64_t root,
		      struct leaves *l)
{
	struct leaf **taken = calloc(l->n + 1, sizeof(*taken));
	struct leaf **order = calloc(l->n + 1, sizeof(*order));
	size_t n = 0, m = 0;
	int ret = 0;
	if (!taken || !order) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].named)
			order[m++] = &l->v[i];
	/* the latest record for a key names its leaf */
	qsort(order, m, sizeof(*order), by_key_latest);
	for (size_t i = 0; i < m; i++)
		if (!i || order[i]->key != order[i - 1]->key)
			take(taken, &n, order[i]);
	m = 0;
	for (size_t i = 0; i < l->n; i++)
		if (!l->v[i].named && !l->v[i].stale)
			order[m++] = &l->v[i];
	qsort(order, m, sizeof(*order), by_block_desc);
	for (size_t i = 0; i < m; i++)
		take(taken, &n, order[i]);
	if (!n || n > bnode_capacity(vol->blocksize))
		goto out;
	uint8_t *d;
	if ((ret = overlay_put(&vol->overlay, root, vol->blocksize, &d)))
		goto out;
	overlay_set_flags(&vol->overlay, root, OV_UNIFY_DIRTY);
	bnode_init(d, vol->blocksize);
	for (size_t i = 0; i < n; i++) {
		const struct leaf *x = taken[i];
		/* a record's key where it still separates the leaves */
		uint64_t key = !i ? 0 : x->named && x->key > taken[i - 1]->last ?
			       x->key : x->ibase;
		if ((ret = bnode_add(d, vol->blocksize, key, x->block)))
			goto out;
	}
	ret = (int)n;
out:
	free(taken);
	free(order);
	return ret;
}

/* Is the root's image, in the overlay or else on disk, a bnode? */
static bool root_present(struct tux3_volume *vol, uint64_t root)
{
	bool dropped;
	uint8_t *d = overlay_find(&vol->overlay, root, &dropped);
	if (d)
		return be16(d) == TUX3_MAGIC_BNODE && bnode_count(d);
	if (dropped)
		return false;
	uint8_t head[8];
	return !dev_pread(&vol->dev, head, sizeof(head),
			  root << vol->blockbits) &&
	       be16(head) == TUX3_MAGIC_BNODE && bnode_count(head);
}

int replay_salvage_index(struct tux3_volume *vol)
{
	uint64_t root = vol->iroot.block;
	if (!vol->salvage.on || vol->iroot.direct || vol->iroot.depth != 2 ||
	    vol->volblocks > INDEX_SCAN_MAX_BLOCKS || root_present(vol, root))
		return 0;
	struct leaves l = { 0 };
	int err = scan_leaves(vol, root, &l);
	if (!err) {
		apply_records(vol, root, &l);
		err = build_root(vol, root, &l);
	}
	free(l.v);
	if (err > 0) {
		vol->salvage.index_leaves = (unsigned)err;
		err = 0;
	}
	return err;
}
