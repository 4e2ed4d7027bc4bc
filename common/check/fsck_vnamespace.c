/*
 * Pass 9's snapshot namespaces, checked by what differs (issue 26).
 *
 * A version reads, at every key (an inode's attribute kind or xattr
 * atom, a block of a file's data), the element of its nearest ancestor.
 * So a tagged version V reads what its nearest tagged ancestor A (or the
 * origin) reads, except at the keys where V or a ghost between A and V
 * has an element of its own.  The element lists say where those are: the
 * index (vns_note_*, filled while pass 9 checks every inode's lists)
 * holds, per label, the inodes with an element of that label.
 *
 * The namespace is then checked once in full, for the live version, as
 * aggregates: per inode whether it exists, its type and link count, how
 * many entries name it and, for a directory, how many of its entries are
 * directories and which directory names it.  A depth-first walk of the
 * version tree moves the aggregates from A to V through the inodes V's
 * labels touch (their views loaded in V, a directory's entries read again
 * and its old ones taken back), judges only the inodes whose aggregates
 * changed, and undoes the step on the way back.  The work grows with the
 * files plus the changed elements, not with files x snapshots.
 *
 * What this proves is "no problem": a version whose aggregates show one
 * (or that this model cannot follow: an inode whose type differs between
 * versions, a directory that cannot be read, a possible cycle) is handed
 * back as suspect, and pass 9 checks and repairs it as before, in full,
 * with the same reports.  The model says "fine" only when the full check
 * would report nothing:
 *   - every inode that does not exist has no entry naming it;
 *   - every entry's type is its inode's type;
 *   - a non-directory has as many names as links (or none, as an orphan);
 *   - a directory other than the root has one name (none as an empty
 *     orphan), the root none, and each has 2 + subdirectories links;
 *   - following each directory's one parent leads to the root (checked
 *     for every directory whose parent changed: a new cycle must go
 *     through one of them).
 * Counted over every existing directory, these make every directory
 * reachable, so the counts equal those of a walk from the root.
 */
#include <stdlib.h>
#include <string.h>
#include "check/fsck_internal.h"
#include "version/version.h"
#include "version/vfilemap.h"

#define VNS_NONE	UINT32_MAX
#define VNS_VARIES	0xff		/* the type differs between versions */

/* ---- the index: which inodes have elements of which label ---- */

struct vns_pair {
	uint32_t label;
	uint64_t inum;
};

struct vns_type {
	uint64_t inum;
	uint8_t dtype;		/* of every version that has the inode */
};

struct vns_index {
	struct vns_pair *p;
	size_t n, cap;
	struct vns_type *t;
	size_t nt, capt;
	size_t first[VERSION_LABELS + 1];	/* after vns_index_finish */
	bool nomem;
	uint64_t inum;		/* the inode being noted ... */
	uint8_t seen[VERSION_LABELS / 8];	/* ... and its labels so far */
	uint16_t seenlist[VERSION_LABELS];
	unsigned nseen;
};

struct vns_index *vns_index_new(void)
{
	return calloc(1, sizeof(struct vns_index));
}

void vns_index_free(struct vns_index *ix)
{
	if (!ix)
		return;
	free(ix->p);
	free(ix->t);
	free(ix);
}

static void note_label(struct vns_index *ix, uint64_t inum, unsigned label)
{
	if (!label || label >= VERSION_LABELS)
		return;
	if (inum != ix->inum) {
		for (unsigned i = 0; i < ix->nseen; i++)
			ix->seen[ix->seenlist[i] / 8] = 0;
		ix->nseen = 0;
		ix->inum = inum;
	}
	uint8_t bit = (uint8_t)(1u << (label & 7));
	if (ix->seen[label / 8] & bit)
		return;
	ix->seen[label / 8] |= bit;
	ix->seenlist[ix->nseen++] = (uint16_t)label;
	if (array_grow((void **)&ix->p, &ix->cap, ix->n, sizeof(*ix->p))) {
		ix->nomem = true;
		return;
	}
	ix->p[ix->n++] = (struct vns_pair){ label, inum };
}

/* The type an inode has in every version that has it, when its mode is
 * versioned (several MODE_OWNER elements). */
static void note_type(struct vns_index *ix, uint64_t inum,
		      const struct vattrs *x)
{
	uint32_t key = VATTR_KEY(ATTR_MODE_OWNER, 0);
	unsigned dtype = 0, versioned = 0;
	for (unsigned i = 0; i < x->n; i++) {
		const struct vattr *a = &x->a[i];
		if (a->key != key)
			continue;
		versioned |= a->label;
		if (a->absent || a->len < 4)
			continue;
		unsigned t = inode_dtype(be32(a->data)) & 15;
		dtype = !dtype || dtype == t ? t : VNS_VARIES;
	}
	if (!versioned)
		return;
	if (array_grow((void **)&ix->t, &ix->capt, ix->nt, sizeof(*ix->t))) {
		ix->nomem = true;
		return;
	}
	ix->t[ix->nt++] = (struct vns_type){ inum, (uint8_t)dtype };
}

void vns_note_attrs(struct vns_index *ix, uint64_t inum,
		    const struct vattrs *x)
{
	for (unsigned i = 0; i < x->n; i++)
		note_label(ix, inum, x->a[i].label);
	note_type(ix, inum, x);
}

struct data_note {
	struct vns_index *ix;
	uint64_t inum;
};

static void data_label(void *ctx, unsigned label)
{
	struct data_note *d = ctx;
	note_label(d->ix, d->inum, label);
}

int vns_note_data(struct vns_index *ix, struct tux3_volume *vol,
		  const struct inode *inode)
{
	struct data_note d = { ix, inode->inum };
	return vfilemap_labels(vol, inode, data_label, &d);
}

static int pair_cmp(const void *a, const void *b)
{
	const struct vns_pair *x = a, *y = b;
	if (x->label != y->label)
		return x->label < y->label ? -1 : 1;
	return x->inum < y->inum ? -1 : x->inum > y->inum;
}

static int type_cmp(const void *a, const void *b)
{
	const struct vns_type *x = a, *y = b;
	return x->inum < y->inum ? -1 : x->inum > y->inum;
}

/* Sorted by label: the inodes of label l are p[first[l] .. first[l+1]). */
static void index_finish(struct vns_index *ix)
{
	size_t n = 0;
	if (ix->n)
		qsort(ix->p, ix->n, sizeof(*ix->p), pair_cmp);
	for (size_t i = 0; i < ix->n; i++)
		if (!n || pair_cmp(&ix->p[n - 1], &ix->p[i]))
			ix->p[n++] = ix->p[i];
	ix->n = n;
	if (ix->nt)
		qsort(ix->t, ix->nt, sizeof(*ix->t), type_cmp);
	size_t at = 0;
	for (unsigned l = 0; l <= VERSION_LABELS; l++) {
		while (at < n && ix->p[at].label < l)
			at++;
		ix->first[l] = at;
	}
}

/* ---- the aggregates of one version's namespace ---- */

struct vns_node {
	uint64_t inum;
	uint32_t nlink, names, subdirs, nentries;
	uint32_t parent;	/* a directory's: the directory naming it */
	uint32_t list;		/* its entries' slot (an inode of the index) */
	uint8_t dtype, exists, orphan, bad;
	uint8_t varies;		/* its type differs between versions */
};

struct vns_entry {
	uint32_t node;		/* VNS_NONE: no such inode */
	uint8_t type;
};

struct vns_list {
	struct vns_entry *e;
	uint32_t n, cap;
};

struct vns_saved {
	uint32_t idx;
	struct vns_node node;
};

struct vns_lsaved {
	uint32_t slot;
	struct vns_list list;
};

struct vns {
	struct tux3_volume *vol;
	struct vtree *vt;
	struct vns_index *ix;
	struct vns_node *node;
	uint32_t n, cap, root;
	struct vns_list *lists;	/* the entries each slot's directory
				 * contributes now */
	uint32_t nlists;
	uint32_t *stamp, step;	/* a node saved in this step */
	struct vns_saved *undo;
	size_t nundo, capundo;
	struct vns_lsaved *lundo;
	size_t nlundo, caplundo;
	int64_t bad, mismatch;	/* nodes judged bad; entries naming no
				 * inode or of the wrong type */
	uint16_t path[VERSION_LABELS];	/* ghosts above the version */
	uint8_t *suspect;
	unsigned by_delta;
};

enum { STEP_FINE, STEP_PROBLEM, STEP_UNSURE };

static uint32_t find(const struct vns *s, uint64_t inum)
{
	uint32_t lo = 0, hi = s->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s->node[mid].inum == inum)
			return mid;
		if (s->node[mid].inum < inum)
			lo = mid + 1;
		else
			hi = mid;
	}
	return VNS_NONE;
}

static int save(struct vns *s, uint32_t i)
{
	if (s->stamp[i] == s->step)
		return 0;
	if (array_grow((void **)&s->undo, &s->capundo, s->nundo,
		       sizeof(*s->undo)))
		return -ENOMEM;
	s->undo[s->nundo++] = (struct vns_saved){ i, s->node[i] };
	s->stamp[i] = s->step;
	return 0;
}

/* The entries a directory contributes, added (+1) or taken back (-1). */
static int contribute(struct vns *s, uint32_t dir, const struct vns_list *l,
		      int sign)
{
	uint32_t d = (uint32_t)sign;
	int err = save(s, dir);
	for (uint32_t k = 0; k < l->n && !err; k++) {
		const struct vns_entry *e = &l->e[k];
		s->node[dir].nentries += d;
		if (e->node == VNS_NONE) {
			s->mismatch += sign;
			continue;
		}
		if ((err = save(s, e->node)))
			break;
		struct vns_node *t = &s->node[e->node];
		t->names += d;
		if (e->type != t->dtype)
			s->mismatch += sign;
		if (t->dtype != TUX3_DT_DIR)
			continue;
		s->node[dir].subdirs += d;
		if (sign > 0)
			t->parent = dir;
		else if (t->parent == dir)
			t->parent = VNS_NONE;
	}
	return err;
}

/* Would the full check report anything about this inode? */
static bool node_bad(const struct vns *s, uint32_t i)
{
	const struct vns_node *n = &s->node[i];
	if (!n->exists)
		return n->names || i == s->root;
	if (n->dtype != TUX3_DT_DIR) {
		if (i == s->root)
			return true;
		return n->names ? n->names != n->nlink : !n->orphan;
	}
	if (n->nlink != 2 + n->subdirs)
		return true;
	if (i == s->root)
		return n->names != 0;
	if (!n->names)		/* an orphan directory must be empty */
		return !n->orphan || n->nentries;
	return n->names != 1 || n->parent == VNS_NONE;
}

static void judge(struct vns *s, uint32_t i)
{
	bool b = node_bad(s, i);
	if (b != s->node[i].bad) {
		s->bad += b ? 1 : -1;
		s->node[i].bad = b;
	}
}

/* Does following parents from directory i reach the root? */
static bool rooted(const struct vns *s, uint32_t i)
{
	uint32_t cur = i;
	for (uint32_t k = 0; k <= s->n; k++) {
		if (cur == s->root)
			return true;
		cur = s->node[cur].parent;
		if (cur == VNS_NONE || cur == i)
			return false;
	}
	return false;
}

/* ---- reading in the selected version ---- */

struct collect {
	struct vns *s;
	struct vns_list *l;
	bool bad;
};

static int collect_entry(void *ctx, const struct dirent_info *d)
{
	struct collect *c = ctx;
	struct vns_list *l = c->l;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 8;
		void *p = realloc(l->e, cap * sizeof(*l->e));
		if (!p)
			return -ENOMEM;
		l->e = p;
		l->cap = cap;
	}
	uint32_t t = d->inum >= TUX3_ROOT_INO ? find(c->s, d->inum) : VNS_NONE;
	l->e[l->n++] = (struct vns_entry){ t, (uint8_t)d->type };
	return 0;
}

static int collect_bad(void *ctx, const struct tux3_error *e,
		       uint64_t logical, uint64_t blocknr)
{
	(void)e; (void)logical; (void)blocknr;
	((struct collect *)ctx)->bad = true;
	return 1;
}

/* Node i as the selected version has it (exists, type, links); its
 * entries in *l when it is a directory and l is given.  0, STEP_UNSURE
 * (cannot be read, or of another type), -ENOMEM. */
static int load(struct vns *s, uint32_t i, struct vns_list *l)
{
	struct vns_node *n = &s->node[i];
	struct inode inode;
	int err = inode_load(s->vol, n->inum, &inode);
	if (err == -ENOENT) {
		tux3_clear_error(s->vol);
		n->exists = 0;
		return 0;
	}
	if (err) {
		tux3_clear_error(s->vol);
		return err == -ENOMEM ? err : STEP_UNSURE;
	}
	unsigned dtype = inode_dtype(inode.mode) & 15;
	if (n->dtype && n->dtype != dtype)
		err = STEP_UNSURE;
	n->dtype = (uint8_t)dtype;
	n->exists = 1;
	n->nlink = inode.nlink;
	if (!err && l && dtype == TUX3_DT_DIR) {
		struct collect c = { s, l, false };
		err = dir_iterate_salvage(s->vol, &inode, collect_entry,
					  collect_bad, &c);
		if (err == -ENOMEM)
			;
		else if (err || c.bad)
			err = STEP_UNSURE;
		tux3_clear_error(s->vol);
	}
	inode_free(&inode);
	return err;
}

static void select_label(struct vns *s, unsigned label)
{
	s->vol->vtag = label ? s->vt->v[label].tag : 0;
}

/* ---- the live version, in full ---- */

static int base_inode(void *ctx, const struct tux3_stat *st,
		      tux3_block_t leafblock, unsigned bloblen)
{
	struct vns *s = ctx;
	(void)leafblock; (void)bloblen;
	if (st->ino < TUX3_ROOT_INO)
		return 1;
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 1024;
		void *p = realloc(s->node, (size_t)cap * sizeof(*s->node));
		if (!p)
			return -ENOMEM;
		s->node = p;
		s->cap = cap;
	}
	s->node[s->n++] = (struct vns_node){ .inum = st->ino,
		.orphan = st->orphan, .parent = VNS_NONE, .list = VNS_NONE };
	return 1;
}

static int base_error(void *ctx, const struct tux3_error *err)
{
	(void)ctx; (void)err;
	return 0;
}

/* Types from the index; a slot for every inode of the index. */
static int base_index(struct vns *s)
{
	struct vns_index *ix = s->ix;
	for (size_t k = 0; k < ix->nt; k++) {
		uint32_t i = find(s, ix->t[k].inum);
		if (i == VNS_NONE)
			continue;
		if (ix->t[k].dtype == VNS_VARIES)
			s->node[i].varies = 1;
		else
			s->node[i].dtype = ix->t[k].dtype;
	}
	for (size_t k = 0; k < ix->n; k++) {
		uint32_t i = find(s, ix->p[k].inum);
		if (i != VNS_NONE && s->node[i].list == VNS_NONE)
			s->node[i].list = s->nlists++;
	}
	s->lists = calloc(s->nlists ? s->nlists : 1, sizeof(*s->lists));
	return s->lists ? 0 : -ENOMEM;
}

/* Every directory reaches the root (memo: 1 yes, 2 being followed). */
static bool base_rooted(struct vns *s)
{
	uint8_t *memo = calloc(s->n ? s->n : 1, 1);
	bool ok = memo != NULL;
	for (uint32_t i = 0; ok && i < s->n; i++) {
		uint32_t cur = i;
		if (!s->node[i].exists || s->node[i].dtype != TUX3_DT_DIR)
			continue;
		while (ok && cur != s->root && !memo[cur]) {
			memo[cur] = 2;
			cur = s->node[cur].parent;
			ok = cur != VNS_NONE;
		}
		ok = ok && (cur == s->root || memo[cur] == 1);
		for (cur = i; ok && cur != s->root && memo[cur] == 2;
		     cur = s->node[cur].parent)
			memo[cur] = 1;
	}
	free(memo);
	return ok;
}

/* 0: the aggregates of the live version; STEP_UNSURE: none that the
 * model can follow; -ENOMEM. */
static int base_build(struct vns *s)
{
	struct tux3_walk_ops ops = { .inode = base_inode,
				     .error = base_error };
	int err = walk_uncounted(s->vol, &ops, s);
	tux3_clear_error(s->vol);
	if (err == -ENOMEM)
		return err;
	s->root = find(s, TUX3_ROOT_INO);
	if (s->root == VNS_NONE)
		return STEP_UNSURE;
	s->stamp = calloc(s->n, sizeof(*s->stamp));
	if (!s->stamp || base_index(s))
		return -ENOMEM;
	select_label(s, VERSION_ORIGIN);
	for (uint32_t i = 0; i < s->n; i++)
		if ((err = load(s, i, NULL)))
			return err;
	for (uint32_t i = 0; i < s->n; i++) {
		struct vns_node *n = &s->node[i];
		if (!n->exists || n->dtype != TUX3_DT_DIR)
			continue;
		struct vns_list l = { 0 };
		if (!(err = load(s, i, &l)))
			err = contribute(s, i, &l, 1);
		if (!err && n->list != VNS_NONE)
			s->lists[n->list] = l;
		else
			free(l.e);
		if (err)
			return err;
	}
	s->nundo = 0;		/* nothing to undo below the origin */
	for (uint32_t i = 0; i < s->n; i++)
		judge(s, i);
	return base_rooted(s) ? 0 : STEP_UNSURE;
}

/* ---- one step down the version tree ---- */

static int push_list(struct vns *s, uint32_t slot)
{
	if (array_grow((void **)&s->lundo, &s->caplundo, s->nlundo,
		       sizeof(*s->lundo)))
		return -ENOMEM;
	s->lundo[s->nlundo++] = (struct vns_lsaved){ slot, s->lists[slot] };
	s->lists[slot] = (struct vns_list){ 0 };
	return 0;
}

/* The inodes with elements on label, saved (first in this step). */
static int save_label(struct vns *s, unsigned label)
{
	const struct vns_index *ix = s->ix;
	for (size_t k = ix->first[label]; k < ix->first[label + 1]; k++) {
		uint32_t i = find(s, ix->p[k].inum);
		int err = i == VNS_NONE ? 0 : save(s, i);
		if (err)
			return err;
	}
	return 0;
}

/* The changed inodes (undo[from .. to)) loaded in the selected version;
 * a directory's old entries taken back, its new ones kept in its slot. */
static int reload(struct vns *s, size_t from, size_t to)
{
	int err = 0;
	for (size_t k = from; k < to && !err; k++) {
		uint32_t i = s->undo[k].idx;
		struct vns_node *n = &s->node[i];
		if (n->varies)
			return STEP_UNSURE;
		uint32_t slot = n->list;
		struct vns_list old = s->lists[slot];
		if ((err = contribute(s, i, &old, -1)) ||
		    (err = push_list(s, slot)))
			break;
		err = load(s, i, &s->lists[slot]);
	}
	return err;
}

/* Version label's aggregates from its tagged ancestor's, through the
 * ghosts in path[base .. base + npath): STEP_FINE, STEP_PROBLEM,
 * STEP_UNSURE or -ENOMEM.  The undo logs hold what to restore. */
static int step(struct vns *s, unsigned label, unsigned base, unsigned npath)
{
	int err = 0;
	s->step++;
	size_t from = s->nundo;
	for (unsigned k = base; k < base + npath && !err; k++)
		err = save_label(s, s->path[k]);
	if (!err)
		err = save_label(s, label);
	size_t to = s->nundo;
	select_label(s, label);
	if (!err)
		err = reload(s, from, to);
	for (size_t k = from; k < to && !err; k++) {
		uint32_t i = s->undo[k].idx;
		err = contribute(s, i, &s->lists[s->node[i].list], 1);
	}
	if (err)
		return err;
	bool cycle = false;
	for (size_t k = from; k < s->nundo; k++) {
		uint32_t i = s->undo[k].idx;
		judge(s, i);
		const struct vns_node *n = &s->node[i];
		if (n->exists && n->dtype == TUX3_DT_DIR && n->names == 1 &&
		    !rooted(s, i))
			cycle = true;
	}
	if (cycle)
		return STEP_UNSURE;
	return s->bad || s->mismatch ? STEP_PROBLEM : STEP_FINE;
}

static void undo(struct vns *s, size_t mark, size_t lmark)
{
	while (s->nlundo > lmark) {
		struct vns_lsaved *l = &s->lundo[--s->nlundo];
		free(s->lists[l->slot].e);
		s->lists[l->slot] = l->list;
	}
	while (s->nundo > mark) {
		struct vns_saved *u = &s->undo[--s->nundo];
		s->node[u->idx] = u->node;
	}
}

static void suspect_below(struct vns *s, unsigned label)
{
	struct vtree *vt = s->vt;
	if (!vtree_ghost(vt, label))
		s->suspect[label] = 1;
	for (unsigned c = 0; c < vtree_nchild(vt, label); c++)
		suspect_below(s, vtree_child(vt, label, c));
}

/* The tagged versions below label (ghosts in path[base .. base + npath)
 * since the last tagged one; the path is a stack, one label deep per
 * level of the tree). */
static int visit(struct vns *s, unsigned label, unsigned base,
		 unsigned npath)
{
	struct vtree *vt = s->vt;
	for (unsigned c = 0; c < vtree_nchild(vt, label); c++) {
		unsigned child = vtree_child(vt, label, c);
		if (vtree_ghost(vt, child)) {
			s->path[base + npath] = (uint16_t)child;
			int err = visit(s, child, base, npath + 1);
			if (err)
				return err;
			continue;
		}
		size_t mark = s->nundo, lmark = s->nlundo;
		int64_t bad = s->bad, mismatch = s->mismatch;
		int r = step(s, child, base, npath);
		if (r == -ENOMEM)
			return r;
		if (r == STEP_FINE)
			s->by_delta++;
		if (r == STEP_PROBLEM)
			s->suspect[child] = 1;
		if (r == STEP_FINE || r == STEP_PROBLEM)
			r = visit(s, child, base + npath, 0);
		else
			suspect_below(s, child);
		undo(s, mark, lmark);
		s->bad = bad;
		s->mismatch = mismatch;
		if (r)
			return r;
	}
	return 0;
}

static void vns_free(struct vns *s)
{
	for (uint32_t k = 0; k < s->nlists; k++)
		free(s->lists[k].e);
	free(s->lists);
	free(s->node);
	free(s->stamp);
	free(s->undo);
	free(s->lundo);
}

/* Every tagged version below the origin, to be checked in full. */
static void suspect_all(struct vtree *vt, uint8_t *suspect)
{
	for (unsigned l = 1; l < vt->top; l++)
		suspect[l] = vtree_used(vt, l) && !vtree_ghost(vt, l) &&
			     !(vt->v[l].flags & VERSION_DYING);
}

int vns_suspects(struct tux3_volume *vol, struct vns_index *ix,
		 uint8_t *suspect, unsigned *by_delta)
{
	struct vtree *vt = vol->vt;
	int err = 0;

	*by_delta = 0;
	memset(suspect, 0, VERSION_LABELS);
	if (ix->nomem || vol->vpending || vtree_derive(vt)) {
		suspect_all(vt, suspect);
		return 0;
	}
	index_finish(ix);
	if (!ix->n) {		/* every version reads what the origin does */
		for (unsigned l = 1; l < vt->top; l++)
			*by_delta += vtree_used(vt, l) && !vtree_ghost(vt, l);
		return 0;
	}
	struct vns *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = (struct vns){ .vol = vol, .vt = vt, .ix = ix,
			   .suspect = suspect };
	err = base_build(s);
	if (!err)
		err = visit(s, VERSION_ORIGIN, 0, 0);
	*by_delta = s->by_delta;
	vol->vtag = 0;
	tux3_clear_error(vol);
	if (err == STEP_UNSURE) {	/* the live version itself */
		err = 0;
		*by_delta = 0;
		suspect_all(vt, suspect);
	}
	vns_free(s);
	free(s);
	return err;
}
