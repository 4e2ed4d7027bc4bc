/*
 * Pass 3: the inode table and orphan table as trees: every index node
 * and leaf (magic, counts within the block, key order, keys inside the
 * parent's separator range, uniform depth, no cycle, no block reached
 * twice), through the walker.  Inode contents and data trees are pass
 * 4's; directory entries pass 5's.
 *
 * Repairs change the tree in the open delta, the way the write path
 * does (btree_edit.c): the bnodes on the path are redirected once per
 * unify cycle, and every change is logged with the records replay knows
 * (BNODE_DEL, BNODE_UPDATE, BNODE_ROOT, BNODE_ADD, BFREE_ON_UNIFY), so
 * the delta replays like any other should it be committed before the
 * final unify.
 *  - a damaged node or leaf, one at the wrong depth, or a second
 *    reference to a block: the pointer to it is removed from its parent
 *    (and, when that leaves the parent empty, the parent's from its own,
 *    upwards).  The inodes under it are lost: pass 5 then removes the
 *    entries naming them, pass 8 frees the blocks nobody references.
 *  - an index node whose entries are out of order, outside its range or
 *    point outside the volume: it is rebuilt with the entries that are
 *    in order (the others and their subtrees are lost).
 * Not repaired, with the reason in the message: the root of the inode
 * table (the whole table would go), a cut that would empty it, and a
 * subtree holding inodes below 64 (bitmap, countmap, atom table, root
 * directory: the volume cannot do without them).  Damage on the way to
 * the bitmap inode, and any damage of the orphan table (read whole at
 * open), stop the open; pass 2 then offers to read past it
 * (PASS2_BITMAP_UNREADABLE, PASS2_ORPHANS_UNREADABLE), and the damage is
 * repaired here.
 * What a repair makes reachable again (the kept entries of a rebuilt
 * node) is walked once more, so its own damage is found in this run.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "check/fsck_internal.h"

static const char *tree_name(enum tux3_tree tree)
{
	switch (tree) {
	case TUX3_TREE_ITREE: return "inode";
	case TUX3_TREE_OTREE: return "orphan";
	default: return "data";
	}
}

/* The bnodes above a node, as the current (possibly repaired) tree has
 * them: path[l] for l < levels, the entry followed there and its range. */
struct tree_loc {
	int levels;
	uint64_t block[TUX3_MAX_DEPTH];
	unsigned index[TUX3_MAX_DEPTH], count[TUX3_MAX_DEPTH];
	uint64_t key[TUX3_MAX_DEPTH];	/* key of the entry followed */
	uint64_t lo[TUX3_MAX_DEPTH];	/* start of its range */
};

/* A repair decided during the walk, applied after it. */
struct tree_fix {
	enum { FIX_CUT, FIX_ENTRIES, FIX_TRIM } kind;
	enum tux3_tree tree;
	int level;
	uint64_t block, lo, hi;
};

struct pass3 {
	struct fsck *f;
	uint8_t *buf;			/* one block */
	struct tree_fix *fix;
	unsigned nfix, capfix;
	struct blockset reported;	/* reported in an earlier round */
	int round;
};

static const struct root *tree_root(const struct tux3_volume *vol,
				    enum tux3_tree tree)
{
	return tree == TUX3_TREE_ITREE ? &vol->iroot : &vol->oroot;
}

/* The root bnode moved (write/repair.c keeps the volume's roots). */
static void set_root_block(struct tux3_volume *vol, enum tux3_tree tree,
			   uint64_t block)
{
	repair_set_root_block(vol, tree != TUX3_TREE_ITREE, block);
}

bool fsck_bnode_sane(const struct tux3_volume *vol, const uint8_t *b)
{
	unsigned count = bnode_count(b);
	return be16(b) == TUX3_MAGIC_BNODE && count &&
	       count <= bnode_capacity(vol->blocksize);
}

/* Descend by lo from the root to the node at level; it must be block.
 * 0, or -ENOENT when the tree no longer has it there. */
static int locate(struct tux3_volume *vol, enum tux3_tree tree, int level,
		  uint64_t lo, uint64_t block, uint8_t *buf,
		  struct tree_loc *loc)
{
	const struct root *r = tree_root(vol, tree);
	uint64_t b = r->block, nlo = 0;

	if (!r->depth || level >= (int)r->depth)
		return -ENOENT;
	loc->levels = level;
	for (int l = 0; l < level; l++) {
		if (vol_read_block(vol, b, buf)) {
			tux3_clear_error(vol);
			return -ENOENT;
		}
		if (!fsck_bnode_sane(vol, buf))
			return -ENOENT;
		unsigned i = bnode_lookup(buf, lo);
		loc->block[l] = b;
		loc->index[l] = i;
		loc->count[l] = bnode_count(buf);
		loc->key[l] = bnode_key(buf, i);
		loc->lo[l] = i ? loc->key[l] : nlo;
		nlo = loc->lo[l];
		b = bnode_child(buf, i);
	}
	if (b != block || (level && loc->lo[level - 1] != lo))
		return -ENOENT;
	return 0;
}

/* The key range of the index node at level l of loc (0: the root),
 * from its ancestors' entries. */
static int node_range(struct tux3_volume *vol, const struct tree_loc *loc,
		      int l, uint8_t *buf, uint64_t *lo, uint64_t *hi)
{
	*lo = l ? loc->lo[l - 1] : 0;
	*hi = TUX3_KEY_LIMIT;
	for (int a = l - 1; a >= 0; a--) {
		if (loc->index[a] + 1 >= loc->count[a])
			continue;
		if (vol_read_block(vol, loc->block[a], buf)) {
			tux3_clear_error(vol);
			return -ENOENT;
		}
		if (!fsck_bnode_sane(vol, buf) ||
		    loc->index[a] + 1 >= bnode_count(buf))
			return -ENOENT;
		*hi = bnode_key(buf, loc->index[a] + 1);
		break;
	}
	return 0;
}

/*
 * Which level loses an entry when the node below loc is cut out: the
 * parent, or above it while a node would be left empty.  -1: the tree
 * itself goes.  Returns false with why set when the cut is not allowed.
 */
static bool plan_cut(const struct fsck *f, enum tux3_tree tree,
		     const struct tree_loc *loc, int *edit, char *why,
		     size_t len)
{
	int e = loc->levels - 1;
	while (e >= 0 && loc->count[e] == 1)
		e--;
	*edit = e;
	if (tree != TUX3_TREE_ITREE)
		return true;	/* an orphan table may go whole */
	if (!loc->levels) {
		snprintf(why, len, "; it is the tree's root: cutting it would "
			 "lose the whole inode table, so it is left as it is");
		return false;
	}
	if (e < 0) {
		snprintf(why, len, "; cutting it would leave the inode table "
			 "empty, so it is left as it is");
		return false;
	}
	/* PASS2_INTERNAL_LOST accepted: the leaf of the volume's own
	 * inodes goes, and they are made anew */
	if (loc->lo[e] < TUX3_NORMAL_INO &&
	    !(f->salvage & FSCK_SALVAGE_INTERNAL)) {
		snprintf(why, len, "; it holds inodes below %u (bitmap, atom "
			 "table, root directory), which the volume cannot lose, "
			 "so it is left as it is", TUX3_NORMAL_INO);
		return false;
	}
	return true;
}

/* The bnode redirect of the write path (btree_edit.c bnode_cow, which
 * is static there): once per unify cycle, the old block kept until the
 * unify that replaces it. */
static int bnode_redirect(struct tux3_volume *vol, uint64_t old,
			  uint64_t *newp, uint8_t *buf)
{
	uint8_t *dst;
	int err;

	if (overlay_flags(&vol->overlay, old) & OV_UNIFY_DIRTY) {
		*newp = old;
		return 0;
	}
	if ((err = vol_read_block(vol, old, buf)))
		return err;
	if ((err = meta_alloc(vol, old, OV_UNIFY_DIRTY, newp, &dst)))
		return err;
	memcpy(dst, buf, vol->blocksize);
	overlay_drop(&vol->overlay, old);
	if ((err = log_redirect(vol, LOG_BNODE_REDIRECT, old, *newp)))
		return err;
	return defer_unify_add(vol, old, 1);
}

/* The entry with this exact key is at index: what BNODE_DEL and
 * BNODE_UPDATE need to find it again (replay included). */
static bool key_finds(const uint8_t *img, unsigned index, uint64_t key)
{
	return bnode_lookup(img, key) == index && bnode_key(img, index) == key;
}

/* Point the entry of loc at level l (and the levels above, as far as
 * their blocks move) at child, redirecting them. */
static int repoint(struct tux3_volume *vol, enum tux3_tree tree,
		   const struct tree_loc *loc, int l, uint64_t child,
		   uint8_t *buf)
{
	for (; l >= 0; l--) {
		uint64_t nb;
		int err = bnode_redirect(vol, loc->block[l], &nb, buf);
		if (err)
			return err;
		uint8_t *img = overlay_edit(&vol->overlay, nb, NULL);
		if (!img || !key_finds(img, loc->index[l], loc->key[l]))
			return -EUCLEAN;
		if ((err = bnode_update(img, loc->key[l], child)) ||
		    (err = log_bnode_change(vol, LOG_BNODE_UPDATE, nb, child,
					    loc->key[l])))
			return err;
		if (nb == loc->block[l])
			return 0;	/* did not move: the parent is right */
		child = nb;
	}
	set_root_block(vol, tree, child);
	return 0;
}

/* Remove the entry of loc at level e (nothing above it changes but the
 * redirects); e < 0 drops the whole tree (orphan table only). */
static int apply_cut(struct tux3_volume *vol, enum tux3_tree tree,
		     const struct tree_loc *loc, int e, uint8_t *buf)
{
	uint64_t nb;
	int err;

	if (e < 0) {
		if (tree == TUX3_TREE_ITREE)
			return -EUCLEAN;
		repair_drop_otree(vol);
		return 0;
	}
	if ((err = bnode_redirect(vol, loc->block[e], &nb, buf)))
		return err;
	uint8_t *img = overlay_edit(&vol->overlay, nb, NULL);
	if (!img || !key_finds(img, loc->index[e], loc->key[e]))
		return -EUCLEAN;
	struct logrec r = { .code = LOG_BNODE_DEL, .block = nb,
			    .key = loc->key[e], .count = 1 };
	if ((err = bnode_del(img, loc->key[e], 1)) ||
	    (err = log_append(vol, &r)))
		return err;
	if (nb == loc->block[e])
		return 0;
	return e ? repoint(vol, tree, loc, e - 1, nb, buf) :
		   (set_root_block(vol, tree, nb), 0);
}

/* The lowest key the subtree at child holds, read from it: an inode
 * table leaf's ibase, or an index node's entry 0 key (a split leaves the
 * separator there).  For an entry whose own key is damaged. */
static bool child_low_key(struct tux3_volume *vol, uint64_t child,
			  uint8_t *buf, uint64_t *key)
{
	if (!buf || vol_read_block(vol, child, buf)) {
		tux3_clear_error(vol);
		return false;
	}
	if (be16(buf) == TUX3_MAGIC_ILEAF)
		*key = ileaf_ibase(buf);
	else if (fsck_bnode_sane(vol, buf) && bnode_count(buf))
		*key = bnode_key(buf, 0);
	else
		return false;
	return *key < TUX3_KEY_LIMIT;
}

/* The last inode an inode table leaf at child holds (its base plus its
 * dictionary's last slot that is not empty), for the check of the keys
 * around it. */
static bool child_last_inode(struct tux3_volume *vol, uint64_t child,
			     uint8_t *buf, uint64_t *last)
{
	if (!buf || vol_read_block(vol, child, buf)) {
		tux3_clear_error(vol);
		return false;
	}
	if (be16(buf) != TUX3_MAGIC_ILEAF || !ileaf_count(buf) ||
	    ileaf_ibase(buf) >= TUX3_KEY_LIMIT ||
	    ileaf_check_prefix(vol, buf, child, TUX3_KEY_LIMIT - 1)) {
		tux3_clear_error(vol);
		return false;
	}
	uint64_t base = ileaf_ibase(buf);
	for (unsigned k = ileaf_count(buf); k-- > 0;) {
		const uint8_t *blob;
		unsigned len;
		ileaf_blob(buf, vol->blocksize, base + k, &blob, &len);
		if (len) {
			*last = base + k;
			return true;
		}
	}
	*last = base;	/* nothing in it: its base bounds it */
	return true;
}

/*
 * The entries of an index node over [lo, hi) that can stay: child inside
 * the volume and not met before in the node, keys rising inside the
 * range (entry 0's key is not used).  An entry whose key is out of order
 * or range takes the lowest key its child holds, when that one fits
 * between its neighbours.  Returns how many, into keys and children,
 * and into from (when not NULL) the entry each came from.
 */
static unsigned kept_entries(struct tux3_volume *vol, const uint8_t *b,
			     uint64_t lo, uint64_t hi, uint64_t *keys,
			     uint64_t *children, unsigned *from)
{
	unsigned count = bnode_count(b), n = 0;
	uint64_t prev = lo;
	uint8_t *buf = NULL;
	for (unsigned i = 0; i < count; i++) {
		uint64_t key = bnode_key(b, i), child = bnode_child(b, i);
		bool dup = false;
		if (!vol_node_child_valid(vol, child))
			continue;
		uint64_t next = i + 1 < count ? bnode_key(b, i + 1) : hi;
		if (next <= prev || next > hi)
			next = hi;
		if (i && (key <= prev || key >= hi)) {
			if (!buf)
				buf = malloc(vol->blocksize);
			if (!child_low_key(vol, child, buf, &key) ||
			    key <= prev || key >= next)
				continue;
		} else if (n && key < next) {
			/* in order, but below what the leaf before it holds:
			 * the key is damaged if this child begins past that */
			uint64_t last, low;
			if (!buf)
				buf = malloc(vol->blocksize);
			if (child_last_inode(vol, children[n - 1], buf, &last) &&
			    last >= key &&
			    child_low_key(vol, child, buf, &low) &&
			    low > last && low < next)
				key = low;
		}
		if (n && key > prev && key < next) {
			/* in order, but above the leaf's own base: the
			 * inodes it holds below the key cannot be found, so
			 * the key is damaged when the base still lies past
			 * what the leaf before it holds */
			uint64_t last, low;
			if (!buf)
				buf = malloc(vol->blocksize);
			if (child_low_key(vol, child, buf, &low) &&
			    low < key && low > prev &&
			    be16(buf) == TUX3_MAGIC_ILEAF &&
			    child_last_inode(vol, children[n - 1], buf,
					     &last) && low > last)
				key = low;
		}
		for (unsigned k = 0; k < n && !dup; k++)
			dup = children[k] == child;
		if (dup)
			continue;
		if (from)
			from[n] = i;
		keys[n] = n ? key : 0;
		children[n++] = child;
		if (i)
			prev = key;
	}
	free(buf);
	return n;
}

/*
 * Can the index node in b (over [lo, hi)) be rebuilt from its good
 * entries?  Returns how many it keeps (0: none, cut it instead), or 0
 * with why set when the entries it would lose are not to be lost (inodes
 * below 64), or -ENOMEM.
 */
static int rebuild_plan(struct tux3_volume *vol, enum tux3_tree tree,
			const uint8_t *b, uint64_t lo, uint64_t hi, char *why,
			size_t len)
{
	unsigned cap = bnode_capacity(vol->blocksize);
	uint64_t *keys = malloc(cap * sizeof(*keys));
	uint64_t *children = malloc(cap * sizeof(*children));
	unsigned *from = malloc(cap * sizeof(*from));
	if (!keys || !children || !from) {
		free(keys);
		free(children);
		free(from);
		return -ENOMEM;
	}
	unsigned n = kept_entries(vol, b, lo, hi, keys, children, from);
	/* the itree's first inodes are the volume's own: entry 0 of a node
	 * starting below 64 must stay, and so must every entry that may
	 * hold inodes below 64: one dropped before the first kept entry
	 * whose key is 64 or more (after it, a key below 64 is the damage
	 * itself, out of order).  An entry whose child lies outside the
	 * volume holds nothing any more: keeping it saves no inode, and
	 * its (maybe damaged, small) key would keep hiding entry 0's; its
	 * key, when in order and 64 or more, still says that the entries
	 * after it hold none of the volume's own */
	bool lose_low = false;
	if (tree == TUX3_TREE_ITREE && lo < TUX3_NORMAL_INO && n) {
		unsigned count = bnode_count(b), k = 0;
		bool past_low = false;
		for (unsigned i = 0; i < count && !lose_low && !past_low; i++) {
			uint64_t child = bnode_child(b, i);
			bool kept = k < n && from[k] == i;
			uint64_t key = bnode_key(b, i);
			if (kept)
				past_low = k++ && keys[k - 1] >= TUX3_NORMAL_INO;
			else if (vol_node_child_valid(vol, child))
				lose_low = true;
			else	/* its key, in order, still bounds the rest */
				past_low = i && key >= TUX3_NORMAL_INO &&
					   key < hi &&
					   key > (k ? keys[k - 1] : lo);
		}
	}
	free(keys);
	free(children);
	free(from);
	if (lose_low) {
		snprintf(why, len, "; its entries that would go hold inodes "
			 "below %u (bitmap, atom table, root directory), which "
			 "the volume cannot lose, so it is left as it is",
			 TUX3_NORMAL_INO);
		return 0;
	}
	return (int)n;
}

/* Replace the index node of loc (at loc->levels) by a fresh one holding
 * its good entries; the old block goes at the next unify. */
static int apply_entries(struct tux3_volume *vol, enum tux3_tree tree,
			 const struct tree_loc *loc, uint64_t node,
			 uint64_t lo, uint64_t hi, uint8_t *buf)
{
	unsigned cap = bnode_capacity(vol->blocksize);
	uint64_t *keys = malloc(cap * sizeof(*keys));
	uint64_t *children = malloc(cap * sizeof(*children));
	uint64_t fresh;
	uint8_t *img;
	int err = keys && children ? 0 : -ENOMEM;

	if (!err)
		err = vol_read_block(vol, node, buf);
	if (err)
		goto out;
	unsigned n = fsck_bnode_sane(vol, buf) ?
		     kept_entries(vol, buf, lo, hi, keys, children, NULL) :
		     0;
	if (!n) {
		err = -EUCLEAN;
		goto out;
	}
	if ((err = meta_alloc(vol, node, OV_UNIFY_DIRTY, &fresh, &img)))
		goto out;
	if (fresh == node) {	/* its free below would take the rebuild */
		err = vol_error(vol, -EUCLEAN, node, TUX3_NONE, TUX3_NONE,
				"the allocator gave out block %" PRIu64
				", which the tree still uses", node);
		goto out;
	}
	/* a new node is made the way replay knows: a one-entry root image,
	 * then an ADD per entry */
	bnode_init_root(img, vol->blocksize, 1, children[0], 0, 0);
	struct logrec r = { .code = LOG_BNODE_ROOT, .count = 1, .root = fresh,
			    .left = children[0] };
	if ((err = log_append(vol, &r)))
		goto out;
	for (unsigned i = 1; i < n && !err; i++)
		if (!(err = bnode_add(img, vol->blocksize, keys[i],
				      children[i])))
			err = log_bnode_change(vol, LOG_BNODE_ADD, fresh,
					       children[i], keys[i]);
	if (err)
		goto out;
	/* the damaged image is neither written nor read again */
	overlay_drop(&vol->overlay, node);
	if ((err = log_bfree(vol, LOG_BFREE_ON_UNIFY, node, 1)) ||
	    (err = defer_unify_add(vol, node, 1)))
		goto out;
	if (loc->levels)
		err = repoint(vol, tree, loc, loc->levels - 1, fresh, buf);
	else
		set_root_block(vol, tree, fresh);
out:
	free(keys);
	free(children);
	return err;
}

/*
 * An inode table leaf whose dictionary is readable up to some entry:
 * how many of its inodes can be kept (0 when none, or when its header
 * cannot be trusted).
 */
static unsigned trim_plan(const struct tux3_volume *vol, const uint8_t *leaf)
{
	if (be16(leaf) != TUX3_MAGIC_ILEAF ||
	    be64(leaf + 8) >= TUX3_KEY_LIMIT)
		return 0;
	unsigned valid = ileaf_valid_prefix(leaf, vol->blocksize);
	return valid < ileaf_count(leaf) ? valid : 0;
}

/* Rewrite the leaf at loc with its first inodes, those its dictionary
 * reads up to (a leaf copy-on-write, as the write path makes: the old
 * block goes when the delta commits); the inodes after them go, their
 * orphan records with them. */
static int apply_trim(struct tux3_volume *vol, enum tux3_tree tree,
		      const struct tree_loc *loc, uint64_t node, uint8_t *buf)
{
	uint64_t fresh;
	uint8_t *img;
	int err = vol_read_block(vol, node, buf);
	if (err)
		return err;
	unsigned keep = trim_plan(vol, buf), count = ileaf_count(buf);
	uint64_t ibase = ileaf_ibase(buf);
	if (!keep)
		return -EUCLEAN;
	if ((err = meta_alloc(vol, node, OV_DELTA_DIRTY, &fresh, &img)))
		return err;
	if (fresh == node)
		return vol_error(vol, -EUCLEAN, node, TUX3_NONE, TUX3_NONE,
				 "the allocator gave out block %" PRIu64
				 ", which the tree still uses", node);
	memcpy(img, buf, vol->blocksize);
	put_be16(img + 2, keep);
	/* the dropped entries' slots become free space */
	for (unsigned k = keep + 1; k <= count; k++)
		put_be16(img + vol->blocksize - 2 * k, 0);
	overlay_drop(&vol->overlay, node);
	if ((err = log_redirect(vol, LOG_LEAF_REDIRECT, node, fresh)) ||
	    (err = bfree_deferred(vol, node, 1)))
		return err;
	if (loc->levels)
		err = repoint(vol, tree, loc, loc->levels - 1, fresh, buf);
	else
		set_root_block(vol, tree, fresh);
	return err ? err : fsck_inodes_gone(vol, ibase + keep, ibase + count);
}

/* A cut: the subtree goes, and with an inode table's subtree the
 * inodes of its key range go, their orphan records with them (the rule
 * of fsck_inodes_gone).  The range is the cut entry's, at edit. */
static int cut_out(struct tux3_volume *vol, const struct tree_fix *x,
		   const struct tree_loc *loc, int edit, uint8_t *buf)
{
	uint64_t lo = edit >= 0 ? loc->lo[edit] : 0, hi = x->hi;
	if (edit >= 0 && loc->index[edit] + 1 < loc->count[edit]) {
		/* up to the next entry's key at the level that loses one */
		if (!vol_read_block(vol, loc->block[edit], buf))
			hi = bnode_key(buf, loc->index[edit] + 1);
		else
			tux3_clear_error(vol);
	}
	int err = apply_cut(vol, x->tree, loc, edit, buf);
	if (err || x->tree != TUX3_TREE_ITREE)
		return err;
	return fsck_inodes_gone(vol, lo, hi);
}

static int add_fix(struct pass3 *p, const struct tree_fix *fix)
{
	if (p->nfix == p->capfix) {
		unsigned ncap = p->capfix ? p->capfix * 2 : 8;
		struct tree_fix *n = realloc(p->fix, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->fix = n;
		p->capfix = ncap;
	}
	p->fix[p->nfix++] = *fix;
	return 0;
}

/* A bad node or leaf: what it is, and whether (and how) it can go. */

/* node_error's answer for a block left to the next round, not reported
 * in this one (a repair decided already may change what it is) */
#define NODE_ERROR_LATER 2

/*
 * A leaf of the inode table that holds inodes at or past the end of the
 * range its parent gives it, where the parent's next entry's child
 * begins past them: the parent's key is the damage.  Its rebuild takes
 * the child's first key there (kept_entries).  Returns 1 when the
 * problem was reported so (yes or no), NODE_ERROR_LATER when the
 * node's rebuild is decided already, 0 when this is not the case,
 * or <0.
 */
static int parent_key_fix(struct pass3 *p, const struct tux3_walk_error *e,
			  const struct tree_loc *loc, const char *what)
{
	struct tux3_volume *vol = p->f->vol;
	int pl = e->level - 1;
	uint64_t last, lo, hi, node = loc->block[pl];
	/* a second leaf of a node whose rebuild is decided already: that
	 * rebuild mends every key of it, and what it does not mend (a leaf
	 * bad on its own, whose entry the rebuild keeps) the next round
	 * meets as new */
	for (unsigned i = 0; i < p->nfix; i++)
		if (p->fix[i].kind == FIX_ENTRIES && p->fix[i].block == node &&
		    p->fix[i].tree == e->tree)
			return NODE_ERROR_LATER;
	if (e->tree != TUX3_TREE_ITREE ||
	    !child_last_inode(vol, e->block, p->buf, &last) ||
	    last < e->hi || ileaf_ibase(p->buf) >= e->hi ||
	    node_range(vol, loc, pl, p->buf, &lo, &hi) ||
	    vol_read_block(vol, node, p->buf) ||
	    !fsck_bnode_sane(vol, p->buf)) {
		tux3_clear_error(vol);
		return 0;
	}
	unsigned cap = bnode_capacity(vol->blocksize), count =
		bnode_count(p->buf);
	uint64_t *keys = malloc(cap * sizeof(*keys));
	uint64_t *children = malloc(cap * sizeof(*children));
	unsigned *from = malloc(cap * sizeof(*from));
	int ret = -ENOMEM;
	if (keys && children && from) {
		/* p->buf is the node: kept_entries reads children into its
		 * own buffer */
		uint8_t *copy = malloc(vol->blocksize);
		ret = copy ? 0 : -ENOMEM;
		if (copy) {
			memcpy(copy, p->buf, vol->blocksize);
			unsigned n = kept_entries(vol, copy, lo, hi, keys,
						  children, from);
			/* every entry kept, the one after the leaf with a
			 * key past its last inode */
			for (unsigned k = 0; n == count && k + 1 < n; k++)
				if (children[k] == e->block &&
				    keys[k + 1] > last &&
				    keys[k + 1] != bnode_key(copy, k + 1))
					ret = 1;
			free(copy);
		}
	}
	free(keys);
	free(children);
	free(from);
	if (ret <= 0)
		return ret;
	struct tree_fix fix = { .kind = FIX_ENTRIES, .tree = e->tree,
				.level = pl, .block = node, .lo = lo,
				.hi = hi };
	char note[400];
	snprintf(note, sizeof(note), "; leaf %" PRIu64 " under it holds "
		 "inodes up to %" PRIu64 ": %.300s", e->block, last, what);
	int yes = fsck_problem(p->f, P3_NODE_ENTRIES, true,
			       FSCK_AT(.block = node, .count = 1),
			       tree_name(e->tree), node, (uint64_t)pl,
			       "the key after a leaf is below what the leaf "
			       "holds", note);
	if (yes && (ret = add_fix(p, &fix)) < 0)
		return ret;
	return 1;
}

static int node_error(struct pass3 *p, const struct tux3_walk_error *e,
		      const char *what)
{
	struct fsck *f = p->f;
	struct tux3_volume *vol = f->vol;
	const struct root *root = tree_root(vol, e->tree);
	const char *name = tree_name(e->tree);
	unsigned leaf_magic = e->tree == TUX3_TREE_ITREE ? TUX3_MAGIC_ILEAF :
			      TUX3_MAGIC_OLEAF;
	struct tree_fix fix = { .kind = FIX_CUT, .tree = e->tree,
				.level = e->level, .block = e->block,
				.lo = e->lo, .hi = e->hi };
	const struct fsck_at *at = FSCK_AT(.block = e->block, .count = 1);
	struct tree_loc loc;
	char note[200] = "";
	unsigned magic = 0;
	int edit, yes;
	bool ok;

	if (!e->twice) {
		if (vol_read_block(vol, e->block, p->buf))
			tux3_clear_error(vol);
		else
			magic = be16(p->buf);
	}
	ok = !locate(vol, e->tree, e->level, e->lo, e->block, p->buf, &loc);
	if (!ok)
		snprintf(note, sizeof(note), "; it cannot be found again from "
			 "the root, so it is left as it is");
	/* a sound leaf holding inodes at or past its range's end: the key
	 * after it in its parent may be what is wrong */
	if (ok && !e->twice && e->site == TUX3_SITE_LEAF && e->level > 0) {
		int r = parent_key_fix(p, e, &loc, what);
		if (r)
			return r < 0 || r == NODE_ERROR_LATER ? r : 0;
	}
	/* the node's own entries may be what is wrong: rebuild it */
	if (ok && !e->twice && e->site == TUX3_SITE_NODE &&
	    !vol_read_block(vol, e->block, p->buf) && fsck_bnode_sane(vol, p->buf)) {
		int n = rebuild_plan(vol, e->tree, p->buf, e->lo, e->hi, note,
				     sizeof(note));
		if (n < 0)
			return n;
		if (n || note[0]) {
			fix.kind = FIX_ENTRIES;
			yes = fsck_problem(f, P3_NODE_ENTRIES, n > 0, at, name,
					   e->block, (uint64_t)e->level, what,
					   note);
			return yes ? add_fix(p, &fix) : 0;
		}
	}
	bool found = ok;
	if (ok)
		ok = plan_cut(f, e->tree, &loc, &edit, note, sizeof(note));
	/* a leaf that cannot be cut keeps what its dictionary still reads */
	unsigned keep = 0;
	if (found && !ok && !e->twice && e->site == TUX3_SITE_LEAF &&
	    e->tree == TUX3_TREE_ITREE &&
	    !vol_read_block(vol, e->block, p->buf) &&
	    (keep = trim_plan(vol, p->buf))) {
		fix.kind = FIX_TRIM;
		yes = fsck_problem(f, P3_LEAF_TRIM, true, at, name, e->block,
				   what, (uint64_t)keep);
		return yes ? add_fix(p, &fix) : 0;
	}
	if (e->twice) {
		yes = fsck_problem(f, P3_TWICE, ok, at, name, e->block,
				   e->parent == TUX3_NONE ? 0 : e->parent,
				   (uint64_t)e->index, note);
	} else if (e->site == TUX3_SITE_NODE && magic == leaf_magic) {
		yes = fsck_problem(f, P3_DEPTH, ok, at, name, e->block,
				   (uint64_t)e->level, "a leaf",
				   (uint64_t)root->depth, "an index node",
				   note);
	} else if (e->site == TUX3_SITE_LEAF && magic == TUX3_MAGIC_BNODE) {
		yes = fsck_problem(f, P3_DEPTH, ok, at, name, e->block,
				   (uint64_t)e->level, "an index node",
				   (uint64_t)root->depth, "a leaf", note);
	} else if (e->site == TUX3_SITE_NODE) {
		yes = fsck_problem(f, P3_NODE_BAD, ok, at, name, e->block,
				   (uint64_t)e->level, what, note);
	} else {
		yes = fsck_problem(f, P3_LEAF_BAD, ok, at, name, e->block,
				   what, note);
	}
	return yes ? add_fix(p, &fix) : 0;
}

static int tree_error(void *ctx, const struct tux3_walk_error *e)
{
	struct pass3 *p = ctx;
	struct fsck *f = p->f;
	const char *what = e->err->what[0] ? e->err->what :
			   strerror(-e->err->err);
	int err = 0;

	if (e->tree == TUX3_TREE_DTREE || e->site == TUX3_SITE_INODE ||
	    e->site == TUX3_SITE_DIRENT)
		return 0;	/* pass 4 and 5 */
	if (e->site == TUX3_SITE_ROOT) {
		if (!p->round)
			fsck_problem(f, P3_STRUCT_BAD, false, NULL,
				     tree_name(e->tree), what);
		return f->stop ? -ECANCELED : 0;
	}
	/* a later round walks again what the repairs left: report only
	 * what is new */
	if (p->round && blockset_has(&p->reported, e->block))
		return 0;
	/* the walker's error text is kept aside: classifying reads blocks
	 * and may set the volume's error */
	char text[sizeof(e->err->what)];
	snprintf(text, sizeof(text), "%s", what);
	err = node_error(p, e, text);
	if (err < 0)
		return err;
	if (err != NODE_ERROR_LATER &&
	    (err = blockset_add(&p->reported, e->block)) < 0)
		return err;
	return f->stop ? -ECANCELED : 0;
}

static int tree_inode(void *ctx, const struct tux3_stat *st,
		      tux3_block_t leaf, unsigned len)
{
	struct pass3 *p = ctx;
	struct fsck *f = p->f;
	(void)st; (void)leaf; (void)len;
	if (!p->round && (++f->progress & 1023) == 0) {
		fsck_progress(f, f->progress, f->progress_max);
		if (fsck_cancelled(f))
			return -ECANCELED;
	}
	return 1;	/* the inode's own structures are pass 4's */
}

/*
 * Entry 0's key is not used by lookups, but the write path and replay
 * find an entry by its key (BNODE_UPDATE, BNODE_DEL, BNODE_ADJUST name
 * it so): one not below entry 1's leads them to entry 1, and the first
 * change of the node's first child fails (the commit of a repair
 * included).  The rebuild gives entry 0 the key 0.
 */
static int tree_bnode(void *ctx, const struct tux3_node_info *n)
{
	struct pass3 *p = ctx;
	struct fsck *f = p->f;
	if (n->tree == TUX3_TREE_DTREE || n->count < 2 ||
	    n->keys[0] < n->keys[1] ||
	    (p->round && blockset_has(&p->reported, n->block)))
		return 0;
	int err = blockset_add(&p->reported, n->block);
	if (err < 0)
		return err;
	char what[160];
	snprintf(what, sizeof(what), "entry 0's key %" PRIu64 " is not below "
		 "entry 1's key %" PRIu64 ", so a change of its first child "
		 "cannot find it", n->keys[0], n->keys[1]);
	struct tree_fix fix = { .kind = FIX_ENTRIES, .tree = n->tree,
				.level = n->level, .block = n->block,
				.lo = n->lo, .hi = n->hi };
	if (fsck_problem(f, P3_NODE_ENTRIES, true,
			 FSCK_AT(.block = n->block, .count = 1),
			 tree_name(n->tree), n->block, (uint64_t)n->level,
			 what, "") && (err = add_fix(p, &fix)) < 0)
		return err;
	return f->stop ? -ECANCELED : 0;
}

/* Apply the repairs the walk decided.  Returns how many were made, or
 * <0 for an operational error. */
static int apply_fixes(struct pass3 *p)
{
	struct fsck *f = p->f;
	struct tux3_volume *vol = f->vol;
	int made = 0;

	for (unsigned i = 0; i < p->nfix && !f->stop; i++) {
		const struct tree_fix *x = &p->fix[i];
		struct tree_loc loc;
		char why[200];
		int edit, err = locate(vol, x->tree, x->level, x->lo, x->block,
				       p->buf, &loc);
		if (!err && x->kind == FIX_ENTRIES)
			err = apply_entries(vol, x->tree, &loc, x->block,
					    x->lo, x->hi, p->buf);
		else if (!err && x->kind == FIX_TRIM)
			err = apply_trim(vol, x->tree, &loc, x->block, p->buf);
		else if (!err && plan_cut(f, x->tree, &loc, &edit, why,
					  sizeof(why)))
			err = cut_out(vol, x, &loc, edit, p->buf);
		else if (!err)
			err = -EUCLEAN;	/* earlier cuts left it alone */
		if (err == -ENOENT || err == -EUCLEAN) {
			/* the tree changed under it (an earlier repair of
			 * this run): nothing was written, leave it */
			tux3_clear_error(vol);
			f->res->unfixed++;
			fsck_info(f, "%s tree block %" PRIu64 " could not be "
				  "cut out after the earlier repairs",
				  tree_name(x->tree), x->block);
			continue;
		}
		fsck_fixed(f, err);
		if (err)
			return err;
		made++;
	}
	p->nfix = 0;
	return made;
}

int fsck_pass3(struct fsck *f)
{
	struct tux3_walk_ops wops = { .site_error = tree_error,
				      .bnode = tree_bnode,
				      .inode = tree_inode };
	struct pass3 p = { .f = f };
	struct tux3_super_info si;
	int err = 0;

	tux3_super_info(f->vol, &si);
	f->progress_max = si.usedinodes;
	if (!(p.buf = malloc(f->vol->blocksize)))
		return -ENOMEM;
	/* a repair can make subtrees reachable that were not walked (the
	 * kept entries of a rebuilt node): walk again until nothing new */
	for (p.round = 0; p.round < 4 && !f->stop; p.round++) {
		err = walk_uncounted(f->vol, &wops, &p);
		if (err < 0 && err != -EUCLEAN && err != -ECANCELED)
			break;
		err = 0;
		if (!p.round)
			fsck_progress(f, f->progress, f->progress_max);
		if (f->stop || !p.nfix)
			break;
		if (!p.round && fsck_repairing(f) &&
		    (err = fsck_shield_refs(f)) < 0)
			break;
		int made = apply_fixes(&p);
		if (made < 0) {
			err = made;
			break;
		}
		if (!made)
			break;
	}
	blockset_free(&p.reported);
	free(p.fix);
	free(p.buf);
	return err;
}
